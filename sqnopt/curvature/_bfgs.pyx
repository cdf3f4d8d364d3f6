# cython: language_level=3
r"""Online BFGS (oBFGS) and regularized stochastic BFGS (RES).

RES (Mokhtari & Ribeiro, *A quasi-Newton method for large scale support vector machines*,
ICASSP 2014, eqs. 4, 8, 9; Algorithm 1) moves along ``d_t = (B_t^{-1} + Gamma I) g`` and updates,
with ``r~ = r - delta v`` and provided ``v'r~ > 0``,

    B_{t+1} = B_t + r~ r~' / (v'r~) - B_t v v' B_t / (v' B_t v) + delta I ,      B_0 = b0 I > delta I.

``delta = Gamma = 0`` is plain online BFGS (oBFGS).

Two exact implementations:

* **inverse form** (``delta = 0``): keep ``H = B^{-1}`` and apply the BFGS inverse update
  (Nocedal & Wright 2006, eq. 6.17; paper 003 eq. 6), the Sherman-Morrison-Woodbury image of the
  rank-two update of ``B``:
  ``H+ = (I - rho v r') H (I - rho r v') + rho v v'`` with ``rho = 1/v'r``, written as one
  symmetric rank-two update ``H+ = H - rho (v z' + z v')`` with ``u = H r`` and
  ``z = u - (rho r'u + 1)/2 v``. Cost per iteration: two ``dsymv`` + one ``dsyr2``, O(n^2).
* **Cholesky form** (``delta > 0``): ``+ delta I`` changes every eigenvalue, so no low-rank
  (Woodbury) identity maps ``B_t^{-1}`` to ``B_{t+1}^{-1}``; keep ``B``, update it in O(n^2)
  (``dsymv``, two ``dsyr``, diagonal shift) and factor it once per iteration with LAPACK
  ``dpotrf`` (n^3/3 flops, the published O(n^3)); the direction is one ``dpotrs``.

BLAS/LAPACK come from SciPy's Cython bindings (``scipy.linalg.cython_blas`` /
``cython_lapack``), callable without the GIL.
"""

import numpy as np

from libc.math cimport isfinite, sqrt
from libc.string cimport memcpy
from scipy.linalg.cython_blas cimport dsymv, dsyr, dsyr2
from scipy.linalg.cython_lapack cimport dpotrf, dpotrs

from sqnopt._vec cimport vdot
from sqnopt.curvature._base cimport PAIR_ACCEPTED, PAIR_SKIPPED
from sqnopt.curvature._secant cimport (
    SECANT_BAD_DAMPING, SECANT_BAD_FACTOR, SECANT_NONFINITE_PAIR, SecantKernel,
)

cdef char UPLO = b'L'
cdef int INC = 1


