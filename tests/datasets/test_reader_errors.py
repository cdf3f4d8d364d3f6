"""The svmlight and Criteo readers: memory bounded by the data, and every bad file is one
``ValueError`` naming the file, the line and the problem -- with the compiled parser and with
its pure-Python twin alike.

Before: an index of 2,000,000,000 made ``sqnopt train`` allocate 14.6 GB (a model that wide);
``99999999999999999999`` raised ``OverflowError``, a corrupt ``.xz`` ``LZMAError``, both as
tracebacks; an empty file's error did not name the file.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt.datasets import (
    iter_criteo,
    iter_svmlight_chunks,
    load_svmlight,
    read_criteo,
    scan_svmlight,
)
from sqnopt.datasets import _io

GOOD = b"# header comment\n1 1:0.5 3:2\n\n-1 2:1.5 # comment\n1 qid:7 1:1 4:-1\n"

# name -> (file content, expected message: the line number and the problem)
BAD: dict[str, tuple[bytes, str]] = {
    "huge_index": (b"1 1:1 3:2\n-1 2000000000:1\n", r"line 2: the feature index 2000000000 "
                   r"makes the data 2000000000 features wide, far beyond its 3 stored values"),
    "overflow_index": (b"1 1:1\n-1 99999999999999999999:1\n",
                       r"line 2: the feature index '99999999999999999999' is too large"),
    "negative_index": (b"1 1:1\n\n-1 -4:1\n", r"line 3: the feature index -4 is negative"),
    "float_index": (b"1 1.5:1\n", r"line 1: the feature index '1.5' is not an integer"),
    "unsorted": (b"1 1:1\n-1 3:1 2:1\n", r"line 2: the feature indices are not increasing"),
    "duplicate": (b"1 2:1 2:1\n", r"line 1: the feature indices are not increasing"),
    "no_colon": (b"1 1:1\n1 1:1 oops\n", r"line 2: 'oops' is not 'index:value'"),
    "bad_label": (b"# c\nyes 1:1\n", r"line 2: the label 'yes' is not a number"),
    "nan_label": (b"1 1:1\nnan 1:2\n", r"line 2: the label 'nan' is not finite"),
    "bad_value": (b"1 1:abc\n", r"line 1: the value 'abc' is not a number"),
    "inf_value": (b"1 1:1\n1 2:inf\n", r"line 2: the value 'inf' is not finite"),
    "bad_qid": (b"1 qid 1:1\n", r"line 1: 'qid' is not 'qid:value'"),
    "empty": (b"", r"no samples found \(an empty file"),
    "only_comments": (b"# nothing\n\n   \n", r"no samples found"),
}


def _write(tmp_path: Path, name: str, content: bytes, compress: str = "") -> Path:
    opener: Callable[..., object] = {"": open, "xz": lzma.open, "gz": gzip.open,
                                     "bz2": bz2.open}[compress]
    path = tmp_path / (name + (f".{compress}" if compress else ".svm"))
    with opener(path, "wb") as fh:  # type: ignore[attr-defined]
        fh.write(content)  # type: ignore[attr-defined]
    return path


@pytest.fixture(params=["compiled", "python"])
def parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "python":
        monkeypatch.setattr(_io, "_engine", lambda: None)
    return str(request.param)


@pytest.mark.parametrize("case", list(BAD))
def test_every_bad_file_is_one_error_naming_file_and_line(tmp_path: Path, parser: str,
                                                          case: str) -> None:
    content, match = BAD[case]
    path = _write(tmp_path, case, content)
    for read in (lambda: load_svmlight(path), lambda: scan_svmlight(path),
                 lambda: list(iter_svmlight_chunks(path, 1))):
        with pytest.raises(ValueError, match=match) as info:
            read()
        assert str(info.value).startswith(str(path)) and "\n" not in str(info.value)


@pytest.mark.parametrize("compress", ["xz", "gz", "bz2"])
@pytest.mark.parametrize("damage", ["truncated", "corrupt"])
def test_damaged_compressed_files(tmp_path: Path, parser: str, compress: str, damage: str) -> None:
    content = b"".join(f"{1 if i % 2 else -1} 1:{i} 2:{i * 2} 7:1\n".encode() for i in range(3000))
    path = _write(tmp_path, "data", content, compress)
    raw = bytearray(path.read_bytes())
    if damage == "truncated":
        raw = raw[:len(raw) // 2]
    else:
        for k in range(len(raw) // 2, len(raw) // 2 + 8):
            raw[k] ^= 0x5A
    path.write_bytes(bytes(raw))
    for read in (lambda: load_svmlight(path), lambda: scan_svmlight(path),
                 lambda: list(iter_svmlight_chunks(path, 500, n_features=7))):
        with pytest.raises(ValueError, match=r"line \d+: (cannot read the file: corrupt or "
                                             r"truncated data|.*)") as info:
            read()
        assert str(info.value).startswith(str(path)) and "\n" not in str(info.value)


def test_width_is_bounded_by_the_data_unless_asked_for(tmp_path: Path, parser: str) -> None:
    path = _write(tmp_path, "wide", b"1 1:1\n-1 2000000:1\n")
    with pytest.raises(ValueError, match="far beyond"):
        load_svmlight(path)
    X, _ = load_svmlight(path, n_features=2_000_000)  # asked for: a CSR, nothing dense
    assert sp.issparse(X) and X.shape == (2, 2_000_000) and X.nnz == 2
    ok = _write(tmp_path, "ok", b"1 1:1\n-1 1000000:1\n")  # below the 2**20 floor
    assert load_svmlight(ok)[0].shape == (2, 1_000_000)
    with pytest.raises(ValueError, match=r"line 2: the feature index 1000000 is beyond "
                                         r"n_features=10"):
        load_svmlight(ok, n_features=10)
    with pytest.raises(ValueError, match="n_features must be an integer"):
        load_svmlight(ok, n_features=0)


def test_line_numbers_in_chunks_are_file_line_numbers(tmp_path: Path, parser: str) -> None:
    lines = [f"1 1:{i}\n".encode() for i in range(20)]
    lines[13] = b"1 1:x\n"
    path = _write(tmp_path, "chunks", b"".join(lines))
    with pytest.raises(ValueError, match=r"line 14: the value 'x'"):
        list(iter_svmlight_chunks(path, 5, n_features=1))
    lines[13] = b"1 0:1\n"  # index 0 in a one-based file
    path = _write(tmp_path, "chunks", b"".join(lines))
    with pytest.raises(ValueError, match=r"line 14: index 0 in a one-based"):
        list(iter_svmlight_chunks(path, 5, n_features=1))


def test_good_file_reads_the_same_everywhere(tmp_path: Path, parser: str) -> None:
    path = _write(tmp_path, "good", GOOD)
    X, y = load_svmlight(path)
    dense = np.array([[0.5, 0, 2, 0], [0, 1.5, 0, 0], [1, 0, 0, -1]])
    np.testing.assert_array_equal(X.toarray(), dense)
    np.testing.assert_array_equal(y, [1, -1, 1])
    assert scan_svmlight(path)[:2] == (3, 4)
    parts = list(iter_svmlight_chunks(path, 2))
    np.testing.assert_array_equal(sp.vstack([p[0] for p in parts]).toarray(), dense)
    X32, _ = load_svmlight(path, dtype=np.float32)
    assert X32.dtype == np.float32
    big = _write(tmp_path, "big", b"1 1:1e300\n")
    with pytest.raises(ValueError, match=r"line 1: the value 1e\+300 is not finite as float32"):
        load_svmlight(big, dtype=np.float32)


CRITEO_ROW = "\t".join(["0"] + ["1"] * 13 + ["a"] * 26)


@pytest.mark.parametrize("content,match", [
    ("1\t2\t3\n", r"line 1 has 3 tab-separated fields"),
    (CRITEO_ROW + "\n" + CRITEO_ROW.replace("0", "7", 1) + "\n", r"line 2: label '7' is not 0"),
    (CRITEO_ROW + "\n" + "\t".join(["1", "x"] + ["1"] * 12 + ["a"] * 26) + "\n",
     r"line 2: the count I1 = 'x' is not a finite number"),
    (CRITEO_ROW.replace("\t1\t", "\tinf\t", 1) + "\n", r"line 1: the count I1 = 'inf'"),
    ("", r"no rows found"),
])
def test_criteo_errors_name_the_line(tmp_path: Path, content: str, match: str) -> None:
    path = tmp_path / "c.tsv"
    path.write_text(content)
    with pytest.raises(ValueError, match=match) as info:
        read_criteo(path)
    assert str(info.value).startswith(str(path))


def test_criteo_corrupt_gzip(tmp_path: Path) -> None:
    path = tmp_path / "c.tsv.gz"
    with gzip.open(path, "wb") as fh:
        fh.write(((CRITEO_ROW + "\n") * 2000).encode())
    path.write_bytes(path.read_bytes()[:300])
    with pytest.raises(ValueError, match=r"c.tsv.gz: line \d+: cannot read the file"):
        list(iter_criteo(path, 100))
