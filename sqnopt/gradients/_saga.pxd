# cython: language_level=3
from sqnopt.gradients._base cimport GradientKernel
from sqnopt.objectives._base cimport ObjectiveKernel


cdef class SAGAKernel(GradientKernel):
    cdef double[::1] table          # N x n_scores: each sample's score derivatives at its last visit
    cdef double[::1] avg            # (1/N) sum_i (the gradient map of) table_i: the data part
    cdef double[::1] coef           # scratch: the batch's new score derivatives
    cdef double[::1] diff           # scratch: new - table
    cdef Py_ssize_t[::1] order      # 0 .. N-1 (the table's fill)
    cdef readonly Py_ssize_t n_scores
    cdef readonly Py_ssize_t n_samples
    cdef readonly bint initialised

    cdef void _fill(self, ObjectiveKernel obj, const double* w) noexcept nogil
