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

    cdef void cy_direction(self, const double* grad, double* out) noexcept nogil
    cdef int cy_update_pair(self, const double* v, const double* r) noexcept nogil
    cdef int cy_observe_batch(self, ObjectiveKernel objective, const double* w,
                              const Py_ssize_t* batch, Py_ssize_t size) noexcept nogil
    cdef int _check(self, const double[::1] x) except -1
