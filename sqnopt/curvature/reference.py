"""Pure-NumPy reference twins of the compiled curvature models (also pure-Python plugin examples).

Each twin is a complete pure-Python component, run by the solver's Python loop. The BFGS-family
twins are written from the textbook definitions rather than the compiled algorithms, so that the
tests comparing them check the derivations too:

* :class:`LBFGSNumPy` builds the dense L-BFGS matrix by the product form
  ``H <- (I - rho v r') H (I - rho r v') + rho v v'`` over the stored pairs (Nocedal & Wright 2006,
  eq. 7.19) instead of running the two-loop recursion;
* :class:`BoundLBFGSNumPy` does the same from ``H_0 = gamma M^{-1}`` with the dense
  ``M = I_K (x) (c X'SX / sum s + lam D)`` built row by row, and inverts it, instead of a
  Cholesky solve per block;
* :class:`NewtonNumPy` builds the Hessian column by column from the objective's
  Hessian-vector products (``hessian_product``) instead of from the rows' outer products;
* :class:`FullBFGSNumPy` and :class:`RegularizedBFGSNumPy` keep the explicit ``B`` of RES
  (Mokhtari & Ribeiro 2014, eq. 9) and solve with it, instead of the inverse update / Cholesky
  form.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from sqnopt.interfaces import (
    BATCH_OBSERVED,
    CURVATURE_ERROR,
    DENSE_HESSIAN,
    HESSIAN_VECTOR,
    PAIR_ACCEPTED,
    PAIR_RESET,
    PAIR_SKIPPED,
    QUADRATIC_BOUND,
    SMOOTH,
    CurvatureModel,
    Problem,
)

FloatArray = NDArray[np.float64]

__all__ = [
    "AdaGradKernelNumPy",
    "AdaGradNumPy",
    "BoundLBFGSKernelNumPy",
    "BoundLBFGSNumPy",
    "DenseBFGSKernelNumPy",
    "FullBFGSNumPy",
    "HessianLBFGSKernelNumPy",
    "HessianLBFGSNumPy",
    "IdentityKernelNumPy",
    "IdentityNumPy",
    "LBFGSKernelNumPy",
    "LBFGSNumPy",
    "NewtonKernelNumPy",
    "NewtonNumPy",
    "QuadraticBoundKernelNumPy",
    "QuadraticBoundNumPy",
    "RegularizedBFGSNumPy",
    "TruncatedNewtonNumPy",
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
        return BATCH_OBSERVED

    def error_message(self) -> str:
        return ""


@dataclass(frozen=True)
class IdentityNumPy(CurvatureModel):
    """Reference twin of :class:`sqnopt.curvature.Identity`."""

    name = "identity_numpy"

    def init(self, problem: Problem) -> IdentityKernelNumPy:
        return IdentityKernelNumPy()


class _SecantNumPy:
    """Safeguards shared by the BFGS-family twins (same rules as the compiled kernels)."""

    needs_secant_pair = True
    needs_curvature_batch = False

    def __init__(self, min_curvature: float, on_bad_pair: str, damping: float,
                 on_nonfinite: str) -> None:
        self.min_curvature = min_curvature
        self.damp = on_bad_pair == "damp"
        self.damping = damping
        self.reset_on_nonfinite = on_nonfinite == "reset"
        self.n_damped = 0
        self.message = ""

    def reset(self) -> None:
        raise NotImplementedError

    def hessian(self) -> FloatArray:
        raise NotImplementedError

    def _fail(self, message: str) -> int:
        self.message = message
        if self.reset_on_nonfinite:
            self.reset()
            return PAIR_RESET
        return CURVATURE_ERROR

    def _screen(self, v: FloatArray, rt: FloatArray) -> FloatArray | int:
        """The pair to learn from (``rt`` possibly Powell-damped), or a return code."""
        if not (np.all(np.isfinite(v)) and np.all(np.isfinite(rt))):
            return self._fail("non-finite pair")
        if v @ rt > self.min_curvature * (v @ v):
            return rt
        if not self.damp or v @ v == 0.0:
            return PAIR_SKIPPED                       # v = 0 carries no curvature information
        bv = self.hessian() @ v
        s = v @ bv
        if not (np.isfinite(s) and s > 0):
            return self._fail("damping: v'Bv <= 0")
        if v @ rt < self.damping * s:
            theta = (1 - self.damping) * s / (s - v @ rt)
            rt = theta * rt + (1 - theta) * bv
            self.n_damped += 1
        return rt

    def observe_batch(self, objective: Any, w: FloatArray, batch: NDArray[np.intp]) -> int:
        return BATCH_OBSERVED

    def error_message(self) -> str:
        return self.message


class LBFGSKernelNumPy(_SecantNumPy):
    """oLBFGS from the dense product form (the twin of :class:`~sqnopt.curvature.LBFGSKernel`)."""

    def __init__(self, dim: int, memory: int, gamma0: float, **safeguards: Any) -> None:
        super().__init__(**safeguards)
        self.dim, self.gamma0 = dim, gamma0
        self.pairs: deque[tuple[FloatArray, FloatArray]] = deque(maxlen=memory)
        self.reset()

    def reset(self) -> None:
        self.pairs.clear()
        self.gamma = self.gamma0

    def inverse_hessian(self) -> FloatArray:
        eye = np.eye(self.dim)
        H = self.gamma * eye
        for v, r in self.pairs:                       # oldest first
            rho = 1.0 / (v @ r)
            H = (eye - rho * np.outer(v, r)) @ H @ (eye - rho * np.outer(r, v)) \
                + rho * np.outer(v, v)
        return H

    def hessian(self) -> FloatArray:
        return np.asarray(np.linalg.inv(self.inverse_hessian()), dtype=np.float64)

    def direction(self, grad: FloatArray, out: FloatArray) -> None:
        out[:] = self.inverse_hessian() @ grad

    def update_pair(self, v: FloatArray, r: FloatArray) -> int:
        rt = self._screen(v, r)
        if isinstance(rt, int):
            return rt
        self.pairs.append((v.copy(), rt.copy()))
        self.gamma = float(v @ rt) / float(rt @ rt)
        return PAIR_ACCEPTED


class DenseBFGSKernelNumPy(_SecantNumPy):
    """RES / oBFGS with the explicit matrix ``B`` of Mokhtari & Ribeiro (2014, eq. 9)."""

    def __init__(self, dim: int, delta: float, Gamma: float, init_scale: float | str,
                 **safeguards: Any) -> None:
        super().__init__(**safeguards)
        self.dim, self.delta, self.Gamma = dim, delta, Gamma
        self.auto = init_scale == "auto"
        self.init_scale = 1.0 if self.auto else float(init_scale)
        self.reset()

    def reset(self) -> None:
        self.B = self.init_scale * np.eye(self.dim)
        self.scale_pending = self.auto

    def hessian(self) -> FloatArray:
        return self.B

    def direction(self, grad: FloatArray, out: FloatArray) -> None:
        out[:] = np.linalg.solve(self.B, grad) + self.Gamma * grad

    def update_pair(self, v: FloatArray, r: FloatArray) -> int:
        rt0 = r - self.delta * v
        if self.scale_pending and np.all(np.isfinite(rt0)) \
                and v @ rt0 > self.min_curvature * (v @ v):
            self.B = (r @ r) / (v @ r) * np.eye(self.dim)   # Nocedal & Wright eq. 6.20
            self.scale_pending = False
        rt = self._screen(v, rt0)
        if isinstance(rt, int):
            return rt
        Bv = self.B @ v
        B = self.B + np.outer(rt, rt) / (v @ rt) - np.outer(Bv, Bv) / (v @ Bv) \
            + self.delta * np.eye(self.dim)
        self.B = 0.5 * (B + B.T)
        return PAIR_ACCEPTED


def _dense_bytes(problem: Problem) -> int:
    """The memory of a twin that keeps one dense ``n x n`` matrix (and a few vectors)."""
    return 8 * problem.n_params * (problem.n_params + 4)


def _safeguards(model: Any) -> dict[str, Any]:
    return {"min_curvature": model.min_curvature, "on_bad_pair": model.on_bad_pair,
            "damping": model.damping, "on_nonfinite": model.on_nonfinite}


@dataclass(frozen=True)
class _SecantNumPyModel(CurvatureModel):
    min_curvature: float = field(default=0.0, kw_only=True)
    on_bad_pair: Literal["skip", "damp"] = field(default="skip", kw_only=True)
    damping: float = field(default=0.2, kw_only=True)
    on_nonfinite: Literal["reset", "error"] = field(default="reset", kw_only=True)

    needs_secant_pair = True
    requires = frozenset({SMOOTH})


@dataclass(frozen=True)
class LBFGSNumPy(_SecantNumPyModel):
    """Reference twin of :class:`sqnopt.curvature.LBFGS`."""

    memory: int = 10
    gamma0: float = 1.0
    name = "lbfgs_numpy"

    def memory_bytes(self, problem: Problem) -> int:
        return 8 * problem.n_params * (2 * self.memory + 1)

    def init(self, problem: Problem) -> LBFGSKernelNumPy:
        return LBFGSKernelNumPy(problem.n_params, self.memory, self.gamma0, **_safeguards(self))


class BoundLBFGSKernelNumPy(LBFGSKernelNumPy):
    """Twin of :class:`~sqnopt.curvature.BoundLBFGSKernel`: the product form over the pairs from
    ``H_0 = gamma M^{-1}``, ``gamma = v'r / r'M^{-1}r`` of the newest pair, with the dense
    ``M = I_K (x) M_1``, ``M_1 = c sum_i s_i [x_i, 1][x_i, 1]' / sum_i s_i + lam D`` built from
    the rows of the objective's data (its Python ``axpy``)."""

    def __init__(self, block: int, n_blocks: int, bound: float, memory: int, gamma0: float,
                 rows: int = 0, **safeguards: Any) -> None:
        self.block, self.n_blocks, self.bound, self.rows = block, n_blocks, bound, rows
        self.Minv: FloatArray | None = None
        super().__init__(block * n_blocks, memory, gamma0, **safeguards)

    def bind(self, objective: Any) -> None:
        data = objective.data
        N = data.n_samples
        weights = np.asarray(data.sample_weights, dtype=np.float64)
        # the systematic sample floor(t N / m) of m rows (all when m = 0 or m >= N, or when the
        # sample's weights sum to 0)
        take = np.arange(N)
        if 0 < self.rows < N:
            sample = (np.arange(self.rows) * N) // self.rows
            if weights[sample].sum() > 0:
                take = sample
        s = weights[take]
        rows = np.zeros((len(take), self.block))
        for t, i in enumerate(take):
            data.axpy(int(i), 1.0, rows[t])
        M1 = self.bound * (rows.T * s) @ rows / s.sum()
        M1[np.arange(data.n_features), np.arange(data.n_features)] += objective.lam
        Minv = np.kron(np.eye(self.n_blocks), np.linalg.inv(M1))
        self.Minv = np.asarray(Minv, dtype=np.float64)

    def inverse_hessian(self) -> FloatArray:
        if self.Minv is None:
            return super().inverse_hessian()
        eye = np.eye(self.dim)
        H = self.gamma * self.Minv
        for v, r in self.pairs:                       # oldest first
            rho = 1.0 / (v @ r)
            H = (eye - rho * np.outer(v, r)) @ H @ (eye - rho * np.outer(r, v)) \
                + rho * np.outer(v, v)
        return H

    def update_pair(self, v: FloatArray, r: FloatArray) -> int:
        code = super().update_pair(v, r)
        if code == PAIR_ACCEPTED and self.Minv is not None:
            rmr = float(r @ self.Minv @ r)
            if np.isfinite(rmr) and rmr > 0:
                self.gamma = float(v @ r) / rmr
        return code


