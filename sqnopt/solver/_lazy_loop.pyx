# cython: language_level=3
"""SAGA (and SVRG) with just-in-time sparse updates: the lazy table iterate for the driver.

SAGA (Defazio, Bach & Lacoste-Julien, NIPS 2014) with the identity direction steps along

    g_t = a_t + (1/|B|) sum_{i in B} (c_i(w_t) - tau_i) x_i + lam w_reg,
    a_t = (1/N) sum_i tau_i x_i,

where ``tau_i`` is the table's score derivative of sample ``i`` (set to ``c_i(w_t)`` at each
visit) and ``c_i(w) = g_i y_i loss'(y_i (x_i . w + b))`` for a margin loss. The step
``w_{t+1} = (1 - eps_t lam) w_t - eps_t g_t`` is dense through two terms only: the shrink and
the constant vector ``a``. A coordinate ``j`` that no row of the batch touches moves by

    w_j <- r_t w_j - eps_t a_j,    r_t = 1 - eps_t lam,

with ``a_j`` fixed until a batch row that holds ``j`` changes the table. Over ``k`` such steps
with a constant step this is ``w_j <- r^k w_j - eps a_j (1 - r^k) / (1 - r)``; for any steps
it is kept exact by a scaled representation and one running sum. Write ``w_reg = s v`` with
``s_{t+1} = r_t s_t``; then the untouched coordinates obey ``v_j <- v_j - (eps_t / s_{t+1}) a_j``,
so with ``C_t = sum_{u < t} eps_u / s_{u+1}`` and the value ``C^{(j)}`` of ``C`` at which
``v_j`` was last brought up to date,

    v_j(t) = v_j - (C_t - C^{(j)}) a_j.

A coordinate is brought up to date (O(1)) when a batch row reads it, before ``a_j`` changes,
and ``a`` changes only at coordinates of batch rows whose table entry changed -- at which
point they are current. An iteration therefore costs O(nnz of the batch) (the reads for the
margins, then the row updates), whatever the number of features: the gradient, the shrink,
the ``a`` term and the table update of the dense path in coefficient form.

Numerics. ``C_t = (1/lam)(1/s_t - 1)`` (from ``s = 1``, ``C = 0``, without a projection) grows
as ``s_t`` shrinks; the lazy difference
``(C_t - C^{(j)}) a_j`` loses about ``C_t u`` (``u`` the unit roundoff) in ``v``, i.e. about
``u |a_j| / lam`` in ``w`` -- the scale of ``w`` near the optimum, where ``lam w = -a``: the
relative rounding stays that of a dense step. When ``|s|`` leaves ``[1e-9, 1e9]`` (or a step
makes ``r_t s`` zero) every coordinate is brought up to date and the scale folded into ``v``
(``s = 1``, ``C = 0``; O(n), about once per ``log(1e9) / (eps lam)`` iterations).

``nu = ||w_reg||^2`` (the minibatch objective's regulariser, the Euclidean ball projection) is
tracked with ``p = w_reg . a_reg`` and ``q = ||a_reg||^2``: the dense part of a step gives
``nu <- r^2 nu - 2 r eps p + eps^2 q`` and ``p <- r p - eps q``; each updated entry adds its
exact change to the three (no cancellation near the optimum, where ``w ~ -a / lam``). They are
recomputed exactly at folds.

SVRG (Johnson & Zhang, NIPS 2013) has the same form with a frozen table: ``tau_i = c_i(w~)`` at
the snapshot ``w~`` and ``a`` the data part of ``grad F(w~)``, both fixed until the next
snapshot, which the estimator declares due (``cy_table_due``) and takes at the dense iterate
(``cy_table_fill``, one pass; the representation restarts from ``w`` against the new ``a``).
The second minibatch gradient ``s(w~, B)`` of the dense path is read from the table, so no
samples beyond the batch are counted between snapshots.

The iterates agree with the dense SAGA / SVRG path (same sampler draws, table, counters) up to
rounding. The representation persists across ``run`` calls; ``sync`` writes the dense ``w``
without changing it, so report points do not alter the iterates. The table and ``a`` are the
gradient estimator's (``score_table``: :class:`~sqnopt.gradients.SAGA`), updated in place, so
its state and the checkpoint stay those of the dense path; the table is filled at the first
step, as the estimator fills it at its first estimate. No averaging (the dense path runs
averaged SAGA). Divergence is reported (nothing applied) once a bound on ``||w_reg||`` after
the step reaches 1e150.
"""

