# cython: language_level=3
"""BLAS-level flop floors used as same-process baselines by the benchmarks (``bench/``).

``axpy_dot_floor(n, n_dot, n_axpy, n_iter)`` runs ``n_iter`` rounds of ``n_dot`` BLAS ``ddot``
and ``n_axpy`` BLAS ``daxpy`` calls on length-``n`` vectors held in cache: the cost of
``(n_dot + n_axpy) * n`` multiply-adds per round at BLAS-1 speed, with nothing else. The oLBFGS
benchmark compares one driver iteration (``4 tau n`` for the two-loop recursion, ``4 L n`` for two
minibatch gradients, ``c n`` for the iterate/pair bookkeeping) against it.
"""

import numpy as np

from scipy.linalg.cython_blas cimport daxpy, ddot


def axpy_dot_floor(Py_ssize_t n, Py_ssize_t n_dot, Py_ssize_t n_axpy, Py_ssize_t n_iter):
    """Run the floor workload; returns a checksum (so the work cannot be optimised away)."""
    cdef Py_ssize_t k = max(n_dot, n_axpy, 1)
    cdef double[:, ::1] A = np.random.default_rng(0).uniform(-1e-3, 1e-3, size=(k, n))
    cdef double[::1] x = np.ones(n)
    cdef Py_ssize_t it, i
    cdef int ni = <int> n, inc = 1
    cdef double acc = 0.0, alpha
    with nogil:
        for it in range(n_iter):
            for i in range(n_dot):
                acc += ddot(&ni, &A[i, 0], &inc, &x[0], &inc)
            alpha = 1e-9 if acc > 0 else -1e-9
            for i in range(n_axpy):
                daxpy(&ni, &alpha, &A[i, 0], &inc, &x[0], &inc)
    return acc
