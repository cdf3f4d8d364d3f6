"""Benchmark configuration: report the calibration unit with every run."""

from __future__ import annotations

from typing import Any


def pytest_configure(config: Any) -> None:
    # Figures are normalised by the calibration unit, which differs from run to run, so
    # pytest-benchmark's "machine_info is different" warning is expected when comparing.
    config.addinivalue_line("filterwarnings", "ignore:Benchmark machine_info is different")


def pytest_benchmark_update_machine_info(config: Any, machine_info: dict[str, Any]) -> None:
    import calibrated_timer

    machine_info["sqnopt_calibration_unit_seconds"] = calibrated_timer.UNIT


def pytest_benchmark_compare_machine_info(config: Any, benchmarksession: Any,
                                          machine_info: dict[str, Any],
                                          compared_benchmark: dict[str, Any]) -> None:
    """Figures are normalised by the calibration unit; machine differences are expected."""
