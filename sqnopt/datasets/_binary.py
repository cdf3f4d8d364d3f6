"""The binary chunk file: parsed chunks on disk, read back without parsing.

One format serves two uses: the cache of a stream (``cache=True``: the first complete pass
writes it, later passes read it, as Vowpal Wabbit's ``--cache``) and the binary form of a data
set (:func:`sqnopt.datasets.write_binary`, read by :func:`sqnopt.datasets.stream_binary`).

Layout (little-endian; "u64" an unsigned 64-bit integer):

========================  ========================================================================
header, 128 bytes         magic ``b"SQNCHUNK"``; format version (u32, 1); flags (u32: 1 = values
                          float32 else float64, 2 = dense chunks, 4 = made from a source file);
                          n_features, n_rows, nnz, n_chunks, chunk_size (0: chunks of any size; else
                          every chunk but the last has chunk_size rows), n_classes,
                          trailer offset, source size (u64 each); source mtime in ns (i64);
                          source digest (16 bytes: BLAKE2b of the source's first and last 64 KiB
                          and its size); options digest (16 bytes: BLAKE2b of the reader options
                          that change the chunks); CRC-32 of the 120 bytes before it (u32);
                          4 bytes reserved (0)
per chunk, 32 bytes       magic ``b"CHNK"``; flags (u32: 1 = every value is 1 and the values are
+ arrays                  omitted, 2 = indptr is int64 else int32, 4 = every value is an integer
                          in [0, 255], stored as uint8); n_rows, nnz (u64); CRC-32 of
                          the first 24 bytes of this record and of the arrays (u32); 4 bytes
                          reserved; then the labels (float64, n_rows), and for CSR chunks
                          indptr (n_rows + 1), indices (int32, nnz) and the values (nnz, unless
                          omitted), for dense chunks the values (n_rows x n_features, row-major)
trailer, 16 bytes         magic ``b"TRLR"``; CRC-32 of the classes (u32); n_classes (u64); then
+ classes                 the sorted distinct labels (float64, n_classes); the end of the file
========================  ========================================================================

Reading trusts nothing: the header's checksum, magic, version, flags and counts, the file's
length, every chunk record's magic and counts (their sums must equal the header's, the last
record must end at the trailer) are checked when the file is opened, and each chunk's checksum
and finiteness when it is read -- the index structure then by :func:`sqnopt.data.check_matrix`
-- before any compiled code sees the arrays. A cache records its source's fingerprint (size,
mtime, the digest of its head and tail) and the options digest: a different source or other
options make it stale.
"""

from __future__ import annotations

import hashlib
import os
import struct
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from sqnopt._files import atomic_write
from sqnopt.datasets._io import MAX_INDEX, PathLike

__all__ = ["BinaryFile", "DamagedError", "Fingerprint", "StaleError", "Writer", "fingerprint"]

MAGIC = b"SQNCHUNK"
VERSION = 1
HEADER = struct.Struct("<8sII8Qq16s16sII")
CHUNK = struct.Struct("<4sIQQII")
TRAILER = struct.Struct("<4sIQ")
CHUNK_MAGIC = b"CHNK"
TRAILER_MAGIC = b"TRLR"

FILE_FLOAT32, FILE_DENSE, FILE_SOURCE = 1, 2, 4
CHUNK_ONES, CHUNK_INDPTR64, CHUNK_UINT8 = 1, 2, 4
_FILE_FLAGS = FILE_FLOAT32 | FILE_DENSE | FILE_SOURCE
_CHUNK_FLAGS = CHUNK_ONES | CHUNK_INDPTR64 | CHUNK_UINT8
#: Bytes of the source's head and of its tail that its digest covers.
FINGERPRINT_BYTES = 1 << 16

assert HEADER.size == 128 and CHUNK.size == 32 and TRAILER.size == 16


class StaleError(ValueError):
    """A cache made from another version of its source, or with other options."""


class DamagedError(ValueError):
    """A file that is not a valid binary chunk file (truncated, overwritten, another format)."""


@dataclass(frozen=True)
class Fingerprint:
    """What identifies a source file's content: its size, modification time (ns) and the
    BLAKE2b digest of its first and last 64 KiB."""

    size: int
    mtime_ns: int
    digest: bytes


def fingerprint(path: PathLike) -> Fingerprint:
    """The :class:`Fingerprint` of a file."""
    st = os.stat(path)
    h = hashlib.blake2b(digest_size=16)
    h.update(st.st_size.to_bytes(8, "little"))
    with open(path, "rb") as fh:
        h.update(fh.read(FINGERPRINT_BYTES))
        if st.st_size > FINGERPRINT_BYTES:
            fh.seek(max(FINGERPRINT_BYTES, st.st_size - FINGERPRINT_BYTES))
            h.update(fh.read(FINGERPRINT_BYTES))
    return Fingerprint(int(st.st_size), int(st.st_mtime_ns), h.digest())


