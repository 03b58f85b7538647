"""The README's "Your own game" tutorial runs as written: its files are written from the README,
its commands run in order in a fresh folder, and the answers are checked against Nim theory
(Bouton: the player to move wins normal Nim exactly when the heaps' XOR is not 0; in misère Nim
with a heap above 1, the same)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
ROOT = README.parent


def tutorial() -> tuple[dict[str, str], list[list[str]]]:
    """``(files, command blocks)`` of the README's "Your own game" section."""
    text = README.read_text()
    section = text.split("## Your own game", 1)[1].split("\n## ", 1)[0]
    files: dict[str, str] = {}
    blocks: list[list[str]] = []
    for lang, body in re.findall(r"```([^\n]*)\n(.*?)```", section, re.S):
        words = lang.split()
        if len(words) == 2:  # "python pyramid_nim.py": a file to write
            files[words[1]] = body
        elif words == ["sh"]:
            blocks.append([ln.strip() for ln in body.splitlines() if ln.strip()])
    return files, blocks


def test_tutorial_has_the_promised_parts():
    files, blocks = tutorial()
    assert set(files) == {"pyramid_nim.py", "pyproject.toml", "fast_nim.py", "prove_fast_nim.py"}
    assert len(files["pyramid_nim.py"].splitlines()) <= 60  # "about 40 lines" of game
    commands = [c for b in blocks for c in b]
    assert any(c.startswith("pyramids check") for c in commands)
    assert "pip install -e ." in commands


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    r = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"{argv}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
    assert "Traceback" not in r.stderr
    return r


@pytest.mark.slow  # 33 s: every block of the tutorial, each command in a fresh interpreter
def test_tutorial_runs(tmp_path):
    files, blocks = tutorial()
    for name, body in files.items():
        (tmp_path / name).write_text(body)
    site = tmp_path / "site"
    env = {**os.environ, "PYTHONPATH": f"{site}{os.pathsep}{ROOT}"}
    bindir = Path(sys.executable).parent
    script = bindir / "pyramids"  # the installed command (it imports from the current folder)
    out: dict[str, str] = {}
    for cmd in (c for b in blocks for c in b):
        argv = shlex.split(cmd)
        if argv[:3] == ["pip", "install", "-e"]:
            # the same package, installed for real by pip into a folder of this test (so the
            # test never changes the environment it runs in): entry points and all
            argv = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                    "--no-build-isolation", "--target", str(site), "."]
        elif argv[0] == "pyramids":
            argv = ([str(script)] if script.exists() else [sys.executable, "-m", "solver.cli"]) + argv[1:]
        out[cmd] = _run(argv, tmp_path, env).stdout

    check = out["pyramids check --game pyramid_nim:PyramidNim --preset small"]
    assert check.startswith("ok: ") and "every position reachable from the start" in check
    # heaps 3, 3, 3: XOR 3 != 0, the first player wins
    assert "start          win for player 1" in out["pyramids solve --game pyramid_nim:PyramidNim --preset small"]
    # after 1@1 the heaps are 2, 3, 3 (XOR 2): the second player, to move, wins with 2@1
    show = out['pyramids show --game pyramid_nim:PyramidNim --preset small --moves "1@1"'].splitlines()
    assert show[1].startswith("player 2 to move: win")
    winning = {ln.split()[0] for ln in show if ln.startswith("  ") and ln.split()[1] == "win"}
    assert winning == {"2@1", "2@2", "2@3"}  # by Bouton: each leaves XOR 0, (0,3,3) (2,1,3) (2,3,1)
    assert list((tmp_path / "reports" / "pyramid-nim").glob("tune-misere-*/report.md"))
    listing = out["pyramids list"]
    assert re.search(r"^pyramid-nim: Pyramid Nim.*\[plug-in pyramid_nim:PyramidNim \(pyramid-nim\)\]",
                     listing, re.M)
    assert "start          win for player 1" in out["pyramids solve pyramid-nim --preset small"]

    r = _run([sys.executable, "prove_fast_nim.py"], tmp_path, env)
    assert re.search(r"^PyramidNim: .* positions", r.stdout, re.M)
    assert re.search(r"^FastPyramidNim: .* positions", r.stdout, re.M)


def test_tutorial_fast_expand_is_checked(tmp_path, monkeypatch):
    """The proof in step 4 can fail: a wrong batch expand is caught by the helper and by check."""
    files, _ = tutorial()
    for name in ("pyramid_nim.py", "fast_nim.py"):
        (tmp_path / name).write_text(files[name])
    broken = files["fast_nim.py"].replace("after = np.sort(after, axis=2)", "pass")
    assert broken != files["fast_nim.py"]
    (tmp_path / "broken_nim.py").write_text(broken)
    monkeypatch.syspath_prepend(str(tmp_path))
    from broken_nim import FastPyramidNim as Broken
    from fast_nim import FastPyramidNim
    from solver.core.selfcheck import check_game, compare_expand
    from solver.engines.enumerate import enumerate_positions

    game = Broken.from_params(heaps=3, height=3)
    keys = enumerate_positions(FastPyramidNim.from_params(heaps=3, height=3), workers=1).keys
    assert compare_expand(game, keys) == []  # not canonical: still right
    assert compare_expand(game, keys, canonical=True)  # canonical children: caught
    assert "expand" in check_game(game, playouts=0).counts
