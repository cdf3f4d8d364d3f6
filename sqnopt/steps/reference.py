"""Pure-Python reference twins of the compiled step rules."""

from __future__ import annotations

from dataclasses import dataclass

from sqnopt.interfaces import Problem, StepRule

__all__ = ["ConstantNumPy", "DecayingNumPy"]


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
