"""``SQNRegressor`` against scikit-learn's solvers of the same objectives, and its API.

The mappings between the penalties (``F = mean loss + alpha/2 ||w||^2`` here):

* squared error: scikit-learn's ``Ridge`` minimises ``sum (y - Xw - b)^2 + alpha_R ||w||^2``,
  twice the sum form of ours, so ``alpha_R = alpha * n_samples`` (``alpha * sum(sample_weight)``
  with weights);
* Poisson: ``PoissonRegressor`` minimises the mean half deviance ``+ alpha/2 ||w||^2``, which is
  our mean ``exp(s) - y s`` up to a constant: the same ``alpha``;
* Huber: ``HuberRegressor`` minimises ``sum (sigma + sigma H(r_i / sigma)) + alpha_H ||w||^2``
  over ``w`` and the scale ``sigma``, ``H`` twice our ``h``. At its optimum ``(w*, sigma*)``,
  ``w*`` minimises ``sum H((y - Xw - b) / sigma*) + (alpha_H / sigma*) ||w||^2`` -- our
  objective (scale 1) on ``X / sigma*``, ``y / sigma*`` with ``alpha = alpha_H / (sigma* n)``
  and intercept ``b / sigma*``.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

pytest.importorskip("sklearn")

from sklearn.linear_model import HuberRegressor, PoissonRegressor, Ridge  # noqa: E402

from sqnopt import SQNRegressor  # noqa: E402
from sqnopt.model import LinearModel  # noqa: E402
from sqnopt.solver import DivergenceWarning  # noqa: E402

#: Coefficients agree to this (relative to the largest coefficient): both sides solve to a
#: gradient tolerance far below it.
RTOL = 1e-6


def _data(sparse: bool, n: int = 120, p: int = 6, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    if sparse:
        X[rng.random((n, p)) < 0.5] = 0.0
    beta = rng.normal(size=p) / np.sqrt(p)
    s = X @ beta + 0.3
    return (sp.csr_matrix(X) if sparse else X), s, rng


def _close(a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.ravel(a), np.ravel(b)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_squared_error_matches_ridge(sparse: bool, weighted: bool) -> None:
    X, s, rng = _data(sparse)
    y = s + 0.5 * rng.normal(size=s.shape[0])
    sw = rng.uniform(0.5, 2.0, size=s.shape[0]) if weighted else None
    alpha = 1e-2
    ours = SQNRegressor(alpha=alpha, tol=1e-10).fit(X, y, sample_weight=sw)
    total = X.shape[0] if sw is None else float(sw.sum())
    ref = Ridge(alpha=alpha * total, solver="sparse_cg" if sparse else "cholesky",
                tol=1e-14).fit(X, y, sample_weight=sw)
    assert ours.converged_
    assert _close(ours.coef_, ref.coef_) < RTOL
    assert abs(ours.intercept_ - ref.intercept_) < RTOL * max(1.0, abs(ref.intercept_))
    assert ours.score(X, y) == pytest.approx(ref.score(X, y), rel=1e-9)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_poisson_matches_poisson_regressor(sparse: bool) -> None:
    X, s, rng = _data(sparse, seed=1)
    y = rng.poisson(np.exp(s)).astype(np.float64)
    alpha = 1e-2
    ours = SQNRegressor(loss="poisson", alpha=alpha, tol=1e-10).fit(X, y)
    ref = PoissonRegressor(alpha=alpha, solver="newton-cholesky", tol=1e-12,
                           max_iter=1000).fit(X, y)
    assert ours.converged_
    assert _close(ours.coef_, ref.coef_) < RTOL
    assert abs(ours.intercept_ - ref.intercept_) < RTOL * max(1.0, abs(ref.intercept_))
    np.testing.assert_allclose(ours.predict(X), ref.predict(X), rtol=1e-6)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_huber_matches_huber_regressor_at_its_scale(sparse: bool) -> None:
    X, s, rng = _data(sparse, seed=2)
    y = s + 0.3 * rng.normal(size=s.shape[0])
    y[::10] += 8.0      # outliers: some residuals beyond the threshold
    eps, alpha_h = 1.35, 1e-3
    ref = HuberRegressor(epsilon=eps, alpha=alpha_h, tol=1e-12, max_iter=10000).fit(X, y)
    sigma, n = float(ref.scale_), X.shape[0]
    ours = SQNRegressor(loss="huber", epsilon=eps, alpha=alpha_h / (sigma * n),
                        tol=1e-11).fit(X / sigma, y / sigma)
    assert ours.converged_
    assert ref.outliers_.sum() > 0
    # HuberRegressor's joint L-BFGS-B solve over (w, sigma) limits the agreement: its solution
    # leaves a gradient of about 5e-5 in this objective (ours: 2e-15), and the coefficients
    # differ by 5e-6 (dense) and 7e-6 (sparse), relative
    assert _close(ours.coef_, ref.coef_) < 5e-5
    assert abs(ours.intercept_ * sigma - ref.intercept_) < 5e-5 * max(1.0, abs(ref.intercept_))


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_default_huber_fits_targets_far_from_zero(sparse: bool) -> None:
    """Targets far from 0: at ``w = 0`` every residual lies beyond the threshold, where the
    loss's curvature vanishes, and the Hessian is singular along the intercept (Newton's
    factorisation failed there, a crash at the defaults). ``curvature="auto"`` takes no model
    that factors it for such a loss (``Objective.curvature_vanishes``)."""
    from sqnopt.curvature import Newton
    from sqnopt.objectives import Huber
    from sqnopt.recipes import default_curvature

    rng = np.random.default_rng(5)
    Xd = rng.uniform(size=(400, 12)) + 3.0
    y = Xd @ rng.normal(size=12) + 0.5 * rng.normal(size=400) + 7.0
    assert np.min(np.abs(y)) > 1.35
    X = sp.csr_matrix(Xd) if sparse else Xd
    assert Huber.curvature_vanishes and not isinstance(
        default_curvature(Huber(lam=1e-4), X, 1), Newton)
    est = SQNRegressor(loss="huber").fit(X, y)
    assert est.converged_
    ref = SQNRegressor(loss="huber", curvature="lbfgs", tol=1e-11, max_iter=10000).fit(X, y)
    assert _close(est.coef_, ref.coef_) < 1e-4
    assert abs(est.intercept_ - ref.intercept_) < 1e-4 * abs(ref.intercept_)


def test_huber_starts_at_the_weighted_median_and_fits_far_targets_fast() -> None:
    """From the intercept 0 on targets near 1e6, every residual is an outlier, where Huber's
    loss is linear: the solver moved the intercept by about epsilon per iteration and stopped
    at max_iter short of the targets. The fit starts at the targets' weighted median."""
    from sqnopt.objectives import Huber

    y = np.array([5.0, 1.0, 3.0, 100.0, 2.0])
    assert Huber().start_intercept(y, np.ones(5)) == 3.0
    assert Huber().start_intercept(y, np.array([1.0, 1.0, 1.0, 10.0, 1.0])) == 100.0
    assert Huber().start_intercept(y, np.array([0.0, 1.0, 0.0, 0.0, 1.0])) == 1.0
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 5))
    y = 1e6 + X @ rng.normal(size=5) + 0.3 * rng.normal(size=300)
    est = SQNRegressor(loss="huber").fit(X, y)
    assert est.converged_ and est.n_iter_ < 100
    assert abs(est.intercept_ - 1e6) < 1.0
    assert est.score(X, y) > 0.8


