# cython: language_level=3
"""Compiled iterate-representation interface: how the driver stores ``w`` and applies a step.

The driver's dense representation is the plain vector ``w`` (its own buffers): every gradient
estimator, curvature model, step rule and projection works on it. An :class:`IterateKernel` is
the other kind: a representation in which a *coefficient-form* first-order step is cheap. For a
margin objective the minibatch gradient is

    s(w, B) = lam * w_reg + sum_{i in B} c_i x_i   (and sum_i c_i on the intercept),

with one scalar ``c_i`` per row, so with the identity direction the step is

    w_{t+1} = P( (1 - eps lam) w_t - eps sum_i c_i x_i ).

The driver asks the representation for the batch rows' scores ``x_i . w + b`` (``cy_scores``),
turns them into the loss and the ``c_i`` with the objective's ``loss_and_dloss_dmargin``, asks
the step rule for ``eps`` and hands ``c``, ``eps`` and the shrink factor ``1 - eps lam`` back
(``cy_step``, which also applies a Euclidean-ball projection and adds the new iterate to the
Polyak-Ruppert average when asked). The dense ``w`` (and ``w_avg``) are written on request
(``cy_sync``).

A representation may ask the driver to draw the minibatches ``lookahead`` iterations ahead:
once per iteration the driver hands it the batches drawn ahead (``cy_prefetch``), so the
representation can hint the memory it will touch, a different part at each distance
(software pipelining). Only the iterations of the current ``run`` call are drawn ahead,
so between calls the sampler is where a loop drawing one batch per iteration leaves it.
"""


cdef enum:
    MAX_LOOKAHEAD = 8    # the most batches an iterate representation may have drawn ahead


cdef class IterateKernel:
    cdef readonly Py_ssize_t n_params
    # iterations the driver draws ahead for ``cy_prefetch`` (0: one batch per iteration; at
    # most MAX_LOOKAHEAD)
    cdef readonly Py_ssize_t lookahead
    # ||w_reg||^2 of the current iterate (the regulariser of the minibatch objective reads it)
    cdef readonly double sqnorm

    # scores[s] = x_i . w + b for i = batch[s] (b: the intercept, 0 without one)
    cdef void cy_scores(self, const Py_ssize_t* batch, Py_ssize_t size,
                        double* scores) noexcept nogil
    # The update of one iteration, for the batch of the last ``cy_scores`` call:
    #   w_reg <- shrink * w_reg - eps * sum_s coef[s] x_{batch[s]},  b <- b - eps * sum_s coef[s];
    # then, when radius > 0, the projection w_reg <- w_reg * min(1, radius / ||w_reg||); then,
    # when n_avg > 0, the new iterate joins the running average (``n_avg`` iterates with it).
    # Returns 0, or -1 (nothing applied) when the result would not be finite. (One call for
    # the three: in a scaled representation each is O(1) or O(nnz), so a call per part would
    # cost as much as the work.)
    cdef int cy_step(self, const Py_ssize_t* batch, Py_ssize_t size, const double* coef,
                     double eps, double shrink, double radius, Py_ssize_t n_avg) noexcept nogil
    # memory hints for the batches drawn ahead: ``batches[u - 1]`` (``sizes[u - 1]`` rows) is
    # the batch of the iteration ``u`` after the current one, for ``1 <= u <= n_ahead``
    cdef void cy_prefetch(self, const Py_ssize_t* const* batches, const Py_ssize_t* sizes,
                          Py_ssize_t n_ahead) noexcept nogil
    # write the dense iterate into ``w`` and the average of ``n_avg`` iterates into ``w_avg``
    cdef void cy_sync(self, Py_ssize_t n_avg) noexcept nogil
