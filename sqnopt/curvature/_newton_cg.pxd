# cython: language_level=3
from sqnopt.curvature._base cimport CurvatureKernel
from sqnopt.objectives._base cimport ObjectiveKernel


cdef class NewtonCGKernel(CurvatureKernel):
    cdef ObjectiveKernel obj            # the objective whose Hessian the last batch sampled
    cdef Py_ssize_t[::1] batch          # that batch (a copy)
    cdef Py_ssize_t size
    cdef double[::1] D                  # its samples' score-Hessian factors at w
    cdef double[::1] r
    cdef double[::1] p
    cdef double[::1] q
    cdef double[::1] part               # CG's dots, one per chunk of the vectors
    cdef double[::1] z                  # the preconditioned residual M^-1 r
    cdef double[::1] M                  # the preconditioner's diagonal at the last batch
    cdef readonly double diagonal_weight  # a of M = a diag(H) + (1 - a) lam; < 0: no preconditioner
    cdef readonly bint preconditioned   # M holds the last batch's preconditioner
    cdef readonly Py_ssize_t max_iter
    cdef readonly double forcing        # relative residual target; 0: min(0.5, sqrt(|g|));
                                        # -1: min(0.5, sqrt(|g| / |g_0|)); -2: Eisenstat-Walker
    cdef readonly bint gtol_stop        # CG also stops once max_j |r_j| <= run_gtol / 2
    cdef double[::1] part_max           # max_j |r_j|, one per chunk of the vectors
    cdef double g0norm                  # |g| at the first direction (-1: none yet)
    cdef double gprev                   # |g| at the last direction
    cdef double eta_prev                # the forcing term used there
    cdef readonly Py_ssize_t last_iterations
    cdef readonly Py_ssize_t total_iterations
    cdef readonly bint have_batch
    cdef int _failed
    cdef void _precondition(self, bint count) noexcept nogil
    cdef double _forcing_term(self, double gnorm) noexcept nogil
