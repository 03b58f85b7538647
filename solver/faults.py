"""Fault injection points for the fault suite (``tests/test_faults.py``); inert unless the
environment variable ``PYRAMIDS_FAULT`` names one of them."""

from __future__ import annotations

import os


_SEEN: dict[str, int] = {}


def fault_point(name: str) -> None:
    """Fault injection for the fault suite (tests/test_faults.py): when the environment variable
    ``PYRAMIDS_FAULT`` is ``<signal>@<name>`` (``KILL``, ``INT``) this process sends itself that
    signal here (``<signal>@<name>#<k>``: the k-th time it is reached); ``ENOSPC@<name>``
    raises a disk-full error; ``SLEEP@<name>`` sleeps there (a step too long to wait for). With
    ``PYRAMIDS_FAULT_ONCE=<file>`` only the first process to create that file faults (the others
    go on). Does nothing otherwise."""
    spec = os.environ.get("PYRAMIDS_FAULT")
    if not spec or "@" not in spec:
        return
    what, _, where = spec.partition("@")
    where, _, nth = where.partition("#")  # ``NAME#K``: only at the K-th time this point is reached
    if where != name:
        return
    if nth:
        _SEEN[name] = _SEEN.get(name, 0) + 1
        if _SEEN[name] != int(nth):
            return
    once = os.environ.get("PYRAMIDS_FAULT_ONCE")
    if once:  # across processes (e.g. Dask workers restarted by their nanny): only the first
        try:
            os.close(os.open(once, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return
    if what == "ENOSPC":
        raise OSError(28, "No space left on device", name)
    if what == "SLEEP":  # a long step (``PYRAMIDS_FAULT_SECONDS``, default 300) to interrupt
        import sys
        import threading
        import time

        print(f"fault: sleeping at {name} in thread {threading.current_thread().name}", file=sys.stderr, flush=True)
        time.sleep(float(os.environ.get("PYRAMIDS_FAULT_SECONDS", "300")))
        return
    import signal

    os.kill(os.getpid(), getattr(signal, "SIG" + what))
