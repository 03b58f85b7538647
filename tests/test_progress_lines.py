"""Issue 33: long steps say what they do on a standard error that is not a terminal (fault 6),
and the scored margins of a whole graph take one attractor sweep per side (fault 8)."""

from __future__ import annotations

import re
import threading
import time

import numpy as np
import pytest

from solver.core import progress
from solver.engines import _retro_jit
from solver.engines import retrograde as R
from solver.engines.enumerate import enumerate_positions
from solver.pipeline.whole import solve_graph
from solver.games import make_game
from tests.clirun import run


# --- fault 8: margins by one sweep per side ------------------------------------------------------

def _counting(monkeypatch) -> list[int]:
    """Count the threshold passes (:func:`_retro_jit.tier_force_at_least`) run from now on."""
    calls: list[int] = []
    real = _retro_jit.tier_force_at_least

    def counted(*args):
        calls.append(int(args[-1]))
        return real(*args)

    monkeypatch.setattr(_retro_jit, "tier_force_at_least", counted)
    return calls


@pytest.mark.parametrize("params", [
    {"rows": 3, "cols": 3, "per_size": 1},  # two players, cyclic (pyramids return to their owner)
    {"rows": 2, "cols": 3, "players": 3, "per_size": 1},  # paranoid: each seat's two-sided view
])
def test_blam_margins_take_no_threshold_pass_and_equal_the_passes(monkeypatch, params):
    """Blam! 3x3-3p spent 43 of its 60 s of solving in 72 threshold passes (3 seats x 24
    candidate margins). The solve now runs none, and its margins are those of the passes."""
    game = make_game("blam", **params)
    graph = enumerate_positions(game)
    calls = _counting(monkeypatch)
    cols, _, _ = solve_graph(game, graph)
    assert calls == []
    margin_cols = sorted(c for c in cols if c.endswith("margin"))
    assert margin_cols, cols.keys()

    def by_passes(graph, back):
        return R._threshold_margins(graph, back)

    monkeypatch.setattr(R, "_margins_sweep", by_passes)
    reference, _, _ = solve_graph(game, graph)
    assert len(calls) > 2 * len(margin_cols)  # the reference did run its passes
    for c in margin_cols:
        assert np.array_equal(cols[c], reference[c]), c


# --- fault 6: progress lines when standard error is not a terminal -------------------------------

LINE = re.compile(r"^\[\d+:\d\d:\d\d\] ")


def progress_lines(err: str) -> list[str]:
    """The progress lines of a run's standard error (``[H:MM:SS] what: ...``)."""
    return [ln for ln in err.splitlines() if LINE.match(ln)]


def test_a_task_writes_timed_lines_on_updates_and_in_silences(capsys, monkeypatch):
    """Under pytest standard error is not a terminal, as in a log. A line on an update once an
    interval has passed; the timer thread fills a silence (a long compiled call); nothing after
    the task is closed; none at all inside the first interval."""
    monkeypatch.setenv(progress.INTERVAL_ENV, "0.1")
    with progress.Task("report", progress.mode_for(), total=3, unit="steps", note_first=True) as task:
        task.advance(note="game length")
        time.sleep(0.6)  # no update: the timer speaks
    assert not [t for t in threading.enumerate() if t.name == "progress-lines"]  # the timer has ended
    time.sleep(0.25)
    lines = progress_lines(capsys.readouterr().err)
    assert len(lines) >= 2, lines
    assert all(ln.endswith("] report: game length (1 of 3 steps)") for ln in lines), lines
    monkeypatch.setenv(progress.INTERVAL_ENV, "60")
    with progress.Task("enumerate", "lines", unit="positions") as task:
        for n in range(5):
            task.update(n * 1000, note=f"ply {n}")
            time.sleep(0.05)
    assert capsys.readouterr().err == ""


