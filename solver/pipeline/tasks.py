"""The task layer: a solve as independent tasks on Dask (``dask[distributed]``), locally or on a
cluster.

Two kinds of task:

* **setup classes** (:func:`sweep_setups`): a game whose start is a random setup (Greener with
  ``setup=all``) is solved one batch of setup classes per task. A task enumerates and solves the
  positions its setups reach (the batch shares its later positions) and returns one row per
  setup (value, remoteness, margin from the first player's view, positions, seconds). The
  **client** appends the rows to the variant's sweep folder, so workers need no shared folder
  for this kind.
* **tiers** (:func:`run_tier_tasks`, called by :mod:`solver.pipeline.tiered`): tiers of one height
  are independent; each task solves one tier and writes its tier file into the run's work
  folder, which **every worker must see at the same path** (a shared file system).

Where the tasks run: with no scheduler address a :class:`distributed.LocalCluster` of ``jobs``
processes on this machine (one code path, the one the tests run); with ``scheduler`` an existing
cluster (``dask scheduler`` + ``dask worker ADDRESS`` on each machine, see the README).

The sweep folder ``<tables>/<game>/<variant-id>/sweep/``:

* ``plan.json``: what is being swept (game, variant, rules and toolkit versions, symmetry,
  classes, arrangements, the order's seed);
* ``parts/*.parquet``: finished setups, appended as the tasks end (each file written
  atomically; a setup found twice, e.g. by two runs at once, is the same row and is kept once);
* ``setups.parquet``: the finished setups in one table, rewritten at the end of every run, with
  the summary (or, while incomplete, the sample estimate) in its metadata;
* ``unions/*.json``: one record per finished union (``--tiered --setup-limit N``): its classes,
  positions per tier and times, how much the setups share (``python -m solver.bench_union --recorded``).

The order (:func:`plan_order`): i.i.d. draws of arrangements (each setup class with probability
multiplicity / arrangements), classes taken in the order of their first draw (the classes never
drawn follow in a weighted random order). While the sweep is incomplete the draws before the
first draw of an unsolved class are a uniform random sample of arrangements whose results are
all known: :func:`sample_estimate` gives the first player's shares with Wilson intervals.
(Stopping at the first unsolved class favours classes drawn more than once by at most about
their probability, 1e-5 on Greener 4x4: far inside the interval.)
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import math
import os
import shutil
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import numpy as np
import polars as pl

import solver
from solver.core.arrays import lookup_sorted
from solver.core.game import Game, NodeKind
from solver.core.progress import Task
from solver.core.stats import Z95, wilson
from solver.errors import ClusterError, TableError, VariantError
from solver.faults import fault_point
from solver.pipeline import workfiles
from solver.tables import read_meta, read_parquet, variant_dir, write_parquet

#: the sweep's sub-folder of a variant's table folder
SWEEP_DIR = "sweep"
#: seed of the order in which setup classes are taken (part of the plan: fixed, so a resumed or
#: parallel run takes the same order)
ORDER_SEED = 20261130
#: a variant with more setup arrangements than this is swept by default (Greener 4x4 4+4 has
#: 900,900; the whole-graph solve of all setups at once is beyond this machine there)
SWEEP_MIN_ARRANGEMENTS = 200_000
#: a task should last about this long (seconds) when batches are sized automatically
TARGET_TASK_SECONDS = 20.0
MAX_BATCH = 5_000
#: automatically sized tasks reach at most this many positions (about 3 GB of a worker's memory)
MAX_TASK_POSITIONS = 10_000_000
#: finished rows are written to a part file at least this often (seconds), and at the end
FLUSH_SECONDS = 10.0
#: part files merged into one when there are more than this many
MERGE_PARTS = 200
#: seconds to wait for a scheduler before giving up with one line
CONNECT_TIMEOUT = 5.0
#: the values of a setups table, in the order of :meth:`Setups.codes_of`
VALUES = ("win", "lose", "tie", "draw")


# --- games on workers ------------------------------------------------------------------------

def game_spec(game: Game) -> dict[str, Any]:
    """What a worker needs to build the same variant: the game's name (built-in or plug-in) or
    import path, its parameters, and the versions the client runs."""
    from solver.games import REGISTRY, plugin_specs

    cls = type(game)
    path = f"{cls.__module__}:{cls.__qualname__}"
    name = game.name if (REGISTRY.get(game.name) == path or game.name in plugin_specs()) else path
    return {"game": name, "params": game.variant.as_text(), "toolkit": solver.__version__,
            "rules": game.rules_version}


def game_from_spec(spec: dict[str, Any]) -> Game:
    """Build the spec's game on a worker, refusing (one line naming both) a worker whose toolkit
    or rules version differs from the client's."""
    from solver.games import make_game

    game = make_game(spec["game"], spec["params"])
    mine = (solver.__version__, game.rules_version)
    theirs = (spec["toolkit"], spec["rules"])
    if mine != theirs:
        raise ClusterError(
            f"worker {host()} runs pyramids {mine[0]} (rules of {game.name}: {mine[1]}) but the client "
            f"runs pyramids {theirs[0]} (rules {theirs[1]}); install the same version on every worker")
    return game


def host() -> str:
    import socket

    return f"{socket.gethostname()}:{os.getpid()}"


def _worker_versions(game_name: str) -> dict[str, str]:
    """Run on every worker at connection: its toolkit version and the game's rules version."""
    from solver.games import game_class

    try:
        rules = game_class(game_name).rules_version
    except Exception as exc:  # noqa: BLE001 - reported, not raised, so the client can say it
        rules = f"(cannot load the game: {type(exc).__name__}: {exc})"
    return {"toolkit": solver.__version__, "rules": rules, "host": host()}


