"""``DaskSQNClassifier``: :class:`sqnopt.SQNClassifier` on data partitioned across a Dask
cluster (see ``docs/dask.md``)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from sqnopt import recipes
from sqnopt.dask._chunks import LabelMode
from sqnopt.dask._data import ChunkedData, get_client
from sqnopt.dask._objective import (
    LOCAL_BATCH,
    DistributedObjective,
    DistributedObjectiveKernel,
    distribute,
    regression_refused,
    runs_distributed,
)
from sqnopt.estimators._classifier import SQNConvergenceWarning
from sqnopt.interfaces import (
    SMOOTH,
    BatchSchedule,
)
from sqnopt.model import LinearModel
from sqnopt.solver import History, SolveResult, Status
from sqnopt.training import DEFAULT_CURVATURE, Trainer, class_weight_vector
from sqnopt.training._epochs import (
    Budget,
    PassTests,
    budgeted_passes,
    new_loop_record,
    run_budget,
)
from sqnopt.training._finish import build_model, unconverged_message
from sqnopt.training._setup import (
    Setup,
    check_settings,
    choose_strategy,
    loss_objective,
    make_solver,
    objective_with_lam,
    requested_components,
    spawn_seeds,
)

FloatArray = NDArray[np.float64]

__all__ = ["DaskSQNClassifier", "SequentialOnClientWarning"]


class SequentialOnClientWarning(UserWarning):
    """The composition is a sequential stochastic method (every step needs the previous one,
    on a small batch): it runs on the client over the chunks as a sample stream, each chunk
    brought to the client once per pass, instead of on the workers."""


def _is_dask(obj: Any) -> bool:
    return (type(obj).__module__ or "").startswith("dask") and hasattr(obj, "dask")


class DaskSQNClassifier(ClassifierMixin, BaseEstimator):  # type: ignore[misc]
    r""":class:`sqnopt.SQNClassifier` for data held by a Dask cluster.

    Same parameters, same defaults and same fitted attributes as ``SQNClassifier``; ``fit``
    takes a ``dask.array`` (dense, or with ``scipy.sparse`` chunks) or a dask DataFrame ``X``,
    labels ``y`` (a dask array or Series chunked like ``X``'s rows, or an in-memory array) and
    runs on the active ``dask.distributed`` client. One default resolves differently:
    ``curvature="auto"`` is L-BFGS here whatever the data's shape, where ``SQNClassifier``
    takes Newton's method on data with few features (:func:`sqnopt.recipes.default_curvature`
    reads the in-memory matrix to estimate the Hessian's cost; a distributed Hessian is not
    built).

    What runs where:

    * the compositions whose batches grow to the whole data set -- the default (L-BFGS with
      growing batches and an Armijo search, ending as full-batch L-BFGS), any secant model
      with ``schedule="full"``, SQB (``curvature="quadratic_bound"``) -- and those whose
      gradient estimator evaluates the whole data set whatever the schedule: SVRG
      (``gradient="svrg"``: full-gradient snapshots) and progressive batching
      (``gradient="progressive"``, alone or as the ``progressive_lbfgs`` composition with a
      fixed first batch: batches grown by the inner-product and orthogonality tests of
      Bollapragada et al. 2018) -- run **distributed**. The estimator decides by what it declares
      (:attr:`~sqnopt.interfaces.GradientEstimator.partial_sums`: how its estimate is made of
      sums over row blocks), not by its type. The driver (curvature memory, direction, step,
      batch sizes) runs on the client; every large batch, full gradient, full objective and
      SVRG snapshot runs on the workers, where each chunk runs the compiled kernel; only
      ``n_params``-long vectors (``n_features``, or ``K x n_features``), and row indices of
      partial batches, travel. Progressive batching's tests on a batch evaluated on the
      workers take a second round trip carrying the batch gradient ``g``, and each chunk
      returns four numbers: the count, sum and centred sum of squares of ``grad l_i(w)' g``
      over its rows of the batch and the sum of their squared gradient norms, from which the
      client forms the tests' sample variances.
      Batches of at most ``local_batch`` samples (the first growing or progressive batches,
      SQB's curvature batches) are gathered to the client and evaluated there. With the same
      ``random_state`` the iterates are those of ``SQNClassifier`` on the concatenated rows,
      up to rounding (the chunks' sums are added in chunk order);
    * every other composition (SGD, SAGA, AdaGrad, Pegasos, oLBFGS with a small fixed batch) is
      a **sequential** stochastic method: it runs on the client over the chunks as a sample
      stream -- ``partial_fit`` on each chunk in turn, one chunk brought to the client at a
      time, the next one fetched meanwhile -- for up to ``max_iter`` passes, with the full
      objective and its gradient evaluated on the workers after each pass for the stopping
      test. ``fit`` says so with a :class:`SequentialOnClientWarning`.

    Parameters
    ----------
    loss, alpha, curvature, gradient, schedule, step, projection, fit_intercept, average,
    sampling, multiclass, class_weight, max_iter, tol, n_iter_no_change, random_state,
    history_every, verbose, warm_start, callback
        As for :class:`sqnopt.SQNClassifier`. ``sampling="weighted"`` is not available
        (the client does not hold the weights); ``verbose`` draws the progress bar of the
        sequential path only.
    penalty, l1_ratio
        As for :class:`sqnopt.SQNClassifier`, which solves the L1 and elastic-net penalties
        full batch in memory; here only ``penalty="l2"`` is fitted (the others are refused).
    local_batch : int, default=10000
        Largest batch whose rows are brought to the client and evaluated there instead of on
        the workers (one transfer of the rows, then reused for the line search's trials and the
        secant pair). ``0``: every batch on the workers (except the curvature batches of SQB).
    n_jobs : int or None, default=None
        Threads of the compiled passes: on each worker, for every chunk it evaluates (resolved
        there, so ``-1`` is each worker's cores; a worker running several chunk tasks at once
        lends its one pool of threads to one of them at a time, the others run on their own
        thread, so the cores are never oversubscribed), and on the client for the passes it
        runs itself (the sequential path, gathered batches). The results do not depend on it.
    early_stopping, validation_fraction, parameter_mixing
        Accepted for the same parameters as :class:`~sqnopt.SQNClassifier`; the Dask estimator
        has no large-data (streaming) recipe yet -- it always solves the training objective to
        ``tol`` with the in-memory recipes -- so they do not change its fit.

    Attributes
    ----------
    coef_, intercept_, classes_, n_iter_, converged_, t_, history_, n_features_in_
        As for :class:`sqnopt.SQNClassifier`.
    distributed_ : bool
        Whether the last ``fit`` ran distributed (else: sequentially over the chunk stream).
    comm_ : dict
        What travelled during the last ``fit``: ``round_trips``, ``tasks``, ``bytes_sent`` (to
        the workers: iterates, row indices), ``bytes_received`` (partial sums, gathered rows),
        ``rows_gathered``, ``seconds`` waiting for the cluster, and ``grad_evals`` (gradient
        evaluations of the driver).
    """

    def __init__(
        self,
        loss: Any = "logloss",
        *,
        alpha: float = 1e-4,
        penalty: str = "l2",
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
        local_batch: int = LOCAL_BATCH,
        n_jobs: int | None = None,
        early_stopping: bool | str = "auto",
        validation_fraction: float = 0.1,
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
        self.local_batch = local_batch
        self.n_jobs = n_jobs
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.parameter_mixing = parameter_mixing

    # ------------------------------------------------------------------ fit
    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> DaskSQNClassifier:
        """Fit on ``(X, y)``: up to ``max_iter`` passes with early stopping on ``tol``."""
        self._check_params()
        client = get_client()
        data = ChunkedData.from_dask(X, y, sample_weight,
                                     constant_column=self.fit_intercept == "regularized",
                                     client=client)
        try:
            cw = self._class_weights(data)
            setup, distributed = self._make_setup(data, cw)
            if distributed:
                self._fit_distributed(data, setup, cw)
            else:
                self._fit_stream(data, setup, cw)
        finally:
            self.comm_ = dict(data.stats.as_dict(), grad_evals=getattr(self, "_grad_evals", 0))
            data.release()
        return self

    def _check_params(self) -> None:
        if self.penalty != "l2":
            raise ValueError(f"penalty={self.penalty!r}: DaskSQNClassifier fits the L2 penalty; "
                             "the L1 and elastic-net ones are solved full batch in memory by "
                             "SQNClassifier(penalty=...) (load the data with X.compute()), or "
                             "use penalty='l2'")
        if self.sampling == "weighted":
            raise ValueError("sampling='weighted' draws samples by their weights on the "
                             "client, which does not hold them: use the default sampling "
                             "(weighted losses) with DaskSQNClassifier")
        if not (isinstance(self.local_batch, (int, np.integer))
                and not isinstance(self.local_batch, bool) and self.local_batch >= 0):
            raise ValueError(f"local_batch must be an integer >= 0, got {self.local_batch!r}")
        # the parameters it shares with SQNClassifier: the Trainer's own checks
        settings = Trainer(**self._trainer_params())
        check_settings(settings)
        objective = loss_objective(settings)
        if objective.label_kind == "regression":
            raise ValueError(regression_refused(objective.name, "DaskSQNClassifier fits classes"))

    def _settings(self) -> Trainer:
        """The parameters shared with ``SQNClassifier``, as its trainer takes them (the
        solvers here run the Python driver: the distributed objective is a Python kernel)."""
        return Trainer(**self._trainer_params(), path="python")

    def _trainer_params(self) -> dict[str, Any]:
        return dict(loss=self.loss, alpha=self.alpha, curvature=self.curvature,
                    gradient=self.gradient, schedule=self.schedule, step=self.step,
                    projection=self.projection, fit_intercept=self.fit_intercept,
                    average=self.average, sampling=self.sampling, multiclass=self.multiclass,
                    class_weight=self.class_weight, max_epochs=self.max_iter, tol=self.tol,
                    n_iter_no_change=self.n_iter_no_change, random_state=self.random_state,
                    history_every=self.history_every, verbose=self.verbose,
                    callback=self.callback, warm_start=self.warm_start,
                    n_jobs=self.n_jobs)

    def _class_weights(self, data: ChunkedData) -> FloatArray | None:
        """Per class of the whole data set (``"balanced"`` from the global counts)."""
        if self.class_weight is None:
            return None
        return class_weight_vector(self.class_weight, data.classes, data.counts)

    def _make_setup(self, data: ChunkedData, cw: FloatArray | None) -> tuple[Setup, bool]:
        """Objective, strategy and recipe, as :class:`sqnopt.training.Trainer` chooses them,
        and whether the composition runs distributed."""
        weights = data.weight_sums * (cw if cw is not None else 1.0)
        positive = data.classes[weights > 0]
        if positive.shape[0] < 2:
            raise ValueError("a classifier needs at least two classes with samples of positive "
                             f"weight; got {positive.tolist()[:10]}")
        k = int(data.classes.shape[0])
        objective, strategy = choose_strategy(objective_with_lam(self.loss, float(self.alpha)),
                                              k, self.multiclass)
        stand_in = _Shape(data.n_samples, data.n_features - int(data.constant_column),
                          data.nnz - (data.n_samples if data.constant_column else 0))
        requested = requested_components(objective, stand_in, k, curvature=self.curvature,
                                         schedule=self.schedule, step=self.step,
                                         gradient=self.gradient)
        curvature = requested.curvature
        fi = self.fit_intercept is True
        secant_like = curvature.needs_secant_pair or (
            curvature.direction_scale == "newton" and not curvature.needs_curvature_batch)
        if curvature.needs_curvature_batch or secant_like:
            # the recipes of these models read only the data's size
            recipe = requested.recipe(objective, stand_in, np.ones(1), fit_intercept=fi,
                                      sampling=self.sampling)
        else:
            # first-order steps and batch sizes are read from the data: from the first chunk,
            # as partial_fit reads them from its first batch
            X0, _, sw0 = self._first_chunk(data, cw)
            recipe = requested.recipe(objective, X0, sw0 / np.mean(sw0), fit_intercept=fi,
                                      sampling=self.sampling)
        distributed = runs_distributed(recipe.gradient, recipe.full_batch_phase)
        if distributed and recipe.curvature_schedule is not None:
            size = _batch_size(recipe.curvature_schedule, data.n_samples)
            if size > max(int(self.local_batch), recipes.BOUND_BATCH):
                raise ValueError(
                    f"curvature model {recipe.curvature.describe()} draws curvature batches of "
                    f"{size} samples, whose rows would travel to the client every iteration. "
                    "Use curvature='lbfgs' (the default) or 'quadratic_bound' (SQB), or give "
                    "a smaller curvature batch")
        setup = Setup(objective=recipe.objective, curvature=recipe.curvature,
                      gradient=recipe.gradient, schedule=recipe.schedule,
                      curvature_schedule=recipe.curvature_schedule, step=recipe.step,
                      sampling=recipe.sampling, full_batch_phase=recipe.full_batch_phase,
                      report_every=recipe.report_every, strategy=strategy,
                      classes=data.classes, n_features=stand_in.shape[1])
        return setup, distributed

    def _first_chunk(self, data: ChunkedData, cw: FloatArray | None
                     ) -> tuple[Any, Any, FloatArray]:
        fut = data.client.submit(_raw_chunk, data.chunks[0], data.constant_column, pure=False)
        X0, y0, w0 = data.client.gather(fut)
        w = np.ones(X0.shape[0]) if w0 is None else np.asarray(w0, dtype=np.float64)
        if cw is not None:
            w = w * cw[np.searchsorted(data.classes, y0)]
        if not np.any(w > 0):
            w = np.ones_like(w)
        return X0, y0, w

    def _sub_problems(self, data: ChunkedData, setup: Setup
                      ) -> list[tuple[LabelMode, Any]]:
        if setup.strategy == "ovr":
            return [("ovr", c) for c in data.classes]
        return [("multiclass" if setup.strategy == "multinomial" else "binary", None)]

    def _warm(self, n_sub: int, data: ChunkedData) -> list[FloatArray | None]:
        prev = getattr(self, "_params", None)
        if not self.warm_start or prev is None:
            return [None] * n_sub
        if len(prev) != n_sub or not np.array_equal(self.classes_, data.classes):
            raise ValueError("warm_start: the data has different classes than the previous "
                             "fit; set warm_start=False to start afresh")
        return [np.array(p) for p in prev]

    def _fit_distributed(self, data: ChunkedData, setup: Setup,
                         cw: FloatArray | None) -> None:
        subs = self._sub_problems(data, setup)
        seeds = [self.random_state] if len(subs) == 1 else spawn_seeds(self.random_state,
                                                                       len(subs))
        starts = self._warm(len(subs), data)
        results: list[SolveResult] = []
        unconverged: list[str] = []
        n_iter = t = grad_evals = 0
        budget = Budget(max_epochs=self.max_iter, tol=self.tol,
                        n_iter_no_change=self.n_iter_no_change,
                        smooth=SMOOTH in setup.objective.capabilities,
                        full_batch_phase=setup.full_batch_phase)
        for (mode, positive), seed, w0 in zip(subs, seeds, starts):
            dobj = DistributedObjective(setup.objective, data, labels=mode, positive=positive,
                                        class_weight=cw, local_batch=int(self.local_batch),
                                        n_jobs=self.n_jobs)
            solver = distribute(make_solver(self._settings(), setup, seed, self.callback),
                                dobj)
            Xp, yp, classes = dobj.placeholder()
            state = solver.init_state(Xp, yp, classes=classes, w0=w0)
            loop = new_loop_record(state)
            done, res, why = run_budget(solver, state, budget, loop)
            results.append(res)
            # with tol=None the passes made as the budget counts them, as SQNClassifier's
            done = done if self.tol is not None else budgeted_passes(state, loop, budget)
            n_iter, t = max(n_iter, done), max(t, state.t)
            grad_evals += res.n_grad_evals
            if why is not None:
                unconverged.append(why if len(subs) == 1 else f"class {positive!r} vs rest: {why}")
        self._grad_evals = grad_evals
        self._finish(data, setup, results, n_iter, t)
        self.distributed_ = True
        self.converged_ = self.tol is not None and not unconverged and not any(
            r.status is Status.DIVERGED for r in results)
        if unconverged:
            self._warn_unconverged(setup, unconverged)

    def _warn_unconverged(self, setup: Setup, unconverged: list[str]) -> None:
        warnings.warn(unconverged_message(setup, unconverged), SQNConvergenceWarning,
                      stacklevel=4)

    def _finish(self, data: ChunkedData, setup: Setup, results: list[SolveResult],
                n_iter: int, t: int) -> None:
        self._params = [np.array(r.w) for r in results]
        self._model = build_model(setup, data.classes, results, self.fit_intercept)
        self.coef_ = self._model.coef.copy()
        self.intercept_ = self._model.intercept.copy()
        self.classes_ = data.classes
        self.n_features_in_ = data.n_features - int(data.constant_column)
        self.n_iter_ = int(n_iter)
        self.t_ = int(t)
        hs = [r.history for r in results]
        self.history_: History | list[History] = hs[0] if len(hs) == 1 else hs

    # ------------------------------------------------------------------ the chunk stream
    def _fit_stream(self, data: ChunkedData, setup: Setup, cw: FloatArray | None) -> None:
        curv = setup.curvature.describe()
        warnings.warn(
            f"curvature {curv} with {setup.schedule.describe()} batches and gradient "
            f"{setup.gradient.describe()} is a sequential stochastic method: it runs on the "
            f"client over the {data.n_chunks} chunks as a sample stream (partial_fit on each "
            "chunk, each brought to the client once per pass), not on the workers. The "
            "distributed compositions are those whose batches grow to the whole data set "
            "(curvature 'auto', 'lbfgs' or 'quadratic_bound' with schedule='auto') and "
            "gradient='svrg' or 'progressive'", SequentialOnClientWarning, stacklevel=3)
        params = self._trainer_params()
        params["class_weight"] = (None if cw is None else
                                  {c: float(v) for c, v in zip(data.classes.tolist(), cw)})
        trainer = Trainer(**params)
        previous: Trainer | None = getattr(self, "_trainer", None)
        if self.warm_start and previous is not None:
            trainer = previous
        self._trainer = trainer
        subs = self._sub_problems(data, setup)
        kernels = self._stream_kernels(data, setup, subs, cw)
        done = 0
        tests = PassTests(Budget(max_epochs=self.max_iter, tol=self.tol,
                                 n_iter_no_change=self.n_iter_no_change,
                                 smooth=SMOOTH in setup.objective.capabilities,
                                 full_batch_phase=False))
        why: str | None = None
        converged = False
        last: list[SolveResult] = []
        fun, gnorm = math.nan, math.nan
        while done < int(math.ceil(float(self.max_iter))):
            self._stream_pass(data, trainer)
            done += 1
            last = list(trainer.results_)
            if self.tol is None:
                continue
            # the stopping tests on the whole data set, evaluated on the workers
            fun, gnorm = 0.0, 0.0
            for k, res in zip(kernels, last):
                g = np.empty(k.n_params)
                fun += float(k.full_gradient(np.asarray(res.w), g))
                gnorm = max(gnorm, float(np.max(np.abs(g))))
            stop, why = tests.after_pass(fun, gnorm)
            if stop:
                converged = why is None
                break
        else:
            if self.tol is not None:
                why = tests.exhausted(fun, gnorm)
        self._grad_evals = sum(int(r.n_grad_evals) for r in last)
        self._finish(data, setup, last, done, int(trainer.t_))
        self.distributed_ = False
        self.converged_ = bool(converged) and not any(r.status is Status.DIVERGED for r in last)
        if why is not None:
            self._warn_unconverged(setup, [why])

    def _stream_kernels(self, data: ChunkedData, setup: Setup,
                        subs: list[tuple[LabelMode, Any]], cw: FloatArray | None
                        ) -> list[DistributedObjectiveKernel]:
        """The training objective of each sub-problem on the workers (stopping tests)."""
        out = []
        for mode, positive in subs:
            dobj = DistributedObjective(setup.objective, data, labels=mode, positive=positive,
                                        class_weight=cw, local_batch=0)
            out.append(dobj.init(dobj.stand_in(self.fit_intercept is True)))
        return out

    def _stream_pass(self, data: ChunkedData, trainer: Trainer) -> None:
        """One pass of ``partial_fit`` over the chunks, the next chunk in flight meanwhile."""
        client = data.client
        pending = client.submit(_raw_chunk, data.chunks[0], data.constant_column, pure=False)
        for i in range(data.n_chunks):
            Xc, yc, wc = client.gather(pending)
            data.stats.round_trips += 1
            data.stats.tasks += 1
            data.stats.rows_gathered += int(Xc.shape[0])
            if i + 1 < data.n_chunks:
                pending = client.submit(_raw_chunk, data.chunks[i + 1], data.constant_column,
                                        pure=False)
            trainer.partial_fit(Xc, yc, wc, classes=data.classes)

    def partial_fit(self, X: Any, y: Any, classes: ArrayLike | None = None,
                    sample_weight: Any = None) -> DaskSQNClassifier:
        """One pass over the chunks of ``(X, y)`` on the client, each chunk a
        :meth:`sqnopt.SQNClassifier.partial_fit` step continuing the whole solver state.
        ``classes`` is needed on the first call."""
        self._check_params()
        data = ChunkedData.from_dask(X, y, sample_weight, constant_column=False,
                                     client=get_client())
        try:
            trainer: Trainer | None = getattr(self, "_trainer", None)
            if trainer is None:
                trainer = self._trainer = Trainer(**self._trainer_params())
            client = data.client
            for f in data.chunks:
                Xc, yc, wc = client.gather(client.submit(_raw_chunk, f, False, pure=False))
                trainer.partial_fit(Xc, yc, wc, classes=classes)
                classes = trainer.classes_
            model = trainer.model_
            self._model = model
            self.coef_ = model.coef.copy()
            self.intercept_ = model.intercept.copy()
            self.classes_ = model.classes
            self.n_features_in_ = model.n_features
            self.n_iter_ = 1
            self.t_ = int(trainer.t_)
            hs = trainer.histories_
            self.history_ = hs[0] if len(hs) == 1 else list(hs)
            self.distributed_ = False
        finally:
            self.comm_ = data.stats.as_dict()
            data.release()
        return self

    # ------------------------------------------------------------------ prediction
    def to_model(self) -> LinearModel:
        """The fitted classifier as a :class:`sqnopt.model.LinearModel`."""
        check_is_fitted(self)
        m: LinearModel = self._model
        return LinearModel(coef=self.coef_, intercept=self.intercept_, classes=self.classes_,
                           strategy=m.strategy, loss=m.loss, probabilistic=m.probabilistic,
                           info=dict(m.info))

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "coef_")

    def _blocks(self, X: Any, fn: Any, ncols: int | None, dtype: Any) -> Any:
        """``fn`` of each row block of a dask ``X`` (lazily, a dask array), or of ``X``."""
        model = self.to_model()
        if not _is_dask(X):
            return fn(model, X)
        from sqnopt.dask._data import _dask_array

        Xa = _dask_array(X, "X")
        if Xa.ndim != 2:
            raise ValueError(f"X: expected a 2-D array, got shape {Xa.shape}")
        if Xa.numblocks[1] > 1:
            Xa = Xa.rechunk({1: -1})
        if ncols is None:
            return Xa.map_blocks(_apply, model, fn, drop_axis=1, dtype=dtype,
                                 meta=np.empty((0,), dtype=dtype))
        return Xa.map_blocks(_apply, model, fn, chunks=(Xa.chunks[0], (ncols,)), dtype=dtype,
                             meta=np.empty((0, 0), dtype=dtype))

    def decision_function(self, X: Any) -> Any:
        """Scores ``X @ coef_.T + intercept_``: ``(n,)`` for two classes, else
        ``(n, n_classes)``; a dask array for dask input."""
        k = self.coef_.shape[0]
        return self._blocks(X, _scores, None if k == 1 else k, np.float64)

    def predict(self, X: Any) -> Any:
        """Predicted labels (a dask array for dask input)."""
        return self._blocks(X, _labels, None, self.classes_.dtype)

    def predict_log_proba(self, X: Any) -> Any:
        """Log class probabilities (log-likelihood losses)."""
        if not self.to_model().probabilistic:
            raise AttributeError("probabilities need a log-likelihood loss ('logloss')")
        return self._blocks(X, _log_proba, len(self.classes_), np.float64)

    def predict_proba(self, X: Any) -> Any:
        """Class probabilities (log-likelihood losses)."""
        if not self.to_model().probabilistic:
            raise AttributeError("probabilities need a log-likelihood loss ('logloss')")
        return self._blocks(X, _proba, len(self.classes_), np.float64)

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Mean accuracy (computed on the cluster for dask input)."""
        pred = self.predict(X)
        if _is_dask(pred):
            from sqnopt.dask._data import _dask_array

            ya: Any = _dask_array(y, "y") if _is_dask(y) else np.asarray(y)
            hits = (pred == (ya.rechunk(pred.chunks) if _is_dask(ya) else ya))
            if sample_weight is None:
                return float(hits.mean().compute())
            sw: Any = _dask_array(sample_weight, "w") if _is_dask(sample_weight) else \
                np.asarray(sample_weight)
            return float(((hits * sw).sum() / sw.sum()).compute())
        w = None if sample_weight is None else np.asarray(sample_weight)
        return float(np.average(np.asarray(pred) == np.asarray(y), weights=w))


class _Shape:
    """Stands in for ``X`` where the recipes read only its shape and its number of stored
    values (all of them for dense chunks)."""

    def __init__(self, n_samples: int, n_features: int, nnz: int) -> None:
        self.shape = (n_samples, n_features)
        self.nnz = int(nnz)


def _batch_size(schedule: BatchSchedule, n_samples: int) -> int:
    from sqnopt.interfaces import Problem

    problem = Problem(n_samples=n_samples, n_features=1, dim=1, n_blocks=1, n_params=1,
                      lam=0.0, fit_intercept=False, capabilities=frozenset())
    k = schedule.init(problem)
    return max(int(k.batch_size(j)) for j in (1, 2, 10, 100))


def _raw_chunk(chunk: Any, constant_column: bool) -> tuple[Any, Any, Any]:
    """A chunk's rows as the user gave them (without the constant column)."""
    X = chunk.X[:, :-1] if constant_column else chunk.X
    return X, chunk.labels, chunk.weights


def _apply(block: Any, model: LinearModel, fn: Any) -> Any:
    return fn(model, block)


def _scores(model: LinearModel, X: Any) -> FloatArray:
    return model.decision_function(X)


def _labels(model: LinearModel, X: Any) -> NDArray[Any]:
    return model.predict(X)


def _log_proba(model: LinearModel, X: Any) -> FloatArray:
    return model.predict_log_proba(X)


def _proba(model: LinearModel, X: Any) -> FloatArray:
    return model.predict_proba(X)
