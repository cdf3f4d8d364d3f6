"""The quadratic-bound curvature model (SQB) as a component."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Literal

from sqnopt.curvature._bound import QuadraticBoundKernel
from sqnopt.interfaces import QUADRATIC_BOUND, CurvatureModel, Problem

__all__ = ["QuadraticBound", "resolve_eta"]


def resolve_eta(eta: float | None, problem: Problem) -> float:
    """``eta`` itself, or the default: the objective's ``lam`` when it is > 0 (the paper's
    system matrix ``Sigma + eta I`` with ``eta`` the regulariser, eq. 5), else ``1 / N``."""
    if eta is not None:
        return float(eta)
    if problem.lam > 0:
        return float(problem.lam)
    return 1.0 / problem.n_samples


@dataclass(frozen=True)
class QuadraticBound(CurvatureModel):
    r"""Semistochastic quadratic bound (SQB) direction of Aravkin, Choromanska, Jebara &
    Kanevsky (2014), eq. (5):

    .. math:: d_k = (\Sigma_{S_k} + \eta I)^{-1} g_k, \qquad w_{k+1} = w_k - \alpha_k d_k

    where :math:`g_k = \mu_{T_k} + \lambda w_k` is the minibatch gradient on batch :math:`T_k`
    and :math:`\Sigma_{S_k}` the mean partition-function bound (their Algorithm 1) over an
    independent curvature batch :math:`S_k`, drawn by the driver from
    ``Solver(curvature_schedule=...)`` (default: the gradient schedule; the paper grows both
    linearly, ``Linear(5, gamma_mu)`` for gradients and ``Linear(5, gamma_sigma, cap=200)`` for
    curvature). Requires an objective with the ``quadratic_bound`` capability (``Softmax``,
    ``BinaryLogistic``, ``LogLinear``).

    Parameters
    ----------
    inner_iter
        Iterations of the inner solver per direction (the paper's l in {5, 10, 20}). Each CG
        iteration costs one product with the factored :math:`\Sigma_S` (two feature passes over
        :math:`S` plus vector work on the coordinates :math:`S` touches); each LSQR iteration
        two.
    eta
        Ridge :math:`\eta`; ``None`` uses the objective's ``lam`` (the paper's eq. 5, where the
        same :math:`\eta` regularises the objective) or ``1/N`` when ``lam == 0``.
    solver
        ``"lsqr"`` (default, the paper's choice; few iterations barely move along directions
        the curvature batch did not see -- robust with small curvature batches, but in our
        benchmarks it barely moved along the others either: with 5 iterations it stalled near
        1e-2 on a9a and 0.2 on news20 where CG reached 4e-4), ``"cg"`` (conjugate gradients, one
        product per iteration; moves along unseen directions by about ``g / eta``, so give it
        curvature batches of several hundred samples or more -- then it was the fastest on every
        data set of ``bench/paper004_sqb.py``, and the estimators' recipe uses it, see
        :mod:`sqnopt.recipes`) or ``"exact"`` (dense Cholesky of :math:`\Sigma_S + \eta I`; only
        for ``n_params <= max_exact_dim``).
    tol
        Stop the inner solver once the residual norm falls below ``tol`` times its initial value
        (``0``: always run ``inner_iter`` iterations, as the paper does).
    max_exact_dim
        Largest ``n_params`` allowed with ``solver="exact"``.

    .. note:: With ``eta = None`` and the paper's ``lam = 1/N`` this is the paper's
       ``eta = 1/N``. An ``eta`` smaller than ``lam`` no longer majorises the regulariser's
       curvature and can overshoot; a larger one is Levenberg-Marquardt damping. Use
       ``Solver(sampling="subset")`` so that every batch holds distinct samples, as the
       convergence theory assumes (see ``docs/sqb.md``).
    """

    inner_iter: int = 5
    eta: float | None = None
    solver: Literal["lsqr", "cg", "exact"] = "lsqr"
    tol: float = 0.0
    max_exact_dim: int = 2000
    name = "quadratic_bound"
    #: The bound majorises the objective: ``(Sigma + eta I)^{-1} g`` is a Newton-like step.
    direction_scale = "newton"
    majorizes = True
    needs_curvature_batch = True
    requires = frozenset({QUADRATIC_BOUND})

    def __post_init__(self) -> None:
        if not (isinstance(self.inner_iter, int) and self.inner_iter >= 1):
            raise ValueError(f"QuadraticBound: inner_iter must be an integer >= 1, got "
                             f"{self.inner_iter!r}")
        if self.eta is not None and not (isinstance(self.eta, (int, float))
                                         and math.isfinite(self.eta) and self.eta > 0):
            raise ValueError(f"QuadraticBound: eta must be None or a finite number > 0, got "
                             f"{self.eta!r}")
        if self.solver not in ("lsqr", "cg", "exact"):
            raise ValueError(f"QuadraticBound: solver must be 'lsqr', 'cg' or 'exact', got "
                             f"{self.solver!r}")
        if not (isinstance(self.tol, (int, float)) and math.isfinite(self.tol) and self.tol >= 0):
            raise ValueError(f"QuadraticBound: tol must be a finite number >= 0, got {self.tol!r}")
        if not (isinstance(self.max_exact_dim, int) and self.max_exact_dim >= 1):
            raise ValueError("QuadraticBound: max_exact_dim must be an integer >= 1")

    def memory_bytes(self, problem: Problem) -> int:
        n = problem.n_params
        return 8 * (n * n if self.solver == "exact" else 8 * n)

    def tuned(self, lam: float, X: Any, *, auto_schedule: bool) -> QuadraticBound:
        """Named without parameters, the conjugate-gradient inner solve: with the recipe's
        bound batches of 1000 it was the fastest inner solver on every data set of
        ``bench/paper004_sqb.py``; the paper's LSQR stays the component's default."""
        return dataclasses.replace(self, solver="cg") if self.solver == "lsqr" else self

    def init(self, problem: Problem) -> QuadraticBoundKernel:
        if self.solver == "exact" and problem.n_params > self.max_exact_dim:
            raise ValueError(
                f"QuadraticBound(solver='exact') would factor a dense {problem.n_params} x "
                f"{problem.n_params} matrix every iteration (max_exact_dim={self.max_exact_dim}); "
                "use solver='cg' for this problem size, or raise max_exact_dim")
        return QuadraticBoundKernel(problem.n_params, resolve_eta(self.eta, problem),
                                    self.inner_iter, float(self.tol), self.solver)
