# cython: language_level=3
"""Declarations of the vector kernels of ``sqnopt/_simd.h``: 8-lane loops compiled for AVX-512,
AVX2 and baseline x86-64, the variant picked when the module loads (capped by the environment
variable ``SQNOPT_SIMD``); bit-identical results on every variant. Compiled modules cimport
them from here (the header's directory is on the include path of the build, see ``setup.py``)."""

cdef extern from "_simd.h" nogil:
    # the variant in use: 0 baseline, 1 AVX2, 2 AVX-512F
    int sq_simd_level()
    double sq_dot(const double* a, const double* b, Py_ssize_t n)
    double sq_dot_f32(const float* a, const double* b, Py_ssize_t n)
    void sq_axpy(double alpha, const double* x, double* y, Py_ssize_t n)
    void sq_axpy_f32(double alpha, const float* x, double* y, Py_ssize_t n)
    # y += alpha x; returns x . x in the order of sq_dot(x, x, n)
    double sq_axpy_sqnorm(double alpha, const double* x, double* y, Py_ssize_t n)
    # out = w - eps d; returns True iff every entry of out is finite
    bint sq_step_allfinite(const double* w, double eps, const double* d, double* out,
                           Py_ssize_t n)
    # q += alpha x, then returns y . q
    double sq_axpy_dot(double alpha, const double* x, double* q, const double* y, Py_ssize_t n)
    void sq_two_loop(Py_ssize_t n, const double* V, const double* R, Py_ssize_t ld,
                     Py_ssize_t tau, Py_ssize_t m, Py_ssize_t head, const double* rho,
                     double* alpha, double gamma, const double* g, double* out)
    void sq_symv2_merge_upper(Py_ssize_t n, double* M, Py_ssize_t ld, Py_ssize_t m,
                              const double* A, const double* B, Py_ssize_t lda,
                              const double* x1, const double* x2, double* y1, double* y2)
    void sq_syr2_shift_copy_upper(Py_ssize_t n, double* B, Py_ssize_t ld, double alpha,
                                  const double* x, double beta, const double* y, double delta,
                                  double* F)
    int sq_potrf_upper(Py_ssize_t n, double* F, Py_ssize_t ld)
    void sq_potrs_upper(Py_ssize_t n, const double* U, Py_ssize_t ld, double* b)
