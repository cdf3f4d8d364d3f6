"""A generator with the statistics of RCV1 (Lewis et al. 2004), for scale tests without the data.

RCV1-v2 as used by Pegasos (Shalev-Shwartz et al. 2007, Sec. 5: 804 414 documents, 47 236
features, CCAT vs rest) is TF-IDF text with cosine-normalised rows, about 76 nonzeros per row,
Zipf-like term frequencies and ~47% positives. The corpus itself is not shipped here, so this
generator reproduces those statistics:

* feature popularity ``p_j ~ 1 / (j + 50)^s`` (Zipf-Mandelbrot, ``s = zipf_exponent``; the
  offset keeps the most common term in about a third of the documents, as for a stemmed,
  stop-worded vocabulary), feature ids shuffled so that popularity is not the column order;
* document lengths (distinct terms) log-normal with mean ``nnz_per_row``; each document draws
  tokens with replacement from ``p``, as many as give that many distinct terms in expectation;
* values ``(1 + log tf) * idf`` with ``idf = 1 + log(N / df)`` computed on the generated corpus,
  rows scaled to unit L2 norm;
* labels as topics: each document is positive with probability ``positive_fraction`` and draws
  a fraction of its tokens (uniform on ``[0, 2 topic_strength]``) from a vocabulary of
  ``topic_size`` words of its class (mid-frequency words, as topic words are), the rest from the
  background distribution; then a fraction ``label_noise`` of the labels is flipped. With the
  defaults a linear SVM (lam = 1e-4) has a test error of about 6%, the order of RCV1's CCAT task.

This is a workload generator (sizes, sparsity pattern, value scale, difficulty of a linear SVM),
not a model of language: numbers measured on it are about speed and optimisation, not accuracy
on real text.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

__all__ = ["make_rcv1_like"]


def make_rcv1_like(n_samples: int = 800_000, n_features: int = 47_236, *,
                   nnz_per_row: float = 75.0, zipf_exponent: float = 1.1,
                   positive_fraction: float = 0.47, topic_size: int | None = None,
                   topic_strength: float = 0.15, label_noise: float = 0.02,
                   dtype: type = np.float64, random_state: int | np.random.Generator | None = None,
                   chunk_size: int = 100_000,
                   ) -> tuple[sp.csr_matrix, NDArray[np.float64]]:
    """Sparse TF-IDF-like data with RCV1's shape and statistics; returns ``(X, y)``.

    Parameters
    ----------
    n_samples, n_features
        Defaults are RCV1's training size as in the Pegasos paper (800k x 47k).
    nnz_per_row
        Mean number of distinct terms per document (RCV1: about 76).
    zipf_exponent
        Exponent ``s`` of the feature popularity (text: about 1).
    positive_fraction
        Fraction of ``+1`` labels before noise (RCV1 CCAT: 0.47).
    topic_size, topic_strength
        Words per class vocabulary (default ``min(1000, n_features // 8)``), and the mean
        fraction of a document's tokens drawn from it.
    label_noise
        Fraction of labels flipped at random.
    dtype
        ``np.float64`` or ``np.float32`` for ``X``.
    chunk_size
        Rows generated at a time (bounds the temporary memory).

    Returns
    -------
    X : CSR matrix (n_samples, n_features), rows of unit L2 norm, sorted indices
    y : ndarray of +-1.0
    """
    if n_samples < 2 or n_features < 2:
        raise ValueError("make_rcv1_like needs n_samples >= 2 and n_features >= 2")
    if not 1.0 <= nnz_per_row <= n_features:
        raise ValueError(f"nnz_per_row must be in [1, n_features], got {nnz_per_row}")
    if not zipf_exponent > 0:
        raise ValueError(f"zipf_exponent must be > 0, got {zipf_exponent}")
    if not 0.0 < positive_fraction < 1.0 or not 0.0 <= label_noise < 0.5:
        raise ValueError("positive_fraction must be in (0, 1) and label_noise in [0, 0.5)")
    if topic_size is None:
        topic_size = max(1, min(1000, n_features // 8))
    if not 1 <= topic_size <= n_features // 4 or not 0.0 <= topic_strength <= 0.5:
        raise ValueError("topic_size must be in [1, n_features / 4] and topic_strength in "
                         "[0, 0.5]")
    if np.dtype(dtype) not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise ValueError(f"dtype must be float32 or float64, got {dtype}")
    rng = np.random.default_rng(random_state)

    rank = np.arange(n_features, dtype=np.float64)
    pop = 1.0 / (rank + 50.0) ** zipf_exponent
    pop /= pop.sum()
    cdf = np.cumsum(pop)
    cdf /= cdf[-1]
    column_of_rank = rng.permutation(n_features).astype(np.int32)

    # Distinct terms per document ~ lognormal with mean nnz_per_row; the number of tokens m that
    # gives d distinct terms in expectation inverts E[d](m) = sum_j 1 - (1 - p_j)^m.
    sigma = 0.55
    distinct = rng.lognormal(np.log(nnz_per_row) - sigma * sigma / 2, sigma, size=n_samples)
    distinct = np.clip(distinct, 1.0, 0.95 * n_features)
    m_grid = np.unique(np.geomspace(1.0, 20.0 * n_features, 400))
    log1mp = np.log1p(-pop)
    d_grid = np.array([float(np.sum(-np.expm1(m * log1mp))) for m in m_grid])
    lengths = np.maximum(1, np.rint(np.interp(distinct, d_grid, m_grid))).astype(np.int64)

    # Two class vocabularies of mid-frequency words (ranks from 0.5% to 40% of the vocabulary).
    lo = max(1, n_features // 200)
    hi = min(n_features, max(lo + 2 * topic_size, (2 * n_features) // 5))
    topic_ranks = rng.choice(np.arange(lo, hi), size=2 * topic_size, replace=False)
    topics = column_of_rank[topic_ranks].reshape(2, topic_size)
    topic_cdf = np.cumsum(1.0 / np.arange(1.0, topic_size + 1.0))
    topic_cdf /= topic_cdf[-1]
    y = np.where(rng.random(n_samples) < positive_fraction, 1.0, -1.0)
    share = rng.uniform(0.0, 2.0 * topic_strength, size=n_samples)

    parts = []
    for start in range(0, n_samples, chunk_size):
        stop = min(start + chunk_size, n_samples)
        lens = lengths[start:stop]
        n_tok = lens.sum()
        ranks = np.searchsorted(cdf, rng.random(n_tok), side="right")
        cols = column_of_rank[np.minimum(ranks, n_features - 1)]
        doc = np.repeat(np.arange(start, stop), lens)
        topical = rng.random(n_tok) < share[doc]
        pick = np.minimum(np.searchsorted(topic_cdf, rng.random(int(topical.sum())), side="right"),
                          topic_size - 1)
        cols[topical] = topics[(y[doc[topical]] > 0).astype(np.intp), pick]
        indptr = np.concatenate([[0], np.cumsum(lens)])
        block = sp.csr_matrix((np.ones(n_tok, dtype=np.float64), cols, indptr),
                              shape=(stop - start, n_features))
        block.sum_duplicates()          # data = term counts, indices sorted
        parts.append(block)
    X = sp.vstack(parts, format="csr")
    del parts

    df = np.bincount(X.indices, minlength=n_features).astype(np.float64)
    idf = np.log(n_samples / np.maximum(df, 1.0)) + 1.0
    X.data = (1.0 + np.log(X.data)) * idf[X.indices]
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    X.data /= np.repeat(norms, np.diff(X.indptr))

    flip = rng.random(n_samples) < label_noise
    y[flip] = -y[flip]
    if np.dtype(dtype) == np.float32:
        X = X.astype(np.float32)
    X.indices = X.indices.astype(np.int32, copy=False)
    return X, y
