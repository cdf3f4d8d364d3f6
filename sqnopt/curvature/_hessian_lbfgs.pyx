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

A cap on the initial scaling (``max_scale > 0``): ``gamma_t = min(v'r / r'r, max_scale / L_S)``
with ``L_S`` the largest per-sample curvature ``D_i ||x_i||^2 + lam`` of the Hessian samples so
far, each at its window's ``wbar_j`` (``D_i`` the sample's score-Hessian factor, computed for the
pair anyway; the squared row norms cost one more read of the sample's rows). ``H_{t,0} = gamma_t I``
is the matrix every direction no stored pair spans is scaled by, so with a constant step
``eta`` the method takes plain steps of ``eta gamma_t`` there; ``v'r / r'r`` is the inverse
curvature along the newest pair, which on ill-conditioned problems is the flattest direction
the iterates move in (``1 / lam`` at worst), and the minibatch gradient's noise along the
stiff directions then overshoots. The cap keeps ``eta gamma_t`` within a multiple of
``1 / L_max``, SVRG's own step bound (Johnson & Zhang 2013), while the pairs keep their
Newton-scaled steps along the flat directions they measured. Margin objectives only (one
score per sample, one Hessian factor); for others the cap is not applied.
"""

from libc.string cimport memcpy

import numpy as np

from sqnopt.checkpoint import CheckpointError, restore_array, state_array, state_value
from sqnopt.curvature._base cimport BATCH_OBSERVED, CURVATURE_ERROR
from sqnopt.curvature._lbfgs cimport LBFGSKernel
from sqnopt.objectives._base cimport ObjectiveKernel


cdef class HessianLBFGSKernel(LBFGSKernel):
    """L-BFGS whose pairs are Hessian-vector products at window averages (SQN)."""

    def __init__(self, Py_ssize_t dim, Py_ssize_t n_samples, Py_ssize_t hess_size,
                 Py_ssize_t memory=10, Py_ssize_t update_every=10, double gamma0=1.0,
                 double min_curvature=0.0, bint reset_on_nonfinite=True,
                 double max_scale=0.0):
        LBFGSKernel.__init__(self, dim, memory, gamma0, min_curvature, False, 0.2,
                             reset_on_nonfinite)
        if update_every < 1:
            raise ValueError(f"update_every must be >= 1, got {update_every}")
        if not (max_scale >= 0.0 and max_scale < float("inf")):
            raise ValueError(f"max_scale must be a finite number >= 0 (0: no cap), got {max_scale}")
        self.needs_secant_pair = False
        self.needs_curvature_batch = True
        self.update_every = update_every
        self.max_scale = max_scale
        self.n_capped = 0
        self.lmax = 0.0
        self._wsum = np.zeros(dim)
        self._wbar = np.zeros(dim)
        self._wprev = np.zeros(dim)
        self._pv = np.zeros(dim)
        self._pr = np.zeros(dim)
        cap = max(n_samples, 1)
        self._idx = np.zeros(cap, dtype=np.intp)
        self._D = np.zeros(cap * max(hess_size, 1))
        self._sq = np.zeros(cap)
        self._ones = np.ones(cap)
        self._nidx = 0
        self._calls = 0
        self._have_prev = False
        self.n_windows = 0
        self._failed = 0

    cdef int cy_observe_batch(self, ObjectiveKernel objective, const double* w,
                              const Py_ssize_t* batch, Py_ssize_t size) noexcept nogil:
        cdef Py_ssize_t n = self.dim, j, m = self._nidx + size
        cdef double inv, lmax, cap
        cdef int code
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
        code = self.cy_update_pair(pv, &self._pr[0])
        if self.max_scale > 0.0 and objective.hess_size == 1 and objective.n_scores == 1:
            # L_S = max_i D_i ||x_i||^2 + lam over the window's sample (rows_sqnorm with unit
            # coefficients gives ||d score / d w||^2 = ||x_i||^2, with the intercept's 1)
            objective.cy_rows_sqnorm(&self._idx[0], m, &self._ones[0], &self._sq[0])
            lmax = 0.0
            for j in range(m):
                if self._D[j] * self._sq[j] > lmax:
                    lmax = self._D[j] * self._sq[j]
            lmax += objective.lam
            if lmax > self.lmax:
                self.lmax = lmax
            if self.lmax > 0.0:
                cap = self.max_scale / self.lmax
                if self.gamma > cap:
                    self.gamma = cap
                    self.n_capped += 1
        return code

    def _grow(self, Py_ssize_t cap, Py_ssize_t hess_size):
        idx = np.zeros(cap, dtype=np.intp)
        idx[:self._nidx] = np.asarray(self._idx)[:self._nidx]
        self._idx = idx
        self._D = np.zeros(cap * max(hess_size, 1))
        self._sq = np.zeros(cap)
        self._ones = np.ones(cap)

    def forget_samples(self) -> None:
        """Drop the open window (its iterates and the indices of its curvature samples) when
        the solve moves to new data (``Solver.rebind``); the pair memory and the previous
        window's average stay, so the next pair spans the move."""
        self._nidx = 0
        self._calls = 0
        np.asarray(self._wsum)[:] = 0.0

    def get_state(self) -> dict:
        """The L-BFGS memory with the open window: the sum of its iterates, the previous
        window's average, the curvature samples joined so far; the factors are scratch."""
        state = LBFGSKernel.get_state(self)
        state.update(calls=int(self._calls), have_prev=bool(self._have_prev),
                     n_windows=int(self.n_windows), failed=int(self._failed),
                     n_capped=int(self.n_capped),
                     wsum=np.array(self._wsum), wprev=np.array(self._wprev),
                     window_sample=np.array(self._idx[:self._nidx]))
        return state

    def set_state(self, state) -> None:
        LBFGSKernel.set_state(self, state)
        calls = state_value(state, "calls", int, self)
        if not 0 <= calls < self.update_every:
            raise CheckpointError(f"HessianLBFGSKernel: checkpoint field calls={calls} does not "
                                  f"fit update_every={self.update_every}: the checkpoint is of "
                                  "another component")
        sample = state_array(state, "window_sample", self, np.intp, rows=True)
        have_prev = state_value(state, "have_prev", bool, self)
        n_windows = state_value(state, "n_windows", int, self, lo=0)
        n_capped = state_value(state, "n_capped", int, self, lo=0) if "n_capped" in state else 0
        failed = state_value(state, "failed", int, self, lo=0, hi=2)
        # the window's sum of iterates: calls x the iterate's scale
        restore_array(self._wsum, state, "wsum", self, iterate=True)
        restore_array(self._wprev, state, "wprev", self, iterate=True)
        if sample.shape[0] > self._idx.shape[0]:
            self._grow(sample.shape[0], max(self._D.shape[0] // max(self._idx.shape[0], 1), 1))
        np.asarray(self._idx)[:sample.shape[0]] = sample
        self._nidx = sample.shape[0]
        self._calls = calls
        self._have_prev = have_prev
        self.n_windows = n_windows
        self.n_capped = n_capped
        self._failed = failed

    def error_message(self):
        if self._failed == 1:
            return ("HessianLBFGS needs Hessian-vector products: the objective does not provide "
                    "them (capability 'hessian_vector')")
        if self._failed == 2:
            return ("a score is not finite at the window's average iterate, so its Hessian is "
                    "undefined; reduce the step size")
        return LBFGSKernel.error_message(self)
