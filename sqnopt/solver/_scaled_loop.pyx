# cython: language_level=3
"""The sparse O(nnz) iteration loop: first-order steps on margin objectives in scaled form.

For a margin objective (:class:`~sqnopt.objectives._base.MarginObjectiveKernel`) the minibatch
gradient is ``s(w, B) = lam * w_reg + sum_{i in B} c_i x_i`` with scalars
``c_i = g_i y_i loss'(m_i) / |B|``. With the identity curvature and no projection or an L2 ball,
one driver iteration

    w_{t+1} = P( (1 - eps_t lam) w_t - eps_t sum_i c_i x_i )

only rescales ``w`` and adds a few sparse rows. Storing ``w_reg = a * v`` (Shalev-Shwartz, Singer &
Srebro, *Pegasos*, 2007, Sec. 2: the triplet ``(v, a, nu)`` with ``nu = ||w||^2``) makes the
shrinkage an O(1) update of ``a``, the additions O(nnz) updates of ``v`` and, with ``nu``
tracked incrementally, the projection onto ``{||w_reg|| <= r}`` an O(1) rescaling of ``a``:

    nu <- (1 - eps lam)^2 nu;  then per added row  nu <- nu + 2 delta (w . x) + delta^2 ||x||^2.

An iteration therefore costs O(nnz of the batch), independent of the number of features.

Polyak-Ruppert averaging is kept lazily as well: the *sum* of the averaged iterates is
``S = alpha * v + u`` (``u`` dense, updated only where ``v`` changes). Adding the iterate
``a v`` to ``S`` is ``alpha += a``; changing ``v`` by ``Delta`` is ``u -= alpha * Delta``. The
average is ``S / n_avg``.

The scale is folded back into ``v`` (O(n)) when it leaves ``[1e-9, 1e9]`` or becomes exactly
zero (the first Pegasos step has ``1 - eps lam = 0``); at a fold ``u += alpha v; alpha = 0`` and
``nu`` is recomputed exactly. With averaging the range is ``[1e-3, 1e3]``: ``alpha v`` and ``u``
grow like ``1/a`` and cancel in ``S``, so a small ``a`` costs digits of the average (a fold every
factor 1e3 keeps the cancellation to about one digit). Folds happen about every factor 1e9 (1e3)
in ``t`` under the Pegasos step (``a_t ~ 1/t``), every ``log(1e9) / log(1 / (1 - eps lam))``
iterations under a constant step.

The iteration is the generic driver's (:mod:`sqnopt.solver._loop`) with the identity direction:
same sampler draws, same schedule and step calls, same counters; iterates agree up to rounding.
Differences, by design:

* Divergence is reported (``LOOP_NONFINITE_ITERATE``, nothing of the step applied) as soon as an
  upper bound on ``||w_reg||`` after the step reaches 1e150 (beyond that ``nu`` could overflow),
  rather than when an entry of ``w`` becomes infinite.
* The dense iterate ``w`` (and ``w_avg``) is written on request, by :meth:`ScaledLoop.sync`
  (O(n)), which ``SolverState.output_iterate`` calls: the solver syncs before every evaluation,
  callback and result, so plain report points cost O(1), and ``state.w`` is current whenever
  ``Solver.run`` has returned. The representation persists across calls (iterates do not
  depend on report points or on splitting a solve into several ``run`` calls), and
  ``Solver.rebind`` hands it to the new loop (bit-for-bit continuation on new data). When the
  counters differ at the start of ``run`` from what the loop left (a state restored or edited
  from outside, e.g. a resumed ``partial_fit``), the loop reloads its representation from
  ``w``, ``w_avg`` and the counters (``v = w``, ``a = 1``; O(n)): such a continuation agrees
  with an uninterrupted one up to rounding. Writing into ``state.w`` without touching the
  counters is not detected: call ``state.loop.reload()`` after such an edit.
* The loop draws the minibatches ``STAGE1 = 4`` iterations ahead and prefetches in stages
  (software pipelining): for the batch four iterations ahead the row pointers (CSR ``indptr``),
  labels, weights and row norms, two ahead the cache lines of the rows, one ahead the entries of
  ``v`` (and ``u``) the rows touch when ``v`` exceeds 1 MiB (else it stays in cache anyway).
  Rows are drawn at random from a matrix far larger than the caches, so without this every
  iteration waits for several memory round trips. Only iterations that will run in the current
  call are drawn ahead (its iteration budget and the sample budget are known), so between calls
  the sampler is exactly where the generic loop leaves it.
  Memory: five batch buffers of ``N`` indices and the ``N`` row norms (48 bytes per sample).
"""

