"""Self-play: play games between players, estimate balance with intervals, and calibrate a player
against an exactly solved table.

* :func:`play_game`: one game; chance nodes drawn with the game's probabilities, a move cap for
  games that can go on for ever (endless play counts as *unfinished*).
* :func:`estimate`: many seeded games; the first player's wins, losses, ties and unfinished games
  with 95% Wilson intervals, game lengths, the commonest openings, the mean margin (scored games)
  and the speed. Game ``i`` gets its own generator from ``numpy.random.SeedSequence(seed)``
  spawned children, so the answer does not depend on ``jobs`` (worker processes) or on the order
  games finish in.
* :func:`calibrate`: how often a player's moves keep the exact value of the position, from a
  solved small variant (:func:`solver.api.solve`), ply by ply, next to the exact answer.
"""

from __future__ import annotations

import hashlib
import json
import math
import multiprocessing
import time
from collections import Counter, defaultdict
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from solver.core.game import Game, NodeKind, Result
from solver.core.progress import Task
from solver.core.stats import Z95, clustered_share, wilson
from solver.engines.matrix_game import optimal_strategy_ranges
from solver.errors import VariantError
from solver.players.base import Player, sample_chance
from solver.players.registry import make_player

#: default move cap of a self-play game (choices: decisions and simultaneous choices; dice rolls
#: and setups do not count)
DEFAULT_MAX_MOVES = 500


@dataclass(frozen=True)
class GameRecord:
    """One self-play game.

    ``results``: every seat's result, ``None`` when the game hit the move cap (unfinished);
    ``margin``: seat 0's score minus the best other score (finished scored games, else ``None``);
    ``plies``: the choices made (decisions and simultaneous choices; chance outcomes are not
    counted); ``first_move``: the name of the first choice (after any random setup);
    ``capped``: whether the move cap ended the game.
    """

    results: tuple[Result, ...] | None
    margin: int | None
    plies: int
    first_move: str | None
    capped: bool

    @property
    def first_result(self) -> Result | None:
        """Seat 0's result (``None``: unfinished)."""
        return None if self.results is None else self.results[0]


def _seat_players(game: Game, players: Player | Sequence[Player]) -> list[Player]:
    if isinstance(players, Player):
        return [players] * game.num_players
    seats = list(players)
    if len(seats) == 1:
        return seats * game.num_players
    if len(seats) == 2 and game.num_players > 2:  # the first seat against the rest
        return [seats[0]] + [seats[1]] * (game.num_players - 1)
    if len(seats) != game.num_players:
        raise VariantError(f"{game.variant.label()} has {game.num_players} seats; give one player per "
                           f"seat, or one or two players (got {len(seats)})")
    return seats


def play_game(game: Game, players: Player | Sequence[Player], rng: np.random.Generator,
              max_moves: int = DEFAULT_MAX_MOVES, *,
              on_decision: Callable[[Any, Any, int], None] | None = None) -> GameRecord:
    """Play one game from the start and return its :class:`GameRecord`.

    Parameters
    ----------
    game : Game
    players : Player or sequence of Player
        One per seat (seat 0 moves first unless the game says otherwise); a single player plays
        every seat; two players in a 3-4 player game: the first takes seat 0, the second the rest.
    rng : numpy.random.Generator
        Draws the chance outcomes and every player's random choices.
    max_moves : int
        Choices after which the game stops unfinished (endless play).
    on_decision : callable, optional
        Called as ``on_decision(state, action, ply)`` before every decision is applied.

    At a secret simultaneous choice each player is asked once (:meth:`Player.choose_joint`)
    and each seat keeps its own entry of its player's answer.
    """
    seats = _seat_players(game, players)
    state = game.initial_state()
    plies = 0
    first: str | None = None
    while True:
        kind = game.node_kind(state)
        if kind == NodeKind.TERMINAL:
            out = game.outcome(state)
            return GameRecord(tuple(out.results), out.margin(0), plies, first, False)
        if kind == NodeKind.CHANCE:
            state = game.apply(state, sample_chance(game, state, rng))
            continue
        if plies >= max_moves:
            return GameRecord(None, None, plies, first, True)
        if kind == NodeKind.DECISION:
            action = seats[game.to_move(state)].choose(game, state, rng)
            if first is None:
                first = game.action_name(state, action)
            if on_decision is not None:
                on_decision(state, action, plies)
            state = game.apply(state, action)
        else:
            answers: dict[int, tuple] = {}
            joint = []
            for p, player in enumerate(seats):
                if id(player) not in answers:
                    answers[id(player)] = tuple(player.choose_joint(game, state, rng))
                joint.append(answers[id(player)][p])
            if first is None:
                first = game.joint_name(state, joint)
            state = game.apply_joint(state, tuple(joint))
        plies += 1


