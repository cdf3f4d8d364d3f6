"""The generic driver: paths, reference twins, seeds, stopping rules, divergence, history."""

from __future__ import annotations

import math

import warnings
from typing import Any

import numpy as np
import pytest

from sqnopt import (
    Constant,
    Decaying,
    DivergenceWarning,
    Fixed,
    Full,
    Geometric,
    Hinge,
    Identity,
    IncompatibleComponentsError,
    L2Ball,
    LBFGS,
    Linear,
    LogLoss,
    PegasosStep,
    Solver,
    SquaredHinge,
    Status,
)
from sqnopt.curvature.reference import IdentityNumPy
from sqnopt.datasets import make_boxes
from sqnopt.objectives.reference import LogLossNumPy, SquaredHingeNumPy
from sqnopt.schedules.reference import FixedNumPy, LinearNumPy
from sqnopt.steps.reference import ConstantNumPy, DecayingNumPy

from conftest import as_format


def trace(solver: Solver, X: object, y: np.ndarray, **fit_kwargs: object) -> tuple[np.ndarray, object]:
    """Run with a callback after every iteration; return the iterates and the result."""
    iterates: list[np.ndarray] = []
    solver.report_every = 1
    solver.callbacks = (lambda info: iterates.append(info.w.copy()),)
    result = solver.fit(X, y, **fit_kwargs)
    return np.array(iterates), result


@pytest.mark.parametrize("fmt,dtype", [("dense", np.float64), ("csr", np.float32)])
@pytest.mark.parametrize("objective", [SquaredHinge(lam=1e-3), LogLoss(lam=1e-2)])
@pytest.mark.parametrize("extras", [{}, {"fit_intercept": True, "average": 5,
                                         "projection": L2Ball(2.0), "schedule": Linear(2, 0.5, 7)}])
def test_compiled_and_python_paths_give_identical_iterates(boxes, fmt, dtype, objective, extras):
    X, y = boxes
    Xf = as_format(X, fmt, dtype)
    kw = dict(schedule=Fixed(4), step=Decaying(0.5, 10)) | extras
    # path="generic": the scaled loop (chosen by "auto" here) agrees only up to rounding
    a, ra = trace(Solver(objective, Identity(), random_state=3, max_iter=60, path="generic", **kw),
                  Xf, y)
    b, rb = trace(Solver(objective, Identity(), random_state=3, max_iter=60, path="python", **kw),
                  Xf, y)
    assert ra.compiled and not rb.compiled
    assert a.shape == (60, X.shape[1] + int(kw.get("fit_intercept", False)))
    np.testing.assert_array_equal(a, b)
    assert ra.fun == rb.fun and ra.n_samples == rb.n_samples and ra.n_grad_evals == rb.n_grad_evals


@pytest.mark.parametrize("compiled,twin", [
    ((SquaredHinge(lam=1e-3), Identity(), Fixed(5), Decaying(0.3, 20)),
     (SquaredHingeNumPy(lam=1e-3), IdentityNumPy(), FixedNumPy(5), DecayingNumPy(0.3, 20))),
    ((LogLoss(lam=1e-2), Identity(), Linear(1, 0.7, 9), Constant(0.2)),
     (LogLossNumPy(lam=1e-2), IdentityNumPy(), LinearNumPy(1, 0.7, 9), ConstantNumPy(0.2))),
])
@pytest.mark.parametrize("fmt,dtype", [("dense", np.float64), ("dense", np.float32),
                                       ("csr", np.float64), ("csr", np.float32)])
def test_compiled_components_match_numpy_twins_iterate_by_iterate(boxes, compiled, twin, fmt, dtype):
    X, y = boxes
    Xf = as_format(X, fmt, dtype)
    seq = np.random.default_rng(7).integers(0, X.shape[0], 2000)
    a, ra = trace(Solver(*compiled, batch_sequence=seq, max_iter=150, fit_intercept=True), Xf, y)
    b, rb = trace(Solver(*twin, batch_sequence=seq, max_iter=150, fit_intercept=True), Xf, y)
    assert ra.compiled and not rb.compiled
    np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    assert ra.fun == pytest.approx(rb.fun, rel=1e-10)


