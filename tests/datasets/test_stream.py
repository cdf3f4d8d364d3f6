"""Streams: re-iterable chunk sources, read-ahead in a thread, the binary cache and the binary
chunk format."""

from __future__ import annotations

import gc
import os
import pickle
import struct
import threading
import time
import tracemalloc
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt.datasets import (
    ChunkStream,
    StreamPass,
    _binary,
    _io,
    iter_svmlight_chunks,
    load_svmlight,
    stream_arrays,
    stream_binary,
    stream_chunks,
    stream_svmlight,
    write_binary,
)


def _svm(path: Path, n: int, seed: int = 0, width: int = 30, bad_line: int | None = None,
         integer_values: bool = False) -> Path:
    rng = np.random.default_rng(seed)
    lines = []
    for i in range(n):
        cols = np.sort(rng.choice(width, size=int(rng.integers(1, 6)), replace=False)) + 1
        vals = rng.integers(1, 4, size=cols.size) if integer_values else rng.normal(size=cols.size)
        lines.append(f"{int(rng.integers(0, 3))} " + " ".join(
            f"{c}:{float(v)!r}" if not integer_values else f"{c}:{int(v)}"
            for c, v in zip(cols, vals)))
        if i % 17 == 5:
            lines.append("# a comment")
    if bad_line is not None:
        lines[bad_line] = "1 3:oops"
    path.write_text("\n".join(lines) + "\n")
    return path


def _stream_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("sqnopt-stream")]


def _pass(stream: Any) -> list[tuple[Any, Any]]:
    return [(X, y) for X, y in stream]


def _equal(a: list[tuple[Any, Any]], b: list[tuple[Any, Any]]) -> bool:
    return len(a) == len(b) and all(
        Xa.shape == Xb.shape and (Xa != Xb).nnz == 0 and np.array_equal(ya, yb)
        if sp.issparse(Xa) else np.array_equal(Xa, Xb) and np.array_equal(ya, yb)
        for (Xa, ya), (Xb, yb) in zip(a, b))


# ---------------------------------------------------------------------------- svmlight
@pytest.mark.parametrize("prefetch", [0, 1, 3])
def test_svmlight_stream_equals_the_whole_file_and_reiterates(tmp_path: Path,
                                                              prefetch: int) -> None:
    path = _svm(tmp_path / "d.svm", 500)
    stream = stream_svmlight(path, chunk_size=64, prefetch=prefetch, block_size=97)
    assert isinstance(stream, ChunkStream)
    assert stream.n_features == 30 and list(stream.classes) == [0.0, 1.0, 2.0]
    assert stream.n_rows == 500 and stream.nnz is not None and stream.sparse
    first, second = _pass(stream), _pass(stream)
    assert _equal(first, second)
    assert [X.shape[0] for X, _ in first] == [64] * 7 + [52]
    X, y = load_svmlight(path, n_features=30)
    assert (sp.vstack([c[0] for c in first]) != X).nnz == 0
    assert np.array_equal(np.concatenate([c[1] for c in first]), y)
    assert _equal(first, list(iter_svmlight_chunks(path, 64, n_features=30)))
    # chunks arrive validated: canonical CSR with read-only index arrays
    Xc = first[0][0]
    assert Xc.has_canonical_format and not Xc.indices.flags.writeable
    assert not _stream_threads()


def test_given_width_and_classes_skip_the_scan(tmp_path: Path) -> None:
    path = _svm(tmp_path / "d.svm", 100)
    stream = stream_svmlight(path, chunk_size=40, n_features=50, classes=[0, 1, 2],
                             dtype=np.float32)
    assert stream.n_rows is None  # nothing read yet
    chunks = _pass(stream)
    assert all(X.shape[1] == 50 and X.dtype == np.float32 for X, _ in chunks)
    assert stream.n_rows == 100  # known after a whole pass
    with pytest.raises(ValueError, match=r"the label 2\.0 of row \d+ is not one of the classes \[0, 1\]"):
        _pass(stream_svmlight(path, chunk_size=40, n_features=50, classes=[0, 1]))
    with pytest.raises(ValueError, match="more than n_features=10"):
        stream_svmlight(path, n_features=10).scan()


