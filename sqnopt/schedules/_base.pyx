# cython: language_level=3
"""Compiled batch schedules.

``Fixed``:  ``b_k = L``.
``Linear``: ``b_k = min(cap, b1 + round((k - 1) * gamma))`` (growing batches of the
semistochastic quadratic-bound method, Aravkin et al. 2012, Sec. 4).
``Geometric``: ``b_k = min(cap, round(b1 * rate^(k-1)))`` (Friedlander & Schmidt 2012).
Every size is clipped to ``[1, n_samples]``.
"""

from libc.math cimport pow, floor, fabs


cdef inline Py_ssize_t _round_half_even(double x) noexcept nogil:
    """Round to nearest, ties to even (as Python's ``round``), for x >= 0."""
    cdef double f = floor(x)
    cdef double diff = x - f
    if diff > 0.5:
        return <Py_ssize_t> f + 1
    if diff < 0.5:
        return <Py_ssize_t> f
    if (<Py_ssize_t> f) % 2 == 0:
        return <Py_ssize_t> f
    return <Py_ssize_t> f + 1


cdef class ScheduleKernel:
    """Base class; returns the whole data set (full batch)."""

    #: The kernel runs in the compiled driver (its ``cy_*`` methods, without the GIL): the
    #: solver reads this declaration (``compiled`` of the kernel protocols in
    #: ``sqnopt.interfaces``, False when absent). A Python subclass that overrides only the
    #: Python-level methods declares ``compiled = False`` to run in the Python loop.
    compiled = True

    def __init__(self, Py_ssize_t n_samples):
        if n_samples < 1:
            raise ValueError("n_samples must be >= 1")
        self.n_samples = n_samples

    cdef Py_ssize_t cy_batch_size(self, Py_ssize_t k) noexcept nogil:
        return self.n_samples

    def get_state(self) -> dict:
        """What the schedule carries from one iteration to the next (copies); the built-in
        schedules are functions of ``k`` and carry nothing."""
        return {}

    def set_state(self, state) -> None:
        """Restore what :meth:`get_state` returned."""
        if not isinstance(state, dict):
            raise TypeError(f"set_state expects a dict, got {type(state).__name__}")

    def batch_size(self, Py_ssize_t k) -> int:
        """Batch size at iteration ``k >= 1``."""
        if k < 1:
            raise ValueError("iterations are numbered from k = 1")
        return self.cy_batch_size(k)


cdef inline Py_ssize_t _clip(Py_ssize_t b, Py_ssize_t n) noexcept nogil:
    if b < 1:
        return 1
    if b > n:
        return n
    return b


cdef class FixedKernel(ScheduleKernel):
    def __init__(self, Py_ssize_t n_samples, Py_ssize_t size):
        ScheduleKernel.__init__(self, n_samples)
        self.size = _clip(size, n_samples)

    cdef Py_ssize_t cy_batch_size(self, Py_ssize_t k) noexcept nogil:
        return self.size


cdef class LinearKernel(ScheduleKernel):
    def __init__(self, Py_ssize_t n_samples, Py_ssize_t b1, double gamma, Py_ssize_t cap):
        ScheduleKernel.__init__(self, n_samples)
        self.b1 = b1
        self.gamma = gamma
        self.cap = _clip(cap, n_samples)

    cdef Py_ssize_t cy_batch_size(self, Py_ssize_t k) noexcept nogil:
        cdef double grow = (k - 1) * self.gamma
        cdef Py_ssize_t b
        if self.b1 + grow >= self.cap:
            return self.cap
        b = self.b1 + _round_half_even(grow)
        return _clip(b if b < self.cap else self.cap, self.n_samples)


cdef class GeometricKernel(ScheduleKernel):
    def __init__(self, Py_ssize_t n_samples, double b1, double rate, Py_ssize_t cap):
        ScheduleKernel.__init__(self, n_samples)
        self.b1 = b1
        self.rate = rate
        self.cap = _clip(cap, n_samples)

    cdef Py_ssize_t cy_batch_size(self, Py_ssize_t k) noexcept nogil:
        cdef double b = self.b1 * pow(self.rate, <double> (k - 1))
        if b >= self.cap:
            return self.cap
        return _clip(_round_half_even(b), self.cap)
