"""What a benchmark record says about the run itself: the machine, the load, the versions of the
libraries, the commit of the checkout. Shared by the race (:mod:`race.cli`) and the scale
benchmark (:mod:`scale.cli`)."""

from __future__ import annotations

import os
import platform
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

#: (distribution, label) of the peers the benchmarks may run.
PEER_DISTRIBUTIONS: tuple[tuple[str, str], ...] = (
    ("numpy", "numpy"), ("scipy", "scipy"), ("scikit-learn", "scikit-learn"),
    ("sklearn-contrib-lightning", "lightning"), ("vowpalwabbit", "vowpalwabbit"),
    ("river", "river"), ("matplotlib", "matplotlib"))

__all__ = ["PEER_DISTRIBUTIONS", "ROOT", "git_head", "load", "machine", "versions"]


def git_head(root: Path = ROOT) -> str:
    """The checkout's short commit, ``+dirty`` when ``sqnopt/`` has uncommitted changes."""
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--",
                                "sqnopt"], capture_output=True, text=True).stdout.strip()
        return head + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def versions(distributions: Sequence[tuple[str, str]] = PEER_DISTRIBUTIONS) -> dict[str, str]:
    """sqnopt (with the commit), each distribution's version (``absent`` when not installed)
    and Python's."""
    import importlib.metadata as md

    import sqnopt

    out = {"sqnopt": f"{sqnopt.__version__} ({git_head()})"}
    for dist, label in distributions:
        try:
            out[label] = md.version(dist)
        except md.PackageNotFoundError:
            out[label] = "absent"
    out["python"] = platform.python_version()
    return out


def load() -> str:
    """The load averages (1, 5, 15 minutes) as one string."""
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def machine() -> dict[str, Any]:
    """CPU model and count, platform, sqnopt's vector-kernel variant, the load at the start and
    the BLAS thread setting."""
    cpu = platform.processor() or "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    from sqnopt import simd_variant

    out: dict[str, Any] = {"cpu": cpu, "cpus": os.cpu_count(),
                           "platform": platform.platform(terse=True), "simd": simd_variant(),
                           "load_start": load(),
                           "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS")}
    try:
        import psutil

        out["memory_gb"] = round(psutil.virtual_memory().total / 2**30, 1)
    except ImportError:
        pass
    return out
