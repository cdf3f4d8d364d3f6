"""One model-file reader: every damaged or malformed file is a single ``ModelFileError`` (a
``ValueError``) naming the file and the problem, and the command line prints it as one line and
exits 1.

Before, the CLI showed tracebacks for a truncated or empty file (``BadZipFile``, ``EOFError``), a
flipped byte (``Bad CRC-32``), metadata without ``strategy`` (``KeyError``) or that is a list
(``AttributeError``), ``"version": "abc"`` (``ValueError: invalid literal for int()``), and a
model with NaN coefficients loaded and evaluated with exit 0.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sqnopt.cli import main
from sqnopt.model import FORMAT_VERSION, LinearModel, ModelFileError

META = {"format": "sqnopt.LinearModel", "version": FORMAT_VERSION, "strategy": "binary",
        "loss": "logloss", "probabilistic": True, "info": {"features": {"n_features": 3}}}


def _arrays(**over: Any) -> dict[str, Any]:
    arrays: dict[str, Any] = {"coef": np.array([[1.0, -2.0, 0.5]]), "intercept": np.array([0.1]),
                              "classes": np.array([-1.0, 1.0]),
                              "meta": np.array(json.dumps(META))}
    arrays.update(over)
    return {k: v for k, v in arrays.items() if v is not None}


def _write(path: Path, **over: Any) -> Path:
    np.savez(path, **_arrays(**over))
    return path


def _meta(**changes: Any) -> np.ndarray:
    meta = dict(META)
    for key, value in changes.items():
        if value is _DROP:
            del meta[key]
        else:
            meta[key] = value
    return np.array(json.dumps(meta))


_DROP = object()


def _flip_byte_in(member: str) -> Callable[[Path], None]:
    def damage(path: Path) -> None:
        with zipfile.ZipFile(path) as zf:
            info = zf.getinfo(member)
        raw = bytearray(path.read_bytes())
        # local header: 30 bytes + file name + extra field, then the (stored) member data
        name_len = int.from_bytes(raw[info.header_offset + 26:info.header_offset + 28], "little")
        extra_len = int.from_bytes(raw[info.header_offset + 28:info.header_offset + 30], "little")
        end = info.header_offset + 30 + name_len + extra_len + info.compress_size
        raw[end - 3] ^= 0x40  # inside the array data, after the .npy header
        path.write_bytes(bytes(raw))
    return damage


def _truncate(fraction: float) -> Callable[[Path], None]:
    def damage(path: Path) -> None:
        raw = path.read_bytes()
        path.write_bytes(raw[:int(len(raw) * fraction)])
    return damage


def _npy(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr)
    return buf.getvalue()


def _lying_header(path: Path) -> None:
    """coef.npy whose header claims a (10**9, 10**3) array: refused before any allocation."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "<f8", "fortran_order": False,
                                               "shape": (10**9, 10**3)})
    buf.write(np.ones(3).tobytes())
    with zipfile.ZipFile(path, "w") as zf:
        for key, value in _arrays().items():
            if key == "coef":
                zf.writestr("coef.npy", buf.getvalue())
            else:
                member = io.BytesIO()
                np.lib.format.write_array(member, np.asanyarray(value))
                zf.writestr(f"{key}.npy", member.getvalue())


