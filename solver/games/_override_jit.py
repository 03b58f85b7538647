"""Compiled (numba) random playouts of Override
(:meth:`solver.games.override.Override.random_playout`).

The position is ``stack[cell, level]`` (piece codes ``3 * colour + size``, bottom first; a stack
holds at most three pyramids, since a pyramid moves only onto a smaller one) with ``height[cell]``,
the player to move and the last move ``(src, dst)`` (``-1`` after a place, a pass or at the
start). The rules are those of :meth:`Override.legal_actions` and :meth:`Override.apply`;
``tests/test_playouts.py`` replays every choice under the readable rules.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solver.core.playout_jit import draw
from solver.core.uct_jit import or_pass


@njit(cache=True, nogil=True)
def _has_line(stack, height, lines, colour):
    for li in range(lines.shape[0]):
        ok = True
        for j in range(lines.shape[1]):
            x = lines[li, j]
            if height[x] == 0 or stack[x, height[x] - 1] // 3 != colour:
                ok = False
                break
        if ok:
            return True
    return False


@njit(cache=True, nogil=True, inline="always")
def _movable(stack, height, u, v, no_undo, last_src, last_dst):
    """Whether the top pyramid of ``u`` may move to ``v`` (onto an empty square or a smaller top;
    with ``no_undo``, not straight back along the last move)."""
    if height[u] == 0:
        return False
    if height[v] > 0 and stack[v, height[v] - 1] % 3 >= stack[u, height[u] - 1] % 3:
        return False
    return not (no_undo and u == last_dst and v == last_src)


@njit(cache=True, nogil=True)
def winner_of(stack, height, lines, player):
    """:meth:`Override.winner` of the position: the player who just acted (``1 - player``) if
    they have a line, else ``player`` if they have one, else -1."""
    if _has_line(stack, height, lines, 1 - player):
        return 1 - player
    if _has_line(stack, height, lines, player):
        return player
    return -1


@njit(cache=True, nogil=True)
def playout_kernel(stack, height, player, last_src, last_dst, max_moves, seed, per_size, centre, no_undo,
                   edges, lines, taken, counts):
    """Random actions (in the order of :meth:`Override.legal_actions`: places by piece A-S ..
    B-L and ascending cell, then moves by edge; a pass when there is none) until a line decides
    the game or ``max_moves`` choices. Changes ``stack``/``height`` in place; returns
    ``(player, last_src, last_dst, choices)``."""
    np.random.seed(seed)
    return random_play(stack, height, player, last_src, last_dst, max_moves, per_size, centre, no_undo, edges,
                       lines, taken, counts)


@njit(cache=True, nogil=True)
def random_play(stack, height, player, last_src, last_dst, max_moves, per_size, centre, no_undo, edges, lines,
                taken, counts):
    """:func:`playout_kernel` on numba's generator as it stands (not seeded here)."""
    n = len(height)
    nedges = edges.shape[0]
    empty = np.empty(n, dtype=np.int64)
    left = np.empty(6, dtype=np.int64)
    movable = np.empty(nedges, dtype=np.int64)
    moves = 0
    while moves < max_moves:
        if _has_line(stack, height, lines, 1 - player) or _has_line(stack, height, lines, player):
            break
        for p in range(6):
            left[p] = per_size
        ne = 0
        for x in range(n):
            for lv in range(height[x]):
                left[stack[x, lv]] -= 1
            if height[x] == 0 and x != centre:
                empty[ne] = x
                ne += 1
        nplace = 0
        for p in range(6):
            if left[p] > 0:
                nplace += ne
        nmove = 0
        for e in range(nedges):
            if not _movable(stack, height, edges[e, 0], edges[e, 1], no_undo, last_src, last_dst):
                continue
            movable[nmove] = e
            nmove += 1
        k = nplace + nmove
        if k == 0:
            taken[moves] = 0
            counts[moves] = 1
            last_src = -1
            last_dst = -1
        else:
            i = draw(k, taken, counts, moves)
            if i < nplace:
                piece = -1
                for p in range(6):
                    if left[p] > 0:
                        if i < ne:
                            piece = p
                            break
                        i -= ne
                x = empty[i]
                stack[x, 0] = piece
                height[x] = 1
                last_src = -1
                last_dst = -1
            else:
                e = movable[i - nplace]
                u = edges[e, 0]
                v = edges[e, 1]
                top = stack[u, height[u] - 1]
                height[u] -= 1
                stack[u, height[u]] = 0  # the slot left is empty (the position stays one array)
                stack[v, height[v]] = top
                height[v] += 1
                last_src = u
                last_dst = v
        player = 1 - player
        moves += 1
    return player, last_src, last_dst, moves


