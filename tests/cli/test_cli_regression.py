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


# ---- tables and streams of real-valued targets --------------------------------------------

def _write_csv(path: Path, X: np.ndarray, y: np.ndarray) -> None:
    header = ",".join(["target", *(f"x{j}" for j in range(X.shape[1]))])
    rows = [",".join(repr(float(v)) for v in (t, *row)) for row, t in zip(X, y)]
    path.write_text("\n".join([header, *rows]) + "\n")


@pytest.fixture
def tables(data: Path) -> Path:
    """The fixture's problems again as CSV (continuous targets such as 0.5, 1.5 and counts)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 4))
    s = X @ np.array([0.5, -0.3, 0.0, 0.2]) + 0.4
    _write_csv(data / "real.csv", X, s + 0.1 * rng.normal(size=200))
    _write_csv(data / "counts.csv", X, rng.poisson(np.exp(s)).astype(np.float64))
    return data


def _targets(loss: str) -> str:
    return "counts" if loss == "poisson" else "real"


@pytest.mark.parametrize("fmt", ["csv", "svm"])
@pytest.mark.parametrize("loss", ["squared_error", "huber", "poisson"])
def test_train_regression_on_tables_and_svmlight(tables: Path, capsys: pytest.CaptureFixture[str],
                                                 loss: str, fmt: str) -> None:
    """A table whose label column holds continuous values trains with a regression loss (the
    loss tells the loader that the targets are real numbers); evaluate reads it the same way."""
    name = f"{_targets(loss)}.{fmt}"
    code, out, err = _run(capsys, "train", name, "--loss", loss, "--model", "m.npz",
                          "--test", name, "--progress", "never")
    assert code == 0, err
    assert "real-valued targets" in out and "train R^2:" in out and "test R^2:" in out
    r2 = float(out.split("train R^2:")[1].split()[0])
    assert r2 > (0.1 if loss == "poisson" else 0.9)
    code, out, err = _run(capsys, "evaluate", "m.npz", name, "--json")
    assert code == 0, err
    assert json.loads(out)["r2"] == pytest.approx(r2, abs=1e-4)


def test_classification_of_a_continuous_table_is_still_refused(
        tables: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "train", "real.csv", "--model", "x.npz")
    assert code != 0 and "look continuous" in err and "--loss squared_error" in err
    assert not (tables / "x.npz").exists()


@pytest.mark.parametrize("chunked", [False, True], ids=["in-memory", "streamed"])
@pytest.mark.parametrize("fmt", ["csv", "svm"])
def test_poisson_refuses_a_negative_target_naming_the_sample(
        tables: Path, capsys: pytest.CaptureFixture[str], fmt: str, chunked: bool) -> None:
    path = tables / f"counts.{fmt}"
    lines = path.read_text().splitlines()
    first = 1 if fmt == "csv" else 0               # the header
    row = lines[first + 37].split("," if fmt == "csv" else " ", 1)
    lines[first + 37] = ("," if fmt == "csv" else " ").join(["-3", row[1]])
    path.write_text("\n".join(lines) + "\n")
    extra = ["--chunk-size", "50"] if chunked else []
    code, _, err = _run(capsys, "train", path.name, "--loss", "poisson", *extra,
                        "--model", "x.npz", "--progress", "never")
    assert code != 0 and "Traceback" not in err
    assert "targets >= 0" in err and ("y[37] = -3" in err or "sample 37 " in err), err


@pytest.mark.parametrize("fmt", ["csv", "svm"])
@pytest.mark.parametrize("loss", ["squared_error", "huber", "poisson"])
def test_chunk_size_with_a_regression_loss(data: Path, capsys: pytest.CaptureFixture[str],
                                           loss: str, fmt: str) -> None:
    """--chunk-size streams real-valued targets: the large-data recipe, the streamed test
    set's R^2 and RMSE, and a model that evaluate reads."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(3000, 4))
    s = X @ np.array([0.5, -0.3, 0.0, 0.2]) + 0.4
    y = (rng.poisson(np.exp(s)).astype(np.float64) if loss == "poisson"
         else s + 0.1 * rng.normal(size=3000))
    name = f"big.{fmt}"
    (_write_csv if fmt == "csv" else _write)(data / name, X, y)
    code, out, err = _run(capsys, "train", name, "--loss", loss, "--chunk-size", "500",
                          "--max-epochs", "5", "--test", name, "--model", "m.npz",
                          "--progress", "never")
    assert code == 0, err
    assert "real-valued targets" in out and "streamed" in out and "test R^2:" in out
    streamed_r2 = float(out.split("test R^2:")[1].split()[0])
    model = LinearModel.load(data / "m.npz")
    assert model.strategy == "regression"
    code, out, err = _run(capsys, "evaluate", "m.npz", name, "--json")
    assert code == 0, err
    metrics = json.loads(out)
    assert metrics["n_samples"] == 3000
    assert metrics["r2"] == pytest.approx(streamed_r2, abs=1e-4)   # the same metric, streamed
    assert metrics["r2"] > (0.1 if loss == "poisson" else 0.9)
