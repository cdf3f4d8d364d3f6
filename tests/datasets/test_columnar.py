"""CSV and Parquet streams: explicit column typing, the encodings of CTRFeaturizer, pyarrow's
reader against Python's (the same chunks to the last bit, the same errors), Parquet's sparse
and dense layouts."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt.datasets import CTRFeaturizer, _columnar, stream_csv, stream_parquet

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


def _pass(stream: Any) -> list[tuple[Any, Any]]:
    return [(X, y) for X, y in stream]


def _same(a: list[tuple[Any, Any]], b: list[tuple[Any, Any]]) -> bool:
    def eq(u: Any, v: Any) -> bool:
        if sp.issparse(u) != sp.issparse(v):
            return False
        if sp.issparse(u):
            return (u.shape == v.shape and np.array_equal(u.indptr, v.indptr)
                    and np.array_equal(u.indices, v.indices)
                    and np.array_equal(u.data.view(np.uint8), v.data.view(np.uint8)))
        return u.shape == v.shape and np.array_equal(np.asarray(u).view(np.uint8),
                                                     np.asarray(v).view(np.uint8))
    return len(a) == len(b) and all(eq(Xa, Xb) and np.array_equal(ya, yb)
                                    for (Xa, ya), (Xb, yb) in zip(a, b))


def _table(n: int, seed: int = 0) -> dict[str, list[str]]:
    rng = np.random.default_rng(seed)
    numbers = [lambda x: repr(x), lambda x: f"{x:.3f}", lambda x: f"{x:e}", lambda x: "0",
               lambda x: f"{x:.17g}"]
    return {
        "label": [str(int(v)) for v in rng.integers(0, 2, n)],
        "age": [numbers[i % 5](float(rng.normal() * 40)) for i in range(n)],
        "city": [rng.choice(["paris", "lyon", "", "nice", "a,b", "\"q\""]) for _ in range(n)],
        "score": [numbers[(i + 2) % 5](float(rng.normal())) for i in range(n)],
        "ad": [f"ad{int(rng.zipf(1.5)) % 50}" if rng.random() > 0.1 else "" for _ in range(n)],
    }


def _write_csv(path: Path, table: dict[str, list[str]], eol: str = "\n",
               compress: bool = False) -> Path:
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator=eol)
    names = list(table)
    w.writerow(names)
    for i in range(len(table[names[0]])):
        w.writerow([table[c][i] for c in names])
    data = buf.getvalue().encode()
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


@pytest.fixture(params=["pyarrow", "python"])
def engine(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_numeric_csv_streams_dense_chunks(tmp_path: Path, engine: str) -> None:
    t = _table(300)
    del t["city"], t["ad"]
    path = _write_csv(tmp_path / "n.csv", t)
    s = stream_csv(path, chunk_size=64, engine=engine)
    assert not s.sparse and s.n_features == 2 and list(s.classes) == [0.0, 1.0]
    got = _pass(s)
    assert [X.shape[0] for X, _ in got] == [64] * 4 + [44]
    X = np.vstack([c[0] for c in got])
    want = np.column_stack([[float(v) for v in t["age"]], [float(v) for v in t["score"]]])
    assert np.array_equal(X.view(np.uint64), want.view(np.uint64))  # float()'s bits
    assert s.n_rows == 300


@pytest.mark.parametrize("encoding", ["hash", "onehot"])
def test_categorical_columns_are_ctr_featurizer_blocks(tmp_path: Path, engine: str,
                                                       encoding: str) -> None:
    t = _table(500, seed=1)
    path = _write_csv(tmp_path / "c.csv", t, eol="\r\n")
    s = stream_csv(path, categorical=["city", "ad"], encoding=encoding, n_bags=32, seed=5,
                   chunk_size=128, engine=engine)
    got = _pass(s)
    X = sp.vstack([c[0] for c in got]).tocsr()
    cats = ["city", "ad"]
    f = (CTRFeaturizer(hashed=cats, n_bags=32, seed=5) if encoding == "hash"
         else CTRFeaturizer(categorical=cats).fit(t))
    num = sp.csr_matrix(np.column_stack([[float(v) for v in t[c]] for c in ("age", "score")]))
    want = sp.hstack([num, f.transform(t)], format="csr")
    assert X.shape == want.shape == (500, s.n_features)
    assert (X != want).nnz == 0
    if encoding == "onehot":
        assert s.vocabularies == f.vocabularies_  # type: ignore[attr-defined]


def test_engines_agree_to_the_bit(tmp_path: Path) -> None:
    t = _table(700, seed=2)
    for compress in (False, True):
        path = _write_csv(tmp_path / ("e.csv.gz" if compress else "e.csv"), t,
                          compress=compress)
        a = _pass(stream_csv(path, categorical=["city", "ad"], chunk_size=100,
                             engine="pyarrow", block_size=1 << 12))
        b = _pass(stream_csv(path, categorical=["city", "ad"], chunk_size=100,
                             engine="python"))
        assert _same(a, b) and len(a) == 7


BAD_VALUES = [("oops", "holds 'oops'"), ("", "is empty"), ("nan", "holds the missing marker 'nan'"),
              ("inf", "holds 'inf'"), ("1_0x", "holds '1_0x'")]


@pytest.mark.parametrize("value,what", BAD_VALUES)
@pytest.mark.parametrize("row", [0, 150])
def test_a_bad_number_names_line_column_value_and_fix(tmp_path: Path, engine: str, value: str,
                                                      what: str, row: int) -> None:
    t = _table(200, seed=3)
    t["score"][row] = value
    path = _write_csv(tmp_path / "b.csv", t)
    s = stream_csv(path, categorical=["city", "ad"], chunk_size=64, engine=engine)
    got = 0
    with pytest.raises(ValueError) as info:
        for X, _ in s:
            got += X.shape[0]
    msg = str(info.value)
    assert msg.startswith(f"{path}: line {row + 2}: the numeric column 'score' {what}")
    assert "categorical=['score']" in msg
    assert ("fill or drop" if value in ("", "nan") else "not a finite number: fix the value") in msg
    assert got == 64 * (row // 64)  # the chunks before it arrived


def test_python_forms_pyarrow_does_not_read_are_read(tmp_path: Path) -> None:
    """'1_000' is a number for Python's float(): the C++ reader hands the pass over."""
    t = _table(200, seed=4)
    t["score"][130] = "1_000"
    path = _write_csv(tmp_path / "u.csv", t)
    a = _pass(stream_csv(path, categorical=["city", "ad"], chunk_size=64, engine="pyarrow"))
    b = _pass(stream_csv(path, categorical=["city", "ad"], chunk_size=64, engine="python"))
    assert _same(a, b)
    X = sp.vstack([c[0] for c in a]).tocsr()
    assert X[130, 1] == 1000.0


