"""Checkpoints of a training run and what a resume must match.

A training checkpoint (``Checkpoint(kind="trainer")``) holds, per sub-problem, either its
solver checkpoint and loop record (:mod:`sqnopt.training._epochs`) or -- for a sub-problem
that has not started -- its starting point and random stream. It is stamped with

* the **settings** of the fit (:func:`fit_identity`): everything that changes the iterates;
  the budget, reporting, progress and callbacks may differ between a fit and its resumption;
* the **data** (:func:`fit_fingerprint`): shape, storage, labels, and a digest of the values,
  the label codes and the weights,

and :func:`check_resume` refuses a checkpoint whose stamps differ from the resuming fit's,
naming the differences, because continuing on other settings or data would silently give a
model that no uninterrupted fit gives.
"""

from __future__ import annotations

import contextlib
import copy
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from sqnopt.checkpoint import (
    Checkpoint,
    CheckpointError,
    array_digest,
    differences,
    in_file,
    state_array,
    state_value,
)
from sqnopt.solver import SolverState, Status
from sqnopt.training._epochs import LoopRecord

#: The constructor parameters that make a checkpoint's iterates (``random_state`` aside).
IDENTITY_SETTINGS = ("loss", "alpha", "curvature", "gradient", "schedule", "step", "projection",
                     "fit_intercept", "average", "sampling", "multiclass", "class_weight", "tol",
                     "n_iter_no_change", "path")

__all__ = ["FitCheckpoints", "check_loop_record", "check_resume", "fit_fingerprint",
           "fit_identity", "from_file", "pending_bit_generator", "resume_records",
           "solver_checkpoint"]


def fit_identity(settings: Any) -> dict[str, Any]:
    """The settings a training checkpoint belongs to (the budget, reporting, progress and
    callbacks may change between a fit and its resumption)."""
    ident = {name: _setting_identity(getattr(settings, name)) for name in IDENTITY_SETTINGS}
    rs = settings.random_state
    ident["random_state"] = repr(rs) if rs is None or isinstance(rs, (int, np.integer)) \
        else type(rs).__name__
    return ident


def _setting_identity(value: Any) -> str:
    """A setting as text that is the same in every process: plain values (and specs made of
    them) by ``repr``, component objects by class and ``describe()`` (a class without its own
    ``__repr__`` would show its memory address)."""
    if value is None or isinstance(value, (str, bool, int, float, np.number)):
        return repr(value)
    if isinstance(value, (tuple, list)):
        return "(" + ", ".join(_setting_identity(v) for v in value) + ")"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_setting_identity(k)}: {_setting_identity(v)}"
                               for k, v in value.items()) + "}"
    describe = getattr(value, "describe", None)
    text = describe() if callable(describe) else repr(value)
    return f"{type(value).__module__}.{type(value).__qualname__}: {text}"


def fit_fingerprint(X: Any, y: NDArray[Any], classes: NDArray[Any],
                    weights: NDArray[np.float64]) -> dict[str, Any]:
    """Identity of ``fit``'s data: shape, storage, labels and weights (a hash of a sample)."""
    sparse = bool(sp.issparse(X))
    parts = [X.data, X.indices, X.indptr] if sparse else [X]
    codes = np.searchsorted(classes, y)
    return {"n_samples": int(X.shape[0]), "n_features": int(X.shape[1]), "dtype": str(X.dtype),
            "sparse": sparse, "classes": repr(np.asarray(classes).tolist()),
            "digest": array_digest(*parts, codes, weights)}


def check_resume(resume: Any, identity: dict[str, Any], fingerprint: dict[str, Any]) -> None:
    """Refuse a ``resume`` that is not a training checkpoint of these settings on this data."""
    if not isinstance(resume, Checkpoint):
        raise TypeError(f"resume must be a sqnopt.checkpoint.Checkpoint, got "
                        f"{type(resume).__name__}")
    if resume.kind != "trainer":
        raise CheckpointError(f"resume: this is a checkpoint of a {resume.kind!r}, not of a "
                              "Trainer fit (Solver checkpoints go to Solver.restore)")
    diffs = differences(resume.identity, identity)
    if diffs:
        raise CheckpointError("resume: the checkpoint was written by a fit with other settings ("
                              + "; ".join(diffs) + "). Resume with the same settings")
    diffs = differences(resume.data, fingerprint)
    if diffs:
        raise CheckpointError("resume: the checkpoint was written by a fit on other data ("
                              + "; ".join(diffs) + "). Resume on the same data")


