"""Zero-sum matrix games (solver/engines/matrix_game.py) against games solved by hand."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st
from hypothesis.extra.numpy import arrays

from solver.engines.matrix_game import (
    SAME_PROBABILITY,
    MatrixGameSolution,
    optimal_strategy_ranges,
    solve_matrix_game,
    solve_matrix_games,
    solve_matrix_games_by_shape,
)
from tests.budget import examples


def guarantees(a: np.ndarray, sol: MatrixGameSolution) -> tuple[float, float]:
    """(what the row strategy guarantees against every pure column, what the column strategy
    concedes at most against every pure row)."""
    return float((sol.row @ a).min()), float((a @ sol.col).max())


def test_saddle_point() -> None:
    # Row minima: 1, 2, -1 -> the row player's best guarantee is 2 (row 1).
    # Column maxima: 4, 2, 5 -> the column player's best cap is 2 (column 1).
    # They meet: saddle point at (1, 1), value 2, pure strategies.
    a = np.array([[1, 1, 5], [3, 2, 4], [4, -1, 0]], dtype=float)
    sol = solve_matrix_game(a)
    assert sol.value == pytest.approx(2.0, abs=1e-12)
    assert sol.row == pytest.approx([0, 1, 0], abs=1e-12)
    assert sol.col == pytest.approx([0, 1, 0], abs=1e-12)
    batch = solve_matrix_games(a[None])
    assert batch.saddle[0] and batch.lp_solves == 0 and batch.value[0] == 2.0


def test_dominated_strategy() -> None:
    # Row 2 (-1, -1) is strictly dominated by row 0 (2, 0): never played. What is left,
    # [[2, 0], [0, 1]], has no saddle point: x*2 = (1 - x)*1 -> x = 1/3, value 2/3;
    # y*2 = (1 - y) -> y = 1/3 as well.
    a = np.array([[2, 0], [0, 1], [-1, -1]], dtype=float)
    sol = solve_matrix_game(a)
    assert sol.value == pytest.approx(2 / 3, abs=1e-12)
    assert sol.row == pytest.approx([1 / 3, 2 / 3, 0], abs=1e-12)
    assert sol.col == pytest.approx([1 / 3, 2 / 3], abs=1e-12)


def test_two_by_two_fully_mixed() -> None:
    # [[3, -1], [-2, 1]]: row minima -1, -2 (maxmin -1); column maxima 3, 1 (minmax 1): no
    # saddle point. The row player makes the column player indifferent:
    #   3x - 2(1-x) = -x + (1-x)  ->  5x - 2 = 1 - 2x  ->  x = 3/7,
    # value 3*3/7 - 2*4/7 = 1/7. The column player: 3y - (1-y) = -2y + (1-y) -> y = 2/7.
    a = np.array([[3, -1], [-2, 1]], dtype=float)
    for sol in (solve_matrix_game(a), solve_matrix_games(a[None])[0]):
        assert sol.value == pytest.approx(1 / 7, abs=1e-12)
        assert sol.row == pytest.approx([3 / 7, 4 / 7], abs=1e-12)
        assert sol.col == pytest.approx([2 / 7, 5 / 7], abs=1e-12)


def test_rock_paper_scissors() -> None:
    # Skew-symmetric (A = -A^T): the value is 0 (each player can copy the other's strategy);
    # the only optimal strategy is uniform (against any other, one reply gains).
    a = np.array([[0, -1, 1], [1, 0, -1], [-1, 1, 0]], dtype=float)
    sol = solve_matrix_game(a)
    assert sol.value == pytest.approx(0.0, abs=1e-12)
    assert sol.row == pytest.approx([1 / 3] * 3, abs=1e-12)
    assert sol.col == pytest.approx([1 / 3] * 3, abs=1e-12)


def test_rectangular_two_by_three() -> None:
    # [[1, -1, 2], [-1, 1, 3]]: column 2 is dominated for the column player (it pays more
    # than column 0 and column 1 in every row). Left: matching pennies [[1, -1], [-1, 1]],
    # value 0, x = (1/2, 1/2), y = (1/2, 1/2, 0).
    a = np.array([[1, -1, 2], [-1, 1, 3]], dtype=float)
    sol = solve_matrix_game(a)
    assert sol.value == pytest.approx(0.0, abs=1e-12)
    assert sol.row == pytest.approx([0.5, 0.5], abs=1e-12)
    assert sol.col == pytest.approx([0.5, 0.5, 0.0], abs=1e-12)
    # its transpose negated is the same game seen by the other player: value 0 again
    other = solve_matrix_game(-a.T)
    assert other.value == pytest.approx(0.0, abs=1e-12)
    assert other.row == pytest.approx([0.5, 0.5, 0.0], abs=1e-12)


def test_invalid_input_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="payoff matrix"):
        solve_matrix_game(np.zeros(3))
    with pytest.raises(ValueError, match="at least one row"):
        solve_matrix_game(np.zeros((0, 2)))
    with pytest.raises(ValueError, match="finite"):
        solve_matrix_game([[0.0, np.nan]])
    with pytest.raises(ValueError, match="k x m x n"):
        solve_matrix_games(np.zeros((2, 2)))


matrices = st.tuples(st.integers(1, 5), st.integers(1, 5)).flatmap(
    lambda s: arrays(np.float64, s, elements=st.floats(-10, 10, allow_nan=False, allow_infinity=False))
)


@settings(max_examples=examples(150), deadline=None)
@given(matrices)
def test_strategies_guarantee_the_value(a: np.ndarray) -> None:
    # 1e-9 for payoffs in [-1, 1] (the engine's case); relative to the payoffs' size beyond
    # (HiGHS's tolerances are relative to the scale of the game: entries 1e-8 apart next to
    # entries of size 60 are beyond what the LP resolves)
    eps = 1e-9 * max(1.0, float(np.abs(a).max()))
    sol = solve_matrix_game(a)
    lo, hi = guarantees(a, sol)
    assert lo >= sol.value - eps
    assert hi <= sol.value + eps
    assert np.all(sol.row >= 0) and sol.row.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.all(sol.col >= 0) and sol.col.sum() == pytest.approx(1.0, abs=1e-12)


@settings(max_examples=examples(60), deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 30), st.integers(0, 2**32 - 1), st.booleans())
def test_batch_equals_single(m: int, n: int, k: int, seed: int, integer: bool) -> None:
    rng = np.random.default_rng(seed)
    a = rng.integers(-2, 3, size=(k, m, n)).astype(float) if integer else rng.normal(size=(k, m, n))
    batch = solve_matrix_games(a, chunk=7)  # several chunks
    eps = 1e-9 * max(1.0, float(np.abs(a).max()))
    for g in range(k):
        single = solve_matrix_game(a[g])
        assert batch.value[g] == pytest.approx(single.value, abs=eps)
        lo, hi = guarantees(a[g], batch[g])
        assert lo >= single.value - eps and hi <= single.value + eps


@settings(max_examples=examples(8), deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_near_degenerate_games_are_refined(seed: int) -> None:
    # entries near 0 that differ by ~1e-7 next to entries of size 6: in a big block HiGHS's
    # tolerances leave such games ~1e-6 off; re-solved one by one (_refine) they are within
    # ~5e-8 (measured on 31 seeds: about 4e-9 of the payoffs' range, the LP's limit here)
    rng = np.random.default_rng(seed)
    a = rng.choice([0, 1e-6, 1, -1, 6, -6], size=(300, 4, 4)) + rng.normal(size=(300, 4, 4)) * 1e-7
    batch = solve_matrix_games(a)
    lo = np.einsum("km,kmn->kn", batch.row, a).min(axis=1)
    hi = np.einsum("kmn,kn->km", a, batch.col).max(axis=1)
    assert np.all(lo >= batch.value - 1e-7) and np.all(hi <= batch.value + 1e-7)


def test_wide_games_are_refined_a_block_at_a_time(monkeypatch) -> None:
    """The games whose block-LP strategies prove the value only in a wide interval are re-solved
    together first (a few per LP), one by one only where that fails: the same bounds proven in
    far fewer LP calls than one per game (seed 3 of the near-degenerate games: 72 calls before)."""
    import solver.engines.matrix_game as mg

    rng = np.random.default_rng(3)
    a = rng.choice([0, 1e-6, 1, -1, 6, -6], size=(300, 4, 4)) + rng.normal(size=(300, 4, 4)) * 1e-7
    calls = {}
    for block in (1, mg._REFINE_BLOCK):
        monkeypatch.setattr(mg, "_REFINE_BLOCK", block)
        batch = solve_matrix_games(a)
        lo = np.einsum("km,kmn->kn", batch.row, a).min(axis=1)
        hi = np.einsum("kmn,kn->km", a, batch.col).max(axis=1)
        assert np.all(lo >= batch.value - 1e-7) and np.all(hi <= batch.value + 1e-7)
        calls[block] = batch.lp_calls
    assert calls[mg._REFINE_BLOCK] * 3 < calls[1]


def test_games_of_different_shapes() -> None:
    rng = np.random.default_rng(3)
    games = [rng.normal(size=s) for s in [(2, 3), (3, 3), (2, 3), (1, 4), (3, 3), (2, 2)]]
    sols = solve_matrix_games_by_shape(games)
    assert len(sols) == len(games)
    for a, sol in zip(games, sols):
        assert sol.value == pytest.approx(solve_matrix_game(a).value, abs=1e-9)
        assert sol.row.shape == (a.shape[0],) and sol.col.shape == (a.shape[1],)


# --- every optimal strategy, not one of them ---------------------------------------------------

def test_ranges_of_hand_worked_games():
    # matching pennies: one optimal strategy each, (1/2, 1/2)
    r = optimal_strategy_ranges([[1, -1], [-1, 1]])
    assert r.unique and r.value == pytest.approx(0.0)
    assert np.allclose(r.row_lo, 0.5) and np.allclose(r.row_hi, 0.5) and r.row_always.all()
    # the first row written twice: the row player's 1/2 on "heads" splits freely between the two
    # copies (each 0..1/2), "tails" is forced at 1/2; the column player is still forced to 1/2
    r = optimal_strategy_ranges([[1, -1], [1, -1], [-1, 1]])
    assert not r.unique
    assert np.allclose(r.row_lo, [0, 0, 0.5]) and np.allclose(r.row_hi, [0.5, 0.5, 0.5])
    assert r.row_always.tolist() == [False, False, True]
    assert np.allclose(r.col_lo, 0.5) and np.allclose(r.col_hi, 0.5)
    # [[3, -1], [-2, 4]]: x = (3/5, 2/5), y = (1/2, 1/2), value 1 (solved by hand)
    r = optimal_strategy_ranges([[3, -1], [-2, 4]])
    assert r.value == pytest.approx(1.0) and r.unique
    assert np.allclose(r.row_lo, [0.6, 0.4]) and np.allclose(r.col_hi, [0.5, 0.5])
    # a dominated row is never played; a column that is as good as another shares its weight
    r = optimal_strategy_ranges([[2, 2], [0, 0]])
    assert np.allclose(r.row_lo, [1, 0]) and np.allclose(r.row_hi, [1, 0])
    assert np.allclose(r.col_lo, [0, 0]) and np.allclose(r.col_hi, [1, 1])


@settings(max_examples=examples(60), deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(1, 5)),
              elements=st.integers(-3, 3).map(float)))
@example(np.array([[0., 0, 0, 0, -2], [3, 0, 0, -2, -2], [-2, 0, 0, -1, 2], [-1, 0, 0, 2, -3], [2, 0, 0, -2, -1]]))
def test_the_solver_strategy_lies_in_the_ranges_and_each_bound_is_attained(a):
    sol = solve_matrix_game(a)
    r = optimal_strategy_ranges(a)
    eps = 1e-7
    assert r.value == pytest.approx(sol.value, abs=1e-9)
    for z, lo, hi in ((sol.row, r.row_lo, r.row_hi), (sol.col, r.col_lo, r.col_hi)):
        assert np.all(lo <= hi + eps) and np.all(lo - eps <= z) and np.all(z <= hi + eps)
        assert lo.sum() <= 1 + eps and hi.sum() >= 1 - eps
    # the extremes are attained by strategies that are optimal: check one per bound directly
    from scipy.optimize import linprog

    m, n = a.shape
    for i in range(m):
        res = linprog(np.eye(m)[i] * -1, A_ub=-a.T, b_ub=np.full(n, -(sol.value - r.tol)),
                      A_eq=np.ones((1, m)), b_eq=[1], bounds=(0, 1), method="highs")
        x = res.x
        assert (a.T @ x).min() >= sol.value - 1e-7  # optimal
        # (the optimality slack r.tol lets a probability that is 0 in every exactly optimal
        # strategy reach about tol / the payoff gap, ~1e-7: ranges agree to SAME_PROBABILITY)
        assert x[i] == pytest.approx(r.row_hi[i], abs=SAME_PROBABILITY)


def test_the_reports_sentence_on_every_optimal_strategy() -> None:
    """Matching pennies with the row player's heads written twice: every optimal row strategy
    plays tails 1/2 and splits the other 1/2 freely between the two heads; the column player's
    mix (1/2, 1/2) is unique. The report's sentence says exactly that."""
    from analysis.report import optimal_set_sentence

    r = optimal_strategy_ranges([[1, -1], [1, -1], [-1, 1]])
    rows = {n: [float(r.row_lo[i]), float(r.row_hi[i])] for i, n in enumerate(["H1", "H2", "T"])}
    cols = {n: [float(r.col_lo[i]), float(r.col_hi[i])] for i, n in enumerate(["H", "T"])}
    assert optimal_set_sentence(rows, "Player 1") == (
        "every optimal strategy of Player 1 plays T with the probability shown, while H1, H2 vary "
        "between optimal strategies, each within its range")
    assert optimal_set_sentence(cols, "Player 2") == (
        "every optimal strategy of Player 2 plays H, T with the probability shown (its optimal mix is unique)")
    assert optimal_set_sentence({"a": [0.0, 1.0], "b": [0.0, 1.0]}, "X") == (
        "for X, a, b vary between optimal strategies, each within its range")
    assert optimal_set_sentence({"a": [1.0, 1.0], "b": [0.0, 0.0]}, "X") == (
        "every optimal strategy of X plays a with the probability shown and never plays b "
        "(its optimal mix is unique)")
