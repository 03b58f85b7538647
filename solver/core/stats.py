"""Statistics shared by self-play estimates, setup-sweep samples and reports, from SciPy.

One place for the confidence intervals the toolkit quotes, so every report says the same thing
the same way: Wilson score intervals of proportions (``scipy.stats.binomtest``) and the normal
quantile for intervals of means.
"""

from __future__ import annotations

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
