# cython: language_level=3
"""The compiled driver (``CompiledLoop``) and its cost accounting.

``Counters`` is the Python-visible record of one solve; the driver copies it into a
``LoopCounts`` struct before releasing the GIL and back afterwards (``counts_load`` /
``counts_store``). ``CompiledLoop`` is declared here so that a module can subclass it with a
constructor for one configuration (``_scaled_loop.ScaledLoop``: the driver with the scaled sparse
iterate).
"""

from sqnopt.curvature._base cimport CurvatureKernel
from sqnopt.gradients._base cimport GradientKernel
from sqnopt.objectives._base cimport MarginObjectiveKernel, ObjectiveKernel
from sqnopt.projections._base cimport ProjectionKernel
from sqnopt.schedules._base cimport ScheduleKernel
from sqnopt.solver._iterate cimport MAX_LOOKAHEAD, IterateKernel
from sqnopt.solver._sampler cimport Sampler
from sqnopt.steps._base cimport StepKernel


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


# The stages of one iteration, in order, and their variants: the compiled mirror of
# sqnopt.solver._stages.STAGES (checked against it when _loop is imported).
cdef enum:
    STAGE_SIZE = 0
    STAGE_DRAW = 1
    STAGE_GRADIENT = 2
    STAGE_FULL_BATCH_TEST = 3
    STAGE_CURVATURE_BATCH = 4
    STAGE_ESTIMATOR_PAIR = 5
    STAGE_DIRECTION = 6
    STAGE_STEP = 7
    STAGE_UPDATE = 8
    STAGE_SECANT_PAIR = 9
    STAGE_ADVANCE = 10
    STAGE_AVERAGE = 11
    N_STAGES = 12

cdef enum:
    VARIANT_NONE = 0            # full_batch_test, curvature_batch, estimator_pair, secant_pair,
                                # average: the stage does not run
    SIZE_SCHEDULE = 0
    SIZE_ESTIMATOR = 1
    DRAW_SAMPLER = 0
    DRAW_OVERLAPPING = 1
    GRADIENT_PLAIN = 0
    GRADIENT_BATCH_ESTIMATE = 1
    GRADIENT_OVERLAP_ESTIMATE = 2
    GRADIENT_ESTIMATE = 3
    GRADIENT_ESTIMATE_WITH_PLAIN = 4
    FULL_BATCH_TEST_TEST = 1
    CURVATURE_BATCH_OBSERVE = 1
    ESTIMATOR_PAIR_TAKE = 1
    DIRECTION_MODEL = 0
    DIRECTION_GRADIENT = 1
    DIRECTION_COMPOSITE = 2
    STEP_TIME = 0
    STEP_POINT = 1
    STEP_SEARCH = 2
    UPDATE_AXPY = 0
    UPDATE_PROJECTED = 1
    UPDATE_COMPOSITE = 2
    UPDATE_SEARCHED = 3
    SECANT_PAIR_EVALUATE = 1
    SECANT_PAIR_SEARCHED = 2
    ADVANCE_SWAP = 0
    ADVANCE_SWAP_GRADIENT = 1
    ADVANCE_KEEP = 2
    AVERAGE_AVERAGE = 1

cdef enum:
    TRACE_WIDTH = 5             # a stage trace record: (t, stage, variant, a, b)


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
    cdef public double prog_loss                # sum over the samples of the steps taken of
                                                # g_i loss_i at the iterate before the step
    cdef public double prog_weight              # sum of their g_i: prog_loss / prog_weight is
                                                # the progressive validation loss


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
    double prog_loss
    double prog_weight


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
    c.prog_loss = pc.prog_loss
    c.prog_weight = pc.prog_weight


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
    pc.prog_loss = c.prog_loss
    pc.prog_weight = c.prog_weight


