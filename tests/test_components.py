"""solver.engines.components: the chance engine component by component, with an outside boundary.

1. Tarjan's kernel against scipy: the same components, listed children first (every move of a
   component leads into it or into one listed before it), on random graphs with moves outside.
2. The chunks cut only between components and cover every position once.
3. Values: on random chance games with cycles (decision and chance nodes, endless play), the
   component-by-component solve equals the whole-graph engine, and the brute force over
   positional strategies, for chunks of 1 position up to the whole graph.
4. The boundary: a graph split in two (the part its moves reach solved first, then the rest
   with that part as its ``outside``) gives the whole graph's values.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from solver.core.arrays import FloatCoder
from solver.engines.components import Outside, scc_order, solve_chance
from solver.engines.value_iteration import value_iteration
from tests.test_value_iteration import C, D, make_graph, positional_minimax, random_cyclic
from tests.budget import examples


@settings(max_examples=examples(200), deadline=None)
@given(n=st.integers(1, 30), data=st.data())
def test_tarjan_same_components_as_scipy_children_first(n, data):
    deg = data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    offsets = np.concatenate([[0], np.cumsum(deg)]).astype(np.int64)
    # children among the n rows, and some past them (outside: ignored by the kernel)
    child = np.array(data.draw(st.lists(st.integers(0, n + 2), min_size=int(offsets[-1]),
                                        max_size=int(offsets[-1]))), dtype=np.int32)
    order, starts, _ = scc_order(offsets, child, n)
    assert sorted(order.tolist()) == list(range(n))
    comp = np.empty(n, np.int64)
    for k in range(len(starts) - 1):
        comp[order[starts[k] : starts[k + 1]]] = k
    src = np.repeat(np.arange(n), deg)
    ins = child < n
    m = csr_matrix((np.ones(int(ins.sum())), (src[ins], child[ins])), shape=(n, n))
    _, labels = connected_components(m, directed=True, connection="strong")
    # the same partition
    pairs = set(zip(comp.tolist(), labels.tolist()))
    assert len(pairs) == len(set(comp.tolist())) == len(set(labels.tolist()))
    # children first
    for u, v in zip(src[ins].tolist(), child[ins].tolist()):
        assert comp[v] <= comp[u]


@settings(max_examples=examples(100), deadline=None)
@given(n=st.integers(1, 40), chunk=st.integers(1, 12), data=st.data())
def test_chunks_are_whole_components_of_at_least_chunk_rows(n, chunk, data):
    deg = data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    offsets = np.concatenate([[0], np.cumsum(deg)]).astype(np.int64)
    child = np.array(data.draw(st.lists(st.integers(0, n - 1), min_size=int(offsets[-1]),
                                        max_size=int(offsets[-1]))), dtype=np.int64)
    order, starts, stats = scc_order(offsets, child, n)  # chunk=1: one chunk per component
    order_c, bounds, stats_c = scc_order(offsets, child, n, chunk)
    assert np.array_equal(order, order_c) and stats == stats_c
    sizes = np.diff(starts)
    assert stats["largest_component"] == sizes.max() and stats["cyclic_positions"] == sizes[sizes > 1].sum()
    assert bounds[0] == 0 and bounds[-1] == n and np.all(np.diff(bounds) > 0)
    assert set(bounds.tolist()) <= set(starts.tolist())  # cut only where a component ends
    for a, b in zip(bounds[:-2], bounds[1:-1]):
        assert b - a >= chunk  # every chunk but the last ...
        inner = starts[(starts > a) & (starts < b)]  # ... and no fewer components would do
        assert not len(inner) or inner[-1] - a < chunk


def _arrays(graph):
    return graph.kind, graph.to_move, graph.result, graph.offsets, graph.child, graph.probs


@pytest.mark.parametrize("seed", range(6))
def test_random_cyclic_games_equal_the_whole_graph_and_brute_force(seed):
    rng = random.Random(100 + seed)
    nodes = random_cyclic(rng, 11)
    g = make_graph(nodes)
    want = positional_minimax(nodes)
    whole = value_iteration(g)
    assert whole.stats["certified"]
    for chunk in (1, 2, 4, 11):
        sol = solve_chance(*_arrays(g), chunk=chunk)
        assert sol.certified and sol.converged
        assert np.allclose(sol.value, want, atol=1e-9), (chunk, sol.value, want)
        assert np.allclose(sol.value, whole.value, atol=1e-9)
        assert np.array_equal(sol.value, sol.p_win - sol.p_loss)
        assert sol.stats["chunks"] >= 1


@pytest.mark.parametrize("seed", range(8))
def test_larger_random_games_and_coded_probabilities(seed):
    """60-position games (too many strategies for brute force): the whole graph decides; the
    probabilities may also come as one-byte codes."""
    rng = random.Random(7 + seed)
    nodes = random_cyclic(rng, 60)
    g = make_graph(nodes)
    whole = value_iteration(g)
    coder = FloatCoder()
    coder.add(np.asarray(g.probs))
    coded = coder.finish()
    for chunk in (1, 7, 60):
        for probs in (g.probs, coded):
            kind, to_move, result, offsets, child, _ = _arrays(g)
            sol = solve_chance(kind, to_move, result, offsets, child, probs, chunk=chunk)
            assert sol.certified == whole.stats["certified"]
            assert np.allclose(sol.value, whole.value, atol=1e-9)


@pytest.mark.parametrize("seed", range(8))
def test_a_graph_split_in_two_through_the_outside_boundary(seed):
    """Rows 0..k-1 of a random game whose moves from the last rows never lead back (the later
    rows are a graph of their own): solve the later rows alone, then the first rows with the
    later ones as the outside boundary; both parts equal the whole graph."""
    rng = random.Random(1000 + seed)
    n, k = 40, 22
    nodes = random_cyclic(rng, n)
    for i in range(k, n):  # the later part's moves stay in it
        x = nodes[i]
        x.edges = tuple((c if c >= k else rng.randrange(k, n), p) for c, p in x.edges)
    g = make_graph(nodes)
    whole = value_iteration(g)
    later = make_graph([type(x)(x.kind, x.to_move, x.result, tuple((c - k, p) for c, p in x.edges))
                        for x in nodes[k:]])
    done = solve_chance(*_arrays(later), chunk=3)
    assert np.allclose(done.value, whole.value[k:], atol=1e-9)
    # rows >= k of the first part are the boundary: child k + j is outside row j
    first = make_graph(nodes[:k] + [])
    kind, to_move, result, _, _, _ = _arrays(first)
    offsets = g.offsets[: k + 1]
    child = g.child[: int(offsets[-1])]
    probs = np.asarray(g.probs)[: int(offsets[-1])]
    outside = Outside(to_move=g.to_move[k:], p_win=done.p_win, p_loss=done.p_loss)
    sol = solve_chance(kind, to_move, result, offsets, child, probs, outside, chunk=4)
    assert np.allclose(sol.value, whole.value[:k], atol=1e-9)


def test_bad_arrays_are_refused():
    g = make_graph(random_cyclic(random.Random(3), 8))
    kind, to_move, result, offsets, child, probs = _arrays(g)
    with pytest.raises(ValueError, match="neither a position nor on the outside boundary"):
        solve_chance(kind, to_move, result, offsets, child + 100, probs)
    with pytest.raises(ValueError, match="chunk must be at least 1"):
        solve_chance(kind, to_move, result, offsets, child, probs, chunk=0)


def test_a_graph_without_probabilities_is_one_without_chance():
    """``probs=None`` (no chance nodes): every move weighs 1.0, the same values as with ones."""
    rng = random.Random(11)
    nodes = random_cyclic(rng, 30)
    for x in nodes:  # decisions only
        if x.kind == C:
            x.kind, x.edges = D, tuple((c, 1.0) for c, _ in x.edges)
    assert not any(x.kind == C for x in nodes)
    g = make_graph(nodes)
    kind, to_move, result, offsets, child, probs = _arrays(g)
    with_none = solve_chance(kind, to_move, result, offsets, child, None, chunk=3)
    with_ones = solve_chance(kind, to_move, result, offsets, child, np.ones(len(child)), chunk=3)
    assert np.array_equal(with_none.value, with_ones.value)
    assert np.allclose(with_none.value, value_iteration(g).value, atol=1e-9)


# --- secret choices (simultaneous nodes) ---------------------------------------------------------

# random cyclic games with secret choices of tests/test_simultaneous.py; seeds 1, 3, 8, 9, 13 and
# 14 converge like 1/n (thousands of sweeps of LPs: 40-70 s each), 4 and 12 draw no secret choice
SECRET_SEEDS = [s for s in range(16) if s not in (1, 3, 4, 8, 9, 12, 13, 14)]


def _optimal_at(nodes, value, node, x, y, eps=1e-5):
    """``x`` and ``y`` guarantee the matrix game of ``node`` (children's values ``value``, seen by
    player 0) its value: optimal mixes, which need not be unique."""
    from tests.test_simultaneous import player0_view

    a = player0_view(nodes, value, len(nodes))[[c for c, _ in nodes[node].edges]].reshape(nodes[node].rows, -1)
    v = value[node] if nodes[node].to_move == 0 else -value[node]
    return (x @ a).min() >= v - eps and (a @ y).max() <= v + eps


def _secret_game(seed):
    from tests.test_simultaneous import build, random_game

    rng = random.Random(seed)
    nodes = random_game(rng, rng.randint(6, 12), cyclic=True)
    return nodes, build(nodes)


@pytest.mark.parametrize("seed", SECRET_SEEDS)
def test_secret_choices_chunk_by_chunk_equal_the_whole_graph(seed):
    """Issue 31, item 1: the component engine solves games with secret choices too (each chunk by
    the secret-choice engine, the finished chunks below as terminal rows with their values):
    values, win and loss probabilities, mixes and best moves equal the whole-graph engine's."""
    from solver.engines.simultaneous import solve_simultaneous

    nodes, g = _secret_game(seed)
    whole = solve_simultaneous(g, max_sweeps=5_000)
    for chunk in (1, 2, 5, len(nodes)):
        sol = solve_chance(*_arrays(g), sim_rows=g.sim_rows, chunk=chunk, max_sweeps=5_000)
        assert sol.certified == whole.stats["certified"], chunk
        assert np.allclose(sol.value, whole.value, atol=1e-8), (chunk, sol.value, whole.value)
        assert np.allclose(sol.p_win, whole.p_win, atol=1e-6) and np.allclose(sol.p_loss, whole.p_loss, atol=1e-6)
        assert sorted(sol.strategies) == sorted(whole.strategies)
        for node, (x, y) in whole.strategies.items():  # optimal mixes (one of many, maybe)
            assert _optimal_at(nodes, whole.value, node, x, y), node
            assert _optimal_at(nodes, whole.value, node, *sol.strategies[node]), (chunk, node)
        dec = np.asarray(g.kind) == D
        assert np.array_equal(sol.best[dec], whole.best[dec]), chunk


