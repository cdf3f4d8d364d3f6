"""Shared checks of the estimators' validation fast paths (``fast_fit_data``,
``fast_regression_data``) against scikit-learn's ``validate_data``."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp


def as_fitted_on_a_frame(est: Any, with_names: bool) -> Any:
    """``est`` with the feature names and count a fit on a 3-column data frame leaves
    (``with_names``), or as it is."""
    if with_names:
        est.feature_names_in_ = np.array(["a", "b", "c"], dtype=object)
        est.n_features_in_ = 3
    return est


def outcome(f: Callable[[], Any], *, with_file: bool = False) -> tuple[Any, list[tuple[Any, ...]]]:
    """``f()``'s result or raised exception (type and message) and its warnings (category,
    message and, with ``with_file``, the file the warning names)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out: Any = f()
        except Exception as exc:  # noqa: BLE001 - the error is what is compared
            out = (type(exc), str(exc))
    return out, [(w.category, str(w.message), w.filename) if with_file
                 else (w.category, str(w.message)) for w in caught]


def check_fast_path(name: str, X: Any, y: Any, fast: bool, ref_est: Any, fast_est: Any,
                    reference: Callable[[], Any], fast_path: Callable[[], Any], *,
                    with_file: bool = False) -> tuple[Any, list[tuple[Any, ...]]] | None:
    """Run scikit-learn's validation (``reference``, on ``ref_est``) and the fast path (on
    ``fast_est``) on ``(X, y)``. Where the fast path must not answer (``fast`` False): it
    answered nothing, warned nothing and left the estimator as it was; returns None. Else:
    the same arrays (type, dtype, shape, strides, C order, values, shared memory with the
    input) and the same fitted attributes; returns the fast path's result and warnings, whose
    agreement with scikit-learn's is asserted too."""
    before = dict(vars(fast_est))
    ref, ref_warnings = outcome(reference, with_file=with_file)
    got, got_warnings = outcome(fast_path, with_file=with_file)
    if not fast:
        assert got is None and not got_warnings, name
        assert vars(fast_est).keys() == before.keys() and all(
            vars(fast_est)[k] is v for k, v in before.items())
        return None
    assert got is not None, f"{name}: the fast path did not answer"
    assert got_warnings == ref_warnings
    Xr, yr = ref
    Xf, yf = got
    if sp.issparse(X):      # passed through unconverted by both
        assert Xr is X and Xf is X
        Xr = Xf = X.toarray()
    for a, b in ((Xr, Xf), (yr, yf)):
        assert type(a) is type(b) is np.ndarray
        assert a.dtype == b.dtype and a.shape == b.shape and a.strides == b.strides
        assert a.flags.c_contiguous and b.flags.c_contiguous
        np.testing.assert_array_equal(a, b)
        # the same memory: a view of what was passed where scikit-learn's is, else a copy
        assert np.shares_memory(a, X if a is Xr else y) == np.shares_memory(
            b, X if b is Xf else y)
    assert vars(fast_est).keys() == vars(ref_est).keys()
    assert fast_est.n_features_in_ == ref_est.n_features_in_
    assert type(fast_est.n_features_in_) is type(ref_est.n_features_in_)
    return got, got_warnings
