"""The Python API: build a game, solve it (or load its table), look up positions and moves.

>>> from solver.api import make_game, solve
>>> game = make_game("override", size=3, line=3, per_size=1)
>>> sol = solve(game)                       # reuses tables/override/<id>/ when present
>>> sol.positions                           # polars DataFrame, one row per position
>>> sol.lookup(game.initial_state())        # PositionValue(value='...', remoteness=..., ...)
>>> sol.moves(game.initial_state())         # every legal move with its value, best first
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Callable

import numpy as np
import polars as pl

from solver.core.game import Game, NodeKind
from solver.core.values import FLIP, NO_REMOTENESS, VALUE_NAMES
from solver.core.variant import make_variant
from solver.engines.matrix_game import SAME_PROBABILITY, optimal_strategy_ranges  # noqa: F401 - re-exported
from solver.pipeline import whole as pipeline
from solver.pipeline.measured import large_reason
from solver.pipeline.route import Route, route
from solver.pipeline.tasks import SweepResult, sweep_setups
from solver.pipeline.tiered_setups import read_setups
from solver.pipeline.tierwork import check_slices, tiers_of
from solver.pipeline.whole import BOUND_ROUNDS, MAX_SWEEPS_SIMULTANEOUS, P_WIN_GAP, SETUPS  # noqa: F401
from solver.errors import IllegalMoveError, TableError, TooBigError, VariantError
from solver.games import make_game
from solver.tables import (
    EDGES,
    POSITIONS,
    read_meta,
    read_variant,
    row_of_key,
    scan_keyed,
    variant_dir,
)

__all__ = ["make_game", "solve", "route", "Route", "SweepResult", "load", "Solution", "PositionValue", "MoveValue", "LineStep", "solve_graph"]



@dataclass(frozen=True)
class PositionValue:
    """The solved value of one position, from its side to move.

    Deterministic games: ``value`` is ``win``/``lose``/``tie``/``draw`` and ``remoteness`` the
    plies to the end (``None`` for a draw). Chance games: ``value`` is ``None``, ``expected`` the
    expected result in [-1, 1] and ``p_win``/``p_loss`` the probabilities.
    """

    value: str | None
    remoteness: int | None
    margin: int | None = None
    expected: float | None = None
    p_win: float | None = None
    p_loss: float | None = None
    to_move: int = 0
    kind: str = "decision"
    #: at simultaneous nodes: each player's optimal mixed strategy, ``{"1": {"SML": 0.25, ...},
    #: "2": {...}}`` (players numbered from 1, actions by name)
    strategies: dict[str, dict[str, float]] | None = None
    #: secret-choice tables with proven bounds: ``(lo, hi)`` around the value, from the side to
    #: move (the value of the game lies in it; :mod:`solver.engines.bounds`)
    value_interval: tuple[float, float] | None = None
    #: with bounds: the stationary strategies that prove them, at simultaneous nodes each
    #: player's mix (``{"1": {...}, "2": {...}}``: player 1's proves the lower end in player 1's
    #: view, player 2's the upper), at decision nodes ``{"<mover>": move name}``
    proof: dict[str, Any] | None = None
    #: the game's ends pay real amounts (:attr:`solver.core.game.Outcome.payoffs`): ``expected``
    #: is an expected payoff, not a result in [-1, 1], and there are no win probabilities
    payoff: bool = False

    def describe(self, digits: int = 6) -> str:
        """One line, e.g. ``player 1 to move: win in 9, margin +6`` (expected results with
        ``digits`` decimals; probabilities as percentages with two fewer)."""
        who = f"player {self.to_move + 1}"
        if self.kind == "terminal":
            return f"game over: {self.value or f'{self.expected:+g}'} for {who}"
        if self.value is None:
            what = "expected payoff" if self.payoff else "expected result"
            extra = (f"; wins {self.p_win:.{digits - 2}%}, loses {self.p_loss:.{digits - 2}%}"
                     if self.p_win is not None else "")
            proven = ("" if self.value_interval is None else
                      f"; proven in [{self.value_interval[0]:+.{digits + 3}f}, {self.value_interval[1]:+.{digits + 3}f}]")
            return f"{who} to move ({self.kind}): {what} {self.expected:+.{digits}f}{extra}{proven}"
        rem = "" if self.remoteness is None else f" in {self.remoteness}"
        margin = "" if self.margin is None else f", margin {self.margin:+d}"
        return f"{who} to move: {self.value}{rem}{margin}"


@dataclass(frozen=True)
class MoveValue:
    """A legal move and what it leads to, from the point of view of the player making it."""

    move: str
    value: str | None
    remoteness: int | None
    margin: int | None = None
    expected: float | None = None
    probability: float | None = None
    p_win: float | None = None
    p_loss: float | None = None


@dataclass
class Solution:
    """A solved variant: its game, tables and lookups. Build it with :func:`solve` or :func:`load`."""

    game: Game
    positions: pl.DataFrame
    meta: dict[str, Any]
    path: Path
    edges: pl.DataFrame | None = None
    setups: pl.DataFrame | None = None
    _cols: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    # --- raw access ---------------------------------------------------------------------
    @property
    def symmetry(self) -> bool:
        return bool(self.meta.get("symmetry", True))

    @property
    def stochastic(self) -> bool:
        return self.meta.get("solution") == "stochastic"

    def column(self, name: str) -> np.ndarray:
        """A positions column as a numpy array (cached)."""
        if name not in self._cols:
            if name not in self.positions.columns:
                raise KeyError(name)
            col = self.positions[name]
            self._cols[name] = col.to_numpy() if col.null_count() == 0 else col.fill_null(
                NO_REMOTENESS if name == "remoteness" else 0
            ).to_numpy()
        return self._cols[name]

    def key_of(self, state: Any) -> int:
        st = self.game.canonical(state) if self.symmetry else state
        return int(self.game.encode(st))

    def row(self, state: Any) -> int:
        """Row of ``state`` in :attr:`positions` (an error if it is not a reachable position)."""
        keys = self.column("key")
        k = np.uint64(self.key_of(state))
        i = int(np.searchsorted(keys, k))
        if i >= len(keys) or keys[i] != k:
            raise IllegalMoveError("this position is not reachable from the start of the variant")
        return i

    # --- lookups ------------------------------------------------------------------------
    @property
    def paranoid(self) -> bool:
        return self.meta.get("solution") == "paranoid"

    def value_at(self, i: int, seat: int | None = None) -> PositionValue:
        """Row ``i``'s value from its side to move (3-4 players: from ``seat``, default the
        seat to move, answering that seat's paranoid question)."""
        kind = NodeKind(int(self.column("kind")[i])).name.lower()
        to_move = int(self.column("player")[i])
        if self.paranoid:
            s = to_move if seat is None else seat
            code = int(self.column(f"seat{s + 1}_value")[i])
            rem = int(self.column(f"seat{s + 1}_remoteness")[i])
            mcol = f"seat{s + 1}_margin"
            margin = int(self.column(mcol)[i]) if mcol in self.positions.columns else None
            return PositionValue(value=VALUE_NAMES[code], remoteness=None if rem == NO_REMOTENESS else rem,
                                 margin=margin, to_move=s, kind=kind)
        margin = int(self.column("margin")[i]) if "margin" in self.positions.columns else None
        if self.stochastic:
            p_win, p_loss = self.positions["p_win"][i], self.positions["p_loss"][i]
            bounded = "value_lo" in self.positions.columns
            return PositionValue(
                value=None, remoteness=None, margin=margin, expected=float(self.column("value")[i]),
                p_win=None if p_win is None else float(p_win), p_loss=None if p_loss is None else float(p_loss),
                to_move=to_move, kind=kind,
                strategies=self.strategies_at(i) if kind == "simultaneous" else None,
                value_interval=(float(self.column("value_lo")[i]), float(self.column("value_hi")[i]))
                if bounded else None,
                proof=self.proof_at(i) if bounded else None,
                payoff=self.meta.get("payoffs") == "real",
            )
        if kind == "chance":
            p_win, p_loss = self._chance_probabilities(i, to_move)
            return PositionValue(
                value=None, remoteness=None, expected=float(self.column("expected")[i]),
                margin=None, to_move=to_move, kind=kind, p_win=p_win, p_loss=p_loss,
            )
        code = int(self.column("value")[i])
        rem = int(self.column("remoteness")[i])
        return PositionValue(
            value=VALUE_NAMES[code], remoteness=None if rem == NO_REMOTENESS else rem,
            margin=margin, to_move=to_move, kind=kind,
        )

    def strategies_at(self, i: int) -> dict[str, dict[str, float]] | None:
        """Both players' optimal mixed strategies at simultaneous row ``i`` (by action name), from
        the ``strategy_1``/``strategy_2`` columns; ``None`` when the table has none."""
        return self._mixes_at(i, "strategy_")

    def _mixes_at(self, i: int, prefix: str) -> dict[str, dict[str, float]] | None:
        """Each player's mix at simultaneous row ``i`` by action name, from the columns
        ``<prefix>1``, ``<prefix>2``; ``None`` when the table has none there."""
        if f"{prefix}1" not in self.positions.columns:
            return None
        g = self.game
        state = g.decode(int(self.column("key")[i]))
        out: dict[str, dict[str, float]] = {}
        for p in range(g.num_players):
            probs = self.positions[f"{prefix}{p + 1}"][i]
            if probs is None:
                return None
            names = [g.action_name(state, a) for a in g.player_actions(state, p)]
            out[str(p + 1)] = {n: float(x) for n, x in zip(names, probs)}
        return out

    def proof_at(self, i: int) -> dict[str, Any] | None:
        """The proving strategies at row ``i`` (see :attr:`PositionValue.proof`): both mixes at a
        simultaneous node (columns ``proof_mix_1``/``proof_mix_2``), the mover's move at a
        decision node (column ``proof_move``); ``None`` elsewhere or without bounds."""
        if "proof_mix_1" not in self.positions.columns:
            return None
        kind = int(self.column("kind")[i])
        if kind == int(NodeKind.SIMULTANEOUS):
            return self._mixes_at(i, "proof_mix_")
        k = int(self.column("proof_move")[i])
        if kind != int(NodeKind.DECISION) or k < 0:
            return None
        g = self.game
        state = g.decode(int(self.column("key")[i]))
        return {str(int(self.column("player")[i]) + 1): g.action_name(state, g.legal_actions(state)[k])}

    def _chance_probabilities(self, i: int, to_move: int) -> tuple[float, float]:
        """Random setups: the probability that the side to move at chance row ``i`` wins / loses
        with perfect play (the outcomes' probabilities summed by the value they lead to)."""
        g = self.game
        state = g.decode(int(self.column("key")[i]))
        p_win = p_loss = 0.0
        for action, p in g.chance_outcomes(state):
            child = self.value_at(self.row(g.apply(state, action)))
            name = child.value if child.to_move == to_move else (
                VALUE_NAMES[int(FLIP[VALUE_NAMES.index(child.value)])] if child.value else None)
            if name == "win":
                p_win += float(p)
            elif name == "lose":
                p_loss += float(p)
        return p_win, p_loss

    def lookup(self, state: Any) -> PositionValue:
        """The solved value of ``state`` from its side to move."""
        return self.value_at(self.row(state))

    @property
    def root(self) -> PositionValue:
        return self.lookup(self.game.initial_state())

    def moves(self, state: Any) -> list[MoveValue]:
        """Every legal move (chance: every outcome) with the value it leads to, best first.

        A move's value is from the mover's point of view after playing it: a move to a position
        that is lost for the opponent is a ``win``; a move after which the mover moves again keeps
        the child's value.
        """
        g = self.game
        kind = g.node_kind(state)
        mover = g.to_move(state)
        out: list[MoveValue] = []
        if kind == NodeKind.CHANCE:
            for action, p in g.chance_outcomes(state):
                child = g.apply(state, action)
                out.append(self._move_value(g.action_name(state, action), child, mover, float(p)))
            return out
        if kind == NodeKind.SIMULTANEOUS:
            # every joint action (row-major), with the probability that optimal play picks it
            mix = self.lookup(state).strategies
            for joint in g.joint_actions(state):
                prob = None
                if mix is not None:  # names are those of the stored (canonical) position
                    prob = 1.0
                    for p, a in enumerate(joint):
                        x = mix[str(p + 1)].get(g.action_name(state, a))
                        prob = None if (x is None or prob is None) else prob * x
                out.append(self._move_value(g.joint_name(state, joint), g.apply_joint(state, joint),
                                            mover, prob))
            return out
        if kind != NodeKind.DECISION:
            return out
        for action in g.legal_actions(state):
            child = g.apply(state, action)
            out.append(self._move_value(g.action_name(state, action), child, mover, None))
        out.sort(key=_move_order_key)
        return out

    def symmetric_moves(self, state: Any, moves: list[MoveValue] | None = None) -> dict[str, list[str]]:
        """At a decision node, moves that lead to the same position up to symmetry (the game's
        ``canonical``): each group's first move in ``moves`` order (default: :meth:`moves`) mapped
        to the others of its group; moves alone in their group are left out. Such moves have the
        same value. ``{}`` at other nodes or when no two moves are alike."""
        g = self.game
        if g.node_kind(state) != NodeKind.DECISION:
            return {}
        by_name = {g.action_name(state, a): a for a in g.legal_actions(state)}
        groups: dict[int, list[str]] = {}
        for m in (self.moves(state) if moves is None else moves):
            child = g.apply(state, by_name[m.move])
            groups.setdefault(int(g.encode(g.canonical(child))), []).append(m.move)
        return {names[0]: names[1:] for names in groups.values() if len(names) > 1}

    def move_groups(self, state: Any, moves: list[MoveValue] | None = None) -> list[tuple[MoveValue, list[str]]]:
        """``moves`` (default :meth:`moves`) one per position they lead to up to symmetry: each
        group's first move, in ``moves`` order, with the names of the others of its group (empty
        when it is alone). See :meth:`symmetric_moves`."""
        moves = self.moves(state) if moves is None else moves
        alike = self.symmetric_moves(state, moves)
        hidden = {name for others in alike.values() for name in others}
        return [(m, alike.get(m.move, [])) for m in moves if m.move not in hidden]

    def payoff_matrix(self, state: Any) -> tuple[list[str], list[str], np.ndarray] | None:
        """At a secret simultaneous choice: player 1's and player 2's action names and the matrix
        of player 1's expected results of each joint choice (rows player 1's actions), with
        perfect play afterwards, read from the table; ``None`` at any other node."""
        g = self.game
        if g.node_kind(state) != NodeKind.SIMULTANEOUS:
            return None
        rows = [g.action_name(state, a) for a in g.player_actions(state, 0)]
        cols = [g.action_name(state, a) for a in g.player_actions(state, 1)]
        a = np.array([m.expected for m in self.moves(state)], dtype=np.float64).reshape(len(rows), len(cols))
        return rows, cols, (-a if g.to_move(state) == 1 else a)

    def strategy_ranges(self, state: Any, matrix: tuple[list[str], list[str], np.ndarray] | None = None
                        ) -> dict[str, dict[str, list[float]]] | None:
        """At a secret simultaneous choice: for each player (``"1"``, ``"2"``) and action, the
        smallest and largest probability (8 decimals) the action has over **all** optimal mixed strategies of
        the choice's payoff matrix (:func:`solver.engines.matrix_game.optimal_strategy_ranges`):
        where the optimal mix is not unique, the stored mix is one of many, and these ranges say
        which probabilities are forced. ``None`` at any other node. ``matrix``: the node's
        :meth:`payoff_matrix`, when the caller has it already."""
        found = self.payoff_matrix(state) if matrix is None else matrix
        if found is None:
            return None
        rows, cols, a = found
        r = optimal_strategy_ranges(a)
        # 8 decimals: the matrix comes from an iterative solve whose results are good to about
        # 1e-9, so the ranges' last digits are its rounding, not a property of the game
        rnd = (lambda lo, hi: [round(float(lo), 8), round(float(hi), 8)])
        return {"1": {n: rnd(r.row_lo[i], r.row_hi[i]) for i, n in enumerate(rows)},
                "2": {n: rnd(r.col_lo[j], r.col_hi[j]) for j, n in enumerate(cols)}}

    def line(self, state: Any = None, *, max_plies: int = 500) -> tuple[list[LineStep], str]:
        """The principal variation from ``state`` (default: the start): both sides play the best
        move (fastest win, slowest loss, then the best margin), chance nodes take their most likely
        outcome and secret simultaneous choices the likeliest joint choice of the optimal mixes
        (marked in :attr:`LineStep.why`). Returns the steps and how the line ends: ``"game
        over"``, ``"repeats"`` (a position comes back: endless play) or ``"limit"`` (``max_plies``)."""
        g = self.game
        state = g.initial_state() if state is None else state
        seen = {self.key_of(state)}
        steps: list[LineStep] = []
        while len(steps) < max_plies:
            kind = g.node_kind(state)
            if kind == NodeKind.TERMINAL:
                return steps, "game over"
            mover = g.to_move(state)
            moves = self.moves(state)
            if kind == NodeKind.DECISION:
                pick, why = moves[0], "best"
            else:  # chance or simultaneous: the likeliest outcome (the first of equal ones)
                pick = max(moves, key=lambda m: -1.0 if m.probability is None else m.probability)
                why = "most likely roll" if kind == NodeKind.CHANCE else "most likely choices"
            steps.append(LineStep(pick.move, mover, pick.value, pick.remoteness, pick.margin,
                                  pick.expected, pick.probability, why))
            state = g.play([pick.move], state)
            key = self.key_of(state)
            if key in seen:
                return steps, "repeats"
            seen.add(key)
        return steps, "limit"

    def _move_value(self, name: str, child: Any, mover: int, prob: float | None) -> MoveValue:
        if self.paranoid:  # the mover's own seat question, after the move
            pv = self.value_at(self.row(child), seat=mover)
            return MoveValue(name, pv.value, pv.remoteness, pv.margin, None, prob)
        pv = self.lookup(child)
        same = pv.to_move == mover
        margin = None if pv.margin is None else (pv.margin if same else -pv.margin)
        if pv.value is None:
            exp = pv.expected if same else -pv.expected
            p_win, p_loss = (pv.p_win, pv.p_loss) if same else (pv.p_loss, pv.p_win)
            return MoveValue(name, None, None, margin, exp, prob, p_win, p_loss)
        code = VALUE_NAMES.index(pv.value)
        eff = code if same else int(FLIP[code])
        return MoveValue(name, VALUE_NAMES[eff], pv.remoteness, margin, None, prob)


