"""A pytest-benchmark timer whose unit is a calibration workload measured in the same run.

``--benchmark-timer=calibrated_timer.calibrated_clock`` makes every reported figure a multiple
of ``calibration_workload()`` of ``bench/native/_baseline.pyx`` (a fixed compute-bound loop, ~20 ms on the
development machine): the figures of two machines, or of one machine under different load,
become comparable, so a committed baseline can be compared with pytest-benchmark's
``--benchmark-compare`` / ``--benchmark-compare-fail`` machinery.
"""

from __future__ import annotations

import os
import time

from native import load

calibration_workload = load("_baseline").calibration_workload

_REPEATS = int(os.environ.get("SQNOPT_CALIBRATION_REPEATS", "15"))


def measure_unit(repeats: int = _REPEATS, warmup_seconds: float = 0.3) -> float:
    """Seconds taken by one calibration workload (minimum over ``repeats`` runs), after
    ``warmup_seconds`` of the same work: measured right at process start without it, the unit
    came out up to 2x too large in some runs (a cold core), inflating every figure."""
    tic = time.perf_counter()
    while time.perf_counter() - tic < warmup_seconds:
        calibration_workload(20)
    best = float("inf")
    for _ in range(repeats):
        tic = time.perf_counter()
        calibration_workload()
        best = min(best, time.perf_counter() - tic)
    return best


UNIT = measure_unit()


def calibrated_clock() -> float:
    """``perf_counter()`` in calibration units."""
    return time.perf_counter() / UNIT
