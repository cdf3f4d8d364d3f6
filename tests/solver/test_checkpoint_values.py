"""Checkpoints whose container is valid but whose values are not: every field a restore reads
is checked before any compiled loop reads it, and a value no solve writes (an index outside the
data, a repeated index in a permutation, a negative count, a counter beyond the compiled range,
a NaN / infinite / overflowing iterate, a non-finite curvature memory) is refused with one
:class:`~sqnopt.checkpoint.CheckpointError` naming the file and the field, instead of reading
memory outside the data (a crash) or continuing a different problem (a "divergence" or a
silently other result).

The sweep at the end corrupts every field of the checkpoint of every registered component the
same way (the lists come from the registry and from the checkpoints themselves, so a new field
is covered without touching this file); fields whose NaN means "not yet" are named in
``NAN_OK``.
"""

from __future__ import annotations

import copy
import math
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sqnopt import Constant, Fixed, LogLoss, Solver
from sqnopt.checkpoint import Checkpoint, CheckpointError
from tests.solver.test_resume import CASES, binary_data, data_for, multiclass_data, solver_factory


# ---------------------------------------------------------------------------- helpers
def _solver(**kw: Any) -> Solver:
    return Solver(LogLoss(lam=1e-3), "lbfgs", Fixed(5), Constant(0.1), sampling="shuffle",
                  random_state=0, **kw)


def _checkpoint_file(tmp_path: Path, edit: Any, name: str = "ck.npz") -> tuple[Path, Any, Any]:
    """A solve of 7 iterations (35 samples: mid-epoch of 120) checkpointed to a file, the
    file's state edited by ``edit(state)`` and written back as a valid file."""
    X, y = binary_data()
    s = _solver()
    st = s.init_state(X, y)
    s.run(st, max_iter=7)
    path = tmp_path / name
    st.checkpoint().save(path)
    ck = Checkpoint.load(path)
    edit(ck.state)
    ck.save(path)
    return path, X, y


def _set(state: dict[str, Any], path: str, value: Any) -> None:
    *head, last = path.split(".")
    node = state
    for key in head:
        node = node[key]
    node[last] = value


def _entry(state: dict[str, Any], path: str, index: int, value: Any) -> None:
    *head, last = path.split(".")
    node = state
    for key in head:
        node = node[key]
    arr = np.array(node[last], copy=True)
    arr.flat[index] = value
    node[last] = arr


# ---------------------------------------------------------------------------- the reported ones
@pytest.mark.parametrize("value", [10**9, -5, "repeat"])
def test_a_sampler_permutation_with_bad_indices_is_refused(tmp_path: Path, value: Any) -> None:
    """Out-of-range entries crashed the resumed run (SIGSEGV for 10**9) or let it "resume" and
    diverge (-5); a repeated index is no permutation either."""
    def edit(state: dict[str, Any]) -> None:
        perm = np.array(state["sampler"]["state"]["perm"], copy=True)
        pos = state["sampler"]["state"]["pos"]
        perm[pos] = perm[pos - 1] if value == "repeat" else value   # the next one drawn
        state["sampler"]["state"]["perm"] = perm

    path, X, y = _checkpoint_file(tmp_path, edit)
    with pytest.raises(CheckpointError, match=f"checkpoint file '{path}'.*'perm'") as err:
        _solver().restore(Checkpoint.load(path), X, y)
    assert ("permutation" if value == "repeat" else "outside") in str(err.value)
    assert "damaged" in str(err.value)


@pytest.mark.parametrize("value", [math.nan, math.inf, 1e300])
def test_a_non_finite_or_overflowing_iterate_is_refused(tmp_path: Path, value: float) -> None:
    """Such an iterate used to load; the resumed run then "diverged" and returned w_0."""
    path, X, y = _checkpoint_file(tmp_path, lambda st: _entry(st, "w", 2, value))
    with pytest.raises(CheckpointError, match=f"'{path}'.*field 'w'") as err:
        _solver().restore(Checkpoint.load(path), X, y)
    assert ("too large to square" if value == 1e300 else "non-finite") in str(err.value)


