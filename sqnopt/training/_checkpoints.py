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

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from sqnopt.checkpoint import Checkpoint, CheckpointError, array_digest, differences
from sqnopt.solver import SolverState
from sqnopt.training._epochs import LoopRecord

#: The constructor parameters that make a checkpoint's iterates (``random_state`` aside).
IDENTITY_SETTINGS = ("loss", "alpha", "curvature", "gradient", "schedule", "step", "projection",
                     "fit_intercept", "average", "sampling", "multiclass", "class_weight", "tol",
                     "n_iter_no_change", "path")

__all__ = ["FitCheckpoints", "check_resume", "fit_fingerprint", "fit_identity",
           "pending_bit_generator", "resume_records", "solver_checkpoint"]


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


def resume_records(resume: Checkpoint, n_sub: int) -> list[dict[str, Any]]:
    """The sub-problems' records of a checked ``resume`` (copies)."""
    subs = resume.state.get("subs")
    if not isinstance(subs, list) or len(subs) != n_sub or not all(
            isinstance(r, dict) and ("solver" in r or "bit_generator" in r) for r in subs):
        raise CheckpointError(f"resume: the checkpoint does not hold the {n_sub} sub-problem(s) "
                              "of this fit")
    return [dict(r) for r in subs]


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
    except (TypeError, ValueError, KeyError) as exc:
        raise CheckpointError(f"resume: a sub-problem's random stream does not load ({exc})") \
            from None
    return bitgen


def _checkpoint_dict(ck: Checkpoint) -> dict[str, Any]:
    return {"identity": ck.identity, "data": ck.data, "state": ck.state, "version": ck.version}


def solver_checkpoint(d: Any) -> Checkpoint:
    """The solver checkpoint of a sub-problem's record (as :func:`_checkpoint_dict` wrote it)."""
    if not isinstance(d, dict) or not {"identity", "data", "state"} <= set(d):
        raise CheckpointError("a sub-problem's solver checkpoint is missing or malformed")
    return Checkpoint(kind="solver", identity=d["identity"], data=d["data"], state=d["state"],
                      version=int(d.get("version", 1)))


class FitCheckpoints:
    """The training checkpoints of one ``fit``: every sub-problem's record, handed to
    ``sink`` as a :class:`~sqnopt.checkpoint.Checkpoint` when one of them asks."""

    def __init__(self, records: list[dict[str, Any]], bitgens: Sequence[np.random.BitGenerator],
                 identity: dict[str, Any], fingerprint: dict[str, Any],
                 sink: Callable[[Checkpoint], object]) -> None:
        self.records = records
        self.bitgens = bitgens
        self.identity = identity
        self.fingerprint = fingerprint
        self.sink = sink

    def emit(self, j: int, state: SolverState, loop: LoopRecord) -> None:
        """Checkpoint the fit while sub-problem ``j`` is at ``state`` with progress ``loop``
        (``j = -1``: every sub-problem as recorded)."""
        subs: list[dict[str, Any]] = []
        for k, rec in enumerate(self.records):
            if k == j:
                rec = {"solver": _checkpoint_dict(state.checkpoint()), "loop": dict(loop)}
            elif "solver" not in rec:
                rec = {"w0": rec.get("w0"), "bit_generator": copy.deepcopy(self.bitgens[k].state)}
            subs.append(rec)
        self.sink(Checkpoint(kind="trainer", identity=self.identity, data=self.fingerprint,
                             state={"subs": subs}))

    def finished(self, j: int, state: SolverState, loop: LoopRecord) -> None:
        """Record that sub-problem ``j`` ended at ``state`` with progress ``loop``."""
        self.records[j] = {"solver": _checkpoint_dict(state.checkpoint()), "loop": loop}
