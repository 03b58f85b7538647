"""Errors a user can cause. The CLI prints them as one line; they always say how to fix it."""


class PyramidsError(Exception):
    """Base class of every error caused by user input (printed as one line by the CLI)."""


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
