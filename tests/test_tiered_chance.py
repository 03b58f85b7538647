"""Tiered value iteration (solver.pipeline.tiered_chance) gives the whole-graph table of games
with dice.

1. Random games with chance nodes given as explicit graphs (loops inside tiers, rolls and moves
   into later tiers that skip tiers, terminal wins/losses/ties, the same player moving again):
   the tiered table equals the whole-graph value iteration's, column by column (hypothesis).
2. A real dice game with loops (racers who may stay put), through the API: same root, same
   moves, and the tier-by-tier verifier accepts it and catches a damaged tier.
3. The tolerance: a table solved at a looser ``tol`` is not reused for a tighter one, and an
   unfinished run at another tolerance starts over.
4. Carrots and Broccoli 3x3 (3.9M positions): the tiered solve equals the whole graph (slow).
"""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, assume, example, given, settings, strategies as st

from solver.api import load, solve
from solver.core.game import Game, NodeKind, Outcome, Result
from solver.pipeline import memory, tiered, tiered_chance, tierwork
from tests.test_tiered import GraphGame
from tests.toygames import DiceRace
from tests.budget import examples

#: value iteration's values are exact up to floating-point sums (and the 1e-12 tolerance)
TOL = 1e-9


class ChanceGraphGame(GraphGame):
    """:class:`tests.test_tiered.GraphGame` with chance nodes (weights per outcome), unscored."""

    name = "chancegraph"
    scored = False
    chance = "in-play"

    def __init__(self, variant):
        Game.__init__(self, variant)
        g = self.GRAPH
        self.children, self.tiers, self.players = g["children"], g["tiers"], g["players"]
        self.kinds, self.results, self.weights = g["kinds"], g["results"], g["weights"]

    def node_kind(self, s):
        return NodeKind(self.kinds[s])

    def chance_outcomes(self, s):
        w = self.weights[s]
        return [(a, Fraction(x, sum(w))) for a, x in enumerate(w)]

    def outcome(self, s):
        r, p = self.results[s], self.players[s]
        return Outcome(tuple(Result(r) if q == p else Result(-r) for q in range(2)))


@st.composite
def chance_graphs(draw):
    n = draw(st.integers(2, 40))
    tiers = sorted(draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)))
    tiers[0] = min(tiers)
    players = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    children, kinds, results, weights = [], [], [], []
    for i in range(n):
        later = [j for j in range(n) if tiers[j] >= tiers[i] and j != i]
        if not later or (draw(st.booleans()) and draw(st.booleans())):
            children.append([])
            kinds.append(int(NodeKind.TERMINAL))
            results.append(draw(st.sampled_from([-1, 0, 1])))
            weights.append([])
            continue
        kids = draw(st.lists(st.sampled_from(later), min_size=1, max_size=4))
        chance = i > 0 and draw(st.booleans())
        children.append(kids)
        kinds.append(int(NodeKind.CHANCE if chance else NodeKind.DECISION))
        results.append(None)
        weights.append(draw(st.lists(st.integers(1, 3), min_size=len(kids), max_size=len(kids)))
                       if chance else [])
    return {"children": children, "tiers": tiers, "players": players, "kinds": kinds,
            "results": results, "weights": weights}


def _same_tables(whole: pl.DataFrame, tiers: pl.DataFrame, free: np.ndarray | None = None) -> None:
    """Equal tables. ``free``: rows whose win/loss probabilities may differ (see
    :func:`_tie_dependent`); their values must still agree."""
    exact = ["key", "player", "kind", "ply", "num_moves"]
    assert tiers.columns == whole.columns
    assert whole.height == tiers.height
    for c in exact:
        assert whole[c].to_list() == tiers[c].to_list(), c
    keep = np.ones(whole.height, bool) if free is None else ~free
    for c in ("value", "p_win", "p_loss"):
        a, b = whole[c].to_numpy(), tiers[c].to_numpy()
        sel = keep if c != "value" else np.ones(whole.height, bool)
        assert np.abs(a - b)[sel].max(initial=0.0) < TOL, c
    for t in (whole, tiers):  # both earn their values
        gap = t["p_win"].to_numpy() - t["p_loss"].to_numpy() - t["value"].to_numpy()
        assert np.abs(gap).max() < TOL


