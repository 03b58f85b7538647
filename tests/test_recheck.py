"""`pyramids verify`: a stored table checked against the rules (solver/pipeline/recheck.py), and
the proven bounds re-proven from their stored strategies (bounds.recheck_bounds).

Each check is shown to pass on a table the toolkit wrote and to fail on the same table with
one stored number changed; the re-proof of the bounds is compared with what the solve stored on
random recursive games (independently shown sound in tests/test_bounds.py).
"""

from __future__ import annotations

import json
import random

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings, strategies as st

import solver.engines.bounds as bounds_module
from solver.api import load, solve, verify
from solver.core.game import NodeKind
from solver.engines.bounds import prove_bounds, recheck_bounds
from solver.engines.value_iteration import value_iteration
from solver.errors import TableError
from solver.games import make_game
from solver.pipeline import recheck
from tests.clirun import run
from tests.test_simultaneous import build, random_game
from tests.budget import examples

PETAL_4 = ["petal", "--set", "petals=4", "--set", "run=2", "--set", "per_size=1"]


def moves_of(graph, b) -> np.ndarray:
    decision = np.asarray(graph.kind) == int(NodeKind.DECISION)
    moves = np.where(np.asarray(graph.to_move) == 0, b.lower_moves, b.upper_moves)
    return np.where(decision, moves, -1)


@pytest.mark.parametrize("exact", [True, False], ids=["fractions", "float64"])
@settings(max_examples=examples(25), deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(5, 9))
def test_the_stored_strategies_prove_the_stored_bounds(seed: int, n: int, exact: bool) -> None:
    # the intervals prove_bounds returns are what the strategies it returns prove, evaluated
    # again from nothing else (with other starting replies: to rounding)
    graph = build(random_game(random.Random(seed), n, cyclic=True))
    sol = value_iteration(graph, tol=1e-11, max_sweeps=400)
    old = bounds_module.EXACT_ROWS
    bounds_module.EXACT_ROWS = old if exact else 0
    try:
        b = prove_bounds(graph, sol.strategies, sol.best)
        lo, hi, proven = recheck_bounds(graph, b.lower, b.upper, moves_of(graph, b))
    finally:
        bounds_module.EXACT_ROWS = old
    assert b.stats["proven"] and proven
    assert np.all(lo <= b.lo + 1e-12) and np.all(hi >= b.hi - 1e-12)
    assert np.all(b.lo <= lo + 1e-12) and np.all(b.hi >= hi - 1e-12)


def test_a_worse_strategy_proves_less() -> None:
    # the re-proof evaluates the strategies it is given, not the table's numbers: at every
    # secret choice player 0 plays his first action only, a strategy no better than the stored
    # one anywhere, and strictly worse somewhere on this game
    graph = build(random_game(random.Random(7), 8, cyclic=True))
    sol = value_iteration(graph, tol=1e-11, max_sweeps=400)
    b = prove_bounds(graph, sol.strategies, sol.best)
    pure = {s: np.eye(len(x))[0] for s, x in b.lower.items()}
    lo, hi, proven = recheck_bounds(graph, pure, b.upper, moves_of(graph, b))
    assert proven
    assert np.all(lo <= b.lo + 1e-12)
    assert np.array_equal(hi, b.hi) or np.allclose(hi, b.hi, atol=1e-12)
    assert np.any(lo < b.lo - 1e-6)


@pytest.fixture(scope="module")
def petal4(tmp_path_factory):
    out = tmp_path_factory.mktemp("petal4")
    game = make_game("petal", petals=4, run=2, per_size=1)
    solve(game, out=out)
    return game, out


def test_verify_re_proves_a_secret_choice_table(capsys, petal4) -> None:
    game, out = petal4
    code, text, err = run(capsys, "verify", *PETAL_4, "--out", str(out), "--json")
    assert code == 0, text + err
    d = json.loads(text)
    stored = load(game, out=out)
    r = int(stored.meta["root_row"])
    assert d["ok"] and d["checked"] == "bounds" and d["problems"] == []
    assert d["positions"] == stored.meta["counts"]["positions"]
    assert d["excess"] <= d["slack"] == recheck.RECHECK_SLACK
    lo, hi = d["value_interval"]
    assert abs(lo - stored.column("value_lo")[r]) <= 1e-12 and abs(hi - stored.column("value_hi")[r]) <= 1e-12
    code, text, _ = run(capsys, "verify", *PETAL_4, "--out", str(out))
    assert code == 0 and text.startswith("verified: ") and "proven by its stored strategies" in text
    assert len(text.strip().splitlines()) == 1
    v = verify(game, out=out)  # the Python API: the same check
    assert v.ok and v.checked == "bounds" and v.details["value_interval"] == d["value_interval"]


