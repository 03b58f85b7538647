"""The task layer on Dask (solver/pipeline/tasks.py): setup sweeps and tier tasks on a local cluster
of worker processes give the same tables as the in-process solves, survive a killed worker, a
killed client and two runs at once, and refuse an unreachable scheduler or a worker of another
version in one line. Everything talks only to this machine's loopback."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl
import pytest

pytest.importorskip("distributed")

from analysis.metrics import setup_summary  # noqa: E402
from solver.api import load, make_game, solve  # noqa: E402
from solver.pipeline import tasks  # noqa: E402
from solver.errors import ClusterError  # noqa: E402
from tests.clirun import run  # noqa: E402

G33 = {"rows": 3, "cols": 3, "black": 2, "white": 2, "setup": "all"}  # 108 setup classes, ~0.03 s each
G33_3 = {"rows": 3, "cols": 3, "black": 3, "white": 3, "setup": "all"}
SETUP_COLUMNS = ["key", "layout", "probability", "multiplicity", "value", "remoteness", "margin"]


@pytest.fixture(scope="module")
def cluster():
    """One local cluster of two worker processes for the tests that can share it."""
    c = tasks.connect(jobs=2)
    yield c
    c.close()


def test_a_local_cluster_leaves_no_folder_behind(tmp_path, monkeypatch):
    """The workers' folder of a local cluster (``--local-directory``) goes when it closes: every
    ``--jobs`` run used to leave a ``pyramids-dask-*`` folder in the temporary folder."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    c = tasks.connect(jobs=1)
    try:
        assert c.scratch is not None and Path(c.scratch).parent == tmp_path and Path(c.scratch).is_dir()
        assert c.workers == 1
    finally:
        c.close()
    assert list(tmp_path.iterdir()) == []


@pytest.fixture(scope="module")
def whole_33(tmp_path_factory):
    """The in-process (whole-graph) solve of Greener 3x3 2+2 over all setups."""
    out = tmp_path_factory.mktemp("whole33")
    return solve(make_game("greener", G33), out=out)


def _same_setups(sweep_table: pl.DataFrame, whole_setups: pl.DataFrame) -> None:
    a = whole_setups.select(SETUP_COLUMNS).sort("key")
    b = sweep_table.select(SETUP_COLUMNS).sort("key")
    assert a.schema == b.schema
    assert a.equals(b)


def _same_summary(sweep_table: pl.DataFrame, whole_setups: pl.DataFrame) -> None:
    x = setup_summary(sweep_table.select(SETUP_COLUMNS).sort("key"))
    y = setup_summary(whole_setups.select(SETUP_COLUMNS).sort("key"))
    assert x["shares"] == y["shares"] and x["counts"] == y["counts"]
    assert x["expected"] == y["expected"] and x["expected_margin"] == y["expected_margin"]
    # the margin distribution: the same margins and setup counts; probabilities summed by polars'
    # parallel group_by may differ in the last bits (summation order), so to 1e-12
    a, b = x["margins"], y["margins"]
    assert a["margin"].equals(b["margin"]) and a["setups"].equals(b["setups"])
    assert np.allclose(a["probability"].to_numpy(), b["probability"].to_numpy(), rtol=0, atol=1e-12)


def test_sweep_on_two_workers_equals_the_whole_graph_solve(tmp_path, cluster, whole_33):
    game = make_game("greener", G33)
    res = tasks.sweep_setups(game, out=tmp_path, cluster=cluster)
    assert res.solved_now == 108 and len(res.hosts) == 2  # both worker processes took tasks
    table, meta = tasks.read_sweep(game, out=tmp_path)
    _same_setups(table, whole_33.setups)
    _same_summary(table, whole_33.setups)
    assert meta["complete"] and meta["classes_done"] == 108
    assert meta["summary"]["expected"] == pytest.approx(whole_33.meta["expected_result"], abs=1e-12)
    # batches share positions: more than one setup per task once sized, and fewer positions
    # solved than one solve per setup would take
    assert table["batch"].max() > 1
    assert table["key"].n_unique() == table.height


