"""Checkpoints of a solve: :meth:`SolverState.checkpoint` takes one, :meth:`Solver.restore`
turns it back into a state (see :mod:`sqnopt.checkpoint` for what a checkpoint holds).

A restore builds a fresh state on the given data exactly as ``init_state`` does (same kernels,
buffers and loop), then writes the checkpointed state into it: the iterate and the average into
the buffers the loop already holds (in place), the counters, history, monitor and clocks, the
bit generator's state, and each kernel's ``set_state``. Kernels without ``get_state`` (pure
Python) were deep-copied with their references to the data replaced by placeholders; the copy
is re-bound to the new state's objective and data and replaces the fresh kernel (the loop is
rebuilt around it). Everything that decides an iteration is then what it was when the
checkpoint was taken, so ``run`` continues bit-for-bit -- including the parts that behave
differently on a solve's first run (the monitor's ``F(w_0)``, the history's first point, the
loop's reuse of the last secant gradient and its full-batch ``ftol`` reference), which the
restored state carries as the interrupted one did.

``new_data=True`` continues the checkpointed solve on other data, as :meth:`Solver.rebind`
continues a live one: what depends on the data (the sampler's position, the batch schedules,
the gradient estimator's tables, the generic loop's reuse buffers) starts afresh; the iterate,
average, counters, history, monitor, random stream, curvature memory, step and projection state
and the scaled loop's representation carry over.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from sqnopt.checkpoint import (
    CHECKPOINT_FORMAT_VERSION,
    Checkpoint,
    CheckpointError,
    data_fingerprint,
    differences,
    in_file,
    restore_array,
    restoring,
    state_array,
    state_value,
)
from sqnopt.solver._monitor import MonitorState

# The solver and its state are used through their attributes (this module is imported by
# both, so it imports neither).
SolverState = Any
Builder = Any

__all__: list[str] = []

#: Kernel slots of a SolverState that are checkpointed (the objective kernel is bound to the
#: data and carries nothing from one iteration to the next).
KERNEL_SLOTS = ("gradient", "curvature", "schedule", "curvature_schedule", "step", "projection")
#: Slots rebuilt when a solve moves to new data (``Solver.rebind``).
DATA_SLOTS = ("gradient", "schedule", "curvature_schedule")
#: In place of an array equal to the iterate ``w`` (the monitor's best iterate).
_SAME_AS_W = "w"
_HISTORY = (("iteration", np.int64), ("samples", np.int64), ("effective_passes", np.float64),
            ("time", np.float64), ("objective", np.float64), ("grad_norm", np.float64))
_MONITOR_FLOATS = ("f_ref", "best", "last")
#: Counters added after checkpoints were first written (absent from older ones).
_LATER_COUNTERS = ("prog_loss", "prog_weight")


class _Bound:
    """Placeholder for a reference to the solve's data inside a deep-copied Python kernel; a
    restore replaces it with the restored state's object of the same role."""

    def __init__(self, role: str) -> None:
        self.role = role

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return _bound, (self.role,)

    def __deepcopy__(self, memo: dict[int, Any]) -> _Bound:
        return self

    def __repr__(self) -> str:
        return f"<the solve's {self.role}>"


_ROLES = ("objective", "data", "X", "y", "sample_weight", "grad_weight", "rows")
_BOUND = {role: _Bound(role) for role in _ROLES}


def _bound(role: str) -> _Bound:
    return _BOUND[role]


def _data_refs(state: SolverState) -> dict[str, object]:
    d = state.data
    return {"objective": state.objective, "data": d, "X": d.X, "y": d.y,
            "sample_weight": d.sample_weight, "grad_weight": d.grad_weight, "rows": d.rows}


def _type_name(obj: object) -> str:
    return f"{type(obj).__module__}.{type(obj).__qualname__}"


def _kernel_state(kernel: Any, refs: Mapping[str, object], slot: str) -> dict[str, Any]:
    get = getattr(kernel, "get_state", None)
    if callable(get):
        st = get()
        if not isinstance(st, dict):
            raise TypeError(f"{slot} kernel {type(kernel).__name__}.get_state() returned a "
                            f"{type(st).__name__}, not a dict")
        return {"type": _type_name(kernel), "state": st}
    memo: dict[int, Any] = {id(obj): _BOUND[role] for role, obj in refs.items()}
    return {"type": _type_name(kernel), "copy": copy.deepcopy(kernel, memo)}


