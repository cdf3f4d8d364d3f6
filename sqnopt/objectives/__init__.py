"""Objectives: loss + L2 regularisation, as components (``LogLoss()``) and compiled kernels."""

from sqnopt.interfaces import Objective
from sqnopt.objectives._base import MarginObjectiveKernel, ObjectiveKernel
from sqnopt.objectives._components import Hinge, LogLoss, SquaredHinge
from sqnopt.objectives._margin import HingeKernel, LogisticKernel, SquaredHingeKernel

__all__ = [
    "Hinge",
    "HingeKernel",
    "LogLoss",
    "LogisticKernel",
    "MarginObjectiveKernel",
    "Objective",
    "ObjectiveKernel",
    "SquaredHinge",
    "SquaredHingeKernel",
]
