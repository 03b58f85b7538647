"""Rules tuning: solve every combination of a parameter sweep and compare the variants.

>>> from analysis.tuning import run_sweep, format_table
>>> path, table = run_sweep("override", {"size": "3", "line": "3"},
...                         {"per_size": ["1", "2"], "centre_rule": ["on", "off"]})
>>> print(format_table(table))

One row per variant: the verdict, remoteness, first-player advantage, decision difficulty and
size, all computed from the variants' tables (:mod:`analysis.metrics`). The comparison report
(``reports/<game>/tune-<sweep id>/report.md``, ``report.html``, ``figures/``) opens with a
one-paragraph answer generated from those numbers.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import sys
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import polars as pl

from analysis import metrics as M
from analysis import plots
from analysis.report import DEFAULT_ROOT, Document, Section, glossary_section, save_document
from solver.core.progress import Task
from solver.errors import VariantError

__all__ = ["run_sweep", "format_table", "summarize", "answer", "compare", "what_changes", "sweep_id",
           "combinations"]

#: positions tables up to this many rows are compared row by row (a hash of every row); larger
#: ones by their counts only
COMPARE_LIMIT = 50_000_000

#: columns of the terminal table (in order); the others stay in the returned DataFrame
SHOWN = ("verdict", "remoteness", "advantage", "margin", "p_first_wins", "only_move", "good_moves", "random_vs_perfect",
         "random_first_wins", "positions")
#: columns holding probabilities / shares (printed as percentages)
SHARES = {"p_first_wins", "p_first_loses", "only_move", "good_moves", "random_vs_perfect", "random_first_wins", "cyclic"}
HEADERS = {
    "verdict": "verdict (perfect play)",
    "value": "value (1st player)",
    "remoteness": "plies",
    "advantage": "1st-player advantage",
    "margin": "1st-player margin",
    "p_first_wins": "P(1st wins)",
    "only_move": "only-move share",
    "good_moves": "winning-move share",
    "random_vs_perfect": "random beats perfect",
    "random_first_wins": "random vs random: 1st wins",
    "positions": "positions",
    "cyclic": "on a cycle",
}


def sweep_id(fixed: Mapping[str, str], vary: Mapping[str, Sequence[str]]) -> str:
    """A short folder id of a sweep: the varied names and a hash of the whole request."""
    blob = json.dumps({"fixed": {k: str(v) for k, v in fixed.items()},
                       "vary": {k: [str(x) for x in v] for k, v in vary.items()}}, sort_keys=True)
    return "+".join(vary) + "-" + hashlib.sha1(blob.encode()).hexdigest()[:6]


def combinations(vary: Mapping[str, Sequence[str]]) -> list[dict[str, str]]:
    """Every combination of the varied values (the first parameter varies slowest)."""
    names = list(vary)
    return [dict(zip(names, values)) for values in itertools.product(*(list(vary[k]) for k in names))]


def _check(fixed: Mapping[str, str], vary: Mapping[str, Sequence[str]]) -> None:
    if not vary:
        raise VariantError("a sweep needs at least one parameter to vary; write e.g. --vary per_size=1,2")
    for name, values in vary.items():
        if name in fixed:
            raise VariantError(f"parameter {name!r} is both set and varied; drop its --set or its --vary")
        if len(list(values)) == 0:
            raise VariantError(f"--vary {name}= has no values; write e.g. --vary {name}=1,2")
        if len(set(values)) != len(list(values)):
            raise VariantError(f"--vary {name} lists a value twice; list each value once")


def summarize(solution: Any, *, exact_limit: int = M.EXACT_LIMIT) -> dict[str, Any]:
    """The comparison numbers of one solved variant (one row of a sweep).

    ``advantage``: first player's expected result (+1 win ... -1 loss); ``p_first_wins``: the
    probability that the first player wins under perfect play (share of setups for random
    setups); ``only_move`` / ``good_moves``: :func:`analysis.metrics.decision_difficulty`;
    ``random_vs_perfect``: mean over the two seats of the probability that a uniformly random
    player beats a perfect one; ``random_first_wins``: the first player's win probability when
    both play at random.
    """
    edges = solution.edges
    pos = M.positions_of(solution)  # a streaming scan for a tiered table too large for its moves
    meta = M.reading_meta(solution, pos)
    if meta.get("solution") == "paranoid":  # 3-4 players: the first seat's question, two-sided
        pos = M.paranoid_view(pos, 0)
    v = M.verdict(pos, meta, setups=solution.setups, edges=edges)
    warnings = list(getattr(getattr(solution, "game", None), "warnings", None) or [])
    row: dict[str, Any] = {
        "first_player": v.first_player, "value_counts": _value_counts(pos), "digest": _digest(pos),
        "warnings": "\n".join(warnings) or None,
        "kind": v.kind, "verdict": v.short, "value": v.value, "remoteness": v.remoteness,
        "advantage": v.advantage, "margin": v.margin, "p_first_wins": v.p_win, "p_first_loses": v.p_loss,
        "only_move": None, "good_moves": None,
        "random_vs_perfect": None, "random_first_wins": None, "positions": M.count(pos),
        "cyclic": None, "label": meta.get("label"), "table": str(solution.path),
        "rules_version": meta.get("rules_version"), "toolkit_version": meta.get("toolkit_version"),
        "solve_seconds": meta.get("solve_seconds"), "method": None,
        "not_certified": meta.get("not_certified_because"),
        "error_estimate": (meta.get("error_estimate") if meta.get("not_certified_because")
                           and v.interval is None else None),
        "value_lo": v.interval[0] if v.interval is not None else None,
        "value_hi": v.interval[1] if v.interval is not None else None,
    }
    if edges is not None:
        d = M.decision_difficulty(pos, edges)
        row["only_move"], row["good_moves"] = d.only_move_share, d.good_move_share
        row["cyclic"] = M.structure(pos, edges).cyclic_share
        if M.num_players(pos, meta) == 2:
            try:
                rp = M.play_statistics(pos, edges, first="random", second="perfect", meta=meta, exact_limit=exact_limit)
                pr = M.play_statistics(pos, edges, first="perfect", second="random", meta=meta, exact_limit=exact_limit)
                rr = M.play_statistics(pos, edges, first="random", second="random", meta=meta, exact_limit=exact_limit)
                row["random_vs_perfect"] = (rp.p_first + pr.p_second) / 2
                row["random_first_wins"] = rr.p_first
                row["method"] = "; ".join(sorted({rp.method, pr.method, rr.method}))
            except ValueError:
                pass
    return row


def _value_counts(positions: M.Frame) -> str:
    """How many positions have each value (deterministic tables) or each expected result rounded
    to 1e-9 (stochastic), as JSON: two tables with different counts are different."""
    col = pl.col("value")
    if M.stochastic_values(positions):
        col = col.round(9)
    query = positions.lazy().group_by(col.alias("value")).agg(pl.len().alias("count")).sort("value")
    counts = M.collect(positions, query)
    return json.dumps([[str(a), int(b)] for a, b in counts.iter_rows()])


def _digest(positions: M.Frame) -> str | None:
    """A hash of every row of the positions table (``None`` beyond :data:`COMPARE_LIMIT` rows):
    equal digests mean the same positions with the same values, plies and moves. Row hashes are
    stable within one polars version, so digests compare the variants of one sweep only."""
    if M.count(positions) > COMPARE_LIMIT:
        return None
    if isinstance(positions, pl.LazyFrame):
        positions = positions.collect().sort("key")
    h = hashlib.sha1(json.dumps([[c, str(t)] for c, t in positions.schema.items()]).encode())
    for seed in (0, 1):  # two independent 64-bit hashes per row
        h.update(positions.hash_rows(seed=seed).to_numpy().tobytes())
    return h.hexdigest()


def run_sweep(
    game_name: str,
    fixed: dict[str, str],
    vary: dict[str, list[str]],
    *,
    out: str | Path | None = None,
    reports_root: Path = DEFAULT_ROOT,
    progress: bool | str = False,
    exact_limit: int = M.EXACT_LIMIT,
    max_positions: int | None = None,
    notes: list[str] | None = None,
    bound_rounds: int | None = None,
) -> tuple[Path, pl.DataFrame]:
    """Solve every combination of ``vary`` (with ``fixed``), compare, write the report.

    Parameters
    ----------
    game_name : str
        A registered game, e.g. ``"override"``.
    fixed : dict
        Parameters set for every variant (text values, as after ``--set``).
    vary : dict
        Parameter -> the values to try (as after ``--vary name=v1,v2``).
    out : path, optional
        Root folder of the tables (default ``tables/``); tables on disk are reused.
    reports_root : Path
        The report goes to ``reports_root/<game>/tune-<sweep id>/``.
    progress : bool or "lines"
        Show solver progress bars and one line per variant (solving, then comparing) on
        standard error; ``"lines"`` (not a terminal): a line every 10 s saying the variant and
        the step (:mod:`solver.core.progress`).
    exact_limit : int
        Random-play statistics are exact up to this many positions, simulated beyond.
    max_positions : int, optional
        Refuse variants with more positions (as ``solve``).
    notes : list, optional
        Receives what the solves had to say (e.g. a table on disk that was not reused).
    bound_rounds : int, optional
        Secret simultaneous choices: rounds of better strategies for the proven intervals, as
        :func:`solver.api.solve` (default there: 4).

    Returns
    -------
    (Path, polars.DataFrame)
        The path of ``report.md`` and the comparison table (one row per variant; print it with
        :func:`format_table`).
    """
    _check(fixed, vary)
    combos = combinations(vary)
    with Task("tune", progress, total=len(combos), unit="variants", note_first=True, bar=False) as task:
        return _run_sweep(game_name, fixed, vary, combos, task, out=out, reports_root=reports_root,
                          progress=progress, exact_limit=exact_limit, max_positions=max_positions, notes=notes,
                          bound_rounds=bound_rounds)


def _run_sweep(game_name: str, fixed: dict[str, str], vary: dict[str, list[str]], combos: list[dict[str, str]],
               task: Task, *, out: str | Path | None, reports_root: Path, progress: bool | str, exact_limit: int,
               max_positions: int | None, notes: list[str] | None,
               bound_rounds: int | None = None) -> tuple[Path, pl.DataFrame]:
    from solver.api import make_game, solve

    rows = []
    for i, combo in enumerate(combos, 1):
        params = {**fixed, **combo}
        game = make_game(game_name, params)
        if progress is True:
            print(f"[{i}/{len(combos)}] solving {game.variant.label()}", file=sys.stderr)
        varied = ", ".join(f"{k}={v}" for k, v in combo.items())  # the fixed rest is in the command
        task.update(note=f"solving {varied}")
        # (a round-by-round table on disk is used as it is unless more bound rounds are asked)
        sol = solve(game, out=out, progress=progress, max_positions=max_positions, notes=notes,
                    sweep=False, bound_rounds=bound_rounds, resume=bound_rounds is not None)
        if progress is True:
            print(f"[{i}/{len(combos)}] comparing: random and perfect play, move values", file=sys.stderr)
        task.update(note=f"comparing {varied}: random and perfect play, move values")
        row = {k: str(game.variant.as_text()[k]) for k in vary}
        row.update(summarize(sol, exact_limit=exact_limit))
        rows.append(row)
        task.advance()
    task.update(note="writing the report")
    df = _frame(rows, list(vary))
    # the values as the game writes them (e.g. "true" -> "on"), in the order given
    shown = {k: list(dict.fromkeys(df[k].to_list())) for k in vary}
    name = game.name  # the game's own name, also when it was given as module:Class
    folder = Path(reports_root) / name / f"tune-{sweep_id(fixed, vary)}"
    first = int(df["first_player"][0]) if df.height and df["first_player"][0] is not None else 0
    seats = M.Seats.of(getattr(game, "seat_names", None), first, max(2, getattr(game, "num_players", 2)))
    doc = _document(name, fixed, shown, df, seats=seats, title=game.short_title)
    return save_document(doc, folder), df


def _frame(rows: list[dict[str, Any]], names: list[str]) -> pl.DataFrame:
    schema: dict[str, Any] = {k: pl.Utf8 for k in names}
    schema.update({
        "kind": pl.Utf8, "verdict": pl.Utf8, "value": pl.Utf8, "remoteness": pl.Int64,
        "advantage": pl.Float64, "margin": pl.Float64, "p_first_wins": pl.Float64, "p_first_loses": pl.Float64, "only_move": pl.Float64,
        "good_moves": pl.Float64, "random_vs_perfect": pl.Float64, "random_first_wins": pl.Float64,
        "positions": pl.Int64, "cyclic": pl.Float64, "label": pl.Utf8, "table": pl.Utf8,
        "rules_version": pl.Utf8, "toolkit_version": pl.Utf8, "solve_seconds": pl.Float64,
        "method": pl.Utf8, "not_certified": pl.Utf8, "error_estimate": pl.Float64,
        "value_lo": pl.Float64, "value_hi": pl.Float64,
        "first_player": pl.Int64, "value_counts": pl.Utf8, "digest": pl.Utf8, "warnings": pl.Utf8,
    })
    return pl.DataFrame(rows, schema=schema)


def _cell(name: str, x: Any) -> str:
    if x is None or (isinstance(x, float) and np.isnan(x)):
        return "-"
    if name in SHARES:
        return f"{100 * x:.1f}%"
    if name == "advantage":
        return f"{x:+.3f}"
    if name == "margin":
        return f"{x:+.2f}"
    if isinstance(x, float):
        return f"{x:.3f}"
    if isinstance(x, int):
        return f"{x:,}"
    return str(x)


def _row_cell(name: str, row: Mapping[str, Any]) -> str:
    """A cell of a row: the advantage as its proven interval where that is wider than shown."""
    if name == "advantage" and row.get("advantage") is not None:
        return _expected(row, 3)
    return _cell(name, row[name])


def _table_columns(df: pl.DataFrame) -> list[str]:
    first = [c for c in df.columns if c not in _KNOWN]
    # the margin only for scored games (a column of nulls otherwise)
    return first + [c for c in SHOWN if c in df.columns and (c != "margin" or df[c].null_count() < df.height)]


_KNOWN = {"kind", "verdict", "value", "remoteness", "advantage", "margin", "p_first_wins", "p_first_loses", "only_move",
          "good_moves", "random_vs_perfect", "random_first_wins", "positions", "cyclic", "label",
          "table", "rules_version", "toolkit_version", "solve_seconds", "method", "not_certified", "error_estimate",
          "value_lo", "value_hi", "first_player", "value_counts", "digest", "warnings"}


def format_table(df: pl.DataFrame) -> str:
    """The comparison table as aligned text for the terminal (shares as percentages)."""
    cols = _table_columns(df)
    head = [HEADERS.get(c, c) for c in cols]
    rows = list(df.iter_rows(named=True))
    body = [[_row_cell(c, r) + (" (not certified)" if c == "verdict" and r.get("not_certified") else "")
             for c in cols] for r in rows]
    widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(head)]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 or not _numeric(c) else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    out = [line(head), "  ".join("-" * w for w in widths)]
    out += [line(b) for b in body]
    varied = [c for c in df.columns if c not in _KNOWN]
    out += [f"not certified: {', '.join(f'{c}={r[c]}' for c in varied)}: {r['not_certified']}"
            for r in rows if r.get("not_certified")]
    return "\n".join(out)


def _numeric(text: str) -> bool:
    t = text.replace("%", "").replace(",", "").replace("+", "").replace("-", "", 1)
    try:
        float(t)
        return True
    except ValueError:
        return False


# --- the answer paragraph -----------------------------------------------------------------

def _phrase(row: Mapping[str, Any], seats: M.Seats | None = None) -> str:
    """The result of one variant in words (from the numbers of its row); with named ``seats``
    the sides are called by their names ("a win for Black in 5")."""
    kind = row["kind"]
    named = seats is not None and seats.named
    a = seats.name(seats.first) if named else "the first player"
    b = seats.name(seats.second) if named else "the second player"
    if kind == "deterministic":
        v, r = row["value"], row["remoteness"]
        if named:
            return {"win": f"a win for {a} in {r}", "lose": f"a win for {b} in {r}",
                    "tie": f"a tie in {r}", "draw": "a draw"}.get(v, str(v))
        return {"win": f"a first-player win in {r}", "lose": f"a second-player win in {r}",
                "tie": f"a tie in {r}", "draw": "a draw"}.get(v, str(v))
    if kind == "setups":
        lose = row.get("p_first_loses")
        return ((f"{a} winning {100 * row['p_first_wins']:.1f}% of setups" if named else
                 f"first-player wins in {100 * row['p_first_wins']:.1f}% of setups")
                + (f" ({100 * lose:.1f}% losses)" if lose is not None else ""))
    return f"an expected result {_expected(row, 2, of=True)} for {a}"


def _interval(row: Mapping[str, Any]) -> tuple[float, float] | None:
    lo, hi = row.get("value_lo"), row.get("value_hi")
    return None if lo is None or hi is None else (float(lo), float(hi))


def _expected(row: Mapping[str, Any], digits: int, of: bool = False) -> str:
    """The first player's expected result, or its proven interval where that is wider than the
    printed precision (``of``: "of +0.33" / "in [-1.00, +0.00]")."""
    text = M.expected_text(float(row["advantage"]), _interval(row), digits)
    return ("of " + text) if of and not text.startswith("in ") else text


def _verdict_cell(row: Mapping[str, Any], seats: M.Seats | None) -> str:
    """The verdict column of the report's table, in the seats' names when they have names."""
    if seats is None or not seats.named:
        return str(row.get("verdict"))
    a, b = seats.name(seats.first), seats.name(seats.second)
    kind, v, r = row.get("kind"), row.get("value"), row.get("remoteness")
    if kind == "deterministic":
        return {"win": f"{a} wins in {r}", "lose": f"{b} wins in {r}", "tie": f"tie in {r}",
                "draw": "draw"}.get(v, str(v))
    if kind == "setups" and row.get("p_first_wins") is not None:
        return f"{a} wins {100 * row['p_first_wins']:.1f}% of setups"
    pw = row.get("p_first_wins")
    adv = row.get("advantage")
    if adv is None:
        return str(row.get("verdict"))
    if pw is None or (isinstance(pw, float) and np.isnan(pw)):
        return f"expected {_expected(row, 2)} for {a}"
    return f"expected {_expected(row, 2)} ({a} wins {100 * pw:.1f}%)"


# --- differences from the baseline ----------------------------------------------------------

def _same_number(x: Any, y: Any, tol: float = 1e-9) -> bool:
    if x is None or y is None:
        return x is None and y is None
    if isinstance(x, float) and isinstance(y, float) and np.isnan(x) and np.isnan(y):
        return True
    return abs(float(x) - float(y)) <= tol


def _same_start(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """The same result at the start: value, plies, margin, advantage and win probability."""
    return (a.get("kind") == b.get("kind") and a.get("value") == b.get("value")
            and a.get("remoteness") == b.get("remoteness")
            and all(_same_number(a.get(c), b.get(c)) for c in ("margin", "advantage", "p_first_wins", "p_first_loses")))


def compare(base: Mapping[str, Any], row: Mapping[str, Any], seats: M.Seats | None = None) -> tuple[str, str]:
    """How variant ``row`` differs from ``base`` (two rows of a sweep): a level and the words.

    Levels: ``identical`` (the positions tables hold the same rows: the same positions with the
    same values), ``same counts`` (tables too large to compare row by row, but the same number
    of positions, the same counts of each value and the same result at the start), ``same
    start`` (the same result at the start, other tables) and ``different`` (another result).
    """
    n_a, n_b = base.get("positions"), row.get("positions")
    start = _same_start(base, row)
    if base.get("digest") and row.get("digest") and base["digest"] == row["digest"]:
        return "identical", (f"nothing changes: the tables are identical (the same {n_b:,} positions "
                             "with the same values)")
    same_counts = n_a == n_b and base.get("value_counts") == row.get("value_counts")
    if start and same_counts and not (base.get("digest") and row.get("digest")):
        return "same counts", (f"nothing changes that the counts show: the same {n_b:,} positions, the same "
                               "number of each value and the same result at the start (tables too large "
                               "to compare row by row)")
    if start:
        if n_a != n_b:
            how = f"from {n_a:,} to {n_b:,} positions"
        elif not same_counts:
            how = f"the same number of positions, {n_b:,}, with other values"
        else:
            how = f"the same number of positions, {n_b:,}, and of each value, but not the same positions"
        return "same start", f"the result at the start stays {_phrase(row, seats)}, but the tables differ ({how})"
    return "different", f"the result at the start changes from {_phrase(base, seats)} to {_phrase(row, seats)}"


def _delta(name: str, a: Any, b: Any) -> str:
    """``b - a`` for the difference table (``0`` when equal, ``-`` when unknown)."""
    if a is None or b is None or (isinstance(a, float) and np.isnan(a)) or (isinstance(b, float) and np.isnan(b)):
        return "-"
    d = float(b) - float(a)
    if abs(d) < 1e-12:
        return "0"
    if name in SHARES:
        return f"{100 * d:+.1f} pts"
    if name in ("positions", "remoteness"):
        return f"{int(round(d)):+,}"
    return f"{d:+.3f}" if name == "advantage" else f"{d:+.2f}"


def _delta_advantage(base: Mapping[str, Any], row: Mapping[str, Any]) -> str:
    """The change in the first player's advantage: a number, or, where either side is only
    proven to lie in an interval wider than the printed precision, the interval of the change
    (``[lo_b - hi_a, hi_b - lo_a]``, rounded outward) instead of the difference of iterates."""
    a, b = base.get("advantage"), row.get("advantage")
    if a is None or b is None or np.isnan(float(a)) or np.isnan(float(b)):
        return "-"
    ia = _interval(base) or (float(a), float(a))
    ib = _interval(row) or (float(b), float(b))
    if max(ia[1] - ia[0], ib[1] - ib[0]) <= 0.5e-3:
        return _delta("advantage", a, b)
    return "in " + M.proven_interval(ib[0] - ia[1], ib[1] - ia[0])


#: the differences shown against the baseline (column -> header)
DELTAS = {"advantage": "1st-player advantage", "remoteness": "plies", "margin": "1st-player margin",
          "p_first_wins": "P(1st wins)", "only_move": "only-move share",
          "random_first_wins": "random vs random: 1st wins", "positions": "positions"}


def what_changes(names: Sequence[str], rows: list[dict[str, Any]], seats: M.Seats | None = None
                 ) -> tuple[str, list[str], list[list[str]], list[str]]:
    """The "What changes" answer of a sweep: every variant against the baseline (the first
    variant), then single rule changes that change nothing.

    Returns the reading, the headers and rows of the difference table, and extra sentences.
    """
    labels = [_variant_label(r, names) for r in rows]
    base = rows[0]
    sentences = [f"Baseline: {labels[0]} (the first variant of the sweep), {_phrase(base, seats)}."]
    levels = []
    for lbl, r in zip(labels[1:], rows[1:]):
        level, words = compare(base, r, seats)
        levels.append(level)
        sentences.append(f"With {lbl}, {words}.")
    if rows[1:] and all(lv in ("identical", "same counts") for lv in levels):
        sentences.append("No rule change in this sweep changes anything.")
    cols = [c for c in DELTAS if any(r.get(c) is not None for r in rows)
            and (c != "margin" or any(r.get("margin") is not None for r in rows))]
    headers = ["variant", "against the baseline", "result"] + [f"change in {DELTAS[c]}" for c in cols]
    short = {"identical": "identical tables", "same counts": "same counts, same start",
             "same start": "same start, other tables", "different": "other result"}
    table = [[f"{labels[0]} (baseline)", "-", _phrase(base, seats)] + ["-"] * len(cols)]
    for lbl, r, lv in zip(labels[1:], rows[1:], levels):
        table.append([lbl, short[lv], _phrase(r, seats)] + [
            _delta_advantage(base, r) if c == "advantage" else _delta(c, base.get(c), r.get(c)) for c in cols])
    # one rule at a time: pairs of variants that differ in one parameter only
    extra: list[str] = []
    if len(names) > 1:
        for name in names:
            others = [o for o in names if o != name]
            found: dict[tuple[str, str, str], list[str]] = {}
            groups: dict[tuple, list[dict[str, Any]]] = {}
            for r in rows:
                groups.setdefault(tuple(r[o] for o in others), []).append(r)
            for key, members in groups.items():
                ctx = ", ".join(f"{o}={k}" for o, k in zip(others, key))
                for ra, rb in zip(members, members[1:]):
                    level, _ = compare(ra, rb, seats)
                    if level in ("identical", "same counts", "same start"):
                        found.setdefault((ra[name], rb[name], level), []).append(ctx)
            for (a, b, level), ctxs in found.items():
                where = (f"for every {', '.join(others)}" if len(ctxs) == len(groups) and len(groups) > 1
                         else "with " + " or ".join(ctxs))
                what = {"identical": "changes nothing (identical tables)",
                        "same counts": "changes nothing the counts show",
                        "same start": "leaves the result at the start unchanged (the tables differ)"}[level]
                text = f"{_change(name, a, b)} {what} {where}."
                extra.append(text[0].upper() + text[1:])
    return " ".join(sentences), headers, table, extra


def _change(name: str, a: str, b: str) -> str:
    if a == "on" and b == "off":
        return f"switching {name} off"
    if a == "off" and b == "on":
        return f"switching {name} on"
    return f"changing {name} from {a} to {b}"


def answer(game_name: str, fixed: Mapping[str, str], vary: Mapping[str, Sequence[str]], df: pl.DataFrame,
           *, seats: M.Seats | None = None) -> str:
    """A one-paragraph answer to the question a sweep asks, generated from its table (with named
    ``seats`` the sides are called by their names)."""
    names = list(vary)
    rows = df.to_dicts()
    base = f"{game_name}({', '.join(f'{k}={v}' for k, v in fixed.items())})" if fixed else game_name
    sentences = [f"Question: what does varying {', '.join(names)} change in {base}?"]
    phrases = [_phrase(r, seats) for r in rows]
    if len(set(phrases)) == 1:
        sentences.append(f"The result with perfect play does not change: every one of the {len(rows)} "
                         f"variants is {phrases[0]}.")
    else:
        changes: list[str] = []
        steady: list[str] = []
        for name in names:
            others = [o for o in names if o != name]
            groups: dict[tuple, list[dict[str, Any]]] = {}
            for r in rows:
                groups.setdefault(tuple(r[o] for o in others), []).append(r)
            # the same change (values and results) seen in several groups is told once
            seen: dict[tuple[str, str, str, str], list[str]] = {}
            order = {v: i for i, v in enumerate(vary[name])}
            for key, members in groups.items():
                members = sorted(members, key=lambda r: order.get(r[name], 0))
                ctx = ", ".join(f"{o}={k}" for o, k in zip(others, key))
                for ra, rb in zip(members, members[1:]):
                    pa, pb = _phrase(ra, seats), _phrase(rb, seats)
                    if pa != pb:
                        seen.setdefault((ra[name], rb[name], pa, pb), []).append(ctx)
            for (a, b, pa, pb), ctxs in seen.items():
                if not others:
                    where = ""
                elif len(ctxs) == len(groups) and len(groups) > 1:
                    where = f" (for every {', '.join(others)})"
                else:
                    where = " with " + " or ".join(ctxs)
                changes.append(f"{_change(name, a, b)} turns the game{where} from {pa} to {pb}")
            if not seen:
                steady.append(name)
        if changes:
            shown = changes[:6]
            text = "; ".join(shown)
            sentences.append(text[0].upper() + text[1:] + ("; and more (see the table)." if len(changes) > 6 else "."))
        if steady:
            sentences.append(f"Varying {', '.join(steady)} alone never changes the result.")
    sentences += _hidden_choice_sentences(names, rows)
    for r in rows:
        if r.get("not_certified"):
            iv = _interval(r)
            if iv is not None:  # proven bounds: say what is proven at the start, not "estimates"
                sentences.append(f"Caution: {_variant_label(r, names)} is not certified everywhere "
                                 f"({r['not_certified']}); at the start its value is proven to lie in "
                                 f"{M.proven_interval(*iv, digits=6)}.")
            else:
                sentences.append(f"Caution: {_variant_label(r, names)} is not certified exactly "
                                 f"({r['not_certified']}); its numbers are estimates.")
    adv = df["advantage"].to_numpy()
    labels = [_variant_label(r, names) for r in rows]
    first = seats.name(seats.first) if seats is not None and seats.named else "the first player"
    if len(rows) > 1:
        i = int(np.argmin(np.abs(adv)))
        if np.ptp(adv) > 0:
            text = f"{first[0].upper() + first[1:]}'s advantage ranges from {adv.min():+.2f} to {adv.max():+.2f}"
            if np.ptp(np.abs(adv)) > 0 and int((np.abs(adv) == np.abs(adv[i])).sum()) == 1:
                text += f"; the most balanced variant is {labels[i]} ({adv[i]:+.2f})"
            sentences.append(text + ".")
        pos = df["positions"].to_numpy()
        j, k = int(np.argmin(pos)), int(np.argmax(pos))
        if pos[j] != pos[k]:
            sentences.append(f"Sizes range from {pos[j]:,} positions ({labels[j]}) to {pos[k]:,} ({labels[k]}).")
    return " ".join(sentences)


def _hidden_choice_sentences(names: Sequence[str], rows: list[dict[str, Any]]) -> list[str]:
    """When a sweep compares a secret simultaneous choice (``sequencing=secret``) with open
    versions of it, say what the secrecy is worth to the first player, per setting of the rest."""
    if "sequencing" not in names:
        return []
    others = [o for o in names if o != "sequencing"]
    out = []
    groups: dict[tuple, dict[str, dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(tuple(r[o] for o in others), {})[r["sequencing"]] = r
    for key, by in groups.items():
        secret = by.get("secret")
        if secret is None or secret.get("advantage") is None:
            continue
        ctx = (" with " + ", ".join(f"{o}={k}" for o, k in zip(others, key))) if others else ""
        for mode, r in by.items():
            if mode == "secret" or r.get("advantage") is None:
                continue
            iv = _interval(secret)
            if iv is not None and iv[1] - iv[0] > 5e-4:
                worth = M.proven_interval(iv[0] - r["advantage"], iv[1] - r["advantage"])
                out.append(f"Hidden bid{ctx}: the first player's expected result is proven to lie in "
                           f"{M.proven_interval(*iv)} with secret orders and is {r['advantage']:+.3f} with "
                           f"sequencing={mode}, so the secrecy is worth an amount in {worth} to the "
                           "first player.")
                continue
            diff = secret["advantage"] - r["advantage"]
            out.append(f"Hidden bid{ctx}: the first player's expected result is {secret['advantage']:+.3f} "
                       f"with secret orders and {r['advantage']:+.3f} with sequencing={mode}, so the "
                       f"secrecy is worth {diff:+.3f} to the first player.")
    return out


def _variant_label(row: Mapping[str, Any], names: Sequence[str]) -> str:
    return ", ".join(f"{n}={row[n]}" for n in names)


# --- the comparison report ----------------------------------------------------------------

def _document(game_name: str, fixed: Mapping[str, str], vary: Mapping[str, Sequence[str]], df: pl.DataFrame,
              *, seats: M.Seats | None = None, title: str | None = None) -> Document:
    names = list(vary)
    rows = df.to_dicts()
    labels = [_variant_label(r, names) for r in rows]
    named = seats is not None and seats.named
    first = seats.name(seats.first) if named else "the first player"
    view = (f"Values are from the point of view of {seats.full(seats.first)}; "
            f"'1st' in the tables means {seats.name(seats.first)}" if named
            else "Values are from the first player's point of view")
    fixed_txt = (f"with {', '.join(f'{k}={v}' for k, v in fixed.items())} (other parameters at their "
                 f"defaults)" if fixed else "with every other parameter at its default")
    vary_txt = "; ".join(f"{k} in {{{', '.join(map(str, v))}}}" for k, v in vary.items())
    doc = Document(
        f"Rules tuning: {title or game_name}, varying {', '.join(names)}",
        f"Every combination of {vary_txt} {fixed_txt} "
        f"was solved exactly; {len(rows)} variants. All numbers come from the variants' tables. "
        f"{view}; a ply is one move by one player.")

    # what changes: every variant against the baseline, first
    reading, headers, table, extra = what_changes(names, rows, seats)
    sec = Section("What changes", reading)
    sec.table(headers, table)
    for text in extra:
        sec.text(text)
    sec.note(("'identical tables': the two positions tables hold exactly the same rows (every position "
              "with the same value, remoteness and moves), so the rule never matters in this variant; "
              if any(row[1] == "identical tables" for row in table) else "")
             + "a change is the variant's number minus the baseline's.")
    for lbl, r in zip(labels, rows):
        for w in (r.get("warnings") or "").splitlines():
            w = w.strip()
            if w:
                sec.text(f"Rulebook warning ({lbl}): {w}.")
    doc.sections.append(sec)

    sec = Section("Answer", answer(game_name, fixed, vary, df, seats=seats))
    cols = _table_columns(df)
    sec.table([HEADERS.get(c, c) for c in cols],
              [[_verdict_cell(r, seats) if c == "verdict" else _row_cell(c, r) for c in cols] for r in rows])
    doc.sections.append(sec)

    # verdict and advantage
    kinds = set(df["kind"].to_list())
    colours = [plots.VALUE_COLOURS.get(r["value"] or "", plots.VALUE_COLOURS["win"] if r["advantage"] > 0
               else plots.VALUE_COLOURS["lose"] if r["advantage"] < 0 else plots.VALUE_COLOURS["tie"]) for r in rows]
    second = seats.name(seats.second) if named else "the second player"
    sec = Section("Verdict and first-player advantage",
                  f"{first[0].upper() + first[1:]}'s expected result with perfect play for each variant (+1: "
                  f"{first} wins, -1: {second} wins, 0: tie or draw). " + "; ".join(
                      f"{lbl}: {_verdict_cell(r, seats)}" for lbl, r in zip(labels, rows)) + ".")
    size = (max(5.0, 1.1 * len(rows) + 2.5), 3.6)
    doc.new_figure("advantage", lambda ax: plots.sweep_bars(
        ax, labels, df["advantage"].to_list(), title="First-player advantage (perfect play)",
        ylabel=f"expected result of {first}", colours=colours, symmetric=True, fmt="{:+.2f}"), size=size)
    sec.figure("advantage", f"First-player advantage per variant, coloured by the value for {first}.")
    if kinds == {"deterministic"} and df["remoteness"].null_count() < df.height:
        doc.new_figure("remoteness", lambda ax: plots.sweep_bars(
            ax, labels, df["remoteness"].to_list(), title="Plies to the end with perfect play",
            ylabel="remoteness of the start (plies)", colours=colours, fmt="{:.0f}"), size=size)
        sec.figure("remoteness", "Length of the game with perfect play (no bar: a draw, which never ends).")
    doc.sections.append(sec)

    # difficulty
    sec = Section("Decision difficulty", _difficulty_reading(df, labels))
    if df["good_moves"].null_count() < df.height:
        for name, title, ylabel in (
            ("only_move", "Winning positions with a single winning move", "share of winning positions"),
            ("good_moves", "Average share of moves that keep the win", "share of legal moves"),
            ("random_vs_perfect", "A random player beats a perfect one", "probability (mean of both seats)"),
        ):
            if df[name].null_count() < df.height:
                doc.new_figure(name, lambda ax, n=name, t=title, y=ylabel: plots.sweep_bars(
                    ax, labels, df[n].to_list(), title=t, ylabel=y, fmt="{:.1%}"), size=size)
                sec.figure(name, title + " (per variant).")
    else:
        sec.note("the edges tables are missing, so moves cannot be compared")
    doc.sections.append(sec)

    # size
    pos = df["positions"].to_list()
    sec = Section("Size", "Positions stored per variant (one per symmetry class): " + "; ".join(
        f"{lbl}: {p:,}" for lbl, p in zip(labels, pos)) + ".")
    doc.new_figure("positions", lambda ax: plots.sweep_bars(
        ax, labels, pos, title="Positions per variant", ylabel="positions (log scale)", log=True,
        fmt="{:,.0f}"), size=size)
    sec.figure("positions", "Number of positions per variant (log scale).")
    doc.sections.append(sec)

    compare = _compare_section(game_name, labels, rows)
    if compare is not None:
        doc.sections.append(compare)

    sec = Section("Provenance", "The tables each row was computed from.")
    sec.table(["variant", "label", "rules version", "toolkit version", "solve time (s)", "table"],
              [[lbl, r["label"], r["rules_version"], r["toolkit_version"],
                "-" if r["solve_seconds"] is None else f"{r['solve_seconds']:.2f}", r["table"]]
               for lbl, r in zip(labels, rows)])
    methods = sorted({r["method"] for r in rows if r["method"]})
    if methods:
        sec.note("random play: " + " | ".join(methods))
    doc.sections.append(sec)
    glossary = glossary_section(doc)
    if glossary is not None:
        doc.sections.append(glossary)
    return doc


#: where ``pyramids serve`` listens by default (its ``--port``)
EXPLORER = "http://127.0.0.1:8765"


def _compare_section(game_name: str, labels: list[str], rows: list[dict[str, Any]]) -> Section | None:
    """Links to the explorer's ``/compare`` page: every variant beside the first (the baseline),
    from the start (the page walks on from there). ``None`` when the tables are not in one
    folder of the explorer's layout (``<tables>/<game>/<variant-id>``)."""
    from urllib.parse import urlencode

    paths = [Path(r["table"]) for r in rows if r.get("table")]
    folders = [p.parent if p.suffix == ".parquet" else p for p in paths]  # a whole graph's file, a tiered folder
    if len(folders) != len(rows) or len(rows) < 2 or len({f.parent.parent for f in folders}) != 1:
        return None
    root = folders[0].parent.parent
    ids = [f"{game_name}/{f.name}" for f in folders]
    sec = Section(
        "Side by side in the explorer",
        f"Each variant beside {labels[0]}, the same moves in both (board, value, best moves; walk on "
        f"from the start). Start the explorer on these tables with `pyramids serve --tables {root}` "
        f"(on this machine, port {EXPLORER.rsplit(':', 1)[1]}), then follow a link.")
    sec.links([(f"{lbl} beside {labels[0]}", f"{EXPLORER}/compare?{urlencode({'a': ids[0], 'b': vid})}")
               for lbl, vid in zip(labels[1:], ids[1:])])
    return sec


def _difficulty_reading(df: pl.DataFrame, labels: list[str]) -> str:
    if df["good_moves"].null_count() == df.height:
        return "Decision difficulty needs the edges tables."
    parts = []
    gm = df["good_moves"].to_list()
    om = df["only_move"].to_list()
    rp = df["random_vs_perfect"].to_list()
    for lbl, g, o, r in zip(labels, gm, om, rp):
        if g is None:
            parts.append(f"{lbl}: no winning positions")
            continue
        txt = f"{lbl}: {100 * g:.1f}% of moves keep a win, {100 * o:.1f}% only-move positions"
        if r is not None:
            txt += f", a random player beats a perfect one {100 * r:.1f}% of the time"
        parts.append(txt)
    return ("In winning positions, the share of legal moves that keep the win (higher = easier) and "
            "the share of positions with a single winning move (higher = harder): " + "; ".join(parts) + ".")
