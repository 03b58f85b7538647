"""Metrics of a solved variant, computed from its tables only (polars, numpy, scipy).

Every function takes the ``positions`` table (and, where moves matter, the ``edges`` table) in the
format of :mod:`solver.tables`; nothing here knows any particular game. The functions that need
no moves (counts by value, remoteness and ply, the verdict, the structure counts) also take a
``polars.LazyFrame``, such as a scan of a tiered table's files
(:meth:`solver.api.TieredSolution.scan`): they then run as streaming aggregates and never hold
the table whole. Three kinds of table are
handled (see :func:`solution_kind`):

``deterministic``
    two-player perfect-information games: value codes 0 lose, 1 draw, 2 tie, 3 win (side to
    move), ``remoteness`` (null for draws) and ``margin`` in scored games.
``setups``
    the same below a chance root that deals a random setup: chance rows (``kind`` 1) carry the
    expected result in ``expected``; :attr:`solver.api.Solution.setups` lists the setups.
``stochastic``
    chance inside play: ``value`` is the expected result in [-1, 1] (side to move), with
    ``p_win`` / ``p_loss``; there is no remoteness.

Conventions used throughout:

* a position's value is from its side to move; a *move's* value is from the mover's point of
  view (the child's value flipped when the opponent moves next, kept when the mover moves again);
* "first player" is the player to move at the start (the ``player`` of the root row);
* the *perfect* player picks uniformly among the best moves in GAMESMAN's order: win fastest,
  then tie, draw, lose slowest, then the larger score margin (stochastic games: the largest
  expected result, then the largest win probability, then the shortest way to an end); the
  *random* player picks uniformly among the legal moves;
* a game *length* counts plies (decision moves); chance events such as the setup deal or a dice
  roll are not plies.
"""

from __future__ import annotations

import math

from dataclasses import dataclass, field
from typing import Any, Literal, Mapping, Sequence

import numpy as np
import polars as pl
import scipy.sparse as sp
from scipy.sparse import csgraph
from scipy.sparse import linalg as sla

from solver.core.arrays import unique, unique_counts
from solver.core.stats import SHOWN_VALUES, setup_summary  # noqa: F401 - re-exported
from solver.core.values import DRAW, FLIP, LOSE, NO_REMOTENESS, TIE, VALUE_NAMES, WIN

__all__ = [
    "DECISION", "CHANCE", "SIMULTANEOUS", "TERMINAL",
    "Frame", "Kind", "collect", "solution_kind", "root_row", "root_values", "num_players", "count", "has_chance", "Seats",
    "Verdict", "verdict", "setup_summary", "setups_from_tables",
    "value_remoteness_table", "value_by_ply", "expected_histogram", "expected_by_ply", "expected_summary",
    "branching_counts",
    "move_values", "opening_moves",
    "Difficulty", "decision_difficulty",
    "PlayStats", "policy_weights", "terminal_outcomes", "play_statistics",
    "Structure", "cyclic_positions", "structure",
]

#: node kinds as stored in the ``kind`` column (solver.core.game.NodeKind)
DECISION, CHANCE, SIMULTANEOUS, TERMINAL = 0, 1, 2, 3

Kind = Literal["deterministic", "setups", "stochastic"]
#: a positions table: in memory, or a lazy scan of its files (aggregates only)
Frame = pl.DataFrame | pl.LazyFrame
Policy = Literal["random", "perfect"]

#: result points of a value for the side to move (+1 win, -1 loss, 0 tie / endless)
POINTS = np.array([-1.0, 0.0, 0.0, 1.0])
from analysis import EXACT_LIMIT  # noqa: E402,F401 - (kept light for the command's --help)
#: transient positions up to which the absorbing chain is solved by sparse LU (larger: iteration;
#: LU fill-in on cyclic graphs grows fast: 60k positions take seconds, 200k minutes)
DIRECT_LIMIT = 50_000
#: networkx is used for cycle detection up to this many positions (larger: scipy csgraph)
NX_LIMIT = 20_000
#: stochastic games: moves within this of the best expected result count as optimal
VALUE_TOL = 1e-9


# --- basic access -------------------------------------------------------------------------

def collect(positions: Frame, query: pl.LazyFrame) -> pl.DataFrame:
    """Run ``query`` (built on ``positions.lazy()``): a scan streams through the files in
    batches (bounded memory); a table in memory runs at once."""
    return query.collect(engine="streaming" if isinstance(positions, pl.LazyFrame) else "auto")


def _columns(positions: Frame) -> list[str]:
    return positions.collect_schema().names()


def positions_of(solution: Any) -> Frame:
    """The positions a report or a tune row reads from a solved variant: its table, or, for a
    tiered table with too many moves to regenerate (no edges), a streaming scan of its tier files
    (every metric that needs no moves is an aggregate or a lookup, so none loads it whole)."""
    scan = getattr(solution, "scan", None)
    if scan is not None and solution.edges is None:
        return scan()
    return solution.positions


def stochastic_values(positions: Frame) -> bool:
    """Whether the ``value`` column holds expected results (floats: a stochastic solution) rather
    than value codes."""
    return positions.collect_schema()["value"] in (pl.Float32, pl.Float64)


def count(positions: Frame) -> int:
    """Number of rows (positions)."""
    if isinstance(positions, pl.DataFrame):
        return positions.height
    return int(collect(positions, positions.select(pl.len())).item())


def has_chance(positions: Frame) -> bool:
    """Whether any row is a chance node."""
    return bool(collect(positions, positions.lazy().select((pl.col("kind") == CHANCE).any())).item())


def _remoteness_expr() -> pl.Expr:
    """Remoteness with null for draws (stored as null or ``NO_REMOTENESS``)."""
    rem = pl.col("remoteness").cast(pl.Int64)
    return pl.when(rem == int(NO_REMOTENESS)).then(None).otherwise(rem)


def _np(df: pl.DataFrame, name: str, fill: Any = 0) -> np.ndarray:
    """A column as numpy, nulls replaced by ``fill``."""
    col = df[name]
    if col.null_count():
        col = col.fill_null(fill)
    return col.to_numpy()


