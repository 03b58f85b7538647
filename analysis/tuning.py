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
from analysis.report import DEFAULT_ROOT, Document, Section, save_document
from solver.errors import VariantError

__all__ = ["run_sweep", "format_table", "summarize", "answer", "sweep_id", "combinations"]

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
    pos, meta, edges = solution.positions, solution.meta, solution.edges
    if meta.get("solution") == "paranoid":  # 3-4 players: the first seat's question, two-sided
        pos = M.paranoid_view(pos, 0)
    v = M.verdict(pos, meta, setups=solution.setups, edges=edges)
    row: dict[str, Any] = {
        "kind": v.kind, "verdict": v.short, "value": v.value, "remoteness": v.remoteness,
        "advantage": v.advantage, "margin": v.margin, "p_first_wins": v.p_win, "p_first_loses": v.p_loss,
        "only_move": None, "good_moves": None,
        "random_vs_perfect": None, "random_first_wins": None, "positions": pos.height,
        "cyclic": None, "label": meta.get("label"), "table": str(solution.path),
        "rules_version": meta.get("rules_version"), "toolkit_version": meta.get("toolkit_version"),
        "solve_seconds": meta.get("solve_seconds"), "method": None,
        "not_certified": meta.get("not_certified_because"),
        "error_estimate": meta.get("error_estimate") if meta.get("not_certified_because") else None,
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


def run_sweep(
    game_name: str,
    fixed: dict[str, str],
    vary: dict[str, list[str]],
    *,
    out: str | Path | None = None,
    reports_root: Path = DEFAULT_ROOT,
    progress: bool = False,
    exact_limit: int = M.EXACT_LIMIT,
    max_positions: int | None = None,
    notes: list[str] | None = None,
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
    progress : bool
        Show solver progress bars and one line per variant (solving, then comparing) on
        standard error.
    exact_limit : int
        Random-play statistics are exact up to this many positions, simulated beyond.
    max_positions : int, optional
        Refuse variants with more positions (as ``solve``).
    notes : list, optional
        Receives what the solves had to say (e.g. a table on disk that was not reused).

    Returns
    -------
    (Path, polars.DataFrame)
        The path of ``report.md`` and the comparison table (one row per variant; print it with
        :func:`format_table`).
    """
    from solver.api import make_game, solve

    _check(fixed, vary)
    rows = []
    combos = combinations(vary)
    for i, combo in enumerate(combos, 1):
        params = {**fixed, **combo}
        game = make_game(game_name, params)
        if progress:
            print(f"[{i}/{len(combos)}] solving {game.variant.label()}", file=sys.stderr)
        sol = solve(game, out=out, progress=progress, max_positions=max_positions, notes=notes)
        if progress:
            print(f"[{i}/{len(combos)}] comparing: random and perfect play, move values", file=sys.stderr)
        row = {k: str(game.variant.as_text()[k]) for k in vary}
        row.update(summarize(sol, exact_limit=exact_limit))
        rows.append(row)
    df = _frame(rows, list(vary))
    # the values as the game writes them (e.g. "true" -> "on"), in the order given
    shown = {k: list(dict.fromkeys(df[k].to_list())) for k in vary}
    name = game.name  # the game's own name, also when it was given as module:Class
    folder = Path(reports_root) / name / f"tune-{sweep_id(fixed, vary)}"
    doc = _document(name, fixed, shown, df)
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


def _table_columns(df: pl.DataFrame) -> list[str]:
    first = [c for c in df.columns if c not in _KNOWN]
    # the margin only for scored games (a column of nulls otherwise)
    return first + [c for c in SHOWN if c in df.columns and (c != "margin" or df[c].null_count() < df.height)]


_KNOWN = {"kind", "verdict", "value", "remoteness", "advantage", "margin", "p_first_wins", "p_first_loses", "only_move",
          "good_moves", "random_vs_perfect", "random_first_wins", "positions", "cyclic", "label",
          "table", "rules_version", "toolkit_version", "solve_seconds", "method", "not_certified", "error_estimate"}


def format_table(df: pl.DataFrame) -> str:
    """The comparison table as aligned text for the terminal (shares as percentages)."""
    cols = _table_columns(df)
    head = [HEADERS.get(c, c) for c in cols]
    body = [[_cell(c, r[c]) for c in cols] for r in df.iter_rows(named=True)]
    widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(head)]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 or not _numeric(c) else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    out = [line(head), "  ".join("-" * w for w in widths)]
    out += [line(b) for b in body]
    return "\n".join(out)


def _numeric(text: str) -> bool:
    t = text.replace("%", "").replace(",", "").replace("+", "").replace("-", "", 1)
    try:
        float(t)
        return True
    except ValueError:
        return False


# --- the answer paragraph -----------------------------------------------------------------

def _phrase(row: Mapping[str, Any]) -> str:
    """The result of one variant in words (from the numbers of its row)."""
    kind = row["kind"]
    if kind == "deterministic":
        v, r = row["value"], row["remoteness"]
        return {"win": f"a first-player win in {r}", "lose": f"a second-player win in {r}",
                "tie": f"a tie in {r}", "draw": "a draw"}.get(v, str(v))
    if kind == "setups":
        lose = row.get("p_first_loses")
        return (f"first-player wins in {100 * row['p_first_wins']:.1f}% of setups"
                + (f" ({100 * lose:.1f}% losses)" if lose is not None else ""))
    return f"an expected result of {row['advantage']:+.2f} for the first player"


def _change(name: str, a: str, b: str) -> str:
    if a == "on" and b == "off":
        return f"switching {name} off"
    if a == "off" and b == "on":
        return f"switching {name} on"
    return f"changing {name} from {a} to {b}"


def answer(game_name: str, fixed: Mapping[str, str], vary: Mapping[str, Sequence[str]], df: pl.DataFrame) -> str:
    """A one-paragraph answer to the question a sweep asks, generated from its table."""
    names = list(vary)
    rows = df.to_dicts()
    base = f"{game_name}({', '.join(f'{k}={v}' for k, v in fixed.items())})" if fixed else game_name
    sentences = [f"Question: what does varying {', '.join(names)} change in {base}?"]
    phrases = [_phrase(r) for r in rows]
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
                    pa, pb = _phrase(ra), _phrase(rb)
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
            sentences.append(f"Caution: {_variant_label(r, names)} is not certified exactly "
                             f"({r['not_certified']}); its numbers are estimates.")
    adv = df["advantage"].to_numpy()
    labels = [_variant_label(r, names) for r in rows]
    if len(rows) > 1:
        i = int(np.argmin(np.abs(adv)))
        if np.ptp(adv) > 0:
            text = f"The first player's advantage ranges from {adv.min():+.2f} to {adv.max():+.2f}"
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
            diff = secret["advantage"] - r["advantage"]
            out.append(f"Hidden bid{ctx}: the first player's expected result is {secret['advantage']:+.3f} "
                       f"with secret orders and {r['advantage']:+.3f} with sequencing={mode}, so the "
                       f"secrecy is worth {diff:+.3f} to the first player.")
    return out


def _variant_label(row: Mapping[str, Any], names: Sequence[str]) -> str:
    return ", ".join(f"{n}={row[n]}" for n in names)


# --- the comparison report ----------------------------------------------------------------

def _document(game_name: str, fixed: Mapping[str, str], vary: Mapping[str, Sequence[str]], df: pl.DataFrame) -> Document:
    names = list(vary)
    rows = df.to_dicts()
    labels = [_variant_label(r, names) for r in rows]
    fixed_txt = (f"with {', '.join(f'{k}={v}' for k, v in fixed.items())} (other parameters at their "
                 f"defaults)" if fixed else "with every other parameter at its default")
    vary_txt = "; ".join(f"{k} in {{{', '.join(map(str, v))}}}" for k, v in vary.items())
    doc = Document(
        f"Rules tuning: {game_name}, varying {', '.join(names)}",
        f"Every combination of {vary_txt} {fixed_txt} "
        f"was solved exactly; {len(rows)} variants. All numbers come from the variants' tables. "
        f"Values are from the first player's point of view; a ply is one move by one player.")
    sec = Section("Answer", answer(game_name, fixed, vary, df))
    cols = _table_columns(df)
    sec.table([HEADERS.get(c, c) for c in cols], [[_cell(c, r[c]) for c in cols] for r in rows])
    doc.sections.append(sec)

    # verdict and advantage
    kinds = set(df["kind"].to_list())
    colours = [plots.VALUE_COLOURS.get(r["value"] or "", plots.VALUE_COLOURS["win"] if r["advantage"] > 0
               else plots.VALUE_COLOURS["lose"] if r["advantage"] < 0 else plots.VALUE_COLOURS["tie"]) for r in rows]
    sec = Section("Verdict and first-player advantage",
                  "The first player's expected result with perfect play for each variant (+1: the first "
                  "player wins, -1: the second player wins, 0: tie or draw). " + "; ".join(
                      f"{lbl}: {r['verdict']}" for lbl, r in zip(labels, rows)) + ".")
    size = (max(5.0, 1.1 * len(rows) + 2.5), 3.6)
    doc.new_figure("advantage", lambda ax: plots.sweep_bars(
        ax, labels, df["advantage"].to_list(), title="First-player advantage (perfect play)",
        ylabel="expected result of the first player", colours=colours, symmetric=True, fmt="{:+.2f}"), size=size)
    sec.figure("advantage", "First-player advantage per variant, coloured by the value for the first player.")
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

    sec = Section("Provenance", "The tables each row was computed from.")
    sec.table(["variant", "label", "rules version", "toolkit version", "solve time (s)", "table"],
              [[lbl, r["label"], r["rules_version"], r["toolkit_version"],
                "-" if r["solve_seconds"] is None else f"{r['solve_seconds']:.2f}", r["table"]]
               for lbl, r in zip(labels, rows)])
    methods = sorted({r["method"] for r in rows if r["method"]})
    if methods:
        sec.note("random play: " + " | ".join(methods))
    doc.sections.append(sec)
    return doc


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
