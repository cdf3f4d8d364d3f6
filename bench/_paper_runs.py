"""Shared machinery of the paper 000 / 003 reproductions (boxes SVM problems).

A *method* is a name plus a factory that builds one run on a data set. Every run exposes the
same three operations, so the experiment code does not care whether it is a sqnopt ``Solver``
(oLBFGS, oBFGS, RES, SGD) or the stand-alone SAG loop:

* ``advance(k)``: run ``k`` more iterations in one compiled call (no evaluation, no callback);
* ``w``: the current iterate (a view);
* ``stats()``: pair counts etc.

``trace_run`` advances a run along a geometric grid of iteration numbers (every iteration up to
16, then at relative spacing <= 1/16), copies the iterate at each grid point and records the CPU
time (``time.thread_time``: immune to the process being descheduled on a shared machine) spent
inside each compiled chunk. The full objective is evaluated afterwards, only as far as needed:
the last grid point exactly, and the first grid point with ``F <= target`` by ``first_below``,
which walks through the rows of ``X`` in chunks and drops a grid point as soon as a *partial*
sum proves ``F > target`` (every loss term is >= 0, so ``lam/2 |w|^2 + (1/N) sum over the rows
seen so far`` is a lower bound of ``F``); only points that end up at or below the target, or
nearly so, cost a full pass over the data.
The time to the target is the CPU time of the chunks up to that grid point: the solver's own
iterations, without objective evaluations or the Python work between chunks (a chunk boundary
costs about a microsecond of call overhead, which is included). ``time_to`` (wall time of one
compiled call from scratch) is kept for cross-checks.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from sqnopt import (
    LBFGS,
    Constant,
    Decaying,
    Fixed,
    FullBFGS,
    Identity,
    RegularizedBFGS,
    Solver,
    SquaredHinge,
)
from sqnopt.data import prepare
from sqnopt.solver._sampler import UniformSampler


def objective_values(X: np.ndarray, y: np.ndarray, lam: float, W: np.ndarray) -> np.ndarray:
    """``F(w)`` of the L2-regularised squared hinge for every row of ``W`` (one matrix product)."""
    M = (X @ W.T) * y[:, None]
    Z = np.maximum(0.0, 1.0 - M)
    return 0.5 * lam * np.einsum("ij,ij->i", W, W) + np.mean(Z * Z, axis=0)


def _row_chunks(n_samples: int, first: int = 256) -> list[tuple[int, int]]:
    """Row ranges of geometrically growing size (first, 2 first, 4 first, ...) covering all rows."""
    out, start, size = [], 0, first
    while start < n_samples:
        out.append((start, min(n_samples, start + size)))
        start += size
        size *= 2
    return out


def first_below(X: np.ndarray, y: np.ndarray, lam: float, W: np.ndarray, target: float,
                block: int = 1) -> tuple[int | None, float]:
    """Index of the first row ``w`` of ``W`` with ``F(w) <= target`` and its exact ``F``
    (``(None, nan)`` if none).

    Exact (the same decision as evaluating every ``F``), but cheap for points far above the
    target: rows of ``W`` are taken in blocks of 1, 2, 4, ...; within a block, the loss terms
    are summed over growing chunks of samples and a point is dropped as soon as its partial sum
    ``lam/2 |w|^2 + (1/N) sum_{i seen} max(0, 1 - y_i x_i w)^2`` exceeds the target (all terms are
    >= 0). A point that survives all chunks has its complete ``F``.
    """
    N = X.shape[0]
    chunks = _row_chunks(N)
    start = 0
    while start < W.shape[0]:
        Wb = W[start:start + block]
        F = 0.5 * lam * np.einsum("ij,ij->i", Wb, Wb)
        alive = np.flatnonzero(F <= target)
        for lo, hi in chunks:
            if alive.size == 0:
                break
            Z = np.maximum(0.0, 1.0 - (X[lo:hi] @ Wb[alive].T) * y[lo:hi, None])
            F[alive] += np.einsum("ij,ij->j", Z, Z) / N
            alive = alive[F[alive] <= target]
        if alive.size:
            return start + int(alive[0]), float(F[alive[0]])
        start += block
        block *= 2
    return None, math.nan


def geometric_grid(last: int, fine: int = 16) -> np.ndarray:
    """Iterations 1..fine, then steps of ceil(k / fine): relative spacing <= 1/fine; ends at last."""
    pts = [0]
    k = 0
    while k < last:
        k = min(last, k + max(1, math.ceil(k / fine)))
        pts.append(k)
    return np.array(pts[1:], dtype=np.int64)


class SolverRun:
    """One sqnopt solve driven chunk by chunk through its compiled loop."""

    def __init__(self, solver: Solver, X: np.ndarray, y: np.ndarray, w0: np.ndarray | None):
        self.solver = solver
        self.state = solver.init_state(X, y, w0=w0)
        self.batch = int(solver.schedule.size)  # type: ignore[attr-defined]

    def advance(self, k: int) -> float:
        """Run ``k`` iterations in one compiled call; returns its CPU seconds."""
        tic = time.thread_time()
        code = self.state.loop.run(int(k), 0)
        cpu = time.thread_time() - tic
        if code not in (0,):
            raise FloatingPointError(f"loop stopped with code {code} at t={self.state.counters.t}")
        return cpu

    @property
    def w(self) -> np.ndarray:
        return self.state.w

    def timed(self, k: int) -> float:
        """Seconds for ``k`` iterations in one ``Solver.run`` call (evaluation excluded)."""
        self.solver.report_every = max(1, int(k))
        result = self.solver.run(self.state, max_iter=int(k))
        return float(result.wall_time)

    def stats(self) -> dict[str, int]:
        c = self.state.counters
        return {"pairs_accepted": int(c.n_pairs_accepted), "pairs_skipped": int(c.n_pairs_skipped),
                "resets": int(c.n_resets)}


class SAGRun:
    """The SAG baseline (SAGRunner of bench/native/_sag.pyx) with the same interface."""

    batch = 1

    def __init__(self, X: np.ndarray, y: np.ndarray, lam: float, eps0: float, T0: float,
                 seed: int, w0: np.ndarray | None) -> None:
        data = prepare(X, y)
        self.obj = SquaredHinge(lam=lam).init(data)
        self._w = np.zeros(X.shape[1]) if w0 is None else np.array(w0, dtype=np.float64)
        from native import load  # built on demand (bench/native)

        sampler = UniformSampler(X.shape[0], np.random.PCG64(seed))
        self.runner = load("_sag").SAGRunner(self.obj, sampler, self._w, eps0, T0)

    def advance(self, k: int) -> float:
        tic = time.thread_time()
        self.runner.run(int(k))
        return time.thread_time() - tic

    @property
    def w(self) -> np.ndarray:
        return self._w

    def timed(self, k: int) -> float:
        tic = time.perf_counter()
        self.runner.run(int(k))
        return time.perf_counter() - tic

    def stats(self) -> dict[str, int]:
        return {}


@dataclass(frozen=True)
class Method:
    """How to build one run of a method (L = batch size, step eps0 T0/(T0 + t))."""

    name: str
    kind: str            # "olbfgs" | "obfgs" | "res" | "sgd" | "sag"
    batch: int
    eps0: float
    T0: float            # <= 0: constant step eps0
    options: tuple[tuple[str, Any], ...] = ()

    def build(self, X: np.ndarray, y: np.ndarray, lam: float, seed: int,
              w0: np.ndarray | None) -> SolverRun | SAGRun:
        opts = dict(self.options)
        if self.kind == "sag":
            return SAGRun(X, y, lam, self.eps0, self.T0, seed, w0)
        curvature: Any = {
            "olbfgs": lambda: LBFGS(memory=opts.get("memory", 10)),
            "obfgs": lambda: FullBFGS(init_scale=opts.get("init_scale", "auto")),
            "res": lambda: RegularizedBFGS(delta=opts.get("delta", lam), Gamma=opts.get("Gamma", 1e-4),
                                           init_scale=opts.get("init_scale", "auto")),
            "sgd": Identity,
        }[self.kind]()
        step: Any = Decaying(eps0=self.eps0, T0=self.T0) if self.T0 > 0 else Constant(self.eps0)
        solver = Solver(SquaredHinge(lam=lam), curvature, Fixed(self.batch), step,
                        random_state=seed, report_every=10**9)
        return SolverRun(solver, X, y, w0)


def trace_run(method: Method, X: np.ndarray, y: np.ndarray, lam: float, seed: int,
              w0: np.ndarray | None, max_samples: int, target: float | None) -> dict[str, Any]:
    """Run ``max_samples`` samples; return the final F and the first grid iteration with
    ``F <= target`` (``None`` if never), plus the per-iteration time of the whole run."""
    run = method.build(X, y, lam, seed, w0)
    n_iter = max_samples // method.batch
    grid = geometric_grid(n_iter)
    W = np.empty((len(grid), X.shape[1]))
    cpu = np.empty(len(grid))                 # cumulative CPU seconds at each grid point
    done, acc = 0, 0.0
    for j, k in enumerate(grid):
        acc += run.advance(int(k) - done)
        cpu[j] = acc
        done = int(k)
        W[j] = run.w
    if not np.all(np.isfinite(W[-1])):
        raise FloatingPointError(f"{method.name}: non-finite iterate")
    f_final = float(objective_values(X, y, lam, W[-1:])[0])
    hit: int | None = None
    f_hit = math.nan
    t_hit: float | None = None
    if target is not None:
        j, f_hit = first_below(X, y, lam, W, target)
        if j is not None:
            hit, t_hit = int(grid[j]), float(cpu[j])
    return {"F": f_final, "iters_to_target": hit, "F_at_hit": f_hit, "time_to_target": t_hit,
            "seconds_per_iter": float(cpu[-1]) / n_iter, **run.stats()}


def time_to(method: Method, X: np.ndarray, y: np.ndarray, lam: float, seed: int,
            w0: np.ndarray | None, iters: int, repeats: int = 1) -> float:
    """Wall time of ``iters`` iterations from a fresh start (same seed), in one compiled call;
    the minimum over ``repeats`` fresh runs."""
    best = math.inf
    for _ in range(repeats):
        run = method.build(X, y, lam, seed, w0)
        best = min(best, run.timed(iters))
    return best


def summarize(values: list[float]) -> dict[str, float | int]:
    a = np.asarray([v for v in values if v is not None and math.isfinite(v)], dtype=np.float64)
    if a.size == 0:
        return {"count": 0, "min": math.nan, "mean": math.nan, "max": math.nan, "median": math.nan}
    return {"count": int(a.size), "min": float(a.min()), "mean": float(a.mean()),
            "max": float(a.max()), "median": float(np.median(a))}


def fmt(x: float, digits: int = 2) -> str:
    return "n/a" if x is None or not math.isfinite(x) else f"{x:.{digits}e}"

