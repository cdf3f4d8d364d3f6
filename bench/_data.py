"""Locating and loading the real datasets for the benchmark scripts (never needed by sqnopt):
the files of ``shared/datasets``, the held-out splits of the streaming benchmarks, and the
90/10 splits of the SQB benchmarks (paper 004)."""

from __future__ import annotations

import gzip
import lzma
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
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


# --- the SQB benchmarks' sets (bench/paper004_sqb.py, bench/test_sqb.py) -------------------------

#: name -> (file, task, preprocessing note)
SQB_SETS = {
    "a9a": ("a9a.xz", "binary", "LIBSVM a9a = UCI adult (0/1 one-hot features, 123 columns)"),
    "w8a": ("w8a.xz", "binary", "LIBSVM w8a (0/1 features, 300 columns)"),
    "mushrooms": ("mushrooms.xz", "binary", "LIBSVM mushrooms (0/1 features, 112 columns)"),
    "news20": ("news20.xz", "multiclass",
               "LIBSVM news20 (20 classes; raw term counts, rows scaled to unit L2 norm)"),
    "fashion-mnist": ("fashion-mnist", "multiclass",
                      "Fashion-MNIST train images (10 classes; pixels / 255, dense float64)"),
    "dna": ("dna.scale.xz", "multiclass", "LIBSVM dna.scale (3 classes, 180 binary columns)"),
}


def sqb_available(name: str) -> bool:
    """Whether ``shared/datasets`` holds the file of the SQB set ``name``."""
    try:
        root = datasets_dir()
    except FileNotFoundError:
        return False
    return (root / SQB_SETS[name][0]).exists()


def _fashion(folder: Path) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    img = read_idx(folder / "train-images-idx3-ubyte.gz")
    lab = read_idx(folder / "train-labels-idx1-ubyte.gz")
    X = img.reshape(lab.shape[0], -1).astype(np.float64) / 255.0
    return X, lab.astype(np.float64)


def sqb_load(name: str, *, seed: int = 0, test_fraction: float = 0.1,
             max_samples: int | None = None) -> dict[str, Any]:
    """``{"X", "y", "X_test", "y_test", "task", "note"}``: a random ``1 - test_fraction`` /
    ``test_fraction`` split of the SQB set ``name`` (the paper's 90/10 split)."""
    fname, task, note = SQB_SETS[name]
    if name == "fashion-mnist":
        X, y = _fashion(datasets_dir() / fname)
    else:
        X, y = load_svmlight_xz(fname)
        X = sp.csr_matrix(X, dtype=np.float64)
    if name == "news20":
        norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
        X = sp.diags(1.0 / np.maximum(norms, 1e-300)) @ X
        X = sp.csr_matrix(X)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(X.shape[0])
    if max_samples is not None:
        perm = perm[:max_samples]
    n_test = int(round(test_fraction * perm.shape[0]))
    test, train = perm[:n_test], perm[n_test:]
    return {"X": X[train], "y": y[train], "X_test": X[test], "y_test": y[test], "task": task,
            "note": note}
