"""The value-iteration engine (solver/engines/value_iteration.py) on small hand-built graphs.

Every expected value is worked out by hand in the comments, or computed by an independent
reference written here: backward induction for acyclic graphs, and for cyclic graphs the
max-min over all positional strategy pairs, each pair evaluated as an absorbing Markov chain
(perfect-information stochastic games with terminal payoffs have optimal positional strategies).
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass

import numpy as np
import pytest

from solver.core.game import NodeKind
from solver.engines.graph import Graph
from solver.engines.value_iteration import edge_values, value_iteration

D, C, T, SIM = NodeKind.DECISION, NodeKind.CHANCE, NodeKind.TERMINAL, NodeKind.SIMULTANEOUS


@dataclass
class Node:
    kind: int
    to_move: int
    result: int = 0  # terminals: result of to_move (+1 win, -1 loss, 0 tie)
    edges: tuple[tuple[int, float], ...] = ()  # (child, probability; 1.0 at decision nodes)


def make_graph(nodes: list[Node]) -> Graph:
    """A Graph whose row i is ``nodes[i]`` (keys 0..n-1, root 0)."""
    n = len(nodes)
    offsets = np.zeros(n + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(x.edges) for x in nodes])
    child = np.array([c for x in nodes for c, _ in x.edges], dtype=np.int64)
    probs = np.array([p for x in nodes for _, p in x.edges], dtype=np.float64)
    return Graph(
        keys=np.arange(n, dtype=np.uint64),
        kind=np.array([x.kind for x in nodes], dtype=np.int8),
        to_move=np.array([x.to_move for x in nodes], dtype=np.int8),
        ply=np.zeros(n, dtype=np.uint16),
        offsets=offsets,
        child=child,
        probs=probs,
        result=np.array([x.result for x in nodes], dtype=np.int8),
        margin=np.zeros(n, dtype=np.int32),
        root=0,
        symmetry=False,
    )


def test_hand_worked_acyclic_tree() -> None:
    # 0 chance (P0): 1/2 -> 1, 1/2 -> 2
    # 1 decision (P0): -> 3 (terminal, P1 to move, P1 lost: +1 for P0) or -> 4
    # 2 decision (P0): -> 4 or -> 7 (terminal, P0 to move, P0 lost: -1)
    # 4 chance (P1): 1/3 -> 5 (terminal, P0 to move, P0 won), 2/3 -> 6 (terminal tie)
    # v(4) for P1 = 1/3 * (-1) + 2/3 * 0 = -1/3, so 4 is worth +1/3 to P0.
    # v(1) = max(+1, 1/3) = 1; v(2) = max(1/3, -1) = 1/3; v(0) = (1 + 1/3) / 2 = 2/3.
    # Win probabilities: via 1 P0 wins surely; via 2 P0 wins 1/3 and ties 2/3:
    # p_win(0) = 1/2 + 1/6 = 2/3, p_loss(0) = 0.
    g = make_graph([
        Node(C, 0, edges=((1, 0.5), (2, 0.5))),
        Node(D, 0, edges=((3, 1.0), (4, 1.0))),
        Node(D, 0, edges=((4, 1.0), (7, 1.0))),
        Node(T, 1, result=-1),
        Node(C, 1, edges=((5, 1 / 3), (6, 2 / 3))),
        Node(T, 0, result=1),
        Node(T, 0, result=0),
        Node(T, 0, result=-1),
    ])
    sol = value_iteration(g)
    assert sol.value == pytest.approx([2 / 3, 1, 1 / 3, -1, -1 / 3, 1, 0, -1], abs=1e-15)
    assert sol.p_win[0] == pytest.approx(2 / 3, abs=1e-15)
    assert sol.p_loss[0] == pytest.approx(0.0, abs=1e-15)
    assert sol.p_loss[4] == pytest.approx(1 / 3, abs=1e-15)  # P1 at 4 loses 1/3 of the time
    assert sol.best[1] == g.offsets[1] + 0 and sol.best[2] == g.offsets[2] + 0
    assert sol.best[0] == -1 and sol.best[3] == -1
    assert list(sol.local_best(g)[:3]) == [-1, 0, 0]
    # acyclic: backward induction only, no sweeps, Bellman equations hold to rounding
    assert sol.sweeps == 0 and sol.residual < 1e-15 and sol.converged
    # edge_values: the moves of 1 seen by its mover
    assert [round(v, 12) for _, _, v, _, _ in edge_values(g, sol, 1)] == [1.0, round(1 / 3, 12)]


def random_dag(rng: random.Random, n: int) -> list[Node]:
    """Children always have a larger index, so the graph is acyclic."""
    nodes: list[Node] = []
    for i in range(n):
        remaining = n - 1 - i
        if remaining == 0 or rng.random() < 0.25:
            nodes.append(Node(T, rng.randrange(2), result=rng.choice((-1, 0, 1))))
            continue
        k = rng.randint(1, min(3, remaining))
        kids = rng.sample(range(i + 1, n), k)
        if rng.random() < 0.5:
            weights = [rng.randint(1, 5) for _ in kids]
            total = sum(weights)
            nodes.append(Node(C, rng.randrange(2), edges=tuple((c, w / total) for c, w in zip(kids, weights))))
        else:
            nodes.append(Node(D, rng.randrange(2), edges=tuple((c, 1.0) for c in kids)))
    return nodes


def backward_induction(nodes: list[Node]) -> list[float]:
    """Reference: exact recursion from the last node back (children have larger indices)."""
    v = [0.0] * len(nodes)
    for i in range(len(nodes) - 1, -1, -1):
        x = nodes[i]
        if x.kind == T:
            v[i] = float(x.result)
            continue
        q = [(v[c] if nodes[c].to_move == x.to_move else -v[c], p) for c, p in x.edges]
        v[i] = max(a for a, _ in q) if x.kind == D else sum(a * p for a, p in q)
    return v


@pytest.mark.parametrize("seed", range(8))
def test_acyclic_random_graphs_equal_backward_induction(seed: int) -> None:
    rng = random.Random(seed)
    nodes = random_dag(rng, 60)
    g = make_graph(nodes)
    want = backward_induction(nodes)
    sol = value_iteration(g)
    assert sol.sweeps == 0
    assert np.allclose(sol.value, want, atol=1e-12)
    # any tiers that never fall along an edge give the same values (here: index // 7)
    tiers = np.arange(len(nodes)) // 7
    sol_t = value_iteration(g, tiers=tiers)
    assert np.allclose(sol_t.value, want, atol=1e-12)
    # win/loss probabilities: consistent with the values, never more than 1 together
    assert np.allclose(sol.p_win - sol.p_loss, sol.value, atol=1e-12)
    assert np.all(sol.p_win + sol.p_loss <= 1 + 1e-12)


def test_cyclic_dice_race() -> None:
    # Each player in turn wins with probability 1/3, else the other player rolls.
    # v = 1/3 + 2/3 * (-v)  =>  v = 1/5 for the player to roll.
    # P(the roller wins) = 1/3 + (2/3)^2 * P  =>  P = (1/3) / (5/9) = 3/5; loses 2/5.
    g = make_graph([
        Node(C, 0, edges=((2, 1 / 3), (1, 2 / 3))),
        Node(C, 1, edges=((3, 1 / 3), (0, 2 / 3))),
        Node(T, 1, result=-1),  # P0 has won
        Node(T, 0, result=-1),  # P1 has won
    ])
    for every in (0, 10):
        sol = value_iteration(g, warmup_sweeps=every)
        assert sol.stats["certified"]
        assert sol.value[0] == pytest.approx(0.2, abs=1e-11)
        assert sol.value[1] == pytest.approx(0.2, abs=1e-11)
        assert sol.p_win[0] == pytest.approx(0.6, abs=1e-11)
        assert sol.p_loss[0] == pytest.approx(0.4, abs=1e-11)
        assert sol.residual < 1e-12 and sol.converged
    # plain sweeps: the change shrinks by 2/3 per sweep, so 1e-12 needs dozens of sweeps and a
    # loose tolerance fewer; the stored values are what the (here trivial) strategies earn,
    # solved exactly, so they are 1/5 either way
    plain = value_iteration(g, warmup_sweeps=0)
    loose = value_iteration(g, warmup_sweeps=0, tol=1e-4)
    assert plain.sweeps > 20
    assert loose.sweeps < plain.sweeps
    assert loose.value[0] == pytest.approx(0.2, abs=1e-12)


def test_endless_play_is_zero() -> None:
    # 0 (P0) may go to 1 or give up (2: P1 to move, P1 won); 1 (P1) may go back to 0 or give
    # up (3: P0 to move, P0 won). Neither gives up: endless play, 0 for both, no winner.
    g = make_graph([
        Node(D, 0, edges=((1, 1.0), (2, 1.0))),
        Node(D, 1, edges=((0, 1.0), (3, 1.0))),
        Node(T, 1, result=1),
        Node(T, 0, result=1),
    ])
    sol = value_iteration(g)
    assert sol.value[:2] == pytest.approx([0.0, 0.0], abs=0)
    assert sol.p_win[:2] == pytest.approx([0.0, 0.0], abs=0)
    assert sol.p_loss[:2] == pytest.approx([0.0, 0.0], abs=0)
    assert sol.best[0] == g.offsets[0] and sol.best[1] == g.offsets[1]  # keep circling


def test_strategy_makes_progress_when_moves_tie() -> None:
    # 0 (P0): "wait" -> 1 (P1, whose only move returns to 0), or "try" -> 2, a chance node:
    # 1/2 P0 wins (3), 1/2 back to 0. Waiting and trying are both worth +1 (P0 wins in the end
    # by trying), but only trying ever wins: the chosen move must be "try", p_win(0) = 1.
    g = make_graph([
        Node(D, 0, edges=((1, 1.0), (2, 1.0))),
        Node(D, 1, edges=((0, 1.0),)),
        Node(C, 0, edges=((3, 0.5), (0, 0.5))),
        Node(T, 1, result=-1),
    ])
    sol = value_iteration(g)
    assert sol.value[0] == pytest.approx(1.0, abs=1e-11)
    assert sol.best[0] == g.offsets[0] + 1
    assert sol.p_win[0] == pytest.approx(1.0, abs=1e-11)
    assert sol.p_loss[1] == pytest.approx(1.0, abs=1e-11)  # P1 at 1 loses surely


def random_cyclic(rng: random.Random, n: int) -> list[Node]:
    nodes: list[Node] = []
    for i in range(n):
        if i >= n - 3:
            nodes.append(Node(T, rng.randrange(2), result=rng.choice((-1, 0, 1))))
        elif rng.random() < 0.4:
            kids = rng.sample(range(n), 2)
            w = rng.randint(1, 4)
            nodes.append(Node(C, rng.randrange(2), edges=((kids[0], w / 5), (kids[1], 1 - w / 5))))
        else:
            kids = rng.sample(range(n), 2)
            nodes.append(Node(D, rng.randrange(2), edges=((kids[0], 1.0), (kids[1], 1.0))))
    return nodes


def positional_minimax(nodes: list[Node]) -> np.ndarray:
    """Reference values (side to move) by brute force over positional strategies.

    For each pair (player 0's choices, player 1's choices) the game is a Markov chain: payoff to
    player 0 = P(reach a player-0 win) - P(reach a player-1 win), with 0 for never ending;
    positions that cannot reach a terminal under the pair are 0, the others solve a linear
    system. Value for player 0 at every node: max over player 0 of min over player 1.
    """
    n = len(nodes)
    dec = {p: [i for i, x in enumerate(nodes) if x.kind == D and x.to_move == p] for p in (0, 1)}
    payoff0 = np.array([0.0 if x.kind != T else (x.result if x.to_move == 0 else -x.result) for x in nodes])

    def evaluate(choice: dict[int, int]) -> np.ndarray:
        edges = {}
        for i, x in enumerate(nodes):
            if x.kind == C:
                edges[i] = list(x.edges)
            elif x.kind == D:
                edges[i] = [(x.edges[choice[i]][0], 1.0)]
        reach = {i for i, x in enumerate(nodes) if x.kind == T}
        changed = True
        while changed:
            changed = False
            for i, es in edges.items():
                if i not in reach and any(c in reach for c, _ in es):
                    reach.add(i)
                    changed = True
        live = [i for i in edges if i in reach]
        pos = {i: k for k, i in enumerate(live)}
        a = np.eye(len(live))
        b = np.zeros(len(live))
        for i in live:
            for c, p in edges[i]:
                if nodes[c].kind == T:
                    b[pos[i]] += p * payoff0[c]
                elif c in pos:
                    a[pos[i], pos[c]] -= p
        out = payoff0.copy()
        if live:
            x = np.linalg.solve(a, b)
            for i in live:
                out[i] = x[pos[i]]
        return out

    best0 = None
    for c0 in itertools.product(range(2), repeat=len(dec[0])):
        worst = None
        for c1 in itertools.product(range(2), repeat=len(dec[1])):
            choice = dict(zip(dec[0], c0)) | dict(zip(dec[1], c1))
            v = evaluate(choice)
            worst = v if worst is None else np.minimum(worst, v)
        best0 = worst if best0 is None else np.maximum(best0, worst)
    assert best0 is not None
    side = np.array([1.0 if x.to_move == 0 else -1.0 for x in nodes])
    return best0 * side


@pytest.mark.parametrize("seed", range(6))
def test_cyclic_random_graphs_equal_positional_minimax(seed: int) -> None:
    rng = random.Random(100 + seed)
    nodes = random_cyclic(rng, 11)
    g = make_graph(nodes)
    want = positional_minimax(nodes)
    for every in (1, 10):  # strategy iteration after 1 or 10 sweeps
        sol = value_iteration(g, warmup_sweeps=every)
        assert sol.stats["certified"]
        assert sol.converged
        assert np.allclose(sol.value, want, atol=1e-9), (every, sol.value, want)
        assert np.allclose(sol.p_win - sol.p_loss, sol.value, atol=1e-9)
        assert np.all(sol.p_win >= -1e-12) and np.all(sol.p_win + sol.p_loss <= 1 + 1e-9)


def test_tiers_must_not_fall() -> None:
    g = make_graph([Node(D, 0, edges=((1, 1.0),)), Node(T, 1, result=-1)])
    assert value_iteration(g, tiers=np.array([0, 1])).value[0] == 1.0
    with pytest.raises(ValueError, match="lower tier"):
        value_iteration(g, tiers=np.array([1, 0]))
    with pytest.raises(ValueError, match="entries"):
        value_iteration(g, tiers=np.array([0]))


def test_simultaneous_nodes_go_to_the_simultaneous_engine() -> None:
    # without sim_rows the matrix shape is unknown: a clear error
    g = make_graph([Node(SIM, 0, edges=((1, 1.0),)), Node(T, 0, result=1)])
    with pytest.raises(ValueError, match="sim_rows"):
        value_iteration(g)
    # a 1 x 1 matrix game is a forced move: the child's value
    g.sim_rows = np.array([1, 0], dtype=np.int32)
    sol = value_iteration(g)
    assert sol.value[0] == 1.0 and sol.stats["certified"]
    assert list(sol.strategies) == [0]


@pytest.mark.parametrize("tol", [0.0, -1e-3, float("nan"), float("inf")])
def test_tol_must_be_finite_and_positive(tol: float) -> None:
    g = make_graph([Node(D, 0, edges=((1, 1.0),)), Node(T, 1, result=-1)])
    with pytest.raises(ValueError, match="tol"):
        value_iteration(g, tol=tol)


def test_non_terminal_without_moves_is_rejected() -> None:
    g = make_graph([Node(D, 0)])
    with pytest.raises(ValueError, match="no moves"):
        value_iteration(g)


@pytest.mark.parametrize("seed", range(4))
def test_bellman_residual_in_blocks_equals_in_one_pass(seed: int) -> None:
    """The certificate's residual, computed over blocks of a few moves, is the one-pass value,
    for the solved values and for perturbed ones."""
    from solver.engines.stochastic import prepare
    from solver.engines.value_iteration import _bellman_residual

    rng = random.Random(300 + seed)
    g = make_graph(random_dag(rng, 60))
    prep = prepare(g, None)
    value = value_iteration(g).value
    noisy = value + np.random.default_rng(seed).normal(0, 0.1, len(value))
    for v in (value, noisy):
        whole = _bellman_residual(prep.sys, prep.parent, prep.same, prep.prob, v, block=1 << 30)
        for block in (1, 3, 7):
            assert _bellman_residual(prep.sys, prep.parent, prep.same, prep.prob, v, block=block) == whole
    assert _bellman_residual(prep.sys, prep.parent, prep.same, prep.prob, noisy) > 0.01


def test_more_components_than_int32_pairs_hold() -> None:
    """A tier with more than 46,341 strongly connected components: the pairs of component labels
    (``label * ncomp + label``) need 64 bits; in 32 they wrapped and mixed up the components'
    order. An acyclic graph of 80,000 positions (each its own component) equals
    backward induction."""
    rng = random.Random(5)
    nodes = random_dag(rng, 80_000)  # about 60,000 of them not final
    g = make_graph(nodes)
    want = backward_induction(nodes)
    sol = value_iteration(g)
    assert sol.sweeps == 0 and sol.converged
    assert np.allclose(sol.value, want, atol=1e-12)


def reaching_by_levels(m: int, src: np.ndarray, dst: np.ndarray, sources: np.ndarray) -> np.ndarray:
    """The nodes that reach a source, found level by level in numpy (the engines' earlier code)."""
    reach = np.zeros(m, dtype=bool)
    frontier = np.unique(sources)
    reach[frontier] = True
    while len(frontier):
        p = np.unique(src[np.isin(dst, frontier)])
        p = p[~reach[p]]
        reach[p] = True
        frontier = p
    return reach


@pytest.mark.parametrize("seed", range(30))
def test_compiled_reaching_equals_a_search_by_levels(seed: int) -> None:
    from solver.engines.stochastic import reaching

    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 60))
    e = int(rng.integers(0, 3 * m))
    src = rng.integers(0, m, e).astype(np.int32 if seed % 2 else np.int64)
    dst = rng.integers(0, m, e).astype(src.dtype)
    sources = rng.integers(0, m, int(rng.integers(0, 4)))
    got = reaching(m, src, dst, sources)
    assert got.dtype == bool and np.array_equal(got, reaching_by_levels(m, src, dst, sources))
