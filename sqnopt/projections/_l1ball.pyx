# cython: language_level=3
"""Euclidean projection onto the l1 ball ``{w : ||w_reg||_1 <= z}``.

The projection is soft thresholding ``w_j <- sign(w_j) max(|w_j| - theta, 0)`` with the unique
``theta > 0`` that puts the result on the sphere ``||w||_1 = z`` (when ``||w||_1 > z``; otherwise
``w`` is already inside). ``theta`` is found with the randomized-pivot algorithm of Duchi,
Shalev-Shwartz, Singer & Chandra, *Efficient projections onto the l1-ball for learning in high
dimensions* (ICML 2008, Fig. 2): expected O(m) for the ``m`` nonzero coordinates, in place on a
work buffer. Pivots come from a fixed-seed xorshift generator, so the result is deterministic
(and, up to the rounding of one sum, independent of the pivots).
"""

import numpy as np

from sqnopt.checkpoint import state_value

from libc.math cimport fabs

from sqnopt.projections._base cimport ProjectionKernel


cdef inline unsigned long long _xorshift(unsigned long long* state) noexcept nogil:
    cdef unsigned long long x = state[0]
    x ^= x << 13
    x ^= x >> 7
    x ^= x << 17
    state[0] = x
    return x


cdef class L1BallKernel(ProjectionKernel):
    """Projection onto ``{||w_reg||_1 <= radius}`` (all blocks together; intercepts free)."""

    def __init__(self, Py_ssize_t n_params, Py_ssize_t block, Py_ssize_t n_reg, double radius):
        ProjectionKernel.__init__(self, n_params, block, n_reg)
        if not radius > 0:
            raise ValueError("radius must be > 0")
        self.radius = radius
        self._work = np.zeros(max(1, (n_params // block) * n_reg))
        self._rng = 0x9E3779B97F4A7C15

    def get_state(self) -> dict:
        """The state of the pivot generator (the pivots change the rounding of the threshold's
        sums, so a resumed solve draws the same ones)."""
        state = ProjectionKernel.get_state(self)
        state["rng"] = int(self._rng)
        return state

    def set_state(self, state) -> None:
        ProjectionKernel.set_state(self, state)
        # a xorshift64 state: any non-zero 64-bit word
        self._rng = state_value(state, "rng", int, self, lo=1, hi=2**64 - 1)

    cdef double cy_threshold(self, double* work, Py_ssize_t m) noexcept nogil:
        """The threshold ``theta`` for the magnitudes ``work[0:m]`` (> 0, summing to more than
        the radius); ``work`` is reordered."""
        cdef Py_ssize_t lo = 0, hi = m, k, j, g
        cdef double s = 0.0, ds, pivot, tmp
        cdef Py_ssize_t rho = 0, drho
        while lo < hi:
            k = lo + <Py_ssize_t> (_xorshift(&self._rng) % <unsigned long long> (hi - lo))
            pivot = work[k]
            work[k] = work[lo]
            work[lo] = pivot
            # G = {u_j >= pivot} -> work[lo:g] (the pivot first), L -> work[g:hi]
            g = lo + 1
            ds = pivot
            for j in range(lo + 1, hi):
                if work[j] >= pivot:
                    tmp = work[g]
                    work[g] = work[j]
                    work[j] = tmp
                    ds += work[g]
                    g += 1
            drho = g - lo
            if (s + ds) - (rho + drho) * pivot < self.radius:
                s += ds          # every element of G is above the threshold
                rho += drho
                lo = g           # continue with L
            else:
                lo += 1          # continue with G without the pivot
                hi = g
        return (s - self.radius) / rho

    cdef void cy_project(self, double* w) noexcept nogil:
        cdef Py_ssize_t k, j, off, m = 0
        cdef Py_ssize_t nb = self.n_params // self.block
        cdef double a, total = 0.0, theta
        cdef double* work = &self._work[0]
        for k in range(nb):
            off = k * self.block
            for j in range(self.n_reg):
                a = fabs(w[off + j])
                if a > 0.0:
                    work[m] = a
                    total += a
                    m += 1
        if total <= self.radius:
            return
        theta = self.cy_threshold(work, m)
        for k in range(nb):
            off = k * self.block
            for j in range(self.n_reg):
                a = fabs(w[off + j]) - theta
                if a <= 0.0:
                    w[off + j] = 0.0
                elif w[off + j] > 0.0:
                    w[off + j] = a
                else:
                    w[off + j] = -a
