"""Full-batch solvers of sqnopt: L-BFGS with the Armijo and the strong-Wolfe search, and
subsampled Newton-CG (the candidates for ``curvature="auto"`` and the ``lbfgs`` preset).

On a9a, w8a, dna and news20 (``../shared/datasets``), L2-logistic / softmax with ``lam = 1/N``
and no intercept: full-batch L-BFGS with the Armijo search (the recipe's deterministic phase)
and with the Wolfe search (the ``lbfgs`` preset), and Newton-CG with the Hessian on a tenth of
the data and on all of it (Armijo search), each for at most
``--max-time`` solver seconds. Prints the solver time, effective passes and iterations to 1e-2,
1e-4 and 1e-6 relative excess (``F*`` from ``bench/defaults_matrix.py``'s cache or a tight
L-BFGS solve) and writes ``bench/results/full_batch_solvers.json``.

    OPENBLAS_NUM_THREADS=1 python bench/full_batch_solvers.py [--datasets a9a,dna] [--max-time 150]

``--newton-cost``: what one exact Newton iteration costs against a pass, per race data set (the
measurement behind ``sqnopt.recipes.default_curvature``'s rule, ``NEWTON_PASSES``). For each
race problem (``alpha = 1/N``, no intercept; default data sets a9a, w8a, mushrooms, dna) it
times, best of ``--repeats``: one full gradient (a pass), forming and factoring the Hessian on
the whole data set (``Newton``'s ``observe_batch``), and prints them with the rule's estimate
``(sum_i K^2 nnz_i^2 / 2 + n^3 / 3) / (K nnz)`` in the same unit (passes). Then whole fits:
``SQNClassifier(curvature="newton")`` against ``SQNClassifier(curvature="lbfgs")``, both at
their defaults, best of ``--repeats`` (``--no-fits`` skips them)::

    OPENBLAS_NUM_THREADS=1 python bench/full_batch_solvers.py --newton-cost \
        --datasets a9a,w8a,mushrooms,dna

``--quadratic-cost``: the same choice for a quadratic objective (ridge: ``QUADRATIC_NEWTON_PASSES``),
where the alternative is conjugate gradients on the objective itself
(:func:`sqnopt.recipes.quadratic_cg`). On ``make_boxes`` features (20 000 dense rows of
``--widths`` uniform columns plus a constant, ridge targets by the race's ``linear_targets``,
``alpha = 1/N``) and on the race's diabetes data: ``SQNRegressor(curvature="newton")`` and
``SQNRegressor(curvature=quadratic_cg())`` at the default ``tol`` and with ``tol=None,
max_iter=1`` (one outer iteration: the race's budget), best of ``--repeats``, each fit on a
new estimator after a collection as the race times them, with the relative excess reached and
the rule's estimate of the Newton cost in passes::

    OPENBLAS_NUM_THREADS=1 python bench/full_batch_solvers.py --quadratic-cost
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
try:
    import sqnopt  # noqa: F401
except ImportError:
    sys.path.insert(0, str(HERE.parent))

from defaults_matrix import load, optimum  # noqa: E402

from sqnopt import Armijo, Fixed, Full, NewtonCG, Solver, Wolfe  # noqa: E402

TARGETS = (1e-2, 1e-4, 1e-6)


def reach(history: Any, fstar: float, level: float) -> dict[str, float] | None:
    idx = np.nonzero((history.objective - fstar) / fstar <= level)[0]
    if not idx.size:
        return None
    i = int(idx[0])
    return {"seconds": float(history.time[i]), "passes": float(history.effective_passes[i]),
            "iterations": int(history.iteration[i])}


def _best(fn: Any, repeats: int) -> float:
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return min(out)


def newton_cost(datasets: list[str], repeats: int, fits: bool) -> None:
    """The ``--newton-cost`` table (module docstring)."""
    from _data import datasets_dir
    from race.problems import load_problems

    from sqnopt import Newton, SQNClassifier
    from sqnopt.objectives import LogLoss, Softmax
    from sqnopt.recipes import newton_cost_passes

    skipped: list[str] = []
    print("| problem | n_params | pass | H formed + factored | = passes | rule's estimate "
          "| fit newton | fit lbfgs | newton / lbfgs |")
    print("|---|---|---|---|---|---|---|---|---|")
    for prob in load_problems(datasets, ["logistic", "softmax"], datasets_dir(), quick=False,
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
        t_pass = _best(lambda k=k, w=w, g=g: k.full_gradient(w, g), max(repeats, 5))
        t_h = _best(lambda k=k, kern=kern, w=w, b=allb: kern.observe_batch(k, w, b), repeats)
        row = (f"| {prob.key} | {n_params} | {1e3 * t_pass:.3g} ms | {1e3 * t_h:.3g} ms | "
               f"{t_h / t_pass:.3g} | {est:.3g} |")
        if not fits:
            print(row + " - | - | - |")
            continue
        times = {}
        for curv in ("newton", "lbfgs"):
            def fit(curv: str = curv, prob: Any = prob, X: Any = X, y: Any = y) -> None:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    SQNClassifier(alpha=prob.alpha, curvature=curv, fit_intercept=False,
                                  random_state=0).fit(X, y)
            fit()
            times[curv] = _best(fit, repeats)
        print(row + f" {1e3 * times['newton']:.3g} ms | {1e3 * times['lbfgs']:.3g} ms | "
              f"{times['newton'] / times['lbfgs']:.3g} |")
    for line in skipped:
        print(line)


def quadratic_cost(widths: list[int], repeats: int) -> None:
    """The ``--quadratic-cost`` table (module docstring)."""
    import gc

    from race.regression import _with_constant, linear_targets, load_diabetes, objective

    from sqnopt import SQNRegressor
    from sqnopt.datasets import make_boxes
    from sqnopt.recipes import newton_cost_passes, quadratic_cg

    sets: list[tuple[str, Any, Any]] = []
    Xd, yd = load_diabetes(None)[:2]
    sets.append(("diabetes", Xd, yd))
    for d in widths:
        X = _with_constant(make_boxes(20_000, d, random_state=0)[0])
        y = linear_targets(X, X[:1], "squared", 0, 1.0)[0]
        sets.append((f"boxes 20000 x {d}+1", X, y))
    print("| data | rule's Newton cost (passes) | newton, tol 1e-4 | quadratic_cg, tol 1e-4 "
          "| newton, 1 iteration | quadratic_cg, 1 iteration | cg / newton (tol, 1 it.) |")
    print("|---|---|---|---|---|---|---|")
    for name, X, y in sets:
        N = X.shape[0]
        ref = SQNRegressor(alpha=1.0 / N, fit_intercept=False, tol=1e-12).fit(X, y).coef_

        def f(w: Any, X: Any = X, y: Any = y, N: int = N) -> float:
            return objective("squared", 1.0 / N, X, y, w)    # the race's ridge objective

        fstar = f(ref)
        cells, secs = [], {}
        for label, curv, kw in (("newton", "newton", {}), ("cg", quadratic_cg(), {}),
                                ("newton1", "newton", dict(tol=None, max_iter=1)),
                                ("cg1", quadratic_cg(), dict(tol=None, max_iter=1))):
            best, est = float("inf"), None
            for _ in range(repeats):
                est = SQNRegressor(alpha=1.0 / N, fit_intercept=False, curvature=curv, **kw)
                gc.collect()
                t0 = time.perf_counter()
                est.fit(X, y)
                best = min(best, time.perf_counter() - t0)
            assert est is not None
            secs[label] = best
            cells.append(f"{1e3 * best:.3g} ms ({max(f(est.coef_) - fstar, 0.0) / fstar:.0e})")
        print(f"| {name} | {newton_cost_passes(X, 1):.3g} | " + " | ".join(cells)
              + f" | {secs['cg'] / secs['newton']:.2f} / {secs['cg1'] / secs['newton1']:.2f} |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", default=None,
                    help="comma-separated (default a9a,w8a,dna,news20; with --newton-cost "
                         "a9a,w8a,mushrooms,dna)")
    ap.add_argument("--max-time", type=float, default=150.0)
    ap.add_argument("--newton-cost", action="store_true",
                    help="the cost of one exact Newton iteration in passes, and whole fits")
    ap.add_argument("--repeats", type=int, default=3, help="--newton-cost: best of this many")
    ap.add_argument("--no-fits", action="store_true", help="--newton-cost: no whole fits")
    ap.add_argument("--quadratic-cost", action="store_true",
                    help="ridge: Newton against conjugate gradients by width (dense rows)")
    ap.add_argument("--widths", default="10,25,50,75,100,150,200",
                    help="--quadratic-cost: the column counts of the generated dense rows")
    args = ap.parse_args(argv)
    if args.quadratic_cost:
        quadratic_cost([int(v) for v in args.widths.split(",")], max(args.repeats, 5))
        return 0
    if args.newton_cost:
        newton_cost((args.datasets or "a9a,w8a,mushrooms,dna").split(","), args.repeats,
                    not args.no_fits)
        return 0
    args.datasets = args.datasets or "a9a,w8a,dna,news20"
    record: dict[str, Any] = {"max_time": args.max_time, "results": {}}
    for ds in args.datasets.split(","):
        X, y = load(ds)
        N = X.shape[0]
        fstar = optimum(ds, X, y, False)
        obj = ("logloss" if len(np.unique(y)) == 2 else "softmax", {"lam": 1.0 / N})
        runs = {"lbfgs, Armijo": dict(curvature="lbfgs"),
                "lbfgs, Wolfe": dict(curvature="lbfgs", step=Wolfe()),
                "newton_cg, Hessian on N/10": dict(curvature=NewtonCG(),
                                                   curvature_schedule=Fixed(max(N // 10, 100))),
                "newton_cg, Hessian on N": dict(curvature=NewtonCG(),
                                                curvature_schedule=Fixed(N))}
        for label, kw in runs.items():
            kw.setdefault("step", Armijo())
            res = Solver(obj, schedule=Full(), gtol=1e-10, max_time=args.max_time,
                         report_every=1, history_every=1, random_state=0, **kw).fit(X, y)
            cells = {f"{t:g}": reach(res.history, fstar, t) for t in TARGETS}
            record["results"].setdefault(ds, {})[label] = {
                "final_rel_excess": (res.fun - fstar) / fstar, "iterations": res.n_iter,
                "gradient_evaluations": res.n_grad_evals,
                "passes": res.effective_passes, "reached": cells}
            shown = "  ".join(
                f"{t}: " + ("-" if c is None else
                            f"{c['seconds']:.3f}s/{c['passes']:.0f}p/{c['iterations']}it")
                for t, c in cells.items())
            print(f"{ds:8s} {label:28s} {shown}", flush=True)
    out = HERE / "results" / "full_batch_solvers.json"
    out.write_text(json.dumps(record, default=float) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
