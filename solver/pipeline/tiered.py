"""Tiered, out-of-core retrograde solving (GAMESMAN's tier solver, for this toolkit's games).

A game that can name the **tier** of a position (``Game.tier_of(keys)``: a quantity that never
decreases along a move, such as pyramids placed) is solved tier by tier, never holding the whole
game: a tier needs only its own positions and the finished values of the tiers its moves reach,
read back from disk.

Two phases, both resumable (every finished step is a file written atomically):

1. **Discovery** (tiers in increasing order): a tier's positions are the positions its parent
   tiers' moves lead into it, closed under the moves that stay inside it (breadth first, so the
   ``ply`` column is the fewest moves from the start, as in the whole-graph table). Children
   that land in later tiers are spilled to disk (``discover/pending/<tier>/``), deduplicated.
   Each finished tier leaves ``discover/keys-<tier>.npy``, ``ply-<tier>.npy`` and, last, the
   marker ``tier-<tier>.json`` (its size and the tiers its moves reach).
2. **Solving** (a tier after every tier it reaches; tiers of the same height are independent
   and run in parallel when memory allows): the tier's positions are expanded again (no edge
   lists are stored on disk);
   children outside the tier are looked up in the finished tier files and folded into a few
   numbers per position; the moves inside the tier are kept as a compact reverse list (int32),
   and the passes of :mod:`solver.engines._retro_jit` give value, remoteness and (scored games)
   margin, exactly as the whole-graph retrograde. Each tier is written as
   ``tiers/tier-<tier>.parquet`` (rows sorted by key, the columns of ``positions.parquet``).
   Games with dice during play (``Game.chance == "in-play"``) solve each tier by value iteration
   instead (:mod:`solver.pipeline.tiered_chance`): expected results and win probabilities.
   A game whose only chance is a random setup (Greener ``setup=all``) is the union of its
   setups: their starts seed the discovery, and the start is solved last as a one-row setup tier
   with the setups table beside the tier files (:mod:`solver.pipeline.tiered_setups`).

**Slices** (``tier_slices``, ``--tier-slices N``): a game whose every move leaves its tier
(``Game.tiers_rise_strictly``) may have each tier cut into N slices by a hash of the key
(:func:`solver.pipeline.tierwork.tiers_of`: tier id ``tier * N + slice``), discovered and solved
apart as tiers of their own: no move stays in a slice, so nothing else changes but the sizes of
the tasks. The slices of a tier share one pending folder (one file a parent part, every slice in
it: :func:`_spill`), and a slice whose child tiers would not fit its share of memory reads only
the positions its moves reach (:func:`_reached_children`).

Folders: the work happens in ``<root>/<game>/<variant-id>.tiered/``; when every tier is solved,
its ``tiers.json`` (the table's metadata, with the list of tier files) is written, the discovery
files are removed and the folder is renamed to ``<root>/<game>/<variant-id>/`` (replacing an
older table there). A killed solve leaves the work folder; running the same command again resumes
from its finished tiers (``force=True`` starts over).

Running on a cluster: every step is a function of files (a tier's discovery reads its pending
parts and writes its keys; a tier's solve reads its keys and its child tiers' files and writes its
tier file), so the tier tasks of one height can be handed to any executor that shares the
folder (:func:`solve_tier_task` is the unit of work; the local thread pool is one such executor).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import threading
import time
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import cached_property
from pathlib import Path
from typing import Any, Callable

import numpy as np
import polars as pl

import solver
from solver.core.arrays import MinRuns, SortedLookup, isin_sorted, lookup_sorted, unique, unique_of_sorted
from solver.core.game import Expansion, Game, NodeKind
from solver.core.progress import Task, session
from solver.core.values import DRAW, LOSE as _LOSE, NO_REMOTENESS, TIE as _TIE, VALUE_NAMES, WIN as _WIN
from solver.engines import _retro_jit as _jit
from solver.engines import waiting
from solver.errors import ClusterError, ProtocolError, TableError, TooBigError
from solver.faults import fault_point
from solver.pipeline import measured, memory, tiered_setups, tierwork, workfiles
from solver.pipeline.capabilities import engine_of
from solver.tables import (
    clean_stale,
    positions_frames,
    read_meta,
    read_columns,
    read_parquet,
    row_groups_keyed,
    variant_dir,
    write_parquet,
)

MANIFEST = "tiers.json"
TIER_DIR = "tiers"
WORK_SUFFIX = ".tiered"
#: spill buffered children of later tiers to disk beyond this many keys
SPILL = 4_000_000

#: an undecided position in the pass kernels, and "no child outside the tier" for margins
_UNDECIDED = -1
_NO_MARGIN = -(2**30)

#: callback(phase, tier_name, done_positions, total_positions_or_None)
Progress = Callable[[str, str, int, "int | None"], None]


def supports_tiers(game: Game) -> bool:
    """The game names tiers (:attr:`Game.has_tiers`) and either starts at a decision position, or
    has dice during play (``Game.chance == "in-play"``: solved by tiered value iteration, a random
    start included), or its only chance is a random setup at the start (``chance == "setup"``:
    the union of every setup's positions is solved tier by tier, :mod:`.tiered_setups`). Secret
    simultaneous choices are not handled tier by tier; the discovery stops at once on a node it
    cannot solve. Nor are 3-4 players: their tables answer each seat against all the others
    together (the paranoid reduction, on the whole graph), which the tiers' two-sided values do
    not."""
    if not game.has_tiers or game.num_players > 2:
        return False
    kind = game.node_kind(game.initial_state())
    return (kind in (NodeKind.DECISION, NodeKind.TERMINAL) or (kind == NodeKind.CHANCE and stochastic(game))
            or tiered_setups.is_setup_root(game))


def stochastic(game: Game) -> bool:
    """Whether ``game``'s tiers are solved by value iteration (declared dice during play:
    :func:`solver.pipeline.capabilities.engine_of`)."""
    return engine_of(game, "tiers") == "value-iteration"


def work_dir(folder: Path) -> Path:
    return folder.with_name(folder.name + WORK_SUFFIX)










# --- the plan of a solve ------------------------------------------------------------------------

@dataclass
class TierInfo:
    tier: int
    positions: int
    children: list[int]
    height: int = 0
    #: terminal positions in the tier (``None``: not counted, a discovery of an older version)
    terminal: int | None = None


@dataclass
class Run:
    """A tiered solve in its work folder."""

    game: Game
    folder: Path  # the final variant folder
    work: Path
    symmetry: bool
    run_id: str
    #: threads expanding chunks ahead of the one being folded (``None``: expand in line)
    pool: ThreadPoolExecutor | None = None
    workers: int = 1
    #: how many tiers of the current height are being solved at once in this process (they share
    #: the free memory); ``None``: as many as ``workers``
    tiers_at_once: int | None = None
    #: solve tiers by passes, without reverse lists (True), with them (False), or by whichever
    #: fits the free memory (None)
    low_memory: bool | None = None
    #: finished tiers loaded as children, shared by the tiers being solved at once (one copy
    #: however many threads read it); ``child_users``: how many tiers being solved hold each
    child_cache: dict[int, Any] = field(default_factory=dict)
    child_users: dict[int, int] = field(default_factory=dict)
    child_lock: threading.Lock = field(default_factory=threading.Lock)
    #: tiers that have let go of their children (:func:`_release_children`, once per tier)
    children_released: set[int] = field(default_factory=set)
    #: the tiers of the current height not yet started, in the order they will start: when tiers
    #: are cut in slices, a slice's children that the next one reads too stay loaded
    #: (:func:`_release_children`), so the slices of one tier, which reach the same children,
    #: read them once, not once a slice (unsliced tiers drop theirs before their reverse lists:
    #: they can be several times the tier)
    upcoming: list[TierInfo] = field(default_factory=list)
    #: how many tiers not yet solved read each tier (:func:`solve_tiers`): a finished child that
    #: a later tier reads stays loaded while it is small (:func:`_keep_child`), so a game of
    #: hundreds of small tiers (Blam! 4x4: 209, the median 64 positions) reads each file about
    #: once, not once a parent
    readers: dict[int, int] = field(default_factory=dict)
    #: bytes of children kept that no tier being solved holds (:data:`KEEP_SHARE` of the largest
    #: tier's planned memory, at least :data:`KEEP_FLOOR`), and the planned memory of a tier
    #: (half the largest's) from which none is kept while it is solved
    keep_budget: int = 0
    keep_none_from: int = 0
    #: the large tiers being solved (planned memory ``keep_none_from`` or more): while one is,
    #: no child is kept for later (not even the children such a tier lets go of before its
    #: reverse lists, its peak)
    large_running: set[int] = field(default_factory=set)
    #: positions of every discovered tier (what a tier's children weigh: :func:`tier_memory`)
    tier_positions: dict[int, int] = field(default_factory=dict)
    #: value iteration (games with dice): tolerance and sweep limit
    tol: float = 1e-12
    max_sweeps: int | None = None
    #: how the large tiers show their own steps (:func:`tierwork.tier_steps`): bars, lines, nothing
    progress: bool | str = False
    #: a random setup: only the setups with these start keys (``None``: every setup;
    #: :func:`solver.pipeline.tiered_setups.setup_root`)
    setup_keys: np.ndarray | None = None
    #: each of the game's tiers cut into this many slices, solved apart
    #: (:func:`tierwork.tiers_of`; more than 1 only for a game whose moves all leave their tier)
    slices: int = 1
    #: discovery of tiers cut in slices: the slices of the lowest waiting tier of the game that
    #: have positions waiting (:func:`_next_pending`)
    waiting_slices: dict[int, list[int]] = field(default_factory=dict)
    #: the small work files this run wrote, kept to be read back without a file
    #: (:class:`workfiles.SmallFiles`: pending parts, a small tier's keys and plies)
    files: workfiles.SmallFiles = field(default_factory=workfiles.SmallFiles)

    @property
    def stochastic(self) -> bool:
        return stochastic(self.game)

    @property
    def discover(self) -> Path:
        return self.work / "discover"

    @property
    def tiers_dir(self) -> Path:
        return self.work / TIER_DIR

    def identity(self) -> dict[str, Any]:
        g = self.game
        return {"game": g.name, "variant": g.variant.as_text(), "rules_version": g.rules_version,
                "symmetry": self.symmetry, "run_id": self.run_id, "tier_slices": self.slices}


def _work_counts(work: Path) -> tuple[int, int]:
    """Tiers discovered and tiers solved so far in a work folder."""
    return len(list(work.glob("discover/tier-*.json"))), len(list(work.glob(f"{TIER_DIR}/tier-*.parquet")))


def _identity(game: Game, symmetry: bool, tol: float, setup_keys: np.ndarray | None = None,
              slices: int = 1) -> dict[str, Any]:
    """What an unfinished run must match to be resumed (a run started before tiers could be cut
    in slices has no ``tier_slices``: 1, :func:`_same_run`)."""
    ident = {"game": game.name, "variant": game.variant.as_text(), "rules_version": game.rules_version,
             "symmetry": symmetry, "tier_slices": int(slices)}
    if stochastic(game):  # finished tiers answer only at the tolerance they were solved with
        ident["tolerance"] = float(tol)
    if setup_keys is not None:  # a batch of setups: the same batch
        ident["setups"] = tiered_setups.digest(setup_keys)
    return ident


def _same_run(state: dict[str, Any] | None, ident: dict[str, Any]) -> bool:
    """Whether the unfinished run ``state`` (its ``run.json``) is the run ``ident`` describes."""
    return state is not None and all(state.get(k, 1 if k == "tier_slices" else None) == v for k, v in ident.items())


def _resumable(game: Game, folder: Path, symmetry: bool, tol: float,
               setup_keys: np.ndarray | None = None, slices: int = 1) -> dict[str, Any] | None:
    """The progress (:func:`tier_progress`) of the unfinished run in ``folder`` that a solve of
    ``game`` would resume; ``None`` when there is none (or it would be started over)."""
    state = workfiles.read_json(work_dir(folder) / "run.json")
    if not _same_run(state, _identity(game, symmetry, tol, setup_keys, slices)):
        return None
    return tier_progress(folder)


def _start_or_resume(game: Game, folder: Path, symmetry: bool, force: bool,
                     notes: list[str], tol: float = 1e-12, setup_keys: np.ndarray | None = None,
                     slices: int = 1) -> Run:
    work = work_dir(folder)
    state = workfiles.read_json(work / "run.json")
    ident = _identity(game, symmetry, tol, setup_keys, slices)
    if not force and _same_run(state, ident):
        run = Run(game, folder, work, symmetry, state["run_id"], setup_keys=setup_keys, slices=slices)
        for scratch in work.glob("scratch-*.bin"):  # of a killed run
            scratch.unlink(missing_ok=True)
        for sub in (run.tiers_dir, run.discover):  # a killed run's half-written files
            workfiles.remove_stale(sub)
        found, done = _work_counts(work)
        notes.append(f"resuming the tiered solve in {work}: {found} tiers discovered, {done} solved "
                     "(--force starts over)")
        return run
    if work.exists():
        if state is not None and not force:
            why = ("rules version " + str(state.get("rules_version"))
                   if state.get("rules_version") != game.rules_version
                   else f"tolerance {state.get('tolerance')}" if state.get("tolerance") != ident.get("tolerance")
                   else f"tiers cut in {state.get('tier_slices', 1)} slices"
                   if state.get("tier_slices", 1) != ident["tier_slices"]
                   else "another variant")
            notes.append(f"the unfinished tiered solve in {work} is of {why}; starting over")
        shutil.rmtree(work)
    work.mkdir(parents=True)
    run = Run(game, folder, work, symmetry, uuid.uuid4().hex, setup_keys=setup_keys, slices=slices)
    run.discover.mkdir()
    run.tiers_dir.mkdir()
    workfiles.atomic_json(work / "run.json", {**ident, "run_id": run.run_id,
                                      "created": datetime.now(timezone.utc).isoformat(timespec="seconds")})
    return run


# --- phase 1: discovery ----------------------------------------------------------------------


def _pending_dir(run: Run, tier: int) -> Path:
    """Where the positions found for a later tier wait (every slice of a tier cut in slices: one
    folder, :func:`_spill`)."""
    return run.discover / "pending" / str(int(tier) // run.slices)


def _spill(run: Run, source: str, buffers: dict[int, list[tuple[np.ndarray, np.ndarray]]],
           counter: list[int]) -> None:
    """Write the buffered (key, ply) pairs of later tiers to disk, one part per tier: one file
    holding its keys and plies (:func:`_grouped_part`; two files before, and a file costs an open
    and a header to parse: Blam! 4x4's 209 tiers wrote and read about 2,000); tiers cut in
    slices, one file per tier of the game holding every slice's part, not one per slice (a file
    costs about 0.4 ms to write here, and a slice reaches every slice of its child tiers)."""
    S = run.slices
    groups: dict[int, dict[int, tuple[np.ndarray, np.ndarray]]] = {}
    for tier, parts in buffers.items():
        if not parts:
            continue
        keys, plies = _distinct_min(parts)
        if S > 1:
            groups.setdefault(tier // S, {})[tier % S] = (keys, plies)
            continue
        d = _pending_dir(run, tier)
        d.mkdir(parents=True, exist_ok=True)  # (keys and plies in one file: a file costs an open)
        run.files.save(d / f"from-{source}-{counter[0]}-grouped.npy", _grouped_part(1, {0: (keys, plies)}))
        counter[0] += 1
    for base, by_slice in groups.items():
        d = _pending_dir(run, base * S)
        d.mkdir(parents=True, exist_ok=True)
        run.files.save(d / f"from-{source}-{counter[0]}-grouped.npy", _grouped_part(S, by_slice))
        counter[0] += 1
    buffers.clear()


def _grouped_part(slices: int, by_slice: dict[int, tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """One ``uint64`` array holding the (keys, plies) of several slices of one tier: ``slices + 1``
    offsets, then the keys slice after slice, then the plies (``uint16``, packed four a word)."""
    sizes = np.zeros(slices, np.int64)
    for s, (k, _) in by_slice.items():
        sizes[s] = len(k)
    offsets = np.zeros(slices + 1, np.uint64)
    np.cumsum(sizes, out=offsets[1:])
    n = int(offsets[-1])
    out = np.zeros(slices + 1 + n + (n + 3) // 4, np.uint64)
    out[: slices + 1] = offsets
    plies = out[slices + 1 + n :].view(np.uint16)
    for s, (k, p) in by_slice.items():
        a, b = int(offsets[s]), int(offsets[s + 1])
        out[slices + 1 + a : slices + 1 + b] = k
        plies[a:b] = p
    return out


def _grouped_slice(path: Path, slices: int, s: int, files: workfiles.SmallFiles | None = None
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Slice ``s``'s keys and plies in a part written by :func:`_grouped_part` (kept in
    ``files``, else read through a memory map: only that slice's bytes)."""
    arr = np.load(path, mmap_mode="r") if files is None else files.load(path, mmap_mode="r")
    offsets = np.asarray(arr[: slices + 1])
    n, a, b = int(offsets[-1]), int(offsets[s]), int(offsets[s + 1])
    keys = np.array(arr[slices + 1 + a : slices + 1 + b])
    plies = np.array(arr[slices + 1 + n :].view(np.uint16)[a:b])
    return keys, plies


