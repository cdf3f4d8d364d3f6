"""The input validation of ``SQNClassifier.fit``: scikit-learn's, with a fast path for the common
case of a float array or CSR matrix and a 1-D array of discrete labels; and its twin for
``SQNRegressor.fit`` (real-valued targets, :func:`fast_regression_data`).

``fit`` validates ``(X, y)`` as scikit-learn's classifiers do:
``validate_data(est, X, y, accept_sparse="csr", dtype=[float64, float32], order="C")`` followed
by ``check_classification_targets(y)``. On small data these two generic functions cost about a
third of ``SGDClassifier``'s whole fit (most of it in their handling of input types the common
case is not: data frames, array-API namespaces, other sparse formats and ragged input, type
inference of the target). :func:`fast_fit_data` decides the common case itself with the same checks; ``fit``
hands everything else, including every input that one of the checks would reject, to
scikit-learn's functions: errors and warnings on bad input are always scikit-learn's own.
"""

from __future__ import annotations

import math
import sys
import warnings
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn import get_config

from sqnopt._text import short_list

__all__ = ["check_frame_columns", "fast_fit_data", "fast_regression_data"]

_FLOATS = (np.float64, np.float32)
#: the sparse containers ``validate_data(accept_sparse="csr")`` passes through unconverted
_CSR = (sp.csr_matrix, sp.csr_array)
#: float labels at or beyond this size cast to int64 with an overflow, which scikit-learn's
#: integral test (``y != y.astype(int64).astype(y.dtype)``) reads as non-integral
_INT64_RANGE = 2.0 ** 63


def fast_fit_data(estimator: Any, X: Any, y: Any) -> tuple[Any, Any] | None:
    """``(X, y)`` as ``validate_data(estimator, X, y, accept_sparse="csr",
    dtype=[np.float64, np.float32], order="C")`` and then ``check_classification_targets(y)``
    leave them, with the same effects on ``estimator`` (``n_features_in_`` set,
    ``feature_names_in_`` removed) and the same warning, when ``X`` is a plain 2-D float64 or
    float32 ``ndarray`` or a SciPy CSR matrix or array of those dtypes, with finite values and
    at least one row and one column, and ``y`` a plain 1-D ``ndarray`` of as many booleans,
    integers, strings or integral finite floats (of at most 64 bits);
    ``None`` (nothing done, nothing changed) otherwise.

    Why this is scikit-learn's result on such input:

    * ``validate_data`` / ``check_X_y``: a ``numpy.ndarray`` (not a subclass such as
      ``np.matrix`` or a memmap, not a data frame) has no feature names, so ``reset=True``
      removes ``feature_names_in_``; its dtype is one of the accepted ones, so ``check_array``
      converts nothing and returns ``np.asarray(X, order="C")`` (``X`` itself when it is
      C-contiguous) after the checks it makes: two dimensions, no complex values, at least one
      sample and one feature, all values finite (scikit-learn's first test: the sum is finite;
      any NaN or infinity makes the sum non-finite, so a finite sum proves them absent);
      ``n_features_in_`` is then ``X.shape[1]``. A CSR matrix or array (``csr_matrix``,
      ``csr_array``, not a subclass) of an accepted dtype is in the accepted format, so
      ``_ensure_sparse_format`` returns it unchanged after the same finiteness test on its
      stored values ``X.data`` (an index structure that compiled code could not trust is
      refused before, by :func:`sqnopt.data.check_sparse_structure`), and a sparse matrix has
      no feature names. ``y``: ``column_or_1d`` returns a 1-D array as a C-contiguous array of
      the same dtype; the finiteness test concerns float
      labels only, complex labels are refused here; the lengths agree.
    * ``check_classification_targets`` / ``type_of_target``: a 1-D array is never
      multilabel; a first label that is a ``bool``, an integer, a float or a ``str`` is neither
      bytes nor a sequence; a non-empty 1-D array of a non-object dtype is ``"binary"`` or
      ``"multiclass"`` (both accepted) unless its dtype is floating and ``y !=
      y.astype(int64).astype(y.dtype)`` somewhere -- the very test made here, after checking
      that every label lies in int64's range so that the cast is exact (beyond it the cast
      overflows and scikit-learn finds ``"continuous"``: such labels, like NaN and infinity,
      go to scikit-learn). The one warning, more distinct labels than half of more than 20
      samples, is given with scikit-learn's message and category from the same count (the
      number of distinct labels, computed only when it can matter).

    Labels with cached unique values in their dtype's metadata (scikit-learn's
    ``attach_unique``), which scikit-learn would count instead, and scikit-learn's array-API
    dispatch go to scikit-learn too.
    """
    shape = _plain_arrays(X, y)
    if shape is None:
        return None
    sparse, n_samples, n_features = shape
    kind = y.dtype.kind
    # distinct labels <= max - min + 1 for numbers (integral floats included): the >50 %
    # distinct-labels test below counts them (a sort) only when that bound allows it
    span = math.inf
    if kind == "f" and y.dtype.itemsize <= 8:           # float16, float32, float64
        # NaN fails both comparisons; infinities and labels too large for int64 fail one
        # (compared as Python floats: the bound overflows float16)
        lo, hi = float(y.min()), float(y.max())
        if not (lo >= -_INT64_RANGE and hi < _INT64_RANGE):
            return None
        if (y != y.astype(np.int64).astype(y.dtype)).any():
            return None                                  # "continuous": scikit-learn raises
        span = hi - lo + 1.0
    elif kind not in "biuU":
        return None                                      # objects, bytes, complex, dates, ...
    Xc = X if sparse else np.asarray(X, order="C")
    with np.errstate(over="ignore"):
        if not np.isfinite((X.data if sparse else Xc).sum()):
            return None
    if get_config()["array_api_dispatch"]:
        return None
    _accept(estimator, n_features)
    yc = np.asarray(y, order="C")
    half = round(0.5 * n_samples)
    if n_samples > 20 and kind in "biu":
        span = float(yc.max()) - float(yc.min()) + 1.0
    if n_samples > 20 and span > half and np.unique(yc).shape[0] > half:
        warnings.warn(
            "The number of unique classes is greater than 50% of the number "
            "of samples. `y` could represent a regression problem, not a "
            "classification problem.",
            UserWarning,
            stacklevel=2,                 # at the caller, as scikit-learn's
        )
    return Xc, yc


