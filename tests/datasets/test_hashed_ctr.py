"""The hashed CTR-stream generator (seeding independent of chunking, hashing, the Zipf-like
value law, the ground-truth model and its Bayes log loss) and the svmlight / VW writers."""

from __future__ import annotations

import io
import math
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt.datasets import (
    BUILTIN_DATASETS,
    HashedCTRGenerator,
    bayes_log_loss,
    load_svmlight,
    write_svmlight,
    write_vw,
    zipf_like_pmf,
)
from sqnopt.datasets._format import format_rows
from sqnopt.datasets._hashed_ctr import BLOCK_ROWS
from sqnopt.datasets._write import format_rows_python

assert BUILTIN_DATASETS  # the package imports whole


def _same(a: sp.csr_matrix, b: sp.csr_matrix) -> bool:
    return (a.shape == b.shape and np.array_equal(a.indptr, b.indptr)
            and np.array_equal(a.indices, b.indices) and np.array_equal(a.data, b.data))


# ---------------------------------------------------------------------------- seeding
@pytest.mark.parametrize("chunk", [1, 777, BLOCK_ROWS, BLOCK_ROWS + 5, 50_000])
def test_rows_do_not_depend_on_the_chunk_size(chunk: int) -> None:
    g = HashedCTRGenerator(2**12, n_fields=5, random_state=3)
    n = 2 * BLOCK_ROWS + 123 if chunk > 1 else 300
    whole = g.sample(n, stream=0)
    parts = list(g.iter_samples(n, chunk))
    assert all(p.X.shape[0] <= chunk for p in parts)
    assert _same(sp.vstack([p.X for p in parts], format="csr"), whole.X)
    assert np.array_equal(np.concatenate([p.y for p in parts]), whole.y)
    assert np.array_equal(np.concatenate([p.proba for p in parts]), whole.proba)


def test_any_window_of_a_stream_is_the_same_rows() -> None:
    g = HashedCTRGenerator(2**12, n_fields=4, random_state=1)
    whole = g.sample(3 * BLOCK_ROWS)
    for start, n in ((0, 1), (BLOCK_ROWS - 3, 10), (BLOCK_ROWS, BLOCK_ROWS), (17, 2 * BLOCK_ROWS)):
        part = g.sample(n, start=start)
        assert _same(part.X, whole.X[start:start + n])
        assert np.array_equal(part.y, whole.y[start:start + n])


def test_same_seed_same_rows_other_seed_or_stream_other_rows() -> None:
    a = HashedCTRGenerator(2**12, n_fields=6, random_state=5).sample(2000)
    b = HashedCTRGenerator(2**12, n_fields=6, random_state=5).sample(2000)
    assert _same(a.X, b.X) and np.array_equal(a.y, b.y)
    other_stream = HashedCTRGenerator(2**12, n_fields=6, random_state=5).sample(2000, stream=1)
    other_seed = HashedCTRGenerator(2**12, n_fields=6, random_state=6).sample(2000)
    for c in (other_stream, other_seed):
        assert (c.X != a.X).nnz > 0
    # the model is the seed's, whatever the stream: the held-out rows follow the same w*
    g = HashedCTRGenerator(2**12, n_fields=6, random_state=5)
    np.testing.assert_allclose(g.predict_proba(other_stream.X), other_stream.proba, rtol=1e-12)


def test_empty_sample() -> None:
    s = HashedCTRGenerator(64, n_fields=2).sample(0)
    assert s.X.shape == (0, 64) and s.y.shape == (0,) and s.proba.shape == (0,)
    assert list(HashedCTRGenerator(64, n_fields=2).iter_samples(0)) == []


# ---------------------------------------------------------------------------- hashing
def _splitmix(z: int) -> int:
    m = (1 << 64) - 1
    z ^= z >> 30
    z = (z * 0xBF58476D1CE4E5B9) & m
    z ^= z >> 27
    z = (z * 0x94D049BB133111EB) & m
    return z ^ (z >> 31)


