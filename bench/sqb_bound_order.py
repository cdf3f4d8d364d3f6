"""Does the order in which Algorithm 1 (paper 004) visits the outputs change how tight the bound is?

    OPENBLAS_NUM_THREADS=1 python bench/sqb_bound_order.py [dna] [--max-iter 200]

The bound majorises Z_x for any order of the outputs y in Omega, and may use a different order at
every expansion point. Visiting them in decreasing order of score gives the later (small) terms
weights tanh(l/2)/(2l) with l = log(alpha_y / z) large and negative, instead of the weight 1/4
that two comparable small terms get when they meet first. This script measures what that does
to the full-batch bound iteration on a softmax problem (T = S = all data, exact solve,
``w <- w - (Sigma / N + lam I)^{-1} grad F``, lam = 1/N), in pure NumPy: iterations to 1e-2 and
1e-3 relative excess cost for the natural order and the decreasing-score order, and, for random
scores, the trace of the per-sample curvature (bound vs Hessian). The bound is the NumPy reference
of Algorithm 1 (``sqnopt.objectives.reference.bound_numpy``) fed the outputs in the chosen order;
the objective, its gradient and F* (scipy L-BFGS-B) are those of ``bench/paper004_sqb.py``.
Dense d*K x d*K solves: small problems only (dna: 540 parameters).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from paper004_sqb import Problem, lbfgs_scipy  # noqa: E402

from sqnopt.objectives.reference import bound_numpy  # noqa: E402


def class_curvature(s: np.ndarray, order: np.ndarray) -> np.ndarray:
    """K x K curvature ``S S'`` of Algorithm 1 for one sample in class space (``f(y) = e_y``,
    scores ``s``), visiting the outputs in ``order`` (``bound_numpy``, the NumPy reference)."""
    K = s.shape[0]
    _, _, S = bound_numpy(np.eye(K)[order], s[order])
    out: np.ndarray = S @ S.T
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dataset", nargs="?", default="dna")
    ap.add_argument("--max-iter", type=int, default=200)
    a = ap.parse_args()

    rng = np.random.default_rng(0)
    print("trace of one sample's curvature, K = 10, scores N(0, scale^2): natural / decreasing "
          "order / Hessian")
    for scale in (0.5, 2.0, 5.0, 10.0):
        s = rng.normal(size=10) * scale
        p = np.exp(s - s.max())
        p /= p.sum()
        tn = np.trace(class_curvature(s, np.arange(10)))
        td = np.trace(class_curvature(s, np.argsort(-s)))
        th = np.trace(np.diag(p) - np.outer(p, p))
        print(f"  scale {scale:4.1f}: {tn:.3g} / {td:.3g} / {th:.3g}")

    prob = Problem(a.dataset, None, 0)          # the paper-004 split, objective and lam = 1/N
    if not prob.multiclass or prob.n_params != prob.K * prob.X.shape[1]:
        raise SystemExit("needs a multiclass data set without intercept (softmax, K blocks)")
    X = prob.X.toarray() if hasattr(prob.X, "toarray") else np.asarray(prob.X, dtype=float)
    N, n, K = X.shape[0], X.shape[1], prob.K
    F_star, _ = lbfgs_scipy(prob, maxfun=20000, gtol=1e-11)
    print(f"\n{a.dataset}: N = {N}, {n} features, K = {K}, F* = {F_star:.10g}")
    for descending in (False, True):
        w = np.zeros(prob.n_params)             # parameter layout: w[k n + j]
        excess = []
        for _ in range(a.max_iter):
            g = np.zeros_like(w)
            f = prob.kernel.full_gradient(w, g)
            excess.append((f - F_star) / F_star)
            if excess[-1] < 1e-3:
                break
            scores = X @ w.reshape(K, n).T
            M = np.stack([class_curvature(si, np.argsort(-si) if descending else np.arange(K))
                          for si in scores])
            Sig = np.einsum("ikm,ij,il->kjml", M, X, X, optimize=True).reshape(K * n, K * n) / N
            w = w - np.linalg.solve(Sig + prob.lam * np.eye(K * n), g)
        e = np.array(excess)
        to = {tol: (int(np.argmax(e < tol)) if (e < tol).any() else None) for tol in (1e-2, 1e-3)}
        print(f"  {'decreasing-score' if descending else 'natural'} order: iterations to 1e-2: "
              f"{to[1e-2]}, to 1e-3: {to[1e-3]} (last excess {e[-1]:.3g})")


if __name__ == "__main__":
    main()
