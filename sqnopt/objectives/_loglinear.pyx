# cython: language_level=3
"""Compiled log-linear objectives: the generic model and its softmax, stacked-feature and binary
logistic forms (see ``_loglinear.pxd`` for the model). Each provides the partition-function
quadratic bound of SQB through :class:`~sqnopt.objectives._partition_bound.BoundObjectiveKernel`,
whose per-sample math (Aravkin, Choromanska, Jebara & Kanevsky, *Semistochastic quadratic bound
methods* (2014), Algorithm 1 and eq. (3)-(5)) lives in ``_partition_bound.pyx``.
"""

import numpy as np
import scipy.sparse as sp

from libc.math cimport INFINITY, NAN, exp, isfinite, log1p
from libc.stdlib cimport free, malloc
from libc.string cimport memset

from sqnopt._parallel cimport ROW_WORK
from sqnopt._vec cimport SQNOPT_PREFETCH, sq_axpy, sq_axpy_f32, sq_dot, sq_dot_f32
from sqnopt.data._rows cimport (
    RowData, batch_scattered, hint_batch_ahead, hint_batch_start, hint_in_order, hint_rows_ahead,
    hint_rows_start)
from sqnopt.objectives._base cimport (
    PASS_BOUND, PASS_BOUND_MATVEC, PASS_FULL_GRADIENT, PASS_GRADIENT, PASS_HESS_FACTORS,
    PASS_HESS_PRODUCT, PASS_ROWS_AXPY, PASS_ROWS_DOT, PASS_ROWS_SQNORM, PASS_SCORE_DERIV,
    PASS_SCORES_LINE, PASS_SCORES_LOSS, PASS_VALUE, PassJob,
)
from sqnopt.objectives._margin cimport LogisticKernel
from sqnopt.objectives._partition_bound cimport (
    BoundObjectiveKernel,
    bound_factor_apply,
    bound_sample,
    bound_weight,
)


# Feature-major loops prefetch the row of the nonzero this many entries ahead (a row of K
# doubles spans up to 4 cache lines; the first and last are requested).
cdef Py_ssize_t FM_PREFETCH = 8


cdef inline Py_ssize_t _fm_row(const int* ind, const Py_ssize_t* fmap, Py_ssize_t p) noexcept nogil:
    """Feature-major row of a row's ``p``-th nonzero (through the compact map, if any)."""
    return fmap[ind[p]] if fmap != NULL else ind[p]


cdef inline void _fm_prefetch(const double* base, const int* ind, const Py_ssize_t* fmap,
                              Py_ssize_t p, Py_ssize_t nnz, Py_ssize_t K) noexcept nogil:
    cdef const double* row
    if p + FM_PREFETCH < nnz:
        row = base + _fm_row(ind, fmap, p + FM_PREFETCH) * K
        SQNOPT_PREFETCH(row)
        SQNOPT_PREFETCH(row + K - 1)


# ---- layout and row helpers --------------------------------------------------------------------

cdef double _feature_major_copy(Py_ssize_t K, Py_ssize_t dim, const Py_ssize_t* map,
                                double* param, double* fm, bint to_fm) noexcept nogil:
    """Copy between the parameter layout (``param[k dim + j]``, K blocks) and a feature-major
    one (``fm[c K + k]`` with row ``c = map[j]``, or ``c = j`` if ``map`` is NULL), in blocks of
    64 features so each block's K rows stay in cache. ``to_fm``: ``param -> fm``, returning the
    squared norm of the entries of unmapped features (``map[j] < 0``); else ``fm -> param``,
    leaving unmapped features untouched (returns 0)."""
    cdef Py_ssize_t j, k, j0 = 0, j1, c
    cdef double* prow
    cdef double off = 0.0
    while j0 < dim:
        j1 = min(j0 + 64, dim)
        for k in range(K):
            prow = param + k * dim
            for j in range(j0, j1):
                c = map[j] if map != NULL else j
                if c < 0:
                    if to_fm:
                        off += prow[j] * prow[j]
                elif to_fm:
                    fm[c * K + k] = prow[j]
                else:
                    prow[j] = fm[c * K + k]
        j0 = j1
    return off


cdef Py_ssize_t _row_entries(RowData data, Py_ssize_t i, Py_ssize_t* idx,
                             double* val) noexcept nogil:
    """Row ``i`` as (index, value) pairs, its intercept entry (index ``n_features``, value 1)
    last; ``idx`` and ``val`` hold ``n_features + 1`` entries. Returns the count."""
    cdef const double* d64
    cdef const float* d32
    cdef const int* ind
    cdef Py_ssize_t p, m = 0
    cdef Py_ssize_t nnz = data.row_view(i, &d64, &d32, &ind)
    for p in range(nnz):
        idx[m] = ind[p] if ind != NULL else p
        val[m] = d64[p] if d64 != NULL else <double> d32[p]
        m += 1
    if data.has_intercept:
        idx[m] = data.n_features
        val[m] = 1.0
        m += 1
    return m



# ---- generic log-linear ------------------------------------------------------------------------

cdef inline double _softmax_sample(const double* s, double* c, Py_ssize_t K, double gi,
                                   Py_ssize_t lab) noexcept nogil:
    """One sample's weighted softmax loss ``gi (log sum_y exp s_y - s_lab)`` from its scores
    ``s``, with ``c[y] = gi (p_y - [y == lab])``, by a max-shifted softmax (``log1p`` of the
    terms other than the largest); NaN in ``c`` and the result when a score is not finite."""
    cdef Py_ssize_t y, kmax = 0
    cdef double m = s[0], rest = 0.0, denom
    for y in range(1, K):
        if s[y] > m:
            m = s[y]
            kmax = y
    if not isfinite(m):
        for y in range(K):
            c[y] = NAN
        return NAN
    for y in range(K):
        c[y] = exp(s[y] - m)
        if y != kmax:
            rest += c[y]
    denom = 1.0 + rest
    for y in range(K):
        c[y] = gi * c[y] / denom
    c[lab] -= gi
    return gi * ((m - s[lab]) + log1p(rest))


