"""The Hessian's diagonal of the margin objectives and preconditioned CG in Newton-CG /
truncated Newton (``preconditioner="diagonal"``, Hsia, Chiang & Lin 2018)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt import Armijo, Full, NewtonCG, Solver, Status, TruncatedNewton, recipes
from sqnopt.curvature.reference import NewtonCGNumPy, TruncatedNewtonNumPy
from sqnopt.datasets import make_boxes
from sqnopt.interfaces import BATCH_OBSERVED
from sqnopt.objectives import BinaryLogistic, LogLoss, Softmax, SquaredHinge

from conftest import curvature_twin_iterates, gaussian_classes


def _dense_hessian(k, w, batch):
    cols = []
    for e in np.eye(k.n_params):
        out = np.zeros(k.n_params)
        k.hessian_product(w, batch, np.ascontiguousarray(e), out)
        cols.append(out)
    return np.column_stack(cols)


def _scaled_boxes(n: int, p: int, seed: int):
    """Boxes with columns scaled over four orders of magnitude: a badly scaled Hessian
    diagonal, the case a Jacobi preconditioner is for."""
    X, y = make_boxes(n, p, random_state=seed)
    return X * np.logspace(-2, 2, p), y


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("intercept", [False, True])
@pytest.mark.parametrize("objective", [LogLoss(lam=0.1), BinaryLogistic(lam=0.1),
                                       SquaredHinge(lam=0.1), LogLoss(lam=0.0)])
def test_hessian_diagonal_is_the_diagonal_of_the_dense_hessian(objective, intercept, sparse,
                                                               dtype):
    X, y = make_boxes(120, 7, random_state=1)
    X = X.astype(dtype)
    X[:, 2] = 0.0                       # an empty column: its diagonal entry is lam alone
    Xf = sp.csr_matrix(X) if sparse else X
    k = Solver(objective, fit_intercept=intercept).init_state(Xf, y).objective
    rng = np.random.default_rng(3)
    w = 0.4 * rng.normal(size=k.n_params)
    batch = np.array([0, 5, 5, 17, 44, 80, 119], dtype=np.intp)
    diag = k.hessian_diagonal(w, batch)
    np.testing.assert_allclose(diag, np.diag(_dense_hessian(k, w, batch)), rtol=1e-12,
                               atol=1e-15)
    assert diag[2] == objective.lam


def test_softmax_provides_no_diagonal_and_keeps_plain_cg():
    X, y = gaussian_classes(300, 5, 3, 0)
    k = Solver(Softmax(lam=0.1)).init_state(X, y).objective
    with pytest.raises(TypeError, match="diagonal"):
        k.hessian_diagonal(np.zeros(k.n_params), np.arange(10))
    a, ra, b, rb = curvature_twin_iterates(Softmax(lam=0.01),
                                           NewtonCG(max_iter=10, preconditioner="diagonal"),
                                           NewtonCG(max_iter=10), X, y)
    np.testing.assert_array_equal(a, b)    # the same arithmetic, bit for bit
    assert ra.n_curvature_samples == rb.n_curvature_samples


@pytest.mark.parametrize("weight", [0.01, 1.0])
@pytest.mark.parametrize("objective", [LogLoss(lam=0.01), SquaredHinge(lam=0.01)])
def test_compiled_pcg_matches_its_numpy_twin_iterate_by_iterate(objective, weight):
    X, y = _scaled_boxes(300, 6, 5)
    a, ra, b, rb = curvature_twin_iterates(
        objective, NewtonCG(max_iter=10, preconditioner="diagonal", diagonal_weight=weight),
        NewtonCGNumPy(max_iter=10, preconditioner="diagonal", diagonal_weight=weight), X, y)
    assert ra.compiled and not rb.compiled
    np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    # every batch of 40: its factors, its diagonal, one batch per product
    assert ra.n_curvature_samples == rb.n_curvature_samples > 12 * 40 * 2
    plain = curvature_twin_iterates(objective, NewtonCG(max_iter=10),
                                    NewtonCGNumPy(max_iter=10), X, y)[0]
    assert not np.allclose(a, plain, rtol=1e-6)   # the preconditioner changes the directions


@pytest.mark.parametrize("weight", [0.01, 0.5, 1.0])
def test_exact_pcg_is_the_newton_step(weight):
    X, y = _scaled_boxes(200, 6, 3)
    solver = Solver(LogLoss(lam=0.05), NewtonCG(max_iter=50, forcing=1e-13,
                                                preconditioner="diagonal",
                                                diagonal_weight=weight),
                    Full(), Armijo(), curvature_schedule=Full(), max_iter=1, fit_intercept=True)
    state = solver.init_state(X, y)
    k = state.objective
    rng = np.random.default_rng(4)
    w = 0.1 * rng.normal(size=k.n_params)
    allb = np.arange(200, dtype=np.intp)
    assert state.curvature.observe_batch(k, w, allb) == BATCH_OBSERVED
    assert state.curvature.preconditioned
    H = _dense_hessian(k, w, allb)
    g = rng.normal(size=k.n_params)
    d = np.zeros_like(g)
    state.curvature.direction(g, d)
    np.testing.assert_allclose(d, np.linalg.solve(H, g), rtol=1e-8, atol=1e-12)
    # n iterations in exact arithmetic; rounding costs a few more at a 1e-13 residual
    assert 0 < state.curvature.last_iterations <= 2 * k.n_params


def test_jacobi_cuts_cg_products_on_badly_scaled_columns():
    # CG's iterations grow with the condition number; scaling the columns over four orders
    # of magnitude spreads the spectrum, which the diagonal takes back out
    X, y = _scaled_boxes(400, 30, 7)
    iters = {}
    for pre in (None, "diagonal"):
        solver = Solver(LogLoss(lam=1e-3), NewtonCG(max_iter=200, forcing=1e-8,
                                                    preconditioner=pre, diagonal_weight=1.0),
                        Full(), Armijo(), curvature_schedule=Full(), max_iter=1)
        state = solver.init_state(X, y)
        k = state.objective
        w = np.zeros(k.n_params)
        state.curvature.observe_batch(k, w, np.arange(400, dtype=np.intp))
        g = np.zeros(k.n_params)
        k.gradient(w, np.arange(400, dtype=np.intp), g)
        d = np.zeros_like(g)
        state.curvature.direction(g, d)
        iters[pre] = state.curvature.last_iterations
    assert iters["diagonal"] < 0.5 * iters[None]


def test_preconditioned_truncated_newton_converges_linearly_or_better():
    X, y = _scaled_boxes(600, 40, 2)
    X = sp.csr_matrix(X)
    lam = 1.0 / 600
    ref = Solver(LogLoss(lam=lam), NewtonCG(max_iter=200, forcing=1e-12), Full(), Armijo(),
                 curvature_schedule=Full(), gtol=1e-13, max_iter=100).fit(X, y)
    for weight in (0.01, 1.0):
        model = TruncatedNewton(preconditioner="diagonal", diagonal_weight=weight)
        r = recipes.choose(LogLoss(lam=lam), model, X, np.ones(600), fit_intercept=False)
        res = Solver(r.objective, r.curvature, r.schedule, Armijo(),
                     curvature_schedule=r.curvature_schedule, sampling=r.sampling,
                     max_iter=60, gtol=1e-10, history_every=1, report_every=1).fit(X, y)
        assert res.status is Status.GTOL
        gap = res.history.objective - ref.fun
        gap = gap[gap > 1e-12 * abs(ref.fun)]
        assert len(gap) >= 3
        # Armijo's unit steps from 0 on columns scaled over four orders of magnitude: a
        # contraction of the gap by a fixed factor at every step (linear), faster at the end
        ratios = gap[1:] / gap[:-1]
        assert np.all(ratios < 0.75) and np.all(ratios[-3:] < 0.25)


def test_truncated_newton_twin_defaults_agree():
    a, b = TruncatedNewton(), TruncatedNewtonNumPy()
    assert (a.preconditioner, a.diagonal_weight) == (b.preconditioner, b.diagonal_weight)
    assert (a.forcing, a.max_iter) == (b.forcing, b.max_iter)


def test_bad_preconditioner_options_are_refused():
    with pytest.raises(ValueError, match="NewtonCG: preconditioner must be 'diagonal' or None"):
        NewtonCG(preconditioner="jacobi")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="TruncatedNewton: diagonal_weight"):
        TruncatedNewton(diagonal_weight=1.5)
    with pytest.raises(ValueError, match="TruncatedNewton: diagonal_weight"):
        TruncatedNewton(diagonal_weight=-0.1)


@pytest.mark.parametrize("forcing", ["relative", "eisenstat_walker"])
@pytest.mark.parametrize("pre", [None, "diagonal"])
def test_adaptive_forcing_rules_match_the_twin_iterate_by_iterate(forcing, pre):
    # unscaled columns: tight forcing terms on badly scaled ones (many CG iterations) let the
    # two implementations' rounding drift apart beyond 1e-9
    X, y = make_boxes(300, 6, random_state=5)
    a, ra, b, rb = curvature_twin_iterates(
        LogLoss(lam=0.01), NewtonCG(max_iter=10, forcing=forcing, preconditioner=pre),
        NewtonCGNumPy(max_iter=10, forcing=forcing, preconditioner=pre), X, y)
    np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    assert ra.n_curvature_samples == rb.n_curvature_samples
    fixed = curvature_twin_iterates(LogLoss(lam=0.01), NewtonCG(max_iter=10, forcing=0.5,
                                                                preconditioner=pre),
                                    NewtonCGNumPy(max_iter=10), X, y)[0]
    assert not np.allclose(a, fixed, rtol=1e-6)


def test_adaptive_forcing_terms_of_the_twin():
    # the compiled kernel's terms are checked through the iterates above
    X, y = make_boxes(100, 4, random_state=0)
    problem = Solver(LogLoss(lam=0.1)).init_state(X, y).problem
    norms = (1.0, 0.5, 0.01, 0.009)
    rel = NewtonCGNumPy(forcing="relative").init(problem)
    assert [rel._eta(n) for n in norms] == pytest.approx([0.5, 0.5, 0.1, np.sqrt(0.009)])
    ew = NewtonCGNumPy(forcing="eisenstat_walker").init(problem)
    # 0.9 (0.5 / 1)^2 = 0.225; 0.9 (0.01 / 0.5)^2 = 3.6e-4 (safeguard 0.9 * 0.225^2 < 0.1:
    # off); 0.9 (0.009 / 0.01)^2 = 0.729, capped at 0.5
    assert [ew._eta(n) for n in norms] == pytest.approx([0.5, 0.225, 3.6e-4, 0.5])
    ew2 = NewtonCGNumPy(forcing="eisenstat_walker").init(problem)
    # a slow decrease keeps eta up: 0.9 * 0.5^2 = 0.225 > 0.1 bounds the next from below
    assert [ew2._eta(n) for n in (1.0, 0.9, 0.1)] == pytest.approx([0.5, 0.5, 0.225])


# ------------------------------------------------------------------ the run's gtol ends CG
def _ridge_state(gtol_stop: bool, twin: bool = False, max_iter: int = 200):
    from sqnopt.objectives import SquaredError

    X, _ = _scaled_boxes(300, 12, 6)
    y = X @ np.linspace(-1.0, 1.0, 12) + 0.1 * np.random.default_rng(2).normal(size=300)
    model = (NewtonCGNumPy if twin else NewtonCG)(max_iter=max_iter, forcing=0.5,
                                                  preconditioner="diagonal",
                                                  gtol_stop=gtol_stop)
    state = Solver(SquaredError(lam=1e-3), model, Full(), Armijo(),
                   curvature_schedule=Full(), max_iter=1).init_state(X, y)
    k = state.objective
    allb = np.arange(300, dtype=np.intp)
    w = np.zeros(k.n_params)
    g = np.zeros(k.n_params)
    k.gradient(w, allb, g)
    assert state.curvature.observe_batch(k, w, allb) == BATCH_OBSERVED
    return state, k, w, allb, g


@pytest.mark.parametrize("twin", [False, True], ids=["compiled", "numpy-twin"])
def test_gtol_stop_runs_cg_until_the_next_gradient_is_half_the_run_gtol(twin):
    gtol = 1e-6
    state, k, w, allb, g = _ridge_state(True, twin)
    state.curvature.run_gtol = gtol
    d = np.zeros_like(g)
    state.curvature.direction(g, d)
    n = state.curvature.last_iterations
    # a quadratic: the gradient at w - d is g - H d, CG's residual; the forcing (0.5) is
    # not used while the run has a gtol
    g_next = np.zeros_like(g)
    k.gradient(w - d, allb, g_next)
    assert np.max(np.abs(g_next)) <= 0.5 * gtol * (1 + 1e-6)
    # ... and CG stops at the first product that gets there
    short, k2, w2, allb2, g2 = _ridge_state(True, twin, max_iter=n - 1)
    short.curvature.run_gtol = gtol
    d2 = np.zeros_like(g2)
    short.curvature.direction(g2, d2)
    k2.gradient(w2 - d2, allb2, g_next)
    assert np.max(np.abs(g_next)) > 0.5 * gtol
    # without a run gtol, the forcing stops it after a few products, as without gtol_stop
    for stop in (True, False):
        other = _ridge_state(stop, twin)[0]
        other.curvature.run_gtol = 0.0 if stop else gtol
        other.curvature.direction(g, d)
        assert other.curvature.last_iterations < n


def test_gtol_stop_compiled_matches_its_twin():
    dirs, iters = [], []
    for twin in (False, True):
        state, k, w, allb, g = _ridge_state(True, twin)
        state.curvature.run_gtol = 1e-7
        d = np.zeros_like(g)
        state.curvature.direction(g, d)
        dirs.append(d)
        iters.append(state.curvature.last_iterations)
    assert iters[0] == iters[1] > 3
    np.testing.assert_allclose(dirs[0], dirs[1], rtol=1e-9, atol=1e-14)


def test_the_driver_hands_the_run_gtol_to_the_curvature_kernel():
    from sqnopt.objectives import SquaredError

    X, _ = _scaled_boxes(300, 12, 6)
    y = X @ np.linspace(-1.0, 1.0, 12)
    solver = Solver(SquaredError(lam=1e-3), recipes.quadratic_cg(), Full(), Armijo(),
                    curvature_schedule=Full(), gtol=3e-7, max_iter=5)
    res = solver.fit(X, y)
    assert res.status is Status.GTOL and res.n_iter == 1     # one CG run met the test
    state = solver.init_state(X, y)
    assert state.curvature.run_gtol == 0.0     # set by run, for the run
