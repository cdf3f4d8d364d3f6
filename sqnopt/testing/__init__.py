"""Conformance checks for sqnopt components, built-in or from a plugin.

``check_component(component)`` recognises the component's kind from the interface of
:mod:`sqnopt.interfaces` it implements (an :class:`~sqnopt.interfaces.Objective`, a
:class:`~sqnopt.interfaces.CurvatureModel`, a :class:`~sqnopt.interfaces.GradientEstimator`, a
:class:`~sqnopt.interfaces.StepRule`, a :class:`~sqnopt.interfaces.BatchSchedule`, a
:class:`~sqnopt.interfaces.Projection` or a :class:`~sqnopt.interfaces.Penalty`), runs that
kind's checks and returns a :class:`ConformanceReport`; the first check that fails raises :class:`ConformanceError` (an
``AssertionError``) naming the check, the component and what differed.
``component_checks(component)`` returns the checks as ``(name, callable)`` pairs, so that a
test suite can parametrize over them and mark a known failure::

    import pytest
    from sqnopt.testing import component_checks

    @pytest.mark.parametrize("name, check", component_checks(MyModel()))
    def test_my_model(name, check):
        check()

Every kind is checked for

* its configuration: frozen, comparable, picklable, described, and rebuilt from
  ``params()`` through the registry under its name when it is registered;
* its kernel: ``init`` builds a compiled kernel (a subclass of the kind's Cython base) or a
  Python object with the kind's protocol;
* its declarations: the flags the component declares agree with its kernel's;
* its state: a checkpoint round trip (``get_state`` -> checkpoint file -> ``set_state`` on a
  fresh kernel) continues bit for bit; a kernel that keeps state it does not carry across
  *silently drops state* and fails; one without ``get_state``/``set_state`` is reported as
  having *no declared state* (the plugin guide's "Checking a component" gives the rules);
* its memory declaration, where it has one (``memory_bytes``): a finite integer >= 0 of the
  order of what the kernel holds;
* its requirements: a solver refuses an objective without a capability it ``requires``;
* a short solve: finite iterates, and the compiled and Python loops agreeing bit for bit;

and per kind for what the kind promises:

* objectives: values and gradients against central finite differences at random points and at
  extreme margins, minibatch against full gradients, each declared capability against the
  methods that provide it (Hessian-vector products and the dense Hessian against finite
  differences of the gradient, the quadratic bound as a majoriser, linear scores against the
  gradient, margins, probabilities, the curvature bound), the same values on dense and CSR
  (int32 and int64 indices), float32 and float64 data, sample weights as repetitions, and an
  unregularised intercept;
* curvature models: a finite descent direction before and after secant pairs, a non-finite
  pair never accepted, and pair counts that add up in a short solve;
* gradient estimators: the minibatch objective and plain gradient they report, a full-batch
  estimate equal to the full gradient, a variance-reduced estimate equal to the full gradient
  at its snapshot, batch sizes and overlapping batches where declared;
* step rules: positive finite steps that depend only on ``t``; a line search's step satisfies
  sufficient decrease on a convex quadratic and refuses an ascent direction;
* batch schedules: integer sizes in ``[1, n]``, a function of ``k``, non-decreasing where
  declared;
* projections: a Euclidean projection is idempotent, firmly non-expansive and the nearest
  feasible point, and a declared ball radius is the ball it projects on; a mirror map leaves a
  zero step in place; intercepts are never projected;
* penalties: the value against the declared weights, the proximal map (exact zeros, firmly
  non-expansive, the minimiser by its optimality condition), the pseudo-gradient, and a small
  composite solve that reaches a zero pseudo-gradient (instead of the short driver solve).
"""

from __future__ import annotations

from typing import Any, cast

from sqnopt.interfaces import KINDS, Component, Kind, Objective
from sqnopt.testing._core import (
    Check,
    ConformanceError,
    ConformanceReport,
    Suite,
    component_kind,
    named,
)
from sqnopt.testing._curvature import CurvatureSuite
from sqnopt.testing._gradient import GradientSuite
from sqnopt.testing._objective import ObjectiveSuite
from sqnopt.testing._penalty import PenaltySuite
from sqnopt.testing._projection import ProjectionSuite
from sqnopt.testing._schedule import ScheduleSuite
from sqnopt.testing._step import StepSuite

__all__ = [
    "Check",
    "ConformanceError",
    "ConformanceReport",
    "check_component",
    "check_curvature_model",
    "component_checks",
    "component_kind",
    "curvature_model_checks",
]

_SUITES: dict[Kind, type[Suite]] = {
    "objective": ObjectiveSuite,
    "curvature": CurvatureSuite,
    "gradient": GradientSuite,
    "step": StepSuite,
    "schedule": ScheduleSuite,
    "projection": ProjectionSuite,
    "penalty": PenaltySuite,
}


