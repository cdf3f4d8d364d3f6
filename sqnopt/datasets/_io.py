"""Reading svmlight / LIBSVM files (plain or compressed), whole or in chunks.

Every problem with a file is one ``ValueError`` naming the file, the line and what is wrong
(a label or value that is not a finite number, an index that is not an increasing integer in
``[0, 2**31)``, a corrupt or truncated ``.xz``/``.gz``/``.bz2`` stream, no samples at all), and
memory stays bounded by the data: a file whose largest feature index is far beyond its number of
stored values (which would make every weight vector of the model that large) is refused unless
the width is asked for with ``n_features``.

The file is read in large blocks and parsed by a compiled loop (:mod:`sqnopt.datasets._svmlight`)
that releases the GIL and creates no Python object per line; the line it cannot read itself --
an error, or a rare form such as ``1_000`` -- goes to the Python parser of this module
(:func:`_parse_line`), so the accepted grammar and every error message are that parser's. The
pure-Python path (:class:`_Lines`, the reference twin of the compiled one) reads whatever the
compiled path reads, to the same bits, and reports the same first problem of a bad file: lines
are checked in file order, a damaged compressed stream is reported at the line the Python
reader reaches, and a chunk's own checks (an index 0 in a one-based file, a value too large for
``dtype``, an index beyond ``n_features``) run when the chunk is complete.
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
    "BLOCK_SIZE",
    "count_svmlight_features",
    "scan_svmlight",
    "iter_svmlight_chunks",
    "load_svmlight",
    "open_binary",
]

_MAGIC = ((b"\xfd7zXZ\x00", lzma.open), (b"\x1f\x8b", gzip.open), (b"BZh", bz2.open))
#: What a damaged compressed stream raises while being read.
READ_ERRORS: tuple[type[BaseException], ...] = (OSError, EOFError, lzma.LZMAError, zlib.error)
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


#: Bytes read from the file at a time by the compiled reader (a line longer than this is read
#: whole, in a buffer grown to hold it).
BLOCK_SIZE = 1 << 23


def _engine() -> Any:
    """The compiled parser module (tests replace this by ``lambda: None`` to run the pure-Python
    reference path)."""
    from sqnopt.datasets import _svmlight

    return _svmlight


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
    """Re-iterable numbered lines of a file or of a buffered chunk: the pure-Python path."""

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

    def samples(self, after: int = 0, one_based: bool = False
                ) -> Iterator[tuple[int, int, tuple[float, list[int], list[float]]]]:
        """``(line number, sample number, parsed line)`` for every non-blank line after line
        ``after`` (earlier lines are only counted, not parsed; their samples are not numbered);
        ``one_based``: an index 0 is an error at its line."""
        row = 0
        for lineno, raw in self.numbered():
            if lineno <= after:
                continue
            try:
                parsed = _parse_line(raw)
            except ValueError as exc:
                raise self.error(lineno, str(exc)) from None
            if parsed is not None:
                if one_based and parsed[1] and parsed[1][0] == 0:
                    raise self.error(lineno, _INDEX_ZERO)
                yield lineno, row, parsed
                row += 1

    def first_problem(self, after: int = 0, one_based: bool = False) -> ValueError | None:
        """The first error of the lines after line ``after`` (see :meth:`samples`)."""
        try:
            for _ in self.samples(after, one_based):
                pass
        except ValueError as exc:
            return exc
        return None

    def line_of(self, row: int) -> int | None:
        for lineno, r, _ in self.samples():
            if r == row:
                return lineno
        return None


_INDEX_ZERO = "index 0 in a one-based (LIBSVM) file; pass zero_based=True if the indices start at 0"


# ------------------------------------------------------------------------- the compiled path
class _ReadFailed(Exception):
    """A read of the (decompressed) stream failed; the caller lets the Python path, which reads
    line by line, tell where."""


class _Reader:
    """A file read in blocks of complete lines for the compiled parser.

    ``buf[pos:ready]`` holds complete lines not parsed yet (the last line of the file may lack
    its ``\n``), ``buf[ready:n]`` the start of a line still being read; ``line`` is the line
    number at ``pos`` and ``offset`` its byte offset in the (decompressed) stream.
    """

    def __init__(self, path: PathLike, block_size: int | None = None, skip: int = 0,
                 first_line: int = 1) -> None:
        self.fh = open_binary(path)
        self.buf = bytearray(max(int(BLOCK_SIZE if block_size is None else block_size), 1))
        self.n = self.pos = self.ready = 0
        self.eof = False
        self.line = first_line
        self.base = 0
        if skip:
            try:
                self.fh.seek(skip)
            except READ_ERRORS as exc:
                self.close()
                raise _ReadFailed(exc) from exc
            self.base = skip

    @property
    def offset(self) -> int:
        return self.base + self.pos

    def close(self) -> None:
        self.fh.close()

    def __enter__(self) -> _Reader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def fill(self) -> bool:
        """Make complete lines available at ``pos``; False at the end of the data.
        Raises :class:`_ReadFailed` when the stream cannot be read."""
        if self.pos < self.ready:
            return True
        if self.pos:  # drop what is parsed, keep the start of the next line
            tail = self.n - self.pos
            self.buf[:tail] = self.buf[self.pos:self.n]
            self.base += self.pos
            self.n, self.pos, self.ready = tail, 0, 0
        while not self.eof:
            if self.n == len(self.buf):  # a line longer than the buffer: double it
                self.buf.extend(bytes(len(self.buf)))
            view = memoryview(self.buf)
            try:
                got = self.fh.readinto(view[self.n:])  # type: ignore[attr-defined]
            except READ_ERRORS as exc:
                raise _ReadFailed(exc) from exc
            finally:
                view.release()
            if not got:
                self.eof = True
                break
            searched = self.n
            self.n += got
            nl = self.buf.rfind(b"\n", searched, self.n)
            if nl >= 0:
                self.ready = nl + 1
                return True
        self.ready = self.n
        return self.n > 0

    def feed(self, out: _CSRBuilder, row_limit: int, source: str) -> tuple[int, ValueError | None]:
        """Parse the ready lines into ``out`` up to ``row_limit`` rows (see
        :meth:`_CSRBuilder.feed`)."""
        status, pos, lines, error = out.feed(self.buf, self.pos, self.ready, self.line,
                                             row_limit, source)
        self.pos = pos
        self.line += lines
        return status, error

    def parse(self, out: _CSRBuilder, row_limit: int, source: str, sized: bool = True) -> int:
        """Parse lines into ``out`` until ``row_limit`` rows (``LIMIT``) or the end of the data
        (``DONE``); a bad line raises its error. ``sized=False``: after the first block, size
        ``out`` for ``row_limit`` rows from the density seen so far (one allocation instead of
        repeated doubling)."""
        eng = _engine()
        while True:
            if self.pos >= self.ready and not self.fill():
                return int(eng.DONE)
            status, error = self.feed(out, row_limit, source)
            if error is not None:
                raise error
            if status == eng.LIMIT:
                return int(eng.LIMIT)
            if not sized and out.rows:
                out.reserve(row_limit, int(out.nnz / out.rows * row_limit * 1.05) + 64)
                sized = True


class _CSRBuilder:
    """Growing CSR arrays (raw indices as in the file) filled by the compiled parser."""

    def __init__(self, dtype: Any, rows: int = 1024, nnz: int = 16384) -> None:
        self.dtype = np.dtype(dtype)
        self.parse_dtype = self.dtype if self.dtype in (np.float32, np.float64) \
            else np.dtype(np.float64)
        self._alloc(rows, nnz)

    def _alloc(self, rows: int, nnz: int) -> None:
        self.rows = self.nnz = 0
        self.labels: NDArray[np.float64] = np.empty(max(rows, 1))
        self.indptr: NDArray[np.int64] = np.zeros(max(rows, 1) + 1, dtype=np.int64)
        self.indices: NDArray[np.int32] = np.empty(max(nnz, 1), dtype=np.int32)
        self.data: NDArray[Any] = np.empty(max(nnz, 1), dtype=self.parse_dtype)

    def reset(self) -> None:
        self.rows = self.nnz = 0
        self.indptr[0] = 0

    def reserve(self, rows: int, nnz: int) -> None:
        """Room for at least ``rows`` rows and ``nnz`` stored values in all."""
        if rows > self.labels.shape[0]:
            self.labels = _resized(self.labels, rows, self.rows)
            self.indptr = _resized(self.indptr, rows + 1, self.rows + 1)
        if nnz > self.indices.shape[0]:
            self.indices = _resized(self.indices, nnz, self.nnz)
            self.data = _resized(self.data, nnz, self.nnz)

    def feed(self, buf: bytearray, start: int, stop: int, line: int, row_limit: int,
             source: str) -> tuple[int, int, int, ValueError | None]:
        """Parse ``buf[start:stop]`` (complete lines; ``line`` the number of the first) up to
        ``row_limit`` rows in all: ``(status, pos, lines consumed, error)`` with status ``DONE``
        or ``LIMIT``; ``error`` is the error of the line at ``pos`` (not raised, so that the
        caller can first check the rows before it)."""
        eng = _engine()
        lines = 0
        while True:
            status, pos, self.rows, self.nnz, k = eng.parse_lines(
                buf, start, stop, self.labels, self.indptr, self.indices, self.data,
                self.rows, self.nnz, row_limit)
            lines += k
            start = pos
            if status == eng.GROW:  # double what is full
                self.reserve(2 * self.labels.shape[0] if self.rows == self.labels.shape[0]
                             else self.rows,
                             2 * self.indices.shape[0] if self.rows < self.labels.shape[0]
                             else self.nnz)
                continue
            if status != eng.SLOW:
                return int(status), pos, lines, None
            eol = buf.find(b"\n", pos, stop)
            end = stop if eol < 0 else eol + 1
            try:
                parsed = _parse_line(bytes(buf[pos:end]))
            except ValueError as exc:
                return int(status), pos, lines, ValueError(f"{source}: line {line + lines}: {exc}")
            if parsed is not None:  # a form the compiled loop leaves to Python (e.g. 1_000)
                self.append(*parsed)
            lines += 1
            start = end

    def append(self, label: float, indices: list[int], values: list[float]) -> None:
        k = len(indices)
        rows_cap, nnz_cap = self.labels.shape[0], self.indices.shape[0]
        self.reserve(rows_cap if self.rows < rows_cap else 2 * rows_cap,
                     nnz_cap if self.nnz + k <= nnz_cap else max(self.nnz + k, 2 * nnz_cap))
        self.labels[self.rows] = label
        self.indices[self.nnz:self.nnz + k] = indices
        with np.errstate(over="ignore"):  # a value too large for float32 is reported later
            self.data[self.nnz:self.nnz + k] = values
        self.nnz += k
        self.rows += 1
        self.indptr[self.rows] = self.nnz

    def take(self) -> tuple[NDArray[Any], NDArray[np.int32], NDArray[np.int64],
                            NDArray[np.float64]]:
        """``(values, raw indices, indptr, labels)`` of what was parsed, trimmed (copied when
        the arrays are much larger); the builder is empty afterwards."""
        out = (_trimmed(self.data, self.nnz), _trimmed(self.indices, self.nnz),
               _trimmed(self.indptr, self.rows + 1), _trimmed(self.labels, self.rows))
        self._alloc(1, 1)
        return out


def _resized(a: NDArray[Any], size: int, keep: int) -> NDArray[Any]:
    out = np.empty(size, dtype=a.dtype)
    out[:keep] = a[:keep]
    return out


def _trimmed(a: NDArray[Any], size: int) -> NDArray[Any]:
    if a.shape[0] > size + size // 4 + 64:
        return a[:size].copy()
    return a[:size]


class _Where:
    """Errors of the compiled path: the file, and the line of a row found by reading the file
    again from a known offset (only on an error)."""

    def __init__(self, path: PathLike, offset: int = 0, first: int = 1,
                 block_size: int | None = None) -> None:
        self.path, self.source = path, str(path)
        self.offset, self.first, self.block_size = offset, first, block_size

    def error(self, lineno: int | None, what: str) -> ValueError:
        where = f"{self.source}: line {lineno}" if lineno is not None else self.source
        return ValueError(f"{where}: {what}")

    def locate(self, row: int) -> tuple[int, bytes] | None:
        """The line number and the text of row ``row`` (counted from ``offset``)."""
        eng = _engine()
        try:
            with _Reader(self.path, self.block_size, self.offset, self.first) as r:
                while r.fill():
                    found, rows, lines, at = eng.find_row(r.buf, r.pos, r.ready, row)
                    if found >= 0:
                        eol = r.buf.find(b"\n", at, r.ready)
                        return int(r.line + found), bytes(r.buf[at:r.ready if eol < 0 else eol])
                    row -= rows
                    r.line += lines
                    r.pos = r.ready
        except _ReadFailed:
            return None
        return None

    def line_of(self, row: int) -> int | None:
        found = self.locate(row)
        return None if found is None else found[0]


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


def _row_of(indptr: NDArray[Any], p: int) -> int:
    return int(np.searchsorted(indptr, p, side="right") - 1)


def _finish(lines: Any, values: NDArray[Any], raw_indices: NDArray[Any],
            indptr: NDArray[Any], y: NDArray[Any], *, n_features: int | None, zero_based: ZeroBased,
            dtype: Any, value_of: Callable[[int, int], float] | None = None,
            own_indices: bool = False, base_out: list[int] | None = None
            ) -> tuple[Any, NDArray[np.float64]]:
    """Checks that need the whole file (or chunk), then the CSR matrix. ``lines`` tells the
    line of a row (:class:`_Lines` or :class:`_Where`); ``value_of(p, row)`` the value of stored
    entry ``p`` as parsed (float64), when ``values`` hold it converted to ``dtype`` already;
    ``own_indices``: ``raw_indices`` may be shifted in place (an array of the compiled path);
    ``base_out``: a list the index base found (0 or 1) is appended to."""
    n = int(y.shape[0])
    if n == 0:
        raise lines.error(None, "no samples found (an empty file, or only comments and blank "
                          "lines)")
    if not np.all(np.isfinite(y)):
        row = int(np.flatnonzero(~np.isfinite(y))[0])
        raise lines.error(lines.line_of(row), f"the label {y[row]} is not finite")
    with np.errstate(over="ignore"):  # a value too large for float32 is reported below
        data = np.asarray(values, dtype=dtype)
    if not _all_finite(data):
        p = int(np.flatnonzero(~np.isfinite(data))[0])
        row = _row_of(indptr, p)
        original = float(values[p]) if value_of is None else value_of(p, row)
        raise lines.error(lines.line_of(row), f"the value {original} is not finite"
                          + (f" as {np.dtype(dtype).name}" if np.isfinite(original) else ""))
    nnz = int(raw_indices.shape[0])
    lo = int(raw_indices.min()) if nnz else None
    base = _base(zero_based, lo)
    if base_out is not None:
        base_out.append(base)
    if base == 1 and nnz and lo == 0:
        row = _row_of(indptr, int(np.argmin(raw_indices)))
        raise lines.error(lines.line_of(row), _INDEX_ZERO)
    top = int(raw_indices.max()) if nnz else -1
    width = top + 1 - base if nnz else 0
    if n_features is not None:
        if width > n_features:
            row = _row_of(indptr, int(np.argmax(raw_indices)))
            raise lines.error(lines.line_of(row), f"the feature index {top} is beyond "
                              f"n_features={n_features} ({'one' if base else 'zero'}-based "
                              "indices)")
    elif width > _width_cap(nnz, n):
        row = _row_of(indptr, int(np.argmax(raw_indices)))
        raise lines.error(lines.line_of(row), _too_wide(top, width, nnz, n))
    cols = n_features if n_features is not None else max(width, 1)
    idx_dtype = np.int32 if cols <= MAX_INDEX and nnz <= MAX_INDEX else np.int64
    if own_indices and raw_indices.dtype == idx_dtype:
        indices = raw_indices
        if base:
            indices -= base
    else:
        indices = (raw_indices - base).astype(idx_dtype)
    X = sp.csr_matrix((data, indices, np.asarray(indptr, dtype=idx_dtype)), shape=(n, cols))
    X.has_sorted_indices = True  # strictly increasing in every row: canonical
    X.has_canonical_format = True
    return X, np.asarray(y, dtype=np.float64)


def _all_finite(a: NDArray[Any]) -> bool:
    with np.errstate(over="ignore", invalid="ignore"):
        total = np.add.reduce(a, axis=None, dtype=np.float64)
    return bool(np.isfinite(total)) or bool(np.all(np.isfinite(a)))


def _collect(lines: _Lines) -> tuple[NDArray[Any], NDArray[Any], NDArray[Any], NDArray[Any]]:
    """The pure-Python parse: ``(values, raw indices, indptr, labels)``."""
    return _arrays(parsed for _, _, parsed in lines.samples())


def _arrays(rows: Iterable[tuple[float, list[int], list[float]]]
            ) -> tuple[NDArray[Any], NDArray[Any], NDArray[Any], NDArray[Any]]:
    labels: list[float] = []
    indices: list[int] = []
    values: list[float] = []
    indptr = [0]
    for label, idx, val in rows:
        labels.append(label)
        indices.extend(idx)
        values.extend(val)
        indptr.append(len(indices))
    return (np.asarray(values, dtype=np.float64), np.asarray(indices, dtype=np.int64),
            np.asarray(indptr, dtype=np.int64), np.asarray(labels, dtype=np.float64))


def _check_n_features(n_features: Any) -> None:
    if n_features is not None and (not isinstance(n_features, (int, np.integer))
                                   or isinstance(n_features, bool)
                                   or not 1 <= n_features <= MAX_INDEX):
        raise ValueError(f"n_features must be an integer in [1, {MAX_INDEX}], got "
                         f"{n_features!r}")


def _parse_lines(lines: Iterable[bytes], *, n_features: int | None, zero_based: ZeroBased,
                 source: str, first_line: int = 1) -> tuple[Any, NDArray[np.float64]]:
    """The pure-Python parser over already opened lines (errors name ``source`` and the line)."""
    buf = list(lines)
    src = _Lines(source, lambda: buf, first_line)
    return _finish(src, *_collect(src), n_features=n_features, zero_based=zero_based,
                   dtype=np.float64)


def _finish_compiled(where: _Where, out: _CSRBuilder, *, n_features: int | None,
                     zero_based: ZeroBased, dtype: Any, base_out: list[int] | None = None
                     ) -> tuple[Any, NDArray[np.float64]]:
    values, indices, indptr, y = out.take()

    def value_of(p: int, row: int) -> float:
        # the parsed (float64) value, read again from the file: the compiled path keeps only
        # the value converted to dtype
        found = where.locate(row)
        parsed = _parse_line(found[1]) if found is not None else None
        return float(parsed[2][p - int(indptr[row])]) if parsed is not None else float("inf")

    return _finish(where, values, indices, indptr, y, n_features=n_features,
                   zero_based=zero_based, dtype=dtype, value_of=value_of, own_indices=True,
                   base_out=base_out)


def _size_hint(fh: IO[bytes]) -> int | None:
    """The byte size of a plain (uncompressed) file, else None."""
    if isinstance(fh, io.BufferedReader):
        try:
            return os.fstat(fh.fileno()).st_size
        except OSError:
            return None
    return None


def load_svmlight_base(path: PathLike, *, n_features: int | None = None,
                       zero_based: ZeroBased = "auto", dtype: Any = np.float64,
                       ) -> tuple[Any, NDArray[np.float64], bool]:
    """:func:`load_svmlight` and whether it read the indices as zero-based (what
    ``zero_based="auto"`` decided): a test file of the same data is read with that base, since
    it need not hold an index 0 itself."""
    base: list[int] = []
    X, y = _load_svmlight(path, n_features=n_features, zero_based=zero_based, dtype=dtype,
                          base_out=base)
    return X, y, base[0] == 0


def load_svmlight(path: PathLike, *, n_features: int | None = None,
                  zero_based: ZeroBased = "auto", dtype: Any = np.float64,
                  ) -> tuple[Any, NDArray[np.float64]]:
    """Read an svmlight / LIBSVM file (plain, ``.xz``, ``.gz`` or ``.bz2``) into ``(X, y)``.

    ``X`` is a CSR matrix, ``y`` the labels as float64. The file is parsed by a compiled loop
    (see the module docstring) whose numbers equal Python's ``float()`` to the last bit.
    ``n_features`` fixes the width (pass the training width when loading a test split);
    ``zero_based="auto"`` treats the indices as one-based (LIBSVM convention) unless an index 0
    occurs.

    Raises ``ValueError`` naming the file and line for any malformed line, non-finite label or
    value, corrupt compressed data, an empty file, an index beyond ``n_features``, or -- without
    ``n_features`` -- a largest index far beyond the data (more than
    ``max(2**20, 16 * (stored values + rows))``), which would make the model that wide.
    """
    return _load_svmlight(path, n_features=n_features, zero_based=zero_based, dtype=dtype)


def _load_svmlight(path: PathLike, *, n_features: int | None, zero_based: ZeroBased, dtype: Any,
                   base_out: list[int] | None = None) -> tuple[Any, NDArray[np.float64]]:
    _check_n_features(n_features)
    source = str(path)
    if _engine() is None:
        lines = _Lines(source, lambda: open_binary(path))
        return _finish(lines, *_collect(lines), n_features=n_features, zero_based=zero_based,
                       dtype=dtype, base_out=base_out)
    out = _CSRBuilder(dtype)
    with _Reader(path) as reader:
        size = _size_hint(reader.fh)
        try:
            if size and reader.fill():  # size the arrays from the first block's density
                error = reader.feed(out, 2**62, source)[1]
                if error is not None:
                    raise error
                if out.rows and reader.offset:
                    scale = 1.02 * size / reader.offset
                    out.reserve(int(out.rows * scale) + 16, int(out.nnz * scale) + 256)
            reader.parse(out, 2**62, source)
        except _ReadFailed:
            raise _located(path, reader.line - 1) from None
    return _finish_compiled(_Where(path), out, n_features=n_features, zero_based=zero_based,
                            dtype=dtype, base_out=base_out)


def _located(path: PathLike, after: int, one_based: bool = False) -> ValueError:
    """The error of a file whose stream failed to read after line ``after`` (all lines up to it
    parsed and checked): the Python path's first problem after that line."""
    lines = _Lines(str(path), lambda: open_binary(path))
    found = lines.first_problem(after, one_based)
    if found is not None:
        return found
    return lines.error(after + 1, "cannot read the file: corrupt or truncated data")


