"""Compiled (numba) Blam!: random playouts (:meth:`solver.games.blam.Blam.random_playout`) and
the expansion of many keys at once (:meth:`solver.games.blam.Blam.expand`, ``"piece"`` keys).

The position is the board (0 empty, else ``1 + 3 * owner + size``), the stashes and treasures
(``players x 3``) and the mover; the rays of each cell (the 8 directions, nearest cell first, as
:meth:`Blam._make_rays` lists them) are flattened into ``cell_off``/``ray_off``/``ray_cells``.
Both share one placement (:func:`place`). The rules are those of :meth:`Blam.apply`:
``tests/test_playouts.py`` replays every playout choice under the readable rules, and
``tests/test_blam.py`` proves the expansion equal to ``Game.expand`` (every 3x3 position in the
slow suite; random and dense positions of 2-4 players, both push rules, in the fast one).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solver.core.playout_jit import draw
from solver.core.uct_jit import or_pass


@njit(cache=True, nogil=True, inline="always")
def _fall(code, p, stash, treasure):
    owner = (code - 1) // 3
    size = (code - 1) % 3
    if owner == p:
        stash[p, size] += 1
    else:
        treasure[p, size] += 1


@njit(cache=True, nogil=True, inline="always")
def place(board, stash, treasure, p, size, cell, chain, smaller_only, cell_off, ray_off, ray_cells):
    """Player ``p`` places a pyramid of ``size`` from their stash on the empty ``cell`` and pushes
    along every ray (:meth:`Blam.apply`): with ``chain`` the whole run of pyramids moves one
    square outward (blocked, with ``smaller_only``, by a larger pyramid anywhere in it), else only
    the adjacent pyramid, when the square beyond it is empty; what leaves the board falls."""
    stash[p, size] -= 1
    board[cell] = 1 + 3 * p + size
    for r in range(cell_off[cell], cell_off[cell + 1]):
        a = ray_off[r]
        length = ray_off[r + 1] - a
        if chain:
            run = 0
            while run < length and board[ray_cells[a + run]] != 0:
                run += 1
            if run == 0:
                continue
            if smaller_only:
                blocked = False
                for j in range(run):
                    if (board[ray_cells[a + j]] - 1) % 3 > size:
                        blocked = True
                if blocked:
                    continue
            if run == length:
                _fall(board[ray_cells[a + run - 1]], p, stash, treasure)
            else:
                board[ray_cells[a + run]] = board[ray_cells[a + run - 1]]
            for j in range(run - 1, 0, -1):
                board[ray_cells[a + j]] = board[ray_cells[a + j - 1]]
            board[ray_cells[a]] = 0
        else:
            first = board[ray_cells[a]]
            if first == 0:
                continue
            if smaller_only and (first - 1) % 3 > size:
                continue
            if length == 1:
                _fall(first, p, stash, treasure)
                board[ray_cells[a]] = 0
            elif board[ray_cells[a + 1]] == 0:
                board[ray_cells[a + 1]] = first
                board[ray_cells[a]] = 0


@njit(cache=True, nogil=True)
def playout_kernel(board, stash, treasure, mover, max_moves, seed, chain, smaller_only, cell_off,
                   ray_off, ray_cells, taken, counts):
    """Random placements (in the order of :meth:`Blam.legal_actions`: sizes S, M, L with
    pyramids left, cells ascending; a pass with an empty stash) until the board is full, every
    stash is empty, or ``max_moves`` choices. Changes the arrays in place; returns
    ``(mover, choices)``."""
    np.random.seed(seed)
    return random_play(board, stash, treasure, mover, max_moves, chain, smaller_only, cell_off, ray_off,
                       ray_cells, taken, counts)


@njit(cache=True, nogil=True)
def random_play(board, stash, treasure, mover, max_moves, chain, smaller_only, cell_off, ray_off, ray_cells,
                taken, counts):
    """:func:`playout_kernel` on numba's generator as it stands (not seeded here)."""
    n = len(board)
    players = stash.shape[0]
    empty = np.empty(n, dtype=np.int64)
    moves = 0
    while moves < max_moves:
        ne = 0
        for c in range(n):
            if board[c] == 0:
                empty[ne] = c
                ne += 1
        left = 0
        for q in range(players):
            for s in range(3):
                left += stash[q, s]
        if ne == 0 or left == 0:
            break
        p = mover
        sizes = 0
        for s in range(3):
            if stash[p, s] > 0:
                sizes += 1
        mover = (p + 1) % players
        if sizes == 0:
            taken[moves] = 0
            counts[moves] = 1
            moves += 1
            continue
        i = draw(sizes * ne, taken, counts, moves)
        moves += 1
        nth = i // ne
        cell = empty[i % ne]
        size = -1
        for s in range(3):
            if stash[p, s] > 0:
                if nth == 0:
                    size = s
                    break
                nth -= 1
        place(board, stash, treasure, p, size, cell, chain, smaller_only, cell_off, ray_off, ray_cells)
    return mover, moves


