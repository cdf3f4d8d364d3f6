"""Streams of tables: CSV / TSV files and Parquet files, chunk by chunk.

:func:`stream_csv` types the columns explicitly: the label column (``target``), the columns
listed in ``categorical`` -- one-hot encoded through a vocabulary (found by the scan, or given)
or hashed into ``n_bags`` indicators each, as :class:`~sqnopt.datasets.CTRFeaturizer` encodes
them -- and every other column numeric: a value that does not parse as a finite number there
is an error naming the line, the column, the value and the fix. The feature space is fixed
before the first chunk: the numeric columns first, then one block per categorical column.
Without categorical columns the chunks are dense arrays, else CSR.

Reading: pyarrow's streaming CSV reader (C++, off the GIL) when pyarrow is installed, else
Python's ``csv`` module. The Python reader is the reference: whenever the C++ reader meets
anything unusual -- a malformed row, a value it does not convert, a missing or non-finite
number, an empty label -- the pass continues with the Python reader from the first row of
the current chunk, so that what is read and every error message are the Python reader's.

:func:`stream_parquet` reads a Parquet file by record batches (pyarrow): either sparse rows --
a label column and a ``list<integer>`` column of feature indices (increasing within a row),
optionally a ``list<number>`` column of their values (else 1) -- or dense numeric columns.
"""

from __future__ import annotations

import csv
import io
import math
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from sqnopt.data._dataset import LabelKind
from sqnopt.datasets import _binary
from sqnopt.datasets._io import (
    MAX_INDEX,
    READ_ERRORS,
    PathLike,
    open_binary,
)
from sqnopt.datasets._stream import CacheSpec, Chunk, ChunkStream, _rechunk
from sqnopt.datasets._table import (
    MISSING_MARKERS,
    TARGET_NAMES,
    _show,
    categorical_fix,
    check_boolean_labels,
    check_header,
    missing_label_error,
    missing_number_error,
    table_delimiter,
)

__all__ = ["stream_csv", "stream_parquet"]

_EXTRA = "pip install 'sqnopt[parquet]'"


def _pyarrow() -> Any:
    """The pyarrow module, or None when it is not installed (tests replace this)."""
    try:
        import pyarrow
    except ImportError:
        return None
    return pyarrow


def _require_pyarrow(what: str) -> Any:
    pa = _pyarrow()
    if pa is None:
        raise ImportError(f"{what} needs pyarrow, which is not installed: {_EXTRA}")
    return pa


def _check_file(path: PathLike) -> Path:
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"data file {str(p)!r} does not exist")
    if p.is_dir():
        raise IsADirectoryError(f"{str(p)!r} is a directory, not a data file")
    return p


def _missing(value: str) -> bool:
    """An empty cell or a missing marker (:data:`~sqnopt.datasets.MISSING_MARKERS`): the rule
    of :func:`~sqnopt.datasets.load_table`, so that a streamed table and the same table read
    whole give the same features (a streamed fit is evaluated on the table read whole)."""
    return value.strip().lower() in MISSING_MARKERS


def _bag(value: str, seed: int, n_bags: int) -> int:
    """The hash bag of a categorical value: :class:`CTRFeaturizer`'s (CRC-32 with the seed)."""
    return zlib.crc32(f"{seed}\x1f{value}".encode()) % n_bags


def _float(value: str) -> float | None:
    try:
        x = float(value)
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def _csr(numeric: NDArray[Any], codes: list[NDArray[np.int64]], offsets: Sequence[int],
         n_features: int, dtype: Any) -> Any:
    """CSR rows of numeric columns (zeros not stored) followed by one indicator per categorical
    code (``-1``: missing, no indicator); ``offsets``: each categorical block's first column.
    Column indices increase within a row (blocks in order): canonical without sorting."""
    n, p = numeric.shape
    if codes:
        cat = np.column_stack(codes)
        cols = np.hstack([np.broadcast_to(np.arange(p), (n, p)),
                          cat + np.asarray(offsets, dtype=np.int64)])
        vals = np.hstack([numeric, np.ones(cat.shape, dtype=numeric.dtype)])
        mask = np.hstack([numeric != 0, cat >= 0])
    else:
        cols, vals, mask = np.broadcast_to(np.arange(p), (n, p)), numeric, numeric != 0
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(mask.sum(axis=1), out=indptr[1:])
    idx_dtype = np.int32 if indptr[-1] <= MAX_INDEX else np.int64
    X = sp.csr_matrix((vals[mask].astype(dtype), cols[mask].astype(idx_dtype),
                       indptr.astype(idx_dtype)), shape=(n, n_features))
    X.has_canonical_format = True
    return X


