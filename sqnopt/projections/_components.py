"""Projection components (constraint sets) and mirror maps."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Union

from sqnopt.interfaces import Problem, Projection, ProjectionKernelLike
from sqnopt.projections._base import L2BallKernel, ProjectionKernel
from sqnopt.projections._l1ball import L1BallKernel
from sqnopt.projections._mirror import ExpGradPMKernel, LazyProjectionKernel

ProjectionSpec = Union[Projection, str, tuple[str, Mapping[str, Any]], None]


def _check_radius(owner: str, radius: float) -> None:
    if not (isinstance(radius, (int, float)) and math.isfinite(radius) and radius > 0):
        raise ValueError(f"{owner}: radius must be a finite number > 0, got {radius!r}")


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

    @property
    def bounds_iterate(self) -> bool:
        return True

    def init(self, problem: Problem) -> L2BallKernel:
        radius = self.radius
        if radius is None:
            if problem.lam <= 0:
                raise ValueError("L2Ball(radius=None) uses 1/sqrt(lam) and needs lam > 0; "
                                 "give a radius")
            radius = 1.0 / math.sqrt(problem.lam)
        return L2BallKernel(problem.n_params, problem.dim, problem.n_features, float(radius))


@dataclass(frozen=True)
class L1Ball(Projection):
    r"""Euclidean projection onto ``{w : ||w_reg||_1 <= radius}`` (soft thresholding).

    Exact, expected O(n) (randomized pivot; Duchi, Shalev-Shwartz, Singer & Chandra, ICML 2008,
    Fig. 2). The Pegasos course notes (Sec. 3.2) constrain every method to the l1 ball of
    radius 10.
    """

    radius: float = 1.0
    name = "l1ball"

    def __post_init__(self) -> None:
        _check_radius("L1Ball", self.radius)

    @property
    def bounds_iterate(self) -> bool:
        return True

    def init(self, problem: Problem) -> L1BallKernel:
        return L1BallKernel(problem.n_params, problem.dim, problem.n_features, float(self.radius))


class MirrorMap(Projection):
    r"""A mirror-descent update realised in the projection slot of the driver.

    The driver hands the projection ``z = w_t - eps_t d_t``. A mirror map keeps a dual vector
    ``theta`` and its own previous output ``w_t``, takes the dual step
    ``theta <- theta + (z - w_t) = theta - eps_t d_t`` and returns
    ``w_{t+1} = argmin_{w in K} B_psi(w, grad psi^*(theta))`` (lazy mirror descent / dual
    averaging; Hazan, *Introduction to Online Convex Optimization*, Sec. 5.3). So any objective,
    curvature model (``d = H g``) and step rule combine with it, and the driver stays
    ``w <- P(w - eps d)``.

    Contract beyond :class:`~sqnopt.interfaces.Projection`: the kernel is called exactly once
    per iteration (it is stateful, not idempotent), and has ``start(w0)``, which the solver calls
    with the starting point when the solve is built.
    """

    euclidean = False


def _resolve_projection(spec: ProjectionSpec) -> Projection | None:
    if spec is None or isinstance(spec, Projection):
        return spec
    from sqnopt.registry import get_registry

    if isinstance(spec, str):
        obj = get_registry().create("projection", spec)
    elif isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], str):
        obj = get_registry().create("projection", spec[0], **dict(spec[1]))
    else:
        raise TypeError(f"inner: expected a Projection, a registered name, (name, params) or "
                        f"None; got {type(spec).__name__}")
    assert isinstance(obj, Projection)
    return obj


@dataclass(frozen=True)
class LazyProjection(MirrorMap):
    r"""Euclidean lazy mirror descent: ``theta <- theta - eps d``, ``w = P(theta)``.

    With ``inner=L1Ball(10)`` and a ``1/sqrt(t)`` step this is the stochastic mirror descent
    (SMD) of the Pegasos course notes (Sec. 3.2); with ``inner=None`` it is plain SGD. The
    gradient is taken at the projected point ``w``, the update accumulates in the unprojected
    ``theta`` (unlike projected SGD, which restarts from ``P(theta)``).
    """

    inner: ProjectionSpec = None
    name = "lazy_projection"

    def __post_init__(self) -> None:
        object.__setattr__(self, "inner", _resolve_projection(self.inner))
        if isinstance(self.inner, MirrorMap):
            raise ValueError("LazyProjection: inner must be a Euclidean projection, not a "
                             "mirror map")

    @property
    def bounds_iterate(self) -> bool:
        """The output is the inner projection's: bounded when that is."""
        return isinstance(self.inner, Projection) and self.inner.bounds_iterate

    def init(self, problem: Problem) -> ProjectionKernelLike:
        inner = None if self.inner is None else self.inner.init(problem)  # type: ignore[union-attr]
        if inner is None or isinstance(inner, ProjectionKernel):
            return LazyProjectionKernel(problem.n_params, problem.dim, problem.n_features, inner)
        from sqnopt.projections.reference import LazyProjectionKernelNumPy

        return LazyProjectionKernelNumPy(problem, inner)


@dataclass(frozen=True)
class ExpGradPM(MirrorMap):
    r"""Exponentiated gradient +- on the l1 ball of radius ``radius`` (Kivinen & Warmuth 1997).

    .. math:: w_j = z\,\frac{e^{\theta_j} - e^{-\theta_j}}{\sum_k (e^{\theta_k} + e^{-\theta_k})},
              \qquad \theta \leftarrow \theta - \epsilon_t d_t

    i.e. multiplicative updates of ``2n`` weights on the simplex whose difference, times ``z``,
    is ``w``; the iterates stay inside the l1 ball (its own Bregman projection is the
    normalisation). With a ``1/sqrt(t)`` step: the SEG+- of the Pegasos course notes.
    Starts at ``w = 0`` (uniform weights) unless ``w0`` is given strictly inside the ball.
    """

    radius: float = 1.0
    name = "eg_pm"

    def __post_init__(self) -> None:
        _check_radius("ExpGradPM", self.radius)

    @property
    def bounds_iterate(self) -> bool:
        return True

    def init(self, problem: Problem) -> ExpGradPMKernel:
        return ExpGradPMKernel(problem.n_params, problem.dim, problem.n_features,
                               float(self.radius))
