# cython: language_level=3
"""Regression losses ``l(s, y)`` of the linear score ``s = w . x + b`` against a real target.

* squared error ``l = (s - y)^2 / 2`` (ridge regression with the L2 term);
* Huber's loss (Huber, *Robust Estimation of a Location Parameter*, Ann. Math. Stat. 1964)
  with threshold ``epsilon`` on the residual ``r = s - y`` and a fixed scale of 1:
  ``r^2 / 2`` for ``|r| <= epsilon``, ``epsilon |r| - epsilon^2 / 2`` beyond -- half of
  scikit-learn's ``HuberRegressor`` loss ``H_epsilon`` at scale ``sigma = 1`` (that estimator
  also fits ``sigma``; see ``docs/regression.md`` for the correspondence);
* Poisson regression with the log link (a generalised linear model, McCullagh & Nelder,
  *Generalized Linear Models*, 1989, ch. 6): the negative log-likelihood of ``y ~ Poisson(
  exp(s))`` without its constant ``log y!``, ``l = exp(s) - y s`` (``y >= 0``). ``exp(s)``
  overflows for ``s > log(DBL_MAX) ~ 709.78``: there the loss and its derivatives are
  ``+inf`` on purpose, without evaluating ``exp`` (no floating-point overflow), which the
  solver's divergence monitor and line searches treat as a rejected step / a diverged run.

The kernels are margin-base kernels that declare ``real_targets``: the passes of
``MarginObjectiveKernel`` (``_base.pyx``) read each row's loss through the score hooks
``score_loss_and_dloss(s, y)`` and ``score_d2loss(s, y)``, which each loss here implements;
the score Hessian factor of sample ``i`` is ``g_i l''(s_i, y_i)``.
"""

import numpy as np

from libc.math cimport INFINITY, exp, fabs, isfinite

from sqnopt.data._rows cimport RowData
from sqnopt.objectives._base cimport MarginObjectiveKernel

#: the largest score whose exp is finite in double precision (log(DBL_MAX))
cdef double LOG_MAX = 709.782712893384


cdef class ScoreObjectiveKernel(MarginObjectiveKernel):
    """Loss of the score ``s = x . w + b`` against a real target ``y`` (see ``.pxd``): the
    margin base's passes through its score hooks."""

    def __init__(self, RowData data, double lam):
        MarginObjectiveKernel.__init__(self, data, lam)
        self.real_targets = True
        self.hess_size = 1
        self.score_hessian_factor = True

    def py_loss_and_dloss(self, scores, targets):
        """``(loss(s, y), d loss / d s)`` elementwise over arrays of scores and targets."""
        s = np.ascontiguousarray(scores, dtype=np.float64).reshape(-1)
        t = np.ascontiguousarray(targets, dtype=np.float64).reshape(-1)
        if s.shape[0] != t.shape[0]:
            raise ValueError("scores and targets must have the same length")
        out = np.empty(s.shape[0])
        dout = np.empty(s.shape[0])
        cdef const double[::1] sv = s
        cdef const double[::1] tv = t
        cdef double[::1] o = out
        cdef double[::1] d = dout
        cdef Py_ssize_t j
        for j in range(sv.shape[0]):
            o[j] = self.score_loss_and_dloss(sv[j], tv[j], &d[j])
        return out, dout

    def py_d2loss(self, scores, targets):
        """``d^2 loss / d s^2`` elementwise over arrays of scores and targets."""
        s = np.ascontiguousarray(scores, dtype=np.float64).reshape(-1)
        t = np.ascontiguousarray(targets, dtype=np.float64).reshape(-1)
        if s.shape[0] != t.shape[0]:
            raise ValueError("scores and targets must have the same length")
        out = np.empty(s.shape[0])
        cdef const double[::1] sv = s
        cdef const double[::1] tv = t
        cdef double[::1] o = out
        cdef Py_ssize_t j
        for j in range(sv.shape[0]):
            o[j] = self.score_d2loss(sv[j], tv[j])
        return out


cdef class SquaredErrorKernel(ScoreObjectiveKernel):
    """``l(s, y) = (s - y)^2 / 2``; ``dl/ds = s - y``; ``d2l/ds2 = 1``."""

    cdef double score_loss_and_dloss(self, double score, double y, double* dloss) noexcept nogil:
        cdef double r = score - y
        dloss[0] = r
        return 0.5 * r * r

    cdef double score_d2loss(self, double score, double y) noexcept nogil:
        return 1.0

    cdef int cy_hessian_factors(self, const double* w, const Py_ssize_t* batch, Py_ssize_t size,
                                double* D) noexcept nogil:
        # g_i l''(s_i) = g_i: the objective is quadratic, its Hessian the same at every w, so
        # the factors need no scores (the margin base would compute them in a pass over the rows)
        cdef Py_ssize_t t
        for t in range(size):
            D[t] = self.data.grad_weight[batch[t]]
        return 0


cdef class HuberKernel(ScoreObjectiveKernel):
    """Huber's loss of ``r = s - y``: ``r^2 / 2`` for ``|r| <= epsilon``, else
    ``epsilon |r| - epsilon^2 / 2``; ``dl/ds = clip(r, -epsilon, epsilon)``; the generalised
    second derivative is 1 inside the threshold, 0 beyond."""

    def __init__(self, RowData data, double lam, double epsilon):
        if not (isfinite(epsilon) and epsilon > 0.0):
            raise ValueError(f"epsilon must be a finite number > 0, got {epsilon!r}")
        ScoreObjectiveKernel.__init__(self, data, lam)
        self.epsilon = epsilon

    cdef double score_loss_and_dloss(self, double score, double y, double* dloss) noexcept nogil:
        cdef double r = score - y
        cdef double ar = fabs(r)
        if ar <= self.epsilon:
            dloss[0] = r
            return 0.5 * r * r
        dloss[0] = self.epsilon if r > 0.0 else -self.epsilon
        return self.epsilon * (ar - 0.5 * self.epsilon)

    cdef double score_d2loss(self, double score, double y) noexcept nogil:
        return 1.0 if fabs(score - y) <= self.epsilon else 0.0


cdef class PoissonKernel(ScoreObjectiveKernel):
    """``l(s, y) = exp(s) - y s`` (``y >= 0``); ``dl/ds = exp(s) - y``; ``d2l/ds2 = exp(s)``.
    Beyond ``s = log(DBL_MAX)`` all three are ``+inf`` (``exp`` not evaluated)."""

    cdef double score_loss_and_dloss(self, double score, double y, double* dloss) noexcept nogil:
        cdef double e
        if score > LOG_MAX:
            dloss[0] = INFINITY
            return INFINITY
        e = exp(score)
        dloss[0] = e - y
        return e - y * score

    cdef double score_d2loss(self, double score, double y) noexcept nogil:
        if score > LOG_MAX:
            return INFINITY
        return exp(score)

    cdef double score_dloss_and_d2loss(self, double score, double y, double* d2) noexcept nogil:
        # one exp for both (the exact line search's inner iteration)
        cdef double e
        if score > LOG_MAX:
            d2[0] = INFINITY
            return INFINITY
        e = exp(score)
        d2[0] = e
        return e - y
