"""Structural checks: stubs beside compiled modules, documented hooks and public symbols."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

import sqnopt
from sqnopt.registry import hookspecs

PKG = Path(sqnopt.__file__).resolve().parent
DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_every_compiled_module_has_a_stub() -> None:
    compiled = [p for p in PKG.rglob("*") if p.suffix in (".so", ".pyd")]
    assert compiled, "no compiled modules found"
    for so in compiled:
        stub = so.parent / (so.name.split(".")[0] + ".pyi")
        assert stub.exists(), f"{so.name} has no .pyi stub"


def test_pxd_files_are_installed_for_cimport() -> None:
    for name in ("objectives/_base.pxd", "objectives/_partition_bound.pxd", "curvature/_base.pxd",
                 "schedules/_base.pxd", "steps/_base.pxd", "projections/_base.pxd", "data/_rows.pxd",
                 "penalties/_base.pxd", "_vec.pxd"):
        assert (PKG / name).exists(), f"{name} is not installed"


def test_hooks_are_documented_with_their_signature() -> None:
    doc = DOCS / "architecture.md"
    if not doc.exists():
        pytest.skip("docs/ not present (installed without the source tree)")
    text = doc.read_text()
    hooks = [n for n, f in vars(hookspecs).items() if n.startswith("sqnopt_") and callable(f)]
    assert len(hooks) == 8
    for name in hooks:
        assert name in text, f"hook {name} is not documented in docs/architecture.md"
        params = list(inspect.signature(getattr(hookspecs, name)).parameters)
        assert params == ["register"]
    assert "register(name, factory, *, aliases=())" in text


def test_public_symbols_have_docstrings() -> None:
    for name in sqnopt.__all__:
        obj = getattr(sqnopt, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert inspect.getdoc(obj), f"sqnopt.{name} has no docstring"


def _import_graph() -> dict[str, set[str]]:
    """Module -> the sqnopt modules it imports, anywhere in its source (module level or inside
    functions); compiled modules are leaves; ``from pkg import sub`` names the submodule."""
    import ast
    import collections

    root = Path(sqnopt.__file__).resolve().parent
    mods: dict[str, Path] = {}
    for p in root.rglob("*.py"):
        name = ".".join(p.relative_to(root.parent).with_suffix("").parts)
        mods[name[:-9] if name.endswith(".__init__") else name] = p
    leaves = {".".join(p.relative_to(root.parent).with_suffix("").parts)
              for p in root.rglob("*.pyx")}
    leaves |= {".".join(p.relative_to(root.parent).parts).split(".cpython")[0]
               for p in root.rglob("*.so")}
    known = set(mods) | leaves
    graph: dict[str, set[str]] = collections.defaultdict(set)
    for name, p in mods.items():
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                subs = [f"{node.module}.{a.name}" for a in node.names]
                targets = subs + ([node.module] if any(t not in known for t in subs) else [])
            else:
                continue
            for t in targets:
                if not t.startswith("sqnopt"):
                    continue
                while t and t not in known:
                    t = t.rpartition(".")[0]
                if t and t != name:
                    graph[name].add(t)
    return graph


def test_no_import_cycles() -> None:
    """No sqnopt module imports, directly or through others, a module that imports it -- lazy
    imports inside functions included (the presets reach the Solver through the registry)."""
    graph = _import_graph()
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> None:
        if node in path:
            cycle = path[path.index(node):] + [node]
            raise AssertionError("import cycle: " + " -> ".join(cycle))
        if node in done:
            return
        for nxt in sorted(graph.get(node, ())):
            visit(nxt, path + [node])
        done.add(node)

    for module in sorted(graph):
        visit(module, [])


def test_every_module_imports_on_its_own(tmp_path: Path) -> None:
    """Each public module imports first in a fresh interpreter (what a user's first import
    does), so no module depends on another having been imported before it. The interpreter
    starts in an empty directory with the sqnopt under test first on its path: from a checkout's
    root, ``-c`` would import the unbuilt sources there instead of an installed sqnopt."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [str(PKG.parent), os.environ.get("PYTHONPATH")]))}

    modules = ["sqnopt.recipes", "sqnopt.presets", "sqnopt.training", "sqnopt.solver",
               "sqnopt.interfaces", "sqnopt.registry", "sqnopt.gradients", "sqnopt.curvature",
               "sqnopt.objectives", "sqnopt.data", "sqnopt.model", "sqnopt.cli",
               "sqnopt.estimators", "sqnopt.datasets", "sqnopt.testing"]
    for module in modules:
        res = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True,
                             text=True, timeout=120, cwd=tmp_path, env=env)
        assert res.returncode == 0, (module, res.stderr)

