"""Parameter mixing for the large-data recipe: what averaging the models of disjoint shards
costs in held-out loss, against one fit on all the rows.

The large-data recipe (per-example composite AdaGrad, ``sqnopt.recipes.streaming``) is
sequential: each update reads the weights the previous one wrote, so its loop runs on one
thread at any ``n_jobs``, and Amdahl's law bounds a whole fit's speed-up
(``bench/parallel_passes.py --fits-only --datasets ctr1e6``). Parameter mixing (Mann et al.,
NIPS 2009; Zinkevich, Weimer, Smola & Li, NIPS 2010; McDonald, Hall & Mann, NAACL 2010)
trains one model per shard of the rows, independently -- in parallel -- and averages them;
with a number of shards that does not depend on the threads, every thread count gives the
same model. This script measures the question that decides whether the recipe should mix: for
``p`` passes, the held-out log loss of ``SQNClassifier(max_iter=p, tol=None)`` fitted on all
the rows against the average of the same fit on each of ``k`` contiguous shards (one-shot
mixing, the models averaged once at the end).

Data: the generated hashed CTR stream (:class:`sqnopt.datasets.HashedCTRGenerator`, seed 0,
in memory), 10^6 training rows and 2·10^5 held-out rows from another stream of the same
model. A shard too small for the large-data regime (``sqnopt.recipes.large_scale``) would be
fitted by another recipe, and is reported as such instead of compared.

    python bench/parameter_mixing.py --passes 1 2 --shards 2 --record bench/results/parameter_mixing.json

``--quick``: 20 000 rows with the regime's thresholds lowered to fit them (a smoke run).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from scipy.special import expit
from sklearn.metrics import log_loss

from sqnopt import SQNClassifier, recipes
from sqnopt.datasets import HashedCTRGenerator


def _loss(Xt: Any, yt: np.ndarray, coef: np.ndarray, intercept: float) -> float:
    z = np.asarray(Xt @ coef).ravel() + intercept
    return float(log_loss(yt, expit(z), labels=[0, 1]))


def _fit(X: Any, y: np.ndarray, passes: int) -> tuple[np.ndarray, float, float]:
    t = time.perf_counter()
    m = SQNClassifier(max_iter=passes, tol=None, random_state=0).fit(X, y)
    return m.coef_.ravel().copy(), float(m.intercept_[0]), time.perf_counter() - t


def run(rows: int, test_rows: int, passes: list[int], shards: list[int]) -> dict[str, Any]:
    g = HashedCTRGenerator(random_state=0)
    train, test = g.sample(rows, stream=0), g.sample(test_rows, stream=1)
    X, y, Xt, yt = train[0], train[1], test[0], test[1]
    out: list[dict[str, Any]] = []
    for p in passes:
        coef, b, seconds = _fit(X, y, p)
        row: dict[str, Any] = {"passes": p, "all_rows": {"loss": _loss(Xt, yt, coef, b),
                                                         "seconds": seconds}}
        for k in shards:
            bounds = [(i * rows // k, (i + 1) * rows // k) for i in range(k)]
            if not all(recipes.large_scale(hi - lo, float(X[lo:hi].nnz)) for lo, hi in bounds):
                row[f"shards_{k}"] = {"skipped": "a shard is below the large-data regime"}
                continue
            fits = [_fit(X[lo:hi], y[lo:hi], p) for lo, hi in bounds]
            avg = np.mean([f[0] for f in fits], axis=0)
            row[f"shards_{k}"] = {"loss": _loss(Xt, yt, avg, float(np.mean([f[1] for f in fits]))),
                                  "seconds": [f[2] for f in fits]}
        out.append(row)
        print(json.dumps(row), flush=True)
    return {"rows": rows, "test_rows": test_rows, "n_features": int(X.shape[1]), "results": out}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--passes", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--shards", nargs="+", type=int, default=[2])
    ap.add_argument("--record", type=Path, help="write a compact JSON record here")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    rows, test_rows = (20_000, 5_000) if args.quick else (1_000_000, 200_000)
    saved = recipes.LARGE_ROWS, recipes.LARGE_NNZ
    if args.quick:
        recipes.LARGE_ROWS, recipes.LARGE_NNZ = 1000, 1000
    try:
        record = run(rows, test_rows, args.passes, args.shards)
    finally:
        recipes.LARGE_ROWS, recipes.LARGE_NNZ = saved
    print("\n| passes | all rows | " + " | ".join(f"{k} shards averaged" for k in args.shards)
          + " |")
    print("|---|---|" + "---|" * len(args.shards))
    for r in record["results"]:
        cells = [f"{r[f'shards_{k}']['loss']:.5f}" if "loss" in r[f"shards_{k}"]
                 else r[f"shards_{k}"]["skipped"] for k in args.shards]
        print(f"| {r['passes']} | {r['all_rows']['loss']:.5f} | " + " | ".join(cells) + " |")
    if args.record is not None:
        given = sys.argv[1:] if argv is None else argv
        record.update(command="python bench/parameter_mixing.py " + " ".join(given),
                      machine=platform.platform(),
                      stamp=time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()))
        args.record.parent.mkdir(parents=True, exist_ok=True)
        args.record.write_text(json.dumps(record) + "\n")
        print(f"wrote {args.record}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
