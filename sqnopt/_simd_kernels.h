/* The vector kernels of sqnopt, one instruction-set variant (see _simd.h, which includes this
 * file once per variant after defining SQ_VARIANT(name), the name suffix, and SQ_REPR, the
 * representation of the 8-lane vector). No include guard, on purpose. */

#define sq_v8 SQ_CAT(sq_v8_, SQ_REPR)
#define sq_hsum SQ_CAT(sq_hsum_, SQ_REPR)
#define sq_dot SQ_VARIANT(sq_dot)
#define sq_dot_f32 SQ_VARIANT(sq_dot_f32)
#define sq_sqnorm_f32 SQ_VARIANT(sq_sqnorm_f32)
#define sq_axpy SQ_VARIANT(sq_axpy)
#define sq_axpy_f32 SQ_VARIANT(sq_axpy_f32)
#define sq_axpy_sqnorm SQ_VARIANT(sq_axpy_sqnorm)
#define sq_step_allfinite SQ_VARIANT(sq_step_allfinite)
#define sq_axpy_dot SQ_VARIANT(sq_axpy_dot)
#define sq_two_loop SQ_VARIANT(sq_two_loop)
#define sq_merge_entry SQ_VARIANT(sq_merge_entry)
#define sq_symv2_merge_upper SQ_VARIANT(sq_symv2_merge_upper)
#define sq_syr2_shift_copy_upper SQ_VARIANT(sq_syr2_shift_copy_upper)
#define sq_panel_combo SQ_VARIANT(sq_panel_combo)
#define sq_potrf_upper SQ_VARIANT(sq_potrf_upper)
#define sq_potrs_upper SQ_VARIANT(sq_potrs_upper)
#define SQ_LOAD SQ_CAT(SQ_LOAD_, SQ_REPR)
#define SQ_STORE SQ_CAT(SQ_STORE_, SQ_REPR)
#define SQ_ZERO SQ_CAT(SQ_ZERO_, SQ_REPR)
#define SQ_LOADF SQ_CAT(SQ_LOADF_, SQ_REPR)
#define SQ_MADD SQ_CAT(SQ_MADD_, SQ_REPR)
#define SQ_MADDS SQ_CAT(SQ_MADDS_, SQ_REPR)
#define SQ_AXPYS SQ_CAT(SQ_AXPYS_, SQ_REPR)
#define SQ_ADD SQ_CAT(SQ_ADD_, SQ_REPR)
#define SQ_SUB SQ_CAT(SQ_SUB_, SQ_REPR)
#define SQ_MUL SQ_CAT(SQ_MUL_, SQ_REPR)
#define SQ_SWEEP SQ_CAT(SQ_SWEEP_, SQ_REPR)

/* sum_j a[j] b[j] */
SQ_UNUSED
static double sq_dot(const double* a, const double* b, ptrdiff_t n)
{
    SQ_DOT_BODY(SQ_LOAD, SQ_LOAD)
}

/* sum_j a[j] b[j] with a float32 a (the order of sq_dot) */
SQ_UNUSED
static double sq_dot_f32(const float* a, const double* b, ptrdiff_t n)
{
    SQ_DOT_BODY(SQ_LOADF, SQ_LOAD)
}

/* sum_j a[j]^2 of a float32 a, accumulated in float64 (the order of sq_dot) */
SQ_UNUSED
static double sq_sqnorm_f32(const float* a, ptrdiff_t n)
{
    const float* b = a;
    SQ_DOT_BODY(SQ_LOADF, SQ_LOADF)
}

/* y += alpha x */
SQ_UNUSED
static void sq_axpy(double alpha, const double* x, double* y, ptrdiff_t n)
{
    SQ_AXPY_BODY(SQ_LOAD)
}

/* y += alpha x, and return sum_j x[j]^2 in the order of sq_dot(x, x, n) (bit-identical to it),
 * in one pass: the regulariser's gradient and value of the objectives (sqnopt/objectives) */