class HessianLBFGSKernelNumPy(LBFGSKernelNumPy):
    """Twin of :class:`~sqnopt.curvature.HessianLBFGS`'s kernel: pairs
    ``v = wbar_j - wbar_{j-1}``, ``r = Hess F_S(wbar_j) v`` from the objective's Python
    ``hessian_product`` over the window's joined curvature batches."""

    needs_secant_pair = False
    needs_curvature_batch = True

    def __init__(self, dim: int, memory: int, gamma0: float, update_every: int,
                 max_scale: float | None = None, **safeguards: Any) -> None:
        super().__init__(dim, memory, gamma0, **safeguards)
        self.update_every = update_every
        self.max_scale = max_scale
        self.n_capped = 0
        self.lmax = 0.0
        self.wsum = np.zeros(dim)
        self.wprev: FloatArray | None = None
        self.batches: list[NDArray[np.intp]] = []
        self.extra_samples = 0

    def observe_batch(self, objective: Any, w: FloatArray, batch: NDArray[np.intp]) -> int:
        if self.wprev is None:
            self.wprev = np.array(w, dtype=np.float64)
        self.wsum += w
        self.batches.append(np.array(batch, dtype=np.intp))
        if len(self.batches) < self.update_every:
            return BATCH_OBSERVED
        wbar = self.wsum * (1.0 / len(self.batches))
        sample = np.concatenate(self.batches)
        v = wbar - self.wprev
        self.wprev, self.wsum, self.batches = wbar, np.zeros(self.dim), []
        r = np.zeros(self.dim)
        objective.hessian_product(wbar, sample, np.ascontiguousarray(v), r)
        self.extra_samples += len(sample)
        code = self.update_pair(v, r)
        if self.max_scale is not None and objective.hess_size == 1 and objective.n_scores == 1:
            # gamma <= max_scale / L_S, L_S the largest g_i l''_i ||x_i||^2 + lam of the samples so far
            curv = objective.hessian_factors(wbar, sample) * objective.rows_sqnorm(
                sample, np.ones(len(sample)))
            self.lmax = max(self.lmax, float(np.max(curv)) + objective.lam)
            if self.lmax > 0 and self.gamma > self.max_scale / self.lmax:
                self.gamma = self.max_scale / self.lmax
                self.n_capped += 1
        return code


