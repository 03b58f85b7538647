"""Tables: schema, metadata, reuse, refusal of stale or foreign tables, atomic writes."""

from __future__ import annotations

import json

import polars as pl
import pyarrow.parquet as pq
import pytest

from solver.api import load, solve
from solver.errors import TableError
from tests.toygames import Subtraction


def test_schema_and_metadata(tmp_path):
    game = Subtraction.from_params(n=5)
    sol = solve(game, out=tmp_path)
    df = pl.read_parquet(sol.path)
    assert df.schema["key"] == pl.UInt64
    assert df.schema["player"] == pl.UInt8
    assert df.schema["value"] == pl.UInt8
    assert df.schema["remoteness"] == pl.UInt16
    assert df.schema["ply"] == pl.UInt16
    meta = json.loads(pq.read_schema(sol.path).metadata[b"pyramids"])
    assert meta["game"] == "subtraction" and meta["variant"] == {"n": "5"}
    assert meta["counts"]["positions"] == df.height
    assert pq.ParquetFile(sol.path).metadata.row_group(0).column(0).compression == "ZSTD"
    # n=5 is a first-player win in 3 plies (take 2, leaving 3)
    assert (sol.root.value, sol.root.remoteness) == ("win", 3)
    assert not list(tmp_path.rglob("*.tmp"))  # the temporary file was renamed away


def test_reuse_and_force(tmp_path):
    game = Subtraction.from_params(n=5)
    first = solve(game, out=tmp_path)
    again = solve(game, out=tmp_path)
    assert "write_seconds" not in again.meta  # loaded, not solved
    assert again.meta["created"] == first.meta["created"]
    forced = solve(game, out=tmp_path, force=True)
    assert "write_seconds" in forced.meta


def test_foreign_or_stale_table_is_refused(tmp_path):
    game = Subtraction.from_params(n=5)
    sol = solve(game, out=tmp_path)
    other = Subtraction.from_params(n=6)
    # copy n=5's table where n=6's belongs: refused with a clear message
    target = tmp_path / "subtraction" / other.variant.variant_id()
    target.mkdir(parents=True)
    (target / "positions.parquet").write_bytes(sol.path.read_bytes())
    with pytest.raises(TableError, match="not the requested variant"):
        load(other, out=tmp_path)

    class Newer(Subtraction):
        rules_version = "99"

    with pytest.raises(TableError, match="rules version"):
        load(Newer.from_params(n=5), out=tmp_path)
    # solve() re-solves a stale table of the same variant instead of refusing it
    fresh = solve(Newer.from_params(n=5), out=tmp_path)
    assert fresh.meta["rules_version"] == "99"


def test_corrupt_table_is_a_clear_error(tmp_path):
    game = Subtraction.from_params(n=4)
    sol = solve(game, out=tmp_path)
    sol.path.write_bytes(b"not parquet at all")
    with pytest.raises(TableError, match="not a readable Parquet"):
        load(game, out=tmp_path)


def test_failed_write_leaves_no_half_table(tmp_path, monkeypatch):
    import solver.tables as tables

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(tables.pq, "write_table", boom)
    with pytest.raises(OSError):
        solve(Subtraction.from_params(n=4), out=tmp_path)
    assert not list(tmp_path.rglob("*.parquet")) and not list(tmp_path.rglob("*.tmp"))


def test_keys_are_stored_as_deltas_and_read_back_exactly(tmp_path):
    """Sorted position keys differ little from row to row: the key column is delta-encoded
    (Parquet's DELTA_BINARY_PACKED), which on sorted keys is far smaller than plain values, and
    reads back bit for bit, in one frame or in row groups, by polars and by a filter on the key."""
    import numpy as np

    from solver.tables import read_meta, write_parquet

    rng = np.random.default_rng(3)
    keys = np.sort(rng.choice(2**40, size=300_000, replace=False).astype(np.uint64))
    keys[-1] = np.uint64(2**64 - 1)  # the largest key there is: deltas must not overflow
    df = pl.DataFrame({"key": keys, "value": rng.integers(0, 4, len(keys)).astype(np.uint8)})
    one = write_parquet(df, tmp_path / "one.parquet", {"x": 1})
    parts = write_parquet((df.slice(i, 100_000) for i in range(0, len(keys), 100_000)), tmp_path / "parts.parquet", {"x": 2})
    for path in (one, parts):
        md = pq.ParquetFile(path).metadata
        for g in range(md.num_row_groups):
            col = md.row_group(g).column(0)
            assert col.path_in_schema == "key" and "DELTA_BINARY_PACKED" in col.encodings
        back = pl.read_parquet(path)
        assert back["key"].to_numpy().tobytes() == keys.tobytes()
        assert back["value"].equals(df["value"])
        k = int(keys[123_456])
        hit = pl.scan_parquet(path).filter(pl.col("key") == k).collect()
        assert hit.height == 1 and int(hit["value"][0]) == int(df["value"][123_456])
    assert read_meta(parts) == {"x": 2}
    # plain values of the same keys, zstd as well, are larger
    pq.write_table(df.to_arrow(), tmp_path / "plain.parquet", compression="zstd", use_dictionary=False)
    key_size = lambda p: sum(pq.ParquetFile(p).metadata.row_group(g).column(0).total_compressed_size
                             for g in range(pq.ParquetFile(p).metadata.num_row_groups))
    assert key_size(one) < 0.8 * key_size(tmp_path / "plain.parquet")


