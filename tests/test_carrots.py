"""Carrots and Broccoli (solver/games/carrots.py): every rule, keys, the batch path, the solve.

Expected values are worked out by hand from /work/shared/rules/carrots-and-broccoli.md; the
reasoning is in the comments. Squares: a1 is Carrots' corner (file a = column 0, rank 1 = row 0);
on an n x n board Carrots' side is file + rank < n + 1 and the wall line is file + rank = n + 1.
"""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

from solver.core.game import Game, NodeKind, Result
from solver.errors import IllegalMoveError, VariantError
from solver.games import make_game
from solver.games.carrots import SETUP, TO_ROLL, Carrots, CarrotsState

PRESET_3 = dict(size=3, colours=1, per_colour=1, group=2)
PRESET_4 = dict(size=4, colours=1, per_colour=1, group=3)


def game(**params: Any) -> Carrots:
    g = make_game("carrots", **params)
    assert isinstance(g, Carrots)
    return g


def names(g: Carrots, state: CarrotsState) -> list[str]:
    return [g.action_name(state, a) for a in g.legal_actions(state)]


def outcome_names(g: Carrots, state: CarrotsState) -> dict[str, Fraction]:
    return {g.action_name(state, a): p for a, p in g.chance_outcomes(state)}


def playout_states(g: Carrots, games: int, seed: int, max_plies: int = 80) -> list[CarrotsState]:
    """States met in random playouts (chance by its probabilities, decisions uniformly)."""
    rng = random.Random(seed)
    out = []
    for _ in range(games):
        s = g.initial_state()
        for _ in range(max_plies):
            out.append(s)
            kind = g.node_kind(s)
            if kind == NodeKind.TERMINAL:
                break
            if kind == NodeKind.CHANCE:
                outs = g.chance_outcomes(s)
                s = g.apply(s, rng.choices([a for a, _ in outs], [float(p) for _, p in outs])[0])
            else:
                s = g.apply(s, rng.choice(g.legal_actions(s)))
    return out


# --- variants ------------------------------------------------------------------------------


def test_presets_and_defaults() -> None:
    assert Carrots.presets["3x3"] == PRESET_3
    assert Carrots.presets["4x4"] == PRESET_4
    g = game()
    assert (g.n, g.variant.colours, g.per_colour, g.group, g.variant.wall) == (8, 2, 2, 10, "random")
    assert g.atom_black and g.may_pass
    # the full game cannot be keyed in 64 bits: it can be played, not solved (one-line reason)
    assert "bits" in g.too_big() and not g.warnings
    for params in (PRESET_3, PRESET_4):
        small = game(**params)
        assert small.key_space <= 2**64 and not small.warnings and small.too_big() is None


def test_bad_variants_are_one_line_errors() -> None:
    # one colour, one trio: 3 pyramids per player, a group of 4 can never be made
    with pytest.raises(VariantError, match="never be completed"):
        game(size=3, colours=1, per_colour=1, group=4)
    # 3x3: a side has 3 squares (a1, b1, a2), a group of 4 cannot fit
    with pytest.raises(VariantError, match="does not fit"):
        game(size=3, colours=2, per_colour=1, group=4)
    with pytest.raises(VariantError, match="S/M/L"):
        game(**PRESET_4, wall="SX")
    with pytest.raises(VariantError, match="S/M/L"):
        game(**PRESET_4, wall="SML")  # 4x4 has 2 wall pyramids
    with pytest.raises(VariantError, match="arrangement"):
        game(**PRESET_4, wall="SS")  # the 4x4 wall is one S and one M
    with pytest.raises(VariantError):
        game(size=2)


# --- the wall and the dice -----------------------------------------------------------------