@dataclass(frozen=True)
class LineStep:
    """One move of a principal variation (:meth:`Solution.line`): the move, who made it (0-based),
    its value for that player (as in :meth:`Solution.moves`) and why it was picked."""

    move: str
    player: int
    value: str | None
    remoteness: int | None
    margin: int | None = None
    expected: float | None = None
    probability: float | None = None
    #: ``"best"`` (the best move: fastest win, slowest loss), ``"most likely roll"`` (chance: the
    #: likeliest outcome, not a choice), ``"most likely choices"`` (simultaneous: the likeliest
    #: joint choice under the optimal mixed strategies)
    why: str = "best"


#: a tiered table's edges are regenerated for reports up to this many moves (8 bytes each)
EDGES_ON_DEMAND = 200_000_000


class TieredSolution(Solution):
    """A solved variant stored tier by tier (:mod:`solver.pipeline.tiered`).

    Lookups (``lookup``, ``moves``, ``root``) read only the rows they need from the tier file of
    each position (a Parquet scan with the key as predicate: row groups whose key range does not
    hold it are skipped), so ``show`` and ``play`` never load the table whole. ``positions``
    (every tier, sorted by key) is built on first use, and so is ``edges`` (regenerated from the
    rules: no edges table is stored); reports of tables too large for that read :meth:`scan`.
    """

    def __init__(self, game: Game, positions: pl.DataFrame | None, meta: dict[str, Any], path: Path,
                 edges: pl.DataFrame | None = None, setups: pl.DataFrame | None = None) -> None:
        self.game, self.meta, self.path = game, meta, path
        self.setups = read_setups(path) if meta.get("setups_file") else None
        self._cols = {}
        self._positions = positions
        self._edges: pl.DataFrame | None = None
        self._edges_built = False
        self._files = {int(t["tier"]): Path(path) / t["file"] for t in meta.get("tiers", [])}

    @property
    def positions(self) -> pl.DataFrame:  # type: ignore[override]
        if self._positions is None:
            from solver.pipeline.tiered import read_tier

            frames = [read_tier(self.path, t) for t in self.meta.get("tiers", [])]
            # (a random setup's start row has the columns of a chance row besides: null elsewhere)
            self._positions = pl.concat(frames, how="diagonal_relaxed").sort("key") if frames else pl.DataFrame()
        return self._positions

    def scan(self) -> pl.LazyFrame:
        """Every tier's rows as a lazy scan of the tier files (not sorted by key): aggregates
        over it stream through the files in batches, so a report of a table too large for memory
        never holds it whole. The loaded table when :attr:`positions` was already read."""
        if self._positions is not None:
            return self._positions.lazy()
        files = [str(self._files[int(t["tier"])]) for t in self.meta.get("tiers", [])]
        return scan_keyed(files) if files else pl.LazyFrame()

    def root_row_values(self) -> dict[str, Any] | None:
        """The start position's row (``{column: value}``, as a scan of the tier files gives it),
        read from its own tier file and row group (``meta['root_tier']``, ``meta['root_key']``):
        a filter of :meth:`scan` on the key would sum every tier's key deltas (Blam! 4x4-2's
        report spent 5 of its 7 minutes finding its start twice). ``None`` when the metadata does
        not say where the start is."""
        tier, key = self.meta.get("root_tier"), self.meta.get("root_key")
        path = None if tier is None or key is None else self._files.get(int(tier))
        if path is None:
            return None
        df = row_of_key(path, int(key))
        return df.row(0, named=True) if df.height == 1 else None

    @property
    def edges(self) -> pl.DataFrame | None:  # type: ignore[override]
        """The edges table, regenerated from the rules on first use (children of every position,
        looked up in :attr:`positions`) when the variant has at most ``EDGES_ON_DEMAND`` moves;
        ``None`` beyond (reports then leave out the sections that need every move)."""
        if not self._edges_built:
            self._edges_built = True
            if int(self.meta["counts"]["edges"]) <= EDGES_ON_DEMAND:
                self._edges = self._regenerate_edges()
        return self._edges

    def _regenerate_edges(self) -> pl.DataFrame:
        from solver.core.arrays import SortedLookup

        keys = self.positions["key"].to_numpy()
        index = SortedLookup(keys)  # built once for every chunk's children
        src_parts, dst_parts, prob_parts = [], [], []
        chance = False
        step = 1 << 16
        for s in range(0, len(keys), step):
            exp = self.game.expand(keys[s : s + step], canonical=self.symmetry)
            deg = np.diff(exp.offsets)
            src_parts.append(np.repeat(np.arange(s, s + len(deg), dtype=np.uint32), deg))
            dst_parts.append(index(exp.children).astype(np.uint32))
            chance |= exp.probs is not None
            prob_parts.append(np.ones(len(exp.children)) if exp.probs is None else np.asarray(exp.probs, np.float64))
        empty = np.empty(0, np.uint32)
        data = {"src": pl.Series(np.concatenate(src_parts) if src_parts else empty, dtype=pl.UInt32),
                "dst": pl.Series(np.concatenate(dst_parts) if dst_parts else empty, dtype=pl.UInt32)}
        if chance:  # the chance outcomes' probabilities, as the whole-graph edges table has them
            data["prob"] = pl.Series(np.concatenate(prob_parts), dtype=pl.Float64)
        return pl.DataFrame(data)

    def row_frame(self, state: Any) -> pl.DataFrame:
        """The one-row table of ``state`` (an error if it is not a reachable position)."""
        key = self.key_of(state)
        keys = np.array([key], dtype=np.uint64)
        tier = int(self.game.round_phase(keys)[0] if self.meta.get("tier_function") == "round_phase"
                   else tiers_of(self.game, keys, int(self.meta.get("tier_slices", 1)))[0])
        path = self._files.get(tier)
        df = None if path is None else row_of_key(path, key)
        if df is None or df.height != 1:
            raise IllegalMoveError("this position is not reachable from the start of the variant")
        return df

    def _row_mixes(self, state: Any, row: dict[str, Any]) -> dict[str, dict[str, float]] | None:
        """Each player's mix at a simultaneous position from its row (``strategy_<p>``), by action
        name; ``None`` when the table has none."""
        g = self.game
        st = g.decode(int(row["key"]))
        out: dict[str, dict[str, float]] = {}
        for p in range(g.num_players):
            probs = row.get(f"strategy_{p + 1}")
            if probs is None:
                return None
            names = [g.action_name(st, a) for a in g.player_actions(st, p)]
            out[str(p + 1)] = {n: float(x) for n, x in zip(names, probs)}
        return out

    def lookup(self, state: Any) -> PositionValue:
        row = self.row_frame(state).row(0, named=True)
        margin = row.get("margin")
        if self.stochastic:
            kind = NodeKind(int(row["kind"])).name.lower()
            return PositionValue(
                value=None, remoteness=None, margin=None, expected=float(row["value"]),
                p_win=row["p_win"], p_loss=row["p_loss"], to_move=int(row["player"]), kind=kind,
                payoff=self.meta.get("payoffs") == "real",
                strategies=self._row_mixes(state, row) if kind == "simultaneous" else None,
                value_interval=((float(row["value_lo"]), float(row["value_hi"]))
                                if row.get("value_lo") is not None else None),
            )
        if int(row["kind"]) == NodeKind.CHANCE:  # a random setup's start (:mod:`tiered_setups`)
            return PositionValue(value=None, remoteness=None, margin=None, expected=float(row["expected"]),
                                 p_win=row["p_win"], p_loss=row["p_loss"], to_move=int(row["player"]),
                                 kind="chance")
        return PositionValue(
            value=VALUE_NAMES[int(row["value"])], remoteness=row["remoteness"],
            margin=None if margin is None else int(margin), to_move=int(row["player"]),
            kind=NodeKind(int(row["kind"])).name.lower(),
        )


