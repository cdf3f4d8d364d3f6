"""Data I/O: svmlight files (plain/compressed, whole/chunked), the built-in a9a, the boxes
generator's clairvoyant accuracy, and the CTR featurizer."""

from __future__ import annotations

import bz2
import gzip
import lzma
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt.datasets import (
    CTRFeaturizer,
    balancing_gamma,
    boxes_clairvoyant_accuracy,
    builtin_path,
    click_weights,
    criteo_featurizer,
    irwin_hall_cdf,
    iter_criteo,
    iter_svmlight_chunks,
    load_a9a,
    load_svmlight,
    make_boxes,
    read_criteo,
    scan_svmlight,
)
from sqnopt.datasets import _io

from tests.conftest import dataset_path

SVM_TEXT = b"""# a comment line
1 1:0.5 3:2 # trailing comment
-1 2:1.5
1 qid:3 1:1 4:-1

-1 1:1 3:0.25
"""
DENSE = np.array([[0.5, 0, 2, 0], [0, 1.5, 0, 0], [1, 0, 0, -1], [1, 0, 0.25, 0]])
LABELS = np.array([1.0, -1.0, 1.0, -1.0])


@pytest.fixture(params=["plain", "xz", "gz", "bz2"])
def svm_file(request: Any, tmp_path: Path) -> Path:
    opener = {"plain": open, "xz": lzma.open, "gz": gzip.open, "bz2": bz2.open}[request.param]
    suffix = "" if request.param == "plain" else "." + request.param
    p = tmp_path / f"small.svm{suffix}"
    with opener(p, "wb") as fh:
        fh.write(SVM_TEXT)
    return p


def test_load_svmlight_plain_and_compressed(svm_file: Path) -> None:
    X, y = load_svmlight(svm_file)
    assert sp.issparse(X) and X.shape == (4, 4)
    np.testing.assert_array_equal(X.toarray(), DENSE)
    np.testing.assert_array_equal(y, LABELS)
    X6, _ = load_svmlight(svm_file, n_features=6)
    assert X6.shape == (4, 6)


def test_numpy_parser_matches_and_handles_compressed(svm_file: Path) -> None:
    with _io.open_binary(svm_file) as fh:
        X, y = _io._parse_lines(fh, n_features=None, zero_based="auto", source="t")
    np.testing.assert_array_equal(X.toarray(), DENSE)
    np.testing.assert_array_equal(y, LABELS)


def test_numpy_parser_agrees_with_scikit_learn_on_a9a() -> None:
    pytest.importorskip("sklearn")
    path = builtin_path("a9a", "test")
    X1, y1 = load_svmlight(path, n_features=123)
    with _io.open_binary(path) as fh:
        X2, y2 = _io._parse_lines(fh, n_features=123, zero_based="auto", source="a9a.t")
    assert (X1 != X2).nnz == 0 and np.array_equal(y1, y2)


def test_load_svmlight_without_scikit_learn(monkeypatch: pytest.MonkeyPatch, svm_file: Path) -> None:
    monkeypatch.setattr(_io, "_engine", lambda: None)
    X, y = load_svmlight(svm_file)
    np.testing.assert_array_equal(X.toarray(), DENSE)
    chunks = list(iter_svmlight_chunks(svm_file, 3, n_features=4))
    assert [c[0].shape[0] for c in chunks] == [3, 1]


@pytest.mark.parametrize("chunk", [1, 2, 3, 10])
def test_chunks_concatenate_to_the_whole_file(svm_file: Path, chunk: int) -> None:
    parts = list(iter_svmlight_chunks(svm_file, chunk))
    assert all(p[0].shape[1] == 4 for p in parts)
    np.testing.assert_array_equal(sp.vstack([p[0] for p in parts]).toarray(), DENSE)
    np.testing.assert_array_equal(np.concatenate([p[1] for p in parts]), LABELS)
    assert scan_svmlight(svm_file) == (4, 4, pytest.approx(np.array([-1.0, 1.0])))  # type: ignore[comparison-overlap]


