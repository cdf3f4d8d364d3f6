"""Pure-NumPy reference twins of the compiled curvature models (also pure-Python plugin examples)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sqnopt.interfaces import CurvatureModel, Problem

FloatArray = NDArray[np.float64]

__all__ = ["IdentityKernelNumPy", "IdentityNumPy"]


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
