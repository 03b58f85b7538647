"""Players and self-play (solver/players/): every player plays legal moves in every game; self-play
is reproducible and does not depend on the worker processes; alpha-beta agrees with the exact
tables where its depth reaches; MCTS keeps the exact value of most Blam! 3x3 positions; decoupled
UCT finds the mixed equilibria of small matrix games; random and perfect self-play estimates
contain the exact shares computed from the tables; bad options are one line with the fix.

Every expected number comes from an exact table solved here (or from the equilibrium of a 2x2
matrix game worked by hand), never from the code under test. Thresholds of the statistical
checks were measured with the fixed seeds used here and then given a margin.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import polars as pl
import pytest

from analysis.metrics import play_statistics
from solver.api import make_game, solve
from solver.core.game import NodeKind, Result
from solver.core.stats import wilson
from solver.errors import VariantError
from solver.games import game_class
from solver.players import (AlphaBetaPlayer, MCTSPlayer, Player, calibrate, estimate, evaluate,
                            make_player, play_game, sample_chance)
from solver.players.alphabeta import WIN
from solver.players.simple import GreedyPlayer, RandomPlayer
from solver.core.values import WIN as WIN_CODE
from tests.toygames import TIE, W1, DiceRace, Explicit, Stochastic

#: the small presets every player is tried on
PRESETS = {"override": "3x3", "greener": "3x3", "blam": "3x3", "carrots": "3x3", "petal": "6"}
Z999 = 3.29  # a 99.9% interval: the fixed-seed checks below fail only when something is wrong


def small(name: str):
    return make_game(name, game_class(name).presets[PRESETS[name]])


def quick(name: str) -> Player:
    """Each player with a small budget, searching through the readable rules: their compiled
    searches are built for each variant (seconds of compiling each), and are proven to choose as
    the readable ones do in tests/test_compiled_alphabeta.py and tests/test_compiled_tree.py."""
    return {"random": lambda: make_player("random"), "greedy": lambda: make_player("greedy"),
            "alphabeta": lambda: make_player("alphabeta", depth=2, engine="python"),
            "mcts": lambda: make_player("mcts", budget=8, playout_moves=20, tree="python")}[name]()


class Checked(Player):
    """Wraps a player and checks that every action it returns is legal."""

    name = "checked"

    def __init__(self, inner: Player) -> None:
        self.inner = inner
        self.calls = 0

    def choose(self, game, state, rng):
        assert game.node_kind(state) == NodeKind.DECISION
        action = self.inner.choose(game, state, rng)
        assert action in game.legal_actions(state)
        self.calls += 1
        return action

    def choose_joint(self, game, state, rng):
        assert game.node_kind(state) == NodeKind.SIMULTANEOUS
        joint = self.inner.choose_joint(game, state, rng)
        assert len(joint) == game.num_players
        for p, a in enumerate(joint):
            assert a in game.player_actions(state, p)
        self.calls += 1
        return joint


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    return tmp_path_factory.mktemp("tables")


@pytest.fixture(scope="module")
def blam_solution(tables):
    game = small("blam")
    return game, solve(game, out=tables)


@pytest.fixture(scope="module")
def greener_solution(tables):
    game = small("greener")
    return game, solve(game, out=tables)


# --- every player, every game ----------------------------------------------------------------

@pytest.mark.parametrize("player", ["random", "greedy", "alphabeta", "mcts"])
@pytest.mark.parametrize("name", list(PRESETS))
def test_every_player_plays_legal_moves_in_every_game(name, player):
    game = small(name)
    checked = Checked(quick(player))
    rng = np.random.default_rng(7)
    if name == "petal" and player == "alphabeta":  # secret round-start orders
        with pytest.raises(VariantError) as err:
            play_game(game, checked, rng, max_moves=30)
        msg = str(err.value)
        assert "\n" not in msg and "Petal Battle" in msg and "mcts" in msg and "random" in msg
        return
    for _ in range(2):
        rec = play_game(game, checked, rng, max_moves=30)
        assert rec.plies <= 30 and rec.first_move is not None
        if rec.capped:
            assert rec.results is None and rec.plies == 30
        else:
            assert len(rec.results) == 2 and sorted(int(r) for r in rec.results) in ([-1, 1], [0, 0])
            assert (rec.margin is not None) == game.scored
    assert checked.calls > 0


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_player_moves_at_the_full_size_start(name):
    """The full-size defaults are beyond exact solving but playable: one legal move (or secret
    choice) from each player after the random setup, if any (the 6x6 Greener setups are too many
    to list, so they are drawn directly)."""
    game = make_game(name)
    rng = np.random.default_rng(3)
    state = game.initial_state()
    while game.node_kind(state) == NodeKind.CHANCE:
        state = game.apply(state, sample_chance(game, state, rng))
    for player in ("random", "greedy", "alphabeta", "mcts"):
        p = Checked(make_player(player, **({"depth": 1} if player == "alphabeta" else
                                           {"budget": 4, "playout_moves": 10} if player == "mcts" else {})))
        if game.node_kind(state) == NodeKind.SIMULTANEOUS:
            if player == "alphabeta":
                with pytest.raises(VariantError, match="use --player mcts or random"):
                    p.choose_joint(game, state, rng)
                continue
            p.choose_joint(game, state, rng)
        else:
            p.choose(game, state, rng)
        assert p.calls == 1


@pytest.mark.parametrize("name", ["greener", "carrots"])
def test_chance_outcomes_are_drawn_with_their_probabilities(name):
    """Greener's setup classes (weighted by their sizes) and a Carrots roll (grouped dice): the
    frequencies of 20,000 draws are within 4.5 standard errors of the exact probabilities."""
    game = small(name)
    state = game.initial_state()
    if name == "carrots":  # past the wall setup, at the first roll
        state = game.apply(state, game.chance_outcomes(state)[0][0])
    outs = game.chance_outcomes(state)
    probs = {a: float(p) for a, p in outs}
    assert len(set(probs.values())) > 1  # unequal probabilities: a uniform draw would be wrong
    rng = np.random.default_rng(21)
    n = 20_000
    counts: dict = {}
    for _ in range(n):
        key = sample_chance(game, state, rng)
        counts[key] = counts.get(key, 0) + 1
    for key, p in probs.items():
        assert abs(counts.get(key, 0) / n - p) <= 4.5 * math.sqrt(p * (1 - p) / n) + 1e-9


def test_full_size_greener_setup_is_a_uniform_arrangement():
    game = make_game("greener")
    root = game.initial_state()
    layouts = [sample_chance(game, root, np.random.default_rng(s)) for s in range(2)]
    for board in layouts:
        assert len(board) == 36 and board.count(2) == 9 and board.count(3) == 9 and board.count(1) == 18
    assert layouts[0] != layouts[1]
    assert game.node_kind(game.apply(root, layouts[0])) == NodeKind.DECISION


# --- evaluations ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(PRESETS))
def test_evaluations_are_antisymmetric_bounded_and_exact_at_the_end(name):
    game = small(name)
    rng = np.random.default_rng(11)
    seen = 0
    for _ in range(3):
        state = game.initial_state()
        for _ in range(60):
            kind = game.node_kind(state)
            v0, v1 = evaluate(game, state, 0), evaluate(game, state, 1)
            assert -1.0 <= v0 <= 1.0 and v0 == pytest.approx(-v1, abs=1e-12)
            seen += 1
            if kind == NodeKind.TERMINAL:
                results = game.outcome(state).results
                assert v0 == float(int(results[0]))
                break
            if kind == NodeKind.CHANCE:
                state = game.apply(state, sample_chance(game, state, rng))
            elif kind == NodeKind.DECISION:
                acts = game.legal_actions(state)
                state = game.apply(state, acts[int(rng.integers(len(acts)))])
            else:
                state = game.apply_joint(state, tuple(game.player_actions(state, p)[0] for p in range(2)))
    assert seen > 10


def test_evaluations_point_the_right_way():
    """A gain for player 1 (index 0) in each game's own terms makes its evaluation positive."""
    from solver.games import carrots as C
    from solver.games import petal as P

    ov = small("override")
    assert evaluate(ov, ov.play(["AL@a1"]), 0) > 0 and evaluate(ov, ov.play(["BL@a1"]), 0) < 0
    gr = make_game("greener", rows=3, cols=3, black=2, white=2, setup="BWG/GGB/WGG")
    s = gr.initial_state()
    grab = next(a for a in gr.legal_actions(s) if s.board[a[1]] == 1)  # Black captures a green
    assert evaluate(gr, gr.apply(s, grab), 0) > 0
    bl = small("blam")
    state = bl.initial_state()._replace(treasure=((0, 1, 0), (0, 0, 0)))
    assert evaluate(bl, state, 0) > 0 and evaluate(bl, state, 1) < 0
    ca = small("carrots")
    board = list(ca.wall_board(ca.arrangements[0]))
    board[ca.corner[0]] = C.piece_code(C.RED, 0)
    assert evaluate(ca, C.CarrotsState(tuple(board), 1, -1, C.TO_ROLL), 0) > 0
    pe = small("petal")
    start = pe.initial_state()
    assert evaluate(pe, start, 0) == 0.0
    board = list(start.board)
    board[1] = P.piece_code(0, 0)
    assert evaluate(pe, start._replace(board=tuple(board)), 0) > 0


