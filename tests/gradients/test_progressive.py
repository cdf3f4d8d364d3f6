"""Progressive batching (sqnopt.gradients.ProgressiveBatch) and the progressive-batching L-BFGS
preset: the inner-product and orthogonality statistics against their definitions, the compiled
estimator against its NumPy twin iterate by iterate, batch growth (also on wide sparse data,
where the inner-product test alone stalls), linear convergence to 1e-6 relative excess, and
the driver's use of the ``sizes_batches`` / ``batch_gradient`` capabilities."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt import (
    LBFGS,
    Armijo,
    Fixed,
    Full,
    IncompatibleComponentsError,
    ProgressiveBatch,
    Solver,
)
from sqnopt.datasets import make_boxes, make_rcv1_like
from sqnopt.gradients.reference import ProgressiveBatchNumPy
from sqnopt.objectives import BinaryLogistic, LogLinear, LogLoss, Softmax, SquaredHinge
from sqnopt.objectives._loglinear_components import softmax_joint_features
from sqnopt.objectives.reference import LogLossNumPy
from sqnopt.registry import get_registry

from conftest import gaussian_classes


def _multiclass(n: int = 300, p: int = 6, k: int = 3, seed: int = 0):
    return gaussian_classes(n, p, k, seed)


def _bound(objective, X, y, theta=0.9, fit_intercept=False, nu=0.5):
    state = Solver(objective, fit_intercept=fit_intercept).init_state(X, y)
    kern = ProgressiveBatch(theta=theta, nu=nu).init(state.problem)
    kern.bind(state.objective)
    return state.objective, kern


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("objective,multi", [(LogLoss(lam=0.1), False),
                                             (SquaredHinge(lam=0.1), False),
                                             (BinaryLogistic(lam=0.1), False),
                                             (Softmax(lam=0.1), True)])
def test_rows_dot_is_the_transpose_of_rows_axpy(objective, multi, sparse) -> None:
    X, y = _multiclass() if multi else make_boxes(120, 5, random_state=1)
    k, _ = _bound(objective, sp.csr_matrix(X) if sparse else X, y)
    rng = np.random.default_rng(0)
    batch = np.array([3, 7, 7, 20, 41], dtype=np.intp)
    v = rng.normal(size=k.n_params)
    coef = rng.normal(size=(5, k.n_scores))
    u = k.rows_dot(batch, v)
    assert u.shape == (5, k.n_scores)
    out = np.zeros(k.n_params)
    k.rows_axpy(batch, coef, 1.0, out)
    # <sum_t sum_k coef_tk d score_k(x_t)/dw, v> = sum_t sum_k coef_tk score_k(x_t; v)
    assert float(out @ v) == pytest.approx(float(np.sum(coef * u)), rel=1e-12)


def _per_sample_gradients(k, w, batch):
    per = np.empty((len(batch), k.n_params))
    for t, i in enumerate(batch):
        k.gradient(w, np.array([i], dtype=np.intp), per[t])
    return per


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("objective,kind", [(LogLoss(lam=0.1), "binary"),
                                            (SquaredHinge(lam=0.1), "binary"),
                                            (BinaryLogistic(lam=0.1), "binary"),
                                            (Softmax(lam=0.1), "multi"),
                                            (LogLinear(n_outputs=3, lam=0.1), "joint")])
def test_rows_sqnorm_is_the_squared_norm_of_the_sample_gradients(objective, kind,
                                                                 sparse) -> None:
    """||sum_k c_k d score_k(x_i)/dw||^2 against the per-sample gradients formed densely: at
    the score derivatives of w they are the loss gradients, grad F_i - lam w_reg."""
    if kind == "binary":
        X, y = make_boxes(120, 5, random_state=1)
    else:
        X, y = _multiclass(120)
        if kind == "joint":
            X = softmax_joint_features(X, 3)
    X = sp.csr_matrix(X) if sparse else X
    fit_intercept = kind != "joint"
    k, _ = _bound(objective, X, y, fit_intercept=fit_intercept)
    rng = np.random.default_rng(2)
    w = rng.normal(size=k.n_params) * 0.3
    batch = np.array([3, 7, 7, 20, 41, 119], dtype=np.intp)
    coef, _ = k.score_derivatives(w, batch)
    q = k.rows_sqnorm(batch, coef)
    assert q.shape == (6,)
    reg = np.zeros(k.n_params)
    k.reg_gradient_value(w, reg)
    per = _per_sample_gradients(k, w, batch) - reg
    np.testing.assert_allclose(q, np.sum(per * per, axis=1), rtol=1e-12)
    with pytest.raises(ValueError, match="n_scores"):
        k.rows_sqnorm(batch, coef[:-1])
    with pytest.raises(IndexError, match="batch indices"):
        k.rows_sqnorm(np.array([120]), coef[:1])


@pytest.mark.parametrize("multi", [False, True])
def test_the_orthogonality_test_follows_its_definition(multi) -> None:
    """With a loose inner-product test the size asked for is ceil(Var_perp / (nu^2 ||g||^2))
    exactly when Var_perp / |B| > nu^2 ||g||^2, with Var_perp the sample variance of the parts
    of the per-sample gradients (regulariser included) orthogonal to g, formed densely here."""
    X, y = _multiclass(200) if multi else make_boxes(200, 5, random_state=3)
    obj = Softmax(lam=0.05) if multi else LogLoss(lam=0.05)
    nu = 0.3
    k, kern = _bound(obj, X, y, theta=1e6, fit_intercept=True, nu=nu)
    rng = np.random.default_rng(1)
    w = rng.normal(size=k.n_params) * 0.5
    batch = rng.choice(200, size=12, replace=False).astype(np.intp)
    g = np.zeros(k.n_params)
    kern.estimate(k, w, batch, g)
    per = _per_sample_gradients(k, w, batch)                 # grad F_i, regulariser included
    np.testing.assert_allclose(per.mean(axis=0), g, rtol=1e-12, atol=1e-14)
    gg = float(g @ g)
    perp = per - np.outer(per @ g / gg, g)                   # their mean is P g = 0
    var = np.sum(perp * perp) / (12 - 1)
    assert kern.last_ortho_ratio == pytest.approx(var / (12 * nu ** 2 * gg), rel=1e-9)
    assert kern.last_ratio < 1.0                             # the inner-product test passes
    expected = int(np.ceil(var / (nu ** 2 * gg)))
    assert var / 12 > nu ** 2 * gg and expected > 12         # this batch is too noisy at nu
    assert kern.size == min(expected, 200)
    # nu=None: the inner-product test alone, which passes here
    k2, alone = _bound(obj, X, y, theta=1e6, fit_intercept=True, nu=None)
    alone.estimate(k2, w, batch, g)
    assert alone.size == 0 and alone.n_tests == 1 and np.isnan(alone.last_ortho_ratio)


@pytest.mark.parametrize("multi", [False, True])
def test_the_inner_product_test_follows_its_definition(multi) -> None:
    """The estimate is s(w, B); the next size is ceil(Var_i(grad F_i' g) / (theta^2 ||g||^4))
    exactly when Var / |B| > theta^2 ||g||^4, with grad F_i the per-sample gradients computed
    densely here."""
    X, y = _multiclass(200) if multi else make_boxes(200, 5, random_state=3)
    obj = Softmax(lam=0.05) if multi else LogLoss(lam=0.05)
    k, kern = _bound(obj, X, y, theta=0.02, fit_intercept=True, nu=None)
    rng = np.random.default_rng(1)
    w = rng.normal(size=k.n_params) * 0.5
    batch = rng.choice(200, size=12, replace=False).astype(np.intp)
    g = np.zeros(k.n_params)
    f, extra = kern.estimate(k, w, batch, g)
    ref = np.zeros(k.n_params)
    assert f == pytest.approx(k.gradient(w, batch, ref), rel=1e-12)
    np.testing.assert_allclose(g, ref, rtol=1e-12, atol=1e-14)
    assert extra == 12 and kern.n_tests == 1
    per = np.empty((12, k.n_params))
    for t, i in enumerate(batch):
        k.gradient(w, np.array([i], dtype=np.intp), per[t])
    prods = per @ g
    var = np.var(prods, ddof=1)
    gg = float(g @ g)
    th2 = 0.02 ** 2
    assert kern.last_ratio == pytest.approx(var / (12 * th2 * gg ** 2), rel=1e-9)
    expected = int(np.ceil(var / (th2 * gg ** 2))) if var / 12 > th2 * gg ** 2 else 0
    assert expected > 12           # this point's batch is too noisy at theta = 0.02
    assert kern.size == min(expected, 200)
    assert kern.batch_size(5) == min(expected, 200)          # the schedule's size is a floor
    assert kern.batch_size(10_000) == 200                    # never more than N
    # a batch of the whole data set is not tested (nothing to grow)
    kern.estimate(k, w, np.arange(200), g)
    assert kern.n_tests == 1


def _runs(estimators, objective, X, y, n_iter=40, schedule=None, **kw):
    seq = np.random.default_rng(5).integers(0, X.shape[0], size=200_000).astype(np.intp)
    out = []
    for est in estimators:
        iterates: list[np.ndarray] = []
        sizes: list[int] = []

        def record(info, iterates=iterates, sizes=sizes) -> None:
            iterates.append(info.w.copy())
            sizes.append(info.n_samples)

        res = Solver(objective, LBFGS(memory=5), schedule or Fixed(4), Armijo(), gradient=est,
                     batch_sequence=seq, max_iter=n_iter, report_every=1,
                     callback=record, **kw).fit(X, y)
        assert res.n_iter == n_iter
        out.append((np.array(iterates), np.diff(sizes, prepend=0), res))
    return out


@pytest.mark.parametrize("theta,nu", [(0.05, None), (0.05, 0.5), (10.0, 0.2)])
@pytest.mark.parametrize("multi", [False, True])
def test_compiled_progressive_batching_matches_its_numpy_twin_iterate_by_iterate(
        multi, theta, nu) -> None:
    """Bit for bit, with the inner-product test alone, with both tests, and with the
    orthogonality test deciding (a loose inner-product test)."""
    X, y = _multiclass() if multi else make_boxes(300, 5, random_state=2)
    objective = Softmax(lam=0.02) if multi else LogLoss(lam=0.02)
    (a, sa, ra), (b, sb, rb) = _runs([ProgressiveBatch(theta=theta, nu=nu),
                                      ProgressiveBatchNumPy(theta=theta, nu=nu)],
                                     objective, X, y, fit_intercept=True)
    assert ra.compiled and not rb.compiled
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(sa, sb)
    assert sa[-1] > sa[0]                 # the batch grew, on both paths alike
    assert ra.n_estimator_samples == rb.n_estimator_samples > 0
    assert ra.n_pairs_accepted == rb.n_pairs_accepted > 0
    # the compiled path with a Python objective kernel in the loop gives the same iterates too
    (c, sc, rc), = _runs([ProgressiveBatch(theta=theta, nu=nu)], objective, X, y,
                         fit_intercept=True, path="python")
    assert not rc.compiled
    np.testing.assert_array_equal(a, c)


def test_the_batch_grows_on_a_noisy_problem_and_a_loose_test_keeps_the_schedules_size() -> None:
    X, y = make_boxes(2000, 10, random_state=4)
    grown = Solver(LogLoss(lam=1e-3), LBFGS(), Fixed(16), Armijo(), sampling="subset",
                   gradient=ProgressiveBatch(theta=0.3), max_iter=150, random_state=0)
    state = grown.init_state(X, y)
    grown.run(state)
    assert state.gradient.n_increases >= 3 and state.gradient.size > 16 * 8
    # loose tests (huge theta and nu) never ask for more: the schedule's size is kept
    loose = Solver(LogLoss(lam=1e-3), LBFGS(), Fixed(16), Armijo(), sampling="subset",
                   gradient=ProgressiveBatch(theta=1e3, nu=1e3), max_iter=50, random_state=0)
    res = loose.fit(X, y)
    assert res.n_samples == 50 * 16


def test_on_wide_sparse_data_the_orthogonality_test_grows_the_batch_the_other_test_keeps() -> None:
    """Sparse text-like data with five times more features than samples (the race's news20
    in small): the batch gradient's noise spreads over many directions, so the inner-product
    test passes on the first batch and the run stalls far from the optimum; the orthogonality
    test (nu < 1) sees the noise, the batch grows to N and the preset reaches 1e-6."""
    X, y = make_rcv1_like(2000, 10000, random_state=0)
    lam = 1.0 / 2000
    fstar = Solver(LogLoss(lam=lam), "lbfgs", Full(), Armijo(), gtol=1e-12,
                   max_iter=2000).fit(X, y).fun
    gaps, sizes = {}, {}
    for nu in (None, 0.5):
        solver = Solver.preset("progressive_lbfgs", lam=lam, nu=nu, batch_size=64,
                               random_state=0, gtol=None, max_iter=150)
        state = solver.init_state(X, y)
        res = solver.run(state)
        gaps[nu], sizes[nu] = (res.fun - fstar) / fstar, state.gradient.size
    assert gaps[None] > 1e-2 and sizes[None] < 2000 // 4
    assert gaps[0.5] <= 1e-6 and sizes[0.5] == 2000


def test_a_run_that_ends_at_its_budget_says_it_did_not_converge() -> None:
    X, y = make_rcv1_like(2000, 10000, random_state=0)
    res = Solver.preset("progressive_lbfgs", lam=1 / 2000, nu=None, batch_size=64,
                        random_state=0, max_iter=40, report_every=20).fit(X, y)
    assert not res.success and res.status.value == "max_iter"
    assert "not converged: gradient norm" in res.message and "gtol=1e-08" in res.message
    assert res.grad_norm > 1e-8
    res = Solver.preset("progressive_lbfgs", lam=1 / 2000, random_state=0, max_iter=5,
                        report_every=100).fit(X, y)
    assert "not converged: gtol=1e-08 was not met (no gradient tested)" in res.message
    assert "not converged" not in Solver.preset(
        "progressive_lbfgs", lam=1 / 2000, random_state=0, max_iter=5, gtol=None).fit(
        X, y).message


def test_progressive_lbfgs_converges_linearly_to_1e6_relative_excess() -> None:
    """On a strongly convex L2-logistic problem the batch grows to the whole data set and the
    excess falls geometrically to <= 1e-6 of the optimum, where the same composition on a
    fixed batch stalls at its noise floor."""
    X, y = make_boxes(3000, 12, random_state=5)
    lam = 1e-2
    fstar = Solver(LogLoss(lam=lam), "lbfgs", Full(), Armijo(), gtol=1e-12,
                   max_iter=500).fit(X, y).fun
    solver = Solver.preset("progressive_lbfgs", lam=lam, batch_size=32, random_state=0,
                           history_every=10, gtol=1e-9)
    res = solver.fit(X, y)
    assert res.success, res.message
    gap = (res.history.objective - fstar) / fstar
    assert gap[-1] <= 1e-6
    # geometric decrease: the last iterations' excess falls by orders of magnitude per
    # window once the batch is large (no noise floor)
    reached = np.flatnonzero(gap <= 1e-3)
    assert reached.size and gap[-1] <= 1e-3 * gap[reached[0]]
    fixed = Solver(LogLoss(lam=lam), LBFGS(), Fixed(32), Armijo(), sampling="subset",
                   max_samples=res.n_samples, random_state=0).fit(X, y)
    assert (fixed.fun - fstar) / fstar > 1e3 * max(gap[-1], 1e-12)


def test_full_batch_gradients_of_the_line_search_are_reused() -> None:
    """On whole-data batches the estimate is the full gradient, the line search's gradient at the
    accepted point is reused as the next iteration's (``batch_gradient``: one pass per trial, as
    with the plain minibatch gradient) and no test is run."""
    X, y = make_boxes(500, 5, random_state=6)
    runs = [Solver(LogLoss(lam=1e-2), LBFGS(), Full(), Armijo(), gradient=est,
                   max_iter=20).fit(X, y) for est in (ProgressiveBatch(), "minibatch")]
    np.testing.assert_array_equal(runs[0].w, runs[1].w)
    assert runs[0].n_reused_samples == runs[1].n_reused_samples >= (runs[0].n_iter - 1) * 500
    assert runs[0].n_estimator_samples == 0
    assert runs[0].effective_passes == runs[1].effective_passes


def test_progressive_batching_is_a_registered_component_that_refuses_what_cannot_work() -> None:
    assert "progressive" in get_registry().names("gradient")
    assert Solver(gradient="progressive").gradient == ProgressiveBatch()
    assert "progressive_lbfgs" in get_registry().preset_names()
    s = Solver.preset("progressive_lbfgs", lam=1e-3)
    assert s.gradient == ProgressiveBatch(0.2, nu=0.5) and s.step == Armijo()
    assert ProgressiveBatch().theta == 0.9                 # the paper's value
    assert ProgressiveBatch().nu == 0.5                    # below 1: see the docstring
    with pytest.raises(ValueError, match="theta"):
        ProgressiveBatch(theta=0)
    for bad in (0, -1.0, True, "1"):
        with pytest.raises(ValueError, match="nu must be a number > 0, or None"):
            ProgressiveBatch(nu=bad)
    with pytest.raises(IncompatibleComponentsError, match="weighted"):
        Solver(gradient="progressive", sampling="weighted")
    X, y = make_boxes(100, 3, random_state=0)
    with pytest.raises(IncompatibleComponentsError, match="linear_scores|cannot work"):
        Solver(LogLossNumPy(lam=0.1), gradient="progressive").fit(X, y)
    problem = Solver().init_state(X, y).problem
    assert ProgressiveBatch().memory_bytes(problem) == 8 * 3 * 100
    assert ProgressiveBatch(nu=None).memory_bytes(problem) == 8 * 2 * 100


def test_a_checkpointed_solve_resumes_with_the_batch_size_it_had(tmp_path) -> None:
    X, y = make_boxes(1000, 6, random_state=7)
    kw = dict(lam=1e-3, batch_size=16, theta=0.3, random_state=0, gtol=None)
    one = Solver.preset("progressive_lbfgs", **kw)
    state = one.init_state(X, y)
    one.run(state, max_iter=60)
    saved = state.gradient.get_state()
    assert saved["size"] > 16
    other = Solver.preset("progressive_lbfgs", **kw).init_state(X, y)
    other.gradient.set_state(saved)
    assert other.gradient.size == saved["size"]
    with pytest.raises(Exception, match="size"):
        other.gradient.set_state({**saved, "size": 10**6})
