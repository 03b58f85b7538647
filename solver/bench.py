"""Benchmark: positions per second and peak bytes per position for enumerate + solve + write.

Each case runs in a fresh subprocess (so peak memory is the case's own), ``--repeat`` times;
the table shows medians. Run ``make bench`` or ``python -m solver.bench --help``.

Memory: ``peak MB`` is the process's peak resident memory; ``B/pos`` is that peak minus the
resident memory after the imports, per position of the variant. Tiered cases also show
``warm B/pos``: the peak minus the resident memory after :func:`warm_up` has loaded the compiled
kernels (numba's machine code, a fixed cost of about 90 MB that does not grow with the variant).

``--verify`` times ``pyramids verify`` instead: each case is solved first in a process of its own
(untimed; ``--tiered`` solves it tier by tier), then a fresh process checks the stored table against
the rules (:func:`solver.api.verify`): positions checked per second and peak bytes per position
of the check alone.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

#: (game, preset) cases run by default: the issue's 3x3 Override presets and the small presets
#: of the other games that are registered
DEFAULT_CASES = [
    ("override", "3x3"),
    ("greener", "3x3"),
    ("greener", "3x3-3"),
    ("greener", "3x4"),
    ("blam", "3x3"),
    ("blam", "4x4"),
    ("carrots", "3x3"),
    ("petal", "6"),
    ("petal", "6-2"),
    ("petal", "8"),
]


def _game(game_name: str, preset: str):
    """The game of a case: a preset's name, or parameters as ``name=value,name=value``."""
    from solver.games import game_class

    cls = game_class(game_name)
    if "=" in preset:
        return cls.from_params(dict(part.split("=", 1) for part in preset.split(",")))
    return cls.from_params(cls.presets[preset])


def _rss_bytes() -> int:
    """The process's peak resident memory so far."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _current_rss_bytes() -> int:
    """The process's resident memory now (the peak where /proc cannot be read)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return _rss_bytes()


def warm_up(game) -> None:
    """Load the compiled kernels a tiered solve of ``game`` runs, on a few positions: the game's
    expansion (three levels from the start, at most 4,096 positions each) and, for a game with
    dice, the chance engine on a three-position loop. Their code (numba's machine code and
    LLVM, about 90 MB for Carrots) is then held before the base is measured, so the "warm"
    bytes per position count the solve's data, not code whose size does not grow with the
    variant."""
    import numpy as np

    from solver.core.game import NodeKind

    state = game.initial_state()
    keys = np.array([game.encode(game.canonical(state))], dtype=np.uint64)
    for _ in range(3):
        exp = game.expand(keys, canonical=True)
        if not len(exp.children):
            break
        keys = np.unique(np.asarray(exp.children, dtype=np.uint64))[:4096]
    from solver.pipeline.capabilities import engine_of

    if engine_of(game, "tiers") == "value-iteration":
        from solver.engines.components import solve_chance

        # a chance node (row 0) rolling to a decision (row 1) that may loop back or end (row 2)
        solve_chance(np.array([NodeKind.CHANCE, NodeKind.DECISION, NodeKind.TERMINAL], np.int8),
                     np.zeros(3, np.int8), np.array([0, 0, 1], np.int8), np.array([0, 2, 4, 4], np.int64),
                     np.array([1, 2, 0, 2], np.int32), np.array([0.5, 0.5, 1.0, 1.0]), chunk=1)


def run_case(game_name: str, preset: str, out: str, bound_rounds: int | None = 0) -> dict:
    """Enumerate, solve and write one preset in this process; timings and memory as a dict.
    Secret choices: the proven bounds with ``bound_rounds`` rounds (``None``: none) are part of
    the solve; their seconds, rounds and widest interval are reported apart."""
    from solver.pipeline.whole import edges_frame as _edges_frame, positions_frame_of as _positions_frame, solve_graph, table_meta as _meta
    from solver.engines.enumerate import enumerate_positions
    from solver.games import game_class
    from solver.tables import EDGES, POSITIONS, variant_dir, write_parquet

    game = _game(game_name, preset)
    base_rss = _rss_bytes()
    t0 = time.perf_counter()
    graph = enumerate_positions(game)
    t1 = time.perf_counter()
    columns, extra, setups = solve_graph(game, graph, bound_rounds=bound_rounds)
    t2 = time.perf_counter()
    positions = _positions_frame(graph, columns)
    meta = _meta(game, graph, positions, symmetry=True, elapsed=t2 - t0,
                 timings={"enumerate": t1 - t0, "solve": t2 - t1}, extra=extra)
    folder = variant_dir(game.name, game.variant.variant_id(), root=out)
    write_parquet(positions, folder / POSITIONS, meta)
    write_parquet(_edges_frame(graph), folder / EDGES, meta)
    t3 = time.perf_counter()
    size = sum(os.path.getsize(folder / f) for f in (POSITIONS, EDGES))
    return {
        "case": f"{game_name} {preset}",
        "positions": graph.n,
        "edges": graph.num_edges,
        "enumerate_s": t1 - t0,
        "solve_s": t2 - t1,
        "write_s": t3 - t2,
        "total_s": t3 - t0,
        "peak_bytes": _rss_bytes(),
        "base_bytes": base_rss,
        "file_bytes": size,
        "sim_nodes": int(extra.get("simultaneous_nodes", 0)),
        "lp_solves": int(extra.get("simultaneous_lp_solves", 0)),
        "sweeps": int(extra.get("sweeps", 0) or 0),
        "lp_s": float(extra.get("simultaneous_lp_seconds", 0.0)),
        "bounds_s": float(extra.get("bounds", {}).get("seconds", 0.0)),
        "bound_rounds": int(extra.get("bounds", {}).get("rounds", 0)),
        "bound_width": float(extra.get("bounds", {}).get("width", float("nan"))),
    }


