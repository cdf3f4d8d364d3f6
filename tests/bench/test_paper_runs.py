"""bench/_paper_runs.py: the pruned search for the first iterate below the target gives the same
answer as evaluating the full objective at every iterate."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sqnopt.datasets import make_boxes

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture(scope="module")
def runs() -> Any:
    spec = importlib.util.spec_from_file_location("_paper_runs_under_test", BENCH / "_paper_runs.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def _brute(F: np.ndarray, target: float) -> int | None:
    hits = np.flatnonzero(F <= target)
    return int(hits[0]) if hits.size else None


@pytest.mark.parametrize("seed", range(4))
def test_first_below_matches_brute_force(runs: Any, seed: int) -> None:
    rng = np.random.default_rng(seed)
    X, y = make_boxes(3000, 20, random_state=seed)
    lam = 1e-3
    # a path from 0 towards a good classifier, plus noise: F is not monotone along it
    direction = np.linalg.lstsq(X, y, rcond=None)[0]
    W = np.outer(np.linspace(0.0, 1.5, 60), direction) + 0.05 * rng.normal(size=(60, 20))
    F = runs.objective_values(X, y, lam, W)
    # targets between two F values (a target equal to some F within rounding is a tie that the
    # chunked summation may decide either way)
    Fs = np.sort(F)
    mids = (0.5 * (Fs[:-1] + Fs[1:]))[[0, 5, 30, 55, -1]]
    for target in mids.tolist() + [F.min() / 2, 1e9]:
        j, f = runs.first_below(X, y, lam, W, target)
        assert j == _brute(F, target)
        if j is None:
            assert math.isnan(f)
        else:
            assert f == pytest.approx(F[j], rel=1e-12)


def test_first_below_skips_nonfinite_points(runs: Any) -> None:
    X, y = make_boxes(500, 5, random_state=0)
    W = np.zeros((6, 5))
    W[0, 0] = np.nan
    W[1, 1] = np.inf
    F = runs.objective_values(X, y, 1e-3, W[2:3])[0]
    with np.errstate(invalid="ignore", over="ignore"):
        j, f = runs.first_below(X, y, 1e-3, W, F)
    assert j == 2 and f == pytest.approx(F, rel=1e-12)


def test_row_chunks_cover_all_rows(runs: Any) -> None:
    for n in (1, 255, 256, 257, 10_000):
        ch = runs._row_chunks(n)
        assert ch[0][0] == 0 and ch[-1][1] == n
        assert all(a[1] == b[0] for a, b in zip(ch, ch[1:]))
