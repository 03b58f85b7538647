"""Tests of Greener (rules: /work/shared/rules/greener.md).

Every expected value is worked out by hand from the rules text; the reasoning is in a comment.
Cells are numbered row-major from the bottom-left: on a board with ``cols`` columns, cell
``r * cols + c`` is column letter ``c`` and row number ``r + 1`` (``a1`` = cell 0).
"""

from __future__ import annotations

import dataclasses
import random
from fractions import Fraction

import numpy as np
import pytest

from solver.core.game import Game, NodeKind, Result
from solver.core.selfcheck import compare_expand
from solver.core.values import LOSE, TIE, WIN
from solver.engines.alphabeta import AlphaBeta
from solver.engines.enumerate import enumerate_positions
from solver.engines.graph import Graph
from solver.engines.retrograde import retrograde
from solver.errors import IllegalMoveError, TooBigError, VariantError
from solver.games import make_game
from solver.games.greener import (
    BLACK,
    BLACK_PYRAMID,
    EMPTY,
    GREEN,
    GREEN_PYRAMID,
    PASS,
    WHITE,
    WHITE_PYRAMID,
    Greener,
    GreenerState,
    GreenerTooBigError,
    layout_text,
    parse_layout,
    stack_code,
    stack_parts,
)

B1, W1, G1 = BLACK_PYRAMID, WHITE_PYRAMID, GREEN_PYRAMID


def game(**params: object) -> Greener:
    """A Greener variant from Python values."""
    g = make_game("greener", params)
    assert isinstance(g, Greener)
    return g


def B(h: int, g: int) -> int:
    """Code of a black-topped stack of height ``h`` holding ``g`` greens."""
    return stack_code(BLACK, h, g)


def W(h: int, g: int) -> int:
    """Code of a white-topped stack of height ``h`` holding ``g`` greens."""
    return stack_code(WHITE, h, g)


def names(g: Greener, state: GreenerState) -> list[str]:
    return [g.action_name(state, a) for a in g.legal_actions(state)]


# --- cell codes -------------------------------------------------------------------------------
def test_stack_codes_round_trip() -> None:
    # Every (colour, height, greens) with greens <= height - 1 (the top is not green) has its own
    # code, and the single pyramids have the fixed codes 1 (green), 2 (black), 3 (white).
    seen = set()
    for h in range(1, 13):
        for gr in range(h):
            for colour in (BLACK, WHITE):
                code = stack_code(colour, h, gr)
                assert stack_parts(code) == (colour, h, gr)
                seen.add(code)
    assert len(seen) == 2 * sum(range(1, 13))
    assert stack_code(GREEN, 1, 1) == G1 and stack_parts(G1) == (GREEN, 1, 1)
    assert (stack_code(BLACK, 1, 0), stack_code(WHITE, 1, 0)) == (2, 3)
    assert stack_parts(EMPTY) is None
    with pytest.raises(ValueError):
        stack_code(BLACK, 2, 2)  # two greens under a black top need height 3


# --- captures ---------------------------------------------------------------------------------
def test_capture_is_compulsory() -> None:
    # 1x3 "BWG": Black's only stack a1 sees b1 (White) to the east and nothing else, so the only
    # legal move is a1-b1; passing is not allowed while a capture exists.
    g = game(rows=1, cols=3, black=1, white=1, setup="BWG")
    s = g.initial_state()
    assert names(g, s) == ["a1-b1"]
    assert PASS not in g.legal_actions(s)
    with pytest.raises(IllegalMoveError):
        g.apply(s, PASS)
    with pytest.raises(IllegalMoveError):
        g.play(["pass"])


def test_capture_of_own_colour_allowed() -> None:
    # 1x3 "BBW": a1 may capture b1 (its own colour); b1 may capture a1 (own) or c1 (White).
    g = game(rows=1, cols=3, black=2, white=1, setup="BBW")
    s = g.initial_state()
    assert set(names(g, s)) == {"a1-b1", "b1-a1", "b1-c1"}
    after = g.play(["a1-b1"])
    # a1 emptied; b1 = black on top of black: height 2, no green
    assert after.board == (EMPTY, B(2, 0), W1)
    assert after.to_move == WHITE