def test_csv_file_errors(tmp_path: Path, engine: str) -> None:
    p = tmp_path / "f.csv"
    p.write_text("label,a,b\n1,2,3\n1,2\n")
    with pytest.raises(ValueError, match=r"line 3 has 2 fields, the header 3"):
        _pass(stream_csv(p, engine=engine, classes=[1]))
    p.write_text("label,a\n1,2\n ,3\n")
    with pytest.raises(ValueError, match=r"line 3: the label column 'label' is empty"):
        stream_csv(p, engine=engine).scan()
    p.write_text("label,a\n1,2\nx,3\n")
    with pytest.raises(ValueError, match=r"line 3: the label 'x' is not a finite number"):
        _pass(stream_csv(p, engine=engine, classes=[0, 1]))
    s = stream_csv(p, engine=engine)  # mixed labels: strings
    assert list(s.classes) == ["1", "x"] and list(_pass(s)[0][1]) == ["1", "x"]
    p.write_text("")
    with pytest.raises(ValueError, match="the file is empty"):
        stream_csv(p, engine=engine)
    p.write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="no label column"):
        stream_csv(p, engine=engine)
    p.write_text("label,a,a\n1,2,3\n")
    with pytest.raises(ValueError, match="twice"):
        stream_csv(p, engine=engine)
    p.write_text("label,a\n1,2\n")
    with pytest.raises(ValueError, match=r"categorical columns \['zz'\] are not in the header"):
        stream_csv(p, categorical=["zz"])
    with pytest.raises(TypeError, match="list of column names"):
        stream_csv(p, categorical="a")  # type: ignore[arg-type]
    p.write_text("label,a\n")
    with pytest.raises(ValueError, match="no data rows"):
        stream_csv(p, engine=engine).scan()


