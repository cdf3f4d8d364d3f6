"""The :class:`Trainer`: one ``fit`` / ``partial_fit`` call from labelled data to a model.

It validates the data and the weights (:mod:`._weights`), fixes the components and the
sub-problems (:mod:`._setup`), runs each sub-problem's budget (:mod:`._epochs`) with progress
and callbacks (:mod:`._progress`) and checkpoints (:mod:`._checkpoints`), and joins the results
into a :class:`~sqnopt.model.LinearModel` (:mod:`._finish`). What it does is described in the
package docstring (:mod:`sqnopt.training`).
"""

from __future__ import annotations

import functools
import math
import warnings
import weakref
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from sqnopt.checkpoint import Checkpoint
from sqnopt.data import check_matrix, encode_labels
from sqnopt.interfaces import SMOOTH
from sqnopt.model import LinearModel
from sqnopt.progress import ProgressBar
from sqnopt.solver import IterationInfo, SolveResult, Solver, SolverState, Status
from sqnopt.solver._solver import ComponentSpec, RandomState, make_bit_generator
from sqnopt.training._checkpoints import (
    FitCheckpoints,
    check_resume,
    fit_fingerprint,
    fit_identity,
    pending_bit_generator,
    resume_records,
    solver_checkpoint,
)
from sqnopt.training._epochs import Budget, new_loop_record, run_budget
from sqnopt.training._finish import (
    ConvergenceWarning,
    build_model,
    check_majority,
    unconverged_message,
)
from sqnopt.training._progress import Callback, open_bar, report
from sqnopt.training._setup import (
    DEFAULT_CURVATURE,
    Setup,
    check_settings,
    make_setup,
    make_solver,
    n_subproblems,
    spawn_seeds,
    sub_labels,
)
from sqnopt.training._weights import (
    ClassWeight,
    check_two_classes,
    class_counts,
    sample_weights,
)

FloatArray = NDArray[np.float64]

__all__ = ["Trainer"]


