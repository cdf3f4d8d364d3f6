"""The weight of each training sample: ``sample_weight`` times the weight of its class.

A :class:`~sqnopt.training.Trainer` minimises ``F(w) = λ/2 ||w||² + Σ c_i ℓ_i / Σ c_i`` with
``c_i = sample_weight_i · class_weight[y_i]``. ``class_weight="balanced"`` gives every class the
same total weight (``n / (K n_k)``, scikit-learn's convention, so a fit with it matches theirs);
a mapping ``{label: weight}`` reweights the classes it names. The weights are checked here once,
before any component sees them, and the arrays the user passed are never modified.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Union

import numpy as np
from numpy.typing import ArrayLike, NDArray

from sqnopt._text import short_list
from sqnopt.data._dataset import sample_weight_array

FloatArray = NDArray[np.float64]
ClassWeight = Union[None, str, Mapping[Any, float]]

__all__ = ["ClassWeight", "check_two_classes", "class_counts", "class_weight_vector",
           "regression_weights", "sample_weights"]


def class_weight_vector(class_weight: ClassWeight, classes: NDArray[Any],
                        counts: NDArray[np.float64]) -> FloatArray:
    """Weight of each class (aligned with ``classes``).

    ``"balanced"`` gives ``n / (K * count_k)`` from ``counts`` (classes not seen yet get 1);
    a mapping gives its value for the labels it names and 1 for the others.
    """
    k = len(classes)
    if class_weight is None:
        return np.ones(k)
    if isinstance(class_weight, str):
        if class_weight != "balanced":
            raise ValueError(f"class_weight must be None, 'balanced' or a dict "
                             f"{{label: weight}}; got {class_weight!r}")
        total = float(counts.sum())
        out = np.ones(k)
        seen = counts > 0
        out[seen] = total / (k * counts[seen])
        return out
    if not isinstance(class_weight, Mapping):
        raise TypeError(f"class_weight must be None, 'balanced' or a dict {{label: weight}}; "
                        f"got {type(class_weight).__name__}")
    out = np.ones(k)
    for label, weight in class_weight.items():
        hit = np.flatnonzero(classes == label)
        if hit.size == 0:
            raise ValueError(f"class_weight names the label {label!r}, which is not among the "
                             f"classes [{short_list(classes.tolist(), 10)}]")
        w = float(weight)
        if not math.isfinite(w) or w < 0:
            raise ValueError(f"class_weight[{label!r}] must be a finite number >= 0, got {weight!r}")
        out[hit[0]] = w
    return out


def class_counts(y: NDArray[Any], classes: NDArray[Any],
                 index: NDArray[np.intp] | None = None) -> FloatArray:
    """How many samples of ``y`` carry each label of ``classes``; ``index``, when given, is
    each sample's position in ``classes`` (one count instead of a comparison per class)."""
    if index is not None:
        return np.bincount(index, minlength=len(classes)).astype(np.float64)
    return np.array([np.sum(y == c) for c in classes], dtype=np.float64)


def sample_weights(y: NDArray[Any], classes: NDArray[Any], counts: FloatArray,
                   sample_weight: ArrayLike | None, n: int,
                   class_weight: ClassWeight) -> FloatArray:
    """``c_i``: the checked ``sample_weight`` (ones when ``None``; a scalar for every sample;
    :func:`sqnopt.data._dataset.sample_weight_array`) times ``class_weight_vector(class_weight, classes, counts)[y_i]``, as a new array."""
    sw = np.ones(n) if sample_weight is None else sample_weight_array(sample_weight, n)
    cw = class_weight_vector(class_weight, classes, counts)
    if (cw != 1.0).any():
        sw = sw * cw[np.searchsorted(classes, y)]
    return sw


def check_two_classes(y: NDArray[Any], classes: NDArray[Any], weights: FloatArray,
                      index: NDArray[np.intp] | None = None) -> None:
    """Refuse weights that leave nothing to learn: all zero, or only one class weighted.
    ``index``: as for :func:`class_counts`."""
    heavy = weights > 0
    if not heavy.any():
        raise ValueError("sample_weight: all weights are zero (after class_weight). Give at "
                         "least one sample a positive weight")
    if index is not None:
        positive = list(classes[np.bincount(index[heavy], minlength=len(classes)) > 0])
    else:
        positive = [c for c in classes if np.any(heavy[y == c])]
    if len(positive) < 2:
        only = positive[0].item() if hasattr(positive[0], "item") else positive[0]
        raise ValueError(f"only one class ({only!r}) has samples with positive "
                         "weight; a classifier needs at least two classes")


def regression_weights(sample_weight: ArrayLike | None, n: int, class_weight: ClassWeight,
                       allow_zero: bool = False) -> FloatArray:
    """The sample weights of a regression fit (checked as for classes; ones when ``None``):
    ``class_weight`` must be ``None``, and some weight positive unless ``allow_zero``
    (``partial_fit`` ignores such a batch)."""
    if class_weight is not None:
        raise ValueError("class_weight: a regression loss has no classes; pass "
                         "class_weight=None (sample_weight weights the samples)")
    weights = np.ones(n) if sample_weight is None else sample_weight_array(sample_weight, n)
    if not allow_zero and not np.any(weights > 0):
        raise ValueError("sample_weight: all weights are zero. Give at least one sample a "
                         "positive weight")
    return weights