def test_svmlight_errors_name_the_file_and_problem(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_svmlight(tmp_path / "missing.svm")
    bad = tmp_path / "bad.svm"
    bad.write_bytes(b"1 1:0.5\nhello 2:1\n")
    with pytest.raises(ValueError, match="bad.svm"):
        load_svmlight(bad)
    with _io.open_binary(bad) as fh, pytest.raises(ValueError, match="line 2"):
        _io._parse_lines(fh, n_features=None, zero_based="auto", source="bad.svm")
    bad.write_bytes(b"1 1:0.5 oops\n")
    with _io.open_binary(bad) as fh, pytest.raises(ValueError, match="index:value"):
        _io._parse_lines(fh, n_features=None, zero_based="auto", source="bad.svm")
    with pytest.raises(ValueError, match="chunk_size"):
        list(iter_svmlight_chunks(bad, 0))


def test_builtin_a9a_matches_the_manifest() -> None:
    X, y = load_a9a("train")
    assert X.shape == (32561, 123) and X.nnz == 451592
    assert int(np.sum(y == 1)) == 7841 and int(np.sum(y == -1)) == 24720
    Xt, yt = load_a9a("test")
    assert Xt.shape == (16281, 123) and Xt.nnz == 225731 and int(np.sum(yt == 1)) == 3846
    assert set(np.unique(X.data)) == {1.0}
    with pytest.raises(ValueError, match="unknown built-in"):
        builtin_path("mnist")
    readme = builtin_path("a9a").parent / "README.md"
    assert "CC BY 4.0" in readme.read_text()


# ---------------------------------------------------------------- boxes and Irwin-Hall
def test_irwin_hall_cdf_known_values() -> None:
    assert irwin_hall_cdf(0.3, 1) == pytest.approx(0.3)
    assert irwin_hall_cdf(0.5, 2) == pytest.approx(0.125)          # triangle: x^2/2
    assert irwin_hall_cdf(1.5, 2) == pytest.approx(1 - 0.125)
    assert irwin_hall_cdf(1.5, 3) == pytest.approx(0.5)            # symmetric about n/2
    assert irwin_hall_cdf(-1, 4) == 0.0 and irwin_hall_cdf(5, 4) == 1.0
    # exact arithmetic where floating point cancels badly, and the CLT branch
    assert irwin_hall_cdf(50, 100) == pytest.approx(0.5, abs=1e-12)
    assert irwin_hall_cdf(1000, 2000) == pytest.approx(0.5)


def test_boxes_clairvoyant_accuracy_is_the_papers_98_percent_and_matches_simulation() -> None:
    acc = boxes_clairvoyant_accuracy(4)
    assert acc == pytest.approx(0.982933, abs=1e-6)               # RES paper: "98%"
    X, y = make_boxes(200_000, 4, random_state=0)
    simulated = float(np.mean(np.sign(X.sum(axis=1)) == y))
    assert simulated == pytest.approx(acc, abs=3e-3)
    assert boxes_clairvoyant_accuracy(1) == pytest.approx(0.8)
    with pytest.raises(ValueError):
        boxes_clairvoyant_accuracy(0)


# ---------------------------------------------------------------- CTR featurizer
def _table() -> dict[str, list[Any]]:
    return {
        "age": [21, None, 0, 3, 1000],
        "gender": ["m", "f", "", "m", "x"],
        "ad": ["a1", "a2", "a1", "a3", "a1"],
        "query": ["cheap shoes", "", "shoes shoes", "red car", None],
    }


def test_ctr_featurizer_one_hot_layout_and_missing_values() -> None:
    f = CTRFeaturizer(numeric=["age"], categorical=["gender"], hashed=["ad"], text=["query"],
                      n_bags=16, numeric_bins=6)
    X = f.fit_transform(_table())
    assert X.shape == (5, 6 + 4 + 16 + 16) == (5, f.n_features)
    assert set(X.data) == {1.0}
    A = X.toarray()
    age = A[:, :6]
    # 21 -> floor(log2 21) + 1 = 5; missing -> none; 0 -> bin 0; 3 -> 2; 1000 -> capped at 5
    assert [list(np.flatnonzero(r)) for r in age] == [[5], [], [0], [2], [5]]
    gender = A[:, 6:10]  # vocabulary {f, m, x} + other; "" is missing
    assert f.vocabularies_ == {"gender": {"f": 0, "m": 1, "x": 2}}
    assert [list(np.flatnonzero(r)) for r in gender] == [[1], [0], [], [1], [2]]
    ad = A[:, 10:26]
    assert np.array_equal(ad[0], ad[2]) and np.array_equal(ad[0], ad[4]) and ad.sum() == 5
    query = A[:, 26:]
    assert query[2].sum() == 1                       # "shoes shoes": one bag, value 1
    assert query[1].sum() == 0 and query[4].sum() == 0
    assert len(f.feature_names()) == f.n_features
    # the same word lands in the same bag in every field (paper 003 Sec. 5.1)
    assert f._bag("shoes") == f._bag("shoes") and 0 <= f._bag("shoes") < 16


def test_ctr_featurizer_unseen_and_rare_values_go_to_other() -> None:
    f = CTRFeaturizer(categorical=["gender"], min_count=2).fit(_table())
    assert f.vocabularies_ == {"gender": {"m": 0}}
    X = f.transform({"gender": ["m", "f", "zzz", None]}).toarray()
    assert X.tolist() == [[1, 0], [0, 1], [0, 1], [0, 0]]
    with pytest.raises(RuntimeError, match="fit"):
        CTRFeaturizer(categorical=["gender"]).transform(_table())
    with pytest.raises(ValueError, match="non-number"):
        CTRFeaturizer(numeric=["gender"]).transform(_table())
    with pytest.raises(KeyError, match="nope"):
        CTRFeaturizer(hashed=["nope"]).transform(_table())


def test_ctr_featurizer_accepts_a_dataframe() -> None:
    pd = pytest.importorskip("pandas")
    f = CTRFeaturizer(numeric=["age"], hashed=["ad"], n_bags=8)
    a = f.transform(_table())
    b = f.transform(pd.DataFrame(_table()))
    assert (a != b).nnz == 0


def test_click_weights_and_gamma() -> None:
    y = np.array([1, 0, 0, 0, 1, 0, 0, 0, 0, 0])
    assert balancing_gamma(y) == 4.0
    w = click_weights(y)
    assert w[y == 1].sum() == w[y == 0].sum()        # both classes weigh the same
    np.testing.assert_array_equal(click_weights(y, 18.2), np.where(y == 1, 18.2, 1.0))
    with pytest.raises(ValueError):
        balancing_gamma(np.zeros(4))


def test_criteo_reader_and_featurizer_on_the_real_sample() -> None:
    path = dataset_path("criteo_dac_train_head10k.tsv.xz")
    table, y = read_criteo(path, n_rows=2000)
    assert len(y) == 2000 and set(np.unique(y)) <= {0.0, 1.0} and len(table) == 39
    f = criteo_featurizer()
    X = f.transform(table)
    assert X.shape == (2000, 13 * 24 + 26 * 2**13)
    nnz = np.diff(X.indptr)
    assert nnz.max() <= 39 and 25 < nnz.mean() < 39   # one indicator per non-missing field
    chunks = list(iter_criteo(path, 700, n_rows=2000))
    assert [len(c[1]) for c in chunks] == [700, 700, 600]
    assert np.array_equal(np.concatenate([c[1] for c in chunks]), y)


def test_criteo_reader_rejects_other_files(tmp_path: Path) -> None:
    p = tmp_path / "x.tsv"
    p.write_text("1\t2\t3\n")
    with pytest.raises(ValueError, match="tab-separated fields"):
        read_criteo(p)
