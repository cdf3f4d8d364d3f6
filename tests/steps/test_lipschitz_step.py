"""The data-driven constant step of the variance-reduced presets: ``LipschitzStep`` computes
``1/(factor L_max)`` from the rows when the solve starts, the step the estimators' recipe takes
for SAGA, so the ``saga`` and ``svrg`` presets work without a step to tune."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt import LipschitzStep, Solver
from sqnopt.datasets import load_a9a, make_boxes
from sqnopt.recipes import choose, variance_reduced_factor


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("intercept", [False, True, "regularized"])
@pytest.mark.parametrize("batch", [1, 7])
def test_the_step_is_the_recipes_variance_reduced_step(sparse: bool, intercept: object,
                                                       batch: int) -> None:
    X, y = make_boxes(300, 6, random_state=0)
    X = X * np.linspace(0.5, 4.0, 6)
    X = sp.csr_matrix(X) if sparse else X
    w = np.random.default_rng(1).uniform(0.5, 2.0, 300)
    solver = Solver.preset("saga", lam=1e-3, batch_size=batch, fit_intercept=intercept)
    state = solver.init_state(X, y, w)
    assert solver.step == LipschitzStep(factor=variance_reduced_factor(batch))
    # the recipe's step on the same rows (its design matrix: the regularised intercept is a
    # constant column), gradient weights normalised to mean 1
    from sqnopt import Fixed
    from sqnopt.curvature import Identity
    from sqnopt.gradients import SAGA

    Xd = state.data.X
    rec = choose(solver.objective, Identity(), Xd, w / w.mean(), fit_intercept=intercept is True,
                 schedule=Fixed(batch), gradient=SAGA())
    assert state.step.step_size(0) == rec.step.eps
    # by hand: L_max = c max_i g_i (||x_i||^2 + [intercept]) + lam
    sq = np.asarray(Xd.multiply(Xd).sum(axis=1)).ravel() if sparse else np.sum(Xd * Xd, 1)
    lmax = 0.25 * np.max((sq + (intercept is True)) * w / w.mean()) + 1e-3
    assert state.step.step_size(5) == pytest.approx(1 / (variance_reduced_factor(batch) * lmax),
                                                   rel=1e-12)


def test_it_needs_the_data() -> None:
    from sqnopt.interfaces import Problem

    problem = Problem(n_samples=3, n_features=2, dim=2, n_blocks=1, n_params=2, lam=0.1,
                      fit_intercept=False, capabilities=frozenset())
    with pytest.raises(TypeError, match="from the training data"):
        LipschitzStep().init(problem)
    with pytest.raises(ValueError, match="factor must be"):
        LipschitzStep(factor=0.0)


@pytest.mark.parametrize("preset", ["saga", "svrg"])
def test_the_variance_reduced_presets_need_no_step(preset: str) -> None:
    X, y = load_a9a("train")
    res = Solver.preset(preset, random_state=0, max_epochs=3).fit(X, y)
    assert res.status.value == "max_samples" and res.fun < 1.02 * 0.32451   # the optimum
    given = Solver.preset(preset, eta=0.05, random_state=0, max_epochs=1)
    assert given.step.describe() == "constant(eps=0.05)"


def test_a_solve_continued_on_new_data_keeps_its_step(tmp_path: object) -> None:
    """The step is learned from the data the solve started on: rebind keeps it, and so does a
    checkpoint restored on new data (through a file too)."""
    from pathlib import Path

    from sqnopt.checkpoint import Checkpoint

    X1, y1 = make_boxes(200, 4, random_state=0)
    X2, y2 = make_boxes(150, 4, random_state=1)
    X2 = X2 * 3.0
    solver = Solver.preset("saga", lam=1e-2, random_state=0)
    state = solver.init_state(X1, y1)
    eps = state.step.step_size(0)
    solver.run(state, max_iter=20)
    path = Path(str(tmp_path)) / "c.npz"
    state.checkpoint(data_state=False).save(path)
    solver.rebind(state, X2, y2)
    assert state.step.step_size(30) == eps
    restored = solver.restore(Checkpoint.load(path), X2, y2, new_data=True)
    assert restored.step.step_size(30) == eps
    fresh = solver.init_state(X2, y2)
    assert fresh.step.step_size(0) < eps / 4      # the new rows are 3 times longer
