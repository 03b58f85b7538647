"""What every tier worker does the same way, whatever engine solves the tier: a tier's name and
file, its discovered arrays, the expansion of its positions in chunks (threads when a pool is
given), and the split of children into those that stay in the tier and those that leave it."""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Iterator

import numpy as np

from solver.core.arrays import SortedLookup
from solver.core.game import Expansion, Game, NodeKind
from solver.core.progress import Task
from solver.engines import waiting
from solver.errors import TableError

#: positions expanded at once (a test makes it small to cross chunk borders)
CHUNK = 1 << 15
#: tiers of at least this many positions show their own steps (a bar, or a part of the lines:
#: ``... > 5 planted: 1,048,576 of 50,693,916 positions expanded (2.1%) (expanding)``), so a tier
#: that takes minutes does not sit silent; smaller ones would only flash by
STEP_MIN_POSITIONS = 1 << 20

_steps = threading.local()  # the tier being solved in this thread (its Task), if it shows steps


@contextmanager
def tier_steps(run: Any, tier: int, positions: int) -> Iterator[None]:
    """While a tier worker solves ``tier`` in this thread, :func:`tier_step` reports where it is
    (in ``run.progress``'s mode: bars, lines or nothing; nothing for small tiers). The workers
    stay free of progress code beyond naming their steps."""
    mode = getattr(run, "progress", False) if positions >= STEP_MIN_POSITIONS else False
    task = Task(tier_name(run.game, tier), mode, total=positions, unit="positions expanded", percent=True,
                unit_scale=True, note="starting")
    _steps.task = task
    try:
        yield
    finally:
        _steps.task = None
        task.close()


def tier_step(note: str | None = None, done: int | None = None) -> None:
    """Say what the tier being solved in this thread is doing (``note``) and how many of its
    positions are through that step (``done``); nothing outside :func:`tier_steps`."""
    task = getattr(_steps, "task", None)
    if task is not None:
        task.update(done, note=note)


def tier_name(game: Game, tier: int) -> str:
    """The game's readable name of ``tier`` (:meth:`Game.tier_name`; ``"tier <n>"`` by default)."""
    return game.tier_name(int(tier))


def tier_file(tier: int) -> str:
    return f"tier-{int(tier)}.parquet"


def tier_keys(run: Any, t: int) -> np.ndarray:
    """A tier's discovered keys (sorted)."""
    return np.load(run.discover / f"keys-{t}.npy")


def tier_plies(run: Any, t: int) -> np.ndarray:
    """A tier's discovered plies (fewest moves from the start), in the order of its keys."""
    return np.load(run.discover / f"ply-{t}.npy")


def tier_arrays(run: Any, t: int) -> tuple[np.ndarray, ...]:
    """A tier's discovered keys and plies, and empty node kind, side to move and terminal result
    arrays for its positions (filled as the tier is expanded)."""
    keys, ply = tier_keys(run, t), tier_plies(run, t)
    n = len(keys)
    return keys, ply, np.empty(n, np.int8), np.empty(n, np.int8), np.zeros(n, np.int8)


def expansions(run: Any, keys: np.ndarray, chunk: int | None = None):
    """``(start, Expansion)`` of ``keys`` in chunks of ``chunk`` positions (default
    :data:`CHUNK`), in order. With a pool, the next chunks are expanded in threads while one is
    used (at most ``workers + 1`` chunks held at once)."""
    for s, exp, _ in expansions_then(run, keys, None, chunk):
        yield s, exp


def expansions_then(run: Any, keys: np.ndarray, then: Any, chunk: int | None = None):
    """:func:`expansions` that also yields ``then(start, expansion)`` for each chunk, computed in
    the pool's thread with the expansion (work on a chunk that needs no other chunk: finding
    where its children lie), so the loop that folds the chunks in order does less."""
    from collections import deque

    game, sym = run.game, run.symmetry
    size = CHUNK if chunk is None else int(chunk)
    starts = range(0, len(keys), size)
    n = len(keys)

    def one(s: int):
        exp = _no_dead_end(game.expand(keys[s : s + size], canonical=sym), keys, s)
        return exp, (None if then is None else then(s, exp))

    if run.pool is None or n <= size:
        for s in starts:
            tier_step("expanding", s)
            yield (s, *one(s))
        tier_step("expanded", n)
        return
    window: deque = deque()
    for s in starts:
        window.append((s, run.pool.submit(one, s)))
        if len(window) > run.workers:
            first, fut = window.popleft()
            tier_step("expanding", first)
            yield (first, *waiting.result(fut))
    while window:
        first, fut = window.popleft()
        tier_step("expanding", first)
        yield (first, *waiting.result(fut))
    tier_step("expanded", n)


def _no_dead_end(exp, keys: np.ndarray, start: int):
    """``exp``, after refusing a non-terminal position without moves (it would be a draw) and
    real payoffs at the ends (the tier solvers read ``result`` only)."""
    dead = (np.diff(exp.offsets) == 0) & (exp.kind != NodeKind.TERMINAL)
    if dead.any():
        from solver.engines.graph import dead_end_message
        from solver.errors import ProtocolError

        i = int(np.flatnonzero(dead)[0])
        raise ProtocolError(dead_end_message(int(keys[start + i]), NodeKind(int(exp.kind[i]))))
    if getattr(exp, "payoff", None) is not None:
        from solver.errors import VariantError

        raise VariantError("ends with real payoffs (Outcome.payoffs) are solved on the whole graph only; "
                           "solve with --no-tiered")
    return exp


def child_tiers(game: Game, exp: Expansion) -> np.ndarray:
    """The tier of every child of ``exp``: the expansion's own ``child_tier`` where the game
    gives it (read off the parent, no decoding), else :meth:`Game.tier_of` of the children."""
    if exp.child_tier is not None:
        return np.asarray(exp.child_tier, dtype=np.int64)
    if not len(exp.children):
        return np.empty(0, np.int64)
    return np.asarray(game.tier_of(np.asarray(exp.children, dtype=np.uint64)), dtype=np.int64)


def split_inside(game: Game, t: int, exp: Expansion, keys: np.ndarray, index: SortedLookup
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each child's tier (:func:`child_tiers`), which children of ``exp`` stay in tier ``t``,
    and their rows among the tier's sorted ``keys`` (an error when one is missing: damaged
    discovery files)."""
    kids = np.asarray(exp.children, dtype=np.uint64)
    ct = child_tiers(game, exp)
    inside = ct == t
    rows = index(kids[inside]) if inside.any() else np.empty(0, np.int64)
    if len(rows):
        check_found(keys, rows, kids[inside], t, t)
    return ct, inside, rows


def check_found(keys: np.ndarray, idx: np.ndarray, wanted: np.ndarray, t: int, u: int) -> None:
    clipped = np.minimum(idx, max(len(keys) - 1, 0))
    if len(keys) == 0 or not np.array_equal(keys[clipped], wanted):
        raise TableError(f"tier {u} lacks a position that a move of tier {t} reaches: the discovery "
                         "files are damaged", fix="solve again with --force")

