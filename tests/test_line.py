"""The principal variation (`show --line`, `Solution.line`): perfect play to the end, checked
against the table move by move and against the rules (the line ends where the table says)."""

from __future__ import annotations

import json

from solver.api import make_game, solve
from solver.core.game import NodeKind, Result
from tests.clirun import run


def test_winning_line_has_the_remoteness_and_ends_in_the_win(tmp_path):
    sol = solve(make_game("blam", rows=3, cols=3, per_size=1), out=tmp_path)
    game = sol.game
    root = sol.root
    steps, ending = sol.line()
    assert ending == "game over" and len(steps) == root.remoteness == 9
    state = game.initial_state()
    for i, st in enumerate(steps):
        # every step is the best move of its position, and its value counts down
        assert st.move == sol.moves(state)[0].move and st.why == "best"
        assert st.remoteness == root.remoteness - 1 - i
        assert st.value == ("win" if st.player == 0 else "lose")
        state = game.play([st.move], state)
    assert game.node_kind(state) == NodeKind.TERMINAL
    out = game.outcome(state)
    assert out.results[0] == Result.WIN and out.margin(0) == root.margin  # the rules agree


def test_draw_line_stops_when_a_position_repeats(tmp_path):
    from tests.toygames import W0, W1, Explicit

    # 0 (player 1) may go to 2 and lose, or to 1; at 1 player 2 may go to 3 and lose, or back to 0
    game = Explicit({0: (0, [2, 1], None), 1: (1, [3, 0], None), 2: (1, [], W1), 3: (0, [], W0)})
    sol = solve(game, out=tmp_path)
    assert sol.root.value == "draw"
    steps, ending = sol.line()
    assert ending == "repeats" and [s.move for s in steps] == ["1", "1"]  # action 1 each: 0 -> 1 -> 0
    assert all(s.value == "draw" for s in steps)


def test_chance_line_takes_the_most_likely_outcome(capsys, tmp_path, monkeypatch):
    import solver.games as games

    monkeypatch.setitem(games.REGISTRY, "dicerace", "tests.toygames:DiceRace")
    code, out, _ = run(capsys, "show", "dicerace", "--out", str(tmp_path), "--line", "--json")
    obj = json.loads(out)
    assert code == 0 and obj["line_end"] in ("game over", "repeats")
    rolls = [s for s in obj["line"] if s["why"] == "most likely roll"]
    assert rolls and all(s["probability"] == 0.5 for s in rolls)
    assert obj["line"][0]["move"] == "roll1"  # of equally likely outcomes, the first


def test_show_line_and_svg_on_the_command_line(capsys, tmp_path):
    code, out, _ = run(capsys, "show", "blam", "--preset", "3x3", "--out", str(tmp_path), "--line",
                       "--svg", str(tmp_path / "b.svg"))
    assert code == 0
    assert "principal variation (9 plies" in out and "the game is over" in out
    assert "    1. player 1: " in out and "    9. player 1: " in out
    text = (tmp_path / "b.svg").read_text()
    assert text.startswith("<svg") or text.startswith("<?xml")
    code, _, err = run(capsys, "show", "blam", "--preset", "3x3", "--out", str(tmp_path), "--svg",
                       str(tmp_path / "no" / "such" / "\0bad.svg"))
    assert code == 2 and err.count("\n") == 1
