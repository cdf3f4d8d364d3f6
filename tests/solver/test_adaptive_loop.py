"""AdaGrad's composite form and its just-in-time iterate (:mod:`sqnopt.solver._adaptive_loop`)
against the dense composite step (the generic loops) and the NumPy twins, iterate by iterate;
extreme margins, divergence, step changes, checkpoints, rebinding, and the build's choices."""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt import (
    SAGA,
    Armijo,
    Constant,
    Decaying,
    DivergenceWarning,
    Fixed,
    Geometric,
    Hinge,
    L2Ball,
    LogLoss,
    Solver,
    SquaredHinge,
    Status,
)
from sqnopt.curvature import AdaGrad, AdaGradKernel
from sqnopt.curvature.reference import AdaGradNumPy
from sqnopt.interfaces import Problem
from sqnopt.objectives import LogLinear, Softmax
from sqnopt.objectives.reference import (
    HingeNumPy,
    LogLossNumPy,
    SoftmaxNumPy,
    SquaredHingeNumPy,
)
from sqnopt.solver import IncompatibleComponentsError
from sqnopt.solver._adaptive_loop import AdaptiveLoop
from sqnopt.solver._loop import CompiledLoop
from sqnopt.solver._pyloop import PythonLoop

LAM = 1e-2
TWINS: dict[str, tuple[Any, Any]] = {
    "logloss": (LogLoss(lam=LAM), LogLossNumPy(lam=LAM)),
    "hinge": (Hinge(lam=LAM), HingeNumPy(lam=LAM)),
    "sqhinge": (SquaredHinge(lam=LAM), SquaredHingeNumPy(lam=LAM)),
    "softmax": (Softmax(lam=LAM), SoftmaxNumPy(lam=LAM)),
}


def _data(kind: str, fmt: str, dtype: type = np.float64, N: int = 120, n: int = 40,
          seed: int = 0) -> tuple[Any, np.ndarray]:
    """Sparse rows (about 4 entries among ``n``), as CSR (``"csr"``; ``"csr64"``: int64
    indices) or dense; labels +-1, or 0..3 for softmax."""
    rng = np.random.default_rng(seed)
    X = sp.random(N, n, density=0.1, random_state=seed, format="csr",
                  data_rvs=lambda k: rng.normal(size=k)).astype(dtype)
    y = rng.integers(0, 4, size=N).astype(float) if kind == "softmax" else \
        np.where(rng.random(N) < 0.4, 1.0, -1.0)
    if fmt == "dense":
        return X.toarray(), y
    if fmt == "csr64":
        X.indices = X.indices.astype(np.int64)
        X.indptr = X.indptr.astype(np.int64)
    return X, y


def _iterates(objective: Any, curvature: Any, X: Any, y: Any, seq: np.ndarray, *,
              size: int = 1, step: Any = None, path: str = "auto", fit_intercept: bool = True,
              sample_weight: Any = None, **kw: Any) -> tuple[np.ndarray, Any, Any]:
    """The iterate after every step (``report_every=1``: the lazy representation is synced at
    each, which must not change it), the result and the state."""
    ws: list[np.ndarray] = []
    solver = Solver(objective=objective, curvature=curvature, schedule=Fixed(size),
                    step=step if step is not None else Constant(0.5),
                    fit_intercept=fit_intercept, batch_sequence=seq,
                    max_iter=len(seq) // size, report_every=1, path=path,  # type: ignore[arg-type]
                    callback=lambda info: ws.append(np.array(info.w)), **kw)
    state = solver.init_state(X, y, sample_weight)
    result = solver.run(state)
    return np.array(ws), result, state


#: (storage, values, batch size, intercept): every storage with both value types, both batch
#: paths (one row: entry by entry; more: summed first) and both intercept settings
VARIANTS = [("csr", np.float64, 1, True), ("csr", np.float32, 4, False),
            ("csr64", np.float64, 4, True), ("csr64", np.float32, 1, False),
            ("dense", np.float64, 1, False), ("dense", np.float32, 4, True)]


