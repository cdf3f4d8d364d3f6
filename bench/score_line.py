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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=["a9a", "w8a", "mushrooms", "news20",
                                                      "criteo"])
    ap.add_argument("--problems", nargs="+", default=["logistic"])
    ap.add_argument("--targets", type=float, nargs="+", default=[1e-4, 1e-6])
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
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
