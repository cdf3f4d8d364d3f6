"""Kernel Pegasos (alpha representation) and the random-feature route."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt import Solver
from sqnopt.data import make_rows
from sqnopt.kernel._expansion import PythonKernelIterate
from sqnopt.objectives._margin import HingeKernel
from sqnopt.projections._base import L2BallKernel
from sqnopt.schedules._base import FixedKernel
from sqnopt.solver._loop import Counters
from sqnopt.solver._pyloop import PythonLoop
from sqnopt.solver._sampler import UniformSampler
from sqnopt.solver._solver import make_bit_generator
from sqnopt.steps._base import PegasosStepKernel
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

    for k, intercept in ((1, False), (4, True)):
        common = dict(lam=1e-2, max_iter=200, batch_size=k, fit_intercept=intercept,
                      random_state=1)
        a = KernelPegasos(rbf, **common).fit(X, y)  # type: ignore[arg-type]
        b = KernelPegasos("rbf", gamma=2.0, **common).fit(X, y)  # type: ignore[arg-type]
        # the Python driver with the callable's expansion, the compiled one with RBFMercer:
        # the same iteration, equal to rounding (the kernel values differ in the last bits)
        np.testing.assert_array_equal(a.support_, b.support_)
        np.testing.assert_allclose(a.dual_coef_, b.dual_coef_, rtol=1e-10, atol=1e-13)
        assert a.intercept_ == pytest.approx(b.intercept_, abs=1e-12)
        assert a.n_kernel_evals_ == b.n_kernel_evals_ and a.n_iter_ == b.n_iter_ == 200
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


def _rbf2(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    d2 = ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1)
    return np.exp(-2.0 * d2)


def _python_loop(X: np.ndarray, y: np.ndarray, *, seed: int = 0, k: int = 2,
                 project: bool = True) -> tuple[PythonLoop, PythonKernelIterate, Counters]:
    """The callable path's pieces, as ``KernelPegasos._fit_python`` builds them."""

    n, lam = X.shape[0], 1e-2
    yy = np.where(y == y[0], 1.0, -1.0)
    obj = HingeKernel(make_rows(X, yy, np.ones(n), np.ones(n), False), lam)
    it = PythonKernelIterate(obj, X, yy, np.ones(n), _rbf2, True)
    ball = L2BallKernel(n, n, n, 1.0 / np.sqrt(lam)) if project else None
    counters = Counters()
    loop = PythonLoop.with_iterate(obj, it, FixedKernel(n, k), PegasosStepKernel(lam), ball,
                                   UniformSampler(n, make_bit_generator(seed)), counters)
    return loop, it, counters


def test_callable_kernel_runs_on_the_python_driver() -> None:
    """A kernel callable is an iterate representation of the Python driver: the record and
    the budgets are the driver's, the loop declares no dense iterate."""
    from sqnopt.interfaces import IterateKernelLike
    from sqnopt.solver._loop import EXIT_CODES

    X, y = _circles(60)
    loop, it, c = _python_loop(X, y)
    assert isinstance(it, IterateKernelLike) and isinstance(it, PythonKernelIterate)
    assert loop.loop_kind == "kernel" and loop.lazy_iterate and not loop.tests_full_batch
    assert loop.run(7, 0) == EXIT_CODES["LOOP_DONE"]
    assert (c.t, c.n_samples, c.n_grad_evals, c.n_loss) == (7, 14, 7, 7)
    assert c.last_step == pytest.approx(1.0 / (1e-2 * 7))
    # the sample budget stops before an iteration, as in the compiled loop
    assert loop.run(100, 20) == EXIT_CODES["LOOP_MAX_SAMPLES"]
    assert (c.t, c.n_samples) == (10, 20)
    # the same fit through the estimator: same iterates
    kp = KernelPegasos(_rbf2, lam=1e-2, batch_size=2, max_iter=10, fit_intercept=True,
                       random_state=0).fit(X, np.where(y == y[0], 1, -1))
    np.testing.assert_array_equal(kp.support_, it.support)
    np.testing.assert_array_equal(kp.dual_coef_, it.coefficients)


def test_python_kernel_checkpoint_resumes_the_same_iterates() -> None:
    """The driver's state plus the representation's: stop after 13 iterations, restore into a
    fresh loop (the sampler's state carried as the solver carries it) and continue; the
    iterates are those of one run of 40. A state of another loop or size is refused."""
    from sqnopt.checkpoint import CheckpointError

    X, y = _circles(50)
    straight, it0, _ = _python_loop(X, y, seed=4)
    straight.run(40, 0)
    first, _, c1 = _python_loop(X, y, seed=4)
    first.run(13, 0)
    state = first.get_state()
    second, it2, c2 = _python_loop(X, y, seed=4)
    second.sampler = first.sampler
    for name in ("t", "n_samples", "n_avg"):
        setattr(c2, name, getattr(c1, name))
    second.set_state(state)
    second.run(27, 0)
    np.testing.assert_array_equal(it2.support, it0.support)
    np.testing.assert_array_equal(it2.coefficients, it0.coefficients)
    assert it2.intercept == it0.intercept and it2.sqnorm == it0.sqnorm
    with pytest.raises(CheckpointError, match="generic"):
        second.set_state({"loop": "generic"})
    other, _, _ = _python_loop(X[:40], y[:40])
    with pytest.raises(CheckpointError, match="other data"):
        other.set_state(state)
    # counters moved from outside: the expansion has no dense iterate to rebuild from
    c2.t += 1
    with pytest.raises(CheckpointError, match="no dense iterate"):
        second.run(1, 0)


class _Clip:
    """A Python projection that is no Euclidean ball (declares no ``ball_radius``)."""

    def project(self, w: np.ndarray) -> None:
        np.clip(w, -1.0, 1.0, out=w)


def test_python_driver_refuses_a_representation_it_cannot_run() -> None:
    from sqnopt.steps._base import ArmijoKernel

    X, y = _circles(20)
    yy = np.where(y == y[0], 1.0, -1.0)
    obj = HingeKernel(make_rows(X, yy, np.ones(20), np.ones(20), False), 0.1)
    it = PythonKernelIterate(obj, X, yy, np.ones(20), _rbf2, False)
    sampler = UniformSampler(20, make_bit_generator(0))
    with pytest.raises(ValueError, match="line search"):
        PythonLoop.with_iterate(obj, it, FixedKernel(20, 1), ArmijoKernel(1.0, 1e-4, 0.5, 10),
                                None, sampler, Counters())
    with pytest.raises(ValueError, match="Euclidean ball"):
        PythonLoop.with_iterate(obj, it, FixedKernel(20, 1), PegasosStepKernel(0.1),
                                _Clip(), sampler, Counters())


def test_a_non_finite_iterate_stops_the_callable_path_too() -> None:
    from sqnopt import DivergenceWarning

    X, y = _circles(40)
    X = X * 1e70

    def poly(A: np.ndarray, B: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):
            return (A @ B.T + 1.0) ** 3

    with pytest.warns(DivergenceWarning, match="non-finite.*last finite iterate"):
        kp = KernelPegasos(poly, lam=1e-2, max_iter=10, random_state=0).fit(X, y)
    assert kp.n_iter_ < 10
    assert np.all(np.isfinite(kp.dual_coef_)) and np.isfinite(kp.sqnorm_)
