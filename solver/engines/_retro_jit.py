"""Compiled (numba) kernels of the retrograde engine: queue-driven passes over reverse edges.

Each kernel is the one-position-at-a-time form of a step in :mod:`solver.engines.retrograde`
(see there for the rules). A FIFO queue processes positions in non-decreasing remoteness, so
remoteness is exact, as in the level-by-level formulation: a position is pushed at ``r + 1``
only while positions at ``r`` are being popped.

Arguments shared by the kernels: ``src[e]`` the row an edge starts from, ``same[e]`` the child's
mover is the parent's, ``roffsets``/``redge`` the reverse CSR (edge ids ending in each row), and
``outdeg[i]`` the number of edges leaving row ``i``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solver.core.values import DRAW as _DRAW, LOSE as _LOSE, TIE as _TIE, WIN as _WIN

_UNDECIDED = -1


@njit(cache=True, nogil=True)
def win_lose_tie(src, same, roffsets, redge, outdeg, terminal_result, no_remoteness):
    """Values and remoteness. ``terminal_result[i]`` is -1 for a non-terminal row, else the
    :class:`~solver.core.game.Result` of the mover at a terminal (0 loss, 1 tie, 2 win)."""
    n = len(outdeg)
    value = np.full(n, _UNDECIDED, dtype=np.int8)
    remoteness = np.full(n, no_remoteness, dtype=np.uint16)
    counter = outdeg.astype(np.int32)  # narrow arrays: fewer cache misses on random access
    queue = np.empty(n, dtype=np.int64)
    head = 0
    tail = 0
    for i in range(n):
        if terminal_result[i] == 2:
            value[i] = _WIN
        elif terminal_result[i] == 0:
            value[i] = _LOSE
        else:
            continue
        remoteness[i] = 0
        queue[tail] = i
        tail += 1
    # step 1: win / lose
    while head < tail:
        c = queue[head]
        head += 1
        v = value[c]
        r = remoteness[c] + 1
        for k in range(roffsets[c], roffsets[c + 1]):
            e = redge[k]
            p = src[e]
            if value[p] != _UNDECIDED:
                continue
            eff = v if same[e] else _WIN + _LOSE - v  # the child's value for the parent's mover
            if eff == _WIN:
                value[p] = _WIN
                remoteness[p] = r
                queue[tail] = p
                tail += 1
            else:
                counter[p] -= 1
                if counter[p] == 0:
                    value[p] = _LOSE
                    remoteness[p] = r
                    queue[tail] = p
                    tail += 1
    # step 2: ties, breadth first from terminal ties through undecided positions
    head = 0
    tail = 0
    for i in range(n):
        if terminal_result[i] == 1 and value[i] == _UNDECIDED:
            value[i] = _TIE
            remoteness[i] = 0
            queue[tail] = i
            tail += 1
    while head < tail:
        c = queue[head]
        head += 1
        r = remoteness[c] + 1
        for k in range(roffsets[c], roffsets[c + 1]):
            p = src[redge[k]]
            if value[p] == _UNDECIDED:
                value[p] = _TIE
                remoteness[p] = r
                queue[tail] = p
                tail += 1
    # step 3: the rest is endless play
    for i in range(n):
        if value[i] == _UNDECIDED:
            value[i] = _DRAW
    return value, remoteness


@njit(cache=True, nogil=True)
def solve_acyclic(src, same, roffsets, redge, outdeg, terminal_result, tmargin, no_remoteness):
    """Values, remoteness and margins in one backward pass in topological order (Kahn's
    algorithm): a position is settled once all its children are. Exact for acyclic graphs and
    equal to the queue passes: a win is 1 + the smallest remoteness of a child lost for the
    opponent, a loss 1 + the largest of its children (all won for the opponent), a tie 1 + the
    smallest of its tie children; the margin is the best child margin.

    Returns ``(value, remoteness, margin int32[n], settled)``; ``settled < n`` means the graph
    has a cycle (or a non-terminal position without moves) and the results are not valid."""
    n = len(outdeg)
    value = np.full(n, _UNDECIDED, dtype=np.int8)
    remoteness = np.full(n, no_remoteness, dtype=np.uint16)
    margin = np.zeros(n, dtype=np.int32)
    pending = outdeg.astype(np.int32)  # narrow arrays: fewer cache misses on random access
    nlose = np.zeros(n, dtype=np.int32)
    win_rem = np.full(n, no_remoteness, dtype=np.uint16)
    tie_rem = np.full(n, no_remoteness, dtype=np.uint16)
    lose_rem = np.zeros(n, dtype=np.uint16)
    best = np.full(n, np.iinfo(np.int32).min, dtype=np.int32)
    queue = np.empty(n, dtype=np.int64)
    head = 0
    tail = 0
    for i in range(n):
        if terminal_result[i] >= 0:
            value[i] = (_LOSE, _TIE, _WIN)[terminal_result[i]]
            remoteness[i] = 0
            margin[i] = tmargin[i]
            queue[tail] = i
            tail += 1
        elif pending[i] == 0:
            return value, remoteness, margin, -1  # no moves and not over: not for this pass
    while head < tail:
        c = queue[head]
        head += 1
        v = value[c]
        r = remoteness[c]
        m = margin[c]
        for k in range(roffsets[c], roffsets[c + 1]):
            e = redge[k]
            p = src[e]
            if v == _TIE:
                if r < tie_rem[p]:
                    tie_rem[p] = r
            elif (v == _WIN) == same[e]:  # the child is won for p's mover
                if r < win_rem[p]:
                    win_rem[p] = r
            else:
                nlose[p] += 1
                if r > lose_rem[p]:
                    lose_rem[p] = r
            val = m if same[e] else np.int32(-m)
            if val > best[p]:
                best[p] = val
            pending[p] -= 1
            if pending[p] == 0:
                if win_rem[p] != no_remoteness:
                    value[p] = _WIN
                    remoteness[p] = win_rem[p] + 1
                elif nlose[p] == outdeg[p]:
                    value[p] = _LOSE
                    remoteness[p] = lose_rem[p] + 1
                else:
                    value[p] = _TIE
                    remoteness[p] = tie_rem[p] + 1
                margin[p] = best[p]
                queue[tail] = p
                tail += 1
    return value, remoteness, margin, tail


@njit(cache=True, nogil=True)
def can_force_at_least(src, same, roffsets, redge, outdeg, terminal, tmargin, t):
    """``bool[n]``: the side to move can force a final margin ``>= t`` (endless play = 0).

    States ``(role, row)``: role 0 = the mover wants its margin ``>= t``, role 1 = the mover
    wants ``>= 1 - t`` (the opponent's margin ``< t``); a move to the other player flips the
    role. A counter game as in step 1 of the values."""
    n = len(outdeg)
    win = np.zeros((2, n), dtype=np.bool_)
    lose = np.zeros((2, n), dtype=np.bool_)
    counter = np.empty((2, n), dtype=np.int64)
    queue = np.empty(2 * n, dtype=np.int64)
    head = 0
    tail = 0
    for role in range(2):
        thr = t if role == 0 else 1 - t
        for i in range(n):
            counter[role, i] = outdeg[i]
            if terminal[i]:
                if tmargin[i] >= thr:
                    win[role, i] = True
                else:
                    lose[role, i] = True
                queue[tail] = role * n + i
                tail += 1
    while head < tail:
        code = queue[head]
        head += 1
        role = code // n
        c = code - role * n
        is_win = win[role, c]
        for k in range(roffsets[c], roffsets[c + 1]):
            e = redge[k]
            p = src[e]
            prole = role if same[e] else 1 - role
            if win[prole, p] or lose[prole, p]:
                continue
            good = is_win if prole == role else not is_win
            if good:
                win[prole, p] = True
                queue[tail] = prole * n + p
                tail += 1
            else:
                counter[prole, p] -= 1
                if counter[prole, p] == 0:
                    lose[prole, p] = True
                    queue[tail] = prole * n + p
                    tail += 1
    out = np.empty(n, dtype=np.bool_)
    for i in range(n):
        out[i] = win[0, i] or (not lose[0, i] and 0 >= t)
    return out
