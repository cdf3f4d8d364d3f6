"""Recipes: the one place where policy lives.

Components describe themselves -- an objective its capabilities and the bound of its loss's
curvature, a curvature model whether it learns from secant pairs or its own batches and what a
unit step along its direction means (:attr:`~sqnopt.interfaces.CurvatureModel.direction_scale`).
This module turns those declarations into the schedule, step rule and sampling that make a
composition work at the defaults (``schedule="auto"``, ``step="auto"`` in the estimators, the
``Trainer`` and the command line). Nothing here looks at a component's name; a plugin that
declares the same properties gets the same recipe.

==========================  =========================================================================
the curvature model         recipe
==========================  =========================================================================
exact curvature on its      the whole data set from the first iteration, for the gradient and the
batch (Newton, truncated    curvature batch (``Full()``), each step the exact line minimisation
Newton: ``full_batch``)     of ``ScoreLine()`` for objectives of linear scores (else ``Armijo()``
                            backtracking): the deterministic damped (or truncated) Newton method,
                            whose tolerances the loop tests on each iteration's full gradient
builds a majoriser from    semistochastic batches (Aravkin et al. 2014): gradient batches growing
its own batches (SQB)       ``Geometric(100, 1.5)`` to the whole data set, bound batches
                            ``Fixed(1000)``, the constant step 1 of a majoriser, subset sampling
samples the Hessian on its  the progressive batching below for the gradient, and a curvature batch
own batches (Newton-CG)     of a tenth of the data (at least 1000) drawn afresh each iteration
                            (Byrd, Chin, Neveitt & Nocedal 2011)
learns from secant pairs,   progressive batching with a line search (Friedlander & Schmidt 2012;
or Newton-scaled            Byrd, Chin, Nocedal & Wu 2012): batches ``Geometric(1000, 2)`` of distinct
directions (BFGS family)    samples growing to the whole data set, each extending the last (its
                            gradient at the new iterate is the accepted step's, so only the new
                            rows are evaluated), each step found by
                            ``Armijo()`` backtracking on its batch; from then on it is the
                            deterministic method, whose tolerances the loop tests for free;
                            L-BFGS named without parameters keeps up to 30 pairs where its
                            two-loop recursion is cheap next to a pass (:func:`lbfgs_memory`)
normalized directions       ``Fixed(5)`` batches and the constant step ``1 / s``, with ``s`` the
(AdaGrad)                   root-mean-square of the nonzero feature values: ``|d_j| <= 1``, so the
                            step is a distance in the units of the weights
gradient-scaled directions  SAGA's variance-reduced gradient (for smooth objectives of linear
(SGD)                       scores) with a constant step and batches without replacement: single
                            samples and ``1/(3 L_max)`` where sparse margin rows make the lazy
                            sparse SAGA step pay, else ``1/L_max`` (:func:`_first_order_step`);
                            else the minibatch gradient and ``eps_t = 1 / (L + lam t)`` (see
                            :func:`gradient_step`); batches of 5, or larger when an
                            iteration's O(n) vector work would dominate (:func:`stochastic_batch`)
==========================  =========================================================================
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, cast

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from sqnopt.curvature._components import (  # L-BFGS's tuning (LBFGS.tuned)
    SAMPLED_BOUND_ROWS_PER_PARAM, lbfgs_memory)
from sqnopt.data._norms import (
    max_sample_smoothness_step,
    row_sq_norms as _row_sq_norms,
    variance_reduced_step,
    weighted_row_sq_norms as _weighted_row_sq_norms,
)
from sqnopt.data._rows import csr_column_max_abs
from sqnopt.interfaces import (
    DENSE_HESSIAN,
    HESSIAN_VECTOR,
    LINEAR_SCORES,
    MARGIN,
    QUADRATIC,
    SMOOTH,
    STRONGLY_CONVEX,
    BatchSchedule,
    Component,
    CurvatureModel,
    GradientEstimator,
    Objective,
    StepRule,
)
from sqnopt.schedules import Fixed, Full, Geometric
from sqnopt.steps import Armijo, Constant, Decaying, ScoreLine

FloatArray = NDArray[np.float64]
Sampling = Literal["uniform", "shuffle", "subset", "weighted"]

__all__ = [
    "Recipe",
    "adapt_objective",
    "bound_cost_passes",
    "choose",
    "default_curvature",
    "feature_scale_spread",
    "gradient_step",
    "hessian_batch",
    "lbfgs_memory",
    "lipschitz_estimate",
    "max_sample_smoothness_step",
    "newton_cost_passes",
    "quadratic_cg",
    "normalized_step",
    "row_norm_spread",
    "large_scale",
    "step_candidates",
    "stochastic_batch",
    "streaming",
    "variance_reduced_factor",
    "variance_reduced_step",
]

#: Minibatch size of the stochastic recipes.
BATCH = 5
#: Progressive batching: first batch and growth factor per iteration.
PROGRESSIVE_B1 = 1000
PROGRESSIVE_RATE = 2.0
#: Largest row-length spread (max over clipped mean of the squared norms) at which the
#: identity's recipe takes SAGA (whose safe step is 1/L_max); beyond it, SGD's robust step.
SAGA_SPREAD = 10.0
#: Subsampled Hessians: one sample in this many (at least PROGRESSIVE_B1 samples).
HESSIAN_FRACTION = 10
#: ``curvature="auto"`` takes Newton's method when forming and factoring the Hessian costs at
#: most this many passes (:func:`newton_cost_passes`); measured by
#: ``bench/full_batch_solvers.py --newton-cost``.
NEWTON_PASSES = 20.0
#: The budget for a quadratic objective (capability ``quadratic``: squared error), whose
#: Hessian does not change: Newton's method forms and factors it once and reaches the
#: minimiser in one step. Its alternative there is not L-BFGS but conjugate gradients on the
#: objective itself (:func:`quadratic_cg`), which solves well-conditioned dense rows in about
#: ten passes; on dense rows the Hessian's multiply-adds run at BLAS speed, so Newton is the
#: faster below about a dozen estimated passes and CG beyond (measured by
#: ``bench/full_batch_solvers.py --quadratic-cost``: dense rows of 10 to 200 columns).
QUADRATIC_NEWTON_PASSES = 12.0
#: Conjugate gradients on a quadratic objective too large for Newton's method
#: (:func:`quadratic_cg`): the relative residual at which CG stops when the run has no
#: gradient tolerance (``tol=None``: a budget of outer iterations; with a tolerance the run's
#: own test ends CG, ``gtol_stop``), and its cap of products. ``7e-4``: one outer iteration
#: reaches a relative excess below ``1e-4`` on the race's dense and sparse ridge problems
#: (``bench/results/race_regression_cg``).
QUADRATIC_FORCING = 7e-4
QUADRATIC_CG_ITER = 500
#: ``curvature="auto"`` takes L-BFGS preconditioned by Böhning's bound (:class:`BoundLBFGS`)
#: when forming and factoring the bound costs at most this many passes
#: (:func:`bound_cost_passes`) and a parameter block has at most BOUND_MAX_DIM entries (the
#: ``dim x dim`` factor: 128 MiB at the cap); measured in docs/report_full_batch.md
#: ("Preconditioned L-BFGS").
BOUND_PASSES = 25.0
BOUND_MAX_DIM = 4096
#: ``curvature="auto"`` takes Newton's method only while the Hessian's largest data entry over
#: the regulariser (:func:`hessian_range`) stays below this: the Cholesky factorisation then
#: resolves the directions only ``lam`` holds (the softmax's redundant class direction,
#: duplicated columns). Double precision resolves about 1e16; the margin covers the sums.
NEWTON_MAX_RANGE = 1e12
#: Semistochastic bound methods: gradient batches, growth, bound batch.
BOUND_B1 = 100
BOUND_RATE = 1.5
BOUND_BATCH = 1000
#: The large-data regime (:func:`large_scale`): at least this many rows in memory ...
LARGE_ROWS = 200_000
#: ... holding at least this many stored values (a pass then costs tens of milliseconds or
#: more, and solving the training objective to ``tol`` takes hundreds of passes' worth of time
#: against the one to a few passes a streaming method needs to reach the held-out loss of the
#: solution; measured in ``bench/scale``).
LARGE_NNZ = 2**23
#: The streaming recipe's constant steps raced on progressive validation loss
#: (:func:`step_candidates`): ``2**k / s`` for these ``k``, ``s`` the root-mean-square of the
#: nonzero feature values. The best of them for one pass differs by a factor of 128 between
#: the benchmark sets (``python -m bench.streaming step-race``).
STEP_EXPONENTS = tuple(range(-6, 3))
#: Rows of the race's first segment (each later one doubles: nine candidates are decided after
#: 4000 + 8000 + 16000 examples, 100,000 example-updates in all). The step that leads on the
#: first examples is often smaller than the best for a whole pass (AdaGrad's per-weight steps
#: shrink as gradients accumulate, so a larger constant pays later): a race decided after a
#: few thousand examples picks it about as often as not (``python -m bench.streaming step-race``
#: compares the lengths).
RACE_FIRST_SEGMENT = 4000


@dataclass(frozen=True)
class Recipe:
    """A complete composition for one solve, with how to run it."""

    objective: Objective
    curvature: CurvatureModel
    schedule: BatchSchedule
    curvature_schedule: BatchSchedule | None
    step: StepRule
    sampling: Sampling
    #: Batches grow to the whole data set: from then on the run is deterministic, and its
    #: tolerances are tested by the loop on each iteration's own full gradient.
    full_batch_phase: bool
    #: Iterations between the loop's returns to Python (divergence checks, callbacks).
    report_every: int
    #: The gradient estimator the steps use.
    gradient: GradientEstimator
    #: Constant steps to race on progressive validation loss before training goes on with
    #: the winner (:class:`sqnopt.training` runs the race); empty: ``step`` is used as is.
    step_candidates: tuple[float, ...] = ()
    #: The large-data (streaming) regime: held-out loss per second, not the training
    #: objective to ``tol`` (:func:`streaming`).
    streaming: bool = False


def _q99(values: FloatArray) -> float:
    """The 99th percentile (NumPy's linear interpolation) by two partial sorts instead of
    ``np.quantile``'s machinery (a tenth of the time on small arrays; the estimators' fixed
    cost)."""
    n = values.shape[0]
    pos = 0.99 * (n - 1)
    lo = int(pos)
    hi = min(lo + 1, n - 1)
    part = np.partition(values, (lo, hi))
    return float(part[lo] + (pos - lo) * (part[hi] - part[lo]))


def lipschitz_estimate(X: Any, grad_weight: FloatArray, objective: Objective,
                       fit_intercept: bool) -> float:
    r"""``L = c * mean_i g_i min(||x_i||^2 + [intercept], q) + lam``.

    With ``c`` the objective's :attr:`~sqnopt.interfaces.Objective.curvature_bound` (1 for a
    non-smooth loss) and ``g_i`` the gradient weights (mean 1), and without the clip at ``q``,
    this is the trace of the full objective's Hessian bound ``c X' G X / N + lam I`` -- an upper
    bound of its largest eigenvalue, so of the full gradient's Lipschitz constant. The squared
    row norms are clipped at their 99th percentile ``q`` so that a few outlier rows cannot
    collapse the step (the largest-row bound did: on news20 the longest row is 800 times the
    mean). Steps too large for those rows overshoot their margins (see :func:`gradient_step`).
    """
    sq = _row_sq_norms(X) + (1.0 if fit_intercept else 0.0)
    if sq.size:
        sq = np.minimum(sq, _q99(sq))
    w = np.asarray(grad_weight, dtype=np.float64)
    c = objective.curvature_bound if objective.curvature_bound is not None else 1.0
    lip = c * float(np.sum(sq * w) / max(float(np.sum(w)), 1e-300)) + float(objective.lam)
    if not np.isfinite(lip) or lip <= 0:
        return 1.0
    return lip


def gradient_step(X: Any, grad_weight: FloatArray, objective: Objective, batch_size: int,
                  fit_intercept: bool) -> Decaying:
    r"""The step of gradient-scaled directions: ``eps_t = 1 / (L + lam t)``.

    That is ``Decaying(eps0 = 1/L, T0 = L/lam)`` with ``L`` from :func:`lipschitz_estimate`:
    the first steps are the largest stable ones of the full gradient whatever the features'
    scale, and the decay is the ``1/(lam t)`` rate of strongly convex stochastic approximation.
    With ``lam = 0`` the step decays after one pass (``T0`` = one pass of minibatches). Every
    loss here has a bounded derivative or is flat past the margin (hinge, logistic, softmax,
    squared hinge), so a step too large for one rare outlier row overshoots that row's margin
    once instead of blowing up; the divergence monitor watches for anything else.
    """
    lip = lipschitz_estimate(X, grad_weight, objective, fit_intercept)
    lam = float(objective.lam)
    T0 = lip / lam if lam > 0 else X.shape[0] / max(batch_size, 1)
    eps0 = 1.0 / lip
    if not (np.isfinite(eps0) and eps0 > 0):
        eps0 = 1.0
    return Decaying(eps0=float(eps0), T0=float(min(max(1.0, T0), 1e300)))


def normalized_step(X: Any, fit_intercept: bool = False) -> Constant:
    """The step of normalized directions (``|d_j| <= 1``, AdaGrad): ``1 / s``, with ``s`` the
    root-mean-square of the nonzero feature values (the intercept's constant 1 counted as one
    of them), so that a step of the weights changes a margin by about the number of features a
    row uses, whatever the features' unit."""
    if sp.issparse(X):
        Xs = X if X.format == "csr" else sp.csr_matrix(X)
        vals = np.asarray(Xs.data, dtype=np.float64).ravel()
    else:
        vals = np.asarray(X, dtype=np.float64).ravel()
    # explicit zeros add nothing to the sum and are not counted
    total, count = float(np.dot(vals, vals)), int(np.count_nonzero(vals))
    if not np.isfinite(total):      # (values the fit refuses; a caller's raw data)
        vals = vals[np.isfinite(vals)]
        total, count = float(np.dot(vals, vals)), int(np.count_nonzero(vals))
    if fit_intercept:
        total, count = total + X.shape[0], count + X.shape[0]
    rms = float(np.sqrt(total / count)) if count else 1.0
    eta = 1.0 / rms if np.isfinite(rms) and rms > 0 else 1.0
    return Constant(eps=float(min(max(eta, 1e-300), 1e300)))


