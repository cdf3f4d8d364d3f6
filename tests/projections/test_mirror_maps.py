"""Mirror maps (stochastic mirror descent, exponentiated gradient +-) in the projection slot."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt import Solver
from sqnopt.curvature import AdaGrad
from sqnopt.curvature.reference import AdaGradNumPy
from sqnopt.interfaces import Problem
from sqnopt.projections import (
    ExpGradPM,
    ExpGradPMKernel,
    L1Ball,
    L2Ball,
    LazyProjection,
    LazyProjectionKernel,
    MirrorMap,
)
from sqnopt.projections.reference import (
    ExpGradPMNumPy,
    L1BallNumPy,
    LazyProjectionNumPy,
    project_l1_ball,
)
from sqnopt.registry import get_registry


def _data(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(150, 12))
    y = np.where(X @ rng.normal(size=12) + 0.3 * rng.normal(size=150) > 0, 1.0, -1.0)
    return X, y


def _iterates(projection: Any, X: Any, y: np.ndarray, **kw: Any) -> np.ndarray:
    out: list[np.ndarray] = []
    cfg: dict[str, Any] = dict(objective=("hinge", {"lam": 1e-2}), curvature="identity",
                               schedule=("fixed", {"size": 2}), step=("inverse_sqrt", {"eps0": 0.5}),
                               max_iter=120, report_every=1, random_state=3)
    cfg.update(kw)
    Solver(projection=projection, callback=lambda info: out.append(info.w.copy()), **cfg).fit(X, y)
    return np.array(out)


def _problem(n_features: int, intercept: bool = False) -> Problem:
    dim = n_features + int(intercept)
    return Problem(n_samples=1, n_features=n_features, dim=dim, n_blocks=1, n_params=dim,
                   lam=0.0, fit_intercept=intercept, capabilities=frozenset())


@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("fmt", ["dense", "csr"])
def test_compiled_mirror_maps_match_numpy_twins(fit_intercept: bool, fmt: str) -> None:
    X, y = _data()
    Xf = sp.csr_matrix(X) if fmt == "csr" else X
    pairs = [(LazyProjection(inner=L1Ball(1.5)), LazyProjectionNumPy(inner=L1BallNumPy(1.5))),
             (LazyProjection(), LazyProjectionNumPy()),
             (ExpGradPM(radius=2.0), ExpGradPMNumPy(radius=2.0))]
    for compiled, twin in pairs:
        a = _iterates(compiled, Xf, y, fit_intercept=fit_intercept)
        b = _iterates(twin, Xf, y, fit_intercept=fit_intercept)
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12, err_msg=compiled.describe())
        # with a non-identity curvature too: the direction is whatever the model returns
        a = _iterates(compiled, Xf, y, curvature=AdaGrad(initial_accumulator=1e-4),
                      step=("constant", {"eps": 0.3}), fit_intercept=fit_intercept)
        b = _iterates(twin, Xf, y, curvature=AdaGradNumPy(initial_accumulator=1e-4),
                      step=("constant", {"eps": 0.3}), fit_intercept=fit_intercept)
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12, err_msg=compiled.describe())


def test_python_path_is_bit_identical() -> None:
    X, y = _data(1)
    for proj in (LazyProjection(inner=L1Ball(1.0)), ExpGradPM(radius=1.0)):
        a = _iterates(proj, X, y, path="generic")
        b = _iterates(proj, X, y, path="python")
        np.testing.assert_array_equal(a, b)


def test_lazy_projection_without_constraint_is_sgd() -> None:
    X, y = _data(2)
    a = _iterates(LazyProjection(), X, y, path="generic")
    b = _iterates(None, X, y, path="generic")
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_lazy_projection_is_dual_averaging_not_projected_sgd() -> None:
    """theta accumulates every step unprojected; w = P(theta) (checked against a hand loop)."""
    kernel = LazyProjection(inner=L1Ball(1.0)).init(_problem(5))
    assert isinstance(kernel, LazyProjectionKernel)
    rng = np.random.default_rng(0)
    theta = np.zeros(5)
    w = np.zeros(5)
    for t in range(30):
        d = rng.normal(size=5)
        eps = 0.7 / np.sqrt(t + 1)
        z = w - eps * d
        kernel.project(z)
        theta = theta - eps * d
        w = project_l1_ball(theta, 1.0)
        np.testing.assert_allclose(z, w, rtol=0, atol=1e-12)
        np.testing.assert_allclose(kernel.theta, theta, rtol=0, atol=1e-12)
    assert np.abs(theta).sum() > 1.0 + 1e-3   # the dual point is outside the ball


def test_exponentiated_gradient_pm_is_multiplicative_update_on_2n_simplex() -> None:
    n, radius = 6, 3.0
    kernel = ExpGradPM(radius=radius).init(_problem(n))
    rng = np.random.default_rng(1)
    p = np.full(2 * n, 1.0 / (2 * n))           # (p+, p-) uniform: w = 0
    w = np.zeros(n)
    for t in range(40):
        d = rng.normal(size=n) * 3
        eps = 1.0 / np.sqrt(t + 1)
        z = w - eps * d
        kernel.project(z)
        p = p * np.exp(-eps * np.concatenate([d, -d]))
        p /= p.sum()
        w = radius * (p[:n] - p[n:])
        np.testing.assert_allclose(z, w, rtol=1e-12, atol=1e-13)
        assert np.abs(z).sum() < radius


def test_exponentiated_gradient_pm_extreme_duals_stay_finite() -> None:
    kernel = ExpGradPM(radius=10.0).init(_problem(3))
    z = np.array([-5e3, 1e3, 0.0])
    kernel.project(z)   # theta = z: exp(5000) would overflow without the shift
    assert np.all(np.isfinite(z))
    np.testing.assert_allclose(z, [-10.0, 0.0, 0.0], atol=1e-12)


def test_start_sets_the_dual_from_w0() -> None:
    X, y = _data(3)
    w0 = np.zeros(X.shape[1])
    w0[:3] = [0.5, -0.25, 0.1]
    solver = Solver(objective="hinge", projection=ExpGradPM(radius=2.0), max_iter=0)
    state = solver.init_state(X, y, w0=w0)
    kern = state.projection
    assert isinstance(kern, ExpGradPMKernel)
    th = kern.theta
    back = 2.0 * np.sinh(th) / np.cosh(th).sum()
    np.testing.assert_allclose(back, w0, rtol=1e-10, atol=1e-13)
    with pytest.raises(ValueError, match="strictly inside the l1 ball"):
        solver.init_state(X, y, w0=np.full(X.shape[1], 1.0))
    lazy = Solver(objective="hinge", projection=LazyProjection(inner=L2Ball(5.0)), max_iter=0)
    lstate = lazy.init_state(X, y, w0=w0)
    assert isinstance(lstate.projection, LazyProjectionKernel)
    np.testing.assert_array_equal(lstate.projection.theta, w0)


def test_mirror_maps_run_the_generic_loop_and_register() -> None:
    X, y = _data()
    from sqnopt.solver._loop import CompiledLoop

    for name in ("lazy_projection", "eg_pm", "dual_averaging", "egpm"):
        proj = get_registry().create("projection", name)
        assert isinstance(proj, MirrorMap)
        state = Solver(objective="hinge", projection=proj).init_state(X, y)
        assert isinstance(state.loop, CompiledLoop)
    nested = get_registry().create("projection", "lazy_projection",
                                   inner=("l1ball", {"radius": 4.0}))
    assert isinstance(nested, LazyProjection) and nested.inner == L1Ball(4.0)
    with pytest.raises(ValueError, match="not a mirror map"):
        LazyProjection(inner=ExpGradPM())
    with pytest.raises(ValueError, match="radius"):
        ExpGradPM(radius=0.0)
