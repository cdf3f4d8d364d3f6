# cython: language_level=3
r"""Newton's method with the exact Hessian, formed and factored on the curvature batch.

On the batch ``S`` (for the recipe: the whole data set) at ``w_t`` the kernel forms

.. math:: H = \frac{1}{|S|}\sum_{i \in S} J_i^\top\, \Sigma_i\, J_i + \Lambda

with ``J_i`` the Jacobian of sample ``i``'s linear scores in the parameters, ``Sigma_i`` its
score Hessian from the objective's factors (``cy_hessian_factors``: ``g_i l''(m_i)`` for a margin
loss, where ``J_i = y_i [x_i, 1]`` and ``y_i^2 = 1``; ``g_i (diag(p) - p p')`` for softmax, where
``J_i = I_K \otimes [x_i, 1]``) and ``Lambda`` the regulariser's diagonal (``lam`` on the
regularised coordinates), factors it by Cholesky (LAPACK ``dpotrf``) and returns
``d = H^{-1} g`` (``dpotrs``) until the next batch. Forming ``H`` costs
``sum_i K^2 nnz_i^2 / 2`` multiply-adds (each row's pairs of entries, for each pair of classes)
and factoring it ``n^3 / 3`` for ``n`` parameters; ``O(n^2)`` memory. This is the exact Newton
step of the objective on the batch: with the full batch and a line search the iterates converge
quadratically near the optimum (Nocedal & Wright 2006, Thm. 3.5), the method scikit-learn calls
``newton-cholesky``. The objective must provide this layout (capability ``dense_hessian``).
On dense rows with one score per sample, ``H`` is formed by BLAS (``dsyrk`` over chunks of rows
scaled by ``sqrt(l''_i)``), the same sums in the order of a matrix product.

Softmax is over-parameterised: adding one number to coordinate ``j`` of every class leaves the
probabilities unchanged, so where ``j`` is not regularised (the intercepts; every coordinate
when ``lam = 0``) ``H`` is singular along ``u_j = sum_k e_{k dim + j} / sqrt(K)`` while the
gradient is orthogonal to ``u_j``. The kernel factors ``H + c_j u_j u_j'`` (``c_j`` the mean of
``u_j``'s diagonal entries of ``H``) instead, whose solution is the minimum-norm Newton step.
"""

import numpy as np

from libc.math cimport isfinite, sqrt
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset
from scipy.linalg.cython_blas cimport dsyrk
from scipy.linalg.cython_lapack cimport dpotrf, dpotrs

from sqnopt.checkpoint import CheckpointError, state_array, state_value
from sqnopt._parallel cimport (
    ENTRY_WORK, ROW_WORK, block_bounds, plan_blocks, ring_size, run_ordered,
)
from sqnopt.curvature._base cimport BATCH_OBSERVED, CURVATURE_ERROR, CurvatureKernel
from sqnopt.objectives._base cimport ObjectiveKernel
from sqnopt._gram cimport add_pairs, add_pairs_ones
from sqnopt.data._rows cimport view_dot

# Row-major upper triangle = LAPACK's (column-major) lower one.
cdef char UPLO = b'L'
# The dense rows gathered per BLAS ``dsyrk`` call: at most this many doubles of buffer ...
cdef Py_ssize_t GATHER_DOUBLES = 1 << 18
# ... and at most this many rows (fewer for wide rows).
cdef Py_ssize_t GATHER_ROWS = 2048


