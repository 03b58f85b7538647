"""The two baseline players: uniformly random, and greedy (one ply with the game's evaluation)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from solver.core.game import Game, NodeKind
from solver.players.base import Action, Player, check_decision, pick
from solver.errors import VariantError
from solver.players.evals import evaluate, evaluation_for


@dataclass(repr=False)
class RandomPlayer(Player):
    """Every legal action equally likely; at a simultaneous node every player's action equally
    likely and independent. The baseline of balance questions ("random-play results")."""

    name = "random"

    def choose(self, game: Game, state: Any, rng: np.random.Generator) -> Action:
        check_decision(game, state, self.name)
        return pick(rng, game.legal_actions(state))

    def choose_joint(self, game: Game, state: Any, rng: np.random.Generator) -> tuple[Action, ...]:
        return tuple(pick(rng, game.player_actions(state, p)) for p in range(game.num_players))

    def strategies(self, game: Game, state: Any, rng: np.random.Generator) -> list[tuple[list[Action], np.ndarray]]:
        """At a secret simultaneous choice: each player's actions, each equally likely."""
        lists = [list(game.player_actions(state, p)) for p in range(game.num_players)]
        return [(acts, np.full(len(acts), 1.0 / len(acts))) for acts in lists]


@dataclass(repr=False)
class GreedyPlayer(Player):
    """One ply: an immediately winning move if there is one, else the move whose resulting
    position has the best evaluation for the mover (:func:`solver.players.evals.evaluate`);
    equal moves are broken at random with the game's generator.

    At a simultaneous node each player, independently, takes the action with the best average
    evaluation over the other players' actions chosen uniformly at random (one ply against a
    random opponent). In Petal Battle the orders do not change the board, so this is random there.
    With 3-4 players each seat maximises its own evaluation.
    """

    name = "greedy"
    #: which of the game's evaluations it maximises: ``default``, or one the game offers by name
    #: (:data:`solver.players.evals.STYLES`; Carrots and Broccoli: ``race``)
    evaluation: str = "default"

    def __post_init__(self) -> None:
        if not isinstance(self.evaluation, str) or not self.evaluation.strip():
            raise VariantError(f"greedy evaluation must be a name, got {self.evaluation!r}; "
                               "use e.g. evaluation=default")
        self.evaluation = self.evaluation.strip()

    def options(self) -> dict[str, Any]:
        """``evaluation`` when it is not the default (so the plain player is still ``greedy``)."""
        return {} if self.evaluation == "default" else {"evaluation": self.evaluation}

    def choose(self, game: Game, state: Any, rng: np.random.Generator) -> Action:
        check_decision(game, state, self.name)
        evaluation_for(game, self.evaluation)  # an evaluation the game lacks: refused before any move
        actions = game.legal_actions(state)
        if len(actions) == 1:
            return actions[0]
        me = game.to_move(state)
        best, best_value = [], -2.0
        for a in actions:
            child = game.apply(state, a)
            value = evaluate(game, child, me, self.evaluation)
            if game.node_kind(child) == NodeKind.TERMINAL and value > 0:
                value = 2.0  # a win now beats every evaluation
            if value > best_value + 1e-12:
                best, best_value = [a], value
            elif value > best_value - 1e-12:
                best.append(a)
        return pick(rng, best)

    def choose_joint(self, game: Game, state: Any, rng: np.random.Generator) -> tuple[Action, ...]:
        lists = [game.player_actions(state, p) for p in range(game.num_players)]
        joints = game.joint_actions(state)
        values = [[evaluate(game, game.apply_joint(state, j), p, self.evaluation) for p in range(game.num_players)] for j in joints]
        out = []
        for p, acts in enumerate(lists):
            index = {a: i for i, a in enumerate(acts)}
            total = [0.0] * len(acts)
            count = [0] * len(acts)
            for j, v in zip(joints, values):
                i = index[j[p]]
                total[i] += v[p]
                count[i] += 1
            means = [t / max(1, c) for t, c in zip(total, count)]
            top = max(means)
            out.append(pick(rng, [a for a, m in zip(acts, means) if m > top - 1e-12]))
        return tuple(out)
