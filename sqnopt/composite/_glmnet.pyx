# cython: language_level=3
r"""Proximal Newton with coordinate descent (newGLMNET): the compiled loop.

Yuan, Ho & Lin, *An improved GLMNET for L1-regularized logistic regression*, JMLR 13 (2012),
Algorithm 3 (the method of LIBLINEAR's L1-regularised logistic regression), for
``F(w) = f(w) + l1 ||w_reg||_1`` with ``f(w) = (1/N) sum_i c_i loss_i(s_i) + (lam/2)||w_reg||^2``
a loss of one linear score ``s_i = x_i . w + b`` per sample (margin and regression losses).

Outer iteration at ``w`` (scores ``s = Xw + b`` kept):

1. ``g = grad f(w)`` and the per-sample curvature ``D_i = c_i loss_i''(s_i) / N`` from the
   scores (``cy_scores_loss``, ``cy_score_hessian_factor``), column by column on a CSC copy of
   ``X`` -- or, for dense data, on ``X`` in Fortran order, every entry stored and no row
   index read (the intercept a column of ones); ``D`` and the diagonal ``H_jj`` only when the
   coordinate descent below uses them (while the exact model described further down is due,
   the whole Hessian's formation computes its own ``D`` from the scores and the working set's
   takes ``D`` alone, so the passes wait until a model falls back to the sweeps);
2. the quadratic model ``q(d) = g'd + (1/2) d'Hd + l1 ||w_reg + d_reg||_1`` with the exact
   Hessian ``H = X'DX + lam I_reg + nu I`` (``nu = 1e-12`` keeps it positive definite), minimised
   approximately by coordinate descent on ``d`` (each sweep over the active coordinates in a
   random order from an xorshift generator the caller seeds) with ``Xd`` kept: coordinate
   ``j`` with ``G = g_j + (Hd)_j``, ``u = w_j + d_j`` moves by the exact 1-D minimiser
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

**The exact model** (few parameters: ``dense``). Coordinate descent on the data solves the
model loosely, and on nearly collinear columns -- one-hot groups, whose sums are all the column
of ones -- it crawls: LIBLINEAR's rule then keeps the models loose and the outer iterations
many. When ``n`` is small the model can instead be formed and solved exactly, which gives
proximal Newton's fast local convergence (Lee, Sun & Saunders, SIAM J. Optim. 24, 2014:
superlinear with exact models): ``H = X'DX + lam I_reg`` is formed by the Newton kernel's pass
(``sum_i nnz_i^2 / 2`` multiply-adds, split over the data's threads; on dense rows by BLAS,
``dsyrk`` on the rows scaled by the square roots of the curvature of the kept scores) --
on sparse rows with the off-diagonal pairs of the rows whose ``D_i`` is below ``PAIR_FLOOR``
(``1e-6``) times the largest left out and the diagonal kept whole: as the weights grow,
confidently classified rows keep a curvature too small to change the model, yet, being often
the longest, they can hold most of the pairs near the solution; the gradient stays exact, so
the minimiser does not move, and each entry left out is a sum of terms ``D_i x_ij x_ik``
whose ``D_i`` is below the floor times the largest --, damped
by ``rho = 1e-8 max_j H_jj`` on its diagonal (which keeps the systems of collinear columns positive
definite), and the model ``phi(u) = (1/2) u'Hu - c'u + l1 ||u_reg||_1`` (``u = w + d``,
``c = Hw - g``) is minimised by a few sweeps of coordinate descent on ``H`` (``n^2`` each, no
pass over the data: they find the sign pattern) and then feature-sign search (Lee, Battle,
Raina & Ng, NIPS 2006): Cholesky solves on the active set, its factor updated by one row per
coordinate added and by Givens rotations per coordinate dropped, until no zero coordinate
violates optimality by more than ``1e-9`` times the outer iteration's largest pseudo-gradient
entry. The line search follows as above. The loop switches to the exact model after the first
outer iteration whose coordinate descent needed more than ``dense_after`` sweeps: while one
sweep meets the loose inner tolerance, far from the solution, the model's accuracy buys
nothing and its formation costs more than a sweep. With many parameters (``subset_max``) the
exact model is formed and solved on the working set only -- the nonzero weights and the zeros
whose gradient entry exceeds ``l1`` in magnitude, while they number at most ``subset_max``:
the other coordinates stay zero in that model's solution, and the next outer iteration's
gradient, over every coordinate, brings any that then violates optimality into the set (the
working-set strategy of glmnet; Friedman, Hastie & Tibshirani, J. Stat. Softw. 33, 2010); on
dense columns that matrix is formed by BLAS from the set's columns (:func:`_form_subset_dense`).

**Conjugate gradients on the model's face.** Where the exact model is due but out of reach
(its working set over the cap -- wide one-hot data such as criteo's -- or its search stopped
short), coordinate descent solves the model, and every ``CG_EVERY`` sweeps from the
``CG_AFTER``-th it is helped by conjugate gradients on the model's face (:func:`_face_cg`):
the nonzeros of ``u = w + d`` keep their signs, on that face the model is a smooth quadratic,
and CG, preconditioned by ``diag(H)``, moves along its nearly flat directions, which the sweeps
cross one coordinate at a time; each CG step is cut at the face's boundary (the coordinate
that reaches zero leaves the face), so the model decreases and no sign changes. The sweeps
find the zeros and the signs, CG the values: the two phases of Wen, Yin, Goldfarb & Zhang
(SIAM J. Sci. Comput. 32, 2010). The paper's loop alone (``model="cd"``) has no CG.
"""

from libc.math cimport INFINITY, fabs, isfinite, sqrt
from libc.stdlib cimport free, malloc, qsort
from libc.string cimport memset

import numpy as np

from scipy.linalg.cython_blas cimport dsyrk
from scipy.linalg.cython_lapack cimport dpotrf

from sqnopt._parallel cimport ENTRY_WORK, ROW_WORK, block_bounds, plan_blocks, run_tasks
from sqnopt._vec cimport sq_axpy, sq_dot
from sqnopt.curvature._newton cimport NewtonKernel
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
#: the seed of the sweep order's generator when the caller gives none (``seed=0``: the solve
#: is deterministic either way)
cdef unsigned long long SEED = 0x9E3779B97F4A7C15ULL
DEFAULT_SEED = SEED
#: the dense model's damping, relative to the largest diagonal entry of ``H``: keeps the
#: systems of collinear columns (one-hot groups beside an intercept) positive definite
cdef double RHO = 1e-8
#: a Cholesky pivot below this share of its diagonal entry: the column is taken as dependent
cdef double PIVOT = 1e-14
#: the dense model's solve adds coordinates until the largest violation among its zeros is
#: below this share of the outer iteration's largest pseudo-gradient entry
cdef double MODEL_TOL = 1e-9
MODEL_TOLERANCE = MODEL_TOL
#: the exact model's rows of negligible curvature: a row whose ``D_i`` is below this share of
#: the largest adds its diagonal entries only (see the module's docstring)
cdef double PAIR_FLOOR = 1e-6
PAIR_FLOOR_DEFAULT = PAIR_FLOOR
#: the coordinate-descent sweeps on the dense model before its feature-sign search
cdef Py_ssize_t DENSE_SWEEPS = 10
#: conjugate gradients on the model's face (when its exact solve is out of reach): after the
#: sweep ``CG_AFTER`` of a model and every ``CG_EVERY`` sweeps after it, at most ``CG_STEPS``
#: products, until the 1-norm of the face's model gradient is below ``CG_TOL`` times the
#: sweeps' own target
cdef Py_ssize_t CG_AFTER = 3
cdef Py_ssize_t CG_EVERY = 3
cdef Py_ssize_t CG_STEPS = 30
cdef double CG_TOL = 0.1


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


