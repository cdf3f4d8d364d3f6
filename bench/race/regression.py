"""The race's regression problems: ridge (squared error) and Poisson regression (log link).

Posed as every race problem, ``F(w) = alpha/2 ||w||^2 + mean_i loss_i(w)`` with no separate
intercept (each data set here carries a constant column of ones, its weight regularised as the
others), with

* ``squared``: ``loss_i = (x_i.w - y_i)^2 / 2`` -- scikit-learn's ``Ridge(alpha = alpha N)``
  (its objective is ``||y - Xw||^2 + alpha_R ||w||^2``, ``2 N`` times ours);
* ``poisson``: ``loss_i = exp(s_i) - y_i s_i + y_i log y_i - y_i`` (``s_i = x_i.w``), the half
  Poisson deviance -- scikit-learn's ``PoissonRegressor(alpha)`` objective, and sqnopt's
  ``exp(s) - y s`` plus a constant that makes ``F* > 0`` (a relative excess needs it).

The data sets: the shared data sets hold no regression targets (``MANIFEST.tsv``: binary,
multiclass and CTR sets only), so the race poses them on

* ``diabetes`` -- real, dense: scikit-learn's bundled diabetes data (442 x 10, standardised
  columns; the target a disease-progression score), 20 % held out (seed 0); ridge only (the
  targets are scores, not counts);
* ``regression-dense`` and ``regression-sparse`` -- generated, with targets drawn by the rule
  of :func:`linear_targets` from features of sqnopt's own generators: dense rows of
  :func:`sqnopt.datasets.make_boxes` (20 000 x 100, uniform features) and sparse unit-norm
  TF-IDF-like rows of :func:`sqnopt.datasets.make_rcv1_like` (50 000 x 5 000, about 75 stored
  values a row). Ridge targets are the linear score plus Gaussian noise; Poisson targets are
  counts drawn from ``Poisson(exp(score))`` -- the documented count problem, as no count
  data is shared.

Nothing here imports the rest of the race (``problems`` and ``contenders`` import this).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from scipy.special import xlogy

FloatArray = NDArray[np.float64]

#: The race's regression losses (problem kinds ``ridge`` and ``poisson``).
REGRESSION_LOSSES = ("squared", "poisson")


# ---------------------------------------------------------------------------- the objective
def _scores(X: Any, w: Any) -> FloatArray:
    return np.asarray(X @ np.asarray(w, dtype=np.float64).ravel(), dtype=np.float64).ravel()


def data_loss(loss: str, s: FloatArray, y: FloatArray) -> float:
    """The mean loss at the scores ``s`` (module docstring); ``inf`` where ``exp`` overflows."""
    if loss == "squared":
        r = s - y
        return 0.5 * float(np.mean(r * r))
    if loss == "poisson":
        with np.errstate(over="ignore"):
            return float(np.mean(np.exp(s) - y * s + xlogy(y, y) - y))
    raise ValueError(f"unknown regression loss {loss!r}")


def objective(loss: str, alpha: float, X: Any, y: FloatArray, w: Any) -> float:
    wv = np.asarray(w, dtype=np.float64).ravel()
    return data_loss(loss, _scores(X, wv), y) + 0.5 * alpha * float(wv @ wv)


def r2(loss: str, X: Any, y: FloatArray, w: Any) -> float:
    """The coefficient of determination of the predictions (``exp`` of the scores for
    Poisson) on ``(X, y)``: what the report shows in the test column of a regression problem."""
    s = _scores(X, w)
    with np.errstate(over="ignore"):
        pred = np.exp(s) if loss == "poisson" else s
    ss_tot = float(np.sum((y - y.mean()) ** 2))
    return 1.0 - float(np.sum((y - pred) ** 2)) / ss_tot if ss_tot > 0 else float("nan")


HessAt = Callable[[FloatArray], tuple[Callable[[FloatArray], FloatArray], FloatArray]]


def grad_hessp(loss: str, alpha: float, X: Any, y: FloatArray
               ) -> tuple[Callable[[FloatArray], tuple[float, FloatArray]], HessAt]:
    """``F`` with its gradient, and ``hess(w)``: the Hessian-vector product at ``w`` and the
    Hessian's diagonal (the reference solve's Newton-CG; ``problems.newton_cg``).
    ``D_i = 1`` (squared) or ``exp(s_i)`` (Poisson): ``H = X' D X / N + alpha I``."""
    n = X.shape[0]
    Xt = X.T.tocsr() if sp.issparse(X) else X.T
    Xsq_t = (X.multiply(X)).T.tocsr() if sp.issparse(X) else (X * X).T

    def fg(w: FloatArray) -> tuple[float, FloatArray]:
        s = _scores(X, w)
        with np.errstate(over="ignore"):
            d1 = s - y if loss == "squared" else np.exp(s) - y
        return (data_loss(loss, s, y) + 0.5 * alpha * float(w @ w),
                np.asarray(Xt @ d1).ravel() / n + alpha * w)

    def hess(w: FloatArray) -> tuple[Callable[[FloatArray], FloatArray], FloatArray]:
        D = np.ones(n) if loss == "squared" else np.exp(_scores(X, w))
        return (lambda v: np.asarray(Xt @ (D * _scores(X, v))).ravel() / n + alpha * v,
                np.asarray(Xsq_t @ D).ravel() / n + alpha)

    return fg, hess


