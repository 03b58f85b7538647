"""Compiled (numba) expansion of Carrots and Broccoli decision nodes (dice rolled).

The one-row-at-a-time form of ``Carrots._vexpand_decision``: for each position (its key
digits, least significant first, see ``Carrots._layout``), every decision slot in the order of
``Carrots.legal_actions`` (plants, moves, black moves per (colour, size), pass last) is tested
and, where legal, the child's digits are built, the copies of each piece type sorted, and the
key encoded (canonical: the smaller of the key and its a1-h8 mirror's key).
``tests/test_carrots.py::test_batch_path_equals_the_rules`` proves it equal to the rules.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_PLANT, _MOVE, _BLACK_MOVE, _PASS = 0, 1, 2, 3


@njit(cache=True, nogil=True)
def _sort_groups(d, group_start, group_len):
    for g in range(len(group_start)):
        a = group_start[g]
        m = group_len[g]
        for i in range(a + 1, a + m):  # insertion sort: groups are tiny
            v = d[i]
            j = i - 1
            while j >= a and d[j] > v:
                d[j + 1] = d[j]
                j -= 1
            d[j + 1] = v


@njit(cache=True, nogil=True)
def _encode(d, places):
    key = np.uint64(0)
    for j in range(len(d)):
        key += np.uint64(d[j]) * places[j]
    return key


@njit(cache=True, nogil=True)
def decision_kernel(digits, slots, plant_col, nbr, cheb, black_cols, col_is_black, mirror,
                    mirror1, group_start, group_len, places, cells, may_pass, canonical):
    """``(per_row int64[N], children uint64[E])`` for decision rows with key ``digits``."""
    n_rows, nd = digits.shape
    nslots = len(slots)
    per_row = np.zeros(n_rows, dtype=np.int64)
    children = np.empty(n_rows * nslots, dtype=np.uint64)
    board = np.zeros(cells + 1, dtype=np.int64)  # 1 = occupied; the pad square counts as full
    kid = np.empty(nd, dtype=np.int64)
    mir = np.empty(nd, dtype=np.int64)
    e = 0
    for i in range(n_rows):
        d = digits[i]
        board[:] = 0
        board[cells] = 1
        for col in range(3, nd):
            if col_is_black[col]:
                board[d[col]] = 1
            elif d[col] > 0:
                board[d[col] - 1] = 1
        last = d[2]
        roll = d[0] - 2
        cm = roll >> 3
        sm = roll & 7
        count = 0
        for j in range(nslots):
            kind = slots[j, 0]
            if kind == _PASS:
                continue
            c = slots[j, 1]
            s = slots[j, 2]
            if not ((cm >> c) & 1 and (sm >> s) & 1):
                continue
            a = slots[j, 3]
            k = slots[j, 4]
            target = -1
            if kind == _PLANT:
                if d[plant_col[j]] == 0 and board[a] == 0:
                    target = a
            elif kind == _MOVE:
                dd = d[a]
                if dd > 0 and dd != last:
                    nb = nbr[dd - 1, k]
                    if board[nb] == 0:
                        target = nb
            else:  # black move: distance rule to another black pyramid
                dd = d[a]
                if dd + 1 != last:
                    nb = nbr[dd, k]
                    if board[nb] == 0:
                        for other in black_cols:
                            if other != a and cheb[nb, d[other]] <= 2:
                                target = nb
                                break
            if target < 0:
                continue
            for col in range(nd):
                kid[col] = d[col]
            kid[0] = 1
            kid[1] = 1 - d[1]
            kid[2] = 0
            if kind == _PLANT:
                kid[plant_col[j]] = target + 1
            elif kind == _MOVE:
                kid[a] = target + 1
                kid[2] = target + 1
            else:
                kid[a] = target
                kid[2] = target + 1
            children[e] = _child_key(kid, mir, col_is_black, mirror, mirror1, group_start,
                                     group_len, places, canonical)
            e += 1
            count += 1
        if may_pass or count == 0:
            for col in range(nd):
                kid[col] = d[col]
            kid[0] = 1
            kid[1] = 1 - d[1]
            kid[2] = 0
            children[e] = _child_key(kid, mir, col_is_black, mirror, mirror1, group_start,
                                     group_len, places, canonical)
            e += 1
            count += 1
        per_row[i] = count
    return per_row, children[:e].copy()


@njit(cache=True, nogil=True)
def _child_key(kid, mir, col_is_black, mirror, mirror1, group_start, group_len, places, canonical):
    _sort_groups(kid, group_start, group_len)
    key = _encode(kid, places)
    if canonical:
        mir[0] = kid[0]
        mir[1] = kid[1]
        mir[2] = mirror1[kid[2]]
        for col in range(3, len(kid)):
            mir[col] = mirror[kid[col]] if col_is_black[col] else mirror1[kid[col]]
        _sort_groups(mir, group_start, group_len)
        other = _encode(mir, places)
        if other < key:
            key = other
    return key
