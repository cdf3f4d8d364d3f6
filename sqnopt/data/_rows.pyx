# cython: language_level=3
"""Compiled row access (see ``_rows.pxd``)."""

import numpy as np

from libc.math cimport NAN, fabs
from libc.string cimport memcpy

from sqnopt._parallel cimport ENTRY_WORK, block_bounds, plan_blocks, run_tasks
from sqnopt._vec cimport SQNOPT_PREFETCH, vprefetch, vprefetch_rest


#: Hints for a pass over a batch's rows (a minibatch, a growing batch, a subsample; the
#: objectives' passes, ``hint_batch_start`` / ``hint_batch_ahead`` in ``_rows.pxd``): the lines
#: of the row ``HINT_AHEAD`` positions ahead (``row_prefetch``: a CSR row's all, a dense row's
#: first) and, for dense rows, the rest of the row ``HINT_REST_AHEAD`` positions ahead, so that
#: a row out of cache arrives while the rows before it are used. Hinting every row of a batch
#: before the loop and only the next row's rest (the earlier rule) left a batch of rows in no
#: order, larger than the cache, waiting on memory row after row (``bench/row_hints.py``).
HINT_AHEAD = 16
HINT_REST_AHEAD = 8

#: Rows in order (a full pass) are left to the hardware's stream prefetcher, except in the
#: passes that score a row and then add a multiple of it to a vector (the gradient, the
#: Hessian-vector product) over long CSR rows: there, on data larger than the last-level cache,
#: the gathers and scatters into vectors larger than the first-level cache keep the stream
#: prefetcher from running ahead, and the same hints as a batch in no order make the pass
#: faster; on data the cache holds, on vectors the first-level cache holds, and on short rows
#: (a hint's cost per row against little work) the hints only cost instructions
#: (``bench/row_hints.py --ordered``). Such a pass hints CSR rows in order when their stored
#: values and indices exceed ``HINT_ORDERED_BYTES``, their dimension is at least
#: ``HINT_ORDERED_DIM`` and they store ``HINT_ORDERED_ROW_BYTES`` a row or more on average (64
#: float64 values and their indices); dense rows in order are left to the stream prefetcher,
#: which follows a contiguous row.
HINT_ORDERED_BYTES = 32 * 1024 * 1024
HINT_ORDERED_DIM = 2048
HINT_ORDERED_ROW_BYTES = 768


def _row_hints(ahead=None, rest_ahead=None):
    """The batch passes' hint distances ``(HINT_AHEAD, HINT_REST_AHEAD)``, each replaced when
    given (``rest_ahead=0``: no hints of a dense row's rest); returns the previous ones (for
    ``bench/row_hints.py``, which compares them with the earlier rule)."""
    global HINT_AHEAD, HINT_REST_AHEAD
    old = (HINT_AHEAD, HINT_REST_AHEAD)
    if ahead is not None:
        HINT_AHEAD = ahead
    if rest_ahead is not None:
        HINT_REST_AHEAD = rest_ahead
    return old


def _ordered_hints(min_bytes=None, min_dim=None, min_row_bytes=None):
    """The thresholds of hints over rows in order ``(HINT_ORDERED_BYTES, HINT_ORDERED_DIM,
    HINT_ORDERED_ROW_BYTES)``, each replaced when given (``min_bytes`` very large: never; all
    0: every CSR pass of that kind); returns the previous ones (for ``bench/row_hints.py``,
    which times the passes under several rules, and the tests)."""
    global HINT_ORDERED_BYTES, HINT_ORDERED_DIM, HINT_ORDERED_ROW_BYTES
    old = (HINT_ORDERED_BYTES, HINT_ORDERED_DIM, HINT_ORDERED_ROW_BYTES)
    if min_bytes is not None:
        HINT_ORDERED_BYTES = min_bytes
    if min_dim is not None:
        HINT_ORDERED_DIM = min_dim
    if min_row_bytes is not None:
        HINT_ORDERED_ROW_BYTES = min_row_bytes
    return old


