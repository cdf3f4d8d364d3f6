"""The large-data regime of a fit: the step race and early stopping on held-out rows.

When the data are large or arrive in chunks, :func:`sqnopt.recipes.streaming` composes
per-example AdaGrad whose constant step is raced, and the fit stops on a held-out split
instead of solving the training objective to ``tol`` (Bottou & Bousquet, *The Tradeoffs of
Large Scale Learning*, NIPS 2008). This module holds the two pieces the
:class:`~sqnopt.training.Trainer` runs around its solvers:

* :class:`StepRace` -- successive halving (Jamieson & Talwalkar, AISTATS 2016) over the
  recipe's candidate steps: every candidate learns from the same examples in the same order;
  after each segment the half with the lowest *progressive validation* loss on that segment
  goes on (the loss of each example at the iterate before the update that uses it: Blum,
  Kalai & Langford, COLT 1999 -- an unbiased estimate of the online learner's held-out loss,
  free to compute), the segments doubling, until one candidate is left; it continues the fit
  from where it is, so the race costs only the losers' work on the first few thousand rows.
* :class:`StreamHoldout` and :class:`HeldOut` -- the held-out rows (those of the data, in
  memory or a stream, that a seeded hash of their position selects: the same rows on every pass
  and for any chunking) and the mean loss on them, the quantity early stopping watches (``early_stopping``, ``validation_fraction``,
  ``n_iter_no_change`` as scikit-learn's ``SGDClassifier`` names them).
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from sqnopt.solver import DivergenceWarning, Solver, SolverState
from sqnopt.interfaces import StepRule
from sqnopt.steps import Constant

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.intp]

__all__ = ["ChunkRows", "HELD_OUT_TOL", "HeldOut", "IN_MEMORY_CHUNK", "MAX_HELD_OUT", "StepRace",
           "StreamHoldout", "progressive"]

#: A stream holds out at most this many rows (kept in memory): the held-out loss of a
#: logistic model is then known to a few tenths of a percent, and the difference between two
#: iterates on the same rows far better.
MAX_HELD_OUT = 131_072
#: The smallest relative improvement of the held-out (or progressive) loss that counts as
#: progress for the stopping test of a fit over chunks, whatever ``tol`` asks below it: the
#: held-out loss is a mean over at most ``MAX_HELD_OUT`` rows, whose standard error is about
#: ``1 / sqrt(MAX_HELD_OUT)``, 0.3 %, of the loss when the rows' losses scatter as much as their
#: mean. Finer gains are real (two iterates compared on the same rows), but smaller than what
#: the held-out loss knows of the model's loss on new data, and the passes spent on them are
#: what a large-data fit cannot afford. scikit-learn's ``SGDClassifier`` stops at the same scale
#: (``tol=1e-3`` on the loss).
HELD_OUT_TOL = 1e-3

#: In-memory data in the large-data regime are trained on as a stream of consecutive chunks of
#: this many rows (the streams' default chunk size): the fit is that of a stream of the same
#: rows, the copies the held-out split makes are one chunk at a time, and each chunk's shuffled
#: rows stay within a few megabytes of memory instead of the whole matrix.
IN_MEMORY_CHUNK = 100_000


def progressive(state: SolverState) -> tuple[float, float]:
    """``(sum of the weighted losses of processed examples at the iterate before their step,
    their summed weight)``: the progressive validation loss's numerator and denominator, as
    the solver's counters keep them."""
    c = state.counters
    return float(c.prog_loss), float(c.prog_weight)