def test_stream_argument_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="does not exist"):
        stream_svmlight(tmp_path / "missing.svm")
    path = _svm(tmp_path / "d.svm", 10)
    for kw, match in [({"chunk_size": 0}, "chunk_size"), ({"prefetch": -1}, "prefetch"),
                      ({"dtype": np.int32}, "dtype"), ({"n_features": 0}, "n_features"),
                      ({"block_size": 0}, "block_size"), ({"zero_based": "yes"}, "zero_based"),
                      ({"cache": 3}, "cache")]:
        with pytest.raises(ValueError, match=match):
            stream_svmlight(path, **kw)


# ---------------------------------------------------------------------------- read-ahead
@pytest.mark.parametrize("prefetch", [0, 2])
def test_reader_errors_surface_with_their_message(tmp_path: Path, prefetch: int) -> None:
    path = _svm(tmp_path / "bad.svm", 300, bad_line=250)
    with pytest.raises(ValueError) as expected:
        load_svmlight(path)
    stream = stream_svmlight(path, chunk_size=50, n_features=30, classes=[0, 1, 2],
                             prefetch=prefetch)
    got = 0
    with pytest.raises(ValueError) as info:
        for X, _ in stream:
            got += X.shape[0]
    assert str(info.value) == str(expected.value) and "line 251: the value 'oops'" in str(
        info.value)
    assert got == 200  # the chunks before the bad one arrived
    assert not _stream_threads()


class _Boom(RuntimeError):
    pass


def test_user_iterator_errors_surface_and_the_thread_ends() -> None:
    def chunks() -> Any:
        yield np.ones((3, 2)), np.array([0, 1, 0])
        raise _Boom("the user's reader failed: disk on fire")

    stream = stream_chunks(chunks, n_features=2, classes=[0, 1])
    with pytest.raises(_Boom, match="disk on fire"):
        _pass(stream)
    assert not _stream_threads()


def test_breaking_out_stops_the_reader_thread(tmp_path: Path) -> None:
    path = _svm(tmp_path / "d.svm", 2000)
    stream = stream_svmlight(path, chunk_size=10, prefetch=2, n_features=30,
                             classes=[0, 1, 2])
    for _ in stream:
        break  # the pass object is dropped: its thread is stopped
    gc.collect()
    assert not _stream_threads()
    it = iter(stream)
    next(it)
    assert isinstance(it, StreamPass) and it.reader_alive
    tic = time.perf_counter()
    it.close()
    assert not it.reader_alive and time.perf_counter() - tic < 5
    with pytest.raises(StopIteration):
        next(it)
    with iter(stream) as it2:
        next(it2)
    assert not it2.reader_alive and not _stream_threads()


def test_concurrent_passes_are_independent(tmp_path: Path) -> None:
    path = _svm(tmp_path / "d.svm", 300)
    stream = stream_svmlight(path, chunk_size=32)
    pairs = list(zip(stream, stream))
    assert all((a[0] != b[0]).nnz == 0 for a, b in pairs) and len(pairs) == 10