cdef class LogLinearKernel(BoundObjectiveKernel):
    """Value, gradient and bound shared by every log-linear model (see ``_loglinear.pxd``)."""

    cdef int _bind_loglinear(self, RowData data, double lam, Py_ssize_t n_blocks,
                             Py_ssize_t block, Py_ssize_t reg_len, Py_ssize_t n_outputs) except -1:
        if n_outputs < 2:
            raise ValueError("a log-linear model needs at least two outputs")
        self._bind(data, lam, n_blocks)
        self.n_params = n_blocks * block
        self._block = block
        self._reg_len = reg_len
        self.n_outputs = n_outputs
        self.factor_size = 3 * n_outputs
        self._s = np.zeros(n_outputs)
        self._u = np.zeros(n_outputs)
        self._beta = np.zeros(n_outputs)
        self.n_scores = n_outputs
        self.hess_size = n_outputs
        free(self._vt)              # scratch is sized by n_params: none survives a re-bind
        free(self._ot)
        self._vt = NULL
        self._ot = NULL
        return 0

    def __dealloc__(self):
        free(self._vt)
        free(self._ot)

    cdef bint _layout_enter(self, const Py_ssize_t* batch, Py_ssize_t size,
                            const double* v) noexcept nogil:
        return False

    cdef void _layout_leave(self, double* out) noexcept nogil:
        pass

    cdef void scores(self, Py_ssize_t i, const double* w, double* s) noexcept nogil:
        pass

    cdef void features_dot(self, Py_ssize_t i, const double* v, double* u) noexcept nogil:
        pass

    cdef void features_axpy(self, Py_ssize_t i, const double* beta, double* out) noexcept nogil:
        pass

    cdef void cy_rows_sqnorm(self, const Py_ssize_t* batch, Py_ssize_t size, const double* coef,
                             double* out) noexcept nogil:
        # ||sum_y coef_y f_i(y)||^2 assembled in a scratch vector of n_params (the joint
        # features of different outputs may share coordinates); subclasses with orthogonal
        # feature blocks (softmax) override it with the row norm
        cdef Py_ssize_t t, j, K = self.n_outputs, n = self.n_params
        cdef double acc
        cdef double* v = <double*> malloc(n * sizeof(double))
        for t in range(size):
            if v == NULL:
                out[t] = NAN
                continue
            memset(v, 0, n * sizeof(double))
            self.features_axpy(batch[t], coef + t * K, v)
            acc = 0.0
            for j in range(n):
                acc += v[j] * v[j]
            out[t] = acc
        free(v)

    cdef Py_ssize_t label(self, Py_ssize_t i) noexcept nogil:
        """Observed output index of sample ``i`` (labels are validated as ``0..K-1``)."""
        return <Py_ssize_t> self.data.y[i]

    cdef double _lreg_value(self, const double* w) noexcept nogil:
        cdef Py_ssize_t k
        cdef double acc = 0.0
        for k in range(self.n_blocks):
            acc += sq_dot(w + k * self._block, w + k * self._block, self._reg_len)
        return 0.5 * self.lam * acc

    cdef void _lreg_gradient(self, const double* w, double* grad) noexcept nogil:
        cdef Py_ssize_t k
        if self.lam == 0.0:
            return
        for k in range(self.n_blocks):
            sq_axpy(self.lam, w + k * self._block, grad + k * self._block, self._reg_len)

    cdef double cy_reg_gradient_value(self, const double* w, double* grad) noexcept nogil:
        self._lreg_gradient(w, grad)
        return self._lreg_value(w)

    cdef double cy_reg_value(self, const double* w) noexcept nogil:
        return self._lreg_value(w)

    # ---- passes: each cy_* method plans its blocks and runs them through _run_pass; _block
    # holds the serial loops, with scratch of its own (three vectors of K per block) -------------

    cdef double cy_score_derivatives(self, const double* w, const Py_ssize_t* batch,
                                     Py_ssize_t size, double* coef) noexcept nogil:
        # d (log Z_i - s_{y_i}) / d s_y = p_y - [y == y_i], by a max-shifted softmax (the
        # parameter layout: no working layout is entered here)
        cdef PassJob job
        job.kind = PASS_SCORE_DERIV
        job.batch = batch
        job.size = size
        job.w = w
        job.cout = coef
        job.n_vec = 0
        job.out = NULL
        job.n_blocks = self._plan(size, self._rows_work(1), 0)
        self._run_pass(&job)
        return job.result[0]

    cdef double cy_scores_loss(self, const Py_ssize_t* batch, Py_ssize_t size, const double* s,
                               double* coef) noexcept nogil:
        # cy_score_derivatives' arithmetic on the given scores (no log base measure: only the
        # models that have none declare ``score_losses``)
        cdef PassJob job
        job.kind = PASS_SCORES_LOSS
        job.batch = batch
        job.size = size
        job.cin = s
        job.cout = coef
        job.n_vec = 0
        job.out = NULL
        job.n_blocks = self._plan(size, self._rows_work(0), 0)
        self._run_pass(&job)
        return job.result[0]

    cdef double cy_scores_line(self, const Py_ssize_t* batch, Py_ssize_t size, const double* z,
                               const double* u, double a, double* d2) noexcept nogil:
        # s = z - a u; d loss / da = -(p - e_y) . u, d2 = u' (diag p - p p') u = sum_y p_y
        # (u_y - p'u)^2 (written as a sum of squares: never negative by rounding)
        cdef PassJob job
        job.kind = PASS_SCORES_LINE
        job.batch = batch
        job.size = size
        job.cin = z
        job.cin2 = u
        job.a = a
        job.n_vec = 0
        job.out = NULL
        job.n_blocks = self._plan(size, self._rows_work(0), 0)
        self._run_pass(&job)
        d2[0] = job.result[1]
        return job.result[0]

    cdef void cy_rows_axpy(self, const Py_ssize_t* batch, Py_ssize_t size, const double* coef,
                           double scale, double* out) noexcept nogil:
        cdef PassJob job
        job.kind = PASS_ROWS_AXPY
        job.batch = batch
        job.size = size
        job.cin = coef
        job.scale = scale
        job.n_vec = self.n_params
        job.out = out
        job.n_blocks = self._plan(size, self._rows_work(1), self.n_params)
        self._run_pass(&job)

    cdef void cy_rows_dot(self, const Py_ssize_t* batch, Py_ssize_t size, const double* v,
                          double* out) noexcept nogil:
        # the scores of v (parameter layout, as cy_score_derivatives reads them)
        cdef PassJob job
        job.kind = PASS_ROWS_DOT
        job.batch = batch
        job.size = size
        job.v = v
        job.cout = out
        job.n_vec = 0
        job.out = NULL
        job.n_blocks = self._plan(size, self._rows_work(1), 0)
        self._run_pass(&job)

    cdef int cy_hessian_factors(self, const double* w, const Py_ssize_t* batch, Py_ssize_t size,
                                double* D) noexcept nogil:
        # D_t = g_i p (softmax of the scores): the score Hessian is g_i (diag(p) - p p')
        cdef PassJob job
        job.kind = PASS_HESS_FACTORS
        job.batch = batch
        job.size = size
        job.w = w
        job.cout = D
        job.n_vec = 0
        job.out = NULL
        job.n_blocks = self._plan(size, self._rows_work(1), 0)
        return -1 if self._run_pass(&job) != 0 else 0

    cdef void cy_hessian_product(self, const Py_ssize_t* batch, Py_ssize_t size, const double* D,
                                 const double* v, double* out) noexcept nogil:
        # out = (1/size) sum_t F_i' g_i (diag(p) - p p') F_i v + lam v_reg, with g_i p in D
        cdef PassJob job
        memset(out, 0, self.n_params * sizeof(double))
        job.kind = PASS_HESS_PRODUCT
        job.batch = batch
        job.size = size
        job.cin = D
        job.v = v
        job.scale = 1.0 / size
        job.n_vec = self.n_params
        job.out = out
        job.n_blocks = self._plan(size, self._rows_work(2), self.n_params)
        self._run_pass(&job)
        self._lreg_gradient(v, out)

    cdef double _accumulate(self, const double* w, Py_ssize_t i, double coef, double* grad,
                            double* s, double* beta) noexcept nogil:
        """Loss ``log Z_i - s_{y_i}`` of sample ``i`` by a max-shifted log-sum-exp; if ``grad``
        is not NULL, ``grad += coef * F_i' (p - e_{y_i})`` (``s``, ``beta``: K doubles of
        scratch each)."""
        cdef Py_ssize_t K = self.n_outputs
        cdef Py_ssize_t y, kmax = 0
        cdef Py_ssize_t lab = self.label(i)
        cdef double m, rest = 0.0, denom
        self.scores(i, w, s)
        m = s[0]
        for y in range(1, K):
            if s[y] > m:
                m = s[y]
                kmax = y
        if not isfinite(m):
            return NAN if m != -INFINITY else INFINITY
        for y in range(K):              # beta <- exp(s - m), once per output
            beta[y] = exp(s[y] - m)
            if y != kmax:
                rest += beta[y]
        if grad != NULL and coef != 0.0:
            denom = 1.0 + rest
            for y in range(K):
                beta[y] = coef * beta[y] / denom
            beta[lab] -= coef
            self.features_axpy(i, beta, grad)
        # log Z - s_lab = (m - s_lab) + log(1 + sum_{y != kmax} exp(s_y - m)): exact when tiny
        return (m - s[lab]) + log1p(rest)

    cdef double cy_gradient(self, const double* w, const Py_ssize_t* batch, Py_ssize_t size,
                            double* grad) noexcept nogil:
        cdef PassJob job
        cdef bint moved = self._layout_enter(batch, size, w)
        cdef double* gl = self._ot if moved else grad
        memset(gl, 0, self.n_params * sizeof(double))
        job.kind = PASS_GRADIENT
        job.batch = batch
        job.size = size
        job.weights = self.data.grad_weight
        job.w = <const double*> self._vt if moved else w
        job.scale = 1.0 / size
        job.n_vec = self.n_params
        job.out = gl
        job.n_blocks = self._plan(size, self._rows_work(2), self.n_params)
        self._run_pass(&job)
        if moved:
            self._layout_leave(grad)
        self._lreg_gradient(w, grad)
        return job.result[0] * job.scale + self._lreg_value(w)

    cdef double cy_value(self, const double* w) noexcept nogil:
        cdef PassJob job
        cdef bint moved = self._layout_enter(NULL, 0, w)
        cdef Py_ssize_t N = self.data.n_samples
        job.kind = PASS_VALUE
        job.batch = NULL
        job.size = N
        job.weights = self.data.sample_weight
        job.w = <const double*> self._vt if moved else w
        job.n_vec = 0
        job.out = NULL
        job.n_blocks = self._plan(N, self._rows_work(1), 0)
        self._run_pass(&job)
        if moved:
            self._layout_leave(NULL)
        return job.result[0] / N + self._lreg_value(w)

    cdef double cy_full_gradient(self, const double* w, double* grad) noexcept nogil:
        cdef PassJob job
        cdef bint moved = self._layout_enter(NULL, 0, w)
        cdef double* gl = self._ot if moved else grad
        cdef Py_ssize_t N = self.data.n_samples
        memset(gl, 0, self.n_params * sizeof(double))
        job.kind = PASS_FULL_GRADIENT
        job.batch = NULL
        job.size = N
        job.weights = self.data.sample_weight
        job.w = <const double*> self._vt if moved else w
        job.scale = 1.0 / N
        job.n_vec = self.n_params
        job.out = gl
        job.n_blocks = self._plan(N, self._rows_work(2), self.n_params)
        self._run_pass(&job)
        if moved:
            self._layout_leave(grad)
        self._lreg_gradient(w, grad)
        return job.result[0] * job.scale + self._lreg_value(w)

    cdef int cy_bound(self, const double* w, const Py_ssize_t* batch, Py_ssize_t size,
                      double* factor, double* mu) noexcept nogil:
        cdef PassJob job
        cdef bint moved = self._layout_enter(batch, size, w)
        cdef double* ml = self._ot if (moved and mu != NULL) else mu
        cdef int code
        if ml != NULL:
            memset(ml, 0, self.n_params * sizeof(double))
        job.kind = PASS_BOUND
        job.batch = batch
        job.size = size
        job.w = <const double*> self._vt if moved else w
        job.cout = factor
        job.scale = 1.0 / size
        job.n_vec = self.n_params if ml != NULL else 0
        job.out = ml
        job.n_blocks = self._plan(size, self._rows_work(2 if ml != NULL else 1),
                                  self.n_params if ml != NULL else 0)
        code = -1 if self._run_pass(&job) != 0 else 0
        if moved:
            self._layout_leave(mu)
        return code

    cdef void cy_bound_matvec(self, const Py_ssize_t* batch, Py_ssize_t size,
                              const double* factor, const double* v, double* out) noexcept nogil:
        cdef bint moved = self._layout_enter(batch, size, v)
        cdef const double* vl = <const double*> self._vt if moved else v
        cdef double* ol = self._ot if moved else out
        self._bound_products(batch, size, factor, vl, ol, self.n_params)
        if moved:
            self._layout_leave(out)

    cdef void _bound_products(self, const Py_ssize_t* batch, Py_ssize_t size,
                              const double* factor, const double* v, double* out,
                              Py_ssize_t n) noexcept nogil:
        cdef PassJob job
        memset(out, 0, n * sizeof(double))
        job.kind = PASS_BOUND_MATVEC
        job.batch = batch
        job.size = size
        job.cin = factor
        job.v = v
        job.n_vec = n
        job.out = out
        job.n_blocks = self._plan(size, self._rows_work(2), n)
        self._run_pass(&job)

    cdef double _rows_work(self, int reads) noexcept nogil:
        """Work units per row of a pass that reads each row ``reads`` times (a dot, an axpy):
        ``K`` scores per stored entry read, and a softmax's per-score work."""
        return self.n_outputs * (reads * self._read_work + ROW_WORK)

    cdef int _pass_block(self, PassJob* job, Py_ssize_t t0, Py_ssize_t t1, double* out,
                    double* sums) noexcept nogil:
        """The serial loops of the log-linear passes over positions ``[t0, t1)``, with scratch
        of their own (on the stack up to 64 outputs, else allocated)."""
        cdef Py_ssize_t K = self.n_outputs
        cdef double local[3 * 64]
        cdef double* scratch = local
        cdef int code
        if K > 64:
            scratch = <double*> malloc(3 * K * sizeof(double))
            if scratch == NULL:
                return -2
        code = self._block_loops(job, t0, t1, out, sums, scratch, scratch + K, scratch + 2 * K)
        if scratch != local:
            free(scratch)
        return code

    cdef int _block_loops(self, PassJob* job, Py_ssize_t t0, Py_ssize_t t1, double* out,
                          double* sums, double* s, double* u, double* beta) noexcept nogil:
        cdef int kind = job.kind
        cdef const Py_ssize_t* batch = job.batch
        cdef Py_ssize_t K = self.n_outputs
        cdef Py_ssize_t t, i, y, lab
        cdef const double* cin = job.cin
        cdef const double* ut
        cdef const double* gp
        cdef double* cout = job.cout
        cdef double* p
        cdef double* fac
        cdef const double* w = job.w
        cdef const double* cw = job.weights
        cdef double inv = job.scale
        cdef double a, m, tot, gi, pu, q, c, logz, s1 = 0.0, total = 0.0
        cdef bint dense = not self.data.is_sparse
        # a batch whose rows are in no order gets hints ahead (see _rows.pyx, HINT_AHEAD)
        cdef bint hint = batch_scattered(batch, t0, t1)
        # the passes that score a row and add a multiple of it to a vector hint rows in order
        # too on large data (_rows.pyx, HINT_ORDERED_BYTES)
        cdef bint fused = (kind == PASS_GRADIENT or kind == PASS_HESS_PRODUCT
                           or kind == PASS_BOUND or kind == PASS_BOUND_MATVEC)
        cdef bint ordered = not hint and hint_in_order(self.data)
        if ordered and fused:
            hint = True
        sums[0] = 0.0
        sums[1] = 0.0
        if hint and kind != PASS_SCORES_LOSS and kind != PASS_SCORES_LINE:
            hint_batch_start(self.data, batch, t0, t1)
        if kind == PASS_GRADIENT:
            for t in range(t0, t1):
                if hint:
                    hint_batch_ahead(self.data, batch, t, t1, dense)
                i = batch[t]
                gi = cw[i]
                total += gi * self._accumulate(w, i, inv * gi, out, s, beta)
            sums[0] = total
        elif kind == PASS_FULL_GRADIENT:
            if ordered:
                hint_rows_start(self.data, t0, t1)
            for i in range(t0, t1):
                if ordered:
                    hint_rows_ahead(self.data, i, t1, dense)
                gi = cw[i]
                total += gi * self._accumulate(w, i, inv * gi, out, s, beta)
            sums[0] = total
        elif kind == PASS_VALUE:
            for i in range(t0, t1):
                total += cw[i] * self._accumulate(w, i, 0.0, NULL, s, beta)
            sums[0] = total
        elif kind == PASS_SCORE_DERIV:
            for t in range(t0, t1):
                if hint:
                    hint_batch_ahead(self.data, batch, t, t1, dense)
                i = batch[t]
                self.scores(i, w, s)
                total += _softmax_sample(s, cout + t * K, K, self.data.grad_weight[i],
                                         self.label(i))
            sums[0] = total
        elif kind == PASS_SCORES_LOSS:
            for t in range(t0, t1):
                i = batch[t]
                total += _softmax_sample(cin + t * K, cout + t * K if cout != NULL else beta, K,
                                         self.data.grad_weight[i], self.label(i))
            sums[0] = total
        elif kind == PASS_SCORES_LINE:
            a = job.a
            p = u
            for t in range(t0, t1):
                i = batch[t]
                ut = job.cin2 + t * K
                gi = self.data.grad_weight[i]
                for y in range(K):
                    s[y] = cin[t * K + y] - a * ut[y]
                m = s[0]
                for y in range(1, K):
                    if s[y] > m:
                        m = s[y]
                if not isfinite(m):
                    s1 += NAN
                    total += NAN
                    continue
                tot = 0.0
                for y in range(K):
                    p[y] = exp(s[y] - m)
                    tot += p[y]
                pu = 0.0
                for y in range(K):
                    p[y] = p[y] / tot
                    pu += p[y] * ut[y]
                s1 -= gi * (pu - ut[self.label(i)])
                q = 0.0
                for y in range(K):
                    q += p[y] * (ut[y] - pu) * (ut[y] - pu)
                total += gi * q
            sums[0] = s1
            sums[1] = total
        elif kind == PASS_ROWS_AXPY:
            for t in range(t0, t1):
                if hint:
                    hint_batch_ahead(self.data, batch, t, t1, dense)
                for y in range(K):
                    beta[y] = inv * cin[t * K + y]
                self.features_axpy(batch[t], beta, out)
        elif kind == PASS_ROWS_DOT:
            for t in range(t0, t1):
                if hint:
                    hint_batch_ahead(self.data, batch, t, t1, dense)
                self.features_dot(batch[t], job.v, cout + t * K)
        elif kind == PASS_ROWS_SQNORM:
            # softmax's (its cy_rows_sqnorm): orthogonal class blocks, (sum_k coef_k^2) ||x||^2
            for t in range(t0, t1):
                if hint:
                    hint_batch_ahead(self.data, batch, t, t1, dense)
                tot = 0.0
                for y in range(K):
                    tot += cin[t * K + y] * cin[t * K + y]
                cout[t] = tot * self.data.row_sqnorm(batch[t])
        elif kind == PASS_HESS_FACTORS:
            for t in range(t0, t1):
                if hint:
                    hint_batch_ahead(self.data, batch, t, t1, dense)
                i = batch[t]
                p = cout + t * K
                gi = self.data.grad_weight[i]
                self.scores(i, w, s)
                m = s[0]
                for y in range(1, K):
                    if s[y] > m:
                        m = s[y]
                if not isfinite(m):
                    return -1
                tot = 0.0
                for y in range(K):
                    p[y] = exp(s[y] - m)
                    tot += p[y]
                for y in range(K):
                    p[y] = gi * p[y] / tot
        elif kind == PASS_HESS_PRODUCT:
            for t in range(t0, t1):
                if hint:
                    hint_batch_ahead(self.data, batch, t, t1, dense)
                i = batch[t]
                gp = cin + t * K
                gi = 0.0
                for y in range(K):
                    gi += gp[y]                 # sum_y g_i p_y = g_i
                if gi == 0.0:
                    continue
                self.features_dot(i, job.v, u)
                pu = 0.0
                for y in range(K):
                    pu += gp[y] * u[y]          # g_i p'u
                for y in range(K):
                    beta[y] = inv * (gp[y] * u[y] - gp[y] * pu / gi)
                self.features_axpy(i, beta, out)
        elif kind == PASS_BOUND:
            for t in range(t0, t1):
                if hint:
                    hint_batch_ahead(self.data, batch, t, t1, dense)
                i = batch[t]
                fac = cout + t * self.factor_size
                self.scores(i, w, s)
                logz = bound_sample(s, K, fac, u if out != NULL else NULL)
                if not isfinite(logz):
                    return -1
                c = inv * self.data.grad_weight[i]
                for y in range(K):
                    fac[y] *= c
                if out != NULL:
                    # mu += c (r - f(y_i)) = c F_i' (q - e_{y_i})
                    for y in range(K):
                        u[y] *= c
                    u[self.label(i)] -= c
                    self.features_axpy(i, u, out)
        elif kind == PASS_BOUND_MATVEC:
            for t in range(t0, t1):
                if hint:
                    hint_batch_ahead(self.data, batch, t, t1, dense)
                i = batch[t]
                self.features_dot(i, job.v, u)
                bound_factor_apply(cin + t * self.factor_size, K, u, beta)
                self.features_axpy(i, beta, out)
        else:
            return -3
        return 0

    # ---- Python-level diagnostics ------------------------------------------------------------
    def _feature_vector(self, Py_ssize_t i, coef):
        """``F_i' coef`` as a dense vector."""
        cdef const double[::1] cv = np.ascontiguousarray(coef, dtype=np.float64)
        out = np.zeros(self.n_params)
        cdef double[::1] ov = out
        self.features_axpy(i, &cv[0], &ov[0])
        return out

    def feature_matrix(self, Py_ssize_t i):
        """``F_i``: the ``K x n_params`` matrix whose rows are ``f_i(y)`` (dense; diagnostics)."""
        self._check_sample(i)
        eye = np.eye(self.n_outputs)
        return np.vstack([self._feature_vector(i, eye[y]) for y in range(self.n_outputs)])

    def scores_of(self, w, Py_ssize_t i):
        """``s_y = log h_i(y) + w . f_i(y)`` for every output."""
        self._check_sample(i)
        cdef const double[::1] wv = np.ascontiguousarray(w, dtype=np.float64)
        self._check_w(wv)
        out = np.empty(self.n_outputs)
        cdef double[::1] ov = out
        self.scores(i, &wv[0], &ov[0])
        return out

    def labels_of(self):
        """Observed output index of every sample."""
        return np.array([self.label(i) for i in range(self.data.n_samples)], dtype=np.intp)

    def _check_sample(self, Py_ssize_t i):
        if i < 0 or i >= self.data.n_samples:
            raise IndexError(f"sample {i} out of range for {self.data.n_samples} samples")

    def _sample_factor(self, w, Py_ssize_t i):
        s = self.scores_of(w, i)
        cdef double[::1] sv = s
        fac = np.zeros(self.factor_size)
        cdef double[::1] fv = fac
        logz = bound_sample(&sv[0], self.n_outputs, &fv[0], NULL)
        if not np.isfinite(logz):
            raise FloatingPointError("non-finite score: the bound is undefined at this w")
        return logz, fac

    def _sample_columns(self, Py_ssize_t i, fac, double scale):
        """Columns ``sqrt(scale w_y) F_i'(e_y - q_y)`` and the final ``F_i' q``."""
        K = self.n_outputs
        q = np.zeros(K)
        cols = []
        for y in range(K):
            a = -q.copy()
            a[y] += 1.0
            cols.append(np.sqrt(scale * fac[y]) * self._feature_vector(i, a))
            q *= fac[2 * K + y]
            q[y] += fac[K + y]
        return cols, self._feature_vector(i, q)

    def sample_bound(self, w, Py_ssize_t i):
        logz, fac = self._sample_factor(w, i)
        cols, r = self._sample_columns(i, fac, 1.0)
        return float(logz), r, np.column_stack(cols)

    def bound_columns(self, w, batch):
        b = self._checked_batch(batch)
        cols = []
        for i in b:
            _, fac = self._sample_factor(w, int(i))
            c, _ = self._sample_columns(int(i), fac,
                                        float(self.data.grad_weights[i]) / b.shape[0])
            cols.extend(c)
        return sp.csc_matrix(np.column_stack(cols))

    def log_partition(self, w, Py_ssize_t i):
        s = self.scores_of(w, i)
        m = float(np.max(s))
        return m + float(np.log(np.sum(np.exp(s - m))))


