"""The registry of games: name -> class, imported lazily so a broken game cannot break others."""

from __future__ import annotations

import importlib
from typing import Any, Mapping

from solver.core.game import Game
from solver.errors import VariantError

#: game name -> "module:Class"; the one place a game is registered
REGISTRY: dict[str, str] = {
    "override": "solver.games.override:Override",
    "greener": "solver.games.greener:Greener",
    "blam": "solver.games.blam:Blam",
    "carrots": "solver.games.carrots:Carrots",
    "petal": "solver.games.petal:Petal",
}


def available_games() -> list[str]:
    """Names of the registered games whose module imports."""
    out = []
    for name in REGISTRY:
        try:
            game_class(name)
        except (ImportError, AttributeError):
            continue
        out.append(name)
    return out


def game_class(name: str) -> type[Game]:
    """The class of the game called ``name``."""
    if name not in REGISTRY:
        raise VariantError(
            f"unknown game {name!r}; known games: {', '.join(REGISTRY)} (see `pyramids list`)"
        )
    module_name, class_name = REGISTRY[name].split(":")
    module = importlib.import_module(module_name)
    return getattr(module, class_name)


def make_game(name: str, params: Mapping[str, Any] | None = None, **kwargs: Any) -> Game:
    """Build a game from its name and parameters (text like ``"3"``/``"on"`` or Python values).

    >>> make_game("override", size=3, line=3, per_size=1)
    override(size=3, line=3, per_size=1, centre_rule=on, no_undo=on)
    """
    return game_class(name).from_params(params, **kwargs)

