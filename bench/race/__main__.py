"""``python -m bench.race``: see :mod:`bench.race.cli`.

BLAS and OpenMP are limited to one thread here, before NumPy is imported, so that every library
of the race runs under the same rule (an explicit setting in the environment wins)."""

import os
import sys

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

from .cli import main  # noqa: E402

sys.exit(main())
