"""Progressive-batching L-BFGS (``Solver.preset("progressive_lbfgs")``) for several values of the
inner-product test's ``theta`` and the orthogonality test's ``nu``, against the full-batch
``lbfgs`` preset in the same process.

On the race's L2-logistic problems (``bench/race``: a9a, w8a and news20 -- groups 11-20 vs
1-10, TF-IDF, the 80 % training part --, ``alpha = 1/N``, no intercept, ``F*`` from the race's
reference solve and its cache), the preset's first batch (512), every ``theta`` in
``--thetas`` with every ``nu`` in ``--nus`` (``none``: the inner-product test alone) and every
seed in ``--seeds``; each run for at most ``--max-epochs`` effective passes and the preset's
1000 iterations, without the gradient-norm stop. Prints the effective passes and iterations to
1e-2, 1e-4 and 1e-6 relative excess, the final relative excess, the run's status and the batch
size the tests reached, then per (``theta``, ``nu``) the worst passes to 1e-6 over the data
sets and seeds; writes ``bench/results/progressive_theta.json`` and prints the table of mean
passes to 1e-6 (``--table``: only the table, from the record). Passes and iterations do not
depend on the machine's load (the solver time, recorded too, does: compare within one run).

    OPENBLAS_NUM_THREADS=1 python bench/progressive_theta.py [--datasets a9a,w8a,news20] \\
        [--thetas 0.9,0.5,0.2] [--nus none,5.67,1,0.7,0.5,0.3] [--seeds 0,1,2] \\
        [--max-epochs 300]
    python bench/progressive_theta.py --table
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.full_batch_solvers import TARGETS, reach  # noqa: E402
from bench.race.problems import cache_path, datasets_dir, load_problems, reference  # noqa: E402

from sqnopt import Solver  # noqa: E402


def _nu(text: str) -> float | None:
    return None if text.strip().lower() == "none" else float(text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", default="a9a,w8a,news20")
    ap.add_argument("--thetas", default="0.9,0.5,0.2")
    ap.add_argument("--nus", default="none,5.67,1,0.7,0.5,0.3")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--max-epochs", type=float, default=300.0)
    ap.add_argument("--out", default=str(HERE / "results" / "progressive_theta.json"))
    ap.add_argument("--table", action="store_true",
                    help="print the table of the record in --out and exit (no runs)")
    args = ap.parse_args(argv)
    if args.table:
        print(table(json.loads(Path(args.out).read_text())))
        return 0
    thetas = [float(t) for t in args.thetas.split(",")]
    nus = [_nu(v) for v in args.nus.split(",")]
    seeds = [int(s) for s in args.seeds.split(",")]
    record: dict[str, Any] = {"max_epochs": args.max_epochs, "seeds": seeds,
                              "problem": "logistic, alpha = 1/N, no intercept (bench/race)",
                              "results": {}}
    worst: dict[str, float] = {}
    skipped: list[str] = []
    for p in load_problems(args.datasets.split(","), ["logistic"], datasets_dir(),
                           quick=False, skipped=skipped):
        reference(p, cache_path())
        fstar, N = p.f_star, p.n
        common = dict(lam=p.alpha, gtol=None, max_epochs=args.max_epochs, max_iter=1000,
                      report_every=1, history_every=1)
        runs: dict[str, Any] = {"lbfgs (full batch, Wolfe)": Solver.preset("lbfgs", **common)}
        for th in thetas:
            for nu in nus:
                for seed in seeds:
                    runs[f"theta={th:g} nu={nu} seed={seed}"] = Solver.preset(
                        "progressive_lbfgs", theta=th, nu=nu, random_state=seed, **common)
        for label, solver in runs.items():
            state = solver.init_state(p.X, p.y)
            res = solver.run(state)
            cells = {f"{t:g}": reach(res.history, fstar, t) for t in TARGETS}
            size = getattr(state.gradient, "size", None)
            record["results"].setdefault(p.dataset, {})[label] = {
                "final_rel_excess": (res.fun - fstar) / fstar, "iterations": res.n_iter,
                "passes": res.effective_passes, "status": str(res.status.value),
                "batch_size_reached": None if size is None else max(int(size), 512),
                "reached": cells}
            if label.startswith("theta="):
                key = label.rsplit(" seed=", 1)[0]
                c6 = cells["1e-06"]
                worst[key] = max(worst.get(key, 0.0), math.inf if c6 is None else c6["passes"])
            shown = "  ".join(
                f"{t}: " + ("-" if c is None else f"{c['passes']:.0f}p/{c['iterations']}it")
                for t, c in cells.items())
            print(f"{p.dataset:6s} {label:32s} {shown}  final {(res.fun - fstar) / fstar:.1e} "
                  f"{res.status.value}" + ("" if size is None else
                                           f", batch {max(int(size), 512)}/{N}"), flush=True)
    record["worst_passes_to_1e-6"] = worst
    for line in skipped:
        print(line)
    out = Path(args.out)
    out.write_text(json.dumps(record, default=float) + "\n")
    print(f"wrote {out}")
    print(table(record))
    return 0


def table(record: dict[str, Any]) -> str:
    """Effective passes to 1e-6 per data set, mean over the seeds (``-``: a seed never got
    there), and the worst over data sets and seeds: a Markdown table."""
    sets = list(record["results"])
    rows: dict[str, dict[str, list[float]]] = {}
    for ds in sets:
        for label, r in record["results"][ds].items():
            key = label.rsplit(" seed=", 1)[0]
            c6 = r["reached"]["1e-06"]
            rows.setdefault(key, {}).setdefault(ds, []).append(
                math.inf if c6 is None else float(c6["passes"]))
    lines = ["| run | " + " | ".join(f"{ds}: passes to 1e-6" for ds in sets) + " | worst |",
             "|---" * (len(sets) + 2) + "|"]
    for key, per in rows.items():
        cells = []
        for ds in sets:
            v = per.get(ds, [])
            cells.append("-" if not v or not all(map(math.isfinite, v))
                         else f"{sum(v) / len(v):.0f}")
        w = max((x for v in per.values() for x in v), default=math.inf)
        lines.append(f"| {key} | " + " | ".join(cells) + " | "
                     + ("-" if not math.isfinite(w) else f"{w:.0f}") + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