def test_random_wall_is_a_chance_node_over_arrangements() -> None:
    # 8x8: 2 S, 2 M, 2 L in 6 squares: 6! / (2! 2! 2!) = 90 arrangements, each 1/90
    g = game()
    root = g.initial_state()
    assert g.node_kind(root) == NodeKind.CHANCE and g.encode(root) == 0
    outs = g.chance_outcomes(root)
    assert len(outs) == 90 and all(p == Fraction(1, 90) for _, p in outs)
    # 4x4: one S and one M on b3 and c2: "SM" and "MS", 1/2 each
    g4 = game(**PRESET_4)
    assert outcome_names(g4, g4.initial_state()) == {"wall SM": Fraction(1, 2), "wall MS": Fraction(1, 2)}
    s = g4.apply(g4.initial_state(), g4.parse_action(g4.initial_state(), "wall SM"))
    assert s == g4.state_from({"b3": "kS", "c2": "kM"})


def test_explicit_wall_format() -> None:
    # the documented format: from the square next to the top-left corner down the anti-diagonal
    g = game(size=5, colours=1, per_colour=1, group=3, wall="SML")
    s = g.initial_state()
    assert g.node_kind(s) == NodeKind.CHANCE and s.roll == TO_ROLL and s.to_move == 0
    assert s == g.state_from({"b4": "kS", "c3": "kM", "d2": "kL"})


def test_dice_outcomes_at_the_3x3_start() -> None:
    # 3x3, one colour each: red and green in play; the single black S (b2) can never move
    # (no other black pyramid within distance 2). At the start every red and green pyramid can
    # be planted, so: red face x 6 pyramid faces -> 6 outcomes "roll r ..." of 1/36 each, the
    # same for green, the atom gives red or green (black is dropped: it cannot move) -> 6 more;
    # yellow, blue (not in play) and black (cannot move) give nothing: 18/36 = 1/2.
    g = game(**PRESET_3)
    start = g.apply(g.initial_state(), (0,))
    outs = outcome_names(g, start)
    assert len(outs) == 19
    assert outs["roll none"] == Fraction(1, 2)
    for colours in ("r", "g", "r+g"):
        for sizes in ("S", "M", "L", "S/M", "S/L", "M/L"):
            assert outs[f"roll {colours} {sizes}"] == Fraction(1, 36)
    assert sum(outs.values()) == 1


def test_raw_rolls_are_accepted_and_grouped() -> None:
    g = game(**PRESET_3)
    start = g.apply(g.initial_state(), (0,))
    # colours=1: yellow and blue allow nothing, so they are the "roll none" outcome
    for text in ("yellow S", "blue L", "black M"):
        assert g.action_name(start, g.parse_action(start, text)) == "roll none"
    assert g.action_name(start, g.parse_action(start, "atom S/M")) == "roll r+g S/M"
    assert g.action_name(start, g.parse_action(start, "roll red L")) == "roll r L"
    with pytest.raises(IllegalMoveError):
        g.parse_action(start, "purple S")


def test_chance_probabilities_are_exact_and_sum_to_one() -> None:
    for params in (PRESET_3, PRESET_4, dict(size=3, colours=2, per_colour=1, group=3)):
        g = game(**params)
        for s in playout_states(g, 6, seed=3):
            if g.node_kind(s) == NodeKind.CHANCE:
                outs = g.chance_outcomes(s)
                assert all(isinstance(p, Fraction) and p > 0 for _, p in outs)
                assert sum(p for _, p in outs) == 1
                assert len({g.action_name(s, a) for a, _ in outs}) == len(outs)


# --- a turn ---------------------------------------------------------------------------------


def test_plant_on_any_empty_square() -> None:
    # 3x3 start, roll red S: rS is off the board, every square but b2 (wall) is empty
    g = game(**PRESET_3)
    s = g.state_from({}, wall="S", roll=g.roll_code("r", "S"))
    assert names(g, s) == [f"plant rS@{sq}" for sq in ("a1", "b1", "c1", "a2", "c2", "a3", "b3", "c3")] + ["pass"]
    after = g.play(["plant rS@c3"], s)
    assert after == g.state_from({"c3": "rS"}, wall="S", to_move=1)  # last moved: none
    assert g.off_board(after.board, 1) == 0  # rS (code 1) is no longer off the board


