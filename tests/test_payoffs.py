"""Real payoffs at the ends (Outcome.payoffs) in the chance and secret-choice engines.

Every expected value here is worked out by hand (or with exact fractions in the test), never
taken from the code under test: a matrix game with payoffs, a dice game scored by points, a
recursive secret-choice game with an irrational value scaled by 3, and the same random games
written with payoffs +1/-1/0 in place of results.
"""

from __future__ import annotations

import json
import math
import random
import re
from fractions import Fraction as F

import numpy as np
import pytest

from solver.core.game import Game, NodeKind, Outcome, Result
from solver.core.variant import Param
from solver.core.selfcheck import check_game
from solver.engines.enumerate import enumerate_positions
from solver.engines.value_iteration import value_iteration
from solver.errors import ProtocolError
from solver.pipeline.whole import solve_graph
from tests.test_simultaneous import T, build, random_game
from tests.toygames import TIE, W0, W1, Stochastic


def solved(spec: dict, **kw):
    game = Stochastic(spec)
    graph = enumerate_positions(game, symmetry=False, workers=1)
    cols, meta, _ = solve_graph(game, graph, engine="secret-choice", **kw)
    return graph, cols, meta


def test_a_matrix_game_with_payoffs_ends_a_game() -> None:
    # val [[3, -1], [-2, 4]] = (3 * 4 - (-1) * (-2)) / (3 + 4 + 1 + 2) = 1, by hand
    spec = {0: ("S", 0, [[1, 2], [3, 4]]), 1: ("T", 0, 3.0), 2: ("T", 0, -1.0), 3: ("T", 0, -2.0), 4: ("T", 0, 4.0)}
    graph, cols, meta = solved(spec)
    row = graph.row_of(0)
    assert cols["value"][row] == pytest.approx(1.0, abs=1e-9)
    assert meta["payoffs"] == "real" and meta["payoff_scale"] == 4.0
    assert cols["value_lo"][row] <= 1.0 <= cols["value_hi"][row]
    assert cols["value_hi"][row] - cols["value_lo"][row] <= 4e-9 and meta["certified"]
    assert np.isnan(cols["p_win"][row])  # no win probability for payoffs
    # the proving mixes, by hand: x = (3/5, 2/5), y = (1/2, 1/2)
    assert np.allclose(cols["proof_mix_1"][row].as_py(), [0.6, 0.4], atol=1e-6)  # (Arrow list columns)
    assert np.allclose(cols["proof_mix_2"][row].as_py(), [0.5, 0.5], atol=1e-6)


def test_a_dice_game_scored_by_points() -> None:
    # Player 0 rolls a die and may roll once more, keeping the last roll; he is paid the points
    # (player 1 pays them). Keep 4, 5, 6, roll again on 1-3 (worth 3.5): by hand
    # (4 + 5 + 6) / 6 + 3 / 6 * 3.5 = 4.25.
    spec: dict = {0: ("C", 0, [(r, F(1, 6)) for r in range(1, 7)]), 7: ("C", 0, [(7 + r, F(1, 6)) for r in range(1, 7)])}
    for r in range(1, 7):
        spec[r] = ("D", 0, [20 + r, 7])  # keep r, or roll again
        spec[20 + r] = ("T", 0, float(r))
        spec[7 + r] = ("T", 0, float(r))
    graph, cols, meta = solved(spec, )
    assert cols["value"][graph.row_of(0)] == pytest.approx(4.25, abs=1e-9)
    assert cols["value"][graph.row_of(2)] == pytest.approx(3.5, abs=1e-9)  # roll again on a 2
    assert cols["value"][graph.row_of(5)] == pytest.approx(5.0, abs=1e-9)  # keep a 5
    assert meta["certified"] and meta["payoffs"] == "real"


def test_a_recursive_secret_game_with_payoffs_scaled() -> None:
    # tests/test_bounds.py's irrational game with every payoff times 3: (C, L) a coin, heads
    # back to the start, tails player 0 pays 3; (C, R) and (Q, L) player 0 gets 3; (Q, R) 0.
    # The value scales with the payoffs: 3 (5 - sqrt 17) / 2 (by hand, there).
    spec = {0: ("S", 0, [[3, 1], [1, 2]]), 1: ("T", 0, 3.0), 2: ("T", 0, 0.0),
            3: ("C", 0, [(0, F(1, 2)), (4, F(1, 2))]), 4: ("T", 0, -3.0)}
    v = 3 * (5 - math.sqrt(17)) / 2
    graph, cols, meta = solved(spec)
    row = graph.row_of(0)
    assert cols["value_lo"][row] - 1e-14 <= v <= cols["value_hi"][row] + 1e-14
    assert cols["value_hi"][row] - cols["value_lo"][row] <= 3e-9 and meta["certified"]


@pytest.mark.parametrize("seed", range(8))
def test_payoffs_of_one_give_the_same_values_as_results(seed: int) -> None:
    """A random cyclic game with dice and secret choices, solved once with results and once with
    the same ends as payoffs +1 / -1 / 0: the same values (the engines must not depend on how
    an end of the same worth is written)."""
    nodes = random_game(random.Random(seed), 9, cyclic=True)
    graph = build(nodes)
    plain = value_iteration(graph, tol=1e-11, max_sweeps=400)
    graph.payoff = np.where(graph.kind == T, graph.result.astype(np.float64), 0.0)
    paid = value_iteration(graph, tol=1e-11, max_sweeps=400)
    assert np.allclose(paid.value, plain.value, atol=1e-9, rtol=0)
    assert np.all(np.isnan(paid.p_win))


