"""Locating and loading the real datasets for the benchmark scripts (never needed by sqnopt)."""

from __future__ import annotations

import gzip
import lzma
import os
from collections.abc import Callable
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


#: ``(X_train, X_test, y_train, y_test)``, and what makes one.
Split = tuple[Any, Any, Any, Any]
SplitLoader = Callable[[], Split]


def held_out_split(X: Any, y: Any, *, scale: bool = False) -> Split:
    """A stratified 25 % held out with a fixed seed; ``scale``: standardized by the training
    rows (dense data, as a user of SGD is told to)."""
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, stratify=y, random_state=0)
    if scale:
        sc = StandardScaler().fit(Xtr)
        Xtr, Xte = sc.transform(Xtr), sc.transform(Xte)
    return Xtr, Xte, ytr, yte


def a9a_split() -> Split:
    """sqnopt's shipped a9a, its own test split."""
    from sqnopt.datasets import load_builtin

    Xtr, ytr = load_builtin("a9a", "train")
    Xte, yte = load_builtin("a9a", "test")
    return Xtr, Xte, ytr, yte


def libsvm_split(train: str, test: str | None, n_features: int) -> SplitLoader:
    """A LIBSVM set of ``shared/datasets``: its test file, or :func:`held_out_split`."""
    def load() -> Split:
        X, y = load_svmlight_xz(train, n_features=n_features)
        if test is None:
            return held_out_split(X.tocsr(), y)
        Xt, yt = load_svmlight_xz(test, n_features=n_features)
        return X.tocsr(), Xt.tocsr(), y, yt
    return load
