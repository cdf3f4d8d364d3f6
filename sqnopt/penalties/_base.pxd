# cython: language_level=3
"""Compiled penalty interface: the separable regulariser of a composite objective.

A penalty kernel holds ``P(w) = l1 ||w_reg||_1 + (l2 / 2) ||w_reg||^2`` on the regularised
coordinates (the first ``n_reg`` of every parameter block of length ``block``; intercepts are
never penalised). The composite solvers (``sqnopt.composite``) give the smooth ``l2`` part to
the objective kernel (its ``lam``) and treat the ``l1`` part through the methods below.
"""


cdef class PenaltyKernel:
    cdef readonly Py_ssize_t n_params
    cdef readonly Py_ssize_t block       # length of one parameter block (data.dim)
    cdef readonly Py_ssize_t n_reg       # leading coordinates of a block that are penalised
    cdef readonly double l1              # weight of ||w_reg||_1
    cdef readonly double l2              # weight of ||w_reg||^2 / 2

    # P(w), both parts
    cdef double cy_value(self, const double* w) noexcept nogil
    # l1 ||w_reg||_1 alone (the non-smooth part)
    cdef double cy_l1_value(self, const double* w) noexcept nogil
    # out = prox_{t P}(z) = argmin_u t P(u) + ||u - z||^2 / 2: per regularised coordinate
    # sign(z_j) max(|z_j| - t l1, 0) / (1 + t l2), exact zeros below the threshold; intercepts
    # copied. ``out`` may be ``z``.
    cdef void cy_prox(self, const double* z, double t, double* out) noexcept nogil
    # out = the minimum-norm subgradient of g'u + l1 ||u_reg||_1 at u = w, with ``g`` the
    # gradient of the smooth part (the l2 term included): Andrew & Gao's pseudo-gradient.
    # ``out`` may be ``g``.
    cdef void cy_pseudo_gradient(self, const double* w, const double* g, double* out) noexcept nogil
    cdef int _check(self, const double[::1] w, str name) except -1
