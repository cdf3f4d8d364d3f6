# cython: language_level=3
"""Compiled objective interface.

An objective kernel is bound to one :class:`RowData` and evaluates

    F(w) = (lam / 2) * ||w_reg||^2 + sum_i c_i l_i(w) / sum_i c_i

(``w_reg``: every coordinate except intercepts) and minibatch gradients

    s(w, B) = lam * w_reg + (1 / |B|) * sum_{i in B} g_i * grad l_i(w)

with ``g_i`` the data's gradient weights. Parameters are a flat float64 vector of length
``n_params`` (``n_blocks`` blocks of ``data.dim``).
"""

from sqnopt.data._rows cimport RowData


# ---- parallel passes ------------------------------------------------------------------------
# A pass over the rows of a batch runs through ``ObjectiveKernel._run_pass``: the kernel plans
# its blocks (``sqnopt._parallel.plan_blocks``: fixed by the data and the pass, never by the
# thread count), ``_pass_block`` runs the serial loop over one block's positions into that block's
# slots (its partial vector ``out`` and partial sums ``sums[0..1]``), and the slots are added
# in block order. With one block ``_pass_block`` is the whole serial loop.

# What a pass computes (``PassJob.kind``); each kernel's ``_pass_block`` implements the kinds its
# ``cy_*`` methods use. Positions t run over the batch (row i = batch[t]; row t when batch is
# NULL), c_i are ``weights[i]``.
cdef enum:
    PASS_GRADIENT = 1       # cy_gradient: out += sum_t scale c_i grad loss_i; sums[0] = sum c_i loss_i
    PASS_FULL_GRADIENT = 2  # cy_full_gradient: the same over every row, by the row methods
    PASS_VALUE = 3          # cy_value: sums[0] = sum_t c_i loss_i (flag: w = 0)
    PASS_SCORE_DERIV = 4    # cy_score_derivatives: cout = coefficients; sums[0] = sum c_i loss_i
    PASS_SCORES_LOSS = 5    # cy_scores_loss: from the scores cin; cout (may be NULL); sums[0]
    PASS_SCORES_LINE = 6    # cy_scores_line: z = cin, u = cin2, a; sums[0] = d1, sums[1] = d2
    PASS_ROWS_AXPY = 7      # cy_rows_axpy: out += scale sum_t (coefficients cin)
    PASS_ROWS_DOT = 8       # cy_rows_dot: cout = scores of v
    PASS_ROWS_SQNORM = 9    # cy_rows_sqnorm: cout from the coefficients cin
    PASS_HESS_FACTORS = 10  # cy_hessian_factors: cout = factors at w; status -1 if not finite
    PASS_HESS_PRODUCT = 11  # cy_hessian_product: out += scale sum_t (Hessian factor cin) v
    PASS_HESS_DIAG = 12     # cy_hessian_diagonal: out += scale sum_t diag(Hessian factor cin)
    PASS_BOUND = 13         # cy_bound (log-linear): cout = factors, out = mu; status
    PASS_BOUND_MATVEC = 14  # _bound_products (log-linear): out += sum_t Sigma_t v


cdef struct PassJob:
    void* kernel                    # the ObjectiveKernel running the pass (borrowed)
    int kind
    const Py_ssize_t* batch         # NULL: position t is row t
    Py_ssize_t size
    const double* weights           # c_i
    const double* w
    const double* v
    const double* cin               # per-position inputs
    const double* cin2
    double* cout                    # per-position outputs
    double scale
    double a
    bint flag
    Py_ssize_t n_vec                # length of the vector the pass sums into (0: none)
    double* out                     # that vector (block 0 sums into it directly)
    Py_ssize_t n_blocks
    # set by _run_pass
    Py_ssize_t* bounds              # block b covers positions [bounds[b], bounds[b + 1])
    double* partials                # the ring of partial vectors of blocks 1.. (n_vec each)
    double* sums                    # two partial sums per block
    int* status                     # per block
    double result[2]                # the partial sums added in block order



