"""``penalty="l1" | "elasticnet"`` on the estimators: the optimum of scikit-learn's solvers
under the documented conversions, exact zeros, and the settings a composite fit refuses."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import ElasticNet, Lasso, LogisticRegression

from sqnopt import SQNClassifier, SQNRegressor
from sqnopt.model import LinearModel


def sk_penalty(l1_ratio: float) -> dict[str, Any]:
    """``LogisticRegression``'s keywords of an L1 share ``l1_ratio``: ``l1_ratio`` alone from
    scikit-learn 1.8 (which deprecates ``penalty``), else ``penalty`` (and ``l1_ratio``)."""
    import inspect

    from sklearn.linear_model import LogisticRegression

    if inspect.signature(LogisticRegression).parameters["penalty"].default == "deprecated":
        return {"l1_ratio": l1_ratio}
    if l1_ratio == 1.0:
        return {"penalty": "l1"}
    return {"penalty": "elasticnet", "l1_ratio": l1_ratio}


def _binary(n: int = 300, d: int = 20, seed: int = 0, sparse: bool = False
            ) -> tuple[Any, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    w = np.where(rng.random(d) < 0.3, 2.0, 0.0)
    y = np.where(X @ w + 0.5 * rng.normal(size=n) > 0.3, "yes", "no")
    if sparse:
        X = sp.csr_matrix(X * (rng.random(X.shape) < 0.4))
    return X, y


def _f(X: Any, y01: np.ndarray, coef: np.ndarray, b: float, alpha: float, r: float) -> float:
    m = np.where(y01, 1.0, -1.0) * (np.asarray(X @ coef).ravel() + b)
    return float(np.mean(np.logaddexp(0, -m)) + alpha * (r * np.abs(coef).sum()
                                                        + 0.5 * (1 - r) * coef @ coef))


@pytest.mark.parametrize("curvature", ["auto", "owlqn", "newglmnet"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("penalty, l1_ratio", [("l1", None), ("elasticnet", 0.4)])
def test_classifier_matches_logistic_regression(curvature: str, sparse: bool, penalty: str,
                                                l1_ratio: float | None) -> None:
    X, y = _binary(sparse=sparse)
    alpha = 0.01
    clf = SQNClassifier(penalty=penalty, l1_ratio=l1_ratio, alpha=alpha, curvature=curvature,
                        tol=1e-10).fit(X, y)
    kw = sk_penalty(1.0 if l1_ratio is None else l1_ratio)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        sk = LogisticRegression(C=1 / (alpha * X.shape[0]), solver="saga", tol=1e-12,
                                max_iter=100_000, **kw).fit(X, y)
    r = 1.0 if l1_ratio is None else l1_ratio
    y01 = y == "yes"
    ours = _f(X, y01, clf.coef_[0], clf.intercept_[0], alpha, r)
    theirs = _f(X, y01, sk.coef_[0], sk.intercept_[0], alpha, r)
    assert ours == pytest.approx(theirs, rel=1e-8) and ours <= theirs * (1 + 1e-10)
    assert clf.converged_ and np.all(clf.classes_ == ["no", "yes"])
    np.testing.assert_array_equal(clf.coef_ != 0.0, np.abs(sk.coef_) > 1e-7)
    assert 0 < np.count_nonzero(clf.coef_) < X.shape[1]
    assert clf.fit_path_ == ("newglmnet" if curvature == "auto" else curvature)
    proba = clf.predict_proba(X[:5])
    assert proba.shape == (5, 2) and np.allclose(proba.sum(axis=1), 1.0)
    assert isinstance(clf.to_model(), LinearModel)
    assert clf.score(X, y) > 0.7


@pytest.mark.parametrize("multiclass", ["auto", "ovr"])
def test_classifier_multiclass(multiclass: str) -> None:
    rng = np.random.default_rng(1)
    y = np.arange(300) % 3
    X = rng.normal(size=(3, 12))[y] * (rng.random(12) < 0.5) + rng.normal(size=(300, 12))
    clf = SQNClassifier(penalty="l1", alpha=0.01, multiclass=multiclass, tol=1e-8).fit(X, y)
    assert clf.coef_.shape == (3, 12) and clf.converged_
    assert np.count_nonzero(clf.coef_) < 36
    assert clf.fit_path_ == ("owlqn" if multiclass == "auto" else "newglmnet")
    assert clf.score(X, y) > 0.6


@pytest.mark.parametrize("penalty, l1_ratio", [("l1", None), ("elasticnet", 0.3)])
def test_regressor_matches_lasso_and_elastic_net(penalty: str, l1_ratio: float | None) -> None:
    rng = np.random.default_rng(2)
    X = rng.normal(size=(200, 15))
    t = X @ np.where(rng.random(15) < 0.3, 1.5, 0.0) + 0.2 * rng.normal(size=200)
    reg = SQNRegressor(penalty=penalty, l1_ratio=l1_ratio, alpha=0.05, tol=1e-10).fit(X, t)
    ref = (Lasso(alpha=0.05, tol=1e-14, max_iter=100_000) if l1_ratio is None else
           ElasticNet(alpha=0.05, l1_ratio=l1_ratio, tol=1e-14, max_iter=100_000)).fit(X, t)
    np.testing.assert_allclose(reg.coef_, ref.coef_, atol=1e-7)
    assert reg.intercept_ == pytest.approx(ref.intercept_, abs=1e-7)
    np.testing.assert_array_equal(reg.coef_ != 0.0, ref.coef_ != 0.0)
    assert reg.predict(X[:3]).shape == (3,)


@pytest.mark.parametrize("settings, match", [
    (dict(penalty="l3"), "penalty must be"),
    (dict(penalty="elasticnet"), "needs l1_ratio"),
    (dict(penalty="elasticnet", l1_ratio=2.0), "needs l1_ratio"),
    (dict(penalty="l1", curvature="lbfgs"), "curvature='auto', 'owlqn' or 'newglmnet'"),
    (dict(penalty="l1", step="armijo"), "leave step='auto'"),
    (dict(penalty="l1", projection="l2ball"), "projection=None"),
    (dict(penalty="l1", fit_intercept="regularized"), "fit_intercept=True or False"),
    (dict(penalty="l1", alpha=-1.0), "alpha"),
])
def test_incompatible_settings_fail_with_the_fix(settings: dict[str, Any], match: str) -> None:
    X, y = _binary(n=40, d=4)
    with pytest.raises(ValueError, match=match):
        SQNClassifier(**settings).fit(X, y)


def test_partial_fit_and_loss_without_multiclass_form() -> None:
    X, y = _binary(n=40, d=4)
    # partial_fit runs FTRL-Proximal (tests/estimators/test_stream_l1.py)
    clf = SQNClassifier(penalty="l1").partial_fit(X, y, classes=["no", "yes"])
    assert "ftrl=True" in clf.to_model().info["curvature"]
    yy = np.arange(40) % 3
    with pytest.raises(ValueError, match="multiclass='ovr'"):
        SQNClassifier("squared_hinge", penalty="l1", multiclass="multinomial").fit(X, yy)


def test_unconverged_fit_warns() -> None:
    X, y = _binary()
    with pytest.warns(ConvergenceWarning, match="pseudo-gradient"):
        clf = SQNClassifier(penalty="l1", alpha=1e-4, max_iter=1, tol=1e-12).fit(X, y)
    assert not clf.converged_


def test_switching_back_to_l2_refits_with_the_driver() -> None:
    X, y = _binary(n=120, d=5)
    clf = SQNClassifier(penalty="l1", alpha=0.01, warm_start=True).fit(X, y)
    clf.set_params(penalty="l2")
    clf.fit(X, y)
    assert hasattr(clf, "history_") and clf.converged_
