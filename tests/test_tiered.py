"""The tiered solver (solver.pipeline.tiered) gives the whole-graph retrograde's table.

1. Random games given as explicit graphs (cycles inside tiers, moves into later tiers that skip
   tiers, terminal wins/losses/ties with score margins, moves where the mover moves again): the
   tiered table equals the whole-graph table column by column (hypothesis).
2. The real games' tier hooks, on small variants (3x3 presets in the slow part).
3. Resuming after a kill, refusing incomplete or stale tiered tables.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from solver.core.game import Game, NodeKind
from solver.core.variant import Param
from solver.pipeline import measured, memory, tiered, tierwork, workfiles
from solver.errors import TableError
from solver.tables import read_columns
from tests.clirun import subprocess_run
from tests.budget import examples


class GraphGame(Game[int]):
    """A two-player game given as an explicit graph: state = node number = key."""

    name = "graphgame"
    params = (Param("seed", "int", 0, "which graph"),)
    scored = True
    GRAPH: dict = {}

    def __init__(self, variant):
        super().__init__(variant)
        g = self.GRAPH
        self.children, self.tiers, self.players = g["children"], g["tiers"], g["players"]
        self.results, self.margins = g["results"], g["margins"]

    def initial_state(self):
        return 0

    def node_kind(self, s):
        return NodeKind.TERMINAL if self.results[s] is not None else NodeKind.DECISION

    def to_move(self, s):
        return self.players[s]

    def legal_actions(self, s):
        return list(range(len(self.children[s])))

    def apply(self, s, a):
        return self.children[s][a]

    def outcome(self, s):
        from solver.core.game import Outcome, Result

        r, m, p = self.results[s], self.margins[s], self.players[s]
        res = [Result(r) if q == p else Result(-r) for q in range(2)]
        scores = (m, 0) if p == 0 else (0, m)
        return Outcome(tuple(res), scores)

    def encode(self, s):
        return int(s)

    def decode(self, k):
        return int(k)

    def render(self, s):
        return str(s)

    def tier_of(self, keys):
        return np.asarray(self.tiers, dtype=np.int64)[np.asarray(keys, dtype=np.int64)]


@st.composite
def graphs(draw):
    n = draw(st.integers(2, 40))
    tiers = sorted(draw(st.lists(st.integers(0, 5), min_size=n, max_size=n)))
    tiers[0] = min(tiers)
    players = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    children, results, margins = [], [], []
    for i in range(n):
        later = [j for j in range(n) if tiers[j] >= tiers[i] and j != i]
        terminal = not later or draw(st.booleans()) and draw(st.booleans())
        if terminal:
            children.append([])
            r = draw(st.sampled_from([-1, 0, 1]))
            results.append(r)
            m = draw(st.integers(1, 4)) * r if r else 0
            margins.append(m)
        else:
            kids = draw(st.lists(st.sampled_from(later), min_size=1, max_size=4))
            children.append(kids)
            results.append(None)
            margins.append(0)
    return {"children": children, "tiers": tiers, "players": players, "results": results,
            "margins": margins}


#: the low-memory mode's three ways to find children at each level: the children kept from the
#: first expansion (``True``: memory allows), a new expansion (``"expand"``: none kept), or kept
#: for the first chunks only (``"part"``: chunks of 3 positions, 24 bytes of children kept)
LOW_MEMORY = [False, True, "expand", "part"]
LOW_MEMORY_IDS = ["reverse-lists", "passes", "passes-expand", "passes-part"]
#: the random graphs skip "expand" ("part" covers both ways there: chunks of 3 positions)
GRAPH_MODES = [False, True, "part"]
GRAPH_MODE_IDS = ["reverse-lists", "passes", "passes-part"]


def _low_memory(low_memory, monkeypatch) -> bool:
    """Set up the mode ``low_memory`` (one of :data:`LOW_MEMORY`); returns the solver's flag."""
    if low_memory == "expand":
        monkeypatch.setattr(tiered, "_keep_more_children", lambda n, tiers, held, more: False)
    elif low_memory == "part":
        monkeypatch.setattr(tierwork, "CHUNK", 3)
        monkeypatch.setattr(tiered, "_keep_more_children", lambda n, tiers, held, more: held + more <= 24)
    return bool(low_memory)


def _solve_both(graph: dict, tmp_path: Path, workers: int = 1, low_memory: bool = False):
    from solver.api import solve

    GraphGame.GRAPH = graph
    game = GraphGame.from_params({})
    whole = solve(game, out=tmp_path / "whole", force=True, tiered=False, write_edges=False)
    tiered.solve_tiered(game, out=tmp_path / "tiered", force=True, workers=workers, low_memory=low_memory)
    from solver.api import load

    tsol = load(game, out=tmp_path / "tiered")
    return game, whole, tsol


def _same_tables(whole: pl.DataFrame, tier_table: pl.DataFrame) -> None:
    cols = [c for c in ("key", "player", "kind", "ply", "num_moves", "value", "remoteness", "margin")
            if c in whole.columns]
    assert tier_table.columns[: len(cols)] == cols
    a = whole.select(cols)
    b = tier_table.select(cols)
    assert a.height == b.height
    for c in cols:
        assert a[c].to_list() == b[c].to_list(), c


@pytest.mark.parametrize("low_memory", GRAPH_MODES, ids=GRAPH_MODE_IDS)
@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(graph=graphs())
def test_random_graphs_same_as_whole_graph(graph, low_memory, tmp_path_factory, monkeypatch):
    tmp = tmp_path_factory.mktemp("g")
    game, whole, tsol = _solve_both(graph, tmp, low_memory=_low_memory(low_memory, monkeypatch))
    _same_tables(whole.positions, tsol.positions)
    start = game.initial_state()
    assert tsol.root == whole.root
    assert tsol.moves(start) == whole.moves(start)


@st.composite
def tier_inputs(draw):
    """A tier as the margin kernels see it: rows with a side to move (0/1), terminal rows with a
    margin, others with moves inside the tier (cycles, repeats and moves to themselves allowed)
    and moves out of it folded to the child's margin from the row's mover."""
    n = draw(st.integers(1, 14))
    to_move = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)), np.int8)
    terminal = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), np.bool_)
    tm = np.array([draw(st.integers(-4, 4)) if terminal[i] else 0 for i in range(n)], np.int64)
    inside = [[] if terminal[i] else draw(st.lists(st.integers(0, n - 1), max_size=4)) for i in range(n)]
    outside = [[] if terminal[i] else draw(st.lists(st.integers(-4, 4), max_size=3)) for i in range(n)]
    outdeg = np.array([len(a) + len(b) for a, b in zip(inside, outside)], np.int32)
    parents = [[] for _ in range(n)]
    for p, kids in enumerate(inside):
        for c in kids:
            parents[c].append(p if to_move[p] == to_move[c] else ~p)
    roff = np.concatenate([[0], np.cumsum([len(x) for x in parents])]).astype(np.int64)
    rparent = np.array([q for x in parents for q in x], np.int32)
    eoff = np.concatenate([[0], np.cumsum([len(x) for x in outside])]).astype(np.int64)
    em = np.array([m for x in outside for m in x], np.int32)
    return outdeg, roff, rparent, eoff, em, terminal, tm, to_move


@settings(max_examples=examples(300), deadline=None)
@given(tier=tier_inputs())
def test_margin_sweep_equals_one_threshold_pass_per_candidate(tier):
    """The one-sweep margins of a tier (two sides) are those of a pass per candidate margin."""
    from solver.engines import _retro_jit

    outdeg, roff, rparent, eoff, em, terminal, tm, to_move = tier
    sweep = _retro_jit.tier_margins(outdeg, roff, rparent, eoff, em, terminal, tm, to_move)
    passes = tiered.threshold_margins(outdeg, roff, rparent, eoff, em, terminal, tm)
    assert sweep.tolist() == passes.tolist()

