"""Shared fixtures."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

def _find_datasets() -> Path:
    # $SQNOPT_DATASETS, else the nearest shared/datasets above the repository (a checkout in
    # /work/main or a worktree in /work/wt/iN both find /work/shared/datasets).
    env = os.environ.get("SQNOPT_DATASETS")
    if env:
        return Path(env)
    here = Path(__file__).resolve()
    for parent in here.parents[1:]:
        cand = parent / "shared" / "datasets"
        if cand.is_dir():
            return cand
    return here.parents[2] / "shared" / "datasets"


DATASETS = _find_datasets()


def dataset_path(name: str) -> Path:
    """Path of a file in ../shared/datasets; skips the test when it is absent."""
    p = DATASETS / name
    if not p.exists():
        pytest.skip(f"dataset {name} not available at {p}")
    return p


@pytest.fixture
def boxes() -> tuple[np.ndarray, np.ndarray]:
    from sqnopt.datasets import make_boxes

    return make_boxes(400, 12, random_state=0)


def as_format(X: np.ndarray, fmt: str, dtype: type) -> object:
    """X as dense or CSR in the given dtype."""
    Xc = np.ascontiguousarray(X, dtype=dtype)
    return sp.csr_matrix(Xc) if fmt == "csr" else Xc