@njit(cache=True, nogil=True, inline="always")
def _decode(key, radices, head, P, k, level_of, stash_of, cells_of, board, stash, treasure, stored):
    """The position of a ``"piece"`` key into ``board``/``stash``/``treasure`` (as
    :meth:`Blam.decode`); returns the mover."""
    n = len(board)
    C = 3 * P
    rest = key
    mover = np.int64(rest % radices[0])
    rest = rest // radices[0]
    for h in range(1, head):
        stored[h - 1] = np.int64(rest % radices[h])
        rest = rest // radices[h]
    for c in range(n):
        board[c] = 0
    for j in range(C):
        d = np.int64(rest % radices[head + j])
        rest = rest // radices[head + j]
        for i in range(level_of[d]):
            board[cells_of[d, i]] = j + 1
        stash[j // 3, j % 3] = stash_of[d]
    # pyramids out of play (neither on the board nor in the stash) are someone's treasure
    for q in range(P):
        for s in range(3):
            treasure[q, s] = k - stash[q, s]
    for c in range(n):
        if board[c]:
            treasure[(board[c] - 1) // 3, (board[c] - 1) % 3] -= 1
    if P == 2:
        for s in range(3):
            g0 = treasure[0, s]
            treasure[0, s] = treasure[1, s]
            treasure[1, s] = g0
    else:
        for s in range(3):
            gone = 0
            for q in range(P):
                gone += treasure[q, s]
            for p in range(P - 1):
                treasure[p, s] = stored[3 * p + s]
                gone -= stored[3 * p + s]
            treasure[P - 1, s] = gone
    return mover


@njit(cache=True, nogil=True, inline="always")
def _encode(board, stash, treasure, mover, radices, head, P, k, class_offsets, comb, sym_digit, images, digits,
            cand):
    """The key of a position (the smallest over the first ``images`` symmetries; 1: as is), as
    :meth:`Blam.encode` writes it, ``"piece"`` scheme."""
    n = len(board)
    C = 3 * P
    for j in range(C):
        digits[j, 0] = 0  # count on the board
        digits[j, 1] = 0  # colex rank of the squares
    for c in range(n):
        if board[c]:
            j = board[c] - 1
            digits[j, 0] += 1
            digits[j, 1] += comb[c, digits[j, 0]]
    for j in range(C):
        m = digits[j, 0]
        digits[j, 2] = class_offsets[m] + digits[j, 1] * (k - m + 1) + stash[j // 3, j % 3]
    low = np.uint64(mover)  # the head digits, the same under every symmetry
    scale = radices[0]
    for h in range(1, head):
        low += np.uint64(treasure[(h - 1) // 3, (h - 1) % 3]) * scale
        scale *= radices[h]
    # the smallest image, digit by digit from the most significant (the class digits sit above
    # the head): keep the symmetries that give the smallest digit so far, usually one at once
    kept = images
    for g in range(images):
        cand[g] = g
    key = np.uint64(0)
    for j in range(C - 1, -1, -1):
        d = digits[j, 2]
        low_digit = sym_digit[cand[0], d]
        for i in range(1, kept):
            low_digit = min(low_digit, sym_digit[cand[i], d])
        if kept > 1:
            left = 0
            for i in range(kept):
                if sym_digit[cand[i], d] == low_digit:
                    cand[left] = cand[i]
                    left += 1
            kept = left
        key = key * radices[head + j] + low_digit
    return key * scale + low


@njit(cache=True, nogil=True)
def expand_kernel(keys, radices, head, P, k, n, class_offsets, level_of, stash_of, cells_of, comb, sym_digit,
                  images, chain, smaller_only, captures_tiebreak, cell_off, ray_off, ray_cells):
    """:meth:`Blam.expand` of ``"piece"`` keys: per key its kind, mover, result and margin (at
    the end) and its children in :meth:`Blam.legal_actions` order (sizes S, M, L with pyramids
    left, squares ascending; the pass when the stash is empty), keyed as :func:`_encode` does.
    Returns ``(kind, to_move, offsets, children, result, margin)``."""
    N = len(keys)
    C = 3 * P
    board = np.zeros(n, np.int64)
    stash = np.zeros((P, 3), np.int64)
    treasure = np.zeros((P, 3), np.int64)
    stored = np.zeros(max(head - 1, 1), np.int64)
    cb = np.zeros(n, np.int64)
    cs = np.zeros((P, 3), np.int64)
    ctr = np.zeros((P, 3), np.int64)
    digits = np.zeros((C, 3), np.int64)
    cand = np.zeros(len(sym_digit), np.int64)  # the symmetries still giving the smallest key
    kind = np.empty(N, np.int8)
    to_move = np.empty(N, np.int8)
    result = np.zeros(N, np.int8)
    margin = np.zeros(N, np.int32)
    offsets = np.zeros(N + 1, np.int64)
    # pass 1: the number of moves of each key
    for i in range(N):
        mover = _decode(keys[i], radices, head, P, k, level_of, stash_of, cells_of, board, stash, treasure, stored)
        empty = 0
        for c in range(n):
            if board[c] == 0:
                empty += 1
        left = 0
        for q in range(P):
            for s in range(3):
                left += stash[q, s]
        count = 0
        if empty > 0 and left > 0:
            for s in range(3):
                if stash[mover, s] > 0:
                    count += empty
            if count == 0:
                count = 1  # the pass
        offsets[i + 1] = offsets[i] + count
    children = np.empty(offsets[N], np.uint64)
    pips = np.zeros(P, np.int64)
    rank = np.zeros(P, np.int64)
    # pass 2: the children, or the result at the end
    for i in range(N):
        mover = _decode(keys[i], radices, head, P, k, level_of, stash_of, cells_of, board, stash, treasure, stored)
        to_move[i] = mover
        o = offsets[i]
        if offsets[i + 1] > o:
            kind[i] = 0  # NodeKind.DECISION
            nxt = (mover + 1) % P
            if stash[mover, 0] + stash[mover, 1] + stash[mover, 2] == 0:  # the pass, the one move
                children[o] = _encode(board, stash, treasure, nxt, radices, head, P, k, class_offsets, comb,
                                      sym_digit, images, digits, cand)
                continue
            for s in range(3):
                if stash[mover, s] == 0:
                    continue
                for c in range(n):
                    if board[c] != 0:
                        continue
                    cb[:] = board
                    cs[:, :] = stash
                    ctr[:, :] = treasure
                    place(cb, cs, ctr, mover, s, c, chain, smaller_only, cell_off, ray_off, ray_cells)
                    children[o] = _encode(cb, cs, ctr, nxt, radices, head, P, k, class_offsets, comb,
                                          sym_digit, images, digits, cand)
                    o += 1
            continue
        kind[i] = 3  # NodeKind.TERMINAL: scores are the treasures' pips (S 1, M 2, L 3)
        for p in range(P):
            pips[p] = treasure[p, 0] + 2 * treasure[p, 1] + 3 * treasure[p, 2]
            rank[p] = pips[p]
            if captures_tiebreak:
                rank[p] = pips[p] * 1000 + treasure[p, 0] + treasure[p, 1] + treasure[p, 2]
        top = rank[0]
        for p in range(1, P):
            top = max(top, rank[p])
        n_top = 0
        for p in range(P):
            if rank[p] == top:
                n_top += 1
        if rank[mover] < top:
            result[i] = -1
        elif n_top == 1:
            result[i] = 1
        else:
            result[i] = 0
        best_other = np.iinfo(np.int64).min
        for p in range(P):
            if p != mover:
                best_other = max(best_other, pips[p])
        margin[i] = pips[mover] - best_other
    return kind, to_move, offsets, children, result, margin


# --- the compiled search tree's parts (solver/core/uct_jit.py) ------------------------------
# The position is one flat array: the board (n), the stashes (P x 3), the treasures (P x 3), the
# mover; ``prm`` = (cell_off, ray_off, ray_cells, chain, smaller_only, captures_tiebreak, per_size).

@njit(cache=True, nogil=True, inline="always")
def _parts(st):
    n = len(st) - 13  # two players: 6 stash and 6 treasure counts and the mover after the board
    return n, st[:n], st[n:n + 6].reshape((2, 3)), st[n + 6:n + 12].reshape((2, 3))


@njit(cache=True, nogil=True)
def tree_moves(st, prm, out):
    """:meth:`Blam.legal_actions` (``size * n + cell``; ``-1`` the pass) into ``out``."""
    n, board, stash, _ = _parts(st)
    if tree_ended(st, prm):
        return 0
    p = st[-1]
    k = 0
    for s in range(3):
        if stash[p, s] > 0:
            for c in range(n):
                if board[c] == 0:
                    out[k] = s * n + c
                    k += 1
    return or_pass(out, k)


@njit(cache=True, nogil=True)
def tree_play(st, prm, code):
    """:meth:`Blam.apply`, in place."""
    n, board, stash, treasure = _parts(st)
    p = st[-1]
    if code >= 0:
        place(board, stash, treasure, p, code // n, code % n, prm[3], prm[4], prm[0], prm[1], prm[2])
    st[-1] = 1 - p


@njit(cache=True, nogil=True)
def tree_mover(st, prm):
    return st[-1]


@njit(cache=True, nogil=True)
def tree_ended(st, prm):
    """:meth:`Blam.node_kind` is terminal: the board full or every stash empty."""
    n, board, stash, _ = _parts(st)
    full = True
    for c in range(n):
        if board[c] == 0:
            full = False
            break
    if full:
        return True
    for q in range(2):
        for s in range(3):
            if stash[q, s] > 0:
                return False
    return True


@njit(cache=True, nogil=True, inline="always")
def _pips(treasure, q):
    return treasure[q, 0] + 2 * treasure[q, 1] + 3 * treasure[q, 2]


@njit(cache=True, nogil=True)
def tree_final(st, prm):
    """Player 0's result at the end (:meth:`Blam.outcome`, two players)."""
    _, _, _, treasure = _parts(st)
    a = _pips(treasure, 0)
    b = _pips(treasure, 1)
    if prm[5]:  # tiebreak=captures
        a = a * 1000 + treasure[0, 0] + treasure[0, 1] + treasure[0, 2]
        b = b * 1000 + treasure[1, 0] + treasure[1, 1] + treasure[1, 2]
    return 1.0 if a > b else -1.0 if a < b else 0.0


@njit(cache=True, nogil=True)
def tree_rollout(st, prm, max_moves, taken, counts):
    """Random play (:func:`random_play`), then player 0's result, or at the cap the evaluation
    (:func:`solver.players.evals.blam_eval`: pips captured, the difference over ``6 * per_size``)."""
    n, board, stash, treasure = _parts(st)
    mover, _ = random_play(board, stash, treasure, st[-1], max_moves, prm[3], prm[4], prm[0], prm[1], prm[2],
                           taken, counts)
    st[-1] = mover
    if tree_ended(st, prm):
        return tree_final(st, prm)
    v = (_pips(treasure, 0) - _pips(treasure, 1)) / (6.0 * prm[6])
    return -1.0 if v < -1.0 else 1.0 if v > 1.0 else v


#: the parts MCTS's compiled tree takes (:class:`solver.core.uct_jit.CompiledRules`)
TREE_PARTS = (tree_moves, tree_play, tree_mover, tree_ended, tree_final, tree_rollout)