def test_move_one_square_orthogonally_to_an_empty_square() -> None:
    # rS on a1 (one trio: no rS left to plant): it moves to a2 or b1 (its neighbours on the
    # board, in the order up, right), never diagonally to b2 (which is the wall anyway)
    g = game(**PRESET_3)
    s = g.state_from({"a1": "rS"}, wall="S", roll=g.roll_code("r", "S"))
    assert names(g, s) == ["move rS a1-a2", "move rS a1-b1", "pass"]
    after = g.play(["move rS a1-b1"], s)
    assert after == g.state_from({"b1": "rS"}, wall="S", to_move=1, last="b1")
    # a pyramid cannot move onto an occupied square
    s2 = g.state_from({"a1": "rS", "a2": "gM"}, wall="S", roll=g.roll_code("r", "S"))
    assert names(g, s2) == ["move rS a1-b1", "pass"]


def test_the_pyramid_the_previous_player_moved_cannot_move() -> None:
    g = game(**PRESET_3)
    # rS on a1 was just moved there: a red-S roll allows nothing (no plant, no move), so the
    # raw roll "red S" is the outcome "roll none"
    s = g.state_from({"a1": "rS"}, wall="S", last="a1")
    assert g.action_name(s, g.parse_action(s, "red S")) == "roll none"
    assert names(g, CarrotsState(s.board, 0, s.last, g.roll_code("r", "S"))) == ["pass"]
    # it only blocks that pyramid: with two trios the other rS (c3) still moves (to c2, b3)
    g2 = game(size=3, colours=1, per_colour=2, group=2)
    s2 = g2.state_from({"a1": "rS", "c3": "rS"}, wall="S", last="a1", roll=g2.roll_code("r", "S"))
    assert names(g2, s2) == ["move rS c3-c2", "move rS c3-b3", "pass"]


def test_black_moves_need_another_black_within_distance_two() -> None:
    # 4x4, black S on b4 and black M on d2 (both moved off the wall earlier). kS on b4 may go
    # to b3 (distance to d2: max(1, 2) = 2, allowed), a4 (max(2, 3) = 3, not allowed) or c4
    # (max(2, 1) = 2, allowed).
    g = game(**PRESET_4)
    s = g.state_from({"b4": "kS", "d2": "kM"}, roll=g.roll_code("k", "S"))
    assert names(g, s) == ["black S b4-b3", "black S b4-c4", "pass"]
    # the last-moved rule applies to black pyramids too (ruling)
    s_last = g.state_from({"b4": "kS", "d2": "kM"}, last="b4", roll=g.roll_code("k", "S"))
    assert names(g, s_last) == ["pass"]
    after = g.play(["black S b4-c4"], s)
    assert after == g.state_from({"c4": "kS", "d2": "kM"}, to_move=1, last="c4")
    # 3x3: the only black pyramid has no other black near it, so black never moves
    g3 = game(**PRESET_3)
    assert names(g3, g3.state_from({}, wall="S", roll=g3.roll_code("k", "S"))) == ["pass"]


def test_atom_choices() -> None:
    # 4x4 start (wall S on b3, M on c2), roll atom S: red S or green S planted on any of the 14
    # empty squares, or the black S moved from b3 to b4, b2, a3 or c3 (all within distance 2
    # of the M on c2): 14 + 14 + 4 + pass = 33. Without atom_black: 29.
    g = game(**PRESET_4, wall="SM")
    s = g.initial_state()
    code = g.parse_action(s, "atom S")
    assert g.roll_label(code) == "r+g+k S"
    d = g.apply(s, code)
    acts = names(g, d)
    assert len(acts) == 33
    assert sorted(a for a in acts if a.startswith("black")) == [
        "black S b3-a3", "black S b3-b2", "black S b3-b4", "black S b3-c3",
    ]
    g_off = game(**PRESET_4, wall="SM", atom_black=False)
    d_off = g_off.apply(g_off.initial_state(), g_off.parse_action(g_off.initial_state(), "atom S"))
    assert len(names(g_off, d_off)) == 29
    assert not any(a.startswith("black") for a in names(g_off, d_off))


