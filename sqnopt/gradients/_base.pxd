# cython: language_level=3
"""Compiled gradient-estimator interface: what the driver steps with.

``cy_estimate`` writes an estimate ``g`` of ``grad F(w)`` from the minibatch ``B`` into ``out``
and returns the minibatch objective ``f_B(w)`` (the divergence monitor's window, the line
search's ``f0``). When ``plain`` is not NULL it also receives the plain minibatch gradient
``s(w, B)``: secant models form their pairs ``s(w_{t+1}, B) - s(w_t, B)`` from it, whatever
estimate the step used. ``extra`` accumulates the samples the estimator touched beyond the
batch's own gradient (snapshots, second gradients, table initialisation), for the cost
accounting.
"""

from sqnopt.objectives._base cimport ObjectiveKernel


cdef class GradientKernel:
    cdef readonly Py_ssize_t dim
    # The estimate is the plain minibatch gradient and the kernel keeps no state: the driver may
    # call the objective directly and reuse a secant gradient as the next iteration's.
    cdef readonly bint plain
    cdef double cy_estimate(self, ObjectiveKernel obj, const double* w, const Py_ssize_t* batch,
                            Py_ssize_t size, double* out, double* plain,
                            Py_ssize_t* extra) noexcept nogil


cdef class MinibatchKernel(GradientKernel):
    pass