def scan_svmlight(path: PathLike, *, zero_based: bool = False, block: int | None = None
                  ) -> tuple[int, int, NDArray[np.float64]]:
    """One streaming pass over an svmlight file that checks every line (errors name the line),
    ``block`` bytes at a time (default :data:`BLOCK_SIZE`): ``(n_rows, n_features, sorted
    labels)``, ``n_features`` = largest index + 1, or largest index for one-based files;
    bounded like :func:`load_svmlight`."""
    rows, width, labels, _, _ = _scan(path, zero_based=zero_based, block=block)
    return rows, width, labels


class _Labels:
    """The sorted distinct labels of a stream, merged in amortised linear time."""

    def __init__(self) -> None:
        self.merged: NDArray[Any] = np.zeros(0)
        self.parts: list[NDArray[Any]] = []
        self.pending = 0

    def add(self, y: NDArray[Any]) -> None:
        u = np.unique(y)
        self.parts.append(u)
        self.pending += u.shape[0]
        if self.pending > 2 * self.merged.shape[0] + 1024:
            self.result()

    def result(self) -> NDArray[Any]:
        """The sorted distinct labels (``-0.0`` counted as ``0.0``)."""
        if self.parts:
            merged = np.unique(np.concatenate([self.merged, *self.parts]))
            self.merged = merged + 0.0 if merged.dtype.kind == "f" else merged
            self.parts, self.pending = [], 0
        return self.merged


