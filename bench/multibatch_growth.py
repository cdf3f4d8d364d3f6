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
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench import _sweep  # noqa: E402

from sqnopt import Solver  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    _sweep.add_arguments(ap, HERE / "results" / "multibatch_growth.json")
    ap.add_argument("--growths", default="1.1,1.2,1.3,1.5,2")
    ap.add_argument("--overlaps", default="0.25,0.5")
    args = ap.parse_args(argv)
    if args.table:
        return _sweep.print_table(args.out)
    growths = [float(g) for g in args.growths.split(",")]
    overlaps = [float(o) for o in args.overlaps.split(",")]

    def runs(p: Any, common: dict[str, Any]) -> dict[str, Solver]:
        return {f"growth={g:g} overlap={o:g} seed={seed}": Solver.preset(
                    "multibatch_lbfgs", growth=g, overlap=o, random_state=seed, **common)
                for g in growths for o in overlaps for seed in _sweep.seeds(args)}

    return _sweep.finish(_sweep.sweep(args, runs), args.out)


if __name__ == "__main__":
    sys.exit(main())
