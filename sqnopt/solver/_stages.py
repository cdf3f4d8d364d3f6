"""The iteration of the generic driver as one ordered list of stages.

One iteration ``t`` (``k = t + 1``) runs the stages of :data:`STAGES` in order. Each stage has a
few variants; which one runs is chosen once, by :func:`plan`, from the declarations of the one
component that provides the stage (its *provider*), never from a union of capability flags:

================  ==================  ==============================================================
stage             provider            variants (the first is the default)
================  ==================  ==============================================================
size              gradient estimator  ``schedule``: ``|B_t| = schedule(k)``; ``estimator``: the
                                      size it chooses given ``schedule(k)`` (``sizes_batches``,
                                      progressive batching), clamped to ``[1, N]``
draw              gradient estimator  ``sampler``: ``B_t`` drawn; ``overlapping``: drawn, then
                                      rearranged to share samples with ``B_{t-1}``
                                      (``overlap_pairs``, multi-batch L-BFGS)
gradient          gradient estimator  ``plain``: ``g = s(w_t, B_t)`` (the objective's kernel);
                                      ``batch_estimate``: the estimate is ``s(w_t, B_t)``
                                      (``batch_gradient``); ``overlap_estimate``: the same, and the
                                      estimator is told when ``s(w_t, B_t)`` is reused;
                                      ``estimate``: another estimate (SVRG, SAGA);
                                      ``estimate_with_plain``: that, filling ``s(w_t, B_t)`` too
                                      for a later stage that reads it
full_batch_test   sampler, solver     ``none``; ``test``: on a whole-data batch, ``gtol`` / ``ftol``
                                      on ``grad F(w_t)`` and ``F(w_t)`` (the sampler's
                                      ``whole_at_n`` and a tolerance set)
curvature_batch   curvature model     ``none``; ``observe``: an independent batch ``S_t`` of size
                                      ``curvature_schedule(k)`` observed at ``w_t``
                                      (``needs_curvature_batch``: SQB, Newton-type models)
estimator_pair    gradient estimator  ``none``; ``take``: the estimator's secant pair of the
                                      previous step (on the samples ``B_{t-1}`` and ``B_t`` share)
                                      offered to a model that ``needs_secant_pair``
direction         curvature model     ``model``: ``d = H g``; ``gradient``: ``d`` *is* ``g``
                                      (``direction_is_gradient``; ``g`` alternates between two
                                      buffers); ``composite``: no direction, the model's composite
                                      step reads ``g`` (``composite_step``)
step              step rule           ``time``: ``eps = step(t)``; ``point``: ``eps`` from ``(t,
                                      f_B(w_t), w_t, s(w_t, B_t), d)`` (``uses_point``; the
                                      plain gradient, as the gradient stage left it);
                                      ``search``: the step
                                      its search accepts on ``B_t`` (``line_search``), which moves
                                      to ``w_{t+1}`` and leaves ``s(w_{t+1}, B_t)``
update            curvature model,    ``axpy``: ``w_{t+1} = w_t - eps d``; ``projected``: then the
                  projection, step    projection; ``composite``: the model's composite step;
                                      ``searched``: nothing (the search moved)
secant_pair       curvature model     ``none``; ``evaluate``: ``r = s(w_{t+1}, B_t) - s(w_t, B_t)``
                                      on the same batch, ``v = w_{t+1} - w_t``, offered to the
                                      model; ``searched``: the same pair, ``s(w_{t+1}, B_t)`` from
                                      the search
advance           (the plan)          ``swap``: ``w_{t+1}`` becomes the iterate, the record;
                                      ``swap_gradient``: also swap the gradient buffers (direction
                                      ``gradient``); ``keep``: also keep ``s(w_{t+1}, B_t)``: when
                                      ``B_{t+1}`` is ``B_t`` again (full-batch runs), the next
                                      gradient stage reuses it (``n_reused_samples``)
average           solver              ``none``; ``average``: ``wbar += (w_{t+1} - wbar) / n`` once
                                      ``t + 1 > avg_start`` (Polyak-Ruppert)
================  ==================  ==============================================================

A stage whose variant is ``none`` (or the update's ``searched``) does nothing and is not run. Any
stage may end the run with an exit code (``LOOP_*``: the sampler exhausted, a non-finite objective
or iterate, a curvature error, a failed search, a tolerance met). The run's schedule (report
points, the monitor, ``max_time``, callbacks) is the solver's, between calls of the loop's ``run``.

The list is the iteration of both generic loops. :class:`~sqnopt.solver._pyloop.PythonLoop` runs
the plan's stage functions (one per stage and variant) in order. The compiled
:class:`~sqnopt.solver._loop.CompiledLoop` runs the same stages in the same order without the GIL,
one branch per stage on the plan's variant code (the codes are this module's: the compiled module
checks its enums against them when it is imported, :func:`check_compiled`). Both loops can record a
*stage trace* (``start_trace`` / ``stop_trace``): per stage run, ``(t, stage, variant, a, b)`` with
the values :data:`TRACE_VALUES` names (the compiled trace is a second compiled copy of the
iteration: the copy that runs untraced has no trace code); the conformance test runs every
composition kind on both loops and requires the same traces to the bit, stage by stage.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import numpy as np

# The stages in the order an iteration runs them, with their variants (code = position).
STAGES: Final[tuple[tuple[str, tuple[str, ...]], ...]] = (
    ("size", ("schedule", "estimator")),
    ("draw", ("sampler", "overlapping")),
    ("gradient", ("plain", "batch_estimate", "overlap_estimate", "estimate",
                  "estimate_with_plain")),
    ("full_batch_test", ("none", "test")),
    ("curvature_batch", ("none", "observe")),
    ("estimator_pair", ("none", "take")),
    ("direction", ("model", "gradient", "composite")),
    ("step", ("time", "point", "search")),
    ("update", ("axpy", "projected", "composite", "searched")),
    ("secant_pair", ("none", "evaluate", "searched")),
    ("advance", ("swap", "swap_gradient", "keep")),
    ("average", ("none", "average")),
)
STAGE_NAMES: Final[tuple[str, ...]] = tuple(name for name, _ in STAGES)
STAGE_INDEX: Final[dict[str, int]] = {name: i for i, name in enumerate(STAGE_NAMES)}
VARIANTS: Final[dict[str, tuple[str, ...]]] = dict(STAGES)

# The (stage, variant) pairs that do nothing: the stage is not run.
IDLE: Final[frozenset[tuple[str, str]]] = frozenset(
    {(name, "none") for name, variants in STAGES if "none" in variants} | {("update", "searched")})

# What a stage trace records for each stage (``a``, ``b``; sums are in index order).
TRACE_VALUES: Final[dict[str, str]] = {
    "size": "|B_t|, 0",
    "draw": "sum of the batch's indices, 0",
    "gradient": "f_B(w_t), sum of g",
    "full_batch_test": "max |g_j| when tested (else NaN), 0",
    "curvature_batch": "|S_t|, the model's code",
    "estimator_pair": "1 if the estimator gave a pair (else 0), the model's code (else 0)",
    "direction": "sum of d, 0",
    "step": "eps, the search's gradient evaluations (else 0)",
    "update": "sum of w_{t+1}, 0",
    "secant_pair": "f_B(w_{t+1}), the model's code",
    "advance": "prog_loss, prog_weight (the record after the step)",
    "average": "n_avg, sum of wbar",
}

# the gradient variants whose estimate is s(w_t, B_t) itself
BATCH_GRADIENT: Final[frozenset[str]] = frozenset({"plain", "batch_estimate",
                                                   "overlap_estimate"})


@dataclass(frozen=True)
class Plan:
    """The variant of every stage (aligned with :data:`STAGES`) and where each came from."""

    variants: tuple[str, ...]
    providers: tuple[str, ...]

    def __getitem__(self, stage: str) -> str:
        return self.variants[STAGE_INDEX[stage]]

    @property
    def codes(self) -> tuple[int, ...]:
        """The variant codes the compiled loop runs (positions in :data:`STAGES`)."""
        return tuple(VARIANTS[name].index(v) for name, v in zip(STAGE_NAMES, self.variants))

    @property
    def active(self) -> tuple[str, ...]:
        """The stages that run, in order."""
        return tuple(name for name, v in zip(STAGE_NAMES, self.variants)
                     if (name, v) not in IDLE)

    def describe(self) -> str:
        """One line per stage that runs: ``stage: variant (provider)``."""
        return "\n".join(f"{name}: {v} ({p})" for name, v, p in
                         zip(STAGE_NAMES, self.variants, self.providers)
                         if (name, v) not in IDLE)


def _flag(kernel: Any, name: str) -> bool:
    return kernel is not None and bool(getattr(kernel, name, False))


def plan(*, curvature: Any, step: Any, projection: Any, sampler: Any,
         gradient: Any = None, tolerances: bool = False, average: bool = False) -> Plan:
    """The stage variants of a composition, from its kernels' declarations (see the module
    docstring): each stage's variant is its provider's. Two stages also read what later stages
    do, through the variants already chosen: the gradient stage fills the plain batch gradient
    when a later stage reads it and the estimate is not it, and ``advance`` keeps
    ``s(w_{t+1}, B_t)`` when a stage left it and the next gradient stage could reuse it.
    ``tolerances``: the solver tests ``gtol`` / ``ftol``; ``average``: Polyak-Ruppert
    averaging."""
    chosen: dict[str, tuple[str, str]] = {}
    est = gradient
    plain = est is None or bool(est.plain)
    overlap = _flag(est, "overlap_pairs")
    chosen["size"] = ("estimator" if _flag(est, "sizes_batches") else "schedule",
                      "gradient estimator")
    chosen["draw"] = ("overlapping" if overlap else "sampler", "gradient estimator")
    chosen["full_batch_test"] = ("test" if tolerances and bool(sampler.whole_at_n) else "none",
                                 "sampler")
    chosen["curvature_batch"] = ("observe" if _flag(curvature, "needs_curvature_batch")
                                 else "none", "curvature model")
    pairs = _flag(curvature, "needs_secant_pair")
    chosen["estimator_pair"] = ("take" if pairs and overlap else "none", "gradient estimator")
    search = _flag(step, "line_search")
    composite = _flag(curvature, "composite_step")
    chosen["step"] = ("search" if search else "point" if _flag(step, "uses_point") else "time",
                      "step rule")
    chosen["update"] = (("searched", "step rule") if search else
                        ("composite", "curvature model") if composite else
                        ("projected", "projection") if projection is not None else
                        ("axpy", "driver"))
    chosen["secant_pair"] = ("none" if not pairs or overlap else
                             "searched" if search else "evaluate", "curvature model")
    # the stages after the gradient that write g_next (a secant gradient, a search's) or read
    # the plain batch gradient (a point step reads s(w, B), the gradient of the f_B it sees)
    writes_next = chosen["secant_pair"][0] != "none" or search
    reads_plain = (writes_next or chosen["full_batch_test"][0] == "test"
                   or chosen["step"][0] == "point")
    if plain:
        grad = "plain"
    elif bool(getattr(est, "batch_gradient", False)):
        grad = "overlap_estimate" if overlap else "batch_estimate"
    else:
        grad = "estimate_with_plain" if reads_plain else "estimate"
    chosen["gradient"] = (grad, "gradient estimator")
    if composite:
        direction = "composite"
    elif (_flag(curvature, "direction_is_gradient") and not writes_next
          and chosen["estimator_pair"][0] == "none"):
        direction = "gradient"
    else:
        direction = "model"
    chosen["direction"] = (direction, "curvature model")
    chosen["advance"] = ("keep" if writes_next and grad in BATCH_GRADIENT else
                         "swap_gradient" if direction == "gradient" else "swap", "driver")
    chosen["average"] = ("average" if average else "none", "solver")
    return Plan(tuple(chosen[name][0] for name in STAGE_NAMES),
                tuple(chosen[name][1] for name in STAGE_NAMES))


def vsum(x: Any) -> float:
    """The sum of a vector in index order (a trace value; the compiled loop's arithmetic)."""
    a = np.asarray(x, dtype=np.float64)
    return float(np.cumsum(a)[-1]) if a.shape[0] else 0.0


def check_compiled(codes: dict[str, tuple[int, dict[str, int]]]) -> None:
    """Check the compiled loop's stage and variant codes (``_loop.STAGE_CODES``) against
    :data:`STAGES`: the compiled loop runs this list, in this order."""
    want = {name: (i, {v: k for k, v in enumerate(variants)})
            for i, (name, variants) in enumerate(STAGES)}
    if codes != want:
        raise ImportError(f"sqnopt.solver._loop's stage codes {codes} are not the stage list of "
                          f"sqnopt.solver._stages {want}: rebuild the extension")
