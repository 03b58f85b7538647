"""The alpha-beta player's search compiled (numba), for two-player games of decisions only whose
rules have compiled parts (:class:`solver.core.uct_jit.CompiledRules`, the same parts MCTS's
compiled tree runs on).

:func:`build_search` gives ``search(root, prm, depth, max_branch, deadline, *table)``: the same
iterative deepening as :meth:`solver.players.alphabeta.AlphaBetaPlayer.search` at the root (each
depth's moves in the order of the depth before, later moves searched with a window just below
the best score), scoring each position as :meth:`solver.players.alphabeta._Search.value` does
(a win in ``r`` plies from the root ``WIN - r``, a loss its negative, a tie 0, the game's
evaluation in [-1, 1] at the horizon; the moves in ``legal_actions`` order, the table's best
move first). The transposition table is an array table of the positions' two 64-bit hashes
(:func:`new_table`), a slot per position and depth left; a score is used for a search of the same
depth only, so the scores are those of plain depth-limited minimax, as the readable search's are,
and the player keeps a thread's table from one search to the next of the same game and root
player (:func:`kept_table`: a position met again is not searched again). The recursion is a loop
over an explicit stack: one row of positions, moves and window per ply. ``deadline``
(``time.perf_counter()`` seconds, ``inf`` for none) is checked every 4,096 positions from the
second depth on; past it the search stops and the deepest finished depth decides.
``tests/test_compiled_alphabeta.py`` checks the scores against plain minimax through the readable
rules and against the readable player.
"""

from __future__ import annotations

import math
import sys
import threading
import time
from functools import cache
from typing import Any

import numpy as np
from numba import njit, objmode

#: score of a win at the root (a win in ``r`` plies scores ``WIN - r``; the readable search's too)
WIN = 1000.0
#: scores beyond this are forced results, not evaluations
PROVEN = WIN / 2
#: the most transposition table entries (a power of two; 33 bytes an entry; the player's are kept
#: per thread, size and root player, :func:`kept_table`); a shallow search gets a smaller one
#: (:func:`table_size`)
TABLE_SIZE = 1 << 20
#: the flags of a table's score: exact, a lower bound, an upper bound
EXACT, LOWER, UPPER = 0, 1, 2
#: move codes share this many counters of the history heuristic (cut-offs by a move, weighted by
#: the depth left squared), which orders the moves at a node before the table's best move
HISTORY_MASK = (1 << 12) - 1


def table_size(depth: int) -> int:
    """Entries of the table for a search ``depth`` plies deep: 2**14 at 2 plies, 8 times more a
    ply, at most :data:`TABLE_SIZE`."""
    return min(TABLE_SIZE, 1 << (8 + 3 * max(1, depth)))


def new_table(size: int = TABLE_SIZE) -> tuple:
    """An empty transposition table: two 64-bit hashes of the position (both must match), the
    depth searched (-1: empty), the score (relative to the node for forced results), the bound
    flag and the best move's index."""
    return (np.zeros(size, np.uint64), np.zeros(size, np.uint64), np.full(size, -1, np.int32),
            np.zeros(size, np.float64), np.zeros(size, np.int8), np.full(size, -1, np.int32))


_tables = threading.local()


def kept_table(owner: Any, me: int, size: int) -> tuple:
    """The thread's table of ``size`` entries for the searches of ``owner`` (a game's compiled
    rules) whose root player is ``me``, kept from one search to the next: its entries are the
    depth-limited minimax scores (or bounds) of positions, from ``me``'s point of view, and do not
    depend on the root, so a later search of the same rules and root player may read them (a
    position met again, as when pieces move back and forth, is not searched again). The root's
    best moves and their scores are the same as with an empty table; a worse move's score is a
    bound either way. Emptied when the thread searches another game's rules (positions of two
    variants may share an encoding), never merely because a search starts."""
    held = getattr(_tables, "kept", None)
    if held is None:
        held = _tables.kept = {}
    got = held.get((size, me))
    if got is not None and got[0] is owner:
        return got[1]
    if got is None:
        table = new_table(size)
    else:  # another game's rules: its scores mean nothing here
        table = got[1]
        table[2].fill(-1)
    held[(size, me)] = (owner, table)
    return table


@njit(cache=True, nogil=True)
def _hashes(st):  # pragma: no cover - compiled
    """Two independent 64-bit hashes of a position (FNV-1a-like over its int64 entries, mixed)."""
    h1 = np.uint64(1469598103934665603)
    h2 = np.uint64(7809847782465536322)
    for x in st:
        u = np.uint64(x & 0xFFFFFFFF) ^ (np.uint64((x >> 32) & 0xFFFFFFFF) << np.uint64(32))
        h1 = (h1 ^ u) * np.uint64(1099511628211)
        h1 ^= h1 >> np.uint64(29)
        h2 = (h2 + u) * np.uint64(0x9E3779B97F4A7C15)
        h2 ^= h2 >> np.uint64(31)
    return h1, h2


