# cython: language_level=3
"""Deterministic parallel passes: the block plan, the thread pool and the ordered fold.

A pass over the rows of a batch (a full-batch gradient, a Hessian-vector product, the line
search's score gathers, ...) is split into **blocks**: contiguous ranges of batch positions
whose number depends on the data and the pass only (:func:`plan_blocks`: the batch size, the
work per row and the length of the vector the pass sums into), never on the number of threads.
Each block sums its rows in the order of the serial loop into its own slot -- a scalar partial
sum, and a partial vector for a pass that scatters into one -- and the slots are then added in
block order (:func:`fold_partials` for the vectors). Which thread ran which block does not
enter the result, so a pass gives the same bits on 1, 2 or 64 threads. A pass whose plan has
one block is the serial loop itself, with its arithmetic unchanged.

Threads come from one pool per process (``sqnopt/_pool.h``, reached through :func:`run_tasks`);
the kernels take their thread count from their data (``RowData.n_threads``), which the solver
sets from its ``n_jobs``.
"""

ctypedef void (*task_fn)(void* ctx, Py_ssize_t task, int worker) noexcept nogil

# Run fn(ctx, k, worker) for every k in [0, n_tasks) on at most n_threads threads (the caller
# included; worker 0 is the caller). Returns the number of threads that took part.
cdef int run_tasks(int n_threads, Py_ssize_t n_tasks, task_fn fn, void* ctx) noexcept nogil

# The number of blocks of a pass over `size` rows costing `row_work` work units each that
# sums into a vector of `n_vec` doubles (0: no vector), under the block policy (see
# _parallel.pyx). 1 means: the serial loop.
cdef Py_ssize_t plan_blocks(Py_ssize_t size, double row_work, Py_ssize_t n_vec) noexcept nogil

# The fewest rows a pass costing `row_work` per row needs before the policy splits it (a
# cheap test that skips planning for minibatches).
cdef Py_ssize_t min_split_rows(double row_work) noexcept nogil

# Positions [t0, t1) of block b of n_blocks over `size` rows (equal counts, the first
# size % n_blocks blocks one row longer).
cdef void block_bounds(Py_ssize_t size, Py_ssize_t n_blocks, Py_ssize_t b, Py_ssize_t* t0,
                       Py_ssize_t* t1) noexcept nogil

# out[j] += partials[0 * n + j], then += partials[1 * n + j], ... (n_partials vectors of n), in
# that order for every j, split over threads by ranges of j.
cdef void fold_partials(int n_threads, double* out, const double* partials,
                        Py_ssize_t n_partials, Py_ssize_t n) noexcept nogil

# The cost, in work units, of reading one stored entry of a sparse row (a dot or an axpy touches
# it once: an index, a value, a scattered access to the vector), how many entries of a dense row
# cost as much (the vector kernels read them in lanes, contiguously), and the per-row work
# around them (a loss and its derivative, an exp).
cdef enum:
    ENTRY_WORK = 1
    DENSE_ENTRIES_PER_UNIT = 4
    ROW_WORK = 16
