"""The Python iteration loop: the same iteration as :mod:`sqnopt.solver._loop`, for solves with
at least one pure-Python kernel. The iteration is the stage list of :mod:`sqnopt.solver._stages`:
``_run`` runs the plan's stage functions below (one per stage and variant) in order. Both loops
do the same floating-point operations in the same order, so with the same kernels they produce
bit-identical iterates (and the same stage traces, which the tests compare stage by stage).

Like the compiled driver, it runs either the dense iterate (``_run``: ``w`` is the loop's own
buffer and every kernel works on it) or an iterate representation (``_run_iterate``, a loop
built by :meth:`PythonLoop.with_iterate` with an
:class:`~sqnopt.interfaces.IterateKernelLike`, the Python twin of
:class:`~sqnopt.solver._iterate.IterateKernel`): the batch, the step ``eps_t = step(t)``, one
``first_order`` call of the representation (gradient, direction, update, ball projection,
average), the record and the stops are the stages of the compiled ``_run_iterate``, with one
batch drawn per iteration (no lookahead: it only hints memory, so the iterates and the
sampler's position are those of the compiled loop). The kernel expansion with a kernel given
as a Python callable (:mod:`sqnopt.kernel._expansion`) runs on this path.
"""

from __future__ import annotations


import math
from collections.abc import Callable
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray

from sqnopt.checkpoint import CheckpointError, state_array, state_value
from sqnopt.interfaces import (
    CURVATURE_ERROR,
    ITERATE_NONFINITE_LOSS,
    ITERATE_STEPPED,
    IterateKernelLike,
    PAIR_ACCEPTED,
    PAIR_RESET,
    PAIR_SKIPPED,
    CurvatureKernelLike,
    GradientKernelLike,
    LineSearchKernelLike,
    PointStepKernelLike,
    ObjectiveKernelLike,
    ProjectionKernelLike,
    ScheduleKernelLike,
    StepKernelLike,
)
from sqnopt.solver._loop import (
    EXIT_CODES,
    Counters,
    generic_loop_state,
    restore_generic_loop_state,
)
from sqnopt.solver._sampler import Sampler
from sqnopt.solver._stages import (
    BATCH_GRADIENT,
    IDLE,
    STAGE_INDEX,
    STAGE_NAMES,
    STAGES,
    VARIANTS,
    Plan,
    plan as stage_plan,
    vsum,
)

FloatArray = NDArray[np.float64]
IndexArray = NDArray[np.intp]

# Exit codes: the compiled loops' (enum in sqnopt/solver/_loop.pxd), one source of values.
LOOP_DONE = EXIT_CODES["LOOP_DONE"]
LOOP_MAX_SAMPLES = EXIT_CODES["LOOP_MAX_SAMPLES"]
LOOP_NONFINITE_LOSS = EXIT_CODES["LOOP_NONFINITE_LOSS"]
LOOP_NONFINITE_ITERATE = EXIT_CODES["LOOP_NONFINITE_ITERATE"]
LOOP_CURVATURE_ERROR = EXIT_CODES["LOOP_CURVATURE_ERROR"]
LOOP_EXHAUSTED = EXIT_CODES["LOOP_EXHAUSTED"]
LOOP_LINE_SEARCH_FAILED = EXIT_CODES["LOOP_LINE_SEARCH_FAILED"]
LOOP_GTOL = EXIT_CODES["LOOP_GTOL"]
LOOP_FTOL = EXIT_CODES["LOOP_FTOL"]



def _count_pair(code: int, c: Counters, *, unknown_fails: bool) -> bool:
    """Count a curvature pair's outcome (``PAIR_ACCEPTED`` / ``PAIR_SKIPPED`` / ``PAIR_RESET``);
    True when the model failed: ``CURVATURE_ERROR``, or, with ``unknown_fails``, any other code
    (``update_pair`` returns one of the four; ``observe_batch`` may also say "no pair")."""
    if code == PAIR_ACCEPTED:
        c.n_pairs_accepted += 1
    elif code == PAIR_SKIPPED:
        c.n_pairs_skipped += 1
    elif code == PAIR_RESET:
        c.n_resets += 1
    else:
        return code == CURVATURE_ERROR or unknown_fails
    return False

