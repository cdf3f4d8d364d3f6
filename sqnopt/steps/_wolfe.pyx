# cython: language_level=3
"""Compiled strong-Wolfe line search.

Along ``phi(a) = f_B(w - a d)`` (``phi'(a) = -g_B(w - a d)'d``, ``phi'(0) = -g'd < 0``) the step
``a`` is accepted when it satisfies the strong Wolfe conditions

    phi(a) <= phi(0) + c1 a phi'(0)          (sufficient decrease)
    |phi'(a)| <= c2 |phi'(0)|                (curvature)

found by the bracketing phase and the ``zoom`` phase of Nocedal & Wright (2006), Algorithms 3.5
and 3.6: trials grow by ``expand`` until they bracket an acceptable step, then a safeguarded cubic
interpolation of the bracket's ends (values and slopes, N&W eq. 3.59) shrinks it. The curvature
condition makes ``v'r = a (phi'(a) - phi'(0)) > 0`` for the secant pair of the accepted step on
the same batch, so BFGS-type models never skip a full-batch pair, and it lets a step longer than
the first trial be taken when the direction is badly scaled.

The search is written once, as the state machine :c:func:`wolfe_next` (given the trial just
evaluated, it returns the next trial, an accept or a give-up); the compiled loop's ``cy_search``
and the Python loop's ``search`` only evaluate the trials it asks for, so both paths take the same
steps. When ``max_evals`` trials find no step meeting both conditions, the best trial seen that
meets the sufficient decrease (strictly below ``phi(0)``) is evaluated once more and accepted; with
none, the search fails (``NaN``), like Armijo's, which is also how a full-batch run ends at a
minimiser to working precision.
"""

import numpy as np

from libc.math cimport isfinite, fabs, sqrt, NAN, INFINITY

from sqnopt._vec cimport sq_dot, sq_step_allfinite
from sqnopt.objectives._base cimport ObjectiveKernel
from sqnopt.steps._base cimport StepKernel


cdef inline double _cubic_min(double a, double fa, double da, double b, double fb,
                              double db) noexcept nogil:
    """Minimiser of the cubic through ``(a, fa, da)`` and ``(b, fb, db)`` (N&W eq. 3.59), or NaN
    when it has none (the caller bisects)."""
    cdef double d1 = da + db - 3.0 * (fa - fb) / (a - b), d2sq, d2
    d2sq = d1 * d1 - da * db
    if not (d2sq >= 0.0) or not isfinite(d2sq):
        return NAN
    d2 = sqrt(d2sq)
    if b < a:
        d2 = -d2
    return b - (b - a) * (db + d2 - d1) / (db - da + 2.0 * d2)


cdef void wolfe_init(WolfeSearch* s, double phi0, double dphi0, double c1, double c2,
                     double expand, Py_ssize_t max_evals) noexcept nogil:
    s.phi0 = phi0
    s.dphi0 = dphi0
    s.c1 = c1
    s.c2 = c2
    s.expand = expand
    s.max_evals = max_evals
    s.n = 0
    s.zoom = False
    s.final = False
    s.a_prev = 0.0
    s.f_prev = phi0
    s.d_prev = dphi0
    s.a_lo = 0.0
    s.f_lo = phi0
    s.d_lo = dphi0
    s.a_hi = 0.0
    s.f_hi = phi0
    s.d_hi = dphi0
    s.a_best = 0.0
    s.f_best = phi0


cdef inline bint _sufficient(WolfeSearch* s, double a, double f) noexcept nogil:
    return isfinite(f) and f <= s.phi0 + s.c1 * a * s.dphi0 and f < s.phi0


cdef double _fallback(WolfeSearch* s) noexcept nogil:
    """No step met both conditions in time: re-evaluate the best sufficient-decrease trial."""
    if s.a_best > 0.0:
        s.final = True
        return s.a_best
    return -1.0


