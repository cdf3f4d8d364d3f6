"""Running a solve: the loop's returns to Python for budgets, tolerances, history, callbacks
and the divergence monitor, and the frozen result (:class:`~sqnopt.solver.Solver` inherits this
part)."""

from __future__ import annotations

import functools
import math
import time
import warnings
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

import sqnopt.solver._pyloop as codes
from sqnopt._jobs import effective_n_jobs
from sqnopt._parallel import may_split
from sqnopt.solver._blas import blas_threads_limited
from sqnopt.solver._build import _check_positive, _SolverConfig
from sqnopt.solver._result import (
    CurvatureError,
    DivergenceWarning,
    History,
    InstabilityWarning,
    IterationInfo,
    PendingObjective,
    SolveResult,
    Status,
)
from sqnopt.solver._state import SolverState

FloatArray = NDArray[np.float64]

__all__: list[str] = []


#: A failed full-batch line search whose first trial predicted a relative decrease below this
#: (sqrt of the double-precision epsilon) is convergence to working precision.
_PRECISION = 1.5e-8

#: Rows of the fixed probe on which a run that leaves ``F(w)`` to its result estimates ``F`` at
#: its end, for the divergence monitor's end-of-run test (``_Runner._end_estimate``).
_PROBE_ROWS = 64

#: A run with a variance-reduced gradient (``GradientEstimator.vanishing_variance``) whose
#: recorded objective ends above ``F_best + RELAPSE * (F_0 - F_best)`` (``F_0`` the first value
#: recorded on the data, ``F_best`` the lowest after the estimator settled, see
#: ``SETTLE_PASSES``) warns with ``InstabilityWarning``: it got to ``F_best`` and lost more than
#: this fraction of its progress again -- the end of a run whose steps turned unstable near the
#: optimum, below the divergence monitor's thresholds (which watch ``F_0``). Plain minibatch
#: runs are left out: their noise floor fluctuates; so are runs whose step is one the estimator
#: is stable with (``_Runner._within_stable_step``), whose rises are transients.
RELAPSE = 0.01

#: Likewise: a run whose settled records, split into quarters, have a median in the last
#: quarter no lower than in the third while they spread over more than
#: ``STALL_SPREAD * |F|`` stalled above the optimum. A stable constant step converges linearly
#: in expectation: single values jitter (the more the slower the rate), but the typical level
#: keeps falling, and a converged run only jitters in the last digits.
STALL_SPREAD = 1e-8

#: Passes over the data, from the start of the solve (or from the binding of new data), after
#: which a variance-reduced estimate describes iterates near the current one: SAGA's table
#: then holds a gradient of every sample (zeros before a sample's first draw), SVRG's snapshot
#: has been retaken (the first is ``w_0``). Before, the objective may rise while SAGA's
#: Lyapunov function still falls (Defazio et al. 2014, Theorem 1: it includes the table's
#: distance to the optimum's gradients): the instability tests read the records after it.
SETTLE_PASSES = 1.0

#: Settled records the stall test needs (a quarter of them at least two).
STALL_RECORDS = 8


#: The largest count the compiled loop's counters hold (``Py_ssize_t``).
_COUNT_MAX = 2**63 - 1


def _check_counter_range(state: SolverState, max_iter: int | None, max_samples: int | None,
                         max_epochs: float | None) -> None:
    """Refuse a budget whose stopping point the solver's counters cannot hold (iterations or
    samples processed beyond ``2**63 - 1``): such a run could not be counted honestly (and
    would not end in any lifetime: 2**63 samples at 10**9 per second take 292 years)."""
    c = state.counters
    n = state.data.n_samples
    if max_samples is not None and int(c.n_samples) + max_samples > _COUNT_MAX:
        what = (f"max_epochs={max_epochs:g} passes over {n} samples" if max_epochs is not None
                else f"max_samples={max_samples}")
        raise ValueError(f"{what} is more than the solver can count (2**63 - 1 samples "
                         f"processed: {(_COUNT_MAX - int(c.n_samples)) / n:.3g} passes of this "
                         "data); give a budget that can be run, e.g. max_epochs=None with a "
                         "tolerance (gtol) or a time limit (max_time)")
    if max_iter is not None and int(c.t) + max_iter > _COUNT_MAX:
        raise ValueError(f"max_iter={max_iter} is more iterations than the solver can count "
                         "(2**63 - 1); give a budget that can be run")


