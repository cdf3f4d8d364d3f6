"""Pure-Python reference twins of the compiled step rules."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from sqnopt.interfaces import MARGIN, FloatArray, IndexArray, Problem, StepRule

__all__ = ["ArmijoNumPy", "ConstantNumPy", "DecayingNumPy", "InverseSqrtNumPy", "PegasosStepNumPy",
           "PolyakNumPy", "ScoreLineNumPy", "WolfeNumPy"]


@dataclass
class _Constant:
    eps: float

    def step_size(self, t: int) -> float:
        return self.eps


@dataclass
class _Decaying:
    eps0: float
    T0: float

    def step_size(self, t: int) -> float:
        return self.eps0 * self.T0 / (self.T0 + t)


@dataclass(frozen=True)
class ConstantNumPy(StepRule):
    """Reference twin of :class:`sqnopt.steps.Constant`."""

    eps: float = 0.1
    name = "constant_numpy"

    def init(self, problem: Problem) -> _Constant:
        return _Constant(self.eps)


@dataclass(frozen=True)
class DecayingNumPy(StepRule):
    """Reference twin of :class:`sqnopt.steps.Decaying`."""

    eps0: float = 2e-2
    T0: float = 100.0
    name = "decaying_numpy"

    def init(self, problem: Problem) -> _Decaying:
        return _Decaying(self.eps0, self.T0)


@dataclass
class _InverseSqrt:
    eps0: float

    def step_size(self, t: int) -> float:
        return self.eps0 / math.sqrt(t + 1)


@dataclass
class _PegasosStep:
    lam: float

    def step_size(self, t: int) -> float:
        return 1.0 / (self.lam * (t + 1))


@dataclass(frozen=True)
class InverseSqrtNumPy(StepRule):
    """Reference twin of :class:`sqnopt.steps.InverseSqrt`."""

    eps0: float = 0.1
    name = "inverse_sqrt_numpy"

    def init(self, problem: Problem) -> _InverseSqrt:
        return _InverseSqrt(self.eps0)


@dataclass(frozen=True)
class PegasosStepNumPy(StepRule):
    """Reference twin of :class:`sqnopt.steps.PegasosStep`."""

    name = "pegasos_numpy"

    def init(self, problem: Problem) -> _PegasosStep:
        return _PegasosStep(problem.lam)


@dataclass
class _Armijo:
    eps0: float
    c1: float
    shrink: float
    max_backtracks: int
    line_search: bool = True

    def step_size(self, t: int) -> float:
        return self.eps0

    def search(self, objective: Any, w: FloatArray, batch: IndexArray, f0: float, g: FloatArray,
               d: FloatArray, w_next: FloatArray, g_next: FloatArray) -> tuple[float, float, int]:
        gd = float(np.dot(g, d))
        if not gd >= 0.0:
            return math.nan, math.nan, 0
        eps, evals = self.eps0, 0
        for _ in range(self.max_backtracks + 1):
            np.subtract(w, eps * d, out=w_next)
            if np.all(np.isfinite(w_next)):
                f = float(objective.gradient(w_next, batch, g_next))
                evals += 1
                if math.isfinite(f) and f <= f0 - self.c1 * eps * gd and (f < f0 or gd == 0.0):
                    return eps, f, evals
            eps *= self.shrink
        return math.nan, math.nan, evals


@dataclass(frozen=True)
class ArmijoNumPy(StepRule):
    """Reference twin of :class:`sqnopt.steps.Armijo`."""

    eps0: float = 1.0
    c1: float = 1e-4
    shrink: float = 0.5
    max_backtracks: int = 30
    name = "armijo_numpy"
    line_search = True

    def init(self, problem: Problem) -> _Armijo:
        return _Armijo(self.eps0, self.c1, self.shrink, self.max_backtracks)


def _cubic_min(a: float, fa: float, da: float, b: float, fb: float, db: float) -> float:
    d1 = da + db - 3.0 * (fa - fb) / (a - b)
    d2sq = d1 * d1 - da * db
    if not (d2sq >= 0.0 and math.isfinite(d2sq)):
        return math.nan
    d2 = math.copysign(math.sqrt(d2sq), b - a)
    return b - (b - a) * (db + d2 - d1) / (db - da + 2.0 * d2)


@dataclass
class _Wolfe:
    """Strong Wolfe by bracketing and zoom (Nocedal & Wright 2006, Algorithms 3.5-3.6), written
    as a plain loop over trials; the compiled kernel is a state machine of the same rules."""

    eps0: float
    c1: float
    c2: float
    expand: float
    max_evals: int
    line_search: bool = True

    def step_size(self, t: int) -> float:
        return self.eps0

    def search(self, objective: Any, w: FloatArray, batch: IndexArray, f0: float, g: FloatArray,
               d: FloatArray, w_next: FloatArray, g_next: FloatArray) -> tuple[float, float, int]:
        gd = float(np.dot(g, d))
        evals = 0

        def phi(a: float) -> tuple[float, float]:
            nonlocal evals
            np.subtract(w, a * d, out=w_next)
            if not np.all(np.isfinite(w_next)):
                return math.inf, math.nan
            f = float(objective.gradient(w_next, batch, g_next))
            evals += 1
            if not math.isfinite(f):
                return math.inf, math.nan
            return f, -float(np.dot(g_next, d))

        if not gd > 0.0:
            if gd == 0.0:
                f, _ = phi(self.eps0)
                if f <= f0:
                    return self.eps0, f, evals
                return math.nan, math.nan, evals
            return math.nan, math.nan, 0
        d0 = -gd

        def sufficient(a: float, f: float) -> bool:
            return f <= f0 + self.c1 * a * d0 and f < f0

        best_a, best_f = 0.0, f0
        prev = (0.0, f0, d0)
        lo = hi = prev
        zoom = False
        a, n = self.eps0, 0
        while True:
            f, da = phi(a)
            n += 1
            ok = sufficient(a, f)
            if ok and f < best_f:
                best_a, best_f = a, f
            if ok and abs(da) <= -self.c2 * d0:
                return a, f, evals
            if not zoom:
                if not ok or (n > 1 and f >= prev[1]):
                    zoom, lo, hi = True, prev, (a, f, da)
                elif da >= 0.0:
                    zoom, lo, hi = True, (a, f, da), prev
                else:
                    prev = (a, f, da)
                    if n >= self.max_evals:
                        break
                    a *= self.expand
                    continue
            else:
                if not ok or f >= lo[1]:
                    hi = (a, f, da)
                else:
                    if da * (hi[0] - lo[0]) >= 0.0:
                        hi = lo
                    lo = (a, f, da)
            if n >= self.max_evals:
                break
            left, right = min(lo[0], hi[0]), max(lo[0], hi[0])
            width = right - left
            if not width > 1e-12 * right:
                break
            nxt = math.nan
            if math.isfinite(hi[1]) and math.isfinite(hi[2]) and math.isfinite(lo[2]):
                nxt = _cubic_min(*lo, *hi)
            if not (left + 0.1 * width <= nxt <= right - 0.1 * width):
                nxt = left + 0.5 * width
            a = nxt
        if best_a > 0.0:                       # the best sufficient-decrease trial, once more
            f, _ = phi(best_a)
            if sufficient(best_a, f):
                return best_a, f, evals
        return math.nan, math.nan, evals


@dataclass(frozen=True)
class WolfeNumPy(StepRule):
    """Reference twin of :class:`sqnopt.steps.Wolfe`."""

    eps0: float = 1.0
    c1: float = 1e-4
    c2: float = 0.9
    expand: float = 2.0
    max_evals: int = 20
    name = "wolfe_numpy"
    line_search = True

    def init(self, problem: Problem) -> _Wolfe:
        return _Wolfe(self.eps0, self.c1, self.c2, self.expand, self.max_evals)


@dataclass
class _ScoreLine:
    """The exact line search in score space on a NumPy margin kernel
    (:class:`~sqnopt.objectives.reference.MarginKernelNumPy`: its design matrix, labels,
    weights and loss derivatives), with the compiled kernel's rules in plain NumPy: the margins
    ``y (z - a u)`` of the scores at ``w`` and at ``d``, Newton steps on ``phi'`` inside the
    bracket, Armijo's acceptance, and the scores of the accepted point kept by sample."""

    eps0: float
    c1: float
    shrink: float
    max_backtracks: int
    rtol: float
    max_iter: int
    line_search: bool = True
    _w: FloatArray | None = None
    _scores: FloatArray | None = None
    _valid: Any = None

    def step_size(self, t: int) -> float:
        return self.eps0

    def _minimise(self, L: Any, size: int, gd: float, rb: float, rc: float) -> float:
        a, lo, hi = self.eps0, 0.0, math.inf
        for _ in range(self.max_iter):
            d1, d2 = L(a)
            p1 = d1 / size + a * rc - rb
            p2 = d2 / size + rc
            if not math.isfinite(p1):
                hi = a
                a = lo + 0.5 * (hi - lo)
                continue
            if abs(p1) <= self.rtol * gd:
                return a
            if p1 < 0.0:
                lo = a
            else:
                hi = a
            if hi < math.inf and not hi - lo > 1e-12 * hi:
                return a
            nxt = a - p1 / p2 if (math.isfinite(p2) and p2 > 0.0) else math.nan
            if not lo < nxt < hi:
                nxt = lo + 0.5 * (hi - lo) if hi < math.inf else 2.0 * a
            a = nxt
        return a

    def search(self, objective: Any, w: FloatArray, batch: IndexArray, f0: float, g: FloatArray,
               d: FloatArray, w_next: FloatArray, g_next: FloatArray) -> tuple[float, float, int]:
        gd = float(np.dot(g, d))
        if not gd >= 0.0:
            return math.nan, math.nan, 0
        data, lam, reg = objective.data, float(objective.lam), objective._reg
        Xb = objective._X[batch]
        y, gw = data.y[batch], data.grad_weight[batch]
        size, evals = int(batch.shape[0]), 1
        if (self._w is not None and self._scores is not None and np.array_equal(w, self._w)
                and bool(np.all(self._valid[batch]))):
            z = self._scores[batch]
        elif not np.any(w):
            z = np.zeros(size)
        else:
            z = np.asarray(Xb @ w).ravel()
            evals += 1
        u = np.asarray(Xb @ d).ravel()
        a = self.eps0
        if gd > 0.0:
            rc = lam * float(np.sum(reg * d * d))
            rb = lam * float(np.sum(reg * d * w))

            def L(t: float) -> tuple[float, float]:
                m = y * (z - t * u)
                return (-float(np.sum(gw * y * objective.dloss_dmargin(m) * u)),
                        float(np.sum(gw * objective.d2loss_dmargin2(m) * u * u)))

            a = self._minimise(L, size, gd, rb, rc)
        for _ in range(self.max_backtracks + 1):
            np.subtract(w, a * d, out=w_next)
            if np.all(np.isfinite(w_next)):
                zn = z - a * u
                m = y * zn
                f = (float(np.sum(gw * objective.loss(m))) / size
                     + 0.5 * lam * float(np.sum(reg * w_next * w_next)))
                if math.isfinite(f) and f <= f0 - self.c1 * a * gd and (f < f0 or gd == 0.0):
                    coef = gw * y * objective.dloss_dmargin(m)
                    gl = Xb.T @ coef
                    g_next[:] = np.asarray(gl).ravel() / size + lam * reg * w_next
                    if self._scores is None:
                        self._scores = np.zeros(data.n_samples)
                    self._valid = np.zeros(data.n_samples, dtype=bool)
                    self._scores[batch] = zn
                    self._valid[batch] = True
                    self._w = w_next.copy()
                    return a, f, evals
            a *= self.shrink
        return math.nan, math.nan, evals


