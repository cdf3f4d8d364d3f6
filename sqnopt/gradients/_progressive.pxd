# cython: language_level=3
from sqnopt.gradients._base cimport GradientKernel


cdef class ProgressiveBatchKernel(GradientKernel):
    cdef readonly double theta
    cdef readonly double nu                 # orthogonality test's nu (0: not applied)
    cdef readonly Py_ssize_t n_samples
    cdef readonly Py_ssize_t n_scores
    cdef readonly Py_ssize_t size           # the size the last failed test asked for (0: none)
    cdef readonly Py_ssize_t n_tests
    cdef readonly Py_ssize_t n_increases
    cdef readonly double last_ratio         # Var / (|B| theta^2 ||g||^4) of the last test
    cdef readonly double last_ortho_ratio   # Var_perp / (|B| nu^2 ||g||^2) of the last test
    cdef double[::1] coef                   # score derivatives of the batch
    cdef double[::1] dots                   # scores of g on the batch
    cdef double[::1] sqn                    # ||grad F_i - lam w_reg||^2 on the batch
