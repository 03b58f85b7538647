"""Proven bounds on the values of games with secret simultaneous choices.

Shapley's value iteration (:mod:`~solver.engines.simultaneous`) can converge like ``1/n`` on
recursive games (Everett's games, where a joint choice leads straight back to the same round):
a small change per sweep then says little about the distance to the value, and the iterate is
the value of a game cut off after ``n`` moves, a bound in neither direction. This module turns
strategies into a **proof**: an interval ``[lo, hi]`` around the value of every position.

Strategy evaluation
-------------------
Fix player 0's whole stationary strategy: a mix ``x`` at every simultaneous node and one move at
each of his decision nodes. What is left is a Markov decision problem for player 1
(:class:`Reply`): each simultaneous node becomes his choice of a column, followed by a chance
node that draws player 0's row with probabilities ``x``. Its optimal value (player 1 minimising,
endless play 0 as in the game) is what ``x`` guarantees, so it is a **lower bound** on the value
of every position: player 0 only gave up options. The same with player 1's strategy fixed gives
an **upper bound**. The decision problem is solved exactly by :func:`optimal_reply`: first
the replier's maximal end components (sets of positions he can keep play in for ever, worth 0)
are collapsed into single choices between their exits and staying (:func:`quotient`, as in de
Alfaro's treatment of end components), so that every policy ends; then policy iteration with
exact evaluations (:func:`best_reply`: sparse direct solves of the linear system of a policy).
The result is checked by brute force over every policy of small problems in the tests (policy
iteration without the collapse, checking only end components of as-good moves, under-estimated
one of 3,000 random problems, and with it a bound on Petal Battle crossed the other).

Closing the interval
--------------------
The first strategies are the ones value iteration ends with. Where the interval is still wider
than ``tol``, better strategies are tried: the optimal mixes (and best moves) of the matrix
games at a guess ``u = lo + theta * (hi - lo)`` for player 0 and ``hi - theta * (hi - lo)`` for
player 1, each kept when it proves no less anywhere and more somewhere, ``theta`` made smaller
after a round that proves nothing new.

Exact arithmetic for small games
--------------------------------
Where the best-reply problems have at most :data:`EXACT_ROWS` rows and the chance
probabilities are simple fractions (:func:`exact_chance_probabilities`), every evaluation is
done in rational arithmetic (:func:`exact_optimal_reply`: the same collapse, then policy
iteration in fractions) and each bound is rounded outward to float64 once: no rounding margin,
and mixes keep probabilities down to :data:`EXACT_FLOOR`. Everett's "quit or continue" game
(value 1, reachable only by quitting with a probability that tends to 0) is then certified to
``1e-9``: the guess strategies quit with a chance below ``1e-9``, and the exact reply sees what
that earns.

Limits (said, never rounded away)
---------------------------------
* Floating point (larger games): policy iteration in float64 can stop short of the best reply
  (a switch whose gain is below rounding can lead to a much better policy on a near-loop), so
  each float64 evaluation is proven afterwards (:func:`certify_upper`: the Bellman excesses of
  its values, rounding included, summed over the most steps a policy can take before the end);
  a long near-loop widens the bound instead of hiding an improvement. A best reply that waits on
  a chance ``q`` gains about ``q**2`` a step over not waiting; float64 sees that only while it
  is well above rounding, so mixes are never evaluated with a positive probability below
  :data:`PROB_FLOOR`. A game that needs more patience than that (Everett's, were it large)
  gets an interval about ``PROB_FLOOR`` wide, not certified at ``1e-9``.
* ``certified`` means every interval is at most ``tol`` wide and both bounds came from exact
  evaluations that did not cross; otherwise the interval is still what is proven.

Each bound comes from one stationary strategy of one player, stored with it (``lower`` and
``upper``): anyone can re-check a bound by solving the decision problem again.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable

import numpy as np
from numba import njit
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from solver.core.arrays import ranges
from solver.core.game import NodeKind
from solver.engines.graph import Graph
from solver.engines.stochastic import edge_max, first_best, linear_solve, reaching

_DECISION = int(NodeKind.DECISION)
_CHANCE = int(NodeKind.CHANCE)
_SIMULTANEOUS = int(NodeKind.SIMULTANEOUS)

#: a certified interval is at most this wide unless a wider ``tol`` is asked (the precision of
#: the matrix games' solutions; the issue's target)
BOUND_TOL = 1e-9
#: rounds of better strategies tried after the first evaluation
MAX_ROUNDS = 30
#: the smallest positive probability of a mix that is evaluated. A best reply that waits on a
#: chance ``q`` gains about ``q**2`` a step over not waiting, which float64 sees only while it
#: is well above rounding (:data:`NOISE`); so strategies that would need smaller chances
#: (Everett's games need patience) are not tried, and such an interval stays about this wide
#: and is not certified
PROB_FLOOR = 1e-6
#: changes of values below this (times the largest value) are rounding, not improvements
NOISE = 1e-14
#: the replier switches to a move only when it is better by more than this (relative to the
#: value's size): smaller differences are rounding
SWITCH_EPS = 1e-12
#: games whose best-reply problems have at most this many rows (positions plus one row per
#: action of the replier at each secret choice) are evaluated in exact rational arithmetic:
#: no rounding, so no :data:`PROB_FLOOR` and no margin but the last rounding to float64
EXACT_ROWS = 200
#: the smallest probability a mix keeps in exact arithmetic (below it: the LP's noise)
EXACT_FLOOR = 1e-15
#: chance probabilities are read back as the fractions of at most this denominator within two
#: units in the last place of the stored float64 (1 - 0.2 is stored as 0.8 or a neighbour), and
#: only if each chance node's then sum to 1 exactly
EXACT_DENOMINATOR = 10**6
_ONE = Fraction(1)

Mixes = dict[int, tuple[np.ndarray, np.ndarray]]


@dataclass
class Bounds:
    """A proven interval per position, from the side to move (as ``value``).

    ``lo[i] <= value of the game at i <= hi[i]``; ``lower``/``upper`` map each simultaneous
    node to the mix (player 0's for the lower bound in player 0's view, player 1's for the
    upper) that proves it; ``lower_moves``/``upper_moves`` (``int64[n]``, global edge indices,
    as value iteration's ``best``) the moves of those strategies at player 0's / player 1's
    decision nodes. ``certified``: every interval at most ``tol`` wide.
    """

    lo: np.ndarray
    hi: np.ndarray
    certified: bool
    tol: float
    lower: dict[int, np.ndarray] = field(default_factory=dict)
    upper: dict[int, np.ndarray] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)
    lower_moves: np.ndarray | None = None
    upper_moves: np.ndarray | None = None

    @property
    def width(self) -> float:
        return float(np.max(self.hi - self.lo)) if len(self.lo) else 0.0


def _clean(mix: np.ndarray, floor: float = PROB_FLOOR) -> np.ndarray:
    """A probability vector from an LP's answer: tiny negatives and rounding removed, and every
    probability below ``floor`` (:data:`PROB_FLOOR`) dropped (the rest scaled up to sum 1).

    Dropping, not raising to the floor: value iteration's mixes carry probabilities of 1e-9 to
    1e-6 (LP noise, and the perturbation that makes a side leave a loop) on actions that can
    lose at once; raised to the floor, a patient replier waits in a loop for such an action and
    wins (Petal Battle 4 with a run of 3: the lower bound fell to -1 where the value is +0.30).
    Either way the strategy evaluated is the one stored, so the bound is sound."""
    p = np.clip(np.asarray(mix, dtype=np.float64), 0.0, None)
    s = p.sum()
    if not s > 0:
        raise ValueError("a mixed strategy with no positive probability")
    p /= s
    p[p < floor] = 0.0
    p /= p.sum()
    top = int(np.argmax(p))
    p[top] = 0.0
    p[top] = 1.0 - p.sum()
    return p


@dataclass
class Reply:
    """The Markov decision problem of the player who best-replies to a fixed strategy.

    Rows ``0 .. n-1`` are the graph's positions, then one chance node per action of the replier
    at each simultaneous node. ``free`` rows are the replier's choices (one edge is picked);
    every other non-terminal row is an expectation over its edges (chance nodes, the fixed
    player's mixes and his chosen moves, probability 1). ``payoff`` is the replier's payoff at
    terminal rows (endless play pays 0).
    """

    n: int
    offsets: np.ndarray
    child: np.ndarray
    prob: np.ndarray
    free: np.ndarray
    terminal: np.ndarray
    payoff: np.ndarray
    #: the edges' probabilities as exact fractions (``None``: float64 only)
    exact: list[Fraction] | None = None

    @property
    def size(self) -> int:
        return len(self.free)

    def parent(self) -> np.ndarray:
        return np.repeat(np.arange(self.size, dtype=np.int64), np.diff(self.offsets))


def build_reply(graph: Graph, fixed: int, mixes: dict[int, np.ndarray], choice: np.ndarray,
                payoff0: np.ndarray, *, exact_chance: dict[int, Fraction] | None = None,
                floor: float = PROB_FLOOR) -> Reply:
    """The replier's problem when player ``fixed`` plays ``mixes`` at the simultaneous nodes and
    the move ``choice[i]`` (an edge index) at each of his decision nodes ``i``.

    ``payoff0``: player 0's payoff at terminal rows (``float64[n]``). ``exact_chance`` (the
    chance edges' probabilities as fractions, :func:`exact_chance_probabilities`): also give
    every edge its exact probability (a mix's float64 probabilities scaled to sum 1 exactly).
    ``floor``: mixes drop probabilities below it (:func:`_clean`).
    """
    n = graph.n
    # (the graph's own int8 kinds and sides and its int32 children: only compared and indexed)
    kind = np.asarray(graph.kind, dtype=np.int8)
    to_move = np.asarray(graph.to_move, dtype=np.int8)
    offsets = np.asarray(graph.offsets, dtype=np.int64)
    child = np.asarray(graph.child)
    deg = np.diff(offsets)
    choice = np.asarray(choice, dtype=np.int64)
    replier = 1 - fixed
    sign = 1.0 if replier == 0 else -1.0  # the replier's view of player 0's payoff
    terminal = kind == int(NodeKind.TERMINAL)
    own = (kind == _DECISION) & (to_move == fixed)
    if np.any(own & ((choice < offsets[:-1]) | (choice >= offsets[1:]))):
        raise ValueError(f"a decision node of player {fixed} with no move of its own chosen")
    sim = np.flatnonzero(kind == _SIMULTANEOUS)
    rows = np.asarray(graph.sim_rows, dtype=np.int64) if len(sim) else np.zeros(n, dtype=np.int64)
    new_deg = np.where(own, 1, deg)
    extra_kids: list[np.ndarray] = []
    extra_probs: list[np.ndarray] = []
    for s in sim.tolist():
        r = int(rows[s])
        c = int(deg[s]) // r
        grid = child[offsets[s] : offsets[s + 1]].reshape(r, c)
        mix = mixes.get(s)
        if mix is None:
            raise ValueError(f"no mixed strategy of player {fixed} at simultaneous row {s}")
        p = _clean(mix, floor)
        if len(p) != (r if fixed == 0 else c):
            raise ValueError(f"row {s}: a mix of {len(p)} actions for a {r} x {c} matrix game")
        support = np.flatnonzero(p > 0)
        lines = grid.T if fixed == 0 else grid  # one line per action of the replier
        for line in lines:
            extra_kids.append(line[support])
            extra_probs.append(p[support])
        new_deg[s] = len(lines)
    m = len(extra_kids)
    size = n + m
    out_deg = np.concatenate([new_deg, np.array([len(x) for x in extra_kids], dtype=np.int64)])
    out_off = np.zeros(size + 1, dtype=np.int64)
    np.cumsum(out_deg, out=out_off[1:])
    out_child = np.empty(int(out_off[-1]), dtype=np.int64)
    out_prob = np.ones(int(out_off[-1]), dtype=np.float64)
    copy = ~own & (kind != _SIMULTANEOUS)
    src = np.repeat(copy, deg)
    dst = np.repeat(copy, new_deg)
    head_child = out_child[: out_off[n]]
    head_prob = out_prob[: out_off[n]]
    head_child[dst] = child[src]
    if graph.probs is not None:  # (else every copied move has probability 1, as out_prob holds)
        probs = np.asarray(graph.probs, dtype=np.float64)
        head_prob[dst] = np.where(kind[np.repeat(np.arange(n), deg)] == _CHANCE, probs, 1.0)[src]
    head_child[out_off[:n][own]] = child[choice[own]]
    next_row = n
    for s in sim.tolist():
        k = int(new_deg[s])
        head_child[out_off[s] : out_off[s] + k] = np.arange(next_row, next_row + k)
        next_row += k
    for k, (kids, pr) in enumerate(zip(extra_kids, extra_probs)):
        a = out_off[n + k]
        out_child[a : a + len(kids)] = kids
        out_prob[a : a + len(kids)] = pr
    free = np.zeros(size, dtype=bool)
    free[:n] = ((kind == _DECISION) & (to_move == replier)) | (kind == _SIMULTANEOUS)
    term = np.zeros(size, dtype=bool)
    term[:n] = terminal
    payoff = np.zeros(size)
    payoff[:n] = np.where(terminal, sign * np.asarray(payoff0, dtype=np.float64), 0.0)
    exact = None
    if exact_chance is not None:
        exact = [_ONE] * len(out_child)
        for o, g in zip(np.flatnonzero(dst).tolist(), np.flatnonzero(src).tolist()):
            f = exact_chance.get(g)
            if f is not None:
                exact[o] = f
        for k, pr in enumerate(extra_probs):
            a = int(out_off[n + k])
            fr = [Fraction(float(x)) for x in pr]
            total = sum(fr)
            exact[a : a + len(fr)] = [f / total for f in fr]
    return Reply(n=n, offsets=out_off, child=out_child, prob=out_prob, free=free, terminal=term,
                 payoff=payoff, exact=exact)


def exact_chance_probabilities(graph: Graph) -> dict[int, Fraction] | None:
    """The chance edges' probabilities as fractions (edge -> Fraction): each stored float64
    read back as the nearest fraction of denominator at most :data:`EXACT_DENOMINATOR`, which
    must lie within two units in the last place of it (a die's 1/6). ``None`` when one does not,
    or a chance node's fractions do not sum to 1 exactly (the game's probabilities are not such
    fractions: no exact evaluation then)."""
    kind = np.asarray(graph.kind)
    chance = np.flatnonzero(kind == _CHANCE)
    if not len(chance):
        return {}
    offsets = np.asarray(graph.offsets, dtype=np.int64)
    probs = np.asarray(graph.probs, dtype=np.float64)
    out: dict[int, Fraction] = {}
    for s in chance.tolist():
        a, b = int(offsets[s]), int(offsets[s + 1])
        fr = [Fraction(float(p)).limit_denominator(EXACT_DENOMINATOR) for p in probs[a:b]]
        if sum(fr) != 1 or any(abs(float(f) - float(p)) > 4e-16 for f, p in zip(fr, probs[a:b])):
            return None
        out.update(zip(range(a, b), fr))
    return out


def _evaluate(reply: Reply, pick: np.ndarray) -> np.ndarray | None:
    """The replier's value of every row under the choices ``pick`` (an edge per free row),
    exactly: a sparse direct solve; rows that never reach a terminal get 0 (endless play).
    The system's entries come from one compiled pass (:func:`_policy_system`), with no array
    per move of the problem (:func:`_evaluate_readable` built six)."""
    size = reply.size
    src, dst, p, b, ends, moves = _policy_system(np.asarray(reply.offsets, dtype=np.int64), reply.child,
                                                 np.asarray(reply.prob, dtype=np.float64), reply.free,
                                                 reply.terminal, np.asarray(reply.payoff, dtype=np.float64),
                                                 np.asarray(pick, dtype=np.int64))
    keep = reaching(size, src, dst, np.flatnonzero(ends))
    del ends
    x = linear_solve(size, [src, dst, p, b], keep, moves <= 1)
    if x is None:
        return None
    x[reply.terminal] = reply.payoff[reply.terminal]
    return x


@njit(cache=True, nogil=True)
def _policy_system(offsets, child, prob, free, terminal, payoff, pick):  # pragma: no cover - compiled
    """Under ``pick``, the moves to rows that are not terminal (``src``, ``dst``, ``p``), what
    the moves to terminal rows pay (``b``, summed in move order), which rows have such a move
    (``ends``) and how many moves each row plays (``moves``)."""
    size = len(free)
    count = 0
    for r in range(size):
        lo, hi = offsets[r], offsets[r + 1]
        if free[r]:
            lo, hi = pick[r], pick[r] + 1
            if pick[r] < 0:
                continue
        for e in range(lo, hi):
            if not terminal[child[e]]:
                count += 1
    src = np.empty(count, np.int64)
    dst = np.empty(count, np.int64)
    p = np.empty(count)
    b = np.zeros(size)
    ends = np.zeros(size, np.bool_)
    moves = np.zeros(size, np.int64)
    k = 0
    for r in range(size):
        lo, hi = offsets[r], offsets[r + 1]
        if free[r]:
            lo, hi = pick[r], pick[r] + 1
            if pick[r] < 0:
                continue
        for e in range(lo, hi):
            c = child[e]
            moves[r] += 1
            if terminal[c]:
                b[r] += prob[e] * payoff[c]
                ends[r] = True
            else:
                src[k] = r
                dst[k] = c
                p[k] = prob[e]
                k += 1
    return src, dst, p, b, ends, moves


def _evaluate_readable(reply: Reply, pick: np.ndarray, parent: np.ndarray) -> np.ndarray | None:
    """:func:`_evaluate` with numpy's per-edge arrays: the readable reference the test proves
    the compiled system equal to."""
    size = reply.size
    used = ~reply.free[parent]
    used[pick[reply.free]] = True
    e = np.flatnonzero(used)
    del used
    src, dst, p = parent[e], reply.child[e], reply.prob[e]
    end = reply.terminal[dst]
    b = np.bincount(src[end], weights=p[end] * reply.payoff[dst[end]], minlength=size)
    keep = reaching(size, src[~end], dst[~end], src[end])
    passthrough = np.bincount(src, minlength=size) <= 1
    x = linear_solve(size, [src[~end], dst[~end], p[~end], b], keep, passthrough)
    if x is None:
        return None
    x[reply.terminal] = reply.payoff[reply.terminal]
    return x


def _gains(reply: Reply, v: np.ndarray, parent: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per edge ``s -> t`` of a free row: what moving to ``t`` gains over ``v[s]``, and the size
    of the terms it sums (0 on other edges). The readable reference of :func:`switches` (which
    the solver runs), kept for the test that proves the two equal.

    Computed as differences, ``sum_e p_e (v[c_e] - v[s])`` when ``t`` is an expectation row: a
    gain of ``q**2`` from waiting on a chance ``q`` (Everett's games) is seen even where
    ``v[s] + q**2`` rounds to ``v[s]``.
    """
    gain = np.zeros(len(reply.child))
    mag = np.zeros(len(reply.child))
    fe = np.flatnonzero(reply.free[parent])
    s, t = parent[fe], reply.child[fe]
    direct = reply.free[t] | reply.terminal[t]
    d = v[t[direct]] - v[s[direct]]
    gain[fe[direct]] = d
    mag[fe[direct]] = np.abs(d)
    ex = fe[~direct]
    if len(ex):
        ts, ss = reply.child[ex], parent[ex]
        deg = np.diff(reply.offsets)
        sub = ranges(reply.offsets[ts], deg[ts])
        group = np.repeat(np.arange(len(ex)), deg[ts])
        diff = reply.prob[sub] * (v[reply.child[sub]] - v[ss[group]])
        gain[ex] = np.bincount(group, weights=diff, minlength=len(ex))
        mag[ex] = np.bincount(group, weights=np.abs(diff), minlength=len(ex))
    return gain, mag


def switches(reply: Reply, v: np.ndarray, eps: float = SWITCH_EPS) -> tuple[np.ndarray, np.ndarray]:
    """Policy improvement's switches: ``(rows, edges)``, at each free row the first edge of
    largest gain among those whose gain is more than ``eps`` times its terms' size (as
    :func:`_gains` computes them), for the rows that have one. A compiled pass over the free
    rows: no per-edge arrays (:func:`_gains` and the selection from it took about 600 bytes a
    position at the bounds' peak on Petal Battle 6); ``tests/test_bounds.py`` checks it equal."""
    return _switch_edges(np.asarray(reply.offsets, dtype=np.int64), reply.child,
                         np.asarray(reply.prob, dtype=np.float64), reply.free, reply.terminal,
                         np.asarray(v, dtype=np.float64), float(eps))


@njit(cache=True, nogil=True)
def _switch_edges(offsets, child, prob, free, terminal, v, eps):  # pragma: no cover - compiled
    rows = np.empty(len(free), np.int64)
    edges = np.empty(len(free), np.int64)
    count = 0
    for r in range(len(free)):
        if not free[r]:
            continue
        top = -np.inf
        pick = -1
        for e in range(offsets[r], offsets[r + 1]):
            t = child[e]
            if free[t] or terminal[t]:
                gain = v[t] - v[r]
                mag = abs(gain)
            else:  # an expectation row: the sum of differences (see _gains)
                gain = 0.0
                mag = 0.0
                for f in range(offsets[t], offsets[t + 1]):
                    x = prob[f] * (v[child[f]] - v[r])
                    gain += x
                    mag += abs(x)
            if gain > eps * mag and gain > top:
                top = gain
                pick = e
        if pick >= 0:
            rows[count] = r
            edges[count] = pick
            count += 1
    return rows[:count], edges[:count]


def end_components(reply: Reply) -> np.ndarray:
    """The maximal end components of the replier's problem: ``int64[size]``, a component number
    per row (-1 outside every one).

    An end component is a set of rows where the replier can keep play for ever: each of its
    expectation rows has all its edges inside, each of its free rows at least one, and it is
    strongly connected by those edges. Found as usual: strongly connected components of the
    edges left, then rows that cannot stay are removed (an expectation row with an edge out of
    its component, a free row with none inside), until nothing changes.
    """
    size = reply.size
    parent = reply.parent()
    child = reply.child
    free_edge = reply.free[parent]
    alive = ~reply.terminal
    keep = np.ones(len(child), dtype=bool)
    label = np.full(size, -1, dtype=np.int64)
    while True:
        e = np.flatnonzero(keep & alive[parent] & alive[child])
        g = csr_matrix((np.ones(len(e), dtype=np.int8), (parent[e], child[e])), shape=(size, size))
        _, label = connected_components(g, directed=True, connection="strong")
        inside = np.zeros(len(child), dtype=bool)
        inside[e] = label[parent[e]] == label[child[e]]
        kill = np.zeros(size, dtype=bool)
        kill[parent[~inside & ~free_edge]] = True  # an expectation row that can leave
        kill |= reply.free & (np.bincount(parent[inside], minlength=size) == 0)  # a choice that must leave
        kill &= alive
        keep = inside | ~free_edge  # a free row keeps only the edges that stay
        if not kill.any():
            break
        alive &= ~kill
    out = np.full(size, -1, dtype=np.int64)
    out[alive] = np.unique(label[alive], return_inverse=True)[1]
    return out


def quotient(reply: Reply) -> tuple[Reply, np.ndarray]:
    """The replier's problem with every maximal end component made one free row, whose moves
    are the component's exits (the edges of its free rows that leave it) and **staying for
    ever** (an edge to a new terminal row paying 0), as in de Alfaro's collapse. The result has
    no end components, so every policy ends with probability 1, its linear system has one
    solution, and policy iteration finds the optimum. Returns ``(quotient, row -> quotient
    row)``; all rows of a component have the component's value."""
    size = reply.size
    ec = end_components(reply)
    k = int(ec.max()) + 1 if len(ec) else 0
    if k == 0:
        return reply, np.arange(size, dtype=np.int64)
    outside = ec < 0
    new_row = np.empty(size, dtype=np.int64)
    m = int(outside.sum())
    new_row[outside] = np.arange(m)
    new_row[~outside] = m + ec[~outside]
    stay = m + k  # the terminal row of staying for ever
    q_size = m + k + 1
    parent = reply.parent()
    child = reply.child
    # edges kept: every edge of a row outside the components; the exits of the components
    keep = outside[parent] | (reply.free[parent] & (ec[child] != ec[parent]))
    e = np.flatnonzero(keep)
    src = new_row[parent[e]]
    order = np.argsort(src, kind="stable")
    e, src = e[order], src[order]
    src = np.concatenate([src, m + np.arange(k)])
    dst = np.concatenate([new_row[child[e]], np.full(k, stay)])
    prob = np.concatenate([reply.prob[e], np.ones(k)])
    order = np.argsort(src, kind="stable")
    src, dst, prob = src[order], dst[order], prob[order]
    exact = None
    if reply.exact is not None:
        both = [reply.exact[i] for i in e.tolist()] + [_ONE] * k
        exact = [both[i] for i in order.tolist()]
    offsets = np.zeros(q_size + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=q_size), out=offsets[1:])
    free = np.zeros(q_size, dtype=bool)
    free[:m] = reply.free[outside]
    free[m : m + k] = True
    terminal = np.zeros(q_size, dtype=bool)
    terminal[:m] = reply.terminal[outside]
    terminal[stay] = True
    payoff = np.zeros(q_size)
    payoff[:m] = reply.payoff[outside]
    return Reply(n=q_size, offsets=offsets, child=dst, prob=prob, free=free, terminal=terminal,
                 payoff=payoff, exact=exact), new_row


def best_reply(reply: Reply, pick: np.ndarray | None = None, *, eps: float = SWITCH_EPS,
               max_iterations: int = 200) -> tuple[np.ndarray, np.ndarray, bool, int]:
    """The replier's best reply, by policy iteration with exact evaluations, on a problem
    without end components (:func:`optimal_reply` collapses them first: with one, policy
    iteration can stop at a policy that ends the game where staying for ever pays more).

    Start from ``pick`` (an edge per free row; default: the first edge); switch every free row
    to a strictly better edge (by more than ``eps``) until none is. Returns ``(values of the
    replier, pick, proven, evaluations)``; ``proven`` is False when a solve failed or the
    iterations ran out.
    """
    size = reply.size
    offsets = reply.offsets
    deg = np.diff(offsets)
    free_rows = np.flatnonzero(reply.free & (deg > 0))
    if np.any(reply.free & (deg == 0)):
        raise ValueError("a choice of the replier without moves")
    if pick is None:
        pick = np.full(size, -1, dtype=np.int64)
        pick[free_rows] = offsets[free_rows]
    pick = pick.copy()
    v = _evaluate(reply, pick)
    if v is None:
        return np.zeros(size), pick, False, 1
    for it in range(2, max_iterations + 1):
        # per row, the edge that gains most among those that gain more than rounding (the
        # largest gain overall may be one whose terms are too large to trust it)
        rows, first = switches(reply, v, eps)
        if len(first):
            trial = pick.copy()
            trial[rows] = first
            w = _evaluate(reply, trial)
            if w is None:
                return v, pick, False, it
            # a switch that raises no value by more than rounding was rounding: stop there
            if np.max(w - v) > NOISE * max(1.0, float(np.abs(v).max())):
                v, pick = w, trial
                continue
        return v, pick, True, it  # no better edge anywhere
    return v, pick, False, max_iterations


def _quotient_start(reply: Reply, q: Reply, row: np.ndarray, start: np.ndarray | None) -> np.ndarray:
    """``start`` (an edge per free row of ``reply``) carried to the quotient ``q``: rows outside
    the end components keep their edge, a component starts by staying for ever."""
    q_start = np.full(q.size, -1, dtype=np.int64)
    if start is not None:
        chosen = np.flatnonzero(start >= 0)
        # rows outside the components keep all their moves, in order
        plain = chosen[np.diff(q.offsets)[row[chosen]] == np.diff(reply.offsets)[chosen]]
        q_start[row[plain]] = q.offsets[row[plain]] + (start[plain] - reply.offsets[plain])
    rest = np.flatnonzero(q.free & (q_start < 0))
    q_start[rest] = q.offsets[rest + 1] - 1  # a component's last move is staying for ever
    return q_start


def optimal_reply(reply: Reply, start: np.ndarray | None = None, *,
                  certified: bool = False) -> tuple[np.ndarray, bool, int]:
    """The replier's optimal values ``(float64[size], proven, evaluations)``: his end components
    collapsed first (:func:`quotient`: he may stay in one for ever, worth 0), then
    :func:`best_reply` from ``start`` (an edge per free row, a warm start) on the rest.
    ``certified``: instead of the values policy iteration ends with, proven upper bounds on them
    (:func:`certify_upper` on the quotient), what the bounds evaluate in float64."""
    q, row = quotient(reply)
    vq, pick, proven, evaluations = best_reply(q, _quotient_start(reply, q, row, start))
    if certified and proven:
        vq, more = certify_upper(q, vq, pick)
        evaluations += more
    return vq[row], proven, evaluations


def certify_upper(q: Reply, v: np.ndarray, pick: np.ndarray, max_iterations: int = 100) -> tuple[np.ndarray, int]:
    """A proven upper bound on the replier's optimal values of ``q`` (a problem without end
    components: every policy ends) from float64 values ``v`` (policy iteration's, ``pick`` its
    moves): ``(u, evaluations)``.

    Policy iteration in float64 can stop short of the optimum by far more than rounding: on a
    near-loop (the replier can stay among a few rows with probability ``1 - 1e-11`` a step and
    leave only towards a win) switching one row gains ``b * (v[a] - v[c])``, a product of two
    small numbers below rounding, while the policy it leads to is worth ``7e-6`` more (seed
    93736 of the random recursive games: a float upper bound fell below the exact lower bound).
    So the bound is proven a posteriori, as for stochastic shortest paths:

    * the Bellman excesses of ``v``, bounded above with their rounding (:func:`_excesses`):
      ``x[r] >= (P v)[r] - v[r]`` at expectation rows, ``y[e] >= v[c] - v[r]`` for each move
      ``e: r -> c`` of a free row (negative where a move is worse);
    * a correction ``g`` with ``g[r] - (P g)[r] >= x[r]`` and ``g[r] - g[c] >= y[e]``: the
      largest expected total of the excesses (plus a small ``tau`` a step, to stay above
      rounding) before the end, by policy iteration from ``pick`` on numbers of the size of
      the error, not of the values (so the missed switch above is seen), then checked with its
      rounding bounded (:func:`_holds`);
    * then ``u = v + g`` has ``T u <= u`` for the Bellman operator ``T``, and because every
      policy ends, ``T^k u`` tends to the optimum from above: ``u`` is an upper bound (summed
      with rounding up, and at most the largest payoff).

    ``tau`` starts at the largest rounding allowance of one of ``v``'s rows and grows a hundredfold while the check
    fails (up to four times); then ``u`` is the largest payoff, still true. The excesses are
    about ``1e-16`` a row where ``v`` is right: they add up over the expected number of steps,
    so a long near-loop widens the bound a little instead of hiding an improvement."""
    offsets = np.asarray(q.offsets, dtype=np.int64)
    prob = np.asarray(q.prob, dtype=np.float64)
    payoff = np.asarray(q.payoff, dtype=np.float64)
    top = float(payoff[q.terminal].max()) if q.terminal.any() else 0.0
    v = np.where(q.terminal, payoff, np.asarray(v, dtype=np.float64))
    x, y, noise = _excesses(offsets, q.child, prob, q.free, q.terminal, v)
    evaluations = 0
    tau = max(noise, 1e-300)
    order = _component_order(q)
    for _ in range(4):
        if order is not None:  # first by one pass over the components, sinks first
            g = _pass_total(offsets, q.child, prob, q.free, q.terminal, x, y, tau, *order, SWEEPS)
            if _holds(offsets, q.child, prob, q.free, q.terminal, g, x, y):
                return _upper_from(q, v, g, top), evaluations
            pick = _best_moves(offsets, q.child, q.free, g, y, pick)
        g, ev = _max_total(q, x, y, tau, pick, max_iterations)
        evaluations += ev
        if g is not None and _holds(offsets, q.child, prob, q.free, q.terminal, g, x, y):
            return _upper_from(q, v, g, top), evaluations
        tau *= 100.0
    return np.where(q.terminal, payoff, top), evaluations


def _upper_from(q: Reply, v: np.ndarray, g: np.ndarray, top: float) -> np.ndarray:
    """``v + g`` rounded up, at most ``top``; the payoffs at terminal rows."""
    return np.where(q.terminal, q.payoff, np.minimum(np.nextafter(v + g, np.inf), top))


def _component_order(q: Reply) -> tuple[np.ndarray, np.ndarray] | None:
    """The rows grouped by strongly connected component, sinks first: ``(order, starts)``
    (the rows of component ``k`` are ``order[starts[k]:starts[k + 1]]``), or ``None`` when
    scipy's component numbers are not in that order (they are, from its Tarjan-style search,
    but it does not promise so: checked on every edge)."""
    parent = q.parent()
    g = csr_matrix((np.ones(len(q.child), dtype=np.int8), (parent, q.child)), shape=(q.size, q.size))
    k, label = connected_components(g, directed=True, connection="strong")
    if np.any(label[parent] < label[q.child]):
        return None
    order = np.argsort(label, kind="stable")
    starts = np.searchsorted(label[order], np.arange(k + 1))
    return order, starts


#: sweeps over each cyclic component in the certificate's first pass
SWEEPS = 50


@njit(cache=True, nogil=True)
def _pass_total(offsets, child, prob, free, terminal, x, y, tau, order, starts, sweeps):  # pragma: no cover - compiled
    """The certificate's correction by one pass over the components, sinks first (each row
    once where the graph has no cycle; a cyclic component swept up to ``sweeps`` times, Gauss-
    Seidel, from 0): ``g[r] = max_e (y[e] + tau + g[c])`` at free rows, ``x[r] + tau +
    (P g)[r]`` at expectation rows. A guess, not a proof: :func:`_holds` checks it."""
    g = np.zeros(len(free))
    for k in range(len(starts) - 1):
        a, b = starts[k], starts[k + 1]
        rounds = 1 if b - a == 1 else sweeps
        for _ in range(rounds):
            changed = False
            for i in range(a, b):
                r = order[i]
                if terminal[r]:
                    continue
                if free[r]:
                    t = -np.inf
                    for e in range(offsets[r], offsets[r + 1]):
                        t = max(t, y[e] + tau + g[child[e]])
                else:
                    t = x[r] + tau
                    for e in range(offsets[r], offsets[r + 1]):
                        t += prob[e] * g[child[e]]
                if t != g[r]:
                    changed = True
                    g[r] = t
            if not changed:
                break
    return g


@njit(cache=True, nogil=True)
def _best_moves(offsets, child, free, g, y, pick):  # pragma: no cover - compiled
    """At each free row the move of largest ``y[e] + g[c]`` (a warm start for policy iteration)."""
    out = pick.copy()
    for r in range(len(free)):
        if not free[r] or offsets[r] == offsets[r + 1]:
            continue
        best, arg = -np.inf, -1
        for e in range(offsets[r], offsets[r + 1]):
            t = y[e] + g[child[e]]
            if t > best:
                best, arg = t, e
        out[r] = arg
    return out


def _max_total(q: Reply, x: np.ndarray, y: np.ndarray, tau: float, pick: np.ndarray,
               max_iterations: int) -> tuple[np.ndarray | None, int]:
    """The replier's largest expected total before the end of ``x[r] + tau`` per expectation
    row visited and ``y[e] + tau`` per move ``e`` of a free row, by policy iteration from
    ``pick``: ``(g, evaluations)`` (``g`` ``None`` when a solve failed). Float64;
    :func:`_holds` checks what it returns."""
    offsets = np.asarray(q.offsets, dtype=np.int64)
    prob = np.asarray(q.prob, dtype=np.float64)
    zero = np.zeros(q.size)
    free_rows = np.flatnonzero(q.free)
    pick = pick.copy()
    g = None
    for it in range(1, max_iterations + 1):
        src, dst, p, _, ends, moves = _policy_system(offsets, q.child, prob, q.free, q.terminal, zero, pick)
        keep = reaching(q.size, src, dst, np.flatnonzero(ends))
        b = np.where(q.terminal, 0.0, x + tau)
        b[free_rows] = y[pick[free_rows]] + tau
        g = linear_solve(q.size, [src, dst, p, b], keep, moves <= 1)
        if g is None:
            return None, it
        g[q.terminal] = 0.0
        rows, edges = _total_switches(offsets, q.child, q.free, g, y, pick, TAU_SWITCH * tau)
        if not len(rows):
            return g, it
        pick[rows] = edges
    return g, max_iterations


@njit(cache=True, nogil=True)
def _total_switches(offsets, child, free, g, y, pick, thr):  # pragma: no cover - compiled
    """Free rows whose best move (largest ``y[e] + g[c]``) beats the chosen one by more than
    rounding."""
    rows = np.empty(len(free), np.int64)
    edges = np.empty(len(free), np.int64)
    count = 0
    for r in range(len(free)):
        if not free[r] or pick[r] < 0:
            continue
        best, arg = y[pick[r]] + g[child[pick[r]]], -1
        for e in range(offsets[r], offsets[r + 1]):
            t = y[e] + g[child[e]]
            if t > best + max(thr, 1e-12 * abs(best)):
                best, arg = t, e
        if arg >= 0:
            rows[count] = r
            edges[count] = arg
            count += 1
    return rows[:count], edges[:count]


#: the certificate's policy iteration switches a move only for a gain above this times tau
TAU_SWITCH = 0.5
#: the unit roundoff of float64
_U = 2.0**-53


@njit(cache=True, nogil=True)
def _mean_error(offsets, child, prob, x, r):  # pragma: no cover - compiled
    """Row ``r``'s expectation of ``x`` summed in float64, and a bound on its distance from the
    exact expectation of the game: a sum of ``k`` products errs by at most ``k`` units of
    roundoff times the absolute terms (``a``); the game's probabilities are the row's scaled to
    sum 1 (a mix), or within 4 units of roundoff of each stored one (a chance node's)."""
    s = 0.0
    a = 0.0
    total = 0.0
    k = offsets[r + 1] - offsets[r]
    for e in range(offsets[r], offsets[r + 1]):
        t = prob[e] * x[child[e]]
        s += t
        a += abs(t)
        total += prob[e]
    gamma = (k + 1) * _U * 1.01
    d = abs(total - 1.0) + gamma * total
    return s, a * (gamma * 1.01 + 4.0 * _U + d / max(1.0 - d, 0.5))


@njit(cache=True, nogil=True)
def _excesses(offsets, child, prob, free, terminal, v):  # pragma: no cover - compiled
    """Upper bounds on ``v``'s Bellman excesses with float64's rounding included: ``x[r] >=
    (P v)[r] - v[r]`` per expectation row, ``y[e] >= v[c] - v[r]`` per move ``e: r -> c`` of a
    free row (0 elsewhere), and the largest rounding allowance of a row (the scale of ``tau``)."""
    x = np.zeros(len(free))
    y = np.zeros(len(child))
    noise = 0.0
    for r in range(len(free)):
        if terminal[r]:
            continue
        if free[r]:
            for e in range(offsets[r], offsets[r + 1]):
                d = v[child[e]] - v[r]
                y[e] = d + 1.01 * _U * abs(d)
                noise = max(noise, 1.01 * _U * abs(d))
        else:
            s, err = _mean_error(offsets, child, prob, v, r)
            d = s - v[r]
            x[r] = d + 1.01 * _U * abs(d) + err
            noise = max(noise, err)
    return x, y, noise


@njit(cache=True, nogil=True)
def _holds(offsets, child, prob, free, terminal, g, x, y):  # pragma: no cover - compiled
    """Whether ``g[r] - g[c] >= y[e]`` for every move of a free row and ``g[r] - (P g)[r] >=
    x[r]`` at every expectation row, each difference's rounding bounded."""
    for r in range(len(free)):
        if terminal[r]:
            continue
        if free[r]:
            for e in range(offsets[r], offsets[r + 1]):
                d = g[r] - g[child[e]]
                if not d - 1.01 * _U * abs(d) >= y[e]:
                    return False
        else:
            s, err = _mean_error(offsets, child, prob, g, r)
            d = g[r] - s
            if not d - 1.01 * _U * abs(d) - err >= x[r]:
                return False
    return True


def _exact_values(reply: Reply, pick: np.ndarray, payoff: list[Fraction]) -> list[Fraction]:
    """The replier's values under ``pick`` in exact arithmetic (a problem without end
    components: every policy ends, so the system has one solution), by sparse elimination."""
    size = reply.size
    off, child, ex = reply.offsets.tolist(), reply.child.tolist(), reply.exact
    assert ex is not None
    eqs: dict[int, tuple[dict[int, Fraction], Fraction]] = {}
    uses: dict[int, set[int]] = {}  # unknown -> the equations it appears in
    for r in range(size):
        if reply.terminal[r]:
            continue
        coef: dict[int, Fraction] = {}
        rhs = Fraction(0)
        edges = [int(pick[r])] if reply.free[r] else range(off[r], off[r + 1])
        for e in edges:
            c, p = child[e], (_ONE if reply.free[r] else ex[e])
            if reply.terminal[c]:
                rhs += p * payoff[c]
            elif c != r:
                coef[c] = coef.get(c, 0) - p
            else:
                coef[r] = coef.get(r, 0) - p
        coef[r] = coef.get(r, 0) + 1
        eqs[r] = (coef, rhs)
        for c in coef:
            uses.setdefault(c, set()).add(r)
    solved: dict[int, tuple[dict[int, Fraction], Fraction]] = {}
    for v in list(eqs):  # eliminate v from every other equation, using its own
        coef, rhs = eqs.pop(v)
        pivot = coef.pop(v)
        coef = {c: a / pivot for c, a in coef.items()}
        rhs = rhs / pivot
        solved[v] = (coef, rhs)
        for r in uses.pop(v, set()) - {v}:
            if r not in eqs:
                continue
            cr, rr = eqs[r]
            a = cr.pop(v, None)
            if a is None:  # v's coefficient there cancelled to 0 in an earlier step
                continue
            for c, b in coef.items():
                new = cr.get(c, 0) - a * b
                if new:
                    cr[c] = new
                    uses.setdefault(c, set()).add(r)
                else:
                    cr.pop(c, None)
            eqs[r] = (cr, rr - a * rhs)
    x = [Fraction(0)] * size
    for r in range(size):
        if reply.terminal[r]:
            x[r] = payoff[r]
    for v in reversed(list(solved)):  # back substitution: later unknowns are known
        coef, rhs = solved[v]
        x[v] = rhs - sum((a * x[c] for c, a in coef.items()), Fraction(0))
    return x


def exact_optimal_reply(reply: Reply, start: np.ndarray | None = None,
                        max_iterations: int = 200) -> tuple[list[Fraction] | None, int]:
    """:func:`optimal_reply` in exact rational arithmetic (``reply.exact`` set): the replier's
    optimal values as fractions per row (``None`` if the iterations ran out) and the number of
    evaluations. Policy iteration on the quotient, switching a row only to a strictly better
    move: no rounding anywhere, so no move is missed however small its gain."""
    q, row = quotient(reply)
    pick = _quotient_start(reply, q, row, start)
    free_rows = np.flatnonzero(q.free).tolist()
    for r in free_rows:
        if pick[r] < 0:
            pick[r] = q.offsets[r]
    payoff = [Fraction(float(x)) for x in q.payoff]
    off, child = q.offsets.tolist(), q.child.tolist()
    for it in range(1, max_iterations + 1):
        x = _exact_values(q, pick, payoff)
        changed = False
        for r in free_rows:
            best_e, best_v = int(pick[r]), x[child[int(pick[r])]]
            for e in range(off[r], off[r + 1]):
                if x[child[e]] > best_v:
                    best_e, best_v = e, x[child[e]]
            if best_e != pick[r]:
                pick[r] = best_e
                changed = True
        if not changed:
            return [x[i] for i in row.tolist()], it
    return None, max_iterations


def _round_down(f: Fraction) -> float:
    x = float(f)
    return x if Fraction(x) <= f else math.nextafter(x, -math.inf)


def _round_up(f: Fraction) -> float:
    x = float(f)
    return x if Fraction(x) >= f else math.nextafter(x, math.inf)


def strategy_value(graph: Graph, fixed: int, mixes: dict[int, np.ndarray], choice: np.ndarray,
                   payoff0: np.ndarray, *, exact_chance: dict[int, Fraction] | None = None,
                   floor: float = PROB_FLOOR) -> tuple[np.ndarray, bool, int]:
    """What player ``fixed`` guarantees with ``mixes`` at simultaneous nodes and ``choice`` at
    his decision nodes, against the other's exact best reply: ``(player 0's value float64[n],
    proven, evaluations)``. A lower bound on the game's values when ``fixed`` is 0, an upper
    bound when 1. With ``exact_chance`` (:func:`exact_chance_probabilities`) the reply is
    solved in rational arithmetic and each value rounded outward to float64 once."""
    reply = build_reply(graph, fixed, mixes, choice, payoff0, exact_chance=exact_chance, floor=floor)
    start = np.full(reply.size, -1, dtype=np.int64)
    n = graph.n
    offsets = np.asarray(graph.offsets, dtype=np.int64)
    theirs = np.flatnonzero(reply.free[:n] & (np.asarray(graph.kind) == _DECISION) & (choice >= 0))
    start[theirs] = reply.offsets[theirs] + (choice[theirs] - offsets[theirs])
    sims = np.flatnonzero(reply.free[:n] & (np.asarray(graph.kind) == _SIMULTANEOUS))
    start[sims] = reply.offsets[sims]
    if reply.exact is not None:
        xs, evaluations = exact_optimal_reply(reply, start)
        if xs is None:
            return np.zeros(n), False, evaluations
        # the replier's view back to player 0's, rounded toward what is proven
        own = [-f for f in xs[:n]] if fixed == 0 else xs[:n]
        out = np.array([_round_down(f) if fixed == 0 else _round_up(f) for f in own])
        return out, True, evaluations
    v, proven, evaluations = optimal_reply(reply, start, certified=True)
    sign = 1.0 if fixed == 1 else -1.0  # the replier's view back to player 0's
    return sign * v[:n], proven, evaluations


def _guess_choices(graph: Graph, guess0: np.ndarray) -> np.ndarray:
    """The first best move of the mover at each decision node under the values ``guess0``
    (player 0's view)."""
    offsets = np.asarray(graph.offsets, dtype=np.int64)
    deg = np.diff(offsets)
    parent = graph.parent_of_edge()
    side = np.where(np.asarray(graph.to_move) == 0, 1.0, -1.0)
    q = side[parent] * guess0[graph.child]
    return first_best(np.asarray(graph.kind, dtype=np.int64), parent, offsets, deg, q)


def _mixes_at(graph: Graph, guess0: np.ndarray, player: int, floor: float = PROB_FLOOR) -> dict[int, np.ndarray]:
    """Each simultaneous node's optimal mix of ``player`` in its matrix game at the children's
    values ``guess0`` (player 0's view)."""
    from solver.engines.simultaneous import simultaneous_node_values

    side = np.where(np.asarray(graph.to_move) == 0, 1.0, -1.0)
    _, strategies = simultaneous_node_values(graph, side * guess0)
    return {int(s): _clean(mixes[player], floor) for s, mixes in strategies.items()}


def _improved(graph: Graph, player: int, w0: np.ndarray, mixes: dict[int, np.ndarray],
              choice: np.ndarray) -> tuple[dict[int, np.ndarray], np.ndarray]:
    """Strategy improvement: ``player``'s strategy switched only where his bound ``w0`` (player
    0's view) says a move or a mix is strictly better than the one he plays (keeping the others
    avoids new loops among equally good moves, as in Hoffman-Karp)."""
    from solver.engines.simultaneous import simultaneous_node_values

    me = 1.0 if player == 0 else -1.0
    side = np.where(np.asarray(graph.to_move) == 0, 1.0, -1.0)
    vals, strategies = simultaneous_node_values(graph, side * w0)
    sims = np.array(sorted(strategies), dtype=np.int64)
    new_mixes = dict(mixes)
    if len(sims):
        gain = me * (side[sims] * vals - w0[sims])
        for s in sims[gain > 1e-12].tolist():
            new_mixes[s] = _clean(strategies[s][player])
    kind = np.asarray(graph.kind)
    offsets = np.asarray(graph.offsets, dtype=np.int64)
    parent = graph.parent_of_edge()
    q = me * w0[graph.child]
    best = edge_max(q, offsets, np.diff(offsets))
    mine = np.flatnonzero((kind == _DECISION) & (np.asarray(graph.to_move) == player) & (choice >= 0))
    new_choice = choice.copy()
    switch = mine[best[mine] > q[choice[mine]] + 1e-12]
    if len(switch):
        top = first_best(np.asarray(kind, dtype=np.int64), parent, offsets, np.diff(offsets), q)
        new_choice[switch] = top[switch]
    return new_mixes, new_choice


def terminal_payoff0(graph: Graph, terminal_value: np.ndarray | None = None) -> np.ndarray:
    """Player 0's payoff at the terminal rows (0 elsewhere): the sign of ``graph.result`` (or
    ``terminal_value``, from the side to move) seen by player 0."""
    side = np.where(np.asarray(graph.to_move) == 0, 1.0, -1.0)
    terminal = np.asarray(graph.kind) == int(NodeKind.TERMINAL)
    own = (np.sign(np.asarray(graph.result, dtype=np.float64)) if terminal_value is None
           else np.asarray(terminal_value, dtype=np.float64))
    return np.where(terminal, side * own, 0.0)


def _evaluator(graph: Graph, terminal_value: np.ndarray | None
               ) -> tuple[Callable[[int, dict[int, np.ndarray], np.ndarray], tuple[np.ndarray, bool, int]], float, bool]:
    """``(evaluate, floor, exact)``: ``evaluate(player, mixes, choice)`` is
    :func:`strategy_value` as the bounds use it on ``graph`` (exact arithmetic where the
    best-reply problems have at most :data:`EXACT_ROWS` rows and the chance probabilities are
    simple fractions, then no probability floor but :data:`EXACT_FLOOR`); ``floor`` the mixes'
    probability floor; ``exact`` whether evaluations are exact."""
    payoff0 = terminal_payoff0(graph, terminal_value)
    sims = np.flatnonzero(np.asarray(graph.kind) == _SIMULTANEOUS)
    rows = graph.n + int(np.diff(np.asarray(graph.offsets, dtype=np.int64))[sims].sum())
    exact_chance = exact_chance_probabilities(graph) if rows <= EXACT_ROWS else None
    floor = PROB_FLOOR if exact_chance is None else EXACT_FLOOR

    def evaluate(player: int, mixes: dict[int, np.ndarray], choice: np.ndarray) -> tuple[np.ndarray, bool, int]:
        return strategy_value(graph, player, mixes, choice, payoff0, exact_chance=exact_chance, floor=floor)

    return evaluate, floor, exact_chance is not None


def _side_to_move(graph: Graph, lo: np.ndarray, hi: np.ndarray, terminal_value: np.ndarray | None
                  ) -> tuple[np.ndarray, np.ndarray, float, bool]:
    """Player 0's bounds ``lo``/``hi`` clipped to the range of the ends (or 0, endless play),
    seen from the side to move: ``(lo, hi, widest, crossed)``; ``crossed``: somewhere the lower
    bound is above the upper (two separate evaluations: one of them is wrong, nothing is
    claimed)."""
    payoff0 = terminal_payoff0(graph, terminal_value)
    ends = payoff0[np.asarray(graph.kind) == int(NodeKind.TERMINAL)]
    floor = min(0.0, float(ends.min())) if len(ends) else 0.0
    ceiling = max(0.0, float(ends.max())) if len(ends) else 0.0
    lo0 = np.maximum(lo, floor)
    hi0 = np.minimum(hi, ceiling)
    width = float(np.max(hi0 - lo0)) if graph.n else 0.0
    side = np.where(np.asarray(graph.to_move) == 0, 1.0, -1.0)
    return (np.where(side > 0, lo0, -hi0), np.where(side > 0, hi0, -lo0), width,
            not bool(np.all(lo0 <= hi0)))


def recheck_bounds(graph: Graph, mix_1: dict[int, np.ndarray], mix_2: dict[int, np.ndarray],
                   moves: np.ndarray, *, terminal_value: np.ndarray | None = None
                   ) -> tuple[np.ndarray, np.ndarray, bool]:
    """What stored proving strategies prove, evaluated again from nothing else: ``(lo, hi,
    proven)`` from the side to move. ``mix_1``/``mix_2``: simultaneous row -> player 0's /
    player 1's mix (a table's ``proof_mix_1``/``proof_mix_2``); ``moves``: ``int64[n]``, the
    move (edge index) the mover's strategy plays at each decision node (the table's
    ``proof_move`` plus the row's first edge), -1 elsewhere. ``proven``: both evaluations ended
    (certified) and the bounds do not cross. The same evaluation :func:`prove_bounds` stores its
    bounds from, so a table's ``value_lo``/``value_hi`` should come back (to rounding)."""
    evaluate, _, _ = _evaluator(graph, terminal_value)
    moves = np.asarray(moves, dtype=np.int64)
    lo, ok_lo, _ = evaluate(0, mix_1, moves)
    hi, ok_hi, _ = evaluate(1, mix_2, moves)
    lo_m, hi_m, _, crossed = _side_to_move(graph, lo, hi, terminal_value)
    return lo_m, hi_m, bool(ok_lo and ok_hi and not crossed)


def prove_bounds(
    graph: Graph,
    strategies: Mixes,
    best: np.ndarray,
    *,
    tol: float = BOUND_TOL,
    max_rounds: int = MAX_ROUNDS,
    terminal_value: np.ndarray | None = None,
    progress: Callable[[int, float], None] | None = None,
) -> Bounds:
    """Proven bounds on every position's value of a graph with simultaneous nodes.

    Parameters
    ----------
    graph : Graph
        With ``sim_rows``.
    strategies : dict
        Simultaneous row -> ``(x, y)``: the mixes value iteration ends with.
    best : numpy.ndarray
        ``int64[n]``: the move (edge index) value iteration picks at each decision node.
    tol : float
        Stop once every interval is at most this wide; ``certified`` says whether they are.
    max_rounds : int
        Rounds of better strategies after the first evaluation of each side.
    terminal_value : numpy.ndarray, optional
        Terminal payoffs from the side to move in place of the signs of ``graph.result``.
    progress : callable, optional
        ``progress(round, width)`` after each round.

    Returns
    -------
    Bounds
        From the side to move, as ``value``.
    """
    n = graph.n
    best = np.asarray(best, dtype=np.int64)
    lower = {s: _clean(xy[0]) for s, xy in strategies.items()}
    upper = {s: _clean(xy[1]) for s, xy in strategies.items()}
    evaluate, floor, exact = _evaluator(graph, terminal_value)

    lo, ok_lo, ev_lo = evaluate(0, lower, best)
    hi, ok_hi, ev_hi = evaluate(1, upper, best)
    # what the strategies kept prove (stored with them, so that anyone can re-check them:
    # :func:`recheck_bounds`); ``lo``/``hi`` steer the search: the best of every round's
    lo_kept, hi_kept = lo, hi
    evaluations = ev_lo + ev_hi
    proven = ok_lo and ok_hi
    width = float(np.max(hi - lo)) if n else 0.0
    if progress is not None:
        progress(0, width)
    theta = 0.9
    rounds = 0
    choice_lo = choice_hi = best
    while proven and width > tol and rounds < max_rounds and theta > 1e-4:
        rounds += 1
        gap = np.maximum(hi - lo, 0.0)
        improved = False
        for player in (0, 1):
            guess = lo + theta * gap if player == 0 else hi - theta * gap
            old = lo if player == 0 else hi
            own = (lower, choice_lo) if player == 0 else (upper, choice_hi)
            tries = [_improved(graph, player, old, *own),
                     (_mixes_at(graph, guess, player, floor), _guess_choices(graph, guess))]
            chosen = None
            for cand, cand_choice in tries:
                got, ok, ev = evaluate(player, cand, cand_choice)
                evaluations += ev
                if not ok:
                    continue
                gain = (got - old) if player == 0 else (old - got)
                # a strategy may replace the last one when it proves no less anywhere and more
                # somewhere; of two such, the one that proves more in all
                if gain.min() >= -SWITCH_EPS and gain.max() > SWITCH_EPS:
                    if chosen is None or gain.sum() > chosen[0]:
                        chosen = (float(gain.sum()), got, cand, cand_choice)
            if chosen is not None:
                improved = True
                _, got, cand, cand_choice = chosen
                if player == 0:
                    lo, lo_kept, lower, choice_lo = np.maximum(got, lo), got, cand, cand_choice
                else:
                    hi, hi_kept, upper, choice_hi = np.minimum(got, hi), got, cand, cand_choice
        width = float(np.max(hi_kept - lo_kept)) if n else 0.0  # (what is stored is what counts)
        if not improved:
            theta /= 4
        if progress is not None:
            progress(rounds, width)
    lo_m, hi_m, width, crossed = _side_to_move(graph, lo_kept, hi_kept, terminal_value)
    proven = proven and not crossed
    return Bounds(
        lo=lo_m, hi=hi_m, certified=bool(proven and width <= tol), tol=tol, lower=lower, upper=upper,
        stats={"rounds": rounds, "evaluations": evaluations, "width": width, "proven": proven,
               "exact": exact},
        lower_moves=choice_lo, upper_moves=choice_hi,
    )
