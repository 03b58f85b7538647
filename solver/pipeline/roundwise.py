"""Secret-choice games solved round by round from their keys, their moves kept on disk.

A game whose rounds each start with a secret simultaneous choice (Petal Battle) names a phase
within the round (:meth:`~solver.core.game.Game.round_phase`) that rises along every move
between decision and chance nodes. The round engine (:mod:`solver.engines.rounds`) then needs no
children-first order found in a graph: the phases are one. Shapley's value iteration runs here
as there (the same iteration, the same Gauss-Seidel order, the same certificate): each sweep
goes through the positions phase by phase, highest first, and hands each chunk to the engine's
array function :func:`~solver.engines.rounds.sweep_rows`; then the round starts' matrix games
are solved from the values the sweep leaves. The first sweep of a run expands the positions
from their keys and finds their children (the enumeration's work without its deduplication)
and keeps the children it found, 4 bytes a move, in the work folder (:class:`_HeldMoves`); the
other sweeps read them back in order through the page cache, with the same iterates (the sweeps
5.6 times faster on Petal Battle 6, about 10 times on 8-2); once few positions still move, the
sweeps go through the parents of those that moved only. A sweep that changes no value by more
than ``tol`` ends the iteration; so does one whose largest change repeats exactly
:data:`CYCLE_SWEEPS` times (the iteration cycles: Petal Battle 8-2). Held in memory: the values (8 bytes a position), the kinds and
sides to move (2), the phase order (4) and, while the first sweep runs, the keys (8, mapped
from the work folder) and their lookup's index, against the graph's 57 and the round engine's
60 more (Petal Battle 6-2, measured).

What it gives: every position's value (own view), the round starts' optimal mixes at the final
values, the number of sweeps and the certificate (every equation re-checked from the stored
values: the largest violation), and every position's win and loss probabilities under the stored
strategies (the mixes, and at each decision node the best move with the round engine's loop
tie-break applied to every move: passes find each position's fewest moves to an end (until
none falls) and where its round ends, then the round starts' probabilities solve a linear system of their
own, and one pass gives the rest; games with chance nodes in play get none).

Proven bounds (``bounds=True``; the pipeline's default) come from two more value iterations, not
from the whole-graph solve's best replies (:mod:`solver.engines.bounds`, which needs the graph
and hundreds of bytes a position): one from every unfinished position *lost* for Player 1, one
from every unfinished position *won*. After ``k`` sweeps (``k`` rounds: phases are acyclic
within a round) the first holds what Player 1 guarantees in the game cut off after ``k`` rounds
as his loss, which is at most what he guarantees in the real game, where endless play counts 0
(the same strategy, played on, does at least as well); the second what Player 2 guarantees the
same way. Each sweep's bounds are proven, not only the limit's, so a run stopped anywhere keeps
proven bounds. At round starts each bound takes what the mover's optimal mix guarantees against
every reply (``guarantee``), not the LP's value, so the LP's tolerances cannot cross the value.
Where neither side can keep play going for ever (Petal Battle 6: every position closes within
1e-9, in seconds against the whole graph's 13 minutes) the two meet; where one can, they
differ by what endless play is worth and the interval says so (the table is then not certified).
"""

from __future__ import annotations

import os
import shutil
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

import numpy as np
import polars as pl
from numba import njit
import pyarrow as pa

import solver
from solver.core.arrays import SortedLookup
from solver.core.game import Game, NodeKind
from solver.engines.enumerate import Reached, reachable
from solver.engines.rounds import TIE_BREAK, relax_node, sweep_rows
from solver.engines.simultaneous import CERTIFICATE_THRESHOLD, TOL_FLOOR, Counters, SimBlock
from solver.engines.stochastic import terminal_ends, validate_tol
from solver.pipeline.memory import arrow_on_malloc, return_freed_memory
from solver.pipeline.tierwork import tier_file
from solver.pipeline.workfiles import atomic_json, atomic_npy, read_json, remove_stale
from solver.tables import mix_column, write_parquet

_D = int(NodeKind.DECISION)
_C = int(NodeKind.CHANCE)
_S = int(NodeKind.SIMULTANEOUS)
_T = int(NodeKind.TERMINAL)
BIG = np.int32(2**31 - 1)  # (no end reached yet)

#: bytes a position while the sweeps run: keys 8, values 8, kinds and sides 2, phase order 4 and
#: the lookup's index (22.3 on Petal Battle 6-2, held_bytes / positions), plus the round starts'
#: matrices and what the preparation leaves to the allocator: 11.4 GB resident on Petal Battle 8-2
#: (31 bytes a position, top, 2026-12-05) while every sweep expanded; once the moves are held and
#: the keys only mapped, 9.4 GB of arrays (26 a position) beside the moves' pages in the page cache;
#: the bounds' sweeps after them: 13.4-15.4 GB anonymous (42 a position; the search's arrays were
#: read then, they are mapped since)
SWEEP_BYTES = 42
#: bytes a position while the win probabilities are found: the sweeps' arrays, the distances to
#: an end (4) and the win and loss probabilities (16), measured on Petal Battle 8-2: 21.9 GB
#: anonymous resident (59.4 a position, 2026-12-05, while the active sweeps' arrays were still
#: held; they are let go before it since); with the bounds and the search's arrays read it ran out
#: of 24 GB, with them mapped 16.4 GB anonymous (44.6 a position, 2026-12-05)
POLICY_BYTES = 60
#: the sweeps stop when their largest change has equalled the one before, bit for bit, this many
#: times in a row: the iteration cycles (Petal Battle 8-2 from sweep 46 on: values of 81,458
#: positions swap between 0.29472 and 0.29424 every sweep) and will not converge
CYCLE_SWEEPS = 8
#: an interval between the bounds at most this wide counts as closed (the stored value proven)
BOUND_CLOSED = 1e-9
#: sweeps of each bound at most, by default (the most rounds the game is cut off after;
#: ``--bound-rounds``): Petal Battle 6 closes in 17, 6-2 in 4; on 8-2 the start's interval closes
#: within 1e-9 in about 30 while positions where a side can keep play going still move (their
#: bounds approach what endless play as a loss or a win is worth, by about 6% a sweep)
BOUND_SWEEPS = 100
#: what the bounds are (written in the tables' metadata)
BOUNDS_DOC = (
    "truncation: value iteration from every unfinished position lost for Player 1 gives, after k sweeps, what "
    "Player 1 guarantees when the game is cut off after k rounds as his loss (a lower bound on the value, "
    "where endless play counts 0); from every unfinished position won, what Player 2 guarantees (an upper "
    "bound). Each round start takes what the mover's optimal mix guarantees against every reply, not the "
    "LP's value: the LP's tolerances cannot cross the value (only float64 rounding of a few products, ~1e-16)")
#: bytes a position at the search's peak (every key found, the ply's children and their
#: deduplication), measured on Petal Battle 8-2: 17.7 GiB sampled at ply 16 of 29 (51.7)
SEARCH_BYTES = 52


#: bytes a position at the peak of a whole round-by-round solve (its hungriest stage)
PEAK_BYTES = max(SEARCH_BYTES, SWEEP_BYTES, POLICY_BYTES)


def estimate_bytes(positions: int) -> int:
    """Peak memory of a round-by-round solve of ``positions`` positions."""
    return int(PEAK_BYTES * positions)


def goes_on(sweeps: int, change: float, repeats: int, limit: int, tol: float) -> bool:
    """Whether an iteration sweeps again: under its limit, not converged, not cycling."""
    return sweeps < limit and not change < tol and repeats < CYCLE_SWEEPS


#: seconds a position of one sweep that reads the held moves, measured on Petal Battle 8-2: 40-50 s
#: a sweep for 368,197,732 positions (2026-12-05; the first sweep, which expands, took 5-8 min)
SWEEP_SECONDS_PER_POSITION = 50 / 368_197_732
#: the sweeps Petal Battle 8-2's solve took: 46 of the values (until they cycled) and 45 of each bound
MEASURED_SWEEPS = 46 + 2 * 45


def needs(positions: int) -> str:
    """What a round-by-round solve of ``positions`` positions would take here, in words, scaled
    from what Petal Battle 8-2 took (memory, disk for the held moves, time a sweep)."""
    sweep = SWEEP_SECONDS_PER_POSITION * positions
    return (f"round by round about {estimate_bytes(positions) / 2**30:,.0f} GB of memory at its peak "
            f"({PEAK_BYTES} bytes a position), up to "
            f"{MOVES_DISK_BYTES * positions / 2**30:,.0f} GB of disk for its held moves and about "
            f"{sweep / 60:,.0f} min a sweep ({MEASURED_SWEEPS} sweeps, as Petal Battle 8-2 took: about "
            f"{sweep * MEASURED_SWEEPS / 3600:,.0f} h), scaled from Petal Battle 8-2")


