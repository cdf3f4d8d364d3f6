# cython: language_level=3
"""Shared base of the compiled secant-pair (BFGS-family) curvature models.

A secant model receives ``(v, r)`` with ``v = w_{t+1} - w_t`` and
``r = s(w_{t+1}, B_t) - s(w_t, B_t)`` (same minibatch) and screens it with the safeguards below
before learning from it. The options are attributes so that the Python layer, the reference
twins and the docs describe one behaviour:

* ``min_curvature`` (eps >= 0): a pair is *bad* when ``v'r <= eps ||v||^2`` (for RES the test is
  on the corrected ``r~ = r - delta v``).
* ``damp``: a bad pair is Powell-damped instead of skipped:
  ``r <- theta r + (1 - theta) B v`` with ``theta = (1 - sigma) v'Bv / (v'Bv - v'r)`` when
  ``v'r < sigma v'Bv`` (else ``theta = 1``), so that ``v'r = sigma v'Bv > 0`` afterwards
  (``sigma = damping``; Powell 1978, Nocedal & Wright 2006, Procedure 18.2). A pair with
  ``v = 0`` carries no curvature information and is always skipped.
* ``reset_on_nonfinite``: a pair with a NaN/inf entry resets the memory to its initial state
  (``PAIR_RESET``) instead of stopping the solve (``CURVATURE_ERROR``).
"""

from sqnopt.curvature._base cimport CurvatureKernel

# Codes of the last failure (explained by error_message()).
cdef enum:
    SECANT_OK = 0
    SECANT_NONFINITE_PAIR = 1
    SECANT_BAD_FACTOR = 2
    SECANT_BAD_DAMPING = 3


cdef class SecantKernel(CurvatureKernel):
    cdef readonly double min_curvature
    cdef readonly bint damp
    cdef readonly double damping
    cdef readonly bint reset_on_nonfinite
    cdef readonly Py_ssize_t n_damped      # pairs modified by Powell damping (theta < 1)
    cdef readonly Py_ssize_t n_updates     # pairs that changed the memory (accepted or damped)
    cdef int last_error

    # Forget every pair: back to the initial matrix (virtual).
    cdef void cy_reset(self) noexcept nogil
    # out = B v with the current Hessian approximation B = H^{-1} (virtual; used by damping).
    # Returns 0 on success, -1 if B v could not be formed.
    cdef int cy_hessian_vector(self, const double* v, double* out) noexcept nogil
    # Called on a non-finite pair / numerical breakdown: reset (PAIR_RESET) or CURVATURE_ERROR.
    cdef int _fail(self, int reason) noexcept nogil
    # Powell damping of ``r`` (in place) against ``bv = B v``; returns the new v'r, or -1.0 if
    # v'Bv is not a positive finite number. Counts the pair in n_damped if it was modified.
    cdef double _powell(self, const double* v, double* r, const double* bv, double vr) noexcept nogil
    cdef int _init_safeguards(self, double min_curvature, bint damp, double damping,
                              bint reset_on_nonfinite) except -1
    # Validation of RES's delta >= 0, Gamma >= 0 and B_0 = init_scale I > delta I (both forms).
    cdef int _check_res_options(self, double delta, double Gamma, double init_scale) except -1
