# cython: language_level=3
"""Deterministic parallel passes (see ``_parallel.pxd`` for the contract).

**The block policy.** A pass of ``size`` rows costing ``row_work`` units per row (a stored entry
of a sparse row read once is one unit, ``DENSE_ENTRIES_PER_UNIT`` entries of a dense row are one,
the per-row work of a loss is ``ROW_WORK`` units; softmax multiplies by its ``K`` scores) has
``W = size * row_work`` units of work and gets

    B = min(W / min_block_work, W / (reduce_ratio * n_vec), max_blocks, size)

blocks (floors; ``n_vec``: the length of the vector it sums into, that term left out when it
sums into none), or one block if that is below 2; below 64 blocks, ``B`` is rounded down to a
power of two, so that 2, 4 or 8 threads get equal shares of blocks (3 blocks on 2 threads leave
one thread a third of the pass idle). Each block therefore has at least
``min_block_work`` units -- enough to pay for handing it to a thread -- and a pass that scatters
into a vector spends at most ``1 / reduce_ratio`` of its work on zeroing and adding the
``B - 1`` partial vectors. Those live in a ring of a few buffers per thread (:func:`ring_size`,
at most ``max_vector_bytes`` of them), each added to the pass's vector in block order as soon as
the blocks before it are. Passes below the first bound are the serial loop, exactly as before
parallel passes existed. The defaults are measured by ``bench/parallel_passes.py
--break-even`` (docs/parallel.md).
"""

from libc.string cimport memset


cdef extern from "_pool.h" nogil:
    ctypedef void (*sq_task_fn)(void* ctx, Py_ssize_t task, int worker) noexcept nogil
    ctypedef int (*sq_block_fn)(void* ctx, Py_ssize_t block, double* out) noexcept nogil
    int sq_pool_run(int n_threads, Py_ssize_t n_tasks, sq_task_fn fn, void* ctx)
    int sq_ordered_run(int n_threads, Py_ssize_t n_blocks, sq_block_fn fn, void* ctx,
                       double* out, Py_ssize_t n_vec, double* ring, Py_ssize_t n_ring,
                       int* status)
    int sq_pool_threads_available()
    int sq_pool_size()
    int SQ_POOL_MAX_THREADS


# ---- the block policy -------------------------------------------------------------------------

cdef double _min_block_work = 32768.0
cdef double _reduce_ratio = 8.0
cdef double _max_vector_bytes = 256.0 * 1024 * 1024
cdef Py_ssize_t _max_blocks = 256

#: the defaults, for :func:`block_policy` and tests that restore them
DEFAULT_POLICY = {"min_block_work": 32768.0, "reduce_ratio": 8.0,
                  "max_vector_bytes": 256.0 * 1024 * 1024, "max_blocks": 256}


cdef int run_tasks(int n_threads, Py_ssize_t n_tasks, task_fn fn, void* ctx) noexcept nogil:
    return sq_pool_run(n_threads, n_tasks, <sq_task_fn> fn, ctx)


cdef int run_ordered(int n_threads, Py_ssize_t n_blocks, block_fn fn, void* ctx, double* out,
                     Py_ssize_t n_vec, double* ring, Py_ssize_t n_ring,
                     int* status) noexcept nogil:
    return sq_ordered_run(n_threads, n_blocks, <sq_block_fn> fn, ctx, out, n_vec, ring, n_ring,
                          status)


cdef Py_ssize_t ring_size(int n_threads, Py_ssize_t n_blocks, Py_ssize_t n_vec) noexcept nogil:
    cdef double r
    if n_vec <= 0 or n_blocks <= 1:
        return 0
    r = min(<double> (n_blocks - 1), 2.0 * max(n_threads, 1), _max_vector_bytes / (8.0 * n_vec))
    return max(<Py_ssize_t> r, 1)