class Trainer:
    """Fit a linear classifier with any registered components; see the module docstring.

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
        unconverged warns. ``tol=None`` runs the whole budget.
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

    Attributes
    ----------
    model_ : LinearModel
        The fitted model (this and the attributes below exist after ``fit`` / ``partial_fit``).
    classes_, strategy_, n_features_in_
    n_iter_ : int
        Passes made by the last ``fit`` / ``partial_fit`` call (the maximum over sub-problems).
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
        # training state (see __getstate__ for what survives pickling)
        self._setup: Setup | None = None
        self._solvers: list[Solver] | None = None
        self._states: list[SolverState] | None = None
        self._checkpoints: list[Checkpoint] | None = None
        self._class_counts: FloatArray | None = None
        self._bar: ProgressBar | None = None
        self._own_bar = True
        self._params: list[FloatArray] | None = None

    # ------------------------------------------------------------------ public API
    def fit(self, X: Any, y: ArrayLike, sample_weight: ArrayLike | None = None, *,
            progress: ProgressBar | None = None,
            checkpoint: Callable[[Checkpoint], object] | None = None,
            checkpoint_every: float = 1.0,
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
        resume
            A checkpoint ``checkpoint`` received from a ``fit`` with the same settings on the
            same data (both checked; ``max_epochs`` may differ: the budget counts from the start
            of the first fit). The fit continues where the checkpoint was taken and ends with the
            model, coefficients, counters and results the uninterrupted fit ends with; the
            histories are the same too when both fits checkpoint with the same
            ``checkpoint_every`` (a full-batch run split at checkpoints records a point at each).
        """
        Xc = check_matrix(X)
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
        init = self._warm_params(classes, Xc.shape[1]) if self.warm_start else None
        check_settings(self)
        # the settings' and the data's identities are only needed to check a resume and to
        # stamp checkpoints
        identity = fit_identity(self) if resume is not None or checkpoint is not None else {}
        fingerprint = (fit_fingerprint(Xc, yarr, classes, weights)
                       if resume is not None or checkpoint is not None else {})
        if resume is not None:
            check_resume(resume, identity, fingerprint)
        setup = make_setup(self, Xc, classes, weights)
        self._setup, self._checkpoints = setup, None
        self._class_counts = counts
        n_sub = n_subproblems(setup)
        records: list[dict[str, Any]]
        if resume is None:
            seeds = [self.random_state] if n_sub == 1 else spawn_seeds(self.random_state, n_sub)
            bitgens = [make_bit_generator(seed) for seed in seeds]
            records = [{"w0": None if init is None else init[j]} for j in range(n_sub)]
        else:
            records = resume_records(resume, n_sub)
            bitgens = [pending_bit_generator(r) for r in records]
        self._solvers = [make_solver(self, setup, bg, _ReportTo(self)) for bg in bitgens]
        self._states = []
        saver = (None if checkpoint is None else
                 FitCheckpoints(records, bitgens, identity, fingerprint, checkpoint))
        budget = self._budget(setup)
        # the budget is the bar's total only when it is the run's length; with a tolerance it is
        # a cap, and the bar shows the count and the rate instead of a misleading percentage
        cap = n_sub * int(math.ceil(float(self.max_epochs) * Xc.shape[0]))
        bar = self._start_bar(progress, cap if self.tol is None else None)
        unconverged: list[str] = []
        try:
            n_iter = 0
            results = []
            for j, solver in enumerate(self._solvers):
                ysub, csub = sub_labels(setup, yarr, j)
                rec = records[j]
                if "solver" in rec:
                    state = solver.restore(solver_checkpoint(rec["solver"]), Xc, ysub, weights)
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
                results.append(res)
                if why is not None:
                    unconverged.append(why if n_sub == 1 else
                                       f"class {classes[j]!r} vs rest: {why}")
            if saver is not None:
                saver.emit(-1, self._states[-1], {})
            if bar is not None:  # early stopping may end below the budget: end at the truth
                processed = sum(int(s.counters.n_samples) for s in self._states)
                if bar.total is not None:
                    bar.total = max(processed, 1)
                bar.base = bar.offset = 0
                bar.update(processed, force=bar.drawn)
        finally:
            self._close_bar()
        self.n_iter_ = n_iter if self.tol is not None else math.ceil(float(self.max_epochs))
        self._finish(results)
        self.converged_ = self.tol is not None and not unconverged and not any(
            r.status is Status.DIVERGED for r in results)
        if unconverged:
            warnings.warn(unconverged_message(setup.curvature, unconverged),
                          ConvergenceWarning, stacklevel=3)
        check_majority(self.model_, Xc, yarr, classes, weights, self.converged_, self.results_,
                       stacklevel=3, index=index, n_jobs=self.n_jobs)
        return self.model_

    def partial_fit(self, X: Any, y: ArrayLike, sample_weight: ArrayLike | None = None, *,
                    classes: ArrayLike | None = None,
                    progress: ProgressBar | None = None) -> LinearModel | None:
        """One pass over a new batch, continuing the whole solver state.

        ``classes`` (every label that will ever appear) is required on the first call unless
        ``fit`` was called before. A batch whose weights are all zero is ignored. Returns the
        updated model (``None`` while nothing has been learned yet).
        """
        Xc = check_matrix(X)
        known = getattr(self, "classes_", None)
        if classes is not None:
            cls = np.unique(np.asarray(classes))
            if known is not None and not np.array_equal(cls, known):
                raise ValueError(f"classes={cls.tolist()[:10]} differs from the classes of the "
                                 f"first call {known.tolist()[:10]}; pass the same classes")
        elif known is None:
            raise ValueError("classes must be passed on the first call to partial_fit (every "
                             "label that will appear, e.g. classes=np.unique(y_all))")
        else:
            cls = known
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
        if self._setup is not None and Xc.shape[1] != self._setup.n_features:
            raise ValueError(f"X has {Xc.shape[1]} features, but partial_fit was started with "
                             f"{self._setup.n_features}; pass batches with the same columns")
        if self._setup is None:
            check_settings(self)
            self._setup = make_setup(self, Xc, cls, weights)
        setup = self._setup
        bar = self._start_bar(progress, n_subproblems(setup) * Xc.shape[0])
        try:
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

    # ------------------------------------------------------------------ pickling
    def __getstate__(self) -> dict[str, Any]:
        """Replace the solver states (bound to the last data) by their checkpoints without the
        data-bound part: ``partial_fit`` after unpickling continues exactly (module docstring)."""
        d = self.__dict__.copy()
        if self._states is not None:
            d["_checkpoints"] = [s.checkpoint(data_state=False) for s in self._states]
        d["_states"] = None
        d["_solvers"] = None
        d["_bar"] = None
        return d

    def __setstate__(self, d: dict[str, Any]) -> None:
        d.setdefault("_checkpoints", None)
        d.setdefault("n_jobs", None)    # pickled before n_jobs existed
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
        return report(self._bar, self.callback, info)


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