cdef inline void _dense_row_prefetch(const void* row) noexcept nogil:
    # The first line only: a dense row is contiguous and the hardware prefetcher streams the
    # rest once the row is read. Hinting every line of a minibatch at once (65 lines at n = 100,
    # L = 5) filled the line-fill buffers and was slower per iteration (bench/test_core.py,
    # docs/benchmarks.md).
    SQNOPT_PREFETCH(row)


cdef inline double _dense_sqnorm(const real_t* x, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t j
    cdef double acc = 0.0
    for j in range(n):
        acc += <double> x[j] * <double> x[j]
    return acc


cdef inline double _sparse_sqnorm(const real_t* data, Py_ssize_t nnz) noexcept nogil:
    cdef Py_ssize_t p
    cdef double acc = 0.0
    for p in range(nnz):
        acc += <double> data[p] * <double> data[p]
    return acc


cdef int _check_csr(const int[::1] indices, const Py_ssize_t[::1] indptr, Py_ssize_t n_data,
                    Py_ssize_t n_features) except -1:
    """The bounds every CSR kernel relies on, checked once when the row view is built (one pass
    over ``indptr`` and ``indices``; vectorised, no branch per entry): ``indptr`` starts at 0,
    never decreases and ends within ``indices`` and ``data``; every index is in
    ``[0, n_features)``. :func:`sqnopt.data.check_matrix` reports the same problems with the
    offending row first; this guard keeps direct constructions of the compiled classes safe."""
    cdef Py_ssize_t n_rows = indptr.shape[0] - 1
    cdef Py_ssize_t i, p, nnz
    cdef bint bad = False
    cdef unsigned int bound = <unsigned int> n_features
    if n_rows < 0:
        raise ValueError("CSR rows: indptr is empty (it needs n_samples + 1 entries)")
    if n_features < 1 or n_features > 2147483647:
        raise ValueError(f"CSR rows: n_features must be in [1, 2**31 - 1], got {n_features}")
    if indptr[0] != 0:
        raise ValueError(f"CSR rows: indptr starts at {indptr[0]}, not 0")
    with nogil:
        for i in range(n_rows):
            bad |= indptr[i + 1] < indptr[i]
    if bad:
        raise ValueError("CSR rows: indptr decreases")
    nnz = indptr[n_rows]
    if nnz > indices.shape[0] or nnz > n_data:
        raise ValueError(f"CSR rows: indptr ends at {nnz}, past the {indices.shape[0]} indices "
                         f"/ {n_data} values stored")
    with nogil:
        for p in range(nnz):
            bad |= <unsigned int> indices[p] >= bound  # negative indices wrap to >= 2**31
    if bad:
        raise ValueError(f"CSR rows: a column index is negative or >= n_features={n_features}")
    return 0


cdef class RowData:
    """Base class: rows of a design matrix plus labels and weights.

    Build instances with :func:`sqnopt.data.make_rows`; the subclasses differ only in storage.
    """

    def __init__(self, *args, **kwargs):
        raise TypeError("RowData is abstract; build one with sqnopt.data.make_rows(...)")

    cdef void _bind_common(self, Py_ssize_t n_samples, Py_ssize_t n_features, bint has_intercept,
                           const double[::1] y, const double[::1] sample_weight,
                           const double[::1] grad_weight):
        if n_samples < 1 or n_features < 1:
            raise ValueError(f"RowData: need at least one sample and one feature, got "
                             f"{n_samples} x {n_features}")
        if (y.shape[0] != n_samples or sample_weight.shape[0] != n_samples
                or grad_weight.shape[0] != n_samples):
            raise ValueError(f"RowData: y, sample_weight and grad_weight need {n_samples} "
                             f"entries (one per row), got {y.shape[0]}, "
                             f"{sample_weight.shape[0]} and {grad_weight.shape[0]}")
        self.n_samples = n_samples
        self.n_features = n_features
        self.has_intercept = has_intercept
        self.n_threads = 1
        self.dim = n_features + (1 if has_intercept else 0)
        self._y = y
        self._sample_weight = sample_weight
        self._grad_weight = grad_weight
        self.y = &self._y[0]
        self.sample_weight = &self._sample_weight[0]
        self.grad_weight = &self._grad_weight[0]

    cdef double row_dot(self, Py_ssize_t i, const double* w) noexcept nogil:
        return NAN

    cdef void row_axpy(self, Py_ssize_t i, double alpha, double* out) noexcept nogil:
        pass

    cdef double row_sqnorm(self, Py_ssize_t i) noexcept nogil:
        return NAN

    cdef Py_ssize_t row_nnz(self, Py_ssize_t i) noexcept nogil:
        return 0

    cdef void row_prefetch(self, Py_ssize_t i) noexcept nogil:
        pass

    cdef void row_prefetch_next(self, Py_ssize_t i) noexcept nogil:
        pass

    cdef Py_ssize_t row_view(self, Py_ssize_t i, const double** data64, const float** data32,
                             const int** indices) noexcept nogil:
        data64[0] = NULL
        data32[0] = NULL
        indices[0] = NULL
        return 0

    # ---- Python twins (for tests and pure-Python components) -------------------------------
    def dot(self, Py_ssize_t i, const double[::1] w) -> float:
        """``x_i . w`` (plus ``w[-1]`` when the data has an intercept)."""
        self._check(i, w.shape[0])
        return self.row_dot(i, &w[0])

    def axpy(self, Py_ssize_t i, double alpha, double[::1] out) -> None:
        """``out += alpha * [x_i, 1]`` in place."""
        self._check(i, out.shape[0])
        self.row_axpy(i, alpha, &out[0])

    def sqnorm(self, Py_ssize_t i) -> float:
        """``||x_i||^2`` (plus 1 with an intercept)."""
        self._check(i, self.dim)
        return self.row_sqnorm(i)

    def set_threads(self, int n_threads) -> None:
        """Let the passes over these rows use up to ``n_threads`` threads (the solver sets it
        from its ``n_jobs`` for the length of a run). A pass's blocks depend on the data only,
        so the results are the same for every count."""
        if n_threads < 1:
            raise ValueError(f"n_threads must be >= 1, got {n_threads}")
        self.n_threads = n_threads

    @property
    def labels(self):
        """The encoded labels as a read-only float64 array."""
        return np.asarray(self._y)

    @property
    def sample_weights(self):
        """Sample weights (mean 1) used in the full objective."""
        return np.asarray(self._sample_weight)

    @property
    def grad_weights(self):
        """Weights used in minibatch gradients."""
        return np.asarray(self._grad_weight)

    cdef int _check(self, Py_ssize_t i, Py_ssize_t length) except -1:
        if i < 0 or i >= self.n_samples:
            raise IndexError(f"row {i} out of range for {self.n_samples} samples")
        if length < self.dim:
            raise ValueError(f"vector of length {length} is shorter than dim={self.dim}")
        return 0

    def __reduce__(self):
        raise TypeError("RowData is a view on the caller's arrays and cannot be pickled; "
                        "pickle the arrays and rebuild it with sqnopt.data.make_rows")


cdef class DenseRows64(RowData):
    def __init__(self, const double[:, ::1] X, const double[::1] y, const double[::1] sample_weight,
                 const double[::1] grad_weight, bint has_intercept):
        self.X = X
        self.is_sparse = False
        self.dtype = np.dtype(np.float64)
        self.nnz = X.shape[0] * X.shape[1]
        self.stored_bytes = self.nnz * sizeof(double)
        self._bind_common(X.shape[0], X.shape[1], has_intercept, y, sample_weight, grad_weight)

    cdef double row_dot(self, Py_ssize_t i, const double* w) noexcept nogil:
        cdef double acc = _dense_dot(&self.X[i, 0], w, self.n_features)
        if self.has_intercept:
            acc += w[self.n_features]
        return acc

    cdef void row_axpy(self, Py_ssize_t i, double alpha, double* out) noexcept nogil:
        _dense_axpy(&self.X[i, 0], alpha, out, self.n_features)
        if self.has_intercept:
            out[self.n_features] += alpha

    cdef double row_sqnorm(self, Py_ssize_t i) noexcept nogil:
        return _dense_sqnorm(&self.X[i, 0], self.n_features) + (1.0 if self.has_intercept else 0.0)

    cdef Py_ssize_t row_nnz(self, Py_ssize_t i) noexcept nogil:
        return self.n_features

    cdef void row_prefetch(self, Py_ssize_t i) noexcept nogil:
        _dense_row_prefetch(&self.X[i, 0])

    cdef void row_prefetch_next(self, Py_ssize_t i) noexcept nogil:
        vprefetch_rest(&self.X[i, 0], self.n_features * sizeof(double))

    cdef Py_ssize_t row_view(self, Py_ssize_t i, const double** data64, const float** data32,
                             const int** indices) noexcept nogil:
        data64[0] = &self.X[i, 0]
        data32[0] = NULL
        indices[0] = NULL
        return self.n_features


cdef class DenseRows32(RowData):
    def __init__(self, const float[:, ::1] X, const double[::1] y, const double[::1] sample_weight,
                 const double[::1] grad_weight, bint has_intercept):
        self.X = X
        self.is_sparse = False
        self.dtype = np.dtype(np.float32)
        self.nnz = X.shape[0] * X.shape[1]
        self.stored_bytes = self.nnz * sizeof(float)
        self._bind_common(X.shape[0], X.shape[1], has_intercept, y, sample_weight, grad_weight)

    cdef double row_dot(self, Py_ssize_t i, const double* w) noexcept nogil:
        cdef double acc = _dense_dot(&self.X[i, 0], w, self.n_features)
        if self.has_intercept:
            acc += w[self.n_features]
        return acc

    cdef void row_axpy(self, Py_ssize_t i, double alpha, double* out) noexcept nogil:
        _dense_axpy(&self.X[i, 0], alpha, out, self.n_features)
        if self.has_intercept:
            out[self.n_features] += alpha

    cdef double row_sqnorm(self, Py_ssize_t i) noexcept nogil:
        return _dense_sqnorm(&self.X[i, 0], self.n_features) + (1.0 if self.has_intercept else 0.0)

    cdef Py_ssize_t row_nnz(self, Py_ssize_t i) noexcept nogil:
        return self.n_features

    cdef void row_prefetch(self, Py_ssize_t i) noexcept nogil:
        _dense_row_prefetch(&self.X[i, 0])

    cdef void row_prefetch_next(self, Py_ssize_t i) noexcept nogil:
        vprefetch_rest(&self.X[i, 0], self.n_features * sizeof(float))

    cdef Py_ssize_t row_view(self, Py_ssize_t i, const double** data64, const float** data32,
                             const int** indices) noexcept nogil:
        data64[0] = NULL
        data32[0] = &self.X[i, 0]
        indices[0] = NULL
        return self.n_features


cdef class CSRRows64(RowData):
    def __init__(self, const double[::1] data, const int[::1] indices, const Py_ssize_t[::1] indptr,
                 Py_ssize_t n_features, const double[::1] y, const double[::1] sample_weight,
                 const double[::1] grad_weight, bint has_intercept):
        _check_csr(indices, indptr, data.shape[0], n_features)
        self.data = data
        self.indices = indices
        self.indptr = indptr
        self.is_sparse = True
        self.dtype = np.dtype(np.float64)
        self.nnz = indptr[indptr.shape[0] - 1]
        self.stored_bytes = self.nnz * (sizeof(double) + sizeof(int))
        self._bind_common(indptr.shape[0] - 1, n_features, has_intercept, y, sample_weight,
                          grad_weight)
        self.row_ptr = &self.indptr[0]

    cdef double row_dot(self, Py_ssize_t i, const double* w) noexcept nogil:
        cdef Py_ssize_t start = self.indptr[i]
        cdef Py_ssize_t nnz = self.indptr[i + 1] - start
        cdef double acc = 0.0
        if nnz > 0:
            acc = _sparse_dot(&self.data[start], &self.indices[start], nnz, w)
        if self.has_intercept:
            acc += w[self.n_features]
        return acc

    cdef void row_axpy(self, Py_ssize_t i, double alpha, double* out) noexcept nogil:
        cdef Py_ssize_t start = self.indptr[i]
        cdef Py_ssize_t nnz = self.indptr[i + 1] - start
        if nnz > 0:
            _sparse_axpy(&self.data[start], &self.indices[start], nnz, alpha, out)
        if self.has_intercept:
            out[self.n_features] += alpha

    cdef double row_sqnorm(self, Py_ssize_t i) noexcept nogil:
        cdef Py_ssize_t start = self.indptr[i]
        cdef Py_ssize_t nnz = self.indptr[i + 1] - start
        cdef double acc = 0.0
        if nnz > 0:
            acc = _sparse_sqnorm(&self.data[start], nnz)
        return acc + (1.0 if self.has_intercept else 0.0)

    cdef Py_ssize_t row_nnz(self, Py_ssize_t i) noexcept nogil:
        return self.indptr[i + 1] - self.indptr[i]

    cdef void row_prefetch(self, Py_ssize_t i) noexcept nogil:
        cdef Py_ssize_t start = self.indptr[i]
        cdef Py_ssize_t nnz = self.indptr[i + 1] - start
        if nnz > 0:
            vprefetch(&self.data[start], nnz * sizeof(self.data[start]))
            vprefetch(&self.indices[start], nnz * sizeof(int))

    cdef Py_ssize_t row_view(self, Py_ssize_t i, const double** data64, const float** data32,
                             const int** indices) noexcept nogil:
        cdef Py_ssize_t start = self.indptr[i]
        cdef Py_ssize_t nnz = self.indptr[i + 1] - start
        data32[0] = NULL
        if nnz > 0:
            data64[0] = &self.data[start]
            indices[0] = &self.indices[start]
        else:
            data64[0] = NULL
            indices[0] = NULL
        return nnz


cdef class CSRRows32(RowData):
    def __init__(self, const float[::1] data, const int[::1] indices, const Py_ssize_t[::1] indptr,
                 Py_ssize_t n_features, const double[::1] y, const double[::1] sample_weight,
                 const double[::1] grad_weight, bint has_intercept):
        _check_csr(indices, indptr, data.shape[0], n_features)
        self.data = data
        self.indices = indices
        self.indptr = indptr
        self.is_sparse = True
        self.dtype = np.dtype(np.float32)
        self.nnz = indptr[indptr.shape[0] - 1]
        self.stored_bytes = self.nnz * (sizeof(float) + sizeof(int))
        self._bind_common(indptr.shape[0] - 1, n_features, has_intercept, y, sample_weight,
                          grad_weight)
        self.row_ptr = &self.indptr[0]

    cdef double row_dot(self, Py_ssize_t i, const double* w) noexcept nogil:
        cdef Py_ssize_t start = self.indptr[i]
        cdef Py_ssize_t nnz = self.indptr[i + 1] - start
        cdef double acc = 0.0
        if nnz > 0:
            acc = _sparse_dot(&self.data[start], &self.indices[start], nnz, w)
        if self.has_intercept:
            acc += w[self.n_features]
        return acc

    cdef void row_axpy(self, Py_ssize_t i, double alpha, double* out) noexcept nogil:
        cdef Py_ssize_t start = self.indptr[i]
        cdef Py_ssize_t nnz = self.indptr[i + 1] - start
        if nnz > 0:
            _sparse_axpy(&self.data[start], &self.indices[start], nnz, alpha, out)
        if self.has_intercept:
            out[self.n_features] += alpha

    cdef double row_sqnorm(self, Py_ssize_t i) noexcept nogil:
        cdef Py_ssize_t start = self.indptr[i]
        cdef Py_ssize_t nnz = self.indptr[i + 1] - start
        cdef double acc = 0.0
        if nnz > 0:
            acc = _sparse_sqnorm(&self.data[start], nnz)
        return acc + (1.0 if self.has_intercept else 0.0)

    cdef Py_ssize_t row_nnz(self, Py_ssize_t i) noexcept nogil:
        return self.indptr[i + 1] - self.indptr[i]

    cdef void row_prefetch(self, Py_ssize_t i) noexcept nogil:
        cdef Py_ssize_t start = self.indptr[i]
        cdef Py_ssize_t nnz = self.indptr[i + 1] - start
        if nnz > 0:
            vprefetch(&self.data[start], nnz * sizeof(self.data[start]))
            vprefetch(&self.indices[start], nnz * sizeof(int))

    cdef Py_ssize_t row_view(self, Py_ssize_t i, const double** data64, const float** data32,
                             const int** indices) noexcept nogil:
        cdef Py_ssize_t start = self.indptr[i]
        cdef Py_ssize_t nnz = self.indptr[i + 1] - start
        data64[0] = NULL
        if nnz > 0:
            data32[0] = &self.data[start]
            indices[0] = &self.indices[start]
        else:
            data32[0] = NULL
            indices[0] = NULL
        return nnz


# ---- scores of a CSR matrix (prediction) ------------------------------------------------------

cdef struct _ScoresJob:
    const Py_ssize_t* indptr
    const int* indices
    const double* d64
    const float* d32
    const double* coef_t        # (n_features, K), C order: coef transposed
    double* out                 # (n_rows, K)
    Py_ssize_t n_rows
    Py_ssize_t K
    Py_ssize_t n_blocks


cdef enum:
    _SCORES_TILE = 16      # scores of a row summed at once (a local array, not ``out``)


cdef void _scores_rows(const _ScoresJob* job, Py_ssize_t r0, Py_ssize_t r1) noexcept nogil:
    """``out[i, k] = sum_p x_ip coef_t[j_p, k]`` for rows ``[r0, r1)``, each sum from 0 in
    the order of the row's entries: SciPy's CSR product (``csr_matvec`` / ``csr_matvecs``), so the
    same bits as ``X @ coef.T``. The sums run in locals (a scalar for one score, an array of up
    to ``_SCORES_TILE`` for more), written once per row: summed in ``out`` itself, each entry's
    add waited for the store of the previous one (``out`` may alias ``coef_t`` for the
    compiler), six times slower than SciPy on one score."""
    cdef Py_ssize_t i, p, k, k0, kt, K = job.K, p0, p1
    cdef double a, s
    cdef double acc[_SCORES_TILE]
    cdef const double* c
    cdef const double* d64 = job.d64
    cdef const float* d32 = job.d32
    cdef const int* ind = job.indices
    cdef const double* ct = job.coef_t
    if K == 1:
        for i in range(r0, r1):
            p0 = job.indptr[i]
            p1 = job.indptr[i + 1]
            s = 0.0
            if d64 != NULL:
                for p in range(p0, p1):
                    s += d64[p] * ct[ind[p]]
            else:
                for p in range(p0, p1):
                    s += (<double> d32[p]) * ct[ind[p]]
            job.out[i] = s
        return
    for i in range(r0, r1):
        p0 = job.indptr[i]
        p1 = job.indptr[i + 1]
        k0 = 0
        while k0 < K:
            kt = min(<Py_ssize_t> _SCORES_TILE, K - k0)
            for k in range(kt):
                acc[k] = 0.0
            for p in range(p0, p1):
                a = d64[p] if d64 != NULL else <double> d32[p]
                c = ct + ind[p] * K + k0
                for k in range(kt):
                    acc[k] += a * c[k]
            for k in range(kt):
                job.out[i * K + k0 + k] = acc[k]
            k0 += _SCORES_TILE


cdef void _scores_task(void* ctx, Py_ssize_t b, int worker) noexcept nogil:
    cdef _ScoresJob* job = <_ScoresJob*> ctx
    cdef Py_ssize_t r0, r1
    block_bounds(job.n_rows, job.n_blocks, b, &r0, &r1)
    _scores_rows(job, r0, r1)


def csr_scores(X, coef_t, int n_threads=1):
    """The scores ``X @ coef_t`` of a canonical CSR matrix ``X`` (float32 or float64, as
    :func:`sqnopt.data.check_matrix` returns it) and a C-contiguous float64 ``coef_t`` of shape
    ``(n_features, K)``, as an ``(n_rows, K)`` array: the arithmetic of SciPy's CSR product
    (each row's entries in order), its rows split into blocks over up to ``n_threads``
    threads. Rows do not interact, so the blocks change nothing: the same bits as
    ``X @ coef_t`` for every thread count."""
    cdef const Py_ssize_t[::1] indptr = np.ascontiguousarray(X.indptr, dtype=np.intp)
    cdef const int[::1] indices = np.ascontiguousarray(X.indices, dtype=np.int32)
    cdef const double[:, ::1] ct = coef_t
    cdef const double[::1] d64
    cdef const float[::1] d32
    cdef _ScoresJob job
    cdef Py_ssize_t n_rows = X.shape[0], n_cols = X.shape[1]
    if ct.shape[0] != n_cols:
        raise ValueError(f"coef_t has {ct.shape[0]} rows, X {n_cols} columns")
    out = np.zeros((n_rows, ct.shape[1]))
    cdef double[:, ::1] o = out
    if n_rows == 0 or ct.shape[1] == 0:
        return out
    job.d64 = NULL
    job.d32 = NULL
    if X.data.dtype == np.float32:
        d32 = X.data
        if d32.shape[0]:
            job.d32 = &d32[0]
    else:
        d64 = np.ascontiguousarray(X.data, dtype=np.float64)
        if d64.shape[0]:
            job.d64 = &d64[0]
    if job.d32 == NULL and job.d64 == NULL:
        return out                                  # no stored entries: all zero
    job.indptr = &indptr[0]
    job.indices = &indices[0] if indices.shape[0] else NULL
    job.coef_t = &ct[0, 0]
    job.out = &o[0, 0]
    job.n_rows = n_rows
    job.K = ct.shape[1]
    job.n_blocks = plan_blocks(n_rows, ENTRY_WORK * (<double> indptr[n_rows] / n_rows)
                               * job.K + 1, 0)
    with nogil:
        if job.n_blocks <= 1 or n_threads <= 1:
            _scores_rows(&job, 0, n_rows)
        else:
            run_tasks(n_threads, job.n_blocks, _scores_task, &job)
    return out


cdef void _row_sqnorms(const Py_ssize_t* indptr, const real_t* values, Py_ssize_t n,
                       double* out) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):      # (the row views' own squared norm, RowData.row_sqnorm's arithmetic)
        out[i] = _sparse_sqnorm(values + indptr[i], indptr[i + 1] - indptr[i])


