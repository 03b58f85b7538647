"""Regenerate every shipped report in ``reports/`` from the presets (``make reports``).

Solves what is missing (tables under ``tables/``), then writes one balance report per shipped
preset and the shipped rules-tuning sweeps. Everything in the reports comes from the tables.
With ``--estimates`` it also replays the shipped full-size self-play estimates (each game's
player calibrated on its small preset first, so the estimate report quotes it, and each MCTS or
alpha-beta estimate played again at a weaker budget or depth): about three hours on 2 cores, so
not part of ``make reports``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

#: (game, preset) pairs with a shipped balance report
SHIPPED_REPORTS: list[tuple[str, str]] = [
    ("override", "3x3"),
    ("override", "4x4"),  # 68.7M positions: solved tier by tier (about 25 min here)
    ("override", "4x4-3"),  # 65.5M positions, lines of three: tier by tier, 212 s here
    ("override", "3x3-2"),  # 4.05G positions by passes: 2 h 23 min here, 16 GB, 43.5 GB of disk
    ("greener", "3x3"),
    ("greener", "3x3-3"),
    ("greener", "3x4"),
    ("blam", "3x3"),
    # 2.24G positions in 2,792 tiers: 21 GB of discovery files, 3.9 hours of tier solves
    # (summed; two at a time here: 2 h 04 min), 15.6 GB peak, a 2.5 GB table (2026-12-07)
    ("blam", "4x4-2"),
    ("blam", "6x6"),  # 175.5M positions in 200 tiers, one pyramid per size: tier by tier, 457 s here
    ("carrots", "3x3"),
    ("petal", "6"),
    ("petal", "6-2"),  # 6.9M positions, two of each size: 9.3 min here (2026-12-07), 4.5 GB peak
    # 368.2M positions round by round: search 802 s, 67 value sweeps (they cycle), 45 sweeps of
    # each bound at about 55 s, 12.3 GB of held moves, 16.4 GB peak; the report 28.5 s
    ("petal", "8-2"),
]

#: rounds of better strategies for the proven bounds of shipped secret-choice presets, where
#: more than the default were run (Petal 6: certified, every interval at most 5.1e-10 wide, after
#: 17 of 30 rounds, 920 s here on 2026-12-07; Petal 6-2 after 2 of 8, 560 s; the shipped sweep's
#: baseline is the same variant, so it reads this table)
BOUND_ROUNDS: dict[tuple[str, str], int] = {("petal", "6"): 30, ("petal", "6-2"): 8, ("petal", "8-2"): 45}
#: the same for the shipped sweeps' solves (by game)
SWEEP_BOUND_ROUNDS: dict[str, int] = {"petal": 30}

#: shipped tuning sweeps: (game, fixed parameters, varied parameters)
SHIPPED_SWEEPS: list[tuple[str, dict[str, str], dict[str, list[str]]]] = [
    ("override", {"size": "3", "line": "3", "per_size": "1"},
     {"centre_rule": ["on", "off"], "no_undo": ["on", "off"]}),
    ("greener", {"rows": "3", "cols": "3", "setup": "all"}, {"black": ["2", "3"], "white": ["2", "3"]}),
    # 4x4 over all setups is out of reach (113,028 setup classes); a sample of random setups
    ("greener", {"rows": "4", "cols": "4", "black": "4", "white": "4", "setup": "random"},
     {"seed": [str(i) for i in range(1, 9)]}),
    ("blam", {"rows": "3", "cols": "3", "per_size": "1"}, {"chain": ["on", "off"], "push_smaller_only": ["off", "on"]}),
    # what is the hidden turn-order bid worth? (secret vs in view), with both openings
    ("petal", {"petals": "6", "run": "3", "per_size": "1"},
     {"sequencing": ["secret", "open"], "opening": ["large-opposite", "enter-large"]}),
    # the same question with two pyramids of each size (preset 6-2; reuses its certified table)
    ("petal", {"petals": "6", "run": "3", "per_size": "2"}, {"sequencing": ["secret", "open"]}),
]

#: the shipped full-size estimates: ``pyramids`` commands run in this order (a calibration before
#: each estimate, which quotes it: on the game's largest preset solved exactly here, issue 36's
#: gate: in about a minute, Petal Battle's 6-2 in about 13 minutes (reused from its balance report),
#: Override's 3x3-2 in hours (used where its table is on disk, else 3x3: GATE_FALLBACK)). MCTS with
#: 100 playouts a move (shorter playouts where random play runs long; Blam!: 500, on the compiled
#: tree, the least that keeps 95% of its moves on 4x4): 10,000 games where they take at most half an
#: hour on 2 cores (a 95% interval of at most +-1%; Carrots and Broccoli's greedy games: about 18
#: minutes), else 2,400 (+-2%); Greener four times: with the
#: player that passes the gate on 3x4 (2,000 playouts, c=0.5; 2,400 games, about 20 minutes), with
#: the least budget that passes it (1,000 playouts, c=0.5) at issue 36's +-1% (10,000 games, about
#: 30 minutes on 2 idle cores), and by another kind of player that passes it, compiled alpha-beta 6
#: plies deep (1,000 games, about 15 minutes). Petal Battle twice, the second time with uniform
#: secret orders (less exploitable than the searched ones; about 23 minutes). Each MCTS or
#: alpha-beta estimate also plays its games at a weaker budget or depth (``--compare-budget``,
#: ``--compare-depth``, calibrated too): the report shows how the verdict moves with the player's
#: strength. Override also by compiled alpha-beta 4 plies deep, the player that passes the gate on
#: 3x3-2 (1,000 games). Carrots and Broccoli: greedy, where MCTS's full-size games do not end within
#: 500 moves (100 playouts a move, of 200 or of 2 choices: 0 of 4 games ended; the README says so)
#: while most of greedy's do; then, with a cap of 2,000 choices, the default (blocking) evaluation
#: against the racing one (``evaluation=race``) in both seats and each against itself: the evidence
#: that blocking play, which wins, is what keeps games going.
SHIPPED_ESTIMATES: list[list[str]] = [
    ["calibrate", "greener", "--preset", "3x4", "--player", "mcts", "--budget", "100", "--seed", "1"],
    ["estimate", "greener", "--player", "mcts", "--budget", "100", "--games", "10000", "--seed", "1"],
    ["calibrate", "greener", "--preset", "3x4", "--player", "mcts", "--budget", "100", "--option", "c=0.5",
     "--seed", "1"],
    ["calibrate", "greener", "--preset", "3x4", "--player", "mcts", "--budget", "2000", "--option", "c=0.5",
     "--seed", "1"],
    ["estimate", "greener", "--player", "mcts", "--budget", "2000", "--option", "c=0.5", "--compare-budget", "100",
     "--games", "2400", "--seed", "1"],
    ["calibrate", "greener", "--preset", "3x4", "--player", "mcts", "--budget", "1000", "--option", "c=0.5",
     "--seed", "1"],
    ["estimate", "greener", "--player", "mcts", "--budget", "1000", "--option", "c=0.5", "--compare-budget", "100",
     "--games", "10000", "--seed", "1"],
    ["calibrate", "greener", "--preset", "3x4", "--player", "alphabeta", "--depth", "4", "--seed", "1"],
    ["calibrate", "greener", "--preset", "3x4", "--player", "alphabeta", "--depth", "6", "--seed", "1"],
    ["estimate", "greener", "--player", "alphabeta", "--depth", "6", "--compare-depth", "4", "--games", "1000",
     "--seed", "1"],
    ["calibrate", "blam", "--preset", "4x4", "--player", "mcts", "--budget", "100", "--seed", "1"],
    ["calibrate", "blam", "--preset", "4x4", "--player", "mcts", "--budget", "500", "--seed", "1"],
    ["estimate", "blam", "--player", "mcts", "--budget", "500", "--compare-budget", "100", "--games", "10000",
     "--seed", "1"],
    # Override's gate is 3x3-2 (won by A in 11; its table, 2 h 23 min to solve, where it is on
    # disk, else 3x3, a draw that nearly every move keeps: GATE_FALLBACK): MCTS keeps 83.6% there
    # at 100 playouts, alpha-beta 4 plies deep 100%
    ["calibrate", "override", "--preset", "3x3-2", "--player", "mcts", "--budget", "20", "--option",
     "playout_moves=30", "--seed", "1"],
    ["calibrate", "override", "--preset", "3x3-2", "--player", "mcts", "--budget", "100", "--option",
     "playout_moves=30", "--seed", "1"],
    ["estimate", "override", "--player", "mcts", "--budget", "100", "--option", "playout_moves=30",
     "--compare-budget", "20", "--games", "10000", "--seed", "1"],
    ["calibrate", "override", "--preset", "3x3-2", "--player", "alphabeta", "--depth", "3", "--seed", "1"],
    ["calibrate", "override", "--preset", "3x3-2", "--player", "alphabeta", "--depth", "4", "--seed", "1"],
    ["estimate", "override", "--player", "alphabeta", "--depth", "4", "--compare-depth", "3", "--games", "1000",
     "--seed", "1"],
    # Petal Battle's gate is 6-2, the preset issue 36 names (two pyramids of each size; 8-2's table
    # takes hours); 100 games, since its games are short (about 4 scored moves each)
    ["calibrate", "petal", "--preset", "6-2", "--player", "mcts", "--budget", "20", "--option", "playout_moves=30",
     "--seed", "1", "--games", "100"],
    ["calibrate", "petal", "--preset", "6-2", "--player", "mcts", "--budget", "100", "--option", "playout_moves=30",
     "--seed", "1", "--games", "100"],
    ["estimate", "petal", "--player", "mcts", "--budget", "100", "--option", "playout_moves=30",
     "--compare-budget", "20", "--games", "10000", "--seed", "1"],
    # the same with uniform secret orders: less exploitable than regret matching's at these budgets
    ["calibrate", "petal", "--preset", "6-2", "--player", "mcts", "--budget", "20", "--option", "playout_moves=30",
     "--option", "simultaneous=uniform", "--seed", "1", "--games", "100"],
    ["calibrate", "petal", "--preset", "6-2", "--player", "mcts", "--budget", "100", "--option", "playout_moves=30",
     "--option", "simultaneous=uniform", "--seed", "1", "--games", "100"],
    ["estimate", "petal", "--player", "mcts", "--budget", "100", "--option", "playout_moves=30",
     "--option", "simultaneous=uniform", "--compare-budget", "20", "--games", "10000", "--seed", "1"],
    # 200 games: one of 20 games ran to the move cap and made most of their moves (2026-12-07)
    ["calibrate", "carrots", "--preset", "3x3", "--player", "greedy", "--seed", "1", "--games", "200"],
    ["estimate", "carrots", "--player", "greedy", "--games", "10000", "--seed", "1"],
    ["calibrate", "carrots", "--preset", "3x3", "--player", "greedy", "--option", "evaluation=race", "--seed", "1",
     "--games", "200"],
    ["estimate", "carrots", "--player", "greedy", "--games", "1000", "--max-moves", "2000", "--seed", "1"],
    ["estimate", "carrots", "--player", "greedy", "--option", "evaluation=race", "--games", "1000",
     "--max-moves", "2000", "--seed", "1"],
    ["estimate", "carrots", "--player", "greedy", "--option1", "evaluation=race", "--games", "1000",
     "--max-moves", "2000", "--seed", "1"],
    ["estimate", "carrots", "--player", "greedy", "--option2", "evaluation=race", "--games", "1000",
     "--max-moves", "2000", "--seed", "1"],
]


#: a calibration on the first preset runs on the second instead when the first's table is not on
#: disk (under ``--out``): Override 3x3-2's takes hours to solve, so a replay without it calibrates
#: on 3x3 and says so
GATE_FALLBACK: dict[tuple[str, str], str] = {("override", "3x3-2"): "3x3"}


def gate_command(command: list[str], out: Path | None) -> tuple[list[str], str | None]:
    """``command`` as replayed: a calibration on a preset of :data:`GATE_FALLBACK` whose table is
    not solved under ``out`` runs on the fallback preset instead (with a note saying so)."""
    if command[0] != "calibrate" or "--preset" not in command:
        return command, None
    at = command.index("--preset") + 1
    fallback = GATE_FALLBACK.get((command[1], command[at]))
    if fallback is None:
        return command, None
    from solver.api import load
    from solver.errors import PyramidsError
    from solver.games import game_class

    cls = game_class(command[1])
    game = cls.from_params(cls.presets[command[at]])
    try:
        load(game, out=out)
    except PyramidsError:
        note = (f"note: no solved table of {command[1]} {command[at]} under {out or 'tables/'}: "
                f"calibrating on {fallback} instead")
        return command[:at] + [fallback] + command[at + 1:], note
    return command, None


def main(argv: list[str] | None = None) -> int:
    from analysis.report import write_report
    from analysis.tuning import format_table, run_sweep
    from solver.api import solve
    from solver.games import game_class

    parser = argparse.ArgumentParser(prog="python -m analysis.shipped", description=__doc__)
    parser.add_argument("--reports", type=Path, default=Path("reports"))
    parser.add_argument("--out", type=Path, default=None, help="tables root (default tables/)")
    parser.add_argument("--only", help="only this game")
    parser.add_argument("--skip", action="append", default=[], metavar="GAME:PRESET",
                        help="leave this shipped balance report as it is (repeatable), e.g. "
                             "override:3x3-2, whose table takes hours to solve again")
    parser.add_argument("--estimates", action="store_true",
                        help="also replay the shipped full-size self-play estimates and their calibrations (about three hours on 2 cores: the run of 2026-12-06 took 101 min before Greener's and Override's alpha-beta estimates, Petal Battle's with uniform secret orders and Greener's 10,000 games at 1,000 playouts were added, about 13, 40, 23 and 30 min; Override calibrates on 3x3-2 where its tables are under --out, else on 3x3)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="processes for the estimates' games (results do not depend on it)")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.skip) - {f"{g}:{p}" for g, p in SHIPPED_REPORTS})
    if unknown:
        parser.error(f"--skip {unknown[0]} is not a shipped report; use one of "
                     + ", ".join(f"{g}:{p}" for g, p in SHIPPED_REPORTS))

    for game_name, preset in SHIPPED_REPORTS:
        if (args.only and game_name != args.only) or f"{game_name}:{preset}" in args.skip:
            continue
        cls = game_class(game_name)
        game = cls.from_params(cls.presets[preset])
        t0 = time.perf_counter()
        sol = solve(game, out=args.out, progress=sys.stderr.isatty(), sweep=False,
                    bound_rounds=BOUND_ROUNDS.get((game_name, preset)))
        path = write_report(sol, args.reports / game.name / game.variant.variant_id())
        print(f"{game.variant.label()}: {path} ({time.perf_counter() - t0:.1f} s)", flush=True)
    for game_name, fixed, vary in SHIPPED_SWEEPS:
        if args.only and game_name != args.only:
            continue
        path, table = run_sweep(game_name, fixed, vary, out=args.out, reports_root=args.reports,
                                bound_rounds=SWEEP_BOUND_ROUNDS.get(game_name))
        print(format_table(table))
        print(f"sweep report: {path}", flush=True)
    if args.estimates:
        from solver.cli import main as pyramids

        for command in SHIPPED_ESTIMATES:
            if args.only and command[1] != args.only:
                continue
            command, note = gate_command(command, args.out)
            if note:
                print(note, flush=True)
            extra = ["--reports", str(args.reports)]
            if command[0] == "calibrate" and args.out is not None:
                extra += ["--out", str(args.out)]
            if command[0] == "estimate":
                extra += ["--jobs", str(args.jobs)]
            print("pyramids " + " ".join(command + extra), flush=True)
            code = pyramids(command + extra)
            if code:
                return code
    return 0


if __name__ == "__main__":
    sys.exit(main())