def _resolve(component: Any, kind: Kind | None) -> Component:
    """A component from an instance, a registered name, or ``(name, params)``."""
    if not (isinstance(component, str) or (isinstance(component, tuple) and len(component) == 2
                                            and isinstance(component[0], str))):
        return cast(Component, component)
    from sqnopt.registry import get_registry

    name, params = (component, {}) if isinstance(component, str) else component
    reg = get_registry()
    if kind is None:
        kinds = [k for k in KINDS if name.lower() in _names(k)]
        if len(kinds) != 1:
            where = " and ".join(kinds) if kinds else "no kind"
            raise ValueError(f"{name!r} is registered as {where}: pass kind= (one of {KINDS})")
        kind = kinds[0]
    return reg.create(kind, name, **dict(params))


def _names(kind: Kind) -> set[str]:
    from sqnopt.registry import get_registry

    reg = get_registry()
    out = set()
    for entry in reg.entries(kind):
        out.add(entry.name)
        out.update(entry.aliases)
    return out


def _suite(component: Any, kind: Kind | None, objective: Objective | str | None,
           data: tuple[Any, Any] | None, n_features: int, random_state: int,
           strict_state: bool) -> Suite:
    comp = _resolve(component, kind)
    found = component_kind(comp)
    if kind is not None and found != kind:
        raise TypeError(f"{type(comp).__name__} is a {found} component, not a {kind}")
    obj: Objective | None = None
    if objective is not None:
        obj = cast(Objective, _resolve(objective, "objective"))
    return _SUITES[found](comp, objective=obj, data=data, n_features=n_features,
                          random_state=random_state, strict_state=strict_state)


def component_checks(component: Any, *, kind: Kind | None = None,
                     objective: Objective | str | None = None,
                     data: tuple[Any, Any] | None = None, n_features: int = 6,
                     random_state: int = 0, strict_state: bool = False
                     ) -> list[tuple[str, Check]]:
    """The conformance checks of ``component`` as ``(name, zero-argument callable)`` pairs.

    Names are ``check_<what>[<component.describe()>]``; a callable returns ``None`` or a note,
    and raises :class:`ConformanceError` when the component does not conform. The arguments
    are those of :func:`check_component`.
    """
    suite = _suite(component, kind, objective, data, n_features, random_state, strict_state)
    return named(suite.checks(), suite.label())


def check_component(component: Any, *, kind: Kind | None = None,
                    objective: Objective | str | None = None,
                    data: tuple[Any, Any] | None = None, n_features: int = 6,
                    random_state: int = 0, strict_state: bool = False) -> ConformanceReport:
    """Run every conformance check of ``component``'s kind on it.

    Parameters
    ----------
    component
        A component instance; or a registered name, or ``(name, params)``, of any kind
        (``kind`` picks one when the name is registered for several).
    kind
        The kind, only to resolve a name registered for several kinds.
    objective
        The objective the kernels of a non-objective component are built for; by default the
        first registered objective that provides every capability the component ``requires``
        (``logloss`` when it qualifies).
    data
        ``(X, y)`` to check on instead of the small synthetic data (the objective's labels:
        binary or multiclass).
    n_features
        Features of the small synthetic problems.
    random_state
        Seed of the synthetic data, points, batches and pairs.
    strict_state
        Fail a kernel that keeps state but declares none (no ``get_state``/``set_state``)
        instead of reporting it: its checkpoints then have no file form.

    Returns
    -------
    ConformanceReport
        The checks run and the notes some of them made.

    Raises
    ------
    ConformanceError
        An ``AssertionError`` naming the first check that failed, the component and what
        differed.
    TypeError
        ``component`` implements none (or several) of the component interfaces.
    """
    suite = _suite(component, kind, objective, data, n_features, random_state, strict_state)
    label = suite.label()
    passed: list[str] = []
    notes: dict[str, str] = {}
    for name, check in named(suite.checks(), label):
        note = check()
        base = name.split("[", 1)[0]
        passed.append(base)
        if note:
            notes[base] = note
    return ConformanceReport(component=label, kind=suite.kind, passed=tuple(passed),
                             notes=notes)


def check_curvature_model(model: Any, *, objective: Objective | str | None = None,
                          n_features: int = 6, random_state: int = 0) -> None:
    """:func:`check_component` for a curvature model (an instance or a registered curvature
    name); raises :class:`ConformanceError` as it does."""
    check_component(model, kind="curvature", objective=objective, n_features=n_features,
                    random_state=random_state)


def curvature_model_checks(model: Any, *, objective: Objective | str | None = None,
                           n_features: int = 6, random_state: int = 0
                           ) -> list[tuple[str, Check]]:
    """:func:`component_checks` for a curvature model."""
    return component_checks(model, kind="curvature", objective=objective,
                            n_features=n_features, random_state=random_state)
