"""A persistent child process that runs the fuzz cases, so that a crash (SIGSEGV, abort) or a hang
is one failed example with its input, not a dead or stuck test run.

The parent (the hypothesis test) sends ``(case name, keyword arguments)`` pickled over the
child's stdin; the child (``_child.py``, under ``-X faulthandler``) runs ``CASES[name](**kw)``
and answers with ``("ok", summary)`` or ``("raised", exception type, MRO names, message)``.
If the child dies, the case fails with its exit signal and the faulthandler dump; if it does not
answer within the timeout it is killed and the case fails as a hang. Either way the next case
starts a fresh child.
"""

from __future__ import annotations

import collections
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CHILD = Path(__file__).with_name("_child.py")

#: Cases run per kind in this process (reported at the end of the session).
COUNTS: collections.Counter[str] = collections.Counter()


class CaseCrashed(AssertionError):
    """The child process died while running a case."""


class CaseHung(AssertionError):
    """The child process did not answer within the timeout."""


@dataclass(frozen=True)
class Raised:
    """An exception raised by the case, as the child saw it."""

    kind: str
    bases: tuple[str, ...]  # the names of the exception's classes (its MRO)
    message: str
    trace: str = ""  # where it was raised (for the failure report)

    def isinstance(self, *names: str) -> bool:
        return any(n in self.bases for n in names)


class Worker:
    def __init__(self, timeout: float = 60.0) -> None:
        self.timeout = timeout
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: Any = None

    def _start(self) -> subprocess.Popen[bytes]:
        self._stderr = tempfile.TemporaryFile()
        from tests.conftest import sqnopt_env

        env = sqnopt_env(PYTHONHASHSEED="0")
        self._proc = subprocess.Popen([sys.executable, "-X", "faulthandler", str(CHILD)],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=self._stderr, env=env, cwd=tempfile.gettempdir())
        return self._proc

    def close(self) -> None:
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.kill()
            self._proc.communicate()
            self._proc = None
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        return self._stderr.read()[-4000:].decode("utf-8", errors="replace")

    def call(self, case: str, timeout: float | None = None, **kwargs: Any) -> Any:
        """Run one case; returns its summary or a :class:`Raised`."""
        COUNTS[case] += 1
        proc = self._proc if self._proc is not None and self._proc.poll() is None else self._start()
        assert proc.stdin is not None and proc.stdout is not None
        payload = pickle.dumps((case, kwargs), protocol=pickle.HIGHEST_PROTOCOL)
        try:
            proc.stdin.write(struct.pack("<Q", len(payload)) + payload)
            proc.stdin.flush()
            header = self._read(proc, 8, timeout or self.timeout)
            reply = pickle.loads(self._read(proc, struct.unpack("<Q", header)[0], 30.0))
        except (BrokenPipeError, EOFError, ConnectionError) as exc:
            proc.wait(timeout=30)
            code = proc.returncode
            what = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit {code}"
            detail = self._stderr_tail()
            self.close()
            raise CaseCrashed(f"the child died running {case} ({what}): {detail}") from exc
        if reply[0] == "ok":
            return reply[1]
        return Raised(*reply[1:])

    def _read(self, proc: subprocess.Popen[bytes], n: int, timeout: float) -> bytes:
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        chunks: list[bytes] = []
        got = 0
        while got < n:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([fd], [], [], max(left, 0.0))
            if not ready:
                detail = self._stderr_tail()
                proc.send_signal(signal.SIGABRT)  # faulthandler dumps where it hangs
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                detail = self._stderr_tail() or detail
                self.close()
                raise CaseHung(f"no answer within {timeout:.0f} s: {detail}")
            chunk = os.read(fd, n - got)
            if not chunk:
                raise EOFError
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)
