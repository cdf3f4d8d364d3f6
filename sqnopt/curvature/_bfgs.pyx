# cython: language_level=3
r"""Online BFGS (oBFGS) and regularized stochastic BFGS (RES).

RES (Mokhtari & Ribeiro, *A quasi-Newton method for large scale support vector machines*,
ICASSP 2014, eqs. 4, 8, 9; Algorithm 1) moves along ``d_t = (B_t^{-1} + Gamma I) g`` and updates,
with ``r~ = r - delta v`` and provided ``v'r~ > 0``,

    B_{t+1} = B_t + r~ r~' / (v'r~) - B_t v v' B_t / (v' B_t v) + delta I ,      B_0 = b0 I > delta I.

``delta = Gamma = 0`` is plain online BFGS (oBFGS).

Two exact implementations:

* **inverse form** (``delta = 0``): keep ``H = B^{-1}`` and apply the BFGS inverse update
  (Nocedal & Wright 2006, eq. 6.17; Mokhtari & Ribeiro 2015 eq. 6), the Sherman-Morrison-Woodbury image of the
  rank-two update of ``B``:
  ``H+ = (I - rho v r') H (I - rho r v') + rho v v'`` with ``rho = 1/v'r``, written as one
  symmetric rank-two update ``H+ = H - rho (v z' + z v')`` with ``u = H r`` and
  ``z = u - (rho r'u + 1)/2 v``. O(n^2) per iteration; see "Deferred updates" below for how the
  two products and the update share one pass over the matrix.
* **Cholesky form** (``delta > 0``): ``+ delta I`` changes every eigenvalue, so no low-rank
  (Woodbury) identity maps ``B_t^{-1}`` to ``B_{t+1}^{-1}``; keep ``B``, update it in O(n^2)
  (``dsymv``, two ``dsyr``, diagonal shift) and factor it once per iteration with LAPACK
  ``dpotrf`` (n^3/3 flops, the published O(n^3)); the direction is one ``dpotrs``. (From
  n = 250 ``RegularizedBFGS`` uses the exact eigendecomposition + Woodbury form of
  ``_res_eig.pyx`` instead, faster from there on; docs/curvature.md.)

**Deferred updates (inverse form).** Per iteration the inverse form needs ``u = H_t r`` (for
the update) and ``H_{t+1} g_{t+1}`` (the next direction). Done eagerly that is three passes over
the n x n matrix (two ``dsymv``, one ``dsyr2``), and at n = 1000 the matrix (8 MB) lives outside
the per-core cache, so the passes are memory-bound. The kernel therefore stores an accepted pair
and resolves it at the next ``direction`` call: one pass over the stored triangle forms both
``u = H_t r`` and ``H_t g`` (``sq_symv2_merge_upper``, ``sqnopt/_simd.h``), then ``z`` follows in O(n)
and ``H_{t+1} g = H_t g - rho (v (z'g) + z (v'g))``. The rank-two terms ``-rho (v z' + z v')`` are
kept as a list of up to ``merge_every`` pending terms ``H = M + sum_k (a_k b_k' + b_k a_k')``
(products get an O(n) correction per term) and folded into ``M`` inside the product pass once
the list is full -- one read pass per iteration and one write pass every ``merge_every``
iterations. This is the same update in exact arithmetic; only the rounding differs.

The only failure the eager update could report after the screening of the pair, a non-finite
``r'Hr``, is excluded before deferring: ``H`` is positive definite, so
``r'Hr <= trace(H) r'r`` and ``|H r| <= trace(H) |r|``; the kernel tracks ``trace(H)`` exactly
(``+2 a_k'b_k`` per term) and defers a pair only if ``trace(H) r'r <= 1e290``, otherwise it
resolves it at once (eager path, same error handling as before). Should a deferred ``r'Hr``
nevertheless be non-finite (only possible if rounding destroyed positive definiteness), the pair
is dropped and the failure is reported by the next ``update_pair`` (reset or error by policy).

BLAS/LAPACK come from SciPy's Cython bindings (``scipy.linalg.cython_blas`` /
``cython_lapack``), callable without the GIL.
"""

import numpy as np

from libc.math cimport INFINITY, isfinite, sqrt
from libc.string cimport memcpy, memset
from scipy.linalg.cython_blas cimport dsymv, dsyr2
from scipy.linalg.cython_lapack cimport dpotrf, dpotrs

