"""Synthetic generators from the papers."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


def make_boxes(n_samples: int = 10_000, n_features: int = 100, *,
               random_state: int | np.random.Generator | None = None,
               ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The overlapping-boxes SVM data of Mokhtari & Ribeiro (RES 2014, Sec. 4; oLBFGS 2015, Sec. 4.1).

    Half the samples have label -1 with features i.i.d. uniform on ``[-0.8, 0.2]``, the other half
    label +1 with features uniform on ``[-0.2, 0.8]``. Returns ``(X, y)``, rows shuffled.
    """
    if n_samples < 2 or n_features < 1:
        raise ValueError("make_boxes needs n_samples >= 2 and n_features >= 1")
    rng = np.random.default_rng(random_state)
    n_neg = n_samples // 2
    y = np.concatenate([-np.ones(n_neg), np.ones(n_samples - n_neg)])
    X = rng.uniform(0.0, 1.0, size=(n_samples, n_features)) - 0.5 + 0.3 * y[:, None]
    perm = rng.permutation(n_samples)
    return np.ascontiguousarray(X[perm]), y[perm]
