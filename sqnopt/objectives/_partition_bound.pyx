# cython: language_level=3
"""The partition-function quadratic bound of SQB, per sample and as an objective interface.

Aravkin, Choromanska, Jebara & Kanevsky, *Semistochastic quadratic bound methods* (2014),
Algorithm 1 bounds the partition function ``Z_i`` of a log-linear model by a quadratic in the
exponent (their eq. 3); Jebara & Choromanska, *Majorization for CRFs and latent likelihoods*
(NIPS 2012) prove the bound. This module holds the bound of one sample (``bound_weight``,
``bound_sample``, ``bound_factor_apply``) and :class:`BoundObjectiveKernel`, the compiled
interface that the curvature model ``QuadraticBound`` (``sqnopt/curvature/_bound.pyx``) calls.
The objectives that implement it live in ``_loglinear.pyx``. The math and the factored form of
the bound are in ``_partition_bound.pxd``.
"""

import numpy as np

from libc.math cimport INFINITY, NAN, exp, fabs, log1p, tanh
from libc.stdlib cimport calloc, free
from libc.string cimport memcpy, memset

from sqnopt.objectives._base cimport ObjectiveKernel


# ---- the bound of one sample ------------------------------------------------------------------

cdef double bound_weight(double l) noexcept nogil:
    """``tanh(l/2) / (2 l)``: even in ``l``, 1/4 at 0, ~ 1/(2|l|) for large |l|, 0 at +-inf.

    Near 0 the ratio is a 0/0 form; the series ``(1/4)(1 - l^2/12 + l^4/120)`` is used for
    ``|l| < 1e-2`` (truncation error < 1e-15 relative).
    """
    cdef double a = fabs(l)
    cdef double a2
    if a < 1e-2:
        a2 = a * a
        return 0.25 * (1.0 - a2 / 12.0 + a2 * a2 / 120.0)
    return tanh(0.5 * a) / (2.0 * a)


cdef double bound_sample(const double* s, Py_ssize_t K, double* fac, double* q) noexcept nogil:
    """Algorithm 1 of Aravkin et al. (2014) for one sample, with ``z`` kept as ``log z``.

    Loop over ``y``: ``alpha = h(y) exp(theta . f(y))`` enters only through
    ``l = log(alpha / z) = s[y] - log z``; ``r <- (z r + alpha f(y)) / (z + alpha)`` is the mixture
    update ``q <- (1 - rho) q + rho e_y`` with ``rho = alpha / (z + alpha) = sigmoid(l)``; and
    ``log z <- log(z + alpha)`` by a log-add-exp. The first output with ``h > 0`` meets
    ``z -> 0+``: ``l = +inf``, weight 0, ``rho = 1``. Outputs with ``h = 0`` change nothing.
    No ``exp`` of a raw score is ever formed.
    """
    cdef Py_ssize_t y
    cdef double logz = -INFINITY
    cdef double la, l, e, w, rho, rhobar
    cdef bint started = False
    for y in range(K):
        la = s[y]
        if la != la or la == INFINITY:
            return NAN
        if la == -INFINITY:          # h(y) = 0: alpha = 0
            w = 0.0
            rho = 0.0
            rhobar = 1.0
        elif not started:            # z -> 0+: l = +inf
            w = 0.0
            rho = 1.0
            rhobar = 0.0
            logz = la
            started = True
        else:
            l = la - logz
            w = bound_weight(l)
            if l >= 0.0:
                e = exp(-l)
                rho = 1.0 / (1.0 + e)
                rhobar = e / (1.0 + e)
                logz = la + log1p(e)
            else:
                e = exp(l)
                rho = e / (1.0 + e)
                rhobar = 1.0 / (1.0 + e)
                logz = logz + log1p(e)
        if fac != NULL:
            fac[y] = w
            fac[K + y] = rho
            fac[2 * K + y] = rhobar
    if not started:
        return NAN
    if q != NULL:
        for y in range(K):
            q[y] = exp(s[y] - logz)
    return logz


