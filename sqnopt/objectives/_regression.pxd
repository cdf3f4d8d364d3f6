# cython: language_level=3
from sqnopt.objectives._base cimport MarginObjectiveKernel


cdef class ScoreObjectiveKernel(MarginObjectiveKernel):
    """Loss of the linear score ``s_i = x_i . w + b`` against a real target ``y_i``:
    ``l_i(w) = loss(s_i, y_i)`` (regression), through the margin base's score hooks
    (``score_loss_and_dloss``, ``score_d2loss``); it declares ``real_targets``, and its
    objectives do not declare the capability "margin", so the margin fast loops never take it."""
    pass


cdef class SquaredErrorKernel(ScoreObjectiveKernel):
    # l'' = 1: the score Hessian factors are the gradient weights, whatever w (no pass)
    cdef int cy_hessian_factors(self, const double* w, const Py_ssize_t* batch, Py_ssize_t size,
                                double* D) noexcept nogil


cdef class HuberKernel(ScoreObjectiveKernel):
    cdef readonly double epsilon


cdef class PoissonKernel(ScoreObjectiveKernel):
    pass
