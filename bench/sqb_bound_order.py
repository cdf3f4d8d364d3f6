"""Does the order in which Algorithm 1 (paper 004) visits the outputs change how tight the bound is?

    OPENBLAS_NUM_THREADS=1 python bench/sqb_bound_order.py [dna] [--max-iter 200]

The bound majorises Z_x for any order of the outputs y in Omega, and may use a different order at
every expansion point. Visiting them in decreasing order of score gives the later (small) terms
weights tanh(l/2)/(2l) with l = log(alpha_y / z) large and negative, instead of the weight 1/4
that two comparable small terms get when they meet first. This script measures what that does
to the full-batch bound iteration on a softmax problem (T = S = all data, exact solve,
``w <- w - (Sigma / N + lam I)^{-1} grad F``, lam = 1/N), in pure NumPy: iterations to 1e-2 and
1e-3 relative excess cost for the natural order and the decreasing-score order, and, for random
scores, the trace of the per-sample curvature (bound vs Hessian). Dense d*K x d*K solves: small
problems only (dna: 540 parameters).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import scipy.optimize as so

sys.path.insert(0, str(Path(__file__).parent))
from _sqb_data import load  # noqa: E402


def bound_weight(a: np.ndarray) -> np.ndarray:
    """tanh(l/2) / (2 l), 1/4 at 0 (elementwise)."""
    a = np.abs(a)
    out = np.full_like(a, 0.25)
    m = a > 1e-8
    out[m] = np.tanh(a[m] / 2) / (2 * a[m])
    return out


def bound_curvatures(S: np.ndarray, descending: bool) -> np.ndarray:
    """Per-sample K x K curvature of Algorithm 1 in class space (f(y) = e_y), scores S (N x K)."""
    N, K = S.shape
    idx = np.arange(N)
    order = np.argsort(-S, axis=1) if descending else np.tile(np.arange(K), (N, 1))
    M = np.zeros((N, K, K))
    logz = S[idx, order[:, 0]].copy()
    q = np.zeros((N, K))
    q[idx, order[:, 0]] = 1.0
    for t in range(1, K):
        y = order[:, t]
        l = S[idx, y] - logz
        d = -q.copy()
        d[idx, y] += 1.0
        M += bound_weight(l)[:, None, None] * d[:, :, None] * d[:, None, :]
        rho = 1.0 / (1.0 + np.exp(-l))
        q *= (1.0 - rho)[:, None]
        q[idx, y] += rho
        logz = np.logaddexp(logz, S[idx, y])
    return M


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dataset", nargs="?", default="dna")
    ap.add_argument("--max-iter", type=int, default=200)
    a = ap.parse_args()

    rng = np.random.default_rng(0)
    print("trace of one sample's curvature, K = 10, scores N(0, scale^2): natural / decreasing "
          "order / Hessian")
    for scale in (0.5, 2.0, 5.0, 10.0):
        s = rng.normal(size=(1, 10)) * scale
        p = np.exp(s[0] - s.max())
        p /= p.sum()
        H = np.diag(p) - np.outer(p, p)
        tn = np.trace(bound_curvatures(s, False)[0])
        td = np.trace(bound_curvatures(s, True)[0])
        print(f"  scale {scale:4.1f}: {tn:.3g} / {td:.3g} / {np.trace(H):.3g}")

    d = load(a.dataset)
    X = d["X"].toarray() if hasattr(d["X"], "toarray") else np.asarray(d["X"], dtype=float)
    classes = np.unique(d["y"])
    Y = np.searchsorted(classes, d["y"])
    N, n = X.shape
    K = len(classes)
    lam = 1.0 / N

    def F(w: np.ndarray) -> tuple[float, np.ndarray]:
        S = X @ w.reshape(n, K)
        m = S.max(axis=1, keepdims=True)
        lz = m[:, 0] + np.log(np.exp(S - m).sum(axis=1))
        f = float((lz - S[np.arange(N), Y]).mean() + lam / 2 * w @ w)
        P = np.exp(S - lz[:, None])
        P[np.arange(N), Y] -= 1.0
        return f, (X.T @ P / N).ravel() + lam * w

    opt = so.minimize(F, np.zeros(n * K), jac=True, method="L-BFGS-B",
                      options={"maxiter": 5000, "gtol": 1e-11, "ftol": 0.0})
    F_star = float(opt.fun)
    print(f"\n{a.dataset}: N = {N}, {n} features, K = {K}, F* = {F_star:.10g}")
    for descending in (False, True):
        w = np.zeros(n * K)
        excess = []
        for _ in range(a.max_iter):
            f, g = F(w)
            excess.append((f - F_star) / F_star)
            if excess[-1] < 1e-3:
                break
            M = bound_curvatures(X @ w.reshape(n, K), descending)
            Sig = np.einsum("ij,il,ikm->jklm", X, X, M, optimize=True).reshape(n * K, n * K) / N
            w = w - np.linalg.solve(Sig + lam * np.eye(n * K), g)
        e = np.array(excess)
        to = {tol: (int(np.argmax(e < tol)) if (e < tol).any() else None) for tol in (1e-2, 1e-3)}
        print(f"  {'decreasing-score' if descending else 'natural'} order: iterations to 1e-2: "
              f"{to[1e-2]}, to 1e-3: {to[1e-3]} (last excess {e[-1]:.3g})")


if __name__ == "__main__":
    main()
