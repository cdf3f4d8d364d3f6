"""Structural checks: stubs beside compiled modules, documented hooks and public symbols."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

import sqnopt
from sqnopt.registry import hookspecs

PKG = Path(sqnopt.__file__).resolve().parent
DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_every_compiled_module_has_a_stub() -> None:
    compiled = [p for p in PKG.rglob("*") if p.suffix in (".so", ".pyd")]
    assert compiled, "no compiled modules found"
    for so in compiled:
        stub = so.parent / (so.name.split(".")[0] + ".pyi")
        assert stub.exists(), f"{so.name} has no .pyi stub"


def test_pxd_files_are_installed_for_cimport() -> None:
    for name in ("objectives/_base.pxd", "curvature/_base.pxd", "schedules/_base.pxd",
                 "steps/_base.pxd", "projections/_base.pxd", "data/_rows.pxd", "_vec.pxd"):
        assert (PKG / name).exists(), f"{name} is not installed"


def test_hooks_are_documented_with_their_signature() -> None:
    doc = DOCS / "architecture.md"
    if not doc.exists():
        pytest.skip("docs/ not present (installed without the source tree)")
    text = doc.read_text()
    hooks = [n for n, f in vars(hookspecs).items() if n.startswith("sqnopt_") and callable(f)]
    assert len(hooks) == 6
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