from sqnopt._simd_info import VARIANTS as _VARIANTS
from sqnopt._vec cimport (
    sq_simd_level, sq_axpy, sq_dot, sq_potrf_upper, sq_potrs_upper, sq_symv2_merge_upper,
    sq_syr2_shift_copy_upper,
)
from sqnopt.checkpoint import CheckpointError, restore_array, state_value
from sqnopt.curvature._base cimport PAIR_ACCEPTED, PAIR_SKIPPED
from sqnopt.curvature._secant cimport (
    SECANT_BAD_DAMPING, SECANT_BAD_FACTOR, SECANT_NONFINITE_PAIR, SecantKernel,
)

cdef char UPLO = b'L'
cdef int INC = 1
# Defer a pair only if trace(H) r'r is at most this (then r'Hr and H r are finite).
cdef double DEFER_LIMIT = 1e290
# From this dimension on the inverse form uses the fused one-pass kernel; below, BLAS level 2
# with FMA (dsyr2 to fold, dsymv per product) is as fast or faster. The crossover depends on the
# variant of the vector kernels in use (sqnopt/_simd.h), each against OpenBLAS's kernels for that
# instruction set; the crossovers are in docs/benchmarks.md, "Vector-kernel variants".
FUSED_MIN_DIM_BY_VARIANT = {"baseline": 1000, "avx2": 700, "avx512f": 400}
FUSED_MIN_DIM = FUSED_MIN_DIM_BY_VARIANT[_VARIANTS[sq_simd_level()]]
# Up to this dimension the Cholesky form factors with its own kernel (sq_potrf_upper, panels of
# eight rows on 8-lane vectors; faster than OpenBLAS dpotrf at small n, docs/benchmarks.md),
# beyond with LAPACK dpotrf (blocked for the cache).
OWN_CHOLESKY_MAX_DIM = 160


def default_merge_every(Py_ssize_t dim):
    """Pending rank-two terms kept before they are folded into the stored matrix by the fused
    kernel. A fold pass (read + write, plus the terms) costs about 1.5-2 read-only passes;
    folding every 4th pass was best in docs/benchmarks.md's measurements (more terms cost O(n)
    corrections per product)."""
    return 4 if dim >= 300 else 1


