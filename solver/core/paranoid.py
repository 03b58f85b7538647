"""The "paranoid" reduction of a game for 3+ players to a two-sided game, per seat.

``Paranoid(base, seat)`` asks: can ``seat`` force a win (a :class:`Result.WIN` in the base
game: for Blam! the strictly highest score after the tiebreak) against **all the other seats
acting together**? The wrapper is itself a :class:`Game` with two players:

* player 0 = ``seat``, player 1 = the coalition of every other seat;
* same states, same keys, same actions, same symmetries as the base game, so tables of the
  wrapper are keyed exactly like the base game's;
* ``to_move`` is 0 when the base's mover is ``seat``, else 1 (the coalition often moves several
  times in a row: the engines handle same-player consecutive moves);
* at the end, the seat wins iff its base result is a WIN; anything else (a loss, or a shared top
  score) is a win for the coalition. In scored games the scores are
  ``(seat's score, best score among the others)``, so the margin is the seat's lead over the best
  other seat.

Nothing here is specific to one game; chance nodes pass through unchanged, and a simultaneous
node becomes one between the seat's actions and the coalition's joint actions.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Hashable, Sequence

import numpy as np

from solver.core.game import Expansion, Game, NodeKind, Outcome, Result
from solver.errors import VariantError


class Paranoid(Game):
    """``base`` seen as a two-player game: ``seat`` (player 0) against everyone else (player 1).

    Parameters
    ----------
    base : Game
        Any game (usually with 3 or more players).
    seat : int
        The base-game player whose winning chances are asked about (0-based).
    """

    def __init__(self, base: Game, seat: int) -> None:
        if not isinstance(seat, int) or not 0 <= seat < base.num_players:
            raise VariantError(
                f"seat must be one of 0..{base.num_players - 1} for {base.variant.label()}, got {seat!r}"
            )
        # instance attributes shadow the class-level protocol attributes (set before the base
        # constructor, which checks that the variant belongs to this game's name)
        self.name = base.name  # type: ignore[misc]
        self.title = f"{base.title} (paranoid: seat {seat} against the rest)"  # type: ignore[misc]
        self.params = base.params  # type: ignore[misc]
        self.presets = base.presets  # type: ignore[misc]
        self.rules_version = base.rules_version  # type: ignore[misc]
        self.scored = base.scored  # type: ignore[misc]
        super().__init__(base.variant)
        self.base = base
        self.seat = seat
        self.num_players = 2
        self.warnings = list(base.warnings)

    def check_variant(self, variant: Any) -> None:
        """The base game has checked its variant already."""

    # --- the protocol -----------------------------------------------------------------
    def _side(self, base_player: int) -> int:
        return 0 if base_player == self.seat else 1

    def initial_state(self) -> Hashable:
        return self.base.initial_state()

    def node_kind(self, state: Hashable) -> NodeKind:
        return self.base.node_kind(state)

    def to_move(self, state: Hashable) -> int:
        return self._side(self.base.to_move(state))

    def legal_actions(self, state: Hashable) -> list:
        return self.base.legal_actions(state)

    def apply(self, state: Hashable, action: Any) -> Hashable:
        return self.base.apply(state, action)

    def chance_outcomes(self, state: Hashable) -> list[tuple[Any, Fraction]]:
        return self.base.chance_outcomes(state)

    def player_actions(self, state: Hashable, player: int) -> list:
        """Player 0: the seat's actions; player 1: the other seats' joint actions (tuples)."""
        if player == 0:
            return self.base.player_actions(state, self.seat)
        out: list[tuple] = [()]
        for p in range(self.base.num_players):
            if p != self.seat:
                out = [prefix + (a,) for prefix in out for a in self.base.player_actions(state, p)]
        return out

    def apply_joint(self, state: Hashable, actions: Sequence[Any]) -> Hashable:
        mine, theirs = actions
        joint = []
        others = iter(theirs)
        for p in range(self.base.num_players):
            joint.append(mine if p == self.seat else next(others))
        return self.base.apply_joint(state, joint)

    def outcome(self, state: Hashable) -> Outcome:
        out = self.base.outcome(state)
        won = out.results[self.seat] == Result.WIN
        results = (Result.WIN, Result.LOSS) if won else (Result.LOSS, Result.WIN)
        scores = None
        if out.scores is not None:
            others = [s for p, s in enumerate(out.scores) if p != self.seat]
            scores = (out.scores[self.seat], max(others))
        return Outcome(results, scores)

    def encode(self, state: Hashable) -> int:
        return self.base.encode(state)

    def decode(self, key: int) -> Hashable:
        return self.base.decode(key)

    def symmetries(self, state: Hashable) -> list:
        return self.base.symmetries(state)

    def canonical(self, state: Hashable) -> Hashable:
        return self.base.canonical(state)

    def render(self, state: Hashable) -> str:
        return self.base.render(state)

    def describe_state(self, state: Hashable) -> str:
        return self.base.describe_state(state)

    def action_name(self, state: Hashable, action: Any) -> str:
        return self.base.action_name(state, action)

    def parse_action(self, state: Hashable, text: str) -> Any:
        return self.base.parse_action(state, text)

    # --- the batch path ---------------------------------------------------------------
    def expand(self, keys: np.ndarray, *, canonical: bool = False) -> Expansion:
        """The base game's (possibly vectorised) expansion with sides and results remapped.

        Equal to ``Game.expand`` on the wrapper (tested); simultaneous nodes, whose joint
        actions are grouped differently here, use that default.
        """
        exp = self.base.expand(keys, canonical=canonical)
        if (exp.kind == NodeKind.SIMULTANEOUS).any():
            return super().expand(keys, canonical=canonical)
        to_move = np.where(exp.to_move == self.seat, 0, 1).astype(np.int8)
        result = np.zeros(len(keys), dtype=np.int8)
        margin = np.zeros(len(keys), dtype=np.int32)
        for i in np.flatnonzero(exp.kind == NodeKind.TERMINAL).tolist():
            out = self.outcome(self.decode(int(keys[i])))
            player = int(to_move[i])
            result[i] = int(out.results[player])
            m = out.margin(player)
            margin[i] = 0 if m is None else m
        return Expansion(
            kind=exp.kind,
            to_move=to_move,
            offsets=exp.offsets,
            children=exp.children,
            probs=exp.probs,
            result=result,
            margin=margin,
        )

    def __repr__(self) -> str:
        return f"Paranoid({self.base.variant.label()}, seat={self.seat})"
