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
from sqnopt.interfaces import (
    BINARY,
    MARGIN,
    DENSE_HESSIAN,
    HESSIAN_VECTOR,
    MULTICLASS,
    QUADRATIC,
    QUADRATIC_BOUND,
    REGRESSION,
    SMOOTH,
    STRONGLY_CONVEX,
    Objective,
)

FloatArray = NDArray[np.float64]
IndexArray = NDArray[np.intp]
LossFn = Callable[[FloatArray], FloatArray]

__all__ = [
    "BinaryLogisticNumPy",
    "HingeNumPy",
    "HuberNumPy",
    "LogLinearKernelNumPy",
    "LogLinearNumPy",
    "LogLossNumPy",
    "MarginKernelNumPy",
    "PoissonNumPy",
    "ScoreKernelNumPy",
    "SoftmaxNumPy",
    "SquaredErrorNumPy",
    "SquaredHingeNumPy",
    "bound_numpy",
]


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


def logistic_d2loss_dmargin2(m: FloatArray) -> FloatArray:
    e = np.exp(-np.abs(m))
    return e / ((1.0 + e) * (1.0 + e))


def squared_hinge_d2loss_dmargin2(m: FloatArray) -> FloatArray:
    # the generalised second derivative (Mangasarian 2002)
    return np.where(m < 1.0, 2.0, 0.0)


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
    #: ``d^2 loss / d m^2`` where the loss has one (the exact line search's twin reads it)
    d2loss_dmargin2: LossFn | None = None
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

    def reg_value(self, w: FloatArray) -> float:
        """``lam/2 ||w_reg||^2`` (the loops' progressive validation loss subtracts it)."""
        return 0.5 * self.lam * float(np.sum(self._reg * w * w))

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
        return MarginKernelNumPy(data, self.lam, squared_hinge_loss, squared_hinge_dloss_dmargin,
                                 squared_hinge_d2loss_dmargin2)


@dataclass(frozen=True)
class LogLossNumPy(Objective):
    """Reference twin of :class:`sqnopt.objectives.LogLoss`."""

    lam: float = 1e-4
    name = "logloss_numpy"

    @property
    def capabilities(self) -> frozenset[str]:
        return frozenset({BINARY, MARGIN, SMOOTH} | ({STRONGLY_CONVEX} if self.lam > 0 else set()))

    def init(self, data: Dataset) -> MarginKernelNumPy:
        return MarginKernelNumPy(data, self.lam, logistic_loss, logistic_dloss_dmargin,
                                 logistic_d2loss_dmargin2)


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


# ---- regression: losses l(s, y) of the score s = x . w + b against a real target -----------

ScoreLossFn = Callable[[FloatArray, FloatArray], FloatArray]

#: ``log(DBL_MAX)``: beyond it ``exp`` overflows (the Poisson twin returns ``+inf`` there, as the
#: compiled kernel does)
_LOG_MAX = float(np.log(np.finfo(np.float64).max))


def squared_error_loss(s: FloatArray, y: FloatArray) -> FloatArray:
    return 0.5 * (s - y) ** 2


def squared_error_dloss(s: FloatArray, y: FloatArray) -> FloatArray:
    return s - y


def squared_error_d2loss(s: FloatArray, y: FloatArray) -> FloatArray:
    return np.ones_like(s)


def huber_loss(epsilon: float) -> tuple[ScoreLossFn, ScoreLossFn, ScoreLossFn]:
    """Huber's loss of ``r = s - y`` (threshold ``epsilon``), its derivative and its generalised
    second derivative."""
    def loss(s: FloatArray, y: FloatArray) -> FloatArray:
        a = np.abs(s - y)
        return np.where(a <= epsilon, 0.5 * a * a, epsilon * (a - 0.5 * epsilon))

    def dloss(s: FloatArray, y: FloatArray) -> FloatArray:
        return np.clip(s - y, -epsilon, epsilon)

    def d2loss(s: FloatArray, y: FloatArray) -> FloatArray:
        return np.where(np.abs(s - y) <= epsilon, 1.0, 0.0)

    return loss, dloss, d2loss