cdef class BFGSKernel(SecantKernel):
    """Full-matrix BFGS / RES kernel (see the module docstring)."""

    def __init__(self, Py_ssize_t dim, double delta=0.0, double Gamma=0.0,
                 double init_scale=1.0, bint cholesky=False, double min_curvature=0.0,
                 bint damp=False, double damping=0.2, bint reset_on_nonfinite=True,
                 bint auto_scale=False, merge_every=None, fused=None, own_cholesky=None):
        SecantKernel.__init__(self, dim, min_curvature, damp, damping, reset_on_nonfinite)
        if dim > 46340:
            raise ValueError(f"dim={dim} is too large for a dense {dim} x {dim} BFGS matrix")
        self._check_res_options(delta, Gamma, init_scale)
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
        if own_cholesky is None:
            own_cholesky = dim <= OWN_CHOLESKY_MAX_DIM
        self.own_cholesky = own_cholesky
        if fused is None:
            fused = dim >= FUSED_MIN_DIM
        self.fused = fused
        if merge_every is None:
            merge_every = default_merge_every(dim) if fused else 1
        if merge_every > 16:
            raise ValueError(f"merge_every must be <= 16, got {merge_every}")
        if merge_every < 1:
            raise ValueError(f"merge_every must be >= 1, got {merge_every}")
        self.merge_every = merge_every
        k = 1 if cholesky else merge_every
        self.PA = np.zeros((k, dim))
        self.PB = np.zeros((k, dim))
        self.pv = np.zeros(dim)
        self.h2 = np.zeros(dim)
        self._defer_limit = DEFER_LIMIT
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
        self._npend = 0
        self._unresolved = False
        self._deferred_fail = False
        self.trace_H = n * diag
        if self.cholesky:
            for i in range(n):
                for j in range(n):
                    self.F[i, j] = 0.0
                self.F[i, i] = sqrt(diag)

    cdef int _factor(self) noexcept nogil:
        """F = chol(M) (uplo L); returns LAPACK's info."""
        memcpy(&self.F[0, 0], &self.M[0, 0], self.dim * self.dim * sizeof(double))
        return self._factor_F()

    cdef int _factor_F(self) noexcept nogil:
        """Factor F in place (its triangle j >= i holds the matrix); returns LAPACK's info."""
        cdef int n = <int> self.dim, info = 0
        if self.own_cholesky:
            return sq_potrf_upper(self.dim, &self.F[0, 0], self.dim)
        dpotrf(&UPLO, &n, &self.F[0, 0], &n, &info)
        return info

    cdef void _solve_F(self, double* b) noexcept nogil:
        """b <- (U'U)^{-1} b with the factor in F."""
        cdef int n = <int> self.dim, nrhs = 1, info = 0
        if self.own_cholesky:
            sq_potrs_upper(self.dim, &self.F[0, 0], self.dim, b)
        else:
            dpotrs(&UPLO, &n, &nrhs, &self.F[0, 0], &n, b, &n, &info)

    cdef void cy_direction(self, const double* g, double* out) noexcept nogil:
        cdef double Gamma = self.Gamma
        if self.cholesky:
            memcpy(out, g, self.dim * sizeof(double))
            self._solve_F(out)
        elif self._unresolved:
            # one pass: u = H_t r~ and out = H_t g; then H_{t+1} g from the new term
            self._products(&self.rt[0], g, &self.u[0], out, True)
            if self._add_term(g, out) != 0:
                self._deferred_fail = True      # H_{t+1} = H_t; reported by the next pair
        else:
            self._products(g, g, out, &self.h2[0], False)
        if Gamma != 0.0:
            sq_axpy(Gamma, g, out, self.dim)

    cdef void _products(self, const double* x1, const double* x2, double* y1, double* y2,
                        bint two) noexcept nogil:
        """``y1 = H x1`` (and ``y2 = H x2`` if ``two``) with ``H = M + pending terms``: one pass
        over ``M``, folding the pending terms into it when the list is full, else O(n)
        corrections per term."""
        cdef Py_ssize_t k, n = self.dim, m = self._npend
        cdef int ni = <int> n
        cdef double one = 1.0, zero = 0.0
        cdef double* a
        cdef double* b
        if not self.fused:
            for k in range(m):
                dsyr2(&UPLO, &ni, &one, &self.PA[k, 0], &INC, &self.PB[k, 0], &INC,
                      &self.M[0, 0], &ni)
            self._npend = 0
            dsymv(&UPLO, &ni, &one, &self.M[0, 0], &ni, <double*> x1, &INC, &zero, y1, &INC)
            if two:
                dsymv(&UPLO, &ni, &one, &self.M[0, 0], &ni, <double*> x2, &INC, &zero, y2, &INC)
            return
        if m >= self.merge_every:
            sq_symv2_merge_upper(n, &self.M[0, 0], n, m, &self.PA[0, 0], &self.PB[0, 0], n,
                                 x1, x2, y1, y2)
            self._npend = 0
            return
        sq_symv2_merge_upper(n, &self.M[0, 0], n, 0, NULL, NULL, n, x1, x2, y1, y2)
        for k in range(m):
            a = &self.PA[k, 0]
            b = &self.PB[k, 0]
            sq_axpy(sq_dot(b, x1, n), a, y1, n)
            sq_axpy(sq_dot(a, x1, n), b, y1, n)
            if two:
                sq_axpy(sq_dot(b, x2, n), a, y2, n)
                sq_axpy(sq_dot(a, x2, n), b, y2, n)

    cdef int _add_term(self, const double* g, double* hg) noexcept nogil:
        """Resolve the deferred pair from ``u = H_t r~`` (in ``self.u``): append the term
        ``-rho (v z' + z v')`` and, if ``g`` is given, turn ``hg = H_t g`` into ``H_{t+1} g``.
        Returns -1 (pair dropped) if ``r~'u`` is not finite."""
        cdef Py_ssize_t j, n = self.dim, k = self._npend
        cdef double* u = &self.u[0]
        cdef double* v = &self.pv[0]
        cdef double* a
        cdef double* b
        cdef double rho = self._rho, rur = sq_dot(&self.rt[0], u, n), alpha
        self._unresolved = False
        if not isfinite(rur):
            return -1
        alpha = 0.5 * (rho * rur + 1.0)
        a = &self.PA[k, 0]
        b = &self.PB[k, 0]
        for j in range(n):
            a[j] = -rho * v[j]
            b[j] = u[j] - alpha * v[j]
        self._npend = k + 1
        self.trace_H += 2.0 * sq_dot(a, b, n)
        if g != NULL:
            sq_axpy(sq_dot(b, g, n), a, hg, n)
            sq_axpy(sq_dot(a, g, n), b, hg, n)
        return 0

    cdef int _resolve_now(self) noexcept nogil:
        """Resolve a deferred pair without a direction (eager path); -1 if ``r~'H r~`` is not
        finite."""
        if not self._unresolved:
            return 0
        self._products(&self.rt[0], &self.rt[0], &self.u[0], &self.h2[0], False)
        return self._add_term(NULL, NULL)

    cdef int _materialize(self) noexcept nogil:
        """Resolve the deferred pair and fold every pending term into ``M`` (inverse form);
        -1 if the deferred pair failed."""
        cdef Py_ssize_t k, n = self.dim
        cdef int ni = <int> n
        cdef double one = 1.0
        cdef int code = 0
        if self.cholesky:
            return 0
        if self._resolve_now() != 0:
            code = -1
        if self._npend > 0:
            if self.fused:
                # the fold is a by-product of the merged pass; its two products (into the
                # scratch vectors h2 and u, which must not overlap) are discarded
                sq_symv2_merge_upper(n, &self.M[0, 0], n, self._npend, &self.PA[0, 0],
                                     &self.PB[0, 0], n, &self.rt[0], &self.rt[0], &self.h2[0],
                                     &self.u[0])
            else:
                for k in range(self._npend):     # the same folds as _products, no product
                    dsyr2(&UPLO, &ni, &one, &self.PA[k, 0], &INC, &self.PB[k, 0], &INC,
                          &self.M[0, 0], &ni)
            self._npend = 0
        return code

    cdef int cy_hessian_vector(self, const double* v, double* out) noexcept nogil:
        cdef int n = <int> self.dim
        cdef double one = 1.0, zero = 0.0
        if self.cholesky:
            dsymv(&UPLO, &n, &one, &self.M[0, 0], &n, <double*> v, &INC, &zero, out, &INC)
            return 0
        if not self.has_F:
            return -1
        if self._materialize() != 0:
            return -1
        if self._factor() != 0:          # F = chol(H); B v = H^{-1} v: O(n^3), damping only
            return -1
        memcpy(out, v, self.dim * sizeof(double))
        self._solve_F(out)
        return 0

    cdef int cy_update_pair(self, const double* v, const double* r) noexcept nogil:
        cdef Py_ssize_t j, n = self.dim
        cdef int ni = <int> n
        cdef double one = 1.0, zero = 0.0
        cdef double vr = sq_dot(v, r, n)
        cdef double vv = sq_dot(v, v, n)
        cdef double c, s
        cdef double* rt = &self.rt[0]
        cdef double* u = &self.u[0]
        cdef double* M = &self.M[0, 0]
        if not self.cholesky:
            # a deferred pair that failed, or two pairs without a direction in between
            if self._deferred_fail:
                self._deferred_fail = False
                return self._fail(SECANT_NONFINITE_PAIR)
            if self._unresolved and self._resolve_now() != 0:
                return self._fail(SECANT_NONFINITE_PAIR)
        if not (isfinite(vr) and isfinite(vv)):
            return self._fail(SECANT_NONFINITE_PAIR)
        for j in range(n):
            rt[j] = r[j] - self.delta * v[j]
        c = sq_dot(v, rt, n) if self.delta != 0.0 else vr
        if self._scale_pending and c > self.min_curvature * vv:
            # Nocedal & Wright (2006) eq. 6.20: B_0 = (r'r / v'r) I before the first update
            # (> delta when v'r~ > 0, by Cauchy-Schwarz).
            self._set_scaled_identity(sq_dot(r, r, n) / vr)
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
            s = sq_dot(v, u, n)
            if not (isfinite(s) and s > 0.0):
                return self._fail(SECANT_BAD_FACTOR)
            # B += r~ r~'/c - u u'/s + delta I and F = B, in one pass; then factor F
            sq_syr2_shift_copy_upper(n, M, n, 1.0 / c, rt, -1.0 / s, u, self.delta,
                                     &self.F[0, 0])
            if self._factor_F() != 0:
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
            # defer H+ = H - rho (v z' + z v') to the next direction (see the module docstring)
            memcpy(&self.pv[0], v, n * sizeof(double))
            self._rho = 1.0 / c
            self._unresolved = True
            if not (isfinite(self.trace_H) and self.trace_H > 0.0
                    and self.trace_H * sq_dot(rt, rt, n) <= self._defer_limit):
                if self._resolve_now() != 0:
                    return self._fail(SECANT_NONFINITE_PAIR)
        self.n_updates += 1
        return PAIR_ACCEPTED

    # ---- checkpoints ----------------------------------------------------------------------
    def get_state(self) -> dict:
        """The stored matrix ``M`` (and, in the Cholesky form, its factor ``F``), the pending
        rank-two terms and the deferred pair (``pv``, ``r~``, ``rho``) with ``trace(H)``, and the
        flags; ``u`` and ``h2`` are scratch."""
        state = SecantKernel.get_state(self)
        state.update(scale_pending=bool(self._scale_pending), M=np.array(self.M),
                     PA=np.array(self.PA), PB=np.array(self.PB), npend=int(self._npend),
                     unresolved=bool(self._unresolved), deferred_fail=bool(self._deferred_fail),
                     pv=np.array(self.pv), rt=np.array(self.rt), rho=float(self._rho),
                     trace_H=float(self.trace_H), defer_limit=float(self._defer_limit))
        if self.cholesky:
            state["F"] = np.array(self.F)
        return state

    def set_state(self, state) -> None:
        SecantKernel.set_state(self, state)
        npend = state_value(state, "npend", int, self)
        if not 0 <= npend <= self.PA.shape[0]:
            raise CheckpointError(f"BFGSKernel: checkpoint field 'npend'={npend} exceeds the "
                                  f"{self.PA.shape[0]} pending terms of this kernel: the "
                                  "checkpoint is of another component")
        for name, buf in (("M", self.M), ("PA", self.PA), ("PB", self.PB), ("pv", self.pv),
                          ("rt", self.rt)):
            restore_array(buf, state, name, self)
        if self.cholesky:
            restore_array(self.F, state, "F", self)
        self._npend = npend
        self._scale_pending = state_value(state, "scale_pending", bool, self)
        self._unresolved = state_value(state, "unresolved", bool, self)
        self._deferred_fail = state_value(state, "deferred_fail", bool, self)
        self._rho = state_value(state, "rho", float, self)
        # trace(H) may have overflowed (the deferral test then declines: isfinite(trace_H))
        self.trace_H = state_value(state, "trace_H", float, self, finite=False)
        self._defer_limit = state_value(state, "defer_limit", float, self, finite=False)

    # ---- Python-level API ---------------------------------------------------------------
    def _stored(self):
        with nogil:
            self._materialize()
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

    @property
    def n_pending(self):
        """Pending rank-two terms not yet folded into the stored matrix (inverse form)."""
        return self._npend + (1 if self._unresolved else 0)

    def _set_defer_limit(self, double limit):
        """Testing hook: the bound on ``trace(H) r'r`` below which pairs are deferred."""
        self._defer_limit = limit


def _cholesky_upper(a, bint own=True):
    """Testing hook: factor the symmetric matrix ``a`` (its triangle ``j >= i`` is read) with
    ``sq_potrf_upper`` (``own``) or LAPACK ``dpotrf``; returns ``(info, U)`` with ``U`` upper
    triangular, ``a = U'U`` when ``info == 0``."""
    cdef double[:, ::1] F = np.array(a, dtype=np.float64, order="C", copy=True)
    cdef int n = <int> F.shape[0], info = 0
    if F.shape[0] != F.shape[1]:
        raise ValueError("a must be square")
    if n == 0:
        return 0, np.zeros((0, 0))
    with nogil:
        if own:
            info = sq_potrf_upper(n, &F[0, 0], n)
        else:
            dpotrf(&UPLO, &n, &F[0, 0], &n, &info)
    return int(info), np.triu(np.asarray(F))
