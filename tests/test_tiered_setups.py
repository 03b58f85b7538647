"""A random setup solved tier by tier as the union of its setups' positions (issue 35): the same
tables as the whole-graph solve (every setup's value, remoteness, margin; the start's expected
result), proven tier by tier, resumable after kill -9."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solver import api
from solver.core.game import NodeKind
from solver.core.values import FLIP, VALUE_NAMES
from solver.errors import TableError
from solver.games import make_game
from solver.pipeline import tiered, tiered_setups
from tests.clirun import subprocess_run
from tests.budget import examples

G33 = dict(rows=3, cols=3, black=2, white=2, setup="all")
G33_ARGS = ["greener", "--set", "rows=3", "--set", "cols=3", "--set", "black=2", "--set", "white=2",
            "--set", "setup=all"]
#: columns whose values come from sums of floats (the start's chance row): compared to 1e-9
FLOAT_COLUMNS = ("expected", "expected_margin", "p_win", "p_loss")


def _solve_both(game, tmp: Path):
    whole = api.solve(game, out=tmp / "whole", tiered=False)
    union = api.solve(game, out=tmp / "union", tiered=True, workers=1)
    return whole, union


def _assert_same_tables(whole, union) -> None:
    assert union.meta["layout"] == "tiered" and union.meta["solver"] == "retrograde+setups"
    assert union.setups is not None and union.setups.equals(whole.setups)
    assert union.setups.schema == whole.setups.schema  # (equals does not compare dtypes)
    a, b = union.positions, whole.positions
    exact = [c for c in b.columns if c not in FLOAT_COLUMNS]
    assert a.select(exact).equals(b.select(exact))
    chance = (b["kind"] == int(NodeKind.CHANCE)).to_numpy()
    assert chance.sum() == 1
    for c in ("expected", "expected_margin"):
        if c in b.columns:
            assert abs(a[c].to_numpy()[chance][0] - b[c].to_numpy()[chance][0]) < 1e-9
    for k in ("expected_result", "expected_margin"):
        assert abs(union.meta[k] - whole.meta[k]) < 1e-9, k
    assert union.meta["setup_player"] == whole.meta["setup_player"]
    assert union.meta["counts"] == whole.meta["counts"]
    ra, rb = union.root, whole.root
    assert (ra.kind, ra.to_move) == (rb.kind, rb.to_move) == ("chance", rb.to_move)
    for f in ("expected", "p_win", "p_loss"):
        assert abs(getattr(ra, f) - getattr(rb, f)) < 1e-9, f
    state = union.game.initial_state()
    assert [(m.move, m.value, m.remoteness, m.margin) for m in union.moves(state)] == \
        [(m.move, m.value, m.remoteness, m.margin) for m in whole.moves(state)]


@pytest.mark.parametrize("params", [G33, dict(G33, black=3, white=3), dict(G33, rows=2, cols=4, tiebreak="none")])
def test_union_of_setups_equals_the_whole_graph(tmp_path, params):
    game = make_game("greener", params)
    whole, union = _solve_both(game, tmp_path)
    _assert_same_tables(whole, union)
    assert tiered.verify_tiered(game, union.path) == []


@settings(max_examples=examples(8), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.integers(1, 3), cols=st.integers(2, 4), black=st.integers(0, 3), white=st.integers(0, 3),
       tiebreak=st.sampled_from(["tallest", "none"]))
def test_union_equals_the_whole_graph_on_random_setups(tmp_path_factory, rows, cols, black, white, tiebreak):
    """Random small boards (every black/white count that fits, greens the rest)."""
    if black + white > rows * cols:
        return
    if rows * cols >= 12 and black + white >= 4:
        # 3x4 with four or more black/white pyramids takes 7-110 s a draw (measured); the fixed
        # cases above and the slow suite cover the large setups, so a draw here stays quick
        return
    game = make_game("greener", dict(rows=rows, cols=cols, black=black, white=white, setup="all",
                                     tiebreak=tiebreak))
    if game.too_big() is not None:
        return
    _assert_same_tables(*_solve_both(game, tmp_path_factory.mktemp("g")))


def test_verify_finds_a_wrong_start_or_setups_table(tmp_path):
    game = make_game("greener", G33)
    union = api.solve(game, out=tmp_path, tiered=True, workers=1)
    folder = union.path
    meta = json.loads((folder / tiered.MANIFEST).read_text())
    root_file = folder / next(t["file"] for t in meta["tiers"] if t["tier"] == meta["root_tier"])
    stored = tiered_setups.read_setups(folder)
    # a setups table whose first setup is said to be lost when it is won (or the other way)
    flipped = stored.with_columns(pl.when(pl.int_range(pl.len()) == 0)
                                  .then(pl.lit("tie")).otherwise(pl.col("value")).alias("value"))
    from solver.tables import read_meta, write_parquet

    write_parquet(flipped, folder / tiered_setups.SETUPS_FILE, read_meta(folder / tiered_setups.SETUPS_FILE))
    assert any("setups.parquet" in p for p in tiered.verify_tiered(game, folder))
    write_parquet(stored, folder / tiered_setups.SETUPS_FILE, read_meta(folder / tiered_setups.SETUPS_FILE))
    assert tiered.verify_tiered(game, folder) == []
    # a start row whose expected result is off
    row = pl.read_parquet(root_file)
    write_parquet(row.with_columns(pl.col("expected") + 0.01), root_file, read_meta(root_file))
    assert any("stored expected" in p for p in tiered.verify_tiered(game, folder))
    # a missing setups table: the table is refused in one line
    (folder / tiered_setups.SETUPS_FILE).unlink()
    with pytest.raises(TableError, match="setups table setups.parquet is missing"):
        api.load(game, out=tmp_path)


_cli = subprocess_run


def _folder(root: Path) -> Path:
    return next(p for p in (root / "greener").iterdir() if p.is_dir() and not p.name.startswith("."))


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    """An uninterrupted union solve of ``G33`` (one for the module)."""
    root = tmp_path_factory.mktemp("ref")
    ref = _cli(["solve", *G33_ARGS, "--tiered", "--out", str(root), "--quiet", "--workers", "1"])
    assert ref.returncode == 0, ref.stderr
    return root


@pytest.mark.parametrize("point", ["tier-discovered#3", pytest.param("tier-solved#5", marks=pytest.mark.slow), "rename"])
def test_killed_union_solve_resumes_to_the_same_table(tmp_path, point, reference):
    root = tmp_path / "killed"
    killed = _cli(["solve", *G33_ARGS, "--tiered", "--out", str(root), "--quiet", "--workers", "1"],
                  {"PYRAMIDS_FAULT": f"KILL@{point}"})
    assert killed.returncode == -signal.SIGKILL
    with pytest.raises(TableError, match="unfinished .* run the same `pyramids solve` command again"):
        api.load(make_game("greener", G33), out=root)
    again = _cli(["solve", *G33_ARGS, "--out", str(root), "--json", "--quiet", "--workers", "1"])
    assert again.returncode == 0, again.stderr
    assert "resuming" in again.stderr
    a, b = _folder(reference), _folder(root)
    files = sorted(p.relative_to(a) for p in a.rglob("*.parquet"))
    assert files == sorted(p.relative_to(b) for p in b.rglob("*.parquet"))
    for f in files:
        assert pl.read_parquet(a / f).equals(pl.read_parquet(b / f)), f
    out = json.loads(again.stdout)
    assert out["setups"]["classes"] == 108


def test_show_at_the_start_of_a_union_table_lists_the_setups(tmp_path):
    for how in ("--tiered", "--no-tiered"):
        r = _cli(["solve", *G33_ARGS, how, "--out", str(tmp_path / how), "--quiet"])
        assert r.returncode == 0, r.stderr
    shown = [json.loads(_cli(["show", *G33_ARGS, "--out", str(tmp_path / how), "--json"]).stdout)
             for how in ("--tiered", "--no-tiered")]
    assert shown[0]["kind"] == shown[1]["kind"] == "chance"
    assert shown[0]["moves"] == shown[1]["moves"] and len(shown[0]["moves"]) == 108
    assert abs(shown[0]["expected"] - shown[1]["expected"]) < 1e-9


@pytest.mark.slow
def test_greener_3x4_union_equals_the_whole_graph(tmp_path):
    """The issue's check: Greener 3x4 over all 4,664 setup classes, tier by tier."""
    game = make_game("greener", dict(rows=3, cols=4, black=3, white=3, setup="all"))
    whole, union = _solve_both(game, tmp_path)
    _assert_same_tables(whole, union)
    assert tiered.verify_tiered(game, union.path) == []
    assert np.isclose(union.meta["expected_result"], whole.meta["expected_result"], atol=1e-9)


