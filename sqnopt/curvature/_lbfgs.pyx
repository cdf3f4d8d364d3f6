# cython: language_level=3
r"""Online limited-memory BFGS (oLBFGS): Mokhtari & Ribeiro, *Global convergence of online
limited memory BFGS*, JMLR 16 (2015), Algorithms 1 and 2.

The direction is ``d_t = H_t g`` with ``H_t`` the L-BFGS matrix built from the last ``tau``
accepted pairs ``(v_u, r_u)`` on top of ``H_{t,0} = gamma_t I``, applied by the two-loop recursion
(Algorithm 1; Nocedal & Wright 2006, Algorithm 7.4) in ``4 tau n`` multiply-adds plus ``n``:

    p = g
    for u = newest .. oldest:   alpha_u = rho_u v_u'p;   p -= alpha_u r_u
    q = gamma_t p
    for u = oldest .. newest:   beta = rho_u r_u'q;      q += (alpha_u - beta) v_u

with ``rho_u = 1 / v_u'r_u`` and ``gamma_t = v'r / r'r`` of the newest stored pair (paper eq. 19;
``gamma_0`` before the first pair, 1 in the paper). Pairs live in a ring buffer allocated once:
no allocation per iteration. While fewer than ``tau`` pairs exist, all of them are used.

``B v`` (for Powell damping only) uses the unrolled form of the direct BFGS update
(Nocedal & Wright 2006, Sec. 7.2, "unrolling the update") from ``B_0 = I / gamma_t``:
``B v = B_0 v + sum_u [rho_u (r_u'v) r_u - (a_u'v) a_u]`` with
``a_u = B_u v_u / sqrt(v_u' B_u v_u)`` -- ``O(tau^2 n)``, paid only for damped pairs.
"""

import numpy as np

from libc.math cimport isfinite, sqrt
from libc.string cimport memcpy

from sqnopt._vec cimport sq_axpy, sq_axpy_dot, sq_dot, sq_two_loop
from sqnopt.checkpoint import CheckpointError, restore_array, state_value
from sqnopt.curvature._base cimport PAIR_ACCEPTED, PAIR_SKIPPED
from sqnopt.curvature._secant cimport (
    SECANT_BAD_DAMPING, SECANT_NONFINITE_PAIR, SecantKernel,
)