def key_digest(key: str) -> bytes:
    return hashlib.blake2b(key.encode(), digest_size=16).digest()


def _crc(*parts: Any) -> int:
    crc = 0
    for part in parts:
        crc = zlib.crc32(part, crc)
    return crc


@dataclass
class _Entry:
    offset: int
    flags: int
    n_rows: int
    nnz: int
    crc: int


class BinaryFile:
    """An opened, checked binary chunk file (see the module docstring).

    ``fingerprint`` / ``key``: the source's fingerprint and the options digest the file must
    have been made with (:class:`StaleError` otherwise); ``source`` names the source in
    messages. Any damage raises :class:`DamagedError` naming the file and the field.
    """

    def __init__(self, path: PathLike, *, fingerprint: Fingerprint | None = None,
                 key: str | None = None, source: str | None = None) -> None:
        self.path = Path(path)
        self.name = str(path)
        self.fh: IO[bytes] = open(self.path, "rb", buffering=0)
        try:
            self._open(fingerprint, key, source)
        except BaseException:
            self.fh.close()
            raise

    def _damaged(self, what: str) -> DamagedError:
        return DamagedError(f"{self.name}: not a valid sqnopt binary chunk file: {what}")

    def _open(self, expect: Fingerprint | None, key: str | None, source: str | None) -> None:
        size = os.fstat(self.fh.fileno()).st_size
        raw = self.fh.read(HEADER.size)
        if len(raw) < HEADER.size:
            raise self._damaged(f"{size} bytes, shorter than the {HEADER.size}-byte header")
        (magic, version, flags, n_features, n_rows, nnz, n_chunks, chunk_size, n_classes,
         trailer, src_size, src_mtime, src_digest, options, crc, _) = HEADER.unpack(raw)
        if magic != MAGIC:
            raise self._damaged(f"the magic number is {magic!r}, not {MAGIC!r}")
        if version != VERSION:
            raise self._damaged(f"format version {version}; this sqnopt reads version "
                                f"{VERSION} (write the file again with this version)")
        if zlib.crc32(raw[:120]) != crc:
            raise self._damaged("the header's checksum does not match (a damaged header)")
        if flags & ~_FILE_FLAGS:
            raise self._damaged(f"unknown flags {flags:#x}")
        if not 1 <= n_features <= MAX_INDEX:
            raise self._damaged(f"n_features = {n_features}")
        if trailer < HEADER.size or size != trailer + TRAILER.size + 8 * n_classes:
            raise self._damaged(f"the file has {size} bytes, the header says "
                                f"{trailer + TRAILER.size + 8 * n_classes} (truncated or "
                                "extended)")
        if expect is not None:
            if not flags & FILE_SOURCE or (src_size, src_mtime, src_digest) != (
                    expect.size, expect.mtime_ns, expect.digest):
                raise StaleError(f"{self.name}: made from another version of "
                                 f"{source or 'its source'}")
        if key is not None and options != key_digest(key):
            raise StaleError(f"{self.name}: made with other reader options")
        self.dtype = np.dtype(np.float32 if flags & FILE_FLOAT32 else np.float64)
        self.dense = bool(flags & FILE_DENSE)
        self.n_features, self.n_rows, self.nnz = int(n_features), int(n_rows), int(nnz)
        self.n_chunks = int(n_chunks)
        self.chunk_size: int | None = int(chunk_size) or None
        # trailer: the classes
        self.fh.seek(trailer)
        traw = self.fh.read(TRAILER.size)
        tmagic, tcrc, tcount = TRAILER.unpack(traw)
        if tmagic != TRAILER_MAGIC or tcount != n_classes:
            raise self._damaged("the trailer (the classes) is not where the header says")
        classes = np.empty(int(n_classes))
        if self.fh.readinto(classes) != classes.nbytes:  # type: ignore[attr-defined]
            raise self._damaged("the classes are cut short")
        if zlib.crc32(classes.data) != tcrc or not np.all(np.isfinite(classes)) \
                or np.any(np.diff(classes) <= 0):
            raise self._damaged("the classes are damaged")
        self.classes = classes
        # the chunk records: counts and sizes must add up to the header's
        entries: list[_Entry] = []
        pos, rows, values = HEADER.size, 0, 0
        for k in range(self.n_chunks):
            if pos + CHUNK.size > trailer:
                raise self._damaged(f"chunk {k} starts past the last chunk's end")
            self.fh.seek(pos)
            cmagic, cflags, c_rows, c_nnz, ccrc, _ = CHUNK.unpack(self.fh.read(CHUNK.size))
            if cmagic != CHUNK_MAGIC or cflags & ~_CHUNK_FLAGS or (
                    cflags & CHUNK_ONES and cflags & CHUNK_UINT8):
                raise self._damaged(f"chunk {k}: no chunk record at byte {pos}")
            if not 1 <= c_rows <= (self.chunk_size or c_rows) or c_rows > n_rows or (
                    self.chunk_size and k < self.n_chunks - 1 and c_rows != self.chunk_size):
                raise self._damaged(f"chunk {k}: {c_rows} rows (chunk size "
                                    f"{self.chunk_size or 'free'})")
            if c_nnz > c_rows * n_features or (self.dense and c_nnz != c_rows * n_features):
                raise self._damaged(f"chunk {k}: {c_nnz} stored values in {c_rows} rows of "
                                    f"{n_features} features")
            entries.append(_Entry(pos, cflags, int(c_rows), int(c_nnz), ccrc))
            pos += CHUNK.size + self._record_bytes(cflags, int(c_rows), int(c_nnz))
            rows += c_rows
            values += c_nnz
        if pos != trailer or rows != n_rows or values != nnz:
            raise self._damaged(f"the chunks hold {rows} rows and {values} values ending at byte "
                                f"{pos}; the header says {n_rows} rows, {nnz} values, the "
                                f"trailer at byte {trailer}")
        self.entries = entries

    def _record_bytes(self, flags: int, n_rows: int, nnz: int) -> int:
        item = self.dtype.itemsize
        if self.dense:
            return 8 * n_rows + item * nnz
        ptr = 8 if flags & CHUNK_INDPTR64 else 4
        if flags & CHUNK_ONES:
            item = 0
        elif flags & CHUNK_UINT8:
            item = 1
        return 8 * n_rows + ptr * (n_rows + 1) + 4 * nnz + item * nnz

    def close(self) -> None:
        self.fh.close()

    def __enter__(self) -> BinaryFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _fill(self, arr: NDArray[Any], k: int) -> NDArray[Any]:
        if arr.nbytes and self.fh.readinto(arr) != arr.nbytes:  # type: ignore[attr-defined]
            raise self._damaged(f"chunk {k} is cut short")
        return arr

    def read_chunk(self, k: int) -> tuple[Any, NDArray[np.float64]]:
        """Chunk ``k``: ``(X, y)``, its checksum and labels checked."""
        e = self.entries[k]
        self.fh.seek(e.offset)
        head = self.fh.read(CHUNK.size)
        y = self._fill(np.empty(e.n_rows), k)
        if self.dense:
            data = self._fill(np.empty((e.n_rows, self.n_features), dtype=self.dtype), k)
            if _crc(head[:24], y, data) != e.crc:
                raise self._damaged(f"chunk {k}: its checksum does not match (damaged data)")
            X: Any = data
        else:
            indptr = self._fill(np.empty(e.n_rows + 1, dtype=np.int64 if e.flags
                                         & CHUNK_INDPTR64 else np.int32), k)
            indices = self._fill(np.empty(e.nnz, dtype=np.int32), k)
            if e.flags & CHUNK_ONES:
                values = np.ones(e.nnz, dtype=self.dtype)
                crc = _crc(head[:24], y, indptr, indices)
            elif e.flags & CHUNK_UINT8:
                small = self._fill(np.empty(e.nnz, dtype=np.uint8), k)
                crc = _crc(head[:24], y, indptr, indices, small)
                values = small.astype(self.dtype)
            else:
                values = self._fill(np.empty(e.nnz, dtype=self.dtype), k)
                crc = _crc(head[:24], y, indptr, indices, values)
            if crc != e.crc:
                raise self._damaged(f"chunk {k}: its checksum does not match (damaged data)")
            # a consistent structure before SciPy (or compiled code) sees it
            if indptr[0] != 0 or indptr[-1] != e.nnz or np.any(np.diff(indptr) < 0):
                raise self._damaged(f"chunk {k}: its row offsets are inconsistent")
            if e.nnz and (int(indices.min()) < 0 or int(indices.max()) >= self.n_features):
                raise self._damaged(f"chunk {k}: a feature index outside [0, "
                                    f"{self.n_features})")
            X = sp.csr_matrix((values, indices, indptr), shape=(e.n_rows, self.n_features))
        if not np.all(np.isfinite(y)):
            raise self._damaged(f"chunk {k}: a label is not finite")
        return X, y

    def chunks(self, stop: Callable[[], bool] = lambda: False
               ) -> Iterator[tuple[Any, NDArray[np.float64]]]:
        """Every chunk in order (``stop()`` true: end early)."""
        for k in range(self.n_chunks):
            if stop():
                return
            yield self.read_chunk(k)