@njit(cache=True, nogil=True)
def _slot(h1, rem, mask):  # pragma: no cover - compiled
    """The table's slot of a position (its first hash) searched ``rem`` plies deep: one slot per
    position and depth, so the scores of a shallower search of a position (iterative deepening's,
    a search before) stay beside the deeper one's."""
    return np.int64((h1 + np.uint64(rem) * np.uint64(0x9E3779B97F4A7C15)) & mask)


@njit(cache=True, nogil=True)
def _to_table(score, ply):  # pragma: no cover - compiled
    if score > PROVEN:
        return score + ply
    if score < -PROVEN:
        return score - ply
    return score


@njit(cache=True, nogil=True)
def _from_table(score, ply):  # pragma: no cover - compiled
    if score > PROVEN:
        return score - ply
    if score < -PROVEN:
        return score + ply
    return score


@njit(cache=True)
def _now() -> float:  # pragma: no cover - compiled
    with objmode(t="float64"):
        t = time.perf_counter()
    return t


@cache
def build_search(moves: Any, play: Any, mover: Any, ended: Any, final: Any, rollout: Any) -> Any:
    """The compiled search of one game (:func:`ab_search` with these parts; see
    :func:`solver.core.uct_jit.build_search` for what each part does, ``rollout`` with no move
    to play giving the evaluation). Built once per set of parts, compiled at its first call,
    cached on disk (:mod:`solver.core.jit_build`)."""
    from solver.core import jit_build

    parts = dict(moves=moves, play=play, mover=mover, ended=ended, final=final, rollout=rollout)
    return jit_build.build(sys.modules[__name__], ["ab_value", "ab_search"], parts)["ab_search"]


# The template of the search: compiled only through :func:`build_search`, whose module binds the
# free names ``moves``, ``play``, ``mover``, ``ended``, ``final`` and ``rollout`` to one game's parts.


