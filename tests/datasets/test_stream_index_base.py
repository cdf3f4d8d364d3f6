"""``stream_svmlight(zero_based="auto")`` reads a file with the index base
:func:`load_svmlight` finds for it (one-based unless an index 0 occurs), so ``sqnopt train
--chunk-size`` reads the zero-based files scikit-learn's ``dump_svmlight_file`` writes by
default, as the same command without ``--chunk-size`` does; a streamed test file takes the
training file's base."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt.cli import main
from sqnopt.datasets import load_svmlight, stream_svmlight
from sqnopt.datasets import _io


def _whole(stream: object) -> tuple[sp.csr_matrix, np.ndarray]:
    parts = list(stream)  # type: ignore[call-overload]
    return sp.vstack([X for X, _ in parts]).tocsr(), np.concatenate([y for _, y in parts])


ZERO = "1 0:1.5 2:2\n0 1:-1\n1 0:3 1:1 2:0.5\n0 2:4\n"
ONE = "1 1:1.5 3:2\n0 2:-1\n1 1:3 2:1 3:0.5\n0 3:4\n"


@pytest.mark.parametrize("text", [ZERO, ONE], ids=["zero-based", "one-based"])
@pytest.mark.parametrize("python", [False, True], ids=["compiled", "python"])
def test_auto_stream_equals_the_file_read_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                text: str, python: bool) -> None:
    path = tmp_path / "d.svm"
    path.write_text(text)
    if python:  # the pure-Python scan and chunks, the reference twin
        monkeypatch.setattr(_io, "_engine", lambda: None)
    X, y = load_svmlight(path)
    stream = stream_svmlight(path, chunk_size=3, zero_based="auto", prefetch=0)
    assert stream.n_features == X.shape[1] == 3
    Xs, ys = _whole(stream)
    assert (Xs != X).nnz == 0 and np.array_equal(ys, y)
    assert stream.indices_zero_based is (text is ZERO)  # type: ignore[attr-defined]


def test_auto_resolves_without_a_scan_when_width_and_classes_are_given(tmp_path: Path) -> None:
    path = tmp_path / "d.svm"
    path.write_text(ZERO)
    stream = stream_svmlight(path, chunk_size=2, n_features=3, classes=[0, 1],
                             zero_based="auto", prefetch=0)
    Xs, _ = _whole(stream)
    assert (Xs != load_svmlight(path)[0]).nnz == 0


def test_a_bad_zero_based_value_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "d.svm"
    path.write_text(ZERO)
    with pytest.raises(ValueError, match="zero_based must be True, False or 'auto'"):
        stream_svmlight(path, zero_based="yes")  # type: ignore[arg-type]


def test_cli_streams_a_zero_based_file_and_its_test_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rng = np.random.default_rng(0)
    lines = []
    for i in range(60):
        x = rng.normal(size=3)
        lines.append(f"{int(x[0] > 0)} 0:{x[0]:.4f} 1:{x[1]:.4f} 2:{x[2]:.4f}")
    train = tmp_path / "train.svm"
    train.write_text("\n".join(lines) + "\n")
    test = tmp_path / "test.svm"  # zero-based too, without an index 0
    test.write_text("".join(f"{i % 2} 1:{i % 3 - 1} 2:0.5\n" for i in range(10)))
    code = main(["train", str(train), "--chunk-size", "16", "--test", str(test),
                 "--max-epochs", "2", "--model", str(tmp_path / "m.npz"),
                 "--history", str(tmp_path / "h.json"), "--progress", "never"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "60 samples x 3 features" in out and "10 samples of" in out
