"""The retrograde kernel (:func:`solver.engines._retro_jit.tier_values`) against the definition.

One kernel solves whole graphs and tiers (a tier is a graph whose moves may also reach positions
already solved: its outside boundary). Here it is checked on random graphs with random outside
children against a readable level-by-level reading of the rules of retrograde analysis:

- a position is won at level ``r`` when it was not decided before and a child (inside, or
  outside with its remoteness) is lost for its mover at ``r - 1``;
- it is lost at ``r`` when every child is won for the opponent and the slowest is at ``r - 1``;
- after that, a tie at ``r``: a terminal tie (``r = 0``) or a tie child at ``r - 1``;
- whatever is left is a draw (endless play).
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from solver.core.values import DRAW, LOSE, NO_REMOTENESS, TIE, WIN
from solver.engines import _retro_jit
from tests.budget import examples


def reference(n, moves, outside, terminal):
    """``moves[i]``: (child row, same mover); ``outside[i]``: (value for the child's mover,
    remoteness, same mover); ``terminal[i]``: None or the mover's result (LOSE, TIE, WIN)."""
    value = [None] * n
    rem = [None] * n

    def for_mover(v, same):
        return v if same else {WIN: LOSE, LOSE: WIN}.get(v, v)

    horizon = n + 40
    for r in range(horizon):  # win / lose, level by level
        found = {}
        for i in range(n):
            if value[i] is not None:
                continue
            if terminal[i] is not None:
                if r == 0 and terminal[i] != TIE:
                    found[i] = terminal[i]
                continue
            kids = [(for_mover(value[c], s), rem[c]) for c, s in moves[i] if value[c] is not None]
            kids += [(for_mover(v, s), rr) for v, rr, s in outside[i]]
            won = [rr for v, rr in kids if v == WIN]  # children won for this row's mover
            if won and min(won) == r - 1:
                found[i] = WIN
                continue
            total = len(moves[i]) + len(outside[i])
            lost = [rr for v, rr in kids if v == LOSE]
            if total and len(lost) == total and max(lost) == r - 1:
                found[i] = LOSE
        for i, v in found.items():
            value[i], rem[i] = v, r
    for r in range(horizon):  # ties
        found = []
        for i in range(n):
            if value[i] is not None:
                continue
            if terminal[i] is not None:
                if r == 0:
                    found.append(i)
                continue
            ties = [rem[c] for c, s in moves[i] if value[c] == TIE]
            ties += [rr for v, rr, s in outside[i] if v == TIE]
            if ties and min(ties) == r - 1:
                found.append(i)
        for i in found:
            value[i], rem[i] = TIE, r
    return ([DRAW if v is None else v for v in value],
            [NO_REMOTENESS if v is None else rr for v, rr in zip(value, rem)])


@st.composite
def tiers(draw):
    """A random graph with cycles and random moves to solved positions outside it."""
    n = draw(st.integers(1, 14))
    moves, outside, terminal = [], [], []
    for _ in range(n):
        if draw(st.booleans()) and draw(st.booleans()):
            terminal.append(draw(st.sampled_from([LOSE, TIE, WIN])))
            moves.append([])
            outside.append([])
            continue
        inside = draw(st.lists(st.tuples(st.integers(0, n - 1), st.booleans()), max_size=3))
        out = draw(st.lists(st.tuples(st.sampled_from([WIN, LOSE, TIE, DRAW]), st.integers(0, 9),
                                      st.booleans()), max_size=2))
        if not inside and not out:
            terminal.append(draw(st.sampled_from([LOSE, TIE, WIN])))
        else:
            terminal.append(None)
        moves.append(inside)
        outside.append(out)
    return n, moves, outside, terminal


def kernel(n, moves, outside, terminal, whole: bool):
    """The kernel's answer: outside children folded by :func:`_retro_jit.fold_external`, the
    reverse lists built by hand (or by :func:`_retro_jit.signed_reverse` for a whole graph)."""
    outdeg = np.array([len(m) + len(o) for m, o in zip(moves, outside)], dtype=np.int32)
    if whole:
        offsets = np.concatenate([[0], np.cumsum([len(m) for m in moves])]).astype(np.int64)
        child = np.array([c for m in moves for c, _ in m], dtype=np.int64)
        to_move = np.zeros(n, dtype=np.int8)
        rparent = np.empty(len(child), dtype=np.int32)
        roff = _retro_jit.signed_reverse(offsets, child, to_move, rparent)
    else:
        parents = [[] for _ in range(n)]
        for i, m in enumerate(moves):
            for c, same in m:
                parents[c].append(i if same else ~i)
        roff = np.concatenate([[0], np.cumsum([len(p) for p in parents])]).astype(np.int64)
        rparent = np.array([p for ps in parents for p in ps], dtype=np.int32)
    ewm, elc, elm, etm = _retro_jit.no_outside(n, NO_REMOTENESS)
    src = np.array([i for i, o in enumerate(outside) for _ in o], dtype=np.int64)
    val = np.array([v for o in outside for v, _, _ in o], dtype=np.int8)
    rem = np.array([r for o in outside for _, r, _ in o], dtype=np.uint16)
    same = np.array([s for o in outside for _, _, s in o], dtype=np.bool_)
    _retro_jit.fold_external(src, val, rem, same, ewm, elc, elm, etm)
    tres = np.array([-1 if t is None else {LOSE: 0, TIE: 1, WIN: 2}[t] for t in terminal], dtype=np.int8)
    value, remoteness = _retro_jit.tier_values(outdeg, roff, rparent, ewm, elc, elm, etm, tres,
                                               NO_REMOTENESS)
    return value.tolist(), remoteness.tolist()


@settings(max_examples=examples(400), deadline=None)
@given(tiers())
def test_tier_values_equal_the_definition(case):
    n, moves, outside, terminal = case
    assert kernel(n, moves, outside, terminal, whole=False) == reference(n, moves, outside, terminal)


@settings(max_examples=examples(200), deadline=None)
@given(tiers())
def test_whole_graph_values_equal_the_definition(case):
    """No move leaves the graph; one player moves everywhere (every move keeps the mover), and
    the reverse lists come from :func:`_retro_jit.signed_reverse`."""
    n, moves, outside, terminal = case
    moves = [[(c, True) for c, _ in m] for m in moves]
    outside = [[] for _ in range(n)]
    terminal = [t if t is not None or m else TIE for t, m in zip(terminal, moves)]
    assert kernel(n, moves, outside, terminal, whole=True) == reference(n, moves, outside, terminal)


def test_signed_reverse_marks_a_change_of_mover():
    """0 -> 1 (mover changes), 0 -> 2 (same mover), 1 -> 2 (changes): parents ~0, then 0 and ~1."""
    offsets = np.array([0, 2, 3, 3], dtype=np.int64)
    child = np.array([1, 2, 2], dtype=np.int64)
    to_move = np.array([0, 1, 0], dtype=np.int8)
    rparent = np.empty(3, dtype=np.int32)
    roff = _retro_jit.signed_reverse(offsets, child, to_move, rparent)
    assert roff.tolist() == [0, 0, 1, 3]
    assert rparent.tolist() == [~0, 0, ~1]
