"""The alpha-beta player's compiled search (solver/core/ab_jit.py) scores every root move as plain
depth-limited minimax through the readable rules does (written here, no pruning, no table), and
as the readable player (``engine=python``) does, on every game with compiled rules, small boards
and full size, along random games."""

from __future__ import annotations

import math

import numpy as np
import pytest

from solver.api import make_game
from solver.core.game import NodeKind
from solver.errors import VariantError
from solver.players import make_player
from solver.players.alphabeta import WIN, AlphaBetaPlayer
from solver.players.base import sample_chance
from solver.players.evals import evaluate

CASES = [("blam", dict(rows=3, cols=3, per_size=1)), ("blam", dict(rows=3, cols=4, per_size=1, chain=False)),
         ("override", dict(size=3, line=3, per_size=1)), ("override", dict(size=3, line=3, per_size=2)),
         ("greener", dict(rows=3, cols=3, black=2, white=2)), ("greener", dict(rows=2, cols=3, black=3, white=3))]
FULL = ["blam", "override", "greener"]


def _ids(case):
    name, shape = case
    return name + "-" + "-".join(f"{k}={v}" for k, v in shape.items())


def _minimax(game, state, me, depth, ply):
    """Depth-limited minimax of ``state`` for ``me`` through the readable rules (the scores of
    :mod:`solver.players.alphabeta`'s docstring)."""
    if game.node_kind(state) == NodeKind.TERMINAL:
        r = int(game.outcome(state).results[me])
        return 0.0 if r == 0 else (WIN - ply) * r
    if depth <= 0:
        return evaluate(game, state, me)
    values = [_minimax(game, game.apply(state, a), me, depth - 1, ply + 1) for a in game.legal_actions(state)]
    return max(values) if game.to_move(state) == me else min(values)


