"""Gradient estimators (sqnopt.gradients): minibatch, SVRG, SAGA -- against their NumPy twins,
their cost accounting, and linear convergence with constant steps."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt import (
    SAGA,
    SVRG,
    Armijo,
    Constant,
    Fixed,
    Full,
    IncompatibleComponentsError,
    LBFGS,
    Minibatch,
    Solver,
)
from sqnopt.datasets import make_boxes
from sqnopt.gradients.reference import MinibatchNumPy, SAGANumPy, SVRGNumPy
from sqnopt.objectives import BinaryLogistic, LogLoss, Softmax, SquaredHinge
from sqnopt.objectives.reference import LogLossNumPy
from sqnopt.registry import get_registry

from conftest import gaussian_classes


def _multiclass(n: int = 150, p: int = 6, k: int = 3, seed: int = 0):
    return gaussian_classes(n, p, k, seed)


def _kernel(objective, X, y, fit_intercept=False):
    return Solver(objective, fit_intercept=fit_intercept).init_state(X, y).objective


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("objective,multi", [(LogLoss(lam=0.1), False),
                                             (SquaredHinge(lam=0.1), False),
                                             (BinaryLogistic(lam=0.1), False),
                                             (Softmax(lam=0.1), True)])
def test_score_derivatives_give_the_minibatch_gradient(objective, multi, sparse) -> None:
    X, y = _multiclass() if multi else make_boxes(120, 5, random_state=1)
    Xf = sp.csr_matrix(X) if sparse else X
    k = _kernel(objective, Xf, y, fit_intercept=True)
    rng = np.random.default_rng(3)
    w = rng.normal(size=k.n_params) * 0.3
    batch = np.array([3, 7, 7, 20, 41], dtype=np.intp)
    g = np.zeros(k.n_params)
    f = k.gradient(w, batch, g)
    coef, total = k.score_derivatives(w, batch)
    assert coef.shape == (5, k.n_scores) and k.n_scores == (3 if multi else 1)
    rebuilt = np.zeros(k.n_params)
    k.rows_axpy(batch, coef, 1.0 / 5, rebuilt)
    reg = k.reg_gradient_value(w, rebuilt)
    np.testing.assert_allclose(rebuilt, g, rtol=1e-12, atol=1e-14)
    assert total / 5 + reg == pytest.approx(f, rel=1e-12)


def _runs(estimators, objective, X, y, curvature="identity", step=None, schedule=None,
          n_iter=60, **kw):
    seq = np.random.default_rng(5).integers(0, X.shape[0], size=20_000).astype(np.intp)
    out = []
    for est in estimators:
        iterates: list[np.ndarray] = []
        solver = Solver(objective, curvature, schedule or Fixed(4), step or Constant(0.3),
                        gradient=est, batch_sequence=seq, max_iter=n_iter, report_every=1,
                        callback=lambda info: iterates.append(info.w.copy()), **kw)
        res = solver.fit(X, y)
        out.append((np.array(iterates), res))
    return out


@pytest.mark.parametrize("pair", [(SVRG(period=40), SVRGNumPy(period=40)),
                                  (SAGA(), SAGANumPy()), (Minibatch(), MinibatchNumPy())])
@pytest.mark.parametrize("multi", [False, True])
def test_compiled_estimators_match_their_numpy_twins_iterate_by_iterate(pair, multi) -> None:
    X, y = _multiclass() if multi else make_boxes(200, 5, random_state=2)
    objective = Softmax(lam=0.05) if multi else LogLoss(lam=0.05)
    (a, ra), (b, rb) = _runs(pair, objective, X, y, fit_intercept=True)
    assert ra.compiled and not rb.compiled
    np.testing.assert_array_equal(a, b)
    assert ra.n_estimator_samples == rb.n_estimator_samples
    # with a secant model and a line search too (they read the plain minibatch gradient)
    (a, ra), (b, rb) = _runs(pair, objective, X, y, curvature=LBFGS(memory=5), step=Armijo(),
                             schedule=Fixed(20), n_iter=25)
    np.testing.assert_array_equal(a, b)
    assert ra.n_pairs_accepted == rb.n_pairs_accepted > 0


def test_a_numpy_objective_twin_runs_with_the_numpy_svrg_twin() -> None:
    X, y = make_boxes(150, 4, random_state=3)
    (a, _), (b, _) = _runs([SVRG(period=30), SVRGNumPy(period=30)], LogLoss(lam=0.05), X, y)
    (c, rc), = _runs([SVRGNumPy(period=30)], LogLossNumPy(lam=0.05), X, y)
    np.testing.assert_allclose(c, a, rtol=1e-10, atol=1e-12)
    assert not rc.compiled


def test_secant_differences_of_a_variance_reduced_estimate_are_the_plain_ones() -> None:
    X, y = make_boxes(200, 5, random_state=4)
    k = _kernel(LogLoss(lam=0.1), X, y)
    for est in (SVRG(period=1000), SAGA()):
        kern = est.init(Solver(LogLoss(lam=0.1)).init_state(X, y).problem)
        kern.bind(k)
        rng = np.random.default_rng(0)
        w0 = rng.normal(size=k.n_params)
        w1 = w0 + 0.1 * rng.normal(size=k.n_params)
        b = np.array([1, 5, 9, 30], dtype=np.intp)
        g0, p0, g1, p1 = (np.zeros(k.n_params) for _ in range(4))
        kern.estimate(k, rng.normal(size=k.n_params), np.arange(200),      # a snapshot/table
                      np.zeros(k.n_params))
        if isinstance(est, SAGA):     # SAGA's table moves with the visit: estimate at w1 first
            kern.estimate(k, w1, b, g1, p1)
            kern.estimate(k, w0, b, g0, p0)
            # the second visit sees the first's table entries, so the estimates differ from
            # the plain gradients exactly by the table terms, and the plain ones are exact
            ref0, ref1 = np.zeros(k.n_params), np.zeros(k.n_params)
            k.gradient(w0, b, ref0)
            k.gradient(w1, b, ref1)
            np.testing.assert_allclose(p0, ref0, rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(p1, ref1, rtol=1e-12, atol=1e-14)
        else:
            kern.estimate(k, w0, b, g0, p0)
            kern.estimate(k, w1, b, g1, p1)
            np.testing.assert_allclose(g1 - g0, p1 - p0, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("est", [SVRG(), SAGA()])
@pytest.mark.parametrize("multi", [False, True])
def test_constant_steps_converge_linearly_with_variance_reduction(est, multi) -> None:
    """On a strongly convex problem the suboptimality falls by a constant factor per pass (to
    1e-10), where the plain minibatch gradient stalls at its noise floor."""
    X, y = _multiclass(400, 8) if multi else make_boxes(400, 8, random_state=5)
    objective = Softmax(lam=0.02) if multi else LogLoss(lam=0.02)
    fstar = Solver(objective, "lbfgs", Full(), Armijo(), gtol=1e-12, max_iter=500).fit(X, y).fun
    res = Solver(objective, "identity", Fixed(5), Constant(0.2), gradient=est, sampling="shuffle",
                 max_epochs=40, history_every=80, random_state=0).fit(X, y)
    gap = res.history.objective - fstar
    assert gap[-1] <= 1e-10 * fstar
    mid = len(gap) // 2
    assert gap[mid] < 1e-3 * gap[1] and gap[-1] < 1e-3 * max(gap[mid], 1e-16)
    sgd = Solver(objective, "identity", Fixed(5), Constant(0.2), sampling="shuffle",
                 max_epochs=40, random_state=0).fit(X, y)
    assert sgd.fun - fstar > 1e3 * (res.fun - fstar)


def test_cost_accounting_and_memory_of_the_estimators() -> None:
    X, y = make_boxes(300, 6, random_state=6)
    N = X.shape[0]
    kw = dict(max_iter=150, random_state=0)
    svrg = Solver(LogLoss(lam=0.01), "identity", Fixed(4), Constant(0.2),
                  gradient=SVRG(period=200), **kw).fit(X, y)
    # a snapshot at the start and every 200 batch samples (50 iterations), plus the second
    # minibatch gradient of every iteration
    assert svrg.n_estimator_samples == 3 * N + 150 * 4
    assert svrg.effective_passes == pytest.approx((150 * 4 + 3 * N + 150 * 4) / N)
    saga = Solver(LogLoss(lam=0.01), "identity", Fixed(4), Constant(0.2), gradient="saga",
                  **kw).fit(X, y)
    assert saga.n_estimator_samples == N                  # the table's fill
    assert saga.memory_bytes == 8 * (2 * N + 6)           # table + scratch, the average
    lb = Solver(LogLoss(lam=0.01), LBFGS(memory=4), Fixed(4), Constant(0.2), gradient="saga",
                **kw).fit(X, y)
    assert lb.memory_bytes == 8 * 6 * (2 * 4 + 1) + 8 * (2 * N + 6)


def test_estimators_are_registered_components_and_refuse_what_cannot_work() -> None:
    assert {"minibatch", "svrg", "saga"} <= set(get_registry().names("gradient"))
    assert Solver(gradient="saga").gradient == SAGA()
    with pytest.raises(IncompatibleComponentsError, match="weighted"):
        Solver(gradient="saga", sampling="weighted")
    Solver(gradient="svrg", sampling="weighted")          # unbiased either way
    with pytest.raises(ValueError, match="period"):
        SVRG(period=0)
    X, y = make_boxes(100, 3, random_state=0)
    with pytest.raises(IncompatibleComponentsError, match="linear_scores|cannot work"):
        Solver(LogLossNumPy(lam=0.1), gradient="saga").fit(X, y)


def test_rebinding_to_new_data_restarts_the_table_and_the_snapshot() -> None:
    X, y = make_boxes(400, 5, random_state=7)
    for est in ("saga", "svrg"):
        solver = Solver(LogLoss(lam=0.01), "identity", Fixed(5), Constant(0.2), gradient=est,
                        random_state=0)
        state = solver.init_state(X[:200], y[:200])
        solver.run(state, max_epochs=2)
        before = state.counters.n_estimator_samples
        solver.rebind(state, X[200:], y[200:])
        res = solver.run(state, max_epochs=1)
        assert state.counters.n_estimator_samples - before >= 200   # a new fill / snapshot
        assert np.isfinite(res.fun)
