"""The plugin module named by the ``sqnopt`` entry point: the compiled components and the
hooks that register them (``"modified_huber"``, ``"lsr1"``, ``"sarah"``, ``"polyak_decay"``).

The pure-Python twins of the same components, which the tests hold the compiled kernels to,
are in :mod:`sqnopt_extras.reference`."""

from __future__ import annotations

import math
from dataclasses import dataclass

from sqnopt import hookimpl
from sqnopt.data import Dataset
from sqnopt.interfaces import (
    BINARY,
    DENSE_HESSIAN,
    HESSIAN_VECTOR,
    LINEAR_SCORES,
    MARGIN,
    SMOOTH,
    STRONGLY_CONVEX,
    CurvatureModel,
    GradientEstimator,
    Objective,
    Problem,
    StepRule,
)
from sqnopt.registry import RegisterFn

from sqnopt_extras._lsr1 import LSR1Kernel
from sqnopt_extras._objective import ModifiedHuberKernel
from sqnopt_extras._sarah import SARAHKernel
from sqnopt_extras._step import DecayingPolyakKernel

__all__ = ["LSR1", "SARAH", "DecayingPolyak", "ModifiedHuber"]


def _number(owner: str, name: str, value: object, *, lo: float = 0.0,
            strict: bool = True) -> None:
    """``value`` is a finite real number above ``lo`` (or at it, ``strict=False``)."""
    ok = (isinstance(value, (int, float)) and not isinstance(value, bool)
          and math.isfinite(value) and (value > lo if strict else value >= lo))
    if not ok:
        raise ValueError(f"{owner}: {name} must be a finite number {'>' if strict else '>='} "
                         f"{lo}, got {value!r}")


def _period(owner: str, period: object) -> None:
    if period is not None and not (isinstance(period, int) and not isinstance(period, bool)
                                   and period >= 1):
        raise ValueError(f"{owner}: period must be None (one pass over the data) or an integer "
                         f">= 1, got {period!r}")


@dataclass(frozen=True)
class ModifiedHuber(Objective):
    r"""L2-regularised modified-Huber loss (Zhang, ICML 2004) for labels in {-1, +1}:

    .. math:: F(w) = \frac{\lambda}{2}\|w\|^2 + \frac{1}{\sum c_i}\sum_i c_i\,\ell(y_i w^\top
              x_i),\qquad \ell(z) = \begin{cases}\max(0, 1 - z)^2 & z \ge -1\\ -4z & z < -1
              \end{cases}

    The squared hinge near the margin, linear (slope 4) on badly misclassified samples, so an
    outlier pulls with a bounded force. Continuously differentiable; its generalised second
    derivative is 2 on ``[-1, 1)`` and 0 elsewhere (``curvature_bound = 2``). Declares what the
    built-in margin losses declare: smooth, margin, linear scores (SAGA, SVRG's lazy sparse
    path), Hessian-vector products and the dense Hessian (truncated Newton, Newton's method),
    strongly convex when ``lam > 0``.
    """

    lam: float = 1e-4
    name = "modified_huber"
    curvature_bound = 2.0

    def __post_init__(self) -> None:
        _number("ModifiedHuber", "lam", self.lam, strict=False)

    @property
    def capabilities(self) -> frozenset[str]:
        caps = {BINARY, MARGIN, LINEAR_SCORES, SMOOTH, HESSIAN_VECTOR, DENSE_HESSIAN}
        if self.lam > 0:
            caps.add(STRONGLY_CONVEX)
        return frozenset(caps)

    def init(self, data: Dataset) -> ModifiedHuberKernel:
        return ModifiedHuberKernel(data.rows, float(self.lam))