def folder_of(game, out):
    """The table folder of ``game`` under ``out``."""
    from solver.tables import variant_dir

    return variant_dir(game.name, game.variant.variant_id(), root=out, symmetry=True)


def rewrite(game, out, change) -> None:
    """The stored positions table of ``game`` rewritten with ``change(frame) -> frame`` (its
    metadata kept): a damaged table as a user might hold one."""
    from solver.tables import POSITIONS, read_parquet, write_parquet

    path = folder_of(game, out) / POSITIONS
    df, meta = read_parquet(path)
    write_parquet(change(df), path, meta)


def copy_of(game, out, tmp_path):
    """A copy of ``game``'s table folder under ``tmp_path`` (to damage without touching ``out``)."""
    import shutil

    dst = tmp_path / "copy"
    shutil.copytree(folder_of(game, out), folder_of(game, dst))
    return dst


def _bounds_verdict(game, out, change):
    """The bounds check on the stored table with ``change(positions) -> positions`` applied."""
    sol = load(game, out=out)
    graph = recheck._graph_of(game, sol, False)
    return recheck._verify_bounds(game, graph, change(sol.positions.clone()), sol.meta, False)


def test_verify_catches_a_bound_claimed_beyond_its_proof(petal4) -> None:
    game, out = petal4

    def weaken(df):
        r = int(load(game, out=out).meta["root_row"])
        lo = df["value_lo"].to_numpy().copy()
        lo[np.arange(len(lo)) != r] -= 1e-10  # true but weaker claims (still within the tolerance): proven
        return df.with_columns(value_lo=lo)

    assert _bounds_verdict(game, out, weaken).problems == []

    def claim_more(df):
        hi = df["value_hi"].to_numpy().copy()
        i = int(np.flatnonzero(hi > -1 + 1e-6)[0])
        hi[i] -= 1e-6  # the upper bound claimed lower than player 2's strategy proves
        return df.with_columns(value_hi=hi)

    v = _bounds_verdict(game, out, claim_more)
    assert len(v.problems) >= 1 and "more than their strategies prove" in v.problems[0]


def test_verify_catches_a_lower_bound_claimed_beyond_its_proof_on_disk(capsys, petal4, tmp_path) -> None:
    # through the command line, on a table rewritten on disk: problem lines, NOT verified, exit 1
    game, out = petal4
    out = copy_of(game, out, tmp_path)

    def raise_lo(df):
        lo, hi = df["value_lo"].to_numpy().copy(), df["value_hi"].to_numpy()
        i = int(np.flatnonzero(hi - lo > 1e-3)[0]) if (hi - lo > 1e-3).any() else int(np.argmax(lo < 1))
        lo[i] += 1e-6
        return df.with_columns(value_lo=lo)

    rewrite(game, out, raise_lo)
    code, text, _ = run(capsys, "verify", *PETAL_4, "--out", str(out))
    lines = text.strip().splitlines()
    assert code == 1 and lines[-1].startswith("NOT verified: ") and lines[0].startswith("problem: stored bounds claim")
    code, text, _ = run(capsys, "verify", *PETAL_4, "--out", str(out), "--json")
    d = json.loads(text)
    assert code == 1 and d["ok"] is False and len(d["problems"]) == 1 and d["excess"] > d["slack"]


