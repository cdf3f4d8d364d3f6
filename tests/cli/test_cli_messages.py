"""What the command line says: lists that are cut say so and how much is left out, a missing
label column is named, and a suggestion is about the option at fault."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

from sqnopt._text import first_sentence, plain_rst, short_list
from sqnopt.cli import main


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def wide(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A table of 25 numeric columns and its label, 'income', last: the sort of table whose
    label the old message left out of its first 20 column names."""
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    cols = [f"f{i}" for i in range(25)] + ["income"]
    rows = [",".join([f"{v:.3f}" for v in rng.normal(size=25)]
                     + [str(rng.choice(["<=50K", ">50K"]))]) for _ in range(80)]
    path = tmp_path / "wide.csv"
    path.write_text(",".join(cols) + "\n" + "\n".join(rows) + "\n")
    return path


def test_short_lists_say_what_they_leave_out() -> None:
    assert short_list(["a", "b", "c"], 3) == "a, b, c"
    text = short_list([f"c{i}" for i in range(30)], 20)
    assert text.startswith("c0, c1,") and text.endswith(", \u2026, c29 (30 in all; 10 not shown)")
    assert text.count(",") == 20     # 19 names, the ellipsis, the last name
    assert short_list(["x y"], quote=True) == "'x y'"


def test_plain_text_and_first_sentences() -> None:
    assert plain_rst("see :func:`~sqnopt.presets.sgd` and ``eps0``, *emphasis*::") == \
        "see sgd and eps0, emphasis:"
    assert plain_rst(":class:`Solver <sqnopt.Solver>`") == "Solver"
    assert first_sentence("Pegasos (Shalev-Shwartz et al. 2007, Fig. 1): the SVM. More.") == \
        "Pegasos (Shalev-Shwartz et al. 2007, Fig. 1): the SVM."
    assert first_sentence("e.g. a step of 0.5. Then") == "e.g. a step of 0.5."
    assert first_sentence("no end") == "no end"


def test_a_missing_label_column_names_the_likely_label(
        wide: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "train", str(wide), "--progress", "never")
    assert code == 1
    assert "The likely label is 'income' (the last column, 2 distinct values: '<=50K', " \
           "'>50K'): pass --target income" in err
    assert "f18, \u2026, income (26 in all; 6 not shown)" in err
    code, _, err = _run(capsys, "train", str(wide), "--target", "incme", "--progress", "never")
    assert code == 1 and "no column named 'incme' for the label; did you mean 'income'?" in err
    code, out, err = _run(capsys, "train", str(wide), "--target", "income", "--max-epochs", "1",
                          "--progress", "never")
    assert code == 0, err


def test_a_table_without_a_likely_label_column_says_how_to_name_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "numbers.csv"
    rng = np.random.default_rng(1)
    path.write_text("a,b\n" + "\n".join(f"{u:.4f},{v:.4f}" for u, v in rng.normal(size=(60, 2))))
    code, _, err = _run(capsys, "train", str(path), "--progress", "never")
    assert code == 1 and "name it with --target COLUMN (columns: a, b)" in err


def test_cli_terms_translates_parameters_but_not_component_descriptions() -> None:
    from sqnopt.cli import cli_terms

    assert cli_terms("stopped at max_iter=3 passes (reached max_samples=97683 samples "
                     "processed). Set tol=None, or use curvature='lbfgs'.") == (
        "stopped at --max-epochs 3 passes (reached 97683 samples processed). Set --tol none, "
        "or use --curvature lbfgs.")
    assert cli_terms("a smaller step (eps0), step='auto' in the estimators") == \
        "a smaller step (eps0), --step auto"
    assert cli_terms("Increase max_iter or loosen tol; use lam > 0") == \
        "Increase --max-epochs or loosen --tol; use --alpha > 0"
    kept = "score_line(eps0=1.0, max_iter=30) and LBFGS(min_curvature=1e-3), gtol"
    assert cli_terms(kept) == kept
    # a resumed fit's differing settings, and a cache path
    assert cli_terms("other settings (random_state: checkpoint '0', now '5')") == \
        "other settings (--seed: checkpoint '0', now '5')"
    assert cli_terms("pass a writable path (cache=PATH)") == "pass a writable path (--cache PATH)"


