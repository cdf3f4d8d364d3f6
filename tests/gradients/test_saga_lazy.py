"""SAGA's and SVRG's lazy sparse iterate (:mod:`sqnopt.solver._lazy_loop`) against the dense
path and the NumPy twins, iterate by iterate; its folds, cost accounting, checkpoints, selection
rules and linear convergence."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt import (
    SAGA,
    SVRG,
    Armijo,
    Constant,
    Decaying,
    DivergenceWarning,
    Fixed,
    Full,
    L2Ball,
    LBFGS,
    LogLoss,
    SlowPathWarning,
    Solver,
    SquaredHinge,
    Status,
)
from sqnopt.gradients.reference import SAGANumPy, SVRGNumPy
from sqnopt.objectives import Softmax
from sqnopt.solver._lazy_loop import LazyTableLoop
from sqnopt.solver._loop import CompiledLoop
from sqnopt.solver._pyloop import PythonLoop
from tests.conftest import as_format, gaussian_classes, sparse_linear_classes


def _data(n_samples: int = 150, n_features: int = 60, density: float = 0.1,
          seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    return sparse_linear_classes(n_samples, n_features, density, seed)


def _wide(N: int = 150, n: int = 3000, per_row: int = 5, seed: int = 0
          ) -> tuple[sp.csr_matrix, np.ndarray]:
    """Sparse rows of ``per_row`` entries among ``n`` features: where the lazy loop is chosen
    by ``path="auto"`` for small batches."""
    rng = np.random.default_rng(seed)
    ind = rng.integers(0, n, size=N * per_row)
    X = sp.csr_matrix((rng.normal(size=N * per_row), ind,
                       np.arange(0, N * per_row + 1, per_row)), shape=(N, n))
    X.sum_duplicates()
    y = np.where(rng.random(N) < 0.5, -1.0, 1.0)
    return X, y


def _iterates(X: Any, y: Any, *, path: str = "scaled", gradient: Any = None, n_iter: int = 300,
              sample_weight: Any = None, **kw: Any) -> tuple[np.ndarray, Any, Any]:
    """The iterates at every step (report_every=1 syncs the lazy representation each time,
    which must not change it) and the result and state of the solve; ``path="scaled"``: the
    lazy loop whatever the data's shape."""
    cfg: dict[str, Any] = dict(objective=LogLoss(lam=0.02), curvature="identity",
                               schedule=Fixed(1), step=Constant(eps=0.5))
    cfg.update(kw)
    out: list[np.ndarray] = []
    solver = Solver(gradient=gradient if gradient is not None else SAGA(), path=path,  # type: ignore[arg-type]
                    random_state=3, report_every=1,
                    callback=lambda info: out.append(info.w.copy()), **cfg)
    st = solver.init_state(X, y, sample_weight)
    res = solver.run(st, max_iter=n_iter)
    return np.array(out), res, st


def _close(a: np.ndarray, b: np.ndarray, rtol: float = 1e-10) -> None:
    """Iterate by iterate, relative to each iterate's size (rounding differs: the lazy form sums
    the shrink and the table average in another order)."""
    assert a.shape == b.shape
    scale = np.maximum(np.abs(b).max(axis=1, keepdims=True), 1e-300)
    np.testing.assert_array_less(np.abs(a - b) / scale, rtol)


CONFIGS: dict[str, dict[str, Any]] = {
    "b1": {},
    "b7_intercept": dict(schedule=Fixed(7), fit_intercept=True),
    "regularized_intercept_sqhinge": dict(objective=SquaredHinge(lam=0.05),
                                          fit_intercept="regularized", step=Constant(eps=0.05)),
    "decaying_step_shuffle": dict(step=Decaying(eps0=0.8, T0=20), sampling="shuffle",
                                  schedule=Fixed(3)),
    "l2ball": dict(projection=L2Ball(radius=0.3), schedule=Fixed(2)),
    "no_regularisation": dict(objective=LogLoss(lam=0.0), fit_intercept=True),
    # r = 1 - eps lam = 0.75: the scale folds every ~72 steps
    "folds": dict(objective=LogLoss(lam=0.5), step=Constant(eps=0.5), schedule=Fixed(2)),
    # eps lam = 1: every step folds (r = 0)
    "shrink_to_zero": dict(objective=LogLoss(lam=2.0), step=Constant(eps=0.5)),
    "sample_weights": dict(schedule=Fixed(3), fit_intercept=True, weights=True),
}


