"""Value iteration for graphs with simultaneous nodes (zero-sum stochastic games).

:func:`~solver.engines.value_iteration.value_iteration` sends every graph with a simultaneous
node here; the graph may mix decision, chance, simultaneous and terminal nodes, with cycles
(a *recursive game* in Everett's sense: results only at terminals, endless play counts 0).

Values are **expected results from the side to move** (``graph.to_move``), as in
:mod:`~solver.engines.value_iteration`. At a simultaneous node player 0 picks a row and player
1 a column at once; the joint actions are the node's edges, row-major, with ``graph.sim_rows``
rows. The node's **matrix game** has entry ``(i, j)`` = player 0's value of child ``i * cols + j``
(the child's value, negated when player 1 is to move there); the node's stored value is the
matrix game's value for player 0, negated when its own ``to_move`` is player 1.

How it is solved
----------------
1. The schedule of :mod:`~solver.engines.stochastic` (tiers from the highest, strongly
   connected components in topological order). **Acyclic layers are exact**: decision and
   chance nodes by backward induction, simultaneous nodes by one matrix game each (an LP,
   unless a saddle point or the 2 x 2 formula answers it), all of a layer in one batched call
   of :func:`~solver.engines.matrix_game.solve_matrix_games`. So a graph whose simultaneous
   nodes lie on no cycle is solved exactly, with no sweeps.
2. Cyclic components **without** simultaneous nodes use the exact machinery of the other engine
   (discounted sweeps finished by strategy iteration:
   :func:`~solver.engines.stochastic.iterate_loop`; see :mod:`~solver.engines.value_iteration`).
3. Cyclic components **with** simultaneous nodes: **Shapley's value iteration** from 0,
   Gauss-Seidel: first the decision and chance nodes, then the simultaneous block, whose matrix
   games are solved in one batch per shape (a node is re-solved only when its matrix moved by
   more than ``tol / 10`` since its last solve, which changes its value by at most that), until
   the largest change of a sweep is below ``tol`` (at least :data:`TOL_FLOOR`, the precision of
   the matrix-game solutions). When the moves among the component's decision and chance nodes
   form no cycle (every cycle passes a simultaneous node, as in games whose rounds start with a
   secret choice), these are evaluated **level by level** from the lowest, like backward
   induction given the simultaneous nodes' values (a compiled pass, :func:`_sweep_levels`), so
   one sweep carries new values across a whole round (Petal Battle 4 petals: 44 sweeps instead
   of 497); otherwise block by node kind (chance, then decision; :data:`LEVEL_SWEEPS` False
   forces that).

   What this relies on: starting from 0, the ``n``-th iterate is the value of the game cut off
   after ``n`` moves (unfinished play counts 0). The Shapley operator is monotone and moves no
   value by more than its input moved, and for finite zero-sum stochastic games the limit of
   the ``n``-stage values exists and is the value of the infinite game (Bewley-Kohlberg 1976,
   Mertens-Neyman 1981; for recursive games already Everett 1957). **No discount** is used here:
   the other engine's tiny discount (``1 - 1e-9``) gives no useful contraction (sweeps would
   still need ~1e9 steps to feel it) and a large one would change the values; strategy
   iteration, which makes that engine exact, has no counterpart for simultaneous moves that
   terminates in general. Convergence is geometric when every cycle can end by chance, but can
   be **slow** otherwise: in Everett's "quit or continue" game the iterates are
   ``n / (n + 1)``, so a small change per sweep does not bound the distance to the value
   (reported as not converged when ``max_sweeps`` runs out; ``stats["error_estimate"]``
   extrapolates the last changes, which flags such slow tails).
4. **Strategies** from the final values: each decision node takes its best move; each
   simultaneous node both players' optimal mixed strategies of its matrix game
   (:attr:`StochasticSolution.strategies`). Undiscounted values tie where staying in a loop
   is worth as much as leaving it, and a strategy that stays never collects; so moves that stay
   in a cyclic component are perturbed towards 0 by less than 1e-6, more the farther their
   child is from an end (:func:`_tie_break_scale`). The side that gains then leaves, and a side
   that can only force the end by mixing mixes (strategies in loops are therefore optimal up to
   that perturbation; outside loops they are exact).
5. **Win/loss probabilities** of the side to move under those strategies: a simultaneous node
   with fixed mixed strategies is a chance node with probabilities ``x_i * y_j``, so the exact
   policy evaluation both engines share (:func:`~solver.engines.stochastic.evaluate_policy`)
   computes them. In recursive games optimal *stationary*
   strategies need not exist (Everett), so ``p_win - p_loss`` can fall short of the value; its
   largest distance is ``stats["policy_gap"]``. The stored ``value`` is the iterated value.
6. **Certificate** (absolute threshold :data:`CERTIFICATE_THRESHOLD`, not scaled by ``tol``):
   every stored value satisfies its Bellman equation -- the max at decision nodes, the
   expectation at chance nodes, and at simultaneous nodes the matrix-game value **re-solved by
   LP** from the stored child values. Limitation: in cyclic components this proves the values
   are a fixed point, not that they are *the* value (an undiscounted game can have other fixed
   points, e.g. on loops nobody leaves); the iteration from 0 is what picks the right one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
from numba import njit

from solver.core.game import NodeKind
from solver.engines.graph import Graph
from solver.engines.matrix_game import CHUNK, solve_matrix_games
from solver.engines.stochastic import (
    Progress,
    StochasticSolution,
    build_schedule,
    combine,
    edge_max,
    edges_of,
    evaluate_policy,
    first_best,
    group_max,
    iterate_loop,
    prepare,
    terminal_ends,
    validate_tol,
)

#: matrix games are solved to about this precision (HiGHS at 1e-10 tolerances, strategies
#: checked to 1e-9): a smaller ``tol`` cannot be met by the sweeps, so they use this floor
#: (``stats["effective_tol"]``), and re-solve a node only when its matrix moved by a tenth of it
TOL_FLOOR = 1e-9

#: a value is certified when it is within this of its Bellman equation (absolute, not ``tol``)
CERTIFICATE_THRESHOLD = 1e-6
#: progress is reported every this many sweeps of a cyclic component
PROGRESS_EVERY = 100
#: order the sweeps of a cyclic component by levels when its decision and chance nodes form no
#: cycle among themselves (see :func:`_shapley_loop`); False forces block Gauss-Seidel by node
#: kind (the tests compare both)
LEVEL_SWEEPS = True
#: evaluate the levels of a level sweep by the compiled kernel :func:`_sweep_levels` (the same
#: arithmetic as :func:`_eval_plain_block` in the same order; False: numpy, level by level)
COMPILED_LEVELS = True

_DECISION = int(NodeKind.DECISION)
_CHANCE = int(NodeKind.CHANCE)
_SIMULTANEOUS = int(NodeKind.SIMULTANEOUS)
_TERMINAL = int(NodeKind.TERMINAL)


@dataclass
class Counters:
    """Matrix games solved (and LP calls, seconds) by :class:`SimBlock` s, summed by the caller."""

    matrix_games: int = 0
    lp_solves: int = 0
    lp_calls: int = 0
    lp_seconds: float = 0.0
    matrix_seconds: float = 0.0
    #: cyclic sets with simultaneous nodes whose other nodes also form cycles among themselves
    plain_cycles: int = 0

    def stats(self) -> dict[str, float]:
        """The counts as the engines' ``stats`` entries."""
        return {"lp_solves": self.lp_solves, "lp_calls": self.lp_calls, "lp_seconds": self.lp_seconds,
                "matrix_games": self.matrix_games, "matrix_game_seconds": self.matrix_seconds}


