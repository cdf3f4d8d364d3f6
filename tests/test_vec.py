"""The dense-row vector kernels: the documented sixteen-partial-sum order of ``sqnopt/_simd.h``,
exactly, for float64 and float32 rows of lengths around the unrolled block boundaries;
non-finite detection in the fused step ``out = w - eps d`` for short and long vectors."""

from __future__ import annotations

import numpy as np
import pytest

from sqnopt import Constant, DivergenceError, Fixed, Identity, Solver, SquaredHinge
from sqnopt.data import DenseRows32, DenseRows64


def _sixteen_lane_dot(a: np.ndarray, b: np.ndarray) -> float:
    """The order of ``sqnopt/_simd.h``: lane k of s0 / s1 sums the terms 16 q + k / 16 q + 8 + k
    of the full blocks of 16, one more block of 8 goes to s0, the tail (left to right) to t;
    then hsum(s0 + s1) + t with hsum(v) = ((v0 + v1) + (v2 + v3)) + ((v4 + v5) + (v6 + v7))."""
    n = len(a)
    s0, s1 = [0.0] * 8, [0.0] * 8
    n16 = n - n % 16
    for j in range(n16):
        (s0 if j % 16 < 8 else s1)[j % 8] += float(a[j]) * float(b[j])
    j = n16
    if j + 8 <= n:
        for k in range(8):
            s0[k] += float(a[j + k]) * float(b[j + k])
        j += 8
    t = 0.0
    for jj in range(j, n):
        t += float(a[jj]) * float(b[jj])
    v = [s0[k] + s1[k] for k in range(8)]
    return (((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]))) + t


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n", [1, 3, 4, 7, 8, 9, 15, 16, 17, 23, 24, 25, 31, 32, 33, 35, 100, 1001])
def test_dense_dot_and_axpy_are_exact(n: int, dtype: type) -> None:
    rng = np.random.default_rng(n)
    X = (rng.normal(size=(2, n)) * np.exp(rng.normal(size=(2, n)) * 3)).astype(dtype)
    cls = DenseRows64 if dtype == np.float64 else DenseRows32
    rows = cls(X, np.ones(2), np.ones(2), np.ones(2), False)
    Xd = X.astype(np.float64)
    w = rng.normal(size=n)
    assert rows.dot(1, w) == _sixteen_lane_dot(Xd[1], w)
    out = rng.normal(size=n)
    expect = out + 0.37 * Xd[0]
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
