"""Declared capabilities (issue 31): a game says when chance occurs (``chance``: never, setup,
in-play) and whether it has secret choices (``secret_choices``); whether it names tiers is read
from whether it overrides ``tier_of`` (``has_tiers``). No caller looks these up with ``getattr``.

1. Every registered game's declaration agrees with the node kinds of small variants (breadth
   first through its batch path), and is not more than some small variant shows.
2. ``pyramids check`` names a wrong declaration in one line, with the attribute to set.
3. Older plug-ins that set ``chance_in_play`` keep working; wrong values are refused at once.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from solver.core.game import CHANCE_LEVELS, Game, NodeKind
from solver.core.selfcheck import check_game
from solver.errors import ProtocolError
from solver.games import REGISTRY, game_class, make_game
from solver.games.petal import Petal
from solver.pipeline import tasks, tiered
from tests.clirun import run
from tests.toygames import DiceRace, Subtraction

ROOT = Path(__file__).resolve().parents[1]

#: small variants of every registered game, together showing each declared capability
SMALL: dict[str, list[dict]] = {
    "override": [{"size": 2, "line": 2, "per_size": 1}],
    "greener": [{"rows": 2, "cols": 2, "black": 1, "white": 1, "setup": "all"},
                {"rows": 2, "cols": 3, "black": 2, "white": 2, "setup": "BWG/GWB"}],
    "blam": [{"rows": 2, "cols": 2, "per_size": 1}, {"rows": 2, "cols": 2, "per_size": 1, "players": 3}],
    "petal": [{"petals": 4, "run": 2, "per_size": 1}, {"petals": 4, "run": 2, "per_size": 1, "sequencing": "open"}],
    "carrots": [{"size": 3, "colours": 1, "per_colour": 1, "group": 2},
                {"size": 3, "colours": 1, "per_colour": 1, "group": 2, "wall": "S"}],
}
#: positions visited per variant (Carrots' smallest variant has 3.9M: its first ones show the dice)
LIMIT = 20_000


def observed(game: Game, limit: int = LIMIT) -> tuple[str, bool]:
    """``(chance, secret_choices)`` that the first ``limit`` positions breadth first from the start
    show: chance ``"in-play"`` when a decision or simultaneous node leads to a chance node,
    ``"setup"`` when chance nodes occur only before that, else ``"never"``."""
    kinds: dict[int, int] = {}
    frontier = np.array([game.encode(game.initial_state())], dtype=np.uint64)
    after_choice: list[np.ndarray] = []
    while len(frontier) and len(kinds) < limit:
        exp = game.expand(frontier)
        kinds.update(zip(frontier.tolist(), exp.kind.tolist()))
        choice = (exp.kind == NodeKind.DECISION) | (exp.kind == NodeKind.SIMULTANEOUS)
        after_choice.append(exp.children[np.repeat(choice, np.diff(exp.offsets))])
        nxt = np.unique(exp.children)
        nxt = nxt[~np.isin(nxt, np.fromiter(kinds, dtype=np.uint64, count=len(kinds)))]
        frontier = nxt[: limit - len(kinds)]
    found = set(kinds.values())
    into_chance = any(kinds.get(k) == NodeKind.CHANCE for k in np.unique(np.concatenate(after_choice)).tolist())
    chance = "in-play" if into_chance else "setup" if NodeKind.CHANCE in found else "never"
    return chance, NodeKind.SIMULTANEOUS in found


def test_every_registered_game_has_small_variants_here():
    assert set(SMALL) == set(REGISTRY)


@pytest.mark.parametrize("name,params", [pytest.param(n, p, id=f"{n}-{i}") for n, ps in SMALL.items()
                                         for i, p in enumerate(ps)])
def test_declared_capabilities_cover_what_small_variants_show(name, params):
    cls = game_class(name)
    chance, secret = observed(make_game(name, params))
    assert CHANCE_LEVELS.index(chance) <= CHANCE_LEVELS.index(cls.chance), (name, params, chance)
    assert cls.secret_choices or not secret, (name, params)


@pytest.mark.parametrize("name", sorted(SMALL))
def test_declared_capabilities_are_shown_by_a_small_variant(name):
    """Not declared more than the game has: the declaration routes solves (dice during play:
    value iteration, tier by tier too), so an over-declared game would be solved the wrong way."""
    cls = game_class(name)
    seen = [observed(make_game(name, params)) for params in SMALL[name]]
    assert max(CHANCE_LEVELS.index(c) for c, _ in seen) == CHANCE_LEVELS.index(cls.chance)
    assert any(s for _, s in seen) == cls.secret_choices


def test_the_five_games_declare_their_capabilities_on_their_class():
    declared = {name: (game_class(name).chance, game_class(name).secret_choices, game_class(name).has_tiers)
                for name in ("override", "greener", "blam", "petal", "carrots")}
    assert declared == {"override": ("never", False, True), "greener": ("setup", False, True),
                        "blam": ("never", False, True), "petal": ("never", True, False),
                        "carrots": ("in-play", False, True)}
    for name in declared:
        assert {"chance", "secret_choices"} <= set(vars(game_class(name))), name


def test_has_tiers_is_read_from_the_hook():
    assert not Game.has_tiers and not Subtraction.has_tiers and not Petal.has_tiers
    assert game_class("override").has_tiers and make_game("override", size=2, line=2, per_size=1).has_tiers

    class Tiered(Subtraction):
        def tier_of(self, keys):
            return np.zeros(len(keys), dtype=np.int64)

    game = Tiered.from_params(n=3)
    assert Tiered.has_tiers and game.has_tiers and game.tier_name(4) == "tier 4"  # the default name
    with pytest.raises(NotImplementedError, match="names no tiers"):
        Subtraction.from_params(n=3).tier_of(np.zeros(1, dtype=np.uint64))
    with pytest.raises(AttributeError):
        game.has_tiers = False


def test_no_caller_looks_capabilities_up_with_getattr():
    names = "tier_of|tier_name|has_tiers|chance_in_play|chance|secret_choices|tier_sizes|tier_children|large_presets"
    pattern = re.compile(rf"""getattr\([^()]*["']({names})["']""")
    found = [f"{path.relative_to(ROOT)}:{i}" for package in ("solver", "analysis")
             for path in sorted((ROOT / package).rglob("*.py"))
             for i, line in enumerate(path.read_text().splitlines(), 1) if pattern.search(line)]
    assert found == []


def test_game_classes_hold_no_measured_sizes():
    """Measured sizes are data (solver/pipeline/measured.toml), not rules."""
    for name in REGISTRY:
        cls = game_class(name)
        assert not {"tier_sizes", "tier_children", "large_presets"} & set(dir(cls)), name


# --- 2. pyramids check names a wrong declaration ------------------------------------------------
class QuietDice(DiceRace):
    """Dice before every move, declared as a random start only: wrong."""

    name = "quiet-dice"
    chance = "setup"


class NoDice(DiceRace):
    name = "no-dice"
    chance = "never"


class OpenPetal(Petal):
    """Petal Battle declared without secret choices: wrong for sequencing=secret."""

    secret_choices = False


@pytest.mark.parametrize("game,rule,fix", [
    (QuietDice.from_params({}), "declared-chance", "set chance = 'in-play' on QuietDice"),
    (NoDice.from_params({}), "declared-chance", "set chance = 'setup' on NoDice"),
    (OpenPetal(make_game("petal", petals=4, run=2, per_size=1).variant), "declared-secret",
     "set secret_choices = True on OpenPetal"),
])
def test_check_names_a_wrong_declaration(game, rule, fix):
    res = check_game(game, playouts=2, positions=2_000)
    assert rule in res.counts, res.counts
    assert set(res.counts) == {rule}  # nothing else is wrong with these games
    first = next(p for p in res.problems if p.rule == rule)
    assert fix in str(first) and "\n" not in str(first) and first.key is not None


def test_check_accepts_a_declaration_broader_than_a_variant_shows():
    """A class declares what any of its variants may do: Petal Battle with the orders chosen in
    view has no secret choices, which is no problem."""
    assert check_game(make_game("petal", petals=4, run=2, per_size=1, sequencing="open"), playouts=2).ok


def test_cli_check_says_which_attribute_to_set(capsys):
    code, out, _ = run(capsys, "check", "--game", "tests.test_capabilities:QuietDice")
    lines = out.strip().splitlines()
    assert code == 1 and len(lines) == 2, out
    assert lines[0].startswith("problem: a move leads to a chance node (dice during play), but QuietDice "
                               "declares chance = 'setup'") and "set chance = 'in-play' on QuietDice" in lines[0]


# --- 3. older plug-ins and wrong values ----------------------------------------------------------
def test_chance_in_play_of_older_plugins_still_declares_dice_during_play():
    class OldDice(Subtraction):
        chance_in_play = True

    class OldNoDice(DiceRace):
        chance_in_play = False

    assert OldDice.chance == "in-play" and OldDice.chance_in_play is True
    assert OldNoDice.chance == "setup" and OldNoDice.chance_in_play is False
    game = OldDice.from_params(n=2)
    assert game.chance_in_play and tiered.stochastic(game)
    assert Subtraction.chance == "never" and not Subtraction.chance_in_play  # the parent is untouched
    with pytest.raises(AttributeError):
        game.chance_in_play = False  # derived from chance: read-only


def test_wrong_declarations_are_refused_when_the_class_is_made():
    with pytest.raises(ProtocolError, match=r"chance = 'sometimes'; it must be one of 'never', 'setup', 'in-play'"):
        type("Sometimes", (Subtraction,), {"chance": "sometimes"})
    with pytest.raises(ProtocolError, match="which disagree; set chance alone"):
        type("Both", (Subtraction,), {"chance": "never", "chance_in_play": True})
    with pytest.raises(ProtocolError, match="secret_choices = 'yes'; it must be True or False"):
        type("Secret", (Subtraction,), {"secret_choices": "yes"})


def test_a_setup_sweep_is_refused_by_the_declaration_of_dice_during_play():
    why = tasks.sweepable(make_game("carrots", size=3, colours=1, per_colour=1, group=2))
    assert why is not None and "dice during play" in why
    assert tasks.sweepable(make_game("greener", rows=2, cols=2, black=1, white=1, setup="all")) is None
