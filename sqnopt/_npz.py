"""Reading one array of an ``.npz`` archive with every size checked and no pickle: the shared
core of the model-file and checkpoint-file readers (:mod:`sqnopt.model`,
:mod:`sqnopt.checkpoint`)."""

from __future__ import annotations

import math
import stat
import struct
import zipfile
import zlib
from pathlib import Path
from typing import Any, Callable, TypeVar

import numpy as np
import numpy.lib.format as npformat
from numpy.typing import NDArray

__all__ = ["read_archive", "read_member"]

T = TypeVar("T")

#: deflate never expands data more than ~1032:1; a member claiming more is corrupt.
_DEFLATE_MAX_RATIO = 1033


def read_member(zf: zipfile.ZipFile, key: str, problem: Callable[[str], Exception]
                ) -> NDArray[Any]:
    """The ``.npy`` member ``key`` of ``zf``, with its header checked against the bytes the
    archive holds before anything is allocated; object dtypes (pickles) are refused. Every
    problem is raised as ``problem(what)`` (the caller's error, naming its file)."""
    member = f"{key}.npy"
    try:
        info = zf.getinfo(member)
    except KeyError:
        raise problem(f"the {key!r} array is missing") from None
    if info.compress_type == zipfile.ZIP_STORED:
        if info.file_size != info.compress_size:
            raise problem(f"the {key!r} array's sizes disagree (corrupt archive)")
    elif info.compress_type == zipfile.ZIP_DEFLATED:
        if info.file_size > _DEFLATE_MAX_RATIO * info.compress_size + 1024:
            raise problem(f"the {key!r} array claims {info.file_size} bytes from "
                          f"{info.compress_size} compressed ones (corrupt archive)")
    else:
        raise problem(f"the {key!r} array uses an unsupported compression method "
                      f"({info.compress_type}); sqnopt files are plain or deflated .npz "
                      "archives")
    with zf.open(info) as fh:
        header: Any = None
        try:
            version = npformat.read_magic(fh)
            if version == (1, 0):
                header = npformat.read_array_header_1_0(fh)
            elif version == (2, 0):
                header = npformat.read_array_header_2_0(fh)
        except ValueError as exc:
            raise problem(f"the {key!r} array has a corrupt header ({exc})") from None
        if header is None:
            raise problem(f"the {key!r} array has an unsupported .npy version {version}")
        shape, fortran, dtype = header
        if dtype.hasobject:
            raise problem(f"the {key!r} array holds Python objects (a pickle), which sqnopt "
                          "never loads")
        count = math.prod(shape)
        remaining = info.file_size - fh.tell()
        if count * dtype.itemsize != remaining:
            raise problem(f"the {key!r} array is truncated or corrupt (its header says "
                          f"{count * dtype.itemsize} bytes of data, the archive holds "
                          f"{remaining})")
        data = fh.read(remaining)
        if len(data) != remaining or fh.read(1):  # reading to the end checks the CRC
            raise problem(f"the {key!r} array is truncated")
    flat = np.frombuffer(data, dtype=dtype, count=count)
    return flat.reshape(shape, order="F" if fortran else "C").copy()


def read_archive(path: Path, what: str, noun: str, problem: Callable[[str], Exception],
                 error_type: type[Exception], read: Callable[[zipfile.ZipFile], T]) -> T:
    """Open the ZIP archive ``path`` (a ``what`` such as "model file") and return
    ``read(archive)``, turning every way the file can be missing, not a regular file, empty,
    not a ZIP archive (the "sqnopt ``noun``" it should be), corrupt or truncated into one
    ``problem(what)`` error; a missing file raises ``FileNotFoundError``. Errors of
    ``error_type`` raised by ``read`` pass through."""
    name = str(path)
    try:
        st = path.stat()
    except FileNotFoundError:
        raise FileNotFoundError(f"{what} {name!r} does not exist") from None
    except OSError as exc:
        raise problem(f"cannot be accessed ({exc.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        raise problem("is a directory" if stat.S_ISDIR(st.st_mode) else "is not a regular file")
    if st.st_size == 0:
        raise problem("is empty (0 bytes; an interrupted write?)")
    try:
        with open(path, "rb") as fh:
            head = fh.read(4)
        if head not in (b"PK\x03\x04", b"PK\x05\x06"):
            raise problem(f"is not an sqnopt {noun} (not a ZIP/.npz archive)")
        with zipfile.ZipFile(path) as zf:
            return read(zf)
    except error_type:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, zlib.error, ValueError,
            struct.error, NotImplementedError, RuntimeError, OverflowError,
            UnicodeDecodeError) as exc:
        raise problem(f"is corrupt or truncated ({type(exc).__name__}: {exc})") from None
    except MemoryError:
        raise problem("is corrupt (an array claims more memory than is available)") from None
    except OSError as exc:
        raise problem(f"cannot be read ({exc.strerror or exc})") from None
