# cython: language_level=3
"""AdaGrad's composite step just in time: the adaptive sparse iterate for the driver.

The composite form of diagonal AdaGrad (Duchi, Hazan & Singer, *Adaptive subgradient methods
for online learning and stochastic optimization*, JMLR 2011, Sec. 3, composite mirror descent
with ``phi(w) = (lam/2) ||w_reg||^2``; :class:`sqnopt.curvature.AdaGrad` with
``composite=True``) moves every coordinate ``j`` of the iterate by

    touched   (g_j != 0):  G_j += g_j^2,  w_j <- (s_j w_j - eta g_j) / (s_j + eta lam_j)
    untouched (g_j = 0):   w_j <- w_j s_j / (s_j + eta lam_j)

with ``g`` the minibatch gradient of the *loss* part, ``s_j = delta + sqrt(G_j)`` and
``lam_j = lam`` (0 on intercepts). An untouched step leaves ``G_j`` alone, so ``k`` of them in a
row with a constant step are one factor ``(s_j / (s_j + eta lam_j))^k``, in ``(0, 1]``: exact
and always stable. This representation keeps, per feature, the value of its coordinates as of
the iteration ``last_j`` it was last brought up to date, and applies the factor when a batch
row next reads the feature (``k = clock - last_j``) as ``exp(k L_j)``, with
``L_j = log(s_j / (s_j + eta lam_j)) = -log1p(eta lam_j / s_j)`` kept in the feature's record (it
changes only with ``G_j``, at a touch, and with the step). An iteration then costs O(stored
values of the batch) whatever the number of features:

1. the rows' coordinates brought up to date, and the scores ``x_i . w_k + b_k`` of each
   parameter block ``k`` at ``w_t``;
2. the batch's losses and score derivatives from those scores (the objective's
   ``cy_scores_loss``; ``c_ik = g_i d loss_i / d score_k``), the minibatch objective;
3. the loss gradient ``g_kj = (1/|B|) sum_i c_ik x_ij`` of every coordinate the batch rows
   hold (one row: entry by entry; more: summed first), the composite update of each, with the
   intercepts' own accumulators (unregularised: a plain AdaGrad step).

**The L1 term** (``l1 > 0`` on the kernel: AdaGrad's proximal step for the elastic net
``phi(w) = l1 ||w_reg||_1 + (lam/2) ||w_reg||^2``, Duchi, Hazan & Singer 2011, Sec. 3 eq. 4 and
Sec. 5.1) soft-thresholds ``z_j = s_j w_j - eta g_j`` at ``eta l1`` before the division by
``s_j + eta lam_j``. An untouched step maps ``|w_j|`` to ``max(a_j |w_j| - b_j, 0)`` with
``a_j = s_j / (s_j + eta lam_j)`` and ``b_j = eta l1 / (s_j + eta lam_j)``, keeping the sign;
``k`` of them in a row are again one closed form, because ``a |w| - b`` is affine and zero is
absorbing:

    lam > 0:  |w_j| <- max(a_j^k |w_j| - (l1 / lam) (1 - a_j^k), 0)
              (b / (1 - a) = l1 / lam; ``1 - a^k = -expm1(k L_j)``, exact for small ``k L_j``)
    lam = 0:  |w_j| <- max(|w_j| - k eta l1 / s_j, 0)

(the record keeps ``L_j`` when ``lam > 0`` and the per-step threshold ``eta l1 / s_j`` in its
place when ``lam = 0``, where ``L_j`` is 0). A coordinate that reaches zero stays an exact zero
until a row touches it, and costs nothing meanwhile (zeros are skipped). The reported minibatch
objective leaves the L1 term out (it is the smooth part's, the divergence monitor's estimate).

**FTRL-Proximal** (the kernel declares ``ftrl_proximal``: :class:`~sqnopt.curvature.AdaGradKernel`'s
FTRL-Proximal form, McMahan et al., KDD 2013): the state of a coordinate is its dual sum
``z_j`` and ``G_j`` (the kernel's), and its value after ``t`` steps is the closed form
``ftrl_value(z_j, delta + sqrt(G_j), t, l1, lam, eta)`` -- a coordinate no row touches keeps
its state, so there is nothing to catch up: each value a row reads is computed from the
kernel's arrays, and a step writes the touched coordinates' ``z_j`` and ``G_j``. The records
serve only to mark the features of a batch of several rows. The reported minibatch objective
is the batch's loss (the penalty left out), its progressive loss exact.

A row whose score derivatives are all zero (a hinge loss past its margin) contributes nothing
and its coordinates stay lazy. The accumulator ``G`` is the curvature kernel's (declared by
``adagrad_accumulator``: :class:`~sqnopt.curvature.AdaGradKernel` in composite form), updated in
place, so its state and the checkpoint are those of the dense path (the generic loop's
``cy_composite_step``), which this representation matches iterate by iterate up to rounding
(``k`` factors are one ``exp``).

**Objectives.** Parameters in ``K`` blocks of ``[x_i, 1]``-linear scores (a margin loss,
``K = 1``, or the multinomial softmax, capability ``dense_hessian``) whose kernel computes
losses from given scores (``score_losses``, ``n_scores = K``): per row the ``K`` scores, then
``K`` updates per stored value. Rows are CSR (int32 or int64 pointers, float32 or float64 values)
-- the just-in-time form -- or dense, where every coordinate is touched each step (the same
code; nothing stays lazy).

**The step.** The factor assumes one step ``eta`` between a coordinate's updates: when the step
rule's ``eps_t`` differs from the step in force, every coordinate is first brought up to date
with the old one (O(n); ``n_catchups`` counts them). A constant step pays this once; a
decaying step pays it every iteration -- use a constant step with this loop.

**Numerics.** Each update is checked before anything is written: a non-finite value of the
iterate or of the accumulator stops the run (``ITERATE_NONFINITE``, nothing applied; a
non-finite minibatch objective: ``ITERATE_NONFINITE_LOSS``). ``|w_{t+1,j} - w_{t,j}| <= eta``
on touched coordinates (``s_j >= |g_j|``), so finite steps keep the iterate finite.

**The reported objective.** The exact ``||w_reg||^2`` at ``w_t`` would need every pending
factor (O(n)); the representation keeps ``nu``, the squared norm of the stored values (each
change added exactly), an upper bound of ``||w_reg||^2`` (the pending factors are at most 1),
exact after a step change brings everything up to date. The minibatch objective it reports
(the divergence monitor's estimate, ``sqnorm``) is the batch's loss plus ``(lam/2) nu``: an upper
bound, which for ``lam`` of order ``1/N`` differs from ``f_B(w_t)`` in the last digits. The
batch's loss itself (the progressive validation loss, ``batch_loss``) is exact.

No projection and no averaging (the solver refuses them with the composite form).
The representation persists across ``run`` calls and through ``Solver.rebind`` (the clocks
continue on the next chunk); ``sync`` writes the dense ``w`` without changing it.
"""

cimport cython
import numpy as np

from sqnopt.checkpoint import CheckpointError, restore_array, state_value

from libc.math cimport INFINITY, NAN, exp, expm1, fabs, isfinite, isnan, log1p, sqrt