def test_onehot_vocabulary_carries_to_a_test_file(tmp_path: Path) -> None:
    train = _write_csv(tmp_path / "train.csv", {"label": ["1", "0", "1"], "c": ["a", "b", "a"]})
    test = _write_csv(tmp_path / "test.csv", {"label": ["0", "1"], "c": ["z", "b"]})
    s = stream_csv(train, categorical=["c"], encoding="onehot")
    assert s.n_features == 3
    t = stream_csv(test, categorical=["c"], encoding="onehot", vocabularies=s.vocabularies,
                   classes=s.classes)
    X = _pass(t)[0][0].toarray()
    assert X.tolist() == [[0, 0, 1], [0, 1, 0]]  # 'z' is other, 'b' its column
    with pytest.raises(ValueError, match="for encoding='onehot'"):
        stream_csv(test, categorical=["c"], vocabularies={"c": ["a"]})


def test_csv_cache(tmp_path: Path) -> None:
    path = _write_csv(tmp_path / "c.csv", _table(300, seed=6))
    s = stream_csv(path, categorical=["city", "ad"], chunk_size=100, cache=True)
    first = _pass(s)
    assert s.cache_path is not None and s.cache_path.exists()
    s._read = None  # type: ignore[assignment,method-assign]  # a second pass must not parse
    assert _same(_pass(s), first)


def test_without_pyarrow(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_columnar, "_pyarrow", lambda: None)
    path = _write_csv(tmp_path / "c.csv", _table(50))
    assert len(_pass(stream_csv(path, categorical=["city", "ad"]))) == 1  # Python's reader
    with pytest.raises(ImportError, match=r"needs pyarrow.*sqnopt\[parquet\]"):
        stream_csv(path, engine="pyarrow")
    with pytest.raises(ImportError, match=r"stream_parquet needs pyarrow.*sqnopt\[parquet\]"):
        stream_parquet(path)


# ---------------------------------------------------------------------------- Parquet
def _sparse_parquet(path: Path, X: Any, y: Any, values: bool = True,
                    row_group: int = 64) -> Path:
    X = sp.csr_matrix(X)
    rows = [X.indices[X.indptr[i]:X.indptr[i + 1]].tolist() for i in range(X.shape[0])]
    cols: dict[str, Any] = {"label": pa.array(y),
                            "indices": pa.array(rows, type=pa.list_(pa.int32()))}
    if values:
        cols["values"] = pa.array([X.data[X.indptr[i]:X.indptr[i + 1]].tolist()
                                   for i in range(X.shape[0])], type=pa.list_(pa.float32()))
    pq.write_table(pa.table(cols), path, row_group_size=row_group)
    return path


def test_parquet_sparse_rows(tmp_path: Path) -> None:
    X = sp.random(300, 40, density=0.1, format="csr", random_state=0, dtype=np.float32)
    y = np.arange(300) % 3
    s = stream_parquet(_sparse_parquet(tmp_path / "s.parquet", X, y), chunk_size=100)
    assert s.sparse and s.n_rows == 300 and list(s.classes) == [0, 1, 2]
    assert s.n_features == int(X.indices.max()) + 1
    got = _pass(s)
    assert [c[0].shape[0] for c in got] == [100] * 3
    whole = sp.vstack([c[0] for c in got]).tocsr()
    assert (whole != X[:, :s.n_features].astype(np.float64)).nnz == 0
    assert np.array_equal(np.concatenate([c[1] for c in got]), y)
    ones = stream_parquet(_sparse_parquet(tmp_path / "o.parquet", X, y, values=False),
                          n_features=40, chunk_size=128)
    Xo = sp.vstack([c[0] for c in _pass(ones)])
    assert Xo.shape == (300, 40) and set(Xo.data) == {1.0}


