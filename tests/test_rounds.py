"""The compact engine for games whose every cycle passes a secret choice (solver/engines/rounds.py).

It must give what the general secret-choice engine (solver/engines/simultaneous.py, through
value_iteration) gives: the same values, best moves, mixes and win probabilities, on random
games whose rounds start with a secret choice (with and without an outside boundary) and on
Petal Battle 4; its distances to an end equal a breadth-first search; graphs it cannot solve
are named, and the whole-graph pipeline routes Petal Battle to it.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from solver.api import make_game, solve
from solver.engines.enumerate import enumerate_positions
from solver.engines.rounds import _terminal_distance, applies, plain_order, rounds_order, solve_rounds
from solver.engines.simultaneous import solve_simultaneous
from solver.engines.value_iteration import value_iteration
from tests.test_simultaneous import C, D, Node, S, T, build, reference_terminal_distance, round_game, solve_game
from tests.toygames import W0, W1
from tests.budget import seeds


def random_rounds(seed: int) -> tuple[list[Node], object]:
    rng = random.Random(seed)
    nodes = round_game(rng, rng.randint(6, 14))
    return nodes, build(nodes)


def matrix_at(nodes: list[Node], i: int, value: np.ndarray) -> np.ndarray:
    """Player 0's matrix game at simultaneous node ``i`` from the children's values."""
    a = np.array([value[k] if nodes[k].to_move == 0 else -value[k] for k, _ in nodes[i].edges])
    return a.reshape(nodes[i].rows, -1)


def assert_same_solution(nodes, ref, new) -> None:
    assert np.abs(ref.value - new.value).max() < 1e-8
    assert np.array_equal(ref.best, new.best)
    assert set(ref.strategies) == set(new.strategies)
    assert new.stats["certified"] == ref.stats["certified"]
    same_mixes = True
    for i, (x, y) in ref.strategies.items():
        x2, y2 = new.strategies[i]
        a = matrix_at(nodes, i, new.value)
        # both pairs are optimal in the matrix game at the converged values (a degenerate game
        # has several optimal mixes, and the LP may pick another one)
        assert x2 @ a @ y2 == pytest.approx(x @ a @ y, abs=1e-6)
        assert (x2 @ a).min() == pytest.approx(x2 @ a @ y2, abs=1e-6)
        assert (a @ y2).max() == pytest.approx(x2 @ a @ y2, abs=1e-6)
        same_mixes &= np.allclose(x, x2, atol=1e-9) and np.allclose(y, y2, atol=1e-9)
    if same_mixes:  # the same strategies: the same probabilities of winning and losing
        assert np.abs(ref.p_win - new.p_win).max() < 1e-7
        assert np.abs(ref.p_loss - new.p_loss).max() < 1e-7


# (the six seeds whose games take longest, 34 s, and two thirds of the rest are larger checks: make test-all)
@pytest.mark.parametrize("seed", seeds(40, slow=(10, 11, 14, 18, 29, 35)))
def test_random_rounds_equal_the_general_engine(seed: int) -> None:
    nodes, graph = random_rounds(seed)
    if not any(x.kind == S for x in nodes):
        assert not applies(graph)  # nothing secret: the other engines' business
        return
    assert applies(graph)
    ref = value_iteration(graph, max_sweeps=400)
    new = solve_rounds(graph, max_sweeps=400)
    assert new.stats["engine"] == "rounds" and new.stats["policy_exact"]
    if not ref.converged:  # Everett-like slow tails: nothing settled to compare
        assert not new.converged
        return
    assert new.converged
    assert_same_solution(nodes, ref, new)


@pytest.mark.parametrize("seed", range(12))
def test_an_outside_boundary_equals_the_general_engine(seed: int) -> None:
    # terminal rows that stand for finished positions outside the graph: their win and loss
    # probabilities and (recursive games) values given by the caller, as a tier's boundary
    nodes, graph = random_rounds(seed)
    if not any(x.kind == S for x in nodes):
        return
    rng = np.random.default_rng(seed)
    terminal = np.asarray(graph.kind) == T
    win = np.where(terminal, rng.uniform(0, 0.6, graph.n), 0.0)
    loss = np.where(terminal, rng.uniform(0, 0.4, graph.n), 0.0)
    ends = np.where(terminal, win - loss - rng.uniform(0, 0.05, graph.n), 0.0)
    kept = (win.copy(), loss.copy(), ends.copy())
    ref = solve_simultaneous(graph, max_sweeps=400, terminal_probs=(win, loss), terminal_value=ends)
    new = solve_rounds(graph, max_sweeps=400, terminal_probs=(win, loss), terminal_value=ends)
    for given, before in zip((win, loss, ends), kept):
        assert np.array_equal(given, before)  # the caller's arrays are not written to
    assert np.array_equal(new.value[terminal], ends[terminal])
    assert np.array_equal(new.p_win[terminal], win[terminal])
    if ref.converged:
        assert_same_solution(nodes, ref, new)


@pytest.mark.parametrize("seed", range(8))
def test_distances_to_an_end_equal_a_breadth_first_search(seed: int) -> None:
    nodes, graph = random_rounds(seed)
    order = plain_order(graph)
    sims = np.flatnonzero(np.asarray(graph.kind) == S)
    got = _terminal_distance(order, sims, np.asarray(graph.kind), graph.offsets, graph.child)
    assert np.array_equal(got, reference_terminal_distance(graph))


def test_the_order_puts_children_first() -> None:
    for seed in range(20):
        nodes, graph = random_rounds(seed)
        order = plain_order(graph)
        kind = np.asarray(graph.kind)
        assert sorted(order.tolist()) == np.flatnonzero((kind == D) | (kind == C)).tolist()
        place = {int(i): k for k, i in enumerate(order.tolist())}
        for i in order.tolist():
            for c, _ in nodes[i].edges:
                if c in place:
                    assert place[c] < place[i]


def test_matching_pennies_by_hand() -> None:
    # player 0 wins when the coins match: value 0, both mix 1/2-1/2, each wins half the time
    graph, _ = solve_game({0: ("S", 0, [[1, 2], [2, 1]]), 1: ("T", 0, W0), 2: ("T", 0, W1)})
    sol = solve_rounds(graph)
    assert sol.value[0] == pytest.approx(0.0, abs=1e-12)
    x, y = sol.strategies[0]
    assert x == pytest.approx([0.5, 0.5]) and y == pytest.approx([0.5, 0.5])
    assert sol.p_win[0] == pytest.approx(0.5, abs=1e-12) and sol.p_loss[0] == pytest.approx(0.5, abs=1e-12)
    assert sol.stats["certified"] and sol.converged


def test_graphs_it_cannot_solve_are_refused() -> None:
    # decision nodes 1 and 2 move to each other: a cycle that no secret choice interrupts
    cyclic = build([
        Node(S, 0, edges=((1, 1.0), (3, 1.0)), rows=2),
        Node(D, 0, edges=((2, 1.0), (0, 1.0))),
        Node(D, 1, edges=((1, 1.0), (3, 1.0))),
        Node(T, 0, result=1),
    ])
    assert rounds_order(cyclic) is None and not applies(cyclic)
    with pytest.raises(ValueError, match="form a cycle among themselves"):
        solve_rounds(cyclic)
    plain = build([Node(D, 0, edges=((1, 1.0),)), Node(T, 0, result=1)])
    assert rounds_order(plain) is None  # no secret choice


def test_petal_battle_4_equals_the_general_engine() -> None:
    graph = enumerate_positions(make_game("petal", petals=4, run=3, per_size=1))
    assert applies(graph)
    ref = value_iteration(graph, tol=1e-12)
    new = solve_rounds(graph, tol=1e-12)
    assert new.converged and new.stats["certified"] and new.sweeps == ref.sweeps
    assert new.stats["policy_exact"] and new.stats["policy_sweeps"] <= 2  # exact, then checked
    assert np.abs(ref.value - new.value).max() < 1e-12
    assert np.array_equal(ref.best, new.best)
    assert set(ref.strategies) == set(new.strategies)
    for i, (x, y) in ref.strategies.items():
        assert np.array_equal(x, new.strategies[i][0]) and np.array_equal(y, new.strategies[i][1])
    assert np.abs(ref.p_win - new.p_win).max() < 1e-8 and np.abs(ref.p_loss - new.p_loss).max() < 1e-8


def test_the_pipeline_solves_petal_battle_by_rounds(tmp_path) -> None:
    sol = solve(make_game("petal", {"petals": "4", "run": "2", "per_size": "1"}), out=tmp_path, bound_rounds=1)
    assert sol.meta["simultaneous_engine"] == "rounds"
    assert sol.meta["certified"]
