# cython: language_level=3
r"""Orthant-wise limited-memory quasi-Newton (OWL-QN): the compiled loop.

Andrew & Gao, *Scalable training of L1-regularized log-linear models*, ICML 2007, Algorithm 1,
for ``F(w) = f(w) + l1 ||w_reg||_1`` with ``f`` smooth (the objective kernel, its ``lam``
holding every L2 term). At the iterate ``w`` with the smooth gradient ``g``:

1. the pseudo-gradient ``pg`` (``PenaltyKernel.cy_pseudo_gradient``: the minimum-norm
   subgradient of ``F``; ``-pg`` is its steepest-descent direction);
2. the quasi-Newton direction ``d = H pg`` from the L-BFGS memory (two-loop recursion,
   ``sqnopt.curvature.LBFGSKernel``), then *sign-aligned*: ``d_j = 0`` wherever
   ``d_j pg_j <= 0`` (``p = pi(H v; v)`` with ``v = -pg``), so the step ``-t d`` stays a descent
   direction of ``F``;
3. the orthant ``xi_j = sign(w_j)``, or ``-sign(pg_j)`` where ``w_j = 0``, and the trial points
   ``w(t) = pi(w - t d; xi)``: a coordinate whose sign leaves the orthant is set to exactly 0
   (this is where the zeros of the solution come from);
4. backtracking ``t = 1, 1/2, ...`` (the first iteration from ``t = 1 / ||pg||``) until the
   sufficient decrease ``F(w(t)) <= F(w) - c1 pg'(w - w(t))``;
5. the L-BFGS pair ``s = w(t) - w``, ``y = g(w(t)) - g(w)`` from the *smooth* gradients only
   (the L1 term has no curvature).

Every trial costs one fused value-and-gradient pass (``cy_full_gradient``): most trials are
accepted, and the gradient of the accepted one is the next iteration's. Stops when
``max_j |pg_j| <= tol`` (``pg = 0`` exactly at the minimisers), on a relative decrease below
``ftol``, after ``max_iter`` iterations, or at working precision: when the accepted step
leaves ``F`` unchanged, or no step along the steepest-descent direction decreases it.
"""

import numpy as np

from libc.math cimport fabs, isfinite, sqrt
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy

from sqnopt._vec cimport sq_dot
from sqnopt.curvature._base cimport CURVATURE_ERROR
from sqnopt.curvature._lbfgs cimport LBFGSKernel
from sqnopt.objectives._base cimport ObjectiveKernel
from sqnopt.penalties._base cimport PenaltyKernel

# status codes of owlqn_run (named by sqnopt/composite/_solve.py: STATUS)
cdef enum:
    C_OWLQN_MAX_ITER = 0
    C_OWLQN_GTOL = 1
    C_OWLQN_FTOL = 2
    C_OWLQN_PRECISION = 3
    C_OWLQN_NONFINITE = 4

OWLQN_MAX_ITER = C_OWLQN_MAX_ITER
OWLQN_GTOL = C_OWLQN_GTOL
OWLQN_FTOL = C_OWLQN_FTOL
OWLQN_PRECISION = C_OWLQN_PRECISION
OWLQN_NONFINITE = C_OWLQN_NONFINITE