def take(state: SolverState, *, data_state: bool = True) -> Checkpoint:
    """The checkpoint of ``state`` (see :meth:`SolverState.checkpoint`)."""
    state.sync()
    refs = _data_refs(state)
    h = state.history
    ms = state.monitor
    kernels: dict[str, Any] = {}
    for slot in KERNEL_SLOTS:
        if not data_state and slot in DATA_SLOTS:
            continue
        kernel = getattr(state, slot)
        kernels[slot] = None if kernel is None else _kernel_state(kernel, refs, slot)
    st: dict[str, Any] = {
        "data_state": bool(data_state),
        "classes": np.array(state.data.classes),
        "w": state.w.copy(),
        "w_avg": None if state.w_avg is None else state.w_avg.copy(),
        "avg_start": int(state.avg_start),
        "counters": state.counters.as_dict(),
        "elapsed": float(state.elapsed), "eval_time": float(state.eval_time),
        "diverged": bool(state.diverged),
        "history": {name: np.array(getattr(h, name), dtype=dt) for name, dt in _HISTORY},
        "monitor": {"f_ref": float(ms.f_ref), "best": float(ms.best), "last": float(ms.last),
                    # the best iterate is often the current one: then named, not copied
                    "w_best": (None if ms.w_best is None else _SAME_AS_W
                               if np.array_equal(ms.w_best, state.w) else ms.w_best.copy()),
                    "best_iteration": int(ms.best_iteration),
                    "best_samples": int(ms.best_samples), "rises": int(ms.rises)},
        "bit_generator": copy.deepcopy(state.sampler.bit_generator.state),
        "kernels": kernels,
        "loop": state.loop.get_state(data_state=data_state),
    }
    if data_state:
        st["sampler"] = {"type": _type_name(state.sampler), "state": state.sampler.get_state()}
    return Checkpoint(kind="solver", identity=dict(state.identity),
                      data=data_fingerprint(state.data), state=st)


def _classes(st: Mapping[str, Any]) -> Any:
    """The checkpointed label set, checked to be one: a 1-D array of distinct numbers or
    strings in increasing order, empty for real-valued targets (a regression objective's;
    ``None``: absent, as in older checkpoints)."""
    saved = st.get("classes")
    if saved is None:
        return None
    cls = np.asarray(saved)
    ok = cls.ndim == 1 and cls.dtype.kind in "biufU"
    if ok and cls.dtype.kind == "f":
        ok = bool(np.all(np.isfinite(cls)))
    if ok and cls.shape[0] > 1:
        ok = bool(np.all(cls[1:] > cls[:-1]))
    if not ok:
        raise CheckpointError(f"checkpoint field 'classes' is not a label set (distinct numbers "
                              f"or strings in increasing order): {cls!r:.80}; the checkpoint "
                              "is damaged or was edited")
    return cls


def _bit_generator(saved: Any, fallback: Callable[[], np.random.BitGenerator]
                   ) -> np.random.BitGenerator:
    """A bit generator in the checkpointed state: a new one of NumPy's class of that name, or
    (another class) the solver's own, ``fallback()``."""
    name = saved.get("bit_generator") if isinstance(saved, Mapping) else None
    cls = getattr(np.random, name, None) if isinstance(name, str) else None
    if isinstance(cls, type) and issubclass(cls, np.random.BitGenerator):
        bitgen = cls()
    else:
        bitgen = fallback()
        if type(bitgen).__name__ != name:
            raise CheckpointError(f"the checkpointed random stream is of a {name!r} bit "
                                  f"generator, this solver's is a {type(bitgen).__name__}")
    try:
        bitgen.state = dict(saved)
    except (TypeError, ValueError, KeyError, OverflowError) as exc:
        raise CheckpointError(f"the checkpointed state of the {name} bit generator does not "
                              f"load: {exc}") from None
    return bitgen