def _move_order_key(m: MoveValue) -> tuple:
    """Best first: win fastest, then tie, draw, lose slowest; chance games by expected result."""
    if m.value is None:
        return (-(m.expected or 0.0), 0)
    rank = {"win": 0, "tie": 1, "draw": 2, "lose": 3}[m.value]
    rem = m.remoteness if m.remoteness is not None else 0
    margin = -(m.margin or 0)
    return (rank, rem if m.value != "lose" else -rem, margin)


# --- solving -----------------------------------------------------------------------------

def _paths(game: Game, out: str | Path | None, symmetry: bool) -> Path:
    return variant_dir(game.name, game.variant.variant_id(), root=out, symmetry=symmetry)


def load(game: Game, *, out: str | Path | None = None, symmetry: bool = True) -> Solution:
    """The solved tables of ``game`` from disk; :class:`TableError` if missing, incomplete,
    corrupt or stale (every file is checked, see :func:`solver.tables.read_variant`)."""
    folder = _paths(game, out, symmetry)
    from solver.pipeline import tiered as _tiered

    if _tiered.is_tiered(folder):
        meta = _tiered.read_manifest(folder, game=game.name, variant=game.variant.as_text(),
                                     rules_version=game.rules_version)
        return TieredSolution(game=game, positions=None, meta=meta, path=folder)
    if not (folder / POSITIONS).exists():
        why = _tiered.unfinished(folder)
        if why is not None:
            raise TableError(f"no finished table of {game.variant.label()}: {why}")
    positions, meta, companions = read_variant(
        folder, game=game.name, variant=game.variant.as_text(), rules_version=game.rules_version)
    return Solution(game=game, positions=positions, meta=meta, path=folder / POSITIONS,
                    edges=companions.get(EDGES), setups=companions.get(SETUPS))


