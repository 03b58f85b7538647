"""A self-check that runs on any game: random playouts exercising the whole protocol.

Checked at every visited state: the node kind is consistent with the methods it offers;
``encode``/``decode`` round-trip and keys fit in 64 bits; every legal action applies and its
readable name is unique and parses back to it; chance probabilities are exact and sum to 1;
at simultaneous nodes every player has actions with unique names, ``joint_actions`` is their
row-major product and every joint action applies; every symmetry image has the same canonical
form, node kind, player to move and number of legal (or per-player) actions; terminal outcomes
give a result to every player (the same in every symmetry image). Used by the test suite on every registered game.
"""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

from solver.core.game import Game, NodeKind, Outcome

#: joint actions applied per simultaneous node (all of them in every game so far)
_MAX_JOINT_CHECKS = 400


def selfcheck(game: Game, *, playouts: int = 20, max_plies: int = 200, seed: int = 0) -> list[str]:
    """Problems found in ``playouts`` random games (an empty list means the game passed)."""
    rng = random.Random(seed)
    problems: list[str] = []

    def fail(msg: str) -> None:
        if len(problems) < 20:
            problems.append(msg)

    for _ in range(playouts):
        state = game.initial_state()
        for _ply in range(max_plies):
            _check_state(game, state, fail)
            kind = game.node_kind(state)
            if kind == NodeKind.TERMINAL:
                break
            if kind == NodeKind.CHANCE:
                outcomes = game.chance_outcomes(state)
                actions = [a for a, _ in outcomes]
                weights = [float(p) for _, p in outcomes]
                state = game.apply(state, rng.choices(actions, weights)[0])
            elif kind == NodeKind.SIMULTANEOUS:
                joint = tuple(rng.choice(game.player_actions(state, p)) for p in range(game.num_players))
                state = game.apply_joint(state, joint)
            else:
                state = game.apply(state, rng.choice(game.legal_actions(state)))
    return problems


def _check_state(game: Game, state: Any, fail) -> None:
    key = game.encode(state)
    if not (isinstance(key, int) and 0 <= key < 2**64):
        fail(f"key {key!r} is not an integer in [0, 2**64)")
        return
    back = game.decode(key)
    if back != state or game.encode(back) != key:
        fail(f"decode(encode(s)) != s for key {key}")
    kind = game.node_kind(state)
    player = game.to_move(state)
    if not 0 <= player < game.num_players:
        fail(f"to_move {player} out of range at key {key}")
    if kind == NodeKind.DECISION:
        actions = game.legal_actions(state)
        if not actions:
            fail(f"decision node without legal actions at key {key} (the game should pass)")
        names = [game.action_name(state, a) for a in actions]
        if len(set(n.lower() for n in names)) != len(names):
            fail(f"action names are not unique at key {key}: {names}")
        for a, name in zip(actions, names):
            if game.parse_action(state, name) != a:
                fail(f"parse_action({name!r}) does not give back the action at key {key}")
            game.apply(state, a)
    elif kind == NodeKind.CHANCE:
        outcomes = game.chance_outcomes(state)
        probs = [p for _, p in outcomes]
        if not all(isinstance(p, (Fraction, int)) for p in probs):
            fail(f"chance probabilities are not exact fractions at key {key}")
        if sum(Fraction(p) for p in probs) != 1:
            fail(f"chance probabilities sum to {sum(Fraction(p) for p in probs)} at key {key}")
    elif kind == NodeKind.SIMULTANEOUS:
        lists = [game.player_actions(state, p) for p in range(game.num_players)]
        for p, acts in enumerate(lists):
            if not acts:
                fail(f"player {p} has no action at the simultaneous node {key}")
            names = [game.action_name(state, a).lower() for a in acts]
            if len(set(names)) != len(names):
                fail(f"player {p}'s action names are not unique at simultaneous key {key}: {names}")
        joints = game.joint_actions(state)
        expected = 1
        for acts in lists:
            expected *= len(acts)
        if len(joints) != expected or (joints and tuple(a[0] for a in lists) != joints[0]):
            fail(f"joint_actions at key {key} is not the row-major product of player_actions")
        for joint in joints[:_MAX_JOINT_CHECKS]:
            game.apply_joint(state, joint)
    elif kind == NodeKind.TERMINAL:
        out = game.outcome(state)
        if not isinstance(out, Outcome) or len(out.results) != game.num_players:
            fail(f"outcome at key {key} does not give a result to every player")
    canon = game.canonical(state)
    canon_key = game.encode(canon)
    for image in game.symmetries(state):
        if game.encode(game.canonical(image)) != canon_key:
            fail(f"a symmetry image of key {key} has another canonical form")
        if game.node_kind(image) != kind:
            fail(f"a symmetry image of key {key} has another node kind")
        if game.to_move(image) != player:
            fail(f"a symmetry image of key {key} has another player to move")
        if kind == NodeKind.DECISION and len(game.legal_actions(image)) != len(game.legal_actions(state)):
            fail(f"a symmetry image of key {key} has another number of legal actions")
        if kind == NodeKind.SIMULTANEOUS and any(
            len(game.player_actions(image, p)) != len(game.player_actions(state, p))
            for p in range(game.num_players)
        ):
            fail(f"a symmetry image of key {key} has another number of simultaneous actions")
        if kind == NodeKind.TERMINAL and game.outcome(image).results != game.outcome(state).results:
            fail(f"a symmetry image of key {key} has another outcome")
