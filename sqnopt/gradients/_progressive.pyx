# cython: language_level=3
"""Progressive batching: the minibatch gradient with a sample size chosen by the inner-product
test and (optionally) the orthogonality test (Bollapragada, Byrd & Nocedal, "Adaptive sampling
strategies for stochastic optimization", SIAM J. Optim. 2018 -- the "augmented inner-product
test"; Bollapragada, Mudigere, Nocedal, Shi & Tang, ICML 2018, eqs. 2.10-2.13).

The estimate is the minibatch gradient ``g = s(w, B)``. The direction ``-H g`` of a
quasi-Newton method is a descent direction for ``F`` in expectation when the inner-product test

    E[(grad F_i' grad F)^2] - ||grad F||^4  <=  theta^2 |B| ||grad F||^4

holds; its sample version on the batch is

    Var_{i in B}(grad F_i(w)' g) / |B|  <=  theta^2 ||g||^4,

with ``Var`` the sample variance (divisor ``|B| - 1``). The orthogonality test bounds the
part of the per-sample gradients orthogonal to the gradient,

    E || grad F_i - (grad F_i' grad F / ||grad F||^2) grad F ||^2  <=  nu^2 |B| ||grad F||^2,

in its sample version with ``g`` for ``grad F`` and the sample variance of the orthogonal
parts ``u_i = P grad F_i`` (``P`` the projector orthogonal to ``g``; their mean over the batch
is ``P g = 0``, so the regulariser's common term ``lam w_reg`` drops out):

    Var_perp = ( sum_i ||d_i||^2 - (d_i' g)^2 / ||g||^2  -  |B| (||d||^2 - (d' g)^2 / ||g||^2) )
               / (|B| - 1)  <=  nu^2 |B| ||g||^2,

with ``d_i = grad F_i - lam w_reg`` and ``d`` their batch mean. When a test fails the next
batch has

    |B_next| = ceil( max( Var / (theta^2 ||g||^4),  Var_perp / (nu^2 ||g||^2) ) )

samples over the failed tests (never fewer than before, at most ``N``; the paper enlarges the
current batch instead: here the new size applies from the next iteration). For a linear-score
objective ``d_i = sum_k c_ik d score_k(x_i)/dw`` with ``c_i`` the score derivatives, so
``d_i' g = sum_k c_ik score_k(x_i; g)`` (one more row product per sample, ``cy_rows_dot``) and
``||d_i||^2`` comes from the row norms (``cy_rows_sqnorm``: ``c_i^2 ||x_i||^2`` for margin
losses, a read of the row's values). The gradient itself is assembled from the same score
derivatives (``cy_score_derivatives``, ``cy_rows_axpy``, ``cy_reg_gradient_value``), so the
tests add a row product and a row norm, not a second gradient; they are counted in ``extra``
as one more touch of each batch sample. At ``|B| = N`` there is nothing to grow and no test is
run. ``nu = 0``: the inner-product test alone.

Capabilities: ``sizes_batches`` (the driver draws batches of ``cy_batch_size(scheduled)
= min(max(scheduled, size), N)``; the schedule's size is the floor, e.g. the initial batch) and
``batch_gradient`` (the estimate is ``s(w, B)``: a line search's gradient at the accepted point
is reused when the batch repeats -- the whole data set once the batch has grown to ``N`` -- and
the tests, which could not grow the batch there, are not run).
"""

from libc.math cimport NAN, ceil
from libc.string cimport memset

import numpy as np

from sqnopt.checkpoint import CheckpointError, state_value

from sqnopt.gradients._base cimport GradientKernel
from sqnopt.objectives._base cimport ObjectiveKernel


