"""No decision by a component's class in the recipes, the solver's build, the command line or
the trainer: they read what the components declare (``tuned``, ``plain``, ``requires``,
``compiled``, ...). An ``isinstance`` on a data type (arrays, sparse matrices, numbers,
strings) or on an interface of :mod:`sqnopt.interfaces` is validation and stays allowed."""

from __future__ import annotations

import ast
import builtins
import importlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import sqnopt
from sqnopt import interfaces

PKG = Path(sqnopt.__file__).resolve().parent
#: The modules the rule covers (``training/`` whole).
GUARDED = ["sqnopt.recipes", "sqnopt.solver._build", "sqnopt.cli"] + sorted(
    f"sqnopt.training.{p.stem}" for p in (PKG / "training").glob("*.py"))
#: The interfaces: checking that an object implements one is validation, not dispatch.
INTERFACES = {interfaces.Component, interfaces.Objective, interfaces.CurvatureModel,
              interfaces.GradientEstimator, interfaces.BatchSchedule, interfaces.StepRule,
              interfaces.Projection}


def _component_class(obj: object) -> bool:
    """A concrete component class or a kernel class (compiled or Python)."""
    if not isinstance(obj, type):
        return False
    if issubclass(obj, interfaces.Component):
        return obj not in INTERFACES
    if getattr(obj, "compiled", None) is True:            # the compiled kernels and their bases
        return True
    return obj.__module__.startswith(tuple(
        f"sqnopt.{kind}." for kind in ("curvature", "gradients", "steps", "schedules",
                                      "projections", "objectives")))


def _imports(tree: ast.AST) -> dict[str, tuple[str, str]]:
    """``local name -> (module, attribute)`` of every ``from m import a`` in ``tree`` (the
    function-level imports included)."""
    out: dict[str, tuple[str, str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                out[alias.asname or alias.name] = (node.module, alias.name)
    return out


def _resolve(node: ast.expr, namespace: dict[str, Any], imports: dict[str, tuple[str, str]]
             ) -> list[object]:
    """The objects an ``isinstance`` class argument stands for (empty when it is a local
    variable that cannot be known without running the code)."""
    if isinstance(node, ast.Tuple):
        return [obj for elt in node.elts for obj in _resolve(elt, namespace, imports)]
    if isinstance(node, ast.Name):
        if node.id in imports:
            module, attr = imports[node.id]
            obj: Any = getattr(importlib.import_module(module), attr, None)
        else:
            obj = namespace.get(node.id, getattr(builtins, node.id, None))
    elif isinstance(node, ast.Attribute):
        base = _resolve(node.value, namespace, imports)
        obj = getattr(base[0], node.attr, None) if len(base) == 1 else None
    else:
        return []
    if isinstance(obj, tuple):
        return list(obj)
    return [] if obj is None else [obj]


def class_dispatches(source: str, namespace: dict[str, Any]) -> list[str]:
    """``"line N: isinstance(..., Name)"`` for every ``isinstance`` / ``issubclass`` /
    ``type(x) is C`` on a component or kernel class in ``source`` (names looked up in the
    imports of the source and then in ``namespace``, the module's globals)."""
    tree = ast.parse(source)
    imports = _imports(tree)
    found = []
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in ("isinstance", "issubclass") and len(node.args) == 2):
            targets = [node.args[1]]
        elif (isinstance(node, ast.Compare) and isinstance(node.left, ast.Call)
              and isinstance(node.left.func, ast.Name) and node.left.func.id == "type"):
            targets = list(node.comparators)
        if any(_component_class(obj) for target in targets
               for obj in _resolve(target, namespace, imports)):
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return sorted(found, key=lambda f: int(f.split()[1].rstrip(":")))


def test_the_detector_finds_class_dispatch() -> None:
    """The check can fail: each form of dispatch by class is found, data checks are not."""
    source = (
        "from sqnopt.curvature import LBFGS, QuadraticBound\n"
        "from sqnopt.gradients import Minibatch\n"
        "from sqnopt.curvature._base import CurvatureKernel\n"
        "from sqnopt.interfaces import CurvatureModel\n"
        "import numpy as np\n"
        "BASES = (CurvatureKernel,)\n"
        "def f(c, g, k, X):\n"
        "    a = isinstance(c, (LBFGS, QuadraticBound))\n"
        "    b = isinstance(g, Minibatch)\n"
        "    d = isinstance(k, BASES)\n"
        "    e = type(c) is LBFGS\n"
        "    ok = isinstance(X, np.ndarray) and isinstance(c, CurvatureModel)\n"
        "    return isinstance(X, (int, float, str))\n")
    from sqnopt.curvature._base import CurvatureKernel

    found = class_dispatches(source, {"np": np, "BASES": (CurvatureKernel,)})
    assert [f.split(":")[0] for f in found] == ["line 8", "line 9", "line 10", "line 11"]


@pytest.mark.parametrize("module", GUARDED)
def test_no_component_class_dispatch(module: str) -> None:
    mod = importlib.import_module(module)
    path = Path(str(mod.__file__))
    found = class_dispatches(path.read_text(), vars(mod))
    assert not found, (
        f"{path.relative_to(PKG.parent)} decides by a component's class: {found}. Read a "
        "declaration of the component instead (sqnopt.interfaces: tuned, plain, requires, "
        "compiled, ...)")
