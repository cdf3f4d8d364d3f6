# cython: language_level=3
r"""Stochastic average gradient (SAG) for L2-regularised margin losses: a benchmark baseline.

Schmidt, Le Roux & Bach, *Minimizing finite sums with the stochastic average gradient* (2013),
Algorithm 1 with one sample per iteration. For a margin loss the gradient of sample ``i`` is
``a_i x_i`` with the scalar ``a_i = c_i y_i dloss/dm(m_i)``, so the memory is one scalar per
sample and an iteration costs ``O(n)``:

    i ~ U{1..N};   a = c_i y_i l'(y_i x_i'w);   G += (a - a_i) x_i;   a_i = a
    w <- w - eps_t (G / m + lam w_reg)        (m: samples seen so far)

with ``eps_t = eps0 T0 / (T0 + t)`` (or ``eps0`` when ``T0 <= 0``). SAG keeps a per-sample memory
that the :class:`~sqnopt.interfaces.CurvatureModel` interface (a map ``g -> H g``) has no place
for, so it is a stand-alone loop used by ``bench/`` to compare with the paper-003 results; it
reuses sqnopt's compiled objectives (row access, ``dloss_dmargin``) and samplers.
"""

import numpy as np

from libc.string cimport memcpy

from sqnopt.data._rows cimport RowData
from sqnopt.objectives._base cimport MarginObjectiveKernel
from sqnopt.solver._sampler cimport Sampler


cdef class SAGRunner:
    """SAG state for one solve; :meth:`run` advances it in place (callable in chunks)."""

    cdef MarginObjectiveKernel obj
    cdef RowData data
    cdef Sampler sampler
    cdef double[::1] w
    cdef double[::1] gsum
    cdef double[::1] mem
    cdef unsigned char[::1] seen
    cdef readonly Py_ssize_t t
    cdef readonly Py_ssize_t n_seen
    cdef readonly double eps0
    cdef readonly double T0

    def __init__(self, MarginObjectiveKernel objective, Sampler sampler, double[::1] w,
                 double eps0, double T0):
        if w.shape[0] != objective.n_params:
            raise ValueError(f"w has length {w.shape[0]}, expected {objective.n_params}")
        if sampler.n_samples != objective.data.n_samples:
            raise ValueError("the sampler and the objective see different numbers of samples")
        if not eps0 > 0:
            raise ValueError(f"eps0 must be > 0, got {eps0}")
        self.obj = objective
        self.data = objective.data
        self.sampler = sampler
        self.w = w
        self.gsum = np.zeros(objective.n_params)
        self.mem = np.zeros(objective.data.n_samples)
        self.seen = np.zeros(objective.data.n_samples, dtype=np.uint8)
        self.t = 0
        self.n_seen = 0
        self.eps0 = eps0
        self.T0 = T0

    def run(self, Py_ssize_t n_iter, double[:, ::1] trace=None, Py_ssize_t trace_every=0):
        """Run ``n_iter`` iterations; every ``trace_every`` iterations copy ``w`` into the next
        row of ``trace``. Returns the number of rows written."""
        cdef Py_ssize_t rows = 0, cap = 0
        cdef double* tr = NULL
        if trace_every > 0:
            if trace is None:
                raise ValueError("trace_every > 0 needs a trace array")
            if trace.shape[1] != self.w.shape[0]:
                raise ValueError("trace rows must have length n_params")
            cap = trace.shape[0]
            if cap > 0:
                tr = &trace[0, 0]
        with nogil:
            rows = self._run(n_iter, tr, cap, trace_every)
        return rows

    cdef Py_ssize_t _run(self, Py_ssize_t n_iter, double* trace, Py_ssize_t cap,
                         Py_ssize_t trace_every) noexcept nogil:
        cdef Py_ssize_t it, j, k, i = 0, rows = 0, n = self.w.shape[0]
        cdef Py_ssize_t nf = self.data.n_features, dim = self.data.dim, nb = self.obj.n_blocks
        cdef double a, m, eps, shrink, inv
        cdef double lam = self.obj.lam
        cdef double* w = &self.w[0]
        cdef double* g = &self.gsum[0]
        for it in range(n_iter):
            self.sampler.cy_draw(1, &i)
            m = self.data.y[i] * self.data.row_dot(i, w)
            a = self.data.grad_weight[i] * self.data.y[i] * self.obj.dloss_dmargin(m)
            if not self.seen[i]:        # its memory is still 0: a - mem[i] == a exactly
                self.seen[i] = 1
                self.n_seen += 1
            if a != self.mem[i]:
                self.data.row_axpy(i, a - self.mem[i], g)
            self.mem[i] = a
            eps = self.eps0 * self.T0 / (self.T0 + self.t) if self.T0 > 0 else self.eps0
            inv = eps / self.n_seen
            shrink = 1.0 - eps * lam
            for k in range(nb):
                for j in range(k * dim, k * dim + nf):
                    w[j] = shrink * w[j] - inv * g[j]
                for j in range(k * dim + nf, (k + 1) * dim):
                    w[j] = w[j] - inv * g[j]
            self.t += 1
            if trace_every > 0 and self.t % trace_every == 0 and rows < cap:
                memcpy(trace + rows * n, w, n * sizeof(double))
                rows += 1
        return rows
