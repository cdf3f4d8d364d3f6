"""Streams: data sets larger than memory, read chunk by chunk, pass after pass.

A :class:`ChunkStream` is what a user passes around for data that does not fit in memory (or
that arrives as a stream): a re-iterable source of ``(X_chunk, y_chunk)`` pairs. Each
``for X, y in stream`` is one *pass* over the data in file order, in chunks of at most
``chunk_size`` rows; every chunk has the stream's ``n_features`` columns and labels among its
``classes``, both known before the first chunk (given, or found by one fast scan of the data).
A stream of real-valued targets (``label_kind="regression"``, for the regression losses) has
no classes (``classes`` is empty): every label is a finite number, read as float64.
Memory is bounded by a few chunks, never by the file.

Read-ahead: a pass reads and parses the next chunks in a background thread while the consumer
works on the current one (the compiled parser, the file reads and the decompressors release
the GIL, as does sqnopt's compiled training loop), through a queue of ``prefetch`` chunks. An
error in the reader thread is raised in the consumer, as it was raised (same type, same
message); leaving the loop early (``break``, an exception, ``close()``) stops the thread.

Chunks are validated in the reader thread (:func:`sqnopt.data.check_matrix`: a canonical CSR
with read-only index arrays, or a C-contiguous dense array), so a consumer that validates them
again finds them checked.

The binary cache (``cache=True`` or a path; :mod:`sqnopt.datasets._binary`) is the analogue of
Vowpal Wabbit's ``--cache``: the first complete pass writes the parsed chunks to a compact
binary file and later passes read that instead of parsing text again.
"""

from __future__ import annotations

import os
import threading
import warnings
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Union

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from sqnopt.data import check_matrix
from sqnopt.data._dataset import LABEL_KINDS, LabelKind
from sqnopt.datasets import _binary
from sqnopt.datasets._io import (
    BLOCK_SIZE,
    PathLike,
    ZeroBased,
    _chunks,
    _check_chunk_size,
    _check_n_features,
    _Labels,
    _scan,
)

__all__ = ["ChunkStream", "StreamPass", "stream_arrays", "stream_binary", "stream_chunks",
           "stream_svmlight", "write_binary"]

#: A chunk: the rows (CSR, or a dense array) and their labels.
Chunk = tuple[Any, NDArray[Any]]
#: ``cache=``: off, next to the source file, or at a path.
CacheSpec = Union[bool, str, "os.PathLike[str]", None]

#: Suffix of the cache file that ``cache=True`` puts next to the source.
CACHE_SUFFIX = ".sqnopt-cache"


# ------------------------------------------------------------------------- read-ahead
class _Channel:
    """A bounded queue between the reader thread and the consumer that either side can close
    (``put`` then returns False at once instead of waiting for room)."""

    def __init__(self, size: int) -> None:
        self.cond = threading.Condition()
        self.items: deque[tuple[int, Any]] = deque()
        self.size = size
        self.closed = False

    def put(self, item: tuple[int, Any]) -> bool:
        with self.cond:
            while len(self.items) >= self.size and not self.closed:
                self.cond.wait()
            if self.closed:
                return False
            self.items.append(item)
            self.cond.notify_all()
            return True

    def get(self) -> tuple[int, Any]:
        with self.cond:
            while not self.items:
                self.cond.wait()
            item = self.items.popleft()
            self.cond.notify_all()
            return item

    def close(self) -> None:
        with self.cond:
            self.closed = True
            self.items.clear()
            self.cond.notify_all()


_ITEM, _END, _ERROR = 0, 1, 2


def _produce(read: Callable[[Callable[[], bool]], Iterator[Chunk]], channel: _Channel,
             stop: threading.Event) -> None:
    """The reader thread: one pass into the channel, then the end mark or the error."""
    try:
        it = read(stop.is_set)
        try:
            for item in it:
                if not channel.put((_ITEM, item)):
                    return
        finally:
            close = getattr(it, "close", None)
            if close is not None:
                close()
        channel.put((_END, None))
    except BaseException as exc:  # handed to the consumer, raised there
        channel.put((_ERROR, exc))