import numpy as np

from sqnopt.checkpoint import CheckpointError, restore_array, state_array, state_value

from libc.math cimport fabs, isfinite, sqrt

from sqnopt._vec cimport SQNOPT_PREFETCH, sq_axpy, sq_axpy_f32, vdot, vdot_f, vsqnorm_f
from sqnopt.data._rows cimport CSRRows32, CSRRows64, RowData
from sqnopt.objectives._base cimport MarginObjectiveKernel
from sqnopt.projections._base cimport ProjectionKernel
from sqnopt.schedules._base cimport ScheduleKernel
from sqnopt.solver._loop cimport (
    LOOP_DONE, LOOP_EXHAUSTED, LOOP_MAX_SAMPLES, LOOP_NONFINITE_ITERATE, LOOP_NONFINITE_LOSS,
    Counters, LoopCounts, counts_load, counts_store,
)
from sqnopt.solver._sampler cimport Sampler
from sqnopt.steps._base cimport StepKernel


# Fold the scale into v when |a| leaves [SCALE_MIN, SCALE_MAX] (averaging: [AVG_SCALE_MIN, ...]).
cdef double SCALE_MIN = 1e-9
cdef double SCALE_MAX = 1e9
cdef double AVG_SCALE_MIN = 1e-3
cdef double AVG_SCALE_MAX = 1e3
# Batches drawn ahead (the current one included), and rows of each batch prefetched ahead.
cdef enum:
    STAGE1 = 4           # iterations ahead: row pointers, labels, norms
    STAGE2 = 2           # iterations ahead: row lines
    STAGE3 = 1           # iterations ahead: entries of v (and u)
    PIPELINE = 5         # STAGE1 + 1 batches drawn (the current one included)
cdef Py_ssize_t PREFETCH_ROWS = 16
# Prefetch the entries of v only when v (with u) is larger than this (a typical L2 cache).
cdef Py_ssize_t ENTRY_PREFETCH_BYTES = 1 << 20
# Report divergence once ||w_reg|| could exceed this (so nu = ||w_reg||^2 stays finite).
cdef double NORM_MAX = 1e150


cdef inline double _dot(const double* d64, const float* d32, const int* ind, Py_ssize_t nnz,
                        const double* v, Py_ssize_t st) noexcept nogil:
    """``x . v`` of one row view (sparse when ``ind`` is set, else dense); ``v`` has stride
    ``st``. Two accumulators (independent add chains); one loop per storage kind."""
    cdef Py_ssize_t p = 0
    cdef double a0 = 0.0, a1 = 0.0
    if ind == NULL and st == 1:
        return vdot(d64, v, nnz) if d64 != NULL else vdot_f(d32, v, nnz)
    if ind != NULL and d64 != NULL:
        while p + 2 <= nnz:
            a0 += d64[p] * v[ind[p] * st]
            a1 += d64[p + 1] * v[ind[p + 1] * st]
            p += 2
        if p < nnz:
            a0 += d64[p] * v[ind[p] * st]
    elif ind != NULL:
        while p + 2 <= nnz:
            a0 += <double> d32[p] * v[ind[p] * st]
            a1 += <double> d32[p + 1] * v[ind[p + 1] * st]
            p += 2
        if p < nnz:
            a0 += <double> d32[p] * v[ind[p] * st]
    elif d64 != NULL:
        while p + 2 <= nnz:
            a0 += d64[p] * v[p * st]
            a1 += d64[p + 1] * v[(p + 1) * st]
            p += 2
        if p < nnz:
            a0 += d64[p] * v[p * st]
    else:
        while p + 2 <= nnz:
            a0 += <double> d32[p] * v[p * st]
            a1 += <double> d32[p + 1] * v[(p + 1) * st]
            p += 2
        if p < nnz:
            a0 += <double> d32[p] * v[p * st]
    return a0 + a1


