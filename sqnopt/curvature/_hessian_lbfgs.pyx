# cython: language_level=3
r"""L-BFGS from Hessian-vector products on averaged iterates (the stochastic quasi-Newton method
"SQN" of Byrd, Hansen, Nocedal & Singer, *A stochastic quasi-Newton method for large-scale
optimization*, SIAM J. Optim. 26(2), 2016, Algorithm 1; with SVRG's gradient it is the
stochastic L-BFGS of Moritz, Nishihara & Jordan, *A linearly-convergent stochastic L-BFGS
algorithm*, AISTATS 2016, Algorithm 1).

Gradient differences on a small minibatch are dominated by noise; these pairs are not. Every
``L = update_every`` iterations (a *window* ``j``) the model forms

    v_j = wbar_j - wbar_{j-1},     r_j = Hess F_{S_j}(wbar_j) v_j

with ``wbar_j`` the average of the window's iterates (``wbar_{-1} = w_0``, the first iterate
observed) and ``S_j`` the Hessian sample, and stores the pair in the L-BFGS memory whose two-loop
recursion gives the direction (:class:`~sqnopt.curvature._lbfgs.LBFGSKernel`, with its
safeguards; ``gamma_t = v'r / r'r``). The sample ``S_j`` is the union of the curvature batches
the driver hands the model during the window (one per iteration, ``curvature_schedule(k)``
samples each), so every drawn sample is used once: the score-Hessian factors of ``S_j`` at
``wbar_j`` cost one pass over its rows (the drawn curvature samples), the product a second
(``extra_samples``). Requires the ``hessian_vector`` capability.
"""

from libc.string cimport memcpy

import numpy as np

from sqnopt.curvature._base cimport BATCH_OBSERVED, CURVATURE_ERROR
from sqnopt.curvature._lbfgs cimport LBFGSKernel
from sqnopt.objectives._base cimport ObjectiveKernel


cdef class HessianLBFGSKernel(LBFGSKernel):
    """L-BFGS whose pairs are Hessian-vector products at window averages (SQN)."""

    def __init__(self, Py_ssize_t dim, Py_ssize_t n_samples, Py_ssize_t hess_size,
                 Py_ssize_t memory=10, Py_ssize_t update_every=10, double gamma0=1.0,
                 double min_curvature=0.0, bint reset_on_nonfinite=True):
        LBFGSKernel.__init__(self, dim, memory, gamma0, min_curvature, False, 0.2,
                             reset_on_nonfinite)
        if update_every < 1:
            raise ValueError(f"update_every must be >= 1, got {update_every}")
        self.needs_secant_pair = False
        self.needs_curvature_batch = True
        self.update_every = update_every
        self._wsum = np.zeros(dim)
        self._wbar = np.zeros(dim)
        self._wprev = np.zeros(dim)
        self._pv = np.zeros(dim)
        self._pr = np.zeros(dim)
        cap = max(n_samples, 1)
        self._idx = np.zeros(cap, dtype=np.intp)
        self._D = np.zeros(cap * max(hess_size, 1))
        self._nidx = 0
        self._calls = 0
        self._have_prev = False
        self.n_windows = 0
        self._failed = 0

    cdef int cy_observe_batch(self, ObjectiveKernel objective, const double* w,
                              const Py_ssize_t* batch, Py_ssize_t size) noexcept nogil:
        cdef Py_ssize_t n = self.dim, j, m = self._nidx + size
        cdef double inv
        cdef double* wsum = &self._wsum[0]
        cdef double* wbar = &self._wbar[0]
        cdef double* wprev = &self._wprev[0]
        cdef double* pv = &self._pv[0]
        if objective.hess_size < 1:
            self._failed = 1
            return CURVATURE_ERROR
        if m > self._idx.shape[0] or m * objective.hess_size > self._D.shape[0]:
            with gil:                   # rare: windows joining more samples than N
                self._grow(max(m, 2 * self._idx.shape[0]), objective.hess_size)
        memcpy(&self._idx[self._nidx], batch, size * sizeof(Py_ssize_t))
        self._nidx = m
        if not self._have_prev:         # wbar_{-1} = w_0
            memcpy(wprev, w, n * sizeof(double))
            self._have_prev = True
        for j in range(n):
            wsum[j] += w[j]
        self._calls += 1
        if self._calls < self.update_every:
            return BATCH_OBSERVED
        inv = 1.0 / self._calls
        for j in range(n):
            wbar[j] = wsum[j] * inv
            wsum[j] = 0.0
            pv[j] = wbar[j] - wprev[j]
        memcpy(wprev, wbar, n * sizeof(double))
        self._calls = 0
        m = self._nidx
        self._nidx = 0
        self.n_windows += 1
        if objective.cy_hessian_factors(wbar, &self._idx[0], m, &self._D[0]) != 0:
            self._failed = 2
            return CURVATURE_ERROR
        objective.cy_hessian_product(&self._idx[0], m, &self._D[0], pv, &self._pr[0])
        self.extra_samples += m
        return self.cy_update_pair(pv, &self._pr[0])

    def _grow(self, Py_ssize_t cap, Py_ssize_t hess_size):
        idx = np.zeros(cap, dtype=np.intp)
        idx[:self._nidx] = np.asarray(self._idx)[:self._nidx]
        self._idx = idx
        self._D = np.zeros(cap * max(hess_size, 1))

    def error_message(self):
        if self._failed == 1:
            return ("HessianLBFGS needs Hessian-vector products: the objective does not provide "
                    "them (capability 'hessian_vector')")
        if self._failed == 2:
            return ("a score is not finite at the window's average iterate, so its Hessian is "
                    "undefined; reduce the step size")
        return LBFGSKernel.error_message(self)
