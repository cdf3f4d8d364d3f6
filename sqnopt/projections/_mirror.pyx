# cython: language_level=3
"""Mirror maps: mirror-descent updates expressed through the driver's projection slot.

The driver computes ``z = w_t - eps_t d_t`` and hands it to the projection. A mirror map keeps a
dual vector ``theta`` and its previous output ``w_t``; since ``z - w_t = -eps_t d_t`` it performs
the dual step

    theta_{t+1} = theta_t - eps_t d_t          (d_t = H_t g_t from any curvature model)
    w_{t+1}     = argmin_{w in K} B_psi(w, grad psi*(theta_{t+1}))

("lazy" / dual-averaging mirror descent, Nesterov 2009; the RFTL form of Hazan, *Introduction to
Online Convex Optimization*, 2016, Sec. 5.3). It is called exactly once per iteration, so it is a
stateful map, not an idempotent projection; :meth:`MirrorMapKernel.start` sets ``theta`` from the
starting point (the solver calls it when the solve is built).

* :class:`LazyProjectionKernel`: ``psi = ||w||^2 / 2``, ``w = P_K(theta)`` with a Euclidean
  projection ``P_K`` (e.g. the l1 ball): stochastic mirror descent of the Pegasos course notes.
  Without constraint it is plain SGD.
* :class:`ExpGradPMKernel`: exponentiated gradient +- (Kivinen & Warmuth 1997): ``w = z (p+ - p-)``
  with ``(p+, p-)`` on the ``2n``-simplex, ``p+-_j ~ exp(+-theta_j)``, i.e.
  ``w_j = z sinh(theta_j) / sum_k cosh(theta_k)``; the iterates stay in the l1 ball of radius
  ``z``. Evaluated with the shift ``max_k |theta_k|`` (no overflow for any finite ``theta``).

Both act on the regularised coordinates only: intercepts take the plain (Euclidean) step.
"""

import numpy as np

from sqnopt.checkpoint import CheckpointError, restore_array

from libc.math cimport exp, fabs
from libc.string cimport memcpy

from sqnopt.projections._base cimport ProjectionKernel


cdef class MirrorMapKernel(ProjectionKernel):
    """Base class: keeps ``theta`` and the previous output; identity map (plain SGD)."""

    def __init__(self, Py_ssize_t n_params, Py_ssize_t block, Py_ssize_t n_reg):
        ProjectionKernel.__init__(self, n_params, block, n_reg)
        self._theta = np.zeros(n_params)
        self._last = np.zeros(n_params)

    def start(self, w0) -> None:
        """Start from the iterate ``w0`` (sets the dual vector to ``grad psi(w0)``)."""
        w = np.ascontiguousarray(w0, dtype=np.float64)
        if w.shape != (self.n_params,):
            raise ValueError(f"w0 has shape {w.shape}, expected ({self.n_params},)")
        self._theta = self._dual_of(w)
        self._last = w.copy()

    def _dual_of(self, w):
        return w.copy()

    @property
    def theta(self):
        """The dual vector (a copy)."""
        return np.array(self._theta)

    def get_state(self) -> dict:
        """The dual vector ``theta`` and the previous output."""
        state = ProjectionKernel.get_state(self)
        state.update(theta=np.array(self._theta), last=np.array(self._last))
        return state

    def set_state(self, state) -> None:
        ProjectionKernel.set_state(self, state)
        restore_array(self._theta, state, "theta", self)
        restore_array(self._last, state, "last", self)

    cdef void cy_project(self, double* w) noexcept nogil:
        cdef Py_ssize_t j
        for j in range(self.n_params):
            self._theta[j] += w[j] - self._last[j]
            w[j] = self._theta[j]
        memcpy(&self._last[0], w, self.n_params * sizeof(double))