# --- self-play: reproducible, independent of jobs, statistics -------------------------------

def test_estimate_is_reproducible_and_independent_of_jobs():
    game = small("blam")
    a = estimate(game, make_player("mcts", budget=10), "greedy", games=8, seed=5)
    b = estimate(game, make_player("mcts", budget=10), "greedy", games=8, seed=5)
    c = estimate(game, make_player("mcts", budget=10), "greedy", games=8, seed=5, jobs=2)
    assert a.records == b.records == c.records
    assert a.counts() == c.counts() and a.openings == c.openings and a.mean_margin == c.mean_margin
    d = estimate(game, make_player("mcts", budget=10), "greedy", games=8, seed=6)
    assert d.records != a.records
    # a game whose variant does not pickle (Petal Battle) is rebuilt in the workers
    pe = small("petal")
    e1 = estimate(pe, "random", games=6, seed=2, max_moves=80)
    e2 = estimate(pe, "random", games=6, seed=2, max_moves=80, jobs=2)
    assert e1.records == e2.records


def test_estimate_statistics_are_consistent():
    game = small("blam")
    est = estimate(game, "greedy", "random", games=30, seed=1)
    assert est.wins + est.losses + est.ties + est.unfinished == est.games == 30
    for name, k in est.counts().items():
        share, lo, hi = est.shares[name]
        assert share == k / 30 and lo <= share <= hi and (lo, hi) == wilson(k, 30)
    assert 1 <= len(est.openings) <= 5
    assert [o.games for o in est.openings] == sorted((o.games for o in est.openings), reverse=True)
    finished = [r for r in est.records if not r.capped]
    assert est.mean_margin == pytest.approx(np.mean([r.margin for r in finished]))
    lo, hi = est.margin_interval
    assert lo < est.mean_margin < hi
    assert est.games_per_second > 0 and "games/s" in est.summary()
    assert estimate(small("override"), "random", games=3, seed=0).mean_margin is None


def test_random_self_play_interval_contains_the_exact_random_play_share(greener_solution):
    """Greener 3x3 from a random setup: the first player's win share when both play at random,
    computed exactly from the tables (an absorbing Markov chain), lies in the estimate's interval;
    so does the exact mean length."""
    game, sol = greener_solution
    exact = play_statistics(sol.positions, sol.edges, first="random", second="random", meta=sol.meta)
    est = estimate(game, "random", games=1500, seed=12)
    n = est.games
    for k, p in ((est.wins, exact.p_first), (est.losses, exact.p_second), (est.ties, exact.p_tie)):
        lo, hi = wilson(k, n, confidence=0.999)
        assert lo <= p <= hi
    half = Z999 * est.sd_plies / math.sqrt(n)
    assert abs(est.mean_plies - exact.expected_length) <= half


# --- alpha-beta against the exact tables -----------------------------------------------------

