# cython: language_level=3
"""Compiled step rules.

``Constant``: ``eps_t = eps``.
``Decaying``: ``eps_t = eps0 * T0 / (T0 + t)`` (Mokhtari & Ribeiro 2014, 2015; Bottou 2010).
``InverseSqrt``: ``eps_t = eps0 / sqrt(t + 1)``.
``PegasosStep``: ``eps_t = 1 / (lam * (t + 1))`` (Shalev-Shwartz et al. 2007; their t starts at 1).
"""

from libc.math cimport sqrt, NAN


cdef class StepKernel:
    """Base class; subclasses override ``cy_step_size``."""

    cdef double cy_step_size(self, Py_ssize_t t) noexcept nogil:
        return NAN

    def step_size(self, Py_ssize_t t) -> float:
        """Step at iteration ``t >= 0``."""
        if t < 0:
            raise ValueError("iterations are numbered from t = 0")
        return self.cy_step_size(t)


cdef class ConstantKernel(StepKernel):
    def __init__(self, double eps):
        self.eps = eps

    cdef double cy_step_size(self, Py_ssize_t t) noexcept nogil:
        return self.eps


cdef class DecayingKernel(StepKernel):
    def __init__(self, double eps0, double T0):
        self.eps0 = eps0
        self.T0 = T0

    cdef double cy_step_size(self, Py_ssize_t t) noexcept nogil:
        return self.eps0 * self.T0 / (self.T0 + t)


cdef class InverseSqrtKernel(StepKernel):
    def __init__(self, double eps0):
        self.eps0 = eps0

    cdef double cy_step_size(self, Py_ssize_t t) noexcept nogil:
        return self.eps0 / sqrt(<double> (t + 1))


cdef class PegasosStepKernel(StepKernel):
    def __init__(self, double lam):
        self.lam = lam

    cdef double cy_step_size(self, Py_ssize_t t) noexcept nogil:
        return 1.0 / (self.lam * (t + 1))
