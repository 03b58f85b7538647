"""What every player shares: the :class:`Player` interface, option checking, chance sampling and
terminal values.

A player sees only the game protocol (:mod:`solver.core.game`), so it plays every built-in game
and every plug-in. It is asked for a move at a ``DECISION`` node (:meth:`Player.choose`) and for
a joint choice at a ``SIMULTANEOUS`` node (:meth:`Player.choose_joint`: one action per player;
in self-play each seat's player contributes its own seat's action, see
:func:`solver.players.selfplay.play_game`). Chance nodes are never a player's business: self-play
samples them with :func:`sample_chance`. All randomness comes from the ``numpy`` generator
passed in, so a seeded game is reproducible.
"""

from __future__ import annotations

import math
import re
import weakref
from abc import ABC, abstractmethod
from bisect import bisect_right
from typing import Any, Callable, ClassVar, Hashable, Sequence

import numpy as np

from solver.core.game import Game, NodeKind
from solver.errors import PyramidsError, VariantError

Action = Hashable

#: what a chance node whose outcomes cannot be listed (too many setups) is sampled with, by game
#: name: ``sampler(game, state, rng) -> outcome``. A plug-in game can instead define a method
#: ``sample_chance(state, rng)``; both are used only when ``chance_outcomes`` refuses to list.
CHANCE_SAMPLERS: dict[str, Callable[[Game, Any, np.random.Generator], Action]] = {}


def _greener_setup(game: Game, state: Any, rng: np.random.Generator) -> Action:
    """Greener ``setup=all`` on a board whose setups are too many to list (the full 6x6 game):
    a uniformly random arrangement of the black, white and green pyramids (the same distribution
    as the listed setup classes weighted by their sizes)."""
    from solver.games.greener import BLACK_PYRAMID, GREEN_PYRAMID, WHITE_PYRAMID

    g: Any = game
    pool = [BLACK_PYRAMID] * g.black + [WHITE_PYRAMID] * g.white + [GREEN_PYRAMID] * g.green
    order = rng.permutation(len(pool))
    return tuple(pool[i] for i in order)


CHANCE_SAMPLERS["greener"] = _greener_setup


def game_title(game: Game) -> str:
    """A short name of the game for messages: its title up to the first colon or bracket
    (``"Petal Battle"``), else its registry name."""
    return game.short_title


#: per game: chance node -> its listed outcomes (dice are rolled at every turn of some games)
_CHANCE_CACHE: "weakref.WeakKeyDictionary[Game, dict[Any, list[tuple[Action, float]]]]" = weakref.WeakKeyDictionary()


def chance_list(game: Game, state: Any) -> list[tuple[Action, float]] | None:
    """The chance outcomes of ``state`` with float probabilities, or ``None`` when the game
    refuses to list them (too many, e.g. every setup of the full-size Greener board)."""
    try:
        cache = _CHANCE_CACHE.setdefault(game, {})
        got = cache.get(state)
    except TypeError:  # a plug-in game (or state) that cannot be a dictionary key: no cache
        cache, got = {}, None
    if got is not None:
        return got
    try:
        outs = game.chance_outcomes(state)
    except PyramidsError:
        return None
    listed = [(a, float(p)) for a, p in outs]
    if len(cache) > 50_000:
        cache.clear()
    cache[state] = listed
    return listed


def _cumulative(outs: list[tuple[Action, float]]) -> list[float]:
    total, cum = 0.0, []
    for _, p in outs:
        total += p
        cum.append(total)
    return cum


def sample_chance(game: Game, state: Any, rng: np.random.Generator) -> Action:
    """One outcome of the chance node ``state``, drawn with the game's probabilities.

    When the outcomes cannot be listed, the game's own ``sample_chance(state, rng)`` method or
    the sampler of :data:`CHANCE_SAMPLERS` is used; a :class:`VariantError` when neither exists.
    """
    outs = chance_list(game, state)
    if outs is None:
        own = getattr(game, "sample_chance", None)
        if callable(own):
            return own(state, rng)
        sampler = CHANCE_SAMPLERS.get(game.name)
        if sampler is None:
            raise VariantError(f"{game.variant.label()}: its chance outcomes cannot be listed and the game "
                               "has no sample_chance(state, rng) method; play a smaller variant")
        return sampler(game, state, rng)
    if len(outs) == 1:
        return outs[0][0]
    cum = _cumulative(outs)
    i = bisect_right(cum, float(rng.random()) * cum[-1])
    return outs[min(i, len(outs) - 1)][0]


