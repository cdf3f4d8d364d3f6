"""The progressive validation loss (``Counters.prog_loss / prog_weight``,
``SolveResult.progressive_loss``): every loop counts each processed sample's weighted loss at
the iterate before the step that used it, the same definition, checked against a computation
from the recorded iterates."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt import (
    LBFGS,
    SAGA,
    Constant,
    Fixed,
    Full,
    Hinge,
    LogLoss,
    Solver,
)
from sqnopt.curvature import AdaGrad
from sqnopt.objectives import Softmax
from sqnopt.objectives.reference import LogLossNumPy
from sqnopt.solver._adaptive_loop import AdaptiveLoop
from sqnopt.solver._lazy_loop import LazyTableLoop
from sqnopt.solver._loop import CompiledLoop, Counters
from sqnopt.solver._pyloop import PythonLoop
from sqnopt.solver._scaled_loop import ScaledLoop


def _sparse(N: int = 80, n: int = 400, per_row: int = 4, seed: int = 0
            ) -> tuple[sp.csr_matrix, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = sp.csr_matrix((rng.normal(size=N * per_row), rng.integers(0, n, size=N * per_row),
                       np.arange(0, N * per_row + 1, per_row)), shape=(N, n))
    X.sum_duplicates()
    return X, np.where(rng.random(N) < 0.5, -1.0, 1.0)


def _margin_losses(kind: str, X: Any, y: np.ndarray, w: np.ndarray, b: float) -> np.ndarray:
    m = y * (np.asarray(X @ w).ravel() + b)
    return np.logaddexp(0.0, -m) if kind == "logloss" else np.maximum(0.0, 1.0 - m)


def _softmax_losses(X: Any, y: np.ndarray, W: np.ndarray) -> np.ndarray:
    S = np.asarray(X @ W[:, :-1].T) + W[:, -1]
    return np.logaddexp.reduce(S, axis=1) - S[np.arange(S.shape[0]), y.astype(int)]


CASES: dict[str, tuple[type, dict[str, Any]]] = {
    "generic": (CompiledLoop, dict(objective=LogLoss(lam=0.01), curvature="identity",
                                   size=3, path="generic", dense=True)),
    "generic-hinge": (CompiledLoop, dict(objective=Hinge(lam=0.01), curvature="identity",
                                         size=2, path="generic", dense=True)),
    "lbfgs-full": (CompiledLoop, dict(objective=LogLoss(lam=0.01), curvature=LBFGS(),
                                      full=True, path="generic", dense=True, eps=1.0)),
    "scaled": (ScaledLoop, dict(objective=LogLoss(lam=0.01), curvature="identity", size=2)),
    "lazy-saga": (LazyTableLoop, dict(objective=LogLoss(lam=0.01), curvature="identity",
                                      gradient=SAGA(), size=1, path="scaled")),
    "adaptive": (AdaptiveLoop, dict(objective=LogLoss(lam=0.01),
                                    curvature=AdaGrad(composite=True), size=2)),
    "adaptive-generic": (CompiledLoop, dict(objective=LogLoss(lam=0.01),
                                            curvature=AdaGrad(composite=True), size=2,
                                            path="generic")),
    "python": (PythonLoop, dict(objective=LogLossNumPy(lam=0.01), curvature="identity",
                                size=3, dense=True)),
    "python-adaptive": (PythonLoop, dict(objective=LogLoss(lam=0.01),
                                         curvature=AdaGrad(composite=True), size=1,
                                         path="python")),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_loop_counts_the_loss_before_each_step(case: str) -> None:
    loop_type, cfg = CASES[case]
    X, y = _sparse()
    if cfg.get("dense"):
        X = X.toarray()
    N = X.shape[0]
    sw = np.random.default_rng(1).uniform(0.5, 2.0, size=N)
    gw = sw * N / sw.sum()
    full = bool(cfg.get("full"))
    size = N if full else int(cfg["size"])
    n_iter = 12 if full else 60
    seq = np.tile(np.arange(N), n_iter) if full else \
        np.random.default_rng(2).integers(0, N, size=n_iter * size)
    ws: list[np.ndarray] = []
    solver = Solver(objective=cfg["objective"], curvature=cfg["curvature"],
                    gradient=cfg.get("gradient", "minibatch"),
                    schedule=Full() if full else Fixed(size),
                    step=Constant(cfg.get("eps", 0.1)), fit_intercept=True,
                    batch_sequence=seq, max_iter=n_iter, report_every=1,
                    path=cfg.get("path", "auto"), monitor=None,
                    callback=lambda info: ws.append(np.array(info.w)))
    state = solver.init_state(X, y, sw)
    result = solver.run(state)
    assert type(state.loop) is loop_type
    kind = "hinge" if isinstance(cfg["objective"], Hinge) else "logloss"
    w_prev = np.zeros(X.shape[1] + 1)
    expected = 0.0
    for t in range(n_iter):
        rows = seq[t * size:(t + 1) * size]
        losses = _margin_losses(kind, X[rows], y[rows], w_prev[:-1], w_prev[-1])
        expected += float(np.sum(gw[rows] * losses))
        w_prev = ws[t]
    c = state.counters
    assert c.prog_loss == pytest.approx(expected, rel=1e-11)
    assert c.prog_weight == pytest.approx(float(np.sum(gw[seq])), rel=1e-12)
    assert result.progressive_loss == c.prog_loss / c.prog_weight == c.progressive_loss
    assert result.progressive_weight == c.prog_weight


def test_softmax_blocks() -> None:
    rng = np.random.default_rng(3)
    X = rng.normal(size=(50, 5))
    y = np.arange(50) % 3
    seq = rng.integers(0, 50, size=80)
    for curvature, path in (("identity", "generic"), (AdaGrad(composite=True), "auto")):
        ws: list[np.ndarray] = []
        solver = Solver(objective=Softmax(lam=0.01), curvature=curvature, schedule=Fixed(2),
                        step=Constant(0.2), fit_intercept=True, batch_sequence=seq,
                        max_iter=40, report_every=1, path=path,  # type: ignore[arg-type]
                        callback=lambda info, ws=ws: ws.append(np.array(info.w)))
        state = solver.init_state(X, y)
        solver.run(state)
        W = np.zeros((3, 6))
        expected = 0.0
        for t in range(40):
            rows = seq[2 * t:2 * t + 2]
            expected += float(np.sum(_softmax_losses(X[rows], y[rows], W)))
            W = ws[t].reshape(3, 6)
        assert state.counters.prog_loss == pytest.approx(expected, rel=1e-12)
        assert state.counters.prog_weight == 80.0


def test_counter_starts_at_zero_and_survives_checkpoints() -> None:
    c = Counters()
    assert c.prog_loss == 0.0 and c.prog_weight == 0.0 and np.isnan(c.progressive_loss)
    assert {"prog_loss", "prog_weight"} <= set(c.as_dict())
    X, y = _sparse()
    solver = Solver(objective=LogLoss(lam=0.01), schedule=Fixed(1), step=Constant(0.1),
                    max_iter=50, random_state=0)
    state = solver.init_state(X, y)
    solver.run(state)
    checkpoint = state.checkpoint()
    restored = solver.restore(checkpoint, X, y)
    assert restored.counters.prog_loss == state.counters.prog_loss > 0
    assert restored.counters.prog_weight == state.counters.prog_weight == 50.0
    # a checkpoint written before the counter existed restores with it at 0
    del checkpoint.state["counters"]["prog_loss"], checkpoint.state["counters"]["prog_weight"]
    older = solver.restore(checkpoint, X, y)
    assert older.counters.prog_loss == 0.0 and older.counters.prog_weight == 0.0
    assert older.counters.t == 50


def test_python_objective_without_reg_value_gives_nan() -> None:
    """A pure-Python objective kernel without ``reg_value`` (the optional method of
    ``ObjectiveKernelLike``) cannot have its loss part separated: NaN, not a wrong number;
    without regularisation the loss part is the minibatch objective itself."""

    class NoReg(LogLossNumPy):
        def init(self, data: Any) -> Any:
            kernel = super().init(data)

            class Kernel:
                n_params = kernel.n_params
                lam = kernel.lam
                gradient = kernel.gradient
                value = kernel.value
                full_gradient = kernel.full_gradient
            return Kernel()

    X, y = _sparse()
    for lam, finite in ((0.01, False), (0.0, True)):
        result = Solver(objective=NoReg(lam=lam), schedule=Fixed(1), step=Constant(0.1),
                        max_iter=20, random_state=0).fit(X, y)
        assert np.isfinite(result.progressive_loss) == finite
        assert result.progressive_weight == 20.0
