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

_mmap_fixed: Any = None  # the threshold set (bytes), or False where there is no glibc


def fix_mmap_threshold(size: int = MMAP_THRESHOLD) -> None:
    """Keep glibc's mmap threshold at ``size`` (2 MiB by default) for the rest of the process
    (or until called with another size; a no-op where there is no glibc). glibc raises it (up to
    32 MB) each time a mapped block is freed, after which numpy's arrays below it come from
    malloc's heaps, whose freed pages stay with the process while they are fragmented: the peak
    of a solve of many arrays of a few MB made and freed (value iteration on a chance tier) then
    counts memory no array holds. Fixed, every array above ``size`` is its own mapping, given
    back when freed. Measured on Carrots 3x3 tiered (``python -m solver.bench --tiered --case
    carrots:3x3 --repeat 3``, median): peak 906-918 -> 853 MB, solve time unchanged (46 s); at
    128 KiB (glibc's starting value) the peak was 846 MB but the solve took 65 s (every small
    array mapped and zeroed afresh). Deterministic tiers use 16 MiB (:data:`TIER_MMAP_THRESHOLD`).
    No change of any value (only where the arrays live)."""
    global _mmap_fixed
    if _mmap_fixed is False or _mmap_fixed == size:
        return
    try:
        _mmap_fixed = int(size) if ctypes.CDLL("libc.so.6").mallopt(_M_MMAP_THRESHOLD, int(size)) else False
    except (OSError, AttributeError):
        _mmap_fixed = False


#: the threshold of deterministic tier solves: above their chunks' arrays (32,768 positions'
#: children, 3-4 MB in Override 4x4), which a threshold of 2 MiB would map and zero afresh each
#: time (Override 4x4 with two workers: solve 60 -> 79 s); measured there, one run each, same
#: session: unfixed peak 1,230 MB (16.4 B/pos) in 153.6 s, 16 MiB 1,164 MB (15.4) in 150.0 s,
#: 4 MiB 1,168 MB in 151.2 s, 2 MiB 1,188 MB in 173.5 s
TIER_MMAP_THRESHOLD = 16 * 1024 * 1024


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
