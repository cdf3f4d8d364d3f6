# cython: language_level=3
"""The scaled sparse iterate: Pegasos' representation ``w_reg = a * v`` for the driver.

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

:class:`ScaledIterate` is that representation, an
:class:`~sqnopt.solver._iterate.IterateKernel`: the driver
(:class:`~sqnopt.solver._loop.CompiledLoop`) runs the iteration -- the batch (drawn ahead), the
step size, the record (counters), the stopping tests and checkpoints -- and makes one call per
iteration, ``cy_first_order``, for the gradient in coefficient form, the update, the ball
projection and the average. :class:`ScaledLoop` is the driver built with it (a constructor, no
iteration of its own).

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

The iterates agree with the dense path's (same sampler draws, schedule and step calls,
counters) up to rounding. Differences, by design:

* Divergence is reported (``LOOP_NONFINITE_ITERATE``, nothing of the step applied) as soon as an
  upper bound on ``||w_reg||`` after the step reaches 1e150 (beyond that ``nu`` could overflow),
  rather than when an entry of ``w`` becomes infinite.
* The dense iterate ``w`` (and ``w_avg``) is written on request, by ``sync`` (O(n)), which
  ``SolverState.output_iterate`` calls: the solver syncs before every evaluation, callback and
  result, so plain report points cost O(1), and ``state.w`` is current whenever ``Solver.run``
  has returned. The representation persists across calls (iterates do not depend on report
  points or on splitting a solve into several ``run`` calls), and ``Solver.rebind`` hands it to
  the new loop (bit-for-bit continuation on new data). When the counters differ at the start
  of ``run`` from what the loop left (a state restored or edited from outside, e.g. a resumed
  ``partial_fit``), the driver reloads the representation from ``w``, ``w_avg`` and the counters
  (``v = w``, ``a = 1``; O(n)): such a continuation agrees with an uninterrupted one up to
  rounding. Writing into ``state.w`` without touching the counters is not detected: call
  ``state.loop.reload()`` after such an edit.
* The representation asks the driver to draw the minibatches ``lookahead = 4`` iterations ahead
  and prefetches in stages (software pipelining): for the batch four iterations ahead the row
  pointers (CSR ``indptr``), labels, weights and row norms, two ahead the cache lines of the
  rows, one ahead the entries of ``v`` (and ``u``) the rows touch when ``v`` exceeds 1 MiB (else
  it stays in cache anyway). Rows are drawn at random from a matrix far larger than the caches,
  so without this every iteration waits for several memory round trips.
  Memory: five batch buffers of ``N`` indices (the driver's), the ``N`` row norms, and per batch
  position a coefficient and a dot product (64 bytes per sample).
"""

cimport cython
import numpy as np

from sqnopt.checkpoint import CheckpointError, restore_array, state_value

from libc.math cimport fabs, isfinite, sqrt

from sqnopt._vec cimport (
    SQNOPT_PREFETCH, sq_axpy, sq_axpy_f32, sq_dot, sq_dot_f32, sq_sqnorm_f32,
)
from sqnopt.data._rows cimport CSRRows32, CSRRows64, RowData
from sqnopt.objectives._base cimport MarginObjectiveKernel
from sqnopt.projections._base cimport ProjectionKernel
from sqnopt.schedules._base cimport ScheduleKernel
from sqnopt.solver._iterate cimport (
    ITERATE_NONFINITE, ITERATE_NONFINITE_LOSS, ITERATE_STEPPED, IterateKernel,
)
from sqnopt.solver._loop cimport CompiledLoop, Counters
from sqnopt.solver._sampler cimport Sampler
from sqnopt.steps._base cimport StepKernel


# Fold the scale into v when |a| leaves [SCALE_MIN, SCALE_MAX] (averaging: [AVG_SCALE_MIN, ...]).
cdef double SCALE_MIN = 1e-9
cdef double SCALE_MAX = 1e9
cdef double AVG_SCALE_MIN = 1e-3
cdef double AVG_SCALE_MAX = 1e3
# Iterations ahead of each prefetch stage (LOOKAHEAD: the batches the driver draws ahead), and
# rows of each batch prefetched ahead.
cdef enum:
    STAGE1 = 4           # iterations ahead: row pointers, labels, norms
    STAGE2 = 2           # iterations ahead: row lines
    STAGE3 = 1           # iterations ahead: entries of v (and u)
    LOOKAHEAD = 4