@pytest.mark.parametrize("column", ["value_lo", "value_hi", "value"])
def test_verify_refuses_missing_numbers(capsys, petal4, tmp_path, column) -> None:
    # NaN or null where a number is claimed is a problem, never a pass
    game, out = petal4
    out = copy_of(game, out, tmp_path)
    rewrite(game, out, lambda df: df.with_columns(pl.when(pl.int_range(pl.len()) == 3).then(None)
                                                  .otherwise(pl.col(column)).alias(column)))
    code, text, err = run(capsys, "verify", *PETAL_4, "--out", str(out), "--json")
    d = json.loads(text)
    assert code == 1 and any(f"no finite {column}" in p for p in d["problems"]), (d, err)
    v = _bounds_verdict(game, petal4[1], lambda df: df.with_columns(
        pl.Series(column, np.full(df.height, np.nan))))
    assert any(f"no finite {column}" in p for p in v.problems)


def test_verify_refuses_a_proving_move_or_mix_that_is_not_one(petal4) -> None:
    # a proving move out of range (another row's move, or past every edge) and a mix of the wrong
    # length are problems: the strategy is not evaluated (it once could crash the process)
    game, out = petal4
    sol = load(game, out=out)
    decision = np.flatnonzero(sol.column("kind") == int(NodeKind.DECISION))
    i = int(decision[0])
    for bad in (int(sol.column("num_moves")[i]), 10**6, -1):
        def move(df, bad=bad):
            m = df["proof_move"].to_numpy().copy()
            m[i] = bad
            return df.with_columns(pl.Series("proof_move", m, dtype=df["proof_move"].dtype))

        v = _bounds_verdict(game, out, move)
        assert len(v.problems) == 1 and "no proving move among their moves" in v.problems[0], v.problems
    sims = np.flatnonzero(sol.column("kind") == int(NodeKind.SIMULTANEOUS))
    for wrong in ([1.0], [0.5, float("nan")] + [0.0] * 10, None):
        mixes = sol.positions["proof_mix_2"].to_list()
        mixes[int(sims[0])] = wrong
        v = _bounds_verdict(game, out, lambda df, m=mixes: df.with_columns(
            pl.Series("proof_mix_2", m, dtype=df["proof_mix_2"].dtype)))
        assert len(v.problems) == 1 and "no proper proof_mix_2" in v.problems[0], v.problems


def test_verify_catches_value_player1_off_the_value(petal4) -> None:
    game, out = petal4
    v = _bounds_verdict(game, out, lambda df: df.with_columns(value_player1=pl.col("value_player1") * 0.5))
    assert v.problems == ["value_player1 is not the value seen from Player 1's side"]


def test_verify_catches_a_wrong_side_to_move(petal4) -> None:
    game, out = petal4
    sol = load(game, out=out)
    graph = recheck._graph_of(game, sol, False)
    player = sol.positions["player"].to_numpy().copy()
    player[5] = 1 - player[5]
    assert any("wrong side to move" in p for p in recheck._same_rows(
        graph, sol.positions.with_columns(pl.Series("player", player, dtype=pl.UInt8))))
    assert recheck._same_rows(graph, sol.positions) == []


def test_verify_catches_a_value_outside_its_proven_interval(petal4) -> None:
    game, out = petal4

    def move_value(df):
        value = df["value"].to_numpy().copy()
        hi = df["value_hi"].to_numpy()
        i = int(np.flatnonzero(hi < 1 - 1e-3)[0])
        value[i] = hi[i] + 1e-3
        return df.with_columns(value=value)

    v = _bounds_verdict(game, out, move_value)
    assert any("outside their proven intervals" in p for p in v.problems)


def test_verify_catches_a_weaker_proving_strategy(petal4) -> None:
    # a stored mix changed to another one: what it proves is recomputed, so the stored bounds
    # (proven by the old mix) are no longer all proven -- or, where the change happens to cost
    # nothing, still are; on this game some change of one mix costs something
    game, out = petal4
    sol = load(game, out=out)
    kinds = sol.column("kind")
    sims = np.flatnonzero(kinds == int(NodeKind.SIMULTANEOUS))
    caught = 0
    for s in sims.tolist():
        mixes = sol.positions["proof_mix_1"].to_list()
        k = len(mixes[s])
        for a in range(k):
            changed = list(mixes)
            changed[s] = [1.0 if j == a else 0.0 for j in range(k)]
            if np.allclose(changed[s], mixes[s]):
                continue
            v = _bounds_verdict(game, out, lambda df, c=changed: df.with_columns(
                pl.Series("proof_mix_1", c, dtype=df["proof_mix_1"].dtype)))
            caught += bool(v.problems)
        if caught:
            break
    assert caught