class _Iteration:
    """What one iteration's stages hand on to the next (the compiled loop's locals)."""

    __slots__ = ("t", "size", "batch", "loss", "gp", "part", "eps", "evals", "gnorm", "csize",
                 "ccode", "got_pair", "pcode")

    def __init__(self) -> None:
        self.t = self.size = self.evals = self.csize = self.ccode = self.pcode = 0
        self.got_pair = False
        self.batch: IndexArray = np.zeros(0, np.intp)
        self.loss = self.part = self.eps = 0.0
        self.gnorm = math.nan
        self.gp: FloatArray = np.zeros(0)


StageFunction = Callable[["PythonLoop", _Iteration], int]

# The stages of sqnopt.solver._stages.STAGES, one function per (stage, variant) that runs: each
# reads and writes the loop's buffers and the iteration's values, and returns 0 or an exit code.
# The compiled twin is CompiledLoop._run (one branch per stage, the same order and arithmetic).

def _size(loop: PythonLoop, it: _Iteration) -> int:
    it.size = int(loop.sched.batch_size(it.t + 1))
    return 0


def _size_estimator(loop: PythonLoop, it: _Iteration) -> int:
    size = int(cast(Any, loop.est).batch_size(int(loop.sched.batch_size(it.t + 1))))
    it.size = min(max(size, 1), loop.sampler.n_samples)
    return 0


def _draw(loop: PythonLoop, it: _Iteration) -> int:
    try:
        loop.batch[:it.size] = loop.sampler.draw(it.size)
    except StopIteration:
        return LOOP_EXHAUSTED
    it.batch = loop.batch[:it.size]
    return 0


def _draw_overlapping(loop: PythonLoop, it: _Iteration) -> int:
    status = _draw(loop, it)
    if not status:
        loop.batch[:it.size] = cast(Any, loop.est).arrange(it.batch)
    return status


def _reuse_previous(loop: PythonLoop, batch: np.ndarray, size: int) -> np.ndarray | None:
    """The rows whose gradient the compiled loop evaluates when this batch extends the
    previous one (its new rows), or is the whole data set in order after a previous batch of
    distinct rows (the other rows, in order); None when the previous gradient is not reused."""
    p = loop.prev_size
    if not (loop.have_next and loop.next_plain and 0 < p < size):
        return None
    prev = loop.prev_batch[:p]
    if np.array_equal(batch[:p], prev):
        return batch[p:size]
    n = loop.sampler.n_samples
    if loop.sampler.whole_at_n and size >= n and np.unique(prev).shape[0] == p:
        keep = np.ones(n, dtype=bool)
        keep[prev] = False
        return np.flatnonzero(keep).astype(np.intp)
    return None


def _gradient(variant: str) -> StageFunction:
    """The gradient stage's variant ``variant`` (one function per variant)."""
    overlap, plain = variant == "overlap_estimate", variant == "plain"
    with_plain, gp_is_g = variant == "estimate_with_plain", variant in BATCH_GRADIENT

    def gradient(loop: PythonLoop, it: _Iteration) -> int:
        c, w, g, batch, size = loop.counters, loop.w, loop.g, it.batch, it.size
        if (loop.have_next and size == loop.prev_size
                and np.array_equal(batch, loop.prev_batch[:size])):
            g[:] = loop.g_next          # s(w_t, B_t), evaluated last iteration
            loss = loop.loss_next
            c.n_reused_samples += size
            if overlap:
                cast(Any, loop.est).reused(w, g, size)
        elif plain and (rows := _reuse_previous(loop, batch, size)) is not None:
            # the previous batch's gradient at w, evaluated last iteration, and the rest's
            p = loop.prev_size
            q = rows.shape[0]
            tail = np.empty_like(g)
            loss_rest = float(loop.obj.gradient(w, rows, tail))
            g[:] = (p * loop.g_next + q * tail) / (p + q)
            loss = (p * loop.loss_next + q * loss_rest) / (p + q)
            c.n_reused_samples += p
            c.n_grad_evals += 1
        elif plain:
            loss = float(loop.obj.gradient(w, batch, g))
            c.n_grad_evals += 1
        else:
            est = cast(GradientKernelLike, loop.est)
            loss, extra = est.estimate(loop.obj, w, batch, g, loop.gp if with_plain else None)
            loss = float(loss)
            c.n_estimator_samples += int(extra)
            c.n_grad_evals += 1
        loop.have_next = False
        it.gp = g if gp_is_g else loop.gp
        if not np.isfinite(loss):
            return LOOP_NONFINITE_LOSS
        c.loss_sum += loss
        c.n_loss += 1
        it.loss = loss
        it.part = loop._loss_part(loss, w)
        return 0

    return gradient


