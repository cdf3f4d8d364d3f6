# cython: language_level=3
"""Compiled step rules.

``Constant``: ``eps_t = eps``.
``Decaying``: ``eps_t = eps0 * T0 / (T0 + t)`` (Mokhtari & Ribeiro 2014, 2015; Bottou 2010).
``InverseSqrt``: ``eps_t = eps0 / sqrt(t + 1)``.
``PegasosStep``: ``eps_t = 1 / (lam * (t + 1))`` (Shalev-Shwartz et al. 2007; their t starts at 1).
``Polyak``: the stochastic Polyak step ``eps_t = min((f_B(w) - f_min) / (c g'd), eps_max)``
(Polyak 1987; Loizou, Vaswani, Laradji & Lacoste-Julien, AISTATS 2021, SPS_max, with ``g'd`` in
place of ``||g||^2`` for a preconditioned direction ``d``), a function of the point.
``Armijo``: backtracking line search on the iteration's batch ``B``: the first of
``eps0 * shrink^k``, ``k = 0, 1, ..., max_backtracks``, with
``f_B(w - eps d) <= f_B(w) - c1 * eps * g'd`` (Armijo 1966; Nocedal & Wright 2006, Alg. 3.1;
on minibatches as in Vaswani et al. 2019, "Painless stochastic gradient"), and a strict decrease
unless ``g'd = 0``: once the required decrease falls below the objective's rounding (a minimiser
to working precision) the search fails instead of accepting ever smaller steps that change
nothing.
"""

import numpy as np

from libc.math cimport isfinite, sqrt, NAN

from sqnopt._vec cimport sq_dot, sq_step_allfinite
from sqnopt.objectives._base cimport ObjectiveKernel


cdef class StepKernel:
    """Base class; subclasses override ``cy_step_size``."""

    #: The kernel runs in the compiled driver (its ``cy_*`` methods, without the GIL): the
    #: solver reads this declaration (``compiled`` of the kernel protocols in
    #: ``sqnopt.interfaces``, False when absent). A Python subclass that overrides only the
    #: Python-level methods declares ``compiled = False`` to run in the Python loop.
    compiled = True

    cdef double cy_step_size(self, Py_ssize_t t) noexcept nogil:
        return NAN

    cdef double cy_step_at(self, Py_ssize_t t, double f, const double* w, const double* g,
                           const double* d, Py_ssize_t n) noexcept nogil:
        return self.cy_step_size(t)

    cdef double cy_search(self, ObjectiveKernel obj, const double* w, const Py_ssize_t* batch,
                          Py_ssize_t size, double f0, const double* g, const double* d,
                          double* w_next, double* g_next, double* f_next, Py_ssize_t n,
                          Py_ssize_t* n_evals) noexcept nogil:
        n_evals[0] = 0
        return NAN

    def get_state(self) -> dict:
        """What the rule carries from one iteration to the next (copies); the built-in rules
        are functions of ``t`` and carry nothing."""
        return {}

    def set_state(self, state) -> None:
        """Restore what :meth:`get_state` returned."""
        if not isinstance(state, dict):
            raise TypeError(f"set_state expects a dict, got {type(state).__name__}")

    def step_size(self, Py_ssize_t t) -> float:
        """Step at iteration ``t >= 0``."""
        if t < 0:
            raise ValueError("iterations are numbered from t = 0")
        return self.cy_step_size(t)

    def step_at(self, Py_ssize_t t, double f, w, g, d) -> float:
        """Step at iteration ``t >= 0`` from ``w`` along ``-d``, ``f`` the batch objective at
        ``w`` and ``g`` its plain minibatch gradient (``cy_step_at``; arrays of one length)."""
        if t < 0:
            raise ValueError("iterations are numbered from t = 0")
        cdef const double[::1] wv = np.ascontiguousarray(w, dtype=np.float64)
        cdef const double[::1] gv = np.ascontiguousarray(g, dtype=np.float64)
        cdef const double[::1] dv = np.ascontiguousarray(d, dtype=np.float64)
        if not (wv.shape[0] == gv.shape[0] == dv.shape[0] and wv.shape[0] > 0):
            raise ValueError("w, g and d must be non-empty and of one length")
        return self.cy_step_at(t, f, &wv[0], &gv[0], &dv[0], wv.shape[0])


cdef class ConstantKernel(StepKernel):
    def __init__(self, double eps):
        self.eps = eps

    cdef double cy_step_size(self, Py_ssize_t t) noexcept nogil:
        return self.eps


