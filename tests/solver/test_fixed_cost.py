"""What a fit does once, outside its iterations, and what may not be cut from it: the final
objective is computed when read (and equals the eager value), a non-finite iterate still ends
the run as diverged, and a fitted trainer forms no reference cycle (freed without the cyclic
collector, its training data with it)."""

from __future__ import annotations

import copy
import math
import dataclasses
import gc
import pickle
import weakref

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt import Constant, DivergenceWarning, Fixed, SQNClassifier, Solver, Status
from sqnopt.datasets import make_boxes
from sqnopt.solver._result import PendingObjective


def _hinge_objective(X: object, y: np.ndarray, w: np.ndarray, lam: float) -> float:
    margins = y * np.asarray(X @ w).ravel()
    return float(lam / 2 * w @ w + np.mean(np.maximum(0.0, 1.0 - margins)))


@pytest.mark.parametrize("sparse", [False, True])
def test_final_objective_is_computed_when_read_and_equals_the_eager_one(sparse: bool) -> None:
    X, y = make_boxes(300, 8, random_state=3)
    X = sp.csr_matrix(X) if sparse else X
    lam = 1e-2
    lazy = Solver.pegasos(lam, max_epochs=2, random_state=0).fit(X, y)
    # the run made no pass over the data for F(w): the result holds it pending
    assert isinstance(lazy.__dict__["fun"], PendingObjective)
    # the same run with a history evaluates F(w) at its end (the history's last point)
    eager = Solver.pegasos(lam, max_epochs=2, random_state=0, history_every=10**9).fit(X, y)
    assert isinstance(eager.__dict__["fun"], float)
    np.testing.assert_array_equal(lazy.w, eager.w)
    assert lazy.fun == eager.fun == eager.history.objective[-1]
    assert lazy.fun == pytest.approx(_hinge_objective(X, np.where(y > 0, 1.0, -1.0), lazy.w,
                                                      lam), rel=1e-12)
    # once read it is a plain float: the result no longer references the training data
    assert isinstance(lazy.__dict__["fun"], float)


def test_a_pending_objective_survives_copy_pickle_and_replace_and_stays_frozen() -> None:
    X, y = make_boxes(200, 5, random_state=0)

    def fresh() -> object:
        res = Solver.pegasos(1e-2, max_epochs=1, random_state=0).fit(X, y)
        assert isinstance(res.__dict__["fun"], PendingObjective)
        return res

    want = Solver.pegasos(1e-2, max_epochs=1, random_state=0).fit(X, y).fun
    assert pickle.loads(pickle.dumps(fresh())).fun == want
    assert copy.deepcopy(fresh()).fun == want
    assert copy.copy(fresh()).fun == want
    assert dataclasses.replace(fresh(), message="m").fun == want  # type: ignore[type-var]
    res = fresh()
    assert f"fun={want!r}" in repr(res)
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.fun = 1.0  # type: ignore[attr-defined]


def test_a_non_finite_iterate_at_the_end_of_a_run_is_still_divergence() -> None:
    """Without the final pass the end of a run checks the iterate itself: a non-finite one is
    never returned as a result that merely ran out of budget."""
    X, y = make_boxes(200, 4, random_state=0)
    solver = Solver("logloss", "identity", Fixed(5), Constant(0.1), random_state=0)
    state = solver.init_state(X, y)
    state.w[0] = np.inf               # as a blow-up no earlier check saw would leave it
    with np.errstate(all="ignore"), pytest.warns(DivergenceWarning,
                                                 match="iterate is non-finite at the end"):
        res = solver.run(state, max_iter=0)
    assert res.status is Status.DIVERGED and not res.success


def test_a_fitted_estimator_is_freed_without_the_cycle_collector() -> None:
    """The trainer's solvers call back into it through a weak reference: estimator, trainer,
    solver states and the data they hold go with the last reference, not at the next run of
    the cyclic garbage collector."""
    X, y = make_boxes(100, 4, random_state=0)
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        est = SQNClassifier(max_iter=2, tol=None, random_state=0).fit(X, y)
        trainer = weakref.ref(est._trainer)
        state = weakref.ref(est._trainer._states[0])
        del est
        assert trainer() is None and state() is None
        gc.collect()
        res = Solver.pegasos(1e-2, max_epochs=1, random_state=0).fit(X, y)
        assert gc.collect() == 0              # a bare solve leaves no cyclic garbage either
        assert np.isfinite(res.fun)
    finally:
        if was_enabled:
            gc.enable()