# ------------------------------------------------------------------------------------ held out
class StreamHoldout:
    """Which rows of a stream are held out: row ``i`` (its position in the stream) when a
    seeded hash of ``i`` falls below ``fraction`` and fewer than ``MAX_HELD_OUT`` earlier rows
    were picked -- the same rows on every pass of the same stream, whatever its chunks."""

    def __init__(self, fraction: float, seed: int, cap: int = MAX_HELD_OUT) -> None:
        self.threshold = np.uint64(min(int(fraction * 2.0**64), 2**64 - 1))
        self.offset = np.uint64(seed % 2**64)
        self.cap = int(cap)

    def mask(self, start: int, n_rows: int, picked_before: int) -> NDArray[np.bool_]:
        """Held-out rows among the stream's rows ``start .. start + n_rows - 1``, given that
        ``picked_before`` rows before ``start`` were held out."""
        i = np.arange(start, start + n_rows, dtype=np.uint64)
        with np.errstate(over="ignore"):
            h = (i + self.offset) * np.uint64(0x9E3779B97F4A7C15)
            h ^= h >> np.uint64(29)
            h *= np.uint64(0xBF58476D1CE4E5B9)
            h ^= h >> np.uint64(32)
        picked = h < self.threshold
        room = self.cap - picked_before
        if room <= 0:
            picked[:] = False
        elif int(picked.sum()) > room:
            picked[np.flatnonzero(picked)[room:]] = False
        return picked


class ChunkRows:
    """The training rows of the chunks of a fit over chunks (those a chunk keeps once its
    held-out rows are taken out), gathered into buffers that are used again for later chunks.

    Indexing would allocate a new matrix for every chunk of every pass, whose fresh memory the
    system must fault in and zero each time, at a cost comparable to the copy itself. Two sets
    of buffers alternate instead: the solvers are bound to the chunk in one while the next chunk
    is gathered into the other, and move to it before the first is written again. A
    sub-problem that stops training (on its held-out loss, or diverged) stays bound to its last
    chunk: :meth:`retire` then leaves both sets to whatever holds them and starts new ones. The
    rows, their order and their values are those SciPy's indexing gives, so the fit is the
    same."""

    def __init__(self) -> None:
        self._sets: list[dict[str, Any] | None] = [None, None]
        self._turn = 0

    def retire(self) -> None:
        """Gather later chunks into new buffers (the current ones may still be bound)."""
        self._sets = [None, None]

    def _buffer(self, key: tuple[Any, ...], sizes: dict[str, tuple[int, ...]],
                dtypes: dict[str, Any]) -> dict[str, Any]:
        self._turn ^= 1
        buf = self._sets[self._turn]
        if (buf is None or buf["key"] != key
                or any(buf[k].shape[0] < sizes[k][0] for k in sizes)):
            old = buf if buf is not None and buf["key"] == key else None
            buf = {"key": key}
            for k, shape in sizes.items():
                # a little room to spare: the chunks' sizes vary around their common size
                n = shape[0] if old is None else max(shape[0], int(1.125 * old[k].shape[0]))
                buf[k] = np.empty((n,) + shape[1:], dtype=dtypes[k])
            self._sets[self._turn] = buf
        return buf

    def take(self, X: Any, keep: NDArray[np.bool_]) -> Any:
        """The rows of ``X`` (a matrix :func:`sqnopt.data.check_matrix` returned) where
        ``keep`` is true, in their order, in one of the buffers."""
        from sqnopt.data._dataset import checked_csr
        from sqnopt.data._rows import copy_segments

        rows = np.flatnonzero(keep)
        k = int(rows.shape[0])
        if not sp.issparse(X):
            buf = self._buffer(("dense", X.dtype, X.shape[1]), {"X": (k, X.shape[1])},
                               {"X": X.dtype})
            out = buf["X"][:k]
            np.take(X, rows, axis=0, out=out)
            return out
        indptr = np.asarray(X.indptr)
        starts = indptr[rows].astype(np.intp)
        lengths = indptr[rows + 1].astype(np.intp) - starts
        ptr_dtype = indptr.dtype
        nnz = int(lengths.sum())
        buf = self._buffer(("csr", X.data.dtype, X.indices.dtype, ptr_dtype),
                           {"data": (nnz,), "indices": (nnz,), "indptr": (k + 1,)},
                           {"data": X.data.dtype, "indices": X.indices.dtype,
                            "indptr": ptr_dtype})
        ptr = buf["indptr"][:k + 1]
        ptr[0] = 0
        np.cumsum(lengths, out=ptr[1:], dtype=ptr_dtype)
        offsets = ptr[:-1].astype(np.intp)
        data, indices = buf["data"][:nnz], buf["indices"][:nnz]
        copy_segments(np.ascontiguousarray(X.data), data, starts, lengths, offsets)
        copy_segments(np.ascontiguousarray(X.indices), indices, starts, lengths, offsets)
        return checked_csr(data, indices, ptr, (k, int(X.shape[1])))