@dataclass(frozen=True)
class BoundLBFGSNumPy(_SecantNumPyModel):
    """Reference twin of :class:`sqnopt.curvature.BoundLBFGS`."""

    memory: int = 10
    gamma0: float = 1.0
    bound: float | Literal["auto"] = "auto"
    rows: int | Literal["auto"] | None = None
    name = "bound_lbfgs_numpy"
    requires = frozenset({SMOOTH, DENSE_HESSIAN})

    def memory_bytes(self, problem: Problem) -> int:
        # the pairs, and the dense inverse of the bound's block-diagonal M
        return 8 * problem.n_params * (2 * self.memory + 1) + _dense_bytes(problem)

    def init(self, problem: Problem) -> BoundLBFGSKernelNumPy:
        from sqnopt.curvature import BoundLBFGS

        model = BoundLBFGS(bound=self.bound, rows=self.rows)
        return BoundLBFGSKernelNumPy(problem.dim, max(problem.n_blocks, 1),
                                     model.resolved_bound(problem), self.memory, self.gamma0,
                                     model.resolved_rows(problem), **_safeguards(self))


@dataclass(frozen=True)
class HessianLBFGSNumPy(_SecantNumPyModel):
    """Reference twin of :class:`sqnopt.curvature.HessianLBFGS`."""

    memory: int = 10
    gamma0: float = 1.0
    update_every: int = 10
    max_scale: float | None = None
    name = "hessian_lbfgs_numpy"
    needs_secant_pair = False
    needs_curvature_batch = True
    requires = frozenset({SMOOTH, HESSIAN_VECTOR})

    @property
    def batches_per_update(self) -> int:
        return self.update_every

    def init(self, problem: Problem) -> HessianLBFGSKernelNumPy:
        return HessianLBFGSKernelNumPy(problem.n_params, self.memory, self.gamma0,
                                       self.update_every, self.max_scale, **_safeguards(self))


