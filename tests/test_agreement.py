"""Independent agreement: retrograde vs alpha-beta on every position; symmetry on vs off;
the verifier's proof of every stored value on the larger presets."""

from __future__ import annotations

import numpy as np
import pytest

from solver.core.values import LOSE, NO_REMOTENESS, TIE, WIN
from solver.engines.alphabeta import AlphaBeta
from solver.engines.enumerate import enumerate_positions
from solver.engines.retrograde import retrograde
from solver.engines.verify import check_margins, check_values
from solver.games import make_game


def agree_everywhere(game, *, symmetry=True, margins=False):
    """Alpha-beta (from the per-state rules) gives the retrograde value of every position."""
    graph = enumerate_positions(game, symmetry=symmetry)
    solved = retrograde(graph, scored=margins)
    finite = solved.remoteness[solved.remoteness != NO_REMOTENESS]
    # A win or loss needs at most max-remoteness plies; searching 2 deeper than the longest
    # forced result lets alpha-beta prove any win/loss retrograde might have missed.
    depth = int(finite.max()) + 2 if len(finite) else 2
    ab = AlphaBeta(game, symmetry=symmetry)
    for i, key in enumerate(graph.keys.tolist()):
        state = game.decode(key)
        got = ab.search(state, max_depth=depth)
        want_rem = None if solved.remoteness[i] == NO_REMOTENESS else int(solved.remoteness[i])
        assert got == (int(solved.value[i]), want_rem), (game.render(state), got)
        if margins:
            assert ab.margin(state) == int(solved.margin[i])
    return graph, solved


def symmetry_agrees(game):
    """Solving with and without symmetry reduction gives the same value for every position."""
    g_sym = enumerate_positions(game, symmetry=True)
    s_sym = retrograde(g_sym, scored=game.scored)
    g_all = enumerate_positions(game, symmetry=False)
    s_all = retrograde(g_all, scored=game.scored)
    canon = np.array([game.encode(game.canonical(game.decode(k))) for k in g_all.keys.tolist()],
                     dtype=np.uint64)
    rows = np.searchsorted(g_sym.keys, canon)
    assert np.array_equal(g_sym.keys[rows], canon)
    assert np.array_equal(s_sym.value[rows], s_all.value)
    assert np.array_equal(s_sym.remoteness[rows], s_all.remoteness)
    if game.scored:
        assert np.array_equal(s_sym.margin[rows], s_all.margin)
    return g_sym.n, g_all.n


OVERRIDE_SMALL = [
    dict(size=2, line=2, per_size=1),
    dict(size=2, line=2, per_size=1, no_undo="off"),
    dict(size=2, line=2, per_size=2),
]


@pytest.mark.parametrize("params", OVERRIDE_SMALL, ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()))
def test_override_small_retrograde_equals_alphabeta_everywhere(params):
    game = make_game("override", **params)
    graph, solved = agree_everywhere(game)
    assert check_values(graph, solved.value, solved.remoteness) == []


@pytest.mark.parametrize("params", OVERRIDE_SMALL[:2], ids=["undo-on", "undo-off"])
def test_override_symmetry_on_and_off_agree(params):
    n_sym, n_all = symmetry_agrees(make_game("override", **params))
    assert n_sym < n_all


@pytest.mark.slow
def test_override_3x3_every_value_proven_by_verifier_and_sampled_alphabeta():
    game = make_game("override", size=3, line=3, per_size=1)
    graph = enumerate_positions(game, symmetry=True)
    solved = retrograde(graph)
    assert check_values(graph, solved.value, solved.remoteness) == []
    # alpha-beta from the per-state rules on a fixed random sample of decided positions
    rng = np.random.default_rng(7)
    decided = np.flatnonzero(solved.remoteness != NO_REMOTENESS)
    ab = AlphaBeta(game)
    for i in rng.choice(decided, size=min(150, len(decided)), replace=False):
        state = game.decode(int(graph.keys[i]))
        want = (int(solved.value[i]), int(solved.remoteness[i]))
        assert ab.search(state, max_depth=want[1] + 1) == want


def test_margin_one_pass_equals_threshold_passes_on_greener():
    """On an acyclic scored game the one-pass topological margins equal the threshold method."""
    from solver.engines import retrograde as R

    game = make_game("greener", rows=3, cols=3, black=2, white=2, setup="BWG/GGB/WGG")
    graph = enumerate_positions(game)
    back = R.Backward.of(graph)
    one_pass = R._one_pass(back, graph.margin)
    assert one_pass is not None
    n = graph.n
    terminal = graph.kind == 3
    tm = graph.margin.astype(np.int64)
    cands = np.unique(np.concatenate([tm[terminal], -tm[terminal], [0]]))
    best = np.full(n, cands[0])
    for t in cands[1:]:
        ok = R._can_force_at_least(graph, back, t)
        best = np.where(ok, t, best)
    assert np.array_equal(best, one_pass[2].astype(np.int64))
    assert np.array_equal(R._margins_sweep(graph, back), best)


@pytest.mark.parametrize("params", [
    {"rows": 3, "cols": 3, "black": 2, "white": 2, "setup": "all"},
    {"rows": 2, "cols": 3, "black": 2, "white": 2, "setup": "all", "tiebreak": "none"},
])
def test_one_pass_values_equal_the_queue_passes(params):
    """Scored acyclic graphs get values and remoteness from the one topological pass; they must
    equal the win/lose and tie passes used for every other graph."""
    from solver.engines import retrograde as R

    game = make_game("greener", **params)
    graph = enumerate_positions(game)
    keep = graph.kind != 1  # the setup chance root: as _solve_setups does, cut its edges
    counts = np.where(keep, np.diff(graph.offsets), 0)
    graph.child = graph.child[np.repeat(keep, np.diff(graph.offsets))]
    graph.offsets = np.concatenate([[0], np.cumsum(counts)])
    graph.kind = np.where(keep, graph.kind, 3).astype(np.int8)
    back = R.Backward.of(graph)
    one = R._one_pass(back, graph.margin)
    assert one is not None
    value, remoteness = R._values(back)
    assert np.array_equal(one[0], value) and np.array_equal(one[1], remoteness)
    assert (value == TIE).any() and (value == LOSE).any() and (value == WIN).any()


def test_one_pass_refuses_cycles():
    from solver.engines import retrograde as R

    graph = enumerate_positions(make_game("blam", rows=3, cols=3, per_size=1))
    assert R._one_pass(R.Backward.of(graph), graph.margin) is None


def test_blam_3x3_retrograde_equals_alphabeta_everywhere():
    """Every position of Blam! 3x3 per_size=1 (cycles are possible: own pyramids return)."""
    game = make_game("blam", rows=3, cols=3, per_size=1)
    graph, solved = agree_everywhere(game)
    assert check_values(graph, solved.value, solved.remoteness) == []
    margins = retrograde(graph, scored=True).margin
    assert check_margins(graph, margins) == []


def test_blam_symmetry_on_and_off_agree():
    n_sym, n_all = symmetry_agrees(make_game("blam", rows=3, cols=3, per_size=1))
    assert n_sym < n_all
