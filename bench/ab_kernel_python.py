"""A/B of kernel Pegasos' per-iteration cost on the Python path (a kernel callable, or
``path="python"``) between two built checkouts (before / after a change).

    python bench/ab_kernel_python.py OLD_TREE NEW_TREE [--rounds 5]

Each tree must be built in place; make one for an older commit with
``git worktree add --detach /tmp/old <rev>``. The contenders are ``KernelPegasos`` fits (public
API, the same in both trees) on two noisy circles (2 features): an RBF kernel callable written
with NumPy (N = 200 and 1000; k = 1 and 8) and the built-in polynomial kernel with
``path="python"`` (N = 500, k = 4, intercept). For each, the thread's CPU time of a fit of
``max_iter = 0`` (the fixed cost) and of ``T`` iterations, each the minimum of 3 repeats in its
process; the figure is ``(fit(T) - fit(0)) / T`` in microseconds per iteration. The trees
alternate over the rounds, one process per tree and round (``bench/_ab.py``).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _ab  # noqa: E402

CODE = r'''
import json, time
import numpy as np
import sqnopt
from sqnopt.kernel import KernelPegasos

def circles(n, seed=0):
    rng = np.random.default_rng(seed)
    r = np.where(rng.random(n) < 0.5, 0.4, 1.0)
    phi = rng.uniform(0, 2 * np.pi, n)
    X = np.c_[r * np.cos(phi), r * np.sin(phi)] + 0.08 * rng.normal(size=(n, 2))
    return X, np.where(r < 0.5, -1, 1)

def rbf(A, B):
    d2 = ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1)
    return np.exp(-2.0 * d2)

Xc, yc = circles(1000)
cases = {
    "rbf callable N=200 k=1": (Xc[:200], yc[:200], dict(kernel=rbf, lam=1e-3), 1500),
    "rbf callable N=1000 k=1": (Xc, yc, dict(kernel=rbf, lam=1e-3), 1500),
    "rbf callable N=1000 k=8": (Xc, yc, dict(kernel=rbf, lam=1e-3, batch_size=8), 300),
    "poly python N=500 k=4 +b": (Xc[:500], yc[:500], dict(kernel="poly", gamma=0.5, degree=2,
                                 lam=1e-2, batch_size=4, fit_intercept=True, path="python"),
                                 400),
}

def best(f, k=3):
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
print(json.dumps(out))
'''


def main() -> None:
    a = _ab.parse(__doc__, rounds=5)
    res = _ab.interleave(a, CODE)
    _ab.table(res, "us", width=30, quantiles=(2,), digits=1)


if __name__ == "__main__":
    main()
