"""The vectorised batch path of Override gives exactly the arrays of the reference path.

The reference is :meth:`Game.expand` (the base-class loop over the readable per-state rules:
``legal_actions``, ``apply``, ``canonical``, ``encode``); the fast path is
:meth:`Override.expand` (numpy). Every array (kind, to_move, offsets, children in
``legal_actions`` order, result, margin; dtypes too) must be identical, with and without
canonical child keys.

Coverage:

* every reachable position of small 2x2 variants (both paths enumerate identical graphs);
* every position of the 3x3 preset up to 4 plies deep (12,769 canonical positions), and positions
  from random playouts at every depth, with their 8 symmetric (non-canonical) images, in several
  variants (both key schemes, centre rule off, no_undo off, short lines, 5x5);
* hand-built positions where a player must pass;
* ``slow``: the whole 3x3 preset enumerated by the fast path, with a sample of every ply checked;
* opt-in (``OVERRIDE_FULL_CHECK=1``, ~15 min of CPU): every reachable position of the 3x3 preset.
"""

from __future__ import annotations

import os
import random

import numpy as np
import pytest

from solver.core.game import Expansion, Game
from solver.engines.enumerate import enumerate_positions
from solver.engines.graph import Graph
from solver.games import make_game
from solver.games.override import PASS, Override, OverrideState, piece

FIELDS = ("kind", "to_move", "offsets", "children", "result", "margin")


class ReferenceOverride(Override):
    """Override whose batch path is the reference loop (to enumerate graphs the slow way)."""

    def expand(self, keys: np.ndarray, *, canonical: bool = False) -> Expansion:
        return Game.expand(self, keys, canonical=canonical)


def override(**params: object) -> Override:
    g = make_game("override", params)
    assert isinstance(g, Override)
    return g


def assert_same_expansion(g: Override, keys: np.ndarray) -> None:
    """Fast and reference expansions of ``keys`` agree exactly, canonical or not; the fast one's
    child tiers are the children's."""
    keys = np.asarray(keys, dtype=np.uint64)
    for canonical in (False, True):
        ref = Game.expand(g, keys, canonical=canonical)
        fast = g.expand(keys, canonical=canonical)
        for name in FIELDS:
            a, b = getattr(ref, name), getattr(fast, name)
            assert a.dtype == b.dtype, (name, canonical)
            assert np.array_equal(a, b), (name, canonical)
        assert ref.probs is None and fast.probs is None
        # each child's tier, read off the parent, is its key's (tier_of: tests/test_tiers.py)
        assert fast.child_tier is not None and fast.child_tier.dtype == np.int64
        assert np.array_equal(fast.child_tier, g.tier_of(fast.children)), canonical


def playout_keys(g: Override, games: int, seed: int, limit: int) -> np.ndarray:
    """Keys of positions along random playouts and of their symmetric images (at most
    ``limit``, drawn at random, terminal positions kept)."""
    rng = random.Random(seed)
    keys: set[int] = set()
    terminal: set[int] = set()
    for _ in range(games):
        s = g.initial_state()
        for _ in range(80):
            for im in g.symmetries(s):
                keys.add(g.encode(im))
            if g.is_terminal(s):
                terminal.add(g.encode(s))
                break
            s = g.apply(s, rng.choice(g.legal_actions(s)))
    others = sorted(keys - terminal)
    picked = rng.sample(others, min(limit, len(others))) + sorted(terminal)
    return np.array(sorted(picked), dtype=np.uint64)


def bfs_levels(g: Override, depth: int) -> list[np.ndarray]:
    """Canonical keys of the positions first reached at plies 0..depth (fast path)."""
    levels = [np.array([g.encode(g.canonical(g.initial_state()))], dtype=np.uint64)]
    seen = levels[0]
    for _ in range(depth):
        kids = np.unique(g.expand(levels[-1], canonical=True).children)
        new = np.setdiff1d(kids, seen, assume_unique=True)
        seen = np.union1d(seen, new)
        levels.append(new)
    return levels


