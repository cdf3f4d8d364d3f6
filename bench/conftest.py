"""Benchmark configuration: record the calibration unit with every run."""

from __future__ import annotations

from typing import Any


def pytest_benchmark_update_machine_info(config: Any, machine_info: dict[str, Any]) -> None:
    import calibrated_timer

    machine_info["sqnopt_calibration_unit_seconds"] = calibrated_timer.UNIT
