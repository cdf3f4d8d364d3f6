"""Regularization paths: a model for each ``alpha`` of a decreasing grid, each fit started from
the previous one's coefficients, and the choice of ``alpha`` by cross-validation along them.

A path visits ``alpha_0 > alpha_1 > ... > alpha_{m-1}``. The solution moves little from one
``alpha`` to the next on a fine grid, so a fit started at the previous solution (``warm_start``)
needs a few iterations where a cold start needs the whole solve -- the strategy of glmnet
(Friedman, Hastie & Tibshirani, *Regularization paths for generalized linear models via
coordinate descent*, J. Stat. Softw. 33(1), 2010), whose grid this module follows: ``m`` values
evenly spaced in ``log alpha`` from :func:`alpha_max` down to ``eps * alpha_max``.

:func:`alpha_max` is the smallest ``alpha`` at which the coefficients of an L1-penalised fit are
exactly zero. At ``w = 0`` (the intercepts at their own optimum) the gradient of the mean loss
is ``g_jk = sum_i c_i r_ik x_ij / sum_i c_i`` with ``r_ik`` the derivative of sample ``i``'s loss
in its score ``k``; zero is optimal for the penalty ``alpha (rho ||w||_1 + (1 - rho)/2
||w||^2)`` exactly when ``max |g_jk| <= alpha rho``, so ``alpha_max = max |g_jk| / rho``.
For the L2 penalty (``rho = 0``) no ``alpha`` gives zero coefficients; the grid then starts where
an L1 penalty would (``rho = 1``): from there on down the penalty's gradient matches the data's
at the start, and the default ``eps`` reaches six decades lower. The residuals at the
intercept-only optimum are closed-form for the likelihood losses: the class frequencies for
logistic and softmax (``r_ik = p_k - [y_i = k]``, one-vs-rest and multinomial alike), the mean
target for squared error and Poisson (``r_i = ybar - y_i``; Poisson's log link puts the
intercept at ``log ybar``). Other losses need ``alphas``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone, is_classifier
from sklearn.metrics import check_scoring
from sklearn.model_selection import check_cv
from sklearn.utils import _safe_indexing, check_array, indexable
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, column_or_1d

from sqnopt.estimators._composite import class_weighted
from sqnopt.solver._blas import one_blas_thread

__all__ = ["PathCV", "RegularizationPath", "alpha_grid", "alpha_max", "regularization_path"]

FloatArray = NDArray[np.float64]

#: losses whose intercept-only optimum is closed-form (module docstring)
_CLASSIFICATION = ("logloss",)
_REGRESSION = ("squared_error", "poisson")
#: the smallest ``rho`` a grid is computed with (glmnet's convention for a ridge-like penalty)
_MIN_RATIO = 1e-3


def _l1_share(estimator: Any) -> float:
    """``rho``, the L1 share of the estimator's penalty (0 for L2)."""
    penalty = getattr(estimator, "penalty", "l2")
    if penalty == "l1":
        return 1.0
    ratio = getattr(estimator, "l1_ratio", None)
    if penalty == "elasticnet" and ratio is not None:
        return float(ratio)
    return 0.0


def _residuals(y: NDArray[Any], weights: FloatArray, loss: str, fit_intercept: bool,
               classes: NDArray[Any] | None) -> FloatArray:
    """``r_ik`` at the intercept-only optimum (module docstring), shape ``(n, K)``."""
    if loss in _CLASSIFICATION:
        assert classes is not None
        onehot = (y[:, None] == classes[None, :]).astype(np.float64)
        p = (weights @ onehot) / weights.sum() if fit_intercept else np.full(
            classes.shape[0], 0.5 if classes.shape[0] == 2 else 1.0 / classes.shape[0])
        return np.asarray(p[None, :] - onehot, dtype=np.float64)
    t = np.asarray(y, dtype=np.float64)
    if loss == "poisson":
        if np.any(t < 0):
            raise ValueError("the Poisson loss needs targets y >= 0")
        base = float(weights @ t / weights.sum()) if fit_intercept else 1.0   # e^0 without one
    else:
        base = float(weights @ t / weights.sum()) if fit_intercept else 0.0
    return (base - t)[:, None]