def restore(solver: Builder, checkpoint: Checkpoint, X: Any, y: Any, sample_weight: Any,
            new_data: bool, bit_generator: Callable[[], np.random.BitGenerator]
            ) -> SolverState:
    """A state continuing ``checkpoint`` on ``(X, y, sample_weight)`` (see
    :meth:`Solver.restore`); a :class:`CheckpointError` names the file the checkpoint was
    read from, if any."""
    if not isinstance(checkpoint, Checkpoint):
        raise TypeError(f"restore expects a sqnopt.checkpoint.Checkpoint, got "
                        f"{type(checkpoint).__name__}")
    try:
        return _restore(solver, checkpoint, X, y, sample_weight, new_data, bit_generator)
    except CheckpointError as exc:
        raise in_file(checkpoint, exc) from None


def _restore(solver: Builder, checkpoint: Checkpoint, X: Any, y: Any, sample_weight: Any,
             new_data: bool, bit_generator: Callable[[], np.random.BitGenerator]
             ) -> SolverState:
    if checkpoint.kind != "solver":
        raise CheckpointError(f"this is a checkpoint of a {checkpoint.kind!r}, not of a solve; "
                              "restore it with what wrote it (e.g. Trainer.fit(resume=...))")
    if checkpoint.version > CHECKPOINT_FORMAT_VERSION:
        raise CheckpointError(f"the checkpoint was written by a newer sqnopt (version "
                              f"{checkpoint.version}); upgrade sqnopt to restore it")
    diffs = differences(checkpoint.identity, solver._identity())
    if diffs:
        raise CheckpointError("the checkpoint was taken with another solver (" + "; ".join(diffs)
                              + "). Restore it with a Solver built with the same components "
                              "and settings")
    st = checkpoint.state
    if not isinstance(st, Mapping):
        raise CheckpointError("the checkpoint has no state")
    classes = _classes(st)
    try:
        data = solver._prepare(X, y, sample_weight, classes)
    except ValueError as exc:
        if new_data or classes is None:
            raise               # new data whose labels are not the solve's: the data's error
        raise CheckpointError(f"the labels of this data do not fit the checkpoint's field "
                              f"'classes' {classes.tolist()!r:.80} ({exc}): the checkpoint is "
                              "of other data, or damaged") from None
    if new_data:
        n_old = checkpoint.data.get("n_features")
        if data.n_features != n_old:
            extra = solver._constant_column
            raise CheckpointError(f"X has {data.n_features - extra} features, but the "
                                  f"checkpointed solve has {int(n_old or 0) - extra}. Pass data "
                                  "with the same columns")
    else:
        if not st.get("data_state", False):
            raise CheckpointError("this checkpoint was taken without the state bound to the "
                                  "data (data_state=False): restore it on new data with "
                                  "new_data=True")
        diffs = differences(checkpoint.data, data_fingerprint(data))
        if diffs:
            raise CheckpointError(
                "the checkpoint was taken on other data (" + "; ".join(diffs) + "). Pass the "
                "same X, y and sample_weight to continue exactly, or new_data=True to continue "
                "the solve on new data (as Solver.rebind)")
    bitgen = _bit_generator(st.get("bit_generator"), bit_generator)
    state = solver._new_state(data, None, bitgen)
    # a solve that diverged may hold the non-finite values that made it diverge (it never runs
    # again); every other state's floats are finite, and its sample indices those of the data
    # it was taken on (the old data on new_data: the kernels replace or forget them)
    diverged = state_value(st, "diverged", bool, "SolverState")
    rows = data.n_samples
    if new_data:
        old = checkpoint.data.get("n_samples")
        rows = old if isinstance(old, int) and not isinstance(old, bool) and old > 0 else None
    with restoring(rows, nonfinite_ok=diverged):
        _apply(solver, state, st, new_data)
    return state


#: Counters that may hold NaN in a running solve (the last full-batch gradient norm: none yet).
_NAN_COUNTERS = frozenset({"last_gnorm"})
#: History columns of counts (the others are values, NaN where none was computed).
_HISTORY_COUNTS = frozenset({"iteration", "samples"})


