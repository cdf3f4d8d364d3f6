"""Reading svmlight / LIBSVM files (plain or compressed), whole or in chunks.

Every problem with a file is one ``ValueError`` naming the file, the line and what is wrong
(a label or value that is not a finite number, an index that is not an increasing integer in
``[0, 2**31)``, a corrupt or truncated ``.xz``/``.gz``/``.bz2`` stream, no samples at all), and
memory stays bounded by the data: a file whose largest feature index is far beyond its number of
stored values (which would make every weight vector of the model that large) is refused unless
the width is asked for with ``n_features``.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any, Literal, Union

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

PathLike = Union[str, "os.PathLike[str]"]
ZeroBased = Union[bool, Literal["auto"]]

__all__ = [
    "count_svmlight_features",
    "scan_svmlight",
    "iter_svmlight_chunks",
    "load_svmlight",
    "open_binary",
]

_MAGIC = ((b"\xfd7zXZ\x00", lzma.open), (b"\x1f\x8b", gzip.open), (b"BZh", bz2.open))
#: What a damaged compressed stream raises while being read.
READ_ERRORS: tuple[type[BaseException], ...] = (OSError, EOFError, lzma.LZMAError, zlib.error)
#: What scikit-learn's reader raises on a bad line or stream.
_LOADER_ERRORS: tuple[type[BaseException], ...] = (ValueError, OverflowError, TypeError,
                                                   UnicodeDecodeError, *READ_ERRORS)
#: Largest feature index (the compiled kernels index with 32-bit integers).
MAX_INDEX = 2**31 - 1
#: Without an explicit ``n_features``, the width inferred from the largest index may exceed
#: neither this floor nor ``WIDTH_PER_ENTRY`` times the file's stored values (plus rows): a
#: model holds several dense vectors of that width, so a stray huge index would otherwise
#: allocate gigabytes for a few bytes of data.
MIN_WIDTH_CAP = 2**20
WIDTH_PER_ENTRY = 16


def open_binary(path: PathLike) -> IO[bytes]:
    """Open a file for reading bytes, decompressing xz/lzma, gzip and bzip2 transparently
    (detected from the first bytes, whatever the file name)."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"data file {str(p)!r} does not exist")
    if p.is_dir():
        raise IsADirectoryError(f"{str(p)!r} is a directory, not a data file")
    with open(p, "rb") as fh:
        head = fh.read(6)
    for magic, opener in _MAGIC:
        if head.startswith(magic):
            stream: Any = opener(p, "rb")
            return stream  # type: ignore[no-any-return]
    if p.suffix in (".xz", ".lzma"):  # lzma-alone files carry no magic number
        return lzma.open(p, "rb")
    return open(p, "rb")


def _sklearn_loader() -> Any:
    try:
        from sklearn.datasets import load_svmlight_file
    except ImportError:
        return None
    return load_svmlight_file


# ------------------------------------------------------------------------- one line
def _strip_comment(raw: bytes) -> bytes:
    # as scikit-learn's reader: the comment starts at the first '#' before any NUL byte
    nul = raw.find(b"\x00")
    hash_ = raw.find(b"#", 0, nul if nul >= 0 else len(raw))
    return raw[:hash_] if hash_ >= 0 else raw


_GRAMMAR = "Expected svmlight/LIBSVM lines 'label index:value ...'"


def _show(tok: bytes) -> str:
    return repr(tok[:30].decode("utf-8", errors="replace"))


