"""What :class:`sqnopt.BoundLBFGS`'s bound costs next to a pass, in one process.

For each data set's softmax race problem: a full-batch loss + gradient of the compiled
objective (the mean of 10, or of 3 for data sets with a pass over 0.1 s), the kernel's ``bind``
(the Gram matrix and its Cholesky factor; whether the sparse pairs' path ran), and one
preconditioned direction with 30 pairs' worth of memory (empty: the solve of ``M`` dominates),
three rounds each.

    OPENBLAS_NUM_THREADS=1 python bench/precond_cost.py --datasets dna fashion-mnist
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.race.problems import datasets_dir, load_problems  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=["dna", "fashion-mnist"])
    args = ap.parse_args()
    from sqnopt import Softmax
    from sqnopt.curvature import BoundLBFGSKernel
    from sqnopt.data import prepare
    from sqnopt.recipes import bound_cost_passes

    print(f"load average {os.getloadavg()}")
    for name in args.datasets:
        p = next(load_problems([name], ["softmax"], datasets_dir(None), quick=False,
                               skipped=[]))
        obj = Softmax(lam=p.alpha)
        data = prepare(p.X, p.y, label_kind=obj.label_kind)
        ok = obj.init(data)
        K = obj.n_blocks(p.n_classes)
        w = np.zeros(ok.n_params)
        g = np.empty_like(w)
        rows = np.arange(data.n_samples)
        print(f"{name}: {p.X.shape}, {K} blocks; the recipe's estimate {bound_cost_passes(p.X, K, True):.1f} passes")
        for _ in range(3):
            reps = 3 if p.X.shape[0] * p.X.shape[1] > 10_000_000 else 10
            t = time.perf_counter()
            for _ in range(reps):
                ok.gradient(w, rows, g)
            t_pass = (time.perf_counter() - t) / reps
            k = BoundLBFGSKernel(data.dim, K, 0.5, memory=30)
            t = time.perf_counter()
            k.bind(ok)
            t_bind = time.perf_counter() - t
            x = np.random.default_rng(0).normal(size=ok.n_params)
            out = np.empty_like(x)
            t = time.perf_counter()
            for _ in range(20):
                k.direction(x, out)
            t_dir = (time.perf_counter() - t) / 20
            print(f"  pass {t_pass * 1e3:.2f} ms, bind {t_bind * 1e3:.2f} ms = "
                  f"{t_bind / t_pass:.1f} passes (sparse pairs: {k.sparse_pairs}), "
                  f"direction {t_dir * 1e3:.3f} ms", flush=True)


if __name__ == "__main__":
    main()