# --- estimates ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Opening:
    """A first move, how many games opened with it and the first player's win share in them."""

    move: str
    games: int
    win_share: float


@dataclass
class Estimate:
    """Self-play statistics of the first player (seat 0). See :func:`estimate`.

    ``shares`` maps ``win``/``loss``/``tie``/``unfinished`` to ``(share, low, high)`` (95% Wilson
    interval). ``expected``: the mean result (+1 win, -1 loss, 0 tie or unfinished).
    ``mean_plies``/``sd_plies``: length of the finished games (``None`` if none finished).
    ``mean_margin``/``margin_interval``: seat 0's score margin over finished games of a scored
    game, with a 95% normal interval (``None`` otherwise).
    """

    game: str
    player1: str
    player2: str
    games: int
    seed: int
    max_moves: int
    wins: int
    losses: int
    ties: int
    unfinished: int
    shares: dict[str, tuple[float, float, float]]
    expected: float
    mean_plies: float | None
    sd_plies: float | None
    openings: list[Opening]
    mean_margin: float | None
    margin_interval: tuple[float, float] | None
    seconds: float
    games_per_second: float
    records: list[GameRecord] = field(default_factory=list, repr=False)
    #: games read from the work folder of an earlier run (not played, nor timed, by this one)
    kept_games: int = 0

    def counts(self) -> dict[str, int]:
        return {"win": self.wins, "loss": self.losses, "tie": self.ties, "unfinished": self.unfinished}

    def to_dict(self, *, records: bool = False) -> dict[str, Any]:
        """Plain data (JSON-ready); the per-game records only when asked."""
        d = asdict(self)
        d["openings"] = [asdict(o) for o in self.openings]
        if not records:
            d.pop("records")
        else:
            d["records"] = [_record_dict(r) for r in self.records]
        return d

    def summary(self) -> str:
        """A few readable lines."""
        def pct(name: str) -> str:
            s, lo, hi = self.shares[name]
            return f"{s:.1%} [{lo:.1%}, {hi:.1%}]"

        lines = [f"{self.game}: {self.player1} (first) vs {self.player2}, {self.games} games, seed {self.seed}",
                 f"first player wins {self.wins} ({pct('win')}), loses {self.losses} ({pct('loss')}), "
                 f"ties {self.ties} ({pct('tie')}), unfinished {self.unfinished} ({pct('unfinished')}; "
                 f"cap {self.max_moves} moves)",
                 f"expected result {self.expected:+.3f}"]
        if self.mean_plies is not None:
            lines.append(f"length {self.mean_plies:.1f} plies (sd {self.sd_plies:.1f}) in finished games")
        if self.mean_margin is not None:
            iv = self.margin_interval
            extra = f" [{iv[0]:+.2f}, {iv[1]:+.2f}]" if iv is not None else ""
            lines.append(f"mean margin {self.mean_margin:+.2f}{extra}")
        if self.openings:
            lines.append("openings: " + ", ".join(f"{o.move} x{o.games} (wins {o.win_share:.0%})"
                                                  for o in self.openings))
        lines.append(f"{self.games_per_second:.2f} games/s ({self.seconds:.1f} s)")
        return "\n".join(lines)


def _as_player(p: Player | str) -> Player:
    if isinstance(p, Player):
        return p
    return make_player(str(p))


