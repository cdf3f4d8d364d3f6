"""``SQNRegressor()``'s ridge fits by the normal equations (``sqnopt.estimators._exact``): where
``curvature="auto"`` would take one Newton step, the step is taken directly -- the same
minimiser, the same checks of the data and settings, and the driver everywhere else."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt import SQNRegressor
from sqnopt.estimators._exact import EXACT_PATH
from sqnopt.model import LinearModel


def _dense(n: int = 400, p: int = 12, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, p)) + 3.0          # uncentred columns
    y = X @ rng.normal(size=p) + 0.5 * rng.normal(size=n) + 7.0
    return X, y


def _closed_form(X: np.ndarray, y: np.ndarray, alpha: float, sw: np.ndarray | None,
                 intercept: bool) -> tuple[np.ndarray, float]:
    """The minimiser from the uncentred normal equations with a column of ones."""
    c = np.ones(X.shape[0]) if sw is None else sw
    c = c / c.sum()
    A = np.hstack([X, np.ones((X.shape[0], 1))]) if intercept else X
    H = A.T @ (c[:, None] * A)
    reg = np.full(A.shape[1], alpha)
    if intercept:
        reg[-1] = 0.0
    w = np.linalg.solve(H + np.diag(reg), A.T @ (c * y))
    return (w[:-1], float(w[-1])) if intercept else (w, 0.0)


@pytest.mark.parametrize("intercept", [False, True], ids=["no-intercept", "intercept"])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_default_small_dense_ridge_is_the_normal_equations(intercept: bool,
                                                          weighted: bool) -> None:
    X, y = _dense()
    sw = np.random.default_rng(1).uniform(0.2, 3.0, size=X.shape[0]) if weighted else None
    copies = (X.copy(), y.copy(), None if sw is None else sw.copy())
    est = SQNRegressor(alpha=1e-3, fit_intercept=intercept).fit(X, y, sample_weight=sw)
    assert est.fit_path_ == EXACT_PATH and "Newton step" in est.fit_path_reason_
    assert est.n_iter_ == 1 and est.converged_
    assert not hasattr(est, "history_") and not hasattr(est, "t_")
    coef, b = _closed_form(X, y, 1e-3, sw, intercept)
    np.testing.assert_allclose(est.coef_, coef, rtol=1e-9, atol=1e-10)
    assert abs(est.intercept_ - b) <= 1e-9 * max(1.0, abs(b))
    # the driver's own Newton step (curvature named: the driver runs) reaches the same point
    driver = SQNRegressor(alpha=1e-3, fit_intercept=intercept, curvature="newton",
                          tol=1e-12).fit(X, y, sample_weight=sw)
    assert driver.fit_path_ != EXACT_PATH
    np.testing.assert_allclose(est.coef_, driver.coef_, rtol=1e-8, atol=1e-9)
    # nothing the caller passed is modified
    np.testing.assert_array_equal(X, copies[0])
    np.testing.assert_array_equal(y, copies[1])
    if sw is not None:
        np.testing.assert_array_equal(sw, copies[2])


def test_float32_rows_and_tol_none() -> None:
    X, y = _dense()
    est = SQNRegressor(alpha=1e-2, tol=None).fit(X.astype(np.float32), y)
    assert est.fit_path_ == EXACT_PATH and not est.converged_   # no tol: nothing was tested
    coef, b = _closed_form(X.astype(np.float32).astype(np.float64), y, 1e-2, None, True)
    np.testing.assert_allclose(est.coef_, coef, rtol=1e-8, atol=1e-9)


@pytest.mark.parametrize("change", [
    dict(curvature="newton"), dict(curvature="lbfgs"), dict(step="armijo"),
    dict(loss="huber"), dict(loss="poisson"), dict(alpha=0.0), dict(history_every=1),
    dict(callback=lambda info: None), dict(average=True), dict(early_stopping=True),
], ids=repr)
def test_other_settings_run_the_driver(change: dict) -> None:
    X, y = _dense()
    if change.get("loss") == "poisson":
        y = np.random.default_rng(0).poisson(2.0, size=X.shape[0]).astype(float)
    est = SQNRegressor(**{"alpha": 1e-3, "max_iter": 5, **change})
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    assert est.fit_path_ != EXACT_PATH


def test_sparse_and_wide_rows_run_the_driver() -> None:
    X, y = _dense()
    assert SQNRegressor(alpha=1e-3).fit(sp.csr_matrix(X), y).fit_path_ != EXACT_PATH
    # beyond Newton's budget curvature="auto" takes conjugate gradients: so does the fit
    Xw, yw = _dense(n=2000, p=100)
    assert SQNRegressor(alpha=1e-4).fit(Xw, yw).fit_path_ != EXACT_PATH


@pytest.mark.parametrize("bad, match", [
    ("nan_x", "NaN"), ("inf_y", "finite|inf"), ("neg_w", "negative|sample_weight"),
    ("zero_w", "all weights are zero"), ("alpha", "alpha"), ("huge", "overflow|square"),
])
def test_bad_input_is_refused_as_the_driver_refuses_it(bad: str, match: str) -> None:
    X, y = _dense()
    sw = None
    kw: dict = {"alpha": 1e-3}
    if bad == "nan_x":
        X[3, 2] = np.nan
    elif bad == "inf_y":
        y[5] = np.inf
    elif bad == "neg_w":
        sw = np.ones(X.shape[0])
        sw[0] = -1.0
    elif bad == "zero_w":
        sw = np.zeros(X.shape[0])
    elif bad == "alpha":
        kw["alpha"] = -1.0
    elif bad == "huge":
        X[0, 0] = 1e200
    with pytest.raises(ValueError, match=match):
        SQNRegressor(**kw).fit(X, y, sample_weight=sw)


def test_refit_drops_driver_attributes_and_the_model_is_complete() -> None:
    X, y = _dense()
    est = SQNRegressor(alpha=1e-3, curvature="lbfgs").fit(X, y)
    assert hasattr(est, "history_")
    est.set_params(curvature="auto").fit(X, y)
    assert est.fit_path_ == EXACT_PATH and not hasattr(est, "history_")
    model = est.to_model()
    assert isinstance(model, LinearModel) and model.loss == "squared_error"
    np.testing.assert_allclose(model.predict(X), est.predict(X))
    from sklearn.linear_model import Ridge

    ridge = Ridge(alpha=1e-3 * X.shape[0], solver="cholesky").fit(X, y)
    np.testing.assert_allclose(est.coef_, ridge.coef_, rtol=1e-8, atol=1e-9)
    assert abs(est.score(X, y) - ridge.score(X, y)) < 1e-10
    # partial_fit after it starts a stochastic state afresh, as after a composite fit
    est.partial_fit(X, y)
    assert hasattr(est, "t_")
