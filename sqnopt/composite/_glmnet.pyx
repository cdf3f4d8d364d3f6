# cython: language_level=3
r"""Proximal Newton with coordinate descent (newGLMNET): the compiled loop.

Yuan, Ho & Lin, *An improved GLMNET for L1-regularized logistic regression*, JMLR 13 (2012),
Algorithm 3 (the method of LIBLINEAR's L1-regularised logistic regression), for
``F(w) = f(w) + l1 ||w_reg||_1`` with ``f(w) = (1/N) sum_i c_i loss_i(s_i) + (lam/2)||w_reg||^2``
a loss of one linear score ``s_i = x_i . w + b`` per sample (margin and regression losses).

Outer iteration at ``w`` (scores ``s = Xw + b`` kept):

1. ``g = grad f(w)`` and the per-sample curvature ``D_i = c_i loss_i''(s_i) / N`` from the
   scores (``cy_scores_loss``, ``cy_score_hessian_factor``), column by column on a CSC copy of
   ``X`` (the intercept a column of ones);
2. the quadratic model ``q(d) = g'd + (1/2) d'Hd + l1 ||w_reg + d_reg||_1`` with the exact
   Hessian ``H = X'DX + lam I_reg + nu I`` (``nu = 1e-12`` keeps it positive definite), minimised
   approximately by coordinate descent on ``d`` (each sweep over the active coordinates in a
   random order from a fixed-seed xorshift generator) with ``Xd`` kept: coordinate ``j`` with
   ``G = g_j + (Hd)_j``, ``u = w_j + d_j`` moves by the exact 1-D minimiser
   ``z = -(G + l1)/H_jj`` if ``G + l1 <= H_jj u``, ``-(G - l1)/H_jj`` if ``G - l1 >= H_jj u``,
   else ``-u`` (the coordinate lands on an exact zero), a move limited to 10 (LIBLINEAR's
   safeguard along directions of nearly no curvature); sweeps end when the 1-norm of the
   model's minimum-norm subgradient is below ``eps_in`` times that of ``F`` at the start (at
   most ``max_inner`` sweeps), ``eps_in`` starting at ``eta`` and divided by 4 after every
   outer iteration whose model one sweep solved (the paper's Sec. 5.2 / LIBLINEAR's rule: loose
   models while far from the solution, where the exact model's minimiser is a long step along
   nearly flat directions -- collinear one-hot columns -- that the line search cuts back);
3. the shrinking of the paper (Sec. 5.1): a coordinate with ``w_j = 0`` and
   ``|g_j| < l1 - M / N`` (``M`` the previous outer iteration's largest violation) is left out
   of the sweeps, since it would stay at zero;
4. a backtracking line search on ``F`` along ``d`` (``beta = 1, 1/2, ...``) until
   ``F(w + beta d) - F(w) <= sigma beta Delta``, ``Delta = g'd + l1(||w + d||_1 - ||w||_1)``
   (``sigma = 0.01``), the trial values from the scores ``s + beta Xd`` alone (no pass over
   the rows).

Stops when the largest entry of the pseudo-gradient of ``F`` (its minimum-norm subgradient) is
at most ``tol``, after ``max_iter`` outer iterations, or when the line search can decrease ``F``
no more (working precision).
"""

from libc.math cimport fabs, isfinite
from libc.stdlib cimport free, malloc
from libc.string cimport memset

from sqnopt.objectives._base cimport ObjectiveKernel
from sqnopt.penalties._base cimport PenaltyKernel

cdef enum:
    C_GLMNET_MAX_ITER = 0
    C_GLMNET_GTOL = 1
    C_GLMNET_PRECISION = 3
    C_GLMNET_NONFINITE = 4

GLMNET_MAX_ITER = C_GLMNET_MAX_ITER
GLMNET_GTOL = C_GLMNET_GTOL
GLMNET_PRECISION = C_GLMNET_PRECISION
GLMNET_NONFINITE = C_GLMNET_NONFINITE

cdef double NU = 1e-12
cdef double SIGMA = 0.01
#: the largest move of one coordinate in one CD step (LIBLINEAR's safeguard: the exact 1-D
#: minimiser along a direction of nearly no curvature is arbitrarily far)
cdef double CLIP = 10.0
#: the seed of the sweep order's generator (fixed: the solve is deterministic)
cdef unsigned long long SEED = 0x9E3779B97F4A7C15ULL


cdef inline unsigned long long _xorshift(unsigned long long* state) noexcept nogil:
    """Marsaglia's xorshift64 (13, 7, 17): the sweep order's generator."""
    cdef unsigned long long x = state[0]
    x ^= x << 13
    x ^= x >> 7
    x ^= x << 17
    state[0] = x
    return x


cdef inline double _violation(double w, double g, double l1, bint reg) noexcept nogil:
    """|pseudo-gradient| of ``g z + l1 |z|`` at ``z = w`` (``|g|`` for an intercept)."""
    if not reg:
        return fabs(g)
    if w > 0.0:
        return fabs(g + l1)
    if w < 0.0:
        return fabs(g - l1)
    if g > l1:
        return g - l1
    if g < -l1:
        return -l1 - g
    return 0.0


