# cython: language_level=3
"""Compiled exact line search in score space (see :class:`sqnopt.steps.ScoreLine`).

For an objective whose per-sample losses depend on ``w`` only through linear scores, the batch
objective along the direction ``-d`` from ``w`` is, with ``z_t`` the scores of sample
``i = batch[t]`` at ``w`` and ``u_t`` its scores at ``d``,

    phi(a) = f_B(w - a d) = (1/|B|) sum_t g_i loss_i(z_t - a u_t) + (lam/2) ||w_reg - a d_reg||^2

so once ``u`` is gathered every value and derivative of ``phi`` costs ``O(|B| n_scores)``
without reading a row (the cheap function evaluations of trust-region Newton for linear models:
Lin, Weng & Keerthi 2008, Sec. 3). The search

1. minimises ``phi`` by a safeguarded Newton iteration on ``phi'`` (Nocedal & Wright 2006,
   Sec. 3.5 and Ch. 11: Newton steps kept inside the bracket ``[lo, hi]`` of the minimiser of
   the convex ``phi``, bisection or doubling otherwise), from ``a = eps0``, until
   ``|phi'(a)| <= rtol |phi'(0)|`` or ``max_iter`` evaluations;
2. accepts ``a`` under Armijo's sufficient decrease (and a strict decrease unless ``g'd = 0``),
   backtracking by ``shrink`` in score space when it fails -- the acceptance and the failure
   semantics of :class:`~sqnopt.steps.Armijo` (``NaN``: no step, e.g. at a minimiser to working
   precision; an ascent direction fails without a trial);
3. forms ``f_next`` and ``g_next`` from the scores ``z - a u`` (one scatter of the rows), and
   keeps those scores by sample: the next search from ``w_next`` (compared entry by entry) gathers
   only ``u``.

A search therefore reads the rows twice (gather ``u``, scatter ``g_next``), as one gradient
evaluation does, plus one gather of ``z`` when the scores at ``w`` are not cached; ``n_evals``
counts one gradient evaluation for the former and one more for the latter.
"""

import numpy as np

from libc.math cimport INFINITY, NAN, fabs, isfinite
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset

from sqnopt._vec cimport sq_dot, sq_step_allfinite
from sqnopt.checkpoint import CheckpointError, state_array, state_value
from sqnopt.objectives._base cimport ObjectiveKernel
from sqnopt.steps._base cimport ArmijoKernel, StepKernel


