"""The exact line search in score space (ScoreLine): the step is the line minimiser to its
tolerance with g_next / f_next at the accepted point, margin and softmax losses, finite at
extreme scores, the scores cached for the next search, Armijo's failure semantics (ascent
direction, working precision), the NumPy twin iterate by iterate, and the recipe's choice."""

from __future__ import annotations

import numpy as np
import pytest

from sqnopt import (
    LBFGS,
    Armijo,
    Fixed,
    Full,
    Identity,
    IncompatibleComponentsError,
    L2Ball,
    LogLoss,
    Newton,
    ScoreLine,
    Softmax,
    Solver,
    SquaredHinge,
    Status,
    TruncatedNewton,
    get_registry,
)
from sqnopt.curvature.reference import IdentityNumPy
from sqnopt.objectives.reference import LogLossNumPy, SquaredHingeNumPy
from sqnopt.schedules.reference import FixedNumPy
from sqnopt.steps.reference import ScoreLineNumPy

from conftest import as_format, gaussian_classes, scipy_minimum


def _setup(objective, X, y, step=None):
    state = Solver(objective, Identity(), Full(), step or ScoreLine()).init_state(X, y)
    return state.objective, state.step


def _search(obj, step, w, d=None, scale=1.0):
    batch = np.arange(obj.data.n_samples, dtype=np.intp)
    g = np.empty_like(w)
    f0 = obj.gradient(w, batch, g)
    d = scale * g if d is None else d
    w_next, g_next = np.empty_like(w), np.empty_like(w)
    eps, f_next, evals = step.search(obj, w, batch, f0, g, d, w_next, g_next)
    return batch, g, f0, d, eps, f_next, evals, w_next, g_next


def _problems(boxes):
    X, y = boxes
    Xk, yk = gaussian_classes()
    return [(LogLoss(lam=1e-3), X, y), (SquaredHinge(lam=1e-3), X, y),
            (LogLoss(lam=1e-3), as_format(X, "csr", np.float64), y),
            (Softmax(lam=1e-3), Xk, yk)]


@pytest.mark.parametrize("case", range(4), ids=["logistic", "squared_hinge", "logistic_csr",
                                                "softmax"])
@pytest.mark.parametrize("scale", [1e-3, 1.0, 30.0])
def test_the_step_minimises_phi_and_leaves_the_accepted_point(boxes, case, scale):
    """Directions far too short, about right and far too long: the accepted step is the line
    minimiser (|phi'(eps)| <= rtol |phi'(0)|), with sufficient decrease, and w_next, g_next,
    f_next are the iterate, gradient and objective there (as a gradient evaluation gives them)."""
    objective, X, y = _problems(boxes)[case]
    obj, step = _setup(objective, X, y)
    rng = np.random.default_rng(case)
    w = rng.normal(size=obj.n_params) * 0.3
    for _ in range(4):
        batch, g, f0, d, eps, f_next, evals, w_next, g_next = _search(obj, step, w, scale=scale)
        assert np.isfinite(eps) and evals >= 1
        np.testing.assert_array_equal(w_next, w - eps * d)
        gcheck = np.empty_like(w)
        fcheck = obj.gradient(w_next, batch, gcheck)
        assert f_next == pytest.approx(fcheck, rel=1e-12)
        np.testing.assert_allclose(g_next, gcheck, rtol=1e-9, atol=1e-13)
        gd = float(g @ d)
        assert f_next <= f0 - 1e-4 * eps * gd and f_next < f0
        assert abs(float(gcheck @ d)) <= 1e-3 * gd * (1 + 1e-6) + 1e-15
        w = w_next


@pytest.mark.parametrize("case", [0, 1, 3], ids=["logistic", "squared_hinge", "softmax"])
def test_score_losses_match_the_gradient_and_finite_differences(boxes, case):
    """The objective's losses from given scores: scores_loss at the scores of w is the loss sum
    and score derivatives of a gradient evaluation; scores_line's derivatives in a are those of
    the loss sum along z - a u (central differences)."""
    objective, X, y = _problems(boxes)[case]
    obj, _ = _setup(objective, X, y)
    assert obj.score_losses
    batch = np.arange(obj.data.n_samples, dtype=np.intp)
    rng = np.random.default_rng(2)
    w, d = rng.normal(size=obj.n_params) * 0.2, rng.normal(size=obj.n_params) * 0.2
    z, u = obj.rows_dot(batch, w), obj.rows_dot(batch, d)
    f, coef = obj.scores_loss(batch, z)
    coef_w, f_w = obj.score_derivatives(w, batch)
    assert f == pytest.approx(f_w, rel=1e-12)
    np.testing.assert_allclose(coef, coef_w, rtol=1e-12, atol=1e-15)

    def loss(a):
        return obj.scores_loss(batch, z - a * u)[0]

    a, h = 0.7, 1e-5
    d1, d2 = obj.scores_line(batch, z, u, a)
    assert d1 == pytest.approx((loss(a + h) - loss(a - h)) / (2 * h), rel=1e-5)
    if case != 1:                  # (the squared hinge's second derivative jumps)
        d1p, _ = obj.scores_line(batch, z, u, a + h)
        d1m, _ = obj.scores_line(batch, z, u, a - h)
        assert d2 == pytest.approx((d1p - d1m) / (2 * h), rel=1e-5)


