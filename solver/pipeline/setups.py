"""The setups table of a game whose start is a random setup: shared by the whole-graph solve
(:mod:`solver.pipeline.whole`) and the setup sweep (:mod:`solver.pipeline.tasks`), so the two tables
are equal column for column."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import polars as pl

from solver.core.game import Game
from solver.core.values import FLIP, VALUE_NAMES


def setups_frame(game: Game, keys: np.ndarray, probs: np.ndarray, mult: list[int | None],
                 root_player: int, to_move: np.ndarray, codes: np.ndarray, remoteness: np.ndarray,
                 margin: np.ndarray | None) -> pl.DataFrame:
    """The setups table: one row per setup (its start position's key, layout, probability,
    arrangements, and value / remoteness / margin from the view of ``root_player``, who moves
    first). Shared by the whole-graph solve and the setup sweep (:mod:`solver.pipeline.tasks`),
    so the two tables are equal column for column."""
    sign = np.where(to_move == root_player, 1, -1)
    eff = np.where(sign == 1, codes, FLIP[codes])
    return pl.DataFrame({
        "key": np.asarray(keys, dtype=np.uint64),
        "layout": [game.describe_state(game.decode(int(k))) for k in keys],
        "probability": np.asarray(probs, dtype=np.float64),
        "multiplicity": pl.Series(mult, dtype=pl.Int64),
        "value": pl.Series([VALUE_NAMES[c] for c in eff], dtype=pl.Utf8),
        "remoteness": remoteness,
        **({"margin": (sign * margin).astype(np.int16)} if margin is not None else {}),
    })


def setup_multiplicities(game: Game, root: object, n: int) -> list[int | None]:
    """Arrangements behind each of the ``n`` outcomes of the random setup at ``root``: the game's
    own counts when it gives one per outcome (``Game.chance_counts``), else the smallest integers
    proportional to the exact probabilities, else unknown (``None``)."""
    counts = game.chance_counts(root)
    if counts is not None and len(counts) == n:
        return list(counts)
    exact = [p for _, p in game.chance_outcomes(root)]
    return multiplicities(exact) if len(exact) == n else [None] * n


def multiplicities(probs: list[Fraction]) -> list[int]:
    """Integer weights proportional to exact probabilities (smallest such integers)."""
    denom = 1
    for p in probs:
        denom = denom * Fraction(p).denominator // math.gcd(denom, Fraction(p).denominator)
    return [int(Fraction(p) * denom) for p in probs]
