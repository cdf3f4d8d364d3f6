/* Vector kernels compiled for several instruction sets, shared by the compiled modules.
 *
 * The package is built for the baseline x86-64 ISA (SSE2), which gives 2-wide double arithmetic.
 * The hot O(n) and O(n^2) loops -- dense row dot products and axpys (sqnopt/data/_rows.pyx), the
 * regulariser of the objectives, and the curvature models' recursions and matrix passes -- are
 * therefore written once, in _simd_kernels.h, on 8-lane vectors, and compiled (on x86-64 Linux
 * with GCC) three times: for AVX-512F, for AVX2 and for the baseline. Each variant gets the
 * representation of the 8-lane vector that its registers hold:
 *
 *   W  one 64-byte GCC vector: one zmm register (AVX-512F);
 *   S  two 32-byte GCC vectors, lanes 0-3 and 4-7: two ymm registers (AVX2);
 *   X  four 16-byte GCC vectors: four xmm registers (the baseline, GCC or Clang; the same
 *      code serves other targets such as arm64, not measured there);
 *   P  a struct of 8 doubles (the baseline of other compilers).
 *
 * (GCC 12 compiles W for AVX2 through the stack, several times slower than S; the measurements
 * are in docs/benchmarks.md, "Vector-kernel variants".) The variant is picked once per module when it loads, from the CPU
 * (__builtin_cpu_supports), and can be capped for tests and benchmarks with the environment
 * variable SQNOPT_SIMD=baseline|avx2|avx512f (sqnopt.simd_variant() names the one in use). With
 * other compilers or platforms only the baseline variant is built.
 *
 * Everything is plain loads, multiplies, adds and stores in a fixed order per lane -- no FMA
 * contraction (the package is built with -ffp-contract=off), no reassociation -- so every
 * variant and representation returns bit-identical results; only the speed differs
 * (tests/kernels/test_simd.py runs each variant, and P, and compares the bits).
 *
 * Reductions use 16 partial sums (two 8-lane accumulators) in a fixed order, so they round
 * differently from a left-to-right sum:
 * lane k of s0 / s1 sums the terms j = 16 b + k / 16 b + 8 + k of the full blocks of 16, one
 * more block of 8 (if any) goes to s0, the tail j >= 8 floor(n / 8) is summed left to right into
 * t, and the result is hsum(s0 + s1) + t with hsum(v) = ((v0 + v1) + (v2 + v3)) + ((v4 + v5) +
 * (v6 + v7)) (tests/kernels/test_vec.py checks this order exactly).
 */
#ifndef SQNOPT_SIMD_H
#define SQNOPT_SIMD_H

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* SQ_PORTABLE_ONLY (a build-time define, for checking the portable code with GCC): only the
 * baseline variant, in the representation P of compilers without vector extensions */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) \
    && !defined(SQ_PORTABLE_ONLY)
#  define SQ_MULTI_ISA 1
#endif
#if defined(__GNUC__)
#  define SQ_UNUSED __attribute__((unused))
#else
#  define SQ_UNUSED
#endif
#define SQ_CAT_(a, b) a##b
#define SQ_CAT(a, b) SQ_CAT_(a, b)

/* ---- representation W: one 64-byte vector (AVX-512) ---- */
#if defined(SQ_MULTI_ISA)
typedef double sq_v8_W __attribute__((vector_size(64)));
/* unaligned 8-lane load / store (memcpy compiles to one vector move per register) */
#  define SQ_LOAD_W(dst, p) memcpy(&(dst), (p), sizeof(sq_v8_W))
#  define SQ_STORE_W(p, src) memcpy((p), &(src), sizeof(sq_v8_W))
#  define SQ_ZERO_W(v) memset(&(v), 0, sizeof(sq_v8_W))
typedef float sq_f8_W __attribute__((vector_size(32)));
/* 8 floats widened to 8 doubles (GCC 12: one vcvtps2pd on AVX-512, by objdump) */
#  define SQ_LOADF_W(dst, p) do { sq_f8_W _f; memcpy(&_f, (p), sizeof(sq_f8_W)); \
        (dst) = (sq_v8_W){_f[0], _f[1], _f[2], _f[3], _f[4], _f[5], _f[6], _f[7]}; } while (0)