def test_only_first_stack_in_a_direction() -> None:
    # 1x3 "BGW": east of a1 the first stack is the green b1; c1 is behind it and cannot be
    # reached. White's c1 likewise sees only b1.
    g = game(rows=1, cols=3, black=1, white=1, setup="BGW")
    s = g.initial_state()
    assert names(g, s) == ["a1-b1"]
    with pytest.raises(IllegalMoveError):
        g.play(["a1-c1"])
    # after a1-b1 the black stack (height 2, 1 green) sits on b1, next to White's c1
    s2 = g.play(["a1-b1"])
    assert s2.board == (EMPTY, B(2, 1), W1)
    assert names(g, s2) == ["c1-b1"]


def test_capture_crosses_empty_cells_in_rows_and_columns() -> None:
    # Row: a1 = black stack (2 high, 1 green), b1 empty, c1 = white pyramid. Black's stack moves
    # across b1 onto c1: the new stack is black-topped, height 2 + 1 = 3, greens 1 + 0 = 1.
    g = game(rows=1, cols=3, black=1, white=1, setup="BWG")
    s = GreenerState((B(2, 1), EMPTY, W1), BLACK, 0)
    assert names(g, s) == ["a1-c1"]
    s2 = g.apply(s, (0, 2))
    assert s2.board == (EMPTY, EMPTY, B(3, 1))
    assert (s2.to_move, s2.passes) == (WHITE, 0)
    # White controls nothing now: it must pass
    assert g.legal_actions(s2) == [PASS]
    # Column (3x1 board, a1 at the bottom): a1 black, a2 empty, a3 white.
    col = game(rows=3, cols=1, black=1, white=1, setup="W/G/B")
    t = GreenerState((B(2, 1), EMPTY, W1), BLACK, 0)
    assert names(col, t) == ["a1-a3"]
    assert names(col, GreenerState(t.board, WHITE, 0)) == ["a3-a1"]


def test_layout_orientation() -> None:
    # The layout is written top row first: "BWGG/GBWG/GGWB/WGBG" has B at a4 and W at a1.
    g = game(rows=4, cols=4, black=4, white=4, setup="BWGG/GBWG/GGWB/WGBG")
    board = g.initial_state().board
    assert board[12] == B1 and board[13] == W1  # a4, b4
    assert board[0] == W1 and board[1] == G1 and board[2] == B1  # a1, b1, c1
    assert layout_text(board, 4, 4) == "BWGG/GBWG/GGWB/WGBG"


# --- passing and the end --------------------------------------------------------------------
def test_double_pass_ends_the_game() -> None:
    # 2x2: a1 black stack (2 high, 1 green), b2 white stack (2 high, 1 green), a2 b1 empty. The
    # two stacks are on a diagonal, so nobody can capture: Black passes, White passes, over.
    g = game(rows=2, cols=2, black=1, white=1, setup="GW/BG")
    s = GreenerState((B(2, 1), EMPTY, EMPTY, W(2, 1)), BLACK, 0)
    assert g.legal_actions(s) == [PASS]
    s1 = g.apply(s, PASS)
    assert g.node_kind(s1) == NodeKind.DECISION
    assert (s1.to_move, s1.passes) == (WHITE, 1)
    assert g.legal_actions(s1) == [PASS]
    s2 = g.apply(s1, PASS)
    assert g.node_kind(s2) == NodeKind.TERMINAL
    assert g.legal_actions(s2) == []
    # greens 1 - 1, tallest stacks 2 and 2: level -> tie
    out = g.outcome(s2)
    assert out.results == (Result.TIE, Result.TIE)
    assert out.scores == (1, 1)


