# cython: language_level=3
"""The kernel expansion: kernel Pegasos' iterate representation for the one compiled driver.

Shalev-Shwartz, Singer, Srebro & Cotter, *Pegasos* (Math. Programming 2011), Sec. 4: with a
feature map ``phi`` and ``K(x, x') = phi(x) . phi(x')`` every iterate of a first-order method on
``lam/2 ||w||^2 + (1/N) sum_i loss(y_i (w . phi(x_i) + b))`` started at ``w = 0`` is a
combination of the training points, ``w_t = c_t sum_j beta_j phi(x_j)``, so the iteration runs on
the coefficients alone (``beta_j = alpha_j y_j`` in the paper's notation). The scalar ``c`` is kept
apart (as the scale of the linear scaled iterate) so that the shrinkage ``(1 - eps lam)`` and the
projection onto ``{||w|| <= r}`` are O(1), and ``nu = ||w||^2`` is tracked exactly:

    f_i   = c sum_{j in SV} beta_j K(x_i, x_j) = w_t . phi(x_i)     (margin m_i = y_i (f_i + b))
    c_i   = g_i y_i loss'(m_i) / |B|                  (the gradient in coefficient form)
    c    <- (1 - eps lam) c,  nu <- (1 - eps lam)^2 nu
    for i in B with c_i != 0:  delta_i = -eps c_i
        nu     <- nu + 2 delta_i (w . phi(x_i)) + delta_i^2 K(x_i, x_i)
        beta_i <- beta_i + delta_i / c
    if nu > r^2:  c <- c r / sqrt(nu),  nu <- r^2;    b <- b - eps sum_i c_i

(``w . phi(x_i)`` in the ``nu`` update is the shrunk ``w_t`` plus this step's earlier additions.)
With the hinge loss, ``eps = 1/(lam t)`` and ``r = 1/sqrt(lam)`` this is kernel Pegasos; with the
linear kernel it is linear Pegasos exactly (up to rounding): the same iterates as
``Solver.pegasos(...)`` for the same sampler draws. For integer counts as in the paper's Fig. 3
(``alpha_j`` = number of times ``j`` violated the margin) divide by ``lam t k``; the projection
and ``c`` make the coefficients real numbers in general.

:class:`KernelIterate` is that representation, an
:class:`~sqnopt.solver._iterate.IterateKernel` without a dense iterate (``dense_iterate =
False``: ``w`` lives in the RKHS of ``K``; the representation's state -- ``beta`` for every
training sample, the support, ``c``, ``nu``, ``b`` -- *is* the iterate, reported by
:attr:`KernelIterate.support` / :attr:`KernelIterate.coefficients`). The driver
(:class:`~sqnopt.solver._loop.CompiledLoop`) runs the iteration -- the batches, the step
``eps_t``, the counters, the budgets, the non-finite stops and the checkpoint state -- and makes
one call per iteration, ``cy_first_order``: margins, the minibatch objective (for the driver's
window in the counters), the update and the ball projection. :class:`KernelLoop` is the driver built with it (a
constructor, no iteration of its own).

Kernel values come from dot products: each kernel is ``K(dot, ||x_i||^2, ||x_j||^2)``; a row is
scattered into a dense buffer once and dotted with every support vector (any storage of
:class:`~sqnopt.data.RowData`). Cost per iteration: ``|B| |SV|`` kernel evaluations for the
margins and ``O(|B|^2)`` for the exact ``nu``.
"""

cimport cython
import numpy as np

from libc.math cimport exp, fabs, isfinite, sqrt

from sqnopt.checkpoint import CheckpointError, restore_array, state_array, state_value
from sqnopt.data._rows cimport RowData
from sqnopt.objectives._base cimport MarginObjectiveKernel
from sqnopt.projections._base cimport ProjectionKernel
from sqnopt.schedules._base cimport ScheduleKernel
from sqnopt.solver._iterate cimport (
    ITERATE_NONFINITE, ITERATE_NONFINITE_LOSS, ITERATE_STEPPED, IterateKernel,
)
from sqnopt.solver._loop cimport CompiledLoop, Counters
from sqnopt.solver._sampler cimport Sampler
from sqnopt.steps._base cimport StepKernel


# Fold the scale into the coefficients when |c| falls below this (or becomes exactly zero: the
# first Pegasos step has 1 - eps lam = 0).
cdef double SCALE_MIN = 1e-9


cdef class MercerKernel:
    """``K(x_i, x_j)`` as a function of ``x_i . x_j``, ``||x_i||^2`` and ``||x_j||^2``."""

    cdef double cy_eval(self, double dot, double sq_i, double sq_j) noexcept nogil:
        return dot

    def __call__(self, double dot, double sq_i, double sq_j) -> float:
        return self.cy_eval(dot, sq_i, sq_j)


