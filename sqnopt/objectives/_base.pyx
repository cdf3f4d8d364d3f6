# cython: language_level=3
"""Compiled objective base classes (see ``_base.pxd`` for the contract)."""

import numpy as np

from libc.math cimport NAN, isfinite
from libc.stdlib cimport free, malloc
from libc.string cimport memset

from sqnopt._parallel cimport (
    DENSE_ENTRIES_PER_UNIT, ENTRY_WORK, ROW_WORK, block_bounds, plan_blocks, ring_size, run_ordered,
    run_tasks,
)
from sqnopt._vec cimport sq_axpy, sq_axpy_sqnorm, sq_dot
from sqnopt.data._rows cimport (
    RowData, batch_scattered, hint_batch_ahead, hint_batch_start, hint_in_order,
    hint_rows_ahead, hint_rows_start, view_axpy, view_dot,
    view_prefetch_rest)

cdef inline bint _all_zero(const double* w, Py_ssize_t n) noexcept nogil:
    """Whether every entry of ``w[:n]`` is zero (false at the first nonzero one; NaN is nonzero)."""
    cdef Py_ssize_t j
    for j in range(n):
        if w[j] != 0.0:
            return False
    return True


cdef void _pass_task(void* ctx, Py_ssize_t b, int worker) noexcept nogil:
    """One block of a pass that sums into no vector, on whichever thread takes it: the serial
    loop over the block's positions into the block's own slots (sums, per-row outputs)."""
    cdef PassJob* job = <PassJob*> ctx
    job.status[b] = (<ObjectiveKernel> job.kernel)._pass_block(
        job, job.bounds[b], job.bounds[b + 1], NULL, job.sums + 2 * b)


cdef int _pass_vector_block(void* ctx, Py_ssize_t b, double* out) noexcept nogil:
    """One block of a pass that sums into a vector: the serial loop into ``out`` (the pass's
    vector for block 0, a zeroed partial for the others: ``run_ordered`` adds them in order)."""
    cdef PassJob* job = <PassJob*> ctx
    return (<ObjectiveKernel> job.kernel)._pass_block(job, job.bounds[b], job.bounds[b + 1], out,
                                                      job.sums + 2 * b)


cdef void _block_bounds(RowData data, const Py_ssize_t* batch, Py_ssize_t size, Py_ssize_t B,
                        Py_ssize_t* bounds) noexcept nogil:
    """Split positions ``[0, size)`` into ``B`` non-empty blocks of about equal work. Dense rows
    cost the same: equal counts. Sparse rows cost ``ENTRY_WORK`` per stored entry plus
    ``ROW_WORK``: block ``b`` starts at the first position where the work before it reaches
    ``b / B`` of the total -- equal row counts left a thread idle for a third of a pass over
    documents of very unequal lengths. The bounds depend on the rows and ``B`` only (never on
    the threads), so the sums they reduce are the same bits on every thread count."""
    cdef Py_ssize_t t, b, i, lo, hi, mid
    cdef long long total = 0, cum = 0     # work units: whole numbers, exact in a double
    cdef const Py_ssize_t* ptr = data.row_ptr
    cdef bint rows_in_order = True        # position t is row t (no batch, or the identity)
    if not data.is_sparse:
        for b in range(B):
            block_bounds(size, B, b, &bounds[b], &lo)
        bounds[B] = size
        return
    # (CSR rows count their entries from indptr, other sparse rows through row_nnz)
    if batch == NULL and ptr != NULL:
        total = ENTRY_WORK * (ptr[size] - ptr[0]) + ROW_WORK * <long long> size
    else:
        for t in range(size):
            i = batch[t] if batch != NULL else t
            if i != t:
                rows_in_order = False
            total += ENTRY_WORK * (ptr[i + 1] - ptr[i] if ptr != NULL
                                   else data.row_nnz(i)) + ROW_WORK
    bounds[0] = 0
    if rows_in_order and ptr != NULL:
        # positions are rows 0, 1, ...: the work before position t + 1 is read off indptr, so
        # each bound is a binary search for the first t whose work reaches b / B of the total
        # (the same bounds as the loop below, without reading every row)
        for b in range(1, B):
            lo = 0
            hi = size - 1
            while lo < hi:
                mid = (lo + hi) // 2
                cum = ENTRY_WORK * (ptr[mid + 1] - ptr[0]) + ROW_WORK * <long long> (mid + 1)
                if <double> cum * B >= <double> total * b:
                    hi = mid
                else:
                    lo = mid + 1
            bounds[b] = lo + 1
    else:
        b = 1
        for t in range(size):
            if b >= B:
                break
            i = batch[t] if batch != NULL else t
            cum += ENTRY_WORK * (ptr[i + 1] - ptr[i] if ptr != NULL else data.row_nnz(i)) + ROW_WORK
            while b < B and <double> cum * B >= <double> total * b:
                bounds[b] = t + 1
                b += 1
    # every block keeps at least one position (a row heavier than a block's share)
    for b in range(1, B):
        lo = bounds[b - 1] + 1
        if bounds[b] < lo:
            bounds[b] = lo
    bounds[B] = size
    for b in range(B - 1, 0, -1):
        if bounds[b] > bounds[b + 1] - 1:
            bounds[b] = bounds[b + 1] - 1


def _block_bounds_for_tests(RowData data, batch, Py_ssize_t n_blocks):
    """The block bounds ``_block_bounds`` cuts for ``n_blocks`` blocks of the positions of
    ``batch`` (``None``: every row in order), as an array of ``n_blocks + 1`` positions (tests)."""
    cdef const Py_ssize_t[::1] bb
    cdef Py_ssize_t size = data.n_samples if batch is None else len(batch)
    if n_blocks < 1 or n_blocks > size:
        raise ValueError("n_blocks must be in [1, the batch size]")
    out = np.zeros(n_blocks + 1, dtype=np.intp)
    cdef Py_ssize_t[::1] o = out
    if batch is None:
        _block_bounds(data, NULL, size, n_blocks, &o[0])
        return out
    bb = np.ascontiguousarray(batch, dtype=np.intp)
    if size and (np.min(bb) < 0 or np.max(bb) >= data.n_samples):
        raise IndexError("batch index out of range")
    _block_bounds(data, &bb[0], size, n_blocks, &o[0])
    return out