def test_report_of_a_union_table_is_the_whole_graphs(tmp_path):
    """The balance report reads the union table as the whole graph's: same text but for the rows
    that say where and when the table was made."""
    from analysis.report import write_report

    game = make_game("greener", G33)
    whole, union = _solve_both(game, tmp_path)
    texts = []
    for name, sol in (("whole", whole), ("union", union)):
        md = write_report(sol, tmp_path / f"report-{name}").read_text()
        texts.append([ln for ln in md.splitlines()
                      if not ln.startswith(("| table |", "| solve time", "| solved at"))])
    assert texts[0] == texts[1]
    assert any("108 distinct setups" in ln for ln in texts[1])


def test_a_sweep_of_the_variant_survives_its_union_solve(tmp_path):
    """A setup sweep and a union solve of the same variant in one --out: the union's table
    replaces the variant folder but keeps the sweep's own folder in it."""
    from solver.pipeline import tasks

    game = make_game("greener", G33)
    sweep = tasks.sweep_dir(game, tmp_path, True)
    (sweep / "parts").mkdir(parents=True)
    (sweep / "plan.json").write_text("{}")
    api.solve(game, out=tmp_path, tiered=True, workers=1)
    assert (sweep / "plan.json").read_text() == "{}" and (sweep / "parts").is_dir()
    assert api.load(game, out=tmp_path).setups.height == 108
    assert tiered.KEPT_BESIDE == (tasks.SWEEP_DIR,)


