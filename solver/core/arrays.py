"""Small vectorised array helpers shared by the engines.

``np.unique`` is ~80x slower than a plain sort on this project's numpy (2.4, measured: 8.5 s
vs 0.11 s for 4M int64), so engines use :func:`unique` (sort + neighbour mask) instead.
"""

from __future__ import annotations

from typing import Any

import numpy as np


#: ``uint64`` arrays of at most this many values are sorted by a compiled radix sort in
#: :func:`unique` (it holds a second copy while it sorts; larger arrays use numpy's sort)
RADIX_MAX = 1 << 22


def unique(values: np.ndarray) -> np.ndarray:
    """Sorted distinct values of ``values``. Keys (``uint64``) up to :data:`RADIX_MAX` of them:
    by a compiled radix sort (:func:`radix_sort_u64`), about 3x numpy's sort here: numpy 2.4's
    sort of 64-bit integers runs at 47-55 ns a value on this machine (no vectorised sort), the
    radix sort at 14-22; the children of each expanded chunk are made distinct this way, which
    took a fifth of a discovery's time."""
    if len(values) == 0:
        return values
    if values.dtype == np.uint64 and len(values) <= RADIX_MAX:
        a = radix_sort_u64(values)
        k = _compact_sorted(a)
        return a[:k] if 2 * k >= len(a) else a[:k].copy()
    a = np.sort(values)
    keep = np.empty(len(a), dtype=bool)
    keep[0] = True
    np.not_equal(a[1:], a[:-1], out=keep[1:])
    return a[keep]