def solve_case(game_name: str, preset: str, out: str, tiered: bool) -> None:
    """Solve one case into ``out`` as ``pyramids solve`` does (the table ``--verify`` checks)."""
    from solver.api import solve

    solve(_game(game_name, preset), out=out, tiered=tiered)


def run_verify_case(game_name: str, preset: str, out: str) -> dict:
    """Check the table of one case stored under ``out`` (:func:`solver.api.verify`) in this
    process; seconds and memory as a dict."""
    from solver.api import verify

    game = _game(game_name, preset)
    base_rss = _rss_bytes()
    t0 = time.perf_counter()
    verdict = verify(game, out=out)
    seconds = time.perf_counter() - t0
    return {"case": f"{game_name} {preset}", "positions": verdict.positions, "verify_s": seconds,
            "peak_bytes": _rss_bytes(), "base_bytes": base_rss, "ok": int(verdict.ok),
            "checked": verdict.checked}


#: cases of the tiered (out-of-core) solver run by default (``--tiered``)
DEFAULT_TIERED_CASES = [
    ("override", "3x3"),
    ("blam", "3x3"),
    ("carrots", "3x3"),  # dice: value iteration tier by tier
    ("petal", "6-2"),  # secret choices: round by round from the keys, a file a round phase
    # many small tiers (149 of at most 28 positions): the cost per tier (files, plans), not per position
    ("override", "size=2,line=2,per_size=2"),
]


