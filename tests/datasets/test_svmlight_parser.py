"""The compiled svmlight parser against its pure-Python twin: the same matrices to the last bit
and the same first error (message and line) on random and adversarial files, whatever the
block boundaries, the chunk size, the compression or the final newline."""

from __future__ import annotations

import bz2
import gzip
import lzma
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sqnopt.datasets import _io, _svmlight, iter_svmlight_chunks, load_svmlight, scan_svmlight


def _outcome(fn: Callable[[], Any]) -> tuple[Any, ...]:
    try:
        return ("ok", fn())
    except (ValueError, TypeError) as exc:
        return ("error", type(exc).__name__, str(exc))


def _same(a: Any, b: Any) -> bool:
    """Equal outcomes: floats compared bit for bit, sparse matrices by their CSR arrays."""
    if isinstance(a, tuple) and isinstance(b, tuple) or isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if hasattr(a, "tocsr") and hasattr(b, "tocsr"):
        return (a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a.indptr, b.indptr)
                and np.array_equal(a.indices, b.indices) and _same(a.data, b.data))
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        if a.dtype != b.dtype or a.shape != b.shape:
            return False
        if a.dtype.kind == "f":
            return bool(np.array_equal(a.view(f"u{a.itemsize}"), b.view(f"u{b.itemsize}")))
        return bool(np.array_equal(a, b))
    return bool(a == b)


def _readers(path: Path, chunk: int, n_features: int | None, zero_based: Any,
             dtype: Any) -> dict[str, Callable[[], Any]]:
    return {
        "load": lambda: load_svmlight(path, n_features=n_features, zero_based=zero_based,
                                      dtype=dtype),
        "scan": lambda: scan_svmlight(path, zero_based=zero_based is True),
        "chunks": lambda: list(iter_svmlight_chunks(path, chunk, n_features=n_features,
                                                    zero_based=zero_based is True,
                                                    dtype=dtype)),
    }


def _both(monkeypatch: pytest.MonkeyPatch, path: Path, *, chunk: int = 3,
          n_features: int | None = None, zero_based: Any = "auto", dtype: Any = np.float64,
          blocks: tuple[int, ...] = (1 << 20,)) -> dict[str, tuple[Any, ...]]:
    """Every reader's outcome on the Python path, checked equal to the compiled path's at each
    block size; returns the outcomes."""
    with monkeypatch.context() as m:
        m.setattr(_io, "_engine", lambda: None)
        want = {k: _outcome(f) for k, f in _readers(path, chunk, n_features, zero_based,
                                                    dtype).items()}
    for block in blocks:
        with monkeypatch.context() as m:
            m.setattr(_io, "BLOCK_SIZE", block)
            for k, f in _readers(path, chunk, n_features, zero_based, dtype).items():
                got = _outcome(f)
                assert _same(got, want[k]), (k, block, got, want[k])
    return want


# ---------------------------------------------------------------------------- numbers
NUMBERS = ["0", "-0", "+0.0", "0e0", "-0.0e-5", ".5", "5.", "-.5e-3", "+1.e2", "1E5", "1e+05",
           "1e22", "1e23", "1e-22", "1e-23", "9007199254740992", "9007199254740993",
           "18446744073709551615", "18446744073709551616", "123456789012345678901234567890",
           "0.1", "0.30000000000000004", "2.2250738585072011e-308", "2.2250738585072014e-308",
           "4.9e-324", "2.4703282292062327e-324", "2.4703282292062328e-324", "1e-400",
           "1.7976931348623157e308", "1.7976931348623158e308", "0." + "0" * 30 + "1",
           "1" + "0" * 30, "0000000000000000000000001.5", "3.14159265358979323846264338327950",
           "1_000", "1_0.5", "6.02214076e23", "-1.602176634e-19", "1e0000000000000000000022"]