def test_resume_solves_only_what_is_left_and_ends_equal(tmp_path, cluster, whole_33):
    game = make_game("greener", G33)
    first = tasks.sweep_setups(game, out=tmp_path, cluster=cluster, limit=30, batch=4)
    assert first.solved_now == 30
    table, meta = tasks.read_sweep(game, out=tmp_path)
    assert not meta["complete"] and meta["classes_done"] == 30
    # the slice is the start of the fixed order
    order, _ = tasks.plan_order(tasks.setup_classes(game).mult)
    assert sorted(table["order"].to_list()) == list(range(30))
    notes: list[str] = []
    second = tasks.sweep_setups(game, out=tmp_path, cluster=cluster, notes=notes)
    assert second.solved_now == 78
    assert any("resuming the sweep" in n for n in notes)
    table, meta = tasks.read_sweep(game, out=tmp_path)
    assert meta["complete"]
    _same_setups(table, whole_33.setups)


def test_worker_of_another_version_is_refused_in_one_line(cluster):
    game = make_game("greener", G33)
    spec = {**tasks.game_spec(game), "toolkit": "0.0.1-other"}
    with pytest.raises(ClusterError) as exc:
        tasks.check_workers(cluster, spec)
    msg = str(exc.value)
    assert "0.0.1-other" in msg and "0.1.0" in msg and "\n" not in msg
    # and the worker side refuses a task sent by a client of another rules version
    spec = {**tasks.game_spec(game), "rules": "999"}
    fut = cluster.client.submit(tasks.solve_setup_batch, spec, [int(tasks.setup_classes(game).keys[0])], True,
                                pure=False)
    with pytest.raises(ClusterError, match=r"rules.*999"):
        fut.result()


def test_unreachable_scheduler_is_one_line_within_seconds(capsys, tmp_path):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t0 = time.perf_counter()
    code, out, err = run(capsys, "solve", "greener", "--preset", "3x3", "--out", str(tmp_path),
                         "--scheduler", f"tcp://127.0.0.1:{port}")
    assert time.perf_counter() - t0 < 15
    assert code == 2
    lines = [ln for ln in err.splitlines() if not ln.startswith("warning:")]
    assert len(lines) == 1 and "cannot reach the Dask scheduler" in lines[0] and str(port) in lines[0]


def test_bad_task_options_are_one_line(capsys, tmp_path):
    for args, words in [(["--jobs", "0"], "--jobs 0"), (["--setup-limit", "-1"], "--setup-limit -1"),
                        (["--batch", "0"], "--batch 0"), (["--scheduler", "nonsense"], "not an address")]:
        code, out, err = run(capsys, "solve", "greener", "--preset", "3x3", "--out", str(tmp_path), *args)
        assert code == 2 and words in err, err
    code, out, err = run(capsys, "solve", "override", "--preset", "3x3", "--out", str(tmp_path), "--jobs", "2")
    assert code == 2 and "solved whole" in err
    code, out, err = run(capsys, "solve", "override", "--preset", "3x3", "--out", str(tmp_path),
                         "--setup-limit", "2")
    assert code == 2 and "random setups" in err


def test_max_positions_bounds_each_sweep_task(capsys, tmp_path):
    """`--max-positions` holds for a sweep too: each task (its setups together) stops beyond it.
    Found by the fuzz test: Greener 6x3 3+3 (93,230 setup classes) ran for 18 minutes with
    `--max-positions 20000`, its tasks enumerating classes of millions of positions."""
    t0 = time.perf_counter()
    code, out, err = run(capsys, "solve", "greener", "--preset", "3x3-3", "--set", "rows=6", "--out",
                         str(tmp_path), "--max-positions", "20000", "--jobs", "1")
    assert time.perf_counter() - t0 < 60
    assert code == 2
    lines = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and "more than 20,000 positions" in lines[0] and "--max-positions" in lines[0]