cdef inline void _axpy(const double* d64, const float* d32, const int* ind, Py_ssize_t nnz,
                       double alpha, double* v, Py_ssize_t st, double beta, bint with_u
                       ) noexcept nogil:
    """``v += alpha x`` and, if ``with_u``, ``u += beta x`` where ``u = v + 1`` (interleaved,
    ``st == 2``)."""
    cdef Py_ssize_t p, j
    cdef double x
    if with_u:
        if ind != NULL:
            if d64 != NULL:
                for p in range(nnz):
                    j = 2 * ind[p]
                    v[j] += alpha * d64[p]
                    v[j + 1] += beta * d64[p]
            else:
                for p in range(nnz):
                    j = 2 * ind[p]
                    x = <double> d32[p]
                    v[j] += alpha * x
                    v[j + 1] += beta * x
        else:
            for p in range(nnz):
                x = d64[p] if d64 != NULL else <double> d32[p]
                v[2 * p] += alpha * x
                v[2 * p + 1] += beta * x
        return
    if ind != NULL:
        if d64 != NULL:
            for p in range(nnz):
                v[ind[p] * st] += alpha * d64[p]
        else:
            for p in range(nnz):
                v[ind[p] * st] += alpha * <double> d32[p]
    elif st == 1:
        if d64 != NULL:
            sq_axpy(alpha, d64, v, nnz)
        else:
            sq_axpy_f32(alpha, d32, v, nnz)
    else:
        for p in range(nnz):
            v[p * st] += alpha * (d64[p] if d64 != NULL else <double> d32[p])


