"""Step rules: the scalar step at each iteration."""

from sqnopt.interfaces import StepRule
from sqnopt.steps._base import (
    ArmijoKernel,
    ConstantKernel,
    DecayingKernel,
    InverseSqrtKernel,
    PegasosStepKernel,
    PolyakKernel,
    StepKernel,
)
from sqnopt.steps._components import (
    Armijo,
    Constant,
    Decaying,
    InverseSqrt,
    LipschitzStep,
    PegasosStep,
    Polyak,
    ScoreLine,
    Wolfe,
)
from sqnopt.steps._score_line import ScoreLineKernel
from sqnopt.steps._wolfe import WolfeKernel

__all__ = [
    "Armijo",
    "ArmijoKernel",
    "Constant",
    "ConstantKernel",
    "Decaying",
    "DecayingKernel",
    "InverseSqrt",
    "InverseSqrtKernel",
    "LipschitzStep",
    "PegasosStep",
    "PegasosStepKernel",
    "Polyak",
    "PolyakKernel",
    "ScoreLine",
    "ScoreLineKernel",
    "StepKernel",
    "StepRule",
    "Wolfe",
    "WolfeKernel",
]
