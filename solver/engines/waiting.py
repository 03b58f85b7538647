"""Waiting for a pool's work so that Ctrl-C still stops the command at once.

A main thread blocked without a timeout in ``Future.result()`` (as ``Executor.map`` waits) may
not see a SIGINT that arrives while it is about to block: Python runs its signal handler only
between bytecodes, and the lock it waits on is not always woken, so the interrupt waited for the
running tier to finish (up to 21 minutes on Override 3x3-2; the fault suite's sleeping tier showed
it). Waiting in short slices returns to Python often enough for ``KeyboardInterrupt`` to be raised
within a fraction of a second."""

from __future__ import annotations

from concurrent.futures import Executor, Future, wait
from typing import Any, Callable, Iterable, Iterator

#: seconds between two looks at the signals while waiting
SLICE = 0.2


def result(fut: Future) -> Any:
    """``fut.result()``, waited for in slices (an interrupt is raised at once)."""
    while not fut.done():
        wait([fut], timeout=SLICE)
    return fut.result()


def pool_map(pool: Executor, fn: Callable, *items: Iterable) -> Iterator:
    """``pool.map(fn, *items)``: all submitted at once, results in order, each waited for in
    slices; on an interrupt (or an error) the ones not started are cancelled."""
    futures = [pool.submit(fn, *args) for args in zip(*items)]
    try:
        for fut in futures:
            yield result(fut)
    finally:
        for fut in futures:
            fut.cancel()
