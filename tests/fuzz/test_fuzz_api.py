"""Fuzzed inputs and hyperparameters through ``Solver.fit`` and ``SQNClassifier``: a clear
``ValueError``/``TypeError``, a documented ``CurvatureError`` or warning, or a finite
result that is correct -- the reported objective equals the objective recomputed in NumPy at the
returned weights; predictions, scores and probabilities agree with the coefficients. Never a
crash, a hang or a warning. Every case runs in the worker process (``_worker.py``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fuzz import strategies as S
from tests.fuzz._worker import Raised, Worker

pytestmark = pytest.mark.fuzz


def _scaled(weight: float) -> settings:
    return settings(max_examples=max(5, int(settings.default.max_examples * weight)))


def assert_clear_error(r: Raised, *also: str) -> None:
    assert r.isinstance("ValueError", "TypeError", *also), f"{r.kind}: {r.message}\n{r.trace}"
    assert r.message.strip(), f"{r.kind} without a message\n{r.trace}"


#: Warnings documented by scikit-learn's input validation (a column-vector y is accepted)
#: Warnings the library documents as outcomes (not defects): scikit-learn's column-vector y,
#: a fit that did not meet tol or is worse than the majority class, feature scales a
#: first-order recipe finds far apart, and a run the divergence monitor stopped.
DOCUMENTED_WARNINGS = ("DataConversionWarning: A column-vector y was passed",
                       "SQNConvergenceWarning: ", "ConvergenceWarning: ", "DivergenceWarning: ")


def assert_no_warnings(r: dict[str, Any]) -> None:
    unexpected = [w for w in r["warnings"] if not w.startswith(DOCUMENTED_WARNINGS)]
    assert not unexpected, unexpected


def check_solver_result(r: Any) -> None:
    if isinstance(r, Raised):
        assert_clear_error(r, "CurvatureError")
        return
    assert_no_warnings(r)
    assert np.all(np.isfinite(r["coef"])) and np.all(np.isfinite(r["intercept"]))
    assert np.isfinite(r["fun"])
    if r["check"] is not None:  # the objective at the returned weights, recomputed
        assert r["fun"] == pytest.approx(r["check"], rel=1e-8, abs=1e-12)


@_scaled(1.0)
@given(data=S.design(), max_epochs=st.sampled_from([1, 2]),
       objective=st.sampled_from(["logloss", "squared_hinge", "hinge"]),
       fit_intercept=st.sampled_from([False, True, "regularized"]))
def test_solver_inputs(worker: Worker, data: Any, max_epochs: int, objective: str,
                       fit_intercept: Any) -> None:
    X, y, sw = data
    r = worker.call("solver_fit", X=X, y=y, sample_weight=sw, solver_kw=dict(
        objective=objective, max_epochs=max_epochs, random_state=0, fit_intercept=fit_intercept))
    check_solver_result(r)


@_scaled(1.5)
@given(data=S.design(hostile=False), objective=S.component(
           "objective", ["logloss", "squared_hinge", "hinge"]),
       curvature=S.component("curvature", ["identity", "lbfgs", "full_bfgs", "regularized_bfgs",
                                           "adagrad"]),
       schedule=S.component("schedule"), step=S.component("step"),
       projection=st.one_of(st.none(), S.component("projection", ["l2ball", "l1ball"])),
       average=st.sampled_from([False, True, 3, -1]),
       sampling=st.sampled_from(["uniform", "shuffle", "subset", "weighted", "bogus"]),
       budget=st.sampled_from([{"max_epochs": 1}, {"max_iter": 7}, {"max_samples": 0},
                               {"max_epochs": -1.0}, {"max_iter": 2.5}]),
       random_state=st.sampled_from([0, 1, None, -1, "x", np.random.default_rng(3)]))
def test_solver_hyperparameters(worker: Worker, data: Any, objective: Any, curvature: Any,
                                schedule: Any, step: Any, projection: Any, average: Any,
                                sampling: str, budget: dict[str, Any], random_state: Any) -> None:
    X, y, sw = data
    y = np.where(np.asarray(y) == np.unique(y)[0], -1, 1)  # binary objectives
    kw = dict(objective=objective, curvature=curvature, schedule=schedule, step=step,
              projection=projection, average=average, sampling=sampling,
              random_state=random_state, **budget)
    r = worker.call("solver_fit", X=X, y=y, sample_weight=sw, solver_kw=kw)
    check_solver_result(r)


def check_estimator_result(r: Any) -> None:
    if isinstance(r, Raised):
        assert_clear_error(r, "CurvatureError")
        return
    assert_no_warnings(r)
    if "coef" not in r:
        return
    classes = r["classes"]
    assert np.all(np.isfinite(r["coef"])) and np.all(np.isfinite(r["intercept"]))
    dec, pred = r["dec"], r["pred"]
    assert np.all(np.isfinite(dec))
    np.testing.assert_allclose(dec, r["dec_check"].reshape(dec.shape), rtol=1e-9, atol=1e-9)
    assert set(np.unique(pred)) <= set(classes)
    expected = classes[(dec > 0).astype(int)] if dec.ndim == 1 else classes[np.argmax(dec, 1)]
    np.testing.assert_array_equal(pred, expected)
    if "proba" in r:
        p = r["proba"]
        assert p.shape == (len(pred), len(classes)) and np.all((p >= 0) & (p <= 1))
        np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=1e-9)


@_scaled(1.0)
@given(data=S.design(), pred_rows=st.integers(1, 4), partial=st.booleans(),
       params=st.fixed_dictionaries({}, optional={
           "loss": st.sampled_from(["logloss", "hinge", "squared_hinge", "softmax", "bogus"]),
           "alpha": S.hyper_value(1e-4),
           "curvature": S.component("curvature", ["identity", "lbfgs", "adagrad"]),
           "class_weight": st.sampled_from([None, "balanced", {0: 2.0}, {"x": 1.0}, "bad"]),
           "multiclass": st.sampled_from(["auto", "ovr", "multinomial"]),
           "average": st.sampled_from([False, True]),
           "fit_intercept": st.booleans(),
           "tol": st.sampled_from([None, 1e-4, -1.0]),
       }))
def test_estimator(worker: Worker, data: Any, pred_rows: int, partial: bool,
                   params: dict[str, Any]) -> None:
    X, y, sw = data
    n_cols = np.shape(X)[1] if np.ndim(X) == 2 or hasattr(X, "shape") else 1
    X_pred = np.linspace(-1, 1, pred_rows * max(n_cols, 1)).reshape(pred_rows, max(n_cols, 1))
    r = worker.call("estimator", X=X, y=y, sample_weight=sw, X_pred=X_pred, partial=partial,
                    params={"max_iter": 2, "random_state": 0, **params})
    check_estimator_result(r)
