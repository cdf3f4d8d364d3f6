# cython: language_level=3
"""Identity curvature: ``d = g`` (plain stochastic gradient descent)."""

from sqnopt.curvature._base cimport CurvatureKernel


cdef class IdentityKernel(CurvatureKernel):
    """``H = I``; the base-class behaviour, named for the registry."""
    pass