def _tie_dependent(graph: dict, keys: np.ndarray, value: np.ndarray) -> np.ndarray:
    """Rows whose win/loss probabilities depend on how a tie between equally good moves is broken
    (a player indifferent between, say, endless play and a fair gamble: the value is the same,
    the chances of winning are not, and the whole graph decides ties on discounted values while
    a tier reads its children's exact ones): decision positions with two different children of
    the best value, and every position from which play can reach one."""
    row = {int(k): i for i, k in enumerate(keys)}
    kids, players = graph["children"], graph["players"]

    def worth(s: int, c: int) -> float:
        v = value[row[c]]
        return v if players[c] == players[s] else -v

    free = np.zeros(len(keys), bool)
    for s in map(int, keys):
        if graph["kinds"][s] == int(NodeKind.DECISION):
            vals = {c: worth(s, c) for c in set(kids[s])}
            top = max(vals.values())
            free[row[s]] = sum(v >= top - TOL for v in vals.values()) > 1
    changed = True
    while changed:
        changed = False
        for s in map(int, keys):
            if not free[row[s]] and any(free[row[c]] for c in kids[s]):
                free[row[s]] = changed = True
    return free


@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(graph=chance_graphs())
@example(graph={  # indifferent at the start between endless play and a fair gamble (found by hypothesis)
    "children": [[1, 6], [0], [0], [0], [0], [0], [7], [16], [6], [6], [6], [12, 12, 12, 25], [11], [], [], [11],
                 [11, 13, 21], [11], [11], [11], [11], [22], [21], [21], [21], []],
    "tiers": [0] * 6 + [1] * 5 + [2] * 10 + [3] * 5, "players": [0] * 26,
    "kinds": [0] * 11 + [1, 0, 3, 3, 1, 1, 0, 1, 1, 0, 0, 0, 0, 0, 3],
    "results": [None] * 13 + [-1, -1] + [None] * 10 + [1],
    "weights": [[]] * 11 + [[1, 1, 1, 2], [], [], [], [1], [1, 1, 1], [], [1], [1], [], [], [], [], [], []]})
def test_random_chance_graphs_same_as_whole_graph(graph, tmp_path_factory):
    # every tier solved in chunks of 2 positions (components never cut): the chunks' borders
    # are crossed in every example
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(tiered_chance, "CHUNK_MIN", 2)
        mp.setattr(tiered_chance, "CHUNK_MAX", 2)
        _random_chance_graph_same_as_whole_graph(graph, tmp_path_factory)