# ---------------------------------------------------------------------------- data sets
def _with_constant(X: Any) -> Any:
    """``X`` with a column of ones appended (the intercept, as a regularised feature)."""
    ones = np.ones((X.shape[0], 1))
    if sp.issparse(X):
        return sp.hstack([X, sp.csr_matrix(ones)], format="csr")
    return np.ascontiguousarray(np.hstack([X, ones]))


def linear_targets(X: Any, X_test: Any, loss: str, seed: int, score_std: float,
                   noise: float = 0.5) -> tuple[FloatArray, FloatArray]:
    """Targets of a generated regression problem: a linear score ``s = X beta``, ``beta``
    standard normal (seeded), centred and scaled so that ``s`` has mean 0 and standard
    deviation ``score_std`` on the training rows; ``squared``: ``y = s + noise * N(0, 1)``;
    ``poisson``: ``y ~ Poisson(exp(s))`` (counts of mean about 1). The test rows get targets
    by the same affine map of ``X_test beta``."""
    rng = np.random.default_rng(seed)
    beta = rng.standard_normal(X.shape[1])
    s, st = _scores(X, beta), _scores(X_test, beta)
    mean, scale = float(np.mean(s)), score_std / float(np.std(s))
    s, st = (s - mean) * scale, (st - mean) * scale
    if loss == "squared":
        return (s + noise * rng.standard_normal(s.shape[0]),
                st + noise * rng.standard_normal(st.shape[0]))
    return (rng.poisson(np.exp(s)).astype(np.float64),
            rng.poisson(np.exp(st)).astype(np.float64))


def _split(X: Any, y: FloatArray) -> tuple[Any, FloatArray, Any, FloatArray]:
    from sklearn.model_selection import train_test_split

    idx = np.arange(X.shape[0])
    tr, te = train_test_split(idx, test_size=0.2, random_state=0)
    tr.sort()
    te.sort()
    return X[tr], y[tr], X[te], y[te]


def load_diabetes(_: Any) -> tuple[Any, ...]:
    from sklearn.datasets import load_diabetes as sk_diabetes

    X, y = sk_diabetes(return_X_y=True)
    Xtr, ytr, Xte, yte = _split(_with_constant(np.asarray(X, dtype=np.float64)),
                                np.asarray(y, dtype=np.float64))
    return (Xtr, ytr, Xte, yte, "holdout 20 % (seed 0)",
            "scikit-learn's diabetes data (bundled; real), 10 standardised columns + a "
            "constant, target a disease-progression score", 1)


