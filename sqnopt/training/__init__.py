"""Training linear classifiers end to end, without scikit-learn: :class:`Trainer`.

A :class:`Trainer` turns ``(X, y)`` with any labels into one or more :class:`~sqnopt.Solver`
runs and a :class:`~sqnopt.model.LinearModel`:

* **binary** labels: one solve of the (binary) objective;
* **multiclass** labels: one solve of a multiclass objective when the loss is one (or, for
  ``loss="logloss"``, when a ``"softmax"`` objective is registered), else one binary solve per
  class (one-vs-rest; always for hinge-type losses);
* ``class_weight`` (``"balanced"`` or ``{label: weight}``) multiplies ``sample_weight``;
* the schedule, step and sampling left at ``"auto"`` come from :mod:`sqnopt.recipes`, which
  reads what the curvature model declares (secant models: growing batches with a line search,
  ending in the deterministic method; SQB: semistochastic batches; AdaGrad and SGD: minibatches
  with a step from the data);
* ``fit`` runs up to ``max_epochs`` passes and stops once the largest entry of the gradient of
  the training objective is at most ``tol`` (tested for free on every full-batch iteration, and
  after each pass of the stochastic recipes, whose pass-end objective comes with its gradient
  from one fused pass); a stochastic run whose objective stops improving for
  ``n_iter_no_change`` passes stops too. A fit that ends without meeting ``tol`` warns
  (:class:`ConvergenceWarning`) with what it reached, and so does a model whose training
  accuracy is below the majority class's;
* ``partial_fit`` makes one pass over each new batch and keeps the *whole* solver state between
  calls -- iterate and average, curvature memory, iteration counter (hence step sizes and batch
  sizes), random stream -- through :meth:`sqnopt.Solver.rebind`. Batches whose weights are all
  zero are ignored.

The scikit-learn estimators (:mod:`sqnopt.estimators`) and the ``sqnopt`` command line are thin
layers over this class.

Pickling a Trainer keeps the whole solver state of each sub-problem as a checkpoint without
the data (:meth:`sqnopt.SolverState.checkpoint`): after unpickling, ``partial_fit`` continues
exactly as it would have without the pickle -- same iterate and average, curvature memory,
counters (step sizes, batch sizes), history and random stream. ``fit`` can hand checkpoints of
the training run to a callback every few passes and resume from one on the same data
(``fit(..., checkpoint=..., resume=...)``; the command line's ``--checkpoint`` and
``--resume``): the resumed fit ends with the model of the uninterrupted one.

The package is laid out by responsibility, one module each:

* ``_weights``: ``sample_weight`` times ``class_weight``, checked;
* ``_setup``: the objective with ``alpha``, the multiclass strategy and the sub-problems, the
  components the recipes complete, one :class:`~sqnopt.Solver` per sub-problem;
* ``_epochs``: ``fit``'s budget and stopping rules on one sub-problem;
* ``_progress``: the progress bar and the user's callbacks;
* ``_checkpoints``: training checkpoints and what a resume must match;
* ``_finish``: the fitted model and the convergence warnings;
* ``_trainer``: :class:`Trainer`, which calls them in that order.
"""

import sys
import types
from typing import Any

from sqnopt.progress import ProgressBar as ProgressBar
from sqnopt.training import _progress
from sqnopt.training._epochs import FTOL as FTOL
from sqnopt.training._finish import ConvergenceWarning
from sqnopt.training._setup import DEFAULT_CURVATURE as _DEFAULT_CURVATURE
from sqnopt.training._setup import Setup
from sqnopt.training._setup import FEATURE_SPREAD_WARN as FEATURE_SPREAD_WARN
from sqnopt.training._trainer import Trainer
from sqnopt.training._weights import class_weight_vector


class _Package(types.ModuleType):
    """``sqnopt.training.ProgressBar`` is the class the Trainer's bars are made of: setting it
    here sets it where the bars are made (:mod:`._progress`), as when the Trainer lived in
    this module (the tests draw short runs with a bar that has no delay)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "ProgressBar":
            setattr(_progress, name, value)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package

#: Curvature model used when none is given (estimators, command line): ``"auto"`` lets
#: :func:`sqnopt.recipes.default_curvature` choose.
DEFAULT_CURVATURE = _DEFAULT_CURVATURE

#: The setup's class as pickles of Trainers by sqnopt before this package find it.
_Setup = Setup

__all__ = [
    "DEFAULT_CURVATURE",
    "ConvergenceWarning",
    "Trainer",
    "class_weight_vector",
]
