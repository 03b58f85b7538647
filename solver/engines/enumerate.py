"""Enumeration: every position reachable from the start, breadth first, as integer-key arrays.

The result is a :class:`~solver.engines.graph.Graph` (also importable from here) in compressed
sparse row form: positions sorted by key, and for each position the row indices of its children
(one edge per legal action, duplicates kept, so counters in the retrograde engine count actions,
not distinct children).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import math
import multiprocessing
import os
import signal
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np
from numba import njit

from solver.core.game import Game, NodeKind
from solver.engines.graph import Graph, dead_end_message
from solver.engines.waiting import pool_map
from solver.faults import fault_point
from solver.core.arrays import SortedLookup, isin_sorted, ranges, unique

#: callback(ply, positions_so_far, frontier_size) for progress bars
Progress = Callable[[int, int, int], None]

#: a game's position bound (:meth:`Game.position_bound`) counts every arrangement of its pieces,
#: reachable or not. Measured, up to symmetry, against the positions enumerated: the solvable
#: presets reach between a third and a 160th of theirs (Override 3x3 1/2.8, Blam! 4x4 1/6, 3x3
#: 1/35, 3x3-3p 1/157, Carrots 3x3 1/64, Petal 6 1/29), the tiered ones too (Blam! 4x4-2 1/52,
#: Override 3x3-2 1/4.4); only tiny variants where games end at once are looser (Blam! 2x2 with
#: 3 players: 241 positions, 1/5,300). A variant is refused by its bound alone when the bound,
#: up to symmetry, is more than this many times the position limit
BOUND_SLACK = 100

#: below this limit the bound is not used: the enumeration itself reaches such a limit within
#: seconds, and tiny variants are the ones whose bounds are loosest
BOUND_MIN_LIMIT = 1_000_000


def position_bound_refusal(game: Game, max_positions: int | None, *, symmetry: bool = True) -> str | None:
    """Why ``game`` is refused by its position bound alone, or ``None``: the bound
    (:meth:`Game.position_bound`; up to symmetry: divided by the images of the start) is more than
    :data:`BOUND_SLACK` times ``max_positions``. Cheap: a formula, nothing enumerated.
    ``max_positions`` ``None`` or 0: no limit, nothing refused; below :data:`BOUND_MIN_LIMIT` the
    enumeration is left to find out. The text follows the variant's label in an error line."""
    if not max_positions or max_positions < BOUND_MIN_LIMIT:
        return None
    bound = game.position_bound()
    if bound is None:
        return None
    images = max(1, len(game.symmetries(game.initial_state()))) if symmetry else 1
    classes = -(-int(bound) // images)
    if classes <= BOUND_SLACK * max_positions:
        return None
    sym = f", {approx(classes)} up to symmetry" if images > 1 else ""
    return (f"has more than {max_positions:,} positions by estimate: counted by formula from its board and "
            f"pieces it has up to {approx(bound)}{sym}, over {BOUND_SLACK} times the limit")


def check_position_bound(game: Game, max_positions: int | None, *, symmetry: bool = True) -> None:
    """Raise :class:`~solver.errors.TooBigError` when :func:`position_bound_refusal` refuses."""
    from solver.errors import TooBigError

    why = position_bound_refusal(game, max_positions, symmetry=symmetry)
    if why is not None:
        raise TooBigError(f"{game.variant.label()} {why}; pick a smaller variant, or raise --max-positions "
                          "(0: no limit) to try it")


def approx(count: int) -> str:
    """A count of any size in two significant digits (``1.6e+13``); Python ints beyond a float's
    range too."""
    count = int(count)
    if count.bit_length() < 1000:
        return f"{count:.2g}"
    shift = count.bit_length() - 60
    exponent = math.log10(count >> shift) + shift * math.log10(2)
    whole = math.floor(exponent)
    mantissa = round(10 ** (exponent - whole), 1)
    if mantissa >= 10:
        mantissa, whole = mantissa / 10, whole + 1
    return f"{mantissa:.1f}e+{whole}"


def enumerate_positions(
    game: Game,
    *,
    symmetry: bool = True,
    chunk: int = 200_000,
    max_positions: int | None = None,
    progress: Progress | None = None,
    workers: int | None = None,
    starts: "np.ndarray | list[int] | None" = None,
    keep_bytes: int | None = None,
    assembling: Callable[[int, int], None] | None = None,
) -> Graph:
    """Enumerate every position reachable from ``game.initial_state()`` (or from ``starts``).

    Parameters
    ----------
    game : Game
        The variant to enumerate.
    symmetry : bool
        Keep one canonical representative per symmetry class (smaller, same values).
    chunk : int
        How many positions to expand per call of the game's batch path.
    max_positions : int, optional
        Stop with :class:`~solver.errors.TooBigError` beyond this many positions.
    progress : callable, optional
        Called after every ply as ``progress(ply, positions_so_far, frontier_size)``.
    workers : int, optional
        Processes expanding chunks in parallel (default: the number of CPUs; 1 = no pool).
        Only large plies are split; the result does not depend on it.
    starts : keys, optional
        Enumerate from these position keys (canonical when ``symmetry``) instead of the start:
        the union of what each reaches, solved together (a batch of setups shares its later
        positions). The graph's ``root`` is the row of the first; every start has ply 0.
    keep_bytes : int, optional
        Keep the plies' expansions for the assembly up to this many bytes (default
        :data:`KEEP_BYTES`); past it every position is expanded a second time, in key order, so
        that only the keys are held until the graph's own arrays are built (the same graph).
    assembling : callable, optional
        Called as ``assembling(done, positions)`` while positions are expanded the second time.
    """
    seen, root_key = _start_keys(game, starts, symmetry, max_positions)
    level_keys: list[np.ndarray] = []
    level_moves: list[np.ndarray] = []
    # the plies' expansions, kept for the assembly while they take at most keep_bytes (None once
    # dropped: the assembly then expands every position again, in key order)
    kept: list[list] | None = []
    kept_bytes = 0
    limit = KEEP_BYTES if keep_bytes is None else keep_bytes
    workers = (os.cpu_count() or 1) if workers is None else workers
    search = _Plies(game, seen, symmetry, chunk, workers, max_positions, progress)
    pool = None
    try:
        for frontier, parts in search:
            level_keys.append(frontier)
            level_moves.append(np.concatenate([np.diff(p.offsets) for p in parts]).astype(np.uint32))
            if kept is not None:
                kept_bytes += sum(_nbytes(p) for p in parts)
                if kept_bytes <= limit:
                    kept.append(parts)
                else:
                    kept = None
            del parts
        seen, ply, pool = search.seen, search.ply, search.pool

        # Assemble the rows in key order: each position's ply and number of moves, then its
        # expansion placed at its row (kept ones, or every position expanded again in key order)
        keys = seen
        n = len(keys)
        find = SortedLookup(keys)
        plies = np.empty(n, dtype=np.uint16)  # every position is in one ply
        offsets = np.zeros(n + 1, dtype=np.int64)
        level_rows: list[np.ndarray] = []
        for d, (lk, moves) in enumerate(zip(level_keys, level_moves)):
            rows = find(lk)
            plies[rows] = d
            offsets[rows + 1] = moves
            if kept is not None:
                level_rows.append(rows)
        del level_keys, level_moves
        np.cumsum(offsets, out=offsets)
        built = _Assembly(keys, find, offsets)
        if kept is not None:
            for rows, parts in zip(level_rows, kept):
                at = 0
                for p in parts:
                    built.place(rows[at : at + len(p.kind)], p)
                    at += len(p.kind)
            kept = level_rows = None  # placed: the kept expansions go
        else:
            if workers > 1 and n >= _PARALLEL_MIN and pool is None:
                pool = _start_pool(game, workers)
            step = chunk * workers if pool is not None else chunk  # a batch per worker at a time
            for s in range(0, n, step):
                at = s
                for p in _expand_level(game, keys[s : s + step], chunk, symmetry, pool, workers):
                    built.place(np.arange(at, at + len(p.kind), dtype=np.int64), p)
                    at += len(p.kind)
                if assembling is not None:
                    assembling(min(n, s + step), n)
    finally:
        pool = pool or search.pool  # (started by the search, or for the assembly)
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    return Graph(
        keys=keys,
        kind=built.kind,
        to_move=built.to_move,
        ply=plies,
        offsets=offsets,
        child=built.child,
        probs=built.probs,
        result=built.result,
        margin=built.margin,
        root=int(np.searchsorted(keys, root_key)),
        symmetry=symmetry,
        stats={"plies": ply, "expanded_twice": kept_bytes > limit},
        sim_rows=built.sim_rows,
        payoff=built.payoff,
    )


def _start_keys(game: Game, starts: Any, symmetry: bool, max_positions: int | None) -> tuple[np.ndarray, Any]:
    """The sorted keys an enumeration starts from and the root's key."""
    if starts is None:
        check_position_bound(game, max_positions, symmetry=symmetry)
        start = game.initial_state()
        if symmetry:
            start = game.canonical(start)
        root_key = np.uint64(game.encode(start))
        return np.array([root_key], dtype=np.uint64), root_key
    given = np.asarray(starts, dtype=np.uint64)
    if not len(given):
        raise ValueError("starts must name at least one position")
    return unique(given), given[0]


class _Plies:
    """The breadth-first search itself: iterating yields ``(frontier, parts)`` per ply (the
    ply's keys and their expansions, in that order); ``seen`` is every key found so far (sorted),
    ``ply`` the plies done, ``pool`` the worker pool once started (the caller shuts it down)."""

    def __init__(self, game: Game, seen: np.ndarray, symmetry: bool, chunk: int, workers: int,
                 max_positions: int | None, progress: Progress | None) -> None:
        self.game, self.seen, self.symmetry, self.chunk, self.workers = game, seen, symmetry, chunk, workers
        self.max_positions, self.progress = max_positions, progress
        self.ply = 0
        self.pool: Executor | None = None
        #: optional: a number per key of ``seen`` (set by the caller, kept aligned through every
        #: merge; keys found in a ply get 0 until the caller fills them)
        self.info: np.ndarray | None = None

    def __iter__(self):
        from solver.errors import TooBigError

        game = self.game
        frontier = self.seen.copy()
        while len(frontier):
            if self.workers > 1 and len(frontier) >= _PARALLEL_MIN and self.pool is None:
                self.pool = _start_pool(game, self.workers)
            parts = _expand_level(game, frontier, self.chunk, self.symmetry, self.pool, self.workers)
            _check_dead_ends(game, frontier, parts)
            kids = [unique(p.children) for p in parts if len(p.children)]
            yield frontier, parts
            del parts
            if kids:
                new = unique(np.concatenate(kids)) if len(kids) > 1 else kids[0]
                new = new[~isin_sorted(new, self.seen)]
            else:
                new = np.empty(0, dtype=np.uint64)
            del kids
            if len(new):
                # two sorted runs merged into one new array (a concatenation and a sort held three)
                merged = np.empty(len(self.seen) + len(new), np.uint64)
                if self.info is None:
                    _merge(self.seen, new, merged)
                else:
                    info = np.zeros(len(merged), self.info.dtype)
                    _merge(self.seen, new, merged, self.info, info)
                    self.info = info
                self.seen = merged
                del merged
            frontier = new
            if self.progress is not None:
                self.progress(self.ply, len(self.seen), len(frontier))
            if self.pool is not None:
                fault_point("enumerate-pool")
            if self.max_positions is not None and len(self.seen) > self.max_positions:
                raise TooBigError(
                    f"{game.variant.label()} has more than {self.max_positions:,} positions; "
                    "raise --max-positions or pick a smaller variant"
                )
            self.ply += 1


@dataclass(frozen=True)
class Reached:
    """Every position reachable from the start, by key, without its moves (:func:`reachable`):
    ``keys`` sorted ``uint64``; per position ``kind`` and ``to_move`` (``int8``) and ``result``
    (``int8``: at terminals the result of ``to_move``, 0 elsewhere); ``root`` the start's row;
    ``ply`` (``uint16``) the ply at which each position was first reached. 13 bytes a position
    (the search itself: about 12 a position found so far, plus the widest ply's expansions and the
    merge of its new keys)."""

    keys: np.ndarray
    kind: np.ndarray
    to_move: np.ndarray
    result: np.ndarray
    root: int
    plies: int
    ply: np.ndarray | None = None


def reachable(
    game: Game,
    *,
    symmetry: bool = True,
    chunk: int = 200_000,
    max_positions: int | None = None,
    progress: Progress | None = None,
    workers: int | None = None,
) -> Reached:
    """The positions :func:`enumerate_positions` finds (the same breadth-first search), keeping
    only each position's key, kind, side to move and terminal result: no moves, no graph. For
    engines that expand positions again from their keys (:mod:`solver.pipeline.roundwise`)."""
    seen, root_key = _start_keys(game, None, symmetry, max_positions)
    workers = (os.cpu_count() or 1) if workers is None else workers
    plies = _Plies(game, seen, symmetry, chunk, workers, max_positions, progress)
    # each position's kind, side to move, result and ply packed in a uint32 beside its key (kept
    # aligned through the merges: no per-ply copy of the keys)
    plies.info = np.zeros(len(seen), np.uint32)
    try:
        for frontier, parts in plies:
            packed = np.concatenate([
                (p.kind.astype(np.uint32) & 0xF) << 16 | (p.to_move.astype(np.uint32) & 0xFF) << 20
                | (p.result.astype(np.int64) + 1).astype(np.uint32) << 28 for p in parts])
            plies.info[np.searchsorted(plies.seen, frontier)] = packed | np.uint32(min(plies.ply, 0xFFFF))
            del packed, parts  # (the ply's expansions go before its new keys are merged)
    finally:
        if plies.pool is not None:
            plies.pool.shutdown(wait=True, cancel_futures=True)
    keys, info = plies.seen, plies.info
    plies.info = None
    kind = ((info >> 16) & 0xF).astype(np.int8)
    to_move = ((info >> 20) & 0xFF).astype(np.int8)
    result = (((info >> 28) & 0x3).astype(np.int8) - 1).astype(np.int8)
    ply = (info & 0xFFFF).astype(np.uint16)
    del info
    return Reached(keys=keys, kind=kind, to_move=to_move, result=result,
                   root=int(np.searchsorted(keys, root_key)), plies=plies.ply, ply=ply)


@njit(cache=True, nogil=True)
def _merge(a, b, out, pa=None, pout=None):  # pragma: no cover - compiled
    """Merge the sorted, disjoint ``a`` and ``b`` into ``out``; with ``pa``, ``pout`` gets ``a``'s
    numbers at ``a``'s keys and 0 at ``b``'s."""
    i = j = k = 0
    while i < len(a) and j < len(b):
        if a[i] < b[j]:
            out[k] = a[i]
            if pa is not None:
                pout[k] = pa[i]
            i += 1
        else:
            out[k] = b[j]
            j += 1
        k += 1
    while i < len(a):
        out[k] = a[i]
        if pa is not None:
            pout[k] = pa[i]
        i += 1
        k += 1
    while j < len(b):
        out[k] = b[j]
        j += 1
        k += 1


#: an enumeration keeps every ply's expansion (children's keys, node kinds, ...) for the final
#: assembly while they take at most this many bytes; past it, it keeps only the keys and expands
#: every position a second time, in key order, placing each expansion at its rows at once. Held
#: at the end: about 12 bytes a position plus 8 a move (16 with dice) for the graph, instead of
#: the kept expansions beside it (measured: the README's Benchmark section)
KEEP_BYTES = 256 * 2**20


def _nbytes(part: Any) -> int:
    return sum(a.nbytes for a in (part.kind, part.to_move, part.offsets, part.children, part.probs,
                                  part.result, part.margin, part.sim_rows, part.payoff, part.child_tier)
               if a is not None)


def _check_dead_ends(game: Game, keys: np.ndarray, parts: list) -> None:
    """A non-terminal position without moves would silently be a draw: refuse it (one line)."""
    at = 0
    for p in parts:
        dead = (np.diff(p.offsets) == 0) & (p.kind != NodeKind.TERMINAL)
        if dead.any():
            from solver.errors import ProtocolError

            i = int(np.flatnonzero(dead)[0])
            key = int(keys[at + i])
            try:
                where = f" ({' '.join(game.describe_state(game.decode(key)).split())[:120]})"
            except Exception:  # noqa: BLE001 - the message must not depend on render working
                where = ""
            raise ProtocolError(dead_end_message(key, NodeKind(int(p.kind[i])), where))
        at += len(p.kind)


class _Assembly:
    """The graph's per-row and per-move arrays, filled one expansion at a time at its rows."""

    def __init__(self, keys: np.ndarray, find: SortedLookup, offsets: np.ndarray) -> None:
        self.keys, self.find, self.offsets = keys, find, offsets
        # every move is placed once; rows as int32 while they fit (4 bytes a move, not 8: the
        # graph's largest array; every engine reads either width)
        self.child = np.empty(int(offsets[-1]), dtype=np.int32 if len(keys) < 2**31 - 1 else np.int64)
        # the per-row arrays take the dtypes of the game's first expansion (as a concatenation would)
        self.kind = self.to_move = self.result = self.margin = None  # type: ignore[assignment]
        self.probs: np.ndarray | None = None
        self.sim_rows: np.ndarray | None = None
        self.payoff: np.ndarray | None = None

    def place(self, rows: np.ndarray, part: Any) -> None:
        counts = np.diff(part.offsets)
        starts = self.offsets[rows]
        differ = counts != self.offsets[rows + 1] - starts
        if differ.any():
            from solver.errors import ProtocolError

            i = int(np.flatnonzero(differ)[0])
            raise ProtocolError(f"position {int(self.keys[rows[i]])} has {int(counts[i])} moves in one "
                                "expansion and another number in the next: expand() must give the same "
                                "moves every time (`pyramids check` tests the protocol)")
        if self.kind is None:
            n = len(self.keys)
            self.kind, self.to_move, self.result, self.margin = (
                np.zeros(n, dtype=a.dtype) for a in (part.kind, part.to_move, part.result, part.margin))
        self.kind[rows] = part.kind
        self.to_move[rows] = part.to_move
        self.result[rows] = part.result
        self.margin[rows] = part.margin
        edges = ranges(starts, counts)
        self.child[edges] = self.find(part.children)
        if part.probs is not None:
            if self.probs is None:
                self.probs = np.ones(len(self.child), dtype=np.float64)
            self.probs[edges] = part.probs
        if part.sim_rows is not None:
            if self.sim_rows is None:
                self.sim_rows = np.zeros(len(self.keys), dtype=np.int32)
            self.sim_rows[rows] = part.sim_rows
        if part.payoff is not None and self.payoff is None:
            self.payoff = self.result.astype(np.float64)  # the rows placed so far pay their result
        if self.payoff is not None:
            self.payoff[rows] = part.payoff if part.payoff is not None else part.result


#: plies with fewer positions than this are expanded in this process
_PARALLEL_MIN = 100_000
_WORKER_GAME: Game | None = None


def _init_worker(game: Game, parent: int) -> None:
    """Worker set-up: hold the game, leave Ctrl-C to the parent (which shuts the pool down) and
    die with the parent, even when it is killed with SIGKILL (Linux ``PR_SET_PDEATHSIG``)."""
    global _WORKER_GAME
    _WORKER_GAME = game
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent(parent)


def _die_with_parent(parent: int) -> None:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):  # not Linux: the pool's own shutdown is all there is
        return
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