# ------------------------------------------------------------------------- CSV
class _CSVStream(ChunkStream):
    def __init__(self, path: PathLike, *, target: str | None, categorical: Sequence[str],
                 encoding: str, n_bags: int, seed: int, vocabularies: Mapping[str, Any] | None,
                 delimiter: str | None, chunk_size: int, classes: ArrayLike | None, dtype: Any,
                 cache: CacheSpec, prefetch: int, engine: str, block_size: int,
                 label_kind: LabelKind) -> None:
        p = _check_file(path)
        if encoding not in ("hash", "onehot"):
            raise ValueError(f"encoding must be 'hash' or 'onehot', got {encoding!r}")
        if engine not in ("auto", "pyarrow", "python"):
            raise ValueError(f"engine must be 'auto', 'pyarrow' or 'python', got {engine!r}")
        if engine == "pyarrow":
            _require_pyarrow("stream_csv(engine='pyarrow')")
        if isinstance(n_bags, bool) or not isinstance(n_bags, (int, np.integer)) or n_bags < 1:
            raise ValueError(f"n_bags must be a positive integer, got {n_bags!r}")
        if isinstance(categorical, str):
            raise TypeError("categorical must be a list of column names, not a string")
        self.path = p
        self.delimiter = delimiter or table_delimiter(p) or ","
        self.encoding = encoding
        self.n_bags, self.seed = int(n_bags), int(seed)
        self._prefix_crc = zlib.crc32(f"{self.seed}\x1f".encode())
        self.engine = engine
        self.block_size = int(block_size)
        header = self._header()
        target = _pick_target(header, target, str(p))
        missing = [c for c in categorical if c not in header]
        if missing:
            raise ValueError(f"{p}: categorical columns {missing} are not in the header "
                             f"(columns: {', '.join(header[:20])})")
        if target in categorical:
            raise ValueError(f"{p}: the label column {target!r} cannot be categorical")
        self.target = target
        self.categorical = [h for h in header if h in set(categorical)]
        self.numeric = [h for h in header if h != target and h not in set(categorical)]
        if not self.numeric and not self.categorical:
            raise ValueError(f"{p}: no feature columns besides the label {target!r}")
        self.header = header
        #: ``{column: {value: index}}`` of the one-hot encoding (found by the scan when not
        #: given; empty for hashing).
        self.vocabularies: dict[str, dict[str, int]] | None = None
        if vocabularies is not None:
            if encoding != "onehot":
                raise ValueError("vocabularies= is for encoding='onehot'")
            self.vocabularies = {c: _vocabulary(vocabularies, c, str(p))
                                 for c in self.categorical}
        elif not self.categorical or encoding == "hash":
            self.vocabularies = {}
        width = None if self.vocabularies is None else self._width()
        super().__init__(source=str(p), chunk_size=chunk_size, n_features=width,
                         classes=classes, dtype=dtype, prefetch=prefetch, cache=cache,
                         cache_base=p, label_kind=label_kind)
        self._given_features = None

    # ---------------------------------------------------------------- layout
    def _header(self) -> list[str]:
        fh = open_binary(self.path)
        try:
            text = io.TextIOWrapper(fh, encoding="utf-8-sig", errors="strict", newline="")
            try:
                header = next(csv.reader(text, delimiter=self.delimiter, strict=True))
            except StopIteration:
                raise ValueError(f"{self.path}: the file is empty (a header row naming the "
                                 "columns is required)") from None
            except (csv.Error, UnicodeDecodeError) as exc:
                raise ValueError(f"{self.path}: line 1: not a valid header ({exc})") from None
        except READ_ERRORS as exc:
            if isinstance(exc, (FileNotFoundError, IsADirectoryError)):
                raise
            raise ValueError(f"{self.path}: line 1: cannot read the file: corrupt or truncated "
                             f"data ({type(exc).__name__}: {exc})") from None
        finally:
            fh.close()
        return check_header(header, self.delimiter, str(self.path))

    def _block_widths(self) -> list[int]:
        if self.encoding == "hash":
            return [self.n_bags] * len(self.categorical)
        assert self.vocabularies is not None
        return [len(self.vocabularies[c]) + 1 for c in self.categorical]

    def _width(self) -> int:
        return len(self.numeric) + sum(self._block_widths())

    def _offsets(self) -> list[int]:
        out, at = [], len(self.numeric)
        for w in self._block_widths():
            out.append(at)
            at += w
        return out

    @property
    def sparse(self) -> bool:
        return bool(self.categorical)

    def _key(self) -> str:
        vocab = sorted((c, sorted(v.items())) for c, v in (self.vocabularies or {}).items())
        return (super()._key() + f"|csv|{self.delimiter!r}|{self.target}|{self.numeric}|"
                f"{self.categorical}|{self.encoding}|{self.n_bags}|{self.seed}|"
                f"{zlib.crc32(repr(vocab).encode())}")

    def _fingerprint(self) -> _binary.Fingerprint:
        return _binary.fingerprint(self.path)

    def _use_arrow(self) -> bool:
        return self.engine != "python" and _pyarrow() is not None

    def _numeric_labels(self) -> bool:
        return self.classes.dtype.kind in "biuf"

    # ---------------------------------------------------------------- the Python reader
    def _rows(self, skip: int = 0) -> Iterator[tuple[int, list[str]]]:
        """``(line number, fields)`` of the data rows after the first ``skip``; errors name
        the line."""
        source, line = str(self.path), 1
        fh = open_binary(self.path)
        try:
            text = io.TextIOWrapper(fh, encoding="utf-8-sig", errors="strict", newline="")
            reader = csv.reader(text, delimiter=self.delimiter, strict=True)
            next(reader)
            width = len(self.header)
            k = 0
            for row in reader:
                line = reader.line_num
                if not row or (len(row) == 1 and not row[0].strip()):
                    continue
                if len(row) != width:
                    raise ValueError(f"{source}: line {line} has {len(row)} fields, the header "
                                     f"{width} (delimiter {self.delimiter!r}; a quoted field "
                                     "with the delimiter inside?)")
                if k >= skip:
                    yield line, row
                k += 1
        except csv.Error as exc:
            raise ValueError(f"{source}: line {line}: not a valid delimited file ({exc})"
                             ) from None
        except UnicodeDecodeError as exc:
            raise ValueError(f"{source}: near line {line}: not UTF-8 text ({exc.reason})"
                             ) from None
        except READ_ERRORS as exc:
            if isinstance(exc, (FileNotFoundError, IsADirectoryError)):
                raise
            raise ValueError(f"{source}: line {line}: cannot read the file: corrupt or "
                             f"truncated data ({type(exc).__name__}: {exc})") from None
        finally:
            fh.close()

    def _label(self, value: str, line: int, numeric: bool) -> Any:
        v = value.strip()
        if _missing(v):
            raise missing_label_error(str(self.path), line, self.target, v)
        if not numeric:
            return v
        x = _float(v)
        if x is None:
            raise ValueError(f"{self.path}: line {line}: the label {v[:30]!r} is not a finite "
                             "number (" + ("a regression loss needs a real-valued target in "
                                           "every row" if self.regression else
                                           "the classes are numbers") + ")")
        return x

    def _number(self, value: str, line: int, column: str) -> float:
        x = _float(value)
        if x is None:
            if _missing(value):
                raise missing_number_error(str(self.path), line, column, value)
            raise ValueError(f"{self.path}: line {line}: the numeric column {column!r} holds "
                             f"{_show(value)}, not a finite number: fix the value, or "
                             f"{categorical_fix(column)}")
        return x

    def _code(self, column: str, value: str, cache: dict[str, int]) -> int:
        code = cache.get(value)
        if code is None:
            if _missing(value):
                code = -1
            elif self.encoding == "hash":
                code = _bag(value, self.seed, self.n_bags)
            else:
                assert self.vocabularies is not None
                vocab = self.vocabularies[column]
                code = vocab.get(value, len(vocab))
            cache[value] = code
        return code

    def _py_chunks(self, stop: Callable[[], bool], skip: int = 0) -> Iterator[Chunk]:
        assert self.chunk_size is not None
        pos = {h: j for j, h in enumerate(self.header)}
        t = pos[self.target]
        num = [pos[h] for h in self.numeric]
        cat = [pos[h] for h in self.categorical]
        numeric_labels = self._numeric_labels()
        caches: list[dict[str, int]] = [{} for _ in cat]
        labels: list[Any] = []
        values: list[list[float]] = []
        codes: list[list[int]] = []
        for line, row in self._rows(skip):
            labels.append(self._label(row[t], line, numeric_labels))
            values.append([self._number(row[j], line, self.header[j]) for j in num])
            codes.append([self._code(self.header[j], row[j], c) for j, c in zip(cat, caches)])
            if len(labels) == self.chunk_size:
                yield self._chunk(labels, values, codes)
                labels, values, codes = [], [], []
                if stop():
                    return
        if labels:
            yield self._chunk(labels, values, codes)

    def _chunk(self, labels: list[Any], values: list[list[float]],
               codes: list[list[int]]) -> Chunk:
        n = len(labels)
        numeric = np.array(values, dtype=np.float64).reshape(n, len(self.numeric))
        y = np.array(labels) if labels else np.zeros(0)
        if not self.categorical:
            return np.ascontiguousarray(numeric, dtype=self.dtype), y
        c = np.array(codes, dtype=np.int64).reshape(n, len(self.categorical))
        return _csr(numeric, list(c.T), self._offsets(), self.n_features, self.dtype), y

    def _py_scan(self) -> tuple[int, set[str], list[set[str]]]:
        """Rows, the distinct (stripped) labels and the categorical values (for one-hot)."""
        pos = {h: j for j, h in enumerate(self.header)}
        t = pos[self.target]
        cat = [pos[h] for h in self.categorical] if self.vocabularies is None else []
        labels: set[str] = set()
        seen: list[set[str]] = [set() for _ in cat]
        rows = 0
        for line, row in self._rows():
            label = self._label(row[t], line, numeric=False)
            if not self.regression:     # (real-valued targets: no classes to find)
                labels.add(label)
            for j, s in zip(cat, seen):
                if not _missing(row[j]):
                    s.add(row[j])
            rows += 1
        return rows, labels, seen

    # ---------------------------------------------------------------- the C++ reader
    def _arrow_reader(self, columns: list[str], types: dict[str, Any]) -> Any:
        pa = _pyarrow()
        import pyarrow.csv as pacsv

        read = pacsv.ReadOptions(use_threads=False, block_size=self.block_size)
        parse = pacsv.ParseOptions(delimiter=self.delimiter)
        convert = pacsv.ConvertOptions(column_types=types, include_columns=columns,
                                       null_values=[""], strings_can_be_null=True)
        fh = open_binary(self.path)
        source = str(self.path) if isinstance(fh, io.BufferedReader) else fh
        if source is not fh:
            fh.close()
        try:
            return pacsv.open_csv(source, read_options=read, parse_options=parse,
                                  convert_options=convert), fh
        except pa.ArrowException:
            fh.close()
            raise

    def _arrow_tables(self, columns: list[str], types: dict[str, Any],
                      size: int) -> Iterator[Any]:
        """Tables of ``size`` rows (the last: the rest)."""
        pa = _pyarrow()
        reader, fh = self._arrow_reader(columns, types)
        try:
            pending: list[Any] = []
            have = 0
            for batch in reader:
                pending.append(batch)
                have += batch.num_rows
                while have >= size:
                    table = pa.Table.from_batches(pending)
                    yield table.slice(0, size)
                    rest = table.slice(size)
                    pending, have = rest.to_batches(), rest.num_rows
            if have:
                yield pa.Table.from_batches(pending)
        finally:
            fh.close()

    def _arrow_chunk(self, table: Any) -> Chunk | None:
        """The chunk of a table, or None when the Python reader must read it (anything
        unusual: a null or non-finite number, an empty label)."""
        import pyarrow.compute as pc

        n = table.num_rows
        label = table.column(self.target)
        if label.null_count:
            return None
        if self._numeric_labels():
            y = label.to_numpy()
            if not np.all(np.isfinite(y)):
                return None
        else:
            trimmed = pc.utf8_trim_whitespace(label)
            if pc.any(pc.equal(pc.utf8_length(trimmed), 0)).as_py():
                return None
            y = trimmed.to_numpy(zero_copy_only=False).astype(str)
        numeric = np.empty((n, len(self.numeric)))
        for j, h in enumerate(self.numeric):
            col = table.column(h)
            if col.null_count:
                return None
            numeric[:, j] = col.to_numpy()
        if not np.all(np.isfinite(numeric)):
            return None
        if not self.categorical:
            return np.ascontiguousarray(numeric, dtype=self.dtype), y
        codes = [self._arrow_codes(h, table.column(h).combine_chunks())
                 for h in self.categorical]
        return _csr(numeric, codes, self._offsets(), self.n_features, self.dtype), y

    def _arrow_codes(self, column: str, arr: Any) -> NDArray[np.int64]:
        """The codes of a string column (-1: missing): hashed by the compiled CRC-32 over the
        Arrow buffers, or looked up in the vocabulary through the column's dictionary."""
        import pyarrow.compute as pc

        if self.encoding == "onehot":
            enc = pc.dictionary_encode(arr)
            lookup = np.array([self._code(column, str(v), {}) for v in
                               enc.dictionary.to_pylist()] + [-1], dtype=np.int64)
            slots = np.asarray(enc.indices.fill_null(-1).to_numpy(), dtype=np.intp)
            codes: NDArray[np.int64] = lookup[slots]  # slot -1: the missing value's -1
            return codes
        from sqnopt.datasets._hashing import hash_bags

        pa = _pyarrow()
        if not pa.types.is_string(arr.type):
            arr = arr.cast(pa.large_string()) if pa.types.is_large_string(arr.type) \
                else arr.cast(pa.string())
        _, raw_offsets, raw_data = arr.buffers()
        wide = pa.types.is_large_string(arr.type)
        offsets = np.frombuffer(raw_offsets, dtype=np.int64 if wide else np.int32)[
            arr.offset:arr.offset + len(arr) + 1].astype(np.int64)
        data = (np.frombuffer(raw_data, dtype=np.uint8) if raw_data is not None
                else np.zeros(0, dtype=np.uint8))
        out = np.empty(len(arr), dtype=np.int64)
        hash_bags(data, offsets, self._prefix_crc, self.n_bags, out)
        if arr.null_count:
            out[arr.is_null().to_numpy(zero_copy_only=False)] = -1
        marker = pc.is_in(pc.utf8_lower(pc.utf8_trim_whitespace(arr)),
                          value_set=pa.array(sorted(MISSING_MARKERS), type=pa.string()))
        out[marker.fill_null(False).to_numpy(zero_copy_only=False)] = -1
        for i in np.flatnonzero(out == -2):  # non-ASCII: Unicode whitespace is Python's call
            out[i] = self._code(column, arr[int(i)].as_py(), {})
        return out

    def _arrow_types(self) -> dict[str, Any]:
        pa = _pyarrow()
        types = {h: pa.float64() for h in self.numeric}
        types.update({h: pa.string() for h in self.categorical})
        types[self.target] = pa.float64() if self._numeric_labels() else pa.string()
        return types

    def _arrow_chunks(self, stop: Callable[[], bool]) -> Iterator[Chunk]:
        pa = _pyarrow()
        assert self.chunk_size is not None
        done = 0
        try:
            for table in self._arrow_tables(self.header, self._arrow_types(), self.chunk_size):
                chunk = self._arrow_chunk(table)
                if chunk is None:
                    break
                yield chunk
                done += table.num_rows
                if stop():
                    return
            else:
                return
        except (pa.ArrowException, *READ_ERRORS) as exc:
            if isinstance(exc, (FileNotFoundError, IsADirectoryError)):
                raise
        # something unusual: the Python reader reads on from this chunk
        yield from self._py_chunks(stop, skip=done)

    def _arrow_scan(self) -> tuple[int, set[str], list[set[str]]] | None:
        pa = _pyarrow()
        import pyarrow.compute as pc

        cats = self.categorical if self.vocabularies is None else []
        types = {self.target: pa.string(), **{h: pa.string() for h in cats}}
        labels: set[str] = set()
        seen: list[set[str]] = [set() for _ in cats]
        rows = 0
        try:
            for table in self._arrow_tables([self.target, *cats], types, 1 << 20):
                label = table.column(self.target)
                if label.null_count:
                    return None
                uniq = pc.unique(pc.utf8_trim_whitespace(label)).to_pylist()
                if any(_missing(u) for u in uniq):
                    return None             # the Python reader names the line
                if not self.regression:
                    labels.update(uniq)
                for h, s in zip(cats, seen):
                    s.update(v for v in pc.unique(table.column(h)).to_pylist()
                             if v is not None and not _missing(v))
                rows += table.num_rows
        except (pa.ArrowException, *READ_ERRORS) as exc:
            if isinstance(exc, (FileNotFoundError, IsADirectoryError)):
                raise
            return None
        return rows, labels, seen

    # ---------------------------------------------------------------- the stream
    def _read(self, stop: Callable[[], bool]) -> Iterator[Chunk]:
        if self._use_arrow():
            return self._arrow_chunks(stop)
        return self._py_chunks(stop)

    def _scan(self) -> tuple[int | None, int, NDArray[Any], int | None]:
        found = self._arrow_scan() if self._use_arrow() else None
        if found is None:
            found = self._py_scan()
        rows, labels, seen = found
        if rows == 0:
            raise ValueError(f"{self.path}: no data rows below the header")
        if self.vocabularies is None:
            self.vocabularies = {c: {v: i for i, v in enumerate(sorted(s))}
                                 for c, s in zip(self.categorical, seen)}
        numbers = [_float(v) for v in labels]
        classes: NDArray[Any]
        if self._given_classes:
            classes = self.classes
        elif all(x is not None for x in numbers):
            classes = np.unique(np.array(numbers, dtype=np.float64) + 0.0)
        else:
            check_boolean_labels(labels, str(self.path), self.target)
            classes = np.array(sorted(labels))
        return rows, self._width(), classes, None


