# cython: language_level=3
r"""Quadratic-bound curvature model: the direction of the semistochastic quadratic bound method.

Aravkin, Choromanska, Jebara & Kanevsky, *Semistochastic quadratic bound methods* (2014), eq. (5)
and Sec. 4.1-4.2: with an independent curvature batch ``S`` (drawn by the driver),

    d = (Sigma_S + eta I)^{-1} g,        w <- w - alpha d,

where ``g = mu_T + eta w`` is the driver's minibatch gradient on batch ``T`` and ``Sigma_S`` is
the mean of the per-sample partition-function bounds at ``w`` (Algorithm 1), kept in the
objective's factored form so ``Sigma_S v`` costs O(nnz(S) * |Omega|) and no ``d x d`` matrix is
formed. The system ``A d = g`` (``A = Sigma_S + eta I``) is solved inexactly with a fixed number
of iterations from ``d = 0``:

* ``lsqr`` (the paper's choice): Paige & Saunders' LSQR, whose iterates lie in
  ``A K_l(A^2, A g)``; components of ``g`` along eigenvalues near ``eta`` (directions the small
  curvature batch did not see) are damped by the factor ``A`` in front, which is the implicit
  regularisation of few iterations the paper relies on (Sec. 4.1). Two products with ``A`` per
  iteration.
* ``cg``: conjugate gradients, iterates in ``K_l(A, g)``, one product per iteration; faster per
  iteration but it moves along unseen directions by ``g / eta`` and needs curvature batches that
  cover the gradient's support.
* ``exact``: dense Cholesky of ``A`` (built from ``n_params`` products; small ``n_params``).
"""

import numpy as np

from libc.math cimport sqrt
from libc.stdlib cimport free, realloc
from libc.string cimport memcpy, memset
from scipy.linalg.cython_lapack cimport dpotrf, dpotrs

from sqnopt._vec cimport sq_axpy, sq_dot
from sqnopt.checkpoint import CheckpointError, restore_array, state_array, state_value
from sqnopt.curvature._base cimport BATCH_OBSERVED, CURVATURE_ERROR, CurvatureKernel
from sqnopt.objectives._base cimport ObjectiveKernel
from sqnopt.objectives._partition_bound cimport BoundObjectiveKernel

METHODS = {"cg": SOLVE_CG, "lsqr": SOLVE_LSQR, "exact": SOLVE_EXACT}


