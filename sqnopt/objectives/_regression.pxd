# cython: language_level=3
from sqnopt.objectives._base cimport ObjectiveKernel


cdef class ScoreObjectiveKernel(ObjectiveKernel):
    """Loss of the linear score ``s_i = x_i . w + b`` against a real target ``y_i``:
    ``l_i(w) = loss(s_i, y_i)`` (regression). Not a margin loss: the compiled loops' margin
    fast paths (which read ``y_i s_i``) do not apply, the generic loop runs it."""
    # loss(s, y), with d loss / d s stored in dloss[0]
    cdef double loss_and_dloss(self, double score, double y, double* dloss) noexcept nogil
    cdef double loss(self, double score, double y) noexcept nogil
    # d^2 loss / d s^2 (a generalised one where the loss is once differentiable: Huber)
    cdef double d2loss(self, double score, double y) noexcept nogil
    # d loss / d s, with d^2 loss / d s^2 stored in d2[0]
    cdef double dloss_and_d2loss(self, double score, double y, double* d2) noexcept nogil


cdef class SquaredErrorKernel(ScoreObjectiveKernel):
    pass


cdef class HuberKernel(ScoreObjectiveKernel):
    cdef readonly double epsilon


cdef class PoissonKernel(ScoreObjectiveKernel):
    pass
