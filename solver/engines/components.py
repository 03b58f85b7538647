"""Chance games (and games with secret choices) solved component by component, with an
``outside`` boundary, in little memory.

:func:`solve_chance` takes the arrays of a graph (or of one tier: every position of the tier
and its moves) and the **outside boundary**: the finished win and loss probabilities of the
positions outside it that its moves reach. It returns every position's win and loss
probabilities (``value = p_win - p_loss``), as :func:`~solver.engines.value_iteration.
value_iteration` does on the whole graph, holding about 40 bytes a position plus 5 a move
instead of 400-500:

1. the strongly connected components of the positions are found by Tarjan's algorithm
   (:func:`scc_order`, a numba kernel, iterative), which lists them **children first**: every
   component after all the components its moves reach;
2. that list is cut, at component borders, into **chunks** of at least ``chunk`` positions
   (whole components: a cycle is never cut; the kernel cuts as it lists);
3. the chunks are solved in order by the whole-graph engine
   (:func:`~solver.engines.value_iteration.value_iteration`): a chunk's graph holds its positions
   and one terminal row for every position outside the chunk that its moves reach (finished:
   an earlier chunk's or the boundary's), with that position's win and loss probabilities.

A chunk is a union of whole components in children-first order, so its equations, its cycles
and its certificate (Bellman residual, no endless trap) are those of the whole graph restricted
to it: the values are the whole-graph engine's (``tests/test_components.py`` checks it on random
games with cycles against the whole graph). Only one chunk's per-move arrays exist at a time.

Games with secret choices (``sim_rows`` given) go the same way, each chunk through the
secret-choice engine (:func:`~solver.engines.rounds.solve_rounds` where every cycle of the chunk
passes a secret choice, else :func:`~solver.engines.simultaneous.solve_simultaneous`), the finished
rows below it carrying their values as well as their probabilities (in recursive games the two
can differ); the solution then also holds the iterated values, both players' mixes at every
secret choice and the best moves. (Petal Battle gains nothing from the chunks: one component
holds almost all of it.)

No files, threads or progress bars here: the tier worker (:mod:`solver.pipeline.tiered_chance`)
reads the boundary from the finished tier files and writes the result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable

import numpy as np

from solver.core.arrays import CodedFloats, unique
from solver.core.game import NodeKind
from solver.engines.graph import Graph
from solver.engines.scc import scc_order

_TERMINAL = int(NodeKind.TERMINAL)
_SIMULTANEOUS = int(NodeKind.SIMULTANEOUS)

#: positions of a chunk when the caller does not say (the whole-graph engine holds about 450
#: bytes per position of a chunk while it solves it: about 120 MB)
DEFAULT_CHUNK = 1 << 18


@dataclass
class Outside:
    """The boundary: positions outside the graph that its moves reach (``child >= n`` is
    ``outside[child - n]``), finished. ``to_move``: ``int8[b]``; ``p_win``/``p_loss``:
    ``float64[b]`` probabilities that the side to move there wins / loses; ``keys``: their keys
    (``uint64[b]``, for messages only; may be None); ``value``: their values where these are
    not ``p_win - p_loss`` (games with secret choices; None: ``p_win - p_loss``)."""

    to_move: np.ndarray
    p_win: np.ndarray
    p_loss: np.ndarray
    keys: np.ndarray | None = None
    value: np.ndarray | None = None

    @classmethod
    def empty(cls) -> "Outside":
        return cls(np.empty(0, np.int8), np.empty(0), np.empty(0), np.empty(0, np.uint64))

    def values(self) -> np.ndarray:
        """``value``, or ``p_win - p_loss`` when it is not given."""
        return self.p_win - self.p_loss if self.value is None else np.asarray(self.value, np.float64)

    def __len__(self) -> int:
        return len(self.to_move)


@dataclass
class ComponentSolution:
    """Win and loss probabilities of every position (``float64[n]``, from the side to move) and
    the chunks' statistics summed (sweeps), maxed (residual) or all-of (converged, certified).
    With secret choices also ``iterated`` (the values, which can exceed ``p_win - p_loss`` in
    recursive games), ``strategies`` (row of a simultaneous node -> both players' mixes) and
    ``best`` (``int64[n]``: the move, an index into ``child``, of each decision node; -1 elsewhere)."""

    p_win: np.ndarray
    p_loss: np.ndarray
    sweeps: int
    residual: float
    converged: bool
    certified: bool
    stats: dict[str, Any] = field(default_factory=dict)
    iterated: np.ndarray | None = None
    strategies: dict[int, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    best: np.ndarray | None = None

    @property
    def value(self) -> np.ndarray:
        """Expected results from the side to move: the iterated values with secret choices, else
        exactly ``p_win - p_loss``."""
        return self.p_win - self.p_loss if self.iterated is None else self.iterated


def solve_chance(
    kind: np.ndarray,
    to_move: np.ndarray,
    result: np.ndarray,
    offsets: np.ndarray,
    child: np.ndarray,
    probs: Any,
    outside: Outside | None = None,
    *,
    sim_rows: np.ndarray | None = None,
    keys: np.ndarray | None = None,
    chunk: int = DEFAULT_CHUNK,
    tol: float = 1e-12,
    max_sweeps: int = 100_000,
    progress: Callable[[int, int, int], None] | None = None,
) -> ComponentSolution:
    """Win and loss probabilities of every position of a chance game (or of one tier of it).

    ``kind``, ``to_move``, ``result`` (``[n]``), ``offsets`` (``int32`` or ``int64[n + 1]``), ``child``
    (``int32`` or ``int64[E]``: rows ``< n`` inside, ``n + j`` the boundary's row ``j``) and
    ``probs`` (``float64[E]`` or :class:`~solver.core.arrays.CodedFloats`; 1.0 at decision
    moves; ``None``: 1.0 everywhere, a graph without chance nodes) are the graph's arrays; ``outside`` its finished boundary (none: the whole graph).
    ``sim_rows`` (``int[n]``): the rows of each simultaneous node's matrix, for a game with
    secret choices (each chunk then goes through
    :func:`~solver.engines.simultaneous.solve_simultaneous`, and the solution carries the
    iterated values, the mixes and the best moves).
    ``keys`` (``uint64[n]``) only name positions in error messages. ``chunk``: positions solved
    at once (about 450 bytes each while solved); ``tol``, ``max_sweeps``: as for
    :func:`~solver.engines.value_iteration.value_iteration`, per chunk. ``progress``: called as
    ``progress(chunks_done, chunks, sweeps_so_far)`` after each chunk.
    """
    from solver.engines.rounds import rounds_order, solve_rounds
    from solver.engines.simultaneous import solve_simultaneous
    from solver.engines.value_iteration import value_iteration  # the engine each chunk goes through

    outside = outside if outside is not None else Outside.empty()
    n = len(kind)
    if chunk < 1:
        raise ValueError(f"chunk must be at least 1, got {chunk}")
    if len(offsets) != n + 1 or int(offsets[-1]) != len(child):
        raise ValueError("offsets must have n + 1 entries ending at the number of moves")
    if len(child) and (int(child.min()) < 0 or int(child.max()) >= n + len(outside)):
        raise ValueError("a move leads to a row that is neither a position nor on the outside boundary")
    order, cuts, comp_stats = scc_order(offsets, child, n, chunk)
    bounds = list(zip(cuts[:-1].tolist(), cuts[1:].tolist()))
    del cuts
    p_win = np.full(n, np.nan)
    p_loss = np.full(n, np.nan)
    secret = sim_rows is not None and bool(np.any(np.asarray(kind) == _SIMULTANEOUS))
    iterated = np.full(n, np.nan) if secret else None
    best = np.full(n, -1, np.int64) if secret else None
    out_value = outside.values() if secret else None
    strategies: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    coded = isinstance(probs, CodedFloats)
    sweeps, residual, converged, certified = 0, 0.0, True, True
    for k, (a, b) in enumerate(bounds):
        rows = order[a:b].astype(np.int64)
        m = len(rows)
        by_row = np.argsort(rows)  # the chunk's rows sorted: which children are in it, and where
        sorted_rows = rows[by_row]
        first = offsets[rows].astype(np.int64)
        deg = offsets[rows + 1] - first
        sub_off = np.zeros(m + 1, np.int64)
        np.cumsum(deg, out=sub_off[1:])
        edges = np.repeat(first - sub_off[:-1], deg) + np.arange(int(sub_off[-1]), dtype=np.int64)
        ch = np.asarray(child[edges], dtype=np.int64)
        at = np.minimum(np.searchsorted(sorted_rows, ch), m - 1)
        inner = sorted_rows[at] == ch
        ext = unique(ch[~inner])  # finished rows the chunk's moves reach: its terminal rows
        sub_child = np.empty(len(ch), np.int64)
        sub_child[inner] = by_row[at[inner]]
        sub_child[~inner] = m + np.searchsorted(ext, ch[~inner])
        del ch, inner, at, by_row, sorted_rows
        ext_tier = ext[ext < n]
        ext_out = ext[ext >= n] - n
        e_win = np.concatenate([p_win[ext_tier], outside.p_win[ext_out]])
        e_loss = np.concatenate([p_loss[ext_tier], outside.p_loss[ext_out]])
        e_value = np.concatenate([iterated[ext_tier], out_value[ext_out]]) if secret else None
        if np.isnan(e_win).any():  # cannot happen in children-first order: a broken kernel
            raise RuntimeError("a chunk reaches a position not solved yet (component order broken)")
        r = len(ext)
        kind_c = np.asarray(kind[rows], dtype=np.int8)
        result_c = np.asarray(result[rows], dtype=np.int8)
        end = kind_c == _TERMINAL
        win = np.concatenate([((result_c > 0) & end).astype(np.float64), e_win])
        loss = np.concatenate([((result_c < 0) & end).astype(np.float64), e_loss])
        sub_keys = np.concatenate([
            (keys[rows] if keys is not None else rows.astype(np.uint64)),
            (keys[ext_tier] if keys is not None else ext_tier.astype(np.uint64)),
            (outside.keys[ext_out] if outside.keys is not None else (ext_out + n).astype(np.uint64)),
        ]).astype(np.uint64)
        sub_probs = (CodedFloats(probs.codes[edges], probs.table) if coded
                     else np.ones(len(edges)) if probs is None
                     else np.asarray(probs, dtype=np.float64)[edges])
        if not secret:
            del edges
        graph = Graph(
            keys=sub_keys,
            kind=np.concatenate([kind_c, np.full(r, _TERMINAL, np.int8)]),
            to_move=np.concatenate([np.asarray(to_move[rows], np.int8),
                                    np.asarray(to_move[ext_tier], np.int8),
                                    np.asarray(outside.to_move[ext_out], np.int8)]),
            ply=np.broadcast_to(np.uint16(0), (m + r,)),
            offsets=np.concatenate([sub_off, np.full(r, sub_off[-1], np.int64)]),
            child=sub_child.astype(np.int32) if m + r < 2**31 else sub_child,
            probs=sub_probs,
            result=np.concatenate([result_c, np.zeros(r, np.int8)]),
            margin=np.broadcast_to(np.int32(0), (m + r,)),
            root=0, symmetry=False,
            sim_rows=(np.concatenate([np.asarray(sim_rows[rows], np.int32), np.zeros(r, np.int32)])
                      if secret else None),
        )
        del sub_child, sub_probs, e_win, e_loss
        if secret:  # every chunk, as the whole-graph engine solves every component of such a game
            ends = np.concatenate([win[:m] - loss[:m], e_value])  # the chunk's own ends, then the finished
            sweep_order = rounds_order(graph)  # every cycle through a secret choice: the compact engine
            engine = solve_simultaneous if sweep_order is None else partial(solve_rounds, order=sweep_order)
            sol = engine(graph, tol=tol, max_sweeps=max_sweeps, terminal_probs=(win, loss), terminal_value=ends)
            del sweep_order
            del ends
        else:
            sol = value_iteration(graph, tol=tol, max_sweeps=max_sweeps, terminal_probs=(win, loss))
        p_win[rows] = sol.p_win[:m]
        p_loss[rows] = sol.p_loss[:m]
        if secret:
            iterated[rows] = sol.value[:m]
            local = np.asarray(sol.best[:m])
            chosen = local >= 0
            best[rows[chosen]] = edges[local[chosen]]
            for node, mixes in sol.strategies.items():
                strategies[int(rows[node])] = mixes
            del edges
        sweeps += int(sol.sweeps)
        residual = max(residual, float(sol.residual))
        converged = converged and bool(sol.converged)
        certified = certified and bool(sol.stats.get("certified", False))
        del graph, sol, win, loss
        if progress is not None:
            progress(k + 1, len(bounds), sweeps)
    stats = {"chunks": len(bounds), **comp_stats}
    return ComponentSolution(p_win=p_win, p_loss=p_loss, sweeps=sweeps, residual=residual,
                             converged=converged, certified=certified, stats=stats,
                             iterated=iterated, strategies=strategies, best=best)
