# cython: language_level=3
from sqnopt.projections._base cimport ProjectionKernel


cdef class MirrorMapKernel(ProjectionKernel):
    # Dual state theta and the previous output w_t (the driver hands cy_project
    # w_t - eps_t d_t, so theta <- theta + (input - last) is the dual step theta - eps_t d_t).
    cdef double[::1] _theta
    cdef double[::1] _last


cdef class LazyProjectionKernel(MirrorMapKernel):
    cdef readonly ProjectionKernel inner


cdef class ExpGradPMKernel(MirrorMapKernel):
    cdef readonly double radius
