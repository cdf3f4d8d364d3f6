"""The :class:`Trainer`: one ``fit`` / ``partial_fit`` call from labelled data to a model.

It validates the data and the weights (:mod:`._weights`), fixes the components and the
sub-problems (:mod:`._setup`), runs each sub-problem's budget (:mod:`._epochs`) with progress
and callbacks (:mod:`._progress`) and checkpoints (:mod:`._checkpoints`), and joins the results
into a :class:`~sqnopt.model.LinearModel` (:mod:`._finish`). What it does is described in the
package docstring (:mod:`sqnopt.training`).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import warnings
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from sqnopt._text import short_list
from sqnopt.checkpoint import Checkpoint
from sqnopt.data import check_matrix, check_targets, encode_labels
from sqnopt.data._dataset import checked_row_range
from sqnopt.interfaces import SMOOTH, Penalty, StepRule
from sqnopt.model import LinearModel
from sqnopt.progress import ProgressBar
from sqnopt import recipes
from sqnopt.solver import IterationInfo, SolveResult, Solver, SolverState, Status
from sqnopt.solver._blas import one_blas_thread
from sqnopt.solver._result import PendingObjective
from sqnopt.steps import Constant
from sqnopt.solver._solver import ComponentSpec, RandomState, make_bit_generator
from sqnopt.training._checkpoints import (
    FitCheckpoints,
    check_resume,
    fit_fingerprint,
    fit_identity,
    from_file,
    pending_bit_generator,
    resume_records,
    solver_checkpoint,
)
from sqnopt.training._epochs import Budget, budgeted_passes, new_loop_record, run_budget
from sqnopt.training._finish import (
    ConvergenceWarning,
    build_model,
    check_majority,
    unconverged_message,
)
from sqnopt.training._progress import Callback, open_bar, report
from sqnopt.training import _streaming
from sqnopt.training._mixing import ShardMixer, mixes
from sqnopt.training._streaming import (
    HELD_OUT_TOL,
    ChunkRows,
    HeldOut,
    StepRace,
    StreamHoldout,
    progressive,
)
from sqnopt.training._setup import (
    DEFAULT_CURVATURE,
    Setup,
    check_settings,
    loss_objective,
    make_setup,
    make_solver,
    n_subproblems,
    spawn_seeds,
    sub_labels,
    target_kind,
)
from sqnopt.training._weights import (
    ClassWeight,
    check_two_classes,
    class_counts,
    regression_weights,
    sample_weights,
)

FloatArray = NDArray[np.float64]

__all__ = ["Trainer"]


class Trainer:
    """Fit a linear classifier (or, with a regression loss, a linear regressor) with any
    registered components; see the module docstring.

    Parameters
    ----------
    loss
        Objective: a registered name (``"logloss"``, ``"squared_hinge"``, ``"hinge"``, ...),
        ``(name, params)`` or an :class:`~sqnopt.interfaces.Objective`. Its ``lam`` is ``alpha``.
    alpha
        L2 regularisation ``λ`` of ``F(w) = λ/2 ||w||² + Σ c_i ℓ_i / Σ c_i``.
    curvature, projection
        Components as for :class:`~sqnopt.Solver` (instance, name or ``(name, params)``);
        ``curvature="auto"`` is :func:`sqnopt.recipes.default_curvature`.
    gradient
        The gradient estimator (``"minibatch"``, ``"svrg"``, ``"saga"``, ...), or ``"auto"``: the
        recipe's (SAGA for the identity on smooth objectives of linear scores, else the minibatch
        gradient).
    schedule, step, sampling
        A batch schedule, step rule and sampling, or ``"auto"``: the recipe of
        :mod:`sqnopt.recipes` for the curvature model (secant models: batches growing to the
        whole data set with a line search; SQB: semistochastic batches; AdaGrad / SGD:
        minibatches of 5 with a step computed from the data).
    fit_intercept
        ``True``: an unregularised intercept; ``"regularized"``: a constant feature regularised
        with the weights; ``False``: none.
    average, report_every, path
        As for :class:`~sqnopt.Solver` (``report_every=None``: the recipe's).
    multiclass
        ``"auto"``: a multiclass objective if the loss is one or has a multiclass form
        (:meth:`~sqnopt.interfaces.Objective.with_capability`, e.g. ``logloss`` -> ``softmax``),
        else one-vs-rest; ``"ovr"``: always one-vs-rest (binary losses); ``"multinomial"``:
        require a multiclass objective.
    class_weight
        ``None``, ``"balanced"`` (``n / (K n_k)``; in ``partial_fit`` from the labels seen so
        far) or ``{label: weight}``; multiplies ``sample_weight``.
    max_epochs
        Budget of ``fit`` in passes over the data (gradient batches; may be fractional).
    tol, n_iter_no_change
        ``fit`` has converged once ``max_j |dF/dw_j| <= tol`` (the test of scikit-learn's and
        SciPy's L-BFGS, on the same scale: ``F`` is the mean loss plus the penalty; the default
        ``1e-5`` ends within about ``1e-4`` relative of the optimum on the LIBSVM sets of the
        benchmarks), or a deterministic run's relative objective decrease falls below
        ``64 eps``. A stochastic recipe also stops when its objective has not improved by
        ``tol`` (relative) for ``n_iter_no_change`` passes -- without having converged. Ending
        unconverged warns. ``tol=None`` tests no tolerance: the fit runs its whole budget
        unless a deterministic run reaches working precision first (no further decrease of
        the objective is representable: status ``precision``) or diverges; ``n_iter_`` counts
        the passes it made.
    random_state
        Seeds the sampling (an int gives reproducible results).
    history_every
        Record the training objective every this many iterations (int or iteration list);
        ``None`` records it at the start and after each pass / ``partial_fit`` call.
    verbose
        ``>= 1``: a progress bar (tqdm) on stderr for runs longer than ~1 s: live on a
        terminal or in a notebook, a line every 30 s in a log; ``0``: silent.
    callback
        Extra solver callback(s) ``f(info) -> bool | None`` (``True`` stops the run).
    warm_start
        ``fit`` starts from the previous solution (same classes and features) instead of zeros.
    n_jobs
        Threads for the compiled passes over the data (``None``: 1 unless a
        ``joblib.parallel_config`` context says otherwise; ``-1``: every usable core); the
        results are the same for every value (:class:`~sqnopt.Solver`'s ``n_jobs``).
    parameter_mixing
        The large-data recipe's chunks as two shards averaged (the default), on two threads
        from ``n_jobs=2`` (:mod:`sqnopt.training._mixing`); the same model for every
        ``n_jobs``. ``False``: the sequential updates.
    penalty
        ``None``: the L2 penalty ``alpha/2 ||w||^2`` (the objective's ``lam``). A
        :class:`~sqnopt.interfaces.Penalty` (e.g. :class:`sqnopt.penalties.L1`, which then
        replaces ``alpha``): the fit must take the large-data recipe (a stream,
        ``partial_fit``, or data large in memory, with ``curvature``, ``gradient``,
        ``schedule`` and ``step`` at ``"auto"``), whose proximal AdaGrad takes the penalty's
        declared ``l1_strength`` in its step and its ``l2_strength`` as the objective's
        ``lam`` (:func:`sqnopt.recipes.streaming`). Full-batch L1 fits are
        :func:`sqnopt.composite.solve_composite`'s.

    Attributes
    ----------
    model_ : LinearModel
        The fitted model (this and the attributes below exist after ``fit`` / ``partial_fit``).
    classes_, strategy_, n_features_in_
    n_iter_ : int
        Passes made by the last ``fit`` / ``partial_fit`` call (the maximum over sub-problems;
        with ``tol=None``, the budgeted passes: gradient-batch samples over the data size,
        rounded up -- never more than the budget, fewer when the run ended before it).
    t_ : int
        Solver iterations (minibatch steps) so far (maximum over sub-problems).
    histories_ : list of History
        One per sub-problem (one, or one per class for one-vs-rest).
    results_ : list of SolveResult
        The last run of each sub-problem.
    """

    def __init__(
        self,
        loss: ComponentSpec = "logloss",
        *,
        alpha: float = 1e-4,
        curvature: ComponentSpec = DEFAULT_CURVATURE,
        gradient: ComponentSpec = "auto",
        schedule: ComponentSpec = "auto",
        step: ComponentSpec = "auto",
        projection: ComponentSpec | None = None,
        fit_intercept: bool | Literal["regularized"] = True,
        average: bool | int = False,
        sampling: Literal["auto", "uniform", "shuffle", "subset", "weighted"] = "auto",
        multiclass: Literal["auto", "ovr", "multinomial"] = "auto",
        class_weight: ClassWeight = None,
        max_epochs: float = 1000,
        tol: float | None = 1e-5,
        n_iter_no_change: int = 5,
        random_state: RandomState = None,
        report_every: int | None = None,
        history_every: int | Sequence[int] | None = None,
        verbose: int = 0,
        callback: Callback | Sequence[Callback] | None = None,
        warm_start: bool = False,
        n_jobs: int | None = None,
        path: Literal["auto", "compiled", "python"] = "auto",
        early_stopping: bool | Literal["auto"] = "auto",
        validation_fraction: float = 0.1,
        penalty: Penalty | None = None,
        parameter_mixing: bool = True,
    ) -> None:
        self.loss = loss
        self.alpha = alpha
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
        self.max_epochs = max_epochs
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.random_state = random_state
        self.report_every = report_every
        self.history_every = history_every
        self.verbose = verbose
        self.callback = callback
        self.warm_start = warm_start
        self.n_jobs = n_jobs
        self.path = path
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.penalty = penalty
        self.parameter_mixing = parameter_mixing
        # training state (see __getstate__ for what survives pickling)
        self._setup: Setup | None = None
        self._solvers: list[Solver] | None = None
        self._states: list[SolverState] | None = None
        self._checkpoints: list[Checkpoint] | None = None
        self._class_counts: FloatArray | None = None
        self._bar: ProgressBar | None = None
        self._stop_asked = False
        self._own_bar = True
        self._params: list[FloatArray] | None = None
        self._race: list[StepRace] | None = None
        self._race_checkpoints: list[dict[str, Any]] | None = None

    # ------------------------------------------------------------------ public API
    @one_blas_thread
    def fit(self, X: Any, y: ArrayLike, sample_weight: ArrayLike | None = None, *,
            progress: ProgressBar | None = None,
            checkpoint: Callable[[Checkpoint], object] | None = None,
            checkpoint_every: float = 1.0,
            checkpoint_overhead: float | None = None,
            resume: Checkpoint | None = None) -> LinearModel:
        """Train from scratch (or from the previous solution with ``warm_start``).

        Parameters
        ----------
        checkpoint
            Called with a :class:`~sqnopt.checkpoint.Checkpoint` of the training run (every
            sub-problem's solver state and the fit's own progress: passes, best objective,
            stall count) every ``checkpoint_every`` passes over the data and when the fit ends;
            e.g. ``lambda c: c.save("run.ckpt.npz")``. Stochastic recipes, which run one pass
            at a time, are checkpointed at pass ends; full-batch runs are split into runs of
            ``checkpoint_every`` passes (each adds a point to the history), which changes no
            iterate.
        checkpoint_every
            Passes between checkpoints (a number > 0).
        checkpoint_overhead
            ``None``: a checkpoint every ``checkpoint_every`` passes. A fraction (e.g. 0.1):
            a checkpoint that is due is skipped (not taken) while the time spent on the earlier
            ones exceeds this fraction of the time since the fit started -- a checkpoint of a
            model with a large curvature memory can take longer than a pass; the last one is
            always taken. Every checkpoint taken resumes exactly either way.
        resume
            A checkpoint ``checkpoint`` received from a ``fit`` with the same settings on the
            same data (both checked; ``max_epochs`` may differ: the budget counts from the start
            of the first fit). The fit continues where the checkpoint was taken and ends with the
            model, coefficients, counters and results the uninterrupted fit ends with; the
            histories are the same too when both fits checkpoint with the same
            ``checkpoint_every`` (a full-batch run split at checkpoints records a point at each).
        """
        stats: dict[str, float] = {}
        Xc = check_matrix(X, fit=True, stats=stats)
        regression = target_kind(self) == "regression"
        index: NDArray[np.intp] | None = None
        if regression:      # real-valued targets: no classes, no class weights
            yarr = check_targets(y, n_samples=Xc.shape[0])
            classes = np.empty(0)
            counts = np.zeros(0)
            weights = regression_weights(sample_weight, Xc.shape[0], self.class_weight)
        else:
            encoded, classes = encode_labels(y, "multiclass", n_samples=Xc.shape[0])
            index = encoded.astype(np.intp)     # each sample's position in classes
            yarr = np.asarray(y).ravel()
            counts = class_counts(yarr, classes, index)
            weights = sample_weights(yarr, classes, counts, sample_weight, Xc.shape[0],
                                     self.class_weight)
            check_two_classes(yarr, classes, weights, index)
        if checkpoint is not None and not callable(checkpoint):
            raise TypeError(f"checkpoint must be a callable (it receives each Checkpoint), got "
                            f"{type(checkpoint).__name__}")
        if not (isinstance(checkpoint_every, (int, float, np.number))
                and math.isfinite(checkpoint_every) and checkpoint_every > 0):
            raise ValueError(f"checkpoint_every must be a number of passes > 0, got "
                             f"{checkpoint_every!r}")
        if checkpoint_overhead is not None and not (
                isinstance(checkpoint_overhead, (int, float, np.number))
                and not isinstance(checkpoint_overhead, bool)
                and 0 < checkpoint_overhead < math.inf):
            raise ValueError(f"checkpoint_overhead must be None or a number > 0 (a fraction of "
                             f"the fit's time), got {checkpoint_overhead!r}")
        init = self._warm_params(classes, Xc.shape[1]) if self.warm_start else None
        check_settings(self)
        # the settings' and the data's identities are only needed to check a resume and to
        # stamp checkpoints
        identity = fit_identity(self) if resume is not None or checkpoint is not None else {}
        fingerprint = (fit_fingerprint(Xc, yarr, classes, weights)
                       if resume is not None or checkpoint is not None else {})
        if resume is not None:
            with from_file(resume):
                check_resume(resume, identity, fingerprint)
        setup = make_setup(self, Xc, classes, weights, sum_squares=stats.get("sum_squares"))
        self._setup, self._checkpoints = setup, None
        self._class_counts = counts
        if init is None and regression and self.fit_intercept is True:
            # the loss's own start for the intercept (Huber: the targets' weighted median)
            b0 = float(setup.objective.start_intercept(yarr, weights))
            if b0 != 0.0 and math.isfinite(b0):
                w0 = np.zeros(Xc.shape[1] + 1)
                w0[-1] = b0
                init = [w0]
        if setup.streaming:
            if checkpoint is not None or resume is not None:
                raise ValueError("checkpoint and resume are not available for the large-data "
                                 "recipe (curvature='auto' on data this large); name a "
                                 "curvature model (e.g. curvature='lbfgs') to checkpoint")
            return self._fit_large(Xc, yarr, weights, classes, progress, init)
        n_sub = n_subproblems(setup)
        records: list[dict[str, Any]]
        if resume is None:
            seeds = [self.random_state] if n_sub == 1 else spawn_seeds(self.random_state, n_sub)
            bitgens = [make_bit_generator(seed) for seed in seeds]
            records = [{"w0": None if init is None else init[j]} for j in range(n_sub)]
        else:
            with from_file(resume):
                records = resume_records(resume, n_sub)
                bitgens = [pending_bit_generator(r) for r in records]
        self._solvers = [make_solver(self, setup, bg, _ReportTo(self)) for bg in bitgens]
        self._states = []
        saver = (None if checkpoint is None else
                 FitCheckpoints(records, bitgens, identity, fingerprint, checkpoint,
                                None if checkpoint_overhead is None
                                else float(checkpoint_overhead)))
        budget = self._budget(setup)
        # the budget is the bar's total only when it is the run's length; with a tolerance it is
        # a cap, and the bar shows the count and the rate instead of a misleading percentage
        cap = n_sub * int(math.ceil(float(self.max_epochs) * Xc.shape[0]))
        bar = self._start_bar(progress, cap if self.tol is None else None)
        unconverged: list[str] = []
        try:
            n_iter = 0
            budgeted = 0            # passes of gradient batches made (what max_epochs counts)
            results = []
            for j, solver in enumerate(self._solvers):
                ysub, csub = sub_labels(setup, yarr, j)
                rec = records[j]
                if "solver" in rec:
                    with from_file(resume):
                        state = solver.restore(
                            solver_checkpoint(rec["solver"], getattr(resume, "source", None)),
                            Xc, ysub, weights)
                    loop: dict[str, Any] = dict(rec["loop"])
                else:
                    # the data were checked above: not again for each sub-problem
                    state = solver._init_validated(Xc, ysub, weights, csub, rec.get("w0"))
                    loop = new_loop_record(state)
                self._states.append(state)
                if bar is not None:  # what the sub-problems before this one processed
                    bar.offset = sum(int(s.counters.n_samples) for s in self._states[:-1])
                emit = None if saver is None else functools.partial(saver.emit, j, state)
                done, res, why = run_budget(solver, state, budget, loop, bar, emit,
                                            float(checkpoint_every))
                if saver is not None:
                    saver.finished(j, state, loop)
                n_iter = max(n_iter, done)
                budgeted = max(budgeted, budgeted_passes(state, loop, budget))
                results.append(res)
                if why is not None:
                    unconverged.append(why if n_sub == 1 else
                                       f"class {classes[j]!r} vs rest: {why}")
            if saver is not None:
                saver.emit(-1, self._states[-1], {}, last=True)
            if bar is not None:  # early stopping may end below the budget: end at the truth
                processed = sum(int(s.counters.n_samples) for s in self._states)
                if bar.total is not None:
                    bar.total = max(processed, 1)
                bar.base = bar.offset = 0
                bar.update(processed, force=bar.drawn)
        finally:
            self._close_bar()
        self.n_iter_ = n_iter if self.tol is not None else budgeted
        self._finish(results)
        self.converged_ = self.tol is not None and not unconverged and not any(
            r.status is Status.DIVERGED for r in results)
        if unconverged:
            warnings.warn(unconverged_message(setup, unconverged),
                          ConvergenceWarning, stacklevel=3)
        if not regression:
            check_majority(self.model_, Xc, yarr, classes, weights, self.converged_,
                           self.results_, stacklevel=3, index=index, n_jobs=self.n_jobs)
        return self.model_

    @one_blas_thread
    def partial_fit(self, X: Any, y: ArrayLike, sample_weight: ArrayLike | None = None, *,
                    classes: ArrayLike | None = None,
                    progress: ProgressBar | None = None) -> LinearModel | None:
        """One pass over a new batch, continuing the whole solver state.

        ``classes`` (every label that will ever appear) is required on the first call unless
        ``fit`` was called before (a regression loss has no classes: ``classes`` must be
        ``None``). A batch whose weights are all zero is ignored. Returns the updated model
        (``None`` while nothing has been learned yet).
        """
        Xc = check_matrix(X, fit=True)
        known = getattr(self, "classes_", None)
        if target_kind(self) == "regression":
            if classes is not None:
                raise ValueError("classes: a regression loss has real-valued targets, not "
                                 "classes; pass classes=None")
            yarr = check_targets(y, n_samples=Xc.shape[0])
            cls = np.empty(0)
            self.classes_ = cls
            weights = regression_weights(sample_weight, Xc.shape[0], self.class_weight,
                                         allow_zero=True)
            self._class_counts = np.zeros(0)
        elif classes is not None:
            cls = np.unique(np.asarray(classes))
            if known is not None and not np.array_equal(cls, known):
                raise ValueError(f"classes=[{short_list(cls.tolist(), 10)}] differs from the "
                                 f"classes of the first call [{short_list(known.tolist(), 10)}]"
                                 "; pass the same classes")
        elif known is None:
            raise ValueError("classes must be passed on the first call to partial_fit (every "
                             "label that will appear, e.g. classes=np.unique(y_all))")
        else:
            cls = known
        if target_kind(self) != "regression":
            _, cls = encode_labels(y, "multiclass", n_samples=Xc.shape[0], classes=cls)
            self.classes_ = cls
            yarr = np.asarray(y).ravel()
            if self._class_counts is None or len(self._class_counts) != len(cls):
                self._class_counts = np.zeros(len(cls))
            counts = self._class_counts + class_counts(yarr, cls)
            weights = sample_weights(yarr, cls, counts, sample_weight, Xc.shape[0],
                                     self.class_weight)
            if not np.any(weights > 0):
                return getattr(self, "model_", None)  # nothing to learn from this batch
            self._class_counts = counts
        elif not np.any(weights > 0):
            return getattr(self, "model_", None)
        if self._setup is not None and Xc.shape[1] != self._setup.n_features:
            raise ValueError(f"X has {Xc.shape[1]} features, but partial_fit was started with "
                             f"{self._setup.n_features}; pass batches with the same columns")
        if self._setup is None:
            check_settings(self)
            self._setup = make_setup(self, Xc, cls, weights, regime="stream")
            if self._setup.step_candidates:
                self._race = self._new_races(self._setup, Xc, yarr, weights)
        setup = self._setup
        bar = self._start_bar(progress, n_subproblems(setup) * Xc.shape[0])
        try:
            if self._race is not None or self._race_checkpoints is not None:
                results = self._partial_race(Xc, yarr, weights)
                self.n_iter_ = 1
                self._finish(results)
                return self.model_
            if self._states is None:
                self._begin_partial(Xc, yarr, weights)
            else:
                assert self._solvers is not None
                for j, (solver, state) in enumerate(zip(self._solvers, self._states)):
                    ysub, _ = sub_labels(setup, yarr, j)
                    solver.rebind(state, Xc, ysub, weights)
            assert self._solvers is not None and self._states is not None
            results = []
            for j, (solver, state) in enumerate(zip(self._solvers, self._states)):
                if bar is not None:
                    bar.offset = j * Xc.shape[0] - state.counters.n_samples
                results.append(solver.run(state, max_epochs=1))
        finally:
            self._close_bar()
        self.n_iter_ = 1
        self._finish(results)
        return self.model_

    # ------------------------------------------------------------------ large data
    def _early_stopping(self) -> bool:
        es = self.early_stopping
        if es == "auto":
            return True
        if not isinstance(es, (bool, np.bool_)):
            raise ValueError(f"early_stopping must be True, False or 'auto', got {es!r}")
        return bool(es)

    def _check_fraction(self) -> float:
        f = self.validation_fraction
        if not (isinstance(f, (int, float, np.number)) and not isinstance(f, bool)
                and 0.0 < float(f) < 1.0):
            raise ValueError(f"validation_fraction must be a number in (0, 1), got {f!r}")
        return float(f)

    def _fit_large(self, Xc: Any, yarr: NDArray[Any], weights: FloatArray,
                   classes: NDArray[Any], progress: ProgressBar | None,
                   init: list[FloatArray] | None) -> LinearModel:
        """``fit`` in the large-data regime: the data in memory as a stream of consecutive
        chunks of ``IN_MEMORY_CHUNK`` rows (the same held-out rows and the same fit as a stream
        of the same rows in chunks of that size)."""
        n = int(Xc.shape[0])
        size = _streaming.IN_MEMORY_CHUNK

        def chunks() -> Iterator[Chunk]:
            for a in range(0, n, size):
                b = min(a + size, n)
                yield checked_row_range(Xc, a, b), yarr[a:b], weights[a:b]

        # (fit's setup checked the features' scales on all of Xc: not again on its first chunk)
        return self._fit_chunks(chunks, classes, int(Xc.shape[1]), n, progress, init,
                                scale_checked=True)

    @one_blas_thread
    def fit_stream(self, stream: Any, *, progress: ProgressBar | None = None) -> LinearModel:
        """Train on data that arrive as a re-iterable stream of ``(X_chunk, y_chunk)`` pairs
        (:func:`sqnopt.datasets.stream_svmlight` and the other streams of
        :mod:`sqnopt.datasets`), each iteration of which is one pass, with memory bounded by
        the chunks.

        The stream must know its ``n_features`` and ``classes`` (given to it, or found by its
        scan). With the default components this is the large-data recipe
        (:func:`sqnopt.recipes.streaming`): the step race on the first examples, then passes
        until the loss on held-out rows -- a seeded ``validation_fraction`` of the stream's
        rows, at most ``MAX_HELD_OUT``, the same on every pass -- has not improved by more than
        ``max(tol, HELD_OUT_TOL)`` (relative) for ``n_iter_no_change`` passes, or
        ``max_epochs`` passes; the model is the iterate of the lowest held-out loss. A named
        curvature model makes one pass of its own recipe over each chunk (as
        :meth:`partial_fit` does), on every pass.

        A regression loss needs a stream of real-valued targets (made with
        ``label_kind="regression"``, e.g. ``stream_svmlight(path, label_kind="regression")``):
        it has no classes, and the held-out loss is the regression loss's (half the mean
        squared error for ``"squared_error"``)."""
        check_settings(self)
        objective = loss_objective(self)
        regression = objective.label_kind == "regression"
        streamed = getattr(stream, "label_kind", "multiclass") == "regression"
        if regression and not streamed:
            raise ValueError(f"the loss {objective.name} fits real-valued targets, but the "
                             "stream reads class labels (it finds classes by a scan); make it "
                             "with label_kind='regression', e.g. stream_svmlight(path, "
                             "label_kind='regression') or stream_csv(path, "
                             "label_kind='regression')")
        if streamed and not regression:
            raise ValueError(f"the stream holds real-valued targets (label_kind='regression'), "
                             f"but the loss {objective.name} fits classes; use a regression "
                             "loss ('squared_error', 'huber', 'poisson'), or a stream of class "
                             "labels")
        if regression:
            regression_weights(None, 0, self.class_weight, allow_zero=True)  # no class_weight
        classes = np.empty(0) if regression else np.asarray(stream.classes)
        n_features = int(stream.n_features)
        n_rows = getattr(stream, "n_rows", None)
        init = None
        if self.warm_start:
            init = self._warm_params(classes, n_features)

        def chunks() -> Iterator[Chunk]:
            for X, y in stream:
                yield X, y, None

        return self._fit_chunks(chunks, classes, n_features,
                                None if n_rows is None else int(n_rows), progress, init)

    def _fit_chunks(self, chunks: Callable[[], Iterable[Chunk]], classes: NDArray[Any],
                    n_features: int, n_rows: int | None, progress: ProgressBar | None,
                    init: list[FloatArray] | None, scale_checked: bool = False) -> LinearModel:
        """The passes of :meth:`fit_stream` over ``chunks()`` (one call per pass; a chunk's
        weights ``None``: from its labels and ``class_weight``, counted over the first pass;
        ``scale_checked``: the features' scales were checked on all the rows already)."""
        early = self._early_stopping()
        fraction = self._check_fraction()
        objective = loss_objective(self)
        floor = objective.min_target    # the smallest target the loss takes (None: any)
        seeds = spawn_seeds(self.random_state, 2)
        holdout = (StreamHoldout(fraction, int(np.random.default_rng(seeds[1]).integers(2**63)))
                   if early else None)
        passes = int(math.ceil(float(self.max_epochs)))
        bar = self._start_bar(progress, None if n_rows is None else n_rows * passes)
        run = _ChunkedRun(self, classes, n_features, seeds[0], init, scale_checked)
        held: list[tuple[Any, NDArray[Any], FloatArray | None]] = []
        self.validation_loss_: list[list[float]] = []
        self._stop_asked = False
        done = 0
        try:
            for p in range(passes):
                row = picked = 0
                for X, y, w in chunks():
                    Xc = check_matrix(X)
                    if Xc.shape[1] != n_features:
                        raise ValueError(f"a chunk has {Xc.shape[1]} features, the data "
                                         f"{n_features}; every chunk must have the same "
                                         "columns")
                    yarr = np.asarray(y).ravel()
                    n = int(Xc.shape[0])
                    if floor is not None and p == 0:
                        _check_min_target(yarr, floor, row, objective.name)
                    if holdout is not None:
                        m = holdout.mask(row, n, picked)
                        picked += int(m.sum())
                        if m.any():
                            if p == 0:
                                held.append((Xc[m], yarr[m], None if w is None else w[m]))
                            keep = ~m
                            Xc, yarr = run.rows.take(Xc, keep), yarr[keep]
                            w = None if w is None else w[keep]
                    row += n
                    if Xc.shape[0]:
                        run.chunk(Xc, yarr, w, first_pass=p == 0)
                    if bar is not None:
                        bar.update(p * (n_rows or 0) + row)
                    if self._stop_asked:    # a callback returned True: the fit ends here
                        break
                done = p + 1
                if run.setup is None:
                    raise ValueError("no rows to train on (every row was held out, or "
                                     "the data are empty)")
                run.end_race()
                if p == 0 and held:
                    run.hold_out(held)
                    held = []
                self.validation_loss_.append(run.end_pass())
                if run.all_stopped or self._stop_asked:
                    break
        finally:
            self._close_bar()
            run.close()
        return self._finish_chunks(run, done)

    def _finish_chunks(self, run: _ChunkedRun, done: int) -> LinearModel:
        setup = run.setup
        assert setup is not None
        final, whys = run.results()
        self._solvers, self._states = run.solvers, run.states
        # chunks mixed and copies made, per sub-problem (the copies themselves are dropped)
        self._mix_counts = [(m.n_mixed, m.n_copies) for m in run.mixers if m is not None]
        steps = [r.winner.step for r in run.races]
        self.steps_ = steps
        self._setup = setup = _with_raced_step(setup, steps)
        self.n_iter_ = done
        self._class_counts = run.counts
        self._finish(final)
        # converged: every sub-problem stopped on its test (a budget that ended first, even
        # one pass with nothing to compare, is not convergence)
        self.converged_ = run.all_stopped and not any(r.status is Status.DIVERGED
                                                      for r in final)
        if whys:
            quoted = "; ".join(whys[:3]) + (f"; and {len(whys) - 3} more" if len(whys) > 3
                                            else "")
            warnings.warn(f"{quoted}. More passes may lower it (max_iter); tol=None runs the "
                          "budget without this test", ConvergenceWarning, stacklevel=4)
        return self.model_

    def _new_races(self, setup: Setup, X: Any, y: NDArray[Any],
                   weights: FloatArray) -> list[StepRace]:
        """The step races of ``partial_fit`` (one per sub-problem), started on its first
        batch: they go on over the following calls until one candidate is left."""
        n_sub = n_subproblems(setup)
        seeds = [self.random_state] if n_sub == 1 else spawn_seeds(self.random_state, n_sub)
        races = []
        for j in range(n_sub):
            ysub, csub = sub_labels(setup, y, j)
            seed = seeds[j]

            def make(step: StepRule | None, seed: Any = seed) -> Solver:
                return make_solver(self, setup, seed, _ReportTo(self), step=step)

            race = StepRace(setup.step_candidates, recipes.RACE_FIRST_SEGMENT, make)

            def init(solver: Solver, y_: NDArray[Any] = ysub, c_: Any = csub) -> SolverState:
                return solver.init_state(X, y_, weights, classes=c_)

            race.start(init)
            race.fresh = True
            races.append(race)
        return races

    def _partial_race(self, X: Any, y: NDArray[Any], weights: FloatArray) -> list[SolveResult]:
        """One ``partial_fit`` call while the step races run: every candidate learns from the
        batch until one is left, which then makes the rest of the pass; the model meanwhile is
        the candidate with the lowest progressive loss so far."""
        setup = self._setup
        assert setup is not None
        if self._race is None:   # unpickled during the race
            assert self._race_checkpoints is not None
            self._race = [StepRace.restore(rec, lambda step: make_solver(
                self, setup, None, _ReportTo(self), step=step), X,
                sub_labels(setup, y, j)[0], weights)
                for j, rec in enumerate(self._race_checkpoints)]
            self._race_checkpoints = None
        results: list[SolveResult] = []
        solvers: list[Solver] = []
        states: list[SolverState] = []
        for j, race in enumerate(self._race):
            ysub, _ = sub_labels(setup, y, j)
            if not race.fresh:
                def bind(sv: Solver, st: SolverState, y_: NDArray[Any] = ysub) -> SolverState:
                    return sv.rebind(st, X, y_, weights)
                race.rebind(bind)
            race.fresh = False
            used, _ = race.advance(int(X.shape[0]))
            lead = race.winner if race.done else race.leader()
            if race.done and used < X.shape[0]:
                results.append(lead.solver.run(lead.state, max_samples=int(X.shape[0]) - used))
            else:
                results.append(lead.solver.run(lead.state, max_samples=0))
            solvers.append(lead.solver)
            states.append(lead.state)
        if all(r.done for r in self._race):
            self._setup = _with_raced_step(setup, [r.winner.step for r in self._race])
            self.steps_ = [r.winner.step for r in self._race]
            self._race = None
        else:   # still racing: the step of the model so far (each race's leader)
            self.steps_ = [(r.winner if r.done else r.leader()).step for r in self._race]
        self._solvers, self._states = solvers, states
        return results

    # ------------------------------------------------------------------ pickling
    def __getstate__(self) -> dict[str, Any]:
        """Replace the solver states (bound to the last data) by their checkpoints without the
        data-bound part: ``partial_fit`` after unpickling continues exactly (module docstring)."""
        d = self.__dict__.copy()
        if self._race is not None:   # partial_fit's step races: every candidate's state
            d["_race_checkpoints"] = [race.checkpoint() for race in self._race]
            d["_race"] = None
            d["_checkpoints"] = None
        elif self._states is not None:
            d["_checkpoints"] = [s.checkpoint(data_state=False) for s in self._states]
        d["_states"] = None
        d["_solvers"] = None
        d["_bar"] = None
        return d

    def __setstate__(self, d: dict[str, Any]) -> None:
        d.setdefault("_checkpoints", None)
        d.setdefault("_race", None)
        d.setdefault("_race_checkpoints", None)
        d.setdefault("n_jobs", None)    # pickled before n_jobs existed
        d.setdefault("parameter_mixing", False)   # pickled before mixing: it fitted without
        if d.pop("_snapshots", None) is not None:
            d["_legacy_pickle"] = True   # an older sqnopt's pickle: no solver state to continue
        self.__dict__.update(d)

    # ------------------------------------------------------------------ internals
    def _budget(self, setup: Setup) -> Budget:
        return Budget(max_epochs=self.max_epochs, tol=self.tol,
                      n_iter_no_change=self.n_iter_no_change,
                      smooth=SMOOTH in setup.objective.capabilities,
                      full_batch_phase=setup.full_batch_phase)

    def _warm_params(self, classes: NDArray[Any], n_features: int) -> list[FloatArray] | None:
        if self._params is None or self._setup is None:
            return None
        if not np.array_equal(self._setup.classes, classes) or \
                self._setup.n_features != n_features:
            raise ValueError("warm_start: the data has different classes or features than the "
                             "previous fit; set warm_start=False to start afresh")
        return [p.copy() for p in self._params]

    def _begin_partial(self, X: Any, y: NDArray[Any], weights: FloatArray) -> None:
        setup = self._setup
        assert setup is not None
        ckpts = self._checkpoints
        if getattr(self, "_legacy_pickle", False):
            raise ValueError("this Trainer was pickled by an older sqnopt, whose pickles do not "
                             "hold the solver state that partial_fit continues; fit it again "
                             "(warm_start=True starts from its coefficients)")
        n_sub = n_subproblems(setup)
        if ckpts is not None:   # unpickled: the random streams come from the checkpoints
            seeds: list[Any] = [None] * n_sub
        else:
            seeds = [self.random_state] if n_sub == 1 else spawn_seeds(self.random_state, n_sub)
        self._solvers = [make_solver(self, setup, seed, _ReportTo(self)) for seed in seeds]
        self._states = []
        for j, solver in enumerate(self._solvers):
            ysub, csub = sub_labels(setup, y, j)
            if ckpts is None:
                state = solver.init_state(X, ysub, weights, classes=csub)
            else:   # continue on this batch, as rebind continues the live state
                state = solver.restore(ckpts[j], X, ysub, weights, new_data=True)
            self._states.append(state)
        self._checkpoints = None

    def _finish(self, results: list[SolveResult]) -> None:
        setup = self._setup
        assert setup is not None and self._states is not None
        self.results_ = results
        self.histories_ = [r.history for r in results]
        self._params = [np.array(r.w) for r in results]
        self.t_ = max(int(s.counters.t) for s in self._states)
        self.classes_ = setup.classes
        self.strategy_ = setup.strategy
        self.n_features_in_ = setup.n_features
        self.model_ = build_model(setup, setup.classes, results, self.fit_intercept)

    # the solvers' callback forwards to the bar of the current call (sqnopt.training._progress)
    def _start_bar(self, progress: ProgressBar | None, total: int | None) -> ProgressBar | None:
        self._bar, self._own_bar = open_bar(progress, total, self.verbose)
        return self._bar

    def _close_bar(self) -> None:
        if self._bar is not None and getattr(self, "_own_bar", True):
            self._bar.close()
        self._bar = None

    def _on_report(self, info: IterationInfo) -> bool | None:
        stop = report(self._bar, self.callback, info)
        if stop:
            # a fit over chunks runs the solvers once per chunk: the request ends the fit,
            # not only the chunk's run (_fit_chunks reads it after each chunk)
            self._stop_asked = True
        return stop


#: A chunk of a fit: its rows, labels and weights (``None``: from the labels and
#: ``class_weight``).
Chunk = tuple[Any, NDArray[Any], "FloatArray | None"]


class _ChunkedRun:
    """The sub-problems of a fit over chunks (:meth:`Trainer._fit_chunks`): their step races,
    then the winners' passes, the held-out losses and the best iterates."""

    def __init__(self, trainer: Trainer, classes: NDArray[Any], n_features: int, seed: Any,
                 init: list[FloatArray] | None, scale_checked: bool = False) -> None:
        self.trainer = trainer
        self.scale_checked = scale_checked
        self.classes = classes
        self.n_features = n_features
        self.seed = seed
        self.init = init
        self.setup: Setup | None = None
        self.races: list[StepRace] = []
        self.solvers: list[Solver] = []
        self.states: list[SolverState] = []
        self.helds: list[HeldOut] = []
        self.counts = np.zeros(len(classes))
        self.last: list[SolveResult | None] = []
        self.best: list[float] = []
        self.best_w: list[FloatArray | None] = []
        self.ref: list[float] = []      # the held-out loss at the last improvement that counted
        self.stall: list[int] = []
        self.stopped: list[bool] = []
        self.prev: list[tuple[float, float]] = []
        self.rows = ChunkRows()     # the buffers of the chunks' kept rows
        self.mixers: list[ShardMixer | None] = []   # each sub-problem's second shard
        self.mixing = bool(trainer.parameter_mixing)

    @property
    def all_stopped(self) -> bool:
        return bool(self.stopped) and all(self.stopped)

    def _weights(self, y: NDArray[Any], w: FloatArray | None, first_pass: bool) -> FloatArray:
        t = self.trainer
        if first_pass:
            self.counts = self.counts + class_counts(y, self.classes)
        return sample_weights(y, self.classes, self.counts, w, y.shape[0], t.class_weight)

    def _start(self, X: Any, y: NDArray[Any], weights: FloatArray) -> None:
        t = self.trainer
        setup = self.setup = make_setup(t, X, self.classes, weights, regime="stream",
                                        check_scale=not self.scale_checked)
        n_sub = n_subproblems(setup)
        seeds = [self.seed] if n_sub == 1 else spawn_seeds(self.seed, n_sub)
        for j in range(n_sub):
            ysub, csub = sub_labels(setup, y, j)
            w0 = None if self.init is None else self.init[j]

            def make(step: StepRule | None, seed: Any = seeds[j]) -> Solver:
                return make_solver(t, setup, seed, _ReportTo(t), step=step)

            def init(solver: Solver, y_: NDArray[Any] = ysub, c_: Any = csub,
                     w0_: FloatArray | None = w0) -> SolverState:
                return solver._init_validated(X, y_, weights, c_, w0_)

            race = StepRace(setup.step_candidates or (None,), recipes.RACE_FIRST_SEGMENT, make)
            race.start(init)
            race.fresh = True
            self.races.append(race)
        self.last = [None] * n_sub
        self.mixers = [None] * n_sub
        self.best = [math.inf] * n_sub
        self.best_w = [None] * n_sub
        self.ref = [math.inf] * n_sub
        self.stall = [0] * n_sub
        self.stopped = [False] * n_sub
        self.prev = [(0.0, 0.0)] * n_sub

    def chunk(self, X: Any, y: NDArray[Any], w: FloatArray | None, first_pass: bool) -> None:
        """Learn from one chunk: the races while they run, then the winners."""
        check_two = self.setup is None
        weights = self._weights(y, w, first_pass)
        if check_two:
            if self.classes.shape[0]:     # (regression: no classes)
                encode_labels(y, "multiclass", n_samples=y.shape[0], classes=self.classes)
            self._start(X, y, weights)
        setup = self.setup
        assert setup is not None
        n = int(X.shape[0])
        for j, race in enumerate(self.races):
            if self.stopped[j]:
                continue
            ysub, _ = sub_labels(setup, y, j)
            rest = n
            if (self.mixing and race.done and not race.fresh
                    and mixes(self.states[j], X)):
                # two shards from the same state, averaged (the mixer binds them)
                self._run_mixed(j, X, ysub, weights, first_pass)
                continue
            if not race.fresh:   # bound to the previous chunk: move to this one
                if race.done:
                    self.solvers[j].rebind(self.states[j], X, ysub, weights)
                else:
                    def bind(sv: Solver, st: SolverState, y_: NDArray[Any] = ysub
                             ) -> SolverState:
                        return sv.rebind(st, X, y_, weights)
                    race.rebind(bind)
            race.fresh = False
            if not race.done:
                used, _ = race.advance(n)
                rest = n - used
            if race.done and (len(self.solvers) <= j
                              or self.solvers[j] is not race.winner.solver):
                self._adopt(j)
            if race.done and rest > 0:
                res = self.solvers[j].run(self.states[j], max_samples=rest)
                self.last[j] = res
                if res.status is Status.DIVERGED:
                    self._stop(j)

    def _run_mixed(self, j: int, X: Any, y: NDArray[Any], weights: FloatArray,
                   first_pass: bool) -> None:
        """Sub-problem ``j`` learns from the chunk as two shards, averaged
        (:mod:`sqnopt.training._mixing`); its result is made at the end of the fit."""
        mixer = self.mixers[j]
        if mixer is None:
            t, setup, step = self.trainer, self.setup, self.races[j].winner.step
            assert setup is not None

            def make() -> Solver:
                # the copy reports nothing (the first shard reports the solve's progress) and
                # its random stream is set from the first shard's at every chunk
                return make_solver(t, setup, 0, None,
                                   step=None if step is None else Constant(eps=step))

            mixer = self.mixers[j] = ShardMixer(make, t.n_jobs)
        ended = mixer.run(self.solvers[j], self.states[j], X, y, weights, first_pass)
        self.last[j] = ended
        if ended is not None:       # a shard diverged
            self._stop(j)

    def close(self) -> None:
        """Let the shard threads go (the end of the fit)."""
        for mixer in self.mixers:
            if mixer is not None:
                mixer.close()

    def _stop(self, j: int) -> None:
        """Sub-problem ``j`` trains no more; it stays bound to its last chunk, so the chunks
        after it are gathered into new buffers (:meth:`ChunkRows.retire`)."""
        self.stopped[j] = True
        self.rows.retire()

    def _adopt(self, j: int) -> None:
        winner = self.races[j].winner
        winner.report_divergence()
        if winner.state.diverged:
            self._stop(j)
        while len(self.solvers) <= j:
            self.solvers.append(winner.solver)
            self.states.append(winner.state)
        self.solvers[j], self.states[j] = winner.solver, winner.state

    def end_race(self) -> None:
        """After a pass: a race that ran out of rows ends with its best candidate."""
        for j, race in enumerate(self.races):
            if not race.done:
                race._cut_to_one()
                self._adopt(j)
            if race.done and (len(self.solvers) <= j or self.solvers[j] is not
                              race.winner.solver):
                self._adopt(j)

    def hold_out(self, parts: list[tuple[Any, NDArray[Any], FloatArray | None]]) -> None:
        """Bind the held-out rows collected over the first pass to each sub-problem."""
        setup = self.setup
        assert setup is not None
        X = (sp.vstack([p[0] for p in parts], format="csr") if sp.issparse(parts[0][0])
             else np.vstack([p[0] for p in parts]))
        y = np.concatenate([p[1] for p in parts])
        given = [p[2] for p in parts]
        w = None if any(g is None for g in given) else np.concatenate(
            [g for g in given if g is not None])
        weights = sample_weights(y, self.classes, self.counts, w, y.shape[0],
                                 self.trainer.class_weight)
        for j, solver in enumerate(self.solvers):
            yv, cv = sub_labels(setup, y, j)
            self.helds.append(HeldOut(solver, X, yv, weights, cv))

    def end_pass(self) -> list[float]:
        """The held-out (or, without held-out rows, the pass's progressive) loss of each
        sub-problem still training, and the stopping test on it."""
        t = self.trainer
        losses = []
        for j, state in enumerate(self.states):
            if self.stopped[j]:
                continue
            w = state.output_iterate()
            if self.helds:
                score = self.helds[j].loss(w)
            else:   # scikit-learn's training loss of a pass: its progressive loss
                now = progressive(state)
                score = (now[0] - self.prev[j][0]) / max(now[1] - self.prev[j][1], 1e-300)
                self.prev[j] = now
            losses.append(score)
            # an improvement counts when it exceeds max(tol, HELD_OUT_TOL) (relative; see
            # HELD_OUT_TOL); the model kept is the lowest loss seen all the same
            ref = self.ref[j]
            if self.best_w[j] is None or (t.tol is not None and score < ref - max(
                    t.tol, HELD_OUT_TOL) * abs(ref)):
                self.ref[j] = score
                self.best[j], self.best_w[j], self.stall[j] = score, np.array(w), 0
            else:
                self.stall[j] += 1
                if t.tol is not None and score < self.best[j]:
                    self.best[j], self.best_w[j] = score, np.array(w)
            if t.tol is not None and self.stall[j] >= t.n_iter_no_change:
                self._stop(j)
        return losses

    def results(self) -> tuple[list[SolveResult], list[str]]:
        """Each sub-problem's result, its iterate the best one seen (``tol=None``: the last),
        and why those that did not stop on their test ended."""
        t = self.trainer
        whys: list[str] = []
        final: list[SolveResult] = []
        for j, state in enumerate(self.states):
            res = self.last[j]
            if res is None:
                res = self.solvers[j].run(state, max_samples=0)
            # "still improving" needs two passes to compare: a one-pass budget (the common
            # choice for a stream) is no sign of an unfinished fit
            passes = len(t.validation_loss_)
            if t.tol is not None and not self.stopped[j] and passes >= 2 and self.stall[j] == 0:
                what = "held-out" if self.helds else "progressive"
                why = (f"the {what} loss was still improving when max_iter="
                       f"{float(t.max_epochs):g} passes ended (best {self.best[j]:.6g})")
                whys.append(why if len(self.states) == 1 else
                            f"class {self.classes[j]!r} vs rest: {why}")
            bw = self.best_w[j]
            if t.tol is not None and bw is not None and not state.diverged:
                objective = state.objective

                def value(bw: FloatArray = bw, o: Any = objective) -> float:
                    return float(o.value(bw))

                res = dataclasses.replace(res, w=bw,
                                          fun=PendingObjective(value))  # type: ignore[arg-type]
            final.append(res)
        return final, whys


def _check_min_target(y: NDArray[Any], floor: float, row0: int, loss: str) -> None:
    """Refuse a chunk whose targets go below the loss's ``min_target``, naming the sample by
    its position in the data (the chunk starts at row ``row0``), before any row is held out."""
    low = np.flatnonzero(np.asarray(y, dtype=np.float64) < floor)
    if low.size:
        i = int(low[0])
        raise ValueError(f"y: the {loss} loss needs targets >= {floor:g}, but sample "
                         f"{row0 + i} (counted from 0 in the data's order) has the target "
                         f"{float(y[i]):g}. Use loss='squared_error' or 'huber' for targets of "
                         "any sign, or shift the targets")


def _with_raced_step(setup: Setup, steps: Sequence[float | None]) -> Setup:
    """The setup with the step its race chose (the same for every sub-problem), so that the
    model describes the step that trained it."""
    if len(set(steps)) == 1 and steps[0] is not None:
        return dataclasses.replace(setup, step=Constant(eps=steps[0]))
    return setup


class _ReportTo:
    """The solvers' callback: :meth:`Trainer._on_report` through a weak reference, so that a
    trainer and its solvers form no reference cycle and are freed as soon as the last reference
    goes (a bound method would make one: trainer -> solvers -> callback -> trainer, kept with
    the training data until the cyclic garbage collector runs)."""

    __slots__ = ("_trainer",)

    def __init__(self, trainer: Trainer) -> None:
        self._trainer = weakref.ref(trainer)

    def __call__(self, info: IterationInfo) -> bool | None:
        trainer = self._trainer()
        return None if trainer is None else trainer._on_report(info)
