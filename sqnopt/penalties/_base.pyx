# cython: language_level=3
r"""Compiled elastic-net penalty (see ``_base.pxd`` for the contract).

``P(w) = l1 ||w_reg||_1 + (l2 / 2) ||w_reg||^2``, with ``l1 = alpha * l1_ratio`` and
``l2 = alpha * (1 - l1_ratio)`` (the elastic net of Zou & Hastie, *Regularization and variable
selection via the elastic net*, JRSS-B 67 (2005), in scikit-learn's parametrisation).

Proximal map (Parikh & Boyd, *Proximal Algorithms*, 2014, Sec. 6.5.3): the objective
``t P(u) + ||u - z||^2 / 2`` separates per coordinate and its minimiser is

    u_j = sign(z_j) max(|z_j| - t l1, 0) / (1 + t l2)

(soft thresholding, then the L2 shrinkage), so coordinates with ``|z_j| <= t l1`` are exact
zeros. Pseudo-gradient (Andrew & Gao, *Scalable training of L1-regularized log-linear
models*, ICML 2007, Sec. 3.1), for the smooth gradient ``g``:

    pg_j = g_j + l1 sign(w_j)                      if w_j != 0
    pg_j = g_j + l1  if g_j < -l1,  g_j - l1  if g_j > l1,  0 otherwise   (w_j = 0)

the minimum-norm element of the subdifferential; ``-pg`` is the steepest-descent direction of
the composite objective, and ``pg = 0`` exactly at its minimisers.
"""

from libc.math cimport fabs


cdef class PenaltyKernel:
    """The elastic-net penalty on the regularised coordinates of ``n_params // block`` blocks."""

    #: Runs in the compiled solvers (its ``cy_*`` methods, without the GIL).
    compiled = True

    def __init__(self, Py_ssize_t n_params, Py_ssize_t block, Py_ssize_t n_reg, double l1,
                 double l2):
        if block < 1 or n_params % block != 0 or n_reg > block or n_reg < 0:
            raise ValueError("inconsistent penalty layout")
        if not (l1 >= 0.0 and l2 >= 0.0 and l1 < float("inf") and l2 < float("inf")):
            raise ValueError(f"penalty weights must be finite and >= 0, got l1={l1!r}, l2={l2!r}")
        self.n_params = n_params
        self.block = block
        self.n_reg = n_reg
        self.l1 = l1
        self.l2 = l2

    cdef double cy_l1_value(self, const double* w) noexcept nogil:
        cdef Py_ssize_t k, j, off
        cdef double acc = 0.0
        if self.l1 == 0.0:
            return 0.0
        for k in range(self.n_params // self.block):
            off = k * self.block
            for j in range(self.n_reg):
                acc += fabs(w[off + j])
        return self.l1 * acc

    cdef double cy_value(self, const double* w) noexcept nogil:
        cdef Py_ssize_t k, j, off
        cdef double a1 = 0.0, a2 = 0.0, x
        for k in range(self.n_params // self.block):
            off = k * self.block
            for j in range(self.n_reg):
                x = w[off + j]
                a1 += fabs(x)
                a2 += x * x
        return self.l1 * a1 + 0.5 * self.l2 * a2

    cdef void cy_prox(self, const double* z, double t, double* out) noexcept nogil:
        cdef Py_ssize_t k, j, i, off
        cdef double thr = t * self.l1, den = 1.0 + t * self.l2, x
        for k in range(self.n_params // self.block):
            off = k * self.block
            for j in range(self.block):
                i = off + j
                x = z[i]
                if j >= self.n_reg:
                    out[i] = x
                elif x > thr:
                    out[i] = (x - thr) / den
                elif x < -thr:
                    out[i] = (x + thr) / den
                else:
                    out[i] = 0.0

    cdef void cy_pseudo_gradient(self, const double* w, const double* g, double* out) noexcept nogil:
        cdef Py_ssize_t k, j, i, off
        cdef double l1 = self.l1, x, gi
        for k in range(self.n_params // self.block):
            off = k * self.block
            for j in range(self.block):
                i = off + j
                x = w[i]
                gi = g[i]
                if j >= self.n_reg:
                    out[i] = gi
                elif x > 0.0:
                    out[i] = gi + l1
                elif x < 0.0:
                    out[i] = gi - l1
                elif gi < -l1:
                    out[i] = gi + l1
                elif gi > l1:
                    out[i] = gi - l1
                else:
                    out[i] = 0.0

    # ---- Python-level API (the PenaltyKernelLike protocol of sqnopt.interfaces) -----------
    cdef int _check(self, const double[::1] w, str name) except -1:
        if w.shape[0] != self.n_params:
            raise ValueError(f"{name} has length {w.shape[0]}, expected n_params={self.n_params}")
        return 0

    def value(self, const double[::1] w) -> float:
        """``P(w) = l1 ||w_reg||_1 + (l2/2) ||w_reg||^2``."""
        self._check(w, "w")
        return self.cy_value(&w[0])

    def l1_value(self, const double[::1] w) -> float:
        """``l1 ||w_reg||_1``, the non-smooth part of ``P(w)``."""
        self._check(w, "w")
        return self.cy_l1_value(&w[0])

    def prox(self, const double[::1] z, double t, double[::1] out) -> None:
        """``out = argmin_u t P(u) + ||u - z||^2 / 2`` (``t > 0``; ``out`` may be ``z``)."""
        self._check(z, "z")
        self._check(out, "out")
        if not t > 0.0:
            raise ValueError(f"the prox step t must be > 0, got {t!r}")
        self.cy_prox(&z[0], t, &out[0])

    def pseudo_gradient(self, const double[::1] w, const double[::1] g, double[::1] out) -> None:
        """``out`` = the pseudo-gradient at ``w`` given the smooth part's gradient ``g``."""
        self._check(w, "w")
        self._check(g, "g")
        self._check(out, "out")
        self.cy_pseudo_gradient(&w[0], &g[0], &out[0])

    def get_state(self) -> dict:
        """A penalty carries nothing from one call to the next."""
        return {}

    def set_state(self, state) -> None:
        """Restore what :meth:`get_state` returned (nothing)."""
        if not isinstance(state, dict):
            raise TypeError(f"set_state expects a dict, got {type(state).__name__}")