def test_single_pass_does_not_end_the_game() -> None:
    # 2x3: a1 black stack (2 high, 1 green); b2 white (2 high, 1 green); c2 white (2 high, 0).
    # Black's a1 sees nothing (a2, b1, c1 empty): pass. White then still has captures along row 2.
    g = game(rows=2, cols=3, black=2, white=2, setup="BWG/BWG")
    s = GreenerState((B(2, 1), EMPTY, EMPTY, EMPTY, W(2, 1), W(2, 0)), BLACK, 0)
    assert g.legal_actions(s) == [PASS]
    s1 = g.apply(s, PASS)
    assert g.node_kind(s1) == NodeKind.DECISION
    assert set(names(g, s1)) == {"b2-c2", "c2-b2"}
    # b2-c2: c2 = white, height 4, 1 green; a capture resets the pass count
    s2 = g.play(["b2-c2"], s1)
    assert s2.board[5] == W(4, 1) and s2.passes == 0
    # now both pass and the game ends: greens 1 - 1, tallest Black 2, White 4 -> White wins
    end = g.play(["pass", "pass"], s2)
    assert g.is_terminal(end)
    out = g.outcome(end)
    assert out.scores == (1, 1)
    assert out.results == (Result.LOSS, Result.WIN)
    # with tiebreak=none the same end is a tie
    g2 = game(rows=2, cols=3, black=2, white=2, setup="BWG/BWG", tiebreak="none")
    assert g2.outcome(end).results == (Result.TIE, Result.TIE)


# --- scoring ----------------------------------------------------------------------------------
def test_scoring_counts_greens_in_controlled_stacks_only() -> None:
    # 3x3 (2 B, 2 W, 5 G): a1 black stack 5 high with 3 greens, c2 white 3 high with 1 green,
    # b3 a lone green pyramid. No two of them share a row or a column, so both must pass. Black 3 greens, White 1: Black wins by 2;
    # the uncaptured green on b3 counts for nobody.
    g = game(rows=3, cols=3, black=2, white=2, setup="BWG/GGG/BWG")
    board = [EMPTY] * 9
    board[0], board[5], board[7] = B(5, 3), W(3, 1), G1
    s = GreenerState(tuple(board), BLACK, 0)
    assert g.legal_actions(s) == [PASS]
    end = g.play(["pass", "pass"], s)
    out = g.outcome(end)
    assert out.scores == (3, 1)
    assert out.results == (Result.WIN, Result.LOSS)
    assert out.margin(BLACK) == 2 and out.margin(WHITE) == -2


def test_tallest_stack_tiebreak() -> None:
    g = game(rows=3, cols=3, black=2, white=2, setup="BWG/GGG/BWG")
    gnone = game(rows=3, cols=3, black=2, white=2, setup="BWG/GGG/BWG", tiebreak="none")
    # Greens 1 - 1; Black's stacks 4 and 1 high, White's 3 high: Black has the tallest -> wins
    # (tiebreak none: tie). States are built as finished (passes=2); outcome reads only the
    # board, so the stacks need not fill it.
    b = [EMPTY] * 9
    b[0], b[4], b[8] = B(4, 1), W(3, 1), B1
    end = GreenerState(tuple(b), WHITE, 2)
    assert g.outcome(end).results == (Result.WIN, Result.LOSS)
    assert g.outcome(end).scores == (1, 1)
    assert gnone.outcome(end).results == (Result.TIE, Result.TIE)
    # Greens 1 - 1, Black 3 and 2 high, White 3 high: the tallest height is shared -> tie
    b = [EMPTY] * 9
    b[0], b[4], b[8] = B(3, 1), W(3, 1), B(2, 0)
    end = GreenerState(tuple(b), BLACK, 2)
    assert g.outcome(end).results == (Result.TIE, Result.TIE)
    # More greens always wins, whatever the heights: Black 2 greens in a 3-stack, White 1 in 5
    b = [EMPTY] * 9
    b[0], b[4], b[8] = B(3, 2), W(5, 1), B1
    end = GreenerState(tuple(b), BLACK, 2)
    assert g.outcome(end).results == (Result.WIN, Result.LOSS)
    assert gnone.outcome(end).results == (Result.WIN, Result.LOSS)


# --- small games solved by hand ---------------------------------------------------------------
def _whb_game() -> Greener:
    return game(rows=1, cols=3, black=1, white=1, setup="WBG")