#: Rows :func:`feature_scale_spread` looks at.
SCALE_SAMPLE_ROWS = 131_072


def feature_scale_spread(X: Any, fit_intercept: bool = False) -> float:
    """``max_j s_j / min_j s_j`` over the columns with a nonzero value (and the intercept's
    constant column, of scale 1, when fitted), ``s_j`` the largest absolute value of column
    ``j`` (1 for fewer than two such columns), over the first ``SCALE_SAMPLE_ROWS`` rows: the
    spread is a warning's heuristic, and a large data set's first rows show it (as a stream's
    first chunk does) at a fraction of a pass's cost."""
    if sp.issparse(X):
        Xr = X if X.format == "csr" else sp.csr_matrix(X)
        end = int(Xr.indptr[min(Xr.shape[0], SCALE_SAMPLE_ROWS)])
        scale = csr_column_max_abs(Xr.indices[:end], Xr.data[:end], int(Xr.shape[1]))
    else:
        X = X[:SCALE_SAMPLE_ROWS]
        scale = np.max(np.abs(np.asarray(X, dtype=np.float64)), axis=0) if X.shape[0] else \
            np.zeros(0)
    scale = scale[scale > 0]
    if fit_intercept:
        scale = np.append(scale, 1.0)
    if scale.size < 2:
        return 1.0
    return float(scale.max() / scale.min())