def verify(game: Game, *, out: str | Path | None = None, symmetry: bool = True, progress: bool | str = False):
    """Check the stored table of ``game`` against its rules alone, as ``pyramids verify`` does
    (:func:`solver.pipeline.recheck.verify_table` on the table :func:`load` reads): a ``Verdict`` with ``ok``, ``checked``,
    ``positions``, ``problems``, ``seconds`` and ``details``. Never solves: :class:`TableError`
    when there is no table."""
    from solver.pipeline.recheck import verify_table

    t0 = time.perf_counter()
    sol = load(game, out=out, symmetry=symmetry)
    loaded = time.perf_counter() - t0
    verdict = verify_table(game, sol, progress=progress)
    verdict.seconds += loaded
    return verdict


#: the default value-iteration tolerance, and the loosest one accepted
DEFAULT_TOL = 1e-12
MAX_TOL = 1e-3


def check_tol(tol: float) -> float:
    """A value-iteration tolerance must be a number in (0, MAX_TOL]; one-line error otherwise."""
    try:
        t = float(tol)
    except (TypeError, ValueError):
        raise VariantError(f"--tol {tol!r} is not a number; use e.g. --tol 1e-12") from None
    if not math.isfinite(t) or t <= 0 or t > MAX_TOL:
        raise VariantError(f"--tol {tol} must be a number above 0 and at most {MAX_TOL:g}; "
                           f"use e.g. --tol 1e-12 (the default)")
    return t


