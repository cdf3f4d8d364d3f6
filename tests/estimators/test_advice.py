"""What a fit that did not converge tells the user to change: only options that are valid for
its composition (no L-BFGS for the hinge loss, which refuses it; no "use lbfgs" to an L-BFGS
fit), no NaN presented as a measurement, and reasons quoted whole, never cut mid-word."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from sqnopt import DivergenceWarning
from sqnopt.datasets import make_boxes
from sqnopt.solver import IncompatibleComponentsError
from sqnopt.training import Trainer
from sqnopt.training._finish import ConvergenceWarning


def _messages(trainer: Trainer, X: object, y: object) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trainer.fit(X, y)
    return [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]


@pytest.fixture(scope="module")
def boxes() -> tuple[np.ndarray, np.ndarray]:
    return make_boxes(400, 6, random_state=0)


def test_a_hinge_fit_is_never_told_to_use_lbfgs(boxes: tuple[np.ndarray, np.ndarray]) -> None:
    X, y = boxes
    with pytest.raises(IncompatibleComponentsError):   # what the old advice proposed
        Trainer("hinge", curvature="lbfgs").fit(X, y)
    # full-batch subgradient descent (the gd preset's composition): tol cannot be met
    full = Trainer("hinge", curvature="identity", schedule="full",
                   step=("constant", {"eps": 0.1}), max_epochs=3)
    (msg,) = _messages(full, X, y)
    assert "lbfgs" not in msg and "not smooth" in msg and "tol=None" in msg
    # stochastic subgradient steps (sgd, asgd): the budget ran out while still improving
    sgd = Trainer("hinge", curvature="identity", step=("inverse_sqrt", {"eps0": 1.0}),
                  schedule=("fixed", {"size": 1}), average=True, max_epochs=2)
    (msg,) = _messages(sgd, X, y)
    assert "lbfgs" not in msg and "nan" not in msg.lower()
    assert "still improving" in msg and "Increase max_iter or loosen tol." in msg


def test_smooth_fits_get_lbfgs_only_when_they_are_not_solving_with_it(
        boxes: tuple[np.ndarray, np.ndarray]) -> None:
    X, y = boxes
    (msg,) = _messages(Trainer(curvature="identity", gradient="minibatch", max_epochs=1), X, y)
    assert "curvature='lbfgs'" in msg
    (msg,) = _messages(Trainer(curvature="lbfgs", max_epochs=1, alpha=1e-6), X, y)
    assert msg.startswith("lbfgs did not converge") and "curvature='lbfgs'" not in msg
    assert msg.endswith("Increase max_iter or loosen tol.")


def test_a_failed_solve_is_quoted_whole_in_the_majority_warning(
        boxes: tuple[np.ndarray, np.ndarray]) -> None:
    X, y = boxes
    y = np.where(np.arange(len(y)) < 300, 1.0, -1.0)       # a majority class of 75 %
    trainer = Trainer(curvature="identity", gradient="minibatch",
                      step=("constant", {"eps": 1e6}), max_epochs=2, tol=None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trainer.fit(X, y)
    diverged = [str(w.message) for w in caught if issubclass(w.category, DivergenceWarning)]
    majority = [str(w.message) for w in caught if "majority" in str(w.message)]
    assert diverged and majority
    first = diverged[0].split(". Returned")[0]          # the first sentence of the reason
    assert f"the solve failed ({first})" in majority[0]
    assert majority[0].endswith("or centred and scaled features")