def _check_history(cols: Mapping[str, list[Any]], counters: Mapping[str, Any]) -> None:
    """What a solve writes into its history, checked: a row is recorded at most once per
    iteration, from the counters ``t`` and ``n_samples``, which only grow, so its iterations
    increase, its sample counts never decrease and neither passes the checkpoint's counters;
    effective passes and times are finite, >= 0 and never decrease (objective and gradient
    norm may be non-finite: a diverging run records them)."""
    its = np.asarray(cols["iteration"], dtype=np.int64)
    samples = np.asarray(cols["samples"], dtype=np.int64)
    problems = []
    if its.size and (np.any(np.diff(its) <= 0) or its[-1] > counters.get("t", its[-1])):
        problems.append(f"'iteration' must increase up to the counter t = "
                        f"{counters.get('t')}")
    if samples.size and (np.any(np.diff(samples) < 0)
                         or samples[-1] > counters.get("n_samples", samples[-1])):
        problems.append(f"'samples' must not decrease and stay within n_samples = "
                        f"{counters.get('n_samples')}")
    for name in ("effective_passes", "time"):
        col = np.asarray(cols[name], dtype=np.float64)
        if col.size and not (np.all(np.isfinite(col)) and col[0] >= 0
                             and np.all(np.diff(col) >= 0)):
            problems.append(f"{name!r} must be finite, >= 0 and not decrease")
    if problems:
        raise CheckpointError("the checkpointed history is not one a solve writes: "
                              + "; ".join(problems))