def _scan(path: PathLike, *, zero_based: ZeroBased = False, block: int | None = None
          ) -> tuple[int, int, NDArray[np.float64], int, bool]:
    """:func:`scan_svmlight`, the number of stored values and whether the indices are
    zero-based: ``zero_based="auto"`` decides it as :func:`load_svmlight` does, one-based
    unless an index 0 occurs (so the whole file is scanned before the base is known)."""
    source = str(path)
    one_based = zero_based is False
    if _engine() is None:
        return _py_scan(path, zero_based)
    eng = _engine()
    out = _CSRBuilder(np.float64)
    top, top_line, rows, nnz = -1, None, 0, 0
    low: int | None = None
    labels = _Labels()
    with _Reader(path, block) as reader:
        while True:
            try:
                if not reader.fill():
                    break
            except _ReadFailed:
                raise _located(path, reader.line - 1, one_based) from None
            start, line = reader.pos, reader.line
            out.reset()
            error = reader.feed(out, 2**62, source)[1]
            idx = out.indices[:out.nnz]
            indptr = out.indptr[:out.rows + 1]
            if out.nnz:  # the rows before a bad line are checked first: errors in line order
                if one_based and int(idx.min()) == 0:
                    row = _row_of(indptr, int(np.argmin(idx)))
                    found = eng.find_row(reader.buf, start, reader.pos, row)[0]
                    raise ValueError(f"{source}: line {line + found}: {_INDEX_ZERO}")
                low = int(idx.min()) if low is None else min(low, int(idx.min()))
                m = int(idx.max())
                if m > top:
                    top = m
                    found = eng.find_row(reader.buf, start, reader.pos,
                                         _row_of(indptr, int(np.argmax(idx))))[0]
                    top_line = line + found
            rows += out.rows
            nnz += out.nnz
            if out.rows:
                labels.add(out.labels[:out.rows])
            if error is not None:
                raise error
    if rows == 0:
        raise ValueError(f"{source}: no samples found (an empty file, or only comments and "
                         "blank lines)")
    zero = _base(zero_based, low) == 0
    width = top + 1 if zero else top
    if width > _width_cap(nnz, rows):
        raise ValueError(f"{source}: line {top_line}: {_too_wide(top, width, nnz, rows)}")
    return rows, max(width, 1), labels.result(), nnz, zero


