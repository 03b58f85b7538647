"""Compiled (numba) kernels of retrograde analysis, for a whole graph or for one tier.

A graph's moves are read backwards, from each child to its parents: ``roff``/``rparent`` (a
reverse CSR: for each row the rows of its parents, stored as ``p`` when the parent's mover is the
child's and as ``~p`` (negative) when it is the other player, so one int32 per move;
:func:`signed_reverse` builds it for a whole graph). A tier is one graph among others: the
moves that leave it reach positions already solved, its **outside boundary**, and are folded,
while the tier is expanded, into a few numbers per row (:func:`fold_external`). A whole graph
is the case where no move leaves (:func:`no_outside`): one implementation serves both.

The passes: win/lose by counters, then ties, then draws for the rest. Because a child outside
can have any remoteness, rows are settled level by level in increasing remoteness (see
:func:`tier_values`): a win is 1 + the smallest remoteness of a child lost for the opponent and
a loss is 1 + the largest remoteness of its children. Scored games also get margins, by one
attractor sweep per side (:func:`tier_margins`) or threshold passes
(:func:`tier_force_at_least`); an acyclic whole graph gets everything in one topological pass
(:func:`solve_acyclic`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solver.core.values import DRAW as _DRAW, LOSE as _LOSE, TIE as _TIE, WIN as _WIN

_UNDECIDED = -1


@njit(cache=True, nogil=True)
def fold_external(src, child_value, child_rem, same, ext_win_min, ext_lose_cnt, ext_lose_max,
                  ext_tie_min):
    """Fold edges to solved children of other tiers into per-row numbers.

    ``src[e]`` is the row (in this tier) an edge leaves, ``child_value``/``child_rem`` the
    child's value code and remoteness from the child's mover, ``same[e]`` whether that mover is
    the row's. Updates in place: ``ext_win_min`` (smallest remoteness of a child that is won for
    the row's mover), ``ext_lose_cnt``/``ext_lose_max`` (number and largest remoteness of the
    children lost for it), ``ext_tie_min`` (smallest remoteness of a tie child)."""
    for e in range(len(src)):
        p = src[e]
        v = child_value[e]
        if not same[e]:
            if v == _WIN:
                v = _LOSE
            elif v == _LOSE:
                v = _WIN
        r = child_rem[e]
        if v == _WIN:
            if r < ext_win_min[p]:
                ext_win_min[p] = r
        elif v == _LOSE:
            ext_lose_cnt[p] += 1
            if r > ext_lose_max[p]:
                ext_lose_max[p] = r
        elif v == _TIE:
            if r < ext_tie_min[p]:
                ext_tie_min[p] = r


@njit(cache=True, nogil=True, inline="always")
def _bucket(head, nxt, level, row):
    """Put ``row`` in the list of rows waiting at ``level``."""
    nxt[row] = head[level]
    head[level] = row


@njit(cache=True, nogil=True, inline="always")
def _settle(c, r, value, remoteness, tent, queued, counter, roff, rparent, ext_lose_max, fifo,
            b_tail, head, nxt):
    """Settle row ``c`` at level ``r`` (win/lose step) and queue the parents it decides."""
    if value[c] != _UNDECIDED:
        return b_tail
    v = tent[c]
    value[c] = v
    remoteness[c] = r
    for k in range(roff[c], roff[c + 1]):
        p = rparent[k]
        same = p >= 0
        if not same:
            p = ~p
        if value[p] != _UNDECIDED:
            continue
        eff = v if same else _WIN + _LOSE - v
        if eff == _WIN:
            if r + 1 < queued[p]:
                tent[p] = _WIN
                queued[p] = r + 1
                fifo[b_tail] = p
                b_tail += 1
        else:
            counter[p] -= 1
            if counter[p] == 0:
                tent[p] = _LOSE
                if ext_lose_max[p] <= r:
                    fifo[b_tail] = p
                    b_tail += 1
                else:  # its slowest lost child outside the tier sets its remoteness
                    _bucket(head, nxt, ext_lose_max[p] + 1, p)
    return b_tail


@njit(cache=True, nogil=True, inline="always")
def _settle_tie(c, r, value, remoteness, queued, roff, rparent, fifo, b_tail):
    """Settle row ``c`` as a tie at level ``r`` (tie step) and queue its undecided parents."""
    if value[c] != _UNDECIDED:
        return b_tail
    value[c] = _TIE
    remoteness[c] = r
    for k in range(roff[c], roff[c + 1]):
        p = rparent[k]
        if p < 0:
            p = ~p
        if value[p] == _UNDECIDED and r + 1 < queued[p]:
            queued[p] = r + 1
            fifo[b_tail] = p
            b_tail += 1
    return b_tail


@njit(cache=True, nogil=True)
def _next_level(r, b_head, b_tail, head, none):
    """The next level with a row waiting: ``r + 1`` when the FIFO holds rows, else the first
    level after ``r`` whose list is not empty (``none`` when there is none)."""
    if b_head < b_tail:
        return r + 1
    for lvl in range(r + 1, len(head)):
        if head[lvl] != none:
            return lvl
    return none


@njit(cache=True, nogil=True)
def tier_values(outdeg, roff, rparent, ext_win_min, ext_lose_cnt, ext_lose_max, ext_tie_min,
                terminal_result, no_remoteness):
    """Values and remoteness of a tier's rows (see the module docstring), or of a whole graph:
    no moves leave it, every ``ext_*`` array at its neutral value (:func:`no_outside`).

    ``terminal_result[i]``: -1 for a non-terminal row, else the mover's result (0 loss, 1 tie,
    2 win). ``outdeg[i]``: all moves of row ``i`` (inside and outside the tier).

    Rows are settled level by level in increasing remoteness. They wait in a FIFO when a child
    settled at ``r`` decides them at ``r + 1`` (on a whole graph that is all of them: a plain
    breadth-first pass), and in one list per level when their level is set from outside the tier
    (a won child outside, or a loss whose slowest lost child outside is slower than the inside
    ones). Each row is in the FIFO and in a level's list at most once: 8 bytes a row."""
    n = len(outdeg)
    value = np.full(n, _UNDECIDED, dtype=np.int8)
    remoteness = np.full(n, no_remoteness, dtype=np.uint16)
    counter = np.empty(n, dtype=np.int32)
    tent = np.zeros(n, dtype=np.int8)  # the value a queued row takes when it is settled
    # the smallest level a row is queued at: a row is queued again only to be settled sooner
    queued = np.full(n, no_remoteness, dtype=np.uint16)
    none = -1
    head = np.full(int(no_remoteness) + 2, none, dtype=np.int32)  # each level's list
    nxt = np.empty(n, dtype=np.int32)  # the row after it in its level's list
    fifo = np.empty(n, dtype=np.int32)
    for i in range(n - 1, -1, -1):  # lists are LIFO: rows in increasing order within a level
        counter[i] = outdeg[i] - ext_lose_cnt[i]
        if terminal_result[i] == 2 or terminal_result[i] == 0:
            tent[i] = _WIN if terminal_result[i] == 2 else _LOSE
            queued[i] = 0
            _bucket(head, nxt, 0, i)
        elif terminal_result[i] < 0:
            if ext_win_min[i] != no_remoteness:
                tent[i] = _WIN
                queued[i] = ext_win_min[i] + 1
                _bucket(head, nxt, ext_win_min[i] + 1, i)
            elif counter[i] == 0 and outdeg[i] > 0:
                tent[i] = _LOSE
                _bucket(head, nxt, ext_lose_max[i] + 1, i)
    b_head = 0
    b_tail = 0
    # step 1: win / lose, in increasing remoteness; the FIFO holds level r + 1 only
    r = _next_level(-1, b_head, b_tail, head, none)
    while r != none:
        b_end = b_tail  # the FIFO's rows are all at r
        c = head[r]
        head[r] = none  # pushes while level r is settled go to r + 1 or later
        while c != none:
            after = nxt[c]
            b_tail = _settle(np.int64(c), r, value, remoteness, tent, queued, counter, roff,
                             rparent, ext_lose_max, fifo, b_tail, head, nxt)
            c = after
        while b_head < b_end:
            b_tail = _settle(np.int64(fifo[b_head]), r, value, remoteness, tent, queued, counter,
                             roff, rparent, ext_lose_max, fifo, b_tail, head, nxt)
            b_head += 1
        r = _next_level(r, b_head, b_tail, head, none)
    # step 2: ties, from terminal ties and tie children outside the tier
    queued[:] = no_remoteness
    for i in range(n - 1, -1, -1):
        if value[i] != _UNDECIDED:
            continue
        if terminal_result[i] == 1:
            queued[i] = 0
            _bucket(head, nxt, 0, i)
        elif terminal_result[i] < 0 and ext_tie_min[i] != no_remoteness:
            queued[i] = ext_tie_min[i] + 1
            _bucket(head, nxt, ext_tie_min[i] + 1, i)
    b_head = 0
    b_tail = 0
    r = _next_level(-1, b_head, b_tail, head, none)
    while r != none:
        b_end = b_tail
        c = head[r]
        head[r] = none
        while c != none:
            after = nxt[c]
            b_tail = _settle_tie(np.int64(c), r, value, remoteness, queued, roff, rparent, fifo, b_tail)
            c = after
        while b_head < b_end:
            b_tail = _settle_tie(np.int64(fifo[b_head]), r, value, remoteness, queued, roff, rparent,
                                 fifo, b_tail)
            b_head += 1
        r = _next_level(r, b_head, b_tail, head, none)
    # step 3: the rest is endless play
    for i in range(n):
        if value[i] == _UNDECIDED:
            value[i] = _DRAW
    return value, remoteness


