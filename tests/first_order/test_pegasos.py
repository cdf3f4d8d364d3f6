"""Pegasos as a composition, its preset, and the other first-order presets."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt import (
    Fixed,
    Full,
    Geometric,
    Hinge,
    Identity,
    IncompatibleComponentsError,
    L2Ball,
    PegasosStep,
    Solver,
)
from sqnopt.curvature import LBFGS, AdaGrad, HessianLBFGS, QuadraticBound
from sqnopt.gradients import SAGA, SVRG, ProgressiveBatch
from sqnopt.presets import PRESETS, make
from sqnopt.projections import ExpGradPM, L1Ball, LazyProjection
from sqnopt.solver._scaled_loop import ScaledLoop
from sqnopt.steps import Armijo, Constant, InverseSqrt, LipschitzStep, Wolfe


def _data(n: int = 300, d: int = 25, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.4)
    y = np.where(X @ rng.normal(size=d) + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def _pegasos_numpy(X: np.ndarray, y: np.ndarray, lam: float, k: int, seq: np.ndarray,
                   project: bool = True) -> list[np.ndarray]:
    """Mini-batch Pegasos as written in the paper (Shalev-Shwartz et al. 2007, Fig. 2)."""
    w = np.zeros(X.shape[1])
    out = []
    for t in range(seq.shape[0] // k):
        A = seq[t * k:(t + 1) * k]
        eta = 1.0 / (lam * (t + 1))
        viol = y[A] * (X[A] @ w) < 1.0
        w = (1.0 - eta * lam) * w + (eta / k) * (y[A][viol] @ X[A][viol])
        if project:
            w = w * min(1.0, (1.0 / np.sqrt(lam)) / max(np.linalg.norm(w), 1e-300))
        out.append(w)
    return out


@pytest.mark.parametrize("k", [1, 7])
@pytest.mark.parametrize("fmt", ["dense", "csr"])
@pytest.mark.parametrize("project", [True, False])
def test_pegasos_matches_the_paper_iterate_by_iterate(k: int, fmt: str, project: bool) -> None:
    X, y = _data()
    lam = 0.05
    seq = np.random.default_rng(1).integers(0, X.shape[0], size=200 * k)
    ref = _pegasos_numpy(X, y, lam, k, seq, project)
    got: list[np.ndarray] = []
    solver = Solver.pegasos(lam, batch_size=k, project=project, batch_sequence=seq, max_iter=200,
                            report_every=1, callback=lambda info: got.append(info.w.copy()),
                            path="scaled")
    state = solver.init_state(sp.csr_matrix(X) if fmt == "csr" else X, y)
    result = solver.run(state)
    assert isinstance(state.loop, ScaledLoop)
    assert result.n_iter == 200 and result.n_samples == 200 * k
    np.testing.assert_allclose(np.array(got), np.array(ref), rtol=0, atol=1e-11)


def test_pegasos_preset_is_a_composition() -> None:
    s = Solver.pegasos(1e-3, batch_size=8, average=True, fit_intercept="regularized")
    assert s.objective == Hinge(lam=1e-3)
    assert isinstance(s.curvature, Identity)
    assert s.schedule == Fixed(8)
    assert isinstance(s.step, PegasosStep)
    assert s.projection == L2Ball(None)
    assert s.average is True and s.fit_intercept == "regularized"
    assert Solver.pegasos(1e-3, project=False).projection is None
    assert Solver.preset("pegasos", lam=0.1).objective == Hinge(lam=0.1)


def test_pegasos_reaches_the_svm_optimum() -> None:
    """Against liblinear's exact dual solution of the same problem (no intercept)."""
    svm = pytest.importorskip("sklearn.svm")
    X, y = _data(n=400, d=20, seed=3)
    lam = 1e-2
    ref = svm.LinearSVC(loss="hinge", C=1.0 / (lam * X.shape[0]), fit_intercept=False, dual=True,
                        tol=1e-10, max_iter=1_000_000).fit(X, y)
    w_star = ref.coef_.ravel()
    f_star = float(np.mean(np.maximum(0.0, 1.0 - y * (X @ w_star))) + 0.5 * lam * w_star @ w_star)
    res = Solver.pegasos(lam, batch_size=1, average=True, max_epochs=200, random_state=0).fit(X, y)
    assert res.fun >= f_star - 1e-9
    assert res.fun <= f_star * 1.01
    last = Solver.pegasos(lam, batch_size=10, max_epochs=200, random_state=0).fit(X, y)
    assert last.fun <= f_star * 1.05