cdef inline bint _all_zero(const double* w, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t j
    for j in range(n):
        if w[j] != 0.0:
            return False
    return True


cdef class ScoreLineKernel(StepKernel):
    """Exact line search in score space; ``cy_step_size`` is the first trial ``eps0``."""

    def __init__(self, double eps0, double c1, double shrink, Py_ssize_t max_backtracks,
                 double rtol, Py_ssize_t max_iter):
        self.eps0 = eps0
        self.c1 = c1
        self.shrink = shrink
        self.max_backtracks = max_backtracks
        self.rtol = rtol
        self.max_iter = max_iter
        self.line_search = True
        self.fallback = ArmijoKernel(eps0, c1, shrink, max_backtracks)
        self._pend_count = -1

    def __dealloc__(self):
        self._release()
        self._drop_pending()

    cdef void _drop_pending(self) noexcept nogil:
        free(self._pend_idx)
        free(self._pend_s)
        free(self._pend_w)
        self._pend_idx = NULL
        self._pend_s = NULL
        self._pend_w = NULL
        self._pend_count = -1

    cdef void _load_pending(self, ObjectiveKernel obj) noexcept nogil:
        """Take the restored scores into the cache if they are this objective's: same sizes,
        and each within rounding of the scores gathered from the rows now (one gather, not
        counted: the restore's, not the search's; other data of the same shape fails it)."""
        cdef Py_ssize_t j, k, c = self._pend_count, K = self._K
        cdef double a, b
        cdef bint ok = (self._pend_n == self._n and self._pend_K == K)
        if ok:
            for j in range(c):
                if self._pend_idx[j] < 0 or self._pend_idx[j] >= self._n_samples:
                    ok = False
                    break
        if ok and c > 0:
            obj.cy_rows_dot(self._pend_idx, c, self._pend_w, self._zn)
            for j in range(c * K):
                a = self._zn[j]
                b = self._pend_s[j]
                if not (fabs(a - b) <= 1e-9 * (1.0 + fabs(b))):
                    ok = False
                    break
        if ok:
            self._gen += 1
            for j in range(c):
                for k in range(K):
                    self._cache_s[self._pend_idx[j] * K + k] = self._pend_s[j * K + k]
                self._stamp[self._pend_idx[j]] = self._gen
            memcpy(self._cache_w, self._pend_w, self._n * sizeof(double))
            self._have = True
        self._drop_pending()

    cdef void _release(self) noexcept nogil:
        free(self._cache_s)
        free(self._stamp)
        free(self._cache_w)
        free(self._z)
        free(self._u)
        free(self._zn)
        free(self._coef)
        self._cache_s = NULL
        self._stamp = NULL
        self._cache_w = NULL
        self._z = self._u = self._zn = self._coef = NULL
        self._obj = NULL
        self._have = False
        self._cap = 0

    cdef int _ensure(self, ObjectiveKernel obj, Py_ssize_t size, Py_ssize_t n) noexcept nogil:
        """Buffers for ``obj`` (re-made, and the cache dropped, for another objective); 0, or -1
        when memory is short."""
        cdef Py_ssize_t K = obj.n_scores, N = obj.data.n_samples
        if self._obj != <const void*> obj or self._K != K or self._n != n \
                or self._n_samples != N or size > self._cap:
            self._release()
            self._cache_s = <double*> malloc(N * K * sizeof(double))
            self._stamp = <long long*> malloc(N * sizeof(long long))
            self._cache_w = <double*> malloc(n * sizeof(double))
            self._z = <double*> malloc(N * K * sizeof(double))
            self._u = <double*> malloc(N * K * sizeof(double))
            self._zn = <double*> malloc(N * K * sizeof(double))
            self._coef = <double*> malloc(N * K * sizeof(double))
            if (self._cache_s == NULL or self._stamp == NULL or self._cache_w == NULL
                    or self._z == NULL or self._u == NULL or self._zn == NULL
                    or self._coef == NULL):
                self._release()
                return -1
            memset(self._stamp, 0, N * sizeof(long long))
            self._gen = 0
            self._obj = <const void*> obj
            with gil:
                self._obj_ref = obj     # (a new objective, e.g. after Solver.rebind, differs)
            self._K = K
            self._n = n
            self._n_samples = N
            self._cap = N
        return 0

    cdef bint _load(self, const double* w, const Py_ssize_t* batch, Py_ssize_t size) noexcept nogil:
        """The cached scores of the batch into ``_z`` if they are those at ``w``."""
        cdef Py_ssize_t t, k, K = self._K
        if not self._have:
            return False
        for t in range(self._n):
            if w[t] != self._cache_w[t]:
                return False
        for t in range(size):
            if self._stamp[batch[t]] != self._gen:
                return False
        for t in range(size):
            for k in range(K):
                self._z[t * K + k] = self._cache_s[batch[t] * K + k]
        return True

    cdef void _store(self, const double* w_next, const Py_ssize_t* batch,
                     Py_ssize_t size) noexcept nogil:
        cdef Py_ssize_t t, k, K = self._K
        self._gen += 1
        for t in range(size):
            for k in range(K):
                self._cache_s[batch[t] * K + k] = self._zn[t * K + k]
            self._stamp[batch[t]] = self._gen
        memcpy(self._cache_w, w_next, self._n * sizeof(double))
        self._have = True

    cdef double _minimise(self, ObjectiveKernel obj, const Py_ssize_t* batch, Py_ssize_t size,
                          double gd, double rb, double rc) noexcept nogil:
        """Safeguarded Newton iteration on ``phi'(a) = L'(a)/|B| + a rc - rb`` (``rc = lam
        ||d_reg||^2``, ``rb = lam w_reg . d_reg``) from ``eps0``; ``phi'(0) = -gd < 0``."""
        cdef double a = self.eps0, lo = 0.0, hi = INFINITY, inv = 1.0 / size
        cdef double d1, d2, p1, p2, nxt
        cdef Py_ssize_t it
        for it in range(self.max_iter):
            d1 = obj.cy_scores_line(batch, size, self._z, self._u, a, &d2)
            self.n_line_evals += 1
            p1 = d1 * inv + a * rc - rb
            p2 = d2 * inv + rc
            if not isfinite(p1):         # scores overflowed this far out: the minimiser is closer
                hi = a
                a = lo + 0.5 * (hi - lo)
                continue
            if fabs(p1) <= self.rtol * gd:
                return a
            if p1 < 0.0:
                lo = a
            else:
                hi = a
            if hi < INFINITY and not (hi - lo > 1e-12 * hi):
                return a                 # the bracket has collapsed to rounding
            nxt = a - p1 / p2 if (isfinite(p2) and p2 > 0.0) else NAN
            if not (nxt > lo and nxt < hi):
                nxt = lo + 0.5 * (hi - lo) if hi < INFINITY else 2.0 * a
            a = nxt
        return a

    cdef double cy_step_size(self, Py_ssize_t t) noexcept nogil:
        return self.eps0

    cdef double cy_search(self, ObjectiveKernel obj, const double* w, const Py_ssize_t* batch,
                          Py_ssize_t size, double f0, const double* g, const double* d,
                          double* w_next, double* g_next, double* f_next, Py_ssize_t n,
                          Py_ssize_t* n_evals) noexcept nogil:
        cdef double gd = sq_dot(g, d, n), a = self.eps0, f, L, rb = 0.0, rc = 0.0
        cdef double inv = 1.0 / size
        cdef Py_ssize_t j, k, m, evals = 1
        n_evals[0] = 0
        if not (gd >= 0.0):          # an ascent direction (or NaN): no step can be accepted
            return NAN
        if not obj.score_losses or obj.n_scores < 1 or self._ensure(obj, size, n) != 0:
            return self.fallback.cy_search(obj, w, batch, size, f0, g, d, w_next, g_next,
                                           f_next, n, n_evals)
        m = size * self._K
        if self._pend_count >= 0:
            self._load_pending(obj)
        if not self._load(w, batch, size):
            if _all_zero(w, n):      # where solves start: every score is 0, nothing to read
                memset(self._z, 0, m * sizeof(double))
            else:
                obj.cy_rows_dot(batch, size, w, self._z)
                self.n_score_gathers += 1
                evals += 1
        obj.cy_rows_dot(batch, size, d, self._u)
        n_evals[0] = evals
        if gd > 0.0:
            memset(g_next, 0, n * sizeof(double))
            rc = 2.0 * obj.cy_reg_gradient_value(d, g_next)     # lam ||d_reg||^2
            rb = sq_dot(g_next, w, n)                           # lam d_reg . w_reg
            a = self._minimise(obj, batch, size, gd, rb, rc)
        for k in range(self.max_backtracks + 1):
            if sq_step_allfinite(w, a, d, w_next, n):
                for j in range(m):
                    self._zn[j] = self._z[j] - a * self._u[j]
                L = obj.cy_scores_loss(batch, size, self._zn, self._coef)
                memset(g_next, 0, n * sizeof(double))
                f = L * inv + obj.cy_reg_gradient_value(w_next, g_next)
                if isfinite(f) and f <= f0 - self.c1 * a * gd and (f < f0 or gd == 0.0):
                    obj.cy_rows_axpy(batch, size, self._coef, inv, g_next)
                    self._store(w_next, batch, size)
                    f_next[0] = f
                    return a
            a = a * self.shrink
        return NAN

    def search(self, objective, const double[::1] w, batch, double f0, const double[::1] g,
               const double[::1] d, double[::1] w_next, double[::1] g_next):
        """The search of the Python loop: ``cy_search`` for a compiled objective kernel, Armijo's
        backtracking (:class:`~sqnopt.steps.ArmijoKernel`, same settings) for any other.
        Returns ``(eps or NaN, f_B(w_next), gradient evaluations)``."""
        cdef Py_ssize_t evals = 0, n = w.shape[0]
        cdef double f = NAN, eps
        cdef ObjectiveKernel obj
        cdef const Py_ssize_t[::1] bb
        if not isinstance(objective, ObjectiveKernel):
            return self.fallback.search(objective, w, batch, f0, g, d, w_next, g_next)
        obj = objective
        b = np.ascontiguousarray(batch, dtype=np.intp)
        bb = b
        if (bb.shape[0] < 1 or g.shape[0] != n or d.shape[0] != n or w_next.shape[0] != n
                or g_next.shape[0] != n or n != obj.n_params):
            raise ValueError("w, g, d, w_next and g_next must have n_params entries and the "
                             "batch one index")
        if b.min() < 0 or b.max() >= obj.data.n_samples:
            raise IndexError(f"batch indices must lie in [0, {obj.data.n_samples})")
        eps = self.cy_search(obj, &w[0], &bb[0], bb.shape[0], f0, &g[0], &d[0], &w_next[0],
                             &g_next[0], &f, n, &evals)
        return eps, (f if isfinite(eps) else NAN), evals

    def get_state(self) -> dict:
        """The cache of scores at the last accepted point (its copy of the point, the samples
        whose scores are kept and those scores) and the diagnostic counters: a restored solve
        takes the same steps, bit for bit, as the uninterrupted one."""
        cdef Py_ssize_t i, k, j = 0, K = self._K
        state = {"n_line_evals": int(self.n_line_evals),
                 "n_score_gathers": int(self.n_score_gathers)}
        if self._pend_count >= 0:           # restored, not yet searched: pass it on
            state.update(w=np.array(<double[:self._pend_n]> self._pend_w) if self._pend_n else
                         np.zeros(0), n_scores=int(self._pend_K),
                         index=np.array([self._pend_idx[i] for i in range(self._pend_count)],
                                        dtype=np.int64),
                         scores=np.array([self._pend_s[i]
                                          for i in range(self._pend_count * self._pend_K)]))
            return state
        if not self._have:
            return state
        index = np.array([i for i in range(self._n_samples) if self._stamp[i] == self._gen],
                         dtype=np.int64)
        scores = np.empty(index.shape[0] * K)
        for i in index:
            for k in range(K):
                scores[j] = self._cache_s[i * K + k]
                j += 1
        state.update(w=np.array(<double[:self._n]> self._cache_w), n_scores=int(K),
                     index=index, scores=scores)
        return state

    def set_state(self, state) -> None:
        """Restore what :meth:`get_state` returned. The scores are taken at the next search if
        they belong to its objective (sizes, and one gather of them that must agree to
        rounding); else that search gathers them anew."""
        if not isinstance(state, dict):
            raise TypeError(f"set_state expects a dict, got {type(state).__name__}")
        self._have = False
        self._drop_pending()
        if not state:               # (the empty state of a kernel that saved none)
            return
        self.n_line_evals = state_value(state, "n_line_evals", int, self, lo=0)
        self.n_score_gathers = state_value(state, "n_score_gathers", int, self, lo=0)
        if "w" not in state:
            return
        w = state_array(state, "w", self, np.float64, ndim=1, iterate=True)
        # sample indices; scores of other rows (a restore on other data) are not taken: the
        # next search checks them against the rows it has and gathers anew if they differ
        index = state_array(state, "index", self, np.int64, ndim=1, lo=0)
        scores = state_array(state, "scores", self, np.float64, ndim=1)
        K = state_value(state, "n_scores", int, self, lo=1)
        if K < 1 or scores.shape[0] != index.shape[0] * K:
            raise CheckpointError(f"ScoreLineKernel: checkpoint field 'scores' has "
                                  f"{scores.shape[0]} entries, expected {index.shape[0]} "
                                  f"('index') x {K} ('n_scores')")
        cdef Py_ssize_t n = w.shape[0], c = index.shape[0], i
        self._pend_idx = <Py_ssize_t*> malloc(max(c, 1) * sizeof(Py_ssize_t))
        self._pend_s = <double*> malloc(max(c * K, 1) * sizeof(double))
        self._pend_w = <double*> malloc(max(n, 1) * sizeof(double))
        if self._pend_idx == NULL or self._pend_s == NULL or self._pend_w == NULL:
            self._drop_pending()
            raise MemoryError("ScoreLineKernel: no memory for the restored scores")
        for i in range(c):
            self._pend_idx[i] = index[i]
        for i in range(c * K):
            self._pend_s[i] = scores[i]
        for i in range(n):
            self._pend_w[i] = w[i]
        self._pend_count, self._pend_n, self._pend_K = c, n, K