@pytest.mark.parametrize("kind", sorted(TWINS))
@pytest.mark.parametrize("fmt, dtype, size, fit_intercept", VARIANTS)
def test_matches_numpy_twin_iterate_by_iterate(kind: str, fmt: str, dtype: type, size: int,
                                               fit_intercept: bool) -> None:
    X, y = _data(kind, fmt, dtype)
    seq = np.random.default_rng(1).integers(0, X.shape[0], size=320)
    compiled, twin = TWINS[kind]
    w1, r1, s1 = _iterates(compiled, AdaGrad(composite=True), X, y, seq, size=size,
                           fit_intercept=fit_intercept)
    w2, r2, s2 = _iterates(twin, AdaGradNumPy(composite=True), X, y, seq, size=size,
                           fit_intercept=fit_intercept)
    assert isinstance(s1.loop, AdaptiveLoop) and isinstance(s2.loop, PythonLoop)
    assert w1.shape == w2.shape == (320 // size, r1.w.shape[0])
    np.testing.assert_allclose(w1, w2, rtol=0, atol=1e-12)
    np.testing.assert_allclose(s1.curvature.accumulator, s2.curvature.accumulator, rtol=1e-12)
    assert r1.progressive_loss == pytest.approx(r2.progressive_loss, rel=1e-13)
    assert r1.progressive_weight == r2.progressive_weight == 320.0
    assert r1.n_samples == r2.n_samples == 320


@pytest.mark.parametrize("kind", ["logloss", "softmax"])
def test_generic_compiled_and_python_loops_identical(kind: str) -> None:
    """The dense composite step: the compiled generic loop and the Python loop, bit for bit;
    the kernel's compiled step and its NumPy twin's, bit for bit too."""
    X, y = _data(kind, "csr")
    seq = np.random.default_rng(2).integers(0, X.shape[0], size=300)
    compiled, twin = TWINS[kind]
    w1, r1, s1 = _iterates(compiled, AdaGrad(composite=True), X, y, seq, path="generic")
    w2, r2, _ = _iterates(compiled, AdaGrad(composite=True), X, y, seq, path="python")
    w3, r3, _ = _iterates(compiled, AdaGradNumPy(composite=True), X, y, seq)
    assert type(s1.loop) is CompiledLoop
    np.testing.assert_array_equal(w1, w2)
    np.testing.assert_array_equal(w1, w3)
    assert r1.progressive_loss == r2.progressive_loss == r3.progressive_loss


def test_long_untouched_stretches() -> None:
    """A feature read at the first step and then only thousands of steps later: the pending
    shrink of every step in between is one factor, equal to the dense path's product (which
    syncs at every step show along the way)."""
    rng = np.random.default_rng(3)
    N, n = 60, 30
    X = sp.lil_matrix((N, n))
    for i in range(N):
        for j in rng.choice(np.arange(1, n), size=3, replace=False):
            X[i, j] = rng.normal()
    X[0, 0] = 2.0           # feature 0: in row 0 only
    X = X.tocsr()
    y = np.where(rng.random(N) < 0.5, 1.0, -1.0)
    seq = np.concatenate([[0], rng.integers(1, N, size=1500), [0, 0]])
    objective = LogLoss(lam=0.05)
    w1, _, s1 = _iterates(objective, AdaGrad(composite=True), X, y, seq, step=Constant(2.0))
    w2, _, _ = _iterates(LogLossNumPy(lam=0.05), AdaGradNumPy(composite=True), X, y, seq,
                         step=Constant(2.0))
    assert isinstance(s1.loop, AdaptiveLoop)
    # the untouched stretch shrank feature 0 by many orders of magnitude, as the dense steps do
    assert abs(w1[-3, 0]) < 1e-3 * abs(w1[0, 0])
    np.testing.assert_allclose(w1[:, 0], w2[:, 0], rtol=1e-11, atol=0)
    np.testing.assert_allclose(w1, w2, rtol=0, atol=1e-12)


def test_step_changes_bring_everything_up_to_date() -> None:
    """Any step rule: each change of the step brings every coordinate up to date first (an
    O(n) catch-up, counted), so a decaying step matches the dense path; a constant step pays
    the catch-up once."""
    X, y = _data("logloss", "csr")
    seq = np.random.default_rng(4).integers(0, X.shape[0], size=500)
    step = Decaying(eps0=1.0, T0=20)
    w1, _, s1 = _iterates(LogLoss(lam=LAM), AdaGrad(composite=True), X, y, seq, step=step)
    w2, _, _ = _iterates(LogLossNumPy(lam=LAM), AdaGradNumPy(composite=True), X, y, seq,
                         step=step)
    np.testing.assert_allclose(w1, w2, rtol=0, atol=1e-12)
    assert s1.loop.n_catchups == 500
    _, _, s3 = _iterates(LogLoss(lam=LAM), AdaGrad(composite=True), X, y, seq)
    assert s3.loop.n_catchups == 1 and s3.loop.eta == 0.5 and s3.loop.clock == 500


def test_growing_batches() -> None:
    """Batches growing to the whole data set (the scratch for the batch's scores grows with
    them): the same iterates as the dense path."""
    X, y = _data("softmax", "csr", N=60)
    ws: dict[str, np.ndarray] = {}
    for name, objective, curvature in (
            ("compiled", Softmax(lam=LAM), AdaGrad(composite=True)),
            ("twin", SoftmaxNumPy(lam=LAM), AdaGradNumPy(composite=True))):
        out: list[np.ndarray] = []
        solver = Solver(objective=objective, curvature=curvature,
                        schedule=Geometric(b1=1.0, rate=1.5), step=Constant(0.5),
                        fit_intercept=True, sampling="shuffle", random_state=4, max_iter=14,
                        report_every=1, callback=lambda info, out=out: out.append(info.w.copy()))
        state = solver.init_state(X, y)
        solver.run(state)
        ws[name] = np.array(out)
        if name == "compiled":
            assert isinstance(state.loop, AdaptiveLoop)
            assert state.counters.n_samples > 3 * X.shape[0]
    np.testing.assert_allclose(ws["compiled"], ws["twin"], rtol=0, atol=1e-12)


def test_sample_weights_and_zero_lambda() -> None:
    X, y = _data("logloss", "csr")
    sw = np.random.default_rng(5).uniform(0.2, 3.0, size=X.shape[0])
    seq = np.random.default_rng(6).integers(0, X.shape[0], size=300)
    for lam in (0.0, LAM):
        w1, r1, _ = _iterates(LogLoss(lam=lam), AdaGrad(composite=True), X, y, seq,
                              sample_weight=sw)
        w2, r2, _ = _iterates(LogLossNumPy(lam=lam), AdaGradNumPy(composite=True), X, y, seq,
                              sample_weight=sw)
        np.testing.assert_allclose(w1, w2, rtol=0, atol=1e-12)
        gw = sw * X.shape[0] / sw.sum()
        assert r1.progressive_weight == pytest.approx(gw[seq].sum(), rel=1e-12)
        assert r1.progressive_loss == pytest.approx(r2.progressive_loss, rel=1e-13)


def test_composite_kernel_step_is_the_closed_form() -> None:
    """``cy_composite_step`` against the formula: the loss gradient taken back out of the
    objective's gradient, ``G += g_l^2``, ``(s w - eps g_l) / (s + eps lam_j)``, intercepts
    unregularised; the plain form's description is unchanged."""
    problem = Problem(n_samples=10, n_features=3, dim=4, n_blocks=2, n_params=8, lam=0.3,
                      fit_intercept=True, capabilities=frozenset())
    kernel = AdaGrad(delta=1e-3, initial_accumulator=0.5, composite=True).init(problem)
    assert isinstance(kernel, AdaGradKernel)
    assert kernel.composite_step and kernel.adagrad_accumulator
    np.testing.assert_array_equal(kernel.regularized, [1, 1, 1, 0, 1, 1, 1, 0])
    rng = np.random.default_rng(7)
    w, g, G = rng.normal(size=8), rng.normal(size=8), np.full(8, 0.5)
    lam_j = 0.3 * kernel.regularized
    for eps in (0.1, 2.0):
        out = np.empty(8)
        assert kernel.composite_update(w, g, eps, out) == 0
        gl = g - lam_j * w
        G = G + gl * gl
        s = 1e-3 + np.sqrt(G)
        np.testing.assert_allclose(out, (s * w - eps * gl) / (s + eps * lam_j), rtol=1e-15)
        np.testing.assert_allclose(kernel.accumulator, G, rtol=1e-15)
        w = out
    # a non-finite step changes nothing
    before = kernel.accumulator
    assert kernel.composite_update(w, np.full(8, 1e200), 1.0, np.empty(8)) == -1
    np.testing.assert_array_equal(kernel.accumulator, before)
    assert AdaGrad().describe() == "adagrad(delta=1e-08, initial_accumulator=0.0)"
    assert "composite=True" in AdaGrad(composite=True).describe()
    assert not AdaGrad().init(problem).composite_step
    with pytest.raises(TypeError, match="composite"):
        AdaGrad().init(problem).composite_update(w, g, 0.1, np.empty(8))
    with pytest.raises(ValueError, match="composite"):
        AdaGrad(composite=1)  # type: ignore[arg-type]


def test_extreme_margins_stay_finite() -> None:
    """Rows of huge values: margins of 1e6 and more, on both sides; the logistic loss and its
    derivative are evaluated stably, the progressive loss is finite and every step keeps the
    iterate finite (|w_{t+1,j} - w_{t,j}| <= eta on touched coordinates). (Such steps raise the
    objective far above F(w_0): the divergence monitor is off.)"""
    rng = np.random.default_rng(8)
    N, n = 40, 20
    X = sp.random(N, n, density=0.3, random_state=8, format="csr")
    X.data = rng.choice([-1.0, 1.0], size=X.nnz) * 10.0 ** rng.uniform(2, 6, size=X.nnz)
    y = np.where(rng.random(N) < 0.5, 1.0, -1.0)
    seq = rng.integers(0, N, size=400)
    largest = 0.0
    for eta in (1e-3, 1.0, 1e3):
        ws, r, state = _iterates(LogLoss(lam=1e-4), AdaGrad(composite=True), X, y, seq,
                                 step=Constant(eta), monitor=None)
        assert r.status is Status.MAX_ITER and np.all(np.isfinite(ws))
        assert np.isfinite(r.progressive_loss) and r.progressive_loss > 0
        assert np.all(np.abs(np.diff(ws, axis=0)) <= eta * (1 + 1e-12))
        largest = max(largest, float(np.max(np.abs(X @ r.coef + r.intercept))))
        ws2, r2, _ = _iterates(LogLossNumPy(lam=1e-4), AdaGradNumPy(composite=True), X, y, seq,
                               step=Constant(eta), monitor=None)
        np.testing.assert_allclose(ws, ws2, rtol=1e-10, atol=1e-10 * eta)
    assert largest > 1e5


def test_overflowing_step_stops_with_nothing_applied() -> None:
    """Values whose squared gradient overflows: the run stops as diverged with the iterate and
    the accumulator of the last finite step (nothing of the failing step applied)."""
    # the largest value whose square the data check accepts: the accumulator's second square
    # of its gradient overflows
    X = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 1.0], [1.2e154, 1.0]]))
    y = np.array([1.0, -1.0, -1.0])
    seq = np.array([0, 1, 0, 1, 2, 2, 0])
    solver = Solver(objective=LogLoss(lam=1e-3), curvature=AdaGrad(composite=True),
                    schedule=Fixed(1), step=Constant(0.5), fit_intercept=True,
                    batch_sequence=seq, max_iter=7)
    state = solver.init_state(X, y)
    solver.run(state, max_iter=5)
    state.sync()
    w_before, acc_before = state.w.copy(), state.curvature.accumulator
    with pytest.warns(DivergenceWarning):
        result = solver.run(state)
    assert result.status is Status.DIVERGED and state.counters.t == 5
    assert np.all(np.isfinite(result.w))
    state.sync()
    np.testing.assert_array_equal(state.w, w_before)
    np.testing.assert_array_equal(state.curvature.accumulator, acc_before)


