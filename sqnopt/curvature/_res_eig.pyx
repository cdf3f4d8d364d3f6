# cython: language_level=3
r"""RES through a periodic eigendecomposition and the Woodbury identity (``method="eig"``).

RES (Mokhtari & Ribeiro, ICASSP 2014, eqs. 8-9) updates, for an accepted pair,
``B+ = B + a a' - c c' + delta I`` with ``a = r~ / sqrt(v'r~)``, ``c = B v / sqrt(v'Bv)``.
Only the identity part of ``B`` changes by a full-rank amount, and it changes by a multiple of
``I``. So after an eigendecomposition ``B_s = Q Lambda Q'`` every later matrix is exactly

    B_{s+p} = Q (D + A A' - C C') Q',      D = Lambda + p delta I,

with ``A = [a_1 .. a_p]``, ``C = [c_1 .. c_p]`` in ``Q``-coordinates. With ``Y = D^{-1/2} [A C]``
and ``S = diag(+1 (p times), -1 (p times))`` the Woodbury identity gives the direction exactly:

    B^{-1} g = Q D^{-1/2} (t - Y (S + Y'Y)^{-1} Y' t),      t = D^{-1/2} Q' g

(``S^{-1} = S``; ``S + Y'Y`` is invertible whenever ``B`` is, by the determinant lemma, and is
factored with Bunch-Kaufman ``dsytrf``). Per iteration this costs two products with ``Q`` for the
direction (``Q'g``, ``Q x^``), one product of ``Q'`` with the two vectors ``[v, r~]`` per accepted
pair, and the Gram matrix ``Y'Y`` (``n (2p)^2`` flops, rebuilt whenever ``p`` changes because the
shift changes ``D``). Every ``refresh_every`` accepted pairs the kernel eigendecomposes
``D + A A' - C C'`` (LAPACK ``dsyevd``) and rotates ``Q`` (``dgemm``): ``O(n^3)``, amortised over the
pairs. A skipped pair costs ``O(n)``.

Exactness is checked, not assumed: each direction's residual ``|B^ x^ - g^|`` (``O(n p)``) is
compared with ``residual_tol (|B^| |x^| + |g^|)`` (normwise backward error, with the bound
``|B^| <= max(D) + sum |a|^2``, valid because ``B^ <= D + A A'``); a solve that misses it, or a
singular ``S + Y'Y``, triggers an eigendecomposition and the direction is recomputed from it
(``n_residual_refreshes``).

Memory: about ``4 n^2`` doubles (``Q``, the eigensolver's matrix and its workspace) plus
``4 k n`` for the pairs (``k = refresh_every``).
"""

import numpy as np

from libc.math cimport isfinite, sqrt
from libc.string cimport memcpy, memset
from scipy.linalg.cython_blas cimport dgemm, dgemv, dsyrk
from scipy.linalg.cython_lapack cimport dsyevd, dsytrf, dsytrs

from sqnopt._vec cimport sq_axpy, sq_dot
from sqnopt.checkpoint import CheckpointError, restore_array, state_array, state_value
from sqnopt.curvature._base cimport PAIR_ACCEPTED, PAIR_SKIPPED
from sqnopt.curvature._secant cimport (
    SECANT_BAD_DAMPING, SECANT_BAD_FACTOR, SECANT_NONFINITE_PAIR, SecantKernel,
)

cdef char UP = b'U'
cdef char NT = b'N'
cdef char TR = b'T'
cdef char JV = b'V'
cdef int INC = 1
# LAPACK's dsyevd workspace (1 + 6n + 2n^2 doubles) must be indexable by a 32-bit int.
MAX_DIM = 32765


def default_refresh_every(Py_ssize_t dim):
    """Accepted pairs kept beside the eigendecomposition before the next one.

    An eigendecomposition costs about ``c1 n^3`` and the Gram matrix of ``p`` pairs
    ``c2 n (2p)^2``; per iteration the sum ``c1 n^3 / k + (4/3) c2 n k^2`` is smallest near
    ``k ~ n^{2/3}``. The constant gives k = 150 at n = 1000, the best of k = 75 / 150 / 225 in
    runs of the paper-003 problem there (docs/curvature.md, "RES")."""
    return max(4, int(round(1.5 * dim ** (2.0 / 3.0))))


