"""Step rules: the scalar step at each iteration."""

from sqnopt.interfaces import StepRule
from sqnopt.steps._base import (
    ConstantKernel,
    DecayingKernel,
    InverseSqrtKernel,
    PegasosStepKernel,
    StepKernel,
)
from sqnopt.steps._components import Constant, Decaying, InverseSqrt, PegasosStep

__all__ = [
    "Constant",
    "ConstantKernel",
    "Decaying",
    "DecayingKernel",
    "InverseSqrt",
    "InverseSqrtKernel",
    "PegasosStep",
    "PegasosStepKernel",
    "StepKernel",
    "StepRule",
]