def test_scores_are_cached_for_the_next_search(boxes):
    """From the accepted point the next search gathers only the direction's scores: one
    gradient evaluation's worth of rows; from any other point it gathers the scores too."""
    X, y = boxes
    obj, step = _setup(LogLoss(lam=1e-3), X, y)
    w = np.full(obj.n_params, 0.1)
    *_, evals, w_next, _ = _search(obj, step, w)
    assert evals == 2 and step.n_score_gathers == 1          # the scores at w were gathered
    *_, evals, w2, _ = _search(obj, step, w_next.copy())
    assert evals == 1 and step.n_score_gathers == 1          # ... and then came from the cache
    *_, evals, _, _ = _search(obj, step, w2 + 1e-3)
    assert evals == 2 and step.n_score_gathers == 2          # another point: gathered again
    *_, evals, _, _ = _search(obj, step, np.zeros(obj.n_params))
    assert evals == 1 and step.n_score_gathers == 2          # w = 0: every score is 0


def test_new_data_of_the_same_shape_is_not_read_from_the_cache(boxes):
    """After Solver.rebind to other rows of the same shape, the first search gathers the
    scores of the new rows (the iterate equals the cached point, the data does not)."""
    X, y = boxes
    solver = Solver(LogLoss(lam=1e-3), Newton(), Full(), ScoreLine(), max_iter=3)
    state = solver.init_state(X[:200], y[:200])
    solver.run(state)
    gathers = state.step.n_score_gathers
    solver.rebind(state, X[200:], y[200:])
    w = np.array(state.w)
    batch = np.arange(200, dtype=np.intp)
    g = np.empty_like(w)
    f0 = state.objective.gradient(w, batch, g)
    w_next, g_next = np.empty_like(w), np.empty_like(w)
    state.step.search(state.objective, w, batch, f0, g, g, w_next, g_next)
    assert state.step.n_score_gathers == gathers + 1
    gcheck = np.empty_like(w)
    f_next = state.objective.gradient(w_next, batch, gcheck)
    np.testing.assert_allclose(g_next, gcheck, rtol=1e-9, atol=1e-13)
    assert np.isfinite(f_next)


@pytest.mark.parametrize("case", [0, 3], ids=["logistic", "softmax"])
def test_extreme_scores_stay_finite(boxes, case):
    """Scores of +-1e3 (margins far beyond exp's range) give finite values, derivatives and a
    finite accepted step."""
    objective, X, y = _problems(boxes)[case]
    obj, step = _setup(objective, X, y)
    batch = np.arange(obj.data.n_samples, dtype=np.intp)
    rng = np.random.default_rng(0)
    w = rng.normal(size=obj.n_params)
    z = obj.rows_dot(batch, w)
    w *= 1e3 / np.max(np.abs(z))
    z = obj.rows_dot(batch, w)
    assert np.max(np.abs(z)) == pytest.approx(1e3)
    d1, d2 = obj.scores_line(batch, z, z, 0.5)
    assert np.isfinite([d1, d2]).all()
    f, coef = obj.scores_loss(batch, z)
    assert np.isfinite(f) and np.isfinite(coef).all()
    batch, g, f0, d, eps, f_next, evals, w_next, g_next = _search(obj, step, w)
    assert np.isfinite(f0) and np.isfinite(eps) and np.isfinite(f_next) and f_next < f0
    assert np.isfinite(g_next).all()


@pytest.mark.parametrize("case", [0, 3], ids=["logistic", "softmax"])
def test_not_a_descent_direction_fails_as_armijo_does(boxes, case):
    objective, X, y = _problems(boxes)[case]
    obj, step = _setup(objective, X, y)
    _, armijo = _setup(objective, X, y, Armijo())
    w = np.random.default_rng(1).normal(size=obj.n_params) * 0.1
    g = np.empty_like(w)
    obj.gradient(w, np.arange(obj.data.n_samples, dtype=np.intp), g)
    for kernel in (step, armijo):
        *_, eps, f_next, evals, _, _ = _search(obj, kernel, w, d=-g)
        assert np.isnan(eps) and np.isnan(f_next) and evals == 0


@pytest.mark.parametrize("objective", [LogLoss(lam=1e-3), Softmax(lam=1e-3)],
                         ids=["logistic", "softmax"])
@pytest.mark.parametrize("curvature", [Newton(), TruncatedNewton(), LBFGS(memory=10)],
                         ids=["newton", "truncated_newton", "lbfgs"])
