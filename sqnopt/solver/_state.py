"""Explicit, typed solver state: kernels, buffers, counters and history of one solve."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sqnopt.checkpoint import Checkpoint
from sqnopt.data import Dataset
from sqnopt.interfaces import (
    CurvatureKernelLike,
    GradientKernelLike,
    ObjectiveKernelLike,
    Problem,
    ProjectionKernelLike,
    ScheduleKernelLike,
    StepKernelLike,
)
from sqnopt.solver import _checkpoint
from sqnopt.solver._loop import CompiledLoop, Counters
from sqnopt.solver._monitor import MonitorState
from sqnopt.solver._pyloop import PythonLoop
from sqnopt.solver._result import LoopPath, passes_touched
from sqnopt.solver._sampler import Sampler
from sqnopt.solver._scaled_loop import ScaledLoop

FloatArray = NDArray[np.float64]

__all__ = ["HistoryRecorder", "SolverState"]


@dataclass
class HistoryRecorder:
    """Accumulates history rows during a solve."""

    iteration: list[int] = field(default_factory=list)
    samples: list[int] = field(default_factory=list)
    effective_passes: list[float] = field(default_factory=list)
    time: list[float] = field(default_factory=list)
    objective: list[float] = field(default_factory=list)
    grad_norm: list[float] = field(default_factory=list)

    def append(self, iteration: int, samples: int, passes: float, time: float, objective: float,
               grad_norm: float) -> None:
        if self.iteration and self.iteration[-1] == iteration:
            return  # already recorded at this iteration
        self.iteration.append(iteration)
        self.samples.append(samples)
        self.effective_passes.append(passes)
        self.time.append(time)
        self.objective.append(objective)
        self.grad_norm.append(grad_norm)


@dataclass(eq=False)
class SolverState:
    """Everything a solve carries from one iteration (and one ``run`` call) to the next.

    The kernels hold the components' own state (curvature memory, schedule position); the
    buffers hold the iterate (``w``), the running average (``w_avg``) and scratch vectors.
    ``run`` advances a state in place; ``Solver.init_state`` makes a fresh one.
    """

    data: Dataset
    problem: Problem
    objective: ObjectiveKernelLike
    gradient: GradientKernelLike
    curvature: CurvatureKernelLike
    schedule: ScheduleKernelLike
    curvature_schedule: ScheduleKernelLike | None
    step: StepKernelLike
    projection: ProjectionKernelLike | None
    sampler: Sampler
    w: FloatArray
    w_avg: FloatArray | None
    counters: Counters
    avg_start: int
    compiled: bool
    loop: CompiledLoop | ScaledLoop | PythonLoop
    #: Which loop runs (:attr:`~sqnopt.solver.SolveResult.path`) and why
    #: (:attr:`~sqnopt.solver.SolveResult.path_reason`).
    path: LoopPath
    path_reason: str
    buffers: dict[str, Any] = field(repr=False)
    elapsed: float = 0.0      #: seconds spent iterating (evaluations excluded)
    eval_time: float = 0.0    #: seconds spent in full-objective evaluations
    history: HistoryRecorder = field(default_factory=HistoryRecorder)
    monitor: MonitorState = field(default_factory=MonitorState)
    #: Set when a run ended with ``Status.DIVERGED``: the state cannot be run further.
    diverged: bool = False
    #: The solver's components and settings that shape an iteration (what a checkpoint of this
    #: state belongs to; set by the solver that built it): a dict, or a function returning it
    #: (the solver's settings as they were when it built the state, described when first read:
    #: only a checkpoint reads them).
    identity_source: dict[str, Any] | Callable[[], dict[str, Any]] = field(
        default_factory=dict, repr=False)
    #: Nothing outside the solver references this state (``Solver.fit``'s own): the result of
    #: its run takes the iterate's buffer instead of a copy.
    private: bool = field(default=False, repr=False)
    #: A run that records no history may leave ``F(w)`` to its result, computed when read
    #: (the result then keeps the objective, bound to the data, until then): off for
    #: ``Solver.fit`` on data the data layer had to convert, whose copy would be kept alive.
    lazy_objective: bool = field(default=True, repr=False)
    #: ``(iteration, samples processed)`` when the current data was bound (0, 0 for the data
    #: the solve started on; a :meth:`~sqnopt.Solver.rebind` or a restore on new data moves
    #: it): objective values recorded before it are on other data.
    data_since: tuple[int, int] = field(default=(0, 0), repr=False)
    #: The run's end warned already that the steps are unstable (once per state and data).
    instability_warned: bool = field(default=False, repr=False)
    #: ``(loop, t, samples, n_avg)`` when :meth:`sync` last wrote ``w``; None after ``w`` was
    #: written from outside (a divergence's restore of the best iterate), which the next
    #: :meth:`sync` then overwrites from the loop's representation as before.
    sync_mark: tuple[Any, int, int, int] | None = field(default=None, repr=False)

    def checkpoint(self, *, data_state: bool = True) -> Checkpoint:
        """Everything the solve carries from one iteration to the next, except the data.

        Take it between ``run`` calls (or in a callback); :meth:`Solver.restore` with the same
        solver settings and data turns it into a state whose ``run`` continues bit-for-bit as
        this one would (:mod:`sqnopt.checkpoint` lists what it holds). The checkpoint is a copy:
        running this state further does not change it. It pickles, and
        :meth:`~sqnopt.checkpoint.Checkpoint.save` writes it to a file (no pickle) when every
        kernel provides ``get_state``.

        ``data_state=False`` leaves out what is bound to the data (the sampler's position, the
        gradient estimator's tables, the batch schedules, the loop's reuse buffers): smaller,
        for continuing on new data only (``Solver.restore(..., new_data=True)``).
        """
        return _checkpoint.take(self, data_state=data_state)

    def __reduce__(self) -> Any:
        raise TypeError("a SolverState is bound to its data and compiled kernels and does not "
                        "pickle: pickle state.checkpoint() (a Checkpoint) instead and continue "
                        "with Solver.restore(checkpoint, X, y)")

    @property
    def identity(self) -> dict[str, Any]:
        """The components and settings that shape an iteration (see ``identity_source``)."""
        if callable(self.identity_source):
            self.identity_source = self.identity_source()
        return self.identity_source

    @property
    def t(self) -> int:
        return int(self.counters.t)

    def sync(self) -> None:
        """Bring ``w`` and ``w_avg`` up to date. A loop that declares ``lazy_iterate`` (the
        scaled loop keeps the iterate in scaled form) writes these buffers only on request; the
        other loops keep them current. Nothing to do when the loop took no step since the last
        write: a stream asks for ``w`` several times per chunk (report, result, rebind), and
        each write of a lazy representation is an O(n) pass with a pending factor per
        coordinate."""
        c = self.counters
        mark = (self.loop, int(c.t), int(c.n_samples), int(c.n_avg))
        last = self.sync_mark
        if last is not None and last[0] is self.loop and last[1:] == mark[1:]:
            return
        self.loop.sync()
        self.sync_mark = mark

    def note_synced(self) -> None:
        """``w`` holds the current iterate, written by the caller together with the loop's
        representation (:meth:`sqnopt.solver._adaptive_loop.AdaptiveLoop.mix`): the next
        :meth:`sync` has nothing to write."""
        c = self.counters
        self.sync_mark = (self.loop, int(c.t), int(c.n_samples), int(c.n_avg))

    def output_iterate(self) -> FloatArray:
        """The iterate a result reports: the running average once it has started, else ``w``."""
        self.sync()
        if self.w_avg is not None and self.counters.n_avg > 0:
            return self.w_avg
        return self.w

    def effective_passes(self) -> float:
        """Samples touched (gradient batches, curvature batches, secant gradients) / N."""
        c = self.counters
        return passes_touched(c.n_samples, c.n_curvature_samples, c.n_secant_samples,
                              c.n_reused_samples, c.n_search_samples, self.data.n_samples,
                              c.n_estimator_samples)
