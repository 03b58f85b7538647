"""Parquet tables of solved variants: schema, atomic write, read, provenance metadata.

Layout (default root ``tables/``)::

    tables/<game>/<variant-id>/positions.parquet   one row per position
    tables/<game>/<variant-id>/edges.parquet       one row per move (row indices into positions)

``positions.parquet`` columns (narrow types, zstd; the key delta-encoded):

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
p_win, p_loss  float64    chance games: win / loss probability of the side to move (null
                          where the stored stationary strategies do not earn the value)
value_player1  float64    secret-choice games: the expected result from Player 1's view
strategy_1/_2  list[f64]  secret-choice games, at simultaneous rows: each player's optimal
                          mixed strategy over its actions, in the game's order; null elsewhere
value_lo/_hi   float64    secret-choice games with proven bounds: the value of the game lies
                          in [value_lo, value_hi] (side to move; :mod:`solver.engines.bounds`)
proof_mix_1/_2 list[f64]  with bounds, at simultaneous rows: Player 1's mix that proves the
                          lower end (Player 1's view), Player 2's that proves the upper
proof_move     int32      with bounds, at decision rows: the index (in the legal moves) of the
                          move the mover's proving strategy plays; -1 elsewhere
=============  =========  ==============================================================

``edges.parquet``: ``src`` uint32, ``dst`` uint32 (rows of positions, in the order of the legal
moves), ``prob`` float64 for chance games.

A variant solved tier by tier (:mod:`solver.pipeline.tiered`) has instead ``tiers.json`` (the same
metadata, plus ``layout: "tiered"`` and the list of tiers with their size, children and time)
and ``tiers/tier-<id>.parquet``: one file per tier with the columns of ``positions.parquet``,
rows sorted by key, except that the key is stored as ``key_delta`` uint64, each row's key minus
the row before's (the first row's minus 0; :data:`KEY_DELTA`, summed back by every reader here:
:func:`read_parquet`, :func:`read_columns`, :func:`scan_keyed`, :func:`row_groups_keyed`; the
file's metadata lists each row group's first key, :data:`GROUP_KEYS`, so that
:func:`row_of_key` reads one row group to find a position); no
edges file (children are regenerated from the rules). Tier files written before 2026-12-06 hold
``key`` itself and read the same.

A variant's files appear together or not at all: :func:`write_variant` writes them into a
temporary sibling folder (``.<variant-id>.tmp-<pid>-...``) and renames that folder into place,
so a solve killed at any moment leaves either the old complete folder or none. Every file of one
solve carries the same ``solve_id`` and the metadata lists the folder's ``files``; a folder with a
missing file, or with a file of another solve, is refused. Temporary folders of dead processes
are removed by the next write.

The Parquet key-value metadata ``pyramids`` holds a JSON object: game, variant (parameters as
text), variant_id, label, rules_version, toolkit_version, solver, symmetry, solution
("deterministic" or "stochastic"), counts, root_key, solve_seconds, created. A table whose
metadata does not match the requested variant or the current rules version is refused.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
import uuid
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from solver.core.values import NO_REMOTENESS
from solver.errors import PyramidsError, TableError
from solver.faults import fault_point

META_KEY = b"pyramids"
DEFAULT_ROOT = Path("tables")
POSITIONS = "positions.parquet"
EDGES = "edges.parquet"


def variant_dir(game: str, variant_id: str, *, root: str | Path | None = None, symmetry: bool = True) -> Path:
    """Folder of a variant's tables: ``<root>/<game>/<variant-id>`` (``-nosym`` without symmetry)."""
    base = Path(root) if root is not None else DEFAULT_ROOT
    return base / game / (variant_id if symmetry else variant_id + "-nosym")


def _first_non_folder(path: Path) -> Path | None:
    """The first existing ancestor of ``path`` (or ``path`` itself) that is not a folder."""
    for parent in [path, *path.parents]:
        if parent.exists():
            return None if parent.is_dir() else parent
    return None


def _why_not_writable(folder: Path) -> str | None:
    """Create ``folder`` if needed and make (then remove) a file in it: ``None`` when that works,
    else why not, in words."""
    import errno

    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".write-test-", dir=folder)
        os.close(fd)
        os.unlink(probe)
        return None
    except OSError as exc:
        words = {
            errno.EACCES: "permission denied", errno.EPERM: "permission denied",
            errno.EROFS: "a read-only file system", errno.ENOSPC: "no space left on the device",
            errno.EDQUOT: "the disk quota is used up",
            # /proc, /sys: the folder exists but refuses new files with "No such file or directory"
            errno.ENOENT: "its folder takes no new files, as in /proc or /sys",
        }
        return words.get(exc.errno, exc.strerror or str(exc))


