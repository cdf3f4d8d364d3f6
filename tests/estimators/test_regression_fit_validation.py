"""``fast_regression_data`` (``SQNRegressor.fit``'s validation fast path) is scikit-learn's
``validate_data(..., y_numeric=True, ensure_all_finite=False)`` wherever it answers: same arrays,
same estimator attributes, no warnings; and it answers nothing (changes nothing) on every input
scikit-learn would reject, convert or warn about, which ``fit`` then hands to scikit-learn."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.utils.validation import validate_data

from fast_validation import as_fitted_on_a_frame, check_fast_path, outcome

from sqnopt.estimators import SQNRegressor
from sqnopt.estimators import _regressor
from sqnopt.estimators._validation import fast_regression_data

RNG = np.random.default_rng(0)
N = 30
X64 = RNG.standard_normal((N, 3))
Y = RNG.standard_normal(N)


class _Subclass(np.ndarray):
    """An ndarray subclass (as np.matrix or a memmap), which the fast path leaves alone."""


#: (name, X, y, whether the fast path must answer)
CASES: list[tuple[str, Any, Any, bool]] = [
    ("float64", X64, Y, True),
    ("float32 targets", X64, Y.astype(np.float32), True),
    ("float16 targets", X64, Y.astype(np.float16), True),
    ("int targets", X64, np.arange(N), True),
    ("uint targets", X64, np.arange(N, dtype=np.uint8), True),
    ("float32 X", X64.astype(np.float32), Y, True),
    ("Fortran X", np.asfortranarray(X64), Y, True),
    ("strided X", np.vstack([X64, X64])[::2], Y, True),
    ("strided y", X64, np.concatenate([Y, Y])[::2], True),
    ("one row", X64[:1], Y[:1], True),
    ("one column", X64[:, :1], Y, True),
    ("read-only X", np.frombuffer(X64.tobytes()).reshape(N, 3), Y, True),
    ("NaN in X (checked by the data layer)", np.where(X64 > 1.5, np.nan, X64), Y, True),
    ("CSR X", sp.csr_matrix(X64), Y, True),
    ("CSR array X", sp.csr_array(X64), Y, True),
    ("NaN target", X64, np.where(Y > 1.0, np.nan, Y), False),
    ("infinite target", X64, np.where(Y > 1.0, np.inf, Y), False),
    ("overflowing sum of targets", X64, np.full(N, 1e308), False),
    ("bool targets", X64, Y > 0, False),
    ("object targets", X64, Y.astype(object), False),
    ("str targets", X64, np.array(["1.5"] * N), False),
    ("complex targets", X64, Y.astype(complex), False),
    ("column-vector y (warns)", X64, Y[:, None], False),
    ("list y", X64, list(Y), False),
    ("int X", X64.astype(np.int64), Y, False),
    ("float16 X", X64.astype(np.float16), Y, False),
    ("list X", X64.tolist(), Y, False),
    ("subclass X", X64.view(_Subclass), Y, False),
    ("1-D X", X64[:, 0], Y, False),
    ("3-D X", X64[:, :, None], Y, False),
    ("no rows", X64[:0], Y[:0], False),
    ("no columns", X64[:, :0], Y, False),
    ("lengths differ", X64, Y[:-1], False),
    ("COO X", sp.coo_matrix(X64), Y, False),
]


def _scikit_learn(est: Any, X: Any, y: Any) -> tuple[Any, Any]:
    return validate_data(est, X, y, accept_sparse="csr", dtype=[np.float64, np.float32],
                         order="C", y_numeric=True, reset=True, ensure_all_finite=False)


@pytest.mark.parametrize("with_names", [False, True])
@pytest.mark.parametrize("name,X,y,fast", CASES, ids=[c[0] for c in CASES])
def test_fast_regression_validation_is_scikit_learns(name, X, y, fast, with_names):
    ref_est = as_fitted_on_a_frame(SQNRegressor(), with_names)
    fast_est = as_fitted_on_a_frame(SQNRegressor(), with_names)
    got = check_fast_path(name, X, y, fast, ref_est, fast_est,
                          lambda: _scikit_learn(ref_est, X, y),
                          lambda: fast_regression_data(fast_est, X, y))
    if got is not None:
        assert got[1] == []     # no warnings


@pytest.mark.parametrize("name,X,y,fast", CASES, ids=[c[0] for c in CASES])
def test_regressor_fit_raises_and_warns_as_scikit_learn(name, X, y, fast, monkeypatch):
    """End to end: ``fit`` with the fast path gives the error, warnings and coefficients of
    ``fit`` with scikit-learn's validation alone."""
    def fit() -> Any:
        return SQNRegressor(max_iter=2, tol=None, random_state=0).fit(X, y).coef_

    got, got_warnings = outcome(fit)
    monkeypatch.setattr(_regressor, "fast_regression_data", lambda *a: None)
    ref, ref_warnings = outcome(fit)
    assert got_warnings == ref_warnings
    if isinstance(ref, tuple):
        assert got == ref
    else:
        assert got.tobytes() == ref.tobytes()