SQ_UNUSED
static double sq_axpy_sqnorm(double alpha, const double* x, double* y, ptrdiff_t n)
{
    sq_v8 s0, s1, xv, yv;
    ptrdiff_t j = 0;
    double t = 0.0;
    SQ_ZERO(s0);
    SQ_ZERO(s1);
    for (; j + 16 <= n; j += 16) {
        SQ_LOAD(xv, x + j); SQ_LOAD(yv, y + j); SQ_AXPYS(yv, yv, alpha, xv); SQ_STORE(y + j, yv);
        SQ_MADD(s0, xv, xv);
        SQ_LOAD(xv, x + j + 8); SQ_LOAD(yv, y + j + 8); SQ_AXPYS(yv, yv, alpha, xv);
        SQ_STORE(y + j + 8, yv);
        SQ_MADD(s1, xv, xv);
    }
    if (j + 8 <= n) {
        SQ_LOAD(xv, x + j); SQ_LOAD(yv, y + j); SQ_AXPYS(yv, yv, alpha, xv); SQ_STORE(y + j, yv);
        SQ_MADD(s0, xv, xv);
        j += 8;
    }
    for (; j < n; j++) {
        y[j] += alpha * x[j];
        t += x[j] * x[j];
    }
    SQ_ADD(s0, s0, s1);
    return sq_hsum(s0) + t;
}

/* y += alpha x with a float32 x */
SQ_UNUSED
static void sq_axpy_f32(double alpha, const float* x, double* y, ptrdiff_t n)
{
    SQ_AXPY_BODY(SQ_LOADF)
}

/* out = w - eps d; returns 1 iff every entry of out is finite (x - x is 0 for finite x and NaN
 * for NaN or +-inf, and a NaN survives every later add), in one pass. The vector lanes form
 * w + d (-eps), which equals w - eps d exactly (negation is exact). */
SQ_UNUSED
static int sq_step_allfinite(const double* w, double eps, const double* d, double* out,
                             ptrdiff_t n)
{
    sq_v8 s0, s1, wv, dv, x;
    ptrdiff_t j = 0;
    double t = 0.0, xj, neps = -eps;
    SQ_ZERO(s0);
    SQ_ZERO(s1);
    for (; j + 16 <= n; j += 16) {
        SQ_LOAD(wv, w + j); SQ_LOAD(dv, d + j); SQ_AXPYS(x, wv, neps, dv);
        SQ_STORE(out + j, x); SQ_SUB(x, x, x); SQ_ADD(s0, s0, x);
        SQ_LOAD(wv, w + j + 8); SQ_LOAD(dv, d + j + 8); SQ_AXPYS(x, wv, neps, dv);
        SQ_STORE(out + j + 8, x); SQ_SUB(x, x, x); SQ_ADD(s1, s1, x);
    }
    for (; j < n; j++) {
        xj = w[j] - eps * d[j];
        out[j] = xj;
        t += xj - xj;
    }
    SQ_ADD(s0, s0, s1);
    return (sq_hsum(s0) + t) == 0.0;
}

/* q += alpha x, then return y . q (the updated q), in one pass */
SQ_UNUSED
static double sq_axpy_dot(double alpha, const double* x, double* q, const double* y, ptrdiff_t n)
{
    sq_v8 s0, s1, xv, qv, yv;
    ptrdiff_t j = 0;
    double t = 0.0, qj;
    SQ_ZERO(s0);
    SQ_ZERO(s1);
    for (; j + 16 <= n; j += 16) {
        SQ_LOAD(xv, x + j); SQ_LOAD(qv, q + j); SQ_AXPYS(qv, qv, alpha, xv); SQ_STORE(q + j, qv);
        SQ_LOAD(yv, y + j); SQ_MADD(s0, yv, qv);
        SQ_LOAD(xv, x + j + 8); SQ_LOAD(qv, q + j + 8); SQ_AXPYS(qv, qv, alpha, xv);
        SQ_STORE(q + j + 8, qv);
        SQ_LOAD(yv, y + j + 8); SQ_MADD(s1, yv, qv);
    }
    if (j + 8 <= n) {
        SQ_LOAD(xv, x + j); SQ_LOAD(qv, q + j); SQ_AXPYS(qv, qv, alpha, xv); SQ_STORE(q + j, qv);
        SQ_LOAD(yv, y + j); SQ_MADD(s0, yv, qv);
        j += 8;
    }
    for (; j < n; j++) {
        qj = q[j] + alpha * x[j];
        q[j] = qj;
        t += y[j] * qj;
    }
    SQ_ADD(s0, s0, s1);
    return sq_hsum(s0) + t;
}

