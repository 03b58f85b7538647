"""The ``pyramids`` command: list games, solve variants, show positions, play, report, tune.

Every error a user can cause is printed as one line (``error: ...``) with the fix, exit code 2.
"""

from __future__ import annotations

import dataclasses
import argparse
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from solver.errors import PyramidsError

EPILOG = """examples:
  pyramids list
  pyramids check override --preset 3x3
  pyramids serve                      # the explorer at http://127.0.0.1:8765/
  pyramids solve override --set size=3 --set line=3 --set per_size=1
  pyramids show override --preset 3x3 --moves "AL@a1 BL@c3" --json
  pyramids play override --preset 3x3 --side 2
  pyramids report override --preset 3x3
  pyramids verify petal --preset 6           # re-prove a stored table from the rules
  pyramids tune override --set size=3 --set line=3 --vary per_size=1,2 --vary centre_rule=on,off
  pyramids solve greener --preset 3x4 --jobs 2       # one task per batch of setups, on Dask
  pyramids status greener --set rows=4 --set cols=4 --set black=4 --set white=4 --set setup=all
"""


#: about 400 bytes per position at peak: this many fits in 24 GB with room to spare
DEFAULT_MAX_POSITIONS = 40_000_000


def _number(text: str) -> float:
    """``--tol``: any float text; range checks happen in :func:`solver.api.check_tol`."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number (e.g. 1e-12)") from None


def _folder(text: str) -> Path:
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty folder name; give a folder, e.g. tables")
    return Path(text)


def one_line(message: str) -> str:
    """A message as one printable line: control characters a user typed (newlines, carriage
    returns, ...) are shown escaped instead of breaking the line."""
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in str(message))


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (what is wrong and where the help is), exit 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, one_line(f"error: {message} (see `{self.prog} --help`)") + "\n")


def _game_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("game", nargs="?", help="game name (see `pyramids list`)")
    p.add_argument("--game", dest="game_path", metavar="MODULE:CLASS",
                   help="a game of your own by import path instead of a name, e.g. "
                        "--game mypkg.games:MyGame (see the README, 'Your own game')")
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="NAME=VALUE",
                   help="set a variant parameter (repeatable); unset ones take their defaults")
    p.add_argument("--preset", help="start from a named small preset (see `pyramids list GAME`); "
                                     "--set values override it")


def _variant_args(p: argparse.ArgumentParser) -> None:
    _game_args(p)
    p.add_argument("--out", type=_folder, default=None,
                   help="root folder of the tables (default: tables/)")
    p.add_argument("--no-symmetry", action="store_true",
                   help="store every position instead of one per symmetry class")
    p.add_argument("--max-positions", type=int, default=None,
                   help="stop with a clear error beyond this many positions when a solve is needed "
                        f"(default {DEFAULT_MAX_POSITIONS:,}, about what 24 GB of memory holds; no "
                        "limit for a tiered solve; in a sweep of setups, the most one task may reach, none "
                        "by default; 0 = no limit)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="pyramids",
        description="Solve Looney Pyramids games exactly and report on their balance.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("list", help="games, their parameters, defaults and presets")
    p.add_argument("game", nargs="?", help="show only this game")

    p = sub.add_parser("check", help="the self-check: every game-protocol rule, on the positions "
                                     "reachable from the start and on random games")
    _game_args(p)
    p.add_argument("--positions", type=int, default=20_000, metavar="N",
                   help="check up to N positions breadth first from the start; a variant with no "
                        "more is checked exhaustively (default %(default)s)")
    p.add_argument("--playouts", type=int, default=20, metavar="N",
                   help="random games played to the end, checking every position (default %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random games (default %(default)s)")
    p.add_argument("--json", action="store_true", help="print one JSON object")

    p = sub.add_parser("solve", help="solve a variant and write its Parquet table")
    _variant_args(p)
    p.add_argument("--force", action="store_true", help="solve again even if the table exists")
    p.add_argument("--tol", type=_number, default=1e-12,
                   help="value-iteration tolerance (chance games), above 0 and at most 1e-3 "
                        "(default %(default)s); a table solved at a looser one is not reused")
    p.add_argument("--max-sweeps", type=int, default=None, metavar="N",
                   help="sweep limit of value iteration (default 100,000; 2,000 for games with secret "
                        "simultaneous choices, whose values can converge slowly); a solve stopped by it "
                        "is stored as not certified")
    p.add_argument("--bound-rounds", type=int, default=None, metavar="N",
                   help="secret simultaneous choices: rounds of better strategies tried to narrow the "
                        "proven interval [value_lo, value_hi] of every position (each player's strategy "
                        "against the other's exact best reply; certified when every interval is at "
                        "most 1e-9 wide). Default 4; 0 proves with value iteration's strategies only; "
                        "a table that stopped at fewer rounds is solved again. Round by round (--tiered) "
                        "the bounds are the game cut off as a loss and as a win for player 1 after N "
                        "rounds at most (each a sweep; default 100, fewer where they converge first; "
                        "the same command resumes with a larger N)")
    p.add_argument("--no-bounds", action="store_true",
                   help="secret simultaneous choices: skip the proven bounds (faster; the table then "
                        "holds value iteration's iterate, which proves nothing; round by round: two "
                        "more value iterations skipped)")
    tier = p.add_mutually_exclusive_group()
    tier.add_argument("--tiered", dest="tiered", action="store_true", default=None,
                      help="solve tier by tier, out of core (games that name tiers); resumes an "
                           "unfinished tiered solve. A random setup (setup=all): every setup's "
                           "positions together, instead of a sweep. Secret choices (Petal Battle): "
                           "round by round from the keys, a table file a round phase, resumable after "
                           "every sweep. Default: tiered for the presets too large for the whole-graph "
                           "solver")
    tier.add_argument("--no-tiered", dest="tiered", action="store_false",
                      help="solve the whole graph in memory")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="threads solving independent tiers (and expanding positions) at once "
                        "(default: up to 2)")
    memory_mode = p.add_mutually_exclusive_group()
    memory_mode.add_argument("--low-memory", dest="low_memory", action="store_true", default=None,
                             help="tiered: solve every tier by repeated passes over its positions instead "
                                  "of reverse lists of its moves (about 24 bytes per position of the largest "
                                  "tier instead of 100-150). Default: passes in games without margins "
                                  "(Override: measured as fast), lists where they fit in scored games")
    memory_mode.add_argument("--lists", dest="low_memory", action="store_false", default=None,
                             help="tiered: solve every tier with reverse lists of its moves (100-150 bytes per "
                                  "position of the largest tier; 240 in scored games), the faster mode on "
                                  "small variants")
    p.add_argument("--tier-slices", dest="tier_slices", type=int, default=1, metavar="N",
                   help="tiered: cut each tier into N slices of about equal size (by a hash of the "
                        "position), solved apart: the largest task holds an N-th of the largest "
                        "tier's memory (on Dask, N tasks). Games whose every move leaves its tier "
                        "(greener); the table is the same. Default 1")
    p.add_argument("--ignore-estimate", action="store_true",
                   help="tiered: start even when the size estimate does not fit this machine's free "
                        "memory or disk")
    tasks = p.add_argument_group(
        "tasks on Dask", "random-setup games (setup=all) solved one batch of setup classes per task, "
        "resumable; tiered solves' tiers of one height as tasks. Needs the [cluster] extra")
    tasks.add_argument("--jobs", type=int, default=None, metavar="N",
                       help="run the tasks on a local Dask cluster of N processes (default for a sweep: "
                            "up to 2)")
    tasks.add_argument("--scheduler", default=None, metavar="ADDRESS",
                       help="run the tasks on an existing Dask cluster, e.g. tcp://host:8786 (its "
                            "workers need this toolkit's version; tiered solves also a shared --out)")
    tasks.add_argument("--setup-limit", type=int, default=None, metavar="N",
                       help="solve at most N more setup classes (a resumable slice of a fixed random "
                            "order), then write the partial table")
    tasks.add_argument("--batch", type=int, default=None, metavar="N",
                       help="setup classes per task (default: sized to about 20 s a task)")
    p.add_argument("--quiet", action="store_true",
                   help="no progress bars (standard error not a terminal: no progress line every 10 s)")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object")

    p = sub.add_parser("status", help="how far a solve has got: setup classes (or tiers) done and "
                                      "left, time left")
    _variant_args(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")

    p = sub.add_parser("verify", help="check a stored table against the rules: positions enumerated "
                                      "again, every value against its children, proven bounds re-proven "
                                      "from their stored strategies",
                       description="Check the stored table of a variant against its rules alone, without "
                                   "solving: the positions are enumerated again and must be the table's; "
                                   "values, remoteness and margins are checked against their children's "
                                   "(tier by tier for tiered tables), random setups' and dice tables' "
                                   "expected results against their outcomes', and secret-choice tables' "
                                   "proven intervals are proven again from their stored proving strategies. "
                                   "Exit 0: verified; 1: problems found (one line each); 2: no table, or a "
                                   "kind not covered (3-4 players, round-by-round tables).")
    _game_args(p)
    p.add_argument("--out", type=_folder, default=None, help="root folder of the tables (default: tables/)")
    p.add_argument("--no-symmetry", action="store_true", help="the table that stores every position")
    p.add_argument("--quiet", action="store_true", help="no progress on standard error")
    p.add_argument("--json", action="store_true", help="print one JSON object")

    p = sub.add_parser("estimate", help="ESTIMATED balance by self-play (any size, full-size games "
                                        "included): the first player's results with 95%% intervals")
    _game_args(p)
    _player_args(p)
    p.add_argument("--games", type=int, default=200, help="self-play games (default %(default)s)")
    p.add_argument("--compare-budget", type=int, action="append", default=[], metavar="N",
                   help="mcts: also play the same games with N playouts a move (repeatable); the report "
                        "shows how the verdict moves with the player's strength, budgets side by side")
    p.add_argument("--compare-depth", type=int, action="append", default=[], metavar="N",
                   help="alphabeta: also play the same games searching N plies deep (repeatable); the report "
                        "shows the depths side by side, as --compare-budget does for mcts")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, metavar="N",
                   help="worker processes (the results do not depend on it; default: one per core, %(default)s here)")
    p.add_argument("--reports", type=_folder, default=Path("reports"),
                   help="root folder of the reports (default: reports/)")
    p.add_argument("--work", type=_folder, default=None, metavar="DIR",
                   help="keep every finished game in DIR as it ends (a file per estimate): the same "
                        "command after a stop plays only the games not kept, and more --games add to "
                        "them (game i is the same in every run)")
    p.add_argument("--no-report", action="store_true", help="print the summary only")
    p.add_argument("--json", action="store_true", help="print one JSON object")

    p = sub.add_parser("calibrate", help="a player's strength against an exactly solved variant: how "
                                         "often its moves keep the exact value")
    _variant_args(p)
    _player_args(p)
    p.add_argument("--games", type=int, default=20, help="self-play games (default %(default)s)")
    p.add_argument("--reports", type=_folder, default=Path("reports"),
                   help="where the calibration is kept for estimate reports to quote "
                        "(<reports>/<game>/calibrations/; default: reports/)")
    p.add_argument("--json", action="store_true", help="print one JSON object")

    p = sub.add_parser("show", help="a position's value and every move's value, best first")
    _variant_args(p)
    p.add_argument("--moves", default="", help='moves from the start, space-separated, e.g. "AL@a1 BL@c3" '
                                               '(comma-separated when a move name has spaces)')
    p.add_argument("--line", action="store_true",
                   help="also the principal variation: the perfect-play game from this position to "
                        "its end, move by move (chance: the most likely roll, marked)")
    p.add_argument("--svg", type=str, default=None, metavar="FILE",
                   help="also write the position as a picture (SVG) to FILE")
    p.add_argument("--all-moves", action="store_true",
                   help="list every move on its own line (by default, moves that lead to the same "
                        "position up to symmetry are one line: 'AS@a1 (and 3 symmetric moves)')")
    p.add_argument("--json", action="store_true", help="print one JSON object")

    p = sub.add_parser("play", help="play in the terminal against perfect play")
    _variant_args(p)
    p.add_argument("--side", type=int, choices=[1, 2], default=None,
                   help="your seat (1 moves first); asked when not given")
    p.add_argument("--seed", type=int, default=None, help="seed of the dice / random setups")

    p = sub.add_parser("serve", help="the explorer: a local web page to walk the game tree of every "
                                     "solved variant")
    p.add_argument("--port", type=int, default=8765, help="port to listen on (default %(default)s)")
    p.add_argument("--tables", type=_folder, default=Path("tables"),
                   help="root folder of the solved tables (default: tables/)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to bind (default 127.0.0.1: this machine only)")

    p = sub.add_parser("report", help="write the balance report of a variant (solves it if needed)")
    _variant_args(p)
    p.add_argument("--reports", type=_folder, default=Path("reports"),
                   help="root folder of the reports (default: reports/)")
    _exact_limit_arg(p)

    p = sub.add_parser("tune", help="solve a sweep of variants and compare them side by side")
    _variant_args(p)
    p.add_argument("--vary", action="append", default=[], metavar="NAME=V1,V2,...",
                   help="a parameter to sweep and its values (repeatable: all combinations)")
    p.add_argument("--reports", type=_folder, default=Path("reports"),
                   help="root folder of the reports (default: reports/)")
    p.add_argument("--bound-rounds", type=int, default=None, metavar="N",
                   help="secret simultaneous choices: rounds of better strategies for each variant's "
                        "proven intervals, as for solve (default 4; a table that stopped at fewer "
                        "rounds is solved again)")
    _exact_limit_arg(p)
    est = p.add_argument_group("estimated sweeps", "--estimate compares the variants by self-play "
                               "(full-size boards) instead of solving them")
    est.add_argument("--estimate", action="store_true",
                     help="estimate each variant by self-play (ESTIMATED, with 95%% intervals)")
    est.add_argument("--games", type=int, default=200, help="self-play games per variant (default %(default)s)")
    est.add_argument("--jobs", type=int, default=os.cpu_count() or 1, metavar="N",
                     help="worker processes for --estimate (the results do not depend on it; "
                          "default: one per core, %(default)s here)")
    _player_args(est)
    return parser


def _player_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--player", default="greedy",
                   help="both seats' player: random, greedy, alphabeta, mcts (default %(default)s: "
                        "the fastest that looks ahead; mcts is the strongest but slow at full size)")
    p.add_argument("--player1", default=None, help="the first seat's player (default --player)")
    p.add_argument("--player2", default=None, help="the other seats' player (default --player)")
    p.add_argument("--budget", type=int, default=None, help="mcts: playouts per move (default 2000)")
    p.add_argument("--depth", type=int, default=None, help="alphabeta: search depth (default 3)")
    p.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                   help="any other player option (repeatable), e.g. --option playout_moves=30, "
                        "--option c=1.0, --option simultaneous=uniform, --option playouts=rules, --option solver=off, "
                        "--option time_limit=2; "
                        "it goes to every chosen player that has it")
    p.add_argument("--option1", action="append", default=[], metavar="NAME=VALUE",
                   help="an option of the first seat's player only (repeatable; over --option), e.g. "
                        "--option1 evaluation=race")
    p.add_argument("--option2", action="append", default=[], metavar="NAME=VALUE",
                   help="an option of the other seats' player only (repeatable; over --option)")
    p.add_argument("--seed", type=int, default=0, help="seed of the games (default %(default)s)")
    p.add_argument("--max-moves", type=int, default=500, metavar="N",
                   help="a game still running after N choices counts as unfinished (default %(default)s)")


def _players_of(args: argparse.Namespace):
    """The two players the options name (``--budget`` goes to mcts, ``--depth`` to alphabeta;
    an option no chosen player takes is refused in one line)."""
    from solver.errors import VariantError
    from solver.players import make_player, player_names, player_options

    names = [args.player1 or args.player, args.player2 or args.player]
    for n in names:
        if n not in player_names():
            raise VariantError(f"unknown player {n!r}; players: {', '.join(player_names())}")
    def parse(flag: str, items: list[str]) -> dict[str, object]:
        out: dict[str, object] = {}
        for item in items:
            name, eq, value = str(item).partition("=")
            name = name.strip().replace("-", "_")
            if not eq or not name or not value.strip():
                raise VariantError(f"{flag} {item!r} must be NAME=VALUE, e.g. {flag} playout_moves=30")
            if name in ("budget", "depth"):
                raise VariantError(f"use --{name} {value.strip()} instead of {flag} {item}")
            out[name] = value.strip()
        return out

    given: dict[str, object] = {"budget": args.budget, "depth": args.depth,
                                **parse("--option", getattr(args, "option", None) or [])}
    seat_given = [parse(f"--option{i}", getattr(args, f"option{i}", None) or []) for i in (1, 2)]
    for i, (n, own) in enumerate(zip(names, seat_given), 1):
        for opt in own:
            if opt not in player_options(n):
                raise VariantError(f"--option{i} {opt}: seat {i}'s player {n} has no option {opt!r}; "
                                   f"its options: {', '.join(player_options(n)) or 'none'}")
    for opt, v in given.items():
        if v is not None and not any(opt in player_options(n) for n in names):
            takes = [n for n in player_names() if opt in player_options(n)]
            what = f"--{opt}" if opt in ("budget", "depth") else f"--option {opt}"
            if not takes:
                raise VariantError(f"{what}: no player has that option; options: " + "; ".join(
                    f"{n}: {', '.join(player_options(n)) or 'none'}" for n in player_names()))
            raise VariantError(f"{what} is an option of {', '.join(takes)}; the players here are "
                               f"{' and '.join(sorted(set(names)))}")
    if args.max_moves < 1:
        raise VariantError(f"--max-moves {args.max_moves} must be at least 1")
    if args.games < 1:
        raise VariantError(f"--games {args.games} must be at least 1")
    if getattr(args, "jobs", 1) < 1:
        raise VariantError(f"--jobs {args.jobs} must be at least 1")
    return [make_player(n, **{k: v for k, v in {**given, **own}.items() if v is not None and k in player_options(n)})
            for n, own in zip(names, seat_given)]


def _exact_limit_arg(p: argparse.ArgumentParser) -> None:
    from analysis import EXACT_LIMIT

    p.add_argument("--exact-limit", type=int, default=EXACT_LIMIT, metavar="N",
                   help="random-play statistics are exact (absorbing Markov chain) up to N positions "
                        "and simulated (20,000 seeded games) beyond (default %(default)s)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error (2), already printed in one line
        return int(exc.code or 0)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # what reports quote as the command
    if not args.command:
        parser.print_help()
        return 0
    try:
        _resolve_game(args)
        _check_args(args)
        return COMMANDS[args.command](args)
    except PyramidsError as exc:
        print(one_line(f"error: {exc}"), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted; nothing half-written was left behind", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:  # disk full, permissions, a folder vanished: one line, never a traceback
        where = f": {exc.filename}" if getattr(exc, "filename", None) else ""
        print(one_line(f"error: {exc.strerror or exc}{where}; free space or pick another --out/--reports "
                       "folder"), file=sys.stderr)
        return 2
    except MemoryError:
        print("error: out of memory; pick a smaller variant or lower --max-positions", file=sys.stderr)
        return 2


def _resolve_game(args: argparse.Namespace) -> None:
    """``GAME`` or ``--game MODULE:CLASS``: exactly one of them names the game."""
    from solver.errors import VariantError

    if not hasattr(args, "game_path"):
        return
    if args.game_path is not None:
        if args.game is not None:
            raise VariantError(f"give the game either as a name ({args.game!r}) or as --game "
                               f"{args.game_path}, not both")
        args.game = args.game_path
    elif args.game is None:
        raise VariantError(f"which game? give its name (see `pyramids list`) or --game module:Class, "
                           f"e.g. pyramids {args.command} override --preset 3x3")


def _check_args(args: argparse.Namespace) -> None:
    """Refuse bad option values before any work starts (one line each)."""
    from solver.api import check_tol
    from solver.errors import VariantError
    from solver.tables import check_file_path, check_writable

    if getattr(args, "exact_limit", 0) < 0:
        raise VariantError(f"--exact-limit {args.exact_limit} is negative; give a number of positions")
    if getattr(args, "max_positions", 0) is not None and getattr(args, "max_positions", 0) < 0:
        raise VariantError(f"--max-positions {args.max_positions} is negative; give a count, or 0 for no limit")
    if hasattr(args, "tol"):
        check_tol(args.tol)
    if getattr(args, "out", None) is not None:
        check_writable(args.out, "--out")
    if hasattr(args, "reports"):
        check_writable(args.reports, "--reports")
    if getattr(args, "svg", None) is not None:
        check_file_path(args.svg, "--svg", "board.svg")


# --- helpers ---------------------------------------------------------------------------------

def _game(args: argparse.Namespace):
    from solver.core.variant import parse_assignments
    from solver.errors import VariantError
    from solver.games import game_class

    cls = game_class(args.game)
    params: dict[str, Any] = {}
    if args.preset:
        if args.preset not in cls.presets:
            names = ", ".join(cls.presets) or "none"
            raise VariantError(f"{args.game} has no preset {args.preset!r}; presets: {names}")
        params.update(cls.presets[args.preset])
    params.update(parse_assignments(args.sets))
    game = cls.from_params(params)
    for w in game.warnings:
        print(one_line(f"warning: {w}"), file=sys.stderr)
    return game


def _solution(args: argparse.Namespace, game, *, progress: bool = True, **kw: Any):
    """The solution ``solve`` gives; a table on disk is used as it is (``resume=False``) unless
    ``kw`` says otherwise (the ``solve`` command resumes an unfinished work folder)."""
    from solver.api import solve

    kw.setdefault("resume", False)
    notes: list[str] = []
    try:
        return solve(game, out=args.out, symmetry=not args.no_symmetry,
                     max_positions=_max_positions(args, game, kw.get("tiered")),
                     progress=_progress(progress), notes=notes, sweep=False, **kw)
    finally:
        for note in notes:
            print(one_line(f"note: {note}"), file=sys.stderr)


def _progress(show: bool = True) -> bool | str:
    """Progress on standard error: bars on a terminal, else a line every 10 s (for logs, CI,
    notebooks; :mod:`solver.core.progress`); nothing unless ``show`` (``--quiet``)."""
    from solver.core.progress import mode_for

    return mode_for(show)


def _max_positions(args: argparse.Namespace, game, tiered: bool | None = None) -> int | None:
    """The position limit: as given (0 = none), else the whole-graph default (none when tiered)."""
    from solver.api import want_tiered
    from solver.tables import variant_dir

    given = getattr(args, "max_positions", None)
    if given is not None:
        return given or None
    folder = variant_dir(game.name, game.variant.variant_id(), root=args.out,
                         symmetry=not getattr(args, "no_symmetry", False))
    return None if want_tiered(game, tiered, folder) else DEFAULT_MAX_POSITIONS


def split_moves(text: str) -> list[str]:
    """Moves from ``--moves``: comma-separated when there is a comma (for names with spaces,
    e.g. ``"plant rS@b2, pass"``), else space-separated."""
    if "," in text:
        return [m.strip() for m in text.split(",") if m.strip()]
    return text.split()


def _player(p: int) -> str:
    return f"player {p + 1}"


# --- commands --------------------------------------------------------------------------------

def cmd_list(args: argparse.Namespace) -> int:
    from solver.core.game import Game
    from solver.games import GameEntry, game_class, list_games
    from solver.pipeline import measured, roundwise

    if args.game:
        entries = [GameEntry(args.game, "", game_class(args.game), None)]  # unknown: one-line error
    else:
        entries = list_games()
    for entry in entries:
        cls = entry.cls
        origin = f" [{entry.origin}]" if entry.origin.startswith("plug-in") else ""
        if cls is None:
            print(one_line(f"{entry.name}: (broken{origin}) {entry.error}"))
            print()
            continue
        print(f"{entry.name}: {cls.title}{origin}")
        for p in cls.params:
            assign = f"{p.name}={p.format(p.default)}"
            print(f"  --set {assign:<22} {p.describe_type():<22} {p.help}")
        if cls.presets:
            print("  presets:")
            for pname, values in cls.presets.items():
                sets = " ".join(f"--set {k}={v}" for k, v in values.items())
                print(f"    --preset {pname:<8} = {sets}")
                large = measured.too_large(entry.name, pname)
                if large is None and cls.known_large is not Game.known_large:
                    # not measured: the game's own formula, and what the rounds would take
                    game = cls.from_params(values)
                    formula, n = game.known_large(), game.estimated_positions()
                    if formula is not None:
                        how = (f"; {roundwise.needs(n)}" if n and cls.secret_choices and cls.has_round_phases
                               else "")
                        print(f"      (too large for the whole-graph solver here: {formula}{how})")
                elif large is not None:
                    how = "; solved tier by tier, out of core" if cls.has_tiers else ""
                    if cls.has_tiers:
                        how = _tiered_fit(cls, values) or how
                    print(f"      (too large for the whole-graph solver here: {large}{how})")
        print()
    return 0


def _tiered_fit(cls: Any, values: dict[str, Any]) -> str | None:
    """For ``pyramids list``: why a preset does not fit the tiered solver on this machine either
    (its measured tier sizes against the free memory), else ``None``."""
    from solver.pipeline import measured
    from solver.pipeline.memory import available_memory
    from solver.pipeline.tiered import planned_estimate

    game = cls.from_params(values)
    entry = measured.of_game(game)
    if entry is not None and entry.not_here:
        return f"; tier by tier not expected to finish here either: {entry.not_here}"
    mem = available_memory()
    est = planned_estimate(game, mem)  # passes when the move lists do not fit
    if est is None or mem is None or est["memory"] <= mem:
        return None
    least = "at least " if est.get("at_least") else ""
    return (f"; tier by tier too large here as well: its largest tier ({least}{est['largest_tier']:,} "
            f"positions, measured) needs {least}{est['memory'] / 2**30:.0f} GB, {mem / 2**30:.0f} GB is free")


def cmd_check(args: argparse.Namespace) -> int:
    from solver.core.selfcheck import check_game
    from solver.errors import VariantError

    if args.positions < 1 or args.playouts < 0:
        raise VariantError("--positions must be at least 1 and --playouts at least 0")
    game = _game(args)
    quiet = args.json or not sys.stderr.isatty()
    if not quiet:
        print(f"checking {game.variant.label()}: up to {args.positions:,} positions from the start, "
              f"{args.playouts} random games", file=sys.stderr)

    def progress(n: int) -> None:
        if not quiet:
            print(f"\r  {n:,} positions checked", end="", file=sys.stderr, flush=True)

    t0 = time.perf_counter()
    res = check_game(game, playouts=args.playouts, positions=args.positions, seed=args.seed,
                     progress=progress)
    wall = time.perf_counter() - t0
    if not quiet:
        print(file=sys.stderr)
    scope = ("every position reachable from the start" if res.exhaustive
             else "not exhaustive: raise --positions to check more")
    if args.json:
        print(json.dumps({
            "game": game.name, "variant": game.variant.label(), "ok": res.ok,
            "positions": res.positions, "from_start": res.from_start, "exhaustive": res.exhaustive, "playouts": res.playouts,
            "expand_checked": res.expand_checked, "ranking_checked": res.ranking_checked, "seconds": round(wall, 3),
            "problems": [{"rule": p.rule, "message": p.message, "key": p.key, "position": p.position,
                          "count": res.counts.get(p.rule, 1)} for p in res.problems],
        }))
        return 0 if res.ok else 1
    for p in res.problems:
        count = res.counts.get(p.rule, 1)
        more = f" [{count:,} positions]" if count > 1 else ""
        print(one_line(f"problem: {p}{more}"))
    batch = (f"; the batch expand agrees with the rules on {res.expand_checked:,} of them"
             if res.expand_checked and not any(p.rule == "expand" for p in res.problems) else "")
    if res.ranking_checked and not any(p.rule == "ranking" for p in res.problems):
        batch += f"; the ranking of their tiers is a bijection on {res.ranking_checked:,} of them"
    verdict = "ok" if res.ok else f"{len(res.problems)} protocol rule(s) broken"
    deep = res.positions - res.from_start
    games = f"{res.playouts} random game{'s' if res.playouts != 1 else ''}"
    played = (f" and {deep:,} more along {games}" if deep
              else f", {games} (no new positions)" if res.playouts else "")
    print(f"{verdict}: {res.from_start:,} positions checked from the start ({scope}){played}"
          f"{batch}; {wall:.1f} s")
    return 0 if res.ok else 1


def cmd_serve(args: argparse.Namespace) -> int:
    from analysis.explorer import serve
    from solver.errors import VariantError

    if not 0 < args.port < 65536:
        raise VariantError(f"--port {args.port} is not a port number (1-65535)")
    serve(port=args.port, tables=args.tables, host=args.host)
    return 0


def cmd_sweep(args: argparse.Namespace, game) -> int:
    """``pyramids solve`` of a variant routed to a setup sweep (:func:`solver.pipeline.route.route`)."""
    from solver.api import solve
    from solver.pipeline import tasks

    import signal

    def _stop(signum, frame):  # a batch system's SIGTERM ends a sweep as Ctrl-C does: rows kept
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _stop)
    t0 = time.perf_counter()
    notes: list[str] = []
    say = lambda line: print(one_line(f"note: {line}"), file=sys.stderr, flush=True)  # noqa: E731
    try:
        res = solve(game, out=args.out, symmetry=not args.no_symmetry, force=args.force, sweep=True,
                    tiered=args.tiered, workers=args.workers, tier_slices=args.tier_slices,
                    setup_limit=args.setup_limit, jobs=args.jobs, scheduler=args.scheduler,
                    batch=args.batch, progress=_progress(not args.quiet), notes=notes, announce=say,
                    max_positions=args.max_positions or None)  # per task, when given
    finally:
        for note in notes:
            say(note)
    status = tasks.sweep_status(game, out=args.out, symmetry=not args.no_symmetry)
    status.update({"game": game.name, "variant": game.variant.as_text(), "label": game.variant.label(),
                   "solved_now": res.solved_now, "run_seconds": round(res.seconds, 3),
                   "wall_seconds": round(time.perf_counter() - t0, 3),
                   "table": str(tasks.sweep_dir(game, args.out, not args.no_symmetry) / "setups.parquet")})
    if args.json:
        print(json.dumps(status))
    else:
        print(format_sweep(status, game))
    return 0


def format_sweep(s: dict[str, Any], game) -> str:
    """A sweep's status as lines: classes done, time, and the exact summary or the estimate."""
    seat = game.seat_names[0] if getattr(game, "seat_names", None) else "player 1"
    lines = [s["label"]]
    state = "complete" if s["complete"] else "partial"
    lines.append(f"  sweep          {s['classes_done']:,} of {s['classes']:,} setup classes done "
                 f"({s['arrangements_done']:,} of {s['arrangements']:,} arrangements): {state}")
    if "solved_now" in s:
        lines.append(f"  this run       {s['solved_now']:,} setups in {s['run_seconds']:.1f} s")
    if s["seconds_per_class"] is not None:
        left = s["seconds_left"] or 0.0
        lines.append(f"  time           {s['seconds_per_class']:.3f} s per setup class (task time); "
                     f"left: {_duration(left)} on {s['workers']} worker(s), "
                     f"{s['machine_days_left']:.2f} worker-days")
    if s["complete"]:
        sh = s["summary"]["shares"]
        lines.append(f"  exact          {seat} (moves first) wins {sh['win']:.1%}, ties {sh['tie']:.1%}, "
                     f"loses {sh['lose']:.1%}" + (f", draws {sh['draw']:.1%}" if sh["draw"] else "")
                     + " of setups")
        lines.append(f"  expected result {s['summary']['expected']:+.4f} for {seat}")
        if s["summary"].get("expected_margin") is not None:
            lines.append(f"  expected margin {s['summary']['expected_margin']:+.4f} for {seat}")
    else:
        e = s["estimate"]
        if e["draws"]:
            parts = []
            for v in ("win", "tie", "lose", "draw"):
                if e["counts"][v] or v != "draw":
                    lo, hi = e["intervals"][v]
                    parts.append(f"{v}s {e['shares'][v]:.1%} [{lo:.1%}, {hi:.1%}]")
            lines.append(f"  ESTIMATED      {seat} (moves first) " + ", ".join(parts) + " of setups (95% "
                         f"Wilson intervals; a uniform sample of {e['draws']:,} arrangements, "
                         f"{e['classes_in_sample']:,} classes)")
        else:
            lines.append("  ESTIMATED      no estimate yet: the first setup of the order is not solved")
    if "table" in s:
        lines.append(f"  table          {s['table']}")
    return "\n".join(lines)


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 3 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def _tier_work(work: dict[str, Any]) -> str:
    """How far an unfinished tiered solve is (:func:`solver.pipeline.tiered.tier_progress`; with
    ``positions_expected``, the preset's measured count, the share discovered)."""
    found, expected = work["positions_discovered"], work.get("positions_expected")
    share = f" of {expected:,} measured, {100 * found / expected:.1f}%" if expected and found < expected else ""
    return (f"{work['tiers_discovered']:,} tiers discovered ({found:,} positions{share}), "
            f"{work['tiers_solved']:,} solved ({work['positions_solved']:,} positions)")