cdef class ProgressiveBatchKernel(GradientKernel):
    def __init__(self, Py_ssize_t dim, double theta, double nu=0.0):
        GradientKernel.__init__(self, dim)
        if not theta > 0.0:
            raise ValueError("theta must be > 0")
        if not nu >= 0.0:
            raise ValueError("nu must be >= 0 (0: no orthogonality test)")
        self.theta = theta
        self.nu = nu
        self.batch_gradient = True
        self.sizes_batches = True
        self.n_samples = 0
        self.n_scores = 0
        self.size = 0
        self.n_tests = 0
        self.n_increases = 0
        self.last_ratio = NAN
        self.last_ortho_ratio = NAN

    def bind(self, ObjectiveKernel objective):
        """Size the scratch for the objective's data; the batch size and the test's counts start
        again from the schedule's size (new data, new variance)."""
        GradientKernel.bind(self, objective)
        K = objective.n_scores
        N = objective.data.n_samples
        if K < 1:
            raise TypeError(f"progressive batching needs an objective kernel with per-sample "
                            f"score derivatives (n_scores > 0); {type(objective).__name__} has "
                            "none")
        if not np.all(np.isfinite(objective.rows_dot(np.zeros(1, dtype=np.intp),
                                                     np.zeros(objective.n_params)))):
            raise TypeError(f"progressive batching needs the scores of a vector "
                            f"(cy_rows_dot); {type(objective).__name__} does not provide them")
        if self.nu > 0.0 and not np.all(np.isfinite(objective.rows_sqnorm(
                np.zeros(1, dtype=np.intp), np.ones(K)))):
            raise TypeError(f"the orthogonality test needs the norms of the per-sample "
                            f"gradients (cy_rows_sqnorm); {type(objective).__name__} does not "
                            "provide them: pass nu=None for the inner-product test alone")
        self.n_scores = K
        self.n_samples = N
        self.coef = np.zeros(N * K)             # a batch holds at most N samples
        self.dots = np.zeros(N * K)
        self.sqn = np.zeros(N if self.nu > 0.0 else 1)
        self.size = 0
        self.n_tests = 0
        self.n_increases = 0
        self.last_ratio = NAN
        self.last_ortho_ratio = NAN

    cdef Py_ssize_t cy_batch_size(self, Py_ssize_t scheduled) noexcept nogil:
        cdef Py_ssize_t b = scheduled if scheduled > self.size else self.size
        if self.n_samples > 0 and b > self.n_samples:
            b = self.n_samples
        return b

    cdef double cy_estimate(self, ObjectiveKernel obj, const double* w, const Py_ssize_t* batch,
                            Py_ssize_t size, double* out, double* plain,
                            Py_ssize_t* extra) noexcept nogil:
        cdef Py_ssize_t t, k, K = self.n_scores, N = self.n_samples, n = self.dim
        cdef double* coef
        cdef double* dots
        cdef double* sqn
        cdef double total, reg, a, mean, var, gg, dd, need, th2, nu2, perp
        cdef double inv = 1.0 / size
        cdef bint ortho = self.nu > 0.0
        cdef bint fail, test
        if K == 0 or N != obj.data.n_samples or K != obj.n_scores:
            return NAN                  # not bound to this objective (the driver binds it)
        coef = &self.coef[0]
        dots = &self.dots[0]
        total = obj.cy_score_derivatives(w, batch, size, coef)
        memset(out, 0, n * sizeof(double))
        obj.cy_rows_axpy(batch, size, coef, inv, out)
        test = size >= 2 and size < N
        dd = 0.0
        if test and ortho:              # ||d||^2 of the data part d = g - lam w_reg
            for t in range(n):
                dd += out[t] * out[t]
        reg = obj.cy_reg_gradient_value(w, out)
        if plain != NULL and plain != out:
            for t in range(n):
                plain[t] = out[t]
        if test:
            obj.cy_rows_dot(batch, size, out, dots)
            extra[0] += size
            mean = 0.0
            for t in range(size):
                a = 0.0
                for k in range(K):
                    a += coef[t * K + k] * dots[t * K + k]
                dots[t] = a             # row t's products are read before slot t is written
                mean += a
            mean = mean / size
            var = 0.0
            for t in range(size):
                var += (dots[t] - mean) * (dots[t] - mean)
            var = var / (size - 1)
            gg = 0.0
            for t in range(n):
                gg += out[t] * out[t]
            th2 = self.theta * self.theta
            self.n_tests += 1
            self.last_ratio = var / (size * th2 * gg * gg)
            need = 0.0
            fail = var > size * th2 * gg * gg       # the test fails (also for g = 0, Var > 0)
            if fail:
                need = var / (th2 * gg * gg)
            if ortho:
                # orthogonality test: the sample variance of the parts of grad F_i orthogonal
                # to g, sum_t ||d_t||^2 - (d_t' g)^2 / ||g||^2 minus |B| times that of their
                # mean d (the regulariser's common shift drops out)
                sqn = &self.sqn[0]
                obj.cy_rows_sqnorm(batch, size, coef, sqn)
                nu2 = self.nu * self.nu
                if gg > 0.0:
                    perp = 0.0
                    for t in range(size):
                        perp += sqn[t] - dots[t] * dots[t] / gg
                    perp = (perp - size * (dd - mean * mean / gg)) / (size - 1)
                else:                   # g = 0: every sample's gradient is orthogonal to it
                    perp = 0.0
                    for t in range(size):
                        perp += sqn[t]
                    perp = perp / (size - 1)
                self.last_ortho_ratio = perp / (size * nu2 * gg)
                if perp > size * nu2 * gg:
                    fail = True
                    if perp / (nu2 * gg) > need:
                        need = perp / (nu2 * gg)
            if fail:
                if need >= N:
                    t = N
                else:
                    t = <Py_ssize_t> ceil(need)
                if t > self.size:
                    self.size = t
                    self.n_increases += 1
        return total * inv + reg

    def get_state(self) -> dict:
        """The size the test asked for and its counts."""
        state = GradientKernel.get_state(self)
        state.update(n_samples=int(self.n_samples), size=int(self.size),
                     n_tests=int(self.n_tests), n_increases=int(self.n_increases),
                     last_ratio=float(self.last_ratio),
                     last_ortho_ratio=float(self.last_ortho_ratio))
        return state

    def set_state(self, state) -> None:
        GradientKernel.set_state(self, state)
        n = state_value(state, "n_samples", int, self)
        if n != self.n_samples:
            raise CheckpointError(f"ProgressiveBatchKernel: the checkpoint is for {n} samples "
                                  f"(field 'n_samples'), this kernel is bound to {self.n_samples}:"
                                  " the checkpoint is of other data")
        size = state_value(state, "size", int, self, lo=0, hi=self.n_samples)
        n_tests = state_value(state, "n_tests", int, self, lo=0)
        n_increases = state_value(state, "n_increases", int, self, lo=0)
        # the ratios of the last test: NaN before the first
        last_ratio = state_value(state, "last_ratio", float, self, finite=False)
        self.size = size
        self.n_tests = n_tests
        self.n_increases = n_increases
        self.last_ratio = last_ratio
        if "last_ortho_ratio" in state:         # absent from checkpoints of the test alone
            self.last_ortho_ratio = state_value(state, "last_ortho_ratio", float, self,
                                                finite=False)
