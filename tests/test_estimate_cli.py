"""`pyramids estimate` and `pyramids calibrate`: self-play results marked ESTIMATED with intervals,
reproducible with --seed whatever --jobs, the calibration quoted by the estimate report, and one
line for every bad option."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from solver.api import make_game
from tests.clirun import run

BLAM = ["blam", "--preset", "3x3"]


def test_estimate_is_reproducible_and_marked_estimated(capsys, tmp_path):
    args = ["estimate", *BLAM, "--player", "greedy", "--games", "60", "--seed", "3", "--reports", str(tmp_path)]
    code, out, err = run(capsys, *args, "--jobs", "1", "--json")
    assert code == 0, err
    one = json.loads(out)
    code, out, err = run(capsys, *args, "--jobs", "2", "--json")
    two = json.loads(out)
    assert one["estimated"] is True
    for k in ("wins", "losses", "ties", "unfinished", "mean_plies", "openings"):
        assert one[k] == two[k]
    assert one["wins"] + one["losses"] + one["ties"] + one["unfinished"] == 60
    share, lo, hi = one["shares"]["win"]
    assert share == pytest.approx(one["wins"] / 60) and lo <= share <= hi
    md = open(one["report"]).read()
    assert "ESTIMATED" in md and "95% interval" in md and "No calibration" in md
    # the command quoted is the one main() was given (here from Python, as analysis.shipped calls
    # it), not the test runner's own command line
    assert "Made with `pyramids estimate blam --preset 3x3 --player greedy --games 60 --seed 3" in md


def test_calibration_is_quoted_by_the_estimate_report(capsys, tmp_path):
    code, out, err = run(capsys, "calibrate", *BLAM, "--out", str(tmp_path / "tables"), "--player", "greedy",
                         "--games", "5", "--reports", str(tmp_path), "--json")
    assert code == 0, err
    cal = json.loads(out)
    assert 0 <= cal["kept"] <= cal["moves"] and cal["exact"]["value"] == "win"
    code, out, err = run(capsys, "estimate", *BLAM, "--player", "greedy", "--games", "20",
                         "--reports", str(tmp_path), "--json")
    md = open(json.loads(out)["report"]).read()
    assert "kept the exact value" in md and f"{cal['moves']} moves" in md
    assert 0 < cal["decisive"] <= cal["moves"] and 0 <= cal["decisive_kept"] <= cal["decisive"]
    assert f"Counting only the {cal['decisive']} decisive moves" in md
    assert f"{cal['clean_games']} of its {cal['games']} games had no blunder" in md


def test_calibrations_of_players_alike_for_40_characters_are_kept_apart(capsys, tmp_path):
    """Two players whose descriptions agree on their first 40 characters (``simultaneous=uniform``
    and ``simultaneous=ucb``) are calibrated into two files (they once shared one, cut at 40), a
    short description keeps its plain name, and an estimate report never quotes a calibration
    file written for another player."""
    from analysis.estimate_report import calibration_path

    game = make_game("blam", rows=3, cols=3)
    one = "mcts(budget=100, c=1.4, playout_moves=30, simultaneous=uniform)"
    two = "mcts(budget=100, c=1.4, playout_moves=30, simultaneous=ucb, gamma=0.1)"
    assert calibration_path(tmp_path, game, one) != calibration_path(tmp_path, game, two)
    assert calibration_path(tmp_path, game, "greedy(evaluation=race)").name == "greedy-evaluation=race.json"
    code, out, err = run(capsys, "calibrate", *BLAM, "--out", str(tmp_path / "tables"), "--player", "greedy",
                         "--games", "3", "--reports", str(tmp_path), "--json")
    assert code == 0, err
    path = calibration_path(tmp_path, game, "greedy")
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "player": "someone else"}))
    code, out, err = run(capsys, "estimate", *BLAM, "--player", "greedy", "--games", "4",
                         "--reports", str(tmp_path), "--json")
    md = open(json.loads(out)["report"]).read()
    assert "No calibration" in md and "kept the exact value" not in md


@pytest.mark.parametrize("extra, words", [
    (["--player", "nobody"], "unknown player"),
    (["--player", "greedy", "--budget", "10"], "--budget is an option of mcts"),
    (["--player", "mcts", "--budget", "0"], "budget must be at least 1"),
    (["--games", "0"], "--games 0"),
    (["--games", "-5"], "--games -5"),
    (["--jobs", "0"], "--jobs 0"),
    (["--player", "mcts", "--option", "foo=1"], "no player has that option"),
    (["--player", "mcts", "--option", "playout_moves"], "must be NAME=VALUE"),
    (["--player", "mcts", "--option", "budget=3"], "use --budget 3"),
    (["--player", "mcts", "--option", "playout_moves=0"], "playout_moves must be at least 1"),
    (["--player", "mcts", "--option", "simultaneous=cfr"], "simultaneous must be 'rm'"),
    (["--player", "greedy", "--option", "c=1"], "--option c is an option of mcts"),
    (["--player", "greedy", "--option1", "c=1"], "seat 1's player greedy has no option 'c'"),
    (["--player1", "mcts", "--player2", "greedy", "--option2", "c=1"], "seat 2's player greedy has no option"),
    (["--player", "greedy", "--option2", "evaluation"], "--option2 'evaluation' must be NAME=VALUE"),
    (["--player", "greedy", "--option1", "evaluation=race", "--games", "2"], "blam has no evaluation 'race'"),
])
def test_bad_estimate_options_are_one_line(capsys, tmp_path, extra, words):
    code, out, err = run(capsys, "estimate", *BLAM, "--reports", str(tmp_path), *extra)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2 and len(lines) == 1 and words in lines[0], err


def test_player_options_reach_the_players(capsys, tmp_path):
    """``--option NAME=VALUE`` sets any player option; the report and JSON name the players with
    their options, and a different option gives a different report folder."""
    base = ["estimate", *BLAM, "--player", "mcts", "--budget", "3", "--games", "2", "--reports", str(tmp_path),
            "--json"]
    code, out, err = run(capsys, *base, "--option", "playout_moves=3", "--option", "c=0.5")
    assert code == 0, err
    one = json.loads(out)
    assert "playout_moves=3" in one["player1"] and "c=0.5" in one["player1"] and one["player1"] == one["player2"]
    code, out, err = run(capsys, *base)
    assert code == 0, err
    assert json.loads(out)["report"] != one["report"]


def test_seat_options_reach_one_seat_only(capsys, tmp_path):
    """``--option1``/``--option2`` set an option of one seat's player (over ``--option``): here
    Carrots and Broccoli's racing evaluation for the first seat only."""
    base = ["estimate", "carrots", "--preset", "3x3", "--player", "greedy", "--games", "6", "--reports", str(tmp_path),
            "--json"]
    code, out, err = run(capsys, *base, "--option1", "evaluation=race")
    assert code == 0, err
    one = json.loads(out)
    assert (one["player1"], one["player2"]) == ("greedy(evaluation=race)", "greedy")
    code, out, err = run(capsys, *base, "--option", "evaluation=race", "--option2", "evaluation=default")
    assert code == 0, err
    two = json.loads(out)
    assert (two["player1"], two["player2"]) == ("greedy(evaluation=race)", "greedy")
    assert two["wins"] == one["wins"] and two["report"] == one["report"]