def test_pass_switch() -> None:
    # pass=off: a player who can act must act; with nothing to do the turn passes anyway
    g = game(**PRESET_3, **{"pass": False})
    s = g.state_from({}, wall="S", roll=g.roll_code("r", "S"))
    assert "pass" not in names(g, s) and len(names(g, s)) == 8
    assert names(g, g.state_from({}, wall="S", roll=0)) == ["pass"]
    after = g.play(["pass"], g.state_from({"a1": "rS"}, wall="S", last="a1", roll=0))
    assert after == g.state_from({"a1": "rS"}, wall="S", to_move=1)  # last moved cleared


# --- winning --------------------------------------------------------------------------------


def test_carrots_win_by_planting() -> None:
    # 3x3, group of 2: rS on a1, Carrots roll red M and plant it on b1: a1-b1 is a group of two
    # red pyramids on Carrots' side with the corner -> Carrots win, checked right after the turn
    g = game(**PRESET_3)
    s = g.state_from({"a1": "rS"}, wall="S", roll=g.roll_code("r", "M"))
    end = g.play(["plant rM@b1"], s)
    assert g.node_kind(end) == NodeKind.TERMINAL
    assert g.winner(end) == 0
    assert g.outcome(end).results == (Result.WIN, Result.LOSS)
    assert g.to_move(end) == 1  # the value is stored for Broccoli: a loss
    # planting it on c1 (wall line, not next to a1) wins nothing
    assert g.node_kind(g.play(["plant rM@c1"], s)) == NodeKind.CHANCE


def test_group_must_include_the_corner() -> None:
    # 4x4, group of 3: red on b1, c1 and b2 is a connected group of 3 on Carrots' side but a1
    # is empty: no win
    g = game(**PRESET_4)
    s = g.state_from({"b1": "rS", "c1": "rM", "b2": "rL"}, wall="SM", to_move=1)
    assert g.node_kind(s) == NodeKind.CHANCE and g.winner(s) == -1
    won = g.state_from({"a1": "rS", "b1": "rM", "c1": "rL"}, wall="SM", to_move=1)
    assert g.winner(won) == 0


def test_group_must_be_strictly_on_own_side() -> None:
    # 4x4, two colours, group of 4: a1, b1, c1 are on Carrots' side (file + rank = 2, 3, 4 < 5)
    # but d1 is on the wall line (4 + 1 = 5): a1-b1-c1-d1 counts only 3 -> no win; with the
    # fourth pyramid on b2 (2 + 2 = 4) instead, the group a1, b1, c1, b2 has 4 -> Carrots win
    g = game(size=4, colours=2, per_colour=1, group=4)
    on_line = g.state_from({"a1": "rS", "b1": "rM", "c1": "yS", "d1": "yM"}, wall="SM", to_move=1)
    assert g.winner(on_line) == -1
    inside = g.state_from({"a1": "rS", "b1": "rM", "c1": "yS", "b2": "yM"}, wall="SM", to_move=1)
    assert g.winner(inside) == 0
    # the other player's colours never count: green on b2 does not help Carrots
    mixed = g.state_from({"a1": "rS", "b1": "rM", "c1": "yS", "b2": "gM"}, wall="SM", to_move=1)
    assert g.winner(mixed) == -1