/* The L-BFGS two-loop recursion (Nocedal & Wright 2006, Algorithm 7.4) over a ring buffer:
 * out = H g with the m most recent pairs (v_u, r_u) stored in the rows of V and R (row stride
 * ld), the newest in row `head`, rho[u] = 1 / v_u'r_u, H_0 = gamma I; alpha[] is scratch of
 * length tau. Each axpy is fused with the dot product that follows it (sq_axpy_dot), so the
 * recursion makes 2m + 2 passes over n-vectors. One call instead of 2m + 2 (the per-call
 * cost matters at n ~ 100). */
SQ_UNUSED
static void sq_two_loop(ptrdiff_t n, const double* V, const double* R, ptrdiff_t ld,
                        ptrdiff_t tau, ptrdiff_t m, ptrdiff_t head, const double* rho,
                        double* alpha, double gamma, const double* g, double* out)
{
    ptrdiff_t k, j, idx, nxt;
    double a, d;
    memcpy(out, g, (size_t) n * sizeof(double));
    if (m > 0) {
        idx = head;                                   /* newest -> oldest */
        d = sq_dot(V + idx * ld, out, n);
        for (k = 0; k < m; k++) {
            a = rho[idx] * d;
            alpha[idx] = a;
            nxt = idx > 0 ? idx - 1 : tau - 1;
            if (k + 1 < m)
                d = sq_axpy_dot(-a, R + idx * ld, out, V + nxt * ld, n);
            else
                sq_axpy(-a, R + idx * ld, out, n);
            idx = nxt;
        }
    }
    for (j = 0; j < n; j++)
        out[j] *= gamma;
    if (m == 0)
        return;
    idx = head - m + 1;                               /* oldest -> newest */
    if (idx < 0)
        idx += tau;
    d = sq_dot(R + idx * ld, out, n);
    for (k = 0; k < m; k++) {
        a = alpha[idx] - rho[idx] * d;
        nxt = idx < tau - 1 ? idx + 1 : 0;
        if (k + 1 < m)
            d = sq_axpy_dot(a, V + idx * ld, out, R + nxt * ld, n);
        else
            sq_axpy(a, V + idx * ld, out, n);
        idx = nxt;
    }
}

/* Symmetric low-rank terms are merged into S and two products are formed, in one pass over
 * the upper triangle (j >= i, row-major, row stride ld; the strictly lower part of M is never
 * read or written):
 *
 *     S <- S + sum_{k < m} (a_k b_k' + b_k a_k'),      y1 = S x1,   y2 = S x2
 *
 * with a_k = A + k lda, b_k = B + k lda, 0 <= m <= SQ_MAX_MERGE (m = 0: a read-only pass).
 * Entry (i, j) becomes  S_ij + (sum_k a_k[i] b_k[j] + sum_k b_k[i] a_k[j])  (each sum in order
 * k = 0, 1, ..., starting from 0).
 *
 * Rows are processed in blocks of four: each 8-wide column chunk of the pending vectors, of x
 * and of y is loaded once per block and serves four rows (the merged chunk stays in a register
 * for the products). A row contributes its off-diagonal part to y[i] by a dot product and to
 * y[j > i] by an axpy (rows of a block in order). x and y must not overlap M, A, B or each
 * other (x1 == x2 is allowed). */
/* One entry of the scalar edges of sq_symv2_merge_upper: *hp += sum_k (A_ki B_kj + B_ki A_kj)
 * (stored back; nothing to do when m = 0); returns the merged entry. */
static inline double sq_merge_entry(double* hp, ptrdiff_t m, const double* A, const double* B,
                                    ptrdiff_t lda, ptrdiff_t i, ptrdiff_t j)
{
    double p0 = 0.0, p1 = 0.0;
    ptrdiff_t k;
    if (m <= 0)
        return *hp;
    for (k = 0; k < m; k++) {
        p0 += A[k * lda + i] * B[k * lda + j];
        p1 += B[k * lda + i] * A[k * lda + j];
    }
    *hp = *hp + (p0 + p1);
    return *hp;
}

