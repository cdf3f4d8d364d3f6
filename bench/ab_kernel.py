"""A/B of kernel Pegasos' per-iteration cost between two built checkouts (before / after a change).

    python bench/ab_kernel.py OLD_TREE NEW_TREE [--rounds 7]

Each tree must be built in place (``python setup.py build_ext --inplace``); make one for an older
commit with ``git worktree add --detach /tmp/old <rev>``. The contenders are compiled
``KernelPegasos`` fits (public API, the same in both trees) on synthetic data: RBF on two noisy
circles (2 features; N = 200 and 2000; k = 1 and 8), the linear kernel on CSR rows (N = 2000,
1000 features, 20 nonzeros per row) and the polynomial kernel (N = 500, 10 features). For each,
the thread's CPU time of a fit of ``max_iter = 0`` (the fixed cost) and of ``T`` iterations,
each the minimum of 5 repeats in its process; the figure is ``(fit(T) - fit(0)) / T`` in
microseconds per iteration. The trees alternate over the rounds, one process per tree and round.
Prints min / lower quartile / median over rounds and new/old of the minima.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _ab  # noqa: E402

CODE = r'''
import json, time
import numpy as np, scipy.sparse as sp
import sqnopt
from sqnopt.kernel import KernelPegasos

def circles(n, seed=0):
    rng = np.random.default_rng(seed)
    r = np.where(rng.random(n) < 0.5, 0.4, 1.0)
    phi = rng.uniform(0, 2 * np.pi, n)
    X = np.c_[r * np.cos(phi), r * np.sin(phi)] + 0.08 * rng.normal(size=(n, 2))
    return X, np.where(r < 0.5, -1, 1)

def sparse(n, d, nnz, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=nnz / d, format="csr", random_state=rng)
    y = np.where(X @ rng.normal(size=d) > 0, 1, -1)
    return X, y

Xc, yc = circles(2000)
Xs, ys = sparse(2000, 1000, 20)
rng = np.random.default_rng(1)
Xp = rng.normal(size=(500, 10)) / 3.0
yp = np.where(Xp[:, 0] * Xp[:, 1] + 0.1 * rng.normal(size=500) > 0, 1, -1)
cases = {
    "rbf N=200 k=1": (Xc[:200], yc[:200], dict(kernel="rbf", gamma=2.0, lam=1e-3), 4000),
    "rbf N=2000 k=1": (Xc, yc, dict(kernel="rbf", gamma=2.0, lam=1e-3), 3000),
    "rbf N=2000 k=8": (Xc, yc, dict(kernel="rbf", gamma=2.0, lam=1e-3, batch_size=8), 500),
    "linear csr N=2000 k=1": (Xs, ys, dict(kernel="linear", lam=1e-3), 2000),
    "poly N=500 k=4 +b": (Xp, yp, dict(kernel="poly", gamma=0.5, degree=2, lam=1e-2,
                                       batch_size=4, fit_intercept=True), 600),
}

def best(f, k=5):
    f()
    b = 1e9
    for _ in range(k):
        t = time.thread_time(); f(); b = min(b, time.thread_time() - t)
    return b

out = {"sqnopt": sqnopt.__file__}
for name, (X, y, kw, T) in cases.items():
    t0 = best(lambda: KernelPegasos(max_iter=0, random_state=0, **kw).fit(X, y))
    tT = best(lambda: KernelPegasos(max_iter=T, random_state=0, **kw).fit(X, y))
    out[name + " (us/it)"] = (tT - t0) / T * 1e6
    out[name + " fit(0) (us)"] = t0 * 1e6
print(json.dumps(out))
'''


def main() -> None:
    a = _ab.parse(__doc__, rounds=7)
    res = _ab.interleave(a, CODE)
    _ab.table(res, "us", width=32, quantiles=(4, 2), digits=2)


if __name__ == "__main__":
    main()