class HeldOut:
    """The held-out rows of one sub-problem, bound to its objective without the penalty:
    :meth:`loss` is the mean weighted loss of the rows at ``w`` (the held-out log loss of a
    logistic model)."""

    def __init__(self, solver: Solver, X: Any, y: NDArray[Any], weights: FloatArray,
                 classes: NDArray[Any]) -> None:
        objective = solver.objective
        unpenalised: Any = (dataclasses.replace(objective, lam=0.0)
                            if dataclasses.is_dataclass(objective) else objective)
        data = solver._prepare(X, y, weights, classes, validated=True)
        self.n_rows = int(X.shape[0])
        self._kernel = unpenalised.init(data)
        self._lam = float(unpenalised.lam)

    def loss(self, w: FloatArray) -> float:
        """The mean weighted loss of the held-out rows at ``w``."""
        value = float(self._kernel.value(np.ascontiguousarray(w, dtype=np.float64)))
        if self._lam:   # an objective that is not a dataclass keeps its penalty: take it off
            value -= 0.5 * self._lam * _penalty_norm(w, self._kernel)
        return value


def _penalty_norm(w: FloatArray, kernel: Any) -> float:
    reg = getattr(kernel, "regularized", None)
    v = np.asarray(w if reg is None else np.asarray(w)[np.asarray(reg, dtype=bool)])
    return float(np.dot(v, v))


# ------------------------------------------------------------------------------------ the race
@dataclasses.dataclass
class _Learner:
    step: float | None
    solver: Solver
    state: SolverState
    mark: tuple[float, float] = (0.0, 0.0)   # progressive sums at the segment's start
    divergence: warnings.WarningMessage | None = None   # the warning of its divergence

    def report_divergence(self) -> None:
        """Re-emit the divergence warning of a candidate that goes on (the race's winner)."""
        if self.divergence is not None:
            w = self.divergence
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
            self.divergence = None