def test_cli_sweep_status_and_json(capsys, tmp_path, whole_33):
    code, out, err = run(capsys, "solve", "greener", "--preset", "3x3", "--out", str(tmp_path),
                         "--setup-limit", "10", "--jobs", "1")
    assert code == 0, err
    assert "10 of 108 setup classes done" in out and "partial" in out and "ESTIMATED" in out
    code, out, err = run(capsys, "status", "greener", "--preset", "3x3", "--out", str(tmp_path), "--json")
    s = json.loads(out)
    assert s["classes_done"] == 10 and s["classes_left"] == 98 and not s["complete"]
    e = s["estimate"]
    assert e["draws"] >= 10 and sum(e["counts"].values()) == e["draws"]
    lo, hi = e["intervals"]["win"]
    assert lo <= e["shares"]["win"] <= hi
    assert s["seconds_left"] is not None and s["seconds_per_class"] > 0
    code, out, err = run(capsys, "solve", "greener", "--preset", "3x3", "--out", str(tmp_path), "--jobs", "2",
                         "--json")
    s = json.loads(out)
    assert s["complete"] and s["solved_now"] == 98
    share = setup_summary(whole_33.setups)["shares"]["win"]
    assert s["summary"]["shares"]["win"] == share
    code, out, err = run(capsys, "status", "greener", "--preset", "3x3", "--out", str(tmp_path))
    assert "108 of 108" in out and "complete" in out and "exact" in out


def test_plan_order_and_estimate(whole_33):
    game = make_game("greener", G33)
    setups = tasks.setup_classes(game)
    order, draws = tasks.plan_order(setups.mult)
    assert sorted(order.tolist()) == list(range(setups.classes))  # every class exactly once
    # classes come in the order of their first draw
    firsts = [int(np.flatnonzero(draws == c)[0]) for c in order[:20]]
    assert firsts == sorted(firsts) and firsts[0] == 0
    # draws follow the multiplicities (chi-square-free check: heavy classes drawn more)
    freq = np.bincount(draws, minlength=setups.classes) / len(draws)
    assert np.abs(freq - setups.mult / setups.mult.sum()).max() < 0.01
    # with every setup solved, the estimate uses every draw and its interval holds the exact share
    table = whole_33.setups
    est = tasks.sample_estimate(table, setups, draws)
    assert est["draws"] == len(draws)
    exact = setup_summary(table)["shares"]
    for v in ("win", "lose"):
        lo, hi = est["intervals"][v]
        assert lo <= exact[v] <= hi
    # with only the first k classes of the order solved, the sample stops at the first draw of
    # class k+1, and every sampled draw is of a solved class
    k = 10
    solved = set(int(setups.keys[c]) for c in order[:k])
    part = table.filter(pl.col("key").is_in(list(solved)))
    est = tasks.sample_estimate(part, setups, draws)
    assert est["draws"] == int(np.flatnonzero(draws == order[k])[0])
    assert est["classes_in_sample"] == k


def test_wilson_interval_hand_values():
    # k = 0 of n: upper end z^2 / (n + z^2); k = n: lower end n / (n + z^2), z the 97.5% quantile
    from solver.core.stats import wilson

    z2 = 1.959963984540054 ** 2
    assert wilson(0, 10) == pytest.approx((0.0, z2 / (10 + z2)))
    assert wilson(10, 10) == pytest.approx((10 / (10 + z2), 1.0))
    lo, hi = wilson(50, 100)  # symmetric about 1/2
    assert lo == pytest.approx(1 - hi) and 0.40 < lo < 0.41
    assert wilson(0, 0) == (0.0, 1.0)  # no observation: nothing is known
    z3 = 3.2905267314919255 ** 2  # 99.9%
    assert wilson(0, 10, confidence=0.999)[1] == pytest.approx(z3 / (10 + z3))