def _number(tok: bytes, what: str) -> float:
    try:
        value = float(tok)
    except ValueError:
        raise ValueError(f"the {what} {_show(tok)} is not a number. {_GRAMMAR}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"the {what} {_show(tok)} is not finite")
    return value


def _parse_line(raw: bytes) -> tuple[float, list[int], list[float]] | None:
    """``(label, raw indices, values)`` of one line, ``None`` for a blank or comment line;
    ``ValueError`` (without file and line) for anything scikit-learn's reader would refuse or
    sqnopt cannot use."""
    tokens = _strip_comment(raw).split()
    if not tokens:
        return None
    label = _number(tokens[0], "label")
    feats = tokens[1:]
    if feats and feats[0].startswith(b"qid"):
        if b":" not in feats[0]:
            raise ValueError(f"{_show(feats[0])} is not 'qid:value'. {_GRAMMAR}")
        feats = feats[1:]
    indices: list[int] = []
    values: list[float] = []
    prev = -1
    for tok in feats:
        key, colon, val = tok.partition(b":")
        if not colon:
            raise ValueError(f"{_show(tok)} is not 'index:value'. {_GRAMMAR}")
        try:
            idx = int(key)
        except ValueError:
            raise ValueError(f"the feature index {_show(key)} is not an integer. "
                             f"{_GRAMMAR}") from None
        if idx < 0:
            raise ValueError(f"the feature index {idx} is negative")
        if idx > MAX_INDEX:
            raise ValueError(f"the feature index {_show(key)} is too large (at most "
                             f"{MAX_INDEX})")
        if idx <= prev:
            raise ValueError(f"the feature indices are not increasing ({prev} then {idx}); "
                             "svmlight lines list each feature once, in increasing order")
        prev = idx
        indices.append(idx)
        values.append(_number(val, "value"))
    return label, indices, values


class _Lines:
    """Re-iterable numbered lines of a file or of a buffered chunk."""

    def __init__(self, source: str, opener: Callable[[], Iterable[bytes]], first: int = 1) -> None:
        self.source, self.opener, self.first = source, opener, first

    def error(self, lineno: int | None, what: str) -> ValueError:
        where = f"{self.source}: line {lineno}" if lineno is not None else self.source
        return ValueError(f"{where}: {what}")

    def numbered(self) -> Iterator[tuple[int, bytes]]:
        """``(line number, line)``; a decompression failure becomes one error at its line."""
        lineno = self.first - 1
        try:
            stream = self.opener()
            try:
                for raw in stream:
                    lineno += 1
                    yield lineno, raw
            finally:
                close = getattr(stream, "close", None)
                if close is not None:
                    close()
        except READ_ERRORS as exc:
            if isinstance(exc, (FileNotFoundError, IsADirectoryError)):
                raise
            raise self.error(lineno + 1, f"cannot read the file: corrupt or truncated data "
                             f"({type(exc).__name__}: {exc})") from None

    def samples(self) -> Iterator[tuple[int, int, tuple[float, list[int], list[float]]]]:
        """``(line number, sample number, parsed line)`` for every non-blank line."""
        row = 0
        for lineno, raw in self.numbered():
            try:
                parsed = _parse_line(raw)
            except ValueError as exc:
                raise self.error(lineno, str(exc)) from None
            if parsed is not None:
                yield lineno, row, parsed
                row += 1

    def first_problem(self) -> ValueError | None:
        try:
            for _ in self.samples():
                pass
        except ValueError as exc:
            return exc
        return None

    def line_of(self, row: int) -> int | None:
        for lineno, r, _ in self.samples():
            if r == row:
                return lineno
        return None


# ------------------------------------------------------------------------- whole files / chunks
def _base(zero_based: ZeroBased, min_index: int | None) -> int:
    """1 for one-based (LIBSVM) indices, else 0; ``auto``: one-based unless an index 0 occurs."""
    if zero_based is True:
        return 0
    if zero_based is False:
        return 1
    return 1 if min_index is not None and min_index > 0 else 0


def _width_cap(nnz: int, n_rows: int) -> int:
    return max(MIN_WIDTH_CAP, WIDTH_PER_ENTRY * (nnz + n_rows))


def _too_wide(top: int, width: int, nnz: int, n_rows: int) -> str:
    return (f"the feature index {top} makes the data {width} features wide, far beyond its "
            f"{nnz} stored values in {n_rows} rows (every weight vector of the model would take "
            f"{width * 8 / 2**20:.0f} MiB). Renumber the features (e.g. hash them into fewer "
            "columns), or pass n_features (sqnopt train --n-features) if that width is intended")


def _finish(lines: _Lines, values: NDArray[Any], raw_indices: NDArray[Any],
            indptr: NDArray[Any], y: NDArray[Any], *, n_features: int | None, zero_based: ZeroBased,
            dtype: Any) -> tuple[Any, NDArray[np.float64]]:
    """Checks that need the whole file (or chunk), then the CSR matrix."""
    n = int(y.shape[0])
    if n == 0:
        raise lines.error(None, "no samples found (an empty file, or only comments and blank "
                          "lines)")
    if not np.all(np.isfinite(y)):
        row = int(np.flatnonzero(~np.isfinite(y))[0])
        raise lines.error(lines.line_of(row), f"the label {y[row]} is not finite")
    with np.errstate(over="ignore"):  # a value too large for float32 is reported below
        data = np.asarray(values, dtype=dtype)
    if not np.all(np.isfinite(data)):
        p = int(np.flatnonzero(~np.isfinite(data))[0])
        row = int(np.searchsorted(indptr, p, side="right") - 1)
        raise lines.error(lines.line_of(row), f"the value {values[p]} is not finite"
                          + (f" as {np.dtype(dtype).name}" if np.isfinite(values[p]) else ""))
    nnz = int(raw_indices.shape[0])
    base = _base(zero_based, int(raw_indices.min()) if nnz else None)
    if base == 1 and nnz and int(raw_indices.min()) == 0:
        row = int(np.searchsorted(indptr, int(np.argmin(raw_indices)), side="right") - 1)
        raise lines.error(lines.line_of(row), "index 0 in a one-based (LIBSVM) file; pass "
                          "zero_based=True if the indices start at 0")
    top = int(raw_indices.max()) if nnz else -1
    width = top + 1 - base if nnz else 0
    row_of_top = int(np.searchsorted(indptr, int(np.argmax(raw_indices)), side="right") - 1) \
        if nnz else 0
    if n_features is not None:
        if width > n_features:
            raise lines.error(lines.line_of(row_of_top), f"the feature index {top} is beyond "
                              f"n_features={n_features} ({'one' if base else 'zero'}-based "
                              "indices)")
    elif width > _width_cap(nnz, n):
        raise lines.error(lines.line_of(row_of_top), _too_wide(top, width, nnz, n))
    cols = n_features if n_features is not None else max(width, 1)
    idx_dtype = np.int32 if cols <= MAX_INDEX and nnz <= MAX_INDEX else np.int64
    X = sp.csr_matrix((data, (raw_indices - base).astype(idx_dtype),
                       np.asarray(indptr, dtype=idx_dtype)), shape=(n, cols))
    return X, np.asarray(y, dtype=np.float64)


def _collect(lines: _Lines) -> tuple[NDArray[Any], NDArray[Any], NDArray[Any], NDArray[Any]]:
    """The pure-Python parse (scikit-learn not installed): ``(values, raw indices, indptr,
    labels)``."""
    labels: list[float] = []
    indices: list[int] = []
    values: list[float] = []
    indptr = [0]
    for _, _, (label, idx, val) in lines.samples():
        labels.append(label)
        indices.extend(idx)
        values.extend(val)
        indptr.append(len(indices))
    return (np.asarray(values, dtype=np.float64), np.asarray(indices, dtype=np.int64),
            np.asarray(indptr, dtype=np.int64), np.asarray(labels, dtype=np.float64))


def _parse(lines: _Lines, handle: Callable[[], IO[bytes]]
           ) -> tuple[NDArray[Any], NDArray[Any], NDArray[Any], NDArray[Any]]:
    """``(values, raw indices, indptr, labels)`` by scikit-learn's fast reader when installed,
    else line by line; a failure is located (file and line) by a second, checking pass."""
    loader = _sklearn_loader()
    if loader is None:
        return _collect(lines)
    try:
        with handle() as fh:
            X, y = loader(fh, zero_based=True, dtype=np.float64)  # raw indices; checks follow
    except _LOADER_ERRORS as exc:
        if isinstance(exc, (FileNotFoundError, IsADirectoryError)):
            raise
        located = lines.first_problem()
        if located is not None:
            raise located from None
        raise lines.error(None, f"not a valid svmlight/LIBSVM file ({type(exc).__name__}: "
                          f"{exc})") from None
    X = X.tocsr()
    return X.data, X.indices, X.indptr, np.asarray(y, dtype=np.float64)


def _read(lines: _Lines, handle: Callable[[], IO[bytes]], *, n_features: int | None,
          zero_based: ZeroBased, dtype: Any) -> tuple[Any, NDArray[np.float64]]:
    if n_features is not None and (not isinstance(n_features, (int, np.integer))
                                   or isinstance(n_features, bool)
                                   or not 1 <= n_features <= MAX_INDEX):
        raise ValueError(f"n_features must be an integer in [1, {MAX_INDEX}], got "
                         f"{n_features!r}")
    return _finish(lines, *_parse(lines, handle), n_features=n_features, zero_based=zero_based,
                   dtype=dtype)


def _parse_lines(lines: Iterable[bytes], *, n_features: int | None, zero_based: ZeroBased,
                 source: str, first_line: int = 1) -> tuple[Any, NDArray[np.float64]]:
    """The pure-Python parser over already opened lines (errors name ``source`` and the line)."""
    buf = list(lines)
    src = _Lines(source, lambda: buf, first_line)
    return _finish(src, *_collect(src), n_features=n_features, zero_based=zero_based,
                   dtype=np.float64)


def load_svmlight(path: PathLike, *, n_features: int | None = None,
                  zero_based: ZeroBased = "auto", dtype: Any = np.float64,
                  ) -> tuple[Any, NDArray[np.float64]]:
    """Read an svmlight / LIBSVM file (plain, ``.xz``, ``.gz`` or ``.bz2``) into ``(X, y)``.

    ``X`` is a CSR matrix, ``y`` the labels as float64. Uses scikit-learn's fast reader when
    scikit-learn is installed, and a Python parser otherwise. ``n_features`` fixes the width (pass
    the training width when loading a test split); ``zero_based="auto"`` treats the indices as
    one-based (LIBSVM convention) unless an index 0 occurs.

    Raises ``ValueError`` naming the file and line for any malformed line, non-finite label or
    value, corrupt compressed data, an empty file, an index beyond ``n_features``, or -- without
    ``n_features`` -- a largest index far beyond the data (more than
    ``max(2**20, 16 * (stored values + rows))``), which would make the model that wide.
    """
    lines = _Lines(str(path), lambda: open_binary(path))
    return _read(lines, lambda: open_binary(path), n_features=n_features,
                 zero_based=zero_based, dtype=dtype)


def scan_svmlight(path: PathLike, *, zero_based: bool = False, block: int = 20_000
                  ) -> tuple[int, int, NDArray[np.float64]]:
    """One streaming pass over an svmlight file that checks every line (errors name the line),
    ``block`` lines at a time: ``(n_rows, n_features, sorted labels)``, ``n_features`` = largest
    index + 1, or largest index for one-based files; bounded like :func:`load_svmlight`."""
    source = str(path)
    top, top_row, rows, nnz = -1, 0, 0, 0
    labels: NDArray[np.float64] = np.zeros(0)
    buf: list[bytes] = []
    first = 1

    def scan_block() -> None:
        nonlocal top, top_row, rows, nnz, labels
        lines = _Lines(source, lambda: buf, first)
        values, idx, indptr, y = _parse(lines, lambda: io.BytesIO(b"".join(buf)))
        for arr, what in ((y, "label"), (values, "value")):
            if not np.all(np.isfinite(arr)):
                p = int(np.flatnonzero(~np.isfinite(arr))[0])
                row = p if what == "label" else int(np.searchsorted(indptr, p, side="right") - 1)
                raise lines.error(lines.line_of(row), f"the {what} {arr[p]} is not finite")
        if idx.size:
            if not zero_based and int(idx.min()) == 0:
                row = int(np.searchsorted(indptr, int(np.argmin(idx)), side="right") - 1)
                raise lines.error(lines.line_of(row), "index 0 in a one-based (LIBSVM) file; "
                                  "pass zero_based=True if the indices start at 0")
            if int(idx.max()) > top:
                top = int(idx.max())
                top_row = rows + int(np.searchsorted(indptr, int(np.argmax(idx)),
                                                     side="right") - 1)
        rows += int(y.shape[0])
        nnz += int(idx.shape[0])
        labels = np.union1d(labels, y)

    for lineno, raw in _Lines(source, lambda: open_binary(path)).numbered():
        buf.append(raw)
        if len(buf) >= block:
            scan_block()
            buf, first = [], lineno + 1
    if buf:
        scan_block()
    whole = _Lines(source, lambda: open_binary(path))
    if rows == 0:
        raise whole.error(None, "no samples found (an empty file, or only comments and blank "
                          "lines)")
    width = top + 1 if zero_based else top
    if width > _width_cap(nnz, rows):
        raise whole.error(whole.line_of(top_row), _too_wide(top, width, nnz, rows))
    return rows, max(width, 1), labels


def count_svmlight_features(path: PathLike, *, zero_based: bool = False) -> int:
    """Number of features of an svmlight file (one streaming pass; see :func:`scan_svmlight`)."""
    return scan_svmlight(path, zero_based=zero_based)[1]


def iter_svmlight_chunks(path: PathLike, chunk_size: int = 100_000, *,
                         n_features: int | None = None, zero_based: bool = False,
                         dtype: Any = np.float64,
                         ) -> Iterator[tuple[Any, NDArray[np.float64]]]:
    """Stream an svmlight file as ``(X_chunk, y_chunk)`` pairs of at most ``chunk_size`` rows,
    for ``partial_fit`` on files larger than memory.

    Every chunk has ``n_features`` columns (found by a first, checking pass over the file when
    not given). Indices are one-based (LIBSVM) unless ``zero_based=True``. Errors name the file
    and line, as :func:`load_svmlight`'s.
    """
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer)) \
            or chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}")
    if n_features is None:
        n_features = count_svmlight_features(path, zero_based=zero_based)
    source = str(path)
    whole = _Lines(source, lambda: open_binary(path))
    buf: list[bytes] = []
    first = 1
    n_rows = 0
    for lineno, raw in whole.numbered():
        buf.append(raw)
        if _strip_comment(raw).strip():
            n_rows += 1
        if n_rows >= chunk_size:
            yield _chunk(buf, n_features, zero_based, dtype, source, first)
            buf, first, n_rows = [], lineno + 1, 0
    if n_rows:
        yield _chunk(buf, n_features, zero_based, dtype, source, first)


def _chunk(buf: list[bytes], n_features: int, zero_based: bool, dtype: Any, source: str,
           first: int) -> tuple[Any, NDArray[np.float64]]:
    lines = _Lines(source, lambda: buf, first)
    return _read(lines, lambda: io.BytesIO(b"".join(buf)), n_features=n_features,
                 zero_based=zero_based, dtype=dtype)
