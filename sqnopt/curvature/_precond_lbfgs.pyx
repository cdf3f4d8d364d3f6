# cython: language_level=3
r"""L-BFGS preconditioned by a fixed quadratic majoriser of the Hessian (Böhning's bound).

For a loss of linear scores whose curvature in the scores is bounded,
``l''(m) <= c`` for a margin loss (logistic ``c = 1/4``; Böhning & Lindsay 1988) and
``diag(p) - p p' <= (1/2)(I_K - 1 1'/K) <= (1/2) I_K`` for the softmax (Böhning 1992, "Multinomial
logistic regression algorithm", Ann. Inst. Statist. Math. 44), the Hessian of

    F(w) = lam/2 ||w_reg||^2 + sum_i s_i l_i(w) / sum_i s_i

is bounded at every ``w`` by the fixed matrix

    M = I_K (x) M_1,    M_1 = c X'SX / sum_i s_i + lam D,

with ``X`` the rows ``[x_i, 1]`` (the intercept's column when fitted), ``S`` the sample weights
and ``D`` the regulariser's diagonal (1 on the features, 0 on the intercept). The kernel forms
``M_1`` once from the data (:meth:`BoundLBFGSKernel.bind`: blocks of rows gathered into a dense
buffer, BLAS ``dsyrk``, ``N dim^2 / 2`` multiply-adds; for sparse rows whose entries' pairs
number under a quarter of that, ``sum_i m_i^2`` from the pairs of each row's ``m_i``
entries), factors it by Cholesky (LAPACK ``dpotrf``,
``dim^3 / 3``), and uses

    H_{t,0} = gamma_t M^{-1},    gamma_t = v'r / r'M^{-1}r

(the newest pair; ``gamma_0`` before the first) as the initial matrix of the L-BFGS two-loop
recursion (Nocedal & Wright 2006, Algorithm 7.4, with a non-scalar ``H_0``; the scaling is eq.
7.20's in the metric of ``M``). Applying ``M^{-1}`` is one ``dpotrs`` on the ``K`` blocks of the
vector, which are the columns of a column-major ``dim x K`` matrix (``2 dim^2 K``
multiply-adds). The pairs model what the bound misses (the probabilities' weights), while
``M`` removes the correlation and the uncentred scale of the features that make plain L-BFGS
crawl on dense data such as images.

With ``rows = m < N`` the kernel forms ``M_1`` from a systematic sample of the rows, ``i_t =
floor(t N / m)`` for ``t = 0 .. m - 1`` (every ``N/m``-th row, so rows sorted by any key are
covered evenly, and the same rows on every bind: no random state), weighted by their sample
weights' sum: an estimate of the matrix at ``m / N`` of its cost. It is then a preconditioner,
no longer a bound; for a loss without a curvature bound (Poisson's ``exp``) ``c`` is the loss's
curvature at score 0 and ``M`` estimates the Hessian at ``w = 0``, where the solves start -- the
sampled starting Hessian of subsampled Newton methods (Byrd, Chin, Neveitt & Nocedal 2011, "On
the use of stochastic Hessian information in optimization methods for machine learning", SIAM
J. Optim. 21), kept fixed and corrected by the pairs.
"""

import numpy as np

from libc.math cimport isfinite, sqrt
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset
from scipy.linalg.cython_blas cimport dsyrk
from scipy.linalg.cython_lapack cimport dpotrf, dpotrs

from sqnopt._gram cimport add_pairs, add_pairs_ones
from sqnopt._vec cimport sq_axpy, sq_dot
from sqnopt.curvature._base cimport PAIR_ACCEPTED
from sqnopt.curvature._lbfgs cimport LBFGSKernel
from sqnopt.data._rows cimport RowData
from sqnopt.objectives._base cimport ObjectiveKernel

# Rows gathered per dsyrk call (a dense buffer of CHUNK x block doubles).
cdef Py_ssize_t CHUNK = 256


cdef inline Py_ssize_t _sample_row(Py_ssize_t t, Py_ssize_t n_samples,
                                   Py_ssize_t m) noexcept nogil:
    """Row ``t`` of the systematic sample of ``m`` of ``n_samples`` rows: ``floor(t N / m)``
    (``m = N``: row ``t``)."""
    return (t * n_samples) // m


