"""Inputs a new user gives that once failed with a Python-level message or a misleading one,
or were read wrong in silence: a preset's fixed part given as its parameter, a parameter given
twice, a library hint that named an option without its value, a table delimited by another
character, and numbers written with a comma. Each must end in one error that names the problem
and the fix (on the command line one ``sqnopt: error:`` line), never a traceback, an internal
name or a model of the wrong columns."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sqnopt.cli import main


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    return code, capsys.readouterr().err


@pytest.fixture
def small_svm(tmp_path: Path) -> Path:
    path = tmp_path / "small.svm"
    path.write_text("".join(f"{i % 2} 1:{i % 5 + 1} 2:{(i * 7) % 3 - 1}\n" for i in range(40)))
    return path


def _train(path: Path, *extra: str) -> list[str]:
    out = path.parent
    return ["train", str(path), "--model", str(out / "m.npz"), "--history",
            str(out / "h.json"), "--max-epochs", "2", "--progress", "never", "-q", *extra]


@pytest.mark.parametrize(("spec", "option"), [("pegasos:curvature=lbfgs", "--curvature"),
                                              ("sgd:step=constant", "--step"),
                                              ("sgd:schedule=full", "--schedule")])
def test_a_part_the_preset_fixes_points_to_the_overriding_option(
        capsys: pytest.CaptureFixture[str], small_svm: Path, spec: str, option: str) -> None:
    code, err = _run(capsys, *_train(small_svm, "--preset", spec))
    key = spec.split(":")[1].split("=")[0]
    assert code != 0
    assert "multiple values" not in err and "Solver()" not in err
    assert f"sets its {key} itself" in err and f"pass {option} instead" in err


def test_a_fixed_loss_given_as_objective_says_the_preset_fixes_it(
        capsys: pytest.CaptureFixture[str], small_svm: Path) -> None:
    code, err = _run(capsys, *_train(small_svm, "--preset", "pegasos:objective=logloss"))
    assert code != 0
    assert "fixes its loss (hinge)" in err and "drop objective=" in err
    assert "multiple values" not in err


def test_a_fixed_part_without_a_cli_option_says_so(
        capsys: pytest.CaptureFixture[str], small_svm: Path) -> None:
    code, err = _run(capsys, *_train(small_svm, "--preset",
                                     "svrg_lbfgs:curvature_schedule=full"))
    assert code != 0
    assert "sets its curvature_schedule itself" in err and "compose the solver in Python" in err


def test_a_component_parameter_given_twice_is_refused(
        capsys: pytest.CaptureFixture[str], small_svm: Path) -> None:
    code, err = _run(capsys, *_train(small_svm, "--preset", "sgd:eps0=1,eps0=2"))
    assert code != 0
    assert "parameter 'eps0' is given twice" in err


def test_a_continuous_label_hint_names_the_option_with_its_value(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "frac.csv"
    path.write_text("a,b,label\n1,2,0.5\n3,4,1\n5,1,0\n2,2,1\n")
    code, err = _run(capsys, *_train(path))
    assert code != 0
    assert "--target COLUMN" in err and "--target )" not in err


@pytest.mark.parametrize("chunked", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize(("name", "sep"), [("semi.csv", ";"), ("tabs.csv", "\t"),
                                           ("semi.tsv", ";")])
def test_a_table_with_another_delimiter_names_it(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str, sep: str,
        chunked: bool) -> None:
    """Before: 'no label column ... pass --target 'a;b;label'', a column that does not exist
    once the file is read right."""
    path = tmp_path / name
    path.write_text(sep.join(["a", "b", "label"]) + "\n"
                    + "".join(sep.join([str(i), str(i % 3), str(i % 2)]) + "\n"
                              for i in range(6)))
    code, err = _run(capsys, *_train(path, *(["--chunk-size", "2"] if chunked else [])))
    assert code != 0
    assert f"the file is delimited by {sep!r}" in err and "--target" not in err


def test_load_table_reads_the_named_delimiter_and_a_one_column_header_passes(
        tmp_path: Path) -> None:
    from sqnopt.datasets import load_table

    path = tmp_path / "semi.csv"
    path.write_text("a;b;label\n1;2;0\n3;4;1\n")
    X, y, _ = load_table(path, delimiter=";")
    assert X.shape == (2, 2) and list(y) == [0, 1]
    one = tmp_path / "one.csv"
    one.write_text("a\n1\n2\n")
    with pytest.raises(ValueError, match="no label column"):  # one column, no other delimiter
        load_table(one)


@pytest.mark.parametrize(("cells", "sep"), [(['"1,000"', '"2,500"', "999", '"12,345.5"'], ","),
                                            (["0,5", "1,25", "3", "2"], ";")],
                         ids=["thousands", "decimal-comma"])
def test_numbers_written_with_a_comma_are_not_one_hot_categories(
        tmp_path: Path, cells: list[str], sep: str) -> None:
    """Before: the column became one indicator per distinct amount, silently."""
    from sqnopt.datasets import load_table

    path = tmp_path / "amounts.csv"
    path.write_text(f"a{sep}b{sep}label\n" + "".join(f"{c}{sep}{i}{sep}{i % 2}\n"
                                                      for i, c in enumerate(cells)))
    with pytest.raises(ValueError, match=r"line 2: column 'a' holds .*a number written with a "
                                         r"comma.*decimal point and no separators"):
        load_table(path, delimiter=sep)
    X, _, spec = load_table(path, delimiter=sep, categorical=["a"])  # declared codes: kept
    assert spec["categorical"] == ["a"] and X.shape[0] == 4


def test_text_with_commas_that_is_not_a_number_stays_categorical(tmp_path: Path) -> None:
    from sqnopt.datasets import load_table

    path = tmp_path / "codes.csv"
    path.write_text('a,b,label\n"1,2,3",0,0\n"x,y",1,1\nz,2,0\n"4,5,6",3,1\n')
    _, _, spec = load_table(path)
    assert spec["categorical"] == ["a"]


@pytest.mark.parametrize("chunked", [False, True], ids=["whole", "streamed"])
def test_yes_no_labels_with_mixed_capitals_are_refused(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, chunked: bool) -> None:
    """Before: True/true/False/FALSE trained a 4-class model of a binary problem, silently."""
    path = tmp_path / "bool.csv"
    path.write_text("a,b,label\n1,2,True\n3,4,False\n5,1,true\n2,2,FALSE\n")
    code, err = _run(capsys, *_train(path, *(["--chunk-size", "2"] if chunked else [])))
    assert code != 0
    assert "spells the same answer with different capitals" in err and "4 classes of 2" in err


def test_labels_that_differ_in_case_but_are_not_yes_no_stay_classes(tmp_path: Path) -> None:
    from sqnopt.datasets import load_table

    path = tmp_path / "codes.csv"
    path.write_text("a,b,label\n1,2,A\n3,4,a\n5,1,A\n2,2,a\n")
    assert sorted(set(load_table(path)[1])) == ["A", "a"]
    path.write_text("a,b,label\n1,2,yes\n3,4,no\n5,1,yes\n2,2,no\n")
    assert sorted(set(load_table(path)[1])) == ["no", "yes"]


@pytest.mark.parametrize("chunked", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("extra", [["--target", "label"], ["--categorical", "a"],
                                   ["--drop", "a"]])
def test_table_options_on_svmlight_data_are_refused(
        capsys: pytest.CaptureFixture[str], small_svm: Path, extra: list[str],
        chunked: bool) -> None:
    """Before: ignored in silence, so the model was not the one asked for."""
    code, err = _run(capsys, *_train(small_svm, *extra,
                                     *(["--chunk-size", "8"] if chunked else [])))
    assert code != 0
    assert f"{extra[0]} names columns of a CSV/TSV table" in err and "--format csv" in err


@pytest.mark.parametrize("chunked", [False, True], ids=["whole", "streamed"])
def test_n_features_on_a_table_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                          chunked: bool) -> None:
    path = tmp_path / "t.csv"
    path.write_text("a,b,label\n" + "".join(f"{i},{i % 3},{i % 2}\n" for i in range(8)))
    code, err = _run(capsys, *_train(path, "--n-features", "10",
                                     *(["--chunk-size", "4"] if chunked else [])))
    assert code != 0
    assert "--n-features sets the width of svmlight data" in err


def test_demo_takes_a_curvature_with_parameters_as_train_does(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Before: 'unknown curvature 'lbfgs:memory=3'' though train takes NAME:k=v."""
    code, err = _run(capsys, "demo", "--curvature", "lbfgs:memory=3", "--n-samples", "60",
                     "--n-features", "4", "--samples", "100")
    assert code == 0, err
    code, err = _run(capsys, "demo", "--curvature", "lbfgs:memory=0", "--n-samples", "60",
                     "--samples", "100")
    assert code != 0 and "memory must be an integer >= 1" in err