def _plain_arrays(X: Any, y: Any) -> tuple[bool, int, int] | None:
    """``(sparse, n_samples, n_features)`` when ``X`` is a plain 2-D float ``ndarray`` or
    SciPy CSR matrix / array with at least one row and one column and ``y`` a plain 1-D
    ``ndarray`` (no dtype metadata) of as many labels; ``None`` otherwise (the fast paths'
    common gate)."""
    sparse = type(X) in _CSR
    if not (sparse or type(X) is np.ndarray) or type(y) is not np.ndarray:
        return None
    if X.ndim != 2 or y.ndim != 1 or X.dtype not in _FLOATS or y.dtype.metadata is not None:
        return None
    n_samples, n_features = X.shape
    if n_samples < 1 or n_features < 1 or y.shape[0] != n_samples:
        return None
    return sparse, int(n_samples), int(n_features)


def _accept(estimator: Any, n_features: int) -> None:
    """The estimator's attributes as ``validate_data(..., reset=True)`` sets them on accepted
    arrays: ``n_features_in_``, and no ``feature_names_in_``."""
    if hasattr(estimator, "feature_names_in_"):
        delattr(estimator, "feature_names_in_")
    estimator.n_features_in_ = n_features


def fast_regression_data(estimator: Any, X: Any, y: Any) -> tuple[Any, Any] | None:
    """``(X, y)`` as ``SQNRegressor.fit``'s ``validate_data(estimator, X, y,
    accept_sparse="csr", dtype=[np.float64, np.float32], order="C", y_numeric=True,
    reset=True, ensure_all_finite=False)`` leaves them, with the same effects on ``estimator``
    (``n_features_in_`` set, ``feature_names_in_`` removed), when ``X`` is a plain 2-D float64 or
    float32 ``ndarray`` or a SciPy CSR matrix or array of those dtypes with at least one row and
    one column, and ``y`` a plain 1-D ``ndarray`` of as many finite floats (of at most 64 bits)
    or integers; ``None`` (nothing done, nothing changed) otherwise -- scikit-learn's function
    then validates, with its own errors and warnings.

    Why this is scikit-learn's result on such input: ``X`` as in :func:`fast_fit_data`, except
    that ``ensure_all_finite=False`` makes no finiteness test (the data layer's
    :func:`sqnopt.data.check_matrix` makes it, naming the first bad entry, either way). ``y``:
    ``_check_y`` takes a 1-D array through ``column_or_1d`` (a C-contiguous array of the same
    dtype: no warning for a 1-D array), ``_assert_all_finite`` (finite: its first test, a finite
    sum, proves it; a non-finite sum goes to scikit-learn, which tells an overflow from a NaN),
    ``_ensure_no_complex_data`` (a float or integer dtype is not complex) and ``y_numeric``
    (only an object dtype is converted); ``check_consistent_length`` compares the two lengths.
    Boolean, object, string and other targets, and scikit-learn's array-API dispatch, go to
    scikit-learn.
    """
    shape = _plain_arrays(X, y)
    if shape is None:
        return None
    sparse, n_samples, n_features = shape
    kind = y.dtype.kind
    if kind == "f":
        if y.dtype.itemsize > 8:
            return None
        with np.errstate(over="ignore", invalid="ignore"):
            if not np.isfinite(y.sum()):
                return None
    elif kind not in "iu":
        return None
    if get_config()["array_api_dispatch"]:
        return None
    _accept(estimator, n_features)
    return (X if sparse else np.asarray(X, order="C")), np.asarray(y, order="C")