def no_outside(n, no_remoteness):
    """The ``ext_*`` arguments of :func:`tier_values` for a graph no move leaves."""
    return (np.full(n, no_remoteness, dtype=np.uint16), np.zeros(n, dtype=np.int32),
            np.zeros(n, dtype=np.uint16), np.full(n, no_remoteness, dtype=np.uint16))


@njit(cache=True, nogil=True)
def tier_force_at_least(outdeg, roff, rparent, ext_off, ext_margin, terminal, tmargin, t):
    """``bool[n]``: the side to move can force a final margin ``>= t`` (endless play = 0).

    States ``(role, row)``: role 0 = the mover wants its margin ``>= t``, role 1 = the mover
    wants ``>= 1 - t`` (the opponent's margin ``< t``); a move to the other player flips the
    role. A counter game as the win/lose step of :func:`tier_values`. The children outside the
    tier are ``ext_margin[ext_off[i]:ext_off[i + 1]]``: each one's optimal margin **from row i's
    mover** (a child of the other player with optimal margin m gives -m). Such a child is good
    for a mover who wants ``>= thr`` exactly when its margin is ``>= thr``. A whole graph has
    none: ``ext_off`` all zeros."""
    n = len(outdeg)
    win = np.zeros((2, n), dtype=np.bool_)
    lose = np.zeros((2, n), dtype=np.bool_)
    counter = np.empty((2, n), dtype=np.int64)
    queue = np.empty(2 * n, dtype=np.int64)
    head = 0
    tail = 0
    for role in range(2):
        thr = t if role == 0 else 1 - t
        for i in range(n):
            counter[role, i] = outdeg[i]
            if terminal[i]:
                if tmargin[i] >= thr:
                    win[role, i] = True
                else:
                    lose[role, i] = True
                queue[tail] = role * n + i
                tail += 1
                continue
            good = False
            bad = 0
            for k in range(ext_off[i], ext_off[i + 1]):
                if ext_margin[k] >= thr:
                    good = True
                    break
                bad += 1
            if good:
                win[role, i] = True
                queue[tail] = role * n + i
                tail += 1
            else:
                counter[role, i] -= bad
                if counter[role, i] == 0 and outdeg[i] > 0:
                    lose[role, i] = True
                    queue[tail] = role * n + i
                    tail += 1
    while head < tail:
        code = queue[head]
        head += 1
        role = code // n
        c = code - role * n
        is_win = win[role, c]
        for k in range(roff[c], roff[c + 1]):
            p = rparent[k]
            prole = role
            if p < 0:
                p = ~p
                prole = 1 - role
            if win[prole, p] or lose[prole, p]:
                continue
            good = is_win if prole == role else not is_win
            if good:
                win[prole, p] = True
                queue[tail] = prole * n + p
                tail += 1
            else:
                counter[prole, p] -= 1
                if counter[prole, p] == 0:
                    lose[prole, p] = True
                    queue[tail] = prole * n + p
                    tail += 1
    out = np.empty(n, dtype=np.bool_)
    for i in range(n):
        out[i] = win[0, i] or (not lose[0, i] and 0 >= t)
    return out


