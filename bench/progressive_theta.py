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
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench import _sweep  # noqa: E402
from bench._sweep import table  # noqa: E402,F401  (the rendering, for docs and other scripts)

from sqnopt import Solver  # noqa: E402


def _nu(text: str) -> float | None:
    return None if text.strip().lower() == "none" else float(text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    _sweep.add_arguments(ap, HERE / "results" / "progressive_theta.json")
    ap.add_argument("--thetas", default="0.9,0.5,0.2")
    ap.add_argument("--nus", default="none,5.67,1,0.7,0.5,0.3")
    args = ap.parse_args(argv)
    if args.table:
        return _sweep.print_table(args.out)
    thetas = [float(t) for t in args.thetas.split(",")]
    nus = [_nu(v) for v in args.nus.split(",")]

    def runs(p: Any, common: dict[str, Any]) -> dict[str, Solver]:
        return {f"theta={th:g} nu={nu} seed={seed}": Solver.preset(
                    "progressive_lbfgs", theta=th, nu=nu, random_state=seed, **common)
                for th in thetas for nu in nus for seed in _sweep.seeds(args)}

    def batch(state: Any) -> tuple[dict[str, Any], str]:
        size = getattr(state.gradient, "size", None)
        if size is None:
            return {"batch_size_reached": None}, ""
        reached = max(int(size), 512)
        return {"batch_size_reached": reached}, f", batch {reached}/{state.data.n_samples}"

    return _sweep.finish(_sweep.sweep(args, runs, batch), args.out)


if __name__ == "__main__":
    sys.exit(main())
