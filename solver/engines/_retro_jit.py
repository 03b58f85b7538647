"""Compiled (numba) kernels of the retrograde engine: queue-driven passes over reverse edges.

Each kernel is the one-position-at-a-time form of a step in :mod:`solver.engines.retrograde`
(see there for the rules). A FIFO queue processes positions in non-decreasing remoteness, so
remoteness is exact, as in the level-by-level formulation: a position is pushed at ``r + 1``
only while positions at ``r`` are being popped.

Arguments shared by the kernels: ``src[e]`` the row an edge starts from, ``child[e]`` the row it
ends in, ``same[e]`` the child's mover is the parent's, ``roffsets``/``redge`` the reverse CSR
(edge ids ending in each row), and ``outdeg[i]`` the number of edges leaving row ``i``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# value codes (solver.core.values)
_LOSE = 0
_DRAW = 1
_TIE = 2
_WIN = 3
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
            eff = v if same[e] else 3 - v  # the child's value for the parent's mover
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
def margins_acyclic(src, child, same, roffsets, redge, outdeg, terminal, tmargin):
    """Best margin of every row by Kahn's algorithm; ``(margin int32[n], settled count)``
    (fewer settled than rows means a cycle)."""
    n = len(outdeg)
    pending = outdeg.astype(np.int32)  # narrow arrays: fewer cache misses on random access
    margin = np.zeros(n, dtype=np.int32)
    best = np.full(n, np.iinfo(np.int32).min, dtype=np.int32)
    queue = np.empty(n, dtype=np.int64)
    head = 0
    tail = 0
    for i in range(n):
        if terminal[i]:
            margin[i] = tmargin[i]
        if pending[i] == 0:
            queue[tail] = i
            tail += 1
    while head < tail:
        c = queue[head]
        head += 1
        m = margin[c]
        for k in range(roffsets[c], roffsets[c + 1]):
            e = redge[k]
            p = src[e]
            val = m if same[e] else np.int32(-m)
            if val > best[p]:
                best[p] = val
            pending[p] -= 1
            if pending[p] == 0:
                margin[p] = best[p]
                queue[tail] = p
                tail += 1
    return margin, tail


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