@pytest.mark.parametrize("path, value, match", [
    ("counters.t", -5, "'t' = -5 is outside >= 0"),
    ("counters.n_samples", 2**70, "outside the range of the solver's counters"),
    ("sampler.state.pos", -1, "'pos' = -1"),
    ("sampler.state.n_epochs", -3, "'n_epochs'"),
    ("kernels.curvature.state.count", -1, "count=-1"),
    ("kernels.curvature.state.gamma", 0.0, "'gamma' = 0.0 is outside > 0"),
    ("monitor.rises", -1, "'rises'"),
    ("elapsed", math.nan, "'elapsed' = nan"),
])
def test_impossible_counts_and_values_are_refused(tmp_path: Path, path: str, value: Any,
                                                  match: str) -> None:
    file, X, y = _checkpoint_file(tmp_path, lambda st: _set(st, path, value))
    with pytest.raises(CheckpointError, match=match):
        _solver().restore(Checkpoint.load(file), X, y)


def test_non_finite_curvature_memory_is_refused(tmp_path: Path) -> None:
    file, X, y = _checkpoint_file(
        tmp_path, lambda st: _entry(st, "kernels.curvature.state.R", 3, math.inf))
    with pytest.raises(CheckpointError, match=f"'{file}'.*LBFGSKernel.*'R'.*inf"):
        _solver().restore(Checkpoint.load(file), X, y)


def test_trainer_resume_refuses_a_damaged_checkpoint_naming_the_file(tmp_path: Path) -> None:
    from sqnopt.training import Trainer

    X, y = multiclass_data(n=150)
    kw = dict(curvature="identity", sampling="shuffle", random_state=0, max_epochs=2,
              tol=1e-9)
    cks: list[Checkpoint] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        Trainer("hinge", **kw).fit(X, y, checkpoint=cks.append)   # one-vs-rest: 3 solves
    path = tmp_path / "fit.npz"
    cks[0].save(path)
    ck = Checkpoint.load(path)
    sampler = ck.state["subs"][0]["solver"]["state"]["sampler"]["state"]
    sampler["perm"] = np.full_like(sampler["perm"], 10**9)
    ck.save(path)
    with pytest.raises(CheckpointError, match=f"checkpoint file '{path}'.*'perm'"):
        Trainer("hinge", **kw).fit(X, y, resume=Checkpoint.load(path))
    ck.state["subs"][0]["loop"]["done"] = -1
    sampler["perm"] = np.arange(sampler["perm"].shape[0])
    ck.save(path)
    with pytest.raises(CheckpointError, match=f"'{path}'.*sub-problem 0.*'done' = -1"):
        Trainer("hinge", **kw).fit(X, y, resume=Checkpoint.load(path))


