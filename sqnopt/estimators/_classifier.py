"""``SQNClassifier``: linear classification with any registered sqnopt components."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator
from sklearn.linear_model._base import LinearClassifierMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from sqnopt.data import check_sparse_structure
from sqnopt.model import LinearModel
from sqnopt.solver import History
from sqnopt.training import DEFAULT_CURVATURE, PROBABILISTIC_LOSSES, Trainer

FloatArray = NDArray[np.float64]

__all__ = ["SQNClassifier"]


def _loss_name(loss: Any) -> str | None:
    if isinstance(loss, str):
        return loss.lower()
    if isinstance(loss, tuple) and loss and isinstance(loss[0], str):
        return loss[0].lower()
    return getattr(loss, "name", None)


def _probabilistic(est: SQNClassifier) -> bool:
    """``predict_proba`` exists only for log-likelihood losses."""
    if hasattr(est, "coef_") and hasattr(est, "_trainer"):
        return bool(est._trainer.model_.probabilistic)
    name = _loss_name(est.loss)
    if name is None:
        return False
    from sqnopt.registry import UnknownComponentError, get_registry

    try:
        canonical = get_registry().get("objective", name).name
    except UnknownComponentError:
        canonical = name
    return canonical in PROBABILISTIC_LOSSES


def _check_structure(X: Any) -> None:
    """A sparse matrix's index structure, checked before scikit-learn converts it, casts it
    (SciPy's ``astype`` sums duplicates in compiled code) or multiplies with it: compiled SciPy
    code trusts the indices (see :func:`sqnopt.data.check_sparse_structure`)."""
    check_sparse_structure(X)


class SQNClassifier(LinearClassifierMixin, BaseEstimator):  # type: ignore[misc]
    r"""Linear classifier trained by stochastic quasi-Newton or first-order methods.

    Minimises ``F(w) = alpha/2 ||w||^2 + sum_i c_i loss(y_i, w.x_i + b) / sum_i c_i`` with a
    :class:`sqnopt.Solver` built from the given components. Binary labels: one solve;
    multiclass labels: one multiclass solve (softmax) when ``loss="logloss"`` and a ``"softmax"``
    objective is registered, else one-vs-rest (always for hinge-type losses). Dense or sparse
    (CSR) input, float32 or float64.

    Parameters
    ----------
    loss : str, (name, params) or Objective, default="logloss"
        Registered objective: ``"logloss"`` (logistic regression; gives ``predict_proba``),
        ``"squared_hinge"``, ``"hinge"`` (SVMs), or one added by a plugin.
    alpha : float, default=1e-4
        L2 regularisation ``lambda`` (the objective's ``lam``).
    curvature : str, (name, params) or CurvatureModel, default="identity"
        Search-direction model: ``"identity"`` (SGD), ``"lbfgs"`` (oLBFGS), ``"full_bfgs"``
        (oBFGS), ``"regularized_bfgs"`` (RES), ``"adagrad"``, ``"quadratic_bound"`` (SQB, with
        ``loss="binary_logistic"`` or a multiclass ``"softmax"``), and whatever plugins
        register. ``sqnopt list`` shows them.
    schedule : "auto", str, (name, params) or BatchSchedule, default="auto"
        Minibatch sizes (``("fixed", {"size": 20})``, ``("linear", {"gamma": 2.0})``, ...).
        ``"auto"`` is the curvature model's ``auto_schedule`` if it declares one (SQB:
        gradient batches growing geometrically from 100 by 1.5x per iteration, bound batches of
        1000, and -- for ``curvature="quadratic_bound"`` named without parameters -- the CG inner
        solver, the model's ``auto_params``), else ``Fixed()`` (batches of 5).
    step : "auto", str, (name, params) or StepRule, default="auto"
        Step sizes. ``"auto"`` is ``Decaying(eps0=1/L, T0=n/b)`` with ``L`` a bound on the
        minibatch-gradient Lipschitz constant computed from the data, so features need no
        rescaling to be stable (see :func:`sqnopt.training.auto_step`); a curvature model with
        scale-free directions may declare its own (AdaGrad: ``Constant(1.0)``).
    projection : str, (name, params), Projection or None, default=None
        Constraint applied after each step (e.g. ``"l2ball"``).
    fit_intercept : bool, default=True
        Fit an unregularised intercept.
    average : bool or int, default=False
        Polyak-Ruppert averaging (``True``, or average from that iteration on).
    sampling : {"uniform", "shuffle", "subset", "weighted"}, default="uniform"
        Minibatch sampling. ``"subset"`` draws each batch as distinct samples, as SQB's
        convergence theory assumes for its growing batches. ``"weighted"`` draws
        samples with probability proportional to their (class) weights instead of weighting
        their losses (paper 003, Sec. 5.3).
    multiclass : {"auto", "ovr", "multinomial"}, default="auto"
        Strategy for more than two classes (see above).
    class_weight : dict, "balanced" or None, default=None
        Weights per class, multiplying ``sample_weight``. ``"balanced"`` uses
        ``n_samples / (n_classes * np.bincount(y))``; in ``partial_fit`` the counts are those
        of all batches seen so far.
    max_iter : int, default=20
        Maximum passes over the training data (epochs) in ``fit``, as in ``SGDClassifier``.
    tol : float or None, default=1e-4
        Stop when the training objective has not decreased by ``tol`` for
        ``n_iter_no_change`` consecutive passes; ``None`` always makes ``max_iter`` passes.
    n_iter_no_change : int, default=5
    random_state : int, RandomState, Generator or None, default=None
        Seeds the minibatch sampling.
    history_every : int or None, default=None
        Record the training objective every this many solver iterations; ``None`` records it
        after every pass.
    verbose : int, default=0
        ``1``: a progress bar on stderr for runs longer than ~1 s (only on a terminal).
    warm_start : bool, default=False
        ``fit`` starts from the previous coefficients. (``partial_fit`` always continues the
        complete solver state.)
    callback : callable or None, default=None
        Solver callback ``f(info) -> bool | None`` called at report points.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
    intercept_ : ndarray of shape (1,) or (n_classes,)
    classes_ : ndarray of shape (n_classes,)
    n_iter_ : int
        Passes made by the last ``fit`` (max over one-vs-rest problems), 1 after ``partial_fit``.
    t_ : int
        Solver iterations (minibatch steps) so far.
    history_ : History or list of History
        Training objective vs iterations / samples processed / time, per solve (a list for
        one-vs-rest, one entry per class).
    n_features_in_, feature_names_in_
        As in scikit-learn.

    Notes
    -----
    ``partial_fit`` makes one pass over each batch and keeps the whole solver state across
    calls (iterate, curvature memory, iteration counter and hence step and batch sizes, random
    stream); batches whose weights are all zero are ignored. Pickling keeps the fitted model
    and, for a later ``partial_fit``, the iterate, counters and random stream, but not the
    compiled curvature memory: after unpickling, ``partial_fit`` relearns it from scratch.
    """

    def __init__(
        self,
        loss: Any = "logloss",
        *,
        alpha: float = 1e-4,
        curvature: Any = DEFAULT_CURVATURE,
        schedule: Any = "auto",
        step: Any = "auto",
        projection: Any = None,
        fit_intercept: bool = True,
        average: bool | int = False,
        sampling: Literal["uniform", "shuffle", "subset", "weighted"] = "uniform",
        multiclass: Literal["auto", "ovr", "multinomial"] = "auto",
        class_weight: Mapping[Any, float] | str | None = None,
        max_iter: int = 20,
        tol: float | None = 1e-4,
        n_iter_no_change: int = 5,
        random_state: Any = None,
        history_every: int | None = None,
        verbose: int = 0,
        warm_start: bool = False,
        callback: Any = None,
    ) -> None:
        self.loss = loss
        self.alpha = alpha
        self.curvature = curvature
        self.schedule = schedule
        self.step = step
        self.projection = projection
        self.fit_intercept = fit_intercept
        self.average = average
        self.sampling = sampling
        self.multiclass = multiclass
        self.class_weight = class_weight
        self.max_iter = max_iter
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.random_state = random_state
        self.history_every = history_every
        self.verbose = verbose
        self.warm_start = warm_start
        self.callback = callback

    # ------------------------------------------------------------------ training
    def _trainer_params(self) -> dict[str, Any]:
        return dict(loss=self.loss, alpha=self.alpha, curvature=self.curvature,
                    schedule=self.schedule, step=self.step, projection=self.projection,
                    fit_intercept=self.fit_intercept, average=self.average,
                    sampling=self.sampling, multiclass=self.multiclass,
                    class_weight=self.class_weight, max_epochs=self.max_iter, tol=self.tol,
                    n_iter_no_change=self.n_iter_no_change, random_state=self.random_state,
                    history_every=self.history_every, verbose=self.verbose,
                    callback=self.callback, warm_start=self.warm_start)

    def _get_trainer(self, *, keep: bool) -> Trainer:
        trainer: Trainer | None = getattr(self, "_trainer", None)
        if trainer is None or not keep:
            trainer = Trainer(**self._trainer_params())
        else:
            for key, value in self._trainer_params().items():
                setattr(trainer, key, value)
        self._trainer = trainer
        return trainer

    def fit(self, X: Any, y: ArrayLike, sample_weight: ArrayLike | None = None) -> SQNClassifier:
        """Fit on ``(X, y)``: up to ``max_iter`` passes with early stopping on ``tol``."""
        _check_structure(X)
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=[np.float64, np.float32],
                             order="C")
        check_classification_targets(y)
        trainer = self._get_trainer(keep=bool(self.warm_start))
        trainer.fit(X, y, sample_weight)
        self._set_fitted(trainer)
        return self

    def partial_fit(self, X: Any, y: ArrayLike, classes: ArrayLike | None = None,
                    sample_weight: ArrayLike | None = None) -> SQNClassifier:
        """One pass over the batch ``(X, y)``, continuing the whole solver state.

        ``classes`` must list every label on the first call (unless ``fit`` was called before).
        Batches whose sample weights (times class weights) are all zero are ignored.
        """
        first = getattr(self, "_trainer", None) is None
        _check_structure(X)
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=[np.float64, np.float32],
                             order="C", reset=first)
        check_classification_targets(y)
        trainer = self._get_trainer(keep=True)
        model = trainer.partial_fit(X, y, sample_weight, classes=classes)
        self.classes_ = trainer.classes_
        if model is not None:
            self._set_fitted(trainer)
        return self

    def _set_fitted(self, trainer: Trainer) -> None:
        model = trainer.model_
        self.coef_ = model.coef.copy()
        self.intercept_ = model.intercept.copy()
        self.classes_ = model.classes
        self.n_iter_ = int(trainer.n_iter_)
        self.t_ = int(trainer.t_)
        hs = trainer.histories_
        self.history_: History | list[History] = hs[0] if len(hs) == 1 else list(hs)

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "coef_")

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    # ------------------------------------------------------------------ prediction
    def to_model(self) -> LinearModel:
        """The fitted classifier as a :class:`sqnopt.model.LinearModel` (saveable without
        pickle, usable without scikit-learn)."""
        check_is_fitted(self)
        base = self._trainer.model_
        return LinearModel(coef=self.coef_, intercept=self.intercept_, classes=self.classes_,
                           strategy=base.strategy, loss=base.loss,
                           probabilistic=base.probabilistic, info=dict(base.info))

    def decision_function(self, X: Any) -> FloatArray:
        """Scores ``X @ coef_.T + intercept_``: shape ``(n,)`` for two classes, else
        ``(n, n_classes)``. (``predict``, ``predict_proba`` and ``score`` go through here.)"""
        _check_structure(X)
        scores: FloatArray = super().decision_function(X)
        return scores

    @available_if(_probabilistic)  # type: ignore[untyped-decorator]
    def predict_log_proba(self, X: Any) -> FloatArray:
        """Log of :meth:`predict_proba`, computed in the log domain."""
        scores = self.decision_function(X)
        return self.to_model().log_proba_of_scores(np.asarray(scores, dtype=np.float64))

    @available_if(_probabilistic)  # type: ignore[untyped-decorator]
    def predict_proba(self, X: Any) -> FloatArray:
        """Class probabilities (log-likelihood losses): sigmoid for binary problems, softmax for
        multinomial ones, normalised per-class sigmoids for one-vs-rest."""
        proba: FloatArray = np.exp(self.predict_log_proba(X))
        return proba

