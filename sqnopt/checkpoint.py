"""Checkpoints: what a solve carries from one iteration to the next, without the data.

A :class:`Checkpoint` is taken from a running solve (:meth:`sqnopt.SolverState.checkpoint`) and
turned back into one by :meth:`sqnopt.Solver.restore` with the same data: the continuation is
then bit-for-bit the run that was never interrupted. It holds

* the iterate, the running average and the averaging start, the cost counters, the history, the
  divergence monitor's state, the solver's clocks;
* the random stream (the state of the one bit generator behind every sampler) and the
  sampler's position (a shuffle's permutation and offset, an injected sequence's offset);
* the state of every kernel: curvature memory (secant pairs, the BFGS / RES matrices and their
  factorisations, SQB's current bound, AdaGrad's accumulator), gradient-estimator tables (SVRG's
  snapshot and its full gradient, SAGA's table), stateful projections (mirror maps' dual vector,
  the l1 ball's pivot generator), and the loop's own carry-over (the secant gradient kept for
  reuse, the full-batch objective of the tolerance test, the scaled loop's ``w = a v``
  representation);
* an identity: the components and settings of the solver (each component's ``describe()``),
  and a fingerprint of the data (shape, dtype, sparsity, labels, and a hash of a strided sample
  of the values), so that restoring onto other data or another solver fails with an error that
  names the difference instead of continuing a different problem.

Kernels provide their state through ``get_state() -> dict`` and take it back with
``set_state(dict)`` (the contract is in :mod:`sqnopt.interfaces`); the helpers
:func:`restore_array`, :func:`state_array`, :func:`state_value` and
:func:`restore_permutation` of this module check each field -- its type and shape, and every
value a solve could not have written: a non-finite float, an iterate whose squared norm
overflows, an index outside its range, a negative count, a permutation that is not one --
and name it in the error, *before* any compiled loop reads it (an index read without a check
would address memory outside the data). A restore checks every field it reads this way, so a
file whose container is valid but whose values are damaged is refused, not continued. Pure-Python
kernels without ``get_state`` are deep-copied (data references are re-bound on restore), which
keeps them exact in memory and through ``pickle`` but not in a checkpoint *file*.

Files (:meth:`Checkpoint.save`, :func:`read_checkpoint_file`) are ``.npz`` archives of plain
arrays plus a JSON description, written atomically like model files and read by a checking
reader that never loads a pickle (no code runs when a checkpoint file is read); a damaged or
foreign file gives one :class:`CheckpointError` naming the file and the problem.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import math
import os
import re
import zipfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sqnopt._files import atomic_write
from sqnopt._npz import read_archive, read_member

__all__ = [
    "CHECKPOINT_FORMAT_VERSION",
    "Checkpoint",
    "CheckpointError",
    "array_digest",
    "data_fingerprint",
    "differences",
    "read_checkpoint_file",
    "restore_array",
    "restore_permutation",
    "state_array",
    "state_value",
]

#: Version of the checkpoint layout (in memory and in files). Version 2 leaves out what a
#: restore rebuilds exactly (an array equal to the iterate, the plain gradient kept for reuse,
#: a batch of the first rows in order, the bound's support map); version-1 checkpoints,
#: which hold them, still restore.
CHECKPOINT_FORMAT_VERSION = 2
_FILE_FORMAT = "sqnopt.Checkpoint"
#: Values hashed per array by :func:`data_fingerprint` (a strided sample).
_FINGERPRINT_SAMPLE = 1 << 16
_ARRAY_KEY = "$array"
_MEMBER = re.compile(r"a[0-9]{1,9}")
#: The range of the compiled code's indices and counters (``Py_ssize_t``).
_INDEX_MAX = 2**63 - 1
#: While a state that ended in a divergence is restored, kernel fields may hold the non-finite
#: values that made it diverge (such a state is never run again: ``Solver.run`` refuses it).
_NONFINITE_OK: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "sqnopt_checkpoint_nonfinite_ok", default=False)
#: The number of samples of the data a restore is onto (:func:`restoring`): the range of the
#: fields that hold sample indices.
_ROWS: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "sqnopt_checkpoint_rows", default=None)
#: What a refused value means, and what to do.
_DAMAGED = ("no solve writes such a value, so the checkpoint is damaged or was edited: resume "
            "from an intact copy, or start the run again without it")


class CheckpointError(ValueError):
    """A checkpoint that does not fit: another solver or data set, a kernel of another shape,
    or a checkpoint file that cannot be read. The message names the difference."""


@dataclass(frozen=True, eq=False)
class Checkpoint:
    """Everything a solve (``kind="solver"``) or a training run (``kind="trainer"``) needs to
    continue exactly, except the data.

    Attributes
    ----------
    kind
        ``"solver"`` (:meth:`sqnopt.SolverState.checkpoint`) or ``"trainer"`` (a
        :class:`sqnopt.training.Trainer` fit, the command line's ``--checkpoint``).
    identity
        The settings the checkpoint belongs to (components and options); restoring compares
        them with the restoring solver's.
    data
        Fingerprint of the data (:func:`data_fingerprint`); restoring onto the same data compares
        it.
    state
        The state itself: a tree of dicts and lists whose leaves are NumPy arrays, numbers,
        strings, booleans and ``None`` (and, for pure-Python kernels without ``get_state``,
        deep copies of the kernels).
    version
        :data:`CHECKPOINT_FORMAT_VERSION` of the sqnopt that wrote it.
    """

    kind: str
    identity: dict[str, Any]
    data: dict[str, Any]
    state: dict[str, Any] = field(repr=False)
    version: int = CHECKPOINT_FORMAT_VERSION
    #: The file the checkpoint was read from (:func:`read_checkpoint_file`), named in the
    #: errors of a restore; ``None`` for a checkpoint taken in memory.
    source: str | None = field(default=None, compare=False, repr=False)

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the checkpoint to a ``.npz`` file (no pickle), replacing ``path`` atomically.

        Raises :class:`CheckpointError` if the state holds something that is not an array, a
        number, a string or ``None`` (a pure-Python kernel without ``get_state``)."""
        arrays: dict[str, NDArray[Any]] = {}
        meta = {"format": _FILE_FORMAT, "version": int(self.version), "kind": str(self.kind),
                "identity": _encode(self.identity, arrays, "identity"),
                "data": _encode(self.data, arrays, "data"),
                "state": _encode(self.state, arrays, "state")}
        text = json.dumps(meta, allow_nan=True)
        p = Path(path)
        with atomic_write(p) as fh:
            savez: Any = np.savez
            savez(fh, meta=np.array(text), **arrays)
        return p

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Checkpoint:
        """Read a checkpoint file written by :meth:`save` (see :func:`read_checkpoint_file`)."""
        return read_checkpoint_file(path)


# ---------------------------------------------------------------------------- kernel fields
def _who(owner: object) -> str:
    return owner if isinstance(owner, str) else type(owner).__name__


def _field(state: Mapping[str, Any], name: str, owner: object) -> Any:
    if not isinstance(state, Mapping):
        raise CheckpointError(f"{_who(owner)}: the checkpointed state is a "
                              f"{type(state).__name__}, not a dict")
    try:
        return state[name]
    except KeyError:
        raise CheckpointError(f"{_who(owner)}: the checkpoint has no field {name!r} (it was "
                              "written by another kernel or another version)") from None


@contextlib.contextmanager
def restoring(n_rows: int | None, *, nonfinite_ok: bool = False) -> Iterator[None]:
    """The context of a restore onto data of ``n_rows`` samples: fields read with
    ``rows=True`` (sample indices) must lie in ``[0, n_rows)``. With ``nonfinite_ok`` (the
    restore of a solve that diverged: its kernels may hold the values that made it diverge,
    and it never runs again) float fields may hold NaN or infinities; indices, counts and
    shapes are checked as always."""
    rows = _ROWS.set(n_rows)
    nonfinite = _NONFINITE_OK.set(bool(nonfinite_ok))
    try:
        yield
    finally:
        _NONFINITE_OK.reset(nonfinite)
        _ROWS.reset(rows)


def _bad_entry(a: NDArray[Any], mask: NDArray[np.bool_]) -> str:
    """``"value at index i"`` of the first entry where ``mask`` holds."""
    pos = tuple(int(i) for i in np.argwhere(mask)[0]) if a.ndim else ()
    where = f" at index {pos[0] if len(pos) == 1 else pos}" if pos else ""
    return f"{a[pos]!r}{where}"


def _check_values(a: NDArray[Any], name: str, owner: object, finite: bool, iterate: bool,
                  lo: float | None, hi: float | None) -> None:
    """The value checks shared by :func:`restore_array` and :func:`state_array`."""
    who = _who(owner)
    if a.dtype.kind == "f" and a.size:
        if finite and not _NONFINITE_OK.get():
            with np.errstate(all="ignore"):
                bad = ~np.isfinite(a)
                if bad.any():
                    raise CheckpointError(
                        f"{who}: checkpoint field {name!r} holds the non-finite value "
                        f"{_bad_entry(a, bad)}; {_DAMAGED}")
                if iterate:
                    sq = float(np.dot(a.ravel(), a.ravel()))
                    if not math.isfinite(sq):
                        big = np.abs(a) == np.abs(a).max()
                        raise CheckpointError(
                            f"{who}: checkpoint field {name!r} holds {_bad_entry(a, big)}, "
                            f"too large to square in float64 (its squared norm overflows); "
                            f"{_DAMAGED}")
    if (lo is not None or hi is not None) and a.size:
        with np.errstate(invalid="ignore"):
            bad = np.zeros(a.shape, dtype=bool)
            if lo is not None:
                bad |= a < lo
            if hi is not None:
                bad |= a > hi
        if bad.any():
            span = (f"[{lo:g}, {hi:g}]" if lo is not None and hi is not None else
                    f">= {lo:g}" if lo is not None else f"<= {hi:g}")
            raise CheckpointError(f"{who}: checkpoint field {name!r} holds "
                                  f"{_bad_entry(a, bad)}, outside {span}; {_DAMAGED}")


def restore_array(dst: Any, state: Mapping[str, Any], name: str, owner: object, *,
                  finite: bool = True, iterate: bool = False, lo: float | None = None,
                  hi: float | None = None) -> None:
    """Copy the array ``state[name]`` into the buffer ``dst`` in place, after checking it.

    ``dst`` is a kernel's buffer (a NumPy array or a typed memoryview); the field must have its
    shape and a dtype that converts to it without loss of kind. Its values must be finite
    (floats; ``finite=False`` for a field that may hold NaN or infinities), within ``[lo, hi]``
    (either bound optional: indices, counts, magnitudes) and, with ``iterate``, have a finite
    squared norm (an iterate or a vector of its scale, as every solve's are: its objective
    holds ``||w||^2``). ``owner`` (the kernel, or its name) appears in the error, a
    :class:`CheckpointError`; ``dst`` is not written then."""
    target = np.asarray(dst)
    src = np.asarray(_field(state, name, owner))
    if src.dtype.hasobject or not np.can_cast(src.dtype, target.dtype, "same_kind") \
            or src.shape != target.shape:
        raise CheckpointError(
            f"{_who(owner)}: checkpoint field {name!r} is an array of shape {src.shape} and dtype "
            f"{src.dtype}, the kernel's has shape {target.shape} and dtype {target.dtype}: the "
            "checkpoint is of another problem or component")
    conv = src.astype(target.dtype, copy=False)
    if conv.dtype.kind in "iu" and src.dtype.kind in "iu" and not np.array_equal(conv, src):
        raise CheckpointError(f"{_who(owner)}: checkpoint field {name!r} holds integers "
                              f"outside the range of {target.dtype}; {_DAMAGED}")
    _check_values(conv, name, owner, finite, iterate, lo, hi)
    target[...] = conv


def state_array(state: Mapping[str, Any], name: str, owner: object, dtype: Any,
                ndim: int = 1, *, finite: bool = True, iterate: bool = False,
                lo: float | None = None, hi: float | None = None,
                rows: bool = False) -> NDArray[Any]:
    """The array ``state[name]`` as a new C-contiguous array of ``dtype`` with ``ndim``
    dimensions (for fields whose length varies, e.g. the batch of the current bound), with
    its values checked as :func:`restore_array` checks them. ``rows``: the values are sample
    indices, in ``[0, n)`` for the ``n`` samples of the data being restored onto (known
    during :meth:`sqnopt.Solver.restore`; outside it, only ``>= 0`` is checked)."""
    if rows:
        n_rows = _ROWS.get()
        lo = 0 if lo is None else max(lo, 0)
        if n_rows is not None:
            hi = n_rows - 1 if hi is None else min(hi, n_rows - 1)
    src = np.asarray(_field(state, name, owner))
    dt = np.dtype(dtype)
    if src.dtype.hasobject or src.ndim != ndim or not np.can_cast(src.dtype, dt, "same_kind"):
        raise CheckpointError(f"{_who(owner)}: checkpoint field {name!r} must be a {ndim}-D array "
                              f"of {dt}, got a {src.ndim}-D array of {src.dtype}")
    out = np.array(src, dtype=dt, order="C", copy=True)
    if dt.kind in "iu" and src.dtype.kind in "iu" and not np.array_equal(out, src):
        raise CheckpointError(f"{_who(owner)}: checkpoint field {name!r} holds integers "
                              f"outside the range of {dt}; {_DAMAGED}")
    _check_values(out, name, owner, finite, iterate, lo, hi)
    return out


def restore_permutation(dst: Any, state: Mapping[str, Any], name: str, owner: object) -> None:
    """Copy ``state[name]`` into ``dst`` (an index buffer of length ``n``) after checking that
    it is a permutation of ``0 .. n-1``: every index once (a sampler's shuffled order, which a
    compiled loop reads as row numbers)."""
    target = np.asarray(dst)
    n = target.shape[0]
    perm = state_array(state, name, owner, target.dtype, lo=0, hi=n - 1)
    if perm.shape != target.shape:
        raise CheckpointError(f"{_who(owner)}: checkpoint field {name!r} has {perm.shape[0]} "
                              f"entries, the kernel's {n}: the checkpoint is of other data")
    seen = np.bincount(perm, minlength=n)
    if seen.shape[0] != n or not np.all(seen == 1):
        twice = int(np.flatnonzero(seen > 1)[0])
        raise CheckpointError(f"{_who(owner)}: checkpoint field {name!r} is not a permutation "
                              f"of 0..{n - 1} (index {twice} appears {int(seen[twice])} times); "
                              f"{_DAMAGED}")
    target[...] = perm


def state_value(state: Mapping[str, Any], name: str, kind: type, owner: object, *,
                lo: float | None = None, hi: float | None = None, positive: bool = False,
                finite: bool = True) -> Any:
    """The scalar ``state[name]`` checked to be a ``kind`` (``int``, ``float``, ``bool`` or
    ``str``); ints are accepted for floats. Returns it converted to ``kind``.

    Numbers must lie in ``[lo, hi]`` (either bound optional) and, with ``positive``, be
    ``> 0``; ints within the range of the compiled code's counters (``Py_ssize_t``) unless
    ``hi`` says otherwise (e.g. an unsigned 64-bit generator state), floats finite unless ``finite=False`` (a field whose NaN or infinity means "not yet", e.g.
    the reference of a test not made)."""
    v = _field(state, name, owner)
    if isinstance(v, np.generic):
        v = v.item()
    ok: bool
    if kind is bool:
        ok = isinstance(v, bool)
    elif kind is int:
        ok = isinstance(v, int) and not isinstance(v, bool)
    elif kind is float:
        ok = isinstance(v, (int, float)) and not isinstance(v, bool)
    else:
        ok = isinstance(v, kind)
    if not ok:
        raise CheckpointError(f"{_who(owner)}: checkpoint field {name!r} must be a "
                              f"{kind.__name__}, got {type(v).__name__} {v!r:.40}")
    out = kind(v)
    if kind is int and hi is None and not -_INDEX_MAX - 1 <= out <= _INDEX_MAX:
        raise CheckpointError(f"{_who(owner)}: checkpoint field {name!r} = {out} is outside the "
                              f"range of the solver's counters; {_DAMAGED}")
    if kind is float and not math.isfinite(out):
        if finite and not _NONFINITE_OK.get():
            raise CheckpointError(f"{_who(owner)}: checkpoint field {name!r} = {out} is not "
                                  f"finite; {_DAMAGED}")
        return out              # "not yet" (or a diverged state's value): no range to check
    if kind in (int, float) and ((lo is not None and out < lo) or (hi is not None and out > hi)
                                 or (positive and not out > 0)):
        span = (f"[{lo:g}, {hi:g}]" if lo is not None and hi is not None else
                f">= {lo:g}" if lo is not None else f"<= {hi:g}" if hi is not None else "> 0")
        raise CheckpointError(f"{_who(owner)}: checkpoint field {name!r} = {out} is outside "
                              f"{span}; {_DAMAGED}")
    return out


def in_file(checkpoint: Checkpoint, exc: CheckpointError) -> CheckpointError:
    """``exc`` with the file ``checkpoint`` was read from named first (unchanged for a
    checkpoint taken in memory, or a message that names it already)."""
    source = getattr(checkpoint, "source", None)
    if not source or str(exc).startswith("checkpoint file "):
        return exc
    return CheckpointError(f"checkpoint file {source!r}: {exc}")


# ---------------------------------------------------------------------------- identity
def array_digest(*arrays: Any) -> str:
    """A BLAKE2 hash of the dtypes, shapes and a strided sample of at most 65,536 values (and
    the last value) of each array: cheap on data of any size, and different for two arrays
    that differ in shape, dtype or any sampled value."""
    h = hashlib.blake2b(digest_size=16)
    for arr in arrays:
        a = np.asarray(arr)
        flat = a.reshape(-1)
        step = max(1, flat.shape[0] // _FINGERPRINT_SAMPLE)
        h.update(repr((a.dtype.str, a.shape)).encode())
        h.update(np.ascontiguousarray(flat[::step]).tobytes())
        if flat.shape[0]:
            h.update(flat[-1:].tobytes())
    return h.hexdigest()


def data_fingerprint(data: Any) -> dict[str, Any]:
    """Identity of a validated data set (:class:`sqnopt.data.Dataset`), cheap to compute.

    Shape, dtype, storage, number of stored entries, labels, weights' layout, and
    :func:`array_digest` of ``X`` (its values; for CSR also its indices and row pointers), the
    encoded labels and the normalised weights, plus the class labels. Two data sets with the
    same fingerprint are the same data for every practical purpose; a change in a value that
    falls between the samples is not detected."""
    X = data.X
    sparse = bool(data.is_sparse)
    parts = [X.data, X.indices, X.indptr] if sparse else [X]
    return {"n_samples": int(data.n_samples), "n_features": int(data.n_features),
            "dtype": str(X.dtype), "sparse": sparse,
            "nnz": int(X.nnz) if sparse else int(X.shape[0]) * int(X.shape[1]),
            "n_classes": int(data.n_classes), "fit_intercept": bool(data.fit_intercept),
            "label_kind": str(data.label_kind),
            "importance_sampling": bool(data.importance_sampling),
            "weight_sum": float(data.weight_sum),
            "classes": repr(np.asarray(data.classes).tolist()),
            "digest": array_digest(*parts, data.y, data.sample_weight)}


def differences(saved: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """``"key: checkpoint A, now B"`` for every key whose value differs."""
    out = []
    for key in sorted(set(saved) | set(now)):
        a, b = saved.get(key, "(absent)"), now.get(key, "(absent)")
        if _plain(a) != _plain(b):
            out.append(f"{key}: checkpoint {a!r}, now {b!r}")
    return out


def _plain(v: Any) -> Any:
    """JSON-comparable form (tuples as lists), so a checkpoint read from a file compares equal."""
    if isinstance(v, Mapping):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    return v


# ---------------------------------------------------------------------------- files
def _encode(value: Any, arrays: dict[str, NDArray[Any]], where: str) -> Any:
    """The JSON form of a state tree; arrays go to ``arrays`` and are referenced by name."""
    if isinstance(value, np.ndarray):
        if value.dtype.hasobject:
            raise CheckpointError(f"cannot write the checkpoint: {where} is an array of Python "
                                  "objects")
        name = f"a{len(arrays)}"
        arrays[name] = value
        return {_ARRAY_KEY: name}
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str) or k.startswith("$"):
                raise CheckpointError(f"cannot write the checkpoint: {where} has the key {k!r} "
                                      "(keys must be strings not starting with '$')")
            out[k] = _encode(v, arrays, f"{where}.{k}")
        return out
    if isinstance(value, (list, tuple)):
        return [_encode(v, arrays, f"{where}[{i}]") for i, v in enumerate(value)]
    raise CheckpointError(
        f"cannot write the checkpoint to a file: {where} is a {type(value).__name__}, not an "
        "array, a number or a string. A pure-Python kernel without get_state() is kept as a "
        "copy, which pickles but has no file form: give the kernel get_state()/set_state() "
        "(see sqnopt.interfaces) or pickle the checkpoint")


def _decode(value: Any, arrays: Mapping[str, NDArray[Any]], problem: Any, where: str) -> Any:
    if isinstance(value, dict):
        if _ARRAY_KEY in value:
            name = value[_ARRAY_KEY]
            if len(value) != 1 or not isinstance(name, str) or name not in arrays:
                raise problem(f"{where} refers to a missing array {name!r}")
            return arrays[name]
        return {k: _decode(v, arrays, problem, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, list):
        return [_decode(v, arrays, problem, f"{where}[{i}]") for i, v in enumerate(value)]
    return value


def read_checkpoint_file(path: str | os.PathLike[str]) -> Checkpoint:
    """Read and check a checkpoint file; every problem is one :class:`CheckpointError` naming
    the file and what is wrong (a missing file raises ``FileNotFoundError``).

    The file is a ZIP archive of ``.npy`` arrays read member by member (CRC checked, each
    array's header checked against the bytes the archive holds before anything is allocated,
    arrays of Python objects refused: no pickle is ever loaded) and a JSON description whose
    ``format``, ``version`` (no newer than :data:`CHECKPOINT_FORMAT_VERSION`), ``kind``,
    ``identity``, ``data`` and ``state`` are checked. Whether the state fits a solver is checked
    when it is restored."""
    p = Path(path)
    name = str(p)

    def problem(what: str) -> CheckpointError:
        return CheckpointError(f"checkpoint file {name!r}: {what}. Checkpoint files are written "
                               "by `sqnopt train --checkpoint FILE` or Checkpoint.save")

    def read(zf: zipfile.ZipFile) -> tuple[Any, dict[str, Any]]:
        names = [n.removesuffix(".npy") for n in zf.namelist()]
        unknown = [n for n in names if n != "meta" and not _MEMBER.fullmatch(n)]
        if unknown:
            raise problem(f"holds unexpected members {unknown[:5]}")
        return (read_member(zf, "meta", problem),
                {n: read_member(zf, n, problem) for n in names if n != "meta"})

    meta_arr, arrays = read_archive(p, "checkpoint file", "checkpoint", problem,
                                    CheckpointError, read)
    if meta_arr.dtype.kind != "U" or meta_arr.shape != ():
        raise problem("the description is not a JSON string")
    try:
        meta = json.loads(str(meta_arr[()]))
    except (json.JSONDecodeError, RecursionError) as exc:
        raise problem(f"the description is not valid JSON ({exc})") from None
    if not isinstance(meta, dict):
        raise problem(f"the description is a JSON {type(meta).__name__}, not an object")
    if meta.get("format") != _FILE_FORMAT:
        raise problem(f"is not an sqnopt checkpoint (format {meta.get('format')!r}, expected "
                      f"{_FILE_FORMAT!r})")
    version = meta.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise problem(f"'version' must be a positive integer, got {version!r:.40}")
    if version > CHECKPOINT_FORMAT_VERSION:
        raise problem(f"was written by a newer sqnopt (checkpoint version {version}; this one "
                      f"reads up to {CHECKPOINT_FORMAT_VERSION}); upgrade sqnopt to read it")
    kind = meta.get("kind")
    if kind not in ("solver", "trainer"):
        raise problem(f"'kind' must be 'solver' or 'trainer', got {kind!r:.40}")
    parts = {}
    for key in ("identity", "data", "state"):
        if not isinstance(meta.get(key), dict):
            raise problem(f"{key!r} must be a JSON object, got {type(meta.get(key)).__name__}")
        parts[key] = _decode(meta[key], arrays, problem, key)
    return Checkpoint(kind=kind, identity=parts["identity"], data=parts["data"],
                      state=parts["state"], version=version, source=name)
