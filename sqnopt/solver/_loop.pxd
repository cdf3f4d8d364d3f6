# cython: language_level=3
"""Cost accounting shared by the compiled loops (``_loop``, ``_scaled_loop``).

``Counters`` is the Python-visible record of one solve; a loop copies it into a ``LoopCounts``
struct before releasing the GIL and back afterwards (``counts_load`` / ``counts_store``).
"""


# Exit codes of a loop's ``run`` (exported to Python as ``_loop.EXIT_CODES``, where the Python
# loop takes its values).
cdef enum:
    LOOP_DONE = 0
    LOOP_MAX_SAMPLES = 1
    LOOP_NONFINITE_LOSS = 2
    LOOP_NONFINITE_ITERATE = 3
    LOOP_CURVATURE_ERROR = 4
    LOOP_EXHAUSTED = 5
    LOOP_LINE_SEARCH_FAILED = 6
    LOOP_GTOL = 7                  # full-batch gradient norm <= gtol (no step taken)
    LOOP_FTOL = 8                  # relative full-batch objective decrease <= ftol


cdef class Counters:
    cdef public Py_ssize_t t                    # iterations done
    cdef public Py_ssize_t n_samples            # sum of gradient batch sizes (the papers' Lt)
    cdef public Py_ssize_t n_curvature_samples  # sum of curvature batch sizes (SQB)
    cdef public Py_ssize_t n_secant_samples     # sum of batch sizes of the secant pairs' second
                                                # gradients (oBFGS, RES, oLBFGS)
    cdef public Py_ssize_t n_reused_samples     # part of n_samples whose gradient was the previous
                                                # secant gradient, reused (same batch, same w)
    cdef public Py_ssize_t n_search_samples     # sum of batch sizes of line-search evaluations
    cdef public Py_ssize_t n_estimator_samples  # samples a gradient estimator touched beyond the
                                                # batch (SVRG's snapshots and second gradients,
                                                # SAGA's table fill)
    cdef public Py_ssize_t n_grad_evals         # minibatch gradient evaluations
    cdef public Py_ssize_t n_pairs_accepted
    cdef public Py_ssize_t n_pairs_skipped
    cdef public Py_ssize_t n_resets
    cdef public Py_ssize_t n_avg                # iterates in the running average
    cdef public double last_step
    cdef public double last_loss                # minibatch objective at the last iteration
    cdef public double loss_sum                 # sum of minibatch objectives since the monitor
    cdef public Py_ssize_t n_loss               # last read them (its window; it resets both)
    cdef public double last_gnorm               # max |dF/dw_j| at the last full-batch gradient


cdef struct LoopCounts:
    Py_ssize_t t
    Py_ssize_t n_samples
    Py_ssize_t n_curvature_samples
    Py_ssize_t n_secant_samples
    Py_ssize_t n_reused_samples
    Py_ssize_t n_search_samples
    Py_ssize_t n_estimator_samples
    Py_ssize_t n_grad_evals
    Py_ssize_t n_pairs_accepted
    Py_ssize_t n_pairs_skipped
    Py_ssize_t n_resets
    Py_ssize_t n_avg
    double last_step
    double last_loss
    double loss_sum
    Py_ssize_t n_loss
    double last_gnorm


cdef inline void counts_load(Counters pc, LoopCounts* c) noexcept:
    c.t = pc.t
    c.n_samples = pc.n_samples
    c.n_curvature_samples = pc.n_curvature_samples
    c.n_secant_samples = pc.n_secant_samples
    c.n_reused_samples = pc.n_reused_samples
    c.n_search_samples = pc.n_search_samples
    c.n_estimator_samples = pc.n_estimator_samples
    c.n_grad_evals = pc.n_grad_evals
    c.n_pairs_accepted = pc.n_pairs_accepted
    c.n_pairs_skipped = pc.n_pairs_skipped
    c.n_resets = pc.n_resets
    c.n_avg = pc.n_avg
    c.last_step = pc.last_step
    c.last_loss = pc.last_loss
    c.loss_sum = pc.loss_sum
    c.n_loss = pc.n_loss
    c.last_gnorm = pc.last_gnorm


cdef inline void counts_store(const LoopCounts* c, Counters pc) noexcept:
    pc.t = c.t
    pc.n_samples = c.n_samples
    pc.n_curvature_samples = c.n_curvature_samples
    pc.n_secant_samples = c.n_secant_samples
    pc.n_reused_samples = c.n_reused_samples
    pc.n_search_samples = c.n_search_samples
    pc.n_estimator_samples = c.n_estimator_samples
    pc.n_grad_evals = c.n_grad_evals
    pc.n_pairs_accepted = c.n_pairs_accepted
    pc.n_pairs_skipped = c.n_pairs_skipped
    pc.n_resets = c.n_resets
    pc.n_avg = c.n_avg
    pc.last_step = c.last_step
    pc.last_loss = c.last_loss
    pc.loss_sum = c.loss_sum
    pc.n_loss = c.n_loss
    pc.last_gnorm = c.last_gnorm
