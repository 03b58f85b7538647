"""Statistics shared by self-play estimates, setup-sweep samples and reports, from SciPy.

One place for the confidence intervals the toolkit quotes, so every report says the same thing
the same way: Wilson score intervals of proportions (``scipy.stats.binomtest``) and the normal
quantile for intervals of means.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
from scipy.stats import binomtest, norm

#: the two-sided 95% normal quantile (about 1.96), for intervals of means
Z95: float = float(norm.ppf(0.975))


def wilson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval of the proportion ``k / n`` at ``confidence`` (95% by default);
    ``(0, 1)`` when there is no observation (``n = 0``)."""
    if n <= 0:
        return 0.0, 1.0
    ci = binomtest(int(k), int(n)).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)


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
