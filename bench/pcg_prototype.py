"""NumPy prototype: does a diagonal preconditioner cut truncated Newton's CG products?

L2-logistic on a race problem (``alpha = 1/N``, no intercept), truncated Newton on the whole
data set: CG to the relative residual ``--forcing`` (Euclidean, as
:class:`sqnopt.TruncatedNewton`), at most 50 products, Armijo backtracking from the unit step.
Preconditioners ``M = a diag(H) + (1 - a) lam`` (Hsia, Chiang & Lin, ACML 2018, mix the
diagonal with the regulariser's Hessian) for ``a`` in ``--alphas`` (``none``: plain CG).
Prints the relative excess, CG iterations and the running count of Hessian-vector products at
every Newton iteration.

    OPENBLAS_NUM_THREADS=1 python bench/pcg_prototype.py --dataset criteo
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.race.problems import (  # noqa: E402
    cache_path,
    datasets_dir,
    load_problems,
    reference,
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="criteo")
    ap.add_argument("--problem", default="logistic")
    ap.add_argument("--alphas", nargs="+", default=["none", "0.01", "0.1", "1"])
    ap.add_argument("--forcing", type=float, default=0.25)
    ap.add_argument("--target", type=float, default=1e-7)
    ap.add_argument("--stop", choices=["euclid", "precond"], default="euclid",
                    help="CG stopping test: the Euclidean residual ||r|| <= forcing ||g|| "
                         "(default) or its M^-1 norm, r'M^-1 r <= forcing^2 g'M^-1 g")
    args = ap.parse_args()
    p = next(load_problems([args.dataset], [args.problem], datasets_dir(None), quick=False,
                           skipped=[]))
    reference(p, cache_path())
    X = sp.csr_matrix(p.X)
    y = p.y
    N, n = X.shape
    lam = p.alpha
    X2 = X.multiply(X).tocsr()

    def f(w: np.ndarray) -> float:
        return float(np.mean(np.logaddexp(0, -y * (X @ w))) + lam / 2 * w @ w)

    for a_text in args.alphas:
        a = None if a_text == "none" else float(a_text)
        print(f"preconditioner alpha = {a_text}")
        w = np.zeros(n)
        hv = 0
        for it in range(60):
            m = y * (X @ w)
            g = -(X.T @ (y / (1 + np.exp(m)))) / N + lam * w
            ex = (f(w) - p.f_star) / p.f_star
            if ex < args.target:
                break
            s = 1 / (1 + np.exp(-m))
            D = s * (1 - s)
            M = np.ones(n) if a is None else a * ((X2.T @ D) / N + lam) + (1 - a) * lam
            d = np.zeros(n)
            r = g.copy()
            z = r / M
            pp = z.copy()
            rz = r @ z
            tgt = args.forcing * np.linalg.norm(g)
            if args.stop == "precond":
                tgt = args.forcing * np.sqrt(rz)
            k = 0
            while k < 50 and (np.sqrt(rz) if args.stop == "precond" else np.linalg.norm(r)) > tgt:
                q = X.T @ (D * (X @ pp)) / N + lam * pp
                hv += 1
                k += 1
                step = rz / (pp @ q)
                d += step * pp
                r -= step * q
                z = r / M
                rz_new = r @ z
                pp = z + rz_new / rz * pp
                rz = rz_new
            t, f0, gd = 1.0, f(w), g @ d
            while f(w - t * d) > f0 - 1e-4 * t * gd:
                t *= 0.5
            w = w - t * d
            print(f"  newton it {it}: excess {ex:.2e}, cg {k}, products so far {hv}, step {t}")


if __name__ == "__main__":
    main()
