"""Trainer (training without scikit-learn) and LinearModel (prediction and model files)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt.datasets import load_a9a, make_boxes
from sqnopt.model import LinearModel, log_sigmoid, log_softmax
from sqnopt.objectives import LogLoss
from sqnopt.recipes import gradient_step
from sqnopt.training import ConvergenceWarning, Trainer, class_weight_vector


def test_import_sqnopt_does_not_import_scikit_learn(tmp_path: Path) -> None:
    import os
    import subprocess

    import sqnopt

    # Import the very package under test: run from an empty directory (so a source checkout in
    # the working directory cannot shadow an installed package) with that package's parent
    # directory first on the path.
    code = ("import sys, sqnopt, sqnopt.training, sqnopt.model, sqnopt.datasets, sqnopt.cli;"
            "print('sklearn' in sys.modules)")
    env = dict(os.environ)
    env["PYTHONPATH"] = str(Path(sqnopt.__file__).resolve().parent.parent)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_trainer_on_a9a_reaches_logistic_regression_accuracy() -> None:
    """The real data shipped with the package; reference: scikit-learn LogisticRegression with
    the same lambda reaches 0.850 test accuracy (measured, see docs/usage.md)."""
    X, y = load_a9a("train")
    Xt, yt = load_a9a("test")
    model = Trainer(random_state=0).fit(X, y)
    assert model.accuracy(Xt, yt) > 0.84


def test_trainer_max_epochs_tol_and_counters() -> None:
    X, y = make_boxes(400, 4, random_state=0)
    tr = Trainer(curvature="identity", max_epochs=3, tol=None, random_state=0)
    tr.fit(X, y)
    assert tr.n_iter_ == 3 and tr.results_[0].n_samples >= 3 * 400
    # a stochastic recipe checks tol after each pass (the gradient comes with the pass-end
    # objective), so a loose tol stops it early, converged
    tr2 = Trainer(curvature="identity", max_epochs=500, tol=1e-2, random_state=0)
    tr2.fit(X, y)
    assert 1 <= tr2.n_iter_ < 500 and tr2.converged_
    assert len(tr2.histories_[0]) == tr2.n_iter_ + 1   # start + one point per pass
    assert tr2.histories_[0].grad_norm[-1] <= 1e-2
    # ... and one whose objective stops improving stops too, without having converged
    with pytest.warns(ConvergenceWarning, match="stopped improving for 2 passes"):
        Trainer(curvature="identity", max_epochs=500, tol=1e-9, n_iter_no_change=2,
                      random_state=0).fit(X, y)
    # the deterministic recipe (the default, L-BFGS) tests tol on its full-batch gradients
    tr4 = Trainer(random_state=0)
    tr4.fit(X, y)
    assert tr4.converged_ and tr4.results_[0].success
    assert tr4.results_[0].grad_norm <= 1e-5 and tr4.n_iter_ < 100
    with pytest.raises(ValueError, match="alpha"):
        Trainer(alpha=-1).fit(X, y)
    with pytest.raises(ValueError, match="max_epochs"):
        Trainer(max_epochs=0).fit(X, y)


def test_alpha_sets_the_objective_lambda() -> None:
    X, y = make_boxes(100, 3, random_state=0)
    for loss in ("logloss", ("logloss", {"lam": 5.0}), LogLoss(lam=5.0)):
        tr = Trainer(loss, alpha=0.25, max_epochs=1, tol=None)
        tr.fit(X, y)
        assert tr._setup is not None and tr._setup.objective.lam == 0.25


def test_gradient_step_formula() -> None:
    X = np.array([[3.0, 4.0], [1.0, 0.0]])                # squared norms 25 and 1
    step = gradient_step(X, np.array([1.0, 2.0]), LogLoss(lam=0.01), 1, fit_intercept=True)
    sq = np.minimum([26.0, 2.0], np.quantile([26.0, 2.0], 0.99))   # clipped at the 99th pct
    L = 0.25 * (sq[0] * 1.0 + sq[1] * 2.0) / 3.0 + 0.01    # the weighted mean, not the max
    assert step.eps0 == pytest.approx(1 / L) and step.T0 == pytest.approx(L / 0.01)
    sparse = gradient_step(sp.csr_matrix(X), np.ones(2), LogLoss(lam=0.0), 2,
                           fit_intercept=False)
    sq = np.minimum([25.0, 1.0], np.quantile([25.0, 1.0], 0.99))
    assert sparse.eps0 == pytest.approx(1 / (0.25 * sq.mean())) and sparse.T0 == 1.0


def test_class_weight_vector() -> None:
    classes = np.array(["a", "b", "c"])
    np.testing.assert_allclose(class_weight_vector("balanced", classes, np.array([1.0, 3.0, 0.0])),
                               [4 / 3, 4 / 9, 1.0])
    np.testing.assert_allclose(class_weight_vector({"b": 2.5}, classes, np.ones(3)),
                               [1.0, 2.5, 1.0])
    with pytest.raises(ValueError, match="balanced"):
        class_weight_vector("auto", classes, np.ones(3))
    with pytest.raises(ValueError, match=">= 0"):
        class_weight_vector({"a": -1}, classes, np.ones(3))


def test_log_probabilities_are_finite_at_extreme_scores() -> None:
    z = np.array([-1e4, -50.0, 0.0, 50.0, 1e4])
    ls = log_sigmoid(z)
    assert np.all(np.isfinite(ls)) and ls[-1] == 0.0 and ls[0] == pytest.approx(-1e4)
    S = np.array([[1e4, 0.0, -1e4], [0.0, 0.0, 0.0]])
    lp = log_softmax(S)
    assert np.all(np.isfinite(lp))
    np.testing.assert_allclose(np.exp(lp).sum(axis=1), 1.0)
    np.testing.assert_allclose(lp[1], np.log(1 / 3))


def test_linear_model_predictions_and_file_round_trip(tmp_path: Path) -> None:
    m = LinearModel(coef=np.array([[1.0, -2.0]]), intercept=np.array([0.5]),
                    classes=np.array(["no", "yes"]), strategy="binary", loss="logloss",
                    probabilistic=True, info={"curvature": "identity()"})
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    np.testing.assert_allclose(m.decision_function(X), [1.5, -1.5])
    assert m.predict(X).tolist() == ["yes", "no"]
    p = m.predict_proba(X)
    np.testing.assert_allclose(p[0, 1], 1 / (1 + np.exp(-1.5)))
    path = m.save(tmp_path / "m.npz")
    m2 = LinearModel.load(path)
    np.testing.assert_array_equal(m2.coef, m.coef)
    assert m2.predict(sp.csr_matrix(X)).tolist() == ["yes", "no"]
    assert m2.info == m.info and m2.strategy == "binary"
    with pytest.raises(ValueError, match="features"):
        m.predict(np.ones((2, 3)))
    hinge = LinearModel(coef=m.coef, intercept=m.intercept, classes=np.array([0, 1]),
                        strategy="binary", loss="hinge", probabilistic=False)
    with pytest.raises(AttributeError, match="log-likelihood"):
        hinge.predict_proba(X)


def test_model_file_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        LinearModel.load(tmp_path / "none.npz")
    bad = tmp_path / "bad.npz"
    bad.write_text("not a model")
    with pytest.raises(ValueError, match="not an sqnopt model file"):
        LinearModel.load(bad)
    with pytest.raises(ValueError, match="classes need"):
        LinearModel(coef=np.ones((2, 3)), intercept=np.zeros(2), classes=np.array([0, 1]),
                    strategy="binary", loss="logloss", probabilistic=True)