def test_nested_tasks_name_every_step_and_the_bars_mode_writes_no_lines(capsys, monkeypatch):
    monkeypatch.setenv(progress.INTERVAL_ENV, "0")
    with progress.session("lines"):
        with progress.Task("tune", "lines", total=2, unit="variants", note_first=True, bar=False) as tune:
            tune.update(note="solving Blam! 3x3")
            with progress.Task("solving tiers", "lines", total=3724, unit="positions", percent=True) as tiers:
                tiers.update(1862, note="2 stacks")
    lines = progress_lines(capsys.readouterr().err)
    assert lines[-1].endswith("] tune: solving Blam! 3x3 (0 of 2 variants) > solving tiers: 1,862 of 3,724 "
                              "positions (50.0%) (2 stacks)"), lines
    with progress.Task("report", False, total=3) as task:  # --quiet
        task.advance(note="verdict")
    assert capsys.readouterr().err == ""
    monkeypatch.setenv(progress.INTERVAL_ENV, "not a number")
    assert progress.line_seconds() == progress.LINE_SECONDS == 10.0


def test_a_task_with_eta_says_how_long_is_left_at_the_rate_since_its_first_count(capsys, monkeypatch):
    """A resumed step (its first count 600) measures only its own rate; nothing said before
    ETA_AFTER seconds, nor at the end, nor without eta."""
    clock = [1000.0]
    monkeypatch.setattr(progress, "_now", lambda: clock[0])
    task = progress.Task("solving tiers", False, total=3000, unit="positions", percent=True, eta=True)
    task.update(600)
    clock[0] += 10
    task.update(700)
    assert task.describe() == "solving tiers: 700 of 3,000 positions (23.3%)"  # too early
    clock[0] += 50  # 60 s for 600 positions: 1,800 more take 180 s
    task.update(1200)
    assert task.describe() == "solving tiers: 1,200 of 3,000 positions (40.0%, about 3 min left)"
    clock[0] += 3600  # 3,660 s for 1,700: 700 more take about 25 min
    task.update(2300)
    assert task.describe().endswith("(76.7%, about 25 min left)")
    task.update(3000)
    assert task.describe().endswith("(100.0%)")
    plain = progress.Task("solving tiers", False, total=3000, unit="positions", percent=True)
    plain.update(600)
    clock[0] += 100
    plain.update(1200)
    assert plain.describe().endswith("(40.0%)")
    assert [progress.time_left(s) for s in (5, 59, 61, 3500, 3599, 5 * 3600 + 5 * 60)] == [
        "under a minute left", "under a minute left", "about 1 min left", "about 58 min left",
        "about 1 h 00 min left", "about 5 h 05 min left"]
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("measured_positions, at_least, shown", [
    (10**9, False, True),  # a preset measured: "x of 1,000,000,000 positions found (..%)"
    (10**9, True, False),  # a lower bound only: counts alone
    (5, False, False),  # fewer than found (a stale entry): counts alone, never past 100%
])
def test_a_tiered_discovery_counts_toward_the_measured_positions(capsys, monkeypatch, tmp_path,
                                                                   measured_positions, at_least, shown):
    from solver.pipeline import measured, tiered

    monkeypatch.setenv(progress.INTERVAL_ENV, "0")
    clock = [0.0]

    def tick() -> float:
        clock[0] += 20.0
        return clock[0]

    monkeypatch.setattr(progress, "_now", tick)
    monkeypatch.setattr(measured, "of_game", lambda game: measured.Measured(positions=measured_positions,
                                                                            at_least=at_least))
    code, out, err = run(capsys, "solve", "blam", "--preset", "3x3", "--tiered", "--out", str(tmp_path))
    assert code == 0, err
    found = [ln for ln in progress_lines(err) if "] discovering tiers: " in ln]
    assert found, err
    assert all((" of 1,000,000,000 positions found (" in ln) == shown for ln in found), found
    counts = [ln.split("] ", 1)[1].split(" (took")[0] for ln in found]
    assert shown or measured_positions == 5 or not any(" of " in c for c in counts), counts
    assert not any("%" in c and float(c.split("(")[1].split("%")[0]) > 100 for c in counts), counts
    if shown:
        assert any(re.search(r"positions found \(0\.0%, about \d+ h \d\d min left\)", ln) for ln in found), found
    assert tiered.expected_positions(make_game("blam", rows=3, cols=3), symmetry=False) is None  # not up to symmetry


