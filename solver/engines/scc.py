"""Strongly connected components, children first (Tarjan's algorithm, a numba kernel).

:func:`scc_order` lists every row of a graph component after component, each after every
component its moves reach, and cuts the list into chunks of whole components: the order the
component engine (:mod:`~solver.engines.components`) solves in, and the components the round
engine (:mod:`~solver.engines.rounds`) breaks ties with.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def _tarjan(offsets: np.ndarray, child: np.ndarray, n: int, chunk: int
            ) -> tuple[np.ndarray, np.ndarray, int, int]:  # pragma: no cover - numba
    # 20 bytes a position while it runs, 4 after: ``index`` (-1 unvisited, DONE once its
    # component is listed: then it is off the stack, which replaces an on-stack flag), ``low``,
    # the call stack (node, next move), and one array holding the listed components from its
    # front and Tarjan's stack from its back (together never more than n rows)
    done = np.int32(2**31 - 1)
    index = np.full(n, -1, np.int32)
    low = np.empty(n, np.int32)
    call_node = np.empty(n, np.int32)
    call_edge = np.empty(n, np.int64)
    order = np.empty(n, np.int32)
    bounds = np.empty(n // chunk + 2, np.int64)  # every chunk but the last has >= chunk rows
    bounds[0] = 0
    nb = 1
    top = n  # Tarjan's stack is order[top:n]
    filled = 0
    counter = 0
    largest = 0
    cyclic = 0
    for root in range(n):
        if index[root] != -1:
            continue
        index[root] = counter
        low[root] = counter
        counter += 1
        top -= 1
        order[top] = root
        call_node[0] = root
        call_edge[0] = offsets[root]
        depth = 1
        while depth > 0:
            v = call_node[depth - 1]
            e = call_edge[depth - 1]
            if e < offsets[v + 1]:
                call_edge[depth - 1] = e + 1
                w = child[e]
                if w < 0 or w >= n:
                    continue  # outside: finished, no cycle through it
                if index[w] == -1:
                    index[w] = counter
                    low[w] = counter
                    counter += 1
                    top -= 1
                    order[top] = w
                    call_node[depth] = w
                    call_edge[depth] = offsets[w]
                    depth += 1
                elif index[w] < low[v]:  # on the stack (a listed row's index is DONE)
                    low[v] = index[w]
                continue
            depth -= 1
            if depth > 0:
                u = call_node[depth - 1]
                if low[v] < low[u]:
                    low[u] = low[v]
            if low[v] == index[v]:  # v's component: the stack down to v, listed in order
                first = filled
                while True:
                    w = order[top]
                    top += 1
                    index[w] = done
                    order[filled] = w
                    filled += 1
                    if w == v:
                        break
                size = filled - first
                if size > largest:
                    largest = size
                if size > 1:
                    cyclic += size
                if filled - bounds[nb - 1] >= chunk:
                    bounds[nb] = filled
                    nb += 1
    if bounds[nb - 1] < filled:
        bounds[nb] = filled
        nb += 1
    return order, bounds[:nb].copy(), largest, cyclic


def scc_order(offsets: np.ndarray, child: np.ndarray, n: int, chunk: int = 1
              ) -> tuple[np.ndarray, np.ndarray, dict[str, int]]:
    """The strongly connected components of rows ``0..n-1``, children first (Tarjan's algorithm,
    iterative). Moves to rows outside ``0..n-1`` (``child < 0`` or ``>= n``) are ignored.

    Returns ``(order int32[n], bounds int64[k + 1], stats)``: ``order`` lists every row,
    component after component, each component after every component its moves reach (a move
    of a component leads into it, into one listed before it, or outside); ``bounds`` cut it
    into chunks: ``order[bounds[i]:bounds[i + 1]]`` is whole components, as few as make at
    least ``chunk`` rows (only the last chunk may have fewer); ``chunk=1``: one chunk per
    component. ``stats``: ``largest_component`` and ``cyclic_positions`` (rows in components of
    more than one row)."""
    if chunk < 1:
        raise ValueError(f"chunk must be at least 1, got {chunk}")
    if n == 0:
        return np.empty(0, np.int32), np.zeros(1, np.int64), {"largest_component": 0, "cyclic_positions": 0}
    if n >= 2**31 - 1:
        raise ValueError(f"{n:,} positions: more than int32 rows hold")
    offsets = np.asarray(offsets)
    if offsets.dtype not in (np.int32, np.int64):
        offsets = offsets.astype(np.int64)
    order, bounds, largest, cyclic = _tarjan(offsets, np.asarray(child), int(n), int(chunk))
    return order, bounds, {"largest_component": int(largest), "cyclic_positions": int(cyclic)}
