"""Pure-Python (NumPy) twins of the plugin's compiled components.

Each is a complete component of its own (the solver runs it through its Python loop) and the
definition the compiled kernel is tested against, iterate by iterate: the same formulas, the
same order of operations and the same branch decisions. The L-SR1 twin's dot products follow
the summation order of sqnopt's ``sq_dot`` (:func:`dot`), so with a compiled objective it
rounds exactly as the compiled kernel does; the objective's twin sums with NumPy (BLAS) and
agrees to rounding. See the compiled modules' docstrings for the mathematics."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sqnopt.checkpoint import CheckpointError, restore_array, state_value
from sqnopt.data import Dataset
from sqnopt.interfaces import (
    BINARY,
    MARGIN,
    PAIR_ACCEPTED,
    PAIR_RESET,
    PAIR_SKIPPED,
    SMOOTH,
    STRONGLY_CONVEX,
    CurvatureModel,
    GradientEstimator,
    Objective,
    Problem,
    StepRule,
)
from sqnopt.objectives.reference import MarginKernelNumPy

from sqnopt_extras.plugin import LSR1, SARAH, DecayingPolyak, ModifiedHuber

FloatArray = NDArray[np.float64]

__all__ = ["DecayingPolyakNumPy", "LSR1NumPy", "ModifiedHuberNumPy", "SARAHNumPy", "dot",
           "modified_huber_d2loss", "modified_huber_dloss", "modified_huber_loss"]


def dot(a: FloatArray, b: FloatArray) -> float:
    """``a . b`` summed in the order of sqnopt's ``sq_dot`` (``sqnopt/_simd.h``): two 8-lane
    accumulators over blocks of 16, one more block of 8 into the first, the rest into a scalar
    ``t`` in order; then ``hsum(s0 + s1) + t`` with ``hsum(v) = ((v0 + v1) + (v2 + v3)) +
    ((v4 + v5) + (v6 + v7))``. Each product is rounded before it is added (no FMA), as NumPy's
    separate multiply and add do, so the result is the compiled one bit for bit."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    n = a.shape[0]
    s0, s1 = np.zeros(8), np.zeros(8)
    j = 0
    while j + 16 <= n:
        s0 = s0 + a[j:j + 8] * b[j:j + 8]
        s1 = s1 + a[j + 8:j + 16] * b[j + 8:j + 16]
        j += 16
    if j + 8 <= n:
        s0 = s0 + a[j:j + 8] * b[j:j + 8]
        j += 8
    t = 0.0
    for k in range(j, n):
        t += float(a[k]) * float(b[k])
    v = s0 + s1
    return float(((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7])) + t)

#: A pivot of the solve with M below this share of max|M| counts as singular.
PIVOT_TOL = 1e-12


# ---- the modified-Huber objective -----------------------------------------------------------

def modified_huber_loss(z: FloatArray) -> FloatArray:
    """``max(0, 1 - z)^2`` for ``z >= -1``, ``-4 z`` below."""
    return np.where(z < -1.0, -4.0 * z, np.maximum(0.0, 1.0 - z) ** 2)


def modified_huber_dloss(z: FloatArray) -> FloatArray:
    """``d loss / d z``: ``-2 max(0, 1 - z)`` for ``z >= -1``, ``-4`` below."""
    return np.where(z < -1.0, -4.0, -2.0 * np.maximum(0.0, 1.0 - z))


def modified_huber_d2loss(z: FloatArray) -> FloatArray:
    """The generalised second derivative: 2 on ``[-1, 1)``, 0 elsewhere."""
    return np.where((z >= -1.0) & (z < 1.0), 2.0, 0.0)


@dataclass(frozen=True)
class ModifiedHuberNumPy(Objective):
    """Twin of :class:`~sqnopt_extras.ModifiedHuber` on sqnopt's NumPy margin kernel."""

    lam: float = 1e-4
    name = "modified_huber_numpy"
    curvature_bound = 2.0

    def __post_init__(self) -> None:
        ModifiedHuber(self.lam)         # the same validation

    @property
    def capabilities(self) -> frozenset[str]:
        return frozenset({BINARY, MARGIN, SMOOTH} | ({STRONGLY_CONVEX} if self.lam > 0
                                                    else set()))

    def init(self, data: Dataset) -> MarginKernelNumPy:
        return MarginKernelNumPy(data, float(self.lam), modified_huber_loss,
                                 modified_huber_dloss, modified_huber_d2loss)


