"""Progress of long steps on standard error, the one place every command's progress goes through.

Three modes (what ``progress`` arguments hold across the toolkit):

* ``True``: tqdm bars, for a terminal;
* ``"lines"``: for a log (standard error not a terminal: ``nohup``, CI, a notebook), a line at
  most every :func:`line_seconds` (10 s; the environment variable ``PYRAMIDS_PROGRESS_SECONDS``
  changes it), saying how long the run has taken, the step being done and its counts, e.g.
  ``[0:00:20] report: game length (7 of 11 steps)``. Nothing in the first interval, so a short
  run prints nothing more than without progress;
* ``False``: nothing (``--quiet``).

A :class:`Task` is one step (enumerating, solving tiers, building a report, playing games): its
counts and a note say where it is. Tasks nest (a tune solves variants, a solve enumerates): a line
names every open task, outermost first, joined by ``" > "``. A line is written when a task is
opened or updated at least an interval after the last line, and by a timer thread when nothing
was updated for an interval (a long compiled kernel, a long metric), so a log never stays silent
longer.

A :func:`session` spans a command: its lines count the time from its start, and its timer runs
while it is open. A task opened outside a session opens one for itself.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from contextlib import contextmanager
from datetime import timedelta
from typing import Any, Iterator

#: seconds between two progress lines on a standard error that is not a terminal
LINE_SECONDS = 10.0

#: the environment variable that sets that interval (seconds, e.g. ``0.5`` in tests, ``60`` in long
#: batch jobs)
INTERVAL_ENV = "PYRAMIDS_PROGRESS_SECONDS"

#: seconds a task with ``eta`` counts before its lines say how long is left (the rate of the
#: first seconds, compilation and reading, says little)
ETA_AFTER = 30.0


def _now() -> float:
    """The clock of the time-left estimates (a test sets its own)."""
    return time.monotonic()


def time_left(seconds: float) -> str:
    """``about 25 min left``, ``about 1 h 05 min left``, ``under a minute left``."""
    if seconds < 60:
        return "under a minute left"
    minutes = int(round(seconds / 60))
    if minutes < 60:
        return f"about {minutes} min left"
    return f"about {minutes // 60} h {minutes % 60:02d} min left"

Mode = bool | str


def line_seconds() -> float:
    """The interval between two progress lines: ``$PYRAMIDS_PROGRESS_SECONDS`` if it holds a
    number of seconds (at least 0), else :data:`LINE_SECONDS`."""
    text = os.environ.get(INTERVAL_ENV, "").strip()
    if text:
        try:
            value = float(text)
        except ValueError:
            return LINE_SECONDS
        if value >= 0:
            return value
    return LINE_SECONDS


def mode_for(show: bool = True) -> Mode:
    """The progress mode of a command: nothing unless ``show`` (``--quiet``), bars when standard
    error is a terminal, else timed lines."""
    if not show:
        return False
    return True if sys.stderr.isatty() else "lines"


class _Session:
    """The open tasks of a command in ``"lines"`` mode, the time of its start and of its last line,
    and the timer thread that writes a line when the tasks are silent for an interval."""

    def __init__(self, every: float | None) -> None:
        self.every = every
        self.start = self.last = time.monotonic()
        self.tasks: list[Task] = []
        self.lock = threading.Condition(threading.RLock())  # also wakes the timer (tasks, close)
        self.stopped = False
        self.timer = threading.Thread(target=self._tick, name="progress-lines", daemon=True)
        self.timer.start()

    def interval(self) -> float:
        """The innermost task's own interval, else the session's, else :func:`line_seconds`."""
        for task in reversed(self.tasks):
            if task.every is not None:
                return task.every
        return self.every if self.every is not None else line_seconds()

    def add(self, task: "Task") -> None:
        with self.lock:
            self.tasks.append(task)
            self.lock.notify_all()
        self.say()

    def remove(self, task: "Task") -> None:
        with self.lock:
            if task in self.tasks:
                self.tasks.remove(task)

    def say(self) -> None:
        """Write the line of the open tasks if an interval has passed since the last line."""
        with self.lock:
            now = time.monotonic()
            if not self.tasks or now - self.last < self.interval():
                return
            self.last = now
            stamp = timedelta(seconds=int(now - self.start))  # H:MM:SS
            text = " > ".join(t.describe() for t in self.tasks)
            try:
                print(f"[{stamp}] {text}", file=sys.stderr, flush=True)
            except (ValueError, OSError):  # standard error closed under us: progress is optional
                pass

    def _tick(self) -> None:
        """Fill the silences: while a task is open, a line once an interval has passed since the
        last (at most ten a second, for an interval of 0)."""
        with self.lock:
            while not self.stopped:
                if not self.tasks:
                    self.lock.wait()  # until a task opens or the session ends
                    continue
                due = self.last + self.interval() - time.monotonic()
                if due > 0:
                    self.lock.wait(max(due, 0.1))
                    continue
                self.say()
                self.lock.wait(0.1)

    def close(self) -> None:
        with self.lock:
            self.stopped = True
            self.lock.notify_all()
        if self.timer is not threading.current_thread():
            self.timer.join()


_session: _Session | None = None
_session_lock = threading.Lock()


@contextmanager
def session(mode: Mode, *, every: float | None = None) -> Iterator[None]:
    """Span a command's progress lines (``mode == "lines"``; otherwise, or inside another
    session, nothing happens): their times count from here, and the timer runs until the end.
    ``every``: the interval (default :func:`line_seconds`)."""
    global _session
    with _session_lock:
        mine = mode == "lines" and _session is None
        if mine:
            _session = _Session(every)
    try:
        yield
    finally:
        if mine:
            with _session_lock:
                s, _session = _session, None
            if s is not None:
                s.close()


class Task:
    """One step in progress, shown as ``mode`` says (see the module docstring).

    Parameters
    ----------
    name : str
        What the step is (``"enumerate"``, ``"report"``): the bar's label, the line's start.
    mode : bool or "lines"
        Bars, lines or nothing.
    total : int, optional
        How many ``unit`` the step has, when known.
    done : int, optional
        How many are done at the start (default 0 when ``total`` is given, else unknown).
    unit : str
        What ``done`` counts (``"positions"``, ``"steps"``).
    note : str
        Where the step is (the tier, the section being written), shown beside the counts.
    note_first : bool
        Lines read ``name: note (counts)`` (a step of several: ``report: game length (7 of 11
        steps)``) instead of ``name: counts (note)`` (``solving tiers: 120 of 300 positions
        (40.0%) (tier 5)``).
    percent : bool
        Lines add the share done (``done`` of ``total``).
    bar : bool
        Draw a tqdm bar in mode ``True`` (``False``: the caller shows its own lines on a
        terminal; the task only feeds the log lines).
    unit_scale : bool
        The bar writes large counts as 1.2M.
    every : float, optional
        This task's interval between lines (default: the session's).
    eta : bool
        Lines with a ``total`` add how long is left, at the rate since the task's first count
        (after :data:`ETA_AFTER` seconds): ``(67.8%, about 25 min left)``. A resumed step counts
        only what it did itself.
    """

    def __init__(self, name: str, mode: Mode, *, total: int | None = None, done: int | None = None,
                 unit: str = "", note: str = "",
                 note_first: bool = False, percent: bool = False, bar: bool = True, unit_scale: bool = False,
                 every: float | None = None, eta: bool = False) -> None:
        self.name, self.mode, self.total, self.unit, self.note = name, mode, total, unit, note
        self.eta = eta
        self._first: tuple[float, int] | None = None  # (clock, done) at the first count
        self.note_first, self.percent, self.every = note_first, percent, every
        self.done: int | None = done if done is not None else 0 if total is not None else None
        self._bar: Any = None
        self._own_session: Any = None
        self._session: _Session | None = None
        if mode == "lines":
            self._own_session = session("lines", every=every)
            self._own_session.__enter__()
            self._session = _session
            if self._session is not None:
                self._session.add(self)
        elif mode and bar:
            from tqdm import tqdm

            self._bar = tqdm(desc=name, total=total, unit=f" {unit}" if unit else "it", unit_scale=unit_scale,
                             leave=False)
            if note:
                self._bar.set_postfix_str(note[:40], refresh=False)

    def describe(self) -> str:
        """The task as it reads in a line (see ``note_first``)."""
        counts = ""
        if self.done is not None:
            counts = f"{self.done:,}"
            if self.total is not None:
                counts += f" of {self.total:,}"
            if self.unit:
                counts += f" {self.unit}"
            if self.percent and self.total is not None:
                left = self._left()
                counts += f" ({100 * self.done / max(self.total, 1):.1f}%" + (f", {left})" if left else ")")
        if self.note and counts:
            return f"{self.name}: " + (f"{self.note} ({counts})" if self.note_first else f"{counts} ({self.note})")
        return f"{self.name}: {self.note or counts or 'working'}"

    def _left(self) -> str | None:
        """How long is left at the rate so far (``eta`` tasks), or ``None``: too early to say."""
        if not self.eta or self._first is None or self.total is None or self.done is None:
            return None
        t0, d0 = self._first
        spent, gained = _now() - t0, self.done - d0
        if spent < ETA_AFTER or gained <= 0 or self.done >= self.total:
            return None
        return time_left((self.total - self.done) * spent / gained)

    def update(self, done: int | None = None, *, total: int | None = None, note: str | None = None) -> None:
        """Set where the step is: ``done`` (absolute), ``total``, ``note`` (``None``: unchanged)."""
        if total is not None:
            self.total = total
        if note is not None:
            self.note = note
        if done is not None:
            self.done = done
            if self._first is None:
                self._first = (_now(), done)
        if self._session is not None:
            self._session.say()
        elif self._bar is not None:
            bar = self._bar
            if total is not None and bar.total != total:
                bar.total = total
            if note is not None:
                bar.set_postfix_str(note[:40], refresh=False)
            if done is not None and done > bar.n:
                bar.update(done - bar.n)
            else:
                bar.refresh()

    def drop_total(self) -> None:
        """The ``total`` given was wrong (passed): counts alone from now on."""
        self.total = None
        if self._bar is not None:
            self._bar.total = None
            self._bar.refresh()

    def advance(self, n: int = 1, *, note: str | None = None) -> None:
        """``n`` more ``unit`` done."""
        self.update((self.done or 0) + n, note=note)

    def close(self) -> None:
        """The step is over: its bar goes, its lines stop (and a session it opened ends)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        if self._session is not None:
            self._session.remove(self)
            self._session = None
        if self._own_session is not None:
            own, self._own_session = self._own_session, None
            own.__exit__(None, None, None)

    def __enter__(self) -> "Task":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
