# cython: language_level=3
from sqnopt.projections._base cimport ProjectionKernel


cdef class L1BallKernel(ProjectionKernel):
    cdef readonly double radius
    cdef double[::1] _work            # |w_j| of the nonzero constrained coordinates
    cdef unsigned long long _rng      # xorshift64 state for the pivots (fixed seed)
    cdef double cy_threshold(self, double* work, Py_ssize_t m) noexcept nogil
