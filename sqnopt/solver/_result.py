"""Frozen, typed results of a solve."""

from __future__ import annotations

import enum
import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, overload

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]

__all__ = ["CurvatureError", "DivergenceWarning", "History", "InstabilityWarning", "IterationInfo",
           "LoopPath", "SlowPathWarning", "SolveResult", "Status"]

#: The loops a solve runs (:attr:`SolveResult.path`).
LoopPath = Literal["adaptive", "lazy", "scaled", "generic", "python"]


def passes_touched(n_samples: int, n_curvature_samples: int, n_secant_samples: int,
                   n_reused_samples: int, n_search_samples: int, n_train: int,
                   n_estimator_samples: int = 0) -> float:
    """Effective passes: samples touched for gradients (the gradient batches, less those whose
    gradient was the previous secant gradient reused, the secant pairs' second gradients, the
    line search's trials and what a gradient estimator touched beyond the batch: SVRG's
    snapshots and second gradients, SAGA's table fill) and curvature (SQB's batches), divided
    by the training-set size."""
    return (n_samples - n_reused_samples + n_curvature_samples + n_secant_samples
            + n_search_samples + n_estimator_samples) / n_train


class Status(str, enum.Enum):
    """Why a run stopped. ``converged`` is True exactly for the tolerances (a requested target,
    ``gtol``, ``ftol``, or the working precision of a full-batch line search); the budgets, a
    callback, an exhausted batch sequence, a failed line search and divergence are not."""

    MAX_ITER = "max_iter"
    MAX_SAMPLES = "max_samples"
    MAX_TIME = "max_time"
    TARGET_OBJECTIVE = "target_objective"
    GTOL = "gtol"
    FTOL = "ftol"
    PRECISION = "precision"
    CALLBACK = "callback"
    SEQUENCE_EXHAUSTED = "sequence_exhausted"
    LINE_SEARCH_FAILED = "line_search_failed"
    DIVERGED = "diverged"

    @property
    def converged(self) -> bool:
        return self in (Status.TARGET_OBJECTIVE, Status.GTOL, Status.FTOL, Status.PRECISION)


@dataclass(frozen=True)
class History:
    """Objective on the full training set along a run.

    Each row is one evaluation point: iteration ``t``, samples processed ``Lt``, effective passes
    ``(Lt + curvature samples) / N``, solver wall time (evaluation time excluded) and the objective
    of the output iterate (the average if averaging); ``grad_norm`` (``||grad F||_inf``) is NaN
    unless requested.
    """

    iteration: NDArray[np.int64]
    samples: NDArray[np.int64]
    effective_passes: FloatArray
    time: FloatArray
    objective: FloatArray
    grad_norm: FloatArray

    def __len__(self) -> int:
        return int(self.iteration.shape[0])

    def as_dict(self) -> dict[str, list[float] | list[int]]:
        return {
            "iteration": self.iteration.tolist(),
            "samples": self.samples.tolist(),
            "effective_passes": self.effective_passes.tolist(),
            "time": self.time.tolist(),
            "objective": self.objective.tolist(),
            "grad_norm": self.grad_norm.tolist(),
        }

    @classmethod
    def empty(cls) -> History:
        return cls(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0), np.zeros(0),
                   np.zeros(0), np.zeros(0))


class PendingObjective:
    """``F(w)`` not computed yet: ``SolveResult(fun=PendingObjective(f))`` computes ``f()`` on
    the first read of ``fun`` (see :class:`SolveResult`)."""

    __slots__ = ("_compute",)

    def __init__(self, compute: Callable[[], float]) -> None:
        self._compute = compute

    def __call__(self) -> float:
        return float(self._compute())


class _Objective:
    """The descriptor of :attr:`SolveResult.fun`: a float, or a :class:`PendingObjective`
    replaced by its value on the first read (the instance stays frozen to assignment; only
    the cache of the pending value changes)."""

    def __init__(self, name: str) -> None:
        self._name = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> _Objective: ...
    @overload
    def __get__(self, obj: object, owner: type | None = None) -> float: ...

    def __get__(self, obj: object | None, owner: type | None = None) -> float | _Objective:
        if obj is None:
            return self
        value = obj.__dict__[self._name]
        if isinstance(value, PendingObjective):
            value = value()
            obj.__dict__[self._name] = value
        return float(value)

    def __set__(self, obj: object, value: float | PendingObjective) -> None:
        if not isinstance(value, PendingObjective):
            value = float(value)
        obj.__dict__[self._name] = value


