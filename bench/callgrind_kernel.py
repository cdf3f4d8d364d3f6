"""Instructions per iteration of compiled kernel Pegasos, counted by callgrind, in two built
checkouts (a noise-free complement to ``bench/ab_kernel.py`` on a loaded machine).

    python bench/callgrind_kernel.py OLD_TREE NEW_TREE [--iters 10000]

The contenders are three of ``bench/ab_kernel.py``'s fits (public ``KernelPegasos`` API, the
same in both trees): RBF on 200 noisy circle points (k = 1), the linear kernel on CSR rows
(N = 2000, 1000 features, 20 nonzeros per row, k = 1) and the polynomial kernel with an
intercept (N = 500, 10 features, k = 4). For each tree and case, two processes run under
``valgrind --tool=callgrind`` (``PYTHONHASHSEED=0``): one fits 1000 iterations, the other
``1000 + --iters``; the difference of their total instruction counts divided by ``--iters`` is
the cost of one iteration after the first thousand (driver, representation, kernel, sampler,
schedule, step), nothing of the set-up. Prints the counts and new/old.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

CODE = r'''
import sys
import numpy as np, scipy.sparse as sp
from sqnopt.kernel import KernelPegasos
case, T = sys.argv[1], int(sys.argv[2])
if case == "rbf":
    rng = np.random.default_rng(0)
    r = np.where(rng.random(200) < 0.5, 0.4, 1.0)
    phi = rng.uniform(0, 2 * np.pi, 200)
    X = np.c_[r * np.cos(phi), r * np.sin(phi)] + 0.08 * rng.normal(size=(200, 2))
    y = np.where(r < 0.5, -1, 1)
    kw = dict(kernel="rbf", gamma=2.0, lam=1e-3)
elif case == "linear":
    rng = np.random.default_rng(0)
    X = sp.random(2000, 1000, density=0.02, format="csr", random_state=rng)
    y = np.where(X @ rng.normal(size=1000) > 0, 1, -1)
    kw = dict(kernel="linear", lam=1e-3)
else:
    rng = np.random.default_rng(1)
    X = rng.normal(size=(500, 10)) / 3.0
    y = np.where(X[:, 0] * X[:, 1] + 0.1 * rng.normal(size=500) > 0, 1, -1)
    kw = dict(kernel="poly", gamma=0.5, degree=2, lam=1e-2, batch_size=4, fit_intercept=True)
KernelPegasos(max_iter=T, random_state=0, **kw).fit(X, y)
'''

CASES = {"rbf N=200 k=1": "rbf", "linear csr N=2000 k=1": "linear", "poly N=500 k=4 +b": "poly"}


def _count(root: str, case: str, iters: int) -> int:
    env = dict(os.environ, PYTHONPATH=root, OPENBLAS_NUM_THREADS="1", PYTHONHASHSEED="0")
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "cg.out")
        p = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                            sys.executable, "-c", CODE, case, str(iters)], cwd=root, env=env,
                           capture_output=True, text=True, check=True)
        m = re.search(r"Collected : (\d+)", p.stderr)
        if m is None:
            raise SystemExit(p.stderr[-2000:])
        return int(m.group(1))


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--iters", type=int, default=10000)
    ap.add_argument("--jobs", type=int, default=2, help="valgrind processes at a time")
    a = ap.parse_args()
    roots = {"old": os.path.abspath(a.old), "new": os.path.abspath(a.new)}
    jobs = {(name, tag, T): (roots[tag], case, T) for name, case in CASES.items()
            for tag in roots for T in (1000, 1000 + a.iters)}
    with ThreadPoolExecutor(a.jobs) as pool:
        counts = dict(zip(jobs, pool.map(lambda args: _count(*args), jobs.values())))
    print(f"{'case':24s} {'old':>10s} {'new':>10s} {'new/old':>8s}   instructions per iteration")
    for name in CASES:
        per = {tag: (counts[name, tag, 1000 + a.iters] - counts[name, tag, 1000]) / a.iters
               for tag in roots}
        print(f"{name:24s} {per['old']:10.1f} {per['new']:10.1f} {per['new'] / per['old']:8.3f}")


if __name__ == "__main__":
    main()