def _vocabulary(vocabularies: Mapping[str, Any], column: str, source: str) -> dict[str, int]:
    """One column's vocabulary as ``{value: index}``, from a list of values (in order) or a
    ``{value: index}`` mapping (ordered by index)."""
    if column not in vocabularies:
        raise ValueError(f"{source}: vocabularies has no entry for the categorical column "
                         f"{column!r}")
    vocab = vocabularies[column]
    values = sorted(vocab, key=lambda k: vocab[k]) if isinstance(vocab, Mapping) else list(vocab)
    return {str(v): i for i, v in enumerate(values)}


def _pick_target(header: Sequence[str], target: str | None, source: str) -> str:
    if target is not None:
        if target not in header:
            raise ValueError(f"{source}: no column named {target!r} for the label (columns: "
                             f"{', '.join(header[:20])})")
        return target
    lower = {h.lower(): h for h in header}
    for name in TARGET_NAMES:
        if name in lower:
            return lower[name]
    raise ValueError(f"{source}: no label column: name one with target=COLUMN, or call it one "
                     f"of {', '.join(TARGET_NAMES)} (columns: {', '.join(header[:20])})")


def stream_csv(path: PathLike, *, target: str | None = None, categorical: Sequence[str] = (),
               encoding: str = "hash", n_bags: int = 2**13, seed: int = 0,
               vocabularies: Mapping[str, Any] | None = None, delimiter: str | None = None,
               chunk_size: int = 100_000, classes: ArrayLike | None = None,
               dtype: Any = np.float64, cache: CacheSpec = False, prefetch: int = 2,
               engine: str = "auto", block_size: int = 1 << 22,
               label_kind: LabelKind = "multiclass") -> ChunkStream:
    """A stream over a CSV / TSV file with a header row (plain or compressed).

    Parameters
    ----------
    path
        The file; the delimiter comes from its name (``.csv``: ``,``; ``.tsv`` / ``.tab``:
        tab) unless ``delimiter`` is given.
    target
        The label column; ``None``: the first of ``label``, ``target``, ``y``, ``class``.
    categorical
        The categorical columns; every other column is numeric, and a value there that is not
        a finite number (an empty field included) is an error naming the line, the column and
        the value.
    encoding
        ``"hash"``: ``n_bags`` indicators per categorical column, the value's bag by CRC-32
        with ``seed`` (as :class:`~sqnopt.datasets.CTRFeaturizer`; no vocabulary, so the
        width is known up front and unseen values get a bag); ``"onehot"``: one indicator per
        value of a vocabulary (found by the scan, or ``vocabularies=``) plus one for values
        outside it. An empty field is missing: no indicator.
    vocabularies
        For ``"onehot"``: ``{column: values}`` -- e.g. a training stream's
        :attr:`vocabularies`, so that a test file gets the same columns.
    chunk_size, classes, dtype, cache, prefetch
        As :func:`stream_svmlight`. Labels are numbers when every label is one (or the given
        classes are numbers), else strings; the binary cache needs numbers.
    engine
        ``"auto"``: pyarrow's C++ reader when pyarrow is installed (``sqnopt[parquet]``),
        else Python's ``csv``; ``"python"`` or ``"pyarrow"`` to choose. Both read the same
        chunks and raise the same errors (see the module docstring).
    block_size
        Bytes the C++ reader parses at a time.
    label_kind
        ``"regression"``: the label column holds real-valued targets (for a regression loss),
        each a finite number, read as float64; no classes. Else classes (``"multiclass"``,
        the default, or ``"binary"``).

    The chunks: dense arrays of the numeric columns when no column is categorical, else CSR:
    the numeric columns first (zeros not stored), then a block per categorical column.
    """
    return _CSVStream(path, target=target, categorical=categorical, encoding=encoding,
                      n_bags=n_bags, seed=seed, vocabularies=vocabularies, delimiter=delimiter,
                      chunk_size=chunk_size, classes=classes, dtype=dtype, cache=cache,
                      prefetch=prefetch, engine=engine, block_size=block_size,
                      label_kind=label_kind)