cdef Py_ssize_t PREFETCH_ROWS = 16
# Prefetch the entries of v only when v (with u) is larger than this (a typical L2 cache).
cdef Py_ssize_t ENTRY_PREFETCH_BYTES = 1 << 20
# Report divergence once ||w_reg|| could exceed this (so nu = ||w_reg||^2 stays finite).
cdef double NORM_MAX = 1e150


cdef inline double _dot(const double* d64, const float* d32, const int* ind, Py_ssize_t nnz,
                        const double* v, Py_ssize_t st) noexcept nogil:
    """``x . v`` of one row view (sparse when ``ind`` is set, else dense); ``v`` has stride
    ``st``. A dense row against a contiguous ``v`` is the vector layer's ``sq_dot``; the
    gathers and strided loops use two accumulators (independent add chains), one loop per
    storage kind."""
    cdef Py_ssize_t p = 0
    cdef double a0 = 0.0, a1 = 0.0
    if ind == NULL and st == 1:
        return sq_dot(d64, v, nnz) if d64 != NULL else sq_dot_f32(d32, v, nnz)
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


@cython.final
cdef class ScaledIterate(IterateKernel):
    """The iterate ``w = [a v, b]`` with ``nu = ||w_reg||^2`` and the lazy average
    ``(alpha v + u) / n_avg`` (see the module docstring), bound to one margin objective.
    """

    kind = "scaled"

    cdef RowData data
    cdef double[::1] w, w_avg          # dense iterate / average: written by cy_sync
    # v (and, when averaging, u interleaved: v_j = vu[2j], u_j = vu[2j+1], so that one cache
    # line brings both): w_reg = a * v; the sum of the averaged iterates is alpha * v + u.
    cdef double[::1] vu
    cdef Py_ssize_t st                 # stride of v in vu (1, or 2 when averaging)
    cdef MarginObjectiveKernel obj
    cdef double lam
    cdef double[::1] coef, dots        # c_i and v . x_i per batch position
    cdef double[::1] rowsq             # ||x_i||^2 of the samples used so far (-1: not yet)
    # CSR storage for the prefetches (NULL for dense rows)
    cdef const Py_ssize_t* indptr
    cdef const int* xind
    cdef bint prefetch_entries         # v (and u) too large for the cache: prefetch entries
    cdef readonly double scale         # a
    cdef readonly double intercept     # b (0 without an intercept)
    cdef readonly double avg_scale     # alpha
    cdef readonly double avg_intercept
    cdef readonly Py_ssize_t n_folds   # O(n) rescalings done so far
    cdef double scale_min, scale_max
    cdef bint has_intercept, average
    cdef Py_ssize_t nf

    def __init__(self, MarginObjectiveKernel objective, double[::1] w, double[::1] w_avg,
                 bint average):
        IterateKernel.__init__(self, objective.n_params, LOOKAHEAD)
        if objective.n_blocks != 1:
            raise ValueError("the scaled representation needs a single-block (binary margin) "
                             "objective")
        if w.shape[0] != self.n_params:
            raise ValueError(f"w has length {w.shape[0]}, expected {self.n_params}")
        if average and (w_avg is None or w_avg.shape[0] != self.n_params):
            raise ValueError("averaging needs a w_avg buffer of length n_params")
        cdef Py_ssize_t n_samples = objective.data.n_samples
        self.obj = objective
        self.lam = objective.lam
        self.data = objective.data
        self.nf = self.data.n_features
        self.has_intercept = self.data.has_intercept
        self.w = w
        self.w_avg = w_avg
        self.average = average
        self.st = 2 if average else 1
        self.indptr = NULL
        self.xind = NULL
        if isinstance(self.data, CSRRows64) and self.data.nnz > 0:
            self.indptr = &(<CSRRows64> self.data).indptr[0]
            self.xind = &(<CSRRows64> self.data).indices[0]
        elif isinstance(self.data, CSRRows32) and self.data.nnz > 0:
            self.indptr = &(<CSRRows32> self.data).indptr[0]
            self.xind = &(<CSRRows32> self.data).indices[0]
        # Stage 3 only pays when v does not stay in the (L2) cache anyway.
        self.prefetch_entries = self.nf * self.st * 8 > ENTRY_PREFETCH_BYTES
        self.scale_min = AVG_SCALE_MIN if average else SCALE_MIN
        self.scale_max = AVG_SCALE_MAX if average else SCALE_MAX
        self.vu = np.zeros(self.nf * self.st)
        self.dots = np.zeros(n_samples)
        self.coef = np.zeros(n_samples)
        # ||x_i||^2, filled the first time row i takes part in an update (-1: not yet): a pass
        # over every row at set-up would cost as much as a third of an epoch on news20
        self.rowsq = np.full(n_samples, -1.0)
        self.n_folds = 0
        self.scale = 1.0
        self.sqnorm = 0.0

    cdef int cy_first_order(self, const Py_ssize_t* batch, Py_ssize_t size,
                            const Py_ssize_t* const* ahead, const Py_ssize_t* ahead_sizes,
                            Py_ssize_t n_ahead, double eps, double radius, Py_ssize_t n_avg,
                            double* loss_out) noexcept nogil:
        """The iteration's gradient, direction and update stages in scaled form (the module
        docstring and ``_iterate.pxd``)."""
        cdef Py_ssize_t s, i, nnz, j, n_upd = 0, upd_nnz = 0, st = self.st
        cdef double inv = 1.0 / size, total = 0.0, wsum = 0.0, loss, yi, gi, m, cf, dl, gb = 0.0
        cdef double shrink, a_new, sq_new, bound, b_new, delta, dot, step_v, sc
        cdef double lam = self.lam
        cdef double a = self.scale, nu = self.sqnorm, b = self.intercept, al = self.avg_scale
        cdef const double* d64
        cdef const float* d32
        cdef const int* ind
        cdef bint v_changed, bulk, in_batch
        cdef double* v = &self.vu[0]
        cdef double* coef = &self.coef[0]
        cdef double* dots = &self.dots[0]
        cdef double* rowsq = &self.rowsq[0]
        cdef const double* y = self.data.y
        cdef const double* gw = self.data.grad_weight
        if n_ahead > 0 and self.indptr != NULL:
            self._prefetch_ahead(ahead, ahead_sizes, n_ahead)
        # 1. margins at w_t = a v + b: the minibatch loss and the coefficients c_i.
        # (large batches: the prefetch stages within the batch as well)
        in_batch = self.indptr != NULL and size > PREFETCH_ROWS
        for s in range(size):
            if in_batch:
                if s + 3 * PREFETCH_ROWS < size:
                    self._prefetch_pointers(batch[s + 3 * PREFETCH_ROWS])
                if s + 2 * PREFETCH_ROWS < size:
                    self._prefetch_row(batch[s + 2 * PREFETCH_ROWS])
                if s + PREFETCH_ROWS < size and self.prefetch_entries:
                    self._prefetch_entries(batch[s + PREFETCH_ROWS])
            i = batch[s]
            nnz = self.data.row_view(i, &d64, &d32, &ind)
            dot = _dot(d64, d32, ind, nnz, v, st)
            dots[s] = dot
            yi = y[i]
            gi = gw[i]
            m = yi * (a * dot + b)
            wsum += gi
            total += gi * self.obj.loss_and_dloss_dmargin(m, &dl)
            cf = inv * gi * yi * dl
            coef[s] = cf
            if cf != 0.0:
                gb += cf
                n_upd += 1
                upd_nnz += nnz
        loss = total * inv + 0.5 * lam * nu
        loss_out[0] = loss
        self.batch_loss = total
        self.batch_weight = wsum
        if not isfinite(loss):
            return ITERATE_NONFINITE_LOSS
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
            return ITERATE_NONFINITE
        v_changed = False
        if a_new == 0.0 or fabs(a_new) < self.scale_min or fabs(a_new) > self.scale_max:
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
        if n_upd > 0:
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
        # 3. the projection onto {||w_reg|| <= radius}: a rescaling of a.
        if radius > 0.0 and nu > radius * radius:
            sc = radius / sqrt(nu)
            a *= sc
            nu *= sc * sc
        self.scale = a
        self.sqnorm = nu
        self.intercept = b_new
        # 4. the running average: alpha += a (the sum of the averaged iterates is alpha v + u).
        if n_avg > 0:
            self.avg_scale = al + a
            self.avg_intercept += (b_new - self.avg_intercept) / n_avg
        else:
            self.avg_scale = al
        return ITERATE_STEPPED

    cdef inline void _prefetch_ahead(self, const Py_ssize_t* const* ahead,
                                     const Py_ssize_t* sizes, Py_ssize_t n_ahead) noexcept nogil:
        """The three stages (CSR rows), for the first rows of each batch ahead: ``STAGE3``
        iteration ahead the entries of ``v`` the rows touch (when ``v`` exceeds the cache),
        ``STAGE2`` ahead the rows' lines, ``STAGE1`` ahead their pointers, labels, weights and
        norms."""
        cdef Py_ssize_t s, m
        if n_ahead >= STAGE3 and self.prefetch_entries:
            m = sizes[STAGE3 - 1] if sizes[STAGE3 - 1] < PREFETCH_ROWS else PREFETCH_ROWS
            for s in range(m):
                self._prefetch_entries(ahead[STAGE3 - 1][s])
        if n_ahead >= STAGE2:
            m = sizes[STAGE2 - 1] if sizes[STAGE2 - 1] < PREFETCH_ROWS else PREFETCH_ROWS
            for s in range(m):
                self._prefetch_row(ahead[STAGE2 - 1][s])
        if n_ahead >= STAGE1:
            m = sizes[STAGE1 - 1] if sizes[STAGE1 - 1] < PREFETCH_ROWS else PREFETCH_ROWS
            for s in range(m):
                self._prefetch_pointers(ahead[STAGE1 - 1][s])

    cdef void cy_sync(self, Py_ssize_t n_avg) noexcept nogil:
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

    def reload(self, Py_ssize_t n_avg) -> None:
        """Rebuild the representation from ``w`` and ``w_avg`` (``n_avg`` iterates averaged):
        ``v = w``, ``a = 1``, ``nu = ||w||^2``, ``u = n_avg w_avg``, ``alpha = 0`` (O(n))."""
        cdef Py_ssize_t nf = self.nf
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

    def adopt(self, IterateKernel previous) -> bool:
        """Take over ``previous``'s representation exactly when it is a scaled iterate of the
        same features and averaging (the same solve on new data: ``Solver.rebind``)."""
        if not isinstance(previous, ScaledIterate):
            return False
        cdef ScaledIterate p = <ScaledIterate> previous
        if p.nf != self.nf or p.average != self.average:
            return False
        self.vu = np.array(p.vu)
        self.scale = p.scale
        self.sqnorm = p.sqnorm
        self.intercept = p.intercept
        self.avg_scale = p.avg_scale
        self.avg_intercept = p.avg_intercept
        self.n_folds = p.n_folds
        return True

    def get_state(self) -> dict:
        """The representation: ``v`` and ``u``, ``a``, ``nu``, ``b``, ``alpha``, ``b_avg``, the
        fold count (copies)."""
        return {"loop": "scaled", "nf": int(self.nf), "average": bool(self.average),
                "vu": np.array(self.vu), "scale": float(self.scale),
                "sqnorm": float(self.sqnorm), "intercept": float(self.intercept),
                "avg_scale": float(self.avg_scale), "avg_intercept": float(self.avg_intercept),
                "n_folds": int(self.n_folds)}

    def check_state(self, state) -> None:
        """Raise :class:`~sqnopt.checkpoint.CheckpointError` unless ``state`` is a scaled
        representation of this problem."""
        if state.get("loop") != "scaled":
            raise CheckpointError(f"the checkpoint is of the {state.get('loop')!r} loop, this "
                                  "solve runs the scaled sparse loop: the solver's path, "
                                  "components or data storage differ")
        nf = state_value(state, "nf", int, self)
        average = state_value(state, "average", bool, self)
        if nf != self.nf or average != self.average:
            raise CheckpointError(f"ScaledLoop: the checkpoint has {nf} features (fields 'nf', "
                                  f"'average') (averaging {average}), this solve {self.nf} "
                                  f"({bool(self.average)}): it is of another problem")

    def set_state(self, state) -> None:
        """Restore what :meth:`get_state` returned."""
        self.check_state(state)
        values = {key: state_value(state, key, float, self)
                  for key in ("scale", "intercept", "avg_scale", "avg_intercept")}
        sqnorm = state_value(state, "sqnorm", float, self, lo=0.0)
        n_folds = state_value(state, "n_folds", int, self, lo=0)
        if not self.average and (values["avg_scale"] != 0.0 or values["avg_intercept"] != 0.0):
            # without averaging v has no u entries: a nonzero alpha would make the steps
            # update entries past the end of v
            raise CheckpointError(f"ScaledIterate: checkpoint fields 'avg_scale' = "
                                  f"{values['avg_scale']!r}, 'avg_intercept' = "
                                  f"{values['avg_intercept']!r} must be 0 without averaging: "
                                  "the checkpoint is damaged or was edited")
        restore_array(self.vu, state, "vu", self, iterate=True)
        self.scale = values["scale"]
        self.sqnorm = sqnorm
        self.intercept = values["intercept"]
        self.avg_scale = values["avg_scale"]
        self.avg_intercept = values["avg_intercept"]
        self.n_folds = n_folds