# ---- softmax ----------------------------------------------------------------------------------

cdef class SoftmaxKernel(LogLinearKernel):
    """Multinomial logistic regression with ``K`` blocks of ``data.dim`` parameters (block ``k``:
    the weights of class ``k``, then its intercept if fitted). Labels are ``0..K-1``."""

    def __init__(self, RowData data, double lam, Py_ssize_t n_classes):
        self._bind_loglinear(data, lam, n_classes, data.dim, data.n_features, n_classes)
        self.support_map_size = data.dim if data.is_sparse else 0
        self.score_losses = True        # no log base measure: losses from the linear scores
        y = data.labels
        if np.any((y < 0) | (y >= n_classes) | (y != np.floor(y))):
            raise ValueError(f"softmax labels must be integers in 0..{n_classes - 1}")

    def _set_feature_major(self, bint enabled):
        """Allow (default) or forbid the feature-major mode (tests compare the two layouts)."""
        self._fm_off = not enabled

    def _feature_major_calls(self):
        """How many calls ran in feature-major mode (tests)."""
        return self._fm_calls

    cdef void scores(self, Py_ssize_t i, const double* w, double* s) noexcept nogil:
        self.features_dot(i, w, s)

    # ---- feature-major mode -------------------------------------------------------------------
    # In the parameter layout (K blocks of ``dim``) the K entries that one nonzero ``x_j`` meets,
    # ``v[k dim + j]``, lie on K different cache lines of a vector that need not fit in cache
    # (news20: 1.2e6 parameters); transposed (``vt[j K + k]``) they are adjacent. For a sparse
    # batch whose ``nnz K`` exceeds ``n_params`` the shared loops of ``LogLinearKernel`` (value,
    # gradients, bound, bound product) therefore run in this working layout through
    # ``_layout_enter`` / ``_layout_leave``: the input is transposed once, the per-sample loops
    # touch adjacent entries and the output is transposed back: two O(n_params) passes for locality of the O(nnz K) gathers
    # and scatters. Per sample the arithmetic and its order are those of the parameter layout,
    # so results are bit-for-bit the same. Dense rows keep the parameter layout (their
    # per-block products are contiguous already).

    cdef bint _layout_enter(self, const Py_ssize_t* batch, Py_ssize_t size,
                            const double* v) noexcept nogil:
        """Feature-major if the rows are sparse and the call's ``nnz K`` exceeds ``n_params``
        (``batch == NULL``: every sample): ``_vt = v'``. False (parameter layout) otherwise or
        if the scratch cannot be allocated."""
        cdef Py_ssize_t K = self.n_outputs, dim = self._block, t, nnz = 0
        if self._fm_off or not self.data.is_sparse:
            return False
        if batch == NULL:
            nnz = self.data.nnz
        else:
            for t in range(size):
                nnz += self.data.row_nnz(batch[t])
        if nnz * K <= self.n_params:
            return False
        if self._vt == NULL:
            self._vt = <double*> malloc(self.n_params * sizeof(double))
            self._ot = <double*> malloc(self.n_params * sizeof(double))
            if self._vt == NULL or self._ot == NULL:
                free(self._vt)
                free(self._ot)
                self._vt = NULL
                self._ot = NULL
                return False
        _feature_major_copy(K, dim, NULL, <double*> v, self._vt, True)
        self._fm = True
        self._fm_calls += 1
        return True

    cdef void _layout_leave(self, double* out) noexcept nogil:
        """Back to the parameter layout; ``out = _ot'`` if ``out`` is not NULL."""
        self._fm = False
        if out != NULL:
            _feature_major_copy(self.n_outputs, self._block, NULL, out, self._ot, False)

    # ---- compact form (sparse rows) -----------------------------------------------------------
    # The compact coordinates of a batch's bound are the features its rows touch (and the
    # intercept), all K classes of each, stored feature-major: compact row ``c = map[j]`` holds
    # ``v[k dim + j]`` at ``vc[c K + k]``; ``map[j] = -1`` for the other features. Products run
    # the feature-major loops through ``map``, so a solve touches O(m) instead of O(n_params)
    # memory per product and never transposes.

    cdef Py_ssize_t cy_bound_support(self, const Py_ssize_t* batch, Py_ssize_t size,
                                     Py_ssize_t* map) noexcept nogil:
        """Compact rows in increasing feature order; returns ``m = rows * K``."""
        cdef const double* d64
        cdef const float* d32
        cdef const int* ind
        cdef Py_ssize_t t, p, j, nnz, rows = 0, dim = self._block
        if self.support_map_size == 0:      # dense rows: no compact form
            return BoundObjectiveKernel.cy_bound_support(self, batch, size, map)
        for j in range(dim):
            map[j] = -1
        for t in range(size):
            nnz = self.data.row_view(batch[t], &d64, &d32, &ind)
            for p in range(nnz):
                map[ind[p]] = 0
        if self.data.has_intercept:
            map[self.data.n_features] = 0
        for j in range(dim):
            if map[j] == 0:
                map[j] = rows
                rows += 1
        return rows * self.n_outputs

    cdef double cy_support_gather(self, const Py_ssize_t* map, const double* v,
                                  double* vc) noexcept nogil:
        if self.support_map_size == 0:
            return BoundObjectiveKernel.cy_support_gather(self, map, v, vc)
        return _feature_major_copy(self.n_outputs, self._block, map, <double*> v, vc, True)

    cdef void cy_support_scatter(self, const Py_ssize_t* map, const double* vc,
                                 double* v) noexcept nogil:
        if self.support_map_size == 0:
            BoundObjectiveKernel.cy_support_scatter(self, map, vc, v)
            return
        _feature_major_copy(self.n_outputs, self._block, map, v, <double*> vc, False)

    cdef void cy_bound_matvec_support(self, const Py_ssize_t* map, Py_ssize_t m,
                                      const Py_ssize_t* batch, Py_ssize_t size,
                                      const double* factor, const double* vc,
                                      double* outc) noexcept nogil:
        if self.support_map_size == 0:
            BoundObjectiveKernel.cy_bound_matvec_support(self, map, m, batch, size, factor, vc,
                                                         outc)
            return
        self._fm = True
        self._fmap = map
        self._bound_products(batch, size, factor, vc, outc, m)
        self._fm = False
        self._fmap = NULL

    cdef int cy_bound_dense(self, const Py_ssize_t* batch, Py_ssize_t size,
                            const double* factor, double* out) noexcept nogil:
        """``Sigma_B = sum_i F_i' M_i F_i`` assembled per sample: block ``(a, b)`` gains
        ``M_i[a, b] x x'`` (``x`` with its intercept entry), ``O(K^2 nnz_i^2)`` per sample instead
        of ``n_params`` products."""
        cdef Py_ssize_t K = self.n_outputs, dim = self._block, n = self.n_params
        cdef Py_ssize_t nf = self.data.n_features
        cdef Py_ssize_t t, a, b, p, q, m, jp
        cdef double* u = &self._u[0]
        cdef double* M = <double*> malloc(K * K * sizeof(double))
        cdef Py_ssize_t* idx = <Py_ssize_t*> malloc((nf + 1) * sizeof(Py_ssize_t))
        cdef double* val = <double*> malloc((nf + 1) * sizeof(double))
        cdef double* row
        cdef double mab
        if M == NULL or idx == NULL or val == NULL:
            free(M)
            free(idx)
            free(val)
            return -1
        memset(out, 0, n * n * sizeof(double))
        for t in range(size):
            for a in range(K):          # M_i column by column: M_i e_a (M_i is symmetric)
                memset(u, 0, K * sizeof(double))
                u[a] = 1.0
                bound_factor_apply(factor + t * self.factor_size, K, u, M + a * K)
            m = _row_entries(self.data, batch[t], idx, val)
            for a in range(K):
                for p in range(m):
                    jp = a * dim + idx[p]
                    row = out + jp * n
                    for b in range(K):
                        mab = M[a * K + b] * val[p]
                        if mab == 0.0:
                            continue
                        for q in range(m):
                            row[b * dim + idx[q]] += mab * val[q]
        free(M)
        free(idx)
        free(val)
        return 0

    cdef void cy_rows_sqnorm(self, const Py_ssize_t* batch, Py_ssize_t size, const double* coef,
                             double* out) noexcept nogil:
        # f_i(y) = e_y (x) [x_i, 1]: the K blocks are orthogonal, so the gradient
        # sum_k coef_k f_i(k) has the squared norm (sum_k coef_k^2) ||[x_i, 1]||^2
        cdef PassJob job
        job.kind = PASS_ROWS_SQNORM
        job.batch = batch
        job.size = size
        job.cin = coef
        job.cout = out
        job.n_vec = 0
        job.out = NULL
        job.n_blocks = self._plan(size, self._read_work + ROW_WORK, 0)
        self._run_pass(&job)

    cdef void features_dot(self, Py_ssize_t i, const double* v, double* u) noexcept nogil:
        # One pass over the row's nonzeros for all K blocks (sparse rows); dense rows use the
        # 4-accumulator dot per block.
        cdef const double* d64
        cdef const float* d32
        cdef const int* ind
        cdef Py_ssize_t p, k, j, K = self.n_outputs, dim = self._block
        cdef Py_ssize_t nf = self.data.n_features
        cdef Py_ssize_t nnz = self.data.row_view(i, &d64, &d32, &ind)
        cdef double x
        cdef const double* vrow
        cdef const Py_ssize_t* fmap
        if self._fm:                # feature-major: v[j K + k] (compact: v[map[j] K + k])
            fmap = self._fmap
            if self.data.has_intercept:
                vrow = v + (fmap[nf] if fmap != NULL else nf) * K
                for k in range(K):
                    u[k] = vrow[k]
            else:
                memset(u, 0, K * sizeof(double))
            for p in range(nnz):
                _fm_prefetch(v, ind, fmap, p, nnz, K)
                x = d64[p] if d64 != NULL else <double> d32[p]
                vrow = v + _fm_row(ind, fmap, p) * K
                for k in range(K):
                    u[k] += x * vrow[k]
            return
        for k in range(K):
            u[k] = v[k * dim + nf] if self.data.has_intercept else 0.0
        if nnz == 0:
            return
        if ind == NULL:
            for k in range(K):
                if d64 != NULL:
                    u[k] += sq_dot(d64, v + k * dim, nf)
                else:
                    u[k] += sq_dot_f32(d32, v + k * dim, nf)
            return
        for p in range(nnz):
            j = ind[p]
            x = d64[p] if d64 != NULL else <double> d32[p]
            for k in range(K):
                u[k] += x * v[k * dim + j]

    cdef void features_axpy(self, Py_ssize_t i, const double* beta, double* out) noexcept nogil:
        cdef const double* d64
        cdef const float* d32
        cdef const int* ind
        cdef Py_ssize_t p, k, j, K = self.n_outputs, dim = self._block
        cdef Py_ssize_t nf = self.data.n_features
        cdef Py_ssize_t nnz = self.data.row_view(i, &d64, &d32, &ind)
        cdef double x
        cdef double* orow
        cdef const Py_ssize_t* fmap
        if self._fm:                # feature-major: out[j K + k] (compact: out[map[j] K + k])
            fmap = self._fmap
            if self.data.has_intercept:
                orow = out + (fmap[nf] if fmap != NULL else nf) * K
                for k in range(K):
                    orow[k] += beta[k]
            for p in range(nnz):
                _fm_prefetch(out, ind, fmap, p, nnz, K)
                x = d64[p] if d64 != NULL else <double> d32[p]
                orow = out + _fm_row(ind, fmap, p) * K
                for k in range(K):
                    orow[k] += beta[k] * x
            return
        if self.data.has_intercept:
            for k in range(K):
                out[k * dim + nf] += beta[k]
        if nnz == 0:
            return
        if ind == NULL:
            for k in range(K):
                if beta[k] == 0.0:
                    continue
                if d64 != NULL:
                    sq_axpy(beta[k], d64, out + k * dim, nf)
                else:
                    sq_axpy_f32(beta[k], d32, out + k * dim, nf)
            return
        for p in range(nnz):
            j = ind[p]
            x = d64[p] if d64 != NULL else <double> d32[p]
            for k in range(K):
                out[k * dim + j] += beta[k] * x


