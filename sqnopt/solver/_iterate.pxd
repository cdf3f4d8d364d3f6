# cython: language_level=3
"""Compiled iterate-representation interface: how the driver stores ``w`` and applies a step.

The driver's dense representation is the plain vector ``w`` (its own buffers): every gradient
estimator, curvature model, step rule and projection works on it. An :class:`IterateKernel` is
the other kind: a representation bound to a margin objective in which the first-order step is
cheap in *coefficient form*. The minibatch gradient of a margin objective is

    s(w, B) = lam * w_reg + sum_{i in B} c_i x_i   (and sum_i c_i on the intercept),

``c_i = g_i y_i loss'(m_i) / |B|`` with the margin ``m_i = y_i (x_i . w + b)``, so with the
identity direction (``d = g``) the step is

    w_{t+1} = P( (1 - eps lam) w_t - eps sum_i c_i x_i ).

The representation declares what it offers; the driver decides from the declarations and the
composition (identity direction, step size a function of ``t``, no projection or a Euclidean
ball, the plain minibatch gradient) whether it runs the iteration on it:

* ``cy_first_order`` is the iteration's gradient, direction and update stages in one call:
  margins and coefficients of the batch rows, the minibatch objective, the update with the
  driver's step ``eps``, the ball projection and, when asked, the Polyak-Ruppert average. Each
  part is O(1) or O(nnz of the batch) in a scaled representation, so a call per part would cost
  as much as the work; the batch, the step, the record (counters), the stopping tests and the
  checkpoints stay the driver's.
* ``lookahead``: the driver draws the minibatches that many iterations ahead (within the current
  ``run`` call's iteration and sample budgets, so between calls the sampler is where a loop
  drawing one batch per iteration leaves it) and hands the batches ahead to ``cy_first_order``,
  which hints the memory it will touch (software pipelining).
* ``cy_sync`` writes the dense ``w`` (and ``w_avg``) on request.
* ``dense_iterate`` (a class attribute, default True): the representation stands for a dense
  vector of ``n_params`` entries, which ``cy_sync`` writes and ``reload`` rebuilds it from, and
  ``n_params`` is the objective's. False: there is no finite dense ``w`` -- the kernel expansion
  ``w = c sum_j beta_j phi(x_j)`` of :mod:`sqnopt.kernel._pegasos` lives in the RKHS of an RBF
  kernel. Then the representation's own state is the iterate: ``n_params`` counts its
  coefficients, ``cy_sync`` writes nothing, ``reload`` has nothing to rebuild from (it raises),
  and the iterate, its objective and its checkpoint are read through the representation
  (``get_state`` / ``set_state`` and its own accessors). The driver's part is unchanged: it
  never reads ``w`` on this path (batches, step, counters, budgets, non-finite stops, the
  window of minibatch objectives in the counters, its own checkpoint state). The Solver-level
  services that read a dense ``w`` (history, full-objective tests, the monitor's best-iterate
  copy, the result) are built only with a dense representation; the estimator that owns a
  non-dense one runs the driver itself.

A representation may also run a gradient estimator's estimate itself (the lazy SAGA iterate of
:mod:`sqnopt.solver._lazy_loop` works on the table of an estimator declaring ``score_table``);
samples such an estimate touches beyond the batch are reported in ``extra_samples``.
"""


cdef enum:
    MAX_LOOKAHEAD = 8    # the most batches an iterate representation may have drawn ahead
    # what cy_first_order returns
    ITERATE_STEPPED = 0          # the step was applied
    ITERATE_NONFINITE_LOSS = 1   # the minibatch objective is not finite: nothing applied
    ITERATE_NONFINITE = 2        # the step would leave a non-finite iterate: nothing applied


cdef class IterateKernel:
    cdef readonly Py_ssize_t n_params
    # iterations the driver draws ahead (0: one batch per iteration; at most MAX_LOOKAHEAD)
    cdef readonly Py_ssize_t lookahead
    # ||w_reg||^2 of the current iterate
    cdef readonly double sqnorm
    # samples the representation touched beyond the batches (e.g. a gradient table's fill at
    # the first step); the driver adds them to ``n_estimator_samples`` and resets this to 0
    cdef readonly Py_ssize_t extra_samples
    # what the last ``cy_first_order`` call's batch contributes to the progressive validation
    # loss: sum_s g_i loss(m_i) at w_t (the loss part of loss[0] times |B|) and sum_s g_i
    cdef readonly double batch_loss
    cdef readonly double batch_weight

    # One first-order iteration on ``batch`` (``size`` rows) with the step ``eps``:
    #   loss[0] = sum_s g_i loss(m_i) / |B| + lam/2 ||w_reg||^2 at w_t (i = batch[s]);
    #   w_reg <- (1 - eps lam) w_reg - eps sum_s c_i x_i,  b <- b - eps sum_s c_i;
    # then, when radius > 0, w_reg <- w_reg * min(1, radius / ||w_reg||); then, when n_avg > 0,
    # the new iterate joins the running average (``n_avg`` iterates with it). Returns
    # ITERATE_STEPPED, ITERATE_NONFINITE_LOSS (loss[0] set, nothing applied) or
    # ITERATE_NONFINITE (loss[0] set, nothing applied). ``ahead[u - 1]`` (``ahead_sizes[u - 1]``
    # rows) is the batch of the iteration ``u`` after this one, for ``1 <= u <= n_ahead``
    # (memory hints only).
    cdef int cy_first_order(self, const Py_ssize_t* batch, Py_ssize_t size,
                            const Py_ssize_t* const* ahead, const Py_ssize_t* ahead_sizes,
                            Py_ssize_t n_ahead, double eps, double radius, Py_ssize_t n_avg,
                            double* loss) noexcept nogil
    # write the dense iterate into ``w`` and the average of ``n_avg`` iterates into ``w_avg``
    cdef void cy_sync(self, Py_ssize_t n_avg) noexcept nogil