def test_cli_resume_from_a_damaged_checkpoint_is_one_error_line(capsys: Any,
                                                                 tmp_path: Path) -> None:
    from sklearn.datasets import dump_svmlight_file

    from sqnopt.cli import main

    X, y = binary_data(n=200)
    data = tmp_path / "data.svm"
    dump_svmlight_file(X, y, str(data), zero_based=False)
    ckpt = tmp_path / "run.npz"
    argv = ["train", str(data), "--progress", "never", "--curvature", "lbfgs", "--max-epochs",
            "2", "--model", str(tmp_path / "m.npz"), "--history", str(tmp_path / "h.json")]
    assert main([*argv, "--checkpoint", str(ckpt)]) == 0
    ck = Checkpoint.load(ckpt)
    _entry(ck.state["subs"][0]["solver"]["state"], "w", 0, math.nan)
    ck.save(ckpt)
    capsys.readouterr()
    assert main([*argv, "--resume", str(ckpt)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("sqnopt: error: checkpoint file") and err.count("\n") == 1, err
    assert str(ckpt) in err and "'w'" in err and "damaged" in err


def test_a_solve_that_diverged_restores_with_its_non_finite_memory_and_stays_ended() -> None:
    """The one legitimate non-finite state: a solve without a monitor that diverged keeps the
    values that made it diverge; its checkpoint restores, and running it is refused."""
    X, y = binary_data()
    X = X * 1e150                       # steps overflow: the iterate becomes non-finite
    s = Solver(LogLoss(lam=1e-3), "identity", Fixed(5), Constant(1e10), random_state=0,
               monitor=None)
    st = s.init_state(X, y)
    with pytest.warns(Warning, match="diverged"):
        s.run(st, max_iter=50)
    with np.errstate(over="ignore"):
        assert st.diverged and not np.isfinite(np.dot(st.w, st.w))
    restored = s.restore(st.checkpoint(), X, y)
    assert restored.diverged
    with pytest.raises(ValueError, match="diverged"):
        s.run(restored, max_iter=1)


# ---------------------------------------------------------------------------- the sweep
#: Fields that hold NaN or infinity in a running solve ("not yet", or a value a test allows).
NAN_OK = ("counters.last_gnorm", "loop.prev_full_loss", "monitor.f_ref", "monitor.best",
          "monitor.last", "history.", "kernels.curvature.state.trace_H",
          "kernels.curvature.state.defer_limit", "kernels.gradient.state.last_ratio",
          "kernels.gradient.state.last_ortho_ratio")
#: Integer fields that may be negative (LAPACK's info, "not exhausted", 2x2 pivots).
NEGATIVE_OK = ("kernels.curvature.state.info", "loop.exhausted_at",
               "kernels.curvature.state.ipiv")
#: Integer arrays of sample indices or positions (a value beyond the data is refused). The
#: score line search's cache is not among them: scores of rows it does not have are not
#: taken (it gathers anew), by design (a restore on other rows).
INDEX_ARRAYS = ("sampler.state.perm", "kernels.curvature.state.batch",
                "kernels.curvature.state.window_sample", "kernels.gradient.state.ov",
                "loop.prev_batch", "loop.pending", "loop.support",
                "kernels.curvature.state.ipiv")
#: Iterate-like arrays (an entry of 1e300: the squared norm overflows).
ITERATES = ("w", "w_avg", "monitor.w_best", "loop.w_saved", "loop.vu",
            "kernels.gradient.state.snapshot", "kernels.gradient.state.w_prev",
            "kernels.step.state.w", "kernels.curvature.state.wsum",
            "kernels.curvature.state.wprev")
#: Arrays whose length varies from one state to the next on its own (any length is valid),
#: and the score cache's point, which the line search drops (and gathers anew) when its size
#: is not the objective's.
FREE_LENGTH = ("kernels.curvature.state.window_sample", "kernels.gradient.state.ov",
               "loop.support", "kernels.step.state.w")
#: Not values of the solve: names, identities, the bit generator (numpy checks its state).
SKIP = ("classes", "data_state", "bit_generator", ".type", "loop.loop")


def _leaves(node: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _leaves(v, f"{path}.{k}" if path else k)
    elif not isinstance(node, (list, str)) and node is not None:
        yield path, node


def _corruptions(path: str, value: Any, n: int) -> Iterator[tuple[Any, bool]]:
    """``(corrupted value, must be refused)`` for the field ``path``."""
    nan_ok = path.startswith(NAN_OK)
    if isinstance(value, np.ndarray):
        if value.size == 0:
            return
        if value.dtype.kind == "f":
            for bad in (math.nan, -math.inf):
                arr = value.copy()
                arr.flat[value.size // 2] = bad
                yield arr, not nan_ok
            if path in ITERATES:
                arr = value.copy()
                arr.flat[0] = 1e300
                yield arr, True
        elif value.dtype.kind in "iu":
            arr = value.copy()
            arr.flat[value.size - 1] = -1
            yield arr, path not in NEGATIVE_OK
            if path in INDEX_ARRAYS:
                arr = value.copy()
                arr.flat[0] = n + 10**6
                yield arr, True
        if value.ndim:                                          # a wrong shape
            yield value[..., :-1], path not in FREE_LENGTH
    elif isinstance(value, bool):
        yield "yes", True
    elif isinstance(value, int):
        if path.endswith("rng"):            # the l1 ball's xorshift64 state: 64 bits, not 0
            yield 2**64, True
            yield 0, True
            return
        yield 2**63, True
        yield -1, path not in NEGATIVE_OK
    elif isinstance(value, float):
        yield math.nan, not nan_ok


def _sweep_cases() -> list[tuple[str, str]]:
    return [c for c in CASES if c != ("objective", "loglinear")] + [("objective", "loglinear")]


@pytest.mark.parametrize("kind, name", _sweep_cases())
def test_every_impossible_value_of_every_field_is_refused(kind: str, name: str) -> None:
    """Every field of the checkpoint of every registered component, corrupted: a value no
    solve writes is refused by ``restore`` (a ``CheckpointError`` naming the field); any
    other restores and runs (no crash, finite iterate or a reported divergence)."""
    make, objective = solver_factory(kind, name)
    X, y = data_for(objective, sparse=name in ("identity", "sgd", "pegasos"))
    s = make()
    st = s.init_state(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s.run(st, max_iter=17)
    ck = st.checkpoint()
    n = len(y)
    checked = 0
    for path, value in _leaves(ck.state):
        if path.startswith(SKIP) or ".type" in path:
            continue
        for bad, refused in _corruptions(path, value, n):
            state = copy.deepcopy(ck.state)
            _set(state, path, bad)
            bent = Checkpoint(kind="solver", identity=ck.identity, data=ck.data, state=state)
            fresh = make()
            if refused:
                with pytest.raises(CheckpointError, match=path.rsplit(".", 1)[-1]
                                   if not path.startswith("history.") else "history"):
                    fresh.restore(bent, X, y)
                checked += 1
                continue
            try:
                restored = fresh.restore(bent, X, y)
            except CheckpointError:
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = fresh.run(restored, max_iter=5)
            assert np.all(np.isfinite(res.w)) or res.status.value == "diverged", path
    assert checked > 10


def test_values_that_only_fit_another_layout_are_refused() -> None:
    """Found by the fuzz suite: a nonzero running-average scale in a sparse loop without
    averaging (its steps would write the average's entries past the end of v: heap corruption),
    and a label set that is none."""
    import scipy.sparse as sp

    from sqnopt import Decaying

    X, y = binary_data(sparse=True)
    assert sp.issparse(X)
    s = Solver(LogLoss(lam=1e-3), "identity", Fixed(5), Decaying(0.1, 10), random_state=0)
    st = s.init_state(X, y)
    s.run(st, max_iter=9)
    ck = st.checkpoint()
    assert ck.state["loop"]["loop"] == "scaled"
    for field, value in (("avg_scale", float(2**63)), ("avg_intercept", 0.5)):
        bent = copy.deepcopy(ck.state)
        bent["loop"][field] = value
        with pytest.raises(CheckpointError, match=f"'{field}' = .* must be 0 without averaging"):
            s.restore(Checkpoint(kind="solver", identity=ck.identity, data=ck.data,
                                 state=bent), X, y)
    for classes in (np.array([1.0, -1.0]), np.array([[-1.0, 1.0]]), np.array(["-1.0", "1.0"])):
        bent = copy.deepcopy(ck.state)
        bent["classes"] = classes
        with pytest.raises(CheckpointError, match="'classes'"):
            s.restore(Checkpoint(kind="solver", identity=ck.identity, data=ck.data,
                                 state=bent), X, y)


def _history_checkpoint(tmp_path: Path, edit: Any) -> tuple[Path, Any, Any]:
    """:func:`_checkpoint_file` of a solve that records its history every iteration."""
    X, y = binary_data()
    s = _solver(history_every=1)
    st = s.init_state(X, y)
    s.run(st, max_iter=7)
    path = tmp_path / "ck.npz"
    st.checkpoint().save(path)
    ck = Checkpoint.load(path)
    assert len(ck.state["history"]["samples"]) > 2
    edit(ck.state)
    ck.save(path)
    return path, X, y


@pytest.mark.parametrize("path, index, value, match", [
    ("history.samples", 0, 2**62, "'samples' must not decrease"),
    ("history.samples", -1, 10**9, "'samples' must not decrease and stay within n_samples"),
    ("history.iteration", 0, 10**6, "'iteration' must increase"),
    ("history.iteration", -1, 10**6, "'iteration' must increase up to the counter t"),
    ("history.effective_passes", 0, 1e300, "'effective_passes' must be finite"),
    ("history.time", -1, math.nan, "'time' must be finite"),
])
def test_a_history_no_solve_writes_is_refused(tmp_path: Path, path: str, index: int, value: Any,
                                              match: str) -> None:
    """Before: restored as it was (only types checked), so the resumed run's history, its
    file and its plot carried the damaged rows."""
    file, X, y = _history_checkpoint(tmp_path, lambda st: _entry(st, path, index, value))
    with pytest.raises(CheckpointError, match=match):
        _solver(history_every=1).restore(Checkpoint.load(file), X, y)


def test_a_history_with_non_finite_objectives_still_restores(tmp_path: Path) -> None:
    """A diverging run records inf / NaN objectives: those stay restorable."""
    file, X, y = _history_checkpoint(tmp_path, lambda st: _entry(st, "history.objective", -1,
                                                                 math.inf))
    _solver(history_every=1).restore(Checkpoint.load(file), X, y)
