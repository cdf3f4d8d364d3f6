"""NumPy reference twins of the gradient estimators (clear, slow; the tests' oracles).

Each is a component whose kernel implements :class:`~sqnopt.interfaces.GradientKernelLike` in
plain NumPy on top of the objective kernel's Python methods (``gradient``, ``full_gradient``,
``score_derivatives``, ``rows_axpy``, ``reg_gradient_value``). Under the same injected batch
order a solve with a twin matches the compiled estimator iterate by iterate; the twins double as
examples of a pure-Python gradient-estimator plugin.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sqnopt.interfaces import LINEAR_SCORES, GradientEstimator, Problem

FloatArray = NDArray[np.float64]

__all__ = ["MinibatchNumPy", "OverlapBatchNumPy", "ProgressiveBatchNumPy", "SAGANumPy",
           "SVRGNumPy"]


class _MinibatchKernelNumPy:
    plain = True

    def __init__(self, dim: int) -> None:
        self.dim = dim

    def bind(self, objective: Any) -> None:
        pass

    def estimate(self, objective: Any, w: FloatArray, batch: Any, out: FloatArray,
                 plain: FloatArray | None = None) -> tuple[float, int]:
        f = float(objective.gradient(w, np.asarray(batch, dtype=np.intp), out))
        if plain is not None:
            plain[:] = out
        return f, 0


class _SVRGKernelNumPy:
    plain = False

    def __init__(self, dim: int, period: int) -> None:
        self.dim, self.period = dim, period
        self.snapshot = np.zeros(dim)
        self.mu = np.zeros(dim)
        self.since = 0
        self.have = False

    def bind(self, objective: Any) -> None:
        self.have, self.since = False, 0

    def estimate(self, objective: Any, w: FloatArray, batch: Any, out: FloatArray,
                 plain: FloatArray | None = None) -> tuple[float, int]:
        b = np.asarray(batch, dtype=np.intp)
        n_samples = int(objective.data.n_samples)
        period = self.period or n_samples
        extra = 0
        if not self.have or self.since >= period:
            self.snapshot[:] = w
            objective.full_gradient(self.snapshot, self.mu)
            extra += n_samples
            self.since, self.have = 0, True
        f = float(objective.gradient(w, b, out))
        if plain is not None:
            plain[:] = out
        tmp = np.zeros(self.dim)
        objective.gradient(self.snapshot, b, tmp)
        extra += len(b)
        out += self.mu - tmp
        self.since += len(b)
        return f, extra


class _SAGAKernelNumPy:
    plain = False

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.table: FloatArray = np.zeros((0, 0))
        self.avg = np.zeros(dim)
        self.filled = False

    def bind(self, objective: Any) -> None:
        self.table = np.zeros((int(objective.data.n_samples), int(objective.n_scores)))
        self.avg = np.zeros(self.dim)
        self.filled = False

    def estimate(self, objective: Any, w: FloatArray, batch: Any, out: FloatArray,
                 plain: FloatArray | None = None) -> tuple[float, int]:
        b = np.asarray(batch, dtype=np.intp)
        N = self.table.shape[0]
        extra = 0
        if not self.filled:
            everyone = np.arange(N, dtype=np.intp)
            self.table, _ = objective.score_derivatives(w, everyone)
            self.avg[:] = 0.0
            objective.rows_axpy(everyone, self.table, 1.0 / N, self.avg)
            self.filled = True
            extra += N
        coef, total = objective.score_derivatives(w, b)
        out[:] = self.avg
        if plain is not None:
            plain[:] = 0.0
            objective.rows_axpy(b, coef, 1.0 / len(b), plain)
        for t, i in enumerate(b):              # in batch order: a repeat sees the update
            diff = coef[t] - self.table[i]
            self.table[i] = coef[t]
            if np.any(diff != 0.0):
                objective.rows_axpy(b[t:t + 1], diff, 1.0 / len(b), out)
                objective.rows_axpy(b[t:t + 1], diff, 1.0 / N, self.avg)
        reg = float(objective.reg_gradient_value(w, out))
        if plain is not None:
            objective.reg_gradient_value(w, plain)
        return float(total) / len(b) + reg, extra


class _ProgressiveBatchKernelNumPy:
    plain = False
    batch_gradient = True          # the estimate is s(w, B)
    sizes_batches = True           # batch_size() decides the next batch's size

    def __init__(self, dim: int, theta: float, nu: float = 0.0) -> None:
        self.dim, self.theta, self.nu = dim, theta, nu
        self.n_samples = 0
        self.size = 0
        self.n_tests = 0
        self.n_increases = 0

    def bind(self, objective: Any) -> None:
        self.n_samples = int(objective.data.n_samples)
        self.size = self.n_tests = self.n_increases = 0

    def batch_size(self, scheduled: int) -> int:
        return min(max(int(scheduled), self.size), self.n_samples)

    def estimate(self, objective: Any, w: FloatArray, batch: Any, out: FloatArray,
                 plain: FloatArray | None = None) -> tuple[float, int]:
        b = np.asarray(batch, dtype=np.intp)
        size, N = len(b), self.n_samples
        ortho = self.nu > 0.0
        coef, total = objective.score_derivatives(w, b)     # (size, n_scores)
        out[:] = 0.0
        objective.rows_axpy(b, coef, 1.0 / size, out)
        test = 2 <= size < N
        dd = 0.0
        if test and ortho:                                  # ||d||^2, d = g - lam w_reg
            for x in out:
                dd += float(x) * float(x)
        reg = float(objective.reg_gradient_value(w, out))
        if plain is not None:
            plain[:] = out
        extra = 0
        if test:
            dots = objective.rows_dot(b, out)               # score_k(x_i; g)
            extra += size
            # d_i' g (grad F_i' g up to the regulariser's common shift) and its sample
            # variance, in the compiled kernel's order of operations
            a = [sum((float(c) * float(d) for c, d in zip(coef[t], dots[t])), 0.0)
                 for t in range(size)]
            mean = 0.0
            for v in a:
                mean += v
            mean = mean / size
            var = 0.0
            for v in a:
                var += (v - mean) * (v - mean)
            var = var / (size - 1)
            gg = 0.0
            for x in out:
                gg += float(x) * float(x)
            th2 = self.theta * self.theta
            self.n_tests += 1
            need = 0.0
            fail = var > size * th2 * gg * gg              # the inner-product test fails
            if fail:
                need = var / (th2 * gg * gg) if gg > 0.0 else float("inf")
            if ortho:                                       # the orthogonality test
                sqn = objective.rows_sqnorm(b, coef)        # ||d_i||^2
                nu2 = self.nu * self.nu
                perp = 0.0
                if gg > 0.0:
                    for q, v in zip(sqn, a):
                        perp += float(q) - v * v / gg
                    perp = (perp - size * (dd - mean * mean / gg)) / (size - 1)
                else:
                    for q in sqn:
                        perp += float(q)
                    perp = perp / (size - 1)
                if perp > size * nu2 * gg:
                    fail = True
                    ask = perp / (nu2 * gg) if gg > 0.0 else float("inf")
                    if ask > need:
                        need = ask
            if fail:
                new = N if need >= N else int(np.ceil(need))
                if new > self.size:
                    self.size = new
                    self.n_increases += 1
        return float(total) * (1.0 / size) + reg, extra


class _OverlapBatchKernelNumPy:
    plain = False
    batch_gradient = True          # the estimate is s(w, B)
    overlap_pairs = True           # arrange() shares samples, pair() gives the secant pair

    def __init__(self, dim: int, overlap: float) -> None:
        self.dim, self.overlap = dim, overlap
        self.n_samples = 0
        self.ov = np.zeros(0, dtype=np.intp)
        self.g_out = np.zeros(dim)
        self.w_prev = np.zeros(dim)
        self.pv = np.zeros(dim)
        self.pr = np.zeros(dim)
        self.have_prev = self.prev_whole = self.have_pair = False
        self.arranged_size, self.m_in, self.n_pairs = -1, 0, 0

    def bind(self, objective: Any) -> None:
        self.n_samples = int(objective.data.n_samples)
        self.ov = np.zeros(0, dtype=np.intp)
        self.have_prev = self.prev_whole = self.have_pair = False
        self.arranged_size, self.m_in, self.n_pairs = -1, 0, 0

    def arrange(self, batch: Any) -> Any:
        b = np.array(batch, dtype=np.intp)
        size = len(b)
        self.arranged_size, self.m_in = size, 0
        m = len(self.ov)
        if size >= self.n_samples or m == 0 or not self.have_prev or self.prev_whole:
            return b
        if m >= size:   # no room beside the kept samples: left as drawn (the compiled kernel)
            return b
        b[:m] = self.ov[:m]
        self.m_in = m
        return b

    def estimate(self, objective: Any, w: FloatArray, batch: Any, out: FloatArray,
                 plain: FloatArray | None = None) -> tuple[float, int]:
        b = np.asarray(batch, dtype=np.intp)
        size, N = len(b), self.n_samples
        whole = size >= N
        m_in = self.m_in if self.arranged_size == size else 0
        self.arranged_size = -1
        m_out = 0
        if not whole:
            m_out = min(max(int(self.overlap * size), 1), size - m_in)
        mid = size - m_in - m_out
        coef, total = objective.score_derivatives(w, b)
        inv = 1.0 / size
        out[:] = 0.0
        a, bsum = np.zeros(self.dim), np.zeros(self.dim)
        extra = 0
        # the three parts in the compiled kernel's order: shared leading, middle, kept trailing
        if m_in:
            objective.rows_axpy(b[:m_in], coef[:m_in], 1.0, a)
        if mid:
            objective.rows_axpy(b[m_in:m_in + mid], coef[m_in:m_in + mid], 1.0, out)
        if m_out:
            objective.rows_axpy(b[m_in + mid:], coef[m_in + mid:], 1.0, bsum)
        out[:] = ((out + a) + bsum) * inv
        reg = float(objective.reg_gradient_value(w, out))
        if plain is not None:
            plain[:] = out
        self.have_pair = False
        if self.have_prev:
            in_part = True
            if whole and self.prev_whole:
                a[:] = out
            elif m_in > 0:
                a /= m_in
                objective.reg_gradient_value(w, a)
            elif len(self.ov) > 0 and not self.prev_whole:
                objective.gradient(w, self.ov, a)
                extra += len(self.ov)
            else:
                in_part = False
            if in_part:
                self.pv[:] = w - self.w_prev
                self.pr[:] = a - self.g_out
                self.have_pair = True
        if whole:
            self.g_out[:] = out
            self.ov = np.zeros(0, dtype=np.intp)
        else:
            self.g_out[:] = bsum / m_out
            objective.reg_gradient_value(w, self.g_out)
            self.ov = b[m_in + mid:].copy()
        self.w_prev[:] = w
        self.prev_whole = whole
        self.have_prev = True
        return float(total) * inv + reg, extra

    def reused(self, w: FloatArray, g: FloatArray, size: int) -> None:
        self.arranged_size = -1
        self.have_pair = False
        if size < self.n_samples:
            self.have_prev = False
            self.ov = np.zeros(0, dtype=np.intp)
            return
        if self.have_prev and self.prev_whole:
            self.pv[:] = w - self.w_prev
            self.pr[:] = g - self.g_out
            self.have_pair = True
        self.g_out[:] = g
        self.w_prev[:] = w
        self.ov = np.zeros(0, dtype=np.intp)
        self.prev_whole = self.have_prev = True

    def pair(self, w: FloatArray, v: FloatArray, r: FloatArray) -> bool:
        if not self.have_pair:
            return False
        v[:] = self.pv
        r[:] = self.pr
        self.have_pair = False
        self.n_pairs += 1
        return True


@dataclass(frozen=True)
class MinibatchNumPy(GradientEstimator):
    """Twin of :class:`~sqnopt.gradients.Minibatch`."""

    name = "minibatch_numpy"
    partial_sums = "minibatch"
    plain = True

    def init(self, problem: Problem) -> _MinibatchKernelNumPy:
        return _MinibatchKernelNumPy(problem.n_params)


@dataclass(frozen=True)
class SVRGNumPy(GradientEstimator):
    """Twin of :class:`~sqnopt.gradients.SVRG`."""

    period: int | None = None
    name = "svrg_numpy"
    partial_sums = "snapshot"

    def init(self, problem: Problem) -> _SVRGKernelNumPy:
        return _SVRGKernelNumPy(problem.n_params, self.period or 0)


@dataclass(frozen=True)
class SAGANumPy(GradientEstimator):
    """Twin of :class:`~sqnopt.gradients.SAGA`."""

    name = "saga_numpy"
    requires = frozenset({LINEAR_SCORES})

    def init(self, problem: Problem) -> _SAGAKernelNumPy:
        return _SAGAKernelNumPy(problem.n_params)


@dataclass(frozen=True)
class ProgressiveBatchNumPy(GradientEstimator):
    """Twin of :class:`~sqnopt.gradients.ProgressiveBatch`."""

    theta: float = 0.9
    nu: float | None = 0.5
    name = "progressive_numpy"
    partial_sums = "variance_test"
    requires = frozenset({LINEAR_SCORES})

    def init(self, problem: Problem) -> _ProgressiveBatchKernelNumPy:
        return _ProgressiveBatchKernelNumPy(problem.n_params, float(self.theta),
                                            0.0 if self.nu is None else float(self.nu))


@dataclass(frozen=True)
class OverlapBatchNumPy(GradientEstimator):
    """Twin of :class:`~sqnopt.gradients.OverlapBatch`."""

    overlap: float = 0.25
    name = "overlap_numpy"
    requires = frozenset({LINEAR_SCORES})

    def init(self, problem: Problem) -> _OverlapBatchKernelNumPy:
        return _OverlapBatchKernelNumPy(problem.n_params, float(self.overlap))
