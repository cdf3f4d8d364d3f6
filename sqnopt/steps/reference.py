"""Pure-Python reference twins of the compiled step rules."""

from __future__ import annotations

import math
from dataclasses import dataclass

from sqnopt.interfaces import Problem, StepRule

__all__ = ["ConstantNumPy", "DecayingNumPy", "InverseSqrtNumPy", "PegasosStepNumPy"]


@dataclass
class _Constant:
    eps: float

    def step_size(self, t: int) -> float:
        return self.eps


@dataclass
class _Decaying:
    eps0: float
    T0: float

    def step_size(self, t: int) -> float:
        return self.eps0 * self.T0 / (self.T0 + t)


@dataclass(frozen=True)
class ConstantNumPy(StepRule):
    """Reference twin of :class:`sqnopt.steps.Constant`."""

    eps: float = 0.1
    name = "constant_numpy"

    def init(self, problem: Problem) -> _Constant:
        return _Constant(self.eps)


@dataclass(frozen=True)
class DecayingNumPy(StepRule):
    """Reference twin of :class:`sqnopt.steps.Decaying`."""

    eps0: float = 2e-2
    T0: float = 100.0
    name = "decaying_numpy"

    def init(self, problem: Problem) -> _Decaying:
        return _Decaying(self.eps0, self.T0)


@dataclass
class _InverseSqrt:
    eps0: float

    def step_size(self, t: int) -> float:
        return self.eps0 / math.sqrt(t + 1)


@dataclass
class _PegasosStep:
    lam: float

    def step_size(self, t: int) -> float:
        return 1.0 / (self.lam * (t + 1))


@dataclass(frozen=True)
class InverseSqrtNumPy(StepRule):
    """Reference twin of :class:`sqnopt.steps.InverseSqrt`."""

    eps0: float = 0.1
    name = "inverse_sqrt_numpy"

    def init(self, problem: Problem) -> _InverseSqrt:
        return _InverseSqrt(self.eps0)


@dataclass(frozen=True)
class PegasosStepNumPy(StepRule):
    """Reference twin of :class:`sqnopt.steps.PegasosStep`."""

    name = "pegasos_numpy"

    def init(self, problem: Problem) -> _PegasosStep:
        return _PegasosStep(problem.lam)
