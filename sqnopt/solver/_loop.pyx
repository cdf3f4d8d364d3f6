# cython: language_level=3
"""The compiled iteration loop of the generic stochastic-descent driver.

One iteration ``t`` (``k = t + 1``) is the stage list of :mod:`sqnopt.solver._stages` (size,
draw, gradient, full-batch test, curvature batch, estimator pair, direction, step, update, secant
pair, advance, average): ``_run`` runs the stages in that order, each the variant the plan chose
from its provider's declarations (``self.plan``, one code per stage; the enums in ``_loop.pxd``,
checked against the list below, :data:`STAGE_CODES`). Its twin, ``PythonLoop._run`` in
:mod:`sqnopt.solver._pyloop`, runs the same stages as Python functions; both record a stage
trace on request (``start_trace`` / ``stop_trace``), which the tests compare stage by stage.

Secant pairs are formed on the *same* batch: ``r = s(w_{t+1}, B_t) - s(w_t, B_t)``, ``v =
w_{t+1} - w_t``. When ``B_{t+1}`` is ``B_t`` again (full-batch runs: the whole data set in index
order every iteration), the gradient stage of the next iteration is that same evaluation,
``s(w_{t+1}, B_t)``, and is reused instead of recomputed (``n_reused_samples``, advance variant
``keep``); the objective's minibatch gradient must be a deterministic function of ``(w,
batch)``. The same holds for an estimator that declares ``batch_gradient`` (its estimate is
``s(w, B)``); its ``cy_estimate`` is then not called for that iteration. When ``B_{t+1}``
*extends* ``B_t`` (a growing batch of the subset sampler: ``B_t``'s rows first, in order) or is
the whole data set in order after a ``B_t`` of distinct rows, the plain gradient reuses it too:
``s(w, B_{t+1}) = (p s(w, B_t) + q s(w, R)) / (p + q)`` with ``R`` the ``q`` other rows (the
new rows, or the rows outside ``B_t`` in order) -- each a mean over its rows plus the same
regulariser -- so only ``R`` is evaluated (``n_reused_samples`` counts the ``p`` reused). With an
``overlap_pairs`` estimator (multi-batch L-BFGS) no pair is formed after the step: the estimator
supplies the pair of the previous step, ``(w_t - w_{t-1}, grad F_O(w_t) - grad F_O(w_{t-1}))`` on
the samples ``O`` shared by ``B_{t-1}`` and ``B_t``, and the model takes it before the direction
(stage ``estimator_pair``).

**The iterate's representation.** By default ``w`` is a dense vector (two buffers that swap roles
each iteration) and every kernel works on it (``_run``). A loop built with an iterate
representation (:class:`~sqnopt.solver._iterate.IterateKernel`, e.g. the scaled sparse iterate ``w
= a v`` of :mod:`sqnopt.solver._scaled_loop`; the build checks the composition: margin objective,
identity direction, plain minibatch gradient, a step that is a function of ``t``, no projection or
a Euclidean ball) runs the same stages in ``_run_iterate``: the draw takes the batch from the
batches drawn ``lookahead`` iterations ahead (drawn only for iterations of the current ``run``
call, within its sample budget, so between calls the sampler is where ``_run`` leaves it), the
step's ``eps_t`` is taken before the gradient (it depends on ``t`` only), and the gradient,
direction, update and average stages are one call, ``cy_first_order``: the minibatch objective and
the coefficients ``c_i = g_i y_i loss'(m_i) / |B|`` (``s(w, B) = lam w_reg + sum_i c_i x_i``), the
update with ``d = g``, the ball projection and the average. The record (counters), the stopping
tests and the checkpoint state stay here. The full-batch tolerance tests below need a dense
gradient and are not done with a representation (the solver tests tolerances at report points).

Every iteration adds its minibatch objective to ``loss_sum`` / ``n_loss`` (the divergence
monitor's window, :mod:`sqnopt.solver._monitor`). When the gradient's batch is the whole data set
(``sampler.whole_at_n`` and ``|B_t| >= N``), ``f_B(w_t) = F(w_t)`` and ``g = grad F(w_t)``
exactly, so the tolerances are tested on them at no extra cost, before any step is taken (stage
``full_batch_test``):
``max_j |g_j| <= gtol`` ends the run with ``LOOP_GTOL``, and a decrease
``0 <= F(w_{t-1}) - F(w_t) <= ftol * max(|F(w_{t-1})|, |F(w_t)|, 1)`` since the previous
full-batch iteration (the test of L-BFGS-B, Byrd, Lu, Nocedal & Zhu 1995) with ``LOOP_FTOL``.

The loop runs without the GIL through the kernels' virtual ``cy_*`` methods and returns to Python
after ``n_iter`` iterations or on an event (sample budget, non-finite values, curvature error).
"""

from libc.math cimport NAN, fabs, fmax, isfinite
from libc.string cimport memcmp, memcpy
from cpython.pyport cimport PY_SSIZE_T_MAX

import numpy as np

from sqnopt.checkpoint import CheckpointError, restore_array, state_array, state_value
from sqnopt.solver._stages import check_compiled, plan as stage_plan

from sqnopt._vec cimport sq_step_allfinite, vallfinite
from sqnopt.curvature._base cimport (
    CURVATURE_ERROR, PAIR_ACCEPTED, PAIR_RESET, PAIR_SKIPPED, CurvatureKernel,
)
from sqnopt.gradients._base cimport GradientKernel
from sqnopt.objectives._base cimport ObjectiveKernel
from sqnopt.projections._base cimport ProjectionKernel
from sqnopt.schedules._base cimport ScheduleKernel
from sqnopt.solver._loop cimport (
    LOOP_CURVATURE_ERROR, LOOP_DONE, LOOP_EXHAUSTED, LOOP_FTOL, LOOP_GTOL, LOOP_MAX_SAMPLES,
    LOOP_NONFINITE_ITERATE, LOOP_LINE_SEARCH_FAILED, LOOP_NONFINITE_LOSS, Counters, LoopCounts,
    counts_load, counts_store,
    STAGE_SIZE, STAGE_DRAW, STAGE_GRADIENT, STAGE_FULL_BATCH_TEST, STAGE_CURVATURE_BATCH,
    STAGE_ESTIMATOR_PAIR, STAGE_DIRECTION, STAGE_STEP, STAGE_UPDATE, STAGE_SECANT_PAIR,
    STAGE_ADVANCE, STAGE_AVERAGE, N_STAGES, VARIANT_NONE,
    SIZE_SCHEDULE, SIZE_ESTIMATOR, DRAW_SAMPLER, DRAW_OVERLAPPING,
    GRADIENT_PLAIN, GRADIENT_BATCH_ESTIMATE, GRADIENT_OVERLAP_ESTIMATE, GRADIENT_ESTIMATE,
    GRADIENT_ESTIMATE_WITH_PLAIN, FULL_BATCH_TEST_TEST, CURVATURE_BATCH_OBSERVE,
    ESTIMATOR_PAIR_TAKE, DIRECTION_MODEL, DIRECTION_GRADIENT, DIRECTION_COMPOSITE,
    STEP_TIME, STEP_POINT, STEP_SEARCH, UPDATE_AXPY, UPDATE_PROJECTED, UPDATE_COMPOSITE,
    UPDATE_SEARCHED, SECANT_PAIR_EVALUATE, SECANT_PAIR_SEARCHED, ADVANCE_SWAP,
    ADVANCE_SWAP_GRADIENT, ADVANCE_KEEP, AVERAGE_AVERAGE, TRACE_WIDTH,
)
from sqnopt.solver._iterate cimport (
    ITERATE_NONFINITE_LOSS, ITERATE_STEPPED, IterateKernel,
)
from sqnopt.solver._sampler cimport Sampler
from sqnopt.steps._base cimport StepKernel


