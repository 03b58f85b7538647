"""Benchmark of the task layer (``make bench-cluster``): the overhead of a Dask task with trivial
tasks, and Greener 3x4 over all setups as a setup sweep on a local cluster against the
in-process whole-graph solve. Everything runs on this machine (loopback only).

Columns: wall seconds; ``task s`` is the time spent inside the tasks (their own solves);
``overhead`` is the wall time beyond a perfect split of the task time over the workers
(wall * workers / task time - 1).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time


def _noop(i: int) -> int:
    return i


def trivial_tasks(cluster, n: int) -> float:
    """Tasks per second through the client for ``n`` trivial tasks (submitted and gathered)."""
    import distributed

    t0 = time.perf_counter()
    futures = [cluster.client.submit(_noop, i, pure=False) for i in range(n)]
    for f in distributed.as_completed(futures, loop=cluster.client.loop):
        f.result()
    return n / (time.perf_counter() - t0)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m solver.bench_cluster", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--preset", default="3x4", help="Greener preset swept (default %(default)s)")
    p.add_argument("--tasks", type=int, default=2000, help="trivial tasks (default %(default)s)")
    p.add_argument("--repeat", type=int, default=1, help="runs of each case; medians shown")
    args = p.parse_args(argv)

    from solver.api import make_game, solve
    from solver.pipeline import tasks
    from solver.games import game_class

    rows = []
    t0 = time.perf_counter()
    cluster = tasks.connect(jobs=2)
    start = time.perf_counter() - t0
    try:
        rates = [trivial_tasks(cluster, args.tasks) for _ in range(args.repeat)]
        rows.append(("trivial tasks, 2 workers", f"{statistics.median(rates):,.0f} tasks/s", "", "", ""))
        rows.append(("start a local 2-worker cluster", f"{start:.1f} s", "", "", ""))
        game = make_game("greener", game_class("greener").presets[args.preset])
        whole, sweep2, task2 = [], [], []
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory() as d:
                t = time.perf_counter()
                solve(game, out=d, write_edges=False, sweep=False)
                whole.append(time.perf_counter() - t)
                t = time.perf_counter()
                tasks.sweep_setups(game, out=d, cluster=cluster)
                sweep2.append(time.perf_counter() - t)
                table, meta = tasks.read_sweep(game, out=d)
                task2.append(meta["class_seconds"])
        w, s, ts = statistics.median(whole), statistics.median(sweep2), statistics.median(task2)
        rows.append((f"greener {args.preset} all setups, in process (whole graph)", f"{w:.1f} s", "", "", ""))
        rows.append((f"greener {args.preset} sweep, 2 workers (auto batches)", f"{s:.1f} s", f"{ts:.1f}",
                     f"{s * 2 / ts - 1:+.1%}", f"{s / w:.2f}x"))
    finally:
        cluster.close()
    print(f"{'case':58} {'wall / rate':>14} {'task s':>8} {'overhead':>9} {'vs whole':>9}")
    for r in rows:
        print(f"{r[0]:58} {r[1]:>14} {r[2]:>8} {r[3]:>9} {r[4]:>9}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