def ab_value(st0, prm, me, depth, alpha0, beta0, ply0, max_branch, deadline,
             t1, t2, tdepth, tscore, tflag, tbest, hist):  # pragma: no cover
    """The score of ``st0`` searched ``depth`` more plies in the window; returns ``(score,
    positions visited, stopped at the deadline)``."""
    size = len(st0)
    width = max(max_branch, 1)
    mask = np.uint64(len(t1) - 1)
    states = np.empty((depth + 1, size), np.int64)
    mv = np.empty((depth + 1, width), np.int64)
    order = np.empty((depth + 1, width), np.int64)
    nk = np.zeros(depth + 1, np.int64)
    nxt = np.zeros(depth + 1, np.int64)
    al = np.empty(depth + 1)
    be = np.empty(depth + 1)
    a0 = np.empty(depth + 1)
    b0 = np.empty(depth + 1)
    bs = np.empty(depth + 1)
    bi = np.zeros(depth + 1, np.int64)
    slot = np.zeros(depth + 1, np.int64)
    hh1 = np.zeros(depth + 1, np.uint64)
    hh2 = np.zeros(depth + 1, np.uint64)
    mx = np.zeros(depth + 1, np.bool_)
    scratch = np.empty(size, np.int64)
    taken = np.empty(1, np.int64)
    counts = np.empty(1, np.int64)
    states[0, :] = st0
    al[0] = alpha0
    be[0] = beta0
    level = 0
    nodes = 0
    ret = 0.0
    entering = True
    while True:
        if entering:
            nodes += 1
            if (nodes & 4095) == 0 and deadline < math.inf and _now() > deadline:
                return 0.0, nodes, True
            st = states[level]
            ply = ply0 + level
            if ended(st, prm):
                r = final(st, prm)
                if me == 1:
                    r = -r
                ret = 0.0 if r == 0 else (WIN - ply) * r
                entering = False
                continue
            rem = depth - level
            if rem <= 0:
                scratch[:] = st
                v = rollout(scratch, prm, 0, taken, counts)
                if me == 1:
                    v = -v
                ret = -1.0 if v < -1.0 else 1.0 if v > 1.0 else v
                entering = False
                continue
            h1, h2 = _hashes(st)
            # a slot per position and depth left: a score of this depth only (a deeper one would
            # differ from this depth's minimax)
            at = _slot(h1, rem, mask)
            first = -1
            if t1[at] == h1 and t2[at] == h2 and tdepth[at] == rem:
                first = tbest[at]
                score = _from_table(tscore[at], ply)
                f = tflag[at]
                if f == EXACT or (f == LOWER and score >= be[level]) or (f == UPPER and score <= al[level]):
                    ret = score
                    entering = False
                    continue
            elif rem > 1:  # the best move of the search one ply shallower, to try first
                below = _slot(h1, rem - 1, mask)
                if t1[below] == h1 and t2[below] == h2 and tdepth[below] == rem - 1:
                    first = tbest[below]
            k = moves(st, prm, mv[level])
            nk[level] = k
            for i in range(k):  # by the history of cut-offs (stable), then the table's move first
                h = hist[mv[level, i] & HISTORY_MASK]
                j = i
                while j > 0 and hist[mv[level, order[level, j - 1]] & HISTORY_MASK] < h:
                    order[level, j] = order[level, j - 1]
                    j -= 1
                order[level, j] = i
            if 0 <= first < k:  # the table's best move first, the others in their order
                at_first = 0
                while order[level, at_first] != first:
                    at_first += 1
                for i in range(at_first, 0, -1):
                    order[level, i] = order[level, i - 1]
                order[level, 0] = first
            slot[level] = at
            hh1[level] = h1
            hh2[level] = h2
            a0[level] = al[level]
            b0[level] = be[level]
            mx[level] = mover(st, prm) == me
            bs[level] = -np.inf if mx[level] else np.inf
            bi[level] = order[level, 0]
            nxt[level] = 1
            states[level + 1, :] = st
            play(states[level + 1], prm, mv[level, order[level, 0]])
            al[level + 1] = al[level]
            be[level + 1] = be[level]
            level += 1
            continue
        if level == 0:
            return ret, nodes, False
        level -= 1
        just = order[level, nxt[level] - 1]
        if mx[level]:
            if ret > bs[level]:
                bs[level] = ret
                bi[level] = just
            if bs[level] > al[level]:
                al[level] = bs[level]
        else:
            if ret < bs[level]:
                bs[level] = ret
                bi[level] = just
            if bs[level] < be[level]:
                be[level] = bs[level]
        if al[level] >= be[level] and nxt[level] < nk[level]:  # a cut-off: remember the move
            hist[mv[level, just] & HISTORY_MASK] += (depth - level) * (depth - level)
        if al[level] >= be[level] or nxt[level] >= nk[level]:
            best = bs[level]
            at = slot[level]
            t1[at] = hh1[level]
            t2[at] = hh2[level]
            tdepth[at] = depth - level
            tscore[at] = _to_table(best, ply0 + level)
            tflag[at] = UPPER if best <= a0[level] else LOWER if best >= b0[level] else EXACT
            tbest[at] = bi[level]
            ret = best
            continue
        states[level + 1, :] = states[level]
        play(states[level + 1], prm, mv[level, order[level, nxt[level]]])
        nxt[level] += 1
        al[level + 1] = al[level]
        be[level + 1] = be[level]
        level += 1
        entering = True

def ab_search(root, prm, depth, max_branch, deadline, t1, t2, tdepth, tscore, tflag, tbest):  # pragma: no cover
    """Iterative deepening at the decision node ``root`` as
    :meth:`solver.players.alphabeta.AlphaBetaPlayer.search` does it; returns the root moves'
    codes (``legal_actions`` order), their scores for the mover from the deepest finished
    depth, that depth and the positions visited."""
    me = mover(root, prm)
    codes = np.empty(max(max_branch, 1), np.int64)
    k = moves(root, prm, codes)
    order = np.arange(k)
    scores = np.full(k, np.nan)
    now = np.empty(k)
    child = np.empty(len(root), np.int64)
    hist = np.zeros(HISTORY_MASK + 1)
    finished = 0
    nodes = 0
    for d in range(1, depth + 1):
        best = -np.inf
        stopped = False
        for j in range(k):
            i = order[j]
            alpha = best - 1e-9 if best > -np.inf else -np.inf
            child[:] = root
            play(child, prm, codes[i])
            v, n, stop = ab_value(child, prm, me, d - 1, alpha, np.inf, 1, max_branch,
                                  deadline if d > 1 else math.inf, t1, t2, tdepth, tscore, tflag, tbest, hist)
            nodes += n
            if stop:
                stopped = True
                break
            now[i] = v
            if v > best:
                best = v
        if stopped:
            break
        scores[:] = now
        finished = d
        order = np.argsort(-scores, kind="mergesort")
        lost = True
        for i in range(k):
            if scores[i] >= -PROVEN:
                lost = False
        if best > PROVEN or lost:
            break
    return codes[:k].copy(), scores, finished, nodes