# ------------------------------------------------------------------------- Parquet
class _ParquetStream(ChunkStream):
    def __init__(self, path: PathLike, *, target: str | None, indices: str, values: str | None,
                 features: Sequence[str] | None, n_features: int | None,
                 classes: ArrayLike | None, chunk_size: int, dtype: Any, cache: CacheSpec,
                 prefetch: int, label_kind: LabelKind = "multiclass") -> None:
        _require_pyarrow("stream_parquet")
        import pyarrow.parquet as pq

        p = _check_file(path)
        try:
            meta = pq.ParquetFile(p)
        except Exception as exc:  # pyarrow raises several types for a file that is not Parquet
            raise ValueError(f"{p}: not a Parquet file ({type(exc).__name__}: {exc})") from None
        schema = meta.schema_arrow
        names = list(schema.names)
        self.path = p
        self.target = _pick_target(names, target, str(p))
        import pyarrow as pa

        def kind(name: str) -> str:
            t = schema.field(name).type
            if pa.types.is_list(t) or pa.types.is_large_list(t):
                v = t.value_type
                if pa.types.is_integer(v):
                    return "int-list"
                return "number-list" if pa.types.is_floating(v) or pa.types.is_integer(v) \
                    else "list"
            if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t):
                return "number"
            return str(t)

        self.indices: str | None = None
        self.values: str | None = None
        if indices in names and features is None:
            if kind(indices) != "int-list":
                raise ValueError(f"{p}: the column {indices!r} is {schema.field(indices).type}; "
                                 "sparse rows need a list of integer feature indices")
            self.indices = indices
            if values is not None and values in names:
                if kind(values) not in ("number-list", "int-list"):
                    raise ValueError(f"{p}: the column {values!r} is "
                                     f"{schema.field(values).type}; the values of sparse rows "
                                     "need a list of numbers")
                self.values = values
            self.features: list[str] = []
        else:
            cols = [c for c in names if c != self.target] if features is None else list(features)
            absent = [c for c in cols if c not in names]
            if absent:
                raise ValueError(f"{p}: no columns {absent} (columns: {', '.join(names[:20])})")
            bad = [f"{c} ({schema.field(c).type})" for c in cols if kind(c) != "number"]
            if bad:
                raise ValueError(f"{p}: the feature columns {bad[:5]} are not numeric; "
                                 "stream_parquet reads numeric columns or sparse rows (a list "
                                 f"column {indices!r} of feature indices): encode the others "
                                 "first (e.g. with stream_csv(categorical=...) on a CSV)")
            if not cols:
                raise ValueError(f"{p}: no feature columns besides the label {self.target!r}")
            self.features = cols
        width = len(self.features) if self.indices is None else n_features
        super().__init__(source=str(p), chunk_size=chunk_size, n_features=width,
                         classes=classes, dtype=dtype, prefetch=prefetch, cache=cache,
                         cache_base=p, label_kind=label_kind)
        self._given_features = n_features
        self._n_rows = int(meta.metadata.num_rows)

    @property
    def sparse(self) -> bool:
        return self.indices is not None

    def _fingerprint(self) -> _binary.Fingerprint:
        return _binary.fingerprint(self.path)

    def _key(self) -> str:
        return (super()._key() + f"|parquet|{self.target}|{self.indices}|{self.values}|"
                f"{self.features}")

    def _columns(self) -> list[str]:
        if self.indices is not None:
            return [self.target, self.indices] + ([self.values] if self.values else [])
        return [self.target, *self.features]

    def _batches(self, columns: list[str], size: int) -> Iterator[Any]:
        import pyarrow.parquet as pq

        with pq.ParquetFile(self.path) as f:
            yield from f.iter_batches(batch_size=size, columns=columns, use_threads=False)

    def _labels(self, batch: Any, row0: int) -> NDArray[Any]:
        col = batch.column(self.target)
        if col.null_count:
            import pyarrow.compute as pc

            i = int(pc.index(pc.is_null(col), True).as_py())
            raise ValueError(f"{self.path}: row {row0 + i}: the label column {self.target!r} is "
                             "null; every row needs a label (drop the unlabelled rows)")
        y = np.asarray(col.to_numpy(zero_copy_only=False))
        if y.dtype == object:
            y = y.astype(str)
        if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
            i = int(np.flatnonzero(~np.isfinite(y))[0])
            raise ValueError(f"{self.path}: row {row0 + i}: the label {y[i]} is not finite")
        return y

    def _chunk(self, batch: Any, row0: int) -> Chunk:
        y = self._labels(batch, row0)
        n = batch.num_rows
        if self.indices is None:
            X = np.empty((n, len(self.features)), dtype=self.dtype)
            for j, c in enumerate(self.features):
                col = batch.column(c)
                if col.null_count:
                    import pyarrow.compute as pc

                    i = int(pc.index(pc.is_null(col), True).as_py())
                    raise ValueError(f"{self.path}: row {row0 + i}: the numeric column {c!r} is "
                                     "null; numeric columns need a finite number in every row "
                                     "(fill or drop the missing values)")
                v = col.to_numpy(zero_copy_only=False).astype(np.float64)
                if not np.all(np.isfinite(v)):
                    i = int(np.flatnonzero(~np.isfinite(v))[0])
                    raise ValueError(f"{self.path}: row {row0 + i}: the numeric column {c!r} "
                                     f"holds {v[i]}; numeric columns need a finite number in "
                                     "every row")
                with np.errstate(over="ignore"):
                    X[:, j] = v
            if not np.all(np.isfinite(X)):
                i = int(np.flatnonzero(~np.all(np.isfinite(X), axis=1))[0])
                raise ValueError(f"{self.path}: row {row0 + i}: a value is not finite as "
                                 f"{self.dtype.name}")
            return X, y
        assert self.indices is not None
        ind = batch.column(self.indices)
        if ind.null_count:
            import pyarrow.compute as pc

            i = int(pc.index(pc.is_null(ind), True).as_py())
            raise ValueError(f"{self.path}: row {row0 + i}: the indices list is null; write an "
                             "empty list for a row without features")
        offsets = ind.offsets.to_numpy().astype(np.int64)
        indptr = offsets - offsets[0]
        idx = ind.flatten().to_numpy(zero_copy_only=False).astype(np.int64)
        nnz = int(indptr[-1])
        width = self.n_features
        if nnz:
            lo, hi = int(idx.min()), int(idx.max())
            if lo < 0 or hi >= width:
                p = int(np.argmin(idx)) if lo < 0 else int(np.argmax(idx))
                row = int(np.searchsorted(indptr, p, side="right") - 1)
                raise ValueError(f"{self.path}: row {row0 + row}: the feature index {idx[p]} is "
                                 f"outside [0, {width}) (n_features={width}; indices start at "
                                 "0)")
            step = np.diff(idx)
            starts = np.zeros(nnz, dtype=bool)
            starts[indptr[1:-1][indptr[1:-1] < nnz]] = True
            bad = (step <= 0) & ~starts[1:]
            if bad.any():
                p = int(np.flatnonzero(bad)[0]) + 1
                row = int(np.searchsorted(indptr, p, side="right") - 1)
                raise ValueError(f"{self.path}: row {row0 + row}: the feature indices are not "
                                 f"increasing ({idx[p - 1]} then {idx[p]}); list each feature "
                                 "once, in increasing order")
        if self.values is not None:
            val = batch.column(self.values)
            voff = val.offsets.to_numpy().astype(np.int64)
            if val.null_count or not np.array_equal(voff - voff[0], indptr):
                lens = np.diff(voff - voff[0]) if not val.null_count else None
                row = 0 if lens is None else int(np.flatnonzero(lens != np.diff(indptr))[0])
                raise ValueError(f"{self.path}: row {row0 + row}: the values list does not "
                                 f"match the indices list ({self.values!r} needs one value per "
                                 "index)")
            data = val.flatten().to_numpy(zero_copy_only=False).astype(np.float64)
            if not np.all(np.isfinite(data)):
                p = int(np.flatnonzero(~np.isfinite(data))[0])
                row = int(np.searchsorted(indptr, p, side="right") - 1)
                raise ValueError(f"{self.path}: row {row0 + row}: the value {data[p]} is not "
                                 "finite")
            with np.errstate(over="ignore"):
                data = data.astype(self.dtype)
            if not np.all(np.isfinite(data)):
                p = int(np.flatnonzero(~np.isfinite(data))[0])
                row = int(np.searchsorted(indptr, p, side="right") - 1)
                raise ValueError(f"{self.path}: row {row0 + row}: a value is not finite as "
                                 f"{self.dtype.name}")
        else:
            data = np.ones(nnz, dtype=self.dtype)
        idx_dtype = np.int32 if nnz <= MAX_INDEX else np.int64
        X = sp.csr_matrix((data, idx.astype(idx_dtype), indptr.astype(idx_dtype)),
                          shape=(n, width))
        X.has_canonical_format = True
        return X, y

    def _read(self, stop: Callable[[], bool]) -> Iterator[Chunk]:
        assert self.chunk_size is not None
        row0 = 0

        def chunks() -> Iterator[Chunk]:
            nonlocal row0
            for batch in self._batches(self._columns(), self.chunk_size or 1 << 16):
                if stop():
                    return
                chunk = self._chunk(batch, row0)
                row0 += batch.num_rows
                yield chunk

        return _rechunk(chunks(), self.chunk_size)

    def _scan(self) -> tuple[int | None, int, NDArray[Any], int | None]:
        import pyarrow.compute as pc

        columns = [self.target] + ([self.indices] if self.indices and
                                   self._n_features is None else [])
        labels: list[NDArray[Any]] = []
        top, nnz, row0 = -1, 0, 0
        for batch in self._batches(columns, 1 << 16):
            y = self._labels(batch, row0)
            if not self.regression:     # (real-valued targets: no classes to find)
                labels.append(np.unique(y))
            if len(columns) > 1:
                flat = batch.column(self.indices).flatten()
                nnz += len(flat)
                if len(flat):
                    lo = pc.min(flat).as_py()
                    if lo is not None and lo < 0:
                        raise ValueError(f"{self.path}: a feature index is negative ({lo}); "
                                         "indices start at 0")
                    top = max(top, int(pc.max(flat).as_py()))
            row0 += batch.num_rows
        if row0 == 0:
            raise ValueError(f"{self.path}: no rows")
        if self.indices is None:
            width = len(self.features)
        else:
            width = self._n_features if self._n_features is not None else max(top + 1, 1)
        if width > MAX_INDEX:
            raise ValueError(f"{self.path}: the feature index {top} is too large (at most "
                             f"{MAX_INDEX - 1})")
        classes = np.unique(np.concatenate(labels)) if labels else np.empty(0)
        if classes.dtype.kind == "f":
            classes = np.unique(classes + 0.0)
        return row0, width, classes, (nnz if len(columns) > 1 else None)