cdef inline double _max_abs(const double* a, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t j
    cdef double m = 0.0, x
    for j in range(n):
        x = fabs(a[j])
        if not x <= m:      # NaN propagates
            m = x
    return m


def owlqn_run(ObjectiveKernel objective, PenaltyKernel penalty, LBFGSKernel memory,
              double[::1] w, Py_ssize_t max_iter, double tol, double ftol=0.0,
              Py_ssize_t max_search=40, double c1=1e-4, double[::1] trace=None,
              double[:, ::1] iterates=None):
    """Run OWL-QN from ``w`` (updated in place) for at most ``max_iter`` iterations.

    ``trace[k]`` receives ``F`` after iteration ``k`` (``trace[0]`` at the start) and
    ``iterates[k]`` the iterate, while they have room. Returns ``(n_iter, status, F,
    n_evaluations, max |pg|)``; ``status`` is one of the ``OWLQN_*`` codes.
    """
    cdef Py_ssize_t n = objective.n_params
    if w.shape[0] != n or penalty.n_params != n or memory.dim != n:
        raise ValueError(f"objective, penalty, memory and w must share n_params={n}")
    if max_iter < 0 or max_search < 1 or not (tol >= 0.0) or not (ftol >= 0.0):
        raise ValueError("max_iter >= 0, max_search >= 1, tol >= 0 and ftol >= 0 are required")
    if not (0.0 < c1 < 1.0):
        raise ValueError(f"c1 must lie in (0, 1), got {c1!r}")
    cdef Py_ssize_t n_trace = 0 if trace is None else trace.shape[0]
    cdef Py_ssize_t n_iterates = 0
    if iterates is not None:
        if iterates.shape[1] != n:
            raise ValueError("iterates must have n_params columns")
        n_iterates = iterates.shape[0]
    cdef double* buf = <double*> malloc(7 * max(n, 1) * sizeof(double))
    if buf == NULL:
        raise MemoryError()
    cdef double* g = buf
    cdef double* pg = buf + n
    cdef double* d = buf + 2 * n
    cdef double* wn = buf + 3 * n
    cdef double* gn = buf + 4 * n
    cdef double* s = buf + 5 * n
    cdef double* yv = buf + 6 * n
    cdef double* wp = &w[0]
    cdef Py_ssize_t k = 0, j, jb, ls, evals = 0, n_reg = penalty.n_reg, block = penalty.block
    cdef int status = C_OWLQN_MAX_ITER
    cdef double f, fn, f_old, t, dd, dec, xi, gmax = 0.0
    cdef bint steep, accepted
    try:
        with nogil:
            f = objective.cy_full_gradient(wp, g) + penalty.cy_l1_value(wp)
            evals += 1
            if not isfinite(f):
                status = C_OWLQN_NONFINITE
            else:
                penalty.cy_pseudo_gradient(wp, g, pg)
                if n_trace > 0:
                    trace[0] = f
                if n_iterates > 0:
                    memcpy(&iterates[0, 0], wp, n * sizeof(double))
            while status != C_OWLQN_NONFINITE:
                gmax = _max_abs(pg, n)
                if not isfinite(gmax):
                    status = C_OWLQN_NONFINITE
                    break
                if gmax <= tol:
                    status = C_OWLQN_GTOL
                    break
                if k >= max_iter:
                    status = C_OWLQN_MAX_ITER
                    break
                # the quasi-Newton direction, sign-aligned with the pseudo-gradient
                memory.cy_direction(pg, d)
                dd = 0.0
                for j in range(n):
                    if d[j] * pg[j] > 0.0:
                        dd += d[j] * pg[j]
                    else:
                        d[j] = 0.0
                steep = memory.count == 0
                if not (dd > 0.0 and isfinite(dd)):
                    memory.cy_reset()
                    memcpy(d, pg, n * sizeof(double))
                    steep = True
                t = 1.0
                if steep:
                    t = 1.0 / sqrt(sq_dot(pg, pg, n))
                    if t > 1.0:
                        t = 1.0
                accepted = False
                for ls in range(max_search):
                    # the trial point, projected on the orthant of w (xi from -pg at zeros)
                    dec = 0.0
                    for j in range(n):
                        wn[j] = wp[j] - t * d[j]
                        jb = j - (j // block) * block if block > 0 else j
                        if jb < n_reg:
                            if wp[j] > 0.0:
                                xi = 1.0
                            elif wp[j] < 0.0:
                                xi = -1.0
                            elif pg[j] < 0.0:
                                xi = 1.0
                            elif pg[j] > 0.0:
                                xi = -1.0
                            else:
                                xi = 0.0
                            if wn[j] * xi <= 0.0:
                                wn[j] = 0.0
                        dec += pg[j] * (wp[j] - wn[j])
                    fn = objective.cy_full_gradient(wn, gn) + penalty.cy_l1_value(wn)
                    evals += 1
                    if isfinite(fn) and fn <= f - c1 * dec:
                        accepted = True
                        break
                    t *= 0.5
                if not accepted:
                    if steep:
                        status = C_OWLQN_PRECISION
                        break
                    memory.cy_reset()       # retry from the steepest-descent direction
                    continue
                for j in range(n):
                    s[j] = wn[j] - wp[j]
                    yv[j] = gn[j] - g[j]
                if memory.cy_update_pair(s, yv) == CURVATURE_ERROR:
                    memory.cy_reset()
                memcpy(wp, wn, n * sizeof(double))
                memcpy(g, gn, n * sizeof(double))
                f_old = f
                f = fn
                penalty.cy_pseudo_gradient(wp, g, pg)
                k += 1
                if k < n_trace:
                    trace[k] = f
                if k < n_iterates:
                    memcpy(&iterates[k, 0], wp, n * sizeof(double))
                if not (f < f_old):
                    # the accepted step did not lower F: it changes in its last bits only,
                    # and the pseudo-gradient is as small as F can resolve
                    gmax = _max_abs(pg, n)
                    status = C_OWLQN_PRECISION
                    break
                if ftol > 0.0 and f_old - f <= ftol * max(fabs(f_old), fabs(f), 1.0):
                    gmax = _max_abs(pg, n)
                    status = C_OWLQN_FTOL
                    break
    finally:
        free(buf)
    return int(k), int(status), float(f), int(evals), float(gmax)
