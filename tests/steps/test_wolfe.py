"""The strong-Wolfe line search step rule: both conditions at every accepted step, longer steps
than the first trial when the direction is short, the fallback and the failures, full-batch
quasi-Newton to SciPy's minimum without a skipped pair, and the settings and combinations it
refuses. Both loop paths, the NumPy twin and the failed-search stop: tests/steps/test_line_search.py,
shared with Armijo."""

from __future__ import annotations

import numpy as np
import pytest

from sqnopt import (
    LBFGS,
    Fixed,
    Full,
    FullBFGS,
    Identity,
    IncompatibleComponentsError,
    L2Ball,
    LogLoss,
    Solver,
    SquaredHinge,
    Status,
    Wolfe,
    get_registry,
)

from conftest import as_format, scipy_minimum

C1, C2 = 1e-4, 0.9


def _phi(obj, w, batch, d, a):
    g = np.empty_like(w)
    f = obj.gradient(w - a * d, batch, g)
    return f, -float(g @ d)


def _search_setup(X, y, lam=1e-3, batch_size=7, seed=3):
    state = Solver(LogLoss(lam=lam), Identity(), Fixed(batch_size), Wolfe()).init_state(X, y)
    rng = np.random.default_rng(seed)
    return state.objective, state.step, rng


@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e4])
def test_both_wolfe_conditions_hold_at_every_accepted_step(boxes, scale):
    """Directions far too short (scale 1e-3: the search must extrapolate), about right, and far
    too long (must zoom): each accepted step meets sufficient decrease and the strong curvature
    condition, and w_next / g_next / f_next are at the accepted point."""
    X, y = boxes
    obj, step, rng = _search_setup(X, y)
    w = rng.normal(size=obj.n_params) * 0.3
    longer = shorter = 0
    for _ in range(15):
        batch = rng.integers(0, X.shape[0], 7).astype(np.intp)
        g = np.empty_like(w)
        f0 = obj.gradient(w, batch, g)
        d = scale * g
        w_next, g_next = np.empty_like(w), np.empty_like(w)
        eps, f_next, evals = step.search(obj, w, batch, f0, g, d, w_next, g_next)
        assert np.isfinite(eps) and evals >= 1
        np.testing.assert_array_equal(w_next, w - eps * d)
        gcheck = np.empty_like(w)
        assert f_next == obj.gradient(w_next, batch, gcheck)
        np.testing.assert_array_equal(g_next, gcheck)
        dphi0 = -float(g @ d)
        assert f_next <= f0 + C1 * eps * dphi0 and f_next < f0
        assert abs(float(g_next @ d)) <= C2 * abs(dphi0) * (1 + 1e-12)
        longer += eps > 1.0
        shorter += eps < 1.0
        w = w_next
    if scale == 1e-3:
        assert longer > 0          # the search extrapolated past the first trial
    if scale == 1e4:
        assert shorter > 0         # ... and zoomed inside an overshooting one


def test_secant_pairs_of_accepted_steps_have_positive_curvature(boxes):
    """The curvature condition gives v'r > 0 on the batch: the reason full-batch BFGS never
    skips a pair with this search."""
    X, y = boxes
    obj, step, rng = _search_setup(X, y)
    w = np.zeros(obj.n_params)
    for _ in range(10):
        batch = rng.integers(0, X.shape[0], 7).astype(np.intp)
        g = np.empty_like(w)
        f0 = obj.gradient(w, batch, g)
        w_next, g_next = np.empty_like(w), np.empty_like(w)
        eps, _, _ = step.search(obj, w, batch, f0, g, 0.01 * g, w_next, g_next)
        assert float((w_next - w) @ (g_next - g)) > 0
        w = w_next


def test_ascent_direction_fails_without_evaluating(boxes):
    X, y = boxes
    obj, step, _ = _search_setup(X, y)
    batch = np.arange(5, dtype=np.intp)
    w = np.zeros(obj.n_params)
    g = np.empty_like(w)
    f0 = obj.gradient(w, batch, g)
    buf, gbuf = np.empty_like(w), np.empty_like(w)
    eps, _, evals = step.search(obj, w, batch, f0, g, -g, buf, gbuf)
    assert np.isnan(eps) and evals == 0


def test_fallback_takes_the_best_sufficient_decrease_trial(boxes):
    """With one trial allowed and a direction far too short, the trial has sufficient decrease
    but not the curvature condition: it is evaluated once more and taken (2 evaluations). A
    trial without sufficient decrease is never taken: the search fails."""
    X, y = boxes
    state = Solver(LogLoss(lam=1e-3), Identity(), Fixed(5), Wolfe(max_evals=1)).init_state(X, y)
    obj, step = state.objective, state.step
    batch = np.arange(5, dtype=np.intp)
    w = np.zeros(obj.n_params)
    g = np.empty_like(w)
    f0 = obj.gradient(w, batch, g)
    buf, gbuf = np.empty_like(w), np.empty_like(w)
    eps, f, evals = step.search(obj, w, batch, f0, g, 1e-6 * g, buf, gbuf)
    assert eps == 1.0 and evals == 2 and f < f0
    assert abs(float(gbuf @ g)) > C2 * float(g @ g) * 1e-6 * 0.99    # curvature not met
    eps, _, evals = step.search(obj, w, batch, f0, g, 1e8 * g, buf, gbuf)   # no decrease
    assert np.isnan(eps) and evals == 1


@pytest.mark.parametrize("fmt,curvature", [
    ("dense", LBFGS(memory=10)), ("csr", LBFGS(memory=10)), ("dense", FullBFGS())])
def test_full_batch_quasi_newton_reaches_scipys_minimum_without_skipping_a_pair(boxes, fmt,
                                                                                curvature):
    X, y = boxes
    Xf = as_format(X, fmt, np.float64)
    solver = Solver(LogLoss(lam=1e-3), curvature, Full(), Wolfe(), max_iter=200, gtol=1e-9,
                    report_every=1, random_state=0)
    res = solver.fit(Xf, y)
    fstar = scipy_minimum(solver.init_state(Xf, y).objective)
    assert res.status is Status.GTOL and res.success
    assert res.fun == pytest.approx(fstar, rel=1e-10)
    assert res.n_pairs_skipped == 0 and res.n_pairs_accepted == res.n_iter
    assert res.effective_passes == pytest.approx(res.n_grad_evals)


def test_the_lbfgs_preset_uses_the_wolfe_search(boxes):
    X, y = boxes
    solver = Solver.preset("lbfgs", lam=1e-3)
    assert isinstance(solver.step, Wolfe)
    assert solver.fit(X, y).success


def test_registered_and_refuses_a_projection_and_bad_settings():
    assert isinstance(get_registry().create("step", "wolfe"), Wolfe)
    assert isinstance(get_registry().create("step", "strong_wolfe"), Wolfe)
    with pytest.raises(IncompatibleComponentsError, match="projection"):
        Solver(SquaredHinge(lam=1e-3), Identity(), Fixed(5), Wolfe(), projection=L2Ball(1.0))
    for bad in ({"c1": 0.95}, {"c2": 1.0}, {"c1": 0.0}, {"eps0": -1.0}, {"expand": 1.0},
                {"max_evals": 0}):
        with pytest.raises(ValueError, match="Wolfe"):
            Wolfe(**bad)  # type: ignore[arg-type]