def check_writable(root: str | Path, what: str = "--out") -> Path:
    """Make sure tables (or reports) can be written under ``root`` before any work starts.

    Creates the folder if needed; raises :class:`TableError` with the fix when ``root`` is empty,
    names a file, or cannot be written.
    """
    if str(root) == "":
        raise TableError(f"{what} is empty; give a folder, e.g. {what} tables")
    root = Path(root)
    blocker = _first_non_folder(root)
    if blocker is not None:
        raise TableError(f"{what} {root}: {blocker} is a file, not a folder; pick another {what}")
    why = _why_not_writable(root)
    if why is not None:
        raise TableError(f"cannot write to {what} {root} ({why}); pick a writable folder")
    return root


def check_file_path(path: str | Path, what: str, example: str) -> Path:
    """Make sure a single output file (``--svg FILE``) can be written at ``path`` before any work:
    a non-empty name that is not a folder, under folders (created if needed) that take new files.
    Raises :class:`PyramidsError` with the fix."""
    if str(path).strip() in ("", ".", ".."):
        raise PyramidsError(f"{what} needs a file name, got {str(path)!r}; write e.g. {what} {example}")
    path = Path(path)
    if path.is_dir():
        raise PyramidsError(f"{what} {path} is a folder; give a file name, e.g. {what} {path / example}")
    blocker = _first_non_folder(path.parent)
    if blocker is not None:
        raise PyramidsError(f"{what} {path}: {blocker} is a file, not a folder; pick another path")
    why = _why_not_writable(path.parent)
    if why is not None:
        raise PyramidsError(f"cannot write {what} {path} ({why}); pick a writable path")
    return path


