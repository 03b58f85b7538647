"""Tiers cut in slices (``--tier-slices N``, issue 35): each tier of a game whose every move
leaves its tier solved as N independent slices; the same table, resumable, refused where it
cannot be used."""

from __future__ import annotations

import signal

import numpy as np
import polars as pl
import pytest

from solver import api
from solver.games import make_game
from solver.pipeline import tiered
from solver.tables import read_columns
from tests.test_tiered_setups import G33, G33_ARGS, _assert_same_tables, _cli, _folder, _sweep_table

@pytest.mark.parametrize("reach_only,low_memory", [(False, None), pytest.param(True, None, marks=pytest.mark.slow),
                                                    pytest.param(True, True, marks=pytest.mark.slow)])
def test_tiers_cut_in_slices_give_the_same_table(tmp_path, monkeypatch, reach_only, low_memory):
    """Every tier cut in 3 slices solved apart: the whole graph's rows, setups and start; the
    manifest names the slices; the table verifies; lookups find positions through their slice.
    Both ways of reading the children: their tiers whole, or (where those would not fit the free
    memory: forced here) only the positions each slice reaches; with reverse lists or by passes."""
    if reach_only:
        monkeypatch.setattr(tiered, "REACH_ONLY_SHARE", 0.0)
        calls = []
        real = tiered._reached_children
        monkeypatch.setattr(tiered, "_reached_children", lambda *a: calls.append(1) or real(*a))
    game = make_game("greener", G33)
    whole = api.solve(game, out=tmp_path / "whole", tiered=False)
    one = api.solve(game, out=tmp_path / "one", tiered=True, workers=1)
    cut = api.solve(game, out=tmp_path / "cut", tiered=True, workers=2, tier_slices=3, low_memory=low_memory)
    if reach_only:
        assert len(calls) > 50
    _assert_same_tables(whole, cut)
    assert (one.meta["tier_slices"], cut.meta["tier_slices"]) == (1, 3)
    names = [t["name"] for t in cut.meta["tiers"]]
    assert len(names) > len(one.meta["tiers"]) and sum(n.endswith(", slice 3/3") for n in names) > 10
    assert tiered.verify_tiered(game, cut.path) == []
    # every slice holds the positions whose hash falls in it, and a tier's slices are its positions
    from solver.pipeline.tierwork import slice_of

    by_tier: dict[int, int] = {}
    for t in cut.meta["tiers"]:
        if t["tier"] == cut.meta["root_tier"]:
            continue
        keys = read_columns(cut.path / t["file"], ["key"])["key"].to_numpy()
        assert (slice_of(keys, 3) == t["tier"] % 3).all()
        by_tier[t["tier"] // 3] = by_tier.get(t["tier"] // 3, 0) + len(keys)
    assert by_tier == {t["tier"]: t["positions"] for t in one.meta["tiers"] if t["tier"] != one.meta["root_tier"]}


def test_slices_of_keys_that_share_their_low_bits_are_about_equal():
    """A tier's keys often share bits (here all multiples of 1,024: `key % 8` would put them all
    in one slice); the hash spreads them within 3% of an even cut."""
    from solver.pipeline.tierwork import slice_of

    keys = np.arange(1, 200_001, dtype=np.uint64) * np.uint64(1024)
    counts = np.bincount(slice_of(keys, 8), minlength=8)
    assert counts.sum() == 200_000 and np.abs(counts / 25_000 - 1).max() < 0.03, counts
    assert (slice_of(keys, 1) == 0).all()


def test_a_union_sweep_with_slices_records_them_and_bench_union_groups_by_the_games_tiers(tmp_path):
    from solver import bench_union
    from solver.pipeline import tasks

    game = make_game("greener", G33)
    api.solve(game, out=tmp_path / "one", tiered=True, setup_limit=20, workers=1)
    api.solve(game, out=tmp_path / "cut", tiered=True, setup_limit=20, workers=1, tier_slices=4)
    a, b = (tasks.union_records(game, out=tmp_path / d)[0] for d in ("one", "cut"))
    assert (a["tier_slices"], b["tier_slices"], a["positions"]) == (1, 4, b["positions"])
    assert len(b["tiers"]) > len(a["tiers"])
    ra, rb = (bench_union.recorded(game, tmp_path / d)[0] for d in ("one", "cut"))
    assert ra["groups"] == rb["groups"]
    cols = ["key", "value", "remoteness", "margin"]
    assert _sweep_table(tmp_path / "one").select(cols).equals(_sweep_table(tmp_path / "cut").select(cols))


def test_tier_slices_refused_where_they_cannot_be_used(tmp_path):
    """One line each: a game whose moves can stay in their tier, a count below 1, a solve that is
    not tiered; a run resumed with another count starts over and says why."""
    cases = [(["solve", "override", "--preset", "3x3", "--tiered", "--tier-slices", "2"], "can stay in their tier"),
             (["solve", *G33_ARGS, "--tiered", "--tier-slices", "0"], "must be a whole number of at least 1"),
             (["solve", *G33_ARGS, "--no-tiered", "--tier-slices", "2"], "add --tiered")]
    for args, words in cases:
        res = _cli([*args, "--out", str(tmp_path / "x"), "--quiet"])
        assert res.returncode == 2 and words in res.stderr, res.stderr
        assert "Traceback" not in res.stderr
        assert [line for line in res.stderr.splitlines() if not line.startswith("warning:")] == \
            [line for line in res.stderr.splitlines() if line.startswith("error:")] != []
    root = tmp_path / "resume"
    killed = _cli(["solve", *G33_ARGS, "--tiered", "--tier-slices", "2", "--out", str(root), "--quiet",
                   "--workers", "1"], {"PYRAMIDS_FAULT": "KILL@tier-solved#5"})
    assert killed.returncode == -signal.SIGKILL
    again = _cli(["solve", *G33_ARGS, "--tiered", "--out", str(root), "--quiet", "--workers", "1", "--json"])
    assert again.returncode == 0, again.stderr
    assert "tiers cut in 2 slices; starting over" in again.stderr
    assert api.load(make_game("greener", G33), out=root).meta["tier_slices"] == 1


@pytest.mark.parametrize("point", [pytest.param("tier-discovered#4", marks=pytest.mark.slow), "tier-solved#6"])
def test_killed_sliced_solve_resumes_to_the_same_table(tmp_path, point):
    """Slices share their tier's waiting positions (one file per tier of the game): `kill -9`
    between two slices' discoveries or solves, then the same command, gives the files of an
    uninterrupted sliced run."""
    args = ["solve", *G33_ARGS, "--tiered", "--tier-slices", "3", "--quiet", "--workers", "1"]
    ref = _cli([*args, "--out", str(tmp_path / "ref")])
    assert ref.returncode == 0, ref.stderr
    killed = _cli([*args, "--out", str(tmp_path / "killed")], {"PYRAMIDS_FAULT": f"KILL@{point}"})
    assert killed.returncode == -signal.SIGKILL
    again = _cli([*args, "--out", str(tmp_path / "killed")])
    assert again.returncode == 0 and "resuming" in again.stderr, again.stderr
    a, b = _folder(tmp_path / "ref"), _folder(tmp_path / "killed")
    files = sorted(p.relative_to(a) for p in a.rglob("*.parquet"))
    assert files == sorted(p.relative_to(b) for p in b.rglob("*.parquet")) and len(files) > 100
    for f in files:
        assert pl.read_parquet(a / f).equals(pl.read_parquet(b / f)), f
