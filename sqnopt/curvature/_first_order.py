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

    (:math:`\lambda_j = \lambda` of the objective, 0 on intercepts). With ``l1 > 0`` the
    composite term is the elastic net :math:`\ell_1 \|w\|_1 + (\lambda/2)\|w\|^2` and the
    update is AdaGrad's proximal step (Duchi et al. 2011, Sec. 3 eq. 4 and Sec. 5.1): with
    :math:`z_j = s_j w_j - \eta g_j`,

    .. math:: w_j \leftarrow \frac{\operatorname{sign}(z_j) \max(|z_j| - \eta\ell_1, 0)}
              {s_j + \eta \lambda_j}

    -- soft thresholding, so coordinates are exact zeros; the sparse form applies the
    shrinkage of the steps that do not touch a coordinate in one closed form when it is next
    read (:mod:`sqnopt.solver._adaptive_loop`). This is the large-data recipe's answer to
    ``penalty="l1"`` / ``"elasticnet"`` in its FTRL-Proximal form below.

    With ``ftrl=True`` (McMahan et al., *Ad click prediction: a view from the trenches*, KDD
    2013, Algorithm 1) the composite term is taken cumulatively: with the dual sums
    :math:`z_j \leftarrow z_j + g_j - \sigma_j w_j`,
    :math:`\sigma_j = (s_j^{new} - s_j^{old}) / \eta`, after ``t`` gradients

    .. math:: w_j = -\frac{z_j - \operatorname{sign}(z_j)\, t \ell_1}
              {s_j / \eta + t \lambda_j} \text{ if } |z_j| > t \ell_1,
              \text{ else } 0,

    zero exactly when the averaged gradient evidence :math:`|z_j|/t` is within
    :math:`\ell_1`; a coordinate without gradient keeps :math:`(z_j, G_j)` and its value is
    read from them, so the sparse form costs O(nnz) with nothing pending. On sparse data its
    models are far sparser than the step-by-step form's at the same loss (McMahan, AISTATS
    2011). This is the large-data recipe's answer to ``penalty="l1"`` / ``"elasticnet"``
    (:func:`sqnopt.recipes.streaming`). A coordinate without loss
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
    l1
        The weight of ``||w_reg||_1`` taken in the composite step (``composite=True`` only;
        intercepts are never penalised).
    ftrl
        The FTRL-Proximal form (``composite=True`` only; a constant step, as the recipe's
        race chooses).
    """

    delta: float = 1e-8
    initial_accumulator: float = 0.0
    composite: bool = False
    l1: float = 0.0
    ftrl: bool = False
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
        l1 = self.l1
        if isinstance(l1, bool) or not (isinstance(l1, (int, float)) and math.isfinite(l1)
                                        and l1 >= 0):
            raise ValueError(f"AdaGrad: l1 must be a finite number >= 0, got {l1!r}")
        if not isinstance(self.ftrl, bool) or (self.ftrl and not self.composite):
            raise ValueError(f"AdaGrad: ftrl=True (FTRL-Proximal) is a composite form: pass "
                             f"composite=True (got ftrl={self.ftrl!r})")
        if l1 > 0 and not self.composite:
            raise ValueError("AdaGrad: l1 > 0 is taken in the composite step: pass "
                             "composite=True")

    def params(self) -> dict[str, object]:
        """The settings; ``composite`` only when set, so that the plain form keeps its
        description (and the identity of its checkpoints)."""
        p = super().params()
        if not self.composite:
            del p["composite"]
        if not self.l1:
            del p["l1"]
        if not self.ftrl:
            del p["ftrl"]
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
                             True, float(problem.lam), problem.dim, bool(problem.fit_intercept),
                             float(self.l1), bool(self.ftrl))