def _small_integers(values: NDArray[Any]) -> NDArray[np.uint8] | None:
    """The values as uint8 when every one is an integer in [0, 255] (e.g. one-hot indicators,
    counts), else None."""
    if not values.shape[0] or values.min() < 0 or values.max() > 255:
        return None
    small = values.astype(np.uint8)
    return small if np.array_equal(small, values) else None


class _Discarded(Exception):
    """Thrown into :func:`~sqnopt._files.atomic_write` to drop the temporary file."""


class Writer:
    """Writes a binary chunk file through :func:`sqnopt._files.atomic_write`: a temporary file
    next to ``path``, moved over it by :meth:`finish` (a reader never sees a partial file);
    :meth:`discard` removes it."""

    def __init__(self, path: PathLike, *, n_features: int, dtype: Any, chunk_size: int | None,
                 dense: bool, fingerprint: Fingerprint | None = None, key: str = "") -> None:
        self.path = Path(path)
        self.dtype = np.dtype(dtype)
        self.n_features, self.dense = int(n_features), bool(dense)
        self.chunk_size = int(chunk_size or 0)
        self.fingerprint, self.key = fingerprint, key
        self.n_rows = self.nnz = self.n_chunks = 0
        self.done = False
        self._cm = atomic_write(self.path)
        try:
            self.fh: IO[bytes] = self._cm.__enter__()
        except (OSError, ValueError) as exc:
            raise type(exc)(f"cannot write the binary chunk file {str(self.path)!r} ({exc}); "
                            "pass a writable path (cache=PATH)") from None
        self.fh.write(bytes(HEADER.size))

    def write(self, X: Any, y: NDArray[Any]) -> None:
        """Append one chunk (a canonical CSR, or a dense array for a dense file)."""
        yy = np.ascontiguousarray(y, dtype=np.float64)
        if np.asarray(y).dtype.kind not in "biuf":
            raise ValueError(f"{self.path}: the binary format stores numeric labels, the chunk's "
                             f"are {np.asarray(y).dtype}; map them to numbers (or turn the "
                             "cache off)")
        n = int(yy.shape[0])
        if self.dense:
            data = np.ascontiguousarray(X, dtype=self.dtype)
            nnz, flags = int(data.size), 0
            arrays: list[Any] = [yy, data]
        else:
            csr = sp.csr_matrix(X)
            nnz = int(csr.nnz)
            values = np.ascontiguousarray(csr.data[:nnz], dtype=self.dtype)
            wide = nnz > MAX_INDEX
            indptr = np.ascontiguousarray(csr.indptr, dtype=np.int64 if wide else np.int32)
            indices = np.ascontiguousarray(csr.indices[:nnz], dtype=np.int32)
            flags = CHUNK_INDPTR64 if wide else 0
            arrays = [yy, indptr, indices]
            small = _small_integers(values)
            if small is not None and bool(np.all(small == 1)):
                flags |= CHUNK_ONES
            elif small is not None:
                flags |= CHUNK_UINT8
                arrays.append(small)
            else:
                arrays.append(values)
        head = CHUNK.pack(CHUNK_MAGIC, flags, n, nnz, 0, 0)
        crc = _crc(head[:24], *arrays)
        self.fh.write(CHUNK.pack(CHUNK_MAGIC, flags, n, nnz, crc, 0))
        for a in arrays:
            self.fh.write(a.data.cast("B"))
        self.n_rows += n
        self.nnz += nnz
        self.n_chunks += 1

    def finish(self, classes: NDArray[Any]) -> Path:
        """Write the classes and the header, and move the file into place."""
        cls = np.ascontiguousarray(classes, dtype=np.float64)
        trailer = self.fh.tell()
        self.fh.write(TRAILER.pack(TRAILER_MAGIC, zlib.crc32(cls.data), cls.shape[0]))
        self.fh.write(cls.data.cast("B"))
        fp = self.fingerprint
        flags = ((FILE_FLOAT32 if self.dtype == np.float32 else 0)
                 | (FILE_DENSE if self.dense else 0) | (FILE_SOURCE if fp is not None else 0))
        fields = [MAGIC, VERSION, flags, self.n_features, self.n_rows, self.nnz, self.n_chunks,
                  self.chunk_size, cls.shape[0], trailer, fp.size if fp else 0,
                  fp.mtime_ns if fp else 0, fp.digest if fp else bytes(16),
                  key_digest(self.key)]
        raw = HEADER.pack(*fields, 0, 0)
        self.fh.seek(0)
        self.fh.write(HEADER.pack(*fields, zlib.crc32(raw[:120]), 0))
        self.done = True
        self._cm.__exit__(None, None, None)  # flushed, fsync-ed, moved into place
        return self.path

    def discard(self) -> None:
        """Remove the temporary file (nothing after :meth:`finish`)."""
        if self.done:
            return
        self.done = True
        self._cm.__exit__(_Discarded, _Discarded(), None)