cdef void _sample_sums(RowData data, Py_ssize_t m, double* total,
                       double* pair_work) noexcept nogil:
    """The sample's weight sum and, for sparse rows, ``sum_i m_i^2`` over its rows."""
    cdef Py_ssize_t t, i, nnz
    total[0] = 0.0
    pair_work[0] = 0.0
    for t in range(m):
        i = _sample_row(t, data.n_samples, m)
        total[0] += data.sample_weight[i]
        if data.is_sparse:
            nnz = data.row_nnz(i)
            pair_work[0] += <double> nnz * nnz


cdef bint _rows_strictly_sorted(RowData data, Py_ssize_t m) noexcept nogil:
    """Whether every row of the systematic sample of ``m`` rows has strictly increasing column
    indices (a canonical CSR's: sorted, no duplicates), so that the pairs ``b >= a`` of a row's
    entries are those of the lower triangle."""
    cdef Py_ssize_t t, a, nnz
    cdef const double* d64
    cdef const float* d32
    cdef const int* ind
    for t in range(m):
        nnz = data.row_view(_sample_row(t, data.n_samples, m), &d64, &d32, &ind)
        for a in range(1, nnz):
            if ind[a] <= ind[a - 1]:
                return False
    return True


cdef int _gram_pairs(RowData data, double* G, Py_ssize_t n, Py_ssize_t m) noexcept nogil:
    """``G`` (lower triangle, column-major ``n x n``, zeroed) ``+= sum_i s_i [x_i, 1][x_i, 1]'``
    over the ``m`` rows of the systematic sample (all rows when ``m = N``) from the pairs of
    each sparse row's entries: ``sum_i m_i (m_i + 1) / 2`` multiply-adds for rows of ``m_i``
    entries with strictly increasing indices (:mod:`sqnopt._gram`), ``sum_i m_i^2`` otherwise
    (duplicate indices add up as the row's sum would). Returns 0; -2 if memory is short."""
    cdef Py_ssize_t i, t, a, b, ja, jb, nnz, width = 0
    cdef const double* d64
    cdef const float* d32
    cdef const int* ind
    cdef double s, xa
    cdef double* vals = NULL
    cdef bint ones
    if _rows_strictly_sorted(data, m):
        for t in range(m):
            nnz = data.row_view(_sample_row(t, data.n_samples, m), &d64, &d32, &ind)
            if d64 == NULL and nnz > width:
                width = nnz
        if width > 0:
            vals = <double*> malloc(width * sizeof(double))
            if vals == NULL:
                return -2
        for t in range(m):
            i = _sample_row(t, data.n_samples, m)
            s = data.sample_weight[i]
            nnz = data.row_view(i, &d64, &d32, &ind)
            if d64 == NULL:
                for a in range(nnz):
                    vals[a] = <double> d32[a]
            ones = True
            for a in range(nnz):
                if (d64[a] if d64 != NULL else vals[a]) != 1.0:
                    ones = False
                    break
            # column ind[a] gains s v[a] v[b] at row ind[b], b >= a: the lower triangle of
            # the column-major G (sqnopt._gram), the whole product on the diagonal
            if ones:
                add_pairs_ones(G, n, ind, nnz, s, 1.0)
            else:
                add_pairs(G, n, ind, d64 if d64 != NULL else vals, nnz, s, 1.0)
            if data.has_intercept:
                for a in range(nnz):
                    G[ind[a] * n + n - 1] += s * (d64[a] if d64 != NULL else vals[a])
                G[(n - 1) * n + n - 1] += s
        free(vals)
        return 0
    for t in range(m):
        i = _sample_row(t, data.n_samples, m)
        s = data.sample_weight[i]
        nnz = data.row_view(i, &d64, &d32, &ind)
        for a in range(nnz):
            ja = ind[a]
            xa = s * (d64[a] if d64 != NULL else <double> d32[a])
            for b in range(nnz):
                jb = ind[b]
                if jb >= ja:        # entry (jb, ja) of the lower triangle, column ja
                    G[ja * n + jb] += xa * (d64[b] if d64 != NULL else <double> d32[b])
            if data.has_intercept:
                G[ja * n + n - 1] += xa
        if data.has_intercept:
            G[(n - 1) * n + n - 1] += s
    return 0


