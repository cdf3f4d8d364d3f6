"""Benchmarks of the semistochastic quadratic bound method (issue 5, paper 004).

* The bound + inner-solve step on sparse data costs O(nnz(S) |Omega| (2 cg + 1) + cg m +
  n_params) per iteration (m: the coordinates the curvature batch touches) -- no d x d work:
  measured on a synthetic sparse softmax problem with n_params up to 2e6, varying nnz(S) and
  n_params separately; and the solve on those m coordinates vs on all of them.
* Side by side on a9a and news20: effective passes to 1e-3 relative excess training cost for
  SQB vs SGD / ASGD (steps tuned on a grid), and wall time of a complete SQB ``fit`` vs
  scikit-learn ``LogisticRegression(solver="lbfgs").fit`` reaching the same objective.

Run: OPENBLAS_NUM_THREADS=1 python -m pytest bench/test_sqb.py --benchmark-only -s
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import paper004_sqb as p4  # noqa: E402
from _data import sqb_available as available  # noqa: E402

from sqnopt import Geometric, Fixed, Softmax  # noqa: E402
from sqnopt.curvature import QuadraticBoundKernel  # noqa: E402
from sqnopt.data import prepare  # noqa: E402

pytestmark = pytest.mark.benchmark


def _sparse_softmax(n: int, d: int, nnz_row: int, K: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    cols = rng.integers(0, d, size=(n, nnz_row))
    X = sp.csr_matrix((rng.random(n * nnz_row), cols.ravel(),
                       np.arange(0, n * nnz_row + 1, nnz_row)), shape=(n, d))
    X.sum_duplicates()
    y = rng.integers(0, K, size=n)
    y[:K] = np.arange(K)
    k = Softmax(lam=1.0 / n).init(prepare(X, y, label_kind="multiclass"))
    return k, rng


def _step_fn(k, rng, size: int, cg: int):
    """One bound + CG step (observe a batch of ``size`` samples, then solve) as a closure."""
    c = QuadraticBoundKernel(k.n_params, k.lam, cg, 0.0, "cg")
    w = rng.normal(size=k.n_params) * 0.01
    g = rng.normal(size=k.n_params)
    d = np.empty_like(g)
    S = rng.integers(0, k.data.n_samples, size=size).astype(np.intp)

    def step() -> None:
        c.observe_batch(k, w, S)
        c.direction(g, d)
    return step


def _interleaved_min(fns: dict, rounds: int = 5) -> dict:
    """Minimum time of each closure over ``rounds``, the closures alternated within each round
    (a stall of the machine then hits one round of every contender, not all rounds of one)."""
    best = {key: np.inf for key in fns}
    for fn in fns.values():
        fn()                                      # warm-up: allocates the factor storage
    for _ in range(rounds):
        for key, fn in fns.items():
            tic = time.perf_counter()
            fn()
            best[key] = min(best[key], time.perf_counter() - tic)
    return best


def test_bound_and_cg_step_cost_is_linear_in_nnz_and_dim(benchmark):
    K, cg = 10, 10
    k, rng = _sparse_softmax(n=4000, d=20000, nnz_row=50, K=K)     # n_params = 2e5 > 2000
    c = QuadraticBoundKernel(k.n_params, k.lam, cg, 0.0, "cg")
    w = rng.normal(size=k.n_params) * 0.01
    g = rng.normal(size=k.n_params)
    d = np.empty_like(g)
    S = rng.integers(0, 4000, size=400).astype(np.intp)

    def step() -> None:
        c.observe_batch(k, w, S)
        c.direction(g, d)

    # warm-up (the first call allocates the factor storage), then five rounds: see
    # test_core.test_iteration_cost for why a single round is not compared
    benchmark.pedantic(step, rounds=5, iterations=1, warmup_rounds=1)
    # nnz(S) scaling at fixed n_params, and n_params scaling at fixed nnz(S) (10x more
    # features), measured interleaved
    k_big, rng_big = _sparse_softmax(n=4000, d=200000, nnz_row=50, K=K)   # n_params = 2e6
    t = _interleaved_min({"200": _step_fn(k, rng, 200, cg), "800": _step_fn(k, rng, 800, cg),
                          "big": _step_fn(k_big, rng_big, 200, cg)})
    t200, t800, t_big = t["200"], t["800"], t["big"]
    nnzK = 200 * 50 * K
    work_nnz = nnzK * (2 * cg + 1)
    print(f"\nbound + CG({cg}) step, softmax K={K}, 50 nnz/row:")
    print(f"  |S|=200, n_params=2e5: {t200 * 1e3:.2f} ms; |S|=800: {t800 * 1e3:.2f} ms "
          f"(ratio {t800 / t200:.2f}, nnz ratio 4)")
    print(f"  |S|=200, n_params=2e6: {t_big * 1e3:.2f} ms (ratio {t_big / t200:.2f}, "
          f"n_params ratio 10)")
    print(f"  ~{t200 * 1e9 / (work_nnz + 8 * cg * 2e5):.2f} ns per unit of "
          "nnz*K*(2cg+1) + 8*cg*n_params (an upper bound on the vector work: the solve runs "
          "on the batch's coordinates, O(n_params) only once per direction)")
    benchmark.extra_info.update({"t_S200_ms": t200 * 1e3, "t_S800_ms": t800 * 1e3,
                                 "ratio_nnz4x": t800 / t200, "t_dim10x_ms": t_big * 1e3,
                                 "ratio_dim10x": t_big / t200})
    # linear, not quadratic: 4x nnz costs < 8x (the geometric middle between linear, 4x, and
    # quadratic, 16x: the 800-row batch's factors leave the caches the 200-row one fits in, and
    # clean-clone CI runs measured 4.66 and 4.68 where a quiet machine measures about 3); 10x
    # n_params costs far less than the 100x of d x d work (a little over 10x: 2e5 doubles fit
    # in L2 cache, 2e6 do not; a dense 2e6 x 2e6 matrix would not even fit in memory)
    assert t800 / t200 < 8.0
    assert t_big / t200 < 30.0


def test_softmax_feature_major_layout_vs_parameter_layout(benchmark):
    """Sparse softmax with K = 20 and 2e6 parameters (news20-like shape, larger): full gradient
    and a bound product over 4000 samples in the feature-major mode (tracked) vs the parameter
    layout (forced), interleaved, min of 5 each, in this process."""
    K = 20
    k, rng = _sparse_softmax(n=4000, d=100_000, nnz_row=80, K=K)       # n_params = 2e6
    w = rng.normal(size=k.n_params) * 0.01
    g = np.empty(k.n_params)
    batch = np.arange(4000, dtype=np.intp)
    fac, _ = k.bound_factors(w, batch)
    v = rng.normal(size=k.n_params)

    def work() -> None:
        k.full_gradient(w, g)
        k.bound_matvec(batch, fac, v)

    best = {True: np.inf, False: np.inf}
    for _ in range(5):
        for mode in (True, False):
            k._set_feature_major(mode)
            tic = time.perf_counter()
            work()
            best[mode] = min(best[mode], time.perf_counter() - tic)
    k._set_feature_major(True)
    ratio = best[False] / best[True]
    print(f"\nsoftmax K={K}, n_params=2e6, 4000 x 80 nnz: full gradient + bound product "
          f"{best[True] * 1e3:.1f} ms feature-major vs {best[False] * 1e3:.1f} ms parameter "
          f"layout ({ratio:.2f}x)")
    benchmark.extra_info.update({"feature_major_ms": best[True] * 1e3,
                                 "parameter_layout_ms": best[False] * 1e3, "speedup": ratio})
    benchmark.pedantic(work, rounds=3, iterations=1, warmup_rounds=1)
    assert ratio > 1.0


def test_compact_solve_vs_all_coordinates(benchmark):
    """Sparse softmax with K = 20 and 2e6 parameters (news20-like shape, larger): bound + CG(10)
    direction on a 1000-sample curvature batch, solved on the coordinates the batch touches
    (tracked) vs on all coordinates (forced), interleaved, min of 5 each, in this process."""
    K, cg, size = 20, 10, 1000
    k, rng = _sparse_softmax(n=4000, d=100_000, nnz_row=80, K=K)      # n_params = 2e6
    w = rng.normal(size=k.n_params) * 0.01
    g = rng.normal(size=k.n_params)
    S = rng.integers(0, 4000, size=size).astype(np.intp)
    dirs = {}
    kernels = {}
    for compact in (True, False):
        c = QuadraticBoundKernel(k.n_params, k.lam, cg, 0.0, "cg")
        c._set_compact(compact)
        kernels[compact] = c
        dirs[compact] = np.empty_like(g)

    def step(compact: bool = True) -> None:
        kernels[compact].observe_batch(k, w, S)
        kernels[compact].direction(g, dirs[compact])

    best = {True: np.inf, False: np.inf}
    for _ in range(5):
        for compact in (True, False):
            tic = time.perf_counter()
            step(compact)
            best[compact] = min(best[compact], time.perf_counter() - tic)
    ratio = best[False] / best[True]
    m = kernels[True].solve_size
    print(f"\nbound + CG({cg}) direction, softmax K={K}, n_params=2e6, |S|={size} x 80 nnz "
          f"({m} compact coordinates): {best[True] * 1e3:.1f} ms compact vs "
          f"{best[False] * 1e3:.1f} ms all coordinates ({ratio:.2f}x)")
    benchmark.extra_info.update({"compact_ms": best[True] * 1e3,
                                 "all_coordinates_ms": best[False] * 1e3, "speedup": ratio,
                                 "compact_coordinates": m})
    benchmark.pedantic(step, rounds=3, iterations=1, warmup_rounds=1)
    np.testing.assert_allclose(dirs[True], dirs[False], rtol=1e-8,
                               atol=1e-10 * np.abs(dirs[False]).max())
    assert m < k.n_params and ratio > 1.0


def _side_by_side(name: str, budget: float, grid_cfg, sgd_steps, benchmark) -> None:
    prob = p4.Problem(name, None, 0)
    fstar, _ = p4.lbfgs_scipy(prob, maxfun=20000, gtol=1e-11)
    solver, l, sched, csched, alpha = grid_cfg
    sqb = p4.run_sqnopt(prob, p4.sqb_solver(prob, l, sched, csched, alpha, solver, 0), "SQB",
                        "", budget)
    b = p4.sgd_batch(prob)
    rows = {"SQB": sqb.reach(fstar, 1e-3)[0]}
    for avg, label in ((False, "SGD"), (True, "ASGD")):
        cands = [c for c in p4.sgd_candidates(prob, avg, 0)
                 if float(c[0].split()[2].rstrip(",")) / (b if b > 1 else 1) in sgd_steps]
        best, _ = p4.run_best(prob, fstar, label, cands, budget)
        rows[label] = best.reach(fstar, 1e-3)[0]
    target = {1e-3: fstar * (1 + 1e-3)}
    sqb_t = p4.sqb_time_to(prob, grid_cfg, 0, target)["0.001"]
    skl_t = p4.sklearn_time_to(prob, target)["0.001"]

    def refit() -> None:
        s = p4.sqb_solver(prob, l, sched, csched, alpha, solver, 0)
        s.max_iter = sqb_t["max_iter"]
        s.fit(prob.X, prob.y)

    benchmark.pedantic(refit, rounds=1, iterations=1)
    print(f"\n{name}: effective passes to 1e-3 within {budget:g} passes: "
          + ", ".join(f"{m} {'-' if v is None else f'{v:.2f}'}" for m, v in rows.items()))
    print(f"{name}: wall time to 1e-3: SQB fit {sqb_t['seconds']:.3f} s; sklearn "
          f"LogisticRegression(lbfgs) fit "
          f"{'-' if skl_t is None else format(skl_t['seconds'], '.3f')} s "
          f"(max_iter={None if skl_t is None else skl_t['max_iter']})")
    benchmark.extra_info.update({"passes_to_1e-3": rows, "sqb_seconds": sqb_t["seconds"],
                                 "sklearn_lbfgs_seconds": None if skl_t is None
                                 else skl_t["seconds"]})


@pytest.mark.skipif(not available("a9a"), reason="a9a not available")
def test_a9a_sqb_vs_sgd_asgd_and_sklearn(benchmark):
    _side_by_side("a9a", 20.0, ("cg", 10, Geometric(976, 1.5), Fixed(1000), 1.0),
                  (1.0, 0.3, 0.1, 0.03, 0.01), benchmark)


@pytest.mark.slow  # ~4 minutes: run explicitly; CI's smoke run skips it (-m "not slow")
@pytest.mark.skipif(not available("news20"), reason="news20 not available")
def test_news20_sqb_vs_sgd_asgd_and_sklearn(benchmark):
    # the long one (several minutes on 2 shared cores)
    _side_by_side("news20", 15.0, ("cg", 5, Geometric(2048, 2.0), Fixed(1000), 1.0),
                  (1.0, 0.3, 0.1), benchmark)
