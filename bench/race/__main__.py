"""``python -m bench.race``: see :mod:`bench.race.cli`.

BLAS and OpenMP are limited to ``--cores`` threads (1 by default) here, before NumPy is imported,
so that every library of the race runs under the same rule (an explicit setting in the
environment wins); sqnopt's contenders get ``n_jobs=--cores``."""

import os
import sys


def _cores(argv: list[str]) -> str:
    for k, a in enumerate(argv):
        if a == "--cores" and k + 1 < len(argv):
            return argv[k + 1]
        if a.startswith("--cores="):
            return a.split("=", 1)[1]
    return "1"


for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, _cores(sys.argv[1:]))

from .cli import main  # noqa: E402

sys.exit(main())