def test_tier_tasks_on_dask_equal_the_threaded_tiered_solve(tmp_path, cluster):
    from solver.pipeline.tiered import solve_tiered

    from solver.games import game_class

    game = make_game("blam", game_class("blam").presets["3x3"])
    threads = solve(game, out=tmp_path / "threads", tiered=True)
    solve_tiered(game, out=tmp_path / "dask", cluster=cluster)
    on_dask = load(game, out=tmp_path / "dask")
    a = threads.positions.sort("key")
    b = on_dask.positions.sort("key")
    assert a.equals(b)
    assert on_dask.meta["counts"] == threads.meta["counts"]


@pytest.mark.parametrize("slices", [1, pytest.param(3, marks=pytest.mark.slow)])
def test_union_of_setups_on_dask_equals_the_whole_graph(tmp_path, cluster, slices):
    """A random setup tier by tier (every setup's positions together, issue 35) with its tiers
    (cut in slices: each slice a task) as Dask tasks: the same positions, setups table and
    expected result as the whole graph."""
    from solver.pipeline.tiered import solve_tiered

    game = make_game("greener", G33_3)
    whole = solve(game, out=tmp_path / "whole", tiered=False)
    solve_tiered(game, out=tmp_path / "dask", cluster=cluster, tier_slices=slices)
    on_dask = load(game, out=tmp_path / "dask")
    assert on_dask.meta["tier_slices"] == slices
    exact = [c for c in whole.positions.columns if c not in ("expected", "expected_margin")]
    assert on_dask.positions.select(exact).equals(whole.positions.select(exact))
    assert on_dask.setups.equals(whole.setups)
    assert on_dask.meta["expected_result"] == pytest.approx(whole.meta["expected_result"], abs=1e-12)


def test_dice_tier_tasks_on_dask_equal_the_in_process_tiered_solve(tmp_path, cluster):
    """Tiers of a game with dice (value iteration per tier) as Dask tasks: the same values and
    win chances as the tiered solve in this process, certified."""
    from solver.pipeline.tiered import solve_tiered
    from tests.test_tiered_chance import TOL, TieredDiceRace

    game = TieredDiceRace.from_params({"target": 5})
    here = solve(game, out=tmp_path / "here", tiered=True)
    solve_tiered(game, out=tmp_path / "dask", cluster=cluster)
    on_dask = load(game, out=tmp_path / "dask")
    assert on_dask.meta["certified"] and on_dask.meta["solver"] == here.meta["solver"]
    a = here.positions.sort("key")
    b = on_dask.positions.sort("key")
    assert a["key"].equals(b["key"]) and a["value"].equals(b["value"])
    for column in ("p_win", "p_loss"):
        assert np.allclose(a[column].to_numpy(), b[column].to_numpy(), atol=TOL, rtol=0)
    assert on_dask.meta["counts"] == here.meta["counts"]


def test_killed_worker_task_is_retried_nothing_lost_or_doubled(tmp_path, monkeypatch):
    """A worker process kills itself (SIGKILL) in the middle of its third task; its nanny starts
    a new one, the scheduler gives the lost task to a worker again, and the table is complete,
    each setup once, equal to the whole-graph solve."""
    game = make_game("greener", G33_3)
    whole = solve(game, out=tmp_path / "whole")
    marker = tmp_path / "killed"
    monkeypatch.setenv("PYRAMIDS_FAULT", "KILL@setup-task#3")
    monkeypatch.setenv("PYRAMIDS_FAULT_ONCE", str(marker))
    c = tasks.connect(jobs=2)
    monkeypatch.delenv("PYRAMIDS_FAULT")
    try:
        res = tasks.sweep_setups(game, out=tmp_path / "sweep", cluster=c, batch=2)
        assert marker.exists()  # the fault fired: a worker died mid-task
        c.client.wait_for_workers(2, timeout=60)  # and its nanny restarts it
        assert c.workers == 2
    finally:
        c.close()
    assert res.solved_now == tasks.setup_classes(game).classes
    table, meta = tasks.read_sweep(game, out=tmp_path / "sweep")
    assert table["key"].n_unique() == table.height == meta["classes"]
    _same_setups(table, whole.setups)