def world_readable(path: str | Path) -> None:
    """Give a finished file the permissions of an ordinary new file (mkstemp makes them 0600)."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, 0o666 & ~umask)


def write_variant(folder: str | Path, frames: Mapping[str, pl.DataFrame], meta: dict[str, Any]) -> Path:
    """Write all the tables of one solved variant so that they appear together or not at all.

    ``frames`` maps file names (``positions.parquet``, ...) to tables. The files are written into
    a temporary sibling folder, then that folder replaces ``folder`` by renames; ``meta`` gains
    ``solve_id`` (shared by the files) and ``files``. On any error (disk full, interrupt) the
    temporary folder is removed and an existing older ``folder`` is left as it was.
    """
    folder = Path(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    clean_stale(folder)
    meta["solve_id"] = uuid.uuid4().hex
    meta["files"] = sorted(frames)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.tmp-{os.getpid()}-", dir=folder.parent))
    try:
        for name, df in frames.items():
            fault_point(f"write:{name}")
            _write_file(df, tmp / name, meta)
        os.chmod(tmp, 0o777 & ~_umask())
        fault_point("rename")
        if folder.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{folder.name}.old-{os.getpid()}-", dir=folder.parent))
            os.rmdir(old)
            os.rename(folder, old)
            os.rename(tmp, folder)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return folder


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def clean_stale(folder: str | Path) -> list[Path]:
    """Remove temporary folders and files that killed writes of ``folder`` left behind (those of
    processes that no longer run). Returns what was removed."""
    folder = Path(folder)
    removed: list[Path] = []
    if not folder.parent.is_dir():
        return removed
    for entry in folder.parent.iterdir():
        name = entry.name
        for tag in (".tmp-", ".old-"):
            prefix = f".{folder.name}{tag}"
            if name.startswith(prefix):
                pid_text = name[len(prefix):].split("-", 1)[0]
                if pid_text.isdigit() and not _pid_alive(int(pid_text)):
                    shutil.rmtree(entry, ignore_errors=True) if entry.is_dir() else entry.unlink(missing_ok=True)
                    removed.append(entry)
    if folder.is_dir():  # single-file temporaries of older versions of write_parquet
        for entry in folder.glob(".*.parquet.*.tmp"):
            entry.unlink(missing_ok=True)
            removed.append(entry)
    return removed


#: integer columns stored as deltas (Parquet's DELTA_BINARY_PACKED) instead of plain values or a
#: dictionary: the position keys, sorted in every table, differ little from row to row. Blam!
#: 4x4-2's no-capture tier: key 1.81 -> 1.21 bytes a row, the file 3.44 -> 2.84 (zstd after both)
DELTA_COLUMNS = ("key",)


#: zstd's level: Override 4x4's 64 tier files (68,675,533 positions) take 0.618 bytes a position at
#: Arrow's default (1), 0.602 at 3, 0.567 at 6 and 0.563 at 9, written in 3.4, 3.5, 4.9 and 6.8 s
#: (2026-12-06, one run each): 6 saves 8% of the disk for 1.5 s over a 230 s solve
ZSTD_LEVEL = 6


#: rows a data page may hold (zstd compresses each page on its own; pages still close at Arrow's
#: 1 MB of encoded data): Arrow's default of 20,000 rows restarts the compressor every 20,000 rows
#: even where they encode to a few kB. Measured 2026-12-06 (zstd 6, bytes a position, files
#: rewritten both ways and read back equal): Override 4x4's 64 tier files 0.567 -> 0.402 (its
#: largest tier: key 0.307 -> 0.238, ply 0.151 -> 0.100, num_moves 0.049 -> 0.031, player 0.024
#: -> 0.015); Carrots 3x3's positions 5.08 -> 4.65. (A larger page size as well made Carrots'
#: float columns 15% larger and Override's no smaller.)
PAGE_ROWS = 1 << 20


#: the column of a tier file that holds its sorted keys as differences from the row before,
#: stored with their bytes split into planes (Parquet's BYTE_STREAM_SPLIT) before zstd: the high
#: bytes of small differences are runs of zeros. Override 4x4's largest tier (48.6M keys,
#: 2026-12-06): 0.105 bytes a key against 0.238 for the keys under DELTA_BINARY_PACKED.
KEY_DELTA = "key_delta"


def _writer_options(schema: pa.Schema) -> dict[str, Any]:
    """zstd (:data:`ZSTD_LEVEL`) with page checksums, pages of up to :data:`PAGE_ROWS` rows;
    :data:`DELTA_COLUMNS` delta-encoded, :data:`KEY_DELTA` split into byte planes (no
    dictionary for either)."""
    delta = {c: "DELTA_BINARY_PACKED" for c in DELTA_COLUMNS
             if c in schema.names and pa.types.is_integer(schema.field(c).type)}
    if KEY_DELTA in schema.names:
        delta[KEY_DELTA] = "BYTE_STREAM_SPLIT"
    opts: dict[str, Any] = {"compression": "zstd", "compression_level": ZSTD_LEVEL, "write_page_checksum": True,
                            "max_rows_per_page": PAGE_ROWS}
    if delta:
        opts["use_dictionary"] = [c for c in schema.names if c not in delta]
        opts["column_encoding"] = delta
    return opts


def _write_file(df: pl.DataFrame, path: Path, meta: dict[str, Any]) -> None:
    table = df.to_arrow()
    old = table.schema.metadata or {}
    table = table.replace_schema_metadata({**old, META_KEY: json.dumps(meta, sort_keys=True).encode()})
    pq.write_table(table, path, **_writer_options(table.schema))
    world_readable(path)


def _keys_as_deltas(table: pa.Table, last: int) -> tuple[pa.Table, int]:
    """``table`` with its ``key`` column replaced by :data:`KEY_DELTA` (the first row's from
    ``last``, the key of the row before), and its last key."""
    keys = np.asarray(table.column("key").to_numpy(), dtype=np.uint64)
    if not len(keys):
        return table.rename_columns([KEY_DELTA if c == "key" else c for c in table.column_names]), last
    deltas = np.diff(keys, prepend=np.array([last], dtype=np.uint64))  # (uint64: wraps, sums back exactly)
    return table.set_column(table.column_names.index("key"), KEY_DELTA, pa.array(deltas)), int(keys[-1])


def keys_from_deltas(deltas: np.ndarray, last: int = 0) -> np.ndarray:
    """The keys of :data:`KEY_DELTA` values (``last``: the key of the row before the first)."""
    keys = np.cumsum(np.asarray(deltas, dtype=np.uint64), dtype=np.uint64)
    if last:
        keys += np.uint64(last)
    return keys


def with_keys(df: "pl.DataFrame | pl.LazyFrame", names: list[str] | None = None) -> "pl.DataFrame | pl.LazyFrame":
    """``df`` (a frame or lazy scan from the first row of a file) with ``key`` summed back from
    :data:`KEY_DELTA` in its place; unchanged when it has no deltas (``names``: its columns,
    when known without asking a lazy frame)."""
    if KEY_DELTA not in (df.columns if names is None else names):
        return df
    return df.with_columns(pl.col(KEY_DELTA).cum_sum()).rename({KEY_DELTA: "key"})


def read_columns(path: str | Path, columns: list[str] | None = None) -> pl.DataFrame:
    """``columns`` (all when ``None``) of a table file, ``key`` included whether the file holds
    keys or :data:`KEY_DELTA` (tier files)."""
    if columns is not None and "key" in columns and KEY_DELTA in pq.read_schema(path).names:
        columns = [KEY_DELTA if c == "key" else c for c in columns]
    return with_keys(pl.read_parquet(path, columns=columns))


def scan_keyed(path: str | Path | list[str]) -> pl.LazyFrame:
    """A lazy scan of table files with their ``key`` column (summed back, file by file, where
    they hold :data:`KEY_DELTA`)."""
    paths = [str(path)] if isinstance(path, (str, Path)) else [str(p) for p in path]
    scans = []
    for one in paths:
        scans.append(with_keys(pl.scan_parquet(one), pq.read_schema(one).names))
    return scans[0] if len(scans) == 1 else pl.concat(scans, how="vertical")


#: file metadata of a table with :data:`KEY_DELTA`: the first key of each row group (JSON list)
GROUP_KEYS = "pyramids_group_first_keys"


def row_of_key(path: str | Path, key: int) -> pl.DataFrame:
    """The row of a table file whose key is ``key`` (no row when there is none; keys are
    unique): a filter pushed into the scan where the file holds keys; where it holds
    :data:`KEY_DELTA` (sorted keys), the row group is found by the first keys the file lists
    (:data:`GROUP_KEYS`), its deltas summed from its first key, and the row read from it alone."""
    pf = pq.ParquetFile(path)
    if KEY_DELTA not in pf.schema_arrow.names:
        return pl.scan_parquet(path).filter(pl.col("key") == key).collect()
    firsts = json.loads((pf.metadata.metadata or {}).get(GROUP_KEYS.encode(), b"null"))
    key = int(key)
    if firsts is None or len(firsts) != pf.num_row_groups:  # (not written by write_parquet: read it all)
        groups, bases = range(pf.num_row_groups), None
    else:
        g = int(np.searchsorted(np.array(firsts, dtype=np.uint64), np.uint64(key), side="right")) - 1
        groups, bases = ([g] if g >= 0 else []), firsts
    last = 0
    for g in groups:
        part = pf.read_row_group(g)
        deltas = part.column(KEY_DELTA).to_numpy()
        if bases is not None and len(deltas):
            last = (bases[g] - int(deltas[0])) % (1 << 64)  # the key before the group's first
        keys = keys_from_deltas(deltas, last)
        if len(keys):
            last = int(keys[-1])
        i = int(np.searchsorted(keys, np.uint64(key)))
        if i < len(keys) and int(keys[i]) == key:
            row = pl.from_arrow(part.slice(i, 1))
            return row.with_columns(pl.Series(KEY_DELTA, [key], dtype=pl.UInt64)).rename({KEY_DELTA: "key"})
    empty = pl.from_arrow(pf.schema_arrow.empty_table())
    return empty.with_columns(pl.col(KEY_DELTA).cast(pl.UInt64)).rename({KEY_DELTA: "key"})


#: row groups of at least this many rows are decoded by Arrow's threads (:func:`row_groups_keyed`)
THREADED_ROWS = 1 << 16


def row_groups_keyed(path: str | Path, columns: list[str]) -> Iterator[tuple[pa.Table, np.ndarray]]:
    """The row groups of a table file one at a time: each group's ``columns`` (other than
    ``key``) and its keys, summed back across groups where the file holds :data:`KEY_DELTA`."""
    pf = pq.ParquetFile(path, pre_buffer=False)
    deltas = KEY_DELTA in pf.schema_arrow.names
    kcol = KEY_DELTA if deltas else "key"
    others = [c for c in columns if c != "key"]
    last = 0
    for g in range(pf.num_row_groups):
        # Arrow's threads only for large groups: a small tier's file (Blam! 4x4's median tier
        # has 64 rows) reads in about 0.4 ms without them, 0.6 ms with
        threads = pf.metadata.row_group(g).num_rows >= THREADED_ROWS
        part = pf.read_row_group(g, columns=[kcol, *others], use_threads=threads)
        keys = part.column(kcol).to_numpy()
        if deltas:
            keys = keys_from_deltas(keys, last)
            if len(keys):
                last = int(keys[-1])
        yield part.drop_columns([kcol]), keys


def temp_path(path: Path) -> Path:
    """Where :func:`write_parquet` writes ``path`` before renaming it: named by thread and process
    (``.<name>.<thread>.<pid>.tmp``), so that a killed process's is found stale by its pid
    (:func:`solver.pipeline.workfiles.remove_stale`). Not mkstemp: its file would be created,
    closed and opened again by the writer, and a file create costs 0.25-1 ms on this machine's
    disk, a fifth of a small tier's write."""
    return path.with_name(f".{path.name}.{threading.get_ident()}.{os.getpid()}.tmp")


