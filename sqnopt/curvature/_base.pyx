# cython: language_level=3
"""Compiled curvature-model base class (see ``_base.pxd``)."""

import numpy as np

from sqnopt.checkpoint import state_value

from libc.string cimport memcpy

from sqnopt.objectives._base cimport ObjectiveKernel


cdef class CurvatureKernel:
    """Base class: identity direction, ignores pairs. Subclasses override the ``cy_*`` methods."""

    #: The kernel runs in the compiled driver (its ``cy_*`` methods, without the GIL): the
    #: solver reads this declaration (``compiled`` of the kernel protocols in
    #: ``sqnopt.interfaces``, False when absent). A Python subclass that overrides only the
    #: Python-level methods declares ``compiled = False`` to run in the Python loop.
    compiled = True

    def __init__(self, Py_ssize_t dim):
        if dim < 1:
            raise ValueError("dim must be >= 1")
        self.dim = dim
        self.needs_secant_pair = False
        self.needs_curvature_batch = False
        self.direction_is_gradient = False
        self.extra_samples = 0
        self.run_gtol = 0.0
        self.composite_step = False
        self.adagrad_accumulator = False

    cdef void cy_direction(self, const double* grad, double* out) noexcept nogil:
        memcpy(out, grad, self.dim * sizeof(double))

    cdef int cy_composite_step(self, const double* w, const double* grad, double eps,
                               double* w_next) noexcept nogil:
        return -1

    cdef double* cy_accumulator(self) noexcept nogil:
        return NULL

    cdef int cy_update_pair(self, const double* v, const double* r) noexcept nogil:
        return PAIR_SKIPPED

    cdef int cy_observe_batch(self, ObjectiveKernel objective, const double* w,
                              const Py_ssize_t* batch, Py_ssize_t size) noexcept nogil:
        return BATCH_OBSERVED

    def error_message(self) -> str:
        """Explanation of the last CURVATURE_ERROR (subclasses override)."""
        return "curvature model failed"

    # ---- Python-level API (the kernel protocol of sqnopt.protocols) -------------------------
    def direction(self, const double[::1] grad, double[::1] out) -> None:
        """``out = H grad``."""
        self._check(grad)
        self._check(out)
        self.cy_direction(&grad[0], &out[0])

    def composite_update(self, const double[::1] w, const double[::1] grad, double eps,
                         double[::1] w_next) -> int:
        """With ``composite_step``: ``w_next`` from ``w``, the minibatch gradient ``grad`` and
        the step ``eps`` (``cy_composite_step``); returns 0, or -1 when the step would not be
        finite (nothing changed). A kernel without ``composite_step`` raises ``TypeError``."""
        self._check(w)
        self._check(grad)
        self._check(w_next)
        if not self.composite_step:
            raise TypeError(f"{type(self).__name__} does not make composite steps")
        return self.cy_composite_step(&w[0], &grad[0], eps, &w_next[0])

    def update_pair(self, const double[::1] v, const double[::1] r) -> int:
        """Offer the secant pair ``(v, r)``; returns 1 accepted, 0 skipped, 2 reset, -1 error."""
        self._check(v)
        self._check(r)
        return self.cy_update_pair(&v[0], &r[0])

    def observe_batch(self, ObjectiveKernel objective, const double[::1] w,
                      const Py_ssize_t[::1] batch) -> int:
        """Build curvature from the sample indices ``batch`` at ``w`` (SQB-type models)."""
        self._check(w)
        if batch.shape[0] < 1:
            raise ValueError("batch must contain at least one index")
        return self.cy_observe_batch(objective, &w[0], &batch[0], batch.shape[0])

    def matvec(self, g):
        """``H g`` for a 1-D array (allocates; for tests and diagnostics)."""
        gg = np.ascontiguousarray(g, dtype=np.float64)
        out = np.empty_like(gg)
        self.direction(gg, out)
        return out

    def to_dense(self):
        """The dense ``dim x dim`` matrix ``H`` with ``d = H g`` (for tests; O(dim^2) memory)."""
        eye = np.eye(self.dim)
        return np.column_stack([self.matvec(eye[:, j]) for j in range(self.dim)])

    cdef int _check(self, const double[::1] x) except -1:
        if x.shape[0] != self.dim:
            raise ValueError(f"vector of length {x.shape[0]} does not match dim={self.dim}")
        return 0

    # ---- checkpoints (the kernel state contract of sqnopt.interfaces) ----------------------
    def get_state(self) -> dict:
        """What the kernel carries from one iteration to the next, as copies (arrays and Python
        scalars). Subclasses that keep state extend the parent's dict; scratch buffers that are
        always written before they are read are not part of it."""
        return {"extra_samples": int(self.extra_samples)}

    def set_state(self, state) -> None:
        """Restore what :meth:`get_state` returned, on a kernel built by the same component for
        the same problem (a :class:`~sqnopt.checkpoint.CheckpointError` names the field that
        does not fit)."""
        self.extra_samples = state_value(state, "extra_samples", int, self, lo=0)
