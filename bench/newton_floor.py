"""The counts behind the floor of a Newton iteration on the race's sparse sets, and the cost of
its dense parts.

Per data set (logistic, no intercept): the number of stored entries, the scattered updates of
the Hessian's triangle ``sum_i m_i (m_i + 1) / 2`` (``m_i`` entries in row ``i``), the share of
those updates that a dense block of the ``k`` most frequent columns would take over (pairs of
entries both in the block), the share of updates in rows that repeat an earlier row exactly
(what grouping equal rows would save), and, in CPU time best of 20, the Cholesky factorisation
of an ``n x n`` positive definite matrix (SciPy's ``cho_factor``: LAPACK ``dpotrf``, as the
kernel calls it) and one solve with it (``cho_solve``: ``dpotrs``)::

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=$PWD python bench/newton_floor.py --datasets a9a w8a mushrooms
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import scipy.linalg as sl
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._data import datasets_dir  # noqa: E402
from bench.race.problems import load_problems  # noqa: E402


def _best(fn: Any, repeats: int = 20) -> float:
    out = []
    for _ in range(repeats):
        t = time.thread_time()
        fn()
        out.append(time.thread_time() - t)
    return min(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", nargs="+", default=["a9a", "w8a", "mushrooms"])
    args = ap.parse_args()
    print("| data | N x p | nnz | triangle updates | dense block k=8/16/32 takes | in repeated rows "
          "| dpotrf | dpotrs |")
    print("|---|---|---|---|---|---|---|---|")
    for p in load_problems(args.datasets, ["logistic"], datasets_dir(), quick=False, skipped=[]):
        X = sp.csr_matrix(p.X)
        X.sort_indices()
        N, P = X.shape
        m = np.diff(X.indptr).astype(np.int64)
        pairs = m * (m + 1) // 2
        total = float(pairs.sum())
        rows = np.repeat(np.arange(N), m)
        rank = np.empty(P, dtype=np.int64)
        rank[np.argsort(-np.bincount(X.indices, minlength=P), kind="stable")] = np.arange(P)
        block = []
        for k in (8, 16, 32):
            c = np.bincount(rows[rank[X.indices] < k], minlength=N)
            block.append(f"{float((c * (c + 1) // 2).sum()) / total:.0%}")
        seen: set[bytes] = set()
        repeated = 0.0
        for i in range(N):
            key = X.indices[X.indptr[i]:X.indptr[i + 1]].tobytes()
            if key in seen:
                repeated += float(pairs[i])
            seen.add(key)
        A = np.asfortranarray(np.eye(P) * 2.0 + 0.01)
        t_f = _best(lambda A=A: sl.cho_factor(A, lower=True, check_finite=False))
        cf = sl.cho_factor(A, lower=True, check_finite=False)
        b = np.ones(P)
        t_s = _best(lambda cf=cf, b=b: sl.cho_solve(cf, b, check_finite=False))
        print(f"| {p.dataset} | {N} x {P} | {X.nnz} | {total:.3g} | {' / '.join(block)} "
              f"| {repeated / total:.0%} | {1e3 * t_f:.2f} ms | {1e3 * t_s:.3f} ms |")


if __name__ == "__main__":
    main()
