"""Tiered value iteration: games with dice (chance nodes during play), solved tier by tier.

The tiered solver (:mod:`solver.pipeline.tiered`) discovers the tiers of such a game as it does
for any other (a chance node's outcomes are its children); this module solves one tier:

1. the tier's positions are expanded again from the rules (no edges are stored between phases);
2. every position of another tier that a move or a roll reaches becomes a **terminal row** of
   the tier's graph, holding that position's finished win and loss probabilities, read from its
   tier file (each child tier once, only the rows needed);
3. the tier's graph goes through the whole-graph engine,
   :func:`solver.engines.value_iteration.value_iteration` (``terminal_probs``): strongly
   connected components, exact backward induction on acyclic layers, sweeps and strategy
   iteration on cyclic ones, the certificate;
4. the tier file gets the columns of the whole-graph table of a chance game: ``value`` (the
   expected result from the side to move), ``p_win`` and ``p_loss``.

Because a tier's cycles never leave it (tiers never fall along a move), the certificate of each
tier is the certificate of the whole game restricted to it, and the values are those of the
whole-graph solve (tested on every position of the small presets,
``tests/test_tiered_chance.py``).

Memory: the tier's graph is held whole while it is solved (as the whole-graph engine holds the
whole game), so the peak is set by the largest tier, not by the variant: a game whose positions
spread over many tiers gains in proportion. There is no low-memory (passes) mode for chance
tiers yet.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import polars as pl

import solver
from solver.core.arrays import FloatCoder, SortedLookup, lookup_sorted, unique
from solver.core.game import NodeKind
from solver.engines.enumerate import Graph
from solver.engines.value_iteration import value_iteration
from solver.errors import TableError, TooBigError
from solver.faults import fault_point
from solver.pipeline import memory, tierwork
from solver.tables import positions_frames, write_parquet

#: peak bytes per position of a chance tier while it is solved (the tier's graph, its edges and
#: value iteration's per-edge arrays), with a margin of about 10%: measured on Carrots 3x3 with
#: ``python -m solver.bench --tiered --case carrots:3x3 --repeat 3`` (median of 3: peak 853 MB,
#: 188 bytes per position of the variant above the RSS after imports, i.e. 443 per position of
#: its largest tier, 1,653,696 positions with 4.3 moves each). It was 504 (948 MB) before the
#: policy solve let its right-hand side and result go during the factorisation and glibc's mmap
#: threshold was fixed (memory.fix_mmap_threshold: freed arrays no longer stay in malloc's
#: heaps); 591 before probabilities held as one-byte codes, best moves computed in blocks and
#: the policy solve letting its entries go as soon as used (1,000 before int32 rows and edge
#: ids, int8 kinds, no held weight, edge-id or slot arrays). The peak is the strategy iteration
#: and the policy solve of the tier's cyclic part (their per-move arrays, reduced systems and
#: the sparse LU solve)
BYTES_PER_TIER_POSITION = 487

#: the columns of a finished chance tier that the tiers reaching it read
CHILD_COLUMNS = ["key", "player", "value", "p_win", "p_loss"]


def _child_rows(run: Any, t: int, u: int, need: np.ndarray) -> pl.DataFrame:
    """The rows of tier ``u``'s file whose keys are ``need`` (sorted, unique), in that order;
    read row group by row group with the key range as predicate."""
    path = run.tiers_dir / tierwork.tier_file(u)
    if not path.exists():
        raise TableError(f"tier {t} reaches tier {u}, whose file is missing", fix="solve again with --force")
    lo, hi = int(need[0]), int(need[-1])
    df = (pl.scan_parquet(path).select(CHILD_COLUMNS)
          .filter((pl.col("key") >= lo) & (pl.col("key") <= hi)).collect())
    keys = df["key"].to_numpy()
    idx = lookup_sorted(keys, need)
    tierwork.check_found(keys, idx, need, t, u)
    return df[idx]


def _outside_rows(run: Any, t: int, info: Any, kids: np.ndarray, ct: np.ndarray, inside: np.ndarray,
                  child: np.ndarray, n: int) -> tuple[list[np.ndarray], ...]:
    """The terminal rows of the children of tier ``t`` in other tiers (``ct``: each child's tier,
    ``inside``: the children in tier ``t``), numbered from ``n`` into ``child``, one per distinct
    key; returns their keys, side to move, win and loss probabilities, in parts per child tier."""
    out_keys: list[np.ndarray] = []
    out_player: list[np.ndarray] = []
    out_win: list[np.ndarray] = []
    out_loss: list[np.ndarray] = []
    base = n
    for u in unique(ct[~inside]).tolist():
        if int(u) not in info.children:
            raise TableError(f"tier {t} reaches tier {u}, which its discovery did not record",
                             fix="solve again with --force")
        sel = ct == u
        need = unique(kids[sel])
        rows_u = _child_rows(run, t, int(u), need)
        child[sel] = base + lookup_sorted(need, kids[sel])
        base += len(need)
        out_keys.append(need)
        out_player.append(rows_u["player"].to_numpy().astype(np.int8))
        out_win.append(rows_u["p_win"].to_numpy().astype(np.float64))
        out_loss.append(rows_u["p_loss"].to_numpy().astype(np.float64))
    return out_keys, out_player, out_win, out_loss


def solve_tier(run: Any, info: Any) -> dict[str, Any]:
    """Solve one tier of a game with chance nodes and write its tier file; returns its stats."""

    t0 = time.perf_counter()
    game, t = run.game, info.tier
    memory.fix_mmap_threshold()  # freed arrays go back to the system (not kept in malloc's heaps)
    need, free = BYTES_PER_TIER_POSITION * info.positions, memory.available_memory()
    if free is not None and need > 0.9 * free:
        raise TooBigError(f"tier {t} ({tierwork.tier_name(game, t)}) has {info.positions:,} positions and needs about "
                          f"{need / 2**30:.1f} GB to be solved by value iteration; {free / 2**30:.1f} GB is "
                          "free here (the finished tiers are kept: run again on a larger machine to resume)")
    keys, ply, kind, to_move, result = tierwork.tier_arrays(run, t)
    n = len(keys)
    deg = np.zeros(n, np.int64)
    kids_parts: list[np.ndarray] = []
    # probabilities as one-byte codes into a table of the few distinct ones (the same float64
    # values when looked up): one byte per move instead of eight, for the whole solve
    prob_coder = FloatCoder()
    for s, exp in tierwork.expansions(run, keys):
        m = len(exp.kind)
        kind[s : s + m] = exp.kind
        to_move[s : s + m] = exp.to_move
        result[s : s + m] = exp.result
        deg[s : s + m] = np.diff(exp.offsets)
        kids_parts.append(np.asarray(exp.children, dtype=np.uint64))
        prob_coder.add(np.ones(len(exp.children)) if exp.probs is None
                       else np.asarray(exp.probs, dtype=np.float64))
    kids = np.concatenate(kids_parts) if kids_parts else np.empty(0, np.uint64)
    probs = prob_coder.finish()
    del kids_parts, prob_coder
    t_expand = time.perf_counter() - t0
    # children inside the tier: their rows (discovery already refused simultaneous nodes and
    # tiers that fall; a tier this one's discovery did not record is refused below)
    ct, inside, rows = tierwork.split_inside(game, t, kids, keys, SortedLookup(keys))
    # rows as int32 while they fit (the whole-graph engine keeps the graph's integer type):
    # half the memory of int64, the same rows
    child = np.empty(len(kids), np.int32 if n + len(kids) < 2**31 else np.int64)
    child[inside] = rows
    del rows
    # children in other tiers: one terminal row each, holding its finished probabilities
    out_keys, out_player, out_win, out_loss = _outside_rows(run, t, info, kids, ct, inside, child, n)
    del kids, ct, inside
    b = sum(len(k) for k in out_keys)
    cat = (lambda parts, dtype: np.concatenate(parts).astype(dtype) if parts else np.empty(0, dtype))
    graph = Graph(
        keys=np.concatenate([keys, cat(out_keys, np.uint64)]),
        kind=np.concatenate([kind, np.full(b, NodeKind.TERMINAL, np.int8)]),
        to_move=np.concatenate([to_move, cat(out_player, np.int8)]),
        ply=np.broadcast_to(np.uint16(0), (n + b,)),  # not read by the engine: no memory
        offsets=np.concatenate([[0], np.cumsum(deg), np.full(b, deg.sum())]).astype(np.int64),
        child=child, probs=probs,
        result=np.concatenate([result, np.zeros(b, np.int8)]),
        margin=np.broadcast_to(np.int32(0), (n + b,)), root=0, symmetry=run.symmetry,
    )
    keys = graph.keys[:n]  # a view: the tier's keys are not held twice
    # win and loss probabilities of the terminal rows, +0.0 on the others: the engine then reads
    # these arrays instead of copying them (value_iteration._terminal_only)
    end = kind == NodeKind.TERMINAL
    win = np.concatenate([((result > 0) & end).astype(np.float64), cat(out_win, np.float64)])
    loss = np.concatenate([((result < 0) & end).astype(np.float64), cat(out_loss, np.float64)])
    del child, probs, end, out_keys, out_player, out_win, out_loss
    moves = int(deg.sum())
    del deg  # the engine derives its own from the offsets; taken from them again for the file
    max_sweeps = run.max_sweeps if run.max_sweeps is not None else 100_000
    sol = value_iteration(graph, tol=run.tol, max_sweeps=max_sweeps, terminal_probs=(win, loss))
    deg = np.diff(graph.offsets[: n + 1])
    cols = {"value": sol.value[:n], "p_win": sol.p_win[:n], "p_loss": sol.p_loss[:n]}
    certified = bool(sol.stats.get("certified", False)) and bool(sol.converged)
    stats = {"tier": int(t), "positions": int(n), "moves": moves, "outside_children": int(b),
             "sweeps": int(sol.sweeps), "residual": float(sol.residual), "certified": certified,
             "converged": bool(sol.converged), "terminal": int((kind == NodeKind.TERMINAL).sum()),
             "chance": int((kind == NodeKind.CHANCE).sum())}
    del graph, sol
    frames = positions_frames(keys, to_move, kind, ply, deg, cols)
    meta = {**run.identity(), "tier": int(t), "tier_name": tierwork.tier_name(game, t), "positions": int(n),
            "moves": moves, "inside_moves": moves - int(b), "toolkit_version": solver.__version__,
            "seconds": round(time.perf_counter() - t0, 3),
            "tolerance": run.tol, **{k: stats[k] for k in ("sweeps", "residual", "certified", "converged",
                                                              "terminal", "chance")}}
    fault_point(f"write:{tierwork.tier_file(t)}")
    write_parquet(frames, run.tiers_dir / tierwork.tier_file(t), meta)
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