def unique_counts(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct values and how often each occurs."""
    if len(values) == 0:
        return values, np.zeros(0, dtype=np.int64)
    a = np.sort(values)
    keep = np.empty(len(a), dtype=bool)
    keep[0] = True
    np.not_equal(a[1:], a[:-1], out=keep[1:])
    starts = np.flatnonzero(keep)
    return a[starts], np.diff(np.append(starts, len(a)))


def isin_sorted(values: np.ndarray, sorted_ref: np.ndarray) -> np.ndarray:
    """``values`` found in the sorted array ``sorted_ref`` (faster than ``np.isin``)."""
    if len(sorted_ref) == 0:
        return np.zeros(len(values), dtype=bool)
    idx = lookup_sorted(sorted_ref, values)
    idx[idx == len(sorted_ref)] = 0
    return sorted_ref[idx] == values


def ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(s, s + c)`` for every pair, vectorised."""
    total = int(counts.sum())
    if total == 0:
        return np.empty(0, dtype=np.int64)
    ends = np.cumsum(counts)
    out = np.ones(total, dtype=np.int64)
    nz = counts > 0
    starts_nz, counts_nz, ends_nz = starts[nz], counts[nz], ends[nz]
    first = np.concatenate([[0], ends_nz[:-1]])
    out[first] = starts_nz
    out[first[1:]] -= starts_nz[:-1] + counts_nz[:-1] - 1
    return np.cumsum(out)


# --- compiled helpers (numba) for the hot spots of enumeration and retrograde -----------------
# A plain ``np.searchsorted`` of 74M random keys into 20M sorted keys costs ~25 s here (each
# probe is a chain of cache misses); a bucket index on the high bits of the key narrows every
# search to a few neighbouring entries first (measured below 2 s for the same arrays).
from numba import njit as _njit, prange as _prange  # noqa: E402


@_njit(cache=True, nogil=True, inline="always")
def _bucket_search(sorted_keys, starts, shift, x):  # pragma: no cover - compiled
    """The first index with ``sorted_keys[idx] >= x``, searched inside ``x``'s bucket."""
    hb = x >> shift
    if hb >= np.uint64(len(starts) - 1):  # compared as uint64: a needle >= 2**63 must not wrap negative
        return len(sorted_keys)
    b = np.int64(hb)
    lo = starts[b]
    hi = starts[b + 1]
    while lo < hi:
        mid = (lo + hi) >> 1
        if sorted_keys[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@_njit(cache=True, nogil=True, parallel=True)
def _lookup_kernel(sorted_keys, starts, shift, needles, out):  # pragma: no cover - compiled
    for i in _prange(len(needles)):
        out[i] = _bucket_search(sorted_keys, starts, shift, needles[i])


@_njit(cache=True, nogil=True, parallel=True)
def _contains_kernel(sorted_keys, starts, shift, needles, out):  # pragma: no cover - compiled
    n = len(sorted_keys)
    for i in _prange(len(needles)):
        lo = _bucket_search(sorted_keys, starts, shift, needles[i])
        out[i] = lo < n and sorted_keys[lo] == needles[i]


@_njit(cache=True, nogil=True)
def _bucket_starts(sorted_keys, shift, nb):  # pragma: no cover - compiled
    """``searchsorted(sorted_keys, b << shift)`` for every bucket ``b < nb``, then ``len``: one
    linear pass (a binary search per bucket cost 3x more on 47M keys, once per level of a tier's
    discovery, in the main thread while the workers waited)."""
    out = np.empty(nb + 1, np.int64)
    b = 0
    for i in range(len(sorted_keys)):
        kb = sorted_keys[i] >> shift
        while b <= kb and b < nb:
            out[b] = i
            b += 1
    while b <= nb:
        out[b] = len(sorted_keys)
        b += 1
    return out


class SortedLookup:
    """``np.searchsorted(sorted_keys, needles)`` (left side) for ``uint64`` keys, fast on large
    random needles: a bucket index over the top bits of the keys (built once, about 16 keys per
    bucket, so 0.5 bytes per key) narrows every binary search. Build it once per array and call
    it for many batches of needles."""

    def __init__(self, sorted_keys: np.ndarray) -> None:
        self.keys = np.ascontiguousarray(sorted_keys, dtype=np.uint64)
        n = len(self.keys)
        self.starts = None
        if n == 0:
            return
        top = int(self.keys[-1])
        bits = max(1, int(n).bit_length() - 4)  # about 16 keys per bucket (at most 2**bits buckets)
        self.shift = max(0, top.bit_length() - bits)
        nb = (top >> self.shift) + 1
        # the buckets' first keys; the end of the last bucket is every key (its bound, nb << shift,
        # would wrap to 0 in uint64 when the top key has bit 63 set: found by hypothesis)
        self.starts = _bucket_starts(self.keys, np.uint64(self.shift), nb)

    def contains(self, needles: np.ndarray) -> np.ndarray:
        """Which ``needles`` are among the keys (a bool mask, as :func:`isin_sorted`)."""
        needles = np.ascontiguousarray(needles, dtype=np.uint64)
        if not len(self.keys):
            return np.zeros(len(needles), dtype=bool)
        if self.starts is None or len(needles) < 4096:
            return self.keys[np.minimum(self(needles), len(self.keys) - 1)] == needles
        out = np.empty(len(needles), dtype=bool)  # (one byte a needle: no index array beside it)
        _contains_kernel(self.keys, self.starts, np.uint64(self.shift), needles, out)
        return out

    def __call__(self, needles: np.ndarray) -> np.ndarray:
        needles = np.ascontiguousarray(needles, dtype=np.uint64)
        out = np.empty(len(needles), dtype=np.int64)
        if self.starts is None or len(needles) < 4096:
            out[:] = np.searchsorted(self.keys, needles)
            return out
        _lookup_kernel(self.keys, self.starts, np.uint64(self.shift), needles, out)
        return out


def lookup_sorted(sorted_keys: np.ndarray, needles: np.ndarray) -> np.ndarray:
    """``np.searchsorted(sorted_keys, needles)`` (left side) for ``uint64`` keys, fast on large
    random needles (see :class:`SortedLookup`; build one to look up many batches)."""
    if len(needles) < 100_000 or len(sorted_keys) == 0:
        return np.searchsorted(np.ascontiguousarray(sorted_keys, dtype=np.uint64),
                               np.ascontiguousarray(needles, dtype=np.uint64)).astype(np.int64)
    return SortedLookup(sorted_keys)(needles)


@_njit(cache=True, nogil=True)
def _merge_unique(a, b):  # pragma: no cover - compiled
    out = np.empty(len(a) + len(b), dtype=a.dtype)
    i = j = k = 0
    while i < len(a) or j < len(b):
        if j >= len(b) or (i < len(a) and a[i] < b[j]):
            x = a[i]
            i += 1
        elif i >= len(a) or b[j] < a[i]:
            x = b[j]
            j += 1
        else:
            x = a[i]
            i += 1
            j += 1
        if k == 0 or out[k - 1] != x:
            out[k] = x
            k += 1
    return out[:k]


@_njit(cache=True, nogil=True)
def _merge_min(ka, pa, kb, pb):  # pragma: no cover - compiled
    """Two runs of distinct sorted keys with a ply each merged: distinct sorted keys, each
    with the smaller of its plies (the first ``k`` entries of the arrays returned)."""
    n = len(ka) + len(kb)
    keys = np.empty(n, dtype=ka.dtype)
    plies = np.empty(n, dtype=pa.dtype)
    i = j = k = 0
    while i < len(ka) or j < len(kb):
        if j >= len(kb) or (i < len(ka) and ka[i] < kb[j]):
            keys[k] = ka[i]
            plies[k] = pa[i]
            i += 1
        elif i >= len(ka) or kb[j] < ka[i]:
            keys[k] = kb[j]
            plies[k] = pb[j]
            j += 1
        else:
            keys[k] = ka[i]
            plies[k] = pa[i] if pa[i] <= pb[j] else pb[j]
            i += 1
            j += 1
        k += 1
    return keys, plies, k


class MinRuns:
    """Sorted runs of distinct keys, each key with a ply, merged as they are added into distinct
    sorted keys each with its smallest ply (what a concatenation and a sort by (key, ply) give),
    holding about the data once and the merge in hand: a run is merged with the one before it
    while that one is at most twice its size (as a binary counter), so every key is copied
    O(log runs) times and no sort order of all of them (8 bytes a key) is ever made."""

    def __init__(self) -> None:
        self._runs: list[tuple[np.ndarray, np.ndarray]] = []

    def add(self, keys: np.ndarray, plies: np.ndarray) -> None:
        """Add a run: ``keys`` sorted and distinct (``uint64``), ``plies`` beside them."""
        if not len(keys):
            return
        self._runs.append((np.ascontiguousarray(keys, np.uint64), np.ascontiguousarray(plies, np.uint16)))
        while len(self._runs) >= 2 and len(self._runs[-2][0]) <= 2 * len(self._runs[-1][0]):
            self._merge_last()

    def _merge_last(self) -> None:
        kb, pb = self._runs.pop()
        ka, pa = self._runs.pop()
        keys, plies, k = _merge_min(ka, pa, kb, pb)
        del ka, pa, kb, pb  # let go before a copy is made
        if 2 * k < len(keys):  # many keys in both: do not pin the larger buffer
            keys, plies = keys[:k].copy(), plies[:k].copy()
        self._runs.append((keys[:k], plies[:k]))

    def result(self) -> tuple[np.ndarray, np.ndarray]:
        """The merged keys and plies (the runs are let go)."""
        while len(self._runs) >= 2:
            self._merge_last()
        if not self._runs:
            return np.empty(0, np.uint64), np.empty(0, np.uint16)
        return self._runs.pop()


@_njit(cache=True, nogil=True)
def radix_sort_u64(a):  # pragma: no cover - compiled
    """A sorted copy of the ``uint64`` array ``a``: least significant byte first, one counting
    pass per byte, the bytes that every value shares skipped (keys seldom use all 64 bits)."""
    n = len(a)
    src = a.copy()
    if n < 2:
        return src
    counts = np.zeros((8, 256), np.int64)
    for i in range(n):
        x = a[i]
        for d in range(8):
            counts[d, (x >> np.uint64(8 * d)) & np.uint64(255)] += 1
    dst = np.empty_like(src)
    off = np.empty(256, np.int64)
    for d in range(8):
        c = counts[d]
        shared = False
        for b in range(256):
            if c[b] != 0:
                shared = c[b] == n
                break
        if shared:
            continue
        total = 0
        for b in range(256):
            off[b] = total
            total += c[b]
        shift = np.uint64(8 * d)
        for i in range(n):
            x = src[i]
            b = (x >> shift) & np.uint64(255)
            dst[off[b]] = x
            off[b] += 1
        src, dst = dst, src
    return src


@_njit(cache=True, nogil=True)
def _compact_sorted(a):  # pragma: no cover - compiled
    k = 0
    for i in range(len(a)):
        if k == 0 or a[i] != a[k - 1]:
            a[k] = a[i]
            k += 1
    return k


def unique_in_place(values: np.ndarray) -> np.ndarray:
    """:func:`unique` of ``values`` (``uint64``), sorting and compacting ``values`` itself: no
    copy beside it (``unique`` holds three). The result is a view of ``values``' buffer while
    it keeps most of it, else a copy (so a few distinct values do not pin a large buffer)."""
    if len(values) == 0:
        return values
    values.sort()
    k = _compact_sorted(values)
    return values[:k] if 2 * k >= len(values) else values[:k].copy()


def unique_of_sorted(parts: list[np.ndarray], pool: Any = None, min_split: int = 1 << 16) -> np.ndarray:
    """:func:`unique` of the concatenation of ``parts`` (``uint64``), **emptying the list**: each
    part is let go once it is copied, so at most the parts and one copy of them are held (the
    caller must hold no other reference to the parts for that). With a thread ``pool``
    (``concurrent.futures``) and at least ``min_split`` values, the values are cut in two halves
    of equal length (a part across the cut is cut too), each sorted in a thread (sorts release
    the GIL), and the two are merged in one linear pass, so a level's sort runs on two cores.
    (Halves of the parts' count left a thread idle: a discovery level's parts are its frontier
    and its few entries; on Override 4x4 with two workers, 4 s of one core waiting, issue 34.)"""
    todo = [p for p in parts if len(p)]
    parts.clear()
    if not todo:
        return np.empty(0, np.uint64)

    def take(group: list[np.ndarray]) -> np.ndarray:
        out = np.concatenate(group).astype(np.uint64, copy=False)
        group.clear()
        return unique_in_place(out)

    total = sum(len(p) for p in todo)
    if pool is None or total < max(2, min_split):
        return take(todo)
    half, seen = total // 2, 0
    head: list[np.ndarray] = []
    tail: list[np.ndarray] = []
    for p in todo:
        if seen >= half:
            tail.append(p)
        elif seen + len(p) <= half:
            head.append(p)
        else:
            head.append(p[: half - seen])
            tail.append(p[half - seen :])
        seen += len(p)
    todo.clear()
    first = pool.submit(take, head)
    second = take(tail)
    return _merge_unique(np.ascontiguousarray(first.result(), dtype=np.uint64),
                         np.ascontiguousarray(second, dtype=np.uint64))


@_njit(cache=True, nogil=True)
def _counting_order(values, n, offsets):
    order = np.empty(len(values), dtype=np.int64)
    fill = offsets[:-1].copy()
    for e in range(len(values)):
        v = values[e]
        order[fill[v]] = e
        fill[v] += 1
    return order


def group_by(values: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Stable grouping of ``values`` (ints in ``[0, n)``) in linear time (a counting sort):
    ``(offsets int64[n + 1], order int64[len])`` with ``order[offsets[v]:offsets[v + 1]]`` the
    indices holding ``v``, ascending. Equals ``np.argsort(values, kind="stable")``."""
    values = np.ascontiguousarray(values, dtype=np.int64)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(values, minlength=n), out=offsets[1:])
    return offsets, _counting_order(values, n, offsets)


class CodedFloats:
    """A ``float64`` array of few distinct values held as ``uint8`` codes into a table of them.

    ``coded[idx]`` is ``table[codes[idx]]``: the very float64 values (looked up, never rounded),
    for one byte per entry instead of eight. The dice of a chance game give a handful of distinct
    probabilities, so its per-move probabilities are held this way (:class:`FloatCoder`).
    ``np.asarray(coded)`` gives the whole float64 array.
    """

    dtype = np.dtype(np.float64)

    def __init__(self, codes: np.ndarray, table: np.ndarray) -> None:
        self.codes = np.asarray(codes, dtype=np.uint8)
        self.table = np.asarray(table, dtype=np.float64)

    def __len__(self) -> int:
        return len(self.codes)

    @property
    def shape(self) -> tuple[int]:
        return (len(self.codes),)

    @property
    def nbytes(self) -> int:
        return int(self.codes.nbytes + self.table.nbytes)

    def __getitem__(self, idx: object) -> np.ndarray:
        return self.table[self.codes[idx]]

    def __array__(self, dtype: object = None, copy: object = None) -> np.ndarray:
        out = self.table[self.codes]
        return out if dtype is None else out.astype(dtype, copy=False)


class FloatCoder:
    """Builds a :class:`CodedFloats` from float64 chunks given one at a time, so the whole
    float64 array never exists; past 256 distinct values it keeps the floats instead
    (:meth:`finish` then returns a plain ``float64`` array, the same values)."""

    def __init__(self) -> None:
        self.code_of: dict[int, int] = {}  # float64 bit pattern -> code
        self.parts: list[np.ndarray] = []
        self.coded = True

    def add(self, chunk: np.ndarray) -> None:
        chunk = np.asarray(chunk, dtype=np.float64)
        if self.coded and not len(chunk):
            return
        if self.coded:
            bits = chunk.view(np.int64)
            distinct = unique(bits)
            for b in distinct.tolist():
                self.code_of.setdefault(b, len(self.code_of))
            if len(self.code_of) <= 256:
                lut = np.array([self.code_of[b] for b in distinct.tolist()], dtype=np.uint8)
                self.parts.append(lut[np.searchsorted(distinct, bits)])
                return
            table = self._table()
            self.parts = [table[p] for p in self.parts]
            self.coded = False
        self.parts.append(chunk)

    def _table(self) -> np.ndarray:
        table = np.zeros(len(self.code_of), dtype=np.int64)
        for b, c in self.code_of.items():
            table[c] = b
        return table.view(np.float64)

    def finish(self) -> "CodedFloats | np.ndarray":
        if not self.coded:
            return np.concatenate(self.parts) if self.parts else np.empty(0)
        codes = np.concatenate(self.parts) if self.parts else np.empty(0, np.uint8)
        self.parts = []
        return CodedFloats(codes, self._table())
