# cython: language_level=3
"""Bare compiled loops used as same-process baselines by the benchmarks (``bench/``).

``bare_sgd_squared_hinge`` is SGD on the L2-regularised squared hinge loss written as one
monolithic loop over a dense float64 matrix: the same arithmetic as
``Solver(SquaredHinge(lam), Identity(), Fixed(L), Decaying(eps0, T0))`` with no virtual calls,
no component boundaries and no checks, and the row hints of the dense row layer (every row's
first line when the batch is drawn, the rest of the next row while the current one is used).
``bare_sparse_pegasos`` is Pegasos on CSR rows in the scaled representation ``w = a v`` written
the same way, with the scaled loop's staged prefetches: the floor, on the running machine, of an
O(nnz) iteration with that memory access pattern. ``calibration_workload`` is a fixed amount of
work whose time normalises benchmark figures across machines.
``bare_adagrad_composite`` is one pass of AdaGrad's composite step (the L2 term in closed form)
on the logistic loss, one CSR row per step with an unregularised intercept, the untouched
coordinates' shrink applied just in time from a per-coordinate clock: the arithmetic of
``Solver(LogLoss(lam), AdaGrad(composite=True), Fixed(1), Constant(eta), fit_intercept=True)``
(``sqnopt/solver/_adaptive_loop.pyx``) as one loop, with no driver, no checks, no prefetches.
"""

import numpy as np

from cpython.pycapsule cimport PyCapsule_GetPointer
from libc.math cimport exp, log1p, sqrt
from libc.stdint cimport uint64_t
from numpy.random cimport bitgen_t

from sqnopt._random cimport bounded_uint64
from sqnopt._vec cimport SQNOPT_PREFETCH, sq_axpy, sq_dot, vprefetch_rest


def bare_sgd_squared_hinge(const double[:, ::1] X, const double[::1] y, double[::1] w,
                           Py_ssize_t batch_size, double eps0, double T0, double lam,
                           Py_ssize_t n_iter, bit_generator):
    """Run ``n_iter`` SGD iterations in place on ``w``; returns the last minibatch objective."""
    cdef bitgen_t* rng = <bitgen_t*> PyCapsule_GetPointer(bit_generator.capsule, "BitGenerator")
    cdef Py_ssize_t N = X.shape[0], n = X.shape[1]
    cdef double[::1] g = np.zeros(n)
    cdef Py_ssize_t[::1] batch = np.zeros(batch_size, dtype=np.intp)
    cdef Py_ssize_t t, b, i, j
    cdef double m, z, eps, loss = 0.0, inv = 1.0 / batch_size
    with nogil:
        for t in range(n_iter):
            for b in range(batch_size):
                batch[b] = <Py_ssize_t> bounded_uint64(rng, <uint64_t> N)
                SQNOPT_PREFETCH(&X[batch[b], 0])
            for j in range(n):
                g[j] = 0.0
            loss = 0.0
            for b in range(batch_size):
                i = batch[b]
                if b + 1 < batch_size:     # the rest of the next row (as the dense row layer)
                    vprefetch_rest(&X[batch[b + 1], 0], n * sizeof(double))
                m = y[i] * sq_dot(&X[i, 0], &w[0], n)
                z = 1.0 - m
                if z > 0.0:
                    loss += z * z
                    sq_axpy(-2.0 * z * y[i] * inv, &X[i, 0], &g[0], n)
            sq_axpy(lam, &w[0], &g[0], n)
            eps = eps0 * T0 / (T0 + t)
            for j in range(n):
                w[j] = w[j] - eps * g[j]
    return loss * inv


def bare_sparse_pegasos(const int[::1] indptr, const int[::1] indices, const double[::1] data,
                        const double[::1] y, const double[::1] rowsq, double[::1] v, double lam,
                        Py_ssize_t t_start, Py_ssize_t n_iter, bit_generator):
    """Run ``n_iter`` Pegasos iterations (hinge, batch 1, step ``1/(lam t)`` from
    ``t = t_start >= 2``, L2 ball of radius ``1/sqrt(lam)``) in place on ``v`` (``w = v`` on
    entry and on return). ``w = a v`` with ``nu = |w|^2`` tracked; rows are drawn uniformly by
    ``bit_generator`` up to four iterations ahead (in iteration order); row pointers, labels and
    norms are prefetched three iterations ahead, row lines two ahead and the touched entries of
    ``v`` one ahead when ``v`` exceeds 1 MiB (the scaled loop's stages, except that it hints the
    pointers four ahead). Returns ``nu``."""
    cdef bitgen_t* rng = <bitgen_t*> PyCapsule_GetPointer(bit_generator.capsule, "BitGenerator")
    cdef Py_ssize_t N = indptr.shape[0] - 1, n = v.shape[0]
    cdef Py_ssize_t ring[4]
    cdef Py_ssize_t t, k, i, p, start, stop
    cdef double a = 1.0, nu, dot, m, eta, shrink, delta, r2 = 1.0 / lam, sc
    cdef bint entries = n * 8 > (1 << 20)
    if t_start < 2:
        raise ValueError("t_start must be >= 2 (the first Pegasos step zeroes w)")
    if N < 1 or data.shape[0] != indices.shape[0] or y.shape[0] != N or rowsq.shape[0] != N:
        raise ValueError("inconsistent CSR arrays")
    nu = sq_dot(&v[0], &v[0], n)
    with nogil:
        for k in range(4):        # the rows of iterations t_start .. t_start + 3, in order
            ring[(t_start + k) & 3] = <Py_ssize_t> bounded_uint64(rng, <uint64_t> N)
        for t in range(t_start, t_start + n_iter):
            # stages: pointers 3 ahead, row lines 2 ahead, entries of v 1 ahead
            i = ring[(t + 3) & 3]
            SQNOPT_PREFETCH(&indptr[i])
            SQNOPT_PREFETCH(&y[i])
            SQNOPT_PREFETCH(&rowsq[i])
            i = ring[(t + 2) & 3]
            start = indptr[i]
            stop = indptr[i + 1]
            p = start
            while p < stop:
                SQNOPT_PREFETCH(&data[p])
                p += 8
            p = start
            while p < stop:
                SQNOPT_PREFETCH(&indices[p])
                p += 16
            if entries:
                i = ring[(t + 1) & 3]
                for p in range(indptr[i], indptr[i + 1]):
                    SQNOPT_PREFETCH(&v[indices[p]])
            i = ring[t & 3]
            ring[t & 3] = <Py_ssize_t> bounded_uint64(rng, <uint64_t> N)   # for t + 4
            start = indptr[i]
            stop = indptr[i + 1]
            dot = 0.0
            for p in range(start, stop):
                dot = dot + data[p] * v[indices[p]]
            m = y[i] * a * dot
            eta = 1.0 / (lam * t)
            shrink = 1.0 - eta * lam
            a = a * shrink
            nu = nu * shrink * shrink
            if m < 1.0:
                delta = eta * y[i]
                nu = nu + 2.0 * delta * a * dot + delta * delta * rowsq[i]
                sc = delta / a
                for p in range(start, stop):
                    v[indices[p]] += sc * data[p]
            if nu > r2:
                a = a * sqrt(r2 / nu)
                nu = r2
            if a < 1e-9:
                for p in range(n):
                    v[p] = v[p] * a
                a = 1.0
        for p in range(n):
            v[p] = v[p] * a
    return nu