#: callback(stage, done, total, change): stage "find" (plies, positions, frontier),
#: "sweep" (positions swept, positions, largest change so far), "value" (sweeps, 0, change) after
#: each sweep, "lower"/"upper" (sweeps, 0, change) before and after each sweep of a bound,
#: "certify" (sweeps, 0, change) before the certificate's sweep and "policy" (sweeps, 0, 0) before
#: the win probabilities
Progress = Callable[[str, int, int, float], None]


@dataclass
class RoundwiseSolution:
    """What :func:`solve_by_rounds` found. ``keys`` sorted; ``value`` each position's value to its
    side to move (``to_move``); ``kind`` its node kind; ``root`` the start's row. ``mixes``:
    per round start row (``sims``), Player 1's and Player 2's optimal mixes at the final values.
    ``stats``: sweeps, last change, residual (certificate), times and bytes."""

    keys: np.ndarray
    value: np.ndarray
    kind: np.ndarray
    to_move: np.ndarray
    root: int
    sims: np.ndarray
    mixes: tuple[np.ndarray, np.ndarray]
    converged: bool
    stats: dict[str, Any] = field(default_factory=dict)
    #: the ply at which each position was first reached (``None``: a work folder that predates it)
    ply: np.ndarray | None = None
    #: each position's number of moves (counted by the certificate's sweep)
    num_moves: np.ndarray | None = None
    #: win and loss probabilities of the side to move under the stored strategies (``None``:
    #: not computed)
    p_win: np.ndarray | None = None
    p_loss: np.ndarray | None = None
    #: proven bounds (``bounds=True``): Player 1's lower and upper bound on each position's value,
    #: each stored in the own view of the side to move (so at Player 2's positions ``lower`` is
    #: the larger); ``None``: not computed
    lower: np.ndarray | None = None
    upper: np.ndarray | None = None

    def interval(self, rows: np.ndarray | slice = slice(None)) -> tuple[np.ndarray, np.ndarray]:
        """The proven interval of ``rows``' values, from their side to move."""
        assert self.lower is not None and self.upper is not None
        first = self.to_move[rows] == 0
        lo, hi = np.asarray(self.lower[rows]), np.asarray(self.upper[rows])
        return np.where(first, lo, hi), np.where(first, hi, lo)

    @property
    def start_value(self) -> float:
        """The start's value to Player 1."""
        v = float(self.value[self.root])
        return v if int(self.to_move[self.root]) == 0 else -v

    def mix_at(self, row: int) -> tuple[np.ndarray, np.ndarray]:
        """Both players' mixes at round start ``row``."""
        at = int(np.searchsorted(self.sims, row))
        if at >= len(self.sims) or int(self.sims[at]) != row:
            raise ValueError(f"row {row} is not a round start")
        return self.mixes[0][at], self.mixes[1][at]


class _RoundStarts:
    """The round starts' matrix games, solved by the engines' own
    :class:`~solver.engines.simultaneous.SimBlock` on a small index space of their own: the round
    starts first, then the positions their moves reach (found once: 36 a start in Petal Battle),
    so that the block never indexes the whole variant's moves. A start whose matrix moved by at
    most ``skip`` since its last solve keeps its value, as in the round engine."""

    def __init__(self, game: Game, keys: np.ndarray, find: SortedLookup, sims: np.ndarray, symmetry: bool,
                 chunk: int) -> None:
        self.sims = sims
        rows: list[np.ndarray] = []
        children: list[np.ndarray] = []
        degrees: list[np.ndarray] = []
        for a in range(0, len(sims), chunk):
            exp = game.expand(keys[sims[a : a + chunk]], canonical=symmetry)
            if exp.sim_rows is None:
                raise ValueError("the game's expansion gives no sim_rows at its simultaneous nodes")
            rows.append(np.asarray(exp.sim_rows, dtype=np.int64))
            children.append(_found(find, keys, exp.children))
            degrees.append(np.diff(exp.offsets))
        r = np.concatenate(rows) if rows else np.zeros(0, np.int64)
        child = np.concatenate(children) if children else np.zeros(0, np.int64)
        deg = np.concatenate(degrees) if degrees else np.zeros(0, np.int64)
        offsets = np.zeros(len(sims) + 1, np.int64)
        np.cumsum(deg, out=offsets[1:])
        self.moves = int(len(child))
        self.degrees = deg
        self.offsets = offsets
        self.actions = r  # player 1's actions at each start (its matrix's rows)
        # the local space: the starts (0..S-1), then every other position their moves reach
        reached = np.setdiff1d(np.unique(child), sims, assume_unique=True)
        self.space = np.concatenate([sims.astype(np.int64), reached])
        order = np.argsort(self.space, kind="stable")
        self.child = order[np.searchsorted(self.space[order], child)]
        self.block = SimBlock(np.arange(len(sims)), offsets, r, deg)
        self.counters = Counters()

    def forget(self) -> None:
        """Drop the matrices kept for ``skip``: the next solve solves every round start."""
        self.block.last = [None] * len(self.block.groups)

    def relax(self, dist: np.ndarray, big: int) -> bool:
        """:func:`_relax_rows` at the round starts; True if a distance fell."""
        if not len(self.sims):
            return False
        d = dist[self.space[self.child]].astype(np.int64)
        d[d == big] = big - 1
        low = np.minimum.reduceat(d, self.offsets[:-1]) + 1 if len(d) else np.full(len(self.sims), big)
        low[self.degrees == 0] = big
        now = dist[self.sims]
        fell = low < now
        dist[self.sims[fell]] = low[fell]
        return bool(fell.any())

    def policy(self, mixes: tuple[np.ndarray, np.ndarray], ends: np.ndarray, kind: np.ndarray,
               to_move: np.ndarray, result: np.ndarray, *, tol: float, max_iter: int
               ) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
        """The round starts' win and loss probabilities under the mixes ``mixes`` and the best
        moves, whose next round start or end from each decision node is ``ends``: play from a
        start reaches, within its round, an end or a start, so the starts' probabilities solve
        a linear system of their own (as :func:`solver.engines.rounds._round_policy`'s walks
        find it), solved by :func:`_start_iteration`."""
        k = len(self.sims)
        starts_of = np.repeat(np.arange(k), self.degrees)
        t = np.arange(len(self.child)) - self.offsets[starts_of]
        width = self.degrees // np.maximum(self.actions, 1)
        cols_n = width[starts_of]
        p = mixes[0][starts_of, t // cols_n] * mixes[1][starts_of, t % cols_n]
        del t, cols_n
        used = np.flatnonzero(p > 0)
        a, p = starts_of[used], p[used]
        e = self.space[self.child[used]]
        del used, starts_of
        plain = (kind[e] != _S) & (kind[e] != _T)
        e[plain] = ends[e[plain]]
        del plain
        found = e >= 0  # (a decision node without moves: endless)
        a, p, e = a[found], p[found], e[found]
        flip = to_move[e] != to_move[self.sims[a]]
        res = np.asarray(result)
        ended = kind[e] == _T
        won = np.where(flip, res[e] < 0, res[e] > 0) & ended
        lost = np.where(flip, res[e] > 0, res[e] < 0) & ended
        b_win = np.bincount(a[won], weights=p[won], minlength=k)
        b_loss = np.bincount(a[lost], weights=p[lost], minlength=k)
        go = ~ended
        a, p, e, flip = a[go], p[go], e[go], flip[go]
        cols = np.searchsorted(self.sims, e)
        first = np.zeros(k + 1, np.int64)
        np.cumsum(np.bincount(a, minlength=k), out=first[1:])
        w, l = np.zeros(k), np.zeros(k)
        iterations, change = _start_iteration(first, cols, p, flip, b_win, b_loss, w, l, tol, max_iter)
        return np.clip(w, 0.0, 1.0), np.clip(l, 0.0, 1.0), {"policy_iterations": int(iterations),
                                                            "policy_residual": float(change)}

    def solve(self, value: np.ndarray, to_move: np.ndarray, *, skip: float | None = None,
              mixes: bool = False, guarantee: str | None = None
              ) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray] | None]:
        """New values (own view) of the round starts from ``value``; with ``mixes``, both
        players' optimal mixes (padded with zeros to the widest shape); ``guarantee``: what
        one player's optimal mix guarantees instead of the value (:meth:`SimBlock.solve`)."""
        strategies: dict[int, tuple[np.ndarray, np.ndarray]] | None = {} if mixes else None
        out = self.block.solve(value[self.space], self.child, to_move[self.space], self.counters, skip=skip,
                               strategies=strategies, guarantee=guarantee)
        if strategies is None:
            return out, None
        width_r = max((len(x) for x, _ in strategies.values()), default=0)
        width_c = max((len(y) for _, y in strategies.values()), default=0)
        mix = (np.zeros((len(self.sims), width_r)), np.zeros((len(self.sims), width_c)))
        for at, (x, y) in strategies.items():
            mix[0][at, : len(x)] = x
            mix[1][at, : len(y)] = y
        return out, mix


