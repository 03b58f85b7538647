"""Measured sizes of presets live in one data file (solver/pipeline/measured.toml), read by the
memory plan, the whole-graph solver's refusal and `pyramids list` (issue 31).

1. Every entry names a game and a preset that exist, with sizes that make sense.
2. The numbers are the ones the estimate uses: Carrots 4x4 is refused by its measured largest tier.
3. A game without entries (a plug-in) has no estimate, as before.
4. The file ships with the package, and ``python -m solver.pipeline.remeasure`` writes an entry
   from a tiered table.
"""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path

import pytest

from solver.games import REGISTRY, game_class, make_game
from solver.pipeline import measured, memory, remeasure, tiered
from tests.toygames import Subtraction

ROOT = Path(__file__).resolve().parents[1]
ENTRIES = sorted(measured.entries())


@pytest.mark.parametrize("game,preset", ENTRIES, ids=[f"{g}-{p}" for g, p in ENTRIES])
def test_every_entry_names_an_existing_game_and_preset(game, preset):
    assert game in REGISTRY
    cls = game_class(game)
    assert preset in cls.presets
    entry = measured.of(game, preset)
    assert entry.measured, "say what was measured, how and when"
    assert entry.positions is None or entry.positions > 0
    if entry.has_tier_sizes:
        assert 0 < entry.largest_tier <= entry.positions
    if entry.too_large is not None:
        assert preset != cls.largest_preset  # the recommended preset solves whole
    # the entry is found from a game of that variant
    assert measured.of_game(cls.from_params(cls.presets[preset])) == entry


def test_the_file_says_where_and_how_it_was_measured():
    about = measured.about()
    assert "24 GiB" in about["machine"] and "python -m solver.pipeline.remeasure" in about["remeasure"]


@pytest.mark.parametrize("game,preset", [e for e in ENTRIES if measured.of(*e).has_tier_sizes],
                         ids=[f"{g}-{p}" for g, p in ENTRIES if measured.of(g, p).has_tier_sizes])
def test_the_estimate_uses_the_measured_sizes(game, preset, monkeypatch):
    cls = game_class(game)
    instance = cls.from_params(cls.presets[preset])
    entry = measured.of(game, preset)
    est = tiered.estimate(instance)
    assert (est["positions"], est["largest_tier"], est["at_least"]) == (entry.positions, entry.largest_tier,
                                                                       entry.at_least)
    # change the file's number: the estimate follows it
    monkeypatch.setitem(measured.entries(), (game, preset), dataclasses.replace(entry, largest_tier=1_000))
    assert tiered.estimate(instance)["largest_tier"] == 1_000


PEAKS = [e for e in ENTRIES if measured.of(*e).peak_disk_bytes is not None]


@pytest.mark.parametrize("game,preset", PEAKS, ids=[f"{g}-{p}" for g, p in PEAKS])
def test_the_disk_estimate_covers_the_measured_peak_and_not_much_more(game, preset):
    """The disk a tiered solve is refused by is at least what a whole run of the preset was seen
    to hold, and at most a third more: an estimate twice the need refused Override 3x3-2 (75.5 GB
    asked, 70.8 GB free) on the machine that then solved it holding 43.5 GB at most."""
    cls = game_class(game)
    need = tiered.estimate(cls.from_params(cls.presets[preset]))["disk"]
    peak = measured.of(game, preset).peak_disk_bytes
    assert peak <= need <= 4 * peak // 3, (need / peak)


def test_a_disk_peak_is_measured():
    assert PEAKS, "measured.toml records the disk peak of at least one whole tiered run"


