"""Objectives: loss + L2 regularisation, as components (``LogLoss()``, ``SquaredError()``) and
compiled kernels."""

from sqnopt.interfaces import Objective
from sqnopt.objectives._base import MarginObjectiveKernel, ObjectiveKernel
from sqnopt.objectives._components import Hinge, LogLoss, SquaredHinge
from sqnopt.objectives._loglinear import (
    BinaryLogisticKernel,
    LogLinearKernel,
    SoftmaxKernel,
    StackedLogLinearKernel,
)
from sqnopt.objectives._loglinear_components import (
    BinaryLogistic,
    LogLinear,
    Softmax,
    softmax_joint_features,
)
from sqnopt.objectives._margin import HingeKernel, LogisticKernel, SquaredHingeKernel
from sqnopt.objectives._partition_bound import BoundObjectiveKernel
from sqnopt.objectives._regression import (
    HuberKernel,
    PoissonKernel,
    ScoreObjectiveKernel,
    SquaredErrorKernel,
)
from sqnopt.objectives._regression_components import Huber, Poisson, SquaredError

__all__ = [
    "Huber",
    "HuberKernel",
    "Poisson",
    "PoissonKernel",
    "ScoreObjectiveKernel",
    "SquaredError",
    "SquaredErrorKernel",
    "BinaryLogistic",
    "BinaryLogisticKernel",
    "BoundObjectiveKernel",
    "Hinge",
    "HingeKernel",
    "LogLinear",
    "LogLinearKernel",
    "LogLoss",
    "LogisticKernel",
    "MarginObjectiveKernel",
    "Objective",
    "ObjectiveKernel",
    "Softmax",
    "SoftmaxKernel",
    "SquaredHinge",
    "SquaredHingeKernel",
    "StackedLogLinearKernel",
    "softmax_joint_features",
]