def csr_row_sqnorms(const Py_ssize_t[::1] indptr, values):
    """``sum_p x_ip^2`` of every row of a CSR matrix given by its ``indptr`` (as ``intp``) and
    stored ``values`` (float32 or float64): each row's squares summed from 0 in the order of its
    entries, in one read of the values (NumPy's ``reduceat`` of ``values * values`` wrote the
    squares to a new array first). Rows do not interact: an empty row's norm is 0."""
    cdef Py_ssize_t n = indptr.shape[0] - 1
    cdef const double[::1] d64
    cdef const float[::1] d32
    if n < 0:
        raise ValueError("csr_row_sqnorms: indptr is empty")
    if indptr[0] < 0 or indptr[n] > values.shape[0]:
        raise ValueError("csr_row_sqnorms: indptr points outside the values")
    out = np.zeros(n)
    cdef double[::1] o = out
    if n == 0 or indptr[n] == 0:
        return out
    if values.dtype == np.float32:
        d32 = values
        with nogil:
            _row_sqnorms(&indptr[0], &d32[0], n, &o[0])
    else:
        d64 = values
        with nogil:
            _row_sqnorms(&indptr[0], &d64[0], n, &o[0])
    return out


ctypedef fused index_t:
    int
    long long


def _column_max_abs(const index_t[::1] ind, const real_t[::1] values, double[::1] out):
    """The loop of :func:`csr_column_max_abs` (one specialization per index and value type);
    False if an index lies outside ``out``."""
    cdef Py_ssize_t p, j, n = values.shape[0], m = out.shape[0]
    cdef double a
    cdef bint ok = True
    with nogil:
        for p in range(n):
            j = <Py_ssize_t> ind[p]
            if j < 0 or j >= m:
                ok = False
                break
            a = fabs(<double> values[p])
            if a > out[j]:
                out[j] = a
    return ok


