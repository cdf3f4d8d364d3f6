"""``SQNRegressor``: linear regression (squared error, Huber, Poisson) with sqnopt's solvers."""

from __future__ import annotations

import math
import warnings
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.metrics import r2_score
from sklearn.utils.validation import check_is_fitted, validate_data

from sqnopt.estimators._classifier import (
    _check_structure,
    _fit_on_stream,
    _fit_path,
    _is_stream,
    _reemit,
)
from sqnopt.estimators._composite import (
    CompositeFit,
    clear_driver_attributes,
    fit_composite,
    resolve_estimator_penalty,
    set_stochastic_penalty,
    stochastic_penalty,
)
from sqnopt.estimators._exact import EXACT_PATH, EXACT_REASON, exact_ridge
from sqnopt.estimators._validation import fast_regression_data
from sqnopt.interfaces import Objective
from sqnopt.model import LinearModel
from sqnopt.solver import History
from sqnopt.training import DEFAULT_CURVATURE, ConvergenceWarning, Trainer

FloatArray = NDArray[np.float64]

__all__ = ["SQNRegressor"]

#: The losses of ``SQNRegressor`` by name (any registered objective whose ``label_kind`` is
#: ``"regression"`` is accepted too).
REGRESSION_LOSSES = ("squared_error", "huber", "poisson")


