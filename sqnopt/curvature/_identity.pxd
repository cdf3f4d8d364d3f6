# cython: language_level=3
from sqnopt.curvature._base cimport CurvatureKernel


cdef class IdentityKernel(CurvatureKernel):
    pass