def test_pegasos_with_intercept_and_average() -> None:
    """An unregularised intercept (``fit_intercept=True``) would take the step 1/(lam t) too,
    1/lam at first, with nothing to pull it back: the Solver refuses it and names the fix. The
    paper's regularised bias (``fit_intercept="regularized"``) works at lam = 1e-3."""
    X, y = _data(seed=4)
    y = np.where(X[:, 0] > 0.3, 1.0, -1.0)     # needs an offset
    with pytest.raises(IncompatibleComponentsError, match="fit_intercept='regularized'"):
        Solver.pegasos(0.1, batch_size=4, average=100, fit_intercept=True)
    for seed in range(4):
        res = Solver.pegasos(1e-3, batch_size=4, average=100, fit_intercept="regularized",
                             max_epochs=30, random_state=seed).fit(X, y)
        assert res.coef.shape == (X.shape[1],) and res.intercept < -1.0
        assert np.mean(np.sign(X @ res.coef + res.intercept) == y) > 0.98


@pytest.mark.parametrize("sparse", [False, True])
def test_regularized_intercept_is_a_constant_feature(sparse: bool) -> None:
    """``fit_intercept="regularized"`` is exactly the fit on ``[X, 1]`` without an intercept
    (same seed, same iterates), for dense and CSR input; ``fun`` includes lam/2 b^2; the
    caller's ``X`` is not modified."""
    import scipy.sparse as sps

    X, y = _data(seed=5)
    Xa = np.hstack([X, np.ones((X.shape[0], 1))])
    Xin = sps.csr_matrix(X) if sparse else X.copy()
    before = Xin.copy()
    kw = dict(batch_size=4, average=50, max_epochs=5, random_state=3)
    reg = Solver.pegasos(1e-3, fit_intercept="regularized", **kw).fit(Xin, y)
    ref = Solver.pegasos(1e-3, **kw).fit(sps.csr_matrix(Xa) if sparse else Xa, y)
    np.testing.assert_array_equal(reg.w, ref.w)
    np.testing.assert_array_equal(reg.coef, ref.w[:-1])
    assert reg.intercept == ref.w[-1] and reg.fun == ref.fun
    margins = y * (X @ reg.coef + reg.intercept)
    expect = 0.5e-3 * (reg.coef @ reg.coef + reg.intercept ** 2) + np.mean(np.maximum(0, 1 - margins))
    assert reg.fun == pytest.approx(expect, rel=1e-12)
    if sparse:
        assert (Xin != before).nnz == 0
    else:
        np.testing.assert_array_equal(Xin, before)


def test_fit_intercept_rejects_unknown_modes() -> None:
    with pytest.raises(ValueError, match="fit_intercept must be True, False or 'regularized'"):
        Solver(fit_intercept="penalized")  # type: ignore[arg-type]