def test_alphabeta_finds_the_exact_result_within_its_depth(blam_solution):
    game, sol = blam_solution
    start = game.initial_state()
    root = sol.lookup(start)
    assert root.value == "win"
    r = AlphaBetaPlayer(depth=root.remoteness).search(game, start)
    assert r.proven() == "win" and r.score == WIN - root.remoteness
    actions = game.legal_actions(start)
    fastest = {m.move for m in sol.moves(start) if m.value == "win" and m.remoteness == root.remoteness - 1}
    assert {game.action_name(start, actions[i]) for i in r.best} == fastest
    # positions along random games: a forced result within 5 plies is found with its exact
    # remoteness; anything else (longer, tie, draw) is not claimed as forced
    rng = np.random.default_rng(4)
    checked = 0
    for _ in range(3):
        state = game.play(["M@b2"])
        while game.node_kind(state) == NodeKind.DECISION:
            pv = sol.lookup(state)
            found = AlphaBetaPlayer(depth=5).search(game, state)
            if pv.value in ("win", "lose") and pv.remoteness <= 5:
                sign = 1 if pv.value == "win" else -1
                assert found.score == sign * (WIN - pv.remoteness)
                checked += 1
            else:
                assert found.proven() is None
            acts = game.legal_actions(state)
            state = game.apply(state, acts[int(rng.integers(len(acts)))])
    assert checked >= 3


def test_alphabeta_on_a_tiny_override_matches_its_table(tmp_path):
    game = make_game("override", size=2, line=2, per_size=2)
    root = solve(game, out=tmp_path).root
    r = AlphaBetaPlayer(depth=6).search(game, game.initial_state())
    assert root.value == "win" and r.proven() == "win" and r.score == WIN - root.remoteness


def test_alphabeta_averages_chance_nodes():
    """A choice between a 3/4 and a 1/2 chance of winning: expectimax takes the 3/4."""
    W, L = (Result.WIN, Result.LOSS), (Result.LOSS, Result.WIN)
    spec = {0: ("D", 0, [1, 2]), 1: ("C", 0, [(3, Fraction(1, 2)), (4, Fraction(1, 2))]),
            2: ("C", 0, [(3, Fraction(3, 4)), (4, Fraction(1, 4))]), 3: ("T", 0, W), 4: ("T", 0, L)}
    game = Stochastic(spec)
    for seed in range(5):
        assert AlphaBetaPlayer(depth=2).choose(game, 0, np.random.default_rng(seed)) == 1


def test_alphabeta_weighs_a_chance_of_winning_as_an_expected_result():
    """With dice in play a win scores on the evaluation's scale: a 1-in-36 chance of winning at
    once, else a position evaluated -0.5 (expected about -0.46), loses to a sure +0.5. With a win
    scored ``WIN - plies`` the average was about +27 and the gamble was taken. Scores by hand:
    the gamble ``(1 + DICE_WIN * (WIN - 2) / WIN) / 36 - 0.5 * 35 / 36``, the sure move 0.5."""
    from solver.players.alphabeta import DICE_WIN

    W = (Result.WIN, Result.LOSS)
    spec = {0: ("D", 0, [1, 2]), 1: ("C", 0, [(3, Fraction(1, 36)), (4, Fraction(35, 36))]), 3: ("T", 0, W),
            4: ("D", 1, [5]), 2: ("D", 1, [6]), 5: ("D", 0, [7]), 6: ("D", 0, [7]), 7: ("T", 0, TIE)}
    game = Stochastic(spec)
    guess = {5: -0.5, 6: 0.5}

    def evaluate(g, state, player):
        v = guess.get(state, 0.0)
        return v if player == 0 else -v

    player = AlphaBetaPlayer(depth=2, _evaluate=evaluate)
    r = player.search(game, 0)
    assert r.scores[0] == pytest.approx((1 + DICE_WIN * (WIN - 2) / WIN) / 36 - 0.5 * 35 / 36)
    assert r.scores[1] == pytest.approx(0.5) and r.best == [1] and r.proven() is None
    assert all(player.choose(game, 0, np.random.default_rng(seed)) == 1 for seed in range(3))
    sure = Stochastic({0: ("D", 0, [1, 2]), 1: ("C", 0, [(3, Fraction(1))]), 2: ("C", 0, [(4, Fraction(1))]),
                       3: ("T", 0, W), 4: ("D", 0, [5]), 5: ("D", 1, [3])})  # a win now beats a win later
    assert AlphaBetaPlayer(depth=4).search(sure, 0).best == [0]


# --- MCTS and decoupled UCT ------------------------------------------------------------------

def test_mcts_keeps_the_exact_value_of_most_blam_positions(blam_solution):
    """Measured with these seeds: MCTS (100 playouts) keeps the value on 84% of its moves (286
    of 340), random play on 58% (10-game samples of MCTS ranged from 73% to 93%, hence 30)."""
    game, sol = blam_solution
    mcts = calibrate(game, make_player("mcts", budget=100), sol, games=30, seed=0)
    rand = calibrate(game, make_player("random"), sol, games=30, seed=0)
    assert mcts.moves > 50
    assert mcts.share_kept[0] >= 0.75
    assert mcts.share_kept[0] >= rand.share_kept[0] + 0.15
    assert mcts.exact == {"value": sol.root.value, "remoteness": sol.root.remoteness, "margin": sol.root.margin}
    assert sum(p.moves for p in mcts.by_ply) == mcts.moves
    assert sum(p.blunders for p in mcts.by_ply) == mcts.blunders == sum(mcts.blunder_kinds.values())


def test_calibration_summary_sums_the_plies_past_the_first_twenty():
    """A game run to the move cap gave a line of 500 plies; past PLIES_LISTED they are summed."""
    from solver.players.selfplay import PLIES_LISTED, Calibration, PlyStat

    def line(n):
        plies = [PlyStat(p, 2, 1 + (p % 2), 1 - (p % 2)) for p in range(n)]
        c = Calibration(game="g", player="p", games=1, seed=0, moves=2 * n, kept=0, share_kept=(0.5, 0.4, 0.6),
                        blunders=0, by_ply=plies, blunder_kinds={}, mean_loss=None,
                        first_player={k: (0.0, 0.0, 1.0) for k in ("win", "loss", "tie", "unfinished")},
                        exact={}, exact_win_share=None)
        return next(s for s in c.summary().splitlines() if s.startswith("by ply: "))

    assert PLIES_LISTED == 20
    assert line(3) == "by ply: 0: 1/2, 1: 2/2, 2: 1/2"
    assert line(21).endswith(", 19: 2/2, 20: 1/2")
    long = line(500)
    assert long.endswith(", 19: 2/2, plies 20-499: 720/960") and long.count(":") == 22  # "by ply" and 21 entries


def _tree_nodes(root):
    """Every node of an MCTS tree (children lists of decision nodes, dicts of the others)."""
    todo, seen = [root], []
    while todo:
        node = todo.pop()
        seen.append(node)
        kids = getattr(node, "children", None) or []
        todo.extend(k for k in (kids.values() if isinstance(kids, dict) else kids) if k is not None)
    return seen


