"""Log-linear objective components: models with a partition function that provide the
quadratic bound of Aravkin, Choromanska, Jebara & Kanevsky (2014) for SQB."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from sqnopt.data import Dataset
from sqnopt.interfaces import (
    BINARY,
    DENSE_HESSIAN,
    HESSIAN_VECTOR,
    LINEAR_SCORES,
    MULTICLASS,
    PROBABILISTIC,
    QUADRATIC_BOUND,
    SMOOTH,
    STRONGLY_CONVEX,
    Objective,
)
from sqnopt.objectives._loglinear import (
    BinaryLogisticKernel,
    SoftmaxKernel,
    StackedLogLinearKernel,
)

__all__ = ["BinaryLogistic", "LogLinear", "Softmax", "softmax_joint_features"]


def _check_lam(owner: str, lam: float) -> None:
    if not (isinstance(lam, (int, float)) and math.isfinite(lam) and lam >= 0):
        raise ValueError(f"{owner}: lam must be a finite number >= 0, got {lam!r}")


def _caps(kind: str, lam: float) -> frozenset[str]:
    caps = {kind, SMOOTH, QUADRATIC_BOUND, PROBABILISTIC, LINEAR_SCORES, HESSIAN_VECTOR}
    if lam > 0:
        caps.add(STRONGLY_CONVEX)
    return frozenset(caps)


@dataclass(frozen=True)
class BinaryLogistic(Objective):
    r"""L2-regularised binary logistic regression written as a log-linear model, so that it
    provides the partition-function bound (capability ``quadratic_bound``, used by SQB).

    With :math:`\Omega = \{-1, +1\}` and :math:`f_x(y) = \tfrac{y}{2} x`,
    :math:`\log Z_x(w) - w^\top f_x(y) = \log(1 + e^{-y\, w^\top x})`, so

    .. math:: F(w) = \frac{\lambda}{2}\|w\|^2 + \frac{1}{\sum c_i}\sum_i c_i \log(1 + e^{-y_i w^\top x_i})

    -- the same function, value for value, as :class:`~sqnopt.objectives.LogLoss`.
    The bound of sample ``i`` at ``w`` is ``w(x_i.w) x_i x_i'`` with
    ``w(l) = tanh(l/2) / (2l)`` (Aravkin et al. 2014, Algorithm 1 with two outputs).
    """

    lam: float = 1e-4
    name = "binary_logistic"
    curvature_bound = 0.25

    def __post_init__(self) -> None:
        _check_lam("BinaryLogistic", self.lam)

    @property
    def capabilities(self) -> frozenset[str]:
        return _caps(BINARY, self.lam) | {DENSE_HESSIAN}

    def with_capability(self, capability: str) -> Objective | None:
        """The multinomial :class:`Softmax` for ``multiclass``."""
        if capability == MULTICLASS:
            return Softmax(lam=self.lam)
        return super().with_capability(capability)

    def init(self, data: Dataset) -> BinaryLogisticKernel:
        return BinaryLogisticKernel(data.rows, float(self.lam))


@dataclass(frozen=True)
class Softmax(Objective):
    r"""L2-regularised multinomial logistic regression (softmax), a log-linear model with
    :math:`f_x(y) = e_y \otimes x` over :math:`K` classes.

    .. math:: F(W) = \frac{\lambda}{2}\sum_k \|w_k\|^2 + \frac{1}{\sum c_i}\sum_i c_i
              \Big(\log \sum_k e^{w_k^\top x_i} - w_{y_i}^\top x_i\Big)

    Parameters are ``K`` blocks of ``dim`` (block ``k``: class ``k``'s weights, then its
    intercept when fitted). The log-sum-exp is max-shifted (finite and exact for any finite
    score). Provides the quadratic bound (capability ``quadratic_bound``).
    """

    lam: float = 1e-4
    name = "softmax"
    label_kind = "multiclass"
    #: the Hessian of log-sum-exp in the scores is diag(p) - p p', of spectral norm <= 1/2
    curvature_bound = 0.5

    def __post_init__(self) -> None:
        _check_lam("Softmax", self.lam)

    @property
    def capabilities(self) -> frozenset[str]:
        return _caps(MULTICLASS, self.lam) | {DENSE_HESSIAN}

    def n_blocks(self, n_classes: int) -> int:
        return n_classes

    def init(self, data: Dataset) -> SoftmaxKernel:
        return SoftmaxKernel(data.rows, float(self.lam), data.n_classes)


def _as_log_base_measure(base_measure: Any, n_outputs: int) -> NDArray[np.float64] | None:
    if base_measure is None:
        return None
    h = np.asarray(base_measure, dtype=np.float64)
    if h.ndim == 1:
        h = h.reshape(1, -1)
    if h.ndim != 2 or h.shape[1] != n_outputs:
        raise ValueError(f"LogLinear: base_measure must have shape (n_outputs,) or "
                         f"(n_samples, n_outputs) with n_outputs={n_outputs}, got {h.shape}")
    if not np.all(np.isfinite(h)) or np.any(h < 0):
        raise ValueError("LogLinear: base_measure must be finite and >= 0 (h = 0 excludes an "
                         "output)")
    with np.errstate(divide="ignore"):
        return np.log(h)


@dataclass(frozen=True)
class LogLinear(Objective):
    r"""General L2-regularised log-linear model over a finite output set
    :math:`\Omega = \{0, \dots, K-1\}` (Aravkin et al. 2014, eq. 1 and 4):

    .. math:: p(y \mid x_i, \theta) = \frac{h_i(y)\, e^{\theta^\top f_i(y)}}{Z_i(\theta)}, \qquad
              F(\theta) = \frac{\lambda}{2}\|\theta\|^2 + \frac{1}{\sum c_i}\sum_i c_i
              \big(\log Z_i(\theta) - \theta^\top f_i(y_i) - \log h_i(y_i)\big)

    **Data layout.** Row ``i`` of ``X`` stacks the joint feature vectors
    ``f_i(0), f_i(1), ..., f_i(K-1)`` (each of length ``p``, so ``X`` has ``K p`` columns, dense
    or sparse); ``y[i]`` is the index of the observed output. ``theta`` has ``p`` entries. Pass
    ``classes=np.arange(K)`` to ``fit`` when some output is never observed. No intercept: add a
    constant joint feature instead.

    Parameters
    ----------
    n_outputs
        ``K = |Omega|``.
    lam
        L2 regularisation of ``theta``.
    base_measure
        ``h_i(y) >= 0``: ``None`` (all ones), shape ``(K,)`` (shared) or ``(n_samples, K)``.
        ``h = 0`` removes an output for that sample (never the observed one).
    """

    n_outputs: int = 2
    lam: float = 1e-4
    base_measure: Any = field(default=None, compare=False)
    name = "loglinear"
    label_kind = "multiclass"
    curvature_bound = 0.5

    def __post_init__(self) -> None:
        if not (isinstance(self.n_outputs, (int, np.integer)) and self.n_outputs >= 2):
            raise ValueError(f"LogLinear: n_outputs must be an integer >= 2, got "
                             f"{self.n_outputs!r}")
        _check_lam("LogLinear", self.lam)
        _as_log_base_measure(self.base_measure, int(self.n_outputs))

    def describe(self) -> str:
        h = "None" if self.base_measure is None else f"<array {np.shape(self.base_measure)}>"
        return f"{self.name}(n_outputs={self.n_outputs}, lam={self.lam!r}, base_measure={h})"

    @property
    def capabilities(self) -> frozenset[str]:
        return _caps(MULTICLASS, self.lam)

    def param_layout(self, data: Dataset) -> tuple[int, int]:
        K = int(self.n_outputs)
        if data.n_features % K != 0:
            raise ValueError(f"LogLinear: X has {data.n_features} columns, not a multiple of "
                             f"n_outputs={K}; row i must stack f_i(0), ..., f_i(K-1)")
        return 1, data.n_features // K

    def init(self, data: Dataset) -> StackedLogLinearKernel:
        K = int(self.n_outputs)
        classes = np.asarray(data.classes)
        if (classes.dtype.kind not in "iuf" or data.n_classes > K
                or not np.array_equal(classes.astype(np.float64),
                                      np.arange(data.n_classes, dtype=np.float64))):
            raise ValueError(
                f"LogLinear: labels must be the output indices 0..{K - 1}; the observed labels "
                f"{classes.tolist()[:10]} are not 0..{data.n_classes - 1}, so their encoding "
                f"would shift. Pass classes=np.arange({K}) to fit when some output is never "
                "observed")
        return StackedLogLinearKernel(data.rows, float(self.lam), K,
                                      _as_log_base_measure(self.base_measure, K))


def softmax_joint_features(X: ArrayLike, n_classes: int) -> Any:
    """The softmax model in the :class:`LogLinear` layout: row ``i`` stacks
    ``f_i(y) = e_y (x) x_i`` (length ``K p``) for ``y = 0..K-1``, so ``X`` becomes ``N x K^2 p``
    (``K`` copies of each entry are stored). Dense input gives a dense array, sparse input CSR."""
    import scipy.sparse as sp

    K = int(n_classes)
    if sp.issparse(X):
        coo = sp.coo_matrix(X)
        n, p = coo.shape
        rows = np.concatenate([coo.row] * K)
        cols = np.concatenate([coo.col + y * (K * p + p) for y in range(K)])
        vals = np.concatenate([coo.data] * K)
        return sp.csr_matrix((vals, (rows, cols)), shape=(n, K * K * p))
    Xa = np.asarray(X)
    n, p = Xa.shape
    out = np.zeros((n, K * K * p), dtype=Xa.dtype)
    for y in range(K):
        start = y * (K * p + p)
        out[:, start:start + p] = Xa
    return out
