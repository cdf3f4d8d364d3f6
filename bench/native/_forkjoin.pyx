# cython: language_level=3
"""The fixed cost of an OpenMP parallel region, measured as ``sqnopt._parallel.fork_join_seconds``
measures sqnopt's pool: ``n_threads`` tasks of ``task_seconds`` each (busy waiting) in one
``prange`` over ``n_threads`` threads, the mean wall time per region over ``repeats``
back-to-back regions, less ``task_seconds``. Built with ``-fopenmp`` (bench/native/build.py);
the comparison behind sqnopt's choice of its own pool (docs/parallel.md)."""

from cython.parallel cimport prange

cdef extern from "<time.h>" nogil:
    ctypedef long time_t
    cdef struct timespec:
        time_t tv_sec
        long tv_nsec
    int clock_gettime(int clk_id, timespec* tp)
    int CLOCK_MONOTONIC

cdef extern from *:
    """
    #ifdef _OPENMP
    #include <omp.h>
    static int sq_openmp(void) { return 1; }
    #else
    static int sq_openmp(void) { return 0; }
    #endif
    """
    int sq_openmp() nogil


cdef inline double _now() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + 1e-9 * ts.tv_nsec


cdef void _busy(double seconds) noexcept nogil:
    cdef double t0 = _now()
    while _now() - t0 < seconds:
        pass


def openmp() -> bool:
    """Whether this module was compiled with OpenMP."""
    return bool(sq_openmp())


def omp_fork_join_seconds(int n_threads, double task_seconds=20e-6, Py_ssize_t repeats=500):
    """Mean wall time of one OpenMP region of ``n_threads`` busy tasks, less one task's time."""
    import time
    cdef Py_ssize_t r, k
    t = time.perf_counter()
    with nogil:
        for r in range(repeats):
            for k in prange(n_threads, num_threads=n_threads, schedule="dynamic", chunksize=1):
                _busy(task_seconds)
    return (time.perf_counter() - t) / repeats - task_seconds
