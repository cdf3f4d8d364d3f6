# cython: language_level=3
from sqnopt.curvature._base cimport CurvatureKernel


cdef class AdaGradKernel(CurvatureKernel):
    cdef double[::1] _accum          # G_j = G0 + sum_t g_{t,j}^2
    cdef readonly double delta
    # composite form: the objective's lam and the parameter layout (blocks of ``block``
    # coordinates, the last of each an unregularised intercept when ``intercept``)
    cdef readonly double lam
    # the weight of ||w_reg||_1 in the composite form (proximal AdaGrad: soft thresholding)
    cdef readonly double l1
    # FTRL-Proximal form (``ftrl_proximal``): the dual sums z (one per coordinate), the steps
    # summed into them and the step of the last one (the module docstring of _adagrad.pyx)
    cdef readonly bint ftrl_proximal
    cdef double[::1] _z
    cdef public double ftrl_t
    cdef public double ftrl_eta
    cdef int _ftrl_step(self, const double* w, const double* grad, double eps,
                        double* w_next) noexcept nogil
    cdef readonly Py_ssize_t block
    cdef readonly bint intercept


cdef inline double ftrl_value(double z, double s, double t, double l1, double l2,
                              double eta) noexcept nogil:
    """The FTRL-Proximal iterate of one coordinate from its dual sum ``z``, ``s = delta +
    sqrt(G)``, the ``t`` gradients summed and the step ``eta``: 0 where ``|z| <= t l1`` (an
    exact zero), else ``-(z - sign(z) t l1) / (s / eta + t l2)`` (0 where that denominator is
    0: no gradient yet and no L2 term)."""
    cdef double m = t * l1, num, den
    if z > m:
        num = z - m
    elif z < -m:
        num = z + m
    else:
        return 0.0
    den = s / eta + t * l2
    return -num / den if den > 0.0 else 0.0
