"""Alpha-beta: negamax with a transposition table, iterative deepening and move ordering.

Solves single positions (or variants too large to enumerate) from the readable per-state rules,
independently of enumeration and retrograde analysis, so the two engines can check each other.

Scores are from the side to move: a win in ``r`` plies is ``BIG - r``, a loss in ``r`` plies is
``-(BIG - r)``, and everything else (tie, draw, not decided within the depth limit) is 0. A
nonzero score found at any depth is exact, remoteness included (the winner's fastest forced win
fits in the horizon and every longer defence would have scored 0 instead). Iterative deepening
stops at the first nonzero score or at ``max_depth``; a position still at 0 is then a **tie**
when a tie can be reached through positions neither side can win (searched breadth first,
remoteness = the shortest such path), else a **draw** (as far as ``max_depth`` can tell).

Moves after which the same player moves again keep the child's score; other moves negate it.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from solver.core.game import Game, NodeKind, Result
from solver.core.values import DRAW, LOSE, TIE, WIN

BIG = 1 << 20
_EXACT, _LOWER, _UPPER = 0, 1, 2


def _shift(score: int) -> int:
    """A child's score seen one ply further up (a win in r becomes a win in r + 1)."""
    if score > 0:
        return score - 1
    if score < 0:
        return score + 1
    return 0


def _unshift(score: int) -> int:
    if score > 0:
        return score + 1
    if score < 0:
        return score - 1
    return 0


