# cython: language_level=3
"""Compiled kernel Pegasos: Mercer kernels in the primal, with the alpha representation.

Shalev-Shwartz, Singer, Srebro & Cotter, *Pegasos* (Math. Programming 2011), Sec. 4: with a
feature map ``phi`` and ``K(x, x') = phi(x) . phi(x')`` every Pegasos iterate is a combination of
the training points, ``w_t = c_t sum_j alpha_j y_j phi(x_j)``, so the algorithm runs on the
coefficients alone. We keep the scalar ``c`` apart (as in the linear scaled loop) so that the
shrinkage ``(1 - eta_t lam)`` and the projection onto ``{||w|| <= 1/sqrt(lam)}`` are O(1):

    f_i       = sum_{j in SV} alpha_j y_j K(x_i, x_j)          (margin m_i = y_i (c f_i + b))
    c        <- (1 - eta_t lam) c,  nu <- (1 - eta_t lam)^2 nu          (nu = ||w||^2)
    for i in A_t with m_i < 1:  delta = eta_t / k
        nu      <- nu + 2 delta y_i (w . phi(x_i)) + delta^2 K(x_i, x_i)
        alpha_i <- alpha_i + delta / c
    if nu > 1/lam:  c <- c / sqrt(lam nu),  nu <- 1/lam

With the linear kernel this is linear Pegasos exactly (up to rounding): the same iterates as
``Solver.pegasos(...)`` for the same sampler draws. For integer counts as in the paper's Fig. 3
(``alpha_j`` = number of times ``j`` violated the margin) divide by ``lam t k``; projection and
``c`` make the coefficients real numbers in general.

Kernel values come from dot products: each kernel is ``K(dot, ||x_i||^2, ||x_j||^2)``; a row is
scattered into a dense buffer once and dotted with every support vector (any storage of
:class:`~sqnopt.data.RowData`).
"""

import numpy as np

from libc.math cimport exp, fabs, pow, sqrt

from sqnopt.data._rows cimport RowData
from sqnopt.solver._sampler cimport Sampler


cdef class MercerKernel:
    """``K(x_i, x_j)`` as a function of ``x_i . x_j``, ``||x_i||^2`` and ``||x_j||^2``."""

    cdef double cy_eval(self, double dot, double sq_i, double sq_j) noexcept nogil:
        return dot

    def __call__(self, double dot, double sq_i, double sq_j) -> float:
        return self.cy_eval(dot, sq_i, sq_j)


cdef class LinearMercer(MercerKernel):
    """``K = x_i . x_j``."""
    pass


cdef class RBFMercer(MercerKernel):
    """``K = exp(-gamma ||x_i - x_j||^2)``, the squared distance clipped at 0."""

    cdef readonly double gamma

    def __init__(self, double gamma):
        if not gamma > 0:
            raise ValueError("gamma must be > 0")
        self.gamma = gamma

    cdef double cy_eval(self, double dot, double sq_i, double sq_j) noexcept nogil:
        cdef double d2 = sq_i + sq_j - 2.0 * dot
        return exp(-self.gamma * (d2 if d2 > 0.0 else 0.0))


cdef class PolyMercer(MercerKernel):
    """``K = (gamma x_i . x_j + coef0)^degree``."""

    cdef readonly double gamma
    cdef readonly double coef0
    cdef readonly int degree

    def __init__(self, double gamma, double coef0, int degree):
        if not gamma > 0 or degree < 1:
            raise ValueError("gamma must be > 0 and degree >= 1")
        self.gamma = gamma
        self.coef0 = coef0
        self.degree = degree

    cdef double cy_eval(self, double dot, double sq_i, double sq_j) noexcept nogil:
        cdef double base = self.gamma * dot + self.coef0
        cdef double out = 1.0
        cdef int p
        for p in range(self.degree):
            out *= base
        return out


