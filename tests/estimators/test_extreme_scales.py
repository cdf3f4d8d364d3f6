"""Features at the extremes of float64. Values whose squares overflow (``|x| > 1.3e154``, or a
sum of squares beyond ``1.8e308``) are refused before a fit, naming the fix: every solver forms
squares of the features, and ``SQNClassifier().fit(X * 1e300, y)`` used to stop at ``coef_ = 0``
with ``converged_ = True`` and no warning (the Hessian overflowed, the objective stopped moving,
the relative-decrease test called that convergence). Tiny features are fitted: the regularised
optimum of ``X * 1e-300`` has coefficients of order ``1e-297`` and predicts what the
intercept alone predicts, which is what the fit returns. Prediction is not refused (it forms no
squares)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification

from sqnopt import LogLoss, Solver, SQNClassifier
from sqnopt.data._dataset import check_matrix


def _data(classes: int = 2) -> tuple[np.ndarray, np.ndarray]:
    return make_classification(300, 5, n_informative=3, n_redundant=0, n_classes=classes,
                               random_state=0)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("classes", [2, 3])
@pytest.mark.parametrize("scale", [1e300, 1e200, 2e154])
def test_values_whose_squares_overflow_are_refused_with_the_fix(sparse: bool, classes: int,
                                                                scale: float) -> None:
    X, y = _data(classes)
    Xs = X * scale
    if sparse:
        Xs = sp.csr_matrix(Xs)
    with pytest.raises(ValueError, match=r"X: holds values too large to fit: up to .*their "
                                         r"squares overflow float64.*Scale the features"):
        SQNClassifier().fit(Xs, y)
    with pytest.raises(ValueError, match="too large to fit"):
        Solver(LogLoss(lam=1e-4)).fit(Xs, np.where(y == y[0], 1, -1))


def test_a_single_huge_column_or_an_overflowing_sum_is_refused() -> None:
    X, y = _data()
    mixed = X.copy()
    mixed[:, 2] *= 1e160                       # one column: its squares overflow
    with pytest.raises(ValueError, match=r"up to .*e\+160 \(row \d+, column 2\); their squares"):
        SQNClassifier().fit(mixed, y)
    each_fine = np.full((300, 5), 1e153)      # each square finite, their sum is not
    with pytest.raises(ValueError, match="the sum of their squares overflows"):
        check_matrix(each_fine, fit=True)
    assert check_matrix(each_fine) is not None  # prediction data: no squares, no refusal
    clf = SQNClassifier().fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert clf.predict(X * 1e300).shape == (300,)    # predicting forms no squares


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("scale", [1e-300, 1e-200])
def test_tiny_features_fit_the_regularised_optimum(sparse: bool, scale: float) -> None:
    """The optimum of ``alpha/2 ||w||^2 + mean log-loss`` on ``X * 1e-300``: ``w`` of order
    ``scale / alpha``, margins of order ``scale**2 / alpha`` (zero in float64): the intercept
    fits the class balance, and the coefficients are ``-(1/alpha)`` times the data gradient
    at ``w = 0`` (first order in ``scale``, exact to rounding here)."""
    X, y = _data()
    Xs = X * scale
    if sparse:
        Xs = sp.csr_matrix(Xs)
    alpha = 1e-4
    clf = SQNClassifier(alpha=alpha, curvature="newton", tol=1e-12).fit(Xs, y)
    assert clf.converged_ and np.all(np.isfinite(clf.coef_))
    p = np.mean(y == clf.classes_[1])
    np.testing.assert_allclose(clf.intercept_, [np.log(p / (1 - p))], rtol=1e-6)
    yy = np.where(y == clf.classes_[1], 1.0, -1.0)
    sigma = 1.0 / (1.0 + np.exp(yy * clf.intercept_[0]))     # -dloss/dmargin at w = 0
    expected = (X * scale).T @ (yy * sigma) / len(y) / alpha
    np.testing.assert_allclose(clf.coef_.ravel(), expected, rtol=1e-6)
    assert np.all(clf.predict(Xs) == clf.classes_[int(p > 0.5)])


def test_mixed_scales_fit_the_columns_that_carry_the_signal() -> None:
    """A column at 1e-300 next to ordinary ones: the ordinary ones are fitted as without it."""
    X, y = _data()
    mixed = np.c_[X, X[:, 0] * 1e-300]
    a = SQNClassifier(random_state=0).fit(mixed, y)
    b = SQNClassifier(random_state=0).fit(X, y)
    assert a.converged_ and b.converged_
    np.testing.assert_allclose(a.coef_[0, :5], b.coef_[0], rtol=1e-6, atol=1e-8)
    assert abs(a.coef_[0, 5]) < 1e-290
    assert a.score(mixed, y) == b.score(X, y)


def test_command_line_refuses_overflowing_features(tmp_path: Any, capsys: Any) -> None:
    from sklearn.datasets import dump_svmlight_file

    from sqnopt.cli import main

    X, y = _data()
    dump_svmlight_file(X * 1e300, y, str(tmp_path / "huge.svm"), zero_based=False)
    code = main(["train", str(tmp_path / "huge.svm"), "--progress", "never", "--model",
                 str(tmp_path / "m.npz"), "--history", str(tmp_path / "h.json")])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and "too large to fit" in err, err
    assert "--scale" in err


@pytest.mark.parametrize("sparse", [False, True])
def test_huge_features_at_the_defaults_skip_newton_and_fit(sparse: bool) -> None:
    """Features of 1e10 with alpha = 1e-4: the softmax Hessian's redundant class direction is
    held by lam alone, 1e24 below its data entries -- beyond what a Cholesky factorisation
    resolves. ``auto`` sees it (``hessian_range``) and takes a quasi-Newton model, so the
    default fits (Newton stopped with "the Hessian is not positive definite")."""
    from sqnopt import recipes
    from sqnopt.objectives import Softmax

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y = np.argmax(X[:, :3], axis=1)
    big = X * 1e10
    if sparse:
        big = sp.csr_matrix(big)
    obj = Softmax(lam=1e-4)
    assert recipes.default_curvature(obj, X, 3).name == "newton"
    assert recipes.default_curvature(obj, big, 3).name != "newton"
    assert recipes.hessian_range(big, 1e-4) > recipes.NEWTON_MAX_RANGE
    m = SQNClassifier().fit(big, y)
    ref = SQNClassifier().fit(X, y)
    assert m.score(big, y) >= ref.score(X, y) - 0.01
