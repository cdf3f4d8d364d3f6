"""pluggy hook specifications of sqnopt.

A plugin is a module (or object) with functions decorated by :data:`sqnopt.registry.hookimpl`
whose names are the hooks below. Each hook receives ``register``; call it once per component::

    from sqnopt.registry import hookimpl

    @hookimpl
    def sqnopt_register_curvature_models(register):
        register("bb", BarzilaiBorwein, aliases=("barzilai_borwein",))

``register(name, factory, *, aliases=())``: ``factory(**params)`` must return a component
instance of the hook's kind (an :class:`~sqnopt.interfaces.Objective`,
:class:`~sqnopt.interfaces.CurvatureModel`, ...). Installed packages are discovered through the
``sqnopt`` entry-point group; sqnopt's own components register through these same hooks.
"""

from __future__ import annotations

from typing import Any, Callable, Protocol

import pluggy

PROJECT = "sqnopt"
hookspec = pluggy.HookspecMarker(PROJECT)

__all__ = [
    "PROJECT",
    "RegisterFn",
    "hookspec",
    "sqnopt_register_curvature_models",
    "sqnopt_register_gradient_estimators",
    "sqnopt_register_presets",
    "sqnopt_register_objectives",
    "sqnopt_register_penalties",
    "sqnopt_register_projections",
    "sqnopt_register_schedules",
    "sqnopt_register_step_rules",
]


class RegisterFn(Protocol):
    """The ``register`` callback passed to every hook."""

    def __call__(self, name: str, factory: Callable[..., Any], *,
                 aliases: tuple[str, ...] = ()) -> None: ...


@hookspec
def sqnopt_register_objectives(register: RegisterFn) -> None:
    """Register objectives (factories returning :class:`~sqnopt.interfaces.Objective`)."""


@hookspec
def sqnopt_register_curvature_models(register: RegisterFn) -> None:
    """Register curvature models (factories returning :class:`~sqnopt.interfaces.CurvatureModel`)."""


@hookspec
def sqnopt_register_schedules(register: RegisterFn) -> None:
    """Register batch schedules (factories returning :class:`~sqnopt.interfaces.BatchSchedule`)."""


@hookspec
def sqnopt_register_step_rules(register: RegisterFn) -> None:
    """Register step rules (factories returning :class:`~sqnopt.interfaces.StepRule`)."""


@hookspec
def sqnopt_register_projections(register: RegisterFn) -> None:
    """Register projections (factories returning :class:`~sqnopt.interfaces.Projection`)."""


@hookspec
def sqnopt_register_gradient_estimators(register: RegisterFn) -> None:
    """Register gradient estimators (factories returning
    :class:`~sqnopt.interfaces.GradientEstimator`)."""


@hookspec
def sqnopt_register_penalties(register: RegisterFn) -> None:
    """Register penalties of composite objectives (factories returning
    :class:`~sqnopt.interfaces.Penalty`)."""


@hookspec
def sqnopt_register_presets(register: RegisterFn) -> None:
    """Register named compositions (factories ``f(**kwargs)`` returning a
    :class:`~sqnopt.Solver`), reachable as ``Solver.preset(name, ...)``."""