POINTS = {"win": 1.0, "lose": -1.0, "tie": 0.0}


def test_mcts_solver_proofs_agree_with_the_exact_table(blam_solution):
    """MCTS-Solver marks a decision node proven only when the tree shows every line's end: each
    proven value (for the side to move there) must be the exact table's, in trees grown from
    positions all over Blam! 3x3."""
    game, sol = blam_solution
    keys = sol.positions.filter(pl.col("kind") == int(NodeKind.DECISION))["key"].to_numpy()
    rng = np.random.default_rng(7)
    checked = inner = 0
    for key in rng.choice(keys, size=40, replace=False):
        root = MCTSPlayer(budget=300).run(game, game.decode(int(key)), rng)
        for node in _tree_nodes(root):
            if node.proven is None:
                continue
            exact = sol.lookup(node.state)
            assert exact.value in POINTS, exact  # only a final result can be proven, never a draw
            assert node.proven[node.player] == POINTS[exact.value], (node.state, exact)
            checked += 1
            inner += node.kind == int(NodeKind.DECISION)
    assert inner >= 40 and checked > inner  # proofs reach above the final positions


def test_mcts_solver_plays_short_forced_wins(blam_solution):
    """From positions with a forced win in at most 3 plies, 400 playouts prove the win at the
    root, and the move played keeps it (the exact table's value of its child)."""
    game, sol = blam_solution
    pos = sol.positions
    rem = pos["remoteness"].cast(pl.Int64)
    wins = pos.filter((pl.col("kind") == int(NodeKind.DECISION)) & (pl.col("value") == WIN_CODE)
                      & (rem >= 3) & (rem <= 3))["key"].to_numpy()
    assert len(wins) >= 20
    rng = np.random.default_rng(3)
    for key in rng.choice(wins, size=20, replace=False):
        state = game.decode(int(key))
        player = MCTSPlayer(budget=400)
        root = player.run(game, state, np.random.default_rng(int(key) % 1000))
        assert root.proven is not None and root.proven[root.player] == 1.0
        move = player.choose(game, state, np.random.default_rng(int(key) % 1000))
        kept = next(m for m in sol.moves(state) if m.move == game.action_name(state, move))
        assert kept.value == "win", (state, move)


def test_mcts_solver_never_returns_to_a_proven_loss():
    """Once a move is proven to lose (here: five moves that lose at once), the search spends no
    more playouts on it: each is tried once, and the rest of the budget goes to the one move that
    does not lose (a binary tree of depth 8 ending in ties, too large to prove in 300 playouts).
    Plain UCB keeps returning to the losing moves (its exploration term), which also drags the
    root's mean toward -1; with the solver off it does, so the test can fail."""
    spec = {0: (0, list(range(1, 7)), None)}
    for leaf in range(1, 6):
        spec[leaf] = (1, [], W1)
    spec[6] = (1, [], None)
    frontier, nxt = [6], 7
    for depth in range(8):
        new = []
        for node in frontier:
            kids = [nxt, nxt + 1]
            nxt += 2
            spec[node] = ((depth + 1) % 2, kids, None)
            new.extend(kids)
        frontier = new
    for leaf in frontier:
        spec[leaf] = (0, [], TIE)
    game = Explicit(spec)
    root = MCTSPlayer(budget=300).run(game, 0, np.random.default_rng(0))
    assert root.proven is None and root.children[5].proven is None
    assert root.n[:5] == [1] * 5 and root.n[5] == 295
    assert MCTSPlayer(budget=300).choose(game, 0, np.random.default_rng(1)) == 5
    plain = MCTSPlayer(budget=300, solver="off").run(game, 0, np.random.default_rng(0))
    assert min(plain.n[:5]) > 1


def _matrix_game(rows):
    """A one-shot secret choice: ``rows[i][j]`` is player 1's chance of winning."""
    spec = {0: ("S", 0, []), 1: ("T", 0, (Result.WIN, Result.LOSS)), 2: ("T", 0, (Result.LOSS, Result.WIN))}
    matrix = []
    for r in rows:
        line = []
        for p in r:
            if p in (0, 1):
                line.append(2 - p)  # a sure win (node 1) or loss (node 2)
                continue
            node = len(spec)
            spec[node] = ("C", 0, [(1, Fraction(p)), (2, 1 - Fraction(p))])
            line.append(node)
        matrix.append(line)
    spec[0] = ("S", 0, matrix)
    return Stochastic(spec)


def test_decoupled_uct_finds_the_support_of_a_matrix_game():
    """Rows A, B, C against columns X, Y, Z; C and Z are dominated, the equilibrium mixes A/B and
    X/Y half and half."""
    game = _matrix_game([[1, 0, 1], [0, 1, 1], [0, 0, 0]])
    for seed in range(2):
        (_, x), (_, y) = MCTSPlayer(budget=1000).strategies(game, 0, np.random.default_rng(seed))
        assert x[:2].sum() >= 0.9 and y[:2].sum() >= 0.9
        assert abs(x[0] - 0.5) < 0.1 and abs(y[0] - 0.5) < 0.1


def test_decoupled_uct_approaches_a_mixed_equilibrium():
    """Payoffs (player 1's expected result) [[1, -1], [-1, 1/2]]: by hand, both players play the
    first action with probability 3/7 (each makes the other indifferent). One search of 1,000
    iterations lands within about 0.12 of it (measured over 8 seeds), so the test averages 8
    searches: their mean within 0.06 (measured: 0.03)."""
    game = _matrix_game([[1, 0], [0, Fraction(3, 4)]])  # win chance 3/4 = expected result 1/2
    xs, ys = [], []
    for seed in range(8):
        rng = np.random.default_rng(seed)
        (_, x), (_, y) = MCTSPlayer(budget=1000).strategies(game, 0, rng)
        assert abs(x[0] - 3 / 7) < 0.2 and abs(y[0] - 3 / 7) < 0.2
        xs.append(x[0])
        ys.append(y[0])
        joint = MCTSPlayer(budget=50).choose_joint(game, 0, rng)
        assert joint[0] in (0, 1) and joint[1] in (0, 1)
    assert abs(np.mean(xs) - 3 / 7) < 0.06 and abs(np.mean(ys) - 3 / 7) < 0.06