def test_memory_is_bounded_by_the_chunk_not_the_file(tmp_path: Path) -> None:
    """A file 200 times larger than a chunk, streamed whole: the peak of traced allocations
    (NumPy arrays and the read buffer) stays within a few chunks and blocks."""
    rng = np.random.default_rng(0)
    path = tmp_path / "big.svm"
    with open(path, "w") as fh:
        for _ in range(20):
            block = np.cumsum(rng.integers(1, 8000, size=(10_000, 12)), axis=1)
            fh.write("".join("1 " + " ".join(f"{c}:1.5" for c in row) + "\n" for row in block))
    size = path.stat().st_size
    chunk, block_size = 1000, 1 << 16
    stream = stream_svmlight(path, chunk_size=chunk, n_features=10**5, classes=[1],
                             prefetch=2, block_size=block_size)
    chunk_bytes = chunk * 12 * (8 + 4) + chunk * (8 + 8)  # values, indices; labels, indptr
    rows = 0
    tracemalloc.start()
    try:
        for X, _ in stream:
            rows += X.shape[0]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert rows == 200_000
    whole = 200_000 * 12 * 12
    bound = 12 * chunk_bytes + 4 * block_size
    assert peak < bound < whole / 10 < size, (peak, bound, whole)


# ---------------------------------------------------------------------------- the cache
def test_cache_round_trip(tmp_path: Path) -> None:
    path = _svm(tmp_path / "d.svm", 400, integer_values=True)
    plain = _pass(stream_svmlight(path, chunk_size=64))
    stream = stream_svmlight(path, chunk_size=64, cache=True)
    cache = tmp_path / "d.svm.sqnopt-cache"
    assert stream.cache_path == cache
    assert _equal(_pass(stream), plain) and cache.exists()

    def no_parsing(stop: Any) -> Any:
        raise AssertionError("the text was parsed again")

    stream._read = no_parsing  # type: ignore[method-assign]
    assert _equal(_pass(stream), plain)
    # a new stream (a later run) takes the width and the labels from the cache: no scan
    again = stream_svmlight(path, chunk_size=64, cache=True)
    again._scan = no_parsing  # type: ignore[method-assign,assignment]
    again._read = no_parsing  # type: ignore[method-assign]
    assert again.n_features == 30 and again.n_rows == 400
    assert _equal(_pass(again), plain)
    # other options: another cache content -> rebuilt
    f32 = stream_svmlight(path, chunk_size=64, cache=True, dtype=np.float32)
    assert all(X.dtype == np.float32 for X, _ in _pass(f32))
    with _binary.BinaryFile(cache) as f:
        assert f.dtype == np.float32


def test_an_abandoned_pass_writes_no_cache(tmp_path: Path) -> None:
    path = _svm(tmp_path / "d.svm", 400)
    stream = stream_svmlight(path, chunk_size=64, cache=True)
    for _ in stream:
        break
    gc.collect()
    assert not _stream_threads()
    assert not list(tmp_path.glob("*sqnopt-cache*"))  # no cache, no temporary file


def test_a_stale_cache_is_rebuilt(tmp_path: Path) -> None:
    path = _svm(tmp_path / "d.svm", 200)
    stream = stream_svmlight(path, chunk_size=64, cache=True)
    _pass(stream)
    _svm(path, 200, seed=1)  # the source changes (same size or not, its digest changes)
    os.utime(path, ns=(1, 1))
    fresh = stream_svmlight(path, chunk_size=64, cache=True)
    assert _equal(_pass(fresh), _pass(stream_svmlight(path, chunk_size=64)))
    assert stream.cache_path is not None  # rewritten for the new source
    _read_all(stream.cache_path, fingerprint=_binary.fingerprint(path))


# the header's fields: (name, offset, struct format)
HEADER_FIELDS = [("magic", 0, "8s"), ("version", 8, "I"), ("flags", 12, "I"),
                 ("n_features", 16, "Q"), ("n_rows", 24, "Q"), ("nnz", 32, "Q"),
                 ("n_chunks", 40, "Q"), ("chunk_size", 48, "Q"), ("n_classes", 56, "Q"),
                 ("trailer", 64, "Q"), ("source_size", 72, "Q"), ("source_mtime", 80, "q"),
                 ("source_digest", 88, "16s"), ("options", 104, "16s")]


def _rewrite(path: Path, offset: int, fmt: str, value: Any, fix_crc: bool) -> None:
    raw = bytearray(path.read_bytes())
    struct.pack_into("<" + fmt, raw, offset, value)
    if fix_crc:
        struct.pack_into("<I", raw, 120, zlib.crc32(bytes(raw[:120])))
    path.write_bytes(bytes(raw))


