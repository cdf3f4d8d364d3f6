"""Hessian-vector products of the objectives and the subsampled Newton-CG curvature model."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt import Armijo, Fixed, Full, Geometric, NewtonCG, Solver, Status
from sqnopt.curvature.reference import NewtonCGNumPy
from sqnopt.datasets import make_boxes
from sqnopt.objectives import BinaryLogistic, Hinge, LogLoss, Softmax, SquaredHinge
from sqnopt.interfaces import BATCH_OBSERVED

from conftest import curvature_twin_iterates, gaussian_classes


def _multiclass(n: int = 150, p: int = 6, k: int = 3, seed: int = 0):
    return gaussian_classes(n, p, k, seed)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("objective,multi", [(LogLoss(lam=0.1), False),
                                             (BinaryLogistic(lam=0.1), False),
                                             (SquaredHinge(lam=0.1), False),
                                             (Softmax(lam=0.1), True)])
def test_hessian_products_match_finite_differences_of_the_gradient(objective, multi, sparse):
    X, y = _multiclass() if multi else make_boxes(150, 5, random_state=1)
    Xf = sp.csr_matrix(X) if sparse else X
    k = Solver(objective, fit_intercept=True).init_state(Xf, y).objective
    rng = np.random.default_rng(2)
    w = 0.3 * rng.normal(size=k.n_params)
    v = rng.normal(size=k.n_params)
    batch = np.array([0, 3, 3, 17, 40, 77, 101], dtype=np.intp)
    hv = np.zeros(k.n_params)
    k.hessian_product(w, batch, v, hv)
    h = 1e-6
    gp, gm = np.zeros(k.n_params), np.zeros(k.n_params)
    k.gradient(w + h * v, batch, gp)
    k.gradient(w - h * v, batch, gm)
    # the squared hinge's generalised Hessian equals the difference quotient away from kinks
    np.testing.assert_allclose(hv, (gp - gm) / (2 * h), rtol=1e-5, atol=1e-7)
    assert k.hess_size == (3 if multi else 1)


def test_hinge_has_no_hessian_and_newton_cg_refuses_it():
    X, y = make_boxes(100, 3, random_state=0)
    k = Solver(Hinge(lam=0.1)).init_state(X, y).objective
    assert k.hess_size == 0
    with pytest.raises(TypeError, match="Hessian"):
        k.hessian_product(np.zeros(3), np.arange(3), np.ones(3), np.zeros(3))
    from sqnopt import IncompatibleComponentsError

    with pytest.raises(IncompatibleComponentsError, match="hessian_vector"):
        Solver(Hinge(lam=0.1), NewtonCG())


def test_exact_cg_on_the_whole_data_is_the_newton_step():
    X, y = make_boxes(200, 6, random_state=3)
    solver = Solver(LogLoss(lam=0.05), NewtonCG(max_iter=50, forcing=1e-12), Full(), Armijo(),
                    curvature_schedule=Full(), max_iter=1)
    state = solver.init_state(X, y)
    k = state.objective
    rng = np.random.default_rng(4)
    w = 0.5 * rng.normal(size=k.n_params)
    allb = np.arange(200, dtype=np.intp)
    assert state.curvature.observe_batch(k, w, allb) == BATCH_OBSERVED
    H = np.column_stack([_hv(k, w, allb, e) for e in np.eye(k.n_params)])
    g = rng.normal(size=k.n_params)
    d = np.zeros_like(g)
    state.curvature.direction(g, d)
    np.testing.assert_allclose(d, np.linalg.solve(H, g), rtol=1e-9, atol=1e-12)
    assert 0 < state.curvature.last_iterations <= k.n_params


def _hv(k, w, b, v):
    out = np.zeros(k.n_params)
    k.hessian_product(w, b, np.ascontiguousarray(v), out)
    return out


@pytest.mark.parametrize("multi", [False, True])
def test_compiled_newton_cg_matches_its_numpy_twin_iterate_by_iterate(multi):
    X, y = _multiclass(300, 6) if multi else make_boxes(300, 6, random_state=5)
    objective = Softmax(lam=0.01) if multi else LogLoss(lam=0.01)
    a, ra, b, rb = curvature_twin_iterates(objective, NewtonCG(max_iter=10), NewtonCGNumPy(max_iter=10), X, y)
    assert ra.compiled and not rb.compiled
    np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    assert ra.n_curvature_samples == rb.n_curvature_samples > 12 * 40


def test_newton_cg_solves_to_tolerance_and_counts_its_hessian_products():
    X, y = make_boxes(2000, 10, random_state=6)
    lam = 1.0 / 2000
    ref = Solver(LogLoss(lam=lam), "lbfgs", Full(), Armijo(), gtol=1e-11, max_iter=3000).fit(X, y)
    res = Solver(LogLoss(lam=lam), NewtonCG(), Geometric(1000, 2.0), Armijo(),
                 curvature_schedule=Fixed(200), sampling="subset", gtol=1e-9, max_epochs=500,
                 random_state=0).fit(X, y)
    assert res.status is Status.GTOL and res.fun == pytest.approx(ref.fun, rel=1e-10)
    # every direction: the batch's factors (200) plus one batch per Hessian product
    assert res.n_curvature_samples >= 2 * 200 * res.n_iter
    assert res.effective_passes == pytest.approx(
        (res.n_samples - res.n_reused_samples + res.n_curvature_samples
         + res.n_search_samples) / 2000)
