"""Board symmetries as cell permutations, shared by every grid game.

Cells are numbered row-major: cell ``r * cols + c``. A symmetry is an ``int`` array ``perm`` of
length ``rows * cols`` with ``new_board[perm[i]] = old_board[i]`` (cell ``i`` moves to ``perm[i]``).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np


@lru_cache(maxsize=None)
def grid_symmetries(rows: int, cols: int) -> tuple[tuple[int, ...], ...]:
    """The symmetries of a ``rows`` x ``cols`` grid: 8 for a square, 4 for a rectangle.

    The identity comes first. Each is a tuple ``perm`` (cell ``i`` goes to cell ``perm[i]``).
    """
    maps = []
    if rows == cols:
        n = rows
        transforms = [
            lambda r, c: (r, c),
            lambda r, c: (c, n - 1 - r),
            lambda r, c: (n - 1 - r, n - 1 - c),
            lambda r, c: (n - 1 - c, r),
            lambda r, c: (r, n - 1 - c),
            lambda r, c: (n - 1 - r, c),
            lambda r, c: (c, r),
            lambda r, c: (n - 1 - c, n - 1 - r),
        ]
    else:
        transforms = [
            lambda r, c: (r, c),
            lambda r, c: (r, cols - 1 - c),
            lambda r, c: (rows - 1 - r, c),
            lambda r, c: (rows - 1 - r, cols - 1 - c),
        ]
    for t in transforms:
        perm = []
        for r in range(rows):
            for c in range(cols):
                r2, c2 = t(r, c)
                perm.append(r2 * cols + c2)
        maps.append(tuple(perm))
    return tuple(maps)


def permute(board: tuple, perm: tuple[int, ...]) -> tuple:
    """The image of a row-major ``board`` tuple under ``perm``."""
    out = [None] * len(board)
    for i, v in enumerate(board):
        out[perm[i]] = v
    return tuple(out)


def grid_symmetry_array(rows: int, cols: int) -> np.ndarray:
    """``int64[k, rows*cols]``: row ``s`` is symmetry ``s`` as a gather index, i.e.
    ``new_board = old_board[..., arr[s]]`` (the inverse permutation, for vectorised use)."""
    perms = grid_symmetries(rows, cols)
    out = np.empty((len(perms), rows * cols), dtype=np.int64)
    for s, perm in enumerate(perms):
        inv = np.empty(len(perm), dtype=np.int64)
        inv[np.array(perm)] = np.arange(len(perm))
        out[s] = inv
    return out


@lru_cache(maxsize=None)
def grid_rays(
    rows: int, cols: int, directions: tuple[tuple[int, int], ...]
) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """For every cell, the non-empty rays in ``directions`` ((row step, column step) pairs),
    each the cells met going outward, nearest first, in the order of ``directions``."""
    out = []
    for cell in range(rows * cols):
        r, c = divmod(cell, cols)
        rays = []
        for dr, dc in directions:
            ray = []
            rr, cc = r + dr, c + dc
            while 0 <= rr < rows and 0 <= cc < cols:
                ray.append(rr * cols + cc)
                rr, cc = rr + dr, cc + dc
            if ray:
                rays.append(tuple(ray))
        out.append(tuple(rays))
    return tuple(out)


def cell_name(cell: int, cols: int) -> str:
    """Chess-like name of a cell: column letter + row number from the bottom (``a1`` = row 0).

    Row 0 is printed at the bottom of a rendered board, so ``a1`` is the bottom-left cell.
    """
    r, c = divmod(cell, cols)
    return f"{chr(ord('a') + c)}{r + 1}"


def parse_cell(text: str, rows: int, cols: int) -> int | None:
    """Inverse of :func:`cell_name`; ``None`` when the text names no cell of the board."""
    text = text.strip().lower()
    if len(text) < 2 or not text[0].isalpha() or not text[1:].isdigit():
        return None
    c = ord(text[0]) - ord("a")
    r = int(text[1:]) - 1
    if 0 <= r < rows and 0 <= c < cols:
        return r * cols + c
    return None