def test_the_command_line_names_its_options_and_the_library_its_parameters(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = _run(capsys, "train", "--preset", "gd", "--max-epochs", "3",
                        "--progress", "never")
    assert code == 0
    assert "stopped at --max-epochs 3 passes" in err and "Set --tol none" in err
    assert "max_iter" not in err and "tol=" not in err
    code, _, err = _run(capsys, "train", "--curvature", "newton", "--step", "constant:eps=1e6",
                        "--progress", "never")
    assert code == 1 and "(use a line search: --step auto)" in err and "step='" not in err
    # the Python API keeps the Python names
    import warnings

    from sqnopt.datasets import make_boxes
    from sqnopt.training import Trainer

    X, y = make_boxes(200, 4, random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Trainer("hinge", curvature="identity", schedule="full", max_epochs=2,
                step=("constant", {"eps": 0.1})).fit(X, y)
    assert any("stopped at max_iter=2 passes" in str(w.message) and "tol=None" in
               str(w.message) for w in caught)


def test_an_image_format_matplotlib_cannot_write_is_named_with_the_ones_it_can(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib")
    import json

    monkeypatch.chdir(tmp_path)
    cols = {"iteration": [0, 10], "samples": [0, 10], "effective_passes": [0.0, 1.0],
            "time": [0.0, 0.1], "objective": [0.69, 0.5], "grad_norm": [1.0, 0.5]}
    (tmp_path / "h.json").write_text(json.dumps({"format": "sqnopt.history", "version": 1,
                                                 "label": "run", "runs": [{"name": "",
                                                                           "history": cols}]}))
    code, _, err = _run(capsys, "plot", "h.json", "-o", "x.jpg2")
    assert code == 1 and "matplotlib writes no '.jpg2' files; use one of" in err
    assert ".png" in err and ".pdf" in err and "--linear" not in err
    assert not (tmp_path / "x.jpg2").exists()
    code, out, err = _run(capsys, "plot", "h.json", "-o", "x.svg")
    assert code == 0 and (tmp_path / "x.svg").exists(), err


def test_the_passes_printed_are_the_ones_max_epochs_counts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """--max-epochs budgets the gradient batches' samples; a full-batch L-BFGS run also reads
    the data for its line search's trials: 20 budgeted passes read it 29 times, which the
    line used to print as '29 passes'."""
    import json
    import re

    monkeypatch.chdir(tmp_path)
    code, out, err = _run(capsys, "train", "--max-epochs", "20", "--curvature", "lbfgs",
                          "--alpha", "1e-7", "--progress", "never")
    assert code == 0, err
    m = re.search(r"done:  ([0-9.]+) passes of gradient batches \(what --max-epochs counts; "
                  r"([0-9.]+) passes over the data in all", out)
    assert m is not None, out
    samples = int(re.search(r"(\d+) samples processed", out).group(1))  # type: ignore[union-attr]
    assert float(m.group(1)) == pytest.approx(samples / 32561, rel=1e-3)
    assert 20 <= float(m.group(1)) < 22 < float(m.group(2))
    summary = json.loads((tmp_path / "sqnopt_history.json").read_text())["summary"]
    assert summary["passes"] == pytest.approx(float(m.group(1)), rel=1e-3)
    assert summary["effective_passes"] == pytest.approx(float(m.group(2)), rel=1e-3)
    # a run whose every pass is a gradient pass prints the one count
    code, out, err = _run(capsys, "train", "--max-epochs", "2", "--preset", "sgd", "--tol",
                          "none", "--progress", "never")
    assert code == 0 and re.search(r"done:  2 passes, \d+ iterations", out), out


def _pty_output(master: int) -> str:
    import select

    chunks = []
    while select.select([master], [], [], 0.5)[0]:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks).decode(errors="replace")


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_progress_always_draws_on_a_terminal_that_reports_no_height(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pseudo-terminal nobody sized (CI runners, editors' shells) reports 0 rows, and tqdm
    then hides every bar: `--progress always` showed nothing on such a terminal. It now draws,
    from the first update (no delay)."""
    import pty

    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    (tmp_path / "small.svm").write_text("".join(
        f"{1 if x[0] > 0 else -1} 1:{x[0]:.3f} 2:{x[1]:.3f} 3:{x[2]:.3f}\n" for x in X))
    master, slave = pty.openpty()
    assert os.get_terminal_size(slave).lines == 0
    stream = os.fdopen(slave, "w")
    try:
        monkeypatch.setattr(sys, "stderr", stream)
        code = main(["train", "small.svm", "--max-epochs", "2", "--progress", "always"])
        stream.flush()
        monkeypatch.undo()
        drawn = _pty_output(master)
    finally:
        stream.close()
        os.close(master)
    assert code == 0
    assert "train: 600 samples" in drawn, repr(drawn)


def test_scale_standardizes_a_tables_numeric_columns_beside_a_categorical_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """One categorical column made the table sparse, and --scale then max-abs scaled every
    column -- the numeric ones too, unlike the same table without it (standardized). The
    numeric columns are standardized either way, the indicators left in [0, 1], and
    evaluate/predict apply the same."""
    from sqnopt.datasets import load_table
    from sqnopt.model import LinearModel

    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    n = 300
    age = rng.integers(18, 80, n)
    income = rng.normal(5e4, 2e4, n)
    city = rng.choice(["paris", "rome", "oslo"], n)
    score = 0.08 * (age - 48) + 5e-5 * (income - 5e4) + 2.0 * (city == "rome") - 0.6
    label = np.where(score + rng.normal(0, 0.3, n) > 0, "yes", "no")
    (tmp_path / "people.csv").write_text("age,income,city,label\n" + "".join(
        f"{a},{i:.2f},{c},{y}\n" for a, i, c, y in zip(age, income, city, label)))
    code, out, err = _run(capsys, "train", "people.csv", "--scale", "--progress", "never")
    assert code == 0, err
    assert "scale: standardized the 2 numeric columns; the 4 indicator columns of the " \
           "categorical ones (city) are left as they are" in out
    model = LinearModel.load(tmp_path / "sqnopt_model.npz")
    X, y, _ = load_table(tmp_path / "people.csv")
    num = np.column_stack([age, income]).astype(float)
    np.testing.assert_allclose(model.scale_offset[:2], num.mean(axis=0))
    np.testing.assert_allclose(model.scale_factor[:2], num.std(axis=0))
    assert model.scale_offset[2:].tolist() == [0.0] * 4
    assert model.scale_factor[2:].tolist() == [1.0] * 4
    train_acc = float(out.split("train accuracy:")[1].split()[0])
    assert train_acc > 0.9
    code, out, err = _run(capsys, "evaluate", "sqnopt_model.npz", "people.csv")
    assert code == 0 and f"accuracy: {train_acc:.4f}" in out, err


def test_apply_scaling_centres_only_the_columns_with_an_offset() -> None:
    import scipy.sparse as sp

    from sqnopt.model import apply_scaling, feature_scaling

    rng = np.random.default_rng(2)
    dense = np.column_stack([rng.normal(10, 3, 50), rng.normal(-2, 0.5, 50),
                             rng.integers(0, 2, 50), rng.integers(0, 2, 50)]).astype(float)
    kind, offset, factor = feature_scaling(sp.csr_matrix(dense), columns=[0, 1])
    assert kind == "standard" and offset[2:].tolist() == [0, 0] and factor[2:].tolist() == [1, 1]
    got = apply_scaling(sp.csr_matrix(dense), offset, factor)
    assert sp.issparse(got)
    np.testing.assert_allclose(got.toarray(), (dense - offset) / factor, atol=1e-12)
    np.testing.assert_allclose(got.toarray()[:, :2].mean(axis=0), 0.0, atol=1e-12)


def test_chunk_size_evaluates_the_test_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """--chunk-size used to ignore --test without a word: the streamed run now evaluates the
    test data (in chunks too), as the in-memory run does, with the accuracy evaluate gives."""
    import re

    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(3)

    def svm(n: int) -> str:
        X = rng.normal(size=(n, 4))
        return "".join(f"{1 if x[0] + 0.5 * x[1] > 0 else -1} "
                       + " ".join(f"{j + 1}:{v:.4f}" for j, v in enumerate(x)) + "\n" for x in X)

    (tmp_path / "train.svm").write_text(svm(400))
    (tmp_path / "test.svm").write_text(svm(150))
    (tmp_path / "test.csv").write_text("a,label\n1,0\n2,1\n")
    code, out, err = _run(capsys, "train", "train.svm", "--test", "test.svm", "--chunk-size",
                          "100", "--max-epochs", "3", "--progress", "never")
    assert code == 0, err
    m = re.search(r"test accuracy:  ([0-9.]+) \(150 samples of test.svm, streamed\)", out)
    assert m is not None, out
    code, out, err = _run(capsys, "evaluate", "sqnopt_model.npz", "test.svm")
    assert code == 0 and f"accuracy: {m.group(1)}" in out, (out, err)
    code, out, err = _run(capsys, "train", "train.svm", "--test", "test.csv", "--chunk-size",
                          "100", "--progress", "never")
    assert code == 1 and "--test 'test.csv' is a csv file, the training data svmlight" in err
    assert "done:" not in out                        # refused before training
    code, out, err = _run(capsys, "train", "train.svm", "--test", "nope.svm", "--chunk-size",
                          "100", "--progress", "never")
    assert code == 1 and "--test 'nope.svm': no such file" in err