def _exp_or_inf(s: FloatArray) -> FloatArray:
    with np.errstate(over="ignore"):
        return np.where(s > _LOG_MAX, np.inf, np.exp(np.minimum(s, _LOG_MAX)))


def poisson_loss(s: FloatArray, y: FloatArray) -> FloatArray:
    return np.where(s > _LOG_MAX, np.inf, _exp_or_inf(s) - y * s)


def poisson_dloss(s: FloatArray, y: FloatArray) -> FloatArray:
    return np.where(s > _LOG_MAX, np.inf, _exp_or_inf(s) - y)


def poisson_d2loss(s: FloatArray, y: FloatArray) -> FloatArray:
    return _exp_or_inf(s)


@dataclass
class ScoreKernelNumPy:
    """``F(w) = lam/2 ||w_reg||^2 + mean_c loss(Xw, y)`` with NumPy, on ``[X, 1]``: the twin of
    :class:`sqnopt.objectives.ScoreObjectiveKernel`, with Hessian-vector products from the
    loss's second derivative."""

    data: Dataset
    lam: float
    loss: ScoreLossFn
    dloss: ScoreLossFn
    d2loss: ScoreLossFn
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

    @property
    def hess_size(self) -> int:
        """One score-Hessian factor per sample (``hessian_factors``)."""
        return 1

    def _scores(self, w: FloatArray, rows: IndexArray | slice) -> FloatArray:
        return np.asarray(self._X[rows] @ w, dtype=np.float64).ravel()

    def _data_term(self, w: FloatArray, rows: IndexArray | slice, weights: FloatArray
                   ) -> tuple[float, FloatArray]:
        Xb = self._X[rows]
        y = self.data.y[rows]
        s = self._scores(w, rows)
        coef = weights * self.dloss(s, y)
        g = np.asarray(Xb.T @ coef).ravel()
        return float(np.sum(weights * self.loss(s, y))), np.asarray(g, dtype=np.float64)

    def gradient(self, w: FloatArray, batch: IndexArray, out: FloatArray) -> float:
        size = batch.shape[0]
        total, g = self._data_term(w, batch, self.data.grad_weight[batch])
        out[:] = g / size + self.lam * self._reg * w
        return float(total / size + self.reg_value(w))

    def reg_value(self, w: FloatArray) -> float:
        """``lam/2 ||w_reg||^2``."""
        return 0.5 * self.lam * float(np.sum(self._reg * w * w))

    def value(self, w: FloatArray) -> float:
        s = self._scores(w, slice(None))
        loss = float(np.sum(self.data.sample_weight * self.loss(s, self.data.y)))
        return loss / self.data.n_samples + self.reg_value(w)

    def full_gradient(self, w: FloatArray, out: FloatArray) -> float:
        n = self.data.n_samples
        total, g = self._data_term(w, slice(None), self.data.sample_weight)
        out[:] = g / n + self.lam * self._reg * w
        return total / n + self.reg_value(w)

    def hessian_product(self, w: FloatArray, batch: IndexArray, v: FloatArray,
                        out: FloatArray) -> None:
        """``out = (1/|B|) sum_B g_i l''(s_i, y_i) (x_i . v) x_i + lam v_reg``."""
        Xb = self._X[batch]
        D = self.data.grad_weight[batch] * self.d2loss(self._scores(w, batch), self.data.y[batch])
        u = np.asarray(Xb @ v).ravel()
        out[:] = np.asarray(Xb.T @ (D * u)).ravel() / batch.shape[0] + self.lam * self._reg * v

    def hessian_factors(self, w: FloatArray, batch: IndexArray) -> FloatArray:
        """``g_i l''(s_i, y_i)`` of the samples ``batch``."""
        out: FloatArray = self.data.grad_weight[batch] * self.d2loss(self._scores(w, batch),
                                                                     self.data.y[batch])
        return out


def _score_caps(lam: float) -> frozenset[str]:
    return frozenset({REGRESSION, SMOOTH, HESSIAN_VECTOR, DENSE_HESSIAN}
                     | ({STRONGLY_CONVEX} if lam > 0 else set()))


