"""``python -m bench.race``: sqnopt against its peers on every data set, with plots, a Markdown
table and a compact record (see :mod:`bench.race.cli`). The pure logic (time to target, best of
repeats, the record's size, the table) lives in :mod:`bench.race.core` and
:mod:`bench.race.report`, tested by ``tests/bench/test_race.py``."""

import sys as _sys
from pathlib import Path as _Path

# the helpers shared with the other benchmarks (bench/_runinfo.py, bench/_results.py) are
# top-level modules of bench/: importable whether this package runs as ``bench.race`` (from the
# checkout's root) or as ``race`` (bench/ on the path)
_BENCH = str(_Path(__file__).resolve().parents[1])
if _BENCH not in _sys.path:
    _sys.path.append(_BENCH)
