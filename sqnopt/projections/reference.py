"""Pure-NumPy reference twins of the compiled projections and mirror maps.

Each twin is a complete pure-Python component (and an example of one); the solver runs it
through its Python path. Tests check the compiled kernels against these iterate by iterate.
The l1-ball twin uses the O(n log n) sort-based threshold (Duchi et al. 2008, Fig. 1), the
compiled kernel the expected-O(n) randomized pivot: two algorithms, one answer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sqnopt.interfaces import Problem, Projection, ProjectionKernelLike

FloatArray = NDArray[np.float64]

__all__ = [
    "ExpGradPMNumPy",
    "L1BallNumPy",
    "L2BallNumPy",
    "LazyProjectionKernelNumPy",
    "LazyProjectionNumPy",
    "l1_threshold_sort",
    "project_l1_ball",
]


def _reg_view(problem: Problem, w: FloatArray) -> FloatArray:
    """The constrained coordinates of every block (a view of ``w``)."""
    return w.reshape(problem.n_blocks, problem.dim)[:, : problem.n_features]


def l1_threshold_sort(a: FloatArray, radius: float) -> float:
    """``theta`` with ``sum max(a - theta, 0) = radius`` for magnitudes ``a >= 0`` summing to
    more than ``radius`` (sort and scan, O(n log n))."""
    u = np.sort(a)[::-1]
    css = np.cumsum(u)
    j = np.arange(1, u.shape[0] + 1)
    rho = int(np.nonzero(u * j > css - radius)[0][-1]) + 1
    return float((css[rho - 1] - radius) / rho)


def project_l1_ball(v: FloatArray, radius: float) -> FloatArray:
    """Euclidean projection of the vector ``v`` onto ``{||x||_1 <= radius}`` (a new array)."""
    a = np.abs(v)
    if a.sum() <= radius:
        return np.array(v, dtype=np.float64)
    theta = l1_threshold_sort(a[a > 0], radius)
    return np.sign(v) * np.maximum(a - theta, 0.0)


@dataclass
class _L2BallKernel:
    problem: Problem
    radius: float

    def project(self, w: FloatArray) -> None:
        reg = _reg_view(self.problem, w)
        norm = math.sqrt(float(np.sum(reg * reg)))
        if norm * norm > self.radius * self.radius:
            reg *= self.radius / norm


@dataclass
class _L1BallKernel:
    problem: Problem
    radius: float

    def project(self, w: FloatArray) -> None:
        reg = _reg_view(self.problem, w)
        reg[...] = project_l1_ball(reg.ravel(), self.radius).reshape(reg.shape)


@dataclass(frozen=True)
class L2BallNumPy(Projection):
    """Reference twin of :class:`sqnopt.projections.L2Ball`."""

    radius: float | None = None
    name = "l2ball_numpy"

    def init(self, problem: Problem) -> _L2BallKernel:
        r = self.radius if self.radius is not None else 1.0 / math.sqrt(problem.lam)
        return _L2BallKernel(problem, float(r))


@dataclass(frozen=True)
class L1BallNumPy(Projection):
    """Reference twin of :class:`sqnopt.projections.L1Ball` (sort-based)."""

    radius: float = 1.0
    name = "l1ball_numpy"

    def init(self, problem: Problem) -> _L1BallKernel:
        return _L1BallKernel(problem, float(self.radius))


class LazyProjectionKernelNumPy:
    """``theta <- theta + (z - w_prev)``; ``w = P(theta)``."""

    def __init__(self, problem: Problem, inner: ProjectionKernelLike | None) -> None:
        self.inner = inner
        self.theta = np.zeros(problem.n_params)
        self.last = np.zeros(problem.n_params)

    def start(self, w0: FloatArray) -> None:
        self.theta = np.array(w0, dtype=np.float64)
        self.last = self.theta.copy()

    def project(self, w: FloatArray) -> None:
        self.theta += w - self.last
        w[:] = self.theta
        if self.inner is not None:
            self.inner.project(w)
        self.last = w.copy()


@dataclass(frozen=True)
class LazyProjectionNumPy(Projection):
    """Reference twin of :class:`sqnopt.projections.LazyProjection`."""

    inner: Any = None
    name = "lazy_projection_numpy"
    euclidean = False        # a mirror map: stateful, called once per iteration

    def init(self, problem: Problem) -> LazyProjectionKernelNumPy:
        inner = None if self.inner is None else self.inner.init(problem)
        return LazyProjectionKernelNumPy(problem, inner)


class _ExpGradPMKernel:
    """``theta <- theta + (z - w_prev)``; ``w_reg = r sinh(theta) / sum cosh(theta)``."""

    def __init__(self, problem: Problem, radius: float) -> None:
        self.problem = problem
        self.radius = radius
        self.theta = np.zeros(problem.n_params)
        self.last = np.zeros(problem.n_params)

    def start(self, w0: FloatArray) -> None:
        if np.any(_reg_view(self.problem, np.array(w0, dtype=np.float64)) != 0):
            raise ValueError("ExpGradPMNumPy starts at w = 0 only")
        self.theta = np.array(w0, dtype=np.float64)
        self.last = self.theta.copy()

    def project(self, w: FloatArray) -> None:
        self.theta += w - self.last
        w[:] = self.theta
        th = _reg_view(self.problem, self.theta)
        m = float(np.max(np.abs(th)))
        ep, em = np.exp(th - m), np.exp(-th - m)
        _reg_view(self.problem, w)[...] = self.radius * (ep - em) / float(np.sum(ep + em))
        self.last = w.copy()


@dataclass(frozen=True)
class ExpGradPMNumPy(Projection):
    """Reference twin of :class:`sqnopt.projections.ExpGradPM`."""

    radius: float = 1.0
    name = "eg_pm_numpy"
    euclidean = False        # a mirror map: stateful, called once per iteration

    def init(self, problem: Problem) -> _ExpGradPMKernel:
        return _ExpGradPMKernel(problem, float(self.radius))
