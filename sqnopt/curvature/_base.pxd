# cython: language_level=3
"""Compiled curvature-model interface: turns a gradient into a search direction ``d = H g``.

The driver moves ``w <- w - step * d``. A model that learns from secant pairs sets
``needs_secant_pair``; the driver then evaluates the second gradient on the *same* minibatch at
``w_{t+1}`` and calls ``cy_update_pair(v, r)`` with ``v = w_{t+1} - w_t`` and
``r = s(w_{t+1}, B_t) - s(w_t, B_t)``. A model that builds curvature from its own sample set
(SQB) sets ``needs_curvature_batch``; the driver draws an independent batch and calls
``cy_observe_batch`` before asking for the direction.
"""

from sqnopt.objectives._base cimport ObjectiveKernel

# Return codes of cy_update_pair / cy_observe_batch.
cdef enum:
    PAIR_SKIPPED = 0       # pair rejected by a safeguard (counted)
    PAIR_ACCEPTED = 1      # pair stored / used
    PAIR_RESET = 2         # memory reset (e.g. non-finite values); the pair was not stored
    CURVATURE_ERROR = -1   # unrecoverable; the driver stops and reports error_message()
    BATCH_OBSERVED = 3     # cy_observe_batch: the batch was taken in, no pair offered


cdef class CurvatureKernel:
    cdef readonly Py_ssize_t dim
    cdef readonly bint needs_secant_pair
    cdef readonly bint needs_curvature_batch
    # The direction is the gradient itself (d = g, nothing learnt): loops may step along the
    # gradient buffer without a copy, and the sparse scaled loop applies (a capability of the
    # kernel, whatever its class)
    cdef readonly bint direction_is_gradient
    # Samples the model touched computing directions since the driver last collected them
    # (e.g. Hessian-vector products over its curvature batch); the driver adds them to the
    # curvature samples of the cost accounting and resets the count.
    cdef public Py_ssize_t extra_samples
    # The run's gradient tolerance (``gtol``: the driver stops once the largest absolute entry
    # of a full-batch gradient is at most this; 0: none), set by the driver before each run. A
    # model whose inner solve's residual is the gradient at the next iterate (CG on a quadratic
    # objective) may end that solve there instead of iterating past the run's own test.
    cdef public double run_gtol
    # The kernel makes the update itself (a composite step: the L2 term of the objective in
    # closed form): the driver calls ``cy_composite_step`` with the iterate, the minibatch
    # gradient and the step instead of ``cy_direction`` and ``w - eps d``
    cdef readonly bint composite_step
    # The composite step is AdaGrad's (``sqnopt.curvature._adagrad``): per coordinate
    # ``G_j += g_j^2``, ``s_j = delta + sqrt(G_j)``, ``w_j <- (s_j w_j - eps g_j) / (s_j + eps
    # lam_j)`` with ``g`` the loss gradient, on the accumulator ``cy_accumulator`` exposes and
    # the kernel's ``delta`` and ``lam`` attributes: the adaptive sparse iterate
    # (``sqnopt.solver._adaptive_loop``) runs it in O(nnz of the batch)
    cdef readonly bint adagrad_accumulator

    cdef void cy_direction(self, const double* grad, double* out) noexcept nogil
    # With ``composite_step``: ``w_next`` from ``w`` and the minibatch gradient ``grad`` (the
    # objective's, regulariser included) with the step ``eps``, the kernel's state updated;
    # returns 0, or -1 when ``w_next`` or the state would not be finite (state unchanged)
    cdef int cy_composite_step(self, const double* w, const double* grad, double eps,
                               double* w_next) noexcept nogil
    # With ``adagrad_accumulator``: the accumulator ``G`` (``dim`` entries, updated in place by
    # the caller); NULL otherwise
    cdef double* cy_accumulator(self) noexcept nogil
    cdef int cy_update_pair(self, const double* v, const double* r) noexcept nogil
    cdef int cy_observe_batch(self, ObjectiveKernel objective, const double* w,
                              const Py_ssize_t* batch, Py_ssize_t size) noexcept nogil
    cdef int _check(self, const double[::1] x) except -1
