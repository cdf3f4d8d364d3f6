# cython: language_level=3
from sqnopt.curvature._secant cimport SecantKernel


cdef class LBFGSKernel(SecantKernel):
    cdef readonly Py_ssize_t memory     # tau
    cdef readonly Py_ssize_t count      # pairs stored (<= tau)
    cdef readonly double gamma          # gamma_t of H_{t,0} = gamma_t I
    cdef readonly double gamma0
    cdef Py_ssize_t head                # slot of the newest pair
    cdef double[:, ::1] V               # v_u, ring buffer (memory x dim)
    cdef double[:, ::1] R               # r_u
    cdef double[::1] rho                # 1 / (v_u' r_u)
    cdef double[::1] alpha              # scratch of the two-loop recursion
    cdef double[:, ::1] A               # scratch of B v (damping only)
    cdef double[::1] bv                 # scratch of B v (damping only)
