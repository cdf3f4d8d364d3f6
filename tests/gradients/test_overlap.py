"""Overlapping batches (sqnopt.gradients.OverlapBatch) and the multi-batch L-BFGS preset: the
arranged batches and the curvature pair against their definitions, the compiled estimator
against its NumPy twin iterate by iterate, pairs that cost no gradient evaluation, and linear
convergence on a strongly convex problem with growing batches."""

from __future__ import annotations

import numpy as np
import pytest

from sqnopt import (
    LBFGS,
    Armijo,
    Fixed,
    Full,
    Geometric,
    IncompatibleComponentsError,
    OverlapBatch,
    Solver,
)
from sqnopt.datasets import make_boxes
from sqnopt.gradients.reference import OverlapBatchNumPy
from sqnopt.objectives import LogLoss, Softmax
from sqnopt.objectives.reference import LogLossNumPy
from sqnopt.registry import get_registry

from conftest import gaussian_classes


def _dense_gradient(k, w, idx):
    g = np.zeros(k.n_params)
    k.gradient(w, np.asarray(idx, dtype=np.intp), g)
    return g


@pytest.mark.parametrize("multi", [False, True])
def test_arranged_batches_and_the_pair_follow_their_definitions(multi) -> None:
    """The second batch starts with the last floor(overlap |S_1|) samples of the first; the
    estimate is the batch gradient; the pair is (w_2 - w_1, grad F_O(w_2) - grad F_O(w_1)) on
    those shared samples (regulariser included); the first estimate has no pair."""
    X, y = gaussian_classes(200, 5, 3, 0) if multi else make_boxes(200, 5, random_state=3)
    obj = Softmax(lam=0.05) if multi else LogLoss(lam=0.05)
    state = Solver(obj, fit_intercept=True).init_state(X, y)
    k = state.objective
    kern = OverlapBatch(overlap=0.25).init(state.problem)
    kern.bind(k)
    rng = np.random.default_rng(1)
    n = k.n_params
    w1, w2 = rng.normal(size=n) * 0.5, rng.normal(size=n) * 0.5
    s1 = kern.arrange(rng.choice(200, size=20, replace=False))
    g = np.zeros(n)
    kern.estimate(k, w1, s1, g)
    np.testing.assert_allclose(g, _dense_gradient(k, w1, s1), rtol=1e-12, atol=1e-14)
    v, r = np.zeros(n), np.zeros(n)
    assert not kern.pair(w1, v, r)                 # nothing before the first step
    kept = s1[-5:]                                 # floor(0.25 * 20)
    assert kern.n_overlap == 5
    fresh = rng.choice(200, size=24, replace=False)
    s2 = kern.arrange(fresh)
    np.testing.assert_array_equal(s2[:5], kept)
    np.testing.assert_array_equal(s2[5:], fresh[5:])
    f, extra = kern.estimate(k, w2, s2, g)
    assert extra == 0
    np.testing.assert_allclose(g, _dense_gradient(k, w2, s2), rtol=1e-12, atol=1e-14)
    assert kern.pair(w2, v, r) and kern.n_pairs == 1
    np.testing.assert_array_equal(v, w2 - w1)
    np.testing.assert_allclose(r, _dense_gradient(k, w2, kept) - _dense_gradient(k, w1, kept),
                               rtol=1e-10, atol=1e-13)
    assert not kern.pair(w2, v, r)                 # one pair per estimate
    # a batch that was not arranged (here: the whole data set after a smaller one) evaluates
    # the kept samples separately and counts them
    kept = s2[-6:]                                 # floor(0.25 * 24)
    w3 = rng.normal(size=n) * 0.5
    everyone = kern.arrange(np.arange(200))
    np.testing.assert_array_equal(everyone, np.arange(200))
    _, extra = kern.estimate(k, w3, everyone, g)
    assert extra == 6 and kern.pair(w3, v, r)
    np.testing.assert_allclose(r, _dense_gradient(k, w3, kept) - _dense_gradient(k, w2, kept),
                               rtol=1e-10, atol=1e-13)
    # whole after whole: the pair of full-batch L-BFGS
    w4 = rng.normal(size=n) * 0.5
    _, extra = kern.estimate(k, w4, kern.arrange(np.arange(200)), g)
    assert extra == 0 and kern.pair(w4, v, r)
    np.testing.assert_allclose(r, _dense_gradient(k, w4, np.arange(200))
                               - _dense_gradient(k, w3, np.arange(200)), rtol=1e-10, atol=1e-13)