def cmd_status(args: argparse.Namespace) -> int:
    from solver.pipeline import tasks, tiered
    from solver.tables import POSITIONS, variant_dir

    game = _game(args)
    symmetry = not args.no_symmetry
    folder = variant_dir(game.name, game.variant.variant_id(), root=args.out, symmetry=symmetry)
    out: dict[str, Any] = {"game": game.name, "variant": game.variant.as_text(), "label": game.variant.label()}
    sweep = tasks.sweep_status(game, out=args.out, symmetry=symmetry) if tasks.sweepable(game) is None else None
    if sweep is not None:
        out.update(sweep)
        text = format_sweep(out, game)
        # setups being solved together, tier by tier: a sweep's batch (sweep/union) or every setup
        # (the variant's own tiered solve); nothing is claimed of them until they are finished
        for name, where in (("union", tasks.sweep_dir(game, args.out, symmetry) / tasks.UNION_DIR),
                            ("tiered", folder)):
            work = tiered.tier_progress(where)
            if work is not None:
                out[name] = work
                what = "a batch of setups together" if name == "union" else "every setup together"
                text += (f"\n  under way      {what}, tier by tier: {_tier_work(work)}; not in the estimate "
                         f"until finished\n  work folder    {work['folder']}")
        print(json.dumps(out) if args.json else text)
        return 0
    if (folder / POSITIONS).exists() or tiered.is_tiered(folder):
        out.update({"kind": "table", "complete": True, "folder": str(folder)})
        text = f"{game.variant.label()}\n  solved         table in {folder}"
    else:
        work = tiered.tier_progress(folder)
        if work is not None:
            work["positions_expected"] = tiered.expected_positions(game, symmetry)
            out.update({"kind": "tiered", "complete": False, **work})
            left = "" if work["seconds_left"] is None else f"; about {_duration(work['seconds_left'])} left"
            text = (f"{game.variant.label()}\n  tiered solve   {_tier_work(work)}{left}\n"
                    f"  work folder    {work['folder']}")
        else:
            out.update({"kind": None, "complete": False})
            text = f"{game.variant.label()}\n  not started    solve it with `pyramids solve`"
    print(json.dumps(out) if args.json else text)
    return 0


