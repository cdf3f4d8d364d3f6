# cython: language_level=3
"""Diagonal AdaGrad (Duchi, Hazan & Singer, *Adaptive subgradient methods*, JMLR 2011, Sec. 1.1
and Fig. 1 with the diagonal matrix):

    G_t = G_0 + sum_{tau <= t} g_tau * g_tau          (coordinatewise)
    d_t = g_t / (delta + sqrt(G_t))                    (H_t = diag(delta + sqrt(G_t))^-1)

and the driver moves ``w <- w - eta_t d_t`` (the paper's ``eta``: a constant step rule).

Each call of ``direction`` is one AdaGrad step: it first adds ``g * g`` to the accumulator, then
scales. ``matvec`` / ``to_dense`` apply the current ``H`` without accumulating.
"""

import numpy as np

from libc.math cimport sqrt

from sqnopt.checkpoint import restore_array
from sqnopt.curvature._base cimport CurvatureKernel


cdef class AdaGradKernel(CurvatureKernel):
    def __init__(self, Py_ssize_t dim, double delta, double initial_accumulator):
        CurvatureKernel.__init__(self, dim)
        if not delta >= 0 or not initial_accumulator >= 0:
            raise ValueError("delta and initial_accumulator must be >= 0")
        self.delta = delta
        self._accum = np.full(dim, initial_accumulator)

    cdef void cy_direction(self, const double* grad, double* out) noexcept nogil:
        cdef Py_ssize_t j
        cdef double g, den
        for j in range(self.dim):
            g = grad[j]
            self._accum[j] += g * g
            den = self.delta + sqrt(self._accum[j])
            out[j] = g / den if den > 0.0 else 0.0

    @property
    def accumulator(self):
        """``G`` (a copy)."""
        return np.array(self._accum)

    def matvec(self, g):
        """``H g`` with the current accumulator (no update)."""
        gg = np.ascontiguousarray(g, dtype=np.float64)
        if gg.shape != (self.dim,):
            raise ValueError(f"vector of length {gg.shape} does not match dim={self.dim}")
        den = self.delta + np.sqrt(np.asarray(self._accum))
        return np.divide(gg, den, out=np.zeros_like(gg), where=den > 0)

    def to_dense(self):
        """``diag(delta + sqrt(G))^-1`` (zero where the denominator is zero)."""
        den = self.delta + np.sqrt(np.asarray(self._accum))
        return np.diag(np.divide(1.0, den, out=np.zeros_like(den), where=den > 0))

    def get_state(self) -> dict:
        state = CurvatureKernel.get_state(self)
        state["accumulator"] = np.array(self._accum)
        return state

    def set_state(self, state) -> None:
        CurvatureKernel.set_state(self, state)
        restore_array(self._accum, state, "accumulator", self, lo=0.0)