@njit(cache=True, nogil=True, inline="always")
def _attract(i, x, t, lev, counter, to_move, queue, tail):
    """One more child of row ``i`` now counts for player ``x`` at level ``t``: ``x``'s row joins
    the attractor at once, an opponent's row when its last child does. Returns the new queue
    tail."""
    if lev[i] != 0:
        return tail
    if to_move[i] != x:
        counter[i] -= 1
        if counter[i] != 0:
            return tail
    lev[i] = t
    queue[tail] = i
    return tail + 1


@njit(cache=True, nogil=True)
def tier_margins(outdeg, roff, rparent, ext_off, ext_margin, terminal, tmargin, to_move):
    """``int16[n]``: every row's optimal final margin from its mover (endless play = 0), in one
    sweep per player instead of one :func:`tier_force_at_least` pass per candidate margin.

    Two players (``to_move`` 0 or 1). For player ``x`` and ``t >= 1``, the rows from which ``x``
    forces an ``x``-margin ``>= t`` are ``x``'s attractor (reachability, so endless play does not
    count) of the terminals and outside children worth ``>= t`` to ``x``. The targets only grow
    as ``t`` falls, and an attractor of more targets contains the smaller one, so one sweep from
    the largest ``t`` down to 1 adds each level's new targets to the attractor built so far (the
    counters of ``x``'s opponent's rows carry over): every row enters once, every move is looked
    at once per player. ``level[x, i]`` is the largest such ``t`` (0: none). A row's margin is then
    ``level[mover]`` when positive, else ``-level[opponent]`` when positive, else 0 (neither side
    can force a point: endless play or an even end), as the threshold passes give."""
    n = len(outdeg)
    top = 0
    for i in range(n):
        if terminal[i] and abs(tmargin[i]) > top:
            top = abs(tmargin[i])
    for k in range(len(ext_margin)):
        if abs(ext_margin[k]) > top:
            top = abs(ext_margin[k])
    # rows fit int32 (as the reverse lists' rows do) and margins int16 (as the tables store them):
    # 16 bytes a row instead of 40 in int64, the largest arrays of a scored tier's solve
    level = np.zeros((2, n), dtype=np.int16)
    counter = np.empty(n, dtype=np.int32)
    queue = np.empty(n, dtype=np.int32)
    ev_count = np.zeros(top + 2, dtype=np.int64)
    for x in range(2):
        # the targets by level t: a terminal row (code i) or an outside child of row i (code ~i)
        ev_count[:] = 0
        for i in range(n):
            if terminal[i]:
                m = tmargin[i] if to_move[i] == x else -tmargin[i]
                if m >= 1:
                    ev_count[m] += 1
                continue
            sign = 1 if to_move[i] == x else -1
            for k in range(ext_off[i], ext_off[i + 1]):
                m = sign * ext_margin[k]
                if m >= 1:
                    ev_count[m] += 1
        ev_off = np.zeros(top + 2, dtype=np.int64)
        for t in range(1, top + 1):
            ev_off[t + 1] = ev_off[t] + ev_count[t]
        events = np.empty(ev_off[top + 1], dtype=np.int32)
        fill = ev_off.copy()
        for i in range(n):
            if terminal[i]:
                m = tmargin[i] if to_move[i] == x else -tmargin[i]
                if m >= 1:
                    events[fill[m]] = i
                    fill[m] += 1
                continue
            sign = 1 if to_move[i] == x else -1
            for k in range(ext_off[i], ext_off[i + 1]):
                m = sign * ext_margin[k]
                if m >= 1:
                    events[fill[m]] = ~i
                    fill[m] += 1
        for i in range(n):
            counter[i] = outdeg[i]
        lev = level[x]
        for t in range(top, 0, -1):
            tail = 0
            for e in range(ev_off[t], ev_off[t + 1]):
                code = events[e]
                if code >= 0:  # a terminal row worth t to x
                    if lev[code] == 0:
                        lev[code] = t
                        queue[tail] = code
                        tail += 1
                    continue
                tail = _attract(~code, x, t, lev, counter, to_move, queue, tail)  # an outside child
            head = 0
            while head < tail:
                c = queue[head]
                head += 1
                for k in range(roff[c], roff[c + 1]):
                    p = rparent[k]
                    tail = _attract(~p if p < 0 else p, x, t, lev, counter, to_move, queue, tail)
    out = np.zeros(n, dtype=np.int16)
    for i in range(n):
        x = to_move[i]
        if level[x, i] > 0:
            out[i] = level[x, i]
        elif level[1 - x, i] > 0:
            out[i] = -level[1 - x, i]
    return out