static inline double sq_hsum_W(sq_v8_W v)
{
    return ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));
}
#  define SQ_MADD_W(acc, a, b) ((acc) += (a) * (b))
/* scalar s, vector x: the scalar is broadcast by the compiler (an embedded broadcast operand) */
#  define SQ_MADDS_W(acc, s, x) ((acc) += (x) * (s))
#  define SQ_AXPYS_W(out, y, s, x) ((out) = (y) + (x) * (s))
#  define SQ_ADD_W(out, a, b) ((out) = (a) + (b))
#  define SQ_SUB_W(out, a, b) ((out) = (a) - (b))
#  define SQ_MUL_W(out, a, b) ((out) = (a) * (b))
/* rows per sweep of the fused symmetric pass (see sq_symv2_merge_upper) */
#  ifndef SQ_SWEEP_W
#    define SQ_SWEEP_W 4
#  endif
#  if SQ_SWEEP_W != 1 && SQ_SWEEP_W != 2 && SQ_SWEEP_W != 4
#    error "SQ_SWEEP_W must divide the block of 4 rows"
#  endif

/* ---- representation S: two 32-byte halves, lanes 0-3 in lo and 4-7 in hi (AVX2) ---- */
typedef double sq_v4_S __attribute__((vector_size(32)));
typedef struct { sq_v4_S lo, hi; } sq_v8_S;
#  define SQ_LOAD_S(dst, p) do { const double* _p = (p); memcpy(&(dst).lo, _p, sizeof(sq_v4_S)); \
        memcpy(&(dst).hi, _p + 4, sizeof(sq_v4_S)); } while (0)
#  define SQ_STORE_S(p, src) do { double* _p = (p); memcpy(_p, &(src).lo, sizeof(sq_v4_S)); \
        memcpy(_p + 4, &(src).hi, sizeof(sq_v4_S)); } while (0)
#  define SQ_ZERO_S(v) do { (v).lo = (sq_v4_S){0.0, 0.0, 0.0, 0.0}; (v).hi = (v).lo; } while (0)
#  define SQ_LOADF_S(dst, p) do { const float* _q = (p); \
        (dst).lo = (sq_v4_S){_q[0], _q[1], _q[2], _q[3]}; \
        (dst).hi = (sq_v4_S){_q[4], _q[5], _q[6], _q[7]}; } while (0)
static inline double sq_hsum_S(sq_v8_S v)
{
    return ((v.lo[0] + v.lo[1]) + (v.lo[2] + v.lo[3])) + ((v.hi[0] + v.hi[1]) + (v.hi[2] + v.hi[3]));
}
#  define SQ_MADD_S(acc, a, b) do { (acc).lo += (a).lo * (b).lo; (acc).hi += (a).hi * (b).hi; } while (0)
#  define SQ_MADDS_S(acc, s, x) do { const double _s = (s); (acc).lo += (x).lo * _s; \
        (acc).hi += (x).hi * _s; } while (0)
#  define SQ_AXPYS_S(out, y, s, x) do { const double _s = (s); (out).lo = (y).lo + (x).lo * _s; \
        (out).hi = (y).hi + (x).hi * _s; } while (0)
#  define SQ_ADD_S(out, a, b) do { (out).lo = (a).lo + (b).lo; (out).hi = (a).hi + (b).hi; } while (0)
#  define SQ_SUB_S(out, a, b) do { (out).lo = (a).lo - (b).lo; (out).hi = (a).hi - (b).hi; } while (0)
#  define SQ_MUL_S(out, a, b) do { (out).lo = (a).lo * (b).lo; (out).hi = (a).hi * (b).hi; } while (0)
#  ifndef SQ_SWEEP_S
#    define SQ_SWEEP_S 1
#  endif
#  if SQ_SWEEP_S != 1 && SQ_SWEEP_S != 2 && SQ_SWEEP_S != 4
#    error "SQ_SWEEP_S must divide the block of 4 rows"
#  endif
#endif

/* ---- representation X: four 16-byte quarters, lanes 2q and 2q + 1 in quarter q (the baseline
 * with GCC or Clang) ---- */
#if defined(__GNUC__) && !defined(SQ_PORTABLE_ONLY)
typedef double sq_v2_X __attribute__((vector_size(16)));
typedef struct { sq_v2_X q0, q1, q2, q3; } sq_v8_X;
#  define SQ_LOAD_X(dst, p) do { const double* _p = (p); \
        memcpy(&(dst).q0, _p, sizeof(sq_v2_X)); memcpy(&(dst).q1, _p + 2, sizeof(sq_v2_X)); \
        memcpy(&(dst).q2, _p + 4, sizeof(sq_v2_X)); memcpy(&(dst).q3, _p + 6, sizeof(sq_v2_X)); \
    } while (0)
