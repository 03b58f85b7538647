"""Compiled (numba) random playouts of Blam! (:meth:`solver.games.blam.Blam.random_playout`).

The position is the board (0 empty, else ``1 + 3 * owner + size``), the stashes and treasures
(``players x 3``) and the mover; the rays of each cell (the 8 directions, nearest cell first, as
:meth:`Blam._make_rays` lists them) are flattened into ``cell_off``/``ray_off``/``ray_cells``.
The rules are those of :meth:`Blam.apply`; ``tests/test_playouts.py`` replays every choice under
the readable rules.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solver.core.playout_jit import draw


@njit(cache=True, nogil=True)
def _fall(code, p, stash, treasure):
    owner = (code - 1) // 3
    size = (code - 1) % 3
    if owner == p:
        stash[p, size] += 1
    else:
        treasure[p, size] += 1


@njit(cache=True, nogil=True)
def playout_kernel(board, stash, treasure, mover, max_moves, seed, chain, smaller_only, cell_off,
                   ray_off, ray_cells, taken, counts):
    """Random placements (in the order of :meth:`Blam.legal_actions`: sizes S, M, L with
    pyramids left, cells ascending; a pass with an empty stash) until the board is full, every
    stash is empty, or ``max_moves`` choices. Changes the arrays in place; returns
    ``(mover, choices)``."""
    np.random.seed(seed)
    n = len(board)
    players = stash.shape[0]
    empty = np.empty(n, dtype=np.int64)
    moves = 0
    while moves < max_moves:
        ne = 0
        for c in range(n):
            if board[c] == 0:
                empty[ne] = c
                ne += 1
        left = 0
        for q in range(players):
            for s in range(3):
                left += stash[q, s]
        if ne == 0 or left == 0:
            break
        p = mover
        sizes = 0
        for s in range(3):
            if stash[p, s] > 0:
                sizes += 1
        mover = (p + 1) % players
        if sizes == 0:
            taken[moves] = 0
            counts[moves] = 1
            moves += 1
            continue
        i = draw(sizes * ne, taken, counts, moves)
        moves += 1
        nth = i // ne
        cell = empty[i % ne]
        size = -1
        for s in range(3):
            if stash[p, s] > 0:
                if nth == 0:
                    size = s
                    break
                nth -= 1
        stash[p, size] -= 1
        board[cell] = 1 + 3 * p + size
        for r in range(cell_off[cell], cell_off[cell + 1]):
            a = ray_off[r]
            length = ray_off[r + 1] - a
            if chain:
                run = 0
                while run < length and board[ray_cells[a + run]] != 0:
                    run += 1
                if run == 0:
                    continue
                if smaller_only:
                    blocked = False
                    for j in range(run):
                        if (board[ray_cells[a + j]] - 1) % 3 > size:
                            blocked = True
                    if blocked:
                        continue
                if run == length:
                    _fall(board[ray_cells[a + run - 1]], p, stash, treasure)
                else:
                    board[ray_cells[a + run]] = board[ray_cells[a + run - 1]]
                for j in range(run - 1, 0, -1):
                    board[ray_cells[a + j]] = board[ray_cells[a + j - 1]]
                board[ray_cells[a]] = 0
            else:
                first = board[ray_cells[a]]
                if first == 0:
                    continue
                if smaller_only and (first - 1) % 3 > size:
                    continue
                if length == 1:
                    _fall(first, p, stash, treasure)
                    board[ray_cells[a]] = 0
                elif board[ray_cells[a + 1]] == 0:
                    board[ray_cells[a + 1]] = first
                    board[ray_cells[a]] = 0
    return mover, moves
