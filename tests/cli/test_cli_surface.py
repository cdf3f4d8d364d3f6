"""The command line as a new user meets it: help, version, presets, loss forms, CSV/TSV tables,
feature scaling stored in the model, feature-count checks, and the streaming progress total."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sqnopt.cli import build_parser, main
from sqnopt.model import LinearModel
from sqnopt.presets import PRESETS

QUICK = ["--max-epochs", "2", "--progress", "never"]


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse: --help, --version, usage errors
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory with a mixed CSV table (numeric + categorical columns, string labels), a
    numeric TSV, and a small svmlight file."""
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    n = 300
    age = rng.integers(18, 80, n)
    income = rng.normal(50.0, 20.0, n)
    city = rng.choice(["paris", "rome", "oslo"], n)
    score = 0.08 * (age - 48) + 0.05 * (income - 50) + 2.0 * (city == "rome") - 0.6
    label = np.where(score + rng.normal(0, 0.3, n) > 0, "yes", "no")
    rows = [f"{a},{i:.2f},{c},{y}" for a, i, c, y in zip(age, income, city, label)]
    (tmp_path / "people.csv").write_text("age,income,city,label\n" + "\n".join(rows) + "\n")
    (tmp_path / "people_test.csv").write_text("age,income,city,label\n"
                                              + "\n".join(rows[:60]) + "\n")
    (tmp_path / "unlabelled.csv").write_text(
        "age,income,city\n" + "\n".join(r.rsplit(",", 1)[0] for r in rows[:10]) + "\n")
    (tmp_path / "num.tsv").write_text("a\tb\toutcome\n" + "".join(
        f"{a}\t{i:.2f}\t{1 if y == 'yes' else 0}\n" for a, i, y in zip(age, income, label)))
    svm = "".join(f"{1 if s > 0 else -1} 1:{a / 80:.3f} 2:{i / 100:.3f} 3:{float(c == 'rome')}\n"
                  for a, i, c, s in zip(age, income, city, score))
    (tmp_path / "small.svm").write_text(svm)
    return tmp_path


# ------------------------------------------------------------------ help, version, bare
def test_bare_sqnopt_prints_help_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys)
    assert code == 0 and err == ""
    assert out.startswith("usage: sqnopt") and "train" in out and "evaluate" in out


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    import sqnopt

    code, out, _ = _run(capsys, "--version")
    assert code == 0 and out.strip() == f"sqnopt {sqnopt.__version__}"


@pytest.mark.parametrize("command", [None, "train", "evaluate", "predict", "plot", "list",
                                     "demo"])
def test_help_names_only_real_defaults(capsys: pytest.CaptureFixture[str],
                                       command: str | None) -> None:
    code, out, _ = _run(capsys, *([command] if command else []), "--help")
    assert code == 0 and "usage: sqnopt" in out
    assert "(default: None)" not in out and "(default: False)" not in out
    if command == "train":
        flat = " ".join(out.split())
        assert "(default: 0.0001)" in flat and "(default: a9a)" in flat


# ------------------------------------------------------------------ every component reachable
def test_list_shows_presets_and_gradients(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "list", "--kind", "preset")
    assert code == 0 and all(f"  {name}(" in out for name in PRESETS)
    code, out, _ = _run(capsys, "list", "--kind", "gradient")
    assert code == 0 and all(f"  {name}(" in out for name in ("minibatch", "svrg", "saga"))


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_preset_trains_from_the_command_line(work: Path, capsys: pytest.CaptureFixture[str],
                                                   preset: str) -> None:
    from sqnopt.presets import make

    # the variance-reduced presets' constant step, given (their default is from the data)
    required = {"eta": 0.05} if preset in ("saga", "svrg", "svrg_lbfgs") else {}
    spec = preset + "".join(f":{k}={v}" for k, v in required.items())
    code, out, err = _run(capsys, "train", "small.svm", "--preset", spec, *QUICK)
    assert code in (0, 3), err                 # 3: the divergence monitor stopped the run
    model_line = next(line for line in out.splitlines() if line.startswith("model:"))
    solver = make(preset, **required)
    for part in (solver.curvature.name, solver.schedule.name, solver.step.name):
        assert part in model_line, (part, model_line)
    assert LinearModel.load(work / "sqnopt_model.npz").n_features == 3


def test_preset_parameters_and_overrides(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "train", "small.svm", "--preset", "sgd:eps0=0.05,batch_size=4",
                          "--loss", "logloss", *QUICK)
    assert code == 0, err
    assert "logloss(" in out and "fixed(size=4)" in out and "inverse_sqrt(eps0=0.05)" in out
    code, out, err = _run(capsys, "train", "small.svm", "--preset", "lbfgs",
                          "--curvature", "full_bfgs", *QUICK)
    assert code == 0, err
    assert "full_bfgs(" in out and "full()" in out and "wolfe(" in out
    for argv, fragment in (
            (["--preset", "nope"], "unknown preset 'nope'; presets: adagrad"),
            (["--preset", "pegasos", "--loss", "logloss"], "--preset pegasos fixes its loss"),
            (["--preset", "sgd:colour=1"], "its parameters: objective, eps0"),
            (["--preset", "sgd:lam=1"], "give the regularisation with --alpha")):
        code, _, err = _run(capsys, "train", "small.svm", *argv, *QUICK)
        assert code == 1 and fragment in err and err.count("\n") == 1, err


