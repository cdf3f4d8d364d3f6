# cython: language_level=3
"""Row access over a design matrix: one code path for dense and CSR, float32 and float64.

Kernels never look at the storage; they ask a :class:`RowData` for ``x_i . w`` and
``out += alpha * x_i``.  If the data was built with an intercept, the intercept is the last
coordinate of every parameter block (``w[dim - 1]``) and the row behaves as ``[x_i, 1]``.
"""

from sqnopt._vec cimport sq_axpy, sq_axpy_f32, sq_dot, sq_dot_f32, vprefetch_rest


# ---- the row arithmetic (one definition: the RowData methods and the row views below) ------

ctypedef fused real_t:
    float
    double


cdef inline double _dense_dot(const real_t* x, const double* w, Py_ssize_t n) noexcept nogil:
    if real_t is double:
        return sq_dot(x, w, n)
    else:
        return sq_dot_f32(x, w, n)


cdef inline void _dense_axpy(const real_t* x, double alpha, double* out, Py_ssize_t n) noexcept nogil:
    if real_t is double:
        sq_axpy(alpha, x, out, n)
    else:
        sq_axpy_f32(alpha, x, out, n)


cdef inline double _sparse_dot(const real_t* data, const int* ind, Py_ssize_t nnz,
                               const double* w) noexcept nogil:
    # two partial sums (even and odd entries; the last entry of an odd count goes to the even
    # one), added at the end: the additions of one sum wait for each other (an add's latency
    # per entry), two chains overlap, and a short row has at most one entry left over
    cdef Py_ssize_t p = 0
    cdef double a0 = 0.0, a1 = 0.0
    while p + 2 <= nnz:
        a0 += <double> data[p] * w[ind[p]]
        a1 += <double> data[p + 1] * w[ind[p + 1]]
        p += 2
    if p < nnz:
        a0 += <double> data[p] * w[ind[p]]
    return a0 + a1


cdef inline void _sparse_axpy(const real_t* data, const int* ind, Py_ssize_t nnz, double alpha,
                              double* out) noexcept nogil:
    cdef Py_ssize_t p
    for p in range(nnz):
        out[ind[p]] += alpha * <double> data[p]


# ---- row views --------------------------------------------------------------------------------
# ``RowData.row_view`` hands out the pointers of one row (without its intercept entry); a kernel
# that walks a minibatch itself uses them through these inline helpers: one virtual call per row
# instead of one per operation, with the arithmetic of ``row_dot`` / ``row_axpy`` (bit for bit;
# add ``w[n_features]`` / ``alpha`` for the intercept as those methods do).

cdef inline double view_dot(const double* d64, const float* d32, const int* ind, Py_ssize_t nnz,
                            const double* w) noexcept nogil:
    """``x . w`` of a row view."""
    if ind == NULL:
        if d64 != NULL:
            return _dense_dot(d64, w, nnz)
        if d32 != NULL:
            return _dense_dot(d32, w, nnz)
        return 0.0
    if d64 != NULL:
        return _sparse_dot(d64, ind, nnz, w)
    return _sparse_dot(d32, ind, nnz, w)


cdef inline void view_axpy(const double* d64, const float* d32, const int* ind, Py_ssize_t nnz,
                           double alpha, double* out) noexcept nogil:
    """``out += alpha x`` for a row view."""
    if ind == NULL:
        if d64 != NULL:
            _dense_axpy(d64, alpha, out, nnz)
        elif d32 != NULL:
            _dense_axpy(d32, alpha, out, nnz)
    elif d64 != NULL:
        _sparse_axpy(d64, ind, nnz, alpha, out)
    else:
        _sparse_axpy(d32, ind, nnz, alpha, out)


cdef inline void view_prefetch_rest(const double* d64, const float* d32, const int* ind,
                                    Py_ssize_t nnz) noexcept nogil:
    """What ``row_prefetch_next`` hints, for a row view: a dense row's lines after its first
    (issued while the previous row is used); nothing for a CSR row (``row_prefetch`` hinted all
    of its lines)."""
    if ind == NULL:
        if d64 != NULL:
            vprefetch_rest(d64, nnz * sizeof(double))
        elif d32 != NULL:
            vprefetch_rest(d32, nnz * sizeof(float))


