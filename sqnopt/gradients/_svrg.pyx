# cython: language_level=3
"""SVRG, the stochastic variance-reduced gradient (Johnson & Zhang, NIPS 2013).

At a snapshot ``w~`` (taken every ``period`` batch samples; the first at the first estimate)
the full gradient ``mu = grad F(w~)`` is computed once; between snapshots

    g = s(w, B) - s(w~, B) + mu,

an unbiased estimate of ``grad F(w)`` whose variance vanishes as ``w`` and ``w~`` approach the
optimum, so constant steps converge linearly on strongly convex problems. Cost: two minibatch
gradients per estimate plus one full pass per snapshot (counted in ``extra``). Works with any
objective. Secant pairs taken from it equal the plain minibatch differences: ``-s(w~, B) + mu``
cancels.
"""

from libc.string cimport memcpy

import numpy as np

from sqnopt.checkpoint import restore_array, state_value

from sqnopt.gradients._base cimport GradientKernel
from sqnopt.objectives._base cimport ObjectiveKernel


cdef class SVRGKernel(GradientKernel):
    def __init__(self, Py_ssize_t dim, Py_ssize_t period):
        GradientKernel.__init__(self, dim)
        if period < 0:
            raise ValueError("period must be >= 0 (0: one pass over the data)")
        self.snapshot = np.zeros(dim)
        self.mu = np.zeros(dim)
        self.tmp = np.zeros(dim)
        self.period = period
        self.since = 0
        self.n_snapshots = 0
        self.have_snapshot = False

    cdef double cy_estimate(self, ObjectiveKernel obj, const double* w, const Py_ssize_t* batch,
                            Py_ssize_t size, double* out, double* plain,
                            Py_ssize_t* extra) noexcept nogil:
        cdef Py_ssize_t j, n = self.dim
        cdef Py_ssize_t period = self.period if self.period > 0 else obj.data.n_samples
        cdef double f
        cdef double* mu = &self.mu[0]
        cdef double* tmp = &self.tmp[0]
        if not self.have_snapshot or self.since >= period:
            memcpy(&self.snapshot[0], w, n * sizeof(double))
            obj.cy_full_gradient(w, mu)
            extra[0] += obj.data.n_samples
            self.since = 0
            self.n_snapshots += 1
            self.have_snapshot = True
        f = obj.cy_gradient(w, batch, size, out)
        if plain != NULL and plain != out:
            memcpy(plain, out, n * sizeof(double))
        obj.cy_gradient(&self.snapshot[0], batch, size, tmp)
        extra[0] += size
        for j in range(n):
            out[j] += mu[j] - tmp[j]
        self.since += size
        return f

    def bind(self, objective):
        GradientKernel.bind(self, objective)
        self.have_snapshot = False          # new data: a new full gradient
        self.since = 0

    def get_state(self) -> dict:
        """The snapshot ``w~``, its full gradient ``mu`` and the position in the period."""
        state = GradientKernel.get_state(self)
        state.update(snapshot=np.array(self.snapshot), mu=np.array(self.mu),
                     since=int(self.since), n_snapshots=int(self.n_snapshots),
                     have_snapshot=bool(self.have_snapshot))
        return state

    def set_state(self, state) -> None:
        GradientKernel.set_state(self, state)
        restore_array(self.snapshot, state, "snapshot", self)
        restore_array(self.mu, state, "mu", self)
        self.since = state_value(state, "since", int, self)
        self.n_snapshots = state_value(state, "n_snapshots", int, self)
        self.have_snapshot = state_value(state, "have_snapshot", bool, self)

    @property
    def snapshot_point(self):
        """The current snapshot ``w~`` (a copy)."""
        return np.array(self.snapshot)

    @property
    def snapshot_gradient(self):
        """``grad F(w~)`` at the current snapshot (a copy)."""
        return np.array(self.mu)