# --- the compiled search tree's parts (solver/core/uct_jit.py) ------------------------------
# The position is one flat array: the stacks (n x 3, bottom first), the heights (n), the player
# to move, the last move's source and destination (-1 after a place or a pass). Move codes:
# ``piece * n + cell`` a place, ``6 * n + e`` a move along step ``e`` of ``edges``, -1 the pass.
# ``prm`` = (per_size, centre (-1: none), no_undo, edges, lines).

@njit(cache=True, nogil=True, inline="always")
def _parts(st):
    n = (len(st) - 3) // 4
    return n, st[:3 * n].reshape((n, 3)), st[3 * n:4 * n]


@njit(cache=True, nogil=True)
def tree_ended(st, prm):
    """:meth:`Override.node_kind` is terminal: a line decides the game."""
    n, stack, height = _parts(st)
    return winner_of(stack, height, prm[4], st[4 * n]) >= 0


@njit(cache=True, nogil=True)
def tree_final(st, prm):
    """Player 0's result at the end (:meth:`Override.winner`)."""
    n, stack, height = _parts(st)
    return 1.0 if winner_of(stack, height, prm[4], st[4 * n]) == 0 else -1.0


@njit(cache=True, nogil=True)
def tree_mover(st, prm):
    return st[(len(st) - 3) // 4 * 4]


@njit(cache=True, nogil=True)
def tree_moves(st, prm, out):
    """:meth:`Override.legal_actions` as move codes into ``out``."""
    if tree_ended(st, prm):
        return 0
    n, stack, height = _parts(st)
    per_size, centre, no_undo, edges = prm[0], prm[1], prm[2], prm[3]
    left = np.full(6, per_size, np.int64)
    for x in range(n):
        for lv in range(height[x]):
            left[stack[x, lv]] -= 1
    k = 0
    for p in range(6):
        if left[p] > 0:
            for x in range(n):
                if height[x] == 0 and x != centre:
                    out[k] = p * n + x
                    k += 1
    src, dst = st[4 * n + 1], st[4 * n + 2]
    for e in range(edges.shape[0]):
        if not _movable(stack, height, edges[e, 0], edges[e, 1], no_undo, src, dst):
            continue
        out[k] = 6 * n + e
        k += 1
    return or_pass(out, k)


@njit(cache=True, nogil=True)
def tree_play(st, prm, code):
    """:meth:`Override.apply`, in place."""
    n, stack, height = _parts(st)
    st[4 * n] = 1 - st[4 * n]
    st[4 * n + 1] = -1
    st[4 * n + 2] = -1
    if code < 0:
        return
    if code < 6 * n:
        x = code % n
        stack[x, 0] = code // n
        height[x] = 1
        return
    u = prm[3][code - 6 * n, 0]
    v = prm[3][code - 6 * n, 1]
    height[u] -= 1
    stack[v, height[v]] = stack[u, height[u]]
    stack[u, height[u]] = 0
    height[v] += 1
    st[4 * n + 1] = u
    st[4 * n + 2] = v


@njit(cache=True, nogil=True)
def tree_rollout(st, prm, max_moves, taken, counts):
    """Random play (:func:`random_play`), then player 0's result, or at the cap the evaluation
    (:func:`solver.players.evals.override_eval`: lines near completion, by the tops' sizes)."""
    n, stack, height = _parts(st)
    player, src, dst, _ = random_play(stack, height, st[4 * n], st[4 * n + 1], st[4 * n + 2], max_moves, prm[0],
                                      prm[1], prm[2], prm[3], prm[4], taken, counts)
    st[4 * n] = player
    st[4 * n + 1] = src
    st[4 * n + 2] = dst
    if tree_ended(st, prm):
        return tree_final(st, prm)
    lines = prm[4]
    if lines.shape[0] == 0:
        return 0.0
    size = lines.shape[1]
    score0 = 0.0
    score1 = 0.0
    for li in range(lines.shape[0]):
        t0 = 0.0
        t1 = 0.0
        for j in range(size):
            x = lines[li, j]
            if height[x] > 0:
                top = stack[x, height[x] - 1]
                w = (top % 3 + 1) / 3.0
                if top // 3 == 0:
                    t0 += w
                else:
                    t1 += w
        score0 += (t0 / size) ** 2
        score1 += (t1 / size) ** 2
    v = (score0 - score1) / lines.shape[0]
    return -1.0 if v < -1.0 else 1.0 if v > 1.0 else v


@njit(cache=True, nogil=True)
def _decode(key, last_base, pieces, pow_pieces, pow_squares, n_cells, sq):
    """Square codes of ``key``'s board into ``sq``; returns ``(player, last)``."""
    last = np.int64(key % last_base)
    rest = key // last_base
    player = np.int64(rest % np.uint64(2))
    board = rest // np.uint64(2)
    for x in range(n_cells):
        sq[x] = 0
    if pieces:
        base = np.uint64(n_cells + 1)
        for p in range(6):
            loc = np.int64((board // pow_pieces[p]) % base)
            if loc > 0:
                sq[loc - 1] += (p // 3 + 1) * 3 ** (p % 3)
    else:
        for x in range(n_cells):
            sq[x] = np.int64((board // pow_squares[x]) % np.uint64(27))
    return player, last


@njit(cache=True, nogil=True)
def expand_kernel(keys, canonical, last_base, stride, n_cells, per_size, no_undo, pieces, pow_pieces,
                  pow_squares, digits, top_size, top_col, sq_w, slots, eu, ev, rev1, lines, placeable):
    """The compiled :meth:`Override.expand`: ``(kind, to_move, offsets, children, result,
    child_tier)`` of ``keys`` (uint64), children in the order of :meth:`Override.legal_actions`
    (places by piece and cell, moves by step, pass), keyed from the parent's key by the per-slot
    key changes of ``Override._tables`` (the smallest image under the symmetries when
    ``canonical``); each child's :meth:`Override.tier_of` read off the parent (a place adds its
    piece's digit, a move or a pass none), not decoded from the child's key.
    ``tests/test_override_fast.py`` proves it equal to the readable rules."""
    m = len(keys)
    n_edges = len(eu)
    n_lines, line_len = lines.shape
    kind = np.empty(m, dtype=np.int8)
    to_move = np.empty(m, dtype=np.int8)
    result = np.zeros(m, dtype=np.int8)
    offsets = np.zeros(m + 1, dtype=np.int64)
    boards = np.zeros((m, n_cells), dtype=np.int8)  # square codes (< 27) between the passes
    lasts = np.zeros(m, dtype=np.int64)
    sq = np.zeros(n_cells, dtype=np.int64)
    count = np.zeros(6, dtype=np.int64)
    has = np.zeros(3, dtype=np.bool_)
    for r in range(m):  # pass 1: decode, end of game, number of children
        player, last = _decode(keys[r], last_base, pieces, pow_pieces, pow_squares, n_cells, sq)
        for x in range(n_cells):
            boards[r, x] = sq[x]
        lasts[r] = last
        to_move[r] = player
        has[1] = False
        has[2] = False
        for li in range(n_lines):
            c0 = top_col[sq[lines[li, 0]]]
            if c0 == 0:
                continue
            same = True
            for j in range(1, line_len):
                if top_col[sq[lines[li, j]]] != c0:
                    same = False
                    break
            if same:
                has[c0] = True
        if has[1] or has[2]:
            kind[r] = 3
            mover_has = has[1] if player == 1 else has[2]  # the player who just moved
            result[r] = -1 if mover_has else 1
            offsets[r + 1] = offsets[r]
            continue
        kind[r] = 0
        for p in range(6):
            count[p] = 0
        open_cells = 0
        for x in range(n_cells):
            q = sq[x]
            for s in range(3):
                if digits[q, s] != 0:
                    count[(digits[q, s] - 1) * 3 + s] += 1
            if top_size[q] < 0 and placeable[x]:
                open_cells += 1
        k = 0
        for p in range(6):
            if count[p] < per_size:
                k += open_cells
        for e in range(n_edges):
            tu = top_size[sq[eu[e]]]
            if tu >= 0 and top_size[sq[ev[e]]] < tu and not (no_undo and last == rev1[e]):
                k += 1
        offsets[r + 1] = offsets[r] + (k if k > 0 else 1)
    children = np.empty(offsets[m], dtype=np.uint64)
    child_tier = np.empty(offsets[m], dtype=np.int64)
    digit = np.empty(6, dtype=np.int64)  # what a pyramid of each code adds to the tier id
    digit[0] = 1
    for p in range(1, 6):
        digit[p] = digit[p - 1] * (per_size + 1)
    n_sym = sq_w.shape[0] if canonical else 1
    part = np.zeros(n_sym, dtype=np.uint64)
    pass_slot = 6 * (n_cells + n_edges)
    for r in range(m):  # pass 2: the children's keys
        if kind[r] != 0:
            continue
        for x in range(n_cells):
            sq[x] = boards[r, x]
        turn = np.uint64(1 - to_move[r]) * last_base
        for g in range(n_sym):
            acc = np.uint64(0)
            for x in range(n_cells):
                acc += sq_w[g, x, sq[x]]
            part[g] = acc * stride + turn
        for p in range(6):
            count[p] = 0
        for x in range(n_cells):
            q = sq[x]
            for s in range(3):
                if digits[q, s] != 0:
                    count[(digits[q, s] - 1) * 3 + s] += 1
        tier = 0
        for p in range(6):
            tier += count[p] * digit[p]
        child_tier[offsets[r]:offsets[r + 1]] = tier
        e_out = offsets[r]
        for p in range(6):
            if count[p] >= per_size:
                continue
            for x in range(n_cells):
                if top_size[sq[x]] < 0 and placeable[x]:
                    children[e_out] = _child(part, slots, p * n_cells + x, n_sym)
                    child_tier[e_out] = tier + digit[p]
                    e_out += 1
        for e in range(n_edges):
            u = eu[e]
            tu = top_size[sq[u]]
            if tu >= 0 and top_size[sq[ev[e]]] < tu and not (no_undo and lasts[r] == rev1[e]):
                moved = (top_col[sq[u]] - 1) * 3 + tu
                children[e_out] = _child(part, slots, 6 * n_cells + moved * n_edges + e, n_sym)
                e_out += 1
        if e_out == offsets[r]:
            children[e_out] = _child(part, slots, pass_slot, n_sym)
    return kind, to_move, offsets, children, result, child_tier


@njit(cache=True, nogil=True)
def _child(part, slots, slot, n_sym):
    best = part[0] + slots[0, slot]
    for g in range(1, n_sym):
        v = part[g] + slots[g, slot]
        if v < best:
            best = v
    return best


@njit(cache=True, nogil=True)
def tier_kernel(keys, stride, pieces, cells, add, out):  # pragma: no cover - compiled
    """:meth:`Override.tier_of` per key: ``pieces``: the six location digits (base ``cells + 1``, 0 = off the board) give one bit per
    piece on the board; else the base-27 square digits add ``add[digit]`` each."""
    base = np.uint64(cells + 1)
    b27 = np.uint64(27)
    zero = np.uint64(0)
    for i in range(len(keys)):
        board = keys[i] // stride
        t = 0
        if pieces:
            for p in range(6):
                if board % base != zero:
                    t += 1 << p
                board = board // base
        else:
            for _ in range(cells):
                t += add[board % b27]
                board = board // b27
        out[i] = t


@njit(cache=True)
def layers_kernel(keys, stride, pieces, cells, out):  # pragma: no cover - compiled
    """The board of each key as three layers, one per size: ``out[i, s, x]`` is 0 (no pyramid of
    size ``s`` on square ``x``), 1 (A's) or 2 (B's). ``pieces``: the six location digits (base
    ``cells + 1``, piece code ``p = 3 * colour + size``); else the base-27 square digits."""
    base = np.uint64(cells + 1)
    b27 = np.uint64(27)
    for i in range(len(keys)):
        board = keys[i] // stride
        for s in range(3):
            for x in range(cells):
                out[i, s, x] = 0
        if pieces:
            for p in range(6):
                loc = np.int64(board % base)
                if loc:
                    out[i, p % 3, loc - 1] = p // 3 + 1
                board = board // base
        else:
            for x in range(cells):
                q = np.int64(board % b27)
                for s in range(3):
                    out[i, s, x] = q % 3
                    q //= 3
                board = board // b27


@njit(cache=True)
def board_codes_kernel(layers, pieces, cells, out):  # pragma: no cover - compiled
    """The inverse of :func:`layers_kernel`: each board's code (the key without its player and
    last-move digits)."""
    base = np.uint64(cells + 1)
    b27 = np.uint64(27)
    for i in range(layers.shape[0]):
        code = np.uint64(0)
        if pieces:
            for p in range(5, -1, -1):
                loc = 0
                for x in range(cells):
                    if layers[i, p % 3, x] == p // 3 + 1:
                        loc = x + 1
                code = code * base + np.uint64(loc)
        else:
            for x in range(cells - 1, -1, -1):
                q = 0
                for s in range(2, -1, -1):
                    q = q * 3 + layers[i, s, x]
                code = code * b27 + np.uint64(q)
        out[i] = code


#: the parts MCTS's compiled tree takes (:class:`solver.core.uct_jit.CompiledRules`)
TREE_PARTS = (tree_moves, tree_play, tree_mover, tree_ended, tree_final, tree_rollout)