def _full_batch_test(loop: PythonLoop, it: _Iteration) -> int:
    c, loss = loop.counters, it.loss
    it.gnorm = math.nan
    if it.size >= loop.sampler.n_samples:
        gnorm = it.gnorm = float(np.max(np.abs(it.gp)))
        c.last_gnorm = gnorm
        prev = loop.prev_full_loss
        if gnorm <= loop.gtol or (loop.ftol > 0.0 and 0.0 <= prev - loss <= loop.ftol * max(
                abs(prev), abs(loss), 1.0)):
            c.n_samples += it.size      # evaluated at w_t; no step taken
            c.last_loss = loss
            return LOOP_GTOL if gnorm <= loop.gtol else LOOP_FTOL
        loop.prev_full_loss = loss
    return 0


def _curvature_batch(loop: PythonLoop, it: _Iteration) -> int:
    c = loop.counters
    csize = it.csize = int(cast(ScheduleKernelLike, loop.csched).batch_size(it.t + 1))
    try:
        loop.cbatch[:csize] = loop.sampler.draw(csize)
    except StopIteration:
        return LOOP_EXHAUSTED
    c.n_curvature_samples += csize
    it.ccode = int(loop.curv.observe_batch(loop.obj, loop.w, loop.cbatch[:csize]))
    if _count_pair(it.ccode, c, unknown_fails=False):     # as the compiled loop
        return LOOP_CURVATURE_ERROR
    return 0


def _estimator_pair(loop: PythonLoop, it: _Iteration) -> int:
    it.got_pair = bool(cast(Any, loop.est).pair(loop.w, loop.v, loop.r))
    it.pcode = 0
    if it.got_pair:
        it.pcode = int(loop.curv.update_pair(loop.v, loop.r))
        if _count_pair(it.pcode, loop.counters, unknown_fails=True):
            return LOOP_CURVATURE_ERROR
    return 0


def _direction(loop: PythonLoop, it: _Iteration) -> int:
    loop.curv.direction(loop.g, loop.d)
    extra = int(getattr(loop.curv, "extra_samples", 0) or 0)
    if extra:
        loop.counters.n_curvature_samples += extra
        setattr(loop.curv, "extra_samples", 0)
    return 0


def _direction_is_gradient(loop: PythonLoop, it: _Iteration) -> int:
    loop.d[:] = loop.g
    return 0


def _step(loop: PythonLoop, it: _Iteration) -> int:
    it.eps = float(loop.step.step_size(it.t))
    it.evals = 0
    return 0


def _step_at(loop: PythonLoop, it: _Iteration) -> int:
    it.eps = float(cast(PointStepKernelLike, loop.step).step_at(it.t, it.loss, loop.w, it.gp,
                                                                loop.d))
    it.evals = 0
    return 0


def _search(loop: PythonLoop, it: _Iteration) -> int:
    c = loop.counters
    eps, f_next, evals = cast(LineSearchKernelLike, loop.step).search(
        loop.obj, loop.w, it.batch, it.loss, it.gp, loop.d, loop.w_next, loop.g_next)
    it.eps, it.evals = float(eps), int(evals)
    c.n_grad_evals += it.evals
    c.n_search_samples += it.evals * it.size
    if not np.isfinite(it.eps):
        c.last_loss = it.loss           # f_B(w_t): the monitor's precision test reads it
        return LOOP_LINE_SEARCH_FAILED
    loop.loss_next = float(f_next)
    return 0


def _update(loop: PythonLoop, it: _Iteration) -> int:
    np.subtract(loop.w, it.eps * loop.d, out=loop.w_next)
    return 0 if np.isfinite(loop.w_next).all() else LOOP_NONFINITE_ITERATE


def _update_projected(loop: PythonLoop, it: _Iteration) -> int:
    np.subtract(loop.w, it.eps * loop.d, out=loop.w_next)
    cast(ProjectionKernelLike, loop.proj).project(loop.w_next)
    return 0 if np.isfinite(loop.w_next).all() else LOOP_NONFINITE_ITERATE


def _update_composite(loop: PythonLoop, it: _Iteration) -> int:
    if int(cast(Any, loop.curv).composite_update(loop.w, loop.g, it.eps, loop.w_next)) != 0:
        return LOOP_NONFINITE_ITERATE
    return 0


