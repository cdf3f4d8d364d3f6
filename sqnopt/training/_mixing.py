"""Iterative parameter mixing for the large-data recipe (``parameter_mixing=True``, the
default): each chunk's rows in two shards, run from the same state -- on two threads when
``n_jobs`` allows -- and averaged.

The large-data recipe (:func:`sqnopt.recipes.streaming`: per-example composite AdaGrad) is
sequential: each update reads the weights the previous one wrote, so one fit's updates cannot
be split over threads as they stand. Parameter mixing (Mann, McDonald, Mohri, Silberman &
Walker, NIPS 2009; McDonald, Hall & Mann, NAACL 2010, "iterative parameter mixing";
Zinkevich, Weimer, Smola & Li, NIPS 2010) trains one copy of the model per shard of the rows,
independently, and averages the copies. Here, for every chunk large enough (:func:`mixes`),
the state at the chunk's start runs on the first half of the chunk's rows and a copy of it on
the second half; then both become their average -- the weights and the AdaGrad accumulators
(:meth:`sqnopt.solver._adaptive_loop.AdaptiveIterate.mix`) -- and the next chunk starts from
it. The average of two updates from the same state, over half the rows each, moves half as
far as one update over all of them: in the first pass, far from the optimum, the shards run at
twice the raced step, which makes up for it to first order (without it the mixed recipe fell
well behind the sequential updates at small ``alpha``); after the first pass they run at the
raced step, and the average moves as the sequential updates would at half the step -- near the
optimum, where a smaller step settles lower, which is what held-out early stopping selects
(:func:`step_scale`; docs/report_data_parallel.md has the measurements). The copy runs on a
second thread when ``n_jobs`` resolves to two or more, else after the first half on the same
thread.

**Determinism.** The shards are fixed by the chunk (its two contiguous halves), never by the
thread count; the copy's random stream is the first shard's, set at each chunk. Every
``n_jobs`` therefore gives the same model bit for bit, and a stream gives the model an
in-memory fit of the same rows gives.

**Why two shards.** With two shards the held-out loss per pass stays near the sequential
updates'; with four (each at four times the step) it falls further behind
(``bench/parameter_mixing.py`` measures both; docs/report_data_parallel.md). So the mixing
uses two threads, whatever ``n_jobs``; the passes of a fit (held-out scores, the step
race's) use all of them.

**What it costs and gains.** With two cores the two shards' updates run at once; on one, the
mix and a second set of records add a little to each pass. The held-out loss is the
sequential updates' in the first pass and lower after it, and held-out early stopping ends on
a lower loss (``bench/parallel_passes.py``, ``bench/parameter_mixing.py`` and the scale
benchmark measure both; docs/report_data_parallel.md).
``parameter_mixing=False`` keeps the sequential updates.

**What is mixed, and what not.** The composite form of AdaGrad on the adaptive iterate (the
large-data recipe without an L1 term). The FTRL-Proximal form (the
recipe with an L1 term) keeps dual sums whose average is not this mixing, and runs its chunks
sequentially; so do chunks below the size at which the O(n_features) mixing pays
(:data:`sqnopt.recipes.MIX_MIN_ROWS`), and ``partial_fit``'s batches.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from sqnopt import recipes
from sqnopt._jobs import effective_n_jobs
from sqnopt.data._dataset import _is_checked, checked_row_range
from sqnopt.solver import SolveResult, Solver, SolverState
from sqnopt.solver._adaptive_loop import AdaptiveLoop

__all__ = ["ShardMixer", "mixes", "step_scale"]

#: The counters that add up the work of the two shards (the others say where the solve stands:
#: the last step, loss and gradient norm stay the first shard's).
_ADDITIVE = ("t", "n_samples", "n_curvature_samples", "n_secant_samples", "n_reused_samples",
             "n_search_samples", "n_estimator_samples", "n_grad_evals", "n_pairs_accepted",
             "n_pairs_skipped", "n_resets", "loss_sum", "n_loss", "prog_loss", "prog_weight")


def mixes(state: SolverState, X: Any) -> bool:
    """Whether the chunk ``X`` (rows a :func:`~sqnopt.data.check_matrix` returned) of the solve
    ``state`` runs as two mixed shards: the adaptive iterate in composite form (not
    FTRL-Proximal), and shards of at least
    :data:`~sqnopt.recipes.MIX_MIN_ROWS` rows holding together at least
    :data:`~sqnopt.recipes.MIX_MIN_VALUES_PER_PARAM` stored values per parameter -- the mixing
    reads and writes every parameter once. A function of the chunk and the solve only, never
    of ``n_jobs``."""
    if not isinstance(state.loop, AdaptiveLoop):
        return False
    if getattr(state.curvature, "ftrl_proximal", False):
        return False
    n_rows = int(X.shape[0])
    if n_rows < recipes.MIX_SHARDS * recipes.MIX_MIN_ROWS:
        return False
    values = int(X.nnz) if sp.issparse(X) else n_rows * int(X.shape[1])
    return bool(values >= recipes.MIX_MIN_VALUES_PER_PARAM * state.problem.n_params)


def step_scale(first_pass: bool, shards: int = recipes.MIX_SHARDS) -> float:
    """The factor of a shard's steps: the number of shards in the first pass -- the average
    of the shards then moves as the sequential updates would, to first order -- and 1 after
    it, where the average moves with half the sequential step's noise (the raced step is the
    best one for the first examples; near the optimum a smaller one is better)."""
    return float(shards) if first_pass else 1.0


def _scale(state: SolverState, factor: float) -> None:
    """A shard's steps: the raced step times ``factor`` (the loop built by the shard's
    ``rebind`` starts at 1)."""
    loop = state.loop
    assert isinstance(loop, AdaptiveLoop)
    loop.step_scale = factor


def _row_range(X: Any, start: int, stop: int) -> Any:
    """Rows ``start .. stop - 1`` of the chunk, without copying a checked CSR's values."""
    if sp.issparse(X) and _is_checked(X):
        return checked_row_range(X, start, stop)
    return X[start:stop]