cdef class DecayingKernel(StepKernel):
    def __init__(self, double eps0, double T0):
        self.eps0 = eps0
        self.T0 = T0

    cdef double cy_step_size(self, Py_ssize_t t) noexcept nogil:
        return self.eps0 * self.T0 / (self.T0 + t)


cdef class InverseSqrtKernel(StepKernel):
    def __init__(self, double eps0):
        self.eps0 = eps0

    cdef double cy_step_size(self, Py_ssize_t t) noexcept nogil:
        return self.eps0 / sqrt(<double> (t + 1))


cdef class PolyakKernel(StepKernel):
    """``eps = min((f - f_min) / (c g'd), eps_max)``; 0 when ``f <= f_min`` (the batch is at
    the bound: nothing to gain) or ``g'd <= 0`` (``d`` is no descent direction); NaN when ``f``
    or ``g'd`` is not finite (the driver then stops on a non-finite iterate). ``cy_step_size``
    (no point) is ``eps_max``."""

    def __init__(self, double eps_max, double c, double f_min):
        self.eps_max = eps_max
        self.c = c
        self.f_min = f_min
        self.uses_point = True

    cdef double cy_step_size(self, Py_ssize_t t) noexcept nogil:
        return self.eps_max

    cdef double cy_step_at(self, Py_ssize_t t, double f, const double* w, const double* g,
                           const double* d, Py_ssize_t n) noexcept nogil:
        cdef double gd = sq_dot(g, d, n), eps
        if not (isfinite(gd) and isfinite(f)):
            return NAN
        if not (gd > 0.0 and f > self.f_min):
            return 0.0
        eps = (f - self.f_min) / (self.c * gd)
        return eps if eps < self.eps_max else self.eps_max


cdef class PegasosStepKernel(StepKernel):
    def __init__(self, double lam):
        self.lam = lam

    cdef double cy_step_size(self, Py_ssize_t t) noexcept nogil:
        return 1.0 / (self.lam * (t + 1))


cdef class ArmijoKernel(StepKernel):
    """Backtracking (Armijo) line search; ``cy_step_size`` is the first trial ``eps0``."""

    def __init__(self, double eps0, double c1, double shrink, Py_ssize_t max_backtracks):
        self.eps0 = eps0
        self.c1 = c1
        self.shrink = shrink
        self.max_backtracks = max_backtracks
        self.line_search = True
        self.plain_gradient = True      # each trial: obj.cy_gradient(w_next, batch)

    cdef double cy_step_size(self, Py_ssize_t t) noexcept nogil:
        return self.eps0

    cdef double cy_search(self, ObjectiveKernel obj, const double* w, const Py_ssize_t* batch,
                          Py_ssize_t size, double f0, const double* g, const double* d,
                          double* w_next, double* g_next, double* f_next, Py_ssize_t n,
                          Py_ssize_t* n_evals) noexcept nogil:
        cdef double gd = sq_dot(g, d, n), eps = self.eps0, f
        cdef Py_ssize_t k
        n_evals[0] = 0
        if not (gd >= 0.0):          # an ascent direction (or NaN): no step can be accepted
            return NAN
        for k in range(self.max_backtracks + 1):
            if sq_step_allfinite(w, eps, d, w_next, n):
                f = obj.cy_gradient(w_next, batch, size, g_next)
                n_evals[0] += 1
                if isfinite(f) and f <= f0 - self.c1 * eps * gd and (f < f0 or gd == 0.0):
                    f_next[0] = f
                    return eps
            eps = eps * self.shrink
        return NAN

    def search(self, objective, const double[::1] w, batch, double f0, const double[::1] g,
               const double[::1] d, double[::1] w_next, g_next):
        """The search of the Python loop, with any objective kernel (its ``gradient`` method):
        the same operations in the same order as ``cy_search``. Returns
        ``(eps or NaN, f_B(w_next), gradient evaluations)``."""
        cdef Py_ssize_t n = w.shape[0], k, evals = 0
        cdef double gd = sq_dot(&g[0], &d[0], n), eps = self.eps0, f
        if not (gd >= 0.0):
            return NAN, NAN, 0
        for k in range(self.max_backtracks + 1):
            if sq_step_allfinite(&w[0], eps, &d[0], &w_next[0], n):
                f = float(objective.gradient(np.asarray(w_next), batch, g_next))
                evals += 1
                if isfinite(f) and f <= f0 - self.c1 * eps * gd and (f < f0 or gd == 0.0):
                    return eps, f, evals
            eps = eps * self.shrink
        return NAN, NAN, evals
