"""Retrograde analysis and alpha-beta on tiny games whose answers are worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from solver.core.game import Outcome, Result
from solver.core.values import DRAW, LOSE, NO_REMOTENESS, TIE, WIN
from solver.engines.alphabeta import AlphaBeta
from solver.engines.enumerate import enumerate_positions
from solver.engines.retrograde import retrograde
from tests.toygames import TIE as T
from tests.toygames import W0, W1, Explicit, Subtraction


def solve_rows(game, scored=False):
    graph = enumerate_positions(game, symmetry=False)
    solved = retrograde(graph, scored=scored)
    by_key = {int(k): i for i, k in enumerate(graph.keys)}
    return graph, solved, by_key


def test_subtraction_values_and_remoteness():
    # Take 1 or 2, last counter wins: n = 3k is lost in 2k plies (the loser stretches it),
    # n = 3k+1 or 3k+2 is won in 2k+1 plies (move to the nearest multiple of 3).
    game = Subtraction.from_params(n=10)
    graph, solved, by_key = solve_rows(game)
    for n in range(0, 11):
        for player in (0, 1):
            key = n * 2 + player
            if key not in by_key:
                continue
            i = by_key[key]
            k, rest = divmod(n, 3)
            if rest == 0:
                assert solved.value[i] == LOSE and solved.remoteness[i] == 2 * k, n
            else:
                assert solved.value[i] == WIN and solved.remoteness[i] == 2 * k + 1, n


def test_tie_is_preferred_to_losing_and_found_through_cycle():
    # 0 (P0) -> 1 or 2.  1 (P1) -> 0 or 3 where 3 = P1 wins, so 1 is a P1 win in 1.
    # 2 (P1) -> 4 = tie, so 2 is a tie in 1.  From 0, moving to 1 loses; moving to 2 ties: tie in 2.
    game = Explicit({0: (0, [1, 2], None), 1: (1, [0, 3], None), 2: (1, [4], None),
                     3: (0, [], W1), 4: (0, [], T)})
    _, solved, row = solve_rows(game)
    assert (solved.value[row[1]], solved.remoteness[row[1]]) == (WIN, 1)
    assert (solved.value[row[2]], solved.remoteness[row[2]]) == (TIE, 1)
    assert (solved.value[row[0]], solved.remoteness[row[0]]) == (TIE, 2)


def test_endless_play_is_a_draw():
    # 0 (P0) -> 1 or 2 (2 = P1 wins); 1 (P1) -> 0 or 3 (3 = P0 wins). Each avoids its loss by
    # going round the cycle 0 -> 1 -> 0: both are draws, with no remoteness.
    game = Explicit({0: (0, [1, 2], None), 1: (1, [0, 3], None), 2: (0, [], W1), 3: (1, [], W0)})
    _, solved, row = solve_rows(game)
    for node in (0, 1):
        assert solved.value[row[node]] == DRAW
        assert solved.remoteness[row[node]] == NO_REMOTENESS


def test_same_player_moves_again_keeps_the_value():
    # 0 (P0) -> 1, and 1 is P0 again -> 2 (P0 wins) or 3 (P1 wins). 1 is a P0 win in 1 ply, so
    # 0 is a win in 2 plies although its only child has P0 to move (no flip).
    game = Explicit({0: (0, [1], None), 1: (0, [2, 3], None), 2: (1, [], W0), 3: (0, [], W1)})
    _, solved, row = solve_rows(game)
    assert (solved.value[row[1]], solved.remoteness[row[1]]) == (WIN, 1)
    assert (solved.value[row[0]], solved.remoteness[row[0]]) == (WIN, 2)
    assert AlphaBeta(game).search(0) == (WIN, 2)


def test_a_level_end_beats_endless_play():
    # 0 (P0) -> 2 (a cycle back to 0 through P1) or 1 (a tied end). P0 prefers the tie: tie in 1;
    # 2's only move goes back to 0, so 2 is a tie in 2.
    game = Explicit({0: (0, [2, 1], None), 1: (1, [], T), 2: (1, [0], None)})
    _, solved, row = solve_rows(game)
    assert (solved.value[row[0]], solved.remoteness[row[0]]) == (TIE, 1)
    assert (solved.value[row[2]], solved.remoteness[row[2]]) == (TIE, 2)


def test_margin_acyclic():
    # 0 (P0) -> 1 (ends 3-1: margin +2) or 2; 2 (P1) -> 3 (ends 5-0) or 4 (ends 2-2).
    # At 2, P1 picks 4 (own margin 0 beats -5): margin 0 for P1. At 0, P0 picks 1: +2.
    game = Explicit({
        0: (0, [1, 2], None),
        1: (1, [], Outcome(W0, (3, 1))),
        2: (1, [3, 4], None),
        3: (0, [], Outcome(W0, (5, 0))),
        4: (0, [], Outcome(T, (2, 2))),
    }, scored=True)
    _, solved, row = solve_rows(game, scored=True)
    assert solved.margin[row[0]] == 2
    assert solved.margin[row[2]] == 0
    assert AlphaBeta(game).margin(0) == 2


def test_margin_endless_play_counts_as_zero():
    # 0 (P0) -> 1 or 2 (ends 0-2: -2 for P0); 1 (P1) -> 0 or 3 (ends 3-0: -3 for P1).
    # Going round 0 -> 1 -> 0 for ever gives margin 0, better than either end for its chooser.
    game = Explicit({
        0: (0, [1, 2], None),
        1: (1, [0, 3], None),
        2: (1, [], Outcome(W1, (0, 2))),
        3: (0, [], Outcome(W0, (3, 0))),
    }, scored=True)
    _, solved, row = solve_rows(game, scored=True)
    assert solved.margin[row[0]] == 0 and solved.margin[row[1]] == 0
    # and a finishing option worth more than 0 is taken: give P0 a +1 end instead of -2
    game2 = Explicit({
        0: (0, [1, 2], None),
        1: (1, [0, 3], None),
        2: (1, [], Outcome(W0, (1, 0))),
        3: (0, [], Outcome(W0, (3, 0))),
    }, scored=True)
    _, solved2, row2 = solve_rows(game2, scored=True)
    assert solved2.margin[row2[0]] == 1
    # at 1, P1 can go back to 0 (where P0 then takes +1, so -1 for P1) or end at -3: -1
    assert solved2.margin[row2[1]] == -1


@pytest.mark.parametrize("n", [0, 1, 5, 9, 14])
def test_alphabeta_agrees_with_hand_values_on_subtraction(n):
    game = Subtraction.from_params(n=n)
    k, rest = divmod(n, 3)
    expected = (LOSE, 2 * k) if rest == 0 else (WIN, 2 * k + 1)
    assert AlphaBeta(game).search(game.initial_state(), max_depth=40) == expected


def test_alphabeta_finds_ties_and_draws():
    tie_game = Explicit({0: (0, [1, 2], None), 1: (1, [0, 3], None), 2: (1, [4], None),
                         3: (0, [], W1), 4: (0, [], T)})
    assert AlphaBeta(tie_game).search(0, max_depth=10) == (TIE, 2)
    draw_game = Explicit({0: (0, [1, 2], None), 1: (1, [0, 3], None), 2: (0, [], W1), 3: (1, [], W0)})
    assert AlphaBeta(draw_game).search(0, max_depth=10) == (DRAW, None)


def test_enumeration_rows_sorted_and_edges_consistent():
    game = Subtraction.from_params(n=6)
    graph = enumerate_positions(game, symmetry=False)
    assert np.all(np.diff(graph.keys.astype(np.int64)) > 0)
    assert graph.keys[graph.root] == game.encode(game.initial_state())
    # every edge is a legal move of the reference rules
    for i, key in enumerate(graph.keys):
        state = game.decode(int(key))
        kids = sorted(int(graph.keys[c]) for c in graph.child[graph.offsets[i]:graph.offsets[i + 1]])
        ref = sorted(game.encode(game.apply(state, a)) for a in game.legal_actions(state)) \
            if not game.is_terminal(state) else []
        assert kids == ref
    # the fewest plies from the start: n=6 -> pile 6-d reachable at ply ceil(d/2)..d
    assert int(graph.ply[graph.row_of(game.encode((0, 1)))]) == 3  # 6 -> 4 -> 2 -> 0 by P0


def test_verifier_accepts_retrograde_and_catches_tampering():
    from solver.engines.verify import check_margins, check_values

    game = Explicit({0: (0, [1, 2], None), 1: (1, [0, 3], None), 2: (1, [4], None),
                     3: (0, [], W1), 4: (0, [], T)})
    graph, solved, row = solve_rows(game)
    assert check_values(graph, solved.value, solved.remoteness) == []
    wrong = solved.value.copy()
    wrong[row[0]] = DRAW  # 0 is a tie in 2 (see above), not a draw
    assert check_values(graph, wrong, solved.remoteness)
    rem = solved.remoteness.copy()
    rem[row[1]] = 3  # 1 is a win in 1
    assert check_values(graph, solved.value, rem)
    sub = Subtraction.from_params(n=8)
    g2, s2, _ = solve_rows(sub)
    assert check_values(g2, s2.value, s2.remoteness) == []
    scored = Explicit({
        0: (0, [1, 2], None), 1: (1, [0, 3], None),
        2: (1, [], Outcome(W0, (1, 0))), 3: (0, [], Outcome(W0, (3, 0))),
    }, scored=True)
    g3, s3, r3 = solve_rows(scored, scored=True)
    assert check_margins(g3, s3.margin) == []
    bad = s3.margin.copy()
    bad[r3[0]] = 3
    assert check_margins(g3, bad)


@pytest.mark.parametrize("game_name, params", [
    ("override", {"size": 2, "line": 2, "per_size": 2}),  # a pool of forked processes
    ("greener", {"rows": 3, "cols": 3, "black": 2, "white": 2, "setup": "BWG/GGB/WGG"}),  # threads
])
def test_parallel_enumeration_gives_the_same_graph(monkeypatch, game_name, params):
    import solver.engines.enumerate as E
    from solver.games import make_game

    monkeypatch.setattr(E, "_PARALLEL_MIN", 10)  # split even tiny plies across the pool
    game = make_game(game_name, params)
    a = E.enumerate_positions(game, workers=2, chunk=50)
    b = E.enumerate_positions(game, workers=1)
    assert a.n > 100
    for name in ("keys", "kind", "to_move", "ply", "offsets", "child", "result", "margin"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name


def test_pool_map_waits_in_slices_and_keeps_order_and_errors():
    """``waiting.pool_map`` (used where the main thread waits for tiers, so Ctrl-C is seen at
    once) gives ``map``'s results in order and raises a task's error."""
    from concurrent.futures import ThreadPoolExecutor
    import time

    from solver.engines import waiting

    def slow_square(x):
        time.sleep(0.01 * (5 - x))  # later items finish first
        return x * x

    with ThreadPoolExecutor(max_workers=3) as pool:
        assert list(waiting.pool_map(pool, slow_square, range(5))) == [0, 1, 4, 9, 16]
        assert list(waiting.pool_map(pool, pow, [2, 3], [3, 2])) == [8, 9]
        with pytest.raises(ZeroDivisionError):
            list(waiting.pool_map(pool, lambda x: 1 // x, [1, 0, 2]))


def _second_expansion_cases():
    from solver.games import make_game
    from tests.toygames import DiceRace, Stochastic

    # real payoffs at some ends, results at others (the payoff column is filled for both; a
    # position at a time, the won end comes before the first expansion with a payoff)
    payoffs = Stochastic({0: ("S", 0, [[1, 2], [3, 0]]), 1: ("T", 0, (Result.WIN, Result.LOSS)),
                          2: ("D", 1, [4, 0]), 3: ("C", 0, [(1, 0.25), (4, 0.75)]), 4: ("T", 0, 0.5)})
    return [
        ("override", make_game("override", size=2, line=2, per_size=2), 7),
        ("dice", DiceRace.from_params(target=6), 7),
        ("petal (secret choices)", make_game("petal", petals=4, run=3, per_size=1), 5_000),
        ("payoffs", payoffs, 1),
    ]


@pytest.mark.parametrize("label, game, chunk", _second_expansion_cases(), ids=lambda v: v if isinstance(v, str) else "")
@pytest.mark.parametrize("workers", [1, 2])
def test_expanding_twice_gives_the_same_graph(monkeypatch, label, game, chunk, workers):
    """Past ``keep_bytes`` the enumeration keeps only the keys and expands every position again
    in key order: the same graph, every array, as when it keeps the plies' expansions."""
    import solver.engines.enumerate as E

    monkeypatch.setattr(E, "_PARALLEL_MIN", 10)  # the second expansion in the pool too
    kept = E.enumerate_positions(game, symmetry=False, workers=1)
    twice = E.enumerate_positions(game, symmetry=False, workers=workers, chunk=chunk, keep_bytes=0)
    assert kept.stats["expanded_twice"] is False and twice.stats["expanded_twice"] is True
    assert kept.n > 3
    for name in ("keys", "kind", "to_move", "ply", "offsets", "child", "result", "margin", "probs",
                 "sim_rows", "payoff"):
        a, b = getattr(kept, name), getattr(twice, name)
        assert (a is None) == (b is None), name
        if a is not None:
            assert a.dtype == b.dtype and np.array_equal(a, b), name
    assert twice.root == kept.root
    assert kept.child.dtype == np.int32  # rows fit int32: 4 bytes a move (every engine reads it)


