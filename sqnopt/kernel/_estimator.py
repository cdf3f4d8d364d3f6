"""Kernelized Pegasos: Mercer kernels in the primal, and the random-feature route.

Two ways to train a kernel SVM with Pegasos:

* :class:`KernelPegasos` runs Pegasos with a Mercer kernel ``K`` directly (Shalev-Shwartz,
  Singer, Srebro & Cotter 2011, Sec. 4): the iterate ``w_t = c_t sum_j alpha_j y_j phi(x_j)`` is
  kept as coefficients of the training points (the *alpha representation*). Each iteration costs
  one kernel evaluation per support vector and batch point, and so does **every prediction**:
  ``f(x) = sum_{j in SV} coef_j K(x, x_j) + b`` is ``O(|SV| nnz(x))``, and the support set grows
  with ``t`` (up to ``min(t k, N)``). Fine for thousands of points; for more use the route below.
* :class:`ApproximateKernelPegasos` maps the data through a fixed finite feature map (Nystroem
  or random Fourier features, from scikit-learn's ``kernel_approximation``) and runs linear
  Pegasos (:meth:`sqnopt.Solver.pegasos`, the O(nnz) scaled loop) on the features: training is
  linear in ``N`` and prediction costs O(n_components) per point.

With the linear kernel, :class:`KernelPegasos` produces the iterates of linear Pegasos (same
sampler draws for the same ``random_state``), which the tests check.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Callable, Literal, Union

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from sqnopt.data import check_matrix, encode_labels, make_rows
from sqnopt.kernel._expansion import PythonKernelIterate
from sqnopt.kernel._pegasos import (
    KernelIterate,
    KernelLoop,
    LinearMercer,
    MercerKernel,
    PolyMercer,
    RBFMercer,
)
from sqnopt.objectives._margin import HingeKernel
from sqnopt.projections._base import L2BallKernel
from sqnopt.schedules._base import FixedKernel
from sqnopt.solver._loop import EXIT_CODES, Counters
from sqnopt.solver._pyloop import PythonLoop
from sqnopt.solver._result import DivergenceWarning
from sqnopt.solver._sampler import Sampler, SequenceSampler, UniformSampler
from sqnopt.solver._solver import RandomState, Solver, make_bit_generator
from sqnopt.steps._base import PegasosStepKernel

FloatArray = NDArray[np.float64]
KernelFn = Callable[[Any, Any], ArrayLike]
KernelSpec = Union[Literal["linear", "rbf", "poly"], KernelFn]

__all__ = ["ApproximateKernelPegasos", "KernelPegasos", "kernel_matrix"]

_CHUNK = 2048


def _row_sqnorms(X: Any) -> FloatArray:
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel()
    Xd = np.asarray(X, dtype=np.float64)
    out: FloatArray = np.einsum("ij,ij->i", Xd, Xd)
    return out


def kernel_matrix(kernel: KernelSpec, A: Any, B: Any, *, gamma: float, coef0: float = 1.0,
                  degree: int = 3) -> FloatArray:
    """``K(a_i, b_j)`` for the rows of ``A`` and ``B`` (dense or CSR) as a dense array."""
    if callable(kernel):
        out = np.asarray(kernel(A, B), dtype=np.float64)
        if out.shape != (A.shape[0], B.shape[0]):
            raise ValueError(f"the kernel callable returned shape {out.shape}, expected "
                             f"{(A.shape[0], B.shape[0])}")
        return out
    dot = A @ B.T
    dot = np.asarray(dot.toarray() if sp.issparse(dot) else dot, dtype=np.float64)
    if kernel == "linear":
        return dot
    if kernel == "rbf":
        d2 = _row_sqnorms(A)[:, None] + _row_sqnorms(B)[None, :] - 2.0 * dot
        return np.exp(-gamma * np.maximum(d2, 0.0))
    if kernel == "poly":
        return (gamma * dot + coef0) ** degree
    raise ValueError(f"unknown kernel {kernel!r}; use 'linear', 'rbf', 'poly' or a callable")


class KernelPegasos:
    r"""Pegasos with a Mercer kernel, in the primal (alpha representation).

    Minimises ``lam/2 ||w||^2 + (1/N) sum_i max(0, 1 - y_i (w . phi(x_i) + b))`` over the RKHS of
    ``K`` with the Pegasos iteration (step ``1/(lam t)``, minibatch ``k``, projection onto
    ``||w|| <= 1/sqrt(lam)``), keeping ``w = c sum_j alpha_j y_j phi(x_j)`` (Shalev-Shwartz et
    al. 2011, Sec. 4 and Fig. 3; see :mod:`sqnopt.kernel._pegasos` for the update).

    .. note:: **Cost.** An iteration evaluates ``K`` between the ``k`` batch points and every
       current support vector; ``predict``/``decision_function`` evaluate ``K`` between each
       query point and every support vector: ``O(|SV|)`` kernel evaluations per prediction, and
       ``|SV|`` grows with the number of iterations (up to ``min(t k, N)``). For large ``N`` prefer
       :class:`ApproximateKernelPegasos`.

    Parameters
    ----------
    kernel
        ``"linear"``, ``"rbf"`` (``exp(-gamma ||x - x'||^2)``), ``"poly"``
        (``(gamma x.x' + coef0)^degree``), or a callable ``K(A, B) -> (len(A), len(B))`` array
        (the Python driver with the kernel expansion in Python: slower, same iteration).
    lam
        Regularisation (> 0).
    batch_size
        ``k`` (at most the number of samples: a larger one is clipped, as in the solver).
    max_iter, max_epochs
        Iterations ``T``; default ``ceil(max_epochs * N / k)`` with ``max_epochs=1``.
    project
        Project onto the ball of radius ``1/sqrt(lam)`` after each step.
    fit_intercept
        Unregularised bias ``b`` updated with the same step (as ``Solver.pegasos``).
    gamma
        Kernel width for ``"rbf"``/``"poly"``; ``None`` means ``1 / n_features``.
    random_state, batch_sequence
        Minibatch draws, as for :class:`sqnopt.Solver` (same seed, same draws).
    path
        ``"auto"`` (the compiled driver for built-in kernels) or ``"python"`` (the Python
        driver, as for a callable: equal to rounding).

    Attributes
    ----------
    support_ : indices of the training points with a coefficient
    support_vectors_ : those rows of the training data
    dual_coef_ : ``c alpha_j y_j`` with ``w = sum_j dual_coef_j phi(x_j)``
    intercept_, classes_, n_iter_, sqnorm_ (``||w||^2``), n_kernel_evals_
    """

    def __init__(self, kernel: KernelSpec = "rbf", *, lam: float = 1e-4, batch_size: int = 1,
                 max_iter: int | None = None, max_epochs: float = 1.0, project: bool = True,
                 fit_intercept: bool = False, gamma: float | None = None, degree: int = 3,
                 coef0: float = 1.0, random_state: RandomState = None,
                 batch_sequence: ArrayLike | None = None,
                 path: Literal["auto", "python"] = "auto") -> None:
        self.kernel = kernel
        self.lam = lam
        self.batch_size = batch_size
        self.max_iter = max_iter
        self.max_epochs = max_epochs
        self.project = project
        self.fit_intercept = fit_intercept
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.random_state = random_state
        self.batch_sequence = batch_sequence
        self.path = path

    # ------------------------------------------------------------------ fitting
    def _check_params(self) -> None:
        if not callable(self.kernel) and self.kernel not in ("linear", "rbf", "poly"):
            raise ValueError(f"kernel must be 'linear', 'rbf', 'poly' or a callable, got "
                             f"{self.kernel!r}")
        if not (isinstance(self.lam, (int, float)) and math.isfinite(self.lam) and self.lam > 0):
            raise ValueError(f"lam must be a finite number > 0, got {self.lam!r}")
        if not (isinstance(self.batch_size, (int, np.integer)) and self.batch_size >= 1):
            raise ValueError(f"batch_size must be an integer >= 1, got {self.batch_size!r}")
        if self.path not in ("auto", "python"):
            raise ValueError(f"path must be 'auto' or 'python', got {self.path!r}")
        if self.gamma is not None and not (math.isfinite(self.gamma) and self.gamma > 0):
            raise ValueError(f"gamma must be > 0, got {self.gamma!r}")

    def _gamma(self, n_features: int) -> float:
        return float(self.gamma) if self.gamma is not None else 1.0 / n_features

    def _mercer(self, n_features: int) -> MercerKernel:
        g = self._gamma(n_features)
        if self.kernel == "linear":
            return LinearMercer()
        if self.kernel == "rbf":
            return RBFMercer(g)
        return PolyMercer(g, float(self.coef0), int(self.degree))

    def fit(self, X: Any, y: ArrayLike) -> KernelPegasos:
        """Run ``T`` Pegasos iterations on ``(X, y)`` (two classes)."""
        self._check_params()
        Xc = check_matrix(X, fit=True)
        n = int(Xc.shape[0])
        yc, classes = encode_labels(y, "binary", n_samples=n)
        T = self.max_iter
        if T is None:
            T = int(math.ceil(self.max_epochs * n / self.batch_size))
        if T < 0:
            raise ValueError(f"max_iter must be >= 0, got {T}")
        bitgen = make_bit_generator(self.random_state)
        sampler: Sampler
        if self.batch_sequence is not None:
            sampler = SequenceSampler(n, bitgen, np.array(self.batch_sequence, dtype=np.intp))
        else:
            sampler = UniformSampler(n, bitgen)
        out = self._fit_driver(Xc, yc, sampler, T,
                               python=callable(self.kernel) or self.path == "python")
        support, coef, b, done, nu, n_evals = out
        self.classes_ = classes
        self.n_features_in_ = int(Xc.shape[1])
        self.support_ = np.asarray(support, dtype=np.intp)
        self.support_vectors_ = Xc[self.support_]
        self.dual_coef_ = np.asarray(coef, dtype=np.float64)
        self.intercept_ = float(b)
        self.n_iter_ = int(done)
        self.sqnorm_ = float(nu)
        self.n_kernel_evals_ = int(n_evals)
        return self

    def _fit_driver(self, X: Any, y: FloatArray, sampler: Sampler, T: int, python: bool
                    ) -> tuple[NDArray[np.intp], FloatArray, float, int, float, int]:
        """Kernel Pegasos on the one driver with the kernel expansion as its iterate
        representation: hinge loss, Pegasos' step ``1/(lam t)``, fixed batches of ``k`` (at
        most ``N``), the ball of radius ``1/sqrt(lam)``. The compiled driver
        (:class:`~sqnopt.kernel._pegasos.KernelLoop`) with a built-in kernel, or ``python``: the
        Python driver (:meth:`PythonLoop.with_iterate
        <sqnopt.solver._pyloop.PythonLoop.with_iterate>`) with the expansion for any kernel
        callable (:class:`~sqnopt.kernel._expansion.PythonKernelIterate`)."""
        n = int(X.shape[0])
        lam = float(self.lam)
        objective = HingeKernel(make_rows(X, y, np.ones(n), np.ones(n), False), lam)
        iterate: Any
        if python:
            iterate = PythonKernelIterate(objective, X, y, np.ones(n), self._k,
                                          bool(self.fit_intercept))
        else:
            iterate = KernelIterate(objective, _row_sqnorms(X), self._mercer(int(X.shape[1])),
                                    bool(self.fit_intercept))
        ball = (L2BallKernel(objective.n_params, objective.n_params, objective.n_params,
                             1.0 / math.sqrt(lam)) if self.project else None)
        counters = Counters()
        build = PythonLoop.with_iterate if python else KernelLoop
        loop = build(objective, iterate, FixedKernel(n, int(self.batch_size)),
                     PegasosStepKernel(lam), ball, sampler, counters)
        self._warn_on_divergence(loop.run(T, 0), counters)
        return (iterate.support, iterate.coefficients, iterate.intercept, int(counters.t),
                iterate.sqnorm, iterate.n_kernel_evals)

    def _k(self, A: Any, B: Any) -> FloatArray:
        return kernel_matrix(self.kernel, A, B, gamma=self._gamma(A.shape[1]),
                             coef0=float(self.coef0), degree=int(self.degree))

    @staticmethod
    def _warn_on_divergence(code: int, counters: Counters) -> None:
        if code in (EXIT_CODES["LOOP_NONFINITE_LOSS"], EXIT_CODES["LOOP_NONFINITE_ITERATE"]):
            warnings.warn(f"KernelPegasos diverged at iteration {counters.t + 1}: the "
                          f"{'objective' if code == EXIT_CODES['LOOP_NONFINITE_LOSS'] else 'iterate'}"
                          " became non-finite; the model is the last finite iterate. Fix: a "
                          "larger lam or a kernel with bounded values (rescaled features for "
                          "'poly').", DivergenceWarning, stacklevel=4)

    # ------------------------------------------------------------------ predicting
    def _check_fitted(self) -> None:
        if not hasattr(self, "dual_coef_"):
            raise RuntimeError("this KernelPegasos is not fitted yet; call fit(X, y) first")

    def decision_function(self, X: Any) -> FloatArray:
        """``f(x) = sum_{j in SV} dual_coef_j K(x, x_j) + b`` (``O(|SV|)`` kernel evaluations per
        row, computed in chunks)."""
        self._check_fitted()
        Xc = check_matrix(X)
        if Xc.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {Xc.shape[1]} features, the model was fitted with "
                             f"{self.n_features_in_}")
        out = np.full(Xc.shape[0], self.intercept_)
        if self.support_.shape[0] == 0:
            return out
        for start in range(0, Xc.shape[0], _CHUNK):
            stop = min(start + _CHUNK, Xc.shape[0])
            out[start:stop] += self._k(Xc[start:stop], self.support_vectors_) @ self.dual_coef_
        return out

    def predict(self, X: Any) -> NDArray[Any]:
        """Class labels (``classes_[1]`` where the decision function is > 0)."""
        labels: NDArray[Any] = np.where(self.decision_function(X) > 0, self.classes_[1],
                                        self.classes_[0])
        return labels

    def objective(self, X: Any, y: ArrayLike) -> float:
        """``lam/2 ||w||^2 + mean hinge`` on ``(X, y)`` (``||w||^2`` as tracked)."""
        self._check_fitted()
        yc, _ = encode_labels(y, "binary", classes=self.classes_)
        m = yc * self.decision_function(X)
        return 0.5 * float(self.lam) * self.sqnorm_ + float(np.mean(np.maximum(0.0, 1.0 - m)))

    @property
    def coef_(self) -> FloatArray:
        """Primal weights ``w = sum_j dual_coef_j x_j`` (linear kernel only)."""
        self._check_fitted()
        if self.kernel != "linear":
            raise AttributeError("coef_ exists for the linear kernel only")
        if self.support_.shape[0] == 0:
            return np.zeros(self.n_features_in_)
        return np.asarray(self.support_vectors_.T @ self.dual_coef_, dtype=np.float64).ravel()


class ApproximateKernelPegasos:
    """Linear Pegasos on an approximate kernel feature map (Nystroem or random Fourier features).

    ``method="nystroem"`` uses :class:`sklearn.kernel_approximation.Nystroem` (any of its
    kernels; rank ``n_components``), ``method="rff"`` uses
    :class:`sklearn.kernel_approximation.RBFSampler` (Rahimi & Recht's random Fourier features for
    the RBF kernel). The features feed :meth:`sqnopt.Solver.pegasos`; extra keywords go to it
    (``max_epochs``, ``average``, ``random_state`` ...). Needs scikit-learn.
    """

    def __init__(self, method: Literal["nystroem", "rff"] = "nystroem", kernel: str = "rbf", *,
                 n_components: int = 300, gamma: float | None = None, degree: int = 3,
                 coef0: float = 1.0, lam: float = 1e-4, batch_size: int = 1,
                 random_state: int | None = None, **solver_kwargs: Any) -> None:
        self.method = method
        self.kernel = kernel
        self.n_components = n_components
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.lam = lam
        self.batch_size = batch_size
        self.random_state = random_state
        self.solver_kwargs = solver_kwargs

    def _transformer(self, n_features: int) -> Any:
        try:
            from sklearn import kernel_approximation as ka
        except ImportError as exc:  # pragma: no cover - sklearn is a test dependency
            raise ImportError("ApproximateKernelPegasos needs scikit-learn: "
                              "pip install 'sqnopt[sklearn]'") from exc
        gamma = self.gamma if self.gamma is not None else 1.0 / n_features
        if self.method == "nystroem":
            return ka.Nystroem(kernel=self.kernel, gamma=gamma, degree=self.degree,
                               coef0=self.coef0, n_components=self.n_components,
                               random_state=self.random_state)
        if self.method == "rff":
            if self.kernel != "rbf":
                raise ValueError("random Fourier features approximate the 'rbf' kernel only")
            return ka.RBFSampler(gamma=gamma, n_components=self.n_components,
                                 random_state=self.random_state)
        raise ValueError(f"method must be 'nystroem' or 'rff', got {self.method!r}")

    def fit(self, X: Any, y: ArrayLike) -> ApproximateKernelPegasos:
        Xc = check_matrix(X, fit=True)
        self.transformer_ = self._transformer(Xc.shape[1]).fit(Xc)
        Z = np.ascontiguousarray(self.transformer_.transform(Xc), dtype=np.float64)
        solver = Solver.pegasos(self.lam, batch_size=self.batch_size,
                                random_state=self.random_state, **self.solver_kwargs)
        self.result_ = solver.fit(Z, y)
        self.classes_ = self.result_.classes
        self.n_features_in_ = int(Xc.shape[1])
        return self

    def decision_function(self, X: Any) -> FloatArray:
        if not hasattr(self, "result_"):
            raise RuntimeError("this ApproximateKernelPegasos is not fitted yet; call fit first")
        Z = np.asarray(self.transformer_.transform(check_matrix(X)), dtype=np.float64)
        return np.asarray(Z @ self.result_.coef, dtype=np.float64) + float(self.result_.intercept)

    def predict(self, X: Any) -> NDArray[Any]:
        labels: NDArray[Any] = np.where(self.decision_function(X) > 0, self.classes_[1],
                                        self.classes_[0])
        return labels
