"""The generic self-check on every registered game, at each of its presets."""

from __future__ import annotations

import pytest

from solver.core.selfcheck import selfcheck
from solver.games import REGISTRY, game_class


def _cases():
    for name in REGISTRY:
        try:
            cls = game_class(name)
        except ImportError:
            continue
        for preset, params in cls.presets.items():
            yield pytest.param(name, params, id=f"{name}-{preset}")


@pytest.mark.parametrize("name,params", list(_cases()))
def test_selfcheck_presets(name, params):
    game = game_class(name).from_params(params)
    assert selfcheck(game, playouts=8, max_plies=60) == []


def test_selfcheck_catches_a_broken_game():
    from tests.toygames import Subtraction

    class Broken(Subtraction):
        def decode(self, key):  # off by one: round trip fails
            return (key // 2 + 1, key % 2)

    problems = selfcheck(Broken.from_params(n=4), playouts=2)
    assert any("decode" in p for p in problems)


def test_selfcheck_checks_simultaneous_nodes():
    from solver.games import make_game
    from solver.games.petal import Petal

    class DuplicateOrders(Petal):
        def action_name(self, state, action):  # every order gets the same name
            return "SML" if action[0] == "order" else super().action_name(state, action)

    game = DuplicateOrders(make_game("petal", petals=6, run=3, per_size=1).variant)
    problems = selfcheck(game, playouts=1, max_plies=2)
    assert any("not unique at simultaneous" in p for p in problems)

    class SwappedSeat(Petal):
        def to_move(self, state):  # the mirror image changes the player to move: broken
            if state.board[1] or state.board[self.n - 1]:
                return 1 - super().to_move(state) if state.board[1] else super().to_move(state)
            return super().to_move(state)

    game = SwappedSeat(make_game("petal", petals=6, run=3, per_size=1).variant)
    problems = selfcheck(game, playouts=10, max_plies=60)
    assert any("another player to move" in p for p in problems)