cdef struct _Crossing:
    double t        # where on the segment the coordinate crosses zero
    Py_ssize_t r    # its position in the active set


cdef int _by_t(const void* a, const void* b) noexcept nogil:
    cdef double ta = (<const _Crossing*> a).t, tb = (<const _Crossing*> b).t
    return -1 if ta < tb else (1 if ta > tb else 0)


cdef inline double _h(const double* H, Py_ssize_t n, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    """``H[a, b]`` of a symmetric matrix kept as its upper triangle (row-major)."""
    return H[a * n + b] if a <= b else H[b * n + a]


cdef Py_ssize_t _chol_rows(const double* H, Py_ssize_t n, const Py_ssize_t* A, Py_ssize_t r0,
                           Py_ssize_t k, double* L) noexcept nogil:
    """Rows ``r0 .. k-1`` of the Cholesky factor ``L`` (lower, row-major, leading dimension
    ``n``) of ``H[A, A]``, the rows above ``r0`` kept (the bordered form: appending a
    coordinate costs one row). Returns the first row whose pivot is not positive, else -1."""
    cdef Py_ssize_t r, c, m
    cdef double s, hv
    for r in range(r0, k):
        for c in range(r + 1):
            hv = _h(H, n, A[r], A[c])
            s = hv
            for m in range(c):
                s -= L[r * n + m] * L[c * n + m]
            if c < r:
                L[r * n + c] = s / L[c * n + c]
            elif s > PIVOT * hv and s > 0.0:
                L[r * n + r] = sqrt(s)
            else:
                return r
    return -1


cdef int _chol_full(const double* H, Py_ssize_t n, const Py_ssize_t* A, Py_ssize_t k,
                    double* L) noexcept nogil:
    """The Cholesky factor of ``H[A, A]`` into ``L`` (lower, row-major, leading dimension
    ``n``) by LAPACK: the row-major lower triangle is the column-major upper one, so
    ``dpotrf('U')`` on the gathered matrix leaves ``L`` with ``H[A, A] = L L'`` where
    :func:`_chol_rows` would. Returns LAPACK's ``info`` (0: done)."""
    cdef Py_ssize_t r, q
    cdef int kk = <int> k, ld = <int> n, info = 0
    cdef char uplo = b'U'
    if k == 0:
        return 0
    for r in range(k):
        for q in range(r + 1):
            L[r * n + q] = _h(H, n, A[r], A[q])
    dpotrf(&uplo, &kk, L, &ld, &info)
    if info == 0:
        for r in range(k):
            if not (L[r * n + r] * L[r * n + r] > PIVOT * _h(H, n, A[r], A[r])):
                return r + 1
    return info


cdef void _chol_drop(double* L, Py_ssize_t n, Py_ssize_t k, Py_ssize_t p) noexcept nogil:
    """Remove row and column ``p`` from the ``k x k`` Cholesky factor ``L`` (lower, row-major,
    leading dimension ``n``) in place: the rows below ``p`` move up one, which leaves one
    entry above the diagonal in each; Givens rotations of adjacent columns, applied to all
    the rows below, zero it (``O((k - p)^2)``, no refactorisation; Golub & Van Loan, Sec.
    6.5.4)."""
    cdef Py_ssize_t r, i, q
    cdef double a, b, h, cs, sn
    for r in range(p, k - 1):
        for q in range(r + 2):
            L[r * n + q] = L[(r + 1) * n + q]
    for i in range(p, k - 1):
        a = L[i * n + i]
        b = L[i * n + i + 1]
        h = sqrt(a * a + b * b)
        cs = a / h
        sn = b / h
        for r in range(i, k - 1):
            a = L[r * n + i]
            b = L[r * n + i + 1]
            L[r * n + i] = cs * a + sn * b
            L[r * n + i + 1] = 0.0 if r == i else cs * b - sn * a
    for r in range(p, k - 1):
        L[r * n + r + 1] = 0.0


cdef void _dense_cd(const double* H, Py_ssize_t n, Py_ssize_t nf, const double* w,
                    const double* g, double l1, double eps, Py_ssize_t max_sweeps, double* u,
                    double* hd) noexcept nogil:
    """A few cyclic sweeps of coordinate descent on the dense model from ``u = w``: each
    coordinate to the exact 1-D minimiser of ``q`` (``G = g + H(u - w)`` kept in ``hd`` as
    ``H(u - w)``, ``O(n)`` per move), until no coordinate violates optimality by more than
    ``eps`` or ``max_sweeps`` sweeps. It finds the model's sign pattern for the feature-sign
    search cheaply (a sweep costs ``n^2``, no pass over the data)."""
    cdef Py_ssize_t j, q, sweep
    cdef double gj, hjj, uj, un, z, mx, v
    for j in range(n):
        u[j] = w[j]
        hd[j] = 0.0
    for sweep in range(max_sweeps):
        mx = 0.0
        for j in range(n):
            gj = g[j] + hd[j]
            hjj = H[j * n + j]
            uj = u[j]
            v = _violation(uj, gj, l1, j < nf)
            if v > mx:
                mx = v
            if j >= nf:
                un = uj - gj / hjj
            elif gj + l1 <= hjj * uj:
                un = uj - (gj + l1) / hjj
            elif gj - l1 >= hjj * uj:
                un = uj - (gj - l1) / hjj
            else:
                un = 0.0
            z = un - uj
            if z != 0.0:
                u[j] = un
                for q in range(j):
                    hd[q] += z * H[q * n + j]
                for q in range(j, n):
                    hd[q] += z * H[j * n + q]
        if mx <= eps:
            break


cdef int _feature_sign(const double* H, Py_ssize_t n, Py_ssize_t nf, const double* w,
                       const double* g, double l1, double eps, Py_ssize_t max_steps, double* u,
                       double* L, Py_ssize_t* A, char* inA, double* theta, double* c, double* z,
                       double* dl, _Crossing* cross, Py_ssize_t* n_steps) noexcept nogil:
    """Minimise the dense model ``phi(u) = (1/2) u'Hu - c'u + l1 ||u_reg||_1``, ``c = Hw - g``
    (the model ``q(d)`` of the outer iteration with ``u = w + d``), by feature-sign search
    (Lee, Battle, Raina & Ng, NIPS 2006, Algorithm 1) from the ``u`` given: on the active set ``A``
    (the nonzeros and the intercept) with signs ``theta``, solve ``H_AA u_A = c_A - l1 theta_A``
    by Cholesky, move from ``u_A`` towards the solution to the point of lowest ``phi`` among it
    and the points where a coordinate crosses zero (that coordinate leaves ``A``); once the
    step is unobstructed, add the zero coordinate of largest violation ``|G_j| - l1``
    (``G = Hu - c``) with the sign that decreases ``phi``, until no violation exceeds ``eps``.
    ``phi`` decreases at every step, so the search ends at the model's minimiser. Returns 0
    there, -1 if a pivot of ``H_AA`` is not positive, -2 after ``max_steps`` steps or if a
    step cannot decrease ``phi`` (rounding); ``u`` holds the last point (no worse than the
    start).
    """
    cdef Py_ssize_t k = 0, a, j, r, q, rc, steps = 0, jbest, m
    cdef double s, hu, hd, a1, a2, phi0, best, tt, tbest, v, sg, v1
    cdef bint solve = True, moved
    for a in range(n):
        s = 0.0
        for q in range(n):
            s += _h(H, n, a, q) * w[q]
        c[a] = s - g[a]
        inA[a] = 0
        if a >= nf or u[a] != 0.0:
            A[k] = a
            inA[a] = 1
            k += 1
            theta[a] = 0.0 if a >= nf else (1.0 if u[a] > 0.0 else -1.0)
    if _chol_full(H, n, A, k, L) != 0:
        n_steps[0] = steps
        return -1
    while steps < max_steps:
        steps += 1
        if solve and k > 0:
            # z = H_AA^{-1} (c_A - l1 theta_A): forward, then backward substitution
            for r in range(k):
                s = c[A[r]] - l1 * theta[A[r]]
                for q in range(r):
                    s -= L[r * n + q] * z[q]
                z[r] = s / L[r * n + r]
            for r in range(k - 1, -1, -1):
                s = z[r]
                for q in range(r + 1, k):
                    s -= L[q * n + r] * z[q]
                z[r] = s / L[r * n + r]
            # phi(u + t dl) - l1 ||u||: a1 t + a2 t^2 / 2 + l1 (||u + t dl|| - ||u||)
            for r in range(k):
                dl[r] = z[r] - u[A[r]]
            a1 = 0.0
            a2 = 0.0
            phi0 = 0.0
            for r in range(k):
                hu = 0.0
                hd = 0.0
                for q in range(k):
                    v = _h(H, n, A[r], A[q])
                    hu += v * u[A[q]]
                    hd += v * dl[q]
                a1 += (hu - c[A[r]]) * dl[r]
                a2 += hd * dl[r]
                if A[r] < nf:
                    phi0 += fabs(u[A[r]])
            phi0 *= l1
            tbest = 1.0
            rc = -1
            best = a1 + 0.5 * a2
            for r in range(k):
                if A[r] < nf:
                    best += l1 * fabs(z[r])
            # phi is convex along the segment: its values at the zero crossings, in order,
            # fall and then rise -- evaluate them in order until one rises
            m = 0
            for r in range(k):
                a = A[r]
                if a < nf and u[a] * z[r] < 0.0:
                    cross[m].t = u[a] / (u[a] - z[r])
                    cross[m].r = r
                    m += 1
            qsort(cross, m, sizeof(_Crossing), _by_t)
            v1 = best
            best = INFINITY
            for q in range(m):
                tt = cross[q].t
                v = a1 * tt + 0.5 * a2 * tt * tt
                for r in range(k):
                    if A[r] < nf:
                        v += l1 * fabs(u[A[r]] + tt * dl[r])
                if not (v < best):
                    break
                best = v
                tbest = tt
                rc = cross[q].r
            if not (best <= v1):
                best = v1
                tbest = 1.0
                rc = -1
            if not (best < phi0):
                if rc < 0 and best - phi0 <= 1e-12 * (fabs(phi0) + fabs(a1) + fabs(a2)):
                    solve = False       # stationary on A to rounding: to the zeros' check
                else:
                    n_steps[0] = steps
                    return -2
        if solve and k > 0:
            for r in range(k):
                u[A[r]] += tbest * dl[r]
            if rc >= 0:
                u[A[rc]] = 0.0
            # refresh the signs, drop the zeros (their rows leave the factor by rotations)
            moved = rc >= 0
            for r in range(k - 1, -1, -1):
                a = A[r]
                if a >= nf:
                    continue
                if u[a] == 0.0:
                    inA[a] = 0
                    _chol_drop(L, n, k, r)
                    for q in range(r, k - 1):
                        A[q] = A[q + 1]
                    k -= 1
                    moved = True
                    continue
                sg = 1.0 if u[a] > 0.0 else -1.0
                if sg != theta[a]:
                    theta[a] = sg
                    moved = True
            if moved:
                continue
        # optimal on A: the zero coordinate of largest violation joins it
        jbest = -1
        best = eps
        sg = 0.0
        for j in range(nf):
            if inA[j]:
                continue
            s = -c[j]
            for r in range(k):
                s += _h(H, n, j, A[r]) * u[A[r]]
            v = fabs(s) - l1
            if v > best:
                best = v
                jbest = j
                sg = s
        if jbest < 0:
            n_steps[0] = steps
            return 0
        theta[jbest] = -1.0 if sg > 0.0 else 1.0
        A[k] = jbest
        inA[jbest] = 1
        k += 1
        solve = True
        if _chol_rows(H, n, A, k - 1, k, L) >= 0:
            n_steps[0] = steps
            return -1
    n_steps[0] = steps
    return -2


# X by columns: the stored columns j < nf (CSC), the intercept's (j = nf) the column of ones
# over the N rows, not stored
cdef struct _Cols:
    const Py_ssize_t* ip
    const Py_ssize_t* ix            # NULL: dense columns, column j's entry i at xv[ip[j] + i]
    const double* xv
    Py_ssize_t nf
    Py_ssize_t N


cdef inline double _dense_dot3(const double* a, const double* b, const double* x,
                               Py_ssize_t N) noexcept nogil:
    """``sum_i a_i b_i x_i`` over a dense column (a weighted dot: the curvature ``D`` and a
    vector, or the column twice), in four partial sums (entry ``i`` to sum ``i mod 4``, the
    rest to the first, added as ``(s0 + s1) + (s2 + s3)``): independent chains of additions
    rather than one. Plain dots of dense columns are ``sq_dot``'s."""
    cdef double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0
    cdef Py_ssize_t i = 0
    while i + 4 <= N:
        a0 += a[i] * b[i] * x[i]
        a1 += a[i + 1] * b[i + 1] * x[i + 1]
        a2 += a[i + 2] * b[i + 2] * x[i + 2]
        a3 += a[i + 3] * b[i + 3] * x[i + 3]
        i += 4
    while i < N:
        a0 += a[i] * b[i] * x[i]
        i += 1
    return (a0 + a1) + (a2 + a3)


cdef inline double _col_wdot(const _Cols* X, Py_ssize_t j, const double* D,
                             const double* v) noexcept nogil:
    """``sum_i D_i v_i x_ij``: column ``j`` of ``X' diag(D) v``, in the column's order (one
    chain: each entry's two scattered loads, not the additions, bound this loop)."""
    cdef double acc = 0.0
    cdef Py_ssize_t p, i
    if j < X.nf and X.ix == NULL:
        acc = _dense_dot3(D, v, X.xv + X.ip[j], X.N)
    elif j < X.nf:
        for p in range(X.ip[j], X.ip[j + 1]):
            acc += D[X.ix[p]] * v[X.ix[p]] * X.xv[p]
    else:
        for i in range(X.N):
            acc += D[i] * v[i]
    return acc


cdef inline double _col_dot(const _Cols* X, Py_ssize_t j, const double* v) noexcept nogil:
    """``sum_i v_i x_ij``: column ``j`` of ``X' v``. The column's entries go to four partial
    sums in turn (entry ``p`` of the column to sum ``p mod 4``; the rest of a length not a
    multiple of four to the first), added as ``(s0 + s1) + (s2 + s3)``: four independent
    chains of additions rather than one, whose latency bounds the loop; the same order on any
    thread count (a column is summed by one thread)."""
    cdef double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0
    cdef Py_ssize_t p, i, p0, p1
    cdef const Py_ssize_t* ix = X.ix
    cdef const double* xv = X.xv
    if j < X.nf and ix == NULL:
        return sq_dot(v, xv + X.ip[j], X.N)
    if j < X.nf:
        p0 = X.ip[j]
        p1 = X.ip[j + 1]
        p = p0
        while p + 4 <= p1:
            a0 += v[ix[p]] * xv[p]
            a1 += v[ix[p + 1]] * xv[p + 1]
            a2 += v[ix[p + 2]] * xv[p + 2]
            a3 += v[ix[p + 3]] * xv[p + 3]
            p += 4
        while p < p1:
            a0 += v[ix[p]] * xv[p]
            p += 1
    else:
        i = 0
        while i + 4 <= X.N:
            a0 += v[i]
            a1 += v[i + 1]
            a2 += v[i + 2]
            a3 += v[i + 3]
            i += 4
        while i < X.N:
            a0 += v[i]
            i += 1
    return (a0 + a1) + (a2 + a3)


cdef inline void _col_axpy(const _Cols* X, Py_ssize_t j, double z, double* out) noexcept nogil:
    """``out += z x_j``: column ``j`` of ``X`` scaled into a vector over the rows."""
    cdef Py_ssize_t p, i
    if j < X.nf and X.ix == NULL:
        sq_axpy(z, X.xv + X.ip[j], out, X.N)
    elif j < X.nf:
        for p in range(X.ip[j], X.ip[j + 1]):
            out[X.ix[p]] += z * X.xv[p]
    else:
        for i in range(X.N):
            out[i] += z


cdef Py_ssize_t _face_cg(const _Cols* X, Py_ssize_t n, const char* active, const double* w,
                         double* d, double* xd, const double* g, const double* hd,
                         const double* D, double lam, double l1, double tol,
                         Py_ssize_t max_steps, Py_ssize_t* face, double* work) noexcept nogil:
    """Conjugate gradients on the face of the model ``q(d) = g'd + (1/2) d'Hd + l1 ||w + d||_1``
    (``H = X'DX + lam I_reg + nu I``) at the current ``d``: the coordinates of the sweep set
    whose ``u = w + d`` is nonzero (and the intercept) move, keeping their signs ``theta``,
    the others stay where they are. On the face ``q`` is the smooth quadratic with gradient
    ``r = g + Hd + l1 theta``; CG preconditioned by ``diag(H)`` minimises it, each step cut at
    the face's boundary -- a coordinate reaching zero is set to exactly zero, leaves the face,
    and CG restarts on the rest -- so ``q`` decreases at every step and no sign changes. The
    two-phase scheme of Wen, Yin, Goldfarb & Zhang (*A fast algorithm for sparse
    reconstruction based on shrinkage, subspace optimization, and continuation*, SIAM J. Sci.
    Comput. 32, 2010): coordinate descent finds the zeros and signs, the subspace solve the
    values -- along the nearly flat directions of collinear columns (one-hot groups), where
    the sweeps crawl, CG's convergence depends on the spread of the face's spectrum only.
    Products ``H p`` go through the data (``X p`` by columns, then ``X'(D X p)``: about one
    sweep's work each); ``xd = X d`` is kept. Stops when the 1-norm of ``r`` is at most
    ``tol``, after ``max_steps`` products, or on a direction of no curvature (rounding).
    ``work``: ``4 n + 2 N`` doubles. Returns the products made."""
    cdef double* r = work
    cdef double* p = work + n
    cdef double* z = work + 2 * n
    cdef double* hp = work + 3 * n
    cdef double* t = work + 4 * n
    cdef double* dt = work + 4 * n + X.N   # D t: each column's gather reads one array
    cdef Py_ssize_t nface = 0, a, j, i, steps = 0, hit, nf = X.nf, N = X.N
    cdef double u, acc, rz = 0.0, rz_new, php, alpha, amax, beta, r1 = 0.0, fix
    for j in range(n):
        u = w[j] + d[j]
        if not active[j] or (j < nf and u == 0.0):
            continue
        acc = _col_wdot(X, j, D, xd)
        if j < nf:
            r[nface] = g[j] + acc + (lam + NU) * d[j] + (l1 if u > 0.0 else -l1)
        else:
            r[nface] = g[j] + acc + NU * d[j]
        face[nface] = j
        z[nface] = r[nface] / hd[j]
        p[nface] = -z[nface]
        rz += r[nface] * z[nface]
        r1 += fabs(r[nface])
        nface += 1
    while steps < max_steps and nface > 0 and r1 > tol and rz > 0.0:
        steps += 1
        memset(t, 0, N * sizeof(double))
        for a in range(nface):
            _col_axpy(X, face[a], p[a], t)
        for i in range(N):
            dt[i] = D[i] * t[i]
        php = 0.0
        for a in range(nface):
            j = face[a]
            acc = _col_dot(X, j, dt)        # X_F' (D t)
            hp[a] = acc + ((lam + NU) if j < nf else NU) * p[a]
            php += p[a] * hp[a]
        if not (php > 0.0):
            break
        alpha = rz / php
        # the face's boundary along p: the first coordinate to reach zero
        amax = INFINITY
        hit = -1
        for a in range(nface):
            j = face[a]
            if j < nf:
                u = w[j] + d[j]
                if u * p[a] < 0.0 and -u / p[a] < amax:
                    amax = -u / p[a]
                    hit = a
        if amax <= alpha:
            alpha = amax
        else:
            hit = -1
        for a in range(nface):
            d[face[a]] += alpha * p[a]
            r[a] += alpha * hp[a]
        for i in range(N):
            xd[i] += alpha * t[i]
        if hit >= 0:
            # exactly zero (and X d with it); the coordinate leaves, CG restarts on the rest
            j = face[hit]
            fix = -w[j] - d[j]
            d[j] = -w[j]
            _col_axpy(X, j, fix, xd)
            nface -= 1
            face[hit] = face[nface]
            r[hit] = r[nface]
            rz = 0.0
            r1 = 0.0
            for a in range(nface):
                z[a] = r[a] / hd[face[a]]
                p[a] = -z[a]
                rz += r[a] * z[a]
                r1 += fabs(r[a])
            continue
        rz_new = 0.0
        r1 = 0.0
        for a in range(nface):
            z[a] = r[a] / hd[face[a]]
            rz_new += r[a] * z[a]
            r1 += fabs(r[a])
        beta = rz_new / rz
        rz = rz_new
        for a in range(nface):
            p[a] = -z[a] + beta * p[a]
    return steps


def _pair_floor_policy(floor=None):
    """The exact model's ``PAIR_FLOOR``, replaced when given (``0``: every row's pairs formed);
    returns the previous one (for experiments and tests)."""
    global PAIR_FLOOR
    old = PAIR_FLOOR
    if floor is not None:
        if not floor >= 0.0:
            raise ValueError(f"the pair floor must be >= 0, got {floor!r}")
        PAIR_FLOOR = floor
    return old


def _face_cg_policy(after=None, every=None, steps=None, tol=None):
    """The face CG's constants (``CG_AFTER``, ``CG_EVERY``, ``CG_STEPS``, ``CG_TOL``), each
    replaced when given; returns the previous ones (for experiments and tests)."""
    global CG_AFTER, CG_EVERY, CG_STEPS, CG_TOL
    old = (CG_AFTER, CG_EVERY, CG_STEPS, CG_TOL)
    if after is not None:
        CG_AFTER = after
    if every is not None:
        CG_EVERY = every
    if steps is not None:
        CG_STEPS = steps
    if tol is not None:
        CG_TOL = tol
    return old


cdef struct _PassJob:
    void* objective                 # the ObjectiveKernel (borrowed)
    const double* s                 # the scores
    const double* coef              # d loss / d score per sample (weighted)
    double* D                       # out: curvature per sample
    double* g                       # out: the gradient's loss part, per column
    double* hd                      # out: diag(X'DX), per column
    _Cols X
    Py_ssize_t n_blocks
    double invN
    bint want_g                     # the column pass computes g
    bint want_hd                    # the column pass computes hd (from D)


cdef void _factor_rows(ObjectiveKernel objective, const double* s, double* D, Py_ssize_t i0,
                       Py_ssize_t i1, double invN) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(i0, i1):
        D[i] = objective.cy_score_hessian_factor(i, s[i]) * invN


cdef void _factor_task(void* ctx, Py_ssize_t b, int worker) noexcept nogil:
    cdef _PassJob* job = <_PassJob*> ctx
    cdef Py_ssize_t i0, i1
    block_bounds(job.X.N, job.n_blocks, b, &i0, &i1)
    _factor_rows(<ObjectiveKernel> job.objective, job.s, job.D, i0, i1, job.invN)


cdef void _column_sums(const _PassJob* job, Py_ssize_t j0, Py_ssize_t j1) noexcept nogil:
    """``g_j = sum_i coef_i x_ij`` (``want_g``) and ``hd_j = sum_i D_i x_ij^2`` (``want_hd``)
    for the stored columns ``[j0, j1)``, each in the order of its entries (the same bits
    whether computed together or apart)."""
    cdef Py_ssize_t j, p, i
    cdef double acc, hjj, x
    cdef const double* col
    if job.X.ix == NULL:
        # dense columns: each sum whole in its own order (the same bits together or apart)
        for j in range(j0, j1):
            col = job.X.xv + job.X.ip[j]
            if job.want_g:
                job.g[j] = sq_dot(job.coef, col, job.X.N)
            if job.want_hd:
                job.hd[j] = _dense_dot3(job.D, col, col, job.X.N)
    elif job.want_g and job.want_hd:
        for j in range(j0, j1):
            acc = 0.0
            hjj = 0.0
            for p in range(job.X.ip[j], job.X.ip[j + 1]):
                i = job.X.ix[p]
                x = job.X.xv[p]
                acc += job.coef[i] * x
                hjj += job.D[i] * x * x
            job.g[j] = acc
            job.hd[j] = hjj
    elif job.want_g:
        for j in range(j0, j1):
            acc = 0.0
            for p in range(job.X.ip[j], job.X.ip[j + 1]):
                acc += job.coef[job.X.ix[p]] * job.X.xv[p]
            job.g[j] = acc
    elif job.want_hd:
        for j in range(j0, j1):
            hjj = 0.0
            for p in range(job.X.ip[j], job.X.ip[j + 1]):
                x = job.X.xv[p]
                hjj += job.D[job.X.ix[p]] * x * x
            job.hd[j] = hjj


cdef void _column_task(void* ctx, Py_ssize_t b, int worker) noexcept nogil:
    cdef _PassJob* job = <_PassJob*> ctx
    cdef Py_ssize_t j0, j1
    block_bounds(job.X.nf, job.n_blocks, b, &j0, &j1)
    _column_sums(job, j0, j1)


cdef void _factor_pass(ObjectiveKernel objective, _PassJob* job) noexcept nogil:
    """The curvature ``D_i`` of every sample from its score, split over the data's threads in
    blocks of rows (each entry computed whole by one thread: the same bits on any count)."""
    cdef int threads = objective.data.n_threads
    job.objective = <void*> objective
    job.n_blocks = plan_blocks(job.X.N, ROW_WORK, 0)
    if job.n_blocks > 1 and threads > 1:
        run_tasks(threads, job.n_blocks, _factor_task, job)
    else:
        _factor_rows(objective, job.s, job.D, 0, job.X.N, job.invN)


cdef void _column_pass(ObjectiveKernel objective, _PassJob* job, bint want_g,
                       bint want_hd) noexcept nogil:
    """Every stored column's sums (:func:`_column_sums`: ``g`` and / or ``hd``), split over the
    data's threads in blocks of columns; every output entry is one sum computed whole by one
    thread, in the serial loop's order: the same bits for every thread count and block plan."""
    cdef int threads = objective.data.n_threads
    cdef Py_ssize_t nf = job.X.nf, nnz = job.X.ip[nf]
    job.objective = <void*> objective
    job.want_g = want_g
    job.want_hd = want_hd
    job.n_blocks = plan_blocks(nf, (<int> want_g + <int> want_hd) * ENTRY_WORK
                               * (<double> nnz / max(nf, 1)) + 1, 0)
    if job.n_blocks > 1 and threads > 1:
        run_tasks(threads, job.n_blocks, _column_task, job)
    else:
        _column_sums(job, 0, nf)


cdef void _finish_hd(const _PassJob* job, Py_ssize_t n, Py_ssize_t nf, double lam) noexcept nogil:
    """``H_jj`` of the model from the column pass's ``hd``: the regulariser and ``nu`` added,
    the intercept's (the column of ones, not stored) the sum of ``D``."""
    cdef Py_ssize_t j, i
    cdef double hjj
    for j in range(n):
        if j < nf:
            job.hd[j] = job.hd[j] + lam + NU
        else:
            hjj = 0.0
            for i in range(job.X.N):
                hjj += job.D[i]
            job.hd[j] = hjj + NU


cdef void _finish_model(double* H, Py_ssize_t n, Py_ssize_t n_lam, double lam) noexcept nogil:
    """The exact model's diagonal after its data term: ``lam`` on the first ``n_lam``
    coordinates (the regularised ones of a working set; 0 where the matrix has it already),
    then ``nu`` and the damping ``rho = RHO max_j H_jj`` on every one."""
    cdef Py_ssize_t r
    cdef double hmax = 0.0
    for r in range(n_lam):
        H[r * n + r] += lam
    for r in range(n):
        if H[r * n + r] > hmax:
            hmax = H[r * n + r]
    for r in range(n):
        H[r * n + r] += NU + RHO * hmax


cdef class QuadraticModel:
    """The exact model of a quadratic objective on a matrix formed once (a Gram matrix):
    newGLMNET's outer step when ``f`` is quadratic, ``f(u) = (1/2) u'Hu - c'u + const`` with
    ``H = X'CX / N + lam I_reg``, where the model of every outer iteration is ``f`` itself up
    to the damping -- so a regularization path forms ``X'CX / N`` once (``N n^2 / 2``
    multiply-adds by BLAS) and each ``alpha`` needs no pass over the data, the lasso paths of
    glmnet's "covariance updates" (Friedman, Hastie & Tibshirani, J. Stat. Softw. 33, 2010,
    Sec. 2.2) with the model solved as the exact models are (a few sweeps of coordinate
    descent for the sign pattern, then feature-sign search: Lee, Battle, Raina & Ng 2006).
    Holds the search's scratch for ``n`` coordinates, reused by every :meth:`solve`."""

    cdef readonly Py_ssize_t n
    cdef double[::1] dbuf
    cdef Py_ssize_t[::1] A
    cdef signed char[::1] inA
    cdef _Crossing* cross

    def __cinit__(self, *args, **kwargs):
        self.cross = NULL

    def __init__(self, Py_ssize_t n):
        if n < 1:
            raise ValueError(f"a model needs at least one coordinate, got n={n}")
        self.n = n
        free(self.cross)
        self.cross = <_Crossing*> malloc((n + 1) * sizeof(_Crossing))
        if self.cross == NULL:
            raise MemoryError()
        self.dbuf = np.empty(n * n + 6 * n + 1)
        self.A = np.empty(n, dtype=np.intp)
        self.inA = np.zeros(n, dtype=np.int8)

    def __dealloc__(self):
        free(self.cross)

    def solve(self, double[:, ::1] H, const double[::1] g, const double[::1] w,
              double[::1] u, Py_ssize_t nf, double l1, double lam, double eps):
        """``u = w + d``, ``d`` the minimiser of ``g'd + (1/2) d'(H + lam I_reg + nu I +
        rho I)d + l1 ||w_reg + d_reg||_1`` (``I_reg``: the first ``nf`` coordinates; ``nu`` and
        ``rho = RHO max_j H_jj``: the exact models' terms, which keep the systems of collinear
        columns positive definite and make the model majorise a quadratic ``f``), to a largest
        violation at most ``eps``. Reads the upper triangle of ``H`` (row-major); its diagonal
        is changed during the call and restored. The search is skipped when the sweeps' point
        violates optimality by at most ``eps`` already. Returns ``(code, steps)``: code 0 at
        the minimiser, -1 (a pivot not positive) or -2 (no progress, or the step limit) as the
        feature-sign search reports them, ``u`` then the last point (no worse than ``w``)."""
        cdef Py_ssize_t n = self.n, j, steps = 0
        cdef int code = 0
        cdef double mx = 0.0, v
        if H.shape[0] != n or H.shape[1] != n or g.shape[0] != n or w.shape[0] != n \
                or u.shape[0] != n:
            raise ValueError(f"the model holds {n} coordinates: H must be {n} x {n} and g, w, "
                             f"u of length {n}")
        if not (0 <= nf <= n) or not (l1 >= 0.0) or not (lam >= 0.0) or not (eps >= 0.0):
            raise ValueError("0 <= nf <= n, l1 >= 0, lam >= 0 and eps >= 0")
        cdef double* Hp = &H[0, 0]
        cdef double* L = &self.dbuf[0]
        cdef double* diag = L + n * n
        cdef double* th = diag + n
        cdef double* c = th + n
        cdef double* z = c + n
        cdef double* dl = z + n
        cdef double* hd = dl + n
        with nogil:
            for j in range(n):
                diag[j] = Hp[j * n + j]
            _finish_model(Hp, n, nf, lam)
            _dense_cd(Hp, n, nf, &w[0], &g[0], l1, eps, DENSE_SWEEPS, &u[0], hd)
            # the sweeps' point already the minimiser to eps (a warm start on a well-conditioned
            # model): no search; else feature-sign search from it
            for j in range(n):
                v = _violation(u[j], g[j] + hd[j], l1, j < nf)
                if not (v <= mx):
                    mx = v
            if not (mx <= eps):
                code = _feature_sign(Hp, n, nf, &w[0], &g[0], l1, eps, 10 * n + 100, &u[0], L,
                                     &self.A[0], <char*> &self.inA[0], th, c, z, dl,
                                     self.cross, &steps)
            for j in range(n):
                Hp[j * n + j] = diag[j]
        return int(code), int(steps)


cdef int _form_subset(ObjectiveKernel objective, const double* D, const Py_ssize_t* pos,
                      Py_ssize_t nf, bint intercept, Py_ssize_t nW, Py_ssize_t nfW, double lam,
                      double* H, Py_ssize_t* ridx, double* rval, double below) noexcept nogil:
    """The model's Hessian on the working set into ``H`` (upper triangle, row-major,
    ``nW x nW``): ``sum_i D_i x_iW x_iW' + lam I_reg``, from each row's entries in the set
    (``pos[j]``: the coordinate's place in it, -1 outside; the intercept last), then the
    damping of the full model; a row with ``0 <= D_i < below`` adds its diagonal entries only.
    Costs one pass over the rows' entries and the pairs of the entries in the set; returns
    0."""
    cdef Py_ssize_t N = objective.data.n_samples, i, p, m, a, b, r, c, nnz
    cdef const double* d64
    cdef const float* d32
    cdef const int* ind
    cdef double di, xa
    memset(H, 0, nW * nW * sizeof(double))
    for i in range(N):
        di = D[i]
        if di == 0.0:
            continue
        nnz = objective.data.row_view(i, &d64, &d32, &ind)
        m = 0
        for p in range(nnz):
            r = pos[ind[p] if ind != NULL else p]
            if r >= 0:
                ridx[m] = r
                rval[m] = d64[p] if d64 != NULL else <double> d32[p]
                m += 1
        if intercept:
            ridx[m] = pos[nf]
            rval[m] = 1.0
            m += 1
        if di < below and di >= 0.0:
            for a in range(m):
                r = ridx[a]
                H[r * nW + r] += di * rval[a] * rval[a]
            continue
        for a in range(m):
            xa = di * rval[a]
            r = ridx[a]
            H[r * nW + r] += xa * rval[a]
            for b in range(a + 1, m):
                c = ridx[b]
                if r < c:
                    H[r * nW + c] += xa * rval[b]
                else:
                    H[c * nW + r] += xa * rval[b]
    _finish_model(H, nW, nfW, lam)
    return 0


#: rows of the working set's columns gathered per BLAS call (dense columns)
cdef Py_ssize_t SUBSET_ROWS = 2048


cdef int _form_subset_dense(const _Cols* X, const double* D, const Py_ssize_t* Wl,
                            Py_ssize_t nW, Py_ssize_t nfW, double lam, double* H) noexcept nogil:
    """:func:`_form_subset` on dense columns by BLAS: the working set's columns (``Wl``, the
    intercept's column of ones last) scaled by ``sqrt(D_i)``, gathered ``SUBSET_ROWS`` rows at
    a time into a column-major block ``A``, ``H += A'A`` by ``dsyrk`` (its lower triangle in
    column-major order is the row-major upper one), then ``lam`` and the damping on the
    diagonal. Each column is read where it lies, contiguous, instead of every row's entries
    scanned for those in the set. Returns 0; 1 (``H`` untouched) when a curvature is negative
    or not a number (the square roots need ``D_i >= 0``); -2 if memory is short."""
    cdef Py_ssize_t N = X.N, i, q, j, start, rows
    cdef double* buf
    cdef double* col
    cdef const double* xj
    cdef double one = 1.0, beta = 0.0
    cdef char uplo = b'L', trans = b'T'
    cdef int nn = <int> nW, kk, ld
    for i in range(N):
        if not D[i] >= 0.0:
            return 1
    buf = <double*> malloc(SUBSET_ROWS * nW * sizeof(double) + N * sizeof(double))
    if buf == NULL:
        return -2
    cdef double* root = buf + SUBSET_ROWS * nW
    for i in range(N):
        root[i] = sqrt(D[i])
    start = 0
    while start < N:
        rows = min(SUBSET_ROWS, N - start)
        for q in range(nW):
            j = Wl[q]
            col = buf + q * rows
            if j < X.nf:
                xj = X.xv + X.ip[j] + start
                for i in range(rows):
                    col[i] = root[start + i] * xj[i]
            else:
                for i in range(rows):
                    col[i] = root[start + i]
        kk = <int> rows
        ld = <int> rows
        dsyrk(&uplo, &trans, &nn, &kk, &one, buf, &ld, &beta, H, &nn)
        beta = 1.0
        start += rows
    free(buf)
    _finish_model(H, nW, nfW, lam)
    return 0


def glmnet_run(ObjectiveKernel objective, PenaltyKernel penalty,
               const Py_ssize_t[::1] indptr, const Py_ssize_t[::1] indices,
               const double[::1] values, const Py_ssize_t[::1] rows, double[::1] w,
               double[::1] scores, Py_ssize_t max_iter, double tol, Py_ssize_t max_inner=1000,
               double eta=1.0, Py_ssize_t max_search=30, bint shrink=True,
               double[::1] trace=None, double[:, ::1] iterates=None,
               NewtonKernel dense=None, Py_ssize_t dense_after=1, Py_ssize_t subset_max=0,
               bint dense_columns=False, unsigned long long seed=0,
               double pair_floor=-1.0):
    """Run newGLMNET from ``w`` (updated in place, with its ``scores = Xw + b``).

    ``indptr``/``indices``/``values``: ``X`` by columns (CSC, the regularised features; the
    intercept, when the layout has one, is the column of ones and is not stored); with
    ``dense_columns`` instead every entry stored, column by column (``X`` in Fortran order,
    ``indptr[j] = j N``, ``indices`` empty): no row indices to read, and the column loops run
    over contiguous memory; ``rows``:
    ``0..N-1``. ``trace[k]`` and ``iterates[k]`` receive ``F`` and ``w`` after outer iteration
    ``k`` while they have room. With ``dense`` (a Newton kernel sized for the parameters) each
    outer iteration forms ``H`` explicitly with it and solves the model exactly by feature-sign
    search (:func:`_feature_sign`; coordinate descent only where that search fails). Returns
    ``(n_iter, status, F, max |pg|, sweeps)``, ``sweeps`` the coordinate sweeps plus the dense
    model's steps and the face CG's products; ``seed``: the sweep order's generator's starting
    state (0: :data:`DEFAULT_SEED`). Without ``dense``, ``subset_max > 0`` solves the
    model exactly on its working set (:func:`_form_subset`) whenever that set has at most
    ``subset_max`` coordinates; when it has more, the sweeps are helped by CG on the model's
    face (:func:`_face_cg`). ``pair_floor``: on sparse rows, the exact models' rows whose
    curvature is below it times the largest add their diagonal only (negative: ``PAIR_FLOOR``,
    :func:`_pair_floor_policy`; 0: every pair formed).
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
    if indptr.shape[0] != nf + 1 or rows.shape[0] != N or scores.shape[0] != N or \
            indices.shape[0] != (0 if dense_columns else values.shape[0]):
        raise ValueError("the columns, rows and scores must match the objective's data")
    if indptr[nf] != values.shape[0]:
        raise ValueError("indptr does not end at the number of stored values")
    cdef Py_ssize_t jc
    if dense_columns:
        for jc in range(nf + 1):
            if indptr[jc] != jc * N:
                raise ValueError("dense columns need indptr[j] = j N (X in Fortran order)")
    if max_iter < 0 or max_inner < 1 or max_search < 1 or not (tol >= 0.0) or not (eta > 0.0):
        raise ValueError("max_iter >= 0, max_inner >= 1, max_search >= 1, tol >= 0, eta > 0")
    cdef Py_ssize_t n_trace = 0 if trace is None else trace.shape[0]
    cdef Py_ssize_t n_iterates = 0
    if iterates is not None:
        if iterates.shape[1] != n:
            raise ValueError("iterates must have n_params columns")
        n_iterates = iterates.shape[0]
    if dense is not None and (dense.H.shape[0] != n or dense.D.shape[0] < N):
        raise ValueError("the dense model's Newton kernel must be sized for n_params and N")
    if subset_max < 0:
        raise ValueError("subset_max >= 0")
    if pair_floor < 0.0:
        pair_floor = PAIR_FLOOR
    cdef bint use_subset = dense is None and subset_max > 0
    cdef bint use_dense = dense is not None or use_subset
    cdef bint dense_now = use_dense and dense_after < 1
    cdef Py_ssize_t n_dense = (subset_max + 1 if use_subset else n) if use_dense else 0
    cdef Py_ssize_t nW = 0, nfW = 0
    cdef double* HW = NULL
    cdef double* gW = NULL
    cdef double* wW = NULL
    cdef double* rval = NULL
    cdef Py_ssize_t* pos = NULL
    cdef Py_ssize_t* Wl = NULL
    cdef Py_ssize_t* ridx = NULL
    cdef double* buf = <double*> malloc((4 * max(n, 1) + 5 * max(N, 1)) * sizeof(double))
    cdef double* cgb = <double*> malloc((4 * max(n, 1) + 2 * max(N, 1)) * sizeof(double))
    cdef Py_ssize_t* face = <Py_ssize_t*> malloc(max(n, 1) * sizeof(Py_ssize_t))
    cdef bint face_cg = False
    cdef char* active = <char*> malloc(2 * max(n, 1))
    cdef char* inA = active + max(n, 1)     # the dense model's membership flags
    cdef Py_ssize_t* order = <Py_ssize_t*> malloc(2 * max(n, 1) * sizeof(Py_ssize_t))
    cdef double* dbuf = NULL
    cdef _Crossing* cross = NULL
    if use_dense:
        dbuf = <double*> malloc((n_dense * n_dense + 5 * n_dense + 1) * sizeof(double))
        cross = <_Crossing*> malloc((n_dense + 1) * sizeof(_Crossing))
    if use_subset:
        HW = <double*> malloc((n_dense * n_dense + 4 * n_dense) * sizeof(double))
        pos = <Py_ssize_t*> malloc((n + 2 * n_dense) * sizeof(Py_ssize_t))
    if buf == NULL or active == NULL or order == NULL or cgb == NULL or face == NULL or \
            (use_dense and (dbuf == NULL or cross == NULL)) or \
            (use_subset and (HW == NULL or pos == NULL)):
        free(buf)
        free(cgb)
        free(face)
        free(active)
        free(order)
        free(dbuf)
        free(cross)
        free(HW)
        free(pos)
        raise MemoryError()
    cdef Py_ssize_t jj
    if use_subset:
        gW = HW + n_dense * n_dense
        wW = gW + n_dense
        rval = wW + n_dense
        Wl = pos + n
        ridx = Wl + n_dense
        for jj in range(n):
            pos[jj] = -1
    cdef double* Hp = NULL
    cdef double* Lf = dbuf
    cdef double* fu = dbuf + n_dense * n_dense if use_dense else NULL
    cdef double* fth = fu + n_dense if use_dense else NULL
    cdef double* fc = fth + n_dense if use_dense else NULL
    cdef double* fz = fc + n_dense if use_dense else NULL
    cdef double* fdl = fz + n_dense if use_dense else NULL
    cdef Py_ssize_t* fA = order + max(n, 1)
    cdef Py_ssize_t fsteps = 0
    cdef int fcode = 0
    cdef double* g = buf
    cdef double* hd = buf + n          # H_jj
    cdef double* d = buf + 2 * n
    cdef double* wt = buf + 3 * n      # trial w
    cdef double* coef = buf + 4 * n    # d loss / d score (weighted), N
    cdef double* D = coef + N          # curvature per sample, N
    cdef double* xd = D + N            # X d, N
    cdef double* st = xd + N           # trial scores, N
    cdef double* ct = st + N           # the trial's coef (swapped with coef on acceptance), N
    cdef double* swap
    cdef double loss_t = 0.0           # the loss at the scores whose derivatives coef holds
    cdef _PassJob pj
    cdef _Cols cols
    cdef double* wp = &w[0]
    cdef double* sp = &scores[0]
    cdef const Py_ssize_t* ip = &indptr[0]
    # NULL marks dense columns; sparse columns with no stored value point anywhere valid
    cdef const Py_ssize_t* ix = NULL if dense_columns else \
        (&indices[0] if indices.shape[0] else &indptr[0])
    cdef const double* xv = &values[0] if values.shape[0] else NULL
    cdef const Py_ssize_t* rp = &rows[0]
    cdef double lam = objective.lam, l1 = penalty.l1, invN = 1.0 / N
    cdef double f = 0.0, fn, loss, reg_old, l1_old, gmax = 0.0, m_prev, m_in, m_in1
    cdef double gnorm1 = 0.0, gnorm1_init = 0.0, eps_in = eta
    cdef double gj, hjj, u, z, dn, acc, delta, beta, reg_new, l1_new, v, dmax
    cdef Py_ssize_t k = 0, j, i, sweep, ls, sweeps = 0, n_sweep = 0, n_active, q, r
    cdef unsigned long long rng = SEED if seed == 0 else seed
    cdef int status = C_GLMNET_MAX_ITER
    cdef bint accepted, is_reg, have_D = False, have_hd = False, subset_over = False
    cols.ip = ip
    cols.ix = ix
    cols.xv = xv
    cols.nf = nf
    cols.N = N
    pj.D = D
    pj.g = g
    pj.hd = hd
    pj.X = cols
    pj.invN = invN
    m_prev = float("inf")
    try:
        with nogil:
            # the start's loss and derivatives; after it, each accepted trial's (its pass
            # computes them anyway)
            loss_t = objective.cy_scores_loss(rp, N, sp, coef) * invN
            while True:
                # ---- f, g and D at w from the scores
                loss = loss_t
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
                pj.s = sp
                pj.coef = coef
                # the curvature D and the model's diagonal serve coordinate descent on the data;
                # while an exact model is due (it forms its own Hessian: the whole one from
                # the scores, the working set's from D) they wait until needed -- unless the
                # working set was over its cap last time, when the sweeps will likely need
                # them too and one pass over the columns computes both sums
                have_D = not dense_now or subset_over
                have_hd = have_D
                if have_D:
                    _factor_pass(objective, &pj)
                _column_pass(objective, &pj, True, have_hd)
                if have_hd:
                    _finish_hd(&pj, n, nf, lam)
                gmax = 0.0
                gnorm1 = 0.0
                for j in range(n):
                    is_reg = j < nf
                    if is_reg:
                        g[j] = g[j] * invN + lam * wp[j]
                    else:
                        acc = 0.0
                        for i in range(N):
                            acc += coef[i]
                        g[j] = acc * invN
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
                memset(d, 0, n * sizeof(double))
                memset(xd, 0, N * sizeof(double))
                fcode = -1
                if dense_now and use_subset:
                    # ---- the exact model on the working set: the nonzeros and the zeros
                    # that violate optimality (all others stay zero in this model's solution
                    # restricted to them; the next outer iteration's gradient re-checks them)
                    nW = 0
                    for j in range(nf):
                        if wp[j] != 0.0 or fabs(g[j]) > l1:
                            if nW == subset_max:
                                nW = -1
                                break
                            Wl[nW] = j
                            nW += 1
                    subset_over = nW < 0
                    if nW >= 0:
                        nfW = nW
                        if intercept:
                            Wl[nW] = nf
                            nW += 1
                        for q in range(nW):
                            pos[Wl[q]] = q
                            gW[q] = g[Wl[q]]
                            wW[q] = wp[Wl[q]]
                        if not have_D:
                            _factor_pass(objective, &pj)
                            have_D = True
                        # dense columns by BLAS (the pair loop where a curvature is negative)
                        fcode = _form_subset_dense(&cols, D, Wl, nW, nfW, lam, HW) \
                            if dense_columns else 1
                        if fcode == 1:
                            dmax = 0.0
                            for i in range(N):
                                if D[i] > dmax:
                                    dmax = D[i]
                            fcode = _form_subset(objective, D, pos, nf, intercept, nW, nfW,
                                                 lam, HW, ridx, rval, pair_floor * dmax)
                        if fcode != 0:
                            status = C_GLMNET_NONFINITE
                            break
                        _dense_cd(HW, nW, nfW, wW, gW, l1, MODEL_TOL * gmax, DENSE_SWEEPS, fu,
                                  fz)
                        fcode = _feature_sign(HW, nW, nfW, wW, gW, l1, MODEL_TOL * gmax,
                                              10 * nW + 100, fu, Lf, fA, inA, fth, fc, fz,
                                              fdl, cross, &fsteps)
                        sweeps += fsteps
                        for q in range(nW):
                            pos[Wl[q]] = -1
                        if fcode == 0:
                            for q in range(nW):
                                d[Wl[q]] = fu[q] - wW[q]
                elif dense_now:
                    # ---- the exact model: H formed explicitly, feature-sign search; from the
                    # factors of the kept scores, on dense rows by BLAS (the Newton kernel's
                    # dsyrk), on sparse rows by its pair loop
                    _factor_rows(objective, sp, &dense.D[0], 0, N, 1.0)
                    if dense_columns:
                        fcode = dense._form(objective, rp, N, NULL)
                    else:
                        # the largest factor sets the floor under which a row adds its
                        # diagonal only
                        dmax = 0.0
                        fcode = 0
                        for i in range(N):
                            if not isfinite(dense.D[i]):
                                fcode = -1
                                break
                            if dense.D[i] > dmax:
                                dmax = dense.D[i]
                        if fcode == 0:
                            fcode = dense._form(objective, rp, N, NULL, pair_floor * dmax)
                    if fcode != 0:
                        status = C_GLMNET_NONFINITE
                        break
                    Hp = &dense.H[0, 0]
                    _finish_model(Hp, n, 0, 0.0)     # lam is in the Newton kernel's H
                    # a few sweeps on the model for its sign pattern, then the exact solve
                    _dense_cd(Hp, n, nf, wp, g, l1, MODEL_TOL * gmax, DENSE_SWEEPS, fu, fz)
                    fcode = _feature_sign(Hp, n, nf, wp, g, l1, MODEL_TOL * gmax,
                                          10 * n + 100, fu, Lf, fA, inA, fth, fc, fz, fdl,
                                          cross, &fsteps)
                    sweeps += fsteps
                    if fcode == 0:
                        for j in range(n):
                            d[j] = fu[j] - wp[j]
                if fcode == 0:
                    # X d from the exact model's step, column by column
                    for j in range(n):
                        if d[j] != 0.0:
                            _col_axpy(&cols, j, d[j], xd)
                # the set over its cap, or the search stopped short (a dependent column,
                # rounding): coordinate descent on the model, from zero, as without it
                # ---- coordinate descent on the quadratic model (none after an exact solve)
                if fcode != 0:
                    if not have_D:
                        _factor_pass(objective, &pj)
                        have_D = True
                    if not have_hd:
                        _column_pass(objective, &pj, False, True)
                        _finish_hd(&pj, n, nf, lam)
                        have_hd = True
                n_active = 0
                for j in range(n):
                    if active[j]:
                        order[n_active] = j
                        n_active += 1
                n_sweep = 0
                # an exact model was due but out of reach (its working set over the cap, or
                # its search stopped short): conjugate gradients on the model's face help the
                # sweeps along its flat directions
                face_cg = dense_now and fcode != 0
                for sweep in range(max_inner if fcode != 0 else 0):
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
                        acc = _col_wdot(&cols, j, D, xd)
                        gj = g[j] + acc + ((lam + NU) if is_reg else NU) * d[j]
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
                            _col_axpy(&cols, j, z, xd)
                    if m_in1 <= eps_in * gnorm1_init or m_in <= 0.5 * tol:
                        break
                    if face_cg and n_sweep >= CG_AFTER and (n_sweep - CG_AFTER) % CG_EVERY == 0:
                        sweeps += _face_cg(&cols, n, active, wp, d, xd, g, hd, D, lam, l1,
                                           CG_TOL * eps_in * gnorm1_init, CG_STEPS, face, cgb)
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
                    # the trial's loss pass computes its derivatives anyway: kept, they are
                    # the next outer iteration's (no second pass over the scores)
                    loss_t = objective.cy_scores_loss(rp, N, st, ct) * invN
                    fn = loss_t + 0.5 * lam * reg_new + l1 * l1_new
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
                swap = coef
                coef = ct
                ct = swap
                if n_sweep == 1:
                    eps_in *= 0.25
                if use_dense and n_sweep > dense_after:
                    dense_now = True
                k += 1
    finally:
        free(cgb)
        free(face)
        free(buf)
        free(active)
        free(order)
        free(dbuf)
        free(cross)
        free(HW)
        free(pos)
    return int(k), int(status), float(f), float(gmax), int(sweeps)