SQ_UNUSED
static void sq_symv2_merge_upper(ptrdiff_t n, double* M, ptrdiff_t ld, ptrdiff_t m,
                                 const double* A, const double* B, ptrdiff_t lda,
                                 const double* x1, const double* x2, double* y1, double* y2)
{
    ptrdiff_t i0, nb, r, c, j, k;
    double ca[SQ_MAX_MERGE][4], cb[SQ_MAX_MERGE][4];
    if (m > SQ_MAX_MERGE)
        m = SQ_MAX_MERGE;
    memset(y1, 0, (size_t) n * sizeof(double));
    memset(y2, 0, (size_t) n * sizeof(double));
    for (i0 = 0; i0 < n; i0 += 4) {
        double* row[4];
        double t1[4] = {0.0, 0.0, 0.0, 0.0}, t2[4] = {0.0, 0.0, 0.0, 0.0};
        double av1[4], av2[4];
        sq_v8 s1[4], s2[4];
        nb = n - i0 < 4 ? n - i0 : 4;
        for (r = 0; r < 4; r++) {
            row[r] = M + (i0 + (r < nb ? r : 0)) * ld;
            SQ_ZERO(s1[r]);
            SQ_ZERO(s2[r]);
            av1[r] = r < nb ? x1[i0 + r] : 0.0;
            av2[r] = r < nb ? x2[i0 + r] : 0.0;
            for (k = 0; k < m; k++) {
                ca[k][r] = r < nb ? A[k * lda + i0 + r] : 0.0;
                cb[k][r] = r < nb ? B[k * lda + i0 + r] : 0.0;
            }
        }
        /* the diagonal block (scalar): merge, then products */
        for (r = 0; r < nb; r++) {
            const ptrdiff_t i = i0 + r;
            for (c = r; c < nb; c++) {
                const ptrdiff_t jj = i0 + c;
                const double h = sq_merge_entry(&row[r][jj], m, A, B, lda, i, jj);
                if (c == r) {
                    y1[i] += h * x1[i];
                    y2[i] += h * x2[i];
                } else {
                    t1[r] += h * x1[jj];
                    t2[r] += h * x2[jj];
                    y1[jj] += x1[i] * h;
                    y2[jj] += x2[i] * h;
                }
            }
        }
        /* columns to the right of the block: 8-wide chunks, in sweeps of SQ_SWEEP rows (four
         * with one 64-byte register per vector; two with the AVX2 halves, whose 16 registers do
         * not hold four rows' accumulators). y[j] takes the rows' terms in row order either
         * way, so the sweep width does not change a bit. */
        j = i0 + nb;
        if (nb == 4) {
            ptrdiff_t j0 = j, r0, q;
            for (r0 = 0; r0 < 4; r0 += SQ_SWEEP) {
                for (j = j0; j + 8 <= n; j += 8) {
                    sq_v8 h[SQ_SWEEP], xv1, xv2, yv1, yv2, bv, av;
                    for (q = 0; q < SQ_SWEEP; q++)
                        SQ_LOAD(h[q], row[r0 + q] + j);
                    if (m > 0) {
                        sq_v8 p0[SQ_SWEEP], p1[SQ_SWEEP];
                        for (q = 0; q < SQ_SWEEP; q++) {
                            SQ_ZERO(p0[q]);
                            SQ_ZERO(p1[q]);
                        }
                        for (k = 0; k < m; k++) {
                            SQ_LOAD(bv, B + k * lda + j);
                            SQ_LOAD(av, A + k * lda + j);
                            for (q = 0; q < SQ_SWEEP; q++) {
                                SQ_MADDS(p0[q], ca[k][r0 + q], bv);
                                SQ_MADDS(p1[q], cb[k][r0 + q], av);
                            }
                        }
                        for (q = 0; q < SQ_SWEEP; q++) {
                            SQ_ADD(p0[q], p0[q], p1[q]);
                            SQ_ADD(h[q], h[q], p0[q]);
                            SQ_STORE(row[r0 + q] + j, h[q]);
                        }
                    }
                    SQ_LOAD(xv1, x1 + j);
                    SQ_LOAD(xv2, x2 + j);
                    SQ_LOAD(yv1, y1 + j);
                    SQ_LOAD(yv2, y2 + j);
                    for (q = 0; q < SQ_SWEEP; q++) {
                        SQ_MADD(s1[r0 + q], h[q], xv1);
                        SQ_MADD(s2[r0 + q], h[q], xv2);
                        SQ_AXPYS(yv1, yv1, av1[r0 + q], h[q]);
                        SQ_AXPYS(yv2, yv2, av2[r0 + q], h[q]);
                    }
                    SQ_STORE(y1 + j, yv1);
                    SQ_STORE(y2 + j, yv2);
                }
            }
        }
        /* remaining columns (scalar), rows in order */
        for (; j < n; j++) {
            for (r = 0; r < nb; r++) {
                const ptrdiff_t i = i0 + r;
                const double h = sq_merge_entry(&row[r][j], m, A, B, lda, i, j);
                t1[r] += h * x1[j];
                t2[r] += h * x2[j];
                y1[j] += x1[i] * h;
                y2[j] += x2[i] * h;
            }
        }
        for (r = 0; r < nb; r++) {
            y1[i0 + r] += sq_hsum(s1[r]) + t1[r];
            y2[i0 + r] += sq_hsum(s2[r]) + t2[r];
        }
    }
}

