"""What the sparse structure checks cost, next to what a fit costs.

``check_sparse_structure`` (the user-facing check, run once per matrix by the data layer) and
the compiled ``CSRRows`` bounds guard each make one or two vectorised passes over the index
arrays; ``check_matrix`` (which also copies the matrix) and one epoch of ``Solver.fit`` (SGD,
logloss, batches of 5) are the yardsticks. Measured side by side in this process (interleaved,
best of several), on random CSR data with 100 stored values per row:

    OPENBLAS_NUM_THREADS=1 python -m pytest bench/test_validation.py --benchmark-only -s \\
        -p no:cacheprovider
"""

from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt import Solver
from sqnopt.data import CSRRows64, check_matrix, check_sparse_structure


def _best(fn: Callable[[], Any], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        tic = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - tic)
    return best


@pytest.mark.parametrize("n_rows", [20_000, 100_000])
def test_structure_check_cost_vs_one_epoch(benchmark: Any, n_rows: int) -> None:
    rng = np.random.default_rng(0)
    k, d = 100, 1_000_000
    indices = np.sort(rng.integers(0, d, size=(n_rows, k)), axis=1).ravel().astype(np.int32)
    X = sp.csr_matrix((rng.random(n_rows * k), indices, np.arange(0, n_rows * k + 1, k)),
                      shape=(n_rows, d))
    X.sum_duplicates()
    y = np.where(rng.random(n_rows) < 0.5, -1.0, 1.0)
    Xc = check_matrix(X)
    ind = np.ascontiguousarray(Xc.indices, dtype=np.int32)
    ptr = np.ascontiguousarray(Xc.indptr, dtype=np.intp)
    ones = np.ones(n_rows)
    contenders: dict[str, Callable[[], Any]] = {
        "check_sparse_structure": lambda: check_sparse_structure(X),
        "CSRRows guard": lambda: CSRRows64(Xc.data, ind, ptr, d, y, ones, ones, False),
        "check_matrix": lambda: check_matrix(X),
        "one epoch": lambda: Solver(max_epochs=1, random_state=0).fit(X, y),
    }
    best = {name: float("inf") for name in contenders}
    for _ in range(3):  # interleaved, so that load changes hit every contender alike
        for name, fn in contenders.items():
            best[name] = min(best[name], _best(fn, 1 if name == "one epoch" else 5))
    epoch = best["one epoch"]
    print(f"\n[{n_rows} rows x 100 nnz = {X.nnz} stored values]")
    for name, t in best.items():
        print(f"  {name:24s} {t * 1e3:8.2f} ms  ({t / epoch:6.1%} of one epoch)")
    benchmark.extra_info.update({f"ms_{name}": t * 1e3 for name, t in best.items()})
    assert best["check_sparse_structure"] < 0.1 * epoch
    assert best["CSRRows guard"] < 0.1 * epoch
    benchmark.pedantic(contenders["check_sparse_structure"], rounds=5, iterations=1)
