"""The sparse scaled loop (``w_reg = a * v``) against the generic compiled loop, iterate by
iterate, and its selection rules."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt import (
    Constant,
    Decaying,
    DivergenceWarning,
    Fixed,
    Full,
    Hinge,
    Identity,
    InverseSqrt,
    L2Ball,
    Linear,
    LogLoss,
    PegasosStep,
    Solver,
    SquaredHinge,
    Status,
)
from sqnopt.curvature.reference import IdentityNumPy
from sqnopt.solver._loop import CompiledLoop
from sqnopt.solver._pyloop import PythonLoop
from sqnopt.solver._scaled_loop import ScaledLoop
from tests.conftest import as_format, sparse_linear_classes


def _data(n_samples: int = 120, n_features: int = 40, density: float = 0.2,
          seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    return sparse_linear_classes(n_samples, n_features, density, seed)


CONFIGS: dict[str, dict[str, Any]] = {
    "pegasos": dict(objective=Hinge(lam=1e-2), curvature=Identity(), schedule=Fixed(1),
                    step=PegasosStep(), projection=L2Ball()),
    "pegasos_k4_avg": dict(objective=Hinge(lam=1e-2), curvature=Identity(), schedule=Fixed(4),
                           step=PegasosStep(), projection=L2Ball(), average=True),
    "hinge_intercept_avg10": dict(objective=Hinge(lam=5e-2), curvature=Identity(),
                                  schedule=Fixed(3), step=Decaying(eps0=0.5, T0=10),
                                  projection=L2Ball(), fit_intercept=True, average=10),
    "sgd_invsqrt_logloss": dict(objective=LogLoss(lam=1e-3), curvature=Identity(),
                                schedule=Fixed(2), step=InverseSqrt(eps0=0.5)),
    "sqhinge_decaying_linear_batches": dict(objective=SquaredHinge(lam=1e-3), curvature=Identity(),
                                            schedule=Linear(b1=1, gamma=0.5, cap=20),
                                            step=Decaying(eps0=0.05, T0=10), average=True),
    "hinge_no_reg_shuffle": dict(objective=Hinge(lam=0.0), curvature=Identity(), schedule=Fixed(5),
                                 step=InverseSqrt(eps0=0.1), sampling="shuffle",
                                 fit_intercept=True),
    "folding_constant_step": dict(objective=LogLoss(lam=1.0), curvature=Identity(),
                                  schedule=Fixed(2), step=Constant(eps=0.9),
                                  projection=L2Ball(radius=0.5), average=True),
    "full_batch_bulk_norm": dict(objective=SquaredHinge(lam=1e-2), curvature=Identity(),
                                 schedule=Full(), step=Constant(eps=0.5), sampling="shuffle",
                                 average=True, fit_intercept=True),
    "l2ball_radius_weighted": dict(objective=Hinge(lam=1e-3), curvature=Identity(),
                                   schedule=Fixed(2), step=InverseSqrt(eps0=1.0),
                                   projection=L2Ball(radius=0.7), sampling="weighted"),
}


@pytest.mark.parametrize("fmt", ["dense", "csr"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", list(CONFIGS))
def test_scaled_loop_matches_generic_iterate_by_iterate(fmt: str, dtype: type, name: str) -> None:
    X, y = _data(seed=len(name))
    Xf = as_format(X, fmt, dtype)
    sw = np.random.default_rng(3).uniform(0.2, 2.0, size=y.shape[0])
    ws = {}
    for path in ("generic", "scaled"):
        out: list[np.ndarray] = []
        solver = Solver(max_iter=150, report_every=1, path=path, random_state=7,  # type: ignore[arg-type]
                        callback=lambda info, out=out: out.append(info.w.copy()), **CONFIGS[name])
        state = solver.init_state(Xf, y, sw)
        result = solver.run(state)
        assert isinstance(state.loop, ScaledLoop if path == "scaled" else CompiledLoop)
        ws[path] = (np.array(out), result)
    (wg, rg), (wsc, rsc) = ws["generic"], ws["scaled"]
    assert wg.shape == wsc.shape == (150, X.shape[1] + int(CONFIGS[name].get("fit_intercept", False)))
    scale = max(1.0, float(np.max(np.abs(wg))))
    np.testing.assert_allclose(wsc, wg, rtol=0, atol=1e-12 * scale)
    for attr in ("n_iter", "n_samples", "n_grad_evals", "n_curvature_samples", "status",
                 "n_pairs_accepted", "n_pairs_skipped"):
        assert getattr(rsc, attr) == getattr(rg, attr)
    assert rsc.fun == pytest.approx(rg.fun, rel=1e-10, abs=1e-12)
    assert rsc.compiled and rg.compiled


def test_folds_happen_and_stay_exact() -> None:
    X, y = _data()
    cfg = CONFIGS["folding_constant_step"]
    solver = Solver(max_iter=300, report_every=300, random_state=1, **cfg)
    state = solver.init_state(sp.csr_matrix(X), y)
    solver.run(state)
    assert isinstance(state.loop, ScaledLoop)
    # (1 - 0.9 * 1.0) = 0.1 per step: |a| < 1e-9 after ~9 steps, so ~30 folds in 300 steps.
    assert state.loop.n_folds >= 25
    ref = Solver(max_iter=300, report_every=300, random_state=1, path="generic", **cfg)
    rstate = ref.init_state(sp.csr_matrix(X), y)
    ref.run(rstate)
    np.testing.assert_allclose(state.output_iterate(), rstate.output_iterate(), rtol=0, atol=1e-12)


def test_pegasos_first_step_folds_scale_zero() -> None:
    """1 - eps_0 lam = 0 for the Pegasos step: the scale is folded instead of divided by."""
    X, y = _data()
    solver = Solver(objective=Hinge(lam=0.5), curvature=Identity(), schedule=Fixed(1),
                    step=PegasosStep(), max_iter=1, random_state=0)
    state = solver.init_state(sp.csr_matrix(X), y, w0=np.ones(X.shape[1]))
    solver.run(state)
    assert isinstance(state.loop, ScaledLoop)
    assert np.all(np.isfinite(state.w)) and state.loop.scale == 1.0


def test_iterates_do_not_depend_on_plain_report_points() -> None:
    """Returns to Python without a sync (no history, callback or target) keep the scaled
    representation: bit for bit. Syncs (history points, separate run calls) re-normalise it:
    the same iterates up to rounding."""
    X, y = _data()
    cfg = CONFIGS["pegasos_k4_avg"]
    one = Solver(max_iter=200, report_every=1000, random_state=5, **cfg)
    s1 = one.init_state(sp.csr_matrix(X), y)
    one.run(s1)
    plain = Solver(max_iter=200, report_every=7, random_state=5, **cfg)
    s2 = plain.init_state(sp.csr_matrix(X), y)
    plain.run(s2)
    np.testing.assert_array_equal(s1.w, s2.w)
    np.testing.assert_array_equal(s1.output_iterate(), s2.output_iterate())
    many = Solver(max_iter=200, report_every=7, random_state=5, history_every=13, **cfg)
    s3 = many.init_state(sp.csr_matrix(X), y)
    for _ in range(4):
        many.run(s3, max_iter=50)
    assert s1.t == s3.t == 200
    np.testing.assert_allclose(s3.w, s1.w, rtol=0, atol=1e-13)
    np.testing.assert_allclose(s3.output_iterate(), s1.output_iterate(), rtol=0, atol=1e-13)


def test_sampler_is_not_ahead_between_runs_and_restores_reload() -> None:
    """No batch is drawn for an iteration that will not run in the call, so the random stream
    is where the generic loop leaves it. A loop whose counters were changed from outside (a
    resumed partial_fit) reloads from the dense state and continues up to rounding."""
    X, y = _data()
    cfg = CONFIGS["hinge_intercept_avg10"]
    states = {}
    for path in ("generic", "scaled"):
        solver = Solver(random_state=4, path=path, **cfg)  # type: ignore[arg-type]
        st = solver.init_state(sp.csr_matrix(X), y)
        solver.run(st, max_iter=37)
        solver.run(st, max_samples=50)   # stops on the sample budget inside a batch
        states[path] = st
    assert (states["generic"].sampler.bit_generator.state
            == states["scaled"].sampler.bit_generator.state)
    assert states["generic"].t == states["scaled"].t
    solver = Solver(random_state=4, **cfg)
    src = states["scaled"]
    clone = solver.init_state(sp.csr_matrix(X), y, w0=src.w)
    assert clone.w_avg is not None and src.w_avg is not None
    clone.w_avg[:] = src.w_avg
    for key, value in src.counters.as_dict().items():
        setattr(clone.counters, key, value)
    clone.sampler.bit_generator.state = src.sampler.bit_generator.state
    r1 = solver.run(src, max_iter=60)
    r2 = solver.run(clone, max_iter=60)
    assert r1.n_iter == r2.n_iter
    np.testing.assert_allclose(r2.w, r1.w, rtol=0, atol=1e-12)


def test_rebind_hands_the_representation_over() -> None:
    """Solver.rebind builds a new loop for the new data; on the same data it continues bit for
    bit (the scaled representation is handed over, not rebuilt from w)."""
    X, y = _data()
    Xs = sp.csr_matrix(X)
    kw = dict(CONFIGS["pegasos_k4_avg"], random_state=3)
    a = Solver(**kw)
    sa = a.init_state(Xs, y)
    a.run(sa, max_iter=120)
    ra = a.run(sa, max_iter=80)
    b = Solver(**kw)
    sb = b.init_state(Xs, y)
    b.run(sb, max_iter=120)
    old = sb.loop
    b.rebind(sb, Xs.copy(), y.copy())
    assert isinstance(sb.loop, ScaledLoop) and sb.loop is not old
    rb = b.run(sb, max_iter=80)
    np.testing.assert_array_equal(ra.w, rb.w)


def test_exhausted_sequence_and_sample_budget_match_generic() -> None:
    X, y = _data()
    seq = np.random.default_rng(0).integers(0, X.shape[0], size=23)
    out = {}
    for path in ("generic", "scaled"):
        solver = Solver(objective=Hinge(lam=1e-2), curvature=Identity(), schedule=Fixed(3),
                        step=PegasosStep(), batch_sequence=seq, max_iter=100, path=path)  # type: ignore[arg-type]
        state = solver.init_state(sp.csr_matrix(X), y)
        res = solver.run(state)
        out[path] = (res.status, res.n_iter, res.n_samples, state.w.copy())
        # running again stays exhausted
        res2 = solver.run(state)
        assert res2.n_iter == res.n_iter and not res2.success
    assert out["generic"][:3] == out["scaled"][:3]
    assert out["scaled"][1] == 7  # 23 // 3 full batches
    np.testing.assert_allclose(out["scaled"][3], out["generic"][3], atol=1e-12)
    for path in ("generic", "scaled"):
        solver = Solver(objective=Hinge(lam=1e-2), curvature=Identity(), schedule=Fixed(3),
                        step=PegasosStep(), max_samples=31, random_state=0, path=path)  # type: ignore[arg-type]
        res = solver.fit(sp.csr_matrix(X), y)
        assert (res.n_iter, res.n_samples, res.status.value) == (11, 33, "max_samples")


def test_loop_selection() -> None:
    X, y = _data()
    Xs = sp.csr_matrix(X)

    def loop_of(**kw: Any) -> Any:
        return type(Solver(**kw).init_state(Xs, y).loop)

    assert loop_of(objective=Hinge(lam=1e-3), curvature="identity", step="pegasos",
                   projection="l2ball") is ScaledLoop
    # auto prefers it on sparse data only; path="scaled" forces it on dense data
    dense = Solver(objective="logloss", curvature="identity").init_state(X, y)
    assert isinstance(dense.loop, CompiledLoop)
    forced = Solver(objective="logloss", curvature="identity", path="scaled").init_state(X, y)
    assert isinstance(forced.loop, ScaledLoop)
    assert loop_of(objective="logloss", curvature="identity", average=True) is ScaledLoop
    assert loop_of(objective="logloss", curvature=IdentityNumPy()) is PythonLoop
    assert loop_of(objective="logloss", curvature="identity", path="generic") is CompiledLoop
    assert loop_of(objective="logloss", curvature="identity", path="python") is PythonLoop
    with pytest.raises(ValueError, match="path='scaled'.*pure Python"):
        Solver(objective="logloss", curvature=IdentityNumPy(), path="scaled").init_state(Xs, y)
    with pytest.raises(ValueError, match="path must be"):
        Solver(path="fast")  # type: ignore[arg-type]


def test_scaled_loop_python_path_agree() -> None:
    """The Python loop (same compiled kernels) is bit-identical to the generic compiled loop, so
    the scaled loop agrees with it to rounding as well."""
    X, y = _data()
    cfg = CONFIGS["hinge_intercept_avg10"]
    res = {p: Solver(max_iter=120, random_state=2, path=p, **cfg).fit(sp.csr_matrix(X), y)  # type: ignore[arg-type]
           for p in ("python", "generic", "scaled")}
    np.testing.assert_array_equal(res["python"].w, res["generic"].w)
    np.testing.assert_allclose(res["scaled"].w, res["generic"].w, rtol=0, atol=1e-10)


def test_divergence_detected_with_last_finite_iterate() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 10)) * 1e30
    y = np.where(rng.random(50) < 0.5, -1.0, 1.0)
    for path in ("generic", "scaled"):
        solver = Solver(objective=SquaredHinge(lam=0.0), curvature=Identity(), schedule=Fixed(1),
                        step=Constant(eps=1e30), max_iter=1000, random_state=0, path=path)  # type: ignore[arg-type]
        with pytest.warns(DivergenceWarning):
            res = solver.fit(sp.csr_matrix(X), y)
        assert res.status is Status.DIVERGED
        assert np.all(np.isfinite(res.w))


def test_many_features_touch_only_batch_rows() -> None:
    """10^5 features, 3 nonzeros per row: the scaled loop is exact there too."""
    rng = np.random.default_rng(1)
    n, N, nnz = 100_000, 300, 3
    ind = rng.integers(0, n, size=N * nnz)
    X = sp.csr_matrix((rng.normal(size=N * nnz), ind, np.arange(0, N * nnz + 1, nnz)), shape=(N, n))
    X.sum_duplicates()
    y = np.where(rng.random(N) < 0.5, -1.0, 1.0)
    cfg = dict(objective=Hinge(lam=1e-3), curvature=Identity(), schedule=Fixed(2),
               step=PegasosStep(), projection=L2Ball(), average=True, max_iter=400, random_state=0)
    a = Solver(path="scaled", **cfg).fit(X, y)  # type: ignore[arg-type]
    b = Solver(path="generic", **cfg).fit(X, y)  # type: ignore[arg-type]
    np.testing.assert_allclose(a.w, b.w, rtol=0, atol=1e-10 * max(1.0, float(np.abs(b.w).max())))
    assert a.fun == pytest.approx(b.fun, rel=1e-10)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("layout", ["csr", "dense"])
@pytest.mark.parametrize("intercept", [False, True])
def test_row_squared_norms(dtype: type, layout: str, intercept: bool) -> None:
    """The scaled loop's ||x_i||^2 (SIMD dot for float64, four accumulators for float32; rows of
    every length around the unrolling, the intercept entry excluded) equal NumPy's."""
    from sqnopt.data import prepare
    from sqnopt.solver._scaled_loop import _row_sqnorms

    rng = np.random.default_rng(7)
    Xd = rng.normal(size=(40, 23)).astype(dtype)
    Xd[rng.random(Xd.shape) < 0.5] = 0.0
    Xd[3] = 0.0                                   # an empty row
    X = sp.csr_matrix(Xd) if layout == "csr" else Xd
    data = prepare(X, np.where(np.arange(40) % 2 == 0, 1.0, -1.0), fit_intercept=intercept)
    expect = np.einsum("ij,ij->i", Xd.astype(np.float64), Xd.astype(np.float64))
    np.testing.assert_allclose(_row_sqnorms(data.rows), expect, rtol=1e-13, atol=0)
