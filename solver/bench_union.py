"""How much random setups share (issue 35): the distinct positions reached from the first N
setup classes together, per number of stacks (or tier group) left, for several N.

Each N runs the tiered discovery (:func:`solver.pipeline.tiered.discover`) seeded with the first
N setup classes in the sweep's order (classes in the order uniformly drawn arrangements first
reach them: :func:`solver.pipeline.tasks.plan_order`, the same classes ``--setup-limit N``
sweeps), in a temporary folder, and counts the positions of every tier exactly (the discovery
deduplicates keys by sorting, tier by tier). Nothing is solved.

The extrapolation to every class is a power law through the last two N (positions grow as
``N**b`` between them; ``b`` falls as N grows, since later classes find more positions already
reached, so the power law through the last two points is an **upper** estimate when extended),
and never above the sum of the classes alone (``N`` times the positions per class of the first
point). Run ``python -m solver.bench_union --help``.
"""

from __future__ import annotations

import argparse
import math
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from solver.api import make_game
from solver.games import game_class


def measure(game: Any, n: int, root: Path, *, workers: int = 2, symmetry: bool = True,
            progress: bool | str = False) -> dict[str, Any]:
    """Discover the union of the first ``n`` setup classes of ``game``; counts per tier group.
    ``progress``: the tiered discovery's own progress (bars, ``"lines"`` or nothing)."""
    from solver.core.progress import session
    from solver.pipeline import tiered

    folder = root / f"n{n}"
    run = tiered._start_or_resume(game, folder, symmetry, True, [], setup_keys=first_classes(game, symmetry, n))
    run.workers = workers
    from concurrent.futures import ThreadPoolExecutor

    run.pool = ThreadPoolExecutor(max_workers=workers) if workers > 1 else None
    bar = tiered._TierProgress(progress) if progress else None
    t0 = time.perf_counter()
    try:
        with session(progress, every=tiered.LOG_EVERY):
            infos = tiered.discover(run, progress=bar)
    finally:
        if bar is not None:
            bar.close()
        if run.pool is not None:
            run.pool.shutdown(wait=True)
    seconds = time.perf_counter() - t0
    groups: dict[str, int] = defaultdict(int)
    for t, info in infos.items():
        groups[_group(game, t)] += info.positions
    shutil.rmtree(tiered.work_dir(folder), ignore_errors=True)
    return {"n": int(n), "positions": sum(i.positions for i in infos.values()), "tiers": len(infos),
            "groups": dict(groups), "seconds": seconds}


def first_classes(game: Any, symmetry: bool, n: int) -> Any:
    """The start keys of the first ``n`` setup classes in the sweep's order (classes in the order
    uniformly drawn arrangements first reach them, :func:`solver.pipeline.tasks.plan_order`: the
    classes ``--setup-limit n`` sweeps first)."""
    from solver.pipeline.tasks import plan_order, setup_classes

    classes = setup_classes(game, symmetry)
    return classes.keys[plan_order(classes.mult)[0][: max(0, int(n))]]


def _group(game: Any, tier: int) -> str:
    """Greener's tiers grouped by stacks left (every tier otherwise)."""
    parts = getattr(game, "tier_parts", None)
    if parts is None or not hasattr(game, "cells"):
        return str(tier)
    return f"{game.cells - parts(tier)[0]} stacks left"


