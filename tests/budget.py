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
