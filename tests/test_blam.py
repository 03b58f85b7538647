"""Tests of Blam! (solver/games/blam.py) and the paranoid wrapper (solver/core/paranoid.py).

Every expected value is worked out by hand from /work/shared/rules/blam.md; the reasoning is in
the comments. Boards are written as ``{"b2": "1L"}``: square -> owner digit (1-based, as in the
rendered board) and size letter. Players are 0-based in the API.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from solver.core.game import Game, NodeKind, Result
from solver.core.paranoid import Paranoid
from solver.core.symmetry import grid_symmetries, parse_cell
from solver.errors import IllegalMoveError, TooBigError, VariantError
from solver.games import make_game
from solver.games.blam import PASS, Blam, BlamState, piece_code

# --- helpers ---------------------------------------------------------------------------


def blam(**params: Any) -> Blam:
    game = make_game("blam", **params)
    assert isinstance(game, Blam)
    return game


def position(
    game: Blam,
    cells: dict[str, str],
    stash: tuple[tuple[int, int, int], ...] | None = None,
    treasure: tuple[tuple[int, int, int], ...] | None = None,
    mover: int = 0,
) -> BlamState:
    """A hand-made position (stash defaults to a full one, treasure to empty)."""
    board = [0] * game.n
    for name, piece in cells.items():
        cell = parse_cell(name, game.rows, game.cols)
        assert cell is not None, name
        board[cell] = piece_code(int(piece[0]) - 1, "SML".index(piece[1]))
    P, k = game.num_players, game.per_size
    return BlamState(
        board=tuple(board),
        stash=stash if stash is not None else tuple((k, k, k) for _ in range(P)),
        treasure=treasure if treasure is not None else tuple((0, 0, 0) for _ in range(P)),
        mover=mover,
    )


def pieces(game: Blam, state: BlamState) -> dict[str, str]:
    """The occupied squares of ``state`` in the notation of :func:`position`."""
    out = {}
    for cell, v in enumerate(state.board):
        if v:
            owner, size = divmod(v - 1, 3)
            r, c = divmod(cell, game.cols)
            out[f"{chr(ord('a') + c)}{r + 1}"] = f"{owner + 1}{'SML'[size]}"
    return out


def move(game: Blam, state: BlamState, text: str) -> BlamState:
    return game.apply(state, game.parse_action(state, text))


def random_states(game: Game, playouts: int, seed: int, max_plies: int = 60) -> list:
    """States met on random playouts (the ply limit only bounds the test, not the game)."""
    rng = random.Random(seed)
    out = []
    for _ in range(playouts):
        state = game.initial_state()
        out.append(state)
        for _ in range(max_plies):
            if game.is_terminal(state):
                break
            state = game.apply(state, rng.choice(game.legal_actions(state)))
            out.append(state)
    return out


def random_positions(game: Blam, count: int, seed: int) -> list[BlamState]:
    """Random consistent positions, dense boards included (long runs on every ray)."""
    rng = random.Random(seed)
    P, k, n = game.num_players, game.per_size, game.n
    out = []
    for _ in range(count):
        board = [0] * n
        free = list(range(n))
        rng.shuffle(free)
        stash = [[0, 0, 0] for _ in range(P)]
        treasure = [[0, 0, 0] for _ in range(P)]
        fill = rng.random()
        for q in range(P):
            for s in range(3):
                for _ in range(k):
                    r = rng.random()
                    if r < fill and free:
                        board[free.pop()] = piece_code(q, s)
                    elif r < fill + (1 - fill) / 2:
                        stash[q][s] += 1
                    else:  # captured by one of the others
                        treasure[rng.choice([p for p in range(P) if p != q])][s] += 1
        out.append(BlamState(tuple(board), tuple(map(tuple, stash)), tuple(map(tuple, treasure)),
                             rng.randrange(P)))  # type: ignore[arg-type]
    return out


# --- variants ----------------------------------------------------------------------------


def test_parameters_and_presets() -> None:
    g = make_game("blam")
    # defaults from the rules: 8x8, 2 players, 5 per size, chain on, no tuning variants
    assert (g.rows, g.cols, g.num_players, g.per_size) == (8, 8, 2, 5)
    assert g.chain and not g.smaller_only and not g.captures_tiebreak
    assert [p.name for p in Blam.params] == [
        "rows", "cols", "players", "per_size", "chain", "push_smaller_only", "tiebreak"]
    assert Blam.scored and Blam.name == "blam"
    assert Blam.presets["3x3"] == {"rows": 3, "cols": 3, "per_size": 1}
    assert Blam.presets["4x4"] == {"rows": 4, "cols": 4, "per_size": 1}
    assert Blam.presets["3x3-3p"] == {"rows": 3, "cols": 3, "per_size": 1, "players": 3}
    assert Blam.presets["4x4-2"] == {"rows": 4, "cols": 4, "per_size": 2}
    assert Blam.presets["6x6"] == {"rows": 6, "cols": 6, "per_size": 1}
    assert make_game("blam", players="3").num_players == 3
    # the full game's keys exceed 64 bits: allowed, with a warning; enumerating it is refused
    assert g.key_space > 2**64 and "bits" in g.too_big() and not g.warnings
    with pytest.raises(TooBigError):
        g.expand(np.array([0], dtype=np.uint64))


@pytest.mark.parametrize(
    "params",
    [
        {"players": 1},
        {"players": 5},
        {"rows": 0},
        {"cols": 27},
        {"rows": 1, "cols": 1},  # no neighbours: nothing could ever be pushed
        {"per_size": 0},
        {"tiebreak": "coin"},
        {"chain": "sometimes"},
        {"push_smaller_only": "maybe"},
        {"size": 3},  # no such parameter
    ],
)
def test_variant_errors(params: dict[str, Any]) -> None:
    with pytest.raises(VariantError):
        make_game("blam", **params)


# --- pushes ------------------------------------------------------------------------------

# Placing at c3, the centre of a 5x5 board: the neighbour in each direction moves one square
# further in that direction (it lands on an empty square, nothing falls).
EIGHT = [
    ("b2", "a1"), ("c2", "c1"), ("d2", "e1"), ("b3", "a3"),
    ("d3", "e3"), ("b4", "a5"), ("c4", "c5"), ("d4", "e5"),
]


@pytest.mark.parametrize("start,end", EIGHT)
def test_push_each_direction(start: str, end: str) -> None:
    g = blam(rows=5, cols=5, per_size=2)
    s = position(g, {start: "2M"})
    t = move(g, s, "S@c3")
    assert pieces(g, t) == {"c3": "1S", end: "2M"}
    assert t.mover == 1 and t.stash[0] == (1, 2, 2) and t.treasure == ((0, 0, 0), (0, 0, 0))


def test_push_all_eight_at_once() -> None:
    # all 8 neighbours of c3 occupied (own and opponent's pyramids, all sizes): each moves one
    # square straight away from c3 (the 8 rays are disjoint), the placed L stays at c3
    g = blam(rows=5, cols=5, per_size=3)
    kinds = ["1S", "1M", "1L", "2S", "2M", "2L", "1S", "2L"]
    s = position(g, {start: k for (start, _), k in zip(EIGHT, kinds)}, stash=((1, 1, 3), (1, 1, 1)))
    t = move(g, s, "L@c3")
    assert pieces(g, t) == {"c3": "1L", **{end: k for (_, end), k in zip(EIGHT, kinds)}}
    assert t.stash == ((1, 1, 2), (1, 1, 1))


def test_chain_moves_whole_run() -> None:
    # 5x5, run b1 c1 d1 along the ray from a1 to the right, e1 empty: placing at a1 moves the
    # whole run one square: b1 -> c1, c1 -> d1, d1 -> e1; b1 becomes empty
    g = blam(rows=5, cols=5, per_size=2)
    s = position(g, {"b1": "2S", "c1": "1M", "d1": "2L"})
    t = move(g, s, "M@a1")
    assert pieces(g, t) == {"a1": "1M", "c1": "2S", "d1": "1M", "e1": "2L"}


def test_chain_diagonal_run_pushes_off() -> None:
    # the seed's example: a pushed pyramid entering an occupied square pushes that one on;
    # 3x3, b2 and c3 on the diagonal from a1: b2 -> c3, c3 -> off the board (P2's L: treasure)
    g = blam(rows=3, cols=3, per_size=1)
    s = position(g, {"b2": "1M", "c3": "2L"})
    t = move(g, s, "S@a1")
    assert pieces(g, t) == {"a1": "1S", "c3": "1M"}
    assert t.treasure[0] == (0, 0, 1)


def test_run_stops_at_first_gap() -> None:
    # 5x5, b1 c1 occupied, d1 empty, e1 occupied: the run from a1 is b1 c1 only; it moves into
    # d1 and e1 stays where it is
    g = blam(rows=5, cols=5, per_size=2)
    s = position(g, {"b1": "2S", "c1": "2M", "e1": "1L"})
    t = move(g, s, "S@a1")
    assert pieces(g, t) == {"a1": "1S", "c1": "2S", "d1": "2M", "e1": "1L"}
    assert t.treasure == ((0, 0, 0), (0, 0, 0))


def test_push_off_each_edge_and_corner() -> None:
    # 3x3, P1 places L at b2; the opponent's pyramids on a2 (left edge), c2 (right edge),
    # b1 (bottom), b3 (top) and a1 (corner, diagonal) are all pushed off: 3 S + 2 M go into
    # P1's treasure, score 3*1 + 2*2 = 7
    g = blam(rows=3, cols=3, per_size=3)
    s = position(g, {"a2": "2S", "c2": "2S", "b1": "2S", "b3": "2M", "a1": "2M"},
                 stash=((3, 3, 3), (0, 1, 3)))
    t = move(g, s, "L@b2")
    assert pieces(g, t) == {"b2": "1L"}
    assert t.treasure == ((3, 2, 0), (0, 0, 0))
    assert g.scores(t) == (7, 0)


def test_chain_run_reaching_edge_loses_last() -> None:
    # 3x3, run b1 c1 from a1 reaches the right edge: c1 falls off (own S: back to the stash),
    # b1 moves to c1
    g = blam(rows=3, cols=3, per_size=1)
    s = position(g, {"b1": "2M", "c1": "1S"}, stash=((0, 1, 1), (1, 0, 1)))
    t = move(g, s, "L@a1")
    assert pieces(g, t) == {"a1": "1L", "c1": "2M"}
    assert t.stash[0] == (1, 1, 0) and t.treasure == ((0, 0, 0), (0, 0, 0))


def test_own_back_to_stash_other_to_treasure() -> None:
    # 3x3: P1 places M at b2; its own S on a2 falls off the left edge and returns to P1's
    # stash; P2's L on c2 falls off the right edge into P1's treasure (3 pips)
    g = blam(rows=3, cols=3, per_size=1)
    s = position(g, {"a2": "1S", "c2": "2L"}, stash=((0, 1, 1), (1, 1, 0)))
    t = move(g, s, "M@b2")
    assert pieces(g, t) == {"b2": "1M"}
    assert t.stash == ((1, 0, 1), (1, 1, 0))
    assert t.treasure == ((0, 0, 1), (0, 0, 0))
    assert g.scores(t) == (3, 0)
    # the returned S can be placed again on P1's next turn
    t2 = move(g, t, "S@a1")  # P2 places S at a1 and pushes b2 (P1's M) to c3
    assert pieces(g, t2) == {"a1": "2S", "c3": "1M"}
    assert "S@b2" in [g.action_name(t2, a) for a in g.legal_actions(t2)]


def test_opponent_pushing_my_pyramid_off_scores_for_them() -> None:
    # the owner of the pushed pyramid does not matter, only the placer: P2 pushing P2's own
    # pyramid off gets it back; P2 pushing P1's gets the points
    g = blam(rows=3, cols=3, per_size=1)
    s = position(g, {"a1": "1L", "c3": "2S"}, stash=((1, 1, 0), (0, 1, 1)), mover=1)
    t = move(g, s, "M@b2")
    assert pieces(g, t) == {"b2": "2M"}
    assert t.stash[1] == (1, 0, 1) and t.treasure == ((0, 0, 0), (0, 0, 1))


def test_placing_must_be_on_empty_square_from_own_stash() -> None:
    g = blam(rows=3, cols=3, per_size=1)
    s = position(g, {"b2": "2S"}, stash=((0, 1, 1), (0, 1, 1)))
    names = [g.action_name(s, a) for a in g.legal_actions(s)]
    # 8 empty squares x the 2 sizes in P1's stash (M, L); no S, and b2 is taken
    assert len(names) == 16 and not any(n.startswith("S@") for n in names)
    assert "M@b2" not in names
    with pytest.raises(IllegalMoveError):
        move(g, s, "S@a1")
    with pytest.raises(IllegalMoveError):
        move(g, s, "M@b2")
    with pytest.raises(IllegalMoveError):
        g.parse_action(s, "Q@a1")


# --- passing, end, scores ----------------------------------------------------------------


def test_pass_with_empty_stash() -> None:
    # P1's stash is empty, P2 still has an S: P1's only move is "pass", which changes nothing
    # but the player to move
    g = blam(rows=3, cols=3, per_size=1)
    s = position(g, {"a1": "1S", "c3": "1L", "b3": "2M", "a3": "2L"},
                 stash=((0, 0, 0), (1, 0, 0)), treasure=((0, 0, 0), (0, 1, 0)))
    assert g.node_kind(s) == NodeKind.DECISION
    assert g.legal_actions(s) == [PASS]
    assert g.action_name(s, PASS) == "pass"
    t = move(g, s, "pass")
    assert t.board == s.board and t.stash == s.stash and t.mover == 1
    # with pyramids in the stash, passing is not allowed
    with pytest.raises(IllegalMoveError):
        move(g, t, "pass")
    with pytest.raises(IllegalMoveError):
        g.apply(t, PASS)


def test_whole_game_on_1x2_board() -> None:
    # rows=1, cols=2: every placement goes on the only empty square and pushes the other
    # pyramid (always the opponent's, placed last turn) off the board into the placer's
    # treasure. P1: L, M, S; P2: S, M, L.
    g = blam(rows=1, cols=2, per_size=1)
    s = g.play(["L@a1", "S@b1"])  # P2 captures P1's L (3)
    assert pieces(g, s) == {"b1": "2S"} and g.scores(s) == (0, 3)
    s = g.play(["M@a1", "M@b1", "S@a1"], s)  # P1 gets S (1), P2 gets M (2), P1 gets M (2)
    assert g.scores(s) == (3, 5) and not g.is_terminal(s)
    s = g.play(["L@b1"], s)  # P2 captures P1's S (1); both stashes are now empty: the end
    assert pieces(g, s) == {"b1": "2L"}
    assert g.is_terminal(s) and g.legal_actions(s) == []
    assert g.to_move(s) == 0  # the next seat after P2's last move
    out = g.outcome(s)
    assert out.scores == (3, 6)
    assert out.results == (Result.LOSS, Result.WIN)
    assert out.margin(0) == -3 and out.margin(1) == 3
    with pytest.raises(IllegalMoveError):
        g.play(["pass"], s)


def test_tie_and_captures_tiebreak() -> None:
    # all stashes empty: the end. P1 took three S (3 pips, 3 pyramids), P2 one L (3 pips,
    # 1 pyramid): equal top scores are a tie; with tiebreak=captures P1 wins on 3 > 1 pyramids
    for tiebreak, expected in (("none", (Result.TIE, Result.TIE)), ("captures", (Result.WIN, Result.LOSS))):
        g = blam(rows=3, cols=3, per_size=3, tiebreak=tiebreak)
        s = position(g, {"a1": "1S"}, stash=((0, 0, 0), (0, 0, 0)), treasure=((3, 0, 0), (0, 0, 1)))
        assert g.is_terminal(s)
        out = g.outcome(s)
        assert out.scores == (3, 3) and out.results == expected
    # same captures count too: still a tie with the tiebreak (S+L vs M+M: 4 pips, 2 pyramids)
    g = blam(rows=3, cols=3, per_size=3, tiebreak="captures")
    s = position(g, {}, stash=((0, 0, 0), (0, 0, 0)), treasure=((1, 0, 1), (0, 2, 0)))
    assert g.outcome(s).results == (Result.TIE, Result.TIE)
    # a higher score beats more captures: three S (3 pips, 3 pyramids) lose to two L (6 pips)
    s = position(g, {}, stash=((0, 0, 0), (0, 0, 0)), treasure=((3, 0, 0), (0, 0, 2)))
    assert g.outcome(s).results == (Result.LOSS, Result.WIN)


def test_board_full_ends_the_game() -> None:
    # ruling: nobody can place on a full board, so the game ends even with pyramids in hand.
    # 1x5, chain=off: a1 b1 d1 e1 occupied, P2 places M at c1: b1 cannot move (a1 behind it is
    # occupied), d1 cannot move (e1 behind it): nothing moves, the board is full
    g = blam(rows=1, cols=5, per_size=1, chain=False)
    s = position(g, {"a1": "1S", "b1": "1M", "d1": "1L", "e1": "2S"},
                 stash=((0, 0, 0), (0, 1, 1)), mover=1)
    t = move(g, s, "M@c1")
    assert pieces(g, t) == {"a1": "1S", "b1": "1M", "c1": "2M", "d1": "1L", "e1": "2S"}
    assert g.is_terminal(t) and t.stash[1] == (0, 0, 1)
    assert g.outcome(t).results == (Result.TIE, Result.TIE)  # 0 : 0


# --- tuning variants ---------------------------------------------------------------------


def test_chain_off_blocked_push() -> None:
    # chain=off, 5x5: b1 has c1 right behind it, so placing at a1 moves nothing on that ray;
    # b2 (diagonal) has c3 empty behind it and moves there
    g = blam(rows=5, cols=5, per_size=2, chain=False)
    s = position(g, {"b1": "2S", "c1": "2M", "b2": "2L"})
    t = move(g, s, "S@a1")
    assert pieces(g, t) == {"a1": "1S", "b1": "2S", "c1": "2M", "c3": "2L"}


def test_chain_off_only_adjacent_moves_and_falls_off() -> None:
    # chain=off, 3x3, S placed at b2: a2, c2 and b3 all have the board's edge right behind
    # them, so all three fall off: P2's M (2 pips) and S (1 pip) into P1's treasure, P1's own L
    # back to P1's stash
    g = blam(rows=3, cols=3, per_size=1, chain=False)
    s = position(g, {"a2": "2M", "c2": "1L", "b3": "2S"}, stash=((1, 1, 0), (0, 0, 1)))
    t = move(g, s, "S@b2")
    assert pieces(g, t) == {"b2": "1S"}
    assert t.stash[0] == (0, 1, 1) and t.treasure[0] == (1, 1, 0)
    # 5x5 chain=off: only the adjacent pyramid of a run moves when the square beyond is free
    g = blam(rows=5, cols=5, per_size=2, chain=False)
    s = position(g, {"b1": "2S", "d1": "2M"})
    t = move(g, s, "S@a1")
    # b1 -> c1 (empty); d1 is not adjacent to a1 and stays
    assert pieces(g, t) == {"a1": "1S", "c1": "2S", "d1": "2M"}


def test_push_smaller_only() -> None:
    g = blam(rows=3, cols=3, per_size=1, push_smaller_only=True)
    # an S placed at b2 pushes the S on a2 off (equal size) but not the L on c2 nor the M on b1
    s = position(g, {"a2": "2S", "c2": "2L", "b1": "2M"})
    t = move(g, s, "S@b2")
    assert pieces(g, t) == {"b2": "1S", "c2": "2L", "b1": "2M"}
    assert t.treasure[0] == (1, 0, 0)
    # an M pushes an equal M and a smaller S
    s = position(g, {"a2": "2S", "b1": "2M", "c2": "2L"})
    t = move(g, s, "M@b2")
    assert pieces(g, t) == {"b2": "1M", "c2": "2L"}
    assert t.treasure[0] == (1, 1, 0)


def test_push_smaller_only_chain_ruling() -> None:
    # ruling: with chain=on a pyramid larger than the placed one anywhere in the run blocks the
    # whole ray. 5x5, placing M at a1: run b1 (S) c1 (L) -> blocked, nothing on that ray moves;
    # run a2 (S) a3 (M) -> both at most M: the run moves up one square
    g = blam(rows=5, cols=5, per_size=2, push_smaller_only=True)
    s = position(g, {"b1": "2S", "c1": "2L", "a2": "2S", "a3": "2M"})
    t = move(g, s, "M@a1")
    assert pieces(g, t) == {"a1": "1M", "b1": "2S", "c1": "2L", "a3": "2S", "a4": "2M"}
    # without the variant the first run moves too
    g2 = blam(rows=5, cols=5, per_size=2)
    t2 = move(g2, s, "M@a1")
    assert pieces(g2, t2) == {"a1": "1M", "c1": "2S", "d1": "2L", "a3": "2S", "a4": "2M"}


def test_push_smaller_only_can_fill_the_board() -> None:
    # 1x3: L on a1 and c1; an S at b1 cannot push either, the board is full: the game ends
    g = blam(rows=1, cols=3, per_size=1, push_smaller_only=True)
    s = position(g, {"a1": "1L", "c1": "1L"}, stash=((1, 1, 0), (1, 1, 1)), mover=1)
    t = move(g, s, "S@b1")
    assert pieces(g, t) == {"a1": "1L", "b1": "2S", "c1": "1L"}
    assert g.is_terminal(t)


# --- three and four players --------------------------------------------------------------


def test_three_players_order_and_scoring() -> None:
    g = blam(rows=3, cols=3, per_size=1, players=3)
    s = g.initial_state()
    assert g.num_players == 3 and g.to_move(s) == 0
    s = move(g, s, "L@a1")
    assert g.to_move(s) == 1
    s = move(g, s, "S@c3")  # c3 is not next to a1: nothing moves
    assert g.to_move(s) == 2
    # player 2 (third seat) places M in the centre: P0's L on a1 and P1's S on c3 fall off the
    # corners, both into player 2's treasure (3 + 1 = 4 pips)
    s = move(g, s, "M@b2")
    assert pieces(g, s) == {"b2": "3M"}
    assert g.to_move(s) == 0
    assert s.treasure == ((0, 0, 0), (0, 0, 0), (1, 0, 1))
    assert g.scores(s) == (0, 0, 4)
    assert g.decode(g.encode(s)) == s


def test_three_players_pass_and_outcome() -> None:
    g = blam(rows=3, cols=3, per_size=1, players=3)
    # seat 1 has nothing left: it passes and seat 2 moves next
    s = position(g, {"a1": "2S", "b1": "2M", "c1": "2L"},
                 stash=((1, 1, 1), (0, 0, 0), (1, 1, 1)), mover=1)
    assert g.legal_actions(s) == [PASS]
    assert g.to_move(g.apply(s, PASS)) == 2
    # end: scores 2, 4, 5 -> seat 2 is strictly highest and wins, the others lose
    end = position(g, {}, stash=((0, 0, 0),) * 3, treasure=((0, 1, 0), (1, 0, 1), (0, 1, 1)))
    out = g.outcome(end)
    assert out.scores == (2, 4, 5)
    assert out.results == (Result.LOSS, Result.LOSS, Result.WIN)
    end = position(g, {}, stash=((0, 0, 0),) * 3, treasure=((0, 1, 0), (0, 1, 1), (1, 1, 1)))
    out = g.outcome(end)
    assert out.scores == (2, 5, 6) and out.results == (Result.LOSS, Result.LOSS, Result.WIN)
    # scores 2, 5, 5: the two tops tie, seat 0 loses
    end = position(g, {}, stash=((0, 0, 0),) * 3, treasure=((0, 1, 0), (0, 1, 1), (0, 1, 1)))
    assert g.outcome(end).results == (Result.LOSS, Result.TIE, Result.TIE)


def test_four_players_order() -> None:
    g = blam(rows=4, cols=4, per_size=1, players=4)
    s = g.play(["S@a1", "S@d4", "S@a4", "S@d1"])
    # four corners, none adjacent to another: nothing moved, the turn is back at seat 0
    assert pieces(g, s) == {"a1": "1S", "d4": "2S", "a4": "3S", "d1": "4S"}
    assert g.to_move(s) == 0


# --- the paranoid wrapper ----------------------------------------------------------------


def test_paranoid_sides_and_outcome() -> None:
    g = blam(rows=3, cols=3, per_size=1, players=3)
    w = Paranoid(g, 1)
    assert w.name == "blam" and w.variant == g.variant and w.seat == 1 and w.num_players == 2
    s = w.initial_state()
    # base mover 0 is not the seat -> coalition (1); after one move base mover 1 = seat -> 0;
    # then base movers 2 and 0 are both the coalition: it moves twice in a row
    sides = []
    for text in ["S@a1", "S@c3", "S@a3", "M@c1"]:
        sides.append(w.to_move(s))
        s = w.play([text], s)
    assert sides == [1, 0, 1, 1]
    assert w.encode(s) == g.encode(s) and w.decode(w.encode(s)) == s
    assert w.legal_actions(s) == g.legal_actions(s)
    # seat 1 strictly highest: the seat wins; scores are (seat, best other)
    end = position(g, {}, stash=((0, 0, 0),) * 3, treasure=((1, 0, 0), (0, 0, 2), (0, 1, 0)))
    out = w.outcome(end)
    assert out.results == (Result.WIN, Result.LOSS) and out.scores == (6, 2) and out.margin(0) == 4
    # seat 1 tied on top (5 = 5): not a win, so the coalition wins
    end = position(g, {}, stash=((0, 0, 0),) * 3, treasure=((0, 1, 0), (0, 1, 1), (0, 1, 1)))
    assert w.outcome(end).results == (Result.LOSS, Result.WIN)
    # seat 0 with the lowest score
    assert Paranoid(g, 0).outcome(end).results == (Result.LOSS, Result.WIN)
    with pytest.raises(VariantError):
        Paranoid(g, 3)


def test_paranoid_expand_equals_default() -> None:
    g = blam(rows=3, cols=3, per_size=1, players=3)
    keys = np.unique(np.array([g.encode(s) for s in random_states(g, 8, seed=5)], dtype=np.uint64))
    for seat in range(3):
        w = Paranoid(g, seat)
        for canonical in (False, True):
            _same_expansion(w.expand(keys, canonical=canonical), Game.expand(w, keys, canonical=canonical))


# --- keys and symmetry -------------------------------------------------------------------


@pytest.mark.parametrize(
    "params,bits",
    [
        # 2 players, per_size=1: per colour and size "which square / stash / captured":
        # (n + 2) values, times 2 for the mover
        ({"rows": 3, "cols": 3, "per_size": 1}, 22),  # 11**6 * 2 = 3_543_122 < 2**22
        ({"rows": 4, "cols": 4, "per_size": 1}, 27),  # 18**6 * 2 = 68_024_448 < 2**27
        ({"rows": 5, "cols": 5, "per_size": 1}, 30),  # 27**6 * 2 = 774_840_978 < 2**30
        # per_size=2 on 4x4: 1*3 + 16*2 + 120*1 = 155 values per class; 155**6 * 2 ~ 2.8e13
        ({"rows": 4, "cols": 4, "per_size": 2}, 45),
        # 3 players: 11**9 classes * 3**6 stored treasures (players 0, 1) * 3 movers ~ 5.2e12
        ({"rows": 3, "cols": 3, "per_size": 1, "players": 3}, 43),
        # 4 players: 11**12 * 4**9 * 4 ~ 3.3e18
        ({"rows": 3, "cols": 3, "per_size": 1, "players": 4}, 62),
    ],
)
def test_key_budgets(params: dict[str, Any], bits: int) -> None:
    g = blam(**params)
    assert g.key_scheme == "piece" and g.key_bits == bits and not g.warnings


def test_square_scheme_when_smaller() -> None:
    # 3x3 with 5 of each size: per square 7 values (7**9 ~ 4.0e7) and stash counts 6**6 beat
    # 825 values per class (825**6 ~ 3.1e17)
    g = blam(rows=3, cols=3, per_size=5)
    assert g.key_scheme == "square" and g.key_space == 2 * 6**6 * 7**9


@pytest.mark.parametrize(
    "params",
    [
        {"rows": 3, "cols": 3, "per_size": 1},
        {"rows": 4, "cols": 4, "per_size": 2},
        {"rows": 5, "cols": 5, "per_size": 1},
        {"rows": 3, "cols": 4, "per_size": 2, "chain": False},
        {"rows": 3, "cols": 3, "per_size": 5},  # square scheme
        {"rows": 3, "cols": 3, "per_size": 1, "players": 3},
        {"rows": 4, "cols": 3, "per_size": 2, "players": 3, "push_smaller_only": True},
        {"rows": 3, "cols": 3, "per_size": 1, "players": 4},
        {"rows": 4, "cols": 4, "per_size": 1, "players": 4},  # > 64 bits: exact big keys
    ],
)
def test_encode_decode_round_trip(params: dict[str, Any]) -> None:
    g = blam(**params)
    states = random_states(g, 20, seed=1) + random_positions(g, 100, seed=6)
    keys = set()
    for s in states:
        key = g.encode(s)
        assert 0 <= key < g.key_space
        assert g.decode(key) == s
        keys.add(key)
        for image in g.symmetries(s):
            assert g.decode(g.encode(image)) == image
    # distinct states have distinct keys
    assert len(keys) == len(set(states))


@pytest.mark.parametrize(
    "params",
    [
        {"rows": 3, "cols": 3, "per_size": 1},
        {"rows": 3, "cols": 4, "per_size": 2},
        {"rows": 4, "cols": 4, "per_size": 1, "chain": False, "players": 3},
        {"rows": 4, "cols": 4, "per_size": 2, "push_smaller_only": True},
    ],
)
def test_symmetry_images(params: dict[str, Any]) -> None:
    g = blam(**params)
    perms = grid_symmetries(g.rows, g.cols)
    assert len(perms) == (8 if g.rows == g.cols else 4)
    for s in random_states(g, 10, seed=2, max_plies=30):
        images = g.symmetries(s)
        assert images[0] == s and len(images) == len(perms)
        for perm, image in zip(perms, images):
            assert len(g.legal_actions(image)) == len(g.legal_actions(s))
            # the rules commute with the symmetry: image of a child = child of the image
            for a in g.legal_actions(s)[:6]:
                mapped = a if a == PASS else (a // g.n) * g.n + perm[a % g.n]
                child_of_image = g.apply(image, mapped)
                image_of_child = g.symmetries(g.apply(s, a))[perms.index(perm)]
                assert child_of_image == image_of_child


def test_render() -> None:
    g = blam(rows=3, cols=3, per_size=1)
    s = position(g, {"a1": "1L", "c3": "2S"}, stash=((1, 1, 0), (0, 1, 1)), treasure=((0, 0, 0), (0, 1, 0)))
    text = g.render(s)
    lines = text.splitlines()
    assert lines[0].split() == ["3", ".", ".", "2S"]
    assert lines[2].split() == ["1", "1L", ".", "."]
    assert "score 2" in text and "to move: player 1" in text


# --- the batch path ------------------------------------------------------------------------


def _same_expansion(a: Any, b: Any) -> None:
    for name in ("kind", "to_move", "offsets", "children", "result", "margin"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype, name
        assert np.array_equal(x, y), name
    assert a.probs is None and b.probs is None


@pytest.mark.parametrize(
    "params",
    [
        {"rows": 3, "cols": 3, "per_size": 1},
        {"rows": 3, "cols": 3, "per_size": 1, "tiebreak": "captures"},
        {"rows": 4, "cols": 4, "per_size": 1, "chain": False},
        {"rows": 4, "cols": 4, "per_size": 2, "push_smaller_only": True},
        {"rows": 3, "cols": 5, "per_size": 2, "chain": False, "push_smaller_only": True},
        {"rows": 1, "cols": 5, "per_size": 1, "chain": False},
        {"rows": 3, "cols": 3, "per_size": 1, "players": 3, "tiebreak": "captures"},
        {"rows": 3, "cols": 3, "per_size": 1, "players": 4},
        {"rows": 2, "cols": 4, "per_size": 1, "players": 3, "chain": False},
    ],
)
def test_compiled_expand_equals_reference(params: dict[str, Any]) -> None:
    g = blam(**params)
    assert g._fast is not None
    states = random_states(g, 15, seed=3)
    keys = np.unique(np.array([g.encode(s) for s in states], dtype=np.uint64))
    assert (np.array([g.node_kind(g.decode(int(k))) for k in keys]) == NodeKind.TERMINAL).any()
    for canonical in (False, True):
        _same_expansion(g.expand(keys, canonical=canonical), Game.expand(g, keys, canonical=canonical))
    # random dense positions: long runs, blocked pushes, full boards
    dense = random_positions(g, 150, seed=4)
    assert all(g.decode(g.encode(s)) == s for s in dense)
    keys = np.unique(np.array([g.encode(s) for s in dense], dtype=np.uint64))
    for canonical in (False, True):
        _same_expansion(g.expand(keys, canonical=canonical), Game.expand(g, keys, canonical=canonical))
    # empty input
    _same_expansion(g.expand(keys[:0]), Game.expand(g, keys[:0]))


@pytest.mark.slow
def test_compiled_expand_on_every_3x3_position() -> None:
    from solver.engines.enumerate import enumerate_positions

    g = blam(rows=3, cols=3, per_size=1)
    graph = enumerate_positions(g, symmetry=True)
    for canonical in (False, True):
        _same_expansion(g.expand(graph.keys, canonical=canonical), Game.expand(g, graph.keys, canonical=canonical))


# --- solving -------------------------------------------------------------------------------


def test_solve_1x2_by_hand() -> None:
    # see test_whole_game_on_1x2_board: every move captures the opponent's last pyramid, P2
    # always gets all of P1's 6 pips and P1 gets P2's first two pyramids; P2 keeps the L for
    # last, so P1 scores 1 + 2 = 3. The game always lasts exactly 6 plies: the first player
    # loses with remoteness 6 and margin 3 - 6 = -3.
    from solver.engines.enumerate import enumerate_positions
    from solver.engines.retrograde import retrograde
    from solver.core.values import LOSE

    g = blam(rows=1, cols=2, per_size=1)
    graph = enumerate_positions(g, symmetry=True)
    solved = retrograde(graph, scored=True)
    assert solved.value[graph.root] == LOSE
    assert solved.remoteness[graph.root] == 6
    assert solved.margin is not None and solved.margin[graph.root] == -3


def test_paranoid_solve_1x2_three_players() -> None:
    # 1x2, 3 players: move i captures the pyramid of move i-1, so seat 1 captures all of seat
    # 0's pyramids (6 pips), seat 2 all of seat 1's (6 pips), seat 0 at most 5: seats 1 and 2
    # always share the top, nobody is ever strictly highest. Every seat loses against the
    # coalition; the game always lasts 9 plies.
    from solver.engines.enumerate import enumerate_positions
    from solver.engines.retrograde import retrograde
    from solver.core.values import LOSE, WIN

    g = blam(rows=1, cols=2, per_size=1, players=3)
    for seat in range(3):
        w = Paranoid(g, seat)
        graph = enumerate_positions(w, symmetry=True)
        solved = retrograde(graph, scored=True)
        root = graph.root
        # at the root base seat 0 moves: the seat itself for seat 0, else the coalition
        expected = LOSE if seat == 0 else WIN
        assert graph.to_move[root] == (0 if seat == 0 else 1)
        assert solved.value[root] == expected and solved.remoteness[root] == 9


def test_solve_3x3_preset_consistent() -> None:
    from solver.engines.enumerate import enumerate_positions
    from solver.engines.retrograde import retrograde
    from solver.core.values import DRAW, FLIP, LOSE, NO_REMOTENESS, TIE, WIN

    g = make_game("blam", **Blam.presets["3x3"])
    graph = enumerate_positions(g, symmetry=True)
    solved = retrograde(graph, scored=True)
    value, rem = solved.value, solved.remoteness
    assert set(np.unique(value).tolist()) <= {LOSE, DRAW, TIE, WIN}
    for i in range(graph.n):
        kids = graph.child[graph.offsets[i] : graph.offsets[i + 1]]
        if graph.kind[i] == NodeKind.TERMINAL:
            assert len(kids) == 0 and rem[i] == 0
            expected = {Result.WIN: WIN, Result.LOSS: LOSE, Result.TIE: TIE}[Result(graph.result[i])]
            assert value[i] == expected
            assert solved.margin[i] == graph.margin[i]
            continue
        assert len(kids) > 0
        same = graph.to_move[kids] == graph.to_move[i]
        eff = np.where(same, value[kids], FLIP[value[kids]])  # child's value for i's mover
        # lose < draw < tie < win: the mover picks the best child
        assert value[i] == eff.max()
        if value[i] == WIN:
            assert rem[i] == 1 + rem[kids][eff == WIN].min()
        elif value[i] == LOSE:
            assert rem[i] == 1 + rem[kids].max()
        elif value[i] == TIE:
            assert rem[i] == 1 + rem[kids][eff == TIE].min()
        else:
            assert rem[i] == NO_REMOTENESS


def test_two_per_size_on_4x4_is_solved_tier_by_tier_by_default() -> None:
    """The issue's command `pyramids solve blam --set rows=4 --set cols=4 --set per_size=2` is the
    large preset 4x4-2: tiered by default (the whole-graph solver's one-line refusal of the large
    presets is tests/test_presets.py::test_large_presets_are_refused_at_once)."""
    from solver.api import want_tiered
    from solver.pipeline.measured import large_reason

    g = make_game("blam", rows=4, cols=4, per_size=2)
    assert g.preset_name() == "4x4-2" and large_reason(g)
    assert want_tiered(g, None)
    assert not want_tiered(make_game("blam", rows=4, cols=4, per_size=1), None)


def test_max_positions_stops_the_tiered_discovery_inside_its_first_tier(tmp_path) -> None:
    """4x4-2's first tier holds 55M positions (25 minutes to discover): `--max-positions` must
    refuse at the ply level that crosses it, not when the tier is closed."""
    import time

    from solver.pipeline.tiered import solve_tiered

    g = make_game("blam", rows=4, cols=4, per_size=2)
    t0 = time.perf_counter()
    with pytest.raises(TooBigError, match="more than 20,000 positions"):
        solve_tiered(g, out=tmp_path, max_positions=20_000, check=False)
    assert time.perf_counter() - t0 < 120  # the first levels hold 26,290 positions by ply 4