def run_tiered_case(game_name: str, preset: str, out: str, workers: int = 1,
                    low_memory: bool | None = None, keep_children: bool = True,
                    bound_rounds: int | None = 0) -> dict:
    """Solve one preset tier by tier (:mod:`solver.pipeline.tiered`) in this process (and, with
    ``workers > 1``, its pool); timings, peak memory of this process and disk use as a dict.
    ``keep_children=False``: the low-memory passes keep no children (each level expands the
    undecided positions again), the least memory the mode can use. Secret choices round by
    round: the proven bounds are part of the solve (``bound_rounds`` sweeps of each, 0: the
    default limit, ``None``: none), their seconds and widest interval reported apart."""
    from solver.pipeline import tiered
    from solver.pipeline.tiered import solve_tiered
    from solver.games import game_class

    if not keep_children:
        tiered.PASSES_CHILDREN_MEMORY_SHARE = 0.0

    game = _game(game_name, preset)
    base_rss = _rss_bytes()
    warm_up(game)
    warm_rss = _current_rss_bytes()
    t0 = time.perf_counter()
    if game.secret_choices and game.has_round_phases:  # secret choices: round by round, a file a phase
        from solver.pipeline.whole import solve_rounds_variant
        from solver.tables import variant_dir

        folder = solve_rounds_variant(game, variant_dir(game.name, game.variant.variant_id(), root=out),
                                      symmetry=True, force=True, tol=1e-12, max_sweeps=None, workers=workers,
                                      progress=False, check=False, bounds=bound_rounds is not None,
                                      bound_sweeps=bound_rounds or None)
    else:
        folder = solve_tiered(game, out=out, force=True, workers=workers, low_memory=low_memory)
    t1 = time.perf_counter()
    with open(folder / "tiers.json") as fh:
        meta = json.load(fh)
    size = sum(f.stat().st_size for f in (folder / "tiers").glob("*.parquet"))
    biggest = max(meta["tiers"], key=lambda t: t["positions"])
    return {
        "case": f"{game_name} {preset}" + ((" passes" if keep_children else " passes-expand") if low_memory
                                           else " lists" if low_memory is False else ""),
        "positions": meta["counts"]["positions"],
        "edges": meta["counts"]["edges"],
        "tiers": len(meta["tiers"]),
        "largest_tier": biggest["positions"],
        "discover_s": meta["timings"].get("discover", meta["timings"].get("search")),
        "solve_s": meta["timings"].get("solve", meta["timings"].get("sweeps")),
        "total_s": t1 - t0,
        "peak_bytes": _rss_bytes(),
        "base_bytes": base_rss,
        "warm_bytes": warm_rss,
        "file_bytes": size,
        "bounds_s": float(meta.get("bounds", {}).get("seconds", 0.0)),
        "bound_width": float(meta.get("bounds", {}).get("width", float("nan"))),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m solver.bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--case", action="append", default=[], metavar="GAME:PRESET",
                        help="a case to run (repeatable; default: the small presets of every game); "
                             "PRESET may be parameters, e.g. override:size=2,line=2,per_size=2")
    parser.add_argument("--repeat", type=int, default=1, help="runs per case; medians are shown")
    parser.add_argument("--tiered", action="store_true",
                        help="run the tiered (out-of-core) solver instead (default cases: "
                             + ", ".join(f"{g}:{p}" for g, p in DEFAULT_TIERED_CASES) + ")")
    parser.add_argument("--workers", type=int, default=1,
                        help="tiered: threads solving tiers at once (default 1, so that one tier is in "
                             "memory at a time)")
    parser.add_argument("--low-memory", action="store_true",
                        help="tiered: solve every tier by passes instead of reverse lists (the "
                             "low-memory mode)")
    parser.add_argument("--lists", action="store_true",
                        help="tiered: solve every tier with reverse lists of its moves (the default "
                             "without either flag: the solve's own plan, passes in games without margins)")
    parser.add_argument("--no-keep-children", action="store_true",
                        help="tiered --low-memory: keep no children between the passes (every level "
                             "expands the undecided positions again: the least memory, the most time)")
    parser.add_argument("--bound-rounds", type=int, default=0, metavar="N",
                        help="secret choices: rounds of better strategies in the proven bounds (default 0: "
                             "value iteration's strategies evaluated against exact best replies; -1: no "
                             "bounds, value iteration alone); their cost is the 'bounds s' column. "
                             "--tiered, round by round: the most sweeps of each bound (0: the default "
                             "limit; -1: no bounds)")
    parser.add_argument("--verify", action="store_true",
                        help="time `pyramids verify` of each case's table (solved first, untimed; with "
                             "--tiered, tier by tier) instead of its solve")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--solve-into", help=argparse.SUPPRESS)
    parser.add_argument("--verify-from", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child:
        game_name, preset = args.child.split(":")
        if args.solve_into:
            solve_case(game_name, preset, args.solve_into, args.tiered)
            return 0
        if args.verify_from:
            print(json.dumps(run_verify_case(game_name, preset, args.verify_from)))
            return 0
        with tempfile.TemporaryDirectory() as tmp:
            if args.tiered:
                print(json.dumps(run_tiered_case(game_name, preset, tmp, args.workers,
                                                 True if args.low_memory else False if args.lists else None,
                                                 keep_children=not args.no_keep_children,
                                                 bound_rounds=None if args.bound_rounds < 0 else args.bound_rounds)))
            else:
                print(json.dumps(run_case(game_name, preset, tmp,
                                          None if args.bound_rounds < 0 else args.bound_rounds)))
        return 0

    from solver.games import game_class

    cases = [tuple(c.split(":", 1)) for c in args.case] or (DEFAULT_TIERED_CASES if args.tiered else DEFAULT_CASES)
    child_flags = ((["--tiered", "--workers", str(args.workers)] if args.tiered else [])
                   + ["--bound-rounds", str(args.bound_rounds)])
    if args.tiered and args.lists:
        child_flags.append("--lists")
    if args.tiered and args.low_memory:
        child_flags.append("--low-memory")
        if args.no_keep_children:
            child_flags.append("--no-keep-children")
    rows = []
    for game_name, preset in cases:
        try:
            cls = game_class(game_name)
        except ImportError:
            continue
        if preset not in cls.presets and "=" not in preset:
            print(f"skip {game_name}:{preset} (no such preset; give one or name=value,name=value)",
                  file=sys.stderr)
            continue
        if args.verify:
            runs = _verify_runs(game_name, preset, args.repeat, args.tiered)
        else:
            runs = []
            for _ in range(args.repeat):
                out = _child(f"{game_name}:{preset}", child_flags, "failed")
                if out is None:
                    break
                runs.append(json.loads(out.strip().splitlines()[-1]))
        if not runs:
            continue
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0] if k not in ("case", "checked")}
        med["case"] = runs[0]["case"] + (" (tiered)" if args.verify and args.tiered else "")
        med["checked"] = runs[0].get("checked")
        rows.append(med)
        printer = _print_verify_row if args.verify else _print_tiered_row if args.tiered else _print_row
        printer(med, header=len(rows) == 1)
    return 0


