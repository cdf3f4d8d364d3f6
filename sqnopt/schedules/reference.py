"""Pure-Python reference twins of the compiled batch schedules."""

from __future__ import annotations

from dataclasses import dataclass

from sqnopt.interfaces import BatchSchedule, Problem

__all__ = ["FixedNumPy", "LinearNumPy"]


@dataclass
class _FixedKernel:
    n: int
    size: int

    def batch_size(self, k: int) -> int:
        return max(1, min(self.size, self.n))


@dataclass
class _LinearKernel:
    n: int
    b1: int
    gamma: float
    cap: int

    def batch_size(self, k: int) -> int:
        cap = max(1, min(self.cap, self.n))
        return max(1, min(cap, self.b1 + round((k - 1) * self.gamma)))


@dataclass(frozen=True)
class FixedNumPy(BatchSchedule):
    """Reference twin of :class:`sqnopt.schedules.Fixed`."""

    size: int = 5
    name = "fixed_numpy"
    nondecreasing = True

    def init(self, problem: Problem) -> _FixedKernel:
        return _FixedKernel(problem.n_samples, self.size)


@dataclass(frozen=True)
class LinearNumPy(BatchSchedule):
    """Reference twin of :class:`sqnopt.schedules.Linear`."""

    b1: int = 5
    gamma: float = 1.0
    cap: int | None = None
    name = "linear_numpy"
    nondecreasing = True

    def init(self, problem: Problem) -> _LinearKernel:
        cap = problem.n_samples if self.cap is None else self.cap
        return _LinearKernel(problem.n_samples, self.b1, self.gamma, cap)