class StreamPass:
    """One pass over a :class:`ChunkStream`: an iterator of ``(X_chunk, y_chunk)``.

    With ``prefetch >= 1`` the chunks are read in a background thread, at most ``prefetch``
    chunks ahead of the consumer (so at most ``prefetch + 2`` chunks exist at once: those
    queued, the one being read and the consumer's); with ``prefetch = 0`` in the consumer's
    thread. ``close()`` (also on ``with``-exit, on garbage collection, and when the pass ends or
    fails) stops the thread and closes the file.
    """

    def __init__(self, read: Callable[[Callable[[], bool]], Iterator[Chunk]], prefetch: int,
                 name: str = "sqnopt-stream") -> None:
        self._done = False
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        if prefetch <= 0:
            self._it: Iterator[Chunk] | None = read(self._stop.is_set)
            self._channel: _Channel | None = None
            return
        self._it = None
        self._channel = _Channel(prefetch)
        self._thread = threading.Thread(target=_produce, args=(read, self._channel, self._stop),
                                        name=name, daemon=True)
        self._thread.start()

    def __iter__(self) -> StreamPass:
        return self

    def __next__(self) -> Chunk:
        if self._done:
            raise StopIteration
        if self._channel is None:
            assert self._it is not None
            try:
                return next(self._it)
            except BaseException:
                self.close()
                raise
        kind, value = self._channel.get()
        if kind == _ITEM:
            item: Chunk = value
            return item
        self.close()
        if kind == _ERROR:
            raise value
        raise StopIteration

    def close(self) -> None:
        """Stop reading: the reader thread ends (joined here) and the file is closed."""
        if self._done:
            return
        self._done = True
        self._stop.set()
        if self._channel is not None:
            self._channel.close()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
        if self._it is not None:
            close = getattr(self._it, "close", None)
            if close is not None:
                close()
            self._it = None

    @property
    def reader_alive(self) -> bool:
        """Whether the reader thread is still running."""
        return self._thread is not None and self._thread.is_alive()

    def __enter__(self) -> StreamPass:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown: nothing left to stop
            pass


# ------------------------------------------------------------------------- the stream
def _check_prefetch(prefetch: Any) -> int:
    if isinstance(prefetch, bool) or not isinstance(prefetch, (int, np.integer)) or prefetch < 0:
        raise ValueError(f"prefetch must be an integer >= 0 (chunks read ahead; 0: no reader "
                         f"thread), got {prefetch!r}")
    return int(prefetch)


def _check_dtype(dtype: Any) -> np.dtype[Any]:
    dt: np.dtype[Any] = np.dtype(dtype)
    if dt not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dt}")
    return dt


def _check_label_kind(label_kind: Any, classes: ArrayLike | None) -> LabelKind:
    if label_kind not in LABEL_KINDS:
        raise ValueError(f"label_kind must be one of {', '.join(map(repr, LABEL_KINDS))}, got "
                         f"{label_kind!r}")
    if label_kind == "regression" and classes is not None:
        raise ValueError("classes: a stream of regression targets (label_kind='regression') "
                         "has real-valued labels, not classes; pass classes=None")
    lk: LabelKind = label_kind
    return lk


def _check_classes(classes: ArrayLike | None) -> NDArray[Any] | None:
    if classes is None:
        return None
    arr = np.unique(np.asarray(classes))
    if arr.ndim != 1 or arr.shape[0] < 1:
        raise ValueError("classes must be a non-empty list of the labels")
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise ValueError("classes must be finite numbers (or strings)")
    return arr