cdef int _gram(RowData data, double* G, double* buf, Py_ssize_t n, Py_ssize_t m) noexcept nogil:
    """``G`` (lower triangle, column-major ``n x n``) ``= sum_i s_i [x_i, 1][x_i, 1]'`` over
    the ``m`` rows of the systematic sample (all rows when ``m = N``)."""
    cdef Py_ssize_t i, j, t, start, rows, nnz
    cdef const double* d64
    cdef const float* d32
    cdef const int* ind
    cdef double sw, one = 1.0
    cdef double* row
    cdef double beta = 0.0
    cdef char uplo = b'L'
    cdef char trans = b'N'
    cdef int nn = <int> n, kk, ld = <int> n
    start = 0
    while start < m:
        rows = m - start
        if rows > CHUNK:
            rows = CHUNK
        for t in range(rows):
            i = _sample_row(start + t, data.n_samples, m)
            sw = sqrt(data.sample_weight[i])
            row = &buf[t * n]
            memset(row, 0, n * sizeof(double))
            nnz = data.row_view(i, &d64, &d32, &ind)
            if ind == NULL:
                if d64 != NULL:
                    for j in range(nnz):
                        row[j] = sw * d64[j]
                elif d32 != NULL:
                    for j in range(nnz):
                        row[j] = sw * <double> d32[j]
            elif d64 != NULL:
                for j in range(nnz):
                    row[ind[j]] += sw * d64[j]
            else:
                for j in range(nnz):
                    row[ind[j]] += sw * <double> d32[j]
            if data.has_intercept:
                row[n - 1] = sw
        kk = <int> rows
        dsyrk(&uplo, &trans, &nn, &kk, &one, buf, &ld, &beta, G, &ld)
        beta = 1.0
        start += rows
    return 0


