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

    checked: str
    positions: int
    problems: list[str]
    seconds: float
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems


def verify_table(game: Game, sol: Any, *, progress: bool | str = False) -> Verdict:
    """Check ``sol``, the stored table of ``game`` as :func:`solver.api.load` reads it, against
    the rules (see the module docstring). :class:`TableError` (one line) when its kind is not
    covered."""
    t0 = time.perf_counter()
    meta = sol.meta
    label = game.variant.label()
    how = str(meta.get("solver", ""))
    if game.num_players > 2:
        raise TableError(f"`pyramids verify` does not cover {label}'s table yet: {game.num_players} players "
                         "(each seat against the others together)")
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
        needed = _COLUMNS[how] + (["margin"] if game.scored and how.startswith("retrograde") else [])
        missing = [c for c in needed if c not in positions.columns]
        if missing and "value_lo" in missing:
            raise TableError(f"the table of {label} holds no proven bounds (it was solved with --no-bounds): solve "
                             "it again with --force (bounds are on by default) to verify it")
        if missing:
            raise TableError(f"the table of {label} lacks the column(s) {', '.join(missing)}: it is damaged or "
                             "of another version; solve it again with --force")
        problems = _same_rows(graph, positions)
        if how == "retrograde":
            verdict = _verify_values(game, graph, positions)
        elif how == "retrograde+setups":
            verdict = _verify_setups(game, graph, positions, meta, sol.setups)
        elif how == "value_iteration":
            from solver.engines.verify import check_expected

            verdict = Verdict(checked="expected", positions=graph.n, seconds=0.0,
                              problems=check_expected(graph, positions, graph.n, _payoff_scale(graph)))
        else:
            verdict = _verify_bounds(game, graph, positions, meta, progress)
        verdict.problems = problems + verdict.problems
    verdict.seconds = time.perf_counter() - t0
    return verdict


#: the columns each kind of whole-graph table is checked from (margins too in scored games)
_COLUMNS = {
    "retrograde": ["value", "remoteness"],
    "retrograde+setups": ["value", "remoteness", "expected"],
    "value_iteration": ["value", "p_win", "p_loss"],
    "value_iteration+matrix games (LP)": ["value", "value_lo", "value_hi", "proof_mix_1", "proof_mix_2",
                                          "proof_move"],
}
_WHOLE = tuple(_COLUMNS)


def _payoff_scale(graph: Any) -> float:
    """The largest payoff at an end (1 without real payoffs): tolerances scale with it, taken
    from the rules, not from the table."""
    if graph.payoff is None:
        return 1.0
    ends = np.asarray(graph.payoff, dtype=np.float64)[np.asarray(graph.kind) == int(NodeKind.TERMINAL)]
    return float(np.abs(ends).max()) if len(ends) and np.abs(ends).max() > 0 else 1.0


def _same_rows(graph: Any, positions: pl.DataFrame) -> list[str]:
    """The stored side to move and node kind of every row, against the rules' (``show`` and
    ``play`` say whose value a row holds from them)."""
    problems = []
    for name, want in (("player", graph.to_move), ("kind", graph.kind)):
        got = positions[name].fill_null(255).to_numpy().astype(np.int64)
        bad = np.flatnonzero(got != np.asarray(want, dtype=np.int64))
        if len(bad):
            i = int(bad[0])
            problems.append(f"{len(bad):,} rows store the wrong {'side to move' if name == 'player' else 'node kind'},"
                            f" e.g. key {int(graph.keys[i])}: stored {got[i]}, the rules say {int(want[i])}")
    return problems


def _codes(positions: pl.DataFrame, rows: np.ndarray | None = None) -> tuple[np.ndarray, list[str]]:
    """The stored value codes (``int8``) and a problem where one is missing or not a code."""
    from solver.core.values import VALUE_NAMES

    raw = positions["value"].fill_null(-1).to_numpy().astype(np.int64)
    bad = (raw < 0) | (raw >= len(VALUE_NAMES))
    if rows is not None:
        bad &= rows
    problems = ([f"{int(bad.sum()):,} rows hold no value or not a value code (e.g. row {int(np.argmax(bad))})"]
                if bad.any() else [])
    return np.clip(raw, 0, len(VALUE_NAMES) - 1).astype(np.int8), problems