def test_full_batch_runs_end_at_the_minimum_by_a_failed_search(boxes, objective, curvature):
    """Without gtol / ftol a full-batch run goes on until no step decreases the objective: the
    search fails there (Armijo's semantics) and the run reports convergence to working
    precision, at SciPy's minimum, in fewer iterations than with Armijo's unit steps."""
    X, y = boxes if objective.label_kind == "binary" else gaussian_classes()
    runs = {}
    for step in (ScoreLine(), Armijo()):
        solver = Solver(objective, curvature, Full(), step, max_iter=500, random_state=0)
        runs[step.name] = res = solver.fit(X, y)
        assert res.status is Status.PRECISION and res.success, res.message
    res = runs["score_line"]
    fstar = scipy_minimum(solver.init_state(X, y).objective)
    assert res.fun == pytest.approx(fstar, rel=1e-12)
    assert res.n_iter <= runs["armijo"].n_iter + 2
    # the failed last search read no row beyond the direction's scores
    assert res.n_grad_evals <= res.n_iter + 3


def test_objectives_without_score_losses_get_armijos_search():
    """The general log-linear model (its losses need the base measure, not only the scores)
    provides linear_scores but no losses from given scores: ScoreLine takes Armijo's steps."""
    from sqnopt import LogLinear
    Xk, yk = gaussian_classes()
    F = np.hstack([Xk, 2.0 * Xk, -Xk])          # f_i(y): three blocks of the row
    runs = [Solver(LogLinear(n_outputs=3, lam=1e-3), LBFGS(memory=5), Full(), step,
                   max_iter=15, random_state=0).fit(F, yk) for step in (ScoreLine(), Armijo())]
    assert not runs[0].n_iter == 0
    np.testing.assert_array_equal(runs[0].w, runs[1].w)
    assert runs[0].n_grad_evals == runs[1].n_grad_evals


def test_the_numpy_twin_takes_the_same_steps(boxes):
    """Steepest descent with the exact line search (steps far from 1) on the full batch: the
    compiled rule and its NumPy twin agree iterate by iterate."""
    X, y = boxes
    n = X.shape[0]
    seq = np.tile(np.arange(n), 40)
    for objective, twin_objective in ((LogLoss(lam=1e-3), LogLossNumPy(lam=1e-3)),
                                      (SquaredHinge(lam=1e-3), SquaredHingeNumPy(lam=1e-3))):
        for iters in (1, 2, 5, 15):
            a = Solver(objective, Identity(), Fixed(n), ScoreLine(), batch_sequence=seq,
                       max_iter=iters).fit(X, y)
            b = Solver(twin_objective, IdentityNumPy(), FixedNumPy(n), ScoreLineNumPy(),
                       batch_sequence=seq, max_iter=iters).fit(X, y)
            assert a.compiled and not b.compiled
            assert a.n_iter == b.n_iter == iters
            np.testing.assert_allclose(b.w, a.w, rtol=1e-9, atol=1e-12)
            assert a.n_grad_evals == b.n_grad_evals


def test_python_loop_takes_the_compiled_steps(boxes):
    X, y = boxes
    runs = [Solver(LogLoss(lam=1e-3), LBFGS(memory=5), Full(), ScoreLine(), max_iter=30,
                   random_state=0, path=path).fit(X, y) for path in ("compiled", "python")]
    a, b = runs
    assert a.compiled and not b.compiled
    np.testing.assert_array_equal(a.w, b.w)
    assert (a.n_grad_evals, a.n_search_samples) == (b.n_grad_evals, b.n_search_samples)


def test_requires_linear_scores_registered_and_refuses_bad_settings():
    from sqnopt.objectives.reference import HingeNumPy
    assert get_registry().get("step", "score_line").factory is ScoreLine
    assert get_registry().get("step", "exact_line").factory is ScoreLine
    with pytest.raises(IncompatibleComponentsError, match="linear_scores"):
        Solver(HingeNumPy(lam=1e-3), IdentityNumPy(), Fixed(5), ScoreLine())
    with pytest.raises(IncompatibleComponentsError, match="projection"):
        Solver(LogLoss(lam=1e-3), Identity(), Fixed(5), ScoreLine(), projection=L2Ball(1.0))
    for bad in ({"rtol": 0.0}, {"rtol": 1.0}, {"max_iter": 0}):
        with pytest.raises(ValueError, match="ScoreLine"):
            ScoreLine(**bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Armijo"):
        ScoreLine(c1=2.0)


def test_the_recipe_takes_it_for_full_batch_newton_and_keeps_a_given_step(boxes):
    from sqnopt.recipes import choose
    X, y = boxes
    for curvature in (Newton(), TruncatedNewton()):
        rec = choose(LogLoss(lam=1e-3), curvature, X, np.ones(X.shape[0]), fit_intercept=False)
        assert isinstance(rec.step, ScoreLine)
        rec = choose(LogLoss(lam=1e-3), curvature, X, np.ones(X.shape[0]), fit_intercept=False,
                     step=Armijo())
        assert isinstance(rec.step, Armijo)
