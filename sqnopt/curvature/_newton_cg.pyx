# cython: language_level=3
"""Subsampled Newton-CG: the direction solves ``H_S d = g`` by conjugate gradients.

``H_S`` is the Hessian of the objective on the curvature batch ``S`` the driver draws each
iteration (Byrd, Chin, Neveitt & Nocedal, *On the use of stochastic Hessian information in
optimization methods for machine learning*, SIAM J. Optim. 2011): its products cost two passes
over ``S`` (the objective's ``cy_hessian_product`` from factors computed once per batch), so a
sample of a tenth of the data makes an inexact Newton step cost a few passes. CG stops at the
relative residual ``eta = min(0.5, sqrt(||g||))`` -- the forcing sequence of truncated Newton
methods (Nocedal & Wright 2006, Alg. 7.1), superlinear near the optimum -- or after
``max_iter`` products; on a direction of non-positive curvature it returns the iterate so far
(the gradient at the first iteration). Requires the ``hessian_vector`` capability.

With ``diagonal_weight = a >= 0`` CG is preconditioned (Nocedal & Wright 2006, Alg. 5.3) by
the diagonal ``M = a diag(H_S) + (1 - a) lam`` -- the Jacobi preconditioner ``diag(H_S)``
mixed with the regulariser's Hessian (Hsia, Chiang & Lin, *Preconditioned conjugate gradient
methods in truncated Newton frameworks for large-scale linear classification*, ACML 2018,
who recommend ``a = 0.01``), formed once per batch from the factors by the objective's
``cy_hessian_diagonal`` (one pass over the batch's stored entries, counted in the curvature
samples); objectives that do not provide it (softmax) keep plain CG. Preconditioned CG stops
at the relative residual in the ``M^-1`` norm, ``sqrt(r' M^-1 r) <= eta sqrt(g' M^-1 g)``,
the quantity its recurrence carries; without a preconditioner that is the Euclidean test above
and the arithmetic is plain CG's.

Forcing codes besides a fixed ``eta > 0`` and the sequence above (``0``): ``-1``,
``eta_k = min(0.5, sqrt(||g_k|| / ||g_0||))`` (the same superlinear sequence, invariant to
the scale of the objective); ``-2``, Eisenstat & Walker's choice 2 (SIAM J. Sci. Comput. 1996):
``eta_0 = 0.5``, ``eta_k = 0.9 (||g_k|| / ||g_{k-1}||)^2``, safeguarded by
``max(eta_k, 0.9 eta_{k-1}^2)`` when ``0.9 eta_{k-1}^2 > 0.1``, at most 0.5.

With ``gtol_stop`` and a run that has a gradient tolerance (``run_gtol > 0``, set by the driver
before each run) the forcing is not used: CG goes on until ``max_j |r_j| <= run_gtol / 2``
(or ``max_iter`` products). On a quadratic objective whose Hessian is the batch's, the residual
``r = g - H d`` is the gradient at the next iterate ``w - d``, so the run's own test then holds
after this one direction (Hestenes & Stiefel 1952: CG on the Newton system is CG on the
objective); the half is room for the rounding that separates the recurrence's residual from
the gradient the driver computes. The largest entry is taken per chunk in the update step
(a maximum: the same on any thread count).
"""

from libc.math cimport fabs, fmin, isfinite, sqrt
from libc.string cimport memcpy, memset

import numpy as np

from sqnopt._parallel cimport run_tasks
from sqnopt._vec cimport sq_dot
from sqnopt.checkpoint import CheckpointError, state_array, state_value
from sqnopt.curvature._base cimport BATCH_OBSERVED, CURVATURE_ERROR, CurvatureKernel
from sqnopt.objectives._base cimport ObjectiveKernel


# ---- CG's vector steps, in chunks ---------------------------------------------------------------
# The steps between two Hessian-vector products (the dot p'q, the updates of the iterate and the
# residual with the dot r'M^-1 r, the new search direction) run over fixed chunks of the vectors:
# each chunk's dot is summed alone and the chunks' dots are added in chunk order, so on any thread
# count the result is the serial loop's bits (one chunk: the plain dot). With more threads the
# chunks are shared out (a long vector: Amdahl's serial part of a fit between parallel passes).

cdef enum:
    _CG_CHUNK = 4096            # entries per chunk
    _CG_SPLIT_CHUNKS = 4        # fewer chunks run on the calling thread (the pool's round trip
                                # costs about one chunk's update)
    _CG_DOT = 0
    _CG_UPDATE = 1
    _CG_DIRECTION = 2


