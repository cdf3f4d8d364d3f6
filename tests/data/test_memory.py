"""Memory: no dense copy of sparse input, and the kept state accounted in the result."""

from __future__ import annotations

import tracemalloc
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt import SQNClassifier, Solver
from sqnopt.training import ConvergenceWarning


def _news20_like(n: int = 16_000, p: int = 62_000, nnz_per_row: int = 80, seed: int = 0):
    """A CSR matrix of news20's shape and density (1.3 million entries, 15 MB as CSR; a dense
    copy would take 7.9 GB)."""
    rng = np.random.default_rng(seed)
    indptr = np.arange(0, (n + 1) * nnz_per_row, nnz_per_row)
    indices = rng.integers(0, p, size=n * nnz_per_row).astype(np.int32)
    X = sp.csr_matrix((rng.random(n * nnz_per_row) * 3, indices, indptr), shape=(n, p))
    X.sum_duplicates()
    w = rng.normal(size=p)
    y = np.where(X @ w > 0, 1, 0)
    return X, y


@pytest.mark.parametrize("curvature", ["auto", "lbfgs", "saga"])
def test_fitting_sparse_input_makes_no_dense_copy(curvature: str) -> None:
    X, y = _news20_like()
    csr_bytes = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    kw = dict(gradient="saga") if curvature == "saga" else {}
    tracemalloc.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            if curvature == "saga":
                Solver("logloss", "identity", "fixed", ("constant", {"eps": 0.1}), max_epochs=1,
                       **kw).fit(X, y)
            else:
                SQNClassifier(curvature=curvature, max_iter=3, tol=None).fit(X, y)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # the data (and a copy or two of it, e.g. scikit-learn's validation), vectors of 62,000
    # weights and per-sample tables: far below one dense row block of the input
    assert peak < 4 * csr_bytes + 40e6, f"peak {peak / 1e6:.1f} MB for {csr_bytes / 1e6:.1f} MB"
