"""Which engine solves a game, from its declared capabilities alone (``Game.chance``,
``Game.secret_choices``): the one place that maps declarations to engines. The router
(:mod:`.route`), the whole-graph solver (:mod:`.whole`) and the tier worker (:mod:`.tiered`,
:data:`solver.pipeline.tiered.TIER_WORKERS`) all ask :func:`engine_of`."""

from __future__ import annotations

from typing import Literal

from solver.core.game import Game

Kind = Literal["whole", "tiers", "sweep", "rounds"]
Engine = Literal["retrograde", "value-iteration", "secret-choice"]
KINDS: tuple[str, ...] = ("whole", "tiers", "sweep", "rounds")
ENGINES: tuple[str, ...] = ("retrograde", "value-iteration", "secret-choice")


def engine_of(game: Game, kind: Kind = "whole") -> Engine:
    """The engine a ``kind`` solve of ``game`` uses, from its declarations alone: secret choices
    the secret-choice engine (which has no tier worker), dice during play value iteration
    (tiers too), a random setup alone retrograde (below the setups, whose expected results are
    then summed; a sweep solves each setup by retrograde), else retrograde."""
    if game.secret_choices and kind != "sweep":
        return "secret-choice"
    if game.chance == "in-play":
        return "value-iteration"
    return "retrograde"
