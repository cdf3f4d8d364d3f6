"""Ridge regression (``SQNRegressor()`` on squared error) solved as the quadratic it is.

The squared error declares the capability ``quadratic`` (its Hessian ``X'CX / sum(c) + lam I``
is the same at every iterate), and ``curvature="auto"`` uses it: Newton's method, whose one
step from ``w = 0`` is the closed form, where forming the Hessian once is affordable
(``recipes.QUADRATIC_NEWTON_PASSES``); else one preconditioned conjugate-gradient run on the
objective (``recipes.quadratic_cg``), which goes on until the next gradient meets the run's
``tol``. Newton's Hessian on dense rows is formed by BLAS, checked
here against the pair loop of sparse rows. Huber and Poisson are not quadratic and keep their
choices. Where Newton is the choice and the estimator's settings are its defaults, the estimator
takes that one step itself -- the normal equations (``sqnopt.estimators._exact``).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt import Solver, SQNRegressor
from sqnopt.estimators._exact import EXACT_PATH
from sqnopt.model import LinearModel
from sqnopt.curvature import LBFGS, Newton, TruncatedNewton
from sqnopt.interfaces import QUADRATIC
from sqnopt.objectives import Huber, Poisson, SquaredError
from sqnopt.objectives.reference import HuberNumPy, PoissonNumPy, SquaredErrorNumPy
from sqnopt.schedules import Full
from sqnopt.steps import Armijo
from sqnopt.recipes import (
    NEWTON_PASSES,
    QUADRATIC_FORCING,
    QUADRATIC_NEWTON_PASSES,
    default_curvature,
    newton_cost_passes,
)


def _dense(n: int, p: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, p))                # uncentred: an ill-conditioned X'X
    y = X @ rng.normal(size=p) + 0.5 * rng.normal(size=n)
    return X, y


def _sparse(n: int, p: int, seed: int = 0) -> tuple[sp.csr_matrix, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = sp.random(n, p, density=0.02, format="csr", random_state=seed)
    X.data = rng.exponential(size=X.nnz)        # columns of very different scales
    y = np.asarray(X @ rng.normal(size=p)).ravel() + 0.3 * rng.normal(size=n)
    return X, y


def _closed_form(X, y, alpha: float, sw: np.ndarray | None = None,
                 intercept: bool = False) -> tuple[np.ndarray, float]:
    """The minimiser of ``alpha/2 ||w||^2 + sum_i c_i (x_i.w + b - y_i)^2 / (2 sum c)`` (``b``
    unregularised, 0 without an intercept) from the normal equations."""
    A = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    c = np.ones(A.shape[0]) if sw is None else np.asarray(sw, dtype=np.float64)
    c = c / c.sum()
    if intercept:
        A = np.hstack([A, np.ones((A.shape[0], 1))])
    H = A.T @ (c[:, None] * A)
    reg = np.full(A.shape[1], alpha)
    if intercept:
        reg[-1] = 0.0
    sol = np.linalg.solve(H + np.diag(reg), A.T @ (c * y))
    return (sol[:-1], float(sol[-1])) if intercept else (sol, 0.0)


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(np.ravel(a) - np.ravel(b))) / np.max(np.abs(np.ravel(b))))


# ------------------------------------------------------------------------- the capability
def test_squared_error_is_quadratic_and_the_others_are_not() -> None:
    for lam in (0.0, 1e-3):
        assert QUADRATIC in SquaredError(lam=lam).capabilities
        assert QUADRATIC in SquaredErrorNumPy(lam=lam).capabilities
        for other in (Huber(lam=lam), Poisson(lam=lam), HuberNumPy(lam=lam),
                      PoissonNumPy(lam=lam)):
            assert QUADRATIC not in other.capabilities


# ------------------------------------------------------------------------- the auto choice
def test_auto_takes_newton_for_a_quadratic_within_its_budget_and_cg_beyond() -> None:
    # 2000 x 30 dense: forming the Hessian costs about 8 passes, within a quadratic's budget
    X, _ = _dense(2000, 30)
    assert newton_cost_passes(X, 1, fit_intercept=True) <= QUADRATIC_NEWTON_PASSES
    assert isinstance(default_curvature(SquaredError(lam=1e-4), X, 0), Newton)
    # 2000 x 100: about 26 passes; conjugate gradients on the objective, stopped by the
    # run's own tolerance
    X, _ = _dense(2000, 100)
    cost = newton_cost_passes(X, 1, fit_intercept=True)
    assert cost > max(NEWTON_PASSES, QUADRATIC_NEWTON_PASSES)
    made = default_curvature(SquaredError(lam=1e-4), X, 0)
    assert isinstance(made, TruncatedNewton) and made.gtol_stop
    for other in (Huber(lam=1e-4), Poisson(lam=1e-4)):     # not quadratic: no Newton here
        assert not isinstance(default_curvature(other, X, 0), Newton)


def test_auto_takes_one_preconditioned_cg_run_for_a_large_sparse_quadratic() -> None:
    X, _ = _sparse(3000, 2000)                  # tall, and a Hessian far too costly to form
    assert newton_cost_passes(X, 1, fit_intercept=True) > QUADRATIC_NEWTON_PASSES
    made = default_curvature(SquaredError(lam=1e-4), X, 0)
    assert isinstance(made, TruncatedNewton)
    assert made.forcing == QUADRATIC_FORCING and made.preconditioner == "diagonal"
    assert made.gtol_stop
    # not quadratic: the choices of smooth objectives (tall sparse data keeps L-BFGS)
    assert type(default_curvature(Poisson(lam=1e-4), X, 0)) is LBFGS
    assert type(default_curvature(Huber(lam=1e-4), X, 0)) is not TruncatedNewton


# ------------------------------------------------------------------------- Newton: one step
@pytest.mark.parametrize("intercept", [False, True], ids=["no-intercept", "intercept"])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_default_dense_ridge_is_the_closed_form_after_one_newton_step(intercept: bool,
                                                                     weighted: bool) -> None:
    X, y = _dense(2000, 30)
    sw = np.random.default_rng(1).uniform(0.2, 3.0, size=X.shape[0]) if weighted else None
    alpha = 1e-4
    est = SQNRegressor(alpha=alpha, fit_intercept=intercept, max_iter=1, tol=None,
                       random_state=0).fit(X, y, sample_weight=sw)
    coef, b = _closed_form(X, y, alpha, sw, intercept)
    assert est.n_iter_ == 1
    assert _rel(est.coef_, coef) < 1e-10
    assert abs(est.intercept_ - b) <= 1e-10 * max(abs(b), np.max(np.abs(coef)))


def test_newton_dense_ridge_stops_at_tol_after_the_one_step() -> None:
    # the step, then the gradient at the new iterate (its stop test): one Newton iteration,
    # one Hessian (n_iter_ counts passes; the solve's record counts iterations). The driver's
    # step, as curvature="auto" would take it (the estimator's default takes it directly: the
    # normal equations, tests/estimators/test_regressor_exact.py)
    X, y = _dense(2000, 30)
    est = SQNRegressor(alpha=1e-4, curvature="newton").fit(X, y)
    solve = est._trainer.results_[0]
    assert est.converged_ and solve.n_iter == 1
    assert solve.n_curvature_samples == X.shape[0]
    coef, b = _closed_form(X, y, 1e-4, intercept=True)
    assert _rel(est.coef_, coef) < 1e-10


def test_default_wide_dense_ridge_meets_tol_after_one_cg_run() -> None:
    # beyond Newton's budget: one CG run, which goes on until the next gradient meets the
    # run's tol (the relative forcing alone stops earlier and costs a second run)
    X, y = _dense(2000, 100)
    coef, b = _closed_form(X, y, 1e-4, intercept=True)
    for tol in (1e-4, 1e-7):
        est = SQNRegressor(alpha=1e-4, tol=tol).fit(X, y)
        solve = est._trainer.results_[0]
        assert est.converged_ and solve.n_iter == 1, tol
        assert solve.grad_norm <= tol
    assert _rel(est.coef_, coef) < 1e-5


def test_float32_dense_ridge_takes_the_gathered_blas_path() -> None:
    X, y = _dense(1500, 90)
    X32 = X.astype(np.float32)
    est = SQNRegressor(alpha=1e-3, fit_intercept=False, max_iter=1, tol=None,
                       curvature="newton").fit(X32, y)
    coef, _ = _closed_form(X32.astype(np.float64), y, 1e-3)
    assert _rel(est.coef_, coef) < 1e-10


# ------------------------------------------------------------------------- BLAS = pair loop
@pytest.mark.parametrize("objective", [SquaredError(lam=1e-3), Poisson(lam=1e-3)],
                         ids=["squared_error", "poisson"])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_newton_dense_blas_hessian_equals_the_sparse_pair_loop(objective, weighted: bool) -> None:
    # the same data dense (BLAS dsyrk) and CSR (the pair loop): the same Newton iterates to
    # rounding
    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 12)) * 0.3
    X[rng.random(X.shape) < 0.3] = 0.0
    y = rng.poisson(np.exp(X @ rng.normal(size=12) * 0.5)).astype(np.float64)
    sw = rng.uniform(0.5, 2.0, size=300) if weighted else None
    out = []
    for A in (X, sp.csr_matrix(X)):
        res = Solver(objective=objective, curvature=Newton(), schedule=Full(),
                     curvature_schedule=Full(), step=Armijo(), sampling="subset",
                     fit_intercept=True, max_iter=3, random_state=0).fit(A, y, sample_weight=sw)
        out.append(np.asarray(res.w))
    np.testing.assert_allclose(out[0], out[1], rtol=1e-11, atol=1e-13)


# ------------------------------------------------------------------------- sparse: one CG run
def test_default_sparse_ridge_solves_in_one_cg_run() -> None:
    X, y = _sparse(3000, 2000)
    alpha = 1e-3
    coef, _ = _closed_form(X, y, alpha)
    est = SQNRegressor(alpha=alpha, fit_intercept=False, max_iter=1, tol=None,
                       random_state=0).fit(X, y)
    assert est.n_iter_ == 1
    # one outer iteration: the CG residual -- the gradient at the new iterate, as the
    # objective is quadratic -- is below the forcing relative to the first gradient
    A = X.toarray()
    grad = lambda w: A.T @ (A @ w - y) / A.shape[0] + alpha * w  # noqa: E731
    g0 = np.linalg.norm(grad(np.zeros(A.shape[1])))
    assert np.linalg.norm(grad(est.coef_)) <= 10 * QUADRATIC_FORCING * g0
    assert _rel(est.coef_, coef) < 1e-2
    # at the default tol the outer loop's own test decides; the result is the closed form
    est = SQNRegressor(alpha=alpha, fit_intercept=False, tol=1e-8).fit(X, y)
    assert est.converged_ and est._trainer.results_[0].n_iter <= 3
    assert _rel(est.coef_, coef) < 1e-6


def test_ridge_is_deterministic() -> None:
    for X, y in (_dense(800, 60), _sparse(2000, 900)):
        a = SQNRegressor(alpha=1e-3, random_state=3).fit(X, y).coef_
        b = SQNRegressor(alpha=1e-3, random_state=3).fit(X, y).coef_
        np.testing.assert_array_equal(a, b)


# ------------------------------------------------------------------ the normal equations
# SQNRegressor()'s default takes the one Newton step directly (sqnopt.estimators._exact):
# the same minimiser, the same checks of the data and settings, the driver everywhere else
def _offset_rows(n: int = 400, p: int = 12, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, p)) + 3.0          # uncentred columns
    y = X @ rng.normal(size=p) + 0.5 * rng.normal(size=n) + 7.0
    return X, y


@pytest.mark.parametrize("intercept", [False, True], ids=["no-intercept", "intercept"])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_default_small_dense_ridge_is_the_normal_equations(intercept: bool,
                                                          weighted: bool) -> None:
    X, y = _offset_rows()
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
    X, y = _offset_rows()
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
    X, y = _offset_rows()
    if change.get("loss") == "poisson":
        y = np.random.default_rng(0).poisson(2.0, size=X.shape[0]).astype(float)
    est = SQNRegressor(**{"alpha": 1e-3, "max_iter": 5, **change})
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    assert est.fit_path_ != EXACT_PATH


def test_sparse_and_wide_rows_run_the_driver() -> None:
    X, y = _offset_rows()
    assert SQNRegressor(alpha=1e-3).fit(sp.csr_matrix(X), y).fit_path_ != EXACT_PATH
    # beyond Newton's budget curvature="auto" takes conjugate gradients: so does the fit
    Xw, yw = _offset_rows(n=2000, p=100)
    assert SQNRegressor(alpha=1e-4).fit(Xw, yw).fit_path_ != EXACT_PATH


@pytest.mark.parametrize("bad, match", [
    ("nan_x", "NaN"), ("inf_y", "finite|inf"), ("neg_w", "negative|sample_weight"),
    ("zero_w", "all weights are zero"), ("alpha", "alpha"), ("huge", "overflow|square"),
])
def test_bad_input_is_refused_as_the_driver_refuses_it(bad: str, match: str) -> None:
    X, y = _offset_rows()
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
    X, y = _offset_rows()
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
