"""Compiled (numba) batch expansion of Greener positions.

One pass per key: unrank the board, list the captures in the order of
:meth:`solver.games.greener.Greener.captures` (from-cell ascending, then north, east, south,
west), build each child board, and key it (canonical: the lexicographically smallest image
under the board symmetries, ranked once, since ranks order boards lexicographically).
``tests/test_greener.py`` proves the output equal to the readable rules.

Tables come from ``Greener._batch_tables`` (``cum`` is the flattened cumulative-count table of
the exact board ranking, indexed ``m * s_m + H * s_h + greens * s_gr + code``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solver.core.playout_jit import draw
from solver.core.uct_jit import or_pass

# node kinds (values of solver.core.game.NodeKind)
_DECISION = 0
_TERMINAL = 3


@njit(cache=True, nogil=True)
def _rank(board, n, green, cum, s_m, s_h, s_gr, heights, greens):
    big_h = n
    gr = green
    r = 0
    for i in range(n):
        code = board[i]
        r += cum[(n - i) * s_m + big_h * s_h + gr * s_gr + code]
        big_h -= heights[code]
        gr -= greens[code]
    return r


@njit(cache=True, nogil=True)
def unrank_memory(n, green):
    """The arrays :func:`unrank_sorted` keeps between calls, before the first one."""
    acc = np.zeros(n + 1, dtype=np.int64)
    span = np.zeros(n + 1, dtype=np.int64)
    left_h = np.zeros(n + 1, dtype=np.int64)
    left_g = np.zeros(n + 1, dtype=np.int64)
    left_h[0] = n
    left_g[0] = green
    return acc, span, left_h, left_g


@njit(cache=True, nogil=True)
def unrank_sorted(r, out, acc, span, left_h, left_g, n, green, ncodes, cum, s_m, s_h, s_gr, heights,
                  greens):
    """The board of rank ``r`` (the inverse of ``_rank``), cell codes written into ``out``, which
    holds the board of the rank unranked before (``acc``/``span``/``left_h``/``left_g``, from
    :func:`unrank_memory`: per cell ``j``, the rank below the board's first ``j`` cells, how many
    boards share them, and the height and greens left for cells ``j..``). Cells shared with that
    board are kept: when ranks come in ascending order (a tier's sorted keys) most boards differ
    only in their last few cells. Public because :mod:`solver.games.greener`'s tier kernel reads
    boards this way too."""
    j = 0
    while j < n and acc[j] <= r and r - acc[j] < span[j]:
        j += 1
    if j == n and r == acc[n]:
        return
    j = max(j - 1, 0)  # cells 0..j-1 are shared; cell j differs (or the first call)
    big_h = left_h[j]
    gr = left_g[j]
    rest = r - acc[j]
    for i in range(j, n):
        base = (n - i) * s_m + big_h * s_h + gr * s_gr
        span[i] = cum[base + ncodes]
        lo = 0
        hi = ncodes  # invariant: cum[base + lo] <= rest < cum[base + hi]
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if cum[base + mid] <= rest:
                lo = mid
            else:
                hi = mid
        out[i] = lo
        rest -= cum[base + lo]
        acc[i + 1] = acc[i] + cum[base + lo]
        big_h -= heights[lo]
        gr -= greens[lo]
        left_h[i + 1] = big_h
        left_g[i + 1] = gr


@njit(cache=True, nogil=True)
def expand_kernel(keys, n, green, ncodes, cum, s_m, s_h, s_gr, heights, greens, colour,
                  combine, pair_src, pair_off, pair_cells, gathers, canonical, tallest):
    """Children and terminal data of ``keys`` (int64). Returns
    ``(kind, to_move, offsets, children, result, margin, child_tier)`` as in :class:`Expansion`:
    each child's tier (:meth:`Greener.tier_of`) is read off the parent's board (stacks left,
    single greens, tallest stack) and the capture, instead of unranking the child again."""
    count = len(keys)
    npairs = len(pair_src)
    nsym = gathers.shape[0]
    kind = np.empty(count, dtype=np.int8)
    to_move = np.empty(count, dtype=np.int8)
    offsets = np.zeros(count + 1, dtype=np.int64)
    result = np.zeros(count, dtype=np.int8)
    margin = np.zeros(count, dtype=np.int32)
    cap = count * (npairs + 1)
    children = np.empty(cap, dtype=np.uint64)
    child_tier = np.empty(cap, dtype=np.int64)
    board = np.empty(n, dtype=np.int64)
    child = np.empty(n, dtype=np.int64)
    image = np.empty(n, dtype=np.int64)
    best = np.empty(n, dtype=np.int64)
    acc, span, left_h, left_g = unrank_memory(n, green)  # of the board before
    e = 0
    for row in range(count):
        k = keys[row]
        passes = k % 3
        player = (k // 3) % 2
        unrank_sorted(k // 6, board, acc, span, left_h, left_g, n, green, ncodes, cum, s_m, s_h, s_gr,
                      heights, greens)
        to_move[row] = player
        if passes == 2:
            kind[row] = _TERMINAL
            score_b = 0
            score_w = 0
            tall_b = 0
            tall_w = 0
            for i in range(n):
                c = colour[board[i]]
                if c == 0:
                    score_b += greens[board[i]]
                    tall_b = max(tall_b, heights[board[i]])
                elif c == 1:
                    score_w += greens[board[i]]
                    tall_w = max(tall_w, heights[board[i]])
            diff = score_b - score_w
            s = 0
            if diff > 0:
                s = 1
            elif diff < 0:
                s = -1
            elif tallest:
                if tall_b > tall_w:
                    s = 1
                elif tall_b < tall_w:
                    s = -1
            sign = 1 if player == 0 else -1
            result[row] = s * sign
            margin[row] = diff * sign
            offsets[row + 1] = e
            continue
        kind[row] = _DECISION
        empty, singles, tall = board_tier_parts(board, n, heights)
        ncap = 0
        for p in range(npairs):
            src = pair_src[p]
            if colour[board[src]] != player:
                continue
            dst = -1
            for j in range(pair_off[p], pair_off[p + 1]):
                if board[pair_cells[j]] != 0:
                    dst = pair_cells[j]
                    break
            if dst < 0:
                continue
            ncap += 1
            for i in range(n):
                child[i] = board[i]
            made = combine[board[src], board[dst]]
            child[dst] = made
            child[src] = 0
            children[e] = _key(child, 1 - player, 0, canonical, image, best, gathers, nsym, n,
                               green, cum, s_m, s_h, s_gr, heights, greens)
            left = singles - (board[src] == 1) - (board[dst] == 1)
            child_tier[e] = tier_id(empty + 1, green - left, max(tall, heights[made]), 0, n, green)
            e += 1
        if ncap == 0:  # pass
            children[e] = _key(board, 1 - player, passes + 1, canonical, image, best, gathers,
                               nsym, n, green, cum, s_m, s_h, s_gr, heights, greens)
            child_tier[e] = tier_id(empty, green - singles, tall, passes + 1, n, green)
            e += 1
        offsets[row + 1] = e
    return kind, to_move, offsets, children[:e].copy(), result, margin, child_tier[:e].copy()


@njit(cache=True, nogil=True)
def board_tier_parts(board, n, heights):
    """``(empty cells, single green pyramids, tallest stack)`` of a board of cell codes."""
    empty = 0
    singles = 0
    tallest = 0
    for i in range(n):
        code = board[i]
        if code == 0:
            empty += 1
        elif code == 1:
            singles += 1
        if heights[code] > tallest:
            tallest = heights[code]
    return empty, singles, tallest


@njit(cache=True, nogil=True)
def tier_id(captures, greens_captured, tallest, passes, n, green):
    """The tier id of :meth:`Greener.tier_of` from its parts."""
    return ((captures * (green + 1) + greens_captured) * (n + 1) + tallest) * 3 + passes


@njit(cache=True, nogil=True)
def _key(board, player, passes, canonical, image, best, gathers, nsym, n, green, cum, s_m, s_h,
         s_gr, heights, greens):
    if canonical:
        for i in range(n):
            best[i] = board[gathers[0, i]]
        for s in range(1, nsym):
            smaller = False
            for i in range(n):
                v = board[gathers[s, i]]
                if v != best[i]:
                    smaller = v < best[i]
                    break
            if smaller:
                for i in range(n):
                    best[i] = board[gathers[s, i]]
        r = _rank(best, n, green, cum, s_m, s_h, s_gr, heights, greens)
    else:
        r = _rank(board, n, green, cum, s_m, s_h, s_gr, heights, greens)
    return np.uint64((r * 2 + player) * 3 + passes)


@njit(cache=True, nogil=True)
def playout_kernel(board, player, passes, max_moves, seed, colour, heights, greens, pair_src, pair_off,
                   pair_cells, taken, counts):
    """Random play from ``board`` (cell codes, changed in place; ``colour``/``heights``/``greens``
    decode a code): every capture of the mover listed in the order of :meth:`Greener.captures`
    and one drawn uniformly, a pass when there is none, until two passes in a row or
    ``max_moves`` choices. Returns ``(player, passes, choices)``; ``taken`` and ``counts`` get
    each choice's index and the number of choices there were. A capture's stack is coded as
    :func:`solver.games.greener.stack_code` does: ``h * h - h + 2 + 2 * greens + colour``."""
    np.random.seed(seed)
    return random_play(board, player, passes, max_moves, colour, heights, greens, pair_src, pair_off, pair_cells,
                       taken, counts)


@njit(cache=True, nogil=True, inline="always")
def _first_stack(board, pair_off, pair_cells, ray):
    """The first non-empty cell along capture ray ``ray`` (-1: none)."""
    for j in range(pair_off[ray], pair_off[ray + 1]):
        if board[pair_cells[j]] != 0:
            return pair_cells[j]
    return -1


@njit(cache=True, nogil=True, inline="always")
def _capture(board, src, dst, colour, heights, greens):
    """The stack on ``src`` captures the one on ``dst`` (:meth:`Greener.apply`'s stack code)."""
    s = board[src]
    d = board[dst]
    h = heights[s] + heights[d]
    board[dst] = h * h - h + 2 + 2 * (greens[s] + greens[d]) + colour[s]
    board[src] = 0


@njit(cache=True, nogil=True)
def random_play(board, player, passes, max_moves, colour, heights, greens, pair_src, pair_off, pair_cells,
                taken, counts):
    """:func:`playout_kernel` on numba's generator as it stands (not seeded here)."""
    npairs = len(pair_src)
    cap_src = np.empty(npairs, dtype=np.int64)
    cap_dst = np.empty(npairs, dtype=np.int64)
    moves = 0
    while passes < 2 and moves < max_moves:
        ncap = 0
        for p in range(npairs):
            src = pair_src[p]
            if colour[board[src]] != player:
                continue
            c = _first_stack(board, pair_off, pair_cells, p)
            if c >= 0:
                cap_src[ncap] = src
                cap_dst[ncap] = c
                ncap += 1
        if ncap == 0:
            taken[moves] = 0
            counts[moves] = 1
            passes += 1
        else:
            i = draw(ncap, taken, counts, moves)
            _capture(board, cap_src[i], cap_dst[i], colour, heights, greens)
            passes = 0
        player = 1 - player
        moves += 1
    return player, passes, moves


# --- the compiled search tree's parts (solver/core/uct_jit.py) ------------------------------
# The position is one flat array: the board's cell codes (n), the side to move, the passes in a
# row. Move codes: ``i`` the capture along ray ``i`` of ``pair_src``/``pair_off``/``pair_cells``
# (a ray gives at most one capture: its first stack), -1 the pass. ``prm`` = (colour, heights,
# greens, pair_src, pair_off, pair_cells, tallest tiebreak, greens in play).

@njit(cache=True, nogil=True)
def tree_moves(st, prm, out):
    """:meth:`Greener.legal_actions` (in the order of :meth:`Greener.captures`) into ``out``."""
    n = len(st) - 2
    if st[n + 1] >= 2:
        return 0
    colour, pair_src, pair_off, pair_cells = prm[0], prm[3], prm[4], prm[5]
    player = st[n]
    k = 0
    for p in range(len(pair_src)):
        if colour[st[pair_src[p]]] == player and _first_stack(st, pair_off, pair_cells, p) >= 0:
            out[k] = p
            k += 1
    return or_pass(out, k)


@njit(cache=True, nogil=True)
def tree_play(st, prm, code):
    """:meth:`Greener.apply`, in place."""
    n = len(st) - 2
    st[n] = 1 - st[n]
    if code < 0:
        st[n + 1] += 1
        return
    _capture(st, prm[3][code], _first_stack(st, prm[4], prm[5], code), prm[0], prm[1], prm[2])
    st[n + 1] = 0


@njit(cache=True, nogil=True)
def tree_mover(st, prm):
    return st[len(st) - 2]


@njit(cache=True, nogil=True)
def tree_ended(st, prm):
    """Two passes in a row end the game."""
    return st[len(st) - 1] >= 2


@njit(cache=True, nogil=True)
def _scores(st, prm):
    """Greens in the stacks each side controls, and each side's tallest stack."""
    colour, heights, greens = prm[0], prm[1], prm[2]
    score = np.zeros(2, np.int64)
    tall = np.zeros(2, np.int64)
    for i in range(len(st) - 2):
        c = st[i]
        if c >= 2:
            col = colour[c]
            score[col] += greens[c]
            tall[col] = max(tall[col], heights[c])
    return score, tall


@njit(cache=True, nogil=True)
def tree_final(st, prm):
    """Player 0's (Black's) result at the end (:meth:`Greener.outcome`)."""
    score, tall = _scores(st, prm)
    b = score[0]
    w = score[1]
    if b == w and prm[6]:
        b = tall[0]
        w = tall[1]
    return 1.0 if b > w else -1.0 if b < w else 0.0


@njit(cache=True, nogil=True)
def tree_rollout(st, prm, max_moves, taken, counts):
    """Random play (:func:`random_play`), then Black's result, or at the cap the evaluation
    (:func:`solver.players.evals.greener_eval`: the score so far over the greens in play)."""
    n = len(st) - 2
    player, passes, _ = random_play(st[:n], st[n], st[n + 1], max_moves, prm[0], prm[1], prm[2], prm[3], prm[4],
                                    prm[5], taken, counts)
    st[n] = player
    st[n + 1] = passes
    if passes >= 2:
        return tree_final(st, prm)
    score, _ = _scores(st, prm)
    v = (score[0] - score[1]) / max(1, prm[7])
    return -1.0 if v < -1.0 else 1.0 if v > 1.0 else v


#: the parts MCTS's compiled tree takes (:class:`solver.core.uct_jit.CompiledRules`)
TREE_PARTS = (tree_moves, tree_play, tree_mover, tree_ended, tree_final, tree_rollout)
