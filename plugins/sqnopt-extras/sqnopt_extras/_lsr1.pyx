# cython: language_level=3
"""Limited-memory symmetric rank-one (L-SR1) curvature model in the compact inverse form.

SR1 (Nocedal & Wright 2006, Sec. 6.2) updates the inverse Hessian approximation with the
secant pair ``s = v = w_{t+1} - w_t``, ``y = r = s(w_{t+1}, B) - s(w_t, B)`` by

    H+ = H + u u' / (u'y),     u = s - H y,

the only symmetric rank-one change with ``H+ y = s``. It needs no positive curvature
(``s'y`` of either sign) and so follows indefinite Hessians, but ``u'y`` may vanish: the pair is
skipped when

    |y'(s - H y)| < r ||y|| ||s - H y||      (r = ``skip_tol``, 1e-8),

Nocedal & Wright's safeguard (6.26), written for the inverse update that is applied (for the
direct update ``B+ = B + w w'/(w's)``, ``w = y - Bs``, it reads ``|s'w| < r ||s|| ||w||``; the
inverse update exists exactly when ``y'Hw`` does not vanish, which is the test above with
``u = -H w``). A pair with ``u = 0`` already holds and is skipped too.

With the ``k <= m`` newest accepted pairs as the columns of ``S`` and ``Y`` and ``H_0 = gamma I``,
the ``k`` updates equal the compact form of Byrd, Nocedal & Schnabel (Math. Prog. 63, 1994,
Thm. 5.1):

    H = gamma I + (S - gamma Y) M^{-1} (S - gamma Y)',    M = R + R' - D - gamma Y'Y,

``R`` the upper triangle of ``S'Y`` (diagonal included: ``R_pq = s_p'y_q`` for the older
``p <= q``) and ``D`` its diagonal. A direction costs ``4 k n`` flops and one ``k x k``
solve: ``d = gamma g + (S - gamma Y) c`` with ``M c = S'g - gamma Y'g``. The kernel keeps
``S'Y`` and ``Y'Y`` up to date (``2 k`` dot products per accepted pair, reusing those of the
skip test), so ``M`` is assembled in ``O(k^2)``.

The scaling: ``gamma = tau s'y / y'y`` from the newest accepted pair with ``s'y > 0``
(``tau = gamma_scale``, 0.5; ``gamma_init`` before any). L-BFGS takes ``tau = 1`` (Nocedal &
Wright (7.20)), but for SR1 that choice is degenerate: the newest pair's diagonal entry of
``M`` is then ``s'y - gamma y'y = 0`` -- the pair's own rank-one update of ``H_0``,
``u = s - gamma y``, has ``u'y = 0`` -- and with one pair ``M`` is singular. With ``tau < 1``,
``u'y = (1 - tau) s'y > 0``: ``H_0`` underestimates the inverse curvature along ``y`` and the
update adds the rest along ``u``, a positive definite ``H`` for one pair.

The descent safeguard: an SR1 matrix may be indefinite, and ``-H g`` then need not descend.
The kernel returns ``d = H g`` only when ``g'd > min_cosine ||g|| ||d||`` (the angle between
``d`` and the gradient stays below 90 degrees by a margin) and ``M`` is not singular to working
precision (Gaussian elimination with partial pivoting; a pivot below ``1e-12 max|M|`` fails);
otherwise it returns the scaled gradient ``gamma g``, which descends whenever ``g != 0``
(``n_fallbacks`` counts these). A pair whose skip test needs a singular ``M`` resets the memory
(``PAIR_RESET``: the pairs stored no longer define an SR1 matrix). Non-finite pairs reset the
memory and ``gamma``.
"""

from libc.math cimport fabs, isfinite, sqrt

import numpy as np

from sqnopt._vec cimport sq_axpy, sq_dot
from sqnopt.checkpoint import CheckpointError, restore_array, state_value
from sqnopt.curvature._base cimport (
    PAIR_ACCEPTED, PAIR_RESET, PAIR_SKIPPED, CurvatureKernel,
)

# A pivot of the solve with M below this share of max|M| counts as singular.
cdef double PIVOT_TOL = 1e-12