def test_checkpoint_pickle_and_split_runs_continue_bit_for_bit() -> None:
    X, y = _data("logloss", "csr", N=200)

    def solver(n: int) -> Solver:
        return Solver(objective=LogLoss(lam=LAM), curvature=AdaGrad(composite=True),
                      schedule=Fixed(1), step=Constant(0.3), fit_intercept=True,
                      sampling="shuffle", random_state=3, report_every=7, max_iter=n)

    full = solver(900).fit(X, y)
    s = solver(400)
    state = s.init_state(X, y)
    s.run(state)
    checkpoint = pickle.loads(pickle.dumps(state.checkpoint()))
    s2 = solver(500)
    resumed = s2.run(s2.restore(checkpoint, X, y))
    np.testing.assert_array_equal(resumed.w, full.w)
    assert resumed.progressive_loss == full.progressive_loss
    s3 = solver(300)
    state3 = s3.init_state(X, y)
    for _ in range(3):
        split = s3.run(state3)
    np.testing.assert_array_equal(split.w, full.w)
    assert isinstance(state3.loop, AdaptiveLoop) and state3.loop.clock == 900
    # the dense composite path checkpoints the same accumulator (the kernel's state)
    assert state3.checkpoint().state["kernels"]["curvature"]["state"]["accumulator"].shape == \
        (X.shape[1] + 1,)