cdef class ScaledLoop:
    """Sparse first-order loop in scaled form (see the module docstring).

    Built by :meth:`sqnopt.Solver.init_state` when :func:`scaled_loop_supported` holds; the same
    ``run`` contract and declarations as :class:`sqnopt.solver._loop.CompiledLoop`: its dense
    iterate is written on request (``sync``), and it leaves the tolerances to the solver.
    """

    loop_kind = "scaled"
    tests_full_batch = False
    lazy_iterate = True

    cdef MarginObjectiveKernel obj
    cdef RowData data
    cdef ScheduleKernel sched
    cdef StepKernel step
    cdef Sampler sampler
    cdef double[::1] w, w_avg          # dense iterate / average: written at each return
    # v (and, when averaging, u interleaved: v_j = vu[2j], u_j = vu[2j+1], so that one cache
    # line brings both): w_reg = a * v; the sum of the averaged iterates is alpha * v + u.
    cdef double[::1] vu
    cdef Py_ssize_t st                 # stride of v in vu (1, or 2 when averaging)
    cdef double[::1] coef, dots        # per batch position
    cdef double[::1] rowsq             # ||x_i||^2 of the samples used so far (-1: not yet)
    cdef Py_ssize_t[:, ::1] ring       # batches of iterations drawn_from .. drawn_upto - 1
    cdef Py_ssize_t[::1] ring_size
    cdef Py_ssize_t drawn_upto         # iterations < drawn_upto have their batch drawn
    cdef Py_ssize_t exhausted_at       # the iteration whose draw failed (-1: none)
    cdef Py_ssize_t t_limit            # this call runs iterations < t_limit at most
    cdef Py_ssize_t max_samples        # this call's sample budget (0: none)
    cdef Py_ssize_t ahead_samples      # samples in the batches drawn ahead
    cdef Py_ssize_t last_t, last_samples, last_n_avg   # the counters as the loop left them
    # CSR storage for the prefetches (NULL for dense rows)
    cdef const Py_ssize_t* indptr
    cdef const int* xind
    cdef bint prefetch_entries         # v (and u) too large for the cache: prefetch entries
    cdef readonly object counters
    cdef readonly double scale         # a
    cdef readonly double sqnorm        # nu = ||w_reg||^2
    cdef readonly double intercept     # b (0 without an intercept)
    cdef readonly double avg_scale     # alpha
    cdef readonly double avg_intercept
    cdef readonly Py_ssize_t n_folds   # O(n) rescalings done so far
    cdef double lam, radius, scale_min, scale_max
    cdef bint has_proj, has_intercept, average
    cdef Py_ssize_t avg_start, nf, n

    def __init__(self, MarginObjectiveKernel objective, ScheduleKernel schedule, StepKernel step,
                 ProjectionKernel projection, Sampler sampler, double[::1] w, double[::1] w_avg,
                 counters, bint average, Py_ssize_t avg_start, ScaledLoop previous=None):
        if objective.n_blocks != 1:
            raise ValueError("the scaled loop needs a single-block (binary margin) objective")
        if projection is not None and not projection.ball_radius > 0:
            raise TypeError("the scaled loop supports no projection or an L2 ball only, got "
                            f"{type(projection).__name__}")
        self.n = objective.n_params
        if w.shape[0] != self.n:
            raise ValueError(f"w has length {w.shape[0]}, expected {self.n}")
        if average and (w_avg is None or w_avg.shape[0] != self.n):
            raise ValueError("averaging needs a w_avg buffer of length n_params")
        self.obj = objective
        self.data = objective.data
        self.nf = self.data.n_features
        self.has_intercept = self.data.has_intercept
        self.sched = schedule
        self.step = step
        self.sampler = sampler
        self.has_proj = projection is not None
        self.radius = projection.ball_radius if self.has_proj else 0.0
        if self.has_proj and projection.n_reg != self.nf:
            raise ValueError("the L2 ball must constrain exactly the feature weights")
        self.lam = objective.lam
        self.w = w
        self.w_avg = w_avg
        self.ring = np.zeros((PIPELINE, sampler.n_samples), dtype=np.intp)
        self.ring_size = np.zeros(PIPELINE, dtype=np.intp)
        self.indptr = NULL
        self.xind = NULL
        if isinstance(self.data, CSRRows64) and self.data.nnz > 0:
            self.indptr = &(<CSRRows64> self.data).indptr[0]
            self.xind = &(<CSRRows64> self.data).indices[0]
        elif isinstance(self.data, CSRRows32) and self.data.nnz > 0:
            self.indptr = &(<CSRRows32> self.data).indptr[0]
            self.xind = &(<CSRRows32> self.data).indices[0]
        self.counters = counters
        self.average = average
        self.avg_start = avg_start
        self.st = 2 if average else 1
        # Stage 3 only pays when v does not stay in the (L2) cache anyway.
        self.prefetch_entries = self.nf * self.st * 8 > ENTRY_PREFETCH_BYTES
        self.scale_min = AVG_SCALE_MIN if average else SCALE_MIN
        self.scale_max = AVG_SCALE_MAX if average else SCALE_MAX
        self.vu = np.zeros(self.nf * self.st)
        self.coef = np.zeros(sampler.n_samples)
        self.dots = np.zeros(sampler.n_samples)
        # ||x_i||^2, filled the first time row i takes part in an update (-1: not yet): a pass
        # over every row at set-up would cost as much as a third of an epoch on news20
        self.rowsq = np.full(sampler.n_samples, -1.0)
        self.n_folds = 0
        if (previous is not None and previous.nf == self.nf and previous.average == average
                and previous.last_t == counters.t and previous.last_n_avg == counters.n_avg):
            # the same solve on new data (Solver.rebind): keep the representation, exactly
            self.vu = np.array(previous.vu)
            self.scale = previous.scale
            self.sqnorm = previous.sqnorm
            self.intercept = previous.intercept
            self.avg_scale = previous.avg_scale
            self.avg_intercept = previous.avg_intercept
            self.n_folds = previous.n_folds
            self._at_counters()
        else:
            self.reload()

    def run(self, Py_ssize_t n_iter, Py_ssize_t max_samples):
        """Run up to ``n_iter`` iterations; stop before an iteration once ``max_samples``
        (if > 0) samples were processed. Returns an exit code; ``sync()`` writes ``w``."""
        cdef int status
        cdef LoopCounts c
        cdef Counters pc = self.counters
        if (pc.t != self.last_t or pc.n_samples != self.last_samples
                or pc.n_avg != self.last_n_avg):
            self.reload()   # the state was restored or edited from outside
        self.t_limit = pc.t + n_iter
        self.max_samples = max_samples
        counts_load(pc, &c)
        with nogil:
            status = self._run(n_iter, max_samples, &c)
        counts_store(&c, pc)
        self.last_t = c.t
        self.last_samples = c.n_samples
        self.last_n_avg = c.n_avg
        return status

    def sync(self) -> None:
        """Write the current iterate into ``w`` and the average into ``w_avg`` (O(n))."""
        cdef Py_ssize_t n_avg = self.counters.n_avg
        with nogil:
            self._materialize(n_avg)

    def reload(self) -> None:
        """Rebuild the representation from ``w``, ``w_avg`` and the counters (O(n)): ``v = w``,
        ``a = 1``, ``nu = ||w||^2``, ``u = n_avg w_avg``, ``alpha = 0``; drop batches drawn
        ahead."""
        cdef Py_ssize_t nf = self.nf, n_avg = self.counters.n_avg
        vu = np.asarray(self.vu)
        w_reg = np.asarray(self.w[:nf], dtype=np.float64)
        vu[::self.st] = w_reg
        if self.average:
            vu[1::2] = (np.asarray(self.w_avg[:nf], dtype=np.float64) * n_avg) if n_avg > 0 else 0.0
            self.avg_intercept = self.w_avg[nf] if (self.has_intercept and n_avg > 0) else 0.0
        self.scale = 1.0
        self.sqnorm = float(np.dot(w_reg, w_reg))
        self.intercept = self.w[nf] if self.has_intercept else 0.0
        self.avg_scale = 0.0
        self._at_counters()

    def get_state(self, *, bint data_state=True) -> dict:
        """The representation (``v`` and ``u``, ``a``, ``nu``, ``b``, ``alpha``, ``b_avg``, the fold
        count) and the counters as the loop left them; with ``data_state``, also the batches
        drawn ahead and not run yet (none when ``run`` returned normally: only iterations of
        the current call are drawn ahead)."""
        cdef Py_ssize_t u, slot
        state = {"loop": "scaled", "nf": int(self.nf), "average": bool(self.average),
                 "vu": np.array(self.vu), "scale": float(self.scale),
                 "sqnorm": float(self.sqnorm), "intercept": float(self.intercept),
                 "avg_scale": float(self.avg_scale), "avg_intercept": float(self.avg_intercept),
                 "n_folds": int(self.n_folds), "last_t": int(self.last_t),
                 "last_samples": int(self.last_samples), "last_n_avg": int(self.last_n_avg)}
        if data_state:
            sizes = []
            rows = []
            for u in range(self.last_t, self.drawn_upto):
                slot = u % PIPELINE
                sizes.append(int(self.ring_size[slot]))
                rows.append(np.array(self.ring[slot, :self.ring_size[slot]]))
            state.update(drawn_upto=int(self.drawn_upto), exhausted_at=int(self.exhausted_at),
                         ahead_samples=int(self.ahead_samples),
                         pending_sizes=np.array(sizes, dtype=np.intp),
                         pending=np.concatenate(rows) if rows else np.zeros(0, dtype=np.intp))
        return state

    def set_state(self, state, *, bint new_data=False) -> None:
        """Restore what :meth:`get_state` returned; the solve's counters must be restored
        first. On new data (``new_data``) only the representation is kept, when the counters
        are where the loop left them (as ``Solver.rebind`` keeps it); else the loop reloads
        from ``w``."""
        cdef Py_ssize_t u, slot, k, off, size
        if state.get("loop") != "scaled":
            raise CheckpointError(f"the checkpoint is of the {state.get('loop')!r} loop, this "
                                  "solve runs the scaled sparse loop: the solver's path, "
                                  "components or data storage differ")
        nf = state_value(state, "nf", int, self)
        average = state_value(state, "average", bool, self)
        if nf != self.nf or average != self.average:
            raise CheckpointError(f"ScaledLoop: the checkpoint has {nf} features "
                                  f"(averaging {average}), this solve {self.nf} "
                                  f"({bool(self.average)}): it is of another problem")
        last_t = state_value(state, "last_t", int, self)
        last_n_avg = state_value(state, "last_n_avg", int, self)
        if new_data and (last_t != self.counters.t or last_n_avg != self.counters.n_avg):
            self.reload()
            return
        restore_array(self.vu, state, "vu", self)
        self.scale = state_value(state, "scale", float, self)
        self.sqnorm = state_value(state, "sqnorm", float, self)
        self.intercept = state_value(state, "intercept", float, self)
        self.avg_scale = state_value(state, "avg_scale", float, self)
        self.avg_intercept = state_value(state, "avg_intercept", float, self)
        self.n_folds = state_value(state, "n_folds", int, self)
        if new_data:
            self._at_counters()
            return
        drawn_upto = state_value(state, "drawn_upto", int, self)
        sizes = state_array(state, "pending_sizes", self, np.intp)
        pending = state_array(state, "pending", self, np.intp)
        if (sizes.shape[0] != drawn_upto - last_t or sizes.shape[0] > PIPELINE
                or int(sizes.sum()) != pending.shape[0]
                or (sizes.shape[0] and int(sizes.max()) > self.ring.shape[1])):
            raise CheckpointError("ScaledLoop: the checkpointed batches drawn ahead do not fit "
                                  "this data")
        off = 0
        for k in range(sizes.shape[0]):
            u = last_t + k
            slot = u % PIPELINE
            size = sizes[k]
            np.asarray(self.ring)[slot, :size] = pending[off:off + size]
            self.ring_size[slot] = size
            off += size
        self.drawn_upto = drawn_upto
        self.exhausted_at = state_value(state, "exhausted_at", int, self)
        self.ahead_samples = state_value(state, "ahead_samples", int, self)
        self.last_t = last_t
        self.last_samples = state_value(state, "last_samples", int, self)
        self.last_n_avg = last_n_avg

    cdef void _at_counters(self):
        """No batch drawn ahead; the loop stands where the counters say."""
        cdef Counters pc = self.counters
        self.drawn_upto = pc.t
        self.exhausted_at = -1
        self.ahead_samples = 0
        self.last_t = pc.t
        self.last_samples = pc.n_samples
        self.last_n_avg = pc.n_avg

    cdef void _materialize(self, Py_ssize_t n_avg) noexcept nogil:
        """Write ``w = [a v, b]`` and ``w_avg = [(alpha v + u) / n_avg, b_avg]``."""
        cdef Py_ssize_t j, st = self.st
        cdef double a = self.scale, al = self.avg_scale, inv
        cdef double* vu = &self.vu[0]
        for j in range(self.nf):
            self.w[j] = a * vu[j * st]
        if self.has_intercept:
            self.w[self.nf] = self.intercept
        if self.average and n_avg > 0:
            inv = 1.0 / n_avg
            for j in range(self.nf):
                self.w_avg[j] = (al * vu[2 * j] + vu[2 * j + 1]) * inv
            if self.has_intercept:
                self.w_avg[self.nf] = self.avg_intercept

    cdef void _fold(self, double a_new) noexcept nogil:
        """``v <- a_new v``, ``a = 1`` (O(n)); moves ``alpha v`` into ``u`` first."""
        cdef Py_ssize_t j, st = self.st
        cdef double s = 0.0, x
        cdef double al = self.avg_scale
        cdef double* vu = &self.vu[0]
        if self.average and al != 0.0:
            for j in range(self.nf):
                vu[2 * j + 1] += al * vu[2 * j]
            self.avg_scale = 0.0
        for j in range(self.nf):
            x = a_new * vu[j * st]
            vu[j * st] = x
            s += x * x
        self.scale = 1.0
        self.sqnorm = s
        self.n_folds += 1

    cdef inline void _prefetch_pointers(self, Py_ssize_t i) noexcept nogil:
        """Stage 1: the row pointer, label, weight and squared norm of sample ``i``."""
        SQNOPT_PREFETCH(self.indptr + i)
        SQNOPT_PREFETCH(&self.rowsq[i])
        SQNOPT_PREFETCH(self.data.y + i)
        SQNOPT_PREFETCH(self.data.grad_weight + i)

    cdef inline void _prefetch_row(self, Py_ssize_t i) noexcept nogil:
        """Stage 2: the cache lines holding the values and column indices of row ``i``."""
        self.data.row_prefetch(i)

    cdef inline void _prefetch_entries(self, Py_ssize_t i) noexcept nogil:
        """Stage 3: the entries of ``v`` (and ``u``, on the same line) that row ``i`` touches."""
        cdef Py_ssize_t p, stop = self.indptr[i + 1]
        cdef const double* v = &self.vu[0]
        for p in range(self.indptr[i], stop):
            SQNOPT_PREFETCH(v + self.xind[p] * self.st)

    cdef int _fill(self, Py_ssize_t t, Py_ssize_t n_samples) noexcept nogil:
        """Draw the batches of iterations ``t .. t + PIPELINE - 1`` that are not drawn yet and
        will run in this call (iteration and sample budgets), and issue the prefetches of the
        three stages. ``n_samples``: samples processed before iteration ``t``. Returns -1 if
        the batch of ``t`` could not be drawn (the sampler is exhausted)."""
        cdef Py_ssize_t u, slot, size, s, m, stop = t + PIPELINE
        if stop > self.t_limit:
            stop = self.t_limit
        while self.drawn_upto < stop and self.exhausted_at < 0:
            if (self.drawn_upto > t and self.max_samples > 0
                    and n_samples + self.ahead_samples >= self.max_samples):
                break   # that iteration will not run in this call: do not draw its batch
            slot = self.drawn_upto % PIPELINE
            size = self.sched.cy_batch_size(self.drawn_upto + 1)
            if self.sampler.cy_draw(size, &self.ring[slot, 0]) != 0:
                self.exhausted_at = self.drawn_upto
                break
            self.ring_size[slot] = size
            self.ahead_samples += size
            self.drawn_upto += 1
        if self.exhausted_at == t:
            return -1
        if self.indptr != NULL:
            for u in range(1, PIPELINE):
                if t + u >= self.drawn_upto:
                    break
                slot = (t + u) % PIPELINE
                m = self.ring_size[slot]
                if m > PREFETCH_ROWS:
                    m = PREFETCH_ROWS
                for s in range(m):
                    if u == STAGE1:
                        self._prefetch_pointers(self.ring[slot, s])
                    elif u == STAGE2:
                        self._prefetch_row(self.ring[slot, s])
                    elif u == STAGE3 and self.prefetch_entries:
                        self._prefetch_entries(self.ring[slot, s])
        return 0

    cdef int _run(self, Py_ssize_t n_iter, Py_ssize_t max_samples, LoopCounts* c) noexcept nogil:
        cdef Py_ssize_t it, s, i, size, nnz, st = self.st, j, n_upd, upd_nnz
        cdef double inv, total, loss, yi, gi, m, cf, dl, gb, eps, shrink, a_new, sq_new, bound
        cdef double b_new, delta, dot, step_v, sc
        cdef const double* d64
        cdef const float* d32
        cdef const int* ind
        cdef bint v_changed, bulk
        cdef int status = LOOP_DONE
        cdef Py_ssize_t* batch
        cdef double* v = &self.vu[0]
        cdef double* coef = &self.coef[0]
        cdef double* dots = &self.dots[0]
        cdef double* rowsq = &self.rowsq[0]
        cdef double lam = self.lam
        cdef double r2 = self.radius * self.radius
        # the scalars of the representation, kept in locals (written back before returning)
        cdef double a = self.scale, nu = self.sqnorm, b = self.intercept
        cdef double al = self.avg_scale, b_avg = self.avg_intercept

        for it in range(n_iter):
            if max_samples > 0 and c.n_samples >= max_samples:
                status = LOOP_MAX_SAMPLES
                break
            if self._fill(c.t, c.n_samples) != 0:
                status = LOOP_EXHAUSTED
                break
            batch = &self.ring[c.t % PIPELINE, 0]
            size = self.ring_size[c.t % PIPELINE]
            self.ahead_samples -= size
            # 1. margins at w_t = a v + b: the minibatch loss and the coefficients c_i.
            inv = 1.0 / size
            total = 0.0
            gb = 0.0
            n_upd = 0
            upd_nnz = 0
            for s in range(size):
                i = batch[s]
                if self.indptr != NULL and size > PREFETCH_ROWS:
                    # large batches: the same three stages within the batch
                    if s + 3 * PREFETCH_ROWS < size:
                        self._prefetch_pointers(batch[s + 3 * PREFETCH_ROWS])
                    if s + 2 * PREFETCH_ROWS < size:
                        self._prefetch_row(batch[s + 2 * PREFETCH_ROWS])
                    if s + PREFETCH_ROWS < size and self.prefetch_entries:
                        self._prefetch_entries(batch[s + PREFETCH_ROWS])
                nnz = self.data.row_view(i, &d64, &d32, &ind)
                dot = _dot(d64, d32, ind, nnz, v, st)
                dots[s] = dot
                yi = self.data.y[i]
                gi = self.data.grad_weight[i]
                m = yi * (a * dot + b)
                total += gi * self.obj.loss_and_dloss_dmargin(m, &dl)
                cf = inv * gi * yi * dl
                coef[s] = cf
                if cf != 0.0:
                    gb += cf
                    n_upd += 1
                    upd_nnz += nnz
            loss = total * inv + 0.5 * lam * nu
            c.n_grad_evals += 1
            if not isfinite(loss):
                status = LOOP_NONFINITE_LOSS
                break
            c.loss_sum += loss
            c.n_loss += 1
            eps = self.step.cy_step_size(c.t)
            # 2. w_{t+1} = (1 - eps lam) w_t - eps sum_i c_i x_i, checked before anything changes.
            shrink = 1.0 - eps * lam
            a_new = a * shrink
            sq_new = nu * shrink * shrink
            if n_upd > 0:
                bound = sqrt(sq_new)
                for s in range(size):
                    if coef[s] != 0.0:
                        i = batch[s]
                        if rowsq[i] < 0.0:     # first update with row i (in cache: just read)
                            nnz = self.data.row_view(i, &d64, &d32, &ind)
                            rowsq[i] = _row_sqnorm(d64, d32, nnz)
                        bound += fabs(eps * coef[s]) * sqrt(rowsq[i])
            else:
                bound = 0.0
            b_new = b - eps * gb if self.has_intercept else 0.0
            if not (bound < NORM_MAX and isfinite(a_new) and isfinite(b_new)):
                status = LOOP_NONFINITE_ITERATE
                break
            v_changed = False
            if a_new == 0.0 or fabs(a_new) < self.scale_min or fabs(a_new) > self.scale_max:
                self.avg_scale = al
                self._fold(a_new)          # a = 1, nu exact, alpha v moved into u
                a = self.scale
                sq_new = self.sqnorm
                al = self.avg_scale
                v_changed = True
            else:
                a = a_new
            # Updating nu row by row needs x . v after each addition (another pass per row once
            # rows overlap); when the added rows hold more entries than w has coordinates, adding
            # them all and recomputing nu = a^2 ||v||^2 (O(n)) is cheaper ("bulk").
            bulk = n_upd > 1 and upd_nnz > self.nf
            for s in range(size):
                cf = coef[s]
                if cf == 0.0:
                    continue
                nnz = self.data.row_view(batch[s], &d64, &d32, &ind)
                delta = -eps * cf
                if not bulk:
                    dot = _dot(d64, d32, ind, nnz, v, st) if v_changed else dots[s]
                    # ||w + delta x||^2 = ||w||^2 + 2 delta (w . x) + delta^2 ||x||^2,
                    # w . x = a (v . x)
                    sq_new += 2.0 * delta * a * dot + delta * delta * rowsq[batch[s]]
                step_v = delta / a
                _axpy(d64, d32, ind, nnz, step_v, v, st, -al * step_v, al != 0.0)
                v_changed = True
            if bulk:
                sq_new = 0.0
                for j in range(self.nf):
                    sq_new += v[j * st] * v[j * st]
                sq_new *= a * a
            nu = sq_new if sq_new > 0.0 else 0.0
            # 3. projection onto {||w_reg|| <= r}: a rescaling of a.
            if self.has_proj and nu > r2:
                sc = self.radius / sqrt(nu)
                a *= sc
                nu *= sc * sc
            b = b_new
            c.t += 1
            c.n_samples += size
            c.last_step = eps
            c.last_loss = loss
            # 4. Polyak-Ruppert average of the iterates after avg_start.
            if self.average and c.t > self.avg_start:
                c.n_avg += 1
                al += a
                b_avg += (b - b_avg) / c.n_avg
        self.scale = a
        self.sqnorm = nu
        self.intercept = b
        self.avg_scale = al
        self.avg_intercept = b_avg
        return status


