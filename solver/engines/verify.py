"""Check a solved graph against the definition of its values, position by position (vectorised).

For every position, from its side to move, with each child's value seen by the mover
(``eff``: kept across a same-player move, flipped otherwise):

* terminal: the value is the outcome (win/lose/tie) and the remoteness 0;
* **win** iff some child is a win for the mover; remoteness = 1 + the smallest such child's;
* **lose** iff every child is a loss for the mover; remoteness = 1 + the largest child's;
* **tie** iff no child wins, some child is a tie; remoteness = 1 + the smallest tie child's;
* **draw** otherwise (no child wins, not every child loses, no child ties).

Because remoteness strictly falls along the chosen children, a labelling that passes these
checks is the unique solution (a mislabelled position would need a mislabelled child of
smaller remoteness, down to a terminal), so this is a proof of the whole table, not a sample.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from solver.core.game import NodeKind, Result
from solver.core.values import DRAW, FLIP, LOSE, NO_REMOTENESS, TIE, WIN
from solver.engines.graph import Graph


def _scope(n: int, checked: int | None, rows: np.ndarray | None) -> np.ndarray:
    """The rows to check: below ``checked`` (all by default) and where ``rows`` is true."""
    scope = np.zeros(n, dtype=bool)
    scope[: n if checked is None else checked] = True
    return scope if rows is None else scope & np.asarray(rows, dtype=bool)


def check_values(graph: Graph, value: np.ndarray, remoteness: np.ndarray, checked: int | None = None,
                 rows: np.ndarray | None = None) -> list[str]:
    """Every violated rule, as readable messages (empty when the table is consistent). With
    ``checked``, only rows below it are checked (the others are solved children given as rows,
    e.g. positions of other tiers); with ``rows`` (``bool[n]``) only those."""
    problems: list[str] = []
    n = graph.n
    scope = _scope(n, checked, rows)
    src = graph.parent_of_edge()
    kids = graph.child
    same = graph.to_move[kids] == graph.to_move[src]
    cv = value[kids].astype(np.int8)
    eff = np.where(same, cv, FLIP[cv])
    crem = remoteness[kids].astype(np.int64)
    big = np.int64(1 << 40)

    def any_by(mask: np.ndarray) -> np.ndarray:
        return np.bincount(src[mask], minlength=n) > 0

    def min_by(mask: np.ndarray) -> np.ndarray:
        out = np.full(n, big)
        np.minimum.at(out, src[mask], crem[mask])
        return out

    def max_by(mask: np.ndarray) -> np.ndarray:
        out = np.full(n, -1, dtype=np.int64)
        np.maximum.at(out, src[mask], crem[mask])
        return out

    degree = np.diff(graph.offsets)
    has_win = any_by(eff == WIN)
    all_lose = np.bincount(src[eff == LOSE], minlength=n) == degree
    has_tie = any_by(eff == TIE)
    rem = remoteness.astype(np.int64)
    terminal = graph.kind == NodeKind.TERMINAL
    inner = ~terminal

    want = np.full(n, DRAW, dtype=np.int8)
    want[inner & ~has_win & has_tie] = TIE
    want[inner & all_lose & (degree > 0)] = LOSE
    want[inner & has_win] = WIN
    res = graph.result
    want[terminal] = np.where(res[terminal] == Result.WIN, WIN,
                              np.where(res[terminal] == Result.LOSS, LOSE, TIE))
    bad = np.flatnonzero((want != value) & scope)
    if len(bad):
        problems.append(f"{len(bad)} positions have the wrong value (first row {bad[0]}: "
                        f"stored {value[bad[0]]}, children say {want[bad[0]]})")

    want_rem = np.full(n, int(NO_REMOTENESS), dtype=np.int64)
    want_rem[terminal] = 0
    wmin = min_by(eff == WIN) + 1
    lmax = max_by(eff == LOSE) + 1
    tmin = min_by(eff == TIE) + 1
    sel = inner & (want == WIN)
    want_rem[sel] = wmin[sel]
    sel = inner & (want == LOSE)
    want_rem[sel] = lmax[sel]
    sel = inner & (want == TIE)
    want_rem[sel] = tmin[sel]
    bad = np.flatnonzero((want_rem != rem) & (want == value) & scope)
    if len(bad):
        problems.append(f"{len(bad)} positions have the wrong remoteness (first row {bad[0]}: "
                        f"stored {rem[bad[0]]}, children say {want_rem[bad[0]]})")
    return problems


def check_margins(graph: Graph, margin: np.ndarray, checked: int | None = None,
                  rows: np.ndarray | None = None) -> list[str]:
    """Bellman check of optimal margins: a terminal's margin is its outcome's; an inner
    position's margin is the best over its children (kept across a same-player move, negated
    otherwise); ``checked`` and ``rows`` as :func:`check_values`. On acyclic graphs this determines the margins; with cycles it is necessary
    (endless play, worth 0, is a cycle through children that are worth 0 too)."""
    n = graph.n
    src = graph.parent_of_edge()
    kids = graph.child
    same = graph.to_move[kids] == graph.to_move[src]
    cm = np.where(same, margin[kids].astype(np.int64), -margin[kids].astype(np.int64))
    best = np.full(n, np.iinfo(np.int64).min)
    np.maximum.at(best, src, cm)
    terminal = graph.kind == NodeKind.TERMINAL
    scope = _scope(n, checked, rows)
    problems = []
    bad = np.flatnonzero(terminal & (margin.astype(np.int64) != graph.margin) & scope)
    if len(bad):
        problems.append(f"{len(bad)} terminal positions have the wrong margin")
    bad = np.flatnonzero(~terminal & (best != margin.astype(np.int64)) & scope)
    if len(bad):
        problems.append(f"{len(bad)} positions' margins are not their best move's (first row {bad[0]})")
    return problems


#: the largest error a stored expected result (or win/loss probability) may have in the check
EXPECTED_TOL = 1e-9


def check_expected(graph: Graph, rows: Any, n: int, scale: float = 1.0) -> list[str]:
    """The first ``n`` rows of a chance game's graph (a tier, or the whole graph; ``rows``: a
    frame with ``value``, ``p_win``, ``p_loss`` per row), against their children: terminal values
    are the game's results; a decision position is worth its best move, a chance node the
    probability-weighted mean of its outcomes (each from the mover's side); and every value is
    its win probability minus its loss probability, both in [0, 1]. A graph with real payoffs
    (``graph.payoff``) has them at its ends and no win probabilities; ``scale`` (its largest
    payoff) scales the tolerance. (A Bellman equation alone
    admits spurious fixed points on loops of waiting moves; the solver's certificate rules those
    out when it solves, so this check proves the stored table is self-consistent, not optimal
    inside loops.)"""
    value = rows["value"].to_numpy().astype(np.float64)
    p_win = rows["p_win"].to_numpy().astype(np.float64)
    p_loss = rows["p_loss"].to_numpy().astype(np.float64)
    kind = graph.kind[:n]
    problems: list[str] = []
    deg = np.diff(graph.offsets[: n + 1])
    parent = np.repeat(np.arange(n), deg)
    e = np.arange(int(graph.offsets[n]))
    ch = graph.child[e]
    sign = np.where(graph.to_move[ch] == graph.to_move[parent], 1.0, -1.0)
    q = sign * value[ch]
    prob = np.ones(len(e)) if graph.probs is None else np.asarray(graph.probs, np.float64)[e]
    best = np.full(n, -np.inf)
    with np.errstate(invalid="ignore"):  # (a missing stored value: NaN, reported below)
        np.maximum.at(best, parent, q)
    mean = np.bincount(parent, weights=prob * q, minlength=n)
    want = np.where(kind == NodeKind.DECISION, best, mean)
    term = kind == NodeKind.TERMINAL
    ends = graph.result if graph.payoff is None else graph.payoff
    want[term] = np.asarray(ends[:n], dtype=np.float64)[term]
    bad = np.flatnonzero(~(np.abs(want - value[:n]) <= EXPECTED_TOL * scale))  # (NaN included)
    if len(bad):
        i = int(bad[0])
        problems.append(f"{len(bad):,} positions break their equation, e.g. key {int(graph.keys[i])}: stored "
                        f"{value[i]:+.12f}, its moves give {want[i]:+.12f}")
    if graph.payoff is not None:
        return problems
    gap = np.abs(p_win[:n] - p_loss[:n] - value[:n])
    ok = ((p_win[:n] >= -EXPECTED_TOL) & (p_loss[:n] >= -EXPECTED_TOL) & (p_win[:n] + p_loss[:n] <= 1 + EXPECTED_TOL)
          & (gap <= EXPECTED_TOL))  # (false where one is NaN: missing)
    if not ok.all():
        problems.append(f"{int((~ok).sum()):,} positions have win/loss probabilities "
                        "that are missing, not probabilities or do not make their value")
    return problems