def test_numbers_are_the_bits_of_float(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    tokens = list(NUMBERS)
    for k in range(6000):
        x = float(rng.normal() * 10.0 ** int(rng.integers(-300, 300)))
        tokens.append([repr(x), f"{x:.17g}", f"{x:.6e}", f"{x:.3f}", f"{x:.25f}",
                       repr(float(np.float32(x % 1e30))), f"{x:E}", str(int(rng.integers(-10**9, 10**9)))
                       ][k % 8])
    path = tmp_path / "numbers.svm"
    path.write_text("".join(f"{t} 1:{t} 7:{t}\n" for t in tokens))
    X, y = load_svmlight(path, n_features=7)
    want = np.array([float(t) for t in tokens])
    assert np.array_equal(y.view(np.uint64), want.view(np.uint64))
    # stored entries: explicit zeros are kept, two per line
    assert np.array_equal(X.data.view(np.uint64), np.repeat(want, 2).view(np.uint64))


def test_float32_values_are_the_rounded_doubles(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(size=3000) * 10.0 ** rng.integers(-40, 38, size=3000)
    path = tmp_path / "f32.svm"
    path.write_text("".join(f"1 1:{float(v)!r}\n" for v in x))
    X, _ = load_svmlight(path, dtype=np.float32)
    assert X.dtype == np.float32
    with np.errstate(over="ignore"):
        assert np.array_equal(X.data, x.astype(np.float32))


# ---------------------------------------------------------------------------- grammar
GRAMMAR = [
    b"1 1:0.5 3:2\n",                      # plain
    b"-1 2:1.5 # a comment\n",             # trailing comment
    b"# a whole-line comment\n",
    b"\n", b"   \n", b"\t\r\n", b"\x0b\x0c\n",  # blank lines (every ASCII whitespace)
    b"1 qid:3 1:1 4:-1\n",                 # qid
    b"1 qidfoo:bar 2:1\n",                 # anything 'qid...:' is skipped
    b"2 1:1e-3 2:+4E+2\r\n",               # CRLF, exponents, signs
    b"0 1:1 2:2   \n",                     # trailing spaces
    b"3.5\n",                              # a label alone: an empty row
    b"1 5:1#comment right after\n",
    b"1#comment\n",
    b"1 +3:1\n",                           # a '+' index
    b"1 0003:1\n",                         # leading zeros
    b"1 -0:1 2:1\n",                       # '-0' is index 0 (Python's int)
    b"1 1_0:2\n",                          # underscores: Python's int and float
    b"1_0 3:1_5\n",
    b"1 3:1 # \x00 a NUL in a comment\n",
    b"1 " + b" ".join(b"%d:%d" % (j, j) for j in range(1, 400)) + b"\n",  # a long line
]
ERRORS = [
    b"yes 1:1\n", b"nan 1:1\n", b"inf 1:1\n", b"1 1:nan\n", b"1 1:-inf\n", b"1 1:1e400\n",
    b"1 1:abc\n", b"1 1:\n", b"1 :1\n", b"1 1\n", b"1 1:1:1\n", b"1 qid 1:1\n", b"1 qid#x\n",
    b"1 2:1 2:1\n", b"1 3:1 2:1\n", b"1 -4:1\n", b"1 1.5:1\n", b"1 0x10:1\n",
    b"1 2147483648:1\n", b"1 99999999999999999999:1\n", b"1 \x001:1\n", b"\x00\n",
    b"1 1:1\x00\n", b"1 1:0x1p3\n", b"1 1:1e\n", b"1 1:.\n", b"1 1:--1\n", b"1 \xff:1\n",
    b"1 1:1" + b"0" * 500 + b"x\n",
]


@pytest.mark.parametrize("final_newline", [True, False])
def test_every_grammar_feature_reads_as_python_reads_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, final_newline: bool) -> None:
    text = b"".join(GRAMMAR)
    if not final_newline:
        text = text.rstrip(b"\n")
    path = tmp_path / "grammar.svm"
    path.write_bytes(text)
    want = _both(monkeypatch, path, blocks=(1, 5, 64, 1 << 20))
    assert want["load"][0] == "ok"
    X, y = want["load"][1]
    assert X.shape[0] == 16 and y[6] == 3.5 and X[6].nnz == 0
    # '-0:1' is an index 0: zero-based for load's "auto", an error for one-based chunks
    assert X.shape[1] == 400 and "line 17: index 0 in a one-based" in want["chunks"][2]


@pytest.mark.parametrize("bad", ERRORS, ids=lambda b: repr(b[:14]))
def test_every_error_names_its_line_as_python_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad: bytes) -> None:
    lines = [b"1 1:1\n", b"# c\n", b"\n", b"-1 2:2\n"] * 3
    for where in (0, 5, len(lines)):
        text = b"".join(lines[:where]) + bad + b"".join(lines[where:])
        path = tmp_path / "bad.svm"
        path.write_bytes(text)
        want = _both(monkeypatch, path, blocks=(3, 1 << 20))
        line = text[:text.index(bad)].count(b"\n") + 1
        for what in ("load", "scan", "chunks"):
            assert want[what][0] == "error", (what, bad)
            assert f"bad.svm: line {line}: " in want[what][2], want[what]