def _edge_arrays(edges: pl.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    src = edges["src"].to_numpy().astype(np.int64)
    dst = edges["dst"].to_numpy().astype(np.int64)
    prob = edges["prob"].to_numpy().astype(np.float64) if "prob" in edges.columns else None
    return src, dst, prob


def _remoteness(positions: pl.DataFrame) -> np.ndarray:
    """Remoteness as int64 with -1 for draws (null / 0xFFFF)."""
    if "remoteness" not in positions.columns:
        return np.full(positions.height, -1, dtype=np.int64)
    rem = _np(positions, "remoteness", int(NO_REMOTENESS)).astype(np.int64)
    rem[rem == int(NO_REMOTENESS)] = -1
    return rem


def solution_kind(positions: pl.DataFrame, meta: Mapping[str, Any] | None = None) -> Kind:
    """Which kind of table this is: ``deterministic``, ``setups`` or ``stochastic``.

    Read from the metadata (``solution`` / ``solver``) when given, else from the columns: a float
    ``value`` column means a stochastic solution; chance rows with an ``expected`` column mean
    random setups.
    """
    if meta:
        if meta.get("solution") == "stochastic":
            return "stochastic"
        if meta.get("solver") == "retrograde+setups":
            return "setups"
        if meta.get("solution") == "deterministic":
            return "deterministic"
    if stochastic_values(positions):
        return "stochastic"
    if "expected" in _columns(positions) and has_chance(positions):
        return "setups"
    return "deterministic"


def paranoid_view(positions: Frame, seat: int = 0) -> Frame:
    """A 3-4 player (paranoid) table seen as seat ``seat``'s two-sided game.

    The paranoid solve answers, for each seat, "can this seat force the strictly highest score
    against all other seats together?" in columns ``seat<i>_value``/``_remoteness``/``_margin``
    (seat i's view everywhere). This returns the ordinary two-player columns of that game: the
    ``player`` is 0 where ``seat`` moves and 1 where any other seat moves, ``value``/``margin``
    are from that side's view, so every metric for two-player tables applies unchanged.
    """
    s = seat + 1
    mine = pl.col("player") == seat
    value = pl.col(f"seat{s}_value")
    flipped = value.replace_strict(list(range(len(FLIP))), [int(x) for x in FLIP], return_dtype=pl.UInt8)
    cols = [
        pl.when(mine).then(0).otherwise(1).cast(pl.UInt8).alias("player"),
        pl.when(mine).then(value.cast(pl.UInt8)).otherwise(flipped).alias("value"),
        pl.col(f"seat{s}_remoteness").alias("remoteness"),
    ]
    names = _columns(positions)
    if f"seat{s}_margin" in names:
        m = pl.col(f"seat{s}_margin")
        cols.append(pl.when(mine).then(m).otherwise(-m).cast(pl.Int16).alias("margin"))
    seat_cols = [c for c in names if c.startswith("seat")]
    return positions.with_columns(cols).drop(seat_cols)


def root_row(positions: pl.DataFrame, meta: Mapping[str, Any] | None = None) -> int:
    """Row of the start position: from ``meta['root_key']`` / ``meta['root_row']``, else the
    only row at ply 0."""
    if meta and meta.get("root_key") is not None:
        keys = positions["key"].to_numpy()
        k = np.uint64(int(meta["root_key"]))
        i = int(np.searchsorted(keys, k))
        if i < len(keys) and keys[i] == k:
            return i
    if meta and meta.get("root_row") is not None and 0 <= int(meta["root_row"]) < positions.height:
        return int(meta["root_row"])
    rows = np.flatnonzero(_np(positions, "ply") == 0)
    if len(rows) != 1:
        raise ValueError("cannot find the start position: give meta with root_key, or one row at ply 0")
    return int(rows[0])


#: an in-memory entry of a table's metadata (never written): the start's row, looked up directly
#: (:func:`reading_meta`)
ROOT_ROW = "root_row_values"


def reading_meta(solution: Any, positions: Frame) -> dict[str, Any]:
    """``solution.meta`` for the metrics of ``positions``: with the start's row under
    :data:`ROOT_ROW` when ``positions`` is a lazy scan of tier files whose solution can look the
    start up in its own tier (a filter on the key would read, and sum the key deltas of, every
    tier file). Not for 3-4 players' tables, whose rows the metrics read through
    :func:`paranoid_view`."""
    meta = dict(solution.meta)
    find = getattr(solution, "root_row_values", None)
    if isinstance(positions, pl.LazyFrame) and find is not None and meta.get("solution") != "paranoid":
        row = find()
        if row is not None:
            meta[ROOT_ROW] = row
    return meta


def root_values(positions: Frame, meta: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The start position's row as ``{column: value}``: the row :func:`reading_meta` looked up,
    else, for a lazy scan, a filter on ``meta['root_key']`` (else on ply 0)."""
    if isinstance(positions, pl.DataFrame):
        return positions.row(root_row(positions, meta), named=True)
    if meta and meta.get(ROOT_ROW) is not None:
        return dict(meta[ROOT_ROW])
    if meta and meta.get("root_key") is not None:
        rows = collect(positions, positions.filter(pl.col("key") == int(meta["root_key"])))
    else:
        rows = collect(positions, positions.filter(pl.col("ply") == 0))
    if rows.height != 1:
        raise ValueError("cannot find the start position: give meta with root_key, or one row at ply 0")
    return rows.row(0, named=True)


def num_players(positions: Frame, meta: Mapping[str, Any] | None = None) -> int:
    """Number of players (from the metadata, else from the ``player`` column)."""
    if meta and meta.get("players"):
        return int(meta["players"])
    top = collect(positions, positions.lazy().select(pl.col("player").max())).item()
    return 2 if top is None else max(2, int(top) + 1)


def _seat_name(seat: int) -> str:
    return f"Player {seat + 1}"


@dataclass(frozen=True)
class Seats:
    """How texts name the seats: the game's :attr:`~solver.core.game.Game.seat_names` ("Black",
    "White"), tied to the player number at the first mention ("Black (player 1, moves first)").

    Games whose seats are simply "Player n" keep the role words: "the first player (Player 1)".
    ``first`` is the player index that moves first (the side to move at the start).
    """

    names: tuple[str, ...] = ()
    first: int = 0

    @classmethod
    def of(cls, names: Sequence[str] | None, first: int = 0, players: int = 2) -> "Seats":
        given = tuple(names or ())
        return cls(tuple(given[p] if p < len(given) else _seat_name(p) for p in range(max(players, 2))), first)

    @property
    def named(self) -> bool:
        """True when some seat has a name of its own (not "Player n")."""
        return any(n != _seat_name(p) for p, n in enumerate(self.names))

    @property
    def second(self) -> int:
        return 1 - self.first if self.first in (0, 1) else 0

    def name(self, p: int) -> str:
        """The seat's name: ``Black`` (``Player 2`` for unnamed seats)."""
        return self.names[p] if 0 <= p < len(self.names) else _seat_name(p)

    def who(self, p: int) -> str:
        """The seat in running text after its first mention: ``Black``, or ``the first player``
        / ``the second player`` for unnamed seats."""
        if self.named:
            return self.name(p)
        return "the first player" if p == self.first else "the second player" if p == self.second else self.name(p)

    def full(self, p: int) -> str:
        """The first mention, tying the name to the player number: ``Black (player 1, moves
        first)``, ``White (player 2)``; unnamed: ``the first player (Player 1)``."""
        if not self.named:
            return f"{self.who(p)} ({self.name(p)})"
        return f"{self.name(p)} (player {p + 1}{', moves first' if p == self.first else ''})"

    def short(self, p: int) -> str:
        """A short label for tables and legends: ``Black`` or ``1st player``/``2nd player``."""
        if self.named:
            return self.name(p)
        return "1st player" if p == self.first else "2nd player" if p == self.second else self.name(p)


# --- verdict ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Verdict:
    """Who wins from the start, from the first player's point of view.

    ``advantage`` is the first player's expected result in [-1, 1] (+1 win, -1 loss, 0 tie or
    endless); ``p_win`` / ``p_loss`` the probabilities that the first player wins / loses under
    perfect play (deterministic games: 0 or 1; setups: shares of setups weighted by probability).
    """

    kind: Kind
    first_player: int
    value: str | None
    remoteness: int | None
    margin: float | None
    advantage: float
    p_win: float
    p_loss: float
    setup_shares: dict[str, float] | None = None
    setups: int | None = None
    text: str = ""
    short: str = ""
    #: secret-choice tables with proven bounds: the first player's value lies in ``[lo, hi]``
    interval: tuple[float, float] | None = None
    #: the game's ends pay real amounts: ``advantage`` is an expected payoff and there are no
    #: win probabilities (``p_win``/``p_loss`` NaN)
    payoff: bool = False


def _pct(x: float) -> str:
    return f"{100.0 * x:.1f}%"


def _plies(n: int | None) -> str:
    return f"{n} ply" if n == 1 else f"{n} plies"


def _signed(x: float, digits: int = 3) -> str:
    return f"{x:+.{digits}f}"


def proven_interval(lo: float, hi: float, digits: int = 3) -> str:
    """``[lo, hi]`` rounded outward to ``digits`` decimals, so that the printed interval still
    contains the proven one."""
    scale = 10.0 ** digits
    return f"[{math.floor(lo * scale) / scale + 0.0:+.{digits}f}, {math.ceil(hi * scale) / scale + 0.0:+.{digits}f}]"


def expected_text(value: float, interval: tuple[float, float] | None, digits: int = 3) -> str:
    """An expected result as text: the number where it is proven to within the printed
    precision (or no proof was computed), else the proven interval (outward rounded)."""
    if interval is None or interval[1] - interval[0] <= 0.5 * 10.0 ** -digits:
        return _signed(value, digits)
    return "in " + proven_interval(interval[0], interval[1], digits)


def verdict(
    positions: Frame,
    meta: Mapping[str, Any] | None = None,
    *,
    setups: pl.DataFrame | None = None,
    edges: pl.DataFrame | None = None,
    seat_names: Sequence[str] | None = None,
) -> Verdict:
    """The result of the game from the start under perfect play.

    Parameters
    ----------
    positions : polars.DataFrame or polars.LazyFrame
        The positions table (a lazy scan: only the start's row is read).
    meta : dict, optional
        The table metadata (to find the start and the kind of solution).
    setups : polars.DataFrame, optional
        Random-setup games: the setups table (:attr:`solver.api.Solution.setups`); rebuilt from
        ``edges`` when missing.
    edges : polars.DataFrame, optional
        The edges table (only needed for random setups without a setups table).
    seat_names : sequence of str, optional
        What the seats are called (:attr:`solver.core.game.Game.seat_names`); the text names
        them so, tied to the player number once. ``short`` keeps the role words ("first player
        wins in 5") whatever the names, so that tables of different games compare.

    Returns
    -------
    Verdict
        With a one-sentence ``text`` and a few-word ``short`` form, both generated from the numbers.
    """
    kind = solution_kind(positions, meta)
    r = root_values(positions, meta)
    first = int(r["player"])
    players = num_players(positions, meta)
    seats = Seats.of(seat_names, first, players)
    me_full, me = seats.full(first), seats.name(first)
    if players == 2:
        other = seats.name(seats.second) if not seats.named else seats.full(seats.second)
        other_full = seats.full(seats.second)
    else:
        other = other_full = "the others"
    if kind == "stochastic":
        exp = float(r["value"])
        pw, pls = r.get("p_win"), r.get("p_loss")
        pw = float("nan") if pw is None else float(pw)
        pls = float("nan") if pls is None else float(pls)
        margin = float(r["margin"]) if r.get("margin") is not None else None
        interval = ((float(r["value_lo"]), float(r["value_hi"]))
                    if r.get("value_lo") is not None and r.get("value_hi") is not None else None)
        if interval is not None and interval[1] - interval[0] > 5e-4:
            # not proven to the printed precision: the interval is what is known
            text = (f"With perfect play by both sides {me_full}'s expected result is proven to lie in "
                    f"{proven_interval(*interval)} (+1 = win, -1 = loss; each end is what one side's "
                    f"strategy guarantees against every reply); value iteration's estimate, "
                    f"{_signed(exp)}, is not proven.")
            short = f"expected in {proven_interval(*interval, digits=2)}"
            return Verdict(kind, first, None, None, margin, exp, pw, pls, text=text, short=short,
                           interval=interval)
        proven = "" if interval is None else f" (proven to within {max(interval[1] - interval[0], 1e-12):.1e})"
        if (meta or {}).get("payoffs") == "real":
            text = (f"With perfect play by both sides the expected payoff of {me_full} is {_signed(exp)}{proven} "
                    f"(the game's ends pay real amounts, and {other} pays what {me} gains; win "
                    "probabilities do not apply).")
            return Verdict(kind, first, None, None, margin, exp, pw, pls, text=text,
                           short=f"expected payoff {_signed(exp, 2)}", interval=interval, payoff=True)
        if np.isnan(pw) or np.isnan(pls):
            why = ("The round-by-round solver does not compute win probabilities for games with chance in play, "
                   "so the table has none."
                   if (meta or {}).get("win_probabilities") else
                   "No fixed (stationary) strategy earns it, so win probabilities are not defined here.")
            text = (f"With perfect play by both sides {me_full} has an expected result of "
                    f"{_signed(exp)}{proven} (+1 = win, -1 = loss). {why}")
            short = f"expected {_signed(exp, 2)}"
            return Verdict(kind, first, None, None, margin, exp, pw, pls, text=text, short=short,
                           interval=interval)
        text = (
            f"With perfect play by both sides {me_full} has an expected result of "
            f"{_signed(exp)}{proven} (+1 = win, -1 = loss): {me} wins with probability {_pct(pw)} and "
            f"loses with probability {_pct(pls)}"
        )
        rest = 1.0 - pw - pls
        text += f"; {_pct(rest)} of games end level or never end." if rest > 5e-4 else "."
        short = f"expected {_signed(exp, 2)} (first player wins {_pct(pw)})"
        return Verdict(kind, first, None, None, margin, exp, pw, pls, text=text, short=short,
                       interval=interval)
    if kind == "setups":
        table = setups if setups is not None else (
            setups_from_tables(positions, edges, root_row(positions, meta))
            if edges is not None and isinstance(positions, pl.DataFrame) else None)
        if table is None:
            raise ValueError("a random-setup verdict needs the setups table or the edges table")
        summ = setup_summary(table)
        shares = summ["shares"]
        n_setups = int(table.height)
        text = (
            f"The start is a random setup ({n_setups} distinct setups, weighted by their "
            f"probability). With perfect play {me_full} wins {_pct(shares['win'])} "
            f"of setups and {other} wins {_pct(shares['lose'])}"
        )
        extra = [f"{_pct(shares[v])} are {'ties' if v == 'tie' else 'draws'}"
                 for v in ("tie", "draw") if shares[v] > 0]
        text += ("; " + " and ".join(extra) if extra else "") + "."
        text += f" {me}'s expected result is {_signed(summ['expected'])} (+1 = win, -1 = loss)"
        if summ["expected_margin"] is not None:
            text += f" and the expected score margin {_signed(summ['expected_margin'], 2)}"
        text += "."
        short = f"first player wins {_pct(shares['win'])} of setups"
        return Verdict(kind, first, None, None, summ["expected_margin"], summ["expected"],
                       shares["win"], shares["lose"], setup_shares=shares, setups=n_setups,
                       text=text, short=short)
    code = int(r["value"])
    rem = r.get("remoteness")
    rem = None if rem is None or int(rem) == int(NO_REMOTENESS) else int(rem)
    margin = float(r["margin"]) if "margin" in r else None
    name = VALUE_NAMES[code]
    if players > 2 and name in ("win", "lose"):
        text = (f"With perfect play {me_full} {'wins' if name == 'win' else 'loses'} in "
                f"{_plies(rem)} against the {players - 1} others playing together.")
        short = f"first player {'wins' if name == 'win' else 'loses'} in {rem}"
    elif name == "win":
        text = f"With perfect play {me_full} wins in {_plies(rem)}."
        short = f"first player wins in {rem}"
    elif name == "lose":
        text = (f"With perfect play {other_full} wins in {_plies(rem)}: "
                f"{me_full} loses whatever it does.")
        short = f"second player wins in {rem}"
    elif name == "tie":
        neither = (f"neither {me_full} nor {other_full}" if seats.named and players == 2 else "neither side")
        text = (f"With perfect play {neither} can win: the game ends in a tie after {_plies(rem)} "
                f"(a tie = the game ends level).")
        short = f"tie in {rem}"
    else:
        neither = (f"neither {me_full} nor {other_full}" if seats.named and players == 2 else "neither side")
        text = (f"With perfect play {neither} can force a win and the game never ends: a draw "
                "(endless play).")
        short = "draw"
    if margin is not None:
        text += f" The best score margin {seats.who(first)} can force is {margin:+.0f}."
    adv = float(POINTS[code])
    return Verdict(kind, first, name, rem, margin, adv, float(code == WIN), float(code == LOSE),
                   text=text, short=short)


def setups_from_tables(positions: pl.DataFrame, edges: pl.DataFrame, root: int) -> pl.DataFrame:
    """The setups of a random-setup game rebuilt from the tables: one row per outcome of the
    start's chance node (``dst`` row, ``probability``, ``value`` / ``remoteness`` / ``margin``
    from the first player's view)."""
    src, dst, prob = _edge_arrays(edges)
    sel = src == root
    kids = dst[sel]
    p = prob[sel] if prob is not None else np.full(len(kids), 1.0 / max(1, len(kids)))
    player = _np(positions, "player").astype(np.int64)
    codes = _np(positions, "value").astype(np.int64)[kids]
    same = player[kids] == player[root]
    eff = np.where(same, codes, FLIP[codes])
    rem = _remoteness(positions)[kids]
    data: dict[str, Any] = {
        "dst": kids, "probability": p, "value": [VALUE_NAMES[c] for c in eff],
        "remoteness": pl.Series(np.where(rem >= 0, rem, 0), dtype=pl.Int64).set(pl.Series(rem < 0), None)
        if (rem < 0).any() else pl.Series(rem, dtype=pl.Int64),
    }
    if "margin" in positions.columns:
        m = _np(positions, "margin").astype(np.int64)[kids]
        data["margin"] = np.where(same, m, -m)
    return pl.DataFrame(data)


# --- value / remoteness / ply -------------------------------------------------------------

def value_remoteness_table(positions: Frame) -> pl.DataFrame:
    """GAMESMAN's analyzer table: positions by value (side to move) for each remoteness.

    Chance rows are left out (their value is an expectation). Columns ``remoteness`` (null for
    the row of draws, which have none), ``win``, ``lose``, ``tie``, ``draw``, ``total``; sorted by
    remoteness with the draw row last.
    """
    lf = positions.lazy()
    rem = _remoteness_expr() if "remoteness" in _columns(positions) else pl.lit(None, dtype=pl.Int64)
    counts = collect(positions, lf.filter(pl.col("kind") != CHANCE).group_by(rem.alias("remoteness")).agg(
        *[(pl.col("value") == code).sum().cast(pl.Int64).alias(name)
          for name, code in (("win", WIN), ("lose", LOSE), ("tie", TIE), ("draw", DRAW))]))
    out = counts.sort("remoteness", nulls_last=True).with_columns(pl.col("remoteness").cast(pl.Int64))
    return out.with_columns(total=pl.sum_horizontal("win", "lose", "tie", "draw"))


def value_by_ply(positions: Frame) -> pl.DataFrame:
    """Positions by value of the side to move at each ply (fewest moves from the start).

    Columns ``ply``, ``positions``, ``finished`` (how many of them are final positions: a ply
    where ``finished == positions`` holds only games that are over), counts
    ``win``/``lose``/``tie``/``draw`` and their shares ``win_share``... (each ply's shares sum to
    1). Chance rows are left out.
    """
    df = positions.lazy().filter(pl.col("kind") != CHANCE).select("ply", "value", "kind")
    out = collect(positions, df.group_by("ply").agg(
        pl.len().alias("positions"),
        (pl.col("kind") == TERMINAL).sum().cast(pl.Int64).alias("finished"),
        *[(pl.col("value") == code).sum().alias(name)
          for name, code in (("win", WIN), ("lose", LOSE), ("tie", TIE), ("draw", DRAW))],
    )).sort("ply")
    return out.with_columns(
        *[(pl.col(v) / pl.col("positions")).alias(f"{v}_share") for v in SHOWN_VALUES]
    ).with_columns(pl.col("positions").cast(pl.Int64), *[pl.col(v).cast(pl.Int64) for v in SHOWN_VALUES])


def expected_histogram(positions: Frame, *, bins: int = 20, span: float = 1.0) -> pl.DataFrame:
    """Stochastic games: positions (decision and terminal) by expected result of the side to move,
    in ``bins`` equal bins over [-span, span] (as ``numpy.histogram``: each bin holds its lower
    edge, the last also ``span``); ``span`` is 1 for results, the largest payoff for games whose
    ends pay real amounts. Columns ``lo``, ``hi``, ``positions``."""
    edges = np.linspace(-span, span, bins + 1)
    inner = pl.lit(pl.Series(edges[1:-1]))
    value = pl.col("value").cast(pl.Float64).clip(-span, span)
    got = collect(positions, positions.lazy().filter(pl.col("kind") != CHANCE)
                   .group_by(inner.search_sorted(value, side="right").alias("bin")).len())
    counts = np.zeros(bins, dtype=np.int64)
    counts[got["bin"].to_numpy().astype(np.int64)] = got["len"].to_numpy()
    return pl.DataFrame({"lo": edges[:-1], "hi": edges[1:], "positions": counts})


def expected_summary(positions: Frame) -> tuple[int, float | None, float | None]:
    """Stochastic games: over the positions that are not chance nodes, how many there are, the
    mean expected result of the side to move, and the share of positive expected results."""
    got = collect(positions, positions.lazy().filter(pl.col("kind") != CHANCE).select(
        pl.len(), pl.col("value").mean().alias("mean"), (pl.col("value") > 0).mean().alias("positive")))
    n, mean, positive = got.row(0)
    return int(n), mean, positive


def expected_by_ply(positions: Frame) -> pl.DataFrame:
    """Stochastic games: mean expected result, win and loss probability of the side to move at
    each ply (chance rows left out), and ``finished``: how many of the ply's positions are final."""
    cols = [pl.len().alias("positions"), (pl.col("kind") == TERMINAL).sum().cast(pl.Int64).alias("finished"),
            pl.col("value").mean().alias("mean_expected")]
    for c in ("p_win", "p_loss"):
        if c in _columns(positions):
            cols.append(pl.col(c).mean().alias(f"mean_{c}"))
    return collect(positions, positions.lazy().filter(pl.col("kind") != CHANCE).group_by("ply").agg(cols)).sort("ply")


# --- moves --------------------------------------------------------------------------------

def move_values(positions: pl.DataFrame, edges: pl.DataFrame, *, stochastic: bool | None = None) -> pl.DataFrame:
    """Every move from a decision position with its value from the mover's point of view.

    Columns ``src``, ``dst``, then deterministic tables: ``value`` (code, mover's view),
    ``remoteness`` (the child's, -1 for draws), ``margin`` (mover's view, scored games);
    stochastic tables: ``expected`` (mover's view). A move after which the mover moves again
    keeps the child's value; otherwise it is flipped.
    """
    if stochastic is None:
        stochastic = stochastic_values(positions)
    src, dst, _ = _edge_arrays(edges)
    kind = positions["kind"].to_numpy()
    sel = kind[src] == DECISION
    src, dst = src[sel], dst[sel]
    player = positions["player"].to_numpy()
    same = player[dst] == player[src]
    data: dict[str, Any] = {"src": src, "dst": dst}
    if stochastic:
        v = positions["value"].to_numpy().astype(np.float64)[dst]
        data["expected"] = np.where(same, v, -v) + 0.0
    else:
        codes = _np(positions, "value").astype(np.int64)[dst]
        data["value"] = np.where(same, codes, FLIP[codes].astype(np.int64))
        data["remoteness"] = _remoteness(positions)[dst]
        if "margin" in positions.columns:
            m = _np(positions, "margin").astype(np.int64)[dst]
            data["margin"] = np.where(same, m, -m)
    return pl.DataFrame(data)


def _order_key(value: np.ndarray, remoteness: np.ndarray, margin: np.ndarray | None) -> np.ndarray:
    """GAMESMAN's move order as one int64 (smaller = better): win fastest, tie, draw, lose
    slowest, then the larger margin. Same order as :func:`solver.api._move_order_key`."""
    rank = np.select([value == WIN, value == TIE, value == DRAW], [0, 1, 2], 3).astype(np.int64)
    rem = np.maximum(remoteness, 0).astype(np.int64)
    rem_key = np.where(value == LOSE, 65535 - rem, rem)
    m = np.zeros(len(value), dtype=np.int64) if margin is None else margin.astype(np.int64)
    return (rank << 36) | (rem_key << 18) | (32768 - m)


def opening_moves(
    positions: pl.DataFrame, edges: pl.DataFrame, root: int | None = None,
    meta: Mapping[str, Any] | None = None,
) -> pl.DataFrame:
    """The first moves (or chance outcomes) from the start, grouped by the resulting position.

    With symmetry, moves to symmetric positions reach the same (canonical) row, so one row here
    stands for a class of equivalent moves. Columns ``dst``, ``moves`` (how many legal moves reach
    it), ``probability`` (chance start: total probability), and the value from the mover's point
    of view: deterministic ``value`` (name), ``remoteness`` (the child's; null for draws),
    ``margin``; stochastic ``expected``. Sorted best first.
    """
    if root is None:
        root = root_row(positions, meta)
    stochastic = stochastic_values(positions)
    src, dst, prob = _edge_arrays(edges)
    sel = src == root
    kids = dst[sel]
    p = prob[sel] if prob is not None else np.full(len(kids), np.nan)
    player = positions["player"].to_numpy()
    same = player[kids] == player[root]
    df = pl.DataFrame({"dst": kids, "p": p, "same": same})
    grouped = df.group_by("dst", maintain_order=True).agg(
        pl.len().alias("moves"), pl.col("p").sum().alias("probability"), pl.col("same").first())
    kids_u = grouped["dst"].to_numpy()
    same_u = grouped["same"].to_numpy()
    is_chance = int(positions["kind"][root]) == CHANCE
    out = grouped.select("dst", pl.col("moves").cast(pl.Int64), "probability")
    if not is_chance:
        out = out.with_columns(probability=pl.lit(None, dtype=pl.Float64))
    if stochastic:
        v = positions["value"].to_numpy().astype(np.float64)[kids_u]
        out = out.with_columns(expected=pl.Series(np.where(same_u, v, -v) + 0.0))  # no -0.0
        return out.sort("expected", descending=True)
    codes = _np(positions, "value").astype(np.int64)[kids_u]
    eff = np.where(same_u, codes, FLIP[codes].astype(np.int64))
    rem = _remoteness(positions)[kids_u]
    margin = None
    if "margin" in positions.columns:
        m = _np(positions, "margin").astype(np.int64)[kids_u]
        margin = np.where(same_u, m, -m)
    order = np.argsort(_order_key(eff, rem, margin), kind="stable") if not is_chance else np.arange(len(kids_u))
    out = out.with_columns(
        value=pl.Series([VALUE_NAMES[c] for c in eff], dtype=pl.Utf8),
        remoteness=pl.Series([None if r < 0 else int(r) for r in rem], dtype=pl.Int64),
    )
    if margin is not None:
        out = out.with_columns(margin=pl.Series(margin, dtype=pl.Int64))
    return out[order.tolist()]


# --- decision difficulty ------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class Difficulty:
    """How hard the right move is to find.

    Deterministic games, over the non-terminal *winning* decision positions: ``only_move_share``
    = share of them where exactly one legal move keeps the win; ``good_move_share`` = average
    share of legal moves that keep the win; ``forced_share`` = share with a single legal move;
    ``keep_share`` = for each value (win, tie, draw), the average share of moves that keep it.

    Stochastic games, over every decision position: a move is *good* when it reaches the best
    expected result (within 1e-9); ``mean_loss`` = expected result a uniformly random move gives
    away on average.

    ``shares`` holds the per-position share of good moves (for a histogram).
    """

    basis: str
    positions: int
    only_move_share: float | None
    good_move_share: float | None
    forced_share: float | None
    keep_share: dict[str, float] = field(default_factory=dict)
    mean_loss: float | None = None
    shares: np.ndarray = field(default_factory=lambda: np.zeros(0))


def decision_difficulty(positions: pl.DataFrame, edges: pl.DataFrame) -> Difficulty:
    """Only-move share, average share of winning (optimal) moves and value-keeping shares.

    Parameters
    ----------
    positions, edges : polars.DataFrame
        The tables of a solved variant (any kind).

    Returns
    -------
    Difficulty
    """
    stochastic = stochastic_values(positions)
    mv = move_values(positions, edges, stochastic=stochastic)
    n = positions.height
    src = mv["src"].to_numpy()
    n_moves = np.bincount(src, minlength=n)
    kind = positions["kind"].to_numpy()
    if stochastic:
        eff = mv["expected"].to_numpy()
        best = np.full(n, -np.inf)
        np.maximum.at(best, src, eff)
        good = eff >= best[src] - VALUE_TOL
        n_good = np.bincount(src, weights=good, minlength=n)
        mean_eff = np.bincount(src, weights=eff, minlength=n)
        rows = np.flatnonzero((kind == DECISION) & (n_moves > 0))
        if len(rows) == 0:
            return Difficulty("decision positions", 0, None, None, None)
        shares = n_good[rows] / n_moves[rows]
        loss = best[rows] - mean_eff[rows] / n_moves[rows]
        return Difficulty(
            "decision positions", int(len(rows)), float((n_good[rows] == 1).mean()),
            float(shares.mean()), float((n_moves[rows] == 1).mean()), {}, float(loss.mean()), shares)
    eff = mv["value"].to_numpy()
    codes = _np(positions, "value").astype(np.int64)
    keep: dict[str, float] = {}
    for name, code in (("win", WIN), ("tie", TIE), ("draw", DRAW)):
        rows = np.flatnonzero((kind == DECISION) & (n_moves > 0) & (codes == code))
        if len(rows):
            k = np.bincount(src, weights=(eff == code), minlength=n)
            keep[name] = float((k[rows] / n_moves[rows]).mean())
    rows = np.flatnonzero((kind == DECISION) & (n_moves > 0) & (codes == WIN))
    if len(rows) == 0:
        return Difficulty("winning positions", 0, None, None, None, keep)
    n_win = np.bincount(src, weights=(eff == WIN), minlength=n)[rows]
    shares = n_win / n_moves[rows]
    return Difficulty(
        "winning positions", int(len(rows)), float((n_win == 1).mean()), float(shares.mean()),
        float((n_moves[rows] == 1).mean()), keep, None, shares)


# --- random and perfect play: an absorbing Markov chain over the edges ---------------------

@dataclass(frozen=True, eq=False)
class PlayStats:
    """Outcome and length of games between two given players (``random`` or ``perfect``).

    Probabilities are of the first player winning (``p_first``), the second player winning
    (``p_second``), a tied end (``p_tie``) and a game that never ends (``p_unfinished``: play
    stuck in cycles, or still running after ``max_plies`` in a simulation). ``expected_length`` is
    the mean number of plies of the games that end; ``lengths`` / ``length_probs`` its
    distribution (probability that the game ends after exactly that many plies).
    """

    first: str
    second: str
    p_first: float
    p_second: float
    p_tie: float
    p_unfinished: float
    expected_length: float | None
    lengths: np.ndarray
    length_probs: np.ndarray
    method: str
    exact: bool
    samples: int | None = None
    positions: int = 0
    max_plies: int | None = None


def terminal_outcomes(positions: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Per row: the probability that the side to move has won / lost (non-zero at terminals only).

    Deterministic tables: from the value code; stochastic tables: ``p_win`` / ``p_loss``.
    """
    term = positions["kind"].to_numpy() == TERMINAL
    if stochastic_values(positions):
        v = positions["value"].to_numpy().astype(np.float64)
        w = _np(positions, "p_win", np.nan).astype(np.float64) if "p_win" in positions.columns else (v > 0) * 1.0
        l_ = _np(positions, "p_loss", np.nan).astype(np.float64) if "p_loss" in positions.columns else (v < 0) * 1.0
        # an end that pays a real amount (no win probability stored): won if it pays the side
        # to move more than nothing, lost if less
        w, l_ = np.where(np.isnan(w), v > 0, w), np.where(np.isnan(l_), v < 0, l_)
    else:
        codes = _np(positions, "value").astype(np.int64)
        w, l_ = (codes == WIN) * 1.0, (codes == LOSE) * 1.0
    return np.where(term, w, 0.0), np.where(term, l_, 0.0)


def policy_weights(
    positions: pl.DataFrame, edges: pl.DataFrame, policies: Mapping[int, str]
) -> np.ndarray:
    """The probability of taking each edge: chance edges their ``prob``; a decision edge
    ``1 / legal moves`` for a ``random`` player, ``1 / best moves`` on a best move for a
    ``perfect`` player (0 on the others). ``policies`` maps seat -> policy.

    Best moves: deterministic tables in GAMESMAN's order (win fastest, tie, draw, lose slowest,
    then the larger margin); stochastic tables the largest expected result, then (among those
    within 1e-9) the largest win probability, then the fewest plies to an end along such moves.
    """
    src, dst, prob = _edge_arrays(edges)
    n = positions.height
    kind = positions["kind"].to_numpy()
    player = positions["player"].to_numpy().astype(np.int64)
    deg = np.bincount(src, minlength=n).astype(np.float64)
    w = 1.0 / np.maximum(deg[src], 1.0)
    chance_e = kind[src] == CHANCE
    if prob is not None:
        w = np.where(chance_e, prob, w)
    if bool((kind == SIMULTANEOUS).any()) and any(p == "perfect" for p in policies.values()):
        raise ValueError("perfect play at simultaneous nodes needs mixed strategies, not in the table")
    perfect_seats = [s for s, p in policies.items() if p == "perfect"]
    if not perfect_seats:
        return w
    dec_e = (kind[src] == DECISION) & np.isin(player[src], perfect_seats)
    if not dec_e.any():
        return w
    if stochastic_values(positions):
        good_all = _best_stochastic_moves(positions, src, dst, kind, player, prob)
        good = good_all[dec_e]
    else:
        good = _best_deterministic_moves(positions, src[dec_e], dst[dec_e], player)
    e_idx = np.flatnonzero(dec_e)
    s = src[e_idx]
    n_good = np.bincount(s, weights=good, minlength=n)
    w = w.copy()
    w[e_idx] = np.where(good, 1.0 / np.maximum(n_good[s], 1.0), 0.0)
    return w


def _best_deterministic_moves(positions: pl.DataFrame, s: np.ndarray, d: np.ndarray,
                              player: np.ndarray) -> np.ndarray:
    """Which of the decision edges ``s -> d`` are best in GAMESMAN's order."""
    n = positions.height
    same = player[d] == player[s]
    codes = _np(positions, "value").astype(np.int64)[d]
    eff = np.where(same, codes, FLIP[codes].astype(np.int64))
    rem = _remoteness(positions)[d]
    margin = None
    if "margin" in positions.columns:
        m = _np(positions, "margin").astype(np.int64)[d]
        margin = np.where(same, m, -m)
    key = _order_key(eff, rem, margin)
    best_k = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(best_k, s, key)
    return key == best_k[s]


def _best_stochastic_moves(positions: pl.DataFrame, src: np.ndarray, dst: np.ndarray, kind: np.ndarray,
                           player: np.ndarray, prob: np.ndarray | None) -> np.ndarray:
    """Which edges (of all edges; only decision edges can be True) are best moves.

    1. the largest expected result for the mover (within 1e-9);
    2. among those, the largest win probability for the mover (= most likely to end the game, as
       the value-iteration engine's strategies do);
    3. among those, a move to a position closest to an end when both sides keep to such moves
       (a stochastic table has no remoteness: this keeps a perfect player from passing for ever
       when it could finish the game).
    """
    n = positions.height
    dec = kind[src] == DECISION
    e_idx = np.flatnonzero(dec)
    s, d = src[e_idx], dst[e_idx]
    same = player[d] == player[s]
    v = positions["value"].to_numpy().astype(np.float64)[d]
    score = -np.where(same, v, -v)  # smaller = better
    best = np.full(n, np.inf)
    np.minimum.at(best, s, score)
    good = score <= best[s] + VALUE_TOL
    if "p_win" in positions.columns and "p_loss" in positions.columns:
        pw = np.where(same, _np(positions, "p_win", 0.0)[d], _np(positions, "p_loss", 0.0)[d])
        second = np.where(good, -pw, np.inf)
        best2 = np.full(n, np.inf)
        np.minimum.at(best2, s, second)
        good &= second <= best2[s] + VALUE_TOL
    # 3. plies to the nearest end along good moves and possible chance outcomes
    keep = np.zeros(len(src), dtype=bool)
    keep[e_idx] = good
    chance_e = kind[src] == CHANCE
    keep |= chance_e & ((prob > 0) if prob is not None else True)
    terminals = np.flatnonzero(kind == TERMINAL)
    if len(terminals):
        g = sp.csr_matrix((np.ones(int(keep.sum())), (dst[keep], src[keep])), shape=(n, n))  # reversed
        dist = csgraph.dijkstra(g, directed=True, indices=terminals, unweighted=True, min_only=True)
        dd = np.where(good, dist[d], np.inf)
        best3 = np.full(n, np.inf)
        np.minimum.at(best3, s, dd)
        finite = np.isfinite(best3[s])
        good &= ~finite | (dd <= best3[s])
    out = np.zeros(len(src), dtype=bool)
    out[e_idx] = good
    return out


def _bfs(graph: sp.csr_matrix, start: int) -> np.ndarray:
    return csgraph.breadth_first_order(graph, start, directed=True, return_predecessors=False)


def play_statistics(
    positions: pl.DataFrame,
    edges: pl.DataFrame,
    *,
    first: Policy = "random",
    second: Policy = "random",
    meta: Mapping[str, Any] | None = None,
    exact_limit: int = EXACT_LIMIT,
    direct_limit: int = DIRECT_LIMIT,
    samples: int = 20_000,
    seed: int = 12345,
    max_plies: int = 10_000,
    tol: float = 1e-10,
) -> PlayStats:
    """Win / loss / tie probabilities and game length when ``first`` plays ``second``.

    Random and perfect players turn the game graph into an absorbing Markov chain (terminal
    positions absorb). Up to ``exact_limit`` positions it is solved exactly:

    * absorbing probabilities and expected length by sparse LU (``scipy.sparse.linalg.splu``)
      on the positions that can still reach an end, when there are at most ``direct_limit`` of
      them; beyond that by pushing the probability distribution forward ply by ply (value
      iteration) until less than ``tol`` of it is left;
    * the length distribution always by pushing the distribution forward.

    Larger tables are *simulated*: ``samples`` games with a fixed ``seed``, cut at ``max_plies``.
    Positions from which no end can be reached under the two policies count as never ending.

    Parameters
    ----------
    positions, edges : polars.DataFrame
        The tables of a solved two-player variant.
    first, second : {"random", "perfect"}
        The first player's (the one to move at the start) and the second player's policy.
    meta : dict, optional
        Table metadata, to find the start.

    Returns
    -------
    PlayStats
    """
    n = positions.height
    root = root_row(positions, meta)
    first_seat = int(positions["player"][root])
    policies = {first_seat: first, 1 - first_seat: second}
    w = policy_weights(positions, edges, policies)
    src, dst, _ = _edge_arrays(edges)
    kind = positions["kind"].to_numpy()
    player = positions["player"].to_numpy().astype(np.int64)
    mover_w, mover_l = terminal_outcomes(positions)
    win_first = np.where(player == first_seat, mover_w, mover_l)
    win_second = np.where(player == first_seat, mover_l, mover_w)
    term = kind == TERMINAL
    tie = np.where(term, 1.0 - win_first - win_second, 0.0)
    label_f, label_s = first, second
    if n > exact_limit:
        return _simulate(n, src, dst, w, kind, root, win_first, win_second, tie,
                         samples=samples, seed=seed, max_plies=max_plies, first=label_f, second=label_s)
    keep = w > 0
    full = sp.csr_matrix((w[keep], (src[keep], dst[keep])), shape=(n, n))
    reach = np.sort(_bfs(full, root))
    P = full[reach][:, reach].tocsr()
    m = len(reach)
    loc_root = int(np.searchsorted(reach, root))
    k_l = kind[reach]
    term_l = k_l == TERMINAL
    f1, f2, ft = win_first[reach], win_second[reach], tie[reach]
    # positions from which an end can be reached (reverse search from a virtual sink)
    t_rows = np.flatnonzero(term_l)
    rev = sp.coo_matrix(P).T
    ext = sp.csr_matrix(
        (np.ones(rev.nnz + len(t_rows)),
         (np.concatenate([rev.row, np.full(len(t_rows), m)]), np.concatenate([rev.col, t_rows]))),
        shape=(m + 1, m + 1))
    can_end = np.zeros(m + 1, dtype=bool)
    can_end[_bfs(ext, m)] = True
    can_end = can_end[:m]
    active = ~term_l & can_end
    sink = ~term_l & ~can_end
    plies = (k_l != CHANCE).astype(np.float64)
    lengths, lprobs, absorbed, leftover = _forward(P, loc_root, term_l, sink, k_l == CHANCE, f1, f2, ft,
                                                   tol=tol if active.sum() > direct_limit else 1e-9,
                                                   max_plies=max_plies)
    if active.sum() <= direct_limit:
        p1, p2, pt, exp_len = _direct(P, loc_root, active, term_l, f1, f2, ft, plies)
        method = (f"exact: absorbing Markov chain over {m:,} positions solved by sparse LU")
        exact = True
    else:
        p1, p2, pt = absorbed
        total = lprobs.sum()
        exp_len = float((lengths * lprobs).sum() / total) if total > 0 else None
        if leftover == 0.0:
            method = (f"exact: the probability distribution over {m:,} positions pushed forward ply "
                      f"by ply until every game had ended")
        else:
            method = (f"exact up to {max(leftover, tol):.0e}: the probability distribution over {m:,} "
                      f"positions pushed forward ply by ply until less than that was left")
        exact = True
    p_unf = 1.0 - p1 - p2 - pt
    p_unf = 0.0 if p_unf < max(10 * tol, 1e-9) else p_unf  # below the stated accuracy
    return PlayStats(label_f, label_s, p1, p2, pt, p_unf, exp_len, lengths, lprobs, method, exact,
                     None, m)


def _direct(P: sp.csr_matrix, root: int, active: np.ndarray, term: np.ndarray, f1: np.ndarray,
            f2: np.ndarray, ft: np.ndarray, plies: np.ndarray) -> tuple[float, float, float, float | None]:
    """Absorbing probabilities and expected length (given an end) by sparse LU."""
    if term[root]:
        return float(f1[root]), float(f2[root]), float(ft[root]), 0.0
    if not active[root]:
        return 0.0, 0.0, 0.0, None
    idx = np.flatnonzero(active)
    Pa = P[idx]
    Q = Pa[:, idx]
    A = (sp.identity(len(idx), format="csc") - Q.tocsc()).tocsc()
    lu = sla.splu(A)
    rhs = np.column_stack([Pa @ f1, Pa @ f2, Pa @ ft])
    x = lu.solve(rhs)
    r = int(np.searchsorted(idx, root))
    a = x.sum(axis=1)
    # E[L 1{end}] solves (I - Q) z = plies * a (each ply from a position that will end counts)
    z = lu.solve(plies[idx] * a)
    p1, p2, pt = (float(x[r, 0]), float(x[r, 1]), float(x[r, 2]))
    exp_len = float(z[r] / a[r]) if a[r] > 0 else None
    return p1, p2, pt, exp_len


def _forward(P: sp.csr_matrix, root: int, term: np.ndarray, sink: np.ndarray, chance: np.ndarray,
             f1: np.ndarray, f2: np.ndarray, ft: np.ndarray, *, tol: float, max_plies: int
             ) -> tuple[np.ndarray, np.ndarray, tuple[float, float, float], float]:
    """Push the distribution over positions forward ply by ply (chance steps are free).

    Returns lengths, the probability of ending after each, the absorbed probability by outcome
    and the probability left over (still running after ``max_plies`` or below ``tol``).
    """
    PT = P.T.tocsr()
    mass = np.zeros(P.shape[0])
    mass[root] = 1.0
    ended: dict[int, float] = {}
    got = np.zeros(3)

    def absorb(ply: int) -> None:
        t = mass[term]
        if t.any():
            got[0] += float(t @ f1[term])
            got[1] += float(t @ f2[term])
            got[2] += float(t @ ft[term])
            ended[ply] = ended.get(ply, 0.0) + float(t.sum())
            mass[term] = 0.0
        if sink.any():
            mass[sink] = 0.0

    ply = 0
    absorb(0)
    while True:
        for _ in range(64):  # chance steps are not plies
            mc = np.where(chance, mass, 0.0)
            if not mc.any():
                break
            mass[:] = mass - mc + PT @ mc
            absorb(ply)
        left = float(mass.sum())
        if left <= tol or ply >= max_plies:
            break
        mass[:] = PT @ mass
        ply += 1
        absorb(ply)
    lengths = np.array(sorted(ended), dtype=np.int64)
    probs = np.array([ended[k] for k in lengths], dtype=np.float64)
    return lengths, probs, (float(got[0]), float(got[1]), float(got[2])), max(0.0, float(mass.sum()))


def _simulate(n: int, src: np.ndarray, dst: np.ndarray, w: np.ndarray, kind: np.ndarray, root: int,
              win_first: np.ndarray, win_second: np.ndarray, tie: np.ndarray, *, samples: int,
              seed: int, max_plies: int, first: str, second: str) -> PlayStats:
    """Monte Carlo games along the edges with the policy weights (vectorised over games)."""
    rng = np.random.default_rng(seed)
    order = np.argsort(src, kind="stable")
    src, dst, w = src[order], dst[order], w[order]
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=offsets[1:])
    row_total = np.bincount(src, weights=w, minlength=n)
    cum = np.cumsum(w)
    start = np.where(offsets[:-1] > 0, cum[np.maximum(offsets[:-1] - 1, 0)], 0.0)
    # last edge of each row with positive weight (guards against rounding at the row's end)
    pos_idx = np.where(w > 0, np.arange(len(w)), -1)
    last_pos = np.full(n, -1, dtype=np.int64)
    np.maximum.at(last_pos, src, pos_idx)
    cur = np.full(samples, root, dtype=np.int64)
    length = np.zeros(samples, dtype=np.int64)
    result = np.full(samples, -1, dtype=np.int8)  # 0 first, 1 second, 2 tie, 3 unfinished
    alive = np.ones(samples, dtype=bool)
    for _ in range(max_plies * 4 + 8):
        ids = np.flatnonzero(alive)
        if len(ids) == 0:
            break
        r = cur[ids]
        at_term = kind[r] == TERMINAL
        if at_term.any():
            t_ids, t_rows = ids[at_term], r[at_term]
            u = rng.random(len(t_ids))
            p1, p2 = win_first[t_rows], win_second[t_rows]
            result[t_ids] = np.where(u < p1, 0, np.where(u < p1 + p2, 1, 2))
            alive[t_ids] = False
        stuck = ~at_term & ((row_total[r] <= 0) | (length[ids] >= max_plies))
        if stuck.any():
            result[ids[stuck]] = 3
            alive[ids[stuck]] = False
        go = ~at_term & ~stuck
        ids, r = ids[go], r[go]
        if len(ids) == 0:
            continue
        target = start[r] + rng.random(len(ids)) * row_total[r]
        e = np.searchsorted(cum, target, side="right")
        e = np.clip(e, offsets[r], offsets[r + 1] - 1)
        bad = w[e] <= 0
        e[bad] = last_pos[r[bad]]
        length[ids] += (kind[r] != CHANCE)
        cur[ids] = dst[e]
    result[result < 0] = 3
    counts = np.bincount(result, minlength=4) / samples
    ended = result < 3
    lengths, lcounts = unique_counts(length[ended])
    exp_len = float(length[ended].mean()) if ended.any() else None
    half = 1.96 * np.sqrt(0.25 / samples)
    method = (f"simulation of {samples:,} games (seed {seed}, at most {max_plies:,} plies); "
              f"probabilities within about ±{100 * half:.1f} points (95%)")
    return PlayStats(first, second, float(counts[0]), float(counts[1]), float(counts[2]),
                     float(counts[3]), exp_len, lengths.astype(np.int64), lcounts / samples,
                     method, False, samples, n, max_plies)


