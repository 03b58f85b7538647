"""The registry of games: name -> class, imported lazily so a broken game cannot break others.

Three ways a game is found:

* the built-in games of :data:`REGISTRY`;
* **plug-ins**: installed packages that declare an entry point in the group ``pyramids.games``
  (entry point name = the game's name, value = ``"module:Class"``), found through
  :mod:`importlib.metadata`, the standard mechanism;
* an **import path** ``"module:Class"`` given directly (``pyramids solve --game mypkg:MyGame``),
  which needs no packaging at all.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from importlib import metadata
from typing import Any, Mapping, NamedTuple

from solver.core.game import Game
from solver.errors import VariantError

#: game name -> "module:Class"; the built-in games
REGISTRY: dict[str, str] = {
    "override": "solver.games.override:Override",
    "greener": "solver.games.greener:Greener",
    "blam": "solver.games.blam:Blam",
    "carrots": "solver.games.carrots:Carrots",
    "petal": "solver.games.petal:Petal",
}

#: the entry-point group plug-in packages declare their games in
ENTRY_POINT_GROUP = "pyramids.games"

#: games loaded by import path in this process: name -> class (so tables and reports of such a
#: game find it again by name)
_LOADED: dict[str, type[Game]] = {}


class GameEntry(NamedTuple):
    """One game as ``pyramids list`` shows it: its class, or the one-line reason it is broken."""

    name: str
    origin: str  # "built-in", or "plug-in <module:Class> (<distribution>)"
    cls: type[Game] | None
    error: str | None


def plugin_specs() -> dict[str, tuple[str, str]]:
    """Installed plug-ins: game name -> (``"module:Class"``, distribution name)."""
    out: dict[str, tuple[str, str]] = {}
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        dist = getattr(getattr(ep, "dist", None), "name", None) or "?"
        out.setdefault(ep.name, (ep.value, dist))
    return out


def _import_spec(spec: str) -> type[Game]:
    """The class named by ``"module:Class"``; a clear :class:`VariantError` otherwise."""
    module_name, sep, class_name = spec.partition(":")
    if not sep or not module_name or not class_name:
        raise VariantError(f"{spec!r} is not an import path; write module:Class, e.g. mypkg.games:MyGame")
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # like `python -m`: a module in the current folder imports
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # a plug-in's own bug: name it in one line, never a traceback
        raise VariantError(f"cannot import {module_name!r} for game {spec!r}: "
                           f"{type(exc).__name__}: {exc}") from None
    obj: Any = module
    for part in class_name.split("."):
        if not hasattr(obj, part):
            raise VariantError(f"module {module_name!r} has no {class_name!r} (game {spec!r})")
        obj = getattr(obj, part)
    if not (inspect.isclass(obj) and issubclass(obj, Game)):
        raise VariantError(f"{spec!r} is not a subclass of solver.core.game.Game")
    if inspect.isabstract(obj):
        missing = ", ".join(sorted(obj.__abstractmethods__))
        raise VariantError(f"game {spec!r} does not implement {missing} (see the README, 'Your own game')")
    return obj


def game_class(name: str) -> type[Game]:
    """The class of the game called ``name`` (a built-in game, an installed plug-in, or an
    import path ``"module:Class"``)."""
    if ":" in name:
        cls = _import_spec(name)
        builtin = REGISTRY.get(cls.name)
        if builtin is not None and builtin != f"{cls.__module__}:{cls.__qualname__}":
            raise VariantError(f"game {name!r} is called {cls.name!r}, the name of a built-in game; "
                               "give its class another `name`")
        _LOADED[cls.name] = cls
        return cls
    if name in REGISTRY:
        module_name, class_name = REGISTRY[name].split(":")
        return getattr(importlib.import_module(module_name), class_name)
    if name in _LOADED:
        return _LOADED[name]
    plugins = plugin_specs()
    if name in plugins:
        spec, dist = plugins[name]
        cls = _import_spec(spec)
        if cls.name != name:
            raise VariantError(f"plug-in {name!r} ({spec} from {dist}) names its game {cls.name!r}; "
                               "the entry point's name and the class's `name` must agree")
        return cls
    known = ", ".join(list(REGISTRY) + [n for n in plugins if n not in REGISTRY])
    raise VariantError(
        f"unknown game {name!r}; known games: {known} (see `pyramids list`; a game of your own: "
        "--game module:Class)"
    )


def list_games() -> list[GameEntry]:
    """Every built-in game, then every installed plug-in, each with its class or its error."""
    out: list[GameEntry] = []
    for name, spec in REGISTRY.items():
        try:
            out.append(GameEntry(name, "built-in", game_class(name), None))
        except Exception as exc:  # noqa: BLE001 - listed, not raised
            out.append(GameEntry(name, "built-in", None, f"{type(exc).__name__}: {exc}"))
    for name, (spec, dist) in plugin_specs().items():
        origin = f"plug-in {spec} ({dist})"
        if name in REGISTRY:
            out.append(GameEntry(name, origin, None, f"the name {name!r} is a built-in game's; "
                                 "the plug-in must use another name"))
            continue
        try:
            out.append(GameEntry(name, origin, game_class(name), None))
        except Exception as exc:  # noqa: BLE001 - a broken plug-in never hides the others
            out.append(GameEntry(name, origin, None, str(exc) if isinstance(exc, VariantError)
                                 else f"{type(exc).__name__}: {exc}"))
    return out


def available_games() -> list[str]:
    """Names of the built-in games whose module imports (the shipped reports cover these)."""
    return [e.name for e in list_games() if e.cls is not None and e.origin == "built-in"]


def make_game(name: str, params: Mapping[str, Any] | None = None, **kwargs: Any) -> Game:
    """Build a game from its name (or ``"module:Class"``) and parameters (text like
    ``"3"``/``"on"`` or Python values).

    >>> make_game("override", size=3, line=3, per_size=1)
    override(size=3, line=3, per_size=1, centre_rule=on, no_undo=on)
    """
    return game_class(name).from_params(params, **kwargs)