# ---- L-SR1 ------------------------------------------------------------------------------------

class LSR1KernelNumPy:
    """The compact inverse L-SR1 kernel (``sqnopt_extras._lsr1``) in NumPy: pairs kept
    chronologically (oldest first), with ``S'Y`` and ``Y'Y`` among them."""

    needs_secant_pair = True
    needs_curvature_batch = False

    def __init__(self, dim: int, memory: int, gamma_init: float, gamma_scale: float,
                 skip_tol: float, min_cosine: float) -> None:
        self.dim, self.memory = dim, memory
        self.gamma = self.gamma_init = gamma_init
        self.gamma_scale = gamma_scale
        self.skip_tol, self.min_cosine = skip_tol, min_cosine
        self.n_fallbacks = 0
        self.S = np.zeros((0, dim))
        self.Y = np.zeros((0, dim))
        self.SY = np.zeros((0, 0))
        self.YY = np.zeros((0, 0))

    @property
    def count(self) -> int:
        return int(self.S.shape[0])

    def _coefficients(self, a: FloatArray, b: FloatArray) -> FloatArray | None:
        """``M^{-1}(a - gamma b)`` by Gaussian elimination with partial pivoting (the compiled
        kernel's order of operations), None when M is singular to working precision."""
        k, gamma = self.count, self.gamma
        c = [float(a[p] - gamma * b[p]) for p in range(k)]
        M = [[0.0] * k for _ in range(k)]
        big = 0.0
        for p in range(k):
            for q in range(p, k):
                M[p][q] = M[q][p] = float(self.SY[p, q] - gamma * self.YY[p, q])
                big = max(big, abs(M[p][q]))
        if not (math.isfinite(big) and big > 0.0):
            return None
        for i in range(k):
            piv = i
            for p in range(i + 1, k):
                if abs(M[p][i]) > abs(M[piv][i]):
                    piv = p
            if not abs(M[piv][i]) > PIVOT_TOL * big:
                return None
            if piv != i:
                M[i][i:], M[piv][i:] = M[piv][i:], M[i][i:]
                c[i], c[piv] = c[piv], c[i]
            for p in range(i + 1, k):
                f = M[p][i] / M[i][i]
                for q in range(i + 1, k):
                    M[p][q] -= f * M[i][q]
                c[p] -= f * c[i]
        for i in range(k - 1, -1, -1):
            t = c[i]
            for q in range(i + 1, k):
                t -= M[i][q] * c[q]
            c[i] = t / M[i][i]
        out = np.array(c)
        return out if bool(np.all(np.isfinite(out))) else None

    def _apply(self, x: FloatArray) -> tuple[FloatArray | None, FloatArray, FloatArray]:
        """``(H x, S'x, Y'x)``; ``H x`` is None when M is singular."""
        a = np.array([dot(s, x) for s in self.S])
        b = np.array([dot(y, x) for y in self.Y])
        c = self._coefficients(a, b) if self.count else np.zeros(0)
        if c is None:
            return None, a, b
        out = self.gamma * x
        for p in range(self.count):
            out = out + c[p] * self.S[p]
            out = out + (-self.gamma * c[p]) * self.Y[p]
        return out, a, b

    def direction(self, grad: FloatArray, out: FloatArray) -> None:
        if self.count:
            d, _, _ = self._apply(grad)
            if d is not None:
                gg, gd, dd = dot(grad, grad), dot(grad, d), dot(d, d)
                if gg == 0.0 or (math.isfinite(gd) and math.isfinite(dd)
                                 and gd > self.min_cosine * math.sqrt(gg) * math.sqrt(dd)):
                    out[:] = d
                    return
            self.n_fallbacks += 1
        out[:] = self.gamma * grad

    def _reset(self) -> None:
        self.S, self.Y = np.zeros((0, self.dim)), np.zeros((0, self.dim))
        self.SY, self.YY = np.zeros((0, 0)), np.zeros((0, 0))

    def update_pair(self, v: FloatArray, r: FloatArray) -> int:
        vr, rr, vv = dot(v, r), dot(r, r), dot(v, v)
        if not (math.isfinite(vr) and math.isfinite(rr) and math.isfinite(vv)):
            self._reset()
            self.gamma = self.gamma_init
            return PAIR_RESET
        if rr == 0.0 or vv == 0.0:
            return PAIR_SKIPPED
        Hr, a, b = self._apply(r)
        if Hr is None:
            self._reset()
            return PAIR_RESET
        u = v - Hr
        ur, uu = dot(u, r), dot(u, u)
        if not (math.isfinite(ur) and math.isfinite(uu)):
            self._reset()
            self.gamma = self.gamma_init
            return PAIR_RESET
        if uu == 0.0 or abs(ur) < self.skip_tol * math.sqrt(rr) * math.sqrt(uu):
            return PAIR_SKIPPED
        keep = 1 if self.count == self.memory else 0     # drop the oldest when full
        S, Y = self.S[keep:], self.Y[keep:]
        k = S.shape[0]
        SY = np.zeros((k + 1, k + 1))
        YY = np.zeros((k + 1, k + 1))
        SY[:k, :k], YY[:k, :k] = self.SY[keep:, keep:], self.YY[keep:, keep:]
        SY[:k, k] = a[keep:]                    # s_p'r
        SY[k, :k] = [dot(v, yp) for yp in Y]    # v'y_p
        YY[:k, k] = YY[k, :k] = b[keep:]        # y_p'r
        SY[k, k], YY[k, k] = vr, rr
        self.S, self.Y = np.vstack([S, v]), np.vstack([Y, r])
        self.SY, self.YY = SY, YY
        if vr > 0.0:
            self.gamma = self.gamma_scale * (vr / rr)
        return PAIR_ACCEPTED

    def observe_batch(self, objective: Any, w: FloatArray, batch: Any) -> int:
        return 3

    def error_message(self) -> str:
        return "L-SR1 failed"

    def get_state(self) -> dict[str, Any]:
        return {"extra_samples": 0, "S": self.S.copy(), "Y": self.Y.copy(),
                "SY": self.SY.copy(), "YY": self.YY.copy(), "gamma": float(self.gamma),
                "n_fallbacks": int(self.n_fallbacks)}

    def set_state(self, state: dict[str, Any]) -> None:
        gamma = state_value(state, "gamma", float, self, positive=True)
        n_fallbacks = state_value(state, "n_fallbacks", int, self, lo=0)
        S = np.asarray(state.get("S", np.zeros((0, 0))))
        k = S.shape[0] if S.ndim == 2 else -1
        if not 0 <= k <= self.memory:
            raise CheckpointError(f"LSR1KernelNumPy: checkpoint field 'S' holds {k} pairs, "
                                  f"the memory is {self.memory}")
        bufs = {"S": np.zeros((k, self.dim)), "Y": np.zeros((k, self.dim)),
                "SY": np.zeros((k, k)), "YY": np.zeros((k, k))}
        for name, buf in bufs.items():
            restore_array(buf, state, name, self)
        self.S, self.Y, self.SY, self.YY = bufs["S"], bufs["Y"], bufs["SY"], bufs["YY"]
        self.gamma, self.n_fallbacks = gamma, n_fallbacks


