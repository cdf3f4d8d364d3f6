"""sqnopt: stochastic quasi-Newton and stochastic first-order solvers for large linear models.

Quick start::

    from sqnopt import Solver, LogLoss, Identity, Fixed, Decaying
    result = Solver(objective=LogLoss(lam=1e-4), curvature=Identity(), schedule=Fixed(5),
                    step=Decaying(eps0=0.1, T0=100), max_epochs=5, random_state=0).fit(X, y)
    result.coef, result.fun, result.history

scikit-learn users: ``from sqnopt import SQNClassifier`` (needs ``pip install 'sqnopt[sklearn]'``;
scikit-learn is imported only then). Without scikit-learn, :class:`sqnopt.training.Trainer` and
:class:`sqnopt.model.LinearModel` do the same work.
"""

from typing import Any

from sqnopt._simd_info import simd_variant
from sqnopt.curvature import (
    LBFGS,
    AdaGrad,
    BoundLBFGS,
    FullBFGS,
    HessianLBFGS,
    Identity,
    Newton,
    NewtonCG,
    QuadraticBound,
    RegularizedBFGS,
    TruncatedNewton,
)
from sqnopt.interfaces import (
    BatchSchedule,
    CurvatureModel,
    GradientEstimator,
    Objective,
    Problem,
    Projection,
    StepRule,
)
from sqnopt.gradients import SAGA, SVRG, Minibatch, OverlapBatch, ProgressiveBatch
from sqnopt.objectives import BinaryLogistic, Hinge, LogLinear, LogLoss, Softmax, SquaredHinge
from sqnopt.projections import ExpGradPM, L1Ball, L2Ball, LazyProjection, MirrorMap
from sqnopt.registry import get_registry, hookimpl
from sqnopt.schedules import Fixed, Full, Geometric, Linear
from sqnopt.solver import (
    CurvatureError,
    DivergenceMonitor,
    DivergenceWarning,
    InstabilityWarning,
    History,
    IncompatibleComponentsError,
    IterationInfo,
    SolveResult,
    Solver,
    SolverState,
    Status,
)
from sqnopt.steps import (
    Armijo,
    Constant,
    Decaying,
    InverseSqrt,
    LipschitzStep,
    PegasosStep,
    ScoreLine,
    Wolfe,
)

__version__ = "0.1.0"

_LAZY = {"SQNClassifier": "sqnopt.estimators", "SQNConvergenceWarning": "sqnopt.estimators"}


def __getattr__(name: str) -> Any:
    """``sqnopt.SQNClassifier`` (and its warning class) import scikit-learn on first use only."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'sqnopt' has no attribute {name!r}")


__all__ = [
    "AdaGrad",
    "Armijo",
    "BatchSchedule",
    "BinaryLogistic",
    "BoundLBFGS",
    "Constant",
    "CurvatureError",
    "CurvatureModel",
    "Decaying",
    "DivergenceMonitor",
    "DivergenceWarning",
    "InstabilityWarning",
    "ExpGradPM",
    "Fixed",
    "Full",
    "FullBFGS",
    "Geometric",
    "GradientEstimator",
    "HessianLBFGS",
    "Hinge",
    "History",
    "Identity",
    "IncompatibleComponentsError",
    "InverseSqrt",
    "LipschitzStep",
    "IterationInfo",
    "L1Ball",
    "L2Ball",
    "LBFGS",
    "LazyProjection",
    "Linear",
    "LogLinear",
    "LogLoss",
    "Minibatch",
    "MirrorMap",
    "Newton",
    "NewtonCG",
    "Objective",
    "OverlapBatch",
    "PegasosStep",
    "Problem",
    "ProgressiveBatch",
    "Projection",
    "QuadraticBound",
    "RegularizedBFGS",
    "SAGA",
    "SQNClassifier",
    "SQNConvergenceWarning",
    "SVRG",
    "ScoreLine",
    "Softmax",
    "SolveResult",
    "Solver",
    "SolverState",
    "SquaredHinge",
    "Status",
    "StepRule",
    "TruncatedNewton",
    "Wolfe",
    "get_registry",
    "hookimpl",
    "simd_variant",
    "__version__",
]