cdef int _form_rows(ObjectiveKernel objective, const Py_ssize_t* batch, Py_ssize_t t0,
                    Py_ssize_t t1, Py_ssize_t size, const double* w, double* D, double* H,
                    Py_ssize_t n, Py_ssize_t* idx, double* val, double* S,
                    double below) noexcept nogil:
    """Add the pairs of entries of the rows at positions ``[t0, t1)`` of the batch into the
    upper triangle ``H`` (row-major, ``n x n``): the serial loop of :meth:`NewtonKernel._form`
    (``idx``, ``val``: ``dim + 1`` entries of scratch, ``S``: ``K x K``; without ``w``, a
    one-score row whose factor in ``D`` is in ``[0, below)`` adds its diagonal only); -1 if a
    score is not finite."""
    cdef Py_ssize_t K = objective.hess_size, dim = objective.data.dim
    cdef Py_ssize_t nf = objective.data.n_features
    cdef bint intercept = objective.data.has_intercept
    cdef const double* d64
    cdef const float* d32
    cdef const int* ind
    cdef double* dk
    cdef Py_ssize_t t, p, q, m, nnz, a, k, l
    cdef double inv = 1.0 / size, vp, xx, gi = 0.0, score = 0.0, a0, a1
    cdef double* row
    cdef bint binary
    for t in range(t0, t1):
        dk = D + t * K
        if w == NULL:
            gi = 0.0
            for k in range(K):
                gi += dk[k]
            if gi == 0.0:
                continue
        nnz = objective.data.row_view(batch[t], &d64, &d32, &ind)
        if K == 1 and w == NULL and dk[0] < below and dk[0] >= 0.0:
            # a row of negligible curvature (below): its diagonal only, from the row in place
            # (half, as the fold doubles it)
            xx = 0.5 * inv * dk[0]
            for p in range(nnz):
                a = ind[p] if ind != NULL else p
                vp = d64[p] if d64 != NULL else <double> d32[p]
                H[a * n + a] += xx * vp * vp
            if intercept:
                H[nf * n + nf] += xx
            continue
        # gather the row, noting whether its values are all 1, and (for a margin loss) its
        # score x_i . w + b as row_dot computes it
        binary = True
        if ind != NULL and d64 != NULL and w != NULL:
            # float64 CSR, the common layout: one pass, the score summed in row_dot's order
            # (two partial sums; see _sparse_dot)
            a0 = a1 = 0.0
            p = 0
            while p + 2 <= nnz:
                idx[p] = ind[p]
                idx[p + 1] = ind[p + 1]
                val[p] = d64[p]
                val[p + 1] = d64[p + 1]
                if d64[p] != 1.0 or d64[p + 1] != 1.0:
                    binary = False
                a0 += d64[p] * w[ind[p]]
                a1 += d64[p + 1] * w[ind[p + 1]]
                p += 2
            if p < nnz:
                idx[p] = ind[p]
                val[p] = d64[p]
                if d64[p] != 1.0:
                    binary = False
                a0 += d64[p] * w[ind[p]]
            score = a0 + a1
        else:
            for p in range(nnz):
                idx[p] = ind[p] if ind != NULL else p
                val[p] = d64[p] if d64 != NULL else <double> d32[p]
                if val[p] != 1.0:
                    binary = False
            if w != NULL:
                score = view_dot(d64, d32, ind, nnz, w)
        m = nnz
        if intercept:
            idx[m] = nf
            val[m] = 1.0
            m += 1
        if w != NULL:
            if intercept:
                score += w[nf]
            if not isfinite(score):
                return -1
            dk[0] = objective.cy_score_hessian_factor(batch[t], score)
            if dk[0] == 0.0:
                continue
        if K == 1:
            if binary:
                add_pairs_ones(H, n, idx, m, inv * dk[0], 0.5)
            else:
                add_pairs(H, n, idx, val, m, inv * dk[0], 0.5)
        else:
            # Sigma = g (diag(p) - p p') with g p in D: S[k, l] = D_k [k == l] - D_k D_l / g
            for k in range(K):
                for l in range(K):
                    S[k * K + l] = inv * ((dk[k] if k == l else 0.0) - dk[k] * dk[l] / gi)
            if binary:
                # block (k, l) of H gains S[k, l] x x': the margin loss's triangle with
                # coefficient S[k, l] in the block, which adds the same products in the same
                # order as the loop below does for a row of ones (S * (1 * 1), S * 0.5)
                for k in range(K):
                    for l in range(K):
                        add_pairs_ones(H + k * dim * n + l * dim, n, idx, m,
                                       S[k * K + l], 0.5)
                continue
            for p in range(m):
                a = idx[p]
                for q in range(p, m):
                    xx = val[p] * val[q]
                    if q == p:
                        xx *= 0.5
                    for k in range(K):
                        row = H + (k * dim + a) * n + idx[q]
                        for l in range(K):
                            row[l * dim] += S[k * K + l] * xx
    return 0


