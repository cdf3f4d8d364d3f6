"""Kernel Pegasos (alpha representation) and the random-feature route."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt import Solver
from sqnopt.kernel._pegasos import LinearMercer, PolyMercer, RBFMercer
from sqnopt.kernel import ApproximateKernelPegasos, KernelPegasos, kernel_matrix


def _linear_data(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(250, 15)) * (rng.random((250, 15)) < 0.5)
    y = np.where(X @ rng.normal(size=15) + 0.3 * rng.normal(size=250) > 0, 1, -1)
    return X, y


def _circles(n: int = 400, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    r = np.where(rng.random(n) < 0.5, 0.4, 1.0)
    phi = rng.uniform(0, 2 * np.pi, n)
    X = np.c_[r * np.cos(phi), r * np.sin(phi)] + 0.08 * rng.normal(size=(n, 2))
    return X, np.where(r < 0.5, "inner", "outer")


@pytest.mark.parametrize("k", [1, 6])
@pytest.mark.parametrize("project", [True, False])
@pytest.mark.parametrize("fmt", ["dense", "csr"])
def test_linear_kernel_matches_linear_pegasos(k: int, project: bool, fmt: str) -> None:
    # Without an intercept: KernelPegasos' bias is unregularised, which the Solver refuses with
    # Pegasos' 1/(lam t) steps (its compiled and Python paths are compared below).
    X, y = _linear_data()
    Xf = sp.csr_matrix(X) if fmt == "csr" else X
    for T in (1, 2, 37, 400):
        kp = KernelPegasos("linear", lam=0.05, batch_size=k, max_iter=T, project=project,
                           random_state=11).fit(Xf, y)
        lin = Solver.pegasos(0.05, batch_size=k, max_iter=T, project=project,
                             sampling="uniform", random_state=11).fit(Xf, y)  # i.i.d., as KP
        np.testing.assert_allclose(kp.coef_, lin.coef, rtol=0, atol=1e-12)
        assert kp.intercept_ == pytest.approx(float(lin.intercept), abs=1e-12)
        assert kp.sqnorm_ == pytest.approx(float(lin.coef @ lin.coef), rel=1e-10, abs=1e-14)
        np.testing.assert_allclose(kp.decision_function(Xf), X @ lin.coef + lin.intercept,
                                   rtol=0, atol=1e-10)
        assert kp.n_iter_ == T


@pytest.mark.parametrize("kernel", ["rbf", "poly"])
def test_compiled_loop_matches_python_loop(kernel: str) -> None:
    X, y = _circles(200)
    common = dict(lam=1e-2, batch_size=3, max_iter=300, gamma=1.5, degree=2, fit_intercept=True,
                  random_state=0)
    a = KernelPegasos(kernel, **common).fit(X, y)  # type: ignore[arg-type]
    b = KernelPegasos(kernel, path="python", **common).fit(X, y)  # type: ignore[arg-type]
    np.testing.assert_array_equal(a.support_, b.support_)
    np.testing.assert_allclose(a.dual_coef_, b.dual_coef_, rtol=1e-12, atol=1e-14)
    assert a.intercept_ == pytest.approx(b.intercept_, abs=1e-12)
    assert a.n_kernel_evals_ == b.n_kernel_evals_


def test_callable_kernel_equals_builtin() -> None:
    X, y = _circles(150)

    def rbf(A: np.ndarray, B: np.ndarray) -> np.ndarray:
        d2 = ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1)
        return np.exp(-2.0 * d2)

    a = KernelPegasos(rbf, lam=1e-2, max_iter=200, random_state=1).fit(X, y)
    b = KernelPegasos("rbf", gamma=2.0, lam=1e-2, max_iter=200, random_state=1).fit(X, y)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-10)


def test_rbf_kernel_solves_a_nonlinear_problem() -> None:
    X, y = _circles()
    kp = KernelPegasos("rbf", lam=1e-3, gamma=2.0, max_epochs=5, random_state=0).fit(X, y)
    assert np.mean(kp.predict(X) == y) > 0.95
    assert set(kp.predict(X)) <= {"inner", "outer"}
    lin = KernelPegasos("linear", lam=1e-3, max_epochs=5, random_state=0).fit(X, y)
    assert np.mean(lin.predict(X) == y) < 0.75
    # the projection keeps ||w|| <= 1/sqrt(lam); the objective is the primal one
    assert kp.sqnorm_ <= 1.0 / 1e-3 * (1 + 1e-12)
    K = kernel_matrix("rbf", kp.support_vectors_, kp.support_vectors_, gamma=2.0)
    assert kp.sqnorm_ == pytest.approx(float(kp.dual_coef_ @ K @ kp.dual_coef_), rel=1e-8)
    assert 0.0 < kp.objective(X, y) < 1.0


@pytest.mark.parametrize("method", ["nystroem", "rff"])
def test_approximate_kernel_route(method: str) -> None:
    pytest.importorskip("sklearn")
    X, y = _circles()
    model = ApproximateKernelPegasos(method, gamma=2.0, n_components=200, lam=1e-3, max_epochs=5,
                                     random_state=0).fit(X, y)
    assert np.mean(model.predict(X) == y) > 0.95
    assert model.decision_function(X).shape == (X.shape[0],)


def test_mercer_kernels_and_validation() -> None:
    assert LinearMercer()(2.0, 1.0, 9.0) == 2.0
    assert RBFMercer(0.5)(1.0, 2.0, 3.0) == pytest.approx(np.exp(-0.5 * 3.0))
    assert RBFMercer(1.0)(1.0 + 1e-17, 1.0, 1.0) == 1.0        # clipped distance
    assert PolyMercer(2.0, 1.0, 3)(0.5, 0.0, 0.0) == pytest.approx(8.0)
    X, y = _circles(50)
    with pytest.raises(ValueError, match="kernel must be"):
        KernelPegasos("sigmoid").fit(X, y)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="lam"):
        KernelPegasos(lam=0.0).fit(X, y)
    with pytest.raises(RuntimeError, match="not fitted"):
        KernelPegasos().predict(X)
    kp = KernelPegasos(max_iter=10).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        kp.decision_function(np.ones((2, 3)))
    with pytest.raises(AttributeError, match="linear kernel"):
        _ = kp.coef_
    with pytest.raises(ValueError, match="shape"):
        KernelPegasos(lambda A, B: np.ones(3), max_iter=5).fit(X, y)


def test_kernel_expansion_is_a_representation_of_the_driver() -> None:
    """KernelPegasos runs the one compiled driver with the kernel expansion as its iterate
    representation, which declares that it has no dense iterate."""
    from sqnopt.kernel._pegasos import KernelIterate, KernelLoop
    from sqnopt.solver._iterate import IterateKernel
    from sqnopt.solver._loop import CompiledLoop
    from sqnopt.solver._scaled_loop import ScaledIterate

    assert issubclass(KernelLoop, CompiledLoop) and issubclass(KernelIterate, IterateKernel)
    assert KernelIterate.dense_iterate is False and KernelIterate.kind == "kernel"
    assert ScaledIterate.dense_iterate is True and IterateKernel.dense_iterate is True


def test_batch_larger_than_the_data_is_clipped_on_both_paths() -> None:
    X, y = _circles(30)
    a = KernelPegasos("rbf", gamma=1.0, lam=1e-2, batch_size=50, max_iter=20,
                      random_state=0).fit(X, y)
    b = KernelPegasos("rbf", gamma=1.0, lam=1e-2, batch_size=30, max_iter=20,
                      random_state=0).fit(X, y)
    c = KernelPegasos("rbf", gamma=1.0, lam=1e-2, batch_size=50, max_iter=20, random_state=0,
                      path="python").fit(X, y)
    np.testing.assert_array_equal(a.dual_coef_, b.dual_coef_)
    np.testing.assert_allclose(a.dual_coef_, c.dual_coef_, rtol=1e-12, atol=1e-14)


def test_a_non_finite_iterate_stops_the_fit_with_the_last_finite_one() -> None:
    from sqnopt import DivergenceWarning

    X, y = _circles(40)
    X = X * 1e70          # (gamma x.x' + 1)^3 overflows: K(x, x) is inf
    with pytest.warns(DivergenceWarning, match="non-finite.*last finite iterate"):
        kp = KernelPegasos("poly", gamma=1.0, degree=3, lam=1e-2, max_iter=10,
                           random_state=0).fit(X, y)
    assert kp.n_iter_ < 10
    assert np.all(np.isfinite(kp.dual_coef_)) and np.isfinite(kp.sqnorm_)