cdef struct _CGJob:
    int step
    Py_ssize_t n
    double* out
    double* r
    double* p
    const double* q
    double* z                   # r itself without a preconditioner
    const double* M             # NULL: no preconditioner
    double alpha
    double beta
    double* part                # one dot per chunk
    double* part_max            # NULL, or max_j |r_j| per chunk (the update step)


cdef void _cg_chunk(void* ctx, Py_ssize_t c, int worker) noexcept nogil:
    cdef _CGJob* job = <_CGJob*> ctx
    cdef Py_ssize_t j, j0 = c * _CG_CHUNK, j1 = min(job.n, j0 + _CG_CHUNK)
    cdef double a = job.alpha, b = job.beta, big
    cdef double* out = job.out
    cdef double* r = job.r
    cdef double* p = job.p
    cdef const double* q = job.q
    cdef double* z = job.z
    cdef const double* M = job.M
    if job.step == _CG_DOT:
        job.part[c] = sq_dot(p + j0, q + j0, j1 - j0)
    elif job.step == _CG_UPDATE:
        for j in range(j0, j1):
            out[j] += a * p[j]
            r[j] -= a * q[j]
        if M != NULL:
            for j in range(j0, j1):
                z[j] = r[j] / M[j]
        job.part[c] = sq_dot(r + j0, z + j0, j1 - j0)
        if job.part_max != NULL:
            big = 0.0
            for j in range(j0, j1):
                if fabs(r[j]) > big:
                    big = fabs(r[j])
            job.part_max[c] = big
    else:
        for j in range(j0, j1):
            p[j] = z[j] + b * p[j]


cdef double _cg_step(_CGJob* job, int step, int n_threads) noexcept nogil:
    """Run ``step`` over every chunk (on up to ``n_threads`` threads for a long vector) and
    return the chunks' dots added in chunk order (0 for the direction update)."""
    cdef Py_ssize_t c, n_chunks = (job.n + _CG_CHUNK - 1) // _CG_CHUNK
    cdef double s
    job.step = step
    if n_threads > 1 and n_chunks >= _CG_SPLIT_CHUNKS:
        run_tasks(n_threads, n_chunks, _cg_chunk, job)
    else:
        for c in range(n_chunks):
            _cg_chunk(job, c, 0)
    if step == _CG_DIRECTION:
        return 0.0
    s = job.part[0]
    for c in range(1, n_chunks):
        s += job.part[c]
    return s