def _secant_pair(evaluate: bool) -> StageFunction:
    """The secant pair stage: ``evaluate`` ``s(w_{t+1}, B_t)``, or take the search's."""

    def secant_pair(loop: PythonLoop, it: _Iteration) -> int:
        if evaluate:
            loop.loss_next = float(loop.obj.gradient(loop.w_next, it.batch, loop.g_next))
            loop.counters.n_grad_evals += 1
            loop.counters.n_secant_samples += it.size
        np.subtract(loop.w_next, loop.w, out=loop.v)
        np.subtract(loop.g_next, it.gp, out=loop.r)
        it.pcode = int(loop.curv.update_pair(loop.v, loop.r))
        return LOOP_CURVATURE_ERROR if _count_pair(it.pcode, loop.counters,
                                                   unknown_fails=True) else 0

    return secant_pair


def _advance(keep: bool) -> StageFunction:
    """The advance stage: ``keep`` ``s(w_{t+1}, B_t)`` for the next gradient stage or not."""

    def advance(loop: PythonLoop, it: _Iteration) -> int:
        c, size = loop.counters, it.size
        loop.w[:] = loop.w_next
        if keep:
            loop.prev_batch[:size] = it.batch
            loop.prev_size = size
            loop.have_next = True
            # g_next is the plain batch gradient at the new iterate (a checkpoint leaves it out and
            # a restore recomputes it) unless a step rule formed it otherwise
            loop.next_plain = (loop.plan["step"] != "search"
                               or bool(getattr(loop.step, "plain_gradient", False)))
        c.t += 1
        c.n_samples += size
        c.last_step = it.eps
        c.last_loss = it.loss
        c.prog_loss += it.part * size
        c.prog_weight += loop._batch_weight(it.batch)
        return 0

    return advance


def _average(loop: PythonLoop, it: _Iteration) -> int:
    c = loop.counters
    if c.t > loop.avg_start:
        w_avg = cast(FloatArray, loop.w_avg)
        c.n_avg += 1
        w_avg += (loop.w - w_avg) / c.n_avg
    return 0


_STAGE_FUNCTIONS: dict[tuple[str, str], StageFunction] = {
    ("size", "schedule"): _size,
    ("size", "estimator"): _size_estimator,
    ("draw", "sampler"): _draw,
    ("draw", "overlapping"): _draw_overlapping,
    **{("gradient", v): _gradient(v) for v in VARIANTS["gradient"]},
    ("full_batch_test", "test"): _full_batch_test,
    ("curvature_batch", "observe"): _curvature_batch,
    ("estimator_pair", "take"): _estimator_pair,
    ("direction", "model"): _direction,
    ("direction", "gradient"): _direction_is_gradient,
    ("direction", "composite"): _direction_is_gradient,
    ("step", "time"): _step,
    ("step", "point"): _step_at,
    ("step", "search"): _search,
    ("update", "axpy"): _update,
    ("update", "projected"): _update_projected,
    ("update", "composite"): _update_composite,
    ("secant_pair", "evaluate"): _secant_pair(evaluate=True),
    ("secant_pair", "searched"): _secant_pair(evaluate=False),
    ("advance", "swap"): _advance(keep=False),
    ("advance", "swap_gradient"): _advance(keep=False),
    ("advance", "keep"): _advance(keep=True),
    ("average", "average"): _average,
}
# every variant that runs has its function
assert {k for k in _STAGE_FUNCTIONS} == {(name, v) for name, variants in STAGES
                                         for v in variants if (name, v) not in IDLE}


def _no_values(loop: PythonLoop, it: _Iteration) -> tuple[float, float]:
    return 0.0, 0.0


# The trace values of each stage (sqnopt.solver._stages.TRACE_VALUES).
_TRACE_VALUES: dict[str, Callable[[PythonLoop, _Iteration], tuple[float, float]]] = {
    "size": lambda loop, it: (float(it.size), 0.0),
    "draw": lambda loop, it: (float(int(it.batch.sum())), 0.0),
    "gradient": lambda loop, it: (it.loss, vsum(loop.g)),
    "full_batch_test": lambda loop, it: (it.gnorm, 0.0),
    "curvature_batch": lambda loop, it: (float(it.csize), float(it.ccode)),
    "estimator_pair": lambda loop, it: (float(it.got_pair), float(it.pcode)),
    "direction": lambda loop, it: (vsum(loop.d), 0.0),
    "step": lambda loop, it: (it.eps, float(it.evals)),
    "update": lambda loop, it: (vsum(loop.w_next), 0.0),
    "secant_pair": lambda loop, it: (loop.loss_next, float(it.pcode)),
    "advance": lambda loop, it: (loop.counters.prog_loss, loop.counters.prog_weight),
    "average": lambda loop, it: (float(loop.counters.n_avg), vsum(cast(FloatArray, loop.w_avg))),
}
assert set(_TRACE_VALUES) == set(STAGE_NAMES)