# The exit codes for Python (the enum lives in _loop.pxd; the Python loop takes its values here).
EXIT_CODES = {
    "LOOP_DONE": LOOP_DONE, "LOOP_MAX_SAMPLES": LOOP_MAX_SAMPLES,
    "LOOP_NONFINITE_LOSS": LOOP_NONFINITE_LOSS, "LOOP_NONFINITE_ITERATE": LOOP_NONFINITE_ITERATE,
    "LOOP_CURVATURE_ERROR": LOOP_CURVATURE_ERROR, "LOOP_EXHAUSTED": LOOP_EXHAUSTED,
    "LOOP_LINE_SEARCH_FAILED": LOOP_LINE_SEARCH_FAILED, "LOOP_GTOL": LOOP_GTOL,
    "LOOP_FTOL": LOOP_FTOL,
}

# The stages and variants this module's ``CompiledLoop._run`` runs (enums in _loop.pxd), checked
# here against the stage list, sqnopt.solver._stages.STAGES.
STAGE_CODES = {
    "size": (STAGE_SIZE, {"schedule": SIZE_SCHEDULE, "estimator": SIZE_ESTIMATOR}),
    "draw": (STAGE_DRAW, {"sampler": DRAW_SAMPLER, "overlapping": DRAW_OVERLAPPING}),
    "gradient": (STAGE_GRADIENT, {
        "plain": GRADIENT_PLAIN, "batch_estimate": GRADIENT_BATCH_ESTIMATE,
        "overlap_estimate": GRADIENT_OVERLAP_ESTIMATE, "estimate": GRADIENT_ESTIMATE,
        "estimate_with_plain": GRADIENT_ESTIMATE_WITH_PLAIN}),
    "full_batch_test": (STAGE_FULL_BATCH_TEST, {"none": VARIANT_NONE,
                                                "test": FULL_BATCH_TEST_TEST}),
    "curvature_batch": (STAGE_CURVATURE_BATCH, {"none": VARIANT_NONE,
                                                "observe": CURVATURE_BATCH_OBSERVE}),
    "estimator_pair": (STAGE_ESTIMATOR_PAIR, {"none": VARIANT_NONE,
                                              "take": ESTIMATOR_PAIR_TAKE}),
    "direction": (STAGE_DIRECTION, {"model": DIRECTION_MODEL, "gradient": DIRECTION_GRADIENT,
                                    "composite": DIRECTION_COMPOSITE}),
    "step": (STAGE_STEP, {"time": STEP_TIME, "point": STEP_POINT, "search": STEP_SEARCH}),
    "update": (STAGE_UPDATE, {"axpy": UPDATE_AXPY, "projected": UPDATE_PROJECTED,
                              "composite": UPDATE_COMPOSITE, "searched": UPDATE_SEARCHED}),
    "secant_pair": (STAGE_SECANT_PAIR, {"none": VARIANT_NONE, "evaluate": SECANT_PAIR_EVALUATE,
                                        "searched": SECANT_PAIR_SEARCHED}),
    "advance": (STAGE_ADVANCE, {"swap": ADVANCE_SWAP, "swap_gradient": ADVANCE_SWAP_GRADIENT,
                                "keep": ADVANCE_KEEP}),
    "average": (STAGE_AVERAGE, {"none": VARIANT_NONE, "average": AVERAGE_AVERAGE}),
}
check_compiled(STAGE_CODES)


cdef class Counters:
    """Cost accounting of one solve (shared by the compiled and Python loops; fields in
    ``_loop.pxd``)."""

    def __init__(self):
        self.t = 0
        self.n_samples = 0
        self.n_curvature_samples = 0
        self.n_secant_samples = 0
        self.n_reused_samples = 0
        self.n_search_samples = 0
        self.n_estimator_samples = 0
        self.n_grad_evals = 0
        self.n_pairs_accepted = 0
        self.n_pairs_skipped = 0
        self.n_resets = 0
        self.n_avg = 0
        self.last_step = 0.0
        self.last_loss = 0.0
        self.loss_sum = 0.0
        self.n_loss = 0
        self.last_gnorm = float("nan")
        self.prog_loss = 0.0
        self.prog_weight = 0.0

    def as_dict(self):
        return {name: getattr(self, name) for name in (
            "t", "n_samples", "n_curvature_samples", "n_secant_samples", "n_reused_samples",
            "n_search_samples", "n_estimator_samples", "n_grad_evals",
            "n_pairs_accepted", "n_pairs_skipped", "n_resets", "n_avg", "last_step", "last_loss",
            "loss_sum", "n_loss", "last_gnorm", "prog_loss", "prog_weight")}

    @property
    def progressive_loss(self) -> float:
        """``prog_loss / prog_weight``: the progressive validation loss (NaN before a step)."""
        return self.prog_loss / self.prog_weight if self.prog_weight > 0 else float("nan")

    def __reduce__(self):
        return (_rebuild_counters, (self.as_dict(),))


def _rebuild_counters(state):
    c = Counters()
    for k, v in state.items():
        setattr(c, k, v)
    return c


cdef inline bint _count_pair(int code, LoopCounts* c, bint unknown_fails) noexcept nogil:
    """Count a curvature pair's outcome (``PAIR_ACCEPTED`` / ``PAIR_SKIPPED`` / ``PAIR_RESET``);
    True when the model failed: ``CURVATURE_ERROR``, or, with ``unknown_fails``, any other code
    (``cy_update_pair`` returns one of the four; ``cy_observe_batch`` may also say "no pair")."""
    if code == PAIR_ACCEPTED:
        c.n_pairs_accepted += 1
    elif code == PAIR_SKIPPED:
        c.n_pairs_skipped += 1
    elif code == PAIR_RESET:
        c.n_resets += 1
    else:
        return code == CURVATURE_ERROR or unknown_fails
    return False


# The two compiled copies of the iteration (``_run_stages``): without and with the stage trace.
ctypedef char Untraced
ctypedef short Traced
ctypedef fused TraceMode:
    Untraced
    Traced


cdef inline double _vsum(const double* x, Py_ssize_t n) noexcept nogil:
    """The sum of ``x`` in index order (a stage trace value)."""
    cdef Py_ssize_t j
    cdef double s = 0.0
    for j in range(n):
        s += x[j]
    return s


