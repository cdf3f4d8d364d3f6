"""Truncated Newton: Newton-CG on the whole data set (the model declares ``full_batch``)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt import (
    LBFGS,
    Armijo,
    Full,
    IncompatibleComponentsError,
    SQNClassifier,
    ScoreLine,
    Solver,
    Status,
    TruncatedNewton,
    recipes,
)
from sqnopt.curvature.reference import TruncatedNewtonNumPy
from sqnopt.datasets import make_boxes
from sqnopt.objectives import Hinge, LogLoss, Softmax
from sqnopt.registry import get_registry

from conftest import gaussian_classes


def _wide(n: int = 300, p: int = 900, seed: int = 0) -> tuple[sp.csr_matrix, np.ndarray]:
    """Sparse one-hot-like rows, more features than samples (the shape the default picks
    truncated Newton for), labels from a sparse linear model with noise."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, p, density=0.02, random_state=seed, format="csr",
                  data_rvs=lambda k: np.ones(k))
    w = rng.normal(size=p)
    y = np.where(X @ w + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def test_registered_with_its_declarations():
    reg = get_registry()
    model = reg.create("curvature", "truncated_newton")
    assert model == TruncatedNewton() and reg.create("curvature", "full_newton_cg") == model
    assert model.full_batch and model.needs_curvature_batch
    assert model.direction_scale == "newton" and model.max_iter == 50 and model.forcing == 0.25


def test_recipe_runs_it_on_the_whole_data_set_with_a_line_search():
    X, y = _wide()
    r = recipes.choose(LogLoss(lam=1e-3), TruncatedNewton(), X, np.ones(X.shape[0]),
                       fit_intercept=False)
    assert r.schedule == Full() and r.curvature_schedule == Full() and r.full_batch_phase
    assert isinstance(r.step, ScoreLine)    # the exact line search (linear scores)


def test_default_curvature_follows_the_data_shape():
    X, _ = _wide()
    assert recipes.default_curvature(LogLoss(), X, 2) == TruncatedNewton()
    # softmax (not measured on such data), rows of very different lengths (one row 100
    # times the others' squared norm), more samples than features (and a Hessian too large
    # to form), dense data, lam = 0: L-BFGS; no Hessian-vector products (hinge): SGD
    assert recipes.default_curvature(Softmax(), X, 3) == LBFGS()
    long_row = X.tolil()
    long_row[0, :] = 0.0
    long_row[0, :600] = 1.0
    long_row = long_row.tocsr()
    assert recipes.row_norm_spread(long_row, np.ones(X.shape[0]), True) > recipes.SAGA_SPREAD
    assert recipes.default_curvature(LogLoss(), long_row, 2) == LBFGS()
    tall = sp.random(6000, 5000, density=0.002, random_state=0, format="csr")
    assert recipes.default_curvature(LogLoss(), tall, 2) == LBFGS()
    assert recipes.default_curvature(LogLoss(), np.ones((20, 20000)), 2) == LBFGS()
    assert recipes.default_curvature(LogLoss(lam=0.0), X, 2) == LBFGS()
    assert recipes.default_curvature(Hinge(), X, 2).direction_is_gradient


@pytest.mark.parametrize("multi", [False, True])
def test_compiled_matches_its_numpy_twin_iterate_by_iterate(multi):
    if multi:
        X, y = gaussian_classes(300, 6, 3, 0)
        objective = Softmax(lam=0.01)
    else:
        X, y = _wide(200, 400, seed=1)
        objective = LogLoss(lam=0.01)
    out = []
    for model in (TruncatedNewton(), TruncatedNewtonNumPy()):
        r = recipes.choose(objective, model, X, np.ones(X.shape[0]), fit_intercept=True)
        its: list[np.ndarray] = []
        res = Solver(r.objective, r.curvature, r.schedule, r.step,
                     curvature_schedule=r.curvature_schedule, sampling=r.sampling,
                     fit_intercept=True, max_iter=8, report_every=1, random_state=0,
                     callback=lambda info: its.append(info.w.copy())).fit(X, y)
        out.append((np.array(its), res))
    (a, ra), (b, rb) = out
    assert ra.compiled and not rb.compiled and len(a) == len(b) >= 5
    np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    assert ra.n_curvature_samples == rb.n_curvature_samples > 0


def test_converges_superlinearly_on_a_strongly_convex_problem():
    X, y = _wide(600, 1500, seed=2)
    lam = 1.0 / 600
    ref = Solver(LogLoss(lam=lam), LBFGS(), Full(), Armijo(), gtol=1e-12,
                 max_iter=5000).fit(X, y)
    r = recipes.choose(LogLoss(lam=lam), TruncatedNewton(forcing=0.1), X, np.ones(600),
                       fit_intercept=False)
    # Armijo's unit steps: the contraction of the damped phase, then the local rate (the
    # recipe's exact line search, ScoreLine, contracts the gap by ~1e-2 from the first
    # iteration on, so it is checked for its iteration count only)
    res = Solver(r.objective, r.curvature, r.schedule, Armijo(),
                 curvature_schedule=r.curvature_schedule, sampling=r.sampling,
                 max_iter=30, gtol=1e-10, history_every=1, report_every=1).fit(X, y)
    exact = Solver(r.objective, r.curvature, r.schedule, r.step,
                   curvature_schedule=r.curvature_schedule, sampling=r.sampling,
                   max_iter=30, gtol=1e-10).fit(X, y)
    assert isinstance(r.step, ScoreLine)
    assert exact.status is Status.GTOL and exact.n_iter <= res.n_iter
    assert res.status is Status.GTOL and res.n_iter <= 15
    gap = res.history.objective - ref.fun
    gap = gap[gap > 1e-13 * abs(ref.fun)]
    # the gap shrinks by ever larger factors: the last contraction is far below the first
    ratios = gap[1:] / gap[:-1]
    assert np.all(ratios < 1) and ratios[-1] < 0.1 * ratios[0] and ratios[-1] < 0.05


def test_sqnclassifier_default_solves_wide_sparse_data_to_its_tolerance():
    X, y = _wide(400, 1200, seed=3)
    tn = SQNClassifier(alpha=1.0 / 400, fit_intercept=False, tol=1e-8).fit(X, y)
    lb = SQNClassifier(alpha=1.0 / 400, fit_intercept=False, tol=1e-8,
                       curvature="lbfgs").fit(X, y)
    assert tn.converged_ and lb.converged_
    assert isinstance(tn.history_.objective, np.ndarray)
    np.testing.assert_allclose(tn.coef_, lb.coef_, rtol=0, atol=1e-4)


def test_bad_input_is_refused_with_a_reason():
    with pytest.raises(IncompatibleComponentsError, match="hessian_vector|smooth"):
        Solver(Hinge(lam=0.1), TruncatedNewton())
    with pytest.raises(ValueError, match="TruncatedNewton: max_iter"):
        TruncatedNewton(max_iter=0)
    with pytest.raises(ValueError, match="TruncatedNewton: forcing"):
        TruncatedNewton(forcing=1.5)
    # a non-finite score stops the solve with the model's own diagnosis
    X, y = make_boxes(50, 3, random_state=0)
    Xbad = X.copy()
    Xbad[3, 1] = np.inf
    with pytest.raises(ValueError):
        SQNClassifier(curvature="truncated_newton").fit(Xbad, y)
