"""``sqnopt train`` / ``evaluate`` / ``predict`` with regression losses: the task detected from
the loss (or given with ``--task``), R^2 and RMSE instead of accuracy, model files with the
link."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sqnopt.cli import main
from sqnopt.model import LinearModel


def _write(path: Path, X: np.ndarray, y: np.ndarray) -> None:
    lines = [f"{t:.17g} " + " ".join(f"{j + 1}:{v:.17g}" for j, v in enumerate(row))
             for row, t in zip(X, y)]
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 4))
    s = X @ np.array([0.5, -0.3, 0.0, 0.2]) + 0.4
    _write(tmp_path / "real.svm", X, s + 0.1 * rng.normal(size=200))
    _write(tmp_path / "counts.svm", X, rng.poisson(np.exp(s)).astype(np.float64))
    return tmp_path


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_train_evaluate_predict_regression(data: Path, capsys: pytest.CaptureFixture[str]
                                           ) -> None:
    code, out, err = _run(capsys, "train", "real.svm", "--task", "regression", "--model",
                          "m.npz", "--progress", "never")
    assert code == 0, err
    assert "real-valued targets" in out and "squared_error" in out and "train R^2: 0.9" in out
    model = LinearModel.load(data / "m.npz")
    assert model.strategy == "regression" and model.link == "identity"
    code, out, _ = _run(capsys, "evaluate", "m.npz", "real.svm", "--json")
    metrics = json.loads(out)
    assert code == 0 and metrics["r2"] > 0.9 and metrics["rmse"] < 0.2
    code, out, _ = _run(capsys, "predict", "m.npz", "real.svm")
    pred = np.array([float(v) for v in out.split()])
    assert code == 0 and pred.shape == (200,)


def test_poisson_detected_from_the_loss(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "train", "counts.svm", "--loss", "poisson", "--model",
                          "p.npz", "--progress", "never")
    assert code == 0, err
    assert "real-valued targets" in out
    assert LinearModel.load(data / "p.npz").link == "log"
    code, out, _ = _run(capsys, "evaluate", "p.npz", "counts.svm")
    assert code == 0 and "log link" in out and "mean Poisson deviance" in out
    code, out, _ = _run(capsys, "predict", "p.npz", "counts.svm")
    assert min(float(v) for v in out.split()) > 0          # exp of the scores


@pytest.mark.parametrize("argv, match", [
    (["--task", "regression", "--loss", "logloss"], "fits classes"),
    (["--task", "classification", "--loss", "huber"], "fits real-valued targets"),
    (["--loss", "squared_error", "--class-weight", "balanced"], "no classes"),
])
def test_task_and_loss_must_agree(data: Path, capsys: pytest.CaptureFixture[str], argv,
                                  match: str) -> None:
    code, _, err = _run(capsys, "train", "real.svm", *argv, "--model", "x.npz")
    assert code != 0 and match in err and "Traceback" not in err
    assert not (data / "x.npz").exists()