def cmd_estimate(args: argparse.Namespace) -> int:
    from solver.players.selfplay import estimate

    game = _game(args)
    p1, p2 = _players_of(args)
    others = _compared_players(args, p1, p2)
    est = estimate(game, p1, p2, games=args.games, seed=args.seed, jobs=args.jobs, max_moves=args.max_moves,
                   progress=_progress(), work=args.work)
    compared = [estimate(game, q1, q2, games=args.games, seed=args.seed, jobs=args.jobs, max_moves=args.max_moves,
                         progress=_progress(), work=args.work) for q1, q2 in others]
    report = None
    if not args.no_report:
        from analysis.estimate_report import estimate_dir, write_estimate_report

        folder = estimate_dir(args.reports, game, est, compared=[c.player1 + " " + c.player2 for c in compared])
        report = write_estimate_report(game, est, folder, command=_command(args), reports=args.reports,
                                       compared=compared)
    d = est.to_dict()
    d.update({"label": game.variant.label(), "variant": game.variant.as_text(), "estimated": True,
              "report": None if report is None else str(report)})
    if compared:
        d["strengths"] = [c.to_dict() for c in compared]
    if args.json:
        print(json.dumps(d))
        return 0
    seat = game.seat_names[0] if getattr(game, "seat_names", None) else "player 1"
    lines = [f"{game.variant.label()}: ESTIMATED by self-play ({est.games:,} games, {est.player1} vs "
             f"{est.player2}, seed {est.seed}; {est.games_per_second:.2f} games/s"
             + (f"; {est.kept_games:,} of them kept from an earlier run in {args.work}" if est.kept_games else "")
             + ")"]
    for k, label in (("win", "wins"), ("loss", "loses"), ("tie", "ties"), ("unfinished", "unfinished")):
        share, lo, hi = est.shares[k]
        if k in ("win", "loss") or est.counts()[k]:
            lines.append(f"  {seat} (first) {label:10} {share:6.1%}  95% interval [{lo:.1%}, {hi:.1%}]"
                         + (f" (cap {est.max_moves} choices)" if k == "unfinished" else ""))
    if est.mean_plies is not None:
        lines.append(f"  game length    {est.mean_plies:.1f} plies on average (sd {est.sd_plies:.1f})")
    if est.mean_margin is not None and est.margin_interval is not None:
        lo, hi = est.margin_interval
        lines.append(f"  score margin   {est.mean_margin:+.2f} for {seat} [{lo:+.2f}, {hi:+.2f}]")
    if est.openings:
        lines.append("  openings       " + ", ".join(
            f"{o.move} x{o.games} (wins {o.win_share:.0%})" for o in est.openings[:5]))
    for c in compared:
        share, lo, hi = c.shares["win"]
        lines.append(f"  compared       {c.player1} vs {c.player2}: {seat} (first) wins {share:.1%} "
                     f"[{lo:.1%}, {hi:.1%}], unfinished {c.shares['unfinished'][0]:.1%}")
    if report is not None:
        lines.append(f"  report         {report}")
    print("\n".join(lines))
    return 0


