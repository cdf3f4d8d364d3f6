r"""Hashed click-through-rate streams with a known logistic model: data of any size whose best
achievable held-out log loss is known exactly.

An ad impression has ``F`` categorical fields (advertiser, site, device, ...). In field ``f`` the
value of rank ``r`` (``r = 1`` the most frequent) occurs with the probability of a discretised,
truncated power law of exponent ``s`` over the field's vocabulary of ``V_f`` values,

.. math::

    P_f(r) = \frac{r^{1-s} - (r+1)^{1-s}}{1 - (V_f+1)^{1-s}}, \qquad r = 1, \dots, V_f

(for ``s = 1``: :math:`\log\frac{r+1}{r} / \log(V_f+1)`), the law of :math:`\lfloor R \rfloor`
for ``R`` with density proportional to :math:`x^{-s}` on :math:`[1, V_f + 1)`. For large ``r``,
:math:`P_f(r) \approx (s-1) r^{-s} / Z`: Zipf's law, heavy-tailed category frequencies (a few
values in most rows, most values rare). It is drawn exactly by inversion,
:math:`r = \lfloor (1 - u\,(1 - (V_f+1)^{1-s}))^{1/(1-s)} \rfloor` for ``u ~ U[0, 1)``, in
constant time per draw whatever ``V_f``.

Each (field, value) pair is hashed into one of ``n_features`` columns (the "hashing trick" of
Weinberger et al., *Feature hashing for large scale multitask learning*, ICML 2009) by the
SplitMix64 finaliser (Steele, Lea & Flood, *Fast splittable pseudorandom number generators*,
OOPSLA 2014) of a 64-bit key:

.. math::

    \mathrm{key}(f, r) = (f \cdot 2^{32} + r) \oplus \mathrm{salt}, \qquad
    \mathrm{column}(f, r) = \mathrm{mix}(\mathrm{key}(f, r)) \bmod n_\mathrm{features},

``mix(z)``: ``z ^= z >> 30; z *= 0xbf58476d1ce4e5b9; z ^= z >> 27; z *= 0x94d049bb133111eb;
z ^= z >> 31`` (arithmetic modulo :math:`2^{64}`), ``salt`` a 64-bit number drawn from the
generator's seed. A row is the sum of its fields' one-hot vectors: two fields hashed into the
same column give that column the value 2 (collisions are summed), so rows are CSR with sorted,
unique column indices and ``F`` stored values at most.

The labels follow a logistic model *on the hashed columns*: ground-truth weights
:math:`w^\star_j \sim \mathcal N(0, \sigma^2)` i.i.d. for every column ``j`` and a bias ``b``,

.. math::

    p(x) = P(y = 1 \mid x) = \frac{1}{1 + e^{-(b + w^{\star\top} x)}}, \qquad
    y \mid x \sim \mathrm{Bernoulli}(p(x)),

so a linear model with an intercept on the very data it is given can reach the Bayes rate, and
``b`` sets the rate of positives (clicks). The Bayes (lowest achievable expected) log loss of a
generated set is the mean binary entropy of its true probabilities,
:math:`\frac1n \sum_i H(p_i)`, :math:`H(p) = -p \log p - (1-p)\log(1-p)`
(:func:`bayes_log_loss`): the expected log loss of the true model on those rows, which no
predictor of their labels beats in expectation.

**Seeding.** Everything derives from one integer seed. The model (salt and :math:`w^\star`)
comes from ``SeedSequence(seed, spawn_key=(0,))``; rows come in fixed blocks of
:data:`BLOCK_ROWS` rows, block ``k`` of stream ``t`` from its own generator
``SeedSequence(seed, spawn_key=(1 + t, k))``. Row ``i`` of a stream is therefore the same
whatever the chunks it is requested in (any chunk size, any starting row), and a held-out set is
simply another stream of the same model.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterator, Sequence
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

__all__ = ["BLOCK_ROWS", "CTRSample", "HashedCTRGenerator", "bayes_log_loss",
           "zipf_like_pmf"]

#: Rows per independently seeded block (the unit of the counter-based seeding).
BLOCK_ROWS = 8192
#: Largest ``n_features``: column indices are 32-bit integers.
_MAX_FEATURES = 2**31 - 1
_MASK64 = (1 << 64) - 1


class CTRSample(NamedTuple):
    """Rows of a :class:`HashedCTRGenerator` stream."""

    #: CSR float64 ``(n, n_features)``: summed one-hot fields, sorted unique int32 indices.
    X: sp.csr_matrix
    #: Labels, float64 in {0, 1} (1: a click).
    y: NDArray[np.float64]
    #: True probabilities :math:`p(x_i) = P(y_i = 1 \mid x_i)` of the generating model.
    proba: NDArray[np.float64]


def _check_int(value: object, name: str, lo: int, hi: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    v = int(value)
    if v < lo or (hi is not None and v > hi):
        bound = f"in [{lo}, {hi}]" if hi is not None else f">= {lo}"
        raise ValueError(f"{name} must be {bound}, got {v}")
    return v


def _check_real(value: object, name: str, *, positive: bool = False,
                nonnegative: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    v = float(value)
    if not math.isfinite(v) or (positive and v <= 0) or (nonnegative and v < 0):
        need = "> 0" if positive else ">= 0" if nonnegative else "finite"
        raise ValueError(f"{name} must be finite and {need}, got {value!r}")
    return v


def zipf_like_pmf(vocabulary_size: int, exponent: float) -> NDArray[np.float64]:
    r"""The probabilities :math:`P(r)`, ``r = 1 .. vocabulary_size``, of a field's values (the
    discretised truncated power law of the module docstring); entry ``r - 1`` is rank ``r``."""
    V = _check_int(vocabulary_size, "vocabulary_size", 1)
    s = _check_real(exponent, "exponent", nonnegative=True)
    r = np.arange(1, V + 1, dtype=np.float64)
    step = np.log1p(1.0 / r)                     # log((r + 1) / r), without cancellation
    if s == 1.0:
        return np.asarray(step / math.log(V + 1.0))
    e = 1.0 - s
    # (r^e - (r+1)^e) / (1 - (V+1)^e) = r^e expm1(e log((r+1)/r)) / expm1(e log(V+1))
    return np.asarray(np.exp(e * np.log(r)) * np.expm1(e * step)
                      / math.expm1(e * math.log(V + 1.0)))


def _ranks(u: NDArray[np.float64], V: NDArray[np.float64], s: float) -> NDArray[np.int64]:
    """Ranks ``1 .. V`` (broadcast over fields) from uniforms ``u`` by inversion of the CDF
    (``u`` is overwritten)."""
    if s == 1.0:
        u *= np.log(V + 1.0)                          # (V+1)^u
        np.exp(u, out=u)
    else:
        e = 1.0 - s
        u *= np.expm1(e * np.log(V + 1.0))            # u ((V+1)^(1-s) - 1)
        np.log1p(u, out=u)
        u *= 1.0 / e
        np.exp(u, out=u)                              # (1 + u ((V+1)^(1-s) - 1))^(1/(1-s))
    r = u.astype(np.int64)                            # floor: the values are >= 1
    np.clip(r, 1, V.astype(np.int64), out=r)          # rounding at u -> 1
    return r


def _mix64(z: NDArray[np.uint64]) -> NDArray[np.uint64]:
    """SplitMix64's finaliser (arithmetic modulo 2^64 on uint64 arrays)."""
    z = z ^ (z >> np.uint64(30))
    z = z * np.uint64(0xBF58476D1CE4E5B9)
    z = z ^ (z >> np.uint64(27))
    z = z * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def bayes_log_loss(proba: NDArray[np.floating] | Sequence[float]) -> float:
    r"""Mean binary entropy :math:`\frac1n\sum_i H(p_i)` (natural log) of true probabilities
    ``proba``: the Bayes log loss of a set whose labels are drawn from them (the expected log
    loss of the true model; no predictor does better in expectation)."""
    p = np.asarray(proba, dtype=np.float64)
    if p.ndim != 1 or p.size == 0:
        raise ValueError(f"proba must be a non-empty 1-d array, got shape {p.shape}")
    if not np.all((p >= 0) & (p <= 1)):
        raise ValueError("proba must hold probabilities in [0, 1]")
    from scipy.special import xlogy

    return float(-np.mean(xlogy(p, p) + xlogy(1.0 - p, 1.0 - p)))