def alpha_max(X: Any, y: ArrayLike, *, loss: str = "logloss", l1_ratio: float = 1.0,
              fit_intercept: bool = True, sample_weight: ArrayLike | None = None) -> float:
    """The smallest ``alpha`` whose L1 / elastic-net fit (``l1_ratio`` its L1 share) has all
    coefficients zero (module docstring); ``l1_ratio`` below ``1e-3`` is taken as ``1e-3``.

    ``loss`` is ``"logloss"`` (binary or multiclass), ``"squared_error"`` or ``"poisson"``."""
    if loss not in _CLASSIFICATION + _REGRESSION:
        raise ValueError(f"alpha_max: no closed form for loss={loss!r} (it has one for "
                         f"{', '.join(map(repr, _CLASSIFICATION + _REGRESSION))}); pass the "
                         "alphas of the path instead")
    if not 0.0 <= l1_ratio <= 1.0:
        raise ValueError(f"l1_ratio must be in [0, 1], got {l1_ratio!r}")
    X = check_array(X, accept_sparse="csr", dtype=(np.float64, np.float32))
    yy = column_or_1d(y)
    if yy.shape[0] != X.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but y has {yy.shape[0]} labels")
    weights = (np.ones(X.shape[0]) if sample_weight is None
               else column_or_1d(np.asarray(sample_weight, dtype=np.float64)))
    if weights.shape[0] != X.shape[0] or not np.all(np.isfinite(weights)) or np.any(
            weights < 0) or weights.sum() <= 0:
        raise ValueError("sample_weight must hold one finite weight >= 0 per row, not all 0")
    classes = np.unique(yy) if loss in _CLASSIFICATION else None
    r = _residuals(yy, weights, loss, fit_intercept, classes) * weights[:, None]
    grad = np.asarray(X.T @ r)
    top = float(np.max(np.abs(grad))) / float(weights.sum()) if grad.size else 0.0
    return top / max(l1_ratio, _MIN_RATIO)


def alpha_grid(X: Any, y: ArrayLike, *, n_alphas: int = 50, eps: float | None = None,
               loss: str = "logloss", l1_ratio: float = 1.0, fit_intercept: bool = True,
               sample_weight: ArrayLike | None = None) -> FloatArray:
    """``n_alphas`` values from :func:`alpha_max` down to ``eps`` times it, evenly spaced in
    ``log alpha``. ``eps=None``: ``1e-4`` with an L1 share (``1e-2`` when the features
    outnumber the rows, where the smallest ``alpha`` of glmnet's grid would interpolate), and
    ``1e-6`` for the L2 penalty, whose useful ``alpha`` lie far below the point where it starts
    (module docstring)."""
    if int(n_alphas) < 1:
        raise ValueError(f"n_alphas must be >= 1, got {n_alphas!r}")
    ridge = l1_ratio < _MIN_RATIO    # the L2 grid starts where an L1 one would
    top = alpha_max(X, y, loss=loss, l1_ratio=1.0 if ridge else l1_ratio,
                    fit_intercept=fit_intercept, sample_weight=sample_weight)
    if not top > 0.0:
        raise ValueError("alpha_max is 0: the labels carry no signal at the intercept-only "
                         "model (a constant target, or one class); pass the alphas")
    if eps is None:
        n, d = np.shape(X)
        eps = 1e-6 if ridge else (1e-4 if n > d else 1e-2)
    if not 0.0 < eps < 1.0:
        raise ValueError(f"eps must be in (0, 1), got {eps!r}")
    return np.asarray(top * np.logspace(0.0, np.log10(eps), int(n_alphas)), dtype=np.float64)


@dataclass(frozen=True)
class RegularizationPath:
    """The models of a path, in the order fitted (``alphas`` decreasing).

    ``coefs[k]`` and ``intercepts[k]`` are the estimator's ``coef_`` and ``intercept_`` after
    the fit at ``alphas[k]``; ``n_iter[k]`` its passes, ``converged[k]`` whether it met
    ``tol``, ``seconds[k]`` its wall time (warm-started from ``k - 1``)."""

    alphas: FloatArray
    coefs: FloatArray
    intercepts: FloatArray
    n_iter: NDArray[np.int64]
    converged: NDArray[np.bool_]
    seconds: FloatArray

    @property
    def nonzero(self) -> NDArray[np.int64]:
        """The nonzero coefficients of each model (the support an L1 penalty selects)."""
        return np.asarray([(c != 0).sum() for c in self.coefs], dtype=np.int64)


