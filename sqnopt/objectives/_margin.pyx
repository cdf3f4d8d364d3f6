# cython: language_level=3
"""Margin losses ``l(m)`` of binary classification, ``m = y (w . x + b)``.

References: squared hinge and logistic as used in Mokhtari & Ribeiro (RES, 2014; oLBFGS, 2015);
hinge as in Shalev-Shwartz et al., Pegasos (2007).
"""

from libc.math cimport exp, log1p, fabs

from sqnopt.objectives._base cimport MarginObjectiveKernel


cdef class SquaredHingeKernel(MarginObjectiveKernel):
    """``l(m) = max(0, 1 - m)^2``;  ``dl/dm = -2 max(0, 1 - m)``."""

    cdef double loss(self, double margin) noexcept nogil:
        cdef double z = 1.0 - margin
        return z * z if z > 0.0 else 0.0

    cdef double dloss_dmargin(self, double margin) noexcept nogil:
        cdef double z = 1.0 - margin
        return -2.0 * z if z > 0.0 else 0.0

    cdef double loss_and_dloss_dmargin(self, double margin, double* dloss_dmargin) noexcept nogil:
        cdef double z = 1.0 - margin
        if z > 0.0:
            dloss_dmargin[0] = -2.0 * z
            return z * z
        dloss_dmargin[0] = 0.0
        return 0.0

    cdef double d2loss_dmargin2(self, double margin) noexcept nogil:
        # the generalised second derivative (Mangasarian 2002): 2 below the margin, 0 above
        return 2.0 if margin < 1.0 else 0.0


cdef class LogisticKernel(MarginObjectiveKernel):
    """``l(m) = log(1 + exp(-m))`` evaluated as ``log1p(exp(-|m|)) + max(0, -m)``;
    ``dl/dm = -1 / (1 + exp(m))`` evaluated without overflow for any finite ``m``."""

    cdef double loss(self, double margin) noexcept nogil:
        if margin >= 0.0:
            return log1p(exp(-margin))
        return log1p(exp(margin)) - margin

    cdef double dloss_dmargin(self, double margin) noexcept nogil:
        cdef double e
        if margin >= 0.0:
            e = exp(-margin)
            return -e / (1.0 + e)
        return -1.0 / (1.0 + exp(margin))

    cdef double loss_and_dloss_dmargin(self, double margin, double* dloss_dmargin) noexcept nogil:
        # one exp for both (the two methods above compute the same one)
        cdef double e
        if margin >= 0.0:
            e = exp(-margin)
            dloss_dmargin[0] = -e / (1.0 + e)
            return log1p(e)
        e = exp(margin)
        dloss_dmargin[0] = -1.0 / (1.0 + e)
        return log1p(e) - margin

    cdef double d2loss_dmargin2(self, double margin) noexcept nogil:
        # sigma(m) sigma(-m) = e / (1 + e)^2 with e = exp(-|m|): no overflow
        cdef double e = exp(-fabs(margin))
        return e / ((1.0 + e) * (1.0 + e))

    cdef double dloss_and_d2loss(self, double margin, double* d2loss) noexcept nogil:
        # one exp for both: with e = exp(-|m|) and s = 1 / (1 + e), l' = -e s (m >= 0) or -s,
        # l'' = e s^2
        cdef double e = exp(-fabs(margin))
        cdef double s = 1.0 / (1.0 + e)
        d2loss[0] = e * s * s
        return -e * s if margin >= 0.0 else -s


cdef class HingeKernel(MarginObjectiveKernel):
    """``l(m) = max(0, 1 - m)``; subgradient ``dl/dm = -1`` if ``m < 1`` else ``0``."""

    cdef double loss(self, double margin) noexcept nogil:
        cdef double z = 1.0 - margin
        return z if z > 0.0 else 0.0

    cdef double dloss_dmargin(self, double margin) noexcept nogil:
        return -1.0 if margin < 1.0 else 0.0

    cdef double loss_and_dloss_dmargin(self, double margin, double* dloss_dmargin) noexcept nogil:
        cdef double z = 1.0 - margin
        dloss_dmargin[0] = -1.0 if margin < 1.0 else 0.0
        return z if z > 0.0 else 0.0