cdef class KernelPegasosLoop:
    """The compiled iteration (see the module docstring). ``rows`` has no intercept column."""

    cdef RowData rows
    cdef MercerKernel kernel
    cdef Sampler sampler
    cdef double lam
    cdef Py_ssize_t k
    cdef bint project, fit_intercept
    cdef double[::1] alpha      # per training sample; w = c sum_j alpha_j y_j phi(x_j)
    cdef double[::1] sqn        # ||x_j||^2
    cdef double[::1] buf        # a dense copy of one row
    cdef Py_ssize_t[::1] sv     # support indices, in order of first use
    cdef unsigned char[::1] in_sv
    cdef Py_ssize_t[::1] batch
    cdef double[::1] f, kcross  # per batch position: sum_j alpha_j y_j K(x_i, x_j); scratch
    cdef readonly Py_ssize_t n_sv
    cdef readonly Py_ssize_t t
    cdef readonly double scale          # c
    cdef readonly double sqnorm         # nu = ||w||^2
    cdef readonly double intercept      # b
    cdef readonly Py_ssize_t n_kernel_evals

    def __init__(self, RowData rows, const double[::1] row_sqnorms, MercerKernel kernel,
                 Sampler sampler, double lam, Py_ssize_t batch_size, bint project,
                 bint fit_intercept):
        if rows.has_intercept:
            raise ValueError("rows must not carry an intercept column")
        if not lam > 0:
            raise ValueError("lam must be > 0")
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        self.rows = rows
        self.kernel = kernel
        self.sampler = sampler
        self.lam = lam
        self.k = batch_size
        self.project = project
        self.fit_intercept = fit_intercept
        n = rows.n_samples
        self.alpha = np.zeros(n)
        if row_sqnorms.shape[0] != n:
            raise ValueError("row_sqnorms must hold one entry per sample")
        self.sqn = np.array(row_sqnorms, dtype=np.float64)
        self.buf = np.zeros(rows.n_features)
        self.sv = np.zeros(n, dtype=np.intp)
        self.in_sv = np.zeros(n, dtype=np.uint8)
        self.batch = np.zeros(batch_size, dtype=np.intp)
        self.f = np.zeros(batch_size)
        self.kcross = np.zeros(batch_size)
        self.n_sv = 0
        self.t = 0
        self.scale = 1.0
        self.sqnorm = 0.0
        self.intercept = 0.0
        self.n_kernel_evals = 0

    @property
    def support(self):
        """Support indices (samples with a coefficient, in order of first use)."""
        return np.array(self.sv[:self.n_sv])

    @property
    def coefficients(self):
        """``c * alpha_j * y_j`` for the support indices: ``w = sum_j coef_j phi(x_j)``."""
        idx = np.asarray(self.sv[:self.n_sv])
        return self.scale * np.asarray(self.alpha)[idx] * self.rows.labels[idx]

    cdef double _kernel_sum(self, Py_ssize_t i) noexcept nogil:
        """``sum_{j in SV} alpha_j y_j K(x_i, x_j)``."""
        cdef Py_ssize_t p, j
        cdef double acc = 0.0, sq_i = self.sqn[i]
        cdef double* buf = &self.buf[0]
        if self.n_sv == 0:
            return 0.0
        self.rows.row_axpy(i, 1.0, buf)           # buf = x_i
        for p in range(self.n_sv):
            j = self.sv[p]
            acc += self.alpha[j] * self.rows.y[j] * self.kernel.cy_eval(
                self.rows.row_dot(j, buf), sq_i, self.sqn[j])
        self.rows.row_axpy(i, -1.0, buf)          # back to exactly 0
        self.n_kernel_evals += self.n_sv
        return acc

    cdef double _k(self, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
        cdef double* buf = &self.buf[0]
        cdef double d
        self.rows.row_axpy(i, 1.0, buf)
        d = self.rows.row_dot(j, buf)
        self.rows.row_axpy(i, -1.0, buf)
        self.n_kernel_evals += 1
        return self.kernel.cy_eval(d, self.sqn[i], self.sqn[j])

    def run(self, Py_ssize_t n_iter):
        """Run ``n_iter`` iterations; returns the number done (fewer if the sampler ran out)."""
        cdef Py_ssize_t done
        with nogil:
            done = self._run(n_iter)
        return done

    cdef Py_ssize_t _run(self, Py_ssize_t n_iter) noexcept nogil:
        cdef Py_ssize_t it, s, q, i, k = self.k
        cdef double eta, shrink, c_new, delta, yi, m, wphi, gb, sc, inv = 1.0 / k
        cdef Py_ssize_t* batch = &self.batch[0]
        cdef double* f = &self.f[0]
        for it in range(n_iter):
            if self.sampler.cy_draw(k, batch) != 0:
                return it
            gb = 0.0
            for s in range(k):
                f[s] = self._kernel_sum(batch[s])
            eta = 1.0 / (self.lam * (self.t + 1))
            shrink = 1.0 - eta * self.lam
            c_new = self.scale * shrink
            # w . phi(x_i) after the shrinkage, before any addition of this step
            for s in range(k):
                f[s] = f[s] * self.scale           # = w_t . phi(x_i), used for the margins
            self.sqnorm = self.sqnorm * shrink * shrink
            if c_new == 0.0 or fabs(c_new) < 1e-9:
                self._fold(c_new)
            else:
                self.scale = c_new
            delta = eta * inv
            for s in range(k):
                i = batch[s]
                yi = self.rows.y[i]
                m = yi * (f[s] + self.intercept)
                if m >= 1.0:
                    self.kcross[s] = 0.0
                    continue
                gb -= inv * yi
                # w . phi(x_i) now: shrunk w_t plus this step's earlier additions
                wphi = f[s] * shrink
                for q in range(s):
                    if self.kcross[q] != 0.0:
                        wphi += delta * self.kcross[q] * self._k(batch[q], i)
                self.sqnorm += 2.0 * delta * yi * wphi + delta * delta * self._k(i, i)
                self.alpha[i] += delta / self.scale
                self.kcross[s] = yi
                if not self.in_sv[i]:
                    self.in_sv[i] = 1
                    self.sv[self.n_sv] = i
                    self.n_sv += 1
            if self.sqnorm < 0.0:
                self.sqnorm = 0.0
            if self.project and self.sqnorm * self.lam > 1.0:
                sc = 1.0 / sqrt(self.lam * self.sqnorm)
                self.scale *= sc
                self.sqnorm *= sc * sc
            if self.fit_intercept:
                self.intercept -= eta * gb
            self.t += 1
        return n_iter

    cdef void _fold(self, double c_new) noexcept nogil:
        """``alpha <- c_new alpha`` and ``c = 1``; forget the support when ``c_new == 0``."""
        cdef Py_ssize_t p, j
        if c_new == 0.0:
            for p in range(self.n_sv):
                j = self.sv[p]
                self.alpha[j] = 0.0
                self.in_sv[j] = 0
            self.n_sv = 0
        else:
            for p in range(self.n_sv):
                self.alpha[self.sv[p]] *= c_new
        self.scale = 1.0
