"""Plot helpers for reports: each draws on the matplotlib ``ax`` it is given and returns it.

Nothing here saves files or touches pyplot's global state (only :mod:`analysis.report` and
:mod:`analysis.tuning` create figures and save them). One palette for the four values is used by
every plot, so win / lose / tie / draw look the same everywhere; outcomes of whole games use the
same colours from the first player's point of view (first player wins = win colour, second player
wins = lose colour, tied end = tie colour, never ends = draw colour).
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.patches import Patch, Rectangle
from matplotlib.ticker import FuncFormatter, MaxNLocator

__all__ = [
    "VALUE_COLOURS", "OUTCOME_COLOURS", "PLAYER_COLOURS", "OUTCOME_LABELS",
    "remoteness_histogram", "value_by_ply", "opening_moves", "setup_outcomes",
    "margin_distribution", "expected_histogram", "expected_by_ply", "play_outcomes",
    "length_distribution", "good_move_shares", "branching", "sweep_bars",
]

#: the one palette: value of the side to move (or of the mover, for moves)
VALUE_COLOURS: dict[str, str] = {
    "win": "#2e7d32",   # green
    "lose": "#c62828",  # red
    "tie": "#f2a900",   # amber
    "draw": "#1f5fbf",  # blue
}
#: outcomes of whole games, first player's point of view (same colours as the values)
OUTCOME_COLOURS: dict[str, str] = {
    "first": VALUE_COLOURS["win"],
    "second": VALUE_COLOURS["lose"],
    "tie": VALUE_COLOURS["tie"],
    "unfinished": VALUE_COLOURS["draw"],
}
OUTCOME_LABELS: dict[str, str] = {
    "first": "first player wins",
    "second": "second player wins",
    "tie": "tied end",
    "unfinished": "never ends",
}
#: lines for matchups of players (length distributions)
PLAYER_COLOURS: tuple[str, ...] = ("#424242", "#8e24aa", "#00897b", "#ef6c00", "#6d4c41")
NEUTRAL = "#607d8b"

_VALUE_LABELS = {"win": "win", "lose": "lose", "tie": "tie (ends level)", "draw": "draw (never ends)"}


def _counts_axis(ax: Axes) -> None:
    """Whole-number y ticks written in full with thousands separators (no 1e6 offset)."""
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))


def _finish(ax: Axes, title: str, xlabel: str, ylabel: str) -> Axes:
    ax.set_title(title, fontsize=11)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    return ax


def remoteness_histogram(ax: Axes, table: pl.DataFrame, *, title: str = "Positions by value and remoteness") -> Axes:
    """Stacked bars: positions by value (side to move) for each remoteness; draws (no
    remoteness) as a separate bar at the right. ``table`` from
    :func:`analysis.metrics.value_remoteness_table`."""
    finite = table.filter(pl.col("remoteness").is_not_null())
    draws = table.filter(pl.col("remoteness").is_null())
    x = finite["remoteness"].to_numpy().astype(float)
    top = float(x.max()) if len(x) else 0.0
    draw_x = top + 2.0
    bottom = np.zeros(len(x))
    for v in ("win", "lose", "tie"):
        h = finite[v].to_numpy().astype(float)
        if h.any():
            ax.bar(x, h, bottom=bottom, color=VALUE_COLOURS[v], label=_VALUE_LABELS[v], width=0.85)
        bottom += h
    if draws.height and int(draws["draw"][0]) > 0:
        ax.bar([draw_x], [float(draws["draw"][0])], color=VALUE_COLOURS["draw"], width=0.85,
               label=_VALUE_LABELS["draw"], hatch="//", edgecolor="white")
    ticks = _nice_ticks(x)
    if draws.height:
        ticks = list(ticks) + [draw_x]
    ax.set_xticks(ticks)
    ax.set_xticklabels([str(int(t)) for t in ticks[:-1]] + ["draw"] if draws.height else
                       [str(int(t)) for t in ticks])
    if len(x) + int(draws.height > 0) <= 25:  # totals on top, so tiny bars are still visible
        for xi, total in zip(x, finite["total"].to_numpy()):
            ax.annotate(f"{int(total):,}", (xi, total), xytext=(0, 2), textcoords="offset points",
                        ha="center", va="bottom", fontsize=7)
        if draws.height and int(draws["draw"][0]) > 0:
            ax.annotate(f"{int(draws['draw'][0]):,}", (draw_x, float(draws["draw"][0])), xytext=(0, 2),
                        textcoords="offset points", ha="center", va="bottom", fontsize=7)
    ax.margins(y=0.1)
    ax.legend(fontsize=8, frameon=False)
    _counts_axis(ax)
    return _finish(ax, title, "remoteness (plies to the end with perfect play)", "positions")


def _nice_ticks(x: np.ndarray, most: int = 16) -> list[float]:
    if len(x) == 0:
        return []
    lo, hi = int(x.min()), int(x.max())
    step = max(1, int(np.ceil((hi - lo + 1) / most)))
    return list(range(lo, hi + 1, step))


def value_by_ply(ax: Axes, table: pl.DataFrame, *, title: str = "Value of the side to move by ply") -> Axes:
    """Stacked bars of the share of wins / losses / ties / draws for the side to move at each
    ply. ``table`` from :func:`analysis.metrics.value_by_ply`."""
    x = table["ply"].to_numpy().astype(float)
    bottom = np.zeros(len(x))
    for v in ("win", "lose", "tie", "draw"):
        h = table[f"{v}_share"].to_numpy().astype(float)
        if h.any():
            ax.bar(x, h, bottom=bottom, color=VALUE_COLOURS[v], label=_VALUE_LABELS[v], width=0.9)
        bottom += h
    ax.set_ylim(0, 1)
    ax.set_xticks(_nice_ticks(x))
    ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return _finish(ax, title, "ply (moves from the start)", "share of positions")


def opening_moves(ax: Axes, labels: Sequence[str], values: Sequence[str | None],
                  lengths: Sequence[float | None], *, xlabel: str = "remoteness after the move (plies)",
                  title: str = "Opening moves") -> Axes:
    """Horizontal bars, one per (class of) opening move: coloured by the move's value for the
    mover, length = remoteness (deterministic) or expected result (stochastic, ``values`` None).
    Draws have no remoteness and are drawn hatched across the axis."""
    n = len(labels)
    y = np.arange(n)[::-1]
    finite = [float(v) for v in lengths if v is not None]
    span = max(finite + [1.0])
    for yi, v, ln in zip(y, values, lengths):
        if v is None:  # stochastic: expected result of the mover
            colour = VALUE_COLOURS["win"] if (ln or 0) > 1e-9 else VALUE_COLOURS["lose"] if (ln or 0) < -1e-9 else VALUE_COLOURS["tie"]
            ax.barh(yi, ln or 0.0, color=colour)
        elif ln is None:
            ax.barh(yi, span, color=VALUE_COLOURS[v], hatch="//", edgecolor="white", alpha=0.8)
            ax.text(span / 2, yi, "draw: never ends", ha="center", va="center", fontsize=7,
                    color="white", bbox={"facecolor": VALUE_COLOURS[v], "edgecolor": "none", "pad": 1})
        else:
            ax.barh(yi, max(float(ln), 0.15), color=VALUE_COLOURS[v])
    ax.set_yticks(y)
    ax.set_yticklabels([_short(lbl) for lbl in labels], fontsize=8)
    if any(v is not None for v in values):
        shown = [v for v in ("win", "tie", "draw", "lose") if v in values]
        ax.legend(handles=[Patch(color=VALUE_COLOURS[v], label=f"{v} for the mover") for v in shown],
                  fontsize=8, frameon=False, loc="lower right")
    else:
        ax.axvline(0, color="black", lw=0.8)
        ax.set_xlim(-1.05, 1.05)
    _finish(ax, title, xlabel, "")
    ax.grid(axis="x", alpha=0.3)
    ax.grid(axis="y", visible=False)
    if not finite and any(v is not None for v in values):  # only draws: no length to show
        ax.set_xticks([])
        ax.set_xlabel("every move leads to a draw: no game length")
    return ax


def _short(text: str, width: int = 34) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def setup_outcomes(ax: Axes, shares: Mapping[str, float], *, title: str = "Random setups: result with perfect play",
                   names: tuple[str, str] = ("first player", "second player")) -> Axes:
    """Bars of the (probability-weighted) share of setups won / lost / tied / drawn by the first
    player; ``names`` are what the first and second seats are called (e.g. Black, White)."""
    seats = names
    names = [v for v in ("win", "lose", "tie", "draw") if shares.get(v, 0) > 0] or ["win", "lose"]
    labels = {"win": f"{seats[0]}\nwins", "lose": f"{seats[1]}\nwins", "tie": "tie", "draw": "draw"}
    vals = [shares.get(v, 0.0) for v in names]
    ax.bar([labels[v] for v in names], vals, color=[VALUE_COLOURS[v] for v in names])
    for i, v in enumerate(vals):
        ax.text(i, v + 0.01, f"{100 * v:.1f}%", ha="center", va="bottom", fontsize=9)
    ax.set_ylim(0, min(1.0, max(vals) + 0.12))
    return _finish(ax, title, "result of the setup with perfect play", "share of setups (by probability)")


def margin_distribution(ax: Axes, margins: pl.DataFrame, *, title: str = "Score margin over the setups",
                        who: str = "the first player") -> Axes:
    """Bars of the probability of each final score margin (first player's view, ``who`` names
    that seat); positive margins in the win colour, negative in the lose colour, zero in the tie
    colour."""
    m = margins["margin"].to_numpy().astype(float)
    p = margins["probability"].to_numpy().astype(float)
    colours = [VALUE_COLOURS["win"] if x > 0 else VALUE_COLOURS["lose"] if x < 0 else VALUE_COLOURS["tie"] for x in m]
    ax.bar(m, p, color=colours, width=0.8)
    ax.set_xticks(_nice_ticks(m))
    return _finish(ax, title, f"score margin of {who} (perfect play)", "probability")


def expected_histogram(ax: Axes, table: pl.DataFrame, *, title: str = "Positions by expected result",
                       xlabel: str = "expected result of the side to move (-1 loss ... +1 win)") -> Axes:
    """Stochastic games: positions by expected result of the side to move (from
    :func:`analysis.metrics.expected_histogram`)."""
    lo = table["lo"].to_numpy()
    hi = table["hi"].to_numpy()
    c = table["positions"].to_numpy()
    mid = (lo + hi) / 2
    span = float(hi[-1]) if len(hi) else 1.0  # 1 for results; the largest payoff otherwise
    near = 0.05 * span
    colours = [VALUE_COLOURS["win"] if x > near else VALUE_COLOURS["lose"] if x < -near else VALUE_COLOURS["tie"] for x in mid]
    ax.bar(mid, c, width=(hi - lo) * 0.95, color=colours)
    ax.set_xlim(-1.05 * span, 1.05 * span)
    _counts_axis(ax)
    return _finish(ax, title, xlabel, "positions")


def expected_by_ply(ax: Axes, table: pl.DataFrame, *, title: str = "Side to move by ply") -> Axes:
    """Stochastic games: mean win and loss probability and mean expected result of the side to
    move at each ply (from :func:`analysis.metrics.expected_by_ply`)."""
    x = table["ply"].to_numpy()
    if "mean_p_win" in table.columns:
        ax.plot(x, table["mean_p_win"].to_numpy(), color=VALUE_COLOURS["win"], marker="o", ms=3, label="mean win probability")
    if "mean_p_loss" in table.columns:
        ax.plot(x, table["mean_p_loss"].to_numpy(), color=VALUE_COLOURS["lose"], marker="o", ms=3, label="mean loss probability")
    ax.plot(x, table["mean_expected"].to_numpy(), color="black", ls="--", label="mean expected result")
    ax.axhline(0, color="grey", lw=0.6)
    ax.set_ylim(-1.05, 1.05)
    ax.legend(fontsize=8, frameon=False)
    return _finish(ax, title, "ply (moves from the start)", "probability / expected result")


def play_outcomes(ax: Axes, labels: Sequence[str], outcomes: Sequence[Mapping[str, float]],
                  *, title: str = "Results of random and perfect players",
                  names: tuple[str, str] | None = None) -> Axes:
    """Stacked horizontal bars, one per matchup: share of games the first player wins, the
    second wins, ending level, never ending. ``outcomes`` maps ``first``/``second``/``tie``/
    ``unfinished`` to probabilities; ``names`` (first seat, second seat) rename the legend."""
    legend = dict(OUTCOME_LABELS)
    if names is not None:
        legend.update(first=f"{names[0]} wins", second=f"{names[1]} wins")
    y = np.arange(len(labels))[::-1]
    left = np.zeros(len(labels))
    for key in ("first", "second", "tie", "unfinished"):
        w = np.array([o.get(key, 0.0) for o in outcomes])
        if w.any():
            ax.barh(y, w, left=left, color=OUTCOME_COLOURS[key], label=legend[key])
            for yi, l0, wi in zip(y, left, w):
                if wi >= 0.08:
                    ax.text(l0 + wi / 2, yi, f"{100 * wi:.0f}%", ha="center", va="center", fontsize=8, color="white")
        left += w
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=8)
    ax.set_xlim(0, 1)
    ax.legend(fontsize=8, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=4)
    _finish(ax, title, "share of games", "")
    ax.grid(axis="y", visible=False)
    return ax


def length_distribution(ax: Axes, series: Mapping[str, tuple[np.ndarray, np.ndarray]],
                        *, perfect: int | None = None, title: str = "Game length") -> Axes:
    """Share of games over after at most k plies (cumulative, from the exact distribution of
    lengths: ``series`` maps a matchup to ``(lengths, probabilities)``), one line per matchup; a
    dashed vertical line at the perfect-play length when it is a single number. The x axis stops
    where 99.9% of every matchup's games are over."""
    right = 1.0 if perfect is None else perfect + 1.0
    for i, (label, (lengths, probs)) in enumerate(series.items()):
        if len(lengths) == 0:
            continue
        cum = np.cumsum(probs)
        xs = np.concatenate([[0], lengths])
        ys = np.concatenate([[0.0], cum])
        ax.step(xs, ys, where="post", color=PLAYER_COLOURS[i % len(PLAYER_COLOURS)], label=label, lw=1.5)
        k = int(np.searchsorted(cum, 0.999 * cum[-1]))
        right = max(right, float(lengths[min(k, len(lengths) - 1)]) + 1.0)
    if perfect is not None:
        ax.axvline(perfect, color=VALUE_COLOURS["win"], ls="--", lw=1.5, label=f"perfect play: {perfect} plies")
    ax.set_xlim(0, right)
    ax.set_ylim(0, 1.02)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(fontsize=8, frameon=False, loc="lower right")
    return _finish(ax, title, "plies played", "share of games over")


