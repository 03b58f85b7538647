"""The report of a setup sweep (:mod:`solver.pipeline.tasks`): a random-setup variant solved one
setup class per task, complete (exact shares) or partial (an **estimate** from a uniform random
sample of arrangements, with 95% Wilson intervals, marked as such everywhere).

Every number comes from the sweep's setups table and its plan (the order and the draws are
recomputed from the plan's seed); nothing is typed in.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from analysis import plots
from analysis.metrics import setup_summary
from analysis.report import Document, Section, save_document

from solver.pipeline.tasks import VALUES


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _interval(lo: float, hi: float) -> str:
    return f"[{100 * lo:.1f}%, {100 * hi:.1f}%]"


def command_of(game: Any) -> str:
    """The ``pyramids solve`` command that extends this sweep."""
    sets = " ".join(f"--set {k}={shlex.quote(v)}" for k, v in game.variant.as_text().items())
    return f"pyramids solve {game.name} {sets}"


def narrowing(table: pl.DataFrame, setups: Any, order: np.ndarray, draws: np.ndarray,
              points: int = 60) -> pl.DataFrame:
    """How the estimate of the first player's win share narrows as setups are solved in the
    plan's order: for prefixes of the solved classes, the sample size (draws before the first
    unsolved class), the estimate and its Wilson interval."""
    from solver.core.stats import wilson
    from solver.pipeline.tasks import first_draws

    codes = setups.codes_of(table)
    solved = codes >= 0
    won = codes == VALUES.index("win")
    # solved classes that are a prefix of the order: the estimate after each of them
    prefix = int(np.argmin(solved[order])) if not solved[order].all() else len(order)
    first = first_draws(draws, setups.classes)
    cum = np.concatenate([[0], np.cumsum(won[draws])])
    if prefix == 0:
        return pl.DataFrame(schema={"classes": pl.Int64, "draws": pl.Int64, "share": pl.Float64,
                                    "low": pl.Float64, "high": pl.Float64})
    ks = sorted(set(np.unique(np.geomspace(1, max(1, prefix), num=points).astype(int)).tolist()))
    out = []
    for k in ks:
        n = int(first[order[k]]) if k < len(order) else len(draws)
        if n == 0:
            continue
        w = int(cum[n])
        lo, hi = wilson(w, n)
        out.append((k, n, w / n, lo, hi))
    return pl.DataFrame(out, schema=["classes", "draws", "share", "low", "high"], orient="row")


def build_sweep_report(game: Any, table: pl.DataFrame, meta: dict[str, Any]) -> Document:
    from solver.pipeline.tasks import plan_order, setup_classes

    seats = tuple(getattr(game, "seat_names", None) or ("player 1", "player 2"))
    first, second = seats[0], seats[1]
    complete = bool(meta["complete"])
    done, total = int(meta["classes_done"]), int(meta["classes"])
    label = meta["label"]
    kind = "exact" if complete else "PARTIAL, ESTIMATED"
    title = f"Balance report ({kind}): {game.display_name()}"
    intro = (f"{getattr(game, 'title', '') or game.name} (variant `{label}`), over every random setup: "
             f"{total:,} setup classes "
             f"({meta['arrangements']:,} arrangements of the pyramids, up to symmetry), each solved exactly, "
             f"in batches of setup classes whose positions are solved together (tasks of the task layer, "
             f"`solver/pipeline/tasks.py`, or with `--tiered` one batch tier by tier). {done:,} of {total:,} "
             f"setup classes are solved ({100 * done / total:.3f}%). "
             + ("Every number below is exact." if complete else
                "The shares below are therefore **estimated** from a uniform random sample of "
                "arrangements (every solved setup's own value is exact); each estimate carries its "
                "95% interval.")
             + f" Extend it with `{command_of(game)}` (it resumes).")
    doc = Document(title, intro)

    # --- the answer
    if complete:
        summ = setup_summary(table)
        sh = summ["shares"]
        reading = (f"Exact: {first} (moves first) wins {_pct(sh['win'])} of setups, {second} wins "
                   f"{_pct(sh['lose'])}, ties {_pct(sh['tie'])}" + (f", draws {_pct(sh['draw'])}" if sh["draw"] else "")
                   + f" (weighted by how many arrangements each setup class stands for). Expected "
                   f"result {summ['expected']:+.4f} for {first}.")
        sec = Section("Verdict (exact)", reading)
        sec.table(["result with perfect play", "setup classes", "share of arrangements (exact)"],
                  [[f"{first} wins" if v == "win" else f"{second} wins" if v == "lose" else v,
                    summ["counts"][v], _pct(sh[v])] for v in VALUES if summ["counts"][v] or v != "draw"])
        doc.sections.append(sec)
        setups = None
    else:
        est = meta["estimate"]
        n = est["draws"]
        if n:
            sh, iv = est["shares"], est["intervals"]
            reading = (f"**Estimated** (not exact: {done:,} of {total:,} setup classes solved): {first} "
                       f"(moves first) wins {_pct(sh['win'])} of setups, 95% interval {_interval(*iv['win'])}; "
                       f"{second} wins {_pct(sh['lose'])} {_interval(*iv['lose'])}; ties {_pct(sh['tie'])} "
                       f"{_interval(*iv['tie'])}. The sample: the first {n:,} of a seeded sequence of "
                       f"uniformly random arrangements, all of whose setups are solved "
                       f"({est['classes_in_sample']:,} distinct setup classes).")
        else:
            reading = ("No estimate yet: the first setup of the sweep's order is not solved.")
        sec = Section("Verdict (estimated, partial)", reading)
        if n:
            rows = [[f"{first} wins" if v == "win" else f"{second} wins" if v == "lose" else v,
                     est["counts"][v], _pct(sh[v]), _interval(*iv[v])]
                    for v in VALUES if est["counts"][v] or v != "draw"]
            sec.table(["result with perfect play", "arrangements in the sample", "estimated share",
                       "95% interval (Wilson)"], rows)
            if est.get("expected") is not None and n >= 30:
                lo, hi = est["expected_interval"]
                sec.note(f"Estimated expected result for {first} (+1 win, -1 loss): {est['expected']:+.3f}, "
                         f"95% interval [{lo:+.3f}, {hi:+.3f}] (normal approximation).")
            if est.get("expected_margin") is not None and n >= 30:
                lo, hi = est["expected_margin_interval"]
                sec.note(f"Estimated expected score margin for {first}: {est['expected_margin']:+.2f}, "
                         f"95% interval [{lo:+.2f}, {hi:+.2f}].")
        doc.sections.append(sec)
        setups = setup_classes(game, bool(meta.get("symmetry", True)))
        order, draws = plan_order(setups.mult, int(meta["order_seed"]))
        curve = narrowing(table, setups, order, draws)
        if curve.height >= 2:
            sec = Section("How the estimate narrows",
                          f"The estimate of {first}'s win share after each number of setups solved in the "
                          "sweep's order, with its 95% interval: the interval shrinks like one over the "
                          "square root of the sample.")

            def draw(ax):
                x = curve["classes"].to_numpy()
                ax.fill_between(x, curve["low"].to_numpy(), curve["high"].to_numpy(), alpha=0.3,
                                color=plots.VALUE_COLOURS["win"], label="95% interval (Wilson)")
                ax.plot(x, curve["share"].to_numpy(), color=plots.VALUE_COLOURS["win"], label="estimate")
                ax.set_xscale("log")
                ax.set_ylim(0, 1)
                ax.legend(loc="lower right", fontsize=8)
                return plots._finish(ax, f"Estimated share of setups {first} wins",
                                     "setup classes solved (sweep order)", "share of arrangements")

            doc.new_figure("sweep_narrowing", draw)
            sec.figure("sweep_narrowing", f"Estimate of {first}'s win share and its 95% interval as setups are solved.")
            last = curve.row(-1, named=True)
            sec.note(f"Last point: {last['classes']:,} setup classes, {last['draws']:,} arrangements in the "
                     f"sample, interval width {100 * (last['high'] - last['low']):.1f} points.")
            doc.sections.append(sec)

    # --- the solved setups (exact, each)
    t = table.sort("order")
    counts = {v: int((t["value"] == v).sum()) for v in VALUES}
    sec = Section("The solved setups (each exact)",
                  f"{done:,} setup classes solved; with perfect play {first} wins {counts['win']:,} of them, "
                  f"{second} {counts['lose']:,}, {counts['tie']:,} are tied"
                  + (f" and {counts['draw']:,} drawn" if counts["draw"] else "")
                  + ". The first ones in the sweep's order (a weighted random order):")
    rows = []
    for r in t.head(20).iter_rows(named=True):
        value = {"win": f"{first} wins", "lose": f"{second} wins"}.get(r["value"], r["value"])
        rows.append([r["order"] + 1, r["layout"], r["multiplicity"], value, r["remoteness"]]
                    + ([f"{r['margin']:+d}"] if "margin" in t.columns else [])
                    + [r["positions"], f"{r['seconds']:.1f}"])
    sec.table(["#", "setup (rows top to bottom)", "arrangements", "result", "plies"]
              + (["margin"] if "margin" in t.columns else []) + ["positions of its task", "seconds"], rows)
    if done > 20:
        sec.note(f"{done - 20:,} more in the sweep's table ({meta.get('table', 'sweep/setups.parquet')}).")
    doc.sections.append(sec)

    # --- cost
    if done:
        secs = t["seconds"].to_numpy()
        per_task_pos = (t["positions"] / t["batch"]).to_numpy()
        left = total - done
        mean = float(secs.mean())
        sec = Section("Cost and what the rest would take",
                      f"Measured on the machines that ran the batches"
                      + (f" ({meta['workers']} worker(s) in the last run)" if meta.get("workers") else "")
                      + f", each batch's time divided among its setup classes: {mean:.1f} s per setup class "
                      f"on average (median {float(np.median(secs)):.1f} s), "
                      f"about {float(np.median(per_task_pos)):,.0f} positions per setup class."
                      + (f" The {left:,} setup classes left would take about {mean * left / 86400:,.1f} "
                         f"worker-days at this rate." if left else ""))
        sec.table(["measure", "value"], [
            ["setup classes solved", f"{done:,} of {total:,}"],
            ["arrangements covered", f"{meta['arrangements_done']:,} of {meta['arrangements']:,}"],
            ["task time (sum)", f"{meta['class_seconds'] / 3600:,.2f} h"],
            ["seconds per setup class (mean / median / max)",
             f"{mean:.1f} / {float(np.median(secs)):.1f} / {float(secs.max()):.1f}"],
            ["positions per setup class (median / max)",
             f"{float(np.median(per_task_pos)):,.0f} / {float(per_task_pos.max()):,.0f}"],
            ["worker-days left at this rate", f"{mean * left / 86400:,.1f}"],
        ])
        sizes = (t.with_columns((pl.col("positions") / pl.col("batch")).alias("per_class"))
                 .group_by("batch").agg(pl.len().alias("classes"), pl.col("seconds").median(),
                                        pl.col("per_class").median()).sort("batch"))
        if sizes.height > 1:  # batches share their classes' positions: say what each size cost
            big, one = sizes.row(-1, named=True), sizes.row(0, named=True)
            sec.note(f"Classes solved in one batch share their positions, so a class costs less in a larger "
                     f"batch: {big['seconds']:.1f} s and {big['per_class']:,.0f} positions a class in batches "
                     f"of {big['batch']:,}, against {one['seconds']:.1f} s and {one['per_class']:,.0f} in "
                     f"batches of {one['batch']:,} (medians, table below). The rate above averages every batch "
                     "so far; larger batches of the classes left would cost less a class.")
            sec.table(["classes a batch", "classes solved", "seconds a class (median)",
                       "positions a class (median)"],
                      [[f"{r['batch']:,}", f"{r['classes']:,}", f"{r['seconds']:.1f}", f"{r['per_class']:,.0f}"]
                       for r in sizes.iter_rows(named=True)])
        doc.sections.append(sec)

    sec = Section("Words used", "")
    sec.terms([
        ("exact", "computed from solved tables: no sampling, no error."),
        ("estimated", "computed from a random sample of setups; it comes with a 95% interval that "
                      "holds the exact value in 95% of samples."),
        ("setup class", "a setup and its mirror images and rotations, solved once."),
        ("Wilson interval", "a 95% confidence interval for a proportion that stays inside [0, 1] and "
                            "is reliable for small samples."),
    ])
    doc.sections.append(sec)
    return doc


def write_sweep_report(game: Any, table: pl.DataFrame, meta: dict[str, Any], out_dir: Path) -> Path:
    """Write the sweep's report (``report.md``, ``report.html``, ``figures/``) into ``out_dir``."""
    return save_document(build_sweep_report(game, table, meta), Path(out_dir))
