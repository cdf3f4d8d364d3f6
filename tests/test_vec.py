"""The vector helpers of ``sqnopt/_vec.pxd``: the documented four-accumulator summation order,
exactly, for lengths around the unrolled block boundaries; non-finite detection in the fused
step ``out = w - eps d`` for short and long vectors."""

from __future__ import annotations

import numpy as np
import pytest

from sqnopt import Constant, DivergenceError, Fixed, Identity, Solver, SquaredHinge
from sqnopt.data import DenseRows64


def _four_lane_dot(a: np.ndarray, b: np.ndarray) -> float:
    """The documented order: lane k sums the terms j = k mod 4 of the full blocks of four, the
    tail goes to lane 0, then (s0 + s1) + (s2 + s3) -- in exact IEEE double steps."""
    s = [0.0, 0.0, 0.0, 0.0]
    n4 = len(a) - len(a) % 4
    for j in range(n4):
        s[j % 4] += float(a[j]) * float(b[j])
    for j in range(n4, len(a)):
        s[0] += float(a[j]) * float(b[j])
    return (s[0] + s[1]) + (s[2] + s[3])


@pytest.mark.parametrize("n", [1, 3, 4, 31, 32, 33, 35, 100, 1001])
def test_dot_and_axpy_are_exact_on_both_paths(n: int) -> None:
    rng = np.random.default_rng(n)
    X = rng.normal(size=(2, n)) * np.exp(rng.normal(size=(2, n)) * 3)   # wide magnitudes
    rows = DenseRows64(X, np.ones(2), np.ones(2), np.ones(2), False)
    w = rng.normal(size=n)
    assert rows.dot(1, w) == _four_lane_dot(X[1], w)
    out = rng.normal(size=n)
    expect = out + 0.37 * X[0]
    rows.axpy(0, 0.37, out)
    np.testing.assert_array_equal(out, expect)


@pytest.mark.parametrize("n_features", [5, 64])
def test_divergence_is_caught_for_short_and_long_iterates(n_features: int) -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, n_features)) * 1e3
    y = np.where(rng.random(200) < 0.5, -1.0, 1.0)
    solver = Solver(SquaredHinge(lam=1e-3), Identity(), Fixed(5), Constant(1e6), max_iter=1000,
                    random_state=0)
    with pytest.raises(DivergenceError, match=r"diverged at iteration \d+"):
        solver.fit(X, y)