# ---- general log-linear model: stacked joint features -----------------------------------------

cdef class StackedLogLinearKernel(LogLinearKernel):
    """``f_i(y)`` = columns ``[y p, (y + 1) p)`` of row ``i`` of X; ``theta`` has ``p`` entries."""

    def __init__(self, RowData data, double lam, Py_ssize_t n_outputs, log_h=None):
        if data.has_intercept:
            raise ValueError("the general LogLinear objective has no intercept: include a "
                             "constant joint feature instead (fit_intercept=False)")
        if n_outputs < 2 or data.n_features % n_outputs != 0:
            raise ValueError(f"X has {data.n_features} columns, which is not n_outputs="
                             f"{n_outputs} blocks of equal length; row i must stack "
                             "f_i(0), ..., f_i(K-1)")
        p = data.n_features // n_outputs
        self.n_joint_features = p
        self._bind_loglinear(data, lam, 1, p, p, n_outputs)
        y = data.labels
        if np.any((y < 0) | (y >= n_outputs) | (y != np.floor(y))):
            raise ValueError(f"LogLinear labels must be output indices in 0..{n_outputs - 1}")
        self._has_h = log_h is not None
        if log_h is None:
            self._log_h = np.zeros((1, n_outputs))
            self._per_sample_h = False
        else:
            lh = np.ascontiguousarray(log_h, dtype=np.float64)
            if lh.ndim != 2 or lh.shape[1] != n_outputs or lh.shape[0] not in (1, data.n_samples):
                raise ValueError(f"log base measure must have shape ({data.n_samples}, "
                                 f"{n_outputs}) or (1, {n_outputs}), got {lh.shape}")
            if np.any(np.isnan(lh)) or np.any(lh == np.inf):
                raise ValueError("base measure must be finite and >= 0")
            self._per_sample_h = lh.shape[0] == data.n_samples and data.n_samples > 1
            obs = lh[np.arange(data.n_samples) if self._per_sample_h else 0, y.astype(np.intp)]
            if np.any(obs == -np.inf):
                bad = int(np.flatnonzero(obs == -np.inf)[0])
                raise ValueError(f"sample {bad}: its observed output has base measure h = 0 "
                                 "(infinite loss); give observed outputs h > 0")
            self._log_h = lh

    cdef void scores(self, Py_ssize_t i, const double* w, double* s) noexcept nogil:
        cdef Py_ssize_t y
        cdef const double* lh
        if self._has_h:
            lh = &self._log_h[i if self._per_sample_h else 0, 0]
            for y in range(self.n_outputs):
                s[y] = lh[y]
        else:
            memset(s, 0, self.n_outputs * sizeof(double))
        self._add_dot(i, w, s)

    cdef void features_dot(self, Py_ssize_t i, const double* v, double* u) noexcept nogil:
        memset(u, 0, self.n_outputs * sizeof(double))
        self._add_dot(i, v, u)

    cdef void _add_dot(self, Py_ssize_t i, const double* v, double* u) noexcept nogil:
        cdef const double* d64
        cdef const float* d32
        cdef const int* ind
        cdef Py_ssize_t j, y, idx, p = self.n_joint_features
        cdef Py_ssize_t nnz = self.data.row_view(i, &d64, &d32, &ind)
        if nnz == 0:          # (an empty CSR row: no pointers at all)
            return
        if ind == NULL:       # dense row
            for y in range(self.n_outputs):
                if d64 != NULL:
                    u[y] += sq_dot(d64 + y * p, v, p)
                else:
                    u[y] += sq_dot_f32(d32 + y * p, v, p)
            return
        for j in range(nnz):
            idx = ind[j]
            y = idx // p
            if d64 != NULL:
                u[y] += d64[j] * v[idx - y * p]
            else:
                u[y] += <double> d32[j] * v[idx - y * p]

    cdef void features_axpy(self, Py_ssize_t i, const double* beta, double* out) noexcept nogil:
        cdef const double* d64
        cdef const float* d32
        cdef const int* ind
        cdef Py_ssize_t j, y, idx, p = self.n_joint_features
        cdef Py_ssize_t nnz = self.data.row_view(i, &d64, &d32, &ind)
        if nnz == 0:          # (an empty CSR row: no pointers at all)
            return
        if ind == NULL:
            for y in range(self.n_outputs):
                if beta[y] == 0.0:
                    continue
                if d64 != NULL:
                    sq_axpy(beta[y], d64 + y * p, out, p)
                else:
                    sq_axpy_f32(beta[y], d32 + y * p, out, p)
            return
        for j in range(nnz):
            idx = ind[j]
            y = idx // p
            if d64 != NULL:
                out[idx - y * p] += beta[y] * d64[j]
            else:
                out[idx - y * p] += beta[y] * <double> d32[j]


