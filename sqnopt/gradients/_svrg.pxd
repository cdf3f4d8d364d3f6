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
    # margin objectives (score_table): c_i(w~) per sample and the data part of mu, which the
    # lazy sparse iterate reads (filled by cy_table_fill, not by cy_estimate)
    cdef double[::1] table
    cdef double[::1] adata
    cdef Py_ssize_t[::1] order
    # the minibatch weights are the objective's (no importance sampling): ``a`` is the table's
    # average, else the full gradient's data part (one more pass per snapshot)
    cdef bint table_averages