class SimBlock:
    """Simultaneous nodes grouped by matrix shape, with their last matrices cached.

    ``nodes``: rows of simultaneous nodes; ``offsets`` (``[n + 1]``), ``rows`` (player 0's
    actions at each row) and ``deg`` (moves of each row) are the graph's. Only the nodes' own
    moves are held (one ``int64`` each), so a block of a graph's few round starts is small."""

    def __init__(self, nodes: np.ndarray, offsets: np.ndarray, rows: np.ndarray, deg: np.ndarray) -> None:
        self.nodes = nodes
        r = rows[nodes].astype(np.int64)
        c = deg[nodes] // r
        self.groups: list[tuple[np.ndarray, np.ndarray, int, int]] = []  # (positions in nodes, edges k x r x c, r, c)
        shape_id = r * (int(c.max()) + 1 if len(c) else 1) + c
        for sid in np.unique(shape_id).tolist():
            pos = np.flatnonzero(shape_id == sid)
            rr, cc = int(r[pos[0]]), int(c[pos[0]])
            edges = offsets[nodes[pos]][:, None] + np.arange(rr * cc)[None, :]
            self.groups.append((pos, edges.reshape(len(pos), rr, cc), rr, cc))
        self.last: list[np.ndarray | None] = [None] * len(self.groups)

    def matrices(self, g: int, value: np.ndarray, child: np.ndarray, to_move: np.ndarray) -> np.ndarray:
        """``k x r x c``: the matrix games of group ``g`` (player 0's values of the children)."""
        ch = child[self.groups[g][1]]
        return value[ch] * np.where(to_move[ch] == 0, 1.0, -1.0)

    def solve(
        self,
        value: np.ndarray,
        child: np.ndarray,
        to_move: np.ndarray,
        counters: Counters,
        *,
        skip: float | None = None,
        strategies: dict[int, tuple[np.ndarray, np.ndarray]] | None = None,
        scale: Callable[[np.ndarray], np.ndarray] | None = None,
        guarantee: str | None = None,
    ) -> np.ndarray:
        """New values (own view) of the nodes, each from its own side to move (``to_move``,
        the graph's ``int8[n]``); with ``skip``, nodes whose matrix moved by at most ``skip``
        since their last solve keep ``value``. Fills ``strategies`` when given. ``scale`` maps
        an array of edges to factors that multiply those matrix entries (the tie-break
        discount). ``guarantee``: ``"lower"`` gives, instead of each game's value, what player
        0's optimal mix guarantees against every column (at most the value, by rounding only),
        ``"upper"`` what player 1's concedes against every row (at least the value): the
        values of proven bounds."""
        out = value[self.nodes].copy()
        t0 = time.perf_counter()
        for g, (pos, edges, _, _) in enumerate(self.groups):
            a = self.matrices(g, value, child, to_move)
            if scale is not None:
                a = a * scale(edges)
            todo = slice(None)
            if skip is not None and self.last[g] is not None:
                moved = np.abs(a - self.last[g]).max(axis=(1, 2)) > skip
                if not moved.any():
                    continue
                todo = np.flatnonzero(moved)
            batch = solve_matrix_games(a[todo], chunk=CHUNK)
            got = batch.value
            if guarantee == "lower":
                got = np.einsum("kr,krc->kc", batch.row, a[todo]).min(axis=1)
            elif guarantee == "upper":
                got = np.einsum("krc,kc->kr", a[todo], batch.col).max(axis=1)
            if skip is not None:
                if self.last[g] is None:
                    self.last[g] = a.copy()
                else:
                    self.last[g][todo] = a[todo]
            rows = pos[todo]
            out[rows] = got * np.where(to_move[self.nodes[rows]] == 0, 1.0, -1.0)
            counters.matrix_games += len(batch)
            counters.lp_solves += batch.lp_solves
            counters.lp_calls += batch.lp_calls
            counters.lp_seconds += batch.lp_seconds
            if strategies is not None:
                for k, node in enumerate(self.nodes[rows].tolist()):
                    strategies[node] = (batch.row[k], batch.col[k])
        counters.matrix_seconds += time.perf_counter() - t0
        return out


