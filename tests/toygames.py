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


class DiceRace(Game):
    """Two racers on a track of ``target`` squares. A turn: roll a die with faces 1 and 2
    (chance node), then advance by the roll or stay put (decision). Reaching the target wins.

    State: (pos0, pos1, to_move, roll) with roll 0 = not rolled yet (chance node).
    Staying put forever is possible, so the graph has cycles.
    """

    name = "dicerace"
    params = (Param("target", "int", 2, "squares to the finish", min=1),)
    chance = "in-play"  # a roll before every move

    def initial_state(self) -> tuple[int, int, int, int]:
        return (0, 0, 0, 0)

    def node_kind(self, s) -> NodeKind:
        if max(s[0], s[1]) >= self.variant.target:
            return NodeKind.TERMINAL
        return NodeKind.CHANCE if s[3] == 0 else NodeKind.DECISION

    def to_move(self, s) -> int:
        return s[2]

    def chance_outcomes(self, s):
        from fractions import Fraction

        return [(1, Fraction(1, 2)), (2, Fraction(1, 2))]

    def legal_actions(self, s) -> list[str]:
        return ["advance", "stay"]

    def apply(self, s, action):
        if self.node_kind(s) == NodeKind.CHANCE:
            return (s[0], s[1], s[2], action)
        pos = list(s[:2])
        if action == "advance":
            pos[s[2]] = min(pos[s[2]] + s[3], self.variant.target)
        return (pos[0], pos[1], 1 - s[2], 0)

    def action_name(self, s, action) -> str:
        return f"roll{action}" if self.node_kind(s) == NodeKind.CHANCE else str(action)

    def outcome(self, s) -> Outcome:
        return Outcome.win_for(0 if s[0] >= self.variant.target else 1)

    def encode(self, s) -> int:
        t = self.variant.target + 1
        return ((s[0] * t + s[1]) * 2 + s[2]) * 3 + s[3]

    def decode(self, key: int):
        key, roll = divmod(key, 3)
        key, player = divmod(key, 2)
        p0, p1 = divmod(key, self.variant.target + 1)
        return (p0, p1, player, roll)

    def render(self, s) -> str:
        return f"racers at {s[0]} and {s[1]}, player {s[2] + 1} " + ("to roll" if s[3] == 0 else f"rolled {s[3]}")


def _signs(u: float) -> tuple[Result, Result]:
    return W0 if u > 0 else W1 if u < 0 else TIE


class Stochastic(Game):
    """A game given as an explicit graph with every node kind, for the simultaneous engine.

    ``spec`` maps node -> ``(kind, player, data)``:

    * ``"T"``: ``data`` = the per-player tuple of Results; or a number, player 0's real payoff
      (player 1 gets its negative); or a tuple of numbers, the payoffs as given (for checks);
    * ``"D"``: ``data`` = list of children;
    * ``"C"``: ``data`` = list of ``(child, Fraction)``;
    * ``"S"``: ``data`` = matrix (list of rows) of children: player 0 picks the row, player 1
      the column, secretly and at once.
    """

    name = "stochastic"
    params = ()
    chance = "in-play"  # a spec may put chance and simultaneous nodes anywhere
    secret_choices = True

    def __init__(self, spec: dict[int, tuple[str, int, Any]], start: int = 0) -> None:
        from solver.core.variant import make_variant

        self.spec = spec
        self.start = start
        super().__init__(make_variant("stochastic", (), {}))

    def initial_state(self) -> int:
        return self.start

    def node_kind(self, state: int) -> NodeKind:
        return {"T": NodeKind.TERMINAL, "D": NodeKind.DECISION, "C": NodeKind.CHANCE,
                "S": NodeKind.SIMULTANEOUS}[self.spec[state][0]]

    def to_move(self, state: int) -> int:
        return self.spec[state][1]

    def legal_actions(self, state: int) -> list[int]:
        return list(range(len(self.spec[state][2])))

    def apply(self, state: int, action: int) -> int:
        kind, _, data = self.spec[state]
        return data[action][0] if kind == "C" else data[action]

    def chance_outcomes(self, state: int):
        return [(i, p) for i, (_, p) in enumerate(self.spec[state][2])]

    def player_actions(self, state: int, player: int) -> list[int]:
        matrix = self.spec[state][2]
        return list(range(len(matrix) if player == 0 else len(matrix[0])))

    def apply_joint(self, state: int, actions) -> int:
        i, j = actions
        return self.spec[state][2][i][j]

    def outcome(self, state: int) -> Outcome:
        data = self.spec[state][2]
        if isinstance(data, (int, float)) and not isinstance(data, Result):  # a real payoff for player 0
            return Outcome(_signs(float(data)), payoffs=(float(data), -float(data)))
        if data and not isinstance(data[0], Result):  # payoffs per player, as given
            return Outcome(_signs(float(data[0])), payoffs=tuple(float(x) for x in data))
        return Outcome(tuple(data))

    def encode(self, state: int) -> int:
        return state

    def decode(self, key: int) -> int:
        return key

    def render(self, state: int) -> str:
        return f"node {state}"