def glmnet_run(ObjectiveKernel objective, PenaltyKernel penalty,
               const Py_ssize_t[::1] indptr, const Py_ssize_t[::1] indices,
               const double[::1] values, const Py_ssize_t[::1] rows, double[::1] w,
               double[::1] scores, Py_ssize_t max_iter, double tol, Py_ssize_t max_inner=1000,
               double eta=1.0, Py_ssize_t max_search=30, bint shrink=True,
               double[::1] trace=None, double[:, ::1] iterates=None):
    """Run newGLMNET from ``w`` (updated in place, with its ``scores = Xw + b``).

    ``indptr``/``indices``/``values``: ``X`` by columns (CSC, the regularised features; the
    intercept, when the layout has one, is the column of ones and is not stored); ``rows``:
    ``0..N-1``. ``trace[k]`` and ``iterates[k]`` receive ``F`` and ``w`` after outer iteration
    ``k`` while they have room. Returns ``(n_iter, status, F, max |pg|, sweeps)``.
    """
    cdef Py_ssize_t n = objective.n_params, N = objective.data.n_samples
    cdef Py_ssize_t nf = penalty.n_reg
    cdef bint intercept = n == nf + 1
    if penalty.n_params != n or w.shape[0] != n or objective.n_blocks != 1:
        raise ValueError("newGLMNET needs one parameter block shared by objective, penalty, w")
    if not (objective.n_scores == 1 and objective.score_losses and objective.score_hessian_factor):
        raise ValueError("newGLMNET needs a loss of one linear score with second derivatives "
                         "(score_losses and score_hessian_factor)")
    if n != nf and not intercept:
        raise ValueError("inconsistent layout")
    if indptr.shape[0] != nf + 1 or indices.shape[0] != values.shape[0] or \
            rows.shape[0] != N or scores.shape[0] != N:
        raise ValueError("the columns, rows and scores must match the objective's data")
    if indptr[nf] != values.shape[0]:
        raise ValueError("indptr does not end at the number of stored values")
    if max_iter < 0 or max_inner < 1 or max_search < 1 or not (tol >= 0.0) or not (eta > 0.0):
        raise ValueError("max_iter >= 0, max_inner >= 1, max_search >= 1, tol >= 0, eta > 0")
    cdef Py_ssize_t n_trace = 0 if trace is None else trace.shape[0]
    cdef Py_ssize_t n_iterates = 0
    if iterates is not None:
        if iterates.shape[1] != n:
            raise ValueError("iterates must have n_params columns")
        n_iterates = iterates.shape[0]
    cdef double* buf = <double*> malloc((4 * max(n, 1) + 4 * max(N, 1)) * sizeof(double))
    cdef char* active = <char*> malloc(max(n, 1))
    cdef Py_ssize_t* order = <Py_ssize_t*> malloc(max(n, 1) * sizeof(Py_ssize_t))
    if buf == NULL or active == NULL or order == NULL:
        free(buf)
        free(active)
        free(order)
        raise MemoryError()
    cdef double* g = buf
    cdef double* hd = buf + n          # H_jj
    cdef double* d = buf + 2 * n
    cdef double* wt = buf + 3 * n      # trial w
    cdef double* coef = buf + 4 * n    # d loss / d score (weighted), N
    cdef double* D = coef + N          # curvature per sample, N
    cdef double* xd = D + N            # X d, N
    cdef double* st = xd + N           # trial scores, N
    cdef double* wp = &w[0]
    cdef double* sp = &scores[0]
    cdef const Py_ssize_t* ip = &indptr[0]
    cdef const Py_ssize_t* ix = &indices[0] if indices.shape[0] else NULL
    cdef const double* xv = &values[0] if values.shape[0] else NULL
    cdef const Py_ssize_t* rp = &rows[0]
    cdef double lam = objective.lam, l1 = penalty.l1, invN = 1.0 / N
    cdef double f = 0.0, fn, loss, reg_old, l1_old, gmax = 0.0, m_prev, m_in, m_in1
    cdef double gnorm1 = 0.0, gnorm1_init = 0.0, eps_in = eta
    cdef double gj, hjj, u, z, dn, acc, delta, beta, reg_new, l1_new, x, v
    cdef Py_ssize_t k = 0, j, p, i, sweep, ls, sweeps = 0, n_sweep = 0, n_active, q, r
    cdef unsigned long long rng = SEED
    cdef int status = C_GLMNET_MAX_ITER
    cdef bint accepted, is_reg
    m_prev = float("inf")
    try:
        with nogil:
            while True:
                # ---- f, g and D at w from the scores
                loss = objective.cy_scores_loss(rp, N, sp, coef) * invN
                reg_old = 0.0
                l1_old = 0.0
                for j in range(nf):
                    reg_old += wp[j] * wp[j]
                    l1_old += fabs(wp[j])
                f = loss + 0.5 * lam * reg_old + l1 * l1_old
                if not isfinite(f):
                    status = C_GLMNET_NONFINITE
                    break
                if k < n_trace:
                    trace[k] = f
                if k < n_iterates:
                    for j in range(n):
                        iterates[k, j] = wp[j]
                for i in range(N):
                    D[i] = objective.cy_score_hessian_factor(i, sp[i]) * invN
                gmax = 0.0
                gnorm1 = 0.0
                for j in range(n):
                    is_reg = j < nf
                    acc = 0.0
                    hjj = 0.0
                    if is_reg:
                        for p in range(ip[j], ip[j + 1]):
                            i = ix[p]
                            x = xv[p]
                            acc += coef[i] * x
                            hjj += D[i] * x * x
                        g[j] = acc * invN + lam * wp[j]
                        hd[j] = hjj + lam + NU
                    else:
                        for i in range(N):
                            acc += coef[i]
                            hjj += D[i]
                        g[j] = acc * invN
                        hd[j] = hjj + NU
                    v = _violation(wp[j], g[j], l1, is_reg)
                    gnorm1 += v
                    if v > gmax or not (v == v):
                        gmax = v
                    # shrinking: a zero weight well inside the subdifferential stays zero
                    active[j] = 1
                    if shrink and is_reg and wp[j] == 0.0 and fabs(g[j]) < l1 - m_prev * invN:
                        active[j] = 0
                if not isfinite(gmax):
                    status = C_GLMNET_NONFINITE
                    break
                if gmax <= tol:
                    status = C_GLMNET_GTOL
                    break
                if k >= max_iter:
                    status = C_GLMNET_MAX_ITER
                    break
                m_prev = gmax
                if k == 0:
                    gnorm1_init = gnorm1
                # ---- coordinate descent on the quadratic model
                memset(d, 0, n * sizeof(double))
                memset(xd, 0, N * sizeof(double))
                n_active = 0
                for j in range(n):
                    if active[j]:
                        order[n_active] = j
                        n_active += 1
                n_sweep = 0
                for sweep in range(max_inner):
                    sweeps += 1
                    n_sweep += 1
                    m_in = 0.0
                    m_in1 = 0.0
                    # a random order each sweep (Fisher-Yates), as LIBLINEAR's
                    for q in range(n_active - 1):
                        r = q + <Py_ssize_t> (_xorshift(&rng) % <unsigned long long> (n_active - q))
                        j = order[q]
                        order[q] = order[r]
                        order[r] = j
                    for q in range(n_active):
                        j = order[q]
                        is_reg = j < nf
                        acc = 0.0
                        if is_reg:
                            for p in range(ip[j], ip[j + 1]):
                                acc += D[ix[p]] * xd[ix[p]] * xv[p]
                            gj = g[j] + acc + (lam + NU) * d[j]
                        else:
                            for i in range(N):
                                acc += D[i] * xd[i]
                            gj = g[j] + acc + NU * d[j]
                        hjj = hd[j]
                        u = wp[j] + d[j]
                        v = _violation(u, gj, l1, is_reg)
                        m_in1 += v
                        if v > m_in:
                            m_in = v
                        if not is_reg:
                            dn = d[j] - gj / hjj
                        elif gj + l1 <= hjj * u:
                            dn = d[j] - (gj + l1) / hjj
                        elif gj - l1 >= hjj * u:
                            dn = d[j] - (gj - l1) / hjj
                        else:
                            dn = -wp[j]     # the full step lands on an exact zero
                        z = dn - d[j]
                        if z > CLIP:
                            z = CLIP
                            dn = d[j] + z
                        elif z < -CLIP:
                            z = -CLIP
                            dn = d[j] + z
                        if z != 0.0:
                            d[j] = dn
                            if is_reg:
                                for p in range(ip[j], ip[j + 1]):
                                    xd[ix[p]] += z * xv[p]
                            else:
                                for i in range(N):
                                    xd[i] += z
                    if m_in1 <= eps_in * gnorm1_init or m_in <= 0.5 * tol:
                        break
                # ---- line search on F along d, from the scores
                delta = 0.0
                l1_new = 0.0
                for j in range(n):
                    delta += g[j] * d[j]
                    if j < nf:
                        l1_new += fabs(wp[j] + d[j])
                delta += l1 * (l1_new - l1_old)
                beta = 1.0
                accepted = False
                for ls in range(max_search):
                    reg_new = 0.0
                    l1_new = 0.0
                    for j in range(n):
                        wt[j] = wp[j] + beta * d[j]
                        if j < nf:
                            reg_new += wt[j] * wt[j]
                            l1_new += fabs(wt[j])
                    for i in range(N):
                        st[i] = sp[i] + beta * xd[i]
                    fn = (objective.cy_scores_loss(rp, N, st, NULL) * invN + 0.5 * lam * reg_new
                          + l1 * l1_new)
                    if isfinite(fn) and fn - f <= SIGMA * beta * delta:
                        accepted = True
                        break
                    beta *= 0.5
                if not accepted:
                    status = C_GLMNET_PRECISION
                    break
                for j in range(n):
                    wp[j] = wt[j]
                for i in range(N):
                    sp[i] = st[i]
                if n_sweep == 1:
                    eps_in *= 0.25
                k += 1
    finally:
        free(buf)
        free(active)
        free(order)
    return int(k), int(status), float(f), float(gmax), int(sweeps)