cdef inline double _row_sqnorm(const double* d64, const float* d32, Py_ssize_t nnz) noexcept nogil:
    """``||x||^2`` of one stored row (its values ``d64`` or ``d32``, ``nnz`` of them), with
    independent partial sums (``vdot`` / ``vsqnorm_f``)."""
    return vdot(d64, d64, nnz) if d64 != NULL else vsqnorm_f(d32, nnz)


def _row_sqnorms(RowData data):
    """``||x_i||^2`` of every row, without the intercept entry (the loop itself fills them
    lazily into its ``rowsq`` cache; this is the eager form, for tests)."""
    cdef Py_ssize_t i, nnz
    cdef const double* d64
    cdef const float* d32
    cdef const int* ind
    out = np.zeros(data.n_samples)
    cdef double[::1] o = out
    with nogil:
        for i in range(data.n_samples):
            nnz = data.row_view(i, &d64, &d32, &ind)
            o[i] = _row_sqnorm(d64, d32, nnz)
    return out


def scaled_loop_supported(objective, objective_kernel, curvature, curvature_kernel,
                          projection_kernel):
    """Why the scaled loop cannot run this combination, or ``""`` if it can.

    ``objective`` and ``curvature`` are the components, the other arguments their kernels. The
    scaled loop needs a compiled margin objective of one block (capability ``"margin"``), a
    curvature kernel that declares ``direction_is_gradient`` (``d = g``, nothing learnt) and no
    projection or one that declares ``ball_radius`` (a Euclidean ball).
    """
    if "margin" not in objective.capabilities:
        return f"objective {objective.describe()} is not a margin loss"
    if not isinstance(objective_kernel, MarginObjectiveKernel):
        return f"objective kernel {type(objective_kernel).__name__} is not a MarginObjectiveKernel"
    if objective_kernel.n_blocks != 1:
        return "the objective has more than one parameter block"
    if not getattr(curvature_kernel, "direction_is_gradient", False):
        return f"curvature {curvature.describe()} is not the identity (its kernel does not " \
               "declare direction_is_gradient)"
    if (curvature_kernel.needs_secant_pair or curvature_kernel.needs_curvature_batch):
        return "the curvature kernel needs secant pairs or curvature batches"
    if projection_kernel is not None and not getattr(projection_kernel, "ball_radius", 0.0) > 0:
        return (f"projection kernel {type(projection_kernel).__name__} is not a Euclidean ball "
                "(it does not declare ball_radius)")
    return ""