def _sweep_table(root: Path) -> pl.DataFrame:
    return pl.read_parquet(next(root.glob("greener/*/sweep/setups.parquet"))).sort("key")


def test_sweep_with_tiered_solves_each_call_as_one_union(tmp_path):
    """`--tiered --setup-limit N` sweeps the next N classes as one union, tier by tier; two calls
    give the whole graph's setups table, each call one batch; a partial sweep estimates."""
    args = [*G33_ARGS, "--tiered", "--out", str(tmp_path / "sweep"), "--quiet", "--json"]
    first = _cli(["solve", *args, "--setup-limit", "30"])
    assert first.returncode == 0, first.stderr
    part = json.loads(first.stdout)
    assert part["classes_done"] == 30 and not part["complete"] and "estimate" in part
    assert not list((tmp_path / "sweep").rglob("union"))  # harvested and removed
    rest = _cli(["solve", *args, "--setup-limit", "500"])
    assert rest.returncode == 0, rest.stderr
    assert json.loads(rest.stdout)["complete"]
    table = _sweep_table(tmp_path / "sweep")
    assert sorted(table["batch"].unique().to_list()) == [30, 78]
    whole = api.solve(make_game("greener", G33), out=tmp_path / "whole", tiered=False)
    assert table.select(whole.setups.columns).equals(whole.setups.sort("key"))
    assert table.select(whole.setups.columns).schema == whole.setups.schema


@pytest.mark.parametrize("point", [pytest.param("tier-solved#4", marks=pytest.mark.slow), "union-solved"])
def test_killed_union_sweep_resumes_to_the_same_table(tmp_path, point):
    args = [*G33_ARGS, "--tiered", "--setup-limit", "40", "--quiet", "--workers", "1"]
    ref = _cli(["solve", *args, "--out", str(tmp_path / "ref")])
    assert ref.returncode == 0, ref.stderr
    killed = _cli(["solve", *args, "--out", str(tmp_path / "k")], {"PYRAMIDS_FAULT": f"KILL@{point}"})
    assert killed.returncode == -signal.SIGKILL
    status = _cli(["status", *G33_ARGS, "--out", str(tmp_path / "k")])
    shown = json.loads(_cli(["status", *G33_ARGS, "--out", str(tmp_path / "k"), "--json"]).stdout)
    if point.startswith("tier-solved"):  # a batch under way is shown, and not counted as done
        assert "under way      a batch of setups together" in status.stdout
        assert shown["union"]["tiers_solved"] >= 3 and shown["classes_done"] == 0
    again = _cli(["solve", *args, "--out", str(tmp_path / "k")])
    assert again.returncode == 0, again.stderr
    if point == "union-solved":  # the finished union's rows are kept, not solved again
        assert "solving 40 of 108" not in again.stderr
    cols = ["key", "layout", "probability", "multiplicity", "value", "remoteness", "margin", "order", "batch"]
    a, b = _sweep_table(tmp_path / "ref"), _sweep_table(tmp_path / "k")
    assert a.height == 40 and a.select(cols).equals(b.select(cols))


def test_the_union_folder_is_recognised_by_the_tiered_manifest():
    from solver.pipeline import tasks

    assert tasks.UNION_MANIFEST == tiered.MANIFEST


