# cython: language_level=3
from sqnopt.curvature._lbfgs cimport LBFGSKernel


cdef class HessianLBFGSKernel(LBFGSKernel):
    cdef readonly Py_ssize_t update_every   # L: iterations (curvature batches) per pair
    cdef readonly Py_ssize_t n_windows      # windows closed so far
    cdef readonly double max_scale          # gamma_t <= max_scale / L_S (0: no cap)
    cdef readonly Py_ssize_t n_capped       # pairs whose gamma_t the cap lowered
    cdef readonly double lmax               # the largest L_S of the windows so far (cap only)
    cdef double[::1] _sq                    # the sample's squared row norms (cap only)
    cdef double[::1] _ones                  # unit coefficients for rows_sqnorm
    cdef Py_ssize_t _calls                  # batches observed in the current window
    cdef double[::1] _wsum                  # sum of the window's iterates
    cdef double[::1] _wbar                  # the window's average
    cdef double[::1] _wprev                 # the previous window's average (w_0 at first)
    cdef bint _have_prev
    cdef double[::1] _pv                    # v = wbar_j - wbar_{j-1}
    cdef double[::1] _pr                    # r = Hessian_S(wbar_j) v
    cdef Py_ssize_t[::1] _idx               # the window's Hessian sample (its batches joined)
    cdef Py_ssize_t _nidx
    cdef double[::1] _D                     # the sample's score-Hessian factors at wbar_j
    cdef int _failed