def _random_chance_graph_same_as_whole_graph(graph, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("g")
    ChanceGraphGame.GRAPH = graph
    game = ChanceGraphGame.from_params({})
    whole = solve(game, out=tmp / "whole", tiered=False, write_edges=False)
    # the whole-graph pipeline picks value iteration only when a roll happens during play
    # (no dice: retrograde; a roll at the start only: the random-setup engine)
    assume(whole.stochastic)
    tiered.solve_tiered(game, out=tmp / "tiered", force=True)
    tsol = load(game, out=tmp / "tiered")
    assert tsol.meta["solution"] == "stochastic" and tsol.meta["layout"] == "tiered"
    assert tsol.meta["certified"] == whole.meta["certified"]
    pos = whole.positions
    _same_tables(pos, tsol.positions, _tie_dependent(graph, pos["key"].to_numpy(), pos["value"].to_numpy()))
    assert tiered.verify_tiered(game, tmp / "tiered" / game.name / game.variant.variant_id()) == []


class TieredDiceRace(DiceRace):
    """DiceRace with tiers (squares covered by both racers; staying put keeps the tier: loops)
    and a die that shows 2 twice as often as 1."""

    name = "tiereddicerace"  # dice during play: chance = "in-play", as DiceRace declares

    def chance_outcomes(self, s):  # a loaded die: probabilities a table must carry, not uniform
        return [(1, Fraction(1, 3)), (2, Fraction(2, 3))]

    def tier_of(self, keys):
        keys = np.asarray(keys, dtype=np.int64)
        t = self.variant.target + 1
        pos = keys // 6
        return pos // t + pos % t


@pytest.mark.parametrize("chunk", [None, 1, 3])
def test_dice_race_tier_by_tier_same_as_whole_graph(tmp_path, monkeypatch, chunk):
    if chunk is not None:  # tiers solved in chunks of a few positions (components never cut)
        monkeypatch.setattr(tiered_chance, "CHUNK_MIN", chunk)
        monkeypatch.setattr(tiered_chance, "CHUNK_MAX", chunk)
    game = TieredDiceRace.from_params({"target": 5})
    whole = solve(game, out=tmp_path / "whole", tiered=False)
    notes: list[str] = []
    tsol = solve(game, out=tmp_path / "tiered", tiered=True, notes=notes)
    assert len(tsol.meta["tiers"]) == 2 * 5 + 1 - 1  # sums 0..9: a race ends when one reaches 5
    assert tsol.meta["certified"] and tsol.meta["counts"]["chance"] == whole.meta["counts"]["chance"]
    _same_tables(whole.positions, tsol.positions)
    start = game.initial_state()
    assert tsol.root.expected == pytest.approx(whole.root.expected, abs=TOL)
    assert tsol.root.p_win == pytest.approx(whole.root.p_win, abs=TOL)
    rolled = game.apply(start, 2)
    for a, b in zip(tsol.moves(rolled), whole.moves(rolled)):
        assert a.move == b.move and a.expected == pytest.approx(b.expected, abs=TOL)
    # the first player's edge, worked by hand: with target 5 the racer who moves first is ahead
    assert 0 < whole.root.expected < 1


def test_verifier_catches_a_damaged_chance_tier(tmp_path):
    game = TieredDiceRace.from_params({"target": 4})
    solve(game, out=tmp_path, tiered=True)
    folder = tmp_path / game.name / game.variant.variant_id()
    assert tiered.verify_tiered(game, folder) == []
    path = folder / "tiers" / "tier-3.parquet"
    from solver.tables import read_meta, write_parquet

    meta = read_meta(path)
    df = pl.read_parquet(path)
    i = int(np.flatnonzero(df["kind"].to_numpy() == NodeKind.DECISION)[0])
    value = df["value"].to_numpy().copy()
    value[i] += 0.01
    write_parquet([df.with_columns(pl.Series("value", value))], path, meta)
    found = tiered.verify_tiered(game, folder)
    assert found and "tier 3" in found[0] and "break their equation" in found[0]


def test_a_looser_tolerance_is_not_reused_and_a_run_at_another_starts_over(tmp_path):
    game = TieredDiceRace.from_params({"target": 3})
    solve(game, out=tmp_path, tiered=True, tol=1e-6)
    notes: list[str] = []
    sol = solve(game, out=tmp_path, tiered=True, tol=1e-12, notes=notes)
    assert any("not reused" in n and "1e-06" in n for n in notes), notes
    assert sol.meta["tolerance"] == 1e-12
    # an unfinished run at 1e-6 is not resumed by a solve at 1e-12
    folder = tmp_path / game.name / game.variant.variant_id()
    run = tiered._start_or_resume(game, folder, True, False, [], tol=1e-6)
    notes = []
    run2 = tiered._start_or_resume(game, folder, True, False, notes, tol=1e-12)
    assert run2.run_id != run.run_id and any("tolerance 1e-06" in n for n in notes), notes


def test_low_memory_is_refused_for_dice_in_one_line(tmp_path, capsys):
    from tests.clirun import run

    code, _, err = run(capsys, "solve", "carrots", "--preset", "3x3", "--tiered", "--low-memory",
                       "--out", str(tmp_path))
    assert code != 0
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "drop --low-memory" in lines[0], err
    assert not any(tmp_path.iterdir())


@pytest.mark.slow
@pytest.mark.parametrize("extra", [{}, {"pass": "off", "atom_black": "off"}])
def test_carrots_3x3_tier_by_tier_same_as_whole_graph(tmp_path, extra):
    """Carrots 3x3 (and a rules variant of it) tier by tier equals the whole-graph table, and
    both equal the value-iteration core run on the whole graph in one piece (no components, no
    boundary: the independent reference, since both tables now go through
    solver.engines.components)."""
    from solver.engines.enumerate import enumerate_positions
    from solver.engines.value_iteration import value_iteration

    game = __import__("solver.games.carrots", fromlist=["Carrots"]).Carrots.from_params(
        {"size": 3, "colours": 1, "per_colour": 1, "group": 2, **extra})
    whole = solve(game, out=tmp_path / "whole", tiered=False, write_edges=False)
    tsol = solve(game, out=tmp_path / "tiered", tiered=True)
    assert tsol.meta["certified"]
    _same_tables(whole.positions.sort("key"), tsol.positions)
    assert tiered.verify_tiered(game, tmp_path / "tiered" / game.name / game.variant.variant_id()) == []
    graph = enumerate_positions(game)
    one_piece = value_iteration(graph)
    assert one_piece.stats["certified"]
    assert np.array_equal(graph.keys, tsol.positions["key"].to_numpy())
    assert np.abs(one_piece.value - tsol.positions["value"].to_numpy()).max() < TOL


def test_report_of_a_tiered_dice_table_equals_the_whole_graph_report(tmp_path):
    """The report regenerates a tiered table's moves with their probabilities: every number
    (exact random play, perfect-play lengths, setups) equals the whole-graph report's."""
    from tests.test_tiered import assert_same_reports

    game = TieredDiceRace.from_params({"target": 4})
    whole = solve(game, out=tmp_path / "w", tiered=False)
    tsol = solve(game, out=tmp_path / "t", tiered=True)
    lines = assert_same_reports(whole, tsol, tmp_path)
    assert any("value_iteration (tiered)" in line for line in lines)


def test_carrots_4x4_is_refused_at_once_by_what_was_measured(tmp_path, capsys, monkeypatch):
    """Carrots 4x4 goes tier by tier by default; its largest tier measured (50.7M positions) now
    fits value iteration, but the variant (its largest tier some 4e10-7e10 positions by a formula
    checked on the tiers measured) is not expected to finish here: one line, before any work,
    saying what was measured and how to try anyway."""
    from tests.clirun import run

    monkeypatch.setattr(memory, "available_memory", lambda: 22 * 2**30)
    code, _, err = run(capsys, "solve", "carrots", "--preset", "4x4", "--out", str(tmp_path))
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert "not expected to finish here" in lines[0] and "7e10 positions" in lines[0]
    assert "--ignore-estimate" in lines[0]
    assert not list(tmp_path.rglob("*.npy"))


def test_carrots_4x4_tier_2_alone_would_fit_chance_tiers_now(monkeypatch):
    """The estimate of the tiers measured: the largest (50,693,916 positions) at
    BYTES_PER_TIER_POSITION fits 22 GB (it did not at 487 bytes a position)."""
    monkeypatch.setattr(memory, "available_memory", lambda: 22 * 2**30)
    game = __import__("solver.games.carrots", fromlist=["Carrots"]).Carrots.from_params(
        {"size": 4, "colours": 1, "per_colour": 1, "group": 3})
    est = tiered.estimate(game)
    assert est["at_least"] and est["largest_tier"] == 50_693_916
    assert est["memory"] < 22 * 2**30 < 487 * 50_693_916


def test_list_says_carrots_4x4_is_not_expected_to_finish_tier_by_tier_either(capsys, monkeypatch):
    from tests.clirun import run

    monkeypatch.setattr(memory, "available_memory", lambda: 22 * 2**30)
    code, out, _ = run(capsys, "list", "carrots")
    line = next(x for x in out.splitlines() if "too large" in x)
    assert code == 0 and "tier by tier not expected to finish here either" in line and "3.5e9" in line
    code, out, _ = run(capsys, "list", "override")
    assert code == 0 and "tier by tier" not in out.split("too large")[0] and "solved tier by tier, out of core" in out


@pytest.mark.parametrize("point", ["tier-discovered#4", "tier-solved#3", "write:tier-5.parquet"])
def test_killed_dice_solve_resumes_to_the_same_table(tmp_path, point):
    """SIGKILL at a step of a tiered dice solve: the same call again resumes and ends with the
    table of an uninterrupted run."""
    import os
    import signal
    import subprocess
    import sys

    repo = Path(__file__).resolve().parent.parent
    script = ("from solver.pipeline import tiered; from tests.test_tiered_chance import TieredDiceRace; "
              f"tiered.solve_tiered(TieredDiceRace.from_params({{'target': 5}}), out={str(tmp_path / 'k')!r}, "
              "workers=1)")
    env = {**os.environ, "PYRAMIDS_FAULT": f"KILL@{point}", "PYTHONPATH": str(repo)}
    killed = subprocess.run([sys.executable, "-c", script], env=env, cwd=repo, capture_output=True, text=True,
                            timeout=300)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    game = TieredDiceRace.from_params({"target": 5})
    notes: list[str] = []
    tiered.solve_tiered(game, out=tmp_path / "k", workers=1, notes=notes)
    assert any("resuming" in n for n in notes), notes
    tiered.solve_tiered(game, out=tmp_path / "ref", workers=1)
    a, b = load(game, out=tmp_path / "ref").positions, load(game, out=tmp_path / "k").positions
    assert a.equals(b)


def test_a_large_chance_tier_says_how_far_value_iteration_is(tmp_path, monkeypatch) -> None:
    # inside a chance tier: the boundary read, then value iteration chunk by chunk (components
    # never cut), in the solve's progress lines (the threshold lowered for this small game)
    import sys

    lines: list[str] = []
    monkeypatch.setattr(tierwork, "STEP_MIN_POSITIONS", 1)
    monkeypatch.setattr(tiered_chance, "CHUNK_MIN", 2)
    monkeypatch.setattr(tiered_chance, "CHUNK_MAX", 2)
    monkeypatch.setattr(tiered, "LOG_EVERY", 0.0)
    monkeypatch.setattr(sys, "stderr", type("Log", (), {"write": lambda self, s: lines.append(s),
                                                         "flush": lambda self: None,
                                                         "isatty": lambda self: False})())
    solve(TieredDiceRace.from_params({"target": 4}), out=tmp_path, tiered=True, progress="lines")
    text = "".join(lines)
    assert re.search(r"> [^>]*\(reading \d+ positions of finished tiers\)", text), text
    found = re.findall(r"\(value iteration: (\d+) of (\d+) chunks of components solved", text)
    assert found and all(int(k) <= int(n) for k, n in found) and any(int(k) > 0 for k, _ in found), text