@pytest.mark.parametrize("fmt", ["csr", "dense"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", list(CONFIGS))
def test_lazy_saga_matches_dense_saga_iterate_by_iterate(name: str, dtype: type, fmt: str) -> None:
    """CSR rows and, forced by ``path="scaled"``, dense rows (views without indices)."""
    X, y = _data()
    Xs = as_format(X, fmt, dtype)
    cfg = dict(CONFIGS[name])
    if cfg.pop("weights", False):
        cfg["sample_weight"] = np.random.default_rng(8).uniform(0.2, 3.0, X.shape[0])
    a, ra, sa = _iterates(Xs, y, **cfg)
    b, rb, sb = _iterates(Xs, y, path="generic", **cfg)
    assert isinstance(sa.loop, LazyTableLoop) and type(sb.loop) is CompiledLoop
    _close(a, b)
    assert ra.n_estimator_samples == rb.n_estimator_samples == X.shape[0]
    assert (ra.n_samples, ra.n_grad_evals, ra.n_iter) == (rb.n_samples, rb.n_grad_evals,
                                                          rb.n_iter)
    assert ra.fun == pytest.approx(rb.fun, rel=1e-12)
    # the estimator's table and average are the dense path's: the lazy loop updates them
    np.testing.assert_allclose(sa.gradient.table_values, sb.gradient.table_values, rtol=1e-9,
                               atol=1e-12)
    np.testing.assert_allclose(sa.gradient.average, sb.gradient.average, rtol=1e-9,
                               atol=1e-14)
    if name in ("folds", "shrink_to_zero"):
        assert sa.loop.n_folds > 0


def test_lazy_saga_matches_the_numpy_twin() -> None:
    """The NumPy twin of SAGA runs in the Python loop on the dense iterate."""
    X, y = _data(seed=1)
    Xs = sp.csr_matrix(X)
    a, ra, sa = _iterates(Xs, y, schedule=Fixed(4), fit_intercept=True)
    b, rb, sb = _iterates(Xs, y, gradient=SAGANumPy(), schedule=Fixed(4), fit_intercept=True,
                          path="auto")
    assert isinstance(sa.loop, LazyTableLoop) and isinstance(sb.loop, PythonLoop)
    _close(a, b)
    assert ra.n_estimator_samples == rb.n_estimator_samples


def test_the_closed_form_of_skipped_steps() -> None:
    """A coordinate no row touches follows w_j <- r^k w_j - eps a_j (1 - r^k) / (1 - r) over k
    constant steps (r = 1 - eps lam): checked on a feature column no sample uses."""
    X, y = _data(n_features=30, seed=2)
    X[:, 5] = 0.0
    lam, eps, k = 0.05, 0.3, 40
    w0 = np.linspace(-1.0, 1.0, X.shape[1])
    solver = Solver(LogLoss(lam=lam), "identity", Fixed(1), Constant(eps=eps), gradient=SAGA(),
                    random_state=0, path="scaled")
    st = solver.init_state(sp.csr_matrix(X), y, w0=w0)
    assert isinstance(st.loop, LazyTableLoop)
    solver.run(st, max_iter=k)
    r = 1.0 - eps * lam
    assert st.gradient.average[5] == 0.0
    assert st.w[5] == pytest.approx(r ** k * w0[5], rel=1e-13)
    # a column with entries: the average is not zero there, and the table moves it
    ref = Solver(LogLoss(lam=lam), "identity", Fixed(1), Constant(eps=eps), gradient=SAGA(),
                 random_state=0, path="generic")
    sr = ref.init_state(sp.csr_matrix(X), y, w0=w0)
    ref.run(sr, max_iter=k)
    np.testing.assert_allclose(st.w, sr.w, rtol=1e-11, atol=1e-14)


def test_report_points_and_split_runs_do_not_change_the_iterates() -> None:
    """``sync`` writes w without touching the representation: bit for bit whatever the report
    points; a run split in calls continues it exactly."""
    X, y = _data()
    Xs = sp.csr_matrix(X)
    kw: dict[str, Any] = dict(objective=LogLoss(lam=0.01), curvature="identity",
                              schedule=Fixed(2), step=Constant(eps=0.4), gradient=SAGA(),
                              random_state=7, path="scaled")
    one = Solver(report_every=1000, **kw)
    s1 = one.init_state(Xs, y)
    one.run(s1, max_iter=250)
    many = Solver(report_every=3, history_every=11, **kw)
    s2 = many.init_state(Xs, y)
    for _ in range(5):
        many.run(s2, max_iter=50)
    assert isinstance(s1.loop, LazyTableLoop) and s1.t == s2.t == 250
    np.testing.assert_array_equal(s1.w, s2.w)


@pytest.mark.parametrize("k", [0, 1, 37])
def test_lazy_saga_resumes_exactly_from_a_checkpoint(k: int) -> None:
    """Checkpoint after ``k`` iterations (before the table's fill, right after it, mid-run),
    restore into a new solver: the continuation is bit for bit the uninterrupted one."""
    from tests.solver.test_resume import resume_matches

    X, y = _data()
    make = lambda: Solver(LogLoss(lam=0.03), "identity", Fixed(3), Constant(eps=0.6),  # noqa: E731
                          gradient=SAGA(), projection=L2Ball(radius=2.0), random_state=4,
                          report_every=5, fit_intercept=True, path="scaled")
    ref, res = resume_matches(make, sp.csr_matrix(X), y, k, 60)
    assert ref.n_estimator_samples == res.n_estimator_samples == X.shape[0]
    assert isinstance(make().init_state(sp.csr_matrix(X), y).loop, LazyTableLoop)


def test_rebind_restarts_the_table_like_the_dense_path() -> None:
    """On new data the estimator's table starts afresh; the lazy loop restarts from w."""
    X, y = _data()
    X2, y2 = _data(seed=5)
    ws = {}
    for path in ("scaled", "generic"):
        solver = Solver(LogLoss(lam=0.02), "identity", Fixed(2), Constant(eps=0.5),
                        gradient=SAGA(), random_state=1, path=path)  # type: ignore[arg-type]
        st = solver.init_state(sp.csr_matrix(X), y)
        solver.run(st, max_iter=120)
        solver.rebind(st, sp.csr_matrix(X2), y2)
        assert isinstance(st.loop, LazyTableLoop) == (path == "scaled")
        res = solver.run(st, max_iter=120)
        assert res.n_estimator_samples == 2 * X.shape[0]
        ws[path] = res.w
    np.testing.assert_allclose(ws["scaled"], ws["generic"], rtol=1e-10, atol=1e-13)


def test_loop_selection() -> None:
    """Sparse data whose batches hold few entries against the features, a margin objective, the
    identity, no line search and no averaging: the lazy loop; otherwise the dense SAGA path
    (path='scaled' forces it on dense data and large batches)."""
    Xs, y = _wide()
    X = Xs.toarray()

    def loop(Xd: Any, yd: Any = y, **kw: Any) -> type:
        cfg: dict[str, Any] = dict(objective=LogLoss(lam=0.1), curvature="identity",
                                   schedule=Fixed(2), step=Constant(eps=0.5), gradient=SAGA())
        cfg.update(kw)
        return type(Solver(**cfg).init_state(Xd, yd).loop)

    assert loop(Xs) is LazyTableLoop
    assert loop(Xs.astype(np.float32)) is LazyTableLoop
    assert loop(X) is CompiledLoop
    assert loop(X, path="scaled") is LazyTableLoop
    assert loop(Xs, path="generic") is CompiledLoop
    # 5 entries per row among 3000 features: batches up to 3000 / 16 entries
    assert loop(Xs, schedule=Fixed(37)) is LazyTableLoop
    assert loop(Xs, schedule=Fixed(38)) is CompiledLoop
    assert loop(Xs, schedule=Fixed(38), path="scaled") is LazyTableLoop
    Xn, yn = _data()       # 6 entries per row among 60 features: the dense step is cheap
    assert loop(sp.csr_matrix(Xn), yn) is CompiledLoop
    with pytest.warns(SlowPathWarning, match="average=False"):   # off the lazy iterate: told
        assert loop(Xs, average=True) is CompiledLoop
    assert loop(Xs, curvature=LBFGS(memory=3)) is CompiledLoop
    assert loop(Xs, step=Armijo(), curvature=LBFGS(memory=3), schedule=Full()) is CompiledLoop
    assert loop(Xs, gradient=SAGANumPy()) is PythonLoop
    Xm, ym = gaussian_classes(90, 6, 3, 0)
    assert loop(sp.csr_matrix(Xm), ym, objective=Softmax(lam=0.1)) is CompiledLoop
    with pytest.raises(ValueError, match="path='scaled' is not possible.*running average"):
        Solver(LogLoss(lam=0.1), "identity", Fixed(2), Constant(eps=0.5), gradient=SAGA(),
               average=True, path="scaled").init_state(Xs, y)


def test_the_saga_preset_gets_the_lazy_loop_on_sparse_data() -> None:
    X, y = _wide()
    st = Solver.preset("saga", lam=0.01, eta=0.5).init_state(X, y)
    assert isinstance(st.loop, LazyTableLoop)
    assert st.gradient.score_table


def test_divergence_is_reported_with_a_finite_iterate() -> None:
    rng = np.random.default_rng(0)
    X = sp.csr_matrix(rng.normal(size=(50, 10)) * 1e30)
    y = np.where(rng.random(50) < 0.5, -1.0, 1.0)
    solver = Solver(SquaredHinge(lam=0.0), "identity", Fixed(1), Constant(eps=1e30),
                    gradient=SAGA(), max_iter=1000, random_state=0, path="scaled")
    assert isinstance(solver.init_state(X, y).loop, LazyTableLoop)
    with pytest.warns(DivergenceWarning):
        res = solver.fit(X, y)
    assert res.status is Status.DIVERGED
    assert np.all(np.isfinite(res.w))


def test_linear_convergence_on_a_strongly_convex_sparse_problem() -> None:
    """Constant steps: the suboptimality falls by a constant factor per pass, to 1e-10 of F*,
    with the lazy iterate on 2000 features (a few per row)."""
    rng = np.random.default_rng(4)
    N, n, per_row = 400, 2000, 8
    ind = rng.integers(0, n, size=N * per_row)
    X = sp.csr_matrix((rng.normal(size=N * per_row), ind, np.arange(0, N * per_row + 1,
                                                                      per_row)), shape=(N, n))
    X.sum_duplicates()
    X = sp.csr_matrix(X.multiply(1.0 / np.sqrt(X.multiply(X).sum(axis=1))))
    y = np.where(rng.random(N) < 0.5, -1.0, 1.0)
    objective = LogLoss(lam=0.002)
    fstar = Solver(objective, "lbfgs", Full(), Armijo(), gtol=1e-13, max_iter=1000).fit(X, y).fun
    solver = Solver(objective, "identity", Fixed(1), Constant(eps=1.0), gradient=SAGA(),
                    max_epochs=18, history_every=N, random_state=0)
    st = solver.init_state(X, y)
    assert isinstance(st.loop, LazyTableLoop)
    res = solver.run(st)
    gap = res.history.objective - fstar
    assert gap[-1] <= 1e-10 * fstar
    mid = len(gap) // 2
    assert gap[mid] < 1e-3 * gap[1] and gap[-1] < 1e-3 * max(gap[mid], 1e-16)


SVRG_CONFIGS: dict[str, dict[str, Any]] = {
    "b1_one_pass": dict(sampling="shuffle"),
    "b5_period_40_intercept": dict(gradient=SVRG(period=40), schedule=Fixed(5),
                                   fit_intercept=True),
    "folds_l2ball": dict(gradient=SVRG(period=60), objective=LogLoss(lam=0.5),
                         projection=L2Ball(radius=0.2), schedule=Fixed(2)),
    "sample_weights": dict(gradient=SVRG(period=100), schedule=Fixed(3), weights=True),
    # importance sampling: the minibatch weights are not the objective's, so the snapshot's
    # average is the full gradient's (a second pass per snapshot)
    "importance_sampling": dict(gradient=SVRG(period=100), schedule=Fixed(3), weights=True,
                                sampling="weighted"),
}


@pytest.mark.parametrize("name", list(SVRG_CONFIGS))
def test_lazy_svrg_matches_dense_svrg_iterate_by_iterate(name: str) -> None:
    """SVRG's frozen table (the snapshot's score derivatives) on the lazy iterate: the dense
    path's iterates and snapshots; the second minibatch gradient is read from the table, so
    only the snapshots count as extra samples."""
    X, y = _data(seed=3)
    Xs = sp.csr_matrix(X)
    cfg = dict(SVRG_CONFIGS[name])
    cfg.setdefault("gradient", SVRG())
    if cfg.pop("weights", False):
        cfg["sample_weight"] = np.random.default_rng(8).uniform(0.2, 3.0, X.shape[0])
    a, ra, sa = _iterates(Xs, y, **cfg)
    b, rb, sb = _iterates(Xs, y, path="generic", **cfg)
    assert isinstance(sa.loop, LazyTableLoop) and type(sb.loop) is CompiledLoop
    _close(a, b)
    snaps = sa.gradient.n_snapshots
    assert snaps == sb.gradient.n_snapshots > 1
    passes = 2 if cfg.get("sampling") == "weighted" else 1
    assert ra.n_estimator_samples == passes * snaps * X.shape[0]
    assert rb.n_estimator_samples == snaps * X.shape[0] + rb.n_samples
    np.testing.assert_allclose(sa.gradient.snapshot_gradient, sb.gradient.snapshot_gradient,
                               rtol=1e-9, atol=1e-13)
    c, rc, sc = _iterates(Xs, y, path="auto", **{**cfg, "gradient": SVRGNumPy(
        period=cfg["gradient"].period)})
    assert isinstance(sc.loop, PythonLoop)
    _close(a, c)


@pytest.mark.parametrize("k", [0, 39, 41])
def test_lazy_svrg_resumes_exactly_around_a_snapshot(k: int) -> None:
    from tests.solver.test_resume import resume_matches

    X, y = _data()
    make = lambda: Solver(LogLoss(lam=0.03), "identity", Fixed(5), Constant(eps=0.5),  # noqa: E731
                          gradient=SVRG(period=200), random_state=4, report_every=7,
                          path="scaled")
    resume_matches(make, sp.csr_matrix(X), y, k, 60)


def test_the_svrg_preset_gets_the_lazy_loop_and_converges_linearly() -> None:
    X, y = _wide(N=300, n=2000, per_row=8, seed=4)
    X = sp.csr_matrix(X.multiply(1.0 / np.sqrt(X.multiply(X).sum(axis=1))))
    objective = LogLoss(lam=0.01)
    fstar = Solver(objective, "lbfgs", Full(), Armijo(), gtol=1e-13, max_iter=1000).fit(X, y).fun
    solver = Solver.preset("svrg", lam=0.01, eta=0.5, max_epochs=30, history_every=300,
                           random_state=0)
    st = solver.init_state(X, y)
    assert isinstance(st.loop, LazyTableLoop) and st.gradient.table_frozen
    res = solver.run(st)
    gap = res.history.objective - fstar
    assert gap[-1] <= 1e-10 * fstar
    assert gap[len(gap) // 3] < 1e-3 * gap[1]
