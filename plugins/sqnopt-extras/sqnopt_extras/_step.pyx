# cython: language_level=3
"""The stochastic Polyak step with a decaying cap, a function of the point (``uses_point``):

    eps_t = min( (f_B(w_t) - f_min) / (c g_t'd_t),  eps_max T0 / (T0 + t) ),

``f_B`` the iteration's batch objective, ``g_t`` the gradient estimate and ``d_t`` the
direction (``w_{t+1} = w_t - eps_t d_t``). The first term is Polyak's step on the batch
(Loizou, Vaswani, Laradji & Lacoste-Julien, AISTATS 2021, SPS; ``g'd`` in place of
``||g||^2`` so that a preconditioned direction gets the same step ``eps_t d_t`` whatever its
scale). SPS_max caps it by a constant, which leaves a noise floor when the model does not
interpolate the data (the batch optimum ``f_min`` is not the batch's value at the solution);
here the cap decays as ``1/t`` after ``T0`` iterations (the schedule of ``Decaying``), so the
steps shrink to 0 at the rate that makes stochastic gradient descent converge on strongly
convex problems, while the early steps keep Polyak's adaptivity. The step is 0 on a batch at
its bound (``f_B <= f_min``) or along a direction that is not a descent direction
(``g'd <= 0``), NaN when ``f`` or ``g'd`` is not finite (the driver then stops)."""

from libc.math cimport NAN, isfinite

from sqnopt._vec cimport sq_dot
from sqnopt.steps._base cimport StepKernel


cdef class DecayingPolyakKernel(StepKernel):
    cdef readonly double eps_max
    cdef readonly double T0
    cdef readonly double c
    cdef readonly double f_min

    def __init__(self, double eps_max, double T0, double c, double f_min):
        self.eps_max = eps_max
        self.T0 = T0
        self.c = c
        self.f_min = f_min
        self.uses_point = True

    cdef double cy_step_size(self, Py_ssize_t t) noexcept nogil:
        # the cap at iteration t: the step without a point (diagnostics)
        return self.eps_max * self.T0 / (self.T0 + <double>t)

    cdef double cy_step_at(self, Py_ssize_t t, double f, const double* w, const double* g,
                           const double* d, Py_ssize_t n) noexcept nogil:
        cdef double gd = sq_dot(g, d, n)
        cdef double cap = self.cy_step_size(t), eps
        if not (isfinite(gd) and isfinite(f)):
            return NAN
        if not (gd > 0.0 and f > self.f_min):
            return 0.0
        eps = (f - self.f_min) / (self.c * gd)
        return eps if eps < cap else cap