def _compared_players(args: argparse.Namespace, p1, p2) -> list[tuple]:
    """``--compare-budget N`` (``--compare-depth N``): the two players again with N playouts a
    move for every mcts seat (N plies deep for every alphabeta seat), each value once, the
    estimate's own left out; refused in one line for values below 1 or when no seat plays the
    player the option is for."""
    import dataclasses

    from solver.errors import VariantError
    from solver.players.alphabeta import AlphaBetaPlayer
    from solver.players.mcts import MCTSPlayer

    out: list[tuple] = []
    for option, kind, player, what, example in (("budget", MCTSPlayer, "mcts", "playouts a move", 100),
                                                ("depth", AlphaBetaPlayer, "alphabeta", "plies searched", 3)):
        values = list(dict.fromkeys(getattr(args, f"compare_{option}", None) or []))
        if not values:
            continue
        if not any(isinstance(p, kind) for p in (p1, p2)):
            raise VariantError(f"--compare-{option} is for {player} players; the players here are {p1.name} and "
                               f"{p2.name} (use --player {player})")
        for v in values:
            if v < 1:
                raise VariantError(f"--compare-{option} {v} must be at least 1 ({what}), e.g. --compare-{option} "
                                   f"{example}")

        def at(p, v, kind=kind, option=option):
            return dataclasses.replace(p, **{option: v}) if isinstance(p, kind) else p

        own = {getattr(p, option) for p in (p1, p2) if isinstance(p, kind)}
        out += [(at(p1, v), at(p2, v)) for v in values if {v} != own]
    return out


