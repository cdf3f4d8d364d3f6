"""Traced fits of ``SQNClassifier`` on a race problem: the default (L-BFGS preconditioned by
Böhning's bound where the recipe picks it) against plain L-BFGS named, in one process.

One fit per curvature with ``tol=None`` and ``max_iter`` passes; the estimator's callback copies
the iterate at every report point (with the wall clock since the fit started), and the relative
excess is evaluated after the fit, outside the timing. Prints passes (samples the gradients
touched over N; the line search's trial points included, the bound's formation not) and seconds to 1e-2, 1e-4
and 1e-6 (the first report point below; report points are every 10 iterations of the
full-batch phase) and the last excess.

    OPENBLAS_NUM_THREADS=1 python bench/precond_fashion.py --dataset fashion-mnist --max-iter 600
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.race.problems import (  # noqa: E402
    cache_path,
    datasets_dir,
    load_problems,
    objective,
    reference,
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="fashion-mnist")
    ap.add_argument("--problem", default="softmax")
    ap.add_argument("--max-iter", type=int, default=600)
    ap.add_argument("--curvatures", nargs="+", default=["auto", "lbfgs"])
    args = ap.parse_args()
    from sqnopt import SQNClassifier

    p = next(load_problems([args.dataset], [args.problem], datasets_dir(None), quick=False,
                           skipped=[]))
    reference(p, cache_path())
    print(f"{args.dataset}/{args.problem}: N, d = {p.X.shape}, alpha = {p.alpha:.3g}, "
          f"F* = {p.f_star:.10f}; load average {os.getloadavg()}")
    for curv in args.curvatures:
        points: list[tuple[float, float, Any]] = []
        n_rows = p.X.shape[0]
        t0 = 0.0

        def record(info: Any) -> None:
            points.append((time.perf_counter() - t0, info.n_samples / n_rows,
                           np.array(info.w, copy=True)))

        est = SQNClassifier(loss="logloss", alpha=p.alpha, fit_intercept=False, tol=None,
                            max_iter=args.max_iter, random_state=0, curvature=curv,
                            callback=record)
        t0 = time.perf_counter()
        est.fit(p.X, p.y)
        total = time.perf_counter() - t0
        hit: dict[float, tuple[float, float]] = {}
        last = float("nan")
        for t, passes, w in points:
            last = (objective(p.loss, p.alpha, p.X, p.y, w, p.n_classes) - p.f_star) / p.f_star
            for tgt in (1e-2, 1e-4, 1e-6):
                if last <= tgt and tgt not in hit:
                    hit[tgt] = (passes, t)
        cells = [f"{hit[t][0]:.0f} passes / {hit[t][1]:.1f} s" if t in hit else "-"
                 for t in (1e-2, 1e-4, 1e-6)]
        print(f"  curvature={curv!r}: to 1e-2: {cells[0]}; 1e-4: {cells[1]}; "
              f"1e-6: {cells[2]}; last excess {last:.2e} after {points[-1][1]:.0f} passes, "
              f"{total:.1f} s; load average {os.getloadavg()}", flush=True)


if __name__ == "__main__":
    main()