cdef class ScaledLoop(CompiledLoop):
    """The driver (:class:`~sqnopt.solver._loop.CompiledLoop`) with the scaled sparse iterate
    (:class:`ScaledIterate`): first-order steps of a margin objective in O(nnz of the batch).

    Built by :meth:`sqnopt.Solver.init_state` when :func:`scaled_loop_supported` holds; the
    ``run`` contract of the driver. ``previous``: the loop this one replaces on new data
    (``Solver.rebind``), whose representation is taken over when the counters are where it
    left them.
    """

    def __init__(self, MarginObjectiveKernel objective, ScheduleKernel schedule, StepKernel step,
                 ProjectionKernel projection, Sampler sampler, double[::1] w, double[::1] w_avg,
                 Counters counters, bint average, Py_ssize_t avg_start,
                 CompiledLoop previous=None):
        if projection is not None and not projection.ball_radius > 0:
            raise TypeError("the scaled loop supports no projection or an L2 ball only, got "
                            f"{type(projection).__name__}")
        if projection is not None and projection.n_reg != objective.data.n_features:
            raise ValueError("the L2 ball must constrain exactly the feature weights")
        iterate = ScaledIterate(objective, w, w_avg, average)
        self.sched = schedule
        self.step = step
        self.sampler = sampler
        self.w = w
        self.w_avg = w_avg
        self.counters = counters
        self.average = average
        self.avg_start = avg_start
        self._iterate_setup(objective, iterate, projection)
        if not (previous is not None and previous.iterate is not None
                and previous.last_t == counters.t and previous.last_n_avg == counters.n_avg
                and iterate.adopt(previous.iterate)):
            iterate.reload(counters.n_avg)

    @property
    def scale(self) -> float:
        """The scale ``a`` of ``w_reg = a v``."""
        return (<ScaledIterate> self.iterate).scale

    @property
    def sqnorm(self) -> float:
        """``nu = ||w_reg||^2``."""
        return self.iterate.sqnorm

    @property
    def intercept(self) -> float:
        return (<ScaledIterate> self.iterate).intercept

    @property
    def avg_scale(self) -> float:
        return (<ScaledIterate> self.iterate).avg_scale

    @property
    def avg_intercept(self) -> float:
        return (<ScaledIterate> self.iterate).avg_intercept

    @property
    def n_folds(self) -> int:
        """O(n) rescalings of ``v`` done so far."""
        return (<ScaledIterate> self.iterate).n_folds


cdef inline double _row_sqnorm(const double* d64, const float* d32, Py_ssize_t nnz) noexcept nogil:
    """``||x||^2`` of one stored row (its values ``d64`` or ``d32``, ``nnz`` of them), with
    the vector layer's order (``sq_dot`` / ``sq_sqnorm_f32``)."""
    return sq_dot(d64, d64, nnz) if d64 != NULL else sq_sqnorm_f32(d32, nnz)


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
