"""The players by name: :func:`make_player` builds one from its name and options.

Apart from the package's ``__init__`` so that self-play (:mod:`solver.players.selfplay`), which
the package loads lazily, can build players by name without importing the package back.
"""

from __future__ import annotations

from typing import Any

from solver.errors import VariantError
from solver.players.alphabeta import AlphaBetaPlayer
from solver.players.base import Player
from solver.players.mcts import MCTSPlayer
from solver.players.simple import GreedyPlayer, RandomPlayer


#: player name -> class (its options are the class's public dataclass fields)
PLAYERS: dict[str, type[Player]] = {
    "random": RandomPlayer,
    "greedy": GreedyPlayer,
    "alphabeta": AlphaBetaPlayer,
    "mcts": MCTSPlayer,
}


def player_names() -> list[str]:
    """The names :func:`make_player` knows."""
    return list(PLAYERS)


def player_options(name: str) -> dict[str, Any]:
    """The options of the player called ``name`` with their defaults."""
    import dataclasses

    cls = PLAYERS[name]
    return {f.name: f.default for f in dataclasses.fields(cls) if not f.name.startswith("_")}


def make_player(name: str, **options: Any) -> Player:
    """The player called ``name`` with ``options`` (numbers, or text such as ``"100"``); a
    one-line :class:`VariantError` with the fix for an unknown name, an unknown option or a bad
    value (a budget below 1, a depth below 1, ...).

    Options: ``alphabeta``: ``depth`` (default 3), ``time_limit`` (seconds per move, default
    none), ``engine`` (``"compiled"``: the compiled search where the game has compiled rules,
    default; ``"python"``: the readable search); ``mcts``: ``budget`` (playouts per move, default 2000), ``c`` (1.4),
    ``playout_moves`` (200), ``simultaneous`` (``"rm"``: regret matching, default; ``"ucb"``:
    decoupled UCT; ``"lp"``: the matrix game of the root's sampled joint results; ``"uniform"``:
    every action alike), ``gamma`` (regret matching's exploration, 0.1) and ``playouts``
    (``"compiled"``: the game's compiled random playouts where it has them, default; ``"rules"``:
    the readable rules); ``greedy``: ``evaluation`` (``default``, or another the game offers:
    Carrots and Broccoli's ``race``); ``random`` has none.

    >>> make_player("mcts", budget=200)
    mcts(budget=200, c=1.4, playout_moves=200)
    """
    key = str(name).strip().lower()
    if key not in PLAYERS:
        raise VariantError(f"unknown player {name!r}; players: {', '.join(PLAYERS)} "
                           "(e.g. make_player('mcts', budget=200))")
    known = player_options(key)
    for opt in options:
        if opt not in known:
            raise VariantError(f"player {key!r} has no option {opt!r}; its options: "
                               f"{', '.join(known) if known else 'none'}")
    return PLAYERS[key](**options)  # each player checks its values (one line with the fix)