@contextlib.contextmanager
def from_file(resume: Checkpoint | None) -> Iterator[None]:
    """Within the block, a :class:`CheckpointError` names the file ``resume`` was read from."""
    try:
        yield
    except CheckpointError as exc:
        if resume is None:
            raise
        raise in_file(resume, exc) from None


def resume_records(resume: Checkpoint, n_sub: int) -> list[dict[str, Any]]:
    """The sub-problems' records of a checked ``resume`` (copies), each field checked: a
    started sub-problem's loop record (:func:`check_loop_record`; its solver checkpoint is
    checked when it is restored), a pending one's starting point (finite values; its length
    is checked by the solver) and random stream (:func:`pending_bit_generator`)."""
    subs = resume.state.get("subs")
    if not isinstance(subs, list) or len(subs) != n_sub or not all(
            isinstance(r, dict) and ("solver" in r or "bit_generator" in r) for r in subs):
        raise CheckpointError(f"resume: the checkpoint does not hold the {n_sub} sub-problem(s) "
                              "of this fit")
    out = []
    for j, rec in enumerate(subs):
        rec = dict(rec)
        where = f"resume: sub-problem {j}"
        if "solver" in rec:
            loop = rec.get("loop")
            if not isinstance(loop, dict):
                raise CheckpointError(f"{where} has a solver checkpoint but no loop record")
            rec["loop"] = check_loop_record(loop, where)
        elif rec.get("w0") is not None:
            rec["w0"] = state_array(rec, "w0", where, np.float64, iterate=True)
        out.append(rec)
    return out


def check_loop_record(loop: dict[str, Any], where: str) -> LoopRecord:
    """A copy of a checkpointed loop record (:func:`sqnopt.training._epochs.new_loop_record`)
    whose every field has the type and range a fit writes (the budget loop reads them)."""
    rec = dict(loop)
    who = f"{where} loop record"
    rec["s0"] = state_value(loop, "s0", int, who, lo=0)
    rec["p0"] = state_value(loop, "p0", float, who, lo=0.0)
    rec["done"] = state_value(loop, "done", int, who, lo=0)
    for key in ("total", "budget"):
        if loop.get(key) is not None:
            rec[key] = state_value(loop, key, float, who)
    rec["best"] = state_value(loop, "best", float, who, finite=False)   # inf: no pass yet
    rec["stall"] = state_value(loop, "stall", int, who, lo=0)
    rec["previous"] = state_value(loop, "previous", float, who, finite=False)
    rec["change"] = state_value(loop, "change", float, who, finite=False)
    rec["ended"] = state_value(loop, "ended", bool, who)
    if loop.get("why") is not None:
        rec["why"] = state_value(loop, "why", str, who)
    last = loop.get("last")
    if last is not None:
        if not isinstance(last, dict):
            raise CheckpointError(f"{who}: field 'last' must be a dict, got "
                                  f"{type(last).__name__}")
        status = state_value(last, "status", str, f"{who} 'last'")
        if status not in {s.value for s in Status}:
            raise CheckpointError(f"{who}: 'last' has the unknown status {status!r:.40}")
        rec["last"] = {"status": status, "message": state_value(last, "message", str, who),
                       "fun": state_value(last, "fun", float, who, finite=False),
                       "grad_norm": state_value(last, "grad_norm", float, who, finite=False)}
    return rec


