"""Preconditioned CG in truncated Newton: the diagonal preconditioner against plain CG, in
``SQNClassifier()``'s own composition (the recipe's full-batch truncated Newton with the exact
score-space line search) on the race's problems (logistic, ``alpha = 1/N``, no intercept).

Each ``--variants`` entry ``PRE:FORCING`` is ``SQNClassifier(curvature=TruncatedNewton(
preconditioner=..., diagonal_weight=..., forcing=...))`` with ``PRE`` ``plain`` (no
preconditioner) or ``diagA`` (``preconditioner="diagonal", diagonal_weight=A``; Hsia, Chiang &
Lin 2018 mix ``M = A diag(H) + (1 - A) lam``) and ``FORCING`` a fixed relative residual,
``none`` (the sequence ``min(0.5, sqrt(||g||))``), ``relative`` or ``eisenstat_walker`` (the
adaptive rules of :class:`sqnopt.NewtonCG`). For each data set it prints, per variant:

* the iterations and effective passes (each Hessian-vector product counts one pass, the
  factors and the preconditioner one each per iteration) to each relative excess
  ``(F - F*) / F*`` of ``--targets`` (a run with ``tol=None`` recording every iteration);
* the CPU time of this process for a fit of exactly the iterations that reach the last target
  (``tol=None``, ``max_iter`` those iterations, no history), the variants interleaved, best of
  ``--repeats`` rounds, and the ratio to the first variant.

    OPENBLAS_NUM_THREADS=1 python bench/pcg.py --datasets news20 criteo a9a w8a

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


def curvature(spec: str) -> Any:
    from sqnopt import TruncatedNewton

    pre, forcing = spec.split(":")
    f: Any = (None if forcing == "none" else forcing if forcing in ("relative",
              "eisenstat_walker") else float(forcing))
    if pre == "plain":
        return TruncatedNewton(preconditioner=None, forcing=f)
    if not pre.startswith("diag"):
        raise SystemExit(f"variant {spec!r}: PRE must be 'plain' or 'diagA'")
    return TruncatedNewton(preconditioner="diagonal", diagonal_weight=float(pre[4:]),
                           forcing=f)


def _estimator(p: Any, spec: str, max_iter: int, history: bool) -> Any:
    from sqnopt import SQNClassifier

    return SQNClassifier(loss="logloss", alpha=p.alpha, fit_intercept=False, max_iter=max_iter,
                         tol=None, random_state=0, curvature=curvature(spec),
                         history_every=1 if history else None)


def _fit(est: Any, p: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(p.X, p.y)


def profile(p: Any, spec: str, targets: tuple[float, ...]) -> dict[float, Any]:
    est = _fit(_estimator(p, spec, 400, True), p)
    h = est.history_
    ex = (h.objective - p.f_star) / p.f_star
    out: dict[float, Any] = {}
    for t in targets:
        i = int(np.argmax(ex <= t)) if np.any(ex <= t) else None
        out[t] = None if i is None else (int(h.iteration[i]), float(h.effective_passes[i]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=["news20", "criteo", "a9a", "w8a"])
    ap.add_argument("--problems", nargs="+", default=["logistic"])
    ap.add_argument("--variants", nargs="+",
                    default=["plain:0.25", "diag0.01:0.25", "diag0.1:0.25", "diag1:0.25"])
    ap.add_argument("--targets", type=float, nargs="+", default=[1e-4, 1e-6])
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    targets = tuple(args.targets)
    variants = list(args.variants)
    skipped: list[str] = []
    print("| data | variant | " + " | ".join(f"to {t:.0e}: iterations / passes"
                                            for t in targets)
          + f" | CPU ms to {targets[-1]:.0e} (best of {args.repeats}) | ratio |")
    print("|---|---|" + "---|" * len(targets) + "---|---|")
    for p in load_problems(args.datasets, list(args.problems), datasets_dir(None), quick=False,
                           skipped=skipped):
        reference(p, cache_path())
        profs = {v: profile(p, v, targets) for v in variants}
        iters = {v: (profs[v][targets[-1]] or (None,))[0] for v in variants}
        best = {v: np.inf for v in variants}
        for _ in range(args.repeats):          # interleaved rounds
            for v in variants:
                if iters[v] is None:
                    continue
                est = _estimator(p, v, max(iters[v], 1), False)
                t0 = time.process_time()
                _fit(est, p)
                best[v] = min(best[v], time.process_time() - t0)
        base = best[variants[0]]
        for v in variants:
            cells = []
            for t in targets:
                hit = profs[v][t]
                cells.append("-" if hit is None else f"{hit[0]} / {hit[1]:.1f}")
            ratio = best[v] / base if np.isfinite(base) and base > 0 else float("nan")
            print(f"| {p.dataset}/{p.name} | {v} | " + " | ".join(cells)
                  + f" | {1e3 * best[v]:.1f} | {ratio:.2f} |", flush=True)
    for line in skipped:
        print(line)


if __name__ == "__main__":
    main()
