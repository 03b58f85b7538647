"""Errors a user can cause. The CLI prints them as one line; they always say how to fix it."""


class PyramidsError(Exception):
    """Base class of every error caused by user input (printed as one line by the CLI).

    ``fix``: what the user does about it, kept apart from the ``problem`` so that a caller that
    repairs the fault itself (solving a damaged table again) can quote the problem alone."""

    def __init__(self, problem: str = "", *, fix: str | None = None) -> None:
        self.problem = problem
        self.fix = fix
        super().__init__(f"{problem}; {fix}" if fix else problem)


class VariantError(PyramidsError):
    """A bad game name, parameter name, parameter value or combination of values."""


class IllegalMoveError(PyramidsError):
    """A move that is not legal in the position, or that cannot be parsed."""


class TableError(PyramidsError):
    """A missing, corrupt or stale table."""


class TooBigError(PyramidsError):
    """A variant too large for the requested engine."""


class ProtocolError(PyramidsError):
    """A game that breaks the game protocol (found by an engine; `pyramids check` finds them all)."""


class ClusterError(PyramidsError):
    """A Dask scheduler that cannot be reached, a worker of another version, a missing extra."""