def test_report_tells_a_log_each_step_of_the_solve_and_the_report(capsys, monkeypatch, tmp_path):
    """``pyramids report`` with standard error not a terminal (interval 0: every step shows):
    the enumeration with its counts, the engine at work, writing the tables, then each report
    step counted. With the interval of the default 10 s a run this short prints nothing new."""
    monkeypatch.setenv(progress.INTERVAL_ENV, "0")
    argv = ["report", "blam", "--preset", "3x3", "--out", str(tmp_path / "t"), "--reports", str(tmp_path / "r")]
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    lines = progress_lines(err)
    assert "\r" not in err  # no bar in a log
    kinds = [ln.split("] ", 1)[1].split(":", 1)[0] for ln in lines]
    order = list(dict.fromkeys(kinds))
    assert order == ["enumerate", "solve", "write tables", "report"], order
    found = [ln for ln in lines if "] enumerate: " in ln]
    assert found[-1].endswith(", frontier 0)") and " positions (ply " in found[-1], found
    assert any("] solve: retrograde: values, remoteness, margins of " in ln for ln in lines), lines
    steps = [ln for ln in lines if "] report: " in ln]
    assert any(ln.endswith("] report: glossary (11 of 13 steps)") for ln in steps), steps
    assert steps[-1].endswith("] report: writing report.md, report.html and the figures (12 of 13 steps)") \
        or steps[-1].endswith("(13 of 13 steps)"), steps
    monkeypatch.setenv(progress.INTERVAL_ENV, "60")
    code, out, err = run(capsys, *argv)  # the table is reused; the report written again
    assert code == 0 and progress_lines(err) == [], err


def test_solve_says_its_steps_and_quiet_silences_them(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv(progress.INTERVAL_ENV, "0")
    code, out, err = run(capsys, "solve", "greener", "--preset", "3x3", "--out", str(tmp_path))
    assert code == 0, err
    lines = progress_lines(err)
    assert any("] enumerate: " in ln for ln in lines) and any("] solve: " in ln for ln in lines), err
    code, out, err = run(capsys, "solve", "greener", "--preset", "3x3", "--force", "--quiet",
                         "--out", str(tmp_path))
    assert code == 0 and progress_lines(err) == [], err


def test_tune_and_estimate_tell_a_log_where_they_are(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv(progress.INTERVAL_ENV, "0")
    code, out, err = run(capsys, "tune", "blam", "--preset", "3x3", "--vary", "tiebreak=none,captures",
                         "--out", str(tmp_path / "t"), "--reports", str(tmp_path / "r"))
    assert code == 0, err
    lines = [ln.split("] ", 1)[1] for ln in progress_lines(err)]
    assert lines[0] == "tune: 0 of 2 variants", lines
    assert any(ln.startswith("tune: solving tiebreak=none (0 of 2 variants) > enumerate: ") for ln in lines), lines
    assert "tune: comparing tiebreak=captures: random and perfect play, move values (1 of 2 variants)" in lines, lines
    assert lines[-1] == "tune: writing the report (2 of 2 variants)", lines
    code, out, err = run(capsys, "estimate", "blam", "--preset", "3x3", "--games", "6",
                         "--reports", str(tmp_path / "r"))
    assert code == 0, err
    games = [ln for ln in progress_lines(err) if "] self-play: " in ln]
    assert games and "] self-play: 6 of 6 games (100.0%) (blam(" in games[-1], games


def test_tune_estimate_counts_the_variants_and_the_games(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv(progress.INTERVAL_ENV, "0")
    code, out, err = run(capsys, "tune", "blam", "--preset", "3x3", "--vary", "tiebreak=none,captures", "--estimate",
                         "--games", "4", "--jobs", "1", "--reports", str(tmp_path / "r"))
    assert code == 0, err
    lines = [ln.split("] ", 1)[1] for ln in progress_lines(err)]
    assert any(ln.startswith("tune: estimating tiebreak=captures (1 of 2 variants) > self-play: 4 of 4 games (100.0%)")
               for ln in lines), lines
    assert lines[-1] == "tune: writing the report (2 of 2 variants)", lines
