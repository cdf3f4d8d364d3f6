# cython: language_level=3
from sqnopt.curvature._lbfgs cimport LBFGSKernel


cdef class BoundLBFGSKernel(LBFGSKernel):
    cdef readonly Py_ssize_t block      # length of one parameter block (features + intercept)
    cdef readonly Py_ssize_t n_blocks   # K
    cdef readonly double bound          # c, the loss's curvature bound (or at score 0)
    cdef readonly bint has_bound        # the factor of M is formed (the kernel is bound)
    cdef readonly Py_ssize_t n_rows     # rows of the data set the factor was formed from
    cdef readonly Py_ssize_t max_rows   # the sample's size (0: every row; see _sample_row)
    cdef readonly bint sparse_pairs     # M_1 was formed from the pairs of sparse rows' entries
    cdef double[:, ::1] L               # Cholesky factor of M_1 (LAPACK lower, column-major)
    cdef double[::1] mr                 # scratch: M^{-1} r of the newest pair
    cdef object _bound_to               # the objective kernel the factor belongs to
    cdef int _info                      # LAPACK dpotrf's info of the last factorisation
    cdef void _solve(self, double* x) noexcept nogil
