"""``SQNClassifier``: linear classification with any registered sqnopt components."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning
from sklearn.linear_model._base import LinearClassifierMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from sqnopt._jobs import pass_threads
from sqnopt.data import check_sparse_structure
from sqnopt.data._rows import csr_scores
from sqnopt.estimators._composite import (
    CompositeFit,
    class_weighted,
    clear_driver_attributes,
    fit_composite,
    resolve_estimator_penalty,
    set_stochastic_penalty,
    stochastic_penalty,
)
from sqnopt.estimators._validation import check_frame_columns, fast_fit_data
from sqnopt.interfaces import PROBABILISTIC, Objective
from sqnopt.model import LinearModel
from sqnopt.solver import History, SolveResult
from sqnopt.training import DEFAULT_CURVATURE, ConvergenceWarning, Trainer

FloatArray = NDArray[np.float64]

__all__ = ["SQNClassifier", "SQNConvergenceWarning"]


class SQNConvergenceWarning(SklearnConvergenceWarning, ConvergenceWarning):  # type: ignore[misc]
    """sqnopt's :class:`~sqnopt.training.ConvergenceWarning` as the estimators raise it: also a
    scikit-learn ``ConvergenceWarning``, so the usual filters for either apply."""


def _probabilistic(est: SQNClassifier) -> bool:
    """``predict_proba`` exists for objectives that declare the ``probabilistic`` capability
    (negative log-likelihoods)."""
    if hasattr(est, "coef_") and hasattr(est, "_trainer"):
        return bool(est._trainer.model_.probabilistic)
    from sqnopt.solver._solver import resolve_component

    try:
        objective = resolve_component("objective", est.loss, Objective)
    except (KeyError, TypeError, ValueError):
        return False
    return PROBABILISTIC in objective.capabilities


def _check_structure(X: Any) -> None:
    """A sparse matrix's index structure, checked before scikit-learn converts it, casts it
    (SciPy's ``astype`` sums duplicates in compiled code) or multiplies with it: compiled SciPy
    code trusts the indices (see :func:`sqnopt.data.check_sparse_structure`); a data frame's
    categorical columns, named with the fix (:func:`check_frame_columns`)."""
    check_sparse_structure(X)
    check_frame_columns(X)


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
        Regularisation strength: the L2 term's ``lambda`` (the objective's ``lam``) for
        ``penalty="l2"``, else the ``alpha`` of the penalty below.
    penalty : {"l2", "l1", "elasticnet"}, default="l2"
        ``"l1"`` adds ``alpha ||w||_1`` instead of the L2 term, ``"elasticnet"``
        ``alpha (l1_ratio ||w||_1 + (1 - l1_ratio)/2 ||w||^2)`` (scikit-learn's
        parametrisation; the intercept is never penalised). Both give sparse ``coef_`` (exact
        zeros) and are solved full batch by :func:`sqnopt.composite.solve_composite`: with
        ``curvature="auto"`` by newGLMNET (proximal Newton, coordinate descent on the exact
        quadratic model) for binary margin losses, by OWL-QN (orthant-wise L-BFGS) for the
        multinomial loss; ``curvature="owlqn"`` or ``"newglmnet"`` names one. Other curvature
        models, gradient estimators, schedules, step rules, projections and averaging are
        refused with these penalties. On a stream (``fit(stream)``) and in ``partial_fit`` the
        large-data recipe fits them with FTRL-Proximal AdaGrad (exact zeros, ``O(nnz)`` per
        example: :func:`sqnopt.recipes.streaming`). scikit-learn's
        ``LogisticRegression(penalty="l1", C=C)`` is ``alpha = 1 / (C sum_i c_i)``
        (``1 / (C n_samples)`` without weights). See ``docs/penalties.md``.
    l1_ratio : float or None, default=None
        The L1 share of ``penalty="elasticnet"`` (required there, in ``[0, 1]``); unused
        otherwise.
    curvature : "auto", str, (name, params) or CurvatureModel, default="auto"
        Search-direction model. ``"auto"`` first decides the regime: on large data (at least
        ``sqnopt.recipes.LARGE_ROWS`` rows holding ``LARGE_NNZ`` stored values, a stream passed
        to ``fit``, and always in ``partial_fit``) it takes the large-data recipe of
        :func:`sqnopt.recipes.streaming` -- per-example AdaGrad in composite form, its step
        raced on the first examples, stopped on held-out rows (``early_stopping``) -- which
        aims at the best held-out loss per second rather than the training objective to
        ``tol``. In memory otherwise, ``"auto"`` picks ``"newton"`` (Newton's method with the exact
        Hessian, on the whole data set) for smooth losses with ``alpha > 0`` when a Hessian costs
        at most a few tens of passes (few parameters, rows with few entries), else
        ``"truncated_newton"`` (Newton-CG on the whole data set) for a binary loss on sparse
        rows of similar length with at least as many features as samples, else
        ``"bound_lbfgs"`` (L-BFGS preconditioned by Böhning's bound ``c X'X/N + alpha I``,
        formed once) where that bound costs at most a few tens of passes (many samples per
        feature: dense images), else ``"lbfgs"`` (limited-memory BFGS), and
        ``"identity"`` for the hinge (see :func:`sqnopt.recipes.default_curvature`);
        ``"newton_cg"`` (subsampled Newton-CG),
        ``"full_bfgs"`` (BFGS), ``"regularized_bfgs"`` (RES), ``"quadratic_bound"`` (SQB; a
        ``"logloss"`` is then solved in its log-linear form), ``"adagrad"``, ``"identity"``
        (SGD), and whatever plugins register. ``sqnopt list`` shows them.
    gradient : "auto", str, (name, params) or GradientEstimator, default="auto"
        The gradient the steps use: ``"minibatch"``, ``"svrg"``, ``"saga"`` (variance-reduced:
        linear convergence with constant steps), or ``"auto"``, the recipe's (SAGA for
        ``curvature="identity"`` on smooth losses, else the minibatch gradient).
    schedule, step : "auto", str, (name, params), BatchSchedule / StepRule, default="auto"
        Minibatch sizes and step sizes. ``"auto"`` is the recipe of :mod:`sqnopt.recipes` for
        the curvature model: secant models (BFGS family) take batches of distinct samples
        growing from 1000 by 2x per iteration to the whole data set with an Armijo line search
        on each (from then on the deterministic method); SQB its semistochastic batches with
        step 1; AdaGrad batches of 5 with a constant step from the feature scale; SGD batches
        of 5 with ``eps_t = 1/(L + alpha t)``, ``L`` the trace bound of the Hessian from the
        data (robust to outlier rows).
    projection : str, (name, params), Projection or None, default=None
        Constraint applied after each step (e.g. ``"l2ball"``).
    fit_intercept : bool or "regularized", default=True
        ``True``: an unregularised intercept; ``"regularized"``: a constant feature regularised
        with the weights (Pegasos' and LIBLINEAR's bias); ``False``: none.
    average : bool or int, default=False
        Polyak-Ruppert averaging (``True``, or average from that iteration on).
    sampling : {"auto", "uniform", "shuffle", "subset", "weighted"}, default="auto"
        Minibatch sampling; ``"auto"`` is the recipe's (``"subset"``, distinct samples per
        batch, for growing batches; else ``"uniform"``). ``"weighted"`` draws samples with
        probability proportional to their (class) weights instead of weighting their losses
        (Mokhtari & Ribeiro 2015, oLBFGS, Sec. 5.3).
    multiclass : {"auto", "ovr", "multinomial"}, default="auto"
        Strategy for more than two classes (see above).
    class_weight : dict, "balanced" or None, default=None
        Weights per class, multiplying ``sample_weight``. ``"balanced"`` uses
        ``n_samples / (n_classes * np.bincount(y))``; in ``partial_fit`` the counts are those
        of all batches seen so far.
    max_iter : int, default=1000
        Budget of ``fit`` in passes over the training data (gradient batches).
    tol : float or None, default=1e-5
        ``fit`` has converged once the largest absolute entry of the gradient of the training
        objective is at most ``tol`` -- the test of ``LogisticRegression(solver="lbfgs")`` on
        the same scale; the default ends within about 1e-4 relative excess of the optimum on
        the LIBSVM sets of the benchmarks. A fit that ends without it (``max_iter`` reached,
        or a stochastic recipe whose objective stalls for ``n_iter_no_change`` passes) warns
        with the gradient and objective it reached (:class:`SQNConvergenceWarning`, a
        scikit-learn ``ConvergenceWarning``). ``None`` tests no tolerance: ``max_iter``
        passes, unless a deterministic recipe reaches working precision first (its objective
        can decrease no further) or the run diverges; ``n_iter_`` counts the passes made.
    n_iter_no_change : int, default=5
        Passes without improvement (by ``tol``, relative) after which a stochastic recipe
        stops: of the held-out loss in the large-data regime, of the training objective
        otherwise.
    early_stopping : bool or "auto", default="auto"
        In the large-data regime, hold out ``validation_fraction`` of the rows (a seeded hash
        of their position picks them: the same rows on every pass, at most
        ``sqnopt.training._streaming.MAX_HELD_OUT``), stop once their loss has not improved by
        more than ``max(tol, 1e-3)`` (relative; ``HELD_OUT_TOL`` beside ``MAX_HELD_OUT``: a
        finer gain is below what the held-out loss knows of the loss on new data) for
        ``n_iter_no_change`` passes, and keep the iterate of the lowest held-out loss.
        ``False``: train on every row and stop on each pass's progressive loss (the loss of
        each example before its update) instead. ``"auto"`` is ``True``; the in-memory recipes
        solve the training objective to ``tol`` and ignore it.
    validation_fraction : float, default=0.1
        Share of the rows held out for ``early_stopping``.
    parameter_mixing : bool, default=True
        In the large-data regime, run each chunk's per-example updates as two shards from the
        same state, each on half the rows, then averaged (iterative parameter mixing; the
        shards at twice the raced step in the first pass, at the raced step after it;
        :mod:`sqnopt.training._mixing`) -- on two threads from ``n_jobs=2`` on, one after the
        other on one: the same model for every ``n_jobs``. ``False``: the sequential updates
        (one thread whatever ``n_jobs``).
    random_state : int, RandomState, Generator or None, default=None
        Seeds the minibatch sampling; with an L1 or elastic-net penalty, newGLMNET's sweep
        order (``None``: a fixed order).
    history_every : int or None, default=None
        Record the training objective every this many solver iterations; ``None`` records it
        after every pass of a stochastic recipe, and at the start and end of a deterministic
        one (whose iterations are few: ``1`` records each).
    verbose : int, default=0
        ``1``: a progress bar (tqdm) on stderr for runs longer than ~1 s: live on a terminal
        or in a notebook, a line every 30 s in a log. ``0``: silent.
    warm_start : bool, default=False
        ``fit`` starts from the previous coefficients. (``partial_fit`` always continues the
        complete solver state.)
    callback : callable or None, default=None
        Solver callback ``f(info) -> bool | None`` called at report points.
    n_jobs : int or None, default=None
        Threads for the compiled passes over the data (full-batch gradients, Hessian products
        and the Newton Hessian, the line search's score gathers, SVRG/SAGA snapshots): ``None``
        means 1 unless in a ``joblib.parallel_config(n_jobs=...)`` context, ``-1`` every core
        the process may use, ``-2`` all but one. Each pass splits its rows into blocks fixed
        by the data and adds their sums in block order, so ``coef_`` is the same, bit for bit,
        for every ``n_jobs``; small problems, whose passes do not pay for a thread, run on one.
        In the large-data regime (``parameter_mixing``) each chunk's two shards run on two
        threads from ``n_jobs=2`` on.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
    intercept_ : ndarray of shape (1,) or (n_classes,)
    classes_ : ndarray of shape (n_classes,)
    n_iter_ : int
        Passes made by the last ``fit`` (max over one-vs-rest problems), 1 after ``partial_fit``;
        never more than ``max_iter`` with ``tol=None``, fewer when the fit ended before it.
    converged_ : bool
        Whether the last ``fit`` met ``tol`` (every one-vs-rest problem).
    t_ : int
        Solver iterations (minibatch steps) so far.
    history_ : History or list of History
        Training objective vs iterations / samples processed / time, per solve (a list for
        one-vs-rest, one entry per class). The large-data regime records none unless
        ``history_every`` asks (each point is a pass over the data).
    validation_loss_ : list of list of float
        Large-data regime: the held-out loss after each pass (one value per sub-problem still
        training; with ``early_stopping=False`` the pass's progressive loss).
    steps_ : list of float
        Large-data regime and ``partial_fit``: the step each sub-problem's race chose (while
        ``partial_fit``'s race goes on, the step of its current leader).
    fit_path_ : str
        The loop the last ``fit`` / ``partial_fit`` ran (:attr:`sqnopt.SolveResult.path`:
        ``"adaptive"``, ``"lazy"``, ``"scaled"``, ``"generic"`` or ``"python"``; the
        sub-problems' paths joined by ``", "`` in the rare case they differ).
    fit_path_reason_ : str
        Why that loop, or why not a faster one (:attr:`sqnopt.SolveResult.path_reason`).
    n_features_in_, feature_names_in_
        As in scikit-learn.

    Notes
    -----
    ``partial_fit`` makes one pass over each batch and keeps the whole solver state across
    calls (iterate, curvature memory, iteration counter and hence step and batch sizes, random
    stream); batches whose weights are all zero are ignored. At ``curvature="auto"`` it runs
    the large-data recipe (never a full-batch method on one chunk): its step race goes on over
    the first calls, the model meanwhile being the candidate with the lowest progressive loss.
    Pickling keeps the fitted model and, for a later ``partial_fit``, the whole solver state but
    the data: the iterate, the counters, the random stream, the curvature memory (L-BFGS pairs,
    BFGS matrices, AdaGrad's accumulators) and a running race's candidates, so an unpickled
    estimator's ``partial_fit`` continues exactly as the original's would.
    """

    #: the fit's trainer (the stochastic driver's), or a composite fit's record
    _trainer: Trainer | CompositeFit

    def __init__(
        self,
        loss: Any = "logloss",
        *,
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
        multiclass: Literal["auto", "ovr", "multinomial"] = "auto",
        class_weight: Mapping[Any, float] | str | None = None,
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
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_jobs = n_jobs
        self.parameter_mixing = parameter_mixing

    # ------------------------------------------------------------------ training
    def _trainer_params(self) -> dict[str, Any]:
        return dict(loss=self.loss, alpha=self.alpha, curvature=self.curvature,
                    gradient=self.gradient,
                    schedule=self.schedule, step=self.step, projection=self.projection,
                    fit_intercept=self.fit_intercept, average=self.average,
                    sampling=self.sampling, multiclass=self.multiclass,
                    class_weight=self.class_weight, max_epochs=self.max_iter, tol=self.tol,
                    n_iter_no_change=self.n_iter_no_change, random_state=self.random_state,
                    history_every=self.history_every, verbose=self.verbose,
                    callback=self.callback, warm_start=self.warm_start,
                    early_stopping=self.early_stopping,
                    validation_fraction=self.validation_fraction,
                    n_jobs=self.n_jobs, parameter_mixing=self.parameter_mixing)

    def _get_trainer(self, *, keep: bool) -> Trainer:
        trainer: Trainer | None = getattr(self, "_trainer", None)
        if not isinstance(trainer, Trainer) or not keep:
            trainer = Trainer(**self._trainer_params())
        else:
            for key, value in self._trainer_params().items():
                setattr(trainer, key, value)
        self._trainer = trainer
        return trainer

    def fit(self, X: Any, y: ArrayLike | None = None,
            sample_weight: ArrayLike | None = None) -> SQNClassifier:
        """Fit on ``(X, y)``: up to ``max_iter`` passes with early stopping on ``tol``.

        ``X`` may also be a stream (:class:`sqnopt.datasets.ChunkStream`, e.g. from
        :func:`sqnopt.datasets.stream_svmlight`) of data larger than memory, with ``y=None``:
        the fit then reads it pass after pass with memory bounded by its chunks (see
        :meth:`sqnopt.training.Trainer.fit_stream`)."""
        if _is_stream(X):
            if y is not None or sample_weight is not None:
                raise ValueError("fit on a stream takes the labels from the stream: pass "
                                 "y=None and no sample_weight")
            return self._fit_stream(X)
        if y is None:
            raise ValueError("requires y to be passed, but the target y is None (or pass a "
                             "stream of (X, y) chunks as X)")
        _check_structure(X)
        checked = fast_fit_data(self, X, y)     # the common case (arrays, CSR), as below
        if checked is None:
            X, y = validate_data(self, X, y, accept_sparse="csr",
                                 dtype=[np.float64, np.float32], order="C")
            check_classification_targets(y)
        else:
            X, y = checked
        penalty = resolve_estimator_penalty(self)
        if penalty is not None:
            return self._fit_composite(penalty, X, y, sample_weight)
        trainer = self._get_trainer(keep=bool(self.warm_start))
        trainer.penalty = None
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            trainer.fit(X, y, sample_weight)
        _reemit(caught)
        self._set_fitted(trainer)
        return self

    def _fit_composite(self, penalty: Any, X: Any, y: Any,
                       sample_weight: ArrayLike | None) -> SQNClassifier:
        """``fit`` with an L1 / elastic-net penalty (see ``penalty``)."""
        from sklearn.utils.validation import _check_sample_weight

        yarr = np.asarray(y).ravel()
        classes = np.unique(yarr)
        if classes.shape[0] < 2:
            raise ValueError(f"needs samples of at least 2 classes in the data, but the data "
                             f"contain only one class: {classes[0]!r}")
        weights = class_weighted(_check_sample_weight(sample_weight, X, dtype=np.float64),
                                 self.class_weight, yarr)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            fit = fit_composite(self, penalty, X, yarr, weights, loss=self.loss, classes=classes)
        _reemit(caught)
        clear_driver_attributes(self)
        self._trainer = fit
        self.converged_ = bool(fit.converged_)
        self.coef_ = fit.model_.coef.copy()
        self.intercept_ = fit.model_.intercept.copy()
        self.classes_ = classes
        self.n_iter_ = int(fit.n_iter_)
        self.fit_path_ = str(fit.model_.info["method"])
        self.fit_path_reason_ = f"penalty={self.penalty!r}: a composite solve"
        return self

    def _fit_stream(self, stream: Any) -> SQNClassifier:
        fitted: SQNClassifier = _fit_on_stream(self, stream)
        return fitted

    def partial_fit(self, X: Any, y: ArrayLike, classes: ArrayLike | None = None,
                    sample_weight: ArrayLike | None = None) -> SQNClassifier:
        """One pass over the batch ``(X, y)``, continuing the whole solver state.

        ``classes`` must list every label on the first call (unless ``fit`` was called before).
        Batches whose sample weights (times class weights) are all zero are ignored.
        """
        penalty = stochastic_penalty(self, "in partial_fit")
        if isinstance(getattr(self, "_trainer", None), CompositeFit):
            del self._trainer                   # the stochastic state starts afresh
        first = getattr(self, "_trainer", None) is None
        _check_structure(X)
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=[np.float64, np.float32],
                             order="C", reset=first)
        check_classification_targets(y)
        trainer = self._get_trainer(keep=True)
        set_stochastic_penalty(self, trainer, penalty, first)
        model = trainer.partial_fit(X, y, sample_weight, classes=classes)
        self.classes_ = trainer.classes_
        if model is not None:
            self._set_fitted(trainer)
        return self

    def _set_fitted(self, trainer: Trainer) -> None:
        if hasattr(trainer, "converged_"):
            self.converged_ = bool(trainer.converged_)
        model = trainer.model_
        self.coef_ = model.coef.copy()
        self.intercept_ = model.intercept.copy()
        self.classes_ = model.classes
        self.n_iter_ = int(trainer.n_iter_)
        self.t_ = int(trainer.t_)
        hs = trainer.histories_
        self.history_: History | list[History] = hs[0] if len(hs) == 1 else list(hs)
        self.fit_path_, self.fit_path_reason_ = _fit_path(trainer.results_)
        for name in ("validation_loss_", "steps_"):
            if hasattr(trainer, name):
                setattr(self, name, getattr(trainer, name))

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
        ``(n, n_classes)``. (``predict``, ``predict_proba`` and ``score`` go through here.)
        A large sparse ``X`` is scored in blocks of rows on ``n_jobs`` threads, with SciPy's
        arithmetic (:func:`sqnopt.data.csr_scores`): the same bits as on one thread."""
        _check_structure(X)
        coef = getattr(self, "coef_", None)
        n_jobs = getattr(self, "n_jobs", None)
        if sp.issparse(X) and n_jobs != 1 and coef is not None and X.shape[0] > 0:
            k = coef.shape[0]
            # decided from the input's size before any validation: small inputs pay nothing
            threads = pass_threads(n_jobs, X.shape[0], k * X.nnz / X.shape[0] + 1)
            if threads > 1:
                Xv = validate_data(self, X, accept_sparse="csr", reset=False)
                coef_t = np.ascontiguousarray(coef.T, dtype=np.float64)
                out: FloatArray = csr_scores(Xv, coef_t, threads) + self.intercept_
                return out.ravel() if k == 1 else out
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


def _fit_path(results: list[SolveResult]) -> tuple[str, str]:
    """The loop the sub-problems ran and why: one path and its reason when they agree (the
    usual case: the sub-problems share their components and data), else the distinct paths
    joined, each reason named by its path."""
    paths = list(dict.fromkeys(r.path for r in results))
    if len(paths) == 1:
        return paths[0], results[0].path_reason
    reasons = {r.path: r.path_reason for r in results}
    return ", ".join(paths), "; ".join(f"{p}: {reasons[p]}" for p in paths)


def _is_stream(X: Any) -> bool:
    """Whether ``X`` is a stream of ``(X_chunk, y_chunk)`` pairs rather than a matrix."""
    from sqnopt.datasets import ChunkStream

    return isinstance(X, ChunkStream)


def _fit_on_stream(est: Any, stream: Any) -> Any:
    """``fit`` of ``SQNClassifier`` or ``SQNRegressor`` on a stream: the trainer's
    :meth:`~sqnopt.training.Trainer.fit_stream`, whose warnings are re-emitted as the
    estimator's. The L1 and elastic-net penalties are taken in proximal AdaGrad's step
    (:func:`sqnopt.recipes.streaming`; :func:`stochastic_penalty` refuses what it cannot run)."""
    penalty = stochastic_penalty(est, "on a stream")
    trainer = est._get_trainer(keep=bool(est.warm_start))
    trainer.penalty = penalty
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        trainer.fit_stream(stream)
    _reemit(caught)
    est.n_features_in_ = int(stream.n_features)
    if hasattr(est, "feature_names_in_"):
        del est.feature_names_in_
    est._set_fitted(trainer)
    return est


def _reemit(caught: list[warnings.WarningMessage]) -> None:
    """Re-raise warnings recorded during a fit, sqnopt's convergence warnings as
    :class:`SQNConvergenceWarning` (a scikit-learn ``ConvergenceWarning`` too)."""
    for w in caught:
        category = w.category
        if issubclass(category, ConvergenceWarning) and not issubclass(
                category, SklearnConvergenceWarning):
            category = SQNConvergenceWarning
        warnings.warn_explicit(w.message if category is w.category else str(w.message),
                               category, w.filename, w.lineno)
