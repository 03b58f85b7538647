"""Calibration of the MCTS player at its default budget against the exact tables (slow suite).

On each game's exactly solved small preset, MCTS with its defaults (1,000 playouts a move)
must keep the exact value on at least 95% of its moves, and its self-play must reproduce the
exact verdict at the start:

* random setups, dice or secret choices (the first player wins with an exact chance between 0
  and 1): the first player's share of self-play wins holds that chance in its 99.9% Wilson
  interval;
* a forced win (or loss) for the first player: that side wins most self-play games (the 99.9%
  interval of its share lies above one half). Not every game: one weak move at the first ply,
  where MCTS's random playouts are least informed, loses a forced win. Blam! 3x3 does not pass
  this yet and is marked as a strict expected failure (``KNOWN_WEAK_VERDICT``, measured below);
* a draw: most self-play games are drawn (the 99.9% interval of the drawn share, ties and games
  stopped at the move cap, lies above one half; measured on Override 3x3 with 100 games: 11 lost
  by the side that blundered a draw, the rest drawn, while 99.6% of the moves kept the exact
  value; 40 games, 34 drawn, were too few for the 99.9% interval).

The expected values are the exact tables' (solved here), never numbers copied from the players.
Run with ``pytest -m slow tests/test_calibration_slow.py`` (about 5 minutes: the playouts run in
the games' compiled kernels, ``tests/test_playouts.py``; measured 3 min 37 s with 40 Override
games, the benchmark running beside it).
"""

from __future__ import annotations

import pytest

from solver.api import solve
from solver.engines.tasks import wilson
from solver.games import game_class
from solver.players import MCTSPlayer, calibrate

pytestmark = pytest.mark.slow

Z999 = 3.2905267314919255

#: (game, preset, self-play games, move cap): the cap ends games that repeat forever (draws)
CASES = [
    ("blam", "3x3", 80, 200),
    ("greener", "3x3", 100, 200),
    ("override", "3x3", 100, 60),
    ("carrots", "3x3", 20, 100),
    ("petal", "6", 40, 200),
]


_CALIBRATIONS: dict[str, object] = {}

#: the verdict MCTS-1000 does not reproduce yet (measured, 80 games, seed 0, compiled playouts): it
#: keeps 96.6% of its moves on Blam! 3x3 but only 46 of its 80 first moves win, so the first player
#: wins 66.2% (99.9% interval reaching below one half) of a forced win. Strict: the test fails once
#: it passes. (Before the compiled playouts: 96.9%, 48 of 80 first moves, 65%.)
KNOWN_WEAK_VERDICT = {
    "blam": "first move: 46/80 winning at 1,000 playouts; first player wins 66% of a forced win (issue 15 note)",
}


#: the keep-rate MCTS-1000 does not reach yet (measured, seed 0, compiled playouts): on Carrots and
#: Broccoli 3x3 (20 games; dice: a move keeps the value only when its expected result is the best
#: one's within 1e-6) it keeps 93.2% of its moves (was 86.5% with the rules' playouts), mean loss
#: 0.0063 of expected result per move; on Petal Battle 6 (40 games) 92.7% (was 89.9%).
KNOWN_WEAK_KEEP = {
    "carrots": "93.2% of moves keep the exact expected result at 1,000 playouts (issue 15 note)",
    "petal": "92.7% of moves keep the exact expected result at 1,000 playouts, 40 games (issue 15 note)",
}


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    return tmp_path_factory.mktemp("tables")


def _calibration(name, preset, games, cap, tables):
    """MCTS at its defaults calibrated on ``name``'s ``preset`` (once per module for both tests)."""
    if name not in _CALIBRATIONS:
        cls = game_class(name)
        game = cls.from_params(cls.presets[preset])
        sol = solve(game, out=tables)
        _CALIBRATIONS[name] = calibrate(game, MCTSPlayer(), sol, games=games, seed=0, max_moves=cap)
        print(_CALIBRATIONS[name].summary())
    return _CALIBRATIONS[name]


@pytest.mark.parametrize("name, preset, games, cap", [
    pytest.param(*c, marks=pytest.mark.xfail(strict=True, reason=KNOWN_WEAK_KEEP[c[0]]))
    if c[0] in KNOWN_WEAK_KEEP else c for c in CASES], ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_mcts_at_its_default_budget_keeps_the_exact_value(name, preset, games, cap, tables):
    cal = _calibration(name, preset, games, cap, tables)
    assert cal.moves > 0
    assert cal.share_kept[0] >= 0.95, cal.summary()


@pytest.mark.parametrize("name, preset, games, cap", [
    pytest.param(*c, marks=pytest.mark.xfail(strict=True, reason=KNOWN_WEAK_VERDICT[c[0]]))
    if c[0] in KNOWN_WEAK_VERDICT else c for c in CASES], ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_mcts_self_play_reproduces_the_exact_verdict(name, preset, games, cap, tables):
    cal = _calibration(name, preset, games, cap, tables)
    wins = round(cal.first_player["win"][0] * games)
    losses = round(cal.first_player["loss"][0] * games)
    if cal.exact.get("value") in ("draw", "tie"):
        assert wilson(games - wins - losses, games, z=Z999)[0] > 0.5, cal.summary()
        return
    if cal.exact.get("value") in ("win", "lose"):
        winner = wins if cal.exact["value"] == "win" else losses
        assert wilson(winner, games, z=Z999)[0] > 0.5, cal.summary()
        return
    lo, hi = wilson(wins, games, z=Z999)
    assert lo <= cal.exact_win_share <= hi, cal.summary()
