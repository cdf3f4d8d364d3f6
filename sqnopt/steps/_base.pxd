# cython: language_level=3
"""Compiled step-rule interface: the scalar step ``eps_t`` at iteration ``t = 0, 1, ...``,
or, for rules with ``line_search``, a step found along the direction on the iteration's batch."""

from sqnopt.objectives._base cimport ObjectiveKernel


cdef class StepKernel:
    # True: the driver calls cy_search instead of cy_step_size and stepping itself.
    cdef readonly bint line_search
    # True: cy_search's g_next is obj.cy_gradient(w_next, batch) (a checkpoint then leaves it
    # out and a restore recomputes it, bit for bit).
    cdef readonly bint plain_gradient
    # True: the step depends on the point: the driver calls cy_step_at (with the batch
    # objective, its plain minibatch gradient and the direction at w) instead of cy_step_size.
    cdef readonly bint uses_point

    cdef double cy_step_size(self, Py_ssize_t t) noexcept nogil
    # The step at iteration t from w (n parameters) along -d, f the batch objective at w and g
    # its gradient s(w, B) -- the plain minibatch gradient, whatever estimate d was made from
    # (a step that is a function of the point: Polyak's,
    # Barzilai-Borwein's). The default is cy_step_size(t).
    cdef double cy_step_at(self, Py_ssize_t t, double f, const double* w, const double* g,
                           const double* d, Py_ssize_t n) noexcept nogil
    # Line search along -d from w on the batch (f0, g: the batch objective and gradient at w).
    # On success returns the step eps > 0 and leaves w_next = w - eps d, g_next = s(w_next, B),
    # f_next[0] = f_B(w_next); returns NaN when no step is accepted. n_evals[0]: gradient
    # evaluations made (each over the whole batch).
    cdef double cy_search(self, ObjectiveKernel obj, const double* w, const Py_ssize_t* batch,
                          Py_ssize_t size, double f0, const double* g, const double* d,
                          double* w_next, double* g_next, double* f_next, Py_ssize_t n,
                          Py_ssize_t* n_evals) noexcept nogil


cdef class ConstantKernel(StepKernel):
    cdef readonly double eps


cdef class DecayingKernel(StepKernel):
    cdef readonly double eps0
    cdef readonly double T0


cdef class InverseSqrtKernel(StepKernel):
    cdef readonly double eps0


cdef class PegasosStepKernel(StepKernel):
    cdef readonly double lam


cdef class ArmijoKernel(StepKernel):
    cdef readonly double eps0
    cdef readonly double c1
    cdef readonly double shrink
    cdef readonly Py_ssize_t max_backtracks


cdef class PolyakKernel(StepKernel):
    cdef readonly double eps_max
    cdef readonly double c
    cdef readonly double f_min
