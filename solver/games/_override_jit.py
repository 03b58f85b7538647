"""Compiled (numba) random playouts of Override
(:meth:`solver.games.override.Override.random_playout`).

The position is ``stack[cell, level]`` (piece codes ``3 * colour + size``, bottom first; a stack
holds at most three pyramids, since a pyramid moves only onto a smaller one) with ``height[cell]``,
the player to move and the last move ``(src, dst)`` (``-1`` after a place, a pass or at the
start). The rules are those of :meth:`Override.legal_actions` and :meth:`Override.apply`;
``tests/test_playouts.py`` replays every choice under the readable rules.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solver.core.playout_jit import draw


@njit(cache=True, nogil=True)
def _has_line(stack, height, lines, colour):
    for li in range(lines.shape[0]):
        ok = True
        for j in range(lines.shape[1]):
            x = lines[li, j]
            if height[x] == 0 or stack[x, height[x] - 1] // 3 != colour:
                ok = False
                break
        if ok:
            return True
    return False


@njit(cache=True, nogil=True)
def playout_kernel(stack, height, player, last_src, last_dst, max_moves, seed, per_size, centre, no_undo,
                   edges, lines, taken, counts):
    """Random actions (in the order of :meth:`Override.legal_actions`: places by piece A-S ..
    B-L and ascending cell, then moves by edge; a pass when there is none) until a line decides
    the game or ``max_moves`` choices. Changes ``stack``/``height`` in place; returns
    ``(player, last_src, last_dst, choices)``."""
    np.random.seed(seed)
    n = len(height)
    nedges = edges.shape[0]
    empty = np.empty(n, dtype=np.int64)
    left = np.empty(6, dtype=np.int64)
    movable = np.empty(nedges, dtype=np.int64)
    moves = 0
    while moves < max_moves:
        if _has_line(stack, height, lines, 1 - player) or _has_line(stack, height, lines, player):
            break
        for p in range(6):
            left[p] = per_size
        ne = 0
        for x in range(n):
            for lv in range(height[x]):
                left[stack[x, lv]] -= 1
            if height[x] == 0 and x != centre:
                empty[ne] = x
                ne += 1
        nplace = 0
        for p in range(6):
            if left[p] > 0:
                nplace += ne
        nmove = 0
        for e in range(nedges):
            u = edges[e, 0]
            v = edges[e, 1]
            if height[u] == 0:
                continue
            if height[v] > 0 and stack[v, height[v] - 1] % 3 >= stack[u, height[u] - 1] % 3:
                continue
            if no_undo and u == last_dst and v == last_src:
                continue
            movable[nmove] = e
            nmove += 1
        k = nplace + nmove
        if k == 0:
            taken[moves] = 0
            counts[moves] = 1
            last_src = -1
            last_dst = -1
        else:
            i = draw(k, taken, counts, moves)
            if i < nplace:
                piece = -1
                for p in range(6):
                    if left[p] > 0:
                        if i < ne:
                            piece = p
                            break
                        i -= ne
                x = empty[i]
                stack[x, 0] = piece
                height[x] = 1
                last_src = -1
                last_dst = -1
            else:
                e = movable[i - nplace]
                u = edges[e, 0]
                v = edges[e, 1]
                top = stack[u, height[u] - 1]
                height[u] -= 1
                stack[v, height[v]] = top
                height[v] += 1
                last_src = u
                last_dst = v
        player = 1 - player
        moves += 1
    return player, last_src, last_dst, moves
