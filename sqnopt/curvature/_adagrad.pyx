# cython: language_level=3
"""Diagonal AdaGrad (Duchi, Hazan & Singer, *Adaptive subgradient methods*, JMLR 2011, Sec. 1.1
and Fig. 1 with the diagonal matrix):

    G_t = G_0 + sum_{tau <= t} g_tau * g_tau          (coordinatewise)
    d_t = g_t / (delta + sqrt(G_t))                    (H_t = diag(delta + sqrt(G_t))^-1)

and the driver moves ``w <- w - eta_t d_t`` (the paper's ``eta``: a constant step rule).

Each call of ``direction`` is one AdaGrad step: it first adds ``g * g`` to the accumulator, then
scales. ``matvec`` / ``to_dense`` apply the current ``H`` without accumulating.

**Composite form** (``composite``: the kernel declares ``composite_step`` and
``adagrad_accumulator``). The objective is ``F(w) = f(w) + phi(w)`` with the loss part ``f`` and
``phi(w) = (lam/2) ||w_reg||^2``; AdaGrad's composite mirror-descent update (COMID; Duchi et
al. 2011, Sec. 3, eq. 4 with ``psi_t(w) = (1/2) w' diag(s_t) w``) linearises only ``f`` and keeps
``phi`` exact:

    w_{t+1} = argmin_w  eta <g_t, w> + eta phi(w) + (1/2) ||w - w_t||^2_{diag(s_t)},

where ``g_t`` is the minibatch gradient of the *loss* part, ``G_t = G_{t-1} + g_t * g_t`` and
``s_t = delta + sqrt(G_t)``. Per coordinate, with ``lam_j = lam`` (0 on intercepts):

    w_{t+1,j} = (s_j w_{t,j} - eta g_j) / (s_j + eta lam_j).

**With an L1 term** (``l1 > 0``: the elastic net ``phi(w) = l1 ||w_reg||_1 + (lam/2)
||w_reg||^2``) the same argmin is AdaGrad's proximal step (Duchi et al. 2011, Sec. 3, eq. 4;
the diagonal closed form of their Sec. 5.1, l1 regularisation, composite mirror descent):
soft thresholding of ``z_j = s_j w_{t,j} - eta g_j`` at ``eta l1`` (``l1_j = 0`` on
intercepts), then the L2 shrinkage,

    w_{t+1,j} = sign(z_j) max(|z_j| - eta l1_j, 0) / (s_j + eta lam_j),

so a coordinate whose ``|z_j|`` does not exceed ``eta l1`` is an exact zero. (``l1 = 0`` is the
formula above.)

**FTRL-Proximal form** (``ftrl``, declared as ``ftrl_proximal``; McMahan et al., *Ad click prediction: a view from the
trenches*, KDD 2013, Algorithm 1, per-coordinate steps; McMahan, *Follow-the-regularized-leader
and mirror descent*, AISTATS 2011, for why): the regulariser is taken *cumulatively*, not
linearised step by step. With ``z`` the dual sum and ``t`` the gradients summed,

    s_j = delta + sqrt(G_j),  sigma_j = (s_j(t+1) - s_j(t)) / eta,
    z_j <- z_j + g_j - sigma_j w_{t,j},
    w_{t+1,j} = argmin_w  z_j w + (t+1) phi_j(w) + (s_j / (2 eta)) w^2
              = 0                                                if |z_j| <= (t+1) l1
              = -(z_j - sign(z_j) (t+1) l1) / (s_j / eta + (t+1) lam_j)   otherwise,

the minimiser of the summed linearised losses plus ``t`` times ``phi`` (the mean objective's
penalty, scaled to the summed losses) plus the AdaGrad proximal terms centred at the past
iterates. A coordinate is zero exactly when its *averaged* gradient evidence ``|z_j| / t`` is
within ``l1`` -- the optimality condition of a zero -- where the step-by-step form zeroes it
only after a single example's gradient did not kick it off zero: on sparse data the summed
form's models are far sparser at the same loss (McMahan 2011 compares the two). A coordinate
without gradient keeps ``z_j`` and ``G_j``: its value is a closed form of ``(z_j, G_j, t)``,
read when needed -- the sparse iterate keeps no pending factors at all. The first step centres
the sums at the starting point (``z = -(s / eta) w_0``, so that the formula gives ``w_0`` back;
``delta > 0`` is needed to start elsewhere than 0). Intercepts take ``l1_j = lam_j = 0``.

The regulariser never enters the accumulator, and a coordinate with no loss gradient only
shrinks by ``s_j / (s_j + eta lam_j)`` in ``(0, 1]``: any step is stable (there is no step above
which the L2 term overshoots, as ``1 - eta lam`` does in the plain form), and ``k`` such steps
are one factor -- the just-in-time form of :mod:`sqnopt.solver._adaptive_loop`, O(nnz) per step
on sparse rows. The driver calls ``cy_composite_step`` with the minibatch gradient of the whole
objective ``g + lam w_reg``; the kernel takes the loss part back out (``g_j - lam_j w_j``).
Where ``s_j + eta lam_j`` is 0 (``delta = 0``, nothing accumulated, no regulariser) the
coordinate stays as it is.
"""

