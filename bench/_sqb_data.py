"""Dataset loading for the SQB benchmarks (paper 004): 90/10 splits of the files in
``../shared/datasets`` (see its README.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from _data import datasets_dir, load_svmlight_xz, read_idx


def _find_datasets() -> Path:
    """:func:`_data.datasets_dir`, or the conventional place when there is none (then
    :func:`available` says False for every set)."""
    try:
        return datasets_dir()
    except FileNotFoundError:
        return Path(__file__).resolve().parents[2] / "shared" / "datasets"


DATASETS = _find_datasets()

#: name -> (file, task, preprocessing note)
SETS = {
    "a9a": ("a9a.xz", "binary", "LIBSVM a9a = UCI adult (0/1 one-hot features, 123 columns)"),
    "w8a": ("w8a.xz", "binary", "LIBSVM w8a (0/1 features, 300 columns)"),
    "mushrooms": ("mushrooms.xz", "binary", "LIBSVM mushrooms (0/1 features, 112 columns)"),
    "news20": ("news20.xz", "multiclass",
               "LIBSVM news20 (20 classes; raw term counts, rows scaled to unit L2 norm)"),
    "fashion-mnist": ("fashion-mnist", "multiclass",
                      "Fashion-MNIST train images (10 classes; pixels / 255, dense float64)"),
    "dna": ("dna.scale.xz", "multiclass", "LIBSVM dna.scale (3 classes, 180 binary columns)"),
}


def available(name: str) -> bool:
    return (DATASETS / SETS[name][0]).exists()


def _fashion(folder: Path) -> tuple[np.ndarray, np.ndarray]:
    img = read_idx(folder / "train-images-idx3-ubyte.gz")
    lab = read_idx(folder / "train-labels-idx1-ubyte.gz")
    X = img.reshape(lab.shape[0], -1).astype(np.float64) / 255.0
    return X, lab.astype(np.float64)


def load(name: str, *, seed: int = 0, test_fraction: float = 0.1,
         max_samples: int | None = None) -> dict[str, Any]:
    """``{"X", "y", "X_test", "y_test", "task", "note"}``: a random ``1 - test_fraction`` /
    ``test_fraction`` split of the file (the paper's 90/10 split)."""
    fname, task, note = SETS[name]
    if name == "fashion-mnist":
        X, y = _fashion(DATASETS / fname)
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
