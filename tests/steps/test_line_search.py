"""The Armijo line search step rule: the condition it enforces, full-batch L-BFGS against SciPy,
and the combinations it refuses; and what every line search (Armijo, strong Wolfe) shares: both
loop paths and the NumPy twin agree, a failed search is a reported stop."""

from __future__ import annotations

import numpy as np
import pytest

from sqnopt import (
    LBFGS,
    Armijo,
    Fixed,
    Full,
    FullBFGS,
    Identity,
    IncompatibleComponentsError,
    L2Ball,
    LogLoss,
    RegularizedBFGS,
    Solver,
    SquaredHinge,
    Status,
    Wolfe,
)
from sqnopt.curvature.reference import IdentityNumPy
from sqnopt.objectives.reference import SquaredHingeNumPy
from sqnopt.schedules.reference import FixedNumPy
from sqnopt.steps.reference import ArmijoNumPy, WolfeNumPy

from conftest import as_format, scipy_minimum



def test_armijo_condition_holds_at_every_accepted_step(boxes):
    """Drive the kernel by hand: the accepted step satisfies the sufficient decrease, the step
    before it (when there is one) does not, and w_next / g_next / f_next are at the accepted
    point."""
    X, y = boxes
    solver = Solver(SquaredHinge(lam=1e-3), Identity(), Fixed(7), Armijo(eps0=50.0, shrink=0.3))
    state = solver.init_state(X, y)
    obj, step = state.objective, state.step
    rng = np.random.default_rng(3)
    w = rng.normal(size=obj.n_params) * 0.3
    backtracked = 0
    for _ in range(20):
        batch = rng.integers(0, X.shape[0], 7).astype(np.intp)
        g = np.empty_like(w)
        f0 = obj.gradient(w, batch, g)
        d = g.copy()
        w_next, g_next = np.empty_like(w), np.empty_like(w)
        eps, f_next, evals = step.search(obj, w, batch, f0, g, d, w_next, g_next)
        gd = float(g @ d)
        assert np.isfinite(eps) and evals >= 1
        assert eps == pytest.approx(50.0 * 0.3 ** (evals - 1), rel=1e-15)
        np.testing.assert_allclose(w_next, w - eps * d, rtol=1e-15, atol=1e-15)
        gcheck = np.empty_like(w)
        assert f_next == obj.gradient(w_next, batch, gcheck)
        np.testing.assert_array_equal(g_next, gcheck)
        assert f_next <= f0 - 1e-4 * eps * gd
        if evals > 1:
            backtracked += 1
            prev = eps / 0.3
            assert obj.gradient(w - prev * d, batch, gcheck) > f0 - 1e-4 * prev * gd
        w = w_next
    assert backtracked > 0          # the test exercised backtracking


def test_ascent_direction_and_exhausted_backtracks_fail(boxes):
    X, y = boxes
    state = Solver(LogLoss(lam=1e-3), Identity(), Fixed(5), Armijo(max_backtracks=2)).init_state(X, y)
    obj, step = state.objective, state.step
    batch = np.arange(5, dtype=np.intp)
    w = np.zeros(obj.n_params)
    g = np.empty_like(w)
    f0 = obj.gradient(w, batch, g)
    buf, gbuf = np.empty_like(w), np.empty_like(w)
    eps, _, evals = step.search(obj, w, batch, f0, g, -g, buf, gbuf)   # ascent: no evaluation
    assert np.isnan(eps) and evals == 0
    eps, _, evals = step.search(obj, w, batch, f0, g, 1e6 * g, buf, gbuf)  # overshoots 3 times
    assert np.isnan(eps) and evals == 3


# what every line search shares: a failed search is a reported stop, and the compiled loop, the
# Python loop and the NumPy twins take the same steps
_FAILING = [(Armijo(eps0=1e8, max_backtracks=1), 3), (Wolfe(eps0=1e8, max_evals=1), None)]
_AGREEING = [(Armijo(eps0=20.0), ArmijoNumPy(eps0=20.0)), (Wolfe(eps0=0.05), WolfeNumPy(eps0=0.05))]


@pytest.mark.parametrize("path", ["compiled", "python"])
@pytest.mark.parametrize("step,grad_evals", _FAILING, ids=["armijo", "wolfe"])
def test_line_search_failure_is_a_reported_stop(boxes, path, step, grad_evals):
    X, y = boxes
    solver = Solver(LogLoss(lam=1e-3), Identity(), Fixed(5), step, max_iter=50, random_state=0,
                    path=path)
    res = solver.fit(X, y)
    assert res.status is Status.LINE_SEARCH_FAILED and not res.success
    assert res.n_iter == 0 and np.all(res.w == 0)
    if grad_evals is not None:
        assert "accepted no step at iteration 0" in res.message
        assert res.n_grad_evals == grad_evals


