"""Statistics shared by self-play estimates, setup-sweep samples and reports, from SciPy.

One place for the confidence intervals the toolkit quotes, so every report says the same thing
the same way: Wilson score intervals of proportions (``scipy.stats.binomtest``), widened where the
items come in correlated clusters (the moves of one game), and the normal quantile for intervals
of means.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any, Sequence

import numpy as np
import polars as pl

# (scipy.stats is imported where it is used: it takes most of a second, and the command imports
# this module for every solve)

#: the two-sided 95% normal quantile (about 1.96), for intervals of means
Z95: float = NormalDist().inv_cdf(0.975)


def wilson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval of the proportion ``k / n`` at ``confidence`` (95% by default);
    ``(0, 1)`` when there is no observation (``n = 0``)."""
    if n <= 0:
        return 0.0, 1.0
    from scipy.stats import binomtest

    ci = binomtest(int(k), int(n)).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)


def clustered_share(kept: Sequence[int], counted: Sequence[int], confidence: float = 0.95) -> tuple[float, float]:
    """A 95% interval (at ``confidence``) of the share ``sum(kept) / sum(counted)`` where the
    counts come in clusters (``kept[i]`` of ``counted[i]`` in game ``i``), whose items are not
    independent: a game run to the move cap adds hundreds of alike moves. The wider of the Wilson
    interval (every item independent) and the ratio's cluster-robust interval (its standard
    error by the delta method over the clusters, Student's t with clusters - 1 degrees of freedom),
    so that one long game counts as one game. ``(0, 1)`` when nothing was counted."""
    k = np.asarray(kept, dtype=np.float64)
    n = np.asarray(counted, dtype=np.float64)
    total = float(n.sum())
    if total <= 0:
        return 0.0, 1.0
    low, high = wilson(int(k.sum()), int(total), confidence)
    g = int((n > 0).sum())
    if g >= 2:
        share = float(k.sum()) / total
        se = math.sqrt(g / (g - 1) * float(((k - share * n) ** 2).sum())) / total
        from scipy.stats import t as student_t

        half = float(student_t.ppf(0.5 + confidence / 2, g - 1)) * se
        low, high = min(low, max(0.0, share - half)), max(high, min(1.0, share + half))
    return low, high


#: the values a report shows, in order (first player's view)
SHOWN_VALUES: tuple[str, ...] = ("win", "lose", "tie", "draw")


def setup_summary(setups: pl.DataFrame) -> dict[str, Any]:
    """Random setups: probability-weighted shares by value (first player's view), setup counts by
    value, the expected result and margin, and the margin distribution.

    ``setups`` has columns ``probability``, ``value`` (text: win/lose/tie/draw, first player's
    view) and optionally ``margin`` (first player's view).
    """
    prob = setups["probability"].to_numpy().astype(np.float64)
    values = setups["value"].to_list()
    shares = {v: float(prob[[x == v for x in values]].sum()) for v in SHOWN_VALUES}
    counts = {v: int(sum(1 for x in values if x == v)) for v in SHOWN_VALUES}
    expected = shares["win"] - shares["lose"]
    margin_dist = None
    exp_margin = None
    if "margin" in setups.columns:
        margin_dist = (
            setups.group_by("margin").agg(pl.col("probability").sum(), pl.len().alias("setups"))
            .sort("margin")
        )
        exp_margin = float((setups["margin"].cast(pl.Float64) * setups["probability"]).sum())
    return {"shares": shares, "counts": counts, "expected": float(expected),
            "expected_margin": exp_margin, "margins": margin_dist}