def _compared_then_alone(capsys, tmp_path, player, option, own, other):
    """``pyramids estimate`` with ``--compare-<option> other`` (and its own value again, which is
    left out) and the same estimate run alone at ``other``: the JSON of both, after checking that
    the compared games are the lone run's and the report shows both, weaker first."""
    base = ["estimate", *BLAM, "--player", player, "--games", "6", "--seed", "4", "--jobs", "1",
            "--reports", str(tmp_path), "--json"]
    code, out, err = run(capsys, *base, f"--{option}", str(own), f"--compare-{option}", str(other),
                         f"--compare-{option}", str(own))
    assert code == 0, err
    main = json.loads(out)
    assert len(main["strengths"]) == 1 and f"{option}={other}" in main["strengths"][0]["player1"]
    code, out, err = run(capsys, *base, f"--{option}", str(other), "--no-report")
    alone = json.loads(out)
    for k in ("wins", "losses", "ties", "unfinished", "openings", "mean_plies"):
        assert main["strengths"][0][k] == alone[k]
    saved = json.loads((Path(main["report"]).parent / "estimate.json").read_text())
    assert saved["strengths"][0]["wins"] == alone["wins"]
    md = open(main["report"]).read()
    section = md[md.index("How the verdict moves with the player's strength"):]
    weak, strong = (section.index(f"| {player}({option}={v}") for v in (other, own))
    assert weak < strong and "(this report)" in section[strong:strong + 80]
    assert f"{100 * alone['shares']['win'][0]:.1f}% [" in section[weak:strong]
    return main, alone, section, (weak, strong)