class ShardMixer:
    """The second shard of one sub-problem's large-data fit: its solver and state (made from
    the first shard's at the first mixed chunk) and the thread it runs on.

    ``make()`` returns a solver with the settings of the sub-problem's (its step, its
    components) and no callback (the first shard reports the solve's progress); ``n_jobs`` is
    the fit's."""

    def __init__(self, make: Callable[[], Solver], n_jobs: int | None) -> None:
        self._make = make
        self._n_jobs = n_jobs
        self.solver: Solver | None = None
        self.state: SolverState | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._mixed_at: tuple[int, int] | None = None
        #: chunks mixed, and copies made of the first shard (at the first mixed chunk, and
        #: after the first shard ran a chunk alone)
        self.n_mixed = 0
        self.n_copies = 0

    @staticmethod
    def _position(state: SolverState) -> tuple[int, int]:
        c = state.counters
        return int(c.t), int(c.n_samples)

    def _threads(self) -> int:
        return 1 if self._n_jobs == 1 else min(effective_n_jobs(self._n_jobs),
                                               recipes.MIX_SHARDS)

    def run(self, solver: Solver, state: SolverState, X: Any, y: NDArray[Any],
            weights: NDArray[np.float64], first_pass: bool = True) -> SolveResult | None:
        """Run the chunk ``(X, y, weights)`` of the first pass or a later one: ``state`` on
        its first half, the copy on the second (at :func:`step_scale` times the raced step),
        then both averaged into ``state`` (and the copy). Returns ``None``, or the result of a
        shard whose run ended early -- a divergence, reported as ``Solver.run`` reports one --
        and then nothing is mixed."""
        factor = step_scale(first_pass)
        n = int(X.shape[0])
        h = n // recipes.MIX_SHARDS
        Xa, Xb = _row_range(X, 0, h), _row_range(X, h, n)
        yb, wb = y[h:], weights[h:]
        if self.state is None or self._mixed_at != self._position(state):
            # the first mixed chunk, or the first shard ran a chunk alone since the last mix
            # (one too small to mix): the copy is made afresh from it
            if self.solver is None:
                self.solver = self._make()
            self.state = self.solver.restore(state.checkpoint(data_state=False), Xb, yb, wb,
                                             new_data=True)
            self.n_copies += 1
        assert self.solver is not None and self.state is not None
        other, copy = self.solver, self.state
        # the copy draws the first shard's random stream (set before either sampler is made)
        copy.sampler.bit_generator.state = state.sampler.bit_generator.state
        before = {name: getattr(copy.counters, name) for name in _ADDITIVE}

        def second_shard() -> SolveResult | None:
            other.rebind(copy, Xb, yb, wb)
            _scale(copy, factor)
            return other._advance(copy, n - h)

        if self._threads() >= 2:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=1,
                                                thread_name_prefix="sqnopt-shard")
            pending = self._pool.submit(second_shard)
            try:
                solver.rebind(state, Xa, y[:h], weights[:h])
                _scale(state, factor)
                first = solver._advance(state, h)
            finally:
                second = pending.result()
        else:
            solver.rebind(state, Xa, y[:h], weights[:h])
            _scale(state, factor)
            first = solver._advance(state, h)
            second = second_shard()
        if first is not None or second is not None:     # a run ended early: a divergence
            return first if first is not None else second
        counters = state.counters
        for name in _ADDITIVE:
            setattr(counters, name,
                    getattr(counters, name) + getattr(copy.counters, name) - before[name])
        loop = state.loop
        assert isinstance(loop, AdaptiveLoop) and isinstance(copy.loop, AdaptiveLoop)
        loop.mix(copy.loop, self._threads())   # the records, the accumulators, both w
        state.note_synced()
        copy.note_synced()
        self.n_mixed += 1
        self._mixed_at = self._position(state)
        return None

    def close(self) -> None:
        """Let the shard thread go (the end of the fit)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