cdef int _form_dense(ObjectiveKernel objective, const Py_ssize_t* batch, Py_ssize_t size,
                     const double* D, double* H, Py_ssize_t n) noexcept nogil:
    """The upper triangle ``H`` (row-major ``n x n``, zeroed) of a one-block objective's data
    term on dense rows by BLAS, from the factors ``D``: ``H = sum_t a_t a_t'`` with
    ``a_t = sqrt(D_t / size) [x_t, 1]`` gathered a chunk of rows at a time and added by
    ``dsyrk`` (the Level-3 form of the pair loop of :func:`_form_rows`: the same
    ``size n^2 / 2`` multiply-adds, at the speed of a matrix product), its diagonal halved as
    the pair loop leaves it for the fold. Consecutive float64 rows of one factor (the whole
    data set of an unweighted quadratic) are read in place, without the gather. Returns 0; 1 (``H`` untouched) when a factor is
    negative or not a number (the square roots need ``D_t >= 0``: the pair loop forms ``H``
    then); -2 if memory is short."""
    cdef Py_ssize_t nf = objective.data.n_features, t, j, start, rows, nnz, chunk
    cdef bint intercept = objective.data.has_intercept
    cdef const double* d64
    cdef const float* d32
    cdef const int* ind
    cdef double inv = 1.0 / size, a, one = 1.0, beta = 0.0
    cdef double* row
    cdef double* buf
    cdef char trans = b'N'
    cdef int nn = <int> n, kk, ld
    cdef bint direct = size > 0
    for t in range(size):
        if not D[t] >= 0.0:
            return 1
        if D[t] != D[0] or batch[t] != batch[0] + t:
            direct = False
    if direct:
        nnz = objective.data.row_view(batch[0], &d64, &d32, &ind)
        if d64 != NULL and nnz == nf:
            # consecutive float64 rows of one factor (an unweighted quadratic on the whole
            # data): dsyrk reads them where they are, the intercept's entries are column sums
            a = inv * D[0]
            kk = <int> size
            nn = <int> nf
            ld = <int> n
            if nf > 0:
                dsyrk(&UPLO, &trans, &nn, &kk, &a, d64, &nn, &beta, H, &ld)
            if intercept:
                buf = <double*> malloc((nf + 1) * sizeof(double))
                if buf == NULL:
                    return -2
                memset(buf, 0, (nf + 1) * sizeof(double))
                for t in range(size):
                    for j in range(nf):
                        buf[j] += d64[t * nf + j]
                for j in range(nf):         # column nf of the row-major upper triangle
                    H[j * n + nf] = a * buf[j]
                H[nf * n + nf] = a * size
                free(buf)
            for j in range(n):
                H[j * n + j] *= 0.5
            return 0
    chunk = GATHER_DOUBLES // n
    if chunk > GATHER_ROWS:
        chunk = GATHER_ROWS
    if chunk < 1:
        chunk = 1
    buf = <double*> malloc(chunk * n * sizeof(double))
    if buf == NULL:
        return -2
    start = 0
    while start < size:
        rows = size - start
        if rows > chunk:
            rows = chunk
        for t in range(rows):
            a = sqrt(inv * D[start + t])
            row = buf + t * n
            nnz = objective.data.row_view(batch[start + t], &d64, &d32, &ind)
            if d64 != NULL:
                for j in range(nnz):
                    row[j] = a * d64[j]
            else:
                for j in range(nnz):
                    row[j] = a * <double> d32[j]
            if intercept:
                row[nf] = a
        kk = <int> rows
        dsyrk(&UPLO, &trans, &nn, &kk, &one, buf, &nn, &beta, H, &nn)
        beta = 1.0
        start += rows
    free(buf)
    for j in range(n):
        H[j * n + j] *= 0.5
    return 0


cdef struct _FormJob:
    void* objective                 # the ObjectiveKernel (borrowed)
    const Py_ssize_t* batch
    Py_ssize_t size
    const double* w
    double* D
    Py_ssize_t n
    Py_ssize_t n_blocks
    Py_ssize_t dim
    Py_ssize_t K
    double below


cdef int _form_block(void* ctx, Py_ssize_t b, double* H) noexcept nogil:
    """Block ``b`` of the Hessian's formation into the triangle ``H`` (the Hessian's buffer for
    block 0, a zeroed partial for the others), with scratch of its own."""
    cdef _FormJob* job = <_FormJob*> ctx
    cdef Py_ssize_t t0, t1
    cdef int code
    cdef Py_ssize_t* idx = <Py_ssize_t*> malloc((job.dim + 1) * sizeof(Py_ssize_t))
    cdef double* val = <double*> malloc((job.dim + 1 + job.K * job.K) * sizeof(double))
    if idx == NULL or val == NULL:
        free(idx)
        free(val)
        return -2
    block_bounds(job.size, job.n_blocks, b, &t0, &t1)
    code = _form_rows(<ObjectiveKernel> job.objective, job.batch, t0, t1, job.size, job.w,
                      job.D, H, job.n, idx, val, val + job.dim + 1, job.below)
    free(idx)
    free(val)
    return code