def test_columns_are_the_documented_hash() -> None:
    g = HashedCTRGenerator(1000, vocabulary_sizes=[40, 7, 300], random_state=9)
    for f, V in enumerate(g.vocabulary_sizes_):
        ranks = np.arange(1, int(V) + 1)
        expect = [_splitmix(((f << 32) + int(r)) ^ g.salt_) % 1000 for r in ranks]
        assert g.columns(f, ranks).tolist() == expect
    with pytest.raises(ValueError, match="ranks of field 1"):
        g.columns(1, [0])
    with pytest.raises(ValueError, match="ranks of field 1"):
        g.columns(1, [8])


def test_rows_are_summed_one_hot_fields_sorted_unique() -> None:
    # few columns: many collisions, summed
    g = HashedCTRGenerator(64, n_fields=10, random_state=2)
    X = g.sample(5000).X
    assert X.format == "csr" and X.indices.dtype == np.int32 and X.dtype == np.float64
    assert X.has_sorted_indices
    for i in range(0, 5000, 97):
        row = X.indices[X.indptr[i]:X.indptr[i + 1]]
        assert np.all(np.diff(row) > 0)
    np.testing.assert_array_equal(np.asarray(X.sum(axis=1)).ravel(), 10.0)
    assert X.data.max() >= 2                     # collisions happened and were summed
    assert np.all(X.data == np.round(X.data)) and X.data.min() >= 1


# ---------------------------------------------------------------------------- the value law
def test_zipf_like_pmf_formula() -> None:
    for V, s in ((1, 1.2), (5, 0.0), (50, 1.0), (1000, 1.2), (300, 2.5), (20, 0.7)):
        p = zipf_like_pmf(V, s)
        assert p.shape == (V,) and np.all(p > 0)
        assert math.isclose(p.sum(), 1.0, rel_tol=1e-12)
        r = np.arange(1, V + 1, dtype=np.float64)
        if s == 1.0:
            ref = np.log((r + 1) / r) / math.log(V + 1)
        else:
            ref = (r ** (1 - s) - (r + 1) ** (1 - s)) / (1 - (V + 1) ** (1 - s))
        np.testing.assert_allclose(p, ref, rtol=1e-9)
    np.testing.assert_allclose(zipf_like_pmf(5, 0.0), 0.2)
    p = zipf_like_pmf(10**5, 1.2)
    assert p[0] > 1000 * p[999]                     # heavy-tailed: a power law of exponent 1.2
    np.testing.assert_allclose(p[9999] / p[999], 10 ** -1.2, rtol=1e-3)


@pytest.mark.parametrize("s", [0.0, 1.0, 1.2])
def test_value_frequencies_follow_the_pmf(s: float) -> None:
    V, n = 40, 40_000
    g = HashedCTRGenerator(2**20, vocabulary_sizes=[V], zipf_exponent=s, random_state=4)
    cols = g.columns(0, np.arange(1, V + 1))
    assert np.unique(cols).size == V               # no collision in this small vocabulary
    X = g.sample(n).X
    rank_of = {int(c): r for r, c in enumerate(cols)}
    counts = np.bincount([rank_of[int(c)] for c in X.indices], minlength=V)
    p = g.value_probabilities(0)
    sd = np.sqrt(n * p * (1 - p))
    assert np.all(np.abs(counts - n * p) < 5 * sd + 1)


# ---------------------------------------------------------------------------- ground truth
def test_probabilities_are_the_logistic_model_on_hashed_columns() -> None:
    g = HashedCTRGenerator(256, n_fields=12, bias=-1.0, random_state=7)
    s = g.sample(20_000)
    margin = s.X @ g.coef_ + g.intercept_      # collisions count twice: the summed one-hot
    np.testing.assert_allclose(s.proba, 1 / (1 + np.exp(-margin)), rtol=1e-12)
    assert g.coef_.shape == (256,) and 0.4 < g.coef_.std() < 0.6
    # the labels' empirical rate is the mean true probability (CLT, 5 sigma)
    sd = np.sqrt(np.sum(s.proba * (1 - s.proba))) / s.proba.size
    assert abs(s.y.mean() - s.proba.mean()) < 5 * sd
    # and row by row: label 1 more often where p is high
    hi = s.proba > np.quantile(s.proba, 0.8)
    assert s.y[hi].mean() > 2 * s.y[~hi].mean()