@dataclass(frozen=True)
class SquaredErrorNumPy(Objective):
    """Reference twin of :class:`sqnopt.objectives.SquaredError`."""

    lam: float = 1e-4
    name = "squared_error_numpy"
    label_kind = "regression"
    curvature_bound = 1.0

    @property
    def capabilities(self) -> frozenset[str]:
        return _score_caps(self.lam) | {QUADRATIC}

    def init(self, data: Dataset) -> ScoreKernelNumPy:
        return ScoreKernelNumPy(data, self.lam, squared_error_loss, squared_error_dloss,
                                squared_error_d2loss)


@dataclass(frozen=True)
class HuberNumPy(Objective):
    """Reference twin of :class:`sqnopt.objectives.Huber`."""

    lam: float = 1e-4
    epsilon: float = 1.35
    name = "huber_numpy"
    label_kind = "regression"
    curvature_bound = 1.0

    @property
    def capabilities(self) -> frozenset[str]:
        return _score_caps(self.lam)

    def init(self, data: Dataset) -> ScoreKernelNumPy:
        return ScoreKernelNumPy(data, self.lam, *huber_loss(float(self.epsilon)))


@dataclass(frozen=True)
class PoissonNumPy(Objective):
    """Reference twin of :class:`sqnopt.objectives.Poisson`."""

    lam: float = 1e-4
    name = "poisson_numpy"
    label_kind = "regression"
    max_score = _LOG_MAX
    link = "log"

    @property
    def capabilities(self) -> frozenset[str]:
        return _score_caps(self.lam)

    def init(self, data: Dataset) -> ScoreKernelNumPy:
        if data.y.size and float(np.min(data.y)) < 0:
            raise ValueError("y: the poisson loss needs targets >= 0")
        return ScoreKernelNumPy(data, self.lam, poisson_loss, poisson_dloss, poisson_d2loss)


# ---- log-linear models (partition function + quadratic bound) --------------------------------

def _logsumexp_rows(s: FloatArray) -> FloatArray:
    m = np.max(s, axis=1, keepdims=True)
    out: FloatArray = (m + np.log(np.sum(np.exp(s - m), axis=1, keepdims=True))).ravel()
    return out


def bound_weight_numpy(l: float) -> float:
    """``tanh(l/2) / (2 l)`` (1/4 at ``l = 0``)."""
    a = abs(l)
    if a < 1e-2:
        return 0.25 * (1.0 - a * a / 12.0 + a ** 4 / 120.0)
    return float(np.tanh(0.5 * a) / (2.0 * a))


def bound_numpy(F: FloatArray, s: FloatArray) -> tuple[float, FloatArray, FloatArray]:
    """Algorithm 1 of Aravkin et al. (2014) for one sample, literally, in the log domain.

    ``F``: ``K x d`` rows ``f(y)``; ``s[y] = log h(y) + theta . f(y)``. Returns
    ``(log z, r, S)`` with ``S`` the ``d x K`` matrix of columns ``sqrt(w_y) (f(y) - r)``."""
    K, d = F.shape
    log_z = -np.inf
    r = np.zeros(d)
    cols = np.zeros((d, K))
    for y in range(K):
        if s[y] == -np.inf:
            continue
        if log_z == -np.inf:             # z -> 0+: l = +inf, weight 0, r = f(y)
            r = F[y].copy()
            log_z = float(s[y])
            continue
        l = float(s[y]) - log_z
        cols[:, y] = np.sqrt(bound_weight_numpy(l)) * (F[y] - r)
        rho = 1.0 / (1.0 + np.exp(-l)) if l >= 0 else np.exp(l) / (1.0 + np.exp(l))
        r = (1.0 - rho) * r + rho * F[y]
        log_z = float(np.logaddexp(log_z, s[y]))
    return log_z, r, cols