cdef double wolfe_next(WolfeSearch* s, double a, double f, double dphi) noexcept nogil:
    """Digest the trial ``a`` (``phi(a) = f``, ``phi'(a) = dphi``; ``f = inf`` when the trial
    point was not finite). Returns 0 to accept ``a``, the next trial (> 0), or -1 to give up."""
    cdef double lo, hi, width, nxt
    cdef bint suff
    s.n += 1
    if s.final:                      # the fallback's re-evaluation of the best trial
        return 0.0 if _sufficient(s, a, f) else -1.0
    if not isfinite(f):
        f = INFINITY
        dphi = NAN
    suff = _sufficient(s, a, f)
    if suff and f < s.f_best:
        s.a_best = a
        s.f_best = f
    if suff and fabs(dphi) <= -s.c2 * s.dphi0:
        return 0.0
    if not s.zoom:
        # N&W Algorithm 3.5: does [a_prev, a] bracket an acceptable step?
        if not suff or (s.n > 1 and f >= s.f_prev):
            s.zoom = True
            s.a_lo, s.f_lo, s.d_lo = s.a_prev, s.f_prev, s.d_prev
            s.a_hi, s.f_hi, s.d_hi = a, f, dphi
        elif dphi >= 0.0:
            s.zoom = True
            s.a_lo, s.f_lo, s.d_lo = a, f, dphi
            s.a_hi, s.f_hi, s.d_hi = s.a_prev, s.f_prev, s.d_prev
        else:                        # still descending: a longer step
            s.a_prev, s.f_prev, s.d_prev = a, f, dphi
            if s.n >= s.max_evals:
                return _fallback(s)
            return a * s.expand
    else:
        # N&W Algorithm 3.6: a was the interpolated trial inside (a_lo, a_hi)
        if not suff or f >= s.f_lo:
            s.a_hi, s.f_hi, s.d_hi = a, f, dphi
        else:
            if dphi * (s.a_hi - s.a_lo) >= 0.0:
                s.a_hi, s.f_hi, s.d_hi = s.a_lo, s.f_lo, s.d_lo
            s.a_lo, s.f_lo, s.d_lo = a, f, dphi
    if s.n >= s.max_evals:
        return _fallback(s)
    lo = s.a_lo if s.a_lo < s.a_hi else s.a_hi
    hi = s.a_hi if s.a_lo < s.a_hi else s.a_lo
    width = hi - lo
    if not (width > 1e-12 * hi):     # the bracket has collapsed to rounding
        return _fallback(s)
    nxt = NAN
    if isfinite(s.f_hi) and isfinite(s.d_hi) and isfinite(s.d_lo):
        nxt = _cubic_min(s.a_lo, s.f_lo, s.d_lo, s.a_hi, s.f_hi, s.d_hi)
    # safeguard: keep the trial off the bracket's ends (else bisect)
    if not (nxt >= lo + 0.1 * width and nxt <= hi - 0.1 * width):
        nxt = lo + 0.5 * width
    return nxt


cdef class WolfeKernel(StepKernel):
    """Strong-Wolfe line search; ``cy_step_size`` is the first trial ``eps0``."""

    def __init__(self, double eps0, double c1, double c2, double expand, Py_ssize_t max_evals):
        self.eps0 = eps0
        self.c1 = c1
        self.c2 = c2
        self.expand = expand
        self.max_evals = max_evals
        self.line_search = True
        self.plain_gradient = True      # each trial: obj.cy_gradient(w_next, batch)

    cdef double cy_step_size(self, Py_ssize_t t) noexcept nogil:
        return self.eps0

    cdef double cy_search(self, ObjectiveKernel obj, const double* w, const Py_ssize_t* batch,
                          Py_ssize_t size, double f0, const double* g, const double* d,
                          double* w_next, double* g_next, double* f_next, Py_ssize_t n,
                          Py_ssize_t* n_evals) noexcept nogil:
        cdef double gd = sq_dot(g, d, n), a = self.eps0, f, dphi, nxt
        cdef WolfeSearch s
        n_evals[0] = 0
        if not (gd > 0.0):
            if gd == 0.0:            # no slope: accept eps0 if it does not increase f (Armijo's rule)
                if sq_step_allfinite(w, a, d, w_next, n):
                    f = obj.cy_gradient(w_next, batch, size, g_next)
                    n_evals[0] = 1
                    if isfinite(f) and f <= f0:
                        f_next[0] = f
                        return a
            return NAN
        wolfe_init(&s, f0, -gd, self.c1, self.c2, self.expand, self.max_evals)
        while True:
            if sq_step_allfinite(w, a, d, w_next, n):
                f = obj.cy_gradient(w_next, batch, size, g_next)
                n_evals[0] += 1
                dphi = -sq_dot(g_next, d, n)
            else:
                f = INFINITY
                dphi = NAN
            nxt = wolfe_next(&s, a, f, dphi)
            if nxt == 0.0:
                f_next[0] = f
                return a
            if not (nxt > 0.0):
                return NAN
            a = nxt

    def search(self, objective, const double[::1] w, batch, double f0, const double[::1] g,
               const double[::1] d, double[::1] w_next, double[::1] g_next):
        """The search of the Python loop, with any objective kernel (its ``gradient`` method):
        the same trials, from the same state machine, as ``cy_search``. Returns
        ``(eps or NaN, f_B(w_next), gradient evaluations)``."""
        cdef Py_ssize_t n = w.shape[0], evals = 0
        cdef double gd = sq_dot(&g[0], &d[0], n), a = self.eps0, f, dphi, nxt
        cdef WolfeSearch s
        if not (gd > 0.0):
            if gd == 0.0 and sq_step_allfinite(&w[0], a, &d[0], &w_next[0], n):
                f = float(objective.gradient(np.asarray(w_next), batch, np.asarray(g_next)))
                if isfinite(f) and f <= f0:
                    return a, f, 1
                return NAN, NAN, 1
            return NAN, NAN, 0
        wolfe_init(&s, f0, -gd, self.c1, self.c2, self.expand, self.max_evals)
        while True:
            if sq_step_allfinite(&w[0], a, &d[0], &w_next[0], n):
                f = float(objective.gradient(np.asarray(w_next), batch, np.asarray(g_next)))
                evals += 1
                dphi = -sq_dot(&g_next[0], &d[0], n)
            else:
                f = INFINITY
                dphi = NAN
            nxt = wolfe_next(&s, a, f, dphi)
            if nxt == 0.0:
                return a, f, evals
            if not (nxt > 0.0):
                return NAN, NAN, evals
            a = nxt