@dataclass(frozen=True)
class FullBFGSNumPy(_SecantNumPyModel):
    """Reference twin of :class:`sqnopt.curvature.FullBFGS`."""

    init_scale: float | Literal["auto"] = 1.0
    name = "full_bfgs_numpy"

    def memory_bytes(self, problem: Problem) -> int:
        return _dense_bytes(problem)

    def init(self, problem: Problem) -> DenseBFGSKernelNumPy:
        return DenseBFGSKernelNumPy(problem.n_params, 0.0, 0.0, self.init_scale,
                                    **_safeguards(self))


@dataclass(frozen=True)
class RegularizedBFGSNumPy(_SecantNumPyModel):
    """Reference twin of :class:`sqnopt.curvature.RegularizedBFGS`."""

    delta: float = 1e-3
    Gamma: float = 1e-4
    init_scale: float | Literal["auto"] = 1.0
    name = "regularized_bfgs_numpy"

    def memory_bytes(self, problem: Problem) -> int:
        return _dense_bytes(problem)

    def init(self, problem: Problem) -> DenseBFGSKernelNumPy:
        return DenseBFGSKernelNumPy(problem.n_params, self.delta, self.Gamma, self.init_scale,
                                    **_safeguards(self))


class AdaGradKernelNumPy(IdentityKernelNumPy):
    """``G += g * g``; ``d = g / (delta + sqrt(G))`` (no secant pairs, like the identity).

    With ``composite`` (``lam`` and ``reg``: the objective's regularisation and 1 on the
    coordinates it regularises, 0 on intercepts), the composite step of
    :class:`sqnopt.curvature.AdaGrad` instead (``composite_step``: the driver calls
    :meth:`composite_update`): the loss part of the gradient ``g - lam_j w``, then per
    coordinate ``G += g_l^2``, ``s = delta + sqrt(G)``, ``w <- (s w - eps g_l) / (s + eps
    lam_j)`` -- every coordinate every step, the dense form of the just-in-time iterate. With
    ``l1``, the proximal step: ``z = s w - eps g_l`` soft-thresholded at ``eps l1_j`` before the
    division (``np.sign(z) * max(|z| - eps l1_j, 0) / (s + eps lam_j)``)."""

    def __init__(self, dim: int, delta: float, initial_accumulator: float,
                 composite: bool = False, lam: float = 0.0,
                 reg: FloatArray | None = None, l1: float = 0.0, ftrl: bool = False) -> None:
        self.delta = delta
        self.ftrl_proximal = ftrl
        self.dual = np.zeros(dim)
        self.ftrl_t = 0.0
        self.ftrl_eta = 0.0
        self.accumulator = np.full(dim, initial_accumulator)
        self.composite_step = composite
        self.lam_j = lam * (np.ones(dim) if reg is None else np.asarray(reg, dtype=np.float64))
        self.l1_j = l1 * (np.ones(dim) if reg is None else np.asarray(reg, dtype=np.float64))

    def direction(self, grad: FloatArray, out: FloatArray) -> None:
        self.accumulator += grad * grad
        den = self.delta + np.sqrt(self.accumulator)
        np.divide(grad, den, out=out, where=den > 0)
        out[den <= 0] = 0.0

    def composite_update(self, w: FloatArray, grad: FloatArray, eps: float,
                         w_next: FloatArray) -> int:
        """``w_next`` from ``w``, the minibatch gradient ``grad`` (regulariser included) and the
        step ``eps``; the accumulator is updated unless a value would not be finite (then -1,
        nothing changed)."""
        if self.ftrl_proximal:
            return self._ftrl_update(w, grad, eps, w_next)
        gl = grad - self.lam_j * w
        acc = self.accumulator + gl * gl
        s = self.delta + np.sqrt(acc)
        den = s + eps * self.lam_j
        with np.errstate(all="ignore"):
            z = s * w - eps * gl
            if np.any(self.l1_j):
                mag = np.maximum(np.abs(z) - eps * self.l1_j, 0.0)
                z = np.where(mag > 0, np.sign(z) * mag, 0.0)
            w_next[:] = np.where(den > 0, z / np.where(den > 0, den, 1.0), w)
        if not (np.all(np.isfinite(w_next)) and np.all(np.isfinite(acc))):
            return -1
        self.accumulator[:] = acc
        return 0

    def _ftrl_update(self, w: FloatArray, grad: FloatArray, eps: float,
                     w_next: FloatArray) -> int:
        """FTRL-Proximal (McMahan et al. 2013, Algorithm 1), written from the definitions:
        the dual sums centred at the start on the first step, ``z += g_l - sigma w`` with
        ``sigma = (s_new - s_old) / eps``, then the closed-form minimiser after ``t``
        gradients: ``-(z - sign(z) t l1) / (s / eps + t lam)`` where ``|z| > t l1``, else 0."""
        if not (eps > 0 and np.isfinite(eps)):
            return -1
        G = self.accumulator
        if self.ftrl_t == 0.0:
            self.dual[:] = -((self.delta + np.sqrt(G)) / eps) * w
        t1 = self.ftrl_t + 1.0
        gl = grad - self.lam_j * w
        acc = G + gl * gl
        so = self.delta + np.sqrt(G)
        sn = self.delta + np.sqrt(acc)
        zn = self.dual + gl - (sn - so) / eps * w
        m = t1 * self.l1_j
        num = np.where(zn > m, zn - m, np.where(zn < -m, zn + m, 0.0))
        den = sn / eps + t1 * self.lam_j
        with np.errstate(all="ignore"):
            new = np.where((num != 0.0) & (den > 0.0), -num / np.where(den > 0, den, 1.0), 0.0)
        if not (np.all(np.isfinite(new)) and np.all(np.isfinite(acc))
                and np.all(np.isfinite(zn))):
            return -1
        w_next[:] = new
        self.dual[:] = zn
        G[:] = acc
        self.ftrl_t = t1
        self.ftrl_eta = eps
        return 0