cdef class ObjectiveKernel:
    """Base class of compiled objectives; subclasses override the ``cy_*`` methods."""

    #: The kernel runs in the compiled driver (its ``cy_*`` methods, without the GIL): the
    #: solver reads this declaration (``compiled`` of the kernel protocols in
    #: ``sqnopt.interfaces``, False when absent). A Python subclass that overrides only the
    #: Python-level methods declares ``compiled = False`` to run in the Python loop.
    compiled = True

    #: ``value(w)`` is a pure function of ``w`` over the bound in-memory rows: a finished run
    #: may leave ``F(w)`` to its result (``ObjectiveKernelLike``'s optional capability)
    deferred_value = True

    cdef int _bind(self, RowData data, double lam, Py_ssize_t n_blocks) except -1:
        if n_blocks < 1:
            raise ValueError("n_blocks must be >= 1")
        self.data = data
        self.lam = lam
        self.n_blocks = n_blocks
        self.n_params = n_blocks * data.dim
        self._row_entries = (<double> data.nnz / data.n_samples
                             + (1.0 if data.has_intercept else 0.0))
        # a dense row is read by the vector kernels, several entries to a unit of work
        self._read_work = (<double> data.nnz / data.n_samples
                           / (1 if data.is_sparse else DENSE_ENTRIES_PER_UNIT)
                           + (1.0 if data.has_intercept else 0.0))
        return 0

    def __dealloc__(self):
        free(self._ws)

    # ---- the parallel pass engine (see _base.pxd) ---------------------------------------------
    cdef double* _workspace(self, Py_ssize_t n) noexcept nogil:
        """At least ``n`` doubles of scratch owned by the kernel (NULL if memory is short)."""
        if n > self._ws_cap:
            free(self._ws)
            self._ws = <double*> malloc(max(n, 1) * sizeof(double))
            self._ws_cap = n if self._ws != NULL else 0
        return self._ws

    cdef Py_ssize_t _plan(self, Py_ssize_t size, double row_work, Py_ssize_t n_vec) noexcept nogil:
        """The blocks of a pass over ``size`` rows of ``row_work`` units each (the policy of
        ``sqnopt._parallel``)."""
        return plan_blocks(size, row_work, n_vec)

    cdef int _run_pass(self, PassJob* job) noexcept nogil:
        """Run ``job`` (its ``n_blocks`` planned): one block is the serial loop; more run on up
        to ``data.n_threads`` threads, each into its own slots -- its partial sums and, for a
        pass that sums into a vector, a zeroed partial vector from a small ring that
        ``run_ordered`` adds to the pass's vector in block order -- and the sums are added in
        block order, so the result does not depend on the threads."""
        cdef Py_ssize_t B = job.n_blocks, b, nv = job.n_vec, R = 0
        cdef int nt, code = 0
        cdef double* ws
        job.kernel = <void*> self
        if B <= 1:
            job.n_blocks = 1
            return self._pass_block(job, 0, job.size, job.out, job.result)
        nt = self.data.n_threads
        if nt > B:
            nt = <int> B
        if nv > 0:
            R = ring_size(nt, B, nv)
        # the ring's partial vectors, two sums per block, a status per block (as ints in the
        # space of B doubles), the B + 1 block bounds (in the space of B + 1 doubles)
        ws = self._workspace(R * nv + 4 * B + 1)
        if ws == NULL:
            return -2
        job.partials = ws
        job.sums = ws + R * nv
        job.status = <int*> (job.sums + 2 * B)
        job.bounds = <Py_ssize_t*> (job.sums + 3 * B)
        _block_bounds(self.data, job.batch, job.size, B, job.bounds)
        if nv > 0:
            run_ordered(nt, B, _pass_vector_block, job, job.out, nv, job.partials, R,
                        job.status)
        else:
            run_tasks(nt, B, _pass_task, job)
        for b in range(B):
            if job.status[b] != 0:
                code = job.status[b]
                break
        job.result[0] = job.sums[0]
        job.result[1] = job.sums[1]
        for b in range(1, B):
            job.result[0] += job.sums[2 * b]
            job.result[1] += job.sums[2 * b + 1]
        return code

    cdef int _pass_block(self, PassJob* job, Py_ssize_t t0, Py_ssize_t t1, double* out,
                    double* sums) noexcept nogil:
        """The serial loop of pass ``job.kind`` over positions ``[t0, t1)``; the base class
        implements none (-3)."""
        return -3

    cdef double cy_gradient(self, const double* w, const Py_ssize_t* batch, Py_ssize_t size,
                            double* grad) noexcept nogil:
        return NAN

    cdef double cy_value(self, const double* w) noexcept nogil:
        return NAN

    cdef double cy_full_gradient(self, const double* w, double* grad) noexcept nogil:
        return NAN

    cdef double cy_score_derivatives(self, const double* w, const Py_ssize_t* batch,
                                     Py_ssize_t size, double* coef) noexcept nogil:
        return NAN

    cdef void cy_rows_axpy(self, const Py_ssize_t* batch, Py_ssize_t size, const double* coef,
                           double scale, double* out) noexcept nogil:
        pass

    cdef void cy_rows_dot(self, const Py_ssize_t* batch, Py_ssize_t size, const double* v,
                          double* out) noexcept nogil:
        cdef Py_ssize_t t
        for t in range(size * self.n_scores):
            out[t] = NAN

    cdef void cy_rows_sqnorm(self, const Py_ssize_t* batch, Py_ssize_t size, const double* coef,
                             double* out) noexcept nogil:
        cdef Py_ssize_t t
        for t in range(size):
            out[t] = NAN

    cdef double cy_reg_gradient_value(self, const double* w, double* grad) noexcept nogil:
        return self._reg_gradient_value(w, grad)

    cdef double cy_reg_value(self, const double* w) noexcept nogil:
        return self._reg_value(w)

    cdef double cy_scores_loss(self, const Py_ssize_t* batch, Py_ssize_t size, const double* s,
                               double* coef) noexcept nogil:
        return NAN

    cdef double cy_scores_line(self, const Py_ssize_t* batch, Py_ssize_t size, const double* z,
                               const double* u, double a, double* d2) noexcept nogil:
        d2[0] = NAN
        return NAN

    cdef int cy_hessian_factors(self, const double* w, const Py_ssize_t* batch, Py_ssize_t size,
                                double* D) noexcept nogil:
        return -1

    cdef double cy_score_hessian_factor(self, Py_ssize_t i, double score) noexcept nogil:
        return NAN

    cdef void cy_hessian_product(self, const Py_ssize_t* batch, Py_ssize_t size, const double* D,
                                 const double* v, double* out) noexcept nogil:
        pass

    cdef int cy_hessian_diagonal(self, const Py_ssize_t* batch, Py_ssize_t size, const double* D,
                                 double* out) noexcept nogil:
        return -1

    def hessian_product(self, const double[::1] w, batch, const double[::1] v,
                        double[::1] out):
        """``out = (1/|B|) sum_{i in B} g_i Hess l_i(w) v + lam v_reg`` (Python entry; the
        compiled callers compute the factors once and reuse them for many vectors)."""
        if self.hess_size < 1:
            raise TypeError(f"{type(self).__name__} does not provide Hessian-vector products")
        self._check_w(w)
        b = np.ascontiguousarray(batch, dtype=np.intp)
        cdef const Py_ssize_t[::1] bb = b
        if v.shape[0] != self.n_params or out.shape[0] != self.n_params or bb.shape[0] < 1:
            raise ValueError("v and out must have n_params entries and the batch one index")
        D = np.zeros(bb.shape[0] * self.hess_size)
        cdef double[::1] dv = D
        if self.cy_hessian_factors(&w[0], &bb[0], bb.shape[0], &dv[0]) != 0:
            raise FloatingPointError("a score is not finite at w")
        self.cy_hessian_product(&bb[0], bb.shape[0], &dv[0], &v[0], &out[0])

    def hessian_diagonal(self, const double[::1] w, batch):
        """The diagonal of ``(1/|B|) sum_{i in B} g_i Hess l_i(w) + lam I_reg`` (Python entry
        of ``cy_hessian_diagonal``); ``TypeError`` when the objective does not provide it."""
        if self.hess_size < 1:
            raise TypeError(f"{type(self).__name__} does not provide Hessian-vector products")
        self._check_w(w)
        b = np.ascontiguousarray(batch, dtype=np.intp)
        cdef const Py_ssize_t[::1] bb = b
        if bb.shape[0] < 1:
            raise ValueError("batch must contain at least one index")
        D = np.zeros(bb.shape[0] * self.hess_size)
        out = np.zeros(self.n_params)
        cdef double[::1] dv = D
        cdef double[::1] ov = out
        if self.cy_hessian_factors(&w[0], &bb[0], bb.shape[0], &dv[0]) != 0:
            raise FloatingPointError("a score is not finite at w")
        if self.cy_hessian_diagonal(&bb[0], bb.shape[0], &dv[0], &ov[0]) != 0:
            raise TypeError(f"{type(self).__name__} does not provide the Hessian's diagonal")
        return out

    def hessian_factors(self, const double[::1] w, batch):
        """The score-Hessian factors of the samples ``batch`` at ``w`` (``hess_size`` doubles
        per sample, as ``cy_hessian_product`` reads them; margin losses: ``g_i l''(y_i s_i)``)."""
        if self.hess_size < 1:
            raise TypeError(f"{type(self).__name__} does not provide Hessian-vector products")
        self._check_w(w)
        b = np.ascontiguousarray(batch, dtype=np.intp)
        cdef const Py_ssize_t[::1] bb = b
        D = np.zeros(bb.shape[0] * self.hess_size)
        cdef double[::1] dv = D
        if bb.shape[0] and self.cy_hessian_factors(&w[0], &bb[0], bb.shape[0], &dv[0]) != 0:
            raise FloatingPointError("a score is not finite at w")
        return D

    def _score_batch(self, batch):
        """``batch`` as a contiguous index array for the score-derivative entries below, after
        checking that the kernel exposes them and that every index is a sample's."""
        if self.n_scores < 1:
            raise TypeError(f"{type(self).__name__} does not expose per-sample score "
                            "derivatives (n_scores = 0)")
        b = np.ascontiguousarray(batch, dtype=np.intp)
        if b.shape[0] and (b.min() < 0 or b.max() >= self.data.n_samples):
            raise IndexError(f"batch indices must lie in [0, {self.data.n_samples})")
        return b

    def _score_coef(self, coef, Py_ssize_t size):
        """``coef`` flattened, checked to hold ``n_scores`` numbers per batch index."""
        c = np.ascontiguousarray(coef, dtype=np.float64).reshape(-1)
        if c.shape[0] != size * self.n_scores:
            raise ValueError("coef must hold n_scores numbers per batch index")
        return c

    def score_derivatives(self, const double[::1] w, batch):
        """``(coef, weighted loss sum)``: the per-sample score derivatives of
        ``cy_score_derivatives`` as an array of shape ``(len(batch), n_scores)``."""
        b = self._score_batch(batch)
        self._check_w(w)
        cdef const Py_ssize_t[::1] bb = b
        out = np.zeros((bb.shape[0], self.n_scores))
        cdef double[:, ::1] o = out
        if bb.shape[0] == 0:
            return out, 0.0
        cdef double f = self.cy_score_derivatives(&w[0], &bb[0], bb.shape[0], &o[0, 0])
        return out, f

    def rows_axpy(self, batch, coef, double scale, double[::1] out):
        """``out += scale * sum_t sum_k coef[t, k] d score_k(x_{batch[t]}) / d w``."""
        b = self._score_batch(batch)
        c = self._score_coef(coef, b.shape[0])
        cdef const Py_ssize_t[::1] bb = b
        cdef const double[::1] cc = c
        if out.shape[0] != self.n_params:
            raise ValueError("out must have n_params entries")
        if bb.shape[0]:
            self.cy_rows_axpy(&bb[0], bb.shape[0], &cc[0], scale, &out[0])

    def rows_dot(self, batch, const double[::1] v):
        """``u[t, k] = d score_k(x_{batch[t]}) / d w . v``, shape ``(len(batch), n_scores)``:
        the transpose of :meth:`rows_axpy` (NaN where the kernel does not provide it)."""
        b = self._score_batch(batch)
        if v.shape[0] != self.n_params:
            raise ValueError("v must have n_params entries")
        cdef const Py_ssize_t[::1] bb = b
        out = np.zeros((bb.shape[0], self.n_scores))
        cdef double[:, ::1] o = out
        if bb.shape[0]:
            self.cy_rows_dot(&bb[0], bb.shape[0], &v[0], &o[0, 0])
        return out

    def rows_sqnorm(self, batch, coef):
        """``q[t] = ||sum_k coef[t, k] d score_k(x_{batch[t]}) / d w||^2``, shape
        ``(len(batch),)``: the squared norms of the samples' loss gradients given their score
        derivatives (NaN where the kernel does not provide them)."""
        b = self._score_batch(batch)
        c = self._score_coef(coef, b.shape[0])
        cdef const Py_ssize_t[::1] bb = b
        cdef const double[::1] cc = c
        out = np.zeros(bb.shape[0])
        cdef double[::1] o = out
        if bb.shape[0]:
            self.cy_rows_sqnorm(&bb[0], bb.shape[0], &cc[0], &o[0])
        return out

    def _scores_arg(self, scores, Py_ssize_t size, str name):
        s = np.ascontiguousarray(scores, dtype=np.float64).reshape(-1)
        if s.shape[0] != size * self.n_scores:
            raise ValueError(f"{name} must hold n_scores numbers per batch index")
        return s

    def scores_loss(self, batch, scores):
        """``(sum_t g_i loss_i(s_t), coef)`` from the given scores ``s`` (shape ``(len(batch),
        n_scores)``: the linear part of each sample's scores), with ``coef[t, k] = g_i d loss_i /
        d score_k``: :meth:`score_derivatives` without gathering the rows. NaN where the kernel
        does not provide it (``score_losses`` False)."""
        b = self._score_batch(batch)
        s = self._scores_arg(scores, b.shape[0], "scores")
        cdef const Py_ssize_t[::1] bb = b
        cdef const double[::1] ss = s
        out = np.zeros((bb.shape[0], self.n_scores))
        cdef double[:, ::1] o = out
        if bb.shape[0] == 0:
            return 0.0, out
        cdef double f = self.cy_scores_loss(&bb[0], bb.shape[0], &ss[0], &o[0, 0])
        return f, out

    def scores_line(self, batch, z, u, double a):
        """``(L'(a), L''(a))`` of ``L(a) = sum_t g_i loss_i(z_t - a u_t)`` (scores as in
        :meth:`scores_loss`); NaN where the kernel does not provide them."""
        b = self._score_batch(batch)
        zz = self._scores_arg(z, b.shape[0], "z")
        uu = self._scores_arg(u, b.shape[0], "u")
        cdef const Py_ssize_t[::1] bb = b
        cdef const double[::1] zv = zz
        cdef const double[::1] uv = uu
        cdef double d1, d2 = 0.0
        if bb.shape[0] == 0:
            return 0.0, 0.0
        d1 = self.cy_scores_line(&bb[0], bb.shape[0], &zv[0], &uv[0], a, &d2)
        return d1, d2

    def reg_gradient_value(self, const double[::1] w, double[::1] grad) -> float:
        """``grad += lam w_reg``; returns ``lam/2 ||w_reg||^2``."""
        self._check_w(w)
        if grad.shape[0] != self.n_params:
            raise ValueError("grad must have n_params entries")
        return self.cy_reg_gradient_value(&w[0], &grad[0])

    def reg_value(self, const double[::1] w) -> float:
        """``lam/2 ||w_reg||^2``, the objective's regulariser at ``w``."""
        self._check_w(w)
        return self.cy_reg_value(&w[0])

    cdef double _reg_value(self, const double* w) noexcept nogil:
        """(lam / 2) * ||w_reg||^2."""
        cdef Py_ssize_t k
        cdef Py_ssize_t dim = self.data.dim
        cdef double acc = 0.0
        for k in range(self.n_blocks):
            acc += sq_dot(w + k * dim, w + k * dim, self.data.n_features)
        return 0.5 * self.lam * acc

    cdef double _reg_gradient_value(self, const double* w, double* grad) noexcept nogil:
        """grad += lam * w_reg; returns (lam / 2) * ||w_reg||^2 (the values of ``_reg_gradient``
        and ``_reg_value``, bit for bit, in one pass over ``w``)."""
        cdef Py_ssize_t k
        cdef Py_ssize_t dim = self.data.dim
        cdef double acc = 0.0
        if self.lam == 0.0:
            return self._reg_value(w)
        for k in range(self.n_blocks):
            acc += sq_axpy_sqnorm(self.lam, w + k * dim, grad + k * dim, self.data.n_features)
        return 0.5 * self.lam * acc

    cdef void _reg_gradient(self, const double* w, double* grad) noexcept nogil:
        """grad += lam * w_reg (intercepts excluded)."""
        cdef Py_ssize_t k
        cdef Py_ssize_t dim = self.data.dim
        if self.lam == 0.0:
            return
        for k in range(self.n_blocks):
            sq_axpy(self.lam, w + k * dim, grad + k * dim, self.data.n_features)

    # ---- Python-level API (the kernel protocol of sqnopt.protocols) -------------------------
    def gradient(self, const double[::1] w, const Py_ssize_t[::1] batch, double[::1] out) -> float:
        """Minibatch gradient at ``w`` over the sample indices ``batch`` into ``out``.

        Returns the minibatch objective value.
        """
        self._check_w(w)
        self._check_w(out)
        cdef Py_ssize_t size = batch.shape[0]
        if size < 1:
            raise ValueError("batch must contain at least one index")
        for i in range(size):
            if batch[i] < 0 or batch[i] >= self.data.n_samples:
                raise IndexError(f"batch index {batch[i]} out of range")
        return self.cy_gradient(&w[0], &batch[0], size, &out[0])

    def batch_value(self, const double[::1] w, const Py_ssize_t[::1] batch) -> float:
        """The minibatch objective ``lam/2 ||w_reg||^2 + (1/|B|) sum_{i in B} g_i l_i(w)`` at
        ``w`` (the value :meth:`gradient` returns, up to rounding) without keeping a gradient.
        The base class evaluates the gradient into scratch (O(n_params)); a kernel with a cheaper
        form overrides it (margin losses: O(|B|) row dots and one read of ``w``)."""
        return self.gradient(w, batch, np.empty(self.n_params))

    def value(self, const double[::1] w) -> float:
        """Full objective ``F(w)``."""
        self._check_w(w)
        return self.cy_value(&w[0])

    def full_gradient(self, const double[::1] w, double[::1] out) -> float:
        """Full gradient of ``F`` at ``w`` into ``out``; returns ``F(w)``."""
        self._check_w(w)
        self._check_w(out)
        return self.cy_full_gradient(&w[0], &out[0])

    cdef int _check_w(self, const double[::1] w) except -1:
        if w.shape[0] != self.n_params:
            raise ValueError(f"parameter vector has length {w.shape[0]}, expected "
                             f"n_params={self.n_params}")
        return 0