def test_mcts_mix_at_a_petal_round_start_is_a_strategy_over_the_orders(tmp_path):
    """At a Petal Battle round start MCTS's mix is a strategy over the same six orders the exact
    table mixes over. (How far it is from the exact mix in the full tree, where values come from
    random playouts, is measured in the issue note, not asserted; with exact values it converges,
    tested above.)"""
    game = make_game("petal", petals=4, run=3, per_size=2)  # solves in seconds; the root mixes 3 orders
    exact = solve(game, out=tmp_path).lookup(game.initial_state()).strategies
    state = game.initial_state()
    mix = MCTSPlayer(budget=300).strategies(game, state, np.random.default_rng(0))
    for p, (acts, probs) in enumerate(mix):
        assert {game.action_name(state, a) for a in acts} == set(exact[str(p + 1)])
        assert probs.sum() == pytest.approx(1.0) and (probs > 0).all()


def _exploitability(matrix, x, y):
    """How much the two players together gain by best responses to the mixes ``x``, ``y`` in the
    zero-sum game ``matrix`` (player 1's expected result): 0 exactly at an equilibrium."""
    m = np.asarray(matrix, dtype=float)
    return float((m @ y).max() - (x @ m).min())


def _lp_value(matrix):
    """The matrix game's value by linear programming (scipy/HiGHS), independent of the players."""
    from scipy.optimize import linprog

    m = np.asarray(matrix, dtype=float)
    n, k = m.shape
    # max v s.t. x^T m[:, j] >= v for every column, sum x = 1, x >= 0
    res = linprog(np.r_[np.zeros(n), -1.0], A_ub=np.c_[-m.T, np.ones(k)], b_ub=np.zeros(k),
                  A_eq=np.r_[np.ones(n), 0.0][None, :], b_eq=[1.0],
                  bounds=[(0, None)] * n + [(None, None)], method="highs")
    return -res.fun


@pytest.fixture(scope="module")
def petal_small(tmp_path_factory):
    game = make_game("petal", petals=4, run=3, per_size=2)  # solves in seconds; the root mixes 3 orders
    return game, solve(game, out=tmp_path_factory.mktemp("petal"))


def _exact_matrix(game, sol, state):
    """Player 1's exact expected result after every joint choice at ``state``, from the table."""
    def value(child):
        pv = sol.lookup(child)
        v = pv.expected if pv.expected is not None else {"win": 1, "lose": -1}.get(pv.value, 0)
        return v if pv.to_move == 0 else -v

    return [[value(game.apply_joint(state, (a, b))) for b in game.player_actions(state, 1)]
            for a in game.player_actions(state, 0)]


def test_regret_matching_converges_to_the_exact_mix_of_a_petal_round_start(petal_small):
    """Petal Battle 4 petals, 2 per size: the root's secret orders, with every joint choice valued
    exactly by the solved table (a one-shot game whose outcomes are those values): regret
    matching's average strategy is an equilibrium up to a small exploitability, its value is the
    table's, and it does far better than the uniform mix. (In the full tree the children's values
    come from random playouts, so the mix converges only as the tree grows: measured in the
    issue note, not asserted.)"""
    game, sol = petal_small
    state = game.initial_state()
    matrix = _exact_matrix(game, sol, state)
    root_value = sol.lookup(state).expected
    assert _lp_value(matrix) == pytest.approx(root_value, abs=1e-6)  # the table's root = LP over children
    n, k = len(matrix), len(matrix[0])
    uniform = _exploitability(matrix, np.full(n, 1 / n), np.full(k, 1 / k))
    assert uniform > 0.5  # a real mixed choice: the uniform mix is badly exploitable
    one_shot = _matrix_game([[Fraction(v + 1) / 2 for v in row] for row in matrix])  # win chance = (v+1)/2
    by_budget = {}
    for budget in (2000, 20000):
        mixes = [MCTSPlayer(budget=budget).strategies(one_shot, 0, np.random.default_rng(seed)) for seed in range(5)]
        by_budget[budget] = [_exploitability(matrix, x, y) for (_, x), (_, y) in mixes]
    # measured: mean 0.23 at 2,000 playouts, 0.09 at 20,000 (5 seeds); the uniform mix: 1.0
    assert np.mean(by_budget[20000]) < 0.12 and max(by_budget[20000]) < 0.25
    assert np.mean(by_budget[20000]) < 0.6 * np.mean(by_budget[2000])  # it converges
    ucb = [_exploitability(matrix, x, y) for (_, x), (_, y) in
           (MCTSPlayer(budget=20000, simultaneous="ucb").strategies(one_shot, 0, np.random.default_rng(seed))
            for seed in range(5))]
    assert np.mean(by_budget[20000]) < np.mean(ucb)  # measured: decoupled UCT 0.16 at 20,000


def test_regret_matching_finds_a_two_by_two_mixed_equilibrium():
    """Payoffs [[1, -1], [-1, 1/2]] (equilibrium 3/7 each, worked by hand above): regret
    matching's average strategy is close to it for every seed (decoupled UCT does about as well
    on so small a game; it falls behind on the Petal matrix above)."""
    matrix = [[1, -1], [-1, 0.5]]
    game = _matrix_game([[1, 0], [0, Fraction(3, 4)]])
    for seed in range(4):
        (_, x), (_, y) = MCTSPlayer(budget=2000).strategies(game, 0, np.random.default_rng(seed))
        assert _exploitability(matrix, x, y) < 0.15
        assert abs(x[0] - 3 / 7) < 0.1 and abs(y[0] - 3 / 7) < 0.1


def test_mcts_simultaneous_options_are_checked():
    with pytest.raises(VariantError, match="simultaneous must be 'rm'"):
        make_player("mcts", simultaneous="cfr")
    with pytest.raises(VariantError, match="gamma must be in"):
        make_player("mcts", gamma=0)


# --- calibration -------------------------------------------------------------------------------

class Oracle(Player):
    """Plays from the exact table: the best move (``worst=False``) or the worst one."""

    name = "oracle"

    def __init__(self, sol, worst=False):
        self.sol, self.worst = sol, worst

    def choose(self, game, state, rng):
        moves = self.sol.moves(state)
        key = (lambda m: m.expected) if moves[0].value is None else (
            lambda m: {"lose": 0, "draw": 1, "tie": 2, "win": 3}[m.value])
        target = (min if self.worst else max)(key(m) for m in moves)
        name = next(m.move for m in moves if key(m) == target)
        return game.parse_action(state, name)

    def strategies(self, game, state, rng):
        """The table's optimal mixes at a secret choice."""
        mixes = self.sol.lookup(state).strategies
        out = []
        for p in range(game.num_players):
            acts = list(game.player_actions(state, p))
            out.append((acts, np.array([mixes[str(p + 1)][game.action_name(state, a)] for a in acts])))
        return out