#  define SQ_STORE_X(p, src) do { double* _p = (p); \
        memcpy(_p, &(src).q0, sizeof(sq_v2_X)); memcpy(_p + 2, &(src).q1, sizeof(sq_v2_X)); \
        memcpy(_p + 4, &(src).q2, sizeof(sq_v2_X)); memcpy(_p + 6, &(src).q3, sizeof(sq_v2_X)); \
    } while (0)
#  define SQ_ZERO_X(v) do { (v).q0 = (sq_v2_X){0.0, 0.0}; (v).q1 = (v).q0; (v).q2 = (v).q0; \
        (v).q3 = (v).q0; } while (0)
#  define SQ_LOADF_X(dst, p) do { const float* _q = (p); \
        (dst).q0 = (sq_v2_X){_q[0], _q[1]}; (dst).q1 = (sq_v2_X){_q[2], _q[3]}; \
        (dst).q2 = (sq_v2_X){_q[4], _q[5]}; (dst).q3 = (sq_v2_X){_q[6], _q[7]}; } while (0)
static inline double sq_hsum_X(sq_v8_X v)
{
    return ((v.q0[0] + v.q0[1]) + (v.q1[0] + v.q1[1])) + ((v.q2[0] + v.q2[1]) + (v.q3[0] + v.q3[1]));
}
#  define SQ_MADD_X(acc, a, b) do { (acc).q0 += (a).q0 * (b).q0; (acc).q1 += (a).q1 * (b).q1; \
        (acc).q2 += (a).q2 * (b).q2; (acc).q3 += (a).q3 * (b).q3; } while (0)
#  define SQ_MADDS_X(acc, s, x) do { const double _s = (s); \
        (acc).q0 += (x).q0 * _s; (acc).q1 += (x).q1 * _s; \
        (acc).q2 += (x).q2 * _s; (acc).q3 += (x).q3 * _s; } while (0)
#  define SQ_AXPYS_X(out, y, s, x) do { const double _s = (s); \
        (out).q0 = (y).q0 + (x).q0 * _s; (out).q1 = (y).q1 + (x).q1 * _s; \
        (out).q2 = (y).q2 + (x).q2 * _s; (out).q3 = (y).q3 + (x).q3 * _s; } while (0)
#  define SQ_ADD_X(out, a, b) do { (out).q0 = (a).q0 + (b).q0; (out).q1 = (a).q1 + (b).q1; \
        (out).q2 = (a).q2 + (b).q2; (out).q3 = (a).q3 + (b).q3; } while (0)
#  define SQ_SUB_X(out, a, b) do { (out).q0 = (a).q0 - (b).q0; (out).q1 = (a).q1 - (b).q1; \
        (out).q2 = (a).q2 - (b).q2; (out).q3 = (a).q3 - (b).q3; } while (0)
#  define SQ_MUL_X(out, a, b) do { (out).q0 = (a).q0 * (b).q0; (out).q1 = (a).q1 * (b).q1; \
        (out).q2 = (a).q2 * (b).q2; (out).q3 = (a).q3 * (b).q3; } while (0)
#  ifndef SQ_SWEEP_X
#    define SQ_SWEEP_X 4
#  endif
#  if SQ_SWEEP_X != 1 && SQ_SWEEP_X != 2 && SQ_SWEEP_X != 4
#    error "SQ_SWEEP_X must divide the block of 4 rows"
#  endif
#  define SQ_BASE_REPR X

