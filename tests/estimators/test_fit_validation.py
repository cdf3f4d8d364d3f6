"""``fast_fit_data`` (``SQNClassifier.fit``'s validation fast path) is scikit-learn's
``validate_data`` + ``check_classification_targets`` wherever it answers: same arrays, same
estimator attributes, same warnings; and it answers nothing (changes nothing) on every input
scikit-learn would reject or convert, which ``fit`` then hands to scikit-learn."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from sklearn.utils._unique import attach_unique
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from fast_validation import as_fitted_on_a_frame, check_fast_path, outcome

from sqnopt.estimators import SQNClassifier
from sqnopt.estimators import _classifier
from sqnopt.estimators._validation import fast_fit_data

RNG = np.random.default_rng(0)
N = 30
X64 = RNG.standard_normal((N, 3))


class _Subclass(np.ndarray):
    """An ndarray subclass (as np.matrix or a memmap), which the fast path leaves alone."""


def _labels(values: list[Any], dtype: Any = None, n: int = N) -> np.ndarray:
    y = np.array([values[i % len(values)] for i in range(n)], dtype=dtype)
    return y


#: (name, X, y, whether the fast path must answer)
CASES: list[tuple[str, Any, Any, bool]] = [
    ("int binary", X64, _labels([0, 1]), True),
    ("int -1/+1", X64, _labels([-1, 1]), True),
    ("int multiclass", X64, _labels([0, 1, 2, 5]), True),
    ("uint", X64, _labels([3, 7], np.uint8), True),
    ("bool", X64, _labels([True, False]), True),
    ("str", X64, _labels(["spam", "ham", "eggs"]), True),
    ("ints as floats", X64, _labels([0.0, 1.0, 2.0]), True),
    ("negative zero", X64, _labels([-0.0, 0.0, 1.0]), True),
    ("float32 labels", X64, _labels([1.0, 2.0], np.float32), True),
    ("float16 labels", X64, _labels([1.0, 2.0], np.float16), True),
    ("int64 range edge", X64, _labels([-2.0 ** 63, 0.0]), True),
    ("float32 X", X64.astype(np.float32), _labels([0, 1]), True),
    ("Fortran X", np.asfortranarray(X64), _labels([0, 1]), True),
    ("strided X", np.vstack([X64, X64])[::2], _labels([0, 1]), True),
    ("strided y", X64, _labels([0, 1], n=2 * N)[::2], True),
    ("one row", X64[:1], np.array([1]), True),
    ("one column", X64[:, :1], _labels([0, 1]), True),
    ("read-only X", np.frombuffer(X64.tobytes()).reshape(N, 3), _labels([0, 1]), True),
    ("many labels: warns", X64, np.arange(N), True),
    ("20 distinct of 20: no warning", X64[:20], np.arange(20), True),
    ("21 distinct of 21: warns", np.vstack([X64, X64])[:21], np.arange(21), True),
    ("half distinct: no warning", X64, _labels(list(range(N // 2))), True),
    ("two labels far apart: no warning", X64, _labels([-1000, 1000]), True),
    ("two float labels far apart: no warning", X64, _labels([-1e6, 1e6]), True),
    ("wide span, many distinct: warns", X64, np.arange(N) * 1000, True),
    ("bool labels over 20 samples", X64, _labels([True, False, False]), True),
    # everything below goes to scikit-learn
    ("continuous", X64, RNG.standard_normal(N), False),
    ("continuous float32", X64, RNG.standard_normal(N).astype(np.float32), False),
    ("NaN label", X64, np.r_[np.nan, _labels([0.0, 1.0], n=N - 1)], False),
    ("inf label", X64, np.r_[np.inf, _labels([0.0, 1.0], n=N - 1)], False),
    ("-inf label", X64, np.r_[-np.inf, _labels([0.0, 1.0], n=N - 1)], False),
    ("huge integral floats", X64, _labels([0.0, 1e20]), False),
    ("2**63", X64, _labels([0.0, 2.0 ** 63]), False),
    ("object str", X64, _labels(["a", "b"], object), False),
    ("object mixed", X64, _labels(["a", 1], object), False),
    ("object None", X64, _labels(["a", None], object), False),
    ("object NaN", X64, _labels([1.0, np.nan], object), False),
    ("object lists", X64, np.array([[1], [2]] * (N // 2) + [None], dtype=object)[:N], False),
    ("bytes", X64, _labels([b"a", b"b"]), False),
    ("complex", X64, _labels([1 + 0j, 2 + 0j]), False),
    ("complex continuous", X64, _labels([1 + 1j, 2 + 0j]), False),
    ("datetime", X64, _labels([np.datetime64("2020-01-01"), np.datetime64("2021-01-01")]),
     False),
    ("column y", X64, _labels([0, 1]).reshape(-1, 1), False),
    ("multilabel indicator", X64, np.c_[_labels([0, 1]), _labels([1, 1, 0])], False),
    ("multiclass multioutput", X64, np.c_[_labels([0, 1, 2]), _labels([1, 1, 0])], False),
    ("continuous multioutput", X64, RNG.standard_normal((N, 2)), False),
    ("scalar y", X64, np.array(1), False),
    ("3-D y", X64, np.zeros((N, 1, 1)), False),
    ("empty", np.zeros((0, 3)), np.zeros(0), False),
    ("no features", np.zeros((N, 0)), _labels([0, 1]), False),
    ("length mismatch", X64, _labels([0, 1], n=N - 1), False),
    ("list y", X64, _labels([0, 1]).tolist(), False),
    ("y with cached unique", X64, attach_unique(_labels([0, 1])), False),
    ("NaN in X", np.where(X64 > 2, np.nan, X64), _labels([0, 1]), False),
    ("inf in X", np.r_[X64[:-1], [[np.inf, 0, 0]]], _labels([0, 1]), False),
    ("finite X whose sum overflows", np.full((N, 3), 1e308), _labels([0, 1]), False),
    ("int X", np.arange(3 * N).reshape(N, 3), _labels([0, 1]), False),
    ("bool X", X64 > 0, _labels([0, 1]), False),
    ("big-endian X", X64.astype(">f8"), _labels([0, 1]), False),
    ("float16 X", X64.astype(np.float16), _labels([0, 1]), False),
    ("complex X", X64 + 0j, _labels([0, 1]), False),
    ("object X", X64.astype(object), _labels([0, 1]), False),
    ("str X", X64.astype(str), _labels([0, 1]), False),
    ("1-D X", X64[:, 0], _labels([0, 1]), False),
    ("3-D X", X64[:, :, None], _labels([0, 1]), False),
    ("list X", X64.tolist(), _labels([0, 1]), False),
    ("ndarray subclass X", X64.view(_Subclass), _labels([0, 1]), False),
    ("ndarray subclass y", X64, _labels([0, 1]).view(_Subclass), False),
    ("CSR X", sp.csr_matrix(X64), _labels([0, 1]), True),
    ("CSR float32 X", sp.csr_matrix(X64.astype(np.float32)), _labels([0, 1]), True),
    ("CSR array X", sp.csr_array(X64), _labels(["a", "b"]), True),
    ("CSR X of zeros", sp.csr_matrix((N, 3)), _labels([0, 1]), True),
    ("CSR X, many labels: warns", sp.csr_matrix(X64), np.arange(N), True),
    ("CSR NaN in X", sp.csr_matrix(np.where(X64 > 2, np.nan, X64)), _labels([0, 1]), False),
    ("CSR inf in X", sp.csr_matrix(np.r_[X64[:-1], [[np.inf, 0, 0]]]), _labels([0, 1]),
     False),
    ("CSR int X", sp.csr_matrix(np.arange(3 * N).reshape(N, 3)), _labels([0, 1]), False),
    ("CSR continuous y", sp.csr_matrix(X64), RNG.standard_normal(N), False),
    ("CSR empty", sp.csr_matrix((0, 3)), np.zeros(0), False),
    ("CSR no features", sp.csr_matrix((N, 0)), _labels([0, 1]), False),
    ("CSR length mismatch", sp.csr_matrix(X64), _labels([0, 1], n=N - 1), False),
    ("CSC X", sp.csc_matrix(X64), _labels([0, 1]), False),
    ("COO X", sp.coo_matrix(X64), _labels([0, 1]), False),
    ("None y", X64, None, False),
]


def _scikit_learn(est: Any, X: Any, y: Any) -> tuple[Any, Any]:
    Xv, yv = validate_data(est, X, y, accept_sparse="csr", dtype=[np.float64, np.float32],
                           order="C")
    check_classification_targets(yv)
    return Xv, yv


@pytest.mark.parametrize("with_names", [False, True])
@pytest.mark.parametrize("name,X,y,fast", CASES, ids=[c[0] for c in CASES])
def test_fast_validation_is_scikit_learns(name, X, y, fast, with_names):
    ref_est = as_fitted_on_a_frame(SQNClassifier(), with_names)
    fast_est = as_fitted_on_a_frame(SQNClassifier(), with_names)
    got = check_fast_path(name, X, y, fast, ref_est, fast_est,
                          lambda: _scikit_learn(ref_est, X, y),
                          lambda: fast_fit_data(fast_est, X, y), with_file=True)
    if got is not None:
        Xf = got[0][0]
        assert sp.issparse(X) or Xf is X or not X.flags.c_contiguous   # no copy of a usable array


def test_fast_validation_leaves_the_input_unmodified():
    X, y = X64.copy(), _labels([0.0, 1.0, 2.0])
    Xb, yb = X.tobytes(), y.tobytes()
    assert fast_fit_data(SQNClassifier(), X, y) is not None
    assert X.tobytes() == Xb and y.tobytes() == yb


@pytest.mark.parametrize("name,X,y,fast", [c for c in CASES if c[1] is X64 and c[2] is not None],
                         ids=[c[0] for c in CASES if c[1] is X64 and c[2] is not None])
def test_fit_raises_and_warns_as_scikit_learn(name, X, y, fast, monkeypatch):
    """End to end: ``fit`` with the fast path gives the error, warnings and coefficients of
    ``fit`` with scikit-learn's validation alone."""
    def fit() -> Any:
        return SQNClassifier(max_iter=2, tol=None, random_state=0).fit(X, y).coef_

    got, got_warnings = outcome(fit, with_file=True)
    monkeypatch.setattr(_classifier, "fast_fit_data", lambda *a: None)
    ref, ref_warnings = outcome(fit, with_file=True)
    assert [(c, m) for c, m, _ in got_warnings] == [(c, m) for c, m, _ in ref_warnings]
    if isinstance(ref, tuple):
        assert got == ref
    else:
        assert got.tobytes() == ref.tobytes()


