"""``pyramids verify``: a stored table checked against the rules, from nothing but the rules and
the table.

The positions are enumerated again from the rules (the table's own edges are not trusted) and
must be the table's, row for row; then each kind of table is checked by what proves it:

* **deterministic** (retrograde, whole graph): every value, remoteness and margin against its
  children's (:func:`solver.engines.verify.check_values`): a table that passes is the solution;
* **tier by tier**: the same, tier by tier, each tier expanded from the rules and its children
  read from their tier files (:func:`solver.pipeline.tiered.verify_tiered`);
* **random setups** (chance at the start only, retrograde below): the positions below the setups
  as a deterministic table, and each setup chance node's expected result (and margin) the mean of
  its setups';
* **dice** (value iteration): every expected result (or payoff) is its best move's or the mean
  of its outcomes, and its win minus loss probability (:func:`solver.engines.verify.check_expected`):
  self-consistent (value iteration's certificate is what rules out a spurious fixed point);
* **secret choices with proven bounds**: the stored proving strategies (``proof_mix_1``,
  ``proof_mix_2``, ``proof_move``) are evaluated again against the other player's exact best
  reply (:func:`solver.engines.bounds.recheck_bounds`), which proves an interval around every
  value; the stored ``value_lo``/``value_hi`` must lie within it (to :data:`RECHECK_SLACK`
  times the payoff scale: the same evaluation, its certified allowance for rounding free to
  differ with the reply it ends on), and the stored value inside.

Other tables (3-4 players, games solved round by round) are refused in one line, saying so.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa

from solver.core.game import Game, NodeKind
from solver.core.progress import Task, session
from solver.core.values import NO_REMOTENESS
from solver.errors import TableError

#: a stored bound may lie this much (times the payoff scale) beyond the re-proven one. Both are
#: proofs, each with its own certified allowance for rounding (:func:`solver.engines.bounds.certify_upper`),
#: which depends on the optimal reply policy iteration ends on (the re-check starts from other
#: moves): 6.2e-13 apart on Petal Battle 6-2, whose play loops, 1e-14 on Petal Battle 6
RECHECK_SLACK = 1e-11


@dataclass
class Verdict:
    """What ``pyramids verify`` found: ``ok`` when no problem; ``checked`` what was checked
    (``"values"``, ``"tiers"``, ``"setups"``, ``"expected"``, ``"bounds"``); ``details`` the numbers of the
    check (the re-proven start interval, the widest, the excess of the stored bounds)."""

    ok: bool
    checked: str
    positions: int
    problems: list[str]
    seconds: float
    details: dict[str, Any] = field(default_factory=dict)


def verify_table(game: Game, *, out: str | Path | None = None, symmetry: bool = True,
                 progress: bool | str = False) -> Verdict:
    """Check the stored table of ``game`` against its rules (see the module docstring).
    :class:`TableError` (one line) when there is no finished table, or its kind is not covered."""
    from solver.api import load

    t0 = time.perf_counter()
    sol = load(game, out=out, symmetry=symmetry)
    meta = sol.meta
    label = game.variant.label()
    how = str(meta.get("solver", ""))
    if "by rounds" in how:
        raise TableError(f"{label} was solved round by round (cut-off games, finite horizon): its bounds are "
                         "not re-checked by `pyramids verify` yet; solve a smaller variant whole to check one")
    with session(progress):
        if meta.get("layout") == "tiered":
            return _verify_tiers(game, sol, progress, t0)
        if how not in _WHOLE:
            raise TableError(f"`pyramids verify` does not cover {label}'s table yet (solver: {how}); it checks "
                             "two-player tables solved by retrograde (with random setups too), by value "
                             "iteration (dice) and with proven bounds (secret choices)")
        graph = _graph_of(game, sol, progress)
        positions = sol.positions
        if how == "retrograde":
            verdict = _verify_values(game, graph, positions)
        elif how == "retrograde+setups":
            verdict = _verify_setups(game, graph, positions)
        elif how == "value_iteration":
            from solver.engines.verify import check_expected

            scale = float(meta.get("payoff_scale", 1.0))
            verdict = Verdict(ok=True, checked="expected", positions=graph.n,
                              problems=check_expected(graph, positions, graph.n, scale), seconds=0.0)
        else:
            verdict = _verify_bounds(game, graph, positions, meta, progress)
    verdict.ok = not verdict.problems
    verdict.seconds = time.perf_counter() - t0
    return verdict


_WHOLE = ("retrograde", "retrograde+setups", "value_iteration", "value_iteration+matrix games (LP)")


def _verify_tiers(game: Game, sol: Any, progress: bool | str, t0: float) -> Verdict:
    from solver.pipeline.tiered import verify_tiered

    meta = sol.meta
    total = int(meta.get("counts", {}).get("positions", 0))
    with Task("verifying tiers", progress, done=0, total=total or None, unit="positions",
              unit_scale=True) as task:
        seen = [0]

        def on_tier(phase: str, name: str, done: int, _total: Any) -> None:
            seen[0] += int(done)
            task.update(seen[0], note=f"tier {name}")

        problems = verify_tiered(game, Path(sol.path), progress=on_tier if progress else None)
    return Verdict(ok=not problems, checked="tiers", positions=total, problems=problems,
                   seconds=time.perf_counter() - t0)


def _graph_of(game: Game, sol: Any, progress: bool | str):
    """The positions enumerated again from the rules, as the table's rows (:class:`TableError`
    if they are not the same positions in the same order)."""
    from solver.engines.enumerate import enumerate_positions

    meta = sol.meta
    with Task("enumerate", progress, done=0, unit="positions", unit_scale=True) as found:
        def on_ply(ply: int, total: int, frontier: int) -> None:
            found.update(total, note=f"ply {ply}, frontier {frontier:,}")

        graph = enumerate_positions(game, symmetry=bool(meta.get("symmetry", True)),
                                    progress=on_ply if progress else None)
    keys = sol.positions["key"].to_numpy()
    if len(keys) != graph.n or not np.array_equal(keys, np.asarray(graph.keys, dtype=keys.dtype)):
        raise TableError(f"the table of {game.variant.label()} does not hold the positions its rules reach "
                         f"({len(keys):,} rows, {graph.n:,} positions enumerated, or in another order): solve it "
                         "again with --force")
    return graph


def _verify_values(game: Game, graph: Any, positions: pl.DataFrame) -> Verdict:
    from solver.engines.verify import check_margins, check_values

    value = positions["value"].to_numpy().astype(np.int8)
    rem = positions["remoteness"].fill_null(int(NO_REMOTENESS)).to_numpy().astype(np.int64)
    problems = check_values(graph, value, rem)
    if game.scored and "margin" in positions.columns:
        problems += check_margins(graph, positions["margin"].to_numpy())
    return Verdict(ok=not problems, checked="values", positions=graph.n, problems=problems, seconds=0.0)


def _verify_setups(game: Game, graph: Any, positions: pl.DataFrame) -> Verdict:
    """Random setups (chance at the start only) solved by retrograde below them: every position
    below the setups as a deterministic table (the setups' chance rows cut off), and each chance
    row's expected result (and margin) the probability-weighted mean of its setups' results."""
    from solver.core.values import LOSE, TIE, WIN
    from solver.engines.verify import EXPECTED_TOL, check_margins, check_values
    from solver.pipeline.whole import decision_part

    kind = np.asarray(graph.kind)
    chance = kind == int(NodeKind.CHANCE)
    src = graph.parent_of_edge()
    if (chance[graph.child] & ~chance[src]).any():
        return Verdict(ok=False, checked="values", positions=graph.n, seconds=0.0,
                       problems=["a move leads to a chance node: not a game of random setups"])
    value = positions["value"].to_numpy().astype(np.int8)
    rem = positions["remoteness"].fill_null(int(NO_REMOTENESS)).to_numpy().astype(np.int64)
    sub = decision_part(graph)
    problems = check_values(sub, value, rem, rows=~chance)
    margin = positions["margin"].to_numpy() if game.scored and "margin" in positions.columns else None
    if margin is not None:
        problems += check_margins(sub, margin, rows=~chance)
    # the setups: each chance row's mean over its outcomes, each seen by the chance row's side
    crow = np.flatnonzero(chance)
    edge = np.isin(src, crow)
    parent, kid = src[edge], graph.child[edge]
    prob = np.asarray(graph.probs, dtype=np.float64)[edge]
    side = np.where(graph.to_move[kid] == graph.to_move[parent], 1.0, -1.0)
    score = np.select([value[kid] == WIN, value[kid] == LOSE, value[kid] == TIE], [1.0, -1.0, 0.0], 0.0)
    wants = [("expected", score)] + ([("expected_margin", margin[kid].astype(np.float64))] if margin is not None else [])
    for name, per_kid in wants:
        want = np.bincount(parent, weights=prob * side * per_kid, minlength=graph.n)[crow]
        stored = positions[name].to_numpy().astype(np.float64)[crow]
        bad = np.flatnonzero(np.abs(want - stored) > EXPECTED_TOL)
        if len(bad):
            i = int(bad[0])
            problems.append(f"{len(bad):,} random setups' {name.replace('_', ' ')} break their mean, e.g. key "
                            f"{int(graph.keys[crow[i]])}: stored {stored[i]:+.12f}, its setups give {want[i]:+.12f}")
    return Verdict(ok=not problems, checked="setups", positions=graph.n, problems=problems, seconds=0.0)


def _mixes(column: pl.Series, rows: np.ndarray) -> dict[int, np.ndarray]:
    """The mixes of a list column at ``rows`` (row -> probabilities)."""
    arr = column.to_arrow()
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    offsets = np.asarray(arr.offsets)
    values = np.asarray(arr.values, dtype=np.float64)
    null = np.asarray(arr.is_null())
    out: dict[int, np.ndarray] = {}
    for r in rows.tolist():
        if null[r]:
            raise TableError(f"the table's proving strategy is missing at simultaneous row {r}: solve it again "
                             "with --force")
        out[r] = values[offsets[r]:offsets[r + 1]]
    return out


def _verify_bounds(game: Game, graph: Any, positions: pl.DataFrame, meta: dict[str, Any],
                   progress: bool | str) -> Verdict:
    from solver.engines.bounds import recheck_bounds

    label = game.variant.label()
    if "proof_mix_1" not in positions.columns or "value_lo" not in positions.columns:
        raise TableError(f"the table of {label} holds no proven bounds (it was solved without them): solve it "
                         "again with --force (bounds are on by default) to verify it")
    kind = np.asarray(graph.kind)
    sims = np.flatnonzero(kind == int(NodeKind.SIMULTANEOUS))
    with Task("re-proving bounds", progress, note=f"best replies to the stored strategies ({graph.n:,} positions)",
              bar=False):
        mix_1 = _mixes(positions["proof_mix_1"], sims)
        mix_2 = _mixes(positions["proof_mix_2"], sims)
        local = positions["proof_move"].to_numpy().astype(np.int64)
        offsets = np.asarray(graph.offsets, dtype=np.int64)
        moves = np.where((kind == int(NodeKind.DECISION)) & (local >= 0), offsets[:-1] + local, -1)
        lo, hi, proven = recheck_bounds(graph, mix_1, mix_2, moves, terminal_value=graph.payoff)
    stored_lo = positions["value_lo"].to_numpy().astype(np.float64)
    stored_hi = positions["value_hi"].to_numpy().astype(np.float64)
    value = positions["value"].to_numpy().astype(np.float64)
    scale = float(meta.get("payoff_scale", 1.0))
    slack = RECHECK_SLACK * scale
    excess = float(max(np.max(stored_lo - lo, initial=0.0), np.max(hi - stored_hi, initial=0.0)))
    problems: list[str] = []
    if not proven:
        problems.append("the stored strategies prove nothing: an evaluation did not end or the bounds crossed")
    if excess > slack:
        i = int(np.argmax(np.maximum(stored_lo - lo, hi - stored_hi)))
        problems.append(f"stored bounds claim up to {excess:.1e} more than their strategies prove, e.g. key "
                        f"{int(graph.keys[i])}: stored [{stored_lo[i]:+.12f}, {stored_hi[i]:+.12f}], proven "
                        f"[{lo[i]:+.12f}, {hi[i]:+.12f}]")
    outside = np.flatnonzero((value < lo - slack) | (value > hi + slack))
    if len(outside):
        i = int(outside[0])
        problems.append(f"{len(outside):,} stored values lie outside their proven intervals, e.g. key "
                        f"{int(graph.keys[i])}: {value[i]:+.12f} not in [{lo[i]:+.12f}, {hi[i]:+.12f}]")
    r = int(graph.root)
    details = {"value_interval": [float(lo[r]), float(hi[r])], "width": float(np.max(hi - lo)) if graph.n else 0.0,
               "excess": excess, "slack": slack, "simultaneous_nodes": int(len(sims))}
    return Verdict(ok=not problems, checked="bounds", positions=graph.n, problems=problems, seconds=0.0,
                   details=details)