from sqnopt._parallel cimport run_tasks
from sqnopt._vec cimport SQNOPT_PREFETCH
from sqnopt.curvature._adagrad cimport AdaGradKernel, ftrl_value
from sqnopt.curvature._base cimport CurvatureKernel
from sqnopt.data._rows cimport CSRRows32, CSRRows64, RowData
from sqnopt.objectives._base cimport ObjectiveKernel
from sqnopt.schedules._base cimport ScheduleKernel
from sqnopt.solver._iterate cimport (
    ITERATE_NONFINITE, ITERATE_NONFINITE_LOSS, ITERATE_STEPPED, IterateKernel,
)
from sqnopt.solver._loop cimport CompiledLoop, Counters
from sqnopt.solver._sampler cimport Sampler
from sqnopt.steps._base cimport StepKernel


cdef enum:
    # Iterations ahead of each prefetch stage (LOOKAHEAD: the batches the driver draws ahead).
    STAGE1 = 4           # row pointers, labels, weights
    STAGE2 = 3           # the rows' lines
    STAGE3 = 2           # the per-feature records and accumulator entries the rows touch
    LOOKAHEAD = 4
cdef Py_ssize_t PREFETCH_ROWS = 16
#: a cache line: the records start on one (:func:`_zeros_on_lines`), so that a record of one
#: block (``S = 4`` doubles) never spans two and one prefetch brings in all of it
cdef size_t LINE_BYTES = 64
# Prefetch the records and accumulator entries only when they exceed this (an L2 cache).
cdef Py_ssize_t ENTRY_PREFETCH_BYTES = 1 << 20