@njit(cache=True, nogil=True)
def count_into(counts, rows):
    """``counts[r] += 1`` for every ``r`` in ``rows`` (a bincount that accumulates in place)."""
    for e in range(len(rows)):
        counts[rows[e]] += 1


@njit(cache=True, nogil=True)
def fill_reverse(fill, rparent, first, per_row, dst, to_move):
    """Put a chunk's moves inside the tier into the reverse lists. The chunk's rows are
    ``first, first + 1, ...``; row ``first + i`` has ``per_row[i]`` such moves, whose children
    are the next entries of ``dst``. ``rparent[fill[c]] = parent`` (``fill`` starts as the list
    offsets and advances), negated (``~parent``) when the parent's mover is not the child's."""
    e = 0
    for i in range(len(per_row)):
        p = first + i
        for _ in range(per_row[i]):
            c = dst[e]
            e += 1
            k = fill[c]
            rparent[k] = p if to_move[p] == to_move[c] else ~p
            fill[c] = k + 1


@njit(cache=True, nogil=True)
def fill_grouped(fill, out, rows, vals):
    """``out[fill[rows[e]]] = vals[e]``, advancing ``fill`` (values grouped by row)."""
    for e in range(len(rows)):
        r = rows[e]
        out[fill[r]] = vals[e]
        fill[r] += 1