def test_checkpoint_before_the_first_step_and_after_a_reload_restores() -> None:
    """The representation has no step in force (``eta`` NaN) before the first step and after
    ``reload``: such a checkpoint is valid, and the restored solve continues bit for bit; an
    infinite, zero or negative step is refused as damage."""
    from sqnopt.checkpoint import CheckpointError

    X, y = _data("logloss", "csr", N=200)

    def solver() -> Solver:
        return Solver(objective=LogLoss(lam=LAM), curvature=AdaGrad(composite=True),
                      schedule=Fixed(1), step=Constant(0.3), fit_intercept=True,
                      sampling="shuffle", random_state=3, max_iter=300)

    full = solver().fit(X, y)
    s = solver()
    fresh = s.init_state(X, y)
    assert isinstance(fresh.loop, AdaptiveLoop) and np.isnan(fresh.loop.eta)
    resumed = s.run(s.restore(pickle.loads(pickle.dumps(fresh.checkpoint())), X, y))
    np.testing.assert_array_equal(resumed.w, full.w)
    # after a reload (the representation rebuilt from w): nothing pending, no step in force
    state = s.init_state(X, y)
    s.run(state, max_iter=100)
    state.loop.reload()
    assert np.isnan(state.loop.eta)
    ck = state.checkpoint()
    s.restore(ck, X, y)
    assert ck.state["loop"]["loop"] == "adaptive"
    for bad in (np.inf, 0.0, -0.3):
        ck.state["loop"]["eta"] = bad
        with pytest.raises(CheckpointError, match="step"):
            s.restore(ck, X, y)


