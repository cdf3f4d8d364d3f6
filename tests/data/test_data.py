"""Row access over dense/CSR float32/float64, validation errors, and input immutability."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt.data import prepare

from conftest import as_format

FORMATS = [("dense", np.float64), ("dense", np.float32), ("csr", np.float64), ("csr", np.float32)]


@pytest.mark.parametrize("fmt,dtype", FORMATS)
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_row_ops_match_numpy(fmt: str, dtype: type, fit_intercept: bool) -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 9))
    X[rng.random(X.shape) < 0.5] = 0.0
    X[3] = 0.0  # an empty row
    y = np.where(rng.random(30) < 0.5, -1, 1)
    data = prepare(as_format(X, fmt, dtype), y, fit_intercept=fit_intercept)
    rows = data.rows
    Xref = np.asarray(X, dtype=dtype).astype(np.float64)
    if fit_intercept:
        Xref = np.hstack([Xref, np.ones((30, 1))])
    assert rows.dim == Xref.shape[1]
    assert rows.is_sparse == (fmt == "csr")
    assert rows.dtype == np.dtype(dtype)
    w = rng.normal(size=rows.dim)
    for i in range(30):
        assert rows.dot(i, w) == pytest.approx(Xref[i] @ w, rel=1e-12, abs=1e-12)
        assert rows.sqnorm(i) == pytest.approx(Xref[i] @ Xref[i], rel=1e-12, abs=1e-12)
        out = w.copy()
        rows.axpy(i, 0.5, out)
        np.testing.assert_allclose(out, w + 0.5 * Xref[i], rtol=1e-13, atol=1e-13)


def test_labels_and_weights_encoding() -> None:
    X = np.eye(4)
    data = prepare(X, ["b", "a", "b", "a"], sample_weight=[1, 2, 3, 2])
    assert list(data.classes) == ["a", "b"]
    np.testing.assert_array_equal(data.y, [1, -1, 1, -1])
    np.testing.assert_allclose(data.sample_weight.mean(), 1.0)
    np.testing.assert_allclose(data.sample_weight, np.array([1, 2, 3, 2]) / 2.0)
    assert data.weight_sum == 8.0
    multi = prepare(X, [5, 7, 9, 7], label_kind="multiclass")
    np.testing.assert_array_equal(multi.y, [0, 1, 2, 1])
    imp = prepare(X, [0, 1, 0, 1], sample_weight=[1, 2, 3, 2], importance_sampling=True)
    np.testing.assert_array_equal(imp.grad_weight, np.ones(4))


def test_inputs_are_not_modified() -> None:
    rng = np.random.default_rng(1)
    X = np.asfortranarray(rng.normal(size=(20, 5)))  # needs a C-contiguous copy
    Xs = sp.coo_matrix(X)                           # needs conversion to CSR
    Xdup = sp.csr_matrix((np.ones(3), np.array([1, 1, 0]), np.array([0, 2, 3])), shape=(2, 3))
    y = rng.integers(0, 2, 20)
    sw = rng.random(20) + 0.1
    copies = [X.copy(), Xs.copy(), Xdup.copy(), y.copy(), sw.copy()]
    prepare(X, y, sample_weight=sw)
    prepare(Xs, y, sample_weight=sw)
    prepare(Xdup, [0, 1])  # non-canonical CSR (duplicate entries) is summed on a copy
    np.testing.assert_array_equal(X, copies[0])
    np.testing.assert_array_equal(Xs.toarray(), copies[1].toarray())
    np.testing.assert_array_equal(Xdup.indices, copies[2].indices)
    np.testing.assert_array_equal(Xdup.data, copies[2].data)
    np.testing.assert_array_equal(y, copies[3])
    np.testing.assert_array_equal(sw, copies[4])


@pytest.mark.parametrize(
    "X,y,kwargs,exc,match",
    [
        (np.array([[1.0, np.nan], [0.0, 1.0]]), [0, 1], {}, ValueError, r"NaN or infinity.*row 0"),
        (np.array([[1.0, 0.0], [np.inf, 1.0]]), [0, 1], {}, ValueError, r"NaN or infinity.*row 1"),
        (sp.csr_matrix(np.array([[1.0, 0.0], [0.0, np.nan]])), [0, 1], {}, ValueError,
         r"NaN or infinity.*row 1, column 1"),
        (np.ones((3, 2)), [0, 1], {}, ValueError, r"has 2 labels but X has 3 samples"),
        (np.ones((3, 2)), [1, 1, 1], {}, ValueError, r"only one class"),
        (np.ones((3, 2)), [0, 1, 2], {}, ValueError, r"3 classes.*binary"),
        (np.ones((0, 2)), [], {}, ValueError, r"empty"),
        (np.ones((3, 0)), [0, 1, 0], {}, ValueError, r"empty"),
        (np.ones(3), [0, 1, 0], {}, ValueError, r"2-D"),
        (np.array([["a", "b"], ["c", "d"]]), [0, 1], {}, TypeError, r"unsupported dtype"),
        (np.ones((2, 2), dtype=complex), [0, 1], {}, TypeError, r"unsupported dtype"),
        (np.ones((2, 2)), [0.0, np.nan], {}, ValueError, r"y: contains NaN"),
        (np.ones((2, 2)), [0, 1], {"sample_weight": [1.0, -1.0]}, ValueError, r"negative"),
        (np.ones((2, 2)), [0, 1], {"sample_weight": [0.0, 0.0]}, ValueError, r"sums to zero"),
        (np.ones((2, 2)), [0, 1], {"sample_weight": [1.0]}, ValueError, r"one weight per sample"),
        (np.ones((2, 2)), [0, 1], {"sample_weight": [1.0, np.inf]}, ValueError, r"NaN or inf"),
        (np.ones((2, 2)), [0, 2], {"classes": [0, 1]}, ValueError, r"not in classes"),
    ],
)
def test_bad_input_is_named(X: object, y: object, kwargs: dict[str, object], exc: type,
                            match: str) -> None:
    with pytest.raises(exc, match=match):
        prepare(X, y, **kwargs)  # type: ignore[arg-type]


def test_integer_and_bool_matrices_become_float64() -> None:
    data = prepare(np.array([[1, 0], [0, 1]], dtype=np.int8), [0, 1])
    assert data.X.dtype == np.float64
    data = prepare(np.array([[True, False], [False, True]]), [0, 1])
    assert data.X.dtype == np.float64


def test_an_objective_of_another_label_kind_is_refused_not_encoded_as_classes() -> None:
    """Count or real-valued targets of an objective that declares another label kind used to
    be encoded as class indices without a word."""
    from sqnopt import Solver
    from sqnopt.objectives import LogLoss

    class CountLoss(LogLoss):
        label_kind = "counts"  # type: ignore[assignment]

    X = np.random.default_rng(0).random((20, 3))
    y = np.arange(20) % 4
    with pytest.raises(ValueError,
                       match="label_kind='counts'.*'binary', 'multiclass', 'regression'"):
        Solver(objective=CountLoss(lam=1e-3)).init_state(X, y)