cdef object _zeros_on_lines(Py_ssize_t n):
    """``n`` float64 zeros starting on a cache line. NumPy guarantees 16-byte alignment only
    (a large array starts 16 bytes into a page), and records of 4 doubles placed from such a
    start span two lines every other feature: the hint ahead fetched the record's first line
    while the step first reads its clock, on the second."""
    buf = np.zeros(n + LINE_BYTES // 8)
    cdef Py_ssize_t skip = <Py_ssize_t> ((-buf.ctypes.data) % LINE_BYTES) // 8
    return buf[skip:skip + n]


# log1p(u) by its series below this (the terms after u^4/4 are below 2e-17 u)
cdef double SERIES_MAX = 1e-4


cdef inline double _log_shrink(double s, double eta_lam) noexcept nogil:
    """``log(s / (s + eta lam_j)) = -log1p(eta lam_j / s)``: the log of one step's factor of a
    coordinate without loss gradient (0 where ``s + eta lam_j`` is 0: the composite update
    leaves such a coordinate as it is; -inf where ``s`` is 0 alone: one step zeroes it)."""
    cdef double u
    if not s + eta_lam > 0.0:
        return 0.0
    if s == 0.0:
        return -INFINITY
    u = eta_lam / s
    if u < SERIES_MAX:
        return -(u - u * u * (0.5 - u * (1.0 / 3.0 - 0.25 * u)))
    return -log1p(u)


# exp(x) by its Taylor polynomial above this (x <= 0): the first term left out, x^5 / 120, is
# below 1e-17, under half an ulp of the result
cdef double EXP_SERIES_MIN = -1e-3


cdef inline double _factor(double x) noexcept nogil:
    """``exp(x)`` for ``x <= 0``, the pending factor of a lazy coordinate. With ``lam`` of
    order ``1/N`` most factors are within 1e-3 of 1: there the degree-4 Taylor polynomial is
    exact to rounding and costs a few multiplications instead of a libm call, paid once per
    stored value a step reads."""
    if x > EXP_SERIES_MIN:
        return 1.0 + x * (1.0 + x * (0.5 + x * (1.0 / 6.0 + x * (1.0 / 24.0))))
    return exp(x)


# the fixed blocks of features a mix splits into (``AdaptiveIterate.mix``)
cdef Py_ssize_t MIX_BLOCKS = 16


cdef struct _MixJob:
    void* a                 # the AdaptiveIterate mixed into (borrowed) ...
    void* b                 # ... and the other one
    double* ga
    double* gb
    double* wa
    double* wb
    double* nu              # per block: its features' sum of squared values
    Py_ssize_t n_blocks


@cython.final
cdef class AdaptiveIterate(IterateKernel):
    """The iterate of :mod:`sqnopt.solver._adaptive_loop`: per feature its ``K`` coordinates
    as of its clock, the ``K`` intercepts, the step clock; bound to one objective and the
    AdaGrad kernel whose accumulator it updates."""

    kind = "adaptive"

    cdef RowData data
    cdef ObjectiveKernel obj
    cdef CurvatureKernel curv
    cdef double[::1] w                 # the dense iterate: written by cy_sync
    # per feature j, a record of S = 2 K + 2 doubles: its values v_{k,j}, the logs of their
    # factors L_{k,j} = log(s_{k,j} / (s_{k,j} + eta lam)) (k < K), last_j and a mark, 1 once a
    # step has written the record since the last ``mix`` (records of K = 1 are 32 bytes from a
    # start on a cache line, _zeros_on_lines: never across one)
    cdef double[::1] rec
    cdef double[::1] bias              # b_k (0 without intercepts)
    cdef double[::1] scores, coef      # per batch position, K each (grown to the batch)
    cdef double[::1] gacc              # batches of more than one row: g_{k,j} at gacc[j K + k]
    cdef Py_ssize_t[::1] touched       # ... and the features they touch
    cdef double[::1] newv, newacc, newl  # new values, accumulators and factors: written once
                                         # all are known finite
    cdef readonly double clock         # steps applied since the representation was built
    cdef readonly double eta           # the step of the pending factors (NaN: none pending)
    cdef public double step_scale      # the step rule's eps_t is multiplied by it (1; the
                                       # shards of a mixed chunk: their number, ``mix``)
    cdef readonly Py_ssize_t n_catchups    # O(n) catch-ups after a change of the step
    cdef readonly Py_ssize_t n_blocks
    cdef double lam, delta
    cdef double l1, l1_over_lam         # the L1 weight of the proximal form (0: none), l1 / lam
    cdef AdaGradKernel ada             # the FTRL-Proximal kernel (None: the composite form)
    cdef bint ftrl
    cdef Py_ssize_t K, S, nf, dim
    cdef bint has_intercept, prefetch_entries
    cdef bint moved                    # the records went to the iterate that adopted them
    cdef const Py_ssize_t* indptr      # CSR storage for the prefetches (NULL for dense rows)
    cdef const int* xind

    def __init__(self, ObjectiveKernel objective, CurvatureKernel curvature, double[::1] w):
        IterateKernel.__init__(self, objective.n_params, LOOKAHEAD)
        why = _objective_unsupported(objective)
        if why:
            raise ValueError(f"the adaptive iterate cannot run this objective: {why}")
        if not (curvature.composite_step and curvature.adagrad_accumulator):
            raise ValueError("the adaptive iterate needs a curvature kernel that declares "
                             "composite_step and adagrad_accumulator (AdaGrad(composite=True))")
        if curvature.dim != objective.n_params:
            raise ValueError(f"curvature kernel has dim {curvature.dim}, expected "
                             f"{objective.n_params}")
        if w.shape[0] != self.n_params:
            raise ValueError(f"w has length {w.shape[0]}, expected {self.n_params}")
        delta = float(getattr(curvature, "delta"))
        lam = float(getattr(curvature, "lam"))
        if lam != objective.lam:
            raise ValueError(f"the AdaGrad kernel was built for lam={lam}, the objective has "
                             f"lam={objective.lam}")
        self.obj = objective
        self.curv = curvature
        self.data = objective.data
        self.lam = objective.lam
        self.delta = delta
        self.l1 = float(getattr(curvature, "l1", 0.0))
        self.ftrl = bool(getattr(curvature, "ftrl_proximal", False))
        self.ada = None
        if self.ftrl:
            if not isinstance(curvature, AdaGradKernel):
                raise ValueError("the adaptive iterate runs the FTRL-Proximal form of the "
                                 "compiled AdaGrad kernel only")
            self.ada = <AdaGradKernel> curvature
        self.l1_over_lam = self.l1 / self.lam if self.lam > 0.0 else 0.0
        self.K = objective.n_blocks
        self.n_blocks = self.K
        self.S = 2 * self.K + 2
        self.nf = self.data.n_features
        self.dim = self.data.dim
        self.has_intercept = self.data.has_intercept
        self.w = w
        self.indptr = NULL
        self.xind = NULL
        if isinstance(self.data, CSRRows64) and self.data.nnz > 0:
            self.indptr = &(<CSRRows64> self.data).indptr[0]
            self.xind = &(<CSRRows64> self.data).indices[0]
        elif isinstance(self.data, CSRRows32) and self.data.nnz > 0:
            self.indptr = &(<CSRRows32> self.data).indptr[0]
            self.xind = &(<CSRRows32> self.data).indices[0]
        self.prefetch_entries = (self.nf * (2 * self.K + 2 + self.K)) * 8 > ENTRY_PREFETCH_BYTES
        cdef Py_ssize_t n_samples = self.data.n_samples
        # the records are made by ``reload`` or taken over by ``adopt`` (the driver calls one);
        # the scratch below is sized for the first batch and grown to the batches met (a
        # stream rebinds a fresh iterate per chunk: per-feature scratch would be allocated,
        # and its pages faulted in, for every chunk)
        self.rec = None
        self.bias = np.zeros(self.K)
        # sized for the batches met so far (grown on the first larger one): a batch holds at
        # most N samples, but a stream's per-example steps need K doubles, not N K
        self.scores = np.zeros(self.K)
        self.coef = np.zeros(self.K)
        self.gacc = np.zeros(1)             # per feature: made at the first batch of 2 rows
        self.touched = np.zeros(1, dtype=np.intp)
        self.newv = np.zeros(self.K)
        self.newacc = np.zeros(self.K)
        self.newl = np.zeros(self.K)
        self.clock = 0.0
        self.eta = NAN
        self.n_catchups = 0
        self.step_scale = 1.0

    cdef inline double _lazy_coef(self, double s, double eps) noexcept nogil:
        """What a record keeps of a coordinate with ``s = delta + sqrt(G_j)`` under the step
        ``eps``: ``L_j`` (``_log_shrink``), or with an L1 term and ``lam = 0`` the per-step
        threshold ``eps l1 / s`` (0 where ``s`` is 0: the composite step leaves such a
        coordinate as it is)."""
        if self.l1 > 0.0 and self.lam == 0.0:
            return eps * self.l1 / s if s > 0.0 else 0.0
        return _log_shrink(s, eps * self.lam)

    cdef inline double _pending(self, double v, double steps, double c) noexcept nogil:
        """The value ``v`` after ``steps`` untouched steps of a coordinate whose record keeps
        ``c`` (the module docstring: a factor, or with an L1 term the closed-form shrinkage
        to an exact zero)."""
        cdef double m
        if v == 0.0 or steps <= 0.0:
            return v
        if self.l1 == 0.0:
            return v * _factor(steps * c) if c != 0.0 else v
        if self.lam == 0.0:
            m = fabs(v) - steps * c
        elif c != 0.0:
            m = fabs(v) * _factor(steps * c) + self.l1_over_lam * expm1(steps * c)
        else:
            return v
        if not m > 0.0:
            return 0.0
        return m if v > 0.0 else -m

    cdef inline void _catch_up(self, double* r, double clock, double* nu) noexcept nogil:
        """Bring the feature of record ``r`` up to date: its ``K`` coordinates times their
        pending factors ``exp((clock - last) L)`` (with an L1 term: their pending shrinkage,
        ``_pending``), its clock to ``clock``; ``nu`` takes the change."""
        cdef Py_ssize_t k, K = self.K
        cdef double v, vn, steps = clock - r[2 * K]
        if steps <= 0.0:
            return
        if self.l1 > 0.0:
            for k in range(K):
                v = r[k]
                if v != 0.0:
                    vn = self._pending(v, steps, r[K + k])
                    nu[0] += vn * vn - v * v
                    r[k] = vn
            r[2 * K] = clock
            return
        for k in range(K):
            v = r[k]
            if v != 0.0 and r[K + k] != 0.0:
                vn = v * _factor(steps * r[K + k])
                nu[0] += vn * vn - v * v
                r[k] = vn
        r[2 * K] = clock

    cdef void _new_step(self, double eps) noexcept nogil:
        """The step changes to ``eps``: every feature up to date under the old one, every
        factor for the new one (O(n)); ``nu`` recomputed exactly (nothing pending any more)."""
        cdef Py_ssize_t j, k, K = self.K
        cdef double nu = 0.0, scratch = 0.0
        cdef double* r
        cdef const double* G = self.curv.cy_accumulator()
        for j in range(self.nf):
            r = &self.rec[j * self.S]
            if not isnan(self.eta):
                self._catch_up(r, self.clock, &scratch)
            r[2 * K] = self.clock
            for k in range(K):
                r[K + k] = self._lazy_coef(self.delta + sqrt(G[k * self.dim + j]), eps)
                nu += r[k] * r[k]
        self.sqnorm = nu
        self.eta = eps
        self.n_catchups += 1

    cdef int cy_first_order(self, const Py_ssize_t* batch, Py_ssize_t size,
                            const Py_ssize_t* const* ahead, const Py_ssize_t* ahead_sizes,
                            Py_ssize_t n_ahead, double eps, double radius, Py_ssize_t n_avg,
                            double* loss_out) noexcept nogil:
        """One composite AdaGrad iteration in just-in-time form (the module docstring and
        ``_iterate.pxd``; no projection or average: ``radius`` and ``n_avg`` are ignored, the
        solver rules them out)."""
        cdef Py_ssize_t t, i, p, j, k, q, nnz, n_touched, K = self.K, S = self.S
        cdef Py_ssize_t dim = self.dim, nf = self.nf
        cdef double inv = 1.0 / size, lam = self.lam, delta = self.delta
        cdef double total, wsum = 0.0, x, g, acc, sc, den, vo, vn, dnu = 0.0, nu, eta_lam, z
        cdef double thr = eps * self.l1
        cdef double clock = self.clock
        cdef bint ok = True, valid = eps >= 0.0 and isfinite(eps)
        cdef const double* d64
        cdef const float* d32
        cdef const int* ind
        cdef double* r
        cdef double* rec = &self.rec[0]
        cdef double* bias = &self.bias[0]
        cdef double* scores
        cdef double* coef
        cdef double* gacc
        cdef double* newv
        cdef double* newacc
        cdef double* newl
        cdef Py_ssize_t* touched
        cdef Py_ssize_t stored = 0
        cdef const double* gw = self.data.grad_weight
        cdef double* G = self.curv.cy_accumulator()
        if G == NULL or self.moved:     # (a moved iterate's loop reloads before it runs)
            loss_out[0] = NAN
            return ITERATE_NONFINITE_LOSS
        if self.step_scale != 1.0:
            eps = eps * self.step_scale
            valid = eps >= 0.0 and isfinite(eps)
            thr = eps * self.l1
        if self.ftrl:
            return self._ftrl_first_order(batch, size, ahead, ahead_sizes, n_ahead, eps,
                                          loss_out)
        if size * K > self.scores.shape[0]:
            with gil:
                self._grow(size)
            if size * K > self.scores.shape[0]:     # no memory for it: nothing applied
                loss_out[0] = NAN
                return ITERATE_NONFINITE_LOSS
        scores = &self.scores[0]
        coef = &self.coef[0]
        if n_ahead > 0 and self.indptr != NULL:
            self._prefetch_ahead(ahead, ahead_sizes, n_ahead, G)
        # the pending factors assume one step: on a change, everything up to date first
        if valid and eps != self.eta:
            self._new_step(eps)
        eta_lam = self.eta * lam
        nu = self.sqnorm
        # 1. the rows' coordinates up to date, the scores at w_t
        for t in range(size):
            i = batch[t]
            if t + PREFETCH_ROWS < size:
                self.data.row_prefetch(batch[t + PREFETCH_ROWS])
            for k in range(K):
                scores[t * K + k] = bias[k]
            nnz = self.data.row_view(i, &d64, &d32, &ind)
            stored += nnz
            if K == 1:
                acc = 0.0
                for p in range(nnz):
                    j = ind[p] if ind != NULL else p
                    x = d64[p] if d64 != NULL else <double> d32[p]
                    r = rec + j * S
                    if r[2] != clock:
                        self._catch_up(r, clock, &nu)
                    acc += x * r[0]
                scores[t] += acc
            else:
                for p in range(nnz):
                    j = ind[p] if ind != NULL else p
                    x = d64[p] if d64 != NULL else <double> d32[p]
                    r = rec + j * S
                    if r[2 * K] != clock:
                        self._catch_up(r, clock, &nu)
                    for k in range(K):
                        scores[t * K + k] += x * r[k]
            wsum += gw[i]
        # 2. the losses and score derivatives, the minibatch objective
        total = self.obj.cy_scores_loss(batch, size, scores, coef)
        if nu < 0.0:
            nu = 0.0
        self.sqnorm = nu
        self.batch_loss = total
        self.batch_weight = wsum
        loss_out[0] = total * inv + 0.5 * lam * nu
        if not isfinite(loss_out[0]):
            return ITERATE_NONFINITE_LOSS
        if not valid:
            return ITERATE_NONFINITE
        # room for the new values of the coordinates the batch touches (and, for several rows,
        # the per-feature gradient sums)
        if size > 1 and stored > nf:
            stored = nf             # several rows: each touched feature once
        if (stored * K + K > self.newv.shape[0]
                or (size > 1 and self.gacc.shape[0] < nf * K)):
            with gil:
                self._grow_scratch(stored * K + K, size > 1)
            if (stored * K + K > self.newv.shape[0]
                    or (size > 1 and self.gacc.shape[0] < nf * K)):
                loss_out[0] = NAN   # no memory for it: nothing applied
                return ITERATE_NONFINITE_LOSS
        gacc = &self.gacc[0]
        newv = &self.newv[0]
        newacc = &self.newacc[0]
        newl = &self.newl[0]
        touched = &self.touched[0]
        # 3. the loss gradient of the touched coordinates and their composite update, into
        # newv / newacc (q: their order), checked, then written
        q = 0
        if size == 1:
            n_touched = 0
            for k in range(K):
                coef[k] *= inv
                if coef[k] != 0.0:
                    n_touched = 1
            if n_touched:
                nnz = self.data.row_view(batch[0], &d64, &d32, &ind)
                for p in range(nnz):
                    j = ind[p] if ind != NULL else p
                    x = d64[p] if d64 != NULL else <double> d32[p]
                    r = rec + j * S
                    for k in range(K):
                        g = coef[k] * x
                        acc = G[k * dim + j] + g * g
                        sc = delta + sqrt(acc)
                        den = sc + eta_lam
                        vo = r[k]
                        if not den > 0.0:
                            vn = vo
                        elif thr == 0.0:
                            vn = (sc * vo - eps * g) / den
                        else:   # the proximal step (as below)
                            z = sc * vo - eps * g
                            vn = ((z - thr) / den if z > thr else
                                  (z + thr) / den if z < -thr else 0.0)
                        ok = ok and isfinite(vn) and isfinite(acc)
                        dnu += vn * vn - vo * vo
                        newv[q] = vn
                        newacc[q] = acc
                        newl[q] = self._lazy_coef(sc, eps)
                        q += 1
        else:
            # the gradient summed over the rows first (each touched feature once, marked by
            # its clock: clock + 1 = "in this step's list"; every batch row is current)
            n_touched = 0
            for t in range(size):
                i = batch[t]
                for k in range(K):
                    coef[t * K + k] *= inv
                nnz = self.data.row_view(i, &d64, &d32, &ind)
                for k in range(K):
                    if coef[t * K + k] != 0.0:
                        break
                else:
                    continue
                for p in range(nnz):
                    j = ind[p] if ind != NULL else p
                    x = d64[p] if d64 != NULL else <double> d32[p]
                    r = rec + j * S
                    if r[2 * K] != clock + 1.0:
                        r[2 * K] = clock + 1.0
                        touched[n_touched] = j
                        n_touched += 1
                        for k in range(K):
                            gacc[j * K + k] = 0.0
                    for k in range(K):
                        gacc[j * K + k] += coef[t * K + k] * x
            for p in range(n_touched):
                j = touched[p]
                r = rec + j * S
                for k in range(K):
                    g = gacc[j * K + k]
                    acc = G[k * dim + j] + g * g
                    sc = delta + sqrt(acc)
                    den = sc + eta_lam
                    vo = r[k]
                    if not den > 0.0:
                        vn = vo
                    elif thr == 0.0:
                        vn = (sc * vo - eps * g) / den
                    else:   # the proximal step: soft thresholding at eps l1, exact zeros
                        z = sc * vo - eps * g
                        vn = ((z - thr) / den if z > thr else
                              (z + thr) / den if z < -thr else 0.0)
                    ok = ok and isfinite(vn) and isfinite(acc)
                    dnu += vn * vn - vo * vo
                    newv[q] = vn
                    newacc[q] = acc
                    newl[q] = self._lazy_coef(sc, eps)
                    q += 1
        # the intercepts: a plain AdaGrad step on their own accumulators (lam_j = 0)
        if self.has_intercept:
            for k in range(K):
                g = 0.0
                for t in range(size):
                    g += coef[t * K + k]
                acc = G[k * dim + nf] + g * g
                sc = delta + sqrt(acc)
                den = sc + 0.0
                vn = (sc * bias[k] - eps * g) / den if den > 0.0 else bias[k]
                ok = ok and isfinite(vn) and isfinite(acc)
                newv[q + k] = vn
                newacc[q + k] = acc
        nu += dnu
        if not (ok and isfinite(nu)):
            if size > 1:
                for p in range(n_touched):
                    rec[touched[p] * S + 2 * K] = clock
            return ITERATE_NONFINITE
        # written: the values, the accumulator, the clocks (touched: current after this step)
        q = 0
        if size == 1:
            if n_touched:
                nnz = self.data.row_view(batch[0], &d64, &d32, &ind)
                for p in range(nnz):
                    j = ind[p] if ind != NULL else p
                    r = rec + j * S
                    for k in range(K):
                        r[k] = newv[q]
                        r[K + k] = newl[q]
                        G[k * dim + j] = newacc[q]
                        q += 1
                    r[2 * K] = clock + 1.0
                    r[2 * K + 1] = 1.0      # written since the last mix (``mix``)
        else:
            for p in range(n_touched):
                j = touched[p]
                r = rec + j * S
                for k in range(K):
                    r[k] = newv[q]
                    r[K + k] = newl[q]
                    G[k * dim + j] = newacc[q]
                    q += 1
                r[2 * K + 1] = 1.0
        if self.has_intercept:
            for k in range(K):
                bias[k] = newv[q + k]
                G[k * dim + nf] = newacc[q + k]
        self.sqnorm = nu if nu > 0.0 else 0.0
        self.clock = clock + 1.0
        return ITERATE_STEPPED

    cdef inline double _ftrl_w(self, const double* z, const double* G, Py_ssize_t i,
                               double t, double eps, bint reg) noexcept nogil:
        """The FTRL-Proximal value of parameter ``i`` after ``t`` steps (``reg``: penalised)."""
        return ftrl_value(z[i], self.delta + sqrt(G[i]), t, self.l1 if reg else 0.0,
                          self.lam if reg else 0.0, eps)

    cdef int _ftrl_first_order(self, const Py_ssize_t* batch, Py_ssize_t size,
                               const Py_ssize_t* const* ahead, const Py_ssize_t* ahead_sizes,
                               Py_ssize_t n_ahead, double eps, double* loss_out) noexcept nogil:
        """One FTRL-Proximal step in O(stored values of the batch) (module docstring): the
        values the rows read from ``(z, G, t)``, the losses, then the touched coordinates'
        ``z`` and ``G`` -- checked before anything is written, in the arithmetic of the
        kernel's dense step."""
        cdef Py_ssize_t t_, i, p, j, k, q, nnz, n_touched = 0, K = self.K, S = self.S
        cdef Py_ssize_t dim = self.dim, nf = self.nf, stored = 0, idx
        cdef double inv = 1.0 / size, total, wsum = 0.0, x, g, acc, so, sn, zn, wv, acc_s
        cdef double t0 = self.ada.ftrl_t, t1 = t0 + 1.0, delta = self.delta
        cdef double clock = self.clock
        cdef bint ok = True
        cdef const double* d64
        cdef const float* d32
        cdef const int* ind
        cdef double* r
        cdef double* rec = &self.rec[0]
        cdef double* scores
        cdef double* coef
        cdef double* gacc
        cdef double* newv
        cdef double* newacc
        cdef Py_ssize_t* touched
        cdef double* G = self.curv.cy_accumulator()
        cdef double* z = &self.ada._z[0]
        cdef const double* gw = self.data.grad_weight
        if size * K > self.scores.shape[0]:
            with gil:
                self._grow(size)
            if size * K > self.scores.shape[0]:
                loss_out[0] = NAN
                return ITERATE_NONFINITE_LOSS
        scores = &self.scores[0]
        coef = &self.coef[0]
        if n_ahead > 0 and self.indptr != NULL:
            self._prefetch_ahead(ahead, ahead_sizes, n_ahead, G)
        if not (eps > 0.0 and isfinite(eps)):
            loss_out[0] = NAN
            return ITERATE_NONFINITE
        if t0 == 0.0:       # the first step: the sums centred at the starting point
            for i in range(self.n_params):
                z[i] = -((delta + sqrt(G[i])) / eps) * self.w[i]
        # 1. the scores at w_t, every value read from (z, G, t)
        for t_ in range(size):
            i = batch[t_]
            for k in range(K):
                scores[t_ * K + k] = (self._ftrl_w(z, G, k * dim + nf, t0, eps, False)
                                      if self.has_intercept else 0.0)
            nnz = self.data.row_view(i, &d64, &d32, &ind)
            stored += nnz
            for p in range(nnz):
                j = ind[p] if ind != NULL else p
                x = d64[p] if d64 != NULL else <double> d32[p]
                for k in range(K):
                    scores[t_ * K + k] += x * self._ftrl_w(z, G, k * dim + j, t0, eps, True)
            wsum += gw[i]
        # 2. the losses and score derivatives
        total = self.obj.cy_scores_loss(batch, size, scores, coef)
        self.sqnorm = 0.0
        self.batch_loss = total
        self.batch_weight = wsum
        loss_out[0] = total * inv
        if not isfinite(loss_out[0]):
            return ITERATE_NONFINITE_LOSS
        if size > 1 and stored > nf:
            stored = nf
        if (stored * K + K > self.newv.shape[0]
                or (size > 1 and self.gacc.shape[0] < nf * K)):
            with gil:
                self._grow_scratch(stored * K + K, size > 1)
            if (stored * K + K > self.newv.shape[0]
                    or (size > 1 and self.gacc.shape[0] < nf * K)):
                loss_out[0] = NAN
                return ITERATE_NONFINITE_LOSS
        gacc = &self.gacc[0]
        newv = &self.newv[0]
        newacc = &self.newacc[0]
        touched = &self.touched[0]
        # 3. the loss gradient of the touched coordinates: per feature (several rows summed
        # first, each feature once: marked by its record's clock + 1)
        for t_ in range(size):
            for k in range(K):
                coef[t_ * K + k] *= inv
        if size == 1:       # one row: its entries in order (d64 / d32 / ind stay on it)
            n_touched = self.data.row_view(batch[0], &d64, &d32, &ind)
        else:
            for t_ in range(size):
                i = batch[t_]
                nnz = self.data.row_view(i, &d64, &d32, &ind)
                for p in range(nnz):
                    j = ind[p] if ind != NULL else p
                    x = d64[p] if d64 != NULL else <double> d32[p]
                    r = rec + j * S
                    if r[2 * K] != clock + 1.0:
                        r[2 * K] = clock + 1.0
                        touched[n_touched] = j
                        n_touched += 1
                        for k in range(K):
                            gacc[j * K + k] = 0.0
                    for k in range(K):
                        gacc[j * K + k] += coef[t_ * K + k] * x
        q = 0
        for p in range(n_touched):
            if size == 1:
                j = ind[p] if ind != NULL else p
                x = d64[p] if d64 != NULL else <double> d32[p]
            else:
                j = touched[p]
            for k in range(K):
                g = coef[k] * x if size == 1 else gacc[j * K + k]
                idx = k * dim + j
                wv = self._ftrl_w(z, G, idx, t0, eps, True)
                acc = G[idx] + g * g
                so = delta + sqrt(G[idx])
                sn = delta + sqrt(acc)
                zn = z[idx] + g - (sn - so) / eps * wv
                ok = ok and isfinite(zn) and isfinite(acc) and isfinite(
                    ftrl_value(zn, sn, t1, self.l1, self.lam, eps))
                newv[q] = zn
                newacc[q] = acc
                q += 1
        if self.has_intercept:      # unpenalised
            for k in range(K):
                g = 0.0
                for t_ in range(size):
                    g += coef[t_ * K + k]
                idx = k * dim + nf
                wv = self._ftrl_w(z, G, idx, t0, eps, False)
                acc = G[idx] + g * g
                so = delta + sqrt(G[idx])
                sn = delta + sqrt(acc)
                zn = z[idx] + g - (sn - so) / eps * wv
                ok = ok and isfinite(zn) and isfinite(acc) and isfinite(
                    ftrl_value(zn, sn, t1, 0.0, 0.0, eps))
                newv[q + k] = zn
                newacc[q + k] = acc
        if not ok:
            if size > 1:
                for p in range(n_touched):
                    rec[touched[p] * S + 2 * K] = clock
            return ITERATE_NONFINITE
        q = 0
        for p in range(n_touched):
            if size == 1:
                j = ind[p] if ind != NULL else p
            else:
                j = touched[p]
                rec[j * S + 2 * K] = clock + 1.0
            for k in range(K):
                z[k * dim + j] = newv[q]
                G[k * dim + j] = newacc[q]
                q += 1
        if self.has_intercept:
            for k in range(K):
                z[k * dim + nf] = newv[q + k]
                G[k * dim + nf] = newacc[q + k]
        self.ada.ftrl_t = t1
        self.ada.ftrl_eta = eps
        self.eta = eps
        self.clock = clock + 1.0
        return ITERATE_STEPPED

    cdef void _grow_scratch(self, Py_ssize_t entries, bint per_feature):
        """Room for ``entries`` new values (at least twice the last room, up to one per
        parameter) and, with ``per_feature``, the per-feature gradient sums of batches of
        several rows. Leaves the room as it was when there is no memory for it."""
        cdef Py_ssize_t n = max(entries, min(2 * self.newv.shape[0],
                                             self.nf * self.K + self.K))
        try:
            if entries > self.newv.shape[0]:
                newv, newacc, newl = np.zeros(n), np.zeros(n), np.zeros(n)
                self.newv, self.newacc, self.newl = newv, newacc, newl
            if per_feature and self.gacc.shape[0] < self.nf * self.K:
                gacc = np.zeros(max(self.nf * self.K, 1))
                touched = np.zeros(max(self.nf, 1), dtype=np.intp)
                self.gacc, self.touched = gacc, touched
        except MemoryError:
            pass

    cdef void _grow(self, Py_ssize_t size):
        """Room for the scores and score derivatives of ``size`` samples (at least twice the
        last room, at most ``N``)."""
        cdef Py_ssize_t rows = min(max(size, 2 * self.scores.shape[0] // self.K),
                                   max(size, self.data.n_samples))
        self.scores = np.zeros(rows * self.K)
        self.coef = np.zeros(rows * self.K)

    cdef inline void _prefetch_ahead(self, const Py_ssize_t* const* ahead,
                                     const Py_ssize_t* sizes, Py_ssize_t n_ahead,
                                     const double* G) noexcept nogil:
        """Cache hints for the first rows of the batches ahead: ``STAGE3`` iteration ahead the
        records and accumulator entries the rows touch (when they exceed the cache), ``STAGE2``
        ahead the rows' lines, ``STAGE1`` ahead their pointers, labels and weights."""
        cdef Py_ssize_t t, m, i, p, k, stop
        cdef double* r
        if n_ahead >= STAGE3 and self.prefetch_entries:
            m = sizes[STAGE3 - 1] if sizes[STAGE3 - 1] < PREFETCH_ROWS else PREFETCH_ROWS
            for t in range(m):
                i = ahead[STAGE3 - 1][t]
                stop = self.indptr[i + 1]
                for p in range(self.indptr[i], stop):
                    r = &self.rec[self.xind[p] * self.S]
                    SQNOPT_PREFETCH(r)
                    if ((<size_t> r) ^ (<size_t> (r + self.S - 1))) >= LINE_BYTES:
                        SQNOPT_PREFETCH(r + self.S - 1)     # a record across two lines
                    for k in range(self.K):
                        SQNOPT_PREFETCH(G + k * self.dim + self.xind[p])
        if n_ahead >= STAGE2:
            m = sizes[STAGE2 - 1] if sizes[STAGE2 - 1] < PREFETCH_ROWS else PREFETCH_ROWS
            for t in range(m):
                self.data.row_prefetch(ahead[STAGE2 - 1][t])
        if n_ahead >= STAGE1:
            m = sizes[STAGE1 - 1] if sizes[STAGE1 - 1] < PREFETCH_ROWS else PREFETCH_ROWS
            for t in range(m):
                i = ahead[STAGE1 - 1][t]
                SQNOPT_PREFETCH(self.indptr + i)
                SQNOPT_PREFETCH(self.data.y + i)
                SQNOPT_PREFETCH(self.data.grad_weight + i)

    cdef void cy_sync(self, Py_ssize_t n_avg) noexcept nogil:
        """Write ``w``: every coordinate times its pending factor, the intercepts; the
        representation is not changed."""
        cdef Py_ssize_t j, k, K = self.K
        cdef double steps, v
        cdef const double* r
        if self.moved:      # the iterate that adopted the records writes w
            return
        if self.ftrl:
            self._ftrl_sync()
            return
        for j in range(self.nf):
            r = &self.rec[j * self.S]
            steps = self.clock - r[2 * K]
            for k in range(K):
                v = r[k]
                if steps > 0.0 and v != 0.0:
                    v = self._pending(v, steps, r[K + k])
                self.w[k * self.dim + j] = v
        for k in range(K):
            if self.has_intercept:
                self.w[k * self.dim + self.nf] = self.bias[k]

    cdef void _ftrl_sync(self) noexcept nogil:
        """FTRL-Proximal: ``w`` from the kernel's ``(z, G, t)`` (before the first step, ``w``
        is the starting point and stays)."""
        cdef Py_ssize_t j, k
        cdef double t = self.ada.ftrl_t, eta = self.ada.ftrl_eta
        cdef const double* G = self.curv.cy_accumulator()
        cdef const double* z = &self.ada._z[0]
        if t == 0.0:
            return
        for k in range(self.K):
            for j in range(self.nf):
                self.w[k * self.dim + j] = self._ftrl_w(z, G, k * self.dim + j, t, eta, True)
            if self.has_intercept:
                self.w[k * self.dim + self.nf] = self._ftrl_w(z, G, k * self.dim + self.nf,
                                                              t, eta, False)

    def reload(self, Py_ssize_t n_avg) -> None:
        """Rebuild the representation from ``w`` (every feature current, the clock at 0, no step
        in force; O(n))."""
        cdef Py_ssize_t K = self.K, S = self.S, nf = self.nf, dim = self.dim
        W = np.asarray(self.w, dtype=np.float64).reshape(K, dim)
        if self.rec is None:
            self.rec = _zeros_on_lines(nf * S)
        self.moved = False
        rec = np.asarray(self.rec).reshape(nf, S)
        rec[:, :K] = W[:, :nf].T
        rec[:, K:] = 0.0         # the factors are set at the first step (no step in force)
        np.asarray(self.bias)[:] = W[:, nf] if self.has_intercept else 0.0
        self.clock = 0.0
        self.eta = NAN
        self.sqnorm = float(np.sum(rec[:, :K] * rec[:, :K]))

    def mix(self, AdaptiveIterate other, int n_threads=1) -> None:
        """Iterative parameter mixing (McDonald, Hall & Mann, *Distributed training strategies
        for the structured perceptron*, NAACL 2010; Mann et al., NIPS 2009): this iterate and
        ``other`` -- the same solve, equal at the last mix (or copied), then run on disjoint
        rows -- both become their average.

        A coordinate that a step of either wrote since the last mix (its record's mark) is
        brought up to date in each (its pending factor, ``_pending``, as ``sync`` applies it)
        and the two values averaged, ``v = (v_a + v_b) / 2``; its AdaGrad accumulators likewise,
        ``G = (G_a + G_b) / 2`` (each shard's steps then keep the scale a shard of half the rows
        gives them). Its records then hold the average with nothing pending and the factor of
        the step in force recomputed from the averaged ``G`` (as a step change computes it,
        ``_new_step``). A coordinate neither wrote has the same value, accumulator and factor
        in both, shrunk only by pending steps whose numbers differ by the difference of the two
        clocks: it keeps this iterate's value (the clocks then both read this one's). The
        intercepts are averaged. ``w`` of both is written with the result (what ``sync`` would
        write), so that neither needs a ``sync`` after it. O(n) in one pass, over
        ``MIX_BLOCKS`` fixed blocks of features on up to ``n_threads`` threads (the sum of
        squares ``nu`` added block by block in order: the same bits for every thread count).

        The shards' steps are set by the caller (``step_scale``;
        :func:`sqnopt.training._mixing.step_scale` says which and why): the average of two
        updates from the same state, each over half the rows, moves half as far as one update
        over all of them at the same step.

        Both must be the composite form (not FTRL-Proximal) of the compiled AdaGrad kernel, of
        the same problem, with the same step in force (or none in either)."""
        if other is self:
            raise ValueError("mix: an iterate cannot be mixed with itself")
        if self.ftrl or other.ftrl:
            raise ValueError("mix: the FTRL-Proximal form keeps dual sums, which this mixing "
                             "does not average")
        if not (isinstance(self.curv, AdaGradKernel) and isinstance(other.curv, AdaGradKernel)):
            raise ValueError("mix: both iterates must update a compiled AdaGrad kernel's "
                             "accumulator")
        if self.curv is other.curv:
            raise ValueError("mix: the two iterates share one accumulator")
        if (other.nf != self.nf or other.K != self.K or other.dim != self.dim
                or other.has_intercept != self.has_intercept or other.lam != self.lam
                or other.l1 != self.l1 or other.delta != self.delta):
            raise ValueError("mix: the iterates are of different problems")
        if self.moved or other.moved or self.rec is None or other.rec is None:
            raise ValueError("mix: an iterate's records were moved or never built")
        if not ((isnan(self.eta) and isnan(other.eta)) or self.eta == other.eta):
            raise ValueError(f"mix: the iterates have different steps in force ({self.eta!r}, "
                             f"{other.eta!r})")
        cdef double[::1] ga = (<AdaGradKernel> self.curv)._accum
        cdef double[::1] gb = (<AdaGradKernel> other.curv)._accum
        if ga.shape[0] != gb.shape[0] or ga.shape[0] != self.K * self.dim:
            raise ValueError("mix: the accumulators do not fit the iterates")
        cdef Py_ssize_t k, i, b, dim = self.dim, nf = self.nf
        cdef Py_ssize_t n_blocks = MIX_BLOCKS if nf >= MIX_BLOCKS else 1
        cdef double v, g, nu = 0.0
        cdef double[::1] parts = np.zeros(n_blocks)
        cdef _MixJob job
        job.a = <void*> self
        job.b = <void*> other
        job.ga = &ga[0]
        job.gb = &gb[0]
        job.wa = &self.w[0]
        job.wb = &other.w[0]
        job.nu = &parts[0]
        job.n_blocks = n_blocks
        with nogil:
            run_tasks(n_threads if n_threads > 1 else 1, n_blocks, _mix_task, &job)
            for b in range(n_blocks):       # the blocks' sums of squares, in block order
                nu += parts[b]
            if self.has_intercept:
                for k in range(self.K):
                    i = k * dim + nf
                    g = 0.5 * (ga[i] + gb[i])
                    ga[i] = g
                    gb[i] = g
                    v = 0.5 * (self.bias[k] + other.bias[k])
                    self.bias[k] = v
                    other.bias[k] = v
                    job.wa[i] = v
                    job.wb[i] = v
        other.clock = self.clock
        self.sqnorm = nu
        other.sqnorm = nu

    cdef double _mix_range(self, AdaptiveIterate other, Py_ssize_t lo, Py_ssize_t hi,
                           double* ga, double* gb, double* wa, double* wb) noexcept nogil:
        """:meth:`mix` on the features ``lo .. hi - 1``: their records, accumulators and ``w``
        entries; returns the sum of their squared values (not the intercepts')."""
        cdef Py_ssize_t j, k, i, K = self.K, S = self.S, dim = self.dim
        cdef double ca = self.clock, cb = other.clock, eta = self.eta
        cdef double v, va, vb, g, c, steps_a, steps_b, nu = 0.0
        cdef bint pending = not isnan(eta)
        cdef double* ra
        cdef double* rb
        for j in range(lo, hi):
            ra = &self.rec[j * S]
            rb = &other.rec[j * S]
            steps_a = ca - ra[2 * K]
            if ra[2 * K + 1] == 0.0 and rb[2 * K + 1] == 0.0:
                for k in range(K):      # neither wrote it: this iterate's value
                    v = ra[k]
                    if pending and steps_a > 0.0 and v != 0.0:
                        v = self._pending(v, steps_a, ra[K + k])
                    wa[k * dim + j] = v
                    wb[k * dim + j] = v
                    nu += v * v
                continue
            steps_b = cb - rb[2 * K]
            for k in range(K):
                i = k * dim + j
                g = 0.5 * (ga[i] + gb[i])
                ga[i] = g
                gb[i] = g
                va = ra[k]
                vb = rb[k]
                if pending and steps_a > 0.0 and va != 0.0:
                    va = self._pending(va, steps_a, ra[K + k])
                if pending and steps_b > 0.0 and vb != 0.0:
                    vb = self._pending(vb, steps_b, rb[K + k])
                v = 0.5 * (va + vb)
                c = self._lazy_coef(self.delta + sqrt(g), eta) if pending else 0.0
                ra[k] = v
                rb[k] = v
                ra[K + k] = c
                rb[K + k] = c
                wa[i] = v
                wb[i] = v
                nu += v * v
            ra[2 * K] = ca
            rb[2 * K] = ca
            ra[2 * K + 1] = 0.0
            rb[2 * K + 1] = 0.0
        return nu

    def adopt(self, IterateKernel previous) -> bool:
        """Take over ``previous``'s representation exactly when it is an adaptive iterate of the
        same shape (the same solve on new data: ``Solver.rebind``; the clocks continue). The
        records are moved, not copied (a stream rebinds once per chunk, and the records are
        O(n_features)): ``previous`` holds none afterwards -- its ``sync`` writes nothing, its
        ``get_state`` raises, and its loop rebuilds them from ``w`` before it runs again."""
        if not isinstance(previous, AdaptiveIterate):
            return False
        cdef AdaptiveIterate p = <AdaptiveIterate> previous
        if (p.nf != self.nf or p.K != self.K or p.has_intercept != self.has_intercept
                or p.l1 != self.l1 or p.lam != self.lam):
            return False
        if p.moved:
            return False
        self.rec = p.rec
        self.bias = np.array(p.bias)
        p.rec = None
        p.moved = True
        self.clock = p.clock
        self.eta = p.eta
        self.sqnorm = p.sqnorm
        self.n_catchups = p.n_catchups
        return True

    def get_state(self) -> dict:
        """The representation: the per-feature records (values and clocks), the intercepts,
        the clock, the step of the pending factors, ``nu`` (copies; the accumulator is the
        curvature kernel's state)."""
        if self.moved:
            raise RuntimeError("this adaptive iterate's records were moved to the loop that "
                               "replaced it (Solver.rebind): take the state of that loop")
        return {"loop": "adaptive", "nf": int(self.nf), "n_blocks": int(self.K),
                "rec": np.array(self.rec), "bias": np.array(self.bias),
                "clock": float(self.clock), "eta": float(self.eta),
                "sqnorm": float(self.sqnorm), "n_catchups": int(self.n_catchups)}

    def check_state(self, state) -> None:
        """Raise :class:`~sqnopt.checkpoint.CheckpointError` unless ``state`` is an adaptive
        representation of this problem."""
        if state.get("loop") != "adaptive":
            raise CheckpointError(f"the checkpoint is of the {state.get('loop')!r} loop, this "
                                  "solve runs the adaptive loop: the solver's path or "
                                  "components differ")
        nf = state_value(state, "nf", int, self)
        K = state_value(state, "n_blocks", int, self)
        if nf != self.nf or K != self.K:
            raise CheckpointError(f"AdaptiveLoop: the checkpoint has {nf} features in {K} "
                                  f"block(s), this solve {self.nf} in {self.K}: it is of "
                                  "another problem")

    def set_state(self, state) -> None:
        """Restore what :meth:`get_state` returned."""
        self.check_state(state)
        restore_array(self.rec, state, "rec", self)
        restore_array(self.bias, state, "bias", self)
        clock = state_value(state, "clock", float, self)
        if not (clock >= 0.0 and clock == int(clock)):
            raise CheckpointError(f"AdaptiveLoop: the checkpointed clock {clock!r} is not a "
                                  "step count")
        # eta is NaN before the first step and after a reload (no step in force, nothing
        # pending); a step in force is a positive finite number
        eta = state_value(state, "eta", float, self, finite=False)
        if not (isnan(eta) or (isfinite(eta) and eta > 0.0)):
            raise CheckpointError(f"AdaptiveLoop: the checkpointed step {eta!r} is neither a "
                                  "positive number nor NaN (no step in force): the "
                                  "checkpoint is damaged or was edited")
        self.clock = clock
        self.eta = eta
        self.sqnorm = state_value(state, "sqnorm", float, self)
        self.n_catchups = state_value(state, "n_catchups", int, self)


cdef void _mix_task(void* ctx, Py_ssize_t task, int worker) noexcept nogil:
    """Block ``task`` of a mix (``AdaptiveIterate.mix``)."""
    cdef _MixJob* job = <_MixJob*> ctx
    cdef Py_ssize_t nf = (<AdaptiveIterate> job.a).nf
    job.nu[task] = (<AdaptiveIterate> job.a)._mix_range(
        <AdaptiveIterate> job.b, task * nf // job.n_blocks, (task + 1) * nf // job.n_blocks,
        job.ga, job.gb, job.wa, job.wb)


cdef class AdaptiveLoop(CompiledLoop):
    """The driver (:class:`~sqnopt.solver._loop.CompiledLoop`) with the adaptive iterate
    (:class:`AdaptiveIterate`): AdaGrad's composite steps in O(stored values of the batch).

    Built by :meth:`sqnopt.Solver.init_state` when the curvature kernel declares
    ``adagrad_accumulator`` and :func:`adaptive_loop_supported` holds; the ``run`` contract of
    the driver. ``previous``: the loop this one replaces on new data (``Solver.rebind``), whose
    representation is taken over when the counters are where it left them.
    """

    def __init__(self, ObjectiveKernel objective, CurvatureKernel curvature,
                 ScheduleKernel schedule, StepKernel step, Sampler sampler, double[::1] w,
                 Counters counters, CompiledLoop previous=None):
        iterate = AdaptiveIterate(objective, curvature, w)
        self.sched = schedule
        self.step = step
        self.sampler = sampler
        self.w = w
        self.w_avg = None
        self.counters = counters
        self.average = False
        self.avg_start = 0
        self._iterate_setup(objective, iterate, None)
        if not (previous is not None and previous.iterate is not None
                and previous.last_t == counters.t and previous.last_n_avg == counters.n_avg
                and iterate.adopt(previous.iterate)):
            iterate.reload(counters.n_avg)
        elif previous is not None:
            previous.last_t = -1    # its records moved here: it reloads from w if run again

    @property
    def clock(self) -> float:
        """Steps applied since the representation was built (or reloaded)."""
        return (<AdaptiveIterate> self.iterate).clock

    @property
    def eta(self) -> float:
        """The step of the pending factors (NaN: none pending)."""
        return (<AdaptiveIterate> self.iterate).eta

    @property
    def n_catchups(self) -> int:
        """O(n) catch-ups after a change of the step."""
        return (<AdaptiveIterate> self.iterate).n_catchups

    @property
    def step_scale(self) -> float:
        """The factor of the step rule's steps (1; a mixed shard's: the number of shards).
        Not part of the state: a loop built on new data (``Solver.rebind``) starts at 1."""
        return (<AdaptiveIterate> self.iterate).step_scale

    @step_scale.setter
    def step_scale(self, double value) -> None:
        if not (value > 0.0 and isfinite(value)):
            raise ValueError(f"step_scale must be a positive number, got {value!r}")
        (<AdaptiveIterate> self.iterate).step_scale = value

    def mix(self, AdaptiveLoop other, int n_threads=1) -> None:
        """Average this loop's iterate and ``other``'s in both (:meth:`AdaptiveIterate.mix`):
        two shards of a chunk's rows run from the same state, mixed when both have run
        (:mod:`sqnopt.training._mixing`). The caller has added ``other``'s work to this solve's
        counters: this loop then stands where they say (nothing is drawn ahead once a run has
        returned), its representation kept."""
        (<AdaptiveIterate> self.iterate).mix(<AdaptiveIterate> other.iterate, n_threads)
        self._at_counters()


def _objective_unsupported(objective_kernel):
    """Why the adaptive iterate cannot run ``objective_kernel``, or ``""`` (``K`` blocks of
    ``[x_i, 1]``-linear scores with losses from given scores)."""
    if not isinstance(objective_kernel, ObjectiveKernel):
        return f"objective kernel {type(objective_kernel).__name__} is not compiled"
    cdef ObjectiveKernel obj = <ObjectiveKernel> objective_kernel
    if obj.data is None:
        return "the objective kernel is not bound to in-memory rows"
    if not obj.score_losses or obj.n_scores != obj.n_blocks:
        return ("its kernel does not compute losses from given scores, one per parameter block "
                "(score_losses, n_scores = n_blocks)")
    if obj.n_params != obj.n_blocks * obj.data.dim:
        return "its parameters are not blocks over the columns of X"
    return ""


def adaptive_loop_supported(objective, objective_kernel, curvature, curvature_kernel,
                            gradient_kernel):
    """Why the adaptive loop cannot run this combination, or ``""`` if it can.

    ``objective`` and ``curvature`` are the components, the other arguments their kernels. The
    loop needs a curvature kernel that declares ``adagrad_accumulator`` (AdaGrad in composite
    form), the plain minibatch gradient, and a compiled objective whose parameters are ``K``
    blocks of ``[x_i, 1]``-linear scores -- a margin loss (capability ``margin``) or one that
    declares ``dense_hessian`` (the multinomial softmax) -- with losses from given scores
    (``score_losses``). (The solver refuses projections and averaging with the composite form
    before it gets here.)
    """
    if not getattr(curvature_kernel, "adagrad_accumulator", False):
        return (f"curvature {curvature.describe()} does not expose an AdaGrad accumulator "
                "(its kernel does not declare adagrad_accumulator)")
    if not getattr(gradient_kernel, "plain", False):
        return "the gradient estimator is not the plain minibatch gradient"
    caps = objective.capabilities
    if "margin" not in caps and "dense_hessian" not in caps:
        return (f"objective {objective.describe()} is neither a margin loss nor K blocks of "
                "linear scores (capability margin or dense_hessian)")
    why = _objective_unsupported(objective_kernel)
    if why:
        return f"objective {objective.describe()}: {why}"
    return ""
