"""Projection components."""

from __future__ import annotations

import math
from dataclasses import dataclass

from sqnopt.interfaces import Problem, Projection
from sqnopt.projections._base import L2BallKernel


@dataclass(frozen=True)
class L2Ball(Projection):
    """Projection onto ``{w : ||w_reg|| <= radius}``.

    ``radius=None`` uses ``1/sqrt(lam)``, the ball that contains the SVM optimum
    (Shalev-Shwartz, Singer & Srebro, *Pegasos*, 2007, Theorem 1).
    """

    radius: float | None = None
    name = "l2ball"

    def __post_init__(self) -> None:
        if self.radius is not None and not (math.isfinite(self.radius) and self.radius > 0):
            raise ValueError(f"L2Ball: radius must be > 0, got {self.radius!r}")

    def init(self, problem: Problem) -> L2BallKernel:
        radius = self.radius
        if radius is None:
            if problem.lam <= 0:
                raise ValueError("L2Ball(radius=None) uses 1/sqrt(lam) and needs lam > 0; "
                                 "give a radius")
            radius = 1.0 / math.sqrt(problem.lam)
        return L2BallKernel(problem.n_params, problem.dim, problem.n_features, float(radius))
