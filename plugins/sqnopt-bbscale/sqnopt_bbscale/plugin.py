"""The plugin module named by the ``sqnopt`` entry point: registers ``"bbscale"``."""

from __future__ import annotations

import math
from dataclasses import dataclass

from sqnopt import hookimpl
from sqnopt.interfaces import SMOOTH, CurvatureModel, Problem
from sqnopt.registry import RegisterFn

from sqnopt_bbscale._kernel import BBScaleKernel


@dataclass(frozen=True)
class BBScale(CurvatureModel):
    """Barzilai-Borwein spectral scaling ``d = gamma_t g``, ``gamma_t = v^T r / r^T r``.

    Pairs with ``v^T r <= min_curvature * ||v||^2`` are skipped; ``gamma_t`` is clipped to
    ``[gamma_min, gamma_max]``; non-finite pairs reset ``gamma`` to ``gamma_init``.
    """

    gamma_init: float = 1.0
    gamma_min: float = 1e-8
    gamma_max: float = 1e8
    min_curvature: float = 1e-12
    name = "bbscale"
    requires = frozenset({SMOOTH})
    needs_secant_pair = True

    def __post_init__(self) -> None:
        if not (0 < self.gamma_min <= self.gamma_init <= self.gamma_max < math.inf):
            raise ValueError("BBScale needs 0 < gamma_min <= gamma_init <= gamma_max < inf")
        if not self.min_curvature >= 0:
            raise ValueError("BBScale: min_curvature must be >= 0")

    def init(self, problem: Problem) -> BBScaleKernel:
        return BBScaleKernel(problem.n_params, self.gamma_init, self.gamma_min, self.gamma_max,
                             self.min_curvature)


@hookimpl
def sqnopt_register_curvature_models(register: RegisterFn) -> None:
    register("bbscale", BBScale, aliases=("barzilai_borwein",))
