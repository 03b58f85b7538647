"""Value iteration: expected results of games with chance nodes and cycles.

Works on the integer-keyed :class:`~solver.engines.graph.Graph` (the same arrays the
retrograde engine uses) and knows nothing about any particular game.

Values are **expected results from the side to move**: +1 win, -1 loss, 0 tie or endless play.

* terminal: the result of ``to_move`` (``graph.result``);
* decision: ``v = max_e s_e * v[child_e]``;
* chance: ``v = sum_e p_e * s_e * v[child_e]``;

where ``s_e = +1`` when the child's ``to_move`` is the parent's (the same player keeps the turn,
or a chance node decides for the player who moves next) and ``-1`` otherwise.

How it is solved
----------------
1. **Tiers** (optional, e.g. pyramids on the board): edges may only stay in a tier or go to a
   higher one, so tiers are solved from the highest down and iteration never crosses tiers.
2. Inside a tier the strongly connected components of the positions are found
   (:func:`scipy.sparse.csgraph.connected_components`) and ordered by the longest path to the
   tier's exits. Components without cycles are computed **exactly**, in that order (backward
   induction in topological order: an acyclic graph needs no iteration at all).
3. Cyclic components are solved by **block Gauss-Seidel sweeps** (one block per node kind, so in
   a game that alternates chance and decision nodes every sweep carries new values a full turn)
   until the largest change of a sweep is below ``tol``. Inside a cyclic component every move
   is discounted by ``1 - discount_gap`` (1e-9): without it, the equations have spurious
   solutions on loops (a loop of "wait" moves fits any constant), and plain iteration from 0
   converges to the limit of finite-horizon games, where a player who may wait can time a move
   to beat the horizon. The discounted equations have one solution, and its strategies are those
   of the undiscounted game once the discount is small enough (Blackwell). After
   ``warmup_sweeps`` sweeps a component is finished by **strategy iteration** (Hoffman-Karp:
   player 1 best-responds by policy iteration, then player 0 improves, until neither can; each
   strategy pair evaluated exactly by a sparse LU solve with the decision rows eliminated), which
   ends after finitely many steps even where sweeps would need millions (long games under
   optimal play, and the tiny discount). A last sweep measures the remaining change.
4. **Strategies and exact values**: each decision node takes its best move under those values
   (the first of equally good moves; where a player is indifferent, e.g. between endless play
   and a fair gamble, the win probabilities depend on that choice, the value does not). The **win and loss probabilities** of both sides following these
   strategies solve a linear system (exact on acyclic layers, a sparse solve polished by sweeps
   on cyclic ones; positions the strategies never leave count as endless play), and the stored
   value is exactly ``p_win - p_loss``: what the strategies earn, without any discount.
5. **Certificate**: (a) every value satisfies its undiscounted Bellman equation (``residual``),
   and (b) against each side's strategy the other side cannot keep the game going for ever
   among positions where the first side was promised more than 0 (end components). (a) and (b)
   prove that each side's strategy guarantees the values, so they are the values of the game.
   If a check fails, the discount is made 1000 times smaller and the sweeps go on from the last
   values (``max_rounds``); ``stats["certified"]`` and ``stats["rounds"]`` report it.

The schedule, the exact acyclic layers, the sweeps with strategy iteration and the policy
evaluation are the shared core in :mod:`solver.engines.stochastic`. Graphs with **simultaneous
nodes** go to :func:`solver.engines.simultaneous.solve_simultaneous` (Shapley's value iteration
with a matrix game per simultaneous node, solved by linear programming in
:mod:`solver.engines.matrix_game`), which uses the same core.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from solver.core.game import NodeKind
from solver.engines.graph import Graph
from solver.engines.simultaneous import simultaneous_node_values, solve_simultaneous  # noqa: F401 - re-export
from solver.engines.stochastic import (
    Progress,
    Schedule,
    StochasticSolution,
    System,
    build_schedule,
    combine,
    edge_max,
    edges_of,
    evaluate_policy,
    first_best,
    index_dtype,
    iterate_loop,
    prepare,
    terminal_ends,
    validate_tol,
)

_DECISION = int(NodeKind.DECISION)
_CHANCE = int(NodeKind.CHANCE)
_SIMULTANEOUS = int(NodeKind.SIMULTANEOUS)
_TERMINAL = int(NodeKind.TERMINAL)

#: the certificate's threshold: absolute, so a loose ``tol`` cannot certify loose values
CERTIFICATE_TOL = 1e-9


def edge_values(graph: Graph, solution: StochasticSolution, row: int) -> list[tuple[int, float, float, float, float]]:
    """The moves (or chance outcomes) of position ``row`` with what they are worth to its mover.

    Returns ``(edge index, probability, value, p_win, p_loss)`` per edge in the order of the
    game's actions (probability 1.0 at decision nodes), all from the point of view of the player
    to move at ``row``. Sort by ``value`` for "best first".
    """
    out = []
    me = int(graph.to_move[row])
    chance = int(graph.kind[row]) == _CHANCE
    for e in range(int(graph.offsets[row]), int(graph.offsets[row + 1])):
        c = int(graph.child[e])
        p = float(graph.probs[e]) if (chance and graph.probs is not None) else 1.0
        if int(graph.to_move[c]) == me:
            out.append((e, p, float(solution.value[c]), float(solution.p_win[c]), float(solution.p_loss[c])))
        else:
            out.append((e, p, -float(solution.value[c]), float(solution.p_loss[c]), float(solution.p_win[c])))
    return out


def value_iteration(
    graph: Graph,
    *,
    tiers: np.ndarray | None = None,
    tol: float = 1e-12,
    max_sweeps: int = 100_000,
    discount_gap: float = 1e-9,
    warmup_sweeps: int = 40,
    max_rounds: int = 3,
    progress: Progress | None = None,
    terminal_probs: tuple[np.ndarray, np.ndarray] | None = None,
) -> StochasticSolution:
    """Solve a graph with chance nodes and cycles for expected results and win probabilities.

    Parameters
    ----------
    graph : Graph
        Every position and move (from :func:`~solver.engines.enumerate.enumerate_positions`).
    tiers : numpy.ndarray, optional
        ``int[n]`` tier of every position; every edge must stay in its tier or go to a higher
        one (checked). Solved from the highest tier down. ``None``: one tier. (A caller that
        has the game passes ``game.tier_of(graph.keys)`` when ``game.has_tiers``.)
    tol : float
        Stop iterating a cyclic component when the largest change of a sweep is below this.
        Must be finite and above 0.
    max_sweeps : int
        Give up on a component after this many sweeps (``converged`` is then False).
    discount_gap : float
        Moves inside cyclic components are discounted by ``1 - discount_gap`` while iterating
        (see the module docstring); the stored values are undiscounted.
    warmup_sweeps : int
        Sweeps of a cyclic component before strategy iteration finishes it exactly. 0 = sweeps
        only (for tests; very slow inside loops because the discount is tiny).
    max_rounds : int
        Rounds with a 1000 times smaller discount while the certificate fails.
    progress : callable, optional
        Called as ``progress(stage, tier, sweeps, residual)`` after each tier of each stage.
    terminal_probs : (numpy.ndarray, numpy.ndarray), optional
        ``float64[n]`` win and loss probabilities of the side to move at terminal rows, in place
        of ``graph.result`` (whose sign they then replace). Real payoffs at the ends
        (``graph.payoff``) are solved as :func:`_real_payoffs` says. The tiered solver passes the
        finished values of other tiers this way: each position of another tier that a move
        reaches is a terminal row of the tier's graph (:mod:`solver.pipeline.tiered_chance`).

    Returns
    -------
    StochasticSolution

    Notes
    -----
    A graph with simultaneous nodes (``graph.sim_rows`` required) is solved by
    :func:`solver.engines.simultaneous.solve_simultaneous` with the same options
    (``max_rounds`` does not apply there).
    """
    validate_tol(tol)
    if graph.payoff is not None and terminal_probs is None:
        return _real_payoffs(graph, tiers=tiers, tol=tol, max_sweeps=max_sweeps, discount_gap=discount_gap,
                             warmup_sweeps=warmup_sweeps, max_rounds=max_rounds, progress=progress)
    if np.any(np.asarray(graph.kind) == _SIMULTANEOUS):
        return solve_simultaneous(
            graph, tiers=tiers, tol=tol, max_sweeps=max_sweeps, discount_gap=discount_gap,
            warmup_sweeps=warmup_sweeps, progress=progress, terminal_probs=terminal_probs,
        )
    n = graph.n
    prep = prepare(graph, tiers)
    kind, offsets, child, deg, parent = prep.kind, prep.offsets, prep.child, prep.deg, prep.parent
    to_move, same, chance_edge, prob, tiers = (
        prep.to_move, prep.same, prep.chance_edge, prep.prob, prep.tiers
    )
    sys = prep.sys
    schedule = build_schedule(sys, tiers)
    loop_id = schedule.loop_id

    terminal = kind == _TERMINAL
    end_win, end_loss = terminal_ends(graph.result, terminal, terminal_probs)
    result = end_win - end_loss
    check_tol = CERTIFICATE_TOL
    value = np.where(terminal, result, 0.0)
    del result  # one float per position, not used past here
    # the sign of each move's child times its probability, computed for the moves asked for
    # (one float per move is not held for the whole solve)
    weight = _SignedProbs(same, prob)
    sweeps = pol_sweeps = 0
    per_tier: dict[int, dict[str, float]] = {}
    rounds: list[dict[str, float]] = []
    certified = False
    for round_ in range(max(1, max_rounds)):
        lam = 1.0 - discount_gap * 1e-3**round_
        # 1. discounted values (exact on acyclic layers, sweeps on cyclic ones) ------------
        sw, sweep_change, converged, tiers_stats = _solve(
            sys, schedule, value, weight, lam, tol=tol, max_sweeps=max_sweeps,
            stage="value", progress=progress, warmup_sweeps=warmup_sweeps,
        )
        sweeps += sw
        for t_, st in tiers_stats.items():
            acc = per_tier.setdefault(t_, {})
            for k_, v_ in st.items():
                acc[k_] = max(acc.get(k_, 0), v_) if k_ == "residual" else acc.get(k_, 0) + v_

        # 2. strategies: the best move of every decision node --------------------------------
        best = _best_moves(sys, parent, loop_id, weight, value, lam)

        # 3. what those strategies earn: win/loss probabilities, undiscounted ----------------
        active = chance_edge.copy()
        active[best[best >= 0]] = True
        p_win, p_loss = end_win.copy(), end_loss.copy()
        sw, pol_res, pol_conv = evaluate_policy(
            sys, schedule, p_win, p_loss, prob, same, active, tol=tol, max_sweeps=max_sweeps,
            progress=progress,
        )
        pol_sweeps += sw
        payoff = p_win - p_loss

        # 4. certificate ------------------------------------------------------------------------
        bellman = _bellman_residual(sys, parent, same, prob, payoff)
        trapped = [
            int(_endless_traps(sys, parent, to_move, payoff, best, player, check_tol).sum())
            for player in (0, 1)
        ]
        rounds.append({"discount_gap": 1.0 - lam, "last_sweep_change": sweep_change,
                       "bellman_residual": bellman, "trapped_0": trapped[0], "trapped_1": trapped[1]})
        if bellman <= check_tol and not any(trapped):
            certified = True
            break

    stats = {
        "tiers": per_tier,
        "components": schedule.stats,
        "rounds": len(rounds),
        "certificate": rounds,
        "certified": certified,
        "policy_sweeps": pol_sweeps,
        "policy_residual": pol_res,
        "tol": tol,
    }
    return StochasticSolution(
        value=payoff, p_win=p_win, p_loss=p_loss, best=best, sweeps=sweeps, residual=bellman,
        converged=converged and pol_conv and certified, stats=stats,
    )


class _SignedProbs:
    """``np.where(same, prob, -prob)`` (each move's probability with the sign of its child's
    value: + when the child has the same side to move, - otherwise), computed for the moves
    indexed (``weight[e]``, ``weight[:]`` for all) instead of held: one float64 per move less
    for the whole solve, with the same values (a negation is exact)."""

    def __init__(self, same: np.ndarray, prob: np.ndarray) -> None:
        self.same, self.prob = same, prob

    def __getitem__(self, e: Any) -> np.ndarray:
        p = self.prob[e]
        return np.where(self.same[e], p, -p)


def _position_blocks(offsets: np.ndarray, n: int, block: int) -> Any:
    """``(a, b, e0, e1)``: consecutive blocks of positions ``a:b`` whose moves ``e0:e1`` number
    about ``block`` (at least one position each), covering every position once."""
    a = 0
    while a < n:
        b = int(np.searchsorted(offsets, offsets[a] + block, side="right")) - 1
        b = min(max(b, a + 1), n)
        yield a, b, int(offsets[a]), int(offsets[b])
        a = b


def _best_moves(sys: System, parent: np.ndarray, loop_id: np.ndarray, weight: "_SignedProbs", value: np.ndarray,
                lam: float, block: int = 1 << 20) -> np.ndarray:
    """``int64[n]``: each decision node's first best move under ``value`` (moves inside a cyclic
    component discounted by ``lam``), -1 elsewhere. Computed over blocks of positions with about
    ``block`` moves each: the products are those of the whole-array computation, in the same
    order, without three floats per move held at once."""
    best = np.full(sys.n, -1, dtype=np.int64)
    for a, b, e0, e1 in _position_blocks(sys.offsets, sys.n, block):
        ch, par = sys.child[e0:e1], parent[e0:e1]
        q = weight[e0:e1]
        q *= value[ch]
        looping = (loop_id[par] >= 0) & (loop_id[par] == loop_id[ch])
        q *= np.where(looping, lam, 1.0)
        got = first_best(sys.kind[a:b], par - a, sys.offsets[a : b + 1] - e0, sys.deg[a:b], q)
        best[a:b] = np.where(got >= 0, got + e0, -1)
    return best


def _bellman_residual(sys: System, parent: np.ndarray, same: np.ndarray, prob: np.ndarray, value: np.ndarray,
                      block: int = 1 << 22) -> float:
    """Largest ``|v - (max or expectation over the moves)|`` over the non-terminal positions.
    Computed over blocks of positions with about ``block`` moves each, so its per-move
    temporaries stay small (it runs when the solver's memory is at its peak)."""
    if not len(sys.child):
        return 0.0
    worst = 0.0
    for a, b, e0, e1 in _position_blocks(sys.offsets, sys.n, block):
        q = value[sys.child[e0:e1]]
        q = np.where(same[e0:e1], q, -q)
        best = edge_max(q, sys.offsets[a : b + 1] - e0, sys.deg[a:b])
        mean = np.bincount(parent[e0:e1] - a, weights=prob[e0:e1] * q, minlength=b - a)
        kind = sys.kind[a:b]
        inner = kind != _TERMINAL
        if inner.any():
            rhs = np.where(kind == _DECISION, best, mean)
            worst = max(worst, float(np.max(np.abs(rhs[inner] - value[a:b][inner]))))
    return worst


def _endless_traps(
    sys: System,
    parent: np.ndarray,
    to_move: np.ndarray,
    value: np.ndarray,
    best: np.ndarray,
    player: int,
    thresh: float,
) -> np.ndarray:
    """Positions where ``player``'s opponent can keep the game going for ever against
    ``player``'s fixed moves although ``player`` was promised more than 0 there.

    These are the end components (sets the play can stay in for ever: chance nodes and
    ``player``'s chosen moves stay inside, the opponent has a move that stays) among the
    positions worth more than ``thresh`` to ``player``; found by repeated strongly connected
    components, removing positions that cannot stay.
    """
    kind = sys.kind
    n = sys.n
    child = sys.child
    mine = np.where(to_move == player, value, -value)
    alive = (kind != _TERMINAL) & (mine > thresh)
    if not alive.any():
        return alive
    own_dec = (kind == _DECISION) & (to_move == player)
    relevant = np.ones(len(child), dtype=bool)
    own_edge = own_dec[parent]
    relevant[own_edge] = False
    chosen = best[own_dec]
    relevant[chosen[chosen >= 0]] = True
    must_all = (kind == _CHANCE) | own_dec  # every relevant move must stay inside
    need = np.bincount(parent, weights=relevant.astype(np.float64), minlength=n)
    while True:
        e = np.flatnonzero(relevant & alive[parent] & alive[child])
        idx = np.flatnonzero(alive)
        pos = np.full(n, -1, dtype=index_dtype(n))  # int32 while it fits: two arrays per move
        pos[idx] = np.arange(len(idx))
        src, dst = pos[parent[e]], pos[child[e]]
        mat = csr_matrix((np.ones(len(e), dtype=np.int8), (src, dst)), shape=(len(idx), len(idx)))
        _, label = connected_components(mat, directed=True, connection="strong")
        del mat
        inside = label[src] == label[dst]
        stay = np.bincount(parent[e[inside]], minlength=n)
        ok = np.where(must_all, stay >= need, stay >= 1)
        new_alive = alive & ok
        if np.array_equal(new_alive, alive):
            return alive
        alive = new_alive
        if not alive.any():
            return alive


def _solve(
    sys: System,
    schedule: Schedule,
    value: np.ndarray,
    weight: np.ndarray,
    lam: float,
    *,
    tol: float,
    max_sweeps: int,
    stage: str,
    progress: Progress | None,
    active: np.ndarray | None = None,
    warmup_sweeps: int = 10,
) -> tuple[int, float, bool, dict[int, dict[str, float]]]:
    """Solve ``v = max/sum_e weight_e * v[child_e]`` in place, layer by layer.

    Decision nodes take the max over their (active) edges, chance nodes the weighted sum;
    edges inside a cyclic component are discounted by ``lam``.
    Returns ``(sweeps, largest final residual, converged, per-tier stats)``.
    """
    kind = sys.kind
    sweeps_total = 0
    residual_max = 0.0
    converged = True
    per_tier: dict[int, dict[str, float]] = {}
    in_loop = np.zeros(sys.n, dtype=bool)
    current_tier = None
    for layer in schedule.layers:
        if current_tier is not None and layer.tier != current_tier and progress is not None:
            progress(stage, current_tier, sweeps_total, residual_max)
        current_tier = layer.tier
        stats = per_tier.setdefault(layer.tier, {"positions": 0, "cyclic": 0, "sweeps": 0, "residual": 0.0})
        stats["positions"] += len(layer.flat) + len(layer.loop)
        stats["cyclic"] += len(layer.loop)
        if len(layer.flat):
            nodes = layer.flat
            e, loc = edges_of(sys, nodes, active)
            contrib = weight[e] * value[sys.child[e]]
            m = len(nodes)
            value[nodes] = combine(kind[nodes], loc, contrib, m, np.zeros(m), np.full(m, -np.inf))
        if len(layer.loop):
            sw, res, ok, kept = iterate_loop(
                sys, layer.loop, value, weight, lam, active, in_loop, tol, max_sweeps, warmup_sweeps
            )
            stats["evaluations"] = stats.get("evaluations", 0) + kept
            sweeps_total += sw
            residual_max = max(residual_max, res)
            converged &= ok
            stats["sweeps"] += sw
            stats["residual"] = max(stats["residual"], res)
    if current_tier is not None and progress is not None:
        progress(stage, current_tier, sweeps_total, residual_max)
    return sweeps_total, residual_max, converged, per_tier


def _real_payoffs(graph: Graph, **options: Any) -> StochasticSolution:
    """Real payoffs at the ends (``graph.payoff``, :attr:`~solver.core.game.Outcome.payoffs`):
    the expected payoff, maximised by each side.

    Every end's payoff ``u`` is written as a lottery between a win and a loss, won with
    probability ``(1 + u / M) / 2`` (``M`` the largest ``|u|``): its expected result is ``u / M``
    exactly, and expectations, maxima and matrix-game values all commute with the positive
    scale ``M``, so the engine's expected results times ``M`` are the expected payoffs, the
    strategies and best moves are the same, and the certificate's absolute thresholds become
    relative to ``M``. Win and loss probabilities mean nothing here: they are NaN.
    """
    terminal = np.asarray(graph.kind) == _TERMINAL
    u = np.where(terminal, np.asarray(graph.payoff, dtype=np.float64), 0.0)
    if not np.all(np.isfinite(u)):
        raise ValueError("a terminal payoff is not finite")
    scale = float(np.abs(u).max()) or 1.0
    w = np.where(terminal, (1.0 + u / scale) / 2.0, 0.0)
    probs = (w, np.where(terminal, 1.0 - w, 0.0))
    sol = value_iteration(graph, terminal_probs=probs, **options)
    nan = np.full(graph.n, np.nan)
    sol.value = sol.value * scale
    sol.p_win, sol.p_loss = nan, nan.copy()
    sol.residual = sol.residual * scale
    sol.stats["payoff_scale"] = scale
    return sol