def test_schedule_auto_and_the_loss_form_sqb_needs(work: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "train", "small.svm", "--loss", "logloss", "--curvature",
                          "quadratic_bound", "--schedule", "auto", "--step", "auto", *QUICK)
    assert code == 0, err
    assert ("loss:  logloss is solved in its binary_logistic form (the same objective), which "
            "provides the quadratic_bound capability quadratic_bound needs") in out
    assert "model: binary_logistic(" in out and "geometric(b1=100.0, rate=1.5" in out
    code, _, err = _run(capsys, "train", "small.svm", "--loss", "hinge", "--curvature",
                        "quadratic_bound", *QUICK)
    assert code == 1 and err.count("\n") == 1
    assert ("needs a loss with the capability 'quadratic_bound', which hinge has in no form; "
            "losses that work with it:") in err and "logloss (solved as binary_logistic)" in err
    code, _, err = _run(capsys, "train", "small.svm", "--loss", "hinge", "--curvature", "lbfgs",
                        *QUICK)
    assert code == 1 and "'smooth'" in err and "squared_hinge" in err


# ------------------------------------------------------------------ CSV / TSV
def test_csv_with_categorical_columns_train_evaluate_predict(
        work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "train", "people.csv", "--test", "people_test.csv",
                          "--progress", "never")
    assert code == 0, err
    assert "label column 'label'; 2 numeric, 1 categorical (onehot) columns" in out
    assert "300 samples x 6 features, 2 classes" in out     # 2 numeric + 3 cities + "other"
    assert float(out.split("train accuracy:")[1].split()[0]) > 0.85
    model = LinearModel.load(work / "sqnopt_model.npz")
    assert model.classes.tolist() == ["no", "yes"]
    spec = model.info["features"]
    assert spec["format"] == "csv" and spec["numeric"] == ["age", "income"]
    assert spec["categorical"] == ["city"] and set(spec["vocabularies"]["city"]) == {
        "oslo", "paris", "rome"}
    test_acc = float(out.split("test accuracy:")[1].split()[0])
    code, out, err = _run(capsys, "evaluate", "sqnopt_model.npz", "people_test.csv")
    assert code == 0, err
    assert f"accuracy: {test_acc:.4f}" in out
    code, out, err = _run(capsys, "predict", "sqnopt_model.npz", "unlabelled.csv")  # no label
    assert code == 0, err
    assert len(out.split()) == 10 and set(out.split()) <= {"no", "yes"}


def test_csv_target_option_hashing_and_tsv_detection(work: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "train", "num.tsv", *QUICK)     # no label/target/y/class
    assert code == 1 and "no label column" in err and "pass --target outcome" in err
    code, out, err = _run(capsys, "train", "num.tsv", "--target", "outcome", *QUICK)
    assert code == 0, err
    assert "label column 'outcome'; 2 numeric columns" in out and "x 2 features" in out
    code, out, err = _run(capsys, "train", "people.csv", "--encoding", "hash", *QUICK)
    assert code == 0, err
    assert "1 categorical (hash)" in out
    assert LinearModel.load(work / "sqnopt_model.npz").n_features == 2 + 2**13
    code, out, err = _run(capsys, "train", "people.csv", "--target", "city", *QUICK)
    assert code == 0, err
    assert "3 classes" in out                   # any column can be the label