def test_bias_sets_the_rate_of_positives() -> None:
    rates = [HashedCTRGenerator(2**10, n_fields=6, bias=b, random_state=0).sample(4000).y.mean()
             for b in (-4.0, -2.0, 0.0)]
    assert rates[0] < rates[1] < rates[2]


def test_bayes_log_loss_formula_and_monte_carlo() -> None:
    assert math.isclose(bayes_log_loss([0.5, 0.5]), math.log(2))
    assert bayes_log_loss([0.0, 1.0]) == 0.0
    p = 0.2
    assert math.isclose(bayes_log_loss([p]), -p * math.log(p) - (1 - p) * math.log(1 - p))
    g = HashedCTRGenerator(2**12, n_fields=8, random_state=11)
    s = g.sample(100_000)
    # the log loss of the true model on drawn labels estimates the mean entropy
    losses = -np.where(s.y == 1, np.log(s.proba), np.log1p(-s.proba))
    sd = losses.std() / math.sqrt(losses.size)
    assert abs(losses.mean() - bayes_log_loss(s.proba)) < 5 * sd
    with pytest.raises(ValueError, match="probabilities"):
        bayes_log_loss([1.5])
    with pytest.raises(ValueError, match="non-empty"):
        bayes_log_loss([])


def test_parameters_are_checked() -> None:
    with pytest.raises(ValueError, match="n_features"):
        HashedCTRGenerator(0)
    with pytest.raises(TypeError, match="n_features"):
        HashedCTRGenerator(2.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="zipf_exponent"):
        HashedCTRGenerator(zipf_exponent=-1)
    with pytest.raises(ValueError, match="bias"):
        HashedCTRGenerator(bias=math.nan)
    with pytest.raises(ValueError, match="vocabulary"):
        HashedCTRGenerator(vocabulary_sizes=[])
    with pytest.raises(ValueError, match="vocabulary size"):
        HashedCTRGenerator(vocabulary_sizes=[10, 0])
    with pytest.raises(ValueError, match="random_state"):
        HashedCTRGenerator(random_state=-1)
    g = HashedCTRGenerator(64, n_fields=3)
    with pytest.raises(ValueError, match="chunk_size"):
        next(g.iter_samples(10, 0))
    with pytest.raises(ValueError, match="stream"):
        g.sample(5, stream=-1)
    assert "n_fields=3" in repr(g)
    assert list(g.vocabulary_sizes_) == [10, 1000, 100_000]


# ---------------------------------------------------------------------------- writers
def _random_csr(rng: np.random.Generator, n: int, d: int) -> sp.csr_matrix:
    X = sp.random(n, d, density=0.2, format="csr", random_state=rng)
    X.data = rng.choice([1.0, 2.0, -3.0, 0.1, 1e-300, 12345.678901234567, -2.5e17, 1 / 3],
                        size=X.nnz)
    X.data[X.indptr[3]:X.indptr[4]] = 0.0               # an empty row
    X.eliminate_zeros()
    return X


def test_compiled_formatter_matches_its_python_twin() -> None:
    rng = np.random.default_rng(0)
    X = _random_csr(rng, 60, 30)
    y = rng.choice([0.0, 1.0, -1.0, 2.5, 1e20], size=60)
    for offset, sep in ((1, b" "), (0, b" "), (1, b" | ")):
        args = (X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data, y, offset, sep)
        assert format_rows(*args) == format_rows_python(*args)