def _check_pivots(ipiv, Py_ssize_t m):
    """Raise :class:`CheckpointError` unless ``ipiv[:m]`` are the pivots ``dsytrf`` returns for
    ``UPLO='U'`` (1-based): ``1 <= ipiv[k] <= m`` for a 1x1 block, ``ipiv[k] = ipiv[k-1] < 0``
    with ``-ipiv[k] <= m`` for a 2x2 one -- what ``dsytrs`` reads as row numbers."""
    cdef Py_ssize_t k = m
    while k >= 1:
        piv = int(ipiv[k - 1])
        if 1 <= piv <= m:
            k -= 1
        elif piv < 0 and -piv <= m and k >= 2 and int(ipiv[k - 2]) == piv:
            k -= 2
        else:
            raise CheckpointError(f"RESEigKernel: checkpoint field 'ipiv' holds {piv} at index "
                                  f"{k - 1}, not a pivot of a factorisation of order {m}: the "
                                  "checkpoint is damaged or was edited")


cdef class RESEigKernel(SecantKernel):
    """RES with ``B`` held as an eigendecomposition plus the pairs since (see the module
    docstring)."""

    def __init__(self, Py_ssize_t dim, double delta=1e-3, double Gamma=1e-4,
                 double init_scale=1.0, double min_curvature=0.0, bint damp=False,
                 double damping=0.2, bint reset_on_nonfinite=True, bint auto_scale=False,
                 refresh_every=None, double residual_tol=1e-10):
        SecantKernel.__init__(self, dim, min_curvature, damp, damping, reset_on_nonfinite)
        if dim > MAX_DIM:
            raise ValueError(f"dim={dim} is too large for LAPACK's dsyevd workspace (at most "
                             f"{MAX_DIM}); a dense RES matrix of this size needs 8 n^2 bytes per "
                             "copy anyway: consider LBFGS, whose cost is O(memory n)")
        self._check_res_options(delta, Gamma, init_scale)
        if refresh_every is None:
            refresh_every = default_refresh_every(dim)
        if not (isinstance(refresh_every, int) and refresh_every >= 1):
            raise ValueError(f"refresh_every must be an integer >= 1, got {refresh_every!r}")
        if not (isfinite(residual_tol) and residual_tol > 0.0):
            raise ValueError(f"residual_tol must be a finite number > 0, got {residual_tol}")
        cdef Py_ssize_t k = refresh_every, n = dim
        self.delta = delta
        self.Gamma = Gamma
        self.init_scale = init_scale
        self.auto_scale = auto_scale
        self.refresh_every = k
        self.residual_tol = residual_tol
        self.E = np.zeros((n, n))
        self.lam = np.zeros(n)
        self.WA = np.zeros((k, n))
        self.WC = np.zeros((k, n))
        self.Y = np.zeros((2 * k, n))
        self.rs = np.zeros(n)
        self.G = np.zeros((2 * k, 2 * k))
        self.ipiv = np.zeros(2 * k, dtype=np.intc)
        self.sywork = np.zeros(64 * 2 * k)
        self.X2 = np.zeros((2, n))
        self.H2 = np.zeros((2, n))
        self.gh = np.zeros(n)
        self.xh = np.zeros(n)
        self.u = np.zeros(n)
        self.t1 = np.zeros(n)
        self.z = np.zeros(2 * k)
        self.q = np.zeros(2 * k)
        self.T = np.zeros((n, n))
        self.lam2 = np.zeros(n)
        self.evwork = np.zeros(1 + 6 * n + 2 * n * n)   # dsyevd's; then Q U (n^2) at refresh
        self.eviwork = np.zeros(3 + 5 * n, dtype=np.intc)
        self.n_refreshes = 0
        self.n_residual_refreshes = 0
        self.last_residual = 0.0
        self.cy_reset()

    cdef void cy_reset(self) noexcept nogil:
        self._set_scaled_identity(self.init_scale)
        self._scale_pending = self.auto_scale

    cdef void _set_scaled_identity(self, double b0) noexcept nogil:
        cdef Py_ssize_t i, n = self.dim
        memset(&self.E[0, 0], 0, n * n * sizeof(double))
        for i in range(n):
            self.E[i, i] = 1.0
            self.lam[i] = b0
        self.shift = 0.0
        self._p = 0
        self.anorm2 = 0.0
        self._gram_ok = False
        self._plain = True
        self._deferred_fail = False

    cdef void _bhat(self, const double* x, double* out) noexcept nogil:
        """``out = (D + A A' - C C') x`` in ``Q``-coordinates (``O(n p)``)."""
        cdef Py_ssize_t i, n = self.dim
        cdef int ni = <int> n, p = <int> self._p
        cdef double one = 1.0, zero = 0.0, mone = -1.0
        for i in range(n):
            out[i] = (self.lam[i] + self.shift) * x[i]
        if p == 0:
            return
        dgemv(&TR, &ni, &p, &one, &self.WA[0, 0], &ni, <double*> x, &INC, &zero, &self.q[0], &INC)
        dgemv(&NT, &ni, &p, &one, &self.WA[0, 0], &ni, &self.q[0], &INC, &one, out, &INC)
        dgemv(&TR, &ni, &p, &one, &self.WC[0, 0], &ni, <double*> x, &INC, &zero, &self.q[0], &INC)
        dgemv(&NT, &ni, &p, &mone, &self.WC[0, 0], &ni, &self.q[0], &INC, &one, out, &INC)

    cdef int _factor_gram(self) noexcept nogil:
        """``Y = D^{-1/2} [A C]`` and the Bunch-Kaufman factor of ``S + Y'Y``; -1 if singular."""
        cdef Py_ssize_t i, j, n = self.dim, p = self._p
        cdef int ni = <int> n, m = <int> (2 * p), ld = <int> (2 * self.refresh_every)
        cdef int lwork = <int> self.sywork.shape[0], info = 0
        cdef double one = 1.0, zero = 0.0
        for i in range(n):
            self.rs[i] = 1.0 / sqrt(self.lam[i] + self.shift)
        for j in range(p):
            for i in range(n):
                self.Y[j, i] = self.WA[j, i] * self.rs[i]
                self.Y[p + j, i] = self.WC[j, i] * self.rs[i]
        dsyrk(&UP, &TR, &m, &ni, &one, &self.Y[0, 0], &ni, &zero, &self.G[0, 0], &ld)
        for j in range(p):
            self.G[j, j] += 1.0
            self.G[p + j, p + j] -= 1.0
        dsytrf(&UP, &m, &self.G[0, 0], &ld, &self.ipiv[0], &self.sywork[0], &lwork, &info)
        if info != 0:
            return -1
        self._gram_ok = True
        return 0

    cdef int _solve(self) noexcept nogil:
        """``xh = B^^{-1} gh`` by Woodbury; -1 if the capacitance is singular or the residual
        check fails (the caller refreshes)."""
        cdef Py_ssize_t i, n = self.dim
        cdef int ni = <int> n, m = <int> (2 * self._p), ld = <int> (2 * self.refresh_every)
        cdef int nrhs = 1, info = 0
        cdef double one = 1.0, zero = 0.0, mone = -1.0, res, bound, gn, xn
        cdef double* t = &self.t1[0]
        cdef double* x = &self.xh[0]
        cdef double* g = &self.gh[0]
        if not self._gram_ok and self._factor_gram() != 0:
            return -1
        for i in range(n):
            t[i] = g[i] * self.rs[i]
        dgemv(&TR, &ni, &m, &one, &self.Y[0, 0], &ni, t, &INC, &zero, &self.z[0], &INC)
        dsytrs(&UP, &m, &nrhs, &self.G[0, 0], &ld, &self.ipiv[0], &self.z[0], &m, &info)
        if info != 0:
            return -1
        dgemv(&NT, &ni, &m, &mone, &self.Y[0, 0], &ni, &self.z[0], &INC, &one, t, &INC)
        for i in range(n):
            x[i] = t[i] * self.rs[i]
        # normwise backward error of the solve
        self._bhat(x, t)
        for i in range(n):
            t[i] -= g[i]
        res = sqrt(sq_dot(t, t, n))
        gn = sqrt(sq_dot(g, g, n))
        xn = sqrt(sq_dot(x, x, n))
        bound = (self.lam[n - 1] + self.shift + self.anorm2) * xn + gn
        self.last_residual = res / bound if bound > 0.0 else 0.0
        if not (self.last_residual <= self.residual_tol):
            return -1
        return 0

    cdef int _refresh(self) noexcept nogil:
        """Eigendecompose ``D + A A' - C C'`` and rotate ``Q``; -1 if LAPACK fails or the
        matrix is not positive definite."""
        cdef Py_ssize_t i, n = self.dim
        cdef int ni = <int> n, p = <int> self._p, info = 0
        cdef int lwork = <int> (1 + 6 * n + 2 * n * n), liwork = <int> (3 + 5 * n)
        cdef double one = 1.0, zero = 0.0, mone = -1.0
        memset(&self.T[0, 0], 0, n * n * sizeof(double))
        for i in range(n):
            self.T[i, i] = self.lam[i] + self.shift
        if p > 0:
            dsyrk(&UP, &NT, &ni, &p, &one, &self.WA[0, 0], &ni, &one, &self.T[0, 0], &ni)
            dsyrk(&UP, &NT, &ni, &p, &mone, &self.WC[0, 0], &ni, &one, &self.T[0, 0], &ni)
        dsyevd(&JV, &UP, &ni, &self.T[0, 0], &ni, &self.lam2[0], &self.evwork[0], &lwork,
               &self.eviwork[0], &liwork, &info)
        if info != 0 or not (self.lam2[0] > 0.0 and isfinite(self.lam2[n - 1])):
            return -1
        # Q <- Q U (the workspace is free again and holds the product)
        dgemm(&NT, &NT, &ni, &ni, &ni, &one, &self.E[0, 0], &ni, &self.T[0, 0], &ni, &zero,
              &self.evwork[0], &ni)
        memcpy(&self.E[0, 0], &self.evwork[0], n * n * sizeof(double))
        memcpy(&self.lam[0], &self.lam2[0], n * sizeof(double))
        self.shift = 0.0
        self._p = 0
        self.anorm2 = 0.0
        self._gram_ok = False
        self._plain = False
        self.n_refreshes += 1
        return 0

    cdef void _rotate(self, const double* x, double* out, bint to_q) noexcept nogil:
        """``out = Q' x`` (``to_q``) or ``out = Q x``: one pass over ``Q`` (a copy while
        ``Q = I``)."""
        cdef int ni = <int> self.dim
        cdef double one = 1.0, zero = 0.0
        if self._plain:
            memcpy(out, x, self.dim * sizeof(double))
        else:
            dgemv(&TR if to_q else &NT, &ni, &ni, &one, &self.E[0, 0], &ni, <double*> x, &INC,
                  &zero, out, &INC)

    cdef void cy_direction(self, const double* g, double* out) noexcept nogil:
        cdef Py_ssize_t i, n = self.dim
        self._rotate(g, &self.gh[0], True)
        if self._p > 0 and self._solve() != 0:
            self.n_residual_refreshes += 1
            if self._refresh() != 0:
                # cannot happen for a positive definite B; start over, report at the next pair
                self.cy_reset()
                self._deferred_fail = True
            self._rotate(g, &self.gh[0], True)
        if self._p == 0:
            for i in range(n):
                self.xh[i] = self.gh[i] / (self.lam[i] + self.shift)
        self._rotate(&self.xh[0], out, False)
        if self.Gamma != 0.0:
            sq_axpy(self.Gamma, g, out, n)

    cdef int cy_hessian_vector(self, const double* v, double* out) noexcept nogil:
        self._rotate(v, &self.t1[0], True)
        self._bhat(&self.t1[0], &self.u[0])
        self._rotate(&self.u[0], out, False)
        return 0

    cdef int cy_update_pair(self, const double* v, const double* r) noexcept nogil:
        cdef Py_ssize_t j, n = self.dim, p
        cdef int ni = <int> n, two = 2
        cdef double one = 1.0, zero = 0.0
        cdef double vr = sq_dot(v, r, n)
        cdef double vv = sq_dot(v, v, n)
        cdef double c, s, ca, cc
        cdef bint bad
        cdef double* vh = &self.H2[0, 0]
        cdef double* rh = &self.H2[1, 0]
        cdef double* u = &self.u[0]
        if self._deferred_fail:
            self._deferred_fail = False
            return self._fail(SECANT_BAD_FACTOR)
        if not (isfinite(vr) and isfinite(vv)):
            return self._fail(SECANT_NONFINITE_PAIR)
        for j in range(n):
            self.X2[0, j] = v[j]
            self.X2[1, j] = r[j] - self.delta * v[j]
        c = sq_dot(v, &self.X2[1, 0], n) if self.delta != 0.0 else vr
        if self._scale_pending and c > self.min_curvature * vv:
            # Nocedal & Wright (2006) eq. 6.20, as in the Cholesky form
            self._set_scaled_identity(sq_dot(r, r, n) / vr)
            self._scale_pending = False
        bad = not (c > self.min_curvature * vv)
        if bad and (not self.damp or vv == 0.0):
            return PAIR_SKIPPED
        # v and r~ in Q-coordinates: one pass over Q for both
        if self._plain:
            memcpy(vh, &self.X2[0, 0], 2 * n * sizeof(double))
        else:
            dgemm(&TR, &NT, &ni, &two, &ni, &one, &self.E[0, 0], &ni, &self.X2[0, 0], &ni,
                  &zero, vh, &ni)
        self._bhat(vh, u)
        if bad:
            c = self._powell(vh, rh, u, c)
            if not (isfinite(c) and c > 0.0):
                return self._fail(SECANT_BAD_DAMPING)
        s = sq_dot(vh, u, n)
        if not (isfinite(s) and s > 0.0):
            return self._fail(SECANT_BAD_FACTOR)
        p = self._p
        ca = 1.0 / sqrt(c)
        cc = 1.0 / sqrt(s)
        for j in range(n):
            self.WA[p, j] = rh[j] * ca
            self.WC[p, j] = u[j] * cc
        self.anorm2 += sq_dot(&self.WA[p, 0], &self.WA[p, 0], n)
        self._p = p + 1
        self.shift += self.delta
        self._gram_ok = False
        if self._p == self.refresh_every and self._refresh() != 0:
            return self._fail(SECANT_BAD_FACTOR)
        self.n_updates += 1
        return PAIR_ACCEPTED

    # ---- checkpoints ----------------------------------------------------------------------
    def get_state(self) -> dict:
        """The eigendecomposition (``E``, ``lam``), the pairs since (``WA``, ``WC``, ``p``,
        ``shift``, ``anorm2``), the factored capacitance matrix while it is current (``Y``,
        ``rs``, ``G``, ``ipiv``), the counters and flags; the solve and eigensolver workspaces
        are scratch."""
        state = SecantKernel.get_state(self)
        state.update(scale_pending=bool(self._scale_pending), n_refreshes=int(self.n_refreshes),
                     n_residual_refreshes=int(self.n_residual_refreshes),
                     last_residual=float(self.last_residual), shift=float(self.shift),
                     p=int(self._p), anorm2=float(self.anorm2), gram_ok=bool(self._gram_ok),
                     deferred_fail=bool(self._deferred_fail), plain=bool(self._plain),
                     E=np.array(self.E), lam=np.array(self.lam), WA=np.array(self.WA),
                     WC=np.array(self.WC))
        if self._gram_ok:
            state.update(Y=np.array(self.Y), rs=np.array(self.rs), G=np.array(self.G),
                         ipiv=np.array(self.ipiv))
        return state

    def set_state(self, state) -> None:
        SecantKernel.set_state(self, state)
        p = state_value(state, "p", int, self)
        if not 0 <= p < self.refresh_every:
            raise CheckpointError(f"RESEigKernel: checkpoint field 'p'={p} does not fit "
                                  f"refresh_every={self.refresh_every}: the checkpoint is of "
                                  "another component")
        gram_ok = state_value(state, "gram_ok", bool, self)
        if gram_ok:
            _check_pivots(state_array(state, "ipiv", self, np.intc), 2 * p)
        flags = {key: state_value(state, key, bool, self)
                 for key in ("scale_pending", "deferred_fail", "plain")}
        counts = {key: state_value(state, key, int, self, lo=0)
                  for key in ("n_refreshes", "n_residual_refreshes")}
        values = {key: state_value(state, key, float, self)
                  for key in ("last_residual", "shift", "anorm2")}
        for name, buf in (("E", self.E), ("lam", self.lam), ("WA", self.WA), ("WC", self.WC)):
            restore_array(buf, state, name, self)
        if gram_ok:
            for name, buf in (("Y", self.Y), ("rs", self.rs), ("G", self.G),
                              ("ipiv", self.ipiv)):
                restore_array(buf, state, name, self)
        self._p = p
        self._gram_ok = gram_ok
        self._scale_pending = flags["scale_pending"]
        self.n_refreshes = counts["n_refreshes"]
        self.n_residual_refreshes = counts["n_residual_refreshes"]
        self.last_residual = values["last_residual"]
        self.shift = values["shift"]
        self.anorm2 = values["anorm2"]
        self._deferred_fail = flags["deferred_fail"]
        self._plain = flags["plain"]

    # ---- Python-level API ---------------------------------------------------------------
    def hessian(self):
        """The current Hessian approximation ``B`` (dense copy)."""
        p = self._p
        Q = np.asarray(self.E).T
        A = np.asarray(self.WA)[:p]
        C = np.asarray(self.WC)[:p]
        Bh = np.diag(np.asarray(self.lam) + self.shift) + A.T @ A - C.T @ C
        B = Q @ Bh @ Q.T
        return 0.5 * (B + B.T)

    def inverse_hessian(self):
        """The current ``H = B^{-1}`` (dense copy; without the ``Gamma I`` of the direction)."""
        return np.linalg.inv(self.hessian())

    @property
    def n_pending(self):
        """Accepted pairs held beside the eigendecomposition (``p``)."""
        return self._p