@dataclass(frozen=True, repr=False)
class SolveResult:
    """The outcome of :meth:`sqnopt.Solver.fit` / :meth:`sqnopt.Solver.run`.

    ``w`` is the full parameter vector (``n_blocks`` blocks of ``n_features`` weights followed by
    the intercept when fitted); ``coef`` and ``intercept`` split it.

    ``fun`` is ``F(w)`` at the returned iterate on the training data. A run of a compiled
    objective (in-memory data) that records no history does not pass over the data for it: it
    is computed on the first read of ``fun`` (one pass; not counted in ``eval_time``, which is
    the run's own evaluations) and the result keeps a reference to the objective bound to the
    training data until then (for :meth:`~sqnopt.Solver.fit`, only when that data is the
    caller's own arrays, not a converted copy). Pickling or copying a result computes it first. (The end of such
    a run checks instead that the iterate and its squared norm are finite; the divergence
    monitor has watched the minibatch objectives throughout.)
    """

    w: FloatArray
    n_features: int
    n_blocks: int
    fit_intercept: bool
    classes: NDArray[Any]
    fun: float
    status: Status
    message: str
    n_iter: int
    n_samples: int
    n_curvature_samples: int
    n_secant_samples: int
    n_reused_samples: int
    n_search_samples: int
    n_estimator_samples: int
    n_grad_evals: int
    n_pairs_accepted: int
    n_pairs_skipped: int
    n_resets: int
    n_train: int
    wall_time: float
    eval_time: float
    compiled: bool
    #: The loop that ran: ``"adaptive"`` (AdaGrad's composite steps on the adaptive iterate),
    #: ``"lazy"`` (the lazy table iterate of a variance-reduced estimator on sparse rows),
    #: ``"scaled"`` (the scaled sparse iterate ``w = a v``), ``"generic"`` (the compiled
    #: driver with the dense iterate) or ``"python"`` (the Python loop). The first three cost
    #: O(nnz of the batch) per iteration on sparse rows, the generic driver O(n_params).
    path: LoopPath
    #: One sentence: why this path, or why not a faster one (the declaration that was
    #: missing, the setting that ruled it out, or the ``path`` asked for).
    path_reason: str
    history: History = field(repr=False)
    components: dict[str, str] = field(default_factory=dict)
    #: Bytes the curvature model and the gradient estimator keep (L-BFGS pairs, BFGS matrices,
    #: SAGA's table, SVRG's snapshot).
    memory_bytes: int = 0
    #: ``||grad F(w)||_inf`` at the returned iterate when the run computed it (a full-batch
    #: iteration's own gradient, or a stopping test), else NaN.
    grad_norm: float = math.nan
    #: The progressive validation loss of the solve so far (Blum, Kalai & Langford, *Beating
    #: the hold-out: bounds for k-fold and progressive cross-validation*, COLT 1999):
    #: each processed sample's weighted loss at the iterate *before* the step that used it,
    #: averaged -- ``sum_i g_i loss_i(w_{t(i)}) / sum_i g_i`` over the samples of every step
    #: (``Counters.prog_loss / Counters.prog_weight``; ``g_i`` the gradient weights). On a stream
    #: seen once it estimates the held-out loss of the iterates without a held-out set (Vowpal
    #: Wabbit reports it as "average loss"); NaN before the first step, or when a pure-Python
    #: objective kernel has no ``reg_value``.
    progressive_loss: float = math.nan
    #: ``sum_i g_i`` over those samples (the denominator of :attr:`progressive_loss`).
    progressive_weight: float = 0.0

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["fun"] = self.fun             # a pickle holds the value, not the training data
        return state

    def __repr__(self) -> str:
        """One line: why the run stopped, ``F``, the counters and the parameters' shape -- not
        the weights (``w`` may hold millions of entries; read ``result.w`` for them)."""
        classes: Any = None if self.classes is None else self.classes.tolist()
        if isinstance(classes, list) and len(classes) > 6:
            classes = f"<{len(classes)} classes>"
        return (f"SolveResult(status={self.status.value!r}, fun={self.fun!r}, "
                f"n_iter={self.n_iter}, n_samples={self.n_samples}, "
                f"effective_passes={self.effective_passes:.4g}, "
                f"w=<{self.w.shape[0]} {self.w.dtype}>, n_features={self.n_features}, "
                f"n_blocks={self.n_blocks}, fit_intercept={self.fit_intercept}, "
                f"classes={classes}, wall_time={self.wall_time:.3g}, "
                f"compiled={self.compiled}, path={self.path!r})")

    @property
    def success(self) -> bool:
        """True exactly when a requested tolerance was met (:attr:`Status.converged`): a budget
        (``max_iter``, ``max_samples``, ``max_time``) is not success, nor is divergence."""
        return self.status.converged

    @property
    def effective_passes(self) -> float:
        """Samples touched for gradients and curvature, divided by the training-set size: the
        gradient batches, the curvature batches (SQB) and the secant pairs' second gradients
        (oBFGS, RES, oLBFGS touch each batch twice), less the batches whose gradient was the
        previous secant gradient, reused (full-batch secant runs touch the data once per
        iteration)."""
        return passes_touched(self.n_samples, self.n_curvature_samples, self.n_secant_samples,
                              self.n_reused_samples, self.n_search_samples, self.n_train,
                              self.n_estimator_samples)

    @property
    def coef(self) -> FloatArray:
        """Weights without intercepts: shape ``(n_features,)`` or ``(n_blocks, n_features)``."""
        blocks = self.w.reshape(self.n_blocks, -1)[:, : self.n_features]
        return blocks[0].copy() if self.n_blocks == 1 else blocks.copy()

    @property
    def intercept(self) -> float | FloatArray:
        """Intercept(s); 0 when not fitted."""
        if not self.fit_intercept:
            return 0.0 if self.n_blocks == 1 else np.zeros(self.n_blocks)
        icpt = self.w.reshape(self.n_blocks, -1)[:, -1]
        return float(icpt[0]) if self.n_blocks == 1 else icpt.copy()


