"""Secret-choice games whose every cycle passes a secret choice, in little memory.

In a game whose rounds start with a secret simultaneous choice (Petal Battle: both players
pick their orders at once, then play the round out in turns), the moves among the decision and
chance nodes form no cycle: every loop of play goes back through a round start. Shapley's
value iteration then needs no per-move arrays at all. Given the values of the simultaneous
nodes, one pass over the decision and chance nodes in children-first order is backward
induction (each node's value from its children's, read straight from the graph's ``child``
array), and the simultaneous nodes' matrix games are solved from the values it leaves. A sweep
is that pass followed by the matrix games; sweeps repeat from 0 until the largest change is
below ``tol``, as in :func:`~solver.engines.simultaneous.solve_simultaneous` (same iteration,
same Gauss-Seidel order, the same certificate and tie-breaks: the tests compare every value,
strategy and probability with it).

:func:`solve_rounds` holds, beside the graph's arrays: the values (8 bytes a position), the
children-first order of the decision and chance nodes (4), the win and loss probabilities of
the final strategies (16), the best moves (8) and, while the strategies are chosen, the
components and distances of the tie-break (8, plus about 20 while Tarjan's algorithm runs);
about 60 bytes a position at its peak on Petal Battle 6-2, where the general engine holds
per-move arrays, a schedule and sparse solves (the whole value-iteration solve of 6-2, without
bounds: peak 575 -> 320 bytes a position in all, 32.3 -> 10.1 s). The win probabilities are
exact: the round starts' probabilities solve a linear system of their own (:func:`_round_policy`),
one pass gives the rest. No files, threads or progress bars: ``progress`` is a callback.

:func:`applies` says whether a graph is such a game (no cycle among its decision and chance
nodes, at least one simultaneous node, no real payoffs); the pipeline routes the others to
:func:`~solver.engines.value_iteration.value_iteration`.
"""

from __future__ import annotations

import time

import numpy as np
from numba import njit

from solver.core.arrays import CodedFloats
from solver.core.game import NodeKind
from solver.engines.scc import scc_order
from solver.engines.graph import Graph
from solver.engines.simultaneous import (
    CERTIFICATE_THRESHOLD,
    TOL_FLOOR,
    Counters,
    SimBlock,
    sim_matrix_rows,
)
from solver.engines.stochastic import (Progress, StochasticSolution, checked_moves, linear_solve, reaching,
                                      terminal_ends, validate_tol)

_DECISION = int(NodeKind.DECISION)
_CHANCE = int(NodeKind.CHANCE)
_SIMULTANEOUS = int(NodeKind.SIMULTANEOUS)
_TERMINAL = int(NodeKind.TERMINAL)

#: the tie-break discount of moves that stay in a loop is at most this (as the whole-graph engine)
TIE_BREAK = 1e-6


def rounds_order(graph: Graph) -> np.ndarray | None:
    """The order :func:`solve_rounds` sweeps in (:func:`plain_order`) when it can solve
    ``graph``: simultaneous nodes, no real payoffs, no cycle among the decision and chance
    nodes; else ``None``."""
    kind = np.asarray(graph.kind)
    if graph.payoff is not None or graph.sim_rows is None or not np.any(kind == _SIMULTANEOUS):
        return None
    return plain_order(graph)


def applies(graph: Graph) -> bool:
    """True when :func:`solve_rounds` can solve ``graph`` (:func:`rounds_order`)."""
    return rounds_order(graph) is not None


def plain_order(graph: Graph) -> np.ndarray | None:
    """The decision and chance nodes, children first (every such node after those of its
    children that are decision or chance nodes), or ``None`` when they form a cycle."""
    kind = np.asarray(graph.kind, dtype=np.int8)
    plain = int(np.count_nonzero((kind == _DECISION) | (kind == _CHANCE)))
    order = np.empty(plain, np.int32 if graph.n < 2**31 - 1 else np.int64)
    return order if _plain_post_order(kind, _offsets(graph), np.asarray(graph.child), order) else None