class ChunkStream:
    """A re-iterable source of ``(X_chunk, y_chunk)`` chunks (see the module docstring).

    Built by :func:`stream_svmlight`, :func:`stream_csv`, :func:`stream_parquet`,
    :func:`stream_binary`, :func:`stream_chunks` (a user's own chunks) or
    :func:`stream_arrays` (arrays in memory, for tests and comparisons).

    Attributes
    ----------
    source : str
        What the chunks are read from (a file path, or a description).
    chunk_size : int or None
        Largest number of rows of a chunk (None: as the source gives them).
    dtype : numpy.dtype
        float64 or float32, the dtype of the chunks' values.
    prefetch : int
        Chunks read ahead in a background thread (0: read in the consumer's thread).
    cache_path : pathlib.Path or None
        The binary cache file, when caching is on.
    label_kind : {"binary", "multiclass", "regression"}
        What the labels are: classes (the default, ``"multiclass"``; ``"binary"`` reads
        the same), or real-valued targets (``"regression"``: no classes, every label a
        finite number, float64), as the objective that will fit them declares.
    """

    #: (a class default: a stream pickled before streams had a label kind reads classes)
    label_kind: LabelKind = "multiclass"

    def __init__(self, *, source: str, chunk_size: int | None, n_features: int | None,
                 classes: ArrayLike | None, dtype: Any, prefetch: int,
                 cache: CacheSpec = None, cache_base: PathLike | None = None,
                 label_kind: LabelKind = "multiclass") -> None:
        if chunk_size is not None:
            chunk_size = _check_chunk_size(chunk_size)
        _check_n_features(n_features)
        self.source = source
        self.chunk_size = chunk_size
        self.dtype = _check_dtype(dtype)
        self.prefetch = _check_prefetch(prefetch)
        self._n_features = None if n_features is None else int(n_features)
        self._given_features = self._n_features
        self.label_kind = _check_label_kind(label_kind, classes)
        self._classes = (np.empty(0) if self.regression else _check_classes(classes))
        self._given_classes = self._classes is not None
        self._n_rows: int | None = None
        self._nnz: int | None = None
        self._lock = threading.Lock()
        self.cache_path: Path | None = None
        if cache is True:
            if cache_base is None:
                raise ValueError(f"{source}: cache=True needs a file source; pass a path")
            self.cache_path = Path(str(cache_base) + CACHE_SUFFIX)
        elif cache not in (False, None):
            if isinstance(cache, (bool, int)):
                raise ValueError(f"cache must be True, False or a path, got {cache!r}")
            self.cache_path = Path(cache)

    # ---------------------------------------------------------------- provided by a source
    def _read(self, stop: Callable[[], bool]) -> Iterator[Chunk]:
        """One pass from the source itself (not the cache), in order; ``stop()`` true: end
        early."""
        raise NotImplementedError

    def _scan(self) -> tuple[int | None, int, NDArray[Any], int | None]:
        """``(n_rows, n_features, classes, nnz)`` found by a pass (``None``: not counted)."""
        raise NotImplementedError

    def _fingerprint(self) -> _binary.Fingerprint | None:
        """Identifies the source's content for the cache (None: the source has no file)."""
        return None

    def _key(self) -> str:
        """The options that change the chunks' content, for the cache."""
        return (f"{type(self).__name__}|chunk_size={self.chunk_size}|dtype={self.dtype.name}|"
                f"n_features={self._given_features}"
                + ("|regression" if self.regression else ""))

    @property
    def sparse(self) -> bool:
        """Whether the chunks are CSR matrices (else dense arrays)."""
        return True

    # ---------------------------------------------------------------- what is known
    @property
    def regression(self) -> bool:
        """Whether the labels are real-valued targets (``label_kind="regression"``)."""
        return self.label_kind == "regression"

    @property
    def n_features(self) -> int:
        """Columns of every chunk (given, or found by :meth:`scan`)."""
        if self._n_features is None:
            self.scan()
        assert self._n_features is not None
        return self._n_features

    @property
    def classes(self) -> NDArray[Any]:
        """The sorted distinct labels (given, or found by :meth:`scan`; empty for regression
        targets)."""
        if self._classes is None:
            self.scan()
        assert self._classes is not None
        return self._classes

    @property
    def n_rows(self) -> int | None:
        """Rows in one pass, once known (a scan, the cache, or a completed pass); else None."""
        return self._n_rows

    @property
    def nnz(self) -> int | None:
        """Stored values in one pass (all entries for dense chunks), once known; else None."""
        return self._nnz

    def scan(self) -> ChunkStream:
        """Find what is not known yet -- the number of features, the labels, the rows and the
        stored values -- now: from the cache when it is valid, else by one pass over the
        source (a compiled scan for svmlight). Returns the stream."""
        with self._lock:
            if self._n_features is not None and self._classes is not None \
                    and self._n_rows is not None:
                return self
            info = self._cached_info()
            if info is None:
                info = self._scan()
            n_rows, n_features, classes, nnz = info
            if self._n_features is None:
                self._n_features = int(n_features)
            if self._classes is None:
                self._classes = np.asarray(classes)
            if self._n_rows is None:
                self._n_rows = n_rows
            if self._nnz is None:
                self._nnz = nnz
        return self

    def _forget(self) -> None:
        """Forget what was found (not given): the next need scans again."""
        with self._lock:
            self._n_features = self._given_features
            if not self._given_classes:
                self._classes = None
            self._n_rows = self._nnz = None

    def _cached_info(self) -> tuple[int | None, int, NDArray[Any], int | None] | None:
        if self.cache_path is None or not self.cache_path.exists():
            return None
        try:
            with _binary.BinaryFile(self.cache_path, fingerprint=self._fingerprint(),
                                    key=self._key()) as f:
                return f.n_rows, f.n_features, f.classes, f.nnz
        except _binary.StaleError:
            return None
        except ValueError as exc:
            warnings.warn(f"{exc}; the cache is rebuilt from {self.source}", RuntimeWarning,
                          stacklevel=3)
            return None

    # ---------------------------------------------------------------- passes
    def __iter__(self) -> StreamPass:
        """One pass: ``for X, y in stream`` (a new pass each time)."""
        if self._n_features is None or self._classes is None:  # known before the first chunk
            self.scan()
        return StreamPass(self._pass, self.prefetch, name=f"sqnopt-stream:{self.source}")

    def _pass(self, stop: Callable[[], bool]) -> Iterator[Chunk]:
        """One pass, checked chunk by chunk: from the cache when valid, else from the source
        (writing the cache when it is on)."""
        cached = self._open_cache()
        if cached is not None:
            try:
                with cached:
                    yield from self._checked(cached.chunks(stop), stop, writer=None)
            except _binary.DamagedError as exc:
                assert self.cache_path is not None
                self.cache_path.unlink(missing_ok=True)
                self._forget()  # what the damaged cache told is found again
                raise _binary.DamagedError(f"{exc}; the cache file was removed: the next pass "
                                           f"reads {self.source} and writes it again") from None
            return
        writer = None
        if self.cache_path is not None:
            writer = _binary.Writer(self.cache_path, n_features=self.n_features,
                                    dtype=self.dtype, chunk_size=self.chunk_size,
                                    dense=not self.sparse, fingerprint=self._fingerprint(),
                                    key=self._key())
        try:
            yield from self._checked(self._read(stop), stop, writer)
        finally:
            if writer is not None:
                writer.discard()  # unless finished (a complete pass): nothing

    def _open_cache(self) -> _binary.BinaryFile | None:
        if self.cache_path is None or not self.cache_path.exists():
            return None
        try:
            return _binary.BinaryFile(self.cache_path, fingerprint=self._fingerprint(),
                                      key=self._key(), source=self.source)
        except _binary.StaleError:
            return None
        except ValueError as exc:
            warnings.warn(f"{exc}; the cache is rebuilt from {self.source}", RuntimeWarning,
                          stacklevel=2)
            return None

    def _checked(self, chunks: Iterable[Chunk], stop: Callable[[], bool],
                 writer: _binary.Writer | None) -> Iterator[Chunk]:
        rows = nnz = 0
        # the labels a cache records, when not known before the pass
        labels = _Labels() if writer is not None and self._classes is None else None
        classes = self._classes
        for k, (X, y) in enumerate(chunks):
            X, y = self._check_chunk(X, y, k, rows, classes)
            if writer is not None:
                writer.write(X, y)
            if labels is not None:
                labels.add(y)
            rows += int(X.shape[0])
            nnz += int(X.nnz) if sp.issparse(X) else int(X.size)
            yield X, y
        if stop():
            return  # ended early: not a whole pass
        self._n_rows, self._nnz = rows, nnz
        if writer is not None:
            found = labels.result() if labels is not None else self._classes
            assert found is not None
            writer.finish(found)

    def _check_chunk(self, X: Any, y: Any, k: int, row0: int, classes: NDArray[Any] | None
                     ) -> Chunk:
        where = f"{self.source}: chunk {k} (rows {row0} and on)"
        try:
            Xc = check_matrix(X)
        except (ValueError, TypeError) as exc:
            raise type(exc)(f"{where}: {exc}") from None
        yy = np.asarray(y)
        if yy.ndim == 2 and yy.shape[1] == 1:
            yy = yy.ravel()
        if yy.ndim != 1 or yy.shape[0] != Xc.shape[0]:
            raise ValueError(f"{where}: y has shape {yy.shape} but X has {Xc.shape[0]} rows; "
                             "pass one label per row")
        if Xc.shape[1] != self.n_features:
            raise ValueError(f"{where}: X has {Xc.shape[1]} columns, the stream "
                             f"{self.n_features}; every chunk needs the same columns (pass "
                             "n_features=)")
        if self.regression:
            if yy.dtype.kind not in "biuf":
                raise ValueError(f"{where}: the targets are {yy.dtype}, not numbers; a stream "
                                 "of regression targets needs a real-valued target per row")
            yy = np.asarray(yy, dtype=np.float64)
        if yy.dtype.kind == "f" and not np.all(np.isfinite(yy)):
            raise ValueError(f"{where}: y contains NaN or infinity; drop the unlabelled rows")
        if classes is not None and not self.regression:
            known = np.isin(yy, classes)
            if not np.all(known):
                i = int(np.flatnonzero(~known)[0])
                bad = yy[i].item() if hasattr(yy[i], "item") else yy[i]
                raise ValueError(f"{where}: the label {bad!r} of row {row0 + i} is not one of "
                                 f"the classes "
                                 f"{_show_classes(classes)}; pass classes= with every label, or "
                                 "leave classes=None to find them by a scan")
        if Xc.dtype != self.dtype:
            Xc = check_matrix(Xc.astype(self.dtype))
        return Xc, yy

    # ---------------------------------------------------------------- misc
    def __repr__(self) -> str:
        known = []
        if self._n_rows is not None:
            known.append(f"n_rows={self._n_rows}")
        if self._n_features is not None:
            known.append(f"n_features={self._n_features}")
        if self.regression:
            known.append("label_kind='regression'")
        elif self._classes is not None:
            known.append(f"classes={_show_classes(self._classes)}")
        extra = (", " + ", ".join(known)) if known else ""
        return (f"{type(self).__name__}({self.source!r}, chunk_size={self.chunk_size}, "
                f"dtype={self.dtype.name}{extra})")

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()