class AlphaBeta:
    """Negamax alpha-beta search over a :class:`Game`.

    Parameters
    ----------
    game : Game
        A two-sided game with decision and terminal nodes.
    symmetry : bool
        Share transposition-table entries between symmetric positions.
    """

    def __init__(self, game: Game, *, symmetry: bool = True) -> None:
        self.game = game
        self.symmetry = symmetry
        # key -> (depth, score, flag); proven (nonzero exact) scores are stored with depth BIG
        self.table: dict[int, tuple[int, int, int]] = {}
        self.nodes = 0
        self._children: dict[int, list[tuple[int, bool, Any]]] = {}
        self._terminal: dict[int, int | None] = {}

    # --- position bookkeeping ---------------------------------------------------------
    def _key(self, state: Any) -> int:
        g = self.game
        return g.encode(g.canonical(state) if self.symmetry else state)

    def _expand(self, key: int, state: Any) -> list[tuple[int, bool, Any]]:
        """Children as ``(key, same_player, state)``, cached per key."""
        kids = self._children.get(key)
        if kids is None:
            g = self.game
            mover = g.to_move(state)
            kids = []
            for action in g.legal_actions(state):
                child = g.apply(state, action)
                kids.append((self._key(child), g.to_move(child) == mover, child))
            if not kids:  # would silently score as a draw
                from solver.engines.graph import dead_end_message
                from solver.errors import ProtocolError

                raise ProtocolError(dead_end_message(key, NodeKind.DECISION))
            self._children[key] = kids
        return kids

    def _terminal_score(self, key: int, state: Any) -> int | None:
        """Score of a terminal position (None if not terminal): win/loss at 0 plies, tie 0."""
        if key not in self._terminal:
            g = self.game
            kind = g.node_kind(state)
            if kind == NodeKind.TERMINAL:
                res = g.outcome(state).results[g.to_move(state)]
                self._terminal[key] = BIG if res == Result.WIN else (-BIG if res == Result.LOSS else 0)
            elif kind == NodeKind.DECISION:
                self._terminal[key] = None
            else:
                raise ValueError("alpha-beta handles decision and terminal nodes only")
        return self._terminal[key]

    # --- search -----------------------------------------------------------------------
    def negamax(self, state: Any, depth: int, alpha: int = -BIG - 1, beta: int = BIG + 1) -> int:
        """Depth-limited negamax score of ``state`` (see module docstring)."""
        key = self._key(state)
        return self._negamax(key, state, depth, alpha, beta)

    def _negamax(self, key: int, state: Any, depth: int, alpha: int, beta: int) -> int:
        self.nodes += 1
        term = self._terminal_score(key, state)
        if term is not None:
            return term
        if depth == 0:
            return 0
        entry = self.table.get(key)
        if entry is not None:
            e_depth, e_score, e_flag = entry
            if e_flag == _EXACT and e_score != 0:
                # proven: V_d is the true score when its remoteness fits in d, else 0
                return e_score if BIG - abs(e_score) <= depth else 0
            if e_flag == _EXACT and e_depth >= depth:
                return 0  # not provable within e_depth plies, so not within fewer
            if e_depth == depth:
                if e_flag == _LOWER and e_score >= beta:
                    return e_score
                if e_flag == _UPPER and e_score <= alpha:
                    return e_score
        alpha0 = alpha
        kids = self._expand(key, state)
        # move ordering: children with proven good scores for us first
        kids = sorted(kids, key=lambda k: -self._guess(k[0], k[1]))
        best = -BIG - 1
        for ckey, same, child in kids:
            if same:
                s = _shift(self._negamax(ckey, child, depth - 1, _unshift(alpha), _unshift(beta)))
            else:
                s = _shift(-self._negamax(ckey, child, depth - 1, -_unshift(beta), -_unshift(alpha)))
            if s > best:
                best = s
            if best > alpha:
                alpha = best
            if alpha >= beta:
                break
        if best <= alpha0:
            flag = _UPPER
        elif best >= beta:
            flag = _LOWER
        else:
            flag = _EXACT
        old = self.table.get(key)
        if old is None or not (old[2] == _EXACT and old[1] != 0):
            if old is None or old[0] <= depth or (flag == _EXACT and best != 0):
                self.table[key] = (depth, best, flag)
        return best

    def _guess(self, ckey: int, same: bool) -> int:
        entry = self.table.get(ckey)
        if entry is None or entry[2] != _EXACT:
            return 0
        return entry[1] if same else -entry[1]

    def search(self, state: Any, *, max_depth: int = 64) -> tuple[int, int | None]:
        """Value code (solver.core.values) and remoteness of ``state`` by iterative deepening.

        Returns ``(WIN, r)``/``(LOSE, r)`` as soon as a depth proves it, else ``(TIE, r)`` when a
        tie is reachable through positions neither side can win within ``max_depth``, else
        ``(DRAW, None)``.
        """
        key = self._key(state)
        term = self._terminal_score(key, state)
        if term is not None:
            return (WIN, 0) if term > 0 else (LOSE, 0) if term < 0 else (TIE, 0)
        for depth in range(1, max_depth + 1):
            score = self._negamax(key, state, depth, -BIG - 1, BIG + 1)
            if score > 0:
                return WIN, BIG - score
            if score < 0:
                return LOSE, BIG + score
        tie = self._tie_distance(key, state, max_depth)
        return (TIE, tie) if tie is not None else (DRAW, None)

    def _no_win(self, key: int, state: Any, max_depth: int) -> bool:
        """Neither side can force a win from here within ``max_depth`` plies."""
        term = self._terminal_score(key, state)
        if term is not None:
            return term == 0
        entry = self.table.get(key)
        if entry is not None and entry[1] != 0 and entry[2] == _EXACT:
            return False
        return self._negamax(key, state, max_depth, -BIG - 1, BIG + 1) == 0

    def _tie_distance(self, key: int, state: Any, max_depth: int) -> int | None:
        """Fewest plies to a tied end through positions neither side can win, or None."""
        seen = {key}
        queue: deque[tuple[int, Any, int]] = deque([(key, state, 0)])
        while queue:
            k, s, dist = queue.popleft()
            term = self._terminal_score(k, s)
            if term is not None:
                if term == 0:
                    return dist
                continue
            for ckey, _same, child in self._expand(k, s):
                if ckey in seen:
                    continue
                seen.add(ckey)
                if self._no_win(ckey, child, max_depth):
                    queue.append((ckey, child, dist + 1))
        return None

    # --- margin objective ---------------------------------------------------------------
    def margin(self, state: Any) -> int:
        """Optimal final score margin from the side to move (acyclic scored games).

        Plain negamax with memo on the margin: each side maximises its own margin. (No
        pruning: with a memo every position is visited once anyway, and unpruned values are
        exact, so they can be shared between calls.)
        """
        memo: dict[int, int] = {}
        g = self.game

        def rec(st: Any) -> int:
            k = self._key(st)
            if k in memo:
                return memo[k]
            if g.node_kind(st) == NodeKind.TERMINAL:
                memo[k] = int(g.outcome(st).margin(g.to_move(st)))
                return memo[k]
            best = max(
                rec(child) if same else -rec(child) for _ckey, same, child in self._expand(k, st)
            )
            memo[k] = best
            return best

        return rec(state)