def sim_matrix_rows(graph: Graph, kind: np.ndarray, deg: np.ndarray) -> np.ndarray:
    """``int64[n]`` rows of each simultaneous node's matrix, checked."""
    sim = kind == _SIMULTANEOUS
    if graph.sim_rows is None:
        raise ValueError(
            "the graph has simultaneous nodes but no sim_rows (the number of player 0's actions "
            "at each); build it with enumerate_positions from a game whose expand fills it"
        )
    rows = np.asarray(graph.sim_rows, dtype=np.int64)
    if len(rows) != graph.n:
        raise ValueError(f"sim_rows has {len(rows)} entries for {graph.n} positions")
    r = rows[sim]
    if np.any(r < 1) or np.any(deg[sim] % np.maximum(r, 1) != 0):
        bad = int(np.flatnonzero(sim)[np.flatnonzero((r < 1) | (deg[sim] % np.maximum(r, 1) != 0))[0]])
        raise ValueError(
            f"simultaneous position {int(graph.keys[bad])}: {int(deg[bad])} joint actions do not "
            f"form a matrix with {int(rows[bad])} rows"
        )
    return rows


def simultaneous_node_values(
    graph: Graph, value: np.ndarray, nodes: np.ndarray | None = None
) -> tuple[np.ndarray, dict[int, tuple[np.ndarray, np.ndarray]]]:
    """The matrix-game value of simultaneous nodes from the given values of their children.

    Parameters
    ----------
    graph : Graph
        A graph with ``sim_rows``.
    value : numpy.ndarray
        ``float64[n]`` values from each position's side to move.
    nodes : numpy.ndarray, optional
        Rows of simultaneous nodes (default: all of them).

    Returns
    -------
    (values, strategies)
        ``float64[len(nodes)]`` each node's matrix-game value from its own side to move, and
        row -> ``(x, y)`` both players' optimal mixed strategies.
    """
    kind = np.asarray(graph.kind, dtype=np.int64)
    offsets = np.asarray(graph.offsets, dtype=np.int64)
    deg = np.diff(offsets)
    rows = sim_matrix_rows(graph, kind, deg)
    if nodes is None:
        nodes = np.flatnonzero(kind == _SIMULTANEOUS)
    nodes = np.asarray(nodes, dtype=np.int64)
    if np.any(kind[nodes] != _SIMULTANEOUS):
        raise ValueError("simultaneous_node_values: a given row is not a simultaneous node")
    strategies: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    block = SimBlock(nodes, offsets, rows, deg)
    full = np.asarray(value, dtype=np.float64)
    vals = block.solve(full, np.asarray(graph.child), np.asarray(graph.to_move), Counters(),
                       strategies=strategies)
    return vals, strategies