def _positions(game, seed, count, plies):
    """Decision positions along random games (``count`` of them, at most ``plies`` deep)."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        state = game.initial_state()
        while game.node_kind(state) == NodeKind.CHANCE:  # Greener's random setup
            state = game.apply(state, sample_chance(game, state, rng))
        for _ in range(int(rng.integers(0, plies + 1))):
            if game.node_kind(state) != NodeKind.DECISION:
                break
            actions = game.legal_actions(state)
            state = game.apply(state, actions[int(rng.integers(len(actions)))])
        if game.node_kind(state) == NodeKind.DECISION and len(game.legal_actions(state)) > 1:
            out.append(state)
    return out


def _best(result):
    return round(result.score, 9), sorted(result.best)


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_compiled_scores_are_the_minimax_scores_through_the_readable_rules(case):
    name, shape = case
    game = make_game(name, shape)
    assert game.compiled_rules() is not None
    for depth in (1, 2, 3):
        for state in _positions(game, depth, 6, 8):
            me = game.to_move(state)
            actions = game.legal_actions(state)
            want = [_minimax(game, game.apply(state, a), me, depth - 1, 1) for a in actions]
            top = max(want)
            got = AlphaBetaPlayer(depth=depth).search(game, state)
            assert 1 <= got.depth <= depth  # deepening stops at a forced win found
            assert got.score == pytest.approx(top, abs=1e-9)
            assert sorted(got.best) == [i for i, v in enumerate(want) if v >= top - 1e-9]
            # the readable player agrees (its table keeps same-depth scores only)
            assert _best(AlphaBetaPlayer(depth=depth, engine="python").search(game, state)) == _best(got)


@pytest.mark.parametrize("name", FULL)
def test_compiled_and_readable_players_agree_at_full_size(name):
    """Default boards, 3 plies (the readable search at this depth takes seconds a position)."""
    game = make_game(name, {})
    for state in _positions(game, 7, 3, 12):
        fast = AlphaBetaPlayer(depth=3).search(game, state)
        slow = AlphaBetaPlayer(depth=3, engine="python").search(game, state)
        assert _best(fast) == _best(slow)
        assert fast.nodes > 0


def test_a_forced_win_is_found_and_scored_by_its_length():
    """Blam! 3x3's start is solved (the readable player's test in test_players.py): a win found
    within the depth scores ``WIN - plies`` exactly as the readable search scores it."""
    game = make_game("blam", dict(rows=3, cols=3, per_size=1))
    state = game.initial_state()
    fast = AlphaBetaPlayer(depth=9).search(game, state)
    slow = AlphaBetaPlayer(depth=9, engine="python").search(game, state)
    assert _best(fast) == _best(slow)
    assert abs(fast.score) > 500 or fast.score == 0.0


def test_time_limit_stops_the_compiled_search_and_depth_one_always_finishes():
    game = make_game("override", {})
    state = game.initial_state()
    r = AlphaBetaPlayer(depth=30, time_limit=0.001).search(game, state)
    assert 1 <= r.depth < 30 and r.best
    assert math.isfinite(r.score)


def test_engine_option_is_checked_and_named():
    with pytest.raises(VariantError, match="engine must be 'compiled'.*engine=python"):
        AlphaBetaPlayer(engine="fast")
    assert make_player("alphabeta", engine="python").options()["engine"] == "python"
    assert "engine" not in make_player("alphabeta").options()


def test_a_search_of_some_moves_only_scores_those_moves():
    """``search(actions=...)`` with a list other than the position's own moves searches those
    (through the readable search): indices refer to the list given."""
    game = make_game("blam", dict(rows=3, cols=3, per_size=1))
    state = _positions(game, 3, 1, 4)[0]
    actions = game.legal_actions(state)
    some = actions[::-1][:3]
    got = AlphaBetaPlayer(depth=2).search(game, state, actions=some)
    me = game.to_move(state)
    want = [_minimax(game, game.apply(state, a), me, 1, 1) for a in some]
    assert sorted(got.best) == [i for i, v in enumerate(want) if v >= max(want) - 1e-9]


def _game_positions(game, seed, count):
    """The decision positions of a self-play game of the 2-ply player (pyramids that move back and
    forth meet positions again), at most ``count``."""
    rng = np.random.default_rng(seed)
    player = make_player("alphabeta", depth=2)
    state = game.initial_state()
    out = []
    while game.node_kind(state) == NodeKind.CHANCE:
        state = game.apply(state, sample_chance(game, state, rng))
    while len(out) < count and game.node_kind(state) == NodeKind.DECISION:
        if len(game.legal_actions(state)) > 1:
            out.append(state)
        state = game.apply(state, player.choose(game, state, rng))
    return out


@pytest.mark.parametrize("name", FULL)
def test_a_table_kept_across_searches_finds_the_same_best_moves(name):
    """The table kept from one search to the next of the same rules and root player
    (``kept_table``, what the player uses) gives every search along a game the best moves and
    best score a new table gives, and every other move a score below them, on both players'
    positions (its scores are from the root player's point of view: one table a player)."""
    from solver.core.ab_jit import build_search, kept_table, new_table, table_size

    game = make_game(name, {})
    rules = game.compiled_rules()
    search = build_search(*rules.parts)
    depth = 3
    states = _game_positions(game, 5, 40)
    assert {game.to_move(s) for s in states} == {0, 1}
    again = None
    for i, state in enumerate(states):
        args = (rules.encode(state), rules.params, depth, rules.max_branch, math.inf)
        table = kept_table(rules, int(game.to_move(state)), table_size(depth))
        assert i < 2 or (table[2] >= 0).any()  # filled by the searches before
        kept = search(*args, *table)
        fresh = search(*args, *new_table(table_size(depth)))
        assert np.array_equal(kept[0], fresh[0]) and kept[2] == fresh[2]
        top = fresh[1].max()
        best = np.flatnonzero(fresh[1] >= top - 1e-9)
        assert kept[1].max() == top
        assert np.array_equal(np.flatnonzero(kept[1] >= top - 1e-9), best)
        if again is None and fresh[3] > 2000:
            # a position met again (a move and its way back) is read from the table, not searched
            again = search(*args, *table)
            assert np.array_equal(again[1] >= top - 1e-9, fresh[1] >= top - 1e-9)
            assert again[3] < fresh[3] // 10
    assert again is not None


def test_a_kept_table_is_emptied_for_another_games_rules():
    """Positions of two variants may share an encoding: a thread's kept table starts empty when it
    searches other rules, and is kept (filled) for the same rules."""
    from solver.core.ab_jit import build_search, kept_table, table_size

    depth = 2
    size = table_size(depth)
    small, large = make_game("override", dict(size=3, line=3, per_size=1)), make_game("override", {})
    for game in (small, large):
        rules = game.compiled_rules()
        table = kept_table(rules, 0, size)
        assert table[2].max() == -1
        state = game.initial_state()
        build_search(*rules.parts)(rules.encode(state), rules.params, depth, rules.max_branch, math.inf, *table)
        assert (kept_table(rules, 0, size)[2] >= 0).any()
    assert kept_table(small.compiled_rules(), 0, size)[2].max() == -1