def test_parallel_workers_same_table(tmp_path):
    rng = np.random.default_rng(5)
    n = 300
    tiers = np.sort(rng.integers(0, 12, n)).tolist()
    tiers[0] = 0
    children, results, margins = [], [], []
    for i in range(n):
        later = [j for j in range(n) if tiers[j] >= tiers[i] and j != i]
        if not later or rng.random() < 0.15:
            r = int(rng.integers(-1, 2))
            children.append([]), results.append(r), margins.append(int(r * rng.integers(1, 5)))
        else:
            children.append([int(x) for x in rng.choice(later, size=min(3, len(later)))])
            results.append(None), margins.append(0)
    graph = {"children": children, "tiers": tiers, "players": rng.integers(0, 2, n).tolist(),
             "results": results, "margins": margins}
    game, whole, tsol = _solve_both(graph, tmp_path, workers=2)
    _same_tables(whole.positions, tsol.positions)


class UnscoredGraphGame(GraphGame):
    """:class:`GraphGame` without score margins (the low-memory mode makes no margin passes)."""

    name = "graphgame-unscored"
    scored = False


def test_passes_keep_children_only_in_tiers_that_can_need_a_level(tmp_path, monkeypatch):
    from solver.api import load, solve
    from solver.tables import read_meta

    # tier 1: a loop with no terminal position and no child tier: every position a draw, no level
    # tier 2: a loop whose child tier 3 is decided (6 is terminal): levels needed
    # tier 0: a loop reaching tiers 1 and 2 (all draws: 5 does not move into the loss) and 3
    # (decided): levels needed
    graph = {"children": [[1, 2], [0, 4, 6], [3], [2], [5], [4, 6], []], "tiers": [0, 0, 1, 1, 2, 2, 3],
             "players": [0, 1, 0, 1, 0, 1, 0], "results": [None] * 6 + [1], "margins": [0] * 7}
    UnscoredGraphGame.GRAPH = graph
    game = UnscoredGraphGame.from_params({})
    monkeypatch.setattr(tiered, "_keep_more_children", lambda n, tiers, held, more: True)
    folder = tiered.solve_tiered(game, out=tmp_path / "tiered", force=True, low_memory=True)
    manifest = json.loads((folder / tiered.MANIFEST).read_text())
    kept = {t["tier"]: read_meta(folder / t["file"])["kept_children_bytes"] for t in manifest["tiers"]}
    # 4 bytes per move: tier 0 has 5 moves, tier 1 none kept (its 2 moves), tier 2 has 3, tier 3 none
    assert kept == {0: 20, 1: 0, 2: 12, 3: 0}
    whole = solve(game, out=tmp_path / "whole", force=True, tiered=False, write_edges=False)
    _same_tables(whole.positions, load(game, out=tmp_path / "tiered").positions)
    # by hand: 6 is won by its mover (player 1), so 5 and 1 (player 2) lose at once if they move
    # there: 5 moves to 4 instead, whose only move leads to 5, so the loop 4-5 is a draw, as is
    # the loop 2-3, and so the start
    assert load(game, out=tmp_path / "tiered").root.value == "draw"


def test_not_monotone_hook_is_refused(tmp_path):
    graph = {"children": [[1], [0]], "tiers": [1, 0], "players": [0, 1], "results": [None, None],
             "margins": [0, 0]}
    GraphGame.GRAPH = graph
    game = GraphGame.from_params({})
    with pytest.raises(RuntimeError, match="not monotone"):
        tiered.solve_tiered(game, out=tmp_path, force=True)