def solve_simultaneous(
    graph: Graph,
    *,
    tiers: np.ndarray | None = None,
    tol: float = 1e-12,
    max_sweeps: int = 100_000,
    discount_gap: float = 1e-9,
    warmup_sweeps: int = 40,
    progress: Progress | None = None,
    terminal_probs: tuple[np.ndarray, np.ndarray] | None = None,
    terminal_value: np.ndarray | None = None,
) -> StochasticSolution:
    """Solve a graph with simultaneous (and chance, decision, terminal) nodes and cycles.

    Parameters
    ----------
    graph : Graph
        Every position and move, with ``graph.sim_rows`` (from
        :func:`~solver.engines.enumerate.enumerate_positions`).
    tiers : numpy.ndarray, optional
        ``int[n]`` tier of every position (never falling along a move); ``None``: one tier.
    tol : float
        Stop iterating a cyclic component when the largest change of a sweep is below this
        (finite, above 0).
    max_sweeps : int
        Give up on a component after this many sweeps (``converged`` is then False).
    discount_gap, warmup_sweeps : float, int
        For cyclic components without simultaneous nodes (see
        :func:`~solver.engines.value_iteration.value_iteration`); Shapley iteration itself is
        undiscounted, and ties in loops are broken by :func:`_tie_break_scale`.
    progress : callable, optional
        Called as ``progress(stage, tier, sweeps, residual)`` after each tier and every
        :data:`PROGRESS_EVERY` sweeps of a cyclic component (``residual``: the last change).
    terminal_probs : (numpy.ndarray, numpy.ndarray), optional
        ``float64[n]`` win and loss probabilities of the side to move at terminal rows, in place
        of ``graph.result``: positions outside the graph whose values are already known (the
        ``outside`` boundary of :func:`solver.engines.components.solve_chance`), as for
        :func:`~solver.engines.value_iteration.value_iteration`.
    terminal_value : numpy.ndarray, optional
        ``float64[n]``: the value of those terminal rows, where it is not ``p_win - p_loss`` (a
        finished position of a recursive game whose optimal stationary strategies fall short of
        its value; see *Win/loss probabilities* above). Default: ``p_win - p_loss``.

    Returns
    -------
    StochasticSolution
        ``value`` (the iterated values), ``p_win``/``p_loss`` under the returned strategies,
        ``best`` at decision nodes, ``strategies`` at simultaneous nodes; ``stats`` has
        ``certified``, ``residual``, ``sweeps``, ``lp_solves``, ``lp_seconds``,
        ``policy_gap`` and more.
    """
    validate_tol(tol)
    asked_tol, tol = tol, max(tol, TOL_FLOOR)
    t_start = time.perf_counter()
    prep = prepare(graph, tiers)
    sys = prep.sys
    kind, offsets, child, deg, parent = prep.kind, prep.offsets, prep.child, prep.deg, prep.parent
    rows = sim_matrix_rows(graph, kind, deg)
    to_move = np.asarray(prep.to_move, dtype=np.int64)
    schedule = build_schedule(sys, prep.tiers)
    loop_id = schedule.loop_id
    looping = (loop_id[parent] >= 0) & (loop_id[parent] == loop_id[child])
    terminal = kind == _TERMINAL
    end_win, end_loss = terminal_ends(graph.result, terminal, terminal_probs)
    ends = end_win - end_loss if terminal_value is None else np.asarray(terminal_value, dtype=np.float64)
    value = np.where(terminal, ends, 0.0)
    del ends
    weight = prep.sign * prep.prob
    lam = 1.0 - discount_gap
    counters = Counters()
    skip = tol / 10

    sweeps_total = 0
    error_estimate = 0.0
    last_change = 0.0
    converged = True
    per_tier: dict[int, dict[str, float]] = {}
    in_loop = np.zeros(sys.n, dtype=bool)
    current_tier = None
    for layer in schedule.layers:
        if current_tier is not None and layer.tier != current_tier and progress is not None:
            progress("value", current_tier, sweeps_total, last_change)
        current_tier = layer.tier
        st = per_tier.setdefault(layer.tier, {"positions": 0, "cyclic": 0, "sweeps": 0, "residual": 0.0})
        st["positions"] += len(layer.flat) + len(layer.loop)
        st["cyclic"] += len(layer.loop)
        if len(layer.flat):
            _flat_layer(sys, layer.flat, value, weight, child, to_move, offsets, rows, deg, counters)
        if len(layer.loop):
            nodes = layer.loop
            if not np.any(kind[nodes] == _SIMULTANEOUS):
                sw, res, ok, _ = iterate_loop(
                    sys, nodes, value, weight, lam, None, in_loop, tol, max_sweeps, warmup_sweeps
                )
            else:
                sw, res, ok, est = _shapley_loop(
                    sys, nodes, value, weight, to_move, rows, counters, in_loop, tol, skip,
                    max_sweeps, progress, layer.tier, sweeps_total,
                )
                error_estimate = max(error_estimate, est)
            sweeps_total += sw
            last_change = max(last_change, res)
            converged &= ok
            st["sweeps"] += sw
            st["residual"] = max(st["residual"], res)
    if current_tier is not None and progress is not None:
        progress("value", current_tier, sweeps_total, last_change)

    # strategies ---------------------------------------------------------------------------
    # (each per-move array is let go as soon as it is used: one float per move is 56 bytes a
    # position in Petal Battle 6-2, and five of them were alive at once here)
    scale = _tie_break_scale(sys, parent, looping)
    q = weight * value[child]
    q *= scale
    best = first_best(kind, parent, offsets, deg, q)
    del q
    sim_nodes = np.flatnonzero(kind == _SIMULTANEOUS)
    strategies: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    final_block = SimBlock(sim_nodes, offsets, rows, deg)
    if np.any(looping & (kind[parent] == _SIMULTANEOUS)):
        final = final_block.solve(value, child, to_move, counters)
        # the strategies: the same matrix games with the tie-break discount on moves that stay
        # in a loop (see _tie_break_scale). Exact for saddle points and 2 x 2 games; an LP may
        # not see a difference this small.
        final_block.solve(value, child, to_move, counters, strategies=strategies, scale=lambda e: scale[e])
    else:
        final = final_block.solve(value, child, to_move, counters, strategies=strategies)
    del scale, looping

    # certificate: Bellman equations of the stored values, simultaneous nodes re-solved by LP --
    certificate = np.zeros(sys.n)
    if len(child):
        qv = weight * value[child]
        top = edge_max(qv, offsets, deg)
        mean = np.bincount(parent, weights=qv, minlength=sys.n)
        del qv
        rhs = np.where(kind == _DECISION, top, mean)
        del top, mean
        plain = (kind == _DECISION) | (kind == _CHANCE)
        certificate[plain] = np.abs(rhs[plain] - value[plain])
        del rhs
    del weight
    certificate[sim_nodes] = np.abs(final - value[sim_nodes])
    residual = float(certificate.max()) if sys.n else 0.0
    # A fixed point of the Bellman equations is not always the value: where decision/chance
    # nodes cycle among themselves next to simultaneous nodes, a player can wait in the loop and
    # time a move to beat the horizon of the n-stage iterates, whose limit then differs from the
    # value (a random game found by hypothesis: 0.2 instead of 0). Such solutions are not
    # certified; every cycle of Petal Battle passes through a round start, so its are.
    certified = residual <= CERTIFICATE_THRESHOLD and counters.plain_cycles == 0

    # win/loss probabilities under the strategies: simultaneous nodes as chance nodes ----------
    prob = prep.prob.copy()
    sim_edge = kind[parent] == _SIMULTANEOUS
    for node, (x, y) in strategies.items():
        o = int(offsets[node])
        prob[o : o + len(x) * len(y)] = np.outer(x, y).ravel()
    chosen = np.zeros(len(child), dtype=bool)
    chosen[best[best >= 0]] = True
    active = prep.chance_edge | chosen | (sim_edge & (prob > 0))
    p_win = end_win.copy()
    p_loss = end_loss.copy()
    pol_sweeps, pol_res, pol_conv = evaluate_policy(
        sys, schedule, p_win, p_loss, prob, prep.same, active, tol=tol, max_sweeps=max_sweeps,
        progress=progress,
    )
    policy_gap = float(np.abs(p_win - p_loss - value).max()) if sys.n else 0.0

    stats = {
        "tiers": per_tier,
        "components": schedule.stats,
        "sweeps": sweeps_total,
        "last_sweep_change": last_change,
        "error_estimate": error_estimate,
        "certified": certified,
        "residual": residual,
        "plain_cycles": counters.plain_cycles,
        "certificate_threshold": CERTIFICATE_THRESHOLD,
        **counters.stats(),
        "simultaneous_nodes": len(sim_nodes),
        "policy_sweeps": pol_sweeps,
        "policy_residual": pol_res,
        "policy_gap": policy_gap,
        "tol": asked_tol,
        "effective_tol": tol,
        "seconds": time.perf_counter() - t_start,
    }
    return StochasticSolution(
        value=value, p_win=p_win, p_loss=p_loss, best=best, sweeps=sweeps_total,
        residual=residual, converged=bool(converged and certified and pol_conv), stats=stats,
        strategies=strategies,
    )