cdef class ObjectiveKernel:
    cdef readonly RowData data
    cdef readonly Py_ssize_t n_params
    cdef readonly Py_ssize_t n_blocks
    cdef readonly double lam

    # The parallel pass engine (see above): plan a pass's blocks, run them, add the slots.
    # ``_run_pass`` returns 0, the first nonzero status of a block, or -2 when the workspace
    # cannot be allocated.
    cdef double* _ws                # workspace: partial vectors, sums and statuses of a pass
    cdef Py_ssize_t _ws_cap
    cdef double* _workspace(self, Py_ssize_t n) noexcept nogil
    # mean stored entries per row, the intercept's included, and the work units of reading a
    # row once (``sqnopt._parallel``: a sparse entry is one unit, dense entries go
    # DENSE_ENTRIES_PER_UNIT to a unit): the work estimates of the passes
    cdef double _row_entries
    cdef double _read_work
    cdef Py_ssize_t _plan(self, Py_ssize_t size, double row_work, Py_ssize_t n_vec) noexcept nogil
    cdef int _run_pass(self, PassJob* job) noexcept nogil
    cdef int _pass_block(self, PassJob* job, Py_ssize_t t0, Py_ssize_t t1, double* out,
                    double* sums) noexcept nogil

    # Minibatch gradient into ``grad`` (overwritten); returns the minibatch objective value
    # (lam/2 ||w_reg||^2 + mean weighted loss over the batch).
    cdef double cy_gradient(self, const double* w, const Py_ssize_t* batch, Py_ssize_t size,
                            double* grad) noexcept nogil
    # Full objective F(w).
    cdef double cy_value(self, const double* w) noexcept nogil
    # Full gradient of F into ``grad``; returns F(w).
    cdef double cy_full_gradient(self, const double* w, double* grad) noexcept nogil

    # Linear-score objectives -- the loss of sample i depends on w only through ``n_scores``
    # linear scores (margin losses: 1, x_i . w + b; softmax: K) -- expose per-sample score
    # derivatives, which is all a table of past gradients needs (SAGA: O(N n_scores) memory).
    # ``n_scores = 0``: not provided.
    cdef readonly Py_ssize_t n_scores
    # coef[t * n_scores + k] = g_i * d loss_i / d score_k at ``w`` for sample i = batch[t];
    # returns sum_t g_i loss_i (the batch's weighted loss sum, no regulariser).
    cdef double cy_score_derivatives(self, const double* w, const Py_ssize_t* batch,
                                     Py_ssize_t size, double* coef) noexcept nogil
    # out += scale * sum_t sum_k coef[t * n_scores + k] * d score_k(x_i) / d w
    cdef void cy_rows_axpy(self, const Py_ssize_t* batch, Py_ssize_t size, const double* coef,
                           double scale, double* out) noexcept nogil
    # out[t * n_scores + k] = d score_k(x_i) / d w . v for sample i = batch[t]: the transpose of
    # ``cy_rows_axpy`` (the scores are linear in w, so this is score_k of sample i at ``v``). The
    # base class writes NaN (not provided).
    cdef void cy_rows_dot(self, const Py_ssize_t* batch, Py_ssize_t size, const double* v,
                          double* out) noexcept nogil
    # out[t] = || sum_k coef[t * n_scores + k] * d score_k(x_i) / d w ||^2 for sample
    # i = batch[t]: the squared norm of the sample's loss gradient from its score derivatives
    # (margin losses: coef_t^2 ||[x_i, 1]||^2; progressive batching's orthogonality test). The
    # base class writes NaN (not provided).
    cdef void cy_rows_sqnorm(self, const Py_ssize_t* batch, Py_ssize_t size, const double* coef,
                             double* out) noexcept nogil
    # Losses from given scores (``score_losses``; the exact line search of ``ScoreLine``): with
    # ``s[t * n_scores + k]`` sample batch[t]'s k-th score (the linear part of the score:
    # x_i . w + b for a margin loss, w . f_i(y) for softmax), ``cy_scores_loss`` returns
    # sum_t g_i loss_i(s_t) and, when ``coef`` is not NULL, writes coef[t * n_scores + k] =
    # g_i d loss_i / d score_k at s_t (``cy_score_derivatives`` without gathering the rows).
    # ``cy_scores_line`` returns the first derivative in ``a`` of sum_t g_i loss_i(z_t - a u_t),
    # -sum_t g_i grad loss_i(s_t) . u_t, and writes the second, sum_t g_i u_t' Hess loss_i(s_t)
    # u_t, into d2[0] (NaN where the loss has no second derivative); no loss value (the line
    # search's inner iteration needs none). The base class returns NaN (not provided).
    cdef readonly bint score_losses
    cdef double cy_scores_loss(self, const Py_ssize_t* batch, Py_ssize_t size, const double* s,
                               double* coef) noexcept nogil
    cdef double cy_scores_line(self, const Py_ssize_t* batch, Py_ssize_t size, const double* z,
                               const double* u, double a, double* d2) noexcept nogil
    # grad += lam * w_reg; returns (lam / 2) ||w_reg||^2 (the objective's regulariser)
    cdef double cy_reg_gradient_value(self, const double* w, double* grad) noexcept nogil
    # (lam / 2) ||w_reg||^2 alone: a loop subtracts it from a minibatch objective to get the
    # batch's loss part (the progressive validation loss of the counters)
    cdef double cy_reg_value(self, const double* w) noexcept nogil

    # Hessian-vector products of twice-differentiable linear-score objectives (capability
    # ``hessian_vector``): ``hess_size`` doubles per sample describe its score Hessian at ``w``
    # (margin losses: g_i l''; softmax: g_i p); 0 when not provided.
    cdef readonly Py_ssize_t hess_size
    # D[t * hess_size ...] = the score Hessian factors of sample batch[t] at w; returns 0, or
    # -1 if a score is not finite.
    cdef int cy_hessian_factors(self, const double* w, const Py_ssize_t* batch, Py_ssize_t size,
                                double* D) noexcept nogil
    # out = (1/size) sum_t (Hessian of sample batch[t], from D) v + lam v_reg (overwritten)
    cdef void cy_hessian_product(self, const Py_ssize_t* batch, Py_ssize_t size, const double* D,
                                 const double* v, double* out) noexcept nogil
    # out = the diagonal of that Hessian, (1/size) sum_t diag(Hessian of sample batch[t], from D)
    # + lam on the regularised coordinates (overwritten; margin losses: (1/size) sum_t D_t x_tj^2
    # + lam, one pass over the batch's stored entries): the Jacobi preconditioner of truncated
    # Newton's CG. Returns 0, or -1 when not provided (the base class; ``out`` untouched).
    cdef int cy_hessian_diagonal(self, const Py_ssize_t* batch, Py_ssize_t size, const double* D,
                                 double* out) noexcept nogil
    # Margin losses (capability declared by ``score_hessian_factor``): sample i's score Hessian
    # factor g_i l''(y_i s) from its score s = x_i . w + b, so that a model which forms the
    # score from the row it gathers anyway (Newton's Hessian) needs no second pass over the
    # rows; NAN when not declared.
    cdef readonly bint score_hessian_factor
    cdef double cy_score_hessian_factor(self, Py_ssize_t i, double score) noexcept nogil

    # Helpers shared by subclasses (not virtual).
    cdef double _reg_value(self, const double* w) noexcept nogil
    cdef void _reg_gradient(self, const double* w, double* grad) noexcept nogil
    # both in one pass: grad += lam * w_reg, returns (lam / 2) ||w_reg||^2
    cdef double _reg_gradient_value(self, const double* w, double* grad) noexcept nogil
    cdef int _bind(self, RowData data, double lam, Py_ssize_t n_blocks) except -1
    cdef int _check_w(self, const double[::1] w) except -1