cdef class NewtonCGKernel(CurvatureKernel):
    def __init__(self, Py_ssize_t dim, Py_ssize_t n_samples, Py_ssize_t hess_size,
                 Py_ssize_t max_iter, double forcing, double diagonal_weight=-1.0,
                 bint gtol_stop=False):
        CurvatureKernel.__init__(self, dim)
        if max_iter < 1:
            raise ValueError("max_iter must be >= 1")
        self.needs_curvature_batch = True
        self.batch = np.zeros(max(n_samples, 1), dtype=np.intp)
        self.D = np.zeros(max(n_samples * max(hess_size, 1), 1))
        self.r = np.zeros(dim)
        self.p = np.zeros(dim)
        self.q = np.zeros(dim)
        self.part = np.zeros((dim + _CG_CHUNK - 1) // _CG_CHUNK + 1)
        self.part_max = np.zeros((dim + _CG_CHUNK - 1) // _CG_CHUNK + 1 if gtol_stop else 1)
        self.gtol_stop = gtol_stop
        if diagonal_weight > 1.0:
            raise ValueError("diagonal_weight must be <= 1 (negative: no preconditioner)")
        self.diagonal_weight = diagonal_weight
        self.z = np.zeros(dim if diagonal_weight >= 0.0 else 1)
        self.M = np.ones(dim if diagonal_weight >= 0.0 else 1)
        self.preconditioned = False
        self.max_iter = max_iter
        self.forcing = forcing
        self.g0norm = -1.0
        self.gprev = 0.0
        self.eta_prev = 0.5
        self.size = 0
        self.last_iterations = 0
        self.total_iterations = 0
        self.have_batch = False
        self._failed = 0

    cdef int cy_observe_batch(self, ObjectiveKernel objective, const double* w,
                              const Py_ssize_t* batch, Py_ssize_t size) noexcept nogil:
        if objective.hess_size < 1:
            self._failed = 1
            return CURVATURE_ERROR
        if size > self.batch.shape[0] or size * objective.hess_size > self.D.shape[0]:
            with gil:                   # rare: a larger batch than the data seen at init
                self.batch = np.zeros(size, dtype=np.intp)
                self.D = np.zeros(size * objective.hess_size)
        if self.obj is not objective:
            with gil:
                self.obj = objective
        memcpy(&self.batch[0], batch, size * sizeof(Py_ssize_t))
        self.size = size
        if objective.cy_hessian_factors(w, batch, size, &self.D[0]) != 0:
            self._failed = 2
            return CURVATURE_ERROR
        self.have_batch = True
        self._precondition(True)
        return BATCH_OBSERVED

    cdef void _precondition(self, bint count) noexcept nogil:
        # M = a diag(H_S) + (1 - a) lam from the batch's factors; a coordinate where that is not
        # positive (no stored entry, lam = 0) keeps 1
        cdef Py_ssize_t j, n = self.dim
        cdef double a = self.diagonal_weight, shift, m
        cdef double* M
        self.preconditioned = False
        if a < 0.0 or not self.have_batch:
            return
        M = &self.M[0]
        if self.obj.cy_hessian_diagonal(&self.batch[0], self.size, &self.D[0], M) != 0:
            return
        if count:
            self.extra_samples += self.size
        shift = (1.0 - a) * self.obj.lam
        for j in range(n):
            m = a * M[j] + shift
            M[j] = m if (m > 0.0 and isfinite(m)) else 1.0
        self.preconditioned = True

    cdef void cy_direction(self, const double* grad, double* out) noexcept nogil:
        cdef Py_ssize_t n = self.dim, j, k
        cdef double* r = &self.r[0]
        cdef double* p = &self.p[0]
        cdef double* q = &self.q[0]
        cdef double* z = r              # M^-1 r (r itself without a preconditioner)
        cdef const double* M = NULL
        cdef double rr, rr_new, pq, gnorm, target, big, rtol = 0.5 * self.run_gtol
        cdef Py_ssize_t c, n_chunks = (n + _CG_CHUNK - 1) // _CG_CHUNK
        cdef _CGJob job
        cdef int nt
        if not self.have_batch:
            memcpy(out, grad, n * sizeof(double))
            self.last_iterations = 0
            return
        if self.preconditioned:
            z = &self.z[0]
            M = &self.M[0]
        nt = self.obj.data.n_threads
        job.n = n
        job.out = out
        job.r = r
        job.p = p
        job.q = q
        job.z = z
        job.M = M
        job.part = &self.part[0]
        job.part_max = &self.part_max[0] if (self.gtol_stop and rtol > 0.0) else NULL
        memset(out, 0, n * sizeof(double))
        memcpy(r, grad, n * sizeof(double))
        gnorm = sqrt(sq_dot(r, r, n))
        if M != NULL:
            for j in range(n):
                z[j] = r[j] / M[j]
        memcpy(p, z, n * sizeof(double))
        rr = sq_dot(r, z, n)            # r' M^-1 r
        target = self._forcing_term(gnorm)
        target = target * sqrt(rr)
        if job.part_max != NULL:
            target = 0.0                # the run's gtol alone ends CG (besides max_iter)
        k = 0
        while k < self.max_iter and sqrt(rr) > target:
            self.obj.cy_hessian_product(&self.batch[0], self.size, &self.D[0], p, q)
            self.extra_samples += self.size
            k += 1
            pq = _cg_step(&job, _CG_DOT, nt)
            if not (pq > 0.0):          # no positive curvature along p: stop here
                if k == 1:
                    memcpy(out, grad, n * sizeof(double))
                break
            job.alpha = rr / pq
            rr_new = _cg_step(&job, _CG_UPDATE, nt)     # out += alpha p, r -= alpha q; r'M^-1 r
            if job.part_max != NULL:
                # r = g - H d, the gradient at w - d on a quadratic: the run's test holds there
                big = 0.0
                for c in range(n_chunks):
                    if job.part_max[c] > big:
                        big = job.part_max[c]
                if big <= rtol:
                    break
            job.beta = rr_new / rr
            rr = rr_new
            _cg_step(&job, _CG_DIRECTION, nt)           # p = M^-1 r + beta p
        self.last_iterations = k
        self.total_iterations += k

    cdef double _forcing_term(self, double gnorm) noexcept nogil:
        cdef double eta, safe
        if self.forcing > 0.0:
            return self.forcing
        if self.forcing == 0.0:
            return fmin(0.5, sqrt(gnorm))
        if self.g0norm < 0.0:           # the first direction of the solve
            self.g0norm = gnorm
            eta = 0.5
        elif self.forcing == -1.0:
            eta = fmin(0.5, sqrt(gnorm / self.g0norm)) if self.g0norm > 0.0 else 0.5
        else:
            eta = 0.9 * (gnorm / self.gprev) * (gnorm / self.gprev) if self.gprev > 0.0 else 0.5
            safe = 0.9 * self.eta_prev * self.eta_prev
            if safe > 0.1 and safe > eta:
                eta = safe
            eta = fmin(0.5, eta)
        self.gprev = gnorm
        self.eta_prev = eta
        return eta

    def error_message(self) -> str:
        if self._failed == 1:
            return "the objective provides no Hessian-vector products (capability 'hessian_vector')"
        return "a score is not finite at the iterate (the Hessian factors cannot be formed)"

    # ---- checkpoints ----------------------------------------------------------------------
    def bind(self, objective) -> None:
        """Attach to the objective kernel of the solve (the solver calls this when a solve
        starts or is restored; ``observe_batch`` attaches to the objective it is given, and a
        kernel that is not compiled is left for it to refuse)."""
        if isinstance(objective, ObjectiveKernel):
            self.obj = <ObjectiveKernel> objective

    def forget_samples(self) -> None:
        """Drop the last curvature batch when the solve moves to new data
        (``Solver.rebind``): its indices are the old data's (each iteration observes a new
        batch before the next direction, so no direction used it)."""
        self.have_batch = False
        self.size = 0

    def get_state(self) -> dict:
        """The last curvature batch and its Hessian factors (``D``), the CG counters; the
        objective they belong to is re-attached by :meth:`bind`, not saved."""
        state = CurvatureKernel.get_state(self)
        hs = self.obj.hess_size if (self.have_batch and self.obj is not None) else 0
        state.update(have_batch=bool(self.have_batch), size=int(self.size),
                     batch=np.array(self.batch[:self.size]) if self.have_batch else
                     np.zeros(0, dtype=np.intp),
                     D=np.array(self.D[:self.size * hs]) if hs else np.zeros(0),
                     last_iterations=int(self.last_iterations),
                     total_iterations=int(self.total_iterations), failed=int(self._failed),
                     g0norm=float(self.g0norm), gprev=float(self.gprev),
                     eta_prev=float(self.eta_prev))
        return state

    def set_state(self, state) -> None:
        CurvatureKernel.set_state(self, state)
        have = state_value(state, "have_batch", bool, self)
        size = state_value(state, "size", int, self, lo=0)
        batch = state_array(state, "batch", self, np.intp, rows=True)
        D = state_array(state, "D", self, np.float64)
        counts = {key: state_value(state, key, int, self, lo=0)
                  for key in ("last_iterations", "total_iterations")}
        failed = state_value(state, "failed", int, self, lo=0, hi=2)
        forcing = ({key: state_value(state, key, float, self)
                    for key in ("g0norm", "gprev", "eta_prev")}
                   if "g0norm" in state else None)
        if have:
            if self.obj is None:
                raise CheckpointError("NewtonCGKernel: bind() the kernel to its objective "
                                      "before set_state() (its last batch refers to the data)")
            if batch.shape[0] != size or D.shape[0] != size * self.obj.hess_size:
                raise CheckpointError(f"NewtonCGKernel: checkpoint fields 'batch' / 'D' have "
                                      f"{batch.shape[0]} / {D.shape[0]} entries for a batch of "
                                      f"'size' = {size}: the checkpoint is of another objective "
                                      "or damaged")
            if size > self.batch.shape[0]:
                self.batch = np.zeros(size, dtype=np.intp)
            if D.shape[0] > self.D.shape[0]:
                self.D = np.zeros(D.shape[0])
            np.asarray(self.batch)[:size] = batch
            np.asarray(self.D)[:D.shape[0]] = D
        self.have_batch = have
        self.size = size
        self._precondition(False)       # M from the restored factors (not saved, not counted)
        self.last_iterations = counts["last_iterations"]
        self.total_iterations = counts["total_iterations"]
        self._failed = failed
        if forcing is not None:         # checkpoints before the adaptive forcing rules: none
            self.g0norm = forcing["g0norm"]
            self.gprev = forcing["gprev"]
            self.eta_prev = forcing["eta_prev"]