def _check_counts(games: int, jobs: int, max_moves: int) -> None:
    from solver.players.base import int_option

    int_option("self-play", "games", games, minimum=1, example=100, what="games to play")
    int_option("self-play", "jobs", jobs, minimum=1, example=2, what="worker processes")
    int_option("self-play", "max_moves", max_moves, minimum=1, example=DEFAULT_MAX_MOVES,
               what="choices before a game counts as unfinished")


def _game_spec(game: Game) -> tuple[type, dict[str, str]]:
    """How a worker rebuilds the game (some games hold caches that do not pickle)."""
    return (type(game), game.variant.as_text())


_WORKER_GAMES: dict[Any, Game] = {}


def _rebuild(spec: tuple[type, dict[str, str]]) -> Game:
    key = (spec[0].__module__, spec[0].__qualname__, tuple(sorted(spec[1].items())))
    game = _WORKER_GAMES.get(key)
    if game is None:
        game = _WORKER_GAMES[key] = spec[0].from_params(spec[1])
    return game


def _play_batch(spec: Any, seats: list[Player], max_moves: int,
                batch: list[tuple[int, np.random.SeedSequence]]) -> list[tuple[int, GameRecord]]:
    game = spec if isinstance(spec, Game) else _rebuild(spec)
    return [(i, play_game(game, seats, np.random.default_rng(ss), max_moves)) for i, ss in batch]


def _pool(jobs: int) -> ProcessPoolExecutor:
    try:
        ctx = multiprocessing.get_context("fork")  # as enumeration does: no re-import of the caller
    except ValueError:
        ctx = None
    return ProcessPoolExecutor(max_workers=jobs, mp_context=ctx)


def work_file(work: Path, game: Game, seats: list[Player], seed: int, max_moves: int) -> tuple[Path, dict[str, Any]]:
    """The file in the folder ``work`` that keeps the finished games of one estimate (the
    variant, every seat's player with its options, the seed and the move cap name it), and
    its header."""
    key = {"game": game.name, "variant": game.variant.as_text(), "seats": [p.describe() for p in seats],
           "seed": int(seed), "max_moves": int(max_moves)}
    digest = hashlib.sha1(json.dumps(key, sort_keys=True).encode()).hexdigest()[:12]
    return Path(work) / f"estimate-{game.name}-{digest}.jsonl", key


def _record_dict(r: GameRecord) -> dict[str, Any]:
    return {"results": None if r.results is None else [int(x) for x in r.results], "margin": r.margin,
            "plies": r.plies, "first_move": r.first_move, "capped": r.capped}


def _open_work(path: Path, key: dict[str, Any]) -> Any:
    """``path`` opened to append games, its header written first if it is new; a last line cut
    short by a stop is ended, so that the next game starts a line of its own."""
    path.parent.mkdir(parents=True, exist_ok=True)
    cut = False
    if path.exists() and path.stat().st_size:
        with open(path, "rb") as fh:
            fh.seek(-1, 2)
            cut = fh.read(1) != b"\n"
    else:
        path.write_text(json.dumps({"estimate": key}) + "\n")
    out = open(path, "a")
    if cut:
        out.write("\n")
        out.flush()
    return out


def read_work(path: Path, key: dict[str, Any], games: int) -> dict[int, GameRecord]:
    """The games ``< games`` that ``path`` holds (none if it is missing). A line cut short by a
    stop is skipped (that game is played again); a file of another estimate is refused."""
    if not path.exists():
        return {}
    done: dict[int, GameRecord] = {}
    with open(path) as fh:
        for n, line in enumerate(fh):
            try:
                d = json.loads(line)
            except ValueError:
                continue
            if n == 0:
                if d.get("estimate") != key:
                    raise VariantError(f"{path} keeps the games of another estimate; give another --work folder")
                continue
            i = int(d["i"])
            if i < games:
                res = None if d["results"] is None else tuple(Result(x) for x in d["results"])
                done[i] = GameRecord(res, d["margin"], int(d["plies"]), d["first_move"], bool(d["capped"]))
    return done