@njit(cache=True, nogil=True)
def level_win_lose(rows, offsets, child, r, value, remoteness, to_move, ext_win_min, ext_lose_cnt,
                   ext_lose_max, outdeg, no_remoteness):
    """Level ``r`` of the win/lose pass over ``rows`` (undecided, non-terminal rows of a chunk;
    the children of ``rows[j]`` are ``child[offsets[j]:offsets[j + 1]]``, rows of this tier or
    -1 outside it). Decides in place; returns how many rows it decided."""
    decided = 0
    for j in range(len(rows)):
        p = rows[j]
        if value[p] != _UNDECIDED:
            continue
        win = ext_win_min[p] != no_remoteness and np.int64(ext_win_min[p]) + 1 == r
        all_lost = True  # every child inside the tier is decided and lost for p's mover
        inside = 0
        lmax = np.int64(ext_lose_max[p])
        for k in range(offsets[j], offsets[j + 1]):
            c = child[k]
            if c < 0:
                continue
            inside += 1
            vc = value[c]
            if vc != _WIN and vc != _LOSE:
                all_lost = False
                continue
            eff = vc if to_move[c] == to_move[p] else _WIN + _LOSE - vc
            rc = np.int64(remoteness[c])
            if eff == _WIN:
                all_lost = False
                if rc + 1 == r:
                    win = True
            elif rc > lmax:
                lmax = rc
        if win:
            value[p] = _WIN
            remoteness[p] = r
            decided += 1
        elif all_lost and inside + ext_lose_cnt[p] == outdeg[p] and outdeg[p] > 0 and lmax + 1 <= r:
            value[p] = _LOSE
            remoteness[p] = r
            decided += 1
    return decided


