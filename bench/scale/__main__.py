"""``python -m bench.scale``: see :mod:`bench.scale.cli`.

BLAS and OpenMP are limited to one thread here, before NumPy is imported, so that every
contender runs under the same rule (an explicit setting in the environment wins); the children
inherit it."""

import os
import sys

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

from .cli import main  # noqa: E402

sys.exit(main())
