"""Small atomic file helpers of the work folders (tier runs and setup sweeps): a file is written
beside its final name and renamed, so a killed solve never leaves half a file."""

from __future__ import annotations

import json
import os
import threading
from collections import OrderedDict
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


class SmallFiles:
    """The small arrays a run writes and soon reads back (a tier's discovered keys and plies, the
    positions waiting for a tier): written to disk as before (what a resumed run, another process
    or a Dask worker reads), and also kept in memory, read-only, while small (each at most
    ``item`` bytes, ``budget`` bytes in all, the least recently used let go first), so that the
    run that wrote them reads them back without a file: an open and an ``.npy`` header cost about
    0.2-0.3 ms here, and a game of hundreds of small tiers (Greener 3x3 cut in three slices: 309)
    read thousands. Large files (a large tier's keys) are read from disk as before."""

    def __init__(self, budget: int = 32 << 20, item: int = 1 << 20) -> None:
        self.budget, self.item = int(budget), int(item)
        self.held: OrderedDict[str, np.ndarray] = OrderedDict()
        self.bytes = 0
        self.lock = threading.Lock()

    def save(self, path: Path, arr: np.ndarray) -> None:
        """:func:`atomic_npy`, and the array kept (a read-only copy) while it is small."""
        atomic_npy(path, arr)
        if arr.nbytes > self.item or self.budget <= 0:
            self.forget(path)
            return
        kept = np.array(arr, copy=True)
        kept.flags.writeable = False  # (shared by every reader: none may write into it)
        with self.lock:
            old = self.held.pop(str(path), None)
            self.bytes += kept.nbytes - (0 if old is None else old.nbytes)
            self.held[str(path)] = kept
            while self.bytes > self.budget and self.held:
                self.bytes -= self.held.popitem(last=False)[1].nbytes

    def load(self, path: Path, mmap_mode: str | None = None) -> np.ndarray:
        """The array at ``path``: the copy kept if any (read-only), else ``np.load``."""
        with self.lock:
            kept = self.held.get(str(path))
            if kept is not None:
                self.held.move_to_end(str(path))
                return kept
        return np.load(path, mmap_mode=mmap_mode)

    def forget(self, path: Path) -> None:
        with self.lock:
            old = self.held.pop(str(path), None)
            if old is not None:
                self.bytes -= old.nbytes

    def forget_under(self, folder: Path) -> None:
        """Let go of the arrays of the files in ``folder`` (removed with it)."""
        prefix = str(folder) + os.sep
        with self.lock:
            for name in [n for n in self.held if n.startswith(prefix)]:
                self.bytes -= self.held.pop(name).nbytes


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