@njit(cache=True, nogil=True)
def level_tie(rows, offsets, child, r, value, remoteness, ext_tie_min, no_remoteness):
    """Level ``r`` of the tie pass: an undecided row is a tie at ``r`` when a child (inside the
    tier) became a tie at ``r - 1`` or its closest tie child outside the tier is at ``r - 1``."""
    decided = 0
    for j in range(len(rows)):
        p = rows[j]
        if value[p] != _UNDECIDED:
            continue
        tie = ext_tie_min[p] != no_remoteness and np.int64(ext_tie_min[p]) + 1 == r
        if not tie:
            for k in range(offsets[j], offsets[j + 1]):
                c = child[k]
                if c >= 0 and value[c] == _TIE and np.int64(remoteness[c]) + 1 == r:
                    tie = True
                    break
        if tie:
            value[p] = _TIE
            remoteness[p] = r
            decided += 1
    return decided


@njit(cache=True, nogil=True)
def force_pass(rows, offsets, child, to_move, win, lose, ext_max, t):
    """One pass of "can the mover force a final margin >= thr" without reverse lists (role 0:
    ``thr = t``; role 1: ``thr = 1 - t``, as in :func:`tier_force_at_least`). ``ext_max[p]``:
    the best margin, from p's mover, among p's children outside the tier (a very low number when
    there are none; rows with an external child ``>= thr`` start as wins). Returns how many
    (role, row) pairs it decided; repeat until none."""
    changed = 0
    for j in range(len(rows)):
        p = rows[j]
        for role in range(2):
            if win[role, p] or lose[role, p]:
                continue
            thr = t if role == 0 else 1 - t
            good = False
            all_bad = True
            for k in range(offsets[j], offsets[j + 1]):
                c = child[k]
                if c < 0:
                    continue
                if to_move[c] == to_move[p]:
                    g = win[role, c]
                    b = lose[role, c]
                else:
                    g = lose[1 - role, c]
                    b = win[1 - role, c]
                if g:
                    good = True
                    break
                if not b:
                    all_bad = False
            if good:
                win[role, p] = True
                changed += 1
            elif all_bad and ext_max[p] < thr and offsets[j + 1] > offsets[j]:
                lose[role, p] = True
                changed += 1
    return changed


@njit(cache=True, nogil=True)
def merge_into(a, pa, n, b, pb):
    """Merge the sorted keys ``b`` (payload ``pb`` for all of them) into the sorted first ``n``
    entries of ``a`` (payloads ``pa``), in place, from the back: ``a`` and ``pa`` already have
    room for ``n + len(b)`` entries, and no key of ``b`` is among ``a``'s."""
    i = n - 1
    j = len(b) - 1
    k = n + len(b) - 1
    while j >= 0:
        if i >= 0 and a[i] > b[j]:
            a[k] = a[i]
            pa[k] = pa[i]
            i -= 1
        else:
            a[k] = b[j]
            pa[k] = pb
            j -= 1
        k -= 1


