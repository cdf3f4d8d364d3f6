"""Objective components: margin losses of binary linear classification."""

from __future__ import annotations

import math
from dataclasses import dataclass

from sqnopt.data import Dataset
from sqnopt.interfaces import (
    BINARY,
    DENSE_HESSIAN,
    HESSIAN_VECTOR,
    LINEAR_SCORES,
    MARGIN,
    MULTICLASS,
    PROBABILISTIC,
    QUADRATIC_BOUND,
    SMOOTH,
    STRONGLY_CONVEX,
    Objective,
)
from sqnopt.objectives._margin import HingeKernel, LogisticKernel, SquaredHingeKernel


def _check_lam(lam: float) -> None:
    if not (isinstance(lam, (int, float)) and math.isfinite(lam) and lam >= 0):
        raise ValueError(f"lam must be a finite number >= 0, got {lam!r}")


@dataclass(frozen=True)
class _MarginObjective(Objective):
    lam: float = 1e-4

    def __post_init__(self) -> None:
        _check_lam(self.lam)

    @property
    def capabilities(self) -> frozenset[str]:
        caps = {BINARY, MARGIN, LINEAR_SCORES}
        if self.lam > 0:
            caps.add(STRONGLY_CONVEX)
        return frozenset(caps)


@dataclass(frozen=True)
class SquaredHinge(_MarginObjective):
    r"""L2-regularised squared-hinge SVM.

    .. math:: F(w) = \frac{\lambda}{2}\|w\|^2 + \frac{1}{\sum c_i}\sum_i c_i \max(0, 1 - y_i w^\top x_i)^2

    The loss of Mokhtari & Ribeiro's RES (2014, eq. 40) and oLBFGS (2015, Sec. 4) experiments.
    """

    name = "squared_hinge"
    curvature_bound = 2.0

    @property
    def capabilities(self) -> frozenset[str]:
        # the generalised Hessian (2 below the margin) of Mangasarian (2002)
        return super().capabilities | {SMOOTH, HESSIAN_VECTOR, DENSE_HESSIAN}

    def init(self, data: Dataset) -> SquaredHingeKernel:
        return SquaredHingeKernel(data.rows, float(self.lam))


@dataclass(frozen=True)
class LogLoss(_MarginObjective):
    r"""L2-regularised binary logistic regression.

    .. math:: F(w) = \frac{\lambda}{2}\|w\|^2 + \frac{1}{\sum c_i}\sum_i c_i \log(1 + e^{-y_i w^\top x_i})

    Evaluated as ``log1p(exp(-|m|)) + max(0, -m)``: finite and exact for any finite margin.
    """

    name = "logloss"
    curvature_bound = 0.25

    @property
    def capabilities(self) -> frozenset[str]:
        return super().capabilities | {SMOOTH, PROBABILISTIC, HESSIAN_VECTOR, DENSE_HESSIAN}

    def with_capability(self, capability: str) -> Objective | None:
        """The log-linear form :class:`BinaryLogistic` (same function) for the
        ``quadratic_bound``, the multinomial :class:`Softmax` for ``multiclass``."""
        from sqnopt.objectives._loglinear_components import BinaryLogistic, Softmax

        if capability == QUADRATIC_BOUND:
            return BinaryLogistic(lam=self.lam)
        if capability == MULTICLASS:
            return Softmax(lam=self.lam)
        return super().with_capability(capability)

    def init(self, data: Dataset) -> LogisticKernel:
        return LogisticKernel(data.rows, float(self.lam))


@dataclass(frozen=True)
class Hinge(_MarginObjective):
    r"""L2-regularised hinge-loss SVM (non-smooth; gradients are subgradients).

    .. math:: F(w) = \frac{\lambda}{2}\|w\|^2 + \frac{1}{\sum c_i}\sum_i c_i \max(0, 1 - y_i w^\top x_i)

    The objective of Pegasos (Shalev-Shwartz, Singer & Srebro 2007, eq. 1).
    """

    name = "hinge"

    def init(self, data: Dataset) -> HingeKernel:
        return HingeKernel(data.rows, float(self.lam))