@pytest.mark.parametrize("step,twin_step", _AGREEING, ids=["armijo", "wolfe"])
def test_both_paths_and_the_numpy_twin_agree(boxes, step, twin_step):
    X, y = boxes
    seq = np.random.default_rng(5).integers(0, X.shape[0], 5 * 60)
    runs = []
    for path in ("compiled", "python"):
        runs.append(Solver(SquaredHinge(lam=1e-3), Identity(), Fixed(5), step,
                           batch_sequence=seq, max_iter=60, path=path).fit(X, y))
    twin = Solver(SquaredHingeNumPy(lam=1e-3), IdentityNumPy(), FixedNumPy(5), twin_step,
                  batch_sequence=seq, max_iter=60).fit(X, y)
    a, b = runs
    assert a.compiled and not b.compiled and not twin.compiled
    np.testing.assert_array_equal(a.w, b.w)
    assert (a.n_grad_evals, a.n_search_samples) == (b.n_grad_evals, b.n_search_samples)
    assert a.n_grad_evals > 2 * 60          # the searches took more than one trial
    np.testing.assert_allclose(twin.w, a.w, rtol=1e-9, atol=1e-12)
    assert twin.n_grad_evals == a.n_grad_evals
    if isinstance(step, Armijo):
        assert a.effective_passes == pytest.approx(
            (a.n_samples + a.n_search_samples) / X.shape[0])


@pytest.mark.parametrize("fmt,curvature", [
    ("dense", LBFGS(memory=10)), ("csr", LBFGS(memory=10)), ("dense", FullBFGS()),
    ("dense", RegularizedBFGS(delta=1e-4, Gamma=0.0))])
def test_full_batch_quasi_newton_with_armijo_reaches_scipys_minimum(boxes, fmt, curvature):
    """No step to tune: oLBFGS / oBFGS / RES on the full batch with the Armijo search reach the
    L-BFGS-B minimum to 1e-10 relative, with one gradient evaluation per iteration (the accepted
    trial's gradient is the secant gradient and the next iteration's)."""
    X, y = boxes
    Xf = as_format(X, fmt, np.float64)
    solver = Solver(LogLoss(lam=1e-3), curvature, Full(), Armijo(), max_iter=200,
                    gtol=1e-9, report_every=1, random_state=0)
    res = solver.fit(Xf, y)
    fstar = scipy_minimum(solver.init_state(Xf, y).objective)
    assert res.status is Status.GTOL and res.success
    assert res.fun == pytest.approx(fstar, rel=1e-10)
    N = X.shape[0]
    # every gradient but the first is the previous search's accepted trial, reused -- including
    # the one at the returned iterate, on which the loop tested gtol before stopping
    assert res.n_secant_samples == 0 and res.n_reused_samples == res.n_iter * N
    assert res.n_grad_evals == 1 + res.n_search_samples // N
    assert res.n_grad_evals <= res.n_iter + 3     # almost every first trial (eps = 1) accepted
    assert res.effective_passes == pytest.approx(res.n_grad_evals)


def test_full_batch_run_without_gtol_ends_at_the_minimum_not_in_a_stall(boxes):
    """Once a full-batch run is at a minimiser to working precision, the decrease the search
    asks for is below the objective's rounding: the search fails (strict decrease required)
    and the run stops -- reported as convergence (``Status.PRECISION``, a success), not as a
    failure -- instead of spending max_backtracks + 1 evaluations per iteration on steps that
    change nothing until max_iter."""
    X, y = boxes
    solver = Solver(LogLoss(lam=1e-3), LBFGS(memory=10), Full(), Armijo(), max_iter=1000,
                    random_state=0)
    res = solver.fit(X, y)
    fstar = scipy_minimum(solver.init_state(X, y).objective)
    assert res.status is Status.PRECISION and res.success and "working precision" in res.message
    assert res.fun == pytest.approx(fstar, rel=1e-12)
    assert res.n_iter < 50 and res.n_grad_evals < res.n_iter + 3 * 31


def test_armijo_refuses_a_projection_and_bad_settings():
    with pytest.raises(IncompatibleComponentsError, match="projection"):
        Solver(SquaredHinge(lam=1e-3), Identity(), Fixed(5), Armijo(), projection=L2Ball(1.0))
    for bad in ({"c1": 1.0}, {"shrink": 0.0}, {"eps0": -1.0}, {"max_backtracks": -1}):
        with pytest.raises(ValueError, match="Armijo"):
            Armijo(**bad)  # type: ignore[arg-type]


def test_line_search_runs_the_generic_loop_on_sparse_data(boxes):
    X, y = boxes
    Xs = as_format(X, "csr", np.float64)
    state = Solver(SquaredHinge(lam=1e-3), Identity(), Fixed(5), Armijo(),
                   random_state=0).init_state(Xs, y)
    assert type(state.loop).__name__ == "CompiledLoop"
    with pytest.raises(ValueError, match="line search"):
        Solver(SquaredHinge(lam=1e-3), Identity(), Fixed(5), Armijo(), path="scaled").init_state(Xs, y)
