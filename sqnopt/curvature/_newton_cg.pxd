# cython: language_level=3
from sqnopt.curvature._base cimport CurvatureKernel
from sqnopt.objectives._base cimport ObjectiveKernel


cdef class NewtonCGKernel(CurvatureKernel):
    cdef ObjectiveKernel obj            # the objective whose Hessian the last batch sampled
    cdef Py_ssize_t[::1] batch          # that batch (a copy)
    cdef Py_ssize_t size
    cdef double[::1] D                  # its samples' score-Hessian factors at w
    cdef double[::1] r
    cdef double[::1] p
    cdef double[::1] q
    cdef readonly Py_ssize_t max_iter
    cdef readonly double forcing        # relative residual target; <= 0: min(0.5, sqrt(|g|))
    cdef readonly Py_ssize_t last_iterations
    cdef readonly Py_ssize_t total_iterations
    cdef readonly bint have_batch
    cdef int _failed
