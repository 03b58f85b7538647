"""The compiled random playouts (:meth:`Game.random_playout`) against the readable rules.

A kernel reports, for every choice it made, how many actions it saw and the index it took; the
test replays those indices through ``legal_actions`` and ``apply`` and checks, at every step, that
the rules list the same number of actions, and at the end that the kernel's position is the
rules' position. Positions to start from are reached by random play under the rules, on the
small presets and at full size; kernels also stop exactly at ``max_choices``.
"""

from __future__ import annotations

import numpy as np
import pytest

from solver.core.game import NodeKind
from solver.games import game_class
from solver.players import MCTSPlayer
from solver.players.base import sample_chance, terminal_values

#: (game, parameters): small presets, odd shapes and the full-size defaults
CASES = [
    ("greener", {"rows": 3, "cols": 3, "black": 2, "white": 2, "setup": "all"}),
    ("greener", {"rows": 3, "cols": 4, "black": 3, "white": 3, "setup": "all", "tiebreak": "none"}),
    ("greener", {}),
    ("blam", {"rows": 3, "cols": 3, "per_size": 1}),
    ("blam", {"rows": 3, "cols": 4, "per_size": 2, "chain": False, "push_smaller_only": True}),
    ("blam", {"rows": 4, "cols": 3, "players": 3, "per_size": 1, "push_smaller_only": True}),
    ("blam", {}),
    ("override", {"size": 3, "line": 3, "per_size": 1}),
    ("override", {"size": 3, "line": 3, "per_size": 2, "centre_rule": False, "no_undo": False}),
    ("override", {"size": 4, "line": 3, "per_size": 1}),
    ("override", {}),
    ("carrots", {"size": 3, "colours": 1, "per_colour": 1, "group": 2}),
    ("carrots", {"size": 4, "colours": 1, "per_colour": 2, "group": 3, "pass": False, "atom_black": False}),
    ("carrots", {"size": 5, "colours": 2, "per_colour": 1, "group": 4, "wall": "SML"}),
    ("carrots", {}),
    ("petal", {"petals": 6, "run": 3, "per_size": 1}),
    ("petal", {"petals": 6, "run": 3, "per_size": 2, "opening": "enter-large", "tie_start": "player1",
               "actions": "exactly", "sequencing": "open", "bump_origin": "empty"}),
    ("petal", {"petals": 8, "run": 4, "per_size": 2, "sequencing": "p2-first"}),
    ("petal", {"petals": 4, "run": 2, "per_size": 1, "bump_origin": "empty"}),
    ("petal", {}),
]


def _start_positions(game, rng, count):
    """``count`` positions met in random games under the readable rules (chance sampled)."""
    out = []
    while len(out) < count:
        state = game.initial_state()
        for _ in range(int(rng.integers(0, 60))):
            kind = game.node_kind(state)
            if kind == NodeKind.TERMINAL:
                break
            if kind == NodeKind.CHANCE:
                state = game.apply(state, sample_chance(game, state, rng))
                continue
            if kind == NodeKind.SIMULTANEOUS:
                joints = game.joint_actions(state)
                state = game.apply_joint(state, joints[int(rng.integers(len(joints)))])
                continue
            acts = game.legal_actions(state)
            state = game.apply(state, acts[int(rng.integers(len(acts)))])
        if game.node_kind(state) != NodeKind.CHANCE:
            out.append(state)
    return out


def _replay(game, state, playout):
    """The kernel's rolls and choices through the readable rules: every roll one of the rules'
    outcomes, the same number of actions at every choice, the same end."""
    rolls = list(playout.outcomes)
    for step, (i, count) in enumerate(zip(playout.taken.tolist(), playout.counts.tolist())):
        while game.node_kind(state) == NodeKind.CHANCE:
            assert rolls, f"choice {step}: the rules roll the dice, the kernel did not"
            outcome = rolls.pop(0)
            assert outcome in [a for a, p in game.chance_outcomes(state) if p > 0]
            state = game.apply(state, outcome)
        if game.node_kind(state) == NodeKind.SIMULTANEOUS:  # one choice: index row-major over the lists
            joints = game.joint_actions(state)
            assert len(joints) == count, f"choice {step}: kernel saw {count} joint actions, the rules {len(joints)}"
            state = game.apply_joint(state, joints[i])
            continue
        assert game.node_kind(state) == NodeKind.DECISION, f"choice {step}: the rules say the game is over"
        acts = game.legal_actions(state)
        assert len(acts) == count, f"choice {step}: kernel saw {count} actions, the rules {len(acts)}"
        state = game.apply(state, acts[i])
    if rolls:  # stopped at the cap just after a roll, or a roll ended nothing: replay it too
        state = game.apply(state, rolls.pop(0))
    assert not rolls
    assert playout.state == state
    return state


#: Carrots 5x5 with two colours replays 40 long games under the readable rules (13 s): slow suite
REPLAY_CASES = [pytest.param(n, p, id=f"{n}-{i}",
                             marks=[pytest.mark.slow] if n == "carrots" and p.get("size") == 5 else [])
                for i, (n, p) in enumerate(CASES)]