_C = TypeVar("_C", bound=Component)
_DEFAULTS: dict[type, Any] = {}


def _default(cls: type[_C]) -> _C:
    """The instance of a built-in component class at its defaults, shared by every recipe:
    components are frozen dataclasses (values), and a shared one keeps its description
    (:meth:`~sqnopt.interfaces.Component.describe`) from fit to fit."""
    obj = _DEFAULTS.get(cls)
    if obj is None:
        obj = _DEFAULTS[cls] = cls()
    return cast(_C, obj)


def adapt_objective(objective: Objective, capabilities: frozenset[str]) -> Objective:
    """The objective itself, or the form of it (:meth:`Objective.with_capability`) that
    provides ``capabilities`` (e.g. binary logistic regression as the log-linear model whose
    bound SQB needs); unchanged when no form provides them (the Solver then says why)."""
    out = objective
    for cap in sorted(capabilities - objective.capabilities):
        alt = out.with_capability(cap)
        if alt is not None and cap in alt.capabilities:
            out = alt
    return out


def _row_entries(X: Any) -> NDArray[np.float64]:
    """The stored entries of each row of the sparse matrix ``X`` (as floats)."""
    indptr: NDArray[Any] = X.indptr if X.format == "csr" else sp.csr_matrix(X).indptr
    return np.diff(indptr).astype(np.float64)


def hessian_range(X: Any, lam: float) -> float:
    r"""``max_j mean_i x_{ij}^2 / lam``: the largest diagonal entry of the data part of a
    margin or softmax loss's Hessian (its second derivatives at most 1) over the regulariser,
    the Hessian's smallest eigenvalue where the data leave a direction flat. Beyond about
    ``1/eps = 4.5e15`` a Cholesky factorisation cannot tell that direction from zero (features
    of 1e10 with ``lam = 1e-4``: 1e24), whatever the data's conditioning elsewhere. ``inf``
    for ``lam <= 0``."""
    if not lam > 0:
        return math.inf
    n = max(int(X.shape[0]), 1)
    if sp.issparse(X):
        sq = np.asarray(sp.csr_matrix(X).power(2).sum(axis=0)).ravel()
    else:
        A = np.asarray(X)
        sq = np.einsum("ij,ij->j", A, A) if A.size else np.zeros(A.shape[1])
    top = float(np.max(sq)) / n if sq.size else 0.0
    return max(top, 1.0) / float(lam)       # the intercept's column of ones counts as 1


def _range_within(X: Any, lam: float, sum_squares: float | None) -> bool:
    """``hessian_range(X, lam) <= NEWTON_MAX_RANGE``, decided by the bound
    ``max_j sum_i x_ij^2 <= sum_squares`` when that suffices (no pass over ``X``)."""
    if sum_squares is not None and lam > 0 and math.isfinite(sum_squares):
        n = max(int(X.shape[0]), 1)
        if max(float(sum_squares) / n, 1.0) / lam <= NEWTON_MAX_RANGE:
            return True
    return hessian_range(X, lam) <= NEWTON_MAX_RANGE


def newton_cost_passes(X: Any, n_blocks: int, fit_intercept: bool = False) -> float:
    r"""What forming and factoring the exact Hessian costs, in passes over the data:
    ``(sum_i K^2 m_i (m_i + 1) / 2 + n^2 + n^3 / 3) / (2 K nnz)`` with ``m_i`` the entries of
    row ``i`` (its intercept's counted), ``K`` the parameter blocks (classes of softmax, 1 for a
    margin loss) and ``n`` the parameters: the multiply-adds of :class:`~sqnopt.curvature.Newton`'s
    kernel (every pair of a row's entries for every pair of classes, the fold of the triangle,
    the Cholesky factorisation) over a gradient pass's (a dot and an axpy per entry and
    class)."""
    n_rows, p = X.shape
    extra = 1 if fit_intercept else 0
    K = float(max(n_blocks, 1))
    n = K * (p + extra)
    if sp.issparse(X):
        m = _row_entries(X) + extra
        nnz = max(float(np.sum(m)), 1.0)
        form = K * K * float(np.sum(m * (m + 1.0))) / 2.0
    else:   # every row has p + extra entries: the same sums in closed form (exact integers)
        mi = p + extra
        nnz = max(float(n_rows * mi), 1.0)
        form = K * K * float(n_rows * mi * (mi + 1)) / 2.0
    return float((form + n * n + n ** 3 / 3.0) / (2.0 * K * nnz))