def good_move_shares(ax: Axes, shares: np.ndarray, *, what: str = "winning",
                     title: str = "How many moves keep the win") -> Axes:
    """Histogram of the per-position share of good (winning / optimal) moves."""
    colour = VALUE_COLOURS["win"] if what == "winning" else NEUTRAL
    ax.hist(shares, bins=np.linspace(0, 1, 21), color=colour, edgecolor="white")
    ax.set_xlim(0, 1)
    _counts_axis(ax)
    return _finish(ax, title, f"share of legal moves that are {what}", "positions")


def branching(ax: Axes, num_moves: np.ndarray, *, weights: np.ndarray | None = None,
              title: str = "Legal moves per position") -> Axes:
    """Histogram of the number of legal moves over non-terminal decision positions: one entry per
    position, or each distinct number once with its count of positions as ``weights``."""
    if len(num_moves):
        hi = int(num_moves.max())
        ax.hist(num_moves, bins=np.arange(0.5, hi + 1.5, max(1, (hi + 39) // 40)), weights=weights,
                color=NEUTRAL, edgecolor="white")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        _counts_axis(ax)
    return _finish(ax, title, "legal moves", "positions")


def sweep_bars(ax: Axes, labels: Sequence[str], values: Sequence[float | None], *, title: str,
               ylabel: str, colours: Sequence[str] | None = None, log: bool = False,
               symmetric: bool = False, fmt: str | None = None) -> Axes:
    """One bar per variant of a sweep (missing values left empty); ``fmt`` (e.g. ``"{:.0%}"``)
    writes each value above its bar."""
    x = np.arange(len(labels))
    vals = np.array([np.nan if v is None else float(v) for v in values])
    ax.bar(x, np.nan_to_num(vals), color=list(colours) if colours else NEUTRAL)
    if fmt:
        for xi, v in zip(x, vals):
            if not np.isnan(v):
                ax.annotate(fmt.format(v), (xi, v), xytext=(0, 3 if v >= 0 else -3), textcoords="offset points",
                            ha="center", va="bottom" if v >= 0 else "top", fontsize=8)
    ax.set_xticks(x)
    ax.set_xticklabels(labels, fontsize=8, rotation=20 if len(labels) > 3 else 0, ha="right" if len(labels) > 3 else "center")
    if log:
        ax.set_yscale("log")
    if symmetric:
        ax.axhline(0, color="black", lw=0.8)
        ax.set_ylim(-1.05, 1.05)
    return _finish(ax, title, "variant", ylabel)



def payoff_matrix(ax: Axes, rows: Sequence[str], cols: Sequence[str], payoff: np.ndarray,
                  row_mix: Sequence[float], col_mix: Sequence[float], *, row_label: str = "player 1",
                  col_label: str = "player 2", title: str = "The first secret choice as a matrix game") -> Axes:
    """A secret choice's payoff matrix: each cell the row player's expected result on a
    red-white-green scale (-1..+1) with its number, the cells both mixes play outlined, and each
    player's optimal mix written on the margins (rows: right, columns: below their names)."""
    a = np.asarray(payoff, dtype=np.float64)
    ax.imshow(a, cmap="RdYlGn", vmin=-1.8, vmax=1.8, aspect="auto")  # pale ends: the numbers stay legible
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            ax.text(j, i, f"{a[i, j]:+.2f}", ha="center", va="center", fontsize=8)
            if row_mix[i] > 1e-6 and col_mix[j] > 1e-6:
                ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, lw=2.2, ec="black"))
    ax.set_xticks(range(len(cols)))
    ax.set_xticklabels([f"{c}\n{q:.2f}" for c, q in zip(cols, col_mix)], fontsize=8)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([f"{r}  {q:.2f}" for r, q in zip(rows, row_mix)], fontsize=8)
    ax.tick_params(length=0)
    ax.set_title(title, fontsize=10)
    ax.set_xlabel(f"{col_label}'s choice and its probability in the optimal mix", fontsize=8)
    ax.set_ylabel(f"{row_label}'s choice and its probability", fontsize=8)
    return ax


def mixed_strategies(ax: Axes, names: Sequence[str], mixes: Mapping[str, Sequence[float]], *,
                     title: str = "Optimal mixed strategies") -> Axes:
    """Grouped bars: the probability each player gives each action (one colour per player)."""
    x = np.arange(len(names))
    width = 0.8 / max(1, len(mixes))
    for k, (label, probs) in enumerate(mixes.items()):
        ax.bar(x + (k - (len(mixes) - 1) / 2) * width, probs, width, label=label)
    ax.set_xticks(x)
    ax.set_xticklabels(names)
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=8)
    return _finish(ax, title, "action", "probability")
