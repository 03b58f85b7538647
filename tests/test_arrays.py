"""The array helpers of solver/core/arrays.py against plain numpy (the independent reference)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.core.arrays import (MinRuns, SortedLookup, group_by, isin_sorted, lookup_sorted, radix_sort_u64, ranges,
                                unique, unique_counts, unique_in_place, unique_of_sorted)
from tests.budget import examples

_u64 = st.integers(min_value=0, max_value=2**64 - 1)


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(_u64, max_size=60), st.lists(_u64, max_size=60), st.integers(0, 3))
def test_lookup_sorted_is_searchsorted(keys, needles, spread) -> None:
    keys = np.unique(np.array(keys, dtype=np.uint64))
    needles = np.array(needles + keys.tolist()[:5], dtype=np.uint64)
    # the bucket index only runs on large inputs: repeat the needles past its threshold
    big = np.tile(needles, max(1, 100_000 // max(1, len(needles)))) if len(needles) else needles
    if spread:  # small keys too (few high bits)
        keys = np.unique(keys >> np.uint64(60 - 10 * spread))
    assert np.array_equal(lookup_sorted(keys, big), np.searchsorted(keys, big))


def test_lookup_sorted_large_random() -> None:
    rng = np.random.default_rng(7)
    for top in (1000, 2**33, 2**63):
        keys = np.unique(rng.integers(0, top, 300_000, dtype=np.uint64))
        needles = np.concatenate([rng.choice(keys, 200_000), rng.integers(0, top, 200_000, dtype=np.uint64),
                                  np.array([0, top - 1, 2**64 - 1], dtype=np.uint64)])
        assert np.array_equal(lookup_sorted(keys, needles), np.searchsorted(keys, needles))
        found = isin_sorted(needles, keys)
        assert np.array_equal(found, np.isin(needles, keys))


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.integers(0, 20), max_size=200))
def test_group_by_is_stable_argsort(values) -> None:
    values = np.array(values, dtype=np.int64)
    offsets, order = group_by(values, 21)
    assert np.array_equal(order, np.argsort(values, kind="stable"))
    assert np.array_equal(np.diff(offsets), np.bincount(values, minlength=21))


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.integers(-5, 5), max_size=100))
def test_unique_and_counts(values) -> None:
    values = np.array(values, dtype=np.int64)
    u, c = np.unique(values, return_counts=True)
    assert np.array_equal(unique(values), u)
    u2, c2 = unique_counts(values)
    assert np.array_equal(u2, u) and np.array_equal(c2, c)


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.one_of(st.integers(0, 300), _u64, st.integers(2**63 - 3, 2**63 + 3)), max_size=200),
       st.integers(0, 7))
def test_radix_sort_and_unique_of_keys_are_numpys(values, shift) -> None:
    """Keys (``uint64``) are sorted by the compiled radix sort: numpy's sort and ``np.unique``
    of the same values (small keys, keys past 2**63, keys sharing their low bytes); the input is
    left as it was; a strided view too."""
    keys = np.array(values, dtype=np.uint64) << np.uint64(8 * shift)
    before = keys.copy()
    assert np.array_equal(radix_sort_u64(keys), np.sort(keys))
    got = unique(keys)
    assert got.dtype == np.uint64 and np.array_equal(got, np.unique(keys)) and np.array_equal(keys, before)
    assert np.array_equal(unique(keys[::2]), np.unique(keys[::2]))


def test_unique_of_many_keys_is_numpys() -> None:
    """A chunk's children: a million keys with repeats, sorted by the radix sort."""
    keys = np.random.default_rng(5).integers(0, 2**41, 1_000_000, dtype=np.uint64) * np.uint64(3)
    keys = np.concatenate([keys, keys[::7]])
    assert np.array_equal(unique(keys), np.unique(keys))


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.tuples(st.integers(0, 50), st.integers(0, 5)), max_size=30))
def test_ranges(pairs) -> None:
    starts = np.array([s for s, _ in pairs], dtype=np.int64)
    counts = np.array([c for _, c in pairs], dtype=np.int64)
    expected = [i for s, c in pairs for i in range(s, s + c)]
    assert ranges(starts, counts).tolist() == expected


def test_lookup_sorted_needles_past_2_63_with_small_keys() -> None:
    """Tiny keys (the bucket index then has no shift) and needles of 2**63 and more: the bucket
    number once wrapped negative as an int64 and read outside the index (a segfault found by
    hypothesis in a CI run). They sort after every key."""
    high = np.random.default_rng(3).integers(2**62, 2**63, 100_000, dtype=np.uint64) * np.uint64(2)
    needles = np.concatenate([high, np.array([2**64 - 1, 2**63, 2**63 + 5, 7, 1, 0], dtype=np.uint64)])
    for keys in ([0], [1], [0, 1], [0, 1, 2, 3]):  # a top key of a bit or two: the index has no shift
        keys = np.array(keys, dtype=np.uint64)
        assert np.array_equal(lookup_sorted(keys, needles), np.searchsorted(keys, needles))


