"""The default's sampled preconditioner: L-BFGS whose two-loop recursion starts from a matrix
formed on a sample of the rows (``BoundLBFGS(rows="auto")``, 20 rows per coefficient) -- for
Poisson regression the Hessian at ``w = 0``, for logistic regression Böhning's bound where the
bound on every row costs more than its budget -- against plain L-BFGS, Newton's method, the same
matrix on every row, other sample sizes, and scikit-learn.

    python bench/sampled_hessian.py --loss poisson
    python bench/sampled_hessian.py --loss poisson --rounds 3 \
        --record bench/results/sampled_hessian/poisson.json
    python bench/sampled_hessian.py --loss logistic --rounds 2 \
        --record bench/results/sampled_hessian/logistic.json

Poisson problems (``SQNRegressor(loss="poisson")`` against ``PoissonRegressor``; the script
prints the default's choice for each):

* ``race``: the race's ``regression-dense`` Poisson problem (``bench/race/regression.py``,
  20 000 x 101, ``alpha = 1/N``, no intercept), as the race poses it;
* generated, 20 000 x 100 unless said (``fit_intercept=True``, ``alpha=1e-4``): ``plain``
  independent unit-scale features; ``correlated`` features mixed by a random matrix;
  ``scales`` feature scales spread over ``exp(+-2)``; ``counts10`` mean count about 10, mixed
  features of spread scales; ``wide`` 40 000 x 200, mixed features of spread scales;
  ``p20``, ``p50``, ``p75`` 20 000 rows of 20, 50, 75 mixed features of scales spread over
  ``exp(+-1)`` (shapes where Newton's method is affordable); ``sparse`` 50 000 x 300 CSR rows
  of 15 stored values, column scales spread over ``exp(+-1)``.

Logistic problems (``SQNClassifier()`` against ``LogisticRegression``, binary labels drawn from
a logistic model, ``alpha = 1/N``): ``plain``, ``correlated``, ``scales`` 100 000 x 200 as
above, ``mixed`` 50 000 x 400 with mixed features of scales spread over ``exp(+-1)``.

For each contender, budgets of ``max_iter`` (``tol=None``; scikit-learn's ``tol=1e-14`` so that
``max_iter`` binds) are swept upwards, each fit timed after ``gc.collect()`` (the race's way),
best of ``--rounds``, until the fit's relative excess ``(F - F*) / |F*|`` is below each target
(``F*`` from Newton's method run to a gradient of ``1e-12``). Reported: the time and the
effective passes (scikit-learn: its iterations) of the first budget below ``1e-4`` and
``1e-6``. ``--record`` writes a compact JSON record (kB); ``--table RECORD`` prints the
report's table of one (docs/report_race.md).
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
try:
    import sqnopt  # noqa: F401
except ImportError:         # run from a checkout built in place
    sys.path.insert(0, str(HERE.parent))

TARGETS = (1e-4, 1e-6)
#: sample sizes of the sweep: rows per entry of the parameter block
PER_PARAM = (5, 10, 20, 40)


def _features(n: int, p: int, mix: float, spread: float, rng: Any) -> Any:
    """Gaussian features, mixed by ``I + mix G / sqrt(p)`` (``G`` Gaussian) when ``mix`` is not
    0, each column scaled by ``exp(u)``, ``u`` uniform on ``[-spread, spread]``."""
    X = rng.normal(size=(n, p))
    if mix:
        X = X @ (rng.normal(size=(p, p)) * mix / np.sqrt(p) + np.eye(p))
    X *= np.exp(rng.uniform(-spread, spread, size=p))
    return X


def _generated(n: int, p: int, mean_log: float, mix: float, spread: float,
               seed: int) -> tuple[Any, Any]:
    rng = np.random.default_rng(seed)
    X = _features(n, p, mix, spread, rng)
    w = rng.normal(size=p) * 0.5 / np.sqrt(p) / X.std(axis=0)
    y = rng.poisson(np.exp(np.clip(X @ w + mean_log, -10.0, 5.0))).astype(float)
    return X, y


def _logistic(n: int, p: int, mix: float, spread: float, seed: int) -> tuple[Any, Any]:
    rng = np.random.default_rng(seed)
    X = _features(n, p, mix, spread, rng)
    w = rng.normal(size=p) * 1.5 / np.sqrt(p) / X.std(axis=0)
    y = np.where(rng.random(n) < 1.0 / (1.0 + np.exp(-(X @ w))), 1, -1)
    return X, y


def logistic_problems() -> dict[str, dict[str, Any]]:
    out = {}
    for name, args in (("plain", (100_000, 200, 0.0, 0.0)),
                       ("correlated", (100_000, 200, 3.0, 0.0)),
                       ("scales", (100_000, 200, 0.0, 2.0)),
                       ("mixed", (50_000, 400, 1.0, 1.0))):
        X, y = _logistic(*args, seed=0)
        out[name] = {"X": X, "y": y, "alpha": 1.0 / X.shape[0], "intercept": True}
    return out


def poisson_problems() -> dict[str, dict[str, Any]]:
    from race.regression import load_regression_dense

    X, targets = load_regression_dense(None)[:2]
    out = {"race": {"X": X, "y": targets["poisson"][0], "alpha": 1.0 / X.shape[0],
                    "intercept": False}}
    for name, args in (("plain", (20_000, 100, 0.0, 0.0, 0.0)),
                       ("correlated", (20_000, 100, 0.0, 3.0, 0.0)),
                       ("scales", (20_000, 100, 0.0, 0.0, 2.0)),
                       ("counts10", (20_000, 100, 2.3, 1.0, 0.5)),
                       ("wide", (40_000, 200, 0.0, 1.0, 1.0)),
                       ("p20", (20_000, 20, 0.0, 1.0, 1.0)),
                       ("p50", (20_000, 50, 0.0, 1.0, 1.0)),
                       ("p75", (20_000, 75, 0.0, 1.0, 1.0))):
        X, y = _generated(*args, seed=0)
        out[name] = {"X": X, "y": y, "alpha": 1e-4, "intercept": True}
    # sparse rows: 15 stored values of spread scales per row among 300 features
    import scipy.sparse as sp

    rng = np.random.default_rng(1)
    S = sp.random(50_000, 300, density=0.05, format="csr", random_state=1,
                  data_rvs=lambda k: rng.normal(size=k))
    S = sp.csr_matrix(S @ sp.diags(np.exp(rng.uniform(-1.0, 1.0, size=300))))
    w = rng.normal(size=300) * 0.3
    y = rng.poisson(np.exp(np.clip(S @ w, -10.0, 5.0))).astype(float)
    out["sparse"] = {"X": S, "y": y, "alpha": 1e-4, "intercept": True}
    return out


def _objective(loss: str, X: Any, y: Any, alpha: float, coef: Any, intercept: float) -> float:
    s = X @ np.ravel(coef) + float(np.ravel(intercept)[0])
    data = (np.mean(np.exp(s) - y * s) if loss == "poisson"
            else np.mean(np.logaddexp(0.0, -y * s)))
    return float(data + 0.5 * alpha * np.ravel(coef) @ np.ravel(coef))


def _budgets(cap: int) -> list[int]:
    out, b = [], 1
    while b <= cap:
        out.append(b)
        b = b + 1 if b < 24 else int(round(b * 1.25))
    return out


def sweep(make: Callable[[int], Any], excess: Callable[[Any], float],
          passes: Callable[[Any], float], rounds: int, cap: int) -> dict[str, Any]:
    """Time and passes of the first budget below each target."""
    found: dict[str, Any] = {}
    for b in _budgets(cap):
        best, est = float("inf"), None
        for _ in range(rounds):
            est = make(b)
            gc.collect()
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est.fit_()
            best = min(best, time.perf_counter() - t0)
        e = excess(est)
        for target in TARGETS:
            key = f"{target:g}"
            if key not in found and e <= target:
                found[key] = {"budget": b, "seconds": best, "work": passes(est),
                              "excess": e}
        if len(found) == len(TARGETS):
            break
    return found


class _Fit:
    """A fit on fixed data, so that every contender's timed call is ``fit_()``."""

    def __init__(self, est: Any, X: Any, y: Any) -> None:
        self.est, self.X, self.y = est, X, y

    def fit_(self) -> None:
        self.est.fit(self.X, self.y)