def test_expanding_twice_reports_progress_and_refuses_an_expansion_that_changes(monkeypatch):
    from solver.errors import ProtocolError

    game = Subtraction.from_params(n=12)
    calls = []
    graph = enumerate_positions(game, symmetry=False, chunk=4, keep_bytes=0,
                                assembling=lambda done, total: calls.append((done, total)))
    assert calls and calls[-1] == (graph.n, graph.n)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)

    real = game.expand
    seen: set[int] = set()

    def flaky(keys, canonical=False):  # a second expansion of a position drops its last move
        out = real(keys, canonical=canonical)
        again = np.array([int(k) in seen for k in keys])
        seen.update(int(k) for k in keys)
        if not again.any():
            return out
        i = int(np.flatnonzero(again & (np.diff(out.offsets) > 0))[0])
        cut = int(out.offsets[i + 1]) - 1
        offsets = out.offsets.copy()
        offsets[i + 1:] -= 1
        return type(out)(kind=out.kind, to_move=out.to_move, offsets=offsets,
                         children=np.delete(out.children, cut), probs=None, result=out.result,
                         margin=out.margin)

    monkeypatch.setattr(game, "expand", flaky)
    with pytest.raises(ProtocolError, match="moves in one expansion and another number"):
        enumerate_positions(game, symmetry=False, chunk=4, keep_bytes=0)


