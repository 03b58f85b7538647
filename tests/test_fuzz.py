"""Fuzz tests (hypothesis) of the command line and of the table readers.

Pass criterion everywhere: exit code 0 or 2, at most one line on standard error (warnings
aside), never a traceback, and never a wrong answer served from a damaged table.
"""

from __future__ import annotations

import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solver.api import make_game, solve
from solver.cli import main
from solver.errors import TableError
from solver.games import REGISTRY, game_class
from solver.tables import EDGES, POSITIONS
from tests.budget import examples

FUZZ = settings(max_examples=examples(60), deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
TINY = {"size": "2", "line": "2", "per_size": "2"}  # Override 2x2, two per size


def check_cli(capsys, argv: list[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    assert code in (0, 2), (argv, code, err)
    lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith(("warning:", "note:"))]
    assert len(lines) <= 1, (argv, err)
    assert "Traceback" not in err and "Traceback" not in out
    if code == 2:
        assert lines and lines[0].startswith("error:"), (argv, err)
    return code, out, err


def _names(game: str) -> list[str]:
    return [p.name for p in game_class(game).params]


text = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
               max_size=12)
values = st.one_of(text, st.integers(-5, 12).map(str), st.sampled_from(["on", "off", "all", "random", ""]))


@st.composite
def assignments(draw, game: str):
    names = st.one_of(st.sampled_from(_names(game)), text)
    pairs = draw(st.lists(st.tuples(names, values), max_size=4))
    out = []
    for name, value in pairs:
        form = draw(st.sampled_from(["{}={}", "{}", "={}", "{}=={}"]))
        out += ["--set", form.format(name, value) if form.count("{}") == 2 else form.format(name or value)]
    return out


@pytest.mark.parametrize("game", sorted(REGISTRY))
def test_random_parameters_never_crash(capsys, tmp_path_factory, game):
    root = tmp_path_factory.mktemp(f"fuzz-{game}")

    @FUZZ
    @given(assignments(game), st.sampled_from(["solve", "show"]),
           st.sampled_from([None] + list(game_class(game).presets)))
    def inner(sets, command, preset):
        argv = [command, game, *sets, "--out", str(root), "--max-positions", "20000"]
        if preset:
            argv += ["--preset", preset]
        check_cli(capsys, argv)

    inner()


def test_random_moves_never_crash(capsys, tmp_path):
    game = make_game("override", **TINY)
    solve(game, out=tmp_path)
    state = game.initial_state()
    legal = [game.action_name(state, a) for a in game.legal_actions(state)]
    base = ["show", "override", *sum((["--set", f"{k}={v}"] for k, v in TINY.items()), []),
            "--out", str(tmp_path), "--json"]

    @FUZZ
    @given(st.lists(st.one_of(st.sampled_from(legal + ["pass", "a1-b1", "AS@a1", "b2-a1"]), text),
                    max_size=5),
           st.sampled_from([" ", ","]))
    def inner(moves, sep):
        check_cli(capsys, base + ["--moves", sep.join(moves)])

    inner()


def test_random_option_values_never_crash(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a random --out or --reports value is a folder made here
    @FUZZ
    @given(st.sampled_from(["--tol", "--max-positions", "--out", "--side", "--seed", "--preset", "--vary"]),
           st.one_of(text, st.floats(allow_nan=True).map(str), st.integers(-10**20, 10**20).map(str)),
           st.sampled_from(["solve", "show", "report", "tune", "play"]))
    def inner(option, value, command):
        argv = [command, "override", *sum((["--set", f"{k}={v}"] for k, v in TINY.items()), []),
                option, value]
        if option not in ("--out",):
            argv += ["--out", str(tmp_path / "t")]
        if command in ("report", "tune"):
            argv += ["--reports", str(tmp_path / "r")]
        if command == "tune" and option != "--vary":
            argv += ["--vary", "no_undo=on"]
        if command == "play":  # no terminal: end of input at once
            import io
            import sys

            old = sys.stdin
            sys.stdin = io.StringIO("")
            try:
                check_cli(capsys, argv)
            finally:
                sys.stdin = old
        else:
            check_cli(capsys, argv)

    inner()


# --- table readers ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    root = tmp_path_factory.mktemp("reference")
    game = make_game("override", **TINY)
    sol = solve(game, out=root)
    other = solve(make_game("override", size=2, line=2, per_size=1), out=root)
    return game, sol.path.parent, sol.positions, other.path.parent


@st.composite
def damage(draw):
    kind = draw(st.sampled_from(["truncate", "flip", "zero", "swap", "garbage", "append"]))
    which = draw(st.sampled_from([POSITIONS, EDGES]))
    frac = draw(st.floats(0.0, 1.0))
    nbytes = draw(st.integers(1, 8))
    seed = draw(st.integers(0, 2**32 - 1))
    return kind, which, frac, nbytes, seed


@FUZZ
@given(damage())
def test_damaged_tables_never_serve_a_wrong_answer(reference, tmp_path_factory, dmg):
    import random

    game, folder, truth, other = reference
    kind, which, frac, nbytes, seed = dmg
    root = tmp_path_factory.mktemp("damaged")
    copy = root / folder.relative_to(folder.parent.parent.parent)
    shutil.copytree(folder, copy)
    target = copy / which
    data = bytearray(target.read_bytes())
    rng = random.Random(seed)
    at = int(frac * (len(data) - 1))
    if kind == "truncate":
        data = data[:at]
    elif kind == "flip":
        for i in range(nbytes):
            j = (at + i * 97) % len(data)
            data[j] ^= 1 << rng.randrange(8)
    elif kind == "zero":
        data[at : at + nbytes * 16] = bytes(len(data[at : at + nbytes * 16]))
    elif kind == "swap":
        data = bytearray((other / which).read_bytes())
    elif kind == "garbage":
        data = bytearray(rng.randbytes(len(data)))
    else:
        data += rng.randbytes(nbytes)
    target.write_bytes(bytes(data))
    notes: list[str] = []
    try:
        sol = solve(game, out=root, notes=notes)
    except TableError:
        return  # refused with a clear message: acceptable
    # served: it must be the right answer (intact, or solved again and said so)
    assert sol.positions.equals(truth)
    if notes:
        assert "solving again" in notes[0]
