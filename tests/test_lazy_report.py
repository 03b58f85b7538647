"""Reports of tiered tables too large to load: the metrics run as streaming aggregates over a
scan of the tier files, and give the numbers of the table in memory.

1. Every metric that takes a lazy scan gives, on a scan of a table split over several shuffled
   Parquet files, what a direct numpy count of the table in memory gives (independent code).
2. A report of a tiered table whose moves are not regenerated (``EDGES_ON_DEMAND`` set to 0, as
   for Override 4x4's 1.1 billion moves) never loads the table whole, and its sections that need
   no moves equal those of the whole-graph report of the same variant.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from analysis import metrics as M
from solver.core.values import NO_REMOTENESS, VALUE_NAMES

SMALL = [
    ("blam", {"rows": 3, "cols": 3, "per_size": 1}),                    # margins, a forced win
    ("override", {"size": 2, "line": 2, "per_size": 2}),
    ("dicerace", {"target": 5}),                                        # dice: expected results
    ("blam", {"rows": 2, "cols": 3, "players": 3, "per_size": 1}),      # three seats (paranoid)
]


def _game(name: str, params: dict):
    from solver.api import make_game
    from tests.test_tiered_chance import TieredDiceRace

    return TieredDiceRace.from_params(params) if name == "dicerace" else make_game(name, **params)


def _solved(name: str, params: dict, tmp_path: Path):
    from solver.api import solve

    return solve(_game(name, params), out=tmp_path / "tables", tiered=False)


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    """``solved(name, params, tiered)``: the folder of that table, solved once for the module's
    tests (which only read it): each game's two solves, not four times each."""
    import solver.api as api

    cache: dict[tuple, Path] = {}

    def get(name: str, params: dict, tiered: bool) -> Path:
        key = (name, tuple(sorted(params.items())), tiered)
        if key not in cache:
            out = tmp_path_factory.mktemp("tiered" if tiered else "whole")
            api.solve(_game(name, params), out=out, tiered=tiered)
            cache[key] = out
        return cache[key]

    return get


