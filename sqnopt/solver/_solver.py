"""The generic stochastic-descent driver."""

from __future__ import annotations

import dataclasses
import math
import os
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Union, cast

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from sqnopt.curvature._base import CurvatureKernel
from sqnopt.data import Dataset, check_sparse_structure, prepare
from sqnopt.gradients._base import GradientKernel
from sqnopt.interfaces import (
    LINEAR_SCORES,
    BatchSchedule,
    Component,
    CurvatureKernelLike,
    CurvatureModel,
    GradientEstimator,
    GradientKernelLike,
    Kind,
    Objective,
    ObjectiveKernelLike,
    Problem,
    Projection,
    ProjectionKernelLike,
    ScheduleKernelLike,
    StepKernelLike,
    STRONGLY_CONVEX,
    StepRule,
)
from sqnopt.objectives._base import ObjectiveKernel
from sqnopt.projections._base import ProjectionKernel
from sqnopt.registry import get_registry
from sqnopt.schedules._base import ScheduleKernel
import sqnopt.solver._pyloop as codes
from sqnopt.solver._blas import blas_threads_limited
from sqnopt.solver._loop import CompiledLoop, Counters
from sqnopt.solver._pyloop import PythonLoop
from sqnopt.solver._scaled_loop import ScaledLoop, scaled_loop_supported
from sqnopt.solver._monitor import DivergenceMonitor
from sqnopt.solver._result import (
    CurvatureError,
    DivergenceWarning,
    History,
    IterationInfo,
    SolveResult,
    Status,
)
from sqnopt.solver._sampler import (
    Sampler,
    SequenceSampler,
    ShuffleSampler,
    SubsetSampler,
    UniformSampler,
    WeightedSampler,
)
from sqnopt.solver._state import SolverState
from sqnopt.steps._base import StepKernel

FloatArray = NDArray[np.float64]
ComponentSpec = Union[Component, str, tuple[str, Mapping[str, Any]]]
Callback = Callable[[IterationInfo], Union[bool, None]]
Sampling = Literal["uniform", "shuffle", "subset", "weighted"]
RandomState = Union[
    None, int, np.random.SeedSequence, np.random.BitGenerator, np.random.Generator,
    np.random.RandomState,
]

__all__ = ["IncompatibleComponentsError", "Solver", "resolve_component"]


#: A failed full-batch line search whose first trial predicted a relative decrease below this
#: (sqrt of the double-precision epsilon) is convergence to working precision.
_PRECISION = 1.5e-8


class IncompatibleComponentsError(ValueError):
    """Two components cannot work together; raised when the Solver is constructed."""


def resolve_component(kind: Kind, spec: ComponentSpec, base: type) -> Any:
    """A component instance from an instance, a registered name, or ``(name, params)``;
    ``base`` is the interface it must implement."""
    if isinstance(spec, str):
        obj: Any = get_registry().create(kind, spec)
    elif isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], str):
        obj = get_registry().create(kind, spec[0], **dict(spec[1]))
    else:
        obj = spec
    if not isinstance(obj, base):
        raise TypeError(f"{kind}: expected a {base.__name__} instance, a registered name or "
                        f"(name, params); got {type(spec).__name__}")
    return obj


@dataclass(frozen=True)
class _Limits:
    max_iter: int | None
    max_samples: int | None
    max_time: float | None
    target_objective: float | None
    gtol: float | None
    ftol: float | None


def _check_positive(name: str, value: float | None, *, integer: bool = False,
                    allow_zero: bool = False) -> None:
    if value is None:
        return
    ok = isinstance(value, (int, np.integer)) if integer else isinstance(value, (int, float, np.number))
    if not ok or not math.isfinite(float(value)) or float(value) < 0 or (
            not allow_zero and float(value) == 0):
        kind = "an integer" if integer else "a number"
        raise ValueError(f"{name} must be {kind} {'>=' if allow_zero else '>'} 0, got {value!r}")