def _py_scan(path: PathLike, zero_based: ZeroBased
             ) -> tuple[int, int, NDArray[np.float64], int, bool]:
    """The pure-Python scan (the reference twin of the compiled one)."""
    whole = _Lines(str(path), lambda: open_binary(path))
    top, top_line, rows, nnz = -1, 0, 0, 0
    low: int | None = None
    labels: set[float] = set()
    for lineno, _, (label, idx, _vals) in whole.samples(one_based=zero_based is False):
        if idx and idx[-1] > top:
            top, top_line = idx[-1], lineno
        if idx:
            low = min(idx) if low is None else min(low, min(idx))
        rows += 1
        nnz += len(idx)
        labels.add(label)
    if rows == 0:
        raise whole.error(None, "no samples found (an empty file, or only comments and blank "
                          "lines)")
    zero = _base(zero_based, low) == 0
    width = top + 1 if zero else top
    if width > _width_cap(nnz, rows):
        raise whole.error(top_line, _too_wide(top, width, nnz, rows))
    return (rows, max(width, 1), np.unique(np.array(list(labels), dtype=np.float64) + 0.0), nnz,
            zero)


def count_svmlight_features(path: PathLike, *, zero_based: bool = False) -> int:
    """Number of features of an svmlight file (one streaming pass; see :func:`scan_svmlight`)."""
    return scan_svmlight(path, zero_based=zero_based)[1]


