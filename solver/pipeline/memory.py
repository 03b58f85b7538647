"""The machine's memory as the planner sees it (``/proc/meminfo``; ``None`` where it cannot be read).
Callers use ``memory.available_memory()`` through the module, so a test can replace it."""

from __future__ import annotations


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

