# cython: language_level=3
"""Compiled projection interface: ``w <- argmin_{u in C} ||u - w||`` in place.

Projections act on the regularised coordinates only (never on intercepts).
"""


cdef class ProjectionKernel:
    cdef readonly Py_ssize_t n_params
    cdef readonly Py_ssize_t block       # length of one parameter block (data.dim)
    cdef readonly Py_ssize_t n_reg       # leading coordinates of a block that are constrained
    # > 0 when the projection is onto the Euclidean ball {||w_reg|| <= ball_radius}: loops that
    # keep w in scaled form apply it as a rescaling (a capability, whatever the kernel's class)
    cdef readonly double ball_radius
    cdef void cy_project(self, double* w) noexcept nogil


cdef class L2BallKernel(ProjectionKernel):
    cdef readonly double radius
