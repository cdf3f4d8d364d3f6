# cython: language_level=3
"""SARAH, the StochAstic Recursive grAdient algoritHm (Nguyen, Liu, Scheinberg & Takac,
ICML 2017, Algorithm 1), on minibatches:

    v_0 = grad F(w_0)                                      (a restart: one full pass)
    v_t = s(w_t, B_t) - s(w_{t-1}, B_t) + v_{t-1}          (t = 1, 2, ... until the next restart)

``s(w, B)`` the minibatch gradient (regulariser included) and ``w_{t-1}`` the point of the
previous estimate. Unlike SVRG's ``s(w, B) - s(w~, B) + grad F(w~)`` the correction is
recursive: it compares consecutive iterates, which stay close, so the estimate's error shrinks
with the steps without a fixed snapshot -- but it is biased (``E[v_t] != grad F(w_t)``), and
so it is restarted from a full gradient every ``period`` batch samples (``period = 0``: one pass
over the data, the inner-loop length ``m`` of the paper measured in samples). Cost per estimate:
two minibatch gradients (the second counted in ``extra``), plus ``N`` samples per restart.

At a restart point the estimate is the full gradient; an estimate at the same point as the
previous one is the previous estimate (the two minibatch terms cancel exactly), so the variance
vanishes where the iterates stop moving (``vanishing_variance``).
"""

from libc.string cimport memcpy

import numpy as np

from sqnopt.checkpoint import restore_array, state_value

from sqnopt.gradients._base cimport GradientKernel
from sqnopt.objectives._base cimport ObjectiveKernel


cdef class SARAHKernel(GradientKernel):
    cdef double[::1] v_prev         # v_{t-1}
    cdef double[::1] w_prev         # w_{t-1}
    cdef double[::1] tmp            # s(w_{t-1}, B_t), or s(w_0, B_0) at a restart
    cdef readonly Py_ssize_t period          # batch samples between restarts (0: one pass)
    cdef readonly Py_ssize_t since           # batch samples estimated since the last restart
    cdef readonly Py_ssize_t n_restarts
    cdef readonly bint started               # False: the next estimate restarts

    def __init__(self, Py_ssize_t dim, Py_ssize_t period):
        GradientKernel.__init__(self, dim)
        if period < 0:
            raise ValueError("period must be >= 0 (0: one pass over the data)")
        self.v_prev = np.zeros(dim)
        self.w_prev = np.zeros(dim)
        self.tmp = np.zeros(dim)
        self.period = period
        self.since = 0
        self.n_restarts = 0
        self.started = False

    cdef double cy_estimate(self, ObjectiveKernel obj, const double* w, const Py_ssize_t* batch,
                            Py_ssize_t size, double* out, double* plain,
                            Py_ssize_t* extra) noexcept nogil:
        cdef Py_ssize_t j, n = self.dim
        cdef Py_ssize_t period = self.period if self.period > 0 else obj.data.n_samples
        cdef double f
        cdef double* tmp = &self.tmp[0]
        cdef double* vp = &self.v_prev[0]
        if not self.started or self.since >= period:
            # restart: v = grad F(w); the batch gradient only for f_B(w) and the plain one
            f = obj.cy_gradient(w, batch, size, plain if plain != NULL and plain != out else tmp)
            obj.cy_full_gradient(w, out)
            extra[0] += obj.data.n_samples
            self.since = 0
            self.n_restarts += 1
            self.started = True
        else:
            f = obj.cy_gradient(w, batch, size, out)
            if plain != NULL and plain != out:
                memcpy(plain, out, n * sizeof(double))
            obj.cy_gradient(&self.w_prev[0], batch, size, tmp)
            extra[0] += size
            for j in range(n):
                out[j] = (out[j] - tmp[j]) + vp[j]
        memcpy(vp, out, n * sizeof(double))
        memcpy(&self.w_prev[0], w, n * sizeof(double))
        self.since += size
        return f

    def bind(self, ObjectiveKernel objective):
        """New data (a solve starts, or ``Solver.rebind``): the next estimate restarts."""
        GradientKernel.bind(self, objective)
        self.started = False
        self.since = 0

    def get_state(self) -> dict:
        """``v_{t-1}``, ``w_{t-1}`` and the position in the restart period: all an estimate
        reads besides its inputs."""
        state = GradientKernel.get_state(self)
        state.update(v_prev=np.array(self.v_prev), w_prev=np.array(self.w_prev),
                     since=int(self.since), n_restarts=int(self.n_restarts),
                     started=bool(self.started))
        return state

    def set_state(self, state) -> None:
        GradientKernel.set_state(self, state)
        since = state_value(state, "since", int, self, lo=0)
        n_restarts = state_value(state, "n_restarts", int, self, lo=0)
        started = state_value(state, "started", bool, self)
        restore_array(self.v_prev, state, "v_prev", self)
        restore_array(self.w_prev, state, "w_prev", self, iterate=True)
        self.since = since
        self.n_restarts = n_restarts
        self.started = started