def _show_classes(classes: NDArray[Any]) -> str:
    shown = ", ".join(repr(c.item() if hasattr(c, "item") else c) for c in classes[:10])
    return f"[{shown}{', ...' if classes.shape[0] > 10 else ''}]"


# ------------------------------------------------------------------------- svmlight
class _SvmlightStream(ChunkStream):
    def __init__(self, path: PathLike, *, chunk_size: int, n_features: int | None,
                 classes: ArrayLike | None, zero_based: ZeroBased, dtype: Any, cache: CacheSpec,
                 prefetch: int, block_size: int, label_kind: LabelKind) -> None:
        p = Path(path)
        if not p.exists():
            raise FileNotFoundError(f"data file {str(p)!r} does not exist")
        if p.is_dir():
            raise IsADirectoryError(f"{str(p)!r} is a directory, not a data file")
        if not (isinstance(zero_based, bool) or zero_based == "auto"):
            raise ValueError(f"zero_based must be True, False or 'auto', got {zero_based!r}")
        if isinstance(block_size, bool) or not isinstance(block_size, (int, np.integer)) \
                or block_size < 1:
            raise ValueError(f"block_size must be a positive integer (bytes), got {block_size!r}")
        super().__init__(source=str(p), chunk_size=chunk_size, n_features=n_features,
                         classes=classes, dtype=dtype, prefetch=prefetch, cache=cache,
                         cache_base=p, label_kind=label_kind)
        self.path = p
        self.zero_based = zero_based
        self.block_size = int(block_size)
        # the base the chunks are parsed with: "auto" is decided by a scan of the file
        self._zero: bool | None = zero_based if isinstance(zero_based, bool) else None

    @property
    def indices_zero_based(self) -> bool:
        """Whether the file's indices are read as zero-based (``zero_based="auto"``: found by
        the scan, which this runs if it has not run yet)."""
        if self._zero is None:
            self._zero = _scan(self.path, zero_based=self.zero_based, block=self.block_size)[4]
        return self._zero

    def _read(self, stop: Callable[[], bool]) -> Iterator[Chunk]:
        assert self.chunk_size is not None
        return _chunks(self.path, self.chunk_size, n_features=self.n_features,
                       zero_based=self.indices_zero_based, dtype=self.dtype,
                       block_size=self.block_size, stop=stop)

    def _scan(self) -> tuple[int | None, int, NDArray[Any], int | None]:
        rows, width, labels, nnz, zero = _scan(self.path, zero_based=self.zero_based,
                                               block=self.block_size)
        self._zero = zero
        if self._n_features is not None and width > self._n_features:
            raise ValueError(f"{self.source}: the file has {width} features "
                             f"({'zero' if zero else 'one'}-based indices), more than "
                             f"n_features={self._n_features}")
        return rows, width, labels, nnz

    def _fingerprint(self) -> _binary.Fingerprint:
        return _binary.fingerprint(self.path)

    def _key(self) -> str:
        return super()._key() + f"|svmlight|zero_based={self.zero_based}"