def _apply(solver: Builder, state: SolverState, st: Mapping[str, Any], new_data: bool) -> None:
    """Write the checkpointed state ``st`` into the fresh ``state``. Every field is checked
    before it is used (:mod:`sqnopt.checkpoint`'s helpers); the iterates must be finite with a
    finite squared norm unless the solve diverged without a monitor (then its last iterate is
    what made it diverge)."""
    who = "SolverState"
    diverged = state_value(st, "diverged", bool, who)
    lenient = diverged and solver.monitor is None
    with restoring(state.data.n_samples, nonfinite_ok=lenient):      # (no indices here)
        restore_array(state.w, st, "w", who, iterate=True)
        saved_avg = st.get("w_avg")
        if (saved_avg is None) != (state.w_avg is None):
            raise CheckpointError("the checkpoint and this solver disagree on averaging "
                                  "(average=)")
        if state.w_avg is not None:
            restore_array(state.w_avg, st, "w_avg", who, iterate=True)
        mon = st.get("monitor")
        if not isinstance(mon, Mapping):
            raise CheckpointError("the checkpoint has no divergence-monitor state")
        w_best = None
        if isinstance(mon.get("w_best"), str):
            if mon["w_best"] != _SAME_AS_W:
                raise CheckpointError(f"monitor: checkpoint field 'w_best' must be an array or "
                                      f"{_SAME_AS_W!r}, got {mon['w_best']!r:.40}")
            w_best = state.w.copy()
        elif mon.get("w_best") is not None:
            w_best = np.zeros_like(state.w)
            restore_array(w_best, mon, "w_best", "monitor", iterate=True)
    avg_start = state_value(st, "avg_start", int, who)
    if avg_start != state.avg_start:
        raise CheckpointError(f"the checkpoint starts averaging at iteration {avg_start} "
                              f"(field 'avg_start'), this solver at {state.avg_start} "
                              "(average=)")
    counters = st.get("counters")
    if not isinstance(counters, Mapping):
        raise CheckpointError("the checkpoint has no counters")
    c = state.counters
    values = {}
    for key, value in c.as_dict().items():
        if key in _LATER_COUNTERS and key not in counters:
            continue        # a checkpoint from before the counter: it starts at 0
        if isinstance(value, float):
            values[key] = state_value(counters, key, float, "Counters",
                                      finite=key not in _NAN_COUNTERS)
        else:
            values[key] = state_value(counters, key, int, "Counters", lo=0)
    elapsed = state_value(st, "elapsed", float, who, lo=0.0)
    eval_time = state_value(st, "eval_time", float, who, lo=0.0)
    hist = st.get("history")
    if not isinstance(hist, Mapping):
        raise CheckpointError("the checkpoint has no history")
    cols: dict[str, list[Any]] = {}
    for name, dt in _HISTORY:
        if name not in hist:
            cols[name] = []
            continue
        count = name in _HISTORY_COUNTS
        cols[name] = state_array(hist, name, "history", dt, finite=False,
                                 lo=0 if count else None).tolist()
    if len({len(v) for v in cols.values()}) != 1:
        raise CheckpointError("the checkpointed history columns have different lengths")
    _check_history(cols, values)
    monitor = MonitorState(
        # F(w_0) and the best value: NaN / infinity before the monitor's first test
        f_ref=state_value(mon, "f_ref", float, "monitor", finite=False),
        best=state_value(mon, "best", float, "monitor", finite=False), w_best=w_best,
        best_iteration=state_value(mon, "best_iteration", int, "monitor", lo=0),
        best_samples=(state_value(mon, "best_samples", int, "monitor", lo=0)
                      if "best_samples" in mon else 0),      # absent before it was recorded
        last=state_value(mon, "last", float, "monitor", finite=False),
        rises=state_value(mon, "rises", int, "monitor", lo=0))
    for key, value in values.items():
        setattr(c, key, value)
    state.elapsed = elapsed
    state.eval_time = eval_time
    state.diverged = diverged
    state.history = type(state.history)(**cols)
    state.monitor = monitor

    refs = _data_refs(state)
    back = {id(_BOUND[role]): obj for role, obj in refs.items()}
    kernels = st.get("kernels")
    if not isinstance(kernels, Mapping):
        raise CheckpointError("the checkpoint has no kernel states")
    replaced = False
    for slot in KERNEL_SLOTS:
        if new_data and slot in DATA_SLOTS:
            continue       # rebuilt for the new data, as Solver.rebind does
        kernel = getattr(state, slot)
        saved = kernels.get(slot)
        if (saved is None) != (kernel is None):
            raise CheckpointError(f"the checkpoint {'has no' if saved is None else 'has a'} "
                                  f"{slot} kernel, this solver {'has' if saved is None else 'has none'}")
        if kernel is None:
            continue
        if not isinstance(saved, Mapping) or saved.get("type") != _type_name(kernel):
            found = saved.get("type") if isinstance(saved, Mapping) else saved
            raise CheckpointError(f"the checkpointed {slot} kernel is a {found!r}, this solver "
                                  f"built a {_type_name(kernel)!r}")
        if "copy" in saved:
            setattr(state, slot, copy.deepcopy(saved["copy"], dict(back)))
            replaced = True
            continue
        set_state = getattr(kernel, "set_state", None)
        if not callable(set_state):
            raise CheckpointError(f"the {slot} kernel {type(kernel).__name__} has no set_state()")
        _set_state(set_state, saved.get("state"), f"{slot} kernel {type(kernel).__name__}")
    if replaced:
        state.compiled, state.loop, state.path, state.path_reason = solver._make_loop(
            state.objective, state.gradient, state.curvature, state.schedule,
            state.curvature_schedule, state.step, state.projection, state.sampler, state.w,
            state.w_avg, state.buffers, state.counters, state.w_avg is not None,
            state.avg_start, grad_weight=state.data.grad_weight)
    forget = getattr(state.curvature, "forget_samples", None)
    if new_data and callable(forget):
        forget()           # sample indices of the old data, as Solver.rebind drops them
    if not new_data:
        sampler = st.get("sampler")
        if not isinstance(sampler, Mapping) or sampler.get("type") != _type_name(state.sampler):
            found = sampler.get("type") if isinstance(sampler, Mapping) else None
            raise CheckpointError(f"the checkpointed sampler is a {found!r}, this solver's a "
                                  f"{_type_name(state.sampler)!r} (sampling=)")
        if not isinstance(sampler.get("state"), Mapping):
            raise CheckpointError("the checkpoint has no sampler state")
        _set_state(state.sampler.set_state, sampler.get("state"),
                   f"sampler {type(state.sampler).__name__}")
    loop_state = st.get("loop")
    if not isinstance(loop_state, Mapping):
        raise CheckpointError("the checkpoint has no loop state")
    loop: Any = state.loop
    if new_data and loop_state.get("loop") != loop.loop_kind:
        if loop.lazy_iterate:
            loop.reload()      # another loop ran before: start from w, as Solver.rebind does
        return
    _set_state(lambda d: loop.set_state(d, new_data=new_data), dict(loop_state),
               f"loop {type(loop).__name__}")


def _set_state(set_state: Callable[[Any], None], saved: Any, what: str) -> None:
    """``set_state(saved)``, its errors as one :class:`CheckpointError` naming ``what``."""
    try:
        set_state(saved)
    except CheckpointError:
        raise
    except (TypeError, ValueError, KeyError, IndexError, OverflowError) as exc:
        raise CheckpointError(f"the checkpointed state of the {what} does not fit: "
                              f"{exc}") from exc
