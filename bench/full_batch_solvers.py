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
"""

from __future__ import annotations

import argparse
import json
import sys
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", default="a9a,w8a,dna,news20")
    ap.add_argument("--max-time", type=float, default=150.0)
    args = ap.parse_args(argv)
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
