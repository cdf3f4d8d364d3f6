"""The divergence monitor: a run whose objective blows up stops with ``Status.DIVERGED``.

A stochastic run cannot afford a full objective after every step, but the driver already has
an estimate for free: the minibatch objectives ``f_B(w_t)`` the iterations computed. The loops
add them to a window (``Counters.loss_sum`` / ``n_loss``); each time the loop returns to Python
(every ``report_every`` iterations and at the end of a ``run``) the monitor reads the window's
mean -- or the full objective when one was evaluated at that point -- and compares it with
``F(w_0)``, the objective where the solve started:

* a non-finite value (reported by the loops themselves) is divergence;
* an estimate above ``F(w_0) + ceiling * max(|F(w_0)|, 1e-3)``, or one that has risen for
  ``patience`` consecutive windows to above ``F(w_0) + rise * max(|F(w_0)|, 1e-3)``, is
  *suspicious*: the monitor evaluates
  the full objective at the current iterate (one pass; minibatch estimates are noisy and a
  legitimately wild start such as Pegasos' ``1/(lam t)`` steps must not be stopped) and declares
  divergence when that confirms it.

Checks before iteration ``warmup`` only watch for non-finite values: some step rules start far
out by design (Pegasos' first step is ``1/lam``; its first iterates' objective can be 40 times
``F(w_0)`` and fall below it within tens of iterations). A run whose projection bounds every
iterate (:attr:`~sqnopt.interfaces.Projection.bounds_iterate`, no unregularised intercept)
cannot blow up at all: there the monitor only watches for non-finite values throughout (on
a9a at ``lam = 1e-4`` Pegasos' objective stays above ``F(w_0)`` for thousands of iterations,
on the ball of radius ``1/sqrt(lam)``).

The monitor keeps a copy of the iterate with the lowest estimate seen at a check (``w_0`` at
first); a diverged run returns that iterate, never the blown-up one. Every check is O(1) except
the copy when the estimate improves (O(n_params)) and the confirming pass when suspicious. At a
check that only has the minibatch estimate, the copy is taken when the iterations since the last
one touched at least ``KEEP_WORK`` times ``n_params`` stored values: with one-sample steps on wide
sparse data (Pegasos on text) a check comes every few hundred row reads, and copying a dense
iterate at each would cost as much as the steps themselves. A check with the full objective
(history points) always copies: its pass already cost more than the copy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]

__all__ = ["DivergenceMonitor", "MonitorState"]

#: stored values the iterations must touch between two copies of the best iterate made at
#: minibatch-estimate checks, in units of ``n_params`` (see the module docstring)
KEEP_WORK = 8.0


@dataclass(frozen=True)
class DivergenceMonitor:
    """When a run counts as diverged (see the module docstring).

    Parameters
    ----------
    ceiling
        An objective above ``F(w_0) + ceiling * max(|F(w_0)|, 1e-3)`` is divergence (default 10:
        eleven times the starting objective, e.g. 7.6 for the logistic loss from ``w = 0``).
    patience, rise
        An objective that rose at ``patience`` consecutive checks (default 3) to above
        ``F(w_0) + rise * max(|F(w_0)|, 1e-3)`` (default 1: twice the starting objective) is
        divergence too: it is caught before it reaches the ceiling. A stochastic run on small
        data fluctuates; the margin keeps such runs going.
    warmup
        Iterations from the start of the solve during which only non-finite values count
        (default 10).
    instability
        At the end of each ``run`` of a variance-reduced gradient (SAGA, SVRG) with a recorded
        history, warn (:class:`~sqnopt.InstabilityWarning`) when the objective relapsed or
        stalled (:mod:`sqnopt.solver._run`). A caller that runs one solve as many short runs
        (the :class:`~sqnopt.training.Trainer`'s passes) sets it False and judges the whole
        solve once at its end (:meth:`~sqnopt.Solver.warn_if_unstable`).
    """

    ceiling: float = 10.0
    patience: int = 3
    rise: float = 1.0
    warmup: int = 10
    instability: bool = True

    def __post_init__(self) -> None:
        if not (isinstance(self.ceiling, (int, float)) and math.isfinite(self.ceiling)
                and self.ceiling > 0):
            raise ValueError(f"DivergenceMonitor: ceiling must be a finite number > 0, got "
                             f"{self.ceiling!r}")
        if not (isinstance(self.patience, int) and self.patience >= 1):
            raise ValueError(f"DivergenceMonitor: patience must be an integer >= 1, got "
                             f"{self.patience!r}")
        if not (isinstance(self.warmup, int) and self.warmup >= 0):
            raise ValueError(f"DivergenceMonitor: warmup must be an integer >= 0, got "
                             f"{self.warmup!r}")
        if not (isinstance(self.rise, (int, float)) and math.isfinite(self.rise)
                and 0 <= self.rise <= self.ceiling):
            raise ValueError(f"DivergenceMonitor: rise must be a finite number in [0, ceiling], "
                             f"got {self.rise!r}")

    def limit(self, f_ref: float) -> float:
        """The objective above which a run has diverged."""
        return f_ref + self.ceiling * max(abs(f_ref), 1e-3)

    def rise_limit(self, f_ref: float) -> float:
        """The objective above which a run that keeps rising has diverged."""
        return f_ref + self.rise * max(abs(f_ref), 1e-3)


@dataclass
class MonitorState:
    """What the monitor carries through a solve (part of :class:`SolverState`)."""

    f_ref: float = math.nan           #: F(w_0)
    best: float = math.inf            #: lowest estimate at a check
    w_best: FloatArray | None = None  #: the output iterate at that check
    best_iteration: int = 0           #: the iteration of ``w_best``
    best_samples: int = 0             #: samples processed at ``best_iteration``
    last: float = math.nan            #: the previous window estimate
    rises: int = 0                    #: consecutive rising window estimates

    def keep(self, estimate: float, w: FloatArray, iteration: int, samples: int = 0) -> None:
        """Remember ``w`` (the output iterate at ``iteration``, after ``samples`` samples) if
        ``estimate`` is the lowest so far."""
        if estimate < self.best:
            self.best = estimate
            self.best_iteration = iteration
            self.best_samples = samples
            if self.w_best is None or self.w_best.shape != w.shape:
                self.w_best = w.copy()
            else:
                self.w_best[:] = w

    def copy_due(self, samples: int, values_per_sample: float, n_params: int) -> bool:
        """Whether the iterations since the last copy of the best iterate (now ``samples``
        processed, each touching ``values_per_sample`` stored values) touched ``KEEP_WORK *
        n_params`` values: enough to pay for another copy at a minibatch-estimate check."""
        return (samples - self.best_samples) * values_per_sample >= KEEP_WORK * n_params

    def suspicious(self, monitor: DivergenceMonitor, estimate: float) -> bool:
        """Update the rise count with a window ``estimate``; True if the full objective should
        be checked."""
        if not math.isfinite(estimate):
            return True
        self.rises = self.rises + 1 if (math.isfinite(self.last) and estimate > self.last) else 0
        self.last = estimate
        if estimate > monitor.limit(self.f_ref):
            return True
        return self.rises >= monitor.patience and estimate > monitor.rise_limit(self.f_ref)

    def diverged(self, monitor: DivergenceMonitor, fval: float) -> bool:
        """Whether a full objective ``fval`` confirms divergence."""
        if not math.isfinite(fval):
            return True
        if fval > monitor.limit(self.f_ref):
            return True
        return self.rises >= monitor.patience and fval > monitor.rise_limit(self.f_ref)
