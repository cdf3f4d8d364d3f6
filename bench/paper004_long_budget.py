#!/usr/bin/env python
"""Paper 004 on a long budget: SQB configurations vs full-batch L-BFGS, passes to 1e-2 / 1e-3.

``paper004_sqb.py`` stops every method at 20 effective passes; on Fashion-MNIST and dna no
method (or only L-BFGS) reaches 1e-2 relative excess training cost there. This script runs
chosen SQB configurations of that script's grid (``sqb_grid``; by index) and scipy's L-BFGS-B
for a longer budget on one data set, with ``F*`` taken from ``bench/results/paper004_sqb.json``
(the same data, split and lam = 1/N), and prints the passes and solver seconds to 1e-2 and
1e-3. ``--alphas`` reruns the chosen configurations with other constant steps (the grid uses
alpha = 1; the bound over-estimates the curvature at confident predictions, so alpha > 1 can
lengthen the steps there).

    OPENBLAS_NUM_THREADS=1 python bench/paper004_long_budget.py fashion-mnist --passes 800 \
        --configs 2 3
    OPENBLAS_NUM_THREADS=1 python bench/paper004_long_budget.py dna --passes 200 --alphas 1 1.5 2

writes bench/results/paper004_long_<dataset>_<passes>.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import paper004_sqb as P  # noqa: E402
from _results import write_json  # noqa: E402


RESULTS = Path(__file__).resolve().parent / "results"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dataset")
    ap.add_argument("--passes", type=float, default=800.0)
    ap.add_argument("--configs", type=int, nargs="*", default=None,
                    help="indices into paper004_sqb.sqb_grid (default: all)")
    ap.add_argument("--alphas", type=float, nargs="*", default=None,
                    help="constant steps to run each configuration with (default: the grid's)")
    ap.add_argument("--fashion-samples", type=int, default=20000)
    args = ap.parse_args()
    ref = json.loads((RESULTS / "paper004_sqb.json").read_text())
    fstar = [r for r in ref["results"] if r["dataset"] == args.dataset][0]["fstar"]
    prob = P.Problem(args.dataset,
                     args.fashion_samples if args.dataset == "fashion-mnist" else None, 0)
    print(f"{args.dataset}: N = {prob.N}, F* = {fstar:.12g} (from paper004_sqb.json), "
          f"budget {args.passes:g} passes", flush=True)
    grid = P.sqb_grid(prob)
    chosen = range(len(grid)) if args.configs is None else args.configs
    out = {}
    runs = [(gi, a) for gi in chosen for a in (args.alphas or [grid[gi][4]])]
    for gi, a in runs:
        s, l, sc, cs, _ = grid[gi]
        cfg = f"{s} l={l}, {sc.describe()} / {cs.describe()}, alpha={a:g}"
        tic = time.perf_counter()
        c = P.run_sqnopt(prob, P.sqb_solver(prob, l, sc, cs, a, s, 0), "SQB", cfg, args.passes,
                         max_seconds=600)
        out[cfg] = c.as_dict(fstar)
        print(f"SQB {cfg}: passes/seconds to 1e-2 {c.reach(fstar, 1e-2)}, to 1e-3 "
              f"{c.reach(fstar, 1e-3)}, best excess {(min(c.train) - fstar) / fstar:.3g} "
              f"({time.perf_counter() - tic:.0f} s)", flush=True)
    tic = time.perf_counter()
    c = P.run_lbfgs(prob, args.passes)
    out["L-BFGS"] = c.as_dict(fstar)
    print(f"L-BFGS: passes/seconds to 1e-2 {c.reach(fstar, 1e-2)}, to 1e-3 "
          f"{c.reach(fstar, 1e-3)}, best excess {(min(c.train) - fstar) / fstar:.3g} "
          f"({time.perf_counter() - tic:.0f} s)", flush=True)
    tag = "" if args.alphas is None else "_alpha" + "_".join(f"{a:g}" for a in args.alphas)
    path = RESULTS / f"paper004_long_{args.dataset}_{int(args.passes)}{tag}.json"
    write_json(path, {"dataset": args.dataset, "budget_passes": args.passes,
                      "fstar": fstar, "curves": out})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
