"""Regularization paths: a warm-started sqnopt path against cold fits at every alpha.

    python bench/path.py                                   # a9a and news20, 50 alphas, L2
    python bench/path.py --datasets a9a --n-alphas 20 --rounds 3
    python bench/path.py --penalty l1 --record bench/results/path/NAME.json

For each data set (the race's binary logistic problems, with the intercept the estimators fit),
the grid is :func:`sqnopt.estimators.alpha_grid` of ``SQNClassifier()`` with the chosen penalty
(``--n-alphas`` values), and the contenders, every one at its defaults:

* ``sqnopt path``: :func:`sqnopt.estimators.regularization_path` (each fit warm-started);
* ``sqnopt cold``: ``SQNClassifier(alpha=a).fit`` at each alpha;
* each scikit-learn ``LogisticRegression`` solver that takes the penalty, cold at each alpha
  with ``C = 1 / (alpha n)`` (the same objective; ``newton-cholesky`` only up to 10^4
  features, its dense Hessian's limit).

The seconds of each contender over the whole grid, best of ``--rounds`` rounds interleaved, and
the ratio of the sqnopt path to the fastest scikit-learn solver's cold fits. The load average is
printed at the start and the end; ``--record`` writes a compact JSON record (kB).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

SOLVERS = {"l2": ("lbfgs", "liblinear", "newton-cholesky"), "l1": ("liblinear", "saga"),
           "elasticnet": ("saga",)}


def _load(name: str) -> tuple[Any, np.ndarray]:
    from race.problems import datasets_dir, load_problems

    skipped: list[str] = []
    for p in load_problems([name], ["logistic"], datasets_dir(None), quick=False,
                           skipped=skipped):
        return p.X, p.y
    raise SystemExit("; ".join(skipped) or f"no logistic problem for {name}")


def _estimator(penalty: str, **kw: Any) -> Any:
    from sqnopt.estimators import SQNClassifier

    est = SQNClassifier(random_state=0, **kw)
    if penalty != "l2":
        if "penalty" not in est.get_params():
            raise SystemExit(f"this sqnopt has no penalty={penalty!r}")
        est.set_params(penalty=penalty)
    return est


def contenders(X: Any, y: np.ndarray, grid: np.ndarray,
               penalty: str) -> dict[str, Callable[[], None]]:
    from sklearn.linear_model import LogisticRegression

    from sqnopt.estimators import regularization_path

    n = X.shape[0]

    def path() -> None:
        regularization_path(X, y, estimator=_estimator(penalty), alphas=grid)

    def cold() -> None:
        for a in grid:
            _estimator(penalty, alpha=float(a)).fit(X, y)

    def sklearn(solver: str) -> Callable[[], None]:
        def run() -> None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")   # ConvergenceWarning at the defaults
                for a in grid:
                    kw: dict[str, Any] = {"l1_ratio": 0.5} if penalty == "elasticnet" else {}
                    LogisticRegression(C=1.0 / (float(a) * n), penalty=penalty, solver=solver,
                                       **kw).fit(X, y)
        return run

    out: dict[str, Callable[[], None]] = {"sqnopt path": path, "sqnopt cold": cold}
    for s in SOLVERS[penalty]:
        if s == "newton-cholesky" and X.shape[1] > 10_000:
            continue    # a dense d x d Hessian (scikit-learn: for n_samples >> n_features)
        out[f"sklearn {s} cold"] = sklearn(s)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", nargs="+", default=["a9a", "news20"])
    ap.add_argument("--n-alphas", type=int, default=50)
    ap.add_argument("--penalty", choices=sorted(SOLVERS), default="l2")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--record", type=Path)
    args = ap.parse_args(argv)

    from sqnopt.estimators import alpha_grid

    record: dict[str, Any] = {"command": "python bench/path.py " + " ".join(sys.argv[1:]),
                              "load_start": list(os.getloadavg()), "penalty": args.penalty,
                              "n_alphas": args.n_alphas, "datasets": []}
    print(f"load average {os.getloadavg()}; penalty {args.penalty}, {args.n_alphas} alphas")
    for name in args.datasets:
        X, y = _load(name)
        est = _estimator(args.penalty)
        share = {"l2": 0.0, "l1": 1.0}.get(args.penalty, float(est.get_params().get(
            "l1_ratio", 0.5)))
        grid = alpha_grid(X, y, n_alphas=args.n_alphas, l1_ratio=share)
        runs = contenders(X, y, grid, args.penalty)
        best = {k: float("inf") for k in runs}
        for _ in range(args.rounds):
            for k, fn in runs.items():
                tic = time.perf_counter()
                fn()
                best[k] = min(best[k], time.perf_counter() - tic)
        peer = min((v, k) for k, v in best.items() if k.startswith("sklearn"))
        print(f"\n{name}: {X.shape[0]} x {X.shape[1]}, alphas {grid[0]:.3g} .. {grid[-1]:.3g}")
        for k, v in best.items():
            print(f"  {k:28s} {v:8.2f} s   {v / peer[0]:6.2f}x the fastest scikit-learn")
        print(f"  path speed-up over {peer[1]}: {peer[0] / best['sqnopt path']:.2f}x; over "
              f"sqnopt cold: {best['sqnopt cold'] / best['sqnopt path']:.2f}x")
        record["datasets"].append({"name": name, "shape": list(X.shape),
                                   "alphas": [float(grid[0]), float(grid[-1])],
                                   "seconds": {k: round(v, 3) for k, v in best.items()}})
    record["load_end"] = list(os.getloadavg())
    print(f"\nload average at the end {os.getloadavg()}")
    if args.record:
        args.record.parent.mkdir(parents=True, exist_ok=True)
        args.record.write_text(json.dumps(record, indent=1) + "\n")
        print(f"wrote {args.record}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
