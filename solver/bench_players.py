"""Benchmark of the players at full size: self-play games per second per core, per game and player.

Each (game, player) case plays seeded self-play games in this one process (one core) until it has
played ``--games`` games or spent ``--seconds`` seconds (at least one game), and reports the median
seconds per finished game, games per second per core (1 / median), choices per second (all its
choices over all its time) and the share of games that hit the move cap. A game still running
after ``--game-seconds`` is stopped and counted as timed out (its choices still count for the
choices per second): without it, MCTS on full-size Carrots and Broccoli, whose games run to the
move cap, would take hours a game. Run ``make bench`` (which
runs this after the solver benchmark) or ``python -m solver.bench_players --help``.

The variants are the games' defaults (the full-size games of the rules); the players are
``random``, ``greedy``, ``alphabeta`` (depth 2; also through the readable search,
``alphabeta-python``, and 4 plies deep, ``alphabeta-4``, named only) and ``mcts`` (100 playouts
per move; also on its Python tree, ``mcts-python``, and with 1,000 playouts, ``mcts-1000``, named
only): the settings a full-size estimate uses (see the README, "Full-size games").
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

#: the games, at their default (full-size) variants
GAMES = ["override", "greener", "blam", "carrots", "petal"]
#: case -> (label, player, options); "mcts-python" is MCTS on its Python tree, the search the
#: compiled tree (where a game has one, :mod:`solver.core.uct_jit`) replaces: before and after
PLAYERS = {
    "random": ("random", "random", {}),
    "greedy": ("greedy", "greedy", {}),
    "alphabeta": ("alphabeta depth 2", "alphabeta", {"depth": 2}),
    "alphabeta-python": ("alphabeta 2 python", "alphabeta", {"depth": 2, "engine": "python"}),
    "alphabeta-4": ("alphabeta depth 4", "alphabeta", {"depth": 4}),
    "mcts": ("mcts budget 100", "mcts", {"budget": 100}),
    "mcts-python": ("mcts 100 python tree", "mcts", {"budget": 100, "tree": "python"}),
    "mcts-1000": ("mcts budget 1000", "mcts", {"budget": 1000}),
}
#: the cases run when none is named
DEFAULT_PLAYERS = ["random", "greedy", "alphabeta", "alphabeta-python", "mcts", "mcts-python"]


class _TimeUp(Exception):
    pass


def run_case(game_name: str, player: str, *, games: int, seconds: float, max_moves: int, seed: int,
             game_seconds: float = 120.0) -> dict:
    """Self-play of ``player`` against itself on ``game_name``'s default variant; the timings."""
    from solver.games import make_game
    from solver.players import make_player
    from solver.players.selfplay import play_game

    game = make_game(game_name)
    label, name, options = PLAYERS[player]
    p = make_player(name, **options)
    times: list[float] = []  # finished games' seconds
    plies = capped = timed_out = 0
    spent = 0.0
    start = time.perf_counter()
    for i in range(games):
        if i and time.perf_counter() - start >= seconds:
            break
        t = time.perf_counter()
        made = [0]

        def tick(state, action, ply, t=t, made=made):
            made[0] = ply + 1
            if time.perf_counter() - t > game_seconds:
                raise _TimeUp

        try:
            rec = play_game(game, p, np.random.default_rng([seed, i]), max_moves, on_decision=tick)
        except _TimeUp:
            timed_out += 1
            plies += made[0]
        else:
            times.append(time.perf_counter() - t)
            plies += rec.plies
            capped += rec.capped
        spent += time.perf_counter() - t
    med = statistics.median(times) if times else None
    return {"game": game_name, "variant": game.variant.as_text(), "player": label, "games": len(times),
            "timed_out": timed_out, "median_s": med,
            "games_per_s": None if med is None else (1.0 / med if med > 0 else float("inf")),
            "choices_per_s": plies / spent if spent > 0 else float("inf"),
            "mean_choices": plies / max(1, len(times) + timed_out),
            "capped": capped / len(times) if times else None}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m solver.bench_players", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", action="append", default=[], choices=GAMES,
                        help="a game to measure (repeatable; default: all five)")
    parser.add_argument("--player", action="append", default=[], choices=list(PLAYERS),
                        help="a player to measure (repeatable; default: all but alphabeta-4 and mcts-1000)")
    parser.add_argument("--games", type=int, default=20, help="games per case at most (default 20)")
    parser.add_argument("--seconds", type=float, default=20.0,
                        help="seconds per case at most, after its first game (default 20)")
    parser.add_argument("--game-seconds", type=float, default=120.0,
                        help="a game still running after this many seconds is stopped and counted as timed out "
                             "(default 120)")
    parser.add_argument("--max-moves", type=int, default=500, help="move cap of a game (default 500)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.games < 1 or args.seconds <= 0 or args.max_moves < 1 or args.game_seconds <= 0:
        parser.error("--games and --max-moves must be at least 1 and --seconds, --game-seconds positive, "
                     "e.g. --games 20 --seconds 20")
    from solver.errors import PyramidsError

    print(f"{'game':<9} {'player':<18} {'games':>5} {'timed out':>9} {'s/game (median)':>15} {'games/s/core':>12} "
          f"{'choices/s':>9} {'choices':>7} {'capped':>6}")
    for g in args.game or GAMES:
        for name in args.player or DEFAULT_PLAYERS:
            try:
                r = run_case(g, name, games=args.games, seconds=args.seconds, max_moves=args.max_moves,
                             seed=args.seed, game_seconds=args.game_seconds)
            except PyramidsError as e:  # a player that cannot play this game (alpha-beta at secret choices)
                print(f"{g:<9} {PLAYERS[name][0]:<18} {'-':>5} {'-':>9} {'-':>15} {'-':>12} {'-':>9} {'-':>7} {'-':>6}  "
                      f"({str(e).splitlines()[0][:60]})")
                continue
            med = f"{r['median_s']:>15.3f}" if r["median_s"] is not None else f"{'-':>15}"
            gps = f"{r['games_per_s']:>12.2f}" if r["games_per_s"] is not None else f"{'-':>12}"
            cap = f"{100 * r['capped']:>5.0f}%" if r["capped"] is not None else f"{'-':>6}"
            print(f"{g:<9} {r['player']:<18} {r['games']:>5} {r['timed_out']:>9} {med} {gps} "
                  f"{r['choices_per_s']:>9.{0 if r['choices_per_s'] >= 100 else 2}f} {r['mean_choices']:>7.0f} {cap}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
