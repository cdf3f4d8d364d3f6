"""Speed goals of the BFGS-family curvature models (issue 3), as pytest-benchmark benchmarks.

Run with ``OPENBLAS_NUM_THREADS=1 python -m pytest bench/test_curvature.py --benchmark-only -s``.
Every benchmark measures its baseline in the same process and prints the ratio it is about:

* oLBFGS per-iteration cost (the whole driver iteration: two minibatch gradients, two-loop
  recursion, step, pair) vs the flop floor ``(4 tau + 4 L + c) n`` multiply-adds executed as BLAS
  ``ddot``/``daxpy`` calls on cached vectors -- goal: within 2x (``c = 4``: iterate update,
  gradient difference and the two ``lam w`` terms; our iteration also copies and checks vectors);
* RES (Cholesky form) per-iteration cost vs one LAPACK ``dpotrf`` of the same size (the published
  O(n^3) step) -- goal: at most the LAPACK solve plus O(n^2) work; also vs the same kernel forced
  onto LAPACK (``own_cholesky=False``);
* RES by eigendecomposition + Woodbury (``method="eig"``) vs the Cholesky form, per iteration in
  the solver on the paper-003 problem (n = 500, 1000), and vs the floor of the scheme: three
  passes over its ``n x n`` matrix ``Q`` (one ``dgemv`` each) or LAPACK's share of the refreshes
  (``dsyevd`` + ``dgemm`` over ``refresh_every`` pairs), whichever is larger -- at n = 1000 the
  issue-3 goal is compared with it (``bench/race/floors.py``);
* oBFGS per-iteration cost vs one BLAS ``dsymv`` (a read-only pass over H; the deferred update
  needs one pass per iteration plus a fold every few), and vs the other storage path;
* time to the paper-003 targets (F <= 1e-4 at n = 100, F <= 1e-5 at n = 1000) for oLBFGS, SGD
  and SAG vs the paper's means -- goal: >= 5x faster (oLBFGS < 15 ms / < 25 ms); oBFGS and RES
  are measured by ``bench/paper003_olbfgs_svm.py`` (their runs take seconds to minutes).

Ratios use CPU time (``time.thread_time``), measured alternately with their baseline, because the
benchmark machine is shared.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _paper_runs import time_to, trace_run  # noqa: E402
from native import load  # noqa: E402
from paper003_olbfgs_svm import methods_for  # noqa: E402

from sqnopt import LBFGS, Decaying, Fixed, RegularizedBFGS, Solver, SquaredHinge  # noqa: E402
from sqnopt.curvature import BFGSKernel  # noqa: E402
from sqnopt.datasets import make_boxes  # noqa: E402

axpy_dot_floor = load("_floor").axpy_dot_floor

TAU, L, C = 10, 5, 4
PAPER_TIME = {("olbfgs", 100): 0.0734, ("olbfgs", 1000): 0.1153, ("sgd", 100): 0.6364,
              ("sgd", 1000): 2.03, ("sag", 100): 0.5017, ("sag", 1000): 1.42}

if os.environ.get("OPENBLAS_NUM_THREADS") != "1":
    print("note: set OPENBLAS_NUM_THREADS=1 for stable timings", file=sys.stderr)


def interleaved(a: Any, b: Any, rounds: int = 15) -> tuple[float, float]:
    """Best-of-``rounds`` CPU times (``time.thread_time``) of ``a`` and ``b``, measured
    alternately, so that the noise of a shared machine hits both alike."""
    ta, tb = float("inf"), float("inf")
    for _ in range(rounds):
        tic = time.thread_time()
        a()
        ta = min(ta, time.thread_time() - tic)
        tic = time.thread_time()
        b()
        tb = min(tb, time.thread_time() - tic)
    return ta, tb


@pytest.mark.parametrize("n", [100, 1000])
def test_olbfgs_iteration_vs_flop_floor(benchmark: Any, n: int) -> None:
    X, y = make_boxes(10_000, n, random_state=0)
    solver = Solver(SquaredHinge(lam=1e-4), LBFGS(memory=TAU), Fixed(L), Decaying(2e-2, 100),
                    random_state=0, report_every=10**9)
    state = solver.init_state(X, y)
    state.loop.run(200, 0)                          # memory full, steady state
    k = 4000 if n == 100 else 600

    def iterations() -> None:
        state.loop.run(k, 0)

    # best of 7 short rounds (8 ms at n = 100): the tracked minimum of 3 varied by 1.7x in CI
    benchmark.pedantic(iterations, rounds=7, iterations=1, warmup_rounds=1)
    n_dot, n_axpy = 2 * TAU + 2 * L, 2 * TAU + 2 * L + C
    t_loop, t_floor = interleaved(iterations, lambda: axpy_dot_floor(n, n_dot, n_axpy, k))
    per_iter, floor = t_loop / k, t_floor / k
    ratio = per_iter / floor
    benchmark.extra_info.update({"n": n, "seconds_per_iteration": per_iter,
                                 "floor_seconds_per_iteration": floor,
                                 "floor_multiply_adds": (4 * TAU + 4 * L + C) * n,
                                 "ratio_to_floor": ratio, "goal": "<= 2", "goal_met": ratio <= 2})
    print(f"\n[oLBFGS n={n}] {per_iter * 1e6:.2f} us/iteration; flop floor "
          f"(4*{TAU}+4*{L}+{C})*n as BLAS ddot/daxpy: {floor * 1e6:.2f} us -> ratio {ratio:.2f} "
          f"(goal <= 2)")


def _secant_workload(kernel: Any, n: int, k: int) -> tuple[Any, Any, Any]:
    """A random SPD Hessian ``A``, a gradient ``g`` and ``iterations(kern)``: ``k`` rounds of
    direction + update with the exact secant pairs ``(v, A v)`` of random ``v`` (seed 0)."""
    rng = np.random.default_rng(0)
    Q = rng.normal(size=(n, n)) / np.sqrt(n)
    A = Q @ Q.T + np.eye(n)
    V = rng.normal(size=(k, n))
    R = V @ A
    g = rng.normal(size=n)
    out = np.empty(n)

    def iterations(kern: Any = kernel) -> None:
        for i in range(k):
            kern.direction(g, out)
            kern.update_pair(V[i], R[i])

    return A, g, iterations


@pytest.mark.parametrize("n", [100, 1000])
def test_res_iteration_vs_lapack_cholesky(benchmark: Any, n: int) -> None:
    from scipy.linalg import lapack

    kernel = RegularizedBFGS(delta=1e-3, Gamma=1e-4, method="cholesky").init(_problem(n))
    k = 200 if n == 100 else 6
    A, g, iterations = _secant_workload(kernel, n, k)

    # best of 7 rounds (8 ms at n = 100, 73 ms at n = 1000; see the oBFGS benchmark below)
    benchmark.pedantic(iterations, rounds=7, iterations=1, warmup_rounds=1)
    Af = np.asfortranarray(A)
    t_res, t_potrf = interleaved(iterations, lambda: [lapack.dpotrf(Af, lower=1) for _ in range(k)],
                                 rounds=7)
    # the same kernel with LAPACK dpotrf/dpotrs instead of its own Cholesky (n <= 160 only)
    lapack_kernel = BFGSKernel(n, delta=1e-3, Gamma=1e-4, cholesky=True, own_cholesky=False)
    t_res2, t_lap = interleaved(iterations, lambda: iterations(lapack_kernel), rounds=7)
    per_iter, potrf = t_res / k, t_potrf / k
    ratio = per_iter / potrf
    benchmark.extra_info.update({"n": n, "seconds_per_iteration": per_iter,
                                 "dpotrf_seconds": potrf, "ratio_to_dpotrf": ratio,
                                 "own_cholesky": bool(kernel.own_cholesky),
                                 "ratio_to_lapack_path": t_res2 / t_lap})
    print(f"\n[RES n={n}] {per_iter * 1e6:.1f} us/iteration (update + factor + solve; "
          f"{'own' if kernel.own_cholesky else 'LAPACK'} Cholesky) vs one LAPACK dpotrf "
          f"(scipy wrapper, copies A) {potrf * 1e6:.1f} us -> ratio {ratio:.2f}; vs the same "
          f"iteration through LAPACK dpotrf/dpotrs: {t_res2 / t_lap:.2f}")


@pytest.mark.parametrize("n", [500, 1000])
def test_res_eig_iteration_vs_cholesky_form(benchmark: Any, n: int) -> None:
    """RES by eigendecomposition + Woodbury (``method="eig"``, the default from n = 250) vs the
    Cholesky form, both inside the solver on the paper-003 problem (lam = delta = Gamma = 1e-4,
    B_0 = 100 I, L = 5). Each round is ``refresh_every`` iterations (about one refresh cycle of
    the eig form: an eigendecomposition and Gram matrices of 1 .. k pairs; early in the run
    nearly every pair is accepted), after as many iterations of warm-up."""
    X, y = make_boxes(10_000, n, random_state=1_000_003 * n)

    def state(method: str) -> Any:
        model = RegularizedBFGS(delta=1e-4, Gamma=1e-4, init_scale=100.0, method=method)
        solver = Solver(SquaredHinge(lam=1e-4), model, Fixed(L), Decaying(2e-2, 100),
                        random_state=1, report_every=10**9)
        return solver.init_state(X, y)

    eig, chol = state("eig"), state("cholesky")
    k = eig.curvature.refresh_every
    eig.loop.run(k, 0)
    chol.loop.run(k, 0)
    benchmark.pedantic(lambda: eig.loop.run(k, 0), rounds=3, iterations=1)
    t_eig, t_chol = interleaved(lambda: eig.loop.run(k, 0), lambda: chol.loop.run(k, 0),
                                rounds=3)
    ratio = t_chol / t_eig
    # the floor of this scheme: three passes over Q per iteration (one dgemv each, Q in L3), or
    # LAPACK's share of the refreshes (dsyevd + dgemm over k pairs), whichever is larger
    from race.floors import PAPER_RES_1000_SECONDS, RES_1000_ITERATIONS, gemv_seconds, \
        refresh_seconds

    passes, refresh = 3 * gemv_seconds(n), refresh_seconds(n) / k
    floor = max(passes, refresh)
    benchmark.extra_info.update({"floor_seconds_per_iteration": floor,
                                 "three_pass_seconds": passes,
                                 "refresh_share_seconds": refresh,
                                 "ratio_to_floor": t_eig / k / floor})
    benchmark.extra_info.update({"n": n, "refresh_every": k, "seconds_per_iteration": t_eig / k,
                                 "cholesky_seconds_per_iteration": t_chol / k,
                                 "speedup_vs_cholesky_form": ratio,
                                 "refreshes": eig.curvature.n_refreshes,
                                 "residual_refreshes": eig.curvature.n_residual_refreshes})
    assert eig.curvature.n_residual_refreshes == 0
    print(f"\n[RES eig n={n}] {t_eig / k * 1e3:.2f} ms/iteration (refresh every {k} pairs) vs "
          f"the Cholesky form {t_chol / k * 1e3:.2f} ms -> {ratio:.2f}x faster; floor "
          f"{floor * 1e3:.3f} ms (3 passes over Q {passes * 1e3:.3f} ms, refreshes "
          f"{refresh * 1e3:.3f} ms) -> {t_eig / k / floor:.2f}x the floor")
    if n == 1000:
        goal = PAPER_RES_1000_SECONDS / 5 / RES_1000_ITERATIONS
        print(f"  issue-3 goal at n = 1000: {goal * 1e3:.3f} ms/iteration = "
              f"{goal / floor:.2f}x this floor"
              + (" (below it: not reachable by this scheme)" if goal < floor else ""))


@pytest.mark.parametrize("n", [100, 1000])
def test_obfgs_iteration_vs_dsymv(benchmark: Any, n: int) -> None:
    from scipy.linalg import blas

    kernel = BFGSKernel(n)
    k = 400 if n == 100 else 20
    A, g, iterations = _secant_workload(kernel, n, k)

    # best of 15 short rounds (3-7 ms): a clean-clone CI run of 2026-11-23 had the minimum of 3
    # rounds at n = 1000 at 2.54x its baseline (a memory-bound pass over an 8 MB matrix, which
    # the compute-bound calibration does not follow) while the run before it passed
    benchmark.pedantic(iterations, rounds=15, iterations=1, warmup_rounds=1)
    Af = np.asfortranarray(A)
    t_bfgs, t_symv = interleaved(iterations, lambda: [blas.dsymv(1.0, Af, g, lower=1)
                                                      for _ in range(k)], rounds=7)
    # the other storage path: BLAS level 2 (dsyr2 + 2 dsymv) vs the fused one-pass kernel
    other = BFGSKernel(n, fused=not kernel.fused)
    t_a, t_b = interleaved(iterations, lambda: iterations(other), rounds=7)
    per_iter, symv = t_bfgs / k, t_symv / k
    ratio = per_iter / symv
    benchmark.extra_info.update({"n": n, "seconds_per_iteration": per_iter,
                                 "dsymv_seconds": symv, "ratio_to_dsymv": ratio,
                                 "fused": bool(kernel.fused), "merge_every": kernel.merge_every,
                                 "ratio_to_other_path": t_a / t_b})
    path = (f"fused one-pass kernel, fold every {kernel.merge_every}" if kernel.fused else
            "BLAS: dsyr2 + 2 dsymv")
    print(f"\n[oBFGS n={n}] {per_iter * 1e6:.1f} us/iteration ({path}) vs one BLAS dsymv "
          f"{symv * 1e6:.1f} us (one read of H: the memory floor) -> ratio {ratio:.2f}; vs the "
          f"other path: {t_a / t_b:.2f}")


@pytest.mark.parametrize("method", ["olbfgs", "sgd", "sag"])
@pytest.mark.parametrize("n", [100, 1000])
def test_time_to_paper_target(benchmark: Any, n: int, method: str) -> None:
    target = 1e-4 if n == 100 else 1e-5
    meth = methods_for(n, "zeros")[method]          # the paper-003 script's settings
    times, iters = [], []
    for r in range(3):
        X, y = make_boxes(10_000, n, random_state=1_000_003 * n + r)
        res = trace_run(meth, X, y, 1e-4, 31 * r + 1, None, 40_000, target)
        k = res["iters_to_target"]
        assert k is not None, f"{method} did not reach F <= {target}"
        iters.append(k)
        times.append(res["time_to_target"])           # CPU seconds of the compiled chunks
    X, y = make_boxes(10_000, n, random_state=1_000_003 * n)
    benchmark.pedantic(lambda: time_to(meth, X, y, 1e-4, 1, None, iters[0]), rounds=3,
                       iterations=1)                  # wall clock, one call from scratch
    mean = float(np.mean(times))
    paper = PAPER_TIME[(method, n)]
    speedup = paper / mean
    benchmark.extra_info.update({"n": n, "method": method, "target": target,
                                 "mean_seconds_to_target": mean,
                                 "mean_iterations_to_target": float(np.mean(iters)),
                                 "paper_mean_seconds": paper, "speedup_vs_paper": speedup,
                                 "goal": ">= 5x", "goal_met": speedup >= 5})
    print(f"\n[{method} n={n}] time to F <= {target:g}: {mean * 1e3:.3f} ms "
          f"({np.mean(iters):.0f} iterations) vs paper {paper * 1e3:.1f} ms -> {speedup:.0f}x "
          f"(goal >= 5x)")


def _problem(n: int) -> Any:
    from sqnopt.interfaces import Problem

    return Problem(n_samples=10, n_features=n, dim=n, n_blocks=1, n_params=n, lam=0.0,
                   fit_intercept=False, capabilities=frozenset())
