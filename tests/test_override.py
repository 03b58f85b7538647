"""Rules tests of Override, one per rule and edge case of /work/shared/rules/override.md.

Every position is built by hand and every expected answer is reasoned from the rules text in the
comment next to it. Cells: ``a1`` is the bottom-left square, letters are columns, numbers rows.
Stacks are written bottom to top (``"BS,AL"`` = A's large covering B's small).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from solver.core.game import NodeKind, Result
from solver.core.symmetry import parse_cell
from solver.errors import IllegalMoveError, PyramidsError, VariantError
from solver.games import make_game
from solver.games.override import PASS, Move, Override, OverrideState, Place, piece

PIECE = {f"{c}{s}": piece(ci, si) for ci, c in enumerate("AB") for si, s in enumerate("SML")}


def game(**params: object) -> Override:
    """A 3x3, line-3, one-of-each game unless told otherwise."""
    base: dict[str, object] = {"size": 3, "line": 3, "per_size": 1}
    base.update(params)
    g = make_game("override", base)
    assert isinstance(g, Override)
    return g


def pos(g: Override, board: dict[str, str], player: int = 0, last: str | None = None) -> OverrideState:
    """A hand-built position: ``{"a1": "BS,AL"}`` (bottom to top), side to move, last move."""
    stacks: list[tuple[int, ...]] = [()] * g.cells
    for name, text in board.items():
        cell = parse_cell(name, g.size, g.size)
        assert cell is not None
        stacks[cell] = tuple(PIECE[p.strip().upper()] for p in text.split(","))
    last_move = None
    if last is not None:
        a, b = last.split("-")
        last_move = (parse_cell(a, g.size, g.size), parse_cell(b, g.size, g.size))
    state = OverrideState(tuple(stacks), player, last_move)  # type: ignore[arg-type]
    assert g.decode(g.encode(state)) == state
    return state


def names(g: Override, state: OverrideState) -> set[str]:
    return {g.action_name(state, a) for a in g.legal_actions(state)}


def moves(g: Override, state: OverrideState) -> set[str]:
    return {g.action_name(state, a) for a in g.legal_actions(state) if isinstance(a, Move)}


def stack_at(g: Override, state: OverrideState, cell: str) -> str:
    return g.stack_text(state.stacks[parse_cell(cell, g.size, g.size)])  # type: ignore[index]


# --- parameters -----------------------------------------------------------------------
def test_defaults_and_presets() -> None:
    # Rules table: size 5, line 5, per_size 5, centre_rule on, no_undo on.
    g = make_game("override")
    assert (g.variant.size, g.variant.line, g.variant.per_size) == (5, 5, 5)
    assert g.variant.centre_rule is True and g.variant.no_undo is True
    assert Override.scored is False
    # The three small presets of the rules file, and 4x4 with lines of three.
    assert Override.presets["3x3"] == {"size": 3, "line": 3, "per_size": 1}
    assert Override.presets["3x3-2"] == {"size": 3, "line": 3, "per_size": 2}
    assert Override.presets["4x4"] == {"size": 4, "line": 4, "per_size": 1}
    assert Override.presets["4x4-3"] == {"size": 4, "line": 3, "per_size": 1}
    for params in Override.presets.values():
        make_game("override", params)


def test_variant_errors_are_one_line() -> None:
    # line > size cannot fit on the board: an error with the fix.
    with pytest.raises(VariantError) as err:
        make_game("override", size=3, line=4)
    assert "line (4) cannot exceed size (3)" in str(err.value) and "line=3" in str(err.value)
    bad: list[dict[str, object]] = [
        {"colour": 2},  # unknown parameter
        {"size": "abc"},  # not an integer
        {"size": 1},  # below the minimum of 2
        {"per_size": 0},  # below the minimum of 1
        {"centre_rule": "maybe"},  # not on/off
        {"size": 3, "line": 4},
    ]
    for params in bad:
        with pytest.raises(VariantError) as err:
            make_game("override", params)
        assert "\n" not in str(err.value)
        assert isinstance(err.value, PyramidsError)


def test_line_equal_to_size_and_text_values_accepted() -> None:
    # line == size is allowed; values given as text (from --set) parse like Python values.
    g = make_game("override", {"size": "4", "line": "4", "per_size": "1", "no_undo": "off"})
    assert (g.variant.size, g.variant.line, g.variant.no_undo) == (4, 4, False)


def test_number_of_lines() -> None:
    # 3x3, line 3: 3 rows + 3 columns + 2 diagonals = 8.
    assert len(game().lines) == 8
    # 4x4, line 3: each row holds 2 segments of 3 (a-c, b-d): 8; columns 8; each diagonal
    # direction has 2 x 2 starting squares: 4 + 4. Total 24.
    assert len(game(size=4, line=3).lines) == 24
    # 5x5, line 5: 5 + 5 + 2 = 12.
    assert len(make_game("override").lines) == 12


# --- the start ------------------------------------------------------------------------
def test_start_position() -> None:
    # Empty board, A (player index 0) to move. Nothing to move yet; 6 pyramids (A/B x S/M/L) can go on
    # any of the 8 non-centre squares: 48 places, no pass.
    g = game()
    s = g.initial_state()
    assert g.node_kind(s) == NodeKind.DECISION and g.to_move(s) == 0
    acts = g.legal_actions(s)
    assert len(acts) == 48 and all(isinstance(a, Place) for a in acts)
    assert "AS@b2" not in names(g, s) and "BL@c3" in names(g, s)
    # Default 5x5: 24 non-centre squares x 6 pyramid kinds = 144.
    g5 = make_game("override")
    assert len(g5.legal_actions(g5.initial_state())) == 144


# --- placing --------------------------------------------------------------------------
def test_place_only_on_empty_squares() -> None:
    # AS on a1. Placing never covers: no place on a1. Left in supply: AM, AL, BS, BM, BL (5 kinds)
    # on the 7 empty non-centre squares = 35 places; AS on a1 can move to a2 or b1 = 2 moves.
    g = game()
    s = pos(g, {"a1": "AS"}, player=1)
    acts = names(g, s)
    assert not any(n.endswith("@a1") for n in acts)
    assert len(acts) == 37
    assert moves(g, s) == {"a1-a2", "a1-b1"}
    with pytest.raises(IllegalMoveError, match="empty square"):
        g.parse_action(s, "BL@a1")


def test_supply_exhaustion() -> None:
    # per_size=1: once AS is on the board (even covered) no AS can be placed; the others can.
    g = game()
    s = pos(g, {"a1": "AS,BM"})
    acts = names(g, s)
    assert not any(n.startswith("AS@") or n.startswith("BM@") for n in acts)
    assert {"AM@c3", "AL@c3", "BS@c3", "BL@c3"} <= acts
    with pytest.raises(IllegalMoveError, match="supply"):
        g.parse_action(s, "AS@c3")
    # per_size=2: one AS on board leaves one in the supply; two leave none.
    g2 = game(per_size=2)
    assert "AS@c3" in names(g2, pos(g2, {"a1": "AS"}))
    assert "AS@b3" not in names(g2, pos(g2, {"a1": "AS", "c3": "AS"}))
    # Supply counts derive from the board.
    assert g2.supply(pos(g2, {"a1": "AS", "c3": "AS,BL"})) == [0, 2, 2, 2, 2, 1]


def test_centre_cannot_be_placed_on_but_can_be_entered() -> None:
    # centre_rule (odd board): b2 never receives a placed pyramid, but a move may enter it.
    g = game()
    s = pos(g, {"a2": "AS"})
    assert not any(n.endswith("@b2") for n in names(g, s))
    assert "a2-b2" in moves(g, s)
    after = g.apply(s, g.parse_action(s, "a2-b2"))
    assert stack_at(g, after, "b2") == "AS"


def test_centre_rule_off_and_even_boards() -> None:
    # centre_rule off: the centre is an ordinary square: 6 kinds x 9 squares = 54 at the start.
    g = game(centre_rule=False)
    assert "AS@b2" in names(g, g.initial_state())
    assert len(g.legal_actions(g.initial_state())) == 54
    # Even board: there is no centre, the rule is inactive: 6 x 16 = 96 places at the start.
    g4 = game(size=4, line=4)
    assert g4.centre is None
    assert len(g4.legal_actions(g4.initial_state())) == 96


# --- moving ---------------------------------------------------------------------------
def test_cover_only_strictly_smaller_tops() -> None:
    # b2 AM, a2 AS, c2 BM, b1 BL. No line (row 2 is A A B, column b is B A -).
    # AM (b2): onto a2 (AS, smaller) yes; onto c2 (BM, equal) no; onto b1 (BL, larger) no;
    #          onto empty b3 yes.
    # AS (a2): onto b2 (AM, larger) no; onto empty a1, a3 yes.
    # BM (c2): onto b2 (AM, equal) no; onto empty c1, c3 yes.
    # BL (b1): onto empty a1, c1 yes; onto b2 (AM, smaller) yes.
    # Never diagonally (e.g. b1-a2, b1-c2 do not exist).
    g = game()
    s = pos(g, {"b2": "AM", "a2": "AS", "c2": "BM", "b1": "BL"})
    assert g.node_kind(s) == NodeKind.DECISION
    assert moves(g, s) == {"b2-a2", "b2-b3", "a2-a1", "a2-a3", "c2-c1", "c2-c3", "b1-a1", "b1-c1", "b1-b2"}
    with pytest.raises(IllegalMoveError, match="strictly smaller"):
        g.parse_action(s, "b2-c2")
    with pytest.raises(IllegalMoveError, match="orthogonally"):
        g.parse_action(s, "b1-a2")
    # Covering: AM lands on AS; b2 is left empty.
    after = g.apply(s, g.parse_action(s, "b2-a2"))
    assert stack_at(g, after, "a2") == "AS,AM" and stack_at(g, after, "b2") == "."


def test_covered_pyramids_cannot_move_and_stacks_do_not_slide() -> None:
    # a1 = BS under AM. Only the top (AM) moves, alone: after a1-a2 and after a1-b1 the BS stays
    # on a1 and the destination holds AM only. No move takes the BS while it is covered.
    g = game()
    s = pos(g, {"a1": "BS,AM"})
    assert moves(g, s) == {"a1-a2", "a1-b1"}
    for m in ("a1-a2", "a1-b1"):
        after = g.apply(s, g.parse_action(s, m))
        assert stack_at(g, after, "a1") == "BS"
        assert stack_at(g, after, m[3:]) == "AM"
    # Once uncovered, the BS is a top and may move: to b1 (empty), not onto the larger AM on a2.
    after = g.apply(s, g.parse_action(s, "a1-a2"))
    assert moves(g, after) >= {"a1-b1"} and "a1-a2" not in moves(g, after)


def test_moving_either_colour() -> None:
    # Both players may move pyramids of both colours: B to move may move A's top.
    g = game()
    s = pos(g, {"a1": "AS", "c3": "BS"}, player=1)
    assert {"a1-a2", "a1-b1", "c3-c2", "c3-b3"} <= moves(g, s)
    assert {"AL@b1", "BL@b1"} <= names(g, s)


# --- no_undo --------------------------------------------------------------------------
def test_no_undo_forbids_only_the_straight_return() -> None:
    # A just moved AS from a1 to a2 (last = a1-a2); B to move. Forbidden: a2-a1.
    # Allowed: moving it elsewhere (a2-a3, a2-b2), moving another piece (c3-c2, c3-b3),
    # placing an identical AS from the supply (per_size=2) on the vacated a1.
    g = game(per_size=2)
    s = pos(g, {"a2": "AS", "c3": "BM"}, player=1, last="a1-a2")
    acts = names(g, s)
    assert "a2-a1" not in acts
    assert {"a2-a3", "a2-b2", "c3-c2", "c3-b3", "AS@a1"} <= acts
    with pytest.raises(IllegalMoveError, match="undo"):
        g.parse_action(s, "a2-a1")
    # Without no_undo the return is legal.
    g_off = game(per_size=2, no_undo=False)
    assert "a2-a1" in names(g_off, pos(g_off, {"a2": "AS", "c3": "BM"}, player=1, last="a1-a2"))


def test_no_undo_on_an_uncovering_move_binds_the_moved_pyramid_only() -> None:
    # A moved AL from a1 (uncovering BS) to a2. B may not move AL back (a2-a1), but the BS left
    # on a1 is another pyramid and may move (a1-b1).
    g = game()
    s = pos(g, {"a1": "BS", "a2": "AL"}, player=1, last="a1-a2")
    assert "a2-a1" not in moves(g, s)
    assert "a1-b1" in moves(g, s)


def test_no_undo_lasts_one_action() -> None:
    # Only the immediately preceding action matters.
    g = game()
    s = g.play(["AS@a1", "BS@c3", "a1-a2"])  # A moved AS a1 -> a2
    assert "a2-a1" not in moves(g, s)  # B may not take it straight back
    s1 = g.apply(s, g.parse_action(s, "BM@c1"))  # B places instead: a place clears the ban
    assert s1.last is None and "a2-a1" in moves(g, s1)  # A may now move it back
    s2 = g.apply(s, g.parse_action(s, "c3-c2"))  # B moves another piece instead
    # Now A moves: A's old a1-a2 is no longer the preceding action, so A may move the AS back;
    # what A may not do is undo B's c3-c2.
    assert "a2-a1" in moves(g, s2) and "c2-c3" not in moves(g, s2)
    s3 = g.apply(s2, g.parse_action(s2, "AM@a3"))
    assert "a2-a1" in moves(g, s3)  # and B, two actions later, is free to undo it too


# --- end of the game ------------------------------------------------------------------
def test_line_ends_the_game_for_the_mover() -> None:
    # a1 AS, c1 AM on row 1; A places AL on b1: row 1 all A -> A (the mover) wins at once.
    g = game()
    s = pos(g, {"a1": "AS", "c1": "AM"})
    after = g.apply(s, g.parse_action(s, "AL@b1"))
    assert g.node_kind(after) == NodeKind.TERMINAL
    assert g.to_move(after) == 1  # the player who would move next
    assert g.outcome(after).results == (Result.WIN, Result.LOSS)
    assert g.legal_actions(after) == []
    with pytest.raises(IllegalMoveError):
        g.parse_action(after, "b1-b2")
    # The batch view gives the result from to_move's view: B lost.
    exp = g.expand(np.array([g.encode(after)], dtype=np.uint64))
    assert exp.kind[0] == NodeKind.TERMINAL and exp.result[0] == Result.LOSS


def test_uncovering_a_line_of_the_opponent_loses() -> None:
    # Row 1: a1 BS, b1 BM covered by AL, c1 BL -> tops B A B: no line. A moves AL b1-b2: b1 now
    # shows BM, row 1 is B B B. A has no line (its only top is AL on b2), so B wins.
    g = game()
    s = pos(g, {"a1": "BS", "b1": "BM,AL", "c1": "BL"}, player=0)
    assert g.node_kind(s) == NodeKind.DECISION
    after = g.apply(s, g.parse_action(s, "b1-b2"))
    assert g.node_kind(after) == NodeKind.TERMINAL
    assert g.to_move(after) == 1 and g.outcome(after).results == (Result.LOSS, Result.WIN)
    assert g.winner(after) == 1


@pytest.mark.parametrize("mover", [0, 1])
def test_mover_wins_when_both_lines_appear(mover: int) -> None:
    # Row 1: a1 xS, b1 xM under yL, c1 xL (x = opponent's colour, y = mover's). Row 2: a2 yS,
    # c2 yM. The mover plays b1-b2: row 2 becomes y y y AND row 1 becomes x x x. The mover wins.
    g = game()
    y, x = "AB"[mover], "AB"[1 - mover]
    board = {"a1": f"{x}S", "b1": f"{x}M,{y}L", "c1": f"{x}L", "a2": f"{y}S", "c2": f"{y}M"}
    s = pos(g, board, player=mover)
    assert g.node_kind(s) == NodeKind.DECISION
    after = g.apply(s, g.parse_action(s, "b1-b2"))
    assert g.has_line(after, 0) and g.has_line(after, 1)
    assert g.winner(after) == mover
    assert g.outcome(after).results[mover] == Result.WIN


def test_stack_counts_as_the_colour_of_its_top() -> None:
    # a1 AS, c1 AM, b1 BS; AL on b2 covers b1's BS by b2-b1: b1 shows A, row 1 is A A A: A wins.
    g = game()
    s = pos(g, {"a1": "AS", "b1": "BS", "c1": "AM", "b2": "AL"})
    after = g.apply(s, g.parse_action(s, "b2-b1"))
    assert g.winner(after) == 0
    # An A pyramid covered by B does not count for A: a1 = AS under BL, b1 AM, c1 AL: tops B A A.
    s2 = pos(g, {"a1": "AS,BL", "b1": "AM", "c1": "AL"})
    assert g.node_kind(s2) == NodeKind.DECISION


def test_short_lines_on_a_larger_board() -> None:
    # size 4, line 3: any 3 consecutive squares count, in both diagonal directions.
    g = game(size=4, line=3)
    cases = {
        ("b1", "c2", "d3"): 0,  # up-right diagonal not starting in a corner
        ("a3", "b2", "c1"): 1,  # down-right (anti-)diagonal
        ("b4", "c4", "d4"): 0,  # three of a row of four
        ("d2", "d3", "d4"): 1,  # three of a column of four
    }
    for cells, colour in cases.items():
        c = "AB"[colour]
        s = pos(g, {cells[0]: f"{c}S", cells[1]: f"{c}M", cells[2]: f"{c}L"}, player=1 - colour)
        assert g.node_kind(s) == NodeKind.TERMINAL, cells
        assert g.winner(s) == colour, cells
    # Not lines: a gap (a1 b1 d1), a row-major wrap (c1 d1 a2), a knight-bent shape (a1 b2 b3).
    for cells in (("a1", "b1", "d1"), ("c1", "d1", "a2"), ("a1", "b2", "b3")):
        s = pos(g, {cells[0]: "AS", cells[1]: "AM", cells[2]: "AL"})
        assert g.node_kind(s) == NodeKind.DECISION, cells


def test_pass_only_when_no_action() -> None:
    # 3x3, per_size 5, every square topped by a large (A B A / A B B / B A A from the top row):
    # no row, column or diagonal is one colour. No empty square -> no place; a large can never
    # cover another large -> no move. The player passes; the board stays, the other player moves,
    # and the last move is forgotten.
    g = game(per_size=5)
    board = {
        "a3": "AL", "b3": "BL", "c3": "AL",
        "a2": "AL", "b2": "BL", "c2": "BL",
        "a1": "BL", "b1": "AL", "c1": "AL",
    }
    s = pos(g, board, player=1, last="b1-b2")  # (a made-up last move, to see it forgotten)
    assert g.node_kind(s) == NodeKind.DECISION
    assert g.legal_actions(s) == [PASS]
    after = g.apply(s, g.parse_action(s, "PASS"))
    assert after.stacks == s.stacks and after.player == 0 and after.last is None
    # A pass is never available while another action is.
    start = g.initial_state()
    assert PASS not in g.legal_actions(start)
    with pytest.raises(IllegalMoveError, match="pass"):
        g.parse_action(start, "pass")


# --- keys, symmetry, notation ---------------------------------------------------------
def _playout_states(g: Override, rng: random.Random, games: int, max_len: int = 60) -> list[OverrideState]:
    out = []
    for _ in range(games):
        s = g.initial_state()
        for _ in range(max_len):
            out.append(s)
            if g.is_terminal(s):
                break
            s = g.apply(s, rng.choice(g.legal_actions(s)))
    return out


@pytest.mark.parametrize(
    "params",
    [
        {"size": 3, "line": 3, "per_size": 1},
        {"size": 3, "line": 3, "per_size": 2},
        {"size": 4, "line": 4, "per_size": 1},
        {"size": 5, "line": 5, "per_size": 1},
        {"size": 3, "line": 3, "per_size": 3, "centre_rule": False, "no_undo": False},
    ],
)
def test_encode_decode_round_trip_and_64_bits(params: dict[str, object]) -> None:
    g = make_game("override", params)
    assert isinstance(g, Override) and g.fits_64 and g.key_bound <= 2**64
    rng = random.Random(7)
    seen: dict[int, OverrideState] = {}
    for s in _playout_states(g, rng, 40):
        k = g.encode(s)
        assert 0 <= k < 2**64
        assert g.decode(k) == s
        assert seen.setdefault(k, s) == s  # distinct positions, distinct keys


def test_default_variant_keys_are_exact_beyond_64_bits() -> None:
    # 5x5 with 5 of each does not fit 64 bits: keys stay exact (Python ints), not solvable into tables.
    g = make_game("override")
    assert isinstance(g, Override) and not g.fits_64 and "64 bits" in g.too_big()
    for s in _playout_states(g, random.Random(3), 3, 40):
        assert g.decode(g.encode(s)) == s


def test_decode_rejects_non_positions() -> None:
    g = game()
    with pytest.raises(ValueError):
        g.decode(g.key_bound)
    # AS and BS both on a1 (pieces scheme digits 1 and 1): two smalls in one stack.
    base = g.cells + 1
    with pytest.raises(ValueError):
        g.decode((1 * base**0 + 1 * base**3) * 2 * (g.num_edges + 1))


def test_symmetric_images_agree() -> None:
    # The 8 images of a position (identity first) have as many legal actions, the same node kind
    # and winner, and the canonical key is the smallest key among them.
    g = game(per_size=2)
    rng = random.Random(11)
    for s in _playout_states(g, rng, 15, 30):
        images = g.symmetries(s)
        assert len(images) == 8 and images[0] == s
        n = len(g.legal_actions(s))
        for im in images:
            assert len(g.legal_actions(im)) == n
            assert g.node_kind(im) == g.node_kind(s) and g.winner(im) == g.winner(s)
        assert g.encode(g.canonical(s)) == min(g.encode(im) for im in images)


def test_symmetry_maps_the_last_move() -> None:
    # Quarter turn (r, c) -> (c, n-1-r): a1 (0,0) -> c1 (0,2), a2 (1,0) -> b1 (0,1). A last move
    # a1-a2 becomes c1-b1, so in the image the banned return is b1-c1 (and a2-a1 is not a move).
    g = game()
    s = pos(g, {"a2": "AS"}, player=1, last="a1-a2")
    image = g.symmetries(s)[1]
    assert image.last == (parse_cell("c1", 3, 3), parse_cell("b1", 3, 3))
    assert "b1-c1" not in moves(g, image) and {"b1-a1", "b1-b2"} <= moves(g, image)


def test_notation_and_parsing() -> None:
    g = game()
    s = pos(g, {"b1": "AS"})
    # Case-insensitive and a few typing variants map to the same actions.
    assert g.parse_action(s, "al@C3") == Place(0, 2, parse_cell("c3", 3, 3))
    assert g.parse_action(s, "AL c3") == g.parse_action(s, "AL@c3")
    assert g.parse_action(s, "B1-B2") == Move(parse_cell("b1", 3, 3), parse_cell("b2", 3, 3))
    assert g.parse_action(s, "b1b2") == g.parse_action(s, "b1-b2")
    # Names are unique among the legal actions and contain no spaces.
    all_names = [g.action_name(s, a) for a in g.legal_actions(s)]
    assert len(all_names) == len(set(all_names)) and not any(" " in n for n in all_names)
    # An unknown text: one line, with the legal moves.
    with pytest.raises(IllegalMoveError) as err:
        g.parse_action(s, "zz9")
    assert "\n" not in str(err.value) and "b1-b2" in str(err.value)


def test_render() -> None:
    # Row 3 on top, letters at the bottom, stacks bottom to top, the centre marked, who moves.
    g = game()
    s = pos(g, {"a1": "AS,BM"}, player=1, last="b1-a1")
    text = g.render(s)
    lines = text.splitlines()
    assert lines[0].startswith("3 |") and lines[2].startswith("1 |")
    assert "AS,BM" in lines[2] and "+" in lines[1]
    assert lines[3].split() == ["a", "b", "c"]
    assert "B (player 2) to move" in text and "b1-a1" in text
    won = g.apply(pos(g, {"a1": "AS", "c1": "AM"}), Place(0, 2, 1))
    assert "A (player 1) wins" in g.render(won)


# --- values (hand-reasoned, checked by the alpha-beta engine) -------------------------
def test_immediate_win_is_found() -> None:
    # a1 AS, c1 AM, A to move: AL@b1 completes row 1 at once -> a win in 1 ply.
    from solver.core.values import WIN
    from solver.engines.alphabeta import AlphaBeta

    g = game()
    s = pos(g, {"a1": "AS", "c1": "AM"})
    assert AlphaBeta(g).search(s, max_depth=3) == (WIN, 1)


def test_endless_passing_is_a_draw() -> None:
    # The all-large position of test_pass_only_when_no_action: each side can only pass, the board
    # never changes, nobody ever gets a line: endless play, a draw (no remoteness).
    from solver.core.values import DRAW
    from solver.engines.alphabeta import AlphaBeta

    g = game(per_size=5)
    tops = {"a3": "A", "b3": "B", "c3": "A", "a2": "A", "b2": "B", "c2": "B", "a1": "B", "b1": "A", "c1": "A"}
    s = pos(g, {cell: f"{c}L" for cell, c in tops.items()})
    assert AlphaBeta(g).search(s, max_depth=6) == (DRAW, None)
