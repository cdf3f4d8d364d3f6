# cython: language_level=3
"""Overlapping batches for multi-batch L-BFGS (Berahas, Nocedal & Takac, "A multi-batch L-BFGS
method for machine learning", NIPS 2016).

Consecutive batches share samples: ``cy_arrange`` writes the ``m`` samples ``O_{k-1}`` kept
from batch ``S_{k-1}`` over the first ``m`` slots of the drawn batch ``S_k``, and of ``S_k`` the
last ``floor(overlap |S_k|)`` samples (at least one, disjoint from the shared leading ones) are
kept as ``O_k`` for ``S_{k+1}``. The estimate is the batch gradient ``g = s(w_k, S_k)``,
assembled from the score derivatives in three parts -- the shared leading samples ``A``, the
middle ``M`` and the kept trailing samples ``B`` (row sums, then ``g = (M + A + B) / |S_k| +
lam w_reg``) -- so that the gradients on the overlaps come with it:

    grad F_{O_{k-1}}(w_k) = A / |O_{k-1}| + lam w_reg,   grad F_{O_k}(w_k) = B / |O_k| + lam w_reg.

The curvature pair of the step from ``w_{k-1}`` to ``w_k`` is

    v = w_k - w_{k-1},   r = grad F_{O_{k-1}}(w_k) - grad F_{O_{k-1}}(w_{k-1}),

a difference of gradients on the same samples (a consistent secant pair) that costs no gradient
evaluation beyond the two batch gradients: ``cy_pair`` hands it to the driver after the
estimate, before the direction is computed, and the driver forms no pair of its own
(``overlap_pairs``). A batch of the whole data set shares every sample with the next whole one
(the pair is then that of full-batch L-BFGS, and since the estimate is ``s(w, S_k)``
(``batch_gradient``) the driver reuses a line search's gradient at the accepted point as the
next estimate and hands it over through ``cy_reused``: one pass per trial); when a batch is not arranged (the first one after
a switch to whole batches) the shared samples' gradient is evaluated separately and counted in
``extra``, as it is when the batch has no room beside them (a schedule that shrinks the batch
to ``|S_k| <= |O_{k-1}|``: the drawn batch is left as it is, so that the pair stays on all of
``O_{k-1}`` and ``S_k`` still keeps its own trailing samples); after a switch from whole batches
to smaller ones no pair is formed once.
"""

from libc.math cimport NAN
from libc.string cimport memcpy, memset

import numpy as np

from sqnopt.checkpoint import CheckpointError, restore_array, state_array, state_value

from sqnopt.gradients._base cimport GradientKernel
from sqnopt.objectives._base cimport ObjectiveKernel


