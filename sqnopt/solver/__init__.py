"""The generic driver: :class:`Solver`, its state and its results."""

from sqnopt.solver._result import (
    CurvatureError,
    DivergenceError,
    History,
    IterationInfo,
    SolveResult,
    Status,
)
from sqnopt.solver._solver import IncompatibleComponentsError, Solver, resolve_component
from sqnopt.solver._state import SolverState

__all__ = [
    "CurvatureError",
    "DivergenceError",
    "History",
    "IncompatibleComponentsError",
    "IterationInfo",
    "SolveResult",
    "Solver",
    "SolverState",
    "Status",
    "resolve_component",
]
