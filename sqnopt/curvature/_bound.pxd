# cython: language_level=3
"""Quadratic-bound curvature (SQB, Aravkin, Choromanska, Jebara & Kanevsky 2014)."""

from sqnopt.curvature._base cimport CurvatureKernel
from sqnopt.objectives._partition_bound cimport BoundObjectiveKernel

cdef enum:
    SOLVE_CG = 0
    SOLVE_LSQR = 1
    SOLVE_EXACT = 2


cdef class QuadraticBoundKernel(CurvatureKernel):
    cdef readonly double eta                 # ridge of the system matrix Sigma_S + eta I
    cdef readonly Py_ssize_t inner_iter      # CG / LSQR iterations per direction
    cdef readonly double tol                 # relative residual for an early stop (0: never)
    cdef readonly int method                 # SOLVE_CG, SOLVE_LSQR or SOLVE_EXACT
    cdef readonly Py_ssize_t batch_size      # samples in the current bound
    cdef readonly Py_ssize_t n_observed      # batches observed
    cdef readonly Py_ssize_t last_inner_iterations
    cdef readonly Py_ssize_t n_inner_iterations
    cdef readonly Py_ssize_t n_matvecs       # products with Sigma_S + eta I
    cdef BoundObjectiveKernel _obj
    cdef void* _obj_id                       # identity of the verified objective
    cdef Py_ssize_t _fsize
    cdef double* _factor
    cdef Py_ssize_t* _batch
    cdef Py_ssize_t _cap
    cdef double[::1] _r
    cdef double[::1] _p
    cdef double[::1] _Ap
    cdef double[::1] _q
    cdef double[::1] _chol                   # dim x dim (exact mode only)
    cdef bint _factored                      # _chol holds a valid factorisation
    cdef object _error
    # Compact form of the current bound (objectives with ``support_map_size > 0``): the solve
    # runs on the ``_m`` coordinates where ``Sigma_S`` is not zero; on the rest every Krylov
    # vector is a multiple of the gradient, carried as one scalar.
    cdef Py_ssize_t* _map
    cdef Py_ssize_t _map_cap
    cdef Py_ssize_t _m
    cdef bint _compact
    cdef bint _compact_off                   # tests: always solve in all coordinates
    cdef double[::1] _gc                     # the gradient on the compact coordinates
    cdef double[::1] _dc                     # the direction on the compact coordinates

    cdef int _adopt(self, object objective) except -1
    cdef int _reserve(self, Py_ssize_t size) noexcept nogil
    cdef int _reserve_map(self, Py_ssize_t size) noexcept nogil
    cdef void _apply(self, const double* v, double* out, bint compact) noexcept nogil
    cdef int _factorize(self) noexcept nogil
    cdef double _cg(self, const double* grad, double* out, Py_ssize_t n,
                    double off2) noexcept nogil
    cdef double _lsqr(self, const double* grad, double* out, Py_ssize_t n,
                      double off2) noexcept nogil