# installed after the dataclass is made, so that ``fun`` stays a required field of type float
SolveResult.fun = _Objective("fun")  # type: ignore[assignment]


@dataclass(frozen=True)
class IterationInfo:
    """What a callback sees at a report point. ``w`` is a read-only view of the iterate: copy
    it to keep it. It is written when first read (``iterate``: the function that writes and
    returns it), so report points whose callbacks never look at it -- a progress bar, a time
    limit -- cost no O(n) write of a lazily kept iterate; read it during the callback."""

    iteration: int
    n_samples: int
    time: float
    objective: float | None
    step: float
    minibatch_objective: float
    iterate: Callable[[], FloatArray] = field(repr=False, compare=False)

    @functools.cached_property
    def w(self) -> FloatArray:
        """The iterate at this report point (a read-only view)."""
        return self.iterate()


class SlowPathWarning(UserWarning):
    """A composition fell off a fast path it could have used: on sparse rows, a compiled
    solve whose objective, curvature and projection admit the O(nnz) iterate runs the dense
    O(n_params) iteration because its gradient estimator's kernel declares no lazy sparse form
    (``score_table``), or because averaging keeps the lazy table iterate off. Warned once per
    solver, naming the reason and the fix; not when ``path`` asked for the loop that runs.
    The result's :attr:`SolveResult.path_reason` says the same."""


class DivergenceWarning(RuntimeWarning):
    """A run diverged and was stopped (:attr:`Status.DIVERGED`); the result holds the best iterate
    the divergence monitor saw, and its message says what went wrong and what to change."""


class InstabilityWarning(RuntimeWarning):
    """A run ended with its objective well above the lowest it reached (its recorded history
    went down, then back up), without diverging past where it started: the steps became
    unstable near the optimum. The result is the last iterate; the message says where the
    lowest objective was."""


class CurvatureError(RuntimeError):
    """A curvature model reported an unrecoverable failure."""

    def __init__(self, message: str, result: SolveResult | None = None) -> None:
        super().__init__(message)
        self.result = result
