# cython: language_level=3
"""The vector layer of sqnopt: every compiled kernel (and a compiled plugin) cimports its vector
primitives from here, and from nowhere else.

Two kinds of primitive, chosen by what the loop needs:

* **Dispatched 8-lane kernels** (``sq_*``, C in ``sqnopt/_simd.h`` and ``_simd_kernels.h``):
  compiled for AVX-512F, AVX2 and baseline x86-64 and picked once per module when it loads (the
  environment variable ``SQNOPT_SIMD=baseline|avx2|avx512f`` caps the choice; ``sq_simd_level``
  and :func:`sqnopt.simd_variant` name it). Every variant does the same loads, multiplies and
  adds in the same order (no FMA contraction: the build passes ``-ffp-contract=off``), so the
  results are bit-identical on every CPU. Reductions (``sq_dot``, ``sq_dot_f32``,
  ``sq_axpy_sqnorm``, ``sq_axpy_dot``) sum 16 partial sums in the fixed order documented in
  ``_simd.h``. Use them for the O(n) and O(n^2) loops over dense vectors and rows: dots,
  axpys, the fused trial step, the L-BFGS two-loop recursion and the oBFGS matrix passes.
* **Inline helpers** (``v*``, below): compiled into the calling module. ``vallfinite`` checks
  a vector for NaN / inf, and ``vprefetch`` / ``vprefetch_rest`` / ``SQNOPT_PREFETCH`` issue
  cache hints for the row layer and the loops.

The dense dot product has one summation order, ``sq_dot``'s, everywhere: the curvature models
(``curvature/_lbfgs``, ``_bfgs``, ``_res_eig``, ``_bound``, ``_secant``), the dense rows, the
objectives, the scaled sparse iterate's dense rows and row norms (``solver/_scaled_loop.pyx``)
and compiled plugins. A sparse row's gather ``sum_p x_p w[ind_p]`` is not a dense dot: it is
the row layer's own loop (``data/_rows.pxd``), and the scaled iterate's (strided, for its
interleaved average). The axpy has one implementation,
``sq_axpy`` / ``sq_axpy_f32``: elementwise ``y[j] + x[j] * alpha`` rounds the same in any order,
so the dispatched kernel serves every caller.

Building against this module: the extension's C include path needs the directory of
``_simd.h`` (sqnopt's package directory); ``Cython.Build.cythonize`` adds it from this file's
location, and ``setup.py`` lists it explicitly.
"""

from libc.math cimport isfinite


cdef extern from "_simd.h" nogil:
    # the variant in use: 0 baseline, 1 AVX2, 2 AVX-512F
    int sq_simd_level()
    # sum_j a[j] b[j] (sixteen partial sums, the order of _simd.h)
    double sq_dot(const double* a, const double* b, Py_ssize_t n)
    double sq_dot_f32(const float* a, const double* b, Py_ssize_t n)
    # sum_j a[j]^2 of a float32 a, in float64 (the order of sq_dot)
    double sq_sqnorm_f32(const float* a, Py_ssize_t n)
    # y += alpha x
    void sq_axpy(double alpha, const double* x, double* y, Py_ssize_t n)
    void sq_axpy_f32(double alpha, const float* x, double* y, Py_ssize_t n)
    # y += alpha x; returns x . x in the order of sq_dot(x, x, n)
    double sq_axpy_sqnorm(double alpha, const double* x, double* y, Py_ssize_t n)
    # out = w - eps d; returns True iff every entry of out is finite
    bint sq_step_allfinite(const double* w, double eps, const double* d, double* out,
                           Py_ssize_t n)
    # q += alpha x, then returns y . q
    double sq_axpy_dot(double alpha, const double* x, double* q, const double* y, Py_ssize_t n)
    # the L-BFGS two-loop recursion over a ring of tau pairs (see sqnopt/curvature/_lbfgs.pyx)
    void sq_two_loop(Py_ssize_t n, const double* V, const double* R, Py_ssize_t ld,
                     Py_ssize_t tau, Py_ssize_t m, Py_ssize_t head, const double* rho,
                     double* alpha, double gamma, const double* g, double* out)
    # the oBFGS matrix passes (see sqnopt/curvature/_bfgs.pyx)
    void sq_symv2_merge_upper(Py_ssize_t n, double* M, Py_ssize_t ld, Py_ssize_t m,
                              const double* A, const double* B, Py_ssize_t lda,
                              const double* x1, const double* x2, double* y1, double* y2)
    void sq_syr2_shift_copy_upper(Py_ssize_t n, double* B, Py_ssize_t ld, double alpha,
                                  const double* x, double beta, const double* y, double delta,
                                  double* F)
    int sq_potrf_upper(Py_ssize_t n, double* F, Py_ssize_t ld)
    void sq_potrs_upper(Py_ssize_t n, const double* U, Py_ssize_t ld, double* b)


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
    misses overlap instead of being paid one row after another. Every line the range touches
    is hinted, from the one holding its first byte to the one holding its last (a range that
    does not start on a line spans one line more than its length in lines when its tail
    crosses into it).
    """
    if n_bytes <= 0:
        return
    cdef const char* p = <const char*> (<size_t> start & ~(<size_t> 63))
    cdef const char* end = <const char*> start + n_bytes
    while p < end:
        SQNOPT_PREFETCH(p)
        p += 64


cdef inline void vprefetch_rest(const void* row, Py_ssize_t n_bytes) noexcept nogil:
    """Hint the lines of a contiguous row after its first, ``[row + 64, row + n_bytes)``: for the
    next row of a minibatch while the current one is used, so that one row's lines are in flight
    at a time instead of the whole batch's (the dense row layer and the bare baseline loop;
    docs/report_overhead.md, "Next-row hints", compares it with hinting into L2 only or two
    rows ahead)."""
    vprefetch(<const char*> row + 64, n_bytes - 64)


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