def _expand_in_worker(keys: np.ndarray, canonical: bool):
    assert _WORKER_GAME is not None
    return _WORKER_GAME.expand(keys, canonical=canonical)


def _start_pool(game: Game, workers: int) -> Executor | None:
    """Threads when the game's batch path runs without the GIL (compiled kernels: no copies
    between processes), else a pool of forked processes that each hold the game (None where
    fork is unavailable)."""
    if getattr(game, "expand_releases_gil", False):
        return ThreadPoolExecutor(max_workers=workers)
    try:
        ctx = multiprocessing.get_context("fork")
    except ValueError:
        return None
    return ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_init_worker,
                               initargs=(game, os.getpid()))


def _expand_level(game: Game, frontier: np.ndarray, chunk: int, symmetry: bool,
                  pool: Executor | None, workers: int) -> list:
    """Expansions of a ply's positions, in order, in chunks (in the pool for large plies)."""
    if pool is None or len(frontier) < _PARALLEL_MIN:
        return [game.expand(frontier[s : s + chunk], canonical=symmetry)
                for s in range(0, len(frontier), chunk)]
    size = min(chunk, -(-len(frontier) // (4 * workers)))
    pieces = [frontier[s : s + size] for s in range(0, len(frontier), size)]
    if isinstance(pool, ThreadPoolExecutor):
        return list(pool_map(pool, lambda keys: game.expand(keys, canonical=symmetry), pieces))
    return list(pool_map(pool, _expand_in_worker, pieces, [symmetry] * len(pieces)))