def _iterates(est, objective, X, y, schedule, n_iter=18, **kw):
    iterates: list[np.ndarray] = []

    def record(info) -> None:
        iterates.append(info.w.copy())

    res = Solver(objective, LBFGS(memory=5), schedule, Armijo(), gradient=est,
                 sampling="subset", random_state=3, max_iter=n_iter, report_every=1,
                 callback=record, fit_intercept=True, gtol=None, **kw).fit(X, y)
    assert res.n_iter == n_iter
    return np.array(iterates), res


@pytest.mark.parametrize("schedule", [Fixed(16), Geometric(b1=16, rate=1.3)])
@pytest.mark.parametrize("multi", [False, True])
def test_compiled_overlapping_batches_match_their_numpy_twin_iterate_by_iterate(
        multi, schedule) -> None:
    """Bit for bit, on fixed batches and on batches growing to the whole data set (through
    the switch from arranged to whole batches), on both loop paths."""
    X, y = gaussian_classes(300, 6, 3, 0) if multi else make_boxes(300, 5, random_state=2)
    objective = Softmax(lam=0.02) if multi else LogLoss(lam=0.02)
    a, ra = _iterates(OverlapBatch(0.25), objective, X, y, schedule)
    b, rb = _iterates(OverlapBatchNumPy(0.25), objective, X, y, schedule)
    assert ra.compiled and not rb.compiled
    np.testing.assert_array_equal(a, b)
    assert ra.n_pairs_accepted == rb.n_pairs_accepted > 10
    assert ra.n_estimator_samples == rb.n_estimator_samples
    if isinstance(schedule, Geometric):     # the switch to whole batches evaluated O once
        assert ra.n_estimator_samples > 0
    c, rc = _iterates(OverlapBatch(0.25), objective, X, y, schedule, path="python")
    assert not rc.compiled
    np.testing.assert_array_equal(a, c)


def test_pairs_cost_no_gradient_evaluation() -> None:
    """The driver forms no secant pair of its own: the samples touched are the batches' and the
    line search's only (plain L-BFGS on the same batches evaluates each batch again at the new
    iterate)."""
    X, y = make_boxes(500, 5, random_state=6)
    res = Solver(LogLoss(lam=1e-2), LBFGS(), Fixed(50), Armijo(), gradient=OverlapBatch(),
                 sampling="subset", random_state=0, max_iter=30).fit(X, y)
    assert res.n_secant_samples == 0 and res.n_estimator_samples == 0
    assert res.n_pairs_accepted + res.n_pairs_skipped == 29     # one per step after the first
    assert res.n_pairs_accepted > 0
    assert res.effective_passes == pytest.approx(
        (res.n_samples + res.n_search_samples) / 500, rel=1e-12)
    # with a constant step (no line search) each iteration touches its batch once
    res = Solver(LogLoss(lam=1e-2), LBFGS(), Fixed(50), "constant", gradient=OverlapBatch(),
                 sampling="subset", random_state=0, max_iter=30).fit(X, y)
    assert res.effective_passes == pytest.approx(30 * 50 / 500, rel=1e-12)
    assert res.n_pairs_accepted + res.n_pairs_skipped == 29