@settings(max_examples=300, deadline=None)
@given(y=hnp.arrays(st.sampled_from([np.float64, np.float32, np.float16]), st.integers(1, 40),
                    elements=st.one_of(st.integers(-3, 3).map(float), st.floats(
                        allow_nan=True, allow_infinity=True, width=16))))
def test_float_labels_are_judged_as_scikit_learn_judges_them(y):
    """Any float labels: the fast path answers only where scikit-learn accepts them, and then
    with scikit-learn's labels and warnings."""
    X = np.zeros((y.shape[0], 2))
    ref, ref_warnings = outcome(lambda: _scikit_learn(SQNClassifier(), X, y), with_file=True)
    got, got_warnings = outcome(lambda: fast_fit_data(SQNClassifier(), X, y), with_file=True)
    if got is None:
        assert not got_warnings
        return
    assert not isinstance(ref, tuple) or not isinstance(ref[0], type), ref
    assert got_warnings == ref_warnings
    assert got[1].dtype == ref[1].dtype and got[1].tobytes() == ref[1].tobytes()


def test_a_categorical_data_frame_column_is_named_with_the_fix() -> None:
    """A pandas column of category dtype with string categories: scikit-learn's validation
    says "could not convert string to float", or, when the other columns' names are integers,
    first that column names of mixed types are not supported -- never which column, nor what
    to do. The estimator names the column and the encoding to use; the pipeline it proposes
    works."""
    pd = pytest.importorskip("pandas")
    from sklearn.compose import make_column_transformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    from sqnopt import SQNClassifier

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(120, 2)))                  # integer column names
    X["city"] = pd.Categorical(rng.choice(["paris", "rome", "oslo"], 120))
    y = np.where(X[0] + (X["city"] == "rome") > 0.5, 1, 0)
    for frame in (X, X.rename(columns=str)):
        for method in ("fit", "partial_fit"):
            with pytest.raises(ValueError, match="column 'city' .category dtype, categories "
                               "such as 'oslo', 'paris', 'rome'. is categorical") as info:
                getattr(SQNClassifier(), method)(frame, y, **(
                    {"classes": [0, 1]} if method == "partial_fit" else {}))
            assert "OneHotEncoder" in str(info.value)
            assert "mixed" not in str(info.value) and "could not convert" not in str(info.value)
    framed = X.rename(columns=str)
    pipe = make_pipeline(make_column_transformer((OneHotEncoder(handle_unknown="ignore"),
                                                  ["city"]), remainder="passthrough"),
                         SQNClassifier(random_state=0)).fit(framed, y)
    assert pipe.score(framed, y) > 0.9
    # a fitted model is given the same check on prediction
    fitted = SQNClassifier(random_state=0).fit(framed[["0", "1"]], y)
    with pytest.raises(ValueError, match="'city'"):
        fitted.predict(framed)
    # string columns too; numeric categories are numbers, as scikit-learn converts them
    with pytest.raises(ValueError, match=r"column 's' \(string values\)"):
        SQNClassifier().fit(framed.assign(s=rng.choice(["u", "v"], 120)).drop(columns="city"), y)
    codes = framed.assign(city=pd.Categorical(rng.choice([1.0, 2.0, 5.0], 120)))
    a = SQNClassifier(random_state=0).fit(codes, y)
    b = SQNClassifier(random_state=0).fit(codes.astype({"city": float}).to_numpy(), y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
