"""Writing sparse data as text: svmlight / LIBSVM files and Vowpal Wabbit input.

Both writers take a path (the file is created or replaced) or a binary file opened for writing
(the lines are appended at its position, so a large data set can be written chunk by chunk),
format the rows in a compiled loop without the GIL (:mod:`sqnopt.datasets._format`), and refuse
input they could not write faithfully: non-finite labels or values, negative or unsorted column
indices are a ``ValueError`` naming the problem.

Numbers are written exactly: integers as integers, other values with the fewest of 15 or 17
significant digits that read back to the same double.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import IO, Any, Union

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from sqnopt.datasets._format import format_rows
from sqnopt.datasets._io import PathLike

__all__ = ["format_rows_python", "write_svmlight", "write_vw"]

Destination = Union[PathLike, IO[bytes]]
#: Rows formatted per call of the compiled loop (bounds the text held in memory).
_ROWS_PER_CALL = 32_768


def _number(v: float) -> str:
    """One number as :func:`format_rows` writes it."""
    if v == np.floor(v) and abs(v) < 1e15:
        return str(int(v))
    s = f"{v:.15g}"
    return s if float(s) == v else f"{v:.17g}"


def format_rows_python(indptr: NDArray[np.int64], indices: NDArray[np.int64],
                       data: NDArray[np.float64], labels: NDArray[np.float64],
                       index_offset: int, separator: bytes) -> bytes:
    """The pure-Python twin of the compiled :func:`format_rows` (same bytes; for tests)."""
    lines = []
    for i in range(labels.shape[0]):
        a, b = int(indptr[i]), int(indptr[i + 1])
        feats = " ".join(f"{int(j) + index_offset}:{_number(float(v))}"
                         for j, v in zip(indices[a:b], data[a:b]))
        lines.append(_number(float(labels[i])).encode() + separator + feats.encode() + b"\n")
    return b"".join(lines)


def _csr(X: Any) -> sp.csr_matrix:
    if not sp.issparse(X):
        X = np.asarray(X)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-d, got shape {X.shape}")
        X = sp.csr_matrix(X)
    X = sp.csr_matrix(X)
    if X.data.size and not np.all(np.isfinite(X.data)):
        raise ValueError("X holds non-finite values (NaN or infinity); svmlight and VW text "
                         "cannot carry them: impute or drop them first")
    if X.indices.size:
        if int(X.indices.min()) < 0:
            raise ValueError("X has negative column indices")
        if not X.has_sorted_indices:
            X = X.sorted_indices()
        d = np.diff(X.indices.astype(np.int64))
        starts = X.indptr[1:-1]
        inner = np.ones(d.size, dtype=bool)
        inner[starts[(starts > 0) & (starts <= d.size)] - 1] = False
        if np.any(d[inner] <= 0):
            raise ValueError("X has a column index twice in a row; sum duplicates first "
                             "(X.sum_duplicates())")
    return X


def _labels(y: ArrayLike, n: int) -> NDArray[np.float64]:
    yy = np.asarray(y, dtype=np.float64)
    if yy.ndim != 1 or yy.shape[0] != n:
        raise ValueError(f"y must be 1-d with one label per row of X ({n}), got shape "
                         f"{yy.shape}")
    if not np.all(np.isfinite(yy)):
        raise ValueError("y holds non-finite labels (NaN or infinity)")
    return yy


def _blocks(X: sp.csr_matrix, labels: NDArray[np.float64], index_offset: int,
            separator: bytes) -> Iterator[bytes]:
    indptr = X.indptr.astype(np.int64)
    for a in range(0, X.shape[0], _ROWS_PER_CALL):
        b = min(a + _ROWS_PER_CALL, X.shape[0])
        lo, hi = int(indptr[a]), int(indptr[b])
        yield format_rows(np.ascontiguousarray(indptr[a:b + 1] - lo),
                          np.ascontiguousarray(X.indices[lo:hi], dtype=np.int64),
                          np.ascontiguousarray(X.data[lo:hi], dtype=np.float64),
                          np.ascontiguousarray(labels[a:b]), index_offset, separator)


def _write(dest: Destination, blocks: Iterator[bytes]) -> int:
    written = 0
    if isinstance(dest, (str, os.PathLike)):
        with open(dest, "wb") as fh:
            for text in blocks:
                fh.write(text)
                written += len(text)
        return written
    if not hasattr(dest, "write"):
        raise TypeError(f"expected a path or a binary file opened for writing, got {dest!r}")
    for text in blocks:
        dest.write(text)
        written += len(text)
    return written


def write_svmlight(dest: Destination, X: Any, y: ArrayLike, *, zero_based: bool = False) -> int:
    """Write ``(X, y)`` as svmlight / LIBSVM lines ``label index:value ...`` (the stored
    entries of each row, indices increasing; one-based unless ``zero_based``); returns the
    bytes written.

    ``dest`` is a path (created or replaced) or a binary file opened for writing (appended
    to). :func:`sqnopt.datasets.load_svmlight` and scikit-learn's ``load_svmlight_file`` read
    the result back to the same matrix and labels.
    """
    Xc = _csr(X)
    labels = _labels(y, Xc.shape[0])
    return _write(dest, _blocks(Xc, labels, 0 if zero_based else 1, b" "))


def write_vw(dest: Destination, X: Any, y: ArrayLike) -> int:
    """Write binary ``(X, y)`` as Vowpal Wabbit lines ``label | index:value ...`` (the same
    one-based indices as :func:`write_svmlight`, as numeric feature names of the default
    namespace); returns the bytes written.

    Labels must be 0/1 or -1/1; VW's logistic loss reads them as ``1`` for 1 and ``-1`` for the
    others. ``dest`` as in :func:`write_svmlight`.
    """
    Xc = _csr(X)
    yy = _labels(y, Xc.shape[0])
    if yy.size and not np.all(np.isin(yy, (-1.0, 0.0, 1.0))):
        bad = yy[~np.isin(yy, (-1.0, 0.0, 1.0))][0]
        raise ValueError(f"VW logistic labels must be 0/1 or -1/1, got {bad!r}")
    return _write(dest, _blocks(Xc, np.where(yy == 1.0, 1.0, -1.0), 1, b" | "))