class SQNRegressor(RegressorMixin, BaseEstimator):  # type: ignore[misc]
    r"""Linear regression trained by sqnopt's quasi-Newton, Newton and first-order methods.

    Minimises ``F(w) = alpha/2 ||w||^2 + sum_i c_i loss(w.x_i + b, y_i) / sum_i c_i`` with the
    machinery of :class:`SQNClassifier` (the same :class:`~sqnopt.training.Trainer`, recipes,
    budgets and warnings): a mean loss plus half ``alpha`` times the squared norm, the
    intercept unregularised. Dense or sparse (CSR) input, float32 or float64.

    Parameters
    ----------
    loss : {"squared_error", "huber", "poisson"}, (name, params) or Objective, default="squared_error"
        ``"squared_error"``: ``(s - y)^2 / 2`` (ridge regression: the optimum is
        scikit-learn's ``Ridge(alpha=alpha * sum(sample_weight))``, ``alpha * n_samples``
        without weights); ``"huber"``: Huber's loss with threshold ``epsilon`` on the residual
        at a fixed scale of 1 (``r^2/2`` inside, ``epsilon |r| - epsilon^2/2`` beyond);
        ``"poisson"``: ``exp(s) - y s``, Poisson regression with the log link for targets
        ``y >= 0`` (the optimum is scikit-learn's ``PoissonRegressor(alpha=alpha)``;
        :meth:`predict` returns ``exp(s)``). Any registered objective of real targets
        (``label_kind = "regression"``) may be named.
    epsilon : float, default=1.35
        The Huber threshold (used by ``loss="huber"`` only), scikit-learn's default.
    alpha : float, default=1e-4
        L2 regularisation ``lambda`` of the mean loss (the objective's ``lam``), on
        :class:`SQNClassifier`'s (and ``SGDRegressor``'s) scale. Small but positive: it keeps
        the objective strongly convex, which lets ``curvature="auto"`` choose Newton's method
        on data of few features; ``alpha=0`` is allowed (least squares, Huber or Poisson
        without a penalty), where ``"auto"`` uses L-BFGS. With ``penalty="l1"`` or
        ``"elasticnet"``: the ``alpha`` of that penalty.
    penalty : {"l2", "l1", "elasticnet"}, default="l2"
        ``"l1"``: ``alpha ||w||_1`` (with squared error scikit-learn's ``Lasso(alpha)``),
        ``"elasticnet"``: ``alpha (l1_ratio ||w||_1 + (1 - l1_ratio)/2 ||w||^2)``
        (scikit-learn's ``ElasticNet(alpha, l1_ratio)``); sparse ``coef_`` with exact zeros,
        solved full batch as for :class:`SQNClassifier` (``curvature`` ``"auto"``,
        ``"newglmnet"`` or ``"owlqn"``); on a stream and in ``partial_fit`` by FTRL-Proximal
        AdaGrad, as for :class:`SQNClassifier`.
    l1_ratio : float or None, default=None
        The L1 share of ``penalty="elasticnet"`` (required there, in ``[0, 1]``).
    curvature, gradient, schedule, step, projection, fit_intercept, average, sampling
        As for :class:`SQNClassifier`. ``curvature="auto"`` takes the same decision: Newton
        with the exact Hessian (``X' D X / N + alpha I``, ``D`` the loss's second derivatives:
        1 for squared error, 1 or 0 for Huber, ``exp(s)`` for Poisson) when it is cheap,
        truncated Newton on wide sparse data, L-BFGS preconditioned by the bound ``X'X/N +
        alpha I`` for squared error and Huber (curvature at most 1; Poisson's is unbounded),
        else L-BFGS; each solves the training objective to ``tol`` on the whole data set.
        Squared error is quadratic (one Newton step solves it): Newton wherever its Hessian,
        formed once, is affordable, else one run of preconditioned conjugate gradients on the
        objective until the gradient meets ``tol`` (:func:`sqnopt.recipes.quadratic_cg`).
    max_iter, tol, n_iter_no_change, early_stopping, validation_fraction, random_state,
    history_every, verbose, warm_start, callback, n_jobs, parameter_mixing
        As for :class:`SQNClassifier`: ``tol`` bounds the largest absolute entry of the
        gradient of the training objective (whose scale is that of the targets).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    n_iter_, converged_, t_, history_, fit_path_, fit_path_reason_, n_features_in_,
    feature_names_in_
        As for :class:`SQNClassifier`.

    Notes
    -----
    ``score`` is the coefficient of determination R^2 of the predictions (scikit-learn's
    ``RegressorMixin``), for Poisson of ``exp(s)``. ``partial_fit`` makes one pass over each
    batch and continues the whole solver state, as the classifier's does (at
    ``curvature="auto"``, the large-data recipe); ``fit`` also takes a stream of data larger
    than memory (:meth:`fit`). A target of a Poisson fit below 0 is refused
    with an error naming it; a Poisson run whose scores would overflow ``exp``
    (``s > log(DBL_MAX)``) gets an infinite objective, which the line searches reject and
    which stops a stochastic run as diverged.
    """

    #: the fit's trainer (the stochastic driver's), or a composite fit's record
    _trainer: Trainer | CompositeFit

    def __init__(
        self,
        loss: Any = "squared_error",
        *,
        epsilon: float = 1.35,
        alpha: float = 1e-4,
        penalty: Literal["l2", "l1", "elasticnet"] = "l2",
        l1_ratio: float | None = None,
        curvature: Any = DEFAULT_CURVATURE,
        gradient: Any = "auto",
        schedule: Any = "auto",
        step: Any = "auto",
        projection: Any = None,
        fit_intercept: bool | Literal["regularized"] = True,
        average: bool | int = False,
        sampling: Literal["auto", "uniform", "shuffle", "subset", "weighted"] = "auto",
        max_iter: int = 1000,
        tol: float | None = 1e-5,
        n_iter_no_change: int = 5,
        random_state: Any = None,
        history_every: int | None = None,
        verbose: int = 0,
        warm_start: bool = False,
        callback: Any = None,
        early_stopping: bool | Literal["auto"] = "auto",
        validation_fraction: float = 0.1,
        n_jobs: int | None = None,
        parameter_mixing: bool = True,
    ) -> None:
        self.loss = loss
        self.epsilon = epsilon
        self.alpha = alpha
        self.penalty = penalty
        self.l1_ratio = l1_ratio
        self.curvature = curvature
        self.gradient = gradient
        self.schedule = schedule
        self.step = step
        self.projection = projection
        self.fit_intercept = fit_intercept
        self.average = average
        self.sampling = sampling
        self.max_iter = max_iter
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.random_state = random_state
        self.history_every = history_every
        self.verbose = verbose
        self.warm_start = warm_start
        self.callback = callback
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_jobs = n_jobs
        self.parameter_mixing = parameter_mixing

    # ------------------------------------------------------------------ training
    def _loss_spec(self) -> Any:
        """The objective to fit: ``"huber"`` with this estimator's ``epsilon``; a loss whose
        objective fits classes is refused."""
        loss = self.loss
        if isinstance(loss, str) and loss == "huber":
            e = self.epsilon
            if not (isinstance(e, (int, float, np.number)) and not isinstance(e, bool)
                    and math.isfinite(e) and e > 0):
                raise ValueError(f"epsilon must be a finite number > 0, got {e!r}")
            return ("huber", {"epsilon": float(e)})
        from sqnopt.solver._solver import resolve_component

        try:
            objective = (loss if isinstance(loss, Objective)
                         else resolve_component("objective", loss, Objective))
        except KeyError as exc:
            raise ValueError(f"loss {loss!r} is not a registered objective; SQNRegressor "
                             f"takes {', '.join(map(repr, REGRESSION_LOSSES))} or an "
                             "objective of real targets") from exc
        if objective.label_kind != "regression":
            raise ValueError(f"loss {objective.describe()} fits classes (label_kind="
                             f"{objective.label_kind!r}); SQNRegressor takes "
                             f"{', '.join(map(repr, REGRESSION_LOSSES))} (SQNClassifier "
                             "takes classification losses)")
        return loss

    def _trainer_params(self) -> dict[str, Any]:
        return dict(loss=self._loss_spec(), alpha=self.alpha, curvature=self.curvature,
                    gradient=self.gradient, schedule=self.schedule, step=self.step,
                    projection=self.projection, fit_intercept=self.fit_intercept,
                    average=self.average, sampling=self.sampling, class_weight=None,
                    max_epochs=self.max_iter, tol=self.tol,
                    n_iter_no_change=self.n_iter_no_change, random_state=self.random_state,
                    history_every=self.history_every, verbose=self.verbose,
                    callback=self.callback, warm_start=self.warm_start,
                    early_stopping=self.early_stopping,
                    validation_fraction=self.validation_fraction, n_jobs=self.n_jobs,
                    parameter_mixing=self.parameter_mixing)

    def _get_trainer(self, *, keep: bool) -> Trainer:
        trainer: Trainer | None = getattr(self, "_trainer", None)
        if not isinstance(trainer, Trainer) or not keep:
            trainer = Trainer(**self._trainer_params())
        else:
            for key, value in self._trainer_params().items():
                setattr(trainer, key, value)
        self._trainer = trainer
        return trainer

    def _validate(self, X: Any, y: Any, reset: bool) -> tuple[Any, Any]:
        """Shapes, types and feature names by scikit-learn (the common case of a first fit on
        plain arrays decided by :func:`~sqnopt.estimators._validation.fast_regression_data`,
        with scikit-learn's result and effects, without its generic dispatch on input types
        that is most of a small fit's validation time); the values of ``X`` are checked by
        the data layer (:func:`sqnopt.data.check_matrix`), whose one pass finds NaN and
        infinity (naming the first) and squares that overflow -- a second pass here would only
        repeat the first half of it."""
        _check_structure(X)
        if reset:
            checked = fast_regression_data(self, X, y)  # the common case (arrays, CSR)
            if checked is not None:
                return checked
        Xv, yv = validate_data(self, X, y, accept_sparse="csr",
                               dtype=[np.float64, np.float32], order="C", y_numeric=True,
                               reset=reset, ensure_all_finite=False)
        return Xv, yv

    def fit(self, X: Any, y: ArrayLike | None = None,
            sample_weight: ArrayLike | None = None) -> SQNRegressor:
        """Fit on ``(X, y)``: up to ``max_iter`` passes, ending once the gradient is below
        ``tol``.

        ``X`` may also be a stream of real-valued targets (:class:`sqnopt.datasets.ChunkStream`
        made with ``label_kind="regression"``, e.g. ``stream_svmlight(path,
        label_kind="regression")``) of data larger than memory, with ``y=None``: the fit reads
        it pass after pass with memory bounded by its chunks, by the large-data recipe at
        ``curvature="auto"`` (:meth:`sqnopt.training.Trainer.fit_stream`: the step race, then
        passes until the regression loss on held-out rows stops improving)."""
        if _is_stream(X):
            if y is not None or sample_weight is not None:
                raise ValueError("fit on a stream takes the targets from the stream: pass "
                                 "y=None and no sample_weight")
            return self._fit_stream(X)
        if y is None:
            raise ValueError("requires y to be passed, but the target y is None (or pass a "
                             "stream of (X, y) chunks as X)")
        X, y = self._validate(X, y, reset=True)
        penalty = resolve_estimator_penalty(self)
        if penalty is not None:
            from sklearn.utils.validation import _check_sample_weight

            weights = _check_sample_weight(sample_weight, X, dtype=np.float64)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", ConvergenceWarning)
                fit = fit_composite(self, penalty, X, np.asarray(y, dtype=np.float64), weights,
                                    loss=self._loss_spec(), classes=None)
            _reemit(caught)
            clear_driver_attributes(self)
            self._trainer = fit
            self.converged_ = bool(fit.converged_)
            self.coef_ = fit.model_.coef[0].copy()
            self.intercept_ = float(fit.model_.intercept[0])
            self.n_iter_ = int(fit.n_iter_)
            self.fit_path_ = str(fit.model_.info["method"])
            self.fit_path_reason_ = f"penalty={self.penalty!r}: a composite solve"
            return self
        exact = exact_ridge(self, X, y, sample_weight)
        if exact is not None:               # ridge's one Newton step, without the driver
            clear_driver_attributes(self)
            self._trainer = exact
            self.converged_ = exact.converged_
            self.coef_ = exact.model_.coef[0].copy()
            self.intercept_ = float(exact.model_.intercept[0])
            self.n_iter_ = exact.n_iter_
            self.fit_path_, self.fit_path_reason_ = EXACT_PATH, EXACT_REASON
            return self
        trainer = self._get_trainer(keep=bool(self.warm_start))
        trainer.penalty = None              # a previous stream / partial_fit's L1 stays there
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            trainer.fit(X, y, sample_weight)
        _reemit(caught)
        self._set_fitted(trainer)
        return self

    def _fit_stream(self, stream: Any) -> SQNRegressor:
        fitted: SQNRegressor = _fit_on_stream(self, stream)
        return fitted

    def partial_fit(self, X: Any, y: ArrayLike,
                    sample_weight: ArrayLike | None = None) -> SQNRegressor:
        """One pass over the batch ``(X, y)``, continuing the whole solver state. Batches whose
        sample weights are all zero are ignored."""
        penalty = stochastic_penalty(self, "in partial_fit")
        if isinstance(getattr(self, "_trainer", None), CompositeFit):
            del self._trainer                   # the stochastic state starts afresh
        first = getattr(self, "_trainer", None) is None
        X, y = self._validate(X, y, reset=first)
        trainer = self._get_trainer(keep=True)
        set_stochastic_penalty(self, trainer, penalty, first)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            model = trainer.partial_fit(X, y, sample_weight)
        _reemit(caught)
        if model is not None:
            self._set_fitted(trainer)
        return self

    def _set_fitted(self, trainer: Trainer) -> None:
        if hasattr(trainer, "converged_"):
            self.converged_ = bool(trainer.converged_)
        model = trainer.model_
        self.coef_ = model.coef[0].copy()
        self.intercept_ = float(model.intercept[0])
        self.n_iter_ = int(trainer.n_iter_)
        self.t_ = int(trainer.t_)
        self.history_: History = trainer.histories_[0]
        self.fit_path_, self.fit_path_reason_ = _fit_path(trainer.results_)
        for name in ("validation_loss_", "steps_"):
            if hasattr(trainer, name):
                setattr(self, name, getattr(trainer, name))

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "coef_")

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        if isinstance(self.loss, str) and self.loss == "poisson":
            tags.target_tags.positive_only = True
        return tags

    # ------------------------------------------------------------------ prediction
    def to_model(self) -> LinearModel:
        """The fitted regressor as a :class:`sqnopt.model.LinearModel` (saveable without
        pickle, usable without scikit-learn; its ``predict`` is this estimator's)."""
        check_is_fitted(self)
        base = self._trainer.model_
        return LinearModel(coef=self.coef_[None, :], intercept=np.array([self.intercept_]),
                           classes=np.empty(0), strategy="regression", loss=base.loss,
                           probabilistic=base.probabilistic, info=dict(base.info),
                           link=base.link)

    def _scores(self, X: Any) -> FloatArray:
        """The linear scores ``X @ coef_ + intercept_`` (the predictions before the inverse
        link: for Poisson, their logarithms). Private: scikit-learn's regressors have no
        ``decision_function``."""
        check_is_fitted(self)
        _check_structure(X)
        return self._linear_scores(self._checked_rows(X))

    def _checked_rows(self, X: Any) -> Any:
        """``X`` validated for prediction (CSR or a float array of ``n_features_in_`` columns)."""
        return validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32],
                             reset=False)

    def _linear_scores(self, Xv: Any) -> FloatArray:
        coef = np.asarray(self.coef_, dtype=np.float64)
        scores = (Xv @ coef) if sp.issparse(Xv) else np.asarray(Xv, dtype=np.float64) @ coef
        out: FloatArray = np.asarray(scores, dtype=np.float64).ravel() + self.intercept_
        return out

    def _predicted(self, scores: FloatArray) -> FloatArray:
        """The targets of the linear scores: themselves, or ``exp`` of them (log link)."""
        if self._trainer.model_.link == "log":
            with np.errstate(over="ignore"):
                out: FloatArray = np.exp(scores)
            return out
        return scores

    def _score_checked(self, Xv: Any, y: ArrayLike,
                       sample_weight: ArrayLike | None = None) -> float:
        """:meth:`score` on rows :meth:`_checked_rows` returned (the held-out rows of a
        :class:`~sqnopt.estimators.PathCV` fold, scored at every alpha: validated once); the
        same value."""
        check_is_fitted(self)
        return float(r2_score(y, self._predicted(self._linear_scores(Xv)),
                              sample_weight=sample_weight))

    def predict(self, X: Any) -> FloatArray:
        """Predicted targets: the scores, or ``exp`` of them for Poisson (log link)."""
        return self._predicted(self._scores(X))