cimport cython
import numpy as np

from sqnopt.checkpoint import CheckpointError, restore_array, state_value

from libc.math cimport NAN, fabs, isfinite, sqrt

from sqnopt._vec cimport SQNOPT_PREFETCH
from sqnopt.data._rows cimport CSRRows32, CSRRows64, RowData
from sqnopt.gradients._base cimport GradientKernel
from sqnopt.objectives._base cimport MarginObjectiveKernel
from sqnopt.projections._base cimport ProjectionKernel
from sqnopt.schedules._base cimport ScheduleKernel
from sqnopt.solver._iterate cimport (
    ITERATE_NONFINITE, ITERATE_NONFINITE_LOSS, ITERATE_STEPPED, IterateKernel,
)
from sqnopt.solver._loop cimport CompiledLoop, Counters
from sqnopt.solver._sampler cimport Sampler
from sqnopt.steps._base cimport StepKernel


# Fold the scale into v when |s| leaves [SCALE_MIN, SCALE_MAX].
cdef double SCALE_MIN = 1e-9
cdef double SCALE_MAX = 1e9
# Report divergence once ||w_reg|| could exceed this (so nu = ||w_reg||^2 stays finite).
cdef double NORM_MAX = 1e150
cdef enum:
    LOOKAHEAD = 2        # batches drawn ahead: 2 ahead row pointers and labels, 1 ahead rows
cdef Py_ssize_t PREFETCH_ROWS = 16


@cython.final
cdef inline void _catch_up(double* vc, Py_ssize_t j, double C, const double* a) noexcept nogil:
    """Bring coordinate ``j`` up to date at the running sum ``C``: ``v_j -= (C - C^{(j)}) a_j``,
    ``C^{(j)} = C`` (``vc`` interleaves ``v_j`` and ``C^{(j)}``; nothing to do when current)."""
    if vc[2 * j + 1] != C:
        vc[2 * j] -= (C - vc[2 * j + 1]) * a[j]
        vc[2 * j + 1] = C


