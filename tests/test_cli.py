"""The `pyramids` command: outputs, JSON fields, one-line errors, scripted play."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from solver.cli import main

SMALL = ["--set", "size=2", "--set", "line=2", "--set", "per_size=1"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_shows_parameters_and_presets(capsys):
    code, out, _ = run(capsys, "list", "override")
    assert code == 0
    for name in ("size=5", "line=5", "per_size=5", "centre_rule=on", "no_undo=on", "--preset 3x3"):
        assert name in out


def test_solve_prints_summary_and_reuses_table(capsys, tmp_path):
    code, out, _ = run(capsys, "solve", "override", *SMALL, "--out", str(tmp_path))
    assert code == 0
    assert "positions" in out and "positions/s" in out and "table" in out
    assert "start" in out and "player 1" in out
    code, out, _ = run(capsys, "solve", "override", *SMALL, "--out", str(tmp_path), "--json")
    summary = json.loads(out)
    assert summary["reused_table"] is True
    assert sum(summary["by_value"].values()) == summary["positions"]


def test_show_json_fields_and_move_values(capsys, tmp_path):
    code, out, _ = run(capsys, "show", "override", *SMALL, "--out", str(tmp_path), "--json")
    assert code == 0
    obj = json.loads(out)
    assert {"game", "variant", "position", "to_move", "value", "remoteness", "moves"} <= set(obj)
    assert obj["game"] == "override" and obj["variant"]["size"] == "2"
    assert obj["value"] in ("win", "lose", "tie", "draw")
    moves = obj["moves"]
    assert moves and all({"move", "value", "remoteness"} <= set(m) for m in moves)
    # the position's value is its best move's value (the first: best first)
    assert moves[0]["value"] == obj["value"]
    if obj["value"] == "win":
        assert obj["remoteness"] == moves[0]["remoteness"] + 1


def test_show_after_moves(capsys, tmp_path):
    code, out, _ = run(capsys, "show", "override", *SMALL, "--out", str(tmp_path), "--json")
    first = json.loads(out)["moves"][0]["move"]
    code, out, _ = run(capsys, "show", "override", *SMALL, "--out", str(tmp_path), "--json",
                       "--moves", first)
    after = json.loads(out)
    assert after["to_move"] == 2


@pytest.mark.parametrize("argv,fragment", [
    (["solve", "nosuchgame"], "unknown game"),
    (["solve", "override", "--set", "colour=red"], "no parameter"),
    (["solve", "override", "--set", "size=three"], "integer"),
    (["solve", "override", "--set", "size=3", "--set", "line=4"], "line"),
    (["solve", "override", "--set", "size3"], "name=value"),
    (["show", "override", *SMALL, "--moves", "zz9"], "not a legal move"),
    (["solve", "override", "--preset", "huge"], "no preset"),
])
def test_bad_input_is_one_line(capsys, tmp_path, argv, fragment):
    code, out, err = run(capsys, *argv, "--out", str(tmp_path))
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and fragment in lines[0]
    assert "Traceback" not in err


def test_play_against_perfect_play(tmp_path):
    """A scripted human (player 2) first types an illegal move, then plays the first legal one."""
    from solver.api import solve
    from solver.cli import build_parser, cmd_play
    from solver.games import make_game

    args = build_parser().parse_args(["play", "override", *SMALL, "--out", str(tmp_path), "--side", "2"])
    game = make_game("override", size=2, line=2, per_size=1)
    sol = solve(game, out=tmp_path)
    lines: list[str] = []
    state_box = {"n": 0}

    def fake_input(prompt: str) -> str:
        state_box["n"] += 1
        if state_box["n"] == 1:
            return "xx-yy"
        if state_box["n"] > 30:
            return "quit"
        return "moves"

    # answer "moves" to see the legal list, then pick the first listed move
    answers: list[str] = []

    def scripted(prompt: str) -> str:
        if answers:
            return answers.pop()
        reply = fake_input(prompt)
        return reply

    def output(text: str = "") -> None:
        lines.append(text)
        if text.startswith("legal: "):
            answers.append(text.split()[1])

    assert cmd_play(args, input_fn=scripted, output=output) == 0
    text = "\n".join(lines)
    assert "illegal:" in text  # the bad move was explained and asked again
    assert "computer plays" in text
    assert "game over" in text or "quit" in text or state_box["n"] > 30
    # perfect play: the start is a win for player 1 (see show), so the human cannot win
    if sol.root.value == "win":
        assert "you win" not in text


def test_entry_point_installed():
    proc = subprocess.run([sys.executable, "-m", "solver.cli", "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "solve" in proc.stdout


def test_moves_split_on_commas_when_names_have_spaces():
    from solver.cli import split_moves

    assert split_moves("AL@a1 BL@c3") == ["AL@a1", "BL@c3"]
    assert split_moves("plant rS@b2, pass") == ["plant rS@b2", "pass"]
    assert split_moves("") == []


def test_too_big_variant_is_a_clear_error(capsys, tmp_path):
    code, out, err = run(capsys, "solve", "override", "--preset", "3x3", "--max-positions", "500",
                         "--out", str(tmp_path))
    assert code == 2 and "more than 500 positions" in err and "--max-positions" in err
    assert not list(tmp_path.rglob("*.parquet"))


def test_show_chance_game_json(capsys, tmp_path, monkeypatch):
    """DiceRace to 2 (faces 1 and 2, advance or stay), worked by hand from the side to roll:
    V(1, b) = +1 (any roll finishes). V(0, 1) = 1/2 (roll 2: win) + 1/2 (roll 1: the opponent at
    1 then wins: -1) = 0. V(0, 0) = 1/2 + 1/2 max(advance -> opponent's V(0, 1) = 0, stay ->
    -V(0, 0)) = 1/2. Winning chances: 1/2 (roll 2) + 1/2 * 1/2 (roll 1, advance, the opponent
    rolls 1 and cannot finish, then we finish) = 3/4."""
    import solver.games as games

    monkeypatch.setitem(games.REGISTRY, "dicerace", "tests.toygames:DiceRace")
    code, out, _ = run(capsys, "show", "dicerace", "--out", str(tmp_path), "--json")
    assert code == 0
    obj = json.loads(out)
    assert obj["kind"] == "chance"
    assert obj["expected"] == pytest.approx(0.5, abs=1e-9)
    assert obj["p_win"] == pytest.approx(0.75, abs=1e-9)
    assert [m["probability"] for m in obj["moves"]] == [0.5, 0.5]
    # after rolling a 1: advancing is worth 0 (opponent's V(0, 1) = 0), staying -1/2
    code, out, _ = run(capsys, "show", "dicerace", "--out", str(tmp_path), "--json", "--moves", "roll1")
    moves = {m["move"]: m["expected"] for m in json.loads(out)["moves"]}
    assert moves["advance"] == pytest.approx(0.0, abs=1e-9)
    assert moves["stay"] == pytest.approx(-0.5, abs=1e-9)


def test_show_groups_moves_that_lead_to_symmetric_positions(capsys, tmp_path):
    """Issue 37, item 3: on an empty Blam! 3x3 board the 27 first moves are 9 up to symmetry; show
    prints one line per group ("S@a1 (and 3 symmetric moves)"), --all-moves every move, and --json
    keeps every move and adds "symmetric_moves" (each group's first move -> the others)."""
    import json

    from solver.api import make_game, solve

    base = ["show", "blam", "--preset", "3x3", "--out", str(tmp_path)]
    code, out, err = run(capsys, *base)
    assert code == 0, err
    move_lines = [ln for ln in out.splitlines() if ln.startswith("  ") and "@" in ln]
    assert len(move_lines) == 9 and sum("(and 3 symmetric moves)" in ln for ln in move_lines) == 6
    assert "18 moves that lead to the same positions" in out
    code, out, err = run(capsys, *base, "--all-moves")
    assert len([ln for ln in out.splitlines() if ln.startswith("  ") and "@" in ln]) == 27
    code, out, err = run(capsys, *base, "--json")
    obj = json.loads(out)
    assert len(obj["moves"]) == 27
    groups = obj["symmetric_moves"]
    assert sorted(groups) == ["L@a1", "L@b1", "M@a1", "M@b1", "S@a1", "S@b1"]
    assert sorted(groups["S@a1"]) == ["S@a3", "S@c1", "S@c3"]  # the corners
    # every group is one value: the moves really are alike, checked on the table
    sol = solve(make_game("blam", rows=3, cols=3, per_size=1), out=tmp_path)
    values = {m.move: (m.value, m.remoteness, m.margin) for m in sol.moves(sol.game.initial_state())}
    for first, others in groups.items():
        assert all(values[o] == values[first] for o in others)
