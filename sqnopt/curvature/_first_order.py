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

    With ``composite=True`` the iteration is the paper's composite mirror-descent form
    (COMID, Sec. 3) with the objective's L2 term in closed form: only the gradient ``g`` of the
    *loss* part is linearised and accumulated, and per coordinate

    .. math:: G_j \leftarrow G_j + g_j^2, \quad s_j = \delta + \sqrt{G_j}, \quad
              w_j \leftarrow \frac{s_j w_j - \eta g_j}{s_j + \eta \lambda_j}

    (:math:`\lambda_j = \lambda` of the objective, 0 on intercepts). A coordinate without loss
    gradient shrinks by :math:`s_j / (s_j + \eta\lambda)`, so ``k`` steps that do not touch it
    are one factor: on sparse data the solver runs this form just in time
    (:mod:`sqnopt.solver._adaptive_loop`, O(stored values of the batch) per step, any width),
    and no step is unstable for the regulariser: the per-example adaptive method of large-scale
    online learning. It takes no projection and no averaging; the sparse form runs the plain
    minibatch gradient (another gradient estimator runs the dense form).

    Parameters
    ----------
    delta
        Added to ``sqrt(G)`` in the denominator (the paper's ``delta >= 0``).
    initial_accumulator
        ``G0`` (e.g. ``1e-4`` as in the Pegasos notes' experiments).
    composite
        Take the objective's L2 term in closed form (the composite update above) instead of
        stepping along ``g + lam w``.
    """

    delta: float = 1e-8
    initial_accumulator: float = 0.0
    composite: bool = False
    name = "adagrad"
    #: ``|d_j| <= 1`` whatever the scale of the data (Duchi et al. take the step of the order of
    #: the diameter of the feasible set).
    direction_scale = "normalized"

    def __post_init__(self) -> None:
        for key in ("delta", "initial_accumulator"):
            value = getattr(self, key)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
                raise ValueError(f"AdaGrad: {key} must be a finite number >= 0, got {value!r}")
        if not isinstance(self.composite, bool):
            raise ValueError(f"AdaGrad: composite must be True or False, got {self.composite!r}")

    def params(self) -> dict[str, object]:
        """The settings; ``composite`` only when set, so that the plain form keeps its
        description (and the identity of its checkpoints)."""
        p = super().params()
        if not self.composite:
            del p["composite"]
        return p

    @property
    def composite_step(self) -> bool:
        """The composite form makes the update itself (see :attr:`CurvatureModel.composite_step`)."""
        return self.composite

    def init(self, problem: Problem) -> AdaGradKernel:
        if not self.composite:
            return AdaGradKernel(problem.n_params, float(self.delta),
                                 float(self.initial_accumulator))
        return AdaGradKernel(problem.n_params, float(self.delta), float(self.initial_accumulator),
                             True, float(problem.lam), problem.dim, bool(problem.fit_intercept))