def run_games(game: Game, seats: list[Player], *, games: int, seed: int, jobs: int = 1,
              max_moves: int = DEFAULT_MAX_MOVES, progress: bool | str = False,
              work: Path | None = None) -> list[GameRecord]:
    """Play ``games`` seeded games (game ``i`` with the ``i``-th child of ``SeedSequence(seed)``,
    the same game whatever ``games`` is), in ``jobs`` processes; the records in game order.
    ``work``: a folder where each finished game is kept (:func:`work_file`) as it ends; the
    games found there are not played again (a stopped run resumes; more games extend it)."""
    children = np.random.SeedSequence(seed).spawn(games)
    records: list[GameRecord | None] = [None] * games
    out = None
    if work is not None:
        path, key = work_file(work, game, seats, seed, max_moves)
        for i, rec in read_work(path, key, games).items():
            records[i] = rec
        out = _open_work(path, key)
    todo = [(i, ss) for i, ss in enumerate(children) if records[i] is None]

    def keep(i: int, rec: GameRecord) -> None:
        records[i] = rec
        if out is not None:
            out.write(json.dumps({"i": i, **_record_dict(rec)}) + "\n")
            out.flush()

    kept = games - len(todo)
    bar = Task("self-play", progress, total=games, done=kept, unit="games", percent=True, eta=True,
               note=f"{game.variant.label()}, {jobs} process{'es' if jobs > 1 else ''}"
                    + (f", {kept:,} games kept from an earlier run" if kept else ""))
    try:
        if jobs == 1 or len(todo) <= 1:
            for i, ss in todo:
                keep(i, play_game(game, seats, np.random.default_rng(ss), max_moves))
                bar.advance()
        else:
            size = max(1, min(16, len(todo) // (jobs * 4)))
            batches = [todo[k:k + size] for k in range(0, len(todo), size)]
            spec = _game_spec(game)
            with _pool(jobs) as pool:
                pending = {pool.submit(_play_batch, spec, seats, max_moves, b) for b in batches}
                while pending:
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for fut in done:
                        for i, rec in fut.result():
                            keep(i, rec)
                        bar.advance(len(fut.result()))
    finally:
        bar.close()
        if out is not None:
            out.close()
    return [r for r in records if r is not None]


def summarise(game: Game, records: list[GameRecord], *, player1: str, player2: str, seed: int,
              max_moves: int, seconds: float) -> Estimate:
    """The :class:`Estimate` of a list of game records (seat 0's point of view)."""
    n = len(records)
    firsts = [r.first_result for r in records]
    wins = sum(1 for r in firsts if r == Result.WIN)
    losses = sum(1 for r in firsts if r == Result.LOSS)
    ties = sum(1 for r in firsts if r == Result.TIE)
    unfinished = sum(1 for r in firsts if r is None)
    shares = {name: (k / n, *wilson(k, n)) for name, k in
              (("win", wins), ("loss", losses), ("tie", ties), ("unfinished", unfinished))}
    lengths = np.array([r.plies for r in records if not r.capped], dtype=np.float64)
    mean_plies = float(lengths.mean()) if len(lengths) else None
    sd_plies = float(lengths.std(ddof=1)) if len(lengths) > 1 else (0.0 if len(lengths) else None)
    by_move: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in records:
        if r.first_move is not None:
            by_move[r.first_move][0] += 1
            by_move[r.first_move][1] += r.first_result == Result.WIN
    top = sorted(by_move.items(), key=lambda kv: (-kv[1][0], kv[0]))[:5]
    openings = [Opening(m, c, w / c) for m, (c, w) in top]
    margins = np.array([r.margin for r in records if r.margin is not None], dtype=np.float64)
    mean_margin = interval = None
    if game.scored and len(margins):
        mean_margin = float(margins.mean())
        if len(margins) > 1:
            half = Z95 * float(margins.std(ddof=1)) / math.sqrt(len(margins))
            interval = (mean_margin - half, mean_margin + half)
    return Estimate(
        game=game.variant.label(), player1=player1, player2=player2, games=n, seed=seed,
        max_moves=max_moves, wins=wins, losses=losses, ties=ties, unfinished=unfinished,
        shares=shares, expected=(wins - losses) / n, mean_plies=mean_plies, sd_plies=sd_plies,
        openings=openings, mean_margin=mean_margin, margin_interval=interval, seconds=seconds,
        games_per_second=n / seconds if seconds > 0 else math.inf, records=records,
    )


def estimate(game: Game, player1: Player | str, player2: Player | str | None = None, *,
             games: int = 100, seed: int = 0, jobs: int = 1, max_moves: int = DEFAULT_MAX_MOVES,
             progress: bool | str = False, work: Path | None = None) -> Estimate:
    """Play ``games`` self-play games and return the first player's statistics.

    Parameters
    ----------
    game : Game
        Any variant, full size included (nothing is enumerated).
    player1, player2 : Player or name
        ``player1`` takes seat 0 (the first player), ``player2`` (default: the same player) the
        other seat, or every other seat with 3-4 players.
    games, seed : int
        Game ``i`` uses the ``i``-th child of ``numpy.random.SeedSequence(seed)`` for the chance
        outcomes and both players' random choices: the same seed gives the same games.
    jobs : int
        Worker processes (the counts do not depend on it).
    max_moves : int
        Choices after which a game counts as unfinished (endless play).
    progress : bool or "lines"
        A progress bar on standard error (``"lines"``: a line every 10 s,
        :mod:`solver.core.progress`).
    work : path, optional
        A folder that keeps every finished game as it ends (:func:`run_games`): the same call
        after a stop plays only the games not kept, and a larger ``games`` adds games. The
        time and speed then count this run's games only.
    """
    _check_counts(games, jobs, max_moves)
    p1 = _as_player(player1)
    p2 = p1 if player2 is None else _as_player(player2)
    seats = _seat_players(game, [p1, p2])
    t0 = time.perf_counter()
    kept = 0 if work is None else len(read_work(*work_file(work, game, seats, seed, max_moves), games))
    records = run_games(game, seats, games=games, seed=seed, jobs=jobs, max_moves=max_moves,
                        progress=progress, work=work)
    seconds = time.perf_counter() - t0
    est = summarise(game, records, player1=p1.describe(), player2=p2.describe(), seed=seed,
                    max_moves=max_moves, seconds=seconds)
    if kept:  # the speed of this run's games; the time is this run's
        est.kept_games = kept
        est.games_per_second = (est.games - kept) / seconds if seconds > 0 else math.inf
    return est


# --- calibration -------------------------------------------------------------------------------

_RANK = {"lose": 0, "draw": 1, "tie": 2, "win": 3}
_FLIP = {"win": "lose", "lose": "win", "tie": "tie", "draw": "draw"}


@dataclass(frozen=True)
class PlyStat:
    """Decisions at one ply of the calibration games: how many, how many kept the exact value,
    how many lost some (blunders)."""

    ply: int
    moves: int
    kept: int
    blunders: int


@dataclass
class Calibration:
    """How well a player keeps the exact value of the positions it plays (see :func:`calibrate`).

    ``kept``/``moves``: decisions whose move is among the best by exact value (win > tie > draw
    > lose, remoteness ignored; tables of expected results: within ``tolerance`` of the best
    expected result); ``share_kept``: ``(share, low, high)`` with a 95% interval that counts the
    games, not only the moves (:func:`solver.core.stats.clustered_share`: the wider of Wilson's
    and the game-clustered one; one game of 480 alike moves to the cap is one game);
    ``by_ply``: per ply; ``blunder_kinds``: e.g. ``{"win->draw": 3}`` (deterministic tables);
    ``mean_loss``: the mean drop of the expected result per decision (tables of expected results).
    ``decisive``/``decisive_kept``/``share_decisive``: the same count over the *decisive*
    decisions only, those where some legal move would lose value (a blunder was possible).
    ``share_kept`` counts every decision, so long games of forced or all-equal moves (a drawn
    Override ending in 500 plies of shuffling) raise it whatever the player; the decisive share
    is the stricter measure of strength. ``clean_games``: self-play games in which no move lost
    value, a measure long games cannot raise.
    ``secret_choices``: the secret simultaneous choices met (both players' mixes measured at
    each, for players that say their mixes: MCTS's regret matching, random's uniform mix);
    ``secret_support_share``: the mean share of a mix on actions that some optimal strategy of
    the choice's exact payoff matrix plays; ``secret_exploitability`` (mean) and
    ``secret_exploitability_max``: how much of the expected result (in [-1, 1]) a best reply to
    the mix takes below the choice's exact value (0 for an optimal mix).
    ``first_player``: self-play shares of the first player (``win``/``loss``/``tie``/
    ``unfinished``, each ``(share, low, high)``); ``exact``: the exact answer at the start for the
    first player (``value``/``remoteness``/``margin``, or ``expected``/``p_win``/``p_loss``);
    ``exact_win_share``: the first player's winning chance with perfect play by both sides
    (1 or 0 in deterministic games, the probability with dice, setups or secret choices).
    """

    game: str
    player: str
    games: int
    seed: int
    moves: int
    kept: int
    share_kept: tuple[float, float, float]
    blunders: int
    by_ply: list[PlyStat]
    blunder_kinds: dict[str, int]
    mean_loss: float | None
    first_player: dict[str, tuple[float, float, float]]
    exact: dict[str, Any]
    exact_win_share: float | None
    decisive: int = 0
    decisive_kept: int = 0
    share_decisive: tuple[float, float, float] = (float("nan"), 0.0, 1.0)
    clean_games: int = 0
    secret_choices: int = 0
    secret_support_share: float | None = None
    secret_exploitability: float | None = None
    secret_exploitability_max: float | None = None
    records: list[GameRecord] = field(default_factory=list, repr=False)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("records")
        d["by_ply"] = [asdict(p) for p in self.by_ply]
        return d

    def summary(self) -> str:
        s, lo, hi = self.share_kept
        w, wlo, whi = self.first_player["win"]
        exact = ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in self.exact.items())
        lines = [f"{self.game}: {self.player} in self-play, {self.games} games, seed {self.seed}",
                 f"moves keeping the exact value: {self.kept}/{self.moves} = {s:.1%} [{lo:.1%}, {hi:.1%}]",
                 f"decisive moves (some move would lose value) keeping it: {self.decisive_kept}/{self.decisive}"
                 + (f" = {self.share_decisive[0]:.1%} [{self.share_decisive[1]:.1%}, {self.share_decisive[2]:.1%}]"
                    if self.decisive else ""),
                 f"blunders: {self.blunders}; games without one: {self.clean_games}/{self.games}"]
        if self.blunder_kinds:
            lines[-1] += " (" + ", ".join(f"{k} x{v}" for k, v in sorted(self.blunder_kinds.items())) + ")"
        if self.mean_loss is not None:
            lines.append(f"mean loss of expected result per move: {self.mean_loss:.4f}")
        if self.secret_choices:
            lines.append(f"secret choices: {self.secret_choices} (both players' mixes); mass on the optimal "
                         f"supports {self.secret_support_share:.1%}; exploitability (what a best reply takes off "
                         f"the exact value) mean {self.secret_exploitability:.3f}, max "
                         f"{self.secret_exploitability_max:.3f}")
        lines.append("by ply: " + _ply_line(self.by_ply))
        lines.append(f"first player wins {w:.1%} [{wlo:.1%}, {whi:.1%}] in self-play; exact: {exact}")
        return "\n".join(lines)


#: plies listed one by one in :meth:`Calibration.summary`; later plies are summed on one entry
PLIES_LISTED = 20


def _ply_line(by_ply: list[PlyStat]) -> str:
    """``0: 18/20, 1: 16/20, ...``: the first :data:`PLIES_LISTED` plies one by one, the rest (a
    game that ran to the move cap adds hundreds) summed as ``plies 20-499: 473/473``."""
    head = [f"{p.ply}: {p.kept}/{p.moves}" for p in by_ply[:PLIES_LISTED]]
    rest = by_ply[PLIES_LISTED:]
    if len(rest) == 1:
        head.append(f"{rest[0].ply}: {rest[0].kept}/{rest[0].moves}")
    elif rest:
        head.append(f"plies {rest[0].ply}-{rest[-1].ply}: {sum(p.kept for p in rest)}/{sum(p.moves for p in rest)}")
    return ", ".join(head)


def _exact_start(solution: Any, game: Game) -> tuple[dict[str, Any], float | None]:
    root = solution.lookup(game.initial_state())
    flip = root.to_move != 0
    if root.value is not None:
        value = _FLIP[root.value] if flip else root.value
        exact: dict[str, Any] = {"value": value, "remoteness": root.remoteness}
        if root.margin is not None:
            exact["margin"] = -root.margin if flip else root.margin
        return exact, 1.0 if value == "win" else 0.0
    p_win, p_loss = root.p_win, root.p_loss
    expected = root.expected
    if flip:
        p_win, p_loss, expected = p_loss, p_win, (None if expected is None else -expected)
    exact = {"expected": expected, "p_win": p_win, "p_loss": p_loss}
    return exact, p_win


def calibrate(game: Game, player: Player | str, solution: Any, *, games: int = 20, seed: int = 0,
              max_moves: int = DEFAULT_MAX_MOVES, tolerance: float = 1e-6) -> Calibration:
    """Play ``games`` seeded self-play games with ``player`` in every seat and score each of its
    decisions against the exact table ``solution`` of the same variant (:func:`solver.api.solve`).

    A decision *keeps the value* when its move is among the best moves by exact value: win >
    tie > draw > lose for the mover (remoteness ignored); in tables of expected results (dice,
    secret choices) when its expected result is within ``tolerance`` of the best move's. A move
    that does not is a blunder. Random setups and dice are drawn as in :func:`play_game`; secret
    simultaneous choices are played but not scored (they are mixed strategies, not moves). Two
    players only (3-4 player tables answer per-seat coalition questions, not the players' own).
    """
    _check_counts(games, 1, max_moves)
    me = _as_player(player)
    if solution.game.variant != game.variant:
        raise VariantError(f"the table is of {solution.game.variant.label()}, not {game.variant.label()}; "
                           "solve this variant and pass its solution")
    if game.num_players != 2 or getattr(solution, "paranoid", False):
        raise VariantError(f"calibration needs a two-player table; {game.variant.label()} has "
                           f"{game.num_players} players: use --set players=2")
    stats: dict[int, list[int]] = defaultdict(lambda: [0, 0, 0])
    decisive = [0, 0]  # decisions where some move loses value; of them, kept
    per_game: list[list[int]] = []  # per game: moves, kept, decisive, decisive kept
    lost = [0]  # blunders so far (a game is clean when it adds none)
    kinds: Counter[str] = Counter()
    losses: list[float] = []

    def judge(state: Any, action: Any, ply: int) -> None:
        moves = solution.moves(state)
        name = game.action_name(state, action)
        chosen = next(m for m in moves if m.move == name)
        row = stats[ply]
        row[0] += 1
        if chosen.value is None or any(m.value is None for m in moves):
            best = max(float(m.expected) for m in moves)
            loss = best - float(chosen.expected)
            losses.append(max(0.0, loss))
            keep = loss <= tolerance
            matters = best - min(float(m.expected) for m in moves) > tolerance
        else:
            best_name = max((m.value for m in moves), key=lambda v: _RANK[v])
            keep = _RANK[chosen.value] == _RANK[best_name]
            matters = min(_RANK[m.value] for m in moves) < _RANK[best_name]
            if not keep:
                kinds[f"{best_name}->{chosen.value}"] += 1
        row[1 if keep else 2] += 1
        tally = per_game[-1]
        tally[0] += 1
        tally[1] += keep
        if matters:
            decisive[0] += 1
            decisive[1] += keep
            tally[2] += 1
            tally[3] += keep
        lost[0] += not keep

    secret: list[tuple[float, float]] = []  # per mix: (share on the optimal supports, exploitability)

    def judge_mixes(state: Any, mixes: list[tuple[list[Any], np.ndarray]]) -> None:
        found = solution.payoff_matrix(state)
        if found is None:
            return
        rows, cols, a = found
        ranges = optimal_strategy_ranges(a)
        (acts1, x), (acts2, y) = mixes
        order1 = [rows.index(game.action_name(state, act)) for act in acts1]
        order2 = [cols.index(game.action_name(state, act)) for act in acts2]
        xs = np.zeros(len(rows))
        xs[order1] = x
        ys = np.zeros(len(cols))
        ys[order2] = y
        secret.append((float(xs[ranges.row_hi > 1e-7].sum()), max(0.0, ranges.value - float((xs @ a).min()))))
        secret.append((float(ys[ranges.col_hi > 1e-7].sum()), max(0.0, float((a @ ys).max()) - ranges.value)))

    watched = _MixWatch(me, judge_mixes) if hasattr(me, "strategies") else me
    children = np.random.SeedSequence(seed).spawn(games)
    records, clean = [], 0
    for ss in children:
        before = lost[0]
        per_game.append([0, 0, 0, 0])
        records.append(play_game(game, watched, np.random.default_rng(ss), max_moves, on_decision=judge))
        clean += lost[0] == before
    moves = sum(r[0] for r in stats.values())
    kept = sum(r[1] for r in stats.values())
    blunders = sum(r[2] for r in stats.values())
    firsts = [r.first_result for r in records]
    first_player = {name: (k / games, *wilson(k, games)) for name, k in (
        ("win", sum(1 for r in firsts if r == Result.WIN)), ("loss", sum(1 for r in firsts if r == Result.LOSS)),
        ("tie", sum(1 for r in firsts if r == Result.TIE)), ("unfinished", sum(1 for r in firsts if r is None)))}
    exact, exact_win = _exact_start(solution, game)
    tallies = np.array(per_game, dtype=np.int64).reshape(-1, 4)
    return Calibration(
        game=game.variant.label(), player=me.describe(), games=games, seed=seed, moves=moves, kept=kept,
        share_kept=(kept / moves if moves else float("nan"), *clustered_share(tallies[:, 1], tallies[:, 0])),
        blunders=blunders,
        by_ply=[PlyStat(p, *stats[p]) for p in sorted(stats)], blunder_kinds=dict(kinds),
        mean_loss=float(np.mean(losses)) if losses else None, first_player=first_player,
        exact=exact, exact_win_share=exact_win, decisive=decisive[0], decisive_kept=decisive[1],
        share_decisive=(decisive[1] / decisive[0] if decisive[0] else float("nan"),
                        *clustered_share(tallies[:, 3], tallies[:, 2])),
        clean_games=clean, secret_choices=len(secret) // 2,
        secret_support_share=float(np.mean([m[0] for m in secret])) if secret else None,
        secret_exploitability=float(np.mean([m[1] for m in secret])) if secret else None,
        secret_exploitability_max=max(m[1] for m in secret) if secret else None, records=records,
    )


class _MixWatch(Player):
    """``inner`` playing as itself, but at a secret simultaneous choice its mixes
    (``inner.strategies``) are shown to ``seen`` before the actions are drawn from them (as
    :meth:`solver.players.mcts.MCTSPlayer.choose_joint` draws them)."""

    def __init__(self, inner: Player, seen: Callable[[Any, list[tuple[list[Any], np.ndarray]]], None]) -> None:
        self.inner = inner
        self.name = inner.name
        self.seen = seen

    def choose(self, game: Game, state: Any, rng: np.random.Generator) -> Any:
        return self.inner.choose(game, state, rng)

    def choose_joint(self, game: Game, state: Any, rng: np.random.Generator) -> tuple[Any, ...]:
        mixes = self.inner.strategies(game, state, rng)  # type: ignore[attr-defined]
        self.seen(state, mixes)
        return tuple(acts[int(rng.choice(len(acts), p=probs))] for acts, probs in mixes)

    def describe(self) -> str:
        return self.inner.describe()