def _floats(positions: pl.DataFrame, name: str, rows: np.ndarray | None = None) -> tuple[np.ndarray, list[str]]:
    """A stored float column (nulls as NaN) and a problem where it is not a finite number at
    ``rows`` (all rows by default)."""
    x = positions[name].cast(pl.Float64).fill_null(float("nan")).to_numpy()
    bad = ~np.isfinite(x)
    if rows is not None:
        bad &= rows
    return x, ([f"{int(bad.sum()):,} rows hold no finite {name} (e.g. row {int(np.argmax(bad))})"] if bad.any() else [])


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
    return Verdict(checked="tiers", positions=total, problems=problems,
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

    value, problems = _codes(positions)
    rem = positions["remoteness"].fill_null(int(NO_REMOTENESS)).to_numpy().astype(np.int64)
    problems += check_values(graph, value, rem)
    if game.scored:
        problems += check_margins(graph, positions["margin"].fill_null(-(2**40)).to_numpy().astype(np.int64))
    return Verdict(checked="values", positions=graph.n, problems=problems, seconds=0.0)


def _verify_setups(game: Game, graph: Any, positions: pl.DataFrame, meta: dict[str, Any],
                   setups: pl.DataFrame | None) -> Verdict:
    """Random setups (chance at the start only) solved by retrograde below them: every position
    below the setups as a deterministic table (the setups' chance rows cut off), each chance
    row's expected result (and margin) the probability-weighted mean of its setups' results, the
    metadata's expected result the start's, and the setups table's rows the setups' values."""
    from solver.core.values import LOSE, TIE, WIN
    from solver.engines.verify import EXPECTED_TOL, check_margins, check_values
    from solver.pipeline.whole import decision_part

    kind = np.asarray(graph.kind)
    chance = kind == int(NodeKind.CHANCE)
    src = graph.parent_of_edge()
    if chance[graph.child].any():
        return Verdict(checked="setups", positions=graph.n, seconds=0.0,
                       problems=["a move or a chance outcome leads to a chance node: not a game of random setups"])
    value, problems = _codes(positions, ~chance)
    rem = positions["remoteness"].fill_null(int(NO_REMOTENESS)).to_numpy().astype(np.int64)
    sub = decision_part(graph)
    problems += check_values(sub, value, rem, rows=~chance)
    margin = None
    if game.scored:
        margin = positions["margin"].fill_null(-(2**40)).to_numpy().astype(np.int64)
        problems += check_margins(sub, margin, rows=~chance)
    # the setups: each chance row's mean over its outcomes, each seen by the chance row's side
    crow = np.flatnonzero(chance)
    edge = chance[src]
    parent, kid = src[edge], graph.child[edge]
    prob = np.asarray(graph.probs, dtype=np.float64)[edge]
    side = np.where(graph.to_move[kid] == graph.to_move[parent], 1.0, -1.0)
    score = np.select([value[kid] == WIN, value[kid] == LOSE, value[kid] == TIE], [1.0, -1.0, 0.0], 0.0)
    wants = [("expected", score)] + ([("expected_margin", margin[kid].astype(np.float64))] if margin is not None else [])
    root = int(graph.root)
    for name, per_kid in wants:
        if name not in positions.columns:
            problems.append(f"the table has no {name} column")
            continue
        want = np.bincount(parent, weights=prob * side * per_kid, minlength=graph.n)[crow]
        stored = positions[name].cast(pl.Float64).fill_null(float("nan")).to_numpy()[crow]
        bad = np.flatnonzero(~(np.abs(want - stored) <= EXPECTED_TOL))
        if len(bad):
            i = int(bad[0])
            problems.append(f"{len(bad):,} random setups' {name.replace('_', ' ')} break their mean, e.g. key "
                            f"{int(graph.keys[crow[i]])}: stored {stored[i]:+.12f}, its setups give {want[i]:+.12f}")
        told = meta.get(name + ("_result" if name == "expected" else ""))
        if chance[root] and told is not None and not abs(float(told) - want[np.searchsorted(crow, root)]) <= EXPECTED_TOL:
            problems.append(f"the metadata's {name.replace('_', ' ')} {float(told):+.12f} is not the start's "
                            f"{want[np.searchsorted(crow, root)]:+.12f}")
    if setups is not None and chance[root]:
        problems += _check_setups_table(graph, value, rem, margin, setups)
    return Verdict(checked="setups", positions=graph.n, problems=problems, seconds=0.0)


def _check_setups_table(graph: Any, value: np.ndarray, rem: np.ndarray, margin: np.ndarray | None,
                        setups: pl.DataFrame) -> list[str]:
    """The setups table (one row per outcome of the start's random setup: key, probability, and
    the value, remoteness and margin from the view of the player who moves first) against the
    checked rows of those setups."""
    from solver.core.values import FLIP, VALUE_NAMES

    r = int(graph.root)
    lo, hi = int(graph.offsets[r]), int(graph.offsets[r + 1])
    kids = graph.child[lo:hi]
    if setups.height != len(kids) or not np.array_equal(setups["key"].to_numpy(), graph.keys[kids]):
        return ["the setups table does not list the start's setups in order"]
    problems = []
    probs = np.asarray(graph.probs, dtype=np.float64)[lo:hi]
    if not np.all(np.abs(setups["probability"].cast(pl.Float64).fill_null(float("nan")).to_numpy() - probs) <= 1e-15):
        problems.append("the setups table's probabilities are not the rules'")
    own = graph.to_move[kids] == graph.to_move[r]
    eff = np.where(own, value[kids], FLIP[value[kids]])
    names = np.array(VALUE_NAMES, dtype=object)[eff]
    if setups["value"].to_list() != names.tolist():
        problems.append("the setups table's values are not its setups'")
    got_rem = setups["remoteness"].fill_null(int(NO_REMOTENESS)).to_numpy().astype(np.int64)
    if not np.array_equal(got_rem, rem[kids]):
        problems.append("the setups table's remoteness is not its setups'")
    if margin is not None:
        want = np.where(own, 1, -1) * margin[kids]
        if "margin" not in setups.columns or not np.array_equal(
                setups["margin"].fill_null(-(2**40)).to_numpy().astype(np.int64), want):
            problems.append("the setups table's margins are not its setups'")
    return problems


def _mixes(column: pl.Series, rows: np.ndarray, sizes: np.ndarray, name: str) -> tuple[dict[int, np.ndarray], list[str]]:
    """The mixes of a list column at ``rows`` (row -> probabilities), and a problem where one is
    missing, not of ``sizes[i]`` actions, or not a probability vector (finite, non-negative,
    some positive)."""
    arr = column.to_arrow()
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    offsets = np.asarray(arr.offsets)
    values = np.asarray(arr.values, dtype=np.float64)
    null = np.asarray(arr.is_null())
    out: dict[int, np.ndarray] = {}
    bad: list[int] = []
    for r, k in zip(rows.tolist(), sizes.tolist()):
        mix = values[offsets[r]:offsets[r + 1]]
        if null[r] or len(mix) != k or not np.all(np.isfinite(mix)) or mix.min(initial=0.0) < 0 or not mix.sum() > 0:
            bad.append(r)
            continue
        out[r] = mix
    problems = ([f"{len(bad):,} simultaneous rows have no proper {name} (a mix of its player's actions), e.g. "
                 f"row {bad[0]}"] if bad else [])
    return out, problems


def _verify_bounds(game: Game, graph: Any, positions: pl.DataFrame, meta: dict[str, Any],
                   progress: bool | str) -> Verdict:
    from solver.engines.bounds import recheck_bounds

    kind = np.asarray(graph.kind)
    offsets = np.asarray(graph.offsets, dtype=np.int64)
    degree = np.diff(offsets)
    sims = np.flatnonzero(kind == int(NodeKind.SIMULTANEOUS))
    rows_of = np.asarray(graph.sim_rows, dtype=np.int64)[sims] if len(sims) else np.zeros(0, np.int64)
    problems: list[str] = []
    mix_1, found = _mixes(positions["proof_mix_1"], sims, rows_of, "proof_mix_1")
    problems += found
    mix_2, found = _mixes(positions["proof_mix_2"], sims, degree[sims] // np.maximum(rows_of, 1), "proof_mix_2")
    problems += found
    # the proving move at each decision row: a move of that row
    local = positions["proof_move"].fill_null(-1).to_numpy().astype(np.int64)
    decision = kind == int(NodeKind.DECISION)
    wrong = decision & ((local < 0) | (local >= degree))
    if wrong.any():
        i = int(np.argmax(wrong))
        problems.append(f"{int(wrong.sum()):,} decision rows have no proving move among their moves, e.g. key "
                        f"{int(graph.keys[i])}: move {local[i]} of {degree[i]}")
    stored_lo, found = _floats(positions, "value_lo")
    problems += found
    stored_hi, found = _floats(positions, "value_hi")
    problems += found
    value, found = _floats(positions, "value")
    problems += found
    blocking = bool(problems)
    if "value_player1" in positions.columns:  # (the same value from Player 1's side)
        v1 = positions["value_player1"].cast(pl.Float64).fill_null(float("nan")).to_numpy()
        if not np.array_equal(v1, np.where(np.asarray(graph.to_move) == 0, value, -value)):
            problems.append("value_player1 is not the value seen from Player 1's side")
    r = int(graph.root)
    told = meta.get("value_interval")
    if told is not None and list(map(float, told)) != [float(stored_lo[r]), float(stored_hi[r])]:
        problems.append(f"the metadata's interval {told} is not the start's stored [{stored_lo[r]}, {stored_hi[r]}]")
    slack = RECHECK_SLACK * _payoff_scale(graph)
    bound_tol = float((meta.get("bounds") or {}).get("tolerance", 0.0))
    stored_width = float(np.max(stored_hi - stored_lo)) if graph.n else 0.0
    if meta.get("certified") and not stored_width <= bound_tol:
        problems.append(f"the table says certified, but its widest stored interval is {stored_width:.1e}, more "
                        f"than its tolerance {bound_tol:.0e}")
    details: dict[str, Any] = {"simultaneous_nodes": int(len(sims)), "slack": slack}
    if blocking:  # (the strategies cannot be evaluated, or the numbers to compare are missing)
        return Verdict(checked="bounds", positions=graph.n, problems=problems, seconds=0.0,
                       details=details)
    with Task("re-proving bounds", progress, note=f"best replies to the stored strategies ({graph.n:,} positions)",
              bar=False):
        moves = np.where(decision, offsets[:-1] + local, -1)
        lo, hi, proven = recheck_bounds(graph, mix_1, mix_2, moves, terminal_value=graph.payoff)
    excess = float(np.max(np.maximum(stored_lo - lo, hi - stored_hi), initial=0.0))
    if not proven:
        problems.append("the stored strategies prove nothing: an evaluation did not end or the bounds crossed")
    if not excess <= slack:
        i = int(np.argmax(np.maximum(stored_lo - lo, hi - stored_hi)))
        problems.append(f"stored bounds claim up to {excess:.1e} more than their strategies prove, e.g. key "
                        f"{int(graph.keys[i])}: stored [{stored_lo[i]:+.12f}, {stored_hi[i]:+.12f}], proven "
                        f"[{lo[i]:+.12f}, {hi[i]:+.12f}]")
    outside = np.flatnonzero(~((value >= lo - slack) & (value <= hi + slack)))
    if len(outside):
        i = int(outside[0])
        problems.append(f"{len(outside):,} stored values lie outside their proven intervals, e.g. key "
                        f"{int(graph.keys[i])}: {value[i]:+.12f} not in [{lo[i]:+.12f}, {hi[i]:+.12f}]")
    details.update({"value_interval": [float(lo[r]), float(hi[r])],
                    "width": float(np.max(hi - lo)) if graph.n else 0.0, "excess": excess})
    return Verdict(checked="bounds", positions=graph.n, problems=problems, seconds=0.0,
                   details=details)