class HashedCTRGenerator:
    r"""Hashed CTR-like rows from a known logistic model (see the module docstring).

    Parameters
    ----------
    n_features
        Columns the (field, value) pairs are hashed into.
    vocabulary_sizes
        Values per field (one entry per field); default ``n_fields`` sizes spaced evenly in log
        scale from 10 to 100,000 (rounded), from small fields (device, position) to
        identifiers (site, advertiser).
    n_fields
        Number of fields when ``vocabulary_sizes`` is not given.
    zipf_exponent
        Exponent ``s >= 0`` of every field's value frequencies (``0``: uniform).
    weight_scale
        Standard deviation :math:`\sigma` of the ground-truth weights.
    bias
        Intercept ``b`` of the ground-truth model (sets the rate of positives).
    random_state
        The seed (a non-negative integer) of the model and of every stream.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        The ground-truth weights :math:`w^\star`.
    intercept_ : float
        The ground-truth bias ``b``.
    vocabulary_sizes_ : ndarray of int64, one entry per field
    salt_ : int
        The 64-bit salt of the hash.
    """

    def __init__(self, n_features: int = 2**18, *,
                 vocabulary_sizes: Sequence[int] | None = None, n_fields: int = 24,
                 zipf_exponent: float = 1.2, weight_scale: float = 0.5, bias: float = -2.2,
                 random_state: int = 0) -> None:
        self.n_features = _check_int(n_features, "n_features", 1, _MAX_FEATURES)
        if vocabulary_sizes is None:
            n_fields = _check_int(n_fields, "n_fields", 1)
            sizes = np.rint(np.geomspace(10.0, 1e5, n_fields)).astype(np.int64)
        else:
            sizes = np.array([_check_int(v, "each vocabulary size", 1, 2**31 - 1)
                              for v in vocabulary_sizes], dtype=np.int64)
            if sizes.size == 0:
                raise ValueError("vocabulary_sizes must list at least one field")
        self.vocabulary_sizes_ = sizes
        self.n_fields = int(sizes.size)
        self.zipf_exponent = _check_real(zipf_exponent, "zipf_exponent", nonnegative=True)
        self.weight_scale = _check_real(weight_scale, "weight_scale", nonnegative=True)
        self.intercept_ = _check_real(bias, "bias")
        self.random_state = _check_int(random_state, "random_state", 0)
        model = np.random.default_rng(np.random.SeedSequence(self.random_state,
                                                             spawn_key=(0,)))
        self.salt_ = int(model.integers(0, 2**63, dtype=np.int64)) * 2 + int(model.integers(2))
        self.coef_ = model.normal(0.0, self.weight_scale, self.n_features)
        # every (field, rank) pair's column, looked up per draw: rank r of field f at
        # _offsets[f] + r - 1
        self._offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        self._table = np.concatenate([self.columns(f, np.arange(1, int(v) + 1))
                                      for f, v in enumerate(sizes)])
        self._sizes_f = sizes.astype(np.float64)

    def __repr__(self) -> str:
        return (f"HashedCTRGenerator(n_features={self.n_features}, n_fields={self.n_fields}, "
                f"zipf_exponent={self.zipf_exponent}, weight_scale={self.weight_scale}, "
                f"bias={self.intercept_}, random_state={self.random_state})")

    # ------------------------------------------------------------------ the model
    def columns(self, field: int, ranks: NDArray[np.integer] | Sequence[int]) -> NDArray[np.int32]:
        """The hashed column of each value rank (``1 .. V_f``) of ``field``."""
        f = _check_int(field, "field", 0, self.n_fields - 1)
        r = np.asarray(ranks)
        if r.size and (not np.issubdtype(r.dtype, np.integer) or r.min() < 1
                       or r.max() > self.vocabulary_sizes_[f]):
            raise ValueError(f"ranks of field {f} must be integers in [1, "
                             f"{int(self.vocabulary_sizes_[f])}]")
        key = (np.uint64(f) << np.uint64(32)) + r.astype(np.uint64)
        h = _mix64(key ^ np.uint64(self.salt_ & _MASK64))
        return (h % np.uint64(self.n_features)).astype(np.int32)

    def value_probabilities(self, field: int) -> NDArray[np.float64]:
        """:func:`zipf_like_pmf` of ``field``: entry ``r - 1`` is the probability of rank ``r``."""
        f = _check_int(field, "field", 0, self.n_fields - 1)
        return zipf_like_pmf(int(self.vocabulary_sizes_[f]), self.zipf_exponent)

    def decision_function(self, X: sp.csr_matrix) -> NDArray[np.float64]:
        """The true log-odds :math:`b + w^{\\star\\top} x` of rows ``X`` (``n_features`` wide)."""
        return np.asarray(X @ self.coef_, dtype=np.float64) + self.intercept_

    def predict_proba(self, X: sp.csr_matrix) -> NDArray[np.float64]:
        """The true probabilities :math:`p(x)` of rows ``X``."""
        from scipy.special import expit

        return np.asarray(expit(self.decision_function(X)), dtype=np.float64)

    # ------------------------------------------------------------------ rows
    def _block(self, stream: int, k: int) -> tuple[NDArray[np.int32], NDArray[np.float64],
                                                   NDArray[np.int64], NDArray[np.float64],
                                                   NDArray[np.float64]]:
        """Block ``k`` of ``stream``: CSR parts ``(indices, data, indptr)``, labels, proba."""
        rng = np.random.default_rng(np.random.SeedSequence(self.random_state,
                                                           spawn_key=(1 + stream, k)))
        B, F = BLOCK_ROWS, self.n_fields
        ranks = _ranks(rng.random((B, F)), self._sizes_f, self.zipf_exponent)
        cols = self._table[self._offsets + ranks - 1]                   # (B, F) int32
        margin = self.intercept_ + self.coef_[cols].sum(axis=1)
        from scipy.special import expit

        proba = np.asarray(expit(margin), dtype=np.float64)
        y = (rng.random(B) < proba).astype(np.float64)
        cols.sort(axis=1)
        flat = cols.ravel()
        new = np.empty(flat.size, dtype=bool)
        new[0] = True
        np.not_equal(flat[1:], flat[:-1], out=new[1:])
        new[::F] = True                                               # each row's first entry
        starts = np.flatnonzero(new)
        indices = flat[starts]
        data = np.diff(np.append(starts, flat.size)).astype(np.float64)
        indptr = np.zeros(B + 1, dtype=np.int64)
        np.cumsum(new.reshape(B, F).sum(axis=1), out=indptr[1:])
        return indices, data, indptr, y, proba

    def sample(self, n_samples: int, *, stream: int = 0, start: int = 0) -> CTRSample:
        """Rows ``start .. start + n_samples - 1`` of ``stream`` (0: training, 1: held-out by
        convention; any non-negative integer is another independent stream)."""
        n = _check_int(n_samples, "n_samples", 0)
        t = _check_int(stream, "stream", 0)
        s0 = _check_int(start, "start", 0)
        first, last = s0 // BLOCK_ROWS, (s0 + n - 1) // BLOCK_ROWS
        idx_parts, data_parts, counts, ys, ps = [], [], [], [], []
        for k in range(first, last + 1) if n else ():
            indices, data, indptr, y, proba = self._block(t, k)
            lo = max(s0 - k * BLOCK_ROWS, 0)
            hi = min(s0 + n - k * BLOCK_ROWS, BLOCK_ROWS)
            idx_parts.append(indices[indptr[lo]:indptr[hi]])
            data_parts.append(data[indptr[lo]:indptr[hi]])
            counts.append(np.diff(indptr[lo:hi + 1]))
            ys.append(y[lo:hi])
            ps.append(proba[lo:hi])
        if not n:
            return CTRSample(sp.csr_matrix((0, self.n_features)), np.zeros(0), np.zeros(0))
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.concatenate(counts), out=indptr[1:])
        nnz = int(indptr[-1])
        index_dtype = np.int32 if nnz <= _MAX_FEATURES else np.int64
        X = sp.csr_matrix((np.concatenate(data_parts), np.concatenate(idx_parts),
                           indptr.astype(index_dtype)), shape=(n, self.n_features))
        X.has_sorted_indices = True
        return CTRSample(X, np.concatenate(ys), np.concatenate(ps))

    def iter_samples(self, n_samples: int, chunk_size: int = 100_000, *, stream: int = 0,
                     start: int = 0) -> Iterator[CTRSample]:
        """Rows ``start .. start + n_samples - 1`` of ``stream`` in chunks of at most
        ``chunk_size`` rows (the same rows as one :meth:`sample` call); memory is bounded by
        the chunk."""
        n = _check_int(n_samples, "n_samples", 0)
        size = _check_int(chunk_size, "chunk_size", 1)
        s0 = _check_int(start, "start", 0)
        for a in range(s0, s0 + n, size):
            yield self.sample(min(size, s0 + n - a), stream=stream, start=a)
