"""Metrics of analysis/metrics.py on small hand-built tables whose answers are worked out by hand.

Tables are built directly as polars DataFrames in the format of solver/tables.py (value codes:
0 lose, 1 draw, 2 tie, 3 win from the side to move; kind: 0 decision, 1 chance, 3 terminal).
A few tests also solve the toy games of tests/toygames.py to check the metrics on real tables.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from analysis import metrics as M
from solver.api import solve
from tests.toygames import W0, W1, Explicit, Subtraction

L, D, T, W = 0, 1, 2, 3  # value codes
DEC, CH, TERM = 0, 1, 3  # node kinds


def positions(rows: list[tuple], *, margin: list[int] | None = None) -> pl.DataFrame:
    """rows of (player, kind, ply, value, remoteness or None); keys are the row numbers."""
    n = len(rows)
    df = pl.DataFrame({
        "key": pl.Series(range(n), dtype=pl.UInt64),
        "player": pl.Series([r[0] for r in rows], dtype=pl.UInt8),
        "kind": pl.Series([r[1] for r in rows], dtype=pl.UInt8),
        "ply": pl.Series([r[2] for r in rows], dtype=pl.UInt16),
        "num_moves": pl.Series([0] * n, dtype=pl.UInt16),
        "value": pl.Series([r[3] for r in rows], dtype=pl.UInt8),
        "remoteness": pl.Series([r[4] for r in rows], dtype=pl.UInt16),
    })
    if margin is not None:
        df = df.with_columns(margin=pl.Series(margin, dtype=pl.Int16))
    return df


def edges(pairs: list[tuple], *, probs: list[float] | None = None) -> pl.DataFrame:
    df = pl.DataFrame({"src": pl.Series([p[0] for p in pairs], dtype=pl.UInt32),
                       "dst": pl.Series([p[1] for p in pairs], dtype=pl.UInt32)})
    if probs is not None:
        df = df.with_columns(prob=pl.Series(probs, dtype=pl.Float64))
    return df


def with_moves(pos: pl.DataFrame, e: pl.DataFrame) -> pl.DataFrame:
    """Fill num_moves from the edges (as the solver writes it)."""
    counts = np.bincount(e["src"].to_numpy(), minlength=pos.height)
    return pos.with_columns(num_moves=pl.Series(counts, dtype=pl.UInt16))


META = {"root_key": 0, "players": 2}


# --- value / remoteness / ply ---------------------------------------------------------------

def mixed_table() -> pl.DataFrame:
    # row: (player, kind, ply, value, remoteness)
    return positions([
        (0, CH, 0, D, None),     # 0 chance root: must be left out of value counts
        (0, DEC, 1, W, 1),       # 1 win in 1
        (1, DEC, 1, L, 2),       # 2 lose in 2
        (0, DEC, 2, T, 1),       # 3 tie in 1
        (1, DEC, 2, D, None),    # 4 draw
        (0, DEC, 2, D, None),    # 5 draw
        (1, TERM, 3, L, 0),      # 6 terminal loss
        (0, TERM, 3, L, 0),      # 7 terminal loss
        (1, TERM, 3, T, 0),      # 8 terminal tie
    ])


def test_value_remoteness_table_counts_by_hand():
    # Leaving out the chance row: remoteness 0 has 2 losses + 1 tie (rows 6, 7, 8); remoteness 1
    # has 1 win (row 1) + 1 tie (row 3); remoteness 2 one loss (row 2); the draw row holds the two
    # draws (rows 4, 5), which have no remoteness. Total 8 positions.
    t = M.value_remoteness_table(mixed_table())
    assert t["remoteness"].to_list() == [0, 1, 2, None]
    assert t["win"].to_list() == [0, 1, 0, 0]
    assert t["lose"].to_list() == [2, 0, 1, 0]
    assert t["tie"].to_list() == [1, 1, 0, 0]
    assert t["draw"].to_list() == [0, 0, 0, 2]
    assert t["total"].to_list() == [3, 2, 1, 2]
    assert int(t["total"].sum()) == 8


def test_value_by_ply_shares_by_hand():
    # ply 0 holds only the chance row (left out); ply 1: a win and a loss -> 1/2 each;
    # ply 2: a tie and two draws -> 1/3, 2/3; ply 3: two losses and a tie -> 2/3, 1/3.
    t = M.value_by_ply(mixed_table())
    assert t["ply"].to_list() == [1, 2, 3]
    assert t["positions"].to_list() == [2, 3, 3]
    assert t["win_share"].to_list() == pytest.approx([0.5, 0, 0])
    assert t["lose_share"].to_list() == pytest.approx([0.5, 0, 2 / 3])
    assert t["tie_share"].to_list() == pytest.approx([0, 1 / 3, 1 / 3])
    assert t["draw_share"].to_list() == pytest.approx([0, 2 / 3, 0])


# --- verdict --------------------------------------------------------------------------------

@pytest.mark.parametrize("code,rem,words,adv", [
    (W, 5, "first player (Player 1) wins in 5 plies", 1.0),
    (L, 4, "second player (Player 2) wins in 4 plies", -1.0),
    (T, 9, "tie after 9 plies", 0.0),
    (D, None, "never ends: a draw", 0.0),
])
def test_verdict_deterministic(code, rem, words, adv):
    # The root is row 0 (key 0, Player 1 = seat 0 to move); its value is the first player's.
    pos = positions([(0, DEC, 0, code, rem), (1, TERM, 1, L, 0)])
    v = M.verdict(pos, META)
    assert words in v.text
    assert v.advantage == adv
    assert v.remoteness == rem
    assert v.p_win == (1.0 if code == W else 0.0)


def test_verdict_names_seats_tied_to_their_number():
    # Named seats: the text calls them by name, each tied to its player number once; the short
    # form keeps the role words so that tables of different games compare.
    pos = positions([(0, DEC, 0, L, 4), (1, TERM, 1, L, 0)])
    v = M.verdict(pos, META, seat_names=("Black", "White"))
    assert v.text == ("With perfect play White (player 2) wins in 4 plies: Black (player 1, moves first) "
                      "loses whatever it does.")
    assert v.short == "second player wins in 4"
    seats = M.Seats.of(("Black", "White"), 0)
    assert seats.named and seats.who(1) == "White" and seats.full(0) == "Black (player 1, moves first)"
    plain = M.Seats.of(None, 0)
    assert not plain.named and plain.full(0) == "the first player (Player 1)" and plain.who(1) == "the second player"


def test_ply_tables_count_finished_positions():
    # mixed_table: ply 3 holds only terminal rows (2 losses and a tie); plies 1 and 2 none.
    t = M.value_by_ply(mixed_table())
    assert t["finished"].to_list() == [0, 0, 3]
    pos, _ = stochastic_tables()  # ply 1: the three terminals of the die and "safe"
    by = M.expected_by_ply(pos)
    assert by["finished"].to_list() == [0, 3]


def test_verdict_reports_forced_margin():
    # A scored game: the root's margin +3 is the best margin the first player can force.
    pos = positions([(0, DEC, 0, W, 3), (1, TERM, 1, L, 0)], margin=[3, -3])
    v = M.verdict(pos, META)
    assert v.margin == 3 and "+3" in v.text


def setup_tables() -> tuple[pl.DataFrame, pl.DataFrame]:
    # Row 0: the chance root (Player 1's perspective) deals setup 1 with probability 3/4 and
    # setup 2 with 1/4. Setup 1 has Player 1 to move and won in 3 (a first-player win); setup 2
    # has Player 2 to move and won in 2 -- a loss for the first player. Margins from the side to
    # move: +2 in setup 1 (Player 1), +4 in setup 2 (Player 2), i.e. -4 for the first player.
    pos = positions([
        (0, CH, 0, D, None),
        (0, DEC, 1, W, 3),
        (1, DEC, 1, W, 2),
    ], margin=[0, 2, 4]).with_columns(expected=pl.Series([0.5, 0.0, 0.0]))
    e = edges([(0, 1), (0, 2)], probs=[0.75, 0.25])
    return pos, e


def test_setups_from_tables_and_shares_by_hand():
    # First player's view: setup 1 is a win (same player to move), setup 2 a loss (the opponent
    # to move wins); shares by probability 3/4 win, 1/4 loss; expected result 3/4 - 1/4 = 1/2;
    # margins +2 (setup 1) and -4 (setup 2): expected margin 3/4*2 - 1/4*4 = 0.5.
    pos, e = setup_tables()
    s = M.setups_from_tables(pos, e, 0)
    assert s["value"].to_list() == ["win", "lose"]
    assert s["margin"].to_list() == [2, -4]
    summ = M.setup_summary(s)
    assert summ["shares"] == pytest.approx({"win": 0.75, "lose": 0.25, "tie": 0.0, "draw": 0.0})
    assert summ["counts"] == {"win": 1, "lose": 1, "tie": 0, "draw": 0}
    assert summ["expected"] == pytest.approx(0.5)
    assert summ["expected_margin"] == pytest.approx(0.5)
    v = M.verdict(pos, {**META, "solver": "retrograde+setups", "solution": "deterministic"}, edges=e)
    assert v.kind == "setups"
    assert "wins 75.0% of setups" in v.text and v.advantage == pytest.approx(0.5)


def test_verdict_stochastic():
    # A stochastic root: expected result +0.2 = 0.5 win - 0.3 loss; 20% neither.
    pos = pl.DataFrame({
        "key": pl.Series([0, 1], dtype=pl.UInt64), "player": pl.Series([0, 1], dtype=pl.UInt8),
        "kind": pl.Series([DEC, TERM], dtype=pl.UInt8), "ply": pl.Series([0, 1], dtype=pl.UInt16),
        "num_moves": pl.Series([1, 0], dtype=pl.UInt16), "value": [0.2, -1.0],
        "p_win": [0.5, 0.0], "p_loss": [0.3, 1.0],
    })
    v = M.verdict(pos, {**META, "solution": "stochastic"})
    assert v.kind == "stochastic" and v.advantage == pytest.approx(0.2)
    assert "+0.200" in v.text and "50.0%" in v.text and "30.0%" in v.text and "20.0%" in v.text


# --- moves ----------------------------------------------------------------------------------

def test_opening_moves_grouped_and_ordered():
    # Root (Player 1) has 4 moves: two reach row 1 (Player 2 to move, lost in 3 -> a win for the
    # mover), one reaches row 2 (Player 2 wins in 2 -> a loss), one row 3 (a draw).
    # Best first: the win (2 moves), the draw, the loss.
    pos = positions([(0, DEC, 0, W, 4), (1, DEC, 1, L, 3), (1, DEC, 1, W, 2), (1, DEC, 1, D, None)])
    e = edges([(0, 1), (0, 2), (0, 1), (0, 3)])
    t = M.opening_moves(pos, e, meta=META)
    assert t["dst"].to_list() == [1, 3, 2]
    assert t["moves"].to_list() == [2, 1, 1]
    assert t["value"].to_list() == ["win", "draw", "lose"]
    assert t["remoteness"].to_list() == [3, None, 2]


def test_move_values_keep_value_when_mover_moves_again():
    # Row 0 (Player 1) -> row 1 where Player 1 moves again and wins: a win for the mover (kept);
    # row 0 -> row 2 where Player 2 moves and wins: a loss for the mover (flipped).
    pos = positions([(0, DEC, 0, W, 2), (0, DEC, 1, W, 1), (1, DEC, 1, W, 1)])
    mv = M.move_values(pos, edges([(0, 1), (0, 2)]))
    assert mv["value"].to_list() == [W, L]


def difficulty_tables() -> tuple[pl.DataFrame, pl.DataFrame]:
    # Winning positions and their moves (mover's view):
    #   row 0 (P1, win): -> 1 (P2 loses: win), 2 (P2 loses: win), 3 (P2 wins: loss) => 2 of 3
    #   row 3 (P2, win): -> 5 (P1 loses: win), 6 (P1 has won: loss)             => 1 of 2
    #   row 4 (P1, win): -> 2 (P2 loses: win), its only legal move               => 1 of 1
    pos = positions([
        (0, DEC, 0, W, 3),     # 0
        (1, DEC, 1, L, 2),     # 1 -> 5... (a loss for P2 in 2)
        (1, TERM, 1, L, 0),    # 2
        (1, DEC, 1, W, 1),     # 3
        (0, DEC, 2, W, 1),     # 4
        (0, TERM, 2, L, 0),    # 5
        (0, TERM, 2, W, 0),    # 6
    ])
    e = edges([(0, 1), (0, 2), (0, 3), (1, 4), (3, 5), (3, 6), (4, 2)])
    return with_moves(pos, e), e


def test_decision_difficulty_by_hand():
    # Three winning decision positions (rows 0, 3, 4). Exactly one winning move in rows 3 and 4:
    # only-move share 2/3. Average share of winning moves (2/3 + 1/2 + 1) / 3 = 13/18. Row 4 has
    # a single legal move: forced share 1/3.
    pos, e = difficulty_tables()
    d = M.decision_difficulty(pos, e)
    assert d.positions == 3
    assert d.only_move_share == pytest.approx(2 / 3)
    assert d.good_move_share == pytest.approx(13 / 18)
    assert d.forced_share == pytest.approx(1 / 3)
    assert sorted(d.shares.tolist()) == pytest.approx([0.5, 2 / 3, 1.0])


# --- random and perfect play ----------------------------------------------------------------

def tree_tables() -> tuple[pl.DataFrame, pl.DataFrame]:
    # 0 (P1) -> 1: terminal, P2 to move has lost (P1 won)   | or -> 2 (P2 to move)
    # 2 (P2) -> 3: terminal, P1 to move has lost (P2 won)   | or -> 4: terminal tie
    # Values: 2 is a P2 win in 1; 0 is a P1 win in 1 (move to 1).
    pos = positions([
        (0, DEC, 0, W, 1), (1, TERM, 1, L, 0), (1, DEC, 1, W, 1), (0, TERM, 2, L, 0), (0, TERM, 2, T, 0),
    ])
    e = edges([(0, 1), (0, 2), (2, 3), (2, 4)])
    return with_moves(pos, e), e


def test_random_vs_random_on_a_tree():
    # Random P1: 1/2 wins at once (1 ply); 1/2 goes to row 2, where random P2 wins or ties with
    # 1/2 each (2 plies). P(first) = 1/2, P(second) = 1/4, P(tie) = 1/4; mean length 1.5 plies.
    pos, e = tree_tables()
    s = M.play_statistics(pos, e, first="random", second="random", meta=META)
    assert (s.p_first, s.p_second, s.p_tie, s.p_unfinished) == pytest.approx((0.5, 0.25, 0.25, 0.0))
    assert s.expected_length == pytest.approx(1.5)
    assert s.lengths.tolist() == [1, 2] and s.length_probs.tolist() == pytest.approx([0.5, 0.5])
    assert s.exact


def test_perfect_players_on_a_tree():
    # Perfect P1 plays 0 -> 1 and wins in 1 ply every time. Random P1 against perfect P2: 1/2
    # wins at once; otherwise perfect P2 picks its win (row 3), not the tie: P(second) = 1/2.
    pos, e = tree_tables()
    s = M.play_statistics(pos, e, first="perfect", second="random", meta=META)
    assert (s.p_first, s.p_second, s.expected_length) == pytest.approx((1.0, 0.0, 1.0))
    s = M.play_statistics(pos, e, first="random", second="perfect", meta=META)
    assert (s.p_first, s.p_second, s.p_tie) == pytest.approx((0.5, 0.5, 0.0))


def cycle_tables() -> tuple[pl.DataFrame, pl.DataFrame]:
    # 0 (P1) -> 1 or 2 (2: terminal, P1 to move has lost); 1 (P2) -> 0 or 3 (3: terminal, P2 to
    # move has lost, i.e. P1 won). Each side avoids its loss by going round: both are draws.
    pos = positions([(0, DEC, 0, D, None), (1, DEC, 1, D, None), (0, TERM, 1, L, 0), (1, TERM, 2, L, 0)])
    e = edges([(0, 1), (0, 2), (1, 0), (1, 3)])
    return with_moves(pos, e), e


def test_random_play_through_a_cycle():
    # x0 = P(P1 wins from 0) = 1/2 * x1, x1 = 1/2 * x0 + 1/2  =>  x0 = 1/3; P2 wins 2/3.
    # Length: each ply ends the game with probability 1/2, so P(L = k) = 2^-k and E[L] = 2.
    pos, e = cycle_tables()
    for direct in (M.DIRECT_LIMIT, 0):  # sparse LU, then the forward iteration
        s = M.play_statistics(pos, e, meta=META, direct_limit=direct)
        assert (s.p_first, s.p_second, s.p_tie) == pytest.approx((1 / 3, 2 / 3, 0.0), abs=1e-9)
        assert s.expected_length == pytest.approx(2.0, abs=1e-6)
        assert s.length_probs[:4].tolist() == pytest.approx([0.5, 0.25, 0.125, 0.0625])


def test_perfect_draw_never_ends():
    # In the cycle both perfect players keep the draw (0 -> 1 -> 0 ...): the game never ends.
    pos, e = cycle_tables()
    s = M.play_statistics(pos, e, first="perfect", second="perfect", meta=META)
    assert s.p_unfinished == pytest.approx(1.0) and s.expected_length is None


def test_play_stuck_in_a_closed_cycle_is_unfinished():
    # 0 (P1) -> 1 (terminal, P1 won) or 2; 2 and 3 only lead to each other: random play wins at
    # once with 1/2 and is stuck for ever with 1/2.
    pos = positions([(0, DEC, 0, W, 1), (1, TERM, 1, L, 0), (1, DEC, 1, D, None), (0, DEC, 2, D, None)])
    e = edges([(0, 1), (0, 2), (2, 3), (3, 2)])
    s = M.play_statistics(with_moves(pos, e), e, meta=META)
    assert (s.p_first, s.p_second, s.p_unfinished) == pytest.approx((0.5, 0.0, 0.5))
    assert s.expected_length == pytest.approx(1.0)


def test_chance_steps_are_not_plies():
    # The setup tables: the deal (3/4 setup 1, 1/4 setup 2) is free; then one ply to an end.
    # Setup 1 (P1 to move) -> terminal where P2 to move has lost; setup 2 (P2) -> terminal where
    # P1 to move has lost. Random play: P1 wins 3/4, P2 1/4, every game lasts exactly 1 ply.
    pos, e = setup_tables()
    pos = pl.concat([pos, positions([(1, TERM, 2, L, 0), (0, TERM, 2, L, 0)], margin=[-2, -4])
                     .with_columns(expected=pl.Series([0.0, 0.0]))])
    e = pl.concat([e, edges([(1, 3), (2, 4)], probs=[1.0, 1.0])])
    s = M.play_statistics(with_moves(pos, e), e, meta=META)
    assert (s.p_first, s.p_second) == pytest.approx((0.75, 0.25))
    assert s.lengths.tolist() == [1] and s.expected_length == pytest.approx(1.0)


def stochastic_tables() -> tuple[pl.DataFrame, pl.DataFrame]:
    # 0 (P1): "risk" -> chance 1, or "safe" -> 4 (tie). Chance 1 (P1's view): 2/3 -> 2 (P2 to
    # move has lost), 1/3 -> 3 (P1 to move has lost). Chance value 2/3 - 1/3 = 1/3; the root
    # takes max(1/3, 0) = 1/3 with p_win 2/3, p_loss 1/3.
    pos = pl.DataFrame({
        "key": pl.Series(range(5), dtype=pl.UInt64),
        "player": pl.Series([0, 0, 1, 0, 1], dtype=pl.UInt8),
        "kind": pl.Series([DEC, CH, TERM, TERM, TERM], dtype=pl.UInt8),
        "ply": pl.Series([0, 1, 1, 1, 1], dtype=pl.UInt16),
        "num_moves": pl.Series([2, 2, 0, 0, 0], dtype=pl.UInt16),
        "value": [1 / 3, 1 / 3, -1.0, -1.0, 0.0],
        "p_win": [2 / 3, 2 / 3, 0.0, 0.0, 0.0],
        "p_loss": [1 / 3, 1 / 3, 1.0, 1.0, 0.0],
    })
    e = edges([(0, 1), (0, 4), (1, 2), (1, 3)], probs=[1.0, 1.0, 2 / 3, 1 / 3])
    return pos, e


def test_stochastic_play_and_difficulty():
    # Random P1: 1/2 risk (then 2/3 win, 1/3 loss), 1/2 safe (tie): P(first) = 1/3,
    # P(second) = 1/6, P(tie) = 1/2; always 1 ply (the dice are free). Perfect P1 always risks:
    # P(first) = 2/3, P(second) = 1/3. Difficulty: one decision position with one optimal move of
    # two; a random move loses 1/3 - (1/3 + 0)/2 = 1/6 of expected result.
    pos, e = stochastic_tables()
    meta = {**META, "solution": "stochastic"}
    s = M.play_statistics(pos, e, meta=meta)
    assert (s.p_first, s.p_second, s.p_tie) == pytest.approx((1 / 3, 1 / 6, 1 / 2))
    assert s.expected_length == pytest.approx(1.0)
    s = M.play_statistics(pos, e, first="perfect", meta=meta)
    assert (s.p_first, s.p_second, s.p_tie) == pytest.approx((2 / 3, 1 / 3, 0.0))
    d = M.decision_difficulty(pos, e)
    assert d.positions == 1 and d.only_move_share == 1.0 and d.good_move_share == pytest.approx(0.5)
    assert d.mean_loss == pytest.approx(1 / 6)


def test_expected_histogram_and_by_ply():
    # Decision and terminal rows: values 1/3 (ply 0), -1, -1, 0 (ply 1); the chance row is left
    # out. Bins of width 0.5 over [-1, 1]: [-1,-0.5) holds 2, [0,0.5) holds 1/3 and 0 -> 2.
    pos, _ = stochastic_tables()
    h = M.expected_histogram(pos, bins=4)
    assert h["positions"].to_list() == [2, 0, 2, 0]
    by = M.expected_by_ply(pos)
    assert by["ply"].to_list() == [0, 1]
    assert by["mean_expected"].to_list() == pytest.approx([1 / 3, -2 / 3])
    assert by["mean_p_loss"].to_list() == pytest.approx([1 / 3, 2 / 3])


def test_simulation_agrees_with_exact_within_sampling_error(tmp_path: Path):
    # Subtraction n=3, random vs random, by hand: P1 takes 1 (1/2) -> P2 takes 1 (1/2) -> P1
    # takes the last: P1 wins 1/2 * 1/2 = 1/4. The simulation (forced with exact_limit=0) of
    # 20000 games must be within 4 standard errors (4 * sqrt(3/16 / 20000) ~ 0.012).
    sol = solve(Subtraction.from_params(n=3), out=tmp_path)
    exact = M.play_statistics(sol.positions, sol.edges, meta=sol.meta)
    assert exact.p_first == pytest.approx(0.25)
    sim = M.play_statistics(sol.positions, sol.edges, meta=sol.meta, exact_limit=0, samples=20_000)
    assert not sim.exact and sim.samples == 20_000
    assert abs(sim.p_first - 0.25) < 0.012
    assert sim.p_first + sim.p_second == pytest.approx(1.0)


def test_random_play_on_a_solved_subtraction_game(tmp_path: Path):
    # n=3 random first vs perfect second: both of P1's moves leave a pile P2 takes at once: 0.
    # Perfect first (lost, both moves lose in 1) vs random second: after "take 1" (pile 2) random
    # P2 wins with 1/2 (takes 2); after "take 2" (pile 1) it always wins: P(second) = 3/4.
    # Perfect vs perfect lasts exactly the remoteness, 2 plies.
    sol = solve(Subtraction.from_params(n=3), out=tmp_path)
    s = M.play_statistics(sol.positions, sol.edges, first="random", second="perfect", meta=sol.meta)
    assert s.p_first == pytest.approx(0.0)
    s = M.play_statistics(sol.positions, sol.edges, first="perfect", second="random", meta=sol.meta)
    assert s.p_second == pytest.approx(0.75)
    s = M.play_statistics(sol.positions, sol.edges, first="perfect", second="perfect", meta=sol.meta)
    assert s.lengths.tolist() == [2] and s.p_second == pytest.approx(1.0)


def test_policy_weights_perfect_prefers_fast_wins_and_slow_losses():
    # Row 0 (P1): moves to 1 (P2 lost in 2 -> win in 3) and 2 (P2 lost in 0 -> win in 1): the
    # perfect player takes only the fast win. Row 3 (P1, lost): moves to 4 (P2 wins in 1) and
    # 5 (P2 wins in 3): the perfect loser takes the slow loss. Random weights are 1/2 each.
    pos = positions([(0, DEC, 0, W, 1), (1, DEC, 1, L, 2), (1, TERM, 1, L, 0),
                     (0, DEC, 0, L, 4), (1, DEC, 1, W, 1), (1, DEC, 1, W, 3)])
    e = edges([(0, 1), (0, 2), (3, 4), (3, 5)])
    assert M.policy_weights(pos, e, {0: "perfect", 1: "random"}).tolist() == [0.0, 1.0, 0.0, 1.0]
    assert M.policy_weights(pos, e, {0: "random", 1: "random"}).tolist() == [0.5] * 4


# --- structure ------------------------------------------------------------------------------

def test_structure_cycles_and_branching():
    # Rows 0 -> 1 -> 2 -> 1 (a 2-cycle {1, 2}), 3 -> 3 (a move back to itself), 0 -> 3, 2 -> 4
    # (terminal). On a cycle: rows 1, 2, 3 = 3 of 5 positions, in 2 cyclic components, the
    # largest of 2 positions. Branching over non-terminal decision rows: 0 has 2 moves, 1 has 1,
    # 2 has 2, 3 has 1 -> mean 6/4 = 1.5, max 2.
    pos = positions([(0, DEC, 0, D, None), (1, DEC, 1, D, None), (0, DEC, 2, D, None),
                     (1, DEC, 1, D, None), (1, TERM, 3, L, 0)])
    e = edges([(0, 1), (0, 3), (1, 2), (2, 1), (2, 4), (3, 3)])
    pos = with_moves(pos, e)
    for method in ("networkx", "scipy"):
        s = M.structure(pos, e, method=method)
        assert s.cyclic_share == pytest.approx(3 / 5)
        assert (s.cycles, s.largest_cycle) == (2, 2)
        assert s.cycle_method == method
    assert (s.positions, s.terminal, s.moves) == (5, 1, 6)
    assert (s.branching_mean, s.branching_max) == (1.5, 2)
    assert s.by_value == {"win": 0, "lose": 1, "tie": 0, "draw": 4}


def test_structure_without_edges_has_no_cycle_numbers():
    pos, _ = tree_tables()
    s = M.structure(pos, None)
    assert s.cyclic_share is None and s.moves is None and s.terminal == 3


def test_networkx_and_scipy_agree_on_a_solved_cyclic_game(tmp_path: Path):
    # The draw cycle of tests/toygames: 0 <-> 1 plus two terminals; networkx and the csgraph
    # array method must mark the same positions (the two decision rows).
    game = Explicit({0: (0, [1, 2], None), 1: (1, [0, 3], None), 2: (0, [], W1), 3: (1, [], W0)})
    sol = solve(game, out=tmp_path)
    src = sol.edges["src"].to_numpy().astype(np.int64)
    dst = sol.edges["dst"].to_numpy().astype(np.int64)
    a = M.cyclic_positions(sol.positions.height, src, dst, method="networkx")[0]
    b = M.cyclic_positions(sol.positions.height, src, dst, method="scipy")[0]
    assert a.tolist() == b.tolist() and int(a.sum()) == 2


def test_solution_kind_and_root_row():
    pos, _ = tree_tables()
    assert M.solution_kind(pos) == "deterministic"
    assert M.root_row(pos) == 0  # the only row at ply 0
    assert M.solution_kind(stochastic_tables()[0]) == "stochastic"
    assert M.solution_kind(setup_tables()[0]) == "setups"


def test_perfect_stochastic_player_breaks_ties_by_win_probability():
    # Row 0 (P1): "gamble" -> chance 1 (1/2 P1 wins, 1/2 P2 wins: worth 0, win probability 1/2)
    # or "settle" -> 4, a tie (worth 0, win probability 0). Both moves are worth 0; the perfect
    # player takes the one more likely to win, so its weights are 1 and 0 (chance edges keep 1/2).
    pos = pl.DataFrame({
        "key": pl.Series(range(5), dtype=pl.UInt64),
        "player": pl.Series([0, 0, 1, 0, 1], dtype=pl.UInt8),
        "kind": pl.Series([DEC, CH, TERM, TERM, TERM], dtype=pl.UInt8),
        "ply": pl.Series([0, 1, 1, 1, 1], dtype=pl.UInt16),
        "num_moves": pl.Series([2, 2, 0, 0, 0], dtype=pl.UInt16),
        "value": [0.0, 0.0, -1.0, -1.0, 0.0],
        "p_win": [0.5, 0.5, 0.0, 0.0, 0.0],
        "p_loss": [0.5, 0.5, 1.0, 1.0, 0.0],
    })
    e = edges([(0, 1), (0, 4), (1, 2), (1, 3)], probs=[1.0, 1.0, 0.5, 0.5])
    assert M.policy_weights(pos, e, {0: "perfect", 1: "perfect"}).tolist() == [1.0, 0.0, 0.5, 0.5]


def test_perfect_stochastic_player_finishes_instead_of_passing():
    # Row 0 (P1, certain win): "pass" -> row 1 (P2, who can only pass back to 0) or "finish" ->
    # row 2 (terminal, P2 to move has lost). Both moves are worth +1 with win probability 1 for
    # P1; there is no remoteness, so the tie-break is the distance to an end along best moves:
    # row 2 is 0 plies from an end, row 1 is 2 (1 -> 0 -> 2). The perfect player finishes, and a
    # perfect game lasts exactly 1 ply instead of wandering round 0 -> 1 -> 0.
    pos = pl.DataFrame({
        "key": pl.Series(range(3), dtype=pl.UInt64),
        "player": pl.Series([0, 1, 1], dtype=pl.UInt8),
        "kind": pl.Series([DEC, DEC, TERM], dtype=pl.UInt8),
        "ply": pl.Series([0, 1, 1], dtype=pl.UInt16),
        "num_moves": pl.Series([2, 1, 0], dtype=pl.UInt16),
        "value": [1.0, -1.0, -1.0],
        "p_win": [1.0, 0.0, 0.0],
        "p_loss": [0.0, 1.0, 1.0],
    })
    e = edges([(0, 1), (0, 2), (1, 0)], probs=[1.0, 1.0, 1.0])
    assert M.policy_weights(pos, e, {0: "perfect", 1: "perfect"}).tolist() == [0.0, 1.0, 1.0]
    s = M.play_statistics(pos, e, first="perfect", second="perfect", meta={**META, "solution": "stochastic"})
    assert s.p_first == pytest.approx(1.0) and s.lengths.tolist() == [1]