def test_verify_a_deterministic_table_and_a_changed_value(capsys, tmp_path) -> None:
    args = ["override", "--set", "size=2", "--set", "line=2", "--set", "per_size=1", "--out", str(tmp_path)]
    assert run(capsys, "solve", *args[:-2], "--out", str(tmp_path), "--no-tiered", "--quiet")[0] == 0
    code, text, _ = run(capsys, "verify", *args, "--json")
    d = json.loads(text)
    assert code == 0 and d["ok"] and d["checked"] == "values"
    game = make_game("override", size=2, line=2, per_size=1)
    sol = load(game, out=tmp_path)
    graph = recheck._graph_of(game, sol, False)
    value = sol.positions["value"].to_numpy().copy()
    i = int(np.flatnonzero(sol.column("kind") == int(NodeKind.DECISION))[0])
    value[i] = (value[i] + 1) % 3
    v = recheck._verify_values(game, graph, sol.positions.with_columns(value=value))
    assert v.problems


def test_verify_a_tiered_table(capsys, tmp_path) -> None:
    args = ["override", "--set", "size=2", "--set", "line=2", "--set", "per_size=2", "--out", str(tmp_path)]
    assert run(capsys, "solve", *args, "--tiered", "--quiet")[0] == 0
    code, text, _ = run(capsys, "verify", *args, "--json")
    d = json.loads(text)
    assert code == 0 and d["ok"] and d["checked"] == "tiers" and d["positions"] > 100
    # a tier file storing the wrong side to move at one position
    from solver.pipeline import tiered

    game = make_game("override", size=2, line=2, per_size=2)
    folder = folder_of(game, tmp_path)
    manifest = json.loads((folder / tiered.MANIFEST).read_text())
    entry = max(manifest["tiers"], key=lambda t: t["positions"])
    path = folder / entry["file"]
    df, meta = pl.read_parquet(path), tiered.read_meta(path)
    player = df["player"].to_numpy().copy()
    player[0] = 1 - player[0]
    tiered.write_parquet(df.with_columns(pl.Series("player", player, dtype=pl.UInt8)), path, meta)
    code, text, _ = run(capsys, "verify", *args, "--json")
    d = json.loads(text)
    assert code == 1 and any("wrong side to move" in p for p in d["problems"]), d
    # the start: where the table says it is, the rules' start
    manifest["root_row_in_tier"] = int(manifest["root_row_in_tier"]) + 1
    (folder / tiered.MANIFEST).write_text(json.dumps(manifest))
    problems = tiered.verify_tiered(game, folder)
    assert any("the start is not at the row" in p for p in problems), problems


def test_verify_a_dice_table(capsys, monkeypatch, tmp_path) -> None:
    from solver import games

    monkeypatch.setitem(games.REGISTRY, "dicerace", "tests.toygames:DiceRace")
    args = ["dicerace", "--set", "target=3", "--out", str(tmp_path)]
    assert run(capsys, "solve", *args, "--quiet")[0] == 0
    code, text, _ = run(capsys, "verify", *args, "--json")
    d = json.loads(text)
    assert code == 0 and d["ok"] and d["checked"] == "expected"
    game = make_game("dicerace", target=3)
    for change in (lambda v: v + 1e-6, lambda v: np.nan):
        def alter(df, change=change):
            value = df["value"].to_numpy().astype(np.float64).copy()
            value[0] = change(value[0])
            return df.with_columns(pl.Series("value", value))

        rewrite(game, tmp_path, alter)
        code, text, _ = run(capsys, "verify", *args, "--json")
        d = json.loads(text)
        # (the start's equation, and its win minus loss probability no longer its value)
        assert code == 1 and "break their equation" in d["problems"][0] and "win/loss" in d["problems"][1], d