def stream_svmlight(path: PathLike, *, chunk_size: int = 100_000, n_features: int | None = None,
                    classes: ArrayLike | None = None, zero_based: ZeroBased = False,
                    dtype: Any = np.float64, cache: CacheSpec = False, prefetch: int = 2,
                    block_size: int = BLOCK_SIZE, label_kind: LabelKind = "multiclass"
                    ) -> ChunkStream:
    """A stream over an svmlight / LIBSVM file (plain, ``.xz``, ``.gz`` or ``.bz2``).

    The file is read ``block_size`` bytes at a time and parsed by the compiled svmlight parser
    (numbers equal to Python's ``float()`` to the last bit; the grammar and the errors of
    :func:`load_svmlight`, naming the file and line) into CSR chunks of at most ``chunk_size``
    rows, in a background thread ``prefetch`` chunks ahead of the consumer.

    Parameters
    ----------
    path
        The file.
    chunk_size
        Rows per chunk (the last chunk of a pass may hold fewer).
    n_features
        Columns of every chunk; ``None``: the largest index found by a scan (one compiled pass
        over the file, which also finds the labels). Give it for hashed features (e.g.
        ``2**18``) and a test file read with the training width.
    classes
        The labels; ``None``: found by the scan. A label outside them is an error.
    zero_based
        Whether the indices start at 0 (else one-based, the LIBSVM convention); ``"auto"``:
        one-based unless an index 0 occurs, as :func:`load_svmlight` decides it (found by the
        scan, one compiled pass over the file).
    dtype
        float64 or float32 values.
    cache
        ``True``: write the parsed chunks to ``path + ".sqnopt-cache"`` during the first
        complete pass and read that file in later passes (and later runs) instead of parsing
        the text again; a path: the cache file there; ``False``: parse every pass. A cache
        whose source file changed is rebuilt; a damaged one is rebuilt with a warning.
    prefetch
        Chunks read ahead in a background thread (``0``: read in the consumer's thread).
    block_size
        Bytes read from the file at a time.
    label_kind
        ``"regression"``: the labels are real-valued targets (for a regression loss): no
        classes; else classes (``"multiclass"``, the default, or ``"binary"``).

    Returns
    -------
    ChunkStream
    """
    return _SvmlightStream(path, chunk_size=chunk_size, n_features=n_features, classes=classes,
                           zero_based=zero_based, dtype=dtype, cache=cache, prefetch=prefetch,
                           block_size=block_size, label_kind=label_kind)