def _changed(field: str, fmt: str, old: Any) -> Any:
    if fmt.endswith("s"):
        return bytes(b ^ 0x5A for b in old)
    if field == "n_features":  # narrower than the data (a wider one would be valid data)
        return old - 1
    return old + 1


def _read_all(path: Path, **kw: Any) -> None:
    """Open and read every chunk: what a pass does."""
    with _binary.BinaryFile(path, **kw) as f:
        for _ in f.chunks():
            pass


@pytest.mark.parametrize("field", [f[0] for f in HEADER_FIELDS])
@pytest.mark.parametrize("fix_crc", [False, True])
def test_every_header_field_is_checked(tmp_path: Path, field: str, fix_crc: bool) -> None:
    path = _svm(tmp_path / "d.svm", 300)
    stream = stream_svmlight(path, chunk_size=64, cache=True)
    good = _pass(stream)
    cache = stream.cache_path
    assert cache is not None
    _, offset, fmt = next(f for f in HEADER_FIELDS if f[0] == field)
    old = struct.unpack_from("<" + fmt, cache.read_bytes(), offset)[0]
    _rewrite(cache, offset, fmt, _changed(field, fmt, old), fix_crc)
    stale = fix_crc and field in ("source_size", "source_mtime", "source_digest", "options")
    with pytest.raises(ValueError) as info:
        _read_all(cache, fingerprint=_binary.fingerprint(path), key=stream._key())
    assert isinstance(info.value, _binary.StaleError if stale else _binary.DamagedError)
    assert str(info.value).startswith(str(cache))
    # a stream rebuilds it: silently when stale, with a warning when damaged; damage found
    # only in a chunk (a width too narrow for its indices) fails that pass and removes the cache
    again = stream_svmlight(path, chunk_size=64, cache=True)
    if stale:
        assert _equal(_pass(again), good)
    elif fix_crc and field == "n_features":
        with pytest.raises(_binary.DamagedError, match="feature index outside.*cache file was "
                                                        "removed"):
            _pass(again)
        assert not cache.exists() and again.n_features == 30
        assert _equal(_pass(again), good)
    else:
        with pytest.warns(RuntimeWarning, match="the cache is rebuilt"):
            assert _equal(_pass(again), good)
    _read_all(cache, fingerprint=_binary.fingerprint(path), key=stream._key())
    # the same file as binary data: refused with the reason
    if not stale:
        _rewrite(cache, offset, fmt, _changed(field, fmt, old), fix_crc)
        with pytest.raises(ValueError, match="not a valid sqnopt binary chunk file"):
            _pass(stream_binary(cache))


@pytest.mark.parametrize("part", ["magic", "flags", "n_rows", "nnz", "crc", "labels", "indptr",
                                  "indices", "values", "truncated", "extended"])
def test_every_chunk_field_is_checked(tmp_path: Path, part: str) -> None:
    path = _svm(tmp_path / "d.svm", 300)
    out = write_binary(tmp_path / "d.bin", path, chunk_size=64)
    raw = bytearray(out.read_bytes())
    first = _binary.HEADER.size  # the first chunk record
    n_rows = struct.unpack_from("<Q", raw, first + 8)[0]
    arrays = first + _binary.CHUNK.size
    offsets = {"magic": first, "flags": first + 4, "n_rows": first + 8, "nnz": first + 16,
               "crc": first + 24, "labels": arrays, "indptr": arrays + 8 * n_rows + 4,
               "indices": arrays + 8 * n_rows + 4 * (n_rows + 1) + 8,
               "values": arrays + 8 * n_rows + 4 * (n_rows + 1) + 4 * 50}
    if part == "truncated":
        raw = raw[:-7]
    elif part == "extended":
        raw += b"\0"
    elif part == "flags":
        raw[offsets[part]] ^= 0x08  # an unknown flag
    else:
        raw[offsets[part]] ^= 0x21
    out.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match="not a valid sqnopt binary chunk file") as info:
        _pass(stream_binary(out))
    assert str(info.value).startswith(str(out)) and "\n" not in str(info.value)


