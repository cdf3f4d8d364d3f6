"""Step-rule components."""

from __future__ import annotations

import math
from dataclasses import dataclass

from sqnopt.interfaces import STRONGLY_CONVEX, Problem, StepRule
from sqnopt.steps._base import ConstantKernel, DecayingKernel, InverseSqrtKernel, PegasosStepKernel


def _positive(owner: str, name: str, value: float) -> None:
    if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
        raise ValueError(f"{owner}: {name} must be a finite number > 0, got {value!r}")


@dataclass(frozen=True)
class Constant(StepRule):
    """``eps_t = eps``."""

    eps: float = 0.1
    name = "constant"

    def __post_init__(self) -> None:
        _positive("Constant", "eps", self.eps)

    def init(self, problem: Problem) -> ConstantKernel:
        return ConstantKernel(float(self.eps))


@dataclass(frozen=True)
class Decaying(StepRule):
    r"""``eps_t = eps0 * T0 / (T0 + t)``, ``t = 0, 1, ...``.

    The step of Mokhtari & Ribeiro's RES (2014, Sec. 4: ``eps0 = 3e-2, T0 = 100``) and oLBFGS
    (2015, Sec. 4: ``eps0 = 2e-2, T0 = 100``).
    """

    eps0: float = 2e-2
    T0: float = 100.0
    name = "decaying"

    def __post_init__(self) -> None:
        _positive("Decaying", "eps0", self.eps0)
        _positive("Decaying", "T0", self.T0)

    def init(self, problem: Problem) -> DecayingKernel:
        return DecayingKernel(float(self.eps0), float(self.T0))


@dataclass(frozen=True)
class InverseSqrt(StepRule):
    """``eps_t = eps0 / sqrt(t + 1)`` (the SGD baseline of the Pegasos notes)."""

    eps0: float = 0.1
    name = "inverse_sqrt"

    def __post_init__(self) -> None:
        _positive("InverseSqrt", "eps0", self.eps0)

    def init(self, problem: Problem) -> InverseSqrtKernel:
        return InverseSqrtKernel(float(self.eps0))


@dataclass(frozen=True)
class PegasosStep(StepRule):
    """``eps_t = 1 / (lam (t + 1))`` with ``lam`` taken from the objective
    (Shalev-Shwartz, Singer & Srebro, *Pegasos*, 2007, Fig. 1)."""

    name = "pegasos"
    requires = frozenset({STRONGLY_CONVEX})

    def init(self, problem: Problem) -> PegasosStepKernel:
        return PegasosStepKernel(problem.lam)
