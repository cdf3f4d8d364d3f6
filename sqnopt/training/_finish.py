"""From the sub-problems' results to a fitted model, and the warnings a finished fit owes.

* :func:`build_model` joins the solutions of the sub-problems into one
  :class:`~sqnopt.model.LinearModel`: one row of ``coef`` per class for one-vs-rest, the
  multiclass objective's blocks for multinomial fits -- two softmax blocks of a binary problem
  become their score difference ``w_1 - w_0``, the model a binary logistic fit gives;
* :func:`unconverged_message` says which sub-problems ended without meeting ``tol`` and what
  to change; :func:`check_majority` warns when the model's weighted training accuracy is below
  the heaviest class's -- a solve that failed, or data (and ``alpha``) with nothing to learn.

Both warnings are :class:`ConvergenceWarning`. The same code serves the in-memory
:class:`~sqnopt.training.Trainer` and the Dask estimator.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from sqnopt.interfaces import (
    PROBABILISTIC,
    SMOOTH,
    BatchSchedule,
    CurvatureModel,
    GradientEstimator,
    Objective,
    StepRule,
)
from sqnopt._text import first_sentence
from sqnopt.model import LinearModel, Strategy
from sqnopt.solver import SolveResult

__all__ = ["ConvergenceWarning", "build_model", "check_majority", "unconverged_advice",
           "unconverged_message"]


class ConvergenceWarning(UserWarning):
    """A fit ended without meeting its tolerance, or with a model worse than predicting the
    majority class; the message says what was reached and what to change."""


class Composition(Protocol):
    """The resolved components of a fit and its label strategy (what a model records)."""

    @property
    def objective(self) -> Objective: ...
    @property
    def curvature(self) -> CurvatureModel: ...
    @property
    def gradient(self) -> GradientEstimator: ...
    @property
    def schedule(self) -> BatchSchedule: ...
    @property
    def step(self) -> StepRule: ...
    @property
    def strategy(self) -> Strategy: ...


def build_model(setup: Composition, classes: NDArray[Any], results: Sequence[SolveResult],
                fit_intercept: object) -> LinearModel:
    """The model of the sub-problems' ``results`` (one per class for one-vs-rest, else one)."""
    if setup.strategy == "ovr":
        coef = np.vstack([np.atleast_2d(r.coef) for r in results])
        icpt = np.array([float(np.asarray(r.intercept)) for r in results])
    else:
        coef = np.atleast_2d(results[0].coef)
        icpt = np.atleast_1d(np.asarray(results[0].intercept, dtype=np.float64))
        if setup.strategy == "multinomial" and len(classes) == 2:
            coef, icpt = (coef[1] - coef[0])[None, :], icpt[1:] - icpt[:1]
    info = {"objective": setup.objective.describe(), "gradient": setup.gradient.describe(),
            "curvature": setup.curvature.describe(), "schedule": setup.schedule.describe(),
            "step": setup.step.describe(), "fit_intercept": bool(fit_intercept),
            "strategy": setup.strategy}
    link = setup.objective.link if setup.strategy == "regression" else "identity"
    return LinearModel(coef=coef, intercept=icpt, classes=classes, strategy=setup.strategy,
                       loss=setup.objective.name,
                       probabilistic=PROBABILISTIC in setup.objective.capabilities, info=info,
                       link=link)


class _Plan(Composition, Protocol):
    """A composition with the regime its recipe chose (:class:`~sqnopt.training._setup.Setup`)."""

    @property
    def full_batch_phase(self) -> bool: ...


def unconverged_message(setup: _Plan, whys: Sequence[str]) -> str:
    """The warning of a fit whose sub-problems ended for the reasons ``whys`` (at most three
    quoted) without meeting ``tol``, with what to change: only options that are valid for the
    composition (:func:`unconverged_advice`)."""
    curvature = setup.curvature
    return (f"{curvature.name or type(curvature).__name__} did not converge: "
            + "; ".join(whys[:3])
            + (f" (and {len(whys) - 3} more)" if len(whys) > 3 else "")
            + ". " + unconverged_advice(setup))


def unconverged_advice(setup: _Plan) -> str:
    """What to change after a fit that did not meet ``tol``, from the composition: a
    non-smooth loss (hinge) has a subgradient that need not vanish at the optimum, so a test of
    the gradient cannot be met and a curvature model that learns from gradient differences
    (L-BFGS) does not apply; a stochastic recipe on a smooth loss can hand over to L-BFGS, which
    solves to ``tol`` on full batches; a run that already does only needs more budget."""
    objective = setup.objective
    if SMOOTH not in objective.capabilities:
        if setup.full_batch_phase:
            return (f"The loss {objective.name} is not smooth: its subgradient does not vanish "
                    "at the optimum, so tol (a bound on the largest gradient entry) cannot be "
                    "met. Set tol=None to run the whole budget (max_iter), or use a smooth loss "
                    "(squared_hinge, logloss) to solve to tol.")
        return "Increase max_iter or loosen tol."
    if setup.full_batch_phase:
        return "Increase max_iter or loosen tol."
    return ("Increase max_iter, loosen tol, or use curvature='lbfgs' (solves to tol on full "
            "batches).")


def check_majority(model: LinearModel, X: Any, y: NDArray[Any], classes: NDArray[Any],
                   weights: NDArray[np.float64], converged: bool,
                   results: Sequence[SolveResult], stacklevel: int,
                   index: NDArray[np.intp] | None = None, n_jobs: int | None = 1) -> None:
    """Warn when the model's weighted training accuracy is below that of predicting the
    heaviest class: a failed solve when it did not converge, else a model (and data) no
    better than a constant. ``X`` is the validated training matrix (not checked again);
    ``index``, when given, each sample's position in ``classes``; ``n_jobs``: the fit's (the
    scores of sparse rows in blocks on that many threads)."""
    scores = model.scores_of(X, n_jobs)
    if index is not None:   # predicted positions against the labels' (no labels looked up)
        hit = ((scores > 0) if scores.ndim == 1 else np.argmax(scores, axis=1)) == index
    else:
        hit = model.labels_of_scores(scores) == y
    total = float(weights.sum())
    acc = float((weights * hit).sum()) / total
    if index is not None:
        majority = float(np.bincount(index, weights, minlength=len(classes)).max()) / total
    else:
        majority = max(float(np.sum(weights[y == c])) for c in classes) / total
    if acc >= majority - 1e-12:
        return
    if converged:
        msg = (f"the fitted model's training accuracy {acc:.4f} is below the majority "
               f"class's {majority:.4f}, though the solve converged: at this alpha the "
               "optimum of the loss is no better than predicting a constant (features "
               "without signal, or alpha too large)")
    else:
        reasons = "; ".join(dict.fromkeys(first_sentence(r.message).rstrip(".")
                                          for r in results))
        msg = (f"the fitted model's training accuracy {acc:.4f} is below the majority "
               f"class's {majority:.4f}: the solve failed ({reasons}). Use the defaults "
               "(curvature='auto'), a smaller step, or centred and scaled features")
    warnings.warn(msg, ConvergenceWarning, stacklevel=stacklevel)