def make_bit_generator(random_state: RandomState) -> np.random.BitGenerator:
    """One bit generator for every sampler of a solve (draws from a Generator advance it)."""
    if isinstance(random_state, np.random.Generator):
        return random_state.bit_generator
    if isinstance(random_state, np.random.BitGenerator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.PCG64(int(random_state.randint(0, 2**31 - 1)))
    if random_state is None or isinstance(random_state, (int, np.integer, np.random.SeedSequence)):
        if isinstance(random_state, (int, np.integer)) and random_state < 0:
            raise ValueError(f"random_state must be >= 0, got {random_state}")
        return np.random.PCG64(random_state)
    raise TypeError(f"random_state must be None, an int, a SeedSequence, a BitGenerator or a "
                    f"Generator; got {type(random_state).__name__}")


class Solver:
    r"""Generic stochastic descent: ``w_{t+1} = P(w_t - eps_t H_t s(w_t, B_t))``.

    Combines an :class:`~sqnopt.interfaces.Objective`, a
    :class:`~sqnopt.interfaces.CurvatureModel` (direction ``H g``), a
    :class:`~sqnopt.interfaces.BatchSchedule` (``|B_t|``) and a :class:`~sqnopt.interfaces.StepRule`
    (``eps_t``), plus an optional :class:`~sqnopt.interfaces.Projection` ``P``. Each may be given as
    an instance, a registered name (``"olbfgs"``) or ``(name, params)``.

    When every component is compiled the iteration runs in Cython without the GIL and returns to
    Python every ``report_every`` iterations (history, callbacks, time budget, target checks);
    otherwise the identical iteration runs in Python.

    Parameters
    ----------
    objective, curvature, schedule, step, projection
        The components.
    gradient
        The gradient estimator the steps use (:mod:`sqnopt.gradients`): ``"minibatch"`` (the
        minibatch gradient), ``"svrg"`` or ``"saga"`` (variance-reduced: constant steps converge
        linearly). Secant pairs and line searches use the plain minibatch gradient.
    curvature_schedule
        Batch schedule of the independent curvature batches of models that build curvature from
        their own samples (SQB); defaults to ``schedule``.
    fit_intercept
        ``True``: fit an unregularised intercept (last coordinate of each parameter block).
        ``"regularized"``: an intercept regularised (and projected) like the weights, i.e. a
        constant feature of value 1 appended to ``X`` (a copy of ``X`` is made) -- Pegasos'
        (Shalev-Shwartz et al. 2007, Sec. 6) and LIBLINEAR's choice; the objective then includes
        ``lam/2 b^2``. The result splits ``coef`` and ``intercept`` the same way.
    average
        Polyak-Ruppert averaging: ``True`` averages all iterates, an integer ``k`` averages those
        after iteration ``k``. The average is the reported iterate.
    sampling
        ``"uniform"`` (i.i.d. with replacement), ``"shuffle"`` (without replacement, reshuffled
        each epoch), ``"subset"`` (each batch a uniformly random subset of distinct samples,
        independent across batches, so a batch of size N is the whole data set: the sampling of
        growing-batch methods such as SQB) or ``"weighted"`` (i.i.d. with probability
        proportional to sample weights, which then do not enter the minibatch gradient).
    batch_sequence
        Inject the exact sequence of sample indices to use (tests, reproducing other codes).
    random_state
        Seeds the one generator behind every sampler: same seed, same result.
    max_iter, max_samples, max_epochs, max_time
        Budgets per ``run`` call (iterations, samples processed, samples / N, solver seconds).
        With none of them given the budget is ``max_epochs=10``.
    target_objective, gtol, ftol
        Tolerances; a run that meets one stops with ``success=True``. ``F(w) <= target_objective``
        and ``||grad F(w)||_inf <= gtol`` (the largest absolute partial derivative, as in
        ``scipy.optimize`` and scikit-learn) are checked at report points on the full
        training set (one extra pass each) -- except that when an iteration's batch is the whole
        data set (``Full`` schedules, growing batches once they reach ``N``) the loop tests
        ``gtol`` on that iteration's own gradient at no extra cost, and ``ftol`` on the relative
        decrease of the full objective between two such iterations,
        ``F(w_{t-1}) - F(w_t) <= ftol * max(|F(w_{t-1})|, |F(w_t)|, 1)`` (L-BFGS-B's test).
        A full-batch line search that fails because the decrease it predicts is below the
        working precision ends with ``Status.PRECISION`` (also a success).
    monitor
        The divergence monitor (:class:`~sqnopt.solver.DivergenceMonitor`; ``None`` disables it).
        A run whose objective blows up stops with ``Status.DIVERGED``, returns the best iterate
        the monitor saw and warns (:class:`~sqnopt.DivergenceWarning`) with the likely cause and
        fix; non-finite values always end a run that way.
    report_every
        Iterations between returns to Python.
    history_every
        Record ``F`` on the full training set every this many iterations (an ``int``), or at the
        given iteration numbers (a sequence); ``None`` records only the start and the end.
    record_grad_norm
        Also record ``||grad F||_inf`` in the history (the gradient comes with the objective
        from one fused pass).
    callback
        ``callback(info) -> bool | None`` at report points; returning True (or raising
        ``StopIteration``) stops the run.
    blas_threads
        BLAS threads while ``run`` executes (via threadpoolctl); ``None`` leaves the library's
        setting. The loop's BLAS calls are small, so threading them costs more than it gains:
        RES on a9a (n = 124) ran 20x slower with OpenBLAS's default 2 threads on 2 cores.
    path
        Which iteration loop runs. ``"auto"``: on sparse (CSR) data, the scaled loop when the
        combination allows it (margin objective, identity curvature, no projection or the L2
        ball; an iteration then costs O(nnz of the batch), see
        :mod:`sqnopt.solver._scaled_loop`), else the generic compiled loop when every component
        is compiled, else the Python loop. ``"compiled"``: as ``"auto"`` but an error unless
        every component is compiled. ``"generic"``: the generic compiled loop. ``"scaled"``: the
        scaled loop, on dense data too (an error if the combination does not allow it).
        ``"python"``: the Python loop.
    """

    def __init__(
        self,
        objective: ComponentSpec = "logloss",
        curvature: ComponentSpec = "identity",
        schedule: ComponentSpec = "fixed",
        step: ComponentSpec = "decaying",
        *,
        projection: ComponentSpec | None = None,
        gradient: ComponentSpec = "minibatch",
        curvature_schedule: ComponentSpec | None = None,
        fit_intercept: bool | Literal["regularized"] = False,
        average: bool | int = False,
        sampling: Sampling = "uniform",
        batch_sequence: ArrayLike | None = None,
        random_state: RandomState = None,
        max_iter: int | None = None,
        max_samples: int | None = None,
        max_epochs: float | None = None,
        max_time: float | None = None,
        target_objective: float | None = None,
        gtol: float | None = None,
        ftol: float | None = None,
        monitor: DivergenceMonitor | None = DivergenceMonitor(),
        report_every: int = 1000,
        history_every: int | Sequence[int] | None = None,
        record_grad_norm: bool = False,
        callback: Callback | Iterable[Callback] | None = None,
        blas_threads: int | None = 1,
        path: Literal["auto", "compiled", "generic", "scaled", "python"] = "auto",
    ) -> None:
        self.objective: Objective = resolve_component("objective", objective, Objective)
        self.curvature: CurvatureModel = resolve_component("curvature", curvature, CurvatureModel)
        self.schedule: BatchSchedule = resolve_component("schedule", schedule, BatchSchedule)
        self.step: StepRule = resolve_component("step", step, StepRule)
        self.projection: Projection | None = (None if projection is None
                           else resolve_component("projection", projection, Projection))
        self.curvature_schedule: BatchSchedule | None = (None if curvature_schedule is None else
                                   resolve_component("schedule", curvature_schedule, BatchSchedule))
        self.gradient: GradientEstimator = resolve_component("gradient", gradient,
                                                              GradientEstimator)
        _check_compatible(self.objective, self.curvature, self.step, self.projection,
                          self.curvature_schedule, fit_intercept, self.gradient)
        if sampling == "weighted" and self.gradient.requires & {LINEAR_SCORES}:
            raise IncompatibleComponentsError(
                f"gradient {self.gradient.describe()} keeps a table averaged over the samples, "
                "which importance sampling (sampling='weighted') would bias. Use weighted losses "
                "(the default sampling) or the SVRG estimator.")
        if sampling not in ("uniform", "shuffle", "subset", "weighted"):
            raise ValueError(f"sampling must be 'uniform', 'shuffle', 'subset' or 'weighted', "
                             f"got {sampling!r}")
        if path not in ("auto", "compiled", "generic", "scaled", "python"):
            raise ValueError("path must be 'auto', 'compiled', 'generic', 'scaled' or 'python', "
                             f"got {path!r}")
        if not isinstance(average, (bool, int, np.integer)) or (
                not isinstance(average, bool) and average < 0):
            raise ValueError(f"average must be a bool or an iteration number >= 0, got {average!r}")
        _check_positive("max_iter", max_iter, integer=True, allow_zero=True)
        _check_positive("max_samples", max_samples, integer=True, allow_zero=True)
        _check_positive("max_epochs", max_epochs, allow_zero=True)
        _check_positive("max_time", max_time)
        _check_positive("gtol", gtol)
        _check_positive("ftol", ftol)
        if monitor is not None and not isinstance(monitor, DivergenceMonitor):
            raise TypeError(f"monitor must be a DivergenceMonitor or None, got "
                            f"{type(monitor).__name__}")
        _check_positive("report_every", report_every, integer=True)
        if target_objective is not None and not math.isfinite(target_objective):
            raise ValueError("target_objective must be finite")
        if isinstance(history_every, (int, np.integer)):
            _check_positive("history_every", int(history_every), integer=True)
        elif history_every is not None:
            pts = np.asarray(history_every)
            if pts.ndim != 1 or pts.dtype.kind not in "iu" or np.any(pts < 0):
                raise ValueError("history_every must be an int or a sequence of iteration numbers")
        if isinstance(fit_intercept, str):
            if fit_intercept != "regularized":
                raise ValueError(f"fit_intercept must be True, False or 'regularized', got "
                                 f"{fit_intercept!r}")
            self.fit_intercept: bool | Literal["regularized"] = "regularized"
        else:
            self.fit_intercept = bool(fit_intercept)
        self.average = average
        self.sampling: Sampling = sampling
        self.batch_sequence = None if batch_sequence is None else np.array(batch_sequence,
                                                                           dtype=np.intp)
        self.random_state = random_state
        self.max_iter = max_iter
        self.max_samples = max_samples
        self.max_epochs = max_epochs
        self.max_time = max_time
        self.target_objective = target_objective
        self.gtol = gtol
        self.ftol = ftol
        self.monitor = monitor
        self.report_every = int(report_every)
        self.history_every = history_every
        self.record_grad_norm = bool(record_grad_norm)
        if callback is None:
            self.callbacks: tuple[Callback, ...] = ()
        elif callable(callback):
            self.callbacks = (callback,)
        else:
            self.callbacks = tuple(callback)
        if blas_threads is not None:
            _check_positive("blas_threads", blas_threads, integer=True)
        self.blas_threads = blas_threads
        self.path = path

    def __repr__(self) -> str:
        parts = [self.objective.describe(), self.curvature.describe(), self.schedule.describe(),
                 self.step.describe()]
        if self.projection is not None:
            parts.append(f"projection={self.projection.describe()}")
        return f"Solver({', '.join(parts)})"

    # ------------------------------------------------------------------ presets
    @classmethod
    def pegasos(cls, lam: float = 1e-4, *, batch_size: int = 1, average: bool | int = False,
                **kwargs: Any) -> Solver:
        """Pegasos as a composition of registered components (hinge, ``PegasosStep``, L2 ball,
        minibatch ``batch_size``); the ``"pegasos"`` preset (:func:`sqnopt.presets.pegasos`)."""
        return cls.preset("pegasos", lam=lam, batch_size=batch_size, average=average, **kwargs)

    @classmethod
    def preset(cls, name: str, **kwargs: Any) -> Solver:
        """A named composition registered through the ``sqnopt_register_presets`` hook: the
        built-ins ``"pegasos"``, ``"sgd"``, ``"asgd"``, ``"adagrad"``, ``"smd"``, ``"seg_pm"``,
        ``"gd"``, ``"pgd"``, ``"lbfgs"``, ``"sqb"`` (:mod:`sqnopt.presets`) and any a plugin
        adds."""
        solver = get_registry().preset(name).factory(**kwargs)
        if not isinstance(solver, Solver):
            raise TypeError(f"preset {name!r} built a {type(solver).__name__}, not a Solver")
        return solver

    # ------------------------------------------------------------------ building a solve
    @property
    def _constant_column(self) -> int:
        """1 when the intercept is a regularised constant feature appended to ``X``, else 0."""
        return int(self.fit_intercept == "regularized")

    def _design(self, X: Any) -> tuple[Any, bool]:
        """The matrix the data layer sees and whether it adds the (unregularised) intercept:
        with ``fit_intercept="regularized"``, a copy of ``X`` with a constant column of ones."""
        if not self._constant_column:
            return X, bool(self.fit_intercept)
        if sp.issparse(X):
            check_sparse_structure(X)  # before sp.hstack reads the indices
            if X.shape[0] == 0 or X.dtype.kind not in "iuf":
                return X, False         # the data layer reports the shape error
            dtype = X.dtype if X.dtype in (np.float32, np.float64) else np.float64
            ones = sp.csr_matrix(np.ones((X.shape[0], 1), dtype=dtype))
            return sp.hstack([sp.csr_matrix(X), ones], format="csr", dtype=dtype), False
        arr = np.asarray(X)
        if arr.ndim != 2 or arr.shape[0] == 0 or arr.dtype.kind not in "iuf":
            return X, False             # the data layer reports the shape error
        dtype = arr.dtype if arr.dtype in (np.float32, np.float64) else np.float64
        ones = np.ones((arr.shape[0], 1), dtype=dtype)
        return np.hstack([arr.astype(dtype, copy=False), ones]), False

    def init_state(self, X: Any, y: ArrayLike, sample_weight: ArrayLike | None = None, *,
                   classes: ArrayLike | None = None, w0: ArrayLike | None = None) -> SolverState:
        """Validate the data and build a fresh :class:`SolverState` (kernels, buffers, sampler)."""
        Xd, data_intercept = self._design(X)
        data = prepare(Xd, y, sample_weight=sample_weight, fit_intercept=data_intercept,
                       label_kind=self.objective.label_kind, classes=classes,
                       importance_sampling=self.sampling == "weighted")
        n_blocks, dim = self.objective.param_layout(data)
        problem = Problem(n_samples=data.n_samples, n_features=data.n_features, dim=dim,
                          n_blocks=n_blocks, n_params=n_blocks * dim,
                          lam=float(self.objective.lam), fit_intercept=data_intercept,
                          capabilities=self.objective.capabilities)
        obj_k: ObjectiveKernelLike = _kernel(self.objective, self.objective.init(data), ObjectiveKernelLike)
        if obj_k.n_params != problem.n_params:
            raise ValueError(f"{self.objective.describe()} built a kernel with "
                             f"{obj_k.n_params} parameters, expected {problem.n_params}")
        _check_memory(self.curvature, problem)
        grad_k: GradientKernelLike = _kernel(self.gradient, self.gradient.init(problem),
                                             GradientKernelLike)
        _bind_gradient(self.gradient, grad_k, obj_k)
        curv_k: CurvatureKernelLike = _kernel(self.curvature, self.curvature.init(problem), CurvatureKernelLike)
        sched_k: ScheduleKernelLike = _kernel(self.schedule, self.schedule.init(problem), ScheduleKernelLike)
        csched_k: ScheduleKernelLike | None = None
        if self.curvature.needs_curvature_batch:
            cs = self.curvature_schedule or self.schedule
            csched_k = _kernel(cs, cs.init(problem), ScheduleKernelLike)
        step_k: StepKernelLike = _kernel(self.step, self.step.init(problem), StepKernelLike)
        proj_k: ProjectionKernelLike | None = None if self.projection is None else _kernel(
            self.projection, self.projection.init(problem), ProjectionKernelLike)

        sampler = self._make_sampler(data, make_bit_generator(self.random_state))
        n = data.n_samples

        p = problem.n_params
        w = np.zeros(p)
        if w0 is not None:
            w0a = np.asarray(w0, dtype=np.float64).ravel()
            if w0a.shape[0] != p:
                raise ValueError(f"w0 has {w0a.shape[0]} entries, expected n_params={p} "
                                 f"({n_blocks} block(s) of {dim})")
            if not np.all(np.isfinite(w0a)):
                raise ValueError("w0 contains NaN or infinity")
            w[:] = w0a
        start = getattr(proj_k, "start", None)
        if callable(start):  # stateful projections (mirror maps) learn the starting point
            start(w)
        average = self.average is not False
        avg_start = 0 if isinstance(self.average, bool) else int(self.average)
        w_avg = w.copy() if average else None
        buffers: dict[str, Any] = {
            "w_next": np.zeros(p), "grad": np.zeros(p), "grad_next": np.zeros(p),
            "direction": np.zeros(p), "v": np.zeros(p), "r": np.zeros(p),
            "batch": np.zeros(n, dtype=np.intp),
            "curvature_batch": np.zeros(n if csched_k is not None else 1, dtype=np.intp),
        }
        counters = Counters()
        use_compiled, loop = self._make_loop(obj_k, grad_k, curv_k, sched_k, csched_k, step_k,
                                             proj_k, sampler, w, w_avg, buffers, counters,
                                             average, avg_start)
        return SolverState(data=data, problem=problem, objective=obj_k, gradient=grad_k,
                           curvature=curv_k,
                           schedule=sched_k, curvature_schedule=csched_k, step=step_k,
                           projection=proj_k, sampler=sampler, w=w, w_avg=w_avg,
                           counters=counters, avg_start=avg_start, compiled=use_compiled,
                           loop=loop, buffers=buffers)

    def rebind(self, state: SolverState, X: Any, y: ArrayLike,
               sample_weight: ArrayLike | None = None) -> SolverState:
        """Continue the solve of ``state`` on new data ``(X, y, sample_weight)`` (streaming).

        Everything the solve has learned is kept: the iterate and its running average, the
        curvature kernel (memory of pairs), the step and projection kernels, the counters (so
        step sizes and batch sizes continue from the current iteration), the history and the
        random stream. What depends on the data is rebuilt: the objective kernel, the batch
        schedule kernels (functions of the iteration number, clipped to the new sample count),
        the sampler (same bit generator) and the loop. The label set stays the one of the first
        data (``state.data.classes``), and the number of features must not change.

        The state is updated in place and returned; ``run`` it to take steps on the new data.
        Objective values recorded from then on (history, ``fun``) are on the new data.
        """
        if self.batch_sequence is not None:
            raise ValueError("rebind: an injected batch_sequence indexes the first data set; "
                             "drop batch_sequence to stream new data")
        state.sync()
        old = state.data
        Xd, data_intercept = self._design(X)
        data = prepare(Xd, y, sample_weight=sample_weight, fit_intercept=data_intercept,
                       label_kind=self.objective.label_kind, classes=old.classes,
                       importance_sampling=self.sampling == "weighted")
        if data.n_features != old.n_features:
            extra = self._constant_column
            raise ValueError(f"rebind: X has {data.n_features - extra} features, but the solve "
                             f"was started with {old.n_features - extra}. Pass data with the "
                             "same columns")
        problem = dataclasses.replace(state.problem, n_samples=data.n_samples)
        obj_k: ObjectiveKernelLike = _kernel(self.objective, self.objective.init(data),
                                             ObjectiveKernelLike)
        if obj_k.n_params != problem.n_params:
            raise ValueError(f"{self.objective.describe()} built a kernel with "
                             f"{obj_k.n_params} parameters, expected {problem.n_params}")
        sched_k: ScheduleKernelLike = _kernel(self.schedule, self.schedule.init(problem),
                                              ScheduleKernelLike)
        csched_k: ScheduleKernelLike | None = None
        if self.curvature.needs_curvature_batch:
            cs = self.curvature_schedule or self.schedule
            csched_k = _kernel(cs, cs.init(problem), ScheduleKernelLike)
        sampler = self._make_sampler(data, state.sampler.bit_generator)
        n = data.n_samples
        buffers = dict(state.buffers)
        buffers["batch"] = np.zeros(n, dtype=np.intp)
        buffers["curvature_batch"] = np.zeros(n if csched_k is not None else 1, dtype=np.intp)
        _bind_gradient(self.gradient, state.gradient, obj_k)    # per-sample state: new data
        use_compiled, loop = self._make_loop(
            obj_k, state.gradient, state.curvature, sched_k, csched_k, state.step,
            state.projection, sampler, state.w, state.w_avg, buffers, state.counters,
            state.w_avg is not None, state.avg_start, previous=state.loop)
        state.data, state.problem, state.objective = data, problem, obj_k
        state.schedule, state.curvature_schedule, state.sampler = sched_k, csched_k, sampler
        state.buffers, state.loop, state.compiled = buffers, loop, use_compiled
        return state

    def _make_sampler(self, data: Dataset, bitgen: np.random.BitGenerator) -> Sampler:
        n = data.n_samples
        if self.batch_sequence is not None:
            return SequenceSampler(n, bitgen, self.batch_sequence)
        if self.sampling == "shuffle":
            return ShuffleSampler(n, bitgen)
        if self.sampling == "subset":
            return SubsetSampler(n, bitgen)
        if self.sampling == "weighted":
            return WeightedSampler(n, bitgen, data.sample_weight)
        return UniformSampler(n, bitgen)

    def _make_loop(self, obj_k: Any, grad_k: Any, curv_k: Any, sched_k: Any, csched_k: Any,
                   step_k: Any, proj_k: Any, sampler: Sampler, w: FloatArray,
                   w_avg: FloatArray | None, buffers: dict[str, Any], counters: Counters,
                   average: bool, avg_start: int, previous: Any = None
                   ) -> tuple[bool, CompiledLoop | ScaledLoop | PythonLoop]:
        kernels = (obj_k, grad_k, curv_k, sched_k, csched_k, step_k, proj_k)
        compiled = _all_compiled(*kernels)
        if self.path in ("compiled", "generic", "scaled") and not compiled:
            python_parts = [type(k).__name__ for k in kernels if k is not None and not _is_compiled(k)]
            raise ValueError(f"path={self.path!r} but these kernels are pure Python: {python_parts}")
        use_compiled = compiled and self.path != "python"
        use_scaled = False
        if use_compiled and self.path != "generic":
            why_not = scaled_loop_supported(self.objective, obj_k, self.curvature, curv_k, proj_k)
            if not why_not and not grad_k.plain:
                why_not = f"gradient {self.gradient.describe()} is not the minibatch gradient"
            if not why_not and self.step.line_search:
                why_not = f"step {self.step.describe()} is a line search"
            if self.path == "scaled" and why_not:
                raise ValueError(f"path='scaled' is not possible: {why_not}. Use path='auto'.")
            # "auto": on sparse data, where it turns O(n) iterations into O(nnz) ones
            sparse = bool(getattr(getattr(obj_k, "data", None), "is_sparse", False))
            use_scaled = not why_not and (self.path == "scaled" or sparse)
        loop: Any
        if use_scaled:
            loop = ScaledLoop(cast(Any, obj_k), cast(Any, sched_k), cast(Any, step_k),
                              cast(Any, proj_k), sampler, w, w_avg, counters, average, avg_start,
                              previous if isinstance(previous, ScaledLoop) else None)
        else:
            loop_cls: Any = CompiledLoop if use_compiled else PythonLoop
            loop = loop_cls(obj_k, curv_k, sched_k, csched_k, step_k, proj_k, sampler, w,
                            buffers["w_next"], buffers["grad"], buffers["grad_next"],
                            buffers["direction"], buffers["v"], buffers["r"], w_avg,
                            buffers["batch"], buffers["curvature_batch"], counters, average,
                            avg_start, grad_k)
        return use_compiled, loop

    def fit(self, X: Any, y: ArrayLike, sample_weight: ArrayLike | None = None, *,
            classes: ArrayLike | None = None, w0: ArrayLike | None = None) -> SolveResult:
        """Solve on ``(X, y)`` from ``w0`` (zeros by default); see :meth:`run` for the stops."""
        return self.run(self.init_state(X, y, sample_weight, classes=classes, w0=w0))

    # ------------------------------------------------------------------ running
    def _limits(self, state: SolverState, overrides: dict[str, Any]) -> _Limits:
        unknown = set(overrides) - {"max_iter", "max_samples", "max_epochs", "max_time",
                                    "target_objective", "gtol", "ftol"}
        if unknown:
            raise TypeError(f"run() got unknown limits {sorted(unknown)}")
        def get(key: str) -> Any:
            return overrides[key] if key in overrides else getattr(self, key)

        max_iter, max_samples, max_epochs = get("max_iter"), get("max_samples"), get("max_epochs")
        max_time = get("max_time")
        _check_positive("max_iter", max_iter, integer=True, allow_zero=True)
        _check_positive("max_samples", max_samples, integer=True, allow_zero=True)
        _check_positive("max_epochs", max_epochs, allow_zero=True)
        _check_positive("max_time", max_time)
        if max_epochs is not None:
            by_epochs = int(math.ceil(max_epochs * state.data.n_samples))
            max_samples = by_epochs if max_samples is None else min(max_samples, by_epochs)
        if max_iter is None and max_samples is None and max_time is None:
            max_samples = 10 * state.data.n_samples
        gtol, ftol = get("gtol"), get("ftol")
        _check_positive("gtol", gtol)
        _check_positive("ftol", ftol)
        return _Limits(max_iter, max_samples, max_time, get("target_objective"), gtol, ftol)

    def run(self, state: SolverState, **limits: Any) -> SolveResult:
        """Advance ``state`` until a stopping rule fires; return a frozen result.

        Keyword arguments override the budgets and targets (``max_iter``, ``max_samples``,
        ``max_epochs``, ``max_time``, ``target_objective``, ``gtol``, ``ftol``) for this call; budgets count
        from the start of the call, so repeated calls continue the same solve.

        A run that diverges (non-finite values, or the divergence monitor's test) returns with
        ``Status.DIVERGED`` and the best iterate seen, after a :class:`DivergenceWarning`; such a
        state cannot be run further.

        Raises
        ------
        CurvatureError
            The curvature model reported an unrecoverable failure.
        """
        with blas_threads_limited(self.blas_threads):
            return self._run(state, limits)

    def _run(self, state: SolverState, limits: dict[str, Any]) -> SolveResult:
        if state.diverged:
            raise ValueError("this solve diverged (Status.DIVERGED) and cannot be continued; "
                             "start a new one (Solver.fit or init_state) with the changes the "
                             "divergence message suggests")
        lim = self._limits(state, limits)
        c = state.counters
        t_begin, s_begin, time_begin = c.t, c.n_samples, state.elapsed
        iter_stop = None if lim.max_iter is None else t_begin + lim.max_iter
        sample_stop = 0 if lim.max_samples is None else s_begin + lim.max_samples
        if lim.max_samples == 0:
            sample_stop = -1  # stop immediately
        history_on = self.history_every is not None
        if history_on and not state.history.iteration:
            self._record(state)
        if self.monitor is not None and not math.isfinite(state.monitor.f_ref):
            self._start_monitor(state)
        loop_tols = hasattr(state.loop, "gtol")   # the loop tests full-batch gradients itself
        if loop_tols:
            loop: Any = state.loop
            loop.gtol = float(lim.gtol or 0.0)
            loop.ftol = float(lim.ftol or 0.0)
        status: Status | None = None
        message = ""
        gnorm = math.nan
        while status is None:
            if iter_stop is not None and c.t >= iter_stop:
                status, message = Status.MAX_ITER, f"reached max_iter={lim.max_iter} iterations"
                break
            if sample_stop < 0 or (sample_stop > 0 and c.n_samples >= sample_stop):
                status, message = Status.MAX_SAMPLES, (
                    f"reached max_samples={lim.max_samples} samples processed")
                break
            if lim.max_time is not None and state.elapsed - time_begin >= lim.max_time:
                status, message = Status.MAX_TIME, f"reached max_time={lim.max_time} s"
                break
            n_iter = self._next_event(c.t, iter_stop) - c.t
            c.last_gnorm = math.nan
            tic = time.perf_counter()
            code = state.loop.run(n_iter, sample_stop)
            state.elapsed += time.perf_counter() - tic
            full_tested = math.isfinite(c.last_gnorm)   # the loop saw a full-batch gradient
            if full_tested:
                gnorm = float(c.last_gnorm)
            if code in (codes.LOOP_NONFINITE_LOSS, codes.LOOP_NONFINITE_ITERATE):
                what = ("the minibatch objective became non-finite"
                        if code == codes.LOOP_NONFINITE_LOSS else "the iterate became non-finite")
                return self._diverged(state, what)
            if code == codes.LOOP_CURVATURE_ERROR:
                msg = (f"curvature model {self.curvature.describe()} failed at iteration "
                       f"{c.t}: {state.curvature.error_message()}")
                raise CurvatureError(msg, self._result(state, Status.CALLBACK, msg, math.nan))
            if code == codes.LOOP_GTOL:
                status, message = Status.GTOL, (
                    f"gradient norm {gnorm:.3g} <= gtol={lim.gtol:g} (full batch)")
            elif code == codes.LOOP_FTOL:
                status, message = Status.FTOL, (
                    f"relative objective decrease <= ftol={lim.ftol:g} (full batch; gradient "
                    f"norm {gnorm:.3g})")
            elif code == codes.LOOP_EXHAUSTED:
                status, message = Status.SEQUENCE_EXHAUSTED, (
                    f"the injected batch sequence ran out after {c.t} iterations")
            elif code == codes.LOOP_LINE_SEARCH_FAILED:
                status, message, gnorm = self._line_search_failure(state)
            elif code == codes.LOOP_MAX_SAMPLES:
                status, message = Status.MAX_SAMPLES, (
                    f"reached max_samples={lim.max_samples} samples processed")
            fval: float | None = None
            if history_on and self._is_history_point(c.t):
                fval = self._record(state)
            report = c.t % self.report_every == 0 or status is not None
            if report:
                # gtol at report points, unless the loop just tested a full-batch gradient
                want_grad = lim.gtol is not None and not full_tested and status is None
                if want_grad or (lim.target_objective is not None and fval is None):
                    fval, g_now = self._evaluate(state, with_grad=want_grad)
                    if want_grad:
                        gnorm = g_now
                        if lim.gtol is not None and g_now <= lim.gtol:
                            status = status or Status.GTOL
                            message = message or f"gradient norm {g_now:.3g} <= gtol={lim.gtol:g}"
                if (lim.target_objective is not None and fval is not None
                        and fval <= lim.target_objective):
                    status = status or Status.TARGET_OBJECTIVE
                    message = message or (f"objective {fval:.6g} <= target "
                                           f"{lim.target_objective:g}")
            if fval is not None and not math.isfinite(fval):
                return self._diverged(state, f"the objective F(w) became {fval}")
            if self.monitor is not None:
                why = self._monitor_check(state, fval)
                if why is not None:
                    return self._diverged(state, why)
            if report and self.callbacks:
                if self._call_callbacks(state, fval):
                    status = status or Status.CALLBACK
                    message = message or "stopped by a callback"
        fun = self._record(state) if history_on else self._evaluate(state)[0]
        if not math.isfinite(fun) or (self.monitor is not None and state.t >= self.monitor.warmup
                                      and state.monitor.diverged(self.monitor, fun)):
            return self._diverged(state, f"the objective F(w) = {fun:.6g} at the end of the run")
        return self._result(state, status, message, fun, gnorm)

    def _start_monitor(self, state: SolverState) -> None:
        """``F(w_0)`` for the divergence monitor (the history's first point when recorded)."""
        ms = state.monitor
        h = state.history
        # The buffers hold the iterate before the first run (no sync: a loop whose counters
        # were set from outside, as a resumed solve does, reloads from them).
        w = state.w_avg if state.w_avg is not None and state.counters.n_avg > 0 else state.w
        if h.iteration and h.iteration[-1] == state.t:
            ms.f_ref = h.objective[-1]
        else:
            tic = time.perf_counter()
            ms.f_ref = float(state.objective.value(w))
            state.eval_time += time.perf_counter() - tic
        ms.keep(ms.f_ref, w, state.t)

    def _monitor_check(self, state: SolverState, fval: float | None) -> str | None:
        """One check of the divergence monitor (see :mod:`sqnopt.solver._monitor`): the reason
        when the run diverged, else None."""
        assert self.monitor is not None
        ms = state.monitor
        c = state.counters
        if fval is not None:
            estimate = fval
        elif c.n_loss > 0:
            estimate = float(c.loss_sum) / float(c.n_loss)
        else:
            return None
        c.loss_sum = 0.0
        c.n_loss = 0
        if state.t < self.monitor.warmup and math.isfinite(estimate):
            return None
        if ms.suspicious(self.monitor, estimate):
            full = fval if fval is not None else self._evaluate(state)[0]
            if ms.diverged(self.monitor, full):
                kind = "objective" if fval is not None else "mean minibatch objective"
                return (f"the {kind} rose to {estimate:.6g} and the objective F(w) is {full:.6g}, "
                        f"against F(w0) = {ms.f_ref:.6g} where the solve started")
            estimate = full
        ms.keep(estimate, state.output_iterate(), state.t)
        return None

    def _diverged(self, state: SolverState, what: str) -> SolveResult:
        """End the solve with ``Status.DIVERGED``: restore the best iterate the monitor saw,
        warn with the diagnostic, and return the result."""
        state.sync()
        c = state.counters
        ms = state.monitor
        with np.errstate(all="ignore"):
            dnorm = float(np.linalg.norm(state.buffers["direction"]))
            wnorm = float(np.linalg.norm(state.output_iterate()))
        step = self._step_at(state)
        if ms.w_best is not None:
            state.w[:] = ms.w_best
            if state.w_avg is not None:
                state.w_avg[:] = ms.w_best
        state.diverged = True
        with np.errstate(all="ignore"):
            fun = float(state.objective.value(state.w))
        advice = self._divergence_advice()
        msg = (f"sqnopt diverged at iteration {c.t} ({c.n_samples} samples processed): {what} "
               f"(step {step:.3g}, |direction| = {dnorm:.3g}, |w| = {wnorm:.3g}). Returned the "
               f"best iterate the monitor saw, from iteration {ms.best_iteration} "
               f"(F = {fun:.6g}). {advice}")
        warnings.warn(msg, DivergenceWarning, stacklevel=4)
        if self.history_every is not None:
            state.history.append(c.t, c.n_samples, state.effective_passes(), state.elapsed, fun,
                                 math.nan)
        return self._result(state, Status.DIVERGED, msg, fun)

    def _divergence_advice(self) -> str:
        """What to change after a divergence, from the components' declared properties."""
        if self.step.line_search:
            fix = ("The step is a line search, so the direction itself is at fault: use a "
                   "safeguarded curvature model (e.g. LBFGS(min_curvature=1e-3)) or larger "
                   "batches")
        elif self.curvature.needs_secant_pair or self.curvature.needs_curvature_batch:
            fix = ("Likely cause: the step is too large for the curvature model's directions. "
                   "Fix: a line search (step='armijo') with growing batches, a smaller step "
                   "(eps0), or a regularized/safeguarded curvature model (RegularizedBFGS, "
                   "on_bad_pair='damp')")
        else:
            fix = ("Likely cause: the step is too large for the data's scale. Fix: a smaller "
                   "step (eps0), step='auto' in the estimators, or rescaled features")
        return fix + "."

    def _line_search_failure(self, state: SolverState) -> tuple[Status, str, float]:
        """Status of a failed line search: ``PRECISION`` (success) when the batch was the whole
        data set and the decrease the first trial predicted, ``eps0 g'd``, is below
        ``sqrt(machine epsilon) |F|`` -- the iterate is then a minimiser to working precision,
        ``(F - F*) / |F|`` of that order or less -- else ``LINE_SEARCH_FAILED``."""
        c = state.counters
        g = state.buffers["grad"]
        d = state.buffers["direction"]
        gnorm = float(np.max(np.abs(g)))
        size = int(state.schedule.batch_size(c.t + 1))
        full = state.sampler.whole_at_n and size >= state.data.n_samples
        f = float(c.last_loss)
        predicted = self._step_at(state) * float(np.dot(g, d))
        if full and math.isfinite(predicted) and abs(predicted) <= _PRECISION * max(abs(f), 1e-300):
            return Status.PRECISION, (
                f"converged to working precision at iteration {c.t}: the line search cannot "
                f"resolve the predicted decrease {predicted:.3g} of F = {f:.10g} (gradient norm "
                f"{gnorm:.3g})"), gnorm
        return Status.LINE_SEARCH_FAILED, (
            f"the line search of {self.step.describe()} accepted no step at iteration {c.t}: no "
            f"trial decreased the batch objective enough (predicted decrease {predicted:.3g}, "
            f"gradient norm {gnorm:.3g}), or the direction was not a descent direction "
            "(g'd <= 0). The iterate is the last accepted one. Try a larger max_backtracks, a "
            "smaller eps0, larger batches or a safeguarded curvature model."), (
            gnorm if full else math.nan)

    # ------------------------------------------------------------------ helpers
    def _next_event(self, t: int, iter_stop: int | None) -> int:
        nxt = (t // self.report_every + 1) * self.report_every
        h = self.history_every
        if isinstance(h, (int, np.integer)):
            nxt = min(nxt, (t // int(h) + 1) * int(h))
        elif h is not None:
            later = [int(p) for p in h if int(p) > t]
            if later:
                nxt = min(nxt, min(later))
        if iter_stop is not None:
            nxt = min(nxt, iter_stop)
        return max(nxt, t + 1)

    def _is_history_point(self, t: int) -> bool:
        h = self.history_every
        if isinstance(h, (int, np.integer)):
            return t % int(h) == 0
        return h is not None and t in {int(p) for p in h}

    def _evaluate(self, state: SolverState, *, with_grad: bool = False) -> tuple[float, float]:
        """``F`` (and ``||grad F||`` if asked) at the output iterate; may be non-finite."""
        tic = time.perf_counter()
        w = state.output_iterate()
        gnorm = math.nan
        if with_grad:
            buf = np.empty_like(w)
            fval = float(state.objective.full_gradient(w, buf))
            gnorm = float(np.max(np.abs(buf)))
        else:
            fval = float(state.objective.value(w))
        state.eval_time += time.perf_counter() - tic
        return fval, gnorm

    def _record(self, state: SolverState) -> float:
        fval, gnorm = self._evaluate(state, with_grad=self.record_grad_norm)
        c = state.counters
        state.history.append(c.t, c.n_samples, state.effective_passes(), state.elapsed, fval, gnorm)
        return fval

    def _call_callbacks(self, state: SolverState, fval: float | None) -> bool:
        w = state.output_iterate().view()
        w.setflags(write=False)
        c = state.counters
        info = IterationInfo(iteration=c.t, n_samples=c.n_samples, time=state.elapsed,
                             objective=fval, step=c.last_step, minibatch_objective=c.last_loss,
                             w=w)
        stop = False
        for cb in self.callbacks:
            try:
                stop = bool(cb(info)) or stop
            except StopIteration:
                stop = True
        return stop

    @staticmethod
    def _step_at(state: SolverState) -> float:
        try:
            return float(state.step.step_size(state.t))
        except Exception:  # pragma: no cover - diagnostics only
            return math.nan

    def _result(self, state: SolverState, status: Status | None, message: str,
                fun: float, grad_norm: float = math.nan) -> SolveResult:
        c = state.counters
        h = state.history
        history = History(
            iteration=np.asarray(h.iteration, dtype=np.int64),
            samples=np.asarray(h.samples, dtype=np.int64),
            effective_passes=np.asarray(h.effective_passes, dtype=np.float64),
            time=np.asarray(h.time, dtype=np.float64),
            objective=np.asarray(h.objective, dtype=np.float64),
            grad_norm=np.asarray(h.grad_norm, dtype=np.float64),
        ) if h.iteration else History.empty()
        components = {"objective": self.objective.describe(),
                      "gradient": self.gradient.describe(),
                      "curvature": self.curvature.describe(),
                      "schedule": self.schedule.describe(), "step": self.step.describe()}
        if self.projection is not None:
            components["projection"] = self.projection.describe()
        w = state.output_iterate().copy()
        w.setflags(write=False)
        return SolveResult(
            w=w, n_features=state.data.n_features - self._constant_column,
            n_blocks=state.problem.n_blocks, fit_intercept=bool(self.fit_intercept),
            classes=state.data.classes, fun=fun,
            status=status or Status.CALLBACK, message=message, n_iter=c.t, n_samples=c.n_samples,
            n_curvature_samples=c.n_curvature_samples, n_secant_samples=c.n_secant_samples,
            n_reused_samples=c.n_reused_samples, n_search_samples=c.n_search_samples,
            n_estimator_samples=c.n_estimator_samples,
            n_grad_evals=c.n_grad_evals,
            n_pairs_accepted=c.n_pairs_accepted, n_pairs_skipped=c.n_pairs_skipped,
            n_resets=c.n_resets, n_train=state.data.n_samples, wall_time=state.elapsed,
            eval_time=state.eval_time, compiled=state.compiled, history=history,
            components=components, grad_norm=grad_norm,
            memory_bytes=int(self.curvature.memory_bytes(state.problem)
                             + self.gradient.memory_bytes(state.problem)))


def _check_compatible(objective: Objective, curvature: CurvatureModel, step: StepRule,
                      projection: Projection | None, curvature_schedule: BatchSchedule | None,
                      fit_intercept: object = False,
                      gradient: GradientEstimator | None = None) -> None:
    caps = objective.capabilities
    if fit_intercept is True:
        # an unregularised intercept is a coordinate the objective does not curve
        caps = caps - {STRONGLY_CONVEX}
    for comp in (curvature, step, projection, gradient):
        if comp is None:
            continue
        missing = comp.requires - caps
        if missing == {STRONGLY_CONVEX} and fit_intercept is True and \
                STRONGLY_CONVEX in objective.capabilities:
            raise IncompatibleComponentsError(
                f"{comp.kind} {comp.describe()} requires a strongly convex problem, but "
                "fit_intercept=True adds an unregularised intercept: with steps made for "
                "strong convexity (e.g. Pegasos' 1/(lam t), 1/lam at first) nothing pulls it "
                "back and it ends far off. Use fit_intercept='regularized' (the paper's bias: a "
                "constant feature regularised with the weights) or fit_intercept=False.")
        if missing:
            raise IncompatibleComponentsError(
                f"{comp.kind} {comp.describe()} requires an objective that is "
                f"{' and '.join(sorted(missing))}, but objective {objective.describe()} provides "
                f"only {sorted(caps)}. Choose a different {comp.kind} or objective.")
    if curvature.direction_scale not in step.direction_scales:
        raise IncompatibleComponentsError(
            f"step {step.describe()} is made for {'/'.join(sorted(step.direction_scales))}-"
            f"scaled directions, but curvature model {curvature.describe()} gives "
            f"{curvature.direction_scale}-scaled ones (a unit step means something else "
            "there). Use a step rule made for them (Armijo, Constant, Decaying) or another "
            "curvature model.")
    if step.line_search and projection is not None:
        raise IncompatibleComponentsError(
            f"step {step.describe()} searches along the direction on each batch, which "
            f"projection {projection.describe()} would change after the search. Use a fixed "
            "step rule (e.g. Constant or Decaying) with the projection, or drop the projection.")
    if curvature_schedule is not None and not curvature.needs_curvature_batch:
        raise IncompatibleComponentsError(
            f"curvature_schedule={curvature_schedule.describe()} is only used by curvature models "
            f"that build curvature from their own batches; {curvature.describe()} does not. "
            "Drop curvature_schedule.")


def _bind_gradient(component: GradientEstimator, kernel: Any, objective: Any) -> None:
    """Attach a gradient-estimator kernel to the objective kernel of the solve (a kernel without
    ``bind`` keeps no data-dependent state)."""
    bind = getattr(kernel, "bind", None)
    if callable(bind):
        try:
            bind(objective)
        except TypeError as exc:
            raise IncompatibleComponentsError(
                f"gradient {component.describe()} cannot work with this objective: {exc}") from exc


def _physical_memory() -> int | None:
    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):  # pragma: no cover - not POSIX
        return None


def _check_memory(curvature: CurvatureModel, problem: Problem) -> None:
    """Refuse a curvature model whose kernel would need more than half the machine's memory."""
    need = int(curvature.memory_bytes(problem))
    have = _physical_memory()
    if have is not None and need > have // 2:
        raise MemoryError(
            f"curvature model {curvature.describe()} needs {need / 2**30:.3g} GiB for "
            f"{problem.n_params} parameters (this machine has {have / 2**30:.3g} GiB): dense "
            "n x n curvature does not fit this problem. Use curvature='lbfgs' (limited memory, "
            "O(memory x n)).")


_COMPILED_BASES = (ObjectiveKernel, GradientKernel, CurvatureKernel, ScheduleKernel, StepKernel,
                   ProjectionKernel)


def _is_compiled(kernel: object) -> bool:
    return isinstance(kernel, _COMPILED_BASES)


def _all_compiled(*kernels: object) -> bool:
    return all(k is None or _is_compiled(k) for k in kernels)


def _kernel(component: Component, kernel: Any, protocol: type) -> Any:
    # compiled kernels implement their protocol by construction (a cheap isinstance); the
    # structural check of a runtime protocol is for pure-Python kernels
    if not _is_compiled(kernel) and not isinstance(kernel, protocol):
        raise TypeError(f"{component.kind} {component.describe()}.init() returned "
                        f"{type(kernel).__name__}, which does not implement "
                        f"{protocol.__name__} (see sqnopt.interfaces)")
    return kernel
