"""The per-row squared norms the step sizes are made of, on sparse rows with empty rows
anywhere (first, between, last: an empty last row's start is the number of stored values)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt.data._norms import row_sq_norms


@pytest.mark.parametrize("dense", [
    np.array([[0.0, 0.0], [3.0, 0.0]]),
    np.array([[3.0, 4.0], [0.0, 0.0]]),                  # empty last row
    np.array([[0.0, 0.0], [1.0, 2.0], [0.0, 0.0], [0.0, 0.0]]),
    np.zeros((3, 2)),
    np.array([[1e10, 0.0], [0.0, -2.0], [0.0, 0.0]]),
])
def test_sparse_rows_match_the_dense_norms(dense: np.ndarray) -> None:
    expect = np.einsum("ij,ij->i", dense, dense)
    for fmt in ("csr", "csc", "coo"):
        got = row_sq_norms(sp.csr_matrix(dense).asformat(fmt))
        np.testing.assert_array_equal(got, expect)
    np.testing.assert_array_equal(row_sq_norms(dense), expect)
    assert row_sq_norms(sp.csr_matrix(dense.astype(np.int64))).dtype == np.float64