def _verify_runs(game_name: str, preset: str, repeat: int, tiered: bool) -> list[dict]:
    """``repeat`` timed checks of one case's table, solved once beforehand in its own process."""
    case = f"{game_name}:{preset}"
    with tempfile.TemporaryDirectory() as tmp:
        if _child(case, ["--solve-into", tmp, *(["--tiered"] if tiered else [])], "failed to solve") is None:
            return []
        runs = []
        for _ in range(repeat):
            out = _child(case, ["--verify-from", tmp], "failed to verify")
            if out is None:
                return []
            runs.append(json.loads(out.strip().splitlines()[-1]))
        return runs


def _child(case: str, flags: list[str], failed: str) -> str | None:
    """The standard output of ``python -m solver.bench --child case *flags`` (a case in a process
    of its own), or ``None`` after saying on standard error that it ``failed``."""
    proc = subprocess.run([sys.executable, "-m", "solver.bench", "--child", case, *flags],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        print(f"{case} {failed}:\n{proc.stderr[-2000:]}", file=sys.stderr)
        return None
    return proc.stdout


def _print_row(r: dict, header: bool) -> None:
    if header:
        print(f"{'case':<18}{'positions':>12}{'moves':>12}{'enum s':>9}{'solve s':>9}{'write s':>9}"
              f"{'total s':>9}{'pos/s':>10}{'peak MB':>9}{'B/pos':>8}{'file B/pos':>11}"
              f"{'sim nodes':>10}{'LP solves':>10}{'sweeps':>7}{'LP s':>7}{'bounds s':>9}{'width':>9}")
    n = max(r["positions"], 1)
    print(f"{r['case']:<18}{int(r['positions']):>12,}{int(r['edges']):>12,}{r['enumerate_s']:>9.2f}"
          f"{r['solve_s']:>9.2f}{r['write_s']:>9.2f}{r['total_s']:>9.2f}{r['positions'] / r['total_s']:>10,.0f}"
          f"{r['peak_bytes'] / 2**20:>9.0f}{(r['peak_bytes'] - r['base_bytes']) / n:>8.0f}"
          f"{r['file_bytes'] / n:>11.1f}{int(r.get('sim_nodes', 0)):>10,}{int(r.get('lp_solves', 0)):>10,}"
          f"{int(r.get('sweeps', 0)):>7}{r.get('lp_s', 0.0):>7.1f}{r.get('bounds_s', 0.0):>9.1f}"
          f"{r.get('bound_width', float('nan')):>9.1e}", flush=True)


def _print_verify_row(r: dict, header: bool) -> None:
    if header:
        print(f"{'case (verify)':<28}{'checked':>9}{'positions':>12}{'verify s':>10}{'pos/s':>10}"
              f"{'peak MB':>9}{'B/pos':>8}{'verified':>10}")
    n = max(r["positions"], 1)
    print(f"{r['case']:<28}{str(r['checked']):>9}{int(r['positions']):>12,}{r['verify_s']:>10.2f}"
          f"{r['positions'] / max(r['verify_s'], 1e-9):>10,.0f}{r['peak_bytes'] / 2**20:>9.0f}"
          f"{(r['peak_bytes'] - r['base_bytes']) / n:>8.0f}{'yes' if r['ok'] else 'NO':>10}", flush=True)


def _print_tiered_row(r: dict, header: bool) -> None:
    if header:
        print(f"{'case (tiered)':<36}{'positions':>12}{'moves':>15}{'tiers':>7}{'largest':>8}"
              f"{'disc s':>9}{'solve s':>9}{'total s':>9}{'pos/s':>10}{'peak MB':>9}{'B/pos':>8}"
              f"{'warm B/pos':>11}{'disk B/pos':>11}{'bounds s':>9}{'width':>9}")
    n = max(r["positions"], 1)
    print(f"{r['case']:<36}{int(r['positions']):>12,}{int(r['edges']):>15,}{int(r['tiers']):>7}"
          f"{r['largest_tier'] / n:>8.0%}{r['discover_s']:>9.2f}{r['solve_s']:>9.2f}{r['total_s']:>9.2f}"
          f"{r['positions'] / r['total_s']:>10,.0f}{r['peak_bytes'] / 2**20:>9.0f}"
          f"{(r['peak_bytes'] - r['base_bytes']) / n:>8.1f}{(r['peak_bytes'] - r['warm_bytes']) / n:>11.1f}"
          f"{r['file_bytes'] / n:>11.2f}"
          + (f"{r['bounds_s']:>9.1f}{r['bound_width']:>9.1e}" if not math.isnan(r.get("bound_width", math.nan))
             else f"{'-':>9}{'-':>9}"), flush=True)


if __name__ == "__main__":
    sys.exit(main())