def test_incomplete_and_stale_tables_are_refused(tmp_path):
    from solver.api import load

    graph = {"children": [[1, 2], [2, 3], [3], []], "tiers": [0, 1, 2, 3], "players": [0, 1, 0, 1],
             "results": [None, None, None, 1], "margins": [0, 0, 0, 2]}
    GraphGame.GRAPH = graph
    game = GraphGame.from_params({})
    folder = tiered.solve_tiered(game, out=tmp_path, force=True)
    # by hand: 3 is won by its mover (player 2); 2 (player 1, only move to 3) is lost in 1;
    # 1 (player 2) moves to 3 and wins in 1; 0 (player 1) loses: to 1 (won by player 2 in 1)
    # or to 2 (player 1 moves again, lost in 1): the slowest loss is 2 plies
    root = load(game, out=tmp_path).root
    assert (root.value, root.remoteness) == ("lose", 2)
    manifest = json.loads((folder / tiered.MANIFEST).read_text())
    assert [t["tier"] for t in manifest["tiers"]] == [0, 1, 2, 3]
    # a missing tier file is named
    (folder / "tiers" / "tier-2.parquet").rename(folder / "elsewhere")
    with pytest.raises(TableError, match="tier 2 .* is missing"):
        load(game, out=tmp_path)
    (folder / "elsewhere").rename(folder / "tiers" / "tier-2.parquet")
    # another rules version
    manifest["rules_version"] = "0"
    (folder / tiered.MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(TableError, match="rules version"):
        load(game, out=tmp_path)


def _same_as_whole(game, tmp_path: Path, workers: int = 1, low_memory: bool = False) -> None:
    from solver.api import load, solve

    whole = solve(game, out=tmp_path / "whole", force=True, tiered=False, write_edges=False)
    folder = tiered.solve_tiered(game, out=tmp_path / "tiered", force=True, workers=workers,
                                 low_memory=low_memory)
    assert tiered.verify_tiered(game, folder) == []
    tsol = load(game, out=tmp_path / "tiered")
    _same_tables(whole.positions, tsol.positions)
    start = game.initial_state()
    assert tsol.root == whole.root
    assert tsol.moves(start) == whole.moves(start)
    assert tsol.meta["counts"]["positions"] == whole.meta["counts"]["positions"]
    assert tsol.meta["counts"]["by_value"] == whole.meta["counts"]["by_value"]


REAL_SMALL = [
    ("override", {"size": 2, "line": 2, "per_size": 1}),
    ("override", {"size": 2, "line": 2, "per_size": 2}),
    ("override", {"size": 2, "line": 2, "per_size": 1, "no_undo": False}),
    ("blam", {"rows": 3, "cols": 3, "per_size": 1}),
    ("greener", {"rows": 3, "cols": 3, "black": 2, "white": 2, "setup": "random", "seed": 3}),
]


#: every real game in every mode; Blam! 3x3 (its cycles and margins) in the slow suite (64 s in
#: all): the other games cover the four ways in the fast one, and Blam! 3x3's tiers are checked
#: there against the whole graph with threads inside a tier and by the verifier (below)
REAL_CASES = [
    pytest.param(name, params, mode, id=f"{mid}-{name}-" + ",".join(f"{k}={v}" for k, v in params.items()),
                 marks=[pytest.mark.slow] if name == "blam" else [])
    for mode, mid in zip(LOW_MEMORY, LOW_MEMORY_IDS) for name, params in REAL_SMALL]


@pytest.mark.parametrize("name,params,low_memory", REAL_CASES)
def test_real_games_same_as_whole_graph(name, params, low_memory, tmp_path, monkeypatch):
    from solver.api import make_game

    _same_as_whole(make_game(name, **params), tmp_path, low_memory=_low_memory(low_memory, monkeypatch))


@pytest.mark.parametrize("name,params", [REAL_SMALL[1], REAL_SMALL[3], REAL_SMALL[4]],
                         ids=["override-2x2-2", "blam-3x3", "greener-3x3"])
def test_threads_inside_a_tier_same_as_whole_graph(name, params, tmp_path, monkeypatch):
    """Issue 34 (both cores in one tier): with two workers, discovery splits each chunk's children
    in the thread that expands it and the level passes run their chunks in the pool's threads, in
    any order (a level decides a row from children decided at the levels before only). Chunks of 3
    positions, so that every tier has many and the threads interleave; every position equals the
    whole graph's (Blam!'s margins too, whose threshold passes stay in order)."""
    from solver.api import make_game

    monkeypatch.setattr(tierwork, "CHUNK", 3)
    swept: list[str] = []
    pool_map = tiered.waiting.pool_map

    def spy(pool, fn, *items):
        swept.append(fn.__name__)
        return pool_map(pool, fn, *items)

    monkeypatch.setattr(tiered.waiting, "pool_map", spy)
    _same_as_whole(make_game(name, **params), tmp_path, workers=2, low_memory=True)
    assert "one" in swept  # the level passes did run in the pool


@pytest.mark.slow
@pytest.mark.parametrize("name,params", [
    ("override", {"size": 3, "line": 3, "per_size": 1}),
    ("blam", {"rows": 4, "cols": 4, "per_size": 1}),
    ("blam", {"rows": 2, "cols": 3, "per_size": 2}),
], ids=["override-3x3", "blam-4x4", "blam-2x3-2"])
@pytest.mark.parametrize("low_memory", [False, True], ids=["reverse-lists", "passes"])
def test_larger_variants_same_as_whole_graph(name, params, low_memory, tmp_path):
    from solver.api import make_game

    _same_as_whole(make_game(name, **params), tmp_path, workers=2, low_memory=low_memory)


# --- the command line: resume after a kill, refusals --------------------------------------------

SMALL = ["override", "--set", "size=2", "--set", "line=2", "--set", "per_size=2"]  # 149 tiers


_cli = subprocess_run


def _tier_frames(root: Path) -> dict[str, pl.DataFrame]:
    folder = next(p for p in (root / "override").iterdir() if p.is_dir() and not p.name.startswith("."))
    return {f.name: pl.read_parquet(f) for f in sorted((folder / "tiers").glob("*.parquet"))}


@pytest.fixture(scope="module")
def small_reference(tmp_path_factory) -> Path:
    """The tier files of an uninterrupted tiered solve of ``SMALL`` (one for the module)."""
    root = tmp_path_factory.mktemp("ref")
    ref = _cli(["solve", *SMALL, "--tiered", "--out", str(root), "--quiet", "--workers", "1"])
    assert ref.returncode == 0, ref.stderr
    # tier files hold their sorted keys as deltas (issue 34's disk), which sum back increasing
    import pyarrow.parquet as pq

    for f in (next((root / "override").iterdir()) / "tiers").glob("*.parquet"):
        assert pq.read_schema(f).names[0] == "key_delta" and "key" not in pq.read_schema(f).names
        keys = read_columns(f, ["key"])["key"].to_numpy()
        assert (keys[1:] > keys[:-1]).all()
    return root


#: one kill a phase (discovery, solving, the final rename) in the fast suite; two more in the slow one
@pytest.mark.parametrize("point", ["tier-discovered#7", "tier-solved#60", "rename",
                                   pytest.param("tier-solved#1", marks=pytest.mark.slow),
                                   pytest.param("write:tier-3.parquet", marks=pytest.mark.slow)])
def test_killed_tiered_solve_resumes_to_the_same_table(tmp_path, point, small_reference):
    import signal

    root = tmp_path / "killed"
    killed = _cli(["solve", *SMALL, "--tiered", "--out", str(root), "--quiet", "--workers", "1"],
                  {"PYRAMIDS_FAULT": f"KILL@{point}"})
    assert killed.returncode == -signal.SIGKILL
    # an unfinished solve is not a table: loading it says so in one line, and how to resume
    from solver.api import load, make_game

    game = make_game("override", size=2, line=2, per_size=2)
    with pytest.raises(TableError, match="unfinished .* run the same `pyramids solve` command again"):
        load(game, out=root)
    if point == "rename":  # killed at the last step: nothing is solved again
        solved = len(list(next((root / "override").glob("*.tiered")).glob("tiers/*.parquet")))
        assert solved == 149
    # what a killed writer leaves (a tier file's and a discovery array's temporaries, named by the
    # dead process: tests/test_tables.py) goes when the run resumes
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()
    work = next((root / "override").glob("*.tiered"))
    for stale in (work / "tiers" / f".tier-5.parquet.1.{dead}.tmp", work / "discover" / f".keys-9.npy.{dead}.tmp"):
        if stale.parent.is_dir():
            stale.write_bytes(b"half")
    # any command resumes it (here `solve` without --tiered: the unfinished tiered solve is found)
    again = _cli(["solve", *SMALL, "--out", str(root), "--json", "--quiet", "--workers", "1"])
    assert again.returncode == 0, again.stderr
    assert "resuming" in again.stderr
    a, b = _tier_frames(small_reference), _tier_frames(root)
    assert a.keys() == b.keys()
    for name in a:
        assert a[name].equals(b[name]), name
    assert not [p for p in root.rglob("*") if ".tmp" in p.name or p.name.endswith(".tiered")]


def test_small_work_files_are_kept_in_memory_while_they_fit(tmp_path):
    """A run's small work files are written to disk (what a resumed run reads) and read back from
    memory: a read-only copy (the writer may go on changing its array), at most ``item`` bytes
    each and ``budget`` in all, the least recently read let go first."""
    files = workfiles.SmallFiles(budget=2500, item=1000)
    a = np.arange(100, dtype=np.uint64)  # 800 bytes
    files.save(tmp_path / "a.npy", a)
    a[0] = 99
    assert np.load(tmp_path / "a.npy")[0] == 0
    (tmp_path / "a.npy").unlink()  # read from memory from now on
    kept = files.load(tmp_path / "a.npy")
    assert np.array_equal(kept, np.arange(100, dtype=np.uint64)) and not kept.flags.writeable
    with pytest.raises(ValueError):
        kept[0] = 1
    files.save(tmp_path / "big.npy", np.arange(200, dtype=np.uint64))  # 1,600 bytes: not kept
    (tmp_path / "big.npy").unlink()
    with pytest.raises(FileNotFoundError):
        files.load(tmp_path / "big.npy")
    (tmp_path / "sub").mkdir()
    for name in ("b", "c"):
        files.save(tmp_path / "sub" / f"{name}.npy", np.arange(100, dtype=np.uint64))
    assert files.bytes == 2400
    files.load(tmp_path / "a.npy")  # read last: "b" is now the least recently read
    files.save(tmp_path / "d.npy", np.arange(25, dtype=np.uint64))  # 200 more: over the budget
    assert files.bytes == 1800 and str(tmp_path / "sub" / "b.npy") not in files.held
    assert np.array_equal(files.load(tmp_path / "sub" / "b.npy"), np.arange(100))  # (from the file)
    files.forget_under(tmp_path / "sub")
    assert sorted(files.held) == [str(tmp_path / "a.npy"), str(tmp_path / "d.npy")] and files.bytes == 1000


def test_a_resumed_solve_counts_the_tiers_it_finds_solved_from_its_first_line(tmp_path, monkeypatch):
    """A resumed solve's first progress count of the solving phase holds every tier the killed
    run had solved, not only those of the first height: counted height by height, the positions
    found solved looked solved at this run's rate, and Blam! 4x4-2 resumed at 57% said "under a
    minute left" for an hour's work."""
    import signal

    from solver.api import make_game
    from solver.tables import read_meta

    root = tmp_path / "killed"
    killed = _cli(["solve", *SMALL, "--tiered", "--out", str(root), "--quiet", "--workers", "1"],
                  {"PYRAMIDS_FAULT": "KILL@tier-solved#130"})
    assert killed.returncode == -signal.SIGKILL
    files = list(root.rglob("*.tiered/tiers/*.parquet"))
    held = sum(read_meta(f)["positions"] for f in files)
    assert len(files) >= 130 and held > 0
    calls: list[tuple[str, int, int | None]] = []

    class Recorder:
        def __init__(self, mode):
            pass

        def __call__(self, phase, name, done, total):
            calls.append((phase, done, total))

        def close(self):
            pass

    monkeypatch.setattr(tiered, "_TierProgress", Recorder)
    game = make_game("override", size=2, line=2, per_size=2)
    tiered.solve_tiered(game, out=root, progress="lines", workers=1, check=False)
    solving = [(done, total) for phase, done, total in calls if phase == "solve"]
    assert solving[0][0] == held
    assert solving[-1][0] == solving[-1][1] > held
    assert all(a[0] <= b[0] for a, b in zip(solving, solving[1:]))


def test_a_run_killed_before_keys_and_plies_shared_a_file_resumes_to_the_same_table(tmp_path, small_reference):
    """A discovery's waiting positions are one file a part (keys, then plies); a work folder left
    by the code before, with two files a part (``*-keys.npy``, ``*-ply.npy``), is still read
    when the run resumes: the same table. (Here the parts of a killed run are rewritten in the
    old layout.)"""
    import signal

    root = tmp_path / "killed"
    killed = _cli(["solve", *SMALL, "--tiered", "--out", str(root), "--quiet", "--workers", "1"],
                  {"PYRAMIDS_FAULT": "KILL@tier-discovered#7"})
    assert killed.returncode == -signal.SIGKILL
    parts = list(root.rglob("pending/*/*-grouped.npy"))
    assert parts
    for f in parts:
        keys, plies = tiered._grouped_slice(f, 1, 0)
        stem = f.name[: -len("grouped.npy")]
        np.save(f.with_name(stem + "keys.npy"), keys)
        np.save(f.with_name(stem + "ply.npy"), plies)
        f.unlink()
    again = _cli(["solve", *SMALL, "--tiered", "--out", str(root), "--quiet", "--workers", "1"])
    assert again.returncode == 0 and "resuming" in again.stderr, again.stderr
    a, b = _tier_frames(small_reference), _tier_frames(root)
    assert a.keys() == b.keys()
    for name in a:
        assert a[name].equals(b[name]), name


def test_ctrl_c_while_a_tier_is_solved_in_a_thread_stops_at_once_and_the_run_resumes(tmp_path):
    """Ctrl-C (SIGINT) while a tier is being solved in a thread: the command stops at once (exit
    130, no traceback), not when that tier is done (Override 3x3-2's take minutes; here the tier
    sleeps for 5 minutes at a fault point); the same command then resumes and finishes."""
    import os
    import signal
    import subprocess
    import sys
    import time

    env = {k: v for k, v in os.environ.items() if k != "PYRAMIDS_FAULT"}
    env.update(PYRAMIDS_FAULT="SLEEP@write:tier-100.parquet", PYRAMIDS_FAULT_SECONDS="300")
    args = ["solve", *SMALL, "--tiered", "--workers", "2", "--low-memory", "--out", str(tmp_path), "--quiet"]
    proc = subprocess.Popen([sys.executable, "-m", "solver.cli", *args], stderr=subprocess.PIPE, text=True,
                            env=env, stdin=subprocess.DEVNULL)
    said = []
    for line in proc.stderr:  # until the tier is asleep
        said.append(line)
        if line.startswith("fault: sleeping"):
            break
    assert said and "in thread tier" in said[-1], said
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    rest = proc.stderr.read()
    assert proc.wait(timeout=60) == 130 and time.monotonic() - t0 < 30
    assert "interrupted" in rest and "Traceback" not in rest, rest
    again = _cli(["solve", *SMALL, "--tiered", "--out", str(tmp_path), "--quiet", "--workers", "2"])
    assert again.returncode == 0 and "resuming" in again.stderr, again.stderr


def test_force_starts_over_and_disk_full_keeps_finished_tiers(tmp_path):
    full = _cli(["solve", *SMALL, "--tiered", "--out", str(tmp_path), "--quiet", "--workers", "1"],
                {"PYRAMIDS_FAULT": "ENOSPC@write:tier-4.parquet"})
    errors = [ln for ln in full.stderr.splitlines() if ln.startswith("error:")]
    assert full.returncode == 2 and "Traceback" not in full.stderr
    assert len(errors) == 1 and "No space left" in errors[0]
    assert all(ln.startswith(("error:", "note:")) for ln in full.stderr.strip().splitlines())
    work = next((tmp_path / "override").glob("*.tiered"))
    kept = list((work / "tiers").glob("*.parquet"))
    assert kept and not list(work.rglob("*.tmp"))
    forced = _cli(["solve", *SMALL, "--tiered", "--force", "--out", str(tmp_path), "--quiet"])
    assert forced.returncode == 0 and "resuming" not in forced.stderr


def test_tiered_option_errors_are_one_line(tmp_path):
    for args, text in [
        (["solve", *SMALL, "--tiered", "--workers", "0"], "--workers 0"),
    ]:
        r = _cli([*args, "--out", str(tmp_path)])
        assert r.returncode == 2 and text in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_estimate_is_said_first_and_refuses_what_does_not_fit(tmp_path, monkeypatch):
    from solver.api import make_game, solve
    from solver.errors import TooBigError
    from solver.games.override import Override

    game = make_game("override", size=2, line=2, per_size=2)
    monkeypatch.setattr(Override, "presets", {**Override.presets, "tiny": {"size": 2, "line": 2, "per_size": 2}})
    monkeypatch.setitem(measured.entries(), ("override", "tiny"),
                        measured.Measured(positions=1_543, largest_tier=60))
    said: list[str] = []
    solve(game, out=tmp_path, tiered=True, announce=said.append)
    assert said and said[0].startswith("estimate for override(size=2") and "1,543 positions" in said[0]
    monkeypatch.setattr(memory, "available_memory", lambda: 10 * 2**20)
    with pytest.raises(TooBigError, match=r"needs about 0\.4 GB of memory .* --ignore-estimate"):
        solve(game, out=tmp_path / "again", tiered=True)
    assert not (tmp_path / "again" / "override").exists() or not any((tmp_path / "again" / "override").iterdir())
    solve(game, out=tmp_path / "again", tiered=True, check_estimate=False)  # the override


def test_disk_estimate_of_a_resumed_run_counts_the_files_it_already_holds(tmp_path, monkeypatch):
    """A run stopped by a full disk is resumed when the disk left holds the tier files still to
    be written, though not a whole run (Override 3x3-2: 41 GB written, 29 GB free, 81 GB in all)."""
    import os
    import types

    from solver.tables import read_meta

    from solver.api import make_game, solve
    from solver.errors import TooBigError
    from solver.games.override import Override

    game = make_game("override", size=2, line=2, per_size=2)
    monkeypatch.setattr(Override, "presets", {**Override.presets, "tiny": {"size": 2, "line": 2, "per_size": 2}})
    monkeypatch.setitem(measured.entries(), ("override", "tiny"),
                        measured.Measured(positions=1_543, largest_tier=60))
    monkeypatch.setenv("PYRAMIDS_FAULT", "ENOSPC@write:tier-4.parquet")
    with pytest.raises(OSError, match="No space left"):
        solve(game, out=tmp_path / "a", tiered=True, workers=1)
    monkeypatch.delenv("PYRAMIDS_FAULT")
    work = next((tmp_path / "a" / "override").glob("*.tiered"))
    before = {f.name for f in (work / "tiers").glob("*.parquet")}
    solved = sum(pl.read_parquet(work / "tiers" / name).height for name in before)
    assert 0 < solved < 1_543
    # a pause of a day before the last tier (a run stopped and resumed) is not counted as work
    files = sorted((work / "tiers").glob("*.parquet"), key=lambda f: f.stat().st_mtime)
    assert len(files) >= 2 and all(read_meta(f)["seconds"] < 60 for f in files)
    os.utime(files[-1], (files[-1].stat().st_atime, files[-1].stat().st_mtime + 86_400))
    assert tiered.tier_progress(work.with_suffix(""))["seconds_left"] < 600
    left = tiered.TIER_FILE_BYTES_PER_POSITION * (1_543 - solved)  # discovery was finished
    assert left < tiered.DISK_BYTES_PER_POSITION * 1_543
    monkeypatch.setattr(tiered.shutil, "disk_usage", lambda root: types.SimpleNamespace(free=left))
    with pytest.raises(TooBigError, match=r"needs about 0\.0 GB of disk"):  # a new run does not fit
        solve(game, out=tmp_path / "b", tiered=True, workers=1)
    said: list[str] = []
    solve(game, out=tmp_path / "a", tiered=True, workers=1, announce=said.append)
    assert "more than the unfinished run holds" in said[0], said
    done = next(p for p in (tmp_path / "a" / "override").iterdir() if not p.name.startswith("."))
    largest_left = max(pl.read_parquet(f).height for f in (done / "tiers").glob("*.parquet") if f.name not in before)
    assert f"(largest tier still to solve {largest_left:,})" in said[0], said
    monkeypatch.setattr(tiered.shutil, "disk_usage", lambda root: types.SimpleNamespace(free=left - 1))
    monkeypatch.setenv("PYRAMIDS_FAULT", "ENOSPC@write:tier-4.parquet")
    with pytest.raises(OSError):
        solve(game, out=tmp_path / "c", tiered=True, workers=1, check_estimate=False)
    with pytest.raises(TooBigError, match="of disk"):  # one byte short of the tier files left
        solve(game, out=tmp_path / "c", tiered=True, workers=1)


def test_estimate_plans_the_low_memory_mode_when_lists_do_not_fit(tmp_path, monkeypatch):
    from solver.api import make_game, solve
    from solver.errors import TooBigError
    from solver.games.override import Override

    game = make_game("override", size=2, line=2, per_size=2)
    monkeypatch.setattr(Override, "presets", {**Override.presets, "tiny": {"size": 2, "line": 2, "per_size": 2}})
    # a (pretended) largest tier of 10M positions: 1.9 GB with lists, 0.7 GB by passes
    monkeypatch.setitem(measured.entries(), ("override", "tiny"),
                        measured.Measured(positions=20_000_000, largest_tier=10_000_000))
    monkeypatch.setattr(memory, "available_memory", lambda: 2**30)
    said: list[str] = []
    solve(game, out=tmp_path, tiered=True, announce=said.append)
    # (Override has no margins: passes are its default, planned and said as such)
    assert any(line.startswith("memory plan: every tier by passes") for line in said), said
    assert any("peak memory 0.7 GB" in line for line in said), said
    with pytest.raises(TooBigError, match="needs about 1.8 GB"):  # told to use lists: refused
        solve(game, out=tmp_path / "lists", tiered=True, low_memory=False)
    # a scored game keeps lists by default, and plans passes when they do not fit
    from solver.games.blam import Blam

    blam = make_game("blam", rows=2, cols=3, per_size=1)
    monkeypatch.setattr(Blam, "presets", {**Blam.presets, "tiny": {"rows": 2, "cols": 3, "per_size": 1}})
    monkeypatch.setitem(measured.entries(), ("blam", "tiny"),
                        measured.Measured(positions=20_000_000, largest_tier=10_000_000))
    said = []
    solve(blam, out=tmp_path / "blam", tiered=True, announce=said.append)
    assert any("low-memory mode" in line for line in said), said
    assert any(line.startswith("memory plan: reverse lists of each tier's moves where they fit") for line in said)


def test_report_of_a_tiered_table_equals_the_whole_graph_report(tmp_path):
    """The report regenerates the moves of a tiered table from the rules: every section is there
    and every number equals the whole-graph report's; only the provenance lines differ."""
    from solver.api import make_game, solve

    game = make_game("override", size=2, line=2, per_size=2)
    whole = solve(game, out=tmp_path / "w", tiered=False)
    tiered_sol = solve(game, out=tmp_path / "t", tiered=True)
    b = assert_same_reports(whole, tiered_sol, tmp_path)
    assert not any("edges table is missing" in line for line in b)
    # a tiered solve may span runs: the provenance adds the tiers' own times, summed
    summed = sum(t["seconds"] for t in tiered_sol.meta["tiers"])
    assert f"(the last run; all runs, each part's own time summed: {summed:,.0f})" in "\n".join(b)


def assert_same_reports(whole, tiered_sol, tmp_path: Path) -> list[str]:
    """The reports of a whole-graph and a tiered table differ only in their provenance rows;
    returns the tiered report's lines."""
    from analysis.report import write_report

    a = write_report(whole, tmp_path / "ra").read_text().splitlines()
    b = write_report(tiered_sol, tmp_path / "rb").read_text().splitlines()
    provenance = ("| solver |", "| table |", "| solve time (s) |", "| solved at |")
    diff = [(x, y) for x, y in zip(a, b) if x != y]
    assert len(a) == len(b) and diff
    assert all(x.startswith(provenance) and y.startswith(provenance) for x, y in diff), diff
    return b


@pytest.mark.parametrize("name,params", [("override", {"size": 2, "line": 2, "per_size": 2}),
                                         ("blam", {"rows": 3, "cols": 3, "per_size": 1})])
def test_verifier_proves_tiered_tables_tier_by_tier(name, params, tmp_path):
    from solver.api import make_game

    game = make_game(name, **params)
    folder = tiered.solve_tiered(game, out=tmp_path, force=True)
    assert tiered.verify_tiered(game, folder) == []
    # a flipped value in one tier file is found, and named by its tier
    manifest = json.loads((folder / tiered.MANIFEST).read_text())
    entry = max(manifest["tiers"], key=lambda t: t["positions"])
    path = folder / entry["file"]
    df = pl.read_parquet(path)
    meta = tiered.read_meta(path)
    i = int(np.flatnonzero(df["value"].to_numpy() == 3)[0])  # a win
    df = df.with_columns(pl.Series("value", np.where(np.arange(df.height) == i, 0, df["value"].to_numpy()),
                                   dtype=pl.UInt8))
    tiered.write_parquet(df, path, meta)
    problems = tiered.verify_tiered(game, folder)
    assert problems and any(p.startswith(f"tier {entry['tier']} ") for p in problems)


def test_tiers_by_passes_go_one_at_a_time_when_two_with_their_children_do_not_fit(monkeypatch):
    """Two tiers of one height are solved side by side by passes only when both fit with their
    children kept (70 bytes a position) and the reserve the kept children leave free (a fifth of
    the machine's memory and 16 bytes a position); with move lists always (their memory is
    planned before the run). Override 3x3-2's two tiers of 185M positions beside a child of 484M
    in 24 GB: one at a time."""
    from solver.api import make_game

    run = tiered.Run(game=make_game("override", size=2, line=2, per_size=1), folder=Path("."), work=Path("."),
                     symmetry=True, run_id="x", workers=2, low_memory=True)
    big = [tiered.TierInfo(tier=t, positions=185_000_000, children=[]) for t in (1, 2, 3)]
    small = [tiered.TierInfo(tier=t, positions=1_000_000, children=[]) for t in (1, 2, 3)]
    monkeypatch.setattr(memory, "total_memory", lambda: 24 * 2**30)
    monkeypatch.setattr(memory, "available_memory", lambda: 18 * 2**30)
    assert not tiered._side_by_side(run, big, 2)
    assert tiered._side_by_side(run, small, 2)
    # two tiers of 70M: 9.1 GiB of children and arrays, beside a reserve of 4.8 + 2.1 GiB
    pair = [tiered.TierInfo(tier=t, positions=70_000_000, children=[]) for t in (1, 2)]
    monkeypatch.setattr(memory, "available_memory", lambda: 15 * 2**30)
    assert not tiered._side_by_side(run, pair, 2)  # 16.0 GiB > 15 GiB free
    monkeypatch.setattr(memory, "available_memory", lambda: 17 * 2**30)
    assert tiered._side_by_side(run, pair, 2)
    monkeypatch.setattr(memory, "available_memory", lambda: 40 * 2**30)
    assert tiered._side_by_side(run, big, 2)  # 25.9 + 4.8 + 5.5 GB of 40 GB
    # passes side by side count the children they read (18 bytes a position): with 17 GiB free
    # the pair above fits without children, not with 100M positions of children each
    kids = [tiered.TierInfo(tier=t, positions=70_000_000, children=[10 + t]) for t in (1, 2)]
    monkeypatch.setattr(memory, "available_memory", lambda: 17 * 2**30)
    assert tiered._side_by_side(run, kids, 2)  # their children not known: as the pair above
    run.tier_positions = {11: 100_000_000, 12: 100_000_000}
    assert not tiered._side_by_side(run, kids, 2)


def test_tiers_with_move_lists_go_side_by_side_only_when_they_fit_with_their_children(monkeypatch):
    """Blam 4x4-2 ran out of 24 GB with two one-capture tiers of 37M positions side by side, each
    reading 238M positions of children: lists side by side are planned together, children and
    the margins' arrays included; when they do not fit, one at a time (still with lists)."""
    from solver.api import make_game

    gib = 2**30
    run = tiered.Run(game=make_game("blam", rows=2, cols=2, per_size=1), folder=Path("."), work=Path("."),
                     symmetry=True, run_id="x", workers=2, low_memory=False)
    run.tier_positions = {10: 238_000_000, 11: 238_000_000}
    pair = [tiered.TierInfo(tier=t, positions=37_000_000, children=[9 + t, t]) for t in (1, 2)]
    alone = tiered.tier_memory(run, pair[0])
    # each: the larger of children + expansion (4.3 + 4.1 GB) and the solve after (8.9 GB)
    assert alone == max(18 * 238_000_000 + 110 * 37_000_000, 240 * 37_000_000)
    monkeypatch.setattr(memory, "total_memory", lambda: 24 * gib)
    monkeypatch.setattr(memory, "available_memory", lambda: 18 * gib)
    assert 2 * alone > 0.8 * 18 * gib and not tiered._side_by_side(run, pair, 2)
    assert not tiered.use_passes(tiered.Run(**{**run.__dict__, "low_memory": None}), pair[0])
    monkeypatch.setattr(memory, "available_memory", lambda: 40 * gib)
    assert tiered._side_by_side(run, pair, 2)
    # a scored game's tier is planned with the margins' arrays, an unscored one's without
    over = tiered.Run(game=make_game("override", size=2, line=2, per_size=1), folder=Path("."), work=Path("."),
                      symmetry=True, run_id="x")
    assert tiered.tier_memory(over, tiered.TierInfo(tier=1, positions=10**8, children=[])) < \
        tiered.tier_memory(run, tiered.TierInfo(tier=1, positions=10**8, children=[]))


def test_a_solve_whose_standard_error_is_a_log_writes_progress_lines(tmp_path: Path, capsys, monkeypatch) -> None:
    # under nohup (standard error not a terminal) a tiered solve writes a line at most every
    # LOG_EVERY seconds instead of tqdm bars; with the interval at 0 every progress call shows
    from solver.api import load
    from solver.games import make_game
    from tests.clirun import run

    monkeypatch.setattr(tiered, "LOG_EVERY", 0.0)
    code, out, err = run(capsys, "solve", *SMALL, "--tiered", "--out", str(tmp_path))
    assert code == 0, err
    lines = [ln for ln in err.splitlines() if "tiers:" in ln]
    found = [ln for ln in lines if "] discovering tiers: " in ln]
    solved = [ln for ln in lines if "] solving tiers: " in ln]
    assert found and solved and lines == found + solved, err
    assert all(ln.startswith("[0:00:") for ln in lines), lines
    n = load(make_game("override", {"size": 2, "line": 2, "per_size": 2}), out=tmp_path).meta["counts"]["positions"]
    assert f"{n:,} positions found" in found[-1], found[-1]
    assert solved[-1].split("tiers: ")[1].startswith(f"{n:,} of {n:,} positions (100.0%)"), solved[-1]
    assert "\r" not in err  # no bar
    # --quiet: none; and the default interval prints nothing for a solve this short
    code, out, err = run(capsys, "solve", *SMALL, "--tiered", "--force", "--quiet",
                         "--out", str(tmp_path))
    assert code == 0 and "tiers:" not in err, err
    monkeypatch.setattr(tiered, "LOG_EVERY", 60.0)
    code, out, err = run(capsys, "solve", *SMALL, "--tiered", "--force", "--out", str(tmp_path))
    assert code == 0 and "tiers:" not in err, err


def test_a_large_tier_says_its_own_steps_in_the_lines(tmp_path: Path, capsys, monkeypatch) -> None:
    # a tier of millions of positions takes minutes: it shows where it is inside the solve's line
    # (made to apply to this small game's tiers by lowering the threshold)
    from tests.clirun import run

    monkeypatch.setattr(tiered, "LOG_EVERY", 0.0)
    monkeypatch.setattr(tierwork, "STEP_MIN_POSITIONS", 1)
    code, out, err = run(capsys, "solve", *SMALL, "--tiered", "--lists", "--out", str(tmp_path))
    assert code == 0, err
    inner = [ln.split(" > ", 1)[1] for ln in err.splitlines() if "] solving tiers: " in ln and " > " in ln]
    assert any("positions expanded" in ln and "(expanding)" in ln for ln in inner), err
    assert any(ln.endswith("(values and remoteness, level by level)") for ln in inner), err
    assert any(ln.endswith("(writing the tier file)") for ln in inner), err
    # by passes (--low-memory, and the default of this game without margins): the passes say their level
    for mode in (["--low-memory"], []):
        code, out, err = run(capsys, "solve", *SMALL, "--tiered", *mode, "--force", "--out", str(tmp_path))
        assert code == 0 and re.search(r"> .*\(pass \d+ over the undecided positions \(level \d+\)\)", err), err
    # the default threshold: a small tier shows nothing of its own
    monkeypatch.setattr(tierwork, "STEP_MIN_POSITIONS", 1 << 20)
    code, out, err = run(capsys, "solve", *SMALL, "--tiered", "--force", "--out", str(tmp_path))
    assert code == 0 and "] solving tiers: " in err and " > " not in err, err


def test_a_tier_drops_its_children_once_their_moves_are_folded(tmp_path: Path, monkeypatch) -> None:
    """The children of other tiers are needed only to fold the moves into them: a tier lets go of
    them before its reverse lists and margins are built (or its passes' levels) (Blam 4x4-2's no-capture tier of 55M
    positions reads 531M positions of children, about 9.6 GB), once, and the table is the same."""
    from solver.api import make_game

    game = make_game("blam", rows=2, cols=3, per_size=1)
    events: list[tuple[str, int]] = []
    release, values = tiered._release_children, tiered._jit.tier_values
    current: list[int] = []

    def spy_release(run, info):
        events.append(("release", info.tier))
        return release(run, info)

    def spy_values(*args):
        events.append(("solve", current[-1]))
        return values(*args)

    lists = tiered._solve_tier_lists

    def spy_lists(run, info):
        current.append(info.tier)
        return lists(run, info)

    monkeypatch.setattr(tiered, "_release_children", spy_release)
    monkeypatch.setattr(tiered._jit, "tier_values", spy_values)
    monkeypatch.setattr(tiered, "_solve_tier_lists", spy_lists)
    folder = tiered.solve_tiered(game, out=tmp_path / "a", force=True, workers=1, low_memory=False)
    manifest = json.loads((folder / tiered.MANIFEST).read_text())
    with_children = [t["tier"] for t in manifest["tiers"] if [u for u in t["children"] if u != t["tier"]]]
    assert with_children
    for t in with_children:
        first = events.index(("release", t))
        assert events.index(("solve", t)) > first  # dropped before the solve
        assert events.count(("release", t)) == 2  # the second call, when the tier ends, does nothing
    monkeypatch.undo()
    # by passes too: the levels walk rows of the tier only, so the children go before the file
    # is written (before this, they were held until the tier ended)
    events.clear()
    write = tiered.write_parquet

    def spy_write(frames, path, meta, **options):
        events.append(("write", int(meta["tier"])))
        return write(frames, path, meta, **options)

    monkeypatch.setattr(tiered, "_release_children", spy_release)
    monkeypatch.setattr(tiered, "write_parquet", spy_write)
    plain = tiered.solve_tiered(game, out=tmp_path / "b", force=True, workers=1, low_memory=True)
    for t in with_children:
        assert events.index(("write", t)) > events.index(("release", t))
    monkeypatch.undo()
    for t in manifest["tiers"]:
        a = read_columns(folder / t["file"]).sort("key")
        b = read_columns(plain / t["file"]).sort("key")
        assert a.select("key", "value", "remoteness", "margin").equals(b.select("key", "value", "remoteness", "margin"))


def test_memory_freed_by_a_tier_goes_back_to_the_system() -> None:
    """glibc keeps the pages of freed chunk-sized arrays (below its mmap threshold, which rises
    to 32 MB once a large array is freed) until ``malloc_trim``: after a Blam 4x4-2 tier the
    process held 4.4 GB that the next tier's plan counted as used. Run in a fresh interpreter so
    the heap starts clean."""
    code = textwrap.dedent("""
        import os
        import numpy as np
        from solver.pipeline.memory import return_freed_memory
        def rss():
            for line in open(f"/proc/{os.getpid()}/status"):
                if line.startswith("RssAnon"):
                    return int(line.split()[1]) // 1024
        big = np.ones(30_000_000, np.uint8)
        del big  # raises the mmap threshold: 2 MB arrays now come from the heap
        keep, drop = [], []
        for i in range(300):
            (keep if i % 10 == 9 else drop).append(np.ones(2_000_000, np.uint8))
        del drop
        held = rss()
        return_freed_memory()
        print(held, rss())
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    held, after = map(int, out.split())
    assert held - after > 400, (held, after)  # 270 arrays of 2 MB freed: about 515 MB given back


def test_estimate_before_discovery_counts_the_measured_children_of_the_largest_tier(monkeypatch):
    """Blam 4x4-2's largest tier (no capture, 55M positions) reads 531M positions of other
    tiers while it is expanded: a fresh run's estimate counts them from the preset's measured
    ``largest_tier_children`` (solver/pipeline/measured.toml; a resumed one from its discovery),
    so it says about 15 GB, not the 12.7 of the tier alone."""
    import dataclasses

    from solver.api import make_game

    game = make_game("blam", rows=4, cols=4, per_size=2)
    assert game.preset_name() == "4x4-2"
    est = tiered.estimate(game)
    entry = measured.of("blam", "4x4-2")
    positions, largest, kids = entry.positions, entry.largest_tier, entry.largest_tier_children
    assert est["memory"] == tiered.BASE_BYTES + max(18 * kids + 110 * largest, 240 * largest)
    monkeypatch.setitem(measured.entries(), ("blam", "4x4-2"),
                        dataclasses.replace(entry, largest_tier_children=None))
    alone = tiered.estimate(game)["memory"]
    assert alone == tiered.BASE_BYTES + 240 * largest < est["memory"]
    # resumed with every tier found: the run's own count of the largest tier still to solve
    held = {"positions_discovered": positions, "positions_solved": 0, "largest_left": 1_000,
            "largest_left_children": 10**9}
    assert tiered.estimate(game, held=held)["memory"] == tiered.BASE_BYTES + 18 * 10**9 + 110 * 1_000


def test_estimate_of_tiers_cut_in_slices_holds_the_largest_slice(monkeypatch):
    """With --tier-slices N the memory is planned for the largest slice of the largest tier
    (an N-th of it, with SLICE_SLACK for an uneven cut), not for the tier."""
    import dataclasses

    from solver.api import make_game

    game = make_game("greener", rows=3, cols=4, black=3, white=3, setup="all")
    entry = dataclasses.replace(measured.of("blam", "4x4-2"), positions=20_000_000, largest_tier=8_000_000,
                                largest_tier_children=None, at_least=False)
    monkeypatch.setitem(measured.entries(), ("greener", game.preset_name()), entry)
    whole = tiered.estimate(game)
    cut = tiered.estimate(game, slices=8)
    assert whole["largest_tier"] == 8_000_000
    assert cut["largest_tier"] == int(1_000_000 * tiered.SLICE_SLACK) + 1
    assert cut["memory"] - tiered.BASE_BYTES < (whole["memory"] - tiered.BASE_BYTES) / 7


def test_the_memory_plan_is_said_and_lists_exclude_low_memory(tmp_path: Path, capsys) -> None:
    """A tiered solve says its memory plan after its size; `--lists` and `--low-memory` ask for
    one mode each (together: one line, exit 2); both give the same table."""
    from tests.clirun import run

    code, out, err = run(capsys, "solve", *SMALL, "--tiered", "--out", str(tmp_path / "a"))
    assert code == 0 and "note: memory plan: every tier by passes over its positions" in err, err
    code, out, err = run(capsys, "solve", *SMALL, "--tiered", "--lists", "--out", str(tmp_path / "b"))
    assert code == 0 and "note: memory plan: every tier with reverse lists of its moves (--lists)" in err, err
    code, out, err = run(capsys, "solve", *SMALL, "--tiered", "--lists", "--low-memory", "--out", str(tmp_path / "c"))
    assert code == 2 and "not allowed with argument --lists" in err and len(err.strip().splitlines()) == 1, err
    from solver.api import load, make_game

    game = make_game("override", size=2, line=2, per_size=2)
    a, b = load(game, out=tmp_path / "a"), load(game, out=tmp_path / "b")
    cols = ["key", "value", "remoteness"]
    assert a.positions.select(cols).sort("key").equals(b.positions.select(cols).sort("key"))


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.lists(st.tuples(st.integers(0, 50), st.integers(0, 9)), max_size=30), min_size=1, max_size=6),
       st.booleans())
def test_a_spill_keeps_each_key_once_with_its_smallest_ply(runs, as_runs) -> None:
    """A spill's parts: each chunk's children (sorted, distinct: merged as runs) or the start's
    (any order, repeats: sorted whole); both give every key once, sorted, with its smallest ply."""
    parts = []
    want: dict[int, int] = {}
    for pairs in runs:
        if as_runs:
            best: dict[int, int] = {}
            for k, p in pairs:
                best[k] = min(p, best.get(k, p))
            pairs = sorted(best.items())
        for k, p in pairs:
            want[k] = min(p, want.get(k, p))
        parts.append((np.array([k for k, _ in pairs], dtype=np.uint64), np.array([p for _, p in pairs], np.uint16)))
    keys, plies = tiered._distinct_min(parts)
    assert keys.tolist() == sorted(want) and plies.tolist() == [want[k] for k in sorted(want)]


def test_a_child_tier_is_read_once_outside_the_lock_by_threads_that_want_it(monkeypatch) -> None:
    """Tiers solved side by side share a child: the first thread reads it (outside the run's
    lock, so another thread can read another child meanwhile), the others wait for that read;
    a failed read reaches every thread waiting and is not kept."""
    import threading
    import time as _time

    from solver.api import make_game

    run = tiered.Run(game=make_game("override", size=2, line=2, per_size=1), folder=Path("."), work=Path("."),
                     symmetry=True, run_id="x", workers=2)
    reads: list[int] = []
    inside = threading.Event()

    def slow_read(run_, tier, scored, only=None):
        reads.append(tier)
        if tier == 1:
            inside.set()
            _time.sleep(1.0)
        if tier == 3:
            raise OSError("disk gone")
        return object()

    monkeypatch.setattr(tiered, "_load_child", slow_read)
    got: dict[str, object] = {}
    first = threading.Thread(target=lambda: got.__setitem__("a", tiered._get_child(run, 1, False)))
    first.start()
    inside.wait(5)
    t0 = _time.perf_counter()
    got["other"] = tiered._get_child(run, 2, False)  # not held up by tier 1's read
    assert _time.perf_counter() - t0 < 0.5
    got["b"] = tiered._get_child(run, 1, False)  # waits for the first thread's read of it
    first.join(5)
    assert got["a"] is got["b"] and reads.count(1) == 1 and run.child_users[1] == 2
    for _ in range(2):
        with pytest.raises(OSError, match="disk gone"):
            tiered._get_child(run, 3, False)
    assert reads.count(3) == 2 and 3 not in run.child_cache


def test_small_child_tiers_stay_loaded_for_the_later_tiers_that_read_them(tmp_path: Path, monkeypatch) -> None:
    """A finished child that a later tier reads stays loaded while it fits the run's budget
    (Blam! 3x3: 202 tiers, most of a few positions, each read by several parents): a small tier
    just written is offered from memory (no child file read at all), without the offer every
    child file is read once instead of once a parent; none is kept while a tier of half the
    largest tier's memory or more is solved, and the table is the same as with nothing kept."""
    from solver.api import make_game

    game = make_game("blam", rows=3, cols=3, per_size=1)
    reads: list[int] = []
    load, start = tiered._load_child, tiered._start_tier
    large_with_extra: list[int] = []

    def spy_load(run, tier, scored, only=None):
        reads.append(tier)
        return load(run, tier, scored, only)

    run_seen: list[int] = []

    def spy_start(run, info):
        start(run, info)
        run_seen.append(run.keep_none_from)
        if tiered.tier_memory(run, info) >= run.keep_none_from:
            held = [u for u, n in run.child_users.items() if n <= 0 and u not in info.children]
            if held:
                large_with_extra.append(info.tier)

    monkeypatch.setattr(tiered, "_load_child", spy_load)
    monkeypatch.setattr(tiered, "_start_tier", spy_start)
    offered = tiered.solve_tiered(game, out=tmp_path / "offered", force=True, workers=1)
    assert reads == []  # every child came from memory, as written
    monkeypatch.setattr(tiered, "OFFER_ROWS", 0)
    kept = tiered.solve_tiered(game, out=tmp_path / "kept", force=True, workers=1)
    manifest = json.loads((kept / tiered.MANIFEST).read_text())
    parents = sum(len([u for u in t["children"] if u != t["tier"]]) for t in manifest["tiers"])
    read_children = {u for t in manifest["tiers"] for u in t["children"] if u != t["tier"]}
    assert sorted(reads) == sorted(read_children)  # each child file once
    assert parents > 2 * len(read_children)  # (a game where reading once a parent costs)
    assert not large_with_extra and run_seen
    reads.clear()
    monkeypatch.setattr(tiered, "KEEP_SHARE", 0.0)
    plain = tiered.solve_tiered(game, out=tmp_path / "plain", force=True, workers=1)
    assert len(reads) == parents  # nothing kept: once a parent, as before
    for t in manifest["tiers"]:
        a, b = read_columns(kept / t["file"]).sort("key"), read_columns(plain / t["file"]).sort("key")
        assert a.equals(b)
        assert read_columns(offered / t["file"]).sort("key").equals(b)


def test_kept_children_are_dropped_when_a_large_tier_starts_and_when_no_later_tier_reads_them() -> None:
    """A child no tier being solved holds stays loaded only for a later reader, and never while a
    tier of half the largest tier's planned memory or more is solved (the peak stays the largest
    tiers'); within the budget, one more is kept only if it fits with the others."""
    from solver.api import make_game

    run = tiered.Run(game=make_game("override", size=2, line=2, per_size=1), folder=Path("."), work=Path("."),
                     symmetry=True, run_id="x")
    run.tier_positions = {1: 10, 2: 10, 3: 10, 5: 100_000, 6: 5}
    big, small = tiered.TierInfo(5, 100_000, [1]), tiered.TierInfo(6, 5, [1])
    run.keep_none_from = tiered.tier_memory(run, big)
    run.keep_budget = tiered.CHILD_BYTES_PER_POSITION * 15  # room for one of the 10-position tiers
    assert tiered.tier_memory(run, small) < run.keep_none_from

    def hold() -> None:
        run.child_cache.update({2: object(), 3: object()})
        run.child_users.update({2: 0, 3: 0})

    hold()
    run.readers = {2: 1, 3: 0}
    tiered._start_tier(run, small)
    assert set(run.child_cache) == {2}  # 3: no later tier reads it
    hold()
    run.readers = {2: 1, 3: 1}
    tiered._start_tier(run, big)
    assert not run.child_cache  # a large tier: nothing kept beside it
    run.readers[1] = 2  # (a later tier reads it: a small tier would keep it)
    run.tier_positions[1] = 1
    run.child_cache[1] = object()
    run.child_users[1] = 1
    tiered._release_children(run, big)  # what it lets go of before its reverse lists (its peak)
    assert 1 not in run.child_cache
    run.large_running.clear()
    run.child_cache.update({2: object()})
    run.child_users.update({2: 0})
    assert not tiered._keep_child(run, 3)  # 2 and 3 together exceed the budget
    del run.child_users[2]
    assert tiered._keep_child(run, 3)
    run.readers[3] = 0
    assert not tiered._keep_child(run, 3)
