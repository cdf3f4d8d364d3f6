"""Diagonal AdaGrad as a curvature model."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt import LogLoss, Solver
from sqnopt.curvature import AdaGrad, AdaGradKernel
from sqnopt.curvature.reference import AdaGradNumPy
from sqnopt.projections import L1Ball
from sqnopt.registry import get_registry
from sqnopt.solver._loop import CompiledLoop

from conftest import curvature_problem


def test_direction_accumulates_then_scales() -> None:
    kernel = AdaGrad(delta=1e-3, initial_accumulator=0.5).init(curvature_problem(4))
    assert isinstance(kernel, AdaGradKernel)
    rng = np.random.default_rng(0)
    G = np.full(4, 0.5)
    for _ in range(10):
        g = rng.normal(size=4)
        g[rng.random(4) < 0.3] = 0.0
        d = np.empty(4)
        kernel.direction(g, d)
        G += g * g
        np.testing.assert_allclose(d, g / (1e-3 + np.sqrt(G)), rtol=1e-15)
    np.testing.assert_allclose(kernel.accumulator, G, rtol=1e-15)
    # matvec / to_dense apply the current H and do not accumulate
    g = rng.normal(size=4)
    np.testing.assert_allclose(kernel.matvec(g), g / (1e-3 + np.sqrt(G)), rtol=1e-15)
    np.testing.assert_allclose(kernel.to_dense(), np.diag(1.0 / (1e-3 + np.sqrt(G))), rtol=1e-15)
    np.testing.assert_allclose(kernel.accumulator, G, rtol=1e-15)


def test_zero_gradient_with_zero_delta_is_zero_not_nan() -> None:
    kernel = AdaGrad(delta=0.0).init(curvature_problem(3))
    d = np.empty(3)
    kernel.direction(np.array([0.0, 2.0, 0.0]), d)
    np.testing.assert_array_equal(d, [0.0, 1.0, 0.0])
    assert np.all(np.isfinite(kernel.to_dense()))


@pytest.mark.parametrize("fmt", ["dense", "csr"])
def test_solver_compiled_matches_numpy_twin(fmt: str) -> None:
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 15)) * (rng.random((200, 15)) < 0.5)
    y = np.where(X @ rng.normal(size=15) > 0, 1.0, -1.0)
    Xf = sp.csr_matrix(X) if fmt == "csr" else X
    ws = {}
    for model in (AdaGrad(initial_accumulator=1e-4), AdaGradNumPy(initial_accumulator=1e-4)):
        out: list[np.ndarray] = []
        solver = Solver(objective=LogLoss(lam=1e-3), curvature=model, schedule=("fixed", {"size": 4}),
                        step=("constant", {"eps": 0.5}), projection=L1Ball(3.0),
                        fit_intercept=True, max_iter=150, report_every=1, random_state=0,
                        callback=lambda info, out=out: out.append(info.w.copy()))
        state = solver.init_state(Xf, y)
        solver.run(state)
        ws[model.name] = np.array(out)
        if model.name == "adagrad":
            assert isinstance(state.loop, CompiledLoop)   # not the scaled loop
    np.testing.assert_allclose(ws["adagrad"], ws["adagrad_numpy"], rtol=0, atol=1e-12)


def test_compiled_and_python_paths_identical() -> None:
    rng = np.random.default_rng(2)
    X = rng.normal(size=(100, 8))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    res = [Solver(objective="hinge", curvature="adagrad", step=("constant", {"eps": 1.0}),
                  max_iter=200, random_state=0, path=p).fit(X, y) for p in ("generic", "python")]
    np.testing.assert_array_equal(res[0].w, res[1].w)


def test_validation_and_registry() -> None:
    assert isinstance(get_registry().create("curvature", "adagrad", delta=0.1), AdaGrad)
    for kw in ({"delta": -1.0}, {"initial_accumulator": float("nan")}):
        with pytest.raises(ValueError, match="AdaGrad"):
            AdaGrad(**kw)  # type: ignore[arg-type]
    assert not AdaGrad.direction_is_gradient and not AdaGrad.needs_secant_pair
