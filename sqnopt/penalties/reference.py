"""Pure-NumPy reference twin of the compiled penalty kernel (also a pure-Python penalty
example).

The twin is written from the definitions rather than the compiled loops: the proximal map as
the closed-form minimiser of ``t P(u) + ||u - z||^2 / 2`` (``np.sign(z) * max(|z| - t l1, 0) /
(1 + t l2)``, whole arrays at a time), and the pseudo-gradient as the smooth gradient plus the
element of ``l1 d||.||_1`` of least magnitude (a clip of ``-g`` to ``[-l1, l1]`` where
``w_j = 0``). Tests check the compiled kernel against it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from sqnopt.interfaces import Penalty, Problem
from sqnopt.penalties._components import _check_alpha

FloatArray = NDArray[np.float64]

__all__ = ["ElasticNetNumPy", "PenaltyKernelNumPy"]


class PenaltyKernelNumPy:
    """``P(w) = l1 ||w_reg||_1 + (l2/2) ||w_reg||^2`` on ``n_blocks`` blocks of ``dim``, the
    first ``n_reg`` of each penalised (the twin of :class:`~sqnopt.penalties.PenaltyKernel`)."""

    compiled = False

    def __init__(self, n_params: int, block: int, n_reg: int, l1: float, l2: float) -> None:
        if block < 1 or n_params % block or not 0 <= n_reg <= block:
            raise ValueError("inconsistent penalty layout")
        if not (np.isfinite(l1) and np.isfinite(l2) and l1 >= 0 and l2 >= 0):
            raise ValueError(f"penalty weights must be finite and >= 0, got l1={l1!r}, l2={l2!r}")
        self.n_params, self.block, self.n_reg = n_params, block, n_reg
        self.l1, self.l2 = float(l1), float(l2)
        mask = np.zeros((n_params // block, block), dtype=bool)
        mask[:, :n_reg] = True
        self._reg = mask.ravel()

    def _check(self, *arrays: FloatArray) -> None:
        for a in arrays:
            if a.shape != (self.n_params,):
                raise ValueError(f"vector of shape {a.shape}, expected ({self.n_params},)")

    def value(self, w: FloatArray) -> float:
        self._check(w)
        r = w[self._reg]
        return self.l1 * float(np.sum(np.abs(r))) + 0.5 * self.l2 * float(r @ r)

    def l1_value(self, w: FloatArray) -> float:
        self._check(w)
        return self.l1 * float(np.sum(np.abs(w[self._reg])))

    def prox(self, z: FloatArray, t: float, out: FloatArray) -> None:
        self._check(z, out)
        if not t > 0:
            raise ValueError(f"the prox step t must be > 0, got {t!r}")
        r = z[self._reg]
        shrunk = np.sign(r) * np.maximum(np.abs(r) - t * self.l1, 0.0) / (1.0 + t * self.l2)
        res = np.array(z, dtype=np.float64)
        res[self._reg] = shrunk + 0.0            # no negative zeros
        out[:] = res

    def pseudo_gradient(self, w: FloatArray, g: FloatArray, out: FloatArray) -> None:
        self._check(w, g, out)
        r, gr = w[self._reg], g[self._reg]
        # the subgradient of l1 |w_j| nearest to -g_j: l1 sign(w_j), or clip(-g_j) at w_j = 0
        sub = np.where(r != 0, self.l1 * np.sign(r), np.clip(-gr, -self.l1, self.l1))
        res = np.array(g, dtype=np.float64)
        res[self._reg] = gr + sub
        out[:] = res

    def get_state(self) -> dict[str, object]:
        return {}

    def set_state(self, state: dict[str, object]) -> None:
        if not isinstance(state, dict):
            raise TypeError(f"set_state expects a dict, got {type(state).__name__}")


@dataclass(frozen=True)
class ElasticNetNumPy(Penalty):
    """The twin of :class:`~sqnopt.penalties.ElasticNet` (``l1_ratio = 1``: :class:`L1`,
    ``0``: :class:`L2`)."""

    alpha: float = 1e-4
    l1_ratio: float = 0.5
    name = "elasticnet_numpy"

    def __post_init__(self) -> None:
        _check_alpha("ElasticNetNumPy", self.alpha)
        if not 0.0 <= self.l1_ratio <= 1.0:
            raise ValueError(f"ElasticNetNumPy: l1_ratio must be in [0, 1], got {self.l1_ratio!r}")

    @property
    def l1_strength(self) -> float:
        return float(self.alpha) * float(self.l1_ratio)

    @property
    def l2_strength(self) -> float:
        return float(self.alpha) * (1.0 - float(self.l1_ratio))

    def init(self, problem: Problem) -> PenaltyKernelNumPy:
        return PenaltyKernelNumPy(problem.n_params, problem.dim, problem.n_features,
                                  self.l1_strength, self.l2_strength)
