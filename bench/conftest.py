"""Benchmark configuration: record the calibration unit and the vector-kernel variant (AVX-512,
AVX2 or baseline: the figures depend on it) with every run, and print the variant."""

from __future__ import annotations

from typing import Any


def pytest_benchmark_update_machine_info(config: Any, machine_info: dict[str, Any]) -> None:
    import calibrated_timer

    from sqnopt import simd_variant

    machine_info["sqnopt_calibration_unit_seconds"] = calibrated_timer.UNIT
    machine_info["sqnopt_simd_variant"] = simd_variant()


def pytest_report_header(config: Any) -> str:
    from sqnopt import simd_variant

    return f"sqnopt vector kernels: {simd_variant()} (SQNOPT_SIMD caps it)"
