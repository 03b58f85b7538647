"""Calibration of the MCTS player at its default budget against the exact tables (slow suite).

On each game's exactly solved small preset, MCTS with its defaults (2,000 playouts a move,
MCTS-Solver on) must keep the exact value on at least 95% of its moves, and its self-play must reproduce the
exact verdict at the start:

* random setups, dice or secret choices (the first player wins with an exact chance between 0
  and 1): the first player's share of self-play wins holds that chance in its 99.9% Wilson
  interval;
* a forced win (or loss) for the first player: that side wins most self-play games (the 99.9%
  interval of its share lies above one half). One weak move at the first ply, where MCTS's
  random playouts are least informed, loses a forced win: on Blam! 3x3 only 46 of 80 first
  moves won at 1,000 playouts, with or without the solver; 71 of 80 at 2,000 with it (the first
  player then wins 72 of 80 games), which is why the default budget is 2,000;
* a draw: most self-play games are drawn (the 99.9% interval of the drawn share, ties and games
  stopped at the move cap, lies above one half; measured on Override 3x3 with 100 games: at
  1,000 playouts without the solver 11 were lost by the side that blundered a draw while 99.6% of
  the moves kept the exact value; at 2,000 with it all 100 drawn, 6,000 of 6,000 moves kept).

The expected values are the exact tables' (solved here), never numbers copied from the players.
Run with ``pytest -m slow tests/test_calibration_slow.py`` (the playouts run in the games'
compiled kernels, ``tests/test_playouts.py``; measured one game at a time with a tiered solve
beside it: Blam! 68 s, Greener 6 s, Override 18 min (100 games drawn to the 60-move cap, every
playout to its 200-move cap), Carrots 96 s, Petal 125 s; the two largest presets together 100 s,
most of it solving Greener 3x4).
"""

from __future__ import annotations

import pytest

from solver.api import solve
from solver.core.stats import wilson
from solver.games import game_class
from solver.players import MCTSPlayer, calibrate

pytestmark = pytest.mark.slow


#: (game, preset, self-play games, move cap): the cap ends games that repeat forever (draws).
#: The small presets, then issue 36's gate: the largest solved preset of each game whose table
#: solves here in about a minute (Blam! 4x4, Greener 3x4; Override's and Carrots' largest are
#: their 3x3 above; Petal 6-2 takes 13 min to solve and is not here).
CASES = [
    ("blam", "3x3", 80, 200),
    ("greener", "3x3", 100, 200),
    ("override", "3x3", 100, 60),
    ("carrots", "3x3", 20, 100),
    ("petal", "6", 40, 200),
    ("blam", "4x4", 40, 200),
    ("greener", "3x4", 40, 200),
]


_CALIBRATIONS: dict[str, object] = {}

#: verdicts MCTS at its defaults does not reproduce yet (strict: the test fails once it passes).
#: None since the default became 2,000 playouts with MCTS-Solver (Blam! 3x3: 72 of 80 games won
#: by the first player; at 1,000 playouts 53 of 80, 66.2%, an interval reaching below one half).
#: Blam! 4x4 passes since the compiled tree searches the start's symmetric moves once (2026-12-06:
#: 95.2% of moves kept, no self-play game won by the first player; before, 92.7% and 18 of 40
#: first moves keeping the tie).
KNOWN_WEAK_VERDICT: dict[str, str] = {
    "greener-3x4": "Black wins 90.9% of setups exactly; MCTS self-play 57.5% [42.2%, 71.5%] (40 games, "
                   "2026-12-06): it loses won setups (25 win->lose blunders)",
}


#: the keep-rates MCTS at its defaults does not reach yet (strict: the test fails once it passes).
#: After MCTS-Solver stopped returning to moves proven lost (measured, seed 0): Carrots and
#: Broccoli 3x3 (20 games; dice: a move keeps the value only when its expected result is the best
#: one's within 1e-6) kept 95.5% of its moves, mean loss 0.0020 of expected result per move (was
#: 94.7%, 0.0038; 93.2% at 1,000 playouts without the solver); Petal Battle 6 (40 games) 95.4%,
#: mean loss 0.045 (was 94.4%, 0.049; 92.7% at 1,000). Both are close to the line: 95% lies
#: inside their Wilson intervals ([93.5%, 97.0%] and [93.1%, 96.9%]).
#: Carrots and Broccoli 3x3's 95.5% was one lucky 20-game sample: with 60 games (seed 2,
#: 2026-12-06) it keeps 92.3% with every move searched and 91.4% with symmetric moves searched
#: once (the default; at the symmetric positions themselves that keeps more: 44 of 76 best moves
#: against 39), and 88.4% with this test's seed 0.
KNOWN_WEAK_KEEP: dict[str, str] = {
    "carrots-3x3": "88.4% [85.3%, 90.9%] of moves kept (seed 0, 20 games); 91-92% over 60 games (2026-12-06)",
    "greener-3x4": "94.7% [92.5%, 96.3%] of moves kept, decisive ones 80.9% (2026-12-06, Python tree; 94.8%, decisive 81.8%, on the compiled tree)",
}


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    return tmp_path_factory.mktemp("tables")


def _calibration(name, preset, games, cap, tables):
    """MCTS at its defaults calibrated on ``name``'s ``preset`` (once per module for both tests)."""
    if (name, preset) not in _CALIBRATIONS:
        cls = game_class(name)
        game = cls.from_params(cls.presets[preset])
        sol = solve(game, out=tables)
        _CALIBRATIONS[name, preset] = calibrate(game, MCTSPlayer(), sol, games=games, seed=0, max_moves=cap)
        print(_CALIBRATIONS[name, preset].summary())
    return _CALIBRATIONS[name, preset]


def _case(c, known):
    """A case, strictly expected to fail when ``known`` names it (``game-preset``)."""
    key = f"{c[0]}-{c[1]}"
    return pytest.param(*c, marks=pytest.mark.xfail(strict=True, reason=known[key])) if key in known else c


@pytest.mark.parametrize("name, preset, games, cap", [_case(c, KNOWN_WEAK_KEEP) for c in CASES],
                         ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_mcts_at_its_default_budget_keeps_the_exact_value(name, preset, games, cap, tables):
    cal = _calibration(name, preset, games, cap, tables)
    assert cal.moves > 0
    assert cal.share_kept[0] >= 0.95, cal.summary()


@pytest.mark.parametrize("name, preset, games, cap", [_case(c, KNOWN_WEAK_VERDICT) for c in CASES],
                         ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_mcts_self_play_reproduces_the_exact_verdict(name, preset, games, cap, tables):
    cal = _calibration(name, preset, games, cap, tables)
    wins = round(cal.first_player["win"][0] * games)
    losses = round(cal.first_player["loss"][0] * games)
    if cal.exact.get("value") in ("draw", "tie"):
        assert wilson(games - wins - losses, games, confidence=0.999)[0] > 0.5, cal.summary()
        return
    if cal.exact.get("value") in ("win", "lose"):
        winner = wins if cal.exact["value"] == "win" else losses
        assert wilson(winner, games, confidence=0.999)[0] > 0.5, cal.summary()
        return
    lo, hi = wilson(wins, games, confidence=0.999)
    assert lo <= cal.exact_win_share <= hi, cal.summary()