cdef class BFGSKernel(SecantKernel):
    """Full-matrix BFGS / RES kernel (see the module docstring)."""

    def __init__(self, Py_ssize_t dim, double delta=0.0, double Gamma=0.0,
                 double init_scale=1.0, bint cholesky=False, double min_curvature=0.0,
                 bint damp=False, double damping=0.2, bint reset_on_nonfinite=True,
                 bint auto_scale=False):
        SecantKernel.__init__(self, dim, min_curvature, damp, damping, reset_on_nonfinite)
        if dim > 46340:
            raise ValueError(f"dim={dim} is too large for a dense {dim} x {dim} BFGS matrix")
        if not (isfinite(delta) and delta >= 0.0):
            raise ValueError(f"delta must be a finite number >= 0, got {delta}")
        if not (isfinite(Gamma) and Gamma >= 0.0):
            raise ValueError(f"Gamma must be a finite number >= 0, got {Gamma}")
        if not (isfinite(init_scale) and init_scale > delta):
            raise ValueError(f"init_scale must be finite and > delta (B_0 = init_scale I must "
                             f"exceed delta I), got init_scale={init_scale}, delta={delta}")
        if delta > 0.0 and not cholesky:
            raise ValueError("delta > 0 needs the Cholesky form: the + delta I term has no exact "
                             "low-rank inverse update")
        self.delta = delta
        self.Gamma = Gamma
        self.init_scale = init_scale
        self.cholesky = cholesky
        self.auto_scale = auto_scale
        self.M = np.zeros((dim, dim))
        self.has_F = cholesky or damp
        self.F = np.zeros((dim, dim)) if self.has_F else np.zeros((1, 1))
        self.u = np.zeros(dim)
        self.rt = np.zeros(dim)
        self.cy_reset()

    cdef void cy_reset(self) noexcept nogil:
        self._set_scaled_identity(self.init_scale)
        self._scale_pending = self.auto_scale

    cdef void _set_scaled_identity(self, double b0) noexcept nogil:
        """B = b0 I (Cholesky form, with its factor) or H = I / b0 (inverse form)."""
        cdef Py_ssize_t i, j, n = self.dim
        cdef double diag = b0 if self.cholesky else 1.0 / b0
        for i in range(n):
            for j in range(n):
                self.M[i, j] = 0.0
            self.M[i, i] = diag
        if self.cholesky:
            for i in range(n):
                for j in range(n):
                    self.F[i, j] = 0.0
                self.F[i, i] = sqrt(diag)

    cdef int _factor(self) noexcept nogil:
        """F = chol(M) (uplo L); returns LAPACK's info."""
        cdef int n = <int> self.dim, info = 0
        memcpy(&self.F[0, 0], &self.M[0, 0], self.dim * self.dim * sizeof(double))
        dpotrf(&UPLO, &n, &self.F[0, 0], &n, &info)
        return info

    cdef void cy_direction(self, const double* g, double* out) noexcept nogil:
        cdef int n = <int> self.dim, nrhs = 1, info = 0
        cdef double one = 1.0, zero = 0.0, Gamma = self.Gamma
        cdef Py_ssize_t j
        if self.cholesky:
            memcpy(out, g, self.dim * sizeof(double))
            dpotrs(&UPLO, &n, &nrhs, &self.F[0, 0], &n, out, &n, &info)
        else:
            dsymv(&UPLO, &n, &one, &self.M[0, 0], &n, <double*> g, &INC, &zero, out, &INC)
        if Gamma != 0.0:
            for j in range(self.dim):
                out[j] += Gamma * g[j]

    cdef int cy_hessian_vector(self, const double* v, double* out) noexcept nogil:
        cdef int n = <int> self.dim, nrhs = 1, info = 0
        cdef double one = 1.0, zero = 0.0
        if self.cholesky:
            dsymv(&UPLO, &n, &one, &self.M[0, 0], &n, <double*> v, &INC, &zero, out, &INC)
            return 0
        if not self.has_F:
            return -1
        if self._factor() != 0:          # F = chol(H); B v = H^{-1} v: O(n^3), damping only
            return -1
        memcpy(out, v, self.dim * sizeof(double))
        dpotrs(&UPLO, &n, &nrhs, &self.F[0, 0], &n, out, &n, &info)
        return 0 if info == 0 else -1

    cdef int cy_update_pair(self, const double* v, const double* r) noexcept nogil:
        cdef Py_ssize_t j, n = self.dim
        cdef int ni = <int> n
        cdef double one = 1.0, zero = 0.0, alpha
        cdef double vr = vdot(v, r, n)
        cdef double vv = vdot(v, v, n)
        cdef double c, s, rho, rur
        cdef double* rt = &self.rt[0]
        cdef double* u = &self.u[0]
        cdef double* M = &self.M[0, 0]
        if not (isfinite(vr) and isfinite(vv)):
            return self._fail(SECANT_NONFINITE_PAIR)
        for j in range(n):
            rt[j] = r[j] - self.delta * v[j]
        c = vdot(v, rt, n) if self.delta != 0.0 else vr
        if self._scale_pending and c > self.min_curvature * vv:
            # Nocedal & Wright (2006) eq. 6.20: B_0 = (r'r / v'r) I before the first update
            # (> delta when v'r~ > 0, by Cauchy-Schwarz).
            self._set_scaled_identity(vdot(r, r, n) / vr)
            self._scale_pending = False

        if self.cholesky:
            # u = B v (needed by the update and by damping)
            dsymv(&UPLO, &ni, &one, M, &ni, <double*> v, &INC, &zero, u, &INC)
            if not (c > self.min_curvature * vv):
                if not self.damp or vv == 0.0:
                    return PAIR_SKIPPED
                c = self._powell(v, rt, u, c)
                if not (isfinite(c) and c > 0.0):
                    return self._fail(SECANT_BAD_DAMPING)
            s = vdot(v, u, n)
            if not (isfinite(s) and s > 0.0):
                return self._fail(SECANT_BAD_FACTOR)
            alpha = 1.0 / c
            dsyr(&UPLO, &ni, &alpha, rt, &INC, M, &ni)
            alpha = -1.0 / s
            dsyr(&UPLO, &ni, &alpha, u, &INC, M, &ni)
            if self.delta != 0.0:
                for j in range(n):
                    self.M[j, j] += self.delta
            if self._factor() != 0:
                return self._fail(SECANT_BAD_FACTOR)
        else:
            if not (c > self.min_curvature * vv):
                if not self.damp or vv == 0.0:
                    return PAIR_SKIPPED
                if self.cy_hessian_vector(v, u) != 0:
                    return self._fail(SECANT_BAD_DAMPING)
                c = self._powell(v, rt, u, c)
                if not (isfinite(c) and c > 0.0):
                    return self._fail(SECANT_BAD_DAMPING)
            # u = H r~ ; H+ = H - rho (v z' + z v'),  z = u - (rho r~'u + 1)/2 v
            dsymv(&UPLO, &ni, &one, M, &ni, rt, &INC, &zero, u, &INC)
            rur = vdot(rt, u, n)
            if not isfinite(rur):
                return self._fail(SECANT_NONFINITE_PAIR)
            rho = 1.0 / c
            alpha = 0.5 * (rho * rur + 1.0)
            for j in range(n):
                u[j] -= alpha * v[j]
            alpha = -rho
            dsyr2(&UPLO, &ni, &alpha, <double*> v, &INC, u, &INC, M, &ni)
        self.n_updates += 1
        return PAIR_ACCEPTED

    # ---- Python-level API ---------------------------------------------------------------
    def _stored(self):
        m = np.asarray(self.M)
        return np.triu(m) + np.triu(m, 1).T

    def hessian(self):
        """The current Hessian approximation ``B`` (dense copy; inverts ``H`` in the inverse
        form)."""
        m = self._stored()
        return m if self.cholesky else np.linalg.inv(m)

    def inverse_hessian(self):
        """The current ``H = B^{-1}`` (dense copy; without the ``Gamma I`` of the direction)."""
        m = self._stored()
        return np.linalg.inv(m) if self.cholesky else m

    def hessian_vector(self, const double[::1] v):
        """``B v`` (allocates; in the inverse form without damping scratch, solves with H)."""
        self._check(v)
        if self.cholesky or self.has_F:
            return SecantKernel.hessian_vector(self, v)
        return np.linalg.solve(self._stored(), np.asarray(v))