#else  /* ---- representation P: portable, a struct of 8 doubles (other compilers) ---- */
typedef struct { double l[8]; } sq_v8_P;
#  define SQ_LOAD_P(dst, p) memcpy((dst).l, (p), sizeof(sq_v8_P))
#  define SQ_STORE_P(p, src) memcpy((p), (src).l, sizeof(sq_v8_P))
#  define SQ_ZERO_P(v) memset(&(v), 0, sizeof(sq_v8_P))
#  define SQ_LOADF_P(dst, p) do { int _k; for (_k = 0; _k < 8; _k++) (dst).l[_k] = (double) (p)[_k]; } while (0)
static inline double sq_hsum_P(sq_v8_P v)
{
    return ((v.l[0] + v.l[1]) + (v.l[2] + v.l[3])) + ((v.l[4] + v.l[5]) + (v.l[6] + v.l[7]));
}
#  define SQ_LANES_(op) do { int _k; for (_k = 0; _k < 8; _k++) { op; } } while (0)
#  define SQ_MADD_P(acc, a, b) SQ_LANES_((acc).l[_k] += (a).l[_k] * (b).l[_k])
#  define SQ_MADDS_P(acc, s, x) SQ_LANES_((acc).l[_k] += (x).l[_k] * (s))
#  define SQ_AXPYS_P(out, y, s, x) SQ_LANES_((out).l[_k] = (y).l[_k] + (x).l[_k] * (s))
#  define SQ_ADD_P(out, a, b) SQ_LANES_((out).l[_k] = (a).l[_k] + (b).l[_k])
#  define SQ_SUB_P(out, a, b) SQ_LANES_((out).l[_k] = (a).l[_k] - (b).l[_k])
#  define SQ_MUL_P(out, a, b) SQ_LANES_((out).l[_k] = (a).l[_k] * (b).l[_k])
#  define SQ_SWEEP_P 4
#  define SQ_BASE_REPR P
#endif

/* ---- pieces shared by every variant ---- */

/* The bodies of the dot products and axpys, for float64 and float32 (widened to double lane by
 * lane) first operands: LOAD_A is SQ_LOAD or SQ_LOADF. */
#define SQ_DOT_BODY(LOAD_A, LOAD_B)                                                             \
    sq_v8 s0, s1, x, y;                                                                         \
    ptrdiff_t j = 0;                                                                            \
    double t = 0.0;                                                                             \
    SQ_ZERO(s0);                                                                                \
    SQ_ZERO(s1);                                                                                \
    for (; j + 16 <= n; j += 16) {                                                              \
        LOAD_A(x, a + j); LOAD_B(y, b + j); SQ_MADD(s0, x, y);                                  \
        LOAD_A(x, a + j + 8); LOAD_B(y, b + j + 8); SQ_MADD(s1, x, y);                          \
    }                                                                                           \
    if (j + 8 <= n) {                                                                           \
        LOAD_A(x, a + j); LOAD_B(y, b + j); SQ_MADD(s0, x, y);                                  \
        j += 8;                                                                                 \
    }                                                                                           \
    for (; j < n; j++)                                                                          \
        t += (double) a[j] * b[j];                                                              \
    SQ_ADD(s0, s0, s1);                                                                         \
    return sq_hsum(s0) + t;

#define SQ_AXPY_BODY(LOAD_A)                                                                    \
    sq_v8 xv, yv;                                                                               \
    ptrdiff_t j = 0;                                                                            \
    for (; j + 8 <= n; j += 8) {                                                                \
        LOAD_A(xv, x + j); SQ_LOAD(yv, y + j); SQ_AXPYS(yv, yv, alpha, xv); SQ_STORE(y + j, yv); \
    }                                                                                           \
    for (; j < n; j++)                                                                          \
        y[j] += alpha * (double) x[j];


/* sq_mask_tab + t: 8 lanes, the last t of them 1, the others 0 (1 <= t <= 8) */
static const double sq_mask_tab[16] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1};

#define SQ_MAX_MERGE 16
#define SQ_PANEL 8

/* ---- the variants ---- */

/* baseline (every x86-64 CPU; the only variant off x86-64 Linux GCC) */
#define SQ_VARIANT(name) SQ_CAT(name, _base)
#define SQ_REPR SQ_BASE_REPR
#include "_simd_kernels.h"
#undef SQ_VARIANT
#undef SQ_REPR

#if defined(SQ_MULTI_ISA)
#pragma GCC push_options
#pragma GCC target("avx2")
#define SQ_VARIANT(name) SQ_CAT(name, _avx2)
#define SQ_REPR S
#include "_simd_kernels.h"
#undef SQ_VARIANT
#undef SQ_REPR
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx512f")
#define SQ_VARIANT(name) SQ_CAT(name, _avx512)
#define SQ_REPR W
#include "_simd_kernels.h"
#undef SQ_VARIANT
#undef SQ_REPR
#pragma GCC pop_options

/* 0 baseline, 1 AVX2, 2 AVX-512F: the best the CPU supports (as libgcc's __builtin_cpu_supports
 * reports it), capped by SQNOPT_SIMD; set when the module loads. */