def test_broccoli_win_at_the_opposite_corner() -> None:
    # 4x4, group of 3: green on d4 (corner), d3 and c4 (file + rank 7 and 7 > 5)
    g = game(**PRESET_4)
    s = g.state_from({"d4": "gS", "d3": "gM", "c4": "gL"}, wall="SM", to_move=0)
    assert g.winner(s) == 1
    assert g.outcome(s).results == (Result.LOSS, Result.WIN)


def test_a_forced_colour_can_complete_the_opponents_group() -> None:
    # 4x4, pass=off, group of 3; Broccoli have gM on d4 and gL on d3; Carrots roll green S and
    # must plant the gS somewhere (12 empty squares, no pass). Planting it on c4 completes
    # Broccoli's group: Broccoli win, checked for both players after the turn.
    g = game(**PRESET_4, **{"pass": False})
    s = g.state_from({"d4": "gM", "d3": "gL"}, wall="SM", to_move=0)
    code = g.parse_action(s, "green S")
    assert g.roll_label(code) == "g S"
    d = g.apply(s, code)
    acts = names(g, d)
    assert len(acts) == 12 and "pass" not in acts and "plant gS@c4" in acts
    end = g.play(["plant gS@c4"], d)
    assert g.winner(end) == 1 and g.to_move(end) == 1
    assert g.outcome(end).results[1] == Result.WIN


def test_both_groups_complete_the_mover_wins() -> None:
    # Cannot arise in play (a turn changes one colour only) but the ruling is defined: on a
    # board where both groups are complete, the player who just moved (not to_move) wins.
    g = game(**PRESET_3)
    both = {"a1": "rS", "b1": "rM", "c3": "gS", "b3": "gM"}
    assert g.winner(g.state_from(both, wall="S", to_move=1)) == 0
    assert g.winner(g.state_from(both, wall="S", to_move=0)) == 1


# --- keys, symmetry, names, tiers -------------------------------------------------------------

KEY_VARIANTS = [
    PRESET_3,
    PRESET_4,
    dict(size=3, colours=2, per_colour=1, group=3, **{"pass": False}),
    dict(size=3, colours=1, per_colour=2, group=2),
    dict(size=5, colours=1, per_colour=1, group=3, wall="SML", atom_black=False),
]


@pytest.mark.parametrize("params", KEY_VARIANTS, ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()))
def test_keys_round_trip_and_fit_64_bits(params: dict) -> None:
    g = game(**params)
    for s in playout_states(g, 8, seed=1):
        key = g.encode(s)
        assert 0 <= key < 2**64
        assert g.decode(key) == s
        images = g.symmetries(s)
        assert images[0] == s and len(images) == 2
        assert g.canonical(s) == min(images, key=g.encode)
        for im in images:
            assert g.decode(g.encode(im)) == im
            # the reflection keeps the kind of node, the player and the number of choices
            assert g.node_kind(im) == g.node_kind(s) and g.to_move(im) == g.to_move(s)
            if g.node_kind(s) == NodeKind.DECISION:
                assert len(g.legal_actions(im)) == len(g.legal_actions(s))
                assert len(set(names(g, s))) == len(names(g, s))  # unique names


def test_tier_is_the_number_of_coloured_pyramids_and_never_falls() -> None:
    g = game(**PRESET_4)
    states = playout_states(g, 8, seed=2)
    keys = np.array([g.encode(s) for s in states], dtype=np.uint64)
    tiers = g.tier_of(keys)
    want = [sum(1 for c in s.board if c and c <= 12) for s in states]  # codes 1..12: colours
    assert tiers.tolist() == want
    exp = g.expand(keys)
    child_tiers = g.tier_of(exp.children)
    assert np.all(child_tiers >= np.repeat(tiers, np.diff(exp.offsets)))


