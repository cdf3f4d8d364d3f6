# cython: language_level=3
"""Diagonal AdaGrad (Duchi, Hazan & Singer, *Adaptive subgradient methods*, JMLR 2011, Sec. 1.1
and Fig. 1 with the diagonal matrix):

    G_t = G_0 + sum_{tau <= t} g_tau * g_tau          (coordinatewise)
    d_t = g_t / (delta + sqrt(G_t))                    (H_t = diag(delta + sqrt(G_t))^-1)

and the driver moves ``w <- w - eta_t d_t`` (the paper's ``eta``: a constant step rule).

Each call of ``direction`` is one AdaGrad step: it first adds ``g * g`` to the accumulator, then
scales. ``matvec`` / ``to_dense`` apply the current ``H`` without accumulating.

**Composite form** (``composite``: the kernel declares ``composite_step`` and
``adagrad_accumulator``). The objective is ``F(w) = f(w) + phi(w)`` with the loss part ``f`` and
``phi(w) = (lam/2) ||w_reg||^2``; AdaGrad's composite mirror-descent update (COMID; Duchi et
al. 2011, Sec. 3, eq. 4 with ``psi_t(w) = (1/2) w' diag(s_t) w``) linearises only ``f`` and keeps
``phi`` exact:

    w_{t+1} = argmin_w  eta <g_t, w> + eta phi(w) + (1/2) ||w - w_t||^2_{diag(s_t)},

where ``g_t`` is the minibatch gradient of the *loss* part, ``G_t = G_{t-1} + g_t * g_t`` and
``s_t = delta + sqrt(G_t)``. Per coordinate, with ``lam_j = lam`` (0 on intercepts):

    w_{t+1,j} = (s_j w_{t,j} - eta g_j) / (s_j + eta lam_j).

The regulariser never enters the accumulator, and a coordinate with no loss gradient only
shrinks by ``s_j / (s_j + eta lam_j)`` in ``(0, 1]``: any step is stable (there is no step above
which the L2 term overshoots, as ``1 - eta lam`` does in the plain form), and ``k`` such steps
are one factor -- the just-in-time form of :mod:`sqnopt.solver._adaptive_loop`, O(nnz) per step
on sparse rows. The driver calls ``cy_composite_step`` with the minibatch gradient of the whole
objective ``g + lam w_reg``; the kernel takes the loss part back out (``g_j - lam_j w_j``).
Where ``s_j + eta lam_j`` is 0 (``delta = 0``, nothing accumulated, no regulariser) the
coordinate stays as it is.
"""

import numpy as np

from libc.math cimport isfinite, sqrt

from sqnopt.checkpoint import restore_array
from sqnopt.curvature._base cimport CurvatureKernel


cdef class AdaGradKernel(CurvatureKernel):
    """Diagonal AdaGrad; with ``composite``, its composite form (see the module docstring) for
    an objective with L2 regularisation ``lam`` whose parameters are blocks of ``block``
    coordinates (0: one block of ``dim``), the last of each an unregularised intercept when
    ``intercept``."""

    def __init__(self, Py_ssize_t dim, double delta, double initial_accumulator,
                 bint composite=False, double lam=0.0, Py_ssize_t block=0,
                 bint intercept=False):
        CurvatureKernel.__init__(self, dim)
        if not delta >= 0 or not initial_accumulator >= 0:
            raise ValueError("delta and initial_accumulator must be >= 0")
        if block == 0:
            block = dim
        if not lam >= 0 or lam == float("inf") or block < 1 or dim % block != 0 or (
                intercept and block < 2):
            raise ValueError("lam must be finite and >= 0, and dim a multiple of block (>= 2 "
                             "with an intercept)")
        self.delta = delta
        self._accum = np.full(dim, initial_accumulator)
        self.composite_step = composite
        self.adagrad_accumulator = composite
        self.lam = lam
        self.block = block
        self.intercept = intercept

    cdef double* cy_accumulator(self) noexcept nogil:
        return &self._accum[0] if self.adagrad_accumulator else NULL

    cdef int cy_composite_step(self, const double* w, const double* grad, double eps,
                               double* w_next) noexcept nogil:
        """The composite step (module docstring) of every coordinate: ``w_next``, and ``G``
        once every new value is known to be finite (a second pass, with the same arithmetic)."""
        cdef Py_ssize_t b, j, r, n_reg = self.block - 1 if self.intercept else self.block
        cdef double lam_j, gl, acc, s, den
        cdef double delta = self.delta
        cdef double* G = &self._accum[0]
        if not self.composite_step:
            return -1
        for b in range(self.dim // self.block):
            j = b * self.block
            for r in range(self.block):
                lam_j = self.lam if r < n_reg else 0.0
                gl = grad[j + r] - lam_j * w[j + r]
                acc = G[j + r] + gl * gl
                s = delta + sqrt(acc)
                den = s + eps * lam_j
                w_next[j + r] = (s * w[j + r] - eps * gl) / den if den > 0.0 else w[j + r]
                if not (isfinite(w_next[j + r]) and isfinite(acc)):
                    return -1
        for b in range(self.dim // self.block):
            j = b * self.block
            for r in range(self.block):
                lam_j = self.lam if r < n_reg else 0.0
                gl = grad[j + r] - lam_j * w[j + r]
                G[j + r] = G[j + r] + gl * gl
        return 0

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

    @property
    def regularized(self):
        """``lam_j / lam``: 1 on the coordinates the composite form regularises, 0 on
        intercepts (a new array)."""
        reg = np.ones(self.dim)
        if self.intercept:
            reg[self.block - 1::self.block] = 0.0
        return reg

    def get_state(self) -> dict:
        state = CurvatureKernel.get_state(self)
        state["accumulator"] = np.array(self._accum)
        return state

    def set_state(self, state) -> None:
        CurvatureKernel.set_state(self, state)
        restore_array(self._accum, state, "accumulator", self, lo=0.0)
