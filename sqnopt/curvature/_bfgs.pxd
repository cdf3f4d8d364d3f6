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
    cdef int _factor(self) noexcept nogil
    cdef void _set_scaled_identity(self, double b0) noexcept nogil
