"""Penalties: the compiled kernel against its NumPy twin, the components' validation and
registration, and the conformance checks catching a wrong proximal map."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from sqnopt.interfaces import Penalty, Problem
from sqnopt.penalties import L1, L2, ElasticNet, PenaltyKernel, resolve_penalty
from sqnopt.penalties.reference import ElasticNetNumPy, PenaltyKernelNumPy
from sqnopt.registry import get_registry
from sqnopt.testing import ConformanceError, check_component

LAYOUTS = [(12, 6, 5), (12, 6, 6), (7, 7, 6), (9, 3, 0)]   # (n_params, block, n_reg)


def _points(n: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for scale in (1e-8, 0.01, 1.0, 1e3):
        w = scale * rng.normal(size=n)
        w[rng.random(n) < 0.3] = 0.0
        out.append(w)
    out.append(np.zeros(n))
    out.append(-np.zeros(n))
    return out


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("l1, l2", [(0.3, 0.0), (0.0, 0.7), (0.2, 0.5), (0.0, 0.0), (1e-9, 1e9)])
def test_compiled_kernel_matches_its_twin(layout: tuple[int, int, int], l1: float,
                                          l2: float) -> None:
    n, block, n_reg = layout
    a, b = PenaltyKernel(n, block, n_reg, l1, l2), PenaltyKernelNumPy(n, block, n_reg, l1, l2)
    for seed in range(3):
        for w in _points(n, seed):
            assert a.value(w) == pytest.approx(b.value(w), rel=1e-14, abs=0.0)
            assert a.l1_value(w) == pytest.approx(b.l1_value(w), rel=1e-14, abs=0.0)
            g = np.random.default_rng(seed + 10).normal(size=n) * (l1 + 1.0)
            g[::4] = l1                                 # on the threshold
            pa, pb = np.zeros(n), np.zeros(n)
            a.pseudo_gradient(w, g, pa)
            b.pseudo_gradient(w, g, pb)
            assert pa.tobytes() == pb.tobytes()
            for t in (1e-3, 1.0, 50.0):
                qa, qb = np.zeros(n), np.zeros(n)
                a.prox(w, t, qa)
                b.prox(w, t, qb)
                assert qa.tobytes() == qb.tobytes()     # exact zeros, same rounding


def test_prox_zeroes_exactly_and_leaves_intercepts() -> None:
    k = PenaltyKernel(8, 4, 3, 1.0, 0.0)
    z = np.array([0.5, -2.0, 1.0, 7.0, -1.0, 3.0, -0.999, -7.0])
    out = np.empty(8)
    k.prox(z, 1.0, out)
    assert out.tolist() == [0.0, -1.0, 0.0, 7.0, 0.0, 2.0, 0.0, -7.0]
    assert not np.any(np.signbit(out[out == 0.0]))     # no negative zeros


def test_parametrisation_matches_scikit_learn() -> None:
    e = ElasticNet(alpha=0.2, l1_ratio=0.25)
    assert (e.l1_strength, e.l2_strength) == (0.05, pytest.approx(0.15))
    assert (L1(0.3).l1_strength, L1(0.3).l2_strength) == (0.3, 0.0)
    assert (L2(0.3).l1_strength, L2(0.3).l2_strength) == (0.0, 0.3)
    problem = Problem(n_samples=5, n_features=2, dim=3, n_blocks=1, n_params=3, lam=0.0,
                      fit_intercept=True, capabilities=frozenset())
    w = np.array([1.0, -2.0, 100.0])
    # alpha (l1_ratio |w|_1 + (1 - l1_ratio)/2 |w|^2), the intercept left out
    assert e.init(problem).value(w) == pytest.approx(0.2 * (0.25 * 3 + 0.75 / 2 * 5))


@pytest.mark.parametrize("bad", [dict(alpha=-1.0), dict(alpha=float("nan")), dict(alpha=True),
                                 dict(l1_ratio=1.5), dict(l1_ratio=-0.1), dict(l1_ratio="x")])
def test_bad_settings_are_refused(bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="alpha|l1_ratio"):
        ElasticNet(**bad)


def test_kernel_refuses_bad_layouts_and_lengths() -> None:
    with pytest.raises(ValueError, match="layout"):
        PenaltyKernel(7, 3, 2, 0.1, 0.1)
    with pytest.raises(ValueError, match="finite"):
        PenaltyKernel(6, 3, 2, -0.1, 0.1)
    k = PenaltyKernel(6, 3, 2, 0.1, 0.1)
    with pytest.raises(ValueError, match="n_params"):
        k.value(np.zeros(5))
    with pytest.raises(ValueError, match="t must be > 0"):
        k.prox(np.zeros(6), 0.0, np.zeros(6))


def test_registered_under_scikit_learn_names() -> None:
    reg = get_registry()
    assert {"l1", "l2", "elasticnet"} <= set(reg.names("penalty"))
    assert resolve_penalty("l1") == L1()
    assert resolve_penalty(("elasticnet", {"alpha": 0.1, "l1_ratio": 0.3})) == ElasticNet(0.1, 0.3)
    assert resolve_penalty("lasso") == L1()
    with pytest.raises(TypeError, match="penalty"):
        resolve_penalty(3)  # type: ignore[arg-type]


@pytest.mark.parametrize("comp", [L1(0.05), ElasticNet(0.05, 0.5), L2(0.05),
                                  ElasticNetNumPy(0.05, 0.9)], ids=repr)
def test_conformance(comp: Penalty) -> None:
    report = check_component(comp)
    assert "check_prox" in report.passed and "check_composite_solve" in report.passed


class _SlackKernel(PenaltyKernelNumPy):
    """A 'prox' that shrinks without thresholding: never an exact zero."""

    def prox(self, z: np.ndarray, t: float, out: np.ndarray) -> None:
        res = np.array(z)
        res[self._reg] = z[self._reg] / (1.0 + t * self.l1)
        out[:] = res


@dataclass(frozen=True)
class _SlackPenalty(Penalty):
    alpha: float = 0.1
    name = "slack_test"

    @property
    def l1_strength(self) -> float:
        return self.alpha

    @property
    def l2_strength(self) -> float:
        return 0.0

    def init(self, problem: Problem) -> _SlackKernel:
        return _SlackKernel(problem.n_params, problem.dim, problem.n_features, self.alpha, 0.0)


def test_conformance_catches_a_prox_without_exact_zeros() -> None:
    with pytest.raises(ConformanceError, match="check_prox"):
        check_component(_SlackPenalty())