def test_arrow_tables_of_positions_equal_the_polars_frames():
    """positions_tables (the chance tiers' writer, built with Arrow) gives the very tables of
    positions_frames: schema, values, NaN win probabilities as nulls, row groups."""
    import numpy as np

    from solver.tables import positions_frames, positions_tables

    rng = np.random.default_rng(5)
    n = 1000
    keys = np.sort(rng.choice(2**40, n, replace=False)).astype(np.uint64)
    player, kind = rng.integers(0, 2, n).astype(np.int8), rng.integers(0, 4, n).astype(np.int8)
    ply, moves = rng.integers(0, 300, n).astype(np.uint16), rng.integers(0, 70_000, n)
    p_win = rng.random(n)
    p_win[::7] = np.nan
    cols = {"value": rng.random(n) * 2 - 1, "p_win": p_win, "p_loss": rng.random(n)}
    a = [f.to_arrow() for f in positions_frames(keys, player, kind, ply, moves, cols, rows=300)]
    b = list(positions_tables(keys, player, kind, ply, moves, cols, rows=300))
    assert len(a) == len(b) == 4
    for x, y in zip(a, b):
        assert x.schema == y.schema and x.equals(y)
    assert b[0].column("p_win").null_count == len(range(0, 300, 7))


def test_mix_columns_are_lists_at_their_rows_and_null_elsewhere(tmp_path) -> None:
    import numpy as np

    from solver.tables import mix_column, positions_frame

    mixes = {5: np.array([0.25, 0.75]), 1: np.array([1.0]), 7: np.array([0.2, 0.3, 0.5])}
    n = 9
    column = mix_column(n, mixes)
    expected = [mixes[i].tolist() if i in mixes else None for i in range(n)]
    assert column.to_pylist() == expected
    keys = np.arange(n, dtype=np.uint64)
    small = np.zeros(n, dtype=np.int64)
    frame = positions_frame(keys, small, small, small, small, {"strategy_1": column})
    assert frame["strategy_1"].dtype == pl.List(pl.Float64)
    assert frame["strategy_1"].to_list() == expected
    assert frame.equals(positions_frame(keys, small, small, small, small, {"strategy_1": expected}))
    assert mix_column(3, {}).to_pylist() == [None, None, None]
    assert mix_column(4, mixes={2: np.array([0.5, 0.5])})[1:3].to_pylist() == [None, [0.5, 0.5]]


def test_pages_hold_many_rows_so_zstd_sees_more_at_once(tmp_path):
    """A page holds up to ``PAGE_ROWS`` rows (Arrow's default closes one every 20,000), so zstd
    finds patterns that repeat further apart than that (as positions' keys and plies do: the
    same arrangement of one part of the board under every arrangement of the rest). Here the
    deltas and plies repeat every 30,000 rows: the same frame written with Arrow's default page
    length and otherwise the same options is larger, and both read back the same."""
    import numpy as np

    from solver.tables import PAGE_ROWS, _writer_options, write_parquet

    rng = np.random.default_rng(5)
    n, period = 400_000, 30_000
    keys = np.cumsum(np.resize(rng.integers(1, 9, period), n)).astype(np.uint64)
    df = pl.DataFrame({"key": keys, "ply": np.resize(rng.integers(20, 24, period), n).astype(np.uint16)})
    ours = write_parquet(df, tmp_path / "ours.parquet", {"x": 1})
    table = df.to_arrow()
    opts = {k: v for k, v in _writer_options(table.schema).items() if k != "max_rows_per_page"}
    pq.write_table(table, tmp_path / "default.parquet", **opts)
    assert PAGE_ROWS >= n
    assert pl.read_parquet(ours).equals(pl.read_parquet(tmp_path / "default.parquet"))
    assert (tmp_path / "ours.parquet").stat().st_size < 0.85 * (tmp_path / "default.parquet").stat().st_size


