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
    # ``overlap_pairs``: the estimator arranges consecutive batches to share samples
    # (``cy_arrange``, called on each drawn batch before ``cy_estimate``) and supplies the
    # curvature pair of the last step from the gradients on the shared samples it computed as
    # part of the two batch gradients (``cy_pair``); the driver then forms no secant pair itself.
    cdef readonly bint overlap_pairs
    # ``score_table``: the estimate is one on a table ``tau`` of per-sample score derivatives
    # (one per sample for a margin loss) that the kernel exposes,
    #     g = a + (1/|B|) sum_{i in B} (c_i(w) - tau_i) x_i + lam w_reg,  a = (1/N) sum_i tau_i x_i.
    # Without ``table_frozen`` (SAGA) each visit sets tau_i = c_i(w) in batch order (a repeat in
    # a batch then adds nothing) and ``a`` follows; with it (SVRG: tau_i = c_i(w~) at the
    # snapshot, ``a`` the data part of grad F(w~)) both stay until the next fill. An iterate
    # representation may run the estimate itself in lazy sparse form, reading (and updating)
    # the table (``cy_table``) and ``a`` (``cy_table_average``) in place. Before each estimate it
    # asks ``cy_table_due``; if due, ``cy_table_fill`` fills the table at ``w`` and returns the
    # samples that cost. After each estimate it reports the batch (``cy_table_visited``: the
    # samples since the fill, SVRG's period).
    cdef readonly bint score_table
    cdef readonly bint table_frozen
    cdef bint cy_table_due(self) noexcept nogil
    cdef double* cy_table(self) noexcept nogil
    cdef double* cy_table_average(self) noexcept nogil
    cdef Py_ssize_t cy_table_fill(self, ObjectiveKernel obj, const double* w) noexcept nogil
    cdef void cy_table_visited(self, Py_ssize_t size) noexcept nogil
    cdef Py_ssize_t cy_batch_size(self, Py_ssize_t scheduled) noexcept nogil
    # rewrite the drawn batch (in place) so that it holds the samples it shares with the last one
    cdef void cy_arrange(self, Py_ssize_t* batch, Py_ssize_t size) noexcept nogil
    # after ``cy_estimate`` at w: v = w - w_prev, r = grad F_O(w) - grad F_O(w_prev) on the
    # samples O the batch shares with the previous one; returns 1 when a pair was written, 0
    # when there is none (the first batch)
    cdef int cy_pair(self, const double* w, double* v, double* r) noexcept nogil
    # the driver reused ``g = s(w, B)`` from the line search (a repeated batch with
    # ``batch_gradient``) instead of calling ``cy_estimate``: an ``overlap_pairs`` estimator
    # takes it as its estimate at ``w``
    cdef void cy_reused(self, const double* w, const double* g, Py_ssize_t size) noexcept nogil
    cdef double cy_estimate(self, ObjectiveKernel obj, const double* w, const Py_ssize_t* batch,
                            Py_ssize_t size, double* out, double* plain,
                            Py_ssize_t* extra) noexcept nogil


cdef class MinibatchKernel(GradientKernel):
    pass
