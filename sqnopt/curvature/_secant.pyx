# cython: language_level=3
"""Shared base of the compiled secant-pair curvature models (see ``_secant.pxd``)."""

import numpy as np

from libc.math cimport isfinite

from sqnopt._vec cimport sq_dot
from sqnopt.checkpoint import state_value
from sqnopt.curvature._base cimport CURVATURE_ERROR, PAIR_RESET, CurvatureKernel


cdef class SecantKernel(CurvatureKernel):
    """Base of the BFGS-family kernels: safeguard options, counters, reset, ``B v``."""

    def __init__(self, Py_ssize_t dim, double min_curvature=0.0, bint damp=False,
                 double damping=0.2, bint reset_on_nonfinite=True):
        CurvatureKernel.__init__(self, dim)
        self.needs_secant_pair = True
        self._init_safeguards(min_curvature, damp, damping, reset_on_nonfinite)

    cdef int _init_safeguards(self, double min_curvature, bint damp, double damping,
                              bint reset_on_nonfinite) except -1:
        if not (isfinite(min_curvature) and min_curvature >= 0.0):
            raise ValueError(f"min_curvature must be a finite number >= 0, got {min_curvature}")
        if not (0.0 < damping < 1.0):
            raise ValueError(f"damping must lie in (0, 1), got {damping}")
        self.min_curvature = min_curvature
        self.damp = damp
        self.damping = damping
        self.reset_on_nonfinite = reset_on_nonfinite
        self.n_damped = 0
        self.n_updates = 0
        self.last_error = SECANT_OK
        return 0

    cdef int _check_res_options(self, double delta, double Gamma, double init_scale) except -1:
        if not (isfinite(delta) and delta >= 0.0):
            raise ValueError(f"delta must be a finite number >= 0, got {delta}")
        if not (isfinite(Gamma) and Gamma >= 0.0):
            raise ValueError(f"Gamma must be a finite number >= 0, got {Gamma}")
        if not (isfinite(init_scale) and init_scale > delta):
            raise ValueError(f"init_scale must be finite and > delta (B_0 = init_scale I must "
                             f"exceed delta I), got init_scale={init_scale}, delta={delta}")
        return 0

    cdef void cy_reset(self) noexcept nogil:
        pass

    cdef int cy_hessian_vector(self, const double* v, double* out) noexcept nogil:
        return -1

    cdef int _fail(self, int reason) noexcept nogil:
        self.last_error = reason
        if self.reset_on_nonfinite:
            self.cy_reset()
            return PAIR_RESET
        return CURVATURE_ERROR

    cdef double _powell(self, const double* v, double* r, const double* bv,
                        double vr) noexcept nogil:
        cdef Py_ssize_t j
        cdef double s = sq_dot(v, bv, self.dim)
        cdef double theta, sigma = self.damping
        if not (isfinite(s) and s > 0.0):
            return -1.0
        if vr >= sigma * s:
            return vr
        theta = (1.0 - sigma) * s / (s - vr)
        for j in range(self.dim):
            r[j] = theta * r[j] + (1.0 - theta) * bv[j]
        self.n_damped += 1
        return sq_dot(v, r, self.dim)

    # ---- Python-level API ---------------------------------------------------------------
    def reset(self) -> None:
        """Forget every pair (back to the initial matrix)."""
        self.cy_reset()

    def hessian_vector(self, const double[::1] v):
        """``B v`` with the current Hessian approximation ``B = H^{-1}`` (allocates)."""
        self._check(v)
        out = np.empty(self.dim)
        cdef double[::1] o = out
        if self.cy_hessian_vector(&v[0], &o[0]) != 0:
            raise np.linalg.LinAlgError("B v could not be formed (H is not positive definite)")
        return out

    def error_message(self) -> str:
        if self.last_error == SECANT_NONFINITE_PAIR:
            return ("a secant pair (v, r) contained NaN or infinity; pass "
                    "on_nonfinite='reset' to restart the curvature memory instead of stopping")
        if self.last_error == SECANT_BAD_FACTOR:
            return ("the Hessian approximation lost positive definiteness in floating point "
                    "(Cholesky failed); pass on_nonfinite='reset' to restart it")
        if self.last_error == SECANT_BAD_DAMPING:
            return "Powell damping failed: v'Bv is not a positive finite number"
        return "curvature model failed"

    def get_state(self) -> dict:
        state = CurvatureKernel.get_state(self)
        state.update(n_damped=int(self.n_damped), n_updates=int(self.n_updates),
                     last_error=int(self.last_error))
        return state

    def set_state(self, state) -> None:
        CurvatureKernel.set_state(self, state)
        self.n_damped = state_value(state, "n_damped", int, self, lo=0)
        self.n_updates = state_value(state, "n_updates", int, self, lo=0)
        self.last_error = state_value(state, "last_error", int, self, lo=SECANT_OK,
                                      hi=SECANT_BAD_DAMPING)