def test_solver_matches_a_naive_sgd_loop(boxes):
    """An independent 10-line SGD on the squared hinge, same injected batches."""
    X, y = boxes
    lam, eps0, T0, L = 1e-3, 0.3, 20.0, 5
    seq = np.random.default_rng(8).integers(0, X.shape[0], 100 * L)
    w = np.zeros(X.shape[1])
    for t in range(100):
        idx = seq[t * L:(t + 1) * L]
        m = y[idx] * (X[idx] @ w)
        g = X[idx].T @ (-2.0 * np.maximum(0.0, 1.0 - m) * y[idx]) / L + lam * w
        w = w - eps0 * T0 / (T0 + t) * g
    res = Solver(SquaredHinge(lam), Identity(), Fixed(L), Decaying(eps0, T0), batch_sequence=seq,
                 max_iter=100).fit(X, y)
    np.testing.assert_allclose(res.w, w, rtol=1e-11, atol=1e-13)
    assert res.status is Status.MAX_ITER and res.n_samples == 100 * L


def test_same_seed_same_result_different_seed_different(boxes):
    X, y = boxes
    for sampling in ("uniform", "shuffle", "weighted"):
        mk = lambda seed: Solver("logloss", "identity", Fixed(3), Decaying(0.5, 10),  # noqa: E731
                                 sampling=sampling, random_state=seed, max_iter=50)
        sw = np.linspace(0.5, 2.0, X.shape[0])
        r1, r2, r3 = (mk(s).fit(X, y, sample_weight=sw) for s in (11, 11, 12))
        np.testing.assert_array_equal(r1.w, r2.w)
        assert not np.array_equal(r1.w, r3.w)
    gen = np.random.default_rng(5)
    a = Solver(max_iter=20, random_state=np.random.default_rng(5)).fit(X, y)
    b = Solver(max_iter=20, random_state=gen).fit(X, y)
    np.testing.assert_array_equal(a.w, b.w)


