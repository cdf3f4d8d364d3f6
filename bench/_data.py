"""Locating and loading the real datasets for the benchmark scripts (never needed by sqnopt)."""

from __future__ import annotations

import gzip
import lzma
import os
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray


def datasets_dir() -> Path:
    """``$SQNOPT_DATASETS``, else the first ``shared/datasets`` above this file."""
    env = os.environ.get("SQNOPT_DATASETS")
    if env:
        return Path(env)
    for parent in Path(__file__).resolve().parents:
        cand = parent / "shared" / "datasets"
        if cand.is_dir():
            return cand
    raise FileNotFoundError("shared/datasets not found above bench/; set SQNOPT_DATASETS")


def read_idx(path: Path) -> NDArray[np.uint8]:
    """An MNIST-format idx file (gzip): images ``(n, rows, cols)`` or labels ``(n,)``."""
    with gzip.open(path, "rb") as f:
        raw = f.read()
    ndim = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * k: 8 + 4 * k], "big") for k in range(ndim)]
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load_svmlight_xz(name: str, **kwargs: Any) -> tuple[Any, NDArray[Any]]:
    from sklearn.datasets import load_svmlight_file

    with lzma.open(datasets_dir() / name) as f:
        X, y = load_svmlight_file(f, **kwargs)
    return X, y
