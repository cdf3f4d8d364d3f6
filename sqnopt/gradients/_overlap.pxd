# cython: language_level=3
from sqnopt.gradients._base cimport GradientKernel


cdef class OverlapBatchKernel(GradientKernel):
    cdef readonly double overlap            # share of a batch kept for the next one
    cdef readonly Py_ssize_t n_samples
    cdef readonly Py_ssize_t n_scores
    cdef readonly Py_ssize_t n_overlap      # samples kept for the next batch (ov[:n_overlap])
    cdef readonly Py_ssize_t n_pairs        # pairs formed
    cdef bint have_prev                     # an estimate was made (w_prev, g_out hold it)
    cdef bint prev_whole                    # ... on the whole data set
    cdef bint have_pair                     # pv, pr hold the pair of the last estimate
    cdef Py_ssize_t arranged_size           # size of the batch cy_arrange last rewrote
    cdef Py_ssize_t m_in                    # its leading samples shared with the previous batch
    cdef Py_ssize_t[::1] ov                 # the samples kept for the next batch
    cdef double[::1] coef                   # score derivatives of the batch
    cdef double[::1] a                      # sums over the shared leading samples / grad F_O(w)
    cdef double[::1] b                      # sums over the samples kept for the next batch
    cdef double[::1] g_out                  # grad F_O(w_prev) on the samples kept at w_prev
    cdef double[::1] w_prev
    cdef double[::1] pv
    cdef double[::1] pr
    cdef void _reset(self)