cdef class RowData:
    cdef readonly Py_ssize_t n_samples
    cdef readonly Py_ssize_t n_features
    cdef readonly Py_ssize_t dim            # n_features + has_intercept
    cdef readonly bint has_intercept
    cdef readonly Py_ssize_t nnz            # stored entries (dense: n_samples * n_features)
    cdef readonly Py_ssize_t stored_bytes   # the bytes of the stored values and their indices
    cdef readonly bint is_sparse
    cdef readonly object dtype
    # Threads the kernels' passes over these rows may use (``set_threads``; 1 by default): a
    # pass splits into blocks fixed by the data (sqnopt/_parallel.pxd), so the count changes
    # the speed, never the result.
    cdef readonly int n_threads

    # Labels: +-1 for binary objectives, 0..K-1 (as float64) for multiclass ones.
    cdef const double[::1] _y
    # Weight of sample i in the full objective, normalised to mean 1.
    cdef const double[::1] _sample_weight
    # Weight of sample i in a minibatch gradient: equal to _sample_weight under uniform
    # sampling, 1 under importance sampling with probability proportional to the weight.
    cdef const double[::1] _grad_weight

    cdef const double* y
    cdef const double* sample_weight
    cdef const double* grad_weight
    # CSR rows: their ``indptr`` (row i's stored entries are [row_ptr[i], row_ptr[i + 1])), for
    # loops that only count entries (a pass's block plan) without a virtual call per row;
    # NULL for dense rows.
    cdef const Py_ssize_t* row_ptr

    cdef double row_dot(self, Py_ssize_t i, const double* w) noexcept nogil
    cdef void row_axpy(self, Py_ssize_t i, double alpha, double* out) noexcept nogil
    cdef double row_sqnorm(self, Py_ssize_t i) noexcept nogil
    cdef Py_ssize_t row_nnz(self, Py_ssize_t i) noexcept nogil
    # Cache hint: start loading row i (call for a whole batch before using its rows). CSR rows
    # hint every line of their values and indices; dense rows only their first line.
    cdef void row_prefetch(self, Py_ssize_t i) noexcept nogil
    # Cache hint for the row used next, issued while the current one is being used (after
    # ``row_prefetch`` of the whole batch): dense rows hint their remaining lines, CSR rows
    # nothing (``row_prefetch`` hinted all of theirs).
    cdef void row_prefetch_next(self, Py_ssize_t i) noexcept nogil
    # Sparse view of row i (without the intercept entry): fills the pointers and returns nnz.
    # For dense data ``indices`` is NULL (meaning 0..n_features-1) and exactly one of
    # ``data64`` / ``data32`` is set.
    cdef Py_ssize_t row_view(self, Py_ssize_t i, const double** data64, const float** data32,
                             const int** indices) noexcept nogil
    cdef void _bind_common(self, Py_ssize_t n_samples, Py_ssize_t n_features, bint has_intercept,
                           const double[::1] y, const double[::1] sample_weight,
                           const double[::1] grad_weight)
    cdef int _check(self, Py_ssize_t i, Py_ssize_t length) except -1


cdef class DenseRows64(RowData):
    cdef const double[:, ::1] X


cdef class DenseRows32(RowData):
    cdef const float[:, ::1] X


cdef class CSRRows64(RowData):
    cdef const double[::1] data
    cdef const int[::1] indices
    cdef const Py_ssize_t[::1] indptr


cdef class CSRRows32(RowData):
    cdef const float[::1] data
    cdef const int[::1] indices
    cdef const Py_ssize_t[::1] indptr


# ---- hints for a pass over a batch's rows (defined in _rows.pyx; see its HINT_AHEAD) ----
cdef Py_ssize_t HINT_AHEAD
cdef Py_ssize_t HINT_REST_AHEAD
cdef Py_ssize_t HINT_ORDERED_BYTES
cdef Py_ssize_t HINT_ORDERED_DIM
cdef Py_ssize_t HINT_ORDERED_ROW_BYTES


cdef inline void hint_batch_start(RowData data, const Py_ssize_t* batch, Py_ssize_t t0,
                                  Py_ssize_t t1) noexcept nogil:
    """The hints of a batch loop's first ``HINT_AHEAD`` positions (all of a minibatch's)."""
    cdef Py_ssize_t t
    for t in range(t0, min(t1, t0 + HINT_AHEAD)):
        data.row_prefetch(batch[t])


cdef inline void hint_batch_ahead(RowData data, const Py_ssize_t* batch, Py_ssize_t t,
                                  Py_ssize_t t1, bint dense) noexcept nogil:
    """The hints issued at position ``t`` of a batch loop: the row ``HINT_AHEAD`` positions
    ahead (``row_prefetch``) and, for dense rows, the rest of the row ``HINT_REST_AHEAD``
    positions ahead (``row_prefetch_next``)."""
    if t + HINT_AHEAD < t1:
        data.row_prefetch(batch[t + HINT_AHEAD])
    if dense and HINT_REST_AHEAD > 0 and t + HINT_REST_AHEAD < t1:
        data.row_prefetch_next(batch[t + HINT_REST_AHEAD])


cdef inline bint hint_in_order(RowData data) noexcept nogil:
    """Whether a pass that scores each row and adds a multiple of it to a vector hints its
    rows ahead even when they come in order (see ``HINT_ORDERED_BYTES`` in ``_rows.pyx``)."""
    return (data.is_sparse and data.stored_bytes > HINT_ORDERED_BYTES
            and data.dim >= HINT_ORDERED_DIM
            and data.stored_bytes >= HINT_ORDERED_ROW_BYTES * data.n_samples)


cdef inline void hint_rows_start(RowData data, Py_ssize_t i0, Py_ssize_t i1) noexcept nogil:
    """:func:`hint_batch_start` for the rows ``i0 .. i1 - 1`` in order (a full pass)."""
    cdef Py_ssize_t i
    for i in range(i0, min(i1, i0 + HINT_AHEAD)):
        data.row_prefetch(i)


cdef inline void hint_rows_ahead(RowData data, Py_ssize_t i, Py_ssize_t i1,
                                 bint dense) noexcept nogil:
    """:func:`hint_batch_ahead` for rows in order: the row ``HINT_AHEAD`` ahead of ``i``
    and, for dense rows, the rest of the one ``HINT_REST_AHEAD`` ahead."""
    if i + HINT_AHEAD < i1:
        data.row_prefetch(i + HINT_AHEAD)
    if dense and HINT_REST_AHEAD > 0 and i + HINT_REST_AHEAD < i1:
        data.row_prefetch_next(i + HINT_REST_AHEAD)


cdef inline bint batch_scattered(const Py_ssize_t* batch, Py_ssize_t t0,
                                 Py_ssize_t t1) noexcept nogil:
    """Whether positions ``[t0, t1)`` of ``batch`` may hold rows out of order: not a run of
    consecutive rows by its ends. Rows in order (the identity batch of a full pass) are
    streamed by the hardware's prefetcher and get no hints."""
    return batch != NULL and t1 - t0 > 1 and batch[t1 - 1] - batch[t0] != t1 - 1 - t0