@dataclass(frozen=True)
class AdaGradNumPy(CurvatureModel):
    """Reference twin of :class:`sqnopt.curvature.AdaGrad` (and of its composite form)."""

    delta: float = 1e-8
    initial_accumulator: float = 0.0
    composite: bool = False
    l1: float = 0.0
    ftrl: bool = False
    name = "adagrad_numpy"

    @property
    def composite_step(self) -> bool:
        return self.composite

    def init(self, problem: Problem) -> AdaGradKernelNumPy:
        reg = np.ones(problem.n_params)
        if problem.fit_intercept:
            reg[problem.dim - 1::problem.dim] = 0.0
        return AdaGradKernelNumPy(problem.n_params, self.delta, self.initial_accumulator,
                                  self.composite, problem.lam, reg, self.l1, self.ftrl)


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
        return BATCH_OBSERVED

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


class NewtonCGKernelNumPy:
    """Twin of :class:`~sqnopt.curvature.NewtonCG`'s kernel: textbook CG (Nocedal & Wright 2006,
    Alg. 5.2) on the objective's Python ``hessian_product`` over the last curvature batch; with
    ``diagonal_weight = a >= 0`` preconditioned CG (Alg. 5.3) with
    ``M = a hessian_diagonal + (1 - a) lam`` (Hsia, Chiang & Lin 2018)."""

    needs_secant_pair = False
    needs_curvature_batch = True

    def __init__(self, dim: int, max_iter: int, forcing: float,
                 diagonal_weight: float = -1.0, gtol_stop: bool = False) -> None:
        self.dim, self.max_iter, self.forcing = dim, max_iter, forcing
        self.diagonal_weight = diagonal_weight
        self.gtol_stop = gtol_stop
        self.run_gtol = 0.0             # the run's gtol, set by the driver
        self.M: FloatArray | None = None
        self.g0norm: float | None = None
        self.gprev, self.eta_prev = 0.0, 0.5
        self.objective: Any = None
        self.w = np.zeros(dim)
        self.batch = np.zeros(0, dtype=np.intp)
        self.extra_samples = 0
        self.last_iterations = 0

    def observe_batch(self, objective: Any, w: FloatArray, batch: Any) -> int:
        self.objective = objective
        self.w = np.array(w, dtype=np.float64)
        self.batch = np.array(batch, dtype=np.intp)
        self.M = None
        if self.diagonal_weight >= 0:
            try:
                diag = objective.hessian_diagonal(self.w, self.batch)
            except (AttributeError, TypeError):
                diag = None             # not provided: plain CG
            if diag is not None:
                a = self.diagonal_weight
                m = a * np.asarray(diag) + (1 - a) * objective.lam
                self.M = np.where((m > 0) & np.isfinite(m), m, 1.0)
                self.extra_samples += len(self.batch)
        return BATCH_OBSERVED

    def _eta(self, gnorm: float) -> float:
        """The forcing term: fixed, min(0.5, sqrt(|g|)) (0), min(0.5, sqrt(|g| / |g_0|)) (-1),
        Eisenstat-Walker choice 2 (-2)."""
        if self.forcing > 0:
            return self.forcing
        if self.forcing == 0:
            return min(0.5, float(np.sqrt(gnorm)))
        if self.g0norm is None:
            self.g0norm, eta = gnorm, 0.5
        elif self.forcing == -1:
            eta = min(0.5, float(np.sqrt(gnorm / self.g0norm))) if self.g0norm > 0 else 0.5
        else:
            eta = 0.9 * (gnorm / self.gprev) ** 2 if self.gprev > 0 else 0.5
            safe = 0.9 * self.eta_prev ** 2
            if safe > 0.1:
                eta = max(eta, safe)
            eta = min(0.5, eta)
        self.gprev, self.eta_prev = gnorm, eta
        return eta

    def _hv(self, v: FloatArray) -> FloatArray:
        out = np.zeros(self.dim)
        self.objective.hessian_product(self.w, self.batch, np.ascontiguousarray(v), out)
        self.extra_samples += len(self.batch)
        return out

    def direction(self, grad: FloatArray, out: FloatArray) -> None:
        g = np.asarray(grad, dtype=np.float64)
        if self.objective is None:
            out[:] = g
            return
        gnorm = float(np.sqrt(g @ g))
        eta = self._eta(gnorm)
        M = self.M
        d, r = np.zeros(self.dim), g.copy()
        z = r / M if M is not None else r
        p = z.copy()
        rr, k = float(r @ z), 0         # r' M^-1 r: Alg. 5.3 stops on its square root
        target = eta * np.sqrt(rr)
        if self.gtol_stop and self.run_gtol > 0:
            target = 0.0                # the run's gtol alone ends CG (besides max_iter)
        while k < self.max_iter and np.sqrt(rr) > target:
            q = self._hv(p)
            k += 1
            pq = float(p @ q)
            if not pq > 0:
                if k == 1:
                    d = g.copy()
                break
            alpha = rr / pq
            d += alpha * p
            r -= alpha * q
            z = r / M if M is not None else r
            rr_new = float(r @ z)
            if self.gtol_stop and self.run_gtol > 0 and np.max(np.abs(r)) <= 0.5 * self.run_gtol:
                break                   # r: the gradient at w - d on a quadratic
            p = z + (rr_new / rr) * p
            rr = rr_new
        self.last_iterations = k
        out[:] = d

    def update_pair(self, v: FloatArray, r: FloatArray) -> int:
        return PAIR_SKIPPED

    def error_message(self) -> str:
        return ""