cdef inline double _isum(const Py_ssize_t* x, Py_ssize_t n) noexcept nogil:
    """The sum of the indices ``x`` (a stage trace value)."""
    cdef Py_ssize_t j
    cdef double s = 0.0
    for j in range(n):
        s += <double> x[j]
    return s


cdef void _trace(CompiledLoop self, Py_ssize_t t, int stage, int variant, double a,
                 double b) noexcept nogil:
    """Append the record ``(t, stage, variant, a, b)`` to the stage trace (counted, not
    written, beyond its capacity: ``stop_trace`` raises)."""
    cdef Py_ssize_t k = self.trace_len
    if k < self.trace_buf.shape[0]:
        self.trace_buf[k, 0] = <double> t
        self.trace_buf[k, 1] = stage
        self.trace_buf[k, 2] = variant
        self.trace_buf[k, 3] = a
        self.trace_buf[k, 4] = b
    self.trace_len = k + 1


cdef class CompiledLoop:
    """The driver: runs iterations with compiled kernels only (see the module docstring).

    The constructor builds the driver with the dense iterate; a subclass builds it with an
    iterate representation (:class:`~sqnopt.solver._scaled_loop.ScaledLoop`), through
    ``_iterate_setup``. What the solver reads from a loop, declared rather than probed:
    ``loop_kind`` (the ``"loop"`` entry of its checkpoint state), ``tests_full_batch`` (it tests
    ``gtol`` / ``ftol`` on full-batch gradients itself, through its ``gtol`` and ``ftol``
    fields) and ``lazy_iterate`` (the dense iterate is written only by ``sync()``, and
    ``reload()`` rebuilds the representation from it)."""

    @property
    def loop_kind(self) -> str:
        """The ``"loop"`` entry of the checkpoint state: ``"generic"`` (dense iterate) or the
        representation's ``kind``."""
        return "generic" if self.iterate is None else self.iterate.kind

    @property
    def tests_full_batch(self) -> bool:
        """The dense path tests ``gtol`` / ``ftol`` on full-batch gradients; a representation
        has no dense gradient (the solver tests at report points)."""
        return self.iterate is None

    @property
    def lazy_iterate(self) -> bool:
        """With a representation, ``w`` is written only by :meth:`sync`."""
        return self.iterate is not None

    def __init__(self, ObjectiveKernel objective, CurvatureKernel curvature,
                 ScheduleKernel schedule, ScheduleKernel curvature_schedule,
                 StepKernel step, ProjectionKernel projection, Sampler sampler,
                 double[::1] w, double[::1] w_next, double[::1] grad, double[::1] grad_next,
                 double[::1] direction, double[::1] v, double[::1] r, double[::1] w_avg,
                 Py_ssize_t[::1] batch, Py_ssize_t[::1] curvature_batch, Counters counters,
                 bint average, Py_ssize_t avg_start, GradientKernel gradient=None):
        self.n = objective.n_params
        for name, buf in (("w", w), ("w_next", w_next), ("grad", grad), ("grad_next", grad_next),
                          ("direction", direction), ("v", v), ("r", r)):
            if buf.shape[0] != self.n:
                raise ValueError(f"buffer {name} has length {buf.shape[0]}, expected {self.n}")
        if average and (w_avg is None or w_avg.shape[0] != self.n):
            raise ValueError("averaging needs a w_avg buffer of length n_params")
        if curvature.dim != self.n:
            raise ValueError(f"curvature kernel has dim {curvature.dim}, expected {self.n}")
        if curvature.needs_curvature_batch and curvature_schedule is None:
            raise ValueError("the curvature model needs a curvature batch schedule")
        if curvature.composite_step and (projection is not None or step.line_search):
            raise ValueError("a curvature kernel that makes composite steps takes no projection "
                             "and no line search")
        if batch.shape[0] < sampler.n_samples or (
                curvature_schedule is not None and curvature_batch.shape[0] < sampler.n_samples):
            raise ValueError("batch buffers must hold n_samples indices")
        self.obj = objective
        if gradient is not None and gradient.dim != self.n:
            raise ValueError(f"gradient estimator has dim {gradient.dim}, expected {self.n}")
        self.est = gradient
        self.gp = np.zeros(self.n if gradient is not None and not gradient.plain else 1)
        self.curv = curvature
        self.sched = schedule
        self.csched = curvature_schedule
        self.step = step
        self.proj = projection
        self.sampler = sampler
        self.w = w
        self.w_next = w_next
        self.g = grad
        self.g_next = grad_next
        self.d = direction
        self.v = v
        self.r = r
        self.w_avg = w_avg
        self.batch = batch
        self.cbatch = curvature_batch
        self.counters = counters
        self.average = average
        self.avg_start = avg_start
        self.gtol = 0.0
        self.ftol = 0.0
        self.tracing = False
        self.trace_len = 0
        self._plan()
        self.prev_batch = np.zeros(
            batch.shape[0] if self.plan[STAGE_ADVANCE] == ADVANCE_KEEP else 1, dtype=np.intp)
        # a growing batch's reuse of the previous one (the plain gradient kept for reuse)
        reuse = (self.plan[STAGE_ADVANCE] == ADVANCE_KEEP
                 and self.plan[STAGE_GRADIENT] == GRADIENT_PLAIN)
        self.g_tail = np.zeros(self.n if reuse else 1)
        self.rest = np.zeros(sampler.n_samples if reuse else 1, dtype=np.intp)
        self.mark = np.zeros(sampler.n_samples if reuse else 1, dtype=np.int8)
        self.w_saved = np.zeros(self.n)
        self.prev_size = 0
        self.have_next = False
        self.next_plain = False
        self.loss_next = 0.0
        self.full_is_f = (sampler.whole_at_n and objective.data is not None
                          and self.plan[STAGE_GRADIENT] in (
                              GRADIENT_PLAIN, GRADIENT_BATCH_ESTIMATE, GRADIENT_OVERLAP_ESTIMATE)
                          and sampler.n_samples == objective.data.n_samples
                          and objective.data.grad_weight == objective.data.sample_weight)
        self.full_f = float("nan")
        self.full_f_t = -1
        self.prev_full_loss = float("nan")
        self.iterate = None
        self.depth = 0

    cdef int _plan(self) except -1:
        """Plan the stages (:func:`sqnopt.solver._stages.plan`) from the kernels' declarations
        and whether a tolerance is set (``gtol`` and ``ftol`` are set after construction: ``run``
        plans again when that changed)."""
        cdef Py_ssize_t k
        self.planned_tolerances = self.gtol > 0.0 or self.ftol > 0.0
        codes = stage_plan(curvature=self.curv, step=self.step, projection=self.proj,
                           sampler=self.sampler, gradient=self.est,
                           tolerances=self.planned_tolerances, average=self.average).codes
        for k in range(N_STAGES):
            self.plan[k] = codes[k]
        return 0

    @property
    def stage_plan(self):
        """The stage variants this loop runs (:class:`sqnopt.solver._stages.Plan`)."""
        return stage_plan(curvature=self.curv, step=self.step, projection=self.proj,
                          sampler=self.sampler, gradient=self.est,
                          tolerances=self.gtol > 0.0 or self.ftol > 0.0, average=self.average)

    def start_trace(self, Py_ssize_t capacity):
        """Record a stage trace from the next ``run`` on: up to ``capacity`` records ``(t,
        stage, variant, a, b)``, one per stage run (values: ``_stages.TRACE_VALUES``)."""
        if self.iterate is not None:
            raise ValueError("the stage trace is of the dense iterate's stages")
        self.trace_buf = np.full((max(capacity, 1), TRACE_WIDTH), np.nan)
        self.trace_len = 0
        self.tracing = True

    def stop_trace(self):
        """End the trace; the records (an array of shape ``(records, 5)``). Raises when the
        capacity was too small."""
        if not self.tracing:
            raise ValueError("no trace was started")
        self.tracing = False
        if self.trace_len > self.trace_buf.shape[0]:
            raise ValueError(f"the trace overflowed its capacity {self.trace_buf.shape[0]} "
                             f"({self.trace_len} records)")
        return np.array(self.trace_buf[:self.trace_len])

    cdef int _iterate_setup(self, ObjectiveKernel objective, IterateKernel iterate,
                            ProjectionKernel projection) except -1:
        """Make this loop run its iterations on ``iterate`` (see the module docstring); the
        schedule, step, sampler, ``w``, ``w_avg``, counters and averaging settings are set by
        the caller. The dense-path kernels, buffers and flags stay unset: that path is not run."""
        cdef Py_ssize_t k, n_samples = self.sampler.n_samples
        if iterate.dense_iterate and iterate.n_params != objective.n_params:
            raise ValueError(f"iterate representation has {iterate.n_params} parameters, "
                             f"expected {objective.n_params}")
        if self.step.line_search:
            raise ValueError("a line search needs the dense iterate (it evaluates gradients at "
                             "trial points)")
        if self.step.uses_point:
            raise ValueError("a step rule that uses the point needs the dense iterate (it reads "
                             "the gradient and the direction)")
        if projection is not None and not projection.ball_radius > 0:
            raise ValueError("an iterate representation applies no projection or a Euclidean "
                             "ball (a projection that declares ball_radius) only")
        self.obj = objective
        self.n = objective.n_params
        self.iterate = iterate
        self.proj = projection
        self.radius = projection.ball_radius if projection is not None else 0.0
        self.depth = iterate.lookahead + 1
        self.ring = np.zeros((self.depth, n_samples), dtype=np.intp)
        for k in range(2 * self.depth):
            self.ring_rows[k] = &self.ring[k % self.depth, 0]
            self.ring_size[k] = 0
        self.gtol = 0.0
        self.ftol = 0.0
        self._at_counters()
        return 0

    cdef void _at_counters(self):
        """No batch drawn ahead; the loop stands where the counters say."""
        cdef Counters pc = self.counters
        self.drawn_upto = pc.t
        self.exhausted_at = -1
        self.ahead_samples = 0
        self.last_t = pc.t
        self.last_samples = pc.n_samples
        self.last_n_avg = pc.n_avg

    def run(self, Py_ssize_t n_iter, Py_ssize_t max_samples):
        """Run up to ``n_iter`` iterations; stop before an iteration once ``max_samples``
        (if > 0) samples were processed. Returns an exit code (``LOOP_*``). With an iterate
        representation, ``w`` is written by :meth:`sync`."""
        cdef int status
        cdef LoopCounts c
        cdef Counters pc = self.counters
        if self.iterate is not None:
            if (pc.t != self.last_t or pc.n_samples != self.last_samples
                    or pc.n_avg != self.last_n_avg):
                self.reload()   # the state was restored or edited from outside
            self.t_limit = pc.t + n_iter
            self.call_max_samples = max_samples
            counts_load(pc, &c)
            with nogil:
                status = self._run_iterate(n_iter, max_samples, &c)
            self.last_t = c.t
            self.last_samples = c.n_samples
            self.last_n_avg = c.n_avg
            counts_store(&c, pc)
            return status
        if self.planned_tolerances != (self.gtol > 0.0 or self.ftol > 0.0):
            self._plan()        # the full-batch test is on or off now
        counts_load(pc, &c)
        if memcmp(&self.w[0], &self.w_saved[0], self.n * sizeof(double)) != 0:
            self.have_next = False      # w was changed between runs
            self.prev_full_loss = float("nan")
            self.full_f_t = -1
        with nogil:
            status = self._run(n_iter, max_samples, &c)
        memcpy(&self.w_saved[0], &self.w[0], self.n * sizeof(double))
        counts_store(&c, pc)
        return status

    def known_objective(self, objective) -> float:
        """``F(w)`` of ``objective`` at the current iterate when the last run evaluated it on
        the whole data set (the full-batch gradient at ``w``, or the line search or secant pair
        that produced ``w``), else NaN; NaN too when ``objective`` is not the loop's own. The
        solver's history and result take it instead of another pass over the data. The value is
        the batch objective the iteration used (the same sum as ``value(w)``, possibly in
        another order or, from a search in score space, from the scores updated along the step:
        equal to rounding)."""
        if (objective is not self.obj or self.iterate is not None or self.full_f_t < 0
                or self.full_f_t != self.counters.t
                or memcmp(&self.w[0], &self.w_saved[0], self.n * sizeof(double)) != 0):
            return float("nan")
        return self.full_f

    def sync(self) -> None:
        """Write the current iterate into ``w`` and the average into ``w_avg`` (O(n)) when an
        iterate representation holds them; the dense path keeps them current (nothing to do)."""
        if self.iterate is not None:
            self.iterate.sync(self.counters.n_avg)

    def reload(self) -> None:
        """Rebuild the iterate representation from ``w``, ``w_avg`` and the counters and drop
        the batches drawn ahead (after ``w`` was written from outside); the dense path reads
        ``w`` itself (nothing to do)."""
        if self.iterate is not None:
            self.iterate.reload(self.counters.n_avg)
            self._at_counters()

    def get_state(self, *, bint data_state=True) -> dict:
        """What the loop carries from one ``run`` to the next (copies). Dense path: see
        :func:`generic_loop_state`; ``data_state=False``: nothing (a loop on new data starts
        afresh, as after ``Solver.rebind``). With an iterate representation: the
        representation's state, the counters as the loop left them and, with ``data_state``,
        the batches drawn ahead and not run yet (none when ``run`` returned normally: only
        iterations of the current call are drawn ahead)."""
        cdef Py_ssize_t u, slot
        if self.iterate is None:
            if not data_state:
                return {"loop": "generic"}
            return generic_loop_state(self.have_next, self.prev_size, self.prev_batch,
                                      self.loss_next, self.g_next, self.w_saved,
                                      self.prev_full_loss, self.w, self.next_plain)
        state = self.iterate.get_state()
        state.update(last_t=int(self.last_t), last_samples=int(self.last_samples),
                     last_n_avg=int(self.last_n_avg))
        if data_state:
            sizes = []
            rows = []
            for u in range(self.last_t, self.drawn_upto):
                slot = u % self.depth
                sizes.append(int(self.ring_size[slot]))
                rows.append(np.array(self.ring[slot, :self.ring_size[slot]]))
            state.update(drawn_upto=int(self.drawn_upto), exhausted_at=int(self.exhausted_at),
                         ahead_samples=int(self.ahead_samples),
                         pending_sizes=np.array(sizes, dtype=np.intp),
                         pending=np.concatenate(rows) if rows else np.zeros(0, dtype=np.intp))
        return state

    def set_state(self, state, *, bint new_data=False) -> None:
        """Restore what :meth:`get_state` returned; the solve's counters must be restored
        first. On new data (``new_data``) the dense path restores nothing; an iterate
        representation is kept when the counters are where the loop left them (as
        ``Solver.rebind`` keeps it), else the loop reloads from ``w``."""
        cdef Py_ssize_t k, u, off, size, drawn_upto, last_t, last_n_avg
        if self.iterate is None:
            obj = self.obj
            w = np.asarray(self.w)
            got = restore_generic_loop_state(state, new_data, np.asarray(self.prev_batch),
                                             np.asarray(self.g_next), np.asarray(self.w_saved),
                                             w, lambda b, out: obj.gradient(w, b, out),
                                             self, "the generic compiled loop")
            if got is not None:
                (self.prev_size, self.have_next, self.loss_next, self.prev_full_loss,
                 self.next_plain) = got
            return
        name = type(self).__name__
        self.iterate.check_state(state)
        last_t = state_value(state, "last_t", int, self, lo=0)
        last_n_avg = state_value(state, "last_n_avg", int, self, lo=0)
        if new_data and (last_t != self.counters.t or last_n_avg != self.counters.n_avg):
            self.reload()
            return
        self.iterate.set_state(state)
        if new_data:
            self._at_counters()
            return
        drawn_upto = state_value(state, "drawn_upto", int, self, lo=last_t)
        sizes = state_array(state, "pending_sizes", self, np.intp, lo=1,
                            hi=self.ring.shape[1])
        pending = state_array(state, "pending", self, np.intp, rows=True)
        exhausted_at = state_value(state, "exhausted_at", int, self, lo=-1, hi=drawn_upto)
        ahead_samples = state_value(state, "ahead_samples", int, self, lo=0)
        last_samples = state_value(state, "last_samples", int, self, lo=0)
        if (sizes.shape[0] != drawn_upto - last_t or sizes.shape[0] > self.depth
                or int(sizes.sum()) != pending.shape[0]
                or ahead_samples != pending.shape[0]
                or (exhausted_at >= 0 and exhausted_at < last_t)):
            raise CheckpointError(f"{name}: the checkpointed batches drawn ahead ('pending', "
                                  "'pending_sizes', 'drawn_upto', 'ahead_samples', "
                                  "'exhausted_at') do not agree or do not fit this data")
        off = 0
        for k in range(sizes.shape[0]):
            size = sizes[k]
            u = (last_t + k) % self.depth
            np.asarray(self.ring)[u, :size] = pending[off:off + size]
            self.ring_size[u] = size
            self.ring_size[u + self.depth] = size
            off += size
        self.drawn_upto = drawn_upto
        self.exhausted_at = exhausted_at
        self.ahead_samples = ahead_samples
        self.last_t = last_t
        self.last_samples = last_samples
        self.last_n_avg = last_n_avg

    cdef int _run(self, Py_ssize_t n_iter, Py_ssize_t max_samples, LoopCounts* c) noexcept nogil:
        """The stages of :data:`sqnopt.solver._stages.STAGES`, in order (:func:`_run_stages`),
        with or without the stage trace (two compiled copies: the untraced one has no trace
        code at all)."""
        if self.tracing:
            return _run_stages(self, n_iter, max_samples, c, <Traced> 0)
        return _run_stages(self, n_iter, max_samples, c, <Untraced> 0)

    cdef Py_ssize_t _reused_rest(self, const Py_ssize_t* batch, Py_ssize_t size) noexcept nogil:
        """When the plain gradient kept from the last iteration, ``s(w, B_{t-1})``, covers part
        of ``batch``: point ``rest_rows`` at the other rows -- the new rows of a batch that
        extends ``B_{t-1}``, or the rows outside a ``B_{t-1}`` of distinct rows when ``batch``
        is the whole set in order -- and return their count ``n_rest``; else 0."""
        cdef Py_ssize_t t, i, m = 0, p = self.prev_size, n = self.sampler.n_samples
        cdef bint distinct = True
        self.n_rest = 0
        if not (self.have_next and self.next_plain and 0 < p < size):
            return 0
        if memcmp(batch, &self.prev_batch[0], p * sizeof(Py_ssize_t)) == 0:
            self.rest_rows = batch + p
            self.n_rest = size - p
            return self.n_rest
        if not (self.sampler.whole_at_n and size >= n):
            return 0
        for t in range(p):
            i = self.prev_batch[t]
            if self.mark[i]:
                distinct = False
            self.mark[i] = 1
        if distinct:
            for i in range(n):
                if not self.mark[i]:
                    self.rest[m] = i
                    m += 1
        for t in range(p):
            self.mark[self.prev_batch[t]] = 0
        if distinct:
            self.rest_rows = &self.rest[0]
            self.n_rest = m
        return self.n_rest

    cdef double _batch_weight(self, const Py_ssize_t* batch, Py_ssize_t size) noexcept nogil:
        """``sum_s g_i`` over the batch (the data's gradient weights; ``size`` without data)."""
        cdef Py_ssize_t t
        cdef double total = 0.0
        cdef const double* gw
        if self.obj.data is None:
            return <double> size
        gw = self.obj.data.grad_weight
        for t in range(size):
            total += gw[batch[t]]
        return total

    cdef int _run_iterate(self, Py_ssize_t n_iter, Py_ssize_t max_samples,
                          LoopCounts* c) noexcept nogil:
        """The iteration on an iterate representation (see the module docstring): the same
        stages and record as ``_run``; the gradient, direction and update stages are the
        representation's ``cy_first_order``."""
        cdef Py_ssize_t it, size, depth = self.depth, n_avg
        cdef Py_ssize_t t_slot = c.t % depth       # the ring slot of iteration c.t
        cdef Py_ssize_t avg_after = self.avg_start if self.average else PY_SSIZE_T_MAX
        cdef double eps, loss, radius = self.radius
        cdef int code, status = LOOP_DONE
        for it in range(n_iter):
            if max_samples > 0 and c.n_samples >= max_samples:
                status = LOOP_MAX_SAMPLES
                break
            # 1. the batch, from the batches drawn ahead
            if _fill(self, c.t, t_slot, c.n_samples) != 0:
                status = LOOP_EXHAUSTED
                break
            size = self.ring_size[t_slot]
            self.ahead_samples -= size
            # 4. the step: eps_t, a function of t (so taken before the gradient here)
            eps = self.step.cy_step_size(c.t)
            # 2.-5. the gradient in coefficient form, d = g, the update with the ball
            # projection and step 7's average
            n_avg = c.n_avg + 1 if c.t >= avg_after else 0
            code = self.iterate.cy_first_order(
                self.ring_rows[t_slot], size, &self.ring_rows[t_slot + 1],
                &self.ring_size[t_slot + 1], self.drawn_upto - c.t - 1, eps, radius, n_avg, &loss)
            c.n_grad_evals += 1
            if code == ITERATE_NONFINITE_LOSS:
                status = LOOP_NONFINITE_LOSS
                break
            c.loss_sum += loss
            c.n_loss += 1
            if code != ITERATE_STEPPED:
                status = LOOP_NONFINITE_ITERATE
                break
            # 7. record
            c.t += 1
            c.n_samples += size
            c.last_step = eps
            c.last_loss = loss
            c.prog_loss += self.iterate.batch_loss
            c.prog_weight += self.iterate.batch_weight
            if n_avg:
                c.n_avg = n_avg
            t_slot += 1
            if t_slot == depth:
                t_slot = 0
        # samples the representation touched beyond the batches (a table's fill), once per call:
        # nothing in the loop reads them (the sample budget counts batch samples)
        c.n_estimator_samples += self.iterate.extra_samples
        self.iterate.extra_samples = 0
        return status