def test_rebind_continues_the_clocks_on_new_data() -> None:
    """``Solver.rebind`` (partial_fit on a new chunk) keeps the representation and its clocks:
    the same as restoring a checkpoint on the new data, and the same as the dense path."""
    X, y = _data("logloss", "csr", N=300)

    def solver() -> Solver:
        return Solver(objective=LogLoss(lam=LAM), curvature=AdaGrad(composite=True),
                      schedule=Fixed(1), step=Constant(0.3), fit_intercept=True,
                      sampling="shuffle", random_state=3, max_iter=150)

    s = solver()
    state = s.init_state(X[:150], y[:150])
    s.run(state)
    loop = state.loop
    s.rebind(state, X[150:], y[150:])
    assert state.loop is not loop and isinstance(state.loop, AdaptiveLoop)
    assert state.loop.clock == 150       # adopted, not reloaded
    r1 = s.run(state)
    s = solver()
    state2 = s.init_state(X[:150], y[:150])
    s.run(state2)
    r2 = s.run(s.restore(state2.checkpoint(data_state=False), X[150:], y[150:],
                         new_data=True))
    np.testing.assert_array_equal(r1.w, r2.w)
    assert r1.progressive_loss == r2.progressive_loss and r1.progressive_weight == 300.0
    g = Solver(objective=LogLoss(lam=LAM), curvature=AdaGrad(composite=True), schedule=Fixed(1),
               step=Constant(0.3), fit_intercept=True, sampling="shuffle", random_state=3,
               max_iter=150, path="generic")
    state3 = g.init_state(X[:150], y[:150])
    g.run(state3)
    g.rebind(state3, X[150:], y[150:])
    np.testing.assert_allclose(g.run(state3).w, r1.w, rtol=0, atol=1e-12)


