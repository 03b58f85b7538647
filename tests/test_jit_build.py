"""Compiled searches built from a template and a game's parts (solver/core/jit_build.py): cached
on disk between processes, rebuilt when a source changes, compiled in memory where no folder can
be written or a part cannot be imported by name; the same results every way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from numba import njit

from solver.core import jit_build

TEMPLATE = '''
SCALE = 10


def twice(x):
    return step(step(x)) * SCALE


def thrice(x):
    return step(twice(x))
'''

PARTS = '''
from numba import njit


@njit(cache=True)
def inc(x):
    return x + {add}
'''

RUN = '''
import json, sys
sys.path.insert(0, sys.argv[1])
import tmpl, parts
from solver.core import jit_build
got = jit_build.build(tmpl, ["twice", "thrice"], {"step": parts.inc})
f = got["thrice"]
print(json.dumps({"value": int(f(1)), "hits": sum(f.stats.cache_hits.values()),
                  "misses": sum(f.stats.cache_misses.values())}))
'''


def _write(folder: Path, add: int) -> None:
    (folder / "tmpl.py").write_text(TEMPLATE)
    (folder / "parts.py").write_text(PARTS.format(add=add))


def _run(folder: Path, jit_dir: Path | str) -> dict:
    env = dict(os.environ, PYRAMIDS_JIT_DIR=str(jit_dir))
    env.pop("NUMBA_CACHE_DIR", None)  # numba's cache beside each file (all under tmp_path)
    out = subprocess.run([sys.executable, "-c", RUN, str(folder)], env=env, capture_output=True, text=True,
                         check=True, timeout=300)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_built_code_is_cached_between_processes_and_rebuilt_when_a_part_changes(tmp_path):
    _write(tmp_path, 1)
    jit_dir = tmp_path / "jit"
    first = _run(tmp_path, jit_dir)
    # step(x) = x + 1: twice(1) = 3 * 10 = 30, thrice(1) = 31
    assert first == {"value": 31, "hits": 0, "misses": 1}
    files = sorted(p.name for p in jit_dir.glob("*.py"))
    assert len(files) == 1
    again = _run(tmp_path, jit_dir)
    assert again == {"value": 31, "hits": 1, "misses": 0}  # the machine code came from the cache
    _write(tmp_path, 2)  # a part's source changed: a new module, compiled afresh, the new answer
    changed = _run(tmp_path, jit_dir)
    assert changed == {"value": 52, "hits": 0, "misses": 1}
    assert len(list(jit_dir.glob("*.py"))) == 1  # the new module replaced the old one


def test_an_unwritable_folder_compiles_in_memory(tmp_path):
    _write(tmp_path, 1)
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    got = _run(tmp_path, blocker / "jit")
    assert got["value"] == 31 and got["hits"] == 0


def test_parts_made_at_run_time_compile_in_memory(tmp_path, monkeypatch):
    monkeypatch.setenv("PYRAMIDS_JIT_DIR", str(tmp_path / "jit"))
    sys.path.insert(0, str(tmp_path))
    try:
        (tmp_path / "tmpl_local.py").write_text(TEMPLATE)
        import tmpl_local

        def make(add):
            @njit
            def inc(x):
                return x + add
            return inc

        got = jit_build.build(tmpl_local, ["twice", "thrice"], {"step": make(3)})
        assert got["thrice"](1) == 3 + (1 + 3 + 3) * 10
        assert not (tmp_path / "jit").exists() or not list((tmp_path / "jit").glob("*.py"))
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("tmpl_local", None)


def test_the_game_searches_are_built_through_it():
    """Both players' searches of a game come from generated modules (cached), not closures."""
    from solver.api import make_game
    from solver.core.ab_jit import build_search as ab_build
    from solver.core.uct_jit import build_search as uct_build

    rules = make_game("blam", dict(rows=3, cols=3, per_size=1)).compiled_rules()
    for build in (ab_build, uct_build):
        fn = build(*rules.parts)
        assert fn.py_func.__module__.startswith("_pyramids_jit_")
        assert fn._cache.__class__.__name__ != "NullCache"
        text = Path(sys.modules[fn.py_func.__module__].__file__).read_text()
        assert "from solver.games._blam_jit import tree_moves as moves" in text


def test_a_rebuilt_module_replaces_the_old_one_and_its_cache(tmp_path):
    """A changed part gives a new module; the old one (same template, functions and parts) and
    its numba cache are removed, while another set of parts' module stays."""
    _write(tmp_path, 1)
    (tmp_path / "other.py").write_text(PARTS.format(add=5).replace("def inc", "def dec"))
    jit_dir = tmp_path / "jit"
    _run(tmp_path, jit_dir)
    env = dict(os.environ, PYRAMIDS_JIT_DIR=str(jit_dir))
    env.pop("NUMBA_CACHE_DIR", None)
    other = RUN.replace("import tmpl, parts", "import tmpl, other").replace("parts.inc", "other.dec")
    subprocess.run([sys.executable, "-c", other, str(tmp_path)], env=env, check=True, timeout=300,
                   capture_output=True)
    before = sorted(p.name for p in jit_dir.glob("*.py"))
    assert len(before) == 2 and list((jit_dir / "__pycache__").glob("*.nbi"))
    _write(tmp_path, 2)
    assert _run(tmp_path, jit_dir)["value"] == 52
    after = sorted(p.name for p in jit_dir.glob("*.py"))
    assert len(after) == 2 and len(set(after) & set(before)) == 1  # the other parts' module stays
    gone = (set(before) - set(after)).pop()
    assert not list((jit_dir / "__pycache__").glob(gone[:-3] + ".*"))
