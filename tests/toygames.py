"""Tiny games with hand-known answers, for testing the engines independently of real games."""

from __future__ import annotations

from typing import Any

from solver.core.game import Game, NodeKind, Outcome, Result
from solver.core.variant import Param


class Subtraction(Game):
    """A pile of ``n`` counters; take 1 or 2; whoever takes the last counter wins.

    Known answer: the side to move loses exactly when ``n % 3 == 0``; a win takes the fastest
    route (remoteness = plies to the end), a loss the slowest.
    """

    name = "subtraction"
    params = (Param("n", "int", 7, "counters", min=0),)
    state_type = tuple

    def initial_state(self) -> tuple[int, int]:
        return (self.variant.n, 0)

    def node_kind(self, state: tuple[int, int]) -> NodeKind:
        return NodeKind.TERMINAL if state[0] == 0 else NodeKind.DECISION

    def to_move(self, state: tuple[int, int]) -> int:
        return state[1]

    def legal_actions(self, state: tuple[int, int]) -> list[int]:
        return [t for t in (1, 2) if t <= state[0]]

    def apply(self, state: tuple[int, int], action: int) -> tuple[int, int]:
        return (state[0] - action, 1 - state[1])

    def outcome(self, state: tuple[int, int]) -> Outcome:
        # the player who just moved took the last counter
        return Outcome.win_for(1 - state[1])

    def encode(self, state: tuple[int, int]) -> int:
        return state[0] * 2 + state[1]

    def decode(self, key: int) -> tuple[int, int]:
        return (key // 2, key % 2)

    def render(self, state: tuple[int, int]) -> str:
        return f"{state[0]} counters, player {state[1] + 1} to move"


class Explicit(Game):
    """A game given as an explicit graph: ``spec`` maps node -> (player, children, result).

    ``result`` is None for decision nodes and a per-player tuple of Results (optionally scores)
    for terminals. Used to hand-build cycles, same-player moves, ties and draws.
    """

    name = "explicit"
    params = ()

    def __init__(self, spec: dict[int, tuple[int, list[int], Any]], start: int = 0, scored: bool = False) -> None:
        from solver.core.variant import make_variant

        self.spec = spec
        self.start = start
        self.scored = scored
        super().__init__(make_variant("explicit", (), {}))

    def initial_state(self) -> int:
        return self.start

    def node_kind(self, state: int) -> NodeKind:
        return NodeKind.TERMINAL if self.spec[state][2] is not None else NodeKind.DECISION

    def to_move(self, state: int) -> int:
        return self.spec[state][0]

    def legal_actions(self, state: int) -> list[int]:
        return list(range(len(self.spec[state][1])))

    def apply(self, state: int, action: int) -> int:
        return self.spec[state][1][action]

    def outcome(self, state: int) -> Outcome:
        res = self.spec[state][2]
        if isinstance(res, Outcome):
            return res
        return Outcome(tuple(res))

    def encode(self, state: int) -> int:
        return state

    def decode(self, key: int) -> int:
        return key

    def render(self, state: int) -> str:
        return f"node {state}"


W0 = (Result.WIN, Result.LOSS)  # player 0 wins
W1 = (Result.LOSS, Result.WIN)  # player 1 wins
TIE = (Result.TIE, Result.TIE)
