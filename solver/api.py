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
from datetime import datetime, timezone
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable

import numpy as np
import polars as pl

import solver
from solver.core.game import Game, NodeKind, Result
from solver.core.values import DRAW, FLIP, LOSE, NO_REMOTENESS, TIE, VALUE_NAMES, WIN
from solver.core.arrays import ranges
from solver.engines.enumerate import Graph, enumerate_positions
from solver.errors import IllegalMoveError, TableError, TooBigError, VariantError
from solver.faults import fault_point
from solver.games import make_game
from solver.tables import (
    EDGES,
    POSITIONS,
    positions_frame,
    read_meta,
    read_variant,
    variant_dir,
    write_variant,
)

__all__ = ["make_game", "solve", "load", "Solution", "PositionValue", "MoveValue", "solve_graph"]

SETUPS = "setups.parquet"


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
            return PositionValue(
                value=None, remoteness=None, margin=margin, expected=float(self.column("value")[i]),
                p_win=None if p_win is None else float(p_win), p_loss=None if p_loss is None else float(p_loss),
                to_move=to_move, kind=kind,
                strategies=self.strategies_at(i) if kind == "simultaneous" else None,
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
        if "strategy_1" not in self.positions.columns:
            return None
        g = self.game
        state = g.decode(int(self.column("key")[i]))
        out: dict[str, dict[str, float]] = {}
        for p in range(g.num_players):
            probs = self.positions[f"strategy_{p + 1}"][i]
            if probs is None:
                return None
            names = [g.action_name(state, a) for a in g.player_actions(state, p)]
            out[str(p + 1)] = {n: float(x) for n, x in zip(names, probs)}
        return out

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


class TieredSolution(Solution):
    """A solved variant stored tier by tier (:mod:`solver.engines.tiered`).

    Lookups (``lookup``, ``moves``, ``root``) read only the rows they need from the tier file of
    each position (a Parquet scan with the key as predicate: row groups whose key range does not
    hold it are skipped), so ``show`` and ``play`` never load the table whole. ``positions``
    (every tier, sorted by key) is built on first use, for reports; ``edges`` is ``None``
    (children are regenerated from the rules instead).
    """

    def __init__(self, game: Game, positions: pl.DataFrame | None, meta: dict[str, Any], path: Path,
                 edges: pl.DataFrame | None = None, setups: pl.DataFrame | None = None) -> None:
        self.game, self.meta, self.path, self.edges, self.setups = game, meta, path, None, None
        self._cols = {}
        self._positions = positions
        self._files = {int(t["tier"]): Path(path) / t["file"] for t in meta.get("tiers", [])}

    @property
    def positions(self) -> pl.DataFrame:  # type: ignore[override]
        if self._positions is None:
            from solver.engines.tiered import read_tier

            frames = [read_tier(self.path, t) for t in self.meta.get("tiers", [])]
            self._positions = pl.concat(frames).sort("key") if frames else pl.DataFrame()
        return self._positions

    def row_frame(self, state: Any) -> pl.DataFrame:
        """The one-row table of ``state`` (an error if it is not a reachable position)."""
        key = self.key_of(state)
        tier = int(self.game.tier_of(np.array([key], dtype=np.uint64))[0])
        path = self._files.get(tier)
        df = None if path is None else pl.scan_parquet(path).filter(pl.col("key") == key).collect()
        if df is None or df.height != 1:
            raise IllegalMoveError("this position is not reachable from the start of the variant")
        return df

    def lookup(self, state: Any) -> PositionValue:
        row = self.row_frame(state).row(0, named=True)
        margin = row.get("margin")
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
    from solver.engines import tiered as _tiered

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


#: win probabilities further than this from the value are not earned by the stored strategies
P_WIN_GAP = 1e-6

#: default sweep limit of value iteration with secret simultaneous choices: their values can
#: converge like 1/n (Everett's recursive games), so an unbounded run could take hours; a run
#: stopped here is stored as not certified, with an error estimate
MAX_SWEEPS_SIMULTANEOUS = 2_000

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


def want_tiered(game: Game, tiered: bool | None) -> bool:
    """Whether a solve of ``game`` goes tier by tier (see :func:`solve`)."""
    from solver.engines.tiered import supports_tiers

    if tiered is None:
        return supports_tiers(game) and game.known_large() is not None
    if tiered and not supports_tiers(game):
        raise VariantError(f"{game.name} does not name tiers, so it cannot be solved tier by tier; "
                           "solve it without --tiered")
    return bool(tiered)


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
        raise TooBigError(f"{game.variant.label()} is beyond exact solving: {why}, tables take 64"
                          f"{hint} (full-size balance estimates by self-play are not available yet)")
    large = game.known_large()
    if large is not None and max_positions is not None and max_positions > 0 and not tiered:
        raise TooBigError(f"{game.variant.label()} is beyond exact solving here: it has {large}{hint}; "
                          "--max-positions 0 tries it anyway")


def _reusable(meta: dict[str, Any], tol: float) -> str | None:
    """Why a valid table on disk does not answer what was asked (``None``: it does)."""
    if meta.get("solution") == "stochastic":
        stored = meta.get("tolerance")
        if stored is None or float(stored) > tol:
            return (f"it was solved with tolerance {stored}, looser than the {tol:g} asked")
    return None


def solve(
    game: Game,
    *,
    out: str | Path | None = None,
    force: bool = False,
    symmetry: bool = True,
    max_positions: int | None = None,
    progress: bool = False,
    write_edges: bool = True,
    tol: float = DEFAULT_TOL,
    notes: list[str] | None = None,
    max_sweeps: int | None = None,
    tiered: bool | None = None,
    workers: int | None = None,
) -> Solution:
    """Solve ``game`` (or reuse its table on disk) and return the :class:`Solution`.

    Parameters
    ----------
    out : path, optional
        Root folder of the tables (default ``tables/``).
    force : bool
        Solve again even if a valid table exists.
    symmetry : bool
        Store one row per symmetry class (default). Values do not depend on it.
    max_positions : int, optional
        Refuse variants with more positions (:class:`~solver.errors.TooBigError`).
    progress : bool
        Show progress bars on standard error.
    tol : float
        Tolerance of value iteration (chance games). A table on disk is reused only if it was
        solved at this tolerance or a tighter one, and certified.
    notes : list, optional
        Receives one line per thing the user should know (e.g. why a table on disk was not
        reused, or that its values are not certified); the CLI prints them.
    max_sweeps : int, optional
        Sweep limit of value iteration (default 100,000; 2,000 with simultaneous nodes). A
        solve stopped by it is stored as not certified, with an error estimate.
    tiered : bool, optional
        Solve tier by tier, out of core (:mod:`solver.engines.tiered`): ``True`` always, ``False``
        never, ``None`` (default) when the game names tiers and the variant is one of its
        presets too large for the whole-graph solver. An unfinished tiered solve is resumed.
    workers : int, optional
        Processes solving independent tiers at once (default: up to 2).
    """
    tol = check_tol(tol)
    use_tiers = want_tiered(game, tiered)
    check_solvable(game, max_positions=max_positions, tiered=use_tiers)
    notes = notes if notes is not None else []
    folder = _paths(game, out, symmetry)
    path = folder / POSITIONS
    from solver.engines import tiered as _tiered

    if (path.exists() or _tiered.is_tiered(folder)) and not force:
        try:
            sol = load(game, out=out, symmetry=symmetry)
        except TableError as exc:
            meta = _meta_or_none(path)
            if meta is not None and (meta.get("game") != game.name
                                     or meta.get("variant") != game.variant.as_text()):
                raise
            notes.append(f"the table on disk was not used ({exc}); solving again")
        else:
            why = _reusable(sol.meta, tol)
            if why is None:
                if sol.stochastic and not sol.meta.get("certified", True):
                    notes.append("the table on disk is not certified: "
                                 + sol.meta.get("not_certified_because", "see its metadata"))
                return sol
            notes.append(f"the table on disk was not reused: {why}; solving again")
    if use_tiers:
        t0 = time.perf_counter()
        _tiered.solve_tiered(game, out=out, symmetry=symmetry, force=force, max_positions=max_positions,
                             workers=workers, progress=progress, notes=notes)
        sol = load(game, out=out, symmetry=symmetry)
        sol.meta["write_seconds"] = max(0.0, time.perf_counter() - t0 - float(sol.meta["solve_seconds"]))
        return sol
    t0 = time.perf_counter()
    graph = enumerate_positions(
        game, symmetry=symmetry, max_positions=max_positions,
        progress=_bar("enumerate", "positions") if progress else None,
    )
    t_enum = time.perf_counter() - t0
    fault_point("solve")
    columns, extra_meta, setups = solve_graph(game, graph, progress=progress, tol=tol,
                                              max_sweeps=max_sweeps)
    t_solve = time.perf_counter() - t0 - t_enum
    fault_point("solved")
    elapsed = time.perf_counter() - t0
    positions = _positions_frame(graph, columns)
    edges = _edges_frame(graph) if write_edges else None
    meta = _meta(game, graph, positions, symmetry=symmetry, elapsed=elapsed,
                 timings={"enumerate": t_enum, "solve": t_solve}, extra=extra_meta)
    frames = {POSITIONS: positions}
    if edges is not None:
        frames[EDGES] = edges
    if setups is not None:
        frames[SETUPS] = setups
    write_variant(folder, frames, meta)
    meta["write_seconds"] = time.perf_counter() - t0 - elapsed
    return Solution(game=game, positions=positions, meta=meta, path=path, edges=edges, setups=setups)


def _meta_or_none(path: Path) -> dict[str, Any] | None:
    try:
        return read_meta(path)
    except TableError:
        return None


def solve_graph(
    game: Game, graph: Graph, *, progress: bool = False, tol: float = 1e-12,
    max_sweeps: int | None = None,
) -> tuple[dict[str, np.ndarray], dict[str, Any], pl.DataFrame | None]:
    """Pick the engine for ``graph`` and return the table columns, extra metadata, setups table.

    * decision/terminal nodes only: retrograde (value, remoteness, margin);
    * chance nodes only at the start (random setups): retrograde below them, and the expected
      result at each chance node (column ``expected``), plus a table of the setups;
    * chance nodes inside play: value iteration (expected result and win probabilities).
    """
    from solver.engines.retrograde import retrograde

    chance = graph.kind == NodeKind.CHANCE
    simultaneous = graph.kind == NodeKind.SIMULTANEOUS
    if game.num_players > 2:
        if chance.any() or simultaneous.any():
            raise TooBigError("3-4 player games with chance or hidden choices are not supported yet")
        return _solve_paranoid(game, graph)
    if not chance.any() and not simultaneous.any():
        solved = retrograde(graph, scored=game.scored)
        cols = {"value": solved.value.astype(np.uint8), "remoteness": solved.remoteness}
        if solved.margin is not None:
            cols["margin"] = solved.margin
        return cols, {"solver": "retrograde", "solution": "deterministic"}, None
    if not simultaneous.any() and _chance_only_at_start(graph):
        return _solve_setups(game, graph)
    from solver.engines.value_iteration import value_iteration

    tier_of = getattr(game, "tier_of", None)
    tiers = tier_of(graph.keys) if tier_of is not None else None
    if max_sweeps is None:
        max_sweeps = MAX_SWEEPS_SIMULTANEOUS if simultaneous.any() else 100_000
    sol = value_iteration(graph, tiers=tiers, tol=tol, max_sweeps=max_sweeps,
                          progress=_vi_bar() if progress else None)
    cols: dict[str, Any] = {"value": sol.value, "p_win": sol.p_win, "p_loss": sol.p_loss}
    strategies = getattr(sol, "strategies", None) or {}
    extra: dict[str, Any] = {}
    if simultaneous.any():
        # Win probabilities are those the stored (stationary) strategies earn. In recursive games
        # optimal stationary strategies need not exist: only play that changes over time gets
        # within any margin of the value. Where the strategies found do not earn the value, the
        # win probability is left undefined (null) rather than stated wrongly.
        undefined = np.abs(sol.p_win - sol.p_loss - sol.value) > P_WIN_GAP
        cols["p_win"] = np.where(undefined, np.nan, sol.p_win)
        cols["p_loss"] = np.where(undefined, np.nan, sol.p_loss)
        extra["p_win_undefined"] = int(undefined.sum())
        # the same expected result from Player 1's point of view (two players, zero-sum)
        cols["value_player1"] = np.where(np.asarray(graph.to_move) == 0, sol.value, -sol.value)
        for p in range(game.num_players):
            column: list[list[float] | None] = [None] * graph.n
            for row, mixes in strategies.items():
                column[int(row)] = [float(x) for x in mixes[p]]
            cols[f"strategy_{p + 1}"] = column
        for k in ("lp_solves", "lp_seconds", "sweeps", "certified", "residual"):
            if k in sol.stats:
                extra[f"simultaneous_{k}"] = sol.stats[k]
        extra["simultaneous_nodes"] = int(simultaneous.sum())
        extra["max_sweeps"] = int(max_sweeps)
        extra["error_estimate"] = float(sol.stats.get("error_estimate", 0.0))
        if not (sol.stats.get("certified", False) and sol.converged):
            extra["not_certified_because"] = (
                "decision cycles beside simultaneous nodes" if sol.stats.get("plain_cycles")
                else f"value iteration stopped after {sol.sweeps:,} sweeps with a last change of "
                     f"{sol.stats.get('last_sweep_change', float('nan')):.1e} (error estimate "
                     f"{sol.stats.get('error_estimate', float('nan')):.1e}); raise --max-sweeps")
    return cols, {**extra, "solver": "value_iteration" + ("+matrix games (LP)" if simultaneous.any() else ""),
                  "solution": "stochastic",
                  "sweeps": int(sol.sweeps), "residual": float(sol.residual), "tolerance": tol,
                  "converged": bool(sol.converged),
                  "certified": bool(sol.stats.get("certified", False)) and bool(sol.converged)}, None


def _solve_paranoid(game: Game, graph: Graph):
    """3-4 players: for each seat, the two-sided question "can this seat force the strictly
    highest score against all other seats together?" (the paranoid reduction), by retrograde.

    Columns ``seat<i>_value``/``seat<i>_remoteness``/``seat<i>_margin`` (seats numbered from 1)
    are from **seat i's** point of view wherever it is: win = seat i can force the strictly
    highest score, lose = the others can stop it, draw = endless play; the margin is seat i's
    score minus the best other score under margin-optimal play of both sides.
    """
    from solver.engines.retrograde import retrograde

    terminal_rows = np.flatnonzero(graph.kind == NodeKind.TERMINAL)
    outcomes = [game.outcome(game.decode(int(k))) for k in graph.keys[terminal_rows].tolist()]
    cols: dict[str, np.ndarray] = {}
    starts: dict[str, Any] = {}
    for seat in range(game.num_players):
        side = np.where(graph.to_move == seat, 0, 1).astype(np.int8)
        result = np.zeros(graph.n, dtype=np.int8)
        margin = np.zeros(graph.n, dtype=np.int32)
        for row, out in zip(terminal_rows.tolist(), outcomes):
            won = out.results[seat] == Result.WIN
            seat_margin = out.margin(seat) if out.scores is not None else 0
            if side[row] == 0:
                result[row], margin[row] = (1 if won else -1), seat_margin
            else:
                result[row], margin[row] = (-1 if won else 1), -seat_margin
        view = Graph(keys=graph.keys, kind=graph.kind, to_move=side, ply=graph.ply,
                     offsets=graph.offsets, child=graph.child, probs=None, result=result,
                     margin=margin, root=graph.root, symmetry=graph.symmetry)
        solved = retrograde(view, scored=game.scored)
        mine = side == 0
        value = np.where(mine, solved.value, FLIP[solved.value]).astype(np.uint8)
        cols[f"seat{seat + 1}_value"] = value
        cols[f"seat{seat + 1}_remoteness"] = solved.remoteness
        if solved.margin is not None:
            cols[f"seat{seat + 1}_margin"] = np.where(mine, solved.margin, -solved.margin).astype(np.int16)
        r = graph.root
        rem = int(solved.remoteness[r])
        starts[str(seat + 1)] = {
            "value": VALUE_NAMES[int(value[r])],
            "remoteness": None if rem == NO_REMOTENESS else rem,
            "margin": int(cols[f"seat{seat + 1}_margin"][r]) if solved.margin is not None else None,
        }
    extra = {"solver": "retrograde (paranoid, per seat)", "solution": "paranoid",
             "question": "can this seat force the strictly highest score against all other seats together?",
             "seats": starts}
    return cols, extra, None


def _chance_only_at_start(graph: Graph) -> bool:
    """No decision or terminal node leads to a chance node (chance = random setup only)."""
    chance = graph.kind == NodeKind.CHANCE
    src = graph.parent_of_edge()
    into_chance = chance[graph.child]
    return not bool((into_chance & ~chance[src]).any())


def _solve_setups(game: Game, graph: Graph):
    """Retrograde below setup chance nodes; expected result (+1/0/-1 per setup) at the chance nodes."""
    from solver.engines.retrograde import retrograde

    chance = graph.kind == NodeKind.CHANCE
    # Solve the decision part: give chance rows no edges so retrograde sees them as isolated.
    counts = np.diff(graph.offsets)
    counts_det = np.where(chance, 0, counts)
    keep = np.repeat(~chance, counts)
    sub = Graph(
        keys=graph.keys, kind=np.where(chance, NodeKind.TERMINAL, graph.kind).astype(np.int8),
        to_move=graph.to_move, ply=graph.ply,
        offsets=np.concatenate([[0], np.cumsum(counts_det)]).astype(np.int64),
        child=graph.child[keep], probs=None, result=graph.result, margin=graph.margin,
        root=graph.root, symmetry=graph.symmetry,
    )
    solved = retrograde(sub, scored=game.scored)
    value = solved.value.astype(np.uint8)
    remoteness = solved.remoteness.copy()
    # chance nodes only lead to decision nodes here (one level of chance): their expectations
    # need only their own (few) edges
    crow = np.flatnonzero(chance)
    cedge = ranges(graph.offsets[crow], counts[crow])
    src = np.repeat(crow, counts[crow])
    kids = graph.child[cedge]
    probs = graph.probs[cedge] if graph.probs is not None else np.ones(len(cedge))
    score = np.array([-1.0, 0.0, 0.0, 1.0])  # lose, draw, tie, win for the side to move
    same = graph.to_move[kids] == graph.to_move[src]
    child_score = np.where(same, 1.0, -1.0) * score[value[kids]]
    expected = np.bincount(src, weights=probs * child_score, minlength=graph.n)
    value[chance] = DRAW  # placeholder code for chance rows (their value is in `expected`)
    remoteness[chance] = NO_REMOTENESS
    cols: dict[str, np.ndarray] = {"value": value, "remoteness": remoteness, "expected": expected}
    margin_exp = None
    if solved.margin is not None:
        margin = solved.margin.copy()
        child_margin = np.where(same, 1, -1) * margin[kids].astype(np.float64)
        margin_exp = np.bincount(src, weights=probs * child_margin, minlength=graph.n)
        margin[chance] = 0
        cols["margin"] = margin
        cols["expected_margin"] = margin_exp
    # The setups table: one row per outcome of the start's chance node.
    root = graph.root
    lo, hi = graph.offsets[root], graph.offsets[root + 1]
    rows = graph.child[lo:hi]
    root_probs = graph.probs[lo:hi] if graph.probs is not None else np.ones(hi - lo)
    root_state = game.decode(int(graph.keys[root]))
    outcomes = game.chance_outcomes(root_state) if chance[root] else []
    exact = [p for _, p in outcomes]
    counts = game.chance_counts(root_state) if chance[root] else None
    if counts is not None and len(counts) == len(rows):
        mult = list(counts)
    else:
        mult = _multiplicities(exact) if len(exact) == len(rows) else [None] * len(rows)
    root_player = int(graph.to_move[root])
    sign = np.where(graph.to_move[rows] == root_player, 1, -1)
    codes = value[rows]
    eff = np.where(sign == 1, codes, FLIP[codes])
    setups = pl.DataFrame({
        "key": graph.keys[rows],
        "layout": [game.describe_state(game.decode(int(k))) for k in graph.keys[rows]],
        "probability": root_probs,
        "multiplicity": pl.Series(mult, dtype=pl.Int64),
        "value": pl.Series([VALUE_NAMES[c] for c in eff], dtype=pl.Utf8),
        "remoteness": remoteness[rows],
        **({"margin": (sign * cols["margin"][rows]).astype(np.int16)} if "margin" in cols else {}),
    })
    extra = {"solver": "retrograde+setups", "solution": "deterministic",
             "setup_player": root_player,
             "expected_result": float(expected[root]) if chance[root] else None}
    if margin_exp is not None and chance[root]:
        extra["expected_margin"] = float(margin_exp[root])
    return cols, extra, setups


def _multiplicities(probs: list[Fraction]) -> list[int]:
    """Integer weights proportional to exact probabilities (smallest such integers)."""
    denom = 1
    for p in probs:
        denom = denom * Fraction(p).denominator // math.gcd(denom, Fraction(p).denominator)
    return [int(Fraction(p) * denom) for p in probs]


def _positions_frame(graph: Graph, cols: dict[str, np.ndarray]) -> pl.DataFrame:
    return positions_frame(graph.keys, graph.to_move, graph.kind, graph.ply, np.diff(graph.offsets), cols)


def _edges_frame(graph: Graph) -> pl.DataFrame:
    data: dict[str, Any] = {
        "src": pl.Series(graph.parent_of_edge().astype(np.uint32), dtype=pl.UInt32),
        "dst": pl.Series(graph.child.astype(np.uint32), dtype=pl.UInt32),
    }
    if graph.probs is not None:
        data["prob"] = pl.Series(graph.probs, dtype=pl.Float64)
    return pl.DataFrame(data)


def _meta(game: Game, graph: Graph, positions: pl.DataFrame, *, symmetry: bool, elapsed: float,
          timings: dict[str, float], extra: dict[str, Any]) -> dict[str, Any]:
    counts: dict[str, Any] = {
        "positions": graph.n,
        "edges": graph.num_edges,
        "terminal": int((graph.kind == NodeKind.TERMINAL).sum()),
        "chance": int((graph.kind == NodeKind.CHANCE).sum()),
    }
    if extra.get("solution") == "deterministic":
        det = graph.kind != NodeKind.CHANCE
        codes = positions["value"].to_numpy()[det]
        counts["by_value"] = {name: int((codes == i).sum()) for i, name in enumerate(VALUE_NAMES)}
    meta = {
        "game": game.name,
        "variant": game.variant.as_text(),
        "variant_id": game.variant.variant_id(),
        "label": game.variant.label(),
        "rules_version": game.rules_version,
        "toolkit_version": solver.__version__,
        "symmetry": symmetry,
        "counts": counts,
        "root_key": int(graph.keys[graph.root]),
        "root_row": graph.root,
        "solve_seconds": elapsed,
        "timings": timings,
        "graph_bytes": int(graph.nbytes()),
        "scored": bool(game.scored),
        "players": game.num_players,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    meta.update(extra)
    return meta


def _bar(desc: str, unit: str) -> Callable[[int, int, int], None]:
    """A tqdm progress callback for enumeration (positions found so far, by ply)."""
    from tqdm import tqdm

    bar = tqdm(desc=desc, unit=" " + unit, unit_scale=True, leave=False)

    def update(ply: int, total: int, frontier: int) -> None:
        bar.set_postfix(ply=ply, frontier=frontier)
        bar.update(total - bar.n)
        if frontier == 0:
            bar.close()

    return update


def _vi_bar() -> Callable[[str, int, int, float], None]:
    """A tqdm progress callback for value iteration (stage, tier, sweeps so far, residual)."""
    from tqdm import tqdm

    bar = tqdm(desc="value iteration", unit=" sweeps", leave=False)

    def update(stage: str, tier: int, sweeps: int, residual: float) -> None:
        bar.set_postfix(stage=stage, tier=tier, residual=f"{residual:.1e}")
        if sweeps > bar.n:
            bar.update(sweeps - bar.n)
        else:
            bar.refresh()

    return update