import numpy as np

from libc.math cimport isfinite, sqrt

from sqnopt.checkpoint import restore_array, state_value
from sqnopt.curvature._base cimport CurvatureKernel


cdef class AdaGradKernel(CurvatureKernel):
    """Diagonal AdaGrad; with ``composite``, its composite form (see the module docstring) for
    an objective with L2 regularisation ``lam`` and the L1 weight ``l1``, whose parameters are
    blocks of ``block`` coordinates (0: one block of ``dim``), the last of each an unregularised
    intercept when ``intercept``."""

    def __init__(self, Py_ssize_t dim, double delta, double initial_accumulator,
                 bint composite=False, double lam=0.0, Py_ssize_t block=0,
                 bint intercept=False, double l1=0.0, bint ftrl=False):
        CurvatureKernel.__init__(self, dim)
        if not delta >= 0 or not initial_accumulator >= 0:
            raise ValueError("delta and initial_accumulator must be >= 0")
        if block == 0:
            block = dim
        if not lam >= 0 or lam == float("inf") or block < 1 or dim % block != 0 or (
                intercept and block < 2):
            raise ValueError("lam must be finite and >= 0, and dim a multiple of block (>= 2 "
                             "with an intercept)")
        if not (l1 >= 0 and l1 < float("inf")) or (l1 > 0 and not composite):
            raise ValueError(f"l1 must be finite and >= 0 (and 0 unless composite), got {l1!r}")
        if ftrl and not composite:
            raise ValueError("the FTRL-Proximal form is a composite form: pass composite=True")
        self.delta = delta
        self._accum = np.full(dim, initial_accumulator)
        self.composite_step = composite
        self.adagrad_accumulator = composite
        self.lam = lam
        self.l1 = l1
        self.ftrl_proximal = ftrl
        self._z = np.zeros(dim if ftrl else 1)
        self.ftrl_t = 0.0
        self.ftrl_eta = 0.0
        self.block = block
        self.intercept = intercept

    cdef double* cy_accumulator(self) noexcept nogil:
        return &self._accum[0] if self.adagrad_accumulator else NULL

    cdef int cy_composite_step(self, const double* w, const double* grad, double eps,
                               double* w_next) noexcept nogil:
        """The composite step (module docstring) of every coordinate: ``w_next``, and ``G``
        once every new value is known to be finite (a second pass, with the same arithmetic)."""
        cdef Py_ssize_t b, j, r, n_reg = self.block - 1 if self.intercept else self.block
        cdef double lam_j, gl, acc, s, den, z, thr
        cdef double delta = self.delta, thr_reg = eps * self.l1
        cdef double* G = &self._accum[0]
        if not self.composite_step:
            return -1
        if self.ftrl_proximal:
            return self._ftrl_step(w, grad, eps, w_next)
        for b in range(self.dim // self.block):
            j = b * self.block
            for r in range(self.block):
                lam_j = self.lam if r < n_reg else 0.0
                gl = grad[j + r] - lam_j * w[j + r]
                acc = G[j + r] + gl * gl
                s = delta + sqrt(acc)
                den = s + eps * lam_j
                thr = thr_reg if r < n_reg else 0.0
                if not den > 0.0:
                    w_next[j + r] = w[j + r]
                elif thr == 0.0:
                    w_next[j + r] = (s * w[j + r] - eps * gl) / den
                else:
                    z = s * w[j + r] - eps * gl
                    w_next[j + r] = ((z - thr) / den if z > thr else
                                     (z + thr) / den if z < -thr else 0.0)
                if not (isfinite(w_next[j + r]) and isfinite(acc)):
                    return -1
        for b in range(self.dim // self.block):
            j = b * self.block
            for r in range(self.block):
                lam_j = self.lam if r < n_reg else 0.0
                gl = grad[j + r] - lam_j * w[j + r]
                G[j + r] = G[j + r] + gl * gl
        return 0

    cdef int _ftrl_step(self, const double* w, const double* grad, double eps,
                        double* w_next) noexcept nogil:
        """One FTRL-Proximal step of every coordinate (module docstring): ``w_next``, then
        ``z``, ``G`` and ``t`` once every new value is known to be finite."""
        cdef Py_ssize_t b, j, r, i, n_reg = self.block - 1 if self.intercept else self.block
        cdef double lam_j, l1_j, gl, acc, so, sn, zn, t1 = self.ftrl_t + 1.0
        cdef double delta = self.delta
        cdef double* G = &self._accum[0]
        cdef double* z = &self._z[0]
        if not (eps > 0.0 and isfinite(eps)):
            return -1
        if self.ftrl_t == 0.0:      # the first step: the sums centred at the starting point
            for i in range(self.dim):
                z[i] = -((delta + sqrt(G[i])) / eps) * w[i]
        for b in range(self.dim // self.block):
            j = b * self.block
            for r in range(self.block):
                i = j + r
                lam_j = self.lam if r < n_reg else 0.0
                l1_j = self.l1 if r < n_reg else 0.0
                gl = grad[i] - lam_j * w[i]
                acc = G[i] + gl * gl
                so = delta + sqrt(G[i])
                sn = delta + sqrt(acc)
                zn = z[i] + gl - (sn - so) / eps * w[i]
                w_next[i] = ftrl_value(zn, sn, t1, l1_j, lam_j, eps)
                if not (isfinite(w_next[i]) and isfinite(acc) and isfinite(zn)):
                    return -1
        for b in range(self.dim // self.block):
            j = b * self.block
            for r in range(self.block):
                i = j + r
                lam_j = self.lam if r < n_reg else 0.0
                gl = grad[i] - lam_j * w[i]
                acc = G[i] + gl * gl
                so = delta + sqrt(G[i])
                sn = delta + sqrt(acc)
                z[i] = z[i] + gl - (sn - so) / eps * w[i]
                G[i] = acc
        self.ftrl_t = t1
        self.ftrl_eta = eps
        return 0

    cdef void cy_direction(self, const double* grad, double* out) noexcept nogil:
        cdef Py_ssize_t j
        cdef double g, den
        for j in range(self.dim):
            g = grad[j]
            self._accum[j] += g * g
            den = self.delta + sqrt(self._accum[j])
            out[j] = g / den if den > 0.0 else 0.0

    @property
    def accumulator(self):
        """``G`` (a copy)."""
        return np.array(self._accum)

    def matvec(self, g):
        """``H g`` with the current accumulator (no update)."""
        gg = np.ascontiguousarray(g, dtype=np.float64)
        if gg.shape != (self.dim,):
            raise ValueError(f"vector of length {gg.shape} does not match dim={self.dim}")
        den = self.delta + np.sqrt(np.asarray(self._accum))
        return np.divide(gg, den, out=np.zeros_like(gg), where=den > 0)

    def to_dense(self):
        """``diag(delta + sqrt(G))^-1`` (zero where the denominator is zero)."""
        den = self.delta + np.sqrt(np.asarray(self._accum))
        return np.diag(np.divide(1.0, den, out=np.zeros_like(den), where=den > 0))

    @property
    def regularized(self):
        """``lam_j / lam``: 1 on the coordinates the composite form regularises, 0 on
        intercepts (a new array)."""
        reg = np.ones(self.dim)
        if self.intercept:
            reg[self.block - 1::self.block] = 0.0
        return reg

    @property
    def dual(self):
        """FTRL-Proximal: the dual sums ``z`` (a copy)."""
        return np.array(self._z)

    def get_state(self) -> dict:
        state = CurvatureKernel.get_state(self)
        state["accumulator"] = np.array(self._accum)
        if self.ftrl_proximal:
            state["dual"] = np.array(self._z)
            state["ftrl_t"] = float(self.ftrl_t)
            state["ftrl_eta"] = float(self.ftrl_eta)
        return state

    def set_state(self, state) -> None:
        CurvatureKernel.set_state(self, state)
        restore_array(self._accum, state, "accumulator", self, lo=0.0)
        if self.ftrl_proximal:
            restore_array(self._z, state, "dual", self)
            self.ftrl_t = state_value(state, "ftrl_t", float, self, lo=0.0)
            self.ftrl_eta = state_value(state, "ftrl_eta", float, self, lo=0.0)
