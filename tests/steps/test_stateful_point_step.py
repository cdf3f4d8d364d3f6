"""A step rule that sees the point *and* keeps state, written as a plugin would: the stochastic
Barzilai-Borwein step (Barzilai & Borwein, *Two-point step size gradient methods*, IMA J.
Numer. Anal. 1988; on batches, Tan, Ma, Dai & Qian, NeurIPS 2016), ``eps_t = s's / s'y`` with
``s = w_t - w_{t-1}`` and ``y = g_t - g_{t-1}``, clipped to ``[eps_min, eps_max]``. Its kernel
keeps the last point and gradient and declares them (``get_state``/``set_state``): the
conformance checks take its steps as a function of the point and that state, its checkpoint
round-trips, and a solve with it resumes exactly. A kernel that keeps the same memory without
declaring it is refused by ``check_step_at``."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from sqnopt import Fixed, Identity, LogLoss, Solver
from sqnopt.interfaces import Problem, StepRule
from sqnopt.testing import check_component

FloatArray = Any


class _BBKernel:
    uses_point = True

    def __init__(self, eps0: float, eps_min: float, eps_max: float, declare: bool) -> None:
        self.eps0, self.eps_min, self.eps_max = eps0, eps_min, eps_max
        self.w_prev = np.zeros(0)
        self.g_prev = np.zeros(0)
        if declare:
            self.get_state = self._get_state
            self.set_state = self._set_state

    def step_size(self, t: int) -> float:
        return self.eps0

    def step_at(self, t: int, f: float, w: FloatArray, g: FloatArray, d: FloatArray) -> float:
        eps = self.eps0
        if self.w_prev.shape == w.shape:
            s, y = w - self.w_prev, g - self.g_prev
            sy = float(s @ y)
            if sy > 0.0 and math.isfinite(sy):
                eps = min(max(float(s @ s) / sy, self.eps_min), self.eps_max)
        self.w_prev, self.g_prev = w.copy(), g.copy()
        return eps

    def _get_state(self) -> dict[str, Any]:
        return {"w_prev": self.w_prev.copy(), "g_prev": self.g_prev.copy()}

    def _set_state(self, state: dict[str, Any]) -> None:
        self.w_prev = np.array(state["w_prev"], dtype=np.float64)
        self.g_prev = np.array(state["g_prev"], dtype=np.float64)


@dataclass(frozen=True)
class BarzilaiBorwein(StepRule):
    eps0: float = 0.1
    eps_min: float = 1e-3
    eps_max: float = 10.0
    declare: bool = True
    name = "barzilai_borwein_test"
    uses_point = True

    def init(self, problem: Problem) -> _BBKernel:
        return _BBKernel(self.eps0, self.eps_min, self.eps_max, self.declare)


def _data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 8))
    y = (X @ rng.normal(size=8) + 0.3 * rng.normal(size=300) > 0).astype(float)
    return X, y


def test_a_stateful_point_step_passes_conformance() -> None:
    report = check_component(BarzilaiBorwein())
    assert "check_step_at" in report.passed and "check_state_round_trip" in report.passed
    assert "round-trips exactly" in report.notes["check_state_round_trip"]


def test_undeclared_memory_in_a_point_step_is_refused() -> None:
    with pytest.raises(AssertionError, match="declares that state"):
        check_component(BarzilaiBorwein(declare=False))


def test_a_solve_with_it_resumes_exactly() -> None:
    X, y = _data()

    def solver(n: int) -> Solver:
        return Solver(LogLoss(lam=1e-3), Identity(), Fixed(20), BarzilaiBorwein(),
                      random_state=0, max_iter=n)

    whole = solver(60).fit(X, y)
    s = solver(25)
    state = s.init_state(X, y)
    s.run(state)
    rest = solver(35)                   # max_iter counts the iterations of one run call
    resumed = rest.run(rest.restore(state.checkpoint(), X, y))
    assert resumed.n_iter == 60
    np.testing.assert_array_equal(resumed.w, whole.w)
    assert whole.path == "python" and float(whole.fun) < 0.8 * math.log(2.0)   # F(0) = log 2