def test_fit_hands_its_iterate_to_the_result_and_run_still_copies() -> None:
    X, y = make_boxes(200, 5, random_state=0)
    res = Solver.pegasos(1e-2, max_epochs=1, random_state=0).fit(X, y)
    assert not res.w.flags.writeable
    # a state the caller holds keeps running: each result owns a copy of its iterate
    solver = Solver.pegasos(1e-2, random_state=0)
    state = solver.init_state(X, y)
    first = solver.run(state, max_epochs=1)
    kept = first.w.copy()
    second = solver.run(state, max_epochs=1)
    np.testing.assert_array_equal(first.w, kept)
    assert not np.array_equal(second.w, first.w) and not first.w.flags.writeable


def test_the_scaled_loop_allocates_no_generic_vectors_and_a_rebind_adds_them() -> None:
    X, y = make_boxes(300, 6, random_state=1)
    solver = Solver.pegasos(1e-2, random_state=0)
    state = solver.init_state(sp.csr_matrix(X), y)
    assert type(state.loop).__name__ == "ScaledLoop"
    assert "grad" not in state.buffers and "direction" not in state.buffers
    solver.run(state, max_epochs=1)
    solver.rebind(state, X, y)              # dense rows: the generic compiled loop
    assert type(state.loop).__name__ == "CompiledLoop"
    for name in ("w_next", "grad", "grad_next", "direction", "v", "r"):
        assert state.buffers[name].shape == (state.problem.n_params,)
    res = solver.run(state, max_epochs=1)
    assert res.status is Status.MAX_SAMPLES and np.all(np.isfinite(res.w))


def test_labels_outside_the_given_classes_are_still_named_sorted_and_unique() -> None:
    from sqnopt.data import encode_labels

    y = np.array([2, 7, 1, 7, 5, 1, 9, 2])
    with pytest.raises(ValueError, match=r"contains labels \[5, 7, 9\] not in classes=\[1, 2\]"):
        encode_labels(y, "binary", classes=[2, 1])
    enc, cls = encode_labels(np.array(["b", "a", "b"]), "binary", classes=["a", "b"])
    np.testing.assert_array_equal(enc, [1.0, -1.0, 1.0])
    np.testing.assert_array_equal(cls, ["a", "b"])


def test_an_immutable_component_keeps_its_description_and_a_changeable_one_does_not() -> None:
    from sqnopt import LBFGS, LogLoss

    c = LogLoss(lam=0.5)
    assert c.describe() == "logloss(lam=0.5)" and "_sqnopt_described" in vars(c)
    assert c.describe() == "logloss(lam=0.5)" and c == LogLoss(lam=0.5)
    assert dataclasses.replace(c, lam=0.25).describe() == "logloss(lam=0.25)"
    assert pickle.loads(pickle.dumps(c)).describe() == "logloss(lam=0.5)"
    assert hash(c) == hash(LogLoss(lam=0.5))
    # a setting of another type (here a NumPy scalar; in general possibly a mutable object)
    # is described afresh each time
    m = LogLoss(lam=np.float64(0.5))
    assert m.describe() == "logloss(lam=np.float64(0.5))" and "_sqnopt_described" not in vars(m)
    assert LBFGS().describe() == LBFGS().describe()


def test_an_iterate_too_large_to_square_at_the_end_of_a_run_is_divergence() -> None:
    """Finite entries whose squared norm overflows: F(w) would be infinite (its lam/2 ||w||^2
    term), as the eager final evaluation reported it; still DIVERGED."""
    X, y = make_boxes(200, 4, random_state=0)
    solver = Solver("logloss", "identity", Fixed(5), Constant(0.1), random_state=0)
    state = solver.init_state(X, y)
    state.w[:2] = 1e200
    with np.errstate(all="ignore"), pytest.warns(DivergenceWarning, match=r"\|\|w\|\|\^2 = inf"):
        res = solver.run(state, max_iter=0)
    assert res.status is Status.DIVERGED


