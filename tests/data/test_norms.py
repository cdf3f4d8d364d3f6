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
    # float32 values are squared in float64 (the compiled reader of the stored values)
    small = dense.astype(np.float32)
    np.testing.assert_array_equal(row_sq_norms(sp.csr_matrix(small)),
                                  np.einsum("ij,ij->i", small.astype(np.float64),
                                            small.astype(np.float64)))


def test_compiled_row_norms_refuse_an_indptr_past_the_values() -> None:
    from sqnopt.data._rows import csr_row_sqnorms

    with pytest.raises(ValueError, match="outside the values"):
        csr_row_sqnorms(np.array([0, 2, 5], dtype=np.intp), np.ones(4))


@pytest.mark.parametrize("index", [np.int32, np.int64])
@pytest.mark.parametrize("value", [np.float32, np.float64])
def test_compiled_column_max_abs_is_numpys(index: type, value: type) -> None:
    from sqnopt.data._rows import csr_column_max_abs

    X = sp.random(300, 50, density=0.1, random_state=3, format="csr", dtype=value)
    X.data -= 0.5
    expect = np.zeros(50)
    np.maximum.at(expect, X.indices, np.abs(X.data.astype(np.float64)))
    got = csr_column_max_abs(X.indices.astype(index), X.data, 50)
    np.testing.assert_array_equal(got, expect)
    assert np.count_nonzero(got == 0) == np.count_nonzero(np.diff(X.tocsc().indptr) == 0)
    # NaN entries are skipped; no entries: zeros
    np.testing.assert_array_equal(
        csr_column_max_abs(np.array([0, 0, 2]), np.array([np.nan, -3.0, 2.0]), 4),
        [3.0, 0.0, 2.0, 0.0])
    np.testing.assert_array_equal(csr_column_max_abs(np.zeros(0, np.int32), np.zeros(0), 2),
                                  [0.0, 0.0])


def test_compiled_column_max_abs_refuses_bad_indices() -> None:
    from sqnopt.data._rows import csr_column_max_abs

    for bad in ([0, 5], [-1, 0]):
        with pytest.raises(ValueError, match="outside"):
            csr_column_max_abs(np.array(bad, dtype=np.int32), np.ones(2), 5)
    with pytest.raises(ValueError, match="one length"):
        csr_column_max_abs(np.array([0], dtype=np.int32), np.ones(2), 5)
