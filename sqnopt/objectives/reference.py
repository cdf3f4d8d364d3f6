"""Pure-NumPy reference twins of the compiled objectives.

Each twin is a complete pure-Python component (it doubles as an example of one): the solver runs
it through its Python path. Tests check that the compiled kernels agree with these, iterate by
iterate.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from sqnopt.data import Dataset
from sqnopt.interfaces import BINARY, MARGIN, SMOOTH, STRONGLY_CONVEX, Objective

FloatArray = NDArray[np.float64]
IndexArray = NDArray[np.intp]
LossFn = Callable[[FloatArray], FloatArray]

__all__ = ["HingeNumPy", "LogLossNumPy", "MarginKernelNumPy", "SquaredHingeNumPy"]


def squared_hinge_loss(m: FloatArray) -> FloatArray:
    return np.maximum(0.0, 1.0 - m) ** 2


def squared_hinge_dloss_dmargin(m: FloatArray) -> FloatArray:
    return -2.0 * np.maximum(0.0, 1.0 - m)


def logistic_loss(m: FloatArray) -> FloatArray:
    return np.log1p(np.exp(-np.abs(m))) + np.maximum(0.0, -m)


def logistic_dloss_dmargin(m: FloatArray) -> FloatArray:
    # -1 / (1 + e^m), written with e^{-|m|} so nothing overflows.
    e = np.exp(-np.abs(m))
    return np.where(m >= 0, -e / (1.0 + e), -1.0 / (1.0 + e))


def hinge_loss(m: FloatArray) -> FloatArray:
    return np.maximum(0.0, 1.0 - m)


def hinge_dloss_dmargin(m: FloatArray) -> FloatArray:
    return np.where(m < 1.0, -1.0, 0.0)


@dataclass
class MarginKernelNumPy:
    """``F(w) = lam/2 ||w_reg||^2 + mean_c loss(y * Xw)`` with NumPy, on ``[X, 1]``."""

    data: Dataset
    lam: float
    loss: LossFn
    dloss_dmargin: LossFn
    _X: Any = field(init=False, repr=False)
    _reg: FloatArray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._X = self.data.design()
        self._reg = np.ones(self.data.dim)
        if self.data.fit_intercept:
            self._reg[-1] = 0.0

    @property
    def n_params(self) -> int:
        return self.data.dim

    def _data_term(self, w: FloatArray, rows: IndexArray | slice, weights: FloatArray
                   ) -> tuple[float, FloatArray]:
        Xb = self._X[rows]
        y = self.data.y[rows]
        m = y * np.asarray(Xb @ w).ravel()
        coef = weights * y * self.dloss_dmargin(m)
        g = np.asarray(Xb.T @ coef).ravel() if sp.issparse(Xb) else Xb.T @ coef
        return float(np.sum(weights * self.loss(m))), np.asarray(g, dtype=np.float64)

    def gradient(self, w: FloatArray, batch: IndexArray, out: FloatArray) -> float:
        size = batch.shape[0]
        total, g = self._data_term(w, batch, self.data.grad_weight[batch])
        out[:] = g / size + self.lam * self._reg * w
        return float(total / size + 0.5 * self.lam * float(np.sum(self._reg * w * w)))

    def value(self, w: FloatArray) -> float:
        m = self.data.y * np.asarray(self._X @ w).ravel()
        loss = float(np.sum(self.data.sample_weight * self.loss(m))) / self.data.n_samples
        return loss + 0.5 * self.lam * float(np.sum(self._reg * w * w))

    def full_gradient(self, w: FloatArray, out: FloatArray) -> float:
        n = self.data.n_samples
        total, g = self._data_term(w, slice(None), self.data.sample_weight)
        out[:] = g / n + self.lam * self._reg * w
        return total / n + 0.5 * self.lam * float(np.sum(self._reg * w * w))


@dataclass(frozen=True)
class SquaredHingeNumPy(Objective):
    """Reference twin of :class:`sqnopt.objectives.SquaredHinge`."""

    lam: float = 1e-4
    name = "squared_hinge_numpy"

    @property
    def capabilities(self) -> frozenset[str]:
        return frozenset({BINARY, MARGIN, SMOOTH} | ({STRONGLY_CONVEX} if self.lam > 0 else set()))

    def init(self, data: Dataset) -> MarginKernelNumPy:
        return MarginKernelNumPy(data, self.lam, squared_hinge_loss, squared_hinge_dloss_dmargin)


@dataclass(frozen=True)
class LogLossNumPy(Objective):
    """Reference twin of :class:`sqnopt.objectives.LogLoss`."""

    lam: float = 1e-4
    name = "logloss_numpy"

    @property
    def capabilities(self) -> frozenset[str]:
        return frozenset({BINARY, MARGIN, SMOOTH} | ({STRONGLY_CONVEX} if self.lam > 0 else set()))

    def init(self, data: Dataset) -> MarginKernelNumPy:
        return MarginKernelNumPy(data, self.lam, logistic_loss, logistic_dloss_dmargin)


@dataclass(frozen=True)
class HingeNumPy(Objective):
    """Reference twin of :class:`sqnopt.objectives.Hinge`."""

    lam: float = 1e-4
    name = "hinge_numpy"

    @property
    def capabilities(self) -> frozenset[str]:
        return frozenset({BINARY, MARGIN} | ({STRONGLY_CONVEX} if self.lam > 0 else set()))

    def init(self, data: Dataset) -> MarginKernelNumPy:
        return MarginKernelNumPy(data, self.lam, hinge_loss, hinge_dloss_dmargin)
