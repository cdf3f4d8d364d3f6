# cython: language_level=3
"""Identity curvature: ``d = g`` (plain stochastic gradient descent)."""

from sqnopt.curvature._base cimport CurvatureKernel


cdef class IdentityKernel(CurvatureKernel):
    """``H = I``; the base-class behaviour, named for the registry."""

    def __init__(self, Py_ssize_t dim):
        CurvatureKernel.__init__(self, dim)
        self.direction_is_gradient = True
