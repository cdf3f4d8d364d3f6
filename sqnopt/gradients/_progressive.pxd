# cython: language_level=3
from sqnopt.gradients._base cimport GradientKernel


cdef class ProgressiveBatchKernel(GradientKernel):
    cdef readonly double theta
    cdef readonly Py_ssize_t n_samples
    cdef readonly Py_ssize_t n_scores
    cdef readonly Py_ssize_t size           # the size the last failed test asked for (0: none)
    cdef readonly Py_ssize_t n_tests
    cdef readonly Py_ssize_t n_increases
    cdef readonly double last_ratio         # Var / (|B| theta^2 ||g||^4) of the last test
    cdef double[::1] coef                   # score derivatives of the batch
    cdef double[::1] dots                   # scores of g on the batch