cdef class LazyProjectionKernel(MirrorMapKernel):
    """``theta <- theta - eps d``; ``w = P(theta)`` with the Euclidean projection ``inner``."""

    def __init__(self, Py_ssize_t n_params, Py_ssize_t block, Py_ssize_t n_reg,
                 ProjectionKernel inner):
        MirrorMapKernel.__init__(self, n_params, block, n_reg)
        if inner is not None and inner.n_params != n_params:
            raise ValueError("inner projection has a different layout")
        self.inner = inner

    def get_state(self) -> dict:
        state = MirrorMapKernel.get_state(self)
        state["inner"] = None if self.inner is None else self.inner.get_state()
        return state

    def set_state(self, state) -> None:
        MirrorMapKernel.set_state(self, state)
        inner = state.get("inner")
        if self.inner is not None:
            if not isinstance(inner, dict):
                raise CheckpointError("LazyProjectionKernel: the checkpoint has no state of the "
                                      "inner projection: it is of another component")
            self.inner.set_state(inner)

    cdef void cy_project(self, double* w) noexcept nogil:
        cdef Py_ssize_t j
        for j in range(self.n_params):
            self._theta[j] += w[j] - self._last[j]
            w[j] = self._theta[j]
        if self.inner is not None:
            self.inner.cy_project(w)
        memcpy(&self._last[0], w, self.n_params * sizeof(double))


cdef class ExpGradPMKernel(MirrorMapKernel):
    """Exponentiated gradient +- on the l1 ball of radius ``radius``."""

    def __init__(self, Py_ssize_t n_params, Py_ssize_t block, Py_ssize_t n_reg, double radius):
        MirrorMapKernel.__init__(self, n_params, block, n_reg)
        if not radius > 0:
            raise ValueError("radius must be > 0")
        self.radius = radius

    def _dual_of(self, w):
        """``theta`` with ``z sinh(theta_j) / sum_k cosh(theta_k) = w_j`` on the constrained
        coordinates (exists iff ``||w_reg||_1 < z``), ``theta = w`` elsewhere."""
        theta = w.copy()
        nb = self.n_params // self.block
        reg = w.reshape(nb, self.block)[:, : self.n_reg].ravel()
        c = reg / self.radius
        l1 = float(np.abs(c).sum())
        if l1 >= 1.0:
            raise ValueError(f"exponentiated gradient +- starts strictly inside the l1 ball of "
                             f"radius {self.radius}; ||w0||_1 = {l1 * self.radius:.6g}")
        if l1 == 0.0:
            t = np.zeros_like(c)
        else:
            # S = sum_k cosh(theta_k) solves S = sum_k sqrt(1 + c_k^2 S^2) (convex in S,
            # one root in [m, m / (1 - ||c||_1)]); then theta_j = asinh(c_j S).
            m = float(c.shape[0])
            lo, hi = m, m / (1.0 - l1)
            for _ in range(200):
                mid = 0.5 * (lo + hi)
                if float(np.sqrt(1.0 + (c * mid) ** 2).sum()) > mid:
                    lo = mid
                else:
                    hi = mid
                if hi - lo <= 1e-15 * hi:
                    break
            t = np.arcsinh(c * 0.5 * (lo + hi))
        theta.reshape(nb, self.block)[:, : self.n_reg] = t.reshape(nb, self.n_reg)
        return theta

    cdef void cy_project(self, double* w) noexcept nogil:
        cdef Py_ssize_t k, j, off, nb = self.n_params // self.block
        cdef double th, mx = 0.0, total = 0.0, ep, em, scale
        for k in range(nb):
            off = k * self.block
            for j in range(self.block):
                self._theta[off + j] += w[off + j] - self._last[off + j]
            for j in range(self.n_reg):
                th = fabs(self._theta[off + j])
                if th > mx:
                    mx = th
        for k in range(nb):         # w (already folded into theta) holds e+ - e- meanwhile
            off = k * self.block
            for j in range(self.n_reg):
                th = self._theta[off + j]
                ep = exp(th - mx)
                em = exp(-th - mx)
                total += ep + em
                w[off + j] = ep - em
        scale = self.radius / total
        for k in range(nb):
            off = k * self.block
            for j in range(self.block):
                if j < self.n_reg:
                    w[off + j] = scale * w[off + j]
                else:
                    w[off + j] = self._theta[off + j]   # intercepts: the plain step
        memcpy(&self._last[0], w, self.n_params * sizeof(double))
