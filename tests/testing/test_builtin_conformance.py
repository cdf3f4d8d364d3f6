"""``sqnopt.testing.check_component`` on every component sqnopt's own plugins register (the
list comes from the registry: a new registration is checked without touching this file), on
variants whose state or layout differs from the defaults', and on the NumPy reference twins
(pure-Python kernels, the Python loop). One test per check, so a failure names the component
and the check; known failures are strict xfails with the reason, so that a fix flips them."""

from __future__ import annotations

from typing import Any

import pytest

from sqnopt import L1Ball
from sqnopt.curvature import reference as curvature_twins
from sqnopt.gradients import reference as gradient_twins
from sqnopt.interfaces import Component
from sqnopt.objectives import reference as objective_twins
from sqnopt.objectives.reference import LogLossNumPy
from sqnopt.penalties import reference as penalty_twins
from sqnopt.projections import reference as projection_twins
from sqnopt.registry import DEFAULT_PLUGINS, get_registry
from sqnopt.schedules import reference as schedule_twins
from sqnopt.steps import reference as step_twins
from sqnopt.testing import component_checks

REG = get_registry()

#: Settings under which a component's state or layout is not the default one.
VARIANTS: list[tuple[str, str, dict[str, Any]]] = [
    ("curvature", "lbfgs", {"memory": 3}),                         # the ring buffer wraps
    ("curvature", "regularized_bfgs", {"method": "eig", "refresh_every": 3}),
    ("curvature", "quadratic_bound", {"solver": "exact"}),
    ("gradient", "svrg", {"period": 30}),                          # snapshots retaken
    ("gradient", "progressive", {"theta": 0.05, "nu": None}),      # batches grow at once
    ("projection", "l1ball", {"radius": 0.3}),
    ("penalty", "elasticnet", {"alpha": 0.3, "l1_ratio": 0.7}),
    ("penalty", "l1", {"alpha": 0.0}),
    ("projection", "eg_pm", {"radius": 2.0}),
    ("projection", "lazy_projection", {"inner": L1Ball(0.3)}),
    ("schedule", "linear", {"b1": 2, "gamma": 4.0}),
    ("schedule", "geometric", {"b1": 2, "rate": 1.2}),
    ("objective", "loglinear", {"n_outputs": 3}),
    ("objective", "squared_hinge", {"lam": 0.0}),
    ("objective", "softmax", {"lam": 0.0}),
    ("step", "armijo", {"eps0": 8.0, "shrink": 0.3}),
]

#: Known failures: (component name, check) -> reason. Strict: a fix makes the test fail until
#: the entry goes.
KNOWN: dict[tuple[str, str], str] = {}


def builtins() -> list[Component]:
    out = []
    for kind in ("objective", "curvature", "gradient", "step", "schedule", "projection",
                 "penalty"):
        out += [REG.create(kind, e.name) for e in REG.entries(kind)  # type: ignore[arg-type]
                if e.source in DEFAULT_PLUGINS]
    out += [REG.create(kind, name, **params) for kind, name, params in VARIANTS]  # type: ignore[arg-type]
    return out


def twins() -> list[tuple[Component, dict[str, Any]]]:
    """Every reference twin that builds with its defaults, and the others with settings."""
    special: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
        "LogLinearNumPy": ({"n_outputs": 3}, {}),
        "ScoreLineNumPy": ({}, {"objective": LogLossNumPy()}),   # reads the margin twin's rows
    }
    out = []
    for mod in (curvature_twins, gradient_twins, objective_twins, projection_twins,
                schedule_twins, step_twins, penalty_twins):
        for name in sorted(mod.__all__):
            cls = getattr(mod, name)
            if not (isinstance(cls, type) and issubclass(cls, Component)):
                continue
            params, options = special.get(name, ({}, {}))
            out.append((cls(**params), options))
    return out


def cases() -> list[Any]:
    params = []
    for comp, options in [(c, {}) for c in builtins()] + twins():
        for name, check in component_checks(comp, **options):
            base = name.split("[", 1)[0]
            reason = KNOWN.get((comp.name, base))
            marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
            params.append(pytest.param(check, id=f"{comp.kind}-{comp.describe()}-{base}",
                                       marks=marks))
    return params


@pytest.mark.parametrize("check", cases())
def test_conforms(check: Any) -> None:
    check()


def test_every_builtin_is_covered() -> None:
    names = {(c.kind, c.name) for c in builtins()}
    for kind in ("objective", "curvature", "gradient", "step", "schedule", "projection",
                 "penalty"):
        for entry in REG.entries(kind):  # type: ignore[arg-type]
            if entry.source in DEFAULT_PLUGINS:
                assert (kind, entry.name) in names
    assert {c.kind for c, _ in twins()} == {"objective", "curvature", "gradient", "step",
                                             "schedule", "projection", "penalty"}