def bound_cost_passes(X: Any, n_blocks: int, fit_intercept: bool = False, *,
                      rows: int | None = None) -> float:
    r"""What forming and factoring :class:`~sqnopt.curvature.BoundLBFGS`'s bound
    ``M_1 = c X'SX / N + lam I`` costs, in passes over the data:
    ``(form + dim^3 / 3) / (2 K nnz)`` with ``dim`` the features (and the intercept), ``K`` the
    parameter blocks and ``form`` the multiply-adds of the kernel's product: ``N dim^2 / 2``
    by BLAS ``dsyrk`` over rows gathered densely, or for sparse rows ``sum_i m_i^2`` from the
    pairs of each row's ``m_i`` entries when that is at most a quarter of ``N dim^2`` (the
    kernel's own rule); over a gradient pass's (a dot and an axpy per entry and block). BLAS
    runs the ``dsyrk`` several times faster per multiply-add than a pass runs its own, so this
    overstates the time of dense data. ``rows``: the matrix formed from a sample of that many
    rows (``BoundLBFGS(rows=m)``), whose product costs ``m / N`` of the whole one's."""
    n_rows, p = X.shape
    dim = p + (1 if fit_intercept else 0)
    K = float(max(n_blocks, 1))
    frac = 1.0 if rows is None or rows >= n_rows else rows / float(max(n_rows, 1))
    form = n_rows * dim * dim / 2.0
    if sp.issparse(X):
        m = _row_entries(X)
        nnz = float(np.sum(m))
        pairs = float(np.sum(m * m))
        if 4.0 * pairs <= float(n_rows) * dim * dim:
            form = pairs
    else:
        nnz = float(n_rows) * float(p)
    nnz = max(nnz + (n_rows if fit_intercept else 0), 1.0)
    return float((frac * form + dim ** 3 / 3.0) / (2.0 * K * nnz))