def _refused_in_one_line(capsys, tmp_path, cases):
    for extra, words in cases:
        code, out, err = run(capsys, "estimate", *BLAM, "--reports", str(tmp_path), *extra)
        lines = [ln for ln in err.splitlines() if ln.strip()]
        assert code == 2 and len(lines) == 1 and words in lines[0], err


def test_compared_budgets_are_the_same_games_side_by_side(capsys, tmp_path):
    """Issue 36 item 4: ``--compare-budget`` plays the same games at other budgets; each compared
    estimate equals ``pyramids estimate`` run alone at that budget, the report shows every budget
    (weakest first) with its calibration where one is on file, and bad uses are one line."""
    code, out, err = run(capsys, "calibrate", *BLAM, "--out", str(tmp_path / "tables"), "--player", "mcts",
                         "--budget", "2", "--games", "2", "--reports", str(tmp_path), "--json")
    assert code == 0, err
    cal = json.loads(out)
    main, alone, section, (weak, strong) = _compared_then_alone(capsys, tmp_path, "mcts", "budget", 5, 2)
    assert main["strengths"][0]["player1"] == "mcts(budget=2, c=1.4, playout_moves=200)"
    assert f"of {cal['moves']:,} moves" in section[weak:strong] and "not on file" in section[strong:]
    assert "at each budget (playouts a move)" in section
    _refused_in_one_line(capsys, tmp_path, (
        (["--player", "greedy", "--compare-budget", "3"], "--compare-budget is for mcts players"),
        (["--player", "mcts", "--compare-budget", "0"], "--compare-budget 0 must be at least 1")))
    code, out, err = run(capsys, "calibrate", *BLAM, "--player", "greedy", "--option2", "evaluation=default",
                         "--reports", str(tmp_path))
    assert code == 2 and "one player in every seat" in err


def test_compared_depths_are_the_same_games_side_by_side(capsys, tmp_path):
    """``--compare-depth`` does for alpha-beta what ``--compare-budget`` does for MCTS: the same
    games searched at other depths, each equal to the estimate run alone at that depth, shown
    shallowest first in plies; bad uses are one line."""
    main, alone, section, _ = _compared_then_alone(capsys, tmp_path, "alphabeta", "depth", 2, 1)
    assert main["strengths"][0]["player1"] == "alphabeta(depth=1)"
    assert "at each depth (plies searched)" in section and "From 1 to 2 plies searched" in section
    _refused_in_one_line(capsys, tmp_path, (
        (["--player", "mcts", "--compare-depth", "3"], "--compare-depth is for alphabeta players"),
        (["--player", "alphabeta", "--compare-depth", "0"], "--compare-depth 0 must be at least 1")))


def test_alphabeta_at_a_secret_choice_names_the_players_that_can(capsys, tmp_path):
    code, out, err = run(capsys, "estimate", "petal", "--preset", "6", "--player", "alphabeta", "--games", "1",
                         "--reports", str(tmp_path))
    assert code == 2 and "mcts" in err and "random" in err


def test_tune_estimate_compares_variants_by_self_play(capsys, tmp_path):
    code, out, err = run(capsys, "tune", "greener", "--vary", "tiebreak=tallest,none", "--estimate", "--games", "40",
                         "--player", "random", "--seed", "2", "--reports", str(tmp_path))
    assert code == 0, err
    assert "ESTIMATED" in out
    md = next(tmp_path.rglob("tune-estimate-*/report.md")).read_text()
    assert "ESTIMATED" in md and "95%" in md
    # each row is the same estimate `pyramids estimate` gives for that variant and seed
    for tb in ("tallest", "none"):
        code, o, e = run(capsys, "estimate", "greener", "--set", f"tiebreak={tb}", "--games", "40", "--player",
                         "random", "--seed", "2", "--no-report", "--json")
        share = json.loads(o)["shares"]["win"][0]
        line = next(ln for ln in out.splitlines() if ln.startswith(tb))
        assert f"{100 * share:.1f}%" in line


