"""Every integer parameter of every game is bounded before any work (issue 33).

A value outside a parameter's bounds, or a variant too large to solve, must be refused at once:
exit code 2, one line on standard error starting ``error:`` (warnings about unusual values
aside), no traceback, within seconds and a few hundred megabytes. Before the bounds,
``override --set size=99999999999999999999999`` was killed by the kernel at 23 GB and
``carrots --set size=16`` listed 14! wall orders while ignoring Ctrl-C.
"""

from __future__ import annotations

import resource
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from solver.core.variant import Param
from solver.games import REGISTRY, game_class, make_game
from solver.pipeline.measured import large_reason
from solver.cli import main

#: per case: the seconds and the growth of the resident memory (bytes) a refusal may take
SECONDS = 5.0
MEMORY = 500 * 2**20
#: what a regression may allocate before it is stopped (a MemoryError, then a failed check)
ADDRESS_HEADROOM = 3 * 2**30


def _status(field: str) -> int:
    """A ``/proc/self/status`` figure in bytes (``VmHWM``: peak resident since the last reset)."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise KeyError(field)


@contextmanager
def bounded() -> Iterator[dict[str, float]]:
    """Measure one case: seconds and peak resident growth (the peak is reset first through
    ``/proc/self/clear_refs``), under an address-space cap so a regression fails the case instead
    of exhausting the machine."""
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")  # reset VmHWM to the current resident size
    before = _status("VmRSS")
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = _status("VmSize") + ADDRESS_HEADROOM
    resource.setrlimit(resource.RLIMIT_AS, (cap if hard == resource.RLIM_INFINITY else min(cap, hard), hard))
    out: dict[str, float] = {}
    t0 = time.monotonic()
    try:
        yield out
    finally:
        out["seconds"] = time.monotonic() - t0
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        out["memory"] = _status("VmHWM") - before


def pyramids(capsys, *argv: str) -> tuple[int, list[str], dict[str, float]]:
    """``(exit code, lines of standard error, measures)`` of ``pyramids *argv`` run here."""
    with bounded() as measure:
        code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "Traceback" not in out, err
    return code, [ln for ln in err.splitlines() if ln.strip()], measure


def _errors(lines: list[str]) -> list[str]:
    return [ln for ln in lines if not ln.startswith(("warning:", "note:"))]


def _values(p: Param) -> list[str]:
    """Huge, large, negative, zero and non-numeric values, and each bound and one past it."""
    values = ["1" + "0" * 25, "9" * 5000, "1000000", "200", "-1", "0", "abc", "", "1e3", "0x10"]
    values += [str(p.min), str(p.min - 1), str(p.max), str(p.max + 1)]
    return list(dict.fromkeys(values))


def _int_params() -> list[tuple[str, Param]]:
    return [(g, p) for g in sorted(REGISTRY) for p in game_class(g).params if p.kind == "int"]


@pytest.mark.parametrize("game,param", [(g, p) for g, p in _int_params()], ids=lambda x: getattr(x, "name", x))
def test_every_int_parameter_has_bounds_that_say_why(game, param):
    assert param.min is not None and param.max is not None, (game, param.name)
    assert param.min <= param.max and param.bounds, (game, param.name)


@pytest.mark.parametrize("game", sorted(REGISTRY))
def test_parameter_values_are_refused_at_once(capsys, tmp_path, game):
    """Each value alone, the others at their defaults (the full-size game). A small position
    limit keeps the few valid, solvable variants quick: they may solve (exit 0) or stop at it."""
    slow = []
    for param in [p for p in game_class(game).params if p.kind == "int"]:
        for value in _values(param):
            code, lines, m = pyramids(capsys, "solve", game, "--set", f"{param.name}={value}",
                                      "--out", str(tmp_path), "--max-positions", "1000")
            case = f"{game} {param.name}={value[:30]}"
            errors = _errors(lines)
            assert code in (0, 2), (case, code, lines)
            if code == 2:
                assert len(errors) == 1 and errors[0].startswith("error:"), (case, lines)
                assert len(errors[0]) < 1000, (case, errors[0][:200])
            else:
                assert not errors, (case, lines)
            if m["seconds"] > SECONDS or m["memory"] > MEMORY:
                slow.append((case, round(m["seconds"], 1), int(m["memory"] / 2**20)))
    assert not slow, f"over {SECONDS} s or {MEMORY / 2**20:.0f} MB: {slow}"


#: the issue's cases (and their kin) at the default position limit: refused at once, saying why
REFUSED = [
    (["override", "--set", "size=99999999999999999999999"], "at most 26"),
    (["override", "--set", "size=200"], "at most 26"),
    (["override", "--set", "size=100"], "at most 26"),
    (["override", "--set", "size=26"], "keys need"),
    (["override", "--preset", "3x3", "--set", "per_size=99999999999999999999"], "at most 676"),
    (["override", "--preset", "3x3", "--set", "per_size=10"], "per_size=9"),
    (["override", "--preset", "3x3", "--set", "per_size=3"], "more than 40,000,000 positions by estimate"),
    (["override", "--set", "per_size=1"], "more than 40,000,000 positions by estimate"),
    (["carrots", "--set", "size=16"], "keys need"),
    (["carrots", "--set", "group=25"], "at most 24"),
    (["blam", "--set", "rows=1"], "more than 40,000,000 positions by estimate"),
    (["blam", "--set", "per_size=1"], "more than 40,000,000 positions by estimate"),
    (["blam", "--set", "rows=26", "--set", "cols=26", "--set", "per_size=1"], "by estimate"),
    (["greener", "--set", "rows=26"], "cells"),
    (["greener", "--set", "rows=26", "--set", "cols=26", "--set", "black=0", "--set", "white=0"], "cells"),
    (["greener", "--set", "seed=-1"], "at least 0"),
    (["petal", "--set", "petals=18", "--set", "per_size=9"], "positions"),
]


@pytest.mark.parametrize("argv,words", REFUSED, ids=lambda x: " ".join(x) if isinstance(x, list) else None)
def test_large_variants_are_refused_at_once_at_the_default_limit(capsys, tmp_path, argv, words):
    code, lines, m = pyramids(capsys, "solve", *argv, "--out", str(tmp_path))
    errors = _errors(lines)
    assert code == 2 and len(errors) == 1 and errors[0].startswith("error:"), lines
    assert words in errors[0], errors[0]
    assert m["seconds"] < SECONDS and m["memory"] < MEMORY, m
    assert not list(Path(tmp_path).rglob("*.parquet"))


#: every game at the top of every parameter at once (valid variants): building the game and
#: answering the size questions take no time, so nothing long runs where Ctrl-C could be missed
EXTREMES = [
    ("override", {"size": 26, "line": 26, "per_size": 676}),
    ("greener", {"rows": 26, "cols": 26, "black": 338, "white": 338, "setup": "random", "seed": 2**64 - 1}),
    ("greener", {"rows": 26, "cols": 26, "black": 0, "white": 0}),
    ("blam", {"rows": 26, "cols": 26, "players": 4, "per_size": 15}),
    ("carrots", {"size": 16, "colours": 2, "per_colour": 4, "group": 24}),
    ("petal", {"petals": 18, "run": 18, "per_size": 9}),
]


@pytest.mark.parametrize("game,params", EXTREMES, ids=[g for g, _ in EXTREMES])
def test_the_largest_variants_build_at_once(game, params):
    with bounded() as m:
        g = make_game(game, params)
        refused = g.too_big() or large_reason(g)
        bound = g.position_bound()
        g.initial_state()
    assert refused, g  # none of them can be solved here
    assert bound is None or bound > 2**60
    assert m["seconds"] < 2.0 and m["memory"] < MEMORY, m


def test_huge_numbers_are_refused_without_converting_them():
    from solver.core.variant import make_variant
    from solver.errors import VariantError

    specs = game_class("override").params
    with pytest.raises(VariantError, match="at most 100 digits, got one of 5,000; it must be at most 26"):
        make_variant("override", specs, {"size": "9" * 5000})
    with pytest.raises(VariantError, match=r"at most 26 \(.*a\.\.z\), got a number of more than 100 digits"):
        make_variant("override", specs, {"size": 10**5000})  # a Python int from the API


@pytest.mark.parametrize("game,params", [
    ("override", {"size": 2, "line": 2, "per_size": 1}),
    ("override", {"size": 2, "line": 2, "per_size": 4}),
    ("blam", {"rows": 2, "cols": 2, "per_size": 2}),
    ("blam", {"rows": 2, "cols": 3, "per_size": 1}),
    ("blam", {"rows": 2, "cols": 2, "per_size": 1, "players": 3}),
    ("petal", {"petals": 4, "run": 2, "per_size": 1}),
], ids=lambda x: x if isinstance(x, str) else ",".join(f"{k}={v}" for k, v in x.items()))
def test_position_bounds_bound_every_position(game, params):
    """A position bound is an upper bound: of every position, symmetric images included."""
    from solver.engines.enumerate import enumerate_positions

    g = make_game(game, params)
    assert len(enumerate_positions(g, symmetry=False, workers=1).keys) <= g.position_bound()