def _command(args: argparse.Namespace) -> str:
    """The command line that made a result (for reports): the arguments :func:`main` parsed, also
    when it was called from Python (``analysis.shipped``), not the calling program's own."""
    import shlex

    argv = getattr(args, "argv", None)
    argv = sys.argv[1:] if argv is None else argv
    return "pyramids " + " ".join(shlex.quote(a) for a in argv) if argv else "pyramids"


def cmd_calibrate(args: argparse.Namespace) -> int:
    from solver.players.selfplay import calibrate

    game = _game(args)
    if args.player2 or args.option2:
        from solver.errors import VariantError

        raise VariantError("calibrate plays one player in every seat: use --player and --option "
                           "(not --player2 or --option2)")
    p1, _ = _players_of(args)
    sol = _solution(args, game)
    cal = calibrate(game, p1, sol, games=args.games, seed=args.seed, max_moves=args.max_moves)
    from analysis.estimate_report import calibration_path

    path = calibration_path(args.reports, game, cal.player)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({**cal.to_dict(), "label": game.variant.label(), "command": _command(args)},
                               indent=1, sort_keys=True))
    if args.json:
        print(json.dumps({**cal.to_dict(), "label": game.variant.label(), "variant": game.variant.as_text()}))
    else:
        print(cal.summary())
    return 0


def cmd_solve(args: argparse.Namespace) -> int:
    game = _game(args)
    for name in ("jobs", "setup_limit", "batch"):
        v = getattr(args, name)
        if v is not None and (v < 1 if name != "setup_limit" else v < 0):
            from solver.errors import VariantError

            raise VariantError(f"--{name.replace('_', '-')} {v} must be at least {1 if name != 'setup_limit' else 0}")
    from solver.pipeline.route import route
    from solver.tables import variant_dir

    how = route(game, tiered=args.tiered,
                folder=variant_dir(game.name, game.variant.variant_id(), root=args.out,
                                   symmetry=not args.no_symmetry),
                sweep_options={k: getattr(args, k) for k in ("jobs", "scheduler", "setup_limit", "batch")})
    if how.kind == "sweep":
        return cmd_sweep(args, game)
    t0 = time.perf_counter()
    if args.max_sweeps is not None and args.max_sweeps < 1:
        from solver.errors import VariantError

        raise VariantError(f"--max-sweeps {args.max_sweeps} must be at least 1")
    if args.workers is not None and args.workers < 1:
        from solver.errors import VariantError

        raise VariantError(f"--workers {args.workers} must be at least 1")
    from solver.core.progress import session

    with session(_progress(not args.quiet)):
        sol = _solution(args, game, progress=not args.quiet, force=args.force, tol=args.tol,
                        max_sweeps=args.max_sweeps, tiered=args.tiered, workers=args.workers,
                        bounds=not args.no_bounds, bound_rounds=args.bound_rounds,
                        low_memory=args.low_memory, jobs=args.jobs, scheduler=args.scheduler,
                        check_estimate=not args.ignore_estimate, tier_slices=args.tier_slices, resume=True,
                        announce=lambda line: print(one_line(f"note: {line}"), file=sys.stderr, flush=True))
    wall = time.perf_counter() - t0
    summary = summarize(sol, wall)
    if args.json:
        print(json.dumps(summary))
    else:
        print(format_summary(summary))
    return 0