def table(record: dict[str, Any]) -> str:
    """The report's Markdown table of a record: time in ms to 1e-4 / 1e-6 (effective passes;
    scikit-learn's iterations) per contender, and the default over the fastest scikit-learn
    solver."""
    cols = ["default", "lbfgs", "newton", "every row", "sklearn lbfgs", "sklearn newton-cholesky"]
    lines = ["| problem | default's model | " + " | ".join(cols) + " | ratio |",
             "|---|---|" + "---|" * len(cols) + "---|"]
    keys = [f"{t:g}" for t in TARGETS]

    def ms(v: float) -> str:
        return f"{v * 1e3:.1f}" if v < 0.1 else f"{v * 1e3:.0f}"

    for name, p in record["problems"].items():
        c = p["contenders"]
        model = p["default_curvature"]
        model = ("sampled bound" if "rows='auto'" in model else model.split("(")[0])
        cells = []
        for label in cols:
            hits = [c[label].get(k) for k in keys]
            t = " / ".join("-" if h is None else ms(h["seconds"]) for h in hits)
            w = " / ".join("-" if h is None else f"{h['work']:.3g}" for h in hits)
            cells.append(f"{t} ({w})")
        ratios = []
        for k in keys:
            best = [c[lab][k]["seconds"] for lab in c
                    if lab.startswith("sklearn") and k in c[lab]]
            ours = c["default"].get(k)
            ratios.append("-" if not best or ours is None
                          else f"{ours['seconds'] / min(best):.2f}x")
        shape = " x ".join(f"{d:,}".replace(",", " ") for d in p["shape"])
        lines.append(f"| {name}, {shape} | {model} | " + " | ".join(cells)
                     + f" | {' / '.join(ratios)} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from sklearn.linear_model import LogisticRegression, PoissonRegressor

    from sqnopt import SQNClassifier, SQNRegressor
    from sqnopt.curvature import BoundLBFGS
    from sqnopt.objectives import LogLoss, Poisson
    from sqnopt.recipes import default_curvature
    from sqnopt.solver._blas import blas_threads_limited

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--loss", choices=["poisson", "logistic"], default="poisson")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cap", type=int, default=400, help="largest budget of a sweep")
    ap.add_argument("--problems", nargs="*", help="a subset of the problems, by name")
    ap.add_argument("--record", type=Path, help="write a compact JSON record here")
    ap.add_argument("--table", type=Path, metavar="RECORD",
                    help="print the report's table of a record, run nothing")
    args = ap.parse_args(argv)
    if args.table is not None:
        import json

        print(table(json.loads(args.table.read_text())))
        return 0
    loss = args.loss
    record: dict[str, Any] = {
        "command": "python bench/sampled_hessian.py " + " ".join(
            sys.argv[1:] if argv is None else argv),
        "loss": loss, "load_start": list(os.getloadavg()), "problems": {}}
    print(f"load average {record['load_start']}")
    with blas_threads_limited(1):
        problems = poisson_problems() if loss == "poisson" else logistic_problems()
        for name, p in problems.items():
            if args.problems and name not in args.problems:
                continue
            X, y, alpha, intercept = p["X"], p["y"], p["alpha"], p["intercept"]
            dim = X.shape[1] + int(intercept)
            if loss == "poisson":
                choice = default_curvature(Poisson(lam=alpha), X, 0)
            else:
                choice = default_curvature(LogLoss(lam=alpha), X, 2)

            def estimator(**kw: Any) -> Any:
                if loss == "poisson":
                    return SQNRegressor(loss="poisson", alpha=alpha, fit_intercept=intercept,
                                        **kw)
                return SQNClassifier(alpha=alpha, fit_intercept=intercept, **kw)

            ref = estimator(curvature="newton", tol=1e-12, max_iter=200).fit(X, y)
            fstar = _objective(loss, X, y, alpha, ref.coef_, ref.intercept_)

            def excess(f: _Fit) -> float:
                return (_objective(loss, X, y, alpha, f.est.coef_, f.est.intercept_) - fstar) \
                    / abs(fstar)

            def ours(**kw: Any) -> Callable[[int], _Fit]:
                return lambda b: _Fit(estimator(max_iter=b, tol=None, random_state=0, **kw),
                                      X, y)

            def sk(solver: str) -> Callable[[int], _Fit]:
                if loss == "poisson":
                    return lambda b: _Fit(PoissonRegressor(
                        alpha=alpha, fit_intercept=intercept, solver=solver, max_iter=b,
                        tol=1e-14), X, y)
                return lambda b: _Fit(LogisticRegression(
                    C=1.0 / (alpha * X.shape[0]), fit_intercept=intercept, solver=solver,
                    max_iter=b, tol=1e-14), X, y)

            contenders: dict[str, tuple[Callable[[int], _Fit], Callable[[_Fit], float]]] = {}

            def our_passes(f: _Fit) -> float:
                return float(f.est.history_.effective_passes[-1])

            def sk_iters(f: _Fit) -> float:
                return float(np.max(f.est.n_iter_))

            contenders["default"] = (ours(), our_passes)
            contenders["lbfgs"] = (ours(curvature="lbfgs"), our_passes)
            contenders["every row"] = (ours(curvature=BoundLBFGS()), our_passes)
            contenders["newton"] = (ours(curvature="newton"), our_passes)
            for k in PER_PARAM:
                contenders[f"{k} rows/param"] = (ours(curvature=BoundLBFGS(rows=k * dim)),
                                                 our_passes)
            contenders["sklearn lbfgs"] = (sk("lbfgs"), sk_iters)
            contenders["sklearn newton-cholesky"] = (sk("newton-cholesky"), sk_iters)
            rows: dict[str, Any] = {}
            for label, (make, passes) in contenders.items():
                rows[label] = sweep(make, excess, passes, args.rounds, args.cap)
                rows[label]["work_unit"] = ("iterations" if label.startswith("sklearn")
                                            else "effective passes")
            record["problems"][name] = {"shape": list(X.shape), "alpha": alpha,
                                        "fit_intercept": intercept,
                                        "default_curvature": choice.describe(),
                                        "f_star": fstar, "contenders": rows}
            print(f"\n{name} {X.shape}, default: {choice.describe()}")
            print("  (in brackets: effective passes; scikit-learn's iterations)")
            for label, found in rows.items():
                cells = []
                for target in TARGETS:
                    hit = found.get(f"{target:g}")
                    cells.append("-" if hit is None else
                                 f"{hit['seconds'] * 1e3:7.2f} ms ({hit['work']:.1f})")
                print(f"  {label:24s} to 1e-4 {cells[0]:>20s}   to 1e-6 {cells[1]:>20s}")
    record["load_end"] = list(os.getloadavg())
    from _results import close_record

    close_record(record, args.record)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
