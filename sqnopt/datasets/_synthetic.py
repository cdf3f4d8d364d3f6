"""Synthetic generators from the papers."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from numpy.typing import NDArray


def make_boxes(n_samples: int = 10_000, n_features: int = 100, *,
               random_state: int | np.random.Generator | None = None,
               ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The overlapping-boxes SVM data of Mokhtari & Ribeiro (RES 2014, Sec. 4; oLBFGS 2015, Sec. 4.1).

    Half the samples (``n_samples // 2``) have label -1 with features i.i.d. uniform on
    ``[-0.8, 0.2]``, the other half label +1 with features uniform on ``[-0.2, 0.8]``; the labels
    come in a uniformly random order. Returns ``(X, y)``: ``X`` C-contiguous float64 of shape
    ``(n_samples, n_features)``, ``y`` in {-1, +1}.

    Generated in one pass: the balanced label vector is shuffled first and every row is drawn
    directly into the box of its label (``U[0, 1) - 0.5 + 0.3 y_i``, in place), which has the same
    joint distribution as drawing the two classes in blocks and shuffling the rows, without the
    temporaries and the row permutation of ``X``.
    """
    if n_samples < 2 or n_features < 1:
        raise ValueError("make_boxes needs n_samples >= 2 and n_features >= 1")
    rng = np.random.default_rng(random_state)
    y = np.ones(n_samples)
    y[: n_samples // 2] = -1.0
    rng.shuffle(y)
    X = rng.random((n_samples, n_features))
    X += (0.3 * y - 0.5)[:, None]
    return X, y


def irwin_hall_cdf(x: float | Fraction, n: int) -> float:
    r"""CDF of the sum of ``n`` independent U(0, 1) variables (the Irwin-Hall distribution).

    .. math:: F_n(x) = \frac{1}{n!} \sum_{k=0}^{\lfloor x \rfloor} (-1)^k \binom{n}{k} (x - k)^n

    Evaluated in exact rational arithmetic (the alternating sum cancels catastrophically in
    floating point) for ``n <= 1000``; beyond that the central-limit approximation
    ``N(n/2, n/12)`` is used.
    """
    if not (isinstance(n, (int, np.integer)) and n >= 1):
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    n = int(n)
    xf = Fraction(x)
    if xf <= 0:
        return 0.0
    if xf >= n:
        return 1.0
    if n > 1000:
        z = (float(xf) - n / 2) / math.sqrt(n / 12)
        return 0.5 * math.erfc(-z / math.sqrt(2))
    total = sum((-1) ** k * math.comb(n, k) * (xf - k) ** n for k in range(math.floor(xf) + 1))
    return float(total / math.factorial(n))


def boxes_clairvoyant_accuracy(n_features: int) -> float:
    """Accuracy of the clairvoyant linear classifier on :func:`make_boxes` data.

    A class +1 sample is ``u - 0.2`` with ``u`` uniform on ``[0, 1]^n``; the classifier that knows
    the model predicts ``sign(sum_j x_j)`` (``w = 1``, ``b = 0``, by symmetry), which is right
    when ``sum_j u_j > 0.2 n``; class -1 is the mirror image. Hence the accuracy is
    ``1 - F_n(0.2 n)`` with ``F_n`` the Irwin-Hall CDF (Mokhtari & Ribeiro, RES 2014, Sec. 4:
    "for n = 4 this amounts to 98%"; exactly 0.98293).

    (The Bayes classifier, which may be non-linear, reaches ``1 - 0.4^n / 2``: it only errs on
    the overlap box ``[-0.2, 0.2]^n``.)
    """
    if not (isinstance(n_features, (int, np.integer)) and n_features >= 1):
        raise ValueError(f"n_features must be an integer >= 1, got {n_features!r}")
    return 1.0 - irwin_hall_cdf(Fraction(int(n_features), 5), int(n_features))