@dataclass(frozen=True)
class LSR1NumPy(CurvatureModel):
    """Twin of :class:`~sqnopt_extras.LSR1`."""

    memory: int = 10
    skip_tol: float = 1e-8
    min_cosine: float = 1e-8
    gamma_init: float = 1.0
    gamma_scale: float = 0.5
    name = "lsr1_numpy"
    requires = frozenset({SMOOTH})
    needs_secant_pair = True
    direction_scale = "newton"

    def __post_init__(self) -> None:
        LSR1(self.memory, self.skip_tol, self.min_cosine, self.gamma_init, self.gamma_scale)

    def memory_bytes(self, problem: Problem) -> int:
        return LSR1(self.memory).memory_bytes(problem)

    def init(self, problem: Problem) -> LSR1KernelNumPy:
        return LSR1KernelNumPy(problem.n_params, int(self.memory), float(self.gamma_init),
                               float(self.gamma_scale), float(self.skip_tol),
                               float(self.min_cosine))


# ---- SARAH ------------------------------------------------------------------------------------

class SARAHKernelNumPy:
    """``v_t = s(w_t, B_t) - s(w_{t-1}, B_t) + v_{t-1}``, restarted from ``grad F`` every
    ``period`` batch samples (0: one pass)."""

    plain = False

    def __init__(self, dim: int, period: int) -> None:
        self.dim, self.period = dim, period
        self.v_prev = np.zeros(dim)
        self.w_prev = np.zeros(dim)
        self.since = self.n_restarts = 0
        self.started = False

    def bind(self, objective: Any) -> None:
        self.started, self.since = False, 0

    def estimate(self, objective: Any, w: FloatArray, batch: Any, out: FloatArray,
                 plain: FloatArray | None = None) -> tuple[float, int]:
        b = np.asarray(batch, dtype=np.intp)
        n_samples = int(objective.data.n_samples)
        period = self.period or n_samples
        tmp = np.zeros(self.dim)
        if not self.started or self.since >= period:
            f = float(objective.gradient(w, b, plain if plain is not None else tmp))
            objective.full_gradient(w, out)
            extra = n_samples
            self.since, self.started = 0, True
            self.n_restarts += 1
        else:
            f = float(objective.gradient(w, b, out))
            if plain is not None:
                plain[:] = out
            objective.gradient(self.w_prev, b, tmp)
            extra = len(b)
            out[:] = (out - tmp) + self.v_prev
        self.v_prev[:] = out
        self.w_prev[:] = w
        self.since += len(b)
        return f, extra

    def get_state(self) -> dict[str, Any]:
        return {"v_prev": self.v_prev.copy(), "w_prev": self.w_prev.copy(),
                "since": int(self.since), "n_restarts": int(self.n_restarts),
                "started": bool(self.started)}

    def set_state(self, state: dict[str, Any]) -> None:
        since = state_value(state, "since", int, self, lo=0)
        n_restarts = state_value(state, "n_restarts", int, self, lo=0)
        started = state_value(state, "started", bool, self)
        restore_array(self.v_prev, state, "v_prev", self)
        restore_array(self.w_prev, state, "w_prev", self, iterate=True)
        self.since, self.n_restarts, self.started = since, n_restarts, started