@dataclass
class LogLinearKernelNumPy:
    """``F(theta) = lam/2 ||theta_reg||^2 + mean_c (log Z_i - theta . f_i(y_i) - log h_i(y_i))``
    from the stacked joint-feature matrix ``F`` (row ``i K + y`` is ``f_i(y)``)."""

    data: Dataset
    lam: float
    F: Any                     # (N K) x n_params, dense or CSR
    log_h: FloatArray          # N x K
    labels: NDArray[np.intp]   # observed output index per sample
    reg: FloatArray            # 1 on regularised coordinates, 0 on intercepts

    @property
    def n_params(self) -> int:
        return int(self.F.shape[1])

    @property
    def n_outputs(self) -> int:
        return int(self.log_h.shape[1])

    def _rows(self, idx: NDArray[np.intp]) -> NDArray[np.intp]:
        K = self.n_outputs
        return (idx[:, None] * K + np.arange(K)[None, :]).ravel()

    def _scores(self, w: FloatArray, idx: NDArray[np.intp]) -> FloatArray:
        Fi = self.F[self._rows(idx)]
        return np.asarray(Fi @ w).reshape(idx.shape[0], self.n_outputs) + self.log_h[idx]

    def _data_term(self, w: FloatArray, idx: NDArray[np.intp], weights: FloatArray
                   ) -> tuple[float, FloatArray]:
        s = self._scores(w, idx)
        lse = _logsumexp_rows(s)
        lab = self.labels[idx]
        loss = lse - s[np.arange(idx.shape[0]), lab]
        coef = np.exp(s - lse[:, None])
        coef[np.arange(idx.shape[0]), lab] -= 1.0
        coef *= weights[:, None]
        g = np.asarray(self.F[self._rows(idx)].T @ coef.ravel()).ravel()
        return float(np.sum(weights * loss)), g

    def _reg_value(self, w: FloatArray) -> float:
        return 0.5 * self.lam * float(np.sum(self.reg * w * w))

    def reg_value(self, w: FloatArray) -> float:
        """``lam/2 ||theta_reg||^2`` (the loops' progressive validation loss subtracts it)."""
        return self._reg_value(w)

    def gradient(self, w: FloatArray, batch: IndexArray, out: FloatArray) -> float:
        b = np.asarray(batch, dtype=np.intp)
        total, g = self._data_term(w, b, self.data.grad_weight[b])
        out[:] = g / b.shape[0] + self.lam * self.reg * w
        return float(total / b.shape[0] + self._reg_value(w))

    def value(self, w: FloatArray) -> float:
        idx = np.arange(self.data.n_samples)
        s = self._scores(w, idx)
        loss = _logsumexp_rows(s) - s[idx, self.labels]
        return float(np.sum(self.data.sample_weight * loss)) / idx.shape[0] + self._reg_value(w)

    def full_gradient(self, w: FloatArray, out: FloatArray) -> float:
        idx = np.arange(self.data.n_samples)
        total, g = self._data_term(w, idx, self.data.sample_weight)
        out[:] = g / idx.shape[0] + self.lam * self.reg * w
        return total / idx.shape[0] + self._reg_value(w)

    def feature_matrix(self, i: int) -> FloatArray:
        Fi = self.F[self._rows(np.array([i]))]
        return np.asarray(Fi.toarray() if sp.issparse(Fi) else Fi, dtype=np.float64)

    def sample_bound(self, w: FloatArray, i: int) -> tuple[float, FloatArray, FloatArray]:
        """``(log z, r, S)`` of the bound (3) of sample ``i`` at ``w`` (Algorithm 1)."""
        return bound_numpy(self.feature_matrix(i), self._scores(w, np.array([i]))[0])

    def bound(self, w: FloatArray, batch: IndexArray) -> tuple[FloatArray, FloatArray]:
        """``(mu_B, S)``: Algorithm 1 over the batch; ``Sigma_B = S S'`` (``S`` dense)."""
        b = np.asarray(batch, dtype=np.intp)
        size = b.shape[0]
        mu = np.zeros(self.n_params)
        cols = []
        for i in b:
            Fi = self.feature_matrix(int(i))
            _, r, S = bound_numpy(Fi, self._scores(w, np.array([i]))[0])
            c = float(self.data.grad_weight[i]) / size
            mu += c * (r - Fi[self.labels[i]])
            cols.append(np.sqrt(c) * S)
        return mu, np.hstack(cols)


