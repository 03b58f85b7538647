"""The alpha-beta player: depth-limited search with an evaluation at the horizon.

Minimax with alpha-beta pruning (the negamax of two players written as max/min from the root
player's point of view, so moves after which the same player moves again need no special case),
iterative deepening to ``depth`` plies or until ``time_limit`` seconds, a transposition table
and move ordering (the previous iteration's scores at the root, the table's best move below).

* A finished game scores ``WIN - plies`` for a win (faster is better), ``-(WIN - plies)`` for a
  loss (slower is better), 0 for a tie. Unfinished positions at the horizon score the game's
  evaluation (:mod:`solver.players.evals`), in [-1, 1], so any forced result outweighs it.
* Chance nodes are averaged with their probabilities (expectimax; they do not use up depth).
  In a game with dice in play a finished game scores on the evaluation's scale instead (a win
  ``1 + DICE_WIN * (WIN - plies) / WIN``, just above any evaluation; a loss its negative), so
  that an average weighs a win by its chance, as an expected result does (``WIN - plies`` made a
  1-in-36 chance of winning outweigh any evaluation); such scores are never "proven".
* A secret simultaneous choice inside the search is a horizon (scored by the evaluation): the
  search cannot look through it. Asked to *make* such a choice, the player refuses with a
  one-line :class:`VariantError` (use MCTS or random there).
* With 3-4 players the search is "paranoid": the root player maximises, every other seat
  minimises the root player's score (the reduction the exact solver uses too).

Equal best moves at the root are broken at random with the game's generator (they are searched
with a window just below the best score, so their scores are exact ties, not bounds). With a
time limit the result depends on the machine's speed; with ``depth`` alone it is reproducible.
The table keeps a score for a search of the same depth only (a deeper one orders the moves), so
the scores are those of plain depth-limited minimax.

Where the game gives compiled rules (two players, decisions only: Override, Greener, Blam!; see
:meth:`solver.core.game.Game.compiled_rules`), the whole search runs compiled
(:mod:`solver.core.ab_jit`: the same scores; its table holds hashes of the positions, and the
moves at a node are ordered by the history of cut-offs too); ``engine="python"`` keeps the
readable search, as does a search asked about a list of moves other than the position's own.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from solver.core.ab_jit import EXACT, LOWER, UPPER, PROVEN, WIN, build_search, kept_table, table_size
from solver.core.game import Game, NodeKind
from solver.errors import VariantError
from solver.players.base import (Action, Player, chance_list, check_decision, float_option, game_title, int_option,
                                 pick)
from solver.players.evals import evaluation_for

_TIE_WINDOW = 1e-9
#: with dice in play a win in ``r`` plies scores ``1 + DICE_WIN * (WIN - r) / WIN``
DICE_WIN = 1e-3


class _Timeout(Exception):
    pass


@dataclass
class SearchResult:
    """What a root search found: the best score (root player's view), every root move's score
    from the deepest finished iteration, the best moves (equal scores), the depth finished and
    the positions visited."""

    score: float
    scores: dict[int, float]
    best: list[int]
    depth: int
    nodes: int

    def proven(self) -> str | None:
        """``"win"``/``"lose"`` when the score is a forced result within the depth, else ``None``."""
        if self.score > PROVEN:
            return "win"
        if self.score < -PROVEN:
            return "lose"
        return None


@dataclass(repr=False)
class AlphaBetaPlayer(Player):
    """Alpha-beta search to ``depth`` plies (default 3), or within ``time_limit`` seconds.

    Parameters
    ----------
    depth : int
        Plies searched (at least 1); iterative deepening goes 1, 2, ..., ``depth``.
    time_limit : float, optional
        Seconds per move: deepening stops when they run out (the deepest finished iteration
        decides; depth 1 always finishes). ``None``: no limit.
    engine : str
        ``"compiled"`` (default): the compiled search where the game gives compiled rules;
        ``"python"``: the readable search always.
    """

    name = "alphabeta"
    depth: int = 3
    time_limit: float | None = None
    engine: str = "compiled"
    _evaluate: Any = field(default=None, compare=False)

    def __post_init__(self) -> None:
        self.depth = int_option(self.name, "depth", self.depth, minimum=1, example=3, what="plies searched")
        if self.time_limit is not None:
            self.time_limit = float_option(self.name, "time_limit", self.time_limit, minimum=0.0, example=1.0,
                                           what="seconds per move", strict=True)
        shape = str(self.engine).strip().lower()
        if shape not in ("compiled", "python"):
            raise VariantError(f"alphabeta: engine must be 'compiled' (where the game has compiled rules) or "
                               f"'python', not {self.engine!r} (e.g. engine=python)")
        self.engine = shape

    def options(self) -> dict[str, Any]:
        out: dict[str, Any] = {"depth": self.depth, "time_limit": self.time_limit}
        if self.engine != "compiled":
            out["engine"] = self.engine
        return out

    def choose(self, game: Game, state: Any, rng: np.random.Generator) -> Action:
        if game.node_kind(state) == NodeKind.SIMULTANEOUS:
            raise VariantError(f"alphabeta cannot play {game_title(game)}'s secret simultaneous choices; "
                               "use --player mcts or random")
        check_decision(game, state, self.name)
        actions = game.legal_actions(state)
        if len(actions) == 1:
            return actions[0]
        result = self._search(game, state, actions, self.depth, own=True)
        return actions[pick(rng, result.best)]

    def choose_joint(self, game: Game, state: Any, rng: np.random.Generator) -> tuple[Action, ...]:
        raise VariantError(f"alphabeta cannot play {game_title(game)}'s secret simultaneous choices; "
                           "use --player mcts or random")

    # --- the search ---------------------------------------------------------------------
    def _compiled_rules(self, game: Game) -> Any:
        """The game's compiled rules when the search runs compiled: ``engine`` compiled, the
        game's own evaluation, two players, and rules given."""
        if self.engine != "compiled" or self._evaluate is not None or game.num_players != 2:
            return None
        return game.compiled_rules()

    def search(self, game: Game, state: Any, *, actions: list[Action] | None = None,
               depth: int | None = None) -> SearchResult:
        """Search the decision node ``state`` (see the module docstring); the scores are from the
        point of view of the player to move there."""
        check_decision(game, state, self.name)
        legal = game.legal_actions(state)
        own = actions is None or list(actions) == legal
        return self._search(game, state, legal if actions is None else actions,
                            self.depth if depth is None else depth, own=own)

    def _search(self, game: Game, state: Any, actions: list[Action], depth: int, *, own: bool) -> SearchResult:
        """:meth:`search` of ``actions`` (``own``: the position's own moves, in their order)."""
        deadline = None if self.time_limit is None else time.perf_counter() + self.time_limit
        rules = self._compiled_rules(game) if own else None
        if rules is not None:
            return _compiled_search(rules, state, len(actions), depth, deadline, int(game.to_move(state)))
        s = _Search(game, game.to_move(state), self._evaluate or evaluation_for(game), deadline)
        children = [game.apply(state, a) for a in actions]
        order = list(range(len(actions)))
        scores: dict[int, float] = {}
        finished = 0
        for d in range(1, depth + 1):
            s.check_time = d > 1
            try:
                now: dict[int, float] = {}
                best = -math.inf
                for i in order:
                    alpha = best - _TIE_WINDOW if best > -math.inf else -math.inf
                    v = s.value(children[i], d - 1, alpha, math.inf, 1)
                    now[i] = v
                    if v > best:
                        best = v
            except _Timeout:
                break
            scores, finished = now, d
            order.sort(key=lambda i: -scores[i])
            if best > PROVEN or all(v < -PROVEN for v in scores.values()):
                break  # a forced win found (fastest), or every move loses: deeper changes nothing
        top = max(scores.values())
        best_moves = [i for i in range(len(actions)) if scores.get(i, -math.inf) >= top - _TIE_WINDOW]
        return SearchResult(top, scores, best_moves, finished, s.nodes)


def _compiled_search(rules: Any, state: Any, count: int, depth: int, deadline: float | None,
                     me: int) -> SearchResult:
    """:meth:`AlphaBetaPlayer.search` run compiled (:mod:`solver.core.ab_jit`): the whole
    iterative deepening in one call, with the table this thread's searches of the same rules and
    root player (``me``) filled (:func:`solver.core.ab_jit.kept_table`: the same best moves and
    scores; four self-play games of Override 5x5 at 4 plies, three to the 500-move cap where
    pyramids move back and forth, searched 7.2M positions instead of 20.4M)."""
    codes, scores, finished, nodes = build_search(*rules.parts)(
        rules.encode(state), rules.params, depth, rules.max_branch, math.inf if deadline is None else deadline,
        *kept_table(rules, me, table_size(depth)))
    if len(codes) != count:  # the compiled moves are proven equal to the rules' (test_compiled_tree)
        raise AssertionError(f"compiled rules list {len(codes)} moves where the rules list {count}")
    by_move = {i: float(v) for i, v in enumerate(scores)}
    top = max(by_move.values())
    best = [i for i in range(count) if by_move[i] >= top - _TIE_WINDOW]
    return SearchResult(top, by_move, best, int(finished), int(nodes))


class _Search:
    """One root search: the transposition table and counters live here."""

    def __init__(self, game: Game, me: int, evaluate: Any, deadline: float | None) -> None:
        self.game = game
        self.me = me
        #: dice in play: a win scores on the evaluation's scale (see :meth:`value`)
        self.dice = game.chance == "in-play"
        self.evaluate = evaluate
        self.deadline = deadline
        self.check_time = False
        self.nodes = 0
        #: state -> (depth, score relative to the node, flag, index of the best action)
        self.table: dict[Any, tuple[int, float, int, int]] = {}

    def horizon(self, state: Any) -> float:
        v = float(self.evaluate(self.game, state, self.me))
        return -1.0 if v < -1.0 else 1.0 if v > 1.0 else v

    def value(self, state: Any, depth: int, alpha: float, beta: float, ply: int) -> float:
        """The score of ``state`` for the root player, searched ``depth`` more decision plies."""
        self.nodes += 1
        if self.check_time and self.deadline is not None and (self.nodes & 255) == 0 \
                and time.perf_counter() > self.deadline:
            raise _Timeout
        g = self.game
        kind = g.node_kind(state)
        if kind == NodeKind.TERMINAL:
            r = int(g.outcome(state).results[self.me])
            if r and self.dice:  # a win just above any evaluation, faster a little higher: a dice
                # average then weighs a win by its chance as an expected result (with WIN - ply a
                # 1-in-36 chance of winning outweighed every evaluation)
                return (1.0 + DICE_WIN * (WIN - ply) / WIN) * r
            return 0.0 if r == 0 else (WIN - ply) * r
        if depth <= 0 or kind == NodeKind.SIMULTANEOUS:
            return self.horizon(state)
        if kind == NodeKind.CHANCE:
            outs = chance_list(g, state)
            if outs is None:
                return self.horizon(state)
            total = 0.0
            for a, p in outs:
                total += p * self.value(g.apply(state, a), depth, -math.inf, math.inf, ply)
            return total
        # decision node: the table first
        entry = self.table.get(state)
        first = -1
        if entry is not None:
            e_depth, e_score, e_flag, first = entry
            if e_depth == depth:  # a deeper score would differ from this depth's minimax
                score = _from_table(e_score, ply)
                if e_flag == EXACT:
                    return score
                if e_flag == LOWER and score >= beta:
                    return score
                if e_flag == UPPER and score <= alpha:
                    return score
        actions = g.legal_actions(state)
        order = list(range(len(actions)))
        if 0 <= first < len(actions):
            order.remove(first)
            order.insert(0, first)
        maximise = g.to_move(state) == self.me
        a0, b0 = alpha, beta
        best_i = order[0]
        if maximise:
            best = -math.inf
            for i in order:
                v = self.value(g.apply(state, actions[i]), depth - 1, alpha, beta, ply + 1)
                if v > best:
                    best, best_i = v, i
                if best > alpha:
                    alpha = best
                if alpha >= beta:
                    break
        else:
            best = math.inf
            for i in order:
                v = self.value(g.apply(state, actions[i]), depth - 1, alpha, beta, ply + 1)
                if v < best:
                    best, best_i = v, i
                if best < beta:
                    beta = best
                if alpha >= beta:
                    break
        flag = UPPER if best <= a0 else LOWER if best >= b0 else EXACT
        if len(self.table) > 2_000_000:
            self.table.clear()
        self.table[state] = (depth, _to_table(best, ply), flag, best_i)
        return best


def _to_table(score: float, ply: int) -> float:
    """A root-relative forced result made relative to the node (``ply`` plies below the root)."""
    if score > PROVEN:
        return score + ply
    if score < -PROVEN:
        return score - ply
    return score


def _from_table(score: float, ply: int) -> float:
    if score > PROVEN:
        return score - ply
    if score < -PROVEN:
        return score + ply
    return score