/* RES update of the stored B (upper triangle, row-major, stride ld) and a copy for the factor:
 *     B_ij <- B_ij + alpha x_i x_j + beta y_i y_j  (+ delta on the diagonal),   F_ij <- B_ij
 * for j >= i (entry: (B_ij + alpha x_i x_j) + beta y_i y_j, then + delta). One pass. */
SQ_UNUSED
static void sq_syr2_shift_copy_upper(ptrdiff_t n, double* B, ptrdiff_t ld, double alpha,
                                     const double* x, double beta, const double* y,
                                     double delta, double* F)
{
    ptrdiff_t i, j;
    for (i = 0; i < n; i++) {
        double* row = B + i * ld;
        double* frow = F + i * ld;
        const double ax = alpha * x[i], by = beta * y[i];
        sq_v8 hv, xv, yv;
        double h = (row[i] + ax * x[i]) + by * y[i];
        h = h + delta;
        row[i] = h;
        frow[i] = h;
        j = i + 1;
        for (; j + 8 <= n; j += 8) {
            SQ_LOAD(hv, row + j);
            SQ_LOAD(xv, x + j); SQ_AXPYS(hv, hv, ax, xv);
            SQ_LOAD(yv, y + j); SQ_AXPYS(hv, hv, by, yv);
            SQ_STORE(row + j, hv);
            SQ_STORE(frow + j, hv);
        }
        for (; j < n; j++) {
            h = (row[j] + ax * x[j]) + by * y[j];
            row[j] = h;
            frow[j] = h;
        }
    }
}

/* In-place Cholesky factorisation S = U'U of the symmetric positive definite matrix whose upper
 * triangle (j >= i, row-major, stride ld) is stored in F; U overwrites that triangle (the
 * layout of LAPACK dpotrf with uplo = 'L' on the same memory read in column-major order, so
 * dpotrs can use it). Right-looking, in panels of eight rows: the panel is factored (row by
 * row, within the panel), then the trailing triangle gets the rank-8 update
 *     F_ij <- F_ij - (sum_{r even} U_ri U_rj + sum_{r odd} U_ri U_rj)    (r = 0..7, in order)
 * one 8-wide chunk at a time. For matrices that fit in the per-core cache (the caller picks
 * LAPACK beyond). Returns 0, or k + 1 if the k-th pivot is not positive (or NaN). */
/* *out = sum_r c[r] P[r][j : j + 8] over the SQ_PANEL panel rows, even and odd rows in two
 * partial sums added at the end (the trailing update of sq_potrf_upper; written through a
 * pointer so that no 64-byte vector crosses a call boundary) */
