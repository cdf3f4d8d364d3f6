"""Progressive-batching L-BFGS (``Solver.preset("progressive_lbfgs")``) for several values of the
inner-product test's ``theta``, against the full-batch ``lbfgs`` preset in the same process.

On a9a and w8a (``../shared/datasets``), L2-logistic with ``lam = 1/N``, no intercept, the
preset's first batch (512) and ``theta`` in ``--thetas``; each run for at most ``--max-epochs``
effective passes. Prints the solver time (evaluation excluded), effective passes and
iterations to 1e-2, 1e-4 and 1e-6 relative excess (``F*`` from ``bench/defaults_matrix.py``'s
cache or scikit-learn at ``tol=1e-12``), the final relative excess and the batch size the
test reached, and writes ``bench/results/progressive_theta.json``. Timings on a shared machine
are noisy: compare within one run.

    OPENBLAS_NUM_THREADS=1 python bench/progressive_theta.py [--datasets a9a,w8a] \\
        [--thetas 0.9,0.5,0.3,0.2,0.1] [--max-epochs 300]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
try:
    import sqnopt  # noqa: F401
except ImportError:
    sys.path.insert(0, str(HERE.parent))

from defaults_matrix import load, optimum  # noqa: E402
from full_batch_solvers import TARGETS, reach  # noqa: E402

from sqnopt import Solver  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", default="a9a,w8a")
    ap.add_argument("--thetas", default="0.9,0.5,0.3,0.2,0.1")
    ap.add_argument("--max-epochs", type=float, default=300.0)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    thetas = [float(t) for t in args.thetas.split(",")]
    record: dict[str, Any] = {"max_epochs": args.max_epochs, "seed": args.seed, "results": {}}
    for ds in args.datasets.split(","):
        X, y = load(ds)
        N = X.shape[0]
        fstar = optimum(ds, X, y, False)
        common = dict(lam=1.0 / N, gtol=1e-10, max_epochs=args.max_epochs, report_every=1,
                      history_every=1)
        runs: dict[str, Any] = {"lbfgs (full batch, Wolfe)": Solver.preset("lbfgs", **common)}
        for th in thetas:
            runs[f"progressive_lbfgs theta={th:g}"] = Solver.preset(
                "progressive_lbfgs", theta=th, random_state=args.seed, **common)
        for label, solver in runs.items():
            state = solver.init_state(X, y)
            res = solver.run(state)
            cells = {f"{t:g}": reach(res.history, fstar, t) for t in TARGETS}
            size = getattr(state.gradient, "size", None)
            record["results"].setdefault(ds, {})[label] = {
                "final_rel_excess": (res.fun - fstar) / fstar, "iterations": res.n_iter,
                "passes": res.effective_passes, "status": str(res.status.value),
                "batch_size_reached": None if size is None else max(int(size), 512),
                "reached": cells}
            shown = "  ".join(
                f"{t}: " + ("-" if c is None else
                            f"{c['seconds']:.3f}s/{c['passes']:.0f}p/{c['iterations']}it")
                for t, c in cells.items())
            print(f"{ds:4s} {label:32s} {shown}  final {(res.fun - fstar) / fstar:.1e}"
                  + ("" if size is None else f", batch {max(int(size), 512)}/{N}"), flush=True)
    out = HERE / "results" / "progressive_theta.json"
    out.write_text(json.dumps(record, default=float) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