def summarize(sol, wall: float) -> dict[str, Any]:
    """The solve summary as a JSON-ready dict (numbers from the table and its metadata)."""
    meta = sol.meta
    counts = meta["counts"]
    reused = "write_seconds" not in meta
    root = sol.root
    out: dict[str, Any] = {
        "game": meta["game"],
        "variant": meta["variant"],
        "label": meta["label"],
        "positions": counts["positions"],
        "terminal": counts["terminal"],
        "edges": counts["edges"],
        "reused_table": reused,
        "solve_seconds": round(meta["solve_seconds"], 3),
        "wall_seconds": round(wall, 3),
        "positions_per_second": round(counts["positions"] / meta["solve_seconds"]) if meta["solve_seconds"] else None,
        "table": str(sol.path),
        "solver": meta.get("solver"),
        "start": {"to_move": root.to_move + 1, "value": root.value, "remoteness": root.remoteness,
                  "margin": root.margin, "expected": root.expected, "p_win": root.p_win,
                  "p_loss": root.p_loss},
    }
    if "by_value" in counts:
        out["by_value"] = counts["by_value"]
    if sol.stochastic and root.kind == "chance":
        state = sol.game.initial_state()
        out["arrangements"] = [
            {"outcome": m.move, "probability": m.probability, "expected": m.expected,
             "p_win": m.p_win, "p_loss": m.p_loss}
            for m in sol.moves(state)
        ]
    if "seats" in meta:
        out["question"] = meta["question"]
        out["seats"] = meta["seats"]
    for k in ("sweeps", "residual", "expected_result", "expected_margin", "certified",
              "not_certified_because", "error_estimate", "value_interval", "bounds", "payoffs",
              "payoff_scale", "win_probabilities"):
        if k in meta:
            out[k] = meta[k]
    if "value_interval" in meta:
        out["start"]["value_interval"] = meta["value_interval"]
    if sol.setups is not None:
        s = sol.setups
        n = s.height
        vc = {v: int(c) for v, c in zip(*[s["value"].value_counts()[c].to_list() for c in ("value", "count")])}
        w = s["multiplicity"].to_numpy() if s["multiplicity"].null_count() == 0 else None
        out["setups"] = {"classes": n, "arrangements": int(w.sum()) if w is not None else None,
                         "classes_by_value": vc}
        probs = s["probability"].to_numpy()
        vals = s["value"].to_numpy()
        out["setups"]["share"] = {v: float(probs[vals == v].sum()) for v in ("win", "tie", "lose", "draw")}
        if "margin" in s.columns:
            m = s["margin"].to_numpy()
            dist: dict[str, float] = {}
            for v in sorted(set(m.tolist())):
                dist[str(v)] = float(probs[m == v].sum())
            out["setups"]["margin_distribution"] = dist
    return out


def format_summary(s: dict[str, Any]) -> str:
    lines = [s["label"]]
    lines.append(f"  positions      {s['positions']:,} ({s['terminal']:,} terminal, {s['edges']:,} moves)")
    if "by_value" in s:
        bv = s["by_value"]
        lines.append("  side to move   " + "  ".join(f"{k} {bv[k]:,}" for k in ("win", "lose", "tie", "draw")))
    st = s["start"]
    who = f"player {st['to_move']}"
    if "seats" in s:
        lines.append(f"  per seat: {s['question']}")
        for seat, v in s["seats"].items():
            answer = {"win": "yes", "lose": "no", "draw": "no (endless play)", "tie": "no"}[v["value"]]
            rem = "" if v["remoteness"] is None else f" in {v['remoteness']} plies"
            margin = "" if v["margin"] is None else f", margin {v['margin']:+d}"
            lines.append(f"    seat {seat}: {answer} ({v['value']}{rem}{margin})")
    elif st["value"] is not None:
        rem = "" if st["remoteness"] is None else f" in {st['remoteness']} plies"
        lines.append(f"  start          {st['value']} for {who} (to move){rem}")
        if st["margin"] is not None:
            lines.append(f"  score margin   {st['margin']:+d} for {who} under margin-optimal play")
    elif "setups" in s:
        su = s["setups"]
        sh = su["share"]
        lines.append(f"  setups         {su['classes']:,} classes"
                     + (f" ({su['arrangements']:,} arrangements)" if su["arrangements"] else ""))
        lines.append(f"  {who} (to move first) wins {sh['win']:.1%}, ties {sh['tie']:.1%}, "
                     f"loses {sh['lose']:.1%}" + (f", draws {sh['draw']:.1%}" if sh["draw"] else "")
                     + " of setups")
        lines.append(f"  expected result {s.get('expected_result', 0):+.4f} for {who}")
        if "expected_margin" in s:
            lines.append(f"  expected margin {s['expected_margin']:+.4f} for {who}")
        if "margin_distribution" in su:
            dist = ", ".join(f"{k}: {v:.1%}" for k, v in su["margin_distribution"].items())
            lines.append(f"  margins        {dist}")
    else:
        if s.get("payoffs") == "real":  # the ends pay amounts: no win probability to speak of
            what, odds = "expected payoff", " (the ends pay real amounts, not win or loss)"
        else:
            what = "expected result"
            odds = (f"; wins {st['p_win']:.4%}, loses {st['p_loss']:.4%}" if st["p_win"] is not None
                    else f"; win probability {s['win_probabilities']}" if "win_probabilities" in s
                    else "; win probability not defined (no stationary strategy earns the value)")
        lines.append(f"  start          {what} {st['expected']:+.6f} for {who}{odds}")
        if "value_interval" in s:
            lo, hi = s["value_interval"]
            b = s["bounds"]
            how = (f"best replies to both players' strategies; {b['rounds']} rounds of better strategies"
                   if "rounds" in b else
                   f"the game cut off as a loss for player 1 after {b['sweeps_lower']} rounds, as a win after "
                   f"{b['sweeps_upper']}")
            lines.append(f"  proven         the value lies in [{lo:+.9f}, {hi:+.9f}] for {who} ({how}, "
                         f"{b['seconds']:.1f} s)")
    if "arrangements" in s and len(s["arrangements"]) > 1:
        lines.append(f"  per arrangement (player {st['to_move']}'s view):")
        for a in s["arrangements"][:50]:
            odds = (f"  wins {a['p_win']:.4%}  loses {a['p_loss']:.4%}" if a["p_win"] is not None else "")
            lines.append(f"    {a['outcome']:<20} p={a['probability']:.4f}  expected {a['expected']:+.6f}{odds}")
        if len(s["arrangements"]) > 50:
            lines.append(f"    ... {len(s['arrangements']) - 50} more (see --json)")
    if "sweeps" in s:
        lines.append(f"  value iteration {s['sweeps']} sweeps, residual {s['residual']:.2e}")
    if s.get("not_certified_because"):
        lines.append(f"  NOT certified   {s['not_certified_because']}")
    if s["reused_table"]:
        lines.append(f"  table          {s['table']} (reused; --force to solve again)")
    else:
        lines.append(f"  time           {s['solve_seconds']:.2f} s ({s['positions_per_second']:,} positions/s)")
        lines.append(f"  table          {s['table']}")
    return "\n".join(lines)


def _sweep_only(args: argparse.Namespace, game):
    """``(table, meta)`` of the variant's setup sweep when it has no whole table (a sweep stores
    one row per setup class, not every position); ``None`` otherwise."""
    from solver.pipeline import tasks, tiered
    from solver.tables import POSITIONS, variant_dir

    if tasks.sweepable(game) is not None:
        return None
    symmetry = not getattr(args, "no_symmetry", False)
    folder = variant_dir(game.name, game.variant.variant_id(), root=args.out, symmetry=symmetry)
    if (folder / POSITIONS).exists() or tiered.is_tiered(folder):
        return None
    return tasks.read_sweep(game, out=args.out, symmetry=symmetry)


