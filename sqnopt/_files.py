"""Crash-safe output files: every file sqnopt writes goes through :func:`atomic_write`.

Opening the destination with truncation and then writing loses the old file when the process
dies mid-write (a kill, a full disk, a power cut): what is left is a partial file. Instead the
new content goes to a temporary file in the destination's directory (same file system, so the
final rename is atomic), is flushed and ``fsync``-ed, and then ``os.replace`` puts it in place in
one step; the directory is ``fsync``-ed so the rename itself is durable. A reader sees the old
file or the new one, never a mix. A process killed mid-write leaves the old file intact and a
hidden ``.NAME.*.tmp`` beside it; any other failure removes the temporary file.

Only regular files are replaced: writing "over" a device, pipe or directory (``/dev/null``,
``/dev/stdout``) would replace the special file with a regular one, so it is refused.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO

__all__ = ["atomic_write", "check_output_path", "write_bytes_atomic", "write_text_atomic"]


def _target(path: str | os.PathLike[str]) -> Path:
    """The file that will be replaced: symbolic links are followed (the link stays a link)."""
    p = Path(path)
    return Path(os.path.realpath(p)) if p.is_symlink() else p


def check_output_path(path: str | os.PathLike[str], what: str = "output file") -> Path:
    """Fail early, before any work, if ``path`` cannot be written atomically.

    Raises ``ValueError`` (naming ``what``, the path and the fix) when the path is an existing
    directory or special file, when its directory does not exist, or when a file cannot be
    created there (checked by creating and removing a probe file). Returns the path that will be
    replaced (symbolic links resolved).
    """
    p = _target(path)
    name = str(path)
    if str(path) == "":
        raise ValueError(f"{what}: empty path. Give a file name")
    try:
        st = os.stat(p)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise ValueError(f"{what} {name!r}: cannot be accessed ({exc.strerror})") from None
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            raise ValueError(f"{what} {name!r} is a directory. Give a file name")
        if not stat.S_ISREG(st.st_mode):
            raise ValueError(f"{what} {name!r} is not a regular file (a device, pipe or socket); "
                             "sqnopt replaces output files atomically and writes only regular "
                             "files. Give a file name")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise ValueError(f"{what} {name!r}: the directory {str(parent)!r} does not exist. "
                         "Create it first or choose another path")
    probe = parent / f".{p.name}.{secrets.token_hex(4)}.probe"
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        raise ValueError(f"{what} {name!r}: cannot create files in {str(parent)!r} "
                         f"({exc.strerror}). Choose a writable directory") from None
    os.close(fd)
    os.unlink(probe)
    return p


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory descriptors
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - file systems that refuse fsync on directories
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike[str]) -> Iterator[IO[bytes]]:
    """Context manager giving a binary file whose content replaces ``path`` atomically on a
    normal exit (see the module docstring); on an exception the destination is untouched.

    The new file gets the permissions of the file it replaces, or ``0o666`` minus the umask for
    a new file (what ``open(path, "w")`` gives).
    """
    target = _target(path)
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise ValueError(f"{str(path)!r} is {kind}; sqnopt writes output files atomically and "
                         "only replaces regular files. Give a file name")
    directory = target.parent if str(target.parent) else Path(".")
    tmp = directory / f".{target.name}.{secrets.token_hex(6)}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # umask applies
    except FileNotFoundError:
        raise FileNotFoundError(f"cannot write {str(path)!r}: the directory {str(directory)!r} "
                                "does not exist") from None
    except OSError as exc:
        raise type(exc)(exc.errno, f"cannot write {str(path)!r}: cannot create a file in "
                        f"{str(directory)!r} ({exc.strerror})") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        if st is not None:
            os.chmod(tmp, stat.S_IMODE(st.st_mode))
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(directory)


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes) -> Path:
    """``Path(path).write_bytes(data)``, atomically (see :func:`atomic_write`)."""
    with atomic_write(path) as fh:
        fh.write(data)
    return Path(path)


def write_text_atomic(path: str | os.PathLike[str], text: str, encoding: str = "utf-8") -> Path:
    """``Path(path).write_text(text)``, atomically (see :func:`atomic_write`)."""
    return write_bytes_atomic(path, text.encode(encoding))