@pytest.mark.parametrize("params", KEY_VARIANTS, ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()))
def test_batch_path_equals_the_rules(params: dict) -> None:
    # The numpy expand must give exactly the arrays of the per-state rules (Game.expand), with
    # and without canonical children, on positions from playouts and their children.
    g = game(**params)
    states = playout_states(g, 6, seed=7)
    keys = {g.encode(s) for s in states}
    for s in states[:60]:
        if g.node_kind(s) == NodeKind.DECISION:
            keys.update(g.encode(g.apply(s, a)) for a in g.legal_actions(s))
    arr = np.array(sorted(keys), dtype=np.uint64)
    for canonical in (False, True):
        want = Game.expand(g, arr, canonical=canonical)
        got = g.expand(arr, canonical=canonical)
        for field in ("kind", "to_move", "offsets", "children", "result", "margin"):
            a, b = getattr(want, field), getattr(got, field)
            assert a.dtype == b.dtype and np.array_equal(a, b), field
        assert (want.probs is None) == (got.probs is None)
        if want.probs is not None:
            assert np.array_equal(want.probs, got.probs)


def test_action_names_parse_back() -> None:
    g = game(**PRESET_4)
    for s in playout_states(g, 4, seed=5):
        if g.node_kind(s) == NodeKind.DECISION:
            for a in g.legal_actions(s):
                assert g.parse_action(s, g.action_name(s, a)) == a
        elif g.node_kind(s) == NodeKind.CHANCE:
            for a, _ in g.chance_outcomes(s):
                assert g.parse_action(s, g.action_name(s, a)) == a
    assert SETUP == g.initial_state().roll


# --- the solved 3x3 preset (slow) ------------------------------------------------------------


@pytest.fixture(scope="module")
def solved3() -> tuple[Carrots, Any, Any]:
    from solver.engines.enumerate import enumerate_positions
    from solver.engines.value_iteration import value_iteration

    g = game(**PRESET_3)
    graph = enumerate_positions(g)
    sol = value_iteration(graph, tiers=g.tier_of(graph.keys))
    return g, graph, sol


@pytest.mark.slow
def test_3x3_every_value_satisfies_its_bellman_equation(solved3) -> None:
    g, graph, sol = solved3
    assert sol.converged and sol.stats["certified"]
    parent = graph.parent_of_edge()
    sign = np.where(graph.to_move[graph.child] == graph.to_move[parent], 1.0, -1.0)
    q = sign * sol.value[graph.child]
    kind = graph.kind
    chance = kind == NodeKind.CHANCE
    # chance probabilities of every chance node sum to 1
    sums = np.bincount(parent, weights=np.where(chance[parent], graph.probs, 0.0), minlength=graph.n)
    assert np.allclose(sums[chance], 1.0, atol=1e-12)
    mean = np.bincount(parent, weights=np.where(chance[parent], graph.probs * q, 0.0), minlength=graph.n)
    best = np.full(graph.n, -np.inf)
    np.maximum.at(best, parent, q)
    dec = kind == NodeKind.DECISION
    term = kind == NodeKind.TERMINAL
    assert np.max(np.abs(sol.value[chance] - mean[chance])) < 1e-9
    assert np.max(np.abs(sol.value[dec] - best[dec])) < 1e-9
    assert np.array_equal(sol.value[term], graph.result[term].astype(float))
    # win/loss probabilities: consistent with the values, endless play the rest
    assert np.allclose(sol.p_win - sol.p_loss, sol.value, atol=1e-9)
    assert np.all(sol.p_win >= -1e-12) and np.all(sol.p_win + sol.p_loss <= 1 + 1e-9)
    # the chosen move of a decision node is one of its best
    b = sol.best[dec]
    assert np.all(np.abs(q[b] - sol.value[dec]) < 1e-9)


