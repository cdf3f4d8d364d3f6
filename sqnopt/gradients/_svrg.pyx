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

For a margin objective the kernel declares ``score_table`` with ``table_frozen``: with
``tau_i = c_i(w~)`` (the score derivatives at the snapshot) and ``a = (1/N) sum_i tau_i x_i``
(the data part of ``mu``) the estimate is ``a + (1/|B|) sum_{i in B} (c_i(w) - tau_i) x_i +
lam w_reg``, the form the lazy sparse iterate (:mod:`sqnopt.solver._lazy_loop`) runs in
O(nnz of the batch) per step, both fixed between snapshots. That path takes the snapshot
through ``cy_table_fill`` (the table and ``a`` in one pass, ``mu = a + lam w~_reg``) and reads
``c_i(w~)`` from the table instead of a second minibatch gradient, so it touches no samples
beyond the batch between snapshots. With importance sampling the minibatch weights are not the
objective's, so ``a`` is then taken from the full gradient (a second pass per snapshot).
"""

from libc.string cimport memcpy, memset

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

    def bind(self, ObjectiveKernel objective):
        GradientKernel.bind(self, objective)
        self.have_snapshot = False          # new data: a new full gradient
        self.since = 0
        N = objective.data.n_samples
        self.score_table = objective.n_scores == 1
        self.table_frozen = True
        if self.score_table:
            self.table = np.zeros(N)
            self.adata = np.zeros(self.dim)
            self.order = np.arange(N, dtype=np.intp)
            self.table_averages = _same_weights(objective)
        else:
            self.table = self.adata = None
            self.order = None

    cdef bint cy_table_due(self) noexcept nogil:
        if not self.score_table:
            return True
        return not self.have_snapshot or self.since >= (
            self.period if self.period > 0 else self.table.shape[0])

    cdef double* cy_table(self) noexcept nogil:
        return &self.table[0] if self.score_table else NULL

    cdef double* cy_table_average(self) noexcept nogil:
        return &self.adata[0] if self.score_table else NULL

    cdef Py_ssize_t cy_table_fill(self, ObjectiveKernel obj, const double* w) noexcept nogil:
        """The snapshot at ``w``: ``tau_i = c_i(w)`` for every sample, ``a`` its average and
        ``mu = a + lam w_reg`` (one pass)."""
        cdef Py_ssize_t N = self.table.shape[0]
        if not self.score_table:
            return 0
        cdef Py_ssize_t j
        memcpy(&self.snapshot[0], w, self.dim * sizeof(double))
        obj.cy_score_derivatives(w, &self.order[0], N, &self.table[0])
        if self.table_averages:
            memset(&self.adata[0], 0, self.dim * sizeof(double))
            obj.cy_rows_axpy(&self.order[0], N, &self.table[0], 1.0 / N, &self.adata[0])
            memcpy(&self.mu[0], &self.adata[0], self.dim * sizeof(double))
            obj.cy_reg_gradient_value(w, &self.mu[0])
        else:       # the full gradient's data part: mu - lam w_reg
            obj.cy_full_gradient(w, &self.mu[0])
            memset(&self.tmp[0], 0, self.dim * sizeof(double))
            obj.cy_reg_gradient_value(w, &self.tmp[0])
            for j in range(self.dim):
                self.adata[j] = self.mu[j] - self.tmp[j]
        self.since = 0
        self.n_snapshots += 1
        self.have_snapshot = True
        return N if self.table_averages else 2 * N

    cdef void cy_table_visited(self, Py_ssize_t size) noexcept nogil:
        self.since += size

    def get_state(self) -> dict:
        """The snapshot ``w~``, its full gradient ``mu`` and the position in the period."""
        state = GradientKernel.get_state(self)
        state.update(snapshot=np.array(self.snapshot), mu=np.array(self.mu),
                     since=int(self.since), n_snapshots=int(self.n_snapshots),
                     have_snapshot=bool(self.have_snapshot))
        if self.score_table:
            state.update(table=np.array(self.table), adata=np.array(self.adata))
        return state

    def set_state(self, state) -> None:
        GradientKernel.set_state(self, state)
        since = state_value(state, "since", int, self, lo=0)
        n_snapshots = state_value(state, "n_snapshots", int, self, lo=0)
        have_snapshot = state_value(state, "have_snapshot", bool, self)
        restore_array(self.snapshot, state, "snapshot", self, iterate=True)
        restore_array(self.mu, state, "mu", self)
        self.since = since
        self.n_snapshots = n_snapshots
        self.have_snapshot = have_snapshot
        if self.score_table:
            restore_array(self.table, state, "table", self)
            restore_array(self.adata, state, "adata", self)

    @property
    def snapshot_point(self):
        """The current snapshot ``w~`` (a copy)."""
        return np.array(self.snapshot)

    @property
    def snapshot_gradient(self):
        """``grad F(w~)`` at the current snapshot (a copy)."""
        return np.array(self.mu)


def _same_weights(ObjectiveKernel objective):
    """Whether the data's minibatch gradient weights are its sample weights (no importance
    sampling), so that the average of the grad-weighted score derivatives is the full
    gradient's data part."""
    cdef Py_ssize_t i
    cdef const double* gw = objective.data.grad_weight
    cdef const double* sw = objective.data.sample_weight
    for i in range(objective.data.n_samples):
        if gw[i] != sw[i]:
            return False
    return True

