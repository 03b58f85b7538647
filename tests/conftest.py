"""Suite-wide set-up: the tests' temporary folders in memory where the machine has a RAM-backed
``/dev/shm``.

Most of the suite solves small games tier by tier into temporary folders, and a small tier costs
a handful of files (its keys and plies, the positions waiting for later tiers, its table file).
On this machine's disk creating a file takes about 0.25-1 ms and a folder 0.4 ms, on tmpfs
0.01-0.04 ms: Greener 3x3 cut in three slices (309 tiers) solves in 2.9-3.9 s there against
6.8-7.7 s on disk. So unless ``TMPDIR`` or ``--basetemp`` says where, the temporary folders
(pytest's ``tmp_path`` and every ``tempfile`` of the tests and of the commands they run, which
inherit ``TMPDIR``) go to ``/dev/shm`` when it is a writable tmpfs with room to spare. Only the
failed tests' folders are kept (``tmp_path_retention_policy`` in pyproject.toml), so the memory
they take is given back after a run.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

#: a RAM-backed folder is used only with at least this much free room (the suite writes about
#: 300 MB of temporary files; the rest is headroom)
SHM_FREE_BYTES = 4 << 30


def ram_tmp() -> Path | None:
    """``/dev/shm`` if it is a writable tmpfs with :data:`SHM_FREE_BYTES` free, else ``None``."""
    shm = Path("/dev/shm")
    try:
        with open("/proc/mounts") as fh:
            tmpfs = any(line.split()[1:3] == [str(shm), "tmpfs"] for line in fh)
        if not tmpfs or not os.access(shm, os.W_OK | os.X_OK):
            return None
        return shm if shutil.disk_usage(shm).free >= SHM_FREE_BYTES else None
    except OSError:
        return None


def pytest_configure(config) -> None:
    from tests import budget

    budget.FAST = "not slow" in (config.option.markexpr or "")
    if os.environ.get("TMPDIR") or config.option.basetemp:
        return  # (said where: xdist's workers inherit the controller's TMPDIR and stop here)
    where = ram_tmp()
    if where is not None:
        os.environ["TMPDIR"] = str(where)
        tempfile.tempdir = None  # (gettempdir() caches its answer: asked again from TMPDIR)