def test_calibrating_perfect_play_on_random_setups(greener_solution):
    """Perfect play keeps every value and its self-play win share is the exact one (Greener 3x3,
    random setups: the first player wins exactly p_win of them); the worst player blunders."""
    game, sol = greener_solution
    cal = calibrate(game, Oracle(sol), sol, games=300, seed=3)
    assert cal.kept == cal.moves > 0 and cal.blunders == 0
    assert cal.exact_win_share == pytest.approx(sol.root.p_win)
    k = round(cal.first_player["win"][0] * cal.games)
    lo, hi = wilson(k, cal.games, confidence=0.999)
    assert lo <= sol.root.p_win <= hi
    bad = calibrate(game, Oracle(sol, worst=True), sol, games=20, seed=3)
    assert bad.blunders > 0 and bad.kept < bad.moves


def test_decisive_moves_are_those_where_a_blunder_was_possible(greener_solution, blam_solution):
    """Decisive decisions (some legal move loses value): perfect play keeps all of them, the worst
    player none; a decision that is not decisive is always kept (whatever the player), so random
    play's non-decisive counts match; on Blam! 3x3 some decisions are not decisive (the last
    placement often cannot change the result), so the strict share is below the share of all
    moves for random play."""
    game, sol = greener_solution
    good = calibrate(game, Oracle(sol), sol, games=30, seed=3)
    assert good.decisive > 0 and good.decisive_kept == good.decisive and good.share_decisive[0] == 1.0
    bad = calibrate(game, Oracle(sol, worst=True), sol, games=20, seed=3)
    assert bad.decisive > 0 and bad.decisive_kept == 0 and bad.decisive == bad.blunders
    assert good.clean_games == good.games == 30 and bad.clean_games < bad.games
    game, sol = blam_solution
    rand = calibrate(game, make_player("random"), sol, games=40, seed=1)
    assert 0 < rand.decisive < rand.moves
    assert rand.kept - rand.decisive_kept == rand.moves - rand.decisive  # non-decisive: always kept
    assert rand.decisive - rand.decisive_kept == rand.blunders
    assert rand.share_decisive[0] < rand.share_kept[0]
    # a game is clean when none of its moves lost value: at least the games without a blunder
    # counted by ply (plies of one game are consecutive, so no more than games minus blunders)
    assert rand.games - rand.blunders <= rand.clean_games < rand.games
    lo, hi = rand.share_decisive[1:]
    assert lo <= rand.share_decisive[0] <= hi
    d = rand.to_dict()
    assert (d["decisive"], d["decisive_kept"]) == (rand.decisive, rand.decisive_kept)
    assert "decisive moves (some move would lose value) keeping it:" in rand.summary()


def test_calibration_intervals_count_games_not_only_moves(blam_solution):
    """Moves of one game are not independent (a game run to the move cap adds hundreds of alike
    moves): a player perfect in every other game and worst in the rest keeps about half its
    moves, and its interval must be that of 20 games, not of some hundred coin flips."""
    from scipy.stats import t as student_t
    from solver.core.stats import clustered_share

    game, sol = blam_solution
    start = game.initial_state()

    class Moody(Player):
        name = "moody"

        def __init__(self):
            self.good, self.bad, self.games = Oracle(sol), Oracle(sol, worst=True), 0

        def choose(self, game, state, rng):
            self.games += state == start
            return (self.good if self.games % 2 else self.bad).choose(game, state, rng)

    cal = calibrate(game, Moody(), sol, games=20, seed=4)
    share, lo, hi = cal.share_decisive
    wlo, whi = wilson(cal.decisive_kept, cal.decisive)
    assert 0.1 < share < 0.9 and lo < wlo - 0.03 and hi > whi + 0.03, (cal.share_decisive, (wlo, whi))
    assert cal.share_kept[1] < wilson(cal.kept, cal.moves)[0] - 0.02, (cal.share_kept, wilson(cal.kept, cal.moves))
    one = calibrate(game, Moody(), sol, games=1, seed=4)  # one game: Wilson's alone
    assert one.share_kept[1:] == pytest.approx(wilson(one.kept, one.moves))
    # by hand: 5, 6, 7, 8 of 10 in four games: share 0.65, residuals -1.5, -0.5, 0.5, 1.5 (sum of
    # squares 5), standard error sqrt(4/3 * 5) / 40, t with 3 degrees of freedom
    half = student_t.ppf(0.975, 3) * (20 / 3) ** 0.5 / 40
    assert clustered_share([5, 6, 7, 8], [10] * 4) == pytest.approx((0.65 - half, 0.65 + half))
    assert half > 0.2 and wilson(26, 40)[0] > 0.65 - half + 0.04  # wider than Wilson's here
    assert clustered_share([10] * 4, [10] * 4) == pytest.approx(wilson(40, 40))  # no spread: Wilson's
    assert clustered_share([], []) == (0.0, 1.0) and clustered_share([0, 0], [0, 0]) == (0.0, 1.0)


def test_calibrating_with_dice_uses_expected_results(tmp_path):
    """Dice inside the game (DiceRace): the best moves keep the expected value, always staying
    put loses some."""
    game = DiceRace.from_params({"target": 4})
    sol = solve(game, out=tmp_path)

    class Stay(Player):
        name = "stay"

        def choose(self, game, state, rng):
            return "stay"

    good = calibrate(game, Oracle(sol), sol, games=10, seed=0, max_moves=60)
    assert good.blunders == 0 and good.mean_loss == pytest.approx(0.0, abs=1e-9)
    assert good.exact["expected"] == pytest.approx(sol.root.expected)
    lazy = calibrate(game, Stay(), sol, games=3, seed=0, max_moves=20)
    assert lazy.blunders > 0 and lazy.mean_loss > 0 and lazy.first_player["unfinished"][0] == 1.0
    # with expected results a decision is decisive when some move's expected result is lower
    assert good.decisive > 0 and good.decisive_kept == good.decisive
    assert lazy.decisive >= lazy.blunders > 0 and lazy.decisive_kept == lazy.decisive - lazy.blunders


def test_calibration_refuses_another_variant(blam_solution):
    game, sol = blam_solution
    with pytest.raises(VariantError) as err:
        calibrate(make_game("blam", rows=3, cols=3, per_size=1, chain=False), "random", sol, games=1)
    assert "\n" not in str(err.value)


