"""check_matrix's finiteness test (a sum first, entries only if the sum is not finite): every
NaN/inf is still found and named; huge finite values whose sum overflows are accepted without a
warning."""

from __future__ import annotations

import numpy as np
import pytest

from sqnopt.data._dataset import check_matrix


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_every_nonfinite_entry_is_found(dtype: type, bad: float) -> None:
    X = np.ones((7, 5), dtype=dtype)
    X[4, 2] = bad
    with pytest.raises(ValueError, match=r"row 4, column 2"):
        check_matrix(X)
    X[4, 2] = 1.0
    X[0, 0], X[0, 1] = np.inf, -np.inf          # inf + (-inf) = NaN: still caught
    with pytest.raises(ValueError, match=r"row 0, column 0"):
        check_matrix(X)


@pytest.mark.parametrize("dtype,big", [(np.float64, 1e308), (np.float32, 3e38)])
def test_overflowing_sum_of_finite_values_is_accepted(dtype: type, big: float) -> None:
    X = np.full((4, 3), big, dtype=dtype)       # the sum overflows; every entry is finite
    out = check_matrix(X)                       # filterwarnings=error: no overflow warning
    assert out.dtype == dtype and np.array_equal(out, X)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sparse_input_gets_the_same_checks(dtype: type) -> None:
    import scipy.sparse as sp

    X = sp.csr_matrix(np.eye(4, dtype=dtype))
    X.data[2] = np.nan
    with pytest.raises(ValueError, match=r"row 2, column 2"):
        check_matrix(X)
    big = sp.csr_matrix(np.full((3, 2), 1e308 if dtype == np.float64 else 3e38, dtype=dtype))
    assert np.array_equal(check_matrix(big).toarray(), big.toarray())
