"""Fuzzed sparse structures, svmlight text and model-file bytes.

* sparse structures: every entry point either raises a clear ``ValueError``/``TypeError`` or
  the structure was valid (an independent loop-by-loop check in the worker); an invalid one is
  never accepted, and no case crashes.
* svmlight text: valid files read back exactly; any file gives the same outcome with
  the compiled parser and its pure-Python twin (the same error message, or the same
  matrix); errors are one line naming the file; results are finite.
* model bytes: ``LinearModel.load`` raises ``ModelFileError`` (or gives a model whose
  coefficients, scores and probabilities are finite and consistent, or whose scoring refuses
  scores that overflow float64 with a ``ValueError`` naming the overflow).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.fuzz import strategies as S
from tests.fuzz._worker import Raised, Worker
from tests.fuzz.test_fuzz_api import assert_clear_error, assert_no_warnings

pytestmark = pytest.mark.fuzz


def _scaled(weight: float) -> settings:
    return settings(max_examples=max(5, int(settings.default.max_examples * weight)))


ENTRIES = ["check_matrix", "solver", "predict", "predict_proba", "model", "estimator_fit",
           "csr_rows"]


@_scaled(2.0)
@given(structure=S.sparse_structure(), entry=st.sampled_from(ENTRIES),
       labels=st.sampled_from(["pm1", "ab"]))
def test_sparse_structures(worker: Worker, structure: Any, entry: str, labels: str) -> None:
    fmt, shape, arrays = structure
    assume(entry != "csr_rows" or fmt == "csr")  # the compiled row view is CSR only
    y = np.resize(np.array([-1.0, 1.0] if labels == "pm1" else ["a", "b"]), shape[0])
    r = worker.call("sparse_entry", fmt=fmt, shape=shape, arrays=arrays, entry=entry, y=y)
    if isinstance(r, Raised):
        assert_clear_error(r)
        return
    assert_no_warnings(r)
    assert r["valid"], f"an invalid {fmt} structure was accepted by {entry}: {arrays}"
    for key in ("dense", "pred", "dots"):
        if key in r and np.asarray(r[key]).dtype.kind == "f":
            assert np.all(np.isfinite(r[key]))


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))
    return bool(a == b)


def check_svmlight(r: Any) -> None:
    assert not isinstance(r, Raised), f"{r.kind}: {r.message}\n{r.trace}"  # anticipated only
    assert_no_warnings(r)
    path = r["path"]
    for what in ("load", "load_one_based", "scan", "chunks"):
        a, b = r["compiled"][what], r["python"][what]
        assert a[0] == b[0] and _same(a[1], b[1]), (what, a, b)  # the two parsers agree
        kind, value = a
        if kind != "ok":
            assert kind == "ValueError", (what, a)
            assert value.startswith(path) and "\n" not in value, value
            continue
        if what == "scan":
            rows, width, labels = value
            assert rows >= 1 and width >= 1 and np.all(np.isfinite(labels))
        elif what == "chunks":
            loaded = r["compiled"]["load_one_based"]
            if loaded[0] == "ok" and not isinstance(loaded[1][0], str):
                X = np.vstack([c[0] for c in value])
                y = np.concatenate([c[1] for c in value])
                Xl, yl = loaded[1]
                assert np.array_equal(y, yl)
                assert np.array_equal(X[:, :Xl.shape[1]], Xl) and not X[:, Xl.shape[1]:].any()
        else:
            X, y = value[0], value[1]
            if isinstance(X, str):  # a wide matrix, summarised
                continue
            assert np.all(np.isfinite(X)) and np.all(np.isfinite(y)) and X.shape[0] == len(y)
    scan, load1 = r["compiled"]["scan"], r["compiled"]["load_one_based"]
    if scan[0] == "ok" and load1[0] == "ok" and not isinstance(load1[1][0], str):
        assert scan[1][0] == load1[1][0].shape[0]  # scan counts the rows load reads


@_scaled(2.0)
@given(case=S.svmlight_valid(), chunk=st.integers(1, 4))
def test_valid_svmlight_reads_back_exactly(worker: Worker, case: Any, chunk: int) -> None:
    text, X, y, zero_based = case
    r = worker.call("svmlight", content=text, name="data.svm", n_features=X.shape[1],
                    zero_based=zero_based, chunk=chunk)
    check_svmlight(r)
    kind, value = r["compiled"]["load"]
    assert kind == "ok", value
    np.testing.assert_array_equal(value[0], X)
    np.testing.assert_array_equal(value[1], y)


@_scaled(3.0)
@given(case=S.svmlight_bytes(), chunk=st.integers(1, 4),
       n_features=st.sampled_from([None, None, 3, 12]),
       zero_based=st.sampled_from(["auto", True, False]))
def test_any_svmlight_bytes(worker: Worker, case: Any, chunk: int, n_features: Any,
                            zero_based: Any) -> None:
    content, name = case
    r = worker.call("svmlight", content=content, name=name, n_features=n_features,
                    zero_based=zero_based, chunk=chunk)
    check_svmlight(r)


@_scaled(2.0)
@given(content=S.model_bytes())
def test_model_file_bytes(worker: Worker, content: bytes) -> None:
    r = worker.call("model_file", content=content)
    if isinstance(r, Raised):
        if r.kind == "ValueError" and "overflow float64" in r.message:
            return  # finite coefficients whose scores overflow: refused when scoring
        assert r.kind == "ModelFileError", f"{r.kind}: {r.message}\n{r.trace}"
        assert "\n" not in r.message and "model file '" in r.message
        return
    assert_no_warnings(r)
    for key in ("coef", "intercept", "scores"):
        assert np.all(np.isfinite(r[key]))
    assert set(np.unique(r["pred"])) <= set(r["classes"])
    if "proba" in r:
        np.testing.assert_allclose(r["proba"].sum(axis=1), 1.0, rtol=1e-9)
