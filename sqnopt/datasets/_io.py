"""Reading svmlight / LIBSVM files (plain or compressed), whole or in chunks."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
from collections.abc import Iterable, Iterator
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


def _parse_lines(lines: Iterable[bytes], *, n_features: int | None, zero_based: ZeroBased,
                 source: str, first_line: int = 1) -> tuple[Any, NDArray[np.float64]]:
    """Pure-NumPy svmlight parser (used when scikit-learn is not installed, and for chunks)."""
    labels: list[float] = []
    nnz: list[int] = []
    pairs: list[bytes] = []
    for lineno, raw in enumerate(lines, start=first_line):
        line = raw.split(b"#", 1)[0].strip()
        if not line:
            continue
        tokens = line.split()
        try:
            labels.append(float(tokens[0]))
        except ValueError:
            raise ValueError(f"{source}: line {lineno}: the label {tokens[0][:20]!r} is not a "
                             "number. Expected svmlight/LIBSVM lines 'label index:value ...'") from None
        feats = [t for t in tokens[1:] if not t.startswith(b"qid:")]
        for t in feats:
            if b":" not in t:
                raise ValueError(f"{source}: line {lineno}: {t[:20]!r} is not 'index:value'. "
                                 "Expected svmlight/LIBSVM lines 'label index:value ...'")
        nnz.append(len(feats))
        pairs.extend(feats)
    n = len(labels)
    if n == 0:
        raise ValueError(f"{source}: no samples found (empty file or only comments)")
    if pairs:
        flat = b" ".join(pairs).replace(b":", b" ").split()
        try:
            arr = np.array(flat, dtype=np.float64).reshape(-1, 2)
        except ValueError:
            raise ValueError(f"{source}: an 'index:value' entry is not numeric. Expected "
                             "svmlight/LIBSVM lines 'label index:value ...'") from None
        idx = arr[:, 0]
        if np.any(idx != np.floor(idx)) or np.any(idx < 0):
            raise ValueError(f"{source}: feature indices must be non-negative integers")
        indices = idx.astype(np.int64)
        values = arr[:, 1]
    else:
        indices = np.zeros(0, dtype=np.int64)
        values = np.zeros(0)
    one_based = (zero_based is False) or (zero_based == "auto" and indices.size > 0
                                          and int(indices.min()) > 0)
    if one_based:
        if indices.size and int(indices.min()) == 0:
            raise ValueError(f"{source}: index 0 found in a one-based (LIBSVM) file; pass "
                             "zero_based=True")
        indices = indices - 1
    width = int(indices.max()) + 1 if indices.size else 0
    if n_features is None:
        n_features = max(width, 1)
    elif width > n_features:
        raise ValueError(f"{source}: feature index {width} exceeds n_features={n_features}")
    indptr = np.concatenate([[0], np.cumsum(nnz)]).astype(np.int64)
    X = sp.csr_matrix((values, indices, indptr), shape=(n, n_features))
    X.sum_duplicates()
    return X, np.asarray(labels, dtype=np.float64)


def load_svmlight(path: PathLike, *, n_features: int | None = None,
                  zero_based: ZeroBased = "auto", dtype: Any = np.float64,
                  ) -> tuple[Any, NDArray[np.float64]]:
    """Read an svmlight / LIBSVM file (plain, ``.xz``, ``.gz`` or ``.bz2``) into ``(X, y)``.

    ``X`` is a CSR matrix, ``y`` the labels as float64. Uses scikit-learn's fast reader when
    scikit-learn is installed, and a NumPy parser otherwise. ``n_features`` fixes the width (pass
    the training width when loading a test split); ``zero_based="auto"`` treats the indices as
    one-based (LIBSVM convention) unless an index 0 occurs.
    """
    source = str(path)
    loader = _sklearn_loader()
    with open_binary(path) as fh:
        if loader is not None:
            try:
                X, y = loader(fh, n_features=n_features, zero_based=zero_based, dtype=dtype)
            except ValueError as exc:
                raise ValueError(f"{source}: not a valid svmlight/LIBSVM file ({exc}). "
                                 "Expected lines 'label index:value ...'") from exc
            except (OSError, EOFError, lzma.LZMAError) as exc:
                raise ValueError(f"{source}: cannot read the file ({exc})") from exc
            return X.tocsr(), np.asarray(y, dtype=np.float64)
        try:
            X, y = _parse_lines(fh, n_features=n_features, zero_based=zero_based, source=source)
        except (OSError, EOFError, lzma.LZMAError) as exc:
            raise ValueError(f"{source}: cannot read the file ({exc})") from exc
    return X.astype(dtype), y


def scan_svmlight(path: PathLike, *, zero_based: bool = False
                  ) -> tuple[int, int, NDArray[np.float64]]:
    """One streaming pass over an svmlight file: ``(n_rows, n_features, sorted labels)``
    (``n_features`` = largest index + 1, or largest index for one-based files)."""
    top = -1
    rows = 0
    labels: set[float] = set()
    with open_binary(path) as fh:
        for lineno, raw in enumerate(fh, start=1):
            tokens = raw.split(b"#", 1)[0].split()
            if not tokens:
                continue
            rows += 1
            try:
                labels.add(float(tokens[0]))
            except ValueError:
                raise ValueError(f"{str(path)}: line {lineno}: the label {tokens[0][:20]!r} is "
                                 "not a number. Expected svmlight/LIBSVM lines "
                                 "'label index:value ...'") from None
            for tok in tokens[1:]:
                key, _, _ = tok.partition(b":")
                if key != b"qid" and key.isdigit():
                    top = max(top, int(key))
    if rows == 0:
        raise ValueError(f"{str(path)}: no samples found (empty file or only comments)")
    n_features = max(top + 1 if zero_based else top, 1)
    return rows, n_features, np.array(sorted(labels))


def count_svmlight_features(path: PathLike, *, zero_based: bool = False) -> int:
    """Number of features of an svmlight file (one streaming pass; see :func:`scan_svmlight`)."""
    return scan_svmlight(path, zero_based=zero_based)[1]


def iter_svmlight_chunks(path: PathLike, chunk_size: int = 100_000, *,
                         n_features: int | None = None, zero_based: bool = False,
                         dtype: Any = np.float64,
                         ) -> Iterator[tuple[Any, NDArray[np.float64]]]:
    """Stream an svmlight file as ``(X_chunk, y_chunk)`` pairs of at most ``chunk_size`` rows,
    for ``partial_fit`` on files larger than memory.

    Every chunk has ``n_features`` columns (found by a first pass over the file when not
    given). Indices are one-based (LIBSVM) unless ``zero_based=True``.
    """
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")
    if n_features is None:
        n_features = count_svmlight_features(path, zero_based=zero_based)
    loader = _sklearn_loader()
    source = str(path)
    with open_binary(path) as fh:
        buf: list[bytes] = []
        first = 1
        lineno = 0
        n_rows = 0
        for raw in fh:
            lineno += 1
            buf.append(raw)
            if raw.split(b"#", 1)[0].strip():
                n_rows += 1
            if n_rows >= chunk_size:
                yield _chunk(buf, loader, n_features, zero_based, dtype, source, first)
                buf, first, n_rows = [], lineno + 1, 0
        if n_rows:
            yield _chunk(buf, loader, n_features, zero_based, dtype, source, first)


def _chunk(lines: list[bytes], loader: Any, n_features: int, zero_based: bool, dtype: Any,
           source: str, first: int) -> tuple[Any, NDArray[np.float64]]:
    where = f"{source} (lines {first}-{first + len(lines) - 1})"
    if loader is not None:
        try:
            X, y = loader(io.BytesIO(b"".join(lines)), n_features=n_features,
                          zero_based=zero_based, dtype=dtype)
        except ValueError as exc:
            raise ValueError(f"{where}: not valid svmlight/LIBSVM ({exc})") from exc
        return X.tocsr(), np.asarray(y, dtype=np.float64)
    X, y = _parse_lines(lines, n_features=n_features, zero_based=zero_based, source=where,
                        first_line=first)
    return X.astype(dtype), y
