# cython: language_level=3
"""Compiled gradient estimators' base class and the plain minibatch gradient."""

from libc.math cimport NAN
from libc.string cimport memcpy

import numpy as np

from sqnopt.objectives._base cimport ObjectiveKernel


cdef class GradientKernel:
    """Base of compiled gradient-estimator kernels (see ``_base.pxd``)."""

    #: The kernel runs in the compiled driver (its ``cy_*`` methods, without the GIL): the
    #: solver reads this declaration (``compiled`` of the kernel protocols in
    #: ``sqnopt.interfaces``, False when absent). A Python subclass that overrides only the
    #: Python-level methods declares ``compiled = False`` to run in the Python loop.
    compiled = True

    def __init__(self, Py_ssize_t dim):
        if dim < 1:
            raise ValueError("dim must be >= 1")
        self.dim = dim
        self.plain = False
        self.batch_gradient = False
        self.sizes_batches = False
        self.overlap_pairs = False
        self.score_table = False
        self.table_frozen = False

    cdef double cy_estimate(self, ObjectiveKernel obj, const double* w, const Py_ssize_t* batch,
                            Py_ssize_t size, double* out, double* plain,
                            Py_ssize_t* extra) noexcept nogil:
        return NAN

    cdef Py_ssize_t cy_batch_size(self, Py_ssize_t scheduled) noexcept nogil:
        return scheduled

    cdef double* cy_table(self) noexcept nogil:
        return NULL

    cdef bint cy_table_due(self) noexcept nogil:
        return True

    cdef double* cy_table_average(self) noexcept nogil:
        return NULL

    cdef Py_ssize_t cy_table_fill(self, ObjectiveKernel obj, const double* w) noexcept nogil:
        return 0

    cdef void cy_table_visited(self, Py_ssize_t size) noexcept nogil:
        pass

    cdef void cy_arrange(self, Py_ssize_t* batch, Py_ssize_t size) noexcept nogil:
        pass

    cdef int cy_pair(self, const double* w, double* v, double* r) noexcept nogil:
        return 0

    cdef void cy_reused(self, const double* w, const double* g, Py_ssize_t size) noexcept nogil:
        pass

    def reused(self, const double[::1] w, const double[::1] g, Py_ssize_t size):
        """The Python path's entry of ``cy_reused``."""
        if w.shape[0] != self.dim or g.shape[0] != self.dim:
            raise ValueError(f"vectors must have length {self.dim}")
        self.cy_reused(&w[0], &g[0], size)

    def arrange(self, batch):
        """The Python path's entry of ``cy_arrange``: a copy of ``batch`` (int array) arranged
        to share samples with the previous batch (unchanged without ``overlap_pairs``)."""
        b = np.array(batch, dtype=np.intp)
        cdef Py_ssize_t[::1] bb = b
        if bb.shape[0] < 1:
            raise ValueError("the batch must hold at least one index")
        self.cy_arrange(&bb[0], bb.shape[0])
        return b

    def pair(self, const double[::1] w, double[::1] v, double[::1] r):
        """The Python path's entry of ``cy_pair``: True when ``(v, r)`` were written."""
        if w.shape[0] != self.dim or v.shape[0] != self.dim or r.shape[0] != self.dim:
            raise ValueError(f"vectors must have length {self.dim}")
        return bool(self.cy_pair(&w[0], &v[0], &r[0]))

    def batch_size(self, Py_ssize_t scheduled):
        """The size of the next batch, given the schedule's (the Python path's entry; an
        estimator without ``sizes_batches`` returns ``scheduled``)."""
        if scheduled < 1:
            raise ValueError("scheduled must be >= 1")
        return int(self.cy_batch_size(scheduled))

    def bind(self, objective):
        """Attach to the objective kernel of a solve (its data): called when a solve starts and
        when it moves to new data (``Solver.rebind``); estimators that keep per-sample state
        (SAGA's table) or data-dependent state (SVRG's snapshot) start afresh."""
        if objective.n_params != self.dim:
            raise ValueError(f"the objective has {objective.n_params} parameters, the gradient "
                             f"estimator {self.dim}")

    def get_state(self) -> dict:
        """What the estimator carries from one estimate to the next (copies: arrays and Python
        scalars); the base class and the minibatch gradient carry nothing."""
        return {}

    def set_state(self, state) -> None:
        """Restore what :meth:`get_state` returned, on a kernel of the same component bound
        (:meth:`bind`) to the same data."""
        if not isinstance(state, dict):
            raise TypeError(f"set_state expects a dict, got {type(state).__name__}")

    def estimate(self, ObjectiveKernel objective, const double[::1] w, batch,
                 double[::1] out, double[::1] plain=None):
        """The Python path's entry: ``(f_B(w), extra samples)``; ``out`` receives the estimate
        and ``plain`` (if given) the plain minibatch gradient."""
        b = np.ascontiguousarray(batch, dtype=np.intp)
        cdef const Py_ssize_t[::1] bb = b
        if w.shape[0] != self.dim or out.shape[0] != self.dim or (
                plain is not None and plain.shape[0] != self.dim):
            raise ValueError(f"vectors must have length {self.dim}")
        if bb.shape[0] < 1:
            raise ValueError("the batch must hold at least one index")
        cdef Py_ssize_t extra = 0
        cdef double f = self.cy_estimate(objective, &w[0], &bb[0], bb.shape[0], &out[0],
                                         NULL if plain is None else &plain[0], &extra)
        return f, int(extra)


cdef class MinibatchKernel(GradientKernel):
    """``g = s(w, B)``: the minibatch gradient itself (SGD's, the papers')."""

    def __init__(self, Py_ssize_t dim):
        GradientKernel.__init__(self, dim)
        self.plain = True
        self.batch_gradient = True

    cdef double cy_estimate(self, ObjectiveKernel obj, const double* w, const Py_ssize_t* batch,
                            Py_ssize_t size, double* out, double* plain,
                            Py_ssize_t* extra) noexcept nogil:
        cdef double f = obj.cy_gradient(w, batch, size, out)
        if plain != NULL and plain != out:
            memcpy(plain, out, self.dim * sizeof(double))
        return f