@pytest.mark.parametrize("name, params", REPLAY_CASES)
def test_compiled_playouts_replay_under_the_rules(name, params):
    game = game_class(name).from_params(params)
    rng = np.random.default_rng(7)
    # full-size Carrots and Broccoli: random games do not end (passes, moves back and forth), and
    # replaying 10,000 choices under the rules takes seconds, so 6 playouts of 200 choices
    full_carrots = name == "carrots" and not params
    cap, starts = (200, 6) if full_carrots else (2_000, 40) if name == "carrots" else (10_000, 40)
    ended = 0
    for s, state in enumerate(_start_positions(game, rng, starts)):
        playout = game.random_playout(state, cap, seed=s)
        assert playout is not None
        end = _replay(game, state, playout)
        assert playout.choices == len(playout.taken)
        over = game.node_kind(end) == NodeKind.TERMINAL
        assert over or playout.choices == cap  # a playout stops only at the end or the cap
        ended += over
    # Override, Blam! and Greener always end within 10,000 random choices; Carrots and Broccoli's
    # small boards in most playouts of 2,000, not all
    if name != "carrots":
        assert ended == starts
    elif not full_carrots:
        assert ended > starts // 2


#: games whose kernels say who won (Playout.values) whenever a playout ends the game
SAYS_WHO_WON = {"override", "blam", "petal"}


@pytest.mark.parametrize("name, params", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_compiled_playouts_say_who_won_as_the_rules_do(name, params):
    """``Playout.values`` (what MCTS takes instead of building the end position) is every
    player's result under the rules' ``outcome`` of the end position, and ``None`` exactly when
    the playout stopped at the cap before the end; caps from 0 to past the end."""
    game = game_class(name).from_params(params)
    rng = np.random.default_rng(11)
    seen = {True: 0, False: 0}
    for s, state in enumerate(_start_positions(game, rng, 12)):
        for cap in (0, 1, 5, 400):
            playout = game.random_playout(state, cap, seed=s)
            if playout is None:
                continue
            values = playout.values  # read before the end position is built
            over = game.node_kind(playout.state) == NodeKind.TERMINAL
            if values is not None:
                assert over and values == terminal_values(game, playout.state)
            elif name in SAYS_WHO_WON:
                assert not over
            seen[over] += 1
    if name in SAYS_WHO_WON:  # both kinds of end were met
        assert seen[True] and seen[False]


@pytest.mark.parametrize("name, params", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_compiled_playouts_stop_at_the_cap_and_repeat_with_the_seed(name, params):
    game = game_class(name).from_params(params)
    rng = np.random.default_rng(3)
    for s, state in enumerate(_start_positions(game, rng, 10)):
        full = game.random_playout(state, 400, seed=100 + s)
        again = game.random_playout(state, 400, seed=100 + s)
        assert again.state == full.state and np.array_equal(again.taken, full.taken)
        cap = full.choices // 2
        part = game.random_playout(state, cap, seed=100 + s)
        assert part.choices == cap
        assert np.array_equal(part.taken, full.taken[:cap])  # the same stream, cut short
        _replay(game, state, part)


def test_compiled_playouts_draw_every_action_uniformly():
    """From one Greener position the kernel's first choice is uniform over the captures
    (chi-square over 4,000 seeds, a 99.9% bound: fails about once in a thousand runs of a fair
    kernel, always for one that favours an action)."""
    game = game_class("greener").from_params({})
    state = next(s for s in _start_positions(game, np.random.default_rng(5), 20)
                 if game.node_kind(s) == NodeKind.DECISION and len(game.legal_actions(s)) > 5)
    k = len(game.legal_actions(state))
    firsts = np.array([game.random_playout(state, 1, seed=s).taken[0] for s in range(4000)])
    observed = np.bincount(firsts, minlength=k)
    expected = 4000 / k
    chi2 = float(((observed - expected) ** 2 / expected).sum())
    from scipy.stats import chi2 as chi2_dist

    assert chi2 < chi2_dist.ppf(0.999, k - 1), observed


def test_mcts_uses_the_kernel_and_the_rules_on_request():
    """Both ways give a legal move; ``playouts=rules`` is named in the player's description and a
    bad value is one line."""
    game = game_class("greener").from_params({"rows": 3, "cols": 3, "black": 2, "white": 2, "setup": "all"})
    state = next(s for s in _start_positions(game, np.random.default_rng(1), 20)
                 if game.node_kind(s) == NodeKind.DECISION and len(game.legal_actions(s)) > 1)
    for way in ("compiled", "rules"):
        player = MCTSPlayer(budget=30, playouts=way)
        move = player.choose(game, state, np.random.default_rng(0))
        assert move in game.legal_actions(state)
    assert "playouts=rules" in MCTSPlayer(playouts="rules").describe()
    assert "playouts" not in MCTSPlayer().describe()
    from solver.errors import VariantError

    with pytest.raises(VariantError, match="playouts must be 'compiled'"):
        MCTSPlayer(playouts="fast")


def test_compiled_carrots_rolls_follow_the_dice():
    """The kernel's effective rolls at a full-size turn start, over 3,600 seeds, against the
    probabilities of ``chance_outcomes`` (the 36 raw rolls grouped exactly): chi-square at 99.9%."""
    game = game_class("carrots").from_params({})
    rng = np.random.default_rng(11)
    state = next(s for s in _start_positions(game, rng, 30) if game.node_kind(s) == NodeKind.DECISION
                 and len(game.legal_actions(s)) > 3)
    state = game.apply(state, game.legal_actions(state)[0])  # a turn starts: the dice are next
    assert game.node_kind(state) == NodeKind.CHANCE and len(game.chance_outcomes(state)) > 4
    outs = game.chance_outcomes(state)
    index = {a: i for i, (a, _) in enumerate(outs)}
    drawn = np.zeros(len(outs))
    for seed in range(3600):
        drawn[index[game.random_playout(state, 1, seed=seed).outcomes[0]]] += 1
    expected = np.array([float(p) for _, p in outs]) * 3600
    chi2 = float(((drawn - expected) ** 2 / expected).sum())
    from scipy.stats import chi2 as chi2_dist

    assert chi2 < chi2_dist.ppf(0.999, len(outs) - 1), (drawn, expected)
