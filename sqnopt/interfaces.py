"""The four interfaces of sqnopt (plus projections), at the Python level.

A *component* is an immutable configuration object (what the user writes:
``LBFGS(memory=10)``).  When a solve starts, the solver calls its ``init`` method, which returns a
*kernel*: the stateful object that does the work for that solve.

* Compiled kernels subclass the Cython base classes declared in the installed ``.pxd`` files
  (``sqnopt/objectives/_base.pxd``, ``sqnopt/curvature/_base.pxd``, ``sqnopt/schedules/_base.pxd``,
  ``sqnopt/steps/_base.pxd``, ``sqnopt/projections/_base.pxd``); when every kernel of a solve is
  compiled the iteration loop runs in Cython without the GIL.
* Pure-Python kernels implement the protocols below (``*KernelLike``); a solve with at least one
  such kernel runs the same iteration in Python, with identical semantics.

Every kernel may declare ``compiled`` (a class attribute, read with a default of False): the
compiled base classes declare it True, so their subclasses inherit it; the solver reads the
declaration, never the kernel's class, to choose the loop (:func:`kernel_compiled`). A Python
subclass of a compiled base that overrides only Python-level methods declares ``compiled =
False`` so that the Python loop calls them. A kernel that declares ``compiled`` without
subclassing its kind's compiled base is refused when the compiled loop is built.

The components declare what the recipes and the solver decide from: the capabilities
(``requires`` against the objective's ``capabilities``), the curvature model's
:attr:`~CurvatureModel.direction_scale` and tuned settings (:meth:`CurvatureModel.tuned`),
the gradient estimator's :attr:`~GradientEstimator.plain`, the step rule's
:attr:`~StepRule.line_search` and the memory each keeps (``memory_bytes``). Nothing in the
recipes, the solver's choice of loop, the trainer or the command line decides by a component's
class (the compiled loops check the C types they run on, for memory safety).

Sign convention: gradients are derivatives of the objective that is minimised; margin losses
expose ``dloss_dmargin`` (d loss / d margin), never its negative.  Directions ``d`` are ascent-
oriented like the gradient (``d = H g``); the driver moves ``w <- w - step * d``.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from sqnopt.data import Dataset, LabelKind

FloatArray = NDArray[np.float64]
IndexArray = NDArray[np.intp]
Kind = Literal["objective", "curvature", "schedule", "step", "projection", "gradient",
               "penalty"]
#: The slots of the stochastic driver (:class:`sqnopt.Solver`'s components).
SOLVER_KINDS: tuple[Kind, ...] = ("objective", "curvature", "schedule", "step", "projection",
                                  "gradient")
#: Every registered component kind: the driver's slots and the penalties of the composite
#: solvers (:mod:`sqnopt.composite`).
KINDS: tuple[Kind, ...] = (*SOLVER_KINDS, "penalty")

# Capability vocabulary. Objectives *provide* capabilities; other components *require* them.
SMOOTH = "smooth"                    # differentiable everywhere (secant pairs are meaningful)
STRONGLY_CONVEX = "strongly_convex"  # lam > 0
MARGIN = "margin"                    # loss of a linear margin y * (w . x + b)
QUADRATIC_BOUND = "quadratic_bound"  # partition-function bound (SQB, Aravkin et al. 2012)
QUADRATIC = "quadratic"              # F is a quadratic function of w: its Hessian is the same at
                                     # every iterate (squared error), so one exact Newton step
                                     # from any point reaches the minimiser
BINARY = "binary"
MULTICLASS = "multiclass"
REGRESSION = "regression"          # real-valued targets (label_kind "regression")
PROBABILISTIC = "probabilistic"      # a negative log-likelihood: scores map to probabilities
LINEAR_SCORES = "linear_scores"      # per-sample losses of linear scores; the kernel exposes the
                                     # scores' derivatives (n_scores > 0), SAGA's table
HESSIAN_VECTOR = "hessian_vector"    # Hessian-vector products on a batch (hess_size > 0)
DENSE_HESSIAN = "dense_hessian"      # parameters are K blocks of [x_i, 1]-linear scores with a
                                     # K x K score Hessian (hess_size = K, or 1 for a margin):
                                     # the exact n x n Hessian can be formed row by row

#: What a unit step along a curvature model's direction means (``CurvatureModel.direction_scale``).
DirectionScale = Literal["gradient", "newton", "normalized"]

#: How a gradient estimate is assembled from sums over the data's row blocks
#: (``GradientEstimator.partial_sums``).
PartialSums = Literal["minibatch", "snapshot", "variance_test"]

# Return codes of ``update_pair`` / ``observe_batch`` (mirrors ``sqnopt/curvature/_base.pxd``).
PAIR_SKIPPED = 0
PAIR_ACCEPTED = 1
PAIR_RESET = 2
CURVATURE_ERROR = -1
BATCH_OBSERVED = 3     # observe_batch: the batch was taken in, no pair offered

# Return codes of an iterate representation's first-order step (mirrors
# ``sqnopt/solver/_iterate.pxd``: ``cy_first_order`` / :meth:`IterateKernelLike.first_order`).
ITERATE_STEPPED = 0          # the step was applied
ITERATE_NONFINITE_LOSS = 1   # the minibatch objective is not finite: nothing applied
ITERATE_NONFINITE = 2        # the step would leave a non-finite iterate: nothing applied

__all__ = [
    "BATCH_OBSERVED",
    "BINARY",
    "CURVATURE_ERROR",
    "DENSE_HESSIAN",
    "PAIR_ACCEPTED",
    "PAIR_RESET",
    "PAIR_SKIPPED",
    "PROBABILISTIC",
    "SOLVER_KINDS",
    "BatchSchedule",
    "BindingKernelLike",
    "Component",
    "CurvatureKernelLike",
    "CurvatureModel",
    "DirectionScale",
    "GradientEstimator",
    "GradientKernelLike",
    "HESSIAN_VECTOR",
    "ITERATE_NONFINITE",
    "ITERATE_NONFINITE_LOSS",
    "ITERATE_STEPPED",
    "IterateKernelLike",
    "kernel_compiled",
    "KINDS",
    "LINEAR_SCORES",
    "Kind",
    "MARGIN",
    "MULTICLASS",
    "Objective",
    "ObjectiveKernelLike",
    "PointStepKernelLike",
    "PartialSums",
    "Penalty",
    "PenaltyKernelLike",
    "Problem",
    "Projection",
    "ProjectionKernelLike",
    "QUADRATIC",
    "QUADRATIC_BOUND",
    "REGRESSION",
    "SMOOTH",
    "STRONGLY_CONVEX",
    "ScheduleKernelLike",
    "StepKernelLike",
    "StepRule",
]


@dataclass(frozen=True)
class Problem:
    """What a component may know about the solve it is built for."""

    n_samples: int
    n_features: int
    dim: int            #: length of one parameter block (n_features + intercept)
    n_blocks: int       #: parameter blocks (1 for binary objectives, K for softmax)
    n_params: int       #: n_blocks * dim
    lam: float          #: the objective's L2 regularisation
    fit_intercept: bool
    capabilities: frozenset[str]  #: what the objective provides
    #: the objective's :attr:`Objective.curvature_bound` (``None``: it declares none)
    curvature_bound: float | None = None
    #: the objective's :attr:`Objective.start_curvature` (``None``: it declares none)
    start_curvature: float | None = None


def kernel_compiled(kernel: object) -> bool:
    """Whether ``kernel`` declares that it runs in the compiled driver (its ``compiled``
    attribute, False when absent: see the module docstring)."""
    return bool(getattr(kernel, "compiled", False))


# ---- kernel protocols (what the driver calls) -------------------------------------------------

@runtime_checkable
class ObjectiveKernelLike(Protocol):
    """An objective bound to one data set.

    Optional capability, read with a default of False: ``deferred_value`` -- ``value(w)`` is a
    pure function of ``w`` over in-memory rows that stay valid as long as the kernel is
    referenced (the compiled kernels), so a finished run may leave ``F(w)`` to its result,
    computed when first read. A kernel whose value needs more (a cluster's data, a connection)
    leaves it False and is evaluated at the end of the run.
    """

    @property
    def n_params(self) -> int: ...

    @property
    def lam(self) -> float: ...

    def gradient(self, w: FloatArray, batch: IndexArray, out: FloatArray) -> float:
        """Write the minibatch gradient at ``w`` over ``batch`` into ``out``; return the minibatch
        objective value ``lam/2 ||w_reg||^2 + (1/|B|) sum_{i in B} g_i l_i(w)``. Must be a
        deterministic function of ``(w, batch)``: the driver reuses a secant model's second
        gradient as the next iteration's when the batch repeats (full-batch runs)."""
        ...

    def value(self, w: FloatArray) -> float:
        """Full objective ``F(w)``."""
        ...

    def full_gradient(self, w: FloatArray, out: FloatArray) -> float:
        """Full gradient into ``out``; returns ``F(w)``."""
        ...

    # Optional: ``reg_value(w) -> float``, the regulariser ``lam/2 ||w_reg||^2`` alone (the
    # compiled kernels' ``reg_value``). The Python loop subtracts it from each minibatch
    # objective for the progressive validation loss (``Counters.prog_loss``); without it that
    # counter is NaN.


@runtime_checkable
class CurvatureKernelLike(Protocol):
    """Turns a gradient into a direction ``d = H g`` and learns ``H``.

    Optional capability, read with a default of False: ``composite_step`` -- the kernel makes
    the update itself (a composite step, e.g. AdaGrad's with the L2 term in closed form): the
    driver calls ``composite_update(w, g, eps, w_next)`` (``g`` the minibatch gradient of the
    whole objective; returns 0, or -1 when the step would not be finite, with nothing changed)
    instead of ``direction`` and ``w - eps d``.

    Set by the driver: ``run_gtol`` -- before each run the driver sets this attribute to the
    run's gradient tolerance (``gtol``; 0.0 when the run has none; compiled kernels declare it
    on ``sqnopt.curvature._base.CurvatureKernel``, a Python kernel that cannot take the
    attribute is left alone). A model whose inner solve's residual is the gradient at the next
    iterate (conjugate gradients on a quadratic: ``NewtonCG(gtol_stop=True)``) may end that
    solve once the residual meets it.
    """

    @property
    def needs_secant_pair(self) -> bool: ...

    @property
    def needs_curvature_batch(self) -> bool: ...

    def direction(self, grad: FloatArray, out: FloatArray) -> None: ...

    def update_pair(self, v: FloatArray, r: FloatArray) -> int:
        """Offer ``v = w_{t+1} - w_t``, ``r = s(w_{t+1}, B_t) - s(w_t, B_t)``.
        Return 1 (accepted), 0 (skipped by a safeguard), 2 (memory reset), -1 (error)."""
        ...

    def observe_batch(self, objective: Any, w: FloatArray, batch: IndexArray) -> int:
        """Build curvature from an independent batch (only if ``needs_curvature_batch``).
        Return 3 (observed, no pair offered), or, for a model that forms a curvature pair from
        its batches, the pair's code as for ``update_pair`` (counted alike)."""
        ...

    def error_message(self) -> str: ...


@runtime_checkable
class GradientKernelLike(Protocol):
    """Estimates ``grad F(w)`` from a minibatch (the gradient the driver steps with).

    Optional capabilities, read with a default of False (declared as ``readonly`` attributes by
    compiled kernels, ``sqnopt/gradients/_base.pxd``): ``batch_gradient`` -- the estimate is the
    plain minibatch gradient ``s(w, B)`` although the kernel keeps state, so the driver may
    reuse a secant gradient as the estimate when the batch repeats (skipping ``estimate``);
    ``sizes_batches`` -- the kernel chooses the sample size: the driver draws
    ``batch_size(scheduled)`` samples, ``scheduled`` being the batch schedule's size;
    ``overlap_pairs`` -- the kernel makes consecutive batches share samples and supplies the
    curvature pairs: the driver passes each drawn batch through ``arrange(batch)`` (which
    returns it rewritten), asks ``pair(w, v, r)`` after each estimate (True when a pair was
    written into ``v``, ``r``; the model takes it before the direction), calls
    ``reused(w, g, size)`` when it reuses a line search's gradient instead of ``estimate``,
    and forms no secant pair itself.
    """

    @property
    def plain(self) -> bool:
        """True when the estimate is the plain minibatch gradient and the kernel keeps no
        state."""
        ...

    def estimate(self, objective: Any, w: FloatArray, batch: IndexArray, out: FloatArray,
                 plain: FloatArray | None = None) -> tuple[float, int]:
        """Write the estimate into ``out`` (and, if given, the plain minibatch gradient
        ``s(w, B)`` into ``plain``); return ``(f_B(w), samples touched beyond the batch)``."""
        ...


@runtime_checkable
class BindingKernelLike(Protocol):
    """A curvature or gradient-estimator kernel that works on the objective's samples, not only
    on the vectors the driver passes (a model that builds curvature from sample Hessians, as
    SQB's bound or Hessian-vector L-BFGS; an estimator with a per-sample table or a snapshot,
    as SAGA and SVRG): the solver calls ``bind`` once, after ``init`` and before the first
    iteration, and again on new data (``Solver.rebind``). A kernel without it keeps no
    data-dependent state. ``TypeError`` from a gradient estimator's ``bind`` means the
    objective lacks what it needs: the solver reports the two as incompatible."""

    def bind(self, objective: ObjectiveKernelLike) -> None:
        """Attach the kernel to the objective kernel of the solve (its data and losses)."""
        ...


@runtime_checkable
class ScheduleKernelLike(Protocol):
    def batch_size(self, k: int) -> int:
        """Minibatch size at iteration ``k = 1, 2, ...``."""
        ...


@runtime_checkable
class StepKernelLike(Protocol):
    def step_size(self, t: int) -> float:
        """Step at iteration ``t = 0, 1, ...``."""
        ...


@runtime_checkable
class PointStepKernelLike(StepKernelLike, Protocol):
    """A step kernel whose step is a function of the point (``uses_point`` True: Polyak's,
    Barzilai-Borwein's); ``step_size`` is its step without a point (for diagnostics)."""

    uses_point: bool

    def step_at(self, t: int, f: float, w: FloatArray, g: FloatArray, d: FloatArray) -> float:
        """The step at iteration ``t`` from ``w`` along ``-d``: ``f`` the batch objective
        ``f_B(w)``, ``g`` its gradient ``s(w, B)`` (the plain minibatch gradient, the one
        ``f`` belongs to, whatever estimate -- SVRG's, SAGA's -- ``d`` was made from). NaN stops
        the run (a non-finite iterate)."""
        ...


@runtime_checkable
class LineSearchKernelLike(StepKernelLike, Protocol):
    """A step kernel that searches along ``-d`` on the batch (``line_search`` True);
    ``step_size`` is its first trial step (for diagnostics)."""

    line_search: bool

    def search(self, objective: ObjectiveKernelLike, w: FloatArray, batch: IndexArray, f0: float,
               g: FloatArray, d: FloatArray, w_next: FloatArray, g_next: FloatArray
               ) -> tuple[float, float, int]:
        """From ``w`` (batch objective ``f0``, gradient ``g``) along ``-d``: on success return
        ``(eps, f_B(w_next), evaluations)`` with ``w_next = w - eps d`` and ``g_next`` the batch
        gradient there; ``eps`` is NaN when no step is accepted."""
        ...


@runtime_checkable
class ProjectionKernelLike(Protocol):
    def project(self, w: FloatArray) -> None:
        """Project ``w`` in place."""
        ...


@runtime_checkable
class PenaltyKernelLike(Protocol):
    """A penalty ``P(w) = l1 ||w_reg||_1 + (l2/2) ||w_reg||^2`` bound to a parameter layout
    (``sqnopt/penalties/_base.pxd`` describes the compiled form): the weights ``l1`` and
    ``l2``, the value, the proximal map and the pseudo-gradient."""

    @property
    def l1(self) -> float: ...

    @property
    def l2(self) -> float: ...

    def value(self, w: FloatArray) -> float:
        """``P(w)``."""
        ...

    def l1_value(self, w: FloatArray) -> float:
        """``l1 ||w_reg||_1``."""
        ...

    def prox(self, z: FloatArray, t: float, out: FloatArray) -> None:
        """``out = argmin_u t P(u) + ||u - z||^2 / 2``."""
        ...

    def pseudo_gradient(self, w: FloatArray, g: FloatArray, out: FloatArray) -> None:
        """``out`` = the minimum-norm subgradient of ``g'u + l1 ||u_reg||_1`` at ``u = w``."""
        ...


@runtime_checkable
class IterateKernelLike(Protocol):
    """An iterate representation in Python, run by the Python driver
    (:class:`sqnopt.solver._pyloop.PythonLoop`): the twin of the compiled
    :class:`~sqnopt.solver._iterate.IterateKernel` (``sqnopt/solver/_iterate.pxd``, where the
    representation path is described), with the same declarations and stages.

    A representation stores the iterate of a margin objective in a form where the first-order
    step is cheap in coefficient form: with ``c_i = g_i y_i loss'(m_i) / |B|`` the minibatch
    gradient is ``s(w, B) = lam w_reg + sum_{i in B} c_i x_i`` (and ``sum_i c_i`` on the
    intercept) and, with the identity direction, the step is
    ``w_{t+1} = P((1 - eps lam) w_t - eps sum_i c_i x_i)``. The driver keeps the batch (one per
    iteration: the Python driver draws none ahead, so ``lookahead`` is a hint it does not use),
    the step ``eps_t = step(t)``, the record (counters), the stops on a non-finite objective or
    iterate and on the budgets, and its part of the checkpoint state; the representation does
    the gradient, direction and update stages in one :meth:`first_order` call.

    ``kind`` names the representation (the ``"loop"`` entry of its checkpoint state);
    ``dense_iterate`` False means there is no finite dense ``w`` (the kernel expansion of
    :mod:`sqnopt.kernel._expansion`): ``sync`` writes nothing, ``reload`` raises, and the
    iterate is read through the representation's own accessors and ``get_state``.
    """

    kind: ClassVar[str]
    dense_iterate: ClassVar[bool]

    @property
    def n_params(self) -> int:
        """Parameters of the dense iterate, or the representation's coefficients when it has
        no dense iterate."""
        ...

    @property
    def lookahead(self) -> int: ...

    @property
    def sqnorm(self) -> float:
        """``||w_reg||^2`` of the current iterate."""
        ...

    extra_samples: int
    """Samples touched beyond the batches; the driver adds them to ``n_estimator_samples``
    and resets this to 0."""

    # Optional (read with defaults NaN and 0): ``batch_loss`` -- ``sum_i g_i loss(m_i)`` over
    # the batch of the last ``first_order`` call, at the iterate before its step -- and
    # ``batch_weight`` -- ``sum_i g_i`` over it: what the batch adds to the progressive
    # validation loss (``Counters.prog_loss`` / ``prog_weight``; NaN without them).

    def first_order(self, batch: IndexArray, eps: float, radius: float, n_avg: int
                    ) -> tuple[int, float]:
        """One first-order iteration on ``batch`` with the step ``eps``: returns ``(code,
        f_B(w_t))`` with ``f_B(w_t) = sum_i g_i loss(m_i) / |B| + lam/2 ||w_reg||^2`` and the
        code ``ITERATE_STEPPED`` (``w_reg <- (1 - eps lam) w_reg - eps sum_i c_i x_i``,
        ``b <- b - eps sum_i c_i``, then ``w_reg <- w_reg min(1, radius / ||w_reg||)`` when
        ``radius > 0`` and, when ``n_avg > 0``, the new iterate joins the running average of
        ``n_avg`` iterates), ``ITERATE_NONFINITE_LOSS`` or ``ITERATE_NONFINITE`` (nothing
        applied)."""
        ...

    def sync(self, n_avg: int) -> None:
        """Write the dense iterate (and the average of ``n_avg`` iterates) where the solve
        reads them."""
        ...

    def reload(self, n_avg: int) -> None:
        """Rebuild the representation from the dense iterate (after it was written from
        outside)."""
        ...

    def get_state(self) -> dict[str, Any]:
        """The representation's checkpoint state (copies; ``"loop"`` is ``kind``)."""
        ...

    def check_state(self, state: dict[str, Any]) -> None:
        """Raise :class:`~sqnopt.checkpoint.CheckpointError` unless ``state`` fits."""
        ...

    def set_state(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`get_state` returned."""
        ...


# ---- components (what the user configures) ----------------------------------------------------

class Component(abc.ABC):
    """Immutable configuration of one part of a solver; ``init`` builds its kernel.

    Concrete components are frozen dataclasses; ``params()`` lists their settings.
    """

    kind: ClassVar[Kind]
    #: Registry name of the class (also used in messages).
    name: ClassVar[str] = ""
    #: Capabilities the objective must provide for this component to be usable.
    requires: ClassVar[frozenset[str]] = frozenset()

    def params(self) -> dict[str, Any]:
        """The component's settings (its dataclass fields)."""
        names = getattr(self, "__dataclass_fields__", {})
        return {name: getattr(self, name) for name in names}

    def describe(self) -> str:
        """``name(param=value, ...)`` for messages and logs.

        A frozen dataclass whose settings are plain values (None, bool, int, float, str)
        cannot change: its description is kept after the first call (a fit describes its
        components for the result, the model and the checkpoint identity)."""
        cached = getattr(self, "__dict__", {}).get(_DESCRIBED)
        if cached is not None:
            return str(cached)
        params = self.params()
        inner = ", ".join(f"{k}={v!r}" for k, v in params.items())
        text = f"{self.name or type(self).__name__}({inner})"
        dc = getattr(type(self), "__dataclass_params__", None)
        if (dc is not None and dc.frozen and hasattr(self, "__dict__")
                and all(type(v) in _PLAIN for v in params.values())):
            object.__setattr__(self, _DESCRIBED, text)
        return text


#: Where :meth:`Component.describe` keeps the description of an immutable component.
_DESCRIBED = "_sqnopt_described"
#: Setting types whose values cannot change (exact types: a subclass may be mutable).
_PLAIN = frozenset({type(None), bool, int, float, str})


class Objective(Component):
    """Loss + L2 regularisation ``lam`` (+ weights and intercept, handled by the data)."""

    kind: ClassVar[Kind] = "objective"
    label_kind: ClassVar[LabelKind] = "binary"
    #: An upper bound of the loss's second derivative with respect to the margin (or, for
    #: multi-output losses, of the spectral norm of its Hessian in the scores); ``None`` when the
    #: loss is not smooth. Automatic step sizes scale with it.
    curvature_bound: ClassVar[float | None] = None
    #: The loss's second derivative with respect to the score at score 0, where it is the same
    #: for every target (Poisson's ``exp(0) = 1``): the Hessian at ``w = 0``, where solves start,
    #: is then ``start_curvature X'SX / sum(s) + lam D``, which
    #: :class:`~sqnopt.curvature.BoundLBFGS` takes as its preconditioner for a loss without a
    #: curvature bound. ``None``: not declared.
    start_curvature: ClassVar[float | None] = None
    #: The loss's second derivative is exactly 0 on a range of scores (Huber's beyond its
    #: threshold): at an iterate whose scores all lie there -- every residual an outlier, as at
    #: ``w = 0`` when the targets are far from 0 -- the Hessian is singular along each
    #: unregularised coordinate (the intercept), which Newton's method, factoring it, cannot
    #: solve with; ``curvature="auto"`` then takes a model that does not factor it.
    curvature_vanishes: ClassVar[bool] = False
    #: The largest linear score at which the loss is finite (the Poisson loss's ``exp`` overflows
    #: beyond ``log(DBL_MAX)``); ``None``: every finite score. The conformance checks keep their
    #: extreme points within it.
    max_score: ClassVar[float | None] = None
    #: Regression objectives: how a score maps to the prediction -- ``"identity"`` (the score)
    #: or ``"log"`` (``exp`` of it, the log link of Poisson regression); models record it.
    link: ClassVar[Literal["identity", "log"]] = "identity"
    #: Regression objectives: the smallest target the loss is defined for (the Poisson
    #: likelihood's counts: 0); ``None``: any real target. A fit over chunks checks every
    #: chunk's targets against it, naming the sample by its position in the data.
    min_target: ClassVar[float | None] = None
    lam: float

    @property
    def capabilities(self) -> frozenset[str]:
        """What this objective provides (see the capability constants of this module)."""
        return frozenset({self.label_kind})

    def with_capability(self, capability: str) -> Objective | None:
        """An objective with the same ``lam`` that provides ``capability``, or ``None``.

        For a capability the objective lacks: the same function in a form that has it (binary
        logistic regression as a log-linear model, for the ``quadratic_bound``), or its
        multiclass generalisation (``multiclass``: the multinomial form of a binary loss).
        The estimators ask for these instead of knowing objectives by name.
        """
        return self if capability in self.capabilities else None

    def n_blocks(self, n_classes: int) -> int:
        """Number of parameter blocks for ``n_classes`` classes (1 for binary objectives)."""
        return 1

    def start_intercept(self, y: NDArray[np.float64], weights: NDArray[np.float64]) -> float:
        """The intercept at which a regression fit from scratch starts, its coefficients at 0,
        given the targets and the sample weights: 0 unless the loss says better. A loss whose
        curvature vanishes away from the targets (Huber's beyond its threshold) starts where
        the residuals are balanced, since from 0 its solvers would cross the flat stretch to
        the targets one gradient-sized step at a time."""
        return 0.0

    def param_layout(self, data: Dataset) -> tuple[int, int]:
        """``(n_blocks, block length)`` of the parameter vector on ``data``.

        The default, ``(n_blocks(n_classes), data.dim)``, fits objectives whose parameters are
        blocks over the columns of ``X``; objectives whose columns are something else (the general
        log-linear model, whose rows stack one feature vector per output) override it.
        """
        return self.n_blocks(data.n_classes), data.dim

    @abc.abstractmethod
    def init(self, data: Dataset) -> ObjectiveKernelLike:
        """Bind to validated data; return a compiled ``ObjectiveKernel`` or a Python kernel."""


class CurvatureModel(Component):
    """Search-direction model ``d = H g`` (identity, BFGS variants, bounds, diagonal ...)."""

    kind: ClassVar[Kind] = "curvature"
    #: The driver must evaluate the second gradient on the same batch (BFGS-type models).
    needs_secant_pair: ClassVar[bool] = False
    #: The driver must draw an independent curvature batch each iteration (SQB).
    needs_curvature_batch: ClassVar[bool] = False
    #: The direction is the gradient itself (``H = I``, nothing learnt). Lets the recipes keep
    #: small batches and the solver run margin objectives on the scaled sparse iterate
    #: (:mod:`sqnopt.solver._scaled_loop`). The model's kernel declares the same attribute
    #: (``CurvatureKernel.direction_is_gradient``), which the driver reads; the solver refuses
    #: a model whose kernel says otherwise.
    direction_is_gradient: ClassVar[bool] = False
    #: What a unit step along ``d`` means: ``"gradient"`` (``d`` has the gradient's scale, so a
    #: stable step is about ``1/L``), ``"newton"`` (``d`` approximates ``H^{-1} g``: the step 1
    #: is natural, as for secant and bound models) or ``"normalized"`` (``|d_j| <= 1`` whatever
    #: the data's scale, as AdaGrad's: the step is a distance in parameter space).
    direction_scale: ClassVar[DirectionScale] = "gradient"
    #: The model's quadratic majorises the objective on its curvature batch, so the unit step
    #: along its direction decreases that majoriser (SQB's partition-function bound): a constant
    #: step 1 is safe without a line search.
    majorizes: ClassVar[bool] = False
    #: The model's curvature is exact on its batch and costs more than a pass to form (Newton's
    #: method): a subsample's Hessian buys nothing a full one does not, so the recipe runs the
    #: model on the whole data set from the first iteration, gradient and curvature alike.
    full_batch: ClassVar[bool] = False

    @property
    def composite_step(self) -> bool:
        """The model's kernel makes the update itself (a composite step: AdaGrad's with the L2
        term in closed form) and declares ``composite_step`` alike: the solver refuses a
        projection, averaging and line searches with it."""
        return False

    @property
    def batches_per_update(self) -> int:
        """Curvature batches (one per iteration) the model joins into one update of its
        curvature: the recipe draws ``1 / batches_per_update`` of its Hessian sample size per
        iteration, so each update sees a sample of that size."""
        return 1

    def memory_bytes(self, problem: Problem) -> int:
        """Bytes the kernel keeps for ``problem`` (the solver refuses a model that cannot fit
        in the machine's memory before allocating it)."""
        return 8 * problem.n_params

    def tuned(self, lam: float, X: Any, *, auto_schedule: bool) -> CurvatureModel:
        """The model with the settings the recipe should use for the regularisation ``lam`` on
        the data ``X`` (a matrix, or data described by its ``shape`` and ``nnz``), or ``self``.

        The recipes call it only when the user named the model without parameters (a
        registered name, or ``curvature="auto"``): settings given explicitly are never
        changed. ``auto_schedule``: the batch schedule is the recipe's too (a model may tune
        itself for the recipe's growing batches). The default keeps the component's own
        defaults; a model whose theory or measurements call for data-dependent settings (a
        regulariser below ``lam``, a memory sized to the data) returns a tuned copy
        (``dataclasses.replace``) of the same model."""
        return self

    @abc.abstractmethod
    def init(self, problem: Problem) -> CurvatureKernelLike: ...


class GradientEstimator(Component):
    """How the driver estimates ``grad F(w)`` from a minibatch: the minibatch gradient itself,
    or a variance-reduced estimate (SVRG, SAGA) whose error vanishes at the optimum."""

    kind: ClassVar[Kind] = "gradient"
    #: How the estimate is assembled from sums over row blocks of the data, for an engine that
    #: evaluates the objective where the data lives (:mod:`sqnopt.dask`), with the estimator's
    #: parameters read from its fields:
    #:
    #: * ``"minibatch"`` -- the minibatch gradient ``s(w, B)`` itself;
    #: * ``"snapshot"`` -- ``s(w, B) - s(w~, B) + grad F(w~)``, the snapshot ``w~`` retaken
    #:   every ``period`` batch samples (``None``: one pass), as SVRG;
    #: * ``"variance_test"`` -- ``s(w, B)`` on batches sized by the inner-product test with
    #:   ``theta``: the batch's gradient ``g``, then the sample variance of
    #:   ``grad F_i(w)' g`` over the batch (sums of it and of its squares), as progressive
    #:   batching.
    #:
    #: ``None``: the estimate needs per-sample state (SAGA's table) or operations not listed
    #: here; it is computed where the data is in one piece (on a cluster: on the client over
    #: the sample stream).
    partial_sums: ClassVar[PartialSums | None] = None
    #: The estimate's variance vanishes at the optimum (SVRG, SAGA), so a constant step that is
    #: stable converges linearly on a strongly convex sum: a run whose recorded objective stops
    #: improving while it still fluctuates warns (``InstabilityWarning``) instead of ending at
    #: a noise floor silently.
    vanishing_variance: ClassVar[bool] = False
    #: The estimate is the plain minibatch gradient ``s(w, B)`` and the kernel keeps no state
    #: (its kernel declares ``plain`` alike, which the driver reads): the recipes then take
    #: i.i.d. batches and the unbiased step ``1/(L + lam t)`` of stochastic gradient descent,
    #: where an estimator with a table or a snapshot gets batches without replacement and a
    #: constant step.
    plain: ClassVar[bool] = False
    #: The estimate is dense by its nature: it carries a vector of ``n_params`` from step to
    #: step that no table of per-sample score derivatives represents (SARAH's recursion
    #: ``v_t = s(w_t, B) - s(w_{t-1}, B) + v_{t-1}``), so no lazy O(nnz) form of it exists. On
    #: sparse rows its compositions run the dense iteration and the result's ``path_reason``
    #: says why, without a :class:`~sqnopt.SlowPathWarning` -- which is for a composition that
    #: falls off a fast path it could take (an estimator whose kernel could declare
    #: ``score_table`` but does not).
    dense_estimate: ClassVar[bool] = False

    def memory_bytes(self, problem: Problem) -> int:
        """Bytes the kernel keeps (tables, snapshots), for the cost accounting."""
        return 0

    @abc.abstractmethod
    def init(self, problem: Problem) -> GradientKernelLike: ...


class BatchSchedule(Component):
    """Minibatch size as a function of the iteration number."""

    kind: ClassVar[Kind] = "schedule"
    #: ``batch_size(k)`` never decreases with ``k`` (constant or growing batches); the
    #: conformance checks (:func:`sqnopt.testing.check_component`) hold a schedule to it.
    nondecreasing: ClassVar[bool] = False

    @abc.abstractmethod
    def init(self, problem: Problem) -> ScheduleKernelLike: ...


class StepRule(Component):
    """Scalar step ``eps_t``, or a line search along the direction (``line_search``)."""

    kind: ClassVar[Kind] = "step"
    #: The kernel searches along the direction on the iteration's batch: the driver calls its
    #: ``search`` (:class:`LineSearchKernelLike`) instead of ``step_size``.
    line_search: ClassVar[bool] = False
    #: The step is a function of the point: the driver calls the kernel's ``step_at`` (with
    #: the batch objective, its plain minibatch gradient and the direction at ``w``;
    #: :class:`PointStepKernelLike`) instead of ``step_size``. The iterate representations that
    #: keep no dense gradient do not run such a rule (the solve takes the generic loop).
    uses_point: ClassVar[bool] = False
    #: The direction scales (:attr:`CurvatureModel.direction_scale`) the rule's steps are made
    #: for; the solver refuses a curvature model of another scale.
    direction_scales: ClassVar[frozenset[DirectionScale]] = frozenset(
        {"gradient", "newton", "normalized"})

    @abc.abstractmethod
    def init(self, problem: Problem) -> StepKernelLike: ...

    def init_on_data(self, problem: Problem, data: Dataset) -> StepKernelLike:
        """The kernel for ``problem`` on the validated training ``data`` (what the solver
        calls). The default is :meth:`init`: most rules need nothing of the rows. A rule whose
        step is computed from the data (a constant from the rows' norms, e.g.
        :class:`~sqnopt.steps.LipschitzStep`) overrides this; its ``init`` then says that it
        needs the data."""
        return self.init(problem)


class Projection(Component):
    """Constraint set applied after each step (on regularised coordinates only)."""

    kind: ClassVar[Kind] = "projection"
    #: The kernel's ``project`` is the Euclidean projection onto a closed convex set: a
    #: function of its argument, idempotent and non-expansive (the conformance checks hold it
    #: to that). False for a map that keeps state between calls and is called once per
    #: iteration (a mirror map, :class:`sqnopt.projections.MirrorMap`).
    euclidean: ClassVar[bool] = True

    @property
    def bounds_iterate(self) -> bool:
        """Every output lies in a bounded set (a ball), whatever the step: with no
        unregularised intercept the iterate cannot blow up, and an objective far above its
        start is an excursion the method allows (Pegasos' first steps), not a divergence --
        the divergence monitor then watches only for non-finite values."""
        return False

    @abc.abstractmethod
    def init(self, problem: Problem) -> ProjectionKernelLike: ...


class Penalty(Component):
    r"""The regulariser of a composite objective ``F(w) = f(w) + P(w)``, ``f`` the smooth
    objective (its own ``lam`` included) and

    .. math:: P(w) = \alpha \left(\rho \|w_{reg}\|_1 + \frac{1 - \rho}{2}
              \|w_{reg}\|_2^2\right)

    on the regularised coordinates (intercepts are never penalised): scikit-learn's elastic net
    (``alpha``, ``l1_ratio`` = :math:`\rho`). The composite solvers (:mod:`sqnopt.composite`)
    add the smooth part ``l2_strength`` to the objective's ``lam`` and treat ``l1_strength``
    through the kernel's proximal map or pseudo-gradient.
    """

    kind: ClassVar[Kind] = "penalty"

    @property
    @abc.abstractmethod
    def l1_strength(self) -> float:
        """The weight of ``||w_reg||_1``."""

    @property
    @abc.abstractmethod
    def l2_strength(self) -> float:
        """The weight of ``||w_reg||^2 / 2``."""

    @abc.abstractmethod
    def init(self, problem: Problem) -> PenaltyKernelLike: ...