CASES: dict[str, tuple[Callable[[Path], Any], str]] = {
    "empty": (lambda p: p.write_bytes(b""), r"is empty \(0 bytes"),
    "truncated": (lambda p: (_write(p), _truncate(0.5)(p)), r"corrupt or truncated"),
    "truncated_head": (lambda p: (_write(p), _truncate(0.02)(p)), r"corrupt or truncated"),
    "bad_crc": (lambda p: (_write(p), _flip_byte_in("coef.npy")(p)), r"Bad CRC-32"),
    "not_a_zip": (lambda p: p.write_text("hello, I am text"), r"not a ZIP/.npz archive"),
    "npy_not_npz": (lambda p: p.write_bytes(_npy(np.ones(3))), r"not a ZIP"),
    "no_strategy": (lambda p: _write(p, meta=_meta(strategy=_DROP)),
                    r"metadata field 'strategy' is missing"),
    "meta_is_list": (lambda p: _write(p, meta=np.array(json.dumps([1, 2]))),
                     r"metadata is a JSON list, not an object"),
    "meta_not_json": (lambda p: _write(p, meta=np.array("{oops")), r"metadata is not valid JSON"),
    "meta_not_string": (lambda p: _write(p, meta=np.ones(2)), r"metadata is not a JSON string"),
    "version_abc": (lambda p: _write(p, meta=_meta(version="abc")),
                    r"'version' must be a positive integer, got 'abc'"),
    "version_bool": (lambda p: _write(p, meta=_meta(version=True)), r"'version' must be"),
    "version_newer": (lambda p: _write(p, meta=_meta(version=FORMAT_VERSION + 1)),
                      r"newer sqnopt"),
    "wrong_format": (lambda p: _write(p, meta=_meta(format="other")), r"metadata 'format'"),
    "strategy_type": (lambda p: _write(p, meta=_meta(strategy=3)),
                      r"'strategy' must be a str, got int"),
    "strategy_value": (lambda p: _write(p, meta=_meta(strategy="tree")), r"must be one of"),
    "probabilistic_type": (lambda p: _write(p, meta=_meta(probabilistic="yes")),
                           r"'probabilistic' must be a bool"),
    "info_type": (lambda p: _write(p, meta=_meta(info=[1])), r"'info' must be an object"),
    "hinge_probabilistic": (lambda p: _write(p, meta=_meta(loss="hinge", probabilistic=True)),
                            r"'probabilistic' is True, but the loss 'hinge' is not a likelihood"),
    "logloss_not_probabilistic": (lambda p: _write(p, meta=_meta(loss="logloss",
                                                                  probabilistic=False)),
                                  r"'probabilistic' is False, but the loss 'logloss' is a"),
    "regression_loss_classifier": (lambda p: _write(p, meta=_meta(loss="squared_error",
                                                                   probabilistic=False)),
                                   r"'squared_error' is a regression loss, but metadata "
                                   r"'strategy' is a classification one"),
    "nan_coef": (lambda p: _write(p, coef=np.array([[1.0, np.nan, 0.5]])),
                 r"'coef' contains NaN or infinity"),
    "inf_intercept": (lambda p: _write(p, intercept=np.array([np.inf])),
                      r"'intercept' contains NaN or infinity"),
    "coef_1d": (lambda p: _write(p, coef=np.ones(3)), r"'coef' must be a 2-D array"),
    "coef_strings": (lambda p: _write(p, coef=np.array([["a", "b"]])), r"'coef' must be a 2-D"),
    "no_features": (lambda p: _write(p, coef=np.ones((1, 0))), r"has no features"),
    "shape_mismatch": (lambda p: _write(p, intercept=np.zeros(2)), r"do not match"),
    "rows_vs_classes": (lambda p: _write(p, coef=np.ones((2, 3)), intercept=np.zeros(2)),
                        r"2 classes need 1 rows"),
    "one_class": (lambda p: _write(p, classes=np.array([1.0])), r"at least two distinct"),
    "duplicate_classes": (lambda p: _write(p, classes=np.array([1.0, 1.0])),
                          r"at least two distinct"),
    "missing_coef": (lambda p: _write(p, coef=None), r"the 'coef' array is missing"),
    "pickled_object": (lambda p: np.savez(p, **_arrays(classes=np.array([None, 1],
                                                                         dtype=object))),
                       r"Python objects \(a pickle\)"),
    "lying_header": (_lying_header, r"truncated or corrupt \(its header says"),
    "directory": (lambda p: p.mkdir(), r"is a directory"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_malformed_model_file_is_one_clear_error(tmp_path: Path, case: str) -> None:
    path = tmp_path / f"{case}.npz"
    make, match = CASES[case]
    make(path)
    with pytest.raises(ModelFileError, match=match) as info:
        LinearModel.load(path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("case", ["empty", "truncated", "bad_crc", "no_strategy", "meta_is_list",
                                  "version_abc", "nan_coef", "lying_header", "directory"])
@pytest.mark.parametrize("command", ["evaluate", "predict"])
def test_cli_reports_a_damaged_model_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 case: str, command: str) -> None:
    path = tmp_path / f"{case}.npz"
    CASES[case][0](path)
    data = tmp_path / "d.svm"
    data.write_text("1 1:1 3:2\n-1 2:1\n")
    code = main([command, str(path), str(data)])
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith(f"sqnopt: error: model file {str(path)!r}") and err.count("\n") == 1
    assert "Traceback" not in err


def test_round_trip_and_save_refuses_non_finite(tmp_path: Path) -> None:
    m = LinearModel(coef=np.array([[1.0, -2.0]]), intercept=np.array([0.5]),
                    classes=np.array(["no", "yes"], dtype=object), strategy="binary",
                    loss="logloss", probabilistic=np.bool_(True), info={"a": [1, 2]})
    path = m.save(tmp_path / "m.npz")
    m2 = LinearModel.load(path)
    assert m2.classes.tolist() == ["no", "yes"] and m2.probabilistic is True
    np.testing.assert_array_equal(m2.coef, m.coef)
    multi = LinearModel(coef=np.eye(3, 4), intercept=np.zeros(3), classes=np.array([3, 5, 7]),
                        strategy="multinomial", loss="softmax", probabilistic=True)
    np.testing.assert_array_equal(LinearModel.load(multi.save(tmp_path / "k.npz")).coef, multi.coef)
    bad = LinearModel(coef=np.array([[np.nan, 1.0]]), intercept=np.zeros(1),
                      classes=np.array([0, 1]), strategy="binary", loss="hinge",
                      probabilistic=False)
    with pytest.raises(ValueError, match="NaN or infinity"):
        bad.save(tmp_path / "nan.npz")
    assert not (tmp_path / "nan.npz").exists()
    with pytest.raises(FileNotFoundError, match="does not exist"):
        LinearModel.load(tmp_path / "none.npz")


# ---------------------------------------------------------------- version 2: feature scaling
_OFF, _FAC = np.array([1.0, 0.0, -2.0]), np.array([2.0, 1.0, 0.5])


def test_scaled_model_round_trip_scores_raw_data(tmp_path: Path) -> None:
    base = dict(coef=np.array([[1.0, -2.0, 0.5]]), intercept=np.array([0.1]),
                classes=np.array([-1.0, 1.0]), strategy="binary", loss="logloss",
                probabilistic=True)
    model = LinearModel(**base, scale_offset=_OFF, scale_factor=_FAC)  # type: ignore[arg-type]
    X = np.array([[3.0, 1.0, 0.0], [-1.0, 2.0, 4.0]])
    expected = ((X - _OFF) / _FAC) @ base["coef"].ravel() + 0.1  # type: ignore[union-attr]
    assert model.decision_function(X) == pytest.approx(expected)
    back = LinearModel.load(model.save(tmp_path / "scaled.npz"))
    assert back.scaled and back.scale_offset.tolist() == _OFF.tolist()  # type: ignore[union-attr]
    assert back.decision_function(X) == pytest.approx(expected)
    with zipfile.ZipFile(tmp_path / "scaled.npz") as zf:
        assert json.loads(str(np.load(zf.open("meta.npy"))))["version"] == 2
    # a model without scaling is still written as version 1, which older readers read
    plain = LinearModel(**base).save(tmp_path / "plain.npz")  # type: ignore[arg-type]
    with zipfile.ZipFile(plain) as zf:
        assert json.loads(str(np.load(zf.open("meta.npy"))))["version"] == 1
        assert "scale_factor.npy" not in zf.namelist()
    assert not LinearModel.load(plain).scaled


def test_version_1_files_still_load(tmp_path: Path) -> None:
    model = LinearModel.load(_write(tmp_path / "v1.npz", meta=_meta(version=1)))
    assert not model.scaled and model.n_features == 3


@pytest.mark.parametrize("case,arrays,meta,fragment", [
    ("only_offset", {"scale_offset": _OFF}, {}, "'scale_offset' is there without 'scale_factor'"),
    ("in_version_1", {"scale_offset": _OFF, "scale_factor": _FAC}, {"version": 1},
     "a version-1 file holds 'scale_offset', which version 2 introduced"),
    ("wrong_length", {"scale_offset": _OFF[:2], "scale_factor": _FAC[:2]}, {},
     "'scale_offset' has 2 entries, 'coef' 3 features"),
    ("zero_factor", {"scale_offset": _OFF, "scale_factor": np.array([1.0, 0.0, 1.0])}, {},
     "'scale_factor' must be positive"),
    ("nan", {"scale_offset": np.array([np.nan, 0, 0]), "scale_factor": _FAC}, {},
     "'scale_offset' contains NaN or infinity"),
    ("text", {"scale_offset": np.array(["a", "b", "c"]), "scale_factor": _FAC}, {},
     "'scale_offset' must be a 1-D array of numbers"),
])
def test_damaged_scaling_is_one_clear_error(tmp_path: Path, case: str, arrays: dict[str, Any],
                                            meta: dict[str, Any], fragment: str) -> None:
    path = _write(tmp_path / f"{case}.npz", meta=_meta(**{"version": 2, **meta}), **arrays)
    with pytest.raises(ModelFileError, match="model file .*" + re.escape(fragment)):
        LinearModel.load(path)


@pytest.mark.parametrize("coef", [[1e308, 1e308, 0.0], [1e308, -1e308, 0.0]],
                         ids=["inf_scores", "nan_scores"])
def test_scores_that_overflow_are_an_error_not_arbitrary_labels(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], coef: list[float]) -> None:
    """Finite coefficients a file may hold but training never writes: their scores overflow
    to +-inf or NaN (inf - inf). Before, ``predict`` printed labels and probabilities from
    them with exit 0 and a RuntimeWarning; now it is one error naming the overflow."""
    path = _write(tmp_path / "huge.npz", coef=np.array([coef]))
    model = LinearModel.load(path)
    X = np.array([[2.0, -2.0, 0.0], [1.0, 0.5, 3.0]])
    for method in (model.decision_function, model.predict, model.predict_proba):
        with pytest.raises(ValueError, match=r"scores of [12] of 2 rows overflow float64"):
            method(X)
    data = tmp_path / "d.svm"
    data.write_text("1 1:2 2:-2\n-1 1:1 2:0.5 3:3\n")
    code = main(["predict", str(path), str(data), "--proba"])
    err = capsys.readouterr().err
    assert code == 1 and "overflow float64" in err and "Warning" not in err