def _offsets(graph: Graph) -> np.ndarray:
    offsets = np.asarray(graph.offsets)
    return offsets if offsets.dtype in (np.int32, np.int64) else offsets.astype(np.int64)


def _probabilities(graph: Graph, kind: np.ndarray) -> tuple[np.ndarray, bool]:
    """``(prob float64[E], True)`` for a graph with chance nodes, else a dummy and False."""
    if not np.any(kind == _CHANCE):
        return np.ones(1), False
    if graph.probs is None:
        raise ValueError("the graph has chance nodes but no probabilities")
    probs = np.asarray(graph.probs) if isinstance(graph.probs, CodedFloats) else graph.probs
    return np.asarray(probs, dtype=np.float64), True


def solve_rounds(
    graph: Graph,
    *,
    tol: float = 1e-12,
    max_sweeps: int = 100_000,
    progress: Progress | None = None,
    terminal_probs: tuple[np.ndarray, np.ndarray] | None = None,
    terminal_value: np.ndarray | None = None,
    order: np.ndarray | None = None,
) -> StochasticSolution:
    """Solve a game whose every cycle passes a simultaneous node (:func:`applies`).

    The parameters and the result are those of
    :func:`~solver.engines.simultaneous.solve_simultaneous` (without ``tiers``: one pass orders
    every decision and chance node); ``progress(stage, 0, sweeps, change)`` is called after
    every sweep (``stage`` ``"value"``, then ``"policy"`` for the win probabilities).
    ``stats["engine"]`` is ``"rounds"``. ``order``: :func:`rounds_order` of the graph when the
    caller has it (found again otherwise).
    """
    validate_tol(tol)
    asked_tol, tol = tol, max(tol, TOL_FLOOR)
    t_start = time.perf_counter()
    n = graph.n
    kind, offsets, child, deg = checked_moves(graph)
    to_move = np.asarray(graph.to_move, dtype=np.int8)
    rows = sim_matrix_rows(graph, kind, deg)
    if order is None:
        order = plain_order(graph)
    if order is None:
        raise ValueError("the decision and chance nodes form a cycle among themselves: "
                         "solve this graph with value_iteration")
    prob, has_prob = _probabilities(graph, kind)
    sim_nodes = np.flatnonzero(kind == _SIMULTANEOUS)
    block = SimBlock(sim_nodes, offsets, rows, deg)
    del deg, rows
    terminal = kind == _TERMINAL
    end_win, end_loss = terminal_ends(graph.result, terminal, terminal_probs)
    value = end_win - end_loss if terminal_value is None else np.asarray(terminal_value, dtype=np.float64).copy()
    value[~terminal] = 0.0
    del end_win, end_loss  # (found again for the win probabilities: 16 bytes a position less meanwhile)
    counters = Counters()
    skip = tol / 10

    # values: Shapley's iteration from 0, a sweep = backward induction below the round starts
    sweeps = 0
    change = previous = np.inf
    while sweeps < max_sweeps:
        res = _sweep(order, kind, to_move, offsets, child, prob, has_prob, value)
        new = block.solve(value, child, to_move, counters, skip=skip)
        if len(new):
            res = max(res, float(np.abs(new - value[sim_nodes]).max()))
            value[sim_nodes] = new
        previous, change = change, res
        sweeps += 1
        if progress is not None:
            progress("value", 0, sweeps, change)
        if change < tol:
            break
    converged = bool(change < tol)
    ratio = change / previous if np.isfinite(previous) and previous > 0 else 0.0
    error_estimate = 0.0 if change == 0 else (change * ratio / (1 - ratio) if ratio < 1 else np.inf)

    # strategies: best moves and mixes, moves that stay in a loop discounted (tie-break) ------
    comp, cyclic = _components(offsets, child, n)
    dist = _terminal_distance(order, sim_nodes, kind, offsets, child)
    g = TIE_BREAK / (2.0 + float(dist.max(initial=0)))
    best = _best_moves(order, kind, to_move, offsets, child, comp, cyclic, dist, g, value)

    def scale(edges: np.ndarray) -> np.ndarray:
        owner = np.searchsorted(offsets, edges, side="right") - 1
        ch = child[edges]
        stay = cyclic[comp[owner]] & (comp[owner] == comp[ch])
        return np.where(stay, 1.0 - g * (1.0 + dist[ch]), 1.0)

    strategies: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    final = block.solve(value, child, to_move, counters)
    block.solve(value, child, to_move, counters, strategies=strategies, scale=scale)
    del comp, cyclic, dist

    # certificate: every Bellman equation of the stored values, matrix games re-solved ---------
    residual = _sweep(order, kind, to_move, offsets, child, prob, has_prob, value, False)
    if len(sim_nodes):
        residual = max(residual, float(np.abs(final - value[sim_nodes]).max()))
    certified = residual <= CERTIFICATE_THRESHOLD

    # win/loss probabilities under those strategies -------------------------------------------
    end_win, end_loss = terminal_ends(graph.result, terminal, terminal_probs)
    p_win, p_loss = end_win.copy(), end_loss.copy()  # (the caller's arrays when it gave them)
    del end_win, end_loss, terminal
    joint = _joint_probabilities(block, strategies)
    exact = _round_policy(block, joint, kind, to_move, offsets, child, prob, has_prob, best, p_win, p_loss)
    if exact is not None:  # the round starts' probabilities, exactly: one pass gives the rest
        p_win[sim_nodes], p_loss[sim_nodes] = exact
        _policy_sweep(order, kind, to_move, offsets, child, prob, has_prob, best, p_win, p_loss)
    pol_sweeps = 0
    pol_change = np.inf
    while pol_sweeps < max_sweeps:  # (checks the exact solve; alone, converges from below)
        pol_change = _policy_sweep(order, kind, to_move, offsets, child, prob, has_prob, best, p_win, p_loss)
        pol_change = max(pol_change, _policy_sims(block, joint, child, to_move, p_win, p_loss))
        pol_sweeps += 1
        if progress is not None:
            progress("policy", 0, pol_sweeps, pol_change)
        if pol_change < tol:
            break
    pol_conv = bool(pol_change < tol)
    del joint
    policy_gap = float(np.abs(p_win - p_loss - value).max()) if n else 0.0

    stats = {
        "engine": "rounds",
        "sweeps": sweeps,
        "last_sweep_change": float(change),
        "error_estimate": float(error_estimate),
        "certified": certified,
        "residual": residual,
        "plain_cycles": 0,
        "certificate_threshold": CERTIFICATE_THRESHOLD,
        **counters.stats(),
        "simultaneous_nodes": len(sim_nodes),
        "policy_sweeps": pol_sweeps,
        "policy_exact": exact is not None,
        "policy_residual": float(pol_change),
        "policy_gap": policy_gap,
        "tol": asked_tol,
        "effective_tol": tol,
        "seconds": time.perf_counter() - t_start,
    }
    return StochasticSolution(
        value=value, p_win=p_win, p_loss=p_loss, best=best, sweeps=sweeps, residual=residual,
        converged=bool(converged and certified and pol_conv), stats=stats, strategies=strategies,
    )


