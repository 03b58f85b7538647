"""Regressions of what a new user met first (issue 33): words that were stale or wrong, the demo
that rewrote a shipped report, the explorer's exit code, the statistics in one place."""

from __future__ import annotations

import html
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from tests.clirun import run

ROOT = Path(__file__).resolve().parent.parent
SMALL = ["override", "--set", "size=2", "--set", "line=2", "--set", "per_size=1"]


def test_check_counts_the_positions_from_the_start_apart_from_the_random_games(capsys):
    code, out, _ = run(capsys, "check", *SMALL, "--positions", "50", "--playouts", "20")
    assert code == 0
    # the breadth-first part stops at the --positions asked; the random games' extra positions
    # are counted apart, never folded into a larger "checked" number
    m = re.search(r"ok: ([\d,]+) positions checked from the start \(not exhaustive", out)
    assert m and m.group(1) == "50", out
    extra = re.search(r"and ([\d,]+) more along 20 random games", out)
    assert extra and int(extra.group(1).replace(",", "")) > 0, out


@pytest.fixture()
def small_tables(tmp_path, capsys):
    code, _, _ = run(capsys, "solve", *SMALL, "--out", str(tmp_path / "t"), "--quiet")
    assert code == 0
    return tmp_path / "t"


def test_quit_after_a_prompt_ends_with_a_newline(capsys, small_tables):
    code, out, _ = run(capsys, "play", *SMALL, "--side", "1", "--out", str(small_tables), stdin="quit\n")
    assert code == 0
    assert out.endswith("quit: goodbye\n"), out[-80:]
    assert "your move: \nquit: goodbye" in out  # the prompt's line ended before the goodbye


def test_vary_without_values_names_vary(capsys, tmp_path):
    code, _, err = run(capsys, "tune", *SMALL[:5], "--vary", "per_size", "--out", str(tmp_path / "t"),
                       "--reports", str(tmp_path / "r"))
    assert code == 2
    assert err.startswith("error: --vary takes name=value") and "--vary per_size=1,2" in err
    assert "--set" not in err


def test_a_folder_that_takes_no_files_is_named_as_such(capsys):
    if not Path("/proc").is_dir():
        pytest.skip("needs Linux /proc")
    code, _, err = run(capsys, "solve", *SMALL, "--out", "/proc")
    assert code == 2 and err.count("\n") == 1
    assert "No such file or directory" not in err and "takes no new files" in err


@pytest.mark.parametrize("target, words", [
    ("", "--svg needs a file name"),
    ("{tmp}", "is a folder; give a file name"),
    ("{tmp}/afile.txt/x.svg", "afile.txt is a file, not a folder"),
])
def test_bad_svg_paths_say_what_is_wrong_before_any_work(capsys, tmp_path, target, words):
    (tmp_path / "afile.txt").write_text("a file")
    code, out, err = run(capsys, "show", *SMALL, "--out", str(tmp_path / "t"),
                         "--svg", target.format(tmp=tmp_path))
    assert code == 2 and err.count("\n") == 1, err
    assert words in err
    assert "File exists" not in err and "Device or resource busy" not in err
    assert not (tmp_path / "t" / "override").exists()  # refused before solving anything
    assert out == ""