def _graph_by_rules(game):
    """Every reachable position by the readable protocol (legal actions, chance outcomes, joint
    actions, outcomes), breadth first: key -> (ply, kind, to_move, [(child key, probability)],
    result, payoff, player 0's actions at a secret choice)."""
    from collections import deque

    from solver.core.game import NodeKind

    start = game.initial_state()
    found = {game.encode(start): 0}
    rows = {}
    todo = deque([start])
    while todo:
        s = todo.popleft()
        key = game.encode(s)
        kind, p = game.node_kind(s), game.to_move(s)
        result, payoff, sim = 0, 0.0, 0
        if kind == NodeKind.TERMINAL:
            out = game.outcome(s)
            result = int(out.results[p])
            payoff = float(out.payoffs[p]) if out.payoffs is not None else float(result)
            kids = []
        elif kind == NodeKind.CHANCE:
            kids = [(game.apply(s, a), float(f)) for a, f in game.chance_outcomes(s)]
        elif kind == NodeKind.SIMULTANEOUS:
            kids = [(game.apply_joint(s, j), 1.0) for j in game.joint_actions(s)]
            sim = len(game.player_actions(s, 0))
        else:
            kids = [(game.apply(s, a), 1.0) for a in game.legal_actions(s)]
        for c, _ in kids:
            if game.encode(c) not in found:
                found[game.encode(c)] = found[key] + 1
                todo.append(c)
        rows[key] = (found[key], int(kind), p, [(game.encode(c), f) for c, f in kids], result, payoff, sim)
    return rows