def test_poisson_refuses_negative_targets() -> None:
    X, s, _ = _data(False)
    y = np.exp(s)
    y[7] = -1.0
    with pytest.raises(ValueError, match=r"targets >= 0.*y\[7\] = -1"):
        SQNRegressor(loss="poisson").fit(X, y)


def test_targets_are_not_encoded_as_classes() -> None:
    """Integer targets stay numbers: a regression on counts, not a classifier of them."""
    X, s, rng = _data(False)
    y = rng.poisson(np.exp(s))                       # int64 counts
    est = SQNRegressor(loss="poisson", tol=1e-10).fit(X, y)
    ref = SQNRegressor(loss="poisson", tol=1e-10).fit(X, y.astype(np.float64))
    np.testing.assert_array_equal(est.coef_, ref.coef_)
    assert est.to_model().classes.shape == (0,)
    assert not hasattr(est, "classes_")


@pytest.mark.parametrize("bad, match", [
    (np.array(["a"] * 120), "real numbers"),
    (np.full(120, np.nan), "NaN"),
])
def test_bad_targets(bad: np.ndarray, match: str) -> None:
    from sqnopt.data import check_targets

    with pytest.raises(ValueError, match=match):
        check_targets(bad)


def test_classification_loss_is_refused() -> None:
    X, s, _ = _data(False)
    with pytest.raises(ValueError, match="fits classes"):
        SQNRegressor(loss="logloss").fit(X, s)
    with pytest.raises(ValueError, match="epsilon"):
        SQNRegressor(loss="huber", epsilon=0.0).fit(X, s)


