"""Step-rule components."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from sqnopt.data import Dataset
from sqnopt.interfaces import LINEAR_SCORES, STRONGLY_CONVEX, Problem, StepRule
from sqnopt.steps._base import (
    ArmijoKernel,
    ConstantKernel,
    DecayingKernel,
    InverseSqrtKernel,
    PegasosStepKernel,
    PolyakKernel,
)
from sqnopt.steps._score_line import ScoreLineKernel
from sqnopt.steps._wolfe import WolfeKernel


def _positive(owner: str, name: str, value: float) -> None:
    if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
        raise ValueError(f"{owner}: {name} must be a finite number > 0, got {value!r}")


@dataclass(frozen=True)
class Constant(StepRule):
    """``eps_t = eps``."""

    eps: float = 0.1
    name = "constant"

    def __post_init__(self) -> None:
        _positive("Constant", "eps", self.eps)

    def init(self, problem: Problem) -> ConstantKernel:
        return ConstantKernel(float(self.eps))


@dataclass(frozen=True)
class LipschitzStep(StepRule):
    r"""The constant step ``eps = 1 / (factor L_max)`` computed from the training data, with

    .. math:: L_{\max} = c \max_i g_i \big(\lVert x_i\rVert^2 + [\text{intercept}]\big)
              + \lambda,

    the largest per-sample smoothness constant (``c`` the loss's curvature bound, 1 for a
    loss that declares none; ``g_i`` the gradient weights, mean 1). It is the step of the
    variance-reduced estimators, whose gradient noise vanishes at the optimum so that a
    constant step converges linearly on a strongly convex smooth sum: Defazio, Bach &
    Lacoste-Julien (2014, SAGA) prove it for single samples and ``factor = 3``; with batches
    ``factor = 1`` is the practical step of Schmidt, Le Roux & Bach (2017, SAG). The estimators'
    recipe takes the same step for SAGA (:func:`sqnopt.recipes.variance_reduced_step`); this
    rule makes it available to a composition built without data (the ``saga`` and ``svrg``
    presets), the data being read when the solve starts (one pass over the stored values).
    """

    factor: float = 3.0
    name = "lipschitz"

    def __post_init__(self) -> None:
        _positive("LipschitzStep", "factor", self.factor)

    def init(self, problem: Problem) -> ConstantKernel:
        raise TypeError("LipschitzStep computes its step from the training data: the solver "
                        "builds it with init_on_data(problem, data)")

    def init_on_data(self, problem: Problem, data: Dataset) -> ConstantKernel:
        from sqnopt.data._norms import max_sample_smoothness_step

        return _LearnedConstantKernel(max_sample_smoothness_step(
            data.X, data.grad_weight, problem.curvature_bound, float(problem.lam),
            data.fit_intercept, float(self.factor)))


class _LearnedConstantKernel(ConstantKernel):
    """The compiled constant step, its value computed from the data the solve started on and
    kept in its state: a solve continued on new data (``rebind``, a restore with
    ``new_data=True``) keeps the step, as it keeps everything else it learned."""

    def get_state(self) -> dict[str, Any]:
        return {"eps": float(self.eps)}

    def set_state(self, state: dict[str, Any]) -> None:
        if not isinstance(state, dict):
            raise TypeError(f"set_state expects a dict, got {type(state).__name__}")
        eps = state.get("eps")
        value = float(eps) if isinstance(eps, (int, float, np.floating)) and \
            not isinstance(eps, bool) else math.nan
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"the step's state needs a finite eps > 0, got {eps!r}")
        ConstantKernel.__init__(self, value)      # (eps is read-only from Python)


@dataclass(frozen=True)
class Decaying(StepRule):
    r"""``eps_t = eps0 * T0 / (T0 + t)`` at iteration ``t >= 0``.

    The step of Mokhtari & Ribeiro's RES (2014, Sec. 4: ``eps0 = 3e-2, T0 = 100``) and oLBFGS
    (2015, Sec. 4: ``eps0 = 2e-2, T0 = 100``).
    """

    eps0: float = 2e-2
    T0: float = 100.0
    name = "decaying"

    def __post_init__(self) -> None:
        _positive("Decaying", "eps0", self.eps0)
        _positive("Decaying", "T0", self.T0)

    def init(self, problem: Problem) -> DecayingKernel:
        return DecayingKernel(float(self.eps0), float(self.T0))


@dataclass(frozen=True)
class InverseSqrt(StepRule):
    """``eps_t = eps0 / sqrt(t + 1)`` (the SGD baseline of the Pegasos notes)."""

    eps0: float = 0.1
    name = "inverse_sqrt"

    def __post_init__(self) -> None:
        _positive("InverseSqrt", "eps0", self.eps0)

    def init(self, problem: Problem) -> InverseSqrtKernel:
        return InverseSqrtKernel(float(self.eps0))


@dataclass(frozen=True)
class Polyak(StepRule):
    r"""The stochastic Polyak step, a function of the point:

    .. math:: \epsilon_t = \min\Big(\frac{f_B(w_t) - f_{\min}}{c\, g_t^\top d_t},\;
              \epsilon_{\max}\Big),

    ``f_B`` the iteration's batch objective, ``g_t`` its gradient (the plain minibatch gradient,
    also under a variance-reduced estimate) and ``d_t`` the
    direction (``w_{t+1} = w_t - eps_t d_t``). Polyak (*Introduction to Optimization*, 1987)
    steps by the gap to the optimal value; Loizou, Vaswani, Laradji & Lacoste-Julien
    (*Stochastic Polyak step-size for SGD*, AISTATS 2021) take it on each batch with the batch's
    own lower bound (SPS_max; ``f_min = 0`` for the non-negative losses here) and ``c = 1/2``,
    capped by ``eps_max``. With a preconditioned direction, ``g'd`` replaces ``||g||^2``: the
    step ``eps_t d_t`` is then the same for any scaling of ``d_t``, so one rule serves gradient
    and Newton-scaled directions. The step is 0 on a batch at its bound (``f_B <= f_min``) or
    along a direction that is not a descent direction (``g'd <= 0``).

    The driver hands the rule the point (``uses_point``), so the iterate representations that
    keep no dense gradient (the scaled, lazy and adaptive loops) do not run it: the solve takes
    the generic compiled loop.
    """

    eps_max: float = 1.0
    c: float = 0.5
    f_min: float = 0.0
    name = "polyak"
    uses_point = True

    def __post_init__(self) -> None:
        _positive("Polyak", "eps_max", self.eps_max)
        _positive("Polyak", "c", self.c)
        if not (isinstance(self.f_min, (int, float)) and math.isfinite(self.f_min)):
            raise ValueError(f"Polyak: f_min must be a finite number, got {self.f_min!r}")

    def init(self, problem: Problem) -> PolyakKernel:
        return PolyakKernel(float(self.eps_max), float(self.c), float(self.f_min))


@dataclass(frozen=True)
class PegasosStep(StepRule):
    """``eps_t = 1 / (lam (t + 1))`` with ``lam`` taken from the objective
    (Shalev-Shwartz, Singer & Srebro, *Pegasos*, 2007, Fig. 1)."""

    name = "pegasos"
    requires = frozenset({STRONGLY_CONVEX})
    #: ``1/(lam t)`` is the step of strongly convex stochastic *gradient* descent: along a
    #: Newton-scaled direction its first steps (``1/lam``) overshoot by that factor.
    direction_scales = frozenset({"gradient"})

    def init(self, problem: Problem) -> PegasosStepKernel:
        return PegasosStepKernel(problem.lam)


@dataclass(frozen=True)
class Armijo(StepRule):
    r"""Backtracking line search on each iteration's batch ``B``: the step is the first of
    ``eps0 * shrink^k`` for ``k`` from 0 to ``max_backtracks`` with

        f_B(w - eps d) <= f_B(w) - c1 * eps * g'd      (Armijo's sufficient decrease)

    (Armijo 1966; Nocedal & Wright 2006, Algorithm 3.1; on minibatches: Vaswani et al. 2019).
    Each trial costs one minibatch gradient evaluation (``n_grad_evals``; its samples count in
    ``effective_passes``); the accepted trial's gradient is the secant pair's second gradient,
    so BFGS-type models evaluate nothing more. ``eps0 = 1`` is the natural first trial for
    quasi-Newton directions. A trial must also decrease ``f_B`` strictly (unless ``g'd = 0``).
    A run stops with status ``line_search_failed`` (``success`` False) when no trial is accepted
    -- which is also how a full-batch run ends once it is at a minimiser to working precision --
    or when ``g'd < 0`` (not a descent direction). Not combinable with a projection.
    """

    eps0: float = 1.0
    c1: float = 1e-4
    shrink: float = 0.5
    max_backtracks: int = 30
    name = "armijo"
    line_search = True

    def __post_init__(self) -> None:
        _positive("Armijo", "eps0", self.eps0)
        if not (isinstance(self.c1, (int, float)) and 0 < self.c1 < 1):
            raise ValueError(f"Armijo: c1 must be in (0, 1), got {self.c1!r}")
        if not (isinstance(self.shrink, (int, float)) and 0 < self.shrink < 1):
            raise ValueError(f"Armijo: shrink must be in (0, 1), got {self.shrink!r}")
        if not (isinstance(self.max_backtracks, int) and self.max_backtracks >= 0):
            raise ValueError(f"Armijo: max_backtracks must be an integer >= 0, got "
                             f"{self.max_backtracks!r}")

    def init(self, problem: Problem) -> ArmijoKernel:
        return ArmijoKernel(float(self.eps0), float(self.c1), float(self.shrink),
                            int(self.max_backtracks))


@dataclass(frozen=True)
class Wolfe(StepRule):
    r"""Strong-Wolfe line search on each iteration's batch ``B``: with
    ``phi(eps) = f_B(w - eps d)``, the accepted step satisfies

        phi(eps) <= phi(0) + c1 eps phi'(0)      and      |phi'(eps)| <= c2 |phi'(0)|

    (Wolfe 1969; the bracketing and zoom phases of Nocedal & Wright 2006, Algorithms 3.5-3.6,
    with safeguarded cubic interpolation). The first trial is ``eps0`` (1 for quasi-Newton
    directions); trials grow by ``expand`` while the slope is still steeply negative, so a badly
    scaled direction gets a longer step instead of many short ones. The curvature condition makes
    each accepted step's secant pair on its batch satisfy ``v'r > 0``: a full-batch BFGS-type
    model never skips a pair. Every trial costs one batch gradient (``n_grad_evals``); the
    accepted trial's gradient is the next iteration's and the secant pair's. After ``max_evals``
    trials without both conditions, the best trial with sufficient decrease is evaluated once more
    and taken; with none the run stops with status ``line_search_failed``, as with
    :class:`Armijo`. Not combinable with a projection.
    """

    eps0: float = 1.0
    c1: float = 1e-4
    c2: float = 0.9
    expand: float = 2.0
    max_evals: int = 20
    name = "wolfe"
    line_search = True

    def __post_init__(self) -> None:
        _positive("Wolfe", "eps0", self.eps0)
        if not (isinstance(self.c1, (int, float)) and isinstance(self.c2, (int, float))
                and 0 < self.c1 < self.c2 < 1):
            raise ValueError(f"Wolfe: need 0 < c1 < c2 < 1, got c1={self.c1!r}, "
                             f"c2={self.c2!r}")
        if not (isinstance(self.expand, (int, float)) and math.isfinite(self.expand)
                and self.expand > 1):
            raise ValueError(f"Wolfe: expand must be a finite number > 1, got {self.expand!r}")
        if not (isinstance(self.max_evals, int) and self.max_evals >= 1):
            raise ValueError(f"Wolfe: max_evals must be an integer >= 1, got "
                             f"{self.max_evals!r}")

    def init(self, problem: Problem) -> WolfeKernel:
        return WolfeKernel(float(self.eps0), float(self.c1), float(self.c2), float(self.expand),
                           int(self.max_evals))


@dataclass(frozen=True)
class ScoreLine(StepRule):
    r"""Exact line search in score space, for objectives of linear scores (``linear_scores``).

    With ``z_i`` the scores of sample ``i`` at ``w`` and ``u_i`` its scores at the direction
    ``d``, the batch objective along ``-d`` is

        phi(eps) = (1/|B|) sum_i g_i loss_i(z_i - eps u_i) + (lam/2) ||w_reg - eps d_reg||^2

    so after one gather of ``u`` every value and derivative of ``phi`` costs ``O(|B| n_scores)``
    and no row is read (the cheap function evaluations of trust-region Newton for linear models:
    Lin, Weng & Keerthi 2008, Sec. 3). ``phi'' = (1/|B|) sum_i g_i u_i' Hess loss_i u_i +
    lam ||d_reg||^2`` is known in closed form (margin losses: ``l''(m) u_i^2``; softmax:
    ``u_i' (diag p - p p') u_i``), so the step minimises ``phi`` by a safeguarded Newton
    iteration on ``phi'`` from ``eps0`` (kept inside the bracket of the minimiser, else bisection;
    Nocedal & Wright 2006, Sec. 3.5) until ``|phi'(eps)| <= rtol |phi'(0)|`` or ``max_iter``
    evaluations. Along a Newton direction this is the exact line minimisation that damped
    Newton's unit step only approximates, and it takes fewer outer iterations where the unit step
    is far from the minimiser along the direction.

    The step found is accepted under :class:`Armijo`'s rule -- sufficient decrease
    ``phi(eps) <= phi(0) - c1 eps g'd`` and a strict decrease unless ``g'd = 0``, backtracking by
    ``shrink`` (in score space, no row read) when it fails -- with Armijo's failure semantics: a
    run stops with status ``line_search_failed`` when no trial is accepted (also how a
    full-batch run ends at a minimiser to working precision) or when ``g'd < 0`` (not a descent
    direction). ``f_next`` and ``g_next`` come from the scores ``z - eps u`` (one scatter of the
    rows), which the kernel keeps: the next search from the accepted point gathers only ``u``.
    One search reads the rows as often as one gradient evaluation (``n_grad_evals`` counts one;
    one more when the scores at ``w`` are not cached). An objective kernel that does not evaluate
    losses from given scores (``score_losses`` False: the general log-linear model, Python
    kernels) gets :class:`Armijo`'s backtracking with the same settings. Not combinable with a
    projection.
    """

    eps0: float = 1.0
    c1: float = 1e-4
    shrink: float = 0.5
    max_backtracks: int = 30
    rtol: float = 1e-3
    max_iter: int = 30
    name = "score_line"
    line_search = True
    requires = frozenset({LINEAR_SCORES})

    def __post_init__(self) -> None:
        Armijo(self.eps0, self.c1, self.shrink, self.max_backtracks)   # the same checks
        if not (isinstance(self.rtol, (int, float)) and 0 < self.rtol < 1):
            raise ValueError(f"ScoreLine: rtol must be in (0, 1), got {self.rtol!r}")
        if not (isinstance(self.max_iter, int) and self.max_iter >= 1):
            raise ValueError(f"ScoreLine: max_iter must be an integer >= 1, got "
                             f"{self.max_iter!r}")

    def init(self, problem: Problem) -> ScoreLineKernel:
        return ScoreLineKernel(float(self.eps0), float(self.c1), float(self.shrink),
                               int(self.max_backtracks), float(self.rtol), int(self.max_iter))