# --- the client ------------------------------------------------------------------------------

@dataclass
class Cluster:
    """A Dask client and, when local, the scheduler and worker processes it started (closed
    together)."""

    client: Any
    local: Any | None
    address: str
    processes: list[Any] = field(default_factory=list)
    #: the local workers' folder (``--local-directory``), removed when the cluster closes
    scratch: str | None = None

    @property
    def workers(self) -> int:
        return max(1, len(self.client.scheduler_info(n_workers=-1).get("workers", {})))

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.client.close()
        for proc in self.processes:  # SIGTERM: each nanny closes its worker cleanly
            with contextlib.suppress(Exception):
                proc.terminate()
        for proc in self.processes:
            try:
                proc.wait(timeout=20)
            except Exception:  # noqa: BLE001
                with contextlib.suppress(Exception):
                    proc.kill()
                    proc.wait(timeout=5)
        if self.local is not None:
            with contextlib.suppress(Exception):
                self.local.close()
        if self.scratch is not None:  # (every local cluster left one behind in the temporary folder)
            shutil.rmtree(self.scratch, ignore_errors=True)


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Linux: the worker's nanny gets SIGKILL when the process that started it dies (a killed
    client leaves no worker behind: the nanny's own worker exits when its nanny is gone)."""
    import ctypes
    import signal

    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _local_cluster(distributed: Any, jobs: int, *, timeout: float) -> Cluster:
    """A scheduler in this process and ``jobs`` worker processes (``dask worker``, one thread
    each, under a nanny that restarts a worker that dies). The workers are fresh interpreters
    that import the toolkit: unlike multiprocessing's spawn they never re-run the caller's
    script, so scripts and ``python -`` need no ``if __name__ == "__main__"`` guard."""
    import subprocess
    import sys
    import tempfile

    import dask

    scratch = tempfile.mkdtemp(prefix="pyramids-dask-")
    try:  # (the scheduler's own folder in it too, not a shared dask-scratch-space left behind)
        with dask.config.set({"temporary-directory": scratch}):
            local = distributed.LocalCluster(n_workers=0, processes=False, protocol="tcp://", host="127.0.0.1",
                                             dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR,
                                             local_directory=scratch)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    address = local.scheduler_address
    procs = []
    cluster = Cluster(None, local, address, procs, scratch)
    try:
        for i in range(jobs):
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1",
                 "--nworkers", "1", "--name", f"local-{i}", "--no-dashboard", "--death-timeout", "60",
                 "--local-directory", scratch],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None))
        cluster.client = distributed.Client(address, set_as_default=False)
        cluster.client.wait_for_workers(jobs, timeout=timeout)
    except BaseException:
        cluster.close()
        raise
    return cluster


def _distributed():
    try:
        import distributed
    except ImportError:
        raise ClusterError("the task layer needs Dask: pip install -e '.[cluster]' (installs "
                           "dask[distributed]); or solve without --jobs/--scheduler") from None
    return distributed


def default_jobs() -> int:
    return max(1, min(2, os.cpu_count() or 1))


def connect(scheduler: str | None = None, jobs: int | None = None, *,
            timeout: float = CONNECT_TIMEOUT, spec: dict[str, Any] | None = None) -> Cluster:
    """A Dask client: on the scheduler at ``scheduler`` (``tcp://host:8786``), or on a new local
    cluster of ``jobs`` processes (one thread each). With ``spec`` every worker's versions are
    checked against the client's (one line naming both when they differ)."""
    distributed = _distributed()
    if jobs is not None and jobs < 1:
        raise VariantError(f"--jobs {jobs} must be at least 1")
    if scheduler:
        if "://" not in scheduler and scheduler.count(":") != 1:
            raise VariantError(f"--scheduler {scheduler!r} is not an address; write tcp://host:8786")
        try:
            client = distributed.Client(scheduler, timeout=f"{timeout}s", set_as_default=False)
        except (OSError, TimeoutError, ValueError) as exc:
            raise ClusterError(
                f"cannot reach the Dask scheduler at {scheduler} within {timeout:g} s "
                f"({type(exc).__name__}); start it with `dask scheduler` and workers with "
                f"`dask worker {scheduler}`, or drop --scheduler to run on this machine") from None
        cluster = Cluster(client, None, scheduler)
        if not cluster.client.scheduler_info(n_workers=-1).get("workers"):
            with contextlib.suppress(Exception):
                client.wait_for_workers(1, timeout=timeout)
            if not cluster.client.scheduler_info(n_workers=-1).get("workers"):
                cluster.close()
                raise ClusterError(f"the Dask scheduler at {scheduler} has no workers; start some with "
                                   f"`dask worker {scheduler}` on each machine")
    else:
        jobs = default_jobs() if jobs is None else jobs
        cluster = _local_cluster(distributed, jobs, timeout=max(60.0, timeout))
    if spec is not None:
        try:
            check_workers(cluster, spec)
        except BaseException:
            cluster.close()
            raise
    return cluster


def check_workers(cluster: Cluster, spec: dict[str, Any]) -> None:
    """Refuse a cluster with a worker of another toolkit or rules version (one line, both named)."""
    found = cluster.client.run(_worker_versions, spec["game"])
    for address, v in sorted(found.items()):
        if (v["toolkit"], v["rules"]) != (spec["toolkit"], spec["rules"]):
            raise ClusterError(
                f"worker {address} runs pyramids {v['toolkit']} (rules of the game: {v['rules']}) but "
                f"this client runs pyramids {spec['toolkit']} (rules {spec['rules']}); install the "
                "same version on every worker")