# --- structure ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Structure:
    """Size and shape of the position graph (one row per position as stored: with symmetry, one
    per symmetry class)."""

    positions: int
    terminal: int
    chance: int
    decision: int
    moves: int | None
    branching_mean: float | None
    branching_max: int | None
    cyclic_share: float | None
    cycles: int | None
    largest_cycle: int | None
    cycle_method: str | None
    by_value: dict[str, int]


def cyclic_positions(n: int, src: np.ndarray, dst: np.ndarray, *, method: str = "auto") -> tuple[np.ndarray, int, int, str]:
    """Which positions lie on a cycle of the position graph.

    A position is on a cycle when its strongly connected component has more than one position,
    or it has a move back to itself. ``method`` ``networkx`` (small graphs), ``scipy``
    (``scipy.sparse.csgraph.connected_components(connection='strong')``, any size) or ``auto``.

    Returns
    -------
    (on_cycle bool[n], number of cyclic components, size of the largest, method used)
    """
    if method == "auto":
        method = "networkx" if n <= NX_LIMIT else "scipy"
    self_loop = np.zeros(n, dtype=bool)
    self_loop[src[src == dst]] = True
    if method == "networkx":
        import networkx as nx

        g = nx.DiGraph()
        g.add_nodes_from(range(n))
        g.add_edges_from(zip(src.tolist(), dst.tolist()))
        labels = np.empty(n, dtype=np.int64)
        for i, comp in enumerate(nx.strongly_connected_components(g)):
            labels[list(comp)] = i
    elif method == "scipy":
        g = sp.csr_matrix((np.ones(len(src), dtype=np.int8), (src, dst)), shape=(n, n))
        _, labels = csgraph.connected_components(g, directed=True, connection="strong")
    else:
        raise ValueError(f"unknown method {method!r}; use auto, networkx or scipy")
    sizes = np.bincount(labels)
    on_cycle = (sizes[labels] > 1) | self_loop
    cyc_labels = unique(labels[on_cycle])
    largest = int(sizes[cyc_labels].max()) if len(cyc_labels) else 0
    return on_cycle, int(len(cyc_labels)), largest, method


