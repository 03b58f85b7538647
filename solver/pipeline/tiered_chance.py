"""Tiered value iteration: games with dice (chance nodes during play), solved tier by tier.

The tiered solver (:mod:`solver.pipeline.tiered`) discovers the tiers of such a game as it does
for any other (a chance node's outcomes are its children); this module solves one tier:

1. the tier's positions are expanded again from the rules (no edges are stored between phases),
   a chunk of positions at a time; each move becomes a row: of this tier (``int32``), or of the
   tier's **outside boundary**: the distinct positions of other tiers that its moves reach;
2. the boundary's win and loss probabilities are read from the finished tier files, one row
   group at a time;
3. the tier's arrays and its boundary go to the chance engine
   :func:`solver.engines.components.solve_chance`, which lists the tier's strongly connected
   components children first and solves them in chunks of whole components through the
   whole-graph engine (:func:`solver.engines.value_iteration.value_iteration`: exact backward
   induction on acyclic layers, sweeps and strategy iteration on cyclic ones, the certificate);
4. the tier file gets the columns of the whole-graph table of a chance game: ``value`` (the
   expected result from the side to move), ``p_win`` and ``p_loss``.

Because a tier's cycles never leave it (tiers never fall along a move), and a chunk is whole
components, the certificate of each chunk is the certificate of the whole game restricted to
it, and the values are those of the whole-graph solve (tested on every position of the small
presets and of random games with cycles, ``tests/test_tiered_chance.py``,
``tests/test_components.py``).

Memory: the tier's arrays (key, ply, kind, side to move, result, offsets: 20 bytes a position;
a 4-byte row and a 1-byte probability code a move; win and loss probabilities and the component
order: 24 bytes a position) and one chunk's engine arrays (about 450 bytes a position of the
chunk, a 32nd of the tier at most): about 100-130 bytes a position of the largest tier
(:data:`BYTES_PER_TIER_POSITION`), where it was 450-1,000 when the tier went through the
whole-graph engine in one piece.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import polars as pl

import solver
from solver.core.arrays import FloatCoder, SortedLookup, unique
from solver.core.game import NodeKind
from solver.engines.components import Outside, solve_chance
from solver.errors import TableError, TooBigError
from solver.faults import fault_point
from solver.pipeline import memory, tierwork
from solver.tables import positions_tables, row_groups_keyed, write_parquet

#: peak bytes per position of a chance tier while it is solved (its arrays, one chunk's engine
#: arrays), with a margin of about 10%: measured on Carrots 3x3 with ``python -m solver.bench
#: --tiered --case carrots:3x3 --repeat 3`` (2026-12-03, median of 3: peak 398 MB; 44 bytes per
#: position of the variant above the RSS after the kernels are loaded, i.e. 104 per position of
#: its largest tier, 1,653,696 positions with 4.3 moves each; the fixed ~90 MB of compiled
#: kernels is in the estimate's base). It was 487 while a tier went through the whole-graph
#: engine in one piece (its per-move arrays: 443 measured)
BYTES_PER_TIER_POSITION = 115

#: positions solved at once inside a tier (components are never cut): a 128th of the tier, at
#: least CHUNK_MIN and at most CHUNK_MAX (the whole-graph engine holds about 450 bytes per
#: position of a chunk); tests make them small to cross chunk borders
CHUNK_MIN = 1 << 14
CHUNK_MAX = 1 << 21
CHUNK_SHARE = 128

#: positions expanded at once (a game's expansion holds about 2.5 KB per position it expands
#: while it works: 20 MB at this size for Carrots) and rows of a tier file's row groups (a row
#: group is built, written and read whole: 10 MB)
EXPAND_CHUNK = 1 << 15

#: the columns of a finished chance tier that the tiers reaching it read
CHILD_COLUMNS = ["key", "player", "p_win", "p_loss"]


class _Difference:
    """``a - b``, computed for the slice asked for (``d[lo:hi]``): a column of a tier file that
    is written a row group at a time need not be held whole."""

    def __init__(self, a: np.ndarray, b: np.ndarray) -> None:
        self.a, self.b = a, b

    def __len__(self) -> int:
        return len(self.a)

    def __getitem__(self, idx: Any) -> np.ndarray:
        return self.a[idx] - self.b[idx]


def _read_boundary(run: Any, t: int, u: int, need: np.ndarray, player: np.ndarray, win: np.ndarray,
                   loss: np.ndarray, at: np.ndarray) -> None:
    """Fill ``player[at]``, ``win[at]``, ``loss[at]`` with the finished values of the positions
    ``need`` (sorted, unique keys) of tier ``u``, read from its file one row group at a time (a
    row group's columns are the most held)."""
    path = run.tiers_dir / tierwork.tier_file(u)
    if not path.exists():
        raise TableError(f"tier {t} reaches tier {u}, whose file is missing", fix="solve again with --force")
    found = 0
    for part, keys in row_groups_keyed(path, CHILD_COLUMNS):
        idx = np.searchsorted(need, keys)
        hit = idx < len(need)
        hit[hit] = need[idx[hit]] == keys[hit]
        rows, idx = np.flatnonzero(hit), at[idx[hit]]
        player[idx] = part.column("player").to_numpy()[rows]
        win[idx] = part.column("p_win").to_numpy()[rows]
        loss[idx] = part.column("p_loss").to_numpy()[rows]
        found += len(rows)
        del part, keys, hit, rows, idx
    if found != len(need):
        raise TableError(f"tier {u} lacks a position that a move of tier {t} reaches: the discovery "
                         "files are damaged", fix="solve again with --force")


def _outside(run: Any, t: int, info: Any, keys: np.ndarray) -> Outside:
    """The boundary of tier ``t``: the positions of other tiers that its moves reach (``keys``,
    sorted and unique), with their finished side to move, win and loss probabilities, read from
    their tiers' files."""
    ct = tierwork.tiers_of(run.game, keys, run.slices)
    player = np.empty(len(keys), np.int8)
    win = np.empty(len(keys), np.float64)
    loss = np.empty(len(keys), np.float64)
    for u in unique(ct).tolist():
        if int(u) not in info.children:
            raise TableError(f"tier {t} reaches tier {u}, which its discovery did not record",
                             fix="solve again with --force")
        at = np.flatnonzero(ct == u)
        _read_boundary(run, t, int(u), keys[at], player, win, loss, at)
    return Outside(to_move=player, p_win=win, p_loss=loss, keys=keys)


def _expand(run: Any, t: int, keys: np.ndarray) -> tuple[Any, ...]:
    """Expand tier ``t``'s positions a chunk at a time. Each chunk's children become rows at
    once: rows of this tier (>= 0), and for a child in another tier ``-1 -`` its index among the
    chunk's distinct children in other tiers, whose keys alone are kept (no array of every
    child's key is held). Returns the tier's node kind, side to move, result, move offsets
    (int32 while the moves fit), the chunks' rows and distinct outside keys, and the moves'
    probabilities as one-byte codes into a table of the few distinct ones (the same float64
    values when looked up: one byte per move instead of eight)."""
    n = len(keys)
    kind, to_move, result = np.empty(n, np.int8), np.empty(n, np.int8), np.zeros(n, np.int8)
    deg = np.empty(n, np.int32)
    index = SortedLookup(keys)
    parts: list[np.ndarray] = []
    out_keys: list[np.ndarray] = []
    prob_coder = FloatCoder()
    for s, exp in tierwork.expansions(run, keys, chunk=EXPAND_CHUNK):
        m = len(exp.kind)
        kind[s : s + m] = exp.kind
        to_move[s : s + m] = exp.to_move
        result[s : s + m] = exp.result
        deg[s : s + m] = np.diff(exp.offsets)
        kids = np.asarray(exp.children, dtype=np.uint64)
        _, inside, rows = tierwork.split_inside(run.game, t, exp, keys, index, run.slices)
        part = np.empty(len(kids), np.int32 if n < 2**31 else np.int64)
        part[inside] = rows
        distinct, where = np.unique(kids[~inside], return_inverse=True)
        part[~inside] = -1 - where
        parts.append(part)
        out_keys.append(distinct)
        prob_coder.add(np.ones(len(kids)) if exp.probs is None
                       else np.asarray(exp.probs, dtype=np.float64))
        del exp, kids, inside, rows, distinct, where
    offsets = np.zeros(n + 1, np.int32 if int(deg.sum(dtype=np.int64)) < 2**31 else np.int64)
    np.cumsum(deg, dtype=offsets.dtype, out=offsets[1:])
    return kind, to_move, result, offsets, parts, out_keys, prob_coder.finish()


def _join(parts: list[np.ndarray], out_keys: list[np.ndarray], boundary: np.ndarray, n: int,
          moves: int) -> tuple[np.ndarray, int]:
    """The chunks' rows in one array, a child in another tier as ``n +`` its row of the
    ``boundary`` (sorted keys); the chunks' parts are let go (and given back to the system) as
    they are copied. Also returns how many moves stay in the tier."""
    child = np.empty(moves, np.int32 if n + len(boundary) < 2**31 else np.int64)
    inside_moves, e = 0, 0
    for i in range(len(parts)):
        part, distinct = parts[i], out_keys[i]
        parts[i] = out_keys[i] = None  # type: ignore[call-overload]
        leaves = part < 0
        inside_moves += len(part) - int(leaves.sum())
        dest = child[e : e + len(part)]
        dest[:] = part
        dest[leaves] = n + np.searchsorted(boundary, distinct)[-1 - part[leaves]]
        e += len(part)
        del part, distinct, leaves, dest
        if i % 16 == 15:
            memory.return_freed_memory()
    return child, inside_moves


def solve_tier(run: Any, info: Any) -> dict[str, Any]:
    """Solve one tier of a game with chance nodes and write its tier file; returns its stats.
    The tier's keys and plies are read from its discovery files when needed, not held through
    the solve (the engine names positions by row)."""

    t0 = time.perf_counter()
    game, t = run.game, info.tier
    memory.fix_mmap_threshold()  # freed arrays go back to the system (not kept in malloc's heaps)
    memory.arrow_on_malloc()  # and freed row groups too (not kept in arrow's pool)
    memory.return_freed_memory()
    need, free = BYTES_PER_TIER_POSITION * info.positions, memory.available_memory()
    if free is not None and need > 0.9 * free:
        raise TooBigError(f"tier {t} ({tierwork.tier_name(game, t, run.slices)}) has {info.positions:,} positions and needs about "
                          f"{need / 2**30:.1f} GB to be solved by value iteration; {free / 2**30:.1f} GB is "
                          "free here (the finished tiers are kept: run again on a larger machine to resume)")
    keys = tierwork.tier_keys(run, t)
    n = len(keys)
    kind, to_move, result, offsets, parts, out_keys, probs = _expand(run, t, keys)
    del keys
    memory.return_freed_memory()  # the chunks' expansions (below the mmap threshold: malloc's heaps)
    t_expand = time.perf_counter() - t0
    # children in other tiers: the boundary, one row per distinct position, read from their
    # finished tier files
    boundary = unique(np.concatenate(out_keys)) if out_keys else np.empty(0, np.uint64)
    tierwork.tier_step(f"reading {len(boundary):,} positions of finished tiers")
    outside = _outside(run, t, info, boundary)
    outside.keys = None
    moves, b = int(offsets[-1]), len(boundary)
    child, inside_moves = _join(parts, out_keys, boundary, n, moves)
    del parts, out_keys, boundary
    memory.return_freed_memory()
    max_sweeps = run.max_sweeps if run.max_sweeps is not None else 100_000
    tierwork.tier_step("value iteration")
    sol = solve_chance(kind, to_move, result, offsets, child, probs, outside,
                       chunk=max(CHUNK_MIN, min(CHUNK_MAX, n // CHUNK_SHARE)), tol=run.tol,
                       max_sweeps=max_sweeps, progress=lambda k, chunks, sweeps: tierwork.tier_step(
                           f"value iteration: {k:,} of {chunks:,} chunks of components solved ({sweeps:,} sweeps)"))
    deg = np.minimum(np.diff(offsets), 65535).astype(np.uint16)  # the file's num_moves column
    del child, probs, outside, offsets
    # value = p_win - p_loss, computed per row group as the file is written (not held whole)
    cols = {"value": _Difference(sol.p_win, sol.p_loss), "p_win": sol.p_win, "p_loss": sol.p_loss}
    certified = sol.certified and sol.converged
    stats = {"tier": int(t), "positions": int(n), "moves": moves, "outside_children": int(b),
             "sweeps": int(sol.sweeps), "residual": float(sol.residual), "certified": certified,
             "converged": bool(sol.converged), "terminal": int((kind == NodeKind.TERMINAL).sum()),
             "chance": int((kind == NodeKind.CHANCE).sum()), **sol.stats}
    del sol
    frames = positions_tables(tierwork.tier_keys(run, t), to_move, kind, tierwork.tier_plies(run, t), deg, cols)
    meta = {**run.identity(), "tier": int(t), "tier_name": tierwork.tier_name(game, t, run.slices), "positions": int(n),
            "moves": moves, "inside_moves": inside_moves, "toolkit_version": solver.__version__,
            "seconds": round(time.perf_counter() - t0, 3),
            "tolerance": run.tol, **{k: stats[k] for k in ("sweeps", "residual", "certified", "converged",
                                                              "terminal", "chance")}}
    memory.return_freed_memory()
    fault_point(f"write:{tierwork.tier_file(t)}")
    tierwork.tier_step("writing the tier file")
    write_parquet(frames, run.tiers_dir / tierwork.tier_file(t), meta, key_deltas=True)
    return {**stats, "seconds": time.perf_counter() - t0, "expand_seconds": t_expand}


def finish_meta(tiers_meta: list[dict[str, Any]]) -> dict[str, Any]:
    """The manifest fields of a chance game's tiered table, from its tier files' metadata."""
    certified = all(bool(m.get("certified")) for m in tiers_meta)
    out: dict[str, Any] = {
        "solver": "value_iteration (tiered)", "solution": "stochastic",
        "sweeps": int(sum(int(m.get("sweeps", 0)) for m in tiers_meta)),
        "residual": float(max((float(m.get("residual", 0.0)) for m in tiers_meta), default=0.0)),
        "tolerance": max((float(m["tolerance"]) for m in tiers_meta if "tolerance" in m), default=None),
        "converged": all(bool(m.get("converged")) for m in tiers_meta),
        "certified": certified,
    }
    if not certified:
        bad = [str(m.get("tier")) for m in tiers_meta if not m.get("certified")]
        out["not_certified_because"] = (f"value iteration did not certify tier(s) {', '.join(bad[:5])}; "
                                        "raise --max-sweeps")
    return out
