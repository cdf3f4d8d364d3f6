"""Penalty components: L2, L1 and the elastic net, in scikit-learn's parametrisation."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Union

from sqnopt.interfaces import Penalty, Problem
from sqnopt.penalties._base import PenaltyKernel

PenaltySpec = Union[Penalty, str, tuple[str, Mapping[str, Any]]]

__all__ = ["ElasticNet", "L1", "L2", "PenaltySpec", "resolve_penalty"]


def _check_alpha(owner: str, alpha: float) -> None:
    if isinstance(alpha, bool) or not (isinstance(alpha, (int, float)) and math.isfinite(alpha)
                                       and alpha >= 0):
        raise ValueError(f"{owner}: alpha must be a finite number >= 0, got {alpha!r}")


def _kernel(problem: Problem, l1: float, l2: float) -> PenaltyKernel:
    return PenaltyKernel(problem.n_params, problem.dim, problem.n_features, float(l1), float(l2))


@dataclass(frozen=True)
class ElasticNet(Penalty):
    r"""``P(w) = alpha (l1_ratio ||w_reg||_1 + (1 - l1_ratio)/2 ||w_reg||^2)``.

    The elastic net of Zou & Hastie (JRSS-B, 2005) in the parametrisation of scikit-learn's
    ``ElasticNet`` and ``SGDClassifier(penalty="elasticnet")``: ``l1_ratio = 1`` is the lasso
    (:class:`L1`), ``l1_ratio = 0`` the ridge penalty ``alpha/2 ||w||^2`` of the objectives'
    ``lam`` (:class:`L2`). With the objectives' mean loss, scikit-learn's
    ``LogisticRegression(penalty="elasticnet", C=C, l1_ratio=r)`` is ``alpha = 1 / (C sum_i c_i)``
    (``1 / (C N)`` without sample weights) and the same ``l1_ratio``.
    """

    alpha: float = 1e-4
    l1_ratio: float = 0.5
    name = "elasticnet"

    def __post_init__(self) -> None:
        _check_alpha(type(self).__name__, self.alpha)
        r = self.l1_ratio
        if isinstance(r, bool) or not (isinstance(r, (int, float)) and 0.0 <= r <= 1.0):
            raise ValueError(f"{type(self).__name__}: l1_ratio must be a number in [0, 1], "
                             f"got {r!r}")

    @property
    def l1_strength(self) -> float:
        return float(self.alpha) * float(self.l1_ratio)

    @property
    def l2_strength(self) -> float:
        return float(self.alpha) * (1.0 - float(self.l1_ratio))

    def init(self, problem: Problem) -> PenaltyKernel:
        return _kernel(problem, self.l1_strength, self.l2_strength)


@dataclass(frozen=True)
class L1(Penalty):
    r"""The lasso penalty ``P(w) = alpha ||w_reg||_1``: sparse solutions (exact zeros).

    scikit-learn's ``LogisticRegression(penalty="l1", C=C)`` minimises
    ``||w||_1 + C sum_i c_i loss_i``, the same minimiser as the mean loss with
    ``alpha = 1 / (C sum_i c_i)`` (``1 / (C N)`` without sample weights).
    """

    alpha: float = 1e-4
    name = "l1"

    def __post_init__(self) -> None:
        _check_alpha("L1", self.alpha)

    @property
    def l1_strength(self) -> float:
        return float(self.alpha)

    @property
    def l2_strength(self) -> float:
        return 0.0

    def init(self, problem: Problem) -> PenaltyKernel:
        return _kernel(problem, self.alpha, 0.0)


@dataclass(frozen=True)
class L2(Penalty):
    r"""The ridge penalty ``P(w) = alpha/2 ||w_reg||^2``: the objectives' own ``lam``, as a
    penalty component (the composite solvers add it to the objective's ``lam``)."""

    alpha: float = 1e-4
    name = "l2"

    def __post_init__(self) -> None:
        _check_alpha("L2", self.alpha)

    @property
    def l1_strength(self) -> float:
        return 0.0

    @property
    def l2_strength(self) -> float:
        return float(self.alpha)

    def init(self, problem: Problem) -> PenaltyKernel:
        return _kernel(problem, 0.0, self.alpha)


def resolve_penalty(spec: PenaltySpec) -> Penalty:
    """A penalty from an instance, a registered name, or ``(name, params)``."""
    if isinstance(spec, Penalty):
        return spec
    from sqnopt.registry import get_registry

    if isinstance(spec, str):
        obj = get_registry().create("penalty", spec)
    elif isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], str):
        obj = get_registry().create("penalty", spec[0], **dict(spec[1]))
    else:
        raise TypeError(f"penalty: expected a Penalty, a registered name or (name, params); "
                        f"got {type(spec).__name__}")
    assert isinstance(obj, Penalty)
    return obj
