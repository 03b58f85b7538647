"""Small atomic file helpers of the work folders (tier runs and setup sweeps): a file is written
beside its final name and renamed, so a killed solve never leaves half a file."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from solver.tables import world_readable


def atomic_json(path: Path, data: dict[str, Any], *, durable: bool = True) -> None:
    """Write ``data`` to ``path`` whole or not at all (a temporary file renamed over it).
    ``durable``: flushed to the disk first (``fsync``, about 4 ms here); a marker that only
    follows arrays written without it (:func:`atomic_npy`) gains nothing from it, since a
    killed process, what a resumed run recovers from, loses nothing the kernel holds."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w") as fh:
        json.dump(data, fh, sort_keys=True, indent=1)
        if durable:
            fh.flush()
            os.fsync(fh.fileno())
    world_readable(tmp)
    os.replace(tmp, path)


def atomic_npy(path: Path, arr: np.ndarray) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as fh:
        np.save(fh, arr)
    os.replace(tmp, path)


def remove_stale(folder: Path) -> int:
    """Remove the temporary files (``.<name>.<pid>.tmp``) that a killed process left in
    ``folder`` (a values file of a large solve is gigabytes); those of a running process stay.
    Returns how many went."""
    gone = 0
    for tmp in Path(folder).glob(".*.tmp"):
        pid = tmp.name.rsplit(".", 2)[-2]
        if not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            tmp.unlink(missing_ok=True)
            gone += 1
        except OSError:  # (alive, another user's)
            pass
    return gone


def read_json(path: Path) -> dict[str, Any] | None:
    try:
        with open(path) as fh:
            return json.load(fh)
    except (OSError, json.JSONDecodeError):
        return None

