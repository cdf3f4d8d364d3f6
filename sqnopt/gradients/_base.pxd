# cython: language_level=3
"""Compiled gradient-estimator interface: what the driver steps with.

``cy_estimate`` writes an estimate ``g`` of ``grad F(w)`` from the minibatch ``B`` into ``out``
and returns the minibatch objective ``f_B(w)`` (the divergence monitor's window, the line
search's ``f0``). When ``plain`` is not NULL it also receives the plain minibatch gradient
``s(w, B)``: secant models form their pairs ``s(w_{t+1}, B) - s(w_t, B)`` from it, whatever
estimate the step used. ``extra`` accumulates the samples the estimator touched beyond the
batch's own gradient (snapshots, second gradients, table initialisation), for the cost
accounting.

An estimator that declares ``sizes_batches`` chooses the size of the next batch
(``cy_batch_size``, given the schedule's size) from what it saw in ``cy_estimate`` -- the
progressive-batching test, for example.
"""

from sqnopt.objectives._base cimport ObjectiveKernel


cdef class GradientKernel:
    cdef readonly Py_ssize_t dim
    # The estimate is the plain minibatch gradient and the kernel keeps no state: the driver may
    # call the objective directly and reuse a secant gradient as the next iteration's.
    cdef readonly bint plain
    # Capabilities beyond ``plain`` (False in the base class):
    # ``batch_gradient``: the estimate is the plain minibatch gradient s(w, B) itself, though the
    # kernel keeps state (e.g. a batch-size decision): the driver may reuse a secant gradient
    # s(w, B) as the estimate when B repeats, and then does not call ``cy_estimate``.
    cdef readonly bint batch_gradient
    # ``sizes_batches``: the estimator decides the sample size; the driver asks ``cy_batch_size``
    # with the schedule's size and draws the batch it returns.
    cdef readonly bint sizes_batches
    cdef Py_ssize_t cy_batch_size(self, Py_ssize_t scheduled) noexcept nogil
    cdef double cy_estimate(self, ObjectiveKernel obj, const double* w, const Py_ssize_t* batch,
                            Py_ssize_t size, double* out, double* plain,
                            Py_ssize_t* extra) noexcept nogil


cdef class MinibatchKernel(GradientKernel):
    pass
