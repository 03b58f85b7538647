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

The passes are the compiled kernels of :mod:`solver.engines._retro_jit`, the same ones the tiered
solver runs on each tier: a whole graph is a tier no move leaves.
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
    back = Backward.of(graph)
    if scored:  # margins need a backward pass anyway: on an acyclic graph it also gives values
        one_pass = _one_pass(back, graph.margin)
        if one_pass is not None:
            value, remoteness, margin = one_pass
            if progress is not None:
                progress("one pass", int(remoteness.max(initial=0)), graph.n)
            return Solved(value=value, remoteness=remoteness, margin=margin.astype(np.int16))
    value, remoteness = _values(back)
    if progress is not None:
        progress("win/lose/tie", int(remoteness[value != DRAW].max(initial=0)), graph.n)
    margin = _margins(graph, back) if scored else None
    return Solved(value=value, remoteness=remoteness, margin=margin)


@dataclass
class Backward:
    """A graph's moves read from the children (what every pass walks), with its terminals.

    ``rparent[roff[c]:roff[c + 1]]`` are the parents of row ``c``: ``p`` when ``p``'s mover is
    ``c``'s, ``~p`` when the mover changes (:func:`_retro_jit.signed_reverse`); ``outdeg`` the
    number of moves of each row; ``terminal_result`` -1 for a row that is not terminal, else the
    mover's result (0 loss, 1 tie, 2 win)."""

    outdeg: np.ndarray
    roff: np.ndarray
    rparent: np.ndarray
    terminal: np.ndarray
    terminal_result: np.ndarray

    @classmethod
    def of(cls, graph: Graph) -> "Backward":
        wide = np.int32 if graph.n < 2**31 - 1 else np.int64
        rparent = np.empty(len(graph.child), dtype=wide)
        roff = _jit.signed_reverse(graph.offsets, graph.child, graph.to_move, rparent)
        terminal = graph.kind == NodeKind.TERMINAL
        terminal_result = np.where(terminal, graph.result.astype(np.int8) + 1, -1).astype(np.int8)
        return cls(np.diff(graph.offsets).astype(np.int32), roff, rparent, terminal, terminal_result)


def _values(back: Backward) -> tuple[np.ndarray, np.ndarray]:
    """Values and remoteness: the tier kernel with no move leaving the graph."""
    return _jit.tier_values(back.outdeg, back.roff, back.rparent,
                            *_jit.no_outside(len(back.outdeg), NO_REMOTENESS),
                            back.terminal_result, NO_REMOTENESS)


def _margins(graph: Graph, back: Backward) -> np.ndarray:
    """Optimal final margin from the side to move (endless play = 0), exact on cyclic graphs:
    one attractor sweep per side (:func:`_margins_sweep`) when the sides to move are 0 and 1
    (every two-sided graph, and each seat's view of a paranoid one), else the threshold passes
    (:func:`_threshold_margins`). Both give the same margins."""
    if graph.n == 0 or (int(graph.to_move.min()) >= 0 and int(graph.to_move.max()) <= 1):
        return _margins_sweep(graph, back)
    return _threshold_margins(graph, back)


def _threshold_margins(graph: Graph, back: Backward) -> np.ndarray:
    """Margins by threshold passes: for each threshold ``t`` among the achievable margins
    (terminal margins and 0), a win/lose pass decides whether the side to move can force a final
    margin ``>= t``; the optimal margin is the largest such ``t``. "Forcing >= t" for one side is
    "preventing >= -t + 1" for the other, so a position where the mover cannot force ``>= t`` is
    one where the opponent can force ``> -t``; endless play counts as 0, decided per threshold.
    The reference :func:`_margins_sweep` is tested on; used for movers other than sides 0/1."""
    terminal = back.terminal
    tmargin = graph.margin.astype(np.int64)
    # achievable margins, from either side's point of view
    candidates = unique(np.concatenate([tmargin[terminal], -tmargin[terminal], [0]]))
    # every final margin (and endless play's 0) is >= the smallest candidate, so it is forced
    best = np.full(graph.n, candidates[0], dtype=np.int64)
    for t in candidates[1:]:
        ok = _can_force_at_least(graph, back, t)
        best = np.where(ok, t, best)
    return best.astype(np.int16)


def _margins_sweep(graph: Graph, back: Backward) -> np.ndarray:
    """The margins of :func:`_margins` in one attractor sweep per side
    (:func:`_retro_jit.tier_margins`, the tiered solver's kernel, with no moves leaving the
    graph) instead of one threshold pass per candidate margin: every move is looked at twice,
    not twice per candidate. Sides to move 0 and 1 only. Blam! 3x3-3p (paranoid, three seats,
    25 candidate margins each) spent 43 of its 60 s of solving in the threshold passes."""
    best = _jit.tier_margins(
        back.outdeg, back.roff, back.rparent, np.zeros(graph.n + 1, dtype=np.int32),
        np.zeros(0, dtype=np.int32), back.terminal, graph.margin.astype(np.int32),
        graph.to_move.astype(np.int8),
    )
    return best.astype(np.int16, copy=False)


def _one_pass(back: Backward, margin: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``(value, remoteness, margin int32)`` by one backward pass in topological order, or
    ``None`` when the graph has a cycle (see :func:`_retro_jit.solve_acyclic`). ``margin``: the
    terminal margins (zeros when ``None``)."""
    n = len(back.outdeg)
    tmargin = np.zeros(n, dtype=np.int32) if margin is None else margin.astype(np.int32)
    value, remoteness, margins, settled = _jit.solve_acyclic(
        back.outdeg, back.roff, back.rparent, back.terminal_result, tmargin, NO_REMOTENESS,
    )
    if settled < n:
        return None
    return value, remoteness, margins


def _can_force_at_least(graph: Graph, back: Backward, t: int) -> np.ndarray:
    """``bool[n]``: the side to move can force a final margin ``>= t`` (endless play = 0).

    A reachability game: "good" positions for the mover are those from which the margin
    objective succeeds. Terminal: margin >= t. Endless play succeeds iff 0 >= t. Solved with
    counters like step 1 of the values, with the margin threshold mirrored for the opponent
    (the opponent succeeds at ``>= -t + 1``, i.e. the mover's margin ``< t``)."""
    return _jit.tier_force_at_least(
        back.outdeg, back.roff, back.rparent, np.zeros(graph.n + 1, dtype=np.int32),
        np.zeros(0, dtype=np.int32), back.terminal, graph.margin.astype(np.int64), int(t),
    )
