"""First-order curvature models (diagonal preconditioners)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from sqnopt.curvature._adagrad import AdaGradKernel
from sqnopt.interfaces import CurvatureModel, Problem


@dataclass(frozen=True)
class AdaGrad(CurvatureModel):
    r"""Diagonal AdaGrad: ``d = g / (delta + sqrt(G))``, ``G = G0 + sum_t g_t * g_t``.

    Duchi, Hazan & Singer, *Adaptive subgradient methods for online learning and stochastic
    optimization* (JMLR 2011), diagonal version; combine with ``Constant(eps=eta)``. Every call of
    the kernel's ``direction`` is one AdaGrad step (it accumulates ``g * g`` first).

    Parameters
    ----------
    delta
        Added to ``sqrt(G)`` in the denominator (the paper's ``delta >= 0``).
    initial_accumulator
        ``G0`` (e.g. ``1e-4`` as in the Pegasos notes' experiments).
    """

    delta: float = 1e-8
    initial_accumulator: float = 0.0
    name = "adagrad"
    #: ``|d_j| <= 1`` whatever the scale of the data (Duchi et al. take the step of the order of
    #: the diameter of the feasible set).
    direction_scale = "normalized"

    def __post_init__(self) -> None:
        for key in ("delta", "initial_accumulator"):
            value = getattr(self, key)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
                raise ValueError(f"AdaGrad: {key} must be a finite number >= 0, got {value!r}")

    def init(self, problem: Problem) -> AdaGradKernel:
        return AdaGradKernel(problem.n_params, float(self.delta), float(self.initial_accumulator))