cdef class QuadraticBoundKernel(CurvatureKernel):
    """``d = (Sigma_S + eta I)^{-1} g`` with ``Sigma_S`` from the last observed batch."""

    def __init__(self, Py_ssize_t dim, double eta, Py_ssize_t inner_iter=5, double tol=0.0,
                 str method="lsqr"):
        CurvatureKernel.__init__(self, dim)
        if not eta > 0 or eta == float("inf"):
            raise ValueError(f"eta must be a finite number > 0, got {eta!r}")
        if inner_iter < 1:
            raise ValueError(f"inner_iter must be >= 1, got {inner_iter}")
        if not tol >= 0:
            raise ValueError(f"tol must be >= 0, got {tol!r}")
        if method not in METHODS:
            raise ValueError(f"method must be one of {sorted(METHODS)}, got {method!r}")
        self.needs_curvature_batch = True
        self.eta = eta
        self.inner_iter = inner_iter
        self.tol = tol
        self.method = METHODS[method]
        self._r = np.zeros(dim)
        self._p = np.zeros(dim)
        self._Ap = np.zeros(dim)
        self._q = np.zeros(dim)
        self._gc = np.zeros(0)          # allocated for objectives with a compact form
        self._dc = np.zeros(0)
        if self.method == SOLVE_EXACT:
            self._chol = np.zeros(dim * dim)
        self._error = ""

    def __dealloc__(self):
        free(self._factor)
        free(self._batch)
        free(self._map)

    def _set_compact(self, bint enabled):
        """Allow (default) or forbid solving on the compact coordinates (tests compare)."""
        self._compact_off = not enabled

    @property
    def solve_size(self):
        """Coordinates the inner solver of the current bound works on (``dim`` without a
        compact form)."""
        return self._m if self._compact else self.dim

    @property
    def method_name(self):
        """``"cg"``, ``"lsqr"`` or ``"exact"``."""
        return {v: k for k, v in METHODS.items()}[self.method]

    cdef int _adopt(self, object objective) except -1:
        if not isinstance(objective, BoundObjectiveKernel):
            self._error = (f"the objective kernel {type(objective).__name__} does not provide "
                           "the quadratic bound (it is not a BoundObjectiveKernel); use an "
                           "objective with the 'quadratic_bound' capability such as Softmax, "
                           "BinaryLogistic or LogLinear")
            return 0
        if (<BoundObjectiveKernel> objective).n_params != self.dim:
            self._error = (f"the objective has {(<BoundObjectiveKernel> objective).n_params} "
                           f"parameters but the curvature model was built for {self.dim}")
            return 0
        self._obj = <BoundObjectiveKernel> objective
        self._obj_id = <void*> objective
        self._fsize = self._obj.factor_size
        self._cap = 0          # the factor size may differ from the previous objective's
        self.batch_size = 0
        self._compact = False
        if self._obj.support_map_size > 0 and self._gc.shape[0] < self.dim:
            self._gc = np.zeros(self.dim)
            self._dc = np.zeros(self.dim)
        return 1

    cdef int _reserve(self, Py_ssize_t size) noexcept nogil:
        cdef double* f
        cdef Py_ssize_t* b
        if size <= self._cap:
            return 0
        f = <double*> realloc(self._factor, size * self._fsize * sizeof(double))
        if f == NULL:
            return -1
        self._factor = f
        b = <Py_ssize_t*> realloc(self._batch, size * sizeof(Py_ssize_t))
        if b == NULL:
            return -1
        self._batch = b
        self._cap = size
        return 0

    cdef int cy_observe_batch(self, ObjectiveKernel objective, const double* w,
                              const Py_ssize_t* batch, Py_ssize_t size) noexcept nogil:
        cdef int ok
        if <void*> objective != self._obj_id:
            with gil:
                ok = self._adopt(objective)
            if not ok:
                return CURVATURE_ERROR
        if self._reserve(size) != 0:
            with gil:
                self._error = f"out of memory for the bound of {size} samples"
            return CURVATURE_ERROR
        self._compact = False
        if self._obj.cy_bound(w, batch, size, self._factor, NULL) != 0:
            self.batch_size = 0
            with gil:
                self._error = ("a score f_i(y).w is not finite at the current iterate, so the "
                               "bound is undefined; reduce the step size")
            return CURVATURE_ERROR
        memcpy(self._batch, batch, size * sizeof(Py_ssize_t))
        self.batch_size = size
        self.n_observed += 1
        if (self._obj.support_map_size > 0 and not self._compact_off
                and self.method != SOLVE_EXACT):
            if self._reserve_map(self._obj.support_map_size) != 0:
                with gil:
                    self._error = "out of memory for the support of the bound"
                return CURVATURE_ERROR
            self._m = self._obj.cy_bound_support(batch, size, self._map)
            self._compact = True
        self._factored = False
        if self.method == SOLVE_EXACT and self._factorize() != 0:
            with gil:
                self._error = "Cholesky factorisation of Sigma_S + eta I failed"
            return CURVATURE_ERROR
        return BATCH_OBSERVED

    cdef int _reserve_map(self, Py_ssize_t size) noexcept nogil:
        cdef Py_ssize_t* m
        if size <= self._map_cap:
            return 0
        m = <Py_ssize_t*> realloc(self._map, size * sizeof(Py_ssize_t))
        if m == NULL:
            return -1
        self._map = m
        self._map_cap = size
        return 0

    cdef void _apply(self, const double* v, double* out, bint compact) noexcept nogil:
        """``out = (Sigma_S + eta I) v`` on the compact coordinates of the current bound
        (``compact``) or on all ``dim``."""
        cdef Py_ssize_t n = self._m if compact else self.dim
        if compact:
            self._obj.cy_bound_matvec_support(self._map, self._m, self._batch, self.batch_size,
                                              self._factor, v, out)
        elif self.batch_size > 0:
            self._obj.cy_bound_matvec(self._batch, self.batch_size, self._factor, v, out)
        else:
            memset(out, 0, n * sizeof(double))
        sq_axpy(self.eta, v, out, n)
        self.n_matvecs += 1

    cdef int _factorize(self) noexcept nogil:
        """Cholesky of ``Sigma_S + eta I``, with ``Sigma_S`` assembled by the objective
        (``cy_bound_dense``: sample by sample for the built-in objectives)."""
        cdef Py_ssize_t j, n = self.dim
        cdef double* A = &self._chol[0]
        cdef int info = 0, nn = <int> n
        cdef char uplo = b'L'
        if self._obj.cy_bound_dense(self._batch, self.batch_size, self._factor, A) != 0:
            self._factored = False
            return -1
        for j in range(n):
            A[j * n + j] += self.eta
        dpotrf(&uplo, &nn, A, &nn, &info)
        self._factored = info == 0
        return info

    cdef void cy_direction(self, const double* grad, double* out) noexcept nogil:
        cdef int info = 0, nn = <int> self.dim, one = 1
        cdef char uplo = b'L'
        cdef Py_ssize_t j
        cdef double off2, coef
        cdef double* dc
        if self.method == SOLVE_EXACT and self._factored:
            memcpy(out, grad, self.dim * sizeof(double))
            dpotrs(&uplo, &nn, &one, &self._chol[0], &nn, out, &nn, &info)
            self.last_inner_iterations = 0
        elif self._compact:
            # d = (d_c on the compact coordinates, coef * g elsewhere)
            dc = &self._dc[0]
            off2 = self._obj.cy_support_gather(self._map, grad, &self._gc[0])
            if self.method == SOLVE_LSQR:
                coef = self._lsqr(&self._gc[0], dc, self._m, off2)
            else:
                coef = self._cg(&self._gc[0], dc, self._m, off2)
            for j in range(self.dim):
                out[j] = coef * grad[j]
            self._obj.cy_support_scatter(self._map, dc, out)
        elif self.method == SOLVE_LSQR:
            self._lsqr(grad, out, self.dim, 0.0)
        else:
            self._cg(grad, out, self.dim, 0.0)
        self.n_inner_iterations += self.last_inner_iterations

    # The solvers run on ``n`` coordinates (``_m`` when the bound is compact, else ``dim``,
    # matching ``_apply(..., self._compact)``). Off them (compact form) ``A = eta I`` and every
    # vector of the recursion is a multiple of the gradient's part ``g_off`` there, kept as a
    # scalar (``c_r`` for ``r``, ...): products scale it by ``eta`` and dot products add
    # ``c_x c_y ||g_off||^2`` (``off2``). Each returns the direction's scalar ``c_d`` (0 when
    # ``off2 = 0`` and ``n = dim``: the plain solver, bit for bit).

    cdef double _cg(self, const double* grad, double* out, Py_ssize_t n,
                    double off2) noexcept nogil:
        """Conjugate gradients on ``A d = g`` from ``d = 0``."""
        cdef Py_ssize_t it = 0, j
        cdef double* r = &self._r[0]
        cdef double* p = &self._p[0]
        cdef double* Ap = &self._Ap[0]
        cdef double rr, rr_new, pAp, a, stop
        cdef double cr = 1.0, cp = 1.0, cd = 0.0, cap
        memset(out, 0, n * sizeof(double))
        memcpy(r, grad, n * sizeof(double))
        memcpy(p, grad, n * sizeof(double))
        rr = sq_dot(r, r, n) + off2
        stop = self.tol * self.tol * rr
        while it < self.inner_iter and rr > 0.0:
            self._apply(p, Ap, self._compact)
            cap = self.eta * cp
            pAp = sq_dot(p, Ap, n) + cp * cap * off2
            if not pAp > 0.0:
                break
            a = rr / pAp
            sq_axpy(a, p, out, n)
            cd += a * cp
            sq_axpy(-a, Ap, r, n)
            cr -= a * cap
            rr_new = sq_dot(r, r, n) + cr * cr * off2
            it += 1
            if rr_new <= stop:
                break
            a = rr_new / rr
            for j in range(n):
                p[j] = r[j] + a * p[j]
            cp = cr + a * cp
            rr = rr_new
        self.last_inner_iterations = it
        return cd

    cdef double _lsqr(self, const double* grad, double* out, Py_ssize_t n,
                      double off2) noexcept nogil:
        """LSQR (Paige & Saunders 1982, Sec. 4) on ``A d = g`` from ``d = 0`` (``A' = A``).

        Golub-Kahan bidiagonalisation ``beta u = A v - alpha u``, ``alpha v = A u - beta v``
        and the plane rotations that update ``d`` and the residual norm ``phibar``.
        """
        cdef Py_ssize_t it = 0, j
        cdef double* u = &self._r[0]
        cdef double* v = &self._p[0]
        cdef double* w = &self._q[0]
        cdef double* tmp = &self._Ap[0]
        cdef double alpha, beta, rho, rhobar, phi, phibar, c, s, theta, stop, t1, t2
        cdef double cu, cv, cw, ct, cd = 0.0
        memset(out, 0, n * sizeof(double))
        beta = sqrt(sq_dot(grad, grad, n) + off2)
        self.last_inner_iterations = 0
        if not beta > 0.0:
            return cd
        for j in range(n):
            u[j] = grad[j] / beta
        cu = 1.0 / beta
        self._apply(u, v, self._compact)
        cv = self.eta * cu
        alpha = sqrt(sq_dot(v, v, n) + cv * cv * off2)
        if not alpha > 0.0:
            return cd
        for j in range(n):
            v[j] /= alpha
        cv /= alpha
        memcpy(w, v, n * sizeof(double))
        cw = cv
        phibar = beta
        rhobar = alpha
        stop = self.tol * beta
        while it < self.inner_iter:
            # bidiagonalisation step
            self._apply(v, tmp, self._compact)
            ct = self.eta * cv
            for j in range(n):
                u[j] = tmp[j] - alpha * u[j]
            cu = ct - alpha * cu
            beta = sqrt(sq_dot(u, u, n) + cu * cu * off2)
            if beta > 0.0:
                for j in range(n):
                    u[j] /= beta
                cu /= beta
                self._apply(u, tmp, self._compact)
                ct = self.eta * cu
                for j in range(n):
                    v[j] = tmp[j] - beta * v[j]
                cv = ct - beta * cv
                alpha = sqrt(sq_dot(v, v, n) + cv * cv * off2)
                if alpha > 0.0:
                    for j in range(n):
                        v[j] /= alpha
                    cv /= alpha
            # plane rotation eliminating beta
            rho = sqrt(rhobar * rhobar + beta * beta)
            c = rhobar / rho
            s = beta / rho
            theta = s * alpha
            rhobar = -c * alpha
            phi = c * phibar
            phibar = s * phibar
            t1 = phi / rho
            t2 = -theta / rho
            for j in range(n):
                out[j] += t1 * w[j]
                w[j] = v[j] + t2 * w[j]
            cd += t1 * cw
            cw = cv + t2 * cw
            it += 1
            if phibar <= stop or not beta > 0.0 or not alpha > 0.0:
                break
        self.last_inner_iterations = it
        return cd

    # ---- checkpoints ----------------------------------------------------------------------
    def bind(self, objective) -> None:
        """Attach to the objective kernel of the solve (the solver calls this when a solve
        starts or is restored; ``observe_batch`` attaches to the objective it is given). An
        objective without the bound is left for ``observe_batch`` to report."""
        if <void*> objective != self._obj_id:
            self._adopt(objective)

    def forget_samples(self) -> None:
        """Drop the current bound when the solve moves to new data (``Solver.rebind``): its
        batch indexes the old data (each iteration observes a new batch before the next
        direction, so no direction used it)."""
        self.batch_size = 0
        self._compact = False
        self._factored = False

    def get_state(self) -> dict:
        """The current bound (its batch and factors; the Cholesky factor in ``exact`` mode)
        and the counters. The objective it belongs to is re-attached by :meth:`bind`, not
        saved; the compact map is a function of the batch, rebuilt by :meth:`set_state`."""
        cdef Py_ssize_t nb = self.batch_size, nf = self._fsize if self._obj is not None else 0
        batch = np.empty(nb, dtype=np.intp)
        factor = np.empty(nb * nf, dtype=np.float64)
        cdef Py_ssize_t[::1] bv = batch
        cdef double[::1] fv = factor
        if nb > 0:
            memcpy(&bv[0], self._batch, nb * sizeof(Py_ssize_t))
        if nb * nf > 0:
            memcpy(&fv[0], self._factor, nb * nf * sizeof(double))
        state = CurvatureKernel.get_state(self)
        state.update(batch_size=int(nb), n_observed=int(self.n_observed),
                     last_inner_iterations=int(self.last_inner_iterations),
                     n_inner_iterations=int(self.n_inner_iterations),
                     n_matvecs=int(self.n_matvecs), error=str(self._error),
                     compact_off=bool(self._compact_off), compact=bool(self._compact),
                     factored=bool(self._factored), batch=batch, factor=factor)
        if self.method == SOLVE_EXACT:
            state["chol"] = np.array(self._chol)
        return state

    def set_state(self, state) -> None:
        """Restore what :meth:`get_state` returned, every field checked first (the batch
        indices against the data); the compact map is rebuilt from the batch, as
        :meth:`observe_batch` builds it (a ``map`` saved by older versions is not read)."""
        cdef Py_ssize_t nb, nf
        cdef Py_ssize_t[::1] bv
        cdef double[::1] fv
        CurvatureKernel.set_state(self, state)
        nb = state_value(state, "batch_size", int, self, lo=0)
        compact = state_value(state, "compact", bool, self)
        if nb > 0 and self._obj is None:
            raise CheckpointError("QuadraticBoundKernel: bind() the kernel to its objective "
                                  "before set_state() (the bound refers to the data)")
        batch = state_array(state, "batch", self, np.intp, rows=True)
        factor = state_array(state, "factor", self, np.float64)
        nf = self._fsize if self._obj is not None else 0
        if batch.shape[0] != nb or factor.shape[0] != nb * nf:
            raise CheckpointError(f"QuadraticBoundKernel: the checkpointed bound (fields "
                                  f"'batch_size' = {nb}, 'batch' of {batch.shape[0]} samples, "
                                  f"'factor' of {factor.shape[0]} entries) does not fit this "
                                  f"objective ({nf} entries per sample): the checkpoint is of "
                                  "another objective or damaged")
        if compact and (self._obj is None or self._obj.support_map_size == 0
                        or self.method == SOLVE_EXACT):
            raise CheckpointError("QuadraticBoundKernel: checkpoint field 'compact' is True for "
                                  "a bound this kernel never compacts (dense rows or the exact "
                                  "solve): the checkpoint is of another component or damaged")
        if self.method == SOLVE_EXACT:
            restore_array(self._chol, state, "chol", self)
        counts = {key: state_value(state, key, int, self, lo=0)
                  for key in ("n_observed", "last_inner_iterations", "n_inner_iterations",
                              "n_matvecs")}
        factored = state_value(state, "factored", bool, self)
        compact_off = state_value(state, "compact_off", bool, self)
        error = state_value(state, "error", str, self)
        if self._reserve(nb) != 0 or (compact and
                                      self._reserve_map(self._obj.support_map_size) != 0):
            raise MemoryError("QuadraticBoundKernel: out of memory restoring the bound")
        bv = batch
        fv = factor
        if nb > 0:
            memcpy(self._batch, &bv[0], nb * sizeof(Py_ssize_t))
        if nb * nf > 0:
            memcpy(self._factor, &fv[0], nb * nf * sizeof(double))
        self.batch_size = nb
        self._compact = compact
        if nb > 0 and int(batch.max()) >= self._obj.data.n_samples:
            self.forget_samples()       # the old data's bound, restored onto new data
        elif compact:
            self._m = self._obj.cy_bound_support(self._batch, nb, self._map)
        self._factored = factored
        self._compact_off = compact_off
        self._error = error
        self.n_observed = counts["n_observed"]
        self.last_inner_iterations = counts["last_inner_iterations"]
        self.n_inner_iterations = counts["n_inner_iterations"]
        self.n_matvecs = counts["n_matvecs"]

    # ---- Python-level API ----------------------------------------------------------------
    def observe_batch(self, objective, const double[::1] w, const Py_ssize_t[::1] batch) -> int:
        """Build ``Sigma_S`` at ``w`` from the sample indices ``batch``."""
        if not isinstance(objective, BoundObjectiveKernel):
            raise TypeError(
                f"QuadraticBound needs a compiled objective kernel that provides the quadratic "
                f"bound (a BoundObjectiveKernel), got {type(objective).__name__}. Use Softmax, "
                "BinaryLogistic or LogLinear, or the pure-Python twin "
                "sqnopt.curvature.reference.QuadraticBoundNumPy for Python objectives")
        self._check(w)
        if batch.shape[0] < 1:
            raise ValueError("batch must contain at least one index")
        if np.min(batch) < 0 or np.max(batch) >= (<BoundObjectiveKernel> objective).data.n_samples:
            raise IndexError("batch index out of range")
        return self.cy_observe_batch(objective, &w[0], &batch[0], batch.shape[0])

    def error_message(self) -> str:
        return str(self._error) or "curvature model failed"

    @property
    def batch(self):
        """Sample indices of the current bound (a copy)."""
        return np.array([self._batch[t] for t in range(self.batch_size)], dtype=np.intp)

    def system_matvec(self, v):
        """``(Sigma_S + eta I) v`` for the current bound."""
        vv = np.ascontiguousarray(v, dtype=np.float64)
        cdef double[::1] vm = vv
        self._check(vm)
        out = np.empty(self.dim)
        cdef double[::1] om = out
        self._apply(&vm[0], &om[0], False)
        return out

    def bound_matrix(self):
        """Dense ``Sigma_S`` of the current bound (O(dim^2) memory; tests and diagnostics)."""
        eye = np.eye(self.dim)
        return np.column_stack([self.system_matvec(eye[:, j]) for j in range(self.dim)]) - (
            self.eta * eye)