def _check_chunk_size(chunk_size: Any) -> int:
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer)) \
            or chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}")
    return int(chunk_size)


def iter_svmlight_chunks(path: PathLike, chunk_size: int = 100_000, *,
                         n_features: int | None = None, zero_based: bool = False,
                         dtype: Any = np.float64,
                         ) -> Iterator[tuple[Any, NDArray[np.float64]]]:
    """Stream an svmlight file as ``(X_chunk, y_chunk)`` pairs of at most ``chunk_size`` rows,
    for ``partial_fit`` on files larger than memory.

    Every chunk has ``n_features`` columns (found by a first, checking pass over the file when
    not given). Indices are one-based (LIBSVM) unless ``zero_based=True``. Errors name the file
    and line, as :func:`load_svmlight`'s. (:func:`stream_svmlight` is the re-iterable source
    that reads ahead in a thread and can cache the parsed chunks.)
    """
    chunk_size = _check_chunk_size(chunk_size)
    if n_features is None:
        n_features = count_svmlight_features(path, zero_based=zero_based)
    _check_n_features(n_features)
    return _chunks(path, chunk_size, n_features=n_features, zero_based=zero_based, dtype=dtype)


def _chunks(path: PathLike, chunk_size: int, *, n_features: int, zero_based: bool, dtype: Any,
            block_size: int | None = None, stop: Callable[[], bool] | None = None
            ) -> Iterator[tuple[Any, NDArray[np.float64]]]:
    """The chunks of :func:`iter_svmlight_chunks` (arguments checked); ``stop()`` true ends the
    pass early (a reader thread told to stop)."""
    if _engine() is None:
        yield from _py_chunks(path, chunk_size, n_features=n_features, zero_based=zero_based,
                              dtype=dtype)
        return
    eng = _engine()
    source = str(path)
    rows_hint, nnz_hint, sized = min(chunk_size, 4096), 65536, False
    with _Reader(path, block_size) as reader:
        while stop is None or not stop():
            out = _CSRBuilder(dtype, rows_hint, nnz_hint)
            offset, first = reader.offset, reader.line
            try:
                status = reader.parse(out, chunk_size, source, sized)
            except _ReadFailed:
                reader.close()
                # the Python path reads on from this chunk's first line and raises the error
                # at the line it reaches (or, should the stream read now, yields the rest)
                yield from _py_chunks(path, chunk_size, n_features=n_features,
                                      zero_based=zero_based, dtype=dtype, from_line=first)
                return
            if out.rows:
                # the next chunk's arrays: sized from this one (a little room to spare)
                rows_hint, sized = chunk_size, True
                nnz_hint = int(out.nnz * chunk_size / out.rows * 1.05) + 64
                yield _finish_compiled(_Where(path, offset, first, block_size), out,
                                       n_features=n_features, zero_based=zero_based,
                                       dtype=dtype)
            if status == eng.DONE:
                return


