"""Parquet tables of solved variants: schema, atomic write, read, provenance metadata.

Layout (default root ``tables/``)::

    tables/<game>/<variant-id>/positions.parquet   one row per position
    tables/<game>/<variant-id>/edges.parquet       one row per move (row indices into positions)

``positions.parquet`` columns (narrow types, zstd):

=============  =========  ==============================================================
column         type       meaning
=============  =========  ==============================================================
key            uint64     the position's key (canonical key when solved with symmetry)
player         uint8      side to move
kind           uint8      0 decision, 1 chance, 2 simultaneous, 3 terminal
ply            uint16     fewest moves from the start
num_moves      uint16     legal moves (chance: outcomes)
value          uint8      deterministic games: 0 lose, 1 draw, 2 tie, 3 win (side to move)
               float64    chance games: expected result in [-1, 1] (side to move)
remoteness     uint16     deterministic: plies to the end under perfect play; null for draws
margin         int16      scored games: optimal final score margin (side to move)
p_win, p_loss  float64    chance games: win / loss probability of the side to move
=============  =========  ==============================================================

``edges.parquet``: ``src`` uint32, ``dst`` uint32 (rows of positions, in the order of the legal
moves), ``prob`` float64 for chance games.

The Parquet key-value metadata ``pyramids`` holds a JSON object: game, variant (parameters as
text), variant_id, label, rules_version, toolkit_version, solver, symmetry, solution
("deterministic" or "stochastic"), counts, root_key, solve_seconds, created. A table whose
metadata does not match the requested variant or the current rules version is refused.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from solver.errors import TableError

META_KEY = b"pyramids"
DEFAULT_ROOT = Path("tables")
POSITIONS = "positions.parquet"
EDGES = "edges.parquet"


def variant_dir(game: str, variant_id: str, *, root: str | Path | None = None, symmetry: bool = True) -> Path:
    """Folder of a variant's tables: ``<root>/<game>/<variant-id>`` (``-nosym`` without symmetry)."""
    base = Path(root) if root is not None else DEFAULT_ROOT
    return base / game / (variant_id if symmetry else variant_id + "-nosym")


def write_parquet(df: pl.DataFrame, path: str | Path, meta: dict[str, Any]) -> Path:
    """Write ``df`` to ``path`` atomically (temporary file in the same folder, then rename),
    zstd-compressed, with ``meta`` as JSON under the ``pyramids`` metadata key."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    table = df.to_arrow()
    old = table.schema.metadata or {}
    table = table.replace_schema_metadata({**old, META_KEY: json.dumps(meta, sort_keys=True).encode()})
    fd, tmp = tempfile.mkstemp(prefix="." + path.name + ".", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        pq.write_table(table, tmp, compression="zstd")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def read_meta(path: str | Path) -> dict[str, Any]:
    """The ``pyramids`` metadata of a table file (a clear error if missing or corrupt)."""
    path = Path(path)
    if not path.exists():
        raise TableError(f"no table at {path}; solve the variant first with `pyramids solve`")
    try:
        schema = pq.read_schema(path)
    except (pa.ArrowInvalid, OSError) as exc:
        raise TableError(f"{path} is not a readable Parquet table ({exc}); delete it and solve again") from None
    raw = (schema.metadata or {}).get(META_KEY)
    if raw is None:
        raise TableError(f"{path} has no pyramids metadata; it was not written by this toolkit")
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        raise TableError(f"{path} has corrupt metadata; delete it and solve again") from None


def read_parquet(path: str | Path) -> tuple[pl.DataFrame, dict[str, Any]]:
    """A table and its metadata."""
    meta = read_meta(path)
    try:
        df = pl.read_parquet(path)
    except Exception as exc:  # polars raises several exception types for corrupt files
        raise TableError(f"{path} is corrupt ({type(exc).__name__}); delete it and solve again") from None
    return df, meta


def check_meta(meta: dict[str, Any], *, game: str, variant: dict[str, str], rules_version: str, path: Path) -> None:
    """Refuse a table written for another variant or an older rules version."""
    if meta.get("game") != game or meta.get("variant") != variant:
        raise TableError(
            f"{path} holds {meta.get('label', '?')}, not the requested variant; "
            "use another --out folder or solve with --force"
        )
    if meta.get("rules_version") != rules_version:
        raise TableError(
            f"{path} was solved with rules version {meta.get('rules_version')} but the current "
            f"rules are version {rules_version}; solve again with --force"
        )
