"""The divergence monitor: every registered curvature model, made to diverge on purpose, stops
with ``Status.DIVERGED``, a warning naming cause and fix, and the best iterate seen before."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from sqnopt import (
    Constant,
    DivergenceMonitor,
    DivergenceWarning,
    Fixed,
    Full,
    Solver,
    Status,
)
from sqnopt.datasets import make_boxes
from sqnopt.interfaces import CurvatureModel, Objective
from sqnopt.recipes import adapt_objective
from sqnopt.registry import get_registry
from sqnopt.solver._solver import resolve_component


def _diverging_solver(name: str) -> Solver:
    """``name`` with a constant step of 1e4 on logistic regression: every model's first steps
    already leave the data's scale (the identity's step is 1e4 times its stable size; secant and
    bound models' unit steps are Newton steps, here multiplied by 1e4; AdaGrad moves each weight
    by up to 1e4), so the objective rises by orders of magnitude within a few iterations."""
    model = resolve_component("curvature", name, CurvatureModel)
    objective = adapt_objective(resolve_component("objective", ("logloss", {"lam": 1e-3}),
                                                  Objective), model.requires)
    schedule = Full() if model.needs_curvature_batch else Fixed(20)
    return Solver(objective, model, schedule, Constant(1e4), max_iter=300, random_state=0,
                  report_every=1, history_every=1,
                  monitor=DivergenceMonitor(warmup=0))


@pytest.mark.parametrize("name", get_registry().names("curvature"))
def test_every_curvature_model_diverging_on_purpose_is_stopped(name: str) -> None:
    X, y = make_boxes(300, 6, random_state=1)
    seen: dict[int, np.ndarray] = {}
    solver = _diverging_solver(name)
    solver.callbacks = (lambda info: seen.__setitem__(info.iteration, info.w.copy()),)
    with np.errstate(all="ignore"), pytest.warns(DivergenceWarning) as record:
        res = solver.fit(X, y)
    assert res.status is Status.DIVERGED and not res.success
    msg = str(record[0].message)
    assert "diverged at iteration" in msg and "Returned the best iterate" in msg
    assert "Fix:" in msg or "use a safeguarded" in msg
    # the returned weights are the best iterate the monitor saw: with a check (and a history
    # point) after every iteration, the recorded iterate of lowest objective before the stop
    h = res.history
    before = h.iteration[:-1]                 # the last row is the diverged run's final record
    best_t = int(before[np.argmin(h.objective[:-1])])
    expected = np.zeros_like(res.w) if best_t == 0 else seen[best_t]
    np.testing.assert_array_equal(res.w, expected)
    assert np.isfinite(res.fun) and res.fun == pytest.approx(np.min(h.objective[:-1]))
    assert res.fun <= h.objective[0] + 1e-12          # never worse than where it started


@pytest.mark.parametrize("name", get_registry().names("gradient"))
def test_every_gradient_estimator_diverging_on_purpose_is_stopped(name: str) -> None:
    """The monitor stops a run that a constant step of 1e4 blows up, whichever estimator gives
    the gradient (variance-reduced, progressively batched): DIVERGED, the best iterate seen."""
    X, y = make_boxes(300, 6, random_state=1)
    solver = Solver(("logloss", {"lam": 1e-3}), "identity", Fixed(20), Constant(1e4),
                    gradient=name, max_iter=300, random_state=0, report_every=1,
                    history_every=1, monitor=DivergenceMonitor(warmup=0))
    with np.errstate(all="ignore"), pytest.warns(DivergenceWarning) as record:
        res = solver.fit(X, y)
    assert res.status is Status.DIVERGED and not res.success
    assert "diverged at iteration" in str(record[0].message)
    h = res.history
    assert np.isfinite(res.fun) and res.fun == pytest.approx(np.min(h.objective[:-1]))
    assert res.fun <= h.objective[0] + 1e-12


def test_a_diverged_state_cannot_be_continued() -> None:
    X, y = make_boxes(200, 4, random_state=0)
    solver = Solver("logloss", "identity", Fixed(5), Constant(1e6), max_iter=200,
                    random_state=0)
    state = solver.init_state(1e3 * X, y)
    with np.errstate(all="ignore"), pytest.warns(DivergenceWarning):
        res = solver.run(state)
    assert res.status is Status.DIVERGED and state.diverged
    with pytest.raises(ValueError, match="cannot be continued"):
        solver.run(state)


def test_monitor_catches_a_finite_blow_up_and_leaves_healthy_runs_alone() -> None:
    X, y = make_boxes(500, 5, random_state=2)
    # eps * lam = 3: w <- (1 - 3) w + ... doubles every step, a finite blow-up caught at the
    # ceiling long before it overflows
    with pytest.warns(DivergenceWarning, match="rose to"):
        res = Solver(("logloss", {"lam": 1.0}), "identity", Fixed(5), Constant(3.0),
                     max_epochs=5, report_every=50, random_state=0).fit(X, y)
    assert res.status is Status.DIVERGED
    # Pegasos' wild first steps (1/lam) are not divergence, nor SGD's noise on small data
    with warnings.catch_warnings():
        warnings.simplefilter("error", DivergenceWarning)
        ok = Solver.pegasos(1e-3, max_epochs=5, report_every=10, random_state=0).fit(X, y)
        assert ok.status is Status.MAX_SAMPLES
        ok = Solver("logloss", "identity", Fixed(1), Constant(0.5), max_epochs=20,
                    report_every=5, random_state=0).fit(X[:60], y[:60])
        assert ok.status is Status.MAX_SAMPLES


def test_monitor_settings_are_validated_and_it_can_be_disabled() -> None:
    for bad in (dict(ceiling=0.0), dict(patience=0), dict(rise=-1.0), dict(warmup=-1),
                dict(rise=20.0)):
        with pytest.raises(ValueError, match="DivergenceMonitor"):
            DivergenceMonitor(**bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="monitor"):
        Solver(monitor="on")  # type: ignore[arg-type]
    X, y = make_boxes(300, 4, random_state=0)
    # without the monitor a finite blow-up runs to its budget (non-finite values still stop it)
    res = Solver(("logloss", {"lam": 1.0}), "identity", Fixed(5), Constant(3.0), max_iter=30,
                 monitor=None, random_state=0).fit(X, y)
    assert res.status is Status.MAX_ITER and res.fun > 1e6


def test_best_iterate_copies_are_amortised_over_the_work_between_checks(monkeypatch) -> None:
    """At checks with only the minibatch estimate, the monitor copies the best iterate once the
    steps since its last copy touched ``KEEP_WORK * n_params`` stored values: one-sample steps on
    wide sparse data, checked every 20 iterations while the objective falls steadily, copy a few
    times, not at each of the 100 checks; a diverged run still returns a kept iterate, never
    worse than the start."""
    import scipy.sparse as sp

    from sqnopt.solver import _monitor

    rng = np.random.default_rng(0)
    n, d = 400, 2000
    X = sp.random(n, d, density=0.005, format="csr", random_state=1)   # ~10 values per row
    y = np.where(X @ rng.normal(size=d) > 0, 1, -1)
    copies: list[int] = []
    keep = _monitor.MonitorState.keep

    def counting_keep(self, estimate, w, iteration, samples=0):  # type: ignore[no-untyped-def]
        before = self.best_iteration
        keep(self, estimate, w, iteration, samples)
        if self.best_iteration != before or iteration == 0:
            copies.append(samples)

    monkeypatch.setattr(_monitor.MonitorState, "keep", counting_keep)
    iters = 2000
    res = Solver(("logloss", {"lam": 1e-3}), "identity", Fixed(1), Constant(0.5), max_iter=iters,
                 report_every=20, random_state=0).fit(X, y)
    assert res.status is Status.MAX_ITER and res.fun < 0.9 * np.log(2.0)
    per_sample = X.nnz / n
    assert _monitor.KEEP_WORK == 8.0
    assert 1 <= len(copies) <= 1 + iters * per_sample / (8.0 * d)
    assert all(b - a >= 8.0 * d / per_sample for a, b in zip(copies, copies[1:]))
    # the same amortised copies when it diverges: a returned iterate no worse than w = 0
    with np.errstate(all="ignore"), pytest.warns(DivergenceWarning):
        bad = Solver(("logloss", {"lam": 1.0}), "identity", Fixed(1), Constant(3.0),
                     max_iter=iters, report_every=20, random_state=0).fit(X, y)
    assert bad.status is Status.DIVERGED
    assert np.isfinite(bad.fun) and bad.fun <= np.log(2.0) + 1e-12


def test_a_variance_reduced_run_whose_steps_turn_unstable_warns():
    # SVRG's constant step far above 1/L_max (here L_max ~ 470): the objective falls, then
    # wanders well above its lowest value without ever exceeding F(w0) -- not a divergence,
    # but not the linear convergence a stable step gives either
    from sqnopt import InstabilityWarning

    X, y = make_boxes(500, 5, random_state=0)
    X = X * 30.0
    kw = dict(lam=1e-3, max_epochs=30, random_state=0, history_every=250)
    with pytest.warns(InstabilityWarning, match="unstable"):
        res = Solver.preset("svrg", eta=0.1, **kw).fit(X, y)
    assert res.status is Status.MAX_SAMPLES
    good = Solver.preset("svrg", eta=0.01, **kw).fit(X, y)     # stable: no warning
    assert good.fun < res.fun
    # records are what the test reads: without history there is nothing to compare
    Solver.preset("svrg", eta=0.1, **{**kw, "history_every": None}).fit(X, y)
