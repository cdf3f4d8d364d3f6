"""Limit BLAS threading while the iteration loop runs, and for a whole fit.

The loop's BLAS/LAPACK calls are small (vectors of the parameter dimension, RES's n x n
factorisations at n ~ 100): handing them to a thread pool costs more than it gains (RES on a9a
ran an order of magnitude slower with OpenBLAS's default threads on 2 cores; docs/report_bfgs.md).

The calls a fit makes around its runs (the validation's sum of squares over the stored values,
the scores of the majority check) are larger, and OpenBLAS splits them over its threads; its
idle workers then spin, waiting for the next call, on the cores sqnopt's own pass threads
(``n_jobs``) need. :func:`one_blas_thread` therefore holds the limit for a whole fit: on the
trainer's ``fit``, ``partial_fit`` and ``fit_stream`` (every estimator's stochastic-driver
fit), on :func:`sqnopt.composite.solve_composite` and on the regularization paths;
``Solver.fit`` holds its own ``blas_threads`` limit the same way.
"""

from __future__ import annotations

import functools
import threading
from typing import Any, Callable, ParamSpec, TypeVar

_P = ParamSpec("_P")
_R = TypeVar("_R")

_blas: list[Any] | None = None
#: BLAS thread counts are process-wide, but fits run in several threads at once (see
#: docs/usage.md, "Threads"). Limits are therefore shared: the first run to start saves the
#: libraries' settings and the last to end restores them; in between the smallest requested
#: limit applies. (Plain nested ``threadpoolctl`` limits restore out of order when runs overlap,
#: and left the process with 1 BLAS thread for good.)
_lock = threading.Lock()
_active: list[int] = []
_original: list[tuple[Any, int]] | None = None


def _libraries() -> list[Any]:
    """The loaded BLAS libraries' ``threadpoolctl`` controllers, discovered once: discovery
    scans the process's shared libraries, while reading or setting a thread count afterwards is
    one call into the library (``threadpoolctl``'s ``limit`` also queries every library's full
    description on each use, which cost more than a small fit)."""
    global _blas
    if _blas is None:
        from threadpoolctl import ThreadpoolController

        _blas = list(ThreadpoolController().select(user_api="blas").lib_controllers)
    return _blas


def _set(n_threads: int | None, current: list[int] | None = None) -> None:
    """Every BLAS library at ``min(its own setting, n_threads)`` (``None``: its own setting);
    a library already there is not touched (the common case under ``OPENBLAS_NUM_THREADS=1``).
    ``current``: the libraries' thread counts when the caller has just read them."""
    assert _original is not None
    for i, (lib, own) in enumerate(_original):
        target = own if n_threads is None else min(own, n_threads)
        if (int(lib.num_threads) if current is None else current[i]) != target:
            lib.set_num_threads(target)


class blas_threads_limited:
    """A context manager capping BLAS threads at ``n_threads`` (``None``: leave them alone);
    safe when runs in several threads overlap. (A class rather than a generator: it is entered
    on every ``run``, including those of fits that last a fraction of a millisecond.)"""

    __slots__ = ("n_threads",)

    def __init__(self, n_threads: int | None) -> None:
        self.n_threads = n_threads

    def __enter__(self) -> None:
        global _original
        n_threads = self.n_threads
        if n_threads is None:
            return
        with _lock:
            if not _active:
                libs = _libraries()
                current = [int(lib.num_threads) for lib in libs]
                _original = list(zip(libs, current))
                _set(n_threads, current)
            elif n_threads < min(_active):
                _set(n_threads)
            _active.append(n_threads)

    def __exit__(self, *exc: object) -> None:
        global _original
        n_threads = self.n_threads
        if n_threads is None:
            return
        with _lock:
            _active.remove(n_threads)
            if not _active:
                _set(None)
                _original = None
            elif n_threads < min(_active):
                _set(min(_active))


def one_blas_thread(fit: Callable[_P, _R]) -> Callable[_P, _R]:
    """``fit`` run under :class:`blas_threads_limited` ``(1)`` from start to end (see the
    module's docstring: OpenBLAS's workers, woken by a call between the runs, would spin on the
    cores of the passes' threads)."""
    @functools.wraps(fit)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        with blas_threads_limited(1):
            return fit(*args, **kwargs)
    return wrapper
