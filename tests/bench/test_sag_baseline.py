"""The SAG benchmark baseline (``bench/native/_sag.pyx``): step-for-step against a NumPy SAG, and
convergence to SciPy's minimizer."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize as so

from native import BuildToolsMissing, load  # bench/native (bench/ is on pytest's pythonpath)

from sqnopt import LogLoss, SquaredHinge
from sqnopt.data import prepare
from sqnopt.datasets import make_boxes
from sqnopt.solver._sampler import SequenceSampler, UniformSampler

try:  # built on demand against the sqnopt under test
    SAGRunner = load("_sag").SAGRunner
except BuildToolsMissing as exc:
    pytest.skip(str(exc), allow_module_level=True)


def numpy_sag(X: np.ndarray, y: np.ndarray, lam: float, seq: np.ndarray, eps0: float,
              T0: float) -> np.ndarray:
    """Schmidt, Le Roux & Bach (2013), Algorithm 1, for the squared hinge (one sample/step)."""
    N, n = X.shape
    w = np.zeros(n)
    G = np.zeros(n)
    mem = np.zeros(N)
    seen = np.zeros(N, dtype=bool)
    trace = []
    for t, i in enumerate(seq):
        m = y[i] * (X[i] @ w)
        a = y[i] * (-2.0 * max(0.0, 1.0 - m))
        G += (a - mem[i]) * X[i]
        mem[i] = a
        seen[i] = True
        eps = eps0 * T0 / (T0 + t) if T0 > 0 else eps0
        w = (1 - eps * lam) * w - eps / seen.sum() * G
        trace.append(w.copy())
    return np.array(trace)


@pytest.mark.parametrize("T0", [0.0, 50.0])
def test_sag_matches_numpy_reference(T0: float) -> None:
    X, y = make_boxes(60, 7, random_state=0)
    seq = np.random.default_rng(1).integers(0, 60, size=150)
    lam = 1e-2
    obj = SquaredHinge(lam=lam).init(prepare(X, y))
    w = np.zeros(7)
    runner = SAGRunner(obj, SequenceSampler(60, np.random.PCG64(0), seq), w, 0.05, T0)
    trace = np.zeros((150, 7))
    assert runner.run(150, trace, 1) == 150
    np.testing.assert_allclose(trace, numpy_sag(X, y, lam, seq, 0.05, T0), rtol=1e-10,
                               atol=1e-12)
    assert runner.t == 150 and runner.n_seen == len(set(seq.tolist()))


def test_sag_constant_step_converges_to_scipy_minimizer() -> None:
    rng = np.random.default_rng(0)
    n, N, lam = 5, 80, 0.1
    X = rng.normal(size=(N, n))
    y = np.where(X @ rng.normal(size=n) > 0, 1.0, -1.0)
    obj = LogLoss(lam=lam).init(prepare(X, y))

    def f(w: np.ndarray) -> tuple[float, np.ndarray]:
        g = np.empty(n)
        return obj.full_gradient(w, g), g

    ref = so.minimize(f, np.zeros(n), jac=True, method="L-BFGS-B",
                      options={"gtol": 1e-12, "ftol": 1e-16})
    w = np.zeros(n)
    SAGRunner(obj, UniformSampler(N, np.random.PCG64(3)), w, 0.2, 0.0).run(60_000)
    assert np.linalg.norm(w - ref.x) / np.linalg.norm(ref.x) < 1e-8


def test_sag_rejects_mismatched_inputs() -> None:
    X, y = make_boxes(20, 3, random_state=0)
    obj = SquaredHinge().init(prepare(X, y))
    with pytest.raises(ValueError, match="length"):
        SAGRunner(obj, UniformSampler(20, np.random.PCG64(0)), np.zeros(4), 0.1, 0.0)
    with pytest.raises(ValueError, match="samples"):
        SAGRunner(obj, UniformSampler(21, np.random.PCG64(0)), np.zeros(3), 0.1, 0.0)
    with pytest.raises(ValueError, match="eps0"):
        SAGRunner(obj, UniformSampler(20, np.random.PCG64(0)), np.zeros(3), 0.0, 0.0)
