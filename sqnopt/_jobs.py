"""``n_jobs``: how many threads the compiled passes of a fit may use.

The meaning is scikit-learn's (and joblib's):

* ``None``: one thread, unless the fit runs inside a ``joblib.parallel_config(n_jobs=...)``
  (or the older ``parallel_backend``) context, whose ``n_jobs`` then applies;
* a positive integer: that many threads (more than the machine has cores is allowed: the
  results do not change, only the speed);
* a negative integer: every core the process may run on (``os.sched_getaffinity``) plus one
  plus ``n_jobs``, so ``-1`` is all of them and ``-2`` all but one (at least one);
* ``0`` (and anything else) is an error.

A pass splits its rows into blocks fixed by the data (``sqnopt._parallel``), so ``n_jobs``
changes the speed of a fit, never its result. BLAS calls (a Newton step's Cholesky
factorisation, RES's eigendecompositions) run between the passes with the solver's
``blas_threads`` (1 by default), never at the same time as them.
"""

from __future__ import annotations

import numbers
import os
import sys
from typing import Any

__all__ = ["check_n_jobs", "effective_n_jobs", "pass_threads", "usable_cpus"]


def usable_cpus() -> int:
    """The cores this process may run on (its CPU affinity where the system has one)."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def check_n_jobs(n_jobs: Any, name: str = "n_jobs") -> int | None:
    """``n_jobs`` as an ``int`` (or ``None``), or a ``ValueError`` / ``TypeError`` saying what
    is accepted."""
    if n_jobs is None:
        return None
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral):
        raise TypeError(f"{name} must be None or an integer (the threads of the compiled "
                        f"passes; -1: every usable core), got {n_jobs!r}")
    value = int(n_jobs)
    if value == 0:
        raise ValueError(f"{name}=0 is not a number of threads: use None or 1 for one thread, "
                         "a positive count, or -1 for every usable core")
    return value


def effective_n_jobs(n_jobs: int | None) -> int:
    """The number of threads ``n_jobs`` means here and now (see the module docstring)."""
    value = check_n_jobs(n_jobs)
    if value is None:
        # a joblib context can only be active if joblib has been imported: a fit outside one
        # does not pay for joblib's lookup (or its import)
        joblib = sys.modules.get("joblib")
        if joblib is None:
            return 1
        value = int(joblib.effective_n_jobs(None))
        if value == 1:
            return 1
    if value < 0:
        return max(usable_cpus() + 1 + value, 1)
    return value


def pass_threads(n_jobs: int | None, n_rows: int, row_work: float) -> int:
    """Threads for one pass over ``n_rows`` rows of ``row_work`` units each: 1 when the block
    policy keeps such a pass on one block (``n_jobs`` is then not even resolved), else
    ``n_jobs`` resolved."""
    from sqnopt._parallel import plan

    if n_jobs == 1 or plan(n_rows, row_work) <= 1:
        return 1
    return effective_n_jobs(n_jobs)
