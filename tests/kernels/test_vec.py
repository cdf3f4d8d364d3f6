"""The dense-row vector kernels: the documented sixteen-partial-sum order of ``sqnopt/_simd.h``,
exactly, for float64 and float32 rows of lengths around the unrolled block boundaries;
non-finite detection in the fused step ``out = w - eps d`` for short and long vectors."""

from __future__ import annotations

import numpy as np
import pytest

from sqnopt import Constant, DivergenceWarning, Fixed, Identity, Solver, SquaredHinge, Status
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
    with pytest.warns(DivergenceWarning, match=r"diverged at iteration \d+"):
        res = solver.fit(X, y)
    assert res.status is Status.DIVERGED


@pytest.mark.parametrize("lam", [0.0, 0.3])
@pytest.mark.parametrize("intercept", [False, True])
@pytest.mark.parametrize("n", [7, 24, 100])
def test_minibatch_gradient_is_exact(n: int, intercept: bool, lam: float) -> None:
    """The margin objectives' minibatch gradient and value, operation for operation: rows summed
    in batch order (the row layer's dot and axpy; the next row hinted while the current one is
    used), then the regulariser's gradient ``lam w`` and value ``lam / 2 ||w||^2`` (intercept
    excluded, the sixteen-lane order)."""
    from sqnopt.objectives._margin import SquaredHingeKernel

    rng = np.random.default_rng(n)
    X = rng.normal(size=(6, n)) * np.exp(rng.normal(size=(6, n)))
    y = np.where(rng.random(6) < 0.5, -1.0, 1.0)
    gw = rng.uniform(0.5, 2.0, size=6)
    kernel = SquaredHingeKernel(DenseRows64(X, y, gw, gw, intercept), lam)
    dim = n + intercept
    w = rng.normal(size=dim) * 0.3
    batch = np.array([4, 1, 1, 5, 0], dtype=np.intp)
    out = np.full(dim, np.nan)
    value = kernel.gradient(w, batch, out)

    inv = 1.0 / len(batch)
    g = np.zeros(dim)
    total = 0.0
    for i in batch:
        m = y[i] * (_sixteen_lane_dot(X[i], w[:n]) + (w[n] if intercept else 0.0))
        z = 1.0 - m
        total += gw[i] * (z * z if z > 0.0 else 0.0)
        coef = inv * gw[i] * y[i] * (-2.0 * z if z > 0.0 else 0.0)
        if coef != 0.0:
            g[:n] = g[:n] + coef * X[i]
            if intercept:
                g[n] += coef
    if lam != 0.0:
        g[:n] = g[:n] + lam * w[:n]
    expect = total * inv + 0.5 * lam * _sixteen_lane_dot(w[:n], w[:n])
    np.testing.assert_array_equal(out, g)
    assert value == expect


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_scaled_iterate_row_norms_follow_the_dense_order(dtype: type) -> None:
    """The scaled sparse iterate's row norms ``||x_i||^2`` (its projection bookkeeping) are
    ``sq_dot(x, x)`` of the stored values (``sq_sqnorm_f32`` for float32), in the order above."""
    import scipy.sparse as sp

    from sqnopt.data import CSRRows32, CSRRows64
    from sqnopt.solver._scaled_loop import _row_sqnorms

    lengths = [0, 1, 7, 8, 9, 15, 16, 17, 24, 25, 33, 100]
    rng = np.random.default_rng(7)
    rows = [rng.choice(300, size=k, replace=False) for k in lengths]
    X = sp.csr_matrix((np.concatenate([rng.normal(size=k) * np.exp(rng.normal(size=k) * 3)
                                       for k in lengths]).astype(dtype),
                       np.concatenate([np.sort(r) for r in rows]).astype(np.int32),
                       np.concatenate([[0], np.cumsum(lengths)])), shape=(len(lengths), 300))
    cls = CSRRows64 if dtype == np.float64 else CSRRows32
    n = len(lengths)
    data = cls(X.data, X.indices, X.indptr.astype(np.intp), 300, np.ones(n), np.ones(n),
               np.ones(n), False)
    got = _row_sqnorms(data)
    for i in range(n):
        x = X.data[X.indptr[i]:X.indptr[i + 1]].astype(np.float64)
        assert got[i] == _sixteen_lane_dot(x, x), (i, lengths[i])