# --- setup classes and their order ----------------------------------------------------------

@dataclass
class Setups:
    """The setup classes of a random-setup variant: start keys, multiplicities, probabilities."""

    game: Game
    symmetry: bool
    keys: np.ndarray  # uint64, canonical start key of each class, in the chance root's order
    mult: np.ndarray  # int64 arrangements per class
    probs: np.ndarray  # float64, exactly as the whole-graph solve stores them
    root_player: int
    to_move: np.ndarray  # int8, who moves first in each setup
    _by_key: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._by_key = np.argsort(self.keys, kind="stable")

    @property
    def classes(self) -> int:
        return len(self.keys)

    @property
    def arrangements(self) -> int:
        return int(self.mult.sum())

    def rows_of(self, keys: Any) -> np.ndarray:
        """The class index of each of ``keys`` (start keys of this variant's setups)."""
        return self._by_key[lookup_sorted(self.keys[self._by_key], np.asarray(keys, dtype=np.uint64))]

    def codes_of(self, table: pl.DataFrame) -> np.ndarray:
        """Per class, the code of its value in ``table`` (first player's view; index into
        :data:`VALUES`), -1 for a class the table does not hold."""
        codes = np.full(self.classes, -1, dtype=np.int8)
        code = {v: i for i, v in enumerate(VALUES)}
        codes[self.rows_of(table["key"].to_numpy())] = [code[v] for v in table["value"].to_list()]
        return codes


def sweepable(game: Game) -> str | None:
    """Why ``game`` cannot be solved as a sweep of setups (``None``: it can): its start must be a
    random setup and, by the game's declaration, its only chance (``Game.chance``)."""
    if game.chance == "in-play":
        return "it has dice during play, not only a random setup (its class declares chance = 'in-play')"
    try:
        start = game.initial_state()
        kind = game.node_kind(start)
    except Exception as exc:  # noqa: BLE001
        return f"its start cannot be built ({type(exc).__name__}: {exc})"
    if kind != NodeKind.CHANCE:
        return "its start is not a random setup (set setup=all)"
    if game.num_players != 2:
        return "setup sweeps solve two-player games"
    return None


def setup_classes(game: Game, symmetry: bool = True) -> Setups:
    """The outcomes of ``game``'s chance start, each as its setup's start key."""
    why = sweepable(game)
    if why is not None:
        raise VariantError(f"{game.variant.label()} cannot be swept by setups: {why}")
    root = game.initial_state()
    from solver.pipeline.setups import setup_multiplicities

    outcomes = game.chance_outcomes(root)
    counts = setup_multiplicities(game, root, len(outcomes))
    keys = np.empty(len(outcomes), dtype=np.uint64)
    to_move = np.empty(len(outcomes), dtype=np.int8)
    for i, (action, _) in enumerate(outcomes):
        child = game.apply(root, action)
        if symmetry:
            child = game.canonical(child)
        keys[i] = game.encode(child)
        to_move[i] = game.to_move(child)
    probs = np.array([float(Fraction(p)) for _, p in outcomes], dtype=np.float64)
    return Setups(game, symmetry, keys, np.asarray(counts, dtype=np.int64), probs,
                  int(game.to_move(root)), to_move)


def plan_order(mult: np.ndarray, seed: int = ORDER_SEED) -> tuple[np.ndarray, np.ndarray]:
    """``(order, draws)``: the classes in the order they are solved, and the i.i.d. draws of
    arrangements (class of each draw) that define it (see the module docstring)."""
    mult = np.asarray(mult, dtype=np.float64)
    n = len(mult)
    rng = np.random.default_rng(seed)
    m = int(min(max(20 * n, 10_000), 20_000_000))
    draws = rng.choice(n, size=m, p=mult / mult.sum()).astype(np.int32)
    first = first_draws(draws, n)
    seen = np.flatnonzero(first < m)
    order_seen = seen[np.argsort(first[seen], kind="stable")]
    unseen = np.flatnonzero(first == m)
    # the rest: a weighted random order (exponential arrival times, rate = multiplicity)
    arrival = rng.exponential(size=len(unseen)) / mult[unseen]
    order = np.concatenate([order_seen, unseen[np.argsort(arrival, kind="stable")]]).astype(np.int64)
    return order, draws


def first_draws(draws: np.ndarray, n: int) -> np.ndarray:
    """The index of each class's first draw (``len(draws)`` for a class never drawn): the head
    of its group in a stable sort of the draws."""
    first = np.full(n, len(draws), dtype=np.int64)
    by = np.argsort(draws, kind="stable")
    grouped = draws[by]
    heads = np.flatnonzero(np.concatenate([[True], grouped[1:] != grouped[:-1]]))
    first[grouped[heads]] = by[heads]
    return first