def test_small_game_by_hand_alphabeta() -> None:
    # 1x3 "WBG" (a1 W, b1 B, c1 G), Black to move.
    #  * b1-a1: a1 = B2g0. White has no stack: pass. Black a1 crosses b1 onto c1 (forced):
    #    B3g1. White passes, Black passes: Black 1 green - White 0: Black wins after 5 plies.
    #  * b1-c1: c1 = B2g1. White a1 crosses b1 onto c1: W3g1. Black passes, White passes:
    #    White 1 - 0: Black loses.
    # So Black wins, remoteness 5, optimal margin +1.
    g = _whb_game()
    s = g.initial_state()
    assert names(g, s) == ["b1-c1", "b1-a1"]
    assert AlphaBeta(g).search(s) == (WIN, 5)
    assert AlphaBeta(g).margin(s) == 1
    # after the losing move, White wins in 3 plies (a1-c1, pass, pass)
    bad = g.play(["b1-c1"])
    assert AlphaBeta(g).search(bad) == (WIN, 3)
    assert AlphaBeta(g).margin(bad) == 1


def test_small_game_by_hand_retrograde() -> None:
    # The same game as above, through enumeration + retrograde analysis.
    g = _whb_game()
    graph = enumerate_positions(g)
    solved = retrograde(graph, scored=True)
    assert (solved.value[graph.root], solved.remoteness[graph.root]) == (WIN, 5)
    assert solved.margin is not None and solved.margin[graph.root] == 1
    # reachable: start, 2 after Black's move, then (A) pass, capture, pass, pass = 4 more,
    # (B) capture, pass, pass = 3 more: 1 + 2 + 4 + 3 = 10 positions (no symmetry merges them:
    # the 1x3 mirror image of a reachable position here is never reachable)
    assert graph.n == 10


def test_small_setup_all_by_hand() -> None:
    # 1x3 with 1 B, 1 W, 1 G: 3! = 6 setups; the mirror pairs them into 3 classes of 2, each
    # with probability 1/3. Black to move in each:
    #  * BWG (~GWB): a1-b1 (forced) -> B2g0 on b1; White passes; b1-c1 -> B3g1; pass, pass:
    #    Black 1 - 0, wins in 5.
    #  * BGW (~WGB): a1-b1 (forced) -> B2g1; White c1-b1 -> W4g1; Black passes, White passes:
    #    White 1 - 0, Black loses in 4.
    #  * WBG (~GBW): Black wins in 5 (test_small_game_by_hand_alphabeta).
    g = game(rows=1, cols=3, black=1, white=1, setup="all")
    root = g.initial_state()
    outcomes = g.chance_outcomes(root)
    assert len(outcomes) == 3 and all(p == Fraction(1, 3) for _, p in outcomes)
    graph = enumerate_positions(g)
    sub = _without_root(graph)
    solved = retrograde(sub, scored=True)
    expected = {"BWG": (WIN, 5, 1), "BGW": (LOSE, 4, -1), "WBG": (WIN, 5, 1)}
    for text, (value, remoteness, margin) in expected.items():
        state = g.canonical(g.apply(root, g.parse_action(root, text)))
        row = sub.row_of(g.encode(state))
        assert row >= 0
        assert (solved.value[row], solved.remoteness[row]) == (value, remoteness)
        assert solved.margin is not None and solved.margin[row] == margin


def test_tie_position_by_hand() -> None:
    # 2x2 diagonal stacks, greens 1 - 1, both 2 high: both must pass, the game ends tied after
    # 2 plies.
    g = game(rows=2, cols=2, black=1, white=1, setup="GW/BG")
    s = GreenerState((B(2, 1), EMPTY, EMPTY, W(2, 1)), BLACK, 0)
    assert AlphaBeta(g).search(s) == (TIE, 2)
    # with Black's stack 3 high (holding both greens) and White's a lone pyramid: Black 2 - 0
    s = GreenerState((B(3, 2), EMPTY, EMPTY, W1), WHITE, 0)
    assert AlphaBeta(g).search(s) == (LOSE, 2)


