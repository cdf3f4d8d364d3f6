"""The Python driver's representation path with a dense iterate: a Python twin of the scaled
iterate ``w = a v`` (:mod:`sqnopt.solver._scaled_loop`), written here as a plain
:class:`~sqnopt.interfaces.IterateKernelLike`, run by ``PythonLoop.with_iterate`` and held to
the dense Python path (``Solver.pegasos(..., path="python")``) on the same draws: the
representation path's batch, step, projection, averaging, ``sync`` and ``reload`` are the
driver's, so only rounding separates the two."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt import Solver
from sqnopt.data import make_rows
from sqnopt.interfaces import (
    ITERATE_NONFINITE,
    ITERATE_NONFINITE_LOSS,
    ITERATE_STEPPED,
    IterateKernelLike,
)
from sqnopt.objectives._margin import HingeKernel
from sqnopt.projections._base import L2BallKernel
from sqnopt.schedules._base import FixedKernel
from sqnopt.solver._loop import EXIT_CODES, Counters
from sqnopt.solver._pyloop import PythonLoop
from sqnopt.solver._sampler import UniformSampler
from sqnopt.solver._solver import make_bit_generator
from sqnopt.steps._base import PegasosStepKernel


class ScaledTwin:
    """``w = a v`` with ``nu = ||w||^2``: the shrinkage ``(1 - eps lam)`` and the ball
    projection rescale ``a`` (O(1)); the batch rows' coefficients update ``v``. The average
    is kept densely (a test twin: O(n) per averaged step). ``w`` and ``w_avg`` are the dense
    buffers ``sync`` writes and ``reload`` reads."""

    kind: ClassVar[str] = "scaled_twin"
    dense_iterate: ClassVar[bool] = True

    def __init__(self, objective: Any, X: Any, y: np.ndarray, w: np.ndarray,
                 w_avg: np.ndarray) -> None:
        self.obj, self.X, self.y = objective, X, y
        self.lam = float(objective.lam)
        self.w, self.w_avg = w, w_avg
        self.v = w.copy()
        self.a = 1.0
        self.avg = w_avg.copy()
        self._sqnorm = float(w @ w)
        self.extra_samples = 0

    @property
    def n_params(self) -> int:
        return int(self.v.shape[0])

    @property
    def lookahead(self) -> int:
        return 0

    @property
    def sqnorm(self) -> float:
        return self._sqnorm

    def first_order(self, batch: np.ndarray, eps: float, radius: float, n_avg: int
                    ) -> tuple[int, float]:
        k = batch.shape[0]
        Xb, yb = self.X[batch], self.y[batch]
        m = yb * (self.a * np.asarray(Xb @ self.v).ravel())
        losses, dl = self.obj.py_loss_and_dloss_dmargin(m)
        loss = float(np.sum(losses)) / k + 0.5 * self.lam * self._sqnorm
        if not math.isfinite(loss):
            return ITERATE_NONFINITE_LOSS, loss
        coef = yb * dl / k
        a_new = self.a * (1.0 - eps * self.lam)
        if a_new == 0.0:
            v = np.zeros_like(self.v)
            a_new = 1.0
        else:
            v = self.v.copy()
        v -= (eps / a_new) * np.asarray(Xb.T @ coef).ravel()
        nu = a_new * a_new * float(v @ v)
        if radius > 0.0 and nu > radius * radius:
            a_new *= radius / math.sqrt(nu)
            nu = a_new * a_new * float(v @ v)
        if not (math.isfinite(nu) and np.all(np.isfinite(v))):
            return ITERATE_NONFINITE, loss
        self.v, self.a, self._sqnorm = v, a_new, nu
        if n_avg:
            self.avg += (a_new * v - self.avg) / n_avg
        return ITERATE_STEPPED, loss

    def sync(self, n_avg: int) -> None:
        self.w[:] = self.a * self.v
        self.w_avg[:] = self.avg

    def reload(self, n_avg: int) -> None:
        self.v, self.a = self.w.copy(), 1.0
        self.avg = self.w_avg.copy()
        self._sqnorm = float(self.w @ self.w)

    def get_state(self) -> dict[str, Any]:
        return {"loop": self.kind, "v": self.v.copy(), "a": self.a, "avg": self.avg.copy()}

    def check_state(self, state: dict[str, Any]) -> None:
        assert state["loop"] == self.kind

    def set_state(self, state: dict[str, Any]) -> None:
        self.v, self.a, self.avg = state["v"].copy(), state["a"], state["avg"].copy()
        self._sqnorm = self.a * self.a * float(self.v @ self.v)


def _data(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(200, 12)) * (rng.random((200, 12)) < 0.5)
    y = np.where(X @ rng.normal(size=12) + 0.3 * rng.normal(size=200) > 0, 1.0, -1.0)
    return X, y


def _twin_loop(X: Any, y: np.ndarray, lam: float, k: int, project: bool, average: bool,
               seed: int) -> tuple[PythonLoop, ScaledTwin, Counters]:
    n, d = X.shape
    obj = HingeKernel(make_rows(X, y, np.ones(n), np.ones(n), False), lam)
    twin = ScaledTwin(obj, X, y, np.zeros(d), np.zeros(d))
    ball = L2BallKernel(d, d, d, 1.0 / math.sqrt(lam)) if project else None
    counters = Counters()
    loop = PythonLoop.with_iterate(obj, twin, FixedKernel(n, k), PegasosStepKernel(lam), ball,
                                   UniformSampler(n, make_bit_generator(seed)), counters,
                                   average=average, avg_start=0)
    return loop, twin, counters


@pytest.mark.parametrize("k", [1, 5])
@pytest.mark.parametrize("project", [True, False])
@pytest.mark.parametrize("average", [False, True])
@pytest.mark.parametrize("fmt", ["dense", "csr"])
def test_scaled_twin_on_the_python_driver_matches_the_dense_path(
        k: int, project: bool, average: bool, fmt: str) -> None:
    X, y = _data()
    Xf = sp.csr_matrix(X) if fmt == "csr" else X
    lam, T = 0.05, 300
    loop, twin, c = _twin_loop(Xf, y, lam, k, project, average, seed=11)
    assert isinstance(twin, IterateKernelLike)
    assert loop.loop_kind == "scaled_twin" and loop.lazy_iterate
    assert loop.run(T, 0) == EXIT_CODES["LOOP_DONE"]
    loop.sync()
    dense = Solver.pegasos(lam, batch_size=k, max_iter=T, project=project, average=average,
                           sampling="uniform", random_state=11, path="python").fit(Xf, y)
    got = twin.w_avg if average else twin.w
    np.testing.assert_allclose(got, dense.coef, rtol=0, atol=1e-12)
    assert (c.t, c.n_samples, c.n_avg) == (T, T * k, T if average else 0)


def test_reload_after_sync_continues_the_same_run() -> None:
    """``sync`` writes the dense iterate; ``reload`` rebuilds the representation from it (as the
    solver does after writing ``w``), and the run continues on the same draws; counters edited
    from outside make ``run`` reload by itself."""
    X, y = _data(1)
    straight, t0, _ = _twin_loop(X, y, 0.05, 3, True, True, seed=2)
    straight.run(60, 0)
    straight.sync()
    loop, twin, c = _twin_loop(X, y, 0.05, 3, True, True, seed=2)
    loop.run(25, 0)
    loop.sync()
    loop.reload()
    loop.run(35, 0)
    loop.sync()
    np.testing.assert_allclose(twin.w, t0.w, rtol=0, atol=1e-12)
    np.testing.assert_allclose(twin.w_avg, t0.w_avg, rtol=0, atol=1e-12)
    twin.w[:] = 0.0
    twin.w_avg[:] = 0.0
    c.t, c.n_avg = 0, 0                 # restored from outside: the loop reloads from w
    loop.run(1, 0)
    loop.sync()
    assert c.t == 1 and float(twin.w @ twin.w) > 0.0