def test_a_damaged_table_is_solved_again_with_one_clear_note(capsys, small_tables):
    (folder,) = list((small_tables / "override").iterdir())
    data = (folder / "positions.parquet").read_bytes()
    (folder / "positions.parquet").write_bytes(data[: len(data) // 2])
    code, _, err = run(capsys, "solve", *SMALL, "--out", str(small_tables), "--quiet")
    assert code == 0
    note = next(line for line in err.splitlines() if "not used" in line)
    assert note.endswith("solving again"), note
    assert "solve again" not in note  # the advice for a reader is not quoted when the toolkit acts on it


def test_full_size_refusal_names_the_estimate_command(capsys, tmp_path):
    code, _, err = run(capsys, "solve", "override", "--set", "size=6", "--out", str(tmp_path))
    assert code == 2
    assert "not available yet" not in err
    assert "`pyramids estimate override --set size=6`" in err


def test_the_explorer_names_an_unknown_game_and_does_not_suggest_solving_it(small_tables):
    from analysis.explorer import create_app

    client = create_app(small_tables).test_client()
    page = client.get("/v/nosuchgame/size=2")
    text = html.unescape(page.get_data(as_text=True))
    assert page.status_code == 404
    assert "there is no game 'nosuchgame'" in text
    assert "pyramids solve" not in text and "override" in text  # the games it has are listed
    known = client.get("/v/override/size=9").get_data(as_text=True)
    assert "pyramids solve override" in known  # a known game's unsolved variant: solving it is the fix


def test_serve_exits_130_on_ctrl_c(small_tables):
    with socket.socket() as s:  # a free port
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "solver.cli", "serve", "--port", str(port),
                             "--tables", str(small_tables)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=small_tables)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # the server listens once it has said where
        assert f"127.0.0.1:{port}" in line, line
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err


def test_tune_table_marks_a_variant_that_is_not_certified():
    from analysis.tuning import format_table

    table = pl.DataFrame({
        "sequencing": ["secret", "open"], "kind": ["stochastic", "deterministic"],
        "verdict": ["expected -1.00", "second player wins in 31"], "value": [None, "lose"],
        "remoteness": [None, 31], "advantage": [-0.999, -1.0], "margin": [None, None],
        "p_first_wins": [0.0, 0.0], "positions": [10, 12],
        "not_certified": ["value iteration stopped after 2,013 sweeps", None],
    })
    text = format_table(table)
    first, second = text.splitlines()[2:4]
    assert "(not certified)" in first and "(not certified)" not in second
    assert "not certified: sequencing=secret: value iteration stopped after 2,013 sweeps" in text


def test_make_demo_writes_its_report_where_git_does_not_track_it():
    recipe = re.search(r"^demo:.*\n((?:\t.*\n)+)", (ROOT / "Makefile").read_text(), re.M)
    assert recipe
    reports = [ln for ln in recipe.group(1).splitlines() if " report " in ln]
    assert reports
    for line in reports:
        m = re.search(r"--reports (\S+)", line)
        assert m, f"the demo's report must not default to the shipped reports/: {line}"
        ignored = subprocess.run(["git", "check-ignore", "-q", f"{m.group(1)}/override/report.md"],
                                 cwd=ROOT, check=False)
        if ignored.returncode == 128:
            pytest.skip("not a git checkout")
        assert ignored.returncode == 0, f"{m.group(1)} is not ignored by git"


def test_one_wilson_interval_for_the_whole_toolkit():
    # the interval comes from SciPy in one shared place; nobody writes it again
    from solver.core import stats

    for path in [*ROOT.glob("solver/**/*.py"), *ROOT.glob("analysis/**/*.py")]:
        if path.name == "stats.py":
            continue
        assert not re.search(r"^def wilson\b", path.read_text(), re.M), path
        assert "1.959963984540054" not in path.read_text(), path
    assert stats.Z95 == pytest.approx(1.959963984540054)


def test_petal_ten_petals_one_per_size_is_refused_before_enumerating(capsys, tmp_path):
    # enumerated 42 s and 4.7 GB before the 40M limit stopped it (its estimate, 2.1e7, used 50
    # positions per board arrangement where the presets measure 78-164)
    import time

    t0 = time.perf_counter()
    code, _, err = run(capsys, "solve", "petal", "--set", "per_size=1", "--out", str(tmp_path))
    assert code == 2 and time.perf_counter() - t0 < 5
    assert "beyond exact solving here" in err and "424,051 board arrangements" in err, err
    assert not (tmp_path / "petal").exists() or not any((tmp_path / "petal").iterdir())


def test_the_commands_help_imports_no_heavy_library():
    """`pyramids --help` (and building the options of every command) imports neither the
    analysis metrics nor scipy.stats / scipy.optimize / polars: they took 2.5 s before any word
    was printed (0.17 s without them)."""
    code = ("import sys; from solver.cli import build_parser; build_parser(); "
            "print(' '.join(m for m in ('analysis.metrics', 'scipy.stats', 'scipy.optimize', 'polars', "
            "'numba') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "", f"imported at start: {out}"