cdef Py_ssize_t plan_blocks(Py_ssize_t size, double row_work, Py_ssize_t n_vec) noexcept nogil:
    cdef double work = <double> size * row_work
    cdef double b = work / _min_block_work
    cdef Py_ssize_t B, p2 = 2
    if b < 2.0:
        return 1
    if n_vec > 0:
        b = min(b, work / (_reduce_ratio * n_vec))
    b = min(b, <double> _max_blocks, <double> size)
    if b < 2.0:
        return 1
    B = <Py_ssize_t> b
    if B < 64:
        while 2 * p2 <= B:
            p2 *= 2
        return p2
    return B


cdef Py_ssize_t min_split_rows(double row_work) noexcept nogil:
    if not row_work > 0.0:
        return 1 << 62
    return <Py_ssize_t> (2.0 * _min_block_work / row_work)


cdef void block_bounds(Py_ssize_t size, Py_ssize_t n_blocks, Py_ssize_t b, Py_ssize_t* t0,
                       Py_ssize_t* t1) noexcept nogil:
    cdef Py_ssize_t q = size // n_blocks, r = size % n_blocks
    t0[0] = b * q + (b if b < r else r)
    t1[0] = t0[0] + q + (1 if b < r else 0)


# ---- Python access (diagnostics, tests, benchmarks) -------------------------------------------

def block_policy():
    """The block policy in force: ``min_block_work``, ``reduce_ratio``, ``max_vector_bytes`` and
    ``max_blocks`` (see the module docstring)."""
    return {"min_block_work": _min_block_work, "reduce_ratio": _reduce_ratio,
            "max_vector_bytes": _max_vector_bytes, "max_blocks": int(_max_blocks)}


def _set_block_policy(min_block_work=None, reduce_ratio=None, max_vector_bytes=None,
                      max_blocks=None):
    """Change the block policy for the whole process and return the previous one (tests split
    small problems into many blocks with it; results then differ from those under the defaults
    in the last bits, as the blocks differ). Not thread-safe: no pass may run meanwhile."""
    global _min_block_work, _reduce_ratio, _max_vector_bytes, _max_blocks
    old = block_policy()
    if min_block_work is not None:
        if not min_block_work > 0:
            raise ValueError("min_block_work must be > 0")
        _min_block_work = float(min_block_work)
    if reduce_ratio is not None:
        if not reduce_ratio > 0:
            raise ValueError("reduce_ratio must be > 0")
        _reduce_ratio = float(reduce_ratio)
    if max_vector_bytes is not None:
        if not max_vector_bytes > 0:
            raise ValueError("max_vector_bytes must be > 0")
        _max_vector_bytes = float(max_vector_bytes)
    if max_blocks is not None:
        if int(max_blocks) < 1:
            raise ValueError("max_blocks must be >= 1")
        _max_blocks = int(max_blocks)
    return old


def may_split(Py_ssize_t n_rows, double entries_per_row, Py_ssize_t n_outputs):
    """Whether any pass of a solve over ``n_rows`` rows of ``entries_per_row`` stored entries
    and ``n_outputs`` scores per row could have more than one block under the policy in force:
    the heaviest pass per row is the Newton Hessian's formation (its pairs of entries for each
    pair of outputs) plus a gradient's two reads. If not, threads cannot change anything and a
    solver need not work out how many it may use."""
    cdef double e = entries_per_row, K = n_outputs
    cdef double row = K * K * (0.5 * e * e + e) + K * (2.0 * e + ROW_WORK)
    return <double> n_rows * row >= 2.0 * _min_block_work


def plan(Py_ssize_t size, double row_work, Py_ssize_t n_vec=0):
    """The number of blocks :func:`plan_blocks` gives a pass (tests, benchmarks)."""
    return plan_blocks(size, row_work, n_vec)


def threads_available():
    """Whether this build runs tasks on threads (POSIX threads); without, every pass runs on
    the calling thread, with the same results."""
    return bool(sq_pool_threads_available())


def pool_size():
    """Worker threads the pool has started so far (besides the callers)."""
    return sq_pool_size()


MAX_THREADS = SQ_POOL_MAX_THREADS


cdef extern from "<time.h>" nogil:
    ctypedef long time_t
    cdef struct timespec:
        time_t tv_sec
        long tv_nsec
    int clock_gettime(int clk_id, timespec* tp)
    int CLOCK_MONOTONIC


