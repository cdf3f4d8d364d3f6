"""Limit BLAS threading while the iteration loop runs.

The loop's BLAS/LAPACK calls are small (vectors of the parameter dimension, RES's n x n
factorisations at n ~ 100): handing them to a thread pool costs more than it gains. Measured on
the 2-core development machine, RES on a9a (n = 124) took 1.35 s with OpenBLAS's default 2 threads
and 0.069 s with 1 thread for the same 438 iterations.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from typing import Any

_controller: Any = None


def blas_threads_limited(n_threads: int | None) -> AbstractContextManager[Any]:
    """A context manager capping BLAS threads at ``n_threads`` (``None``: leave them alone)."""
    global _controller
    if n_threads is None:
        return nullcontext()
    if _controller is None:
        from threadpoolctl import ThreadpoolController

        _controller = ThreadpoolController()  # library discovery once (~ms); limits are ~20 us
    return _controller.limit(limits=n_threads, user_api="blas")  # type: ignore[no-any-return]
