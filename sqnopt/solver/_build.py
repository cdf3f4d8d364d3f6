"""Building a solve: the components' validation and compatibility, the kernels bound to the
data, the sampler and the loop (:class:`~sqnopt.solver.Solver` inherits this part)."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import math
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, NamedTuple, Union, cast

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from sqnopt.checkpoint import Checkpoint
from sqnopt.data import Dataset, check_sparse_structure, prepare
from sqnopt.interfaces import (
    STRONGLY_CONVEX,
    BatchSchedule,
    BindingKernelLike,
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
    StepRule,
    kernel_compiled,
)
from sqnopt.registry import get_registry
from sqnopt.solver import _checkpoint
from sqnopt.solver._loop import CompiledLoop, Counters
from sqnopt.solver._monitor import DivergenceMonitor
from sqnopt.solver._pyloop import PythonLoop
from sqnopt.solver._result import IterationInfo, LoopPath, SlowPathWarning
from sqnopt.solver._sampler import (
    Sampler,
    SequenceSampler,
    ShuffleSampler,
    SubsetSampler,
    UniformSampler,
    WeightedSampler,
)
from sqnopt.solver._adaptive_loop import AdaptiveLoop, adaptive_loop_supported
from sqnopt.solver._lazy_loop import LazyTableLoop, lazy_loop_pays, lazy_loop_supported
from sqnopt.solver._scaled_loop import ScaledLoop, scaled_loop_supported
from sqnopt.solver._state import SolverState

FloatArray = NDArray[np.float64]
ComponentSpec = Union[Component, str, tuple[str, Mapping[str, Any]]]
Callback = Callable[[IterationInfo], Union[bool, None]]
Sampling = Literal["uniform", "shuffle", "subset", "weighted"]
RandomState = Union[
    None, int, np.random.SeedSequence, np.random.BitGenerator, np.random.Generator,
    np.random.RandomState,
]
Path = Literal["auto", "compiled", "generic", "scaled", "python"]

__all__ = ["IncompatibleComponentsError", "make_bit_generator", "resolve_component"]


class IncompatibleComponentsError(ValueError):
    """Two components cannot work together; raised when the Solver is constructed."""


class LoopChoice(NamedTuple):
    """What :meth:`_Builder._make_loop` built: whether every kernel runs compiled, the loop,
    its path and the one sentence that says why (:attr:`SolveResult.path_reason`)."""

    compiled: bool
    loop: Any
    path: LoopPath
    reason: str


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


class _SolverConfig:
    """The settings a :class:`~sqnopt.solver.Solver` holds (set and validated by its
    constructor), declared for the parts that build and run solves."""

    objective: Objective
    curvature: CurvatureModel
    schedule: BatchSchedule
    step: StepRule
    projection: Projection | None
    curvature_schedule: BatchSchedule | None
    gradient: GradientEstimator
    fit_intercept: bool | Literal["regularized"]
    average: bool | int
    sampling: Sampling
    batch_sequence: NDArray[np.intp] | None
    random_state: RandomState
    max_iter: int | None
    max_samples: int | None
    max_epochs: float | None
    max_time: float | None
    target_objective: float | None
    gtol: float | None
    ftol: float | None
    monitor: DivergenceMonitor | None
    report_every: int
    history_every: int | Sequence[int] | None
    record_grad_norm: bool
    callbacks: tuple[Callback, ...]
    blas_threads: int | None
    n_jobs: int | None
    path: Path
    #: A :class:`SlowPathWarning` was given (once per solver: set by the first).
    _slow_path_warned: bool

    @property
    def _constant_column(self) -> int:
        """1 when the intercept is a regularised constant feature appended to ``X``, else 0."""
        return int(self.fit_intercept == "regularized")


class _Builder(_SolverConfig):
    """Validate data and build the kernels, sampler and loop of a solve."""


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
        data = self._prepare(X, y, sample_weight, classes)
        return self._new_state(data, w0, make_bit_generator(self.random_state))

    def restore(self, checkpoint: Checkpoint, X: Any, y: ArrayLike,
                sample_weight: ArrayLike | None = None, *, new_data: bool = False
                ) -> SolverState:
        """The state of a checkpointed solve (:meth:`SolverState.checkpoint`), continued on
        ``(X, y, sample_weight)``.

        With the data the checkpoint was taken on (the default), ``run`` on the returned state
        continues bit-for-bit as the uninterrupted solve would have: same iterates, average,
        counters, history and result. The solver must have the same components and settings as
        the one that took the checkpoint (budgets, tolerances, reporting and callbacks may
        differ), and the data must match the checkpoint's fingerprint (shape, dtype, storage,
        labels and a hash of a sample of the values); otherwise a
        :class:`~sqnopt.checkpoint.CheckpointError` (a ``ValueError``) names the difference.
        The random stream continues from the checkpoint (``random_state`` is not used).

        ``new_data=True`` continues the solve on other data with the same features, as
        :meth:`rebind` continues a live state: the iterate, average, counters, history, random
        stream and curvature memory carry over; the sampler, batch schedules, the gradient
        estimator's per-sample tables and the loop's reuse buffers start afresh on the new data.
        """
        state: SolverState = _checkpoint.restore(self, checkpoint, X, y, sample_weight,
                                                 new_data,
                                                 lambda: make_bit_generator(self.random_state))
        if new_data:
            state.data_since = (state.counters.t, state.counters.n_samples)
        return state

    def _identity(self) -> dict[str, Any]:
        """The components and settings that shape an iteration (what a checkpoint belongs to);
        budgets, tolerances, reporting and callbacks are not part of it."""
        return self._identity_later()()

    def _identity_later(self) -> Callable[[], dict[str, Any]]:
        """:meth:`_identity` of the settings as they are now, described when called: the
        components (immutable) and settings are held, the injected batch sequence hashed now."""
        seq = None
        if self.batch_sequence is not None:
            seq = hashlib.blake2b(np.ascontiguousarray(self.batch_sequence, dtype=np.int64)
                                  .tobytes(), digest_size=16).hexdigest()
        average: bool | int = self.average if isinstance(self.average, bool) else \
            int(self.average)
        return functools.partial(
            _describe_identity, (self.objective, self.gradient, self.curvature, self.schedule,
                                 self.curvature_schedule, self.step, self.projection),
            {"fit_intercept": self.fit_intercept, "average": average,
             "sampling": self.sampling, "batch_sequence": seq})

    def _new_state(self, data: Dataset, w0: ArrayLike | None,
                   bitgen: np.random.BitGenerator) -> SolverState:
        """A fresh state on validated data, drawing from ``bitgen``."""
        n_blocks, dim = self.objective.param_layout(data)
        problem = Problem(n_samples=data.n_samples, n_features=data.n_features, dim=dim,
                          n_blocks=n_blocks, n_params=n_blocks * dim,
                          lam=float(self.objective.lam), fit_intercept=data.fit_intercept,
                          capabilities=self.objective.capabilities,
                          curvature_bound=self.objective.curvature_bound,
                          start_curvature=self.objective.start_curvature)
        obj_k, sched_k, csched_k = self._data_kernels(data, problem)
        _check_memory(self.curvature, problem)
        grad_k: GradientKernelLike = _kernel(self.gradient, self.gradient.init(problem),
                                             GradientKernelLike)
        _bind_gradient(self.gradient, grad_k, obj_k)
        curv_k: CurvatureKernelLike = _kernel(self.curvature, self.curvature.init(problem),
                                              CurvatureKernelLike)
        _check_direction_declaration(self.curvature, curv_k)
        _check_composite_declaration(self.curvature, curv_k)
        if isinstance(curv_k, BindingKernelLike):   # curvature from the objective's samples
            curv_k.bind(obj_k)
        step_k: StepKernelLike = _kernel(self.step, self.step.init_on_data(problem, data),
                                           StepKernelLike)
        proj_k: ProjectionKernelLike | None = None if self.projection is None else _kernel(
            self.projection, self.projection.init(problem), ProjectionKernelLike)
        sampler = self._make_sampler(data, bitgen)

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
        # the generic loops' vectors are added by _make_loop when it builds one (the scaled
        # loop keeps its own: six unused vectors of n_params cost more than its set-up)
        buffers: dict[str, Any] = _batch_buffers(data.n_samples, csched_k is not None)
        counters = Counters()
        choice = self._make_loop(obj_k, grad_k, curv_k, sched_k, csched_k, step_k, proj_k,
                                 sampler, w, w_avg, buffers, counters, average, avg_start,
                                 grad_weight=data.grad_weight)
        return SolverState(data=data, problem=problem, objective=obj_k, gradient=grad_k,
                           curvature=curv_k, schedule=sched_k, curvature_schedule=csched_k,
                           step=step_k, projection=proj_k, sampler=sampler, w=w, w_avg=w_avg,
                           counters=counters, avg_start=avg_start, compiled=choice.compiled,
                           loop=choice.loop, path=choice.path, path_reason=choice.reason,
                           buffers=buffers, identity_source=self._identity_later())

    def rebind(self, state: SolverState, X: Any, y: ArrayLike,
               sample_weight: ArrayLike | None = None) -> SolverState:
        """Continue the solve of ``state`` on new data ``(X, y, sample_weight)`` (streaming).

        Everything the solve has learned is kept: the iterate and its running average, the
        curvature kernel (memory of pairs), the step and projection kernels, the counters (so
        step sizes and batch sizes continue from the current iteration), the history and the
        random stream. What depends on the data is rebuilt: the objective kernel, the batch
        schedule kernels (functions of the iteration number, clipped to the new sample count),
        the sampler (same bit generator), the gradient estimator's per-sample state (SAGA's
        table, SVRG's snapshot) and the loop. The label set stays the one of the first data
        (``state.data.classes``), and the number of features must not change.

        The state is updated in place and returned; ``run`` it to take steps on the new data.
        Objective values recorded from then on (history, ``fun``) are on the new data.
        """
        if self.batch_sequence is not None:
            raise ValueError("rebind: an injected batch_sequence indexes the first data set; "
                             "drop batch_sequence to stream new data")
        state.sync()
        old = state.data
        data = self._prepare(X, y, sample_weight, old.classes)
        if data.n_features != old.n_features:
            extra = self._constant_column
            raise ValueError(f"rebind: X has {data.n_features - extra} features, but the solve "
                             f"was started with {old.n_features - extra}. Pass data with the "
                             "same columns")
        problem = dataclasses.replace(state.problem, n_samples=data.n_samples)
        obj_k, sched_k, csched_k = self._data_kernels(data, problem)
        sampler = self._make_sampler(data, state.sampler.bit_generator)
        buffers = dict(state.buffers) | _batch_buffers(data.n_samples, csched_k is not None)
        _bind_gradient(self.gradient, state.gradient, obj_k)    # per-sample state: new data
        forget = getattr(state.curvature, "forget_samples", None)
        if callable(forget):          # a curvature kernel holding indices of the old samples
            forget()
        if isinstance(state.curvature, BindingKernelLike):   # curvature from the samples:
            state.curvature.bind(obj_k)                         # the new objective's
        choice = self._make_loop(
            obj_k, state.gradient, state.curvature, sched_k, csched_k, state.step,
            state.projection, sampler, state.w, state.w_avg, buffers, state.counters,
            state.w_avg is not None, state.avg_start, previous=state.loop,
            grad_weight=data.grad_weight)
        state.data, state.problem, state.objective = data, problem, obj_k
        state.schedule, state.curvature_schedule, state.sampler = sched_k, csched_k, sampler
        state.buffers = buffers
        state.compiled, state.loop, state.path, state.path_reason = choice
        state.data_since = (state.counters.t, state.counters.n_samples)
        state.instability_warned = False
        return state

    def _prepare(self, X: Any, y: ArrayLike, sample_weight: ArrayLike | None,
                 classes: ArrayLike | None, validated: bool = False) -> Dataset:
        """The validated data of a solve (the design matrix of :meth:`_design`);
        ``validated``: the caller checked ``(X, y, sample_weight)`` as
        :func:`sqnopt.data.prepare` describes (a design matrix :meth:`_design` built from ``X``
        is checked all the same)."""
        Xd, data_intercept = self._design(X)
        return prepare(Xd, y, sample_weight=sample_weight, fit_intercept=data_intercept,
                       label_kind=self.objective.label_kind, classes=classes,
                       importance_sampling=self.sampling == "weighted",
                       validated=validated and Xd is X)

    def _init_validated(self, X: Any, y: ArrayLike, sample_weight: FloatArray,
                        classes: ArrayLike, w0: ArrayLike | None = None) -> SolverState:
        """:meth:`init_state` on data a :class:`~sqnopt.training.Trainer` has validated
        (checked matrix, labels among ``classes``, checked weights): the same state, without
        checking the data a second time."""
        data = self._prepare(X, y, sample_weight, classes, validated=True)
        return self._new_state(data, w0, make_bit_generator(self.random_state))

    def _data_kernels(self, data: Dataset, problem: Problem
                      ) -> tuple[ObjectiveKernelLike, ScheduleKernelLike,
                                 ScheduleKernelLike | None]:
        """The kernels that depend on the data: the objective bound to it, and the batch
        schedules (clipped to its size)."""
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
        return obj_k, sched_k, csched_k

    def _make_sampler(self, data: Dataset, bitgen: np.random.BitGenerator) -> Sampler:
        n = data.n_samples
        if self.batch_sequence is not None:
            return SequenceSampler(n, bitgen, self.batch_sequence)
        if self.sampling == "shuffle":
            return ShuffleSampler(n, bitgen)
        if self.sampling == "subset":
            # growing batches of the plain minibatch gradient extend the last one, whose
            # gradient the driver then reuses; afresh for an estimator sizing its batches from
            # their samples' spread, and where curvature batches are drawn between them (the
            # next gradient batch would extend the curvature batch: nothing to reuse)
            return SubsetSampler(n, bitgen, nested=bool(self.gradient.plain)
                                 and not self.curvature.needs_curvature_batch)
        if self.sampling == "weighted":
            return WeightedSampler(n, bitgen, data.sample_weight)
        return UniformSampler(n, bitgen)

    def _make_loop(self, obj_k: Any, grad_k: Any, curv_k: Any, sched_k: Any, csched_k: Any,
                   step_k: Any, proj_k: Any, sampler: Sampler, w: FloatArray,
                   w_avg: FloatArray | None, buffers: dict[str, Any], counters: Counters,
                   average: bool, avg_start: int, previous: Any = None,
                   grad_weight: FloatArray | None = None) -> LoopChoice:
        """The loop of a solve (see ``path`` in :class:`~sqnopt.solver.Solver`), with the path
        it takes and why; ``grad_weight``: the data's gradient weights (the Python loop's
        progressive validation loss; the compiled loops read them from the objective's rows).

        Every decision reads the kernels' and components' declarations (``compiled``,
        ``composite_step``, ``direction_is_gradient``, ``plain``, ``score_table``,
        ``line_search``, ...), never their classes. A composition on sparse rows that the
        O(nnz) iterate would take but for a declaration its gradient estimator lacks (or for
        averaging) warns once per solver (:class:`SlowPathWarning`), unless ``path`` asked for
        the loop that runs."""
        kernels = (obj_k, grad_k, curv_k, sched_k, csched_k, step_k, proj_k)
        python_parts = [f"{slot} {type(k).__name__}" for slot, k in zip(_KERNEL_SLOTS, kernels)
                        if k is not None and not kernel_compiled(k)]
        if self.path in ("compiled", "generic", "scaled") and python_parts:
            raise ValueError(f"path={self.path!r} but these kernels are pure Python (they do not "
                             f"declare compiled): {', '.join(python_parts)}")
        use_compiled = not python_parts and self.path != "python"
        path: LoopPath = "generic" if use_compiled else "python"
        reason = ""
        slow = ""
        sparse = bool(getattr(getattr(obj_k, "data", None), "is_sparse", False))
        composite = bool(getattr(curv_k, "composite_step", False))
        if not use_compiled:
            reason = ("path='python' was asked for" if self.path == "python" else
                      f"the Python loop runs every iteration: {', '.join(python_parts)} "
                      f"{'is' if len(python_parts) == 1 else 'are'} pure Python (the compiled "
                      "driver needs every kernel to declare compiled)")
        elif composite and self.path != "generic":
            # AdaGrad's composite step: the adaptive iterate (just in time on sparse rows, each
            # coordinate of a dense row every step) whenever it can run; else the generic
            # loop's dense composite step
            why_not = adaptive_loop_supported(self.objective, obj_k, self.curvature, curv_k,
                                              grad_k)
            if not why_not and self.step.uses_point:
                why_not = f"step {self.step.describe()} uses the point (gradient and direction)"
            if self.path == "scaled" and why_not:
                raise ValueError(f"path='scaled' is not possible: {why_not}. Use path='auto'.")
            if why_not:
                reason = (f"the adaptive iterate cannot run ({why_not}): the compiled driver "
                          "makes the dense composite step")
            else:
                path = "adaptive"
                reason = (f"curvature {self.curvature.describe()} makes composite steps with a "
                          "per-coordinate accumulator: the adaptive iterate applies them"
                          + (" just in time, O(nnz of the batch) per iteration" if sparse
                             else ", coordinate by coordinate"))
        elif self.path == "scaled" or (self.path != "generic" and sparse):
            # "auto" on sparse rows: the scaled or lazy loop, where it turns O(n) iterations
            # into O(nnz) ones (whether it can run is only asked where it would)
            path, reason, slow = self._sparse_path(obj_k, grad_k, curv_k, sched_k, proj_k,
                                                   average, sparse)
        else:
            reason = ("path='generic' was asked for" if self.path == "generic" else
                      "dense rows: an iteration costs O(n_params) on any iterate, so the "
                      "compiled driver keeps the dense one")
        if slow and not getattr(self, "_slow_path_warned", False):
            self._slow_path_warned = True
            warnings.warn(slow, SlowPathWarning, stacklevel=4)
        loop: Any
        if path == "adaptive":
            loop = AdaptiveLoop(cast(Any, obj_k), cast(Any, curv_k), cast(Any, sched_k),
                                cast(Any, step_k), sampler, w, counters,
                                previous if isinstance(previous, CompiledLoop) else None)
        elif path == "lazy":
            loop = LazyTableLoop(cast(Any, obj_k), cast(Any, grad_k), cast(Any, sched_k),
                                 cast(Any, step_k), cast(Any, proj_k), sampler, w, counters)
        elif path == "scaled":
            loop = ScaledLoop(cast(Any, obj_k), cast(Any, sched_k), cast(Any, step_k),
                              cast(Any, proj_k), sampler, w, w_avg, counters, average, avg_start,
                              previous if isinstance(previous, CompiledLoop) else None)
        else:
            _vector_buffers(buffers, w.shape[0])
            args = (obj_k, curv_k, sched_k, csched_k, step_k, proj_k, sampler, w,
                    buffers["w_next"], buffers["grad"], buffers["grad_next"],
                    buffers["direction"], buffers["v"], buffers["r"], w_avg,
                    buffers["batch"], buffers["curvature_batch"], counters, average,
                    avg_start, grad_k)
            if use_compiled:
                try:
                    loop = CompiledLoop(*args)
                except TypeError as exc:
                    raise TypeError(
                        "a kernel declares compiled but does not subclass the compiled base "
                        f"class of its kind ({exc}); declare compiled = False on a kernel "
                        "written in Python") from None
            else:
                loop = PythonLoop(*args, grad_weight=grad_weight)
        return LoopChoice(use_compiled, loop, path, reason)

    def _sparse_path(self, obj_k: Any, grad_k: Any, curv_k: Any, sched_k: Any, proj_k: Any,
                     average: bool, sparse: bool) -> tuple[LoopPath, str, str]:
        """The path of a compiled solve that ``path`` sends to the O(nnz) iterates (``"auto"``
        on sparse rows, or ``"scaled"``): ``(path, reason, slow)``, ``slow`` the
        :class:`SlowPathWarning`'s message when the composition falls off a fast path it could
        have used."""
        asked = self.path == "scaled"
        why_not = scaled_loop_supported(self.objective, obj_k, self.curvature, curv_k, proj_k)
        if why_not:
            if asked:
                raise ValueError(f"path='scaled' is not possible: {why_not}. Use path='auto'.")
            return "generic", f"the O(nnz) sparse iterate cannot run: {why_not}", ""
        if self.step.line_search or self.step.uses_point:
            why_not = (f"step {self.step.describe()} is a line search" if self.step.line_search
                       else f"step {self.step.describe()} uses the point (gradient and "
                       "direction)")
            if asked:
                raise ValueError(f"path='scaled' is not possible: {why_not}. Use path='auto'.")
            return "generic", f"the O(nnz) sparse iterate cannot run: {why_not}", ""
        if grad_k.plain:
            # the plain minibatch gradient runs on the scaled iterate
            return "scaled", ("path='scaled' was asked for" if asked else
                              "sparse rows, the identity direction and the plain minibatch "
                              "gradient: the scaled iterate w = a v makes each iteration "
                              "O(nnz of the batch)"), ""
        # an estimator declaring a lazy sparse form of its table estimate (SAGA's, SVRG's)
        # runs on the lazy table iterate, where a batch's entries are few against the features
        gradient = self.gradient.describe()
        pays = asked or lazy_loop_pays(obj_k, sched_k)
        no_table = lazy_loop_supported(self.gradient, grad_k, False)
        if no_table and self.gradient.dense_estimate:
            no_table = (f"gradient {gradient} declares a dense estimate (dense_estimate: no "
                        "lazy sparse form of it exists)")
        why_not = no_table or lazy_loop_supported(self.gradient, grad_k, average)
        if why_not:
            if asked:
                raise ValueError(f"path='scaled' is not possible: {why_not}. Use path='auto'.")
            slow = ""
            if (pays and sparse and self.path in ("auto", "compiled")
                    and not (no_table and self.gradient.dense_estimate)):
                cost = ("each iteration costs O(n_params) on these sparse rows where the lazy "
                        "table iterate would cost O(nnz of the batch)")
                slow = (f"{why_not}, so {cost}. Give its kernel a score "
                        "table (score_table: see the plugin guide) or use gradient='saga' or "
                        "'minibatch'; Solver(path='generic') chooses the dense iterate "
                        "without this warning" if no_table else
                        f"gradient {gradient} with averaging: {why_not}, so {cost}. Use "
                        "average=False; Solver(path='generic') chooses the dense iterate "
                        "without this warning")
            return "generic", f"the lazy table iterate cannot run: {why_not}", slow
        if not pays:
            return "generic", ("the lazy table iterate does not pay: a batch holds more "
                               "stored values than a sixteenth of the features, where the "
                               "dense step is cheaper"), ""
        return "lazy", ("path='scaled' was asked for (the lazy table iterate: gradient "
                        f"{gradient} declares a score table)" if asked else
                        f"sparse rows, the identity direction and gradient {gradient}, whose "
                        "kernel declares a score table: the lazy table iterate makes each "
                        "iteration O(nnz of the batch)"), ""


_IDENTITY_COMPONENTS = ("objective", "gradient", "curvature", "schedule", "curvature_schedule",
                        "step", "projection")


def _describe_identity(components: tuple[Component | None, ...],
                       settings: dict[str, Any]) -> dict[str, Any]:
    """:meth:`_Builder._identity` of the held components and settings."""
    def comp(c: Component | None) -> str | None:
        return None if c is None else \
            f"{type(c).__module__}.{type(c).__qualname__}: {c.describe()}"

    out: dict[str, Any] = {k: comp(c) for k, c in zip(_IDENTITY_COMPONENTS, components)}
    out.update(settings)
    return out


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
    if curvature.composite_step and (projection is not None or step.line_search):
        what = (f"projection {projection.describe()}" if projection is not None
                else f"the line search of step {step.describe()}")
        raise IncompatibleComponentsError(
            f"curvature {curvature.describe()} makes composite steps (the L2 term in closed "
            f"form, each coordinate scaled by its own accumulator), which {what} would not "
            "respect. Drop it (use a constant step, e.g. Constant(eps=0.1)) or use "
            "composite=False.")
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


def _batch_buffers(n_samples: int, curvature_batch: bool) -> dict[str, Any]:
    """The index buffers of the gradient batch and (for models that draw one) the curvature
    batch: a batch holds at most ``n_samples`` indices."""
    return {"batch": np.zeros(n_samples, dtype=np.intp),
            "curvature_batch": np.zeros(n_samples if curvature_batch else 1, dtype=np.intp)}


#: The generic loops' scratch vectors of ``n_params`` entries (:func:`_vector_buffers`).
VECTOR_BUFFERS = ("w_next", "grad", "grad_next", "direction", "v", "r")


def _vector_buffers(buffers: dict[str, Any], n_params: int) -> None:
    """Add the generic loops' scratch vectors to ``buffers`` (in place) where missing: a state
    first run by the scaled loop gets them when a rebind or restore builds a generic one."""
    for name in VECTOR_BUFFERS:
        if name not in buffers:
            buffers[name] = np.zeros(n_params)


def _bind_gradient(component: GradientEstimator, kernel: Any, objective: Any) -> None:
    """Attach a gradient-estimator kernel to the objective kernel of the solve (a kernel without
    ``bind`` keeps no data-dependent state)."""
    if isinstance(kernel, BindingKernelLike):
        try:
            kernel.bind(objective)
        except TypeError as exc:
            raise IncompatibleComponentsError(
                f"gradient {component.describe()} cannot work with this objective: {exc}") from exc


@functools.lru_cache(maxsize=1)
def _physical_memory() -> int | None:
    """The machine's memory in bytes (looked up once per process)."""
    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):  # pragma: no cover - not POSIX
        return None


