"""Ranking: a bijection between the positions of one tier and ``0 .. size - 1``.

A game may give, per tier, a **ranking** (:meth:`solver.core.game.Game.rank`, ``unrank`` and
``tier_size``, :attr:`~solver.core.game.Game.has_ranking`): every position of the tier has a
rank, two positions never share one, and every rank below the tier's size is some position of
the tier (reachable from the start or not). Tier files indexed by rank need no keys: a
position's record is found by computing its rank (GamesmanOne's "generic hash" does this for
boards with known piece counts).

The common case is a board of ``n`` cells, each holding one of ``k`` symbols (0: empty), with a
known count of each symbol: its arrangements (multiset permutations) in lexicographic order
are ranked by :class:`BoardRanking`, vectorised on arrays of boards (numba). A board whose
counts vary inside a tier (Blam!: pyramids come back to the stash) lists its allowed count
vectors; each gets a block of ranks, one after the other.

:func:`check_ranking` checks a game's hook on sampled keys (``pyramids check``, and the tiered
solve before any work): ranks in range and distinct, ``unrank(rank(k)) == k``, and random ranks
unranked into positions of that tier whose rank is the same.
"""

from __future__ import annotations

from math import factorial, prod
from typing import TYPE_CHECKING, Sequence

import numpy as np
from numba import njit

if TYPE_CHECKING:  # (no import at run time: the protocol module imports nothing from here)
    from solver.core.game import Game


def multinomial(n: int, counts: Sequence[int]) -> int:
    """Arrangements of ``n`` cells with ``counts`` of symbols 1.. and the rest empty."""
    rest = n - sum(counts)
    if rest < 0 or min(counts, default=0) < 0:
        return 0
    return factorial(n) // (factorial(rest) * prod(factorial(c) for c in counts))


@njit(cache=True)
def _rank_kernel(boards, radix, vector_of, counts, offsets, totals, out):  # pragma: no cover - compiled
    """Each board's rank: the offset of its count vector plus its rank among the arrangements
    of those counts (lexicographic: at each cell, the arrangements that put a smaller symbol
    there come first, ``total * c[s] // left`` of them); -1 when its count vector is not allowed."""
    m, n = boards.shape
    k = counts.shape[1] + 1
    c = np.zeros(k, np.int64)
    for i in range(m):
        c[:] = 0
        for j in range(n):
            c[boards[i, j]] += 1
        code = 0
        bad = False
        for s in range(k - 1, 0, -1):
            if c[s] >= radix:
                bad = True
            code = code * radix + c[s]
        v = -1 if bad else vector_of[code]
        if v < 0:
            out[i] = -1
            continue
        total = totals[v]
        left = n
        r = offsets[v]
        for j in range(n):
            x = boards[i, j]
            for s in range(x):
                if c[s] > 0:
                    r += total * c[s] // left
            total = total * c[x] // left
            c[x] -= 1
            left -= 1
        out[i] = r


@njit(cache=True)
def _unrank_kernel(ranks, counts, offsets, totals, out):  # pragma: no cover - compiled
    """The boards of ``ranks`` (each below the last offset): the count vector whose block holds
    the rank, then cell by cell the symbol whose block of arrangements holds what is left."""
    m, n = out.shape
    k = counts.shape[1] + 1
    c = np.zeros(k, np.int64)
    for i in range(m):
        r = ranks[i]
        v = np.searchsorted(offsets, r, side="right") - 1
        r -= offsets[v]
        c[0] = n
        for s in range(1, k):
            c[s] = counts[v, s - 1]
            c[0] -= c[s]
        total = totals[v]
        left = n
        for j in range(n):
            for s in range(k):
                if c[s] == 0:
                    continue
                block = total * c[s] // left
                if r < block:
                    out[i, j] = s
                    total = block
                    c[s] -= 1
                    break
                r -= block
            left -= 1


