"""The command line in scripts: ``evaluate --json`` prints the metrics as one JSON object, and
``--quiet`` leaves stdout to the command's result and stderr to errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sqnopt.cli import main


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=300) > 0, 1, -1)
    (tmp_path / "d.svm").write_text("".join(
        f"{t} 1:{a:.4f} 2:{b:.4f} 3:{c:.4f}\n" for t, (a, b, c) in zip(y, X)))
    (tmp_path / "one_class.svm").write_text("".join(
        f"1 1:{a:.4f} 2:{b:.4f} 3:{c:.4f}\n" for a, b, c in X[:20]))
    return tmp_path


def test_evaluate_json_is_one_object_with_the_metrics(work: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "train", "d.svm", "--quiet")
    assert code == 0 and err == ""
    code, out, err = _run(capsys, "evaluate", "sqnopt_model.npz", "d.svm", "--json")
    assert code == 0 and err == "" and out.count("\n") == 1
    doc = json.loads(out)
    assert doc["model"] == "sqnopt_model.npz" and doc["n_samples"] == 300
    assert set(doc) == {"model", "data", "n_samples", "accuracy", "log_loss", "roc_auc",
                        "classes"}
    assert [c["label"] for c in doc["classes"]] == [-1.0, 1.0]
    assert sum(c["n_samples"] for c in doc["classes"]) == 300
    # the same numbers as the text report
    code, text, _ = _run(capsys, "evaluate", "sqnopt_model.npz", "d.svm")
    assert f"accuracy: {doc['accuracy']:.4f}" in text and f"ROC AUC:  {doc['roc_auc']:.4f}" in text
    assert f"log loss: {doc['log_loss']:.6f}" in text
    # undefined values are null, never NaN
    code, out, _ = _run(capsys, "evaluate", "sqnopt_model.npz", "one_class.svm", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["roc_auc"] is None and doc["classes"][0]["recall"] is None
    # an error: nothing on stdout, one line on stderr
    code, out, err = _run(capsys, "evaluate", "sqnopt_model.npz", "missing.svm", "--json")
    assert code == 1 and out == "" and err.startswith("sqnopt: error: ")


def test_quiet_leaves_only_results_and_errors(work: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    # a run with a warning to give (full-batch hinge cannot meet tol) and a progress bar asked
    args = ("train", "d.svm", "--preset", "gd", "--max-epochs", "2", "--progress", "always")
    code, out, err = _run(capsys, *args)
    assert code == 0 and "warning" in err and out
    code, out, err = _run(capsys, *args, "--quiet")
    assert (code, out, err) == (0, "", "")
    assert (work / "sqnopt_model.npz").exists() and (work / "sqnopt_history.json").exists()
    code, out, err = _run(capsys, "evaluate", "sqnopt_model.npz", "d.svm", "-q")
    assert code == 0 and err == "" and out.startswith("accuracy: ")
    assert "model:" not in out and "data:" not in out
    code, out, err = _run(capsys, "predict", "sqnopt_model.npz", "d.svm", "-o", "p.txt", "-q")
    assert (code, out, err) == (0, "", "") and len((work / "p.txt").read_text().split()) == 300
    code, out, err = _run(capsys, "train", "nope.svm", "--quiet")
    assert code == 1 and out == "" and err.startswith("sqnopt: error: data 'nope.svm'")
    # a diverged run still says so (exit status 3 and one line)
    code, out, err = _run(capsys, "train", "d.svm", "--step", "constant:eps=1e9", "--curvature",
                          "identity", "--gradient", "minibatch", "--quiet")
    assert code == 3 and out == "" and err.strip().startswith("sqnopt: the run diverged")


def test_quiet_plot(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib")
    _run(capsys, "train", "d.svm", "--quiet")
    code, out, err = _run(capsys, "plot", "-o", "h.png", "--quiet")
    assert (code, out, err) == (0, "", "") and (work / "h.png").exists()