def test_the_full_game_is_named_so_not_a_custom_variant(capsys, tmp_path):
    """Issue 37: a report of the default variant (the shipped full-size estimates) is titled
    "(full game)"; changing any parameter makes it a custom variant, a preset keeps its name."""
    from solver.api import make_game
    from solver.games import game_class

    for name in ("override", "greener", "blam", "petal", "carrots"):
        cls = game_class(name)
        assert cls.from_params({}).display_name().endswith("(full game)"), name
        first = next(iter(cls.presets))
        assert cls.from_params(cls.presets[first]).display_name().endswith(f"(preset {first})"), name
    assert make_game("blam", rows=7).display_name() == "Blam! (custom variant)"
    code, out, err = run(capsys, "estimate", "blam", "--player", "random", "--games", "2",
                         "--reports", str(tmp_path), "--json")
    assert code == 0, err
    md = open(json.loads(out)["report"]).read()
    assert md.startswith("# Balance estimate (ESTIMATED, self-play): Blam! (full game)\n")


def test_secret_choice_measures_are_quoted_by_the_estimate_report(capsys, tmp_path):
    """A calibration on a game with secret choices measures the player's mixes there (JSON
    fields), and the estimate report quotes them."""
    petal = ["petal", "--set", "petals=4", "--set", "run=3", "--set", "per_size=2"]
    code, out, err = run(capsys, "calibrate", *petal, "--out", str(tmp_path / "tables"), "--player", "random",
                         "--games", "3", "--reports", str(tmp_path), "--json")
    assert code == 0, err
    cal = json.loads(out)
    assert cal["secret_choices"] > 0 and 0 < cal["secret_support_share"] <= 1
    assert 0 < cal["secret_exploitability"] <= cal["secret_exploitability_max"]
    code, out, err = run(capsys, "estimate", *petal, "--player", "random", "--games", "4",
                         "--reports", str(tmp_path), "--json")
    assert code == 0, err
    md = open(json.loads(out)["report"]).read()
    assert (f"At the {cal['secret_choices']} secret choices met" in md
            and f"would take {cal['secret_exploitability']:.3f} on average" in md)


def test_a_stopped_estimate_resumes_from_its_work_folder_to_the_same_games(capsys, tmp_path, monkeypatch):
    """`--work DIR` keeps each finished game as it ends: an estimate stopped after 7 games, run
    again, plays only the others, and a larger --games adds to them; the records equal one
    uninterrupted run's, game by game. A line cut short by a kill is played again; another
    estimate's file is refused in one line."""
    import solver.players.selfplay as sp

    game = make_game("override", size=3, line=3, per_size=1)
    whole = sp.estimate(game, "greedy", games=20, seed=4)
    real, played = sp.play_game, []

    def stop_after_7(*a, **k):
        if len(played) == 7:
            raise KeyboardInterrupt
        played.append(1)
        return real(*a, **k)

    monkeypatch.setattr(sp, "play_game", stop_after_7)
    with pytest.raises(KeyboardInterrupt):
        sp.estimate(game, "greedy", games=12, seed=4, work=tmp_path / "w")
    monkeypatch.setattr(sp, "play_game", real)
    (path,) = (tmp_path / "w").iterdir()
    assert len(path.read_text().splitlines()) == 1 + 7
    with open(path, "a") as fh:  # a kill in the middle of a line
        fh.write('{"i": 7, "resu')
    again = sp.estimate(game, "greedy", games=12, seed=4, work=tmp_path / "w")
    assert again.kept_games == 7 and again.records == whole.records[:12]
    more = sp.estimate(game, "greedy", games=20, seed=4, work=tmp_path / "w")
    assert more.kept_games == 12 and more.records == whole.records
    assert (more.wins, more.losses, more.unfinished) == (whole.wins, whole.losses, whole.unfinished)
    # through the command: every game kept, the line says so
    code, out, err = run(capsys, "estimate", "override", "--set", "size=3", "--set", "line=3", "--set",
                         "per_size=1", "--player", "greedy", "--games", "20", "--seed", "4", "--jobs", "1",
                         "--work", str(tmp_path / "w"), "--no-report")
    assert code == 0 and "20 of them kept from an earlier run" in out, err
    # the file of another estimate under this one's name: refused in one line
    text = path.read_text().splitlines()
    path.write_text("\n".join([text[0].replace('"seed": 4', '"seed": 5')] + text[1:]) + "\n")
    code, out, err = run(capsys, "estimate", "override", "--set", "size=3", "--set", "line=3", "--set",
                         "per_size=1", "--player", "greedy", "--games", "20", "--seed", "4", "--jobs", "1",
                         "--work", str(tmp_path / "w"), "--no-report")
    assert code == 2 and "another estimate" in err and len(err.strip().splitlines()) == 1, err