def _prepared_alphas(estimator: Any, X: Any, y: Any, alphas: ArrayLike | None, n_alphas: int,
                     eps: float | None, sample_weight: Any) -> FloatArray:
    if alphas is None:
        loss = getattr(estimator, "loss", None)
        if not isinstance(loss, str):
            raise ValueError("the default grid needs the estimator's loss by name; pass alphas")
        fit_intercept = bool(getattr(estimator, "fit_intercept", True))
        cw = getattr(estimator, "class_weight", None) if is_classifier(estimator) else None
        sw = class_weighted(sample_weight, cw, y)
        return alpha_grid(X, y, n_alphas=n_alphas, eps=eps, loss=loss,
                          l1_ratio=_l1_share(estimator), fit_intercept=fit_intercept,
                          sample_weight=sw)
    a = np.asarray(alphas, dtype=np.float64).ravel()
    if a.size == 0 or not np.all(np.isfinite(a)) or np.any(a < 0):
        raise ValueError("alphas must be finite numbers >= 0, at least one")
    return np.sort(a)[::-1].copy()


def _walk(estimator: Any, X: Any, y: Any, alphas: FloatArray,
          sample_weight: Any) -> Iterator[tuple[float, Any, float]]:
    """Fit ``estimator`` (a clone, warm-started) at each alpha in turn: ``(alpha, fitted,
    seconds)``."""
    est = clone(estimator)
    est.set_params(warm_start=False)
    # the composite fits' column copy of X, made once for the walk (a private attribute the
    # composite solve reads; removed at the end)
    est._column_cache = {}
    first = True
    try:
        for a in alphas:
            est.set_params(alpha=float(a))
            tic = time.perf_counter()
            if sample_weight is None:
                est.fit(X, y)
            else:
                est.fit(X, y, sample_weight=sample_weight)
            seconds = time.perf_counter() - tic
            if first:
                est.set_params(warm_start=True)
                first = False
            yield float(a), est, seconds
    finally:
        del est._column_cache


def _default_estimator() -> Any:
    from sqnopt.estimators._classifier import SQNClassifier

    return SQNClassifier()


@one_blas_thread
def regularization_path(X: Any, y: ArrayLike, *, estimator: Any = None,
                        alphas: ArrayLike | None = None, n_alphas: int = 50,
                        eps: float | None = None,
                        sample_weight: ArrayLike | None = None) -> RegularizationPath:
    """Fit ``estimator`` (default ``SQNClassifier()``; any sqnopt estimator, its parameters
    kept but ``alpha`` and ``warm_start``) at each ``alpha`` of a decreasing grid, each fit
    started from the previous one's coefficients.

    ``alphas``: the grid (sorted decreasing); ``None``: :func:`alpha_grid` with ``n_alphas``
    and ``eps``, for the estimator's loss and penalty. Returns a :class:`RegularizationPath`."""
    est = _default_estimator() if estimator is None else estimator
    X, y = indexable(X, y)
    grid = _prepared_alphas(est, X, y, alphas, n_alphas, eps, sample_weight)
    coefs, intercepts, n_iter, converged, seconds = [], [], [], [], []
    for _, fitted, sec in _walk(est, X, y, grid, sample_weight):
        coefs.append(np.array(fitted.coef_, dtype=np.float64))
        intercepts.append(np.array(fitted.intercept_, dtype=np.float64))
        n_iter.append(int(np.max(fitted.n_iter_)))
        converged.append(bool(getattr(fitted, "converged_", True)))
        seconds.append(sec)
    return RegularizationPath(alphas=grid, coefs=np.asarray(coefs),
                              intercepts=np.asarray(intercepts),
                              n_iter=np.asarray(n_iter, dtype=np.int64),
                              converged=np.asarray(converged, dtype=bool),
                              seconds=np.asarray(seconds, dtype=np.float64))


def _best_has(name: str) -> Any:
    def check(self: PathCV) -> bool:
        est = getattr(self, "best_estimator_", None)
        if est is None:
            est = self.estimator if self.estimator is not None else _default_estimator()
        return hasattr(est, name)

    return check


