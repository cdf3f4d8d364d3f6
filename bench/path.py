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

A data set named ``lasso-NxD`` (e.g. ``lasso-5000x1000``; ``--penalty l1`` or
``elasticnet``) is dense least squares instead: ``make_regression(N, D, n_informative=D/20,
noise=5)`` (seed 0, the target standardised), ``SQNRegressor`` with the penalty, and the
contenders ``sqnopt path`` (its solves on the Gram matrix formed once), ``sqnopt path on the
rows`` (the same path with the Gram matrix switched off: newGLMNET's passes over the rows, in
the same process), ``sqnopt cold``, scikit-learn's ``lasso_path`` / ``enet_path`` (on the
centred data, as ``LassoCV`` runs it; the centring counted) and ``Lasso`` / ``ElasticNet``
cold at each alpha.

``--cv K`` adds ``PathCV`` (``K`` folds, the same grid) against scikit-learn's
cross-validation: ``LassoCV`` / ``ElasticNetCV``, or for the logistic problems
``LogisticRegressionCV`` with ``Cs = 1 / (alpha n_train)`` (each fold's objective the same) and
its fast solvers of the penalty; rows marked ``cv:``, outside the path's ratio.

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
#: the ``LogisticRegressionCV`` solvers of ``--cv`` (the fast ones of each penalty)
CV_SOLVERS = {"l2": ("lbfgs", "liblinear"), "l1": ("liblinear",), "elasticnet": ("saga",)}


def _regression(name: str) -> tuple[Any, np.ndarray] | None:
    """The dense least-squares problem ``lasso-NxD``, or None for another name."""
    if not name.startswith("lasso-"):
        return None
    from sklearn.datasets import make_regression

    n, d = (int(v) for v in name[len("lasso-"):].split("x"))
    X, y = make_regression(n, d, n_informative=max(d // 20, 1), noise=5.0, random_state=0)
    return X, (y - y.mean()) / y.std()


def _load(name: str) -> tuple[Any, np.ndarray]:
    from race.problems import datasets_dir, load_problems

    skipped: list[str] = []
    for p in load_problems([name], ["logistic"], datasets_dir(None), quick=False,
                           skipped=skipped):
        return p.X, p.y
    raise SystemExit("; ".join(skipped) or f"no logistic problem for {name}")


def _estimator(penalty: str, regression: bool = False, **kw: Any) -> Any:
    from sqnopt.estimators import SQNClassifier, SQNRegressor

    est = (SQNRegressor if regression else SQNClassifier)(random_state=0, **kw)
    if penalty != "l2":
        if "penalty" not in est.get_params():
            raise SystemExit(f"this sqnopt has no penalty={penalty!r}")
        est.set_params(penalty=penalty, l1_ratio=0.5 if penalty == "elasticnet" else None)
    return est


def contenders(X: Any, y: np.ndarray, grid: np.ndarray, penalty: str,
               cv: int = 0) -> dict[str, Callable[[], None]]:
    from sklearn.linear_model import LogisticRegression, LogisticRegressionCV

    from sqnopt.estimators import PathCV, regularization_path

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

    def path_cv() -> None:
        PathCV(_estimator(penalty), alphas=grid, cv=cv).fit(X, y)

    def sk_cv(solver: str) -> Callable[[], None]:
        # each fold's objective the same as PathCV's: C = 1 / (alpha n_train) on its rows
        n_train = n - n // cv
        ratio = {"l2": 0.0, "l1": 1.0, "elasticnet": 0.5}[penalty]

        def run() -> None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")   # ConvergenceWarning at the defaults
                LogisticRegressionCV(Cs=list(1.0 / (grid * n_train)), l1_ratios=(ratio,),
                                     cv=cv, solver=solver, scoring="accuracy",
                                     use_legacy_attributes=False).fit(X, y)
        return run

    out: dict[str, Callable[[], None]] = {"sqnopt path": path, "sqnopt cold": cold}
    for s in SOLVERS[penalty]:
        if s == "newton-cholesky" and X.shape[1] > 10_000:
            continue    # a dense d x d Hessian (scikit-learn: for n_samples >> n_features)
        out[f"sklearn {s} cold"] = sklearn(s)
    if cv:
        out[f"cv: sqnopt PathCV, {cv} folds"] = path_cv
        for s in CV_SOLVERS[penalty]:
            out[f"cv: sklearn LogisticRegressionCV {s}, {cv} folds"] = sk_cv(s)
    return out


def regression_contenders(X: Any, y: np.ndarray, grid: np.ndarray, penalty: str,
                          cv: int = 0) -> dict[str, Callable[[], None]]:
    """The contenders of a dense least-squares path (the module docstring); with ``cv`` folds
    also ``PathCV`` against ``LassoCV`` / ``ElasticNetCV`` on the same grid and folds."""
    from sklearn.linear_model import ElasticNet, ElasticNetCV, Lasso, LassoCV, enet_path

    import sqnopt.composite._solve as solve
    from sqnopt.estimators import PathCV, regularization_path

    if penalty == "l2":
        raise SystemExit("the least-squares paths take --penalty l1 or elasticnet")
    l1_ratio = 1.0 if penalty == "l1" else 0.5

    def path() -> None:
        regularization_path(X, y, estimator=_estimator(penalty, True), alphas=grid)

    def rows() -> None:
        applies = solve.gram_applies
        solve.gram_applies = lambda smooth, data: False
        try:
            path()
        finally:
            solve.gram_applies = applies

    def cold() -> None:
        for a in grid:
            _estimator(penalty, True, alpha=float(a)).fit(X, y)

    def sk_path() -> None:
        enet_path(X - X.mean(axis=0), y - y.mean(), l1_ratio=l1_ratio, alphas=grid)

    def sk_cold() -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # ConvergenceWarning at the defaults
            for a in grid:
                (Lasso(alpha=float(a)) if penalty == "l1" else
                 ElasticNet(alpha=float(a), l1_ratio=l1_ratio)).fit(X, y)

    def path_cv() -> None:
        PathCV(_estimator(penalty, True), alphas=grid, cv=cv).fit(X, y)

    def sk_cv() -> None:
        (LassoCV(alphas=grid, cv=cv) if penalty == "l1" else
         ElasticNetCV(alphas=grid, l1_ratio=l1_ratio, cv=cv)).fit(X, y)

    name = "lasso_path" if penalty == "l1" else "enet_path"
    out = {"sqnopt path": path, "sqnopt path on the rows": rows, "sqnopt cold": cold,
           f"sklearn {name}": sk_path,
           f"sklearn {'Lasso' if penalty == 'l1' else 'ElasticNet'} cold": sk_cold}
    if cv:
        out[f"cv: sqnopt PathCV, {cv} folds"] = path_cv
        out[f"cv: sklearn {'LassoCV' if penalty == 'l1' else 'ElasticNetCV'}, {cv} folds"] = \
            sk_cv
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", nargs="+", default=["a9a", "news20"])
    ap.add_argument("--n-alphas", type=int, default=50)
    ap.add_argument("--penalty", choices=sorted(SOLVERS), default="l2")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--record", type=Path)
    ap.add_argument("--cv", type=int, default=0,
                    help="also PathCV against scikit-learn's cross-validation (LassoCV / "
                         "ElasticNetCV, LogisticRegressionCV), this many folds")
    args = ap.parse_args(argv)

    from sqnopt.estimators import alpha_grid
    from sqnopt.estimators._path import _l1_share

    record: dict[str, Any] = {"command": "python bench/path.py " + " ".join(sys.argv[1:]),
                              "load_start": list(os.getloadavg()), "penalty": args.penalty,
                              "n_alphas": args.n_alphas, "datasets": []}
    print(f"load average {os.getloadavg()}; penalty {args.penalty}, {args.n_alphas} alphas")
    for name in args.datasets:
        generated = _regression(name)
        X, y = _load(name) if generated is None else generated
        est = _estimator(args.penalty, generated is not None)
        if generated is None:
            grid = alpha_grid(X, y, n_alphas=args.n_alphas, l1_ratio=_l1_share(est))
            runs = contenders(X, y, grid, args.penalty, args.cv)
        else:
            grid = alpha_grid(X, y, n_alphas=args.n_alphas, l1_ratio=_l1_share(est),
                              loss="squared_error")
            runs = regression_contenders(X, y, grid, args.penalty, args.cv)
        best = {k: float("inf") for k in runs}
        for _ in range(args.rounds):
            for k, fn in runs.items():
                tic = time.perf_counter()
                fn()
                best[k] = min(best[k], time.perf_counter() - tic)
        peer = min((v, k) for k, v in best.items() if k.startswith("sklearn"))
        print(f"\n{name}: {X.shape[0]} x {X.shape[1]}, alphas {grid[0]:.3g} .. {grid[-1]:.3g}")
        for k, v in best.items():
            print(f"  {k:28s} {v:8.3f} s   {v / peer[0]:6.2f}x the fastest scikit-learn")
        print(f"  path speed-up over {peer[1]}: {peer[0] / best['sqnopt path']:.2f}x; over "
              f"sqnopt cold: {best['sqnopt cold'] / best['sqnopt path']:.2f}x")
        cvs = [k for k in best if k.startswith("cv: ")]
        if cvs:
            fastest = min(cvs[1:], key=lambda k: best[k])
            print(f"  {cvs[0][4:]} over {fastest[4:]}: {best[cvs[0]] / best[fastest]:.2f}x")
        record["datasets"].append({"name": name, "shape": list(X.shape),
                                   "alphas": [float(grid[0]), float(grid[-1])],
                                   # four significant digits: a sub-millisecond fit of
                                   # the small sets would round to 0 at three decimals
                                   "seconds": {k: float(f"{v:.4g}") for k, v in best.items()}})
    record["load_end"] = list(os.getloadavg())
    print(f"\nload average at the end {os.getloadavg()}")
    if args.record:
        args.record.parent.mkdir(parents=True, exist_ok=True)
        args.record.write_text(json.dumps(record, indent=1) + "\n")
        print(f"wrote {args.record}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
