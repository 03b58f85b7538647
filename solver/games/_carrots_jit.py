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

from solver.core.playout_jit import draw, put

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


# --- compiled random playouts (Carrots.random_playout) -----------------------------------------
# Neighbours ``nbr`` and king distances ``cheb`` are the batch path's tables (Carrots._layout:
# a missing neighbour is the pad square ``cells``). The position is the board (codes
# ``1 + 3 * colour + size``, 0 empty), the player to move, the
# square of the pyramid last moved (-1 none) and the roll (-1: dice to roll, else the effective
# roll ``cmask << 3 | smask``). The rules are those of Carrots.winner, chance_outcomes,
# legal_actions and apply; tests/test_playouts.py replays every roll and choice under them.
_BLACK = 4


@njit(cache=True, nogil=True)
def _complete(board, player, corner, side, owner, nbr, group, seen, todo):
    c0 = corner[player]
    code = board[c0]
    if code == 0 or owner[(code - 1) // 3] != player:
        return False
    seen[:] = 0
    seen[c0] = 1
    todo[0] = c0
    top = 1
    count = 1
    while top > 0:
        top -= 1
        sq = todo[top]
        for k in range(4):
            nb = nbr[sq, k]
            if nb >= len(board) or seen[nb] or not side[player, nb]:
                continue
            code = board[nb]
            if code != 0 and owner[(code - 1) // 3] == player:
                seen[nb] = 1
                todo[top] = nb
                top += 1
                count += 1
    return count >= group


@njit(cache=True, nogil=True)
def _black_ok(board, frm, to, cheb):
    for sq in range(len(board)):
        code = board[sq]
        if sq == frm or code == 0 or (code - 1) // 3 != _BLACK:
            continue
        if cheb[to, sq] <= 2:
            return True
    return False


@njit(cache=True, nogil=True)
def _list_actions(board, last, colour, size, per_colour, nbr, cheb, acts, na):
    """Append the plants, moves or black moves with ``(colour, size)`` to ``acts`` (rows
    ``type, colour, size, from, to``) in the order of ``Carrots._actions_for``; returns the
    new count. With ``acts`` of no rows, only counts up to the first one (an 'any' test)."""
    n = len(board)
    code = 1 + 3 * colour + size
    probe = acts.shape[0] == 0
    if colour == _BLACK:
        for sq in range(n):
            if board[sq] != code or sq == last:
                continue
            for k in range(4):
                nb = nbr[sq, k]
                if nb < n and board[nb] == 0 and _black_ok(board, sq, nb, cheb):
                    if probe:
                        return na + 1
                    na = put(acts, na, 2, colour, size, sq, nb)
        return na
    on_board = 0
    for sq in range(n):
        if board[sq] == code:
            on_board += 1
    if per_colour - on_board > 0:
        for sq in range(n):
            if board[sq] == 0:
                if probe:
                    return na + 1
                na = put(acts, na, 0, colour, size, -1, sq)
    for sq in range(n):
        if board[sq] != code or sq == last:
            continue
        for k in range(4):
            nb = nbr[sq, k]
            if nb < n and board[nb] == 0:
                if probe:
                    return na + 1
                na = put(acts, na, 1, colour, size, sq, nb)
    return na


@njit(cache=True, nogil=True)
def playout_kernel(board, to_move, last, roll, max_moves, seed, roll_cm, roll_sm, in_play, per_colour,
                   may_pass, group, corner, side, owner, nbr, cheb, taken, counts, rolls):
    """Random play: at a turn's start the winner test, then a raw roll of both dice (36 equally
    likely) reduced to its effective roll, then an action drawn uniformly from the legal ones,
    until a group is complete or ``max_moves`` choices. Changes ``board`` in place; returns
    ``(to_move, last, roll, choices, rolls drawn)`` (``roll`` -1 when the game ended or the dice
    are next); ``rolls`` gets the effective rolls in order."""
    np.random.seed(seed)
    n = len(board)
    seen = np.zeros(n, dtype=np.int64)
    todo = np.zeros(n, dtype=np.int64)
    none = np.zeros((0, 5), dtype=np.int64)
    acts = np.zeros((15 * 5 * n + 1, 5), dtype=np.int64)  # per (colour, size): n plants, 4n moves
    ok = np.zeros((5, 3), dtype=np.int64)
    moves = 0
    nrolls = 0
    while True:
        if roll < 0:
            c0 = _complete(board, 0, corner, side, owner, nbr, group, seen, todo)
            c1 = _complete(board, 1, corner, side, owner, nbr, group, seen, todo)
            if c0 or c1:
                break
            if moves >= max_moves:
                break
            r = int(np.random.random() * 36)
            if r >= 36:
                r = 35
            cm = roll_cm[r]
            sm = roll_sm[r]
            for c in range(5):
                for s in range(3):
                    ok[c, s] = 0
                    if (cm >> c) & 1 and (sm >> s) & 1 and (c == _BLACK or in_play[c]):
                        if _list_actions(board, last, c, s, per_colour, nbr, cheb, none, 0) > 0:
                            ok[c, s] = 1
            cmask = 0
            for c in range(5):
                if (cm >> c) & 1:
                    for s in range(3):
                        if (sm >> s) & 1 and ok[c, s]:
                            cmask |= 1 << c
                            break
            smask = 0
            for s in range(3):
                if (sm >> s) & 1:
                    for c in range(5):
                        if (cmask >> c) & 1 and ok[c, s]:
                            smask |= 1 << s
                            break
            roll = 0 if cmask == 0 else (cmask << 3) | smask
            rolls[nrolls] = roll
            nrolls += 1
        if moves >= max_moves:
            break
        cm = roll >> 3
        sm = roll & 7
        na = 0
        for c in range(5):
            if (cm >> c) & 1:
                for s in range(3):
                    if (sm >> s) & 1:
                        na = _list_actions(board, last, c, s, per_colour, nbr, cheb, acts, na)
        i = draw(na + 1 if (may_pass or na == 0) else na, taken, counts, moves)
        moves += 1
        to_move = 1 - to_move
        roll = -1
        if i == na:  # pass
            last = -1
            continue
        kind = acts[i, 0]
        if kind == 0:
            board[acts[i, 4]] = 1 + 3 * acts[i, 1] + acts[i, 2]
            last = -1
        else:
            board[acts[i, 4]] = board[acts[i, 3]]
            board[acts[i, 3]] = 0
            last = acts[i, 4]
    return to_move, last, roll, moves, nrolls
