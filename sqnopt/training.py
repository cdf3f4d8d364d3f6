"""Training linear classifiers end to end, without scikit-learn: :class:`Trainer`.

A :class:`Trainer` turns ``(X, y)`` with any labels into one or more :class:`~sqnopt.Solver`
runs and a :class:`~sqnopt.model.LinearModel`:

* **binary** labels: one solve of the (binary) objective;
* **multiclass** labels: one solve of a multiclass objective when the loss is one (or, for
  ``loss="logloss"``, when a ``"softmax"`` objective is registered), else one binary solve per
  class (one-vs-rest; always for hinge-type losses);
* ``class_weight`` (``"balanced"`` or ``{label: weight}``) multiplies ``sample_weight``;
* ``fit`` runs up to ``max_epochs`` passes, stopping early when the training objective has not
  improved by ``tol`` for ``n_iter_no_change`` consecutive passes (as scikit-learn's SGD does);
* ``partial_fit`` makes one pass over each new batch and keeps the *whole* solver state between
  calls -- iterate and average, curvature memory, iteration counter (hence step sizes and batch
  sizes), random stream -- through :meth:`sqnopt.Solver.rebind`. Batches whose weights are all
  zero are ignored.

The scikit-learn estimators (:mod:`sqnopt.estimators`) and the ``sqnopt`` command line are thin
layers over this class.

Pickling a fitted Trainer keeps the coefficients, counters and random stream, but not the
compiled kernels: after unpickling, ``partial_fit`` continues from the same iterate, iteration
counter (step sizes, batch sizes, averaging) and random stream, with an *empty curvature memory*
(e.g. L-BFGS pairs are relearned) and, for ``sampling="shuffle"``, a fresh permutation.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, Union

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from sqnopt.data import check_matrix, encode_labels
from sqnopt.interfaces import BatchSchedule, CurvatureModel, Objective, Problem, StepRule
from sqnopt.model import LinearModel, Strategy
from sqnopt.progress import ProgressBar
from sqnopt.registry import get_registry
from sqnopt.schedules import Fixed
from sqnopt.solver import IterationInfo, SolveResult, Solver, SolverState
from sqnopt.solver._solver import ComponentSpec, RandomState, resolve_component
from sqnopt.steps import Decaying

FloatArray = NDArray[np.float64]
ClassWeight = Union[None, str, Mapping[Any, float]]
Callback = Callable[[IterationInfo], Union[bool, None]]

#: Curvature model used when none is given (estimators, command line).
DEFAULT_CURVATURE = "identity"

#: Upper bound of d²loss/dmargin² per loss (scales the automatic step); 1 for unknown losses.
LOSS_CURVATURE: dict[str, float] = {
    "logloss": 0.25, "binary_logistic": 0.25, "squared_hinge": 2.0, "hinge": 1.0,
    "softmax": 0.5,
}
#: Losses that are negative log-likelihoods: their scores map to class probabilities.
PROBABILISTIC_LOSSES = frozenset({"logloss", "binary_logistic", "softmax", "loglinear"})
#: Multiclass objective used for a binary loss on multiclass labels (when registered).
MULTICLASS_COUNTERPART: dict[str, str] = {"logloss": "softmax", "binary_logistic": "softmax"}

__all__ = [
    "DEFAULT_CURVATURE",
    "LOSS_CURVATURE",
    "MULTICLASS_COUNTERPART",
    "PROBABILISTIC_LOSSES",
    "Trainer",
    "auto_step",
    "class_weight_vector",
]


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


def _row_sq_norms(X: Any) -> FloatArray:
    if sp.issparse(X):
        data = np.asarray(X.data, dtype=np.float64)
        sq = np.zeros(X.shape[0])
        nz = np.diff(X.indptr)
        rows = np.repeat(np.arange(X.shape[0]), nz)
        np.add.at(sq, rows, data * data)
        return sq
    Xd = np.asarray(X, dtype=np.float64)
    out: FloatArray = np.einsum("ij,ij->i", Xd, Xd)
    return out


def auto_step(X: Any, grad_weight: FloatArray, objective: Objective, batch_size: int,
              fit_intercept: bool) -> Decaying:
    r"""The step rule ``step="auto"``: ``eps_t = 1 / (L + lam t)``.

    That is ``Decaying(eps0 = 1/L, T0 = L/lam)``, with
    ``L = c_loss * max_i g_i (||x_i||^2 + [intercept]) + lam`` a bound on the Lipschitz
    constant of every minibatch gradient (``c_loss`` = sup of the loss's second derivative, see
    :data:`LOSS_CURVATURE`; ``g_i`` the gradient weights). The first steps are the largest
    stable ones whatever the scale of the features, and the decay is the ``1/(lam t)`` rate of
    strongly convex stochastic approximation. With ``lam = 0`` the step decays after one pass
    (``T0`` = one pass of minibatches of size ``batch_size``).
    """
    sq = _row_sq_norms(X) + (1.0 if fit_intercept else 0.0)
    c_loss = LOSS_CURVATURE.get(objective.name, 1.0)
    lam = float(objective.lam)
    lip = c_loss * float(np.max(sq * grad_weight)) + lam
    if lip <= 0:
        lip = 1.0
    if lam > 0:
        T0 = lip / lam
    else:
        T0 = X.shape[0] / max(batch_size, 1)
    return Decaying(eps0=float(1.0 / lip), T0=float(max(1.0, T0)))


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
    schedule: BatchSchedule
    curvature_schedule: BatchSchedule | None
    step: StepRule
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
        Components as for :class:`~sqnopt.Solver` (instance, name or ``(name, params)``).
    schedule
        Batch schedule, or ``"auto"``: the curvature model's ``auto_schedule`` if it declares one
        (SQB: geometrically growing gradient batches, and its ``auto_curvature_schedule`` for the
        bound's batches), else ``Fixed()`` (batches of 5).
    step
        Step rule, or ``"auto"``: :func:`auto_step` computed from the first training data (or the
        curvature model's own ``auto_step`` if it declares one, e.g. AdaGrad's constant step).
    fit_intercept, average, sampling, report_every, path
        As for :class:`~sqnopt.Solver`.
    multiclass
        ``"auto"``: a multiclass objective if the loss is one or has a registered multiclass
        counterpart (``logloss`` -> ``softmax``), else one-vs-rest; ``"ovr"``: always
        one-vs-rest (binary losses); ``"multinomial"``: require a multiclass objective.
    class_weight
        ``None``, ``"balanced"`` (``n / (K n_k)``; in ``partial_fit`` from the labels seen so
        far) or ``{label: weight}``; multiplies ``sample_weight``.
    max_epochs
        Passes over the data in ``fit`` (may be fractional).
    tol, n_iter_no_change
        Stop ``fit`` once the training objective fails to decrease by ``tol`` for
        ``n_iter_no_change`` consecutive passes; ``tol=None`` runs all ``max_epochs`` at once.
    random_state
        Seeds the sampling (an int gives reproducible results).
    history_every
        Record the training objective every this many iterations (int or iteration list);
        ``None`` records it at the start and after each pass / ``partial_fit`` call.
    verbose
        ``>= 1``: progress bar on stderr when it is a terminal (runs longer than ~1 s).
    callback
        Extra solver callback(s) ``f(info) -> bool | None`` (``True`` stops the run).
    warm_start
        ``fit`` starts from the previous solution (same classes and features) instead of zeros.

    Attributes (after fitting)
    --------------------------
    model_ : LinearModel
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
        schedule: ComponentSpec = "auto",
        step: ComponentSpec = "auto",
        projection: ComponentSpec | None = None,
        fit_intercept: bool = True,
        average: bool | int = False,
        sampling: Literal["uniform", "shuffle", "subset", "weighted"] = "uniform",
        multiclass: Literal["auto", "ovr", "multinomial"] = "auto",
        class_weight: ClassWeight = None,
        max_epochs: float = 20,
        tol: float | None = 1e-4,
        n_iter_no_change: int = 5,
        random_state: RandomState = None,
        report_every: int = 1000,
        history_every: int | Sequence[int] | None = None,
        verbose: int = 0,
        callback: Callback | Sequence[Callback] | None = None,
        warm_start: bool = False,
        path: Literal["auto", "compiled", "python"] = "auto",
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
        self._snapshots: list[dict[str, Any]] | None = None
        self._class_counts: FloatArray | None = None
        self._bar: ProgressBar | None = None
        self._own_bar = True
        self._params: list[FloatArray] | None = None

    # ------------------------------------------------------------------ public API
    def fit(self, X: Any, y: ArrayLike, sample_weight: ArrayLike | None = None, *,
            progress: ProgressBar | None = None) -> LinearModel:
        """Train from scratch (or from the previous solution with ``warm_start``)."""
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
        init = self._warm_params(classes, Xc.shape[1]) if self.warm_start else None
        self._check_params()
        setup = self._make_setup(Xc, classes, weights)
        self._setup, self._snapshots = setup, None
        self._class_counts = counts
        n_sub = 1 if setup.strategy != "ovr" else len(classes)
        seeds = [self.random_state] if n_sub == 1 else _spawn(self.random_state, n_sub)
        self._solvers = [self._make_solver(setup, seed) for seed in seeds]
        self._states = []
        epochs = math.ceil(float(self.max_epochs))
        bar = self._start_bar(progress, n_sub * int(math.ceil(float(self.max_epochs) * Xc.shape[0])))
        try:
            n_iter = 0
            results = []
            for j, solver in enumerate(self._solvers):
                ysub, csub = self._sub_labels(setup, yarr, j)
                state = solver.init_state(Xc, ysub, weights, classes=csub,
                                          w0=None if init is None else init[j])
                self._states.append(state)
                if bar is not None:
                    bar.offset = j * int(math.ceil(float(self.max_epochs) * Xc.shape[0]))
                done, res = self._run_epochs(solver, state, bar)
                n_iter = max(n_iter, done)
                results.append(res)
            if bar is not None:  # early stopping may end below the budget: end at the truth
                processed = sum(int(s.counters.n_samples) for s in self._states)
                bar.total = max(processed, 1)
                bar.base = bar.offset = 0
                bar.update(processed, force=bar.drawn)
        finally:
            self._close_bar()
        self.n_iter_ = n_iter if self.tol is not None else epochs
        self._finish(results)
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
        """Drop the compiled kernels; keep a snapshot to resume ``partial_fit`` (see module
        docstring for what is and is not kept)."""
        d = self.__dict__.copy()
        if self._states is not None:
            d["_snapshots"] = [_snapshot(s) for s in self._states]
        d["_states"] = None
        d["_solvers"] = None
        d["_bar"] = None
        return d

    def __setstate__(self, d: dict[str, Any]) -> None:
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
        reg = get_registry()
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
            counterpart = MULTICLASS_COUNTERPART.get(objective.name)
            names = reg.names("objective")
            if counterpart is not None and counterpart in names:
                objective = _objective_with_lam(counterpart, lam)
                strategy = "multinomial"
            elif self.multiclass == "multinomial":
                raise ValueError(f"multiclass='multinomial': no multiclass objective is "
                                 f"registered for loss {objective.name!r}; use multiclass='ovr'")
            else:
                strategy = "ovr"
        curvature = resolve_component("curvature", self.curvature, CurvatureModel)
        curvature_schedule: BatchSchedule | None = None
        if isinstance(self.schedule, str) and self.schedule == "auto":
            if isinstance(self.curvature, str) and curvature.auto_params:
                curvature = resolve_component(
                    "curvature", (self.curvature, dict(curvature.auto_params)), CurvatureModel)
            schedule: BatchSchedule = curvature.auto_schedule or Fixed()
            if curvature.needs_curvature_batch:
                curvature_schedule = curvature.auto_curvature_schedule
        else:
            schedule = resolve_component("schedule", self.schedule, BatchSchedule)
        if isinstance(self.step, str) and self.step == "auto" and curvature.auto_step is not None:
            step: StepRule = curvature.auto_step   # scale-free directions (e.g. AdaGrad)
        elif isinstance(self.step, str) and self.step == "auto":
            n_blocks = objective.n_blocks(k) if strategy == "multinomial" else 1
            dim = X.shape[1] + int(self.fit_intercept)
            problem = Problem(n_samples=X.shape[0], n_features=X.shape[1], dim=dim,
                              n_blocks=n_blocks, n_params=n_blocks * dim, lam=lam,
                              fit_intercept=bool(self.fit_intercept),
                              capabilities=objective.capabilities)
            b1 = int(schedule.init(problem).batch_size(1))
            gw = weights / np.mean(weights) if self.sampling != "weighted" else np.ones_like(weights)
            step = auto_step(X, gw, objective, b1, bool(self.fit_intercept))
        else:
            step = resolve_component("step", self.step, StepRule)
        return _Setup(objective=objective, curvature=curvature, schedule=schedule,
                      curvature_schedule=curvature_schedule, step=step, strategy=strategy,
                      classes=classes, n_features=int(X.shape[1]))

    def _make_solver(self, setup: _Setup, random_state: Any) -> Solver:
        history = self.history_every if self.history_every is not None else (0,)
        return Solver(objective=setup.objective, curvature=setup.curvature,
                      schedule=setup.schedule, curvature_schedule=setup.curvature_schedule,
                      step=setup.step, projection=self.projection,
                      fit_intercept=bool(self.fit_intercept), average=self.average,
                      sampling=self.sampling, random_state=random_state,
                      report_every=self.report_every, history_every=history,
                      callback=self._on_report, path=self.path)

    def _sub_labels(self, setup: _Setup, y: NDArray[Any], j: int) -> tuple[Any, NDArray[Any]]:
        if setup.strategy == "ovr":
            return np.where(y == setup.classes[j], 1.0, -1.0), np.array([-1.0, 1.0])
        return y, setup.classes

    def _begin_partial(self, X: Any, y: NDArray[Any], weights: FloatArray) -> None:
        setup = self._setup
        assert setup is not None
        snaps = self._snapshots
        n_sub = 1 if setup.strategy != "ovr" else len(setup.classes)
        if snaps is not None:
            seeds: list[Any] = [s["bit_generator"] for s in snaps]
        else:
            seeds = [self.random_state] if n_sub == 1 else _spawn(self.random_state, n_sub)
        self._solvers = [self._make_solver(setup, seed) for seed in seeds]
        self._states = []
        for j, solver in enumerate(self._solvers):
            ysub, csub = self._sub_labels(setup, y, j)
            snap = None if snaps is None else snaps[j]
            state = solver.init_state(X, ysub, weights, classes=csub,
                                      w0=None if snap is None else snap["w"])
            if snap is not None:
                _restore(state, snap)
            self._states.append(state)
        self._snapshots = None

    def _run_epochs(self, solver: Solver, state: SolverState,
                    bar: ProgressBar | None) -> tuple[int, SolveResult]:
        total = float(self.max_epochs)
        if self.tol is None:
            return int(math.ceil(total)), solver.run(state, max_epochs=total)
        best, stall, done = math.inf, 0, 0
        res: SolveResult | None = None
        while total > 0:
            res = solver.run(state, max_epochs=min(1.0, total))
            total -= 1.0
            done += 1
            if bar is not None:
                bar.set_objective(res.fun)
            stall = stall + 1 if res.fun > best - float(self.tol) else 0
            best = min(best, res.fun)
            if stall >= self.n_iter_no_change:
                break
        assert res is not None
        return done, res

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
                "curvature": setup.curvature.describe(),
                "schedule": setup.schedule.describe(), "step": setup.step.describe(),
                "fit_intercept": bool(self.fit_intercept), "strategy": setup.strategy}
        self.model_ = LinearModel(coef=coef, intercept=icpt, classes=setup.classes,
                                  strategy=setup.strategy, loss=setup.objective.name,
                                  probabilistic=setup.objective.name in PROBABILISTIC_LOSSES,
                                  info=info)

    # progress bar plumbing: the solvers' callback forwards to the bar of the current call
    # A bar passed in by the caller stays open (the caller closes it, e.g. after a stream of
    # partial_fit calls); a bar made here for ``verbose`` is closed at the end of the call.
    def _start_bar(self, progress: ProgressBar | None, total: int) -> ProgressBar | None:
        self._own_bar = progress is None
        if progress is not None:
            self._bar = progress
            if progress.total is None:
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


def _snapshot(state: SolverState) -> dict[str, Any]:
    state.sync()
    return {
        "w": state.w.copy(),
        "w_avg": None if state.w_avg is None else state.w_avg.copy(),
        "counters": state.counters.as_dict(),
        "bit_generator": state.sampler.bit_generator,
        "elapsed": state.elapsed,
        "eval_time": state.eval_time,
        "history": dataclasses.replace(state.history),
    }


def _restore(state: SolverState, snap: dict[str, Any]) -> None:
    if snap["w_avg"] is not None and state.w_avg is not None:
        state.w_avg[:] = snap["w_avg"]
    for key, value in snap["counters"].items():
        setattr(state.counters, key, value)
    state.elapsed = float(snap["elapsed"])
    state.eval_time = float(snap["eval_time"])
    state.history = snap["history"]

