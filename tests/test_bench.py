"""The benchmark script's cases: presets by name, or parameters (the many-small-tiers row)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from solver import bench


def test_a_case_by_parameters_is_the_game_of_those_parameters() -> None:
    game = bench._game("override", "size=2,line=2,per_size=2")
    assert (game.variant["size"], game.variant["line"], game.variant["per_size"]) == (2, 2, 2)
    assert bench._game("override", "3x3").variant["size"] == 3
    with pytest.raises(KeyError):
        bench._game("override", "no-such-preset")


def test_the_many_small_tiers_row_runs() -> None:
    r = subprocess.run([sys.executable, "-m", "solver.bench", "--tiered", "--case", "override:size=2,line=2,per_size=2"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    header, row = r.stdout.strip().splitlines()[-2:]
    assert header.startswith("case (tiered)")
    cells = row.split()
    assert cells[:2] == ["override", "size=2,line=2,per_size=2"]
    assert int(cells[4]) > 100  # tiers: the point of the row


@pytest.mark.parametrize("tiered", [False, True], ids=["whole", "tiered"])
def test_the_verify_rows_check_a_table_the_case_solved(tiered) -> None:
    """``--verify``: the case is solved (whole or tier by tier), then its table is checked by
    ``pyramids verify`` in another process; the row says what was checked and that it holds."""
    flags = ["--tiered"] if tiered else []
    r = subprocess.run([sys.executable, "-m", "solver.bench", "--verify", *flags, "--case",
                        "override:size=2,line=2,per_size=2"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    header, row = r.stdout.strip().splitlines()[-2:]
    assert header.startswith("case (verify)")
    cells = row.split()
    assert cells[:2] == ["override", "size=2,line=2,per_size=2"]
    at = 3 if tiered else 2  # (the tiered case's name ends in "(tiered)")
    assert cells[at] == ("tiers" if tiered else "values")
    from solver.engines.enumerate import enumerate_positions

    n = enumerate_positions(bench._game("override", "size=2,line=2,per_size=2")).n
    assert int(cells[at + 1].replace(",", "")) == n and cells[-1] == "yes"  # (every position checked)
