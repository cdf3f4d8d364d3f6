# cython: language_level=3
"""Compiled objective base classes (see ``_base.pxd`` for the contract)."""

import numpy as np

from libc.math cimport NAN
from libc.string cimport memset

from sqnopt._simd cimport sq_axpy, sq_dot
from sqnopt.data._rows cimport RowData


cdef class ObjectiveKernel:
    """Base class of compiled objectives; subclasses override the ``cy_*`` methods."""

    cdef int _bind(self, RowData data, double lam, Py_ssize_t n_blocks) except -1:
        if n_blocks < 1:
            raise ValueError("n_blocks must be >= 1")
        self.data = data
        self.lam = lam
        self.n_blocks = n_blocks
        self.n_params = n_blocks * data.dim
        return 0

    cdef double cy_gradient(self, const double* w, const Py_ssize_t* batch, Py_ssize_t size,
                            double* grad) noexcept nogil:
        return NAN

    cdef double cy_value(self, const double* w) noexcept nogil:
        return NAN

    cdef double cy_full_gradient(self, const double* w, double* grad) noexcept nogil:
        return NAN

    cdef double _reg_value(self, const double* w) noexcept nogil:
        """(lam / 2) * ||w_reg||^2."""
        cdef Py_ssize_t k
        cdef Py_ssize_t dim = self.data.dim
        cdef double acc = 0.0
        for k in range(self.n_blocks):
            acc += sq_dot(w + k * dim, w + k * dim, self.data.n_features)
        return 0.5 * self.lam * acc

    cdef void _reg_gradient(self, const double* w, double* grad) noexcept nogil:
        """grad += lam * w_reg (intercepts excluded)."""
        cdef Py_ssize_t k
        cdef Py_ssize_t dim = self.data.dim
        if self.lam == 0.0:
            return
        for k in range(self.n_blocks):
            sq_axpy(self.lam, w + k * dim, grad + k * dim, self.data.n_features)

    # ---- Python-level API (the kernel protocol of sqnopt.protocols) -------------------------
    def gradient(self, const double[::1] w, const Py_ssize_t[::1] batch, double[::1] out) -> float:
        """Minibatch gradient at ``w`` over the sample indices ``batch`` into ``out``.

        Returns the minibatch objective value.
        """
        self._check_w(w)
        self._check_w(out)
        cdef Py_ssize_t size = batch.shape[0]
        if size < 1:
            raise ValueError("batch must contain at least one index")
        for i in range(size):
            if batch[i] < 0 or batch[i] >= self.data.n_samples:
                raise IndexError(f"batch index {batch[i]} out of range")
        return self.cy_gradient(&w[0], &batch[0], size, &out[0])

    def value(self, const double[::1] w) -> float:
        """Full objective ``F(w)``."""
        self._check_w(w)
        return self.cy_value(&w[0])

    def full_gradient(self, const double[::1] w, double[::1] out) -> float:
        """Full gradient of ``F`` at ``w`` into ``out``; returns ``F(w)``."""
        self._check_w(w)
        self._check_w(out)
        return self.cy_full_gradient(&w[0], &out[0])

    cdef int _check_w(self, const double[::1] w) except -1:
        if w.shape[0] != self.n_params:
            raise ValueError(f"parameter vector has length {w.shape[0]}, expected "
                             f"n_params={self.n_params}")
        return 0


cdef class MarginObjectiveKernel(ObjectiveKernel):
    """Loss of the margin ``m = y (x . w + b)`` for binary labels ``y`` in {-1, +1}."""

    def __init__(self, RowData data, double lam):
        self._bind(data, lam, 1)

    cdef double loss(self, double margin) noexcept nogil:
        return NAN

    cdef double dloss_dmargin(self, double margin) noexcept nogil:
        return NAN

    cdef double cy_gradient(self, const double* w, const Py_ssize_t* batch, Py_ssize_t size,
                            double* grad) noexcept nogil:
        cdef Py_ssize_t t, i
        cdef double m, yi, gi, coef, total = 0.0
        cdef double inv = 1.0 / size
        for t in range(size):
            self.data.row_prefetch(batch[t])
        memset(grad, 0, self.n_params * sizeof(double))
        for t in range(size):
            i = batch[t]
            if t + 1 < size:
                self.data.row_prefetch_next(batch[t + 1])
            yi = self.data.y[i]
            gi = self.data.grad_weight[i]
            m = yi * self.data.row_dot(i, w)
            total += gi * self.loss(m)
            coef = inv * gi * yi * self.dloss_dmargin(m)
            if coef != 0.0:      # hinge-type losses: no work for samples beyond the margin
                self.data.row_axpy(i, coef, grad)
        self._reg_gradient(w, grad)
        return total * inv + self._reg_value(w)

    cdef double cy_value(self, const double* w) noexcept nogil:
        cdef Py_ssize_t i
        cdef double total = 0.0
        for i in range(self.data.n_samples):
            total += self.data.sample_weight[i] * self.loss(self.data.y[i] * self.data.row_dot(i, w))
        return total / self.data.n_samples + self._reg_value(w)

    cdef double cy_full_gradient(self, const double* w, double* grad) noexcept nogil:
        cdef Py_ssize_t i
        cdef double m, yi, ci, coef, total = 0.0
        cdef double inv = 1.0 / self.data.n_samples
        memset(grad, 0, self.n_params * sizeof(double))
        for i in range(self.data.n_samples):
            yi = self.data.y[i]
            ci = self.data.sample_weight[i]
            m = yi * self.data.row_dot(i, w)
            total += ci * self.loss(m)
            coef = inv * ci * yi * self.dloss_dmargin(m)
            if coef != 0.0:
                self.data.row_axpy(i, coef, grad)
        self._reg_gradient(w, grad)
        return total * inv + self._reg_value(w)

    def py_loss(self, margin):
        """``loss(m)`` elementwise (float or array)."""
        m = np.asarray(margin, dtype=np.float64)
        out = np.empty_like(m)
        cdef double[::1] o = out.reshape(-1)
        cdef const double[::1] mm = np.ascontiguousarray(m).reshape(-1)
        for i in range(mm.shape[0]):
            o[i] = self.loss(mm[i])
        return out if out.ndim else float(out)

    def py_dloss_dmargin(self, margin):
        """``d loss / d m`` elementwise (float or array)."""
        m = np.asarray(margin, dtype=np.float64)
        out = np.empty_like(m)
        cdef double[::1] o = out.reshape(-1)
        cdef const double[::1] mm = np.ascontiguousarray(m).reshape(-1)
        for i in range(mm.shape[0]):
            o[i] = self.dloss_dmargin(mm[i])
        return out if out.ndim else float(out)
