"""What a checkpoint leaves out, and how often a training run takes one.

A checkpoint holds what an exact resume needs and nothing a restore can rebuild to the bit:
the loop's copy of the iterate (``w_saved``), the plain batch gradient it keeps for reuse
(``g_next``: evaluated again on restore), a batch of the first rows in order, the monitor's best
iterate when it is the current one, the bound's support map. On a full-batch L-BFGS run of
news20 these were 4 of the 24 parameter-sized arrays of each checkpoint. ``Trainer.fit``'s
``checkpoint_overhead`` (the command line's default) skips checkpoints that would make taking
them cost more than that fraction of the run.
"""

from __future__ import annotations

import copy
import warnings
from typing import Any

import numpy as np
import pytest

from sqnopt import Armijo, Full, LogLoss, Solver
from sqnopt.checkpoint import Checkpoint, CheckpointError
from tests.solver.test_resume import (
    binary_data,
    comparable,
    multiclass_data,
    resume_matches,
    same,
    same_result,
)


def _full_batch_lbfgs() -> Solver:
    return Solver(LogLoss(lam=1e-3), "lbfgs", Full(), Armijo(), random_state=0,
                  report_every=1, history_every=3)


def test_a_full_batch_checkpoint_leaves_out_what_a_restore_rebuilds() -> None:
    X, y = binary_data()
    s = _full_batch_lbfgs()
    st = s.init_state(X, y)
    s.run(st, max_iter=6)
    loop = st.checkpoint().state["loop"]
    assert loop["have_next"]                    # a gradient kept for reuse ...
    assert loop["g_next"] is None               # ... evaluated again on restore
    assert loop["w_saved"] is None              # the iterate itself
    assert loop["prev_batch"] is None           # the whole data set in order
    best = st.checkpoint().state["monitor"]["w_best"]     # named when it is the iterate
    assert isinstance(best, str) if np.array_equal(st.monitor.w_best, st.w) else \
        not np.array_equal(best, st.w)
    # exact: every run split, through a file, continues as the uninterrupted one
    for k in (1, 4, 9):
        resume_matches(_full_batch_lbfgs, X, y, k, 7, via="file")


def test_version_1_checkpoints_with_every_array_still_restore_exactly() -> None:
    """A checkpoint written before (every array stored) restores to the same state."""
    X, y = binary_data()
    s = _full_batch_lbfgs()
    st = s.init_state(X, y)
    s.run(st, max_iter=5)
    ck = st.checkpoint()
    old = copy.deepcopy(ck.state)
    loop = old["loop"]
    loop["w_saved"] = st.w.copy()
    loop["prev_batch"] = np.arange(loop["prev_size"], dtype=np.intp)
    g = np.zeros_like(st.w)
    st.objective.gradient(st.w, np.arange(len(y), dtype=np.intp), g)
    loop["g_next"] = g
    old["monitor"]["w_best"] = None if st.monitor.w_best is None else st.monitor.w_best.copy()
    v1 = Checkpoint(kind="solver", identity=ck.identity, data=ck.data, state=old, version=1)
    a, b = _full_batch_lbfgs(), _full_batch_lbfgs()
    ra, rb = a.restore(ck, X, y), b.restore(v1, X, y)
    same_result(a.run(ra, max_iter=6), b.run(rb, max_iter=6))
    same(comparable(ra), comparable(rb))


def test_a_recomputed_gradient_that_disagrees_with_the_checkpoint_is_refused() -> None:
    X, y = binary_data()
    s = _full_batch_lbfgs()
    st = s.init_state(X, y)
    s.run(st, max_iter=5)
    ck = st.checkpoint()
    ck.state["loop"]["loss_next"] *= 1 + 1e-12
    with pytest.raises(CheckpointError, match="loss_next"):
        _full_batch_lbfgs().restore(ck, X, y)


def test_the_checkpoint_overhead_skips_checkpoints_but_takes_the_last(
        monkeypatch: Any) -> None:
    """A fake clock on which only checkpoints take time: with ``checkpoint_overhead`` every
    one after the first is skipped but the last; without it, one per pass. The last of either
    resumes to the uninterrupted model."""
    from sqnopt.training import Trainer
    from sqnopt.training import _checkpoints

    clock = [0.0]
    monkeypatch.setattr(_checkpoints.time, "perf_counter", lambda: clock[0])

    def sink(into: list[Checkpoint]) -> Any:
        def take(ck: Checkpoint) -> None:
            clock[0] += 1.0                     # each checkpoint costs one second
            into.append(ck)
        return take

    X, y = multiclass_data(n=150)
    kw = dict(curvature="identity", random_state=0, max_epochs=8, tol=1e-12,
              n_iter_no_change=50)
    every: list[Checkpoint] = []
    bounded: list[Checkpoint] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = Trainer("hinge", **kw)
        plain.fit(X, y)
        Trainer("hinge", **kw).fit(X, y, checkpoint=sink(every))
        Trainer("hinge", **kw).fit(X, y, checkpoint=sink(bounded), checkpoint_overhead=0.1)
        assert len(every) > 8 and len(bounded) == 2
        for ck in (every[-1], bounded[-1], bounded[0]):
            again = Trainer("hinge", **kw)
            again.fit(X, y, resume=ck)
            same(plain.model_.coef, again.model_.coef)
    with pytest.raises(ValueError, match="checkpoint_overhead"):
        Trainer().fit(X, y, checkpoint=sink([]), checkpoint_overhead=0.0)