cdef class LazyTableIterate(IterateKernel):
    """The iterate ``w = [s v, b]`` with the lazy SAGA coordinates (see the module docstring),
    bound to one margin objective and a gradient kernel that declares ``score_table``."""

    kind = "lazy_table"

    cdef RowData data
    cdef MarginObjectiveKernel obj
    cdef GradientKernel est
    cdef double[::1] w                 # the dense iterate: written by cy_sync
    # v_j = vc[2j] and C^{(j)} = vc[2j+1] (one cache line brings both)
    cdef double[::1] vc
    # per batch position: c_i, c_i - tau_i, tau_i before the visit, ||x_i||^2
    cdef double[::1] coef, diff, old, rsq
    cdef double lam
    cdef const Py_ssize_t* indptr      # CSR row pointers (prefetches; NULL for dense rows)
    cdef readonly double scale         # s
    cdef readonly double cum           # C
    cdef readonly double intercept     # b (0 without an intercept)
    cdef readonly double pdot          # p = w_reg . a_reg
    cdef readonly double qnorm         # q = ||a_reg||^2
    cdef readonly Py_ssize_t n_folds   # O(n) folds of the scale so far
    cdef bint has_intercept
    cdef Py_ssize_t nf, n_samples

    def __init__(self, MarginObjectiveKernel objective, GradientKernel gradient, double[::1] w):
        IterateKernel.__init__(self, objective.n_params, LOOKAHEAD)
        if objective.n_blocks != 1:
            raise ValueError("the lazy table iterate needs a single-block (binary margin) "
                             "objective")
        if not gradient.score_table or gradient.dim != objective.n_params:
            raise ValueError("the lazy table iterate needs a gradient kernel bound to this "
                             "objective that declares score_table")
        if w.shape[0] != self.n_params:
            raise ValueError(f"w has length {w.shape[0]}, expected {self.n_params}")
        self.obj = objective
        self.est = gradient
        self.lam = objective.lam
        self.data = objective.data
        self.nf = self.data.n_features
        self.n_samples = self.data.n_samples
        self.has_intercept = self.data.has_intercept
        self.w = w
        self.indptr = NULL
        if isinstance(self.data, CSRRows64) and self.data.nnz > 0:
            self.indptr = &(<CSRRows64> self.data).indptr[0]
        elif isinstance(self.data, CSRRows32) and self.data.nnz > 0:
            self.indptr = &(<CSRRows32> self.data).indptr[0]
        self.vc = np.zeros(2 * self.nf)
        self.coef = np.zeros(self.n_samples)       # a batch holds at most N samples
        self.diff = np.zeros(self.n_samples)
        self.old = np.zeros(self.n_samples)
        self.rsq = np.zeros(self.n_samples)
        self.n_folds = 0
        self.scale = 1.0
        self.cum = 0.0

    cdef int cy_first_order(self, const Py_ssize_t* batch, Py_ssize_t size,
                            const Py_ssize_t* const* ahead, const Py_ssize_t* ahead_sizes,
                            Py_ssize_t n_ahead, double eps, double radius, Py_ssize_t n_avg,
                            double* loss_out) noexcept nogil:
        """One SAGA iteration in lazy form (the module docstring and ``_iterate.pxd``)."""
        cdef Py_ssize_t t, i, p, j, nnz
        cdef double inv = 1.0 / size, invN = 1.0 / self.n_samples, lam = self.lam
        cdef double s = self.scale, C = self.cum, nu = self.sqnorm, pd = self.pdot
        cdef double q = self.qnorm, b = self.intercept
        cdef double total = 0.0, wsum = 0.0, dot, sq, x, yi, gi, dl, dsum, r, s_new, C_new, bound
        cdef double b_new
        cdef double step_w, wj, aj, delta, alpha, sc, shrink, inv_s
        cdef const double* d64
        cdef const float* d32
        cdef const int* ind
        cdef double* vc = &self.vc[0]
        cdef double* coef = &self.coef[0]
        cdef double* diff = &self.diff[0]
        cdef double* old = &self.old[0]
        cdef double* rsq = &self.rsq[0]
        cdef double* table = self.est.cy_table()
        cdef double* a = self.est.cy_table_average()
        cdef const double* y = self.data.y
        cdef const double* gw = self.data.grad_weight
        cdef bint frozen = self.est.table_frozen
        if table == NULL or a == NULL:
            loss_out[0] = NAN               # the estimator is not bound (the driver binds it)
            return ITERATE_NONFINITE_LOSS
        if n_ahead > 0 and self.indptr != NULL:
            self._prefetch_ahead(ahead, ahead_sizes, n_ahead, table)
        if self.est.cy_table_due():
            self.cy_sync(0)
            self.extra_samples += self.est.cy_table_fill(self.obj, &self.w[0])
            # the table (and a) were filled at w_t, as the dense path fills them at its first
            # estimate: restart the representation from the dense iterate against the new a
            self._restart()
            s = self.scale
            C = self.cum
            nu = self.sqnorm
            pd = self.pdot
            q = self.qnorm
            b = self.intercept
        # 1. margins at w_t (the rows' coordinates brought up to date), the minibatch loss and
        # the score derivatives c_i; ||x_i||^2 for the divergence bound
        for t in range(size):
            i = batch[t]
            if t + PREFETCH_ROWS < size:
                self.data.row_prefetch(batch[t + PREFETCH_ROWS])
            nnz = self.data.row_view(i, &d64, &d32, &ind)
            dot = 0.0
            sq = 0.0
            for p in range(nnz):
                j = ind[p] if ind != NULL else p
                x = d64[p] if d64 != NULL else <double> d32[p]
                _catch_up(vc, j, C, a)
                dot += x * vc[2 * j]
                sq += x * x
            rsq[t] = sq
            yi = y[i]
            gi = gw[i]
            wsum += gi
            total += gi * self.obj.loss_and_dloss_dmargin(yi * (s * dot + b), &dl)
            coef[t] = gi * yi * dl
        loss_out[0] = total * inv + 0.5 * lam * nu
        self.batch_loss = total
        self.batch_weight = wsum
        if not isfinite(loss_out[0]):
            return ITERATE_NONFINITE_LOSS
        # 2. the table's entries in batch order (a repeated sample changes it once, as in the
        # dense path), then a bound on ||w_reg|| after the step: nothing applied beyond it
        # (a frozen table -- SVRG's snapshot -- is only read)
        r = 1.0 - eps * lam
        bound = fabs(r) * sqrt(nu) + fabs(eps) * sqrt(q)
        dsum = 0.0
        for t in range(size):
            i = batch[t]
            diff[t] = coef[t] - table[i]
            if not frozen:
                old[t] = table[i]
                table[i] = coef[t]
            dsum += diff[t]
            bound += fabs(eps * inv * diff[t]) * sqrt(rsq[t])
        b_new = b - eps * (a[self.nf] + inv * dsum) if self.has_intercept else 0.0
        if not (bound < NORM_MAX and isfinite(r) and isfinite(b_new)):
            if not frozen:
                for t in range(size - 1, -1, -1):
                    table[batch[t]] = old[t]
            return ITERATE_NONFINITE
        # 3. the dense part of the step: w_reg <- r w_reg - eps a_reg, in s and C
        s_new = s * r
        shrink = r
        if s_new == 0.0 or fabs(s_new) < SCALE_MIN or fabs(s_new) > SCALE_MAX:
            self._fold(s_new)   # v <- s r v (every coordinate current), s = 1, C = 0: shrunk
            s_new = 1.0
            C = 0.0
            shrink = 1.0
            nu = self.sqnorm
            pd = self.pdot
            q = self.qnorm
        C_new = C + eps / s_new
        inv_s = 1.0 / s_new
        nu = shrink * shrink * nu - 2.0 * shrink * eps * pd + eps * eps * q
        pd = shrink * pd - eps * q
        # 4. the rows whose table entry changed: w += -eps/|B| diff_t x_i, a += diff_t/N x_i
        # (a frozen table: a stays), each coordinate brought up to date (with the old a_j) first
        for t in range(size):
            if diff[t] == 0.0:
                continue
            i = batch[t]
            step_w = -eps * inv * diff[t]
            nnz = self.data.row_view(i, &d64, &d32, &ind)
            for p in range(nnz):
                j = ind[p] if ind != NULL else p
                x = d64[p] if d64 != NULL else <double> d32[p]
                _catch_up(vc, j, C_new, a)
                wj = s_new * vc[2 * j]
                aj = a[j]
                delta = step_w * x
                alpha = 0.0 if frozen else diff[t] * invN * x
                nu += delta * (2.0 * wj + delta)
                pd += wj * alpha + delta * (aj + alpha)
                q += alpha * (2.0 * aj + alpha)
                vc[2 * j] += delta * inv_s
                a[j] = aj + alpha
        if self.has_intercept and not frozen:
            a[self.nf] += dsum * invN
        if nu < 0.0:
            nu = 0.0
        if q < 0.0:
            q = 0.0
        # 5. the projection onto {||w_reg|| <= radius}: a rescaling of s
        if radius > 0.0 and nu > radius * radius:
            sc = radius / sqrt(nu)
            s_new *= sc
            nu *= sc * sc
            pd *= sc
        self.scale = s_new
        self.cum = C_new
        self.sqnorm = nu
        self.pdot = pd
        self.qnorm = q
        self.intercept = b_new
        self.est.cy_table_visited(size)
        return ITERATE_STEPPED

    cdef inline void _prefetch_ahead(self, const Py_ssize_t* const* ahead,
                                     const Py_ssize_t* sizes, Py_ssize_t n_ahead,
                                     const double* table) noexcept nogil:
        """Cache hints for the first rows of the batches ahead: one iteration ahead the rows'
        lines, two ahead their pointers, labels, weights and table entries."""
        cdef Py_ssize_t t, m, i
        m = sizes[0] if sizes[0] < PREFETCH_ROWS else PREFETCH_ROWS
        for t in range(m):
            self.data.row_prefetch(ahead[0][t])
        if n_ahead >= 2:
            m = sizes[1] if sizes[1] < PREFETCH_ROWS else PREFETCH_ROWS
            for t in range(m):
                i = ahead[1][t]
                SQNOPT_PREFETCH(self.indptr + i)
                SQNOPT_PREFETCH(self.data.y + i)
                SQNOPT_PREFETCH(self.data.grad_weight + i)
                SQNOPT_PREFETCH(table + i)

    cdef void cy_sync(self, Py_ssize_t n_avg) noexcept nogil:
        """Write ``w = [s (v - (C - C^{(j)}) a), b]``; the representation is not changed."""
        cdef Py_ssize_t j
        cdef double s = self.scale, C = self.cum
        cdef double* vc = &self.vc[0]
        cdef const double* a = self.est.cy_table_average()
        if a == NULL:
            return
        for j in range(self.nf):
            self.w[j] = s * (vc[2 * j] - (C - vc[2 * j + 1]) * a[j])
        if self.has_intercept:
            self.w[self.nf] = self.intercept

    cdef void _fold(self, double s_new) noexcept nogil:
        """Every coordinate up to date, ``v <- s_new v``, ``s = 1``, ``C = 0`` (O(n)); ``nu``,
        ``p`` and ``q`` are recomputed (``p`` and ``nu`` at the folded iterate)."""
        cdef Py_ssize_t j
        cdef double C = self.cum, x, nu = 0.0, pd = 0.0, q = 0.0
        cdef double* vc = &self.vc[0]
        cdef const double* a = self.est.cy_table_average()
        for j in range(self.nf):
            x = s_new * (vc[2 * j] - (C - vc[2 * j + 1]) * a[j])
            vc[2 * j] = x
            vc[2 * j + 1] = 0.0
            nu += x * x
            pd += x * a[j]
            q += a[j] * a[j]
        self.scale = 1.0
        self.cum = 0.0
        self.sqnorm = nu
        self.pdot = pd
        self.qnorm = q
        self.n_folds += 1

    cdef void _restart(self) noexcept nogil:
        """The representation of the dense ``w``: ``v = w_reg``, ``s = 1``, ``C = 0`` (O(n))."""
        cdef Py_ssize_t j
        cdef double x, nu = 0.0, pd = 0.0, q = 0.0
        cdef double* vc = &self.vc[0]
        cdef const double* a = self.est.cy_table_average()
        for j in range(self.nf):
            x = self.w[j]
            vc[2 * j] = x
            vc[2 * j + 1] = 0.0
            nu += x * x
            if a != NULL:
                pd += x * a[j]
                q += a[j] * a[j]
        self.scale = 1.0
        self.cum = 0.0
        self.sqnorm = nu
        self.pdot = pd
        self.qnorm = q
        self.intercept = self.w[self.nf] if self.has_intercept else 0.0

    def reload(self, Py_ssize_t n_avg) -> None:
        """Rebuild the representation from ``w`` (``v = w_reg``, ``s = 1``, ``C = 0``; O(n))
        against the estimator's current table average."""
        with nogil:
            self._restart()

    def get_state(self) -> dict:
        """The representation: ``v`` with each coordinate's ``C^{(j)}``, ``s``, ``C``, ``b``,
        ``nu``, ``p``, ``q``, the fold count (copies; the table and ``a`` are the gradient
        estimator's state)."""
        return {"loop": "lazy_table", "nf": int(self.nf), "vc": np.array(self.vc),
                "scale": float(self.scale), "cum": float(self.cum),
                "intercept": float(self.intercept), "sqnorm": float(self.sqnorm),
                "pdot": float(self.pdot), "qnorm": float(self.qnorm),
                "n_folds": int(self.n_folds)}

    def check_state(self, state) -> None:
        """Raise :class:`~sqnopt.checkpoint.CheckpointError` unless ``state`` is a lazy table
        representation of this problem."""
        if state.get("loop") != "lazy_table":
            raise CheckpointError(f"the checkpoint is of the {state.get('loop')!r} loop, this "
                                  "solve runs the lazy SAGA loop: the solver's path, "
                                  "components or data storage differ")
        nf = state_value(state, "nf", int, self)
        if nf != self.nf:
            raise CheckpointError(f"LazyTableLoop: the checkpoint has {nf} features (field 'nf'), "
                                  f"this solve {self.nf}: it is of another problem")

    def set_state(self, state) -> None:
        """Restore what :meth:`get_state` returned."""
        self.check_state(state)
        values = {key: state_value(state, key, float, self)
                  for key in ("scale", "cum", "intercept", "pdot")}
        sqnorm = state_value(state, "sqnorm", float, self, lo=0.0)
        qnorm = state_value(state, "qnorm", float, self, lo=0.0)
        n_folds = state_value(state, "n_folds", int, self, lo=0)
        restore_array(self.vc, state, "vc", self)
        self.scale = values["scale"]
        self.cum = values["cum"]
        self.intercept = values["intercept"]
        self.sqnorm = sqnorm
        self.pdot = values["pdot"]
        self.qnorm = qnorm
        self.n_folds = n_folds