class BoardRanking:
    """Boards of ``n`` cells, each holding one of ``k`` symbols (0: empty), whose counts of the
    symbols ``1 .. k-1`` are one of ``vectors``: a board's rank is the first rank of its count
    vector's block (the blocks in the order given) plus its rank among the arrangements of those
    counts, in lexicographic order of the cells. ``size``: the number of such boards."""

    def __init__(self, n: int, k: int, vectors: Sequence[Sequence[int]]) -> None:
        vectors = [tuple(int(x) for x in v) for v in vectors]
        if not vectors or any(len(v) != k - 1 for v in vectors):
            raise ValueError(f"a board ranking needs count vectors of {k - 1} symbols")
        if len(set(vectors)) != len(vectors):
            raise ValueError("a board ranking's count vectors must be distinct")
        totals = [multinomial(n, v) for v in vectors]
        if any(t == 0 for t in totals):
            raise ValueError(f"a count vector holds more symbols than the {n} cells")
        self.n, self.k = n, k
        self.size = sum(totals)
        if self.size * max(n, 1) >= 2**63:
            raise ValueError(f"{self.size:,} boards: ranks beyond 64 bits")
        self.radix = max(max(v, default=0) for v in vectors) + 1
        self._vector_of = np.full(self.radix ** (k - 1), -1, np.int64)
        for i, v in enumerate(vectors):
            self._vector_of[sum(c * self.radix**s for s, c in enumerate(v))] = i
        self._counts = np.array(vectors, np.int64).reshape(len(vectors), k - 1)
        self._totals = np.array(totals, np.int64)
        self._offsets = np.concatenate([[0], np.cumsum(self._totals)[:-1]]).astype(np.int64)

    def rank(self, boards: np.ndarray) -> np.ndarray:
        """``int64[m]``: the rank of each row of ``boards`` (``[m, n]`` symbols), -1 where its
        counts are not one of the vectors."""
        boards = np.ascontiguousarray(boards, dtype=np.int64).reshape(-1, self.n)
        if len(boards) and (boards.min() < 0 or boards.max() >= self.k):
            raise ValueError(f"board symbols must lie in 0..{self.k - 1}")
        out = np.empty(len(boards), np.int64)
        _rank_kernel(boards, self.radix, self._vector_of, self._counts, self._offsets, self._totals, out)
        return out

    def unrank(self, ranks: np.ndarray) -> np.ndarray:
        """``int8[m, n]``: the board of each rank (each in ``0 .. size - 1``)."""
        ranks = np.ascontiguousarray(ranks, dtype=np.int64)
        if len(ranks) and (ranks.min() < 0 or ranks.max() >= self.size):
            raise ValueError(f"ranks must lie in 0..{self.size - 1}")
        out = np.zeros((len(ranks), self.n), np.int8)
        _unrank_kernel(ranks, self._counts, self._offsets, self._totals, out)
        return out