def want_tiered(game: Game, tiered: bool | None, folder: Path | None = None) -> bool:
    """Whether a solve of ``game`` goes out of core: tier by tier, or round by round for secret
    choices (see :func:`solve`); by default when the
    variant is too large for the whole-graph solver, or a tiered solve of it in ``folder`` is
    unfinished (it is resumed). The decision is :func:`solver.pipeline.route.route`'s."""
    return route(game, tiered=tiered, folder=folder, sweep=False).kind in ("tiers", "rounds")


def check_solvable(game: Game, *, max_positions: int | None = None, tiered: bool = False) -> None:
    """Refuse at once, with one line and the fix, a variant that cannot be solved into a table
    (keys beyond 64 bits) or that is known to exceed ``max_positions``."""
    if max_positions is not None and max_positions < 0:
        raise VariantError(f"--max-positions {max_positions} is negative; give a count, or 0 for no limit")
    why = game.too_big()
    hint = ""
    if game.largest_preset:
        p = game.presets[game.largest_preset]
        sets = " ".join(f"--set {k}={v}" for k, v in p.items())
        hint = (f"; the largest preset that solves here is `pyramids solve {game.name} "
                f"--preset {game.largest_preset}` ({sets})")
    if why is not None:
        default = make_variant(game.name, game.params, {}).as_text()
        sets = " ".join(f"--set {k}={v}" for k, v in game.variant.as_text().items() if v != default[k])
        raise TooBigError(f"{game.variant.label()} is beyond exact solving: {why}, tables take 64"
                          f"{hint}; `pyramids estimate {game.name}{' ' + sets if sets else ''}` "
                          "estimates its balance by self-play")
    large = large_reason(game)
    if large is not None and max_positions is not None and max_positions > 0 and not tiered:
        from solver.pipeline.tiered import supports_tiers

        if supports_tiers(game):
            raise TooBigError(f"{game.variant.label()} is beyond the whole-graph solver here: it has "
                              f"{large}{hint}; --max-positions 0 tries it anyway; --tiered solves it "
                              "tier by tier, out of core")
        rounds = ("; --tiered solves it round by round from its keys, out of core (it says first what that "
                  "takes)" if game.secret_choices and game.has_round_phases else "")
        raise TooBigError(f"{game.variant.label()} is beyond exact solving here: it has {large}{hint}; "
                          f"--max-positions 0 tries it anyway{rounds}")