@pytest.mark.parametrize("value, text", [
    (1.0, "1"), (-3.0, "-3"), (-0.0, "0"), (0.1, "0.1"), (1 / 3, "0.33333333333333331"),
    (1e-300, "1e-300"), (-2.5e17, "-2.5e+17"), (12345.678901234567, "12345.678901234567"),
    (999999999999999.0, "999999999999999"), (1e15, "1e+15")])
def test_numbers_are_written_exactly_and_short(value: float, text: str) -> None:
    args = (np.array([0, 1]), np.array([6]), np.array([value]), np.array([value]), 1, b" ")
    assert format_rows(*args) == f"{text} 7:{text}\n".encode() == format_rows_python(*args)
    assert float(text) == value


def test_svmlight_round_trip(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    X = _random_csr(rng, 200, 40)
    y = rng.choice([0.0, 1.0], size=200)
    path = tmp_path / "a.svm"
    n_bytes = write_svmlight(path, X, y)
    assert n_bytes == path.stat().st_size
    X2, y2 = load_svmlight(path, n_features=40)
    assert np.array_equal(y2, y)
    assert _same(X2, X)                            # every value exactly (17-digit fallback)
    write_svmlight(tmp_path / "z.svm", X, y, zero_based=True)
    X3, _ = load_svmlight(tmp_path / "z.svm", n_features=40, zero_based=True)
    assert _same(X3, X)
    assert path.read_bytes().split(b"\n")[3] == f"{y[3]:g} ".encode()   # the empty row


def test_generated_stream_written_in_chunks_reads_back(tmp_path: Path) -> None:
    g = HashedCTRGenerator(2**10, n_fields=6, random_state=0)
    path = tmp_path / "gen.svm"
    with open(path, "wb") as fh:
        for part in g.iter_samples(5000, 1300):
            write_svmlight(fh, part.X, part.y)
    whole = g.sample(5000)
    X, y = load_svmlight(path, n_features=2**10)
    assert _same(X, whole.X) and np.array_equal(y, whole.y)


def test_vw_lines() -> None:
    X = sp.csr_matrix(np.array([[0.0, 1.0, 0.0, 2.0], [0.0, 0.0, 0.0, 0.0], [0.5, 0, 0, 0]]))
    buf = io.BytesIO()
    write_vw(buf, X, [1, 0, -1])
    assert buf.getvalue() == b"1 | 2:1 4:2\n-1 | \n-1 | 1:0.5\n"
    with pytest.raises(ValueError, match="0/1 or -1/1"):
        write_vw(io.BytesIO(), X, [1, 2, 0])


def test_writers_refuse_what_they_cannot_write() -> None:
    X = sp.csr_matrix(np.array([[1.0, np.nan]]))
    with pytest.raises(ValueError, match="non-finite values"):
        write_svmlight(io.BytesIO(), X, [1])
    with pytest.raises(ValueError, match="non-finite labels"):
        write_svmlight(io.BytesIO(), np.eye(2), [1, np.inf])
    with pytest.raises(ValueError, match="one label per row"):
        write_svmlight(io.BytesIO(), np.eye(2), [1])
    dup = sp.csr_matrix((np.array([1.0, 1.0]), np.array([1, 1]), np.array([0, 2])), shape=(1, 3))
    with pytest.raises(ValueError, match="twice"):
        write_svmlight(io.BytesIO(), dup, [1])
    with pytest.raises(TypeError, match="binary file"):
        write_svmlight(42, np.eye(2), [0, 1])  # type: ignore[arg-type]
    # nothing the caller passed in is modified (unsorted input is written sorted)
    unsorted = sp.csr_matrix((np.array([2.0, 1.0]), np.array([2, 0]), np.array([0, 2])),
                             shape=(1, 3))
    before = unsorted.indices.copy()
    buf = io.BytesIO()
    write_svmlight(buf, unsorted, [1])
    assert buf.getvalue() == b"1 1:1 3:2\n" and np.array_equal(unsorted.indices, before)