# ------------------------------------------------------------------------- a user's chunks
class _ChunksStream(ChunkStream):
    def __init__(self, chunks: Iterable[Chunk] | Callable[[], Iterable[Chunk]], *,
                 n_features: int | None, classes: ArrayLike | None, dtype: Any,
                 prefetch: int, source: str, label_kind: LabelKind = "multiclass") -> None:
        if isinstance(chunks, Iterator):
            raise TypeError("stream_chunks needs a re-iterable (a list, or an object whose "
                            "__iter__ starts a new pass) or a function returning a new iterator "
                            "per pass, not a one-shot iterator or generator: a stream is read "
                            "once per pass")
        if not (callable(chunks) or isinstance(chunks, Iterable)):
            raise TypeError(f"stream_chunks: expected an iterable of (X, y) chunks or a "
                            f"function returning one, got {type(chunks).__name__}")
        super().__init__(source=source, chunk_size=None, n_features=n_features, classes=classes,
                         dtype=dtype, prefetch=prefetch, label_kind=label_kind)
        self._chunks = chunks
        self._sparse: bool | None = None

    def _open(self) -> Iterator[Chunk]:
        src = self._chunks() if callable(self._chunks) else self._chunks
        it = iter(src)
        return it

    def _read(self, stop: Callable[[], bool]) -> Iterator[Chunk]:
        it = self._open()
        try:
            for k, item in enumerate(it):
                if stop():
                    return
                yield _pair(item, self.source, k)
        finally:
            close = getattr(it, "close", None)
            if close is not None:
                close()

    def _scan(self) -> tuple[int | None, int, NDArray[Any], int | None]:
        rows = nnz = 0
        width: int | None = None
        labels: list[NDArray[Any]] = []
        for k, (X, y) in enumerate(self._read(lambda: False)):
            shape = getattr(X, "shape", None)
            if shape is None or len(shape) != 2:
                raise ValueError(f"{self.source}: chunk {k}: X must be 2-D (a chunk of rows), "
                                 f"got {type(X).__name__}")
            if width is None:
                width = int(shape[1])
            elif int(shape[1]) != width:
                raise ValueError(f"{self.source}: chunk {k} has {shape[1]} columns, chunk 0 "
                                 f"{width}; every chunk needs the same columns")
            rows += int(shape[0])
            nnz += int(X.nnz) if sp.issparse(X) else int(np.prod(shape))
            if not self.regression:
                labels.append(np.unique(np.asarray(y)))
            if self._sparse is None:
                self._sparse = bool(sp.issparse(X))
        if width is None:
            raise ValueError(f"{self.source}: no chunks (the iterable is empty)")
        if self._n_features is not None and width > self._n_features:
            raise ValueError(f"{self.source}: the chunks have {width} columns, more than "
                             f"n_features={self._n_features}")
        classes = np.unique(np.concatenate(labels)) if labels else np.empty(0)
        return rows, width, classes, nnz

    def _check_chunk(self, X: Any, y: Any, k: int, row0: int, classes: NDArray[Any] | None
                     ) -> Chunk:
        n = self.n_features
        if sp.issparse(X) and X.shape[1] < n:  # narrower sparse chunk: pad the width
            X = sp.csr_matrix(X)
            X = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], n))
        return super()._check_chunk(X, y, k, row0, classes)

    @property
    def sparse(self) -> bool:
        if self._sparse is None:
            for X, _ in self._read(lambda: False):
                self._sparse = bool(sp.issparse(X))
                break
        return bool(self._sparse)