cdef inline double _unit_dot(const double* a, const double* b, Py_ssize_t n) noexcept nogil:
    """``sum_j a[j] b[j]`` with four accumulators, compiled into this module for the same reason
    as :func:`_unit_axpy` (it is the inline ``vdot`` the calibration unit was measured with)."""
    cdef Py_ssize_t j = 0
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    while j + 4 <= n:
        s0 += a[j] * b[j]
        s1 += a[j + 1] * b[j + 1]
        s2 += a[j + 2] * b[j + 2]
        s3 += a[j + 3] * b[j + 3]
        j += 4
    while j < n:
        s0 += a[j] * b[j]
        j += 1
    return (s0 + s1) + (s2 + s3)


cdef inline void _unit_axpy(double alpha, const double* x, double* y, Py_ssize_t n) noexcept nogil:
    """``y += alpha x`` as a plain loop compiled into this module, not sqnopt's dispatched
    ``sq_axpy``: the calibration unit is a fixed piece of code, whose time must not change with
    the vector kernels (the committed baseline's figures are in its units)."""
    cdef Py_ssize_t j
    for j in range(n):
        y[j] += alpha * x[j]


def calibration_workload(Py_ssize_t repeats=200):
    """A fixed compute-bound workload (dot products and axpys on 1000-vectors held in cache).

    Its run time is the unit in which the benchmark suite reports normalised timings.
    """
    cdef double[::1] a = np.linspace(0.0, 1.0, 1000)
    cdef double[::1] b = np.linspace(1.0, 2.0, 1000)
    cdef Py_ssize_t r
    cdef double acc = 0.0
    with nogil:
        for r in range(repeats * 100):
            acc += _unit_dot(&a[0], &b[0], 1000)
            _unit_axpy(1e-12, &a[0], &b[0], 1000)
    return acc


def bare_adagrad_composite(const Py_ssize_t[::1] indptr, const int[::1] indices,
                           const double[::1] data, const double[::1] y,
                           const Py_ssize_t[::1] order, double[::1] w, double[::1] G,
                           double[::1] last, double[::1] intercept, double t0, double eta,
                           double lam, double delta):
    """One pass over the rows ``order`` (labels +-1) from step ``t0``, in place on ``w``, ``G``
    (``n_features + 1`` entries: the intercept's last), the clocks ``last`` and
    ``intercept[0]``; returns ``(t, sum of the logistic losses before each step)``. Pending
    shrinks: ``w_j`` is current as of step ``last[j]`` (bring every coordinate up to date with
    ``(s_j / (s_j + eta lam))^(t - last[j])`` before reading the result)."""
    cdef Py_ssize_t k, i, p, j, nf = w.shape[0]
    cdef double t = t0, m, e, yi, c, g, s, f, total = 0.0, b = intercept[0]
    cdef double eta_lam = eta * lam
    with nogil:
        for k in range(order.shape[0]):
            i = order[k]
            m = b
            for p in range(indptr[i], indptr[i + 1]):
                j = indices[p]
                if last[j] != t:
                    s = delta + sqrt(G[j])
                    f = log1p(eta_lam / s)
                    w[j] *= exp(-(t - last[j]) * f)
                    last[j] = t
                m += data[p] * w[j]
            yi = y[i]
            m *= yi
            # log(1 + exp(-m)) and its derivative -1 / (1 + exp(m)), stably
            if m > 0.0:
                e = exp(-m)
                total += log1p(e)
                c = -yi * e / (1.0 + e)
            else:
                e = exp(m)
                total += log1p(e) - m
                c = -yi / (1.0 + e)
            for p in range(indptr[i], indptr[i + 1]):
                j = indices[p]
                g = c * data[p]
                G[j] += g * g
                s = delta + sqrt(G[j])
                w[j] = (s * w[j] - eta * g) / (s + eta_lam)
                last[j] = t + 1.0
            G[nf] += c * c
            s = delta + sqrt(G[nf])
            b = (s * b - eta * c) / s
            t += 1.0
    intercept[0] = b
    return t, total