# --- options -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name, options, fix", [
    ("mcts", {"budget": 0}, "budget=2000"),
    ("mcts", {"budget": -3}, "budget=2000"),
    ("mcts", {"budget": "lots"}, "budget=2000"),
    ("mcts", {"c": -1}, "c=1.4"),
    ("mcts", {"solver": "maybe"}, "solver=off"),
    ("alphabeta", {"depth": 0}, "depth=3"),
    ("alphabeta", {"time_limit": 0}, "time_limit=1"),
    ("random", {"budget": 10}, "its options: none"),
    ("mcts", {"depth": 3}, "its options: budget, c, playout_moves"),
    ("minimax", {}, "players: random, greedy, alphabeta, mcts"),
])
def test_bad_options_are_one_line_with_the_fix(name, options, fix):
    with pytest.raises(VariantError) as err:
        make_player(name, **options)
    assert "\n" not in str(err.value) and fix in str(err.value)


def test_options_from_text_and_bad_self_play_counts():
    assert make_player("mcts", budget="200").budget == 200
    assert make_player("alphabeta", depth="4", time_limit="0.5").time_limit == 0.5
    assert make_player("MCTS").describe() == "mcts(budget=2000, c=1.4, playout_moves=200)"
    for bad in ({"games": 0}, {"jobs": 0}, {"max_moves": 0}):
        with pytest.raises(VariantError, match="at least 1"):
            estimate(small("blam"), "random", **bad)


def test_alphabeta_time_limit_still_moves():
    game = make_game("override")  # the full 5x5 game: depth 6 cannot finish in 0.2 s
    state = game.initial_state()
    action = AlphaBetaPlayer(depth=6, time_limit=0.2).choose(game, state, np.random.default_rng(0))
    assert action in game.legal_actions(state)


def test_carrots_evaluation_counts_nearness_to_the_corner_group_on_the_side_only():
    """Worked by hand on the full 8x8 board (group 10): a red pyramid on a1 (Carrots' group of 1)
    and a yellow one three squares away on Carrots' side (d1) is (1 + 1/4 / 3) / 10; one square
    nearer (c1) it is (1 + 1/4 / 2) / 10; on the wall line (h1) or Broccoli's side (h8 is their
    corner, g8 beside it) it counts nothing. Broccoli has nothing on the board here."""
    from solver.games import carrots as C

    game = make_game("carrots", wall="SMLSML")
    wall = game.wall_board(game.arrangements[0])

    def value(*pieces):
        board = list(wall)
        for square, code in pieces:
            board[square] = code
        return evaluate(game, C.CarrotsState(tuple(board), 0, -1, C.TO_ROLL), 0)

    red, yellow = C.piece_code(C.RED, 0), C.piece_code(C.YELLOW, 1)
    a1, c1, d1, h1, g8 = 0, 2, 3, 7, 62
    assert value((a1, red), (d1, yellow)) == pytest.approx((1 + 0.25 / 3) / 10)
    assert value((a1, red), (c1, yellow)) == pytest.approx((1 + 0.25 / 2) / 10)
    assert value((a1, red), (h1, yellow)) == pytest.approx(1 / 10)
    assert value((a1, red), (g8, yellow)) == pytest.approx(1 / 10)
    assert value((d1, yellow)) == pytest.approx(0.25 / 3 / 10)  # no group yet: distance to a1


def test_carrots_racing_evaluation_counts_stranded_pyramids_too():
    """Issue 36 item 3: the racing evaluation (``evaluation=race``) counts a pyramid off its
    owner's side by the same slope (worked by hand: a yellow pyramid on h1, the wall line, is 7
    squares from the group on a1: (1 + 1/4 / 7) / 10; on g8, Broccoli's side, 6 + 7 = 13 away),
    so stranding the other's pyramids gains a racer nothing it would not lose. On a player's own
    side it equals the default. Antisymmetric like every evaluation; a game without it refuses
    the name in one line."""
    from solver.games import carrots as C
    from solver.players.evals import evaluation_names

    game = make_game("carrots", wall="SMLSML")
    wall = game.wall_board(game.arrangements[0])
    red, yellow, green = C.piece_code(C.RED, 0), C.piece_code(C.YELLOW, 1), C.piece_code(C.GREEN, 2)

    def state(*pieces):
        board = list(wall)
        for square, code in pieces:
            board[square] = code
        return C.CarrotsState(tuple(board), 0, -1, C.TO_ROLL)

    a1, d1, h1, g8, h8 = 0, 3, 7, 62, 63
    assert evaluate(game, state((a1, red), (h1, yellow)), 0, "race") == pytest.approx((1 + 0.25 / 7) / 10)
    assert evaluate(game, state((a1, red), (g8, yellow)), 0, "race") == pytest.approx((1 + 0.25 / 13) / 10)
    on_side = state((a1, red), (d1, yellow), (h8, green))
    assert evaluate(game, on_side, 0, "race") == pytest.approx(evaluate(game, on_side, 0))
    mixed = state((a1, red), (g8, yellow), (h8, green), (d1, C.piece_code(C.BLUE, 0)))
    assert evaluate(game, mixed, 0, "race") == pytest.approx(-evaluate(game, mixed, 1, "race"))
    assert evaluation_names(game) == ["default", "race"]
    with pytest.raises(VariantError, match="override has no evaluation 'race'; its evaluations: default"):
        GreedyPlayer(evaluation="race").choose(small("override"), small("override").initial_state(),
                                               np.random.default_rng(0))
    assert GreedyPlayer().describe() == "greedy"  # the plain player keeps its name (report folders)
    assert make_player("greedy", evaluation="race").describe() == "greedy(evaluation=race)"


