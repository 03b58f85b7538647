"""Tests of Petal Battle (solver/games/petal.py).

Every expected value is worked out by hand from /work/shared/rules/petal-battle.md; the reasoning
is in the comments. Boards are written as ``{0: "1L", 3: "2M"}``: petal -> owner digit (1-based,
as on the rendered board) and size letter. Players are 0-based in the API. On 6 petals the
neighbours of petal i are i-1 and i+1 (mod 6) and its opposite is i+3.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from solver.core.game import NodeKind, Result
from solver.core.selfcheck import selfcheck
from solver.errors import IllegalMoveError, VariantError
from solver.games import make_game
from solver.games.petal import Petal, PetalState, piece_code

# --- helpers ---------------------------------------------------------------------------


def petal(**params: Any) -> Petal:
    base = {"petals": 6, "run": 3, "per_size": 1}
    base.update(params)
    game = make_game("petal", **base)
    assert isinstance(game, Petal)
    return game


def board_of(game: Petal, cells: dict[int, str]) -> tuple[int, ...]:
    board = [0] * game.n
    for i, piece in cells.items():
        board[i] = piece_code(int(piece[0]) - 1, "SML".index(piece[1]))
    return tuple(board)


def in_play(game: Petal, cells: dict[int, str], mover: int = 0, left: int = 3) -> PetalState:
    """A position in the first turn of a round: ``mover`` started it and has ``left`` actions."""
    stacks = [(0, 1, 2), (0, 1, 2)]
    stacks[mover] = (0, 1)
    return PetalState(board_of(game, cells), (stacks[0], stacks[1]), left, mover, -1)


def cells_of(state: PetalState) -> dict[int, str]:
    out = {}
    for i, c in enumerate(state.board):
        if c:
            owner, size = divmod(c - 1, 3)
            out[i] = f"{owner + 1}{'SML'[size]}"
    return out


def names(game: Petal, state: PetalState) -> list[str]:
    return [game.action_name(state, a) for a in game.legal_actions(state)]


def move(game: Petal, state: PetalState, text: str) -> PetalState:
    return game.apply(state, game.parse_action(state, text))


def joint(game: Petal, state: PetalState, text: str) -> PetalState:
    return game.apply_joint(state, game.parse_joint(state, text))


def random_states(game: Petal, playouts: int, seed: int, max_plies: int = 120) -> list[PetalState]:
    rng = random.Random(seed)
    out = []
    for _ in range(playouts):
        state = game.initial_state()
        out.append(state)
        for _ in range(max_plies):
            kind = game.node_kind(state)
            if kind == NodeKind.TERMINAL:
                break
            if kind == NodeKind.SIMULTANEOUS:
                state = game.apply_joint(state, tuple(rng.choice(game.player_actions(state, p)) for p in (0, 1)))
            else:
                state = game.apply(state, rng.choice(game.legal_actions(state)))
            out.append(state)
    return out


# --- parameters -------------------------------------------------------------------------


def test_defaults_and_derived_run():
    g = make_game("petal")
    assert (g.n, g.run, g.per_size) == (10, 5, 3)
    assert g.variant.opening == "large-opposite" and g.variant.tie_start == "alternate"
    assert g.variant.actions == "up-to" and g.variant.sequencing == "secret"
    assert g.variant.bump_origin == "occupied"
    assert make_game("petal", petals=8).run == 4  # run defaults to petals/2
    assert make_game("petal", petals=8, run=3).run == 3
    assert make_game("petal", petals="6").run == 3


@pytest.mark.parametrize("params,words", [
    ({"petals": 7}, "even"),
    ({"petals": 10, "run": 11}, "run"),
    ({"run": 0}, "run"),
    ({"per_size": 0}, "per_size"),
    ({"opening": "empty"}, "opening"),
    ({"tie_start": "player2"}, "tie_start"),
    ({"actions": "all"}, "actions"),
    ({"sequencing": "hidden"}, "sequencing"),
    ({"bump_origin": "left"}, "bump_origin"),
    ({"colour": "red"}, "colour"),
])
def test_bad_parameters(params, words):
    with pytest.raises(VariantError) as err:
        make_game("petal", **params)
    assert words in str(err.value) and "\n" not in str(err.value)


def test_presets():
    assert Petal.presets["6"] == {"petals": 6, "run": 3, "per_size": 1}
    assert Petal.presets["6-2"] == {"petals": 6, "run": 3, "per_size": 2}
    assert Petal.presets["8"] == {"petals": 8, "run": 4, "per_size": 1}


# --- openings ---------------------------------------------------------------------------


def test_large_opposite_opening():
    g = petal()
    s = g.initial_state()
    assert cells_of(s) == {0: "1L", 3: "2L"}
    assert g.node_kind(s) == NodeKind.SIMULTANEOUS and g.to_move(s) == 0
    assert cells_of(make_game("petal").initial_state()) == {0: "1L", 5: "2L"}


def test_enter_large_opening_and_enter():
    g = petal(opening="enter-large")
    s = g.initial_state()
    assert cells_of(s) == {}
    s = joint(g, s, "MSL/MLS")  # equal tops in round 1: Player 1 starts with 2 actions
    assert g.to_move(s) == 0 and s.left == 2
    # no Large on the board: Enter on any empty petal (spawn needs a Large, nothing to move)
    assert names(g, s) == [f"enter@{i}" for i in range(6)] + ["end"]
    s = move(g, s, "enter@2")
    # Player 2 never had a pyramid: no elimination win (ruling), the game goes on
    assert g.node_kind(s) == NodeKind.DECISION and cells_of(s) == {2: "1L"}
    # with a Large on the board, no more Enter; spawn next to it is now possible
    assert not any(n.startswith("enter") for n in names(g, s))
    assert "spawn@1" in names(g, s) and "spawn@3" in names(g, s)
    s = move(g, s, "end")
    assert g.to_move(s) == 1 and "enter@0" in names(g, s)  # Player 2 may enter too


def test_enter_only_without_large():
    g = petal(opening="enter-large", per_size=2)
    s = in_play(g, {0: "1L", 3: "2S"}, mover=1)
    assert [n for n in names(g, s) if n.startswith("enter")] == ["enter@1", "enter@2", "enter@4", "enter@5"]
    s = in_play(g, {0: "1L", 3: "2S"}, mover=0)
    assert not any(n.startswith("enter") for n in names(g, s))


# --- actions ----------------------------------------------------------------------------


def test_spawn_only_next_to_own_large_onto_empty():
    g = petal(per_size=2)
    s = in_play(g, {0: "1L", 1: "2S", 3: "2L"})
    # neighbours of 1L@0: petal 1 (occupied) and 5 (empty); nothing next to the enemy Large
    assert [n for n in names(g, s) if n.startswith("spawn")] == ["spawn@5"]
    after = move(g, s, "spawn@5")
    assert cells_of(after) == {0: "1L", 1: "2S", 3: "2L", 5: "1S"} and after.left == 2
    # no Small in supply (per_size=1, the Small is on the board): no spawn
    g1 = petal()
    s = in_play(g1, {0: "1L", 2: "1S", 3: "2L"})
    assert not any(n.startswith("spawn") for n in names(g1, s))


def test_grow():
    g = petal()
    s = in_play(g, {0: "1L", 2: "1S", 3: "2L"})
    # S -> M: the Medium is in the supply; the Small goes back
    assert "grow@2" in names(g, s)
    after = move(g, s, "grow@2")
    assert cells_of(after)[2] == "1M" and g.supply(after.board, 0, 0) == 1 and g.supply(after.board, 0, 1) == 0
    # M -> L: the only Large is on the board, so no grow; a Large never grows
    assert [n for n in names(g, after) if n.startswith("grow")] == []
    g2 = petal(per_size=2)
    s = in_play(g2, {0: "1L", 2: "1M", 3: "2L"})
    assert [n for n in names(g2, s) if n.startswith("grow")] == ["grow@2"]
    assert cells_of(move(g2, s, "grow@2"))[2] == "1L"


def test_slide_and_flip_to_empty():
    g = petal()
    s = in_play(g, {0: "1L", 4: "2L"})
    moves = [n for n in names(g, s) if n[0].isdigit()]
    assert moves == ["0-1", "0-3", "0-5"]  # two slides and the flip to the opposite petal
    assert cells_of(move(g, s, "0-3")) == {3: "1L", 4: "2L"}


def test_bump_one_empty_neighbour():
    g = petal()
    s = in_play(g, {0: "1L", 1: "2M", 3: "2L"})
    # 2M@1: neighbours 0 (the bumper, still there) and 2 (empty): it goes to 2
    assert [n for n in names(g, s) if n.startswith("0-1")] == ["0-1>2"]
    after = move(g, s, "0-1>2")
    assert cells_of(after) == {1: "1L", 2: "2M", 3: "2L"}
    assert move(g, s, "0-1") == after  # "0-1" names the only move from 0 to 1


def test_bump_two_empty_neighbours_both_choices():
    g = petal()
    s = in_play(g, {0: "1L", 3: "2M", 1: "2L"})
    # flip-bump 0 -> 3: neighbours of 3 are 2 and 4, both empty: the bumping player chooses
    assert [n for n in names(g, s) if n.startswith("0-3")] == ["0-3>2", "0-3>4"]
    assert cells_of(move(g, s, "0-3>2")) == {1: "2L", 2: "2M", 3: "1L"}
    assert cells_of(move(g, s, "0-3>4")) == {1: "2L", 3: "1L", 4: "2M"}
    with pytest.raises(IllegalMoveError):
        g.parse_action(s, "0-3")  # ambiguous: say where the bumped pyramid goes


def test_bump_own_without_empty_neighbour_is_illegal():
    g = petal(per_size=2)
    s = in_play(g, {0: "1L", 1: "1M", 2: "2S", 4: "2L"})
    # 1M@1: neighbours 0 (bumper) and 2 (occupied): it would be squished -> no such move
    assert not any(n.startswith("0-1") for n in names(g, s))
    # own smaller piece, no room: never squish your own
    s = in_play(g, {0: "1L", 1: "1S", 2: "2M", 4: "2L"})
    assert not any(n.startswith("0-1") for n in names(g, s))
    # own piece with room is bumped like any other
    s = in_play(g, {0: "1L", 1: "1S", 4: "2L"})
    assert cells_of(move(g, s, "0-1>2")) == {1: "1L", 2: "1S", 4: "2L"}


def test_bump_squishes_smaller_enemy_without_room():
    g = petal()
    s = in_play(g, {0: "1L", 1: "2M", 2: "1S", 4: "2L"})
    assert [n for n in names(g, s) if n.startswith("0-1")] == ["0-1x"]
    after = move(g, s, "0-1x")
    # the Medium goes back to Player 2's supply, the Large takes its petal
    assert cells_of(after) == {1: "1L", 2: "1S", 4: "2L"} and g.supply(after.board, 1, 1) == 1


def test_bump_reduces_same_size_one_down():
    g = petal(per_size=2)
    s = in_play(g, {0: "1M", 1: "2M", 2: "2S", 4: "2L"})
    # same size, no room: Player 2 has a Small in supply (2 - 1 on the board) -> 2M becomes 2S,
    # the bumper stays on 0
    after = move(g, s, "0-1x")
    assert cells_of(after) == {0: "1M", 1: "2S", 2: "2S", 4: "2L"}
    assert g.supply(after.board, 1, 1) == 2 and g.supply(after.board, 1, 0) == 0


def test_bump_reduces_two_down_when_one_down_missing():
    g = petal()
    s = in_play(g, {0: "1L", 1: "2L", 2: "2M", 5: "1S"})
    # 2L@1: neighbours 0 (bumper) and 2 (occupied); Player 2's only Medium is on the board, the
    # Small is in supply -> the Large becomes a Small, the bumper stays
    after = move(g, s, "0-1x")
    assert cells_of(after) == {0: "1L", 1: "2S", 2: "2M", 5: "1S"}


def test_bump_squishes_same_size_when_nothing_smaller():
    g = petal()
    s = in_play(g, {0: "1L", 1: "2L", 2: "2M", 4: "2S", 5: "1S"})
    # Player 2 has neither M nor S in supply -> squish: 1L takes petal 1
    assert cells_of(move(g, s, "0-1x")) == {1: "1L", 2: "2M", 4: "2S", 5: "1S"}
    # Small on Small: there is no smaller size at all -> squish
    s = in_play(g, {0: "1S", 1: "2S", 2: "2L", 5: "1L"})
    assert cells_of(move(g, s, "0-1x")) == {1: "1S", 2: "2L", 5: "1L"}


def test_bump_with_smaller_piece_is_illegal():
    g = petal()
    s = in_play(g, {0: "1S", 1: "2M", 3: "2L", 5: "1L"})
    assert not any(n.startswith("0-1") or n.startswith("0-3") for n in names(g, s))
    assert "0-1" not in names(g, s)
    with pytest.raises(IllegalMoveError):
        g.apply(s, ("move", 0, 1, 2))


@pytest.mark.parametrize("origin", ["occupied", "empty"])
def test_bump_origin_ruling(origin):
    g = petal(bump_origin=origin)
    s = in_play(g, {0: "1L", 1: "2M", 2: "1S", 4: "2L"})
    bumps = [n for n in names(g, s) if n.startswith("0-1")]
    if origin == "occupied":
        # the rules' ruling: petal 0 still holds the bumper, 2 is occupied -> no room: squish
        assert bumps == ["0-1x"]
    else:
        # petal 0 counts as empty: the bumped Medium is sent back to it (a swap)
        assert bumps == ["0-1>0"]
        assert cells_of(move(g, s, "0-1>0")) == {0: "2M", 1: "1L", 2: "1S", 4: "2L"}
    # own piece with no other room: illegal under the rules' ruling, a swap under "empty"
    s = in_play(g, {0: "1L", 1: "1M", 2: "2S", 4: "2L"})
    bumps = [n for n in names(g, s) if n.startswith("0-1")]
    assert bumps == ([] if origin == "occupied" else ["0-1>0"])
    # a flip-bump is not affected: the start petal is never next to the opposite one
    s = in_play(g, {0: "1L", 3: "2M", 2: "1S", 4: "2L"})
    assert [n for n in names(g, s) if n.startswith("0-3")] == ["0-3x"]


# --- turns ------------------------------------------------------------------------------


def test_up_to_lets_a_player_stop_early():
    g = petal()
    s = in_play(g, {0: "1L", 3: "2L"}, mover=0, left=3)
    assert names(g, s)[-1] == "end"
    s1 = move(g, s, "0-1")
    assert g.to_move(s1) == 0 and s1.left == 2  # same turn, one action spent
    s2 = move(g, s1, "end")
    assert g.to_move(s2) == 1 and s2.left == 1  # Player 2's top is S: 1 action
    # ending at once (zero actions) is allowed too
    assert g.to_move(move(g, s, "end")) == 1
    # the same pyramid may act again in the same turn
    s3 = move(g, s1, "1-2")
    assert cells_of(s3) == {2: "1L", 3: "2L"} and s3.left == 1 and g.to_move(s3) == 0


def test_exactly_forces_actions_and_pass():
    g = petal(actions="exactly")
    s = in_play(g, {0: "1L", 3: "2L"}, mover=0, left=3)
    assert "end" not in names(g, s) and "pass" not in names(g, s)
    # full 10-petal board where Player 1 has nothing legal: every Large only faces its own
    # pyramids (no room anywhere: bumping them would squish them), every M or S faces its own
    # or the bigger enemy Large, no supply to grow or spawn -> a forced pass ends the turn
    g = make_game("petal", actions="exactly")
    cells = {1: "1L", 2: "1L", 3: "1L", 0: "1M", 4: "1M", 6: "1M", 7: "1S", 8: "1S", 9: "1S", 5: "2L"}
    s = in_play(g, cells, mover=0, left=3)
    assert names(g, s) == ["pass"]
    after = move(g, s, "pass")
    assert g.to_move(after) == 1 and after.left == 1 and after.board == s.board
    gu = make_game("petal")
    assert names(gu, in_play(gu, cells, mover=0, left=3)) == ["end"]


def test_win_checked_after_every_action_and_across_the_wrap():
    g = petal()
    s = in_play(g, {0: "1L", 1: "1M", 3: "2L"}, mover=0, left=3)
    # spawn@5 makes petals 5, 0, 1 Player 1's: a run of 3 across the wrap, with 2 actions left
    won = move(g, s, "spawn@5")
    assert g.node_kind(won) == NodeKind.TERMINAL and won.winner == 0
    assert g.outcome(won).results == (Result.WIN, Result.LOSS)
    assert g.to_move(won) == 1  # the loser
    assert not g.has_run(board_of(g, {5: "1S", 0: "1L", 2: "1M"}), 0)
    assert g.has_run(board_of(g, {4: "2S", 5: "2L", 0: "2M"}), 1)


def test_both_wins_at_once_go_to_the_acting_player():
    g = petal(petals=8, run=3)
    # 8 petals: the opposite of 6 is 2. 1L@6 flip-bumps 2S@2; 2's neighbours are 1 (Player 1)
    # and 3 (empty) -> 2S goes to 3, making 3-4-5 Player 2's; 0-1-2 become Player 1's.
    s = in_play(g, {0: "1S", 1: "1M", 6: "1L", 2: "2S", 4: "2M", 5: "2L"}, mover=0)
    won = move(g, s, "6-2>3")
    assert g.has_run(won.board, 0) and g.has_run(won.board, 1)
    assert won.winner == 0
    # without 1S@0 only Player 2 gets a run: the bump made the opponent win
    s = in_play(g, {1: "1M", 6: "1L", 2: "2S", 4: "2M", 5: "2L"}, mover=0)
    assert move(g, s, "6-2>3").winner == 1


def test_no_pyramid_left_wins():
    g = petal()
    s = in_play(g, {0: "1L", 1: "2M", 2: "1S"}, mover=0, left=2)
    won = move(g, s, "0-1x")  # the squish removes Player 2's last pyramid
    assert won.winner == 0 and g.outcome(won).results == (Result.WIN, Result.LOSS)


# --- rounds -----------------------------------------------------------------------------


def test_smaller_top_starts_and_turns_use_the_sequence():
    g = petal()
    s = joint(g, g.initial_state(), "SML/LMS")
    # Player 1's S < Player 2's L: Player 1 starts; turns alternate P1 S, P2 L, P1 M, P2 M, P1 L,
    # P2 S, each with its pips as actions
    seen = []
    for _ in range(6):
        assert g.node_kind(s) == NodeKind.DECISION
        seen.append((g.to_move(s), s.left))
        s = move(g, s, "end")
    assert seen == [(0, 1), (1, 3), (0, 2), (1, 2), (0, 3), (1, 1)]
    assert g.node_kind(s) == NodeKind.SIMULTANEOUS  # after 6 turns: a new round
    s = joint(g, g.initial_state(), "MSL/SML")
    assert g.to_move(s) == 1 and s.left == 1  # Player 2's S is smaller


def _play_round(g: Petal, s: PetalState) -> PetalState:
    for _ in range(6):
        s = move(g, s, "end")
    return s


@pytest.mark.parametrize("tie_start", ["alternate", "player1"])
def test_tie_start(tie_start):
    g = petal(tie_start=tie_start)
    s = joint(g, g.initial_state(), "SML/SLM")
    assert g.to_move(s) == 0  # round 1, equal tops: Player 1
    s = _play_round(g, s)
    s = joint(g, s, "MSL/MLS")
    # alternate: Player 2 went second in round 1, so starts on the tie; player1: Player 1 again
    assert g.to_move(s) == (1 if tie_start == "alternate" else 0)
    # a round Player 2 started by a smaller top: on the next tie Player 1 (second) starts
    s = _play_round(g, joint(g, g.initial_state(), "MSL/SML"))
    s = joint(g, s, "LSM/LMS")
    assert g.to_move(s) == 0


def test_secret_round_start_is_simultaneous():
    g = petal()
    s = g.initial_state()
    assert g.node_kind(s) == NodeKind.SIMULTANEOUS and g.to_move(s) == 0
    for p in (0, 1):
        acts = g.player_actions(s, p)
        assert [g.action_name(s, a) for a in acts] == ["SML", "SLM", "MSL", "MLS", "LSM", "LMS"]
    js = g.joint_actions(s)
    assert len(js) == 36 and js[1] == (("order", 0), ("order", 1))  # row-major, Player 1's rows
    assert g.parse_joint(s, "sml/lms") == (("order", 0), ("order", 5))
    for bad in ("SMM/LMS", "SML", "SML/SL", "ABC/SML"):
        with pytest.raises(IllegalMoveError):
            g.parse_joint(s, bad)
    with pytest.raises(IllegalMoveError):
        g.parse_action(s, "SML")


@pytest.mark.parametrize("sequencing,first", [("open", 0), ("p1-first", 0), ("p2-first", 1)])
def test_open_sequencing_is_two_decisions(sequencing, first):
    g = petal(sequencing=sequencing)
    s = g.initial_state()
    assert g.node_kind(s) == NodeKind.DECISION and g.to_move(s) == first
    assert names(g, s) == ["SML", "SLM", "MSL", "MLS", "LSM", "LMS"]
    s = move(g, s, "LMS")
    assert g.node_kind(s) == NodeKind.DECISION and g.to_move(s) == 1 - first
    assert s.stacks[first] == (2, 1, 0) and s.stacks[1 - first] is None  # in view
    assert "LMS" in g.render(s)
    s = move(g, s, "SML")
    assert g.to_move(s) == 1 - first and s.left == 1  # the second orderer's S is smaller
    # round 2: under open the tie-starter orders first (Player 2 went second here only if
    # Player 1 started; here the second orderer started, so the first orderer starts on a tie)
    s = _play_round(g, s)
    expected = {"open": first, "p1-first": 0, "p2-first": 1}[sequencing]
    assert g.to_move(s) == expected


# --- keys, symmetry, self-check --------------------------------------------------------


@pytest.mark.parametrize("params", [
    {}, {"per_size": 2}, {"petals": 8, "run": 4},
    {"petals": 10, "run": 5, "per_size": 3, "opening": "enter-large", "actions": "exactly"},
    {"sequencing": "open", "bump_origin": "empty", "tie_start": "player1"},
])
def test_encode_decode_round_trip(params):
    g = petal(**params)
    for s in random_states(g, 30, seed=1):
        k = g.encode(s)
        assert 0 <= k < 2**64 and g.decode(k) == s


def test_keys_fit_64_bits_for_the_full_game():
    assert make_game("petal").key_space < 2**41
    assert make_game("petal", petals=18).key_space < 2**64
    g = make_game("petal")
    worst = PetalState((6,) * 10, (None, None), 3, 1, 1)
    assert g.decode(g.encode(worst)) == worst


def test_symmetry_invariants():
    g = petal(per_size=2)
    for s in random_states(g, 20, seed=2):
        img = g.reflect(s)
        assert g.reflect(img) == s
        assert img.board[0] == s.board[0] and img.board[3] == s.board[3]  # fixed petals
        assert g.node_kind(img) == g.node_kind(s) and g.to_move(img) == g.to_move(s)
        if g.node_kind(s) == NodeKind.TERMINAL:
            assert g.outcome(img) == g.outcome(s)
        if g.node_kind(s) == NodeKind.DECISION:
            kids = sorted(g.encode(g.canonical(g.apply(s, a))) for a in g.legal_actions(s))
            kids_img = sorted(g.encode(g.canonical(g.apply(img, a))) for a in g.legal_actions(img))
            assert kids == kids_img


@pytest.mark.parametrize("params", [
    {"opening": "enter-large"}, {"actions": "exactly"}, {"sequencing": "open"},
    {"sequencing": "p2-first", "tie_start": "player1"}, {"bump_origin": "empty", "per_size": 2},
])
def test_selfcheck_rulings(params):
    assert selfcheck(petal(**params), playouts=6, max_plies=80) == []


def test_render_shows_ring_supplies_and_round():
    g = petal()
    s = joint(g, g.initial_state(), "SML/LMS")
    text = g.render(s)
    assert "1L" in text and "2L" in text and "supply 1S 1M 0L" in text
    assert "ML (top first)" in text and "to move: player 1, 1 action(s)" in text


# --- the compiled batch path ------------------------------------------------------------


def _per_state_keys(g: Petal, seed: int) -> np.ndarray:
    states = random_states(g, 20, seed=seed, max_plies=150)
    return np.unique(np.array([g.encode(s) for s in states], dtype=np.uint64))


@pytest.mark.parametrize("params", [
    {}, {"per_size": 2}, {"petals": 8, "run": 4}, {"petals": 10, "run": 5, "per_size": 3},
    {"opening": "enter-large", "actions": "exactly"}, {"sequencing": "open", "tie_start": "player1"},
    {"sequencing": "p1-first", "bump_origin": "empty", "per_size": 2},
    {"sequencing": "p2-first", "actions": "exactly", "run": 2},
    {"petals": 4, "run": 4, "per_size": 2, "bump_origin": "empty"},
])
@pytest.mark.parametrize("canonical", [False, True])
def test_batch_expand_equals_per_state_rules(params, canonical):
    from solver.core.game import Game

    g = petal(**params)
    keys = _per_state_keys(g, seed=3)
    fast = g.expand(keys, canonical=canonical)
    slow = Game.expand(g, keys, canonical=canonical)
    for name in ("kind", "to_move", "offsets", "children", "result", "margin"):
        assert np.array_equal(getattr(fast, name), getattr(slow, name)), name
    assert fast.probs is None and slow.probs is None
    sim = getattr(fast, "sim_rows", None)
    if sim is not None:
        assert np.array_equal(sim, np.where(fast.kind == NodeKind.SIMULTANEOUS, 6, 0))


def test_batch_expand_on_enumerated_positions():
    """Every position of a small variant, reached by the batch path, expands identically."""
    from solver.core.game import Game
    from solver.engines.enumerate import enumerate_positions

    g = petal(petals=4, run=2, per_size=1)
    graph = enumerate_positions(g, symmetry=True, workers=1)
    fast = g.expand(graph.keys, canonical=True)
    slow = Game.expand(g, graph.keys, canonical=True)
    for name in ("kind", "to_move", "offsets", "children", "result", "margin"):
        assert np.array_equal(getattr(fast, name), getattr(slow, name)), name


@pytest.mark.slow
def test_preset_6_position_count():
    """Preset 6 with symmetry: 1,617,556 positions (measured; a change means the rules changed)."""
    from solver.engines.enumerate import enumerate_positions

    g = make_game("petal", **Petal.presets["6"])
    graph = enumerate_positions(g, symmetry=True, workers=1)
    assert graph.n == 1_617_556
    assert int((graph.kind == NodeKind.SIMULTANEOUS).sum()) > 0
