"""Limit BLAS threading while the iteration loop runs.

The loop's BLAS/LAPACK calls are small (vectors of the parameter dimension, RES's n x n
factorisations at n ~ 100): handing them to a thread pool costs more than it gains (RES on a9a
ran an order of magnitude slower with OpenBLAS's default threads on 2 cores; docs/benchmarks.md).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_controller: Any = None
#: BLAS thread counts are process-wide, but fits run in several threads at once (see
#: docs/usage.md, "Threads"). Limits are therefore shared: the first run to start saves the
#: library's setting and the last to end restores it; in between the smallest requested limit
#: applies. (Plain nested ``threadpoolctl`` limits restore out of order when runs overlap, and
#: left the process with 1 BLAS thread for good.)
_lock = threading.Lock()
_active: list[int] = []
_original: Any = None


def _apply(n_threads: int) -> Any:
    global _controller
    if _controller is None:
        from threadpoolctl import ThreadpoolController

        _controller = ThreadpoolController()  # library discovery once (~ms); limits are ~20 us
    return _controller.limit(limits=n_threads, user_api="blas")


@contextmanager
def blas_threads_limited(n_threads: int | None) -> Iterator[None]:
    """A context manager capping BLAS threads at ``n_threads`` (``None``: leave them alone);
    safe when runs in several threads overlap."""
    global _original
    if n_threads is None:
        yield
        return
    with _lock:
        if not _active:
            _original = _apply(n_threads)  # remembers the library's own setting
        elif n_threads < min(_active):
            _apply(n_threads)
        _active.append(n_threads)
    try:
        yield
    finally:
        with _lock:
            _active.remove(n_threads)
            if not _active:
                _original.restore_original_limits()
                _original = None
            elif n_threads < min(_active):
                _apply(min(_active))