# --- setups -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "rows, cols, n, total, classes",
    [
        # 3x3, 2 B 2 W 5 G: 9!/(2!2!5!) = 756. Burnside over the 8 symmetries of the square:
        # rotations by 90/270 (cycles 1,4,4) fix none (2 is no sum of 1,4,4); rotation by 180
        # (centre + four 2-cycles) fixes 4*3 = 12 (one pair B, one pair W, the rest G); each of
        # the 4 reflections (3 fixed cells, three 2-cycles) fixes 6 + 9 + 9 = 24 (B,W as pairs:
        # 3!=6 ways; B a pair and W two fixed cells: 3*3 = 9; and vice versa: 9).
        # (756 + 12 + 4*24) / 8 = 864 / 8 = 108.
        (3, 3, 2, 756, 108),
        # 3x3, 3+3+3: 9!/(3!3!3!) = 1680. Rotations fix none (90: cycles 1,4,4; 180: one centre
        # for three odd counts); each reflection fixes 3! * 3! = 36 (one fixed cell and one pair
        # per colour). (1680 + 4*36) / 8 = 1824 / 8 = 228.
        (3, 3, 3, 1680, 228),
        # 3x4 (3 rows, 4 columns), 3+3+6: 12!/(3!3!6!) = 18480. Mirror c->3-c and the half
        # turn pair up all cells, impossible with 3 B: 0. Mirror r->2-r keeps the middle row
        # (4 cells) and pairs the rest (4 pairs): middle row (B,W,G) = (1,1,2) with pairs
        # (1,1,2): 12*12 = 144; (1,3,0) with pairs (1,0,3): 4*4 = 16; (3,1,0): 16. Total 176.
        # (18480 + 176) / 4 = 4664.
        (3, 4, 3, 18480, 4664),
        # 4x4, 4+4+8: 16!/(4!4!8!) = 900900. Quarter turns (four 4-cycles): 4!/(1!1!2!) = 12
        # each; half turn and the two mirrors (eight 2-cycles): 8!/(2!2!4!) = 420 each; each
        # diagonal (4 fixed cells, 6 pairs), by fixed cells (B,W) = (0,0): 90, (0,2): 60*6 = 360,
        # (2,0): 360, (2,2): 30*6 = 180, (0,4): 15, (4,0): 15 -> 1020.
        # (900900 + 2*12 + 3*420 + 2*1020) / 8 = 904224 / 8 = 113028.
        (4, 4, 4, 900900, 113028),
    ],
)
def test_setup_all_classes(rows: int, cols: int, n: int, total: int, classes: int) -> None:
    g = game(rows=rows, cols=cols, black=n, white=n, setup="all")
    assert g.num_setups == total
    root = g.initial_state()
    assert g.node_kind(root) == NodeKind.CHANCE and g.to_move(root) == BLACK
    outcomes = g.chance_outcomes(root)
    assert len(outcomes) == classes
    assert sum(p for _, p in outcomes) == 1
    assert all(isinstance(p, Fraction) for _, p in outcomes)
    assert sum(p * total for _, p in outcomes) == total  # multiplicities sum to all arrangements
    boards = [b for b, _ in outcomes]
    assert len(set(boards)) == classes
    for board, p in outcomes[:: max(1, classes // 50)]:
        child = g.apply(root, board)
        assert (child.to_move, child.passes) == (BLACK, 0)
        assert board.count(B1) == n and board.count(W1) == n
        assert g.canonical(child) == child  # each class listed by its canonical setup
        # probability = class size / total, class size = number of distinct images
        assert p == Fraction(len({s.board for s in g.symmetries(child)}), total)
    assert f"{total:,} setups" in g.render(root)


def test_setup_random_is_reproducible() -> None:
    a = game(rows=3, cols=4, black=3, white=3, setup="random", seed=7).initial_state()
    b = game(rows=3, cols=4, black=3, white=3, setup="random", seed=7).initial_state()
    assert a == b
    assert a.board.count(B1) == 3 and a.board.count(W1) == 3 and a.board.count(G1) == 6
    # 18480 possible setups: ten seeds giving one and the same layout would be a broken draw
    layouts = {
        game(rows=3, cols=4, black=3, white=3, setup="random", seed=s).initial_state().board
        for s in range(10)
    }
    assert len(layouts) > 1


# --- keys and symmetry ------------------------------------------------------------------------
def _playouts(g: Greener, count: int, seed: int) -> list[GreenerState]:
    """States met on random playouts from the start (through the chance root if any)."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        s = g.initial_state()
        while True:
            out.append(s)
            kind = g.node_kind(s)
            if kind == NodeKind.TERMINAL:
                break
            if kind == NodeKind.CHANCE:
                s = g.apply(s, rng.choice(g.chance_outcomes(s))[0])
            else:
                s = g.apply(s, rng.choice(g.legal_actions(s)))
    return out


@pytest.mark.parametrize(
    "params",
    [
        {"rows": 3, "cols": 3, "black": 2, "white": 2, "setup": "all"},
        {"rows": 3, "cols": 4, "black": 3, "white": 3, "setup": "all"},
        {"rows": 4, "cols": 4, "black": 4, "white": 4, "setup": "BWGG/GBWG/GGWB/WGBG"},
        {"rows": 4, "cols": 4, "black": 4, "white": 4, "setup": "random", "seed": 3},
        {"rows": 2, "cols": 5, "black": 3, "white": 2, "setup": "random", "seed": 1},
    ],
)
def test_encode_decode_round_trip(params: dict) -> None:
    g = game(**params)
    for s in _playouts(g, 25, seed=11):
        key = g.encode(s)
        assert 0 <= key < 2**64
        assert g.decode(key) == s
        images = g.symmetries(s)
        assert images[0] == s
        for im in images:
            assert g.decode(g.encode(im)) == im
        # the canonical image is the one with the smallest key (the protocol's definition)
        assert g.canonical(s) == min(images, key=g.encode)


def test_key_budgets() -> None:
    # The whole key space (board ranks x 2 players x 3 pass counts, plus the root) of the
    # presets and of any 4x4 4+4 setup fits in 64 bits.
    for preset in ("3x3", "3x3-3", "3x4"):
        g = make_game("greener", Greener.presets[preset])
        assert g.encode(g.initial_state()) == g.root_key < 2**64
    g = game(rows=4, cols=4, black=4, white=4, setup="BWGG/GBWG/GGWB/WGBG")
    assert g.root_key < 2**64
    # random keys decode to valid states that encode back
    rng = random.Random(2)
    for _ in range(200):
        key = rng.randrange(g.root_key)
        s = g.decode(key)
        assert sum(stack_parts(c)[1] for c in s.board if c) == 16  # heights fill the board
        assert g.encode(s) == key


def test_symmetric_images_have_the_same_moves() -> None:
    g = game(rows=3, cols=4, black=3, white=3, setup="all")
    for s in _playouts(g, 20, seed=5):
        if g.node_kind(s) != NodeKind.DECISION:
            continue
        kids = sorted(g.encode(g.canonical(g.apply(s, a))) for a in g.legal_actions(s))
        for im in g.symmetries(s):
            assert len(g.legal_actions(im)) == len(g.legal_actions(s))
            assert g.scores(im) == g.scores(s)
            # the children of an image are the images of the children
            assert sorted(g.encode(g.canonical(g.apply(im, a))) for a in g.legal_actions(im)) == kids


# --- the vectorised batch path ----------------------------------------------------------------
def _assert_same_expansion(g: Greener, keys: np.ndarray) -> None:
    for canonical in (False, True):
        fast = g.expand(keys, canonical=canonical)
        slow = Game.expand(g, keys, canonical=canonical)
        for field in ("kind", "to_move", "offsets", "children", "result", "margin"):
            a, b = getattr(fast, field), getattr(slow, field)
            assert a.dtype == b.dtype, field
            assert np.array_equal(a, b), field
        assert fast.probs is None and slow.probs is None
        # the children's tiers read off the parents equal the tiers of the children's own keys
        assert fast.child_tier is not None and fast.child_tier.dtype == np.int64
        assert np.array_equal(fast.child_tier, g.tier_of(fast.children))
        assert compare_expand(g, keys, canonical=canonical) == []


def test_check_names_child_tiers_that_differ_from_tier_of() -> None:
    class OffByOne(Greener):
        def expand(self, keys, *, canonical=False):
            exp = super().expand(keys, canonical=canonical)
            wrong = exp.child_tier.copy()
            wrong[len(wrong) // 2] += 1
            return dataclasses.replace(exp, child_tier=wrong)

    g = OffByOne(game(rows=3, cols=3, black=2, white=2, setup="BWG/GGB/WGG").variant)
    keys = np.array([g.encode(s) for s in _playouts(g, 10, seed=1) if not s.root], dtype=np.uint64)
    (message, key), = compare_expand(g, keys)
    assert "child_tier" in message and key in keys.tolist()


def test_vectorised_expand_matches_default() -> None:
    # every position of the 3x3 2+2 preset (the root chance node goes through the default)
    g = make_game("greener", Greener.presets["3x3"])
    graph = enumerate_positions(g)
    keys = graph.keys[graph.keys != np.uint64(g.root_key)]
    _assert_same_expansion(g, keys)
    # random (mostly unreachable but valid) keys and playout positions of other boards
    for params in (
        {"rows": 3, "cols": 4, "black": 3, "white": 3, "setup": "all"},
        {"rows": 4, "cols": 4, "black": 4, "white": 4, "setup": "BWGG/GBWG/GGWB/WGBG"},
        {"rows": 1, "cols": 3, "black": 1, "white": 1, "setup": "WBG", "tiebreak": "none"},
    ):
        g = game(**params)
        rng = random.Random(4)
        keys = [rng.randrange(g.root_key) for _ in range(3000)]
        keys += [g.encode(s) for s in _playouts(g, 40, seed=9) if not s.root]
        _assert_same_expansion(g, np.array(keys, dtype=np.uint64))


# --- variant checks ---------------------------------------------------------------------------
def test_variant_errors() -> None:
    with pytest.raises(VariantError, match="do not fit"):
        game(rows=3, cols=3, black=5, white=5)
    with pytest.raises(VariantError):
        game(rows=3, cols=3, black=-1, white=2)
    with pytest.raises(VariantError, match="rows"):
        game(rows=3, cols=3, black=2, white=2, setup="BWG/GGB")
    with pytest.raises(VariantError, match="cells"):
        game(rows=3, cols=3, black=2, white=2, setup="BWG/GGBG/WGG")
    with pytest.raises(VariantError, match="letter"):
        game(rows=3, cols=3, black=2, white=2, setup="BWG/GXB/WGG")
    with pytest.raises(VariantError, match="black=3"):
        game(rows=3, cols=3, black=3, white=2, setup="BWG/GGB/WGG")
    with pytest.raises(VariantError):
        game(rows=3, cols=3, black=2, white=2, tiebreak="shortest")


def test_variant_warnings() -> None:
    # 3x3: the rulebook wants 9/4 <= n <= 9/3, i.e. n = 3: 2+2 is outside -> a warning
    assert game(rows=3, cols=3, black=2, white=2).warnings
    assert not game(rows=3, cols=3, black=3, white=3).warnings
    # 3x4: 3 <= n <= 4 and green (6) >= n: 3+3 is inside
    assert not game(rows=3, cols=4, black=3, white=3).warnings
    # unequal counts are outside the rule
    assert game(rows=3, cols=4, black=3, white=4).warnings
    # 6x6 with 9+9 (the recommended first game) is inside
    assert not game().warnings


def test_too_big_is_a_clear_error() -> None:
    g = game()  # 6x6, 9+9+18, setup=all: valid, but neither keys nor setups can be listed
    with pytest.raises(GreenerTooBigError) as err:
        g.encode(g.initial_state())
    assert isinstance(err.value, VariantError) and isinstance(err.value, TooBigError)
    with pytest.raises(GreenerTooBigError):
        g.chance_outcomes(g.initial_state())
    single = game(setup="random", seed=1)  # one 6x6 setup: still too many positions for a key
    with pytest.raises(TooBigError):
        single.encode(single.initial_state())


# --- people -----------------------------------------------------------------------------------
def test_render_and_notation() -> None:
    g = game(rows=1, cols=3, black=1, white=1, setup="BWG")
    s = GreenerState((B(3, 1), EMPTY, EMPTY), WHITE, 1)
    text = g.render(s)
    assert "B3g1" in text and "." in text and "White to move" in text
    s = g.initial_state()
    assert g.parse_action(s, "A1-B1") == (0, 1)
    root_game = game(rows=3, cols=3, black=2, white=2)
    root = root_game.initial_state()
    # at the root any setup can be typed as a layout (top row first)
    board = root_game.parse_action(root, "BWG/GGB/WGG")
    assert board[6:9] == (B1, W1, G1) and board[0:3] == (W1, G1, G1)
    with pytest.raises(IllegalMoveError):
        root_game.parse_action(root, "BBB/GGB/WGG")


# --- two engines agree ------------------------------------------------------------------------
def _without_root(graph: Graph) -> Graph:
    """The graph minus its chance root (retrograde handles decision/terminal nodes only)."""
    keep = np.ones(graph.n, dtype=bool)
    keep[graph.root] = False
    new_row = np.cumsum(keep) - 1
    counts = np.diff(graph.offsets)
    offsets = np.zeros(int(keep.sum()) + 1, dtype=np.int64)
    np.cumsum(counts[keep], out=offsets[1:])
    edge_keep = np.repeat(keep, counts)
    return Graph(
        keys=graph.keys[keep],
        kind=graph.kind[keep],
        to_move=graph.to_move[keep],
        ply=graph.ply[keep],
        offsets=offsets,
        child=new_row[graph.child[edge_keep]],
        probs=None,
        result=graph.result[keep],
        margin=graph.margin[keep],
        root=0,
        symmetry=graph.symmetry,
    )


def _agreement(preset: str, margin_every: int) -> None:
    g = make_game("greener", Greener.presets[preset])
    graph = enumerate_positions(g)
    assert graph.kind[graph.root] == NodeKind.CHANCE
    # the root's children are exactly the setup classes
    root_kids = graph.child[graph.offsets[graph.root] : graph.offsets[graph.root + 1]]
    assert len(root_kids) == len(g.chance_outcomes(g.initial_state()))
    sub = _without_root(graph)
    solved = retrograde(sub, scored=True)
    assert solved.margin is not None
    ab = AlphaBeta(g)
    for i, key in enumerate(sub.keys.tolist()):
        state = g.decode(key)
        value, remoteness = ab.search(state)
        assert (value, remoteness) == (solved.value[i], solved.remoteness[i]), g.render(state)
        if i % margin_every == 0:
            assert ab.margin(state) == solved.margin[i], g.render(state)


def test_retrograde_agrees_with_alphabeta_3x3() -> None:
    # value and remoteness on every position of the 3x3 2+2 preset, margin on every 6th
    _agreement("3x3", margin_every=6)


@pytest.mark.slow
def test_retrograde_agrees_with_alphabeta_3x3_3() -> None:
    # value and remoteness on every position of the 3x3 3+3 preset, margin on every 6th
    _agreement("3x3-3", margin_every=6)


def test_setup_rows_name_their_layout() -> None:
    # setups.parquet and `show --json` name a start by the layout that `setup=` accepts
    g = game(rows=3, cols=4, black=3, white=3, setup="BWGG/GGBW/WGBG")
    start = g.initial_state()
    assert g.describe_state(start) == "BWGG/GGBW/WGBG"
    assert parse_layout(g.describe_state(start), 3, 4) == start.board
    after = g.apply(start, g.legal_actions(start)[0])
    assert "/" in g.describe_state(after) and "to move" in g.describe_state(after)


@pytest.mark.parametrize("cells,greens", [(1, 0), (4, 0), (6, 0), (6, 2), (9, 3), (9, 0)])
def test_board_estimate_equals_the_exact_ranker_even_without_green_pyramids(cells, greens):
    """The floating-point board count used to refuse keys that cannot fit equals the exact
    ranker's count, also when every pyramid is black or white (no green: it raised IndexError)."""
    from solver.games.greener import BoardRanker, estimate_boards

    assert estimate_boards(cells, greens) == pytest.approx(BoardRanker(cells, greens).size, rel=1e-12)


def test_a_board_without_green_pyramids_solves_or_refuses_in_one_line(tmp_path, capsys):
    """Found by the fuzz test: 2x3 with 3 black and 3 white (preset 3x3-3 on two rows) leaves
    no green pyramid; solve answers (exit 0 or one-line error 2), never a traceback."""
    from solver.cli import main

    code = main(["solve", "greener", "--preset", "3x3-3", "--set", "rows=2", "--out", str(tmp_path),
                 "--max-positions", "20000", "--quiet"])
    err = capsys.readouterr().err
    assert code in (0, 2) and "Traceback" not in err
    assert code == 0 or len([line for line in err.splitlines() if line.startswith("error")]) == 1
