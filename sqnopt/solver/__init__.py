"""The generic driver: :class:`Solver`, its state and its results."""

from sqnopt.solver._monitor import DivergenceMonitor
from sqnopt.solver._result import (
    CurvatureError,
    DivergenceWarning,
    InstabilityWarning,
    History,
    IterationInfo,
    LoopPath,
    SlowPathWarning,
    SolveResult,
    Status,
)
from sqnopt.solver._solver import IncompatibleComponentsError, Solver, resolve_component
from sqnopt.solver._state import SolverState

__all__ = [
    "CurvatureError",
    "DivergenceMonitor",
    "DivergenceWarning",
    "InstabilityWarning",
    "History",
    "IncompatibleComponentsError",
    "IterationInfo",
    "LoopPath",
    "SlowPathWarning",
    "SolveResult",
    "Solver",
    "SolverState",
    "Status",
    "resolve_component",
]
