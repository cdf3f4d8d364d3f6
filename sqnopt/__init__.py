"""sqnopt: stochastic quasi-Newton and stochastic first-order solvers for large linear models.

Quick start::

    from sqnopt import Solver, LogLoss, Identity, Fixed, Decaying
    result = Solver(objective=LogLoss(lam=1e-4), curvature=Identity(), schedule=Fixed(5),
                    step=Decaying(eps0=0.1, T0=100), max_epochs=5, random_state=0).fit(X, y)
    result.coef, result.fun, result.history

scikit-learn users: ``from sqnopt import SQNClassifier`` (or ``SQNRegressor``; needs ``pip install 'sqnopt[sklearn]'``;
scikit-learn is imported only then). Without scikit-learn, :class:`sqnopt.training.Trainer` and
:class:`sqnopt.model.LinearModel` do the same work.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:   # the public names, imported when first used (see __getattr__)
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
    from sqnopt.objectives import (
        BinaryLogistic,
        Hinge,
        Huber,
        LogLinear,
        LogLoss,
        Poisson,
        Softmax,
        SquaredError,
        SquaredHinge,
    )
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
        SlowPathWarning,
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
    from sqnopt.estimators import (
        PathCV,
        SQNClassifier,
        SQNConvergenceWarning,
        SQNRegressor,
        regularization_path,
    )


def _check_built() -> None:
    """Refuse, with the fix, a source tree whose compiled extensions were never built (e.g.
    ``import sqnopt`` from a fresh checkout's root, which puts the sources first on the path)."""
    from importlib.util import find_spec

    if find_spec("sqnopt._simd_info") is None:
        import os

        import sys

        here = os.path.dirname(os.path.abspath(__file__))
        raise ImportError(
            f"sqnopt's compiled extensions are not built in {here} for this Python "
            f"({sys.version_info[0]}.{sys.version_info[1]}): this is a source tree without "
            "sqnopt._simd_info and the other Cython modules. Either install it, "
            "'pip install .' (then run Python from another directory, or the unbuilt sources "
            "here are imported first), or build the extensions in place: 'python setup.py "
            "build_ext --inplace'.", name="sqnopt._simd_info")


_check_built()

__version__ = "0.1.0"

#: Public name -> the module that defines it. ``import sqnopt`` loads none of them: the first
#: use of a name imports its module (PEP 562), so ``import sqnopt`` and the command line start
#: without loading NumPy, SciPy and the compiled core, and ``sqnopt.SQNClassifier`` imports
#: scikit-learn only when used.
_SOURCES: dict[str, str] = {
    "AdaGrad": "sqnopt.curvature",
    "Armijo": "sqnopt.steps",
    "BatchSchedule": "sqnopt.interfaces",
    "BinaryLogistic": "sqnopt.objectives",
    "BoundLBFGS": "sqnopt.curvature",
    "Constant": "sqnopt.steps",
    "CurvatureError": "sqnopt.solver",
    "CurvatureModel": "sqnopt.interfaces",
    "Decaying": "sqnopt.steps",
    "DivergenceMonitor": "sqnopt.solver",
    "DivergenceWarning": "sqnopt.solver",
    "ExpGradPM": "sqnopt.projections",
    "Fixed": "sqnopt.schedules",
    "Full": "sqnopt.schedules",
    "FullBFGS": "sqnopt.curvature",
    "Geometric": "sqnopt.schedules",
    "get_registry": "sqnopt.registry",
    "GradientEstimator": "sqnopt.interfaces",
    "HessianLBFGS": "sqnopt.curvature",
    "Hinge": "sqnopt.objectives",
    "History": "sqnopt.solver",
    "hookimpl": "sqnopt.registry",
    "Identity": "sqnopt.curvature",
    "IncompatibleComponentsError": "sqnopt.solver",
    "InstabilityWarning": "sqnopt.solver",
    "InverseSqrt": "sqnopt.steps",
    "IterationInfo": "sqnopt.solver",
    "SlowPathWarning": "sqnopt.solver",
    "L1Ball": "sqnopt.projections",
    "L2Ball": "sqnopt.projections",
    "LazyProjection": "sqnopt.projections",
    "LBFGS": "sqnopt.curvature",
    "Linear": "sqnopt.schedules",
    "LipschitzStep": "sqnopt.steps",
    "LogLinear": "sqnopt.objectives",
    "LogLoss": "sqnopt.objectives",
    "Minibatch": "sqnopt.gradients",
    "MirrorMap": "sqnopt.projections",
    "Newton": "sqnopt.curvature",
    "NewtonCG": "sqnopt.curvature",
    "Objective": "sqnopt.interfaces",
    "OverlapBatch": "sqnopt.gradients",
    "PegasosStep": "sqnopt.steps",
    "Problem": "sqnopt.interfaces",
    "ProgressiveBatch": "sqnopt.gradients",
    "Projection": "sqnopt.interfaces",
    "QuadraticBound": "sqnopt.curvature",
    "RegularizedBFGS": "sqnopt.curvature",
    "SAGA": "sqnopt.gradients",
    "ScoreLine": "sqnopt.steps",
    "simd_variant": "sqnopt._simd_info",
    "Softmax": "sqnopt.objectives",
    "Solver": "sqnopt.solver",
    "SolveResult": "sqnopt.solver",
    "SolverState": "sqnopt.solver",
    "SquaredHinge": "sqnopt.objectives",
    "SquaredError": "sqnopt.objectives",
    "Huber": "sqnopt.objectives",
    "Poisson": "sqnopt.objectives",
    "Status": "sqnopt.solver",
    "StepRule": "sqnopt.interfaces",
    "SVRG": "sqnopt.gradients",
    "TruncatedNewton": "sqnopt.curvature",
    "Wolfe": "sqnopt.steps",
    "SQNClassifier": "sqnopt.estimators",
    "SQNConvergenceWarning": "sqnopt.estimators",
    "SQNRegressor": "sqnopt.estimators",
    "PathCV": "sqnopt.estimators",
    "regularization_path": "sqnopt.estimators",
}


def __getattr__(name: str) -> Any:
    """The public name ``name``, imported from its module on first use (then kept)."""
    module = _SOURCES.get(name)
    if module is None:
        raise AttributeError(f"module 'sqnopt' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_SOURCES))


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
    "SlowPathWarning",
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
    "Poisson",
    "Huber",
    "Minibatch",
    "MirrorMap",
    "Newton",
    "NewtonCG",
    "Objective",
    "OverlapBatch",
    "PathCV",
    "PegasosStep",
    "Problem",
    "ProgressiveBatch",
    "Projection",
    "QuadraticBound",
    "RegularizedBFGS",
    "SAGA",
    "SQNClassifier",
    "SQNConvergenceWarning",
    "SQNRegressor",
    "SVRG",
    "ScoreLine",
    "Softmax",
    "SolveResult",
    "Solver",
    "SolverState",
    "SquaredError",
    "SquaredHinge",
    "Status",
    "StepRule",
    "TruncatedNewton",
    "Wolfe",
    "get_registry",
    "hookimpl",
    "regularization_path",
    "simd_variant",
    "__version__",
]