def sample_estimate(table: pl.DataFrame, setups: Setups, draws: np.ndarray) -> dict[str, Any]:
    """The first player's shares estimated from the draws whose setups are all solved: counts,
    shares with 95% Wilson intervals, expected result and margin with normal intervals."""
    value_of = setups.codes_of(table)
    margin_of = None
    if "margin" in table.columns:
        margin_of = np.zeros(setups.classes, dtype=np.float64)
        margin_of[setups.rows_of(table["key"].to_numpy())] = table["margin"].to_numpy()
    undone = value_of[draws] < 0
    n = int(np.argmax(undone)) if undone.any() else len(draws)
    sample = value_of[draws[:n]]
    counts = {v: int((sample == i).sum()) for i, v in enumerate(VALUES)}
    out: dict[str, Any] = {"draws": n, "counts": counts,
                           "classes_in_sample": int(len(np.unique(draws[:n]))) if n else 0}
    out["shares"] = {v: (counts[v] / n if n else None) for v in VALUES}
    out["intervals"] = {v: list(wilson(counts[v], n)) for v in VALUES}
    if n:
        score = np.array([1.0, -1.0, 0.0, 0.0])[sample]
        out["expected"] = float(score.mean())
        half = Z95 * float(score.std(ddof=1)) / math.sqrt(n) if n > 1 else float("inf")
        out["expected_interval"] = [out["expected"] - half, out["expected"] + half]
        if margin_of is not None:
            mm = margin_of[draws[:n]]
            out["expected_margin"] = float(mm.mean())
            half = Z95 * float(mm.std(ddof=1)) / math.sqrt(n) if n > 1 else float("inf")
            out["expected_margin_interval"] = [out["expected_margin"] - half, out["expected_margin"] + half]
    return out


# --- the task: a batch of setups -------------------------------------------------------------

def solve_setup_batch(spec: dict[str, Any], keys: list[int], symmetry: bool,
                      max_positions: int | None = None) -> dict[str, Any]:
    """Run on a worker: solve the positions the setups ``keys`` reach, together. Returns the
    start rows' value codes (side to move), remoteness, margins, and the task's size and time.
    More than ``max_positions`` positions stop the task with :class:`TooBigError`."""
    from solver.engines.enumerate import enumerate_positions
    from solver.engines.retrograde import retrograde

    t0 = time.perf_counter()
    game = game_from_spec(spec)
    fault_point("setup-task")
    graph = enumerate_positions(game, symmetry=symmetry, starts=keys, workers=1, max_positions=max_positions)
    if (graph.kind == NodeKind.CHANCE).any() or (graph.kind == NodeKind.SIMULTANEOUS).any():
        raise VariantError(f"{game.variant.label()} has dice or secret choices after the setup; "
                           "setup sweeps solve games whose only chance is the setup")
    solved = retrograde(graph, scored=game.scored)
    rows = np.searchsorted(graph.keys, np.asarray(keys, dtype=np.uint64))
    return {
        "keys": list(keys),
        "value": solved.value[rows].astype(np.uint8),
        "remoteness": solved.remoteness[rows],
        "margin": None if solved.margin is None else solved.margin[rows],
        "positions": int(graph.n),
        "seconds": time.perf_counter() - t0,
        "host": host(),
    }


# --- the sweep -------------------------------------------------------------------------------

def sweep_dir(game: Game, out: str | Path | None, symmetry: bool) -> Path:
    return variant_dir(game.name, game.variant.variant_id(), root=out, symmetry=symmetry) / SWEEP_DIR


def _identity(game: Game, symmetry: bool) -> dict[str, Any]:
    return {"game": game.name, "variant": game.variant.as_text(), "rules_version": game.rules_version,
            "symmetry": symmetry, "order_seed": ORDER_SEED}


@dataclass
class SweepState:
    """A sweep on disk: its plan, the setups (with their order) and the finished rows."""

    folder: Path
    setups: Setups
    order: np.ndarray
    draws: np.ndarray
    done: pl.DataFrame  # finished setups (one row per key)


#: columns of a finished setup beyond the setups table's own
EXTRA_COLUMNS = {"order": pl.Int64, "positions": pl.Int64, "seconds": pl.Float64, "batch": pl.Int32}


def _read_parts(parts: Path, files: list[Path] | None = None) -> pl.DataFrame:
    """The finished setups in the part files (``files``, default every one), each key once
    (empty when there are none)."""
    frames = []
    for path in sorted(parts.glob("*.parquet")) if files is None else files:
        try:
            frames.append(read_parquet(path)[0])
        except FileNotFoundError:  # merged away by another run meanwhile
            continue
        except TableError:
            if path.exists():
                raise
    if not frames:
        return pl.DataFrame()
    return pl.concat(frames, how="vertical").unique(subset="key", keep="first", maintain_order=True)


def open_sweep(game: Game, *, out: str | Path | None = None, symmetry: bool = True,
               force: bool = False, create: bool = True, notes: list[str] | None = None) -> SweepState:
    """The sweep of ``game`` in its folder: created (``create``), resumed, or started over when
    ``force`` or when its plan is of another variant or rules version (a note says so)."""
    import shutil

    notes = notes if notes is not None else []
    folder = sweep_dir(game, out, symmetry)
    ident = _identity(game, symmetry)
    plan_path = folder / "plan.json"
    plan = workfiles.read_json(plan_path)
    if plan is not None and (force or any(plan.get(k) != v for k, v in ident.items())):
        if not force:
            why = (f"rules version {plan.get('rules_version')}" if plan.get("rules_version") != game.rules_version
                   else "another plan")
            notes.append(f"the sweep in {folder} is of {why}; starting over")
        if not create:
            raise TableError(f"the sweep in {folder} is of another rules version or plan; run "
                             "`pyramids solve` again to start it over")
        shutil.rmtree(folder)
        plan = None
    setups = setup_classes(game, symmetry)
    if plan is None:
        if not create:
            raise TableError(f"no sweep of {game.variant.label()} in {folder.parent}; start one with "
                             "`pyramids solve ... --jobs N` (or --setup-limit N)")
        (folder / "parts").mkdir(parents=True, exist_ok=True)
        workfiles.atomic_json(plan_path, {**ident, "toolkit_version": solver.__version__, "classes": setups.classes,
                                 "arrangements": setups.arrangements,
                                 "created": datetime.now(timezone.utc).isoformat(timespec="seconds")})
    order, draws = plan_order(setups.mult)
    return SweepState(folder, setups, order, draws, _read_parts(folder / "parts"))


