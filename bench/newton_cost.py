"""What one exact Newton iteration costs against a pass, per race data set: the measurement
behind ``sqnopt.recipes.default_curvature``'s rule (``NEWTON_PASSES``).

For each problem (race data, ``alpha = 1/N``, no intercept) it times, best of ``--repeats``:
one full gradient (a pass), forming and factoring the Hessian on the whole data set
(``Newton``'s ``observe_batch``), and prints them with the rule's estimate
``(sum_i K^2 nnz_i^2 / 2 + n^3 / 3) / (K nnz)`` in the same unit (passes). Then whole fits:
``SQNClassifier(curvature="newton")`` against ``SQNClassifier(curvature="lbfgs")`` (the previous
default), both at their defaults, best of ``--repeats`` (``OPENBLAS_NUM_THREADS=1``)::

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=$PWD python bench/newton_cost.py --datasets a9a w8a mushrooms dna
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from bench._data import datasets_dir
from bench.race.problems import DATASETS, load_problems
from sqnopt import Newton, Solver, SQNClassifier
from sqnopt.objectives import LogLoss, Softmax
from sqnopt.recipes import newton_cost_passes


def _best(fn: Any, repeats: int) -> float:
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return min(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", nargs="+", default=["a9a", "w8a", "mushrooms", "dna"],
                    choices=sorted(DATASETS))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-fits", action="store_true")
    args = ap.parse_args()
    skipped: list[str] = []
    root: Path | None = datasets_dir()
    print("| problem | n_params | pass | H formed + factored | = passes | rule's estimate "
          "| fit newton | fit lbfgs | newton / lbfgs |")
    print("|---|---|---|---|---|---|---|---|---|")
    for prob in load_problems(args.datasets, ["logistic", "softmax"], root, quick=False,
                              skipped=skipped):
        X, y = prob.X, prob.y
        multi = prob.loss == "softmax"
        objective = Softmax(lam=prob.alpha) if multi else LogLoss(lam=prob.alpha)
        est = newton_cost_passes(X, prob.n_classes if multi else 1)
        n_params = X.shape[1] * (prob.n_classes if multi else 1)
        if n_params > 10_000:
            print(f"| {prob.key} | {n_params} | - | - | - | {est:.3g} | - | - | - |")
            continue
        state = Solver(objective, Newton(), fit_intercept=False).init_state(X, y)
        k, kern = state.objective, state.curvature
        w = np.zeros(k.n_params)
        g = np.zeros(k.n_params)
        allb = np.arange(X.shape[0], dtype=np.intp)
        t_pass = _best(lambda k=k, w=w, g=g: k.full_gradient(w, g), max(args.repeats, 5))
        t_h = _best(lambda k=k, kern=kern, w=w, b=allb: kern.observe_batch(k, w, b),
                    args.repeats)
        row = (f"| {prob.key} | {n_params} | {1e3 * t_pass:.3g} ms | {1e3 * t_h:.3g} ms | "
               f"{t_h / t_pass:.3g} | {est:.3g} |")
        if args.no_fits:
            print(row + " - | - | - |")
            continue
        fits = {}
        for curv in ("newton", "lbfgs"):
            def fit(curv: str = curv, prob: Any = prob, X: Any = X, y: Any = y) -> None:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    SQNClassifier(alpha=prob.alpha, curvature=curv, fit_intercept=False,
                                  random_state=0).fit(X, y)
            fit()
            fits[curv] = _best(fit, args.repeats)
        print(row + f" {1e3 * fits['newton']:.3g} ms | {1e3 * fits['lbfgs']:.3g} ms | "
              f"{fits['newton'] / fits['lbfgs']:.3g} |")
    for line in skipped:
        print(line)


if __name__ == "__main__":
    main()
