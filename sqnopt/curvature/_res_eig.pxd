# cython: language_level=3
from sqnopt.curvature._secant cimport SecantKernel


cdef class RESEigKernel(SecantKernel):
    cdef readonly double delta          # RES regularisation: B_{t+1} >= delta I
    cdef readonly double Gamma          # RES direction (B^{-1} + Gamma I) g
    cdef readonly double init_scale     # B_0 = init_scale I
    cdef readonly bint auto_scale       # B_0 = (r'r / v'r) I from the first accepted pair
    cdef bint _scale_pending
    cdef readonly Py_ssize_t refresh_every   # pairs kept beside the eigendecomposition (k)
    cdef readonly Py_ssize_t n_refreshes     # eigendecompositions since construction
    cdef readonly Py_ssize_t n_residual_refreshes   # ... of them forced by the residual check
    cdef readonly double residual_tol   # refresh when |B^ x^ - g^| > residual_tol |g^|
    cdef readonly double last_residual  # relative residual of the last Woodbury solve
    cdef readonly double shift          # delta times the pairs since the last refresh
    cdef Py_ssize_t _p                  # pairs since the last refresh (columns of WA, WC)
    # B = Q (diag(lam + shift) + WA' WA - WC' WC) Q', everything after Q in Q-coordinates.
    # Row j of E is the eigenvector Q[:, j] (E is Q in Fortran order).
    cdef double[:, ::1] E
    cdef double[::1] lam
    cdef double[:, ::1] WA              # rows: r~ / sqrt(v'r~) in Q-coordinates (+ terms)
    cdef double[:, ::1] WC              # rows: B v / sqrt(v'Bv) in Q-coordinates (- terms)
    cdef double anorm2                  # sum of |WA rows|^2: |B^| <= max(D) + anorm2
    cdef double[:, ::1] Y               # rows: D^{-1/2} [WA; WC] (the Woodbury factor)
    cdef double[::1] rs                 # D^{-1/2}, D = lam + shift
    cdef double[:, ::1] G               # capacitance S + Y Y', factored by dsytrf
    cdef int[::1] ipiv
    cdef double[::1] sywork
    cdef bint _gram_ok                  # G holds the factor for the current pairs and shift
    cdef double[:, ::1] X2              # scratch: v, r~ (and their Q-coordinates in H2)
    cdef double[:, ::1] H2
    cdef double[::1] gh                 # Q' g
    cdef double[::1] xh                 # B^{-1} g in Q-coordinates
    cdef double[::1] u                  # B^ v^
    cdef double[::1] t1                 # scratch (n)
    cdef double[::1] z                  # scratch (2k)
    cdef double[::1] q                  # scratch (2k)
    # eigendecomposition scratch (allocated on first use)
    cdef double[:, ::1] T
    cdef double[::1] lam2
    cdef double[::1] evwork
    cdef int[::1] eviwork
    cdef bint _deferred_fail
    cdef bint _plain                    # Q = I (no eigendecomposition since the last reset)
    cdef void _set_scaled_identity(self, double b0) noexcept nogil
    cdef void _bhat(self, const double* x, double* out) noexcept nogil
    cdef int _factor_gram(self) noexcept nogil
    cdef int _solve(self) noexcept nogil
    cdef int _refresh(self) noexcept nogil
    cdef void _rotate(self, const double* x, double* out, bint to_q) noexcept nogil