def terminal_values(game: Game, state: Any) -> tuple[float, ...]:
    """Every player's result at a terminal ``state`` (+1 win, 0 tie, -1 loss)."""
    return game.outcome(state).values


def pick(rng: np.random.Generator, items: Sequence[Any]) -> Any:
    """A uniformly random element of a non-empty sequence."""
    return items[int(rng.integers(len(items)))] if len(items) > 1 else items[0]


# --- options ---------------------------------------------------------------------------------

def int_option(player: str, name: str, value: Any, *, minimum: int, example: int, what: str) -> int:
    """``value`` as an int of at least ``minimum`` (text like ``"100"`` accepted); a one-line
    :class:`VariantError` with the fix otherwise."""
    number: int | None = None
    if isinstance(value, bool):
        number = None
    elif isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d+\s*", value):
        number = int(value)
    if number is None:
        raise VariantError(f"{player} {name} must be a whole number ({what}), got {value!r}; "
                           f"use e.g. {name}={example}")
    if number < minimum:
        raise VariantError(f"{player} {name} must be at least {minimum} ({what}), got {number}; "
                           f"use e.g. {name}={example}")
    return number


def float_option(player: str, name: str, value: Any, *, minimum: float, example: float, what: str,
                 strict: bool = False) -> float:
    """``value`` as a finite float ``>= minimum`` (``> minimum`` when ``strict``); one-line error."""
    try:
        if isinstance(value, bool):
            raise ValueError
        number = float(value)
    except (TypeError, ValueError):
        raise VariantError(f"{player} {name} must be a number ({what}), got {value!r}; "
                           f"use e.g. {name}={example}") from None
    if not math.isfinite(number) or number < minimum or (strict and number == minimum):
        bound = f"above {minimum:g}" if strict else f"at least {minimum:g}"
        raise VariantError(f"{player} {name} must be {bound} ({what}), got {value!r}; "
                           f"use e.g. {name}={example}")
    return number


class Player(ABC):
    """A way of choosing moves, usable for every game of the protocol.

    Subclasses set :attr:`name` and implement :meth:`choose`; players that can make secret
    simultaneous choices override :meth:`choose_joint`. Players hold only their options (they are
    small and picklable, so self-play can send them to worker processes); per-move state lives
    in the call.
    """

    #: registry name (``make_player(name)``)
    name: ClassVar[str] = "player"

    @abstractmethod
    def choose(self, game: Game, state: Any, rng: np.random.Generator) -> Action:
        """A legal action of the player to move at the ``DECISION`` node ``state``."""

    def choose_joint(self, game: Game, state: Any, rng: np.random.Generator) -> tuple[Action, ...]:
        """At a ``SIMULTANEOUS`` node: one action per player (row ``p`` from
        ``game.player_actions(state, p)``). In self-play between different players each seat
        keeps only its own entry."""
        raise VariantError(f"{self.name} cannot play {game_title(game)}'s secret simultaneous choices; "
                           "use --player mcts or random")

    def options(self) -> dict[str, Any]:
        """The player's options (what :func:`make_player` was given, defaults filled in)."""
        return {}

    def describe(self) -> str:
        """``mcts(budget=2000, c=1.4, ...)``: the name and every option."""
        opts = ", ".join(f"{k}={v}" for k, v in self.options().items() if v is not None)
        return f"{self.name}({opts})" if opts else self.name

    def __repr__(self) -> str:
        return self.describe()


def check_decision(game: Game, state: Any, who: str) -> None:
    """A clear error when a player is asked for a move where there is none to make."""
    kind = game.node_kind(state)
    if kind == NodeKind.DECISION:
        return
    if kind == NodeKind.SIMULTANEOUS:
        raise VariantError(f"{who} was asked for a single move at a secret simultaneous choice of "
                           f"{game_title(game)}; ask choose_joint")
    raise ValueError(f"{who}: no move to choose at a {kind.name.lower()} node")