static inline void sq_panel_combo(sq_v8* out, const double* const* P, const double* c,
                                  ptrdiff_t j)
{
    sq_v8 pv, acc0, acc1;
    int r;
    SQ_ZERO(acc0);
    SQ_ZERO(acc1);
    for (r = 0; r < SQ_PANEL; r += 2) {
        SQ_LOAD(pv, P[r] + j);
        SQ_MADDS(acc0, c[r], pv);
        SQ_LOAD(pv, P[r + 1] + j);
        SQ_MADDS(acc1, c[r + 1], pv);
    }
    SQ_ADD(*out, acc0, acc1);
}
SQ_UNUSED
static int sq_potrf_upper(ptrdiff_t n, double* F, ptrdiff_t ld)
{
    ptrdiff_t i0, nb, r, q, i, j;
    for (i0 = 0; i0 < n; i0 += SQ_PANEL) {
        const double* P[SQ_PANEL];
        nb = n - i0 < SQ_PANEL ? n - i0 : SQ_PANEL;
        /* factor the panel rows i0 .. i0 + nb - 1 (all columns j >= row) */
        for (r = 0; r < nb; r++) {
            const ptrdiff_t p = i0 + r;
            double* prow = F + p * ld;
            double d = prow[p], inv;
            if (!(d > 0.0))      /* also catches NaN */
                return (int) (p + 1);
            d = sqrt(d);
            prow[p] = d;
            inv = 1.0 / d;
            for (j = p + 1; j < n; j++)
                prow[j] *= inv;
            for (q = r + 1; q < nb; q++) {          /* later panel rows */
                const ptrdiff_t pq = i0 + q;
                double* qrow = F + pq * ld;
                const double c = prow[pq];
                for (j = pq; j < n; j++)
                    qrow[j] = qrow[j] - c * prow[j];
            }
        }
        if (nb < SQ_PANEL)
            break;
        for (r = 0; r < SQ_PANEL; r++)
            P[r] = F + (i0 + r) * ld;
        /* trailing rows i >= i0 + 8: rank-8 update of F[i, i:] */
        for (i = i0 + SQ_PANEL; i < n; i++) {
            double* row = F + i * ld;
            double c[SQ_PANEL];
            sq_v8 hv, acc0;
            for (r = 0; r < SQ_PANEL; r++)
                c[r] = P[r][i];
            j = i;
            for (; j + 8 <= n; j += 8) {
                sq_panel_combo(&acc0, P, c, j);
                SQ_LOAD(hv, row + j);
                SQ_SUB(hv, hv, acc0);
                SQ_STORE(row + j, hv);
            }
            if (j < n) {
                /* the last n - j < 8 columns: one chunk ending at column n - 1 (n >= 16 here),
                 * lanes before j multiplied by 0 -- they hold columns already done or the
                 * (unused) strictly lower part of the row, which are rewritten unchanged; the
                 * panel rows are finite there (their upper part) */
                const ptrdiff_t j0 = n - 8;
                sq_v8 mv;
                SQ_LOAD(mv, sq_mask_tab + (n - j));
                sq_panel_combo(&acc0, P, c, j0);
                SQ_MUL(acc0, acc0, mv);
                SQ_LOAD(hv, row + j0);
                SQ_SUB(hv, hv, acc0);
                SQ_STORE(row + j0, hv);
            }
        }
    }
    return 0;
}

/* Solve U'U x = b in place (x overwrites b) with the factor of sq_potrf_upper / dpotrf. */
SQ_UNUSED
static void sq_potrs_upper(ptrdiff_t n, const double* U, ptrdiff_t ld, double* b)
{
    ptrdiff_t k;
    for (k = 0; k < n; k++) {                 /* U' y = b: column sweep */
        const double* urow = U + k * ld;
        const double yk = b[k] / urow[k];
        b[k] = yk;
        sq_axpy(-yk, urow + k + 1, b + k + 1, n - k - 1);
    }
    for (k = n - 1; k >= 0; k--) {            /* U x = y: row dot products */
        const double* urow = U + k * ld;
        b[k] = (b[k] - sq_dot(urow + k + 1, b + k + 1, n - k - 1)) / urow[k];
    }
}

#undef sq_v8
#undef sq_hsum
#undef sq_dot
#undef sq_dot_f32
#undef sq_sqnorm_f32
#undef sq_axpy
#undef sq_axpy_f32
#undef sq_axpy_sqnorm
#undef sq_step_allfinite
#undef sq_axpy_dot
#undef sq_two_loop
#undef sq_merge_entry
#undef sq_symv2_merge_upper
#undef sq_syr2_shift_copy_upper
#undef sq_panel_combo
#undef sq_potrf_upper
#undef sq_potrs_upper
#undef SQ_LOAD
#undef SQ_STORE
#undef SQ_ZERO
#undef SQ_LOADF
#undef SQ_MADD
#undef SQ_MADDS
#undef SQ_AXPYS
#undef SQ_ADD
#undef SQ_SUB
#undef SQ_MUL
#undef SQ_SWEEP
