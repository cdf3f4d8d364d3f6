# cython: language_level=3
"""Inline vector helpers shared by the compiled kernels (and available to plugins via cimport).

Reductions use four independent accumulators: the adds do not form one dependency chain, so
they run at throughput instead of latency (docs/benchmarks.md). The summation order
therefore differs from a naive left-to-right loop by rounding only.
"""

from libc.math cimport isfinite


cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define SQNOPT_PREFETCH(p) __builtin_prefetch((const void *)(p), 0, 3)
    #else
    #define SQNOPT_PREFETCH(p) ((void)0)
    #endif
    """
    void SQNOPT_PREFETCH(const void* p) noexcept nogil


cdef inline void vprefetch(const void* start, Py_ssize_t n_bytes) noexcept nogil:
    """Hint the CPU to load ``[start, start + n_bytes)`` into cache (no-op off GCC/Clang).

    Issuing the loads of every row of a minibatch before touching any of them lets their cache
    misses overlap instead of being paid one row after another.
    """
    cdef const char* p = <const char*> start
    cdef Py_ssize_t off = 0
    while off < n_bytes:
        SQNOPT_PREFETCH(p + off)
        off += 64


cdef inline void vprefetch_rest(const void* row, Py_ssize_t n_bytes) noexcept nogil:
    """Hint the lines of a contiguous row after its first, ``[row + 64, row + n_bytes)``: for the
    next row of a minibatch while the current one is used, so that one row's lines are in flight
    at a time instead of the whole batch's (the dense row layer and the bare baseline loop;
    bench/ab_core.py and docs/benchmarks.md compare it with hinting into L2 only or two rows
    ahead)."""
    vprefetch(<const char*> row + 64, n_bytes - 64)


cdef inline double vdot(const double* a, const double* b, Py_ssize_t n) noexcept nogil:
    """``sum_j a[j] * b[j]``."""
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


cdef inline double vdot_f(const float* a, const double* b, Py_ssize_t n) noexcept nogil:
    """``sum_j a[j] * b[j]`` with a float32 ``a`` (accumulated in float64)."""
    cdef Py_ssize_t j = 0
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    while j + 4 <= n:
        s0 += <double> a[j] * b[j]
        s1 += <double> a[j + 1] * b[j + 1]
        s2 += <double> a[j + 2] * b[j + 2]
        s3 += <double> a[j + 3] * b[j + 3]
        j += 4
    while j < n:
        s0 += <double> a[j] * b[j]
        j += 1
    return (s0 + s1) + (s2 + s3)


cdef inline void vaxpy(double alpha, const double* x, double* y, Py_ssize_t n) noexcept nogil:
    """``y += alpha * x``."""
    cdef Py_ssize_t j
    for j in range(n):
        y[j] += alpha * x[j]


cdef inline void vaxpy_f(double alpha, const float* x, double* y, Py_ssize_t n) noexcept nogil:
    """``y += alpha * x`` with a float32 ``x``."""
    cdef Py_ssize_t j
    for j in range(n):
        y[j] += alpha * <double> x[j]


cdef inline bint vallfinite(const double* a, Py_ssize_t n) noexcept nogil:
    """True iff no entry is NaN or infinite."""
    cdef Py_ssize_t j = 0
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    while j + 4 <= n:
        s0 += a[j] - a[j]      # x - x is NaN exactly when x is NaN or +-inf
        s1 += a[j + 1] - a[j + 1]
        s2 += a[j + 2] - a[j + 2]
        s3 += a[j + 3] - a[j + 3]
        j += 4
    while j < n:
        s0 += a[j] - a[j]
        j += 1
    return (s0 + s1 + s2 + s3) == 0.0
