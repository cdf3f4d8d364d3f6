"""NumPy prototype: does a fixed Böhning-bound preconditioner cut full-batch L-BFGS's passes?

Softmax on a race problem (``alpha = 1/N``, no intercept): deterministic L-BFGS (``--memory``
pairs) with Armijo backtracking from the unit step (``c1 = 1e-4``, halving), as
``SQNClassifier()``'s full-batch phase, with the initial inverse Hessian of the two-loop
recursion

* ``gamma``: ``gamma_t I``, ``gamma_t = v'r / r'r`` of the newest pair (plain L-BFGS);
* ``bound``: ``M^{-1}``, ``M = c X'X / N (x) I_K + alpha I`` (``c = 1/2``, Böhning 1992) --
  fixed, a Cholesky solve of the ``p x p`` matrix on the ``K`` columns of the gradient;
* ``bound-scaled``: ``gamma_t M^{-1}``, ``gamma_t = v'r / r'M^{-1}r``;
* ``bound-proj``: ``M = c (I_K - 11'/K) (x) X'X / N + alpha I`` (Böhning's exact bound);
* ``refresh``: as ``bound-scaled``, with ``M_1`` re-formed every ``--refresh`` iterations from
  the class-averaged curvature at the iterate, ``X' diag(1 - ||p_i||^2) X / (K N) + alpha I``
  (no longer a bound: an approximation of the Hessian's diagonal blocks), each re-forming
  counted as ``--gram-passes`` passes;
* ``newton-pcg``: truncated Newton instead (Armijo from the unit step), each direction by
  conjugate gradients preconditioned by ``M^{-1}`` to the relative residual ``--forcing``
  (at most 50 products), one pass per Hessian-vector product.

Prints passes (one per loss+gradient evaluation) to the relative excesses 1e-2, 1e-4, 1e-6
and the time of the set-up (Gram matrix and Cholesky factor) next to a pass.

    OPENBLAS_NUM_THREADS=1 python bench/precond_prototype.py --dataset dna
    OPENBLAS_NUM_THREADS=1 python bench/precond_prototype.py --dataset fashion-mnist --max-iter 400
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.race.problems import cache_path, datasets_dir, load_problems, reference  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="dna")
    ap.add_argument("--memory", type=int, default=30)
    ap.add_argument("--max-iter", type=int, default=300)
    ap.add_argument("--variants", nargs="+",
                    default=["gamma", "bound", "bound-scaled", "bound-proj"])
    ap.add_argument("--c", type=float, default=0.5, help="bound constant (softmax: 1/2)")
    ap.add_argument("--refresh", type=int, default=25)
    ap.add_argument("--gram-passes", type=float, default=8.0)
    ap.add_argument("--forcing", type=float, default=0.25)
    args = ap.parse_args()
    p = next(load_problems([args.dataset], ["softmax"], datasets_dir(None), quick=False,
                           skipped=[]))
    reference(p, cache_path())
    X = p.X.toarray() if sp.issparse(p.X) else np.asarray(p.X)
    X = np.ascontiguousarray(X, dtype=np.float64)
    N, d = X.shape
    K = p.n_classes
    y = p.y.astype(np.intp)
    Y = np.zeros((N, K))
    Y[np.arange(N), y] = 1.0
    lam = p.alpha
    fstar = p.f_star

    def fg(W: np.ndarray) -> tuple[float, np.ndarray]:
        S = X @ W
        mx = S.max(axis=1, keepdims=True)
        E = np.exp(S - mx)
        Z = E.sum(axis=1, keepdims=True)
        f = float(np.mean(mx[:, 0] + np.log(Z[:, 0]) - S[np.arange(N), y]))
        G = X.T @ (E / Z - Y) / N + lam * W
        return f + 0.5 * lam * float(np.vdot(W, W)), G

    t0 = time.perf_counter()
    fg(np.zeros((d, K)))
    t_pass = time.perf_counter() - t0
    t0 = time.perf_counter()
    C = X.T @ X / N
    t_gram = time.perf_counter() - t0
    t0 = time.perf_counter()
    cf = sla.cho_factor(args.c * C + lam * np.eye(d), lower=True)
    t_chol = time.perf_counter() - t0
    print(f"{args.dataset}: N={N} d={d} K={K} lam={lam:.3g}; one pass {t_pass:.3f} s, "
          f"Gram {t_gram:.3f} s, Cholesky {t_chol:.3f} s")

    state = {"cf": cf}

    def reform(W: np.ndarray) -> None:
        S = X @ W
        P = np.exp(S - S.max(axis=1, keepdims=True))
        P /= P.sum(axis=1, keepdims=True)
        t = 1.0 - np.einsum("ij,ij->i", P, P)
        Xs = X * np.sqrt(t / (K * N))[:, None]
        state["cf"] = sla.cho_factor(Xs.T @ Xs + lam * np.eye(d), lower=True)

    def h0(variant: str, q: np.ndarray, v: np.ndarray | None, r: np.ndarray | None
           ) -> np.ndarray:
        if variant == "gamma":
            g = 1.0 if v is None else float(np.vdot(v, r)) / float(np.vdot(r, r))
            return g * q
        if variant == "bound-proj":
            mean = q.mean(axis=1, keepdims=True)
            return sla.cho_solve(cf, q - mean) + mean / lam
        f_ = state["cf"] if variant == "refresh" else cf
        out = sla.cho_solve(f_, q)
        if variant in ("bound-scaled", "refresh") and v is not None:
            mr = sla.cho_solve(f_, r)
            out *= float(np.vdot(v, r)) / float(np.vdot(r, mr))
        return out

    for variant in args.variants:
        W = np.zeros((d, K))
        f, G = fg(W)
        passes = 1
        V: list[np.ndarray] = []
        R: list[np.ndarray] = []
        hit: dict[float, int] = {}
        t0 = time.perf_counter()
        state["cf"] = cf
        if variant == "newton-pcg":
            for it in range(args.max_iter):
                S = X @ W
                P = np.exp(S - S.max(axis=1, keepdims=True))
                P /= P.sum(axis=1, keepdims=True)

                def hv(V: np.ndarray, P: np.ndarray = P) -> np.ndarray:
                    U = X @ V
                    U = P * (U - np.sum(P * U, axis=1, keepdims=True))
                    return X.T @ U / N + lam * V

                D = np.zeros_like(G)
                res = -G.copy()
                z = sla.cho_solve(cf, res)
                pdir = z.copy()
                rz = float(np.vdot(res, z))
                g0 = float(np.sqrt(np.vdot(G, G)))
                for _cg in range(50):
                    Hp = hv(pdir)
                    passes += 1
                    a = rz / float(np.vdot(pdir, Hp))
                    D += a * pdir
                    res -= a * Hp
                    if np.sqrt(np.vdot(res, res)) <= args.forcing * g0:
                        break
                    z = sla.cho_solve(cf, res)
                    rz_new = float(np.vdot(res, z))
                    pdir = z + (rz_new / rz) * pdir
                    rz = rz_new
                slope = float(np.vdot(G, D))
                step = 1.0
                while True:
                    Wn = W + step * D
                    fn, Gn = fg(Wn)
                    passes += 1
                    if fn <= f + 1e-4 * step * slope or step < 1e-10:
                        break
                    step *= 0.5
                W, f, G = Wn, fn, Gn
                ex = (f - fstar) / fstar
                print(f"    Newton iteration {it + 1}: {_cg + 1} CG products, step {step:g}, "
                      f"excess {ex:.2e} after {passes} passes", flush=True)
                for tgt in (1e-2, 1e-4, 1e-6):
                    if ex <= tgt and tgt not in hit:
                        hit[tgt] = passes
                if ex <= 1e-6:
                    break
            print(f"  {variant:13s} passes to 1e-2 / 1e-4 / 1e-6: "
                  + " / ".join(str(hit.get(t, "-")) for t in (1e-2, 1e-4, 1e-6))
                  + f"   (last excess {ex:.2e} after {passes} passes, "
                  f"{time.perf_counter() - t0:.1f} s)", flush=True)
            continue
        for it in range(args.max_iter):
            if variant == "refresh" and it > 0 and it % args.refresh == 0:
                reform(W)
                passes += args.gram_passes
            q = G.copy()
            alphas = []
            for v, r in zip(reversed(V), reversed(R)):
                a = float(np.vdot(v, q)) / float(np.vdot(v, r))
                alphas.append(a)
                q -= a * r
            q = h0(variant, q, V[-1] if V else None, R[-1] if R else None)
            for (v, r), a in zip(zip(V, R), reversed(alphas)):
                b = float(np.vdot(r, q)) / float(np.vdot(v, r))
                q += (a - b) * v
            D = -q
            slope = float(np.vdot(G, D))
            step = 1.0
            while True:
                Wn = W + step * D
                fn, Gn = fg(Wn)
                passes += 1
                if fn <= f + 1e-4 * step * slope or step < 1e-10:
                    break
                step *= 0.5
            v, r = Wn - W, Gn - G
            if float(np.vdot(v, r)) > 0:
                V.append(v)
                R.append(r)
                if len(V) > args.memory:
                    V.pop(0)
                    R.pop(0)
            W, f, G = Wn, fn, Gn
            ex = (f - fstar) / fstar
            for tgt in (1e-2, 1e-4, 1e-6):
                if ex <= tgt and tgt not in hit:
                    hit[tgt] = passes
            if ex <= 1e-6:
                break
        el = time.perf_counter() - t0
        print(f"  {variant:13s} passes to 1e-2 / 1e-4 / 1e-6: "
              + " / ".join(str(hit.get(t, "-")) for t in (1e-2, 1e-4, 1e-6))
              + f"   (last excess {ex:.2e} after {passes} passes, {el:.1f} s)", flush=True)


if __name__ == "__main__":
    main()