def test_fit_leaves_the_objective_to_the_result_only_over_the_callers_own_data() -> None:
    """A pending F(w) keeps the data alive: fine for the caller's arrays (views, no copy),
    not for a copy the data layer made (a Fortran-ordered array, integer data, a COO matrix,
    the regularised intercept's extra column): those fits evaluate F(w) at their end."""
    X, y = make_boxes(200, 5, random_state=0)
    X = np.ascontiguousarray(X)

    def pending(Xin: object, **kw: object) -> bool:
        res = Solver.pegasos(1e-2, max_epochs=1, random_state=0, **kw).fit(Xin, y)
        return isinstance(res.__dict__["fun"], PendingObjective)

    assert pending(X) and pending(sp.csr_matrix(X))
    assert not pending(np.asfortranarray(X))
    assert not pending(np.round(10 * X).astype(np.int64))
    assert not pending(sp.coo_matrix(X))
    assert not pending(X, fit_intercept="regularized")
    # the same value either way
    a = Solver.pegasos(1e-2, max_epochs=1, random_state=0).fit(X, y)
    b = Solver.pegasos(1e-2, max_epochs=1, random_state=0).fit(np.asfortranarray(X), y)
    assert a.fun == b.fun


@pytest.mark.parametrize("sparse", [False, True], ids=["dense iterate", "scaled iterate"])
def test_a_run_leaving_f_to_its_result_still_ends_diverged_above_the_ceiling(sparse: bool
                                                                             ) -> None:
    """The monitor's windows hold minibatch objectives taken *before* each step, so a blow-up
    in the last steps is not in them: here (eps * lam = 2.1: the iterate grows by 1.1 per step
    from w0) the last window's mean stays below the ceiling while F at the end is 2.5 times it.
    A run that leaves F(w) to its result estimates it on a fixed probe of rows at the end, and a
    suspicious estimate is confirmed by the full pass: the run ends DIVERGED, not MAX_ITER."""
    X, y = make_boxes(300, 6, random_state=1)
    Xf = sp.csr_matrix(X) if sparse else X
    w0 = np.full(6, 3.0)
    solver = Solver(("logloss", {"lam": 1.0}), "identity", Fixed(10), Constant(2.1),
                    max_iter=12, report_every=1000, random_state=0)
    state = solver.init_state(Xf, y, w0=w0)
    assert type(state.loop).__name__ == ("ScaledLoop" if sparse else "CompiledLoop")
    f0 = float(state.objective.value(w0))
    limit = solver.monitor.limit(f0)  # type: ignore[union-attr]
    with pytest.warns(DivergenceWarning, match="at the end of the run"):
        res = solver.fit(Xf, y, w0=w0)
    assert res.status is Status.DIVERGED
    # the case is the one described: without the monitor the run ends above the ceiling, and
    # the mean minibatch objective of its window is below it
    quiet = Solver(("logloss", {"lam": 1.0}), "identity", Fixed(10), Constant(2.1),
                   max_iter=12, report_every=1000, random_state=0, monitor=None)
    st = quiet.init_state(Xf, y, w0=w0)
    end = quiet.run(st)
    assert end.status is Status.MAX_ITER and end.fun > 2 * limit
    assert st.counters.loss_sum / st.counters.n_loss < limit


def test_the_end_of_run_estimate_makes_no_pass_over_the_data_on_healthy_runs(monkeypatch
                                                                           ) -> None:
    """Pegasos' hot path keeps its lazy F(w): the end-of-run estimate reads a fixed probe of
    rows, and only a suspicious one is confirmed by a full pass; with the projection (the
    default), whose ball bounds every iterate, there is nothing to estimate."""
    from sqnopt.solver._run import _PROBE_ROWS, _Runner

    X, y = make_boxes(2000, 8, random_state=3)
    passes: list[int] = []
    probes: list[int] = []
    real_eval = _Runner._evaluate
    real_probe = _Runner._end_estimate

    def counting_eval(self: object, state: object, **kw: object) -> object:
        passes.append(1)
        return real_eval(self, state, **kw)  # type: ignore[arg-type]

    def counting_probe(state: object, w: object) -> float:
        probes.append(1)
        return real_probe(state, w)  # type: ignore[arg-type]

    monkeypatch.setattr(_Runner, "_evaluate", counting_eval)
    monkeypatch.setattr(_Runner, "_end_estimate", staticmethod(counting_probe))
    res = Solver.pegasos(1e-3, project=False, max_epochs=2, random_state=0).fit(
        sp.csr_matrix(X), y)
    assert res.status is Status.MAX_SAMPLES
    assert isinstance(res.__dict__["fun"], PendingObjective)
    assert probes == [1] and passes == []
    assert _PROBE_ROWS < X.shape[0]
    res = Solver.pegasos(1e-3, max_epochs=2, random_state=0).fit(sp.csr_matrix(X), y)
    assert isinstance(res.__dict__["fun"], PendingObjective)
    assert probes == [1] and passes == []