def default_curvature(objective: Objective, X: Any, n_classes: int, *,
                      sum_squares: float | None = None) -> CurvatureModel:
    """The curvature model of ``curvature="auto"``, from the objective and the data's shape.
    ``sum_squares``: the sum of the squares of ``X``'s stored values when the caller has it
    (:func:`sqnopt.data.check_matrix` computes it while checking the values): it bounds every
    column's, so when ``max(sum_squares / N, 1) / lam`` is within ``NEWTON_MAX_RANGE`` the test
    of :func:`hessian_range` holds without its pass over the data (the same choice, as the
    bound is at least the range).

    * First, for a loss without a curvature bound whose curvature at score 0 is the same for
      every target (:attr:`~sqnopt.interfaces.Objective.start_curvature`: Poisson), L-BFGS
      preconditioned by the Hessian at ``w = 0`` formed on a sample of the rows
      (:class:`~sqnopt.curvature.BoundLBFGS` with ``rows="auto"``:
      ``SAMPLED_BOUND_ROWS_PER_PARAM`` rows per entry of the block), when the data is in
      memory, the loss is strongly convex, a block has at most ``BOUND_MAX_DIM`` entries and
      the sample's matrix costs at most ``BOUND_PASSES`` passes (:func:`bound_cost_passes`
      with ``rows``). The matrix takes out the features' correlations and scales as
      Böhning's bound does below: on such data plain L-BFGS (and scikit-learn's
      ``PoissonRegressor``) needed tens to hundreds of passes, and Newton's method, which
      forms the whole Hessian at every iterate, was slower at every shape measured
      (docs/report_race.md, "A sampled Hessian preconditions Poisson's L-BFGS").
    * Newton's method (:class:`~sqnopt.curvature.Newton`: the exact Hessian formed and factored
      at every iterate, on the whole data set with a line search) when the objective provides
      the Hessian's layout (``dense_hessian``), is strongly convex (``lam > 0``: the Hessian is
      then positive definite, and its range :func:`hessian_range` at most
      ``NEWTON_MAX_RANGE``, so that double precision still sees it so) and forming and
      factoring the Hessian costs at most
      ``NEWTON_PASSES`` passes over the data (:func:`newton_cost_passes`: rows with few
      entries, few parameters -- a9a, w8a, mushrooms) and the rows are in memory (an array or
      a sparse matrix, not chunks out of core). It converges quadratically, in a handful
      of iterations of about two passes plus that cost each, where L-BFGS needs tens of passes.
      Not for a loss whose curvature vanishes on a range of scores
      (:attr:`~sqnopt.interfaces.Objective.curvature_vanishes`: Huber's beyond its threshold),
      whose Hessian is singular along the intercept wherever every residual is an outlier (at
      ``w = 0`` when the targets lie far from 0): the bound's preconditioner below, positive
      definite everywhere, takes its place.
      A quadratic objective (capability ``quadratic``: squared error) forms its Hessian once
      and is solved by one Newton step, so its budget is ``QUADRATIC_NEWTON_PASSES``.
    * For a quadratic objective of one parameter block with Hessian-vector products, strongly
      convex, the rows in memory, whose Hessian costs more: truncated Newton whose CG runs to
      a small residual in one outer iteration (:func:`quadratic_cg`), conjugate gradients on
      the objective itself.
    * Truncated Newton (:class:`~sqnopt.curvature.TruncatedNewton`: Newton-CG on the whole
      data set with a line search, Hessian-vector products reusing the loss's second
      derivatives computed once per iteration) when the objective is a margin loss (one
      parameter block) with Hessian-vector products, strongly convex, the rows are in memory,
      sparse, of similar lengths (:func:`row_norm_spread` at most ``SAGA_SPREAD``) and there
      are at least as many features as samples (hashed one-hot data such as criteo,
      normalised bag-of-words such as news20): the data term ``X' D X / N`` then has rank at
      most ``N``, so at least ``n - N`` of the Hessian's eigenvalues equal ``lam`` and CG
      converges in few products, while the outer Newton iterations do not grow with the
      conditioning that slows L-BFGS down when ``lam`` is small and many features are rare.
      Rows of very different lengths (raw term counts) spread the rest of the spectrum over
      orders of magnitude, so each CG solve runs to its cap of products: there (20-class
      news20 on raw counts) L-BFGS was an order of magnitude faster. Softmax on such data was
      not measured, so it keeps L-BFGS.
    * L-BFGS preconditioned by Böhning's bound (:class:`~sqnopt.curvature.BoundLBFGS`: the
      two-loop recursion starts from ``gamma M^{-1}``, ``M = c X'X / N + lam I`` per block,
      formed and factored once) when the objective provides the bound's layout
      (``dense_hessian``) and a curvature bound, is strongly convex, the rows are in memory,
      a parameter block has at most ``BOUND_MAX_DIM`` entries and forming the bound costs at
      most ``BOUND_PASSES`` passes (:func:`bound_cost_passes`: many samples per feature and,
      for the softmax, many classes sharing one factor -- dense images, dna). ``M`` takes out
      the features' correlations and uncentred scale, which make plain L-BFGS crawl there.
      Where the bound on every row costs more but the bound on a sample of
      ``SAMPLED_BOUND_ROWS_PER_PARAM`` rows per entry of the block does not (many more rows
      than that), the sampled one (``BoundLBFGS(rows="auto")``): an estimate of the bound,
      which takes out the same correlations and scales (dense logistic regression with
      correlated or unevenly scaled features: a few passes where plain L-BFGS needed tens to
      hundreds; docs/report_race.md, "A sampled Hessian preconditions Poisson's L-BFGS").
    * Otherwise, for a smooth objective, limited-memory BFGS (memory 10 to 30:
      :func:`lbfgs_memory`), whose recipe grows its
      batches to the whole data set and ends as deterministic L-BFGS with a line search --
      O(10 n) memory and one pass per iteration, whatever the data's shape (news20's 1.2
      million softmax weights, criteo's hashed features, dense images with many classes).
    * For a non-smooth objective (hinge), where curvature means nothing, the identity (SGD).

    The threshold comes from ``bench/full_batch_solvers.py --newton-cost`` (the measured cost of a Hessian in passes
    and whole fits of both models; docs/choosing.md); the choice between truncated Newton and
    L-BFGS from the race (``bench/race``, docs/report_full_batch.md "Truncated Newton"). Subsampled
    Newton-CG (``"newton_cg"``) was faster on a low-dimensional set but far slower on badly
    conditioned high-dimensional ones (``bench/full_batch_solvers.py``, ``docs/gradients.md``),
    so it is not a default."""
    from sqnopt.curvature import LBFGS, BoundLBFGS, Identity, Newton, TruncatedNewton
    from sqnopt.curvature._components import NEWTON_MAX_PARAMS

    if SMOOTH not in objective.capabilities:
        return _default(Identity)
    # rows at hand (an array or a sparse matrix): data described only by its shape (the
    # out-of-core estimators') cannot bring the whole data set to one Hessian every iteration
    in_memory = sp.issparse(X) or isinstance(X, np.ndarray)
    quadratic = QUADRATIC in objective.capabilities
    K = objective.n_blocks(max(int(n_classes), 2))
    # a preconditioner or Newton's Hessian from the rows: they are at hand, the loss gives the
    # Hessian's layout and is strongly convex
    formed = in_memory and {DENSE_HESSIAN, STRONGLY_CONVEX} <= objective.capabilities
    bound_fits = formed and X.shape[1] + 1 <= BOUND_MAX_DIM
    sampled_rows = SAMPLED_BOUND_ROWS_PER_PARAM * (X.shape[1] + 1)
    # a loss without a curvature bound whose curvature at score 0 is known (Poisson): the
    # sampled Hessian at the start, before Newton's method (which forms the whole Hessian at
    # every iterate; the sampled start was faster on every problem measured)
    if (bound_fits and objective.curvature_bound is None
            and objective.start_curvature is not None and objective.start_curvature > 0
            and bound_cost_passes(X, K, fit_intercept=True, rows=sampled_rows) <= BOUND_PASSES):
        return _sampled_bound()
    if formed and not objective.curvature_vanishes:
        budget = QUADRATIC_NEWTON_PASSES if quadratic else NEWTON_PASSES
        if (K * (X.shape[1] + 1) <= NEWTON_MAX_PARAMS
                and newton_cost_passes(X, K, fit_intercept=True) <= budget
                and _range_within(X, float(objective.lam), sum_squares)):
            return _default(Newton)
    if (quadratic and in_memory
            and {HESSIAN_VECTOR, STRONGLY_CONVEX} <= objective.capabilities and K == 1):
        return quadratic_cg()
    if (sp.issparse(X) and {HESSIAN_VECTOR, STRONGLY_CONVEX} <= objective.capabilities
            and X.shape[1] >= X.shape[0] and K == 1
            and row_norm_spread(X, np.ones(X.shape[0]), True) <= SAGA_SPREAD):
        return _default(TruncatedNewton)
    if bound_fits and objective.curvature_bound is not None:
        if bound_cost_passes(X, K, fit_intercept=True) <= BOUND_PASSES:
            return _default(BoundLBFGS)
        if bound_cost_passes(X, K, fit_intercept=True, rows=sampled_rows) <= BOUND_PASSES:
            return _sampled_bound()
    return _default(LBFGS)


@functools.cache
def _sampled_bound() -> CurvatureModel:
    """The default's :class:`~sqnopt.curvature.BoundLBFGS` on a sample of the rows (one
    shared instance, as :func:`_default`'s)."""
    from sqnopt.curvature import BoundLBFGS

    return BoundLBFGS(rows="auto")


@functools.cache
def quadratic_cg() -> CurvatureModel:
    r"""The curvature model of ``curvature="auto"`` for a quadratic objective (capability
    ``quadratic``) whose Hessian is too costly to form: truncated Newton whose conjugate
    gradients run to the relative residual ``QUADRATIC_FORCING`` (at most
    ``QUADRATIC_CG_ITER`` products), so that one outer iteration solves the objective.

    On a quadratic, the Hessian is the same at every iterate and the CG residual
    :math:`g + H d` is the gradient at :math:`w + d`: CG on the Newton system is CG on the
    objective itself (Hestenes & Stiefel 1952; on the normal equations of least squares, what
    LSQR computes, Paige & Saunders 1982), and stopping it early to take another outer
    iteration only restarts it -- a gradient pass and a line search more, and the Krylov
    space built so far thrown away. :class:`~sqnopt.curvature.TruncatedNewton`'s own default
    forcing (``0.25``) is made for losses whose Hessian changes. Here, when the run has a
    gradient tolerance (the estimator's ``tol``), CG runs until the largest entry of its
    residual is half of it (``gtol_stop``): the residual being the next gradient, the outer
    loop's own test then holds after this one run, whatever the scale of the first gradient
    (a relative forcing either stops short of the test, costing a second run, or goes past
    it). Without one (``tol=None`` and a budget of outer iterations), a small fixed forcing
    keeps the whole solve in one CG run. CG is preconditioned by
    the Hessian's diagonal mixed with the regulariser's (Hsia, Chiang & Lin, ACML 2018: one
    pass to form, as the Hessian does not change): the columns of sparse data differ in scale
    by orders of magnitude (rare and frequent terms), which the diagonal takes out."""
    from sqnopt.curvature import TruncatedNewton

    return TruncatedNewton(forcing=QUADRATIC_FORCING, max_iter=QUADRATIC_CG_ITER,
                           preconditioner="diagonal", gtol_stop=True)