@pytest.mark.parametrize("seed", SECRET_SEEDS[:6])
def test_secret_choices_through_the_outside_boundary(seed):
    """A game with secret choices split in two: the later rows solved alone, then the first rows
    with the later ones as the boundary (their values given, not only their probabilities)."""
    from tests.test_simultaneous import Node, S, build

    nodes, _ = _secret_game(seed)
    rng = random.Random(seed)
    n = len(nodes)
    k = n // 2
    for i in range(k, n):  # the later part's moves stay in it
        x = nodes[i]
        nodes[i] = Node(x.kind, x.to_move, x.result,
                        tuple((c if c >= k else rng.randrange(k, n), p) for c, p in x.edges), x.rows)
    g = build(nodes)
    whole = solve_chance(*_arrays(g), sim_rows=g.sim_rows, chunk=n, max_sweeps=5_000)
    later_nodes = [Node(x.kind, x.to_move, x.result, tuple((c - k, p) for c, p in x.edges), x.rows)
                   for x in nodes[k:]]
    later = build(later_nodes)
    done = solve_chance(*_arrays(later), sim_rows=later.sim_rows if later.sim_rows is not None
                        else np.zeros(later.n, np.int32), chunk=2, max_sweeps=5_000)
    assert np.allclose(done.value, whole.value[k:], atol=1e-8)
    offsets = g.offsets[: k + 1]
    child = g.child[: int(offsets[-1])]
    probs = np.asarray(g.probs)[: int(offsets[-1])]
    outside = Outside(to_move=g.to_move[k:], p_win=done.p_win, p_loss=done.p_loss, value=done.value)
    sim_rows = g.sim_rows[:k] if g.sim_rows is not None else np.zeros(k, np.int32)
    sol = solve_chance(g.kind[:k], g.to_move[:k], g.result[:k], offsets, child, probs, outside,
                       sim_rows=sim_rows, chunk=2, max_sweeps=5_000)
    assert np.allclose(sol.value, whole.value[:k], atol=1e-8)
    assert any(x.kind == S for x in nodes) or sol.iterated is None


def test_petal_battle_4_component_by_component_equals_the_whole_graph():
    """A real game with secret choices (Petal Battle, 4 petals): chunks of at least 64 positions.
    Every round passes a secret choice that can lead back to an earlier board, so one component
    holds almost every position (2,408 of 2,424): chunks cannot split Petal Battle."""
    from solver.engines.enumerate import enumerate_positions
    from solver.games import make_game

    g = enumerate_positions(make_game("petal", petals=4, run=2, per_size=1), workers=1)
    whole = value_iteration(g)
    sol = solve_chance(*_arrays(g), sim_rows=g.sim_rows, chunk=64)
    assert sol.certified == whole.stats["certified"] is True
    assert np.allclose(sol.value, whole.value, atol=1e-9)
    assert np.allclose(sol.p_win, whole.p_win, atol=1e-7) and np.allclose(sol.p_loss, whole.p_loss, atol=1e-7)
    assert sorted(sol.strategies) == sorted(whole.strategies)
    assert sol.stats["largest_component"] > 0.9 * g.n
