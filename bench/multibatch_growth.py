"""Multi-batch L-BFGS (``Solver.preset("multibatch_lbfgs")``) for several batch growth rates and
overlaps, against the full-batch ``lbfgs`` preset in the same process.

The race's L2-logistic problems (``bench/race``: a9a, w8a, news20; ``alpha = 1/N``, no
intercept, ``F*`` from the race's reference solve and its cache), the preset's first batch
(512), every ``growth`` in ``--growths`` with every ``overlap`` in ``--overlaps`` and every seed
in ``--seeds``; each run for at most ``--max-epochs`` effective passes and the preset's 1000
iterations, without the gradient-norm stop. Prints the effective passes and iterations to 1e-2,
1e-4 and 1e-6 relative excess per run, writes ``bench/results/multibatch_growth.json`` and
prints the table of mean passes to 1e-6 (``--table``: only the table, from the record).
Passes and iterations do not depend on the machine's load.

    OPENBLAS_NUM_THREADS=1 python bench/multibatch_growth.py [--datasets a9a,w8a,news20] \\
        [--growths 1.1,1.2,1.3,1.5,2] [--overlaps 0.25,0.5] [--seeds 0,1,2] [--max-epochs 300]
    python bench/multibatch_growth.py --table
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.full_batch_solvers import TARGETS, reach  # noqa: E402
from bench.progressive_theta import table  # noqa: E402
from bench.race.problems import cache_path, datasets_dir, load_problems, reference  # noqa: E402

from sqnopt import Solver  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", default="a9a,w8a,news20")
    ap.add_argument("--growths", default="1.1,1.2,1.3,1.5,2")
    ap.add_argument("--overlaps", default="0.25,0.5")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--max-epochs", type=float, default=300.0)
    ap.add_argument("--out", default=str(HERE / "results" / "multibatch_growth.json"))
    ap.add_argument("--table", action="store_true",
                    help="print the table of the record in --out and exit (no runs)")
    args = ap.parse_args(argv)
    if args.table:
        print(table(json.loads(Path(args.out).read_text())))
        return 0
    growths = [float(g) for g in args.growths.split(",")]
    overlaps = [float(o) for o in args.overlaps.split(",")]
    seeds = [int(s) for s in args.seeds.split(",")]
    record: dict[str, Any] = {"max_epochs": args.max_epochs, "seeds": seeds,
                              "problem": "logistic, alpha = 1/N, no intercept (bench/race)",
                              "results": {}}
    skipped: list[str] = []
    for p in load_problems(args.datasets.split(","), ["logistic"], datasets_dir(),
                           quick=False, skipped=skipped):
        reference(p, cache_path())
        fstar = p.f_star
        common = dict(lam=p.alpha, gtol=None, max_epochs=args.max_epochs, max_iter=1000,
                      report_every=1, history_every=1)
        runs: dict[str, Any] = {"lbfgs (full batch, Wolfe)": Solver.preset("lbfgs", **common)}
        for g in growths:
            for o in overlaps:
                for seed in seeds:
                    runs[f"growth={g:g} overlap={o:g} seed={seed}"] = Solver.preset(
                        "multibatch_lbfgs", growth=g, overlap=o, random_state=seed, **common)
        for label, solver in runs.items():
            res = solver.fit(p.X, p.y)
            cells = {f"{t:g}": reach(res.history, fstar, t) for t in TARGETS}
            record["results"].setdefault(p.dataset, {})[label] = {
                "final_rel_excess": (res.fun - fstar) / fstar, "iterations": res.n_iter,
                "passes": res.effective_passes, "status": str(res.status.value),
                "pairs_accepted": res.n_pairs_accepted, "pairs_skipped": res.n_pairs_skipped,
                "reached": cells}
            shown = "  ".join(
                f"{t}: " + ("-" if c is None else f"{c['passes']:.0f}p/{c['iterations']}it")
                for t, c in cells.items())
            print(f"{p.dataset:6s} {label:32s} {shown}  final {(res.fun - fstar) / fstar:.1e} "
                  f"{res.status.value}", flush=True)
    for line in skipped:
        print(line)
    out = Path(args.out)
    out.write_text(json.dumps(record, default=float) + "\n")
    print(f"wrote {out}")
    print(table(record))
    return 0


if __name__ == "__main__":
    sys.exit(main())
