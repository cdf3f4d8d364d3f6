"""``python -m bench.scale``: held-out log loss against wall time and examples processed when
the data outgrows passes and memory -- sqnopt against Vowpal Wabbit, scikit-learn and
sqnopt.dask on generated hashed CTR streams of 10^6 to 10^8 rows and the Criteo sample, each
contender in its own process reading the file itself (see :mod:`bench.scale.cli`). The pure
logic (summaries, examples to target, the compact record) lives in :mod:`bench.scale.core`,
tested by ``tests/bench/test_scale.py``."""

import sys as _sys
from pathlib import Path as _Path

# the helpers shared with the race (bench/_runinfo.py, bench/_results.py, race.core) are
# importable whether this package runs as ``bench.scale`` (from the checkout's root) or as
# ``scale`` (bench/ on the path)
_BENCH = str(_Path(__file__).resolve().parents[1])
if _BENCH not in _sys.path:
    _sys.path.append(_BENCH)