@pytest.mark.parametrize("name, classes", [("logloss", 2), ("hinge", 2), ("squared_hinge", 2),
                                           ("binary_logistic", 2), ("softmax", 3)])
@pytest.mark.parametrize("sparse", [False, True])
def test_batch_value_is_the_minibatch_objective_the_gradient_returns(name: str, classes: int,
                                                                     sparse: bool) -> None:
    """The end-of-run probe reads ``batch_value``: the minibatch objective without a gradient
    vector (margin losses: from the rows' margins and the regulariser; other kernels: through
    the gradient into scratch). It equals what ``gradient`` returns, up to rounding."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 7))
    y = rng.integers(0, classes, size=80)
    solver = Solver((name, {"lam": 0.3}), fit_intercept=True, random_state=0)
    state = solver.init_state(sp.csr_matrix(X) if sparse else X, y)
    kernel = state.objective
    w = rng.normal(size=state.problem.n_params)
    batch = np.array([0, 5, 5, 17, 79], dtype=np.intp)
    want = kernel.gradient(w, batch, np.empty_like(w))
    assert kernel.batch_value(w, batch) == pytest.approx(want, rel=1e-13)  # type: ignore[attr-defined]
    with pytest.raises(IndexError):
        kernel.batch_value(w, np.array([80], dtype=np.intp))  # type: ignore[attr-defined]


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("name", ["lbfgs", "newton"])
def test_a_full_batch_run_records_its_own_last_evaluation_of_the_objective(
        name: str, sparse: bool) -> None:
    # the history's last point and the result's fun come from the loop's full-batch
    # evaluation at the final iterate (no further pass): F(w) there, to rounding
    X, y = make_boxes(300, 8, random_state=2)
    X = sp.csr_matrix(X) if sparse else X
    if name == "newton":
        from sqnopt import Full, LogLoss, Newton, ScoreLine

        solver = Solver(LogLoss(lam=1e-2), Newton(), Full(), ScoreLine(), history_every=1)
    else:
        solver = Solver.preset("lbfgs", lam=1e-2, history_every=1)
    state = solver.init_state(X, y)
    res = solver.run(state, max_iter=4)
    known = state.loop.known_objective(state.objective)
    assert math.isfinite(known)
    assert res.fun == known == res.history.objective[-1]
    assert known == pytest.approx(float(state.objective.value(res.w)), rel=1e-14)
    # another objective, an iterate written from outside: unknown, evaluated as before
    other = solver.init_state(X, y).objective
    assert math.isnan(state.loop.known_objective(other))
    state.w[0] += 1.0
    assert math.isnan(state.loop.known_objective(state.objective))


def test_a_minibatch_run_knows_no_full_objective() -> None:
    X, y = make_boxes(300, 8, random_state=2)
    solver = Solver.preset("sgd", lam=1e-2, batch_size=10, history_every=5, random_state=0)
    state = solver.init_state(X, y)
    res = solver.run(state, max_iter=20)
    assert math.isnan(state.loop.known_objective(state.objective))
    assert res.fun == float(state.objective.value(res.w))


def test_the_repr_of_a_result_is_one_short_line_without_the_weights() -> None:
    """A result's repr names the status, F, the counters and the parameters' shape; the weight
    vector (which may hold millions of entries) is not printed."""
    X = np.random.default_rng(0).normal(size=(300, 2000))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    res = Solver.pegasos(1e-2, max_epochs=1, random_state=0).fit(X, y)
    text = repr(res)
    assert "\n" not in text and len(text) < 400
    assert f"status='{res.status.value}'" in text and f"fun={res.fun!r}" in text
    assert f"n_iter={res.n_iter}" in text and "w=<2000 float64>" in text
    assert "array(" not in text and "history" not in text