def recorded(game: Any, out: str | Path | None) -> list[dict[str, Any]]:
    """The unions finished in the variant's sweep (``pyramids solve ... --tiered --setup-limit N``
    keeps a record of each, :func:`solver.pipeline.tasks.union_records`) as rows like
    :func:`measure`'s: N classes (not the first N: the classes of the sweep's order that union
    took), positions per tier group, seconds of discovery."""
    from solver.pipeline.tasks import union_records

    rows = []
    for r in union_records(game, out=out):
        groups: dict[str, int] = defaultdict(int)
        for t in r["tiers"]:  # (a union whose tiers were cut in slices: the game's tier of each)
            groups[_group(game, t["tier"] // int(r.get("tier_slices", 1)))] += t["positions"]
        rows.append({"n": r["classes"], "positions": r["positions"], "tiers": len(r["tiers"]), "groups": dict(groups),
                     "seconds": float(r.get("timings", {}).get("discover", 0.0)), "orders": tuple(r["orders"] or (0, 0)),
                     "solve_seconds": float(r.get("timings", {}).get("solve", 0.0)),
                     "cpu_seconds": r.get("cpu_seconds")})
    return rows


def extrapolate(rows: list[dict[str, Any]], classes: int) -> float | None:
    """Positions of every class: the power law through the last two measured N, capped by the
    classes alone (see the module docstring); ``None`` with fewer than two N. Rows of the same N
    (unions of different classes) count as their mean."""
    by_n: dict[int, list[int]] = defaultdict(list)
    for r in rows:
        by_n[int(r["n"])].append(int(r["positions"]))
    rows = [{"n": n, "positions": sum(v) / len(v)} for n, v in sorted(by_n.items())]
    if len(rows) < 2:
        return None
    a, b = rows[-2], rows[-1]
    if b["n"] >= classes:
        return float(b["positions"])
    slope = math.log(b["positions"] / a["positions"]) / math.log(b["n"] / a["n"])
    alone = rows[0]["positions"] / rows[0]["n"] * classes
    return float(min(alone, b["positions"] * (classes / b["n"]) ** slope))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m solver.bench_union", description=__doc__.split("\n\n")[0])
    p.add_argument("game", nargs="?", default="greener")
    p.add_argument("--preset", default=None)
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    p.add_argument("--classes", default="1,10,100", help="comma-separated N (default 1,10,100)")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--dir", default=None, help="work folder (default: a temporary folder)")
    p.add_argument("--recorded", action="store_true",
                   help="measure nothing: show the unions already solved in the variant's sweep under --out "
                        "(each `pyramids solve ... --tiered --setup-limit N` keeps a record of its tiers)")
    p.add_argument("--out", default=None, help="tables folder of the sweep for --recorded (default: tables)")
    p.add_argument("--quiet", action="store_true", help="no progress on standard error (default: bars on a "
                   "terminal, else a line every 10 s)")
    args = p.parse_args(argv)
    params = dict(game_class(args.game).presets[args.preset]) if args.preset else {}
    for item in args.set:
        k, _, v = item.partition("=")
        params[k] = v
    game = make_game(args.game, params)
    from solver.core.progress import mode_for
    from solver.pipeline import tasks

    setups = tasks.setup_classes(game)
    ns = sorted({min(int(x), setups.classes) for x in args.classes.split(",")})
    print(f"{game.variant.label()}: {setups.classes:,} setup classes ({setups.arrangements:,} arrangements)",
          flush=True)
    rows = []
    if args.recorded:
        rows = sorted(recorded(game, args.out), key=lambda r: (r["n"], r["orders"]))
        if not rows:
            print(f"no finished union in the sweep of {game.variant.label()} under {args.out or 'tables'}: "
                  "solve one with `pyramids solve ... --tiered --setup-limit N --out DIR`", file=sys.stderr)
            return 2
        for row in rows:
            print(f"  N = {row['n']:>7,} (classes {row['orders'][0]:,}-{row['orders'][1]:,} of the order): "
                  f"{row['positions']:>15,} positions ({row['positions'] / row['n']:>13,.0f} a class) in "
                  f"{row['tiers']:,} tiers, {row['seconds']:.1f} s of discovery, {row['solve_seconds']:.1f} s of solving",
                  flush=True)
    else:
        with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
            for n in ns:
                row = measure(game, n, Path(tmp), workers=args.workers, progress=mode_for(not args.quiet))
                rows.append(row)
                print(f"  N = {n:>7,}: {row['positions']:>15,} positions ({row['positions'] / n:>13,.0f} a class) "
                      f"in {row['tiers']:,} tiers, {row['seconds']:.1f} s", flush=True)
    keys = sorted({k for r in rows for k in r["groups"]}, key=lambda k: int(k.split()[0]), reverse=True)
    print()
    print("| tier group | " + " | ".join(f"N = {r['n']:,}" for r in rows) + " |")
    print("| --- |" + " ---: |" * len(rows))
    for k in keys:
        print(f"| {k} | " + " | ".join(f"{r['groups'].get(k, 0):,}" for r in rows) + " |")
    print("| **all** | " + " | ".join(f"**{r['positions']:,}**" for r in rows) + " |")
    print("| a class | " + " | ".join(f"{r['positions'] / r['n']:,.0f}" for r in rows) + " |")
    print(f"| seconds{' of discovery' if args.recorded else ''} | "
          + " | ".join(f"{r['seconds']:.1f}" for r in rows) + " |")
    if args.recorded:
        print("| seconds of solving | " + " | ".join(f"{r['solve_seconds']:.1f}" for r in rows) + " |")
    est = extrapolate(rows, setups.classes)
    if est is not None:
        print(f"\nall {setups.classes:,} classes: about {est:,.0f} positions ({est / setups.classes:,.0f} a class; "
              "power law through the last two N, capped by the classes alone)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