def assert_same_graph(a: Graph, b: Graph) -> None:
    for name in ("keys", "kind", "to_move", "ply", "offsets", "child", "result", "margin"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert a.root == b.root


# --- every position of small variants -------------------------------------------------
@pytest.mark.parametrize(
    "params",
    [
        {"size": 2, "line": 2, "per_size": 1},
        {"size": 2, "line": 2, "per_size": 2, "no_undo": False},
        {"size": 2, "line": 2, "per_size": 3},
    ],
)
def test_every_position_of_small_variants(params: dict[str, object]) -> None:
    g = override(**params)
    ref_game = ReferenceOverride(g.variant)
    for symmetry in (True, False):
        fast = enumerate_positions(g, symmetry=symmetry)
        ref = enumerate_positions(ref_game, symmetry=symmetry)
        assert_same_graph(fast, ref)
        assert fast.n > 100  # a real game graph, not a trivial one
        assert_same_expansion(g, fast.keys)


# --- the 3x3 preset -------------------------------------------------------------------
def test_every_position_of_3x3_up_to_three_plies() -> None:
    # The start, then the first places, ...: every canonical position at most 3 actions deep.
    g = override(size=3, line=3, per_size=1)
    levels = bfs_levels(g, 3)
    # Hand count of ply 1: one pyramid (6 kinds) on a corner or an edge square (the centre cannot
    # be placed on), up to symmetry: 6 x 2 = 12 classes.
    assert len(levels[1]) == 12
    assert_same_expansion(g, np.concatenate(levels))


@pytest.mark.slow
def test_every_position_of_3x3_at_four_plies() -> None:
    g = override(size=3, line=3, per_size=1)
    assert_same_expansion(g, bfs_levels(g, 4)[4])


@pytest.mark.parametrize(
    ("params", "limit"),
    [
        ({"size": 3, "line": 3, "per_size": 1}, 600),
        ({"size": 3, "line": 3, "per_size": 2}, 400),
        ({"size": 3, "line": 3, "per_size": 1, "centre_rule": False, "no_undo": False}, 300),
        ({"size": 3, "line": 2, "per_size": 3}, 300),
        ({"size": 4, "line": 4, "per_size": 1}, 120),
        ({"size": 4, "line": 3, "per_size": 1, "no_undo": False}, 100),
        ({"size": 5, "line": 4, "per_size": 1}, 60),
    ],
)
def test_positions_from_playouts(params: dict[str, object], limit: int) -> None:
    g = override(**params)
    keys = playout_keys(g, games=20, seed=5, limit=limit)
    assert len(keys) >= limit
    assert_same_expansion(g, keys)
    # A batch with repeated and unsorted keys works the same.
    assert_same_expansion(g, np.concatenate([keys[::-7], keys[:20]]))


def test_empty_batch() -> None:
    g = override(size=3, line=3, per_size=1)
    fast = g.expand(np.empty(0, dtype=np.uint64))
    assert len(fast.children) == 0 and list(fast.offsets) == [0]
    assert_same_expansion(g, np.empty(0, dtype=np.uint64))


def test_pass_positions() -> None:
    # Every square topped by a large and no line (see test_override.test_pass_only_when_no_action):
    # the only action is a pass, for either side and whatever the last move was.
    g = override(size=3, line=3, per_size=5)
    tops = "ABAABBBAA"  # rows from the top: A B A / A B B / B A A
    stacks = [()] * 9
    for i, colour in enumerate(tops):
        r, c = divmod(i, 3)
        stacks[(2 - r) * 3 + c] = (piece("AB".index(colour), 2),)
    states = [OverrideState(tuple(stacks), p, last) for p in (0, 1) for last in (None, (1, 4), (4, 1))]
    for s in states:
        assert g.legal_actions(s) == [PASS]
    # Under the larges, smaller pyramids change nothing.
    stacks2 = list(stacks)
    stacks2[0] = (piece(0, 0), piece(1, 1)) + stacks2[0]
    states.append(OverrideState(tuple(stacks2), 0, None))
    assert_same_expansion(g, np.array([g.encode(s) for s in states], dtype=np.uint64))


# --- the whole 3x3 preset -------------------------------------------------------------
@pytest.mark.slow
def test_whole_3x3_preset_sampled_by_ply() -> None:
    # Enumerate everything with the fast path, then check up to 1,500 positions of every ply.
    g = override(size=3, line=3, per_size=1)
    graph = enumerate_positions(g, symmetry=True)
    rng = np.random.default_rng(2)
    picks = []
    for d in range(int(graph.ply.max()) + 1):
        rows = np.flatnonzero(graph.ply == d)
        picks.append(rng.choice(rows, size=min(1500, len(rows)), replace=False))
    assert_same_expansion(g, graph.keys[np.concatenate(picks)])
    # Every terminal position has a winner; every other one has a legal action.
    assert set(np.unique(graph.result[graph.kind == 3])) <= {-1, 1}
    assert np.all(np.diff(graph.offsets)[graph.kind == 0] > 0)


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("OVERRIDE_FULL_CHECK"), reason="set OVERRIDE_FULL_CHECK=1 (~15 min)")
def test_every_position_of_3x3_preset() -> None:
    g = override(size=3, line=3, per_size=1)
    graph = enumerate_positions(g, symmetry=True)
    for start in range(0, graph.n, 20_000):
        assert_same_expansion(g, graph.keys[start : start + 20_000])