def _found(find: SortedLookup, keys: np.ndarray, children: np.ndarray) -> np.ndarray:
    """The rows of ``children`` (keys), every one of which must be among ``keys``."""
    at = find(children)
    bad = (at >= len(keys)) | (keys[np.minimum(at, len(keys) - 1)] != children)
    if np.any(bad):
        k = int(children[np.flatnonzero(bad)[0]])
        raise ValueError(f"a move reaches position {k}, which the search did not find: the game's "
                         "expansion and its search disagree (run pyramids check)")
    return at


def phase_order(game: Game, keys: np.ndarray, kind: np.ndarray, chunk: int = 1 << 22
                ) -> tuple[np.ndarray, list[tuple[int, int, int]]]:
    """The decision and chance nodes by phase, highest first: ``(rows, groups)`` with
    ``groups`` a list of ``(phase, start, stop)`` slices of ``rows`` (int32 below 2**31; a
    counting sort: no temporary beyond the phases themselves)."""
    n = len(keys)
    phase = np.zeros(n, np.uint16)
    for a in range(0, n, chunk):
        phase[a : a + chunk] = game.round_phase(keys[a : a + chunk])
    plain = (kind == _D) | (kind == _C)
    counts = np.bincount(phase[plain], minlength=1).astype(np.int64)
    present = np.flatnonzero(counts)[::-1]  # highest phase first
    groups: list[tuple[int, int, int]] = []
    start = np.zeros(len(counts), np.int64)
    at = 0
    for p in present.tolist():
        groups.append((int(p), at, at + int(counts[p])))
        start[p] = at
        at += int(counts[p])
    order = np.empty(at, np.int32 if n < 2**31 - 1 else np.int64)
    _fill_order(phase, plain, start, order)
    return order, groups


@njit(cache=True, nogil=True)
def _fill_order(phase, plain, start, order):  # pragma: no cover - compiled
    """Rows of ``plain`` positions placed at their phase's next slot, in row order."""
    for i in range(len(phase)):
        if plain[i]:
            p = phase[i]
            order[start[p]] = i
            start[p] += 1


@njit(cache=True, nogil=True)
def _best_child(i, lo, hi, child, to_move, value, dist, g):  # pragma: no cover - compiled
    """The child of decision node ``i`` (moves ``lo..hi`` of ``child``) with the largest
    tie-broken value seen from ``i`` (-1 without moves): each move's value counts
    ``1 - g * (1 + dist[child])`` times, so that of equal moves a winner takes the one nearest an
    end and a loser the farthest (the round engine's loop tie-break, applied to every move: the
    components it discounts only inside are not found here); the first of equals."""
    best = -np.inf
    arg = -1
    for e in range(lo, hi):
        c = child[e]
        q = value[c] if to_move[c] == to_move[i] else -value[c]
        q = q * (1.0 - g * (1.0 + dist[c]))
        if q > best:
            best = q
            arg = c
    return arg


@njit(cache=True, nogil=True)
def _follow(rows, offsets, child, kind, to_move, value, dist, g, ends):  # pragma: no cover - compiled
    """Where each decision node ``rows[j]`` (moves ``offsets[j]..offsets[j + 1]`` of ``child``)
    leads under the best moves (:func:`_best_child`): the next round start or end, into
    ``ends`` (-1: a node without moves). Children of a higher phase must have theirs already."""
    for j in range(len(rows)):
        i = rows[j]
        c = _best_child(i, offsets[j], offsets[j + 1], child, to_move, value, dist, g)
        if c < 0:
            ends[i] = -1
        elif kind[c] == _S or kind[c] == _T:
            ends[i] = c
        else:
            ends[i] = ends[c]


@njit(cache=True, nogil=True)
def _policy_rows(rows, offsets, child, to_move, value, dist, g, p_win, p_loss):  # pragma: no cover - compiled
    """Win and loss probabilities of decision nodes ``rows`` under the best moves, from their
    chosen child's (children of a higher phase first)."""
    for j in range(len(rows)):
        i = rows[j]
        c = _best_child(i, offsets[j], offsets[j + 1], child, to_move, value, dist, g)
        if c < 0:
            p_win[i] = 0.0
            p_loss[i] = 0.0
        elif to_move[c] == to_move[i]:
            p_win[i] = p_win[c]
            p_loss[i] = p_loss[c]
        else:
            p_win[i] = p_loss[c]
            p_loss[i] = p_win[c]


@njit(cache=True, nogil=True)
def _relax_rows(rows, offsets, child, dist, big):  # pragma: no cover - compiled
    """``dist[i] = min(dist[i], 1 + min over its children)`` for ``rows`` (moves ``offsets[j]..``
    of ``child``); 1.0 if a distance fell, else 0.0."""
    changed = 0.0
    for j in range(len(rows)):
        if relax_node(rows[j], offsets[j], offsets[j + 1], child, dist, big):
            changed = 1.0
    return changed


@njit(cache=True, nogil=True)
def _start_iteration(first, cols, vals, swap, b_win, b_loss, w, l, tol, max_iter):  # pragma: no cover - compiled
    """Gauss-Seidel on the round starts' win and loss probabilities ``w = b + M w`` (``l`` where
    ``swap``), in place from 0: every coefficient is at least 0, so the iterates rise to the
    least solution (endless play counts as neither). Returns (iterations, last change)."""
    res = np.inf
    for it in range(max_iter):
        res = 0.0
        for a in range(len(b_win)):
            sw = b_win[a]
            sl = b_loss[a]
            for t in range(first[a], first[a + 1]):
                c = cols[t]
                if swap[t]:
                    sw += vals[t] * l[c]
                    sl += vals[t] * w[c]
                else:
                    sw += vals[t] * w[c]
                    sl += vals[t] * l[c]
            d = max(abs(sw - w[a]), abs(sl - l[a]))
            if d > res:
                res = d
            w[a] = sw
            l[a] = sl
        if res < tol:
            return it + 1, res
    return max_iter, res


@njit(cache=True, nogil=True)
def _parents_of(rows, offsets, child, inside):  # pragma: no cover - compiled
    """The rows among ``rows`` (moves ``offsets[j]..offsets[j + 1]`` of ``child``) with a child
    ``inside``, with all their moves: ``(rows, offsets, children)``."""
    keep = np.zeros(len(rows), np.bool_)
    count = 0
    edges = 0
    for j in range(len(rows)):
        for e in range(offsets[j], offsets[j + 1]):
            if inside[child[e]]:
                keep[j] = True
                break
        if keep[j]:
            count += 1
            edges += offsets[j + 1] - offsets[j]
    out_rows = np.empty(count, rows.dtype)
    out_offsets = np.zeros(count + 1, np.int64)
    out_child = np.empty(edges, child.dtype)
    k = 0
    at = 0
    for j in range(len(rows)):
        if keep[j]:
            out_rows[k] = rows[j]
            for e in range(offsets[j], offsets[j + 1]):
                out_child[at] = child[e]
                at += 1
            k += 1
            out_offsets[k] = at
    return out_rows, out_offsets, out_child


@njit(cache=True, nogil=True)
def _widths(lower, upper, to_move, closed):  # pragma: no cover - compiled
    """The widest interval between the bounds ``lower`` and ``upper`` (each Player 1's bound,
    stored in the own view of the side to move) and (positions where they cross by more than
    rounding, positions where they are at most ``closed`` apart)."""
    widest = 0.0
    crossed = 0
    shut = 0
    for i in range(len(lower)):
        w = upper[i] - lower[i] if to_move[i] == 0 else lower[i] - upper[i]
        if w > widest:
            widest = w
        if w < -1e-9:
            crossed += 1
        if w <= closed:
            shut += 1
    return widest, (crossed, shut)


@njit(cache=True, nogil=True)
def _largest_gap(p_win, p_loss, value):  # pragma: no cover - compiled
    """The largest ``|p_win - p_loss - value|``: where the strategies earn less than the value."""
    gap = 0.0
    for i in range(len(value)):
        d = abs(p_win[i] - p_loss[i] - value[i])
        if d > gap:
            gap = d
    return gap


