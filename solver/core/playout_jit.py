"""What the games' compiled random playouts share (numba): drawing a choice and writing an action
row. Each game's kernel (``solver/games/_<game>_jit.py``, ``playout_kernel``) calls these."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def draw(k, taken, counts, moves):
    """One of ``k`` choices drawn uniformly (numba's generator, seeded by the kernel), recorded as
    choice number ``moves``: ``taken`` gets its index, ``counts`` gets ``k``."""
    i = int(np.random.random() * k)
    if i >= k:  # guards the (measure-zero) rounding up to k
        i = k - 1
    taken[moves] = i
    counts[moves] = k
    return i


@njit(cache=True, nogil=True)
def put(acts, na, a, b, c, d, e):
    """Write the action row ``(a, b, c, d, e)`` (the first ``acts.shape[1]`` of them) at row ``na``;
    returns ``na + 1``."""
    row = acts[na]
    row[0] = a
    row[1] = b
    row[2] = c
    row[3] = d
    if acts.shape[1] > 4:
        row[4] = e
    return na + 1