def _pair(item: Any, source: str, k: int) -> Chunk:
    try:
        X, y = item
    except (TypeError, ValueError):
        raise TypeError(f"{source}: chunk {k} is a {type(item).__name__}, not an (X, y) "
                        "pair") from None
    return X, y


def stream_chunks(chunks: Iterable[Chunk] | Callable[[], Iterable[Chunk]], *,
                  n_features: int | None = None, classes: ArrayLike | None = None,
                  dtype: Any = np.float64, prefetch: int = 2,
                  name: str = "chunks", label_kind: LabelKind = "multiclass") -> ChunkStream:
    """A stream over your own chunks: a re-iterable of ``(X_chunk, y_chunk)`` pairs (a list,
    or an object whose ``__iter__`` starts a new pass), or a function that returns a new
    iterator of them per pass (e.g. a generator function).

    ``X_chunk`` is a 2-D array or a SciPy sparse matrix (converted to CSR); ``y_chunk`` one
    label per row. ``n_features`` and ``classes`` are found by one pass over the chunks when
    not given (a sparse chunk narrower than ``n_features`` is widened). Chunks are read
    ``prefetch`` ahead in a background thread, which calls your iterable's ``__iter__`` (or the
    function) and ``__next__``: pass ``prefetch=0`` if they must run in the consumer's thread.
    ``name`` appears in error messages. ``label_kind="regression"``: the labels are
    real-valued targets (no classes).
    """
    return _ChunksStream(chunks, n_features=n_features, classes=classes, dtype=dtype,
                         prefetch=prefetch, source=name, label_kind=label_kind)


class _ArrayStream(ChunkStream):
    def __init__(self, X: Any, y: ArrayLike, *, chunk_size: int, classes: ArrayLike | None,
                 dtype: Any, label_kind: LabelKind) -> None:
        Xc = check_matrix(X)
        yy = np.asarray(y)
        if yy.ndim != 1 or yy.shape[0] != Xc.shape[0]:
            raise ValueError(f"y has shape {yy.shape} but X has {Xc.shape[0]} rows")
        if classes is None and label_kind != "regression":
            classes = np.unique(yy)
        super().__init__(source="arrays", chunk_size=chunk_size, n_features=int(Xc.shape[1]),
                         classes=classes, dtype=dtype, prefetch=0, label_kind=label_kind)
        self.X, self.y = Xc, yy
        self._n_rows = int(Xc.shape[0])
        self._nnz = int(Xc.nnz) if sp.issparse(Xc) else int(Xc.size)

    def _read(self, stop: Callable[[], bool]) -> Iterator[Chunk]:
        assert self.chunk_size is not None
        for start in range(0, self.X.shape[0], self.chunk_size):
            if stop():
                return
            stop_row = start + self.chunk_size
            yield self.X[start:stop_row], self.y[start:stop_row]

    def _scan(self) -> tuple[int | None, int, NDArray[Any], int | None]:
        return self._n_rows, int(self.X.shape[1]), self.classes, self._nnz

    @property
    def sparse(self) -> bool:
        return bool(sp.issparse(self.X))


def stream_arrays(X: Any, y: ArrayLike, *, chunk_size: int = 100_000,
                  classes: ArrayLike | None = None, dtype: Any = np.float64,
                  label_kind: LabelKind = "multiclass") -> ChunkStream:
    """A stream over arrays in memory (dense or sparse ``X``): consecutive row blocks of
    ``chunk_size`` rows, in the consumer's thread. For tests and comparisons with the same data
    read from a file; ``classes`` default to the labels of ``y`` (none for
    ``label_kind="regression"``: real-valued targets)."""
    return _ArrayStream(X, y, chunk_size=chunk_size, classes=classes, dtype=dtype,
                        label_kind=label_kind)