cdef class LinearMercer(MercerKernel):
    """``K = x_i . x_j``."""
    pass


cdef class RBFMercer(MercerKernel):
    """``K = exp(-gamma ||x_i - x_j||^2)``, the squared distance clipped at 0."""

    cdef readonly double gamma

    def __init__(self, double gamma):
        if not gamma > 0:
            raise ValueError("gamma must be > 0")
        self.gamma = gamma

    cdef double cy_eval(self, double dot, double sq_i, double sq_j) noexcept nogil:
        cdef double d2 = sq_i + sq_j - 2.0 * dot
        return exp(-self.gamma * (d2 if d2 > 0.0 else 0.0))


cdef class PolyMercer(MercerKernel):
    """``K = (gamma x_i . x_j + coef0)^degree``."""

    cdef readonly double gamma
    cdef readonly double coef0
    cdef readonly int degree

    def __init__(self, double gamma, double coef0, int degree):
        if not gamma > 0 or degree < 1:
            raise ValueError("gamma must be > 0 and degree >= 1")
        self.gamma = gamma
        self.coef0 = coef0
        self.degree = degree

    cdef double cy_eval(self, double dot, double sq_i, double sq_j) noexcept nogil:
        cdef double base = self.gamma * dot + self.coef0
        cdef double out = 1.0
        cdef int p
        for p in range(self.degree):
            out *= base
        return out