cdef class NewtonKernel(CurvatureKernel):
    def __init__(self, Py_ssize_t dim, Py_ssize_t n_samples, Py_ssize_t hess_size):
        CurvatureKernel.__init__(self, dim)
        self.needs_curvature_batch = True
        self.H = np.zeros((dim, dim))
        self.D = np.zeros(max(n_samples * max(hess_size, 1), 1))
        self.reg = np.zeros(dim)
        self.ones = np.ones(dim)
        self.S = np.zeros(max(hess_size, 1) ** 2)
        self.idx = np.zeros(dim + 1, dtype=np.intp)
        self.val = np.zeros(dim + 1)
        self.have_factor = False
        self.n_factorizations = 0
        self._failed = 0
        self._info = 0
        self._batch_curvature = 0.0
        self._fail_reg = 0.0
        self._fail_intercept = False

    cdef int cy_observe_batch(self, ObjectiveKernel objective, const double* w,
                              const Py_ssize_t* batch, Py_ssize_t size) noexcept nogil:
        cdef Py_ssize_t K = objective.hess_size, n = self.dim, B = objective.n_blocks
        cdef int nn = <int> n, info = 0
        cdef bint fused
        self.have_factor = False
        if K < 1 or objective.n_params != n or objective.n_params != B * objective.data.dim \
                or not (K == B or (K == 1 and B == 1)):
            self._failed = 1
            return CURVATURE_ERROR
        if size * K > self.D.shape[0] or K * K > self.S.shape[0]:
            with gil:                   # rare: a larger batch than the data seen at init
                self.D = np.zeros(size * K)
                self.S = np.zeros(K * K)
        # a margin loss gives each sample's factor from the score formed while gathering its
        # row (one pass less): a capability the objective kernel declares, whatever its class
        # (not for dense rows: the BLAS formation gathers them after the factors are known,
        # which a quadratic objective gives without a pass)
        fused = objective.score_hessian_factor and K == 1 and objective.data.is_sparse
        if fused:
            # the margins and l'' computed from the rows as they are gathered (one pass less)
            if self._form(objective, batch, size, w) != 0:
                self._failed = 2
                return CURVATURE_ERROR
        else:
            if objective.cy_hessian_factors(w, batch, size, &self.D[0]) != 0:
                self._failed = 2
                return CURVATURE_ERROR
            self._form(objective, batch, size, NULL)
        dpotrf(&UPLO, &nn, &self.H[0, 0], &nn, &info)
        self.n_factorizations += 1
        if info != 0:
            self._failed = 3
            self._info = info
            self._fail_reg = self.reg[info - 1] if 0 < info <= n else 0.0
            self._fail_intercept = (objective.data.has_intercept and 0 < info <= n and
                                    (info - 1) % objective.data.dim == objective.data.dim - 1)
            return CURVATURE_ERROR
        self.have_factor = True
        return BATCH_OBSERVED

    cdef int _form(self, ObjectiveKernel objective, const Py_ssize_t* batch,
                   Py_ssize_t size, const double* w, double below=0.0) noexcept nogil:
        """``H`` (upper triangle, row-major) from the factors in ``D``: each row's pairs of
        entries ``p <= q`` are added once in the orientation they come in (half the diagonal
        pairs), then the matrix is folded, ``H <- U + U'``, which also gathers the entries of
        unsorted rows and of the class blocks below the diagonal. With ``w`` (an objective
        declaring ``score_hessian_factor``: a margin loss) each row's factor ``g_i l''(y_i s_i)``
        is computed here from its score ``s_i = x_i . w + b`` on the gathered row instead of
        read from ``D``; returns -1 if a score is not finite (-2 if memory is short).
        ``below > 0`` (factors read from ``D``: no ``w``; one score per row; rows not formed by
        BLAS): a row whose factor is under it adds its diagonal entries only -- the off-diagonal
        pairs of rows of negligible curvature skipped, the diagonal exact (a caller's
        approximate model, e.g. newGLMNET's).

        A large batch is split into blocks fixed by the data (``sqnopt._parallel``): each block
        adds its rows' pairs into a triangle of its own, on up to ``data.n_threads`` threads,
        and the triangles are added in block order before the fold -- the same bits for every
        thread count."""
        cdef Py_ssize_t K = objective.hess_size, n = self.dim, dim = objective.data.dim
        cdef double* H = &self.H[0, 0]
        cdef double* reg = &self.reg[0]
        cdef Py_ssize_t a, k, l, r, c, b, B, R
        cdef double coef, m = objective._row_entries
        cdef int nt, code = 0
        cdef _FormJob job
        cdef double* ring
        cdef int* status
        cdef Py_ssize_t t
        cdef double gi, curvature = 0.0, inv = 1.0 / size
        cdef double* dk
        cdef bint dense
        memset(H, 0, n * n * sizeof(double))
        self._batch_curvature = 0.0
        # dense rows of a one-block objective: the Level-3 BLAS form of the pair loop
        dense = (K == 1 and w == NULL and not objective.data.is_sparse and n == dim
                 and objective.data.n_features + objective.data.has_intercept == n)
        if dense:
            code = _form_dense(objective, batch, size, &self.D[0], H, n)
            if code < 0:
                return code
            dense = code == 0   # 1: a negative factor, the pair loop (from D)
        # work per row: its pairs of entries for each pair of classes, and the gather
        B = plan_blocks(size, K * K * (0.5 * m * m + m) + ENTRY_WORK * m + ROW_WORK, n * n)
        if dense:
            pass
        elif B <= 1:
            code = _form_rows(objective, batch, 0, size, size, w, &self.D[0], H, n, &self.idx[0],
                              &self.val[0], &self.S[0], below)
        else:
            nt = objective.data.n_threads
            if nt > B:
                nt = <int> B
            R = ring_size(nt, B, n * n)
            ring = <double*> malloc(R * n * n * sizeof(double))
            status = <int*> malloc(B * sizeof(int))
            if ring == NULL or status == NULL:
                free(ring)
                free(status)
                return -2
            job.objective = <void*> objective
            job.batch = batch
            job.size = size
            job.w = w
            job.D = &self.D[0]
            job.n = n
            job.n_blocks = B
            job.dim = dim
            job.K = K
            job.below = below
            run_ordered(nt, B, _form_block, &job, H, n * n, ring, R, status)
            for b in range(B):
                if status[b] != 0:
                    code = status[b]
                    break
            free(ring)
            free(status)
        if code != 0:
            return code
        # the batch's mean score-Hessian factor (for the failure message of a factorisation),
        # from the factors the rows left in D: g l''(m) for a margin loss, the trace of
        # g (diag p - p p') for the softmax
        for t in range(size):
            dk = &self.D[0] + t * K
            if w != NULL:
                curvature += dk[0]
                continue
            gi = 0.0
            for k in range(K):
                gi += dk[k]
            if gi == 0.0:
                continue
            if K == 1:
                curvature += gi
            else:
                for k in range(K):
                    curvature += dk[k] - dk[k] * dk[k] / gi
        self._batch_curvature = curvature * inv
        # fold U + U' into the upper triangle, add the regulariser
        memset(reg, 0, n * sizeof(double))
        objective.cy_reg_gradient_value(&self.ones[0], reg)
        for r in range(n):
            H[r * n + r] = 2.0 * H[r * n + r] + reg[r]
            for c in range(r + 1, n):
                H[r * n + c] += H[c * n + r]
        if K > 1:
            # softmax's scores are unchanged by adding one number to every class's coordinate j,
            # so the data term is flat along u_j = sum_k e_{k dim + j} / sqrt(K); when j is not
            # regularised (intercepts; every j if lam = 0) H is singular along u_j, and the
            # gradient is orthogonal to it. H + c u_j u_j' (c: the mean of u_j's diagonal
            # entries) has the same solution orthogonal to u_j: the minimum-norm Newton step.
            for a in range(dim):
                coef = 0.0
                for k in range(K):
                    if reg[k * dim + a] != 0.0:
                        coef = -1.0
                        break
                    coef += H[(k * dim + a) * n + k * dim + a]
                if coef < 0.0:
                    continue
                coef = coef / (K * K) if coef > 0.0 else 1.0 / K
                for k in range(K):
                    for l in range(k, K):
                        H[(k * dim + a) * n + l * dim + a] += coef
        return 0

    cdef void cy_direction(self, const double* grad, double* out) noexcept nogil:
        cdef int nn = <int> self.dim, nrhs = 1, info = 0
        memcpy(out, grad, self.dim * sizeof(double))
        if self.have_factor:
            dpotrs(&UPLO, &nn, &nrhs, &self.H[0, 0], &nn, out, &nn, &info)

    def error_message(self) -> str:
        if self._failed == 1:
            return ("the objective's parameters are not K blocks of per-sample linear scores "
                    "with a K x K score Hessian (capability 'dense_hessian'); use "
                    "curvature='newton_cg' or 'lbfgs'")
        if self._failed == 3:
            return self._indefinite_message()
        return "a score is not finite at the iterate (the Hessian cannot be formed)"

    def _indefinite_message(self) -> str:
        """Why the Cholesky factorisation failed, from what the kernel saw: whether the
        coordinate of the failed pivot is regularised and how curved the loss was over the
        batch (a loss whose margins all lie far out in its linear or constant part has a
        second derivative of about zero: only the regulariser curves the objective there)."""
        where = ("the intercept" if self._fail_intercept else
                 f"parameter {self._info - 1}")
        head = (f"the Hessian is not positive definite at the iterate (LAPACK dpotrf: the "
                f"leading minor of order {self._info}, ending at {where}): ")
        curv = self._batch_curvature
        if self._fail_reg > 0.0:
            return head + (
                f"{where} is regularised (lam = {self._fail_reg:.3g}), so the Hessian is "
                f"positive definite in exact arithmetic, but its entries span more than double "
                f"precision resolves (the loss's mean second derivative over the batch is "
                f"{curv:.3g}); scale the features, or use curvature='lbfgs'")
        why = ("it is not regularised (an unregularised intercept)" if self._fail_intercept
               else "lam = 0 leaves it unregularised")
        if curv < 1e-8:
            lam_zero = float(np.max(self.reg)) == 0.0
            return head + (
                f"{why}, and the loss is flat at the iterate (its second derivative averages "
                f"{curv:.3g} over the batch: every margin lies far out, where the loss is "
                f"linear or constant), so nothing curves the objective along it. Iterates that "
                f"far out come from steps too long for the direction (use a line search: "
                f"step='auto')"
                + (" or, with lam = 0, from separable data whose optimum is at infinity (use "
                   "lam > 0 or curvature='lbfgs')" if lam_zero else ""))
        return head + (
            f"{why}, and the data do not determine it (e.g. a feature that is zero on every "
            f"row, or one that repeats others): use lam > 0 or curvature='lbfgs'")

    # ---- checkpoints ----------------------------------------------------------------------
    def get_state(self) -> dict:
        """The Cholesky factor of the last batch's Hessian (``n^2`` doubles) and the counters."""
        state = CurvatureKernel.get_state(self)
        state.update(have_factor=bool(self.have_factor),
                     factor=np.array(self.H) if self.have_factor else np.zeros((0, 0)),
                     n_factorizations=int(self.n_factorizations), failed=int(self._failed),
                     info=int(self._info))
        return state

    def set_state(self, state) -> None:
        CurvatureKernel.set_state(self, state)
        have = state_value(state, "have_factor", bool, self)
        factor = state_array(state, "factor", self, np.float64, ndim=2)
        n_factorizations = state_value(state, "n_factorizations", int, self, lo=0)
        failed = state_value(state, "failed", int, self, lo=0, hi=3)
        info = state_value(state, "info", int, self)
        if have:
            if factor.shape != (self.dim, self.dim):
                raise CheckpointError(f"NewtonKernel: checkpoint field 'factor' has shape "
                                      f"{factor.shape}, expected ({self.dim}, {self.dim})")
            if not np.all(np.diagonal(factor) > 0):
                raise CheckpointError("NewtonKernel: checkpoint field 'factor' is not a "
                                      "Cholesky factor (a diagonal entry is not positive): the "
                                      "checkpoint is damaged or was edited")
            np.asarray(self.H)[...] = factor
        self.have_factor = have
        self.n_factorizations = n_factorizations
        self._failed = failed
        self._info = info
