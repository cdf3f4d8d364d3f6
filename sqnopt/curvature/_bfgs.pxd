# cython: language_level=3
from sqnopt.curvature._secant cimport SecantKernel


cdef class BFGSKernel(SecantKernel):
    cdef readonly double delta          # RES regularisation: B_{t+1} >= delta I
    cdef readonly double Gamma          # RES direction (B^{-1} + Gamma I) g
    cdef readonly double init_scale     # B_0 = init_scale I
    cdef readonly bint cholesky         # store B and factor it every step (else store H = B^{-1})
    cdef readonly bint auto_scale       # B_0 = (r'r / v'r) I from the first accepted pair
    cdef bint _scale_pending            # auto_scale and no pair accepted since the last reset
    # H (inverse form) or B (Cholesky form), n x n; only the triangle j >= i (C order) is used,
    # which is BLAS/LAPACK's uplo='L' of the same memory read in Fortran order.
    cdef double[:, ::1] M
    # Cholesky factor of B (Cholesky form); in the inverse form, scratch for B v (damping).
    cdef double[:, ::1] F
    cdef bint has_F
    cdef double[::1] u                  # scratch: H r or B v
    cdef double[::1] rt                 # scratch: r~ = r - delta v (possibly damped)
    # Inverse form, deferred updates: H = M + sum_k (PA[k] PB[k]' + PB[k] PA[k]') over the
    # _npend pending terms, plus (if _unresolved) the accepted pair (pv, rt, _rho) whose term
    # is formed at the next direction (see the module docstring of _bfgs.pyx).
    cdef readonly Py_ssize_t merge_every
    cdef readonly bint fused            # one-pass SIMD kernel (else BLAS level 2)
    cdef double[:, ::1] PA
    cdef double[:, ::1] PB
    cdef Py_ssize_t _npend
    cdef bint _unresolved
    cdef bint _deferred_fail
    cdef double[::1] pv
    cdef double[::1] h2                 # scratch: a second product
    cdef double _rho
    cdef readonly double trace_H        # trace of H (inverse form), for the deferral bound
    cdef double _defer_limit
    cdef readonly bint own_cholesky     # Cholesky form: sq_potrf_upper (else LAPACK dpotrf)
    cdef int _factor(self) noexcept nogil
    cdef int _factor_F(self) noexcept nogil
    cdef void _solve_F(self, double* b) noexcept nogil
    cdef void _products(self, const double* x1, const double* x2, double* y1, double* y2,
                        bint two) noexcept nogil
    cdef int _add_term(self, const double* g, double* hg) noexcept nogil
    cdef int _resolve_now(self) noexcept nogil
    cdef int _materialize(self) noexcept nogil
    cdef void _set_scaled_identity(self, double b0) noexcept nogil
