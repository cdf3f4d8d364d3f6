# cython: language_level=3
from sqnopt.gradients._base cimport GradientKernel


cdef class SVRGKernel(GradientKernel):
    cdef double[::1] snapshot       # w~
    cdef double[::1] mu             # grad F(w~)
    cdef double[::1] tmp            # s(w~, B)
    cdef readonly Py_ssize_t period         # samples between snapshots (0: one pass)
    cdef readonly Py_ssize_t since          # batch samples estimated since the last snapshot
    cdef readonly Py_ssize_t n_snapshots
    cdef readonly bint have_snapshot