def _tie_break_scale(sys, parent: np.ndarray, looping: np.ndarray) -> np.ndarray:
    """Per edge, the factor applied to child values when picking strategies (not values).

    Undiscounted values tie where staying in a loop is worth as much as leaving it (a loop
    nobody has to leave fits any value), and a strategy that picks the loop never collects.
    So moves that stay inside a cyclic component are discounted by ``1 - g * (1 + d)``, with
    ``d`` the child's fewest moves to a terminal and ``g`` such that no factor falls below
    ``1 - 1e-6``: among equally good moves the side that gains takes the one nearer an end, the
    side that loses delays (endless play would give it 0). At simultaneous nodes this also turns
    ties into the mixing that forces an end (e.g. a player who wins if the other does not match
    a loop must mix, though at the undiscounted values a pure reply looks as good); the LPs use
    tight tolerances (1e-10), so differences of this size count. A heuristic: what
    the strategies earn is measured (``p_win``, ``p_loss``, ``stats["policy_gap"]``).
    """
    dist = _terminal_distance(sys.offsets, sys.child, sys.kind == _TERMINAL)
    g = 1e-6 / (2.0 + float(dist.max(initial=0)))
    return np.where(looping, 1.0 - g * (1.0 + dist[sys.child]), 1.0)


def _flat_layer(sys, nodes, value, weight, child, to_move, offsets, rows, deg, counters) -> None:
    """An acyclic layer, exactly: children are final, so one pass (one batch of matrix games)."""
    kind = sys.kind
    sim = kind[nodes] == _SIMULTANEOUS
    plain = nodes[~sim]
    if len(plain):
        e, loc = edges_of(sys, plain, None)
        m = len(plain)
        value[plain] = combine(kind[plain], loc, weight[e] * value[child[e]], m, np.zeros(m),
                                np.full(m, -np.inf))
    if sim.any():
        sn = nodes[sim]
        value[sn] = SimBlock(sn, offsets, rows, deg).solve(value, child, to_move, counters)


