"""Players for every game of the protocol, and self-play statistics for full-size games.

>>> from solver.api import make_game
>>> from solver.players import make_player, estimate
>>> game = make_game("blam")                                    # the full-size 8x8 game
>>> est = estimate(game, make_player("mcts", budget=100), make_player("greedy"), games=20, seed=1)
>>> share, low, high = est.shares["win"]                        # with its 95% Wilson interval
>>> low <= share <= high
True

Players (:func:`make_player`): ``random``; ``greedy`` (one ply with the game's evaluation);
``alphabeta`` (``depth``, ``time_limit``); ``mcts`` (``budget``, ``c``, ``playout_moves``,
``simultaneous``: ``rm`` regret matching or ``ucb`` decoupled UCT at secret choices, ``gamma``,
``playouts``: ``compiled`` (the game's compiled random playouts) or ``rules``).
Self-play: :func:`play_game`, :func:`estimate`; calibration against an exactly solved table:
:func:`calibrate`. Evaluations: :mod:`solver.players.evals`.
"""

from __future__ import annotations

from typing import Any

from solver.players.alphabeta import AlphaBetaPlayer
from solver.players.base import Player, sample_chance
from solver.players.evals import EVALUATIONS, evaluate
from solver.players.mcts import MCTSPlayer
from solver.players.registry import PLAYERS, make_player, player_names, player_options
from solver.players.simple import GreedyPlayer, RandomPlayer

__all__ = ["Player", "make_player", "PLAYERS", "player_names", "RandomPlayer", "GreedyPlayer",
           "AlphaBetaPlayer", "MCTSPlayer", "player_options", "evaluate", "EVALUATIONS", "sample_chance",
           "play_game", "estimate", "calibrate", "GameRecord", "Estimate", "Calibration"]


def __getattr__(attr: str) -> Any:  # self-play and calibration import the solver's tables: lazily
    if attr in ("play_game", "estimate", "calibrate", "GameRecord", "Estimate", "Calibration"):
        from solver.players import selfplay

        return getattr(selfplay, attr)
    raise AttributeError(f"module 'solver.players' has no attribute {attr!r}")
