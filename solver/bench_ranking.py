"""What ranked tiers would store, measured on solved tables (issue 34).

For each case, the variant is solved tier by tier (or its table read from ``--out``), and each
tier's stored positions (one per symmetry class) are written three ways, compressed with zstd:

* ``keyed today``: the table's tier files as they are (every column);
* ``keyed 2 B``: the keys (delta-coded) and a 2-byte record (value + remoteness) in Parquet;
* ``ranked 2 B``: no keys: a 2-byte record for every rank of the tier (0 where no position is
  stored: unreachable, or not its class's representative), compressed in blocks of 2**20
  records, as GamesmanOne stores its tiers.

Printed per case: positions, the rank space (sum of the tiers' sizes) and its ratio to the
positions, the bytes a position of each layout, and how fast the game ranks keys.

    .venv/bin/python -m solver.bench_ranking --case override:3x3 --case blam:4x4
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from solver.tables import read_columns

BLOCK = 1 << 20


def record(value: np.ndarray, remoteness: np.ndarray) -> np.ndarray:
    """The 2-byte record: 1 + value code (0..3) + 4 * remoteness (capped), 0 for no position."""
    return (1 + value.astype(np.uint32) + 4 * np.minimum(remoteness.astype(np.uint32), 16_382)).astype(np.uint16)


def measure(game, folder: Path) -> dict:
    meta = json.loads((folder / "tiers.json").read_text())
    today = keyed = ranked = positions = space = 0
    rank_seconds = 0.0
    for entry in meta["tiers"]:
        tier = int(entry["tier"])
        path = folder / entry["file"] if "file" in entry else folder / "tiers" / f"tier-{tier}.parquet"
        today += path.stat().st_size
        frame = read_columns(path, ["key", "value", "remoteness"]).with_columns(
            pl.col("remoteness").fill_null(0))  # (draws have none)
        keys = frame["key"].to_numpy()
        rec = record(frame["value"].to_numpy(), frame["remoteness"].to_numpy())
        positions += len(keys)
        buf = io.BytesIO()
        pq.write_table(pa.table({"key": keys, "record": rec}), buf, compression="zstd", use_dictionary=False,
                       column_encoding={"key": "DELTA_BINARY_PACKED", "record": "PLAIN"})
        keyed += buf.tell()
        size = int(game.tier_size(tier))
        space += size
        t0 = time.perf_counter()
        ranks = game.rank(tier, keys)
        rank_seconds += time.perf_counter() - t0
        for a in range(0, size, BLOCK):  # (one block at a time: the largest tiers hold billions of ranks)
            b = min(size, a + BLOCK)
            dense = np.zeros(b - a, np.uint16)
            lo, hi = np.searchsorted(ranks, [a, b]) if np.all(ranks[1:] >= ranks[:-1]) else (None, None)
            if lo is None:
                order = np.argsort(ranks)
                ranks, rec = ranks[order], rec[order]
                lo, hi = np.searchsorted(ranks, [a, b])
            dense[ranks[lo:hi] - a] = rec[lo:hi]
            ranked += len(pa.compress(dense, codec="zstd", asbytes=True))
    return {"positions": positions, "space": space, "today": today, "keyed": keyed, "ranked": ranked,
            "rank_per_s": positions / max(rank_seconds, 1e-9)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m solver.bench_ranking", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--case", action="append", default=[], metavar="GAME:PRESET",
                        help="a case (repeatable; default override:3x3 and blam:4x4)")
    parser.add_argument("--out", type=Path, default=None,
                        help="root of solved tables to read (default: solve each case in a temporary folder)")
    args = parser.parse_args(argv)
    from solver.api import solve
    from solver.games import game_class

    print(f"{'case':<16}{'positions':>15}{'rank space':>18}{'ratio':>7}{'today B/pos':>12}"
          f"{'keyed 2B B/pos':>15}{'ranked 2B B/pos':>16}{'ranks/s':>13}", flush=True)
    for case in args.case or ["override:3x3", "blam:4x4"]:
        name, preset = case.split(":", 1)
        cls = game_class(name)
        game = cls.from_params(cls.presets[preset])
        if not game.ranked():
            print(f"skip {case}: its tiers are not ranked", file=sys.stderr)
            continue
        with tempfile.TemporaryDirectory() as tmp:
            sol = solve(game, out=args.out or tmp, tiered=True, max_positions=None)
            r = measure(game, Path(sol.path))
        n = r["positions"]
        print(f"{case:<16}{n:>15,}{r['space']:>18,}{r['space'] / n:>7.1f}{r['today'] / n:>12.2f}"
              f"{r['keyed'] / n:>15.2f}{r['ranked'] / n:>16.2f}{r['rank_per_s']:>13,.0f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