def stream_parquet(path: PathLike, *, target: str | None = None, indices: str = "indices",
                   values: str | None = "values", features: Sequence[str] | None = None,
                   n_features: int | None = None, classes: ArrayLike | None = None,
                   chunk_size: int = 100_000, dtype: Any = np.float64, cache: CacheSpec = False,
                   prefetch: int = 2, label_kind: LabelKind = "multiclass") -> ChunkStream:
    """A stream over a Parquet file, by record batches (needs pyarrow: ``sqnopt[parquet]``).

    Two layouts:

    * sparse rows -- the file has a column ``indices`` of type ``list<integer>``: each row's
      feature indices (0-based, increasing), with their values in the ``list<number>`` column
      ``values`` when present (else every value is 1); ``n_features`` is given, or the largest
      index + 1 found by a scan of that column;
    * dense rows -- numeric columns: ``features`` (default: every column but the label); a
      null or non-finite value is an error naming the row and the column.

    ``target``: the label column (default: the first of ``label``, ``target``, ``y``,
    ``class``). ``chunk_size``, ``classes``, ``dtype``, ``cache``, ``prefetch`` and
    ``label_kind`` (``"regression"``: real-valued targets for a regression loss, no classes)
    as :func:`stream_svmlight`. Errors name the file and the row (0-based).
    """
    return _ParquetStream(path, target=target, indices=indices, values=values,
                          features=features, n_features=n_features, classes=classes,
                          chunk_size=chunk_size, dtype=dtype, cache=cache, prefetch=prefetch,
                          label_kind=label_kind)