def check_ranking(game: "Game", keys: np.ndarray, *, samples: int = 200, seed: int = 0
                  ) -> list[tuple[str, int | None]]:
    """Problems of ``game``'s ranking hook on ``keys`` (positions of the game, any tiers) and on
    ``samples`` random ranks of each of their tiers: (message, key) pairs, empty when none.
    Checked: every rank lies in ``0 .. tier_size - 1``; distinct keys get distinct ranks;
    ``unrank(rank(key)) == key``; a random rank unranks to a key of that tier (``tier_of``)
    whose rank is the same."""
    keys = np.unique(np.asarray(keys, dtype=np.uint64))
    if not len(keys):
        return []
    tiers = np.asarray(game.tier_of(keys), dtype=np.int64)
    rng = np.random.default_rng(seed)
    out: list[tuple[str, int | None]] = []
    for t in np.unique(tiers).tolist():
        mine = keys[tiers == t]
        size = int(game.tier_size(t))
        ranks = np.asarray(game.rank(t, mine), dtype=np.int64)
        wrong = np.flatnonzero((ranks < 0) | (ranks >= size))
        if len(wrong):
            out.append((f"rank gives {int(ranks[wrong[0]])}, outside 0..{size - 1} of its tier "
                        f"{game.tier_name(t)}", int(mine[wrong[0]])))
            continue
        order = np.argsort(ranks, kind="stable")
        same = np.flatnonzero(ranks[order][1:] == ranks[order][:-1])
        if len(same):
            a, b = mine[order[same[0]]], mine[order[same[0] + 1]]
            out.append((f"rank gives two positions the same rank {int(ranks[order[same[0]]])} "
                        f"(keys {int(a)} and {int(b)}): not a bijection", int(a)))
            continue
        back = np.asarray(game.unrank(t, ranks), dtype=np.uint64)
        wrong = np.flatnonzero(back != mine)
        if len(wrong):
            out.append((f"unrank(rank(key)) gives key {int(back[wrong[0]])}, not the key itself",
                        int(mine[wrong[0]])))
            continue
        some = rng.integers(0, size, min(samples, size), dtype=np.int64)
        made = np.asarray(game.unrank(t, some), dtype=np.uint64)
        wrong = np.flatnonzero(np.asarray(game.tier_of(made), dtype=np.int64) != t)
        if len(wrong):
            out.append((f"unrank of rank {int(some[wrong[0]])} in tier {game.tier_name(t)} gives a position "
                        "of another tier (tier_of disagrees)", int(made[wrong[0]])))
            continue
        again = np.asarray(game.rank(t, made), dtype=np.int64)
        wrong = np.flatnonzero(again != some)
        if len(wrong):
            out.append((f"rank of unrank({int(some[wrong[0]])}) gives {int(again[wrong[0]])}: not a bijection",
                        int(made[wrong[0]])))
    return out


def sample_keys(game: "Game", *, breadth: int = 2_000, games: int = 20, plies: int = 200,
                seed: int = 0) -> np.ndarray:
    """Canonical keys of ``game`` from its batch path (:meth:`Game.expand`): up to ``breadth``
    breadth first from the start, then ``games`` random descents to the end (the deep tiers)."""
    start = np.array([game.encode(game.canonical(game.initial_state()))], np.uint64)
    found, frontier = [start], start
    total = 1
    while len(frontier) and total < breadth:
        kids = np.unique(np.asarray(game.expand(frontier, canonical=True).children, dtype=np.uint64))
        kids = np.setdiff1d(kids, np.concatenate(found), assume_unique=True)[: breadth - total]
        found.append(kids)
        frontier, total = kids, total + len(kids)
    rng = np.random.default_rng(seed)
    for _ in range(games):
        key = start
        for _ in range(plies):
            kids = np.asarray(game.expand(key, canonical=True).children, dtype=np.uint64)
            if not len(kids):
                break
            key = kids[[rng.integers(len(kids))]]
            found.append(key)
    return np.unique(np.concatenate(found))


def refuse_broken_ranking(game: "Game") -> None:
    """Before a tiered solve: :func:`check_ranking` on :func:`sample_keys` (well under a second
    on the shipped games); a broken hook raises :class:`~solver.errors.ProtocolError` in one line
    naming a position."""
    if not (game.has_tiers and game.has_ranking and game.ranked()):
        return
    from solver.errors import ProtocolError

    problems = check_ranking(game, sample_keys(game), samples=50)
    if problems:
        message, key = problems[0]
        where = ""
        if key is not None:
            try:
                where = f" at key {key} ({' '.join(game.describe_state(game.decode(key)).split())[:120]})"
            except Exception:  # noqa: BLE001 - a key that does not decode is named by its number
                where = f" at key {key}"
        raise ProtocolError(f"{game.variant.label()}: its ranking hook is broken: {message}{where}",
                            fix=f"`pyramids check {game.name}` lists every problem; fix Game.rank/unrank/tier_size")