cdef class MarginObjectiveKernel(ObjectiveKernel):
    """Loss of the margin ``m = y (x . w + b)`` for binary labels ``y`` in {-1, +1} -- or, for a
    kernel that declares ``real_targets`` (the regression losses), of the score
    ``s = x . w + b`` against a real target ``y`` through the score hooks (see ``_base.pxd``):
    the same passes, one score per row."""

    def __init__(self, RowData data, double lam):
        self._bind(data, lam, 1)
        self.n_scores = 1
        # Hessian-vector products for the losses that define a second derivative (not hinge)
        self.hess_size = 1 if isfinite(self.d2loss_dmargin2(0.5)) else 0
        self.score_hessian_factor = self.hess_size == 1
        self.score_losses = True

    def batch_value(self, const double[::1] w, const Py_ssize_t[::1] batch) -> float:
        """The minibatch objective at ``w`` from the margins of the batch rows and the
        regulariser (``cy_score_derivatives`` and one read of ``w``): no gradient vector."""
        self._check_w(w)
        cdef Py_ssize_t i, size = batch.shape[0]
        if size < 1:
            raise ValueError("batch must contain at least one index")
        for i in range(size):
            if batch[i] < 0 or batch[i] >= self.data.n_samples:
                raise IndexError(f"batch index {batch[i]} out of range")
        cdef double[::1] coef = np.empty(size)
        return (self.cy_score_derivatives(&w[0], &batch[0], size, &coef[0]) / size
                + self._reg_value(&w[0]))

    cdef double loss(self, double margin) noexcept nogil:
        return NAN

    cdef double dloss_dmargin(self, double margin) noexcept nogil:
        return NAN

    cdef double loss_and_dloss_dmargin(self, double margin, double* dloss_dmargin) noexcept nogil:
        dloss_dmargin[0] = self.dloss_dmargin(margin)
        return self.loss(margin)

    cdef double d2loss_dmargin2(self, double margin) noexcept nogil:
        return NAN

    cdef double dloss_and_d2loss(self, double margin, double* d2loss) noexcept nogil:
        d2loss[0] = self.d2loss_dmargin2(margin)
        return self.dloss_dmargin(margin)

    cdef double score_loss_and_dloss(self, double score, double y, double* dloss) noexcept nogil:
        dloss[0] = NAN
        return NAN

    cdef double score_d2loss(self, double score, double y) noexcept nogil:
        return NAN

    cdef double score_dloss_and_d2loss(self, double score, double y, double* d2) noexcept nogil:
        cdef double d
        self.score_loss_and_dloss(score, y, &d)
        d2[0] = self.score_d2loss(score, y)
        return d

    # ---- passes: each cy_* method plans its blocks and runs them through _run_pass; _pass_block
    # holds the serial loops (see _base.pxd) ---------------------------------------------------

    cdef int cy_hessian_factors(self, const double* w, const Py_ssize_t* batch, Py_ssize_t size,
                                double* D) noexcept nogil:
        cdef PassJob job
        job.kind = PASS_HESS_FACTORS
        job.batch = batch
        job.size = size
        job.w = w
        job.cout = D
        job.n_vec = 0
        job.out = NULL
        job.n_blocks = self._plan(size, self._read_work + ROW_WORK, 0)
        return -1 if self._run_pass(&job) != 0 else 0

    cdef double cy_score_hessian_factor(self, Py_ssize_t i, double score) noexcept nogil:
        if self.real_targets:
            return self.data.grad_weight[i] * self.score_d2loss(score, self.data.y[i])
        return self.data.grad_weight[i] * self.d2loss_dmargin2(self.data.y[i] * score)

    cdef void cy_hessian_product(self, const Py_ssize_t* batch, Py_ssize_t size, const double* D,
                                 const double* v, double* out) noexcept nogil:
        # out = (1/size) sum_t D_t (x_t . v) x_t + lam v_reg   (y_t^2 = 1)
        cdef PassJob job
        memset(out, 0, self.n_params * sizeof(double))
        job.kind = PASS_HESS_PRODUCT
        job.batch = batch
        job.size = size
        job.cin = D
        job.v = v
        job.scale = 1.0 / size
        job.n_vec = self.n_params
        job.out = out
        job.n_blocks = self._plan(size, 2 * self._read_work + 1, self.n_params)
        self._run_pass(&job)
        self._reg_gradient(v, out)

    cdef int cy_hessian_diagonal(self, const Py_ssize_t* batch, Py_ssize_t size, const double* D,
                                 double* out) noexcept nogil:
        # out_j = (1/size) sum_t D_t x_tj^2 + lam (j regularised); the intercept's x = 1
        cdef PassJob job
        cdef Py_ssize_t k
        memset(out, 0, self.n_params * sizeof(double))
        job.kind = PASS_HESS_DIAG
        job.batch = batch
        job.size = size
        job.cin = D
        job.scale = 1.0 / size
        job.n_vec = self.n_params
        job.out = out
        job.n_blocks = self._plan(size, self._read_work + 1, self.n_params)
        self._run_pass(&job)
        for k in range(self.data.n_features):
            out[k] += self.lam
        return 0

    cdef double cy_gradient(self, const double* w, const Py_ssize_t* batch, Py_ssize_t size,
                            double* grad) noexcept nogil:
        cdef PassJob job
        memset(grad, 0, self.n_params * sizeof(double))
        job.kind = PASS_GRADIENT
        job.batch = batch
        job.size = size
        job.weights = self.data.grad_weight
        job.w = w
        # w = 0, where solves start: every score is 0 (the intercept's too), no dot to take
        job.flag = _all_zero(w, self.n_params)
        job.scale = 1.0 / size
        job.n_vec = self.n_params
        job.out = grad
        job.n_blocks = self._plan(size, 2 * self._read_work + ROW_WORK,
                                  self.n_params)
        self._run_pass(&job)
        return job.result[0] * job.scale + self._reg_gradient_value(w, grad)

    cdef double cy_score_derivatives(self, const double* w, const Py_ssize_t* batch,
                                     Py_ssize_t size, double* coef) noexcept nogil:
        # score x_i . w + b, margin y_i * score: d loss / d score = y_i * dloss_dmargin
        cdef PassJob job
        job.kind = PASS_SCORE_DERIV
        job.batch = batch
        job.size = size
        job.w = w
        job.cout = coef
        job.n_vec = 0
        job.out = NULL
        job.n_blocks = self._plan(size, self._read_work + ROW_WORK, 0)
        self._run_pass(&job)
        return job.result[0]

    cdef double cy_scores_loss(self, const Py_ssize_t* batch, Py_ssize_t size, const double* s,
                               double* coef) noexcept nogil:
        # cy_score_derivatives' arithmetic on the given scores
        cdef PassJob job
        job.kind = PASS_SCORES_LOSS
        job.batch = batch
        job.size = size
        job.cin = s
        job.cout = coef
        job.n_vec = 0
        job.out = NULL
        job.n_blocks = self._plan(size, ROW_WORK, 0)
        self._run_pass(&job)
        return job.result[0]

    cdef double cy_scores_line(self, const Py_ssize_t* batch, Py_ssize_t size, const double* z,
                               const double* u, double a, double* d2) noexcept nogil:
        # margin m = y (z - a u): dm/da = -y u, so d loss / da = -y u l'(m), d2 = u^2 l''(m)
        cdef PassJob job
        job.kind = PASS_SCORES_LINE
        job.batch = batch
        job.size = size
        job.cin = z
        job.cin2 = u
        job.a = a
        job.n_vec = 0
        job.out = NULL
        job.n_blocks = self._plan(size, ROW_WORK, 0)
        self._run_pass(&job)
        d2[0] = job.result[1]
        return job.result[0]

    cdef void cy_rows_axpy(self, const Py_ssize_t* batch, Py_ssize_t size, const double* coef,
                           double scale, double* out) noexcept nogil:
        cdef PassJob job
        job.kind = PASS_ROWS_AXPY
        job.batch = batch
        job.size = size
        job.cin = coef
        job.scale = scale
        job.n_vec = self.n_params
        job.out = out
        job.n_blocks = self._plan(size, self._read_work + 1, self.n_params)
        self._run_pass(&job)

    cdef void cy_rows_dot(self, const Py_ssize_t* batch, Py_ssize_t size, const double* v,
                          double* out) noexcept nogil:
        cdef PassJob job
        job.kind = PASS_ROWS_DOT
        job.batch = batch
        job.size = size
        job.v = v
        job.cout = out
        job.n_vec = 0
        job.out = NULL
        job.n_blocks = self._plan(size, self._read_work + 1, 0)
        self._run_pass(&job)

    cdef void cy_rows_sqnorm(self, const Py_ssize_t* batch, Py_ssize_t size, const double* coef,
                             double* out) noexcept nogil:
        # the gradient of sample i is coef_t [x_i, 1]
        cdef PassJob job
        job.kind = PASS_ROWS_SQNORM
        job.batch = batch
        job.size = size
        job.cin = coef
        job.cout = out
        job.n_vec = 0
        job.out = NULL
        job.n_blocks = self._plan(size, self._read_work + 1, 0)
        self._run_pass(&job)

    cdef double cy_value(self, const double* w) noexcept nogil:
        cdef PassJob job
        cdef Py_ssize_t N = self.data.n_samples
        job.kind = PASS_VALUE
        job.batch = NULL
        job.size = N
        job.weights = self.data.sample_weight
        job.w = w
        # w = 0, where solves start: every margin is 0, no row needs to be read (the same sum,
        # term by term and block by block, as the general loop's)
        job.flag = _all_zero(w, self.n_params)
        job.n_vec = 0
        job.out = NULL
        job.n_blocks = self._plan(N, self._read_work + ROW_WORK, 0)
        self._run_pass(&job)
        return job.result[0] / N + self._reg_value(w)

    cdef double cy_full_gradient(self, const double* w, double* grad) noexcept nogil:
        cdef PassJob job
        cdef Py_ssize_t N = self.data.n_samples
        memset(grad, 0, self.n_params * sizeof(double))
        job.kind = PASS_FULL_GRADIENT
        job.batch = NULL
        job.size = N
        job.weights = self.data.sample_weight
        job.w = w
        job.scale = 1.0 / N
        job.n_vec = self.n_params
        job.out = grad
        job.n_blocks = self._plan(N, 2 * self._read_work + ROW_WORK,
                                  self.n_params)
        self._run_pass(&job)
        return job.result[0] * job.scale + self._reg_gradient_value(w, grad)

    cdef int _pass_block(self, PassJob* job, Py_ssize_t t0, Py_ssize_t t1, double* out,
                    double* sums) noexcept nogil:
        """The serial loops of the passes over positions ``[t0, t1)``: each row's loss through
        the margin methods at ``m = y_i z`` or, with ``real_targets``, the score hooks at
        ``(z, y_i)`` (``z = x_i . w + b``; a predictable branch per row)."""
        cdef int kind = job.kind
        cdef bint real_y = self.real_targets
        cdef const Py_ssize_t* batch = job.batch
        cdef Py_ssize_t t, i, p, nnz, k, nnz_next = 0
        cdef Py_ssize_t nf = self.data.n_features
        cdef bint intercept = self.data.has_intercept
        cdef const double* d64 = NULL
        cdef const float* d32 = NULL
        cdef const int* ind = NULL
        cdef const double* next64 = NULL
        cdef const float* next32 = NULL
        cdef const int* next_ind = NULL
        cdef const double* w = job.w
        cdef const double* cin = job.cin
        cdef const double* u
        cdef double* cout = job.cout
        cdef const double* y = self.data.y
        cdef const double* cw = job.weights
        cdef double inv = job.scale
        cdef double z, m, yi, gi, dl, h, c, x, ut, a, s1 = 0.0, total = 0.0
        cdef bint dense = not self.data.is_sparse
        # a batch whose rows are in no order gets hints ahead (see _rows.pyx, HINT_AHEAD)
        cdef bint hint = batch_scattered(batch, t0, t1)
        # the passes that score a row and add a multiple of it to a vector hint rows in order
        # too on large data (_rows.pyx, HINT_ORDERED_BYTES)
        cdef bint ordered = not hint and hint_in_order(self.data)
        if ordered and (kind == PASS_GRADIENT or kind == PASS_HESS_PRODUCT):
            hint = True
        sums[0] = 0.0
        sums[1] = 0.0
        if hint:
            hint_batch_start(self.data, batch, t0, t1)
        if kind == PASS_GRADIENT:
            # The rows through their views: one virtual call per row for the row (row_view) and
            # one for the loss, instead of one per operation (hint, dot, loss, derivative, axpy).
            # Same arithmetic as row_dot / row_axpy, so the same bits (tests/kernels/test_vec.py).
            if t0 < t1:
                nnz = self.data.row_view(batch[t0], &d64, &d32, &ind)
            for t in range(t0, t1):
                i = batch[t]
                if hint:
                    hint_batch_ahead(self.data, batch, t, t1, dense)
                if t + 1 < t1:    # the next row's view, and its hint while this row is used
                    nnz_next = self.data.row_view(batch[t + 1], &next64, &next32, &next_ind)
                    view_prefetch_rest(next64, next32, next_ind, nnz_next)
                yi = y[i]
                gi = cw[i]
                if job.flag:
                    z = 0.0
                else:
                    z = view_dot(d64, d32, ind, nnz, w)
                    if intercept:
                        z += w[nf]
                if real_y:
                    total += gi * self.score_loss_and_dloss(z, yi, &dl)
                    c = inv * gi * dl
                else:
                    total += gi * self.loss_and_dloss_dmargin(yi * z, &dl)
                    c = inv * gi * yi * dl
                if c != 0.0:      # hinge-type losses: no work for samples beyond the margin
                    view_axpy(d64, d32, ind, nnz, c, out)
                    if intercept:
                        out[nf] += c
                d64 = next64
                d32 = next32
                ind = next_ind
                nnz = nnz_next
            sums[0] = total
        elif kind == PASS_FULL_GRADIENT:
            if ordered:
                hint_rows_start(self.data, t0, t1)
            for i in range(t0, t1):
                if ordered:
                    hint_rows_ahead(self.data, i, t1, dense)
                yi = y[i]
                gi = cw[i]
                z = self.data.row_dot(i, w)
                if real_y:
                    total += gi * self.score_loss_and_dloss(z, yi, &dl)
                    c = inv * gi * dl
                else:
                    total += gi * self.loss_and_dloss_dmargin(yi * z, &dl)
                    c = inv * gi * yi * dl
                if c != 0.0:
                    self.data.row_axpy(i, c, out)
            sums[0] = total
        elif kind == PASS_VALUE:
            if job.flag:
                for i in range(t0, t1):
                    total += cw[i] * (self.score_loss_and_dloss(0.0, y[i], &dl) if real_y
                                      else self.loss(y[i] * 0.0))
            else:
                for i in range(t0, t1):
                    z = self.data.row_dot(i, w)
                    total += cw[i] * (self.score_loss_and_dloss(z, y[i], &dl) if real_y
                                      else self.loss(y[i] * z))
            sums[0] = total
        elif kind == PASS_SCORE_DERIV:
            cw = self.data.grad_weight
            for t in range(t0, t1):
                if hint:
                    hint_batch_ahead(self.data, batch, t, t1, dense)
                i = batch[t]
                yi = y[i]
                gi = cw[i]
                z = self.data.row_dot(i, w)
                if real_y:
                    total += gi * self.score_loss_and_dloss(z, yi, &dl)
                    cout[t] = gi * dl
                else:
                    total += gi * self.loss_and_dloss_dmargin(yi * z, &dl)
                    cout[t] = gi * yi * dl
            sums[0] = total
        elif kind == PASS_SCORES_LOSS:
            cw = self.data.grad_weight
            for t in range(t0, t1):
                i = batch[t]
                yi = y[i]
                gi = cw[i]
                if real_y:
                    total += gi * self.score_loss_and_dloss(cin[t], yi, &dl)
                    c = gi * dl
                else:
                    total += gi * self.loss_and_dloss_dmargin(yi * cin[t], &dl)
                    c = gi * yi * dl
                if cout != NULL:
                    cout[t] = c
            sums[0] = total
        elif kind == PASS_SCORES_LINE:
            cw = self.data.grad_weight
            u = job.cin2
            a = job.a
            for t in range(t0, t1):
                ut = u[t]
                if ut == 0.0:
                    continue
                i = batch[t]
                yi = y[i]
                gi = cw[i]
                if real_y:
                    dl = self.score_dloss_and_d2loss(cin[t] - a * ut, yi, &h)
                    s1 -= gi * dl * ut
                else:
                    dl = self.dloss_and_d2loss(yi * (cin[t] - a * ut), &h)
                    s1 -= gi * yi * dl * ut
                total += gi * h * (ut * ut)
            sums[0] = s1
            sums[1] = total
        elif kind == PASS_ROWS_AXPY:
            for t in range(t0, t1):
                if hint:
                    hint_batch_ahead(self.data, batch, t, t1, dense)
                if cin[t] != 0.0:
                    self.data.row_axpy(batch[t], inv * cin[t], out)
        elif kind == PASS_ROWS_DOT:
            for t in range(t0, t1):
                if hint:
                    hint_batch_ahead(self.data, batch, t, t1, dense)
                cout[t] = self.data.row_dot(batch[t], job.v)
        elif kind == PASS_ROWS_SQNORM:
            for t in range(t0, t1):
                if hint:
                    hint_batch_ahead(self.data, batch, t, t1, dense)
                cout[t] = (cin[t] * cin[t]) * self.data.row_sqnorm(batch[t])
        elif kind == PASS_HESS_FACTORS:
            cw = self.data.grad_weight
            for t in range(t0, t1):
                if hint:
                    hint_batch_ahead(self.data, batch, t, t1, dense)
                i = batch[t]
                z = self.data.row_dot(i, w)
                if real_y:      # (a score past the loss's domain: Poisson's exp overflow)
                    h = self.score_d2loss(z, y[i])
                    if not (isfinite(z) and isfinite(h)):
                        return -1
                    cout[t] = cw[i] * h
                    continue
                m = y[i] * z
                if not isfinite(m):
                    return -1
                cout[t] = cw[i] * self.d2loss_dmargin2(m)
        elif kind == PASS_HESS_PRODUCT:
            for t in range(t0, t1):
                if hint:
                    hint_batch_ahead(self.data, batch, t, t1, dense)
                if cin[t] != 0.0:
                    c = inv * cin[t] * self.data.row_dot(batch[t], job.v)
                    if c != 0.0:
                        self.data.row_axpy(batch[t], c, out)
        elif kind == PASS_HESS_DIAG:
            for t in range(t0, t1):
                if hint:
                    hint_batch_ahead(self.data, batch, t, t1, dense)
                c = inv * cin[t]
                if c == 0.0:
                    continue
                nnz = self.data.row_view(batch[t], &d64, &d32, &ind)
                for p in range(nnz):
                    k = p if ind == NULL else ind[p]
                    x = d64[p] if d64 != NULL else d32[p]
                    out[k] += c * (x * x)
                if intercept:
                    out[nf] += c
        else:
            return -3
        return 0

    def py_loss(self, margin):
        """``loss(m)`` elementwise (float or array)."""
        m = np.asarray(margin, dtype=np.float64)
        out = np.empty_like(m)
        cdef double[::1] o = out.reshape(-1)
        cdef const double[::1] mm = np.ascontiguousarray(m).reshape(-1)
        for i in range(mm.shape[0]):
            o[i] = self.loss(mm[i])
        return out if out.ndim else float(out)

    def py_dloss_dmargin(self, margin):
        """``d loss / d m`` elementwise (float or array)."""
        m = np.asarray(margin, dtype=np.float64)
        out = np.empty_like(m)
        cdef double[::1] o = out.reshape(-1)
        cdef const double[::1] mm = np.ascontiguousarray(m).reshape(-1)
        for i in range(mm.shape[0]):
            o[i] = self.dloss_dmargin(mm[i])
        return out if out.ndim else float(out)

    def py_loss_and_dloss_dmargin(self, margin):
        """``(loss(m), d loss / d m)`` elementwise through the combined call the gradients use
        (float or array each); equal to ``py_loss`` and ``py_dloss_dmargin`` bit for bit."""
        cdef double[::1] o1
        cdef double[::1] d1
        cdef const double[::1] m1
        cdef Py_ssize_t j
        cdef double d
        if type(margin) is float:
            return self.loss_and_dloss_dmargin(margin, &d), d
        if (type(margin) is np.ndarray and margin.ndim == 1 and margin.dtype == np.float64
                and margin.flags.c_contiguous):
            # the common case (a batch's margins), without the general path's conversions
            m1 = margin
            out1 = np.empty(m1.shape[0])
            dout1 = np.empty(m1.shape[0])
            o1 = out1
            d1 = dout1
            for j in range(m1.shape[0]):
                o1[j] = self.loss_and_dloss_dmargin(m1[j], &d1[j])
            return out1, dout1
        m = np.asarray(margin, dtype=np.float64)
        out = np.empty_like(m)
        dout = np.empty_like(m)
        cdef double[::1] o = out.reshape(-1)
        cdef double[::1] do = dout.reshape(-1)
        cdef const double[::1] mm = np.ascontiguousarray(m).reshape(-1)
        for i in range(mm.shape[0]):
            o[i] = self.loss_and_dloss_dmargin(mm[i], &do[i])
        return (out, dout) if out.ndim else (float(out), float(dout))