@njit(cache=True, nogil=True)
def solve_acyclic(outdeg, roff, rparent, terminal_result, tmargin, no_remoteness):
    """Values, remoteness and margins in one backward pass in topological order (Kahn's
    algorithm): a position is settled once all its children are. Exact for acyclic graphs and
    equal to the queue passes: a win is 1 + the smallest remoteness of a child lost for the
    opponent, a loss 1 + the largest of its children (all won for the opponent), a tie 1 + the
    smallest of its tie children; the margin is the best child margin.

    Returns ``(value, remoteness, margin int32[n], settled)``; ``settled < n`` means the graph
    has a cycle (or a non-terminal position without moves) and the results are not valid."""
    n = len(outdeg)
    value = np.full(n, _UNDECIDED, dtype=np.int8)
    remoteness = np.full(n, no_remoteness, dtype=np.uint16)
    margin = np.zeros(n, dtype=np.int32)
    pending = outdeg.astype(np.int32)  # narrow arrays: fewer cache misses on random access
    nlose = np.zeros(n, dtype=np.int32)
    win_rem = np.full(n, no_remoteness, dtype=np.uint16)
    tie_rem = np.full(n, no_remoteness, dtype=np.uint16)
    lose_rem = np.zeros(n, dtype=np.uint16)
    best = np.full(n, np.iinfo(np.int32).min, dtype=np.int32)
    queue = np.empty(n, dtype=np.int64)
    head = 0
    tail = 0
    for i in range(n):
        if terminal_result[i] >= 0:
            value[i] = (_LOSE, _TIE, _WIN)[terminal_result[i]]
            remoteness[i] = 0
            margin[i] = tmargin[i]
            queue[tail] = i
            tail += 1
        elif pending[i] == 0:
            return value, remoteness, margin, -1  # no moves and not over: not for this pass
    while head < tail:
        c = queue[head]
        head += 1
        v = value[c]
        r = remoteness[c]
        m = margin[c]
        for k in range(roff[c], roff[c + 1]):
            p = rparent[k]
            same = p >= 0
            if not same:
                p = ~p
            if v == _TIE:
                if r < tie_rem[p]:
                    tie_rem[p] = r
            elif (v == _WIN) == same:  # the child is won for p's mover
                if r < win_rem[p]:
                    win_rem[p] = r
            else:
                nlose[p] += 1
                if r > lose_rem[p]:
                    lose_rem[p] = r
            val = m if same else np.int32(-m)
            if val > best[p]:
                best[p] = val
            pending[p] -= 1
            if pending[p] == 0:
                if win_rem[p] != no_remoteness:
                    value[p] = _WIN
                    remoteness[p] = win_rem[p] + 1
                elif nlose[p] == outdeg[p]:
                    value[p] = _LOSE
                    remoteness[p] = lose_rem[p] + 1
                else:
                    value[p] = _TIE
                    remoteness[p] = tie_rem[p] + 1
                margin[p] = best[p]
                queue[tail] = p
                tail += 1
    return value, remoteness, margin, tail


@njit(cache=True, nogil=True)
def signed_reverse(offsets, child, to_move, rparent):
    """The reverse CSR of a whole graph: returns ``roff`` (int64[n+1]) and fills ``rparent``
    (int32 or int64[E], given) with each child's parents, ``~p`` where the mover changes."""
    n = len(offsets) - 1
    roff = np.zeros(n + 1, dtype=np.int64)
    for e in range(len(child)):
        roff[child[e] + 1] += 1
    for i in range(n):
        roff[i + 1] += roff[i]
    fill = roff[:-1].copy()
    for p in range(n):
        for e in range(offsets[p], offsets[p + 1]):
            c = child[e]
            rparent[fill[c]] = p if to_move[c] == to_move[p] else ~p
            fill[c] += 1
    return roff
