# cython: language_level=3
"""SAGA (Defazio, Bach & Lacoste-Julien, NIPS 2014) for linear-score objectives.

For a loss that depends on ``w`` only through linear scores (margin losses: one per sample;
softmax: one per class) the gradient of sample ``i`` is fixed by its score derivatives
``c_i``, so the table of past gradients is a table of ``c_i`` -- ``N x n_scores`` numbers, not
``N x n_params``. With ``a = (1/N) sum_i grad_i(table_i)`` (kept up to date) the estimate on a
batch ``B`` is

    g = (1/|B|) sum_{i in B} grad_i(c_i(w) - table_i) + a + lam w_reg,

unbiased, with variance vanishing at the optimum (linear convergence with constant steps).
The table is filled by one full pass at the first estimate (counted in ``extra``) -- SAGA with
the table at ``w_0`` rather than zeros. Each sample's entry is updated as it is visited, in
batch order, so a sample drawn twice in one batch contributes its difference once and ``a``
always averages the table.

The kernel declares ``score_table`` for margin objectives (one score per sample) and exposes the
table and ``a``: with the identity direction the step ``w <- (1 - eps lam) w - eps g`` changes a
coordinate outside the batch rows only through the shrink and the constant ``a_j``, so an
iterate representation can run the estimate in lazy sparse form on these buffers
(:mod:`sqnopt.solver._lazy_loop`), at a cost per iteration of the batch rows' entries.
"""

from libc.math cimport NAN
from libc.string cimport memcpy, memset

import numpy as np

from sqnopt.checkpoint import CheckpointError, restore_array, state_value

from sqnopt.gradients._base cimport GradientKernel
from sqnopt.objectives._base cimport ObjectiveKernel


cdef class SAGAKernel(GradientKernel):
    def __init__(self, Py_ssize_t dim):
        GradientKernel.__init__(self, dim)
        self.n_scores = 0
        self.n_samples = 0
        self.initialised = False

    def bind(self, ObjectiveKernel objective):
        """Size the table for the objective's data (N x n_scores); it is filled at the next
        estimate."""
        GradientKernel.bind(self, objective)
        K = objective.n_scores
        N = objective.data.n_samples
        if K < 1:
            raise TypeError(f"SAGA needs an objective kernel with per-sample score derivatives "
                            f"(n_scores > 0); {type(objective).__name__} has none")
        self.n_scores = K
        self.n_samples = N
        self.table = np.zeros(N * K)
        self.avg = np.zeros(self.dim)
        self.coef = np.zeros(N * K)             # a batch holds at most N samples
        self.diff = np.zeros(K)
        self.order = np.arange(N, dtype=np.intp)
        self.initialised = False
        self.score_table = K == 1

    cdef double* cy_table(self) noexcept nogil:
        return &self.table[0] if self.n_scores > 0 else NULL

    cdef bint cy_table_due(self) noexcept nogil:
        return not self.initialised

    cdef double* cy_table_average(self) noexcept nogil:
        return &self.avg[0] if self.n_scores > 0 else NULL

    cdef Py_ssize_t cy_table_fill(self, ObjectiveKernel obj, const double* w) noexcept nogil:
        if self.n_scores == 0 or self.initialised:
            return 0
        self._fill(obj, w)
        return self.n_samples

    cdef double cy_estimate(self, ObjectiveKernel obj, const double* w, const Py_ssize_t* batch,
                            Py_ssize_t size, double* out, double* plain,
                            Py_ssize_t* extra) noexcept nogil:
        cdef Py_ssize_t t, k, i, K = self.n_scores, N = self.n_samples
        cdef double* table
        cdef double* avg
        cdef double* coef
        cdef double* diff
        cdef double inv = 1.0 / size, total, reg
        cdef bint changed
        if K == 0 or N != obj.data.n_samples or K != obj.n_scores:
            return NAN                  # not bound to this objective (the driver binds it)
        table = &self.table[0]
        avg = &self.avg[0]
        coef = &self.coef[0]
        diff = &self.diff[0]
        if not self.initialised:
            self._fill(obj, w)
            extra[0] += N
        total = obj.cy_score_derivatives(w, batch, size, coef)
        memcpy(out, avg, self.dim * sizeof(double))
        if plain != NULL:
            memset(plain, 0, self.dim * sizeof(double))
            obj.cy_rows_axpy(batch, size, coef, inv, plain)
        for t in range(size):
            i = batch[t]
            changed = False
            for k in range(K):
                diff[k] = coef[t * K + k] - table[i * K + k]
                changed = changed or diff[k] != 0.0
                table[i * K + k] = coef[t * K + k]
            if changed:
                obj.cy_rows_axpy(&batch[t], 1, diff, inv, out)
                obj.cy_rows_axpy(&batch[t], 1, diff, 1.0 / N, avg)
        reg = obj.cy_reg_gradient_value(w, out)
        if plain != NULL:
            obj.cy_reg_gradient_value(w, plain)
        return total * inv + reg

    cdef void _fill(self, ObjectiveKernel obj, const double* w) noexcept nogil:
        """The table at ``w``: every sample's score derivatives, in one pass."""
        cdef Py_ssize_t N = self.n_samples
        obj.cy_score_derivatives(w, &self.order[0], N, &self.table[0])
        memset(&self.avg[0], 0, self.dim * sizeof(double))
        obj.cy_rows_axpy(&self.order[0], N, &self.table[0], 1.0 / N, &self.avg[0])
        self.initialised = True

    def get_state(self) -> dict:
        """The table of score derivatives and its average (once filled)."""
        state = GradientKernel.get_state(self)
        state.update(n_samples=int(self.n_samples), n_scores=int(self.n_scores),
                     initialised=bool(self.initialised))
        if self.initialised:
            state.update(table=np.array(self.table), avg=np.array(self.avg))
        return state

    def set_state(self, state) -> None:
        GradientKernel.set_state(self, state)
        n = state_value(state, "n_samples", int, self)
        k = state_value(state, "n_scores", int, self)
        if (n, k) != (self.n_samples, self.n_scores):
            raise CheckpointError("SAGAKernel: the checkpointed table (fields 'n_samples', "
                                  f"'n_scores') is for {n} samples x {k} scores, this kernel is "
                                  f"bound to {self.n_samples} x {self.n_scores}: the checkpoint is"
                                  " of other data")
        initialised = state_value(state, "initialised", bool, self)
        if initialised:
            restore_array(self.table, state, "table", self)
            restore_array(self.avg, state, "avg", self)
        self.initialised = initialised

    @property
    def table_values(self):
        """The table of score derivatives, shape ``(N, n_scores)`` (a copy)."""
        return np.array(self.table).reshape(self.n_samples, self.n_scores)

    @property
    def average(self):
        """``(1/N) sum_i grad_i(table_i)`` (a copy)."""
        return np.array(self.avg)
