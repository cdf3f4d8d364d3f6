# cython: language_level=3
"""Regression losses ``l(s, y)`` of the linear score ``s = w . x + b`` against a real target.

* squared error ``l = (s - y)^2 / 2`` (ridge regression with the L2 term);
* Huber's loss (Huber, *Robust Estimation of a Location Parameter*, Ann. Math. Stat. 1964)
  with threshold ``epsilon`` on the residual ``r = s - y`` and a fixed scale of 1:
  ``r^2 / 2`` for ``|r| <= epsilon``, ``epsilon |r| - epsilon^2 / 2`` beyond -- half of
  scikit-learn's ``HuberRegressor`` loss ``H_epsilon`` at scale ``sigma = 1`` (that estimator
  also fits ``sigma``; see ``docs/regression.md`` for the correspondence);
* Poisson regression with the log link (a generalised linear model, McCullagh & Nelder,
  *Generalized Linear Models*, 1989, ch. 6): the negative log-likelihood of ``y ~ Poisson(
  exp(s))`` without its constant ``log y!``, ``l = exp(s) - y s`` (``y >= 0``). ``exp(s)``
  overflows for ``s > log(DBL_MAX) ~ 709.78``: there the loss and its derivatives are
  ``+inf`` on purpose, without evaluating ``exp`` (no floating-point overflow), which the
  solver's divergence monitor and line searches treat as a rejected step / a diverged run.

The passes are those of ``_base.pxd`` (``PassJob``), each row's loss read through
``loss_and_dloss(s, y)``; the score Hessian factor of sample ``i`` is ``g_i l''(s_i, y_i)``.
"""

import numpy as np

from libc.math cimport INFINITY, NAN, exp, fabs, isfinite
from libc.string cimport memset

from sqnopt._parallel cimport ROW_WORK
from sqnopt.data._rows cimport RowData
from sqnopt.objectives._base cimport (
    ObjectiveKernel, PassJob,
    PASS_GRADIENT, PASS_FULL_GRADIENT, PASS_VALUE, PASS_SCORE_DERIV, PASS_SCORES_LOSS,
    PASS_SCORES_LINE, PASS_ROWS_AXPY, PASS_ROWS_DOT, PASS_ROWS_SQNORM, PASS_HESS_FACTORS,
    PASS_HESS_PRODUCT, PASS_HESS_DIAG,
)

#: the largest score whose exp is finite in double precision (log(DBL_MAX))
cdef double LOG_MAX = 709.782712893384