def _script(out: Path, pre: str = "") -> str:
    return (f"from solver.api import make_game\nfrom solver.pipeline import tasks\n{pre}"
            f"g = make_game('greener', {G33_3!r})\n"
            f"tasks.sweep_setups(g, out={str(out)!r}, jobs=1, batch=2, flush_seconds=0)\n")


def _workers_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if "dask_worker" in (entry / "cmdline").read_bytes().decode(errors="replace"):
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


@pytest.mark.slow  # 11 s: two runs of a sweep in fresh interpreters, each starting its own cluster
def test_killed_client_resumes_to_the_same_table_and_leaves_no_worker(tmp_path):
    """The whole run is killed (SIGKILL) after its second part file; its worker processes die
    with it; the same command again resumes and ends with the uninterrupted table."""
    game = make_game("greener", G33_3)
    whole = solve(game, out=tmp_path / "whole")
    before = set(_workers_of(0))
    env = {**os.environ, "PYRAMIDS_FAULT": "KILL@sweep-part#2"}
    proc = subprocess.run([sys.executable, "-c", _script(tmp_path / "sweep")], env=env, timeout=300,
                          capture_output=True, text=True, cwd=Path(__file__).parent.parent)
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]
    parts = list((tasks.sweep_dir(game, tmp_path / "sweep", True) / "parts").glob("*.parquet"))
    assert len(parts) == 2
    deadline = time.time() + 30
    while set(_workers_of(0)) - before and time.time() < deadline:
        time.sleep(0.5)
    assert not (set(_workers_of(0)) - before), "worker processes outlived the killed client"
    proc = subprocess.run([sys.executable, "-c", _script(tmp_path / "sweep")], timeout=300,
                          capture_output=True, text=True, cwd=Path(__file__).parent.parent)
    assert proc.returncode == 0, proc.stderr[-2000:]
    table, meta = tasks.read_sweep(game, out=tmp_path / "sweep")
    assert meta["complete"] and table["key"].n_unique() == table.height
    _same_setups(table, whole.setups)