def test_verify_a_table_of_real_payoffs(capsys, tmp_path) -> None:
    args = ["--game", "tests.test_payoffs:DicePoints", "--out", str(tmp_path)]
    assert run(capsys, "solve", *args, "--quiet")[0] == 0
    code, text, _ = run(capsys, "verify", *args, "--json")
    d = json.loads(text)
    assert code == 0 and d["ok"] and d["checked"] == "expected", d
    from tests.test_payoffs import DicePoints

    game = DicePoints()
    sol = load(game, out=tmp_path)
    graph = recheck._graph_of(game, sol, False)
    from solver.engines.verify import check_expected

    value = sol.positions["value"].to_numpy().astype(np.float64).copy()
    end = int(np.flatnonzero(sol.column("kind") == int(NodeKind.TERMINAL))[0])
    value[end] += 1.0  # an end's payoff changed: its equation (the payoff) and its parents' break
    problems = check_expected(graph, sol.positions.with_columns(pl.Series("value", value)), graph.n)
    assert len(problems) == 1 and "break their equation" in problems[0]


def test_verify_without_a_table_says_so_in_one_line(capsys, tmp_path) -> None:
    code, out, err = run(capsys, "verify", *PETAL_4, "--out", str(tmp_path))
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "solve" in err
    assert not list(tmp_path.iterdir())  # nothing solved, nothing written


def test_verify_a_random_setup_table_and_a_changed_mean(capsys, tmp_path) -> None:
    args = ["greener", "--set", "rows=2", "--set", "cols=3", "--set", "black=2", "--set", "white=2",
            "--out", str(tmp_path)]
    assert run(capsys, "solve", *args, "--quiet")[0] == 0
    game = make_game("greener", rows=2, cols=3, black=2, white=2)
    sol = load(game, out=tmp_path)
    assert sol.meta["solver"] == "retrograde+setups"
    code, text, _ = run(capsys, "verify", *args, "--json")
    d = json.loads(text)
    assert code == 0 and d["ok"] and d["checked"] == "setups", d
    graph = recheck._graph_of(game, sol, False)
    root = int(sol.meta["root_row"])
    for name, delta in (("expected", 1e-6), ("expected_margin", 0.5)):
        col = sol.positions[name].to_numpy().astype(np.float64).copy()
        col[root] += delta
        v = recheck._verify_setups(game, graph, sol.positions.with_columns(pl.Series(name, col)), sol.meta,
                                   sol.setups)
        assert len(v.problems) == 1 and "break their mean" in v.problems[0], v.problems
    # a value below the setups: the decision rows are checked as a deterministic table
    value = sol.positions["value"].to_numpy().copy()
    i = int(np.flatnonzero(sol.column("kind") == int(NodeKind.DECISION))[0])
    value[i] = (value[i] + 1) % 4
    v = recheck._verify_setups(game, graph, sol.positions.with_columns(pl.Series("value", value)), sol.meta,
                               sol.setups)
    assert any("wrong value" in p for p in v.problems)
    # the setups table and the metadata's expected result are checked too
    assert sol.setups is not None
    names = sol.setups["value"].to_list()
    names[0] = "win" if names[0] != "win" else "lose"
    v = recheck._verify_setups(game, graph, sol.positions, sol.meta, sol.setups.with_columns(pl.Series("value", names)))
    assert v.problems == ["the setups table's values are not its setups'"]
    assert recheck._verify_setups(game, graph, sol.positions, sol.meta, sol.setups).problems == []
    v = recheck._verify_setups(game, graph, sol.positions, {**sol.meta, "expected_result": 0.5 + sol.meta["expected_result"]},
                               sol.setups)
    assert len(v.problems) == 1 and "metadata's expected" in v.problems[0], v.problems


def test_verify_refuses_a_table_it_does_not_cover(capsys, tmp_path) -> None:
    # 3-4 players (the paranoid reduction): not covered yet, said in one line
    args = ["blam", "--set", "rows=2", "--set", "cols=2", "--set", "players=3", "--set", "per_size=1", "--out", str(tmp_path)]
    assert run(capsys, "solve", *args, "--quiet")[0] == 0
    code, out, err = run(capsys, "verify", *args)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "does not cover" in err
    # nor does the tiered solver take them (its two-sided values would answer another question)
    code, out, err = run(capsys, "solve", *args[:-2], "--out", str(tmp_path / "t"), "--tiered")
    assert code == 2 and "3 players" in err and len(err.strip().splitlines()) == 1