@dataclass(frozen=True)
class _Limits:
    max_iter: int | None
    max_samples: int | None
    max_time: float | None
    target_objective: float | None
    gtol: float | None
    ftol: float | None


class _Runner(_SolverConfig):
    """Advance a state until a stopping rule fires; report."""

    def _limits(self, state: SolverState, overrides: dict[str, Any]) -> _Limits:
        unknown = set(overrides) - {"max_iter", "max_samples", "max_epochs", "max_time",
                                    "target_objective", "gtol", "ftol"}
        if unknown:
            raise TypeError(f"run() got unknown limits {sorted(unknown)}")
        def get(key: str) -> Any:
            return overrides[key] if key in overrides else getattr(self, key)

        max_iter, max_samples, max_epochs = get("max_iter"), get("max_samples"), get("max_epochs")
        max_time = get("max_time")
        _check_positive("max_iter", max_iter, integer=True, allow_zero=True)
        _check_positive("max_samples", max_samples, integer=True, allow_zero=True)
        _check_positive("max_epochs", max_epochs, allow_zero=True)
        _check_positive("max_time", max_time)
        if max_epochs is not None:
            by_epochs = int(math.ceil(max_epochs * state.data.n_samples))
            max_samples = by_epochs if max_samples is None else min(max_samples, by_epochs)
        _check_counter_range(state, max_iter, max_samples, max_epochs)
        if max_iter is None and max_samples is None and max_time is None:
            max_samples = 10 * state.data.n_samples
        gtol, ftol = get("gtol"), get("ftol")
        _check_positive("gtol", gtol)
        _check_positive("ftol", ftol)
        return _Limits(max_iter, max_samples, max_time, get("target_objective"), gtol, ftol)

    def run(self, state: SolverState, **limits: Any) -> SolveResult:
        """Advance ``state`` until a stopping rule fires; return a frozen result.

        Keyword arguments override the budgets and targets (``max_iter``, ``max_samples``,
        ``max_epochs``, ``max_time``, ``target_objective``, ``gtol``, ``ftol``) for this call; budgets count
        from the start of the call, so repeated calls continue the same solve.

        A run that diverges (non-finite values, or the divergence monitor's test) returns with
        ``Status.DIVERGED`` and the best iterate seen, after a :class:`DivergenceWarning`; such a
        state cannot be run further.

        Raises
        ------
        CurvatureError
            The curvature model reported an unrecoverable failure.
        """
        state.data.rows.set_threads(self._pass_threads(state))
        with blas_threads_limited(self.blas_threads):
            result = self._run(state, limits)
        assert result is not None
        return result

    def _advance(self, state: SolverState, max_samples: int) -> SolveResult | None:
        """Advance ``state`` by ``max_samples`` samples as :meth:`run` does, without the end of
        a run: no end-of-run test of the iterate, no result, ``w`` not written. For the shards
        of :mod:`sqnopt.training._mixing`, whose mixing writes ``w`` from the representations;
        the next :meth:`run` of the mixed state tests its iterate at its end. Returns ``None``,
        or the result of a run that ended early (a divergence, as :meth:`run` ends one)."""
        state.data.rows.set_threads(self._pass_threads(state))
        with blas_threads_limited(self.blas_threads):
            return self._run(state, {"max_samples": int(max_samples)}, finish=False)

    def _pass_threads(self, state: SolverState) -> int:
        """The threads of this run's passes: ``n_jobs`` resolved (:mod:`sqnopt._jobs`), unless
        no pass over this data could split into blocks (then threads change nothing, and a
        small fit does not pay for resolving ``n_jobs``)."""
        if self.n_jobs == 1:
            return 1
        rows = state.data.rows
        outputs = max(int(getattr(state.objective, "n_scores", 1) or 1), 1)
        entries = rows.nnz / rows.n_samples + int(rows.has_intercept)
        if not may_split(rows.n_samples, entries, outputs):
            return 1
        return effective_n_jobs(self.n_jobs)

    def _run(self, state: SolverState, limits: dict[str, Any],
             finish: bool = True) -> SolveResult | None:
        if state.diverged:
            raise ValueError("this solve diverged (Status.DIVERGED) and cannot be continued; "
                             "start a new one (Solver.fit or init_state) with the changes the "
                             "divergence message suggests")
        lim = self._limits(state, limits)
        c = state.counters
        t_begin, s_begin, time_begin = c.t, c.n_samples, state.elapsed
        iter_stop = None if lim.max_iter is None else t_begin + lim.max_iter
        sample_stop = 0 if lim.max_samples is None else s_begin + lim.max_samples
        if lim.max_samples == 0:
            sample_stop = -1  # stop immediately
        history_on = self.history_every is not None
        if history_on and not state.history.iteration:
            self._record(state)
        if self.monitor is not None and not math.isfinite(state.monitor.f_ref):
            self._start_monitor(state)
        loop_tols = bool(state.loop.tests_full_batch)   # the loop tests full batches itself
        # the curvature kernel sees the run's gradient tolerance (CurvatureKernel.run_gtol)
        try:
            setattr(state.curvature, "run_gtol", float(lim.gtol or 0.0))
        except AttributeError:  # a plugin's Python kernel with fixed attributes: not used there
            pass
        if loop_tols:
            loop: Any = state.loop
            loop.gtol = float(lim.gtol or 0.0)
            loop.ftol = float(lim.ftol or 0.0)
        status: Status | None = None
        message = ""
        gnorm = math.nan
        while status is None:
            if iter_stop is not None and c.t >= iter_stop:
                status, message = Status.MAX_ITER, f"reached max_iter={lim.max_iter} iterations"
                break
            if sample_stop < 0 or (sample_stop > 0 and c.n_samples >= sample_stop):
                status, message = Status.MAX_SAMPLES, (
                    f"reached max_samples={lim.max_samples} samples processed")
                break
            if lim.max_time is not None and state.elapsed - time_begin >= lim.max_time:
                status, message = Status.MAX_TIME, f"reached max_time={lim.max_time} s"
                break
            n_iter = self._next_event(c.t, iter_stop) - c.t
            c.last_gnorm = math.nan
            tic = time.perf_counter()
            code = state.loop.run(n_iter, sample_stop)
            state.elapsed += time.perf_counter() - tic
            full_tested = math.isfinite(c.last_gnorm)   # the loop saw a full-batch gradient
            if full_tested:
                gnorm = float(c.last_gnorm)
            if code in (codes.LOOP_NONFINITE_LOSS, codes.LOOP_NONFINITE_ITERATE):
                what = ("the minibatch objective became non-finite"
                        if code == codes.LOOP_NONFINITE_LOSS else "the iterate became non-finite")
                return self._diverged(state, what)
            if code == codes.LOOP_CURVATURE_ERROR:
                msg = (f"curvature model {self.curvature.describe()} failed at iteration "
                       f"{c.t}{self._where(state)}: {state.curvature.error_message()}")
                raise CurvatureError(msg, self._result(state, Status.CALLBACK, msg, math.nan))
            if code == codes.LOOP_GTOL:
                status, message = Status.GTOL, (
                    f"gradient norm {gnorm:.3g} <= gtol={lim.gtol:g} (full batch)")
            elif code == codes.LOOP_FTOL:
                status, message = Status.FTOL, (
                    f"relative objective decrease <= ftol={lim.ftol:g} (full batch; gradient "
                    f"norm {gnorm:.3g})")
            elif code == codes.LOOP_EXHAUSTED:
                status, message = Status.SEQUENCE_EXHAUSTED, (
                    f"the injected batch sequence ran out after {c.t} iterations")
            elif code == codes.LOOP_LINE_SEARCH_FAILED:
                status, message, gnorm = self._line_search_failure(state)
            elif code == codes.LOOP_MAX_SAMPLES:
                status, message = Status.MAX_SAMPLES, (
                    f"reached max_samples={lim.max_samples} samples processed")
            fval: float | None = None
            if history_on and self._is_history_point(c.t):
                fval = self._record(state)
            report = c.t % self.report_every == 0 or status is not None
            if report:
                # gtol at report points, unless the loop just tested a full-batch gradient
                want_grad = lim.gtol is not None and not full_tested and status is None
                if want_grad or (lim.target_objective is not None and fval is None):
                    fval, g_now = self._evaluate(state, with_grad=want_grad)
                    if want_grad:
                        gnorm = g_now
                        if lim.gtol is not None and g_now <= lim.gtol:
                            status = status or Status.GTOL
                            message = message or f"gradient norm {g_now:.3g} <= gtol={lim.gtol:g}"
                if (lim.target_objective is not None and fval is not None
                        and fval <= lim.target_objective):
                    status = status or Status.TARGET_OBJECTIVE
                    message = message or (f"objective {fval:.6g} <= target "
                                           f"{lim.target_objective:g}")
            if fval is not None and not math.isfinite(fval):
                return self._diverged(state, f"the objective F(w) became {fval}")
            if self.monitor is not None:
                why = self._monitor_check(state, fval)
                if why is not None:
                    return self._diverged(state, why)
            if report and self.callbacks:
                if self._call_callbacks(state, fval):
                    status = status or Status.CALLBACK
                    message = message or "stopped by a callback"
        if not finish:
            return None
        if status in (Status.MAX_ITER, Status.MAX_SAMPLES, Status.MAX_TIME) and \
                lim.gtol is not None:
            # a budget ended the run before the tolerance: say how far the last test was
            message += (f"; not converged: gradient norm {gnorm:.3g} > gtol={lim.gtol:g} at "
                        "the last test" if math.isfinite(gnorm) else
                        f"; not converged: gtol={lim.gtol:g} was not met (no gradient tested)")
        if (not history_on and state.lazy_objective
                and getattr(state.objective, "deferred_value", False)):
            # no pass over the data for F(w): the result computes it when ``fun`` is read (the
            # objective declares ``deferred_value``: a pure function of w over in-memory data;
            # an objective of another kind, e.g. over a cluster's data, is evaluated now). A
            # non-finite iterate is still never returned, and the monitor's end-of-run test
            # still applies (see _end_estimate)
            w_end = state.output_iterate()
            with np.errstate(all="ignore"):
                sq = float(np.dot(w_end, w_end))   # NaN/inf entries, or an overflowing norm
            if not math.isfinite(sq):
                return self._diverged(state, f"the iterate is non-finite at the end of the run "
                                             f"(||w||^2 = {sq})")
            fun_end: float | None = None
            if (self.monitor is not None and state.t >= self.monitor.warmup
                    and not self._bounded_iterate()):
                estimate = self._end_estimate(state, w_end)
                if state.monitor.diverged(self.monitor, estimate):
                    # suspicious: confirm with F(w) (the one case with a pass over the data)
                    fun_end = self._evaluate(state)[0]
                    if state.monitor.diverged(self.monitor, fun_end):
                        return self._diverged(
                            state, f"the objective F(w) = {fun_end:.6g} at the end of the run "
                                   f"(estimated {estimate:.6g} on {_PROBE_ROWS} rows or fewer)")
            return self._result(state, status, message, fun_end, gnorm)
        fun = self._record(state)
        if not math.isfinite(fun) or (self.monitor is not None and state.t >= self.monitor.warmup
                                      and not self._bounded_iterate()
                                      and state.monitor.diverged(self.monitor, fun)):
            return self._diverged(state, f"the objective F(w) = {fun:.6g} at the end of the run")
        if self.monitor is not None and self.monitor.instability and history_on:
            self.warn_if_unstable(state, fun, stacklevel=4)
        return self._result(state, status, message, fun, gnorm)

    def warn_if_unstable(self, state: SolverState, fun: float, *, stacklevel: int = 2) -> bool:
        """With a gradient estimator whose variance vanishes at the optimum (SVRG, SAGA: a
        stable constant step converges linearly, so neither a relapse nor a stall is noise),
        warn (``InstabilityWarning``) when the objective recorded on the current data, ending
        at ``fun``, ended well above the lowest it reached once the estimator settled
        (``RELAPSE``, ``SETTLE_PASSES``) or stopped falling while still moving
        (``STALL_SPREAD``): unstable steps that the divergence monitor, which compares with
        the starting objective, lets run. A step the estimator is stable with
        (:meth:`_within_stable_step`) never warns. At most once per state and data; True if
        it warned.

        ``run`` calls it at its end unless the monitor's ``instability`` is off; a caller that
        runs one solve in many short runs turns that off and calls it once at the end."""
        if not self.gradient.vanishing_variance or state.instability_warned:
            return False
        t0, s0 = state.data_since
        its_all = np.asarray(state.history.iteration)
        samples = np.asarray(state.history.samples)
        values = np.asarray(state.history.objective, dtype=np.float64)
        on_data = (its_all >= t0) & np.isfinite(values)
        if t0 > 0:
            on_data &= its_all > t0     # new data: its first record is the old data's last one
        if not np.any(on_data):
            return False
        f0 = float(values[on_data][0])
        settled = on_data & (samples >= s0 + SETTLE_PASSES * state.data.n_samples)
        values, its = values[settled], its_all[settled]
        if values.size < 3 or not math.isfinite(fun):
            return False
        k = int(np.argmin(values))
        best = float(values[k])
        advice = self._divergence_advice()
        msg = None
        if f0 > best and fun > best + RELAPSE * (f0 - best):
            msg = (f"sqnopt: the objective ended at F(w) = {fun:.6g}, above the lowest the run "
                   f"recorded, {best:.6g} at iteration {its[k]}, by "
                   f"{(fun - best) / (f0 - best):.1%} of its progress from F(w0) = {f0:.6g}: the "
                   f"steps became unstable near the optimum. {advice}")
        elif values.size >= STALL_RECORDS:
            q = values.size // 4
            third, last = values[-2 * q:-q], values[-q:]
            if (float(np.median(last)) >= float(np.median(third)) and
                    float(np.max(values[-2 * q:]) - np.min(values[-2 * q:]))
                    > STALL_SPREAD * max(abs(best), 1e-300)):
                msg = (f"sqnopt: the objective stopped converging: over the last quarter of the "
                       f"recorded history its median was {float(np.median(last)):.6g}, no lower "
                       f"than the {float(np.median(third)):.6g} of the quarter before, while "
                       f"the values still spread from {float(np.min(values[-2 * q:])):.6g} to "
                       f"{float(np.max(values[-2 * q:])):.6g} (lowest {best:.6g} at iteration "
                       f"{its[k]}). With a variance-reduced gradient ({self.gradient.describe()}) "
                       f"a stable constant step converges linearly, so the steps are unstable. "
                       f"{advice}")
        if msg is None or self._within_stable_step(state):
            return False
        state.instability_warned = True
        warnings.warn(msg, InstabilityWarning, stacklevel=stacklevel)
        return True

    def _within_stable_step(self, state: SolverState) -> bool:
        """Whether the step is one a variance-reduced gradient is stable with: a constant step
        ``eps <= 1/L_max`` along gradient-scaled directions, ``L_max`` the largest per-sample
        smoothness constant (:func:`sqnopt.recipes.max_sample_smoothness_step`; one pass over
        the stored values). SAGA converges linearly with ``1/(3 L_max)`` (Defazio, Bach &
        Lacoste-Julien 2014, Theorem 1) and SAG with up to ``1/L_max`` in practice (Schmidt, Le
        Roux & Bach 2017): a rise or a stall under such a step is the transient of its Lyapunov
        function (which includes the table's distance to the optimum's gradients) or the
        jitter of a slow rate, not instability."""
        if self.curvature.direction_scale != "gradient":
            return False
        X = state.data.X
        if not (isinstance(X, np.ndarray) or sp.issparse(X)):
            return False
        from sqnopt.data._norms import max_sample_smoothness_step

        eps = self._step_at(state)
        stable = max_sample_smoothness_step(X, state.data.grad_weight,
                                            state.problem.curvature_bound,
                                            float(state.problem.lam), state.data.fit_intercept,
                                            1.0)
        return math.isfinite(eps) and eps <= stable * (1.0 + 1e-12)

    @staticmethod
    def _end_estimate(state: SolverState, w: FloatArray) -> float:
        """An estimate of ``F(w)`` at the end of a run that leaves ``F`` to its result: the
        minibatch objective on at most ``_PROBE_ROWS`` rows spread evenly over the data set (a
        fixed probe: no draw from the sampler, so a continued run is unchanged; the whole data
        set when it is that small). The window of minibatch objectives the monitor checked last
        was taken at the iterates *before* each step, so it never saw the last step's result;
        the probe does, at a cost independent of ``N`` (and, for margin losses, no gradient
        vector: O(64 rows) plus one read of ``w``)."""
        n = state.data.n_samples
        probe = np.unique(np.linspace(0, n - 1, min(n, _PROBE_ROWS)).astype(np.intp))
        objective: Any = state.objective
        tic = time.perf_counter()
        with np.errstate(all="ignore"):
            # a compiled kernel's batch_value keeps no gradient (margin losses: no O(n) write)
            estimate = float(objective.batch_value(w, probe) if hasattr(objective, "batch_value")
                             else objective.gradient(w, probe, np.empty_like(w)))
        state.eval_time += time.perf_counter() - tic
        return estimate

    def _start_monitor(self, state: SolverState) -> None:
        """``F(w_0)`` for the divergence monitor (the history's first point when recorded)."""
        ms = state.monitor
        h = state.history
        # The buffers hold the iterate before the first run (no sync: a loop whose counters
        # were set from outside, as a resumed solve does, reloads from them).
        w = state.w_avg if state.w_avg is not None and state.counters.n_avg > 0 else state.w
        if h.iteration and h.iteration[-1] == state.t:
            ms.f_ref = h.objective[-1]
        else:
            tic = time.perf_counter()
            ms.f_ref = float(state.objective.value(w))
            state.eval_time += time.perf_counter() - tic
        ms.keep(ms.f_ref, w, state.t, state.counters.n_samples)

    def _monitor_check(self, state: SolverState, fval: float | None) -> str | None:
        """One check of the divergence monitor (see :mod:`sqnopt.solver._monitor`): the reason
        when the run diverged, else None."""
        assert self.monitor is not None
        ms = state.monitor
        c = state.counters
        if fval is not None:
            estimate = fval
        elif c.n_loss > 0:
            estimate = float(c.loss_sum) / float(c.n_loss)
        else:
            return None
        c.loss_sum = 0.0
        c.n_loss = 0
        if state.t < self.monitor.warmup and math.isfinite(estimate):
            return None
        # a bounded iterate cannot blow up: no objective test, only the best iterate's copy
        bounded = math.isfinite(estimate) and self._bounded_iterate()
        if not bounded and ms.suspicious(self.monitor, estimate):
            full = fval if fval is not None else self._evaluate(state)[0]
            if ms.diverged(self.monitor, full):
                kind = "objective" if fval is not None else "mean minibatch objective"
                return (f"the {kind} rose to {estimate:.6g} and the objective F(w) is {full:.6g}, "
                        f"against F(w0) = {ms.f_ref:.6g} where the solve started")
            estimate = full
            fval = full
        if estimate < ms.best and (fval is not None or ms.copy_due(
                c.n_samples, _values_per_sample(state.data.X), state.problem.n_params)):
            ms.keep(estimate, state.output_iterate(), state.t, c.n_samples)
        return None

    def _where(self, state: SolverState) -> str:
        """Where the iterate is and how it got there, for a failure's message: its norm and,
        unless the step is a line search (whose trials are the search's own), the step rule's
        last step."""
        with np.errstate(all="ignore"):
            wnorm = float(np.linalg.norm(state.output_iterate()))
        if self.step.line_search or state.t == 0:
            return f" (|w| = {wnorm:.3g})"
        return (f" (|w| = {wnorm:.3g} after steps of {self._step_at(state):.3g} by "
                f"{self.step.describe()})")

    def _bounded_iterate(self) -> bool:
        """Whether every iterate lies in a bounded set: a projection that bounds its output
        (:attr:`~sqnopt.interfaces.Projection.bounds_iterate`) and no unregularised intercept
        (which no projection constrains). The objective is then bounded too, and a value far
        above ``F(w_0)`` is an excursion the method allows -- Pegasos' steps ``1/(lam t)`` put
        the first iterates on the ball of radius ``1/sqrt(lam)``, with objectives up to 50
        times ``F(w_0)`` on a9a at ``lam = 1e-4`` before they fall below it -- not a
        divergence: the monitor watches only for non-finite values."""
        return (self.projection is not None and self.projection.bounds_iterate
                and self.fit_intercept is not True)

    def _diverged(self, state: SolverState, what: str) -> SolveResult:
        """End the solve with ``Status.DIVERGED``: restore the best iterate the monitor saw,
        warn with the diagnostic, and return the result."""
        state.sync()
        c = state.counters
        ms = state.monitor
        with np.errstate(all="ignore"):
            # the scaled loop keeps no direction vector (its steps are along the batch rows)
            direction = state.buffers.get("direction")
            dnorm = 0.0 if direction is None else float(np.linalg.norm(direction))
            wnorm = float(np.linalg.norm(state.output_iterate()))
        step = self._step_at(state)
        if ms.w_best is not None:
            state.w[:] = ms.w_best
            if state.w_avg is not None:
                state.w_avg[:] = ms.w_best
            state.sync_mark = None
        state.diverged = True
        with np.errstate(all="ignore"):
            fun = float(state.objective.value(state.w))
        advice = self._divergence_advice()
        msg = (f"sqnopt diverged at iteration {c.t} ({c.n_samples} samples processed): {what} "
               f"(step {step:.3g}, |direction| = {dnorm:.3g}, |w| = {wnorm:.3g}). Returned the "
               f"best iterate the monitor saw, from iteration {ms.best_iteration} "
               f"(F = {fun:.6g}). {advice}")
        warnings.warn(msg, DivergenceWarning, stacklevel=4)
        if self.history_every is not None:
            state.history.append(c.t, c.n_samples, state.effective_passes(), state.elapsed, fun,
                                 math.nan)
        return self._result(state, Status.DIVERGED, msg, fun)

    def _divergence_advice(self) -> str:
        """What to change after a divergence, from the components' declared properties."""
        if self.step.line_search:
            fix = ("The step is a line search, so the direction itself is at fault: use a "
                   "safeguarded curvature model (e.g. LBFGS(min_curvature=1e-3)) or larger "
                   "batches")
        elif self.curvature.needs_secant_pair or self.curvature.needs_curvature_batch:
            fix = ("Likely cause: the step is too large for the curvature model's directions. "
                   "Fix: a line search (step='armijo') with growing batches, a smaller step "
                   "(eps0), or a regularized/safeguarded curvature model (RegularizedBFGS, "
                   "on_bad_pair='damp')")
        else:
            fix = ("Likely cause: the step is too large for the data's scale. Fix: a smaller "
                   "step (eps0), step='auto' in the estimators, or rescaled features")
        return fix + "."

    def _line_search_failure(self, state: SolverState) -> tuple[Status, str, float]:
        """Status of a failed line search: ``PRECISION`` (success) when the batch was the whole
        data set and the decrease the first trial predicted, ``eps0 g'd``, is below
        ``sqrt(machine epsilon) |F|`` -- the iterate is then a minimiser to working precision,
        ``(F - F*) / |F|`` of that order or less -- else ``LINE_SEARCH_FAILED``."""
        c = state.counters
        g = state.buffers["grad"]
        d = state.buffers["direction"]
        size = int(state.schedule.batch_size(c.t + 1))
        full = state.sampler.whole_at_n and size >= state.data.n_samples
        f = float(c.last_loss)
        with np.errstate(all="ignore"):     # a diagnostic: huge entries may overflow
            gnorm = float(np.max(np.abs(g)))
            predicted = self._step_at(state) * float(np.dot(g, d))
        if full and math.isfinite(predicted) and abs(predicted) <= _PRECISION * max(abs(f), 1e-300):
            return Status.PRECISION, (
                f"converged to working precision at iteration {c.t}: the line search cannot "
                f"resolve the predicted decrease {predicted:.3g} of F = {f:.10g} (gradient norm "
                f"{gnorm:.3g})"), gnorm
        return Status.LINE_SEARCH_FAILED, (
            f"the line search of {self.step.describe()} accepted no step at iteration {c.t}: no "
            f"trial decreased the batch objective enough (predicted decrease {predicted:.3g}, "
            f"gradient norm {gnorm:.3g}), or the direction was not a descent direction "
            "(g'd <= 0). The iterate is the last accepted one. Try a larger max_backtracks, a "
            "smaller eps0, larger batches or a safeguarded curvature model."), (
            gnorm if full else math.nan)

    def _next_event(self, t: int, iter_stop: int | None) -> int:
        nxt = (t // self.report_every + 1) * self.report_every
        h = self.history_every
        if isinstance(h, (int, np.integer)):
            nxt = min(nxt, (t // int(h) + 1) * int(h))
        elif h is not None:
            later = [int(p) for p in h if int(p) > t]
            if later:
                nxt = min(nxt, min(later))
        if iter_stop is not None:
            nxt = min(nxt, iter_stop)
        return max(nxt, t + 1)

    def _is_history_point(self, t: int) -> bool:
        h = self.history_every
        if isinstance(h, (int, np.integer)):
            return t % int(h) == 0
        return h is not None and t in {int(p) for p in h}

    def _evaluate(self, state: SolverState, *, with_grad: bool = False) -> tuple[float, float]:
        """``F`` (and ``||grad F||`` if asked) at the output iterate; may be non-finite."""
        tic = time.perf_counter()
        w = state.output_iterate()
        gnorm = math.nan
        if not with_grad and w is state.w:
            # the loop's full-batch evaluation at this iterate, when it made one (no pass here)
            known = getattr(state.loop, "known_objective", None)
            fval = math.nan if known is None else float(known(state.objective))
            if math.isfinite(fval):
                state.eval_time += time.perf_counter() - tic
                return fval, gnorm
        if with_grad:
            buf = np.empty_like(w)
            fval = float(state.objective.full_gradient(w, buf))
            gnorm = float(np.max(np.abs(buf)))
        else:
            fval = float(state.objective.value(w))
        state.eval_time += time.perf_counter() - tic
        return fval, gnorm

    def _record(self, state: SolverState) -> float:
        fval, gnorm = self._evaluate(state, with_grad=self.record_grad_norm)
        c = state.counters
        state.history.append(c.t, c.n_samples, state.effective_passes(), state.elapsed, fval, gnorm)
        return fval

    def _call_callbacks(self, state: SolverState, fval: float | None) -> bool:
        def iterate() -> FloatArray:
            w = state.output_iterate().view()
            w.setflags(write=False)
            return w

        c = state.counters
        info = IterationInfo(iteration=c.t, n_samples=c.n_samples, time=state.elapsed,
                             objective=fval, step=c.last_step, minibatch_objective=c.last_loss,
                             iterate=iterate)
        stop = False
        for cb in self.callbacks:
            try:
                stop = bool(cb(info)) or stop
            except StopIteration:
                stop = True
        return stop

    @staticmethod
    def _step_at(state: SolverState) -> float:
        try:
            return float(state.step.step_size(state.t))
        except Exception:  # pragma: no cover - diagnostics only
            return math.nan

    def _result(self, state: SolverState, status: Status | None, message: str,
                fun: float | None, grad_norm: float = math.nan) -> SolveResult:
        """The frozen result of ``state``; ``fun=None``: ``F`` at the result's iterate,
        computed when the result's ``fun`` is first read (:class:`SolveResult`)."""
        c = state.counters
        h = state.history
        history = History(
            iteration=np.asarray(h.iteration, dtype=np.int64),
            samples=np.asarray(h.samples, dtype=np.int64),
            effective_passes=np.asarray(h.effective_passes, dtype=np.float64),
            time=np.asarray(h.time, dtype=np.float64),
            objective=np.asarray(h.objective, dtype=np.float64),
            grad_norm=np.asarray(h.grad_norm, dtype=np.float64),
        ) if h.iteration else History.empty()
        components = {"objective": self.objective.describe(),
                      "gradient": self.gradient.describe(),
                      "curvature": self.curvature.describe(),
                      "schedule": self.schedule.describe(), "step": self.step.describe()}
        if self.projection is not None:
            components["projection"] = self.projection.describe()
        w = state.output_iterate()
        if state.private and w.base is None:
            state.private = False   # handed over once: the state is not run again by anyone
        else:
            w = w.copy()
        w.setflags(write=False)
        value: float | PendingObjective = fun if fun is not None else \
            PendingObjective(functools.partial(_objective_value, state.objective, w))
        return SolveResult(
            w=w, n_features=state.data.n_features - self._constant_column,
            n_blocks=state.problem.n_blocks, fit_intercept=bool(self.fit_intercept),
            classes=state.data.classes,
            fun=cast(float, value),   # a pending value is computed on the first read
            status=status or Status.CALLBACK, message=message, n_iter=c.t, n_samples=c.n_samples,
            n_curvature_samples=c.n_curvature_samples, n_secant_samples=c.n_secant_samples,
            n_reused_samples=c.n_reused_samples, n_search_samples=c.n_search_samples,
            n_estimator_samples=c.n_estimator_samples,
            n_grad_evals=c.n_grad_evals,
            n_pairs_accepted=c.n_pairs_accepted, n_pairs_skipped=c.n_pairs_skipped,
            n_resets=c.n_resets, n_train=state.data.n_samples, wall_time=state.elapsed,
            eval_time=state.eval_time, compiled=state.compiled, path=state.path,
            path_reason=state.path_reason, history=history,
            components=components, grad_norm=grad_norm,
            progressive_loss=(c.prog_loss / c.prog_weight if c.prog_weight > 0 else math.nan),
            progressive_weight=float(c.prog_weight),
            memory_bytes=int(self.curvature.memory_bytes(state.problem)
                             + self.gradient.memory_bytes(state.problem)))


def _objective_value(objective: Any, w: FloatArray) -> float:
    """``F(w)`` of a finished run's result (may be non-finite)."""
    with np.errstate(all="ignore"):
        return float(objective.value(w))


def _values_per_sample(X: Any) -> float:
    """Stored values per row of the design matrix (the work of one sample's dot product)."""
    return float(X.nnz / max(X.shape[0], 1)) if sp.issparse(X) else float(X.shape[1])