def _tuned(curvature: CurvatureModel, by_name: bool, lam: float, X: Any,
           auto_schedule: bool) -> CurvatureModel:
    """The model's own tuned settings (:meth:`~sqnopt.interfaces.CurvatureModel.tuned`) when
    the user named it without parameters, else the model as given. Built-ins: RES keeps its
    regulariser below ``lam``, SQB takes the conjugate-gradient inner solve, L-BFGS in its
    growing-batch recipe sizes its memory to the data (:func:`lbfgs_memory`); a plugin model
    that declares ``tuned`` is treated alike."""
    if not by_name:
        return curvature
    made = curvature.tuned(lam, X, auto_schedule=auto_schedule)
    if not isinstance(made, CurvatureModel):
        raise TypeError(f"curvature {curvature.describe()}: tuned() returned "
                        f"{type(made).__name__}; it must return the model itself or a tuned "
                        "copy (a CurvatureModel)")
    return made


def choose(objective: Objective, curvature: CurvatureModel, X: Any, grad_weight: FloatArray, *,
           fit_intercept: bool, schedule: BatchSchedule | str = "auto",
           step: StepRule | str = "auto", sampling: Sampling | Literal["auto"] = "auto",
           gradient: GradientEstimator | str = "auto",
           curvature_by_name: bool = False) -> Recipe:
    """The recipe for ``curvature`` on ``objective`` and the data ``X`` (see the module
    docstring). ``schedule``, ``step``, ``sampling`` and ``gradient`` given as components or a
    sampling name are kept; ``"auto"`` ones come from the recipe. ``grad_weight`` are the
    samples' weights in the gradient (their mean scales the automatic step)."""
    from sqnopt.gradients import SAGA, Minibatch

    curvature = _tuned(curvature, curvature_by_name, float(objective.lam), X,
                       isinstance(schedule, str))
    objective = adapt_objective(objective, curvature.requires)
    secant_like = curvature.needs_secant_pair or (
        curvature.direction_scale == "newton" and not curvature.needs_curvature_batch)
    stochastic = not (curvature.needs_curvature_batch or secant_like)
    # the weighted squared row norms, computed (one pass) for the SAGA test and its step alike
    sq: list[FloatArray] = []
    # Gradient-scaled directions on a smooth finite sum: SAGA's variance reduction turns the
    # minibatch gradient's noise floor into linear convergence with a constant step.
    variance_reduced = (stochastic and curvature.direction_scale == "gradient"
                        and {SMOOTH, LINEAR_SCORES} <= objective.capabilities
                        and sampling != "weighted"
                        and row_norm_spread(X, grad_weight, fit_intercept, keep=sq)
                        <= SAGA_SPREAD)
    est: GradientEstimator = (
        (_default(SAGA) if variance_reduced else _default(Minibatch))
        if isinstance(gradient, str)
        else gradient)
    plain = bool(est.plain)
    auto_schedule = isinstance(schedule, str)
    csched: BatchSchedule | None = None
    rec_sampling: Sampling = "uniform"
    sched: BatchSchedule
    rec_step: StepRule
    if curvature.full_batch:
        sched = _default(Full)
        csched = _default(Full)
        # the exact line minimisation where the losses are functions of linear scores (it costs
        # what Armijo's accepted unit step costs, and saves outer iterations)
        rec_step = (_default(ScoreLine) if LINEAR_SCORES in objective.capabilities
                    else _default(Armijo))
        rec_sampling = "subset"
        full_phase, report = True, 10
    elif curvature.needs_curvature_batch and curvature.majorizes:
        sched = Geometric(b1=float(BOUND_B1), rate=BOUND_RATE)
        csched = Fixed(BOUND_BATCH)
        rec_step = Constant(eps=1.0)
        rec_sampling = "subset"
        full_phase, report = True, 10
    elif curvature.needs_curvature_batch:
        sched = Geometric(b1=float(PROGRESSIVE_B1), rate=PROGRESSIVE_RATE)
        csched = Fixed(_curvature_batch(curvature, X.shape[0]))
        rec_step = _default(Armijo)
        rec_sampling = "subset"
        full_phase, report = True, 10
    elif secant_like:
        sched = Geometric(b1=float(PROGRESSIVE_B1), rate=PROGRESSIVE_RATE)
        rec_step = _default(Armijo)
        rec_sampling = "subset"
        full_phase, report = True, 10
    else:
        b = stochastic_batch(objective, curvature, X, plain=plain)
        sched = Fixed(b)
        rec_step = _first_order_step(X, grad_weight, objective, curvature, b,
                                     fit_intercept, plain, sq)
        rec_sampling = "uniform" if plain else "shuffle"
        full_phase, report = False, 1000
    if not auto_schedule:
        assert isinstance(schedule, BatchSchedule)
        sched = schedule
        csched = None
        if curvature.full_batch:
            csched = _default(Full)
        elif curvature.needs_curvature_batch:
            csched = Fixed(BOUND_BATCH if curvature.majorizes
                           else _curvature_batch(curvature, X.shape[0]))
        full_phase = _reaches_full(schedule, X.shape[0])
        if stochastic and isinstance(step, str):
            rec_step = _first_order_step(X, grad_weight, objective, curvature,
                                         _batch_size(schedule, X.shape[0], 1), fit_intercept,
                                         plain, sq)
    return Recipe(objective=objective, curvature=curvature, schedule=sched,
                  curvature_schedule=csched,
                  step=rec_step if isinstance(step, str) else step,
                  sampling=rec_sampling if sampling == "auto" else sampling,
                  full_batch_phase=full_phase, report_every=report, gradient=est)


def row_norm_spread(X: Any, grad_weight: FloatArray, fit_intercept: bool, *,
                    keep: list[FloatArray] | None = None) -> float:
    """The largest weighted squared row norm over their clipped mean (see
    :func:`lipschitz_estimate`): 1 for rows of equal length, 800 for news20's term counts.
    ``keep``: a list that receives the weighted squared row norms (for a caller that needs
    them too)."""
    sq = _weighted_row_sq_norms(X, grad_weight, fit_intercept)
    if keep is not None:
        keep.append(sq)
    if sq.size == 0:
        return 1.0
    clipped = float(np.mean(np.minimum(sq, _q99(sq))))
    return float(np.max(sq)) / clipped if clipped > 0 else 1.0