def test_shuffle_sampling_visits_every_sample_once_per_epoch(boxes):
    X, y = boxes
    n = X.shape[0]
    solver = Solver(sampling="shuffle", schedule=Fixed(8), max_iter=n // 8, random_state=0)
    state = solver.init_state(X, y)
    draws = [state.sampler.draw(8) for _ in range(n // 8)]
    seen = np.concatenate(draws).tolist()
    assert sorted(seen) == list(range(n))


@pytest.mark.parametrize("n", [3, 7, 1000, 2**33 + 1])
def test_uniform_and_subset_sampling_are_uniform(n):
    """Chi-square goodness of fit of the bounded-integer draws (Lemire's multiply-shift method),
    and the range and halves for an n above 2**32, where a 32-bit shortcut would show."""
    from scipy.stats import chisquare

    from sqnopt.solver._sampler import SubsetSampler, UniformSampler

    for cls in (UniformSampler, SubsetSampler):
        s = cls(n, np.random.PCG64(3)) if n < 10**6 else None
        if s is None:       # a huge n: check the top and bottom halves and the range only
            s = UniformSampler(n, np.random.PCG64(3))
            d = s.draw(200_000)
            assert d.min() >= 0 and d.max() < n
            assert abs(np.mean(d < n // 2) - 0.5) < 5e-3
            break
        size = min(n - 1, 500)
        d = np.concatenate([s.draw(size) for _ in range(400_000 // size)])
        counts = np.bincount(d, minlength=n)
        assert counts.shape == (n,)
        assert chisquare(counts).pvalue > 1e-4


def test_a_request_of_all_samples_or_more_is_the_full_batch():
    from sqnopt.solver._sampler import ShuffleSampler, UniformSampler

    for cls in (UniformSampler, ShuffleSampler):
        s = cls(10, np.random.PCG64(0))
        np.testing.assert_array_equal(s.draw(10), np.arange(10))
        np.testing.assert_array_equal(s.draw(25), np.arange(10))


def test_weighted_sampling_frequencies():
    from sqnopt.solver._sampler import WeightedSampler

    p = np.array([1.0, 2.0, 3.0, 4.0, 0.0])
    s = WeightedSampler(5, np.random.PCG64(0), p)
    counts = np.bincount(s.draw(200_000), minlength=5) / 200_000
    np.testing.assert_allclose(counts, p / p.sum(), atol=4e-3)
    assert counts[4] == 0


def test_stopping_rules(boxes):
    X, y = boxes
    base = dict(schedule=Fixed(4), step=Decaying(0.5, 10), random_state=0)
    r = Solver(max_iter=37, **base).fit(X, y)
    assert r.status is Status.MAX_ITER and r.n_iter == 37 and r.n_samples == 148
    r = Solver(max_samples=101, **base).fit(X, y)
    assert r.status is Status.MAX_SAMPLES and r.n_samples == 104
    r = Solver(max_epochs=2, **base).fit(X, y)
    assert r.status is Status.MAX_SAMPLES and r.n_samples == 2 * X.shape[0]
    r = Solver(**base).fit(X, y)  # default budget: 10 epochs
    assert r.n_samples == 10 * X.shape[0]
    r = Solver(max_time=1e-4, report_every=1, **base).fit(X, y)
    assert r.status is Status.MAX_TIME and r.wall_time >= 1e-4
    f_end = Solver(max_iter=400, **base).fit(X, y).fun
    r = Solver(max_iter=10_000, target_objective=1.5 * f_end, report_every=5, **base).fit(X, y)
    assert r.status is Status.TARGET_OBJECTIVE and r.fun <= 1.5 * f_end and r.n_iter % 5 == 0
    r = Solver("logloss", "identity", "full", Constant(2.0), gtol=1e-3, max_iter=5000,
               report_every=10).fit(X, y)
    assert r.status is Status.GTOL and r.status.converged
    r = Solver(max_iter=100, report_every=7,
               callback=lambda info: info.iteration >= 14, **base).fit(X, y)
    assert r.status is Status.CALLBACK and r.n_iter == 14

    def stop(info):
        raise StopIteration

    r = Solver(max_iter=100, report_every=3, callback=stop, **base).fit(X, y)
    assert r.status is Status.CALLBACK and r.n_iter == 3
    r = Solver(batch_sequence=np.arange(10), max_iter=100, **base).fit(X, y)
    assert r.status is Status.SEQUENCE_EXHAUSTED and r.n_iter == 2 and not r.success


def test_run_continues_a_state(boxes):
    X, y = boxes
    solver = Solver(schedule=Fixed(4), step=Decaying(0.5, 10), random_state=0, max_iter=30)
    one = solver.fit(X, y)
    solver.max_iter = 10
    state = solver.init_state(X, y)
    for _ in range(3):
        last = solver.run(state)
    np.testing.assert_array_equal(last.w, one.w)
    assert last.n_iter == 30 and last.n_samples == 120
    more = solver.run(state, max_iter=5)
    assert more.n_iter == 35


def test_divergence_stops_with_a_diagnostic(boxes):
    X, y = boxes
    solver = Solver(SquaredHinge(lam=1e-3), Identity(), Fixed(5), Constant(1e6), max_iter=1000,
                    random_state=0)
    with pytest.warns(DivergenceWarning, match=r"diverged at iteration \d+.*smaller step"):
        res = solver.fit(X * 1e3, y)
    assert res.status is Status.DIVERGED and not res.success
    assert np.all(np.isfinite(res.w)) and np.isfinite(res.fun)


@pytest.mark.parametrize("case", ["finite", "nonfinite_loss", "nonfinite_iterate"])
def test_direction_buffer_and_diagnostic_agree_between_paths(boxes, case):
    """The compiled loop steps along the identity's gradient without copying it into the
    direction buffer; the buffer must still end as in the Python loop (the last step's
    direction), including after a stop on a non-finite minibatch objective, where the
    divergence diagnostic reads it."""
    X, y = boxes
    scale, step = {"finite": (1.0, Decaying(2e-2, 100)), "nonfinite_loss": (1e3, Constant(1e6)),
                   "nonfinite_iterate": (10.0, Constant(1e308))}[case]
    out = []
    for path in ("compiled", "python"):
        solver = Solver(SquaredHinge(lam=1e-3), Identity(), Fixed(5), step, max_iter=37,
                        random_state=0, path=path)
        state = solver.init_state(X * scale, y)
        with np.errstate(all="ignore"), warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            res = solver.run(state)
        msg = res.message if res.status is Status.DIVERGED else "finished"
        out.append((msg, state.buffers["direction"].copy(), state.t))
    assert out[0][0] == out[1][0] and out[0][2] == out[1][2]
    np.testing.assert_array_equal(out[0][1], out[1][1])
    assert np.all(np.isfinite(out[0][1])) and np.any(out[0][1] != 0)
    expect = {"finite": "finished", "nonfinite_loss": "minibatch objective became non-finite",
              "nonfinite_iterate": "the iterate became non-finite"}[case]
    assert expect in out[0][0]


@pytest.mark.parametrize("path", ["compiled", "python"])
def test_full_batch_secant_gradient_is_reused(boxes, path):
    """With the same batch in consecutive iterations (Full(): the whole set in index order), the
    secant gradient s(w_{t+1}, B_t) is the next iteration's gradient: it is reused, also across
    run() calls, and the iterates equal a hand-written loop that evaluates every gradient."""
    X, y = boxes
    N = X.shape[0]
    solver = Solver(LogLoss(lam=1e-3), LBFGS(memory=5), Full(), Constant(0.5), random_state=0,
                    path=path)
    state = solver.init_state(X, y)
    solver.run(state, max_iter=5)
    r = solver.run(state, max_iter=7)
    ref = solver.init_state(X, y)          # fresh kernels, driven by hand
    obj, curv = ref.objective, ref.curvature
    batch = np.arange(N, dtype=np.intp)
    w = np.zeros(obj.n_params)
    g, g_next, d = np.zeros_like(w), np.zeros_like(w), np.zeros_like(w)
    for _ in range(12):
        obj.gradient(w, batch, g)
        curv.direction(g, d)
        w_next = np.empty_like(w)
        np.subtract(w, 0.5 * d, out=w_next)
        obj.gradient(w_next, batch, g_next)
        curv.update_pair(w_next - w, g_next - g)
        w = w_next
    np.testing.assert_array_equal(r.w, w)
    assert r.n_iter == 12 and r.n_samples == 12 * N and r.n_secant_samples == 12 * N
    assert r.n_grad_evals == 13 and r.n_reused_samples == 11 * N
    assert r.effective_passes == pytest.approx(13.0)
    state.w[0] += 1e-3                     # w changed between runs: no reuse
    again = solver.run(state, max_iter=1)
    assert again.n_grad_evals == 15 and again.n_reused_samples == 11 * N
    s = Solver(curvature=LBFGS(memory=5), schedule=Fixed(5), max_iter=20, random_state=0,
               path=path).fit(X, y)
    assert s.n_reused_samples == 0 and s.n_grad_evals == 40


def test_history_cadence_and_eval_time_excluded(boxes):
    X, y = boxes
    r = Solver(schedule=Fixed(5), max_iter=100, history_every=25, random_state=0).fit(X, y)
    np.testing.assert_array_equal(r.history.iteration, [0, 25, 50, 75, 100])
    np.testing.assert_array_equal(r.history.samples, [0, 125, 250, 375, 500])
    np.testing.assert_allclose(r.history.effective_passes, r.history.samples / X.shape[0])
    assert r.history.objective[-1] == r.fun and np.all(np.diff(r.history.time) >= 0)
    assert r.eval_time > 0
    assert np.all(np.isnan(r.history.grad_norm))
    r = Solver(schedule=Fixed(5), max_iter=100, history_every=[3, 10, 64], record_grad_norm=True,
               random_state=0).fit(X, y)
    np.testing.assert_array_equal(r.history.iteration, [0, 3, 10, 64, 100])
    assert np.all(np.isfinite(r.history.grad_norm))
    assert len(r.history) == 5 and set(r.history.as_dict()) >= {"objective", "samples"}


def test_averaging_reports_the_polyak_ruppert_mean(boxes):
    X, y = boxes
    ws = []
    s = Solver(schedule=Fixed(5), max_iter=40, report_every=1, random_state=0,
               callback=lambda info: ws.append(info.w.copy()))
    s.fit(X, y)
    avg = Solver(schedule=Fixed(5), max_iter=40, average=10, random_state=0).fit(X, y)
    np.testing.assert_allclose(avg.w, np.mean(ws[10:], axis=0), rtol=1e-12)


def test_intercept_and_coef_split(boxes):
    X, y = boxes
    r = Solver(fit_intercept=True, max_iter=50, random_state=0).fit(X + 3.0, y)
    assert r.coef.shape == (X.shape[1],) and isinstance(r.intercept, float)
    np.testing.assert_array_equal(np.append(r.coef, r.intercept), r.w)
    assert r.intercept != 0.0
    with pytest.raises(ValueError, match="read-only"):
        r.w[0] = 1.0


def test_incompatible_components_fail_at_construction():
    with pytest.raises(IncompatibleComponentsError, match=r"step pegasos\(\).*strongly_convex.*hinge"):
        Solver(Hinge(lam=0.0), Identity(), Fixed(1), PegasosStep())
    with pytest.raises(IncompatibleComponentsError, match="curvature_schedule"):
        Solver(curvature_schedule=Fixed(3))


def test_bad_solver_arguments_are_named():
    for kwargs, match in [({"max_iter": -1}, "max_iter"), ({"report_every": 0}, "report_every"),
                          ({"sampling": "bogus"}, "sampling"), ({"path": "fast"}, "path"),
                          ({"average": -2}, "average"), ({"history_every": [1.5]}, "history_every"),
                          ({"max_time": math.nan}, "max_time")]:
        with pytest.raises(ValueError, match=match):
            Solver(**kwargs)
    with pytest.raises(TypeError, match="expected a CurvatureModel"):
        Solver(curvature=SquaredHinge())
    with pytest.raises(ValueError, match="Fixed: size"):
        Fixed(0)
    with pytest.raises(ValueError, match="w0 has 3 entries"):
        Solver(max_iter=1).fit(np.eye(4), [0, 1, 0, 1], w0=np.zeros(3))
    with pytest.raises(ValueError, match="path='compiled'"):
        Solver(SquaredHingeNumPy(), path="compiled", max_iter=1).fit(np.eye(4), [0, 1, 0, 1])


def test_pure_python_kernel_must_implement_the_protocol():
    from sqnopt.interfaces import StepRule

    class Broken(StepRule):
        name = "broken"

        def init(self, problem):
            return object()

    with pytest.raises(TypeError, match="does not implement StepKernelLike"):
        Solver(step=Broken(), max_iter=1).fit(np.eye(4), [0, 1, 0, 1])


def test_paper003_synthetic_problem_is_solved():
    """Must-show of issue 2: n = 100 boxes, squared hinge, Identity + Decaying."""
    from sqnopt.datasets import make_boxes

    X, y = make_boxes(10_000, 100, random_state=0)
    r = Solver(SquaredHinge(lam=1e-4), "identity", Fixed(5), Decaying(2e-2, 100),
               max_samples=40_000, random_state=0).fit(X, y)
    assert r.compiled and r.fun < 1e-3  # F(0) = 1
    assert np.mean(np.sign(X @ r.coef) == y) > 0.99


@pytest.mark.parametrize("sampling", ["uniform", "shuffle"])
def test_full_batch_is_exact_gradient_descent(boxes, sampling):
    """A batch of N samples is every sample once (no draws), so Full() gives plain GD."""
    X, y = boxes
    lam, eps = 1e-2, 0.5
    kernel = LogLoss(lam=lam).init(__import__("sqnopt").data.prepare(X, y))
    w = np.zeros(X.shape[1])
    g = np.empty_like(w)
    for _ in range(20):
        kernel.full_gradient(w, g)
        w = w - eps * g
    res = Solver(LogLoss(lam=lam), "identity", "full", Constant(eps), sampling=sampling,
                 max_iter=20, random_state=0).fit(X, y)
    np.testing.assert_allclose(res.w, w, rtol=1e-12, atol=1e-14)
    assert res.n_samples == 20 * X.shape[0]


def test_blas_threads_are_limited_while_running(boxes):
    threadpoolctl = pytest.importorskip("threadpoolctl")
    X, y = boxes
    seen: list[set[int]] = []

    def spy(info):
        seen.append({d["num_threads"] for d in threadpoolctl.threadpool_info()
                     if d["user_api"] == "blas"})

    Solver(max_iter=3, report_every=1, callback=spy, random_state=0).fit(X, y)
    assert seen and all(s <= {1} for s in seen)
    with pytest.raises(ValueError, match="blas_threads"):
        Solver(blas_threads=0)


@pytest.mark.parametrize("path", ["compiled", "python"])
def test_effective_passes_count_the_secant_gradient(boxes, path):
    """A secant model evaluates a second gradient on every batch: its effective passes count
    the batch twice (``n_samples`` stays the papers' Lt, one count per batch)."""
    X, y = boxes
    r = Solver(curvature=LBFGS(memory=5), schedule=Linear(2, 1.0), max_iter=30,
               history_every=10, random_state=0, path=path).fit(X, y)
    sizes = [min(X.shape[0], 2 + (k - 1)) for k in range(1, 31)]   # Linear(2, 1.0)
    assert r.n_samples == sum(sizes) and r.n_secant_samples == sum(sizes)
    assert r.n_grad_evals == 60
    assert r.effective_passes == pytest.approx(2 * sum(sizes) / X.shape[0])
    np.testing.assert_allclose(r.history.effective_passes, 2 * r.history.samples / X.shape[0])
    s = Solver(schedule=Fixed(5), max_iter=10, random_state=0, path=path).fit(X, y)
    assert s.n_secant_samples == 0 and s.effective_passes == pytest.approx(50 / X.shape[0])


@pytest.mark.parametrize("schedule", [Fixed(2**63), Linear(b1=2**64, cap=2**70),
                                      Geometric(b1=1e30, cap=2**80)])
def test_batch_sizes_beyond_any_data_set_act_as_the_data_set(schedule: Any) -> None:
    """Batch sizes clip to N, however large the integer (2**63 overflowed the compiled
    kernel's size type: found by the long fuzz profile)."""
    X, y = make_boxes(40, 3, random_state=0)
    res = Solver(SquaredHinge(lam=1e-2), Identity(), schedule, Constant(eps=0.1),
                 random_state=0, max_iter=3).fit(X, y)
    assert res.n_samples == 3 * 40


@pytest.mark.parametrize("fit", ["Solver", "SQNClassifier", "SQNClassifier-l1", "SQNRegressor",
                                 "solve_composite"])
def test_blas_threads_are_limited_for_the_whole_fit(monkeypatch: pytest.MonkeyPatch,
                                                    fit: str) -> None:
    """The validation's BLAS call (the sum of squares over the stored values) already runs on
    one BLAS thread: OpenBLAS's workers, woken by a threaded call there, would spin through
    the run on the cores the passes' threads need. The user's setting is back afterwards."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from sqnopt import SQNClassifier, SQNRegressor
    from sqnopt.composite import solve_composite
    from sqnopt.data import _dataset

    def blas_threads() -> set[int]:
        return {d["num_threads"] for d in threadpoolctl.threadpool_info()
                if d["user_api"] == "blas"}

    seen: list[set[int]] = []
    inner = _dataset._squares_finite

    def spy(*args: Any, **kwargs: Any) -> bool:
        seen.append(blas_threads())
        return inner(*args, **kwargs)

    monkeypatch.setattr(_dataset, "_squares_finite", spy)
    X, y = make_boxes(200, 5, random_state=0)
    with threadpoolctl.threadpool_limits(2, user_api="blas"):
        before = blas_threads()
        if not before or max(before) < 2:
            pytest.skip("this BLAS runs one thread: nothing to limit")
        if fit == "Solver":
            Solver(max_iter=3, random_state=0).fit(X, y)
        elif fit == "SQNClassifier":
            SQNClassifier().fit(X, y)
        elif fit == "SQNClassifier-l1":
            SQNClassifier(penalty="l1").fit(X, y)
        elif fit == "SQNRegressor":
            SQNRegressor().fit(X, y.astype(float))
        else:
            solve_composite("logistic", "l1", X, y)
        assert seen and all(s == {1} for s in seen)
        assert blas_threads() == before


def test_a_dense_fit_does_not_depend_on_the_callers_blas_threads() -> None:
    """The BLAS products of a dense fit's set-up (before the run) split over the caller's BLAS
    threads would round differently on one and on two; under the whole-fit limit the
    coefficients are the same bits whatever the caller set."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from sqnopt import SQNClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 150))
    y = np.argmax(X @ rng.normal(size=(150, 4)) + rng.gumbel(size=(3000, 4)), axis=1)
    coefs = []
    for limit in (1, 2):
        with threadpoolctl.threadpool_limits(limit, user_api="blas"):
            if limit == 2 and max(d["num_threads"] for d in threadpoolctl.threadpool_info()
                                  if d["user_api"] == "blas") < 2:
                pytest.skip("this BLAS runs one thread: nothing to compare")
            coefs.append(SQNClassifier(random_state=0).fit(X, y).coef_)
    np.testing.assert_array_equal(coefs[0], coefs[1])
