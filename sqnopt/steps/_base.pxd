# cython: language_level=3
"""Compiled step-rule interface: the scalar step ``eps_t`` at iteration ``t = 0, 1, ...``."""


cdef class StepKernel:
    cdef double cy_step_size(self, Py_ssize_t t) noexcept nogil


cdef class ConstantKernel(StepKernel):
    cdef readonly double eps


cdef class DecayingKernel(StepKernel):
    cdef readonly double eps0
    cdef readonly double T0


cdef class InverseSqrtKernel(StepKernel):
    cdef readonly double eps0


cdef class PegasosStepKernel(StepKernel):
    cdef readonly double lam