def solve_by_rounds(
    game: Game,
    *,
    tol: float = 1e-12,
    max_sweeps: int = 100_000,
    symmetry: bool = True,
    chunk: int = 200_000,
    workers: int | None = None,
    progress: Progress | None = None,
    reached: Reached | None = None,
    work: Path | None = None,
    max_positions: int | None = None,
    hold_moves: bool = True,
    win_probabilities: bool = True,
    max_policy_iterations: int = 1_000_000,
    active_share: float = 0.1,
    bounds: bool = False,
    bound_sweeps: int | None = None,
) -> RoundwiseSolution:
    """Solve a game that names round phases (:attr:`Game.has_round_phases`) from its keys.

    ``tol``: sweeps stop when no value moved by more than it (at least
    :data:`~solver.engines.simultaneous.TOL_FLOOR`, as the whole-graph engines); ``chunk``
    positions are expanded at a time, by ``workers`` threads (default: every CPU; the search
    uses as many processes). ``reached``: the search's result when the caller has it.
    ``work``: a folder that keeps the search's result and the values after every sweep, so that
    a run stopped in any way resumes from its last sweep (the same iterates, except that the
    round starts whose matrix moved by at most ``tol / 10`` are solved again once: the same
    result within the tolerance).
    ``hold_moves``: the first full sweep of a run keeps every decision node's children (4 bytes
    a move, in ``work`` when given, else in memory) and the other sweeps read them instead of
    expanding the positions again (the same iterates; games with chance nodes in play, or
    without the disk room, always expand).
    The sweeps also stop when their largest change has equalled the one before, bit for bit,
    :data:`CYCLE_SWEEPS` times in a row: the iteration cycles and will not converge
    (``stats["cycling"]``; the solution is then neither converged nor certified).
    ``active_share``: with the moves held, once at most this share of the positions moved in a
    full sweep, the sweeps go through the parents of the positions that moved only, while no
    other position moves (the same iterates; 0: every sweep goes through every position).
    ``bounds``: after the values, proven bounds on every position's value, by two more value
    iterations (:data:`BOUNDS_DOC`): from every unfinished position lost for Player 1 (the lower
    bound) and won (the upper), each until no value moves by more than ``tol`` or
    ``bound_sweeps`` sweeps (the most rounds the game is cut off after; default ``max_sweeps``);
    kept in ``work`` as ``lower``/``upper`` like the values.
    ``win_probabilities``: each position's win and loss probabilities under the stored
    strategies (the round starts' mixes, the first best move elsewhere; endless play counts as
    neither), from two more passes and a linear system on the round starts
    (:meth:`_RoundStarts.policy`, at most ``max_policy_iterations`` Gauss-Seidel iterations);
    not for games with chance nodes in play.
    Raises ``ValueError`` in one line when a move does not raise the phase, when the game names
    no phases or when ``work`` belongs to another variant."""
    validate_tol(tol)
    if not game.has_round_phases:
        raise ValueError(f"{game.name} names no round phases (Game.round_phase): solve it with the "
                         "whole-graph secret-choice engine")
    asked_tol, tol = tol, max(tol, TOL_FLOOR)
    workers = max(1, (os.cpu_count() or 1) if workers is None else workers)
    t0 = time.perf_counter()
    folder = _WorkFolder(work, game, symmetry) if work is not None else None
    if reached is None and folder is not None:
        reached = folder.reached()
    if reached is None:
        reached = reachable(game, symmetry=symmetry, chunk=chunk, workers=workers, max_positions=max_positions,
                            progress=None if progress is None else
                            (lambda ply, seen, frontier: progress("find", ply, seen, float(frontier))))
        if folder is not None:
            folder.keep_reached(reached)
    return_freed_memory()  # (the search's expansions and merges: their pages go back to the system)
    t_found = time.perf_counter()
    keys, kind, to_move = reached.keys, reached.kind, reached.to_move
    n = len(keys)
    resumed = folder.values(n) if folder is not None else None
    resumed_at, repeats = None, 0
    if resumed is not None:
        value, sweeps, change, repeats = resumed
        resumed_at, resumed = sweeps, None  # (the tuple would hold the values while the bounds run)
        if progress is not None:
            progress("value", sweeps, 0, change)  # (where the run resumes)
    else:
        value = np.zeros(n)
        terminal = kind == _T
        value[terminal] = np.sign(reached.result[terminal])
        del terminal
        sweeps, change = 0, np.inf
    find = SortedLookup(keys)
    order, groups = phase_order(game, keys, kind)
    sims = np.flatnonzero(kind == _S)
    starts = _RoundStarts(game, keys, find, sims, symmetry, chunk)
    return_freed_memory()
    t_ready = time.perf_counter()
    skip = tol / 10
    pool = ThreadPoolExecutor(workers) if workers > 1 else None

    moves = [0]  # counted by the certificate's sweep
    num_moves = np.zeros(0, np.uint16)


    jobs = [(p, s, min(b, s + chunk)) for p, a, b in groups for s in range(a, b, chunk)]
    by_phase = [[j for j in range(len(jobs)) if jobs[j][0] == p] for p, _, _ in groups]
    # the moves are kept by the first full sweep and read by the others (games without chance nodes)
    held = (_HeldMoves(folder.path if folder is not None else None, len(order), jobs,
                       np.int32 if n < 2**31 - 1 else np.int64)
            if hold_moves and not np.any(kind == _C) and _room_for_moves(folder, n) else None)
    building = [False]
    # once few positions still move (at most ``active_share`` of them in a full sweep), sweeps go
    # over the parents of those that moved (``inside``) only: every other position's children
    # kept their values, so it would keep its own; the same iterates, bit for bit. A position
    # outside that moves sends the rest of its sweep, and the next, through every position.
    tracking = held is not None and active_share > 0
    moved = np.zeros(n if tracking else 0, np.bool_)
    inside = np.zeros(0, np.bool_)
    active: list[list[tuple[np.ndarray, np.ndarray, np.ndarray]]] | None = None
    counts = {"full_sweeps": 0, "active_sweeps": 0, "active_rows": 0, "active_left": 0}

    cur = [value]  # the iterate the sweeps update: the values, or one of the bounds

    def moves_of(j: int, check: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, bool, Any]:
        """Job ``j``'s rows and their moves: read from the held moves, or expanded and found
        (then also given to keep, while the held moves are being written)."""
        p, a, b = jobs[j]
        rows = order[a:b]
        if held is not None and held.ready:
            offsets, child = held.job(j)
            return rows, offsets, child, np.ones(1), False, None
        exp = game.expand(keys[rows], canonical=symmetry)
        child = _found(find, keys, exp.children)
        if check:
            _check_phases(game, p, kind, exp, child)
        has_prob = exp.probs is not None
        prob = np.asarray(exp.probs, dtype=np.float64) if has_prob else np.ones(1)
        return rows, exp.offsets, child, prob, has_prob, ((child, np.diff(exp.offsets)) if building[0] else None)

    def part(j: int, check: bool, mode: str) -> tuple[float, int, Any]:
        rows, offsets, child, prob, has_prob, kept = moves_of(j, check)
        res = 0.0
        if mode == "ends":
            _follow(rows, offsets, child, kind, to_move, value, dist, tie[0], ends)
        elif mode == "policy":
            _policy_rows(rows, offsets, child, to_move, value, dist, tie[0], p_win, p_loss)
        elif mode == "dist":
            res = float(_relax_rows(rows, offsets, child, dist, BIG))
        else:
            write = mode == "sweep"
            if not write:  # the certificate's sweep: each row's moves (rows of one phase, apart)
                num_moves[rows] = np.minimum(np.diff(offsets), np.iinfo(np.uint16).max)
            res = float(sweep_rows(rows, offsets, child, prob, has_prob, kind, to_move, cur[0], write,
                                   moved if (write and tracking) else None))
        return res, len(child), kept

    def sweep(check: bool, mode: str = "sweep") -> float:
        """One pass over the decision and chance nodes, phases highest first: ``mode``
        ``sweep`` (Shapley's), ``certify`` (nothing written: the largest violation), ``dist``,
        ``ends`` or ``policy`` (the win probabilities' passes)."""
        res = 0.0
        done = 0
        building[0] = held is not None and not held.ready and mode == "sweep"
        if building[0]:
            assert held is not None
            held.begin()
        try:
            for ids in by_phase:  # phases highest first; a phase's rows are independent
                results = (pool.map(lambda j: part(j, check, mode), ids) if pool is not None
                           else (part(j, check, mode) for j in ids))
                for j, (r, m, kept) in zip(ids, results):
                    res = max(res, r)
                    if mode == "certify":
                        moves[0] += m
                    if kept is not None:
                        if int(kept[1].max(initial=0)) > np.iinfo(np.uint16).max:
                            raise OverflowError("a position has more than 65,535 moves")
                        held.add(*kept)  # type: ignore[union-attr]
                    done += jobs[j][2] - jobs[j][1]
                    if progress is not None and mode in ("sweep", "certify"):
                        progress("sweep", done, len(order), res)
            if building[0]:
                held.finish()  # type: ignore[union-attr]
        except BaseException:
            if building[0]:
                held.abandon()  # type: ignore[union-attr]
            raise
        finally:
            building[0] = False
        return res

    def build_active() -> None:
        """The parents of ``inside`` by phase, from one pass over the held moves."""
        nonlocal active
        assert held is not None and held.ready

        def collect(j: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            rows, offsets, child, _, _, _ = moves_of(j, False)
            return _parents_of(rows, offsets, child, inside)

        active = []
        for ids in by_phase:
            found = list(pool.map(collect, ids)) if pool is not None else [collect(j) for j in ids]
            active.append([f for f in found if len(f[0])])
        counts["active_rows"] = sum(len(f[0]) for group in active for f in group)

    def active_sweep() -> tuple[float, bool]:
        """A sweep through the parents of ``inside`` while every position that moved is inside;
        (largest change, whether it stayed inside)."""
        assert active is not None
        moved[:] = False
        res = 0.0
        stayed = True
        for g, ids in enumerate(by_phase):
            if stayed:
                pieces = active[g]

                def one(piece: tuple[np.ndarray, np.ndarray, np.ndarray]) -> float:
                    rows, offsets, child = piece
                    return float(sweep_rows(rows, offsets, child, np.ones(1), False, kind, to_move, cur[0], True, moved))

                for r in (pool.map(one, pieces) if pool is not None else map(one, pieces)):
                    res = max(res, r)
                for rows, _, _ in pieces:
                    if np.any(moved[rows] & ~inside[rows]):
                        stayed = False
            else:  # (a position outside moved: its parents below are not all in the active part)
                results = (pool.map(lambda j: part(j, False, "sweep"), ids) if pool is not None
                           else (part(j, False, "sweep") for j in ids))
                for r, _, _ in results:
                    res = max(res, r)
        return res, stayed

    ends = np.zeros(0, np.int32)
    dist = np.zeros(0, np.int32)
    tie = [0.0]  # the tie-break's factor (TIE_BREAK / (2 + the largest distance))
    p_win: np.ndarray | None = None
    p_loss: np.ndarray | None = None
    policy_stats: dict[str, Any] = {}
    def iterate(target: np.ndarray, sweeps: int, change: float, repeats: int, name: str,
                guarantee: str | None, limit: int, first: bool) -> tuple[int, float, int]:
        """Sweeps of ``target`` until no value moves by more than ``tol``, ``limit`` sweeps or
        a cycle; kept in the work folder as ``name`` after every sweep. ``guarantee``: the
        round starts take what one player's optimal mix guarantees (the bounds)."""
        nonlocal active, moved, inside
        cur[0] = target
        use_active = False
        if tracking:
            moved = np.zeros(n, np.bool_)
            inside = np.zeros(0, np.bool_)
        active = None
        if guarantee is not None and progress is not None:
            progress(guarantee, sweeps, 0, change)  # (where the bound's sweeps start)
        while goes_on(sweeps, change, repeats, limit, tol):
            if use_active:
                res, stayed = active_sweep()
                counts["active_sweeps"] += 1
                counts["active_left"] += not stayed
            else:
                if tracking:
                    moved[:] = False
                res = sweep(first)
                counts["full_sweeps"] += 1
                stayed = False
            first = False
            new, _ = starts.solve(target, to_move, skip=skip, guarantee=guarantee)
            if len(sims):
                res = max(res, float(np.abs(new - target[sims]).max()))
                if tracking:
                    moved[sims[new != target[sims]]] = True
                target[sims] = new
            if tracking and held is not None and held.ready:
                if stayed and not np.any(moved[sims] & ~inside[sims]):
                    use_active = True
                else:  # (after a full sweep, or one that left the active part: find it again)
                    use_active = False
                    if not stayed and np.count_nonzero(moved) <= active_share * n:
                        inside = moved.copy() if len(inside) == 0 else (inside | moved)
                        build_active()
                        use_active = True
                    elif stayed:  # (a round start outside moved: the next sweep goes through all)
                        inside = inside | moved
            repeats = repeats + 1 if res == change else 0
            change = res
            sweeps += 1
            if folder is not None:
                folder.keep_values(target, sweeps, change,
                                   float(target[reached.root] * (1 if to_move[reached.root] == 0 else -1)), name=name)
            if progress is not None:
                progress("value" if guarantee is None else guarantee, sweeps, 0, change)
        active, moved, inside = None, np.zeros(0, np.bool_), np.zeros(0, np.bool_)  # (the sweeps' only)
        starts.forget()
        return sweeps, change, repeats

    bound_stats: dict[str, Any] = {}
    lo: np.ndarray | None = None
    hi: np.ndarray | None = None
    try:
        sweeps, change, repeats = iterate(value, sweeps, change, repeats, "values", None, max_sweeps,
                                          sweeps == 0 or resumed_at is not None)
        if bounds:
            t_bounds = time.perf_counter()
            if folder is not None:  # (kept there: the bounds' sweeps need its memory)
                value = cur[0] = np.zeros(0)
            ends_of: dict[str, Any] = {}
            for side, sign in (("lower", -1.0), ("upper", 1.0)):
                # every unfinished position a loss (lower) or a win (upper) for Player 1: after k
                # sweeps, what a player guarantees in the game cut off after k rounds
                again = folder.values(n, side) if folder is not None else None
                resuming = again is not None
                if again is not None:
                    target, b_sweeps, b_change, b_repeats = again
                    again = None  # (only ``target`` holds the array: it is let go after the sweeps)
                else:
                    target = np.where(to_move == 0, sign, -sign)
                    terminal = kind == _T
                    target[terminal] = np.sign(reached.result[terminal])
                    del terminal
                    b_sweeps, b_change, b_repeats = 0, np.inf, 0
                b_sweeps, b_change, b_repeats = iterate(target, b_sweeps, b_change, b_repeats, side, side,
                                                        max_sweeps if bound_sweeps is None else bound_sweeps,
                                                        resuming)
                ends_of[side] = {"sweeps": b_sweeps, "last_change": float(b_change),
                                 "converged": bool(b_change < tol)}
                if folder is not None:
                    del target
                    target = folder.values(n, side, mapped=True)[0]
                if side == "lower":
                    lo = target
                else:
                    hi = target
                cur[0] = np.zeros(0)
            assert lo is not None and hi is not None
            if folder is not None:
                value = cur[0] = folder.values(n)[0]
            cur[0] = value
            r = reached.root
            s = 1.0 if to_move[r] == 0 else -1.0
            lo1, hi1 = lo[r] * s, hi[r] * s
            width, crossed = _widths(lo, hi, to_move, BOUND_CLOSED)
            bound_stats = {"bounds": {
                "method": "truncation", **{f"{k}_{side}": v for side, d in ends_of.items() for k, v in d.items()},
                "start_player1": [float(lo1), float(hi1)], "width": float(width),
                "closed": int(crossed[1]), "closed_within": BOUND_CLOSED, "crossed": int(crossed[0]),
                "seconds": time.perf_counter() - t_bounds}}
        t_values = time.perf_counter()
        # the certificate: every equation of the stored values, the matrix games solved afresh
        if progress is not None:
            progress("certify", sweeps, 0, change)
        num_moves = np.zeros(n, np.uint16)
        num_moves[sims] = np.minimum(starts.degrees, np.iinfo(np.uint16).max)
        residual = sweep(False, "certify")
        final, mixes = starts.solve(value, to_move, mixes=True)
        assert mixes is not None
        return_freed_memory()  # (the bounds' sweeps: their freed pages back to the system first)
        if win_probabilities and not np.any(kind == _C):
            # under the stored strategies: the round starts' mixes, the tie-broken best move elsewhere
            if progress is not None:
                progress("policy", sweeps, 0, 0.0)
            t_policy = time.perf_counter()
            # fewest moves to an end (relaxed pass after pass), for the tie-break between equal moves
            dist = np.where(kind == _T, 0, BIG).astype(np.int32)
            passes = 0
            while True:
                passes += 1
                fell = sweep(False, "dist") > 0
                if not (starts.relax(dist, BIG) or fell):
                    break
            reached_end = dist != BIG
            far = int(dist[reached_end].max(initial=-1)) + 2 if reached_end.any() else 1
            dist[~reached_end] = far
            del reached_end
            tie[0] = TIE_BREAK / (2.0 + far)
            ends = np.zeros(n, np.int32 if n < 2**31 - 1 else np.int64)
            sweep(False, "ends")
            w, l, policy_stats = starts.policy(mixes, ends, kind, to_move, reached.result, tol=min(tol, 1e-12),
                                               max_iter=max_policy_iterations)
            ends = np.zeros(0, np.int32)
            p_win, p_loss = terminal_ends(reached.result, kind == _T, None)
            p_win[sims], p_loss[sims] = w, l
            sweep(False, "policy")
            dist = np.zeros(0, np.int32)
            policy_stats["policy_gap"] = float(_largest_gap(p_win, p_loss, value))
            policy_stats["distance_passes"] = passes
            policy_stats["seconds_policy"] = time.perf_counter() - t_policy
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
    if len(sims):
        residual = max(residual, float(np.abs(final - value[sims]).max()))
    certified = residual <= CERTIFICATE_THRESHOLD
    stats = {
        "engine": "roundwise",
        "positions": n,
        "round_starts": len(sims),
        "phases": len(groups),
        "moves": moves[0] + starts.moves,
        **starts.counters.stats(),
        "sweeps": sweeps,
        "last_sweep_change": float(change),
        "cycling": bool(repeats >= CYCLE_SWEEPS and not change < tol),
        "residual": float(residual),
        "certified": bool(certified),
        "certificate_threshold": CERTIFICATE_THRESHOLD,
        "tol": asked_tol,
        "effective_tol": tol,
        "resumed_at_sweep": resumed_at,
        "seconds_search": t_found - t0,
        "seconds_prepare": t_ready - t_found,
        "seconds_sweeps": t_values - t_ready,
        "seconds": time.perf_counter() - t0,
        "held_moves": None if held is None else held.edges,
        **counts,
        **policy_stats,
        **bound_stats,
        "held_bytes": int(keys.nbytes + value.nbytes + kind.nbytes + to_move.nbytes + order.nbytes
                          + (find.starts.nbytes if find.starts is not None else 0)),
    }
    return RoundwiseSolution(keys=keys, value=value, kind=kind, to_move=to_move, root=reached.root, sims=sims,
                             mixes=mixes, stats=stats,
                             converged=bool(change < tol and certified
                                            and all(bound_stats.get("bounds", {}).get(f"converged_{side}", True)
                                                    for side in ("lower", "upper"))),
                             ply=reached.ply, num_moves=num_moves, p_win=p_win, p_loss=p_loss, lower=lo, upper=hi)


def _sweeps_of(meta: dict[str, Any]) -> tuple[int, float, int]:
    """From ``<name>.json`` of a work folder: the sweeps done, the last change and how many sweeps
    in a row repeated the change before (the cycle's count)."""
    change = meta.get("change")
    changes = [h[1] for h in meta.get("history", [])]
    repeats = 0
    while repeats + 1 < len(changes) and changes[-1 - repeats] == changes[-2 - repeats] is not None:
        repeats += 1
    return int(meta["sweeps"]), np.inf if change is None else float(change), repeats


class _WorkFolder:
    """A solve's work folder: ``reached/`` (the search: keys, kinds, sides to move, results as
    ``.npy``, and ``reached.json``), then ``values.<k>.npy`` with ``values.json`` (its name, the
    sweeps done and the last change) after every sweep. Every file is written to a temporary name and renamed."""

    def __init__(self, path: Path, game: Game, symmetry: bool) -> None:
        self.path = Path(path)
        self.label = f"{game.variant.label()} symmetry={symmetry}"
        self.path.mkdir(parents=True, exist_ok=True)
        remove_stale(self.path)  # (a killed run's half-written values: gigabytes on large variants)
        meta = read_json(self.path / "reached.json")
        if meta is not None and meta.get("variant") != self.label:
            raise ValueError(f"work folder {self.path} belongs to {meta.get('variant')}, not {self.label}: "
                             "delete it or give another folder")

    def reached(self) -> Reached | None:
        meta = read_json(self.path / "reached.json")
        if meta is None:
            return None
        # (mapped, not read: the system can take their pages back, where read arrays stay; once the
        # moves are held only the table's writing reads the keys, and the ply and results are read
        # at the start and the end; Petal Battle 8-2's win probabilities ran out of memory without)
        arrays = {name: np.load(self.path / f"{name}.npy", mmap_mode="r")
                  for name in ("keys", "kind", "to_move", "result")}
        if (self.path / "ply.npy").exists():
            arrays["ply"] = np.load(self.path / "ply.npy", mmap_mode="r")
        if any(len(a) != meta["positions"] for a in arrays.values()):
            raise ValueError(f"work folder {self.path}: its search files disagree with reached.json; delete it "
                             "and start again")
        return Reached(root=int(meta["root"]), plies=int(meta["plies"]), **arrays)

    def keep_reached(self, reached: Reached) -> None:
        _HeldMoves.forget(self.path)
        for name in ("keys", "kind", "to_move", "result", "ply"):
            if getattr(reached, name) is not None:
                atomic_npy(self.path / f"{name}.npy", getattr(reached, name))
        atomic_json(self.path / "reached.json", {"variant": self.label, "positions": len(reached.keys),
                                                 "root": reached.root, "plies": reached.plies})

    def values(self, n: int, name: str = "values", mapped: bool = False
               ) -> tuple[np.ndarray, int, float, int] | None:
        """The last sweep's iterate ``name`` (``values``, or a bound: ``lower``, ``upper``), the
        sweeps done, the last change and how many sweeps in a row repeated the change before
        (the cycle's count); ``mapped``: the array mapped read-only, not read."""
        meta = read_json(self.path / f"{name}.json")
        if meta is None or not (self.path / meta["file"]).exists():
            return None
        value = np.load(self.path / meta["file"], mmap_mode="r" if mapped else None)
        if len(value) != n or meta.get("positions") != n:
            raise ValueError(f"work folder {self.path}: {meta['file']} does not match its search; delete "
                             f"{name}.json to sweep again from the start")
        return (value, *_sweeps_of(meta))

    def keep_values(self, value: np.ndarray, sweeps: int, change: float, start: float | None = None,
                    name: str = "values") -> None:
        """``<name>.<sweeps>.npy``, then ``<name>.json`` naming it, then the older files go: a
        run killed at any point finds a values file and its sweep count that agree.
        ``<name>.json`` also keeps ``history``: per sweep, its number, its largest change and
        the start's iterate (Player 1's view), to see how the iteration converges."""
        file = f"{name}.{sweeps}.npy"
        atomic_npy(self.path / file, value)
        before = read_json(self.path / f"{name}.json") or {}
        history = [h for h in before.get("history", []) if h[0] < sweeps]
        history.append([sweeps, change if np.isfinite(change) else None, start])
        atomic_json(self.path / f"{name}.json", {"positions": len(value), "sweeps": sweeps, "file": file,
                                                 "change": change if np.isfinite(change) else None,
                                                 "start": start, "history": history})
        for old in self.path.glob(f"{name}.*.npy"):
            if old.name != file:
                old.unlink(missing_ok=True)


class _HeldMoves:
    """The moves of the decision nodes in the sweeps' order, kept by the first full sweep of a run
    (rows of the variant, ``int32`` below 2**31 positions, and each row's number of moves) so that
    the other sweeps read them instead of expanding every position again and finding its
    children: the same children in the same order, so the same iterates. In ``folder``
    (``moves.bin``, ``degrees.bin`` and ``moves.json``, written under temporary names and
    renamed; read through the page cache) or, without a folder, in memory."""

    def __init__(self, folder: Path | None, rows: int, jobs: list[tuple[int, int, int]], dtype: Any) -> None:
        self.folder, self.rows, self.jobs, self.dtype = folder, rows, jobs, np.dtype(dtype)
        self.moves: np.ndarray | None = None
        self.degrees: np.ndarray | None = None
        self.first: np.ndarray | None = None  # each job's first move
        self._parts: list[tuple[np.ndarray, np.ndarray]] = []
        self._files: tuple[Any, Any] | None = None
        self.edges = 0
        if folder is not None:
            meta = read_json(folder / "moves.json")
            if (meta is not None and meta.get("rows") == rows and meta.get("dtype") == self.dtype.name
                    and (folder / "moves.bin").exists() and (folder / "degrees.bin").exists()):
                self._open(int(meta["edges"]))

    @property
    def ready(self) -> bool:
        return self.moves is not None

    def _open(self, edges: int) -> None:
        assert self.folder is not None
        self.edges = edges
        self.degrees = (np.memmap(self.folder / "degrees.bin", dtype=np.uint16, mode="r", shape=(self.rows,))
                        if self.rows else np.zeros(0, np.uint16))  # (an empty file cannot be mapped)
        self.moves = (np.memmap(self.folder / "moves.bin", dtype=self.dtype, mode="r", shape=(edges,)) if edges
                      else np.zeros(0, self.dtype))
        self._index()

    def _index(self) -> None:
        assert self.degrees is not None
        starts = np.array([a for _, a, _ in self.jobs], dtype=np.int64)
        per_job = (np.add.reduceat(self.degrees, starts, dtype=np.int64) if len(starts) and self.rows
                   else np.zeros(len(starts), np.int64))
        self.first = np.zeros(len(self.jobs) + 1, np.int64)
        np.cumsum(per_job, out=self.first[1:])

    def begin(self) -> None:
        """Start keeping the moves of a sweep (its jobs' moves given in order to :meth:`add`)."""
        self._parts = []
        self.edges = 0
        if self.folder is not None:
            (self.folder / "moves.json").unlink(missing_ok=True)
            self._files = (open(self.folder / ".moves.bin.tmp", "wb"), open(self.folder / ".degrees.bin.tmp", "wb"))

    def add(self, child: np.ndarray, degrees: np.ndarray) -> None:
        c, d = child.astype(self.dtype, copy=False), degrees.astype(np.uint16, copy=False)
        self.edges += len(c)
        if self._files is not None:
            c.tofile(self._files[0])
            d.tofile(self._files[1])
        else:
            self._parts.append((c.copy(), d.copy()))

    def finish(self) -> None:
        if self._files is not None:
            assert self.folder is not None
            for fh in self._files:
                fh.close()
            self._files = None
            os.replace(self.folder / ".moves.bin.tmp", self.folder / "moves.bin")
            os.replace(self.folder / ".degrees.bin.tmp", self.folder / "degrees.bin")
            atomic_json(self.folder / "moves.json", {"rows": self.rows, "edges": self.edges, "dtype": self.dtype.name})
            self._open(self.edges)
        else:
            self.moves = np.concatenate([c for c, _ in self._parts]) if self._parts else np.zeros(0, self.dtype)
            self.degrees = np.concatenate([d for _, d in self._parts]) if self._parts else np.zeros(0, np.uint16)
            self._parts = []
            self._index()

    def abandon(self) -> None:
        if self._files is not None:
            for fh in self._files:
                fh.close()
            self._files = None
        self._parts = []

    def job(self, j: int) -> tuple[np.ndarray, np.ndarray]:
        """Job ``j``'s move offsets (from 0) and children."""
        assert self.degrees is not None and self.moves is not None and self.first is not None
        _, a, b = self.jobs[j]
        offsets = np.zeros(b - a + 1, np.int64)
        np.cumsum(self.degrees[a:b], out=offsets[1:])
        return offsets, np.asarray(self.moves[self.first[j] : self.first[j + 1]])

    @staticmethod
    def forget(folder: Path) -> None:
        for name in ("moves.json", "moves.bin", "degrees.bin"):
            (folder / name).unlink(missing_ok=True)


#: bytes of disk a position the held moves may take (4 a move; Petal Battle 8-2 has 8.4 moves a
#: position) that must be free before a run keeps them
MOVES_DISK_BYTES = 48


def _room_for_moves(folder: "_WorkFolder | None", n: int) -> bool:
    if folder is None:
        return True
    return shutil.disk_usage(folder.path).free > MOVES_DISK_BYTES * n


def _check_phases(game: Game, phase: int, kind: np.ndarray, exp: Any, child: np.ndarray) -> None:
    """Every move from these rows (all of ``phase``) to a decision or chance node must raise
    the phase: else the rounds' moves could loop without passing a round start."""
    plain = (kind[child] == _D) | (kind[child] == _C)
    if not np.any(plain):
        return
    ph = game.round_phase(exp.children[plain])
    low = ph <= phase
    if np.any(low):
        k = int(exp.children[plain][np.flatnonzero(low)[0]])
        raise ValueError(f"a move into position {k} (phase {int(ph[low][0])}) does not raise the round phase "
                         f"({phase}): {game.name}'s round_phase is wrong for this variant (solve it with "
                         "the whole-graph engine)")


# --- the table ---------------------------------------------------------------------------------

#: the work folder of an unfinished solve, beside the table folder
WORK_SUFFIX = ".roundwise"


def work_dir(folder: Path) -> Path:
    return Path(folder).with_name(Path(folder).name + WORK_SUFFIX)


def unfinished(folder: Path) -> str | None:
    """When a round-by-round solve of this variant was started and not finished: how far it got."""
    work = work_dir(folder)
    found = read_json(work / "reached.json")
    if found is None:
        return None
    swept = read_json(work / "values.json")
    done = f"{int(swept['sweeps'])} sweeps done" if swept else "no sweep done"
    if swept and swept.get("change") is not None:
        done += f", the last moved values by up to {swept['change']:.2g}"
    if swept and swept.get("start") is not None:
        done += f", the start's iterate {swept['start']:+.6f} for Player 1"
    return (f"its round-by-round solve in {work} is unfinished ({int(found['positions']):,} positions found, "
            f"{done}); run the same `pyramids solve` command again to resume")


def to_resume(folder: Path, meta: dict[str, Any], *, tol: float, max_sweeps: int | None = None,
              bounds: bool = True, bound_sweeps: int | None = None) -> str | None:
    """What resuming the unfinished work folder beside the table ``folder`` (metadata ``meta``)
    would add to it, with the limits of :func:`solve_variant`; ``None``: nothing, the table holds
    the folder's last sweeps and every iteration stopped for good (converged, cycling) or at
    those limits. Reads the folder's small files only."""
    tol = max(tol, TOL_FLOOR)  # (as the sweeps: :func:`solve_by_rounds`)
    work = work_dir(folder)
    states: dict[str, tuple[int, float, int]] = {}
    for name in ("values", *(("lower", "upper") if bounds else ())):
        found = read_json(work / f"{name}.json")
        if found is None:
            return f"its work folder has no {name} yet"
        states[name] = _sweeps_of(found)
    sweeps, change, repeats = states.pop("values")
    if sweeps != meta.get("sweeps"):
        return f"its work folder holds {sweeps} sweeps of the values, the table {meta.get('sweeps')}"
    limit = 100_000 if max_sweeps is None else max_sweeps
    if goes_on(sweeps, change, repeats, limit, tol):
        return f"the values stopped at {sweeps} sweeps and can go on (up to {limit:,})"
    done = meta.get("bounds") or {}
    limit = BOUND_SWEEPS if bound_sweeps is None else bound_sweeps
    for side, (sweeps, change, repeats) in states.items():
        if sweeps != done.get(f"sweeps_{side}"):
            return f"its work folder holds {sweeps} sweeps of the {side} bound, the table {done.get(f'sweeps_{side}')}"
        if goes_on(sweeps, change, repeats, limit, tol):
            return f"the {side} bound stopped at {sweeps} rounds, fewer than the {limit} asked"
    return None


def write_table(game: Game, sol: RoundwiseSolution, folder: Path, *, symmetry: bool, run_id: str,
                seconds: float) -> Path:
    """Write ``sol`` as a tiered table whose tiers are the round phases (``tier_function``
    ``round_phase`` in ``tiers.json``): one Parquet file a phase, sorted by key, read a row at a
    time by :class:`solver.api.TieredSolution`. Columns: ``key``, ``player``, ``kind``, ``value``
    (expected result of the side to move), ``value_player1``, ``p_win``/``p_loss`` (under the stored
    strategies; null for games with chance in play), ``ply`` (where the search kept it), ``num_moves`` and, at round
    starts, both mixes (``strategy_1``/``strategy_2``).
    Written in a temporary folder, then renamed over ``folder``."""
    folder = Path(folder)
    arrow_on_malloc()  # (pyarrow's own pool would keep every row group's buffers it freed)
    return_freed_memory()
    tmp = folder.with_name(f".{folder.name}.writing-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "tiers").mkdir(parents=True)
    keys, n = sol.keys, len(sol.keys)
    phase = np.concatenate([np.asarray(game.round_phase(keys[a : a + (1 << 22)])) for a in range(0, n, 1 << 22)])
    tiers = []
    sign = lambda rows: np.where(sol.to_move[rows] == 0, 1.0, -1.0)  # noqa: E731

    for p in np.unique(phase).tolist():
        rows = np.flatnonzero(phase == p)
        file = f"tiers/{tier_file(int(p))}"
        meta_t = {"run_id": run_id, "rules_version": game.rules_version, "tier": int(p), "positions": len(rows)}

        def frames(rows=rows):
            step = 1 << 20
            for a in range(0, max(1, len(rows)), step):
                r = rows[a : a + step]
                # the stored value: the iterate, moved into the proven interval where there is one
                # (a cycling or wrong fixed point's value can lie outside it)
                bounded = sol.interval(r) if sol.lower is not None else None
                value = sol.value[r] if bounded is None else np.clip(sol.value[r], *bounded)
                cols = {
                    "key": pl.Series(keys[r], dtype=pl.UInt64),
                    "player": pl.Series(sol.to_move[r].astype(np.uint8), dtype=pl.UInt8),
                    "kind": pl.Series(sol.kind[r].astype(np.uint8), dtype=pl.UInt8),
                    "value": pl.Series(value, dtype=pl.Float64),
                    "value_player1": pl.Series(value * sign(r), dtype=pl.Float64),
                    "p_win": (pl.Series(sol.p_win[r], dtype=pl.Float64) if sol.p_win is not None
                              else pl.repeat(None, len(r), dtype=pl.Float64, eager=True)),
                    "p_loss": (pl.Series(sol.p_loss[r], dtype=pl.Float64) if sol.p_loss is not None
                               else pl.repeat(None, len(r), dtype=pl.Float64, eager=True)),
                }
                if bounded is not None:
                    cols["value_lo"] = pl.Series(bounded[0], dtype=pl.Float64)
                    cols["value_hi"] = pl.Series(bounded[1], dtype=pl.Float64)
                if sol.ply is not None:
                    cols["ply"] = pl.Series(sol.ply[r], dtype=pl.UInt16)
                if sol.num_moves is not None:
                    cols["num_moves"] = pl.Series(sol.num_moves[r], dtype=pl.UInt16)
                frame = pl.DataFrame(cols)
                # the round starts among these rows (sims is sorted) and their rows in the mixes
                at = np.searchsorted(sol.sims, r)
                hit = np.flatnonzero(sol.sims[np.minimum(at, max(len(sol.sims) - 1, 0))] == r) if len(sol.sims) else at[:0]
                for who in (0, 1):
                    mixes = dict(zip(hit.tolist(), sol.mixes[who][at[hit]]))
                    frame = frame.with_columns(pl.Series(f"strategy_{who + 1}", pl.from_arrow(
                        mix_column(len(r), mixes) if mixes else pa.nulls(len(r), pa.list_(pa.float64())))))
                yield frame

        write_parquet(frames(), tmp / file, meta_t, key_deltas=True)
        tiers.append({"tier": int(p), "name": f"round phase {int(p)}", "file": file, "positions": int(len(rows))})
    root_key = int(keys[sol.root])
    root_phase = int(phase[sol.root])
    root_row = int(np.searchsorted(keys[phase == root_phase], keys[sol.root]))
    st = sol.stats
    meta = {
        "game": game.name, "variant": game.variant.as_text(), "variant_id": game.variant.variant_id(),
        "label": game.variant.label(), "rules_version": game.rules_version,
        "toolkit_version": solver.__version__, "symmetry": symmetry,
        "counts": {"positions": n, "edges": int(st.get("moves", 0)),
                   "terminal": int(np.count_nonzero(sol.kind == _T)), "chance": int(np.count_nonzero(sol.kind == _C)),
                   "simultaneous": len(sol.sims)},
        "root_key": root_key, "root_tier": root_phase, "root_row_in_tier": root_row,
        "solve_seconds": seconds, "timings": {"search": st["seconds_search"], "sweeps": st["seconds_sweeps"]},
        "scored": bool(game.scored), "players": game.num_players,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "solver": "value_iteration (by rounds)", "solution": "stochastic", "layout": "tiered",
        "tier_function": "round_phase", "solve_id": run_id, "files": [t["file"] for t in tiers], "tiers": tiers,
        "sweeps": st["sweeps"], "residual": st["residual"], "tolerance": st["tol"],
        "converged": sol.converged, "certified": st["certified"],
        "certificate_threshold": st["certificate_threshold"], "round_starts": len(sol.sims),
        "simultaneous_engine": "roundwise",
    }
    if sol.p_win is None:
        meta["win_probabilities"] = "not computed by the round-by-round engine for games with chance in play"
    else:
        meta["policy"] = {k: st[k] for k in ("policy_iterations", "policy_residual", "policy_gap") if k in st}
        meta["policy"]["strategies"] = ("the stored mixes at the round starts, the best move elsewhere (ties "
                                        "broken by the loop tie-break, applied to every move); endless play "
                                        "counts as neither win nor loss")
    bounds = st.get("bounds")
    if bounds is not None:
        lo, hi = sol.interval(np.array([sol.root]))
        meta["value_interval"] = [float(lo[0]), float(hi[0])]
        meta["bounds"] = {**bounds, "method": BOUNDS_DOC, "tolerance": BOUND_CLOSED,
                          "proven": bounds["crossed"] == 0}
        outside = 0
        for a in range(0, n, 1 << 22):
            rows = np.arange(a, min(n, a + (1 << 22)))
            lo, hi = sol.interval(rows)
            outside += int(np.count_nonzero((sol.value[rows] < lo - 1e-9) | (sol.value[rows] > hi + 1e-9)))
        meta["iterate_outside_bounds"] = outside
    why: str | None = None
    if bounds is not None and not meta["bounds"]["proven"]:  # (a fault: the lower bound above the upper somewhere)
        why = f"the two bounds cross at {bounds['crossed']:,} positions, so nothing is proven (please report it)"
    elif st.get("cycling"):
        why = (f"value iteration cycles: the largest change stayed at {st['last_sweep_change']:.6g} for "
               f"{CYCLE_SWEEPS + 1} sweeps in a row (values swapping between sweeps), so its values are no fixed "
               f"point (residual {st['residual']:.3g}) and prove nothing; more sweeps do not help")
    elif not st["certified"] or not sol.converged:
        stopped = [side for side in ("lower", "upper") if bounds is not None and not bounds[f"converged_{side}"]]
        why = (f"value iteration stopped after {st['sweeps']} sweeps with residual {st['residual']:.3g}"
               if not st["certified"] or stopped == [] else
               f"the {' and '.join(stopped)} bound stopped after {bounds[f'sweeps_{stopped[0]}']} sweeps")
        why += (f"; raise --{'bound-rounds' if stopped and st['certified'] else 'max-sweeps'} (the same command "
                "resumes from the last sweep)")
    if bounds is not None and bounds["width"] > BOUND_CLOSED:
        lo_, hi_ = meta["value_interval"]
        start = (f"the start's [{lo_:+.9f}, {hi_:+.9f}]" if hi_ - lo_ > BOUND_CLOSED else
                 f"the start's closed at {lo_:+.9f}")
        open_ = (f"the proven intervals are up to {bounds['width']:.3g} wide ({start}; {bounds['closed']:,} "
                 f"of {n:,} positions closed within {BOUND_CLOSED:g})")
        why = (f"{why}; {open_}" if why is not None else
               f"{open_}: where a side can keep play going for ever, cutting the game off as a loss or as a win "
               "tells apart what endless play counting 0 does not")
    if why is not None:
        meta["certified"] = False
        meta["not_certified_because"] = why
    atomic_json(tmp / "tiers.json", meta)
    if folder.exists():
        old = folder.with_name(f".{folder.name}.old-{os.getpid()}-{uuid.uuid4().hex[:8]}")
        os.rename(folder, old)
        os.rename(tmp, folder)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.rename(tmp, folder)
    return folder


def solve_variant(game: Game, folder: Path, *, symmetry: bool = True, tol: float = 1e-12,
                  max_sweeps: int | None = None, workers: int | None = None,
                  progress: Progress | None = None, force: bool = False,
                  max_positions: int | None = None, bounds: bool = True,
                  bound_sweeps: int | None = None) -> Path:
    """Solve ``game`` round by round into the table ``folder`` (resuming the work folder beside
    it unless ``force``), then remove the work folder once the values converged (else it stays,
    so that more sweeps resume from the last one); returns ``folder``."""
    work = work_dir(folder)
    if force:
        shutil.rmtree(work, ignore_errors=True)
    t0 = time.perf_counter()
    sol = solve_by_rounds(game, tol=tol, max_sweeps=100_000 if max_sweeps is None else max_sweeps,
                          symmetry=symmetry, workers=workers, progress=progress, work=work,
                          max_positions=max_positions, bounds=bounds,
                          bound_sweeps=BOUND_SWEEPS if bound_sweeps is None else bound_sweeps)
    write_table(game, sol, folder, symmetry=symmetry, run_id=uuid.uuid4().hex, seconds=time.perf_counter() - t0)
    if sol.converged:
        shutil.rmtree(work, ignore_errors=True)
    return folder