def test_multibatch_lbfgs_converges_linearly_to_1e6_relative_excess() -> None:
    """Strongly convex L2-logistic: with batches growing geometrically to N the excess falls
    geometrically to <= 1e-6 of the optimum; with whole batches from the start it is full-batch
    L-BFGS (Armijo) and converges as fast."""
    X, y = make_boxes(3000, 12, random_state=5)
    lam = 1e-2
    fstar = Solver(LogLoss(lam=lam), "lbfgs", Full(), Armijo(), gtol=1e-12,
                   max_iter=500).fit(X, y).fun
    for kw in ({"batch_size": 32, "growth": 1.3}, {"schedule": Full()}):
        res = Solver.preset("multibatch_lbfgs", lam=lam, random_state=0, history_every=5,
                            gtol=1e-9, **kw).fit(X, y)
        assert res.success, res.message
        gap = (res.history.objective - fstar) / fstar
        assert gap[-1] <= 1e-6
        reached = np.flatnonzero(gap <= 1e-3)
        assert reached.size and gap[-1] <= 1e-3 * gap[reached[0]]
        assert res.n_pairs_accepted > 0 and res.n_secant_samples == 0


def test_overlapping_batches_are_a_registered_component_that_refuses_what_cannot_work(
        tmp_path) -> None:
    assert "overlap" in get_registry().names("gradient")
    assert Solver(gradient="multibatch").gradient == OverlapBatch()
    assert "multibatch_lbfgs" in get_registry().preset_names()
    for bad in (0, 0.6, -0.1, True):
        with pytest.raises(ValueError, match=r"overlap must be a number in \(0, 0.5\]"):
            OverlapBatch(overlap=bad)
    X, y = make_boxes(100, 3, random_state=0)
    with pytest.raises(IncompatibleComponentsError, match="linear_scores|cannot work"):
        Solver(LogLossNumPy(lam=0.1), gradient="overlap").fit(X, y)
    # checkpoint: a resumed solve continues with the kept samples and their gradient
    s = Solver.preset("multibatch_lbfgs", lam=1e-3)
    assert s.gradient == OverlapBatch(0.5) and s.step == Armijo()
    assert s.schedule == Geometric(b1=512.0, rate=2.0)
    kw = dict(lam=1e-3, batch_size=16, growth=1.0, overlap=0.25, random_state=0, gtol=None)
    one = Solver.preset("multibatch_lbfgs", **kw)
    state = one.init_state(X, y)
    one.run(state, max_iter=7)
    saved = state.gradient.get_state()
    assert saved["ov"].shape == (4,) and saved["have_prev"]
    other = Solver.preset("multibatch_lbfgs", **kw).init_state(X, y)
    other.gradient.set_state(saved)
    assert other.gradient.n_overlap == 4 and other.gradient.get_state()["n_pairs"] == 6
    with pytest.raises(Exception, match="ov"):
        other.gradient.set_state({**saved, "ov": np.array([10**6])})


@pytest.mark.parametrize("schedule", [Fixed(16), Geometric(b1=16, rate=1.5)])
def test_a_checkpointed_multibatch_solve_continues_with_the_same_iterates(schedule) -> None:
    """Checkpoint after k iterations, restore into a new solver, run m more: the iterates and
    pairs are those of the uninterrupted run (the kept samples, their gradient at the last
    iterate and that iterate are the estimator's state)."""
    X, y = make_boxes(300, 5, random_state=4)

    def make():
        return Solver(LogLoss(lam=1e-2), LBFGS(memory=4), schedule, Armijo(),
                      gradient=OverlapBatch(0.25), sampling="subset", random_state=1,
                      gtol=None)

    for k in (1, 7):
        ref_solver = make()
        ref = ref_solver.init_state(X, y)
        ref_solver.run(ref, max_iter=k)
        ref_res = ref_solver.run(ref, max_iter=8)
        first = make()
        st = first.init_state(X, y)
        first.run(st, max_iter=k)
        ck = st.checkpoint()
        resumed_solver = make()
        resumed = resumed_solver.restore(ck, X, y)
        res = resumed_solver.run(resumed, max_iter=8)
        np.testing.assert_array_equal(res.w, ref_res.w)
        assert res.n_pairs_accepted == ref_res.n_pairs_accepted > 0