def _reg_mask(data: Dataset, n_blocks: int) -> FloatArray:
    reg = np.ones(data.dim)
    if data.fit_intercept:
        reg[-1] = 0.0
    return np.tile(reg, n_blocks)


@dataclass(frozen=True)
class BinaryLogisticNumPy(Objective):
    """Reference twin of :class:`sqnopt.objectives.BinaryLogistic` (``f(y) = (y/2) x``)."""

    lam: float = 1e-4
    name = "binary_logistic_numpy"

    @property
    def capabilities(self) -> frozenset[str]:
        return frozenset({BINARY, SMOOTH, QUADRATIC_BOUND}
                         | ({STRONGLY_CONVEX} if self.lam > 0 else set()))

    def init(self, data: Dataset) -> LogLinearKernelNumPy:
        X = sp.csr_matrix(data.design())
        F = sp.vstack([-0.5 * X, 0.5 * X], format="csr")
        order = np.arange(2 * data.n_samples).reshape(2, -1).T.ravel()  # rows i*2 + y
        return LogLinearKernelNumPy(data, self.lam, F[order], np.zeros((data.n_samples, 2)),
                                    (data.y > 0).astype(np.intp), _reg_mask(data, 1))


@dataclass(frozen=True)
class SoftmaxNumPy(Objective):
    """Reference twin of :class:`sqnopt.objectives.Softmax` (``f(y) = e_y (x) x``)."""

    lam: float = 1e-4
    name = "softmax_numpy"
    label_kind = "multiclass"

    @property
    def capabilities(self) -> frozenset[str]:
        return frozenset({MULTICLASS, SMOOTH, QUADRATIC_BOUND}
                         | ({STRONGLY_CONVEX} if self.lam > 0 else set()))

    def n_blocks(self, n_classes: int) -> int:
        return n_classes

    def init(self, data: Dataset) -> LogLinearKernelNumPy:
        K = data.n_classes
        X = sp.csr_matrix(data.design())
        F = sp.vstack([sp.kron(sp.csr_matrix(np.eye(K)[k:k + 1]), X, format="csr")
                       for k in range(K)], format="csr")
        order = np.arange(K * data.n_samples).reshape(K, -1).T.ravel()
        return LogLinearKernelNumPy(data, self.lam, F[order], np.zeros((data.n_samples, K)),
                                    data.y.astype(np.intp), _reg_mask(data, K))


@dataclass(frozen=True)
class LogLinearNumPy(Objective):
    """Reference twin of :class:`sqnopt.objectives.LogLinear` (stacked joint features)."""

    n_outputs: int = 2
    lam: float = 1e-4
    base_measure: Any = field(default=None, compare=False)
    name = "loglinear_numpy"
    label_kind = "multiclass"

    @property
    def capabilities(self) -> frozenset[str]:
        return frozenset({MULTICLASS, SMOOTH, QUADRATIC_BOUND}
                         | ({STRONGLY_CONVEX} if self.lam > 0 else set()))

    def param_layout(self, data: Dataset) -> tuple[int, int]:
        return 1, data.n_features // int(self.n_outputs)

    def init(self, data: Dataset) -> LogLinearKernelNumPy:
        K = int(self.n_outputs)
        p = data.n_features // K
        X = sp.csr_matrix(data.X, dtype=np.float64)
        F = sp.vstack([X[:, y * p:(y + 1) * p] for y in range(K)], format="csr")
        order = np.arange(K * data.n_samples).reshape(K, -1).T.ravel()
        if self.base_measure is None:
            log_h = np.zeros((data.n_samples, K))
        else:
            h = np.asarray(self.base_measure, dtype=np.float64).reshape(-1, K)
            with np.errstate(divide="ignore"):
                log_h = np.broadcast_to(np.log(h), (data.n_samples, K)).copy()
        return LogLinearKernelNumPy(data, self.lam, F[order], log_h, data.y.astype(np.intp),
                                    np.ones(p))