class PathCV(MetaEstimatorMixin, BaseEstimator):  # type: ignore[misc]
    """Choose ``alpha`` by cross-validation along warm-started regularization paths, then fit
    the estimator at that ``alpha`` on all the data (scikit-learn's ``LogisticRegressionCV``,
    ``LassoCV`` and ``RidgeCV`` for any sqnopt estimator and penalty).

    Parameters
    ----------
    estimator : sqnopt estimator, default=None
        The model whose ``alpha`` is chosen (``SQNClassifier()`` when None); its other
        parameters are kept.
    alphas : array-like or None, default=None
        The grid; None: :func:`alpha_grid` (``n_alphas``, ``eps``) computed on all the data,
        the same for every fold.
    n_alphas : int, default=20
    eps : float or None, default=None
        See :func:`alpha_grid`.
    cv : int, cross-validation generator or iterable, default=5
        scikit-learn's ``cv`` (stratified folds for a classifier).
    scoring : str, callable or None, default=None
        scikit-learn's ``scoring``; None: the estimator's ``score`` (accuracy, R^2).

    Attributes
    ----------
    alphas_ : ndarray
        The grid, decreasing.
    cv_scores_ : ndarray of shape (n_folds, n_alphas)
        The score of each fold's model at each alpha.
    alpha_ : float
        The alpha of the best mean score (the largest such alpha on ties: the simplest model).
    best_estimator_ : estimator
        The estimator fit at ``alpha_`` on all the data; ``coef_``, ``intercept_``,
        ``classes_`` and ``n_features_in_`` are its.
    path_seconds_ : float
        Wall time of the folds' paths.
    """

    def __init__(self, estimator: Any = None, *, alphas: ArrayLike | None = None,
                 n_alphas: int = 20, eps: float | None = None, cv: Any = 5,
                 scoring: Any = None) -> None:
        self.estimator = estimator
        self.alphas = alphas
        self.n_alphas = n_alphas
        self.eps = eps
        self.cv = cv
        self.scoring = scoring

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        inner = self.estimator if self.estimator is not None else _default_estimator()
        inner_tags = inner.__sklearn_tags__()
        tags.estimator_type = inner_tags.estimator_type
        tags.classifier_tags = inner_tags.classifier_tags
        tags.regressor_tags = inner_tags.regressor_tags
        tags.input_tags.sparse = inner_tags.input_tags.sparse
        return tags

    @one_blas_thread
    def fit(self, X: Any, y: ArrayLike, sample_weight: ArrayLike | None = None) -> PathCV:
        """Score each fold's path on its held-out rows, pick ``alpha_``, refit on all rows."""
        est = self.estimator if self.estimator is not None else _default_estimator()
        X, y = indexable(X, y)
        sw = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        grid = _prepared_alphas(est, X, y, self.alphas, self.n_alphas, self.eps, sw)
        cv = check_cv(self.cv, y, classifier=is_classifier(est))
        scorer = check_scoring(est, scoring=self.scoring)
        yy = np.asarray(y)
        # the estimator's own score (R^2) on held-out rows validated once per fold rather than
        # at every alpha: the same values
        own = self.scoring is None and hasattr(est, "_score_checked")
        scores: list[list[float]] = []
        tic = time.perf_counter()
        for train, test in cv.split(X, yy):
            Xtr, Xte = _safe_indexing(X, train), _safe_indexing(X, test)
            row = []
            checked = None
            for _, fitted, _ in _walk(est, Xtr, yy[train], grid,
                                      None if sw is None else sw[train]):
                kw = {} if sw is None else {"sample_weight": sw[test]}
                if own:
                    if checked is None:
                        checked = fitted._checked_rows(Xte)
                    row.append(float(fitted._score_checked(checked, yy[test], **kw)))
                else:
                    row.append(float(scorer(fitted, Xte, yy[test], **kw)))
            scores.append(row)
        self.path_seconds_ = time.perf_counter() - tic
        self.alphas_ = grid
        self.cv_scores_ = np.asarray(scores)
        mean = self.cv_scores_.mean(axis=0)
        best = int(np.flatnonzero(mean == np.nanmax(mean))[0])
        self.alpha_ = float(grid[best])
        final = clone(est).set_params(alpha=self.alpha_, warm_start=False)
        self.best_estimator_ = (final.fit(X, y) if sw is None
                                else final.fit(X, y, sample_weight=sw))
        return self

    # ---- the fitted model's attributes and methods, from best_estimator_
    @property
    def coef_(self) -> Any:
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.coef_

    @property
    def intercept_(self) -> Any:
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.intercept_

    @property
    def classes_(self) -> Any:
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.classes_

    @property
    def n_features_in_(self) -> int:
        check_is_fitted(self, "best_estimator_")
        return int(self.best_estimator_.n_features_in_)

    def predict(self, X: Any) -> Any:
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict(X)

    @available_if(_best_has("predict_proba"))  # type: ignore[untyped-decorator]
    def predict_proba(self, X: Any) -> Any:
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict_proba(X)

    @available_if(_best_has("predict_log_proba"))  # type: ignore[untyped-decorator]
    def predict_log_proba(self, X: Any) -> Any:
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict_log_proba(X)

    @available_if(_best_has("decision_function"))  # type: ignore[untyped-decorator]
    def decision_function(self, X: Any) -> Any:
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.decision_function(X)

    def score(self, X: Any, y: ArrayLike, sample_weight: ArrayLike | None = None) -> float:
        check_is_fitted(self, "best_estimator_")
        return float(self.best_estimator_.score(X, y, sample_weight=sample_weight))
