# cython: language_level=3
from sqnopt.curvature._base cimport CurvatureKernel
from sqnopt.objectives._base cimport ObjectiveKernel


cdef class NewtonKernel(CurvatureKernel):
    cdef double[:, ::1] H               # the Hessian on the last batch, then its Cholesky factor
    cdef double[::1] D                  # the batch's score-Hessian factors at w
    cdef double[::1] reg                # the regulariser's Hessian diagonal (lam or 0)
    cdef double[::1] ones
    cdef double[::1] S                  # one sample's K x K score Hessian
    cdef Py_ssize_t[::1] idx            # one row's entries (with the intercept's)
    cdef double[::1] val
    cdef readonly bint have_factor
    cdef readonly Py_ssize_t n_factorizations
    cdef int _failed
    cdef int _info
    cdef double _batch_curvature        # the batch's mean score-Hessian factor (last _form)
    cdef double _fail_reg               # the regulariser at the pivot that failed
    cdef bint _fail_intercept           # that pivot is an intercept
    cdef int _form(self, ObjectiveKernel objective, const Py_ssize_t* batch,
                   Py_ssize_t size, const double* w, double below=*) noexcept nogil
