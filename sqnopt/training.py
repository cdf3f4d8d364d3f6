"""Training linear classifiers end to end, without scikit-learn: :class:`Trainer`.

A :class:`Trainer` turns ``(X, y)`` with any labels into one or more :class:`~sqnopt.Solver`
runs and a :class:`~sqnopt.model.LinearModel`:

* **binary** labels: one solve of the (binary) objective;
* **multiclass** labels: one solve of a multiclass objective when the loss is one (or, for
  ``loss="logloss"``, when a ``"softmax"`` objective is registered), else one binary solve per
  class (one-vs-rest; always for hinge-type losses);
* ``class_weight`` (``"balanced"`` or ``{label: weight}``) multiplies ``sample_weight``;
* the schedule, step and sampling left at ``"auto"`` come from :mod:`sqnopt.recipes`, which
  reads what the curvature model declares (secant models: growing batches with a line search,
  ending in the deterministic method; SQB: semistochastic batches; AdaGrad and SGD: minibatches
  with a step from the data);
* ``fit`` runs up to ``max_epochs`` passes and stops once the largest entry of the gradient of
  the training objective is at most ``tol`` (tested for free on every full-batch iteration, and
  after each pass of the stochastic recipes, whose pass-end objective comes with its gradient
  from one fused pass); a stochastic run whose objective stops improving for
  ``n_iter_no_change`` passes stops too. A fit that ends without meeting ``tol`` warns
  (:class:`ConvergenceWarning`) with what it reached, and so does a model whose training
  accuracy is below the majority class's;
* ``partial_fit`` makes one pass over each new batch and keeps the *whole* solver state between
  calls -- iterate and average, curvature memory, iteration counter (hence step sizes and batch
  sizes), random stream -- through :meth:`sqnopt.Solver.rebind`. Batches whose weights are all
  zero are ignored.

The scikit-learn estimators (:mod:`sqnopt.estimators`) and the ``sqnopt`` command line are thin
layers over this class.

Pickling a Trainer keeps the whole solver state of each sub-problem as a checkpoint without
the data (:meth:`sqnopt.SolverState.checkpoint`): after unpickling, ``partial_fit`` continues
exactly as it would have without the pickle -- same iterate and average, curvature memory,
counters (step sizes, batch sizes), history and random stream. ``fit`` can hand checkpoints of
the training run to a callback every few passes and resume from one on the same data
(``fit(..., checkpoint=..., resume=...)``; the command line's ``--checkpoint`` and
``--resume``): the resumed fit ends with the model of the uninterrupted one.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, Union

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from sqnopt import recipes
from sqnopt.checkpoint import Checkpoint, CheckpointError, array_digest, differences
from sqnopt.data import check_matrix, encode_labels
from sqnopt.interfaces import (
    MULTICLASS,
    PROBABILISTIC,
    SMOOTH,
    BatchSchedule,
    CurvatureModel,
    GradientEstimator,
    Objective,
    StepRule,
)
from sqnopt.model import LinearModel, Strategy
from sqnopt.progress import ProgressBar
from sqnopt.solver import IterationInfo, SolveResult, Solver, SolverState, Status
from sqnopt.solver._solver import (
    ComponentSpec,
    RandomState,
    make_bit_generator,
    resolve_component,
)

FloatArray = NDArray[np.float64]
ClassWeight = Union[None, str, Mapping[Any, float]]
Callback = Callable[[IterationInfo], Union[bool, None]]

#: Curvature model used when none is given (estimators, command line): ``"auto"`` lets
#: :func:`sqnopt.recipes.default_curvature` choose.
DEFAULT_CURVATURE = "auto"
#: Relative objective decrease between full-batch iterations below which a deterministic run
#: has converged (scikit-learn's lbfgs uses the same, ``64 * machine epsilon``).
FTOL = 64 * float(np.finfo(np.float64).eps)
#: Spread of the feature columns' scales (largest over smallest max-abs value) from which a
#: first-order stochastic recipe warns that the features should be scaled.
FEATURE_SPREAD_WARN = 1e2

__all__ = [
    "DEFAULT_CURVATURE",
    "ConvergenceWarning",
    "Trainer",
    "class_weight_vector",
]


class ConvergenceWarning(UserWarning):
    """A fit ended without meeting its tolerance, or with a model worse than predicting the
    majority class; the message says what was reached and what to change."""


def class_weight_vector(class_weight: ClassWeight, classes: NDArray[Any],
                        counts: NDArray[np.float64]) -> FloatArray:
    """Weight of each class (aligned with ``classes``).

    ``"balanced"`` gives ``n / (K * count_k)`` from ``counts`` (classes not seen yet get 1);
    a mapping gives its value for the labels it names and 1 for the others.
    """
    k = len(classes)
    if class_weight is None:
        return np.ones(k)
    if isinstance(class_weight, str):
        if class_weight != "balanced":
            raise ValueError(f"class_weight must be None, 'balanced' or a dict "
                             f"{{label: weight}}; got {class_weight!r}")
        total = float(counts.sum())
        out = np.ones(k)
        seen = counts > 0
        out[seen] = total / (k * counts[seen])
        return out
    if not isinstance(class_weight, Mapping):
        raise TypeError(f"class_weight must be None, 'balanced' or a dict {{label: weight}}; "
                        f"got {type(class_weight).__name__}")
    out = np.ones(k)
    for label, weight in class_weight.items():
        hit = np.flatnonzero(classes == label)
        if hit.size == 0:
            raise ValueError(f"class_weight names the label {label!r}, which is not among the "
                             f"classes {classes.tolist()[:10]}")
        w = float(weight)
        if not math.isfinite(w) or w < 0:
            raise ValueError(f"class_weight[{label!r}] must be a finite number >= 0, got {weight!r}")
        out[hit[0]] = w
    return out


def _spawn(random_state: RandomState, k: int) -> list[Any]:
    """``k`` independent seeds derived from ``random_state``."""
    if isinstance(random_state, np.random.SeedSequence):
        return list(random_state.spawn(k))
    if isinstance(random_state, np.random.RandomState):
        entropy: Any = int(random_state.randint(0, 2**31 - 1))
    elif isinstance(random_state, np.random.Generator):
        entropy = int(random_state.integers(0, 2**63 - 1))
    elif isinstance(random_state, np.random.BitGenerator):
        entropy = int(np.random.Generator(random_state).integers(0, 2**63 - 1))
    else:
        entropy = random_state
    return list(np.random.SeedSequence(entropy).spawn(k))


def _objective_with_lam(spec: ComponentSpec, lam: float) -> Objective:
    """The objective of ``spec`` with ``lam`` as its regularisation."""
    if isinstance(spec, str):
        return resolve_component("objective", (spec, {"lam": lam}), Objective)  # type: ignore[no-any-return]
    if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], str):
        params = dict(spec[1])
        params["lam"] = lam
        return resolve_component("objective", (spec[0], params), Objective)  # type: ignore[no-any-return]
    obj: Objective = resolve_component("objective", spec, Objective)
    if float(obj.lam) == lam:
        return obj
    if hasattr(obj, "__dataclass_fields__"):
        replace: Any = dataclasses.replace
        replaced: Objective = replace(obj, lam=lam)
        return replaced
    raise ValueError(f"loss {obj.describe()} has lam={obj.lam} but alpha={lam}; set alpha to the "
                     "regularisation you want")


@dataclasses.dataclass(frozen=True)
class _Setup:
    """What is fixed once training starts (resolved components and the label layout)."""

    objective: Objective
    curvature: CurvatureModel
    gradient: GradientEstimator
    schedule: BatchSchedule
    curvature_schedule: BatchSchedule | None
    step: StepRule
    sampling: Literal["uniform", "shuffle", "subset", "weighted"]
    full_batch_phase: bool
    report_every: int
    strategy: Strategy
    classes: NDArray[Any]
    n_features: int


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
        self.path = path
        # training state (see __getstate__ for what survives pickling)
        self._setup: _Setup | None = None
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
        _, classes = encode_labels(y, "multiclass", n_samples=Xc.shape[0])
        yarr = np.asarray(y).ravel()
        counts = np.array([np.sum(yarr == c) for c in classes], dtype=np.float64)
        weights = self._weights(yarr, classes, counts, sample_weight, Xc.shape[0])
        if not np.any(weights > 0):
            raise ValueError("sample_weight: all weights are zero (after class_weight). Give at "
                             "least one sample a positive weight")
        positive = [c for c in classes if np.any(weights[yarr == c] > 0)]
        if len(positive) < 2:
            only = positive[0].item() if hasattr(positive[0], "item") else positive[0]
            raise ValueError(f"only one class ({only!r}) has samples with positive "
                             "weight; a classifier needs at least two classes")
        if checkpoint is not None and not callable(checkpoint):
            raise TypeError(f"checkpoint must be a callable (it receives each Checkpoint), got "
                            f"{type(checkpoint).__name__}")
        if not (isinstance(checkpoint_every, (int, float, np.number))
                and math.isfinite(checkpoint_every) and checkpoint_every > 0):
            raise ValueError(f"checkpoint_every must be a number of passes > 0, got "
                             f"{checkpoint_every!r}")
        init = self._warm_params(classes, Xc.shape[1]) if self.warm_start else None
        self._check_params()
        identity = self._fit_identity()
        # the data's identity is only needed to check a resume and to stamp checkpoints
        fingerprint = (_fit_fingerprint(Xc, yarr, classes, weights)
                       if resume is not None or checkpoint is not None else {})
        if resume is not None:
            _check_resume(resume, identity, fingerprint)
        setup = self._make_setup(Xc, classes, weights)
        self._setup, self._checkpoints = setup, None
        self._class_counts = counts
        n_sub = 1 if setup.strategy != "ovr" else len(classes)
        records: list[dict[str, Any]]
        if resume is None:
            seeds = [self.random_state] if n_sub == 1 else _spawn(self.random_state, n_sub)
            bitgens = [make_bit_generator(seed) for seed in seeds]
            records = [{"w0": None if init is None else init[j]} for j in range(n_sub)]
        else:
            records = _resume_records(resume, n_sub)
            bitgens = [_pending_bit_generator(r) for r in records]
        self._solvers = [self._make_solver(setup, bg) for bg in bitgens]
        self._states = []
        epochs = math.ceil(float(self.max_epochs))
        # the budget is the bar's total only when it is the run's length; with a tolerance it is
        # a cap, and the bar shows the count and the rate instead of a misleading percentage
        budget = n_sub * int(math.ceil(float(self.max_epochs) * Xc.shape[0]))
        bar = self._start_bar(progress, budget if self.tol is None else None)
        unconverged: list[str] = []
        emit: Callable[[int, SolverState, dict[str, Any]], None] | None = None
        if checkpoint is not None:
            def emit(j: int, state: SolverState, loop: dict[str, Any]) -> None:
                subs: list[dict[str, Any]] = []
                for k, rec in enumerate(records):
                    if k == j:
                        rec = {"solver": _checkpoint_dict(state.checkpoint()),
                               "loop": dict(loop)}
                    elif "solver" not in rec:
                        rec = {"w0": rec.get("w0"),
                               "bit_generator": copy.deepcopy(bitgens[k].state)}
                    subs.append(rec)
                assert checkpoint is not None
                checkpoint(Checkpoint(kind="trainer", identity=identity, data=fingerprint,
                                      state={"subs": subs}))
        try:
            n_iter = 0
            results = []
            for j, solver in enumerate(self._solvers):
                ysub, csub = self._sub_labels(setup, yarr, j)
                rec = records[j]
                if "solver" in rec:
                    state = solver.restore(_checkpoint_of(rec["solver"]), Xc, ysub, weights)
                    loop: dict[str, Any] = dict(rec["loop"])
                else:
                    state = solver.init_state(Xc, ysub, weights, classes=csub, w0=rec.get("w0"))
                    loop = _new_loop_record(state)
                self._states.append(state)
                if bar is not None:  # what the sub-problems before this one processed
                    bar.offset = sum(int(s.counters.n_samples) for s in self._states[:-1])
                step_emit = None if emit is None else functools.partial(emit, j, state)
                done, res, why = self._run_epochs(solver, state, bar, loop, step_emit,
                                                  float(checkpoint_every))
                if emit is not None:
                    records[j] = {"solver": _checkpoint_dict(state.checkpoint()), "loop": loop}
                n_iter = max(n_iter, done)
                results.append(res)
                if why is not None:
                    unconverged.append(why if n_sub == 1 else
                                       f"class {classes[j]!r} vs rest: {why}")
            if emit is not None:
                emit(-1, self._states[-1], {})
            if bar is not None:  # early stopping may end below the budget: end at the truth
                processed = sum(int(s.counters.n_samples) for s in self._states)
                if bar.total is not None:
                    bar.total = max(processed, 1)
                bar.base = bar.offset = 0
                bar.update(processed, force=bar.drawn)
        finally:
            self._close_bar()
        self.n_iter_ = n_iter if self.tol is not None else epochs
        self._finish(results)
        self.converged_ = self.tol is not None and not unconverged and not any(
            r.status is Status.DIVERGED for r in results)
        if unconverged:
            warnings.warn(f"{setup.curvature.name or type(setup.curvature).__name__} did not "
                          "converge: "
                          + "; ".join(unconverged[:3])
                          + (f" (and {len(unconverged) - 3} more)" if len(unconverged) > 3 else "")
                          + ". Increase max_iter, loosen tol, or use curvature='lbfgs' (solves to "
                          "tol on full batches).", ConvergenceWarning, stacklevel=3)
        self._check_majority(Xc, yarr, classes, weights)
        return self.model_

    def _check_majority(self, X: Any, y: NDArray[Any], classes: NDArray[Any],
                        weights: FloatArray) -> None:
        """Warn when the model's weighted training accuracy is below that of predicting the
        heaviest class: a failed solve when it did not converge, else a model (and data) no
        better than a constant."""
        pred = self.model_.predict(X)
        total = float(np.sum(weights))
        acc = float(np.sum(weights * (pred == y))) / total
        majority = max(float(np.sum(weights[y == c])) for c in classes) / total
        if acc >= majority - 1e-12:
            return
        if self.converged_:
            msg = (f"the fitted model's training accuracy {acc:.4f} is below the majority "
                   f"class's {majority:.4f}, though the solve converged: at this alpha the "
                   "optimum of the loss is no better than predicting a constant (features "
                   "without signal, or alpha too large)")
        else:
            msg = (f"the fitted model's training accuracy {acc:.4f} is below the majority "
                   f"class's {majority:.4f}: the solve failed "
                   f"({'; '.join(r.message for r in self.results_)[:300]}). Use the defaults "
                   "(curvature='auto'), a smaller step, or centred and scaled features")
        warnings.warn(msg, ConvergenceWarning, stacklevel=3)

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
        counts = self._class_counts + np.array([np.sum(yarr == c) for c in cls], dtype=np.float64)
        weights = self._weights(yarr, cls, counts, sample_weight, Xc.shape[0])
        if not np.any(weights > 0):
            return getattr(self, "model_", None)  # nothing to learn from this batch
        self._class_counts = counts
        if self._setup is not None and Xc.shape[1] != self._setup.n_features:
            raise ValueError(f"X has {Xc.shape[1]} features, but partial_fit was started with "
                             f"{self._setup.n_features}; pass batches with the same columns")
        if self._setup is None:
            self._check_params()
            self._setup = self._make_setup(Xc, cls, weights)
        setup = self._setup
        n_sub = 1 if setup.strategy != "ovr" else len(cls)
        bar = self._start_bar(progress, n_sub * Xc.shape[0])
        try:
            if self._states is None:
                self._begin_partial(Xc, yarr, weights)
            else:
                assert self._solvers is not None
                for j, (solver, state) in enumerate(zip(self._solvers, self._states)):
                    ysub, _ = self._sub_labels(setup, yarr, j)
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
        if d.pop("_snapshots", None) is not None:
            d["_legacy_pickle"] = True   # an older sqnopt's pickle: no solver state to continue
        self.__dict__.update(d)

    # ------------------------------------------------------------------ internals
    def _check_params(self) -> None:
        if self.multiclass not in ("auto", "ovr", "multinomial"):
            raise ValueError(f"multiclass must be 'auto', 'ovr' or 'multinomial', got "
                             f"{self.multiclass!r}")
        a = self.alpha
        if not isinstance(a, (int, float, np.number)) or not math.isfinite(a) or a < 0:
            raise ValueError(f"alpha must be a finite number >= 0, got {a!r}")
        me = self.max_epochs
        if not isinstance(me, (int, float, np.number)) or not math.isfinite(me) or me <= 0:
            raise ValueError(f"max_epochs (max_iter) must be a number > 0, got {me!r}")
        if self.tol is not None and not (isinstance(self.tol, (int, float, np.number))
                                         and math.isfinite(self.tol)):
            raise ValueError(f"tol must be a finite number or None, got {self.tol!r}")
        if not isinstance(self.n_iter_no_change, (int, np.integer)) or self.n_iter_no_change < 1:
            raise ValueError(f"n_iter_no_change must be an integer >= 1, got "
                             f"{self.n_iter_no_change!r}")

    def _weights(self, y: NDArray[Any], classes: NDArray[Any], counts: FloatArray,
                 sample_weight: ArrayLike | None, n: int) -> FloatArray:
        if sample_weight is None:
            sw = np.ones(n)
        else:
            sw = np.asarray(sample_weight)
            if sw.ndim == 0:
                sw = np.full(n, float(sw))
            if sw.dtype.kind not in "biuf":
                raise TypeError(f"sample_weight: unsupported dtype {sw.dtype}; pass numbers")
            sw = np.array(sw, dtype=np.float64)
            if sw.shape != (n,):
                raise ValueError(f"sample_weight has shape {sw.shape} but X has {n} samples. "
                                 "Pass one weight per sample")
            if not np.all(np.isfinite(sw)) or np.any(sw < 0):
                raise ValueError("sample_weight must be finite and >= 0")
        cw = class_weight_vector(self.class_weight, classes, counts)
        if np.any(cw != 1.0):
            sw = sw * cw[np.searchsorted(classes, y)]
        return sw

    def _warm_params(self, classes: NDArray[Any], n_features: int) -> list[FloatArray] | None:
        if self._params is None or self._setup is None:
            return None
        if not np.array_equal(self._setup.classes, classes) or \
                self._setup.n_features != n_features:
            raise ValueError("warm_start: the data has different classes or features than the "
                             "previous fit; set warm_start=False to start afresh")
        return [p.copy() for p in self._params]

    def _make_setup(self, X: Any, classes: NDArray[Any], weights: FloatArray) -> _Setup:
        lam = float(self.alpha)
        objective = _objective_with_lam(self.loss, lam)
        k = len(classes)
        strategy: Strategy
        if objective.label_kind == "multiclass":
            if self.multiclass == "ovr":
                raise ValueError(f"multiclass='ovr' needs a binary loss; {objective.describe()} "
                                 "is multiclass")
            strategy = "multinomial"
        elif k == 2:
            strategy = "binary"
        elif self.multiclass == "ovr":
            strategy = "ovr"
        else:
            multi = objective.with_capability(MULTICLASS)
            if multi is not None and multi.label_kind == "multiclass":
                objective = multi
                strategy = "multinomial"
            elif self.multiclass == "multinomial":
                raise ValueError(f"multiclass='multinomial': loss {objective.name!r} has no "
                                 "multiclass form; use multiclass='ovr'")
            else:
                strategy = "ovr"
        if isinstance(self.curvature, str) and self.curvature == "auto":
            curvature: CurvatureModel = recipes.default_curvature(objective, X, k)
            by_name = True
        else:
            curvature = resolve_component("curvature", self.curvature, CurvatureModel)
            by_name = isinstance(self.curvature, str)
        schedule: BatchSchedule | str = (
            self.schedule if isinstance(self.schedule, str) and self.schedule == "auto"
            else resolve_component("schedule", self.schedule, BatchSchedule))
        step: StepRule | str = (
            self.step if isinstance(self.step, str) and self.step == "auto"
            else resolve_component("step", self.step, StepRule))
        gw = weights / np.mean(weights) if self.sampling != "weighted" else np.ones_like(weights)
        gradient: GradientEstimator | str = (
            self.gradient if isinstance(self.gradient, str) and self.gradient == "auto"
            else resolve_component("gradient", self.gradient, GradientEstimator))
        recipe = recipes.choose(objective, curvature, X, gw, fit_intercept=self.fit_intercept is True,
                                schedule=schedule, step=step, sampling=self.sampling,
                                gradient=gradient, curvature_by_name=by_name)
        self._warn_feature_scale(X, recipe, self.fit_intercept is True)
        return _Setup(objective=recipe.objective, curvature=recipe.curvature,
                      gradient=recipe.gradient,
                      schedule=recipe.schedule, curvature_schedule=recipe.curvature_schedule,
                      step=recipe.step, sampling=recipe.sampling,
                      full_batch_phase=recipe.full_batch_phase,
                      report_every=recipe.report_every, strategy=strategy, classes=classes,
                      n_features=int(X.shape[1]))

    @staticmethod
    def _warn_feature_scale(X: Any, recipe: recipes.Recipe, intercept: bool) -> None:
        """Warn once when a first-order stochastic recipe (SGD, AdaGrad: one step size for
        every coordinate) meets columns -- the intercept's constant among them -- whose scales
        differ by orders of magnitude: conditioning such methods feel and curvature models
        undo."""
        if recipe.full_batch_phase or recipe.curvature.direction_scale == "newton":
            return
        spread = recipes.feature_scale_spread(X, intercept)
        if spread >= FEATURE_SPREAD_WARN:
            warnings.warn(
                f"the largest absolute values of the feature columns differ by a factor of "
                f"{spread:.3g}: first-order stochastic steps ({recipe.curvature.describe()}) "
                "converge slowly on such data. Scale the features (e.g. scikit-learn's "
                "StandardScaler for dense, MaxAbsScaler for sparse data) or use a curvature "
                "model (curvature='lbfgs')", ConvergenceWarning, stacklevel=4)

    def _make_solver(self, setup: _Setup, random_state: Any) -> Solver:
        history = self.history_every if self.history_every is not None else (0,)
        report = setup.report_every if self.report_every is None else int(self.report_every)
        return Solver(objective=setup.objective, curvature=setup.curvature,
                      gradient=setup.gradient,
                      schedule=setup.schedule, curvature_schedule=setup.curvature_schedule,
                      step=setup.step, projection=self.projection,
                      fit_intercept=self.fit_intercept, average=self.average,
                      sampling=setup.sampling, random_state=random_state,
                      report_every=report, history_every=history,
                      record_grad_norm=(not setup.full_batch_phase and self.tol is not None
                                        and SMOOTH in setup.objective.capabilities),
                      callback=self._on_report, path=self.path)

    def _sub_labels(self, setup: _Setup, y: NDArray[Any], j: int) -> tuple[Any, NDArray[Any]]:
        if setup.strategy == "ovr":
            return np.where(y == setup.classes[j], 1.0, -1.0), np.array([-1.0, 1.0])
        return y, setup.classes

    def _begin_partial(self, X: Any, y: NDArray[Any], weights: FloatArray) -> None:
        setup = self._setup
        assert setup is not None
        ckpts = self._checkpoints
        if getattr(self, "_legacy_pickle", False):
            raise ValueError("this Trainer was pickled by an older sqnopt, whose pickles do not "
                             "hold the solver state that partial_fit continues; fit it again "
                             "(warm_start=True starts from its coefficients)")
        n_sub = 1 if setup.strategy != "ovr" else len(setup.classes)
        if ckpts is not None:   # unpickled: the random streams come from the checkpoints
            seeds: list[Any] = [None] * n_sub
        else:
            seeds = [self.random_state] if n_sub == 1 else _spawn(self.random_state, n_sub)
        self._solvers = [self._make_solver(setup, seed) for seed in seeds]
        self._states = []
        for j, solver in enumerate(self._solvers):
            ysub, csub = self._sub_labels(setup, y, j)
            if ckpts is None:
                state = solver.init_state(X, ysub, weights, classes=csub)
            else:   # continue on this batch, as rebind continues the live state
                state = solver.restore(ckpts[j], X, ysub, weights, new_data=True)
            self._states.append(state)
        self._checkpoints = None

    def _run_epochs(self, solver: Solver, state: SolverState, bar: ProgressBar | None,
                    loop: dict[str, Any],
                    emit: Callable[[dict[str, Any]], None] | None = None,
                    every: float = 1.0) -> tuple[int, SolveResult, str | None]:
        """Run ``fit``'s budget; returns the passes made, the last result and, when the run
        did not meet ``tol``, why (for the warning).

        ``loop`` is the fit's progress on this sub-problem (:func:`_new_loop_record`), updated
        in place; a fit resumed from a checkpoint passes the checkpointed one and continues
        from it. ``emit(loop)`` is called every ``every`` passes with the state between two
        runs (the caller takes the checkpoint)."""
        total = float(self.max_epochs)
        setup = self._setup
        assert setup is not None
        p0 = float(loop["p0"])
        if setup.full_batch_phase or self.tol is None:
            tol = None if self.tol is None else float(self.tol)
            kw: dict[str, Any] = {"gtol": tol, "ftol": FTOL if tol is not None else None}
            res: SolveResult | None = None
            if emit is None and loop["last"] is None:
                res = solver.run(state, max_epochs=total, **kw)
                loop["last"] = _summary(res)
            else:
                # runs of ``every`` passes, stopped at the sample count one run of the whole
                # budget stops at: the same iterates (only the history gains a point per run)
                s0 = int(loop["s0"])
                target = s0 + int(math.ceil(total * state.data.n_samples))
                chunk = max(1, int(math.ceil(every * state.data.n_samples)))
                while not loop["ended"] and state.counters.n_samples < target:
                    n = int(state.counters.n_samples)
                    stop = target if emit is None else \
                        min(target, s0 + chunk * ((n - s0) // chunk + 1))
                    res = solver.run(state, max_samples=stop - n, **kw)
                    if res.status is not Status.MAX_SAMPLES:
                        loop["ended"] = True
                    elif state.counters.n_samples >= target:
                        res = dataclasses.replace(
                            res, message=f"reached max_samples={target - s0} samples processed")
                    loop["last"] = _summary(res)
                    if emit is not None and not loop["ended"] and \
                            state.counters.n_samples < target:
                        emit(loop)
                if res is None:     # resumed with nothing left to run
                    res = _rebuild_result(solver, state, loop["last"])
            done = int(math.ceil(state.effective_passes() - p0 - 1e-9))
            if tol is None or res.success or res.status is Status.DIVERGED:
                return done, res, None
            return done, res, (f"stopped at max_iter={self.max_epochs:g} passes "
                               f"({res.message}); largest gradient entry "
                               f"{res.grad_norm:.3g} > tol={tol:g}")
        tol = float(self.tol)
        done = int(loop["done"])
        if loop["total"] is not None and loop["budget"] == total:
            total = float(loop["total"])    # the remaining budget, exactly as it was counted
        else:
            total -= done
        best, stall = float(loop["best"]), int(loop["stall"])
        previous, change = float(loop["previous"]), float(loop["change"])
        if loop["ended"]:                   # resumed after the fit had stopped
            return done, _rebuild_result(solver, state, loop["last"]), loop["why"]
        budget = float(self.max_epochs)
        last: SolveResult | None = None

        def keep(res: SolveResult, ended: bool, why: str | None) -> None:
            loop.update(done=done, total=total, budget=budget, best=best, stall=stall,
                        previous=previous, change=change, ended=ended, why=why,
                        last=_summary(res))

        while total > 0:
            last = res = solver.run(state, max_epochs=min(1.0, total))
            total -= 1.0
            done += 1
            if bar is not None:
                bar.set_objective(res.fun)
            if res.status is Status.DIVERGED:
                keep(res, True, None)
                return done, res, None
            gnorm = float(res.history.grad_norm[-1]) if len(res.history) else math.nan
            if gnorm <= tol and SMOOTH in setup.objective.capabilities:
                keep(res, True, None)
                return done, res, None
            change = (previous - res.fun) / max(abs(res.fun), 1e-300)
            previous = res.fun
            stall = stall + 1 if res.fun > best - tol * max(abs(best), 1.0) else 0
            best = min(best, res.fun)
            if stall >= self.n_iter_no_change:
                if SMOOTH not in setup.objective.capabilities:
                    keep(res, True, None)
                    return done, res, None     # a subgradient never vanishes: stagnation is
                                               # the convergence test (as SGDClassifier's)
                why = (f"the objective stopped improving for {self.n_iter_no_change} passes "
                       f"(F = {res.fun:.6g}, relative change in the last pass {change:.2g}) with "
                       f"the largest gradient entry at {gnorm:.3g} > tol={tol:g}: the stochastic "
                       "steps reached their noise floor")
                keep(res, True, why)
                return done, res, why
            keep(res, False, None)
            if emit is not None and total > 0 and \
                    math.floor(done / every) > math.floor((done - 1) / every):
                emit(loop)
        res = last if last is not None else _rebuild_result(solver, state, loop["last"])
        gnorm = float(res.history.grad_norm[-1]) if len(res.history) else math.nan
        return done, res, (f"stopped at max_iter={self.max_epochs:g} passes with the largest "
                           f"gradient entry at {gnorm:.3g} > tol={tol:g} (F = {res.fun:.6g}, "
                           f"relative change in the last pass {change:.2g})")

    def _fit_identity(self) -> dict[str, Any]:
        """The settings a training checkpoint belongs to (the budget, reporting, progress and
        callbacks may change between a fit and its resumption)."""
        rs = self.random_state
        ident = {name: _setting_identity(getattr(self, name)) for name in (
            "loss", "alpha", "curvature", "gradient", "schedule", "step", "projection",
            "fit_intercept", "average", "sampling", "multiclass", "class_weight", "tol",
            "n_iter_no_change", "path")}
        ident["random_state"] = repr(rs) if rs is None or isinstance(rs, (int, np.integer)) \
            else type(rs).__name__
        return ident

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
        if setup.strategy == "ovr":
            coef = np.vstack([np.atleast_2d(r.coef) for r in results])
            icpt = np.array([float(np.asarray(r.intercept)) for r in results])
        elif setup.strategy == "multinomial":
            coef = np.atleast_2d(results[0].coef)
            icpt = np.atleast_1d(np.asarray(results[0].intercept, dtype=np.float64))
            if len(setup.classes) == 2:  # two softmax blocks -> one score difference
                coef, icpt = (coef[1] - coef[0])[None, :], icpt[1:] - icpt[:1]
        else:
            coef = np.atleast_2d(results[0].coef)
            icpt = np.atleast_1d(np.asarray(results[0].intercept, dtype=np.float64))
        info = {"objective": setup.objective.describe(),
                "gradient": setup.gradient.describe(),
                "curvature": setup.curvature.describe(),
                "schedule": setup.schedule.describe(), "step": setup.step.describe(),
                "fit_intercept": bool(self.fit_intercept), "strategy": setup.strategy}
        self.model_ = LinearModel(coef=coef, intercept=icpt, classes=setup.classes,
                                  strategy=setup.strategy, loss=setup.objective.name,
                                  probabilistic=PROBABILISTIC in setup.objective.capabilities,
                                  info=info)

    # progress bar plumbing: the solvers' callback forwards to the bar of the current call
    # A bar passed in by the caller stays open (the caller closes it, e.g. after a stream of
    # partial_fit calls); a bar made here for ``verbose`` is closed at the end of the call.
    def _start_bar(self, progress: ProgressBar | None, total: int | None) -> ProgressBar | None:
        self._own_bar = progress is None
        if progress is not None:
            self._bar = progress
            if progress.total is None and total is not None:
                progress.total = max(total, 1)
        elif self.verbose and int(self.verbose) >= 1:
            self._bar = ProgressBar(total=total)
        else:
            self._bar = None
        return self._bar

    def _close_bar(self) -> None:
        if self._bar is not None and getattr(self, "_own_bar", True):
            self._bar.close()
        self._bar = None

    def _on_report(self, info: IterationInfo) -> bool | None:
        if self._bar is not None:
            self._bar(info)
        cb = self.callback
        if cb is None:
            return None
        stop = False
        for f in (cb if isinstance(cb, Sequence) else (cb,)):
            stop = bool(f(info)) or stop
        return stop


# ---------------------------------------------------------------------------- fit checkpoints
def _new_loop_record(state: SolverState) -> dict[str, Any]:
    """The progress of ``fit`` on one sub-problem, before its first run (JSON-able)."""
    return {"s0": int(state.counters.n_samples), "p0": float(state.effective_passes()),
            "done": 0, "total": None, "budget": None, "best": math.inf, "stall": 0,
            "previous": math.nan, "change": math.nan, "ended": False, "why": None,
            "last": None}


def _setting_identity(value: Any) -> str:
    """A setting as text that is the same in every process: plain values (and specs made of
    them) by ``repr``, component objects by class and ``describe()`` (a class without its own
    ``__repr__`` would show its memory address)."""
    if value is None or isinstance(value, (str, bool, int, float, np.number)):
        return repr(value)
    if isinstance(value, (tuple, list)):
        return "(" + ", ".join(_setting_identity(v) for v in value) + ")"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_setting_identity(k)}: {_setting_identity(v)}"
                               for k, v in value.items()) + "}"
    describe = getattr(value, "describe", None)
    text = describe() if callable(describe) else repr(value)
    return f"{type(value).__module__}.{type(value).__qualname__}: {text}"


def _summary(res: SolveResult) -> dict[str, Any]:
    """What a result adds to its state (the rest is rebuilt from a restored state)."""
    return {"status": res.status.value, "message": res.message, "fun": float(res.fun),
            "grad_norm": float(res.grad_norm)}


def _rebuild_result(solver: Solver, state: SolverState, last: Any) -> SolveResult:
    """The result the run that left ``state`` returned (a fit resumed with no run left)."""
    if not isinstance(last, dict):
        raise CheckpointError("the training checkpoint has no result of its last run")
    return solver._result(state, Status(last["status"]), str(last["message"]),
                          float(last["fun"]), float(last["grad_norm"]))


def _checkpoint_dict(ck: Checkpoint) -> dict[str, Any]:
    return {"identity": ck.identity, "data": ck.data, "state": ck.state, "version": ck.version}


def _checkpoint_of(d: Any) -> Checkpoint:
    if not isinstance(d, dict) or not {"identity", "data", "state"} <= set(d):
        raise CheckpointError("a sub-problem's solver checkpoint is missing or malformed")
    return Checkpoint(kind="solver", identity=d["identity"], data=d["data"], state=d["state"],
                      version=int(d.get("version", 1)))


def _fit_fingerprint(X: Any, y: NDArray[Any], classes: NDArray[Any],
                     weights: FloatArray) -> dict[str, Any]:
    """Identity of ``fit``'s data: shape, storage, labels and weights (a hash of a sample)."""
    sparse = bool(sp.issparse(X))
    parts = [X.data, X.indices, X.indptr] if sparse else [X]
    codes = np.searchsorted(classes, y)
    return {"n_samples": int(X.shape[0]), "n_features": int(X.shape[1]), "dtype": str(X.dtype),
            "sparse": sparse, "classes": repr(np.asarray(classes).tolist()),
            "digest": array_digest(*parts, codes, weights)}


