"""The machine's memory as the planner sees it (``/proc/meminfo``; ``None`` where it cannot be read).
Callers use ``memory.available_memory()`` through the module, so a test can replace it."""

from __future__ import annotations

import ctypes
from typing import Any


def _meminfo(field_name: str) -> int | None:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith(field_name + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def available_memory() -> int | None:
    return _meminfo("MemAvailable")


def total_memory() -> int | None:
    return _meminfo("MemTotal")



#: glibc's ``mallopt`` parameter number of the mmap threshold, and the value it is fixed at
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 2 * 1024 * 1024

_mmap_fixed: Any = None


def fix_mmap_threshold() -> None:
    """Keep glibc's mmap threshold at 2 MiB for the rest of the process (once; a no-op where
    there is no glibc). glibc raises it (up to 32 MB) each time a mapped block is freed, after
    which numpy's arrays below it come from malloc's heaps, whose freed pages stay with the
    process while they are fragmented: the peak of a solve of many arrays of a few MB made and
    freed (value iteration on a chance tier) then counts memory no array holds. Fixed, every
    array above 2 MiB is its own mapping, given back when freed. Measured on Carrots 3x3
    tiered (``python -m solver.bench --tiered --case carrots:3x3 --repeat 3``, median): peak
    906-918 -> 853 MB, solve time unchanged (46 s); at 128 KiB (glibc's starting value) the
    peak was 846 MB but the solve took 65 s (every small array mapped and zeroed afresh). No
    change of any value (only where the arrays live)."""
    global _mmap_fixed
    if _mmap_fixed is not None:
        return
    try:
        _mmap_fixed = bool(ctypes.CDLL("libc.so.6").mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD))
    except (OSError, AttributeError):
        _mmap_fixed = False


_LIBC: Any = None


def return_freed_memory() -> None:
    """Give memory freed in this process back to the system (glibc's ``malloc_trim``). numpy's
    chunk-sized arrays (below malloc's mmap threshold, at most 32 MB) come from malloc's heaps,
    which otherwise keep the freed pages: after a Blam 4x4-2 tier of 37M positions the process
    still held 4.4 GB, which the next tier's plan saw as used (it went to the slow passes). A
    no-op where there is no glibc."""
    global _LIBC
    if _LIBC is False:
        return
    try:
        if _LIBC is None:
            _LIBC = ctypes.CDLL("libc.so.6")
        _LIBC.malloc_trim(0)
    except (OSError, AttributeError):
        _LIBC = False


def arrow_on_malloc() -> None:
    """Let pyarrow allocate with the system's malloc (for the rest of the process) instead of its
    own pool (mimalloc or jemalloc), which keeps memory it has freed: a chance tier reads its
    boundary from the finished tiers' files one row group at a time, and those row groups then
    stay counted in the process after they are gone. With malloc (and the mmap threshold fixed:
    :func:`fix_mmap_threshold`), a freed row group goes back to the system at once."""
    import pyarrow as pa

    if pa.default_memory_pool().backend_name != "system":
        pa.set_memory_pool(pa.system_memory_pool())
