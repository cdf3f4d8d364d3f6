# cython: language_level=3
"""Compiled log-linear objectives.

A log-linear model over a finite output set ``Omega = {0, ..., K-1}``

    p(y | x_i, theta) = h_i(y) exp(theta . f_i(y)) / Z_i(theta)

has the per-sample loss ``l_i(theta) = log Z_i(theta) - theta . f_i(y_i)`` (minus the log base
measure of the observed output, a constant). :class:`LogLinearKernel` computes value, gradient,
Hessian products and the partition-function bound of every such model from four feature-map
methods; :class:`SoftmaxKernel` and :class:`StackedLogLinearKernel` supply them, and
:class:`BinaryLogisticKernel` is the two-output model written on the logistic margin. All of
them implement :class:`~sqnopt.objectives._partition_bound.BoundObjectiveKernel`, the interface
of the bound that SQB uses (Aravkin, Choromanska, Jebara & Kanevsky, *Semistochastic quadratic
bound methods*, 2014); the bound's math and factored form are in ``_partition_bound.pxd``.
"""

from sqnopt.data._rows cimport RowData
from sqnopt.objectives._base cimport PassJob
from sqnopt.objectives._margin cimport LogisticKernel
from sqnopt.objectives._partition_bound cimport BoundObjectiveKernel


cdef class LogLinearKernel(BoundObjectiveKernel):
    """Generic log-linear objective: subclasses give the feature map through ``scores``,
    ``features_dot``, ``features_axpy`` and ``label``; value, gradient and bound are shared."""
    cdef Py_ssize_t _block          # length of one parameter block
    cdef Py_ssize_t _reg_len        # regularised leading coordinates of each block
    cdef double[::1] _s             # scratch, length K
    cdef double[::1] _u
    cdef double[::1] _beta

    # s[y] = log h_i(y) + w . f_i(y)
    cdef void scores(self, Py_ssize_t i, const double* w, double* s) noexcept nogil
    # u[y] = v . f_i(y)
    cdef void features_dot(self, Py_ssize_t i, const double* v, double* u) noexcept nogil
    # out += sum_y beta[y] f_i(y)
    cdef void features_axpy(self, Py_ssize_t i, const double* beta, double* out) noexcept nogil
    # index in 0..K-1 of the observed output of sample i
    cdef Py_ssize_t label(self, Py_ssize_t i) noexcept nogil

    cdef int _bind_loglinear(self, RowData data, double lam, Py_ssize_t n_blocks,
                             Py_ssize_t block, Py_ssize_t reg_len, Py_ssize_t n_outputs) except -1
    cdef double _lreg_value(self, const double* w) noexcept nogil
    cdef void _lreg_gradient(self, const double* w, double* grad) noexcept nogil
    cdef double _accumulate(self, const double* w, Py_ssize_t i, double coef, double* grad,
                            double* s, double* beta) noexcept nogil
    # work units per row of a pass reading each row ``reads`` times (the block plan)
    cdef double _rows_work(self, int reads) noexcept nogil
    # _pass_block's loops, with the block's scratch (K doubles each)
    cdef int _block_loops(self, PassJob* job, Py_ssize_t t0, Py_ssize_t t1, double* out,
                          double* sums, double* s, double* u, double* beta) noexcept nogil

    # Working layout of the shared loops (value, gradients, bound, bound product): if
    # ``_layout_enter`` returns True for this call, the loop reads ``_vt`` (``v`` in the working
    # layout, written by the hook) instead of ``v`` and writes ``_ot`` instead of its output, and
    # ``_layout_leave(out)`` maps ``_ot`` back into ``out`` (if not NULL). ``features_dot`` /
    # ``features_axpy`` must then index the working layout. The default never enters; scratch
    # (``n_params`` doubles each) is owned by the kernel and dropped on re-binding.
    cdef double* _vt
    cdef double* _ot
    cdef bint _layout_enter(self, const Py_ssize_t* batch, Py_ssize_t size,
                            const double* v) noexcept nogil
    cdef void _layout_leave(self, double* out) noexcept nogil
    # ``out = Sigma_B v`` for ``out`` of length ``n`` in the current layout (the loop of
    # ``cy_bound_matvec``, shared with the compact form).
    cdef void _bound_products(self, const Py_ssize_t* batch, Py_ssize_t size,
                              const double* factor, const double* v, double* out,
                              Py_ssize_t n) noexcept nogil


cdef class SoftmaxKernel(LogLinearKernel):
    """Multinomial logistic regression: ``f_i(y) = e_y (x) [x_i, 1]``, K blocks of ``dim``."""
    # Feature-major working layout (sparse rows, nnz K > n_params): ``dim x K``.
    cdef bint _fm
    cdef const Py_ssize_t* _fmap    # compact form (support of a bound): feature -> compact row
    cdef bint _fm_off               # tests: force the parameter layout
    cdef Py_ssize_t _fm_calls       # tests: calls that ran in feature-major mode


cdef class StackedLogLinearKernel(LogLinearKernel):
    """General log-linear model; row ``i`` of X stacks ``f_i(0), ..., f_i(K-1)`` (each of
    length ``p``); optional log base measure ``log h`` of shape (N, K) or (1, K)."""
    cdef readonly Py_ssize_t n_joint_features
    cdef const double[:, ::1] _log_h
    cdef bint _per_sample_h
    cdef bint _has_h
    cdef void _add_dot(self, Py_ssize_t i, const double* v, double* u) noexcept nogil


cdef class BinaryLogisticKernel(BoundObjectiveKernel):
    """Binary logistic regression as the log-linear model ``Omega = {-1, +1}``,
    ``f_i(y) = (y / 2) [x_i, 1]``: the loss is ``log(1 + exp(-y x.w))`` and the bound of each
    sample is ``w(x.w) x x'`` with ``w(l) = tanh(l/2) / (2 l)`` (one double per sample).
    Values and gradients are those of the logistic margin loss, computed by ``margin``."""
    cdef readonly LogisticKernel margin