def _reusable(meta: dict[str, Any], tol: float, bound_rounds: int | None = None) -> str | None:
    """Why a valid table on disk does not answer what was asked (``None``: it does).
    ``bound_rounds`` given: a secret-choice table must have proven bounds, tried with at least
    that many rounds unless certified."""
    if meta.get("solution") == "stochastic":
        stored = meta.get("tolerance")
        if stored is None or float(stored) > tol:
            return (f"it was solved with tolerance {stored}, looser than the {tol:g} asked")
        if bound_rounds is not None and (meta.get("simultaneous_nodes")
                                         or meta.get("simultaneous_engine") == "roundwise"):
            done = meta.get("bounds")
            if done is None:
                return "it has no proven bounds (solved with --no-bounds or by an older version)"
            if (not meta.get("certified") and "rounds" in done and done["rounds"] >= done["max_rounds"]
                    and bound_rounds > done["max_rounds"]):
                return f"its bounds stopped at {done['max_rounds']} rounds, fewer than the {bound_rounds} asked"
    return None


def solve(
    game: Game,
    *,
    out: str | Path | None = None,
    force: bool = False,
    symmetry: bool = True,
    max_positions: int | None = None,
    progress: bool | str = False,
    write_edges: bool = True,
    tol: float = DEFAULT_TOL,
    notes: list[str] | None = None,
    max_sweeps: int | None = None,
    tiered: bool | None = None,
    workers: int | None = None,
    check_estimate: bool = True,
    announce: Callable[[str], None] | None = None,
    low_memory: bool | None = None,
    jobs: int | None = None,
    scheduler: str | None = None,
    setup_limit: int | None = None,
    batch: int | None = None,
    sweep: bool | None = None,
    bounds: bool = True,
    bound_rounds: int | None = None,
    tier_slices: int = 1,
    resume: bool = True,
) -> Solution | SweepResult:
    """Solve ``game`` (or reuse its table on disk) and return the :class:`Solution`; a random
    setup swept as tasks returns the sweep's :class:`~solver.pipeline.tasks.SweepResult`.

    How it is solved (whole graph, tier by tier, or a sweep of setups; which engine) is decided
    by :func:`solver.pipeline.route.route`, as for ``pyramids solve``.

    Parameters
    ----------
    out : path, optional
        Root folder of the tables (default ``tables/``).
    force : bool
        Solve again even if a valid table exists.
    symmetry : bool
        Store one row per symmetry class (default). Values do not depend on it.
    max_positions : int, optional
        Refuse variants with more positions (:class:`~solver.errors.TooBigError`); in a sweep
        of setups, tasks whose setups reach more positions together.
    progress : bool or "lines"
        Show progress bars on standard error; ``"lines"``: a progress line every 10 s instead
        (for logs; :mod:`solver.core.progress`), nothing for a solve that takes less.
    tol : float
        Tolerance of value iteration (chance games). A table on disk is reused only if it was
        solved at this tolerance or a tighter one, and certified.
    notes : list, optional
        Receives one line per thing the user should know (e.g. why a table on disk was not
        reused, or that its values are not certified); the CLI prints them.
    max_sweeps : int, optional
        Sweep limit of value iteration (default 100,000; 2,000 with simultaneous nodes). A
        solve stopped by it is stored as not certified.
    bounds : bool
        Secret simultaneous choices: after value iteration, prove bounds ``value_lo``/``value_hi``
        on every value (each player's strategy evaluated against the other's exact best reply,
        :mod:`solver.engines.bounds`). The table is ``certified`` when every interval is at most
        ``max(tol, 1e-9)`` wide. ``False``: no bounds (faster; the table holds the iterate and an
        error estimate, which proves nothing).
    bound_rounds : int, optional
        Rounds of better strategies tried to narrow the bounds (0: value iteration's strategies
        only; default :data:`~solver.pipeline.whole.BOUND_ROUNDS`). Given, a table on disk
        without bounds, or not certified after fewer rounds than asked, is solved again; not
        given, any valid table is reused. Round by round (Petal Battle ``tiered=True``): the
        most rounds each bound cuts the game off after, one sweep each (default
        :data:`~solver.pipeline.roundwise.BOUND_SWEEPS`); an unfinished run resumes.
    tiered : bool, optional
        Solve tier by tier, out of core (:mod:`solver.pipeline.tiered`): ``True`` always, ``False``
        never, ``None`` (default) when the game names tiers and the variant is one of its
        presets too large for the whole-graph solver. An unfinished tiered solve is resumed.
    workers : int, optional
        Threads solving independent tiers (and expanding positions) at once (default: up to 2).
    check_estimate : bool
        Tiered solves: refuse at once when the size estimate does not fit the machine.
    announce : callable, optional
        Receives lines to show at once, before a long solve starts (the tiered size estimate);
        by default they join ``notes``.
    low_memory : bool, optional
        Tiered solves: solve tiers by repeated passes instead of reverse lists of their moves
        (about 24 bytes per position of a tier instead of 100-150): ``True`` every tier, ``False``
        none, ``None`` (default) every tier of a game without margins (measured as fast on
        Override 4x4: :func:`solver.pipeline.tiered.passes_by_default`) and, in scored games, the
        tiers whose lists would not fit the free memory.
    jobs, scheduler : optional
        Tiered solves: run the tiers of each height as Dask tasks, on a local cluster of ``jobs``
        processes or on the cluster at ``scheduler`` (whose workers must see ``out`` at the same
        path). Random setups: the Dask cluster of their sweep (below).
    tier_slices : int
        Tiered solves (and unions of setups): cut each of the game's tiers into this many slices
        of about equal size, solved apart (each a task of its own on Dask), so the largest task
        holds a ``tier_slices``-th of the largest tier. Only for games whose every move leaves its
        tier (:attr:`Game.tiers_rise_strictly`: Greener); default 1. The table is the same.
    setup_limit, batch, sweep : optional
        Random setups (``setup=all``, :func:`solver.pipeline.tasks.sweepable`): solved as a sweep
        of setup classes, one Dask task per ``batch`` of them (default: sized to about 20 s a
        task), at most ``setup_limit`` more classes per call (resumable), when any of ``jobs``,
        ``scheduler``, ``setup_limit``, ``batch`` is given or the variant has more arrangements
        than :data:`solver.pipeline.tasks.SWEEP_MIN_ARRANGEMENTS`; ``sweep=False`` never sweeps
        (the whole graph, as before), ``sweep=True`` always (an error when it cannot be). A sweep
        returns a :class:`~solver.pipeline.tasks.SweepResult` (``state.done``: the finished
        setups; the table is under ``<out>/<game>/<variant-id>/sweep/``, read by
        :func:`read_sweep`), not a :class:`Solution`; ``tol``, ``tiered`` and the tiered options
        do not apply to it.
    resume : bool
        Round by round: a table on disk whose work folder could go on under the limits asked
        (more sweeps of the values or of a bound than it holds, :func:`solver.pipeline.roundwise.to_resume`)
        is resumed (default); ``False`` uses the table as it is, with a note (``show``,
        ``play`` and ``report`` do this: looking at a table never sweeps for an hour).
    """
    folder = _paths(game, out, symmetry)
    how = route(game, tiered=tiered, folder=folder, sweep=sweep,
                sweep_options={"jobs": jobs, "scheduler": scheduler, "setup_limit": setup_limit,
                               "batch": batch})
    from solver.pipeline import tiered as _tiered

    union = how.kind == "sweep" and tiered is True and batch is None  # a sweep's classes solved together
    tier_slices = check_slices(game, tier_slices)
    if tier_slices > 1 and how.kind != "tiers" and not union:
        raise VariantError(f"--tier-slices {tier_slices} cuts the tiers of a tiered solve: add --tiered")
    if how.kind == "sweep":
        # --tiered (without --batch): the classes of this call solved together, tier by tier
        return sweep_setups(game, out=out, symmetry=symmetry, force=force, limit=setup_limit, jobs=jobs,
                            scheduler=scheduler, batch=batch, progress=progress, notes=notes,
                            announce=announce, max_positions=max_positions,
                            union=partial(_tiered.solve_tiered, tier_slices=tier_slices) if union else None,
                            workers=workers)
    tol = check_tol(tol)
    if bound_rounds is not None and bound_rounds < 0:
        raise VariantError(f"--bound-rounds {bound_rounds} must be at least 0 (0: value iteration's strategies only)")
    use_tiers = how.kind == "tiers"
    check_solvable(game, max_positions=max_positions, tiered=how.kind in ("tiers", "rounds"))
    if use_tiers and low_memory and _tiered.stochastic(game):
        raise VariantError(f"--low-memory solves tiers without dice; {game.variant.label()} has dice, its "
                           "tiers are solved by value iteration with their moves in memory: drop --low-memory")
    notes = notes if notes is not None else []
    path = folder / POSITIONS

    from solver.pipeline import roundwise as _roundwise

    if (path.exists() or _tiered.is_tiered(folder)) and not force:
        try:
            sol = load(game, out=out, symmetry=symmetry)
        except TableError as exc:
            meta = _meta_or_none(path)
            if meta is not None and (meta.get("game") != game.name
                                     or meta.get("variant") != game.variant.as_text()):
                raise
            notes.append(f"the table on disk was not used ({exc.problem}); solving again")
        else:
            # (round by round the bounds are asked unless --no-bounds: a table without them is solved again)
            asked = bound_rounds if bound_rounds is not None else 0 if how.kind == "rounds" else None
            why = _reusable(sol.meta, tol, asked if bounds else None)
            # (a round-by-round table that did not converge keeps its work folder: the same command
            # resumes it when it can add something under the limits asked)
            more = (_roundwise.to_resume(folder, sol.meta, tol=tol, max_sweeps=max_sweeps, bounds=bounds,
                                         bound_sweeps=bound_rounds)
                    if why is None and how.kind == "rounds" and _roundwise.unfinished(folder) is not None else None)
            if more is not None and resume:
                why = f"{more}; resuming its work folder"
            elif more is not None:
                notes.append(f"the table on disk is used as it is, though {more}: `pyramids solve` of the "
                             "variant resumes its work folder")
            if why is None:
                if sol.stochastic and not sol.meta.get("certified", True):
                    notes.append("the table on disk is not certified: "
                                 + sol.meta.get("not_certified_because", "see its metadata"))
                return sol
            notes.append(f"the table on disk was not reused: {why}; solving again")
    if how.kind == "rounds":
        t0 = time.perf_counter()
        pipeline.solve_rounds_variant(game, folder, symmetry=symmetry, force=force, tol=tol, max_sweeps=max_sweeps,
                                      workers=workers, progress=progress, announce=announce, notes=notes,
                                      check=check_estimate, max_positions=max_positions, bounds=bounds,
                                      bound_sweeps=bound_rounds)
        sol = load(game, out=out, symmetry=symmetry)
        sol.meta["write_seconds"] = max(0.0, time.perf_counter() - t0 - float(sol.meta["solve_seconds"]))
        return sol
    if use_tiers:
        t0 = time.perf_counter()
        pipeline.solve_tiered_variant(game, out=out, symmetry=symmetry, force=force,
                                      max_positions=max_positions, workers=workers, progress=progress,
                                      notes=notes, check=check_estimate, announce=announce,
                                      low_memory=low_memory, jobs=jobs, scheduler=scheduler, tol=tol,
                                      max_sweeps=max_sweeps, tier_slices=tier_slices)
        sol = load(game, out=out, symmetry=symmetry)
        sol.meta["write_seconds"] = max(0.0, time.perf_counter() - t0 - float(sol.meta["solve_seconds"]))
        return sol
    positions, meta, edges, setups = pipeline.solve_variant(
        game, folder, symmetry=symmetry, max_positions=max_positions, progress=progress,
        write_edges=write_edges, tol=tol, max_sweeps=max_sweeps, engine=how.engine,
        bound_rounds=(BOUND_ROUNDS if bound_rounds is None else bound_rounds) if bounds else None)
    return Solution(game=game, positions=positions, meta=meta, path=path, edges=edges, setups=setups)


