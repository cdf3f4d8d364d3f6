"""``sqnopt train --penalty {l2,l1,elasticnet} --l1-ratio R``: in memory the composite solve
(the same model as ``SQNClassifier(penalty=...).fit``), with ``--chunk-size`` the large-data
recipe's FTRL-Proximal AdaGrad (a sparse model), and the errors that name the fix."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sqnopt import SQNClassifier
from sqnopt.cli import main
from sqnopt.model import LinearModel


def _write(path: Path, X: np.ndarray, y: np.ndarray) -> None:
    lines = []
    for row, t in zip(X, y):
        feats = " ".join(f"{j + 1}:{v:.17g}" for j, v in enumerate(row) if v != 0.0)
        lines.append(f"{int(t)} {feats}")
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[np.ndarray, np.ndarray]:
    """Sparse rows with 5 informative features of 40."""
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 40)) * (rng.random((3000, 40)) < 0.2)
    w = np.zeros(40)
    w[:5] = [2.0, -1.5, 1.0, -1.0, 0.8]
    y = np.where(rng.random(3000) < 1 / (1 + np.exp(-(X @ w))), 1, 0)
    _write(tmp_path / "train.svm", X, y)
    return X, y


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_in_memory_l1_is_the_estimators_composite_fit(
        data: tuple[np.ndarray, np.ndarray], capsys: pytest.CaptureFixture[str]) -> None:
    X, y = data
    code, out, err = _run(capsys, "train", "train.svm", "--penalty", "l1", "--alpha", "0.01",
                          "--model", "m.npz", "--progress", "never")
    assert code == 0, err
    assert "l1(alpha=0.01)" in out and "(full batch)" in out and "weights nonzero" in out
    model = LinearModel.load("m.npz")
    est = SQNClassifier(penalty="l1", alpha=0.01).fit(X, y)
    np.testing.assert_allclose(model.coef, est.coef_, rtol=1e-10, atol=1e-12)
    assert 0 < np.count_nonzero(model.coef) < 40
    code, out, err = _run(capsys, "train", "train.svm", "--penalty", "elasticnet",
                          "--l1-ratio", "0.5", "--alpha", "0.01", "--curvature", "owlqn",
                          "--model", "e.npz", "--progress", "never")
    assert code == 0, err
    assert "elasticnet(alpha=0.01, l1_ratio=0.5)" in out and "owlqn" in out


def test_streamed_l1_is_sparse(data: tuple[np.ndarray, np.ndarray],
                               capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "train", "train.svm", "--penalty", "l1", "--alpha", "0.01",
                          "--chunk-size", "500", "--max-epochs", "3", "--model", "s.npz",
                          "--progress", "never", "--seed", "3")
    assert code == 0, err
    assert "ftrl=True" in out and "l1=0.01" in out
    coef = LinearModel.load("s.npz").coef.ravel()
    assert np.count_nonzero(coef) <= 10         # the 5 informative features, and few more
    assert np.all(coef[:5] != 0.0)
    # same seed, same model
    _run(capsys, "train", "train.svm", "--penalty", "l1", "--alpha", "0.01", "--chunk-size",
         "500", "--max-epochs", "3", "--model", "s2.npz", "--progress", "never", "--seed", "3")
    np.testing.assert_array_equal(LinearModel.load("s2.npz").coef.ravel(), coef)


@pytest.mark.parametrize("argv, message", [
    (["--penalty", "elasticnet"], "needs --l1-ratio"),
    (["--penalty", "l1", "--l1-ratio", "0.5"], "drop it"),
    (["--l1-ratio", "0.5"], "--penalty elasticnet"),
    (["--penalty", "l1", "--curvature", "lbfgs"], "owlqn"),
    (["--penalty", "l1", "--step", "constant"], "drop --step"),
    (["--penalty", "l1", "--chunk-size", "100", "--curvature", "owlqn"], "drop --chunk-size"),
    (["--penalty", "l1", "--chunk-size", "100", "--schedule", "fixed"], "drop --schedule"),
    (["--penalty", "l1", "--average"], "drop it"),
    (["--penalty", "l1", "--projection", "l2ball"], "--projection"),
])
def test_bad_combinations_name_the_fix(data: tuple[np.ndarray, np.ndarray],
                                       capsys: pytest.CaptureFixture[str], argv: list[str],
                                       message: str) -> None:
    code, _, err = _run(capsys, "train", "train.svm", "--progress", "never", *argv)
    assert code != 0
    assert message in err


def test_l1_ratio_must_be_a_fraction(data: tuple[np.ndarray, np.ndarray],
                                     capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["train", "train.svm", "--penalty", "elasticnet", "--l1-ratio", "1.5"])
    assert "[0, 1]" in capsys.readouterr().err
