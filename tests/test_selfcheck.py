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