def sweep(game: Game, *, out: str | Path | None = None, symmetry: bool = True, force: bool = False,
          limit: int | None = None, jobs: int | None = None, scheduler: str | None = None,
          batch: int | None = None, progress: bool = False, notes: list[str] | None = None,
          max_positions: int | None = None):
    """Solve a random-setup variant (``setup=all``) one batch of setup classes per Dask task,
    resuming the sweep on disk; returns :class:`solver.pipeline.tasks.SweepResult`. The finished
    setups are in ``<out>/<game>/<variant-id>/sweep/setups.parquet`` (see
    :mod:`solver.pipeline.tasks`; :func:`read_sweep` reads it). ``max_positions``: the most
    positions one task may reach."""
    from solver.pipeline import tasks

    return tasks.sweep_setups(game, out=out, symmetry=symmetry, force=force, limit=limit, jobs=jobs,
                              scheduler=scheduler, batch=batch, progress=progress, notes=notes,
                              max_positions=max_positions)


def read_sweep(game: Game, *, out: str | Path | None = None, symmetry: bool = True):
    """A sweep's setups table and metadata (``None`` when there is none)."""
    from solver.pipeline import tasks

    return tasks.read_sweep(game, out=out, symmetry=symmetry)


def _meta_or_none(path: Path) -> dict[str, Any] | None:
    try:
        return read_meta(path)
    except TableError:
        return None


# the pipeline's names, as earlier versions of this module had them
solve_graph = pipeline.solve_graph
_positions_frame = pipeline.positions_frame_of
_edges_frame = pipeline.edges_frame
_meta = pipeline.table_meta