@pytest.mark.parametrize("label, game, chunk", [c for c in _second_expansion_cases() if not c[0].startswith("petal")],
                         ids=lambda v: v if isinstance(v, str) else "")
@pytest.mark.parametrize("keep_bytes", [None, 0])
def test_enumeration_equals_the_readable_rules_kept_or_expanded_twice(label, game, chunk, keep_bytes):
    """Every row of the graph, assembled from kept expansions or from a second expansion, says
    what the readable protocol says: ply, node kind, player, children in order with their
    probabilities, result, payoff and a secret choice's rows."""
    graph = enumerate_positions(game, symmetry=False, workers=1, chunk=chunk, keep_bytes=keep_bytes)
    assert graph.stats["expanded_twice"] is (keep_bytes == 0)
    rules = _graph_by_rules(game)
    assert sorted(rules) == [int(k) for k in graph.keys]
    for i, key in enumerate(graph.keys):
        ply, kind, player, kids, result, payoff, sim = rules[int(key)]
        edges = range(graph.offsets[i], graph.offsets[i + 1])
        assert (int(graph.ply[i]), int(graph.kind[i]), int(graph.to_move[i])) == (ply, kind, player)
        assert [int(graph.keys[graph.child[e]]) for e in edges] == [k for k, _ in kids]
        assert [1.0 if graph.probs is None else float(graph.probs[e]) for e in edges] == pytest.approx([f for _, f in kids])
        assert int(graph.result[i]) == result
        if graph.payoff is not None:
            assert float(graph.payoff[i]) == payoff
        assert (0 if graph.sim_rows is None else int(graph.sim_rows[i])) == sim
