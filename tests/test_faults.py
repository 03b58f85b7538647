"""The fault suite: whatever a user types or a crash does, the toolkit answers with one line (exit
code 2, or 130 for an interrupt), never a traceback, and never leaves a corrupt, half-written or
wrongly reused table, a stray worker process or a temporary file behind.

Kills and interrupts are injected at named points of a real solve (``PYRAMIDS_FAULT``, see
``solver/faults.py``) and also at random moments; each is followed by a normal run whose table
must equal an uninterrupted solve's.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

from solver.api import load, make_game, solve
from solver.cli import main
from solver.errors import TableError
from solver.games import REGISTRY, game_class
from solver.tables import EDGES, POSITIONS

PYRAMIDS = [sys.executable, "-m", "solver.cli"]
SMALL = ["--set", "size=2", "--set", "line=2", "--set", "per_size=2"]  # 2x2, 2 per size: ~0.1 s
OVERRIDE_3X3 = ["--preset", "3x3"]  # 1.68M positions: enumeration uses the worker pool


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith("warning:")]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def run_cli(args: list[str], *, env_extra: dict | None = None, timeout: float = 300):
    env = {**os.environ, **(env_extra or {})}
    env.pop("PYRAMIDS_FAULT", None) if not env_extra or "PYRAMIDS_FAULT" not in env_extra else None
    return subprocess.run(PYRAMIDS + args, capture_output=True, text=True, env=env, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def processes_mentioning(text: str) -> list[int]:
    """Live processes whose command line contains ``text`` (workers are forked, so they share
    their parent's command line)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().split(") ")[-1][:1]
        except OSError:
            continue
        if text in cmd and state != "Z":
            pids.append(int(entry.name))
    return pids


def leftovers(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if ".tmp" in p.name or ".old-" in p.name]


def variant_folder(root: Path, game: str) -> Path:
    return next((root / game).iterdir())


# --- 1. default (full-size) variants ---------------------------------------------------------

@pytest.mark.parametrize("game", sorted(REGISTRY))
@pytest.mark.parametrize("command", ["solve", "show", "report", "play", "tune"])
def test_full_size_defaults_are_one_line(capsys, tmp_path, game, command):
    args = [command, game, "--out", str(tmp_path)]
    if command == "tune":
        cls = game_class(game)
        p = cls.params[-1]
        args += ["--vary", f"{p.name}={p.format(p.default)}"]
    if command in ("report", "tune"):
        args += ["--reports", str(tmp_path / "reports")]
    code, _, err = run(capsys, *args)
    line = one_line(err)
    assert code == 2
    preset = game_class(game).largest_preset
    if line.find("beyond exact solving") >= 0:
        assert f"--preset {preset}" in line
    else:  # a game whose default is small enough is simply solved; none is today
        pytest.fail(f"{game} default was not refused: {line}")
    assert not list(tmp_path.rglob("*.parquet"))


def test_known_large_preset_is_refused_at_once_by_the_whole_graph_solver(capsys, tmp_path):
    """Override 4x4 goes tier by tier by default (tests/test_tiered.py); asked of the whole-graph
    solver, it is refused at once, naming both ways out."""
    t0 = time.perf_counter()
    code, _, err = run(capsys, "solve", "override", "--preset", "4x4", "--no-tiered", "--out", str(tmp_path))
    from solver.pipeline import measured

    assert code == 2 and measured.too_large("override", "4x4") in one_line(err)
    assert "--max-positions 0" in err and "--tiered" in err
    assert time.perf_counter() - t0 < 5


# --- 2. tolerances --------------------------------------------------------------------------

@pytest.mark.parametrize("tol", ["0", "-1", "nan", "inf", "1", "abc", "1e-2"])
def test_bad_tolerance_is_one_line(capsys, tmp_path, tol):
    code, _, err = run(capsys, "solve", "carrots", "--preset", "3x3", "--tol", tol, "--out", str(tmp_path))
    assert code == 2 and "--tol" in one_line(err)
    assert not list(tmp_path.rglob("*"))


def test_loose_table_is_not_reused_for_a_tighter_request(tmp_path, monkeypatch):
    """A table solved at --tol 1e-3 is stored with that tolerance; a later solve at the default
    (tighter) tolerance solves again and says why; one at 1e-3 or looser reuses it."""
    import solver.games as games

    monkeypatch.setitem(games.REGISTRY, "dicerace", "tests.toygames:DiceRace")
    game = make_game("dicerace")
    loose = solve(game, out=tmp_path, tol=1e-3)
    assert loose.meta["tolerance"] == 1e-3
    notes: list[str] = []
    again = solve(game, out=tmp_path, tol=1e-3, notes=notes)
    assert notes == [] and again.meta["solve_id"] == loose.meta["solve_id"]
    tight = solve(game, out=tmp_path, notes=notes)
    assert tight.meta["tolerance"] == 1e-12 and tight.meta["solve_id"] != loose.meta["solve_id"]
    assert len(notes) == 1 and "looser" in notes[0]
    assert tight.meta["certified"] is True
    assert tight.root.expected == pytest.approx(0.5, abs=1e-9)  # worked by hand in test_cli.py


def test_certificate_does_not_scale_with_the_tolerance():
    from solver.engines import value_iteration as vi

    assert vi.CERTIFICATE_TOL == 1e-9
    src = Path(vi.__file__).read_text()
    assert "1000 * tol" not in src


# --- 3. output folders ----------------------------------------------------------------------

def test_out_naming_a_file_is_refused_before_solving(capsys, tmp_path, monkeypatch):
    import solver.pipeline.whole as pipeline

    def never(*a, **k):
        raise AssertionError("enumeration started although the output folder is bad")

    monkeypatch.setattr(pipeline, "enumerate_positions", never)
    f = tmp_path / "a-file"
    f.write_text("x")
    for opt, cmd in (("--out", "solve"), ("--out", "show"), ("--reports", "report")):
        code, _, err = run(capsys, cmd, "override", *SMALL, opt, str(f / "sub"))
        assert code == 2 and "is a file" in one_line(err)
    code, _, err = run(capsys, "solve", "override", *SMALL, "--out", "")
    assert code == 2 and "empty" in one_line(err)


def test_unwritable_out_is_refused_before_solving(capsys, tmp_path, monkeypatch):
    """Root ignores file modes, so the unwritable folder is a read-only system folder."""
    import solver.pipeline.whole as pipeline

    monkeypatch.setattr(pipeline, "enumerate_positions", lambda *a, **k: pytest.fail("solved anyway"))
    target = "/proc/pyramids-cannot-write-here"
    code, _, err = run(capsys, "solve", "override", *SMALL, "--out", target)
    assert code == 2 and "cannot write" in one_line(err)


def test_missing_out_folder_is_created(capsys, tmp_path):
    out = tmp_path / "new" / "deeper"
    code, _, err = run(capsys, "solve", "override", *SMALL, "--out", str(out), "--quiet")
    assert code == 0, err
    assert list(out.rglob(POSITIONS))


def test_disk_full_while_writing_is_one_line_and_keeps_the_old_table(tmp_path):
    out = tmp_path / "t"
    ok = run_cli(["solve", "override", *SMALL, "--out", str(out), "--quiet", "--json"])
    assert ok.returncode == 0, ok.stderr
    first = json.loads(ok.stdout)
    folder = variant_folder(out, "override")
    before = pl.read_parquet(folder / POSITIONS)
    for point in ("write:positions.parquet", "write:edges.parquet", "rename"):
        r = run_cli(["solve", "override", *SMALL, "--out", str(out), "--force", "--quiet"],
                    env_extra={"PYRAMIDS_FAULT": f"ENOSPC@{point}"})
        assert r.returncode == 2 and "No space left" in one_line(r.stderr)
        assert not leftovers(out)
        assert pl.read_parquet(folder / POSITIONS).equals(before)
    r = run_cli(["solve", "override", *SMALL, "--out", str(out), "--json"])
    assert json.loads(r.stdout)["reused_table"] is True and first["positions"] == before.height


def test_tables_are_world_readable(tmp_path):
    sol = solve(make_game("override", size=2, line=2, per_size=1), out=tmp_path)
    umask = os.umask(0)
    os.umask(umask)
    for f in sol.path.parent.iterdir():
        assert f.stat().st_mode & 0o777 == 0o666 & ~umask


# --- 4./5. kills and interrupts at every phase ------------------------------------------------

#: the fast suite kills at the first phase and at the last; the slow one at every phase between
POINTS = ["solve", "rename"] + [pytest.param(p, marks=pytest.mark.slow)
                                for p in ("solved", "write:positions.parquet", "write:edges.parquet")]


@pytest.mark.parametrize("point", POINTS)
def test_kill_at_each_phase_then_a_normal_run_gives_the_same_table(tmp_path, point):
    ref_root, root = tmp_path / "ref", tmp_path / "killed"
    ref = run_cli(["solve", "override", *SMALL, "--out", str(ref_root), "--quiet"])
    assert ref.returncode == 0
    killed = run_cli(["solve", "override", *SMALL, "--out", str(root), "--quiet"],
                     env_extra={"PYRAMIDS_FAULT": f"KILL@{point}"})
    assert killed.returncode == -signal.SIGKILL
    # nothing that looks finished: no variant folder at all (the write is one rename)
    assert not [p for p in (root / "override").glob("*") if not p.name.startswith(".")] if (root / "override").exists() else True
    again = run_cli(["solve", "override", *SMALL, "--out", str(root), "--json", "--quiet"])
    assert again.returncode == 0 and json.loads(again.stdout)["reused_table"] is False
    assert not leftovers(root)
    a, b = variant_folder(ref_root, "override"), variant_folder(root, "override")
    for name in (POSITIONS, EDGES):
        assert pl.read_parquet(a / name).equals(pl.read_parquet(b / name))


@pytest.mark.parametrize("point", POINTS)
def test_interrupt_at_each_phase_is_130_and_leaves_nothing(tmp_path, point):
    r = run_cli(["solve", "override", *SMALL, "--out", str(tmp_path), "--quiet"],
                env_extra={"PYRAMIDS_FAULT": f"INT@{point}"})
    assert r.returncode == 130 and "interrupted" in one_line(r.stderr)
    assert not list(tmp_path.rglob("*.parquet")) and not leftovers(tmp_path)


@pytest.mark.slow
def test_kill_during_parallel_enumeration_leaves_no_worker(tmp_path):
    """Override 3x3 enumerates its large plies in a pool of forked workers; SIGKILL of the parent
    must take the workers with it (they die with their parent)."""
    root = tmp_path / "pool"
    r = run_cli(["solve", "override", *OVERRIDE_3X3, "--out", str(root), "--quiet"],
                env_extra={"PYRAMIDS_FAULT": "KILL@enumerate-pool"})
    assert r.returncode == -signal.SIGKILL
    deadline = time.time() + 10
    while processes_mentioning(str(root)) and time.time() < deadline:
        time.sleep(0.2)
    assert processes_mentioning(str(root)) == []


@pytest.mark.slow
def test_interrupt_during_parallel_enumeration_is_one_line(tmp_path):
    root = tmp_path / "pool"
    r = run_cli(["solve", "override", *OVERRIDE_3X3, "--out", str(root), "--quiet"],
                env_extra={"PYRAMIDS_FAULT": "INT@enumerate-pool"})
    assert r.returncode == 130 and "interrupted" in one_line(r.stderr)
    time.sleep(1)
    assert processes_mentioning(str(root)) == [] and not list(root.rglob("*.parquet"))


@pytest.mark.slow
def test_kill_at_random_moments_then_resolve(tmp_path):
    """SIGKILL at random moments of a real 3x3 solve (enumeration, solving, writing), then a
    normal run: the table equals the uninterrupted one; no worker or temporary file remains."""
    ref_root = tmp_path / "ref"
    t0 = time.perf_counter()
    ref = run_cli(["solve", "override", *OVERRIDE_3X3, "--out", str(ref_root), "--quiet"])
    assert ref.returncode == 0
    total = time.perf_counter() - t0
    rng = random.Random(14)
    root = tmp_path / "killed"
    for delay in sorted(rng.uniform(0.3, 0.95) * total for _ in range(3)):
        p = subprocess.Popen(PYRAMIDS + ["solve", "override", *OVERRIDE_3X3, "--out", str(root),
                                         "--quiet", "--force"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        p.kill()
        p.wait()
        deadline = time.time() + 10
        while processes_mentioning(str(root)) and time.time() < deadline:
            time.sleep(0.2)
        assert processes_mentioning(str(root)) == []
        folder = root / "override"
        if folder.exists():  # either the complete table of an earlier run or nothing
            for f in folder.iterdir():
                if not f.name.startswith("."):
                    load(make_game("override", size=3, line=3, per_size=1), out=root)
    again = run_cli(["solve", "override", *OVERRIDE_3X3, "--out", str(root), "--quiet"])
    assert again.returncode == 0 and not leftovers(root)
    a, b = variant_folder(ref_root, "override"), variant_folder(root, "override")
    for name in (POSITIONS, EDGES):
        assert pl.read_parquet(a / name).equals(pl.read_parquet(b / name))


# --- 6. every listed preset works in every command --------------------------------------------
# (tests/test_presets.py)

# --- 7. play: end of input and Ctrl-C ---------------------------------------------------------

def test_play_end_of_input_says_goodbye(tmp_path):
    r = run_cli(["play", "override", *SMALL, "--out", str(tmp_path)])
    assert r.returncode == 0 and "goodbye" in r.stdout and "Traceback" not in r.stderr


def test_play_interrupt_at_the_prompt_is_130(tmp_path):
    """Under a pseudo-terminal (as a person plays), Ctrl-C at the prompt ends the game at once."""
    import pty

    solve(make_game("override", size=2, line=2, per_size=2), out=tmp_path)
    pid, fd = pty.fork()
    if pid == 0:  # child: the CLI on a terminal
        os.execv(sys.executable, PYRAMIDS + ["play", "override", *SMALL, "--out", str(tmp_path),
                                             "--side", "1"])
    out = b""
    deadline = time.time() + 60
    while b"your move" not in out and time.time() < deadline:
        try:
            out += os.read(fd, 4096)
        except OSError:
            break
    assert b"your move" in out
    os.write(fd, b"\x03")  # Ctrl-C typed at the terminal
    t0 = time.time()
    while time.time() - t0 < 10:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 130
    assert b"goodbye" in out and b"Traceback" not in out
    assert time.time() - t0 < 10


# --- 8. foreign or corrupt companion tables ----------------------------------------------------

def _solved_small(root: Path):
    game = make_game("override", size=2, line=2, per_size=2)
    return game, solve(game, out=root)


@pytest.mark.parametrize("damage", ["bytes", "truncate", "foreign", "missing", "rows"])
def test_bad_edges_table_is_refused_and_resolved(capsys, tmp_path, damage):
    game, sol = _solved_small(tmp_path)
    edges = sol.path.parent / EDGES
    if damage == "bytes":
        edges.write_bytes(os.urandom(3000))
    elif damage == "truncate":
        edges.write_bytes(edges.read_bytes()[: edges.stat().st_size // 2])
    elif damage == "foreign":
        other = solve(make_game("override", size=2, line=2, per_size=1), out=tmp_path / "o")
        edges.write_bytes((other.path.parent / EDGES).read_bytes())
    elif damage == "missing":
        edges.unlink()
    else:  # same solve id, but rows pointing past the table
        import pyarrow.parquet as pq

        t = pq.read_table(edges)
        df = pl.from_arrow(t).with_columns(pl.col("dst") + 10_000)
        tbl = df.to_arrow().replace_schema_metadata(t.schema.metadata)
        pq.write_table(tbl, edges)
    with pytest.raises(TableError, match="solve again|--force"):
        load(game, out=tmp_path)
    code, _, err = run(capsys, "report", "override", "--set", "size=2", "--set", "line=2", "--set",
                       "per_size=2", "--out", str(tmp_path), "--reports", str(tmp_path / "r"))
    assert code == 0, err  # report solves again (and says so) instead of serving a broken table
    assert "note:" in err and "Traceback" not in err
    load(game, out=tmp_path)  # now complete


# --- smaller items ---------------------------------------------------------------------------

def test_negative_max_positions_is_refused(capsys, tmp_path):
    for cmd in ("solve", "show"):
        code, _, err = run(capsys, cmd, "override", *SMALL, "--max-positions", "-5", "--out", str(tmp_path))
        assert code == 2 and "--max-positions" in one_line(err)


def test_show_has_a_size_limit(capsys, tmp_path):
    code, _, err = run(capsys, "show", "override", "--preset", "3x3", "--max-positions", "500",
                       "--out", str(tmp_path))
    assert code == 2 and "500 positions" in one_line(err)


def test_stale_temporaries_are_removed(tmp_path):
    game, sol = _solved_small(tmp_path)
    dead = 2**22 + 12345  # above the default pid_max of 4M... check it is not running
    while Path(f"/proc/{dead}").exists():
        dead += 1
    stale = sol.path.parent.parent / f".{sol.path.parent.name}.tmp-{dead}-abc"
    stale.mkdir()
    (stale / POSITIONS).write_bytes(b"half")
    solve(game, out=tmp_path, force=True)
    assert not stale.exists()


def test_usage_errors_are_one_line(capsys):
    for argv in (["solve"], ["frobnicate"], ["solve", "override", "--tol"], ["show", "override", "--bogus"]):
        assert main(argv) == 2
        _, err = capsys.readouterr()
        assert "error:" in one_line(err)