@pytest.mark.parametrize("payoffs,fragment", [
    ((2.0, -1.0), "do not add up to 0"),
    ((float("nan"), float("nan")), "not finite"),
    ((float("inf"), float("-inf")), "not finite"),
])
def test_bad_payoffs_are_named_by_check_and_by_solve(payoffs, fragment) -> None:
    spec = {0: ("D", 0, [1, 2]), 1: ("T", 0, payoffs), 2: ("T", 0, W1)}
    res = check_game(Stochastic(spec), playouts=0)
    assert not res.ok and any(p.rule == "payoff" and fragment in p.message for p in res.problems)
    with pytest.raises(ProtocolError, match=fragment) as exc:
        enumerate_positions(Stochastic(spec), symmetry=False, workers=1)
    assert "position 1" in str(exc.value) and "\n" not in str(exc.value)


def test_payoffs_are_two_player_zero_sum_outcomes() -> None:
    out = Outcome((Result.WIN, Result.LOSS), payoffs=(2.5, -2.5))
    assert out.payoffs == (2.5, -2.5) and out.results == W0
    assert Stochastic({0: ("T", 0, -1.5)}).outcome(0).results == W1
    assert Stochastic({0: ("T", 0, 0.0)}).outcome(0).results == TIE
    assert NodeKind.TERMINAL == Stochastic({0: ("T", 0, 1.0)}).node_kind(0)


# --- a plug-in game with payoffs, end to end through the command line -----------------------

class DicePoints(Game):
    """Player 1 rolls a die and may roll once more (keeping the last roll); player 2 pays him
    the points minus a stake of 3 (a scored chance game whose ends pay real amounts)."""

    name = "dice-points"
    title = "Dice points"
    params = (Param("stake", "int", 3, "points player 1 pays to play", min=0, max=6),)
    chance = "in-play"

    def initial_state(self):  # (rolls left, the roll showing or 0, kept)
        return (2, 0, 0)

    def node_kind(self, s):
        return NodeKind.TERMINAL if s[2] else NodeKind.CHANCE if s[1] == 0 else NodeKind.DECISION

    def to_move(self, s):
        return 0

    def chance_outcomes(self, s):
        return [(r, F(1, 6)) for r in range(1, 7)]

    def legal_actions(self, s):
        return ["keep", "roll"] if s[0] > 0 else ["keep"]

    def apply(self, s, a):
        if s[1] == 0:
            return (s[0] - 1, a, 0)
        return (s[0], s[1], 1) if a == "keep" else (s[0], 0, 0)

    def outcome(self, s):
        u = float(s[1] - self.variant.stake)
        return Outcome(W0 if u > 0 else W1 if u < 0 else TIE, payoffs=(u, -u))

    def encode(self, s):
        return s[0] * 100 + s[1] * 10 + s[2]

    def decode(self, k):
        return (k // 100, (k // 10) % 10, k % 10)

    def render(self, s):
        return f"{s[0]} rolls left, showing {s[1]}" + (" (kept)" if s[2] else "")


# by hand: after the first roll r, keep r - 3 or roll again for 3.5 - 3 = 0.5; so
# (0.5 + 0.5 + 0.5 + 1 + 2 + 3) / 6 = 1.25
DICE_POINTS_VALUE = 1.25


def test_a_payoff_plugin_solves_shows_and_reports_in_payoff_words(capsys, tmp_path) -> None:
    from tests.clirun import run

    game = ["--game", "tests.test_payoffs:DicePoints", "--out", str(tmp_path / "t")]
    code, out, _ = run(capsys, "solve", *game)
    assert code == 0 and "expected payoff +1.250000 for player 1" in out and "wins" not in out
    code, out, _ = run(capsys, "solve", *game, "--json")
    summary = json.loads(out)
    assert summary["payoffs"] == "real" and summary["start"]["expected"] == pytest.approx(DICE_POINTS_VALUE)
    code, out, _ = run(capsys, "show", *game, "--moves", "2")  # rolled a 2: roll again (+0.5) beats keeping (-1)
    assert "expected payoff +0.500000" in out and out.index("roll ") < out.index("keep ")
    code, out, _ = run(capsys, "show", *game, "--json")
    shown = json.loads(out)
    assert shown["payoffs"] == "real" and shown["expected"] == pytest.approx(DICE_POINTS_VALUE)
    code, out, _ = run(capsys, "report", *game, "--reports", str(tmp_path / "r"))
    assert code == 0
    text = (tmp_path / "r" / "dice-points" / "stake=3" / "report.md").read_text()
    verdict = text.split("## 1. Verdict")[1].split("## 2.")[0]
    assert "(Player 1) is +1.250" in verdict and "expected payoff of" in verdict and "| expected payoff | +1.250 |" in verdict
    assert "wins" not in verdict and "+1 = win" not in verdict
    # the ends pay -2 ... +3: the histogram spans the payoffs, not [-1, 1]
    hist = text.split("## 4.")[1].split("## 5.")[0]
    assert hist.startswith(" Expected payoffs of all positions")
    lows = [float(m) for m in re.findall(r"^\| ([+-]\d\.\d+) \|", hist, flags=re.M)]
    assert min(lows) < -1.5 and max(lows) > 2.5
    assert "**expected payoff**" in text  # in the glossary