def _check_memory(curvature: CurvatureModel, problem: Problem) -> None:
    """Refuse a curvature model whose kernel would need more than half the machine's memory
    (its declared :meth:`~sqnopt.interfaces.CurvatureModel.memory_bytes`)."""
    need = int(curvature.memory_bytes(problem))
    have = _physical_memory()
    if have is not None and need > have // 2:
        from sqnopt.curvature import LBFGS

        limited = int(LBFGS().memory_bytes(problem))
        hint = (f"Use a model that keeps less for this many parameters, e.g. curvature='lbfgs' "
                f"(limited memory: {limited / 2**30:.3g} GiB here)" if limited <= have // 2
                else "Reduce the parameters (features x classes)")
        raise MemoryError(
            f"curvature model {curvature.describe()} declares {need / 2**30:.3g} GiB "
            f"(memory_bytes) for {problem.n_params} parameters, more than half of this "
            f"machine's {have / 2**30:.3g} GiB. {hint}.")


#: The kernels' slots in :meth:`_Builder._make_loop`'s order (for messages).
_KERNEL_SLOTS = ("objective", "gradient", "curvature", "schedule", "curvature_schedule", "step",
                 "projection")


def _check_direction_declaration(model: CurvatureModel, kernel: Any) -> None:
    """The model and its kernel declare alike whether the direction is the gradient: the
    recipes read the model's declaration before any kernel exists, the driver the kernel's."""
    said = bool(model.direction_is_gradient)
    does = bool(getattr(kernel, "direction_is_gradient", False))
    if said != does:
        raise TypeError(
            f"curvature {model.describe()} declares direction_is_gradient={said}, but the "
            f"kernel its init() returned ({type(kernel).__name__}) declares {does}: set the "
            "class attribute direction_is_gradient of the model to what its kernel does")


def _check_composite_declaration(model: CurvatureModel, kernel: Any) -> None:
    """The model and its kernel declare alike whether the kernel makes composite steps: the
    solver's checks read the model's declaration, the driver the kernel's."""
    said = bool(model.composite_step)
    does = bool(getattr(kernel, "composite_step", False))
    if said != does:
        raise TypeError(
            f"curvature {model.describe()} declares composite_step={said}, but the kernel its "
            f"init() returned ({type(kernel).__name__}) declares {does}: declare on the model "
            "what its kernel does")


def _kernel(component: Component, kernel: Any, protocol: type) -> Any:
    # compiled kernels implement their protocol by construction (the compiled loop's typed
    # arguments check it); the structural check of a runtime protocol is for the others
    if not kernel_compiled(kernel) and not isinstance(kernel, protocol):
        raise TypeError(f"{component.kind} {component.describe()}.init() returned "
                        f"{type(kernel).__name__}, which does not implement "
                        f"{protocol.__name__} (see sqnopt.interfaces)")
    return kernel