cdef class LazyTableLoop(CompiledLoop):
    """The driver (:class:`~sqnopt.solver._loop.CompiledLoop`) with the lazy SAGA iterate
    (:class:`LazyTableIterate`): SAGA steps of a margin objective in O(nnz of the batch).

    Built by :meth:`sqnopt.Solver.init_state` when :func:`lazy_loop_supported` holds (besides
    the conditions of the scaled loop: margin objective, identity direction, no line search, no
    projection or a Euclidean ball); the ``run`` contract of the driver. The representation
    always starts from ``w`` (a loop on new data: the estimator's table starts afresh, so the
    pending lazy terms of the old one would not apply).
    """

    def __init__(self, MarginObjectiveKernel objective, GradientKernel gradient,
                 ScheduleKernel schedule, StepKernel step, ProjectionKernel projection,
                 Sampler sampler, double[::1] w, Counters counters):
        if projection is not None and not projection.ball_radius > 0:
            raise TypeError("the lazy SAGA loop supports no projection or an L2 ball only, got "
                            f"{type(projection).__name__}")
        if projection is not None and projection.n_reg != objective.data.n_features:
            raise ValueError("the L2 ball must constrain exactly the feature weights")
        iterate = LazyTableIterate(objective, gradient, w)
        self.sched = schedule
        self.step = step
        self.sampler = sampler
        self.w = w
        self.w_avg = None
        self.counters = counters
        self.average = False
        self.avg_start = 0
        self._iterate_setup(objective, iterate, projection)
        self.est = gradient
        iterate.reload(counters.n_avg)

    @property
    def scale(self) -> float:
        """The scale ``s`` of ``w_reg = s v``."""
        return (<LazyTableIterate> self.iterate).scale

    @property
    def n_folds(self) -> int:
        """O(n) folds of the scale so far."""
        return (<LazyTableIterate> self.iterate).n_folds


