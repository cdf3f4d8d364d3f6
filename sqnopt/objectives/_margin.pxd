# cython: language_level=3
from sqnopt.objectives._base cimport MarginObjectiveKernel


cdef class SquaredHingeKernel(MarginObjectiveKernel):
    pass


cdef class LogisticKernel(MarginObjectiveKernel):
    pass


cdef class HingeKernel(MarginObjectiveKernel):
    pass
