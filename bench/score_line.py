"""The exact line search in score space (``ScoreLine``) against Armijo's unit step, in
``SQNClassifier()``'s own composition (full-batch Newton on a9a, w8a, mushrooms; truncated Newton
on news20, criteo), on the race's problems (logistic, ``alpha = 1/N``, no intercept).

For each data set it prints, for ``step="auto"`` (the recipe: ``ScoreLine()``) and
``step="armijo"`` (the recipe before it):

* the iterations, effective passes and gradient evaluations to each relative excess
  ``(F - F*) / F*`` of ``--targets`` (a run with ``tol=None`` recording every iteration);
* the CPU time of this process for a fit of exactly the iterations that reach the last target
  (``tol=None``, ``max_iter`` those iterations, no history), the two variants interleaved,
  best of ``--repeats`` rounds, and their ratio (ScoreLine / Armijo).

    OPENBLAS_NUM_THREADS=1 python bench/score_line.py --datasets a9a w8a mushrooms news20 criteo

``--searches``: instead, the CPU time of one line search and its pieces on each data set
(:func:`search_costs`).

Needs the shared data sets (``bench.race.problems``). CPU times on a shared machine are noisy
(the ratio of interleaved runs less so); iterations and passes are not.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.race.problems import (  # noqa: E402
    cache_path,
    datasets_dir,
    load_problems,
    reference,
)

VARIANTS = (("ScoreLine (auto)", "auto"), ("Armijo", "armijo"))


def _estimator(p: Any, step: str, max_iter: int, history: bool) -> Any:
    from sqnopt import SQNClassifier

    return SQNClassifier(loss="logloss", alpha=p.alpha, fit_intercept=False, max_iter=max_iter,
                         tol=None, random_state=0, step=step,
                         history_every=1 if history else None)


def _fit(est: Any, p: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(p.X, p.y)


def profile(p: Any, step: str, targets: tuple[float, ...]) -> dict[float, Any]:
    est = _fit(_estimator(p, step, 400, True), p)
    h = est.history_
    ex = (h.objective - p.f_star) / p.f_star
    out: dict[float, Any] = {}
    for t in targets:
        i = int(np.argmax(ex <= t)) if np.any(ex <= t) else None
        out[t] = None if i is None else (int(h.iteration[i]), float(h.effective_passes[i]))
    return out


def search_costs(p: Any, repeats: int) -> dict[str, float]:
    """CPU ms of one line search on the whole data set along the recipe's own direction, at the
    iterate after two iterations of the recipe's solve (the curvature model's direction there,
    from its last Hessian): Armijo (which accepts the unit step: one fused loss + gradient pass)
    against ScoreLine from a point whose scores it cached (the gather of u, the 1-D iteration,
    the scatter of g_next) and without the cache (one more gather); the pieces (one gradient
    pass, one gather of the scores) and the 1-D evaluations per search. Interleaved, best of
    ``repeats``."""
    from sqnopt import Full, LogLoss, ScoreLine, Solver, recipes
    from sqnopt.steps import ArmijoKernel

    curv = recipes.default_curvature(LogLoss(lam=p.alpha), p.X, 2)
    solver = Solver(LogLoss(lam=p.alpha), curv, Full(), ScoreLine(),
                    curvature_schedule=Full(), max_iter=2)
    st = solver.init_state(p.X, p.y)
    solver.run(st)
    obj, step = st.objective, st.step
    n, b = obj.n_params, np.arange(p.n, dtype=np.intp)
    w0 = np.array(st.w)
    g0 = np.empty(n)
    f0 = obj.gradient(w0, b, g0)
    d0 = np.empty(n)
    st.curvature.direction(g0, d0)
    w1, g1 = np.empty(n), np.empty(n)
    # w1: the next iterate, from the scores gathered at w0 (the priming below repeats this
    # search bit for bit, so that the timed search from w1 finds its scores cached)
    step.set_state({})
    eps, f1, _ = step.search(obj, w0, b, f0, g0, d0, w1, g1)
    d1 = np.empty(n)
    st.curvature.direction(g1, d1)
    arm = ArmijoKernel(1.0, 1e-4, 0.5, 30)
    wn, gn, scratch = np.empty(n), np.empty(n), np.empty(n)
    times: dict[str, list[float]] = {"gradient pass": [], "gather of the scores": [],
                                     "Armijo search": [], "ScoreLine search (cached)": [],
                                     "ScoreLine search (gathering z)": []}
    evals: list[int] = []

    def clock(name: str, fn: Any) -> Any:
        t = time.process_time()
        out = fn()
        times[name].append(time.process_time() - t)
        return out

    for _ in range(repeats):
        clock("gradient pass", lambda: obj.gradient(w1, b, scratch))
        clock("gather of the scores", lambda: obj.rows_dot(b, d1))
        clock("Armijo search", lambda: arm.search(obj, w1, b, f1, g1, d1, wn, gn))
        step.set_state({})
        step.search(obj, w0, b, f0, g0, d0, wn, gn)        # caches the scores at w1 (untimed)
        assert np.array_equal(wn, w1)
        before, gathers = step.n_line_evals, step.n_score_gathers
        clock("ScoreLine search (cached)", lambda: step.search(obj, w1, b, f1, g1, d1, wn, gn))
        evals.append(step.n_line_evals - before)
        assert step.n_score_gathers == gathers                # the cache was used
        step.set_state({})                                 # drops the cache
        clock("ScoreLine search (gathering z)",
              lambda: step.search(obj, w1, b, f1, g1, d1, wn, gn))
    out = {name: 1e3 * min(v) for name, v in times.items()}
    out["1-D evaluations per search"] = float(evals[-1])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=["a9a", "w8a", "mushrooms", "news20",
                                                      "criteo"])
    ap.add_argument("--problems", nargs="+", default=["logistic"])
    ap.add_argument("--targets", type=float, nargs="+", default=[1e-4, 1e-6])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--searches", action="store_true",
                    help="only the cost of one search (search_costs), per data set")
    args = ap.parse_args()
    if args.searches:
        for p in load_problems(args.datasets, list(args.problems), datasets_dir(None),
                               quick=False, skipped=[]):
            costs = search_costs(p, args.repeats)
            print(f"{p.dataset:10s} " + ", ".join(f"{k} {v:.2f}" for k, v in costs.items()),
                  flush=True)
        return
    targets = tuple(args.targets)
    skipped: list[str] = []
    print("| data | step | " + " | ".join(f"to {t:.0e}: iterations / passes" for t in targets)
          + f" | CPU ms to {targets[-1]:.0e} (best of {args.repeats}) | ratio |")
    print("|---|---|" + "---|" * len(targets) + "---|---|")
    for p in load_problems(args.datasets, list(args.problems), datasets_dir(None), quick=False,
                           skipped=skipped):
        reference(p, cache_path())
        profs = {step: profile(p, step, targets) for _, step in VARIANTS}
        iters = {}
        for _, step in VARIANTS:
            hit = profs[step][targets[-1]]
            iters[step] = hit[0] if hit is not None else None
        best: dict[str, float] = {step: np.inf for _, step in VARIANTS}
        for _ in range(args.repeats):          # interleaved rounds
            for _, step in VARIANTS:
                if iters[step] is None:
                    continue
                est = _estimator(p, step, max(iters[step], 1), False)
                t0 = time.process_time()
                _fit(est, p)
                best[step] = min(best[step], time.process_time() - t0)
        base = best["armijo"]
        for label, step in VARIANTS:
            cells = []
            for t in targets:
                v = profs[step][t]
                cells.append("-" if v is None else f"{v[0]} / {v[1]:.1f}")
            ms = 1e3 * best[step]
            ratio = best[step] / base if np.isfinite(base) and base > 0 else float("nan")
            print(f"| {p.dataset}/{p.loss} | {label} | " + " | ".join(cells)
                  + f" | {ms:.1f} | {ratio:.2f} |", flush=True)
    for line in skipped:
        print(line)


if __name__ == "__main__":
    main()
