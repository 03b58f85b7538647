"""Retrograde analysis: value and exact remoteness of every position, by backward induction.

Works on the arrays of a :class:`~solver.engines.enumerate.Graph` (two-sided games with decision
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
margin of 0. It is computed by threshold retrograde passes (one per distinct terminal margin), so
it is exact on cyclic graphs too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from solver.core.game import NodeKind, Result
from solver.core.values import DRAW, FLIP, LOSE, NO_REMOTENESS, TIE, WIN
from solver.core.arrays import ranges, unique
from solver.engines.enumerate import Graph

#: callback(step_name, level, decided_so_far)
Progress = Callable[[str, int, int], None]

_UNDECIDED = np.int8(-1)


@dataclass
class Solved:
    """Per-row results of :func:`retrograde` (rows of the graph it was given)."""

    value: np.ndarray  # int8 codes (solver.core.values)
    remoteness: np.ndarray  # uint16, NO_REMOTENESS for draws
    margin: np.ndarray | None  # int16 from the side to move, scored games only


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
    bad = (graph.kind == NodeKind.CHANCE) | (graph.kind == NodeKind.SIMULTANEOUS)
    if bad.any():
        raise ValueError(
            "retrograde() handles decision and terminal nodes only; "
            "use solver.engines.value_iteration for chance or simultaneous nodes"
        )
    same = _same_player_edges(graph)
    roffsets, redge = graph.reverse()
    value, remoteness = _win_lose_tie(graph, same, roffsets, redge, progress)
    margin = _margins(graph, same, roffsets, redge) if scored else None
    return Solved(value=value, remoteness=remoteness, margin=margin)


def _same_player_edges(graph: Graph) -> np.ndarray:
    """``bool[E]``: the child's side to move is the parent's (the parent moves again)."""
    src = graph.parent_of_edge()
    return graph.to_move[graph.child] == graph.to_move[src]


def _parents_of(rows: np.ndarray, roffsets: np.ndarray, redge: np.ndarray) -> np.ndarray:
    """Edge ids of every edge ending in one of ``rows`` (vectorised CSR gather)."""
    starts = roffsets[rows]
    counts = roffsets[rows + 1] - starts
    return redge[ranges(starts, counts)]


def _win_lose_tie(
    graph: Graph,
    same: np.ndarray,
    roffsets: np.ndarray,
    redge: np.ndarray,
    progress: Progress | None,
) -> tuple[np.ndarray, np.ndarray]:
    n = graph.n
    src_of_edge = graph.parent_of_edge()
    value = np.full(n, _UNDECIDED, dtype=np.int8)
    remoteness = np.full(n, NO_REMOTENESS, dtype=np.uint16)
    counter = np.diff(graph.offsets).astype(np.int64)

    terminal = graph.kind == NodeKind.TERMINAL
    res = graph.result
    value[terminal & (res == Result.WIN)] = WIN
    value[terminal & (res == Result.LOSS)] = LOSE
    # Terminal ties are settled in step 2. (A non-terminal position without moves cannot occur:
    # games pass instead; it would stay undecided and become a draw.)
    frontier = np.flatnonzero(terminal & (value != _UNDECIDED))
    remoteness[frontier] = 0
    level = 0
    while len(frontier):
        edges = _parents_of(frontier, roffsets, redge)
        parents = src_of_edge[edges]
        cv = value[graph.child[edges]]
        eff = np.where(same[edges], cv, FLIP[cv])  # child's value for the parent's mover
        open_ = value[parents] == _UNDECIDED
        # eff == WIN: the mover reaches a position that is won for them.
        win_parents = unique(parents[open_ & (eff == WIN)])
        lose_edges = parents[open_ & (eff == LOSE)]
        if len(lose_edges):
            counter -= np.bincount(lose_edges, minlength=n)
        value[win_parents] = WIN
        remoteness[win_parents] = level + 1
        lost = unique(lose_edges)
        lost = lost[(counter[lost] == 0) & (value[lost] == _UNDECIDED)]
        value[lost] = LOSE
        remoteness[lost] = level + 1
        frontier = np.concatenate([win_parents, lost])
        level += 1
        if progress is not None:
            progress("win/lose", level, int((value != _UNDECIDED).sum()))

    # Step 2: ties, breadth first from terminal ties through undecided positions.
    frontier = np.flatnonzero(terminal & (res == Result.TIE) & (value == _UNDECIDED))
    value[frontier] = TIE
    remoteness[frontier] = 0
    level = 0
    while len(frontier):
        edges = _parents_of(frontier, roffsets, redge)
        parents = unique(src_of_edge[edges])
        parents = parents[value[parents] == _UNDECIDED]
        value[parents] = TIE
        remoteness[parents] = level + 1
        frontier = parents
        level += 1
        if progress is not None:
            progress("tie", level, int((value != _UNDECIDED).sum()))

    # Step 3: the rest is endless play.
    value[value == _UNDECIDED] = DRAW
    return value, remoteness


def _margins(graph: Graph, same: np.ndarray, roffsets: np.ndarray, redge: np.ndarray) -> np.ndarray:
    """Optimal final margin from the side to move (endless play = 0), exact on cyclic graphs.

    For each threshold ``t`` among the achievable margins (terminal margins and 0), a win/lose
    pass decides whether the side to move can force a final margin ``>= t``; the optimal margin
    is the largest such ``t``. "Forcing >= t" for one side is "preventing >= -t + 1" for the
    other, so a position where the mover cannot force ``>= t`` is one where the opponent can
    force ``> -t``; endless play counts as 0, decided per threshold.
    """
    acyclic = _margins_acyclic(graph, same, roffsets, redge)
    if acyclic is not None:
        return acyclic
    n = graph.n
    terminal = graph.kind == NodeKind.TERMINAL
    tmargin = graph.margin.astype(np.int64)
    # achievable margins, from either side's point of view
    candidates = unique(np.concatenate([tmargin[terminal], -tmargin[terminal], [0]]))
    src_of_edge = graph.parent_of_edge()
    # every final margin (and endless play's 0) is >= the smallest candidate, so it is forced
    best = np.full(n, candidates[0], dtype=np.int64)
    for t in candidates[1:]:
        ok = _can_force_at_least(graph, same, roffsets, redge, src_of_edge, tmargin, terminal, t)
        best = np.where(ok, t, best)
    return best.astype(np.int16)


def _margins_acyclic(
    graph: Graph, same: np.ndarray, roffsets: np.ndarray, redge: np.ndarray
) -> np.ndarray | None:
    """Margins by one backward pass in topological order (Kahn's algorithm, level by level):
    a position is settled once all its children are, as the best of their margins. Returns
    ``None`` when the graph has a cycle (some position never settles)."""
    n = graph.n
    src_of_edge = graph.parent_of_edge()
    pending = np.diff(graph.offsets).astype(np.int64)
    margin = np.zeros(n, dtype=np.int64)
    best = np.full(n, np.iinfo(np.int64).min, dtype=np.int64)
    terminal = graph.kind == NodeKind.TERMINAL
    margin[terminal] = graph.margin[terminal]
    frontier = np.flatnonzero(pending == 0)
    settled = len(frontier)
    while len(frontier):
        edges = _parents_of(frontier, roffsets, redge)
        parents = src_of_edge[edges]
        cm = margin[graph.child[edges]]
        np.maximum.at(best, parents, np.where(same[edges], cm, -cm))
        pending -= np.bincount(parents, minlength=n)
        ready = unique(parents)
        ready = ready[pending[ready] == 0]
        margin[ready] = best[ready]
        settled += len(ready)
        frontier = ready
    if settled < n:
        return None
    return margin.astype(np.int16)


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
    # We decide, for every position and both "roles", whether the player to move there wins the
    # threshold game. Since thresholds differ per perspective, run a two-threshold game: state
    # (row, role) where role 0 = side to move wants own margin >= t, role 1 = side to move wants
    # own margin >= 1 - t (i.e. the opponent's margin < t). A row's role flips across an edge
    # that changes the player, and stays across a same-player edge.
    n = graph.n
    win = np.zeros((2, n), dtype=bool)
    lose = np.zeros((2, n), dtype=bool)
    thresholds = (t, 1 - t)
    counter = np.tile(np.diff(graph.offsets).astype(np.int64), (2, 1))
    frontier: list[tuple[int, np.ndarray, bool]] = []
    for role in (0, 1):
        ok = terminal & (tmargin >= thresholds[role])
        bad = terminal & ~ok
        win[role, ok] = True
        lose[role, bad] = True
        frontier.append((role, np.flatnonzero(ok), True))
        frontier.append((role, np.flatnonzero(bad), False))
    while frontier:
        nxt: list[tuple[int, np.ndarray, bool]] = []
        new_win = [[], []]
        new_lose = [[], []]
        for role, rows, is_win in frontier:
            if not len(rows):
                continue
            edges = _parents_of(rows, roffsets, redge)
            parents = src_of_edge[edges]
            s = same[edges]
            # parent role: same player -> same role; other player -> other role
            for prole, mask in ((role, s), (1 - role, ~s)):
                p = parents[mask]
                if not len(p):
                    continue
                # the child's outcome for the parent's mover
                good_for_parent = is_win if prole == role else not is_win
                open_ = ~(win[prole, p] | lose[prole, p])
                p = p[open_]
                if good_for_parent:
                    p = unique(p)
                    win[prole, p] = True
                    new_win[prole].append(p)
                else:
                    counter[prole] -= np.bincount(p, minlength=n)
                    q = unique(p)
                    q = q[(counter[prole, q] == 0) & ~win[prole, q] & ~lose[prole, q]]
                    lose[prole, q] = True
                    new_lose[prole].append(q)
        for role in (0, 1):
            if new_win[role]:
                nxt.append((role, unique(np.concatenate(new_win[role])), True))
            if new_lose[role]:
                nxt.append((role, unique(np.concatenate(new_lose[role])), False))
        frontier = nxt
    undecided = ~(win[0] | lose[0])
    # Undecided = endless play is possible for both; endless play gives margin 0.
    return win[0] | (undecided & (0 >= t))