def lazy_loop_supported(gradient, gradient_kernel, bint average):
    """Why the lazy SAGA loop cannot run with this gradient estimator, or ``""`` if it can
    (the other components are those the scaled loop accepts, see
    :func:`~sqnopt.solver._scaled_loop.scaled_loop_supported`). ``gradient`` is the component,
    ``gradient_kernel`` its kernel bound to the objective: it must be compiled and declare
    ``score_table`` (an estimate on a table of score derivatives it exposes: SAGA's, SVRG's);
    no averaging.
    """
    if not isinstance(gradient_kernel, GradientKernel) or not gradient_kernel.score_table:
        return (f"gradient {gradient.describe()} is neither the minibatch gradient nor a table "
                "estimate with a lazy sparse form (its kernel does not declare score_table)")
    if average:
        return "the lazy SAGA iterate keeps no running average"
    return ""


#: The lazy loop pays when a batch's stored entries are at most this share of the features: it
#: touches each entry of the batch rows twice with bookkeeping, the dense SAGA step every
#: coordinate a few times, so with large batches of long rows the dense step is cheaper (the
#: break-even is measured in docs/benchmarks.md).
LAZY_ENTRY_FRACTION = 1.0 / 16.0


def lazy_entries_pay(n_samples, n_features, nnz, batch):
    """Whether batches of ``batch`` rows of a sparse matrix (``n_samples`` x ``n_features``,
    ``nnz`` stored values) hold on average at most ``LAZY_ENTRY_FRACTION`` of the features'
    count of entries: where the lazy SAGA step beats the dense one (``bench/saga_lazy.py``)."""
    if n_samples == 0 or n_features == 0:
        return False
    return bool(batch * float(nnz) / n_samples <= LAZY_ENTRY_FRACTION * n_features)


def lazy_loop_pays(objective_kernel, schedule_kernel):
    """Whether the lazy SAGA loop is expected to beat the dense SAGA step on this data with this
    batch schedule (:func:`lazy_entries_pay` for the first batch). (``path="scaled"`` selects
    the lazy loop regardless.)"""
    data = objective_kernel.data
    return lazy_entries_pay(data.n_samples, data.n_features, data.nnz,
                            schedule_kernel.batch_size(1))