def test_structure_is_checked_even_with_a_matching_checksum(tmp_path: Path) -> None:
    """A chunk rewritten with a consistent checksum but an index out of range, offsets that
    decrease, or a label that is not finite never reaches SciPy or compiled code."""
    X = sp.random(40, 6, density=0.4, format="csr", random_state=0)
    y = np.arange(40) % 2
    for what in ("index", "indptr", "label"):
        out = write_binary(tmp_path / f"{what}.bin", (X, y), chunk_size=40)
        raw = bytearray(out.read_bytes())
        rec = _binary.HEADER.size
        n_rows, nnz = struct.unpack_from("<QQ", raw, rec + 8)
        arrays = rec + _binary.CHUNK.size
        if what == "index":
            struct.pack_into("<i", raw, arrays + 8 * n_rows + 4 * (n_rows + 1), 99)
        elif what == "indptr":
            struct.pack_into("<i", raw, arrays + 8 * n_rows + 4 * 3, 10**6)
        else:
            struct.pack_into("<d", raw, arrays, float("nan"))
        end = arrays + 8 * n_rows + 4 * (n_rows + 1) + 4 * nnz + 8 * nnz
        flags = struct.unpack_from("<I", raw, rec + 4)[0]
        crc = zlib.crc32(bytes(raw[rec:rec + 24]) + bytes(raw[arrays:end]))
        assert not flags & _binary.CHUNK_ONES
        struct.pack_into("<I", raw, rec + 24, crc)
        out.write_bytes(bytes(raw))
        with pytest.raises(ValueError, match="not a valid sqnopt binary chunk file"):
            _pass(stream_binary(out))


def test_a_cache_damaged_after_opening_is_removed(tmp_path: Path) -> None:
    path = _svm(tmp_path / "d.svm", 300)
    stream = stream_svmlight(path, chunk_size=64, cache=True)
    good = _pass(stream)
    cache = stream.cache_path
    assert cache is not None
    raw = bytearray(cache.read_bytes())
    raw[-200] ^= 0xFF  # the values of the last chunk: sizes intact, checksum wrong
    cache.write_bytes(bytes(raw))
    os.utime(cache)
    with pytest.raises(ValueError, match="its checksum does not match.*the cache file was "
                                         "removed"):
        _pass(stream)
    assert not cache.exists()
    assert _equal(_pass(stream), good) and cache.exists()  # rebuilt


# ---------------------------------------------------------------------------- binary files
def test_binary_round_trip_from_svmlight_and_arrays(tmp_path: Path) -> None:
    path = _svm(tmp_path / "d.svm", 250, integer_values=True)
    out = write_binary(tmp_path / "d.bin", path, chunk_size=64)
    b = stream_binary(out)
    assert (b.n_rows, b.n_features, b.nnz) == (250, 30, stream_svmlight(path).scan().nnz)
    assert _equal(_pass(b), _pass(stream_svmlight(path, chunk_size=64)))
    with _binary.BinaryFile(out) as f:  # small integer values are stored as uint8
        assert all(e.flags & _binary.CHUNK_UINT8 for e in f.entries)
    # re-sliced into other chunk sizes
    for size in (1, 50, 64, 100, 1000):
        chunks = _pass(stream_binary(out, chunk_size=size))
        assert [X.shape[0] for X, _ in chunks][:-1] == [size] * (len(chunks) - 1)
        whole = sp.vstack([X for X, _ in chunks])
        assert (whole != load_svmlight(path, n_features=30)[0]).nnz == 0
    # dense arrays give a dense file; float32 kept
    rng = np.random.default_rng(0)
    Xd = rng.normal(size=(70, 4)).astype(np.float32)
    yd = rng.integers(0, 2, 70).astype(float)
    dense = stream_binary(write_binary(tmp_path / "dense.bin", (Xd, yd), chunk_size=32,
                                       dtype=np.float32))
    assert not dense.sparse and dense.dtype == np.float32
    got = _pass(dense)
    assert np.array_equal(np.vstack([X for X, _ in got]), Xd)
    assert np.array_equal(np.concatenate([y for _, y in got]), yd)
    # one-hot values are omitted
    ones = sp.csr_matrix((np.ones(6), [0, 2, 1, 3, 0, 1], [0, 2, 4, 6]), shape=(3, 4))
    out1 = write_binary(tmp_path / "ones.bin", (ones, [0, 1, 1]))
    with _binary.BinaryFile(out1) as f:
        assert f.entries[0].flags & _binary.CHUNK_ONES
    assert (_pass(stream_binary(out1))[0][0] != ones).nnz == 0
    with pytest.raises(ValueError, match="numeric labels"):
        write_binary(tmp_path / "s.bin", (ones, ["a", "b", "a"]))
    assert not list(tmp_path.glob(".*tmp"))


