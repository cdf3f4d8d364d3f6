"""Fuzzed command lines (``sqnopt train|evaluate|predict|plot|list|demo`` with valid and hostile
options, component specs, data files, model files, histories and output paths): exit 0, 1
(one ``sqnopt: error:`` line) or 2 (argparse usage); never a traceback, an internal error, a
warning, a crash or a hang; a model written with exit 0 loads."""

from __future__ import annotations

import io
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings

from tests.fuzz import strategies as S
from tests.fuzz._worker import Raised, Worker

pytestmark = pytest.mark.fuzz


@settings(max_examples=max(5, int(settings.default.max_examples * 3)))
@given(argv=S.argv(), history=S.history_json())
def test_command_line(worker: Worker, argv: list[str], history: bytes) -> None:
    r = worker.call("cli", argv=argv, files={"fz.json": history})
    assert not isinstance(r, Raised), \
        f"an exception escaped main(): {r.kind}: {r.message}\n{r.trace}"
    code, out, err = r["code"], r["out"], r["err"]
    assert code in (0, 1, 2, 3), (code, err)      # 3: the training run diverged
    assert "Traceback" not in err and "Traceback" not in out, err
    assert "internal error" not in err, err
    assert not r["warnings"], r["warnings"]
    if code == 1:
        assert err.startswith("sqnopt: error: ") and err.count("\n") == 1, err
    if code == 2:
        assert "usage:" in err and "error:" in err, err
    if code == 3:
        assert "sqnopt: warning: sqnopt diverged" in err and "the run diverged" in err, err
    if code in (0, 3) and argv[0] == "train" and "-h" not in argv:
        from sqnopt.model import LinearModel

        name = argv[argv.index("--model") + 1] if "--model" in argv else "sqnopt_model.npz"
        assert name in r["written"], (name, sorted(r["written"]))
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "model.npz"
            path.write_bytes(r["written"][name])
            assert np.all(np.isfinite(LinearModel.load(path).coef))


def test_cli_worker_smoke(worker: Worker) -> None:
    """A training run with exit 0 through the same path, so the fuzz oracle is not vacuous."""
    r = worker.call("cli", argv=["train", "ok.svm", "--max-epochs", "1", "--progress", "never",
                                 "--model", "out.npz"])
    assert r["code"] == 0, r["err"]
    assert "out.npz" in r["written"] and "sqnopt_history.json" in r["written"]
    assert io.BytesIO(r["written"]["out.npz"]).read(2) == b"PK"