cdef inline int _fill(CompiledLoop self, Py_ssize_t t, Py_ssize_t t_slot,
                      Py_ssize_t n_samples) noexcept nogil:
    """Draw the batches of iterations ``t .. t + depth - 1`` that are not drawn yet and will
    run in this call (iteration and sample budgets). ``t_slot = t % depth`` (the ring slot of
    ``t``; slots advance by wrapping, not by a division per use); ``n_samples``: samples
    processed before iteration ``t``. Returns -1 if the batch of ``t`` could not be drawn (the
    sampler is exhausted). (A module-level inline function: a direct call, not a virtual one.)"""
    cdef Py_ssize_t slot, size, depth = self.depth, stop = t + depth
    if stop > self.t_limit:
        stop = self.t_limit
    while self.drawn_upto < stop and self.exhausted_at < 0:
        if (self.drawn_upto > t and self.call_max_samples > 0
                and n_samples + self.ahead_samples >= self.call_max_samples):
            break   # that iteration will not run in this call: do not draw its batch
        slot = t_slot + (self.drawn_upto - t)     # t <= drawn_upto < t + depth
        if slot >= depth:
            slot -= depth
        size = self.sched.cy_batch_size(self.drawn_upto + 1)
        if self.sampler.cy_draw(size, &self.ring[slot, 0]) != 0:
            self.exhausted_at = self.drawn_upto
            break
        self.ring_size[slot] = size
        self.ring_size[slot + depth] = size
        self.ahead_samples += size
        self.drawn_upto += 1
    if self.exhausted_at == t:
        return -1
    return 0