def write_parquet(df: "pl.DataFrame | Iterable[pl.DataFrame]", path: str | Path, meta: dict[str, Any], *,
                  key_deltas: bool = False) -> Path:
    """Write ``df`` to ``path`` atomically (temporary file in the same folder, then rename),
    zstd-compressed with page checksums, with ``meta`` as JSON under the ``pyramids`` metadata key.

    ``df`` may also be an iterable of frames with the same schema (slices of one large table,
    built one at a time): each becomes a row group, so a table is never held whole twice.
    ``key_deltas``: store the (sorted) ``key`` column as :data:`KEY_DELTA` (tier files)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    frames = iter([df]) if isinstance(df, pl.DataFrame) else iter(df)
    tmp = str(temp_path(path))
    writer = None
    last = 0
    firsts: list[int] | None = None  # with key deltas: each row group's first key
    try:
        for frame in frames:
            table = frame if isinstance(frame, pa.Table) else frame.to_arrow()
            if key_deltas and "key" in table.column_names:
                firsts = [] if firsts is None else firsts
                if table.num_rows:
                    firsts.append(int(table.column("key")[0].as_py()))
                table, last = _keys_as_deltas(table, last)
            if writer is None:
                old = table.schema.metadata or {}
                schema = table.schema.with_metadata({**old, META_KEY: json.dumps(meta, sort_keys=True).encode()})
                writer = pq.ParquetWriter(tmp, schema, **_writer_options(schema))
            if firsts is None:
                writer.write_table(table)
            elif table.num_rows:  # a frame one row group, found by its first key (:func:`row_of_key`)
                writer.write_table(table, row_group_size=table.num_rows)
            del table, frame
        if writer is None:
            raise ValueError("write_parquet needs at least one frame")
        if firsts is not None:
            writer.add_key_value_metadata({GROUP_KEYS: json.dumps(firsts)})
        writer.close()
        writer = None
        world_readable(tmp)
        os.replace(tmp, path)
    except BaseException:
        if writer is not None:
            writer.close()
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
        raise TableError(f"{path} is not a readable Parquet table ({exc})", fix="delete it and solve again") from None
    raw = (schema.metadata or {}).get(META_KEY)
    if raw is None:
        raise TableError(f"{path} has no pyramids metadata; it was not written by this toolkit")
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        raise TableError(f"{path} has corrupt metadata", fix="delete it and solve again") from None


def read_parquet(path: str | Path) -> tuple[pl.DataFrame, dict[str, Any]]:
    """A table and its metadata."""
    meta = read_meta(path)
    try:  # pages carry CRC32 checksums: a flipped byte is an error, never a wrong value
        df = pl.from_arrow(pq.read_table(path, page_checksum_verification=True))
        if not isinstance(df, pl.DataFrame):
            raise ValueError("not a table")
        df = with_keys(df)
    except Exception as exc:  # pyarrow/polars raise several exception types for corrupt files
        raise TableError(f"{path} is corrupt ({type(exc).__name__})", fix="delete it and solve again") from None
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
            f"rules are version {rules_version}", fix="solve again with --force"
        )


def read_variant(folder: str | Path, *, game: str, variant: dict[str, str], rules_version: str,
                 ) -> tuple[pl.DataFrame, dict[str, Any], dict[str, pl.DataFrame]]:
    """The positions table, its metadata and its companion tables (edges, setups) of a variant
    folder, each checked: the same solve (``solve_id``), every listed file present and readable,
    edges pointing at existing rows. Raises :class:`TableError` naming the bad file and the fix."""
    folder = Path(folder)
    path = folder / POSITIONS
    meta = read_meta(path)
    check_meta(meta, game=game, variant=variant, rules_version=rules_version, path=path)
    positions, _ = read_parquet(path)
    n = positions.height
    counts = meta.get("counts") or {}
    if counts.get("positions", n) != n:
        raise TableError(f"{path} holds {n:,} rows but its metadata says {counts.get('positions'):,}",
                         fix="solve again with --force")
    companions: dict[str, pl.DataFrame] = {}
    listed = meta.get("files")
    names = listed if listed is not None else [f.name for f in sorted(folder.glob("*.parquet"))]
    for name in names:
        if name == POSITIONS:
            continue
        fpath = folder / name
        if not fpath.exists():
            raise TableError(f"{folder} is incomplete: {name} is missing", fix="solve again with --force")
        fmeta = read_meta(fpath)
        if fmeta.get("solve_id") != meta.get("solve_id") or fmeta.get("variant") != meta.get("variant"):
            raise TableError(f"{fpath} belongs to another solve than {POSITIONS}", fix="solve again with --force")
        df, _ = read_parquet(fpath)
        if name == EDGES:
            _check_edges(df, n, fpath, counts.get("edges"))
        companions[name] = df
    return positions, meta, companions


def _check_edges(edges: pl.DataFrame, n: int, path: Path, expected: int | None) -> None:
    for col in ("src", "dst"):
        if col not in edges.columns:
            raise TableError(f"{path} has no {col!r} column", fix="solve again with --force")
    if expected is not None and edges.height != expected:
        raise TableError(f"{path} holds {edges.height:,} moves but the positions table says "
                         f"{expected:,}", fix="solve again with --force")
    if edges.height:
        hi = max(int(edges["src"].max()), int(edges["dst"].max()))
        if hi >= n:
            raise TableError(f"{path} points at row {hi:,} of a {n:,}-row positions table",
                             fix="solve again with --force")


def mix_column(n: int, mixes: dict[int, np.ndarray]) -> pa.ListArray:
    """A table column of mixed strategies: the mix at each simultaneous row, null elsewhere.

    An Arrow list array built from flat arrays (offsets, the mixes' probabilities, a null mask):
    about 5 bytes a row beside the mixes, where a Python list of ``n`` entries and the frame
    polars built from it took tens (Petal Battle 6-2's table assembly was the solve's peak)."""
    rows = np.fromiter(mixes.keys(), dtype=np.int64, count=len(mixes))
    order = np.argsort(rows)
    rows = rows[order]
    parts = [np.asarray(m, dtype=np.float64) for m in mixes.values()]
    lengths = np.zeros(n, dtype=np.int64)
    lengths[rows] = np.array([len(parts[i]) for i in order.tolist()], dtype=np.int64)
    offsets = np.zeros(n + 1, dtype=np.int32 if lengths.sum() < 2**31 else np.int64)
    np.cumsum(lengths, out=offsets[1:])
    values = np.concatenate([parts[i] for i in order.tolist()]) if len(parts) else np.empty(0)
    null = np.ones(n, dtype=bool)
    null[rows] = False
    make = pa.ListArray if offsets.dtype == np.int32 else pa.LargeListArray
    return make.from_arrays(pa.array(offsets), pa.array(values), mask=pa.array(null))


#: rows per row group of a table written in slices (:func:`positions_frames`)
ROW_GROUP = 1 << 20


def positions_frames(keys: np.ndarray, player: np.ndarray, kind: np.ndarray, ply: np.ndarray,
                     num_moves: np.ndarray, cols: dict[str, Any], rows: int = ROW_GROUP) -> Iterator[pl.DataFrame]:
    """:func:`positions_frame` in slices of ``rows`` rows, built one at a time (for
    :func:`write_parquet`: a large table is then never copied whole)."""
    for lo in range(0, max(len(keys), 1), rows):
        hi = lo + rows
        yield positions_frame(keys[lo:hi], player[lo:hi], kind[lo:hi], ply[lo:hi], num_moves[lo:hi],
                              {name: arr[lo:hi] for name, arr in cols.items()})


def positions_tables(keys: np.ndarray, player: np.ndarray, kind: np.ndarray, ply: np.ndarray,
                     num_moves: np.ndarray, cols: dict[str, Any], rows: int = ROW_GROUP) -> Iterator[pa.Table]:
    """:func:`positions_frames` as Arrow tables built straight from the arrays (float and
    integer columns only: the solved columns of a chance game's tier), the same schema and
    values. Memory the Arrow tables free goes back to Arrow's allocator, which a caller can make
    the system's (:func:`solver.pipeline.memory.arrow_on_malloc`); a polars frame's would stay
    in polars' own allocator for the rest of the process."""
    for lo in range(0, max(len(keys), 1), rows):
        hi = lo + rows
        arrays = [pa.array(np.asarray(keys[lo:hi], dtype=np.uint64)),
                  pa.array(np.asarray(player[lo:hi]).astype(np.uint8)),
                  pa.array(np.asarray(kind[lo:hi]).astype(np.uint8)),
                  pa.array(np.asarray(ply[lo:hi], dtype=np.uint16)),
                  pa.array(np.minimum(np.asarray(num_moves[lo:hi]), 65535).astype(np.uint16))]
        names = ["key", "player", "kind", "ply", "num_moves"]
        for name, arr in cols.items():
            part = np.asarray(arr[lo:hi], dtype=np.float64)
            nan = np.isnan(part) if name in ("p_win", "p_loss") else None  # undefined: null, as there
            arrays.append(pa.array(part, mask=nan) if nan is not None and nan.any() else pa.array(part))
            names.append(name)
        yield pa.Table.from_arrays(arrays, names=names)


def positions_frame(keys: np.ndarray, player: np.ndarray, kind: np.ndarray, ply: np.ndarray,
                    num_moves: np.ndarray, cols: dict[str, Any]) -> pl.DataFrame:
    """The positions table (see the module docstring) from per-row arrays and solved columns
    (value, remoteness, margin, ...; remoteness ``NO_REMOTENESS`` and NaN probabilities become
    null). Shared by the whole-graph and the tiered solvers."""
    data: dict[str, Any] = {
        "key": pl.Series(keys, dtype=pl.UInt64),
        "player": pl.Series(np.asarray(player).astype(np.uint8), dtype=pl.UInt8),
        "kind": pl.Series(np.asarray(kind).astype(np.uint8), dtype=pl.UInt8),
        "ply": pl.Series(np.asarray(ply, dtype=np.uint16), dtype=pl.UInt16),
        "num_moves": pl.Series(np.minimum(np.asarray(num_moves), 65535).astype(np.uint16), dtype=pl.UInt16),
    }
    for name, arr in cols.items():
        if name.startswith(("strategy_", "proof_mix_")):  # mixes at simultaneous rows, null elsewhere
            data[name] = (pl.Series(name, arr).cast(pl.List(pl.Float64)) if isinstance(arr, pa.Array)
                          else pl.Series(name, arr, dtype=pl.List(pl.Float64)))  # (mix_column, or a list)
            continue
        if name == "proof_move":
            data[name] = pl.Series(name, np.asarray(arr, dtype=np.int32), dtype=pl.Int32)
            continue
        if name in ("p_win", "p_loss") and np.isnan(arr).any():  # undefined: null
            data[name] = pl.Series(name, arr.astype(np.float64), dtype=pl.Float64).fill_nan(None)
            continue
        if name == "remoteness" or name.endswith("_remoteness"):
            s = pl.Series(name, arr.astype(np.uint16), dtype=pl.UInt16)
            data[name] = s.set(pl.Series(arr == NO_REMOTENESS), None) if (arr == NO_REMOTENESS).any() else s
        elif (name == "value" or name.endswith("_value")) and arr.dtype != np.float64:
            data[name] = pl.Series(arr.astype(np.uint8), dtype=pl.UInt8)
        elif (name == "margin" or name.endswith("_margin")) and name != "expected_margin":  # (a mean)
            data[name] = pl.Series(arr.astype(np.int16), dtype=pl.Int16)
        else:
            data[name] = pl.Series(arr.astype(np.float64), dtype=pl.Float64)
    return pl.DataFrame(data)
