"""The MCTS player's search tree compiled (numba), for two-player games of decisions only whose
rules have compiled parts (:class:`CompiledRules`): the same search as
:meth:`solver.players.mcts.MCTSPlayer.run` (UCB1 with every untried move first in random order,
random playouts capped by ``playout_moves`` and then the game's evaluation, MCTS-Solver proofs,
the most visited move played) without a Python object per node.

The tree is a set of arrays, one row per node; a node's children are consecutive rows, listed the
second time a search reaches the node (in random order, so "the next untried child" is the next
row). Positions are not stored: each iteration copies the root position (a flat ``int64`` array,
the game's own layout) and replays the moves down the tree. Results are player 0's (+1 win, 0
tie, -1 loss, the evaluation in between at a playout's cap), the other player's being their
negative. ``tests/test_compiled_tree.py`` proves the games' compiled parts equal to their
readable rules and the search's proofs equal to the exact tables.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from functools import cache
from typing import Any, Callable

import numpy as np
from numba import njit


@dataclass(frozen=True)
class CompiledRules:
    """What a game gives the compiled tree (see :meth:`solver.core.game.Game.compiled_rules`).

    ``parts`` are the game's compiled functions (``moves, play, mover, ended, final, rollout``,
    as :func:`build_search` takes them; :attr:`search` is the search built from them); ``params``
    their constant arguments (a tuple of arrays and numbers); ``encode(state)`` the position as
    the flat ``int64`` array they read; ``max_branch`` the most moves any position has;
    ``code(state, action)`` and ``action(state, code)`` translate between the game's actions and
    the move codes.
    """

    parts: tuple
    params: tuple
    encode: Callable[[Any], np.ndarray]
    max_branch: int
    code: Callable[[Any, Any], int]
    action: Callable[[Any, int], Any]

    @property
    def search(self) -> Callable[..., Any]:
        """The compiled search on :attr:`parts` (built once per game's parts)."""
        return build_search(*self.parts)


@njit(cache=True, nogil=True)
def or_pass(out, k):
    """The end of a game's ``moves``: with no move listed, the pass (code -1) is the one move."""
    if k == 0:
        out[0] = -1
        return 1
    return k


@cache
def build_search(moves: Any, play: Any, mover: Any, ended: Any, final: Any, rollout: Any) -> Any:
    """The compiled search of one game (:func:`tree_search` with these parts; built once per set
    of functions, compiled at its first call, cached on disk: :mod:`solver.core.jit_build`), from
    its compiled functions (each ``@njit``):

    * ``moves(st, prm, out) -> k``: the legal move codes of the position, in the order of the
      game's ``legal_actions``, into ``out``;
    * ``play(st, prm, code)``: the move, in place;
    * ``mover(st, prm) -> p``: the player to move;
    * ``ended(st, prm) -> bool``: whether the game is over;
    * ``final(st, prm) -> v``: player 0's result of a finished game (+1, 0, -1);
    * ``rollout(st, prm, max_moves, taken, counts) -> v``: random play in place for at most
      ``max_moves`` choices (numba's generator), then player 0's result, or the evaluation
      when the game has not ended.
    """

    from solver.core import jit_build

    parts = dict(moves=moves, play=play, mover=mover, ended=ended, final=final, rollout=rollout)
    return jit_build.build(sys.modules[__name__], ["tree_search"], parts)["tree_search"]


# The template of the search: compiled only through :func:`build_search`, whose module binds the
# free names ``moves``, ``play``, ``mover``, ``ended``, ``final`` and ``rollout`` to one game's parts.

def tree_search(root, prm, root_moves, budget, c, playout_moves, seed, solver, max_branch):  # pragma: no cover
    """``budget`` iterations from ``root`` (whose moves are ``root_moves``); returns the root's
    children: their codes, visits, summed results for the root's mover, and proven results
    for the root's mover (NaN where unproven)."""
    np.random.seed(seed)
    cap = 1 + len(root_moves) + budget * max_branch
    first = np.full(cap, -1, np.int64)
    nkids = np.zeros(cap, np.int64)
    tried = np.zeros(cap, np.int64)
    code = np.zeros(cap, np.int64)
    who = np.zeros(cap, np.int8)
    visits = np.zeros(cap, np.int64)
    wins = np.zeros(cap, np.float64)  # summed results of the player choosing the node's move
    proven = np.zeros(cap, np.bool_)
    exact = np.zeros(cap, np.float64)  # a proven node's result for player 0
    buf = np.empty(max(max_branch, len(root_moves)), np.int64)
    taken = np.empty(playout_moves + 1, np.int64)
    counts = np.empty(playout_moves + 1, np.int64)
    path = np.empty(budget + 2, np.int64)
    st = root.copy()
    who[0] = mover(st, prm)
    used = 1
    for _ in range(budget):
        if proven[0]:
            break
        st[:] = root
        node = 0
        depth = 0
        path[0] = 0
        v = 0.0
        while True:
            if proven[node]:
                v = exact[node]
                break
            if first[node] < 0:  # the second visit: list the moves, in random order
                if node == 0:
                    k = len(root_moves)
                    buf[:k] = root_moves
                else:
                    k = moves(st, prm, buf)
                for i in range(k - 1, 0, -1):
                    j = int(np.random.random() * (i + 1))
                    if j > i:
                        j = i
                    t = buf[i]
                    buf[i] = buf[j]
                    buf[j] = t
                first[node] = used
                nkids[node] = k
                code[used:used + k] = buf[:k]
                used += k
            if tried[node] < nkids[node]:  # an untried move: a new leaf, then a playout
                child = first[node] + tried[node]
                tried[node] += 1
                play(st, prm, code[child])
                who[child] = mover(st, prm)
                depth += 1
                path[depth] = child
                if ended(st, prm):
                    v = final(st, prm)
                    proven[child] = True
                    exact[child] = v
                else:
                    v = rollout(st, prm, playout_moves, taken, counts)
                break
            # UCB1 on the mover's results in [0, 1]; a move proven to lose is not chosen again
            p = who[node]
            log_total = math.log(max(visits[node], 1))
            best = -np.inf
            pick = -1
            ties = 0
            for ch in range(first[node], first[node] + nkids[node]):
                if solver and proven[ch] and (exact[ch] if p == 0 else -exact[ch]) <= -1.0:
                    continue
                score = 0.5 * (wins[ch] / visits[ch] + 1.0) + c * math.sqrt(log_total / visits[ch])
                if score > best + 1e-12:
                    best = score
                    pick = ch
                    ties = 1
                elif score > best - 1e-12:
                    ties += 1
                    if np.random.random() * ties < 1.0:
                        pick = ch
            play(st, prm, code[pick])
            node = pick
            depth += 1
            path[depth] = node
        for d in range(depth + 1):
            nd = path[d]
            visits[nd] += 1
            if d > 0:
                wins[nd] += v if who[path[d - 1]] == 0 else -v
        if not solver:
            continue
        for d in range(depth - 1, -1, -1):  # MCTS-Solver, from the leaf's parent up
            nd = path[d]
            ch = path[d + 1]
            if proven[nd] or not proven[ch]:
                break
            p = who[nd]
            got = exact[ch] if p == 0 else -exact[ch]
            wins[ch] = got * visits[ch]
            if got >= 1.0:
                proven[nd] = True
                exact[nd] = exact[ch]
                continue
            if tried[nd] < nkids[nd]:
                break
            best = -np.inf
            for kid in range(first[nd], first[nd] + nkids[nd]):
                if not proven[kid]:
                    best = np.nan
                    break
                mine = exact[kid] if p == 0 else -exact[kid]
                if mine > best:
                    best = mine
            if np.isnan(best):
                break
            proven[nd] = True
            exact[nd] = best if p == 0 else -best
    a = first[0]
    k = nkids[0]
    if a < 0:  # the root was never expanded (a budget of 0 is refused before)
        return root_moves.copy(), np.zeros(len(root_moves), np.int64), np.zeros(len(root_moves)), \
            np.full(len(root_moves), np.nan)
    p = who[0]
    sign = 1.0 if p == 0 else -1.0
    out_proven = np.full(k, np.nan)
    for i in range(k):
        if proven[a + i]:
            out_proven[i] = sign * exact[a + i]
    return code[a:a + k].copy(), visits[a:a + k].copy(), wins[a:a + k].copy(), out_proven