cdef int _run_stages(CompiledLoop self, Py_ssize_t n_iter, Py_ssize_t max_samples, LoopCounts* c,
                     TraceMode mode) noexcept nogil:
    """The stages of :data:`sqnopt.solver._stages.STAGES`, in order, each running the variant of
    ``self.plan`` (see that module; the Python twin is ``PythonLoop._run``). ``TraceMode`` picks
    the compiled copy: ``Traced`` records the stage trace, ``Untraced`` has no trace code."""
    cdef Py_ssize_t it, j, t, size, csize, evals, extra, n = self.n
    cdef double eps, loss, f_next, gnorm, reg, lam = self.obj.lam
    cdef int code, status = LOOP_DONE
    cdef bint whole, got_pair
    # The iterate lives in one of two buffers; they swap roles every iteration and the
    # state's ``w`` buffer is made current again before returning. With direction
    # ``gradient`` the direction is the gradient buffer itself, and the gradient alternates
    # between the grad and grad_next buffers (grad_next is free: no secant pair or search
    # writes it), so the direction of the last step survives a stop on a non-finite
    # minibatch objective; on return it is copied to the direction buffer, which the
    # divergence diagnostic reads.
    cdef double* w_home = &self.w[0]
    cdef double* w = w_home
    cdef double* w_next = &self.w_next[0]
    cdef double* tmp
    cdef double* g = &self.g[0]
    cdef double* g_next = &self.g_next[0]
    cdef Py_ssize_t p_, q_
    cdef double* d_home = &self.d[0]
    cdef double* d = d_home
    cdef double* v = &self.v[0]
    cdef double* r = &self.r[0]
    cdef double* w_avg = NULL
    cdef Py_ssize_t* batch = &self.batch[0]
    cdef Py_ssize_t* cbatch = NULL
    # the plain minibatch gradient s(w_t, B_t): the estimate itself, or a buffer the
    # estimator fills (variant estimate_with_plain)
    cdef double* gp_buf = &self.gp[0]
    cdef double* gp
    # the plan (sqnopt.solver._stages.plan): one variant per stage
    cdef int v_size = self.plan[STAGE_SIZE], v_draw = self.plan[STAGE_DRAW]
    cdef int v_grad = self.plan[STAGE_GRADIENT], v_test = self.plan[STAGE_FULL_BATCH_TEST]
    cdef int v_cbatch = self.plan[STAGE_CURVATURE_BATCH]
    cdef int v_epair = self.plan[STAGE_ESTIMATOR_PAIR], v_dir = self.plan[STAGE_DIRECTION]
    cdef int v_step = self.plan[STAGE_STEP], v_update = self.plan[STAGE_UPDATE]
    cdef int v_secant = self.plan[STAGE_SECANT_PAIR], v_adv = self.plan[STAGE_ADVANCE]
    cdef int v_avg = self.plan[STAGE_AVERAGE]
    cdef bint gp_is_g = v_grad <= GRADIENT_OVERLAP_ESTIMATE     # the estimate is s(w_t, B_t)
    if v_avg == AVERAGE_AVERAGE:
        w_avg = &self.w_avg[0]
    if v_cbatch == CURVATURE_BATCH_OBSERVE:
        cbatch = &self.cbatch[0]

    for it in range(n_iter):
        if max_samples > 0 and c.n_samples >= max_samples:
            status = LOOP_MAX_SAMPLES
            break
        t = c.t
        # size: |B_t|
        size = self.sched.cy_batch_size(t + 1)
        if v_size == SIZE_ESTIMATOR:
            size = self.est.cy_batch_size(size)
            if size > self.sampler.n_samples:
                size = self.sampler.n_samples
            elif size < 1:
                size = 1
        if TraceMode is Traced:
            _trace(self, t, STAGE_SIZE, v_size, <double> size, 0.0)
        # draw: B_t
        if self.sampler.cy_draw(size, batch) != 0:
            status = LOOP_EXHAUSTED
            break
        if v_draw == DRAW_OVERLAPPING:
            self.est.cy_arrange(batch, size)
        if TraceMode is Traced:
            _trace(self, t, STAGE_DRAW, v_draw, _isum(batch, size), 0.0)
        # gradient: g, and the plain s(w_t, B_t) in gp
        if (self.have_next and size == self.prev_size
                and memcmp(batch, &self.prev_batch[0], size * sizeof(Py_ssize_t)) == 0):
            memcpy(g, g_next, n * sizeof(double))      # s(w_t, B_t), evaluated last iteration
            loss = self.loss_next
            c.n_reused_samples += size
            if v_grad == GRADIENT_OVERLAP_ESTIMATE:
                self.est.cy_reused(w, g, size)
        elif v_grad == GRADIENT_PLAIN and self._reused_rest(batch, size) > 0:
            # B_t extends B_{t-1}, or is the whole set after it: s(w_t, B_{t-1}) was evaluated
            # last iteration, only the rest of the rows is (module docstring)
            p_ = self.prev_size
            q_ = self.n_rest
            loss = self.obj.cy_gradient(w, self.rest_rows, q_, &self.g_tail[0])
            for j in range(n):
                g[j] = (p_ * g_next[j] + q_ * self.g_tail[j]) / (p_ + q_)
            loss = (p_ * self.loss_next + q_ * loss) / (p_ + q_)
            c.n_reused_samples += p_
            c.n_grad_evals += 1
        elif v_grad == GRADIENT_PLAIN:
            loss = self.obj.cy_gradient(w, batch, size, g)
            c.n_grad_evals += 1
        else:
            extra = 0
            loss = self.est.cy_estimate(self.obj, w, batch, size, g,
                                        gp_buf if v_grad == GRADIENT_ESTIMATE_WITH_PLAIN
                                        else NULL, &extra)
            c.n_estimator_samples += extra
            c.n_grad_evals += 1
        self.have_next = False
        gp = g if gp_is_g else gp_buf
        if not isfinite(loss):
            status = LOOP_NONFINITE_LOSS
            break
        whole = self.full_is_f and size >= self.sampler.n_samples
        if whole:
            self.full_f = loss
            self.full_f_t = t
        c.loss_sum += loss
        c.n_loss += 1
        # the loss part of f_B(w_t), for the progressive validation loss
        reg = self.obj.cy_reg_value(w) if lam != 0.0 else 0.0
        if TraceMode is Traced:
            _trace(self, t, STAGE_GRADIENT, v_grad, loss, _vsum(g, n))
        # full_batch_test: gtol / ftol on a whole-data batch
        if v_test == FULL_BATCH_TEST_TEST:
            gnorm = NAN
            if size >= self.sampler.n_samples:
                gnorm = 0.0
                for j in range(n):
                    gnorm = fmax(gnorm, fabs(gp[j]))
                c.last_gnorm = gnorm
                if gnorm <= self.gtol or (
                        self.ftol > 0.0 and 0.0 <= self.prev_full_loss - loss
                        <= self.ftol * fmax(fmax(fabs(self.prev_full_loss), fabs(loss)), 1.0)):
                    c.n_samples += size         # evaluated at w_t; no step taken
                    c.last_loss = loss
                    status = LOOP_GTOL if gnorm <= self.gtol else LOOP_FTOL
                    break
                self.prev_full_loss = loss
            if TraceMode is Traced:
                _trace(self, t, STAGE_FULL_BATCH_TEST, v_test, gnorm, 0.0)
        # curvature_batch: S_t observed at w_t
        if v_cbatch == CURVATURE_BATCH_OBSERVE:
            csize = self.csched.cy_batch_size(t + 1)
            if self.sampler.cy_draw(csize, cbatch) != 0:
                status = LOOP_EXHAUSTED
                break
            c.n_curvature_samples += csize
            code = self.curv.cy_observe_batch(self.obj, w, cbatch, csize)
            # a model forming pairs from its batches returns the pair's code (any other
            # value: no pair this time)
            if _count_pair(code, c, False):
                status = LOOP_CURVATURE_ERROR
                break
            if TraceMode is Traced:
                _trace(self, t, STAGE_CURVATURE_BATCH, v_cbatch, <double> csize, code)
        # estimator_pair: the estimator's pair of the previous step
        if v_epair == ESTIMATOR_PAIR_TAKE:
            got_pair = self.est.cy_pair(w, v, r)
            code = 0
            if got_pair:
                code = self.curv.cy_update_pair(v, r)
                if _count_pair(code, c, True):
                    status = LOOP_CURVATURE_ERROR
                    break
            if TraceMode is Traced:
                _trace(self, t, STAGE_ESTIMATOR_PAIR, v_epair, <double> got_pair, code)
        # direction: d = H g, or d is g
        if v_dir == DIRECTION_MODEL:
            self.curv.cy_direction(g, d)
            if self.curv.extra_samples:
                c.n_curvature_samples += self.curv.extra_samples
                self.curv.extra_samples = 0
        else:
            d = g
        if TraceMode is Traced:
            _trace(self, t, STAGE_DIRECTION, v_dir, _vsum(d, n), 0.0)
        # step: eps (a search also moves to w_next and leaves s(w_next, B_t) in g_next)
        evals = 0
        if v_step == STEP_SEARCH:       # the Solver rules out a projection with a search
            eps = self.step.cy_search(self.obj, w, batch, size, loss, gp, d, w_next, g_next,
                                      &f_next, n, &evals)
            c.n_grad_evals += evals
            c.n_search_samples += evals * size
            if not isfinite(eps):
                c.last_loss = loss          # f_B(w_t): the monitor's precision test reads it
                status = LOOP_LINE_SEARCH_FAILED
                break
            self.loss_next = f_next
        elif v_step == STEP_POINT:
            # the plain minibatch gradient (filled by a non-batch estimator only for a stage
            # that reads it: a secant pair, a search, the full-batch test)
            eps = self.step.cy_step_at(t, loss, w, gp, d, n)
        else:
            eps = self.step.cy_step_size(t)
        if TraceMode is Traced:
            _trace(self, t, STAGE_STEP, v_step, eps, <double> evals)
        # update: w_next = P(w - eps d), or the model's composite step
        if v_update != UPDATE_SEARCHED:
            if v_update == UPDATE_AXPY:
                if not sq_step_allfinite(w, eps, d, w_next, n):
                    status = LOOP_NONFINITE_ITERATE
                    break
            elif v_update == UPDATE_PROJECTED:
                for j in range(n):
                    w_next[j] = w[j] - eps * d[j]
                self.proj.cy_project(w_next)
                if not vallfinite(w_next, n):
                    status = LOOP_NONFINITE_ITERATE
                    break
            elif self.curv.cy_composite_step(w, g, eps, w_next) != 0:
                status = LOOP_NONFINITE_ITERATE
                break
            if TraceMode is Traced:
                _trace(self, t, STAGE_UPDATE, v_update, _vsum(w_next, n), 0.0)
        # secant_pair: (w_next - w, s(w_next, B_t) - s(w, B_t)) on the same batch
        if v_secant != VARIANT_NONE:
            if v_secant == SECANT_PAIR_EVALUATE:
                self.loss_next = self.obj.cy_gradient(w_next, batch, size, g_next)
                c.n_grad_evals += 1
                c.n_secant_samples += size
            for j in range(n):
                v[j] = w_next[j] - w[j]
                r[j] = g_next[j] - gp[j]
            code = self.curv.cy_update_pair(v, r)
            if _count_pair(code, c, True):
                status = LOOP_CURVATURE_ERROR
                break
            if TraceMode is Traced:
                _trace(self, t, STAGE_SECANT_PAIR, v_secant, self.loss_next, code)
        # advance: w_next becomes the iterate; the record
        tmp = w
        w = w_next
        w_next = tmp
        if v_adv == ADVANCE_KEEP:
            memcpy(&self.prev_batch[0], batch, size * sizeof(Py_ssize_t))
            self.prev_size = size
            self.have_next = True
            self.next_plain = v_step != STEP_SEARCH or self.step.plain_gradient
            if whole:                   # f_B(w_next), evaluated by the step or the pair
                self.full_f = self.loss_next
                self.full_f_t = t + 1
        elif v_adv == ADVANCE_SWAP_GRADIENT:
            tmp = g
            g = g_next
            g_next = tmp
        c.t += 1
        c.n_samples += size
        c.last_step = eps
        c.last_loss = loss
        c.prog_loss += (loss - reg) * size
        c.prog_weight += self._batch_weight(batch, size)
        if TraceMode is Traced:
            _trace(self, t, STAGE_ADVANCE, v_adv, c.prog_loss, c.prog_weight)
        # average: wbar += (w - wbar) / n
        if v_avg == AVERAGE_AVERAGE:
            if c.t > self.avg_start:
                c.n_avg += 1
                for j in range(n):
                    w_avg[j] += (w[j] - w_avg[j]) / c.n_avg
            if TraceMode is Traced:
                _trace(self, t, STAGE_AVERAGE, v_avg, <double> c.n_avg, _vsum(w_avg, n))
    if w != w_home:
        memcpy(w_home, w, n * sizeof(double))
    if d != d_home:
        memcpy(d_home, d, n * sizeof(double))
    return status


