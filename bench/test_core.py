"""Per-iteration cost of the driver: compiled loop vs Python loop vs a bare Cython loop.

Contenders: ``compiled`` (compiled components, nogil loop), ``python`` (the same compiled
kernels driven by the Python loop: the loop's own overhead), ``numpy`` (the Python loop with the
pure-Python NumPy reference components: what a pure-Python component gets), ``bare`` (one
monolithic Cython loop with the same arithmetic).

Problem: paper 003's synthetic SVM (Mokhtari & Ribeiro 2015, Sec. 4.1): N = 10 000 boxes,
squared hinge, lam = 1e-4, L = 5, eps_t = 2e-2 * 100 / (100 + t), SGD direction.
Goals (issue 2): compiled >= 30x faster than the Python path at n = 100 and within 3x of the
bare loop. Each ratio is measured in this process, interleaving the contenders.
"""

from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np
import pytest
from native import load

from sqnopt import Decaying, Fixed, Identity, Solver, SquaredHinge
from sqnopt.datasets import make_boxes

bare_sgd_squared_hinge = load("_baseline").bare_sgd_squared_hinge

ITERS = {"compiled": 20_000, "python": 1_000, "numpy": 300, "bare": 20_000}


def _setup(n: int, path: str, n_samples: int = 10_000) -> tuple[Any, np.ndarray, np.ndarray]:
    X, y = make_boxes(n_samples, n, random_state=0)
    if path == "numpy":     # pure-Python components: the NumPy reference twins
        from sqnopt.curvature.reference import IdentityNumPy
        from sqnopt.objectives.reference import SquaredHingeNumPy
        from sqnopt.schedules.reference import FixedNumPy
        from sqnopt.steps.reference import DecayingNumPy

        solver = Solver(SquaredHingeNumPy(lam=1e-4), IdentityNumPy(), FixedNumPy(5),
                        DecayingNumPy(2e-2, 100), random_state=0)
    else:
        solver = Solver(SquaredHinge(lam=1e-4), Identity(), Fixed(5), Decaying(2e-2, 100),
                        random_state=0, path=path)  # type: ignore[arg-type]
    return solver.init_state(X, y), X, y


def _runner(n: int, kind: str, n_samples: int = 10_000) -> Callable[[], None]:
    """A callable running ITERS[kind] iterations of SGD (continuing the same state)."""
    if kind == "bare":
        X, y = make_boxes(n_samples, n, random_state=0)
        w = np.zeros(n)
        gen = np.random.PCG64(0)
        return lambda: bare_sgd_squared_hinge(X, y, w, 5, 2e-2, 100.0, 1e-4, ITERS["bare"], gen)
    state, _, _ = _setup(n, kind, n_samples)
    return lambda: state.loop.run(ITERS[kind], 0)


def _floor(n: int, batch: int = 5, n_samples: int = 10_000) -> tuple[float, str]:
    """Seconds per iteration no implementation can beat here, and which floor it is: the
    larger of the arithmetic ((2L+3)n multiply-adds as BLAS ddot/daxpy on vectors in cache,
    ``bench/native/_floor.pyx``) and the memory traffic (L rows at the read bandwidth of an array the size
    of the data, ``bench/race/floors.py``)."""
    from race.floors import read_seconds_per_byte

    from native import load

    axpy_dot_floor = load("_floor").axpy_dot_floor

    k = ITERS["compiled"]
    arith = _per_iter(lambda: axpy_dot_floor(n, batch + 1, batch + 2, k), k, repeats=5)
    memory = batch * 8 * n * read_seconds_per_byte(8 * n_samples * n)
    if arith >= memory:
        return arith, f"arithmetic: (2L+3)n multiply-adds as BLAS-1 in cache; rows {memory * 1e6:.3f} us"
    return memory, f"memory: L rows at the read bandwidth; arithmetic {arith * 1e6:.3f} us"


def _per_iter(fn: Callable[[], None], iters: int, repeats: int = 7) -> float:
    best = float("inf")
    for _ in range(repeats):
        tic = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - tic)
    return best / iters