def test_mcts_searches_one_move_of_each_symmetric_class_at_a_symmetric_position(blam_solution):
    """At the start (every symmetry of the board maps it onto itself) MCTS keeps one move of each
    class of moves whose positions are images of each other; the moves it leaves out have the
    same exact value as the one kept (read from the table, not from the symmetry code). At a
    position no symmetry fixes, and with ``symmetry=off``, every legal move is searched."""
    game, sol = blam_solution
    start = game.initial_state()
    legal = game.legal_actions(start)
    rng = np.random.default_rng(0)
    kept = make_player("mcts", budget=20).run(game, start, rng).actions
    assert len(kept) < len(legal)
    assert make_player("mcts", budget=20, symmetry="off").run(game, start, rng).actions == legal
    kept_children = {a: set(game.symmetries(game.apply(start, a))) for a in kept}
    for a in legal:
        child = game.apply(start, a)
        reps = [b for b in kept if child in kept_children[b]]
        assert len(reps) == 1, game.action_name(start, a)
        exact, rep = sol.lookup(child), sol.lookup(game.apply(start, reps[0]))
        assert (exact.value, exact.remoteness, exact.margin) == (rep.value, rep.remoteness, rep.margin)
    after_two = (game.apply(game.apply(start, a), b) for a in legal for b in game.legal_actions(game.apply(start, a)))
    plain = next(s for s in after_two if not any(im == s for im in game.symmetries(s)[1:]))
    assert make_player("mcts", budget=20).run(game, plain, rng).actions == game.legal_actions(plain)
    assert make_player("mcts", symmetry="off").describe().endswith("symmetry=off)")


class RecordingRandom(RandomPlayer):
    """Random play that remembers the secret choices it met."""

    def __init__(self):
        self.seen = []

    def strategies(self, game, state, rng):
        self.seen.append(state)
        return super().strategies(game, state, rng)


def test_calibration_measures_the_mixes_at_secret_choices(petal_small):
    """Petal Battle 4 petals: at every secret choice met, both players' mixes are measured against
    the exact payoff matrix: the table's own optimal mixes sit on the optimal supports and no best
    reply gains against them; the uniform mix's exploitability is the one computed here from the
    table's values of every joint choice (the two players' shares add up to the gain of both best
    replies, :func:`_exploitability`)."""
    game, sol = petal_small
    exact = calibrate(game, Oracle(sol), sol, games=4, seed=1)
    assert exact.secret_choices > 0
    assert exact.secret_support_share == pytest.approx(1.0) and exact.secret_exploitability < 1e-6
    rand = RecordingRandom()
    cal = calibrate(game, rand, sol, games=4, seed=1)
    assert cal.secret_choices == len(rand.seen) > 0
    total = 0.0
    for state in rand.seen:
        m = _exact_matrix(game, sol, state)
        total += _exploitability(m, np.full(len(m), 1 / len(m)), np.full(len(m[0]), 1 / len(m[0])))
    assert cal.secret_exploitability == pytest.approx(total / (2 * len(rand.seen)), abs=1e-6)
    assert cal.secret_exploitability > 0.1 and cal.secret_support_share < 1.0
    assert "secret choices:" in cal.summary() and "secret_exploitability" in cal.to_dict()


def test_matrix_mode_solves_the_sampled_joint_results(petal_small):
    """``simultaneous="lp"``: every joint choice at the root sampled alike, then the matrix game of
    their mean results solved: on the 2x2 game worked by hand it finds 3/7 each, and on Petal 4's
    round start (every joint choice valued exactly by the table) it is less exploitable than regret
    matching at the same budget (measured, 5 seeds: 0.096 against 0.263 at 2,000 playouts, 0.027
    against 0.078 at 20,000)."""
    (_, x), (_, y) = MCTSPlayer(budget=2000, simultaneous="lp").strategies(
        _matrix_game([[1, 0], [0, Fraction(3, 4)]]), 0, np.random.default_rng(0))
    assert abs(x[0] - 3 / 7) < 0.05 and abs(y[0] - 3 / 7) < 0.05
    game, sol = petal_small
    matrix = _exact_matrix(game, sol, game.initial_state())
    one_shot = _matrix_game([[Fraction(v + 1) / 2 for v in row] for row in matrix])

    def mean_exploitability(mode):
        mixes = [MCTSPlayer(budget=2000, simultaneous=mode).strategies(one_shot, 0, np.random.default_rng(seed))
                 for seed in range(5)]
        return np.mean([_exploitability(matrix, mx, my) for (_, mx), (_, my) in mixes])

    lp, rm = mean_exploitability("lp"), mean_exploitability("rm")
    assert lp < 0.15 and lp < 0.6 * rm
    assert make_player("mcts", simultaneous="lp").describe().endswith("simultaneous=lp, gamma=0.1)")


def test_uniform_mode_mixes_every_action_alike(petal_small):
    """``simultaneous="uniform"``: at a secret choice both mixes are uniform, with no search (no
    random number drawn); the calibration measures exactly the uniform mix's exploitability at
    every secret choice met (computed here from the table); moves are still searched, and a
    search's secret choices are drawn alike (no regret grows, no action is tried first)."""
    game, sol = petal_small
    state = game.initial_state()
    rng = np.random.default_rng(0)
    before = rng.bit_generator.state
    mixes = MCTSPlayer(budget=50, simultaneous="uniform").strategies(game, state, rng)
    assert rng.bit_generator.state == before
    for p, (acts, probs) in enumerate(mixes):
        assert acts == game.player_actions(state, p) and np.allclose(probs, 1 / len(acts))
    assert make_player("mcts", budget=30, simultaneous="uniform").describe() == \
        "mcts(budget=30, c=1.4, playout_moves=200, simultaneous=uniform)"

    class Recording(MCTSPlayer):
        def strategies(self, game, state, rng):
            self.seen.append(state)
            return super().strategies(game, state, rng)

    player = Recording(budget=30, simultaneous="uniform")
    player.seen = []
    cal = calibrate(game, player, sol, games=3, seed=2)
    assert cal.secret_choices == len(player.seen) > 0 and cal.moves > 0
    total = sum(_exploitability(m, np.full(len(m), 1 / len(m)), np.full(len(m[0]), 1 / len(m[0])))
                for m in (_exact_matrix(game, sol, s) for s in player.seen))
    assert cal.secret_exploitability == pytest.approx(total / (2 * len(player.seen)), abs=1e-6)

    def searched(mode):  # the tree's statistics at a secret choice (its root here; any depth alike)
        return MCTSPlayer(budget=1000, simultaneous=mode).run(game, state, np.random.default_rng(1))

    def untouched(node):  # no regret grew, no action was tried first as decoupled UCT does
        return (all(r == 0.0 for regs in node.reg for r in regs)
                and all(len(u) == len(acts) for u, acts in zip(node.puntried, node.lists)))

    root = searched("uniform")
    assert untouched(root) and len(root.joint) == 36 and root.visits == 1000  # every joint choice drawn
    assert not untouched(searched("rm")) and not untouched(searched("ucb"))  # the check can fail