cdef class LSR1Kernel(CurvatureKernel):
    cdef readonly Py_ssize_t memory
    cdef readonly Py_ssize_t count          # pairs stored (<= memory)
    cdef readonly Py_ssize_t head           # slot of the oldest pair
    cdef readonly double gamma
    cdef readonly double gamma_init
    cdef readonly double gamma_scale
    cdef readonly double skip_tol
    cdef readonly double min_cosine
    cdef readonly Py_ssize_t n_fallbacks    # directions that fell back to gamma g
    cdef double[:, ::1] S                   # slot rows: s_p
    cdef double[:, ::1] Y                   # slot rows: y_p
    cdef double[:, ::1] SY                  # SY[i, j] = s_i . y_j (slots)
    cdef double[:, ::1] YY                  # YY[i, j] = y_i . y_j (slots)
    # scratch (always written before read): chronological vectors, M and the work vector
    cdef double[::1] a
    cdef double[::1] b
    cdef double[::1] c
    cdef double[:, ::1] M
    cdef double[::1] hr

    def __init__(self, Py_ssize_t dim, Py_ssize_t memory, double gamma_init,
                 double gamma_scale, double skip_tol, double min_cosine):
        CurvatureKernel.__init__(self, dim)
        if memory < 1:
            raise ValueError("memory must be >= 1")
        self.needs_secant_pair = True
        self.memory = memory
        self.count = 0
        self.head = 0
        self.gamma = gamma_init
        self.gamma_init = gamma_init
        self.gamma_scale = gamma_scale
        self.skip_tol = skip_tol
        self.min_cosine = min_cosine
        self.n_fallbacks = 0
        self.S = np.zeros((memory, dim))
        self.Y = np.zeros((memory, dim))
        self.SY = np.zeros((memory, memory))
        self.YY = np.zeros((memory, memory))
        self.a = np.zeros(memory)
        self.b = np.zeros(memory)
        self.c = np.zeros(memory)
        self.M = np.zeros((memory, memory))
        self.hr = np.zeros(dim)

    cdef inline Py_ssize_t _slot(self, Py_ssize_t p) noexcept nogil:
        """The slot of the p-th oldest stored pair."""
        return (self.head + p) % self.memory

    cdef int _coefficients(self) noexcept nogil:
        """``c = M^{-1} (a - gamma b)`` for ``a = S'x``, ``b = Y'x`` (chronological, in
        ``self.a``, ``self.b``); returns 0, or -1 when M is singular to working precision."""
        cdef Py_ssize_t k = self.count, p, q, i, piv, sp, sq
        cdef double gamma = self.gamma, big = 0.0, t, f
        cdef double[:, ::1] M = self.M
        cdef double* c = &self.c[0]
        for p in range(k):
            sp = self._slot(p)
            c[p] = self.a[p] - gamma * self.b[p]
            for q in range(p, k):
                sq = self._slot(q)
                # R + R' - D: s_p'y_q for the older p (the diagonal: s_p'y_p)
                M[p, q] = self.SY[sp, sq] - gamma * self.YY[sp, sq]
                M[q, p] = M[p, q]
                if fabs(M[p, q]) > big:
                    big = fabs(M[p, q])
        if not (isfinite(big) and big > 0.0):
            return -1
        # Gaussian elimination with partial pivoting, then back substitution
        for i in range(k):
            piv = i
            for p in range(i + 1, k):
                if fabs(M[p, i]) > fabs(M[piv, i]):
                    piv = p
            if not fabs(M[piv, i]) > PIVOT_TOL * big:
                return -1
            if piv != i:
                for q in range(i, k):
                    t = M[i, q]
                    M[i, q] = M[piv, q]
                    M[piv, q] = t
                t = c[i]
                c[i] = c[piv]
                c[piv] = t
            for p in range(i + 1, k):
                f = M[p, i] / M[i, i]
                for q in range(i + 1, k):
                    M[p, q] -= f * M[i, q]
                c[p] -= f * c[i]
        for i in range(k - 1, -1, -1):
            t = c[i]
            for q in range(i + 1, k):
                t -= M[i, q] * c[q]
            c[i] = t / M[i, i]
        for p in range(k):
            if not isfinite(c[p]):
                return -1
        return 0

    cdef int _apply(self, const double* x, double* out) noexcept nogil:
        """``out = H x`` by the compact form; returns -1 (``out`` not written) when M is
        singular."""
        cdef Py_ssize_t p, j, sp, n = self.dim, k = self.count
        cdef double gamma = self.gamma
        for p in range(k):
            sp = self._slot(p)
            self.a[p] = sq_dot(&self.S[sp, 0], x, n)
            self.b[p] = sq_dot(&self.Y[sp, 0], x, n)
        if k > 0 and self._coefficients() != 0:
            return -1
        for j in range(n):
            out[j] = gamma * x[j]
        for p in range(k):
            sp = self._slot(p)
            sq_axpy(self.c[p], &self.S[sp, 0], out, n)
            sq_axpy(-gamma * self.c[p], &self.Y[sp, 0], out, n)
        return 0

    cdef void cy_direction(self, const double* grad, double* out) noexcept nogil:
        cdef Py_ssize_t j, n = self.dim
        cdef double gg, gd, dd
        if self.count > 0 and self._apply(grad, out) == 0:
            gg = sq_dot(grad, grad, n)
            gd = sq_dot(grad, out, n)
            dd = sq_dot(out, out, n)
            if gg == 0.0 or (isfinite(gd) and isfinite(dd)
                             and gd > self.min_cosine * sqrt(gg) * sqrt(dd)):
                return
            self.n_fallbacks += 1
        elif self.count > 0:
            self.n_fallbacks += 1
        for j in range(n):
            out[j] = self.gamma * grad[j]

    cdef void _reset(self) noexcept nogil:
        self.count = 0
        self.head = 0

    cdef int cy_update_pair(self, const double* v, const double* r) noexcept nogil:
        cdef Py_ssize_t n = self.dim, k = self.count, p, q, sp, slot, j, old_head
        cdef double vr = sq_dot(v, r, n), rr = sq_dot(r, r, n), vv = sq_dot(v, v, n)
        cdef double ur, uu
        cdef double* u = &self.hr[0]
        if not (isfinite(vr) and isfinite(rr) and isfinite(vv)):
            self._reset()
            self.gamma = self.gamma_init
            return PAIR_RESET
        if rr == 0.0 or vv == 0.0:
            return PAIR_SKIPPED
        # u = v - H r (H r by the compact form; a singular M: the stored pairs are unusable)
        if self._apply(r, u) != 0:
            self._reset()
            return PAIR_RESET
        for j in range(n):
            u[j] = v[j] - u[j]
        ur = sq_dot(u, r, n)
        uu = sq_dot(u, u, n)
        if not (isfinite(ur) and isfinite(uu)):
            self._reset()
            self.gamma = self.gamma_init
            return PAIR_RESET
        if uu == 0.0 or fabs(ur) < self.skip_tol * sqrt(rr) * sqrt(uu):
            return PAIR_SKIPPED
        # accepted: self.a[p] = s_p'r and self.b[p] = y_p'r (from _apply) are the new column
        # of S'Y and row of Y'Y; the newest pair replaces the oldest when the memory is full
        old_head = self.head
        if k < self.memory:
            slot = self._slot(k)
            self.count = k + 1
            p = 0
        else:
            slot = old_head
            self.head = (old_head + 1) % self.memory
            p = 1                   # chronological 0 is the pair being replaced
        for j in range(n):
            self.S[slot, j] = v[j]
            self.Y[slot, j] = r[j]
        for q in range(p, k):
            sp = (old_head + q) % self.memory
            self.SY[sp, slot] = self.a[q]
            self.YY[sp, slot] = self.b[q]
            self.YY[slot, sp] = self.b[q]
            self.SY[slot, sp] = sq_dot(v, &self.Y[sp, 0], n)
        self.SY[slot, slot] = vr
        self.YY[slot, slot] = rr
        if vr > 0.0:
            self.gamma = self.gamma_scale * (vr / rr)
        return PAIR_ACCEPTED

    def error_message(self) -> str:
        return "L-SR1 failed"

    def get_state(self) -> dict:
        """The stored pairs (chronological, oldest first), ``S'Y`` and ``Y'Y`` among them,
        ``gamma`` and the fallback count: everything a direction or an update reads."""
        state = CurvatureKernel.get_state(self)
        order = [self._slot(p) for p in range(self.count)]
        S, Y = np.asarray(self.S), np.asarray(self.Y)
        SY, YY = np.asarray(self.SY), np.asarray(self.YY)
        state.update(S=S[order].copy(), Y=Y[order].copy(),
                     SY=SY[np.ix_(order, order)].copy(), YY=YY[np.ix_(order, order)].copy(),
                     gamma=float(self.gamma), n_fallbacks=int(self.n_fallbacks))
        return state

    def set_state(self, state) -> None:
        """Restore :meth:`get_state`'s dict (its pairs go to slots ``0..k-1``)."""
        CurvatureKernel.set_state(self, state)
        gamma = state_value(state, "gamma", float, self, positive=True)
        n_fallbacks = state_value(state, "n_fallbacks", int, self, lo=0)
        S = np.asarray(state.get("S", np.zeros((0, 0))))
        k = S.shape[0] if S.ndim == 2 else -1
        if not (0 <= k <= self.memory):
            raise CheckpointError(f"LSR1Kernel: checkpoint field 'S' holds {k} pairs, the "
                                  f"memory is {self.memory}: the checkpoint is of another "
                                  "L-SR1 configuration")
        S_buf, Y_buf = np.zeros((k, self.dim)), np.zeros((k, self.dim))
        SY_buf, YY_buf = np.zeros((k, k)), np.zeros((k, k))
        restore_array(S_buf, state, "S", self)
        restore_array(Y_buf, state, "Y", self)
        restore_array(SY_buf, state, "SY", self)
        restore_array(YY_buf, state, "YY", self)
        np.asarray(self.S)[:k] = S_buf
        np.asarray(self.Y)[:k] = Y_buf
        np.asarray(self.SY)[:k, :k] = SY_buf
        np.asarray(self.YY)[:k, :k] = YY_buf
        self.count = k
        self.head = 0
        self.gamma = gamma
        self.n_fallbacks = n_fallbacks