def _components(offsets: np.ndarray, child: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(comp int32[n], cyclic bool[k])``: each row's strongly connected component and whether
    the component holds a cycle (more than one row, or a move to itself)."""
    order, bounds, _ = scc_order(offsets, child, n, 1)
    sizes = np.diff(bounds)
    comp = np.empty(n, np.int32)
    comp[order] = np.repeat(np.arange(len(sizes), dtype=np.int32), sizes)
    del order
    cyclic = sizes > 1
    del sizes, bounds
    _mark_self_loops(offsets, child, comp, cyclic)
    return comp, cyclic


@njit(cache=True, nogil=True)
def _mark_self_loops(offsets, child, comp, cyclic):  # pragma: no cover - compiled
    for i in range(len(offsets) - 1):
        for e in range(offsets[i], offsets[i + 1]):
            if child[e] == i:
                cyclic[comp[i]] = True


_D, _C, _T = _DECISION, _CHANCE, _TERMINAL  # (module constants: compiled into the kernels)


@njit(cache=True, nogil=True)
def _grown(a, used):  # pragma: no cover - compiled
    """A copy of ``a`` twice as long, its first ``used`` entries kept (a stack or list that is full)."""
    out = np.empty(2 * len(a), a.dtype)
    out[:used] = a[:used]
    return out


@njit(cache=True, nogil=True)
def _plain_post_order(kind, offsets, child, order):  # pragma: no cover - compiled
    """Fills ``order`` with the depth-first post-order of the decision and chance nodes over
    the moves among them; False when they hold a cycle (a move back to a node on the path)."""
    n = len(kind)
    state = np.zeros(n, np.uint8)  # 0 new, 1 on the path, 2 done
    stack_node = np.empty(1024, np.int64)
    stack_edge = np.empty(1024, np.int64)
    filled = 0
    for root in range(n):
        if state[root] != 0 or not (kind[root] == _D or kind[root] == _C):
            continue
        state[root] = 1
        stack_node[0] = root
        stack_edge[0] = offsets[root]
        depth = 1
        while depth > 0:
            v = stack_node[depth - 1]
            e = stack_edge[depth - 1]
            if e < offsets[v + 1]:
                stack_edge[depth - 1] = e + 1
                w = child[e]
                if not (kind[w] == _D or kind[w] == _C):
                    continue
                if state[w] == 1:
                    return False
                if state[w] == 0:
                    if depth == len(stack_node):
                        stack_node = _grown(stack_node, depth)
                        stack_edge = _grown(stack_edge, depth)
                    state[w] = 1
                    stack_node[depth] = w
                    stack_edge[depth] = offsets[w]
                    depth += 1
                continue
            state[v] = 2
            order[filled] = v
            filled += 1
            depth -= 1
    return True


@njit(cache=True, nogil=True)
def _edge_value(i, lo, hi, kind, to_move, child, prob, has_prob, value):  # pragma: no cover - compiled
    """The Bellman right-hand side of decision (max) or chance (expectation) node ``i`` whose
    moves are the edges ``lo..hi`` of ``child`` (and ``prob``)."""
    if kind[i] == _D:
        best = -np.inf
        for e in range(lo, hi):
            c = child[e]
            q = value[c] if to_move[c] == to_move[i] else -value[c]
            if q > best:
                best = q
        return best
    t = 0.0
    for e in range(lo, hi):
        c = child[e]
        q = value[c] if to_move[c] == to_move[i] else -value[c]
        t += (prob[e] if has_prob else 1.0) * q
    return t


@njit(cache=True, nogil=True)
def _node_value(i, kind, to_move, offsets, child, prob, has_prob, value):  # pragma: no cover - compiled
    """The Bellman right-hand side of a decision (max) or chance (expectation) node."""
    return _edge_value(i, offsets[i], offsets[i + 1], kind, to_move, child, prob, has_prob, value)


@njit(cache=True, nogil=True)
def sweep_rows(rows, offsets, child, prob, has_prob, kind, to_move, value, write=True, moved=None):  # pragma: no cover - compiled
    """One Bellman update of the decision and chance nodes ``rows`` of a graph whose moves are
    given apart from it: row ``rows[j]``'s moves are the edges ``offsets[j]..offsets[j + 1]``
    of ``child`` (rows of the graph; ``prob`` their probabilities when ``has_prob``). ``kind``,
    ``to_move`` and ``value`` (own view) are the graph's; ``rows`` are updated in the order
    given, in place, and the largest change is returned (``write`` False: nothing written, the
    largest violation of the rows' equations, the certificate). The array function of
    :mod:`solver.pipeline.roundwise`, which expands the rows again from their keys each sweep
    instead of holding the graph's moves; the same arithmetic as :func:`solve_rounds`'s sweep.
    ``moved`` (``bool[n]``, optional): set where a written value changed at all."""
    res = 0.0
    for j in range(len(rows)):
        i = rows[j]
        new = _edge_value(i, offsets[j], offsets[j + 1], kind, to_move, child, prob, has_prob, value)
        d = abs(new - value[i])
        if d > res:
            res = d
        if write:
            if moved is not None and new != value[i]:
                moved[i] = True
            value[i] = new
    return res


@njit(cache=True, nogil=True)
def _sweep(order, kind, to_move, offsets, child, prob, has_prob, value, write=True):  # pragma: no cover - compiled
    """Backward induction over the decision and chance nodes (children first), in place;
    returns the largest change. ``write`` False: the values are left as they are, and the
    result is the largest violation of a node's equation by them (the certificate)."""
    res = 0.0
    for a in range(len(order)):
        i = order[a]
        new = _node_value(i, kind, to_move, offsets, child, prob, has_prob, value)
        d = abs(new - value[i])
        if d > res:
            res = d
        if write:
            value[i] = new
    return res


@njit(cache=True, nogil=True)
def _terminal_distance(order, sims, kind, offsets, child):  # pragma: no cover - compiled
    """Fewest moves from each position to a terminal (relaxed sweep after sweep in the value
    order until nothing changes); positions that reach none get the largest distance + 2 (1
    without terminals), as :func:`solver.engines.simultaneous._terminal_distance`."""
    n = len(kind)
    big = np.int32(2**31 - 1)
    dist = np.full(n, big, np.int32)
    any_terminal = False
    for i in range(n):
        if kind[i] == _T:
            dist[i] = 0
            any_terminal = True
    changed = True
    while changed:
        changed = _relax(order, offsets, child, dist, big)
        changed = _relax(sims, offsets, child, dist, big) or changed
    last = -1
    for i in range(n):
        if dist[i] != big and dist[i] > last:
            last = dist[i]
    far = last + 2 if any_terminal else 1
    for i in range(n):
        if dist[i] == big:
            dist[i] = far
    return dist


@njit(cache=True, nogil=True)
def relax_node(i, lo, hi, child, dist, big):  # pragma: no cover - compiled
    """``dist[i] = min(dist[i], 1 + min over its children)``, its moves the edges ``lo..hi`` of
    ``child`` (``big``: no end reached yet); True if it fell. Also the array function of
    :mod:`solver.pipeline.roundwise`'s distances."""
    low = dist[i]
    for e in range(lo, hi):
        d = dist[child[e]]
        if d != big and d + 1 < low:
            low = d + 1
    if low < dist[i]:
        dist[i] = low
        return True
    return False


@njit(cache=True, nogil=True)
def _relax(rows, offsets, child, dist, big):  # pragma: no cover - compiled
    """One pass of ``dist[i] = min(dist[i], 1 + min over children)`` over ``rows``; True if any
    distance fell."""
    changed = False
    for a in range(len(rows)):
        i = rows[a]
        if relax_node(i, offsets[i], offsets[i + 1], child, dist, big):
            changed = True
    return changed


@njit(cache=True, nogil=True)
def _best_moves(order, kind, to_move, offsets, child, comp, cyclic, dist, g, value):  # pragma: no cover - compiled
    """At each decision node the first move with the largest tie-broken value: a move that stays
    in the node's cyclic component counts ``1 - g * (1 + distance of its child)`` times its
    value; ``int64[n]`` edge indices, -1 elsewhere."""
    best = np.full(len(kind), -1, np.int64)
    for a in range(len(order)):
        i = order[a]
        if kind[i] != _D:
            continue
        top = -np.inf
        pick = -1
        for e in range(offsets[i], offsets[i + 1]):
            c = child[e]
            q = value[c] if to_move[c] == to_move[i] else -value[c]
            if cyclic[comp[i]] and comp[c] == comp[i]:
                q = q * (1.0 - g * (1.0 + dist[c]))
            if pick < 0 or q > top:
                top = q
                pick = e
        best[i] = pick
    return best


@njit(cache=True, nogil=True)
def _policy_sweep(order, kind, to_move, offsets, child, prob, has_prob, best, p_win, p_loss):  # pragma: no cover - compiled
    """Win and loss probabilities of the decision and chance nodes under the best moves, one
    pass children first, in place; returns the largest change."""
    res = 0.0
    for a in range(len(order)):
        i = order[a]
        w = 0.0
        l = 0.0
        if kind[i] == _D:
            c = child[best[i]]
            if to_move[c] == to_move[i]:
                w, l = p_win[c], p_loss[c]
            else:
                w, l = p_loss[c], p_win[c]
        else:
            for e in range(offsets[i], offsets[i + 1]):
                c = child[e]
                p = prob[e] if has_prob else 1.0
                if to_move[c] == to_move[i]:
                    w += p * p_win[c]
                    l += p * p_loss[c]
                else:
                    w += p * p_loss[c]
                    l += p * p_win[c]
        d = max(abs(w - p_win[i]), abs(l - p_loss[i]))
        if d > res:
            res = d
        p_win[i] = w
        p_loss[i] = l
    return res


def _joint_probabilities(block: SimBlock, strategies: dict[int, tuple[np.ndarray, np.ndarray]]) -> list[np.ndarray]:
    """Per shape group of ``block``, ``k x r x c``: the probability of each joint choice."""
    out = []
    for pos, edges, r, c in block.groups:
        joint = np.empty(edges.shape)
        for k, node in enumerate(block.nodes[pos].tolist()):
            x, y = strategies[node]
            joint[k] = np.outer(x, y)
        out.append(joint)
    return out


def _policy_sims(block: SimBlock, joint: list[np.ndarray], child: np.ndarray, to_move: np.ndarray,
                 p_win: np.ndarray, p_loss: np.ndarray) -> float:
    """Win and loss probabilities of the simultaneous nodes under the mixes, in place; returns
    the largest change."""
    res = 0.0
    for (pos, edges, _, _), pj in zip(block.groups, joint):
        nodes = block.nodes[pos]
        ch = child[edges]
        same = to_move[ch] == to_move[nodes][:, None, None]
        w = (pj * np.where(same, p_win[ch], p_loss[ch])).sum(axis=(1, 2))
        l = (pj * np.where(same, p_loss[ch], p_win[ch])).sum(axis=(1, 2))
        res = max(res, float(np.abs(w - p_win[nodes]).max()), float(np.abs(l - p_loss[nodes]).max()))
        p_win[nodes], p_loss[nodes] = w, l
    return res


#: the walks of :func:`_round_policy` give up past this many steps per move of the graph (a
#: round with chance nodes can branch; Petal Battle's rounds are single paths under the policy)
WALK_STEPS_PER_MOVE = 8


def _round_policy(block: SimBlock, joint: list[np.ndarray], kind, to_move, offsets, child, prob, has_prob,
                  best, end_win, end_loss) -> tuple[np.ndarray, np.ndarray] | None:
    """Win and loss probabilities of the simultaneous nodes under the strategies, exactly.

    Play from a round start under the fixed mixes and best moves reaches, within its round
    (no cycle among the decision and chance nodes), either an end or another round start. So
    the round starts' probabilities solve a linear system of their own: ``W_s = b_s + sum m
    W_t`` (``L`` where the side to move changes), with ``m`` the chance that play from ``s``
    reaches round start ``t`` first. The walks from every round start find ``m`` and ``b``;
    a sparse direct solve gives the rest (round starts that never reach an end get 0, endless
    play). ``None`` when the walks would take too long (then the sweeps alone converge)."""
    nodes = block.nodes
    k = len(nodes)
    if k == 0:
        return np.empty(0), np.empty(0)
    local = np.full(len(kind), -1, np.int32 if len(kind) < 2**31 - 1 else np.int64)  # 4 bytes a position
    local[nodes] = np.arange(k)
    first = np.zeros(k + 1, np.int64)  # each round start's joint choices in ``flat``
    np.cumsum(np.diff(offsets)[nodes], out=first[1:])
    flat = np.zeros(int(first[-1]))
    for (pos, edges, _, _), pj in zip(block.groups, joint):
        at = first[pos][:, None] + np.arange(edges.shape[1] * edges.shape[2])[None, :]
        flat[at.ravel()] = pj.reshape(len(pos), -1).ravel()
    budget = WALK_STEPS_PER_MOVE * len(child) + 1_000_000
    found = _walk_rounds(nodes, local, first, flat, kind, to_move, offsets, child, prob, has_prob, best,
                         end_win, end_loss, budget)
    if found is None:
        return None
    rows, cols, vals, swap, b_win, b_loss, b_end = found
    keep = reaching(k, rows, cols, np.flatnonzero(b_end > 0))
    both_rows = np.concatenate([rows, rows + k])
    both_cols = np.concatenate([np.where(swap, cols + k, cols), np.where(swap, cols, cols + k)])
    entries = [both_rows, both_cols, np.concatenate([vals, vals]), np.concatenate([b_win, b_loss])]
    del rows, cols, vals, swap, both_rows, both_cols
    x = linear_solve(2 * k, entries, np.concatenate([keep, keep]), np.zeros(2 * k, bool))
    if x is None:
        return None
    return np.clip(x[:k], 0.0, 1.0), np.clip(x[k:], 0.0, 1.0)


@njit(cache=True, nogil=True)
def _walk_rounds(nodes, local, first, flat, kind, to_move, offsets, child, prob, has_prob, best,
                 end_win, end_loss, budget):  # pragma: no cover - compiled
    """From every round start, play under the policy to the ends and next round starts it
    reaches first: entries ``(rows, cols, vals, swap)`` (``swap``: the side to move differs
    there) and per round start ``b_win``, ``b_loss`` (ends, seen from it) and ``b_end`` (the
    chance of an end). ``None`` past ``budget`` steps."""
    k = len(nodes)
    b_win = np.zeros(k)
    b_loss = np.zeros(k)
    b_end = np.zeros(k)
    cap = max(16, 4 * k)
    rows = np.empty(cap, np.int64)
    cols = np.empty(cap, np.int64)
    vals = np.empty(cap)
    swap = np.empty(cap, np.bool_)
    filled = 0
    st_node = np.empty(64, np.int64)
    st_mass = np.empty(64)
    st_flip = np.empty(64, np.bool_)
    steps = 0
    for a in range(k):
        s = nodes[a]
        for t in range(first[a + 1] - first[a]):
            p = flat[first[a] + t]
            if p <= 0.0:
                continue
            depth = 0
            st_node[0] = child[offsets[s] + t]
            st_mass[0] = p
            st_flip[0] = to_move[st_node[0]] != to_move[s]
            depth = 1
            while depth > 0:
                steps += 1
                if steps > budget:
                    return None
                depth -= 1
                v = st_node[depth]
                m = st_mass[depth]
                f = st_flip[depth]
                kv = kind[v]
                if kv == _T:
                    b_end[a] += m
                    if f:
                        b_win[a] += m * end_loss[v]
                        b_loss[a] += m * end_win[v]
                    else:
                        b_win[a] += m * end_win[v]
                        b_loss[a] += m * end_loss[v]
                elif kv == _D or kv == _C:
                    lo = offsets[v]
                    hi = offsets[v + 1]
                    if kv == _D:
                        lo = best[v]
                        hi = lo + 1
                    for e in range(lo, hi):
                        q = m if kv == _D else m * (prob[e] if has_prob else 1.0)
                        if q <= 0.0:
                            continue
                        if depth == len(st_node):
                            st_node = _grown(st_node, depth)
                            st_mass = _grown(st_mass, depth)
                            st_flip = _grown(st_flip, depth)
                        c = child[e]
                        st_node[depth] = c
                        st_mass[depth] = q
                        st_flip[depth] = f != (to_move[c] != to_move[v])
                        depth += 1
                else:  # the next round start
                    if filled == len(rows):
                        rows = _grown(rows, filled)
                        cols = _grown(cols, filled)
                        vals = _grown(vals, filled)
                        swap = _grown(swap, filled)
                    rows[filled] = a
                    cols[filled] = local[v]
                    vals[filled] = m
                    swap[filled] = f
                    filled += 1
    return rows[:filled], cols[:filled], vals[:filled], swap[:filled], b_win, b_loss, b_end