def test_poisson_overflow_is_a_divergence_not_inf() -> None:
    """A step into scores beyond log(DBL_MAX): the objective is +inf there (no overflow is
    evaluated) and an SGD run with a huge step stops as diverged, with a warning that says so;
    the model keeps the last finite iterate."""
    X, s, rng = _data(False)
    y = rng.poisson(np.exp(s)).astype(np.float64)
    est = SQNRegressor(loss="poisson", curvature="identity", step=("constant", {"eps": 1e3}),
                       tol=None, max_iter=3, random_state=0, fit_intercept=False)
    with pytest.warns(DivergenceWarning, match="non-finite"):
        est.fit(X * 50.0, y)
    assert np.all(np.isfinite(est.coef_)) and np.isfinite(est.intercept_)


@pytest.mark.parametrize("loss", ["squared_error", "huber", "poisson"])
def test_model_file_round_trip(loss: str, tmp_path) -> None:
    X, s, rng = _data(True)
    y = rng.poisson(np.exp(s)).astype(np.float64)
    est = SQNRegressor(loss=loss).fit(X, y)
    path = est.to_model().save(tmp_path / "m.npz")
    model = LinearModel.load(path)
    assert model.strategy == "regression" and model.link == ("log" if loss == "poisson"
                                                             else "identity")
    np.testing.assert_array_equal(model.predict(X), est.predict(X))


def test_partial_fit_continues_and_matches_its_budget() -> None:
    """partial_fit over batches: each call one pass; the same batches give the same model."""
    X, s, rng = _data(False, n=400)
    y = s + 0.1 * rng.normal(size=400)
    a, b = SQNRegressor(random_state=0), SQNRegressor(random_state=0)
    for k in range(4):
        rows = slice(100 * k, 100 * (k + 1))
        a.partial_fit(X[rows], y[rows])
        b.partial_fit(X[rows], y[rows])
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.score(X, y) > 0.8
    with pytest.raises(ValueError, match="not classes"):
        a._trainer.partial_fit(X[:10], y[:10], classes=[0, 1])


def test_sample_weight_zero_removes_rows() -> None:
    X, s, rng = _data(False)
    y = s + 0.3 * rng.normal(size=s.shape[0])
    sw = np.ones(s.shape[0])
    sw[:20] = 0.0
    a = SQNRegressor(tol=1e-10).fit(X, y, sample_weight=sw)
    b = SQNRegressor(tol=1e-10).fit(X[20:], y[20:])
    assert _close(a.coef_, b.coef_) < 1e-8


@pytest.mark.parametrize("loss", ["squared_error", "poisson"])
def test_large_data_recipe(loss: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The large-data regime (as for data past sqnopt.recipes.LARGE_ROWS; forced here): the
    step race, held-out rows and their loss per pass work on real targets."""
    import sqnopt.recipes

    monkeypatch.setattr(sqnopt.recipes, "large_scale", lambda n, nnz: True)
    X, s, rng = _data(False, n=1000, p=4)
    y = (s + 0.1 * rng.normal(size=1000) if loss == "squared_error"
         else rng.poisson(np.exp(s)).astype(np.float64))
    est = SQNRegressor(loss=loss, max_iter=3, tol=None, random_state=0).fit(X, y)
    ref = SQNRegressor(loss=loss, tol=1e-10).fit(X, y)   # in memory: the optimum
    assert len(est.validation_loss_) == 3 and len(est.steps_) == 1
    assert est.score(X, y) > ref.score(X, y) - 0.02


def test_checkpoint_resume_and_pickled_partial_fit() -> None:
    """A fit resumed from a checkpoint ends where the uninterrupted one does; an unpickled
    estimator's partial_fit continues exactly (the solver state of real targets: no classes)."""
    import pickle

    from sqnopt.training import Trainer

    X, s, rng = _data(False, n=300)
    y = s + 0.1 * rng.normal(size=300)
    ckpts: list = []
    full = Trainer(loss="squared_error", curvature="lbfgs", tol=1e-10, random_state=0)
    m = full.fit(X, y, checkpoint=ckpts.append, checkpoint_every=1)
    assert len(ckpts) > 2
    resumed = Trainer(loss="squared_error", curvature="lbfgs", tol=1e-10, random_state=0)
    np.testing.assert_array_equal(resumed.fit(X, y, resume=ckpts[len(ckpts) // 2]).coef, m.coef)
    a = SQNRegressor(random_state=0).partial_fit(X[:150], y[:150])
    b = pickle.loads(pickle.dumps(a))
    a.partial_fit(X[150:], y[150:])
    b.partial_fit(X[150:], y[150:])
    np.testing.assert_array_equal(a.coef_, b.coef_)