def branching_counts(positions: Frame) -> pl.DataFrame:
    """How many non-terminal decision positions have each number of legal moves: columns
    ``num_moves`` and ``positions``, sorted."""
    return collect(positions, positions.lazy().filter((pl.col("kind") == DECISION) & (pl.col("num_moves") > 0))
                    .group_by("num_moves").agg(pl.len().cast(pl.Int64).alias("positions"))).sort("num_moves")


def structure(positions: Frame, edges: pl.DataFrame | None = None, *, method: str = "auto") -> Structure:
    """Counts, branching factor and cycles of the position graph.

    Branching is over non-terminal decision positions (``num_moves``, mean and max). Cycles need
    the edges table (None when it is missing; a lazy scan never has them).
    """
    kind = pl.col("kind")
    nm = pl.col("num_moves").fill_null(0).cast(pl.Int64)
    dec = (kind == DECISION) & (nm > 0)
    stochastic = stochastic_values(positions)
    values = (("win", WIN), ("lose", LOSE), ("tie", TIE), ("draw", DRAW))
    got = collect(positions, positions.lazy().select(
        pl.len().alias("positions"),
        *[(kind == k).sum().cast(pl.Int64).alias(name)
          for name, k in (("terminal", TERMINAL), ("chance", CHANCE), ("decision", DECISION))],
        nm.filter(dec).mean().alias("branching_mean"), nm.filter(dec).max().alias("branching_max"),
        *([] if stochastic else [((pl.col("value") == c) & (kind != CHANCE)).sum().cast(pl.Int64).alias(v)
                                 for v, c in values]),
    )).row(0, named=True)
    by_value = {} if stochastic else {v: int(got[v]) for v, _ in values}
    n = int(got["positions"])
    cyc = (None, None, None, None)
    n_moves = None
    if edges is not None:
        if not isinstance(positions, pl.DataFrame):
            raise ValueError("cycles need the positions table in memory, not a scan")
        src, dst, _ = _edge_arrays(edges)
        n_moves = int(len(src))
        on_cycle, count_, largest, used = cyclic_positions(n, src, dst, method=method)
        cyc = (float(on_cycle.mean()) if n else 0.0, count_, largest, used)
    return Structure(
        positions=n, terminal=int(got["terminal"]), chance=int(got["chance"]), decision=int(got["decision"]),
        moves=n_moves,
        branching_mean=None if got["branching_mean"] is None else float(got["branching_mean"]),
        branching_max=None if got["branching_max"] is None else int(got["branching_max"]),
        cyclic_share=cyc[0], cycles=cyc[1], largest_cycle=cyc[2], cycle_method=cyc[3],
        by_value=by_value,
    )
