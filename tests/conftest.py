"""Shared fixtures."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp


def _find_datasets() -> Path:
    """``$SQNOPT_DATASETS``, else the first ``shared/datasets`` above the test folder (the
    checkout may sit at different depths: /work/main, /work/wt/<branch>)."""
    env = os.environ.get("SQNOPT_DATASETS")
    if env:
        return Path(env)
    here = Path(__file__).resolve()
    for parent in here.parents:
        candidate = parent / "shared" / "datasets"
        if candidate.is_dir():
            return candidate
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


def curvature_problem(n: int) -> object:
    """The :class:`~sqnopt.interfaces.Problem` a curvature model's ``init`` needs for ``n``
    parameters (one block, no intercept; the kernels read only ``n_params``)."""
    from sqnopt.interfaces import Problem

    return Problem(n_samples=10, n_features=n, dim=n, n_blocks=1, n_params=n, lam=0.0,
                   fit_intercept=False, capabilities=frozenset())