def _py_chunks(path: PathLike, chunk_size: int, *, n_features: int, zero_based: bool,
               dtype: Any, from_line: int = 1) -> Iterator[tuple[Any, NDArray[np.float64]]]:
    """The pure-Python chunks (the reference twin), from line ``from_line`` on (a chunk
    boundary): lines are parsed as they are read; a chunk's own checks run when it is
    complete."""
    source = str(path)
    whole = _Lines(source, lambda: open_binary(path))
    buf: list[bytes] = []
    rows: list[tuple[float, list[int], list[float]]] = []
    first = from_line
    for lineno, raw in whole.numbered():
        if lineno < from_line:
            continue
        try:
            parsed = _parse_line(raw)
        except ValueError as exc:
            raise whole.error(lineno, str(exc)) from None
        buf.append(raw)
        if parsed is not None:
            rows.append(parsed)
        if len(rows) >= chunk_size:
            yield _py_chunk(buf, rows, first, source, n_features, zero_based, dtype)
            buf, rows, first = [], [], lineno + 1
    if rows:
        yield _py_chunk(buf, rows, first, source, n_features, zero_based, dtype)


def _py_chunk(buf: list[bytes], rows: list[tuple[float, list[int], list[float]]], first: int,
              source: str, n_features: int, zero_based: bool, dtype: Any
              ) -> tuple[Any, NDArray[np.float64]]:
    lines = _Lines(source, lambda: buf, first)
    return _finish(lines, *_arrays(rows), n_features=n_features, zero_based=zero_based,
                   dtype=dtype)