def _show_sweep(args: argparse.Namespace, game, table, meta) -> int:
    import polars as pl

    from solver.errors import TableError

    moves = split_moves(args.moves)
    if not moves:
        from solver.pipeline import tasks

        status = tasks.sweep_status(game, out=args.out, symmetry=not args.no_symmetry)
        if args.json:
            print(json.dumps(status))
        else:
            print(format_sweep(status, game))
        return 0
    state = game.play(moves[:1])
    key = game.encode(game.canonical(state) if not args.no_symmetry else state)
    row = table.filter(pl.col("key") == key)
    if len(moves) > 1 or row.height == 0:
        why = ("this setup is not solved yet" if row.height == 0 and len(moves) == 1
               else "the sweep stores each setup's value, not the positions after it")
        raise TableError(f"{why}; solve the setup alone to explore it: pyramids solve {game.name} "
                         f"--set setup={game.describe_state(state)} (other --set as here)")
    r = row.row(0, named=True)
    seat = game.seat_names[0] if getattr(game, "seat_names", None) else "player 1"
    obj = {"game": game.name, "variant": game.variant.as_text(), "setup": r["layout"], "key": key,
           "value": r["value"], "remoteness": r["remoteness"], "view": seat,
           **({"margin": r["margin"]} if "margin" in r else {}), "multiplicity": r["multiplicity"],
           "probability": r["probability"]}
    if args.json:
        print(json.dumps(obj))
    else:
        margin = f", margin {r['margin']:+d}" if "margin" in r else ""
        print(f"{game.render(state)}\nsetup {r['layout']} (one of {r['multiplicity']} arrangements): "
              f"{r['value']} for {seat} (moves first) in {r['remoteness']} plies{margin}")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    game = _game(args)
    sweep = _sweep_only(args, game)
    if sweep is not None:
        return _show_sweep(args, game, *sweep)
    state = game.play(split_moves(args.moves))
    sol = _solution(args, game)
    pv = sol.lookup(state)
    moves = sol.moves(state)
    line, ending = sol.line(state) if args.line else ([], "")
    if args.svg is not None:
        from analysis.boards import write_svg

        write_svg(game.picture(state), args.svg, title=game.variant.label())
    if args.json:
        obj: dict[str, Any] = {
            "game": game.name,
            "variant": game.variant.as_text(),
            "position": game.render(state),
            "key": sol.key_of(state),
            "to_move": pv.to_move + 1,
            "kind": pv.kind,
            "value": pv.value,
            "remoteness": pv.remoteness,
            "moves": [_move_json(m) for m in moves],
        }
        if pv.margin is not None:
            obj["margin"] = pv.margin
        if pv.expected is not None:
            obj["expected"] = pv.expected
            obj["p_win"] = pv.p_win
            obj["p_loss"] = pv.p_loss
        if pv.payoff:
            obj["payoffs"] = "real"  # "expected" is an expected payoff; no win probabilities
        alike = sol.symmetric_moves(state, moves)
        if alike:
            obj["symmetric_moves"] = alike
        if pv.value_interval is not None:
            obj["value_interval"] = list(pv.value_interval)
            obj["certified"] = bool(sol.meta.get("certified"))
            if pv.proof is not None:
                obj["proving_strategies"] = pv.proof
        if pv.strategies is not None:
            obj["strategies"] = pv.strategies
            ranges = sol.strategy_ranges(state)
            if ranges is not None:
                obj["strategy_ranges"] = ranges
        if args.line:
            obj["line"] = [{**_move_json(st), "player": st.player + 1, "why": st.why} for st in line]
            obj["line_end"] = ending
        print(json.dumps(obj))
        return 0
    print(game.render(state))
    print(pv.describe())
    if pv.strategies is not None:
        print("optimal mixed strategies (secret simultaneous choice):")
        for p, mix in pv.strategies.items():
            print(f"  player {p}: " + "  ".join(f"{a} {x:.4f}" for a, x in mix.items()))
        ranges = sol.strategy_ranges(state)
        from solver.api import SAME_PROBABILITY as same

        if ranges is not None and any(hi - lo > same for r in ranges.values() for lo, hi in r.values()):
            print("  (one of many optimal mixes; over all of them each action's probability lies in:)")
            for p, r in ranges.items():
                print(f"  player {p}: " + "  ".join(
                    f"{a} {lo:.4f}" if hi - lo <= same else f"{a} {lo:.4f}-{hi:.4f}" for a, (lo, hi) in r.items()))
    if moves:
        print({"chance": "outcomes (probability, value for the side to move):",
               "simultaneous": "joint choices (player 1's/player 2's; probability under optimal play, "
                               "value for player " + str(pv.to_move + 1) + "):"}.get(
            pv.kind, "moves (value for the mover after playing it, best first):"))
        grouped = [(m, []) for m in moves] if args.all_moves else sol.move_groups(state, moves)
        hidden = len(moves) - len(grouped)
        for m, others in grouped:
            line_ = _describe_move(m)
            if others:
                k = len(others)
                label = f"{m.move} (and {k} symmetric move{'s' if k > 1 else ''})"
                line_ = _describe_move(dataclasses.replace(m, move=label))
            print("  " + line_)
        if hidden:
            print(f"  ({hidden} moves that lead to the same positions as others, up to symmetry, "
                  "are counted beside them; --all-moves lists every move)")
    if args.line:
        print(f"principal variation ({len(line)} plies; each move's value for its mover):")
        for i, st in enumerate(line, 1):
            note = "" if st.why == "best" else f"  ({st.why})"
            print(f"  {i:>3}. {_player(st.player)}: {_describe_move(st)}{note}")
        print({"game over": "  the game is over", "repeats": "  a position repeats: endless play (draw)",
               "limit": "  stopped after 500 plies"}[ending])
    return 0


def _move_json(m) -> dict[str, Any]:
    d: dict[str, Any] = {"move": m.move, "value": m.value, "remoteness": m.remoteness}
    if m.margin is not None:
        d["margin"] = m.margin
    if m.expected is not None:
        d["expected"] = m.expected
    if m.probability is not None:
        d["probability"] = m.probability
    return d


def _describe_move(m) -> str:
    if m.value is None:
        prob = f"p={m.probability:.4f}  " if m.probability is not None else ""
        return f"{m.move:<18} {prob}expected {m.expected:+.6f}"
    rem = "" if m.remoteness is None else f" {m.remoteness}"
    margin = "" if m.margin is None else f"  margin {m.margin:+d}"
    prob = f"  p={m.probability:.4f}" if m.probability is not None else ""
    return f"{m.move:<18} {m.value}{rem}{margin}{prob}"


def read_line(prompt: str = "") -> str:
    """``input()`` that Ctrl-C interrupts at once.

    Native thread pools (polars, numba) may receive SIGINT instead of the main thread; the main
    thread, blocked reading the terminal, would then notice only after Enter. Python's C-level
    handler writes to the wake-up file descriptor from whichever thread gets the signal, so
    waiting on that descriptor together with standard input sees Ctrl-C immediately.
    """
    import os
    import select
    import signal

    if not sys.stdin.isatty() or threading_main() is False:
        return input(prompt)
    print(prompt, end="", flush=True)
    r, w = os.pipe()
    os.set_blocking(w, False)
    old = signal.set_wakeup_fd(w)
    try:
        while True:
            ready, _, _ = select.select([sys.stdin, r], [], [])
            if r in ready:
                raise KeyboardInterrupt
            line = sys.stdin.readline()
            if not line:
                raise EOFError
            return line.rstrip("\n")
    finally:
        signal.set_wakeup_fd(old)
        os.close(r)
        os.close(w)


def threading_main() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def cmd_play(args: argparse.Namespace, input_fn=read_line, output=print) -> int:
    """Play against perfect play. End of input (Ctrl-D) ends the game with exit code 0, Ctrl-C
    with 130; both say goodbye in one line."""
    try:
        return _play(args, input_fn, output)
    except EOFError:
        output("")
        output("end of input: goodbye")
        return 0
    except KeyboardInterrupt:
        output("")
        output("interrupted: goodbye")
        return 130


def _play(args: argparse.Namespace, input_fn, output) -> int:
    from solver.core.game import NodeKind
    from solver.errors import IllegalMoveError

    game = _game(args)
    sol = _solution(args, game)
    rng = random.Random(args.seed)
    side = args.side
    while side is None:
        answer = input_fn("play as player 1 (moves first) or 2? [1/2] ").strip()
        if answer in ("1", "2"):
            side = int(answer)
        else:
            output("please answer 1 or 2")
    human = side - 1
    state = game.initial_state()
    output(f"{game.variant.label()}: you are player {side}; type a move, `moves` to list them, `quit` to stop")
    while True:
        kind = game.node_kind(state)
        output("")
        output(game.render(state))
        if kind == NodeKind.TERMINAL:
            out = game.outcome(state)
            res = out.results[human].name.lower()
            output(f"game over: you {'win' if res == 'win' else 'lose' if res == 'loss' else 'tie'}"
                   + (f" (scores {out.scores})" if out.scores else ""))
            return 0
        if kind == NodeKind.CHANCE:
            outcomes = game.chance_outcomes(state)
            r = rng.random()
            acc = 0.0
            action = outcomes[-1][0]
            for a, p in outcomes:
                acc += float(p)
                if r < acc:
                    action = a
                    break
            output(f"chance: {game.action_name(state, action)}")
            state = game.apply(state, action)
            continue
        if kind == NodeKind.SIMULTANEOUS:
            state = _play_simultaneous(game, sol, state, human, rng, input_fn, output)
            if state is None:
                return _quit(output)
            continue
        mover = game.to_move(state)
        if mover == human:
            text = input_fn("your move: ").strip()
            if text in ("quit", "exit", "q"):
                return _quit(output)
            if text in ("moves", "help", "?"):
                output("legal: " + " ".join(game.action_name(state, a) for a in game.legal_actions(state)))
                continue
            try:
                action = game.parse_action(state, text)
            except IllegalMoveError as exc:
                output(f"illegal: {exc}")
                continue
            state = game.apply(state, action)
        else:
            best = sol.moves(state)[0]
            output(f"computer plays {best.move}  ({_describe_move(best).split(None, 1)[1]})")
            state = game.apply(state, game.parse_action(state, best.move))