@dataclass(frozen=True)
class NewtonCGNumPy(CurvatureModel):
    """Reference twin of :class:`sqnopt.curvature.NewtonCG`."""

    max_iter: int = 20
    forcing: float | str | None = None
    preconditioner: str | None = None
    diagonal_weight: float = 0.01
    gtol_stop: bool = False
    name = "newton_cg_numpy"
    needs_curvature_batch = True
    requires = frozenset({HESSIAN_VECTOR})
    direction_scale = "newton"

    def init(self, problem: Problem) -> NewtonCGKernelNumPy:
        rules = {"relative": -1.0, "eisenstat_walker": -2.0}
        forcing = (rules[self.forcing] if isinstance(self.forcing, str)
                   else float(self.forcing or 0.0))
        return NewtonCGKernelNumPy(problem.n_params, self.max_iter, forcing,
                                   self.diagonal_weight if self.preconditioner else -1.0,
                                   self.gtol_stop)


@dataclass(frozen=True)
class TruncatedNewtonNumPy(NewtonCGNumPy):
    """Reference twin of :class:`sqnopt.curvature.TruncatedNewton`: the same CG kernel twin,
    declared ``full_batch`` like the compiled model, with its defaults."""

    max_iter: int = 50
    forcing: float | str | None = 0.25
    name = "truncated_newton_numpy"
    full_batch = True
    requires = frozenset({SMOOTH, HESSIAN_VECTOR})