def check_frame_columns(X: Any, owner: str = "SQNClassifier") -> None:
    """Refuse a pandas data frame with columns that are not numbers, naming them and the fix.

    scikit-learn converts a frame with ``np.asarray(X, dtype=float)``: a column of category
    dtype with string categories (or of strings) then fails with ``could not convert string to
    float: 'x'`` -- or, when the other columns' names are integers, first with its error about
    mixed column-name types -- neither of which names the column or says what to do. A
    categorical feature must be encoded as numbers first (one indicator per category, e.g.
    scikit-learn's ``OneHotEncoder``); categoricals whose categories are numbers are converted
    to those numbers, as scikit-learn does, and accepted. Anything that is not a pandas frame
    is left to scikit-learn's validation."""
    pd = sys.modules.get("pandas")
    if pd is None or not isinstance(X, pd.DataFrame):
        return
    types = pd.api.types

    bad: list[str] = []
    for name, dtype in X.dtypes.items():
        if isinstance(dtype, pd.CategoricalDtype):
            cats = dtype.categories
            if types.is_numeric_dtype(cats.dtype) and not types.is_bool_dtype(cats.dtype):
                continue
            bad.append(f"{name!r} (category dtype, categories such as "
                       f"{short_list(cats[:3].tolist(), 3, quote=True)})")
        elif types.is_numeric_dtype(dtype) or types.is_bool_dtype(dtype):
            continue
        elif types.is_string_dtype(dtype) or dtype == object:
            kind = types.infer_dtype(X[name], skipna=True)
            if kind in ("integer", "floating", "mixed-integer-float", "decimal", "boolean",
                        "empty"):
                continue
            bad.append(f"{name!r} ({kind} values)")
    if not bad:
        return
    names = [b.split(" (", 1)[0] for b in bad]
    raise ValueError(
        f"{owner} needs numeric features, but the data frame's column"
        f"{'s' if len(bad) > 1 else ''} {short_list(bad, 5)} "
        f"{'are' if len(bad) > 1 else 'is'} categorical. Encode "
        f"{'them' if len(bad) > 1 else 'it'} as numbers first, one indicator column per "
        f"category: e.g. make_pipeline(make_column_transformer((OneHotEncoder("
        f"handle_unknown='ignore'), [{', '.join(names)}]), remainder='passthrough'), "
        f"{owner}()) with scikit-learn's OneHotEncoder, or pandas.get_dummies(X, columns="
        f"[{', '.join(names)}])")