# ------------------------------------------------------------------------- binary files
class _BinaryStream(ChunkStream):
    def __init__(self, path: PathLike, *, chunk_size: int | None, prefetch: int) -> None:
        with _binary.BinaryFile(path) as f:
            # a file without classes holds real-valued targets (a regression stream's)
            regression = f.classes.shape[0] == 0
            kind: LabelKind = "regression" if regression else "multiclass"
            super().__init__(source=str(path), chunk_size=chunk_size, n_features=f.n_features,
                             classes=None if regression else f.classes, dtype=f.dtype,
                             prefetch=prefetch, label_kind=kind)
            self._n_rows, self._nnz, self._dense = f.n_rows, f.nnz, f.dense
        self.path = Path(path)

    def _read(self, stop: Callable[[], bool]) -> Iterator[Chunk]:
        with _binary.BinaryFile(self.path) as f:  # checked again: the file may have changed
            if (f.n_features, f.dtype, f.dense) != (self._n_features, self.dtype, self._dense):
                raise ValueError(f"{self.source}: the file changed since the stream was made "
                                 "(another width, dtype or layout); make the stream again")
            chunks: Iterator[Chunk] = f.chunks(stop)
            if self.chunk_size is not None:
                chunks = _rechunk(chunks, self.chunk_size)
            yield from chunks

    def _scan(self) -> tuple[int | None, int, NDArray[Any], int | None]:
        return self._n_rows, self.n_features, self.classes, self._nnz

    @property
    def sparse(self) -> bool:
        return not self._dense


def _rechunk(chunks: Iterable[Chunk], size: int) -> Iterator[Chunk]:
    """The rows of ``chunks`` in chunks of exactly ``size`` rows (the last one: the rest)."""
    pending: list[Chunk] = []
    have = 0
    for X, y in chunks:
        n, start = int(X.shape[0]), 0
        while start < n:
            take = min(size - have, n - start)
            piece = (X, y) if take == n else (X[start:start + take], y[start:start + take])
            pending.append(piece)
            have += take
            start += take
            if have == size:
                yield _stack(pending)
                pending, have = [], 0
    if pending:
        yield _stack(pending)


def _stack(pieces: list[Chunk]) -> Chunk:
    if len(pieces) == 1:
        return pieces[0]
    Xs = [p[0] for p in pieces]
    X = sp.vstack(Xs, format="csr") if sp.issparse(Xs[0]) else np.vstack(Xs)
    return X, np.concatenate([p[1] for p in pieces])


def stream_binary(path: PathLike, *, chunk_size: int | None = None,
                  prefetch: int = 2) -> ChunkStream:
    """A stream over a binary chunk file (:func:`write_binary`, or a stream's cache): no
    parsing, only reads (and a checksum per chunk).

    ``chunk_size=None`` yields the chunks as stored; a number re-slices them into chunks of
    exactly that many rows. The file is checked when the stream is made and at every pass (see
    :mod:`sqnopt.datasets._binary` for the format and what is checked); a damaged file raises
    ``ValueError`` naming the file and what is wrong. A file that stores no classes (written
    from a stream of regression targets) is a stream of regression targets.
    """
    return _BinaryStream(path, chunk_size=chunk_size, prefetch=prefetch)


def write_binary(path: PathLike, data: ChunkStream | PathLike | tuple[Any, ArrayLike], *,
                 chunk_size: int = 100_000, n_features: int | None = None,
                 classes: ArrayLike | None = None, zero_based: bool = False,
                 dtype: Any = np.float64) -> Path:
    """Write data in the binary chunk format, for :func:`stream_binary`.

    ``data`` is a :class:`ChunkStream` (written as it streams: its chunks, width, dtype and
    classes; the other arguments are ignored), the path of an svmlight file (read with
    :func:`stream_svmlight` and the arguments), or ``(X, y)`` arrays (dense ``X`` gives a dense
    file). Labels must be numbers. The file appears only when complete (written to a temporary
    file next to it, then moved). Returns the path.
    """
    fp: _binary.Fingerprint | None = None
    if isinstance(data, ChunkStream):
        stream = data
    elif isinstance(data, tuple):
        if len(data) != 2:
            raise TypeError("write_binary: pass (X, y), a stream, or an svmlight file's path")
        stream = stream_arrays(data[0], data[1], chunk_size=chunk_size, classes=classes,
                               dtype=dtype)
    else:
        stream = stream_svmlight(data, chunk_size=chunk_size, n_features=n_features,
                                 classes=classes, zero_based=zero_based, dtype=dtype)
        fp = _binary.fingerprint(data)
    classes_ = stream.classes
    if classes_.dtype.kind not in "biuf":
        raise ValueError(f"{stream.source}: the binary format stores numeric labels, these are "
                         f"{classes_.dtype}; map them to numbers first")
    writer = _binary.Writer(path, n_features=stream.n_features, dtype=stream.dtype,
                            chunk_size=stream.chunk_size, dense=not stream.sparse,
                            fingerprint=fp)
    try:
        with iter(stream) as chunks:
            for X, y in chunks:
                writer.write(X, y)
        return writer.finish(classes_)
    finally:
        writer.discard()
