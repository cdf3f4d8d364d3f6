"""Checkpoints whose container is valid but whose values are not: the checkpoint of a solve (or
of a Trainer fit) of any registered component, taken at a random point, has one to three of its
fields changed -- NaN, infinities, 1e300, the smallest subnormal, zero, -1, -5, indices beyond the
data, 2**63, 2**64, a dropped or added entry, another shape or dtype, a duplicated index, a
flipped flag, a field swapped with another of its shape, None or a string in place of a value --
written to a file and read back (a valid ``.npz``), restored and run.

The oracle: never a crash, a hang or a traceback of another type; an error is a
``CheckpointError`` naming the file (or a ``ValueError`` the run raises for a restored solve
that diverged, or the documented ``CurvatureError``); a change that makes a value no solve writes
(the rules of ``tests/solver/test_checkpoint_values.py``: a NaN where none belongs, an iterate
of 1e300, a negative count or index, an index beyond the data, a counter beyond the compiled
range, an array of the wrong length, a permutation that is not one) is refused -- accepting it
would continue another problem silently; any other change restores and runs to a finite iterate
or a reported divergence."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fuzz._worker import Raised, Worker
from tests.fuzz.test_fuzz_api import DOCUMENTED_WARNINGS
from tests.solver.test_checkpoint_values import (
    FREE_LENGTH,
    INDEX_ARRAYS,
    ITERATES,
    NAN_OK,
    NEGATIVE_OK,
    SKIP,
)

pytestmark = pytest.mark.fuzz

OPS = ["nan", "inf", "-inf", "huge", "tiny", "zero", "neg", "neg5", "big", "i63", "i64",
       "drop", "append", "reshape2d", "to_float", "to_int", "to_str", "dup", "flip", "swap",
       "none", "string", "list", "dict"]
#: Loop-record fields of a Trainer checkpoint and the values a fit writes there.
_LOOP_COUNTS = ("s0", "done", "stall")
_LOOP_FLOATS = ("p0", "total", "budget")


def _cases() -> list[tuple[str, str]]:
    from sqnopt.registry import DEFAULT_PLUGINS, get_registry

    reg = get_registry()
    return [(kind, e.name) for kind in ("objective", "curvature", "gradient", "schedule", "step",
                                        "projection")
            for e in reg.entries(kind) if e.source in DEFAULT_PLUGINS]  # type: ignore[arg-type]


def _solver_path(path: str) -> str | None:
    """The path inside a solver state (``subs.J.solver.state.X`` -> ``X``), else None."""
    parts = path.split(".")
    if len(parts) > 4 and parts[0] == "subs" and parts[2:4] == ["solver", "state"]:
        return ".".join(parts[4:])
    return None if parts[0] == "subs" else path


def must_refuse(path: str, op: str, kind: str) -> bool:
    """Whether changing the field ``path`` (a leaf of ``kind``) by ``op`` makes a value no
    solve writes (the rules of the checkpoint-values sweep)."""
    parts = path.split(".")
    if parts[0] == "subs" and len(parts) == 4 and parts[2] == "loop":     # a fit's loop record
        field = parts[3]
        if field in _LOOP_COUNTS and kind == "int":
            return op in ("neg", "neg5", "i63", "i64")
        if field in _LOOP_FLOATS and kind in ("int", "float"):
            return op in ("nan", "inf", "-inf") or (field == "p0" and op in ("neg", "neg5"))
        return False
    sp = _solver_path(path)
    if sp is None or sp.startswith(SKIP) or ".type" in sp:
        return False
    nan_ok = sp.startswith(NAN_OK)
    if op in ("nan", "inf", "-inf"):
        return kind in ("float", "float_array") and not nan_ok
    if op == "huge":
        return kind == "float_array" and sp in ITERATES
    if op in ("neg", "neg5"):
        return kind in ("int", "int_array") and sp not in NEGATIVE_OK and \
            not sp.endswith("rng")
    if op == "big":
        return kind == "int_array" and sp in INDEX_ARRAYS
    if op in ("i63", "i64"):
        return kind == "int" and (op == "i64" or not sp.endswith("rng"))
    if op == "drop":
        return kind in ("float_array", "int_array") and sp not in FREE_LENGTH
    if op == "dup":
        return sp == "sampler.state.perm"
    return False


@settings(max_examples=max(5, int(settings.default.max_examples * 1.5)))
@given(case=st.sampled_from(_cases()), sparse=st.booleans(), k=st.integers(0, 25),
       m=st.integers(1, 12),
       mutations=st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from(OPS),
                                    st.integers(0, 10**6)), min_size=1, max_size=3),
       via=st.sampled_from(["file", "file", "memory"]), trainer=st.integers(0, 5))
def test_checkpoint_with_damaged_values(worker: Worker, case: tuple[str, str], sparse: bool,
                                        k: int, m: int, mutations: list[Any], via: str,
                                        trainer: int) -> None:
    kind, name = case
    r = worker.call("checkpoint", kind=kind, name=name, sparse=sparse, k=k, m=m,
                    mutations=mutations, via=via, trainer=trainer == 0)
    if isinstance(r, Raised):
        assert r.isinstance("ValueError", "TypeError", "CurvatureError"), \
            f"{r.kind}: {r.message}\n{r.trace}"
        if r.isinstance("CheckpointError") and via == "file" and "cannot write" not in \
                r.message:
            assert "ck.npz" in r.message, r.message           # names the file
        return
    bad = [c for c in r["changed"] if must_refuse(*c)]
    assert not bad, f"a checkpoint with {bad} was accepted (changes: {r['changed']})"
    unexpected = [w for w in r["warnings"] if not w.startswith(DOCUMENTED_WARNINGS)]
    assert not unexpected, unexpected
    assert np.all(np.isfinite(r["w"])) or "diverged" in r["status"], (r["status"], r["changed"])
