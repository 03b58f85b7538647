"""Compiled (numba) batch expansion of Petal Battle positions.

One pass per key: split the key into the board digits and the round state (see the key layout
in :mod:`solver.games.petal`), list the actions in exactly the order of
:meth:`solver.games.petal.Petal.legal_actions` (round start: the 36 joint orders row-major, or the
6 orders of the player in view; in play: spawn, grow, enter, moves, then end/pass), apply each
one and key the child (canonical: the smaller key of the board and its mirror image; the round
state is not changed by the reflection). ``tests/test_petal.py`` proves the output equal to the
readable rules (``Game.expand``).

Stack tables (index = key digit of a stack of sequencing pyramids, see ``STACKS``): ``top``
(size of the top pyramid), ``pop`` (the stack without its top), ``length``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solver.core.playout_jit import draw, put

_DECISION = 0
_SIMULTANEOUS = 2
_TERMINAL = 3
_ORDER0 = 10  # STACKS index of the first full order (ORDERS[0])
_UNSET = 16


@njit(cache=True, nogil=True)
def _has_run(board, p, n, run):
    start = -1
    for i in range(n):
        c = board[i]
        if c == 0 or (c - 1) // 3 != p:
            start = i
            break
    if start < 0:
        return True
    length = 0
    for k in range(1, n + 1):
        c = board[(start + k) % n]
        if c != 0 and (c - 1) // 3 == p:
            length += 1
            if length >= run:
                return True
        else:
            length = 0
    return False


@njit(cache=True, nogil=True)
def _count(board, n, owner):
    m = 0
    for i in range(n):
        c = board[i]
        if c != 0 and (c - 1) // 3 == owner:
            m += 1
    return m


@njit(cache=True, nogil=True)
def _supply(board, n, per_size, code):
    m = 0
    for i in range(n):
        if board[i] == code:
            m += 1
    return per_size - m


@njit(cache=True, nogil=True)
def _move(board, out, i, j, dest, n, per_size):
    """The move of the pyramid on ``i`` to ``j`` written into ``out`` (a copy of ``board``):
    ``dest`` -1 a plain move, ``>= 0`` a bump sending the bumped pyramid there, -2 a bump with
    no empty neighbour: a smaller enemy is squished, a same-size one reduced (the next smaller
    size in its owner's supply), or squished when nothing smaller is left (``Petal.move_board``)."""
    c = board[i]
    bumped = board[j]
    if dest >= -1 or (bumped - 1) % 3 < (c - 1) % 3:
        out[j] = c
        out[i] = 0
        if dest >= 0:
            out[dest] = bumped
        return
    owner = (bumped - 1) // 3
    size = (bumped - 1) % 3
    for down in (size - 1, size - 2):
        if down >= 0 and _supply(board, n, per_size, 3 * owner + down + 1) > 0:
            out[j] = 3 * owner + down + 1
            return
    out[j] = c
    out[i] = 0


@njit(cache=True, nogil=True)
def _key(board, n, mirror, pow7, rest, canonical):
    """Key of ``board`` plus the round-state part ``rest`` (already scaled by 7**n)."""
    a = np.uint64(0)
    for i in range(n):
        a += np.uint64(board[i]) * pow7[i]
    if canonical:
        b = np.uint64(0)
        for i in range(n):
            b += np.uint64(board[i]) * pow7[mirror[i]]
        if b < a:
            a = b
    return a + rest


@njit(cache=True, nogil=True)
def _rest(s0, s1, left, lead, w, pow7n):
    return np.uint64(s0 + 17 * (s1 + 17 * (left + 4 * (lead + 2 * w)))) * pow7n


@njit(cache=True, nogil=True)
def _round_start_rest(a, b, tie, top, pop, pow7n):
    """Round part of the key when both orders (stack indices ``a``, ``b``) are known."""
    first = tie
    if top[a] < top[b]:
        first = 0
    elif top[b] < top[a]:
        first = 1
    if first == 0:
        return _rest(pop[a], b, top[a] + 1, 0, 0, pow7n)
    return _rest(a, pop[b], top[b] + 1, 1, 0, pow7n)


@njit(cache=True, nogil=True)
def _end_turn_rest(s0, s1, lead, mover, alternate, top, pop, length, pow7n):
    if length[s0] == 0 and length[s1] == 0:
        nl = 1 - lead if alternate else 0
        return _rest(_UNSET, _UNSET, 0, nl, 0, pow7n)
    nxt = 1 - mover
    if nxt == 0:
        return _rest(pop[s0], s1, top[s0] + 1, lead, 0, pow7n)
    return _rest(s0, pop[s1], top[s1] + 1, lead, 0, pow7n)


@njit(cache=True, nogil=True)
def expand_kernel(keys, n, half, run, per_size, enter, alternate, exactly, secret, origin_empty,
                  seq_first, targets, mirror, pow7, top, pop, length, canonical):
    """Children and node data of ``keys`` (uint64). Returns
    ``(kind, to_move, offsets, children, result, margin, sim_rows)``."""
    count = len(keys)
    pow7n = pow7[n]
    kind = np.empty(count, dtype=np.int8)
    to_move = np.empty(count, dtype=np.int8)
    offsets = np.zeros(count + 1, dtype=np.int64)
    result = np.zeros(count, dtype=np.int8)
    margin = np.zeros(count, dtype=np.int32)
    sim_rows = np.zeros(count, dtype=np.int32)
    per_row = max(36, 9 * n + 1)
    children = np.empty(count * per_row, dtype=np.uint64)
    board = np.empty(n, dtype=np.int64)
    child = np.empty(n, dtype=np.int64)
    e = 0
    for row in range(count):
        k = keys[row]
        for i in range(n):
            board[i] = np.int64(k % np.uint64(7))
            k //= np.uint64(7)
        r = np.int64(k)
        s0 = r % 17
        r //= 17
        s1 = r % 17
        r //= 17
        left = r % 4
        r //= 4
        lead = r % 2
        w = r // 2
        if w > 0:
            kind[row] = _TERMINAL
            to_move[row] = 2 - w  # the loser
            result[row] = -1
            offsets[row + 1] = e
            continue
        if s0 == _UNSET or s1 == _UNSET:
            if secret:
                kind[row] = _SIMULTANEOUS
                to_move[row] = 0
                sim_rows[row] = 6
                for a in range(6):
                    for b in range(6):
                        rest = _round_start_rest(_ORDER0 + a, _ORDER0 + b, lead, top, pop, pow7n)
                        children[e] = _key(board, n, mirror, pow7, rest, canonical)
                        e += 1
            else:
                kind[row] = _DECISION
                first = lead if seq_first < 0 else seq_first
                first_set = s0 if first == 0 else s1
                who = first if first_set == _UNSET else 1 - first
                to_move[row] = who
                other = s1 if who == 0 else s0
                for a in range(6):
                    o = _ORDER0 + a
                    if other == _UNSET:
                        if who == 0:
                            rest = _rest(o, s1, 0, lead, 0, pow7n)
                        else:
                            rest = _rest(s0, o, 0, lead, 0, pow7n)
                    elif who == 0:
                        rest = _round_start_rest(o, s1, lead, top, pop, pow7n)
                    else:
                        rest = _round_start_rest(s0, o, lead, top, pop, pow7n)
                    children[e] = _key(board, n, mirror, pow7, rest, canonical)
                    e += 1
            offsets[row + 1] = e
            continue
        # in play
        kind[row] = _DECISION
        started = 6 - length[s0] - length[s1]
        p = lead if started % 2 == 1 else 1 - lead
        q = 1 - p
        to_move[row] = p
        rest_same = _rest(s0, s1, left - 1, lead, 0, pow7n)
        rest_end = _end_turn_rest(s0, s1, lead, p, alternate, top, pop, length, pow7n)
        q_before = _count(board, n, q)
        large = 3 * p + 3
        small = 3 * p + 1
        first_e = e
        # one action: 0 spawn, 1 grow, 2 enter, 3 move; each child board is built in ``child``
        has_large = False
        for i in range(n):
            if board[i] == large:
                has_large = True
        for phase in range(4):
            if phase == 0 and _supply(board, n, per_size, small) <= 0:
                continue
            if phase == 2 and (not enter or has_large):
                continue
            for i in range(n):
                c = board[i]
                if phase == 0:
                    if c != 0 or (board[(i - 1) % n] != large and board[(i + 1) % n] != large):
                        continue
                    nt = 1
                elif phase == 1:
                    if c == 0 or (c - 1) // 3 != p or (c - 1) % 3 >= 2:
                        continue
                    if _supply(board, n, per_size, c + 1) <= 0:
                        continue
                    nt = 1
                elif phase == 2:
                    if c != 0:
                        continue
                    nt = 1
                else:
                    if c == 0 or (c - 1) // 3 != p:
                        continue
                    nt = 3
                for t in range(nt):
                    # the (up to two) outcomes of this action, as (target, dest) pairs
                    j = targets[i, t]
                    ndest = 1
                    d0 = -1
                    d1 = -1
                    if phase == 3:
                        d = board[j]
                        if d != 0:
                            size = (c - 1) % 3
                            if (d - 1) % 3 > size:
                                continue
                            lo = (j - 1) % n
                            hi = (j + 1) % n
                            if hi < lo:
                                lo, hi = hi, lo
                            ndest = 0
                            if board[lo] == 0 or (origin_empty and lo == i):
                                d0 = lo
                                ndest = 1
                            if board[hi] == 0 or (origin_empty and hi == i):
                                if ndest == 0:
                                    d0 = hi
                                else:
                                    d1 = hi
                                ndest += 1
                            if ndest == 0:
                                if (d - 1) // 3 == p:
                                    continue  # never squish your own
                                d0 = -2
                                ndest = 1
                    for x in range(ndest):
                        for y in range(n):
                            child[y] = board[y]
                        if phase == 0:
                            child[i] = small
                        elif phase == 1:
                            child[i] = c + 1
                        elif phase == 2:
                            child[i] = large
                        else:
                            _move(board, child, i, j, d0 if x == 0 else d1, n, per_size)
                        # wins after the action
                        won = -1
                        if (q_before > 0 and _count(child, n, q) == 0) or _has_run(child, p, n, run):
                            won = p
                        elif _has_run(child, q, n, run):
                            won = q
                        if won >= 0:
                            rest = _rest(0, 0, 0, 0, won + 1, pow7n)
                        elif left > 1:
                            rest = rest_same
                        else:
                            rest = rest_end
                        children[e] = _key(child, n, mirror, pow7, rest, canonical)
                        e += 1
        if not exactly or e == first_e:
            children[e] = _key(board, n, mirror, pow7, rest_end, canonical)  # end / pass
            e += 1
        offsets[row + 1] = e
    return kind, to_move, offsets, children[:e].copy(), result, margin, sim_rows


# --- compiled random playouts (Petal.random_playout) --------------------------------------------
# The position: ``board`` (0 or ``1 + 3 * owner + size``), ``stacks[p, :slen[p]]`` the sequencing
# sizes still to use, top first (``slen[p] == -1``: not ordered this round), ``left``, ``lead``
# and ``winner`` as in PetalState. The rules are those of Petal.play_actions, move_board,
# winner_after, _start_round and _end_turn; tests/test_playouts.py replays every choice.
_P_PLAIN = -1
_P_CRUSH = -2


@njit(cache=True, nogil=True)
def _p_actions(board, p, per_size, enter, origin_empty, targets, acts):
    """Player ``p``'s board actions (rows ``tag, i, j, e``: tag 0 spawn, 1 grow, 2 enter,
    3 move) in the order of ``Petal.play_actions``; returns how many."""
    n = len(board)
    na = 0
    large = 1 + 3 * p + 2
    if _supply(board, len(board), per_size, 1 + 3 * p) > 0:
        for i in range(n):
            if board[i] == 0 and (board[(i - 1) % n] == large or board[(i + 1) % n] == large):
                na = put(acts, na, 0, i, 0, 0, 0)
    for i in range(n):
        c = board[i]
        if c != 0 and (c - 1) // 3 == p and (c - 1) % 3 < 2 and _supply(board, n, per_size, c + 1) > 0:
            na = put(acts, na, 1, i, 0, 0, 0)
    if enter:
        has_large = False
        for c in board:
            if c == large:
                has_large = True
        if not has_large:
            for i in range(n):
                if board[i] == 0:
                    na = put(acts, na, 2, i, 0, 0, 0)
    for i in range(n):
        c = board[i]
        if c == 0 or (c - 1) // 3 != p:
            continue
        size = (c - 1) % 3
        for t in range(targets.shape[1]):
            j = targets[i, t]
            if j < 0:
                continue
            d = board[j]
            if d == 0:
                na = put(acts, na, 3, i, j, _P_PLAIN, 0)
                continue
            if (d - 1) % 3 > size:
                continue
            e1 = (j - 1) % n
            e2 = (j + 1) % n
            if e2 < e1:
                e1, e2 = e2, e1
            found = 0
            for h in range(1 if e1 == e2 else 2):  # the bumped pyramid's empty neighbours, ascending
                e = e1 if h == 0 else e2
                if board[e] == 0 or (origin_empty and e == i):
                    na = put(acts, na, 3, i, j, e, 0)
                    found += 1
            if found == 0 and (d - 1) // 3 != p:
                na = put(acts, na, 3, i, j, _P_CRUSH, 0)
    return na


@njit(cache=True, nogil=True)
def _p_pop(stacks, slen, p):
    """Take player ``p``'s top sequencing pyramid: the actions of its turn (size + 1)."""
    top = stacks[p, 0]
    for k in range(slen[p] - 1):
        stacks[p, k] = stacks[p, k + 1]
    slen[p] -= 1
    return top + 1


@njit(cache=True, nogil=True)
def playout_kernel(board, stacks, slen, left, lead, winner, max_moves, seed, per_size, run, secret, alternate,
                   exactly, enter, origin_empty, first_fixed, orders, targets, taken, counts):
    """Random play: orders drawn uniformly (both at once at a secret round start, one joint
    choice of 36), board actions and ``end``/``pass`` drawn uniformly, until someone wins or
    ``max_moves`` choices. Changes ``board``/``stacks``/``slen`` in place; returns ``(left, lead,
    winner, choices)``."""
    np.random.seed(seed)
    n = len(board)
    acts = np.zeros((4 * n + 3 * n * 3 + 1, 4), dtype=np.int64)
    before = np.zeros(n, dtype=np.int64)
    moves = 0
    while winner < 0 and moves < max_moves:
        if slen[0] < 0 or slen[1] < 0:  # a round start: the orders
            if secret:
                joint = draw(36, taken, counts, moves)  # row-major over the two players' 6 orders
                k0 = joint // 6
                k1 = joint % 6
                for t in range(3):
                    stacks[0, t] = orders[k0, t]
                    stacks[1, t] = orders[k1, t]
                slen[0] = 3
                slen[1] = 3
            else:
                first = lead if first_fixed < 0 else first_fixed
                who = first if slen[first] < 0 else 1 - first
                k = draw(6, taken, counts, moves)
                for t in range(3):
                    stacks[who, t] = orders[k, t]
                slen[who] = 3
            moves += 1
            if slen[0] >= 0 and slen[1] >= 0:  # both known: the smaller top starts
                if stacks[0, 0] < stacks[1, 0]:
                    first = 0
                elif stacks[1, 0] < stacks[0, 0]:
                    first = 1
                else:
                    first = lead
                lead = first
                left = _p_pop(stacks, slen, first)
            continue
        turns = 6 - slen[0] - slen[1]
        p = lead if turns % 2 == 1 else 1 - lead
        na = _p_actions(board, p, per_size, enter, origin_empty, targets, acts)
        i = draw(na if (exactly and na > 0) else na + 1, taken, counts, moves)
        moves += 1
        if i < na:
            for x in range(n):
                before[x] = board[x]
            tag = acts[i, 0]
            a = acts[i, 1]
            if tag == 0:
                board[a] = 1 + 3 * p
            elif tag == 1:
                board[a] += 1
            elif tag == 2:
                board[a] = 1 + 3 * p + 2
            else:
                _move(before, board, a, acts[i, 2], acts[i, 3], n, per_size)
            q = 1 - p
            won = -1
            if (_count(before, n, q) > 0 and _count(board, n, q) == 0) or _has_run(board, p, n, run):
                won = p
            elif _has_run(board, q, n, run):
                won = q
            if won >= 0:
                winner = won
                slen[0] = 0
                slen[1] = 0
                left = 0
                lead = 0
                break
            if left > 1:
                left -= 1
                continue
        # the turn ends: the next turn, or a new round
        if slen[0] == 0 and slen[1] == 0:
            if alternate:
                lead = 1 - lead
            else:
                lead = 0
            slen[0] = -1
            slen[1] = -1
            left = 0
        else:
            left = _p_pop(stacks, slen, 1 - p)
    return left, lead, winner, moves
