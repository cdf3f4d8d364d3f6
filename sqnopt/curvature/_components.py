"""Curvature-model components."""

from __future__ import annotations

from dataclasses import dataclass

from sqnopt.curvature._identity import IdentityKernel
from sqnopt.interfaces import CurvatureModel, Problem


@dataclass(frozen=True)
class Identity(CurvatureModel):
    """``H = I``: the direction is the stochastic gradient itself (SGD)."""

    name = "identity"
    is_identity = True

    def init(self, problem: Problem) -> IdentityKernel:
        return IdentityKernel(problem.n_params)
