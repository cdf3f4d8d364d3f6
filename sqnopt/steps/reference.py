"""Pure-Python reference twins of the compiled step rules."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from sqnopt.interfaces import FloatArray, IndexArray, Problem, StepRule

__all__ = ["ArmijoNumPy", "ConstantNumPy", "DecayingNumPy", "InverseSqrtNumPy", "PegasosStepNumPy"]


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


@dataclass
class _Armijo:
    eps0: float
    c1: float
    shrink: float
    max_backtracks: int
    line_search: bool = True

    def step_size(self, t: int) -> float:
        return self.eps0

    def search(self, objective: Any, w: FloatArray, batch: IndexArray, f0: float, g: FloatArray,
               d: FloatArray, w_next: FloatArray, g_next: FloatArray) -> tuple[float, float, int]:
        gd = float(np.dot(g, d))
        if not gd >= 0.0:
            return math.nan, math.nan, 0
        eps, evals = self.eps0, 0
        for _ in range(self.max_backtracks + 1):
            np.subtract(w, eps * d, out=w_next)
            if np.all(np.isfinite(w_next)):
                f = float(objective.gradient(w_next, batch, g_next))
                evals += 1
                if math.isfinite(f) and f <= f0 - self.c1 * eps * gd and (f < f0 or gd == 0.0):
                    return eps, f, evals
            eps *= self.shrink
        return math.nan, math.nan, evals


@dataclass(frozen=True)
class ArmijoNumPy(StepRule):
    """Reference twin of :class:`sqnopt.steps.Armijo`."""

    eps0: float = 1.0
    c1: float = 1e-4
    shrink: float = 0.5
    max_backtracks: int = 30
    name = "armijo_numpy"
    line_search = True

    def init(self, problem: Problem) -> _Armijo:
        return _Armijo(self.eps0, self.c1, self.shrink, self.max_backtracks)
