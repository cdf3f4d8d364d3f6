"""newGLMNET's exact model with and without its pair floor: the same L1-logistic fits, the rows
of negligible curvature adding their diagonal only (as shipped) or every row's pairs formed.

    python bench/pair_floor.py
    python bench/pair_floor.py --problems w8a a9a news20 criteo --rounds 5 \\
        --record bench/results/pair_floor/pair-floor.json

Problems: the race's L1-logistic problems (``alpha``, no intercept and the reference value
``F*`` as the race poses them, where ``../shared/datasets`` has the data; the race's ``F*``
cache or a reference solve) and ``generated``: 4 000 sparse rows of 200 features whose labels
are the sign of a linear score plus a little noise (nearly separable: many rows end with
margins where the logistic loss has no curvature left), ``alpha = 1e-4``, its ``F*`` from a
solve to a pseudo-gradient of 1e-12.

``SQNClassifier(penalty="l1", alpha, fit_intercept=False, random_state=--seed)`` at its
defaults otherwise, with ``tol=None`` and ``max_iter = k`` for ``k = 1, 2, ...`` (the race's
sweep), under the pair floor as shipped and at 0
(``sqnopt.composite._glmnet._pair_floor_policy``): the outer iterations each variant needs to
reach a relative excess ``F / F* - 1`` of 1e-2, 1e-4 and 1e-6, and the seconds of those fits,
interleaved, best of ``--rounds`` (a garbage collection before each, as in the race). Beside
them, at each outer iteration of the shipped variant, the share of the rows under the floor
and of the pairs of entries they hold (``m_i (m_i + 1) / 2`` for a row of ``m_i`` entries:
the formation's multiply-adds). ``--record`` writes a compact JSON record (kB).
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Callable

import numpy as np

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

RACE = ("a9a", "w8a", "news20", "criteo")
PROBLEMS = RACE + ("generated",)
TARGETS = (1e-2, 1e-4, 1e-6)


def generated() -> tuple[Any, Any, float]:
    """``(X, y, alpha)`` of the generated nearly separable problem."""
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    N, d = 4000, 200
    X = sp.random(N, d, density=0.05, random_state=1, format="csr",
                  data_rvs=lambda k: rng.normal(size=k))
    w = rng.normal(size=d) * 3.0
    y = np.where(np.asarray(X @ w).ravel() + 0.1 * rng.normal(size=N) > 0, 1.0, -1.0)
    return X, y, 1e-4


def problem(name: str) -> tuple[Any, Any, float, Callable[[Any], float], float] | None:
    """``(X, y, alpha, F, F*)`` of a problem (``F`` of the coefficients), or None when its
    data is absent."""
    if name == "generated":
        from race.problems import objective

        X, y, alpha = generated()

        def F(coef: Any) -> float:
            return objective("l1_logistic", alpha, X, y, coef)

        f_star = min(F(fit(X, y, alpha, 1000, 0, tol=1e-12)), F(fit(X, y, alpha, 1000, 0,
                                                                     tol=1e-12, floor=0.0)))
        return X, y, alpha, F, f_star
    from race.problems import cache_path, datasets_dir, load_problems, reference

    skipped: list[str] = []
    got = list(load_problems([name], ["l1_logistic"], datasets_dir(None), quick=False,
                             skipped=skipped))
    if not got:
        return None
    p = got[0]
    reference(p, cache_path())
    return p.X, p.y, p.alpha, (lambda coef: float(p.objective(np.ravel(coef)))), p.f_star


def fit(X: Any, y: Any, alpha: float, max_iter: int, seed: int, *, tol: float | None = None,
        floor: float | None = None) -> Any:
    """The fit's coefficients after ``max_iter`` outer iterations (``tol=None``: no early
    stop) under the pair floor ``floor`` (None: as shipped)."""
    from sqnopt import SQNClassifier
    from sqnopt.composite._glmnet import _pair_floor_policy

    old = _pair_floor_policy(floor)
    try:
        est = SQNClassifier(penalty="l1", alpha=alpha, fit_intercept=False, max_iter=max_iter,
                            tol=tol, random_state=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X, y)
    finally:
        _pair_floor_policy(old)
    return est.coef_.ravel().copy()


def under_floor(X: Any, coef: Any, floor: float) -> tuple[float, float]:
    """The shares of the rows, and of the formation's pairs they hold, whose logistic
    curvature at ``coef`` is below ``floor`` times the largest."""
    m = np.diff(X.indptr).astype(np.float64)
    pairs = m * (m + 1.0) / 2.0
    s = np.abs(np.asarray(X @ coef).ravel())
    D = np.exp(-s) / (1.0 + np.exp(-s)) ** 2
    under = D < floor * D.max()
    return float(np.mean(under)), float(pairs[under].sum() / pairs.sum())


def main(argv: list[str] | None = None) -> int:
    import scipy.sparse as sp

    from sqnopt.composite._glmnet import PAIR_FLOOR_DEFAULT

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--problems", nargs="+", choices=PROBLEMS, default=["w8a", "generated"])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-iter", type=int, default=30, help="the sweep's last max_iter")
    ap.add_argument("--record", type=Path, help="write a compact JSON record here")
    args = ap.parse_args(argv)
    variants = {"floor": PAIR_FLOOR_DEFAULT, "every pair": 0.0}
    record: dict[str, Any] = {
        "command": "python bench/pair_floor.py " + " ".join(sys.argv[1:] if argv is None
                                                          else argv),
        "pair_floor": PAIR_FLOOR_DEFAULT, "seed": args.seed,
        "load_start": list(os.getloadavg()), "problems": []}
    print(f"load average {record['load_start']}; pair floor {PAIR_FLOOR_DEFAULT:g}")
    for name in args.problems:
        got = problem(name)
        if got is None:
            print(f"{name}: data absent, skipped")
            continue
        X, y, alpha, F, f_star = got
        X = sp.csr_matrix(X)
        excess: dict[str, list[float]] = {v: [] for v in variants}
        share: list[tuple[float, float]] = []
        for v, floor in variants.items():
            for k in range(1, args.max_iter + 1):
                coef = fit(X, y, alpha, k, args.seed, floor=floor)
                excess[v].append(F(coef) / f_star - 1.0)
                if v == "floor":
                    share.append(under_floor(X, coef, PAIR_FLOOR_DEFAULT))
                if excess[v][-1] <= TARGETS[-1]:
                    break
        iters = {v: {f"{t:g}": next((k + 1 for k, e in enumerate(excess[v]) if e <= t), None)
                     for t in TARGETS} for v in variants}
        seconds: dict[str, dict[str, float]] = {v: {} for v in variants}
        for t in TARGETS:
            key = f"{t:g}"
            if any(iters[v][key] is None for v in variants):
                continue
            best = {v: float("inf") for v in variants}
            for _ in range(args.rounds):
                for v, floor in variants.items():
                    gc.collect()            # as the race does before each timed fit
                    t0 = time.perf_counter()
                    fit(X, y, alpha, int(iters[v][key] or 0), args.seed, floor=floor)
                    best[v] = min(best[v], time.perf_counter() - t0)
            for v in variants:
                seconds[v][key] = best[v]
        row = {"problem": name, "shape": list(X.shape), "nnz": int(X.nnz), "alpha": alpha,
               "iterations": iters, "seconds": seconds,
               "excess": {v: [float(f"{e:.3g}") for e in excess[v]] for v in variants},
               "rows_under_floor": [round(r, 3) for r, _ in share],
               "pairs_under_floor": [round(q, 3) for _, q in share]}
        record["problems"].append(row)
        print(f"{name} {X.shape}: outer iterations to 1e-2/1e-4/1e-6 "
              + ", ".join(f"{v} {'/'.join(str(i) for i in iters[v].values())}"
                          for v in variants))
        for key in seconds["floor"]:
            a, b = seconds["floor"][key], seconds["every pair"][key]
            print(f"  to {key}: with the floor {a * 1e3:.1f} ms, every pair {b * 1e3:.1f} ms "
                  f"(x{a / b:.2f})")
        print("  rows under the floor, and their share of the pairs, per outer iteration: "
              + " ".join(f"{r:.2f}/{q:.2f}" for r, q in share))
    from _results import close_record

    close_record(record, args.record)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
