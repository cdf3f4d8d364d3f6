"""Batch-schedule components."""

from __future__ import annotations

import math
from dataclasses import dataclass

from sqnopt.interfaces import BatchSchedule, Problem
from sqnopt.schedules._base import FixedKernel, GeometricKernel, LinearKernel, ScheduleKernel


@dataclass(frozen=True)
class Fixed(BatchSchedule):
    """``b_k = L`` for every iteration (clipped to the number of samples)."""

    size: int = 5
    name = "fixed"
    nondecreasing = True

    def __post_init__(self) -> None:
        if not (isinstance(self.size, int) and self.size >= 1):
            raise ValueError(f"Fixed: size must be an integer >= 1, got {self.size!r}")

    def init(self, problem: Problem) -> FixedKernel:
        # clipped here as the kernel clips: any integer size works, however large
        return FixedKernel(problem.n_samples, min(self.size, problem.n_samples))


@dataclass(frozen=True)
class Linear(BatchSchedule):
    """Linearly growing batches ``b_k = min(cap, b1 + round((k - 1) * gamma))``.

    Aravkin, Choromanska, Jebara & Kanevsky, *Semistochastic quadratic bound methods* (2014),
    Sec. 4: ``b1 = 5``; ``cap = N`` for gradients and 200 for curvature. ``cap=None`` means N.
    """

    b1: int = 5
    gamma: float = 1.0
    cap: int | None = None
    name = "linear"
    nondecreasing = True

    def __post_init__(self) -> None:
        if not (isinstance(self.b1, int) and self.b1 >= 1):
            raise ValueError(f"Linear: b1 must be an integer >= 1, got {self.b1!r}")
        if not (math.isfinite(self.gamma) and self.gamma >= 0):
            raise ValueError(f"Linear: gamma must be finite and >= 0, got {self.gamma!r}")
        if self.cap is not None and not (isinstance(self.cap, int) and self.cap >= 1):
            raise ValueError(f"Linear: cap must be None or an integer >= 1, got {self.cap!r}")

    def init(self, problem: Problem) -> LinearKernel:
        # b1 and cap above N act as N (the kernel clips every size to N): clipped here, so
        # that any integer works, however large
        n = problem.n_samples
        cap = n if self.cap is None else min(self.cap, n)
        return LinearKernel(n, min(self.b1, n), float(self.gamma), cap)


@dataclass(frozen=True)
class Geometric(BatchSchedule):
    """Geometrically growing batches ``b_k = min(cap, round(b1 * rate^(k-1)))``
    (Friedlander & Schmidt, *Hybrid deterministic-stochastic methods*, 2012)."""

    b1: float = 5.0
    rate: float = 1.1
    cap: int | None = None
    name = "geometric"
    nondecreasing = True

    def __post_init__(self) -> None:
        if not (math.isfinite(self.b1) and self.b1 >= 1):
            raise ValueError(f"Geometric: b1 must be >= 1, got {self.b1!r}")
        if not (math.isfinite(self.rate) and self.rate >= 1):
            raise ValueError(f"Geometric: rate must be >= 1, got {self.rate!r}")
        if self.cap is not None and not (isinstance(self.cap, int) and self.cap >= 1):
            raise ValueError(f"Geometric: cap must be None or an integer >= 1, got {self.cap!r}")

    def init(self, problem: Problem) -> GeometricKernel:
        n = problem.n_samples
        cap = n if self.cap is None else min(self.cap, n)     # (as Linear's)
        return GeometricKernel(n, float(self.b1), float(self.rate), cap)


@dataclass(frozen=True)
class Full(BatchSchedule):
    """Every iteration uses the whole data set (deterministic methods)."""

    name = "full"
    nondecreasing = True

    def init(self, problem: Problem) -> ScheduleKernel:
        return ScheduleKernel(problem.n_samples)