cdef class BoundLBFGSKernel(LBFGSKernel):
    """L-BFGS whose two-loop recursion starts from ``gamma_t M^{-1}`` (see the module docs)."""

    def __init__(self, Py_ssize_t block, Py_ssize_t n_blocks, double bound,
                 Py_ssize_t memory=10, double gamma0=1.0, double min_curvature=0.0,
                 bint reset_on_nonfinite=True, Py_ssize_t rows=0):
        if block < 1 or n_blocks < 1:
            raise ValueError(f"block and n_blocks must be >= 1, got {block}, {n_blocks}")
        if rows < 0:
            raise ValueError(f"rows must be >= 0 (0: every row), got {rows}")
        if not (isfinite(bound) and bound > 0.0):
            raise ValueError(f"bound must be a finite number > 0, got {bound}")
        LBFGSKernel.__init__(self, block * n_blocks, memory, gamma0, min_curvature, False, 0.2,
                             reset_on_nonfinite)
        self.block = block
        self.n_blocks = n_blocks
        self.bound = bound
        self.L = np.zeros((block, block))
        self.mr = np.zeros(block * n_blocks)
        self.has_bound = False
        self.n_rows = 0
        self.max_rows = rows
        self.sparse_pairs = False
        self._bound_to = None
        self._info = 0

    cdef void _solve(self, double* x) noexcept nogil:
        cdef char uplo = b'L'
        cdef int n = <int> self.block, nrhs = <int> self.n_blocks, info = 0
        dpotrs(&uplo, &n, &nrhs, &self.L[0, 0], &n, x, &n, &info)

    cdef void cy_direction(self, const double* g, double* out) noexcept nogil:
        cdef Py_ssize_t n = self.dim, tau = self.memory, m = self.count
        cdef Py_ssize_t u, idx
        cdef double a, b
        if not self.has_bound:      # not bound to data: plain L-BFGS
            LBFGSKernel.cy_direction(self, g, out)
            return
        memcpy(out, g, n * sizeof(double))
        idx = self.head
        for u in range(m):                         # newest to oldest
            a = self.rho[idx] * sq_dot(&self.V[idx, 0], out, n)
            self.alpha[idx] = a
            sq_axpy(-a, &self.R[idx, 0], out, n)
            idx = idx - 1 if idx > 0 else tau - 1
        self._solve(out)
        for u in range(n):
            out[u] *= self.gamma
        idx = self.head - m + 1
        if idx < 0:
            idx += tau
        for u in range(m):                         # oldest to newest
            b = self.rho[idx] * sq_dot(&self.R[idx, 0], out, n)
            sq_axpy(self.alpha[idx] - b, &self.V[idx, 0], out, n)
            idx = idx + 1 if idx < tau - 1 else 0

    cdef int cy_hessian_vector(self, const double* v, double* out) noexcept nogil:
        return -1          # no Powell damping (the component refuses on_bad_pair="damp")

    cdef int cy_update_pair(self, const double* v, const double* r) noexcept nogil:
        cdef int code = LBFGSKernel.cy_update_pair(self, v, r)
        cdef Py_ssize_t n = self.dim
        cdef double rmr
        if code != PAIR_ACCEPTED or not self.has_bound:
            return code
        memcpy(&self.mr[0], &self.R[self.head, 0], n * sizeof(double))
        self._solve(&self.mr[0])
        rmr = sq_dot(&self.R[self.head, 0], &self.mr[0], n)
        if isfinite(rmr) and rmr > 0.0:
            self.gamma = (1.0 / self.rho[self.head]) / rmr
        return code

    # ---- Python-level API ---------------------------------------------------------------
    def bind(self, objective) -> None:
        """Form and factor ``M_1`` from the rows of ``objective`` (the solver calls this when a
        solve starts or is restored; nothing is done if the factor is of this objective
        already). Raises ``ValueError`` for an objective of another parameter layout and
        ``numpy.linalg.LinAlgError`` if ``M_1`` is not positive definite."""
        if objective is self._bound_to:
            return
        if not isinstance(objective, ObjectiveKernel):
            raise TypeError("BoundLBFGSKernel.bind needs a compiled objective kernel, got "
                            f"{type(objective).__name__}")
        cdef ObjectiveKernel obj = <ObjectiveKernel> objective
        cdef RowData data = obj.data
        if data.dim != self.block or obj.n_blocks != self.n_blocks:
            raise ValueError(f"BoundLBFGSKernel: built for {self.n_blocks} blocks of "
                             f"{self.block}, the objective has {obj.n_blocks} blocks of "
                             f"{data.dim}")
        cdef Py_ssize_t n = self.block, i, j, nreg = data.n_features
        cdef double total = 0.0, scale, lam = obj.lam, pair_work = 0.0
        cdef Py_ssize_t used = data.n_samples
        cdef bint pairs
        cdef char uplo = b'L'
        cdef int nn = <int> n, info = 0, code = 0
        if 0 < self.max_rows < data.n_samples:
            used = self.max_rows
        _sample_sums(data, used, &total, &pair_work)
        if used < data.n_samples and not (isfinite(total) and total > 0.0):
            used = data.n_samples       # the sampled rows carry no weight: every row
            _sample_sums(data, used, &total, &pair_work)
        buf = np.empty(max(min(used, CHUNK), 1) * n)
        cdef double[::1] bv = buf
        # sparse rows: the pairs of their entries where that is under a quarter of the dense
        # product's multiply-adds (BLAS runs those several times faster)
        pairs = data.is_sparse and 4.0 * pair_work <= <double> used * n * n
        if not (isfinite(total) and total > 0.0):
            raise ValueError("BoundLBFGSKernel: the sample weights sum to "
                             f"{total}; the bound needs a positive total weight")
        self.has_bound = False
        with nogil:
            memset(&self.L[0, 0], 0, n * n * sizeof(double))
            if pairs:
                code = _gram_pairs(data, &self.L[0, 0], n, used)
            else:
                _gram(data, &self.L[0, 0], &bv[0], n, used)
            if code == 0:
                scale = self.bound / total
                # column-major lower triangle = row-major upper triangle: L[j, i] with i >= j
                # is entry (i, j) of the column-major matrix
                for j in range(n):
                    for i in range(j, n):
                        self.L[j, i] *= scale
                    if j < nreg:
                        self.L[j, j] += lam
                dpotrf(&uplo, &nn, &self.L[0, 0], &nn, &info)
        if code != 0:
            raise MemoryError("BoundLBFGSKernel: out of memory forming the bound")
        self._info = info
        if info != 0:
            raise np.linalg.LinAlgError(
                f"the bound c X'X/N + lam I is not positive definite (LAPACK dpotrf info={info}): "
                "the preconditioned L-BFGS needs lam > 0 or linearly independent features; use "
                "curvature='lbfgs'")
        self.n_rows = used
        self.sparse_pairs = pairs
        self.has_bound = True
        self._bound_to = objective

    def factor(self):
        """The Cholesky factor ``L`` of ``M_1 = L L'`` (lower triangular, a copy)."""
        return np.tril(np.asarray(self.L).T)

    def precondition(self, const double[::1] x):
        """``M^{-1} x`` (allocates); ``x`` of the kernel's dimension."""
        self._check(x)
        if not self.has_bound:
            raise RuntimeError("BoundLBFGSKernel: not bound to an objective (call bind)")
        out = np.array(x, dtype=np.float64)
        cdef double[::1] o = out
        self._solve(&o[0])
        return out