def test_demo_with_one_sample_is_an_option_error(capsys: pytest.CaptureFixture[str]) -> None:
    """Before: 'make_boxes needs n_samples >= 2', an internal function's name."""
    code, err = _run(capsys, "demo", "--n-samples", "1")
    assert code == 2 and "--n-samples: expected an integer >= 2" in err


def _zero_based_pair(tmp_path: Path) -> tuple[Path, Path, np.ndarray]:
    """A zero-based training file whose label is the sign of feature 2, and a test file of the
    same data without feature 0 (so without an index 0: read one-based, every feature would
    shift by one column)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(120, 3))
    Xt = rng.normal(size=(40, 3))
    train, test = tmp_path / "train.svm", tmp_path / "test.svm"
    train.write_text("".join(f"{int(x[2] > 0)} 0:{x[0]:.5f} 1:{x[1]:.5f} 2:{x[2]:.5f}\n"
                             for x in X))
    test.write_text("".join(f"{int(x[2] > 0)} 1:{x[1]:.5f} 2:{x[2]:.5f}\n" for x in Xt))
    return train, test, (Xt[:, 2] > 0).astype(int)


@pytest.mark.parametrize("chunked", [False, True], ids=["whole", "streamed"])
def test_a_test_file_is_read_with_the_training_files_index_base(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, chunked: bool) -> None:
    """Before (whole): the test file was read one-based by its own 'auto' (no index 0), its
    features shifted by a column: test accuracy 0.26 on a problem the model solves, and
    evaluate / predict refused or misread the file the same way."""
    train, test, yt = _zero_based_pair(tmp_path)
    model = tmp_path / "m.npz"
    code = main(["train", str(train), "--test", str(test), "--model", str(model), "--history",
                 str(tmp_path / "h.json"), "--progress", "never",
                 *(["--chunk-size", "30"] if chunked else [])])
    out = capsys.readouterr().out
    assert code == 0
    acc = float(out.split("test accuracy:")[1].split()[0])
    assert acc > 0.9
    assert main(["evaluate", str(model), str(test)]) == 0
    assert float(capsys.readouterr().out.split("accuracy:")[1].split()[0]) > 0.9
    assert main(["predict", str(model), str(test)]) == 0
    pred = np.array([float(v) for v in capsys.readouterr().out.split()])
    assert np.mean(pred == yt) > 0.9
