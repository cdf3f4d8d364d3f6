# cython: language_level=3
"""The modified-Huber margin loss (Zhang 2004, "Solving large scale linear prediction problems
using stochastic gradient descent algorithms", ICML; the ``modified_huber`` loss of
scikit-learn's ``SGDClassifier``), of the margin ``z = y (x . w + b)``:

    loss(z) = max(0, 1 - z)^2   for z >= -1,
    loss(z) = -4 z              for z < -1,

the squared hinge near the margin and linear (slope 4) far on the wrong side, so one badly
misclassified sample pulls with a bounded force. It is continuously differentiable: at
``z = -1`` both pieces are 4 with slope -4. ``dloss/dz = -2 max(0, 1 - z)`` for ``z >= -1``,
``-4`` below; the generalised second derivative (Mangasarian 2002) is 2 on ``[-1, 1)`` and 0
elsewhere, so ``curvature_bound = 2``. Every branch is a polynomial of degree <= 2 in ``z``:
finite for every finite margin.
"""

from sqnopt.objectives._base cimport MarginObjectiveKernel


cdef class ModifiedHuberKernel(MarginObjectiveKernel):
    """The compiled kernel: only the four margin functions; the passes, the Hessian-vector
    products and the score derivatives are the base class's."""

    cdef double loss(self, double margin) noexcept nogil:
        cdef double z
        if margin < -1.0:
            return -4.0 * margin
        z = 1.0 - margin
        return z * z if z > 0.0 else 0.0

    cdef double dloss_dmargin(self, double margin) noexcept nogil:
        cdef double z
        if margin < -1.0:
            return -4.0
        z = 1.0 - margin
        return -2.0 * z if z > 0.0 else 0.0

    cdef double loss_and_dloss_dmargin(self, double margin, double* dloss_dmargin) noexcept nogil:
        cdef double z
        if margin < -1.0:
            dloss_dmargin[0] = -4.0
            return -4.0 * margin
        z = 1.0 - margin
        if z > 0.0:
            dloss_dmargin[0] = -2.0 * z
            return z * z
        dloss_dmargin[0] = 0.0
        return 0.0

    cdef double d2loss_dmargin2(self, double margin) noexcept nogil:
        return 2.0 if -1.0 <= margin < 1.0 else 0.0