class PythonLoop:
    """Runs the driver iteration calling the kernels' Python-level methods (declarations as
    :class:`sqnopt.solver._loop.CompiledLoop`'s). The constructor builds the driver with the
    dense iterate; :meth:`with_iterate` builds it with an iterate representation."""

    iterate: IterateKernelLike | None = None
    # the dense path's buffers and carry-over (set by the constructor; the stage functions above
    # read them)
    w: FloatArray
    w_next: FloatArray
    g: FloatArray
    g_next: FloatArray
    d: FloatArray
    w_avg: FloatArray | None
    loss_next: float
    counters: Counters
    # the representation path's own fields (set by ``with_iterate``)
    radius: float = 0.0                     # the ball's radius (0: no projection)
    pending: list[IndexArray | None]        # batches restored from a checkpoint, not run yet
    last_t: int = 0                         # the counters where the last run left them
    last_samples: int = 0
    last_n_avg: int = 0

    @property
    def loop_kind(self) -> str:
        """The ``"loop"`` entry of the checkpoint state: ``"generic"`` (dense iterate) or the
        representation's ``kind``."""
        return "generic" if self.iterate is None else self.iterate.kind

    @property
    def tests_full_batch(self) -> bool:
        """The dense path tests ``gtol`` / ``ftol`` on full-batch gradients; a representation
        has no dense gradient."""
        return self.iterate is None

    @property
    def lazy_iterate(self) -> bool:
        """With a representation, ``w`` is written only by :meth:`sync`."""
        return self.iterate is not None

    def sync(self) -> None:
        """Dense path: nothing to write (``w`` and ``w_avg`` are the loop's own buffers, always
        current); with a representation, its ``sync``."""
        if self.iterate is not None:
            self.iterate.sync(self.counters.n_avg)

    @classmethod
    def with_iterate(cls, objective: ObjectiveKernelLike, iterate: IterateKernelLike,
                     schedule: ScheduleKernelLike, step: StepKernelLike,
                     projection: ProjectionKernelLike | None, sampler: Sampler,
                     counters: Counters, *, average: bool = False,
                     avg_start: int = 0) -> PythonLoop:
        """The driver running its iterations on ``iterate`` (the compiled
        ``CompiledLoop._iterate_setup``): ``schedule`` gives ``|B_t|``, ``step`` ``eps_t`` (a
        function of ``t``: no line search), ``projection`` none or a Euclidean ball (one that
        declares ``ball_radius > 0``)."""
        if iterate.dense_iterate and iterate.n_params != objective.n_params:
            raise ValueError(f"iterate representation has {iterate.n_params} parameters, "
                             f"expected {objective.n_params}")
        if bool(getattr(step, "line_search", False)):
            raise ValueError("a line search needs the dense iterate (it evaluates gradients at "
                             "trial points)")
        if bool(getattr(step, "uses_point", False)):
            raise ValueError("a step rule that uses the point needs the dense iterate (it reads "
                             "the gradient and the direction)")
        radius = float(getattr(projection, "ball_radius", 0.0)) if projection is not None else 0.0
        if projection is not None and not radius > 0:
            raise ValueError("an iterate representation applies no projection or a Euclidean "
                             "ball (a projection that declares ball_radius) only")
        loop = cls.__new__(cls)
        loop.obj = objective
        loop.iterate = iterate
        loop.sched = schedule
        loop.step = step
        loop.proj = projection
        loop.radius = radius
        loop.sampler = sampler
        loop.counters = counters
        loop.average = average
        loop.avg_start = avg_start
        loop.pending = []
        loop._at_counters()
        return loop

    def _at_counters(self) -> None:
        """No batch pending; the loop stands where the counters say."""
        c = self.counters
        self.last_t, self.last_samples, self.last_n_avg = c.t, c.n_samples, c.n_avg

    def __init__(self, objective: ObjectiveKernelLike, curvature: CurvatureKernelLike,
                 schedule: ScheduleKernelLike, curvature_schedule: ScheduleKernelLike | None,
                 step: StepKernelLike, projection: ProjectionKernelLike | None, sampler: Sampler,
                 w: FloatArray, w_next: FloatArray, grad: FloatArray, grad_next: FloatArray,
                 direction: FloatArray, v: FloatArray, r: FloatArray, w_avg: FloatArray | None,
                 batch: IndexArray, curvature_batch: IndexArray, counters: Counters,
                 average: bool, avg_start: int,
                 gradient: GradientKernelLike | None = None, *,
                 grad_weight: FloatArray | None = None) -> None:
        if curvature.needs_curvature_batch and curvature_schedule is None:
            raise ValueError("the curvature model needs a curvature batch schedule")
        if (bool(getattr(curvature, "composite_step", False))
                and (projection is not None or bool(getattr(step, "line_search", False)))):
            raise ValueError("a curvature kernel that makes composite steps takes no projection "
                             "and no line search")
        self.obj = objective
        self.est = gradient
        self.gp = np.zeros_like(w)
        self.curv = curvature
        self.sched = schedule
        self.csched = curvature_schedule
        self.step = step
        self.proj = projection
        self.sampler = sampler
        self.w, self.w_next, self.g, self.g_next = w, w_next, grad, grad_next
        self.d, self.v, self.r, self.w_avg = direction, v, r, w_avg
        self.batch, self.cbatch = batch, curvature_batch
        self.counters = counters
        self.average = average
        self.avg_start = avg_start
        self.gtol = 0.0
        self.ftol = 0.0
        self._plan()
        # The secant gradient kept for reuse (as in the compiled loop): s(w, prev_batch) is in
        # g_next when have_next; w_saved is checked at the start of the next run.
        self.prev_batch = np.zeros(len(batch) if self.plan["advance"] == "keep" else 1, np.intp)
        self.w_saved = np.zeros_like(w)
        self.prev_size = 0
        self.have_next = False
        self.next_plain = False
        self.loss_next = 0.0
        self.prev_full_loss = float("nan")
        self._trace: list[tuple[float, ...]] | None = None
        # the progressive validation loss: the gradient weights g_i of the data (None: 1) and
        # the objective's regulariser alone (NaN without one, see ObjectiveKernelLike)
        # (unit weights sum to the batch size exactly: no per-iteration sum for them)
        self.grad_weight = (None if grad_weight is None or bool(np.all(grad_weight == 1.0))
                            else grad_weight)
        self.reg_value = getattr(objective, "reg_value", None)

    def _plan(self) -> None:
        """Plan the stages (:func:`sqnopt.solver._stages.plan`) and take their functions, in
        order (``gtol`` and ``ftol`` are set after construction: ``run`` plans again when
        whether a tolerance is set changed)."""
        self.planned_tolerances = self.gtol > 0.0 or self.ftol > 0.0
        self.plan = self.stage_plan
        codes = self.plan.codes
        self._stages = [(STAGE_INDEX[name], codes[STAGE_INDEX[name]],
                         _STAGE_FUNCTIONS[name, self.plan[name]], _TRACE_VALUES[name])
                        for name in self.plan.active]

    @property
    def stage_plan(self) -> Plan:
        """The stage variants this loop runs (:class:`sqnopt.solver._stages.Plan`)."""
        return stage_plan(curvature=self.curv, step=self.step, projection=self.proj,
                          sampler=self.sampler, gradient=self.est,
                          tolerances=self.gtol > 0.0 or self.ftol > 0.0, average=self.average)

    def start_trace(self, capacity: int) -> None:
        """Record a stage trace from the next ``run`` on (``CompiledLoop.start_trace``)."""
        if self.iterate is not None:
            raise ValueError("the stage trace is of the dense iterate's stages")
        self._trace = []
        self._trace_capacity = max(int(capacity), 1)

    def stop_trace(self) -> FloatArray:
        """End the trace; its records ``(t, stage, variant, a, b)`` as an array."""
        if self._trace is None:
            raise ValueError("no trace was started")
        records, self._trace = self._trace, None
        if len(records) > self._trace_capacity:
            raise ValueError(f"the trace overflowed its capacity {self._trace_capacity} "
                             f"({len(records)} records)")
        return np.array(records, dtype=np.float64).reshape(-1, 5)

    def _loss_part(self, loss: float, w: FloatArray) -> float:
        """``f_B(w) - lam/2 ||w_reg||^2`` (the compiled loop's arithmetic)."""
        if float(self.obj.lam) == 0.0:
            return loss - 0.0
        if self.reg_value is None:
            return float("nan")
        return loss - float(self.reg_value(w))

    def _batch_weight(self, batch: IndexArray) -> float:
        """``sum_i g_i`` over the batch, in order (as the compiled loop: ``cumsum`` adds
        sequentially from the first)."""
        if self.grad_weight is None:
            return float(batch.shape[0])
        return float(np.cumsum(self.grad_weight[batch])[-1])

    def get_state(self, *, data_state: bool = True) -> dict[str, Any]:
        """What the loop carries from one ``run`` to the next, in the compiled loop's format:
        :func:`sqnopt.solver._loop.generic_loop_state` on the dense path, the representation's
        state with the driver's position (``CompiledLoop.get_state``) with a representation."""
        if self.iterate is not None:
            return self._iterate_state(self.iterate, data_state)
        if not data_state:
            return {"loop": "generic"}
        return generic_loop_state(self.have_next, self.prev_size, self.prev_batch,
                                  self.loss_next, self.g_next, self.w_saved, self.prev_full_loss,
                                  self.w, self.next_plain)

    def set_state(self, state: dict[str, Any], *, new_data: bool = False) -> None:
        """Restore what :meth:`get_state` returned (on new data: nothing to restore on the
        dense path; a representation is kept as the compiled loop keeps it)."""
        if self.iterate is not None:
            self._set_iterate_state(self.iterate, state, new_data)
            return
        w, obj = self.w, self.obj
        got = restore_generic_loop_state(
            state, new_data, self.prev_batch, self.g_next, self.w_saved, w,
            lambda b, out: float(obj.gradient(w, b, out)), self, "the Python loop")
        if got is not None:
            (self.prev_size, self.have_next, self.loss_next, self.prev_full_loss,
             self.next_plain) = got

    def run(self, n_iter: int, max_samples: int) -> int:
        """Run up to ``n_iter`` iterations; stop before an iteration once ``max_samples`` (if
        > 0) samples were processed. Returns an exit code (``LOOP_*``)."""
        if self.iterate is not None:
            c = self.counters
            if (c.t, c.n_samples, c.n_avg) != (self.last_t, self.last_samples, self.last_n_avg):
                self.reload()   # the state was restored or edited from outside
            status = self._run_iterate(self.iterate, n_iter, max_samples)
            self._at_counters()
            return status
        if self.planned_tolerances != (self.gtol > 0.0 or self.ftol > 0.0):
            self._plan()            # the full-batch test is on or off now
        if not np.array_equal(self.w, self.w_saved):
            self.have_next = False      # w was changed between runs
            self.prev_full_loss = float("nan")
        status = self._run(n_iter, max_samples)
        self.w_saved[:] = self.w
        return status

    def _run(self, n_iter: int, max_samples: int) -> int:
        """The stages of the plan, in order (:mod:`sqnopt.solver._stages`; the compiled twin is
        ``CompiledLoop._run``)."""
        c = self.counters
        it = _Iteration()
        stages, trace = self._stages, self._trace
        runs = [run for _, _, run, _ in stages]
        for _ in range(n_iter):
            if max_samples > 0 and c.n_samples >= max_samples:
                return LOOP_MAX_SAMPLES
            it.t = c.t
            if trace is None:
                for run in runs:
                    status = run(self, it)
                    if status:
                        return status
                continue
            for index, code, run, values in stages:
                status = run(self, it)
                if status:
                    return status
                trace.append((float(it.t), float(index), float(code), *values(self, it)))
        return LOOP_DONE

    # ---- the iterate-representation path ---------------------------------------------------

    def reload(self) -> None:
        """Rebuild the representation from ``w`` and the counters and drop the pending batches
        (the dense path reads ``w`` itself: nothing to do)."""
        if self.iterate is not None:
            self.iterate.reload(self.counters.n_avg)
            self.pending = []
            self._at_counters()

    def _iterate_state(self, iterate: IterateKernelLike, data_state: bool) -> dict[str, Any]:
        """The compiled loop's format (``CompiledLoop.get_state``): the representation's state,
        the counters as the loop left them and, with ``data_state``, the batches drawn ahead
        (only those restored from a compiled loop's checkpoint and not run yet)."""
        state = iterate.get_state()
        state.update(last_t=int(self.last_t), last_samples=int(self.last_samples),
                     last_n_avg=int(self.last_n_avg))
        if data_state:
            rows = [b for b in self.pending if b is not None]
            drawn_upto = int(self.last_t) + len(rows)
            state.update(drawn_upto=drawn_upto,
                         exhausted_at=drawn_upto if len(rows) < len(self.pending) else -1,
                         ahead_samples=int(sum(len(b) for b in rows)),
                         pending_sizes=np.array([len(b) for b in rows], dtype=np.intp),
                         pending=(np.concatenate(rows).astype(np.intp) if rows
                                  else np.zeros(0, np.intp)))
        return state

    def _set_iterate_state(self, iterate: IterateKernelLike, state: dict[str, Any],
                           new_data: bool) -> None:
        iterate.check_state(state)
        last_t = state_value(state, "last_t", int, self, lo=0)
        last_n_avg = state_value(state, "last_n_avg", int, self, lo=0)
        if new_data and (last_t != self.counters.t or last_n_avg != self.counters.n_avg):
            self.reload()
            return
        iterate.set_state(state)
        self.pending = []
        if new_data:
            self._at_counters()
            return
        sizes = state_array(state, "pending_sizes", self, np.intp, lo=1)
        pending = state_array(state, "pending", self, np.intp, rows=True)
        exhausted_at = state_value(state, "exhausted_at", int, self, lo=-1)
        last_samples = state_value(state, "last_samples", int, self, lo=0)
        if (int(sizes.sum()) != pending.shape[0]
                or state_value(state, "drawn_upto", int, self) != last_t + sizes.shape[0]):
            raise CheckpointError(f"{type(self).__name__}: the checkpointed batches drawn "
                                  "ahead ('pending', 'pending_sizes', 'drawn_upto') do not "
                                  "agree or do not fit this data")
        off = 0
        for size in sizes:
            self.pending.append(np.array(pending[off:off + int(size)], dtype=np.intp))
            off += int(size)
        if exhausted_at == last_t + sizes.shape[0]:
            self.pending.append(None)       # the sampler ran out at that iteration
        self.last_t = last_t
        self.last_samples = last_samples
        self.last_n_avg = last_n_avg

    def _run_iterate(self, iterate: IterateKernelLike, n_iter: int, max_samples: int) -> int:
        """The iteration on an iterate representation: the stages and record of the compiled
        ``CompiledLoop._run_iterate`` (see the module docstring)."""
        c = self.counters
        avg_after = self.avg_start if self.average else None
        status = LOOP_DONE
        # the record in locals, stored once at the end (as the compiled loop's LoopCounts)
        t, n_samples, n_grad_evals, n_loss, n_avg_done = (c.t, c.n_samples, c.n_grad_evals,
                                                          c.n_loss, c.n_avg)
        loss_sum, last_step, last_loss = c.loss_sum, c.last_step, c.last_loss
        prog_loss, prog_weight = c.prog_loss, c.prog_weight
        sampler, sched, step, radius = self.sampler, self.sched, self.step, self.radius
        try:
            for _ in range(n_iter):
                if max_samples > 0 and n_samples >= max_samples:
                    status = LOOP_MAX_SAMPLES
                    break
                # 1. the batch
                if self.pending:
                    batch = self.pending.pop(0)
                    if batch is None:
                        self.pending.append(None)
                        status = LOOP_EXHAUSTED
                        break
                else:
                    try:
                        batch = np.asarray(sampler.draw(int(sched.batch_size(t + 1))),
                                           dtype=np.intp)
                    except StopIteration:
                        status = LOOP_EXHAUSTED
                        break
                # 4. the step: eps_t, a function of t (so taken before the gradient)
                eps = float(step.step_size(t))
                # 2.-5. the gradient in coefficient form, d = g, the update with the ball
                # projection and step 7's average
                n_avg = n_avg_done + 1 if avg_after is not None and t >= avg_after else 0
                code, loss = iterate.first_order(batch, eps, radius, n_avg)
                n_grad_evals += 1
                if code == ITERATE_NONFINITE_LOSS:
                    status = LOOP_NONFINITE_LOSS
                    break
                loss_sum += loss
                n_loss += 1
                if code != ITERATE_STEPPED:
                    status = LOOP_NONFINITE_ITERATE
                    break
                # 7. record
                t += 1
                n_samples += int(batch.shape[0])
                last_step = eps
                last_loss = loss
                prog_loss += float(getattr(iterate, "batch_loss", math.nan))
                prog_weight += float(getattr(iterate, "batch_weight", 0.0))
                if n_avg:
                    n_avg_done = n_avg
        finally:
            c.t, c.n_samples, c.n_grad_evals, c.n_loss, c.n_avg = (t, n_samples, n_grad_evals,
                                                                   n_loss, n_avg_done)
            c.loss_sum, c.last_step, c.last_loss = loss_sum, last_step, last_loss
            c.prog_loss, c.prog_weight = prog_loss, prog_weight
        c.n_estimator_samples += int(iterate.extra_samples)
        iterate.extra_samples = 0
        return status
