"""The command line on bad input, bad paths and unwritable outputs: a non-zero exit and one
line on stderr, never a traceback; output paths are checked before any data is read.

Before: an svmlight index of 2,000,000,000 made ``sqnopt train`` take 14.6 GB and run on;
``99999999999999999999`` gave an ``OverflowError`` traceback, a corrupt ``.xz`` an ``LZMAError``
one, ``--model /dev/null`` a ``struct.error`` one (after training); ``--chunk-size 0`` was
silently ignored; ``sqnopt plot ... -o /nonexistent_dir/p.png`` exited 0 (it created the
directory); an empty data file's error did not name the file.
"""

from __future__ import annotations

import json
import lzma
import os
from pathlib import Path

import pytest

from sqnopt.cli import main

SVM = "".join(f"{1 if i % 3 else -1} 1:{i % 5} 2:{(i * 7) % 3} 4:1\n" for i in range(30))
TRAIN = ["--max-epochs", "1", "--progress", "never"]


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ok.svm").write_text(SVM)
    (tmp_path / "huge.svm").write_text("1 1:1 3:2\n-1 2000000000:1\n")
    (tmp_path / "overflow.svm").write_text("1 1:1\n-1 99999999999999999999:1\n")
    (tmp_path / "empty.svm").write_text("")
    good = lzma.compress(SVM.encode())
    (tmp_path / "corrupt.xz").write_bytes(good[:len(good) // 2] + bytes(64))
    (tmp_path / "bad_label.svm").write_text("1 1:1\nspam 2:1\n")
    (tmp_path / "adir").mkdir()
    return tmp_path  # missing directories are named relative to it, never at the root


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse usage errors
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


# (argv, exit code, expected fragment of the error line)
CASES = {
    "huge_index": (["train", "huge.svm", *TRAIN], 1, "huge.svm: line 2: the feature index "
                   "2000000000 makes the data 2000000000 features wide"),
    "overflow_index": (["train", "overflow.svm", *TRAIN], 1,
                       "overflow.svm: line 2: the feature index '99999999999999999999' is too"),
    "corrupt_xz": (["train", "corrupt.xz", *TRAIN], 1, "corrupt.xz: line "),
    "corrupt_xz_stream": (["train", "corrupt.xz", "--chunk-size", "5", *TRAIN], 1,
                          "corrupt.xz: line "),
    "empty": (["train", "empty.svm", *TRAIN], 1, "empty.svm: no samples found"),
    "empty_stream": (["train", "empty.svm", "--chunk-size", "5", *TRAIN], 1,
                     "empty.svm: no samples found"),
    "bad_label_stream": (["train", "bad_label.svm", "--chunk-size", "5", *TRAIN], 1,
                         "bad_label.svm: line 2: the label 'spam' is not a number"),
    "model_dev_null": (["train", "ok.svm", "--model", "/dev/null", *TRAIN], 1,
                       "--model '/dev/null' is not a regular file"),
    "model_in_missing_dir": (["train", "ok.svm", "--model", "nope/m.npz", *TRAIN], 1,
                             "the directory 'nope' does not exist"),
    "model_is_dir": (["train", "ok.svm", "--model", "adir", *TRAIN], 1, "is a directory"),
    "history_in_missing_dir": (["train", "ok.svm", "--history", "nonexistent_dir/h.json",
                                *TRAIN], 1, "--history 'nonexistent_dir/h.json'"),
    "model_equals_history": (["train", "ok.svm", "--model", "x", "--history", "x", *TRAIN], 1,
                             "--model and --history name the same file"),
    "chunk_size_0": (["train", "ok.svm", "--chunk-size", "0", *TRAIN], 2,
                     "argument --chunk-size: expected a positive integer, got '0'"),
    "max_epochs_nan": (["train", "ok.svm", "--max-epochs", "nan"], 2, "--max-epochs"),
    "tol_text": (["train", "ok.svm", "--tol", "abc", *TRAIN], 2, "argument --tol"),
    "n_features_huge": (["train", "ok.svm", "--n-features", "3000000000", *TRAIN], 2,
                        "--n-features"),
    "class_weight_text": (["train", "ok.svm", "--class-weight", "1=heavy", *TRAIN], 1,
                          "--class-weight: the weight 'heavy' of label '1' is not a number"),
    "missing_data": (["train", "missing.svm", *TRAIN], 1, "data 'missing.svm': no such file"),
    "data_is_dir": (["train", "adir", *TRAIN], 1, "'adir' is a directory"),
    "plot_missing_dir": (["plot", "h.json", "-o", "nonexistent_dir/p.png"], 1,
                         "-o/--output 'nonexistent_dir/p.png': the directory "
                         "'nonexistent_dir' does not exist"),
    "predict_missing_dir": (["predict", "m.npz", "ok.svm", "-o", "nonexistent_dir/p.txt"], 1,
                            "the directory 'nonexistent_dir' does not exist"),
    "predict_dev_full": (["predict", "m.npz", "ok.svm", "-o", "/dev/full"], 1,
                         "not a regular file"),
    "demo_too_big": (["demo", "--n-samples", "100000", "--n-features", "100000"], 1,
                     "the demo's dense data is limited"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_invocation_is_one_error_line(workdir: Path, capsys: pytest.CaptureFixture[str],
                                          case: str) -> None:
    argv, expected_code, fragment = CASES[case]
    if argv[0] in ("plot", "predict"):  # a model and a history to point at
        assert main(["train", "ok.svm", *TRAIN, "--model", "m.npz", "--history", "h.json"]) == 0
        capsys.readouterr()
    code, out, err = _run(capsys, *argv)
    assert code == expected_code, (out, err)
    assert "Traceback" not in err and "internal error" not in err
    assert fragment in err
    if expected_code == 1:
        assert err.startswith("sqnopt: error: ") and err.count("\n") == 1
    if argv[0] == "train" and case.startswith(("model", "history")):
        assert "data:" not in out  # refused before the data was read
    assert not any(p.name.startswith(".") and p.name.endswith(".tmp") for p in workdir.iterdir())


def test_damaged_history_files(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = {"format": "sqnopt.history", "runs": [{"name": "", "history": {
        "iteration": [0, 1], "samples": [0, 5], "effective_passes": [0, 0.5],
        "time": [0, 0.1], "objective": [0.7, 0.6]}}]}
    broken = {
        "not_json.json": "{oops",
        "list.json": "[1, 2]",
        "no_runs.json": json.dumps({"format": "sqnopt.history", "runs": []}),
        "run_not_dict.json": json.dumps({"format": "sqnopt.history", "runs": [3]}),
        "missing_column.json": json.dumps({**good, "runs": [{"history": {"objective": [1.0]}}]}),
        "text_column.json": json.dumps({**good, "runs": [{"history": {
            **good["runs"][0]["history"], "objective": ["a", "b"]}}]}),  # type: ignore[index]
        "ragged.json": json.dumps({**good, "runs": [{"history": {
            **good["runs"][0]["history"], "objective": [1.0]}}]}),  # type: ignore[index]
        "binary.json": b"\xff\xfe\x00garbage",
    }
    for name, content in broken.items():
        path = workdir / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
        code, _, err = _run(capsys, "plot", name, "-o", "p.png")
        assert code == 1 and err.startswith("sqnopt: error: ") and err.count("\n") == 1, err
        assert name in err and "internal error" not in err
    (workdir / "good.json").write_text(json.dumps(good))
    pytest.importorskip("matplotlib")
    code, out, err = _run(capsys, "plot", "good.json", "-o", "p.png")
    assert code == 0, err


def test_unexpected_errors_are_one_line_too(workdir: Path, capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    import sqnopt.cli as cli

    def broken(args: object) -> int:
        raise KeyError("a bug")

    monkeypatch.setattr(cli, "_cmd_list", broken)
    monkeypatch.delenv("SQNOPT_DEBUG", raising=False)
    code, _, err = _run(capsys, "list")
    assert code == 1 and err.count("\n") == 1
    assert "internal error: KeyError: 'a bug'" in err and "SQNOPT_DEBUG=1" in err
    monkeypatch.setenv("SQNOPT_DEBUG", "1")
    with pytest.raises(KeyError):
        main(["list"])
    assert os.environ["SQNOPT_DEBUG"] == "1"


def _history(objective: list[float], x: list[float], data: object = "d") -> str:
    n = len(objective)
    return json.dumps({"format": "sqnopt.history", "label": "a", "data": data, "runs": [
        {"name": "", "history": {"iteration": list(range(n)), "samples": x,
                                 "effective_passes": x, "time": x, "objective": objective}}]})


@pytest.mark.parametrize("objective,x,data", [
    ([1e308, 1e-308], [1.0, 5.0], "d"),          # extreme ranges (the removed basic renderer
    ([5e-324, 1e308], [1.0, 5.0], "d"),          # overflowed, or divided by zero, on these)
    ([1.0, 0.5, 1.0], [1.0, 0.0, 5e-324], "d"),  # matplotlib's log ticker on a subnormal
    ([1.0, 0.5], [4.8e-260, 5.6e5], "d"),        # matplotlib: ~265 decades
    ([0.5, 0.4], [1.0, 5.0], 3),                 # "data" not a string (the title)
    ([-1e308, 1e308], [1.0, 2.0], "d"),
])
def test_extreme_histories_plot_or_fail_in_one_line(
        workdir: Path, capsys: pytest.CaptureFixture[str],
        objective: list[float], x: list[float], data: object) -> None:
    """Found by the fuzz suite: each of these was an 'internal error' (a traceback before)."""
    pytest.importorskip("matplotlib")
    (workdir / "e.json").write_text(_history(objective, x, data))
    for flags in ([], ["--linear-y"]):
        code, out, err = _run(capsys, "plot", "e.json", "-o", "e.png", *flags)
        assert code in (0, 1) and "internal error" not in err and "Traceback" not in err, err
        if code == 1:
            assert err.startswith("sqnopt: error: ") and err.count("\n") == 1, err
        else:
            assert err == "" and (workdir / "e.png").read_bytes()[:4] == b"\x89PNG"


def test_a_history_with_nothing_to_plot_is_an_error_naming_the_file(
        workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An objective NaN throughout used to write an empty plot, exit 0."""
    pytest.importorskip("matplotlib")
    (workdir / "n.json").write_text(_history([float("nan")] * 3, [0.0, 1.0, 2.0]))
    code, _, err = _run(capsys, "plot", "n.json", "-o", "n.png")
    assert code == 1 and not (workdir / "n.png").exists()
    assert err == ("sqnopt: error: n.json: nothing to plot: no history has a finite 'objective' "
                   "at a finite 'samples' (a logarithmic axis shows positive values only: pass "
                   "--linear-y)\n")