cdef class LBFGSKernel(SecantKernel):
    """oLBFGS direction ``H_t g`` by the two-loop recursion over a ring buffer of pairs."""

    def __init__(self, Py_ssize_t dim, Py_ssize_t memory=10, double gamma0=1.0,
                 double min_curvature=0.0, bint damp=False, double damping=0.2,
                 bint reset_on_nonfinite=True):
        SecantKernel.__init__(self, dim, min_curvature, damp, damping, reset_on_nonfinite)
        if memory < 1:
            raise ValueError(f"memory must be >= 1, got {memory}")
        if not (isfinite(gamma0) and gamma0 > 0.0):
            raise ValueError(f"gamma0 must be a finite number > 0, got {gamma0}")
        self.memory = memory
        self.gamma0 = gamma0
        self.V = np.zeros((memory, dim))
        self.R = np.zeros((memory, dim))
        self.rho = np.zeros(memory)
        self.alpha = np.zeros(memory)
        self.A = np.zeros((memory, dim))
        self.bv = np.zeros(dim)
        self.cy_reset()

    cdef void cy_reset(self) noexcept nogil:
        self.count = 0
        self.head = self.memory - 1
        self.gamma = self.gamma0

    cdef void cy_direction(self, const double* g, double* out) noexcept nogil:
        # Each axpy of the recursion is fused with the dot product that follows it (one pass
        # over q instead of two): 2 tau + 3 passes over n-vectors, 4 tau n + n multiply-adds;
        # the whole recursion is one call into sqnopt/_simd.h (AVX-512 / AVX2 / baseline variants).
        sq_two_loop(self.dim, &self.V[0, 0], &self.R[0, 0], self.dim, self.memory, self.count,
                    self.head, &self.rho[0], &self.alpha[0], self.gamma, g, out)

    cdef int cy_hessian_vector(self, const double* v, double* out) noexcept nogil:
        cdef Py_ssize_t n = self.dim, tau = self.memory, m = self.count
        cdef Py_ssize_t i, k, j, idx, jdx, first
        cdef double inv_gamma = 1.0 / self.gamma, c, sbs
        cdef double* a
        first = self.head - m + 1
        if first < 0:
            first += tau
        # a_i = B_i s_i / sqrt(s_i' B_i s_i), oldest first
        idx = first
        for i in range(m):
            a = &self.A[i, 0]
            for j in range(n):
                a[j] = inv_gamma * self.V[idx, j]
            jdx = first
            for k in range(i):
                c = self.rho[jdx] * sq_dot(&self.R[jdx, 0], &self.V[idx, 0], n)
                sq_axpy(c, &self.R[jdx, 0], a, n)
                c = sq_dot(&self.A[k, 0], &self.V[idx, 0], n)
                sq_axpy(-c, &self.A[k, 0], a, n)
                jdx = jdx + 1 if jdx < tau - 1 else 0
            sbs = sq_dot(a, &self.V[idx, 0], n)
            if not (isfinite(sbs) and sbs > 0.0):
                return -1
            sbs = 1.0 / sqrt(sbs)
            for j in range(n):
                a[j] *= sbs
            idx = idx + 1 if idx < tau - 1 else 0
        for j in range(n):
            out[j] = inv_gamma * v[j]
        idx = first
        for i in range(m):
            c = self.rho[idx] * sq_dot(&self.R[idx, 0], v, n)
            sq_axpy(c, &self.R[idx, 0], out, n)
            c = sq_dot(&self.A[i, 0], v, n)
            sq_axpy(-c, &self.A[i, 0], out, n)
            idx = idx + 1 if idx < tau - 1 else 0
        return 0

    cdef int cy_update_pair(self, const double* v, const double* r) noexcept nogil:
        cdef Py_ssize_t n = self.dim
        cdef Py_ssize_t slot = self.head + 1 if self.head < self.memory - 1 else 0
        cdef double vr = sq_dot(v, r, n)
        cdef double rr = sq_dot(r, r, n)
        cdef double vv = 0.0
        cdef double* rs
        # v'r and r'r are finite only if every entry of v and r is (an inf or NaN entry makes
        # v'r or r'r inf or NaN, also against a zero of the other vector)
        if not (isfinite(vr) and isfinite(rr)):
            return self._fail(SECANT_NONFINITE_PAIR)
        if self.min_curvature != 0.0 or vr <= 0.0:
            vv = sq_dot(v, v, n)
        if not (vr > self.min_curvature * vv):
            if not self.damp or vv == 0.0:
                return PAIR_SKIPPED
            # B v with the current memory, before the slot of the oldest pair is overwritten.
            if self.cy_hessian_vector(v, &self.bv[0]) != 0:
                return self._fail(SECANT_BAD_DAMPING)
            rs = &self.R[slot, 0]
            memcpy(rs, r, n * sizeof(double))
            vr = self._powell(v, rs, &self.bv[0], vr)
            rr = sq_dot(rs, rs, n)
            if not (isfinite(vr) and vr > 0.0 and isfinite(rr)):
                return self._fail(SECANT_BAD_DAMPING)
        else:
            memcpy(&self.R[slot, 0], r, n * sizeof(double))
        memcpy(&self.V[slot, 0], v, n * sizeof(double))
        self.rho[slot] = 1.0 / vr
        self.gamma = vr / rr
        self.head = slot
        if self.count < self.memory:
            self.count += 1
        self.n_updates += 1
        return PAIR_ACCEPTED

    # ---- Python-level API ---------------------------------------------------------------
    def pairs(self):
        """The stored pairs ``(V, R)``, oldest first, as ``(count, dim)`` arrays (copies)."""
        order = [(self.head - self.count + 1 + k) % self.memory for k in range(self.count)]
        return np.asarray(self.V)[order].copy(), np.asarray(self.R)[order].copy()

    def get_state(self) -> dict:
        """The pair memory (ring buffer, ``1 / v'r`` and ``gamma``) with the secant counters;
        the two-loop and damping scratch is not state."""
        state = SecantKernel.get_state(self)
        state.update(count=int(self.count), gamma=float(self.gamma), head=int(self.head),
                     V=np.array(self.V), R=np.array(self.R), rho=np.array(self.rho))
        return state

    def set_state(self, state) -> None:
        SecantKernel.set_state(self, state)
        count = state_value(state, "count", int, self)
        head = state_value(state, "head", int, self)
        if not (0 <= count <= self.memory and 0 <= head < self.memory):
            raise CheckpointError(f"LBFGSKernel: checkpoint fields count={count}, head={head} do not "
                             f"fit memory={self.memory}: the checkpoint is of another component")
        gamma = state_value(state, "gamma", float, self, positive=True)
        restore_array(self.V, state, "V", self)
        restore_array(self.R, state, "R", self)
        restore_array(self.rho, state, "rho", self)
        self.count = count
        self.head = head
        self.gamma = gamma
