"""The Python iteration loop: the same iteration as :mod:`sqnopt.solver._loop`, for solves with
at least one pure-Python kernel. Both loops do the same floating-point operations in the same
order, so with the same kernels they produce bit-identical iterates.

Like the compiled driver, it runs either the dense iterate (``_run``: ``w`` is the loop's own
buffer and every kernel works on it) or an iterate representation (``_run_iterate``, a loop
built by :meth:`PythonLoop.with_iterate` with an
:class:`~sqnopt.interfaces.IterateKernelLike`, the Python twin of
:class:`~sqnopt.solver._iterate.IterateKernel`): the batch, the step ``eps_t = step(t)``, one
``first_order`` call of the representation (gradient, direction, update, ball projection,
average), the record and the stops are the stages of the compiled ``_run_iterate``, with one
batch drawn per iteration (no lookahead: it only hints memory, so the iterates and the
sampler's position are those of the compiled loop). The kernel expansion with a kernel given
as a Python callable (:mod:`sqnopt.kernel._expansion`) runs on this path.
"""

from __future__ import annotations


import math
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray

from sqnopt.checkpoint import CheckpointError, state_array, state_value
from sqnopt.interfaces import (
    CURVATURE_ERROR,
    ITERATE_NONFINITE_LOSS,
    ITERATE_STEPPED,
    IterateKernelLike,
    PAIR_ACCEPTED,
    PAIR_RESET,
    PAIR_SKIPPED,
    CurvatureKernelLike,
    GradientKernelLike,
    LineSearchKernelLike,
    PointStepKernelLike,
    ObjectiveKernelLike,
    ProjectionKernelLike,
    ScheduleKernelLike,
    StepKernelLike,
)
from sqnopt.solver._loop import (
    EXIT_CODES,
    Counters,
    generic_loop_state,
    restore_generic_loop_state,
)
from sqnopt.solver._sampler import Sampler

FloatArray = NDArray[np.float64]
IndexArray = NDArray[np.intp]

# Exit codes: the compiled loops' (enum in sqnopt/solver/_loop.pxd), one source of values.
LOOP_DONE = EXIT_CODES["LOOP_DONE"]
LOOP_MAX_SAMPLES = EXIT_CODES["LOOP_MAX_SAMPLES"]
LOOP_NONFINITE_LOSS = EXIT_CODES["LOOP_NONFINITE_LOSS"]
LOOP_NONFINITE_ITERATE = EXIT_CODES["LOOP_NONFINITE_ITERATE"]
LOOP_CURVATURE_ERROR = EXIT_CODES["LOOP_CURVATURE_ERROR"]
LOOP_EXHAUSTED = EXIT_CODES["LOOP_EXHAUSTED"]
LOOP_LINE_SEARCH_FAILED = EXIT_CODES["LOOP_LINE_SEARCH_FAILED"]
LOOP_GTOL = EXIT_CODES["LOOP_GTOL"]
LOOP_FTOL = EXIT_CODES["LOOP_FTOL"]



def _count_pair(code: int, c: Counters, *, unknown_fails: bool) -> bool:
    """Count a curvature pair's outcome (``PAIR_ACCEPTED`` / ``PAIR_SKIPPED`` / ``PAIR_RESET``);
    True when the model failed: ``CURVATURE_ERROR``, or, with ``unknown_fails``, any other code
    (``update_pair`` returns one of the four; ``observe_batch`` may also say "no pair")."""
    if code == PAIR_ACCEPTED:
        c.n_pairs_accepted += 1
    elif code == PAIR_SKIPPED:
        c.n_pairs_skipped += 1
    elif code == PAIR_RESET:
        c.n_resets += 1
    else:
        return code == CURVATURE_ERROR or unknown_fails
    return False