def pending_bit_generator(rec: dict[str, Any]) -> np.random.BitGenerator:
    """The random stream of a sub-problem that had not started when the checkpoint was taken
    (a started one restores its own; it gets a placeholder)."""
    saved = rec.get("bit_generator")
    if saved is None:
        return np.random.PCG64(0)
    name = saved.get("bit_generator") if isinstance(saved, dict) else None
    cls = getattr(np.random, name, None) if isinstance(name, str) else None
    if not (isinstance(cls, type) and issubclass(cls, np.random.BitGenerator)):
        raise CheckpointError(f"resume: unknown bit generator {name!r} in the checkpoint")
    bitgen = cls()
    try:
        bitgen.state = copy.deepcopy(saved)
    except (TypeError, ValueError, KeyError, OverflowError) as exc:
        raise CheckpointError(f"resume: a sub-problem's random stream does not load ({exc})") \
            from None
    return bitgen


def _checkpoint_dict(ck: Checkpoint) -> dict[str, Any]:
    return {"identity": ck.identity, "data": ck.data, "state": ck.state, "version": ck.version}


def solver_checkpoint(d: Any, source: str | None = None) -> Checkpoint:
    """The solver checkpoint of a sub-problem's record (as :func:`_checkpoint_dict` wrote it);
    ``source``: the file the training checkpoint was read from (named by restore errors)."""
    if not isinstance(d, dict) or not {"identity", "data", "state"} <= set(d) or not all(
            isinstance(d[k], dict) for k in ("identity", "data", "state")):
        raise CheckpointError("a sub-problem's solver checkpoint is missing or malformed")
    version = state_value(d, "version", int, "a sub-problem's solver checkpoint", lo=1) \
        if "version" in d else 1
    return Checkpoint(kind="solver", identity=d["identity"], data=d["data"], state=d["state"],
                      version=version, source=source)


class FitCheckpoints:
    """The training checkpoints of one ``fit``: every sub-problem's record, handed to
    ``sink`` as a :class:`~sqnopt.checkpoint.Checkpoint` when one of them asks.

    ``overhead`` (a fraction, or None) bounds the time checkpoints take: one that is due is
    skipped -- not even taken -- while the time spent taking and sinking the earlier ones
    exceeds ``overhead`` times the time since the fit started (a checkpoint of a model with a
    large curvature memory can cost more than a pass); the last one is always taken. Which
    ones are skipped depends on the clock; each one taken resumes exactly."""

    def __init__(self, records: list[dict[str, Any]], bitgens: Sequence[np.random.BitGenerator],
                 identity: dict[str, Any], fingerprint: dict[str, Any],
                 sink: Callable[[Checkpoint], object], overhead: float | None = None) -> None:
        self.records = records
        self.bitgens = bitgens
        self.identity = identity
        self.fingerprint = fingerprint
        self.sink = sink
        self.overhead = overhead
        self.start = time.perf_counter()
        self.spent = 0.0
        self.taken = 0
        self.skipped = 0

    def emit(self, j: int, state: SolverState, loop: LoopRecord, *, last: bool = False) -> None:
        """Checkpoint the fit while sub-problem ``j`` is at ``state`` with progress ``loop``
        (``j = -1``: every sub-problem as recorded), unless that would take more than the
        ``overhead`` allows (never for the ``last`` one)."""
        tic = time.perf_counter()
        if (not last and self.overhead is not None
                and self.spent > self.overhead * (tic - self.start)):
            self.skipped += 1
            return
        subs: list[dict[str, Any]] = []
        for k, rec in enumerate(self.records):
            if k == j:
                rec = {"solver": _checkpoint_dict(state.checkpoint()), "loop": dict(loop)}
            elif "solver" not in rec:
                rec = {"w0": rec.get("w0"), "bit_generator": copy.deepcopy(self.bitgens[k].state)}
            subs.append(rec)
        self.sink(Checkpoint(kind="trainer", identity=self.identity, data=self.fingerprint,
                             state={"subs": subs}))
        self.spent += time.perf_counter() - tic
        self.taken += 1

    def finished(self, j: int, state: SolverState, loop: LoopRecord) -> None:
        """Record that sub-problem ``j`` ended at ``state`` with progress ``loop``."""
        self.records[j] = {"solver": _checkpoint_dict(state.checkpoint()), "loop": loop}
