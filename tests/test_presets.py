"""Every preset that `pyramids list` shows works in every command: solve, show, play, report and
tune (the presets listed as beyond the in-memory solver are refused at once, in one line).

The larger presets take minutes and are marked slow (`make test-all` runs them).
"""

from __future__ import annotations

import json

import pytest

from tests.clirun import run
from solver.games import REGISTRY, game_class
from solver.pipeline import measured

#: presets that solve in a few seconds; the others are slow
QUICK = {("greener", "3x3"), ("greener", "3x3-3"), ("blam", "3x3")}


def _cases():
    for game in sorted(REGISTRY):
        cls = game_class(game)
        for preset in cls.presets:
            if measured.too_large(game, preset) is not None:
                continue
            marks = () if (game, preset) in QUICK else (pytest.mark.slow,)
            yield pytest.param(game, preset, id=f"{game}-{preset}", marks=marks)


def _large():
    for game in sorted(REGISTRY):
        for preset in measured.large_presets(game):
            yield pytest.param(game, preset, id=f"{game}-{preset}")




@pytest.fixture(scope="module")
def roots(tmp_path_factory):
    return tmp_path_factory.mktemp("tables"), tmp_path_factory.mktemp("reports")


@pytest.mark.parametrize("game,preset", list(_cases()))
def test_preset_in_every_command(capsys, roots, game, preset):
    tables, reports = roots
    common = [game, "--preset", preset, "--out", str(tables)]
    code, out, err = run(capsys, "solve", *common, "--json", "--quiet")
    assert code == 0, err
    summary = json.loads(out)
    assert summary["positions"] > 0 and summary["game"] == game

    code, out, err = run(capsys, "show", *common, "--json")
    assert code == 0, err
    shown = json.loads(out)
    assert shown["game"] == game and shown["moves"], shown

    # the computer (or the dice) moves first, then the input ends: a goodbye, exit code 0
    code, out, err = run(capsys, "play", *common, "--side", "2", "--seed", "1", stdin="")
    assert code == 0 and "goodbye" in out, (out, err)

    # the slow presets' random-play figures are simulated (seeded) to keep the suite short; the
    # exact path is covered by the quick presets and by tests/test_report.py
    # (not for Override 3x3: most of its random games never end, which simulation follows to the
    # move cap, so its exact computation is the quicker one)
    fast = [] if (game, preset) in QUICK or game == "override" else ["--exact-limit", "0"]
    code, out, err = run(capsys, "report", *common, "--reports", str(reports), *fast)
    assert code == 0, err
    report = reports / game / game_class(game).from_params(game_class(game).presets[preset]).variant.variant_id()
    assert (report / "report.md").exists() and (report / "report.html").exists()

    # a one-variant sweep of the preset itself reuses its table
    p = game_class(game).params[-1]
    value = game_class(game).from_params(game_class(game).presets[preset]).variant.as_text()[p.name]
    code, out, err = run(capsys, "tune", *common, "--vary", f"{p.name}={value}", "--reports", str(reports),
                         *fast)
    assert code == 0, err
    assert "report written" in out


@pytest.mark.parametrize("game,preset", list(_large()))
def test_large_presets_are_refused_at_once(capsys, tmp_path, game, preset):
    """By the whole-graph solver (presets of games that name tiers go tier by tier by default)."""
    code, out, err = run(capsys, "solve", game, "--preset", preset, "--no-tiered", "--out", str(tmp_path))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "--max-positions 0" in err
    code, out, err = run(capsys, "list", game)
    assert code == 0 and "too large" in out
