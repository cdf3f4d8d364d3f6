"""A float CSR matrix in canonical form is used in place (no copy of its arrays, which cost
about a pass of Pegasos over news20 per fit), through read-only views that leave the caller's
arrays and flags alone; anything that needs a conversion is still converted on a copy. Binary
labels are found without a sort, with the same result as ``np.unique``."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt import Solver
from sqnopt.data import check_matrix, encode_labels


def _csr(dtype: type = np.float64) -> sp.csr_matrix:
    rng = np.random.default_rng(0)
    return sp.random(30, 8, density=0.4, format="csr", dtype=dtype, random_state=rng)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_canonical_csr_is_shared_read_only(dtype: type) -> None:
    X = _csr(dtype)
    before = [a.copy() for a in (X.data, X.indices, X.indptr)]
    out = check_matrix(X)
    for mine, theirs in ((out.data, X.data), (out.indices, X.indices), (out.indptr, X.indptr)):
        assert np.shares_memory(mine, theirs)
        assert not mine.flags.writeable
        assert theirs.flags.writeable                 # the caller's flags are untouched
    assert out.has_canonical_format and out.dtype == dtype
    with pytest.raises(ValueError, match="read-only"):
        out.data[0] = 1.0
    for a, b in zip(before, (X.data, X.indices, X.indptr)):
        np.testing.assert_array_equal(a, b)


def test_inputs_needing_a_conversion_are_copied() -> None:
    X = _csr()
    unsorted = sp.csr_matrix((X.data[::-1].copy(), X.indices[::-1].copy(), X.indptr.copy()),
                             shape=X.shape)   # rows' indices in reverse order: not canonical
    unsorted.has_sorted_indices = False
    for src in (unsorted, X.astype(np.int64), X.tocsc(), X.tocoo()):
        out = check_matrix(src)
        assert out.has_canonical_format
        assert not np.shares_memory(out.data, getattr(src, "data", np.empty(0)))
        np.testing.assert_array_equal(out.toarray(), src.toarray().astype(out.dtype))


def test_solver_on_shared_data_matches_a_copy() -> None:
    X = _csr()
    y = np.where(np.arange(30) % 3 == 0, 1.0, -1.0)
    a = Solver.pegasos(1e-2, max_epochs=3, random_state=0).fit(X, y)
    b = Solver.pegasos(1e-2, max_epochs=3, random_state=0).fit(X.copy(), y)
    np.testing.assert_array_equal(a.w, b.w)
    assert X.data.flags.writeable


@pytest.mark.parametrize("y", [
    [1, 2, 2, 1], [-1.0, 1.0, 1.0], [0, 1, 1, 0, 1], [True, False, True],
    np.array([5, 3, 5, 3], dtype=np.uint8), ["b", "a", "b"],
])
def test_binary_labels_match_unique(y: list[object]) -> None:
    enc, cls = encode_labels(y, "binary")
    np.testing.assert_array_equal(cls, np.unique(np.asarray(y)))
    np.testing.assert_array_equal(enc, np.where(np.asarray(y) == cls[1], 1.0, -1.0))


@pytest.mark.parametrize("y,what", [([1, 1, 1], "only one class"), ([1, 2, 3], "3 classes")])
def test_binary_label_errors_unchanged(y: list[int], what: str) -> None:
    with pytest.raises(ValueError, match=what):
        encode_labels(y, "binary")
