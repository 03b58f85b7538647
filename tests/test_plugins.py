"""Designers' own games: plug-ins by entry point or import path, `pyramids check` catching every
protocol mistake, and engines refusing what would silently give wrong answers."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from solver.core.game import Game, NodeKind, Outcome
from solver.core.selfcheck import check_game, compare_expand
from solver.engines.alphabeta import AlphaBeta
from solver.engines.enumerate import enumerate_positions
from solver.engines.retrograde import retrograde
from solver.errors import ProtocolError
from tests.clirun import run
from tests.toygames import DiceRace, Subtraction

ROOT = Path(__file__).resolve().parents[1]


# --- games with one protocol mistake each (used by import path below) -------------------------
class ColourSwap(Subtraction):
    """The issue's example: a 'symmetry' that swaps the side to move makes every pile a loss."""

    name = "colour-swap"

    def symmetries(self, s):
        return [s, (s[0], 1 - s[1])]


class DeadEnd(Subtraction):
    """A pile of 3 offers no move but is not declared terminal."""

    name = "dead-end"

    def legal_actions(self, s):
        return [] if s[0] == 3 else super().legal_actions(s)


class BadDice(DiceRace):
    name = "bad-dice"

    def chance_outcomes(self, s):
        return [(1, Fraction(1, 2)), (2, Fraction(1, 3))]


class Shuffled(Subtraction):
    """Non-deterministic: the move list comes in a random order."""

    name = "shuffled"

    def legal_actions(self, s):
        acts = super().legal_actions(s)
        random.shuffle(acts)
        return acts