def test_tier_files_keep_key_deltas_and_every_reader_sums_them_back(tmp_path):
    """Tier files store their sorted keys as ``key_delta`` (byte planes, then zstd; issue 34's
    disk): written in slices (each slice's first delta from the slice before), read back key for
    key by every reader (whole, some columns, a lazy scan of several files with a filter, one row
    by key, row group by row group), the largest key included; a file that holds keys itself (an
    older tier file) reads the same; and on keys whose deltas repeat, smaller than the keys
    under DELTA_BINARY_PACKED."""
    import numpy as np

    from solver.tables import (GROUP_KEYS, KEY_DELTA, read_columns, read_parquet, row_groups_keyed, row_of_key,
                               scan_keyed, write_parquet)

    rng = np.random.default_rng(7)
    n, period = 250_000, 30_000
    keys = np.cumsum(np.resize(rng.integers(1, 300, period), n)).astype(np.uint64)
    keys[-1] = np.uint64(2**64 - 1)
    df = pl.DataFrame({"key": keys, "value": rng.integers(0, 4, n).astype(np.uint8)})
    slices = lambda: (df.slice(i, 60_000) for i in range(0, n, 60_000))
    ours = write_parquet(slices(), tmp_path / "tier-1.parquet", {"x": 1}, key_deltas=True)
    old = write_parquet(slices(), tmp_path / "tier-2.parquet", {"x": 2})
    md = pq.ParquetFile(ours).metadata
    assert pq.read_schema(ours).names == [KEY_DELTA, "value"] and md.num_row_groups == 5
    assert all("BYTE_STREAM_SPLIT" in md.row_group(g).column(0).encodings for g in range(md.num_row_groups))
    for path in (ours, old):
        assert read_parquet(path)[0].equals(df)
        assert read_columns(path, ["value", "key"]).select("key", "value").equals(df)
        assert read_columns(path, ["value"])["value"].equals(df["value"])
        parts = list(row_groups_keyed(path, ["key", "value"]))
        assert np.concatenate([k for _, k in parts]).tobytes() == keys.tobytes()
        assert parts[2][0].column_names == ["value"]
        for i in (0, 59_999, 60_000, 123_456, n - 1):
            row = row_of_key(path, int(keys[i]))
            assert row.height == 1 and int(row["key"][0]) == int(keys[i]) and int(row["value"][0]) == df["value"][i]
        assert row_of_key(path, int(keys[5]) + 1).height == 0 and "key" in row_of_key(path, 0).columns
    # a tier file rewritten from its raw frame (deltas as a column, no list of group keys; as
    # tests that damage a tier file do) reads the same, one row by key included
    raw = write_parquet(pl.read_parquet(ours), tmp_path / "tier-3.parquet", {"x": 3})
    assert GROUP_KEYS.encode() in pq.ParquetFile(ours).metadata.metadata
    assert GROUP_KEYS.encode() not in pq.ParquetFile(raw).metadata.metadata
    assert read_parquet(raw)[0].equals(df)
    assert int(row_of_key(raw, int(keys[123_456]))["value"][0]) == df["value"][123_456]
    both = scan_keyed([ours, old]).filter(pl.col("key") == int(keys[200_000])).collect()
    assert both.height == 2 and both["value"].n_unique() == 1
    key_bytes = lambda p: sum(pq.ParquetFile(p).metadata.row_group(g).column(0).total_compressed_size
                              for g in range(pq.ParquetFile(p).metadata.num_row_groups))
    assert key_bytes(ours) < 0.9 * key_bytes(old)  # (0.82 here; 0.44 on Override 4x4's largest tier)


def test_a_write_killed_midway_leaves_a_temporary_the_next_run_finds_stale(tmp_path):
    """`kill -9` while a table file is written leaves ``.<name>.<thread>.<pid>.tmp`` beside it
    (never the file itself): named by the dead process, it is removed as stale
    (:func:`solver.pipeline.workfiles.remove_stale`, what a resumed tiered solve runs), while a
    live process's temporary stays."""
    import os
    import subprocess
    import sys

    from solver.pipeline.workfiles import remove_stale

    script = (
        "import os, signal, polars as pl\n"
        "from solver.tables import write_parquet\n"
        "def frames():\n"
        "    yield pl.DataFrame({'key': [1, 2], 'value': [0, 1]})\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
        f"write_parquet(frames(), {str(tmp_path / 'tier-3.parquet')!r}, {{}})\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == -9, done.stderr
    left = list(tmp_path.iterdir())
    assert len(left) == 1 and left[0].name.startswith(".tier-3.parquet.") and left[0].name.endswith(".tmp")
    live = tmp_path / f".tier-4.parquet.1.{os.getpid()}.tmp"
    live.write_bytes(b"x")
    assert remove_stale(tmp_path) == 1
    assert list(tmp_path.iterdir()) == [live]
