"""Regularization paths (``sqnopt.estimators.regularization_path``, ``PathCV``): the grid's
start is the gradient of the loss at the intercept-only model, a warm-started path reaches the
cold fits' optima with fewer iterations, and the cross-validated choice is the best mean score's
alpha, refit on all the data."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone, is_classifier, is_regressor
from sklearn.metrics import log_loss

from sqnopt.data import make_rows
from sqnopt.estimators import (
    PathCV,
    SQNClassifier,
    SQNRegressor,
    alpha_grid,
    alpha_max,
    regularization_path,
)
from sqnopt.objectives import LogisticKernel, SoftmaxKernel


def _classification(n: int = 400, d: int = 12, k: int = 2, seed: int = 0,
                    sparse: bool = False) -> tuple[object, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.5)
    W = rng.normal(size=(d, k))
    y = np.argmax(X @ W + rng.gumbel(size=(n, k)), axis=1)
    return (sp.csr_matrix(X) if sparse else X), y


def _kernel_gradient_at_intercept_only(X: object, y: np.ndarray, k: int) -> np.ndarray:
    """The gradient of sqnopt's own mean log loss at w = 0 with the intercepts at the class
    log-frequencies (the intercept-only optimum), feature entries only."""
    n, d = np.shape(X)
    ones = np.ones(n)
    p = np.bincount(y, minlength=k) / n
    if k == 2:
        kern = LogisticKernel(make_rows(X, np.where(y == 1, 1.0, -1.0), ones, ones, True), 0.0)
        w = np.zeros(d + 1)
        w[-1] = np.log(p[1] / p[0])
    else:
        kern = SoftmaxKernel(make_rows(X, y.astype(np.float64), ones, ones, True), 0.0, k)
        w = np.zeros(kern.n_params).reshape(k, d + 1)
        w[:, -1] = np.log(p)
        w = w.ravel()
    g = np.empty(kern.n_params)
    kern.full_gradient(w, g)
    return g.reshape(-1, d + 1)[:, :d] if k > 2 else g[:d]


@pytest.mark.parametrize("k", [2, 4])
@pytest.mark.parametrize("sparse", [False, True])
def test_alpha_max_is_the_gradient_at_the_intercept_only_model(k: int, sparse: bool) -> None:
    X, y = _classification(k=k, sparse=sparse)
    g = _kernel_gradient_at_intercept_only(X, y, k)
    assert alpha_max(X, y) == pytest.approx(np.abs(g).max(), rel=1e-10)
    assert alpha_max(X, y, l1_ratio=0.5) == pytest.approx(2 * np.abs(g).max(), rel=1e-10)
    assert alpha_max(X, y, l1_ratio=0.0) == pytest.approx(1e3 * np.abs(g).max(), rel=1e-10)


def test_alpha_max_of_regression_losses_and_weights() -> None:
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 5))
    t = rng.poisson(np.exp(0.3 * X[:, 0]))
    sw = rng.uniform(0.5, 2.0, 300)
    # squared error: the residuals about the weighted mean; Poisson: e^b = weighted mean
    for loss in ("squared_error", "poisson"):
        ybar = sw @ t / sw.sum()
        expect = np.abs(X.T @ (sw * (ybar - t))).max() / sw.sum()
        assert alpha_max(X, t, loss=loss, sample_weight=sw) == pytest.approx(expect, rel=1e-12)
    with pytest.raises(ValueError, match="y >= 0"):
        alpha_max(X, -t - 1.0, loss="poisson")
    with pytest.raises(ValueError, match="no closed form for loss='hinge'.*pass the alphas"):
        alpha_max(X, t > 1, loss="hinge")
    with pytest.raises(ValueError, match="l1_ratio"):
        alpha_max(X, t, loss="squared_error", l1_ratio=2.0)


def test_grid_is_decreasing_and_log_spaced() -> None:
    X, y = _classification()
    top = alpha_max(X, y)
    g = alpha_grid(X, y, n_alphas=7)                     # L1 share 1: eps 1e-4 (n > d)
    assert g[0] == pytest.approx(top) and g[-1] == pytest.approx(1e-4 * top)
    assert np.allclose(np.diff(np.log(g)), np.log(1e-4) / 6)
    ridge = alpha_grid(X, y, n_alphas=7, l1_ratio=0.0)    # starts where L1 would, 6 decades
    assert ridge[0] == pytest.approx(top) and ridge[-1] == pytest.approx(1e-6 * top)
    with pytest.raises(ValueError, match="n_alphas"):
        alpha_grid(X, y, n_alphas=0)
    with pytest.raises(ValueError, match="alpha_max is 0"):
        alpha_grid(X, np.zeros(len(y)), loss="squared_error")


def _objective(est: SQNClassifier, X: object, y: np.ndarray, alpha: float) -> float:
    p = est.predict_proba(X)
    return float(log_loss(y, p) + 0.5 * alpha * np.sum(np.asarray(est.coef_) ** 2))


@pytest.mark.parametrize("k", [2, 3])
def test_warm_path_reaches_the_cold_optima_in_fewer_iterations(k: int) -> None:
    X, y = _classification(k=k, n=600, seed=2, sparse=True)
    path = regularization_path(X, y, estimator=SQNClassifier(random_state=0), n_alphas=8)
    assert np.all(np.diff(path.alphas) < 0) and path.converged.all()
    assert path.coefs.shape[0] == 8 and path.intercepts.shape[0] == 8
    cold_iters = 0
    for a, coef, icpt in zip(path.alphas, path.coefs, path.intercepts):
        cold = SQNClassifier(alpha=a, random_state=0).fit(X, y)
        cold_iters += int(np.max(cold.n_iter_))
        warm = clone(cold)
        warm.fit(X, y)
        warm.coef_, warm.intercept_ = coef, icpt       # the path's model at this alpha
        assert _objective(warm, X, y, a) == pytest.approx(_objective(cold, X, y, a), rel=1e-6)
    assert path.n_iter.sum() < cold_iters


def test_explicit_alphas_are_sorted_and_checked() -> None:
    X, y = _classification()
    path = regularization_path(X, y, alphas=[1e-3, 1e-1, 1e-2])
    assert path.alphas.tolist() == [1e-1, 1e-2, 1e-3]
    with pytest.raises(ValueError, match="alphas must be finite"):
        regularization_path(X, y, alphas=[1e-2, np.nan])
    with pytest.raises(ValueError, match="alphas must be finite"):
        regularization_path(X, y, alphas=[])


def test_path_cv_picks_the_best_mean_score_and_refits() -> None:
    X, y = _classification(n=500, seed=3, k=3)
    base = SQNClassifier(random_state=0)
    cv = PathCV(base, n_alphas=6, cv=3).fit(X, y)
    assert cv.cv_scores_.shape == (3, 6) and is_classifier(cv)
    mean = cv.cv_scores_.mean(axis=0)
    assert cv.alpha_ == cv.alphas_[int(np.argmax(mean))]
    ref = SQNClassifier(alpha=cv.alpha_, random_state=0).fit(X, y)
    np.testing.assert_array_equal(cv.coef_, ref.coef_)
    np.testing.assert_array_equal(cv.predict(X), ref.predict(X))
    np.testing.assert_array_equal(cv.predict_proba(X), ref.predict_proba(X))
    assert cv.score(X, y) == ref.score(X, y) and cv.n_features_in_ == X.shape[1]
    assert list(cv.classes_) == [0, 1, 2]
    by_loss = PathCV(base, n_alphas=4, cv=3, scoring="neg_log_loss").fit(X, y)
    assert by_loss.cv_scores_.max() < 0
    assert clone(cv).get_params()["n_alphas"] == 6


def test_path_cv_wraps_a_regressor() -> None:
    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 6))
    t = X @ rng.normal(size=6) + 0.1 * rng.normal(size=300)
    cv = PathCV(SQNRegressor(random_state=0), n_alphas=5, cv=3).fit(X, t)
    assert is_regressor(cv) and not hasattr(cv, "predict_proba")
    mean = cv.cv_scores_.mean(axis=0)
    assert cv.alpha_ == cv.alphas_[int(np.argmax(mean))] and mean[0] < mean.max() - 0.1
    assert cv.score(X, t) > 0.99


@pytest.mark.parametrize("penalty,l1_ratio", [("l1", 1.0), ("elasticnet", 0.5)])
def test_alpha_max_is_where_the_l1_model_becomes_empty(penalty: str, l1_ratio: float) -> None:
    X, y = _classification(n=500, d=15, seed=5, sparse=True)
    est = SQNClassifier(penalty=penalty, l1_ratio=l1_ratio, random_state=0)
    top = alpha_max(X, y, l1_ratio=l1_ratio)
    above = clone(est).set_params(alpha=1.001 * top).fit(X, y)
    below = clone(est).set_params(alpha=0.9 * top).fit(X, y)
    assert np.count_nonzero(above.coef_) == 0 < np.count_nonzero(below.coef_)
    path = regularization_path(X, y, estimator=est, n_alphas=10)
    assert path.alphas[0] == pytest.approx(top)
    # at alpha_max itself zero is optimal, and the fit stops within its tol of it
    assert np.abs(path.coefs[0]).max() < 1e-5 and path.nonzero[-1] > path.nonzero[1]


@pytest.mark.parametrize("k", [2, 3])
def test_l1_fits_start_from_the_previous_coefficients(k: int) -> None:
    """warm_start with an L1 penalty: the composite solve starts at the previous fit's
    coefficients (it started at zero), so a path needs fewer iterations than cold fits."""
    X, y = _classification(n=800, d=30, k=k, seed=6, sparse=True)
    est = SQNClassifier(penalty="l1", random_state=0)
    path = regularization_path(X, y, estimator=est, n_alphas=8)
    cold = [clone(est).set_params(alpha=a).fit(X, y) for a in path.alphas]
    assert path.n_iter.sum() < sum(int(c.n_iter_) for c in cold)
    for a, c, coef, icpt in zip(path.alphas, cold, path.coefs, path.intercepts):
        warm = clone(c).fit(X, y)
        warm.coef_, warm.intercept_ = coef, icpt         # the path's model at this alpha

        def objective(m: SQNClassifier) -> float:      # softmax's flat directions: compare F
            return float(log_loss(y, m.predict_proba(X)) + a * np.abs(m.coef_).sum())

        # as low as the cold fit's (lower where OWL-QN's cold softmax solve stops short)
        assert objective(warm) <= objective(c) * (1 + 1e-5)
    warm = clone(est).set_params(warm_start=True).fit(X, y)
    with pytest.raises(ValueError, match="warm_start: the data has different classes"):
        warm.fit(X[:, :10], y)


@pytest.mark.parametrize("penalty,l1_ratio", [("l1", None), ("elasticnet", 0.5)])
def test_dense_least_squares_path_forms_its_gram_matrix_once(
        penalty: str, l1_ratio: float | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """A lasso / elastic-net path of ``SQNRegressor`` on dense rows forms ``X'X / N`` once and
    solves every alpha on it, reaching the path the solves on the rows reach (each fit's
    ``tol``) and scikit-learn's ``lasso_path`` / ``enet_path``; the matrix is checked once."""
    from sklearn.linear_model import enet_path

    import sqnopt.composite._solve as solve
    import sqnopt.data._dataset as dataset

    rng = np.random.default_rng(11)
    X = rng.normal(size=(400, 40)) + 0.5 * rng.normal(size=(400, 1))
    t = X @ np.where(rng.random(40) < 0.25, rng.normal(size=40), 0.0) + 0.2 * rng.normal(size=400)
    est = SQNRegressor(penalty=penalty, l1_ratio=l1_ratio, tol=1e-9)
    formed: list[int] = []
    checks: list[int] = []
    form, check = solve.form_gram, dataset.check_matrix
    monkeypatch.setattr(solve, "form_gram", lambda data: formed.append(1) or form(data))
    monkeypatch.setattr(dataset, "check_matrix",
                        lambda *a, **k: checks.append(1) or check(*a, **k))
    path = regularization_path(X, t, estimator=est, n_alphas=12)
    assert len(formed) == 1 and len(checks) == 1
    monkeypatch.setattr(solve, "gram_applies", lambda smooth, data: False)
    rows = regularization_path(X, t, estimator=est, alphas=path.alphas)
    np.testing.assert_allclose(path.coefs, rows.coefs, atol=1e-7)
    np.testing.assert_allclose(path.intercepts, rows.intercepts, atol=1e-7)
    Xc, tc = X - X.mean(axis=0), t - t.mean()
    _, ref, _ = enet_path(Xc, tc, l1_ratio=1.0 if l1_ratio is None else l1_ratio,
                          alphas=path.alphas, tol=1e-12, max_iter=100_000)
    np.testing.assert_allclose(path.coefs, ref.T, atol=1e-6)
    assert path.converged.all() and path.nonzero[-1] > path.nonzero[1]


@pytest.mark.parametrize("loss", ["squared_error", "poisson"])
@pytest.mark.parametrize("weighted", [False, True])
def test_path_cv_own_scores_are_the_scorers(loss: str, weighted: bool) -> None:
    """A regressor's fold scores at the default ``scoring`` (its ``score``, with the held-out
    rows validated once per fold) are the values scikit-learn's ``r2`` scorer gives, bit for
    bit, and pick the same alpha."""
    rng = np.random.default_rng(12)
    X = rng.normal(size=(300, 8))
    s = X @ rng.normal(size=8) * 0.3
    t = rng.poisson(np.exp(s)).astype(float) if loss == "poisson" else s + 0.2 * rng.normal(
        size=300)
    sw = rng.uniform(0.5, 2.0, size=300) if weighted else None
    est = SQNRegressor(loss=loss, penalty="l1", random_state=0)
    own = PathCV(est, n_alphas=6, cv=3).fit(X, t, sample_weight=sw)
    scorer = PathCV(est, n_alphas=6, cv=3, scoring="r2").fit(X, t, sample_weight=sw)
    np.testing.assert_array_equal(own.cv_scores_, scorer.cv_scores_)
    assert own.alpha_ == scorer.alpha_