def test_presets_compose_the_named_components() -> None:
    X, y = _data()
    expect = {
        "sgd": (Identity, Fixed, InverseSqrt, type(None)),
        "asgd": (Identity, Fixed, InverseSqrt, type(None)),
        "adagrad": (AdaGrad, Fixed, Constant, type(None)),
        "smd": (Identity, Fixed, InverseSqrt, LazyProjection),
        "seg_pm": (Identity, Fixed, InverseSqrt, ExpGradPM),
        "gd": (Identity, Full, Constant, type(None)),
        "pgd": (Identity, Full, Constant, L1Ball),
        "pegasos": (Identity, Fixed, PegasosStep, L2Ball),
        "sqb": (QuadraticBound, Geometric, Constant, type(None)),
        "lbfgs": (LBFGS, Full, Wolfe, type(None)),
        "saga": (Identity, Fixed, Constant, type(None)),
        "svrg": (Identity, Fixed, Constant, type(None)),
        "svrg_lbfgs": (HessianLBFGS, Fixed, Constant, type(None)),
        "progressive_lbfgs": (LBFGS, Fixed, Armijo, type(None)),
        "multibatch_lbfgs": (LBFGS, Geometric, Armijo, type(None)),
    }
    assert set(expect) == set(PRESETS)
    for name, (curv, sched, step, proj) in expect.items():
        extra = {"eta": 0.05} if name in ("saga", "svrg", "svrg_lbfgs") else {}
        s = make(name, lam=1e-2, max_iter=50, random_state=0, **extra)
        assert isinstance(s.curvature, curv) and isinstance(s.schedule, sched)
        assert isinstance(s.step, step) and isinstance(s.projection, proj), name
        res = s.fit(X, y)
        if name in ("lbfgs", "progressive_lbfgs", "multibatch_lbfgs"):
            # they stop at their default gtol=1e-8 first (progressive_lbfgs, multibatch_lbfgs:
            # the first batch, 512, is the whole of these 300 samples)
            assert res.status.value == "gtol" and 0 < res.n_iter < 50, res.message
        else:
            assert np.isfinite(res.fun) and res.n_iter == 50
    assert make("asgd").average is True
    assert isinstance(make("saga", eta=0.1).gradient, SAGA)
    vr = make("svrg_lbfgs", eta=0.1, batch_size=32)
    assert isinstance(vr.gradient, SVRG) and vr.curvature_schedule == Fixed(64)
    pb = make("progressive_lbfgs", theta=0.5, batch_size=64)
    assert pb.gradient == ProgressiveBatch(0.5) and pb.schedule == Fixed(64)
    assert pb.sampling == "subset"
    # the step from the data when the solve starts unless eta is given
    assert make("saga").step == LipschitzStep(3.0)
    assert make("svrg", batch_size=8).step == LipschitzStep(1.0)
    assert make("saga", eta=0.05).step == Constant(0.05)
    sqb = make("sqb", lam=0.5)
    assert sqb.curvature == QuadraticBound(solver="cg") and sqb.sampling == "subset"
    assert sqb.curvature_schedule == Fixed(1000) and sqb.schedule == Geometric(100, 1.5)
    assert make("smd", radius=3.0).projection == LazyProjection(inner=L1Ball(3.0))
    assert make("sgd", objective="logloss", lam=0.5).objective.name == "logloss"
    with pytest.raises(KeyError, match="unknown preset"):
        make("nope")
    with pytest.raises(ValueError, match="conflicts"):
        make("sgd", objective=Hinge(lam=1.0), lam=2.0)


def test_gd_is_deterministic_full_batch_descent() -> None:
    X, y = _data()
    lam, eps = 1e-2, 0.5
    res = Solver.preset("gd", lam=lam, eps=eps, max_iter=20, objective="squared_hinge").fit(X, y)
    w = np.zeros(X.shape[1])
    for _ in range(20):
        m = y * (X @ w)
        g = X.T @ (y * -2.0 * np.maximum(0.0, 1.0 - m)) / X.shape[0] + lam * w
        w = w - eps * g
    np.testing.assert_allclose(res.w, w, rtol=1e-10, atol=1e-12)
    assert res.n_samples == 20 * X.shape[0]


@pytest.mark.parametrize("seed", [0, 1])
def test_pegasos_first_steps_on_the_ball_are_not_a_divergence(seed: int) -> None:
    """Pegasos' steps 1/(lam t) put its first iterates on the ball of radius 1/sqrt(lam): on
    a9a at lam = 1e-4 the objective reaches 50 times F(w0) before falling below it. The ball
    bounds the iterate, so the divergence monitor does not stop it (it stopped seed 1 at
    iteration 1000, and any run whose history records the first iterations at iteration 10)."""
    import warnings

    from sqnopt.datasets import load_a9a

    X, y = load_a9a("train")
    Xt, yt = load_a9a("test")
    points = sorted({int(v) for v in np.geomspace(1, 5 * X.shape[0], 40)})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = Solver.pegasos(1e-4, random_state=seed, fit_intercept="regularized",
                             max_epochs=5, history_every=points).fit(X, y)
    assert res.status.value == "max_samples"
    assert np.max(res.history.objective[:12]) > 10.0        # the allowed excursion
    assert res.fun < 0.5
    acc = np.mean(np.where(Xt @ res.coef + res.intercept > 0, 1.0, -1.0) == yt)
    assert acc > 0.78 > np.mean(yt == -1.0)                 # majority class: 0.764