static int sq_isa_level = 0;
__attribute__((constructor)) SQ_UNUSED static void sq_isa_init(void)
{
    const char* cap = getenv("SQNOPT_SIMD");
    int level = 0;
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        level = 2;
    else if (__builtin_cpu_supports("avx2"))
        level = 1;
    if (cap != NULL) {
        if (strcmp(cap, "baseline") == 0)
            level = 0;
        else if (strcmp(cap, "avx2") == 0 && level > 1)
            level = 1;
    }
    sq_isa_level = level;
}
/* the call of the variant in use, an expression of the kernel's type (void included) */
#  define SQ_CALL(name, args) (sq_isa_level == 2 ? SQ_CAT(name, _avx512) args \
                               : sq_isa_level == 1 ? SQ_CAT(name, _avx2) args \
                               : SQ_CAT(name, _base) args)
#else
static const int sq_isa_level = 0;
#  define SQ_CALL(name, args) SQ_CAT(name, _base) args
#endif

/* The variant in use: 0 baseline, 1 AVX2, 2 AVX-512F. */
SQ_UNUSED static int sq_simd_level(void)
{
    return sq_isa_level;
}

/* ---- the entry points (declared in _vec.pxd, the vector layer every kernel cimports) ---- */
SQ_UNUSED static inline double sq_dot(const double* a, const double* b, ptrdiff_t n)
{
    return SQ_CALL(sq_dot, (a, b, n));
}

SQ_UNUSED static inline double sq_dot_f32(const float* a, const double* b, ptrdiff_t n)
{
    return SQ_CALL(sq_dot_f32, (a, b, n));
}

SQ_UNUSED static inline double sq_sqnorm_f32(const float* a, ptrdiff_t n)
{
    return SQ_CALL(sq_sqnorm_f32, (a, n));
}

SQ_UNUSED static inline void sq_axpy(double alpha, const double* x, double* y, ptrdiff_t n)
{
    SQ_CALL(sq_axpy, (alpha, x, y, n));
}

SQ_UNUSED static inline void sq_axpy_f32(double alpha, const float* x, double* y, ptrdiff_t n)
{
    SQ_CALL(sq_axpy_f32, (alpha, x, y, n));
}

SQ_UNUSED static inline double sq_axpy_sqnorm(double alpha, const double* x, double* y,
                                              ptrdiff_t n)
{
    return SQ_CALL(sq_axpy_sqnorm, (alpha, x, y, n));
}

SQ_UNUSED static inline int sq_step_allfinite(const double* w, double eps, const double* d,
                                              double* out, ptrdiff_t n)
{
    return SQ_CALL(sq_step_allfinite, (w, eps, d, out, n));
}

SQ_UNUSED static inline double sq_axpy_dot(double alpha, const double* x, double* q,
                                           const double* y, ptrdiff_t n)
{
    return SQ_CALL(sq_axpy_dot, (alpha, x, q, y, n));
}

SQ_UNUSED static inline void sq_two_loop(ptrdiff_t n, const double* V, const double* R,
                                         ptrdiff_t ld, ptrdiff_t tau, ptrdiff_t m, ptrdiff_t head,
                                         const double* rho, double* alpha, double gamma,
                                         const double* g, double* out)
{
    SQ_CALL(sq_two_loop, (n, V, R, ld, tau, m, head, rho, alpha, gamma, g, out));
}

SQ_UNUSED static inline void sq_symv2_merge_upper(ptrdiff_t n, double* M, ptrdiff_t ld,
                                                  ptrdiff_t m, const double* A, const double* B,
                                                  ptrdiff_t lda, const double* x1,
                                                  const double* x2, double* y1, double* y2)
{
    SQ_CALL(sq_symv2_merge_upper, (n, M, ld, m, A, B, lda, x1, x2, y1, y2));
}

SQ_UNUSED static inline void sq_syr2_shift_copy_upper(ptrdiff_t n, double* B, ptrdiff_t ld,
                                                      double alpha, const double* x, double beta,
                                                      const double* y, double delta, double* F)
{
    SQ_CALL(sq_syr2_shift_copy_upper, (n, B, ld, alpha, x, beta, y, delta, F));
}

SQ_UNUSED static inline int sq_potrf_upper(ptrdiff_t n, double* F, ptrdiff_t ld)
{
    return SQ_CALL(sq_potrf_upper, (n, F, ld));
}

SQ_UNUSED static inline void sq_potrs_upper(ptrdiff_t n, const double* U, ptrdiff_t ld, double* b)
{
    SQ_CALL(sq_potrs_upper, (n, U, ld, b));
}
#endif  /* SQNOPT_SIMD_H */
