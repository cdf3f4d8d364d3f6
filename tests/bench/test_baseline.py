"""The bare benchmark baselines (``bench/native/_baseline.pyx``) compute what they claim to.

A baseline that computed something cheaper would make every ratio measured against it wrong,
so each is checked against a short NumPy version under the same random stream.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from native import BuildToolsMissing, load  # bench/native (bench/ is on pytest's pythonpath)

from sqnopt.solver._sampler import UniformSampler

try:  # built on demand against the sqnopt under test
    _baseline = load("_baseline")
except BuildToolsMissing as exc:
    pytest.skip(str(exc), allow_module_level=True)
bare_sgd_squared_hinge = _baseline.bare_sgd_squared_hinge
bare_sparse_pegasos = _baseline.bare_sparse_pegasos


def _pegasos_numpy(X: np.ndarray, y: np.ndarray, w0: np.ndarray, lam: float, t_start: int,
                   rows: np.ndarray) -> np.ndarray:
    w = w0.copy()
    r2 = 1.0 / lam
    for k, i in enumerate(rows):
        t = t_start + k
        margin = y[i] * (X[i] @ w)
        w *= 1.0 - 1.0 / t
        if margin < 1.0:
            w += y[i] / (lam * t) * X[i]
        sq = w @ w
        if sq > r2:
            w *= np.sqrt(r2 / sq)
    return w


@pytest.mark.parametrize("lam", [0.5, 1e-3])
def test_bare_sparse_pegasos_matches_numpy_under_the_same_draws(lam: float) -> None:
    rng = np.random.default_rng(0)
    X = sp.random(9, 40, density=0.3, format="csr", random_state=1, dtype=np.float64)
    X.data = rng.normal(size=X.data.shape)
    y = np.where(rng.random(9) < 0.5, -1.0, 1.0)
    w0 = rng.normal(size=40) * 0.1
    n_iter, t_start, seed = 300, 2, 7
    sampler = UniformSampler(9, np.random.PCG64(seed))
    rows = np.array([sampler.draw(1)[0] for _ in range(n_iter)])
    expect = _pegasos_numpy(X.toarray(), y, w0, lam, t_start, rows)

    v = w0.copy()
    rowsq = np.asarray(X.multiply(X).sum(axis=1)).ravel()
    nu = bare_sparse_pegasos(X.indptr.astype(np.int32), X.indices.astype(np.int32), X.data, y,
                             rowsq, v, lam, t_start, n_iter, np.random.PCG64(seed))
    np.testing.assert_allclose(v, expect, rtol=1e-10, atol=1e-12)
    assert nu == pytest.approx(float(expect @ expect), rel=1e-9)
    assert not np.allclose(v, w0)       # it moved


def test_bare_sparse_pegasos_rejects_the_first_step() -> None:
    X = sp.identity(3, format="csr")
    with pytest.raises(ValueError, match="t_start"):
        bare_sparse_pegasos(X.indptr.astype(np.int32), X.indices.astype(np.int32), X.data,
                            np.ones(3), np.ones(3), np.zeros(3), 0.1, 1, 10,
                            np.random.PCG64(0))


def test_bare_sgd_squared_hinge_matches_numpy_under_the_same_draws() -> None:
    """The dense baseline of the issue-2 ratios: minibatch SGD on the squared hinge."""
    rng = np.random.default_rng(3)
    N, n, L, lam, eps0, T0, n_iter, seed = 50, 37, 5, 1e-2, 0.1, 10.0, 200, 11
    X = rng.normal(size=(N, n))
    y = np.where(rng.random(N) < 0.5, -1.0, 1.0)
    sampler = UniformSampler(N, np.random.PCG64(seed))
    w = np.zeros(n)
    for t in range(n_iter):
        b = sampler.draw(L)
        z = 1.0 - y[b] * (X[b] @ w)
        act = z > 0.0
        g = (-2.0 * z[act] * y[b][act] / L) @ X[b][act] + lam * w
        w = w - eps0 * T0 / (T0 + t) * g
    v = np.zeros(n)
    bare_sgd_squared_hinge(X, y, v, L, eps0, T0, lam, n_iter, np.random.PCG64(seed))
    np.testing.assert_allclose(v, w, rtol=1e-10, atol=1e-12)
    assert np.linalg.norm(v) > 0.1      # it moved


def test_bare_adagrad_composite_matches_the_solver_and_its_twin() -> None:
    """The bare composite AdaGrad pass against the solver's adaptive loop and the NumPy twin
    on the dense composite step (file order, one row per step)."""
    from sqnopt import Constant, Fixed, LogLoss, Solver
    from sqnopt.curvature import AdaGrad
    from sqnopt.curvature.reference import AdaGradNumPy
    from sqnopt.objectives.reference import LogLossNumPy

    rng = np.random.default_rng(5)
    N, n, lam, eta, delta = 120, 300, 1e-2, 0.5, 1e-8
    X = sp.random(N, n, density=0.02, format="csr", random_state=2, dtype=np.float64)
    X.data = rng.normal(size=X.data.shape)
    y = np.where(rng.random(N) < 0.4, -1.0, 1.0)
    order = np.concatenate([np.arange(N), np.arange(N)[::-1]]).astype(np.intp)
    w, G, last, b = np.zeros(n), np.zeros(n + 1), np.zeros(n), np.zeros(1)
    t, total = _baseline.bare_adagrad_composite(X.indptr.astype(np.intp), X.indices, X.data, y,
                                                order, w, G, last, b, 0.0, eta, lam, delta)
    s = delta + np.sqrt(G[:n])
    w = w * (s / (s + eta * lam)) ** (t - last)          # the pending shrinks
    assert t == 2 * N
    results = [Solver(objective=objective, curvature=curvature, schedule=Fixed(1),
                      step=Constant(eta), fit_intercept=True, batch_sequence=order,
                      max_iter=2 * N, monitor=None).fit(X, y)
               for objective, curvature in ((LogLoss(lam=lam), AdaGrad(composite=True)),
                                            (LogLossNumPy(lam=lam),
                                             AdaGradNumPy(composite=True)))]
    for result in results:
        np.testing.assert_allclose(result.coef, w, rtol=1e-12, atol=1e-14)
        assert result.intercept == pytest.approx(b[0], rel=1e-12)
        assert result.progressive_loss * result.progressive_weight == pytest.approx(total,
                                                                                   rel=1e-12)
    assert np.count_nonzero(w) > n // 2       # it moved