def test_bench_union_counts_the_positions_of_the_first_classes(tmp_path, capsys):
    """The sharing measurement: every class together reaches every position of the whole graph
    but its start; the first N classes are the sweep's first N; the extrapolation is the power
    law through the last two N, never above the classes alone."""
    from solver import bench_union
    from solver.pipeline import tasks

    game = make_game("greener", G33)
    whole = api.solve(game, out=tmp_path / "whole", tiered=False)
    first = bench_union.first_classes(game, True, 10)
    setups = tasks.setup_classes(game)
    assert np.array_equal(first, setups.keys[tasks.plan_order(setups.mult)[0][:10]])
    rows = [bench_union.measure(game, n, tmp_path, workers=1) for n in (1, 10, 108)]
    assert rows[-1]["positions"] == whole.positions.height - 1
    assert rows[0]["positions"] < rows[1]["positions"] < rows[2]["positions"]
    assert sum(rows[-1]["groups"].values()) == rows[-1]["positions"]
    assert bench_union.extrapolate(rows[:2], 108) == pytest.approx(
        rows[1]["positions"] * 10.8 ** (np.log(rows[1]["positions"] / rows[0]["positions"]) / np.log(10)))
    assert bench_union.extrapolate([{"n": 1, "positions": 10}, {"n": 2, "positions": 40}], 10) == 100
    assert bench_union.main(["greener", "--preset", "3x3", "--classes", "1,108", "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "| 9 stacks left | 1 | 108 |" in out and f"**{whole.positions.height - 1:,}**" in out


def test_bench_union_shows_its_progress_in_lines_when_not_on_a_terminal(tmp_path):
    """A measurement of many classes runs for an hour: off a terminal it writes the discovery's
    progress lines to standard error (every $PYRAMIDS_PROGRESS_SECONDS), and nothing with --quiet."""
    import os
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "solver.bench_union", "--preset", "3x3", "--classes", "108", "--workers", "1",
           "--dir", str(tmp_path)]
    env = {**os.environ, "PYRAMIDS_PROGRESS_SECONDS": "0"}
    loud = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert loud.returncode == 0, loud.stderr
    assert "discovering tiers:" in loud.stderr and "positions found" in loud.stderr
    quiet = subprocess.run([*cmd, "--quiet"], capture_output=True, text=True, env=env, timeout=300)
    assert quiet.returncode == 0 and quiet.stderr == ""

    def counts(out: str) -> list[str]:  # the table without its times
        return [ln for ln in out.splitlines() if ln.startswith("| ") and not ln.startswith("| seconds")]

    assert counts(quiet.stdout) == counts(loud.stdout) and any(ln.startswith("| **all** |") for ln in counts(loud.stdout))


def test_a_union_that_does_not_fit_the_disk_is_refused_at_once(tmp_path, monkeypatch):
    """Greener 4x4's union of every setup was measured (projected) past this machine's disk: the
    solve is refused in one line before any work, naming its size and the Dask command; a slice
    (a sweep with --tiered --setup-limit) is not refused; a variant with no measurement is not."""
    from solver.errors import TooBigError
    from solver.pipeline import measured

    g44 = make_game("greener", rows=4, cols=4, black=4, white=4, setup="all")
    entry = measured.union_of(g44)
    assert entry is not None and entry.positions > 1e10 and "bench_union" in entry.measured
    for (game, vid), m in measured.unions().items():  # every entry names a real random-setup variant
        assert game in ("greener",) and vid == g44.variant.variant_id() and m.measured
    with pytest.raises(TooBigError, match=r"about 6\.1e\+10 positions .* --tiered --tier-slices 64 --scheduler tcp://HOST:8786"):
        tiered.solve_tiered(g44, out=tmp_path)
    assert not list(tmp_path.rglob("*.tiered"))  # nothing was started
    small = make_game("greener", G33)
    tiered.check_union(small, tmp_path)  # not measured: no refusal
    monkeypatch.setitem(measured.unions(), ("greener", small.variant.variant_id()),
                        measured.Measured(positions=10**15, measured="test"))
    with pytest.raises(TooBigError, match="--ignore-estimate tries anyway"):
        tiered.check_union(small, tmp_path)


def test_a_union_batch_records_its_cpu_time_and_a_later_empty_run_keeps_the_workers(tmp_path):
    from solver.pipeline import tasks
    from solver.tables import read_meta

    game = make_game("greener", G33)
    res = api.solve(game, out=tmp_path, tiered=True, setup_limit=20, workers=1)
    assert res.solved_now == 20
    table = _sweep_table(tmp_path)
    assert (table["seconds"] > 0).all() and table["batch"].to_list() == [20] * 20
    path = tasks.sweep_dir(game, tmp_path, True) / "setups.parquet"
    workers = read_meta(path)["workers"]
    assert workers == 1
    api.solve(game, out=tmp_path, setup_limit=0)  # nothing to do: the table is rewritten as it was
    assert read_meta(path)["workers"] == workers


def test_every_union_keeps_a_record_of_its_tiers_and_bench_union_shows_it(tmp_path, capsys):
    """A union's tier files go with its folder; its record stays in the sweep (``sweep/unions/``):
    the classes, their places in the order, the positions of every tier (as the union's discovery
    from the same classes counts them), the times. ``bench_union --recorded`` shows the records."""
    from solver import bench_union
    from solver.pipeline import tasks

    game = make_game("greener", G33)
    api.solve(game, out=tmp_path, tiered=True, setup_limit=20, workers=1)
    api.solve(game, out=tmp_path, tiered=True, setup_limit=30, workers=1)
    records = tasks.union_records(game, out=tmp_path)
    assert [(r["classes"], r["orders"]) for r in records] == [(20, [0, 19]), (30, [20, 49])]
    table = _sweep_table(tmp_path)
    for r in records:
        batch = table.filter(pl.col("batch") == r["classes"])
        assert r["positions"] == batch["positions"][0] and r["cpu_seconds"] > 0
        assert sum(t["positions"] for t in r["tiers"]) == r["positions"]
    alone = bench_union.measure(game, 20, tmp_path / "bench", workers=1)
    rows = bench_union.recorded(game, tmp_path)
    assert rows[0]["positions"] == alone["positions"] and rows[0]["groups"] == alone["groups"]
    assert bench_union.main(["greener", "--preset", "3x3", "--recorded", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "(classes 20-49 of the order)" in out and f"**{alone['positions']:,}**" in out
    assert bench_union.main(["greener", "--preset", "3x3", "--recorded", "--out", str(tmp_path / "none")]) == 2
    assert "no finished union" in capsys.readouterr().err


def test_the_sweep_report_says_what_a_class_cost_in_each_batch_size(tmp_path):
    """Batches share positions: the report's cost section lists each batch size with the median
    seconds and positions a class, read from the sweep table's rows (one batch of 20 together,
    then ten classes one per task)."""
    from analysis.sweep_report import write_sweep_report
    from solver.pipeline import tasks

    pytest.importorskip("distributed")  # (the single-class tasks run on Dask)
    game = make_game("greener", G33)
    api.solve(game, out=tmp_path, tiered=True, setup_limit=20, workers=1)
    api.solve(game, out=tmp_path, setup_limit=10, jobs=1, batch=1)
    table, meta = tasks.read_sweep(game, out=tmp_path)
    md = write_sweep_report(game, table, meta, tmp_path / "rep").read_text()
    one, union = table.filter(pl.col("batch") == 1), table.filter(pl.col("batch") == 20)
    assert one.height == 10 and union.height == 20
    assert (f"| 20 | 20 | {union['seconds'].median():.1f} | {union['positions'][0] / 20:,.0f} |" in md)
    assert (f"| 1 | 10 | {one['seconds'].median():.1f} | {one['positions'].median():,.0f} |" in md)
    assert "in batches of 20, against" in md


@pytest.mark.slow
def test_greener_4x4_union_of_two_classes_equals_each_class_alone(tmp_path):
    """Greener 4x4 (issue 35's sample check): the first two setup classes of the sweep's order,
    solved together tier by tier, give each class the value, remoteness and margin of its own
    solve (the sweep's task, the whole graph of one class). About 3 minutes. (Run by hand on
    2026-12-04 for the first 10 classes against the shipped sweep's rows: all equal.)"""
    from solver import bench_union
    from solver.pipeline import tasks

    game = make_game("greener", rows=4, cols=4, black=4, white=4, setup="all")
    keys = bench_union.first_classes(game, True, 2)
    folder = tiered.solve_tiered(game, folder=tmp_path / "union", setup_keys=keys, workers=2)
    rows = tiered_setups.read_setups(folder).sort("key")
    assert rows["key"].to_list() == sorted(keys.tolist())
    spec = tasks.game_spec(game)
    for key in keys.tolist():
        alone = tasks.solve_setup_batch(spec, [key], True)
        got = rows.filter(pl.col("key") == key).row(0, named=True)
        setups = tasks.setup_classes(game)
        i = int(setups.rows_of([key])[0])
        same = int(setups.to_move[i]) == setups.root_player
        code = int(alone["value"][0]) if same else int(FLIP[int(alone["value"][0])])
        assert got["value"] == VALUE_NAMES[code]
        assert got["remoteness"] == int(alone["remoteness"][0])
        assert got["margin"] == (1 if same else -1) * int(alone["margin"][0])

