"""Pure-NumPy reference twins of the compiled composite solvers (``sqnopt.composite``).

:func:`owlqn_numpy` is written from Andrew & Gao (ICML 2007, Algorithm 1) with whole-array
NumPy operations: the orthant as ``np.where`` of signs, the projection as a mask, the L-BFGS
direction from the dense product form of
:class:`~sqnopt.curvature.reference.LBFGSKernelNumPy` (not the two-loop recursion).
:func:`glmnet_numpy` follows Yuan, Ho & Lin (JMLR 2012, Algorithm 3) with SciPy column slices,
:func:`gram_glmnet_numpy` its outer loop on a quadratic's Gram matrix. Given the same objective
kernel (or matrix), each follows its compiled loop iterate by iterate.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sqnopt.curvature.reference import LBFGSKernelNumPy
from sqnopt.interfaces import CURVATURE_ERROR

FloatArray = NDArray[np.float64]

__all__ = ["glmnet_numpy", "gram_glmnet_numpy", "owlqn_numpy"]

#: the status codes of the compiled loop
MAX_ITER, GTOL, FTOL, PRECISION, NONFINITE = 0, 1, 2, 3, 4


def owlqn_numpy(objective: Any, penalty: Any, w0: FloatArray, *, memory: int = 10,
                max_iter: int = 100, tol: float = 0.0, ftol: float = 0.0,
                max_search: int = 40, c1: float = 1e-4
                ) -> tuple[FloatArray, list[float], list[FloatArray], int]:
    """OWL-QN from ``w0`` on a bound objective kernel (``full_gradient``, its ``lam`` the L2
    part) and a penalty kernel (``l1_value``, ``pseudo_gradient``, ``n_reg``, ``block``).

    Returns ``(w, objective values, iterates, status)``, one value and iterate per iteration
    (the start included)."""
    n = w0.shape[0]
    reg = (np.arange(n) % penalty.block) < penalty.n_reg
    lbfgs = LBFGSKernelNumPy(n, memory, 1.0, min_curvature=0.0, on_bad_pair="skip",
                             damping=0.2, on_nonfinite="reset")

    def fg(w: FloatArray) -> tuple[float, FloatArray]:
        g = np.zeros(n)
        return float(objective.full_gradient(w, g)) + float(penalty.l1_value(w)), g

    def pseudo(w: FloatArray, g: FloatArray) -> FloatArray:
        out = np.zeros(n)
        penalty.pseudo_gradient(w, g, out)
        return out

    w = np.array(w0, dtype=np.float64)
    f, g = fg(w)
    if not math.isfinite(f):
        return w, [f], [w.copy()], NONFINITE
    pg = pseudo(w, g)
    values, iterates = [f], [w.copy()]
    k = 0
    while True:
        gmax = float(np.max(np.abs(pg)))
        if not math.isfinite(gmax):
            return w, values, iterates, NONFINITE
        if gmax <= tol:
            return w, values, iterates, GTOL
        if k >= max_iter:
            return w, values, iterates, MAX_ITER
        d = np.zeros(n)
        lbfgs.direction(pg, d)
        d = np.where(d * pg > 0.0, d, 0.0)                  # sign alignment
        dd = float(np.sum(d * pg))
        steep = len(lbfgs.pairs) == 0
        if not (dd > 0.0 and math.isfinite(dd)):
            lbfgs.reset()
            d, steep = pg.copy(), True
        t = min(1.0, 1.0 / math.sqrt(float(pg @ pg))) if steep else 1.0
        xi = np.where(w != 0.0, np.sign(w), -np.sign(pg))    # the orthant
        for _ in range(max_search):
            wn = w - t * d
            wn = np.where(reg & (wn * xi <= 0.0), 0.0, wn)   # projected onto the orthant
            fn, gn = fg(wn)
            if math.isfinite(fn) and fn <= f - c1 * float(np.sum(pg * (w - wn))):
                break
            t *= 0.5
        else:
            if steep:
                return w, values, iterates, PRECISION
            lbfgs.reset()
            continue
        if lbfgs.update_pair(wn - w, gn - g) == CURVATURE_ERROR:
            lbfgs.reset()
        f_old, w, g, f = f, wn, gn, fn
        pg = pseudo(w, g)
        k += 1
        values.append(f)
        iterates.append(w.copy())
        if not f < f_old:
            return w, values, iterates, PRECISION
        if ftol > 0.0 and f_old - f <= ftol * max(abs(f_old), abs(f), 1.0):
            return w, values, iterates, FTOL


def _violation(w: float, g: float, l1: float, reg: bool) -> float:
    if not reg:
        return abs(g)
    if w != 0.0:
        return abs(g + l1 * math.copysign(1.0, w))
    return max(abs(g) - l1, 0.0)


_MASK = (1 << 64) - 1


def _xorshift(state: list[int]) -> int:
    """Marsaglia's xorshift64 (13, 7, 17) on Python integers (the compiled loop's generator)."""
    x = state[0]
    x ^= (x << 13) & _MASK
    x ^= x >> 7
    x ^= (x << 17) & _MASK
    state[0] = x
    return x


#: the dense model's constants (those of the compiled loop)
RHO, PIVOT, MODEL_TOL, DENSE_SWEEPS, PAIR_FLOOR = 1e-8, 1e-14, 1e-9, 10, 1e-6
#: the face CG's policy (``sqnopt.composite._glmnet``'s ``CG_AFTER``, ``CG_EVERY``, ``CG_STEPS``,
#: ``CG_TOL``)
CG_AFTER, CG_EVERY, CG_STEPS, CG_TOL = 3, 3, 30, 0.1


def _dense_cd_numpy(H: FloatArray, nf: int, w: FloatArray, g: FloatArray, l1: float,
                    eps: float, sweeps: int) -> FloatArray:
    """Cyclic coordinate descent on the dense model ``q(u - w)`` from ``u = w`` (the compiled
    ``_dense_cd``): each coordinate to its exact 1-D minimiser, ``H(u - w)`` kept."""
    n = w.shape[0]
    u, hd = w.copy(), np.zeros(n)
    for _ in range(sweeps):
        mx = 0.0
        for j in range(n):
            gj, hjj, uj = g[j] + hd[j], H[j, j], u[j]
            mx = max(mx, _violation(uj, gj, l1, j < nf))
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
                hd += z * H[:, j]
        if mx <= eps:
            break
    return u


def _feature_sign_numpy(H: FloatArray, nf: int, w: FloatArray, g: FloatArray, l1: float,
                        eps: float, max_steps: int, u0: FloatArray) -> tuple[int, FloatArray]:
    """Feature-sign search (Lee, Battle, Raina & Ng, NIPS 2006) on the dense model
    ``(1/2) u'Hu - c'u + l1 ||u_reg||_1``, ``c = Hw - g``, from ``u0`` (the compiled
    ``_feature_sign``, its systems solved by Cholesky from SciPy). Returns ``(code, u)``:
    0 at the minimiser, -1 on a pivot that is not positive, -2 if it stopped short."""
    import scipy.linalg as sl

    n = w.shape[0]
    c = H @ w - g
    u = u0.copy()
    A = [j for j in range(n) if j >= nf or u[j] != 0.0]
    theta = np.where(np.arange(n) < nf, np.sign(u), 0.0)
    solve = True
    for _ in range(max_steps):
        if solve and A:
            idx = np.asarray(A)
            HA = H[np.ix_(idx, idx)]
            try:
                L = np.linalg.cholesky(HA)
            except np.linalg.LinAlgError:
                return -1, u
            if np.any(np.diag(L) ** 2 <= PIVOT * np.diag(HA)):
                return -1, u
            z = sl.cho_solve((L, True), c[idx] - l1 * theta[idx])
            ua = u[idx]
            dl = z - ua
            a1 = float((HA @ ua - c[idx]) @ dl)
            a2 = float(dl @ HA @ dl)
            reg = idx < nf
            phi0 = l1 * float(np.sum(np.abs(ua[reg])))
            v1 = a1 + 0.5 * a2 + l1 * float(np.sum(np.abs(z[reg])))
            cross = sorted((float(ua[r] / (ua[r] - z[r])), r) for r in range(len(A))
                           if reg[r] and ua[r] * z[r] < 0.0)
            best, tbest, rc = math.inf, 1.0, -1
            for tt, r in cross:
                v = a1 * tt + 0.5 * a2 * tt * tt + l1 * float(np.sum(np.abs(ua + tt * dl)[reg]))
                if not v < best:
                    break
                best, tbest, rc = v, tt, r
            if not best <= v1:
                best, tbest, rc = v1, 1.0, -1
            if not best < phi0:
                if rc < 0 and best - phi0 <= 1e-12 * (abs(phi0) + abs(a1) + abs(a2)):
                    solve = False
                else:
                    return -2, u
        if solve and A:
            u[idx] = ua + tbest * dl
            if rc >= 0:
                u[idx[rc]] = 0.0
            moved = rc >= 0
            for r in range(len(A) - 1, -1, -1):
                a = A[r]
                if a >= nf:
                    continue
                if u[a] == 0.0:
                    del A[r]
                    moved = True
                    continue
                sg = 1.0 if u[a] > 0.0 else -1.0
                if sg != theta[a]:
                    theta[a] = sg
                    moved = True
            if moved:
                continue
        inA = set(A)
        best, jbest, sg = eps, -1, 0.0
        for j in range(nf):
            if j in inA:
                continue
            s = float(H[j, A] @ u[A]) - c[j] if A else -c[j]
            v = abs(s) - l1
            if v > best:
                best, jbest, sg = v, j, s
        if jbest < 0:
            return 0, u
        theta[jbest] = -1.0 if sg > 0.0 else 1.0
        A.append(jbest)
        solve = True
    return -2, u


def _face_cg_numpy(cols: list[tuple[Any, Any]], nf: int, active: list[int], w: FloatArray,
                   d: FloatArray, xd: FloatArray, g: FloatArray, h: FloatArray,
                   D: FloatArray, lam: float, l1: float, tol: float, max_steps: int
                   ) -> tuple[FloatArray, FloatArray]:
    """The twin of ``_face_cg``: Jacobi-preconditioned CG on the model's face (the active
    coordinates with ``w + d != 0``, and the intercept), each step cut at the face's boundary
    (the coordinate reaching zero leaves the face, CG restarts). Returns ``(d, xd)``."""
    nu = 1e-12
    d, xd = d.copy(), xd.copy()
    face: list[int] = []
    r: list[float] = []
    for j in active:
        u = w[j] + d[j]
        if j < nf and u == 0.0:
            continue
        ix, xv = cols[j]
        gj = g[j] + float((D[ix] * xd[ix]) @ xv)
        if j < nf:
            gj += (lam + nu) * d[j] + (l1 if u > 0.0 else -l1)
        else:
            gj += nu * d[j]
        face.append(j)
        r.append(gj)

    def restart() -> tuple[FloatArray, FloatArray, float, float]:
        rr = np.array(r)
        z = rr / h[face] if face else np.zeros(0)
        return rr, -z, float(rr @ z), float(np.sum(np.abs(rr)))

    ra, p, rz, r1 = restart()
    steps = 0
    while steps < max_steps and face and r1 > tol and rz > 0.0:
        steps += 1
        t = np.zeros(xd.shape[0])
        for a, j in enumerate(face):
            ix, xv = cols[j]
            t[ix] += p[a] * xv
        hp = np.array([float((D[cols[j][0]] * t[cols[j][0]]) @ cols[j][1])
                       + ((lam if j < nf else 0.0) + nu) * p[a] for a, j in enumerate(face)])
        php = float(p @ hp)
        if not php > 0.0:
            break
        alpha = rz / php
        amax, hit = math.inf, -1
        for a, j in enumerate(face):
            if j < nf:
                u = w[j] + d[j]
                if u * p[a] < 0.0 and -u / p[a] < amax:
                    amax, hit = -u / p[a], a
        if amax <= alpha:
            alpha = amax
        else:
            hit = -1
        d[face] += alpha * p
        ra = ra + alpha * hp
        xd += alpha * t
        if hit >= 0:
            j = face[hit]
            fix = -w[j] - d[j]
            d[j] = -w[j]
            ix, xv = cols[j]
            xd[ix] += fix * xv
            r = list(ra)
            face[hit], r[hit] = face[-1], r[-1]
            face.pop()
            r.pop()
            ra, p, rz, r1 = restart()
            continue
        z = ra / h[face]
        rz_new, r1 = float(ra @ z), float(np.sum(np.abs(ra)))
        p = -z + (rz_new / rz) * p
        rz = rz_new
    return d, xd

def _model_hessian(X: Any, D: FloatArray, floor: float) -> FloatArray:
    """``X' diag(D) X`` (``X`` SciPy sparse) with the off-diagonal entries only from the rows
    whose ``D_i`` is not in ``[0, floor max D)``, the diagonal from every row: the compiled
    loop's formation, which skips the pairs of the rows of negligible curvature."""
    import scipy.sparse as sp

    flat = (D >= 0.0) & (D < floor * float(np.max(D, initial=0.0)))
    kept = np.where(flat, 0.0, D)
    H = np.asarray((X.T @ sp.diags(kept) @ X).todense())
    H[np.diag_indices_from(H)] = np.asarray(X.multiply(X).T @ D).ravel()
    return H