def _plain_block(sys, bn: np.ndarray, in_loop: np.ndarray, value: np.ndarray, weight: np.ndarray) -> tuple:
    """Precomputed arrays to evaluate the decision/chance nodes ``bn`` (sorted) of a cyclic set
    again and again: the contributions of edges leaving the set (``in_loop`` False) are final
    and summed / maxed once; the edges inside are kept as flat arrays grouped by node."""
    # (temporaries are let go as soon as they are used: each is one number a move of the set)
    e, loc = edges_of(sys, bn, None)
    ch = sys.child[e]
    w = weight[e]
    del e
    internal = in_loop[ch]
    ext = ~internal
    contrib_ext = w[ext] * value[ch[ext]]
    m = len(bn)
    loc_ext = loc[ext]
    del ext
    base_sum = np.bincount(loc_ext, weights=contrib_ext, minlength=m)
    base_max = group_max(loc_ext, contrib_ext, m)
    del loc_ext, contrib_ext
    bloc = loc[internal]
    del loc
    bch = ch[internal]
    del ch
    bw = w[internal]
    del w, internal
    starts = np.flatnonzero(np.r_[True, bloc[1:] != bloc[:-1]]) if len(bloc) else bloc
    dec = sys.kind[bn] == _DECISION
    mode = _DECISION if dec.all() else (_CHANCE if not dec.any() else -1)
    return bn, mode, dec, bloc, bch, bw, base_sum, base_max, starts, bloc[starts]


def _eval_plain_block(block: tuple, value: np.ndarray) -> np.ndarray:
    """New values of a block of :func:`_plain_block`: chance nodes the expectation, decision
    nodes the max over their moves, from the current ``value``."""
    bn, mode, dec, bloc, bch, bw, base_sum, base_max, starts, owners = block
    contrib = bw * value[bch]
    if mode == _CHANCE:
        return base_sum + np.bincount(bloc, weights=contrib, minlength=len(bn))
    if mode == _DECISION:
        new = base_max.copy()
    else:
        new = np.where(dec, base_max, base_sum + np.bincount(bloc, weights=contrib, minlength=len(bn)))
    if len(starts):
        seg = np.maximum.reduceat(contrib, starts)
        if mode != _DECISION:
            keep = dec[owners]
            owners, seg = owners[keep], seg[keep]
        new[owners] = np.maximum(base_max[owners], seg)
    return new