def _rows_frame(state: SweepState, result: dict[str, Any], position: np.ndarray) -> pl.DataFrame:
    """A task's result as rows of the sweep table (``position``: each class's place in the order)."""
    from solver.pipeline.setups import setups_frame

    s = state.setups
    idx = s.rows_of(result["keys"])
    frame = setups_frame(s.game, s.keys[idx], s.probs[idx], s.mult[idx].tolist(), s.root_player,
                         s.to_move[idx], np.asarray(result["value"]), np.asarray(result["remoteness"]),
                         None if result["margin"] is None else np.asarray(result["margin"]))
    k = len(idx)
    return frame.with_columns(
        pl.Series("order", position[idx], dtype=pl.Int64),
        pl.Series("positions", [result["positions"]] * k, dtype=pl.Int64),
        pl.Series("seconds", [result["seconds"] / k] * k, dtype=pl.Float64),
        pl.Series("batch", [k] * k, dtype=pl.Int32),
    )


def _write_part(parts: Path, frames: list[pl.DataFrame], meta: dict[str, Any]) -> None:
    name = f"part-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}-{uuid.uuid4().hex[:8]}.parquet"
    write_parquet(pl.concat(frames, how="vertical"), parts / name, meta)
    fault_point("sweep-part")


@contextlib.contextmanager
def _try_lock(path: Path) -> Iterator[bool]:
    """An exclusive lock on ``path`` if free (yields whether it was taken)."""
    fh = open(path, "a+")
    try:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
    finally:
        fh.close()


def _merge_parts(parts: Path, meta: dict[str, Any]) -> None:
    """Merge many part files into one (under a lock; another run merging meanwhile skips)."""
    files = sorted(parts.glob("*.parquet"))
    if len(files) <= MERGE_PARTS:
        return
    with _try_lock(parts / ".merge.lock") as mine:
        if not mine:
            return
        files = sorted(parts.glob("*.parquet"))
        write_parquet(_read_parts(parts, files), parts / f"merged-{uuid.uuid4().hex}.parquet", meta)
        for f in files:  # the merged file holds every row of these: a crash here only duplicates
            f.unlink(missing_ok=True)


@dataclass
class SweepResult:
    state: SweepState
    solved_now: int = 0
    seconds: float = 0.0
    workers: int = 0
    hosts: set[str] = field(default_factory=set)


def sweep_setups(game: Game, *, out: str | Path | None = None, symmetry: bool = True,
                 force: bool = False, limit: int | None = None, jobs: int | None = None,
                 scheduler: str | None = None, batch: int | None = None, progress: bool | str = False,
                 notes: list[str] | None = None, cluster: Cluster | None = None,
                 announce: Callable[[str], None] | None = None,
                 flush_seconds: float = FLUSH_SECONDS, max_positions: int | None = None,
                 union: Callable[..., Path] | None = None, workers: int | None = None) -> SweepResult:
    """Solve ``game``'s setup classes as tasks (see the module docstring), resuming a sweep on
    disk: at most ``limit`` more classes (all by default), ``batch`` classes per task (by
    default sized to about :data:`TARGET_TASK_SECONDS`). ``cluster``: an open one (tests);
    otherwise one is started (``jobs`` local processes) or joined (``scheduler``). Finished setups
    are appended at least every ``flush_seconds``. Writes the sweep's setups table at the end,
    also when interrupted. ``max_positions``: the most positions one task may reach (its setups
    together); a task beyond it stops the sweep with one line (what is finished is kept).
    ``union``: the tiered solver (:func:`solver.pipeline.tiered.solve_tiered`, given by the caller:
    this module does not import it): the classes to solve are one batch solved together tier by
    tier, out of core, in this process (``workers`` threads; its tiers as Dask tasks when ``jobs``
    or ``scheduler`` is given), in the sweep's ``union/`` folder (resumable after kill -9); their
    rows then join the sweep table as one batch (:func:`_sweep_union`)."""
    notes = notes if notes is not None else []
    if limit is not None and limit < 0:
        raise VariantError(f"--setup-limit {limit} is negative; give how many more setups to solve")
    if batch is not None and batch < 1:
        raise VariantError(f"--batch {batch} must be at least 1")
    state = open_sweep(game, out=out, symmetry=symmetry, force=force, notes=notes)
    setups = state.setups
    position = np.empty(setups.classes, dtype=np.int64)
    position[state.order] = np.arange(setups.classes)
    solved = setups.codes_of(state.done) >= 0 if state.done.height else np.zeros(setups.classes, bool)
    todo = setups.keys[state.order[~solved[state.order]]].tolist()
    if state.done.height:
        notes.append(f"resuming the sweep in {state.folder}: {state.done.height:,} of {setups.classes:,} "
                     "setup classes done (--force starts over)")
    if limit is not None:
        todo = todo[:limit]
    result = SweepResult(state)
    spec = game_spec(game)
    meta = {**_identity(game, symmetry), "toolkit_version": solver.__version__, "kind": "setup-sweep-part"}
    t0 = time.perf_counter()
    if union is not None:
        try:
            _sweep_union(union, game, state, todo, position, meta, result, symmetry=symmetry, workers=workers,
                         jobs=jobs, scheduler=scheduler, progress=progress, notes=notes, announce=announce,
                         cluster=cluster)
        finally:
            result.seconds = time.perf_counter() - t0
            _consolidate(state, game, result.workers)
        return result
    if todo:
        own = cluster is None
        if own:
            cluster = connect(scheduler, jobs, spec=spec)
        else:
            check_workers(cluster, spec)
        if announce is not None:
            announce(f"solving {len(todo):,} of {setups.classes:,} setup classes ({setups.arrangements:,} "
                     f"arrangements) on {cluster.workers} Dask worker(s) at {cluster.address}; "
                     f"finished setups are kept in {state.folder} (an interrupted run resumes)")
        try:
            result.workers = cluster.workers
            _run_batches(cluster, spec, todo, symmetry, batch, state, position, meta, result,
                         progress, flush_seconds, max_positions)
        finally:
            result.seconds = time.perf_counter() - t0
            _consolidate(state, game, result.workers)  # also when interrupted
            if own:
                cluster.close()
    else:
        _consolidate(state, game, result.workers)
    return result