@pytest.mark.parametrize("n", [100, 1000])
# (The pure-Python "numpy" contender and the Python loop over compiled kernels ("python") are
# only printed by the ratio test below, not regression-tracked: an iteration of either is a
# dozen small NumPy calls, whose cost depends on the NumPy build and the interpreter's state --
# a clean-clone CI venv measured the Python loop at 2.3x this machine's figure for the same
# code -- more than on sqnopt.)
@pytest.mark.parametrize("kind", ["compiled", "bare"])
def test_iteration_cost(benchmark: Any, n: int, kind: str) -> None:
    """Time for ITERS[kind] iterations (regression-tracked; divide by the count for us/iter)."""
    fn = _runner(n, kind)
    benchmark.extra_info["iterations_per_call"] = ITERS[kind]
    # Five rounds after a warm-up, whatever the run's time budget: a single 10 ms round is at
    # the mercy of one scheduler stall (a CI run saw one round at 3.8x the baseline while every
    # other figure of that run matched it), and the regression gate compares minima.
    benchmark.pedantic(fn, rounds=5, iterations=1, warmup_rounds=1)


@pytest.mark.parametrize("n", [100, 1000])
def test_compiled_vs_python_vs_bare_ratios(benchmark: Any, n: int) -> None:
    """Prints and records the two ratios of the issue-2 goal, measured side by side."""
    runners = {k: _runner(n, k) for k in ITERS}
    for fn in runners.values():
        fn()
    per = {k: float("inf") for k in ITERS}
    for _ in range(3):  # interleave so that load changes hit all contenders alike
        for k, fn in runners.items():
            per[k] = min(per[k], _per_iter(fn, ITERS[k], repeats=2))
    speedup = per["python"] / per["compiled"]
    speedup_np = per["numpy"] / per["compiled"]
    overhead = per["compiled"] / per["bare"]
    floor, floor_kind = _floor(n)
    benchmark.extra_info.update({
        "us_per_iter_compiled": per["compiled"] * 1e6, "us_per_iter_python": per["python"] * 1e6,
        "us_per_iter_numpy": per["numpy"] * 1e6, "us_per_iter_bare": per["bare"] * 1e6,
        "python_over_compiled": speedup, "numpy_over_compiled": speedup_np,
        "compiled_over_bare": overhead, "python_over_bare": per["python"] / per["bare"],
        "us_per_iter_floor": floor * 1e6, "floor": floor_kind,
        "compiled_over_floor": per["compiled"] / floor})
    print(f"\n[n={n}] per iteration: compiled {per['compiled'] * 1e6:.3f} us, python loop with "
          f"the compiled kernels {per['python'] * 1e6:.2f} us, python loop with pure-Python "
          f"(NumPy) components {per['numpy'] * 1e6:.2f} us, bare Cython {per['bare'] * 1e6:.3f} us"
          f"\n  python-loop/compiled = {speedup:.1f}x and pure-Python/compiled = {speedup_np:.1f}x "
          f"(goal >= 30x at n=100), compiled/bare = {overhead:.2f}x (goal <= 3x)"
          f"\n  python-loop/bare = {per['python'] / per['bare']:.1f}x: the ceiling of "
          "python-loop/compiled on this machine (a driver with no overhead at all)"
          f"\n  floor {floor * 1e6:.3f} us ({floor_kind}) -> compiled/floor = "
          f"{per['compiled'] / floor:.2f}x")
    if n == 100:
        # Where the compiled time goes: the 10 000 x 100 float64 rows (8 MB) exceed the per-core
        # L2, so each iteration fetches 5 random rows (4 KB) from L3. The same solve on 1 000
        # rows (800 KB, L2-resident) shows the arithmetic-and-driver part alone.
        small = {k: _runner(n, k, n_samples=1000) for k in ("compiled", "bare")}
        per_small = {k: float("inf") for k in small}
        for _ in range(3):
            for k, fn in small.items():
                fn()
                per_small[k] = min(per_small[k], _per_iter(fn, ITERS[k], repeats=2))
        benchmark.extra_info.update({
            "us_per_iter_compiled_N1000": per_small["compiled"] * 1e6,
            "us_per_iter_bare_N1000": per_small["bare"] * 1e6})
        print(f"  rows in L2 (N = 1000 instead of 10 000): compiled "
              f"{per_small['compiled'] * 1e6:.3f} us, bare {per_small['bare'] * 1e6:.3f} us "
              f"(python-loop/compiled would be {per['python'] / per_small['compiled']:.1f}x)")
    # The timed figure: the compiled runner, warmed up again (the other contenders evicted its
    # data from the caches), best of three. Printed and recorded, not gated (no baseline entry):
    # test_iteration_cost gates the same loop without the cache eviction's spread.
    benchmark.pedantic(runners["compiled"], rounds=3, iterations=1, warmup_rounds=1)