class PythonLoop:
    """Runs the driver iteration calling the kernels' Python-level methods (declarations as
    :class:`sqnopt.solver._loop.CompiledLoop`'s). The constructor builds the driver with the
    dense iterate; :meth:`with_iterate` builds it with an iterate representation."""

    iterate: IterateKernelLike | None = None
    # the representation path's own fields (set by ``with_iterate``)
    radius: float = 0.0                     # the ball's radius (0: no projection)
    pending: list[IndexArray | None]        # batches restored from a checkpoint, not run yet
    last_t: int = 0                         # the counters where the last run left them
    last_samples: int = 0
    last_n_avg: int = 0

    @property
    def loop_kind(self) -> str:
        """The ``"loop"`` entry of the checkpoint state: ``"generic"`` (dense iterate) or the
        representation's ``kind``."""
        return "generic" if self.iterate is None else self.iterate.kind

    @property
    def tests_full_batch(self) -> bool:
        """The dense path tests ``gtol`` / ``ftol`` on full-batch gradients; a representation
        has no dense gradient."""
        return self.iterate is None

    @property
    def lazy_iterate(self) -> bool:
        """With a representation, ``w`` is written only by :meth:`sync`."""
        return self.iterate is not None

    def sync(self) -> None:
        """Dense path: nothing to write (``w`` and ``w_avg`` are the loop's own buffers, always
        current); with a representation, its ``sync``."""
        if self.iterate is not None:
            self.iterate.sync(self.counters.n_avg)

    @classmethod
    def with_iterate(cls, objective: ObjectiveKernelLike, iterate: IterateKernelLike,
                     schedule: ScheduleKernelLike, step: StepKernelLike,
                     projection: ProjectionKernelLike | None, sampler: Sampler,
                     counters: Counters, *, average: bool = False,
                     avg_start: int = 0) -> PythonLoop:
        """The driver running its iterations on ``iterate`` (the compiled
        ``CompiledLoop._iterate_setup``): ``schedule`` gives ``|B_t|``, ``step`` ``eps_t`` (a
        function of ``t``: no line search), ``projection`` none or a Euclidean ball (one that
        declares ``ball_radius > 0``)."""
        if iterate.dense_iterate and iterate.n_params != objective.n_params:
            raise ValueError(f"iterate representation has {iterate.n_params} parameters, "
                             f"expected {objective.n_params}")
        if bool(getattr(step, "line_search", False)):
            raise ValueError("a line search needs the dense iterate (it evaluates gradients at "
                             "trial points)")
        if bool(getattr(step, "uses_point", False)):
            raise ValueError("a step rule that uses the point needs the dense iterate (it reads "
                             "the gradient and the direction)")
        radius = float(getattr(projection, "ball_radius", 0.0)) if projection is not None else 0.0
        if projection is not None and not radius > 0:
            raise ValueError("an iterate representation applies no projection or a Euclidean "
                             "ball (a projection that declares ball_radius) only")
        loop = cls.__new__(cls)
        loop.obj = objective
        loop.iterate = iterate
        loop.sched = schedule
        loop.step = step
        loop.proj = projection
        loop.radius = radius
        loop.sampler = sampler
        loop.counters = counters
        loop.average = average
        loop.avg_start = avg_start
        loop.pending = []
        loop._at_counters()
        return loop

    def _at_counters(self) -> None:
        """No batch pending; the loop stands where the counters say."""
        c = self.counters
        self.last_t, self.last_samples, self.last_n_avg = c.t, c.n_samples, c.n_avg

    def __init__(self, objective: ObjectiveKernelLike, curvature: CurvatureKernelLike,
                 schedule: ScheduleKernelLike, curvature_schedule: ScheduleKernelLike | None,
                 step: StepKernelLike, projection: ProjectionKernelLike | None, sampler: Sampler,
                 w: FloatArray, w_next: FloatArray, grad: FloatArray, grad_next: FloatArray,
                 direction: FloatArray, v: FloatArray, r: FloatArray, w_avg: FloatArray | None,
                 batch: IndexArray, curvature_batch: IndexArray, counters: Counters,
                 average: bool, avg_start: int,
                 gradient: GradientKernelLike | None = None, *,
                 grad_weight: FloatArray | None = None) -> None:
        if curvature.needs_curvature_batch and curvature_schedule is None:
            raise ValueError("the curvature model needs a curvature batch schedule")
        # a kernel that makes composite steps (``composite_step``): no direction, the kernel
        # takes w_t, the gradient and the step
        self.composite = bool(getattr(curvature, "composite_step", False))
        if self.composite and (projection is not None
                               or bool(getattr(step, "line_search", False))):
            raise ValueError("a curvature kernel that makes composite steps takes no projection "
                             "and no line search")
        self.obj = objective
        self.est = gradient
        self.plain_est = gradient is None or bool(gradient.plain)
        # capabilities beyond ``plain`` (see sqnopt/gradients/_base.pxd)
        self.batch_est = self.plain_est or bool(getattr(gradient, "batch_gradient", False))
        self.sizing_est = gradient is not None and bool(getattr(gradient, "sizes_batches", False))
        self.pair_est = gradient is not None and bool(getattr(gradient, "overlap_pairs", False))
        self.gp = np.zeros_like(w)
        self.curv = curvature
        self.sched = schedule
        self.csched = curvature_schedule
        self.step = step
        self.proj = projection
        self.sampler = sampler
        self.w, self.w_next, self.g, self.g_next = w, w_next, grad, grad_next
        self.d, self.v, self.r, self.w_avg = direction, v, r, w_avg
        self.batch, self.cbatch = batch, curvature_batch
        self.counters = counters
        self.average = average
        self.avg_start = avg_start
        # The secant gradient kept for reuse (as in the compiled loop): s(w, prev_batch) is in
        # g_next when have_next; w_saved is checked at the start of the next run.
        self.search = bool(getattr(step, "line_search", False))
        self.point_step = bool(getattr(step, "uses_point", False))
        self.prev_batch = np.zeros(
            len(batch) if curvature.needs_secant_pair or self.search else 1, np.intp)
        self.w_saved = np.zeros_like(w)
        self.prev_size = 0
        self.have_next = False
        self.next_plain = False
        self.loss_next = 0.0
        self.gtol = 0.0
        self.ftol = 0.0
        self.prev_full_loss = float("nan")
        # the progressive validation loss: the gradient weights g_i of the data (None: 1) and
        # the objective's regulariser alone (NaN without one, see ObjectiveKernelLike)
        # (unit weights sum to the batch size exactly: no per-iteration sum for them)
        self.grad_weight = (None if grad_weight is None or bool(np.all(grad_weight == 1.0))
                            else grad_weight)
        self.reg_value = getattr(objective, "reg_value", None)

    def _loss_part(self, loss: float, w: FloatArray) -> float:
        """``f_B(w) - lam/2 ||w_reg||^2`` (the compiled loop's arithmetic)."""
        if float(self.obj.lam) == 0.0:
            return loss - 0.0
        if self.reg_value is None:
            return float("nan")
        return loss - float(self.reg_value(w))

    def _batch_weight(self, batch: IndexArray) -> float:
        """``sum_i g_i`` over the batch, in order (as the compiled loop: ``cumsum`` adds
        sequentially from the first)."""
        if self.grad_weight is None:
            return float(batch.shape[0])
        return float(np.cumsum(self.grad_weight[batch])[-1])

    def get_state(self, *, data_state: bool = True) -> dict[str, Any]:
        """What the loop carries from one ``run`` to the next, in the compiled loop's format:
        :func:`sqnopt.solver._loop.generic_loop_state` on the dense path, the representation's
        state with the driver's position (``CompiledLoop.get_state``) with a representation."""
        if self.iterate is not None:
            return self._iterate_state(self.iterate, data_state)
        if not data_state:
            return {"loop": "generic"}
        return generic_loop_state(self.have_next, self.prev_size, self.prev_batch,
                                  self.loss_next, self.g_next, self.w_saved, self.prev_full_loss,
                                  self.w, self.next_plain)

    def set_state(self, state: dict[str, Any], *, new_data: bool = False) -> None:
        """Restore what :meth:`get_state` returned (on new data: nothing to restore on the
        dense path; a representation is kept as the compiled loop keeps it)."""
        if self.iterate is not None:
            self._set_iterate_state(self.iterate, state, new_data)
            return
        w, obj = self.w, self.obj
        got = restore_generic_loop_state(
            state, new_data, self.prev_batch, self.g_next, self.w_saved, w,
            lambda b, out: float(obj.gradient(w, b, out)), self, "the Python loop")
        if got is not None:
            (self.prev_size, self.have_next, self.loss_next, self.prev_full_loss,
             self.next_plain) = got

    def run(self, n_iter: int, max_samples: int) -> int:
        """Run up to ``n_iter`` iterations; stop before an iteration once ``max_samples`` (if
        > 0) samples were processed. Returns an exit code (``LOOP_*``)."""
        if self.iterate is not None:
            c = self.counters
            if (c.t, c.n_samples, c.n_avg) != (self.last_t, self.last_samples, self.last_n_avg):
                self.reload()   # the state was restored or edited from outside
            status = self._run_iterate(self.iterate, n_iter, max_samples)
            self._at_counters()
            return status
        if not np.array_equal(self.w, self.w_saved):
            self.have_next = False      # w was changed between runs
            self.prev_full_loss = float("nan")
        status = self._run(n_iter, max_samples)
        self.w_saved[:] = self.w
        return status

    def _run(self, n_iter: int, max_samples: int) -> int:
        c = self.counters
        w, w_next, g, g_next, d = self.w, self.w_next, self.g, self.g_next, self.d
        # secant pairs: formed here (step 6), or supplied by an ``overlap_pairs`` estimator
        est_pairs = bool(self.curv.needs_secant_pair) and self.pair_est
        secant = bool(self.curv.needs_secant_pair) and not self.pair_est
        search = self.search
        keep_next = (secant or search) and self.batch_est
        curvature_batch = bool(self.curv.needs_curvature_batch)
        test_full = self.sampler.whole_at_n and (self.gtol > 0.0 or self.ftol > 0.0)
        want_plain = secant or search or test_full
        for _ in range(n_iter):
            if max_samples > 0 and c.n_samples >= max_samples:
                return LOOP_MAX_SAMPLES
            size = int(self.sched.batch_size(c.t + 1))
            if self.sizing_est:
                assert self.est is not None
                size = min(max(int(cast(Any, self.est).batch_size(size)), 1),
                           self.sampler.n_samples)
            try:
                self.batch[:size] = self.sampler.draw(size)
            except StopIteration:
                return LOOP_EXHAUSTED
            if self.pair_est:
                self.batch[:size] = cast(Any, self.est).arrange(self.batch[:size])
            batch = self.batch[:size]
            if (self.have_next and size == self.prev_size
                    and np.array_equal(batch, self.prev_batch[:size])):
                g[:] = g_next           # s(w_t, B_t), evaluated last iteration
                loss = self.loss_next
                c.n_reused_samples += size
                if self.pair_est:
                    cast(Any, self.est).reused(w, g, size)
            elif self.plain_est:
                loss = float(self.obj.gradient(w, batch, g))
                c.n_grad_evals += 1
            else:
                assert self.est is not None
                loss, extra = self.est.estimate(self.obj, w, batch, g,
                                                self.gp if want_plain and not self.batch_est
                                                else None)
                loss = float(loss)
                c.n_estimator_samples += int(extra)
                c.n_grad_evals += 1
            self.have_next = False
            gp = g if self.batch_est else self.gp
            if not np.isfinite(loss):
                return LOOP_NONFINITE_LOSS
            c.loss_sum += loss
            c.n_loss += 1
            part = self._loss_part(loss, w)
            if test_full and size >= self.sampler.n_samples:
                gnorm = float(np.max(np.abs(gp)))
                c.last_gnorm = gnorm
                prev = self.prev_full_loss
                if gnorm <= self.gtol or (self.ftol > 0.0 and 0.0 <= prev - loss <= self.ftol * max(
                        abs(prev), abs(loss), 1.0)):
                    c.n_samples += size         # evaluated at w_t; no step taken
                    c.last_loss = loss
                    return LOOP_GTOL if gnorm <= self.gtol else LOOP_FTOL
                self.prev_full_loss = loss
            if curvature_batch:
                assert self.csched is not None
                csize = int(self.csched.batch_size(c.t + 1))
                try:
                    self.cbatch[:csize] = self.sampler.draw(csize)
                except StopIteration:
                    return LOOP_EXHAUSTED
                c.n_curvature_samples += csize
                code = self.curv.observe_batch(self.obj, w, self.cbatch[:csize])
                if _count_pair(code, c, unknown_fails=False):   # as the compiled loop
                    return LOOP_CURVATURE_ERROR
            if est_pairs and cast(Any, self.est).pair(w, self.v, self.r):
                if _count_pair(int(self.curv.update_pair(self.v, self.r)), c, unknown_fails=True):
                    return LOOP_CURVATURE_ERROR
            if self.composite:
                d[:] = g
            else:
                self.curv.direction(g, d)
            extra = int(getattr(self.curv, "extra_samples", 0) or 0)
            if extra:
                c.n_curvature_samples += extra
                setattr(self.curv, "extra_samples", 0)
            if search:               # the Solver rules out a projection with a line search
                eps, f_next, evals = cast(LineSearchKernelLike, self.step).search(
                    self.obj, w, batch, loss, gp, d, w_next, g_next)
                c.n_grad_evals += evals
                c.n_search_samples += evals * size
                if not np.isfinite(eps):
                    c.last_loss = loss          # f_B(w_t): the monitor's precision test reads it
                    return LOOP_LINE_SEARCH_FAILED
                self.loss_next = float(f_next)
            else:
                eps = float(cast(PointStepKernelLike, self.step).step_at(c.t, loss, w, gp, d)
                            if self.point_step else self.step.step_size(c.t))
                if self.composite:
                    if int(cast(Any, self.curv).composite_update(w, g, eps, w_next)) != 0:
                        return LOOP_NONFINITE_ITERATE
                else:
                    np.subtract(w, eps * d, out=w_next)
                    if self.proj is not None:
                        self.proj.project(w_next)
                    if not np.isfinite(w_next).all():
                        return LOOP_NONFINITE_ITERATE
            if secant and not search:
                self.loss_next = float(self.obj.gradient(w_next, batch, g_next))
                c.n_grad_evals += 1
                c.n_secant_samples += size
            if secant:
                np.subtract(w_next, w, out=self.v)
                np.subtract(g_next, gp, out=self.r)
                if _count_pair(int(self.curv.update_pair(self.v, self.r)), c, unknown_fails=True):
                    return LOOP_CURVATURE_ERROR
            w[:] = w_next
            if keep_next:
                self.prev_batch[:size] = batch
                self.prev_size = size
                self.have_next = True
                # g_next is the plain batch gradient at the new iterate (a checkpoint leaves it
                # out and a restore recomputes it) unless a step rule formed it otherwise
                self.next_plain = not search or bool(getattr(self.step, "plain_gradient", False))
            c.t += 1
            c.n_samples += size
            c.last_step = eps
            c.last_loss = loss
            c.prog_loss += part * size
            c.prog_weight += self._batch_weight(batch)
            if self.average and c.t > self.avg_start:
                assert self.w_avg is not None
                c.n_avg += 1
                self.w_avg += (w - self.w_avg) / c.n_avg
        return LOOP_DONE



    # ---- the iterate-representation path ---------------------------------------------------

    def reload(self) -> None:
        """Rebuild the representation from ``w`` and the counters and drop the pending batches
        (the dense path reads ``w`` itself: nothing to do)."""
        if self.iterate is not None:
            self.iterate.reload(self.counters.n_avg)
            self.pending = []
            self._at_counters()

    def _iterate_state(self, iterate: IterateKernelLike, data_state: bool) -> dict[str, Any]:
        """The compiled loop's format (``CompiledLoop.get_state``): the representation's state,
        the counters as the loop left them and, with ``data_state``, the batches drawn ahead
        (only those restored from a compiled loop's checkpoint and not run yet)."""
        state = iterate.get_state()
        state.update(last_t=int(self.last_t), last_samples=int(self.last_samples),
                     last_n_avg=int(self.last_n_avg))
        if data_state:
            rows = [b for b in self.pending if b is not None]
            drawn_upto = int(self.last_t) + len(rows)
            state.update(drawn_upto=drawn_upto,
                         exhausted_at=drawn_upto if len(rows) < len(self.pending) else -1,
                         ahead_samples=int(sum(len(b) for b in rows)),
                         pending_sizes=np.array([len(b) for b in rows], dtype=np.intp),
                         pending=(np.concatenate(rows).astype(np.intp) if rows
                                  else np.zeros(0, np.intp)))
        return state

    def _set_iterate_state(self, iterate: IterateKernelLike, state: dict[str, Any],
                           new_data: bool) -> None:
        iterate.check_state(state)
        last_t = state_value(state, "last_t", int, self, lo=0)
        last_n_avg = state_value(state, "last_n_avg", int, self, lo=0)
        if new_data and (last_t != self.counters.t or last_n_avg != self.counters.n_avg):
            self.reload()
            return
        iterate.set_state(state)
        self.pending = []
        if new_data:
            self._at_counters()
            return
        sizes = state_array(state, "pending_sizes", self, np.intp, lo=1)
        pending = state_array(state, "pending", self, np.intp, rows=True)
        exhausted_at = state_value(state, "exhausted_at", int, self, lo=-1)
        last_samples = state_value(state, "last_samples", int, self, lo=0)
        if (int(sizes.sum()) != pending.shape[0]
                or state_value(state, "drawn_upto", int, self) != last_t + sizes.shape[0]):
            raise CheckpointError(f"{type(self).__name__}: the checkpointed batches drawn "
                                  "ahead ('pending', 'pending_sizes', 'drawn_upto') do not "
                                  "agree or do not fit this data")
        off = 0
        for size in sizes:
            self.pending.append(np.array(pending[off:off + int(size)], dtype=np.intp))
            off += int(size)
        if exhausted_at == last_t + sizes.shape[0]:
            self.pending.append(None)       # the sampler ran out at that iteration
        self.last_t = last_t
        self.last_samples = last_samples
        self.last_n_avg = last_n_avg

    def _run_iterate(self, iterate: IterateKernelLike, n_iter: int, max_samples: int) -> int:
        """The iteration on an iterate representation: the stages and record of the compiled
        ``CompiledLoop._run_iterate`` (see the module docstring)."""
        c = self.counters
        avg_after = self.avg_start if self.average else None
        status = LOOP_DONE
        # the record in locals, stored once at the end (as the compiled loop's LoopCounts)
        t, n_samples, n_grad_evals, n_loss, n_avg_done = (c.t, c.n_samples, c.n_grad_evals,
                                                          c.n_loss, c.n_avg)
        loss_sum, last_step, last_loss = c.loss_sum, c.last_step, c.last_loss
        prog_loss, prog_weight = c.prog_loss, c.prog_weight
        sampler, sched, step, radius = self.sampler, self.sched, self.step, self.radius
        try:
            for _ in range(n_iter):
                if max_samples > 0 and n_samples >= max_samples:
                    status = LOOP_MAX_SAMPLES
                    break
                # 1. the batch
                if self.pending:
                    batch = self.pending.pop(0)
                    if batch is None:
                        self.pending.append(None)
                        status = LOOP_EXHAUSTED
                        break
                else:
                    try:
                        batch = np.asarray(sampler.draw(int(sched.batch_size(t + 1))),
                                           dtype=np.intp)
                    except StopIteration:
                        status = LOOP_EXHAUSTED
                        break
                # 4. the step: eps_t, a function of t (so taken before the gradient)
                eps = float(step.step_size(t))
                # 2.-5. the gradient in coefficient form, d = g, the update with the ball
                # projection and step 7's average
                n_avg = n_avg_done + 1 if avg_after is not None and t >= avg_after else 0
                code, loss = iterate.first_order(batch, eps, radius, n_avg)
                n_grad_evals += 1
                if code == ITERATE_NONFINITE_LOSS:
                    status = LOOP_NONFINITE_LOSS
                    break
                loss_sum += loss
                n_loss += 1
                if code != ITERATE_STEPPED:
                    status = LOOP_NONFINITE_ITERATE
                    break
                # 7. record
                t += 1
                n_samples += int(batch.shape[0])
                last_step = eps
                last_loss = loss
                prog_loss += float(getattr(iterate, "batch_loss", math.nan))
                prog_weight += float(getattr(iterate, "batch_weight", 0.0))
                if n_avg:
                    n_avg_done = n_avg
        finally:
            c.t, c.n_samples, c.n_grad_evals, c.n_loss, c.n_avg = (t, n_samples, n_grad_evals,
                                                                   n_loss, n_avg_done)
            c.loss_sum, c.last_step, c.last_loss = loss_sum, last_step, last_loss
            c.prog_loss, c.prog_weight = prog_loss, prog_weight
        c.n_estimator_samples += int(iterate.extra_samples)
        iterate.extra_samples = 0
        return status