@cython.final
cdef class KernelIterate(IterateKernel):
    """The iterate ``w = c sum_j beta_j phi(x_j)`` (and ``b``) with ``nu = ||w||^2``, bound to
    one margin objective over rows without an intercept column (see the module docstring).
    ``n_params`` counts the coefficients (one per training sample)."""

    kind = "kernel"
    dense_iterate = False

    cdef RowData rows
    cdef MercerKernel kernel
    cdef MarginObjectiveKernel obj
    cdef double lam
    cdef bint has_intercept
    cdef double[::1] beta       # per training sample; w = c sum_j beta_j phi(x_j)
    cdef double[::1] sqn        # ||x_j||^2
    cdef double[::1] buf        # a dense copy of one row
    cdef Py_ssize_t[::1] sv     # support indices, in order of first use
    cdef unsigned char[::1] in_sv
    # per batch position: w_t . phi(x_i), the coefficient c_i, the step's addition delta_i
    cdef double[::1] f, coef, add
    cdef readonly Py_ssize_t n_sv
    cdef readonly double scale          # c
    cdef readonly double intercept      # b
    cdef readonly Py_ssize_t n_kernel_evals

    def __init__(self, MarginObjectiveKernel objective, const double[::1] row_sqnorms,
                 MercerKernel kernel, bint fit_intercept):
        cdef RowData rows = objective.data
        IterateKernel.__init__(self, rows.n_samples, 0)
        if objective.real_targets:
            raise ValueError("the kernel expansion fits binary labels with a margin loss; this "
                             "objective has real targets (a regression loss)")
        if rows.has_intercept:
            raise ValueError("the kernel expansion needs rows without an intercept column (it "
                             "keeps b itself: fit_intercept)")
        if objective.n_blocks != 1:
            raise ValueError("the kernel expansion needs a single-block (binary margin) objective")
        n = rows.n_samples
        if row_sqnorms.shape[0] != n:
            raise ValueError("row_sqnorms must hold one entry per sample")
        self.rows = rows
        self.kernel = kernel
        self.obj = objective
        self.lam = objective.lam
        self.has_intercept = fit_intercept
        self.beta = np.zeros(n)
        self.sqn = np.array(row_sqnorms, dtype=np.float64)
        self.buf = np.zeros(rows.n_features)
        self.sv = np.zeros(n, dtype=np.intp)
        self.in_sv = np.zeros(n, dtype=np.uint8)
        self.f = np.zeros(n)
        self.coef = np.zeros(n)
        self.add = np.zeros(n)
        self.n_sv = 0
        self.scale = 1.0
        self.sqnorm = 0.0
        self.intercept = 0.0
        self.n_kernel_evals = 0

    @property
    def support(self):
        """Support indices (samples with a coefficient, in order of first use)."""
        return np.array(self.sv[:self.n_sv])

    @property
    def coefficients(self):
        """``c * beta_j`` for the support indices: ``w = sum_j coef_j phi(x_j)``."""
        idx = np.asarray(self.sv[:self.n_sv])
        return self.scale * np.asarray(self.beta)[idx]

    cdef double _kernel_sum(self, Py_ssize_t i) noexcept nogil:
        """``sum_{j in SV} beta_j K(x_i, x_j)``."""
        cdef Py_ssize_t p, j
        cdef double acc = 0.0, sq_i = self.sqn[i]
        cdef double* buf = &self.buf[0]
        if self.n_sv == 0:
            return 0.0
        self.rows.row_axpy(i, 1.0, buf)           # buf = x_i
        for p in range(self.n_sv):
            j = self.sv[p]
            acc += self.beta[j] * self.kernel.cy_eval(self.rows.row_dot(j, buf), sq_i,
                                                      self.sqn[j])
        self.rows.row_axpy(i, -1.0, buf)          # back to exactly 0
        self.n_kernel_evals += self.n_sv
        return acc

    cdef double _k(self, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
        cdef double* buf = &self.buf[0]
        cdef double d
        self.rows.row_axpy(i, 1.0, buf)
        d = self.rows.row_dot(j, buf)
        self.rows.row_axpy(i, -1.0, buf)
        self.n_kernel_evals += 1
        return self.kernel.cy_eval(d, self.sqn[i], self.sqn[j])

    cdef int cy_first_order(self, const Py_ssize_t* batch, Py_ssize_t size,
                            const Py_ssize_t* const* ahead, const Py_ssize_t* ahead_sizes,
                            Py_ssize_t n_ahead, double eps, double radius, Py_ssize_t n_avg,
                            double* loss_out) noexcept nogil:
        """The iteration's gradient, direction and update stages on the coefficients (the
        module docstring and ``_iterate.pxd``; no average: ``n_avg`` is 0)."""
        cdef Py_ssize_t s, q, i
        cdef double inv = 1.0 / size, total = 0.0, wsum = 0.0, gb = 0.0, yi, gi, m, dl, cf, fs, d
        cdef double c = self.scale, nu = self.sqnorm, b = self.intercept, lam = self.lam
        cdef double shrink, c_new, b_new, wphi, sc
        cdef const double* y = self.rows.y
        cdef const double* gw = self.rows.grad_weight
        cdef double* f = &self.f[0]
        cdef double* coef = &self.coef[0]
        cdef double* add = &self.add[0]
        # 1. margins at w_t: the minibatch objective and the coefficients c_i
        for s in range(size):
            i = batch[s]
            fs = self._kernel_sum(i) * c            # w_t . phi(x_i)
            f[s] = fs
            yi = y[i]
            gi = gw[i]
            wsum += gi
            m = yi * (fs + b)
            total += gi * self.obj.loss_and_dloss_dmargin(m, &dl)
            cf = inv * gi * yi * dl
            coef[s] = cf
            if cf != 0.0:
                gb += cf
        loss_out[0] = total * inv + 0.5 * lam * nu
        self.batch_loss = total
        self.batch_weight = wsum
        if not isfinite(loss_out[0]):
            return ITERATE_NONFINITE_LOSS
        # 2. ||w_{t+1}||^2 before anything changes: the shrinkage, then each addition
        # delta_i phi(x_i) with w . phi(x_i) = the shrunk w_t's plus this step's earlier ones
        shrink = 1.0 - eps * lam
        c_new = c * shrink
        nu = nu * shrink * shrink
        for s in range(size):
            cf = coef[s]
            if cf == 0.0:
                add[s] = 0.0
                continue
            i = batch[s]
            d = -eps * cf
            wphi = f[s] * shrink
            for q in range(s):
                if add[q] != 0.0:
                    wphi += add[q] * self._k(batch[q], i)
            nu += 2.0 * d * wphi + d * d * self._k(i, i)
            add[s] = d
        if nu < 0.0:
            nu = 0.0
        b_new = b - eps * gb if self.has_intercept else b
        if not (isfinite(nu) and isfinite(c_new) and isfinite(b_new)):
            return ITERATE_NONFINITE
        # 3. the update: c, then beta_i += delta_i / c for the batch points with c_i != 0
        if c_new == 0.0 or fabs(c_new) < SCALE_MIN:
            self._fold(c_new)
        else:
            self.scale = c_new
        for s in range(size):
            if add[s] == 0.0:
                continue
            i = batch[s]
            self.beta[i] += add[s] / self.scale
            if not self.in_sv[i]:
                self.in_sv[i] = 1
                self.sv[self.n_sv] = i
                self.n_sv += 1
        # 4. the projection onto {||w|| <= radius}: a rescaling of c
        if radius > 0.0 and nu > radius * radius:
            sc = radius / sqrt(nu)
            self.scale *= sc
            nu *= sc * sc
        self.sqnorm = nu
        self.intercept = b_new
        return ITERATE_STEPPED

    cdef void cy_sync(self, Py_ssize_t n_avg) noexcept nogil:
        """Nothing to write: the coefficients are the iterate (no dense ``w``)."""
        pass

    cdef void _fold(self, double c_new) noexcept nogil:
        """``beta <- c_new beta`` and ``c = 1``; forget the support when ``c_new == 0``."""
        cdef Py_ssize_t p, j
        if c_new == 0.0:
            for p in range(self.n_sv):
                j = self.sv[p]
                self.beta[j] = 0.0
                self.in_sv[j] = 0
            self.n_sv = 0
        else:
            for p in range(self.n_sv):
                self.beta[self.sv[p]] *= c_new
        self.scale = 1.0

    def reload(self, Py_ssize_t n_avg) -> None:
        """A representation without a dense iterate has nothing to rebuild from."""
        raise CheckpointError("the kernel expansion has no dense iterate to rebuild from: "
                              "restore the loop's state with set_state (its counters, sampler "
                              "and loop state together)")

    def get_state(self) -> dict:
        """The representation (copies): ``beta``, the support, ``c``, ``nu``, ``b`` and the
        kernel-evaluation count."""
        return {"loop": "kernel", "n": int(self.beta.shape[0]), "beta": np.array(self.beta),
                "support": np.array(self.sv[:self.n_sv]), "scale": float(self.scale),
                "sqnorm": float(self.sqnorm), "intercept": float(self.intercept),
                "n_kernel_evals": int(self.n_kernel_evals)}

    def check_state(self, state) -> None:
        """Raise :class:`~sqnopt.checkpoint.CheckpointError` unless ``state`` is a kernel
        expansion over as many samples."""
        if state.get("loop") != "kernel":
            raise CheckpointError(f"the checkpoint is of the {state.get('loop')!r} loop, this "
                                  "solve runs the kernel expansion")
        n = state_value(state, "n", int, self)
        if n != self.beta.shape[0]:
            raise CheckpointError(f"KernelIterate: the checkpoint has {n} samples (field 'n'), "
                                  f"this solve {self.beta.shape[0]}: it is of other data")

    def set_state(self, state) -> None:
        """Restore what :meth:`get_state` returned."""
        self.check_state(state)
        support = state_array(state, "support", self, np.intp)
        n = self.beta.shape[0]
        if support.shape[0] > n or (support.shape[0] and (support.min() < 0 or support.max() >= n)):
            raise CheckpointError("KernelIterate: the checkpointed support does not fit "
                                  f"{n} samples: the checkpoint is of other data")
        if np.unique(support).shape[0] != support.shape[0]:
            raise CheckpointError("KernelIterate: the checkpointed support lists a sample twice: "
                                  "the checkpoint is damaged or was edited")
        values = {key: state_value(state, key, float, self) for key in ("scale", "intercept")}
        sqnorm = state_value(state, "sqnorm", float, self, lo=0.0)
        n_kernel_evals = state_value(state, "n_kernel_evals", int, self, lo=0)
        restore_array(self.beta, state, "beta", self)
        np.asarray(self.in_sv)[:] = 0
        np.asarray(self.in_sv)[support] = 1
        np.asarray(self.sv)[:support.shape[0]] = support
        self.n_sv = support.shape[0]
        self.scale = values["scale"]
        self.sqnorm = sqnorm
        self.intercept = values["intercept"]
        self.n_kernel_evals = n_kernel_evals


cdef class KernelLoop(CompiledLoop):
    """The driver (:class:`~sqnopt.solver._loop.CompiledLoop`) with the kernel expansion
    (:class:`KernelIterate`): first-order steps of a margin objective in a Mercer kernel's RKHS.

    ``schedule`` gives ``|B_t|``, ``step`` ``eps_t`` (a function of ``t``), ``projection`` none
    or a ball (``ball_radius``: ``||w|| <= r`` in the RKHS); the ``run`` contract of the driver
    (``run(n_iter, max_samples)`` returns a ``LOOP_*`` code; ``counters`` is the record;
    ``get_state`` / ``set_state`` carry the representation and the driver's position).
    """

    def __init__(self, MarginObjectiveKernel objective, KernelIterate iterate,
                 ScheduleKernel schedule, StepKernel step, ProjectionKernel projection,
                 Sampler sampler, Counters counters):
        if iterate.obj is not objective:
            raise ValueError("the kernel expansion is bound to another objective")
        if sampler.n_samples != objective.data.n_samples:
            raise ValueError("the sampler draws from another number of samples")
        self.sched = schedule
        self.step = step
        self.sampler = sampler
        self.counters = counters
        self.average = False
        self.avg_start = 0
        self._iterate_setup(objective, iterate, projection)

    @property
    def representation(self) -> KernelIterate:
        """The kernel expansion this loop runs."""
        return <KernelIterate> self.iterate