def _scan_of_pieces(df: pl.DataFrame, folder: Path, seed: int = 0) -> pl.LazyFrame:
    """The table shuffled and split over three Parquet files, scanned lazily."""
    folder.mkdir(parents=True, exist_ok=True)
    order = np.random.default_rng(seed).permutation(df.height)
    files = []
    for i, part in enumerate(np.array_split(order, 3)):
        f = folder / f"part-{i}.parquet"
        df[part].write_parquet(f, row_group_size=max(1, df.height // 7))
        files.append(str(f))
    return pl.scan_parquet(files)


def _rem(df: pl.DataFrame) -> list:
    rem = df["remoteness"].to_list() if "remoteness" in df.columns else [None] * df.height
    return [None if r is None or r == int(NO_REMOTENESS) else int(r) for r in rem]


@pytest.mark.parametrize("name,params", SMALL, ids=lambda x: x if isinstance(x, str) else None)
def test_metrics_on_a_scan_equal_counts_of_the_table_in_memory(name, params, tmp_path):
    sol = _solved(name, params, tmp_path)
    df, meta = sol.positions, dict(sol.meta)
    if meta.get("solution") == "paranoid":
        df = M.paranoid_view(df, 0)
        # the lazy paranoid view equals the eager one
        lazy_view = M.paranoid_view(sol.positions.lazy(), 0).collect()
        assert lazy_view.equals(df)
    scan = _scan_of_pieces(df, tmp_path / "pieces")
    kind = df["kind"].to_numpy()
    not_chance = kind != M.CHANCE
    stochastic = df["value"].dtype in (pl.Float32, pl.Float64)

    assert M.count(scan) == df.height
    assert M.has_chance(scan) == bool((kind == M.CHANCE).any())
    assert M.num_players(scan) == M.num_players(df) == int(df["player"].max()) + 1
    assert M.root_values(scan, meta) == df.row(M.root_row(df, meta), named=True)
    assert M.verdict(scan, meta) == M.verdict(df, meta)

    # structure: counts by kind, branching over non-terminal decision rows, values
    s = M.structure(scan)
    nm = df["num_moves"].to_numpy().astype(np.int64)
    dec = (kind == M.DECISION) & (nm > 0)
    assert (s.positions, s.terminal, s.chance, s.decision) == (
        df.height, int((kind == M.TERMINAL).sum()), int((kind == M.CHANCE).sum()), int((kind == M.DECISION).sum()))
    assert (s.branching_mean, s.branching_max) == pytest.approx((nm[dec].mean(), nm[dec].max()))
    assert s.moves is None and s.cyclic_share is None
    counts = Counter(nm[dec].tolist())
    b = M.branching_counts(scan)
    assert dict(zip(b["num_moves"].to_list(), b["positions"].to_list())) == counts
    assert b["num_moves"].to_list() == sorted(counts)

    if stochastic:
        vals = df["value"].to_numpy()[not_chance]
        want, _ = np.histogram(np.clip(vals, -1, 1), bins=20, range=(-1, 1))
        assert M.expected_histogram(scan)["positions"].to_list() == want.tolist()
        n, mean, positive = M.expected_summary(scan)
        assert n == len(vals) and mean == pytest.approx(vals.mean()) and positive == pytest.approx((vals > 0).mean())
        by_ply = M.expected_by_ply(scan)
        ply = df["ply"].to_numpy()[not_chance]
        assert by_ply["ply"].to_list() == sorted(set(ply.tolist()))
        for row in by_ply.iter_rows(named=True):
            sel = ply == row["ply"]
            assert row["positions"] == int(sel.sum())
            assert row["mean_expected"] == pytest.approx(vals[sel].mean())
        assert s.by_value == {}
        return

    codes = df["value"].to_numpy()[not_chance]
    rems = [r for r, c in zip(_rem(df), not_chance) if c]
    want = Counter(zip(rems, (VALUE_NAMES[c] for c in codes)))
    table = M.value_remoteness_table(scan)
    got = Counter()
    for row in table.iter_rows(named=True):
        for v in M.SHOWN_VALUES:
            if row[v]:
                got[(row["remoteness"], v)] = row[v]
        assert row["total"] == sum(row[v] for v in M.SHOWN_VALUES)
    assert got == Counter({k: n for k, n in want.items() if n})
    rem_order = table["remoteness"].to_list()
    assert rem_order == sorted(r for r in rem_order if r is not None) + ([None] if None in rem_order else [])
    assert s.by_value == {v: int(sum(1 for c in codes if VALUE_NAMES[c] == v)) for v in M.SHOWN_VALUES}

    by_ply = M.value_by_ply(scan)
    ply = df["ply"].to_numpy()[not_chance]
    for row in by_ply.iter_rows(named=True):
        sel = ply == row["ply"]
        assert row["positions"] == int(sel.sum())
        assert row["finished"] == int((kind[not_chance][sel] == M.TERMINAL).sum())
        for v in M.SHOWN_VALUES:
            assert row[v] == int(sum(1 for c in codes[sel] if VALUE_NAMES[c] == v))
    assert by_ply["ply"].to_list() == sorted(set(ply.tolist()))


def _sections(lines: list[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    title = ""
    for line in lines:
        if line.startswith("## "):
            title = line.split(". ", 1)[1]
            out[title] = []
        elif title:
            out[title].append(line)
    return out


@pytest.mark.parametrize("name,params", SMALL[:3], ids=lambda x: x if isinstance(x, str) else None)
def test_report_of_a_tiered_table_without_its_moves_streams_its_files(name, params, tmp_path, monkeypatch, solved):
    import solver.api as api
    from analysis.report import write_report

    game = _game(name, params)
    whole = api.solve(game, out=solved(name, params, False), tiered=False)
    tiered_sol = api.solve(game, out=solved(name, params, True), tiered=True)
    monkeypatch.setattr(api, "EDGES_ON_DEMAND", 0)  # as for a table of 10^9 moves
    lazy = api.load(game, out=solved(name, params, True))
    assert isinstance(lazy, api.TieredSolution) and lazy.edges is None
    b = _sections(write_report(lazy, tmp_path / "rb").read_text().splitlines())
    assert lazy._positions is None, "the report loaded the tiered table whole"
    a = _sections(write_report(whole, tmp_path / "ra").read_text().splitlines())
    assert list(a) == list(b)
    moves = ("Opening moves", "Decision difficulty", "Game length", "Structure", "Provenance", "Glossary")
    same = [title for title in a if title not in moves]
    assert "Verdict" in same and len(same) >= 4
    for title in same:
        assert a[title] == b[title], title
    # Structure: the same counts; the cycle and move rows need every move
    need_moves = ("| moves (edges)", "| positions on a cycle", "| cyclic components", "| largest cyclic")
    rows_a = [r for r in a["Structure"] if r.startswith("| ") and not r.startswith(need_moves)]
    rows_b = [r for r in b["Structure"] if r.startswith("| ")]
    assert rows_a == rows_b
    assert a["Structure"][0].split(" A player")[0] == b["Structure"][0].split(" A player")[0]
    assert any("not regenerated" in line or "regenerated for a report" in line for line in b["Structure"])
    # the figures of those sections are drawn from the same numbers: the same bytes
    figures = {f.name: f.read_bytes() for f in (tmp_path / "ra").rglob("*.png")}
    drawn = {f.name: f.read_bytes() for f in (tmp_path / "rb").rglob("*.png")}
    for fig in ("value_by_ply.png", "branching.png", "value_histogram.png"):
        assert (fig in figures) == (fig in drawn)
        assert figures.get(fig) == drawn.get(fig), fig
    assert "value_by_ply.png" in drawn and "branching.png" in drawn


def _opening_rows(lines: list[str]) -> list[tuple[frozenset, int, str, str]]:
    """The opening-moves table's rows: (names of the group, moves, value, plies to the end)."""
    rows = [[c.strip() for c in r.strip("|").split("|")] for r in lines if r.startswith("| ")]
    out = []
    for cells in rows[2:]:  # after the header and its rule
        names = frozenset(n for n in cells[0].split(" (+")[0].split(", "))
        out.append((names, int(cells[1]), cells[2], cells[3]))
    return out


@pytest.mark.parametrize("name,params", SMALL[:2], ids=lambda x: x if isinstance(x, str) else None)
def test_opening_moves_looked_up_are_grouped_by_symmetry_as_from_the_moves(name, params, tmp_path, monkeypatch, solved):
    """Without its moves, a tiered table's report looks the first moves up one by one and groups
    those that lead to symmetric positions: the same groups, counts, values and lengths as the
    whole-graph report reads from its moves (the first four names of each group)."""
    import solver.api as api
    from analysis.report import write_report

    game = _game(name, params)
    whole = api.solve(game, out=solved(name, params, False), tiered=False)
    api.solve(game, out=solved(name, params, True), tiered=True)
    monkeypatch.setattr(api, "EDGES_ON_DEMAND", 0)
    lazy = api.load(game, out=solved(name, params, True))
    a = _opening_rows(_sections(write_report(whole, tmp_path / "ra").read_text().splitlines())["Opening moves"])
    b = _opening_rows(_sections(write_report(lazy, tmp_path / "rb").read_text().splitlines())["Opening moves"])
    n_moves = len(game.legal_actions(game.initial_state()))
    assert sum(r[1] for r in b) == n_moves and len(b) < n_moves  # grouped: fewer rows than moves
    assert sorted(b, key=repr) == sorted(a, key=repr)


@pytest.mark.parametrize("name,params", SMALL[:3], ids=lambda x: x if isinstance(x, str) else None)
def test_tune_row_of_a_tiered_table_without_its_moves_equals_the_whole_graph_row(name, params, tmp_path, monkeypatch, solved):
    """A sweep's row of a tiered table streams its files too: the numbers that need no moves equal
    the whole-graph table's, the hash of every row included."""
    import solver.api as api
    from analysis.tuning import summarize

    game = _game(name, params)
    whole = summarize(api.solve(game, out=solved(name, params, False), tiered=False))
    api.solve(game, out=solved(name, params, True), tiered=True)
    monkeypatch.setattr(api, "EDGES_ON_DEMAND", 0)
    lazy = api.load(game, out=solved(name, params, True))
    row = summarize(lazy)
    assert lazy._positions is None
    for k in ("first_player", "value_counts", "digest", "kind", "verdict", "value", "remoteness",
              "advantage", "margin", "p_first_wins", "p_first_loses", "positions"):
        assert row[k] == whole[k], k
    assert row["digest"] is not None
    assert row["only_move"] is None and row["cyclic"] is None  # these need every move


@pytest.mark.parametrize("name,params", SMALL[:3], ids=lambda x: x if isinstance(x, str) else None)
def test_the_start_of_a_tiered_table_is_read_from_its_own_tier(name, params, tmp_path, monkeypatch, solved):
    """A report or tune row of a streamed tiered table reads the start's row from its tier file
    (``TieredSolution.root_row_values``): the row a filter of the whole scan on the start's key
    finds, every column."""
    import solver.api as api

    game = _game(name, params)
    api.solve(game, out=solved(name, params, True), tiered=True)
    monkeypatch.setattr(api, "EDGES_ON_DEMAND", 0)
    lazy = api.load(game, out=solved(name, params, True))
    scan = M.positions_of(lazy)
    assert isinstance(scan, pl.LazyFrame)
    meta = M.reading_meta(lazy, scan)
    filtered = M.collect(scan, scan.filter(pl.col("key") == int(lazy.meta["root_key"])))
    assert filtered.height == 1
    assert meta[M.ROOT_ROW] == filtered.row(0, named=True)
    assert M.root_values(scan, meta) == filtered.row(0, named=True)
    assert lazy._positions is None


def test_a_paranoid_tables_start_is_not_looked_up_beside_its_view():
    """3-4 players' tables are read through :func:`analysis.metrics.paranoid_view`, whose rows
    differ from the file's: their start is found by the filter on the view, not looked up."""

    class Tiered:
        meta = {"solution": "paranoid", "root_key": 5}

        def root_row_values(self):
            return {"key": 5}

    class TwoSided(Tiered):
        meta = {"solution": "deterministic", "root_key": 5}

    scan = pl.LazyFrame({"key": [5]})
    assert M.ROOT_ROW not in M.reading_meta(Tiered(), scan)
    assert M.reading_meta(TwoSided(), scan)[M.ROOT_ROW] == {"key": 5}
    assert M.ROOT_ROW not in M.reading_meta(TwoSided(), scan.collect())  # a table in memory: its rows
