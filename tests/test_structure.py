"""The architecture of ../shared/DESIGN.md, checked on the source: imports run one way.

- no import cycle anywhere in ``solver/`` (imports inside functions count too: a cycle hidden in a
  function is still two modules that cannot be understood, tested or moved apart);
- no ``from module import _private`` across modules: a helper two modules need is public in a third;
- the engines (pure array functions) import neither the tables nor the pipeline;
- nothing in ``solver`` but the command line imports ``analysis``;
- every module of ``solver`` and ``analysis`` imports on its own in a fresh interpreter.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def modules(package: str = "solver") -> dict[str, Path]:
    out = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        out[name] = path
    return out


def imports(mods: dict[str, Path]) -> tuple[dict[str, set[str]], list[tuple[str, str, str]]]:
    """Per module, the modules of ``mods`` (and of ``analysis``) it imports; and every
    ``(importer, module, _name)`` that takes a private name from another module."""
    graph: dict[str, set[str]] = {m: set() for m in mods}
    private = []
    for m, path in mods.items():
        pkg = m if path.name == "__init__.py" else m.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = pkg.split(".")
                    base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    if full in mods:
                        graph[m].add(full)
                    else:
                        graph[m].add(base)
                        if alias.name.startswith("_") and base != m and base in mods:
                            private.append((m, base, alias.name))
            elif isinstance(node, ast.Import):
                graph[m].update(a.name for a in node.names)
        graph[m].discard(m)
    return graph, private


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_the_cycle_finder_finds_a_cycle():
    # the check below can fail: a two-module cycle and a three-module one are found, a chain is not
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": set()}) == [["a", "b"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycles_in_solver():
    mods = modules()
    graph, _ = imports(mods)
    # a package's __init__ re-exports its modules; a module importing its own package's
    # re-export is the cycle to look for, so __init__ files stay in the graph
    assert cycles(graph) == []


def test_no_private_names_imported_across_modules():
    mods = {**modules("solver"), **modules("analysis")}
    _, private = imports(mods)
    assert private == []


def test_engines_import_neither_tables_nor_pipeline():
    graph, _ = imports(modules())
    bad = sorted((m, t) for m, targets in graph.items() if m.startswith("solver.engines")
                 for t in targets if t == "solver.tables" or t.startswith("solver.pipeline"))
    assert bad == []


def test_only_the_command_line_imports_analysis():
    graph, _ = imports(modules())
    bad = sorted((m, t) for m, targets in graph.items() for t in targets
                 if t.startswith("analysis") and m != "solver.cli")
    assert bad == []


@pytest.mark.slow  # one fresh interpreter per module: about a minute
@pytest.mark.parametrize("package", ["solver", "analysis"])
def test_every_module_imports_on_its_own(package):
    names = [m for m in modules(package)]
    script = ("import importlib, subprocess, sys\n"
              "bad = []\n"
              "for name in sys.argv[1:]:\n"
              "    r = subprocess.run([sys.executable, '-c', f'import {name}'], capture_output=True, text=True)\n"
              "    if r.returncode: bad.append((name, r.stderr.strip().splitlines()[-1:]))\n"
              "print(bad)\n"
              "sys.exit(1 if bad else 0)\n")
    r = subprocess.run([sys.executable, "-c", script, *names], capture_output=True, text=True, cwd=ROOT,
                       timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
