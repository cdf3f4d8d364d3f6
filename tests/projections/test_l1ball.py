"""Projection onto the l1 ball: compiled randomized pivot vs sort-based twin vs optimality."""

from __future__ import annotations

import numpy as np
import pytest

from sqnopt import Solver
from sqnopt.interfaces import Problem
from sqnopt.projections import L1Ball, L1BallKernel
from sqnopt.projections.reference import L1BallNumPy, l1_threshold_sort, project_l1_ball
from sqnopt.registry import get_registry


def _problem(n_features: int, n_blocks: int = 1, intercept: bool = False) -> Problem:
    dim = n_features + int(intercept)
    return Problem(n_samples=10, n_features=n_features, dim=dim, n_blocks=n_blocks,
                   n_params=n_blocks * dim, lam=1e-2, fit_intercept=intercept,
                   capabilities=frozenset())


def _project(v: np.ndarray, radius: float, n_blocks: int = 1, intercept: bool = False
             ) -> np.ndarray:
    out = np.array(v, dtype=np.float64)
    n_features = v.shape[0] // n_blocks - int(intercept)
    L1Ball(radius).init(_problem(n_features, n_blocks, intercept)).project(out)
    return out


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("n", [1, 2, 7, 100, 1000])
def test_matches_sort_based_and_is_optimal(seed: int, n: int) -> None:
    rng = np.random.default_rng(seed)
    v = rng.normal(size=n) * rng.choice([0.01, 1.0, 100.0])
    v[rng.random(n) < 0.3] = 0.0
    radius = float(rng.uniform(0.1, 2.0))
    x = _project(v, radius)
    ref = project_l1_ball(v, radius)
    np.testing.assert_allclose(x, ref, rtol=1e-12, atol=1e-12 * max(1.0, np.abs(v).max()))
    if np.abs(v).sum() <= radius:
        np.testing.assert_array_equal(x, v)
        return
    # On the sphere, soft thresholding with one theta, signs kept (the KKT conditions).
    assert np.abs(x).sum() == pytest.approx(radius, rel=1e-12)
    active = x != 0
    theta = np.abs(v[active]) - np.abs(x[active])
    assert np.ptp(theta) <= 1e-9 * max(1.0, np.abs(v).max())
    assert np.all(np.abs(v[~active]) <= theta[0] + 1e-12 * max(1.0, np.abs(v).max()))
    assert np.all(np.sign(x[active]) == np.sign(v[active]))
    # No other point of the ball is closer (random feasible points).
    d = np.linalg.norm(v - x)
    for _ in range(50):
        z = rng.normal(size=n)
        z *= rng.uniform(0, radius) / np.abs(z).sum()
        assert np.linalg.norm(v - z) >= d - 1e-12


def test_ties_and_equal_magnitudes() -> None:
    v = np.array([3.0, -3.0, 3.0, 1.0, -1.0, 0.0, 3.0])
    x = _project(v, 4.0)
    np.testing.assert_allclose(x, [1.0, -1.0, 1.0, 0.0, 0.0, 0.0, 1.0], atol=1e-15)
    assert l1_threshold_sort(np.abs(v[v != 0]), 4.0) == pytest.approx(2.0)


def test_intercept_is_free_and_blocks_share_the_ball() -> None:
    v = np.array([2.0, -2.0, 50.0, 1.0, 1.0, -50.0])  # 2 blocks of (2 weights + intercept)
    x = _project(v, 2.0, n_blocks=2, intercept=True)
    assert x[2] == 50.0 and x[5] == -50.0
    assert np.abs(x[[0, 1, 3, 4]]).sum() == pytest.approx(2.0)
    np.testing.assert_allclose(x[[0, 1, 3, 4]], project_l1_ball(v[[0, 1, 3, 4]], 2.0))


def test_solver_compiled_matches_numpy_twin() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 30))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=200) > 0, 1.0, -1.0)
    ws = {}
    for proj in (L1Ball(radius=2.0), L1BallNumPy(radius=2.0)):
        out: list[np.ndarray] = []
        Solver(objective="hinge", curvature="identity", schedule=("fixed", {"size": 3}),
               step=("inverse_sqrt", {"eps0": 0.5}), projection=proj, fit_intercept=True,
               max_iter=100, report_every=1, random_state=0,
               callback=lambda info, out=out: out.append(info.w.copy())).fit(X, y)
        ws[proj.name] = np.array(out)
    np.testing.assert_allclose(ws["l1ball"], ws["l1ball_numpy"], rtol=0, atol=1e-12)
    assert np.all(np.abs(ws["l1ball"][:, :-1]).sum(axis=1) <= 2.0 + 1e-12)


def test_registered_and_validated() -> None:
    assert isinstance(get_registry().create("projection", "l1ball", radius=3.0), L1Ball)
    assert get_registry().get("projection", "l1").name == "l1ball"
    for bad in (0.0, -1.0, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="radius"):
            L1Ball(bad)
    with pytest.raises(ValueError, match="radius"):
        L1BallKernel(3, 3, 3, 0.0)