cdef class CompiledLoop:
    cdef ObjectiveKernel obj
    cdef GradientKernel est
    # The variant of every stage (sqnopt.solver._stages.plan; codes: the enums above), planned
    # with or without the full-batch tolerance test (``planned_tolerances``).
    cdef int plan[N_STAGES]
    cdef bint planned_tolerances
    cdef double[::1] gp             # the plain minibatch gradient s(w_t, B_t), when the estimate
                                    # is not it (secant pairs and the line search read it)
    # The stage trace (``start_trace``): records of TRACE_WIDTH values, ``trace_len`` written;
    # ``tracing`` off: none (one predictable branch per stage).
    cdef double[:, ::1] trace_buf
    cdef Py_ssize_t trace_len
    cdef bint tracing
    cdef CurvatureKernel curv
    cdef ScheduleKernel sched
    cdef ScheduleKernel csched
    cdef StepKernel step
    cdef ProjectionKernel proj
    cdef Sampler sampler
    cdef double[::1] w, w_next, g, g_next, d, v, r, w_avg
    cdef double[::1] g_tail                # a growing batch's new rows' gradient
    cdef Py_ssize_t[::1] rest              # the rows outside the previous batch, in order
    cdef char[::1] mark
    cdef const Py_ssize_t* rest_rows       # the rows a reused gradient does not cover
    cdef Py_ssize_t n_rest
    cdef Py_ssize_t _reused_rest(self, const Py_ssize_t* batch, Py_ssize_t size) noexcept nogil
    cdef Py_ssize_t[::1] batch, cbatch
    # The secant gradient kept for reuse: s(w, prev_batch) is in g_next when have_next, w being
    # the current iterate (w_saved: a copy taken when a run returns, checked on the next run).
    cdef Py_ssize_t[::1] prev_batch
    cdef double[::1] w_saved
    cdef Py_ssize_t prev_size
    cdef bint have_next
    cdef double loss_next
    # g_next is obj.cy_gradient(w, prev_batch) (a secant gradient, or a search whose step rule
    # declares plain_gradient): checkpoints leave it out, a restore recomputes it
    cdef bint next_plain
    # F(w) at iterate full_f_t, when a full-batch plain gradient or line search evaluated it
    # there (full_is_f: the batch objective of the whole data set is F: the sampler's whole
    # set, the plain gradient, and gradient weights that are the sample weights)
    cdef bint full_is_f
    cdef double full_f
    cdef Py_ssize_t full_f_t
    # Tolerances tested on full-batch gradients (0: off) and the previous full-batch objective.
    cdef public double gtol
    cdef public double ftol
    cdef double prev_full_loss
    cdef readonly Counters counters
    cdef bint average
    cdef Py_ssize_t avg_start
    cdef Py_ssize_t n
    # The iterate representation (None: the dense w above) and the radius of the Euclidean ball
    # it projects onto (0: none).
    cdef readonly IterateKernel iterate
    cdef double radius
    # Batches drawn ahead for the representation: ring[u % depth] holds the batch of iteration
    # u for last_t <= u < drawn_upto (depth = lookahead + 1; 0: no representation).
    cdef Py_ssize_t[:, ::1] ring
    # The rows of the ring and the sizes of their batches, twice over (index k and k + depth
    # name slot k), so that the batches after slot k are the window k + 1, k + 2, ... without
    # wrapping: what ``cy_first_order`` gets as the batches ahead.
    cdef const Py_ssize_t* ring_rows[2 * MAX_LOOKAHEAD + 2]
    cdef Py_ssize_t ring_size[2 * MAX_LOOKAHEAD + 2]
    cdef Py_ssize_t depth
    cdef Py_ssize_t drawn_upto         # iterations < drawn_upto have their batch drawn
    cdef Py_ssize_t exhausted_at       # the iteration whose draw failed (-1: none)
    cdef Py_ssize_t t_limit            # this call runs iterations < t_limit at most
    cdef Py_ssize_t call_max_samples   # this call's sample budget (0: none)
    cdef Py_ssize_t ahead_samples      # samples in the batches drawn ahead
    cdef Py_ssize_t last_t, last_samples, last_n_avg   # the counters as the loop left them

    cdef int _iterate_setup(self, ObjectiveKernel objective, IterateKernel iterate,
                            ProjectionKernel projection) except -1
    cdef void _at_counters(self)
    cdef int _plan(self) except -1
    cdef double _batch_weight(self, const Py_ssize_t* batch, Py_ssize_t size) noexcept nogil
    cdef int _run(self, Py_ssize_t n_iter, Py_ssize_t max_samples, LoopCounts* c) noexcept nogil
    cdef int _run_iterate(self, Py_ssize_t n_iter, Py_ssize_t max_samples,
                          LoopCounts* c) noexcept nogil
