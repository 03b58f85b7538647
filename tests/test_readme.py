"""Every command and code snippet of the README runs as written.

The `pyramids ...` lines of the README's command blocks run in order in one fresh folder (so the
tables one command writes are there for the next), with no standard input (`play` then ends at
once with a goodbye); then the Python blocks run there too; then the benchmark command. The
`make` lines are the set-up commands themselves (`make test` runs this suite, `make demo` is the
`pyramids solve`/`report` pair below) and are not re-run from inside the suite.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def fenced_blocks() -> list[tuple[str, str]]:
    """``(language, body)`` of every fenced block of the README."""
    text = README.read_text()
    return [(m.group(1).strip(), m.group(2)) for m in re.finditer(r"```([^\n]*)\n(.*?)```", text, re.S)]


def strip_comment(line: str) -> str:
    """A command line without its trailing ``  # comment`` (comments follow two spaces)."""
    return re.split(r"\s{2,}#", line, maxsplit=1)[0].strip()


def readme_commands() -> list[str]:
    cmds = []
    for lang, body in fenced_blocks():
        if lang:
            continue
        for line in body.splitlines():
            line = strip_comment(line)
            if line.startswith("pyramids ") or line.startswith(".venv/bin/python -m solver.bench"):
                cmds.append(line)
    return cmds


def readme_python() -> list[str]:
    return [body for lang, body in fenced_blocks() if lang == "python"]


def test_readme_has_the_two_setup_commands_first():
    lang, body = fenced_blocks()[0]
    lines = [strip_comment(ln) for ln in body.splitlines() if ln.strip()]
    assert lines == ["make demo", "make test"]
    makefile = (README.parent / "Makefile").read_text()
    assert "demo:" in makefile and "test:" in makefile
    assert "pyramids solve override --preset 3x3" in makefile  # what `make demo` solves


def test_readme_lists_commands_and_snippets():
    cmds = readme_commands()
    assert len(cmds) >= 10 and any(c.startswith("pyramids solve petal") for c in cmds)
    assert readme_python()


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("readme")


@pytest.mark.slow
@pytest.mark.parametrize("cmd", readme_commands())
def test_readme_command_runs(workdir, cmd):
    argv = shlex.split(cmd)
    if argv[0] == "pyramids":
        full = [sys.executable, "-m", "solver.cli", *argv[1:]]
    else:  # .venv/bin/python -m solver.bench ...: the interpreter running the tests
        full = [sys.executable, *argv[1:]]
    r = subprocess.run(full, cwd=workdir, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                       timeout=1200)
    assert r.returncode == 0, f"{cmd}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
    assert "Traceback" not in r.stderr


@pytest.mark.slow
def test_readme_python_snippets_run(workdir):
    """After the commands (whose tables the snippets read), every Python block runs."""
    for i, code in enumerate(readme_python()):
        r = subprocess.run([sys.executable, "-c", code], cwd=workdir, capture_output=True, text=True,
                           timeout=1200)
        assert r.returncode == 0, f"python block {i + 1}:\n{code}\n{r.stderr[-3000:]}"


def test_readme_links_resolve_and_quoted_estimates_are_the_reports():
    """Every relative link of the README points at a file of the repository, and every estimated
    share it quotes with its interval (``36.9% [35.0, 38.9]``) in a table row that links one
    shipped report is that report's number: a regenerated report cannot leave a stale figure."""
    root = README.parent
    text = README.read_text()
    missing = [t for t in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
               if not t.startswith(("http://", "https://", "mailto:")) and not (root / t).exists()]
    assert not missing, missing
    quoted = 0
    for line in text.splitlines():
        links = re.findall(r"\]\((reports/[^)]+\.md)\)", line)
        if not line.startswith("|") or len(links) != 1:
            continue
        report = (root / links[0]).read_text()
        for share, lo, hi in re.findall(r"(\d+\.\d)% \[(\d+\.\d), (\d+\.\d)\]", line):
            quoted += 1
            assert f"{share}%" in report and f"[{lo}%, {hi}%]" in report, (links[0], share, lo, hi)
    assert quoted >= 10  # the findings table and the shipped estimates quote every full-size game
