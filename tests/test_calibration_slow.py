"""Calibration of the MCTS player at its default budget against the exact tables (slow suite).

On each game's exactly solved small preset, MCTS with its defaults (1,000 playouts a move)
must keep the exact value on at least 95% of its moves, and its self-play must reproduce the
exact verdict at the start:

* random setups, dice or secret choices (the first player wins with an exact chance between 0
  and 1): the first player's share of self-play wins holds that chance in its 99.9% Wilson
  interval;
* a forced win (or loss) for the first player: that side wins most self-play games (the 99.9%
  interval of its share lies above one half). Not every game: one weak move at the first ply,
  where MCTS's random playouts are least informed, loses a forced win (measured: MCTS keeps
  97.6% of its moves on Blam! 3x3 but only 29 of 40 first moves (40 games, seed 0), so the first player wins 75%
  of self-play games);
* a draw: most self-play games are drawn (the 99.9% interval of the drawn share, ties and games
  stopped at the move cap, lies above one half; measured on Override 3x3: 16 of 20 drawn, 4
  lost by the side that blundered a draw, while 99.6% of the moves kept the exact value).

The expected values are the exact tables' (solved here), never numbers copied from the players.
Run with ``pytest -m slow tests/test_calibration_slow.py`` (about 30-60 minutes on 2 cores).
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
    ("override", "3x3", 40, 60),
    ("carrots", "3x3", 40, 100),
    ("petal", "6", 40, 200),
]


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    return tmp_path_factory.mktemp("tables")


@pytest.mark.parametrize("name, preset, games, cap", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_mcts_at_its_default_budget_keeps_the_exact_value_and_verdict(name, preset, games, cap, tables):
    cls = game_class(name)
    game = cls.from_params(cls.presets[preset])
    sol = solve(game, out=tables)
    cal = calibrate(game, MCTSPlayer(), sol, games=games, seed=0, max_moves=cap)
    print(cal.summary())
    assert cal.moves > 0
    assert cal.share_kept[0] >= 0.95, cal.summary()
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
