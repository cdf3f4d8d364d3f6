"""Pure-NumPy reference twins of the compiled curvature models (also pure-Python plugin examples)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sqnopt.interfaces import CurvatureModel, Problem

FloatArray = NDArray[np.float64]

__all__ = ["AdaGradKernelNumPy", "AdaGradNumPy", "IdentityKernelNumPy", "IdentityNumPy"]


class IdentityKernelNumPy:
    """``d = g``."""

    needs_secant_pair = False
    needs_curvature_batch = False

    def direction(self, grad: FloatArray, out: FloatArray) -> None:
        out[:] = grad

    def update_pair(self, v: FloatArray, r: FloatArray) -> int:
        return 0

    def observe_batch(self, objective: Any, w: FloatArray, batch: NDArray[np.intp]) -> int:
        return 1

    def error_message(self) -> str:
        return ""


@dataclass(frozen=True)
class IdentityNumPy(CurvatureModel):
    """Reference twin of :class:`sqnopt.curvature.Identity`."""

    name = "identity_numpy"

    def init(self, problem: Problem) -> IdentityKernelNumPy:
        return IdentityKernelNumPy()


class AdaGradKernelNumPy:
    """``G += g * g``; ``d = g / (delta + sqrt(G))``."""

    needs_secant_pair = False
    needs_curvature_batch = False

    def __init__(self, dim: int, delta: float, initial_accumulator: float) -> None:
        self.delta = delta
        self.accumulator = np.full(dim, initial_accumulator)

    def direction(self, grad: FloatArray, out: FloatArray) -> None:
        self.accumulator += grad * grad
        den = self.delta + np.sqrt(self.accumulator)
        np.divide(grad, den, out=out, where=den > 0)
        out[den <= 0] = 0.0

    def update_pair(self, v: FloatArray, r: FloatArray) -> int:
        return 0

    def observe_batch(self, objective: Any, w: FloatArray, batch: NDArray[np.intp]) -> int:
        return 1

    def error_message(self) -> str:
        return ""


@dataclass(frozen=True)
class AdaGradNumPy(CurvatureModel):
    """Reference twin of :class:`sqnopt.curvature.AdaGrad`."""

    delta: float = 1e-8
    initial_accumulator: float = 0.0
    name = "adagrad_numpy"

    def init(self, problem: Problem) -> AdaGradKernelNumPy:
        return AdaGradKernelNumPy(problem.n_params, self.delta, self.initial_accumulator)
