"""The RCV1-statistics generator."""

from __future__ import annotations

import numpy as np
import pytest

from sqnopt.datasets import make_rcv1_like


def test_shape_sparsity_and_normalisation() -> None:
    X, y = make_rcv1_like(20_000, 5_000, nnz_per_row=40, random_state=0)
    assert X.shape == (20_000, 5_000) and X.format == "csr" and X.has_sorted_indices
    assert X.dtype == np.float64 and X.indices.dtype == np.int32
    assert 0.85 * 40 < X.nnz / X.shape[0] < 1.15 * 40
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    np.testing.assert_allclose(norms, 1.0, rtol=1e-12)
    assert np.all(X.data > 0)
    assert set(np.unique(y)) == {-1.0, 1.0}
    assert 0.42 < np.mean(y > 0) < 0.52


def test_feature_frequencies_are_heavy_tailed() -> None:
    X, _ = make_rcv1_like(20_000, 5_000, nnz_per_row=40, random_state=1)
    df = np.sort(np.bincount(X.indices, minlength=X.shape[1]))[::-1]
    # Zipf: the top feature appears in a sizeable share of documents, the median one rarely
    assert df[0] > 0.1 * X.shape[0]
    assert df[df.shape[0] // 2] < 0.01 * X.shape[0]
    assert df[0] > 30 * df[df.shape[0] // 2]


def test_labels_are_learnable_and_deterministic() -> None:
    X, y = make_rcv1_like(6_000, 3_000, random_state=2)
    X2, y2 = make_rcv1_like(6_000, 3_000, random_state=2)
    assert (X != X2).nnz == 0 and np.array_equal(y, y2)
    from sqnopt import Solver

    res = Solver.pegasos(1e-4, max_epochs=5, random_state=0).fit(X[:5000], y[:5000])
    err = np.mean(np.sign(X[5000:] @ res.coef) != y[5000:])
    assert err < 0.2     # chance is ~0.47


def test_float32_and_validation() -> None:
    X, _ = make_rcv1_like(500, 400, nnz_per_row=10, dtype=np.float32, random_state=0)
    assert X.dtype == np.float32
    with pytest.raises(ValueError, match="nnz_per_row"):
        make_rcv1_like(10, 10, nnz_per_row=50)
    with pytest.raises(ValueError, match="dtype"):
        make_rcv1_like(10, 400, nnz_per_row=5, dtype=np.int64)
    with pytest.raises(ValueError, match="positive_fraction"):
        make_rcv1_like(10, 400, nnz_per_row=5, positive_fraction=1.0)