@pytest.mark.slow
def test_3x3_immediate_wins_are_worth_one(solved3) -> None:
    # Carrots with rS on a1 roll red M: planting rM on b1 or a2 wins at once -> value +1, win
    # probability 1. The chance node before (Carrots to roll, rS on a1, Broccoli nothing)
    # is worth at least P(a roll allowing a red M or L) = P(red or atom) * P(a face with M or L)
    # = 2/6 * 5/6 = 10/36 (then plant it next to a1), minus nothing since Broccoli have nothing.
    g, graph, sol = solved3
    d = g.state_from({"a1": "rS"}, wall="S", roll=g.roll_code("r", "M"))
    row = graph.row_of(g.encode(g.canonical(d)))
    assert row >= 0
    assert sol.value[row] == pytest.approx(1.0, abs=1e-12) and sol.p_win[row] == pytest.approx(1.0, abs=1e-12)
    c = g.state_from({"a1": "rS"}, wall="S")
    crow = graph.row_of(g.encode(g.canonical(c)))
    assert crow >= 0
    assert sol.p_win[crow] >= 10 / 36 - 1e-12


def expectimax(g: Carrots, state: CarrotsState, plies: int, leaf) -> float:
    """Plain depth-limited expectimax over the game's own rules (not the graph), value for the
    side to move; ``leaf(state)`` gives the value at the depth limit."""
    kind = g.node_kind(state)
    if kind == NodeKind.TERMINAL:
        return 1.0 if g.winner(state) == g.to_move(state) else -1.0
    if plies == 0:
        return leaf(state)
    me = g.to_move(state)

    def seen(child: CarrotsState) -> float:
        v = expectimax(g, child, plies - 1, leaf)
        return v if g.to_move(child) == me else -v

    if kind == NodeKind.CHANCE:
        return sum(float(p) * seen(g.apply(state, a)) for a, p in g.chance_outcomes(state))
    return max(seen(g.apply(state, a)) for a in g.legal_actions(state))


@pytest.mark.slow
def test_3x3_expectimax_agrees_near_the_end(solved3) -> None:
    # Positions with five or six pyramids on the board (the game is close to its end). Two
    # checks: (1) three plies of expectimax with the stored values at the leaves gives the
    # stored value (the values solve the game's own rules, not just the graph); (2) with -1 /
    # +1 at the leaves expectimax brackets the stored value (the Bellman operator is monotone,
    # so the true value lies between the pessimistic and the optimistic lookahead).
    g, graph, sol = solved3

    def stored(s: CarrotsState) -> float:
        return float(sol.value[graph.row_of(g.encode(g.canonical(s)))])

    rng = random.Random(11)
    tiers = g.tier_of(graph.keys)
    rows = np.flatnonzero((tiers >= 5) & (graph.kind == NodeKind.DECISION))
    picked = rng.sample(rows.tolist(), 6)
    for row in picked:
        s = g.decode(int(graph.keys[row]))
        v = float(sol.value[row])
        assert expectimax(g, s, 3, stored) == pytest.approx(v, abs=1e-9)
        lo = expectimax(g, s, 3, lambda st: -1.0 if g.to_move(st) == g.to_move(s) else 1.0)
        hi = expectimax(g, s, 3, lambda st: 1.0 if g.to_move(st) == g.to_move(s) else -1.0)
        assert lo - 1e-9 <= v <= hi + 1e-9


def test_one_word_move_forms() -> None:
    # for command lines that split moves on spaces: ':' for a space, rS@b2 = plant, gM:b2-b3 =
    # move, kS:b3-b4 = black move. 4x4, turns alternate: Carrots plant rS on a1 (atom S),
    # Broccoli roll nothing and pass, Carrots roll green M and plant it on d4, Broccoli roll red
    # S and move rS up to a2, Carrots move the black S from b3 to b4; Broccoli to roll.
    g = game(**PRESET_4)
    s = g.play("wall:SM atom:S rS@a1 none pass green:M gM@d4 red:S rS:a1-a2 black:S kS:b3-b4".split())
    assert s == g.state_from({"a2": "rS", "d4": "gM", "b4": "kS", "c2": "kM"}, to_move=1, last="b4")
    with pytest.raises(IllegalMoveError):
        g.play(["wall:SX"])