def _first_order_step(X: Any, grad_weight: FloatArray, objective: Objective,
                      curvature: CurvatureModel, batch: int, fit_intercept: bool,
                      plain: bool, weighted_sq: list[FloatArray] | None = None) -> StepRule:
    r"""The step of the stochastic recipes: AdaGrad's normalized step; with a variance-reduced
    gradient a constant step from ``L_max = c max_i g_i (||x_i||^2 + [intercept]) + lam``, the
    largest sample's smoothness constant (``c`` the loss's curvature bound, ``g_i`` the gradient
    weights); else ``1/(L + lam t)``.

    The variance-reduced step, by batch size ``b``:

    * ``b = 1``: ``1/(3 L_max)``. Defazio, Bach & Lacoste-Julien (2014), "SAGA: A fast
      incremental gradient method with support for non-strongly convex composite objectives"
      (NIPS), prove that SAGA with single-sample steps and ``gamma = 1/(3 L)``, ``L`` the
      largest smoothness constant of the ``f_i``, converges linearly on a ``mu``-strongly convex
      sum, ``E||w_k - w*||^2 <= (1 - min(1/(4n), mu/(3L)))^k C``, without knowing ``mu``: the
      largest step their proof covers, so the one the recipe takes where it picks single
      samples (:func:`stochastic_batch`, sparse margin rows for the lazy SAGA step).
    * ``b > 1``: ``1/L_max``. For ``b``-sample batches the bound of Gazagnadou, Gower & Salmon
      (2019), "Optimal mini-batch and step sizes for SAGA" (ICML), is ``1/(4 L(b))`` with the
      expected smoothness ``L(b) = n(b-1)/(b(n-1)) L + (n-b)/(b(n-1)) L_max`` (``L`` the whole
      sum's constant), which falls from ``L_max`` at ``b = 1`` towards ``L`` as ``b`` grows;
      the recipe's batches of ``n_features / nnz`` rows keep ``1/L_max``, the practical step of
      Schmidt, Le Roux & Bach (2017) for SAG: within that bound where ``L(b) <= L_max / 4``
      (large batches, the whole sum's constant well below the longest row's), beyond the
      proofs otherwise.

    The recipe uses SAGA only when the rows' lengths are within ``SAGA_SPREAD`` of each other,
    where ``1/L_max`` is at most that factor below ``1/L``: a step made for typical rows let one
    row 1e4 times longer blow SAGA's table up.
    """
    if curvature.direction_scale == "normalized":
        return normalized_step(X, fit_intercept)
    if not plain:   # (the weighted squared row norms, when the caller has them already)
        sq = weighted_sq[0] if weighted_sq else _weighted_row_sq_norms(X, grad_weight,
                                                                       fit_intercept)
        return Constant(eps=variance_reduced_step(sq, objective.curvature_bound,
                                                  float(objective.lam),
                                                  variance_reduced_factor(batch)))
    return gradient_step(X, grad_weight, objective, batch, fit_intercept)


def variance_reduced_factor(batch: int) -> float:
    """``k`` of the variance-reduced constant step ``1/(k L_max)`` for batches of ``batch``
    samples: 3 for single samples, 1 for larger batches (:func:`_first_order_step` says
    why)."""
    return 3.0 if batch == 1 else 1.0


