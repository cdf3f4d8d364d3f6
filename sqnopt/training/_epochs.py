"""``fit``'s budget and stopping rules on one sub-problem: :func:`run_budget`.

Two regimes, by the recipe:

* **deterministic** (batches grow to the whole data set) or ``tol=None``: one
  :meth:`~sqnopt.Solver.run` of the whole budget, with the loop testing ``gtol = tol``
  (``max_j |∂F/∂w_j|``) and ``ftol = FTOL`` on every full-batch iteration's own gradient.
  A fit that is checkpointed runs the budget in runs of ``every`` passes, each stopped at the
  sample count the single run stops at: the same iterates, one more history point per run;
* **stochastic**: one pass per run. After each pass the gradient norm the loop computed with
  the pass-end objective is tested against ``tol``; a pass that does not improve the best
  objective by ``tol`` (relative) counts towards ``n_iter_no_change``. For a non-smooth
  objective (a subgradient never vanishes) stagnation is the convergence test, as for
  scikit-learn's ``SGDClassifier``; for a smooth one it ends the fit unconverged.

The progress of a sub-problem is a JSON-able *loop record* (:func:`new_loop_record`), updated
in place, so that a training checkpoint can resume in the middle of the budget and end with
the result the uninterrupted fit ends with.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from sqnopt.checkpoint import CheckpointError
from sqnopt.progress import ProgressBar
from sqnopt.solver import SolveResult, Solver, SolverState, Status

#: Relative objective decrease between full-batch iterations below which a deterministic run
#: has converged (scikit-learn's lbfgs uses the same, ``64 * machine epsilon``).
FTOL = 64 * float(np.finfo(np.float64).eps)

LoopRecord = dict[str, Any]

__all__ = ["FTOL", "Budget", "PassTests", "budgeted_passes", "new_loop_record", "rebuild_result",
           "run_budget", "summary"]


@dataclasses.dataclass(frozen=True)
class Budget:
    """How long a fit may run and when it stops."""

    #: passes over the data (``max_iter``), counted from the start of the first fit
    max_epochs: float
    #: ``max_j |∂F/∂w_j|`` at which the fit has converged; ``None``: run the whole budget
    tol: float | None
    #: stochastic passes without improvement after which the fit stops
    n_iter_no_change: int
    #: the objective is smooth (its gradient can meet ``tol``)
    smooth: bool
    #: the recipe's batches grow to the whole data set
    full_batch_phase: bool


def new_loop_record(state: SolverState) -> LoopRecord:
    """The progress of ``fit`` on one sub-problem, before its first run (JSON-able)."""
    return {"s0": int(state.counters.n_samples), "p0": float(state.effective_passes()),
            "done": 0, "total": None, "budget": None, "best": math.inf, "stall": 0,
            "previous": math.nan, "change": math.nan, "ended": False, "why": None,
            "last": None}


def budgeted_passes(state: SolverState, loop: LoopRecord, budget: Budget) -> int:
    """The passes over the data a fit made as ``max_epochs`` counts them -- its gradient
    batches' samples since the fit started (``loop["s0"]``) over the data size, rounded up --
    at most the budget (a last batch may reach past it): ``n_iter_`` of a fit with
    ``tol=None``, which ends before its budget when a deterministic run reaches working
    precision or diverges."""
    made = math.ceil((int(state.counters.n_samples) - int(loop["s0"])) / state.data.n_samples
                     - 1e-9)
    return max(0, min(made, math.ceil(float(budget.max_epochs))))


def summary(res: SolveResult) -> dict[str, Any]:
    """What a result adds to its state (the rest is rebuilt from a restored state)."""
    return {"status": res.status.value, "message": res.message, "fun": float(res.fun),
            "grad_norm": float(res.grad_norm)}


def rebuild_result(solver: Solver, state: SolverState, last: Any) -> SolveResult:
    """The result the run that left ``state`` returned (a fit resumed with no run left)."""
    if not isinstance(last, dict):
        raise CheckpointError("the training checkpoint has no result of its last run")
    return solver._result(state, Status(last["status"]), str(last["message"]),
                          float(last["fun"]), float(last["grad_norm"]))


def run_budget(solver: Solver, state: SolverState, budget: Budget, loop: LoopRecord,
               bar: ProgressBar | None = None,
               emit: Callable[[LoopRecord], None] | None = None,
               every: float = 1.0) -> tuple[int, SolveResult, str | None]:
    """Run ``fit``'s budget; returns the passes made, the last result and, when the run
    did not meet ``tol``, why (for the warning).

    ``loop`` is the fit's progress on this sub-problem (:func:`new_loop_record`), updated
    in place; a fit resumed from a checkpoint passes the checkpointed one and continues
    from it. ``emit(loop)`` is called every ``every`` passes with the state between two
    runs (the caller takes the checkpoint)."""
    if budget.full_batch_phase or budget.tol is None:
        return _run_whole(solver, state, budget, loop, emit, every)
    return _run_passes(solver, state, budget, loop, bar, emit, every)


def _run_whole(solver: Solver, state: SolverState, budget: Budget, loop: LoopRecord,
               emit: Callable[[LoopRecord], None] | None,
               every: float) -> tuple[int, SolveResult, str | None]:
    total = float(budget.max_epochs)
    p0 = float(loop["p0"])
    tol = None if budget.tol is None else float(budget.tol)
    kw: dict[str, Any] = {"gtol": tol, "ftol": FTOL if tol is not None else None}
    res: SolveResult | None = None
    if emit is None and loop["last"] is None:
        res = solver.run(state, max_epochs=total, **kw)
        loop["last"] = summary(res)
    else:
        # runs of ``every`` passes, stopped at the sample count one run of the whole
        # budget stops at: the same iterates (only the history gains a point per run)
        s0 = int(loop["s0"])
        target = s0 + int(math.ceil(total * state.data.n_samples))
        chunk = max(1, int(math.ceil(every * state.data.n_samples)))
        while not loop["ended"] and state.counters.n_samples < target:
            n = int(state.counters.n_samples)
            stop = target if emit is None else \
                min(target, s0 + chunk * ((n - s0) // chunk + 1))
            res = solver.run(state, max_samples=stop - n, **kw)
            if res.status is not Status.MAX_SAMPLES:
                loop["ended"] = True
            elif state.counters.n_samples >= target:
                res = dataclasses.replace(
                    res, message=f"reached max_samples={target - s0} samples processed")
            loop["last"] = summary(res)
            if emit is not None and not loop["ended"] and \
                    state.counters.n_samples < target:
                emit(loop)
        if res is None:     # resumed with nothing left to run
            res = rebuild_result(solver, state, loop["last"])
    done = int(math.ceil(state.effective_passes() - p0 - 1e-9))
    if tol is None or res.success or res.status is Status.DIVERGED:
        return done, res, None
    why = f"stopped at max_iter={budget.max_epochs:g} passes ({res.message})"
    if math.isfinite(res.grad_norm):
        why += f"; largest gradient entry {res.grad_norm:.3g} > tol={tol:g}"
    return done, res, why


@dataclasses.dataclass
class PassTests:
    """The stopping tests of a stochastic fit after each pass (the module docstring): the
    gradient-norm test against ``tol`` and the count of passes that did not improve the best
    objective by ``tol`` (relative). Shared by :func:`run_budget` and the Dask estimator's
    chunk stream; its fields are the JSON-able progress a training checkpoint keeps."""

    budget: Budget
    #: the lowest objective after a pass so far
    best: float = math.inf
    #: passes in a row that did not improve ``best`` by ``tol``
    stall: int = 0
    #: the objective after the previous pass
    previous: float = math.nan
    #: relative objective decrease in the last pass
    change: float = math.nan

    def after_pass(self, fun: float, gnorm: float) -> tuple[bool, str | None]:
        """Record a pass ending at objective ``fun`` with largest gradient entry ``gnorm``;
        returns ``(stop, why)``: stop and ``why is None`` means converged, stop with a reason
        means the fit ends unconverged."""
        b = self.budget
        assert b.tol is not None
        tol = float(b.tol)
        if gnorm <= tol and b.smooth:
            return True, None
        self.change = (self.previous - fun) / max(abs(fun), 1e-300)
        self.previous = fun
        self.stall = self.stall + 1 if fun > self.best - tol * max(abs(self.best), 1.0) else 0
        self.best = min(self.best, fun)
        if self.stall < b.n_iter_no_change:
            return False, None
        if not b.smooth:
            return True, None       # a subgradient never vanishes: stagnation is the
                                    # convergence test (as SGDClassifier's)
        return True, (f"the objective stopped improving for {b.n_iter_no_change} passes "
                      f"(F = {fun:.6g}, relative change in the last pass {self.change:.2g}) "
                      f"with the largest gradient entry at {gnorm:.3g} > tol={tol:g}: the "
                      "stochastic steps reached their noise floor")

    def exhausted(self, fun: float, gnorm: float) -> str:
        """Why a fit that used its whole budget without meeting ``tol`` did not converge: the
        gradient test's last value when it was measured (a smooth objective), else that the
        objective was still improving (the test of a non-smooth one)."""
        change = (f", relative change in the last pass {self.change:.2g}"
                  if math.isfinite(self.change) else "")
        if self.budget.smooth and math.isfinite(gnorm):
            return (f"stopped at max_iter={self.budget.max_epochs:g} passes with the largest "
                    f"gradient entry at {gnorm:.3g} > tol={self.budget.tol:g} (F = {fun:.6g}"
                    f"{change})")
        if self.budget.smooth:
            return (f"stopped at max_iter={self.budget.max_epochs:g} passes; tol="
                    f"{self.budget.tol:g} was not tested: the gradient was not measured "
                    f"(F = {fun:.6g}{change})")
        return (f"stopped at max_iter={self.budget.max_epochs:g} passes with the objective "
                f"still improving (F = {fun:.6g}{change}; the fit ends once "
                f"n_iter_no_change={self.budget.n_iter_no_change} passes in a row lower the "
                f"best objective by less than tol={self.budget.tol:g}, relative)")


def _run_passes(solver: Solver, state: SolverState, budget: Budget, loop: LoopRecord,
                bar: ProgressBar | None, emit: Callable[[LoopRecord], None] | None,
                every: float) -> tuple[int, SolveResult, str | None]:
    assert budget.tol is not None
    total = float(budget.max_epochs)
    done = int(loop["done"])
    if loop["total"] is not None and loop["budget"] == total:
        total = float(loop["total"])    # the remaining budget, exactly as it was counted
    else:
        total -= done
    tests = PassTests(budget, best=float(loop["best"]), stall=int(loop["stall"]),
                      previous=float(loop["previous"]), change=float(loop["change"]))
    if loop["ended"]:                   # resumed after the fit had stopped
        return done, rebuild_result(solver, state, loop["last"]), loop["why"]
    max_epochs = float(budget.max_epochs)
    last: SolveResult | None = None

    def keep(res: SolveResult, ended: bool, why: str | None) -> None:
        loop.update(done=done, total=total, budget=max_epochs, best=tests.best,
                    stall=tests.stall, previous=tests.previous, change=tests.change,
                    ended=ended, why=why, last=summary(res))

    while total > 0:
        last = res = solver.run(state, max_epochs=min(1.0, total))
        total -= 1.0
        done += 1
        if bar is not None:
            bar.set_objective(res.fun)
        if res.status is Status.DIVERGED:
            keep(res, True, None)
            return done, res, None
        stop, why = tests.after_pass(res.fun, _last_grad_norm(res))
        keep(res, stop, why)
        if stop:
            solver.warn_if_unstable(state, res.fun, stacklevel=5)
            return done, res, why
        if emit is not None and total > 0 and \
                math.floor(done / every) > math.floor((done - 1) / every):
            emit(loop)
    res = last if last is not None else rebuild_result(solver, state, loop["last"])
    solver.warn_if_unstable(state, res.fun, stacklevel=5)
    return done, res, tests.exhausted(res.fun, _last_grad_norm(res))


def _last_grad_norm(res: SolveResult) -> float:
    return float(res.history.grad_norm[-1]) if len(res.history) else math.nan
