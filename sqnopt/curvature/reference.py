"""Pure-NumPy reference twins of the compiled curvature models (also pure-Python plugin examples)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sqnopt.interfaces import QUADRATIC_BOUND, CurvatureModel, Problem

FloatArray = NDArray[np.float64]

__all__ = [
    "IdentityKernelNumPy",
    "IdentityNumPy",
    "QuadraticBoundKernelNumPy",
    "QuadraticBoundNumPy",
    "cg_numpy",
    "lsqr_numpy",
]


class IdentityKernelNumPy:
    """``d = g``."""

    needs_secant_pair = False
    needs_curvature_batch = False

    def direction(self, grad: FloatArray, out: FloatArray) -> None:
        out[:] = grad

    def update_pair(self, v: FloatArray, r: FloatArray) -> int:
        return 0

    def observe_batch(self, objective: Any, w: FloatArray, batch: NDArray[np.intp]) -> int:
        return 1

    def error_message(self) -> str:
        return ""


@dataclass(frozen=True)
class IdentityNumPy(CurvatureModel):
    """Reference twin of :class:`sqnopt.curvature.Identity`."""

    name = "identity_numpy"

    def init(self, problem: Problem) -> IdentityKernelNumPy:
        return IdentityKernelNumPy()


def lsqr_numpy(matvec: Any, g: FloatArray, n_iter: int, tol: float = 0.0) -> tuple[FloatArray, int]:
    """LSQR (Paige & Saunders 1982) on a symmetric system ``A d = g`` from ``d = 0``, with the
    same operations in the same order as the compiled kernel."""
    n = g.shape[0]
    d = np.zeros(n)
    beta = float(np.sqrt(g @ g))
    if not beta > 0:
        return d, 0
    u = g / beta
    v = matvec(u)
    alpha = float(np.sqrt(v @ v))
    if not alpha > 0:
        return d, 0
    v = v / alpha
    w = v.copy()
    phibar, rhobar, stop = beta, alpha, tol * beta
    it = 0
    while it < n_iter:
        u = matvec(v) - alpha * u
        beta = float(np.sqrt(u @ u))
        if beta > 0:
            u = u / beta
            v = matvec(u) - beta * v
            alpha = float(np.sqrt(v @ v))
            if alpha > 0:
                v = v / alpha
        rho = float(np.sqrt(rhobar * rhobar + beta * beta))
        c, s = rhobar / rho, beta / rho
        theta = s * alpha
        rhobar = -c * alpha
        phi = c * phibar
        phibar = s * phibar
        d = d + (phi / rho) * w
        w = v - (theta / rho) * w
        it += 1
        if phibar <= stop or not beta > 0 or not alpha > 0:
            break
    return d, it


def cg_numpy(matvec: Any, g: FloatArray, n_iter: int, tol: float = 0.0) -> tuple[FloatArray, int]:
    """Conjugate gradients on ``A d = g`` from ``d = 0``."""
    d = np.zeros_like(g)
    r = g.copy()
    p = g.copy()
    rr = float(r @ r)
    stop = tol * tol * rr
    it = 0
    while it < n_iter and rr > 0:
        Ap = matvec(p)
        pAp = float(p @ Ap)
        if not pAp > 0:
            break
        a = rr / pAp
        d = d + a * p
        r = r - a * Ap
        rr_new = float(r @ r)
        it += 1
        if rr_new <= stop:
            break
        p = r + (rr_new / rr) * p
        rr = rr_new
    return d, it


class QuadraticBoundKernelNumPy:
    """``d = (S S' + eta I)^{-1} g`` with ``S`` from ``objective.bound(w, batch)`` (any objective
    kernel -- compiled or pure Python -- with a ``bound`` method returning ``(mu, S)``)."""

    needs_secant_pair = False
    needs_curvature_batch = True

    def __init__(self, dim: int, eta: float, inner_iter: int, tol: float, method: str) -> None:
        self.dim, self.eta, self.inner_iter, self.tol, self.method = (
            dim, eta, inner_iter, tol, method)
        self.S: Any = None
        self.last_inner_iterations = 0

    def _matvec(self, v: FloatArray) -> FloatArray:
        out = self.eta * v
        if self.S is not None:
            out = out + np.asarray(self.S @ np.asarray(self.S.T @ v).ravel()).ravel()
        return np.asarray(out, dtype=np.float64)

    def observe_batch(self, objective: Any, w: FloatArray, batch: NDArray[np.intp]) -> int:
        bound = getattr(objective, "bound", None)
        if bound is None:
            raise TypeError(f"{type(objective).__name__} does not provide the quadratic bound")
        _, self.S = bound(w, batch)
        return 1

    def direction(self, grad: FloatArray, out: FloatArray) -> None:
        if self.method == "exact":
            S = self.S.toarray() if hasattr(self.S, "toarray") else np.asarray(self.S)
            A = S @ S.T + self.eta * np.eye(self.dim) if self.S is not None else (
                self.eta * np.eye(self.dim))
            out[:] = np.linalg.solve(A, grad)
            self.last_inner_iterations = 0
            return
        solve = lsqr_numpy if self.method == "lsqr" else cg_numpy
        d, self.last_inner_iterations = solve(self._matvec, np.asarray(grad, dtype=np.float64),
                                              self.inner_iter, self.tol)
        out[:] = d

    def update_pair(self, v: FloatArray, r: FloatArray) -> int:
        return 0

    def error_message(self) -> str:
        return ""


@dataclass(frozen=True)
class QuadraticBoundNumPy(CurvatureModel):
    """Reference twin of :class:`sqnopt.curvature.QuadraticBound`."""

    inner_iter: int = 5
    eta: float | None = None
    solver: str = "lsqr"
    tol: float = 0.0
    name = "quadratic_bound_numpy"
    needs_curvature_batch = True
    requires = frozenset({QUADRATIC_BOUND})

    def init(self, problem: Problem) -> QuadraticBoundKernelNumPy:
        from sqnopt.curvature._bound_components import resolve_eta

        return QuadraticBoundKernelNumPy(problem.n_params, resolve_eta(self.eta, problem),
                                         self.inner_iter, self.tol, self.solver)
