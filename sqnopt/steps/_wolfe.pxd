# cython: language_level=3
from sqnopt.steps._base cimport StepKernel


# State of one strong-Wolfe search (see _wolfe.pyx): phi(a) = f_B(w - a d).
cdef struct WolfeSearch:
    double phi0, dphi0                  # phi(0), phi'(0) < 0
    double c1, c2, expand
    Py_ssize_t max_evals
    Py_ssize_t n                        # trials digested
    bint zoom                           # the bracket [a_lo, a_hi] is known
    bint final                          # the last trial is the fallback's re-evaluation
    double a_prev, f_prev, d_prev       # the previous trial of the bracketing phase
    double a_lo, f_lo, d_lo             # bracket end with the lowest phi meeting the decrease
    double a_hi, f_hi, d_hi
    double a_best, f_best               # lowest phi meeting the sufficient decrease


cdef void wolfe_init(WolfeSearch* s, double phi0, double dphi0, double c1, double c2,
                     double expand, Py_ssize_t max_evals) noexcept nogil
cdef double wolfe_next(WolfeSearch* s, double a, double f, double dphi) noexcept nogil


cdef class WolfeKernel(StepKernel):
    cdef readonly double eps0
    cdef readonly double c1
    cdef readonly double c2
    cdef readonly double expand
    cdef readonly Py_ssize_t max_evals
