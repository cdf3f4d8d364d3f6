# cython: language_level=3
"""Barzilai-Borwein spectral scaling: ``H_t = gamma_t I`` with ``gamma_t = v^T r / r^T r``
from the newest accepted secant pair (Barzilai & Borwein 1988; the initial scaling of
oLBFGS, Mokhtari & Ribeiro 2015, eq. 19). ``gamma_0 = gamma_init``."""

from libc.math cimport isfinite

from sqnopt._vec cimport sq_dot
from sqnopt.checkpoint import CheckpointError, state_value
from sqnopt.curvature._base cimport (
    PAIR_ACCEPTED, PAIR_RESET, PAIR_SKIPPED, CurvatureKernel,
)


cdef class BBScaleKernel(CurvatureKernel):
    cdef readonly double gamma
    cdef readonly double gamma_init
    cdef readonly double gamma_min
    cdef readonly double gamma_max
    cdef readonly double min_curvature

    def __init__(self, Py_ssize_t dim, double gamma_init, double gamma_min, double gamma_max,
                 double min_curvature):
        CurvatureKernel.__init__(self, dim)
        self.needs_secant_pair = True
        self.gamma = gamma_init
        self.gamma_init = gamma_init
        self.gamma_min = gamma_min
        self.gamma_max = gamma_max
        self.min_curvature = min_curvature

    cdef void cy_direction(self, const double* grad, double* out) noexcept nogil:
        cdef Py_ssize_t j
        cdef double gamma = self.gamma
        for j in range(self.dim):
            out[j] = gamma * grad[j]

    cdef int cy_update_pair(self, const double* v, const double* r) noexcept nogil:
        cdef double vr = sq_dot(v, r, self.dim)
        cdef double rr = sq_dot(r, r, self.dim)
        cdef double vv = sq_dot(v, v, self.dim)
        cdef double g
        if not (isfinite(vr) and isfinite(rr) and isfinite(vv)):
            self.gamma = self.gamma_init
            return PAIR_RESET
        if vr <= self.min_curvature * vv or rr == 0.0:
            return PAIR_SKIPPED
        g = vr / rr
        if g < self.gamma_min:
            g = self.gamma_min
        elif g > self.gamma_max:
            g = self.gamma_max
        self.gamma = g
        return PAIR_ACCEPTED

    def get_state(self) -> dict:
        """The base class's state and ``gamma``: what a checkpoint or a pickled fit must keep
        to resume exactly (the state part of the curvature kernel contract)."""
        state = CurvatureKernel.get_state(self)
        state["gamma"] = float(self.gamma)
        return state

    def set_state(self, state) -> None:
        """Restore :meth:`get_state`'s dict; ``gamma`` is checked to lie in the kernel's clip
        range ``[gamma_min, gamma_max]`` (or be ``gamma_init``), as every value it computes
        does, before it is used."""
        CurvatureKernel.set_state(self, state)
        gamma = state_value(state, "gamma", float, self, positive=True)
        if gamma != self.gamma_init and not self.gamma_min <= gamma <= self.gamma_max:
            raise CheckpointError(f"BBScaleKernel: checkpoint field 'gamma' = {gamma!r} is "
                                  f"outside [gamma_min, gamma_max] = [{self.gamma_min!r}, "
                                  f"{self.gamma_max!r}]; the checkpoint is damaged or was "
                                  "written by another BBScale configuration")
        self.gamma = gamma
