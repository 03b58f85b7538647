"""Fault injection points for the fault suite (``tests/test_faults.py``); inert unless the
environment variable ``PYRAMIDS_FAULT`` names one of them."""

from __future__ import annotations

import os


def fault_point(name: str) -> None:
    """Fault injection for the fault suite (tests/test_faults.py): when the environment variable
    ``PYRAMIDS_FAULT`` is ``<signal>@<name>`` (``KILL``, ``INT``) this process sends itself that
    signal here; ``ENOSPC@<name>`` raises a disk-full error. Does nothing otherwise."""
    spec = os.environ.get("PYRAMIDS_FAULT")
    if not spec or "@" not in spec:
        return
    what, _, where = spec.partition("@")
    if where != name:
        return
    if what == "ENOSPC":
        raise OSError(28, "No space left on device", name)
    import signal

    os.kill(os.getpid(), getattr(signal, "SIG" + what))
