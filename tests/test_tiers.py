"""Tier hooks (``tier_of``/``tier_name``) of Override, Greener, Blam! and Carrots.

A tiered solver relies on three properties, checked here on whole enumerated graphs of small
variants (with and without symmetry) and on random positions of larger key layouts:

1. ``tier_of`` (vectorised on the key digits) equals the tier counted from the decoded state;
2. the tier never falls along an edge (decision moves, chance outcomes, passes);
3. the images of a position under the game's symmetries share its tier.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from solver.core.dice import BLACK
from solver.core.game import Game, NodeKind
from solver.engines.enumerate import enumerate_positions
from solver.games.blam import Blam
from solver.games.carrots import Carrots
from solver.games.greener import Greener, stack_parts
from solver.games.override import Override


# --- the tiers counted from decoded states (readable reference) --------------------------------
def override_tier(game: Override, state) -> int:
    """Pyramids of each colour and size on the board, mixed radix ``per_size + 1`` (AS lowest)."""
    counts = [0] * 6
    for stack in state.stacks:
        for p in stack:
            counts[p] += 1
    radix = game.per_size + 1
    return sum(c * radix**p for p, c in enumerate(counts))


def greener_tier(game: Greener, state) -> int:
    """``((captures * (G + 1) + greens captured) * (cells + 1) + tallest) * 3 + passes``; root 0."""
    if state.root:
        return 0
    captures = state.board.count(0)
    greens_captured = game.green - state.board.count(1)
    tallest = max(stack_parts(code)[1] for code in state.board if code)
    return ((captures * (game.green + 1) + greens_captured) * (game.cells + 1) + tallest) * 3 + state.passes


def blam_tier(game: Blam, state) -> int:
    """Stash-empty bits, then pyramids out of play per colour and size, then (3+ players) the
    treasures of players 0..P-2; least significant first."""
    P, k = game.num_players, game.per_size
    digits: list[tuple[int, int]] = [(int(not any(state.stash[p])), 2) for p in range(P)]
    for q in range(P):
        for s in range(3):
            on_board = state.board.count(1 + 3 * q + s)
            digits.append((k - on_board - state.stash[q][s], k + 1))
    if P >= 3:
        digits += [(state.treasure[p][s], (P - 1) * k + 1) for p in range(P - 1) for s in range(3)]
    tier, place = 0, 1
    for d, r in digits:
        assert 0 <= d < r
        tier += d * place
        place *= r
    return tier


def carrots_tier(game: Carrots, state) -> int:
    return sum(1 for code in state.board if code and (code - 1) // 3 != BLACK)


READABLE = {"override": override_tier, "greener": greener_tier, "blam": blam_tier, "carrots": carrots_tier}


def readable(game: Game, state) -> int:
    return READABLE[game.name](game, state)


# --- small variants whose whole graph is checked -------------------------------------------------
SMALL = [
    pytest.param(Override, {"size": 2, "line": 2, "per_size": 1}, id="override-2x2"),
    pytest.param(Override, {"size": 2, "line": 2, "per_size": 2}, id="override-2x2-2"),
    pytest.param(Override, {"size": 2, "line": 2, "per_size": 1, "no_undo": False}, id="override-2x2-undo"),
    pytest.param(Greener, Greener.presets["3x3"], id="greener-3x3"),
    pytest.param(Greener, {"rows": 2, "cols": 3, "black": 2, "white": 2, "setup": "BWG/GWB"}, id="greener-layout"),
    pytest.param(Blam, Blam.presets["3x3"], id="blam-3x3"),
    pytest.param(Blam, {"rows": 2, "cols": 4, "per_size": 1, "chain": False}, id="blam-2x4-nochain"),
    pytest.param(Blam, {"rows": 2, "cols": 3, "per_size": 1, "push_smaller_only": True}, id="blam-2x3-smaller"),
    pytest.param(Blam, {"rows": 2, "cols": 2, "per_size": 2}, id="blam-2x2-2-square"),
    pytest.param(Blam, {"rows": 2, "cols": 2, "per_size": 1, "players": 3}, id="blam-2x2-3p"),
    pytest.param(Blam, {"rows": 1, "cols": 3, "per_size": 1, "players": 3}, id="blam-1x3-3p"),
    pytest.param(Blam, {"rows": 2, "cols": 2, "per_size": 1, "players": 4}, id="blam-2x2-4p"),
]


@pytest.mark.parametrize("symmetry", [True, False], ids=["sym", "nosym"])
@pytest.mark.parametrize("cls, params", SMALL)
def test_tier_of_matches_the_decoded_state_and_never_falls(cls, params, symmetry: bool) -> None:
    game = cls.from_params(params)
    graph = enumerate_positions(game, symmetry=symmetry, workers=1)
    tiers = game.tier_of(graph.keys)
    assert tiers.dtype == np.int64 and tiers.shape == graph.keys.shape
    want = np.array([readable(game, game.decode(int(k))) for k in graph.keys], dtype=np.int64)
    np.testing.assert_array_equal(tiers, want)
    parent = graph.parent_of_edge()
    assert np.all(tiers[graph.child] >= tiers[parent]), "an edge goes to a lower tier"
    # names: short strings, one per tier
    names = {int(t): game.tier_name(int(t)) for t in np.unique(tiers)}
    assert all(isinstance(s, str) and s for s in names.values())
    assert len(set(names.values())) == len(names), "two tiers share a name"


def test_greener_tiers_strictly_rise_and_the_setup_root_is_lowest() -> None:
    game = Greener.from_params(Greener.presets["3x3"])
    graph = enumerate_positions(game, symmetry=True, workers=1)
    tiers = game.tier_of(graph.keys)
    parent = graph.parent_of_edge()
    assert graph.kind[graph.root] == NodeKind.CHANCE and tiers[graph.root] == 0
    assert np.all(tiers[graph.child] > tiers[parent])  # every capture and every pass raises it
    assert game.tier_name(0) == "setup"
    assert game.tier_name(int(tiers[graph.child[graph.offsets[graph.root]]])) == (
        "9 stacks left, 0 greens captured, tallest 1"
    )


def test_override_tier_is_the_bitmask_of_placed_pieces() -> None:
    game = Override.from_params(Override.presets["3x3"])
    state = game.play(["AS@a1", "BL@b1", "a1-a2"])
    tier = int(game.tier_of(np.array([game.encode(state)], dtype=np.uint64))[0])
    assert tier == 1 << 0 | 1 << 5  # AS is piece 0, BL piece 5
    assert game.tier_name(tier) == "placed A:S B:L"
    two = Override.from_params(Override.presets["3x3-2"])
    state = two.play(["AS@a1", "BL@b1", "AS@c1"])
    tier = int(two.tier_of(np.array([two.encode(state)], dtype=np.uint64))[0])
    assert tier == 2 + 3**5 and two.tier_name(tier) == "placed A:SS B:L"


def test_names() -> None:
    blam = Blam.from_params(Blam.presets["3x3"])
    assert blam.tier_name(0) == "took 1:- 2:-"
    three = Blam.from_params(Blam.presets["3x3-3p"])
    assert three.tier_name(0) == "took 1:- 2:- 3:- | lost 1:- 2:- 3:-"
    carrots = Carrots.from_params(Carrots.presets["3x3"])
    assert carrots.tier_name(3) == "3 planted"


# --- random positions of larger key layouts -----------------------------------------------------
def _children(game: Game, state) -> list:
    kind = game.node_kind(state)
    if kind == NodeKind.DECISION:
        return [game.apply(state, a) for a in game.legal_actions(state)]
    if kind == NodeKind.CHANCE:
        return [game.apply(state, a) for a, _ in game.chance_outcomes(state)]
    return []


def _random_states(game: Game, *, games: int, plies: int, seed: int) -> list:
    rng = random.Random(seed)
    out = []
    for _ in range(games):
        state = game.initial_state()
        for _ in range(plies):
            out.append(state)
            kids = _children(game, state)
            if not kids:
                break
            state = rng.choice(kids)
    return out


LARGE = [
    pytest.param(Override, Override.presets["3x3"], id="override-3x3"),
    pytest.param(Override, Override.presets["3x3-2"], id="override-3x3-2"),
    pytest.param(Override, Override.presets["4x4"], id="override-4x4"),
    pytest.param(Override, {"size": 5, "line": 4, "per_size": 1}, id="override-5x5"),
    pytest.param(Greener, Greener.presets["3x4"], id="greener-3x4"),
    pytest.param(Greener, {"rows": 4, "cols": 4, "black": 4, "white": 4, "setup": "random", "seed": 3},
                 id="greener-4x4-random"),
    pytest.param(Blam, Blam.presets["4x4"], id="blam-4x4"),
    pytest.param(Blam, {"rows": 4, "cols": 4, "per_size": 2}, id="blam-4x4-2"),
    pytest.param(Blam, {"rows": 3, "cols": 3, "per_size": 5}, id="blam-3x3-5-square"),
    pytest.param(Blam, Blam.presets["3x3-3p"], id="blam-3x3-3p"),
    pytest.param(Blam, {"rows": 3, "cols": 3, "per_size": 2, "players": 3}, id="blam-3x3-2-3p-square"),
    pytest.param(Blam, {"rows": 2, "cols": 3, "per_size": 1, "players": 4}, id="blam-2x3-4p"),
    pytest.param(Carrots, Carrots.presets["3x3"], id="carrots-3x3"),
]


@pytest.mark.parametrize("cls, params", LARGE)
def test_tier_on_random_positions(cls, params) -> None:
    """On random-play positions of larger layouts (Override per_size=2 square digits, Blam 4x4
    per_size=2 piece digits, square-scheme and 3-4 player Blam keys): tier_of equals the
    readable count, never falls to any child, and is the same on every symmetry image."""
    game = cls.from_params(params)
    states = _random_states(game, games=20, plies=40, seed=1)
    keys = np.array([game.encode(s) for s in states], dtype=np.uint64)
    tiers = game.tier_of(keys)
    np.testing.assert_array_equal(tiers, [readable(game, s) for s in states])
    for state, tier in zip(states[:200], tiers[:200]):
        kids = _children(game, state)
        if kids:
            kid_tiers = game.tier_of(np.array([game.encode(k) for k in kids], dtype=np.uint64))
            assert kid_tiers.min() >= tier, game.render(state)
        images = game.symmetries(state)
        image_tiers = game.tier_of(np.array([game.encode(s) for s in images], dtype=np.uint64))
        assert np.all(image_tiers == tier)
        canon = game.tier_of(np.array([game.encode(game.canonical(state))], dtype=np.uint64))
        assert canon[0] == tier
    names = {game.tier_name(int(t)) for t in np.unique(tiers)}
    assert len(names) == len(np.unique(tiers))


@pytest.mark.parametrize("cls, params", [pytest.param(c, p, id=i) for c, p, i in [
    (Override, {"size": 2, "line": 2, "per_size": 2}, "override"),
    (Greener, Greener.presets["3x3"], "greener"),
    (Blam, Blam.presets["3x3"], "blam"),
    (Blam, {"rows": 2, "cols": 2, "per_size": 1, "players": 3}, "blam-3p"),
]])
def test_symmetry_images_share_the_tier(cls, params) -> None:
    """Every image of every position of a small variant has the position's tier."""
    game = cls.from_params(params)
    graph = enumerate_positions(game, symmetry=True, workers=1)
    tiers = game.tier_of(graph.keys)
    for key, tier in zip(graph.keys.tolist(), tiers.tolist()):
        images = game.symmetries(game.decode(key))
        got = game.tier_of(np.array([game.encode(s) for s in images], dtype=np.uint64))
        assert np.all(got == tier)


def test_empty_and_out_of_range() -> None:
    for game in (Override.from_params(Override.presets["3x3"]), Greener.from_params(Greener.presets["3x3"]),
                 Blam.from_params(Blam.presets["3x3"])):
        assert game.tier_of(np.zeros(0, dtype=np.uint64)).shape == (0,)
    greener = Greener.from_params(Greener.presets["3x3"])
    with pytest.raises(ValueError):
        greener.tier_of(np.array([greener.root_key + 1], dtype=np.uint64))