@settings(max_examples=examples(80), deadline=None)
@given(st.lists(st.lists(st.one_of(st.integers(0, 30), _u64), max_size=40), max_size=7))
def test_unique_of_sorted_parts_is_np_unique(lists) -> None:
    """The discovery's frontier: sorted distinct parts (overlapping), merged in two threads (cut
    in halves of equal length, a part across the cut cut too)."""
    from concurrent.futures import ThreadPoolExecutor

    parts = [np.unique(np.array(x, dtype=np.uint64)) for x in lists]
    expected = np.unique(np.concatenate(parts)) if parts else np.empty(0, np.uint64)
    given = list(parts)
    with ThreadPoolExecutor(2) as pool:
        got = unique_of_sorted(given, pool, min_split=0)
    assert got.dtype == np.uint64 and np.array_equal(got, expected)
    assert given == []  # the parts are let go as they are copied
    assert np.array_equal(unique_of_sorted(list(parts)), expected)
    assert all(np.array_equal(p, np.unique(np.array(x, dtype=np.uint64))) for p, x in zip(parts, lists))


@settings(max_examples=examples(80), deadline=None)
@given(st.lists(st.one_of(st.integers(0, 30), _u64), max_size=200))
def test_unique_in_place_is_np_unique(values) -> None:
    """Sorted and compacted in its own buffer: a view while it keeps at least half of it."""
    a = np.array(values, dtype=np.uint64)
    got = unique_in_place(a)
    expected = np.unique(np.array(values, dtype=np.uint64))
    assert got.dtype == np.uint64 and np.array_equal(got, expected)
    assert (got.base is a) == (2 * len(expected) >= len(values) > 0)


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(st.one_of(st.integers(0, 3_000), _u64), min_size=0, max_size=300), st.integers(0, 2**32 - 1))
def test_sorted_lookup_contains_is_isin(keys, seed) -> None:
    """The membership test of the discovery (a compiled search from 4,096 needles on): needles
    among the keys, beside them, past the largest and of 2**63 and more."""
    keys = np.unique(np.array(keys, dtype=np.uint64))
    rng = np.random.default_rng(seed)
    near = rng.integers(0, 3_100, 5_000, dtype=np.uint64)
    high = rng.integers(2**62, 2**63, 1_000, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    picked = keys[rng.integers(0, len(keys), 1_000)] if len(keys) else np.empty(0, np.uint64)
    for needles in (np.concatenate([near, high, picked]), near[:10]):
        got = SortedLookup(keys).contains(needles)
        assert got.dtype == bool and np.array_equal(got, np.isin(needles, keys))


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.one_of(st.integers(0, 3_000), _u64), min_size=1, max_size=400))
def test_sorted_lookup_buckets_start_where_a_binary_search_says(keys) -> None:
    """The bucket index, built in one linear pass: each bucket starts at the first key of at least
    its bound (``searchsorted``, left), the last ends after every key; repeated keys too."""
    keys = np.sort(np.array(keys + keys[: len(keys) // 3], dtype=np.uint64))
    look = SortedLookup(keys)
    nb = len(look.starts) - 1
    bounds = np.arange(nb, dtype=np.uint64) << np.uint64(look.shift)
    assert nb == (int(keys[-1]) >> look.shift) + 1
    assert np.array_equal(look.starts, np.append(np.searchsorted(keys, bounds), len(keys)))


def test_sorted_lookup_with_keys_of_bit_63() -> None:
    """Keys with the top bit set: the last bucket's end once wrapped to 0, so the last bucket
    looked empty and its keys were not found (hypothesis: keys 2**63 and 2**63 + 1)."""
    for keys in ([2**63, 2**63 + 1], [5, 2**63 + 7, 2**64 - 1], list(range(2**64 - 40, 2**64))):
        keys = np.array(keys, dtype=np.uint64)
        needles = np.concatenate([keys, keys + np.uint64(1), np.zeros(5_000, np.uint64)])
        look = SortedLookup(keys)
        assert np.array_equal(look(needles), np.searchsorted(keys, needles))
        assert np.array_equal(look.contains(needles), np.isin(needles, keys))


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.lists(st.tuples(st.one_of(st.integers(0, 40), _u64), st.integers(0, 65535)), max_size=60),
                max_size=9))
def test_min_runs_is_a_sort_by_key_then_ply(runs) -> None:
    """The tiered discovery's pending parts (each sorted, distinct, a ply a key; the same key in
    several parts with other plies) merged as they are read: every key once, sorted, with its
    smallest ply, as a lexsort of the concatenation gives; in any order of adding the runs."""
    parts = []
    for pairs in runs:
        best: dict[int, int] = {}
        for k, p in pairs:
            best[k] = min(p, best.get(k, p))
        keys = np.array(sorted(best), dtype=np.uint64)
        parts.append((keys, np.array([best[int(k)] for k in keys.tolist()], dtype=np.uint16)))
    want: dict[int, int] = {}
    for keys, plies in parts:
        for k, p in zip(keys.tolist(), plies.tolist()):
            want[k] = min(p, want.get(k, p))
    for order in (parts, parts[::-1]):
        merged = MinRuns()
        for keys, plies in order:
            merged.add(keys, plies)
        k, p = merged.result()
        assert k.dtype == np.uint64 and p.dtype == np.uint16
        assert k.tolist() == sorted(want) and p.tolist() == [want[x] for x in sorted(want)]