#: the folder (in the sweep's) of a batch of setups solved together tier by tier, and the file
#: that says it is finished (:data:`solver.pipeline.tiered.MANIFEST`)
UNION_DIR = "union"
UNION_MANIFEST = "tiers.json"
#: the sweep's sub-folder keeping one record per finished union (its classes, positions per tier,
#: times): how much the setups share, measured by every union run (:func:`union_records`)
UNIONS_DIR = "unions"


def _sweep_union(solve_tiered: Callable[..., Path], game: Game, state: SweepState, todo: list[int], position: np.ndarray,
                 meta: dict[str, Any], result: SweepResult, *, symmetry: bool, workers: int | None,
                 jobs: int | None, scheduler: str | None, progress: bool | str, notes: list[str],
                 announce: Callable[[str], None] | None, cluster: Cluster | None) -> None:
    """:func:`sweep_setups` with ``union=True``: the ``todo`` classes solved together tier by
    tier (:func:`solver.pipeline.tiered.solve_tiered` with their start keys) into
    ``sweep/union/``, then their rows (read from its ``setups.parquet``) written as one part of
    the sweep and the folder removed. A union finished by a run killed before its rows were
    written is harvested first (a class found twice is one row)."""
    import shutil

    folder = state.folder / UNION_DIR
    if (folder / UNION_MANIFEST).exists():  # finished by a killed run: keep its rows, then start afresh
        done = set(_harvest_union(state, folder, position, meta, result))
        shutil.rmtree(folder)
        todo = [k for k in todo if k not in done]
    if not todo:
        return
    if not (state.folder / "setups.parquet").exists():  # the sweep exists for `status` at once
        write_sweep_table(state, game)
    keys = np.asarray(todo, dtype=np.uint64)
    if announce is not None:
        announce(f"solving {len(todo):,} of {state.setups.classes:,} setup classes together, tier by tier, "
                 f"in {folder} (an interrupted run resumes)")
    own = cluster is None and (jobs is not None or scheduler is not None)
    if own:
        cluster = connect(scheduler, jobs, spec=game_spec(game))
    cpu = time.process_time()  # every thread of this process: comparable with a task's own time
    try:
        result.workers = cluster.workers if cluster is not None else (workers or 1)
        solve_tiered(game, folder=folder, setup_keys=keys, symmetry=symmetry, workers=workers,
                            progress=progress, notes=notes, announce=announce, cluster=cluster)
    finally:
        if own and cluster is not None:
            cluster.close()
    fault_point("union-solved")
    # (on Dask the tiers' time is the workers': the table's own solve time, in wall seconds)
    _harvest_union(state, folder, position, meta, result,
                   cpu_seconds=None if cluster is not None else time.process_time() - cpu)
    shutil.rmtree(folder)


def _harvest_union(state: SweepState, folder: Path, position: np.ndarray, meta: dict[str, Any],
                   result: SweepResult, cpu_seconds: float | None = None) -> list[int]:
    """The rows of a finished union (its setups table, the first player's view as the sweep
    table's) as one part of the sweep: one batch of all its classes, its positions and time
    (``cpu_seconds`` when measured, else the table's solve time). Returns their start keys."""
    from solver.pipeline.tiered_setups import read_setups

    rows = read_setups(folder)
    union_meta = workfiles.read_json(folder / UNION_MANIFEST) or {}
    if rows is None or not rows.height:
        return []
    s = state.setups
    idx = s.rows_of(rows["key"].to_numpy())
    k = rows.height
    frame = rows.with_columns(
        pl.Series("order", position[idx], dtype=pl.Int64),
        # (the positions after the setup: the start row is not one)
        pl.Series("positions", [int(union_meta.get("counts", {}).get("positions", 1)) - 1] * k, dtype=pl.Int64),
        pl.Series("seconds", [float(cpu_seconds if cpu_seconds is not None
                                    else union_meta.get("solve_seconds", 0.0)) / k] * k, dtype=pl.Float64),
        pl.Series("batch", [k] * k, dtype=pl.Int32),
    )
    _write_part(state.folder / "parts", [frame], meta)
    _record_union(state.folder / UNIONS_DIR, union_meta, position[idx], cpu_seconds)
    result.solved_now += k
    result.hosts.add(host())
    return rows["key"].to_list()