def _check_resume(resume: Any, identity: dict[str, Any], fingerprint: dict[str, Any]) -> None:
    if not isinstance(resume, Checkpoint):
        raise TypeError(f"resume must be a sqnopt.checkpoint.Checkpoint, got "
                        f"{type(resume).__name__}")
    if resume.kind != "trainer":
        raise CheckpointError(f"resume: this is a checkpoint of a {resume.kind!r}, not of a "
                              "Trainer fit (Solver checkpoints go to Solver.restore)")
    diffs = differences(resume.identity, identity)
    if diffs:
        raise CheckpointError("resume: the checkpoint was written by a fit with other settings ("
                              + "; ".join(diffs) + "). Resume with the same settings")
    diffs = differences(resume.data, fingerprint)
    if diffs:
        raise CheckpointError("resume: the checkpoint was written by a fit on other data ("
                              + "; ".join(diffs) + "). Resume on the same data")


def _resume_records(resume: Checkpoint, n_sub: int) -> list[dict[str, Any]]:
    subs = resume.state.get("subs")
    if not isinstance(subs, list) or len(subs) != n_sub or not all(
            isinstance(r, dict) and ("solver" in r or "bit_generator" in r) for r in subs):
        raise CheckpointError(f"resume: the checkpoint does not hold the {n_sub} sub-problem(s) "
                              "of this fit")
    return [dict(r) for r in subs]


def _pending_bit_generator(rec: dict[str, Any]) -> np.random.BitGenerator:
    """The random stream of a sub-problem that had not started when the checkpoint was taken
    (a started one restores its own; it gets a placeholder)."""
    saved = rec.get("bit_generator")
    if saved is None:
        return np.random.PCG64(0)
    name = saved.get("bit_generator") if isinstance(saved, dict) else None
    cls = getattr(np.random, name, None) if isinstance(name, str) else None
    if not (isinstance(cls, type) and issubclass(cls, np.random.BitGenerator)):
        raise CheckpointError(f"resume: unknown bit generator {name!r} in the checkpoint")
    bitgen = cls()
    try:
        bitgen.state = copy.deepcopy(saved)
    except (TypeError, ValueError, KeyError) as exc:
        raise CheckpointError(f"resume: a sub-problem's random stream does not load ({exc})") \
            from None
    return bitgen
