"""Enumeration: every position reachable from the start, breadth first, as integer-key arrays.

The result is a :class:`~solver.engines.graph.Graph` (also importable from here) in compressed
sparse row form: positions sorted by key, and for each position the row indices of its children
(one edge per legal action, duplicates kept, so counters in the retrograde engine count actions,
not distinct children).
"""

from __future__ import annotations

from typing import Callable

import math
import multiprocessing
import os
import signal
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np

from solver.core.game import Game, NodeKind
from solver.engines.graph import Graph, dead_end_message
from solver.engines.waiting import pool_map
from solver.faults import fault_point
from solver.core.arrays import isin_sorted, lookup_sorted, ranges, unique

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
    """
    from solver.errors import TooBigError

    if starts is None:
        check_position_bound(game, max_positions, symmetry=symmetry)
        start = game.initial_state()
        if symmetry:
            start = game.canonical(start)
        root_key = np.uint64(game.encode(start))
        seen = np.array([root_key], dtype=np.uint64)  # sorted
    else:
        given = np.asarray(starts, dtype=np.uint64)
        if not len(given):
            raise ValueError("starts must name at least one position")
        root_key = given[0]
        seen = unique(given)
    frontier = seen.copy()
    level_keys: list[np.ndarray] = []
    level_parts: list[list] = []
    ply = 0
    workers = (os.cpu_count() or 1) if workers is None else workers
    pool = None
    try:
        while len(frontier):
            if workers > 1 and len(frontier) >= _PARALLEL_MIN and pool is None:
                pool = _start_pool(game, workers)
            parts = _expand_level(game, frontier, chunk, symmetry, pool, workers)
            level_keys.append(frontier)
            level_parts.append(parts)
            kids = [p.children for p in parts if len(p.children)]
            if kids:
                new = unique(np.concatenate(kids))
                new = new[~isin_sorted(new, seen)]
            else:
                new = np.empty(0, dtype=np.uint64)
            if len(new):
                # two sorted runs: a stable sort (timsort) merges them in linear time
                seen = np.sort(np.concatenate([seen, new]), kind="stable")
            frontier = new
            if progress is not None:
                progress(ply, len(seen), len(frontier))
            if pool is not None:
                fault_point("enumerate-pool")
            if max_positions is not None and len(seen) > max_positions:
                raise TooBigError(
                    f"{game.variant.label()} has more than {max_positions:,} positions; "
                    "raise --max-positions or pick a smaller variant"
                )
            ply += 1
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    # Assemble arrays in BFS order, then sort rows by key.
    bfs_keys = np.concatenate(level_keys)
    plies = np.concatenate([np.full(len(k), d, dtype=np.uint16) for d, k in enumerate(level_keys)])
    flat = [p for parts in level_parts for p in parts]
    kind = np.concatenate([p.kind for p in flat])
    to_move = np.concatenate([p.to_move for p in flat])
    result = np.concatenate([p.result for p in flat])
    margin = np.concatenate([p.margin for p in flat])
    counts = np.concatenate([np.diff(p.offsets) for p in flat])
    children = np.concatenate([p.children for p in flat]) if flat else np.empty(0, np.uint64)
    any_probs = any(p.probs is not None for p in flat)
    probs = None
    if any_probs:
        probs = np.concatenate(
            [p.probs if p.probs is not None else np.ones(len(p.children)) for p in flat]
        )

    sim_rows = None
    if any(getattr(p, "sim_rows", None) is not None for p in flat):
        sim_rows = np.concatenate([
            p.sim_rows if p.sim_rows is not None else np.zeros(len(p.kind), dtype=np.int32)
            for p in flat
        ]).astype(np.int32)

    payoff = None
    if any(getattr(p, "payoff", None) is not None for p in flat):
        payoff = np.concatenate([
            p.payoff if p.payoff is not None else p.result.astype(np.float64) for p in flat])

    dead = (counts == 0) & (kind != NodeKind.TERMINAL)
    if dead.any():  # a non-terminal position without moves would silently be a draw
        from solver.errors import ProtocolError

        i = int(np.flatnonzero(dead)[0])
        key = int(bfs_keys[i])
        try:
            where = f" ({' '.join(game.describe_state(game.decode(key)).split())[:120]})"
        except Exception:  # noqa: BLE001 - the message must not depend on render working
            where = ""
        raise ProtocolError(dead_end_message(key, NodeKind(int(kind[i])), where))

    order = np.argsort(bfs_keys, kind="stable")
    keys = bfs_keys[order]
    n = len(keys)
    # children grouped by parent in BFS order -> regroup in key order
    bfs_offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=bfs_offsets[1:])
    sorted_counts = counts[order]
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(sorted_counts, out=offsets[1:])
    edge_src = ranges(bfs_offsets[order], sorted_counts)
    child_keys = children[edge_src]
    child_rows = lookup_sorted(keys, child_keys)
    if probs is not None:
        probs = probs[edge_src]

    return Graph(
        keys=keys,
        kind=kind[order],
        to_move=to_move[order],
        ply=plies[order],
        offsets=offsets,
        child=child_rows,
        probs=probs,
        result=result[order],
        margin=margin[order],
        root=int(np.searchsorted(keys, root_key)),
        symmetry=symmetry,
        stats={"plies": len(level_keys)},
        sim_rows=None if sim_rows is None else sim_rows[order],
        payoff=None if payoff is None else payoff[order],
    )


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