cdef class MarginObjectiveKernel(ObjectiveKernel):
    """Binary loss of the margin ``m_i = y_i (x_i . w + b)``: ``l_i(w) = loss(m_i)``; or, when
    the kernel declares ``real_targets``, a loss of the score against a real target,
    ``l_i(w) = l(x_i . w + b, y_i)`` (regression). One score per row either way: the passes
    are the same loops, each row's loss read through the margin methods or the score hooks."""
    # The labels are real targets and the passes call the score hooks below (regression
    # losses declare it in their ``__init__``); False: labels +-1 and the margin methods. The
    # margin fast loops (scaled, lazy, Pegasos) take only objectives of capability "margin",
    # which a regression objective does not declare.
    cdef readonly bint real_targets
    # l(s, y) of the score s = x_i . w + b against the target y, with d l / d s stored in
    # dloss[0] (NaN unless a regression loss overrides it)
    cdef double score_loss_and_dloss(self, double score, double y, double* dloss) noexcept nogil
    # d^2 l / d s^2 (a generalised one where l is only once differentiable: Huber's)
    cdef double score_d2loss(self, double score, double y) noexcept nogil
    # d l / d s, with d^2 l / d s^2 stored in d2[0] (the exact line search's inner iteration);
    # the default calls the two hooks above, a loss that shares work between them overrides it
    cdef double score_dloss_and_d2loss(self, double score, double y, double* d2) noexcept nogil
    cdef double loss(self, double margin) noexcept nogil
    # d loss / d margin (the derivative with respect to the margin, not its negative).
    cdef double dloss_dmargin(self, double margin) noexcept nogil
    # loss(margin), with d loss / d margin stored in dloss_dmargin[0]: the two values above, bit
    # for bit, in one call (the gradients call this once per row). The default calls the two
    # methods; a loss that shares work between them (the logistic's exp) overrides it.
    cdef double loss_and_dloss_dmargin(self, double margin, double* dloss_dmargin) noexcept nogil
    # d^2 loss / d margin^2 (a generalised one where the loss is only once differentiable)
    cdef double d2loss_dmargin2(self, double margin) noexcept nogil
    # d loss / d margin, with d^2 loss / d margin^2 stored in d2loss[0] (the exact line search's
    # inner iteration; equal to the two methods up to rounding). The default calls the two
    # methods; the logistic shares its exp between them.
    cdef double dloss_and_d2loss(self, double margin, double* d2loss) noexcept nogil