def restore_generic_loop_state(state, new_data, prev_batch, g_next, w_saved, w, gradient,
                               owner, path):
    """The inverse of :func:`generic_loop_state` for either generic loop (``path`` names it in
    the error): checks the format and every field, writes the batch, ``g_next`` and ``w_saved``
    into the given arrays and returns ``(prev_size, have_next, loss_next, prev_full_loss,
    next_plain)``; None on new data (nothing to restore). ``w`` is the restored iterate;
    ``gradient(batch, out)`` evaluates the loop's plain batch gradient at ``w`` into ``out``
    and returns the batch objective: a ``g_next`` left out of the checkpoint is recomputed with
    it, and must give the checkpointed ``loss_next`` to the bit (else the checkpoint is not of
    this data and solver)."""
    if state.get("loop") != "generic":
        raise CheckpointError(f"the checkpoint is of the {state.get('loop')!r} loop, this "
                              f"solve runs {path}: the solver's path or components differ")
    if new_data:
        return None
    size = state_value(state, "prev_size", int, owner, lo=0)
    if size > prev_batch.shape[0]:
        raise CheckpointError(f"{type(owner).__name__}: checkpoint field 'prev_size' = {size} "
                              f"exceeds the batches of this data (at most "
                              f"{prev_batch.shape[0]})")
    if state.get("prev_batch") is None:         # the first rows in order (the whole data set)
        batch = np.arange(size, dtype=np.intp)
    else:
        batch = state_array(state, "prev_batch", owner, np.intp, rows=True)
        if batch.shape[0] != size:
            raise CheckpointError(f"{type(owner).__name__}: checkpoint field 'prev_batch' holds "
                                  f"{batch.shape[0]} indices for 'prev_size' = {size}")
    have_next = state_value(state, "have_next", bool, owner)
    loss_next = state_value(state, "loss_next", float, owner)
    # the previous full-batch objective: NaN until the first full batch
    prev_full_loss = state_value(state, "prev_full_loss", float, owner, finite=False)
    if state.get("w_saved") is None:            # the iterate itself
        np.asarray(w_saved)[...] = np.asarray(w)
    else:
        restore_array(w_saved, state, "w_saved", owner, iterate=True)
    next_plain = False
    if state.get("g_next") is not None:
        restore_array(g_next, state, "g_next", owner)
    elif have_next:                             # a plain gradient at w: evaluate it again
        if not np.array_equal(np.asarray(w_saved), np.asarray(w)):
            raise CheckpointError(f"{type(owner).__name__}: the checkpoint has no 'g_next' for "
                                  "an iterate changed since ('w_saved')")
        next_plain = True
        if size:
            loss = gradient(batch, np.asarray(g_next))
            if not (loss == loss_next or (loss != loss and loss_next != loss_next)):
                raise CheckpointError(
                    f"{type(owner).__name__}: the batch objective at the checkpointed iterate "
                    f"is {loss!r}, the checkpoint's 'loss_next' {loss_next!r}: the checkpoint "
                    "is of other data or another solver, or damaged")
    prev_batch[:size] = batch
    return size, have_next, loss_next, prev_full_loss, next_plain