def _quit(output) -> int:
    """`quit` typed: end the prompt's line (a terminal has echoed the typed newline; piped input
    has not) and say goodbye, exit code 0."""
    if not sys.stdin.isatty():
        output("")
    output("quit: goodbye")
    return 0


def _play_simultaneous(game, sol, state, human: int, rng: random.Random, input_fn, output):
    """A secret simultaneous choice: ask the human's action, draw the computer's from its optimal
    mixed strategy (seeded by --seed), reveal both. ``None`` when the human quits."""
    from solver.errors import IllegalMoveError

    names = {p: [game.action_name(state, a) for a in game.player_actions(state, p)]
             for p in range(game.num_players)}
    while True:
        text = input_fn(f"your secret choice ({' '.join(names[human])}): ").strip()
        if text in ("quit", "exit", "q"):
            return None
        if text in ("moves", "help", "?"):
            output("legal: " + " ".join(names[human]))
            continue
        mine = [a for a, n in zip(game.player_actions(state, human), names[human]) if n.lower() == text.lower()]
        if not mine:
            try:  # the game's own parser explains what is wrong (e.g. not a permutation of S, M, L)
                joint_text = "/".join(text if p == human else names[p][0] for p in range(game.num_players))
                joint = game.parse_joint(state, joint_text)
                mine = [joint[human]]
            except IllegalMoveError as exc:
                output(f"illegal: {exc}")
                continue
        break
    mix = sol.lookup(state).strategies or {}
    joint = []
    for p in range(game.num_players):
        if p == human:
            joint.append(mine[0])
            continue
        acts = game.player_actions(state, p)
        weights = [mix.get(str(p + 1), {}).get(n, 0.0) for n in names[p]]
        if sum(weights) <= 0:
            weights = [1.0] * len(acts)
        joint.append(rng.choices(acts, weights)[0])
    shown = ", ".join(f"player {p + 1}: {game.action_name(state, a)}" for p, a in enumerate(joint))
    theirs = mix.get(str(2 - human), {})
    output(f"revealed: {shown}  (the computer drew from its optimal mix "
           + " ".join(f"{n} {x:.2f}" for n, x in theirs.items() if x > 0.0005) + ")")
    return game.apply_joint(state, tuple(joint))


def cmd_report(args: argparse.Namespace) -> int:
    from analysis.report import write_report

    game = _game(args)
    out_dir = args.reports / game.name / game.variant.variant_id()
    sweep = _sweep_only(args, game)
    if sweep is not None:
        from analysis.sweep_report import write_sweep_report

        path = write_sweep_report(game, sweep[0], sweep[1], out_dir)
        print(f"report written: {path} and {path.with_suffix('.html')} (from the setup sweep: "
              f"{sweep[1]['classes_done']:,} of {sweep[1]['classes']:,} setup classes"
              f"{'' if sweep[1]['complete'] else ', partial: estimated shares'})")
        return 0
    from solver.core.progress import session

    with session(_progress()):  # the lines count the time of the solve and the report together
        sol = _solution(args, game)
        path = write_report(sol, out_dir, exact_limit=args.exact_limit, progress=_progress())
    print(f"report written: {path} and {path.with_suffix('.html')}")
    return 0


def cmd_tune(args: argparse.Namespace) -> int:
    from analysis.tuning import format_table, run_sweep
    from solver.core.variant import parse_assignments
    from solver.errors import VariantError
    from solver.games import game_class

    cls = game_class(args.game)
    fixed: dict[str, Any] = {}
    if args.preset:
        if args.preset not in cls.presets:
            raise VariantError(f"{args.game} has no preset {args.preset!r}; presets: {', '.join(cls.presets)}")
        fixed.update({k: str(v) for k, v in cls.presets[args.preset].items()})
    fixed.update(parse_assignments(args.sets))
    if not args.vary:
        raise VariantError("tune needs at least one --vary NAME=V1,V2 (e.g. --vary per_size=1,2)")
    vary: dict[str, list[str]] = {}
    for name, values in parse_assignments(args.vary, option="--vary", example="per_size=1,2").items():
        vals = [v.strip() for v in values.split(",") if v.strip()]
        if not vals:
            raise VariantError(f"--vary {name}= needs at least one value, e.g. --vary {name}=1,2")
        vary[name] = vals
        fixed.pop(name, None)
    if args.estimate:
        return _tune_estimate(args, fixed, vary)
    notes: list[str] = []
    try:
        path, table = run_sweep(args.game, fixed, vary, out=args.out, reports_root=args.reports,
                                progress=_progress(), exact_limit=args.exact_limit,
                                max_positions=(DEFAULT_MAX_POSITIONS if args.max_positions is None
                                               else args.max_positions or None), notes=notes,
                                bound_rounds=args.bound_rounds)
    finally:
        for note in notes:
            print(one_line(f"note: {note}"), file=sys.stderr)
    print(format_table(table))
    print(f"report written: {path}")
    return 0


def _tune_estimate(args: argparse.Namespace, fixed: dict[str, Any], vary: dict[str, list[str]]) -> int:
    """``tune --estimate``: every combination estimated by self-play, side by side (all estimated)."""
    import itertools

    from analysis.estimate_report import write_estimate_sweep
    from solver.games import make_game
    from solver.players.selfplay import estimate

    p1, p2 = _players_of(args)
    names = list(vary)
    combos = list(itertools.product(*(vary[n] for n in names)))
    games = [make_game(args.game, {**fixed, **dict(zip(names, combo))}) for combo in combos]
    from solver.core.progress import Task

    results = []
    mode = _progress()
    with Task("tune", mode, total=len(games), unit="variants", note_first=True, bar=False) as task:
        for g, combo in zip(games, combos):
            if mode is True:
                print(f"estimating {g.variant.label()}", file=sys.stderr)
            task.update(note="estimating " + ", ".join(f"{n}={v}" for n, v in zip(names, combo)))
            results.append((g, estimate(g, p1, p2, games=args.games, seed=args.seed, jobs=args.jobs,
                                        max_moves=args.max_moves, progress=mode)))
            task.advance()
        task.update(note="writing the report")
        path, table = write_estimate_sweep(args.game, names, results, args.reports, command=_command(args))
    print(table)
    print(f"report written: {path} (ESTIMATED by self-play)")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from solver.api import verify

    game = _game(args)
    v = verify(game, out=args.out, symmetry=not args.no_symmetry, progress=_progress(not (args.quiet or args.json)))
    if args.json:
        print(json.dumps({"game": game.name, "variant": game.variant.as_text(), "label": game.variant.label(),
                          "ok": v.ok, "checked": v.checked, "positions": v.positions, "problems": v.problems,
                          "seconds": round(v.seconds, 3), **v.details}))
        return 0 if v.ok else 1
    for p in v.problems:
        print(one_line(f"problem: {p}"))
    what = {"values": f"every value{', remoteness and margin' if game.scored else ' and remoteness'} agrees "
                      "with its children's",
            "tiers": "every tier's values agree with their children's, tier by tier",
            "setups": "every value below the setups agrees with its children's, every setup mean with its setups'",
            "expected": "every expected result and win probability agrees with its moves' (self-consistent)",
            "bounds": "every stored interval is proven by its stored strategies"}[v.checked]
    d = v.details
    if v.checked == "bounds" and v.ok:
        lo, hi = d["value_interval"]
        what += (f" (re-proven: the start in [{lo:+.12f}, {hi:+.12f}], the widest interval {d['width']:.1e}; "
                 f"stored bounds beyond the re-proven ones by at most {d['excess']:.1e}, rounding allows "
                 f"{d['slack']:.0e})")
    verdict = "verified" if v.ok else "NOT verified"
    print(one_line(f"{verdict}: {game.variant.label()}: {v.positions:,} positions checked against the rules; "
                   f"{what if v.ok else str(len(v.problems)) + ' problem(s) above'} ({v.seconds:.1f} s)"))
    return 0 if v.ok else 1


COMMANDS = {
    "list": cmd_list,
    "check": cmd_check,
    "serve": cmd_serve,
    "solve": cmd_solve,
    "status": cmd_status,
    "verify": cmd_verify,
    "estimate": cmd_estimate,
    "calibrate": cmd_calibrate,
    "show": cmd_show,
    "play": cmd_play,
    "report": cmd_report,
    "tune": cmd_tune,
}


def entry() -> None:
    """The ``pyramids`` command: :func:`main`, then, when it was interrupted (Ctrl-C, SIGTERM)
    while threads still work (a tier being solved: a compiled kernel cannot be stopped midway,
    and Override 3x3-2's tiers take minutes), exit at once instead of waiting for them. Every
    file is written to a temporary name and renamed, so nothing half-written is read: the next
    run removes the leftovers and resumes from the finished tiers."""
    import threading

    code = main()
    main_thread = threading.main_thread()
    if code == 130 and any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not main_thread):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    entry()
