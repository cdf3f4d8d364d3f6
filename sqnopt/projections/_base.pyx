# cython: language_level=3
"""Compiled projections.

``L2Ball(radius)``: ``w <- w * min(1, radius / ||w||)`` (Pegasos uses radius ``1/sqrt(lam)``,
Shalev-Shwartz et al. 2007, Sec. 2).
"""

from libc.math cimport sqrt


cdef class ProjectionKernel:
    """Base class: no constraint."""

    #: The kernel runs in the compiled driver (its ``cy_*`` methods, without the GIL): the
    #: solver reads this declaration (``compiled`` of the kernel protocols in
    #: ``sqnopt.interfaces``, False when absent). A Python subclass that overrides only the
    #: Python-level methods declares ``compiled = False`` to run in the Python loop.
    compiled = True

    def __init__(self, Py_ssize_t n_params, Py_ssize_t block, Py_ssize_t n_reg):
        if block < 1 or n_params % block != 0 or n_reg > block:
            raise ValueError("inconsistent projection layout")
        self.n_params = n_params
        self.block = block
        self.n_reg = n_reg

    cdef void cy_project(self, double* w) noexcept nogil:
        pass

    def get_state(self) -> dict:
        """What the projection carries from one call to the next (copies: arrays and Python
        scalars); a Euclidean projection carries nothing."""
        return {}

    def set_state(self, state) -> None:
        """Restore what :meth:`get_state` returned, on a kernel of the same component and
        layout."""
        if not isinstance(state, dict):
            raise TypeError(f"set_state expects a dict, got {type(state).__name__}")

    def project(self, double[::1] w) -> None:
        """Project ``w`` in place."""
        if w.shape[0] != self.n_params:
            raise ValueError(f"vector of length {w.shape[0]} does not match n_params={self.n_params}")
        self.cy_project(&w[0])


cdef class L2BallKernel(ProjectionKernel):
    def __init__(self, Py_ssize_t n_params, Py_ssize_t block, Py_ssize_t n_reg, double radius):
        ProjectionKernel.__init__(self, n_params, block, n_reg)
        if not radius > 0:
            raise ValueError("radius must be > 0")
        self.radius = radius
        self.ball_radius = radius

    cdef void cy_project(self, double* w) noexcept nogil:
        cdef Py_ssize_t k, j, off
        cdef double sq = 0.0, scale
        for k in range(self.n_params // self.block):
            off = k * self.block
            for j in range(self.n_reg):
                sq += w[off + j] * w[off + j]
        if sq <= self.radius * self.radius:
            return
        scale = self.radius / sqrt(sq)
        for k in range(self.n_params // self.block):
            off = k * self.block
            for j in range(self.n_reg):
                w[off + j] *= scale