class StepRace:
    """Successive halving of constant steps on progressive validation loss (module docstring).

    ``make(step)`` builds the solver of one candidate (``step=None``: the composition's own
    step, a race of one) with the same seed for all, so that they draw the same examples in
    the same order; :meth:`start` binds every candidate to the
    first data, :meth:`rebind` to the next chunk, :meth:`advance` runs the race on the rows
    left in the current data and returns how many it used; once :attr:`done`, :attr:`winner`
    is the candidate that goes on.
    """

    def __init__(self, steps: Sequence[float | None], first_segment: int,
                 make: Callable[[StepRule | None], Solver]) -> None:
        if not steps:
            raise ValueError("a step race needs at least one candidate step")
        self.steps = [None if s is None else float(s) for s in steps]
        self.segment = max(1, int(first_segment))
        self.seg_done = 0
        self.rounds: list[dict[str, Any]] = []
        self._make = make
        self.learners: list[_Learner] = []
        #: the candidates are bound to the data they will learn from next (no rebind needed)
        self.fresh = False

    @property
    def done(self) -> bool:
        return len(self.learners) == 1

    @property
    def winner(self) -> _Learner:
        if not self.done:
            raise RuntimeError("the step race has not ended")
        return self.learners[0]

    def start(self, init: Callable[[Solver], SolverState]) -> None:
        """Build every candidate and its state (``init(solver)``) on the first data."""
        for step in self.steps:
            solver = self._make(None if step is None else Constant(eps=step))
            state = init(solver)
            self.learners.append(_Learner(step, solver, state, progressive(state)))
        if len(self.learners) == 1:
            self.rounds.append({"steps": [self.steps[0]], "samples": 0, "losses": [math.nan]})

    def rebind(self, bind: Callable[[Solver, SolverState], SolverState]) -> None:
        """Move every remaining candidate to new data (``bind(solver, state)``)."""
        for ln in self.learners:
            ln.state = bind(ln.solver, ln.state)

    def advance(self, available: int) -> tuple[int, None]:
        """Race on up to ``available`` examples of the current data; returns the examples
        used (and ``None``: a candidate that diverged leaves the race at the next cut; a
        winner that diverged is reported when the trainer adopts it)."""
        used = 0
        while not self.done and used < available:
            take = min(self.segment - self.seg_done, available - used)
            for ln in self.learners:
                if ln.state.diverged:
                    continue
                # a candidate step too large for the data is expected to diverge: it leaves
                # the race at the next cut, and only a winner that diverged is reported
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always", DivergenceWarning)
                    ln.solver.run(ln.state, max_samples=take)
                for w in caught:
                    if issubclass(w.category, DivergenceWarning):
                        ln.divergence = w
                    else:
                        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
            used += take
            self.seg_done += take
            if self.seg_done >= self.segment:
                self._cut()
        return used, None

    def leader(self) -> _Learner:
        """The candidate with the lowest progressive loss over everything it has learned."""
        def score(ln: _Learner) -> float:
            total, weight = progressive(ln.state)
            value = total / weight if weight > 0 else math.inf
            return value if math.isfinite(value) and not ln.state.diverged else math.inf
        return min(self.learners, key=score)

    def checkpoint(self) -> dict[str, Any]:
        """The race as plain data: its bookkeeping and each candidate's solver checkpoint
        without the data (:meth:`sqnopt.SolverState.checkpoint`)."""
        return {"steps": list(self.steps), "segment": self.segment, "seg_done": self.seg_done,
                "rounds": list(self.rounds),
                "learners": [(ln.step, ln.mark, ln.state.checkpoint(data_state=False))
                             for ln in self.learners]}

    @classmethod
    def restore(cls, record: dict[str, Any], make: Callable[[StepRule | None], Solver],
                X: Any, y: NDArray[Any], weights: FloatArray) -> StepRace:
        """The race of :meth:`checkpoint`, its candidates continued on ``(X, y, weights)``."""
        race = cls(record["steps"], 1, make)
        race.segment = int(record["segment"])
        race.seg_done = int(record["seg_done"])
        race.rounds = list(record["rounds"])
        for step, mark, ck in record["learners"]:
            solver = make(None if step is None else Constant(eps=step))
            state = solver.restore(ck, X, y, weights, new_data=True)
            race.learners.append(_Learner(step, solver, state, tuple(mark)))
        race.fresh = True
        return race

    def _cut_to_one(self) -> None:
        """End the race now (the data ran out first): keep the best candidate by the
        progressive loss of the segment under way -- or, when no example has come since the
        last cut, by the progressive loss of everything each has learned (:meth:`leader`). One
        cut on the same scores, not several: cuts without new examples would have nothing to
        rank by."""
        if self.done:
            return
        if self.seg_done > 0:
            self._cut(keep=1)
        else:
            best = self.leader()
            self.rounds.append({"steps": [best.step], "losses": [math.nan],
                                "samples": 0})
            self.learners = [best]

    def _cut(self, keep: int | None = None) -> None:
        """End a segment: keep the better half (or ``keep`` candidates) by the segment's
        progressive loss."""
        scored = []
        for ln in self.learners:
            if ln.state.diverged:
                scored.append((math.inf, ln))
                continue
            total, weight = progressive(ln.state)
            d_total, d_weight = total - ln.mark[0], weight - ln.mark[1]
            loss = d_total / d_weight if d_weight > 0 else math.inf
            scored.append((loss if math.isfinite(loss) else math.inf, ln))
        scored.sort(key=lambda item: (item[0], item[1].step or 0.0))
        self.rounds.append({"steps": [ln.step for _, ln in scored],
                            "losses": [loss for loss, _ in scored],
                            "samples": self.seg_done})
        kept = max(1, len(scored) // 2) if keep is None else keep
        self.learners = [ln for _, ln in scored[:kept]]
        for ln in self.learners:
            ln.mark = progressive(ln.state)
        self.segment *= 2
        self.seg_done = 0