cdef class OverlapBatchKernel(GradientKernel):
    def __init__(self, Py_ssize_t dim, double overlap):
        GradientKernel.__init__(self, dim)
        if not 0.0 < overlap <= 0.5:
            raise ValueError("overlap must be in (0, 0.5]")
        self.overlap = overlap
        self.overlap_pairs = True
        self.batch_gradient = True          # the estimate is s(w, S_k)
        self.n_samples = 0
        self.n_scores = 0
        self.a = np.zeros(dim)
        self.b = np.zeros(dim)
        self.g_out = np.zeros(dim)
        self.w_prev = np.zeros(dim)
        self.pv = np.zeros(dim)
        self.pr = np.zeros(dim)
        self._reset()

    cdef void _reset(self):
        self.n_overlap = 0
        self.n_pairs = 0
        self.have_prev = False
        self.prev_whole = False
        self.have_pair = False
        self.arranged_size = -1
        self.m_in = 0

    def bind(self, ObjectiveKernel objective):
        """Size the scratch for the objective's data; overlaps start again (new data)."""
        GradientKernel.bind(self, objective)
        K = objective.n_scores
        if K < 1:
            raise TypeError(f"overlapping batches need an objective kernel with per-sample "
                            f"score derivatives (n_scores > 0); {type(objective).__name__} has "
                            "none")
        self.n_scores = K
        self.n_samples = objective.data.n_samples
        self.coef = np.zeros(self.n_samples * K)
        self.ov = np.zeros(self.n_samples, dtype=np.intp)
        self._reset()

    cdef void cy_arrange(self, Py_ssize_t* batch, Py_ssize_t size) noexcept nogil:
        cdef Py_ssize_t m = self.n_overlap
        self.arranged_size = size
        self.m_in = 0
        if size >= self.n_samples or m == 0 or not self.have_prev or self.prev_whole:
            return
        if m >= size:
            # no room beside the kept samples (a schedule that shrinks the batch): the batch
            # is left as drawn, the kept samples' gradient at w is evaluated on its own (the
            # pair stays on the same samples O) and the new batch has its own trailing part
            return
        memcpy(batch, &self.ov[0], m * sizeof(Py_ssize_t))
        self.m_in = m

    cdef double cy_estimate(self, ObjectiveKernel obj, const double* w, const Py_ssize_t* batch,
                            Py_ssize_t size, double* out, double* plain,
                            Py_ssize_t* extra) noexcept nogil:
        cdef Py_ssize_t j, K = self.n_scores, n = self.dim, N = self.n_samples
        cdef Py_ssize_t m_in, m_out, mid
        cdef double total, reg, inv = 1.0 / size
        cdef double* a = &self.a[0]
        cdef double* b = &self.b[0]
        cdef double* coef
        cdef bint whole = size >= N
        cdef bint in_part                     # the pair's gradient at w comes from A
        if K == 0 or N != obj.data.n_samples or K != obj.n_scores:
            return NAN                        # not bound to this objective (the driver binds it)
        coef = &self.coef[0]
        m_in = self.m_in if self.arranged_size == size else 0
        self.arranged_size = -1
        m_out = 0
        if not whole:
            m_out = <Py_ssize_t> (self.overlap * size)
            if m_out < 1:
                m_out = 1
            if m_out > size - m_in:
                m_out = size - m_in
        mid = size - m_in - m_out
        total = obj.cy_score_derivatives(w, batch, size, coef)
        memset(out, 0, n * sizeof(double))
        memset(a, 0, n * sizeof(double))
        memset(b, 0, n * sizeof(double))
        obj.cy_rows_axpy(batch, m_in, coef, 1.0, a)
        obj.cy_rows_axpy(batch + m_in, mid, coef + m_in * K, 1.0, out)
        obj.cy_rows_axpy(batch + m_in + mid, m_out, coef + (m_in + mid) * K, 1.0, b)
        for j in range(n):
            out[j] = ((out[j] + a[j]) + b[j]) * inv
        reg = obj.cy_reg_gradient_value(w, out)
        if plain != NULL and plain != out:
            memcpy(plain, out, n * sizeof(double))
        # the pair of the step w_prev -> w, on the samples kept at w_prev
        self.have_pair = False
        if self.have_prev:
            in_part = True
            if whole and self.prev_whole:
                memcpy(a, out, n * sizeof(double))             # O = the whole data set
            elif m_in > 0:
                for j in range(n):
                    a[j] = a[j] / m_in
                obj.cy_reg_gradient_value(w, a)
            elif self.n_overlap > 0 and not self.prev_whole:   # not arranged: evaluate O
                obj.cy_gradient(w, &self.ov[0], self.n_overlap, a)
                extra[0] += self.n_overlap
            else:
                in_part = False
            if in_part:
                for j in range(n):
                    self.pv[j] = w[j] - self.w_prev[j]
                    self.pr[j] = a[j] - self.g_out[j]
                self.have_pair = True
        # the samples kept for the next batch and their gradient at w
        if whole:
            memcpy(&self.g_out[0], out, n * sizeof(double))
            self.n_overlap = 0
        else:
            for j in range(n):
                self.g_out[j] = b[j] / m_out
            obj.cy_reg_gradient_value(w, &self.g_out[0])
            memcpy(&self.ov[0], batch + m_in + mid, m_out * sizeof(Py_ssize_t))
            self.n_overlap = m_out
        memcpy(&self.w_prev[0], w, n * sizeof(double))
        self.prev_whole = whole
        self.have_prev = True
        return total * inv + reg

    cdef void cy_reused(self, const double* w, const double* g, Py_ssize_t size) noexcept nogil:
        # the line search's gradient on the repeated batch: the whole data set again, so the
        # pair is full-batch L-BFGS's (another repeated batch breaks the chain of overlaps)
        cdef Py_ssize_t j, n = self.dim
        self.arranged_size = -1
        self.have_pair = False
        if size < self.n_samples:
            self.have_prev = False
            self.n_overlap = 0
            return
        if self.have_prev and self.prev_whole:
            for j in range(n):
                self.pv[j] = w[j] - self.w_prev[j]
                self.pr[j] = g[j] - self.g_out[j]
            self.have_pair = True
        memcpy(&self.g_out[0], g, n * sizeof(double))
        memcpy(&self.w_prev[0], w, n * sizeof(double))
        self.n_overlap = 0
        self.prev_whole = True
        self.have_prev = True

    cdef int cy_pair(self, const double* w, double* v, double* r) noexcept nogil:
        if not self.have_pair:
            return 0
        memcpy(v, &self.pv[0], self.dim * sizeof(double))
        memcpy(r, &self.pr[0], self.dim * sizeof(double))
        self.have_pair = False
        self.n_pairs += 1
        return 1

    def get_state(self) -> dict:
        """The samples kept for the next batch, the iterate and overlap gradient of the last
        estimate."""
        state = GradientKernel.get_state(self)
        state.update(n_samples=int(self.n_samples), have_prev=bool(self.have_prev),
                     prev_whole=bool(self.prev_whole), n_pairs=int(self.n_pairs),
                     ov=np.array(self.ov[:self.n_overlap], dtype=np.intp),
                     g_out=np.array(self.g_out), w_prev=np.array(self.w_prev))
        return state

    def set_state(self, state) -> None:
        GradientKernel.set_state(self, state)
        n = state_value(state, "n_samples", int, self)
        if n != self.n_samples:
            raise CheckpointError(f"OverlapBatchKernel: the checkpoint is for {n} samples (field "
                                  f"'n_samples'), this kernel is bound to {self.n_samples}: the "
                                  "checkpoint is of other data")
        ov = state_array(state, "ov", self, np.intp, lo=0, hi=self.n_samples - 1)
        if ov.shape[0] > min(self.n_samples, self.ov.shape[0]):
            raise CheckpointError(f"OverlapBatchKernel: checkpoint field 'ov' holds "
                                  f"{ov.shape[0]} indices, more than the overlap buffer's "
                                  f"{self.ov.shape[0]}: the checkpoint is of other data")
        have_prev = state_value(state, "have_prev", bool, self)
        prev_whole = state_value(state, "prev_whole", bool, self)
        n_pairs = state_value(state, "n_pairs", int, self, lo=0)
        restore_array(self.g_out, state, "g_out", self)
        restore_array(self.w_prev, state, "w_prev", self, iterate=True)
        np.asarray(self.ov)[:ov.shape[0]] = ov
        self.n_overlap = ov.shape[0]
        self.have_prev = have_prev
        self.prev_whole = prev_whole
        self.n_pairs = n_pairs
        self.have_pair = False
        self.arranged_size = -1