def hessian_batch(n_samples: int) -> int:
    """Curvature batch of models that sample the Hessian (subsampled Newton-CG): a tenth of the
    data, at least ``PROGRESSIVE_B1`` samples (Byrd, Chin, Neveitt & Nocedal 2011 take 5-10 %)."""
    return int(min(n_samples, max(PROGRESSIVE_B1, n_samples // HESSIAN_FRACTION)))


def _curvature_batch(curvature: CurvatureModel, n_samples: int) -> int:
    """Samples drawn per iteration for a Hessian-sampling model: its Hessian sample
    (:func:`hessian_batch`) spread over the batches it joins into one update."""
    return max(1, -(-hessian_batch(n_samples) // curvature.batches_per_update))


def stochastic_batch(objective: Objective, curvature: CurvatureModel, X: Any,
                     plain: bool = True) -> int:
    """Minibatch size of the stochastic recipes: 5, or more when an iteration's vector work
    (a few passes over the weights: the direction, the step, the regulariser) would dwarf its
    gradient work (``b`` rows of ``nnz`` entries; both scale with the number of classes):
    ``b = n_features / (mean nnz per row)``, capped at a tenth of the data. On news20 (62,061
    features, 80 entries per row) that is 778 instead of 5, which cuts an epoch from 3,200
    iterations over 1.2 million softmax weights to 21.

    The sparse margin path with the identity avoids that vector work: with the plain minibatch
    gradient it keeps its weights in scaled form, O(nnz) per step, so it keeps 5; with a
    variance-reduced gradient (``plain=False``, SAGA's table) it takes single samples where the
    lazy sparse SAGA step pays (:func:`_lazy_pays`: a row's entries at most
    ``LAZY_ENTRY_FRACTION`` of the features), each step O(nnz of the row): SAGA's own setting,
    the one its step bound is proven for (:func:`_first_order_step`). Elsewhere (dense rows,
    sparse rows too long for the lazy step to pay, the softmax) SAGA steps on the dense iterate
    and takes the batches of ``n_features / nnz`` rows like the other models."""
    n, p = X.shape
    if sp.issparse(X) and curvature.direction_is_gradient and MARGIN in objective.capabilities:
        if plain:
            return BATCH
        if _lazy_pays(X, 1):
            return 1
    nnz = float(X.nnz) / max(n, 1) if sp.issparse(X) else float(p)
    b = int(np.ceil((p + 1) / max(nnz, 1.0)))
    return int(min(max(BATCH, b), max(BATCH, n // 10)))


def _lazy_pays(X: Any, batch: int) -> bool:
    """Whether batches of ``batch`` rows of the sparse ``X`` hold on average at most
    ``LAZY_ENTRY_FRACTION`` of the features' count of entries: the test by which the solver runs
    SAGA on its lazy sparse iterate (:func:`~sqnopt.solver._lazy_loop.lazy_loop_pays`)."""
    from sqnopt.solver._lazy_loop import lazy_entries_pay

    n, p = X.shape
    return bool(lazy_entries_pay(n, p, X.nnz, batch))


def _batch_size(schedule: BatchSchedule, n_samples: int, k: int) -> int:
    from sqnopt.interfaces import Problem

    problem = Problem(n_samples=n_samples, n_features=1, dim=1, n_blocks=1, n_params=1, lam=0.0,
                      fit_intercept=False, capabilities=frozenset())
    return int(schedule.init(problem).batch_size(k))


def _reaches_full(schedule: BatchSchedule, n_samples: int, within: int = 64) -> bool:
    """Whether the schedule's batches are the whole data set by iteration ``within``."""
    return _batch_size(schedule, n_samples, within) >= n_samples


def _composite_adagrad() -> CurvatureModel:
    from sqnopt.curvature import AdaGrad

    return AdaGrad(composite=True)


#: The streaming recipe's curvature model (one shared instance: a value, described alike in
#: every fit).
_COMPOSITE_ADAGRAD = _composite_adagrad()


#: Iterative parameter mixing of the large-data recipe (``parameter_mixing=True``,
#: :mod:`sqnopt.training._mixing`): the shards each chunk's rows are split into -- a constant,
#: not the thread count, so that every ``n_jobs`` gives the same model (two: averaging more
#: models of fewer rows each raises the held-out loss per pass, ``bench/parameter_mixing.py``)
#: ...
MIX_SHARDS = 2
#: ... the fewest rows of a shard (a smaller chunk runs sequentially) ...
MIX_MIN_ROWS = 10_000
#: ... and the fewest stored values of a chunk per parameter: the mixing reads every parameter's
#: record once and writes those either shard wrote, about what updating a stored value costs
#: per parameter -- a few per parameter keep it a small part of the chunk's work.
MIX_MIN_VALUES_PER_PARAM = 4.0


def large_scale(n_samples: int, nnz: float) -> bool:
    """Whether in-memory data of ``n_samples`` rows and ``nnz`` stored values is in the
    large-data regime, where ``curvature="auto"`` takes the streaming recipe (:func:`streaming`)
    and stops on a held-out split instead of solving the training objective to ``tol``.

    Bottou & Bousquet (*The Tradeoffs of Large Scale Learning*, NIPS 2008): once the data are
    many, the time to learn is bounded by the passes over them, and optimising the training
    objective below the estimation error is wasted time; one or a few passes of a stochastic
    method reach the held-out loss of the solution. The rule asks for both many rows
    (``LARGE_ROWS``: the estimation error is then small next to what a few stochastic passes
    leave) and expensive passes (``LARGE_NNZ`` stored values), so that the in-memory
    benchmark sets -- up to 60,000 rows of dense images -- keep being solved to ``tol``."""
    return int(n_samples) >= LARGE_ROWS and float(nnz) >= LARGE_NNZ


def _nonzero_rms(X: Any, fit_intercept: bool) -> float:
    """The root-mean-square of the nonzero feature values (the intercept's constant 1 counted
    as one of them): the unit of a weight change (see :func:`normalized_step`)."""
    return 1.0 / float(normalized_step(X, fit_intercept).eps)


def step_candidates(X: Any, fit_intercept: bool) -> tuple[float, ...]:
    """The constant steps the streaming recipe races: ``2**k / s`` for ``k`` in
    ``STEP_EXPONENTS``, ``s`` the root-mean-square of the nonzero values of ``X`` (a sample of
    the data suffices): the composite AdaGrad step moves each weight by at most the step per
    example, so ``1 / s`` is a margin change of about one per feature, whatever their unit."""
    s = _nonzero_rms(X, fit_intercept)
    return tuple(float(2.0 ** k / s) for k in STEP_EXPONENTS)


def streaming(objective: Objective, X: Any, fit_intercept: bool, *, l1: float = 0.0) -> Recipe:
    r"""The large-data recipe: per-example composite-mirror-descent AdaGrad with the step
    raced on progressive validation loss.

    The composition is diagonal AdaGrad (Duchi, Hazan & Singer, *Adaptive subgradient
    methods*, JMLR 2011) on single examples in a random order, its step a constant ``eta``:
    every weight gets its own step ``eta / sqrt(G_j)``, ``G_j`` the sum of its squared loss
    gradients, so rare features (the long tail of hashed categorical data) learn from their
    few occurrences while frequent ones settle. Single examples make a pass ``N`` updates at
    ``O(nnz)`` each on sparse rows.

    The step is not guessed: the trainer races the candidates of :func:`step_candidates` on
    the first examples by successive halving, each candidate's score its *progressive
    validation* loss (the loss of each example before the update that uses it, Blum, Kalai &
    Langford 1999 -- an unbiased estimate of the held-out loss of the online learner), and goes
    on with the winner. On the benchmark sets the winner's held-out loss after one pass is
    within a few tenths of a percent of the best fixed step's, where the best fixed step
    differs by a factor of 32 between sets.

    ``l1 > 0`` (``penalty="l1"`` / ``"elasticnet"`` on a stream or in ``partial_fit``, the
    penalty's declared ``l1_strength``; its ``l2_strength`` is the objective's ``lam``): the
    same composition with AdaGrad in its FTRL-Proximal form (McMahan et al., *Ad click
    prediction*, KDD 2013; ``AdaGrad(composite=True, l1=l1, ftrl=True)``), the penalty taken
    cumulatively in closed form: a weight is an exact zero while its averaged gradient is
    within ``l1``, and a coordinate no row touches keeps its state, so a step costs
    ``O(nnz)``. FTRL rather than per-step soft thresholding (COMID, ``ftrl=False``): on sparse
    rows each example's gradient kicks its coordinates off zero, so per-step thresholding
    leaves most weights nonzero, where the summed form's model is as sparse as the
    full-batch optimum at a lower objective (``tests/solver/test_proximal_adagrad.py``). The
    race and the held-out split score the smooth loss alone, the quantity a sparse model is
    chosen for.

    **Two shards per chunk** (``parameter_mixing=True``, the default). The updates are
    sequential; the trainer runs each chunk of at least ``MIX_SHARDS * MIX_MIN_ROWS`` rows as
    iterative parameter mixing (McDonald, Hall & Mann, NAACL 2010;
    :mod:`sqnopt.training._mixing`): the state at the chunk's start learns from each half of
    its rows separately -- on two threads when ``n_jobs`` allows -- and the two are averaged,
    weights and accumulators alike; the shards run at twice the raced step in the first pass
    (the average then moves as the sequential updates would, to first order) and at the raced
    step after it (the average then moves as they would at half the step, near the optimum).
    The shards depend on the chunk, not on the threads, so every ``n_jobs`` gives the same
    model; the held-out loss per pass is the sequential updates' in the first pass and lower
    after it (``bench/parameter_mixing.py``). The FTRL-Proximal form runs its chunks
    sequentially.
    """
    from sqnopt.curvature import AdaGrad
    from sqnopt.gradients import Minibatch

    candidates = step_candidates(X, fit_intercept)
    curvature = (_COMPOSITE_ADAGRAD if not l1
                 else AdaGrad(composite=True, l1=float(l1), ftrl=True))
    return Recipe(objective=objective, curvature=curvature, schedule=Fixed(1),
                  curvature_schedule=None, step=Constant(eps=candidates[len(candidates) // 2]),
                  sampling="shuffle", full_batch_phase=False, report_every=100_000,
                  gradient=_default(Minibatch), step_candidates=candidates, streaming=True)
