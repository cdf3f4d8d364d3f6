"""make_boxes: the overlapping-boxes data of papers 000 / 003 (layout, reproducibility, and that
the one-pass generator has the distribution of the papers' recipe)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from sqnopt.datasets import make_boxes


def _blockwise_recipe(n_samples: int, n_features: int, rng: np.random.Generator
                      ) -> tuple[np.ndarray, np.ndarray]:
    """The papers' description taken literally: draw the -1 class and the +1 class in blocks,
    then shuffle the rows (the generator before it was rewritten in one pass)."""
    n_neg = n_samples // 2
    y = np.concatenate([-np.ones(n_neg), np.ones(n_samples - n_neg)])
    X = rng.uniform(0.0, 1.0, size=(n_samples, n_features)) - 0.5 + 0.3 * y[:, None]
    perm = rng.permutation(n_samples)
    return X[perm], y[perm]


@pytest.mark.parametrize("n_samples", [2, 7, 1000])
def test_layout_balance_and_boxes(n_samples: int) -> None:
    X, y = make_boxes(n_samples, 5, random_state=3)
    assert X.shape == (n_samples, 5) and y.shape == (n_samples,)
    assert X.dtype == np.float64 and y.dtype == np.float64 and X.flags.c_contiguous
    assert set(np.unique(y)) <= {-1.0, 1.0}
    assert int(np.sum(y < 0)) == n_samples // 2            # the same split as the papers' recipe
    neg, pos = X[y < 0], X[y > 0]
    assert neg.min() >= -0.8 - 1e-12 and neg.max() <= 0.2 + 1e-12
    assert pos.min() >= -0.2 - 1e-12 and pos.max() <= 0.8 + 1e-12


def test_reproducible_and_accepts_a_generator() -> None:
    a = make_boxes(50, 4, random_state=11)
    b = make_boxes(50, 4, random_state=11)
    c = make_boxes(50, 4, random_state=np.random.default_rng(11))
    d = make_boxes(50, 4, random_state=12)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    assert np.array_equal(a[0], c[0]) and np.array_equal(a[1], c[1])
    assert not np.array_equal(a[0], d[0])
    with pytest.raises(ValueError, match="n_samples >= 2"):
        make_boxes(1, 3)


def test_features_are_uniform_on_the_box_of_their_label() -> None:
    X, y = make_boxes(20_000, 3, random_state=5)
    for label, lo in ((-1.0, -0.8), (1.0, -0.2)):
        for j in range(3):
            p = stats.kstest(X[y == label, j], stats.uniform(loc=lo, scale=1.0).cdf).pvalue
            assert p > 1e-3, (label, j, p)
    # coordinates independent of each other within a class
    corr = np.corrcoef(X[y > 0].T)
    assert np.max(np.abs(corr - np.eye(3))) < 0.03


def test_label_order_is_random_and_rows_do_not_depend_on_position() -> None:
    X, y = make_boxes(20_000, 2, random_state=6)
    # not sorted by class: the labels of both halves average ~0 (+-3 sigma = 0.03)
    assert abs(y[:10_000].mean()) < 0.03 and abs(y[10_000:].mean()) < 0.03
    # runs test for randomness of the label sequence (Wald-Wolfowitz)
    runs = 1 + int(np.sum(y[1:] != y[:-1]))
    n1 = n2 = 10_000
    mu = 2 * n1 * n2 / (n1 + n2) + 1
    sd = np.sqrt((mu - 1) * (mu - 2) / (n1 + n2 - 1))
    assert abs(runs - mu) < 4 * sd
    # given its label, a row's features do not depend on its index
    pos = np.flatnonzero(y > 0)
    r = stats.pearsonr(pos, X[pos, 0]).statistic
    assert abs(r) < 0.04


def test_same_distribution_as_the_blockwise_recipe() -> None:
    """Two-sample KS tests of the class-conditional features, the row sums (the statistic the
    clairvoyant classifier uses) and the label sequence's first-half balance against the
    papers' literal recipe."""
    Xa, ya = make_boxes(20_000, 4, random_state=21)
    Xb, yb = _blockwise_recipe(20_000, 4, np.random.default_rng(22))
    for label in (-1.0, 1.0):
        for j in range(4):
            p = stats.ks_2samp(Xa[ya == label, j], Xb[yb == label, j]).pvalue
            assert p > 1e-3, (label, j, p)
        p = stats.ks_2samp(Xa[ya == label].sum(axis=1), Xb[yb == label].sum(axis=1)).pvalue
        assert p > 1e-3
    assert np.sum(ya < 0) == np.sum(yb < 0)
