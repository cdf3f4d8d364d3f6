# cython: language_level=3
"""Bare compiled loops used as same-process baselines by the benchmarks (``bench/``).

``bare_sgd_squared_hinge`` is SGD on the L2-regularised squared hinge loss written as one
monolithic loop over a dense float64 matrix: the same arithmetic as
``Solver(SquaredHinge(lam), Identity(), Fixed(L), Decaying(eps0, T0))`` with no virtual calls,
no component boundaries and no checks. ``calibration_workload`` is a fixed amount of work whose
time normalises benchmark figures across machines.
"""

import numpy as np

from cpython.pycapsule cimport PyCapsule_GetPointer
from libc.stdint cimport uint64_t
from numpy.random cimport bitgen_t

from sqnopt._random cimport bounded_uint64
from sqnopt._vec cimport vaxpy, vdot


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
            for j in range(n):
                g[j] = 0.0
            loss = 0.0
            for b in range(batch_size):
                i = batch[b]
                m = y[i] * vdot(&X[i, 0], &w[0], n)
                z = 1.0 - m
                if z > 0.0:
                    loss += z * z
                    vaxpy(-2.0 * z * y[i] * inv, &X[i, 0], &g[0], n)
            vaxpy(lam, &w[0], &g[0], n)
            eps = eps0 * T0 / (T0 + t)
            for j in range(n):
                w[j] = w[j] - eps * g[j]
    return loss * inv


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
            acc += vdot(&a[0], &b[0], 1000)
            vaxpy(1e-12, &a[0], &b[0], 1000)
    return acc