def _record_union(folder: Path, union_meta: dict[str, Any], orders: np.ndarray, cpu_seconds: float | None) -> None:
    """Keep what a finished union measured (its tier files go with its folder): the classes (their
    places in the sweep's order), the positions of every tier after the setup, the times. Written atomically, one
    file per union (a union harvested twice writes the same file)."""
    counts = union_meta.get("counts", {})
    record = {
        "classes": int(len(orders)), "orders": [int(orders.min()), int(orders.max())] if len(orders) else [],
        "positions": int(counts.get("positions", 1)) - 1,  # the positions after the setup
        "timings": union_meta.get("timings", {}), "cpu_seconds": cpu_seconds,
        "toolkit_version": union_meta.get("toolkit_version"), "created": union_meta.get("created"),
        "tier_slices": int(union_meta.get("tier_slices", 1)),  # tier ids: the game's tier * slices + slice
        "tiers": [{"tier": int(t["tier"]), "name": t.get("name"), "positions": int(t["positions"]),
                   "seconds": t.get("seconds")} for t in union_meta.get("tiers", [])
                  if t["tier"] != union_meta.get("root_tier")],  # (not the setup tier: its one start row)
    }
    folder.mkdir(parents=True, exist_ok=True)
    first = record["orders"][0] if record["orders"] else 0
    workfiles.atomic_json(folder / f"union-{first:06d}-{record['classes']}.json", record)


def union_records(game: Game, *, out: str | Path | None = None, symmetry: bool = True) -> list[dict[str, Any]]:
    """The records of the unions finished in ``game``'s sweep (:func:`_record_union`), in the
    sweep's order (empty when there are none)."""
    folder = sweep_dir(game, out, symmetry) / UNIONS_DIR
    records = [workfiles.read_json(p) for p in sorted(folder.glob("union-*.json"))]
    return [r for r in records if r is not None]


def _consolidate(state: SweepState, game: Game, workers: int) -> None:
    state.done = _read_parts(state.folder / "parts")
    write_sweep_table(state, game, workers=workers)


def _run_batches(cluster: Cluster, spec: dict[str, Any], todo: list[int], symmetry: bool,
                 batch: int | None, state: SweepState, position: np.ndarray,
                 meta: dict[str, Any], result: SweepResult, progress: bool | str, flush_seconds: float,
                 max_positions: int | None = None) -> None:
    distributed = _distributed()
    client = cluster.client
    parts = state.folder / "parts"
    workers = cluster.workers
    in_flight = 2 * workers
    size = batch or 1
    per_class: list[float] = []
    pos_per_class: list[float] = []
    bar = Task("setups", progress, total=len(todo), unit="setup classes", percent=True, eta=True,
               note=f"{workers} Dask worker(s)")
    pending: list[pl.DataFrame] = []
    last_flush = time.monotonic()
    next_i = 0
    futures = distributed.as_completed(loop=client.loop)

    def submit() -> None:
        nonlocal next_i
        if next_i >= len(todo):
            return
        left = len(todo) - next_i
        n = size if batch else max(1, min(size, math.ceil(left / in_flight)))
        chunk = todo[next_i : next_i + n]
        next_i += n
        futures.add(client.submit(solve_setup_batch, spec, chunk, symmetry, max_positions, pure=False,
                                  key=f"setups-{uuid.uuid4().hex}"))

    def flush() -> None:
        nonlocal pending, last_flush
        if pending:
            _write_part(parts, pending, meta)
            pending = []
            _merge_parts(parts, meta)
        last_flush = time.monotonic()

    try:
        for _ in range(in_flight):
            submit()
        for fut in futures:
            out = fut.result()  # a task's own error (e.g. a worker of another version) is raised here
            fut.release()
            frame = _rows_frame(state, out, position)
            pending.append(frame)
            result.solved_now += frame.height
            result.hosts.add(out["host"])
            per_class.append(out["seconds"] / frame.height)
            pos_per_class.append(out["positions"] / frame.height)
            if batch is None:  # size the next tasks to about TARGET_TASK_SECONDS, memory allowing
                recent = float(np.median(per_class[-20:]))
                by_memory = MAX_TASK_POSITIONS / max(1.0, float(np.median(pos_per_class[-20:])))
                size = int(min(MAX_BATCH, by_memory, max(1, TARGET_TASK_SECONDS / max(recent, 1e-6))))
                size = max(1, size)
            bar.advance(frame.height)
            if time.monotonic() - last_flush >= flush_seconds:
                flush()
            submit()
    except distributed.client.FutureCancelledError:  # the cluster went away
        raise ClusterError("the Dask cluster went away in the middle of the sweep; finished setups "
                           "are kept: run the same command again to resume") from None
    except distributed.scheduler.KilledWorker as exc:
        raise ClusterError(f"a task killed its workers again and again ({exc}); finished setups are "
                           "kept; the machine may be short of memory: try --jobs 1 or --batch 1") from None
    finally:
        flush()
        bar.close()
        with contextlib.suppress(Exception):
            for f in list(futures.futures):
                f.cancel()