def test_csv_errors_name_the_problem(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (work / "gap.csv").write_text("a,b,label\n1,2,0\n3,,1\n")
    (work / "ragged.csv").write_text("a,b,label\n1,2,0\n3,4\n")
    (work / "dup.csv").write_text("a,a,label\n1,2,0\n")
    for name, fragment in (("gap.csv", "gap.csv: line 3: the numeric column 'b' is empty"),
                           ("ragged.csv", "ragged.csv: line 3 has 2 fields, the header 3"),
                           ("dup.csv", "names the columns ['a'] twice")):
        code, _, err = _run(capsys, "train", name, *QUICK)
        assert code == 1 and fragment in err and err.count("\n") == 1, err
    code, _, _ = _run(capsys, "train", "people.csv", *QUICK)
    (work / "other.csv").write_text("age,height,city,label\n30,1.8,rome,yes\n")
    code, _, err = _run(capsys, "evaluate", "sqnopt_model.npz", "other.csv")
    assert code == 1 and "the columns differ from the training table's" in err
    assert "missing ['income']" in err and "not in the model ['height']" in err


# ------------------------------------------------------------------ --scale
def test_scale_dense_is_stored_and_applied_by_evaluate_and_predict(
        work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "train", "num.tsv", "--target", "outcome", "--scale",
                          "--test", "num.tsv", "--progress", "never")
    assert code == 0, err
    assert "scale: standardized 2 columns (dense data)" in out
    train_acc = float(out.split("train accuracy:")[1].split()[0])
    assert float(out.split("test accuracy:")[1].split()[0]) == train_acc
    model = LinearModel.load(work / "sqnopt_model.npz")
    assert model.scaled and model.info["scale"] == "standard"
    from sqnopt.datasets import load_table

    X, y, _ = load_table(work / "num.tsv", target="outcome")
    assert model.scale_offset == pytest.approx(X.mean(axis=0))
    assert model.scale_factor == pytest.approx(X.std(axis=0))
    code, out, err = _run(capsys, "evaluate", "sqnopt_model.npz", "num.tsv")
    assert code == 0, err
    assert "standard scaling applied" in out and f"accuracy: {train_acc:.4f}" in out
    code, out, _ = _run(capsys, "predict", "sqnopt_model.npz", "num.tsv")
    assert np.mean(np.array(out.split(), dtype=float) == y) == pytest.approx(train_acc,
                                                                             abs=1e-4)


def test_scale_sparse_is_max_abs_also_when_streaming(work: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    rows = "".join(f"{(-1, 1)[i % 2]} 1:{(i % 7) * 1000} 2:{(i % 3) * 0.001}\n"
                   for i in range(60))
    (work / "scales.svm").write_text(rows)
    for extra in ([], ["--chunk-size", "25"]):
        code, out, err = _run(capsys, "train", "scales.svm", "--scale", *extra, *QUICK)
        assert code == 0, err
        assert "max-abs scaled 2 columns" in out
        model = LinearModel.load(work / "sqnopt_model.npz")
        assert model.info["scale"] == "maxabs"
        assert model.scale_factor.tolist() == [6000.0, 0.002]
        assert model.scale_offset.tolist() == [0.0, 0.0]
        code, out, err = _run(capsys, "evaluate", "sqnopt_model.npz", "scales.svm")
        assert code == 0 and "maxabs scaling applied" in out, err


# ------------------------------------------------------------------ feature counts
def test_evaluate_and_predict_refuse_a_feature_count_mismatch(
        work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "train", "a9a", "--max-epochs", "1", "--progress", "never")
    assert code == 0, err
    (work / "narrow.svm").write_text("1 1:1 5:1\n-1 2:1\n")
    (work / "wide.svm").write_text("1 1:1 300:1\n-1 2:1\n")
    for command in ("evaluate", "predict"):
        code, out, err = _run(capsys, command, "sqnopt_model.npz", "narrow.svm")
        assert code == 1 and out == "" and err.count("\n") == 1
        assert ("its largest feature index is 5, but the model 'sqnopt_model.npz' was trained "
                "with 123 features") in err and "pass --n-features 123" in err
        code, _, err = _run(capsys, command, "sqnopt_model.npz", "wide.svm")
        assert code == 1 and "the data has 300 features, but the model" in err
        code, _, err = _run(capsys, command, "sqnopt_model.npz", "people.csv")
        assert code == 1 and "the data has 6 features, but the model" in err
    code, out, err = _run(capsys, "evaluate", "sqnopt_model.npz", "narrow.svm",
                          "--n-features", "123")
    assert code == 0 and "accuracy:" in out, err
    code, _, err = _run(capsys, "train", "small.svm", *QUICK)
    code, _, err = _run(capsys, "evaluate", "sqnopt_model.npz", "a9a")
    assert code == 1 and "the data has 123 features, but the model" in err and "with 3" in err


# ------------------------------------------------------------------ streaming progress
def test_chunked_training_progress_ends_at_its_total(work: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "train", "a9a", "--chunk-size", "3000", "--curvature",
                        "identity", "--max-epochs", "2", "--progress", "always")
    assert code == 0
    final = err.split("\r")[-1]
    assert "100%" in final and "65.1k/65.1k" in final and "rows/s" in final, final
    # the total: 2 passes x 32,561 rows (solver samples would overshoot it: SAGA's table)
    code, _, err = _run(capsys, "train", "a9a", "--chunk-size", "3000", "--max-epochs", "1",
                        "--progress", "never")
    assert code == 0 and err == ""


def test_history_and_plot_from_the_cli(work: Path, capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    code, _, _ = _run(capsys, "train", "small.svm", *QUICK)
    doc = json.loads((work / "sqnopt_history.json").read_text())
    assert doc["runs"][0]["history"]["samples"][0] == 0
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "matplotlib" else real(name, *a))
    code, out, err = _run(capsys, "plot")
    assert code == 1 and out == ""
    assert err == "sqnopt: error: sqnopt plot needs matplotlib: pip install 'sqnopt[plot]'\n"


def test_parser_is_importable_for_the_docs() -> None:
    parser = build_parser()
    assert parser.prog == "sqnopt"
