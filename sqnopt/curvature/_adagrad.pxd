# cython: language_level=3
from sqnopt.curvature._base cimport CurvatureKernel


cdef class AdaGradKernel(CurvatureKernel):
    cdef double[::1] _accum          # G_j = G0 + sum_t g_{t,j}^2
    cdef readonly double delta
    # composite form: the objective's lam and the parameter layout (blocks of ``block``
    # coordinates, the last of each an unregularised intercept when ``intercept``)
    cdef readonly double lam
    cdef readonly Py_ssize_t block
    cdef readonly bint intercept