def test_parquet_dense_columns(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=90), rng.integers(0, 5, 90)
    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"x": a, "target": np.where(a > 0, "pos", "neg"), "k": b}), path,
                   row_group_size=40)
    s = stream_parquet(path, chunk_size=50, dtype=np.float32)
    assert not s.sparse and s.n_features == 2 and list(s.classes) == ["neg", "pos"]
    got = _pass(s)
    X = np.vstack([c[0] for c in got])
    assert X.dtype == np.float32 and np.array_equal(X, np.column_stack([a, b]).astype(np.float32))
    assert list(np.concatenate([c[1] for c in got])[:3]) == list(np.where(a > 0, "pos",
                                                                            "neg")[:3])


def test_parquet_regression_targets(tmp_path: Path) -> None:
    """``label_kind="regression"``: real-valued targets, read as float64, no classes found;
    an SQNRegressor fits the stream, and without it the fit names the fix."""
    from sqnopt import SQNRegressor
    from sqnopt.datasets import stream_parquet

    rng = np.random.default_rng(2)
    X = rng.normal(size=(3000, 4))
    y = X @ np.array([1.0, -2.0, 0.5, 0.0]) + 0.1 * rng.normal(size=3000)
    path = tmp_path / "reg.parquet"
    pq.write_table(pa.table({"y": y, **{f"x{j}": X[:, j] for j in range(4)}}), path)
    stream = stream_parquet(path, label_kind="regression", chunk_size=1000)
    assert stream.regression and stream.classes.size == 0
    chunks = list(stream)
    np.testing.assert_array_equal(np.concatenate([c[1] for c in chunks]), y)
    est = SQNRegressor(random_state=0).fit(stream)
    np.testing.assert_allclose(est.coef_, [1.0, -2.0, 0.5, 0.0], atol=0.05)
    with pytest.raises(ValueError, match="label_kind='regression'"):
        SQNRegressor(random_state=0).fit(stream_parquet(path, chunk_size=1000))


def test_parquet_errors(tmp_path: Path) -> None:
    p = tmp_path / "e.parquet"
    pq.write_table(pa.table({"label": [1, None, 0], "x": [1.0, 2.0, 3.0]}), p)
    with pytest.raises(ValueError, match="row 1: the label column 'label' is null"):
        _pass(stream_parquet(p))
    pq.write_table(pa.table({"label": [1, 0, 0], "x": [1.0, None, 3.0]}), p)
    with pytest.raises(ValueError, match="row 1: the numeric column 'x' is null"):
        _pass(stream_parquet(p))
    pq.write_table(pa.table({"label": [1, 0, 0], "x": [1.0, float("inf"), 3.0]}), p)
    with pytest.raises(ValueError, match="row 1: the numeric column 'x' holds inf"):
        _pass(stream_parquet(p))
    pq.write_table(pa.table({"label": [1, 0], "city": ["a", "b"]}), p)
    with pytest.raises(ValueError, match="are not numeric"):
        stream_parquet(p)
    lists = pa.list_(pa.int32())
    pq.write_table(pa.table({"label": [1, 0], "indices": pa.array([[0, 3], [2, 2]],
                                                                   type=lists)}), p)
    with pytest.raises(ValueError, match=r"row 1: the feature indices are not increasing "
                                         r"\(2 then 2\)"):
        _pass(stream_parquet(p))
    pq.write_table(pa.table({"label": [1, 0], "indices": pa.array([[0, 3], [9]], type=lists)}),
                   p)
    with pytest.raises(ValueError, match=r"row 1: the feature index 9 is outside \[0, 5\)"):
        _pass(stream_parquet(p, n_features=5))
    pq.write_table(pa.table({"label": [1, 0], "indices": pa.array([[0, 3], [1]], type=lists),
                             "values": pa.array([[1.0, 2.0], [1.0, 5.0]])}), p)
    with pytest.raises(ValueError, match="row 1: the values list does not match"):
        _pass(stream_parquet(p))
    p.write_bytes(b"not parquet")
    with pytest.raises(ValueError, match="not a Parquet file"):
        stream_parquet(p)