cdef void bound_factor_apply(const double* fac, Py_ssize_t K, const double* u,
                             double* beta) noexcept nogil:
    """``beta = M u`` with ``M = sum_y w_y (e_y - q_y)(e_y - q_y)'`` in O(K).

    Forward: ``t_y = w_y (u_y - q_y . u)`` with ``q_{y+1} . u = (1 - rho_y) q_y . u + rho_y u_y``.
    Backward: ``sum_y t_y q_y`` has coefficient ``rho_j B_j`` on ``e_j`` with
    ``B_j = t_{j+1} + (1 - rho_{j+1}) B_{j+1}``, ``B_{K-1} = 0``; ``beta = t - sum_y t_y q_y``.
    """
    cdef Py_ssize_t y, j
    cdef double c = 0.0, B = 0.0, tj
    for y in range(K):
        beta[y] = fac[y] * (u[y] - c)
        c = fac[2 * K + y] * c + fac[K + y] * u[y]
    j = K - 1
    while j >= 0:
        tj = beta[j]
        beta[j] = tj - fac[K + j] * B
        B = tj + fac[2 * K + j] * B
        j -= 1


# ---- interface --------------------------------------------------------------------------------

cdef class BoundObjectiveKernel(ObjectiveKernel):
    """Base class of compiled objectives that provide the quadratic bound; subclasses override
    ``cy_bound`` and ``cy_bound_matvec`` (and the objective's ``cy_*`` methods)."""

    cdef int cy_bound(self, const double* w, const Py_ssize_t* batch, Py_ssize_t size,
                      double* factor, double* mu) noexcept nogil:
        return -1

    cdef void cy_bound_matvec(self, const Py_ssize_t* batch, Py_ssize_t size,
                              const double* factor, const double* v, double* out) noexcept nogil:
        memset(out, 0, self.n_params * sizeof(double))

    cdef int cy_bound_dense(self, const Py_ssize_t* batch, Py_ssize_t size,
                            const double* factor, double* out) noexcept nogil:
        """Row ``j`` of the symmetric ``Sigma_B`` is ``Sigma_B e_j``: ``n_params`` products."""
        cdef Py_ssize_t j, n = self.n_params
        cdef double* e = <double*> calloc(n, sizeof(double))
        if e == NULL:
            return -1
        for j in range(n):
            e[j] = 1.0
            self.cy_bound_matvec(batch, size, factor, e, out + j * n)
            e[j] = 0.0
        free(e)
        return 0

    cdef Py_ssize_t cy_bound_support(self, const Py_ssize_t* batch, Py_ssize_t size,
                                     Py_ssize_t* map) noexcept nogil:
        return self.n_params

    cdef double cy_support_gather(self, const Py_ssize_t* map, const double* v,
                                  double* vc) noexcept nogil:
        memcpy(vc, v, self.n_params * sizeof(double))
        return 0.0

    cdef void cy_support_scatter(self, const Py_ssize_t* map, const double* vc,
                                 double* v) noexcept nogil:
        memcpy(v, vc, self.n_params * sizeof(double))

    cdef void cy_bound_matvec_support(self, const Py_ssize_t* map, Py_ssize_t m,
                                      const Py_ssize_t* batch, Py_ssize_t size,
                                      const double* factor, const double* vc,
                                      double* outc) noexcept nogil:
        self.cy_bound_matvec(batch, size, factor, vc, outc)

    # ---- Python-level API (tests, diagnostics, pure-Python curvature models) ----------------
    def _support(self, batch):
        """``(map, m, checked batch)`` of :meth:`cy_bound_support` for ``batch``."""
        cdef Py_ssize_t[::1] b = self._checked_batch(batch)
        smap = np.zeros(max(self.support_map_size, 1), dtype=np.intp)
        cdef Py_ssize_t[::1] mv = smap
        cdef Py_ssize_t m
        with nogil:
            m = self.cy_bound_support(&b[0], b.shape[0], &mv[0])
        return smap, m, b

    def bound_support(self, batch):
        """Parameter index of each compact coordinate of the batch's bound, in compact order
        (``arange(n_params)`` for a kernel without a compact form); ``Sigma_B`` is zero on the
        other coordinates."""
        smap, m, _ = self._support(batch)
        idx, _ = self._gather(smap, m, np.arange(self.n_params, dtype=np.float64))
        return idx.astype(np.intp)

    def _gather(self, smap, Py_ssize_t m, v):
        cdef const Py_ssize_t[::1] mv = smap
        cdef const double[::1] vv = np.ascontiguousarray(v, dtype=np.float64)
        self._check_w(vv)
        out = np.empty(m)
        cdef double[::1] ov = out
        cdef double off
        with nogil:
            off = self.cy_support_gather(&mv[0], &vv[0], &ov[0])
        return out, off

    def support_gather(self, batch, v):
        """``(vc, off_norm2)``: ``v`` on the compact coordinates of the batch's bound and the
        squared norm of the rest."""
        smap, m, _ = self._support(batch)
        return self._gather(smap, m, v)

    def support_scatter(self, batch, vc, v):
        """A copy of ``v`` whose compact coordinates (of the batch's bound) are ``vc``."""
        smap, m, _ = self._support(batch)
        cdef const Py_ssize_t[::1] mv = smap
        cdef const double[::1] cv = np.ascontiguousarray(vc, dtype=np.float64)
        if cv.shape[0] != m:
            raise ValueError(f"vc must have length {m}")
        out = np.array(v, dtype=np.float64, copy=True)
        cdef double[::1] ov = out
        self._check_w(ov)
        with nogil:
            self.cy_support_scatter(&mv[0], &cv[0], &ov[0])
        return out

    def bound_matvec_support(self, batch, factors, vc):
        """``Sigma_B`` applied on the compact coordinates of the batch (``vc`` and the result
        have the length ``m`` of :meth:`bound_support`)."""
        smap, mm, bb = self._support(batch)
        cdef Py_ssize_t m = mm
        cdef Py_ssize_t[::1] b = bb
        cdef const Py_ssize_t[::1] mv = smap
        cdef const double[:, ::1] fv = np.ascontiguousarray(factors, dtype=np.float64)
        cdef const double[::1] cv = np.ascontiguousarray(vc, dtype=np.float64)
        if fv.shape[0] != b.shape[0] or fv.shape[1] != self.factor_size:
            raise ValueError(f"factors must have shape ({b.shape[0]}, {self.factor_size})")
        if cv.shape[0] != m:
            raise ValueError(f"vc must have length {m}")
        out = np.empty(m)
        cdef double[::1] ov = out
        with nogil:
            self.cy_bound_matvec_support(&mv[0], m, &b[0], b.shape[0], &fv[0, 0], &cv[0],
                                         &ov[0])
        return out

    def _checked_batch(self, batch):
        b = np.ascontiguousarray(batch, dtype=np.intp)
        if b.ndim != 1 or b.shape[0] < 1:
            raise ValueError("batch must be a non-empty 1-D array of sample indices")
        if b.min() < 0 or b.max() >= self.data.n_samples:
            raise IndexError(f"batch indices must lie in [0, {self.data.n_samples})")
        return b

    def bound_factors(self, w, batch):
        """``(factors, mu)``: the per-sample bound factors at ``w`` (shape
        ``(len(batch), factor_size)``, scaled by ``g_i / |B|``) and ``mu_B``, the data part of the
        minibatch gradient, as Algorithm 1 outputs it."""
        cdef const double[::1] wv = np.ascontiguousarray(w, dtype=np.float64)
        self._check_w(wv)
        cdef Py_ssize_t[::1] b = self._checked_batch(batch)
        cdef Py_ssize_t size = b.shape[0]
        fac = np.zeros((size, self.factor_size))
        mu = np.zeros(self.n_params)
        cdef double[:, ::1] fv = fac
        cdef double[::1] mv = mu
        cdef int code
        with nogil:
            code = self.cy_bound(&wv[0], &b[0], size, &fv[0, 0], &mv[0])
        if code != 0:
            raise FloatingPointError("non-finite score: the bound is undefined at this w")
        return fac, mu

    def bound_matvec(self, batch, factors, v):
        """``Sigma_B v`` from ``factors`` returned by :meth:`bound_factors` on the same batch."""
        cdef Py_ssize_t[::1] b = self._checked_batch(batch)
        cdef const double[:, ::1] fv = np.ascontiguousarray(factors, dtype=np.float64)
        cdef const double[::1] vv = np.ascontiguousarray(v, dtype=np.float64)
        self._check_w(vv)
        if fv.shape[0] != b.shape[0] or fv.shape[1] != self.factor_size:
            raise ValueError(f"factors must have shape ({b.shape[0]}, {self.factor_size})")
        out = np.empty(self.n_params)
        cdef double[::1] ov = out
        with nogil:
            self.cy_bound_matvec(&b[0], b.shape[0], &fv[0, 0], &vv[0], &ov[0])
        return out

    def bound_matrix(self, w, batch):
        """Dense ``Sigma_B`` (``n_params x n_params``; O(n_params^2) memory, small problems only)."""
        fac, _ = self.bound_factors(w, batch)
        return self.bound_dense(batch, fac)

    def bound_dense(self, batch, factors):
        """Dense ``Sigma_B`` from ``factors`` returned by :meth:`bound_factors` on the same
        batch (the matrix an exact solve factorises)."""
        cdef Py_ssize_t[::1] b = self._checked_batch(batch)
        cdef const double[:, ::1] fv = np.ascontiguousarray(factors, dtype=np.float64)
        if fv.shape[0] != b.shape[0] or fv.shape[1] != self.factor_size:
            raise ValueError(f"factors must have shape ({b.shape[0]}, {self.factor_size})")
        out = np.empty((self.n_params, self.n_params))
        cdef double[:, ::1] ov = out
        cdef int code
        with nogil:
            code = self.cy_bound_dense(&b[0], b.shape[0], &fv[0, 0], &ov[0, 0])
        if code != 0:
            raise MemoryError("out of memory while forming the dense bound matrix")
        return out

    def bound_columns(self, w, batch):
        """``S`` with ``Sigma_B = S S'`` as a sparse ``n_params x m`` matrix (columns
        ``sqrt(g_i w_y / |B|) (f_i(y) - r_y)``). Diagnostics: O(m n_params) time."""
        raise NotImplementedError

    def bound(self, w, batch):
        """``(mu_B, S)``: Algorithm 1's outputs, the curvature in factored form
        ``Sigma_B = S S'``."""
        _, mu = self.bound_factors(w, batch)
        return mu, self.bound_columns(w, batch)

    def sample_bound(self, w, Py_ssize_t i):
        """``(log z, r, S)`` of the bound (3) of sample ``i`` expanded at ``w``:
        ``Z_i(theta) <= z exp(1/2 d'S S'd + d'r)``, ``d = theta - w``; ``S`` dense
        ``n_params x K`` (columns ``sqrt(w_y) (f(y) - r_y)``)."""
        raise NotImplementedError

    def log_partition(self, w, Py_ssize_t i):
        """``log Z_i(w)`` evaluated with a max-shifted log-sum-exp."""
        raise NotImplementedError



def py_bound_weight(l):
    """``tanh(l/2) / (2 l)`` elementwise (the weight of Algorithm 1; 1/4 at 0)."""
    arr = np.asarray(l, dtype=np.float64)
    out = np.empty_like(arr)
    cdef double[::1] o = out.reshape(-1)
    cdef const double[::1] a = np.ascontiguousarray(arr).reshape(-1)
    for j in range(a.shape[0]):
        o[j] = bound_weight(a[j])
    return out if out.ndim else float(out)