cdef inline bint _all_zero(const double* w, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t j
    for j in range(n):
        if w[j] != 0.0:
            return False
    return True


cdef class ScoreObjectiveKernel(ObjectiveKernel):
    """Loss of the score ``s = x . w + b`` against a real target ``y`` (see ``.pxd``)."""

    def __init__(self, RowData data, double lam):
        self._bind(data, lam, 1)
        self.n_scores = 1
        self.hess_size = 1
        self.score_hessian_factor = True
        self.score_losses = True

    cdef double loss(self, double score, double y) noexcept nogil:
        return NAN

    cdef double loss_and_dloss(self, double score, double y, double* dloss) noexcept nogil:
        dloss[0] = NAN
        return NAN

    cdef double d2loss(self, double score, double y) noexcept nogil:
        return NAN

    cdef double dloss_and_d2loss(self, double score, double y, double* d2) noexcept nogil:
        cdef double d
        self.loss_and_dloss(score, y, &d)
        d2[0] = self.d2loss(score, y)
        return d

    def batch_value(self, const double[::1] w, const Py_ssize_t[::1] batch) -> float:
        """The minibatch objective at ``w`` from the batch rows' scores and the regulariser
        (no gradient vector)."""
        self._check_w(w)
        cdef Py_ssize_t i, size = batch.shape[0]
        if size < 1:
            raise ValueError("batch must contain at least one index")
        for i in range(size):
            if batch[i] < 0 or batch[i] >= self.data.n_samples:
                raise IndexError(f"batch index {batch[i]} out of range")
        cdef double[::1] coef = np.empty(size)
        return (self.cy_score_derivatives(&w[0], &batch[0], size, &coef[0]) / size
                + self._reg_value(&w[0]))

    def py_loss_and_dloss(self, scores, targets):
        """``(loss(s, y), d loss / d s)`` elementwise over arrays of scores and targets."""
        s = np.ascontiguousarray(scores, dtype=np.float64).reshape(-1)
        t = np.ascontiguousarray(targets, dtype=np.float64).reshape(-1)
        if s.shape[0] != t.shape[0]:
            raise ValueError("scores and targets must have the same length")
        out = np.empty(s.shape[0])
        dout = np.empty(s.shape[0])
        cdef const double[::1] sv = s
        cdef const double[::1] tv = t
        cdef double[::1] o = out
        cdef double[::1] d = dout
        cdef Py_ssize_t j
        for j in range(sv.shape[0]):
            o[j] = self.loss_and_dloss(sv[j], tv[j], &d[j])
        return out, dout

    def py_d2loss(self, scores, targets):
        """``d^2 loss / d s^2`` elementwise over arrays of scores and targets."""
        s = np.ascontiguousarray(scores, dtype=np.float64).reshape(-1)
        t = np.ascontiguousarray(targets, dtype=np.float64).reshape(-1)
        if s.shape[0] != t.shape[0]:
            raise ValueError("scores and targets must have the same length")
        out = np.empty(s.shape[0])
        cdef const double[::1] sv = s
        cdef const double[::1] tv = t
        cdef double[::1] o = out
        cdef Py_ssize_t j
        for j in range(sv.shape[0]):
            o[j] = self.d2loss(sv[j], tv[j])
        return out

    # ---- passes (the jobs as the margin losses' in _base.pyx; the loops in _pass_block) ------

    cdef int cy_hessian_factors(self, const double* w, const Py_ssize_t* batch, Py_ssize_t size,
                                double* D) noexcept nogil:
        cdef PassJob job
        job.kind = PASS_HESS_FACTORS
        job.batch = batch
        job.size = size
        job.w = w
        job.cout = D
        job.n_vec = 0
        job.out = NULL
        job.n_blocks = self._plan(size, self._read_work + ROW_WORK, 0)
        return -1 if self._run_pass(&job) != 0 else 0

    cdef double cy_score_hessian_factor(self, Py_ssize_t i, double score) noexcept nogil:
        return self.data.grad_weight[i] * self.d2loss(score, self.data.y[i])

    cdef void cy_hessian_product(self, const Py_ssize_t* batch, Py_ssize_t size, const double* D,
                                 const double* v, double* out) noexcept nogil:
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
        job.n_blocks = self._plan(size, 2 * self._read_work + 1, self.n_params)
        self._run_pass(&job)
        self._reg_gradient(v, out)

    cdef int cy_hessian_diagonal(self, const Py_ssize_t* batch, Py_ssize_t size, const double* D,
                                 double* out) noexcept nogil:
        cdef PassJob job
        cdef Py_ssize_t k
        memset(out, 0, self.n_params * sizeof(double))
        job.kind = PASS_HESS_DIAG
        job.batch = batch
        job.size = size
        job.cin = D
        job.scale = 1.0 / size
        job.n_vec = self.n_params
        job.out = out
        job.n_blocks = self._plan(size, self._read_work + 1, self.n_params)
        self._run_pass(&job)
        for k in range(self.data.n_features):
            out[k] += self.lam
        return 0

    cdef double cy_gradient(self, const double* w, const Py_ssize_t* batch, Py_ssize_t size,
                            double* grad) noexcept nogil:
        cdef PassJob job
        memset(grad, 0, self.n_params * sizeof(double))
        job.kind = PASS_GRADIENT
        job.batch = batch
        job.size = size
        job.weights = self.data.grad_weight
        job.w = w
        job.scale = 1.0 / size
        job.n_vec = self.n_params
        job.out = grad
        job.n_blocks = self._plan(size, 2 * self._read_work + ROW_WORK, self.n_params)
        self._run_pass(&job)
        return job.result[0] * job.scale + self._reg_gradient_value(w, grad)

    cdef double cy_score_derivatives(self, const double* w, const Py_ssize_t* batch,
                                     Py_ssize_t size, double* coef) noexcept nogil:
        cdef PassJob job
        job.kind = PASS_SCORE_DERIV
        job.batch = batch
        job.size = size
        job.w = w
        job.cout = coef
        job.n_vec = 0
        job.out = NULL
        job.n_blocks = self._plan(size, self._read_work + ROW_WORK, 0)
        self._run_pass(&job)
        return job.result[0]

    cdef double cy_scores_loss(self, const Py_ssize_t* batch, Py_ssize_t size, const double* s,
                               double* coef) noexcept nogil:
        cdef PassJob job
        job.kind = PASS_SCORES_LOSS
        job.batch = batch
        job.size = size
        job.cin = s
        job.cout = coef
        job.n_vec = 0
        job.out = NULL
        job.n_blocks = self._plan(size, ROW_WORK, 0)
        self._run_pass(&job)
        return job.result[0]

    cdef double cy_scores_line(self, const Py_ssize_t* batch, Py_ssize_t size, const double* z,
                               const double* u, double a, double* d2) noexcept nogil:
        # s = z - a u: d loss / da = -u l'(s), d2 = u^2 l''(s)
        cdef PassJob job
        job.kind = PASS_SCORES_LINE
        job.batch = batch
        job.size = size
        job.cin = z
        job.cin2 = u
        job.a = a
        job.n_vec = 0
        job.out = NULL
        job.n_blocks = self._plan(size, ROW_WORK, 0)
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
        job.n_blocks = self._plan(size, self._read_work + 1, self.n_params)
        self._run_pass(&job)

    cdef void cy_rows_dot(self, const Py_ssize_t* batch, Py_ssize_t size, const double* v,
                          double* out) noexcept nogil:
        cdef PassJob job
        job.kind = PASS_ROWS_DOT
        job.batch = batch
        job.size = size
        job.v = v
        job.cout = out
        job.n_vec = 0
        job.out = NULL
        job.n_blocks = self._plan(size, self._read_work + 1, 0)
        self._run_pass(&job)

    cdef void cy_rows_sqnorm(self, const Py_ssize_t* batch, Py_ssize_t size, const double* coef,
                             double* out) noexcept nogil:
        cdef PassJob job
        job.kind = PASS_ROWS_SQNORM
        job.batch = batch
        job.size = size
        job.cin = coef
        job.cout = out
        job.n_vec = 0
        job.out = NULL
        job.n_blocks = self._plan(size, self._read_work + 1, 0)
        self._run_pass(&job)

    cdef double cy_value(self, const double* w) noexcept nogil:
        cdef PassJob job
        cdef Py_ssize_t N = self.data.n_samples
        job.kind = PASS_VALUE
        job.batch = NULL
        job.size = N
        job.weights = self.data.sample_weight
        job.w = w
        job.flag = _all_zero(w, self.n_params)
        job.n_vec = 0
        job.out = NULL
        job.n_blocks = self._plan(N, self._read_work + ROW_WORK, 0)
        self._run_pass(&job)
        return job.result[0] / N + self._reg_value(w)

    cdef double cy_full_gradient(self, const double* w, double* grad) noexcept nogil:
        cdef PassJob job
        cdef Py_ssize_t N = self.data.n_samples
        memset(grad, 0, self.n_params * sizeof(double))
        job.kind = PASS_FULL_GRADIENT
        job.batch = NULL
        job.size = N
        job.weights = self.data.sample_weight
        job.w = w
        job.scale = 1.0 / N
        job.n_vec = self.n_params
        job.out = grad
        job.n_blocks = self._plan(N, 2 * self._read_work + ROW_WORK, self.n_params)
        self._run_pass(&job)
        return job.result[0] * job.scale + self._reg_gradient_value(w, grad)

    cdef int _pass_block(self, PassJob* job, Py_ssize_t t0, Py_ssize_t t1, double* out,
                         double* sums) noexcept nogil:
        """The serial loops of the passes over positions ``[t0, t1)`` (``_base.pxd``)."""
        cdef int kind = job.kind
        cdef const Py_ssize_t* batch = job.batch
        cdef Py_ssize_t t, i, p, nnz, k
        cdef Py_ssize_t nf = self.data.n_features
        cdef bint intercept = self.data.has_intercept
        cdef const double* d64 = NULL
        cdef const float* d32 = NULL
        cdef const int* ind = NULL
        cdef const double* w = job.w
        cdef const double* cin = job.cin
        cdef const double* u
        cdef double* cout = job.cout
        cdef const double* y = self.data.y
        cdef const double* cw = job.weights
        cdef double inv = job.scale
        cdef double s, gi, dl, h, c, x, ut, a, s1 = 0.0, total = 0.0
        sums[0] = 0.0
        sums[1] = 0.0
        if kind == PASS_GRADIENT:
            for t in range(t0, t1):
                i = batch[t]
                gi = cw[i]
                total += gi * self.loss_and_dloss(self.data.row_dot(i, w), y[i], &dl)
                c = inv * gi * dl
                if c != 0.0:
                    self.data.row_axpy(i, c, out)
            sums[0] = total
        elif kind == PASS_FULL_GRADIENT:
            for i in range(t0, t1):
                gi = cw[i]
                total += gi * self.loss_and_dloss(self.data.row_dot(i, w), y[i], &dl)
                c = inv * gi * dl
                if c != 0.0:
                    self.data.row_axpy(i, c, out)
            sums[0] = total
        elif kind == PASS_VALUE:
            if job.flag:
                for i in range(t0, t1):
                    total += cw[i] * self.loss(0.0, y[i])
            else:
                for i in range(t0, t1):
                    total += cw[i] * self.loss(self.data.row_dot(i, w), y[i])
            sums[0] = total
        elif kind == PASS_SCORE_DERIV:
            cw = self.data.grad_weight
            for t in range(t0, t1):
                i = batch[t]
                gi = cw[i]
                total += gi * self.loss_and_dloss(self.data.row_dot(i, w), y[i], &dl)
                cout[t] = gi * dl
            sums[0] = total
        elif kind == PASS_SCORES_LOSS:
            cw = self.data.grad_weight
            for t in range(t0, t1):
                i = batch[t]
                gi = cw[i]
                total += gi * self.loss_and_dloss(cin[t], y[i], &dl)
                if cout != NULL:
                    cout[t] = gi * dl
            sums[0] = total
        elif kind == PASS_SCORES_LINE:
            cw = self.data.grad_weight
            u = job.cin2
            a = job.a
            for t in range(t0, t1):
                ut = u[t]
                if ut == 0.0:
                    continue
                i = batch[t]
                gi = cw[i]
                dl = self.dloss_and_d2loss(cin[t] - a * ut, y[i], &h)
                s1 -= gi * dl * ut
                total += gi * h * (ut * ut)
            sums[0] = s1
            sums[1] = total
        elif kind == PASS_ROWS_AXPY:
            for t in range(t0, t1):
                if cin[t] != 0.0:
                    self.data.row_axpy(batch[t], inv * cin[t], out)
        elif kind == PASS_ROWS_DOT:
            for t in range(t0, t1):
                cout[t] = self.data.row_dot(batch[t], job.v)
        elif kind == PASS_ROWS_SQNORM:
            for t in range(t0, t1):
                cout[t] = (cin[t] * cin[t]) * self.data.row_sqnorm(batch[t])
        elif kind == PASS_HESS_FACTORS:
            cw = self.data.grad_weight
            for t in range(t0, t1):
                i = batch[t]
                s = self.data.row_dot(i, w)
                if not isfinite(s):
                    return -1
                h = self.d2loss(s, y[i])
                if not isfinite(h):
                    return -1
                cout[t] = cw[i] * h
        elif kind == PASS_HESS_PRODUCT:
            for t in range(t0, t1):
                if cin[t] != 0.0:
                    c = inv * cin[t] * self.data.row_dot(batch[t], job.v)
                    if c != 0.0:
                        self.data.row_axpy(batch[t], c, out)
        elif kind == PASS_HESS_DIAG:
            for t in range(t0, t1):
                c = inv * cin[t]
                if c == 0.0:
                    continue
                nnz = self.data.row_view(batch[t], &d64, &d32, &ind)
                for p in range(nnz):
                    k = p if ind == NULL else ind[p]
                    x = d64[p] if d64 != NULL else d32[p]
                    out[k] += c * (x * x)
                if intercept:
                    out[nf] += c
        else:
            return -3
        return 0


cdef class SquaredErrorKernel(ScoreObjectiveKernel):
    """``l(s, y) = (s - y)^2 / 2``; ``dl/ds = s - y``; ``d2l/ds2 = 1``."""

    cdef double loss(self, double score, double y) noexcept nogil:
        cdef double r = score - y
        return 0.5 * r * r

    cdef double loss_and_dloss(self, double score, double y, double* dloss) noexcept nogil:
        cdef double r = score - y
        dloss[0] = r
        return 0.5 * r * r

    cdef double d2loss(self, double score, double y) noexcept nogil:
        return 1.0

    cdef double dloss_and_d2loss(self, double score, double y, double* d2) noexcept nogil:
        d2[0] = 1.0
        return score - y


cdef class HuberKernel(ScoreObjectiveKernel):
    """Huber's loss of ``r = s - y``: ``r^2 / 2`` for ``|r| <= epsilon``, else
    ``epsilon |r| - epsilon^2 / 2``; ``dl/ds = clip(r, -epsilon, epsilon)``; the generalised
    second derivative is 1 inside the threshold, 0 beyond."""

    def __init__(self, RowData data, double lam, double epsilon):
        if not (isfinite(epsilon) and epsilon > 0.0):
            raise ValueError(f"epsilon must be a finite number > 0, got {epsilon!r}")
        ScoreObjectiveKernel.__init__(self, data, lam)
        self.epsilon = epsilon

    cdef double loss(self, double score, double y) noexcept nogil:
        cdef double r = score - y
        cdef double ar = fabs(r)
        if ar <= self.epsilon:
            return 0.5 * r * r
        return self.epsilon * (ar - 0.5 * self.epsilon)

    cdef double loss_and_dloss(self, double score, double y, double* dloss) noexcept nogil:
        cdef double r = score - y
        cdef double ar = fabs(r)
        if ar <= self.epsilon:
            dloss[0] = r
            return 0.5 * r * r
        dloss[0] = self.epsilon if r > 0.0 else -self.epsilon
        return self.epsilon * (ar - 0.5 * self.epsilon)

    cdef double d2loss(self, double score, double y) noexcept nogil:
        return 1.0 if fabs(score - y) <= self.epsilon else 0.0

    cdef double dloss_and_d2loss(self, double score, double y, double* d2) noexcept nogil:
        cdef double r = score - y
        if fabs(r) <= self.epsilon:
            d2[0] = 1.0
            return r
        d2[0] = 0.0
        return self.epsilon if r > 0.0 else -self.epsilon


cdef class PoissonKernel(ScoreObjectiveKernel):
    """``l(s, y) = exp(s) - y s`` (``y >= 0``); ``dl/ds = exp(s) - y``; ``d2l/ds2 = exp(s)``.
    Beyond ``s = log(DBL_MAX)`` all three are ``+inf`` (``exp`` not evaluated)."""

    cdef double loss(self, double score, double y) noexcept nogil:
        if score > LOG_MAX:
            return INFINITY
        return exp(score) - y * score

    cdef double loss_and_dloss(self, double score, double y, double* dloss) noexcept nogil:
        cdef double e
        if score > LOG_MAX:
            dloss[0] = INFINITY
            return INFINITY
        e = exp(score)
        dloss[0] = e - y
        return e - y * score

    cdef double d2loss(self, double score, double y) noexcept nogil:
        if score > LOG_MAX:
            return INFINITY
        return exp(score)

    cdef double dloss_and_d2loss(self, double score, double y, double* d2) noexcept nogil:
        cdef double e
        if score > LOG_MAX:
            d2[0] = INFINITY
            return INFINITY
        e = exp(score)
        d2[0] = e
        return e - y