def _plain_levels(sys, nodes: np.ndarray, plain: np.ndarray) -> list[np.ndarray] | None:
    """The decision/chance nodes ``plain`` of the cyclic set ``nodes`` by height (longest path
    to a node that has no move to another of them), lowest first, when the moves among them
    form no cycle; ``None`` when they do (then only block Gauss-Seidel applies)."""
    m = len(plain)
    if m == 0:
        return []
    local = np.full(sys.n, -1, dtype=np.int64)
    local[plain] = np.arange(m)
    height = _plain_heights(sys.offsets, sys.child, plain, local)
    if height is None or (m and height.min() < 0):
        return None
    order = np.argsort(height, kind="stable")
    bounds = np.searchsorted(height[order], np.arange(int(height.max()) + 2))
    return [plain[order[bounds[k] : bounds[k + 1]]] for k in range(len(bounds) - 1)]


def _level_arrays(block: tuple) -> tuple:
    """A block of :func:`_plain_block` (nodes in level order) as flat arrays for
    :func:`_sweep_levels`."""
    bn, _, dec, bloc, bch, bw, base_sum, base_max, _, _ = block
    iptr = np.zeros(len(bn) + 1, dtype=np.int64)
    np.cumsum(np.bincount(bloc, minlength=len(bn)), out=iptr[1:])
    return (bn.astype(np.int64, copy=False), dec, base_sum, base_max, iptr,
            bch.astype(np.int64, copy=False), bw.astype(np.float64, copy=False))


@njit(cache=True, nogil=True)
def _sweep_levels(order, dec, base_sum, base_max, iptr, ich, iw, value):  # pragma: no cover - compiled
    """One level sweep of the decision and chance nodes, in place: ``order`` lowest level
    first (no node moves to one of its own level, so updating in place is level by level);
    chance nodes ``base_sum`` + their inside moves summed in order, decision nodes the max of
    ``base_max`` and their inside moves, as :func:`_eval_plain_block`. Returns the largest
    change."""
    res = 0.0
    for a in range(len(order)):
        i = order[a]
        if dec[a]:
            new = base_max[a]
            if iptr[a + 1] > iptr[a]:
                seg = iw[iptr[a]] * value[ich[iptr[a]]]
                for k in range(iptr[a] + 1, iptr[a + 1]):
                    c = iw[k] * value[ich[k]]
                    if c > seg:
                        seg = c
                if seg > new:
                    new = seg
        else:
            t = 0.0
            for k in range(iptr[a], iptr[a + 1]):
                t += iw[k] * value[ich[k]]
            new = base_sum[a] + t
        d = abs(new - value[i])
        if d > res:
            res = d
        value[i] = new
    return res


@njit(cache=True, nogil=True)
def _terminal_distance(offsets, child, terminal):  # pragma: no cover - compiled
    """Fewest moves from each position to a terminal (breadth-first search over reverse
    moves from all terminals); positions that reach none get the largest distance + 2 (1
    without terminals), as the level-by-level search of earlier versions did."""
    n = len(terminal)
    rcount = np.zeros(n + 1, dtype=np.int64)
    for e in range(len(child)):
        rcount[child[e] + 1] += 1
    for i in range(n):
        rcount[i + 1] += rcount[i]
    fill = rcount[:-1].copy()
    preds = np.empty(len(child), dtype=np.int64)
    for i in range(n):
        for e in range(offsets[i], offsets[i + 1]):
            c = child[e]
            preds[fill[c]] = i
            fill[c] += 1
    dist = np.full(n, -1, dtype=np.int64)
    queue = np.empty(n, dtype=np.int64)
    tail = 0
    for i in range(n):
        if terminal[i]:
            dist[i] = 0
            queue[tail] = i
            tail += 1
    head = 0
    last = -1
    while head < tail:
        v = queue[head]
        head += 1
        last = dist[v]
        for k in range(rcount[v], rcount[v + 1]):
            p = preds[k]
            if dist[p] < 0:
                dist[p] = dist[v] + 1
                queue[tail] = p
                tail += 1
    far = last + 2 if tail > 0 else 1
    for i in range(n):
        if dist[i] < 0:
            dist[i] = far
    return dist


