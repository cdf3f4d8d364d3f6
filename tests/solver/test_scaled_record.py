"""The scaled sparse iterate's iterate sequences are pinned bit for bit: every run of
``tests/solver/scaled_record.py`` (Pegasos, SGD with several losses and steps, averaging,
intercept, ball projection, folds of the scale, a checkpoint split, 20,000 features) gives the
iterates and counters recorded in ``scaled_record.npz``. Regenerate it only on purpose, with
``python tests/solver/scaled_record.py``, and list the change in docs/changelog.md (the last:
the sparse row dot's two partial sums, which changed the objective value ``fun`` of four runs
by rounding; the iterates were unchanged). ``scaled_checkpoint.npz`` is
a checkpoint file written by the same command; it restores and continues bit for bit."""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import pytest

from tests.solver import scaled_record

RUNS = dict(scaled_record.runs())


@pytest.fixture(scope="module")
def record() -> Any:
    with np.load(scaled_record.RECORD) as f:
        return {k: f[k] for k in f.files}


@pytest.mark.parametrize("name", list(RUNS))
def test_scaled_iterates_match_the_record(name: str, record: dict[str, np.ndarray]) -> None:
    got = scaled_record.flatten(name, *RUNS[name]())
    assert set(got) == {k for k in record if k.startswith(name + "/")}
    for key, want in record.items():
        if key.startswith(name + "/"):
            assert got[key].dtype == want.dtype and got[key].shape == want.shape, key
            assert np.array_equal(got[key], want), key


def test_checkpoint_file_continues_bit_for_bit(
        record: dict[str, np.ndarray]) -> None:
    """A checkpoint file written after 40 iterations restores into the
    driver and continues to the recorded end of the same split run."""
    name = f"{scaled_record.CHECKPOINT_RUN}/split"
    ws, res = scaled_record.continue_from_file(scaled_record.CHECKPOINT)
    got = scaled_record.flatten(name, ws + ws + ws, res)
    for key in (f"{name}/wlast", f"{name}/counters", f"{name}/fun"):
        assert np.array_equal(got[key], record[key]), key


def test_the_record_detects_a_one_ulp_change() -> None:
    w = np.linspace(-1.0, 1.0, 2000)
    ws = [w, w, w]
    res = type("R", (), {"n_iter": 1, "n_samples": 1, "n_grad_evals": 1, "fun": 0.0})()
    a = scaled_record.flatten("x", ws, res)
    w2 = w.copy()
    w2[1234] = np.nextafter(w2[1234], 2.0)       # not one of the stored entries
    b = scaled_record.flatten("x", [w, w, w2], res)
    assert not np.array_equal(a["x/wlast_sha256"], b["x/wlast_sha256"])
    assert a["x/wlast_sha256"] == np.array(hashlib.sha256(w.tobytes()).hexdigest())