@dataclass(frozen=True)
class LSR1(CurvatureModel):
    r"""Limited-memory symmetric rank-one model (Nocedal & Wright 2006, Sec. 6.2; the compact
    form of Byrd, Nocedal & Schnabel 1994, Thm. 5.1) with ``H_0 = gamma I``:

    .. math:: H = \gamma I + (S - \gamma Y)(R + R^\top - D - \gamma Y^\top Y)^{-1}
              (S - \gamma Y)^\top

    over the ``memory`` newest accepted secant pairs, :math:`\gamma = \tau\, s^\top y /
    y^\top y` from the newest pair with :math:`s^\top y > 0` (``tau = gamma_scale < 1``:
    with 1, as L-BFGS scales, that pair's own update is degenerate). A pair is skipped when
    :math:`|y^\top(s - Hy)| < r\,\|y\|\,\|s - Hy\|` (``r = skip_tol``). SR1 may be
    indefinite: the direction :math:`d = Hg` is used only when
    :math:`g^\top d > \text{min\_cosine}\,\|g\|\|d\|`, else the scaled gradient
    :math:`\gamma g` (``sqnopt_extras._lsr1`` has the details).
    """

    memory: int = 10
    skip_tol: float = 1e-8
    min_cosine: float = 1e-8
    gamma_init: float = 1.0
    gamma_scale: float = 0.5
    name = "lsr1"
    requires = frozenset({SMOOTH})
    needs_secant_pair = True
    direction_scale = "newton"

    def __post_init__(self) -> None:
        if not (isinstance(self.memory, int) and not isinstance(self.memory, bool)
                and self.memory >= 1):
            raise ValueError(f"LSR1: memory must be an integer >= 1, got {self.memory!r}")
        _number("LSR1", "skip_tol", self.skip_tol, strict=False)
        _number("LSR1", "min_cosine", self.min_cosine, strict=False)
        if not self.min_cosine < 1:
            raise ValueError(f"LSR1: min_cosine must be below 1, got {self.min_cosine!r}")
        _number("LSR1", "gamma_init", self.gamma_init)
        _number("LSR1", "gamma_scale", self.gamma_scale)
        if not self.gamma_scale < 1:
            raise ValueError(f"LSR1: gamma_scale must be below 1 (with 1 the newest pair's "
                             f"update is degenerate), got {self.gamma_scale!r}")

    def memory_bytes(self, problem: Problem) -> int:
        # the pairs S, Y and a work vector; S'Y, Y'Y, M and three short vectors
        m, n = self.memory, problem.n_params
        return 8 * ((2 * m + 1) * n + 3 * m * m + 3 * m)

    def init(self, problem: Problem) -> LSR1Kernel:
        return LSR1Kernel(problem.n_params, int(self.memory), float(self.gamma_init),
                          float(self.gamma_scale), float(self.skip_tol), float(self.min_cosine))


@dataclass(frozen=True)
class SARAH(GradientEstimator):
    r"""SARAH, the recursive gradient estimate (Nguyen, Liu, Scheinberg & Takac, ICML 2017):

    .. math:: v_t = s(w_t, B_t) - s(w_{t-1}, B_t) + v_{t-1}, \qquad v_0 = \nabla F(w_0),

    restarted from a full gradient every ``period`` batch samples (``None``: one pass over the
    data). Biased, but its error vanishes as the iterates settle, so constant steps converge
    linearly on strongly convex sums. Works with any objective. Its estimate is dense and
    changes every step, so it has no score table: it declares ``dense_estimate``, and on sparse
    rows a composition that would otherwise take the O(nnz) lazy iterate runs the dense one,
    the result's ``path_reason`` saying why (no ``SlowPathWarning``: there is no faster path
    for it to take).
    """

    period: int | None = None
    name = "sarah"
    vanishing_variance = True
    dense_estimate = True

    def __post_init__(self) -> None:
        _period("SARAH", self.period)

    def memory_bytes(self, problem: Problem) -> int:
        return 8 * 3 * problem.n_params         # v_{t-1}, w_{t-1} and a work vector

    def init(self, problem: Problem) -> SARAHKernel:
        return SARAHKernel(problem.n_params, 0 if self.period is None else int(self.period))


@dataclass(frozen=True)
class DecayingPolyak(StepRule):
    r"""The stochastic Polyak step with a cap that decays after ``T0`` iterations:

    .. math:: \epsilon_t = \min\Big(\frac{f_B(w_t) - f_{\min}}{c\, g_t^\top d_t},\;
              \epsilon_{\max}\frac{T_0}{T_0 + t}\Big)

    (Polyak 1987; Loizou, Vaswani, Laradji & Lacoste-Julien, AISTATS 2021, whose SPS_max has a
    constant cap and so a noise floor when the model does not interpolate the data). A
    function of the point (``uses_point``): the driver passes the batch objective, the
    gradient estimate and the direction. 0 on a batch at its bound or along a direction that
    does not descend.
    """

    eps_max: float = 1.0
    T0: float = 100.0
    c: float = 0.5
    f_min: float = 0.0
    name = "polyak_decay"
    uses_point = True

    def __post_init__(self) -> None:
        _number("DecayingPolyak", "eps_max", self.eps_max)
        _number("DecayingPolyak", "T0", self.T0)
        _number("DecayingPolyak", "c", self.c)
        _number("DecayingPolyak", "f_min", self.f_min, lo=-math.inf)

    def init(self, problem: Problem) -> DecayingPolyakKernel:
        return DecayingPolyakKernel(float(self.eps_max), float(self.T0), float(self.c),
                                    float(self.f_min))


@hookimpl
def sqnopt_register_objectives(register: RegisterFn) -> None:
    register("modified_huber", ModifiedHuber)


@hookimpl
def sqnopt_register_curvature_models(register: RegisterFn) -> None:
    register("lsr1", LSR1, aliases=("l_sr1",))


@hookimpl
def sqnopt_register_gradient_estimators(register: RegisterFn) -> None:
    register("sarah", SARAH)


@hookimpl
def sqnopt_register_step_rules(register: RegisterFn) -> None:
    register("polyak_decay", DecayingPolyak)