@pytest.mark.slow  # 12 s: two sweeps in fresh interpreters, each starting its own cluster
def test_two_runs_at_once_do_not_corrupt_the_table(tmp_path):
    game = make_game("greener", G33_3)
    whole = solve(game, out=tmp_path / "whole")
    # both runs merge their part files as they go (after 3), so they race on the merges too
    procs = [subprocess.Popen([sys.executable, "-c", _script(tmp_path / "sweep", "tasks.MERGE_PARTS = 3\n")],
                              cwd=Path(__file__).parent.parent, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-2000:]
    table, meta = tasks.read_sweep(game, out=tmp_path / "sweep")
    assert meta["complete"] and table["key"].n_unique() == table.height == meta["classes"]
    _same_setups(table, whole.setups)


@pytest.mark.slow
def test_greener_3x4_through_the_task_layer_equals_the_in_process_solve(tmp_path):
    """The issue's check: Greener 3x4 over all setups on a local 2-worker cluster."""
    from solver.games import game_class

    game = make_game("greener", game_class("greener").presets["3x4"])
    whole = solve(game, out=tmp_path / "whole")
    c = tasks.connect(jobs=2)
    try:
        tasks.sweep_setups(game, out=tmp_path / "sweep", cluster=c)
    finally:
        c.close()
    table, meta = tasks.read_sweep(game, out=tmp_path / "sweep")
    assert meta["classes_done"] == 4664
    _same_setups(table, whole.setups)
    _same_summary(table, whole.setups)


def test_show_and_report_of_a_partial_sweep_say_estimated(capsys, tmp_path, whole_33):
    from analysis.metrics import setup_summary

    code, out, err = run(capsys, "solve", "greener", "--preset", "3x3", "--out", str(tmp_path),
                         "--setup-limit", "30", "--jobs", "1")
    assert code == 0, err
    code, out, err = run(capsys, "report", "greener", "--preset", "3x3", "--out", str(tmp_path),
                         "--reports", str(tmp_path / "rep"))
    assert code == 0 and "partial: estimated" in out
    md = next((tmp_path / "rep").rglob("report.md")).read_text()
    assert "PARTIAL, ESTIMATED" in md and "95% interval" in md and "30 of 108" in md
    assert (next((tmp_path / "rep").rglob("report.md")).parent / "figures" / "sweep_narrowing.png").exists()
    # a solved setup answers from the sweep; a position after it, or an unsolved setup, is one line
    table, meta = tasks.read_sweep(make_game("greener", G33), out=tmp_path)
    row = table.sort("order").row(0, named=True)
    code, out, err = run(capsys, "show", "greener", "--preset", "3x3", "--out", str(tmp_path), "--moves",
                         row["layout"], "--json")
    got = json.loads(out)
    assert got["value"] == row["value"] and got["remoteness"] == row["remoteness"]
    whole_row = whole_33.setups.filter(pl.col("key") == row["key"]).row(0, named=True)
    assert got["value"] == whole_row["value"] and got["margin"] == whole_row["margin"]
    unsolved = set(whole_33.setups["layout"].to_list()) - set(table["layout"].to_list())
    code, out, err = run(capsys, "show", "greener", "--preset", "3x3", "--out", str(tmp_path), "--moves",
                         sorted(unsolved)[0])
    assert code == 2 and "not solved yet" in err and "--set setup=" in err
    # completed: the report is exact and equals the whole-graph summary
    run(capsys, "solve", "greener", "--preset", "3x3", "--out", str(tmp_path), "--jobs", "2")
    run(capsys, "report", "greener", "--preset", "3x3", "--out", str(tmp_path), "--reports", str(tmp_path / "rep"))
    md = next((tmp_path / "rep").rglob("report.md")).read_text()
    share = setup_summary(whole_33.setups)["shares"]["win"]
    assert "Verdict (exact)" in md and f"{100 * share:.1f}%" in md and "ESTIMATED" not in md


def test_status_of_an_unfinished_tiered_solve(capsys, tmp_path, monkeypatch):
    env = {**os.environ, "PYRAMIDS_FAULT": "KILL@tier-solved#3"}
    proc = subprocess.run([sys.executable, "-m", "solver.cli", "solve", "blam", "--preset", "3x3", "--tiered",
                           "--workers", "1", "--out", str(tmp_path), "--quiet"], env=env, timeout=300,
                          capture_output=True, text=True)
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]
    code, out, err = run(capsys, "status", "blam", "--preset", "3x3", "--out", str(tmp_path), "--json")
    s = json.loads(out)
    assert s["kind"] == "tiered" and not s["complete"]
    assert s["tiers_solved"] == 3 and s["tiers_discovered"] > 3
    assert 0 < s["positions_solved"] < s["positions_discovered"]
    assert s["positions_expected"] is None  # Blam! 3x3 has no measured entry
    from solver.pipeline import measured  # where one is (a preset of hours), the share discovered
    monkeypatch.setattr(measured, "of_game", lambda game: measured.Measured(positions=4 * s["positions_discovered"]))
    code, out, err = run(capsys, "status", "blam", "--preset", "3x3", "--out", str(tmp_path))
    assert f"({s['positions_discovered']:,} positions of {4 * s['positions_discovered']:,} measured, 25.0%)" in out, out
    monkeypatch.undo()
    run(capsys, "solve", "blam", "--preset", "3x3", "--out", str(tmp_path), "--quiet")
    code, out, err = run(capsys, "status", "blam", "--preset", "3x3", "--out", str(tmp_path), "--json")
    assert json.loads(out)["complete"]