def glmnet_numpy(objective: Any, penalty: Any, X: Any, w0: FloatArray, *, max_iter: int = 100,
                 tol: float = 0.0, max_inner: int = 1000, eta: float = 1.0, max_search: int = 30,
                 shrink: bool = True, dense: bool = False, dense_after: int = 1,
                 subset_max: int = 0, seed: int = 0, pair_floor: float = PAIR_FLOOR
                 ) -> tuple[FloatArray, list[float], list[FloatArray], int]:
    """newGLMNET (Yuan, Ho & Lin 2012, Algorithm 3) from ``w0`` on a bound one-score
    objective kernel (``scores_loss``, ``hessian_factors``), a penalty kernel (``l1``,
    ``n_reg``) and ``X`` (SciPy sparse or dense, the regularised features): the twin of
    ``sqnopt.composite._glmnet``, with the model's coordinate loop in Python, columns as SciPy
    slices and the curvature from the objective's Hessian factors at ``w``. With ``dense``
    the model is formed as a matrix and solved exactly (dense coordinate descent, then
    feature-sign search) from the first outer iteration after one whose coordinate descent
    took more than ``dense_after`` sweeps (``0``: from the start); with ``subset_max`` instead,
    the model is solved so on its working set (the nonzeros and the violating zeros) when
    that holds at most ``subset_max`` coordinates; when that exact model is due but its set is
    larger, the sweeps are helped by conjugate gradients on the model's face
    (:func:`_face_cg_numpy`). ``seed``: the sweep order's generator's state (0: the compiled
    loop's default). On sparse ``X`` the exact models' off-diagonal entries come from the rows
    whose curvature is at least ``pair_floor`` times the largest (:func:`_model_hessian`).

    Returns ``(w, objective values, iterates, status)``, one per outer iteration."""
    import scipy.sparse as sp

    Xc = sp.csc_matrix(X, dtype=np.float64)
    sparse = sp.issparse(X)
    N, nf = Xc.shape
    n = w0.shape[0]
    intercept = n == nf + 1
    lam, l1 = float(objective.lam), float(penalty.l1)
    nu, sigma = 1e-12, 0.01
    rows = np.arange(N, dtype=np.intp)
    cols = [(Xc.indices[Xc.indptr[j]:Xc.indptr[j + 1]], Xc.data[Xc.indptr[j]:Xc.indptr[j + 1]])
            for j in range(nf)]
    if intercept:
        cols.append((rows, np.ones(N)))
    w = np.array(w0, dtype=np.float64)

    def scores_of(w: FloatArray) -> FloatArray:
        s = np.asarray(Xc @ w[:nf]).ravel()
        return s + w[nf] if intercept else s

    def value(s: FloatArray, w: FloatArray) -> float:
        loss, _ = objective.scores_loss(rows, s)
        r = w[:nf]
        out: float = float(loss) / N + 0.5 * lam * float(r @ r) + l1 * float(np.sum(np.abs(r)))
        return out

    s = scores_of(w)
    values: list[float] = []
    iterates: list[FloatArray] = []
    m_prev = math.inf
    eps_in, gnorm1_init = eta, 0.0
    rng = [seed or 0x9E3779B97F4A7C15]
    dense_now = (dense or subset_max > 0) and dense_after < 1
    k = 0
    while True:
        loss, coef = objective.scores_loss(rows, s)
        coef = coef.ravel()
        f = value(s, w)
        if not math.isfinite(f):
            return w, values, iterates, NONFINITE
        values.append(f)
        iterates.append(w.copy())
        D = objective.hessian_factors(w, rows) / N
        g = np.array([float(coef[ix] @ xv) / N for ix, xv in cols])
        g[:nf] += lam * w[:nf]
        h = np.array([float(D[ix] @ (xv * xv)) for ix, xv in cols])
        h[:nf] += lam
        h += nu
        viol = [_violation(w[j], g[j], l1, j < nf) for j in range(n)]
        gmax = max(viol)
        if k == 0:
            gnorm1_init = float(np.sum(viol))
        if gmax <= tol:
            return w, values, iterates, GTOL
        if k >= max_iter:
            return w, values, iterates, MAX_ITER
        active = [j for j in range(n) if not (shrink and j < nf and w[j] == 0.0
                                               and abs(g[j]) < l1 - m_prev / N)]
        face_order = sorted(active)         # the face CG's order (the sweeps shuffle theirs)
        m_prev = gmax
        d = np.zeros(n)
        xd = np.zeros(N)
        code = -1
        if dense_now and not dense:
            W = [j for j in range(nf) if w[j] != 0.0 or abs(g[j]) > l1]
            if len(W) <= subset_max:
                nfw = len(W)
                W += [nf] if intercept else []
                X1 = sp.hstack([Xc, sp.csc_matrix(np.ones((N, 1)))]).tocsc() if intercept \
                    else Xc
                H = _model_hessian(X1[:, W], D, pair_floor if sparse else 0.0)
                H[np.arange(nfw), np.arange(nfw)] += lam
                H[np.arange(len(W)), np.arange(len(W))] += nu + RHO * float(np.max(np.diag(H)))
                gw, ww = g[W], w[W]
                u = _dense_cd_numpy(H, nfw, ww, gw, l1, MODEL_TOL * gmax, DENSE_SWEEPS)
                code, u = _feature_sign_numpy(H, nfw, ww, gw, l1, MODEL_TOL * gmax,
                                              10 * len(W) + 100, u)
                if code == 0:
                    d[W] = u - ww
                    xd = np.asarray(X1 @ d).ravel()
        elif dense_now:
            X1 = sp.hstack([Xc, sp.csc_matrix(np.ones((N, 1)))]).tocsc() if intercept else Xc
            H = _model_hessian(X1, D, pair_floor if sparse else 0.0)
            H[np.arange(nf), np.arange(nf)] += lam
            H[np.arange(n), np.arange(n)] += nu + RHO * float(np.max(np.diag(H)))
            u = _dense_cd_numpy(H, nf, w, g, l1, MODEL_TOL * gmax, DENSE_SWEEPS)
            code, u = _feature_sign_numpy(H, nf, w, g, l1, MODEL_TOL * gmax, 10 * n + 100, u)
            if code == 0:
                d = u - w
                xd = np.asarray(X1 @ d).ravel()
        n_sweep = 0
        face_cg = dense_now and code != 0       # an exact model was due but out of reach
        for _ in range(max_inner if code != 0 else 0):
            n_sweep += 1
            m_in, m_in1 = 0.0, 0.0
            for q in range(len(active) - 1):                # Fisher-Yates
                r = q + _xorshift(rng) % (len(active) - q)
                active[q], active[r] = active[r], active[q]
            for j in active:
                ix, xv = cols[j]
                reg = j < nf
                gj = g[j] + float((D[ix] * xd[ix]) @ xv) + ((lam if reg else 0.0) + nu) * d[j]
                u = w[j] + d[j]
                v = _violation(u, gj, l1, reg)
                m_in, m_in1 = max(m_in, v), m_in1 + v
                if not reg:
                    dn = d[j] - gj / h[j]
                elif gj + l1 <= h[j] * u:
                    dn = d[j] - (gj + l1) / h[j]
                elif gj - l1 >= h[j] * u:
                    dn = d[j] - (gj - l1) / h[j]
                else:
                    dn = -w[j]                       # w + d: an exact zero
                z = dn - d[j]
                if abs(z) > 10.0:                           # the move's limit
                    z = math.copysign(10.0, z)
                    dn = d[j] + z
                if z != 0.0:
                    d[j] = dn
                    xd[ix] += z * xv
            if m_in1 <= eps_in * gnorm1_init or m_in <= 0.5 * tol:
                break
            if face_cg and n_sweep >= CG_AFTER and (n_sweep - CG_AFTER) % CG_EVERY == 0:
                d, xd = _face_cg_numpy(cols, nf, face_order, w, d, xd, g, h, D, lam, l1,
                                       CG_TOL * eps_in * gnorm1_init, CG_STEPS)
        delta = float(g @ d) + l1 * (float(np.sum(np.abs(w[:nf] + d[:nf])))
                                     - float(np.sum(np.abs(w[:nf]))))
        beta = 1.0
        for _ in range(max_search):
            wt = w + beta * d
            st = s + beta * xd
            fn = value(st, wt)
            if math.isfinite(fn) and fn - f <= sigma * beta * delta:
                break
            beta *= 0.5
        else:
            return w, values, iterates, PRECISION
        w, s = wt, st
        if n_sweep == 1:
            eps_in *= 0.25
        if (dense or subset_max > 0) and n_sweep > dense_after:
            dense_now = True
        k += 1