@dataclass(frozen=True)
class ScoreLineNumPy(StepRule):
    """Reference twin of :class:`sqnopt.steps.ScoreLine` for the NumPy margin objectives
    (:mod:`sqnopt.objectives.reference`: logistic and squared hinge)."""

    eps0: float = 1.0
    c1: float = 1e-4
    shrink: float = 0.5
    max_backtracks: int = 30
    rtol: float = 1e-3
    max_iter: int = 30
    name = "score_line_numpy"
    line_search = True
    requires = frozenset({MARGIN})

    def init(self, problem: Problem) -> _ScoreLine:
        return _ScoreLine(self.eps0, self.c1, self.shrink, self.max_backtracks, self.rtol,
                          self.max_iter)


@dataclass
class _Polyak:
    eps_max: float
    c: float
    f_min: float
    uses_point: bool = True

    def step_size(self, t: int) -> float:
        return self.eps_max

    def step_at(self, t: int, f: float, w: FloatArray, g: FloatArray, d: FloatArray) -> float:
        gd = float(np.dot(g, d))
        if not (math.isfinite(gd) and math.isfinite(f)):
            return math.nan
        if not (gd > 0.0 and f > self.f_min):
            return 0.0
        return min((f - self.f_min) / (self.c * gd), self.eps_max)


@dataclass(frozen=True)
class PolyakNumPy(StepRule):
    """Reference twin of :class:`sqnopt.steps.Polyak`."""

    eps_max: float = 1.0
    c: float = 0.5
    f_min: float = 0.0
    name = "polyak_numpy"
    uses_point = True

    def init(self, problem: Problem) -> _Polyak:
        return _Polyak(self.eps_max, self.c, self.f_min)