@njit(cache=True, nogil=True)
def _plain_heights(offsets, child, plain, local):  # pragma: no cover - compiled
    """Per node of ``plain``, the longest path (in moves among them; ``local`` maps a row to
    its index in ``plain`` or -1) to one with no such move; -1 everywhere if they hold a cycle."""
    m = len(plain)
    outdeg = np.zeros(m, dtype=np.int64)
    rcount = np.zeros(m + 1, dtype=np.int64)
    for a in range(m):
        i = plain[a]
        for e in range(offsets[i], offsets[i + 1]):
            b = local[child[e]]
            if b >= 0:
                outdeg[a] += 1
                rcount[b + 1] += 1
    for b in range(m):
        rcount[b + 1] += rcount[b]
    fill = rcount[:-1].copy()
    preds = np.empty(rcount[m], dtype=np.int64)
    for a in range(m):
        i = plain[a]
        for e in range(offsets[i], offsets[i + 1]):
            b = local[child[e]]
            if b >= 0:
                preds[fill[b]] = a
                fill[b] += 1
    height = np.full(m, -1, dtype=np.int64)
    queue = np.empty(m, dtype=np.int64)
    tail = 0
    for a in range(m):
        if outdeg[a] == 0:
            height[a] = 0
            queue[tail] = a
            tail += 1
    head = 0
    while head < tail:  # Kahn's order: a node is queued once all its moves are done
        b = queue[head]
        head += 1
        for k in range(rcount[b], rcount[b + 1]):
            a = preds[k]
            if height[a] < height[b] + 1:
                height[a] = height[b] + 1
            outdeg[a] -= 1
            if outdeg[a] == 0:
                queue[tail] = a
                tail += 1
    if tail < m:
        height[:] = -1
    return height


def _shapley_loop(
    sys, nodes, value, weight, to_move, rows, counters, in_loop, tol, skip, max_sweeps, progress,
    tier, sweeps_before,
) -> tuple[int, float, bool, float]:
    """Shapley value iteration (undiscounted, Gauss-Seidel) on a cyclic set that holds
    simultaneous nodes. Returns ``(sweeps, last change, converged, error estimate)``, the
    estimate extrapolating the last two changes as a geometric tail (a hint, not a bound: it
    is about right for geometric and for Everett's 1/n convergence).

    Order of a sweep: when the moves among the set's decision and chance nodes form no cycle
    (every cycle passes through a simultaneous node, e.g. a round of a game that starts with a
    secret choice), those nodes are evaluated level by level from the lowest (exactly like
    backward induction, once the simultaneous nodes' values are given), then the simultaneous
    block; a sweep then carries the new values across a whole round. Otherwise (or with
    :data:`LEVEL_SWEEPS` off) block Gauss-Seidel by node kind: chance, decision, simultaneous.
    """
    kind = sys.kind
    child = sys.child
    in_loop[nodes] = True
    value[nodes] = 0.0  # the 0-stage values: start of the n-stage iterates
    node_kind = kind[nodes]
    sim = node_kind == _SIMULTANEOUS
    plain_levels = _plain_levels(sys, nodes, nodes[~sim]) if np.any(~sim) else []
    if plain_levels is None:  # the decision/chance nodes cycle among themselves
        counters.plain_cycles += 1
    levels = plain_levels if LEVEL_SWEEPS else None
    if levels is not None:
        groups = levels
    else:
        groups = [nodes[node_kind == k] for k in (_CHANCE, _DECISION)]
    compiled = None
    if levels is not None and COMPILED_LEVELS and sum(len(lv) for lv in levels):
        # one block in level order (lowest first): what the kernel walks through
        compiled = _level_arrays(_plain_block(sys, np.concatenate(levels), in_loop, value, weight))
        blocks = []
    else:
        blocks = [_plain_block(sys, bn, in_loop, value, weight) for bn in groups if len(bn)]
    sim_block = SimBlock(nodes[sim], sys.offsets, rows, sys.deg)

    def sweep() -> float:
        res = 0.0
        if compiled is not None:
            res = _sweep_levels(*compiled, value)
        else:
            for block in blocks:
                bn = block[0]
                new = _eval_plain_block(block, value)
                res = max(res, float(np.abs(new - value[bn]).max()))
                value[bn] = new
        sn = sim_block.nodes
        new = sim_block.solve(value, child, to_move, counters, skip=skip)
        res = max(res, float(np.abs(new - value[sn]).max()))
        value[sn] = new
        return res

    sweeps = 0
    change = previous = np.inf
    while sweeps < max_sweeps:
        previous, change = change, sweep()
        sweeps += 1
        if change < tol:
            break
        if progress is not None and sweeps % PROGRESS_EVERY == 0:
            progress("value", tier, sweeps_before + sweeps, change)
    in_loop[nodes] = False
    # distance to the limit if the changes kept shrinking at their last ratio (geometric tail)
    ratio = change / previous if np.isfinite(previous) and previous > 0 else 0.0
    estimate = 0.0 if change == 0 else (change * ratio / (1 - ratio) if ratio < 1 else np.inf)
    return sweeps, float(change), bool(change < tol), float(estimate)