def gram_glmnet_numpy(H: FloatArray, c: FloatArray, yy: float, lam: float, l1: float, nf: int,
                      w0: FloatArray, *, tol: float = 0.0, max_iter: int = 100
                      ) -> tuple[FloatArray, list[float], list[FloatArray], int]:
    """newGLMNET's outer loop on a quadratic ``F(w) = (1/2) w'Hw - c'w + yy/2 + (lam/2)
    ||w_reg||^2 + l1 ||w_reg||_1`` given by its matrix (the twin of
    ``sqnopt.composite.gram_newglmnet``): at each iterate the gradient from ``H``, then the
    exact model -- ``H + lam I_reg`` damped by ``nu + RHO max_j`` of its diagonal -- minimised
    by dense coordinate descent and, unless the sweeps reached the tolerance, feature-sign
    search, its minimiser the next iterate (no line search: the damped model majorises
    ``F``). Returns ``(w, objective values, iterates, status)``, one value and iterate per
    outer iteration (the start first)."""
    n = w0.shape[0]
    M = np.array(H, dtype=np.float64)
    M[np.arange(nf), np.arange(nf)] += lam
    M[np.arange(n), np.arange(n)] += 1e-12 + RHO * float(np.max(np.diag(M)))
    w = np.array(w0, dtype=np.float64)
    values: list[float] = []
    iterates: list[FloatArray] = []
    f_prev = math.inf
    for k in range(max_iter + 1):
        Hw = H @ w
        reg = w[:nf]
        f = (0.5 * float(w @ Hw) - float(c @ w) + 0.5 * yy + 0.5 * lam * float(reg @ reg)
             + l1 * float(np.sum(np.abs(reg))))
        if not math.isfinite(f):
            return w, values, iterates, NONFINITE
        if k > 0 and not f < f_prev:
            return iterates[-1], values, iterates, PRECISION
        values.append(f)
        iterates.append(w.copy())
        g = Hw - c
        g[:nf] += lam * reg
        gmax = max(_violation(float(w[j]), float(g[j]), l1, j < nf) for j in range(n))
        if gmax <= tol:
            return w, values, iterates, GTOL
        if k == max_iter:
            break
        u = _dense_cd_numpy(M, nf, w, g, l1, MODEL_TOL * gmax, DENSE_SWEEPS)
        G = g + M @ (u - w)
        if max(_violation(float(u[j]), float(G[j]), l1, j < nf) for j in range(n)) \
                > MODEL_TOL * gmax:
            code, u = _feature_sign_numpy(M, nf, w, g, l1, MODEL_TOL * gmax, 10 * n + 100, u)
            if code != 0:
                raise RuntimeError(f"the feature-sign search stopped short (code {code})")
        f_prev = f
        w = u
    return w, values, iterates, MAX_ITER
