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
from solver.errors import TableError, VariantError

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
    task = Task(tier_name(run.game, tier, run.slices), mode, total=positions, unit="positions expanded", percent=True,
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


def slice_of(keys: np.ndarray, slices: int) -> np.ndarray:
    """``int64[len(keys)]``: the slice (``0 .. slices - 1``) of each position of a tier cut in
    ``slices`` (:func:`tiers_of`): a mix of its key's bits (splitmix64's finaliser) modulo
    ``slices``, so the slices of a tier are about equal whatever the keys of one tier have in
    common (a cut by raw key ranges would be as lopsided as the keys)."""
    x = np.asarray(keys, dtype=np.uint64).copy()
    with np.errstate(over="ignore"):
        x ^= x >> np.uint64(30)
        x *= np.uint64(0xBF58476D1CE4E5B9)
        x ^= x >> np.uint64(27)
        x *= np.uint64(0x94D049BB133111EB)
        x ^= x >> np.uint64(31)
    return (x % np.uint64(slices)).astype(np.int64)


def check_slices(game: Game, slices: int) -> int:
    """``slices`` as the number of slices a tier of ``game`` is cut into (:func:`tiers_of`), or a
    one-line error: at least 1, and more only for a game whose every move leaves its tier
    (:attr:`Game.tiers_rise_strictly`), since slices of one tier are solved apart."""
    if int(slices) != slices or slices < 1:
        raise VariantError(f"--tier-slices {slices} must be a whole number of at least 1 (1: tiers as the game names them)")
    if slices > 1 and not game.tiers_rise_strictly:
        raise VariantError(f"--tier-slices {slices}: the slices of a tier are solved apart, which needs a game whose "
                           f"every move leaves its tier; {game.name}'s moves can stay in their tier: drop "
                           "--tier-slices")
    return int(slices)


def tiers_of(game: Game, keys: np.ndarray, slices: int = 1) -> np.ndarray:
    """The tier of every position in ``keys`` as the tier solver numbers them: the game's
    :meth:`Game.tier_of`, each tier cut into ``slices`` slices (``tier * slices + slice``,
    :func:`slice_of`) when ``slices`` > 1. A game whose every move leaves its tier
    (:attr:`Game.tiers_rise_strictly`) keeps that property: a move's child is in a higher tier
    of the game, so in a higher slice number whatever its slice, and the slices of one tier are
    independent tasks, each a ``slices``-th of the tier's memory."""
    tiers = np.asarray(game.tier_of(np.asarray(keys, dtype=np.uint64)), dtype=np.int64)
    return tiers if slices == 1 else tiers * slices + slice_of(keys, slices)


def tier_name(game: Game, tier: int, slices: int = 1) -> str:
    """The game's readable name of ``tier`` (:meth:`Game.tier_name`; ``"tier <n>"`` by default),
    with ``, slice i/n`` when tiers are cut in slices (:func:`tiers_of`)."""
    if slices == 1:
        return game.tier_name(int(tier))
    base, part = divmod(int(tier), slices)
    return f"{game.tier_name(base)}, slice {part + 1}/{slices}"


def tier_file(tier: int) -> str:
    return f"tier-{int(tier)}.parquet"


def tier_keys(run: Any, t: int) -> np.ndarray:
    """A tier's discovered keys (sorted)."""
    return run.files.load(run.discover / f"keys-{t}.npy")


def tier_plies(run: Any, t: int) -> np.ndarray:
    """A tier's discovered plies (fewest moves from the start), in the order of its keys."""
    return run.files.load(run.discover / f"ply-{t}.npy")


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


def child_tiers(game: Game, exp: Expansion, slices: int = 1) -> np.ndarray:
    """The tier of every child of ``exp`` (:func:`tiers_of`): the expansion's own ``child_tier``
    where the game gives it (read off the parent, no decoding), else :meth:`Game.tier_of` of the
    children; cut in ``slices``."""
    if not len(exp.children):
        return np.empty(0, np.int64)
    if exp.child_tier is None:
        return tiers_of(game, exp.children, slices)
    tiers = np.asarray(exp.child_tier, dtype=np.int64)
    return tiers if slices == 1 else tiers * slices + slice_of(exp.children, slices)


def split_inside(game: Game, t: int, exp: Expansion, keys: np.ndarray, index: SortedLookup, slices: int = 1
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each child's tier (:func:`child_tiers`), which children of ``exp`` stay in tier ``t``,
    and their rows among the tier's sorted ``keys`` (an error when one is missing: damaged
    discovery files)."""
    kids = np.asarray(exp.children, dtype=np.uint64)
    ct = child_tiers(game, exp, slices)
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

