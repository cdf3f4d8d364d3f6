"""Objective components of linear regression: squared error, Huber, Poisson (log link).

Each minimises ``F(w) = lam/2 ||w_reg||^2 + sum_i c_i l(x_i . w + b, y_i) / sum_i c_i`` over
real targets (``label_kind = "regression"``: the data layer checks them as finite numbers and
never encodes them as classes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from sqnopt.data import Dataset
from sqnopt.interfaces import (
    DENSE_HESSIAN,
    HESSIAN_VECTOR,
    LINEAR_SCORES,
    QUADRATIC,
    REGRESSION,
    SMOOTH,
    STRONGLY_CONVEX,
    Objective,
)
from sqnopt.objectives._components import _check_lam
from sqnopt.objectives._regression import HuberKernel, PoissonKernel, SquaredErrorKernel

__all__ = ["Huber", "POISSON_MAX_SCORE", "Poisson", "SquaredError", "check_nonnegative_targets"]

#: ``log(DBL_MAX)``: the largest score whose ``exp`` is finite (the compiled kernel's limit)
POISSON_MAX_SCORE = math.log(np.finfo(np.float64).max)


@dataclass(frozen=True)
class _RegressionObjective(Objective):
    lam: float = 1e-4
    label_kind = "regression"

    def __post_init__(self) -> None:
        _check_lam(self.lam)

    @property
    def capabilities(self) -> frozenset[str]:
        caps = {REGRESSION, LINEAR_SCORES, SMOOTH, HESSIAN_VECTOR, DENSE_HESSIAN}
        if self.lam > 0:
            caps.add(STRONGLY_CONVEX)
        return frozenset(caps)


@dataclass(frozen=True)
class SquaredError(_RegressionObjective):
    r"""L2-regularised least squares (ridge regression).

    .. math:: F(w) = \frac{\lambda}{2}\|w\|^2 + \frac{1}{\sum c_i}\sum_i c_i
              \tfrac12 (w^\top x_i + b - y_i)^2

    The minimiser is scikit-learn's ``Ridge(alpha=lambda * sum(c))`` (``sum(c)``: the sample
    weights' sum, ``n_samples`` without weights).
    """

    name = "squared_error"
    curvature_bound = 1.0

    @property
    def capabilities(self) -> frozenset[str]:
        """The regression losses' capabilities and ``quadratic``: the Hessian
        ``X' C X / sum(c) + lambda I`` does not depend on ``w``."""
        return super().capabilities | {QUADRATIC}

    def init(self, data: Dataset) -> SquaredErrorKernel:
        return SquaredErrorKernel(data.rows, float(self.lam))


@dataclass(frozen=True)
class Huber(_RegressionObjective):
    r"""L2-regularised Huber regression (Huber 1964) with a fixed scale of 1.

    .. math:: F(w) = \frac{\lambda}{2}\|w\|^2 + \frac{1}{\sum c_i}\sum_i c_i
              h_\epsilon(w^\top x_i + b - y_i), \quad
              h_\epsilon(r) = \begin{cases} r^2/2 & |r| \le \epsilon \\
              \epsilon |r| - \epsilon^2/2 & |r| > \epsilon \end{cases}

    ``h_epsilon`` is half of the loss ``H_epsilon`` of scikit-learn's ``HuberRegressor`` at
    scale ``sigma = 1``: that estimator fits ``sigma`` jointly with ``w``, this objective keeps
    it fixed (scale the targets, e.g. by a robust spread such as the median absolute
    deviation, to choose it). Quadratic near the fit, linear for outliers: the loss is once
    differentiable; its generalised second derivative (1 inside the threshold, 0 beyond) gives
    the semismooth Newton method and the Hessian products.
    """

    epsilon: float = 1.35
    name = "huber"
    curvature_bound = 1.0
    curvature_vanishes = True

    def __post_init__(self) -> None:
        super().__post_init__()
        e = self.epsilon
        if not (isinstance(e, (int, float)) and math.isfinite(e) and e > 0):
            raise ValueError(f"epsilon must be a finite number > 0, got {e!r}")

    def start_intercept(self, y: NDArray[np.float64], weights: NDArray[np.float64]) -> float:
        """The weighted median of the targets: the intercept that minimises the mean absolute
        residual at ``w = 0`` -- Huber's loss beyond the threshold -- so that the solve starts
        with residuals balanced about 0 instead of every one an outlier when the targets lie
        far from 0 (where the loss is linear and the bound's steps move the intercept by about
        ``epsilon`` per iteration)."""
        order = np.argsort(y, kind="stable")
        cum = np.cumsum(weights[order])
        k = int(np.searchsorted(cum, 0.5 * cum[-1]))
        return float(y[order][min(k, y.shape[0] - 1)])

    def init(self, data: Dataset) -> HuberKernel:
        return HuberKernel(data.rows, float(self.lam), float(self.epsilon))


@dataclass(frozen=True)
class Poisson(_RegressionObjective):
    r"""L2-regularised Poisson regression with the log link (a generalised linear model,
    McCullagh & Nelder 1989, ch. 6).

    .. math:: F(w) = \frac{\lambda}{2}\|w\|^2 + \frac{1}{\sum c_i}\sum_i c_i
              \left(e^{w^\top x_i + b} - y_i (w^\top x_i + b)\right), \quad y_i \ge 0

    the mean negative log-likelihood of ``y_i ~ Poisson(exp(w . x_i + b))`` up to a constant;
    its minimiser is scikit-learn's ``PoissonRegressor(alpha=lambda)`` (whose half deviance
    differs by a constant). Predictions are ``exp(w . x + b)``. A score beyond ``log(DBL_MAX)``
    (``exp`` would overflow) gives ``+inf``: a line search rejects such a step and a run that
    reaches one stops as diverged. The curvature ``exp(s)`` has no bound, so the recipes use no
    Lipschitz-bound-based choice for it; at ``s = 0`` it is 1 for every target
    (``start_curvature``), which the default's preconditioner takes
    (:func:`sqnopt.recipes.default_curvature`).
    """

    name = "poisson"
    curvature_bound = None
    #: ``exp(0)``: the Hessian at ``w = 0`` is ``X'SX / sum(s) + lam D`` whatever the targets
    start_curvature = 1.0
    max_score = POISSON_MAX_SCORE
    link = "log"
    min_target = 0.0

    def init(self, data: Dataset) -> PoissonKernel:
        check_nonnegative_targets(data.y, self.name)
        return PoissonKernel(data.rows, float(self.lam))


def check_nonnegative_targets(y: np.ndarray, loss: str = "poisson") -> None:
    """Raise ``ValueError`` naming the first negative target: the Poisson likelihood is that of
    counts (or rates), ``y >= 0``."""
    arr = np.asarray(y)
    if arr.size and float(arr.min()) < 0:
        bad = int(np.flatnonzero(arr < 0)[0])
        raise ValueError(f"y: the {loss} loss needs targets >= 0 (counts or rates), but "
                         f"y[{bad}] = {float(arr[bad]):g}. Use loss='squared_error' or "
                         "'huber' for targets of any sign, or shift the targets")