def csr_column_max_abs(indices, values, Py_ssize_t n_columns):
    """``max_p |x_p|`` of every column over the stored entries ``values`` (float32 or float64)
    at column ``indices`` (int32 or int64, as a CSR matrix holds them, of the same length): 0
    for a column with no entry, NaN values skipped. One read of the entries, without the
    absolute values' array and the unbuffered scatter of ``np.maximum.at``; any index outside
    ``[0, n_columns)`` raises before a result is returned."""
    if indices.ndim != 1 or values.ndim != 1 or indices.shape[0] != values.shape[0]:
        raise ValueError("csr_column_max_abs: indices and values must be 1-D of one length")
    if n_columns < 0:
        raise ValueError("csr_column_max_abs: n_columns must be >= 0")
    values = np.ascontiguousarray(values, dtype=np.float32 if values.dtype == np.float32
                                  else np.float64)
    indices = np.ascontiguousarray(indices, dtype=np.int32 if indices.dtype == np.int32
                                   else np.int64)
    out = np.zeros(n_columns)
    if values.shape[0] and not _column_max_abs(indices, values, out):
        raise ValueError("csr_column_max_abs: an index lies outside [0, n_columns)")
    return out


def copy_segments(src, dst, const Py_ssize_t[::1] starts, const Py_ssize_t[::1] lengths,
                  const Py_ssize_t[::1] offsets):
    """``dst[offsets[k] : offsets[k] + lengths[k]] = src[starts[k] : starts[k] + lengths[k]]``
    for every ``k``: the rows of a CSR matrix (its values or its column indices) gathered into
    a buffer, one ``memcpy`` per row (``src`` and ``dst`` C-contiguous 1-D arrays of the same
    dtype). Every segment is checked to lie within both arrays before anything is copied."""
    if src.dtype != dst.dtype or src.ndim != 1 or dst.ndim != 1:
        raise ValueError("copy_segments: src and dst must be 1-D arrays of the same dtype")
    if not (src.flags.c_contiguous and dst.flags.c_contiguous):
        raise ValueError("copy_segments: src and dst must be C-contiguous")
    if not (starts.shape[0] == lengths.shape[0] == offsets.shape[0]):
        raise ValueError("copy_segments: starts, lengths and offsets differ in length")
    cdef Py_ssize_t k, n = starts.shape[0], isz = src.itemsize
    cdef Py_ssize_t n_src = src.shape[0], n_dst = dst.shape[0]
    cdef bint bad = False
    for k in range(n):
        bad |= (lengths[k] < 0 or starts[k] < 0 or offsets[k] < 0
                or starts[k] + lengths[k] > n_src or offsets[k] + lengths[k] > n_dst)
    if bad:
        raise ValueError("copy_segments: a segment lies outside src or dst")
    if n == 0 or n_src == 0 or n_dst == 0:
        return
    cdef const unsigned char[::1] s = src.view(np.uint8)
    cdef unsigned char[::1] d = dst.view(np.uint8)
    with nogil:
        for k in range(n):
            if lengths[k] > 0:
                memcpy(&d[offsets[k] * isz], &s[starts[k] * isz], lengths[k] * isz)