def test_compiled_hash_bags_are_ctr_featurizers(tmp_path: Path) -> None:
    import random
    import zlib

    from sqnopt.datasets._hashing import hash_bags

    rng = random.Random(0)
    alphabet = "ab c\t\x1c\xa0é€12"
    values = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6)))
              for _ in range(3000)] + ["", "   ", "\x1f", "x"]
    raw = [v.encode() for v in values]
    data = np.frombuffer(b"".join(raw), dtype=np.uint8)
    offsets = np.concatenate([[0], np.cumsum([len(r) for r in raw])]).astype(np.int64)
    out = np.empty(len(values), dtype=np.int64)
    hash_bags(data, offsets, zlib.crc32(b"7\x1f"), 97, out)
    f = CTRFeaturizer(hashed=["c"], n_bags=97, seed=7)
    for v, code in zip(values, out):
        if any(ord(ch) >= 128 for ch in v):
            assert code == -2          # left to Python (Unicode whitespace)
        elif not v.strip():
            assert code == -1          # missing
        else:
            assert code == f._bag(v)
    with pytest.raises(ValueError, match="offsets"):
        hash_bags(data, offsets[::-1].copy(), 0, 97, out)
    # through a stream: a Unicode-blank value is missing, as in Python's reader
    table = {"label": ["1", "0", "1"], "c": ["\u2003", "é", "x"]}
    path = _write_csv(tmp_path / "u.csv", table)
    a = _pass(stream_csv(path, categorical=["c"], n_bags=16, engine="pyarrow"))
    b = _pass(stream_csv(path, categorical=["c"], n_bags=16, engine="python"))
    assert _same(a, b) and a[0][0][0].nnz == 0


@pytest.mark.parametrize("encoding", ["onehot", "hash"])
def test_missing_markers_are_missing_as_when_the_table_is_read_whole(
        tmp_path: Path, engine: str, encoding: str) -> None:
    """A streamed fit is evaluated on the table read whole (``sqnopt train --chunk-size``): a
    missing marker in a categorical column must set no indicator in both. The stream made
    ``NA`` a category of its own (an indicator the whole-table reader never sets)."""
    from sqnopt.datasets import load_table

    cities = ["paris", "rome", "NA", "oslo", " n/a", "null", "", "Paris"]
    lines = ["x,city,label"] + [f"{i % 7},{cities[i % len(cities)]},{i % 2}" for i in range(80)]
    path = tmp_path / "na.csv"
    path.write_text("\n".join(lines) + "\n")
    X, y, _ = load_table(path, categorical=["city"], encoding=encoding)
    parts = _pass(stream_csv(path, categorical=["city"], encoding=encoding, chunk_size=30,
                             engine=engine))
    Xs = sp.vstack([p[0] for p in parts]).toarray()
    ys = np.concatenate([p[1] for p in parts])
    Xw = X.toarray() if sp.issparse(X) else np.asarray(X)
    assert Xs.shape == Xw.shape and np.array_equal(Xs, Xw) and np.array_equal(ys, y)
    missing = [i for i in range(80) if cities[i % len(cities)].strip().lower()
               in ("na", "n/a", "null", "")]
    assert np.all(Xs[missing, 1:] == 0)                 # no indicator for a missing value


def test_a_missing_marker_label_is_refused_as_when_the_table_is_read_whole(
        tmp_path: Path, engine: str) -> None:
    path = tmp_path / "l.csv"
    path.write_text("x,label\n" + "".join(f"{i},{'yes' if i % 2 else 'no'}\n" for i in range(30))
                    + "5,NA\n")
    with pytest.raises(ValueError, match=r"line 32: the label column 'label' holds the missing "
                                         r"marker 'NA'"):
        _pass(stream_csv(path, chunk_size=10, engine=engine))