# ---- binary logistic ---------------------------------------------------------------------------

cdef class BinaryLogisticKernel(BoundObjectiveKernel):
    """``Omega = {-1, +1}``, ``f_i(y) = (y/2) [x_i, 1]``: ``log Z_i - s_{y_i} = log(1 + e^{-m})``
    with the margin ``m = y_i x_i . w``, evaluated as ``log1p(exp(-|m|)) + max(0, -m)``."""

    def __init__(self, RowData data, double lam):
        self._bind(data, lam, 1)
        self.n_outputs = 2
        self.factor_size = 1
        y = data.labels
        if np.any((y != 1.0) & (y != -1.0)):
            raise ValueError("binary logistic labels must be encoded as -1/+1")
        self.margin = LogisticKernel(data, lam)
        self.n_scores = 1
        self.hess_size = 1
        self.score_hessian_factor = True
        self.score_losses = True

    # The loss is the logistic margin loss: values and gradients come from that kernel, bound
    # to the same data and lam (one implementation of the margin loops).
    cdef double cy_gradient(self, const double* w, const Py_ssize_t* batch, Py_ssize_t size,
                            double* grad) noexcept nogil:
        return self.margin.cy_gradient(w, batch, size, grad)

    cdef double cy_value(self, const double* w) noexcept nogil:
        return self.margin.cy_value(w)

    cdef double cy_full_gradient(self, const double* w, double* grad) noexcept nogil:
        return self.margin.cy_full_gradient(w, grad)

    cdef double cy_score_derivatives(self, const double* w, const Py_ssize_t* batch,
                                     Py_ssize_t size, double* coef) noexcept nogil:
        return self.margin.cy_score_derivatives(w, batch, size, coef)

    cdef double cy_scores_loss(self, const Py_ssize_t* batch, Py_ssize_t size, const double* s,
                               double* coef) noexcept nogil:
        return self.margin.cy_scores_loss(batch, size, s, coef)

    cdef double cy_scores_line(self, const Py_ssize_t* batch, Py_ssize_t size, const double* z,
                               const double* u, double a, double* d2) noexcept nogil:
        return self.margin.cy_scores_line(batch, size, z, u, a, d2)

    cdef void cy_rows_axpy(self, const Py_ssize_t* batch, Py_ssize_t size, const double* coef,
                           double scale, double* out) noexcept nogil:
        self.margin.cy_rows_axpy(batch, size, coef, scale, out)

    cdef void cy_rows_dot(self, const Py_ssize_t* batch, Py_ssize_t size, const double* v,
                          double* out) noexcept nogil:
        self.margin.cy_rows_dot(batch, size, v, out)

    cdef void cy_rows_sqnorm(self, const Py_ssize_t* batch, Py_ssize_t size, const double* coef,
                             double* out) noexcept nogil:
        self.margin.cy_rows_sqnorm(batch, size, coef, out)

    cdef int cy_hessian_factors(self, const double* w, const Py_ssize_t* batch, Py_ssize_t size,
                                double* D) noexcept nogil:
        return self.margin.cy_hessian_factors(w, batch, size, D)

    cdef double cy_score_hessian_factor(self, Py_ssize_t i, double score) noexcept nogil:
        return self.margin.cy_score_hessian_factor(i, score)

    cdef void cy_hessian_product(self, const Py_ssize_t* batch, Py_ssize_t size, const double* D,
                                 const double* v, double* out) noexcept nogil:
        self.margin.cy_hessian_product(batch, size, D, v, out)

    cdef int cy_hessian_diagonal(self, const Py_ssize_t* batch, Py_ssize_t size, const double* D,
                                 double* out) noexcept nogil:
        return self.margin.cy_hessian_diagonal(batch, size, D, out)

    cdef int cy_bound(self, const double* w, const Py_ssize_t* batch, Py_ssize_t size,
                      double* factor, double* mu) noexcept nogil:
        # Algorithm 1 over (y = -1, y = +1): the first output meets z -> 0+ (weight 0,
        # r = f(-1)); the second has l = s(+1) - s(-1) = x.w, weight tanh(l/2)/(2l), and column
        # f(+1) - f(-1) = x. So S_i = w(x.w) x x'.
        cdef PassJob job
        if mu != NULL:
            memset(mu, 0, self.n_params * sizeof(double))
        job.kind = PASS_BOUND
        job.batch = batch
        job.size = size
        job.w = w
        job.cout = factor
        job.scale = 1.0 / size
        job.n_vec = self.n_params if mu != NULL else 0
        job.out = mu
        job.n_blocks = self._plan(size, (2 if mu != NULL else 1) * self._read_work + ROW_WORK,
                                  job.n_vec)
        return -1 if self._run_pass(&job) != 0 else 0

    cdef void cy_bound_matvec(self, const Py_ssize_t* batch, Py_ssize_t size,
                              const double* factor, const double* v, double* out) noexcept nogil:
        cdef PassJob job
        memset(out, 0, self.n_params * sizeof(double))
        job.kind = PASS_BOUND_MATVEC
        job.batch = batch
        job.size = size
        job.cin = factor
        job.v = v
        job.n_vec = self.n_params
        job.out = out
        job.n_blocks = self._plan(size, 2 * self._read_work + 1, self.n_params)
        self._run_pass(&job)

    cdef int _pass_block(self, PassJob* job, Py_ssize_t t0, Py_ssize_t t1, double* out,
                         double* sums) noexcept nogil:
        """The bound's loops over positions ``[t0, t1)`` (the other passes are the margin
        kernel's, which runs its own)."""
        cdef const Py_ssize_t* batch = job.batch
        cdef Py_ssize_t t, i
        cdef double u, yi, gi, c, a
        cdef double inv = job.scale
        sums[0] = 0.0
        sums[1] = 0.0
        if job.kind == PASS_BOUND:
            for t in range(t0, t1):
                i = batch[t]
                u = self.data.row_dot(i, job.w)
                if not isfinite(u):
                    return -1
                gi = self.data.grad_weight[i]
                job.cout[t] = inv * gi * bound_weight(u)
                if out != NULL:
                    yi = self.data.y[i]
                    c = inv * gi * yi * self.margin.dloss_dmargin(yi * u)
                    if c != 0.0:
                        self.data.row_axpy(i, c, out)
        elif job.kind == PASS_BOUND_MATVEC:
            for t in range(t0, t1):
                i = batch[t]
                a = job.cin[t] * self.data.row_dot(i, job.v)
                if a != 0.0:
                    self.data.row_axpy(i, a, out)
        else:
            return -3
        return 0

    cdef int cy_bound_dense(self, const Py_ssize_t* batch, Py_ssize_t size,
                            const double* factor, double* out) noexcept nogil:
        """``Sigma_B = sum_i c_i x_i x_i'`` (``x_i`` with its intercept entry) assembled per
        sample: O(nnz_i^2) each instead of ``n_params`` products."""
        cdef Py_ssize_t n = self.n_params, nf = self.data.n_features
        cdef Py_ssize_t t, p, q, m
        cdef Py_ssize_t* idx = <Py_ssize_t*> malloc((nf + 1) * sizeof(Py_ssize_t))
        cdef double* val = <double*> malloc((nf + 1) * sizeof(double))
        cdef double* row
        cdef double cx
        if idx == NULL or val == NULL:
            free(idx)
            free(val)
            return -1
        memset(out, 0, n * n * sizeof(double))
        for t in range(size):
            if factor[t] == 0.0:
                continue
            m = _row_entries(self.data, batch[t], idx, val)
            for p in range(m):
                cx = factor[t] * val[p]
                row = out + idx[p] * n
                for q in range(m):
                    row[idx[q]] += cx * val[q]
        free(idx)
        free(val)
        return 0

    # ---- Python-level diagnostics ------------------------------------------------------------
    def _row(self, Py_ssize_t i):
        if i < 0 or i >= self.data.n_samples:
            raise IndexError(f"sample {i} out of range for {self.data.n_samples} samples")
        x = np.zeros(self.n_params)
        self.data.axpy(i, 1.0, x)
        return x

    def feature_matrix(self, Py_ssize_t i):
        """``F_i`` with rows ``f_i(-1) = -x/2`` and ``f_i(+1) = x/2``."""
        x = self._row(i)
        return np.vstack([-0.5 * x, 0.5 * x])

    def scores_of(self, w, Py_ssize_t i):
        """``(s_{-1}, s_{+1}) = (-x.w/2, x.w/2)``."""
        u = float(self._row(i) @ np.asarray(w, dtype=np.float64))
        return np.array([-0.5 * u, 0.5 * u])

    def labels_of(self):
        """Observed output index (0 for y = -1, 1 for y = +1) of every sample."""
        return (self.data.labels > 0).astype(np.intp)

    def sample_bound(self, w, Py_ssize_t i):
        x = self._row(i)
        u = float(x @ np.asarray(w, dtype=np.float64))
        logz = 0.5 * abs(u) + float(np.log1p(np.exp(-abs(u))))
        r = (1.0 / (1.0 + np.exp(-u)) - 0.5) * x
        return logz, r, np.column_stack([np.zeros_like(x), np.sqrt(bound_weight(u)) * x])

    def bound_columns(self, w, batch):
        fac, _ = self.bound_factors(w, batch)
        b = self._checked_batch(batch)
        return sp.csc_matrix(np.column_stack([np.sqrt(fac[t, 0]) * self._row(int(i))
                                              for t, i in enumerate(b)]))

    def log_partition(self, w, Py_ssize_t i):
        u = float(self._row(i) @ np.asarray(w, dtype=np.float64))
        return 0.5 * abs(u) + float(np.log1p(np.exp(-abs(u))))