def test_carrots_4x4_is_refused_by_what_the_data_file_says(monkeypatch):
    game = make_game("carrots", size=4, colours=1, per_colour=1, group=3)
    entry = measured.of("carrots", "4x4")
    assert entry.at_least and entry.largest_tier == 50_693_916 and entry.not_here
    mem = 22 * 2**30
    est = tiered.planned_estimate(game, mem)
    assert est["at_least"] and est["largest_tier"] == 50_693_916
    notes: list[str] = []
    monkeypatch.setattr(memory, "available_memory", lambda: mem)
    from solver.errors import TooBigError

    with pytest.raises(TooBigError, match="not expected to finish here: the tiers of 0-2 planted"):
        tiered.check_estimate(game, ROOT, notes)
    # without the file's reason the estimate decides: the largest tier measured fits now ...
    monkeypatch.setitem(measured.entries(), ("carrots", "4x4"), dataclasses.replace(entry, not_here=None))
    tiered.check_estimate(game, ROOT, notes)
    assert "50,693,916" in notes[-1]
    # ... and a (pretended) larger one does not: the refusal comes from the data file's number
    monkeypatch.setitem(measured.entries(), ("carrots", "4x4"),
                        dataclasses.replace(entry, not_here=None, largest_tier=500_000_000))
    with pytest.raises(TooBigError, match="at least"):
        tiered.check_estimate(game, ROOT, notes)


def test_the_whole_graph_refusal_quotes_the_measured_reason():
    game = make_game("override", size=4, line=4, per_size=1)
    assert measured.large_reason(game) == measured.too_large("override", "4x4")
    assert "68,675,533 positions" in measured.large_presets("override")["4x4"]
    assert measured.large_reason(make_game("override", size=3, line=3, per_size=1)) is None
    # a game's own formula answers for what the file does not hold (Petal Battle's boards)
    petal = make_game("petal", petals=18, run=18, per_size=9)
    assert measured.of_game(petal) is None and measured.large_reason(petal) == petal.known_large()


def test_a_game_without_entries_has_no_estimate():
    game = Subtraction.from_params(n=7)
    assert measured.of_game(game) is None and measured.large_reason(game) is None
    assert tiered.estimate(game) is None
    assert measured.large_presets("subtraction") == {}
    assert measured.of("override", None) is None


def test_a_malformed_entry_is_named(tmp_path):
    path = tmp_path / "m.toml"
    path.write_text('[games.override."3x3"]\npositions = 10\nlargest = 3\n')
    with pytest.raises(ValueError, match=r"\[games.override.'3x3'\] has an unknown field 'largest'"):
        measured.read(path)
    path.write_text('[games.override."3x3"]\npositions = "ten"\n')
    with pytest.raises(ValueError, match="positions = 'ten' is not of type int"):
        measured.read(path)


def test_the_data_file_ships_with_the_package():
    with open(ROOT / "pyproject.toml", "rb") as fh:
        data = tomllib.load(fh)["tool"]["setuptools"]["package-data"]
    assert measured.DATA.name in data["solver.pipeline"]
    assert measured.DATA.parent == ROOT / "solver" / "pipeline" and measured.DATA.exists()


def test_remeasure_prints_the_entry_of_a_tiered_table(tmp_path, capsys):
    from solver.api import solve

    game = make_game("override", size=2, line=2, per_size=1)
    sol = solve(game, out=tmp_path, tiered=True, workers=1)
    folder = next(p for p in (tmp_path / "override").iterdir() if not p.name.startswith("."))
    got = remeasure.tier_sizes(folder)
    assert got["positions"] == sol.meta["counts"]["positions"] and not got["at_least"]
    sizes = {t["tier"]: t["positions"] for t in sol.meta["tiers"]}
    assert got["largest_tier"] == max(sizes.values()) and got["tiers"] == len(sizes)
    assert remeasure.main([str(folder)]) == 0
    text = capsys.readouterr().out
    entry = tomllib.loads(text)["games"]["override"]["<not a preset>"]
    assert measured.Measured(**entry).positions == got["positions"]
    assert remeasure.main([str(tmp_path / "nothing")]) == 2
    assert "neither a tiered table nor" in capsys.readouterr().err


def test_a_class_that_still_sets_measured_sizes_is_told_they_are_not_read():
    import warnings

    from solver.core.game import Game

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")

        class OldPlugin(Game):  # noqa: F841 - defining it is the test
            tier_sizes = {"small": (10, 5)}

    assert [str(w.message) for w in caught if issubclass(w.category, FutureWarning)] == [
        "OldPlugin: tier_sizes is no longer read from a game class; measured preset sizes live in "
        "solver/pipeline/measured.toml (a game without an entry has no size estimate)"]