def test_binary_file_refuses_other_files(tmp_path: Path) -> None:
    other = tmp_path / "other.bin"
    other.write_bytes(b"not a chunk file at all" * 10)
    with pytest.raises(ValueError, match="magic number"):
        stream_binary(other)
    other.write_bytes(b"short")
    with pytest.raises(ValueError, match="shorter than the 128-byte header"):
        stream_binary(other)


# ---------------------------------------------------------------------------- user chunks
def test_user_chunks_and_arrays() -> None:
    rng = np.random.default_rng(0)
    X = sp.random(100, 8, density=0.3, format="csr", random_state=1)
    y = rng.integers(0, 3, 100)
    parts = [(X[i:i + 30], y[i:i + 30]) for i in range(0, 100, 30)]
    s = stream_chunks(parts)
    assert s.n_features == 8 and list(s.classes) == [0, 1, 2] and s.n_rows == 100
    assert _equal(_pass(s), _pass(s)) and _equal(_pass(s), parts)
    gen = stream_chunks(lambda: iter(parts), prefetch=0)
    assert _equal(_pass(gen), parts)
    with pytest.raises(TypeError, match="not a one-shot iterator"):
        stream_chunks(iter(parts))
    with pytest.raises(ValueError, match="chunk 1 has 5 columns, chunk 0 8"):
        stream_chunks([parts[0], (np.ones((2, 5)), [0, 1])]).scan()
    with pytest.raises(TypeError, match="chunk 0 is a int, not an"):
        stream_chunks([3]).scan()  # type: ignore[list-item]
    with pytest.raises(ValueError, match=r"chunks: chunk 1 \(rows 30 and on\): y has shape"):
        _pass(stream_chunks([parts[0], (X[:4], y[:3])], n_features=8, classes=[0, 1, 2]))
    wide = stream_chunks(parts, n_features=12)  # narrower sparse chunks are widened
    assert all(Xc.shape[1] == 12 for Xc, _ in wide)
    a = stream_arrays(X, y, chunk_size=30)
    assert _equal(_pass(a), parts) and a.n_rows == 100


def test_a_stream_pickles(tmp_path: Path) -> None:
    path = _svm(tmp_path / "d.svm", 50)
    stream = stream_svmlight(path, chunk_size=16)
    copy = pickle.loads(pickle.dumps(stream))
    assert _equal(_pass(copy), _pass(stream))
    assert "chunk_size=16" in repr(stream)


def test_python_path_streams_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _svm(tmp_path / "d.svm", 120)
    compiled = _pass(stream_svmlight(path, chunk_size=25))
    monkeypatch.setattr(_io, "_engine", lambda: None)
    assert _equal(_pass(stream_svmlight(path, chunk_size=25)), compiled)