cdef inline double _now() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + 1e-9 * ts.tv_nsec


cdef void _busy_task(void* ctx, Py_ssize_t k, int worker) noexcept nogil:
    """Busy for ``ctx[0]`` seconds (a task of known length)."""
    cdef double seconds = (<double*> ctx)[0]
    cdef double t0 = _now()
    while _now() - t0 < seconds:
        pass


def fork_join_seconds(int n_threads, double task_seconds=20e-6, Py_ssize_t repeats=500):
    """The fixed cost of a parallel pass: ``n_threads`` tasks of ``task_seconds`` each (busy
    waiting) handed to ``n_threads`` threads, the mean wall time per round trip over ``repeats``
    back-to-back round trips, less ``task_seconds`` (what a perfect split would take). On one
    thread the tasks run one after the other, so the value is ``(n_threads - 1) task_seconds``
    plus the loop's cost. ``bench/parallel_passes.py --break-even`` reports it."""
    import time
    cdef double sec = task_seconds
    cdef Py_ssize_t r
    if n_threads < 1 or n_threads > SQ_POOL_MAX_THREADS or repeats < 1 or not task_seconds >= 0:
        raise ValueError("n_threads must be in [1, MAX_THREADS], repeats >= 1, task_seconds >= 0")
    t = time.perf_counter()
    with nogil:
        for r in range(repeats):
            run_tasks(n_threads, n_threads, _busy_task, &sec)
    return (time.perf_counter() - t) / repeats - task_seconds


cdef struct _Probe:
    double seconds
    int* worker


cdef void _probe_task(void* ctx, Py_ssize_t k, int worker) noexcept nogil:
    cdef _Probe* probe = <_Probe*> ctx
    _busy_task(&probe.seconds, k, worker)
    probe.worker[k] = worker


def _which_threads(int n_threads, Py_ssize_t n_tasks, double task_seconds):
    """Run ``n_tasks`` busy tasks of ``task_seconds`` on ``n_threads`` threads and return which
    thread ran each (0: the caller; tests)."""
    import numpy as np
    cdef _Probe probe
    out = np.full(n_tasks, -1, dtype=np.intc)
    cdef int[::1] o = out
    if n_tasks < 1:
        return out
    probe.seconds = task_seconds
    probe.worker = &o[0]
    with nogil:
        run_tasks(n_threads, n_tasks, _probe_task, &probe)
    return out


cdef struct _CopyJob:
    const double* partials
    Py_ssize_t n


cdef int _copy_block(void* ctx, Py_ssize_t b, double* out) noexcept nogil:
    """Block b's "terms": row b of the partials, added into its vector."""
    cdef _CopyJob* job = <_CopyJob*> ctx
    cdef Py_ssize_t j
    for j in range(job.n):
        out[j] += job.partials[b * job.n + j]
    return <int> (b % 3 == 2)


def _ordered_for_tests(out, partials, int n_threads, Py_ssize_t n_ring):
    """:func:`run_ordered` with block b's terms the row b of ``partials`` (shape (m, n)), added
    into ``out`` in place; returns the blocks' statuses (1 for every third block). Tests."""
    import numpy as np
    cdef double[::1] o = out
    cdef const double[:, ::1] p = np.ascontiguousarray(partials, dtype=np.float64)
    cdef _CopyJob job
    if p.shape[1] != o.shape[0] or p.shape[0] < 1 or n_ring < 1:
        raise ValueError("partials must have len(out) columns and a row; n_ring >= 1")
    ring = np.full(n_ring * p.shape[1], np.nan)
    status = np.full(p.shape[0], -7, dtype=np.intc)
    cdef double[::1] rv = ring
    cdef int[::1] sv = status
    job.partials = &p[0, 0]
    job.n = p.shape[1]
    with nogil:
        run_ordered(n_threads, p.shape[0], _copy_block, &job, &o[0], job.n, &rv[0], n_ring,
                    &sv[0])
    return status


def ring(int n_threads, Py_ssize_t n_blocks, Py_ssize_t n_vec):
    """:func:`ring_size` (tests, benchmarks)."""
    return ring_size(n_threads, n_blocks, n_vec)