@dataclass(frozen=True)
class SARAHNumPy(GradientEstimator):
    """Twin of :class:`~sqnopt_extras.SARAH`."""

    period: int | None = None
    name = "sarah_numpy"
    vanishing_variance = True

    def __post_init__(self) -> None:
        SARAH(self.period)

    def memory_bytes(self, problem: Problem) -> int:
        return 8 * 3 * problem.n_params

    def init(self, problem: Problem) -> SARAHKernelNumPy:
        return SARAHKernelNumPy(problem.n_params, 0 if self.period is None else int(self.period))


# ---- the decaying Polyak step -----------------------------------------------------------------

class DecayingPolyakKernelNumPy:
    """``eps_t = min((f - f_min) / (c g'd), eps_max T0 / (T0 + t))``."""

    uses_point = True
    line_search = False

    def __init__(self, eps_max: float, T0: float, c: float, f_min: float) -> None:
        self.eps_max, self.T0, self.c, self.f_min = eps_max, T0, c, f_min

    def step_size(self, t: int) -> float:
        if t < 0:
            raise ValueError("iterations are numbered from t = 0")
        return self.eps_max * self.T0 / (self.T0 + float(t))

    def step_at(self, t: int, f: float, w: FloatArray, g: FloatArray, d: FloatArray) -> float:
        gd, cap = dot(g, d), self.step_size(t)
        if not (math.isfinite(gd) and math.isfinite(f)):
            return math.nan
        if not (gd > 0.0 and f > self.f_min):
            return 0.0
        eps = (f - self.f_min) / (self.c * gd)
        return eps if eps < cap else cap


@dataclass(frozen=True)
class DecayingPolyakNumPy(StepRule):
    """Twin of :class:`~sqnopt_extras.DecayingPolyak`."""

    eps_max: float = 1.0
    T0: float = 100.0
    c: float = 0.5
    f_min: float = 0.0
    name = "polyak_decay_numpy"
    uses_point = True

    def __post_init__(self) -> None:
        DecayingPolyak(self.eps_max, self.T0, self.c, self.f_min)

    def init(self, problem: Problem) -> DecayingPolyakKernelNumPy:
        return DecayingPolyakKernelNumPy(float(self.eps_max), float(self.T0), float(self.c),
                                         float(self.f_min))