class NewtonKernelNumPy:
    """Twin of :class:`~sqnopt.curvature.Newton`'s kernel: the Hessian on the batch as the
    columns ``H e_j`` of the objective's Python ``hessian_product``, factored by
    ``numpy.linalg.cholesky`` (softmax's flat class-shift directions of the unregularised
    coordinates filled as the compiled kernel does, from the problem's description) and
    solved with it."""

    needs_secant_pair = False
    needs_curvature_batch = True

    def __init__(self, dim: int, n_blocks: int = 1, lam: float = 0.0,
                 fit_intercept: bool = False) -> None:
        self.dim, self.n_blocks, self.lam, self.fit_intercept = dim, n_blocks, lam, fit_intercept
        self.L: FloatArray | None = None
        self.extra_samples = 0
        self.n_factorizations = 0

    def observe_batch(self, objective: Any, w: FloatArray, batch: Any) -> int:
        w = np.ascontiguousarray(w, dtype=np.float64)
        b = np.ascontiguousarray(batch, dtype=np.intp)
        H = np.empty((self.dim, self.dim))
        e = np.zeros(self.dim)
        col = np.zeros(self.dim)
        for j in range(self.dim):
            e[j] = 1.0
            objective.hessian_product(w, b, e, col)
            H[:, j] = col
            e[j] = 0.0
        self.n_factorizations += 1
        H = 0.5 * (H + H.T)
        if self.n_blocks > 1:
            # softmax's flat directions u_j (class-shifts of an unregularised coordinate j)
            dim = self.dim // self.n_blocks
            free = range(dim) if self.lam == 0 else ([dim - 1] if self.fit_intercept else [])
            for j in free:
                u = np.zeros(self.dim)
                u[j::dim] = 1.0 / np.sqrt(self.n_blocks)
                c = float(np.mean(np.diag(H)[j::dim]))
                H += (c if c > 0 else 1.0) * np.outer(u, u)
        try:
            self.L = np.asarray(np.linalg.cholesky(H), dtype=np.float64)
        except np.linalg.LinAlgError:
            self.L = None
            return CURVATURE_ERROR
        return BATCH_OBSERVED

    def direction(self, grad: FloatArray, out: FloatArray) -> None:
        g = np.asarray(grad, dtype=np.float64)
        if self.L is None:
            out[:] = g
            return
        z = np.linalg.solve(self.L, g)
        out[:] = np.linalg.solve(self.L.T, z)

    def update_pair(self, v: FloatArray, r: FloatArray) -> int:
        return PAIR_SKIPPED

    def error_message(self) -> str:
        return "the Hessian is not positive definite"


@dataclass(frozen=True)
class NewtonNumPy(CurvatureModel):
    """Reference twin of :class:`sqnopt.curvature.Newton`."""

    name = "newton_numpy"
    needs_curvature_batch = True
    full_batch = True
    requires = frozenset({SMOOTH, DENSE_HESSIAN})
    direction_scale = "newton"

    def memory_bytes(self, problem: Problem) -> int:
        return _dense_bytes(problem)

    def init(self, problem: Problem) -> NewtonKernelNumPy:
        return NewtonKernelNumPy(problem.n_params, problem.n_blocks, problem.lam,
                                 problem.fit_intercept)