def write_sweep_table(state: SweepState, game: Game, *, workers: int = 0) -> Path:
    """The sweep's finished setups as one table (sorted by key), its summary (complete) or
    sample estimate (partial) in the metadata; written atomically. ``workers``: of this run (0:
    none ran, e.g. ``--setup-limit 0``: the last table's number is kept)."""
    from solver.core.stats import setup_summary

    if not workers and (state.folder / "setups.parquet").exists():
        with contextlib.suppress(TableError, OSError):
            workers = int(read_meta(state.folder / "setups.parquet").get("workers") or 0)

    setups = state.setups
    done = state.done
    meta: dict[str, Any] = {
        **_identity(game, state.setups.symmetry), "kind": "setup-sweep",
        "variant_id": game.variant.variant_id(), "label": game.variant.label(),
        "toolkit_version": solver.__version__, "setup_player": setups.root_player,
        "classes": setups.classes, "arrangements": setups.arrangements,
        "classes_done": done.height, "complete": done.height == setups.classes,
        "scored": bool(game.scored), "workers": workers,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    if done.height:
        done = done.sort("key")
        meta["arrangements_done"] = int(done["multiplicity"].sum())
        meta["class_seconds"] = float(done["seconds"].sum())
        # each task's positions once: a task of k setups has k rows of its positions
        meta["positions_solved"] = int(round(float((done["positions"] / done["batch"]).sum())))
    else:
        meta["arrangements_done"] = 0
        meta["class_seconds"] = 0.0
        done = _empty_table(state, game)
    if meta["complete"]:
        summ = setup_summary(done)
        meta["summary"] = {"shares": summ["shares"], "counts": summ["counts"], "expected": summ["expected"],
                           "expected_margin": summ["expected_margin"]}
    else:
        meta["estimate"] = sample_estimate(done, setups, state.draws)
    path = state.folder / "setups.parquet"
    write_parquet(done, path, meta)
    state.done = done
    return path


def _empty_table(state: SweepState, game: Game) -> pl.DataFrame:
    from solver.pipeline.setups import setups_frame

    s = state.setups
    e = np.empty(0, dtype=np.int64)
    frame = setups_frame(game, s.keys[e], s.probs[e], [], s.root_player, s.to_move[e],
                         np.empty(0, np.uint8), np.empty(0, np.int32),
                         np.empty(0, np.int16) if game.scored else None)
    return frame.with_columns(*[pl.Series(k, [], dtype=t) for k, t in EXTRA_COLUMNS.items()])


def read_sweep(game: Game, *, out: str | Path | None = None, symmetry: bool = True
               ) -> tuple[pl.DataFrame, dict[str, Any]] | None:
    """The sweep table of ``game`` and its metadata (``None`` when there is none). Refuses (one
    line) a sweep of another rules version."""
    folder = sweep_dir(game, out, symmetry)
    path = folder / "setups.parquet"
    parts = list((folder / "parts").glob("*.parquet")) if (folder / "parts").is_dir() else []
    newest = max((p.stat().st_mtime for p in parts), default=None)
    if parts and (not path.exists() or newest > path.stat().st_mtime):
        # a run killed (or still running) after its last table: the part files are the truth
        plan = workfiles.read_json(folder / "plan.json")
        if plan is not None and plan.get("rules_version") == game.rules_version:
            state = open_sweep(game, out=out, symmetry=symmetry, create=False)
            _consolidate(state, game, int((_read_sweep_meta(path) or {}).get("workers") or 1))
    if not path.exists():
        return None
    table, meta = read_parquet(path)
    if meta.get("rules_version") != game.rules_version or meta.get("variant") != game.variant.as_text():
        raise TableError(f"the sweep in {path.parent} is of rules version {meta.get('rules_version')} "
                         f"(now {game.rules_version}); run `pyramids solve` with --jobs again to start it over")
    return table, meta


def _read_sweep_meta(path: Path) -> dict[str, Any] | None:
    try:
        return read_meta(path) if path.exists() else None
    except TableError:
        return None


def sweep_status(game: Game, *, out: str | Path | None = None, symmetry: bool = True) -> dict[str, Any] | None:
    """Classes done / left of a sweep, seconds per class and the time left at the last run's
    number of workers (``None``: no sweep)."""
    got = read_sweep(game, out=out, symmetry=symmetry)
    if got is None:
        return None
    table, meta = got
    done = meta["classes_done"]
    left = meta["classes"] - done
    per = meta["class_seconds"] / done if done else None
    workers = max(1, int(meta.get("workers") or 1))
    out_: dict[str, Any] = {
        "game": game.name, "variant": game.variant.as_text(), "label": game.variant.label(),
        "kind": "setup-sweep", "folder": str(sweep_dir(game, out, symmetry)),
        "classes": meta["classes"], "classes_done": done, "classes_left": left,
        "arrangements": meta["arrangements"], "arrangements_done": meta["arrangements_done"],
        "seconds_per_class": per, "workers": workers,
        "seconds_left": None if per is None else per * left / workers,
        "machine_days_left": None if per is None else per * left / 86400,
        "complete": meta["complete"],
    }
    if meta["complete"]:
        out_["summary"] = meta["summary"]
    else:
        out_["estimate"] = meta["estimate"]
    return out_


# --- tier tasks ------------------------------------------------------------------------------

def run_tier_tasks(cluster: Cluster, run: Any, infos: Iterable[Any],
                   remote: Callable[[dict[str, Any], dict[str, Any], Any], dict[str, Any]]
                   ) -> Iterator[dict[str, Any]]:
    """Solve tiers (independent of each other) as Dask tasks, each by ``remote(spec, run_args,
    info)`` on a worker (the tiered solver's ``solve_tier_remote``); yields each one's stats as it
    ends."""
    distributed = _distributed()
    spec = game_spec(run.game)
    args = {"folder": str(run.folder), "work": str(run.work), "symmetry": run.symmetry,
            "run_id": run.run_id, "low_memory": run.low_memory, "tol": run.tol,
            "max_sweeps": run.max_sweeps, "tier_slices": run.slices}
    futures = [cluster.client.submit(remote, spec, args, info, pure=False,
                                     key=f"tier-{info.tier}-{uuid.uuid4().hex[:8]}") for info in infos]
    try:
        for fut in distributed.as_completed(futures, loop=cluster.client.loop):
            yield fut.result()
    finally:
        for f in futures:
            f.cancel()
