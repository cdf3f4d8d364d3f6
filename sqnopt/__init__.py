"""sqnopt: stochastic quasi-Newton and stochastic first-order solvers for large linear models.

Quick start::

    from sqnopt import Solver, LogLoss, Identity, Fixed, Decaying
    result = Solver(objective=LogLoss(lam=1e-4), curvature=Identity(), schedule=Fixed(5),
                    step=Decaying(eps0=0.1, T0=100), max_epochs=5, random_state=0).fit(X, y)
    result.coef, result.fun, result.history
"""

from sqnopt.curvature import Identity, QuadraticBound
from sqnopt.interfaces import (
    BatchSchedule,
    CurvatureModel,
    Objective,
    Problem,
    Projection,
    StepRule,
)
from sqnopt.objectives import BinaryLogistic, Hinge, LogLinear, LogLoss, Softmax, SquaredHinge
from sqnopt.projections import L2Ball
from sqnopt.registry import get_registry, hookimpl
from sqnopt.schedules import Fixed, Full, Geometric, Linear
from sqnopt.solver import (
    CurvatureError,
    DivergenceError,
    History,
    IncompatibleComponentsError,
    IterationInfo,
    SolveResult,
    Solver,
    SolverState,
    Status,
)
from sqnopt.steps import Constant, Decaying, InverseSqrt, PegasosStep

__version__ = "0.1.0"

__all__ = [
    "BatchSchedule",
    "BinaryLogistic",
    "Constant",
    "CurvatureError",
    "CurvatureModel",
    "Decaying",
    "DivergenceError",
    "Fixed",
    "Full",
    "Geometric",
    "Hinge",
    "History",
    "Identity",
    "IncompatibleComponentsError",
    "InverseSqrt",
    "IterationInfo",
    "L2Ball",
    "Linear",
    "LogLinear",
    "LogLoss",
    "Objective",
    "PegasosStep",
    "Problem",
    "Projection",
    "QuadraticBound",
    "Softmax",
    "SolveResult",
    "Solver",
    "SolverState",
    "SquaredHinge",
    "Status",
    "StepRule",
    "__version__",
    "get_registry",
    "hookimpl",
]