class HugeKeys(Subtraction):
    name = "huge-keys"

    def encode(self, s):
        return (s[0] * 2 + s[1]) << 64

    def decode(self, key):
        key >>= 64
        return (key // 2, key % 2)


class NotZeroSum(Subtraction):
    name = "not-zero-sum"

    def outcome(self, s):
        return Outcome.win_for(0) if s[1] else Outcome(tuple([Outcome.win_for(0).results[0]] * 2))


class FallingTier(Subtraction):
    """A tier hook that rises as counters are taken... backwards: it must never decrease."""

    name = "falling-tier"

    def tier_of(self, keys):
        return np.asarray(keys, dtype=np.uint64) // 2  # counters left: falls along every move


class StayingTier(Subtraction):
    """Declares that every move leaves its tier, but names one tier for every position."""

    name = "staying-tier"
    tiers_rise_strictly = True

    def tier_of(self, keys):
        return np.zeros(len(keys), dtype=np.int64)


class FastSubtraction(Subtraction):
    """A batch expand written from the Expansion contract; ``bug`` breaks it on purpose."""

    name = "fast-subtraction"
    bug = False

    def expand(self, keys, *, canonical=False):
        from solver.core.game import Expansion

        keys = np.asarray(keys, dtype=np.uint64).astype(np.int64)
        n, player = keys // 2, (keys % 2).astype(np.int8)
        takes = np.array([1, 2])
        ok = takes[None, :] <= n[:, None]
        child = (n[:, None] - takes[None, :]) * 2 + (1 - player[:, None])
        offsets = np.zeros(len(keys) + 1, dtype=np.int64)
        np.cumsum(ok.sum(axis=1), out=offsets[1:])
        end = n == 0
        return Expansion(kind=np.where(end, NodeKind.TERMINAL, NodeKind.DECISION).astype(np.int8),
                         to_move=player, offsets=offsets, children=child[ok].astype(np.uint64),
                         probs=None, result=np.where(end, 1 if self.bug else -1, 0).astype(np.int8),
                         margin=np.zeros(len(keys), dtype=np.int32))


class Buggy(FastSubtraction):
    name = "buggy"
    bug = True  # says the player to move at an empty pile wins: the last taker actually won


class Bare(Game):
    """A game with no parameters, no name, no render, no action names: no boilerplate needed.
    Two players alternately add 1 or 2 to a counter; reaching 4 wins."""

    def initial_state(self):
        return (0, 0)

    def node_kind(self, s):
        return NodeKind.TERMINAL if s[0] >= 4 else NodeKind.DECISION

    def to_move(self, s):
        return s[1]

    def legal_actions(self, s):
        return [1, 2]

    def apply(self, s, a):
        return (s[0] + a, 1 - s[1])

    def outcome(self, s):
        return Outcome.win_for(1 - s[1])

    def encode(self, s):
        return s[0] * 2 + s[1]

    def decode(self, key):
        return (key // 2, key % 2)


class NoVariant(Bare):
    """The issue's example: a constructor that does not take the variant."""

    name = "no-variant"

    def __init__(self):
        super().__init__()


class NoSuper(Bare):
    """A constructor that takes the variant but never gives it to ``Game.__init__``."""

    name = "no-super"

    def __init__(self, variant):
        self.ready = True


def rules(game: Game, **params) -> list[str]:
    return sorted(check_game(game.from_params(params) if params else game, playouts=5).counts)


# --- pyramids check / check_game ------------------------------------------------------------
@pytest.mark.parametrize("cls,params,rule", [
    (ColourSwap, {"n": 7}, "symmetry-to-move"),
    (DeadEnd, {"n": 7}, "dead-end"),
    (BadDice, {"target": 2}, "chance"),
    (Shuffled, {"n": 9}, "deterministic"),
    (HugeKeys, {"n": 4}, "key"),
    (NotZeroSum, {"n": 4}, "outcome"),
    (FallingTier, {"n": 5}, "tier"),
    (StayingTier, {"n": 5}, "tier"),
    (Buggy, {"n": 6}, "expand"),
])
def test_check_names_the_broken_rule(cls, params, rule):
    res = check_game(cls.from_params(params), playouts=5)
    assert rule in res.counts, res.counts
    assert not res.ok
    first = next(p for p in res.problems if p.rule == rule)
    assert first.key is not None or rule == "key"  # an example position is given
    assert "\n" not in str(first)


@pytest.mark.parametrize("cls", [Subtraction, FastSubtraction, Bare, DiceRace])
def test_check_passes_correct_games(cls):
    res = check_game(cls.from_params({}), playouts=5)
    assert res.ok, [str(p) for p in res.problems]
    assert res.exhaustive and res.positions > 3


def test_check_is_exhaustive_only_when_it_saw_everything():
    game = Subtraction.from_params(n=30)
    assert check_game(game, positions=200, playouts=0).exhaustive
    part = check_game(game, positions=10, playouts=0)
    assert not part.exhaustive and part.positions == 10


def test_compare_expand_helper():
    keys = np.arange(0, 20, dtype=np.uint64)
    assert compare_expand(FastSubtraction.from_params(n=9), keys) == []
    diffs = compare_expand(Buggy.from_params(n=9), keys)
    assert diffs and "result" in diffs[0][0] and diffs[0][1] == 0  # key 0: the empty pile


def test_colour_swap_would_corrupt_values():
    """Why the check matters: solved with the swap, piles that win are reported as losses."""
    good = retrograde(enumerate_positions(Subtraction.from_params(n=7), workers=1))
    bad_graph = enumerate_positions(ColourSwap.from_params(n=7), workers=1)
    bad = retrograde(bad_graph)
    assert int(good.value.max()) != int(bad.value.max())  # the swapped game is (wrongly) all losses


def test_cli_check(capsys):
    code, out, err = run(capsys, "check", "--game", "tests.test_plugins:ColourSwap")
    assert code == 1
    lines = out.strip().splitlines()
    assert lines[0].startswith("problem: a symmetry image has another player to move")
    assert "e.g. at key" in lines[0] and "counters" in lines[0]  # an example position, rendered
    assert "rule(s) broken" in lines[-1]
    code, out, _ = run(capsys, "check", "--game", "tests.test_plugins:FastSubtraction", "--json")
    obj = json.loads(out)
    assert code == 0 and obj["ok"] and obj["exhaustive"] and obj["expand_checked"] == obj["positions"]
    code, out, _ = run(capsys, "check", "override", "--preset", "3x3", "--positions", "300",
                       "--playouts", "2")
    assert code == 0 and out.startswith("ok: ") and "batch expand agrees" in out


# --- engines refuse dead ends -------------------------------------------------------------
def test_engines_refuse_a_dead_end():
    game = DeadEnd.from_params(n=7)
    with pytest.raises(ProtocolError, match="no moves.*pass move"):
        enumerate_positions(game, workers=1)
    with pytest.raises(ProtocolError, match="no moves"):
        AlphaBeta(game).search(game.initial_state())


def test_solve_refuses_a_dead_end_in_one_line(capsys, tmp_path):
    code, _, err = run(capsys, "solve", "--game", "tests.test_plugins:DeadEnd", "--out", str(tmp_path))
    assert code == 2
    assert err.count("\n") == 1 and "decision node with no moves" in err and "pyramids check" in err
    assert not list(tmp_path.rglob("*.parquet"))


def test_retrograde_refuses_a_hand_built_dead_end():
    from solver.engines.graph import Graph

    graph = enumerate_positions(Subtraction.from_params(n=3), workers=1)
    offsets = graph.offsets.copy()
    row = graph.row_of(Subtraction.from_params(n=3).encode((3, 0)))
    cut = offsets[row + 1] - offsets[row]  # drop the start's moves
    child = np.delete(graph.child, np.arange(offsets[row], offsets[row + 1]))
    offsets[row + 1:] -= cut
    broken = Graph(**{**graph.__dict__, "offsets": offsets, "child": child})
    with pytest.raises(ProtocolError, match=f"position {int(graph.keys[row])}"):
        retrograde(broken)


def test_row_of_raises_on_unknown_keys():
    graph = enumerate_positions(Subtraction.from_params(n=3), workers=1)
    assert graph.row_of(int(graph.keys[0])) == 0
    with pytest.raises(KeyError, match="not a position"):
        graph.row_of(999)
    assert graph.has(int(graph.keys[-1])) and not graph.has(999)


def test_retrograde_points_simultaneous_graphs_to_their_engine():
    from solver.games import make_game

    graph = enumerate_positions(make_game("petal", petals=4, run=2, per_size=1), workers=1)
    with pytest.raises(ValueError, match="solve_simultaneous"):
        retrograde(graph)


# --- no boilerplate -----------------------------------------------------------------------
def test_a_game_with_no_parameters_needs_no_boilerplate(capsys, tmp_path):
    game = Bare()
    assert game.name == "bare" and Bare.from_params().variant == game.variant
    assert game.render(game.initial_state()) == "(0, 0)"
    assert game.parse_action(game.initial_state(), "2") == 2
    code, out, _ = run(capsys, "solve", "--game", "tests.test_plugins:Bare", "--out", str(tmp_path))
    assert code == 0
    # by hand: from 1 both moves (to 2 or 3) let the opponent reach 4, so adding 1 at the start wins
    assert "win for player 1" in out
    assert (tmp_path / "bare" / "default" / "positions.parquet").exists()


@pytest.mark.parametrize("cls,words", [
    ("NoVariant", "tests.test_plugins.NoVariant.__init__() takes no variant; the protocol calls "
                  "NoVariant(variant): define __init__(self, variant) and call super().__init__(variant)"),
    ("NoSuper", "tests.test_plugins.NoSuper.__init__ does not call super().__init__(variant)"),
])
def test_a_constructor_off_the_protocol_is_one_line(capsys, tmp_path, cls, words):
    """Before: a traceback from Game.from_params in `pyramids check` and `pyramids solve`."""
    for argv in (["check", "--game", f"tests.test_plugins:{cls}"],
                 ["solve", "--game", f"tests.test_plugins:{cls}", "--out", str(tmp_path)]):
        code, out, err = run(capsys, *argv)
        assert code == 2 and err.count("\n") == 1 and err.startswith("error: game "), err
        assert words in err, err
    from solver.errors import ProtocolError

    with pytest.raises(ProtocolError, match="protocol|super"):
        globals()[cls].from_params({})


# --- finding games: import path, entry points ------------------------------------------------
def test_game_argument_errors(capsys):
    code, _, err = run(capsys, "solve")
    assert code == 2 and "which game?" in err
    code, _, err = run(capsys, "solve", "override", "--game", "tests.test_plugins:Bare")
    assert code == 2 and "not both" in err
    for spec, words in [("no_such_module:X", "cannot import"), ("tests.test_plugins:Nope", "has no"),
                        ("json:dumps", "not a subclass"), ("tests.test_plugins", "unknown game")]:
        code, _, err = run(capsys, "solve", "--game", spec)
        assert code == 2 and words in err and err.count("\n") == 1, err


def test_import_path_may_not_take_a_builtin_name(capsys):
    code, _, err = run(capsys, "solve", "--game", "tests.test_plugins:Impostor")
    assert code == 2 and "built-in game" in err


class Impostor(Subtraction):
    name = "override"


def _fake_distribution(site: Path, dist: str, entry_points: dict[str, str]) -> None:
    """What `pip install` leaves for a package that declares entry points: a .dist-info folder."""
    info = site / f"{dist.replace('-', '_')}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    lines = ["[pyramids.games]"] + [f"{k} = {v}" for k, v in entry_points.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")


def _pyramids(cwd: Path, site: Path, *argv: str) -> subprocess.CompletedProcess:
    env = {"PYTHONPATH": f"{site}:{ROOT}", "PATH": "/usr/bin:/bin"}
    return subprocess.run([sys.executable, "-m", "solver.cli", *argv], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_plugins_by_entry_point(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "mygames.py").write_text("from tests.test_plugins import Bare as Counter\n"
                                     "Counter.name = 'bare'\n")
    _fake_distribution(site, "my-games", {"bare": "mygames:Counter"})
    _fake_distribution(site, "broken-games", {"brokengame": "no_such_module:Game"})
    _fake_distribution(site, "clash-games", {"override": "mygames:Counter"})
    r = _pyramids(tmp_path, site, "list")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    lines = r.stdout.splitlines()
    assert any(ln.startswith("override: Override") for ln in lines)  # the built-in still listed
    assert any(ln.startswith("bare: ") and "[plug-in mygames:Counter (my-games)]" in ln for ln in lines)
    broken = [ln for ln in lines if ln.startswith("brokengame:")]
    assert len(broken) == 1 and "broken" in broken[0] and "No module named 'no_such_module'" in broken[0]
    clash = [ln for ln in lines if ln.startswith("override: (broken")]
    assert len(clash) == 1 and "built-in" in clash[0]
    r = _pyramids(tmp_path, site, "solve", "bare", "--out", str(tmp_path / "t"))
    assert r.returncode == 0 and "win for player 1" in r.stdout, r.stderr
    r = _pyramids(tmp_path, site, "solve", "brokengame")
    assert r.returncode == 2 and "Traceback" not in r.stderr and r.stderr.count("\n") == 1
