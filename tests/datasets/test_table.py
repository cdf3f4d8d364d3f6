"""CSV/TSV typing (``sqnopt.datasets.load_table``): a column is numeric when every value is a
finite number, categorical when none is, and an error naming the line, the column, the value and
the fix otherwise; missing markers are missing values; the label column must be a classification
target; identifier-like columns are refused unless declared or dropped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sqnopt.datasets import MISSING_MARKERS, load_table


def _table(path: Path, columns: dict[str, list[Any]]) -> Path:
    names = list(columns)
    n = len(columns[names[0]])
    lines = [",".join(names)] + [",".join(str(columns[c][i]) for c in names) for i in range(n)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _numbers(n: int = 200, seed: int = 0) -> dict[str, list[Any]]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    return {"x": [f"{v:.6f}" for v in x], "z": [f"{v:.3f}" for v in rng.normal(size=n)],
            "label": [int(v > 0) for v in x]}


@pytest.mark.parametrize("bad", ["abc", "inf", "-Infinity", "1e400", "1\x00", "nan", "NA",
                                 "null", ""])
def test_one_bad_value_in_a_numeric_column_is_an_error_naming_line_column_value_and_fix(
        tmp_path: Path, bad: str) -> None:
    """It used to turn the whole column categorical (a 200-value one-hot, memorised)."""
    cols = _numbers()
    cols["x"][6] = bad
    path = _table(tmp_path / "t.csv", cols)
    with pytest.raises(ValueError) as err:
        load_table(path)
    msg = str(err.value)
    assert msg.startswith(f"{path}: line 8:") and "'x'" in msg, msg
    assert "categorical=['x']" in msg
    if bad.strip().lower() in MISSING_MARKERS:
        assert "empty" in msg or "missing marker" in msg
    else:
        assert repr(bad) in msg and ("not a number" in msg or "not a finite number" in msg)
    X, _, spec = load_table(path, categorical=["x"])    # declared: categories, as asked
    assert spec["categorical"] == ["x"] and spec["numeric"] == ["z"]


def test_a_text_column_with_a_stray_number_is_an_error_unless_declared(tmp_path: Path) -> None:
    cols = _numbers(40)
    cols["city"] = ["paris", "rome", "oslo", "lima"] * 10
    cols["city"][3] = "75"
    path = _table(tmp_path / "t.csv", cols)
    with pytest.raises(ValueError, match=r"column 'city' mixes numbers and text .*'75' on line 5"
                                         r".*categorical=\['city'\]"):
        load_table(path)
    X, y, spec = load_table(path, categorical="city")
    assert spec["categorical"] == ["city"] and set(spec["vocabularies"]["city"]) == {
        "paris", "rome", "oslo", "lima", "75"}


def test_words_that_read_as_numbers_are_categories_in_a_text_column(tmp_path: Path) -> None:
    cols = _numbers(40)
    cols["mood"] = ["happy", "Infinity", "nan", "sad"] * 10       # no finite number: text
    X, _, spec = load_table(_table(tmp_path / "t.csv", cols))
    assert spec["categorical"] == ["mood"]
    assert set(spec["vocabularies"]["mood"]) == {"happy", "Infinity", "sad"}   # nan: missing


def test_missing_markers_in_a_categorical_column_set_no_indicator(tmp_path: Path) -> None:
    cols = _numbers(40)
    cols["city"] = ["paris", "rome", "NA", ""] * 10
    X, _, spec = load_table(_table(tmp_path / "t.csv", cols))
    assert set(spec["vocabularies"]["city"]) == {"paris", "rome"}
    Xd = X.toarray()
    assert np.array_equal(Xd[2, 2:], Xd[3, 2:]) and not Xd[2, 2:].any()   # as an empty cell


@pytest.mark.parametrize("label, match", [
    ("nan", r"line 5: the label column 'label' holds the missing marker 'nan'"),
    ("", r"line 5: the label column 'label' is empty"),
    ("inf", r"line 5: the label 'inf' is not a finite number"),
    ("yes", r"line 5: the label 'yes' is not a number, while 199 of the 200"),
])
def test_a_label_that_is_no_label_is_an_error(tmp_path: Path, label: str, match: str) -> None:
    """``nan`` used to become a class "nan"."""
    cols = _numbers()
    cols["label"][3] = label
    with pytest.raises(ValueError, match=match):
        load_table(_table(tmp_path / "t.csv", cols))


def test_a_continuous_or_identifier_label_column_is_refused(tmp_path: Path) -> None:
    """``--target`` on a continuous column used to train a 200-class model silently."""
    cols = _numbers()
    path = _table(tmp_path / "t.csv", cols)
    with pytest.raises(ValueError, match=r"'z' holds '.*', not an integer: the labels look "
                                         r"continuous .*discrete labels"):
        load_table(path, target="z")
    cols["code"] = [str(i) for i in range(200)]              # integers, one per row
    cols["name"] = [f"user{i}" for i in range(200)]          # names, one per row
    path = _table(tmp_path / "t.csv", cols)
    for target in ("code", "name"):
        with pytest.raises(ValueError, match=rf"label column '{target}' has 200 distinct "
                                             r"values in 200 rows.*identifier"):
            load_table(path, target=target)
    y = load_table(_table(tmp_path / "ok.csv", _numbers()), target="label")[1]
    assert set(np.unique(y)) == {0.0, 1.0}


def test_an_identifier_column_is_refused_unless_dropped_or_declared(tmp_path: Path) -> None:
    """An ID-like column used to become a one-hot of a feature per row without a word."""
    cols = _numbers()
    cols["id"] = [f"u{i:06d}" for i in range(200)]
    path = _table(tmp_path / "t.csv", cols)
    with pytest.raises(ValueError, match=r"column 'id' has 200 distinct values in 200 rows: it "
                                         r"looks like an identifier.*drop=\['id'\].*categorical=\['id'\]"):
        load_table(path)
    X, _, spec = load_table(path, drop="id")
    assert spec["numeric"] == ["x", "z"] and spec["drop"] == ["id"] and X.shape == (200, 2)
    test = _table(tmp_path / "test.csv", {k: v[:50] for k, v in cols.items()})
    Xt, _, _ = load_table(test, spec=spec)                   # the test table drops it too
    assert Xt.shape == (50, 2)
    X, _, spec = load_table(path, categorical=["id"])        # declared: encoded as asked
    assert X.shape == (200, 2 + 200 + 1)


def test_an_empty_column_is_refused_unless_dropped(tmp_path: Path) -> None:
    """A column of empty cells and missing markers used to become a feature that is zero in
    every row, without a word."""
    cols = _numbers()
    cols["empty"] = ["", "NA"] * 100
    path = _table(tmp_path / "t.csv", cols)
    with pytest.raises(ValueError, match=r"column 'empty' has no value in any of its 200 rows "
                                         r".*drop=\['empty'\]"):
        load_table(path)
    X, _, spec = load_table(path, drop="empty")
    assert spec["numeric"] == ["x", "z"] and X.shape == (200, 2)


@pytest.mark.parametrize("when", ["2024-{m:02d}-{d:02d}", "{d:02d}/{m:02d}/2024",
                                  "2024-{m:02d}-{d:02d}T10:{d:02d}:00Z", "{m}:{d:02d}",
                                  "2024.{m}.{d} 08:15", "{m}:{d:02d} PM"])
def test_a_date_or_time_column_is_refused_unless_declared_or_dropped(tmp_path: Path,
                                                                    when: str) -> None:
    """Dates used to become one category per distinct date (the identifier check needs half
    the values distinct: months repeat)."""
    cols = _numbers()
    cols["when"] = [when.format(m=1 + i % 12, d=1 + i % 3) for i in range(200)]
    path = _table(tmp_path / "t.csv", cols)
    with pytest.raises(ValueError, match=r"line 2: column 'when' holds dates or times .*"
                                         r"drop=\['when'\].*categorical=\['when'\]"):
        load_table(path)
    assert load_table(path, drop="when")[0].shape == (200, 2)
    assert load_table(path, categorical="when")[0].shape[1] == 2 + len(set(cols["when"])) + 1


def test_words_with_digits_are_not_dates(tmp_path: Path) -> None:
    cols = _numbers()
    cols["code"] = ["A-12", "B-7", "2024-Q1"] * 66 + ["A-12", "B-7"]
    X, _, spec = load_table(_table(tmp_path / "t.csv", cols))
    assert spec["categorical"] == ["code"]


def test_column_options_are_checked(tmp_path: Path) -> None:
    path = _table(tmp_path / "t.csv", _numbers())
    with pytest.raises(ValueError, match=r"no column named 'hash' to treat as categorical "
                                         r"\(the encoding .* --encoding\)"):
        load_table(path, categorical="hash")
    with pytest.raises(ValueError, match="no column named 'w' to drop"):
        load_table(path, drop=["w"])
    with pytest.raises(ValueError, match="'label' is the label column"):
        load_table(path, drop=["label"])
    with pytest.raises(TypeError, match="must name columns"):
        load_table(path, categorical=[3])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="encoding must be"):
        load_table(path, encoding="bogus")


def test_command_line_names_the_row_and_the_fix(tmp_path: Path, capsys: Any,
                                                monkeypatch: Any) -> None:
    from sqnopt.cli import main

    monkeypatch.chdir(tmp_path)
    cols = _numbers()
    cols["x"][6] = "abc"
    cols["city"] = ["paris", "rome"] * 100
    _table(tmp_path / "t.csv", cols)
    quick = ["--max-epochs", "2", "--progress", "never"]
    assert main(["train", "t.csv", "--target", "label", *quick]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "t.csv: line 8: column 'x' holds 'abc'" in err
    assert "--categorical x" in err
    assert main(["train", "t.csv", "--categorical", "x", "--encoding", "hash", *quick]) == 0
    out = capsys.readouterr().out
    assert "1 numeric, 2 categorical (hash)" in out
    assert main(["train", "t.csv", "--categorical", "x,city", *quick]) == 0
    assert main(["train", "t.csv", "--drop", "x", *quick]) == 0
    assert "1 numeric, 1 categorical (onehot)" in capsys.readouterr().out


def test_regression_targets_are_read_as_real_numbers(tmp_path: Path) -> None:
    """``label_kind="regression"`` (a regression loss): continuous values and values distinct
    in every row are targets, read as float64 and never refused or encoded as classes; counts
    stay counts; a table read with the training spec reads them the same way."""
    cols = _numbers()
    cols["label"] = [f"{float(v) * 1.5 + 0.5:.6f}" for v in cols["x"]]
    path = _table(tmp_path / "reg.csv", cols)
    X, y, spec = load_table(path, label_kind="regression")
    assert y is not None and y.dtype == np.float64
    np.testing.assert_array_equal(y, [float(v) for v in cols["label"]])
    _, y2, _ = load_table(path, spec=spec, label_kind="regression")
    np.testing.assert_array_equal(y2, y)
    cols["label"] = list(range(200))           # counts, distinct in every row
    _, y3, _ = load_table(_table(tmp_path / "counts.csv", cols), label_kind="regression")
    np.testing.assert_array_equal(y3, np.arange(200.0))


@pytest.mark.parametrize("value, what", [("abc", "is not a number"),
                                         ("inf", "is not a finite number"),
                                         ("NA", "holds the missing marker")])
def test_regression_targets_must_be_finite_numbers(tmp_path: Path, value: str,
                                                   what: str) -> None:
    cols = _numbers(30)
    cols["label"] = [f"{float(v):.3f}" for v in cols["x"]]
    cols["label"][6] = value
    path = _table(tmp_path / "bad.csv", cols)
    with pytest.raises(ValueError, match=f"line 8: .*{what}"):
        load_table(path, label_kind="regression")
    with pytest.raises(ValueError, match="label_kind must be one of"):
        load_table(path, label_kind="counts")  # type: ignore[arg-type]
