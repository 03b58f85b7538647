"""How many random examples a property test tries.

`make test-all` (every check) tries each property test's full number of examples; `make test`
(``-m "not slow"``, the suite CI runs) tries a third of them, at least :data:`FAST_MIN`, so
that the quick suite stays within its time on this project's 2-core machine while every property
is still tried on random inputs in every run. :func:`tests.conftest.pytest_configure` sets
:data:`FAST` from the run's marker expression before the test files are imported.
"""

from __future__ import annotations

#: True when the run leaves out the slow checks (``-m "not slow"``)
FAST = False
#: the fewest examples a property test tries in the quick suite
FAST_MIN = 5


def examples(n: int) -> int:
    """The number of examples for a property test written for ``n``: all of them in the full
    run, a third (at least :data:`FAST_MIN`, at most ``n``) in the quick one."""
    return min(n, max(FAST_MIN, n // 3)) if FAST else n


def seeds(n: int, slow: tuple[int, ...] = ()) -> list:
    """Seeds ``0..n-1`` for ``pytest.mark.parametrize``: every third one (0, 3, 6, ...) runs in the
    quick suite, the rest, and the seeds in ``slow`` (the ones whose games take longest), are
    marked slow, so `make test-all` runs them all."""
    import pytest

    return [pytest.param(s, marks=pytest.mark.slow) if s in slow or s % 3 else s for s in range(n)]
