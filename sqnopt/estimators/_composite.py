"""The estimators' L1 / elastic-net fits: ``penalty`` and ``l1_ratio`` resolved to a
:class:`~sqnopt.interfaces.Penalty`, solved by :func:`sqnopt.composite.solve_composite`.

A composite objective is solved full batch (OWL-QN or newGLMNET), not by the stochastic driver:
settings that only the driver has (a named curvature model other than the composite methods,
a gradient estimator, a schedule, a step rule, a projection, averaging, ``partial_fit``) are
refused with the fix named.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sqnopt.composite import CompositeResult, solve_composite
from sqnopt.interfaces import MULTICLASS, PROBABILISTIC, Objective, Penalty
from sqnopt.model import LinearModel, Strategy
from sqnopt.penalties import L1, ElasticNet
from sqnopt.training import ConvergenceWarning

FloatArray = NDArray[np.float64]

__all__ = ["COMPOSITE_METHODS", "CompositeFit", "clear_driver_attributes", "fit_composite",
           "resolve_estimator_penalty", "stochastic_penalty"]

#: Fitted attributes only the stochastic driver's fits have (a composite fit drops stale ones).
DRIVER_ATTRIBUTES = ("history_", "t_", "validation_loss_", "steps_")


def clear_driver_attributes(est: Any) -> None:
    """Remove the attributes a previous driver fit left on ``est``."""
    for name in DRIVER_ATTRIBUTES:
        if hasattr(est, name):
            delattr(est, name)

#: ``curvature`` values a composite fit accepts (``"auto"``: chosen by the data's shape).
COMPOSITE_METHODS = ("auto", "owlqn", "newglmnet")


@dataclass
class CompositeFit:
    """What an estimator keeps of a composite fit (where it keeps its ``Trainer`` otherwise):
    the model, the solver results (one per sub-problem), the pass count and convergence."""

    model_: LinearModel
    converged_: bool
    n_iter_: int
    results_: list[CompositeResult] = field(default_factory=list)


def resolve_estimator_penalty(est: Any) -> Penalty | None:
    """The penalty of ``est.penalty`` / ``est.l1_ratio`` / ``est.alpha`` (``None`` for
    ``"l2"``, which the objectives' ``lam`` carries), after checking that the other settings
    can be honoured by a composite fit."""
    checked = _checked_penalty(est)
    if checked is None:
        return None
    penalty = getattr(est, "penalty", "l2")
    name = f"penalty={penalty!r}"
    curvature = est.curvature
    if not (isinstance(curvature, str) and curvature in COMPOSITE_METHODS):
        raise ValueError(f"{name} is solved by the composite methods 'owlqn' (orthant-wise "
                         f"L-BFGS) and 'newglmnet' (proximal Newton), not by curvature="
                         f"{curvature!r}: pass curvature='auto', 'owlqn' or 'newglmnet', or "
                         "penalty='l2'")
    for setting in ("gradient", "schedule", "step"):
        if getattr(est, setting, "auto") != "auto":
            raise ValueError(f"{name} is solved full batch by a composite method, which has no "
                             f"{setting}: leave {setting}='auto' (or use penalty='l2')")
    _check_common(est, name)
    return checked


def stochastic_penalty(est: Any, where: str) -> Penalty | None:
    """The penalty of ``est`` for a fit by the large-data recipe (``where``: "on a stream",
    "in partial_fit"), which takes it in proximal AdaGrad's step
    (:func:`sqnopt.recipes.streaming`); ``None`` for ``"l2"``. The composite methods are full
    batch: a curvature model other than ``"auto"`` (and the driver's other components) is
    refused with the fix named."""
    checked = _checked_penalty(est)
    if checked is None:
        return None
    name = f"penalty={est.penalty!r}"
    for setting in ("curvature", "gradient", "schedule", "step"):
        value = getattr(est, setting, "auto")
        if not (isinstance(value, str) and value == "auto"):
            hint = (" ('owlqn' and 'newglmnet' solve full batch: load the data in memory "
                    "to use them)" if setting == "curvature" else "")
            raise ValueError(f"{name} {where} is fitted by the large-data recipe (proximal "
                             f"AdaGrad with a raced step), which takes no {setting}="
                             f"{value!r}{hint}: leave {setting}='auto', or use penalty='l2'")
    _check_common(est, name)
    return checked


def set_stochastic_penalty(est: Any, trainer: Any, penalty: Penalty | None,
                           first: bool) -> None:
    """Hand ``penalty`` (from :func:`stochastic_penalty`) to the trainer of a ``partial_fit``;
    a penalty that differs from the one the solver state was built with is refused."""
    if not first and trainer._setup is not None and trainer.penalty != penalty:
        raise ValueError(f"partial_fit: penalty={est.penalty!r} with alpha={est.alpha!r} "
                         "differs from the first call's; fit afresh (or clone the "
                         "estimator) to change the penalty")
    trainer.penalty = penalty


def _check_common(est: Any, name: str) -> None:
    if getattr(est, "projection", None) is not None:
        raise ValueError(f"{name} cannot be combined with a projection: pass projection=None "
                         "(or use penalty='l2')")
    if getattr(est, "average", False) not in (False, 0):
        raise ValueError(f"{name} takes no averaging (an average of sparse iterates is not "
                         "sparse): pass average=False")
    if est.fit_intercept not in (True, False):
        raise ValueError(f"{name} takes fit_intercept=True or False (an unpenalised intercept "
                         f"or none), got {est.fit_intercept!r}")


def _checked_penalty(est: Any) -> Penalty | None:
    """``est.penalty`` / ``l1_ratio`` / ``alpha`` as a :class:`~sqnopt.interfaces.Penalty`
    (``None`` for ``"l2"``), the values checked."""
    penalty = getattr(est, "penalty", "l2")
    ratio = getattr(est, "l1_ratio", None)
    if penalty == "l2":
        return None
    if penalty not in ("l1", "elasticnet"):
        raise ValueError(f"penalty must be 'l2', 'l1' or 'elasticnet', got {penalty!r}")
    alpha = est.alpha
    if isinstance(alpha, bool) or not (isinstance(alpha, (int, float, np.number))
                                       and math.isfinite(alpha) and alpha >= 0):
        raise ValueError(f"alpha must be a finite number >= 0, got {alpha!r}")
    if penalty == "elasticnet":
        if ratio is None or isinstance(ratio, bool) or not (
                isinstance(ratio, (int, float, np.number)) and 0.0 <= ratio <= 1.0):
            raise ValueError(f"penalty='elasticnet' needs l1_ratio, a number in [0, 1] (the "
                             f"weight of the L1 norm); got l1_ratio={ratio!r}")
    if penalty == "l1":
        return L1(float(alpha))
    assert ratio is not None
    return ElasticNet(float(alpha), float(ratio))


def class_weighted(sample_weight: Any, class_weight: Any, y: Any) -> FloatArray | None:
    """``sample_weight`` times the weight ``class_weight`` gives each row's class
    (scikit-learn's ``compute_sample_weight``: a dict or ``"balanced"``); ``None`` when both
    are ``None``. The composite fits and the regularization paths' grids weigh rows so."""
    if class_weight is None:
        return None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    from sklearn.utils import column_or_1d
    from sklearn.utils.class_weight import compute_sample_weight

    extra: FloatArray = compute_sample_weight(class_weight, column_or_1d(y))
    return extra if sample_weight is None else np.asarray(sample_weight, dtype=np.float64) * extra


def _smooth(loss: Any) -> Objective:
    from sqnopt.solver._build import resolve_component

    from sqnopt.composite._solve import with_lam

    obj: Objective = resolve_component("objective", loss, Objective)
    return with_lam(obj, 0.0)


def _warm_starts(est: Any, X: Any, classes: NDArray[Any] | None) -> Any:
    """The previous fit's coefficients as starting points (``warm_start=True``): the rows of
    ``[coef_ | intercept_]``, one per solve, the whole array for a multinomial one; None for
    a cold start. Data with other classes or features are refused, as the driver's fits do."""
    if not getattr(est, "warm_start", False) or getattr(est, "coef_", None) is None:
        return None
    coef = np.atleast_2d(np.asarray(est.coef_, dtype=np.float64))
    same = coef.shape[1] == X.shape[1] and (
        classes is None if not hasattr(est, "classes_") or classes is None
        else np.array_equal(np.asarray(est.classes_), classes))
    if not same:
        raise ValueError("warm_start: the data has different classes or features than the "
                         "previous fit; set warm_start=False to start afresh")
    rows = [coef[k] if not est.fit_intercept else np.append(
        coef[k], np.atleast_1d(est.intercept_)[k]) for k in range(coef.shape[0])]
    return np.asarray(rows)


def fit_composite(est: Any, penalty: Penalty, X: Any, y: NDArray[Any],
                  sample_weight: FloatArray | None, *, loss: Any,
                  classes: NDArray[Any] | None) -> CompositeFit:
    """Fit ``loss + penalty`` (``classes``: the sorted labels of a classification, ``None`` for
    a regression): one solve for a binary problem, a regression or a multinomial loss, else one
    per class (one-vs-rest). Warns with a :class:`~sqnopt.training.ConvergenceWarning` when a
    solve ends without meeting ``tol``."""
    objective = _smooth(loss)
    method = est.curvature
    tol = 0.0 if est.tol is None else float(est.tol)
    max_iter = int(est.max_iter)
    # newGLMNET's column copy of X, made once for the solves of this fit (one-vs-rest) or of
    # a regularization path's walk (which keeps it on the estimator, and with it the Gram
    # matrix of a quadratic loss: formed once, it serves every alpha)
    cache = getattr(est, "_column_cache", None)
    kw: dict[str, Any] = dict(method=method, fit_intercept=bool(est.fit_intercept),
                              sample_weight=sample_weight, tol=tol, max_iter=max_iter,
                              column_cache={} if cache is None else cache,
                              gram=cache is not None, n_jobs=getattr(est, "n_jobs", None),
                              random_state=getattr(est, "random_state", None))
    strategy: Strategy
    starts = _warm_starts(est, X, classes)

    def solve(obj: Objective, target: Any, k: int = 0) -> CompositeResult:
        """One composite solve, from the previous fit's ``k``-th row (``warm_start``)."""
        w0 = None if starts is None else (starts.ravel() if k < 0 else starts[k])
        return solve_composite(obj, penalty, X, target, w0=w0, **kw)

    if classes is None:
        results = [solve(objective, y)]
        strategy = "regression"
    elif classes.shape[0] == 2:
        results = [solve(objective, y)]
        strategy = "binary"
    else:
        multi = objective.with_capability(MULTICLASS) if MULTICLASS not in \
            objective.capabilities else objective
        if est.multiclass != "ovr" and multi is not None:
            results = [solve(multi, y, -1)]
            objective, strategy = multi, "multinomial"
        elif est.multiclass == "multinomial":
            raise ValueError(f"multiclass='multinomial' needs a loss with a multiclass form; "
                             f"{objective.describe()} has none: use multiclass='ovr'")
        else:
            results = [solve(objective, np.where(y == c, 1.0, -1.0), k)
                       for k, c in enumerate(classes)]
            strategy = "ovr"
    coef = np.vstack([r.coef for r in results])
    intercept = np.concatenate([r.intercept for r in results])
    model = LinearModel(coef=coef, intercept=intercept,
                        classes=np.empty(0) if classes is None else classes,
                        strategy=strategy, loss=objective.name,
                        probabilistic=PROBABILISTIC in objective.capabilities,
                        info={"penalty": penalty.describe(),
                              "method": ", ".join(dict.fromkeys(r.method for r in results)),
                              "nnz": int(np.count_nonzero(coef))},
                        link=objective.link)
    converged = est.tol is not None and all(r.converged for r in results)
    if est.tol is not None and not converged:
        worst = max(results, key=lambda r: r.pg_max)
        warnings.warn(f"the {worst.method} solve of {objective.name} + {penalty.describe()} "
                      f"stopped ({worst.status}) after {worst.n_iter} iterations with the "
                      f"largest pseudo-gradient entry {worst.pg_max:.3g} > tol = {tol:.3g}: "
                      "raise max_iter, or tol", ConvergenceWarning, stacklevel=3)
    return CompositeFit(model_=model, converged_=converged,
                        n_iter_=max(r.n_iter for r in results), results_=results)
