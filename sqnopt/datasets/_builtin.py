"""Real data shipped inside the package (no download): see ``data/README.md`` for the license."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from sqnopt.datasets._io import load_svmlight

Split = Literal["train", "test"]

__all__ = ["BUILTIN_DATASETS", "BuiltinDataset", "builtin_path", "load_a9a", "load_builtin"]


@dataclass(frozen=True)
class BuiltinDataset:
    name: str
    files: dict[str, str]       #: split -> file name in ``sqnopt/datasets/data``
    n_features: int
    description: str
    license: str


BUILTIN_DATASETS: dict[str, BuiltinDataset] = {
    "a9a": BuiltinDataset(
        name="a9a",
        files={"train": "a9a.xz", "test": "a9a.t.xz"},
        n_features=123,
        description="UCI Adult census income (>50K: +1), LIBSVM binary encoding; "
                    "32561 train / 16281 test rows, 123 sparse 0/1 features",
        license="CC BY 4.0 (UCI Machine Learning Repository, Becker & Kohavi 1996)",
    ),
}


def builtin_path(name: str, split: Split = "train") -> Path:
    """Path of a shipped data file."""
    ds = _get(name)
    if split not in ds.files:
        raise ValueError(f"built-in dataset {name!r} has splits {sorted(ds.files)}, not {split!r}")
    ref = resources.files("sqnopt.datasets").joinpath("data", ds.files[split])
    path = Path(str(ref))
    if not path.exists():  # pragma: no cover - a broken installation
        raise FileNotFoundError(f"the built-in data file {path} is missing from this "
                                "installation of sqnopt; reinstall the package")
    return path


def load_builtin(name: str, split: Split = "train") -> tuple[Any, NDArray[np.float64]]:
    """``(X, y)`` of a shipped data set: X is CSR float64, y the labels as given in the file."""
    ds = _get(name)
    return load_svmlight(builtin_path(name, split), n_features=ds.n_features, zero_based=False)


def load_a9a(split: Split = "train") -> tuple[Any, NDArray[np.float64]]:
    """The a9a (UCI Adult) data shipped with sqnopt: ``split="train"`` (32561 rows) or
    ``"test"`` (16281 rows), 123 binary features, labels -1/+1 (+1: income > 50K).

    License: CC BY 4.0 (see ``sqnopt/datasets/data/README.md``).
    """
    return load_builtin("a9a", split)


def _get(name: str) -> BuiltinDataset:
    try:
        return BUILTIN_DATASETS[name.lower()]
    except KeyError:
        raise ValueError(f"unknown built-in dataset {name!r}; available: "
                         f"{', '.join(sorted(BUILTIN_DATASETS))}") from None
