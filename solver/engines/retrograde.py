"""Retrograde analysis: value and exact remoteness of every position, by backward induction.

Works on the arrays of a :class:`~solver.engines.graph.Graph` (two-sided games with decision
and terminal nodes). Three steps, as in GamesmanOne:

1. **win/lose** by undecided-children counters, level by level in increasing remoteness (a
   position is a win at ``r + 1`` as soon as one child is a loss for its mover at ``r``; a loss at
   ``r + 1`` when its last undecided child became a win for the opponent at ``r``). Processing
   levels in order makes remoteness exact: wins fastest, losses slowest.
2. **tie**: among the positions left, a terminal tie is a tie at 0 and a position with a tie child
   is a tie at 1 + the smallest such child's remoteness (breadth first).
3. **draw**: what is left; no remoteness.

A move to a child where the *same* player moves again keeps the child's value; a move to the
opponent's turn flips it (win <-> lose).

Scored games also get the optimal **margin** (own score minus the opponent's, from the side to
move), a separate objective: each side maximises its own final margin; endless play counts as a
margin of 0. It is computed by one attractor sweep per side, from the largest margin down (the
tiered solver's kernel), so it is exact on cyclic graphs too; threshold retrograde passes (one
per distinct terminal margin) remain as the reference. On an **acyclic** graph (Greener) one
backward pass in topological order gives values, remoteness and margins at once (same results,
half the work).

The passes run as compiled queue kernels (:mod:`solver.engines._retro_jit`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from solver.core.game import NodeKind
from solver.core.values import DRAW, NO_REMOTENESS
from solver.core.arrays import unique
from solver.engines import _retro_jit as _jit
from solver.engines.graph import Graph, dead_end_message

#: callback(step_name, level, decided_so_far)
Progress = Callable[[str, int, int], None]


@dataclass
class Solved:
    """Per-row results of :func:`retrograde` (rows of the graph it was given)."""

    value: np.ndarray  # int8 codes (solver.core.values)
    remoteness: np.ndarray  # uint16, NO_REMOTENESS for draws
    margin: np.ndarray | None  # int16 from the side to move, scored games only


def refuse_dead_ends(graph: Graph) -> None:
    """Raise :class:`ProtocolError` naming the first non-terminal position without moves (it
    would silently count as a draw)."""
    from solver.errors import ProtocolError

    dead = (np.diff(graph.offsets) == 0) & (graph.kind != NodeKind.TERMINAL)
    if dead.any():
        row = int(np.flatnonzero(dead)[0])
        raise ProtocolError(dead_end_message(int(graph.keys[row]), NodeKind(int(graph.kind[row]))))


def retrograde(graph: Graph, *, scored: bool = False, progress: Progress | None = None) -> Solved:
    """Solve every position of ``graph`` (values from the side to move).

    Parameters
    ----------
    graph : Graph
        From :func:`~solver.engines.enumerate.enumerate_positions`; decision and terminal nodes only.
    scored : bool
        Also compute the optimal score margin.
    progress : callable, optional
        Called as ``progress(step, level, decided)`` after each remoteness level.
    """
    if (graph.kind == NodeKind.SIMULTANEOUS).any():
        raise ValueError(
            "retrograde() handles decision and terminal nodes only; graphs with simultaneous nodes "
            "are solved by solver.engines.simultaneous.solve_simultaneous (or value_iteration, which "
            "hands them to it; both need graph.sim_rows)"
        )
    if (graph.kind == NodeKind.CHANCE).any():
        raise ValueError(
            "retrograde() handles decision and terminal nodes only; "
            "use solver.engines.value_iteration.value_iteration for chance nodes"
        )
    refuse_dead_ends(graph)
    src = graph.parent_of_edge()  # once: every step needs it
    same = _same_player_edges(graph, src)
    roffsets, redge = graph.reverse()
    if scored:  # margins need a backward pass anyway: on an acyclic graph it also gives values
        one_pass = _one_pass(graph, same, roffsets, redge, src)
        if one_pass is not None:
            value, remoteness, margin = one_pass
            if progress is not None:
                progress("one pass", int(remoteness.max(initial=0)), graph.n)
            return Solved(value=value, remoteness=remoteness, margin=margin.astype(np.int16))
    value, remoteness = _win_lose_tie(graph, same, roffsets, redge, progress, src)
    margin = _margins(graph, same, roffsets, redge, src) if scored else None
    return Solved(value=value, remoteness=remoteness, margin=margin)


def _same_player_edges(graph: Graph, src: np.ndarray | None = None) -> np.ndarray:
    """``bool[E]``: the child's side to move is the parent's (the parent moves again)."""
    src = graph.parent_of_edge() if src is None else src
    return graph.to_move[graph.child] == graph.to_move[src]


def _win_lose_tie(
    graph: Graph,
    same: np.ndarray,
    roffsets: np.ndarray,
    redge: np.ndarray,
    progress: Progress | None,
    src: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    src = graph.parent_of_edge() if src is None else src
    terminal = graph.kind == NodeKind.TERMINAL
    terminal_result = np.where(terminal, graph.result.astype(np.int8) + 1, -1).astype(np.int8)
    value, remoteness = _jit.win_lose_tie(
        src, same, roffsets, redge, np.diff(graph.offsets), terminal_result,
        NO_REMOTENESS,
    )
    if progress is not None:
        progress("win/lose/tie", int(remoteness[value != DRAW].max(initial=0)), graph.n)
    return value, remoteness


def _margins(
    graph: Graph, same: np.ndarray, roffsets: np.ndarray, redge: np.ndarray, src: np.ndarray | None = None
) -> np.ndarray:
    """Optimal final margin from the side to move (endless play = 0), exact on cyclic graphs:
    one attractor sweep per side (:func:`_margins_sweep`) when the sides to move are 0 and 1
    (every two-sided graph, and each seat's view of a paranoid one), else the threshold passes
    (:func:`_threshold_margins`). Both give the same margins."""
    src = graph.parent_of_edge() if src is None else src
    terminal = graph.kind == NodeKind.TERMINAL
    if graph.n == 0 or (int(graph.to_move.min()) >= 0 and int(graph.to_move.max()) <= 1):
        return _margins_sweep(graph, same, roffsets, redge, src, terminal)
    return _threshold_margins(graph, same, roffsets, redge, src, terminal)


def _threshold_margins(
    graph: Graph, same: np.ndarray, roffsets: np.ndarray, redge: np.ndarray, src: np.ndarray,
    terminal: np.ndarray,
) -> np.ndarray:
    """Margins by threshold passes: for each threshold ``t`` among the achievable margins
    (terminal margins and 0), a win/lose pass decides whether the side to move can force a final
    margin ``>= t``; the optimal margin is the largest such ``t``. "Forcing >= t" for one side is
    "preventing >= -t + 1" for the other, so a position where the mover cannot force ``>= t`` is
    one where the opponent can force ``> -t``; endless play counts as 0, decided per threshold.
    The reference :func:`_margins_sweep` is tested on; used for movers other than sides 0/1."""
    tmargin = graph.margin.astype(np.int64)
    # achievable margins, from either side's point of view
    candidates = unique(np.concatenate([tmargin[terminal], -tmargin[terminal], [0]]))
    # every final margin (and endless play's 0) is >= the smallest candidate, so it is forced
    best = np.full(graph.n, candidates[0], dtype=np.int64)
    for t in candidates[1:]:
        ok = _can_force_at_least(graph, same, roffsets, redge, src, tmargin, terminal, t)
        best = np.where(ok, t, best)
    return best.astype(np.int16)


def _margins_sweep(
    graph: Graph, same: np.ndarray, roffsets: np.ndarray, redge: np.ndarray, src: np.ndarray,
    terminal: np.ndarray,
) -> np.ndarray:
    """The margins of :func:`_margins` in one attractor sweep per side
    (:func:`solver.engines._tier_jit.tier_margins`, the tiered solver's kernel, with no moves
    leaving the graph) instead of one threshold pass per candidate margin: every move is looked
    at twice, not twice per candidate. Sides to move 0 and 1 only. Blam! 3x3-3p (paranoid, three
    seats, 25 candidate margins each) spent 43 of its 60 s of solving in the threshold passes."""
    from solver.engines import _tier_jit

    n = graph.n
    parents = src[redge]
    wide = np.int32 if n < 2**31 - 1 else np.int64
    rparent = np.where(same[redge], parents, ~parents).astype(wide)  # ~p: the other side moves at p
    no_outside = np.zeros(n + 1, dtype=np.int32)
    best = _tier_jit.tier_margins(
        np.diff(graph.offsets).astype(np.int32), roffsets, rparent, no_outside,
        np.zeros(0, dtype=np.int32), terminal, graph.margin.astype(np.int32), graph.to_move.astype(np.int8),
    )
    return best.astype(np.int16, copy=False)


def _one_pass(
    graph: Graph, same: np.ndarray, roffsets: np.ndarray, redge: np.ndarray, src: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``(value, remoteness, margin int32)`` by one backward pass in topological order, or
    ``None`` when the graph has a cycle (see :func:`_retro_jit.solve_acyclic`)."""
    terminal = graph.kind == NodeKind.TERMINAL
    terminal_result = np.where(terminal, graph.result.astype(np.int8) + 1, -1).astype(np.int8)
    value, remoteness, margin, settled = _jit.solve_acyclic(
        src, same, roffsets, redge, np.diff(graph.offsets), terminal_result,
        graph.margin.astype(np.int32), NO_REMOTENESS,
    )
    if settled < graph.n:
        return None
    return value, remoteness, margin


def _margins_acyclic(
    graph: Graph, same: np.ndarray, roffsets: np.ndarray, redge: np.ndarray,
    src: np.ndarray | None = None,
) -> np.ndarray | None:
    """Margins by the one backward pass (``None`` on a cyclic graph)."""
    src = graph.parent_of_edge() if src is None else src
    out = _one_pass(graph, same, roffsets, redge, src)
    return None if out is None else out[2].astype(np.int16)


def _can_force_at_least(
    graph: Graph,
    same: np.ndarray,
    roffsets: np.ndarray,
    redge: np.ndarray,
    src_of_edge: np.ndarray,
    tmargin: np.ndarray,
    terminal: np.ndarray,
    t: int,
) -> np.ndarray:
    """``bool[n]``: the side to move can force a final margin ``>= t`` (endless play = 0).

    A reachability game: "good" positions for the mover are those from which the margin
    objective succeeds. Terminal: margin >= t. Endless play succeeds iff 0 >= t. Solved with
    counters like step 1 of the value retrograde, with the margin threshold mirrored for the
    opponent (the opponent succeeds at ``>= -t + 1``, i.e. the mover's margin ``< t``).
    """
    return _jit.can_force_at_least(
        src_of_edge, same, roffsets, redge, np.diff(graph.offsets), terminal, tmargin, int(t)
    )