def test_file_level_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cases: list[tuple[bytes, dict[str, Any], str]] = [
        (b"", {}, "no samples found"),
        (b"# only\n\n", {}, "no samples found"),
        (b"1 1:1\n-1 0:1\n", {"zero_based": False}, "line 2: index 0 in a one-based"),
        (b"1 1:1\n-1 3000000:1\n", {}, "line 2: the feature index 3000000 makes the data"),
        (b"1 1:1\n-1 1:1e300\n", {"dtype": np.float32},
         "line 2: the value 1e+300 is not finite as float32"),
    ]
    for text, kw, match in cases:
        path = tmp_path / "f.svm"
        path.write_bytes(text)
        want = _both(monkeypatch, path, **kw)
        assert want["load"][0] == "error" and match in want["load"][2], (text, want)
    path = tmp_path / "w.svm"
    path.write_bytes(b"1 1:1\n-1 9:1\n1 4:1\n")
    want = _both(monkeypatch, path, n_features=5, zero_based=False)
    assert "line 2: the feature index 9 is beyond n_features=5" in want["load"][2]


def test_index_base_detection(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "b.svm"
    path.write_bytes(b"1 1:1 2:2\n-1 3:1\n")
    X, _ = _both(monkeypatch, path)["load"][1]
    assert X.shape == (2, 3) and X[0, 0] == 1          # one-based: index 1 is column 0
    path.write_bytes(b"1 0:1 2:2\n-1 3:1\n")
    X, _ = _both(monkeypatch, path)["load"][1]
    assert X.shape == (2, 4) and X[0, 0] == 1          # an index 0: zero-based


# ---------------------------------------------------------------------------- random files
def _random_file(rng: np.random.Generator, n: int, bad: float) -> bytes:
    vocab_good = [b"1", b"-1", b"0", b"2.5", b"1e-3", b"-0.0", b"3E2", b".5", b"7.",
                  b"0.1234567890123456789", b"1e300"]
    vocab_bad = [b"nan", b"x", b"1e", b"::", b"qid", b"\x00", b"1_0", b"-0", b"+2"]
    out = []
    for _ in range(n):
        r = rng.random()
        if r < 0.05:
            out.append(b"# comment\n")
            continue
        if r < 0.1:
            out.append(rng.choice([b"\n", b"  \r\n", b"\t\n"]))
            continue
        toks = [bytes(rng.choice(vocab_good))]
        if rng.random() < 0.1:
            toks.append(b"qid:%d" % rng.integers(0, 9))
        cols = np.sort(rng.choice(40, size=rng.integers(0, 8), replace=False)) + 1
        for c in cols:
            toks.append(b"%d:%s" % (c, rng.choice(vocab_good)))
        if rng.random() < bad:
            k = int(rng.integers(0, len(toks)))
            toks[k] = bytes(rng.choice(vocab_bad)) + (b":1" if rng.random() < 0.5 else b"")
        sep = b"\t" if rng.random() < 0.2 else b" "
        line = sep.join(toks)
        if rng.random() < 0.1:
            line += b" # c"
        out.append(line + (b"\r\n" if rng.random() < 0.2 else b"\n"))
    text = b"".join(out)
    return text[:-1] if rng.random() < 0.3 else text


@pytest.mark.parametrize("seed", range(12))
def test_random_files_read_the_same_on_both_paths(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  seed: int) -> None:
    rng = np.random.default_rng(seed)
    path = tmp_path / "r.svm"
    path.write_bytes(_random_file(rng, 60, bad=0.0 if seed % 3 == 0 else 0.03))
    _both(monkeypatch, path, chunk=int(rng.integers(1, 9)),
          n_features=[None, 40, 60][seed % 3], zero_based=["auto", False, True][seed % 3],
          dtype=[np.float64, np.float32][seed % 2], blocks=(1, 13, 97, 1 << 20))


def test_chunk_boundaries_at_every_position(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Every block size from 1 to the longest line and beyond: a buffer boundary falls at every
    byte of the file (a line is parsed only when whole)."""
    rng = np.random.default_rng(7)
    text = _random_file(rng, 25, bad=0.0)
    path = tmp_path / "b.svm"
    path.write_bytes(text)
    _both(monkeypatch, path, chunk=4, n_features=60, blocks=tuple(range(1, 70)))


@pytest.mark.parametrize("compress", ["gz", "xz", "bz2"])
def test_compressed_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                          compress: str) -> None:
    rng = np.random.default_rng(3)
    text = _random_file(rng, 400, bad=0.0)
    opener: Any = {"gz": gzip.open, "xz": lzma.open, "bz2": bz2.open}[compress]
    path = tmp_path / f"c.svm.{compress}"
    with opener(path, "wb") as fh:
        fh.write(text)
    want = _both(monkeypatch, path, chunk=50, n_features=40, blocks=(97, 1 << 20))
    assert want["load"][0] == "ok"
    plain = tmp_path / "p.svm"
    plain.write_bytes(text)
    assert _same(load_svmlight(plain, n_features=40), want["load"][1])
    # damaged: every reader fails as the Python path does, at its line
    raw = bytearray(path.read_bytes())
    for cut in (len(raw) // 3, 2 * len(raw) // 3):
        path.write_bytes(bytes(raw[:cut]))
        want = _both(monkeypatch, path, chunk=50, n_features=40, blocks=(97, 1 << 20))
        assert all(o[0] == "error" for o in want.values()), want


def test_engine_entry_points() -> None:
    buf = b"1 1:2\n\n# c\n-1 3:4 5:6\n2\n"
    labels, indptr = np.empty(2), np.zeros(3, dtype=np.int64)
    indices, data = np.empty(2, dtype=np.int32), np.empty(2)
    # row capacity 2: stops (GROW) at the third row, having written two whole rows
    status, pos, rows, nnz, lines = _svmlight.parse_lines(buf, 0, len(buf), labels, indptr,
                                                          indices, data, 0, 0, 10)
    assert status == _svmlight.GROW and (rows, nnz) == (1, 1) and lines == 3
    assert buf[pos:].startswith(b"-1 3:4")   # the second row did not fit the two values
    status, pos, rows, nnz, lines = _svmlight.parse_lines(buf, 0, len(buf), labels, indptr,
                                                          indices, data, 0, 0, 1)
    assert status == _svmlight.LIMIT and rows == 1 and buf[pos:].startswith(b"-1")
    assert _svmlight.find_row(buf, 0, len(buf), 1)[:3] == (3, 1, 3)
    assert _svmlight.find_row(buf, 0, len(buf), 2)[0] == 4
    assert _svmlight.find_row(buf, 0, len(buf), 3)[:3] == (-1, 3, 5)
    with pytest.raises(ValueError, match="bad range"):
        _svmlight.parse_lines(buf, 5, 2, labels, indptr, indices, data, 0, 0, 1)
    with pytest.raises(ValueError, match="indptr needs"):
        _svmlight.parse_lines(buf, 0, 1, labels, indptr[:2], indices, data, 0, 0, 1)