def _pending_slices(run: Run, base: int) -> list[int]:
    """The slices of the game's tier ``base`` (their tier ids) that have positions waiting."""
    S = run.slices
    d = run.discover / "pending" / str(int(base))
    found = np.zeros(S, bool)
    for f in d.glob("*-grouped.npy"):
        offsets = np.asarray(run.files.load(f, mmap_mode="r")[: S + 1])
        found |= offsets[1:] > offsets[:-1]
    return [base * S + s for s in np.flatnonzero(found).tolist()]


def _distinct_min(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """The distinct keys of ``parts`` (pairs of keys and plies), sorted, each with its smallest
    ply. A discovery's parts are sorted and distinct (each chunk's children, :func:`unique`):
    merged as runs (:class:`MinRuns`, about half the time of a sort by (key, ply) of their
    concatenation, which a spill did in the main thread while both workers waited); other parts
    (the start's) are sorted whole."""
    if all(len(k) < 2 or bool((k[1:] > k[:-1]).all()) for k, _ in parts):
        runs = MinRuns()
        for k, p in parts:
            runs.add(k, p)
        return runs.result()
    return _dedupe_min(np.concatenate([k for k, _ in parts]), np.concatenate([p for _, p in parts]))


def _dedupe_min(keys: np.ndarray, plies: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct keys, sorted, each with its smallest ply."""
    if len(keys) == 0:
        return keys.astype(np.uint64), plies.astype(np.uint16)
    order = np.lexsort((plies, keys))
    k, p = keys[order], plies[order]
    first = np.empty(len(k), dtype=bool)
    first[0] = True
    np.not_equal(k[1:], k[:-1], out=first[1:])
    return k[first], p[first].astype(np.uint16)


def _load_pending(run: Run, tier: int) -> tuple[np.ndarray, np.ndarray]:
    """The positions of ``tier`` its parents found: distinct sorted keys, each with its smallest
    ply. Every spilled part is sorted and distinct (:func:`_spill`), so the parts are merged as
    they are read (:class:`MinRuns`): no concatenation of them all and no sort order beside it
    (that peaked at about 30 bytes a pending entry in Override 4x4's largest tier)."""
    d = _pending_dir(run, tier)
    runs = MinRuns()
    for f in sorted(d.glob("*-grouped.npy")):
        runs.add(*_grouped_slice(f, run.slices, tier % run.slices, run.files))
    for f in sorted(d.glob("*-keys.npy")):  # (parts of a run begun before keys and plies shared a file)
        runs.add(np.load(f), np.load(f.with_name(f.name[: -len("keys.npy")] + "ply.npy")))
    return runs.result()


def _next_pending(run: Run, done: set[int]) -> int | None:
    root = run.discover / "pending"
    if not root.is_dir():
        return None
    if run.slices > 1:  # folders of the game's tiers: their first slice waiting
        with os.scandir(root) as entries:
            bases = sorted(int(e.name) for e in entries if e.is_dir())
        for base in bases:
            # once a tier is the lowest waiting, every tier whose moves reach it is discovered:
            # its slices' parts are all written, so which slices wait is read once
            if run.waiting_slices.get(base) is None:
                run.waiting_slices = {base: _pending_slices(run, base)}
            left = [t for t in run.waiting_slices[base] if t not in done]
            if left:
                return left[0]
        return None
    # (os.scandir: the entries' types come with the listing, no stat a folder; a game with
    # hundreds of small tiers lists this folder once a tier)
    with os.scandir(root) as entries:
        tiers = [int(e.name) for e in entries if e.is_dir() and int(e.name) not in done]
    return min(tiers) if tiers else None


def expected_positions(game: Game, symmetry: bool = True) -> int | None:
    """The positions a discovery will find, where the variant is a preset whose count was
    measured (``measured.toml``, up to symmetry; a batch of setups finds others): its progress
    and ``pyramids status`` then say how far it is. ``None`` when unknown."""
    if not symmetry or tiered_setups.is_setup_root(game):
        return None
    entry = measured.of_game(game)
    if entry is None or entry.at_least or not entry.positions:
        return None
    return int(entry.positions)


def discover(run: Run, *, max_positions: int | None = None, progress: Progress | None = None
             ) -> dict[int, TierInfo]:
    """Phase 1: every reachable position, tier by tier (see the module docstring)."""
    game, sym = run.game, run.symmetry
    infos: dict[int, TierInfo] = {}
    for marker in run.discover.glob("tier-*.json"):
        data = workfiles.read_json(marker)
        if data is not None:
            term = data.get("terminal")
            infos[int(data["tier"])] = TierInfo(int(data["tier"]), int(data["positions"]),
                                                [int(c) for c in data["children"]],
                                                terminal=None if term is None else int(term))
    if not infos and not (run.discover / "pending").exists():
        start = game.initial_state()
        root = np.array([game.encode(game.canonical(start) if sym else start)], dtype=np.uint64)
        # a random setup: every setup's start seeds the discovery (ply 1); the start itself is
        # the setup tier, solved last from the setups' values (:func:`_solve_setup_tier`)
        setup = tiered_setups.is_setup_root(game)
        seeds = (tiered_setups.seeds(game, tiered_setups.setup_root(game, sym, run.setup_keys), run.slices)
                 if setup else {int(tierwork.tiers_of(game, root, run.slices)[0]): root})
        _spill(run, "start", {rt: [(keys, np.full(len(keys), int(setup), np.uint16))] for rt, keys in seeds.items()},
               [0])
    total = sum(i.positions for i in infos.values())
    first = True
    while True:
        t = _next_pending(run, set(infos))
        if t is None:
            break
        if first:  # (only the first tier of a resumed run can have been under way when it was killed)
            for stale in (run.discover / "pending").glob(f"*/from-{t}-*"):
                stale.unlink()  # parts of an earlier, killed attempt at this tier
            first = False
        entry_keys, entry_ply = _load_pending(run, t)
        seen, plies, children, terminal = _close_tier(game, t, entry_keys, entry_ply, sym, run, set(infos),
                                                      progress, total, max_positions)
        total += len(seen)
        run.files.save(run.discover / f"keys-{t}.npy", seen)
        run.files.save(run.discover / f"ply-{t}.npy", plies)
        workfiles.atomic_json(run.discover / f"tier-{t}.json",  # (not fsynced: 4 ms a tier, and its arrays are not)
                              {"tier": t, "positions": int(len(seen)), "children": sorted(children),
                               "terminal": terminal}, durable=False)
        infos[t] = TierInfo(t, int(len(seen)), sorted(children), terminal=terminal)
        if run.slices == 1 or all(u in infos for u in run.waiting_slices.get(t // run.slices, [])):
            shutil.rmtree(_pending_dir(run, t), ignore_errors=True)  # (a tier's slices share it)
            run.files.forget_under(_pending_dir(run, t))
        fault_point("tier-discovered")
    return infos


def _close_tier(game: Game, t: int, entry_keys: np.ndarray, entry_ply: np.ndarray, sym: bool, run: Run,
                done: set[int], progress: Progress | None, total: int, max_positions: int | None = None
                ) -> tuple[np.ndarray, np.ndarray, set[int], int]:
    """The tier's positions (sorted), plies, child tiers and number of terminal positions: the
    entries closed under the moves inside the tier, breadth first from several plies at once.
    Children in later tiers are spilled. Past ``max_positions`` (with the ``total`` of the tiers
    before), refused at the level that crosses it, not when the tier is closed."""
    seen = np.empty(0, np.uint64)  # the tier's positions so far, sorted
    plies = np.empty(0, np.uint16)  # their plies
    buffers: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {}
    buffered = 0
    counter = [0]
    children: set[int] = set()
    terminal = 0
    order = np.argsort(entry_ply, kind="stable")
    entry_keys, entry_ply = entry_keys[order], entry_ply[order]
    pos = 0
    frontier = np.empty(0, np.uint64)
    d = int(entry_ply[0]) if len(entry_ply) else 0
    name = tierwork.tier_name(game, t, run.slices)

    known = [SortedLookup(seen)]  # the index of ``seen``, built again when it grows

    def split(s: int, exp: Expansion) -> tuple[int, np.ndarray | None, dict[int, np.ndarray]]:
        """A chunk's terminal positions, its distinct children inside the tier not found before
        and those of each later tier, found in the thread that expands it (sorts, tiers and
        lookups of the children: most of a discovery's work), so that the loop only gathers them."""
        _check_kinds(game, exp.kind)
        ends = int((exp.kind == NodeKind.TERMINAL).sum())
        kids = exp.children
        if not len(kids):
            return ends, None, {}
        ct = tierwork.child_tiers(game, exp, run.slices)
        if (ct < t).any():
            bad = int(ct[ct < t][0])
            raise RuntimeError(f"{game.name}.tier_of is not monotone: a move of tier {t} leads to "
                               f"tier {bad}; tiers must never decrease along a move")
        mask = ct == t
        out_k, out_t = kids[~mask], ct[~mask]
        out = {int(u): unique(out_k[out_t == u]) for u in unique(out_t).tolist()} if len(out_k) else {}
        return ends, unseen(unique(kids[mask])), out  # (``seen`` does not change while a level expands)

    def unseen(keys: np.ndarray) -> np.ndarray:
        """The sorted ``keys`` that are not in ``seen``, by its index."""
        return keys[~known[0].contains(keys)] if len(keys) and len(seen) else keys

    while pos < len(entry_keys) or len(frontier):
        hi = int(np.searchsorted(entry_ply, d, side="right"))
        parts, frontier = [frontier, entry_keys[pos:hi]], None  # (let go as the level is built)
        level = unique_of_sorted(parts, run.pool)
        pos = hi
        level = unseen(level)
        if len(level):  # both sorted: a linear merge, not a sort per level, in place: the arrays
            # grow by realloc (large blocks are remapped, not copied), so the tier's keys are
            # never held twice
            n0 = len(seen)
            seen.resize(n0 + len(level), refcheck=False)
            plies.resize(n0 + len(level), refcheck=False)
            _jit.merge_into(seen, plies, n0, level, np.uint16(d))
            if max_positions is not None and total + len(seen) > max_positions:
                raise TooBigError(f"{game.variant.label()} has more than {max_positions:,} positions; "
                                  "raise --max-positions or pick a smaller variant")
            known[0] = SortedLookup(seen)
        inside: list[np.ndarray] = []
        for s, exp, (ends, kept, out) in tierwork.expansions_then(run, level, split):
            terminal += ends
            if kept is None:
                continue
            inside.append(kept)
            for u, k in out.items():
                if u in done:
                    raise RuntimeError(f"{game.name}.tier_of: tier {t} reaches tier {u}, which was "
                                       "discovered before it; tier ids must never decrease along a move")
                children.add(u)
                buffers.setdefault(u, []).append((k, np.full(len(k), d + 1, np.uint16)))
                buffered += len(k)
            if buffered > SPILL:
                _spill(run, str(t), buffers, counter)
                buffered = 0
        level = exp = kept = out = k = None  # (only the new positions are held while they are sorted)
        frontier = unique_of_sorted(inside, run.pool)  # (none seen before: split; empties inside)
        if progress is not None:
            found, expected = total + len(seen), expected_positions(run.game, run.symmetry)
            progress("discover", name, found, expected if expected is not None and found <= expected else None)
        d += 1
        if not len(frontier) and pos < len(entry_keys):
            d = max(d, int(entry_ply[pos]))
    _spill(run, str(t), buffers, counter)
    return seen, plies, children, terminal


def _check_kinds(game: Game, kind: np.ndarray) -> None:
    """Decision and terminal positions, and chance nodes in games with dice during play."""
    chance_ok = stochastic(game)
    if (((kind == NodeKind.CHANCE) & (not chance_ok)) | (kind == NodeKind.SIMULTANEOUS)).any():
        what = "dice or random setups" if (kind == NodeKind.CHANCE).any() else "secret simultaneous choices"
        hint = (f" (a game with dice during play declares chance = 'in-play', {type(game).__name__} says "
                f"{game.chance!r}: its tiers are then solved by value iteration)"
                if what.startswith("dice") else "")
        raise TooBigError(f"{game.variant.label()} has {what}; the tiered solver handles games without "
                          f"them so far: solve it without --tiered{hint}")


# --- phase 2: solving --------------------------------------------------------------------------

def _heights(infos: dict[int, TierInfo]) -> None:
    """``height``: 0 for tiers whose moves stay inside, else 1 + the largest child height."""
    for t in sorted(infos, reverse=True):  # children have larger ids
        info = infos[t]
        info.height = 1 + max((infos[c].height for c in info.children), default=-1)


@dataclass
class _ChildTier:
    keys: np.ndarray
    player: np.ndarray
    value: np.ndarray
    remoteness: np.ndarray
    margin: np.ndarray | None
    index: SortedLookup | None = None

    def __post_init__(self) -> None:
        self.index = SortedLookup(self.keys)

    @cached_property
    def decided(self) -> bool:
        """Whether any position of the tier is won, lost or tied (else every one is a draw);
        read in chunks, so no temporary the size of the tier."""
        step = 1 << 24
        return any(bool((self.value[s : s + step] != DRAW).any()) for s in range(0, len(self.value), step))


def _get_child(run: Run, tier: int, scored: bool) -> _ChildTier:
    """Tier ``tier``'s finished values: one copy shared by the tiers being solved at the same
    time that reach it, dropped when the last of them is done (:func:`_release_children`). The
    file is read by the first thread that wants it, outside the lock, the others waiting for
    that read only (under the lock, two threads' tiers read their children one after the other:
    about 2 s of Override 4x4's 50 s solve with both cores idle, issue 34)."""
    with run.child_lock:
        entry = run.child_cache.get(tier)
        mine = entry is None
        if mine:  # read outside the lock: other threads' tiers load other children meanwhile
            entry = run.child_cache[tier] = Future()
        run.child_users[tier] = run.child_users.get(tier, 0) + 1
    if mine:
        try:
            entry.set_result(_load_child(run, tier, scored))
        except BaseException as exc:
            entry.set_exception(exc)
            with run.child_lock:  # (not kept: a later tier reads it again)
                if run.child_cache.get(tier) is entry:
                    del run.child_cache[tier]
            raise
    return waiting.result(entry)


def _start_tier(run: Run, info: TierInfo) -> None:
    """Tier ``info`` starts: it is no longer upcoming, and children kept that it does not read
    and no tier being solved holds are dropped, unless a later tier reads them and they fit the
    run's budget (:func:`_keep_child`); all of them when ``info`` is a large tier, so that kept
    children never add to the peak of the largest tiers."""
    large = run.keep_budget <= 0 or tier_memory(run, info) >= run.keep_none_from
    with run.child_lock:
        run.upcoming = [i for i in run.upcoming if i.tier != info.tier]
        if large:
            run.large_running.add(info.tier)
        idle = [u for u, n in run.child_users.items() if n <= 0 and u not in info.children]
        for u in idle:
            if large or not run.readers.get(u):
                run.child_cache.pop(u, None)
                del run.child_users[u]


#: children kept for later tiers may take this share of the largest tier's planned memory
#: (:func:`tier_memory`), or :data:`KEEP_FLOOR` bytes if more, and are all dropped while a tier of
#: half that memory or more runs (so they never add to the peak of the largest tiers)
KEEP_SHARE = 1 / 16
KEEP_FLOOR = 16 * 2**20
#: ... but a tier planned under this many bytes never counts as large: beside it the kept
#: children (at most :data:`KEEP_FLOOR` then) cannot matter, and in a game of many small tiers
#: (Override 2x2-2: 149 tiers of at most 28 positions) half the largest is most of them
KEEP_NONE_FLOOR = 256 * 2**20


def _keep_child(run: Run, u: int, ignore_large: bool = False) -> bool:
    """Whether tier ``u``, loaded as a child and now held by no tier being solved, stays
    loaded for a later tier that reads it: it does if some later tier reads it, no large tier
    runs (unless ``ignore_large``) and the children kept (with it) fit :attr:`Run.keep_budget`.
    (Called under ``run.child_lock``.)"""
    if not run.readers.get(u) or run.keep_budget <= 0 or (run.large_running and not ignore_large):
        return False
    kept = sum(run.tier_positions.get(v, 0) for v, n in run.child_users.items() if n <= 0 and v != u)
    return CHILD_BYTES_PER_POSITION * (kept + run.tier_positions.get(u, 0)) <= run.keep_budget


def _release_children(run: Run, info: TierInfo) -> None:
    """Tier ``info`` no longer needs its children (its moves into them are folded, or it is done,
    or it failed): drop those no tier being solved holds and the next tier to start does not
    read (once per tier: a second call drops nothing), then give the freed memory back
    (:func:`solver.pipeline.memory.return_freed_memory`; at a tier's end its own arrays are freed
    too)."""
    with run.child_lock:
        if info.tier not in run.children_released:
            run.children_released.add(info.tier)
            following = set(run.upcoming[0].children) if run.upcoming and run.slices > 1 else set()
            for u in info.children:
                if u in run.readers:
                    run.readers[u] -= 1
                if u not in run.child_users:
                    continue  # never loaded (the tier stopped before)
                left = run.child_users[u] - 1
                run.child_users[u] = left
                if left <= 0 and u not in following and not _keep_child(run, u):
                    run.child_cache.pop(u, None)
                    del run.child_users[u]
    memory.return_freed_memory()


#: a tier of at most this many positions, just written, is offered to the tiers that read it
#: from memory (:func:`_offer_child`) instead of being read back from its file
OFFER_ROWS = 1 << 16


def _offer_child(run: Run, t: int, keys: np.ndarray, player: np.ndarray, cols: dict[str, Any]) -> None:
    """Tier ``t``, just solved and written, kept as the child its parent tiers read, when it is
    small (:data:`OFFER_ROWS`), a later tier reads it and it fits the kept children's budget
    (:func:`_keep_child`): reading a small tier's file back cost about 1.5 ms of the 13 ms a
    tier of Override 2x2-2 took (many small tiers, issue 34). The arrays are the file's rows, so
    the parents see what they would read (``tests/test_tiered.py`` compares every table)."""
    if len(keys) > OFFER_ROWS or run.slices > 1:
        return
    with run.child_lock:
        # (t itself may count as a large tier while it finishes: at most OFFER_ROWS positions)
        others = run.large_running - {t}
        if t in run.child_cache or others or not _keep_child(run, t, ignore_large=True):
            return
        margin = cols.get("margin")
        child = _ChildTier(keys=np.array(keys, dtype=np.uint64), player=np.array(player, dtype=np.uint8),
                           value=np.array(cols["value"], dtype=np.uint8),
                           remoteness=np.array(cols["remoteness"], dtype=np.uint16),
                           margin=None if margin is None else np.array(margin, dtype=np.int16))
        entry: Future = Future()
        entry.set_result(child)
        run.child_cache[t] = entry
        run.child_users[t] = 0


def _load_child(run: Run, tier: int, scored: bool, only: np.ndarray | None = None) -> _ChildTier:
    """A finished tier's columns as numpy arrays, read row group by row group into arrays of
    their final size (a whole-file read would hold the file's columns twice at its peak).
    ``only`` (sorted distinct keys): just those positions' rows (a slice's reached children,
    :func:`_reached_children`); a key the file lacks is left out, and the lookup that wants it
    says the discovery files are damaged."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    path = run.tiers_dir / tierwork.tier_file(tier)
    dtypes = {"key": np.uint64, "player": np.uint8, "value": np.uint8, "remoteness": np.uint16}
    if scored:
        dtypes["margin"] = np.int16
    n = pq.ParquetFile(path).metadata.num_rows if only is None else len(only)
    arrays = {name: np.empty(n, dtype) for name, dtype in dtypes.items()}
    pos = 0
    for part, keys in row_groups_keyed(path, list(dtypes)):
        if only is not None and pos == n:
            break
        take = None
        if only is not None:  # the rows of this group whose keys are wanted (both sorted)
            take = np.flatnonzero(isin_sorted(keys, only))
            if not len(take):
                continue
        m = part.num_rows if take is None else len(take)
        for name, arr in arrays.items():
            if name == "key":
                col = keys
            else:
                col = part.column(name)
                if name == "remoteness":
                    col = pc.fill_null(col, int(NO_REMOTENESS))
                col = col.to_numpy()
            arr[pos : pos + m] = col if take is None else col[take]
        pos += m
        del part, keys
    if pos < n:
        arrays = {name: arr[:pos] for name, arr in arrays.items()}
    return _ChildTier(keys=arrays["key"], player=arrays["player"], value=arrays["value"],
                      remoteness=arrays["remoteness"], margin=arrays.get("margin"))


#: a slice of a tier reads only the positions its moves reach (:func:`_reached_children`) when
#: its child tiers whole would take more than this share of the free memory (its part of it,
#: when tiers are solved side by side)
REACH_ONLY_SHARE = 0.5


def _children(run: Run, info: TierInfo, keys: np.ndarray, scored: bool) -> dict[int, _ChildTier]:
    """The finished values tier ``info`` reads from the tiers its moves reach: those tiers whole,
    one copy shared by the tiers being solved (:func:`_get_child`); for a slice of a tier cut in
    slices (``run.slices`` > 1) whose child tiers would not fit its share of the free memory
    (:data:`REACH_ONLY_SHARE`), only the positions its moves reach (:func:`_reached_children`:
    slower, an extra expansion and a read of every child file a slice)."""
    if run.slices > 1:
        import pyarrow.parquet as pq

        free = memory.available_memory()
        sizes = run.tier_positions  # (a Dask worker's run has none: read off the files)
        need = CHILD_BYTES_PER_POSITION * sum(
            sizes[u] if u in sizes else pq.ParquetFile(run.tiers_dir / tierwork.tier_file(u)).metadata.num_rows
            for u in info.children if u != info.tier)
        if free is not None and need > REACH_ONLY_SHARE * free / max(1, run.tiers_at_once or run.workers):
            return _reached_children(run, info, keys, scored)
    return {u: _get_child(run, u, scored) for u in info.children}


#: a slice's reached children are merged (sorted, made distinct) whenever this many are pending
REACHED_MERGE = 1 << 24


def _reached_children(run: Run, info: TierInfo, keys: np.ndarray, scored: bool) -> dict[int, _ChildTier]:
    """The positions of other tiers that the moves of ``keys`` (tier ``info``) reach, with their
    finished values: an extra expansion of the tier finds them, then each child tier's file is
    read row group by row group keeping only them. A slice's children are spread over every
    slice of its child tiers, so reading those tiers whole would hold as much as the unsliced
    tier's children (up to several times the tier itself); its reached children scale with the
    slice (about its moves)."""
    tierwork.tier_step("finding the positions its moves reach in other tiers")
    t = info.tier
    found: dict[int, list[np.ndarray]] = {}
    pending = 0  # keys held in ``found``

    def split(s: int, exp: Any) -> dict[int, np.ndarray]:
        kids = np.asarray(exp.children, dtype=np.uint64)
        if not len(kids):
            return {}
        ct = tierwork.child_tiers(run.game, exp, run.slices)
        order = np.argsort(ct, kind="stable")
        ct, kids = ct[order], kids[order]
        cut = np.flatnonzero(np.diff(ct)) + 1
        return {int(c[0]): unique(k) for c, k in zip(np.split(ct, cut), np.split(kids, cut)) if c[0] != t}

    for _, _, parts in tierwork.expansions_then(run, keys, split):
        for u, k in parts.items():
            found.setdefault(u, []).append(k)
            pending += len(k)
        if pending > REACHED_MERGE:
            found = {u: [unique(np.concatenate(ks))] for u, ks in found.items()}
            pending = sum(len(ks[0]) for ks in found.values())
    tierwork.tier_step("reading the reached positions of other tiers")
    empty = np.empty(0, np.uint64)
    return {u: _load_child(run, u, scored, only=unique(np.concatenate(found.get(u, [empty]))))
            for u in info.children}


def _retrograde_tier(run: Run, info: TierInfo) -> dict[str, Any]:
    """The retrograde tier worker: by reverse lists of the tier's inside moves, or by passes
    over its positions when the lists do not fit (:func:`use_passes`)."""
    if use_passes(run, info):
        return solve_tier_passes(run, info)
    return _solve_tier_lists(run, info)


def _chance_tier(run: Run, info: TierInfo) -> dict[str, Any]:
    """The value-iteration tier worker (:func:`solver.pipeline.tiered_chance.solve_tier`)."""
    from solver.pipeline.tiered_chance import solve_tier

    return solve_tier(run, info)


#: the tier worker of each engine that has one (:func:`solver.pipeline.capabilities.engine_of`
#: with ``kind="tiers"`` names it); the secret-choice engine has none: Petal Battle, the game
#: with secret choices, is one strongly connected component (no tiers can split it)
TIER_WORKERS: dict[str, Callable[[Run, TierInfo], dict[str, Any]]] = {
    "retrograde": _retrograde_tier,
    "value-iteration": _chance_tier,
}


def solve_tier_task(run: Run, info: TierInfo) -> dict[str, Any]:
    """Solve one tier (its children's tier files must exist) and write its tier file. Returns
    its statistics. The unit of work of the local pool (and of any cluster executor): one
    worker for every game, dispatching on the engine its declarations name
    (:data:`TIER_WORKERS`)."""
    _start_tier(run, info)
    try:
        engine = engine_of(run.game, "tiers")
        worker = TIER_WORKERS.get(engine)
        if worker is None:
            raise ProtocolError(f"{run.game.name}: the {engine} engine has no tier worker; solve the whole "
                                "graph (--no-tiered)")
        with tierwork.tier_steps(run, info.tier, info.positions):
            return worker(run, info)
    finally:
        _release_children(run, info)
        with run.child_lock:
            run.large_running.discard(info.tier)
        for name in ("keys", "ply"):  # (read by the tier's own solve only)
            run.files.forget(run.discover / f"{name}-{info.tier}.npy")


def solve_tier_remote(spec: dict[str, Any], run_args: dict[str, Any], info: Any) -> dict[str, Any]:
    """Run on a worker: solve one tier of a tiered run whose work folder the worker sees at the
    same path, and write its tier file there."""
    from solver.pipeline.tasks import game_from_spec, host

    game = game_from_spec(spec)
    run = Run(game, Path(run_args["folder"]), Path(run_args["work"]), run_args["symmetry"],
              run_args["run_id"], slices=int(run_args.get("tier_slices", 1)))
    run.low_memory = run_args["low_memory"]
    run.tol, run.max_sweeps = float(run_args.get("tol", 1e-12)), run_args.get("max_sweeps")
    run.workers = 1
    if not run.tiers_dir.is_dir():
        raise ClusterError(f"worker {host()} does not see the work folder {run.work}; every worker "
                           "needs the tables folder at the same path (a shared file system)")
    return solve_tier_task(run, info)


def _solve_tier_lists(run: Run, info: TierInfo) -> dict[str, Any]:
    """:func:`solve_tier_task` with reverse lists of the moves inside the tier."""
    t0 = time.perf_counter()
    game, t, scored = run.game, info.tier, bool(run.game.scored)
    keys, ply, kind, to_move, result = tierwork.tier_arrays(run, t)
    n = len(keys)
    tmargin = np.zeros(n, np.int32)
    outdeg = np.zeros(n, np.int32)
    no_rem = NO_REMOTENESS
    ext_win_min = np.full(n, no_rem, np.uint16)
    ext_lose_cnt = np.zeros(n, np.int32)
    ext_lose_max = np.zeros(n, np.uint16)
    ext_tie_min = np.full(n, no_rem, np.uint16)
    int_src: list[tuple[int, np.ndarray]] = []  # per chunk: first row, moves inside per row
    # per chunk, the rows the moves inside the tier lead to, spilled to a scratch file (read back
    # once, chunk by chunk, to fill the reverse lists: they never sit in memory beside them)
    scratch_path = run.work / f"scratch-{t}-{os.getpid()}-{threading.get_ident()}.bin"
    scratch = open(scratch_path, "wb")
    int_dst: list[int] = []  # per chunk: how many entries
    ext_src: list[np.ndarray] = []
    ext_m: list[np.ndarray] = []
    children = _children(run, info, keys, scored)
    index = SortedLookup(keys)  # built once: lookups of every chunk's children inside the tier
    counts = np.zeros(n, np.int32)  # moves inside the tier into each row
    moves = 0
    try:
        # each chunk's children are split (their tiers, their rows here) in the thread that
        # expands it: this loop only folds
        def split(s: int, exp: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            return tierwork.split_inside(game, t, exp, keys, index, run.slices)

        for s, exp, (ct, inside, rows) in tierwork.expansions_then(run, keys, split):
            m = len(exp.kind)
            kind[s : s + m] = exp.kind
            to_move[s : s + m] = exp.to_move
            result[s : s + m] = exp.result
            tmargin[s : s + m] = exp.margin
            deg = np.diff(exp.offsets)
            outdeg[s : s + m] = deg
            moves += int(deg.sum())
            kids = exp.children
            if not len(kids):
                continue
            src = np.repeat(np.arange(s, s + m, dtype=np.int64), deg)
            if len(rows):
                int_src.append((s, np.bincount(src[inside] - s, minlength=m).astype(np.uint16)))
                rows32 = rows.astype(np.int32)
                rows32.tofile(scratch)
                int_dst.append(len(rows32))
                _jit.count_into(counts, rows32)
            for psrc, margins in _fold_outside(t, kids, src, ct, inside, to_move, children, scored,
                                               (ext_win_min, ext_lose_cnt, ext_lose_max, ext_tie_min)):
                if scored:
                    ext_src.append(psrc.astype(np.int32))
                    ext_m.append(margins)
    except BaseException:
        scratch.close()
        scratch_path.unlink(missing_ok=True)
        raise
    # the children's values are folded: drop them now, not when the tier is written (they can
    # be larger than the tier: Blam 4x4-2's no-capture tier of 55M positions reaches 531M)
    del children
    _release_children(run, info)
    t_expand = time.perf_counter() - t0
    # the moves inside the tier as reverse lists (parents of each row), filled chunk by chunk
    # from the scratch file
    tierwork.tier_step("reverse lists of the moves inside the tier")
    scratch.close()
    roff = _offsets(counts)
    rparent = np.empty(int(roff[-1]), np.int32)
    fill = roff[:-1].copy()
    try:
        with open(scratch_path, "rb") as fh:
            while int_dst:
                first, per_row = int_src.pop(0)
                dst = np.fromfile(fh, dtype=np.int32, count=int_dst.pop(0))
                _jit.fill_reverse(fill, rparent, first, per_row, dst, to_move)
    finally:
        scratch_path.unlink(missing_ok=True)
    del fill
    terminal = kind == NodeKind.TERMINAL
    terminal_result = np.where(terminal, result + 1, -1).astype(np.int8)
    tierwork.tier_step("values and remoteness, level by level")
    value, remoteness = _jit.tier_values(outdeg, roff, rparent, ext_win_min, ext_lose_cnt,
                                         ext_lose_max, ext_tie_min, terminal_result, no_rem)
    del ext_win_min, ext_lose_cnt, ext_lose_max, ext_tie_min, terminal_result
    cols: dict[str, Any] = {"value": value.astype(np.uint8), "remoteness": remoteness}
    if scored:
        counts[:] = 0
        for src_part in ext_src:
            _jit.count_into(counts, src_part)
        eoff = _offsets(counts)
        em = np.empty(int(eoff[-1]), np.int32)
        fill = eoff[:-1].copy()
        while ext_src:
            _jit.fill_grouped(fill, em, ext_src.pop(0), ext_m.pop(0))
        del fill
        tierwork.tier_step("best forced margins")
        if n == 0 or int(to_move.max()) <= 1:  # two sides: one sweep per player
            best = _jit.tier_margins(outdeg, roff, rparent, eoff, em, terminal, tmargin, to_move)
        else:  # more sides to move: one threshold pass per candidate margin
            best = threshold_margins(outdeg, roff, rparent, eoff, em, terminal, tmargin)
        cols["margin"] = best.astype(np.int16, copy=False)
    del counts
    frames = positions_frames(keys, to_move, kind, ply, outdeg, cols)
    meta = {**run.identity(), "tier": int(t), "tier_name": tierwork.tier_name(game, t, run.slices), "positions": int(n),
            "moves": moves, "inside_moves": int(len(rparent)),
            "seconds": round(time.perf_counter() - t0, 3), "toolkit_version": solver.__version__}
    fault_point(f"write:{tierwork.tier_file(t)}")
    tierwork.tier_step("writing the tier file")
    write_parquet(frames, run.tiers_dir / tierwork.tier_file(t), meta, key_deltas=True)
    _offer_child(run, t, keys, to_move, cols)
    return {"tier": int(t), "positions": int(n), "moves": moves, "inside_moves": int(len(rparent)),
            "seconds": time.perf_counter() - t0, "expand_seconds": t_expand,
            "terminal": int(terminal.sum()),
            "by_value": _value_counts(value)}


def threshold_margins(outdeg: np.ndarray, roff: np.ndarray, rparent: np.ndarray, eoff: np.ndarray,
                      em: np.ndarray, terminal: np.ndarray, tm: np.ndarray) -> np.ndarray:
    """Every row's optimal margin by one :func:`_jit.tier_force_at_least` pass per candidate
    margin (each outcome's margin, either sign, and 0): the margin is the largest candidate the
    mover can force. ``_jit.tier_margins`` gives the same in one sweep per player; this stays
    for movers that are not two alternating sides, and as the reference the sweep is tested on."""
    candidates = unique(np.concatenate([tm[terminal], -tm[terminal], em.astype(np.int64),
                                        -em.astype(np.int64), [0]]))
    best = np.full(len(outdeg), candidates[0], dtype=np.int64)
    for c in candidates[1:]:
        ok = _jit.tier_force_at_least(outdeg, roff, rparent, eoff, em, terminal, tm, int(c))
        best = np.where(ok, c, best)
    return best

# --- the low-memory mode: passes instead of reverse lists ----------------------------------------

#: peak bytes per position of a tier solved by passes (keys 8, value and remoteness 3, node
#: information 6, the folded children of other tiers 8, the key index; scored games add 8)
PASSES_BYTES_PER_TIER_POSITION = 30

#: passes keep each position's children in the tier (4 bytes a move, the row of the child or -1
#: outside the tier) while, after each chunk's, the free memory stays above a reserve: the share
#: ``1 - PASSES_CHILDREN_MEMORY_SHARE`` of the machine's memory plus
#: :data:`PASSES_RESERVE_PER_POSITION` bytes per position of each tier being solved at once (what
#: they still write into their arrays, their temporaries after the expansion, their tables). Every
#: level is then a walk over the kept rows instead of a new expansion of the undecided positions;
#: chunks past the reserve are expanded again (0: keep none). Checked against the free memory at
#: every chunk, so tiers solved side by side, and other programs, are seen as they grow: a budget
#: fixed at a tier's start let two tiers of 185M positions beside a finished child of 484M run
#: Override 3x3-2 out of 24 GB.
PASSES_CHILDREN_MEMORY_SHARE = 0.8
PASSES_RESERVE_PER_POSITION = 16


def passes_by_default(game: Game) -> bool:
    """Whether a game's tiers are solved by passes unless told otherwise: deterministic games
    without margins. Measured on Override 4x4 (``python -m solver.bench --tiered --case
    override:4x4`` with and without ``--low-memory``, README): the passes, with each position's
    children kept as rows while memory is free, took 226 s at 24 bytes a position where reverse
    lists took 249 s at 70 (162 s and 173 s with two workers). Scored games keep reverse lists
    where they fit: their margins come from one sweep per player over the lists, where the passes
    need one pass per possible margin."""
    return not stochastic(game) and not game.scored


def memory_plan(game: Game, low_memory: bool | None) -> str | None:
    """The line a tiered solve prints after its size estimate: how its tiers will hold their
    moves, and why (the bytes a position are the memory plan's: :data:`PASSES_BYTES_PER_TIER_POSITION`
    and the lists' peaks; Override 4x4 measured 24 by passes)."""
    if stochastic(game):
        return None
    if low_memory is True:
        return ("memory plan: every tier by passes over its positions (--low-memory), about "
                f"{PASSES_BYTES_PER_TIER_POSITION} bytes a position of a tier")
    if low_memory is False:
        return ("memory plan: every tier with reverse lists of its moves (--lists), up to about "
                f"{SCORED_PEAK_BYTES_PER_TIER_POSITION if game.scored else PEAK_BYTES_PER_TIER_POSITION} "
                "bytes a position of a tier")
    if passes_by_default(game):
        return ("memory plan: every tier by passes over its positions, about "
                f"{PASSES_BYTES_PER_TIER_POSITION} bytes a position of a tier (the default without margins: measured faster than reverse lists of the moves on Override 4x4, "
                "at a third of their memory); --lists holds the reverse lists instead")
    return ("memory plan: reverse lists of each tier's moves where they fit the free memory (the margins' "
            "sweep reads them), else passes over its positions; --low-memory: passes everywhere")


def use_passes(run: Run, info: TierInfo) -> bool:
    """Whether tier ``info`` is solved by passes: as asked (``run.low_memory``), else by
    default in games without margins (:func:`passes_by_default`), else when its reverse lists
    and its children (:func:`tier_memory`) would not fit the free memory. Tiers side by side are
    planned together before they start (:func:`_side_by_side`)."""
    if run.low_memory is not None:
        return bool(run.low_memory)
    if passes_by_default(run.game):
        return True
    mem = memory.available_memory()
    return mem is not None and tier_memory(run, info) > 0.8 * mem


def reached_positions(tier: int, children: list[int], sizes: dict[int, int]) -> int:
    """Positions of the other tiers among ``children`` (``sizes``: positions by tier), which
    tier ``tier`` loads while it is expanded."""
    return sum(sizes.get(u, 0) for u in children if u != tier)


def child_positions(run: Run, info: TierInfo) -> int:
    """:func:`reached_positions` of a tier of this run."""
    return reached_positions(info.tier, info.children, run.tier_positions)


def tier_memory(run: Run, info: TierInfo) -> int:
    """Peak bytes of solving tier ``info`` with reverse lists (:func:`lists_memory`), with the
    children of other tiers it reads."""
    return lists_memory(info.positions, child_positions(run, info), bool(run.game.scored))


def lists_memory(positions: int, children: int, scored: bool) -> int:
    """Peak bytes of a tier of ``positions`` solved with reverse lists, whose moves reach
    ``children`` positions of other tiers: the larger of the expansion (the children loaded,
    the tier's arrays and its folded moves) and the solve after it (the children dropped; the
    reverse lists, values and, scored, the margins' arrays)."""
    per = SCORED_PEAK_BYTES_PER_TIER_POSITION if scored else PEAK_BYTES_PER_TIER_POSITION
    return max(CHILD_BYTES_PER_POSITION * children + EXPAND_BYTES_PER_TIER_POSITION * positions,
               per * positions)


#: no level an outside child starts (a tier no move leaves)
_NO_EVENTS = np.empty(0, np.int64)


def _keep_more_children(n: int, tiers: int, held: int, more: int) -> bool:
    """Whether the passes of a tier of ``n`` positions (``tiers`` tiers solved at once), holding
    ``held`` bytes of kept children, may keep ``more`` (see :data:`PASSES_CHILDREN_MEMORY_SHARE`)."""
    if PASSES_CHILDREN_MEMORY_SHARE <= 0:
        return False
    free, total = memory.available_memory(), memory.total_memory()
    if free is None or total is None:
        return False
    reserve = (1.0 - PASSES_CHILDREN_MEMORY_SHARE) * total + PASSES_RESERVE_PER_POSITION * n * max(1, tiers)
    return free - more > reserve


def _may_need_levels(info: TierInfo, children: dict[int, _ChildTier], scored: bool) -> bool:
    """Whether the passes of tier ``info`` can make a level (or margin) pass: a scored game, a
    terminal position in the tier (or not counted) or a decided position in a child tier."""
    return scored or info.terminal is None or info.terminal > 0 or any(c.decided for c in children.values())


def solve_tier_passes(run: Run, info: TierInfo) -> dict[str, Any]:
    """Solve one tier as :func:`solve_tier_task` does, to the same table, but without reverse
    lists: after one expansion that folds the children of other tiers, each level ``r`` visits
    the still undecided positions with their children and decides those of remoteness ``r`` (see
    :mod:`solver.engines._retro_jit`). The children are the rows the first expansion found, kept
    while memory is free (:data:`PASSES_CHILDREN_MEMORY_SHARE`, 4 bytes a move) in a tier that can
    need a level (:func:`_may_need_levels`), else a new expansion of those positions. At least
    about 30 bytes per position of the tier instead of 100-150; time: per level a walk over the
    kept rows, or one expansion of the undecided positions whose children were not kept (and, in
    scored games, the same per pass of each margin threshold). With a pool (``workers`` > 1) each
    chunk is expanded, split and folded in a thread (it writes its own rows only) and each level
    walks its chunks in the threads, in any order (issue 34: both cores inside one tier)."""
    t0 = time.perf_counter()
    game, t, scored = run.game, info.tier, bool(run.game.scored)
    keys = tierwork.tier_keys(run, t)
    n = len(keys)
    no_rem = NO_REMOTENESS
    kind = np.empty(n, np.int8)
    to_move = np.empty(n, np.int8)
    outdeg = np.zeros(n, np.uint16)  # more than 65,535 moves: refused below
    value = np.full(n, _UNDECIDED, np.int8)
    remoteness = np.full(n, no_rem, np.uint16)
    if info.children:
        ext_win_min = np.full(n, no_rem, np.uint16)
        ext_lose_cnt = np.zeros(n, np.uint16)
        ext_lose_max = np.zeros(n, np.uint16)
        ext_tie_min = np.full(n, no_rem, np.uint16)
        ext_max = np.full(n, _NO_MARGIN, np.int32) if scored else None
    else:  # no move leaves the tier (often the largest, the last): constants, not 8-12 bytes a position
        ext_win_min = ext_tie_min = np.broadcast_to(np.uint16(no_rem), (n,))
        ext_lose_cnt = ext_lose_max = np.broadcast_to(np.uint16(0), (n,))
        ext_max = np.broadcast_to(np.int32(_NO_MARGIN), (n,)) if scored else None
    tmargin = np.zeros(n, np.int32) if scored else None
    children = _children(run, info, keys, scored)
    index = SortedLookup(keys)
    moves = inside_moves = 0
    # each chunk's children as rows of the tier (-1 outside), while they fit (see the constant),
    # and only where a level can be needed: not in a tier without terminal positions whose
    # children tiers are all draws (every position is then a draw, found without a level)
    at_once = run.tiers_at_once or run.workers
    keep = n < 2**31 and _may_need_levels(info, children, scored)
    stored: list[np.ndarray | None] | None = [] if keep else None
    held = 0
    full = False  # the reserve was reached: no more children kept

    def fold(s: int, exp: Expansion) -> tuple[int, int, np.ndarray | None]:
        """A chunk's rows filled and its moves out of the tier folded, in the thread that expands
        it (each chunk writes its own rows only), so that this loop only keeps the children:
        returns its moves, its moves inside the tier and its children as rows of the tier (-1
        outside; ``None`` when the tier keeps none)."""
        m = len(exp.kind)
        kind[s : s + m] = exp.kind
        to_move[s : s + m] = exp.to_move
        term = exp.kind == NodeKind.TERMINAL
        res = exp.result
        value[s : s + m][term & (res == 1)] = _WIN
        value[s : s + m][term & (res == -1)] = _LOSE
        remoteness[s : s + m][term & (res != 0)] = 0
        if scored:
            tmargin[s : s + m] = exp.margin
        deg = np.diff(exp.offsets)
        if len(deg) and int(deg.max()) > 65_535:
            raise TooBigError(f"a position of tier {t} has {int(deg.max()):,} moves; the low-memory mode "
                              "counts at most 65,535: solve without --low-memory")
        outdeg[s : s + m] = deg
        kids = exp.children
        if not len(kids):
            return int(deg.sum()), 0, None if stored is None else np.empty(0, np.int32)
        ct, inside, rows = tierwork.split_inside(game, t, exp, keys, index, run.slices)
        src = np.repeat(np.arange(s, s + m, dtype=np.int64), deg)
        for psrc, margins in _fold_outside(t, kids, src, ct, inside, to_move, children, scored,
                                           (ext_win_min, ext_lose_cnt, ext_lose_max, ext_tie_min)):
            if scored:
                np.maximum.at(ext_max, psrc, margins)
        rows_of = None
        if stored is not None:
            rows_of = np.full(len(kids), -1, np.int32)
            rows_of[inside] = rows
        return int(deg.sum()), len(rows), rows_of

    for s, exp, (count, count_inside, rows_of) in tierwork.expansions_then(run, keys, fold):
        moves += count
        inside_moves += count_inside
        if stored is not None:  # once the reserve is reached, later chunks are expanded again
            if not len(rows_of) or (not full and _keep_more_children(n, at_once, held, rows_of.nbytes)):
                held += rows_of.nbytes
                stored.append(rows_of)
            else:
                full = True
                stored.append(None)
    del children  # folded: dropped now, as with lists
    _release_children(run, info)
    t_expand = time.perf_counter() - t0
    terminal = kind == NodeKind.TERMINAL

    def sweep(todo: np.ndarray, step: Callable[[np.ndarray, np.ndarray, np.ndarray], int],
              parallel: bool = False) -> int:
        """Run ``step`` on the rows of ``todo`` (a mask) chunk by chunk, with their children: the
        kept rows of the children (the same lists, in the same order, as a new expansion gives),
        else a new expansion of those rows. ``parallel``: the chunks run in the pool's threads,
        in any order, for a ``step`` whose decisions do not depend on it (a level's: a row is
        decided from children decided at the levels before, never at its own)."""

        def one(s: int) -> int:
            rows = np.flatnonzero(todo[s : s + tierwork.CHUNK]) + s
            if not len(rows):
                return 0
            kept = None if stored is None else stored[s // tierwork.CHUNK]
            if kept is not None:
                deg = outdeg[s : s + tierwork.CHUNK].astype(np.int64)
                first = np.zeros(len(deg) + 1, np.int64)
                np.cumsum(deg, out=first[1:])
                local = rows - s
                lens = deg[local]
                offsets = np.zeros(len(rows) + 1, np.int64)
                np.cumsum(lens, out=offsets[1:])
                at = np.repeat(first[local] - offsets[:-1], lens) + np.arange(offsets[-1], dtype=np.int64)
                return int(step(rows, offsets, kept[at].astype(np.int64)))
            exp = game.expand(keys[rows], canonical=run.symmetry)
            kids = exp.children
            child = np.full(len(kids), -1, np.int64)
            if len(kids):
                _, inside, found = tierwork.split_inside(game, t, exp, keys, index, run.slices)
                child[inside] = found
            return int(step(rows, exp.offsets, child))

        starts = range(0, n, tierwork.CHUNK)
        if parallel and run.pool is not None and n > tierwork.CHUNK:
            return sum(waiting.pool_map(run.pool, one, starts))
        return sum(one(s) for s in starts)

    def levels(first_decided: int, events: np.ndarray, step) -> int:
        """Levels 1, 2, ... while something was decided at the level before, jumping to the next
        level an outside child starts when nothing was. Returns the passes made."""
        passes, r, last = 0, 1, first_decided
        events = unique(events.astype(np.int64))
        while True:
            if last == 0:
                later = events[events >= r]
                if not len(later):
                    return passes
                r = int(later[0])
            tierwork.tier_step(f"pass {passes + 1} over the undecided positions (level {r})")
            last = sweep((value == _UNDECIDED) & ~terminal, lambda rows, off, ch: step(rows, off, ch, r),
                         parallel=True)
            passes += 1
            r += 1

    inner = ~terminal
    outside = bool(info.children)  # else the outside arrays are constants: no event (and no masks of n bytes)
    events = np.concatenate([ext_win_min[inner & (ext_win_min != no_rem)].astype(np.int64) + 1,
                             ext_lose_max[inner & (ext_lose_cnt > 0)].astype(np.int64) + 1]) if outside else _NO_EVENTS
    passes = levels(int((value != _UNDECIDED).sum()), events,
                    lambda rows, off, ch, r: _jit.level_win_lose(
                        rows, off, ch, r, value, remoteness, to_move, ext_win_min, ext_lose_cnt,
                        ext_lose_max, outdeg, no_rem))
    del ext_win_min, ext_lose_cnt, ext_lose_max, events
    tie_end = terminal & (value == _UNDECIDED)  # a terminal that is not won or lost is a tie
    value[tie_end] = _TIE
    remoteness[tie_end] = 0
    events = (ext_tie_min[inner & (value == _UNDECIDED) & (ext_tie_min != no_rem)].astype(np.int64) + 1
              if outside else _NO_EVENTS)
    passes += levels(int(np.count_nonzero(tie_end)), events,
                     lambda rows, off, ch, r: _jit.level_tie(rows, off, ch, r, value, remoteness,
                                                             ext_tie_min, no_rem))
    del ext_tie_min, events, tie_end
    value[value == _UNDECIDED] = DRAW
    cols: dict[str, Any] = {"value": value.view(np.uint8), "remoteness": remoteness}
    if scored:
        tm = tmargin.astype(np.int64)
        has_ext = ext_max != _NO_MARGIN
        candidates = unique(np.concatenate([tm[terminal], -tm[terminal], ext_max[has_ext].astype(np.int64),
                                            -ext_max[has_ext].astype(np.int64), [0]]))
        best = np.full(n, candidates[0], dtype=np.int16)
        win = np.zeros((2, n), np.bool_)
        lose = np.zeros((2, n), np.bool_)
        for c in candidates[1:].tolist():
            for role, thr in ((0, c), (1, 1 - c)):
                win[role] = np.where(terminal, tm >= thr, ext_max >= thr)
                lose[role] = terminal & (tm < thr)
            while True:
                open_rows = inner & ~((win[0] | lose[0]) & (win[1] | lose[1]))
                passes += 1
                if not sweep(open_rows, lambda rows, off, ch: _jit.force_pass(
                        rows, off, ch, to_move, win, lose, ext_max, c)):
                    break
            ok = win[0] | (~lose[0] & (0 >= c))
            best[ok] = c
        cols["margin"] = best
        del win, lose, ext_max, tmargin
    stored = index = None  # the kept children and the key index: not needed to write the tier
    ply = run.files.load(run.discover / f"ply-{t}.npy", mmap_mode="r")
    frames = positions_frames(keys, to_move, kind, ply, outdeg, cols)
    meta = {**run.identity(), "tier": int(t), "tier_name": tierwork.tier_name(game, t, run.slices), "positions": int(n),
            "moves": moves, "inside_moves": inside_moves, "mode": "passes", "passes": passes,
            "kept_children_bytes": int(held), "seconds": round(time.perf_counter() - t0, 3),
            "toolkit_version": solver.__version__}
    fault_point(f"write:{tierwork.tier_file(t)}")
    tierwork.tier_step("writing the tier file")
    write_parquet(frames, run.tiers_dir / tierwork.tier_file(t), meta, key_deltas=True)
    _offer_child(run, t, keys, to_move, cols)
    del ply
    return {"tier": int(t), "positions": int(n), "moves": moves, "inside_moves": inside_moves,
            "seconds": time.perf_counter() - t0, "expand_seconds": t_expand, "passes": passes,
            "kept_children_bytes": int(held), "terminal": int(terminal.sum()),
            "by_value": _value_counts(value)}


def _value_counts(value: np.ndarray) -> list[int]:
    """How many positions have each value code 0-3, without a copy of the tier's values (an
    int64 copy for ``np.bincount`` was the peak of a large tier's solve: 8 bytes a position)."""
    return [int(np.count_nonzero(value == v)) for v in range(4)]


def _fold_outside(t: int, kids: np.ndarray, src: np.ndarray, ct: np.ndarray, inside: np.ndarray,
                  to_move: np.ndarray, children: dict[int, _ChildTier], scored: bool, ext: tuple):
    """Fold a chunk's moves that leave tier ``t`` into ``ext`` (``fold_external``'s four arrays),
    one child tier at a time; yields, per child tier, the rows the moves leave and (scored games)
    the children's margins from those rows' movers (else ``None``)."""
    for u in unique(ct[~inside]).tolist():
        sel = ct == u
        child = children.get(int(u))
        if child is None:
            raise TableError(f"tier {t} reaches tier {u}, which its discovery did not record",
                             fix="solve again with --force")
        ck = kids[sel]
        idx = child.index(ck)
        tierwork.check_found(child.keys, idx, ck, t, int(u))
        psrc = src[sel]
        same = child.player[idx] == to_move[psrc]
        _jit.fold_external(psrc, child.value[idx].astype(np.int8), child.remoteness[idx], same, *ext)
        margins = None
        if scored:
            cm = child.margin[idx].astype(np.int32)
            margins = np.where(same, cm, -cm).astype(np.int32)
        yield psrc, margins


def _offsets(counts: np.ndarray) -> np.ndarray:
    """List offsets ``[n + 1]`` from per-row counts (int32 while they fit, else int64)."""
    total = int(counts.sum(dtype=np.int64))
    off = np.zeros(len(counts) + 1, np.int32 if total < 2**31 - 1 else np.int64)
    np.cumsum(counts, out=off[1:])
    return off


def _tier_done(run: Run, tier: int) -> dict[str, Any] | None:
    """The stats of a finished tier file of this run (``None``: missing or of another run)."""
    path = run.tiers_dir / tierwork.tier_file(tier)
    if not path.exists():
        return None
    try:
        meta = read_meta(path)
    except TableError:
        return None
    if meta.get("run_id") != run.run_id:
        return None
    return {"tier": tier, "positions": meta.get("positions"), "moves": meta.get("moves"),
            "inside_moves": meta.get("inside_moves"), "seconds": float(meta.get("seconds", 0.0)),
            "resumed": True}


def solve_tiers(run: Run, infos: dict[int, TierInfo], *, workers: int = 1,
                progress: Progress | None = None, cluster: Any = None) -> dict[int, dict[str, Any]]:
    """Phase 2: every tier, children first; tiers of one height in parallel (``workers``
    threads: the expansions and kernels release the GIL for much of their work), or as Dask
    tasks on ``cluster`` (:func:`solver.pipeline.tasks.run_tier_tasks`: the workers read and write
    the tier files in the run's work folder, which they must see at the same path)."""
    _heights(infos)
    run.tier_positions = {t: i.positions for t, i in infos.items()}
    stats: dict[int, dict[str, Any]] = {}
    total = sum(i.positions for i in infos.values())
    by_height: dict[int, list[TierInfo]] = {}
    finished = {t: _tier_done(run, t) for t in infos}
    # the tiers a resumed run finds solved count from its first line (counted height by height,
    # they would look solved at this run's rate and its time left would read "under a minute")
    done_pos = sum(i.positions for i in infos.values() if finished[i.tier] is not None)
    for info in infos.values():
        by_height.setdefault(info.height, []).append(info)
    pool = None
    try:
        for h in sorted(by_height):
            todo = []
            # the largest first (threads finish together); the slices of one of the game's tiers
            # one after another, the largest tier's first (they read the same children)
            whole: dict[int, int] = {}
            for info in by_height[h]:
                whole[info.tier // run.slices] = whole.get(info.tier // run.slices, 0) + info.positions
            for info in sorted(by_height[h], key=lambda i: (-whole[i.tier // run.slices], i.tier // run.slices,
                                                            -i.positions)):
                st = finished[info.tier]
                if st is not None:
                    stats[info.tier] = st
                else:
                    todo.append(info)
            if progress is not None:
                progress("solve", f"height {h}", done_pos, total)
            run.upcoming = list(todo)
            if not run.readers:  # (once: every tier left to solve, of every height)
                left = [i for i in infos.values() if finished[i.tier] is None]
                for i in left:
                    for u in i.children:
                        run.readers[u] = run.readers.get(u, 0) + 1
                largest = max((tier_memory(run, i) for i in left), default=0)
                run.keep_budget = int(max(KEEP_FLOOR, KEEP_SHARE * largest)) if KEEP_SHARE > 0 else 0
                run.keep_none_from = max(largest // 2, KEEP_NONE_FLOOR)
            if cluster is not None and todo:
                from solver.pipeline.tasks import run_tier_tasks

                run.tiers_at_once = None  # a Dask worker may hold as many tiers as it has threads
                results = run_tier_tasks(cluster, run, todo, solve_tier_remote)
            elif workers > 1 and len(todo) > 1 and _side_by_side(run, todo, workers):
                # threads, not processes: the compiled kernels release the GIL, nothing is copied
                # or pickled, and scripts need no `if __name__ == "__main__"` guard
                run.tiers_at_once = min(workers, len(todo))
                if pool is None:
                    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="tier")
                results = waiting.pool_map(pool, lambda info: solve_tier_task(run, info), todo)
            else:
                run.tiers_at_once = 1
                results = (solve_tier_task(run, info) for info in todo)
            for st in results:
                stats[st["tier"]] = st
                done_pos += st["positions"]
                if progress is not None:
                    progress("solve", tierwork.tier_name(run.game, st["tier"], run.slices), done_pos, total)
                fault_point("tier-solved")
    except BaseException:  # interrupted: do not wait for the tiers still being solved
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
            pool = None
        raise
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
    return stats


#: bytes per position of a tier solved by passes with its children kept (its arrays, about 33
#: measured on Override 3x3-2, and 4 bytes for each of its moves, about 5-12 a position)
PASSES_KEPT_BYTES_PER_TIER_POSITION = 70


def _side_by_side(run: Run, todo: list[TierInfo], workers: int) -> bool:
    """Whether the tiers of one height are solved ``workers`` at a time: with reverse lists when
    the largest ``workers`` of them fit in 80% of the free memory together, each with the children
    it reads (:func:`tier_memory`; two of Blam 4x4-2's one-capture tiers of 37M positions, each
    reading 238M positions of children, reached 24 GB side by side, planned at 150 bytes a
    position and no children); by passes only when the largest of them, side by
    side, fit in the free memory with their children kept and the reserve that
    :func:`_keep_more_children` leaves free still free. Otherwise one at a time (the next chunks
    still expanded in the other threads): kept children make each level a walk over rows instead
    of a new expansion, which on Override 3x3-2 (63 levels in its largest tier) matters far more
    than a second tier in parallel. (Measured there: two tiers of 70M and 75M side by side, planned
    against 80% of the free memory without that reserve, kept only part of their children and
    took over 15 minutes instead of about 3.5 each.)"""
    big = sorted(todo, key=lambda i: -i.positions)[:workers]
    free, total = memory.available_memory(), memory.total_memory()
    if not any(use_passes(run, info) for info in big):
        return free is None or sum(tier_memory(run, info) for info in big) <= 0.8 * free
    if free is None or total is None:
        return False
    n = sum(i.positions for i in big)
    kids = CHILD_BYTES_PER_POSITION * sum(child_positions(run, info) for info in big)
    reserve = (1.0 - PASSES_CHILDREN_MEMORY_SHARE) * total + PASSES_RESERVE_PER_POSITION * n
    return PASSES_KEPT_BYTES_PER_TIER_POSITION * n + kids + reserve <= free


# --- the estimate before a run ---------------------------------------------------------------

#: peak bytes per position of a tier solved with reverse lists (measured on Override 3x3's
#: all-placed tier: about 140, with 7.7 moves inside the tier per position), and the fixed cost
#: of the interpreter and libraries
PEAK_BYTES_PER_TIER_POSITION = 150
#: the same for scored games, whose tiers also hold the margins' arrays (measured on Blam
#: 4x4-2's one-capture tiers of 37M positions, after their children are dropped: see the README)
SCORED_PEAK_BYTES_PER_TIER_POSITION = 240
#: bytes per position of a tier while it is expanded (its keys, plies and node arrays, the folded
#: moves into other tiers; about 100 measured on Blam 4x4-2), beside its children, and bytes
#: per position of a child tier loaded (key 8, side to move 1, value 1, remoteness 2, margin 2,
#: its lookup index; 17.9 measured there)
EXPAND_BYTES_PER_TIER_POSITION = 110
CHILD_BYTES_PER_POSITION = 18
BASE_BYTES = 400 * 2**20
#: disk bytes per position while the run lasts: the discovery files (keys, plies and spilled
#: children of later tiers) and the finished tier files. Measured on Override 3x3-2's whole run
#: (2026-12-06, its work folder sampled every minute): 10.0 when its discovery ended, 10.7 (43.5 GB)
#: at most, near the end of its tier solves, its finished table 0.73 (``peak_disk_bytes`` in
#: measured.toml, which a test holds this to); a tenth more for games whose spills weigh more.
#: (17 + 3 before refused that run with 70.8 GB free.)
DISCOVERY_BYTES_PER_POSITION = 11
TIER_FILE_BYTES_PER_POSITION = 1
DISK_BYTES_PER_POSITION = DISCOVERY_BYTES_PER_POSITION + TIER_FILE_BYTES_PER_POSITION


#: the largest of ``n`` hash slices of a tier is taken as this much above an even cut (measured
#: on a union of Greener 4x4's first 10 setup classes cut in 8: at most 1.003x on its five
#: largest tiers, 3.7M-5.1M positions; 1.014x median and 1.068x at most on its 324 tiers of
#: 8,000 positions or more)
SLICE_SLACK = 1.05


def estimate(game: Game, low_memory: bool = False, held: dict[str, Any] | None = None,
             slices: int = 1) -> dict[str, int] | None:
    """Positions, peak memory and disk of a tiered solve, from the measured tier sizes of the
    preset the variant is (:mod:`solver.pipeline.measured`); ``None`` when the variant's size is
    not known (not a preset, or not measured: every plug-in). ``low_memory``: the
    largest tier solved by passes. ``at_least``: the sizes are lower bounds (a discovery that
    was stopped: ``at_least = true`` in the data file). ``held``: what an unfinished run that
    will be resumed has already written (:func:`tier_progress`); the disk is then only what is
    still to be written: discovery files for the positions not yet discovered, tier files for
    those not yet solved; once every tier is discovered, the memory is that of the largest tier
    not yet solved. ``slices``: tiers cut in that many slices (:func:`tierwork.tiers_of`): the
    largest is the measured largest tier's share, :data:`SLICE_SLACK` above an even cut."""
    entry = measured.of_game(game)
    if entry is None or not entry.has_tier_sizes:
        return None
    positions, largest, at_least = int(entry.positions), int(entry.largest_tier), entry.at_least
    left = bool(held) and not at_least and int(held["positions_discovered"]) >= positions
    if left:
        largest = int(held["largest_left"])  # every tier is found: the largest still to solve
    elif slices > 1:  # the measured tier, cut: its largest slice (the hash cuts about evenly)
        largest = min(largest, int(largest / slices * SLICE_SLACK) + 1)
    # the children of the largest tier (still to solve): read from the run's discovery once
    # every tier is found, else as measured for the preset (``largest_tier_children``)
    kids = (int(held.get("largest_left_children", 0)) if left else int(entry.largest_tier_children or 0))
    if stochastic(game):  # value iteration holds the tier's graph: no passes mode
        from solver.pipeline.tiered_chance import BYTES_PER_TIER_POSITION as per

        need = per * largest
    elif low_memory:
        need = PASSES_BYTES_PER_TIER_POSITION * largest + CHILD_BYTES_PER_POSITION * kids
    else:
        need = lists_memory(largest, kids, bool(game.scored))
    found = int(held["positions_discovered"]) if held else 0
    solved = int(held["positions_solved"]) if held else 0
    disk = (DISCOVERY_BYTES_PER_POSITION * max(0, positions - found)
            + TIER_FILE_BYTES_PER_POSITION * max(0, positions - solved))
    return {"positions": int(positions), "largest_tier": int(largest),
            "memory": int(BASE_BYTES + need), "disk": int(disk), "at_least": at_least,
            "largest_left": left}


def planned_estimate(game: Game, mem: int | None, low_memory: bool | None = None,
                     held: dict[str, Any] | None = None, slices: int = 1) -> dict[str, Any] | None:
    """:func:`estimate` in the mode the solve will use: unless told (``low_memory``), a largest
    tier too big for its move lists in ``mem`` bytes is planned by passes (``passes_planned``)."""
    passes = passes_by_default(game) if low_memory is None else bool(low_memory)
    est = estimate(game, low_memory=passes, held=held, slices=slices)
    if (est is not None and low_memory is None and not passes and mem is not None and est["memory"] > mem
            and not stochastic(game)):
        est = {**estimate(game, low_memory=True, held=held, slices=slices), "passes_planned": True}
    return est


def check_estimate(game: Game, root: Path, notes: list[str], low_memory: bool | None = None,
                   held: dict[str, Any] | None = None, slices: int = 1) -> None:
    """Say what a tiered solve will take (a note), and refuse at once, in one line, when the
    estimate does not fit this machine's free memory or the disk under ``root``. Unless told
    (``low_memory``), a largest tier too big for its move lists is planned in the low-memory mode.
    ``held``: the progress of the unfinished run that will be resumed (its files count as written)."""
    entry = measured.of_game(game)
    if entry is not None and entry.not_here:
        raise TooBigError(f"{game.variant.label()} is not expected to finish here: {entry.not_here}; "
                          "--ignore-estimate tries anyway (resumable)")
    mem = memory.available_memory()
    est = planned_estimate(game, mem, low_memory, held, slices)
    if est is not None and est.get("passes_planned"):
        notes.append("the largest tiers do not fit with lists of their moves: they are solved in the "
                     "low-memory mode (passes; slower)")
    if est is None:
        notes.append(f"no size estimate is known for {game.variant.label()}; the tiered solve finds "
                     "its tiers as it goes (resumable: a killed run continues where it stopped)")
        return
    gb = 2**30
    least = "at least " if est.get("at_least") else ""
    disk = f"disk {least}{est['disk'] / gb:.1f} GB" + (" more than the unfinished run holds" if held else "")
    largest = "largest tier still to solve" if est.get("largest_left") else "largest tier"
    notes.append(f"estimate for {game.variant.label()}: {least}{est['positions']:,} positions ({largest} "
                 f"{least}{est['largest_tier']:,}), peak memory {least}{est['memory'] / gb:.1f} GB, {disk}")
    if mem is not None and est["memory"] > mem:
        raise TooBigError(f"{game.variant.label()} needs {least or 'about '}{est['memory'] / gb:.1f} GB of memory "
                          f"to solve its {largest} ({least}{est['largest_tier']:,} positions); "
                          f"{mem / gb:.1f} GB is free here; --ignore-estimate tries anyway")
    root.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(root).free
    if est["disk"] > free:
        raise TooBigError(f"{game.variant.label()} needs about {est['disk'] / gb:.1f} GB of disk under "
                          f"{root}; {free / gb:.1f} GB is free; pick another --out or --ignore-estimate")


def check_union(game: Game, root: Path) -> None:
    """A random setup solved as the union of every setup: refuse at once, in one line with the
    measured size and the commands that would run it, when its discovery and tier files would
    not fit the free disk under ``root`` (``measured.toml``'s ``[unions]``; nothing is known of
    other variants, whose union finds its size as it goes)."""
    entry = measured.union_of(game) if tiered_setups.is_setup_root(game) else None
    if entry is None or entry.positions is None:
        return
    root.mkdir(parents=True, exist_ok=True)
    need, free = DISK_BYTES_PER_POSITION * entry.positions, shutil.disk_usage(root).free
    if need <= free:
        return
    sets = " ".join(f"--set {k}={v}" for k, v in game.variant.as_text().items())
    # its largest tiers cut to about the 385-class union's largest (81M positions, 12 GB here)
    cut = 1 << max(0, math.ceil(math.log2(entry.positions * 0.05 / 81e6))) if game.tiers_rise_strictly else 1
    slices = f" --tier-slices {cut}" if cut > 1 else ""
    raise TooBigError(
        f"the union of every setup of {game.variant.label()} is about {entry.positions:.1e} positions "
        f"(measured: see measured.toml), about {need / 2**40:.1f} TB of disk while it runs and {free / 2**30:.0f} "
        f"GB is free under {root}: run it on a Dask cluster whose workers share --out (`pyramids solve "
        f"{game.name} {sets} --tiered{slices} --scheduler tcp://HOST:8786`), or solve the setups a slice at a time "
        f"(`--tiered --setup-limit N`, a sweep); --ignore-estimate tries anyway")


# --- the whole run ---------------------------------------------------------------------------

def solve_tiered(game: Game, *, out: str | Path | None = None, symmetry: bool = True, force: bool = False,
                 max_positions: int | None = None, workers: int | None = None, progress: bool | str = False,
                 notes: list[str] | None = None, check: bool = True, announce: Callable[[str], None] | None = None,
                 low_memory: bool | None = None, cluster: Any = None, tol: float = 1e-12,
                 max_sweeps: int | None = None, folder: Path | None = None,
                 setup_keys: np.ndarray | None = None, tier_slices: int = 1) -> Path:
    """Solve ``game`` tier by tier into ``<out>/<game>/<variant-id>/`` (see the module docstring)
    and return that folder. Resumes an unfinished run of the same variant unless ``force``.
    ``low_memory``: solve every tier by passes (:func:`solve_tier_passes`; ``True``), none
    (``False``), or the tiers whose reverse lists would not fit the free memory (``None``).
    Games with dice (:func:`stochastic`): every tier by value iteration
    (:mod:`solver.pipeline.tiered_chance`) at tolerance ``tol`` with at most ``max_sweeps``
    sweeps per cyclic component. ``progress``: ``True`` tqdm bars, ``"lines"`` a line every
    :data:`LOG_EVERY` seconds on standard error (:class:`_TierProgress`), ``False`` nothing.
    ``folder``: the table's folder instead of the variant's; ``setup_keys``: a random setup's
    start keys to solve together (default: every setup; a sweep's batch,
    :func:`solver.pipeline.tasks.sweep_setups` with ``union=True``). ``tier_slices``: cut each
    of the game's tiers into this many slices solved apart (:func:`tierwork.tiers_of`; a game
    whose every move leaves its tier), each a ``tier_slices``-th of the tier's memory."""
    if not supports_tiers(game):
        raise TooBigError(f"{game.name} names no tiers (no tier_of hook); solve it without --tiered")
    slices = tierwork.check_slices(game, tier_slices)
    notes = notes if notes is not None else []
    folder = (Path(folder) if folder is not None
              else variant_dir(game.name, game.variant.variant_id(), root=out, symmetry=symmetry))
    if check:  # before any work: the estimate is said at once (``announce``), and may refuse
        said: list[str] = []
        if setup_keys is None:
            check_union(game, folder.parent)
        check_estimate(game, folder.parent, said, low_memory,
                       held=None if force else _resumable(game, folder, symmetry, tol, setup_keys, slices),
                       slices=slices)
        for line in said:
            (announce or notes.append)(line)
    plan = memory_plan(game, low_memory)  # (after the estimate: a solve says its size first)
    if plan is not None:
        (announce or notes.append)(plan)
    folder.parent.mkdir(parents=True, exist_ok=True)
    clean_stale(folder)
    run = _start_or_resume(game, folder, symmetry, force, notes, tol=tol, setup_keys=setup_keys, slices=slices)
    run.tol, run.max_sweeps = float(tol), max_sweeps
    workers = min(2, os.cpu_count() or 1) if workers is None else max(1, int(workers))
    bar = _TierProgress(progress) if progress else None
    t0 = time.perf_counter()
    run.workers = workers
    run.low_memory = low_memory
    run.progress = progress
    run.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="expand") if workers > 1 else None
    memory.fix_mmap_threshold(memory.TIER_MMAP_THRESHOLD)  # freed arrays above it go back to the system
    try:
        with session(progress, every=LOG_EVERY):  # one clock for both phases
            infos = discover(run, max_positions=max_positions, progress=bar)
            t_disc = time.perf_counter() - t0
            stats = solve_tiers(run, infos, workers=workers, progress=bar, cluster=cluster)
            if tiered_setups.is_setup_root(game):
                _solve_setup_tier(run, infos, stats)
            if bar is not None:
                bar.close()
    except BaseException:  # interrupted: do not wait for the expansions still running
        if run.pool is not None:
            run.pool.shutdown(wait=False, cancel_futures=True)
            run.pool = None
        raise
    finally:
        if run.pool is not None:
            run.pool.shutdown(wait=True, cancel_futures=True)
            run.pool = None
        if bar is not None:
            bar.close()
    t_solve = time.perf_counter() - t0 - t_disc
    return _finish(run, infos, stats, t_disc, t_solve)


def _solve_setup_tier(run: Run, infos: dict[int, TierInfo], stats: dict[int, dict[str, Any]]) -> None:
    """A random setup's start, once every tier of its setups is solved: the setup tier (one
    chance row) and the setups table, read from the setups' tier files (:mod:`.tiered_setups`).
    Adds the tier to ``infos`` and ``stats`` (a chance row: no value to count)."""
    t0 = time.perf_counter()
    game = run.game
    root = tiered_setups.setup_root(game, run.symmetry, run.setup_keys)
    rt = int(tierwork.tiers_of(game, np.array([root.key], dtype=np.uint64), run.slices)[0])
    if rt in infos:
        raise RuntimeError(f"{game.name}.tier_of: the setup tier {rt} also holds positions after the setup")
    files = {t: run.tiers_dir / tierwork.tier_file(t) for t in infos}
    files[rt] = run.tiers_dir / tierwork.tier_file(rt)
    meta = {**run.identity(), "tier": rt, "tier_name": tierwork.tier_name(game, rt, run.slices),
            "toolkit_version": solver.__version__}
    done = tiered_setups.solve_root_tier(game, root, rt, files, run.work, meta, run.slices)
    infos[rt] = TierInfo(rt, 1, done["children"], height=1 + max(infos[c].height for c in done["children"]),
                         terminal=0)
    stats[rt] = {"tier": rt, "positions": 1, "moves": done["setups"], "inside_moves": 0,
                 "seconds": time.perf_counter() - t0, "terminal": 0, "by_value": [0, 0, 0, 0],
                 "setup": done, "player": root.player}


def _finish(run: Run, infos: dict[int, TierInfo], stats: dict[int, dict[str, Any]], t_disc: float,
            t_solve: float) -> Path:
    game = run.game
    start = game.initial_state()
    root_key = int(game.encode(game.canonical(start) if run.symmetry else start))
    root_tier = int(tierwork.tiers_of(game, np.array([root_key], dtype=np.uint64), run.slices)[0])
    by_value = {name: 0 for name in VALUE_NAMES}
    terminal = moves = chance = 0
    tiers = []
    tier_metas = []
    for t in sorted(infos):
        path = run.tiers_dir / tierwork.tier_file(t)
        meta_t = read_meta(path)
        if meta_t.get("run_id") != run.run_id:
            raise TableError(f"{path} belongs to another run", fix="solve again with --force")
        tier_metas.append(meta_t)
        st = stats.get(t, {})
        counts = st.get("by_value")
        if run.stochastic:  # expected results: no counts by value; the tier file says the rest
            terminal += int(meta_t.get("terminal", 0))
            chance += int(meta_t.get("chance", 0))
            counts = None
        elif counts is None or "terminal" not in st:  # resumed tier: count from its file
            df = pl.read_parquet(path, columns=["value", "kind"])
            counts = np.bincount(df["value"].to_numpy().astype(np.int64), minlength=4).tolist()
            st = {**st, "terminal": int((df["kind"].to_numpy() == NodeKind.TERMINAL).sum())}
        if counts is not None:
            for i, name in enumerate(VALUE_NAMES):
                by_value[name] += int(counts[i])
            terminal += int(st["terminal"])
        moves += int(meta_t.get("moves", 0))
        tiers.append({"tier": int(t), "name": tierwork.tier_name(game, t, run.slices), "file": f"{TIER_DIR}/{tierwork.tier_file(t)}",
                      "positions": infos[t].positions, "children": infos[t].children,
                      "height": infos[t].height, "moves": int(meta_t.get("moves", 0)),
                      "inside_moves": int(meta_t.get("inside_moves", 0)),
                      "seconds": round(float(st.get("seconds", 0.0)), 3)})
    root_file = run.tiers_dir / tierwork.tier_file(root_tier)
    root_df = read_columns(root_file, ["key"])
    root_row = int(np.searchsorted(root_df["key"].to_numpy(), np.uint64(root_key)))
    positions = sum(i.positions for i in infos.values())
    meta = {
        "game": game.name, "variant": game.variant.as_text(), "variant_id": game.variant.variant_id(),
        "label": game.variant.label(), "rules_version": game.rules_version,
        "toolkit_version": solver.__version__, "symmetry": run.symmetry,
        "counts": {"positions": positions, "edges": moves, "terminal": terminal, "chance": chance,
                   **({} if run.stochastic else {"by_value": by_value})},
        "root_key": root_key, "root_tier": root_tier, "root_row_in_tier": root_row,
        "solve_seconds": t_disc + t_solve, "timings": {"discover": t_disc, "solve": t_solve},
        "scored": bool(game.scored), "players": game.num_players,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "solver": "retrograde (tiered)", "solution": "deterministic", "layout": "tiered",
        "solve_id": run.run_id, "files": [t_["file"] for t_ in tiers], "tiers": tiers,
        "tier_slices": run.slices,
    }
    if run.stochastic:
        from solver.pipeline.tiered_chance import finish_meta

        meta.update(finish_meta(tier_metas))
    setup = stats.get(root_tier, {}).get("setup")
    if setup is not None:  # a random setup: the start is a chance node over the setups
        meta["counts"]["chance"] = 1
        meta.update({"solver": "retrograde+setups", "setups_file": tiered_setups.SETUPS_FILE,
                     "setup_player": int(stats[root_tier]["player"]),
                     "expected_result": setup["expected"]})
        if "expected_margin" in setup:
            meta["expected_margin"] = setup["expected_margin"]
    workfiles.atomic_json(run.work / MANIFEST, meta)
    fault_point("rename")
    # the rename is the commit point: killed before it, the run resumes (everything is found
    # finished); after it, the leftovers of the work folder are tidied by the next load
    folder = run.folder
    if folder.exists():
        old = folder.with_name(f".{folder.name}.old-{os.getpid()}-{uuid.uuid4().hex[:8]}")
        os.rename(folder, old)
        os.rename(run.work, folder)
        for keep in KEPT_BESIDE:  # e.g. a sweep of the same random setup: not this table's files
            if (old / keep).exists() and not (folder / keep).exists():
                os.rename(old / keep, folder / keep)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.rename(run.work, folder)
    tidy(folder)
    return folder


#: what a finished tiered table keeps of the variant folder it replaces: the folder of a setup
#: sweep of the same variant (:data:`solver.pipeline.tasks.SWEEP_DIR`), a table of its own
KEPT_BESIDE = ("sweep",)


def tidy(folder: Path) -> None:
    """Remove what a finished run no longer needs (discovery files, the run marker)."""
    shutil.rmtree(Path(folder) / "discover", ignore_errors=True)
    (Path(folder) / "run.json").unlink(missing_ok=True)


# --- reading -----------------------------------------------------------------------------------

def is_tiered(folder: Path) -> bool:
    return (Path(folder) / MANIFEST).exists()


def read_manifest(folder: Path, *, game: str, variant: dict[str, str], rules_version: str) -> dict[str, Any]:
    """The metadata of a tiered table, checked: the variant and rules version, and every tier
    file present and of this solve. One-line :class:`TableError` naming the bad tier otherwise."""
    folder = Path(folder)
    meta = workfiles.read_json(folder / MANIFEST)
    if meta is not None and (folder / "run.json").exists():
        tidy(folder)  # a run killed right after its final rename
    if meta is None:
        raise TableError(f"{folder / MANIFEST} is missing or corrupt", fix="solve again with --force")
    if meta.get("game") != game or meta.get("variant") != variant:
        raise TableError(f"{folder} holds {meta.get('label', '?')}, not the requested variant; "
                         "use another --out folder or solve with --force")
    if meta.get("rules_version") != rules_version:
        raise TableError(f"{folder} was solved with rules version {meta.get('rules_version')} but the "
                         f"current rules are version {rules_version}", fix="solve again with --force")
    if meta.get("setups_file") and not (folder / meta["setups_file"]).exists():
        raise TableError(f"{folder} is incomplete: its setups table {meta['setups_file']} is missing",
                         fix="solve again with --force")
    for t in meta.get("tiers", []):
        path = folder / t["file"]
        if not path.exists():
            raise TableError(f"{folder} is incomplete: tier {t['tier']} ({t['name']}) is missing "
                             f"({t['file']})", fix="solve again with --force")
        fmeta = read_meta(path)
        if fmeta.get("run_id") != meta.get("solve_id") or fmeta.get("rules_version") != rules_version:
            raise TableError(f"{path}: tier {t['tier']} ({t['name']}) belongs to another solve or rules "
                             "version", fix="solve again with --force")
    return meta


def unfinished(folder: Path) -> str | None:
    """When a tiered solve of this variant was started and not finished: what is missing."""
    work = work_dir(Path(folder))
    state = workfiles.read_json(work / "run.json")
    if state is None:
        return None
    found, solved = _work_counts(work)
    return (f"its tiered solve in {work} is unfinished ({found} tiers discovered, {solved} solved); "
            "run the same `pyramids solve` command again to resume")


def tier_progress(folder: Path) -> dict[str, Any] | None:
    """How far an unfinished tiered solve has got (``None``: none in ``folder``): tiers and
    positions discovered and solved, the positions of the largest discovered tier not yet solved
    (``largest_left``) and the positions of the other tiers it reads (``largest_left_children``),
    and the time left at the rate of the tiers solved so far (``None`` until
    two tiers are solved)."""
    work = work_dir(Path(folder))
    if workfiles.read_json(work / "run.json") is None:
        return None
    found = [workfiles.read_json(p) or {} for p in work.glob("discover/tier-*.json")]
    sizes = {int(f["tier"]): int(f["positions"]) for f in found if "tier" in f}
    files = sorted(work.glob(f"{TIER_DIR}/tier-*.parquet"), key=lambda p: p.stat().st_mtime)
    done = {p.name for p in files}
    left_tiers = [t for t in sizes if tierwork.tier_file(t) not in done]
    biggest = max(left_tiers, key=lambda t: sizes[t], default=None)
    largest_left = sizes[biggest] if biggest is not None else 0
    kids = {int(f["tier"]): f.get("children", []) for f in found if "tier" in f}
    largest_left_children = reached_positions(biggest, kids.get(biggest, []), sizes) if biggest is not None else 0
    solved = 0
    span = 0.0  # the wall time the solved tiers took: the gaps between their files, but never
    last = None  # more than the tier's own time (a gap over it is a pause: the run was stopped)
    for f in files:
        try:
            meta = read_meta(f)
        except TableError:
            continue
        solved += int(meta.get("positions", 0))
        at = f.stat().st_mtime
        own = meta.get("seconds")
        gap = None if last is None else at - last
        span += (min(gap, float(own)) if gap is not None and own is not None
                 else gap if gap is not None else float(own or 0.0))
        last = at
    discovered = sum(sizes.values())
    left = None
    if len(files) >= 2 and solved and span > 0:
        left = (discovered - solved) / (solved / span)
    return {"folder": str(work), "tiers_discovered": len(sizes), "positions_discovered": discovered,
            "tiers_solved": len(files), "positions_solved": solved, "seconds_left": left,
            "largest_left": largest_left, "largest_left_children": largest_left_children}


def read_tier(folder: Path, entry: dict[str, Any]) -> pl.DataFrame:
    df, _ = read_parquet(Path(folder) / entry["file"])
    return df


def verify_tiered(game: Game, folder: Path, *, progress: Progress | None = None) -> list[str]:
    """Prove a finished tiered table tier by tier: each tier's positions are expanded from the
    rules and their stored values, remoteness and margins checked against their children's
    (:mod:`solver.engines.verify`), with the children of other tiers read from their tier
    files. Returns the problems found (empty: the table is the solution)."""
    from solver.engines.enumerate import Graph
    from solver.engines.verify import check_expected, check_margins, check_values

    folder = Path(folder)
    meta = read_manifest(folder, game=game.name, variant=game.variant.as_text(),
                         rules_version=game.rules_version)
    sym = bool(meta.get("symmetry", True))
    slices = int(meta.get("tier_slices", 1))
    files = {int(t["tier"]): folder / t["file"] for t in meta["tiers"]}
    scored = bool(game.scored)
    chance = meta.get("solution") == "stochastic"
    cols = (["key", "player", "kind", "value", "p_win", "p_loss"] if chance else
            ["key", "player", "kind", "value", "remoteness"] + (["margin"] if scored else []))
    problems: list[str] = []
    setup_tier = meta.get("root_tier") if meta.get("setups_file") else None
    # the start, from the rules, is the table's (where its answer is read)
    start = game.initial_state()
    start_key = int(game.encode(game.canonical(start) if sym else start))
    root_tier = int(meta.get("root_tier", -1))
    if start_key != int(meta.get("root_key", -1)) or root_tier not in files:
        problems.append(f"the table's start is not the rules' (key {start_key}, tier "
                        f"{int(tierwork.tiers_of(game, np.array([start_key], np.uint64), slices)[0])})")
    else:
        keys = read_columns(files[root_tier], ["key"])["key"].to_numpy()
        row = int(meta.get("root_row_in_tier", -1))
        if not (0 <= row < len(keys) and int(keys[row]) == start_key):
            problems.append(f"the start is not at the row the table names in tier {root_tier}")
    for entry in meta["tiers"]:
        t = int(entry["tier"])
        if t == setup_tier:  # a random setup's start: checked against its setups' rows
            problems += tiered_setups.verify_root(game, folder, meta, files)
            continue
        df = read_columns(files[t], cols)
        keys = df["key"].to_numpy()
        n = len(keys)
        exp = game.expand(keys, canonical=sym)
        kids = exp.children
        ct = tierwork.tiers_of(game, kids, slices) if len(kids) else np.empty(0, np.int64)
        child_row = np.full(len(kids), -1, np.int64)
        inside = ct == t
        child_row[inside] = lookup_sorted(keys, kids[inside])
        extra = [df]
        base = n
        for u in unique(ct[~inside]).tolist():
            sel = ct == u
            other = read_columns(files[int(u)], cols)
            okeys = other["key"].to_numpy()
            need = unique(kids[sel])
            idx = lookup_sorted(okeys, need)
            idx = np.minimum(idx, len(okeys) - 1)
            if not np.array_equal(okeys[idx], need):
                problems.append(f"tier {t}: a child in tier {u} is missing from its file")
                continue
            extra.append(other[idx])
            child_row[sel] = base + lookup_sorted(need, kids[sel])
            base += len(need)
        if (child_row < 0).any() or (inside.any() and not np.array_equal(keys[np.minimum(child_row[inside], n - 1)], kids[inside])):
            problems.append(f"tier {t}: a move leads to a position the table does not hold")
            continue
        allrows = pl.concat(extra)
        for name, want in (("player", exp.to_move), ("kind", exp.kind)):  # as the rules say
            got = df[name].fill_null(255).to_numpy().astype(np.int64)
            if not np.array_equal(got, np.asarray(want, dtype=np.int64)):
                problems.append(f"tier {t} ({entry['name']}): {int((got != want).sum()):,} positions store the wrong "
                                f"{'side to move' if name == 'player' else 'node kind'}")
        kind = allrows["kind"].to_numpy().astype(np.int8)
        kind[:n] = exp.kind
        graph = Graph(keys=allrows["key"].to_numpy(), kind=kind,
                      to_move=allrows["player"].to_numpy().astype(np.int8), ply=np.zeros(len(kind), np.uint16),
                      offsets=np.concatenate([exp.offsets, np.full(len(kind) - n, exp.offsets[-1])]),
                      child=child_row, probs=exp.probs,
                      result=np.concatenate([exp.result, np.zeros(len(kind) - n, np.int8)]),
                      margin=np.concatenate([exp.margin, np.zeros(len(kind) - n, np.int32)]),
                      root=0, symmetry=sym)
        if chance:
            found = check_expected(graph, allrows, n)
            problems += [f"tier {t} ({entry['name']}): {p}" for p in found]
            if progress is not None:
                progress("verify", entry["name"], n, None)
            continue
        raw = allrows["value"].fill_null(-1).to_numpy().astype(np.int64)
        if ((raw < 0) | (raw > 3)).any():
            problems.append(f"tier {t} ({entry['name']}): positions (or their children) hold no value code")
            continue
        value = raw.astype(np.int8)
        rem = allrows["remoteness"].fill_null(int(NO_REMOTENESS)).to_numpy().astype(np.int64)
        found = check_values(graph, value, rem, checked=n)
        if scored:
            found += check_margins(graph, allrows["margin"].to_numpy(), checked=n)
        problems += [f"tier {t} ({entry['name']}): {p}" for p in found]
        if progress is not None:
            progress("verify", entry["name"], n, None)
    return problems


#: seconds between two progress lines of a tiered solve whose standard error is not a terminal;
#: ``None``: the interval of every command (:func:`solver.core.progress.line_seconds`, 10 s)
LOG_EVERY: float | None = None


class _TierProgress:
    """The tiered solve's ``progress(phase, name, done, total)`` calls as one
    :class:`~solver.core.progress.Task` per phase: tqdm bars on a terminal (``mode`` ``True``),
    else (``"lines"``, e.g. a solve under ``nohup``) a line at most every :data:`LOG_EVERY`
    seconds with the time since the start, the phase, the positions found, solved or verified
    and the tier at work, e.g. ``[0:00:40] solving tiers: 1,200 of 3,724 positions (32.2%)
    (2 stacks)``. Nothing in the first interval, so a short solve (or one refused at once)
    prints no more than before."""

    _LABELS = {"discover": ("discovering tiers", "positions found"), "solve": ("solving tiers", "positions"),
               "verify": ("verifying tiers", "positions checked")}

    def __init__(self, mode: bool | str) -> None:
        self.mode = mode
        self.task: Task | None = None
        self.phase: str | None = None
        self.verified = 0

    def __call__(self, phase: str, name: str, done: int, total: int | None) -> None:
        if phase != self.phase:
            self.close()
            self.phase = phase
            label, unit = self._LABELS.get(phase, (f"{phase} tiers", "positions"))
            self.task = Task(label, self.mode, total=total, unit=unit, percent=True, unit_scale=True,
                             every=LOG_EVERY, eta=True)
        if phase == "verify":  # called with each tier's own count
            self.verified += done
            done = self.verified
        assert self.task is not None
        if phase == "discover" and total is None and self.task.total is not None:
            self.task.drop_total()  # found more than the measured count (a stale entry)
        self.task.update(done, total=total, note=name)

    def close(self) -> None:
        if self.task is not None:
            self.task.close()
            self.task = None