def generic_loop_state(have_next, prev_size, prev_batch, loss_next, g_next, w_saved,
                       prev_full_loss, w, next_plain):
    """The carry-over of the generic loops (compiled and Python: one format): the secant
    gradient ``s(w, prev_batch)`` kept in ``g_next`` for reuse when the next batch repeats, the
    iterate it was taken at (``w_saved``: reuse only if ``w`` was not changed between runs) and
    the previous full-batch objective of the ``ftol`` test.

    What a restore can rebuild exactly is left out: ``w_saved`` when it is the iterate ``w``
    (``None``), the batch when it is the whole data set in order (``None``), and ``g_next``
    when there is nothing to reuse or it is the plain batch gradient at ``w`` (``next_plain``:
    recomputed on restore, the same bits, at the cost of one evaluation on that batch)."""
    size = int(prev_size)
    batch = np.array(np.asarray(prev_batch)[:size], dtype=np.intp)
    same_w = bool(np.array_equal(np.asarray(w_saved), np.asarray(w)))
    whole = bool(np.array_equal(batch, np.arange(size, dtype=np.intp)))
    keep_g = bool(have_next) and not (bool(next_plain) and same_w)
    return {"loop": "generic", "have_next": bool(have_next), "prev_size": size,
            "prev_batch": None if whole else batch,
            "loss_next": float(loss_next),
            "g_next": np.array(g_next, dtype=np.float64) if keep_g else None,
            "w_saved": None if same_w else np.array(w_saved, dtype=np.float64),
            "prev_full_loss": float(prev_full_loss)}