def test_rebind_moves_the_records_and_sync_writes_only_after_steps() -> None:
    """The loop a rebind replaces gives its records to the new one (no O(n_features) copy per
    chunk): it writes nothing into ``w`` any more and refuses to checkpoint. ``state.sync()``
    writes ``w`` only when a step was taken since its last write."""
    X, y = _data("logloss", "csr", N=300)
    s = Solver(objective=LogLoss(lam=LAM), curvature=AdaGrad(composite=True),
               schedule=Fixed(1), step=Constant(0.3), fit_intercept=True,
               sampling="shuffle", random_state=3, max_iter=150)
    state = s.init_state(X[:150], y[:150])
    s.run(state)
    old = state.loop
    s.rebind(state, X[150:], y[150:])
    w_at_rebind = state.w.copy()
    with pytest.raises(RuntimeError, match="moved to the loop that replaced it"):
        old.get_state()
    state.w[:] = 0.0
    old.sync()
    assert not state.w.any()            # the replaced loop wrote nothing
    state.sync()                        # the new loop's first write: the adopted records
    np.testing.assert_array_equal(state.w, w_at_rebind)
    state.w[:] = 0.0
    state.sync()                        # no step since that write: nothing written
    assert not state.w.any()
    state.w[:] = w_at_rebind
    r = s.run(state, max_iter=40)
    state.sync()
    np.testing.assert_array_equal(state.w, r.w)
    state.w[:] = 0.0
    s.run(state, max_iter=1)
    state.sync()                        # a step was taken: w written from the records
    assert state.w.any()


def test_build_picks_by_declaration_and_refuses_what_it_cannot_run() -> None:
    X, y = _data("logloss", "csr")
    composite = AdaGrad(composite=True)
    base: dict[str, Any] = dict(objective=LogLoss(lam=LAM), curvature=composite,
                                schedule=Fixed(1), step=Constant(0.1), max_iter=5)
    assert isinstance(Solver(**base).init_state(X, y).loop, AdaptiveLoop)
    assert isinstance(Solver(**base).init_state(X.toarray(), y).loop, AdaptiveLoop)
    assert type(Solver(**base, path="generic").init_state(X, y).loop) is CompiledLoop
    assert type(Solver(**base, path="python").init_state(X, y).loop) is PythonLoop
    # another gradient estimator: the dense composite step of the generic loop
    saga = Solver(**base, gradient=SAGA()).init_state(X, y)
    assert type(saga.loop) is CompiledLoop
    with pytest.raises(ValueError, match="plain minibatch gradient"):
        Solver(**base, gradient=SAGA(), path="scaled").init_state(X, y)
    # an objective whose parameters are not blocks over the columns: generic, or refused
    Xl = np.random.default_rng(0).normal(size=(20, 6))
    yl = np.arange(20) % 3
    ll = dict(base, objective=LogLinear(n_outputs=3, lam=LAM))
    assert type(Solver(**ll).init_state(Xl, yl).loop) is CompiledLoop
    with pytest.raises(ValueError, match="path='scaled' is not possible"):
        Solver(**ll, path="scaled").init_state(Xl, yl)
    with pytest.raises(IncompatibleComponentsError, match="composite"):
        Solver(**base, projection=L2Ball(1.0))
    with pytest.raises(IncompatibleComponentsError, match="line search"):
        Solver(**dict(base, step=Armijo()))
    with pytest.raises(IncompatibleComponentsError, match="average"):
        Solver(**base, average=True)
    # the plain AdaGrad is untouched by all this
    assert type(Solver(**dict(base, curvature=AdaGrad())).init_state(X, y).loop) is CompiledLoop


def test_model_and_kernel_must_declare_alike() -> None:
    class Liar(AdaGrad):
        @property
        def composite_step(self) -> bool:
            return False

    X, y = _data("logloss", "csr")
    with pytest.raises(TypeError, match="composite_step"):
        Solver(objective=LogLoss(lam=LAM), curvature=Liar(composite=True), schedule=Fixed(1),
               step=Constant(0.1)).init_state(X, y)