def _generated(kind: str) -> Callable[[Any], tuple[Any, ...]]:
    """A loader of a generated set whose targets depend on the problem (``ridge``: real,
    ``poisson``: counts): it returns both target vectors, the race's loader picks by loss."""
    def load(_: Any) -> tuple[Any, ...]:
        if kind == "dense":
            from sqnopt.datasets import make_boxes

            X = make_boxes(20_000, 100, random_state=0)[0]
            Xt = make_boxes(5_000, 100, random_state=1)[0]
            desc = ("generated: make_boxes features (20 000 x 100, dense) + a constant; "
                    "targets by linear_targets (seed 0)")
        else:
            from sqnopt.datasets import make_rcv1_like

            X, _ = make_rcv1_like(60_000, 5_000, random_state=0)
            X, Xt = X[:50_000], X[50_000:]
            desc = ("generated: make_rcv1_like features (50 000 x 5 000, sparse, unit-norm "
                    "rows) + a constant; targets by linear_targets (seed 0)")
        X, Xt = _with_constant(X), _with_constant(Xt)
        # score spread: 0.5 for counts (means exp(s) around 1), 1 for real targets; the
        # targets by loss (the race's loader takes the pair of its problem's loss)
        targets = {loss: linear_targets(X, Xt, loss, 0, 0.5 if loss == "poisson" else 1.0)
                   for loss in REGRESSION_LOSSES}
        return (X, targets, Xt, None, "generated test set (same beta)", desc, 1)
    return load


load_regression_dense = _generated("dense")
load_regression_sparse = _generated("sparse")


# ---------------------------------------------------------------------------- contenders
def _quiet_fit(est: Any, X: Any, y: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y)


SweepParts = tuple[Callable[[], Any], Callable[[], tuple[Any, float, int]]]


def sqn_regressor(p: Any, params: Any, budget: int, seed: int, n_jobs: int = 1,
                  **kw: Any) -> SweepParts:
    """``SQNRegressor()`` at its defaults, except what poses the problem (``loss``, ``alpha``,
    ``fit_intercept=False``) and the budget: ``max_iter`` passes with ``tol=None``."""
    from sqnopt import SQNRegressor

    loss = {"squared": "squared_error", "poisson": "poisson"}[p.loss]
    est = SQNRegressor(loss=loss, alpha=p.alpha, fit_intercept=False, max_iter=budget,
                       tol=None, random_state=seed, n_jobs=n_jobs, **kw)

    def extract() -> tuple[Any, float, int]:
        # a fit by the normal equations (the one Newton step of ridge, taken directly) has no
        # driver history: its one iteration
        h = getattr(est, "history_", None)
        passes = float(h.effective_passes[-1]) if h is not None and len(h) else \
            float(est.n_iter_)
        return est.coef_, passes, int(est.n_iter_)

    return (lambda: est.fit(p.X, p.y)), extract


def sk_ridge(solver: str) -> Callable[..., SweepParts]:
    """``Ridge(alpha = alpha N, fit_intercept=False, solver=...)``: the same minimiser.
    Iterative solvers get ``tol=1e-14`` so that ``max_iter`` binds; the direct one
    (``cholesky``) ends the sweep after one fit. scikit-learn reports iterations for ``sag``,
    ``saga`` and ``lsqr`` only: ``sparse_cg`` is counted as having used its whole budget."""
    def build(p: Any, params: Any, budget: int, seed: int) -> SweepParts:
        from sklearn.linear_model import Ridge

        est = Ridge(alpha=p.alpha * p.n, fit_intercept=False, solver=solver, max_iter=budget,
                    tol=1e-14, random_state=seed)

        def extract() -> tuple[Any, float, int]:
            it = est.n_iter_
            if it is None:      # cholesky: direct (one fit); sparse_cg: not reported
                n_it = 0 if solver == "cholesky" else budget
            else:
                n_it = int(np.max(it))
            return est.coef_, float(max(n_it, 1)), n_it

        return (lambda: _quiet_fit(est, p.X, p.y)), extract
    return build


def sk_poisson(solver: str) -> Callable[..., SweepParts]:
    """``PoissonRegressor(alpha, fit_intercept=False, solver=...)`` (the same objective),
    ``tol=1e-14`` so that ``max_iter`` binds."""
    def build(p: Any, params: Any, budget: int, seed: int) -> SweepParts:
        from sklearn.linear_model import PoissonRegressor

        est = PoissonRegressor(alpha=p.alpha, fit_intercept=False, solver=solver,
                               max_iter=budget, tol=1e-14)

        def extract() -> tuple[Any, float, int]:
            it = int(est.n_iter_)
            return est.coef_, float(it), it

        return (lambda: _quiet_fit(est, p.X, p.y)), extract
    return build


__all__ = ["REGRESSION_LOSSES", "data_loss", "grad_hessp", "linear_targets",
           "load_diabetes", "load_regression_dense", "load_regression_sparse", "objective",
           "r2", "sk_poisson", "sk_ridge", "sqn_regressor"]
