"""What a fit fixes before its first iteration: the components, the label strategy and the
sub-problems.

* The **objective** is the ``loss`` with ``λ = alpha`` (:func:`objective_with_lam`).
* The **strategy** (:func:`choose_strategy`): a multiclass objective is solved as one
  multinomial problem; binary labels as one binary problem; more labels as one multinomial
  problem when the loss declares a multiclass form
  (:meth:`~sqnopt.interfaces.Objective.with_capability`, e.g. ``logloss`` -> ``softmax``), else
  as one binary problem per class (one-vs-rest), each with its own seed (:func:`spawn_seeds`).
* The **components** left at ``"auto"`` come from :mod:`sqnopt.recipes`, which reads what the
  components declare (never their names): :func:`requested_components` resolves what the user
  named, :meth:`Requested.recipe` completes it for the data.

Policy lives in the recipes; this module only asks them. The Dask estimator shares it.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable
from typing import Any, Literal, Protocol

import numpy as np
from numpy.typing import NDArray

from sqnopt import recipes
from sqnopt._jobs import check_n_jobs
from sqnopt.interfaces import (
    MULTICLASS,
    SMOOTH,
    Penalty,
    BatchSchedule,
    CurvatureModel,
    GradientEstimator,
    Objective,
    StepRule,
)
from sqnopt.data import LabelKind
from sqnopt.model import Strategy
from sqnopt.registry import get_registry
from sqnopt.solver import DivergenceMonitor, IterationInfo, Solver
from sqnopt.solver._solver import ComponentSpec, RandomState, resolve_component
from sqnopt.training._finish import ConvergenceWarning

Sampling = Literal["uniform", "shuffle", "subset", "weighted"]

#: Curvature model used when none is given (estimators, command line): ``"auto"`` lets
#: :func:`sqnopt.recipes.default_curvature` choose.
DEFAULT_CURVATURE = "auto"
#: Spread of the feature columns' scales (largest over smallest max-abs value) from which a
#: first-order stochastic recipe warns that the features should be scaled.
FEATURE_SPREAD_WARN = 1e2

__all__ = ["DEFAULT_CURVATURE", "FEATURE_SPREAD_WARN", "Requested", "Settings", "Setup",
           "check_settings", "choose_strategy", "loss_objective", "make_setup", "make_solver",
           "n_subproblems",
           "objective_with_lam", "requested_components", "spawn_seeds", "streaming_regime",
           "sub_labels", "target_kind"]


class Settings(Protocol):
    """The constructor parameters of a :class:`~sqnopt.training.Trainer` this module reads."""

    @property
    def loss(self) -> ComponentSpec: ...
    @property
    def alpha(self) -> float: ...
    @property
    def curvature(self) -> ComponentSpec: ...
    @property
    def gradient(self) -> ComponentSpec: ...
    @property
    def schedule(self) -> ComponentSpec: ...
    @property
    def step(self) -> ComponentSpec: ...
    @property
    def projection(self) -> ComponentSpec | None: ...
    @property
    def fit_intercept(self) -> bool | Literal["regularized"]: ...
    @property
    def average(self) -> bool | int: ...
    @property
    def sampling(self) -> Literal["auto", "uniform", "shuffle", "subset", "weighted"]: ...
    @property
    def multiclass(self) -> Literal["auto", "ovr", "multinomial"]: ...
    @property
    def max_epochs(self) -> float: ...
    @property
    def tol(self) -> float | None: ...
    @property
    def n_iter_no_change(self) -> int: ...
    @property
    def report_every(self) -> int | None: ...
    @property
    def history_every(self) -> Any: ...
    @property
    def path(self) -> Literal["auto", "compiled", "python"]: ...
    @property
    def n_jobs(self) -> int | None: ...
    @property
    def parameter_mixing(self) -> bool: ...


@dataclasses.dataclass(frozen=True)
class Setup:
    """What is fixed once training starts (resolved components and the label layout)."""

    objective: Objective
    curvature: CurvatureModel
    gradient: GradientEstimator
    schedule: BatchSchedule
    curvature_schedule: BatchSchedule | None
    step: StepRule
    sampling: Sampling
    full_batch_phase: bool
    report_every: int
    strategy: Strategy
    classes: NDArray[Any]
    n_features: int
    #: the large-data regime (:func:`sqnopt.recipes.streaming`): a step race, then passes
    #: stopped on a held-out split
    streaming: bool = False
    #: the constant steps the race tries (empty: no race)
    step_candidates: tuple[float, ...] = ()


def check_settings(s: Settings) -> None:
    """Refuse settings no fit can use (before any data is looked at)."""
    if s.multiclass not in ("auto", "ovr", "multinomial"):
        raise ValueError(f"multiclass must be 'auto', 'ovr' or 'multinomial', got "
                         f"{s.multiclass!r}")
    a = s.alpha
    if not isinstance(a, (int, float, np.number)) or not math.isfinite(a) or a < 0:
        raise ValueError(f"alpha must be a finite number >= 0, got {a!r}")
    me = s.max_epochs
    if not isinstance(me, (int, float, np.number)) or not math.isfinite(me) or me <= 0:
        raise ValueError(f"max_epochs (max_iter) must be a number > 0, got {me!r}")
    if s.tol is not None and not (isinstance(s.tol, (int, float, np.number))
                                  and math.isfinite(s.tol)):
        raise ValueError(f"tol must be a finite number or None, got {s.tol!r}")
    if not isinstance(s.n_iter_no_change, (int, np.integer)) or s.n_iter_no_change < 1:
        raise ValueError(f"n_iter_no_change must be an integer >= 1, got "
                         f"{s.n_iter_no_change!r}")
    check_n_jobs(s.n_jobs)
    if not isinstance(s.parameter_mixing, (bool, np.bool_)):
        raise ValueError(f"parameter_mixing must be True or False, got "
                         f"{s.parameter_mixing!r}")


#: Components built from a registered name (and, for objectives, ``lam``): one instance per
#: name and registry, shared by the fits that name it when it is a frozen dataclass (a value),
#: so that its description (:meth:`~sqnopt.interfaces.Component.describe`) is kept from fit to
#: fit. A plugin registered or removed makes a new registry, and the entries of the old one are
#: dropped; the registry is part of the key, so a fit racing such a change cannot file an old
#: registry's component under the new one.
_NAMED: dict[tuple[Any, ...], Any] = {}
_NAMED_OF: list[object] = [None]


def _named(kind: str, name: str, base: type, **params: Any) -> Any:
    """``resolve_component(kind, (name, params), base)``, shared as described at ``_NAMED``
    (``params``: plain floats only)."""
    registry = get_registry()
    if _NAMED_OF[0] is not registry or len(_NAMED) > 256:
        _NAMED.clear()
        _NAMED_OF[0] = registry
    # a float's sign is part of the key: -0.0 == 0.0 but describes differently
    key = (registry, kind, name, *((k, v, math.copysign(1.0, v)) for k, v in params.items()))
    cached = _NAMED.get(key)
    if cached is not None:
        return cached
    made = resolve_component(kind, (name, params) if params else name, base)  # type: ignore[arg-type]
    dc = getattr(type(made), "__dataclass_params__", None)
    if dc is not None and dc.frozen and all(type(v) is float for v in params.values()):
        _NAMED[key] = made
    return made


def objective_with_lam(spec: ComponentSpec, lam: float) -> Objective:
    """The objective of ``spec`` with ``lam`` as its regularisation (one named by a string is
    shared between fits, see ``_NAMED``)."""
    if isinstance(spec, str):
        obj_named: Objective = _named("objective", spec, Objective, lam=lam)
        return obj_named
    if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], str):
        params = dict(spec[1])
        params["lam"] = lam
        return resolve_component("objective", (spec[0], params), Objective)  # type: ignore[no-any-return]
    obj: Objective = resolve_component("objective", spec, Objective)
    if float(obj.lam) == lam:
        return obj
    if hasattr(obj, "__dataclass_fields__"):
        replace: Any = dataclasses.replace
        replaced: Objective = replace(obj, lam=lam)
        return replaced
    raise ValueError(f"loss {obj.describe()} has lam={obj.lam} but alpha={lam}; set alpha to the "
                     "regularisation you want")


def target_kind(s: Settings) -> LabelKind:
    """The kind of target the loss of ``s`` fits (its objective's ``label_kind``), before any
    data is seen: classes (``"binary"``, ``"multiclass"``) or real values (``"regression"``)."""
    return loss_objective(s).label_kind


def loss_objective(s: Settings) -> Objective:
    """The objective the loss of ``s`` names (with its ``alpha`` as ``lam``), before any data
    is seen: what it declares (``label_kind``, ``min_target``) holds for every fit."""
    spec = s.loss
    if isinstance(spec, Objective):
        return spec
    a = s.alpha
    lam = (float(a) if isinstance(a, (int, float, np.number)) and math.isfinite(a) and a >= 0
           else 0.0)    # an invalid alpha is reported by check_settings
    return objective_with_lam(spec, lam)


def choose_strategy(objective: Objective, n_classes: int,
                    multiclass: str) -> tuple[Objective, Strategy]:
    """The objective to solve (the loss's multiclass form where the strategy needs it) and
    how its solutions make the model (module docstring)."""
    if objective.label_kind == "regression":
        return objective, "regression"
    if objective.label_kind == "multiclass":
        if multiclass == "ovr":
            raise ValueError(f"multiclass='ovr' needs a binary loss; {objective.describe()} "
                             "is multiclass")
        return objective, "multinomial"
    if n_classes == 2:
        return objective, "binary"
    if multiclass == "ovr":
        return objective, "ovr"
    multi = objective.with_capability(MULTICLASS)
    if multi is not None and multi.label_kind == "multiclass":
        return multi, "multinomial"
    if multiclass == "multinomial":
        raise ValueError(f"multiclass='multinomial': loss {objective.name!r} has no "
                         "multiclass form; use multiclass='ovr'")
    return objective, "ovr"


def _auto_or(value: ComponentSpec, kind: Literal["schedule", "step", "gradient"],
             base: type) -> Any:
    if isinstance(value, str):
        return value if value == "auto" else _named(kind, value, base)
    return resolve_component(kind, value, base)


@dataclasses.dataclass(frozen=True)
class Requested:
    """The components the user named, resolved; ``"auto"`` where the recipe chooses."""

    curvature: CurvatureModel
    #: the curvature model was named (or chosen) rather than built: the recipe may tune it
    curvature_by_name: bool
    schedule: BatchSchedule | str
    step: StepRule | str
    gradient: GradientEstimator | str

    def recipe(self, objective: Objective, X: Any, grad_weight: NDArray[np.float64], *,
               fit_intercept: bool,
               sampling: Literal["auto", "uniform", "shuffle", "subset", "weighted"]
               ) -> recipes.Recipe:
        """:func:`sqnopt.recipes.choose` for these components on ``objective`` and ``X``."""
        return recipes.choose(objective, self.curvature, X, grad_weight,
                              fit_intercept=fit_intercept, schedule=self.schedule,
                              step=self.step, sampling=sampling, gradient=self.gradient,
                              curvature_by_name=self.curvature_by_name)


def requested_components(objective: Objective, X: Any, n_classes: int, *,
                         curvature: ComponentSpec, schedule: ComponentSpec,
                         step: ComponentSpec, gradient: ComponentSpec,
                         sum_squares: float | None = None) -> Requested:
    """Resolve the named components; ``curvature="auto"`` is
    :func:`sqnopt.recipes.default_curvature` for ``objective`` on data shaped like ``X``
    (``sum_squares``: the sum of the squares of ``X``'s values, when the caller has it)."""
    if isinstance(curvature, str) and curvature == "auto":
        model: CurvatureModel = recipes.default_curvature(objective, X, n_classes,
                                                          sum_squares=sum_squares)
        by_name = True
    else:
        model = (_named("curvature", curvature, CurvatureModel) if isinstance(curvature, str)
                 else resolve_component("curvature", curvature, CurvatureModel))
        by_name = isinstance(curvature, str)
    return Requested(curvature=model, curvature_by_name=by_name,
                     schedule=_auto_or(schedule, "schedule", BatchSchedule),
                     step=_auto_or(step, "step", StepRule),
                     gradient=_auto_or(gradient, "gradient", GradientEstimator))


Regime = Literal["memory", "stream"]


def streaming_regime(s: Settings, X: Any, regime: Regime) -> bool:
    """Whether a fit takes the large-data recipe (:func:`sqnopt.recipes.streaming`): the data
    arrive in chunks (``partial_fit``, a stream) or are large in memory
    (:func:`sqnopt.recipes.large_scale`), and the curvature model is left to the recipe
    (``"auto"``) with the schedule and step. A model the user names keeps its own recipe."""
    if not (isinstance(s.curvature, str) and s.curvature == "auto"):
        return False
    if not all(isinstance(v, str) and v == "auto" for v in (s.schedule, s.step, s.gradient)):
        return False
    if regime == "stream":
        return True
    nnz = float(X.nnz) if hasattr(X, "nnz") else float(X.shape[0]) * float(X.shape[1])
    return recipes.large_scale(int(X.shape[0]), nnz)


def make_setup(s: Settings, X: Any, classes: NDArray[Any],
               weights: NDArray[np.float64], regime: Regime = "memory", *,
               sum_squares: float | None = None, check_scale: bool = True) -> Setup:
    """The setup of a fit of ``s`` on ``X`` with labels ``classes`` and sample ``weights``
    (``regime="stream"``: ``X`` is a first chunk of data that arrive in chunks;
    ``sum_squares``: the sum of the squares of ``X``'s values that
    :func:`sqnopt.data.check_matrix` found, saving the recipe a pass; ``check_scale=False``:
    the features' scales were checked on the data ``X`` is the first chunk of, and
    :func:`warn_feature_scale` is not repeated)."""
    penalty: Penalty | None = getattr(s, "penalty", None)
    lam = float(s.alpha) if penalty is None else penalty.l2_strength
    objective, strategy = choose_strategy(objective_with_lam(s.loss, lam),
                                          len(classes), s.multiclass)
    # weights / their mean (np.mean's value, without its dispatch on a small array)
    gw = (weights / (weights.sum() / weights.shape[0]) if s.sampling != "weighted"
          else np.ones_like(weights))
    if penalty is not None and not streaming_regime(s, X, regime):
        raise ValueError(f"penalty {penalty.describe()} is taken by the large-data recipe "
                         "(proximal AdaGrad) only: fit a stream or use partial_fit, with "
                         "curvature, gradient, schedule and step 'auto' -- or solve in memory "
                         "with sqnopt.composite.solve_composite (SQNClassifier(penalty=...)"
                         ".fit does)")
    if streaming_regime(s, X, regime):
        recipe = recipes.streaming(objective, X, s.fit_intercept is True,
                                   l1=0.0 if penalty is None else penalty.l1_strength)
        if s.sampling != "auto":
            recipe = dataclasses.replace(recipe, sampling=s.sampling)
    else:
        requested = requested_components(objective, X, len(classes), curvature=s.curvature,
                                         schedule=s.schedule, step=s.step,
                                         gradient=s.gradient, sum_squares=sum_squares)
        recipe = requested.recipe(objective, X, gw, fit_intercept=s.fit_intercept is True,
                                  sampling=s.sampling)
    if check_scale:
        warn_feature_scale(X, recipe, s.fit_intercept is True)
    return Setup(objective=recipe.objective, curvature=recipe.curvature,
                 gradient=recipe.gradient,
                 schedule=recipe.schedule, curvature_schedule=recipe.curvature_schedule,
                 step=recipe.step, sampling=recipe.sampling,
                 full_batch_phase=recipe.full_batch_phase,
                 report_every=recipe.report_every, strategy=strategy, classes=classes,
                 n_features=int(X.shape[1]), streaming=recipe.streaming,
                 step_candidates=recipe.step_candidates)


def warn_feature_scale(X: Any, recipe: recipes.Recipe, intercept: bool) -> None:
    """Warn once when a first-order stochastic recipe (SGD, AdaGrad: one step size for
    every coordinate) meets columns -- the intercept's constant among them -- whose scales
    differ by orders of magnitude: conditioning such methods feel and curvature models
    undo."""
    if recipe.full_batch_phase or recipe.curvature.direction_scale == "newton":
        return
    spread = recipes.feature_scale_spread(X, intercept)
    if spread >= FEATURE_SPREAD_WARN:
        warnings.warn(
            f"the largest absolute values of the feature columns differ by a factor of "
            f"{spread:.3g}: first-order stochastic steps ({recipe.curvature.describe()}) "
            "converge slowly on such data. Scale the features (e.g. scikit-learn's "
            "StandardScaler for dense, MaxAbsScaler for sparse data)"
            + (" or use a curvature model (curvature='lbfgs')"
               if SMOOTH in recipe.objective.capabilities else ""),
            ConvergenceWarning, stacklevel=4)


def spawn_seeds(random_state: RandomState, k: int) -> list[Any]:
    """``k`` independent seeds derived from ``random_state`` (one per one-vs-rest problem)."""
    if isinstance(random_state, np.random.SeedSequence):
        return list(random_state.spawn(k))
    if isinstance(random_state, np.random.RandomState):
        entropy: Any = int(random_state.randint(0, 2**31 - 1))
    elif isinstance(random_state, np.random.Generator):
        entropy = int(random_state.integers(0, 2**63 - 1))
    elif isinstance(random_state, np.random.BitGenerator):
        entropy = int(np.random.Generator(random_state).integers(0, 2**63 - 1))
    else:
        entropy = random_state
    return list(np.random.SeedSequence(entropy).spawn(k))


def n_subproblems(setup: Setup) -> int:
    """One solve, or one per class for one-vs-rest."""
    return 1 if setup.strategy != "ovr" else len(setup.classes)


def sub_labels(setup: Setup, y: NDArray[Any], j: int) -> tuple[Any, NDArray[Any]]:
    """Labels and label set of sub-problem ``j`` (``±1`` for class ``j`` against the rest)."""
    if setup.strategy == "ovr":
        return np.where(y == setup.classes[j], 1.0, -1.0), np.array([-1.0, 1.0])
    return y, setup.classes


_MONITOR = DivergenceMonitor()
_PER_PASS_MONITOR = DivergenceMonitor(instability=False)


def make_solver(s: Settings, setup: Setup, random_state: Any,
                callback: Callable[[IterationInfo], bool | None] | None,
                step: StepRule | None = None) -> Solver:
    """The :class:`~sqnopt.Solver` of one sub-problem; ``callback`` sees every report (None:
    no callback); ``step`` replaces the setup's (a candidate of the step race)."""
    # the large-data regime records nothing unless asked: a training objective is a pass
    history = (s.history_every if s.history_every is not None
               else None if setup.streaming else (0,))
    report = setup.report_every if s.report_every is None else int(s.report_every)
    # a stochastic fit to ``tol`` runs one pass per ``run`` call (sqnopt.training._epochs): it
    # judges the instability of the whole solve at its end, not of each pass
    per_pass = not setup.full_batch_phase and s.tol is not None
    return Solver(objective=setup.objective, curvature=setup.curvature,
                  gradient=setup.gradient,
                  schedule=setup.schedule, curvature_schedule=setup.curvature_schedule,
                  step=setup.step if step is None else step, projection=s.projection,
                  fit_intercept=s.fit_intercept, average=s.average,
                  sampling=setup.sampling, random_state=random_state,
                  report_every=report, history_every=history,
                  record_grad_norm=(not setup.full_batch_phase and s.tol is not None
                                    and not setup.streaming
                                    and SMOOTH in setup.objective.capabilities),
                  callback=callback, n_jobs=s.n_jobs, path=s.path,
                  monitor=_PER_PASS_MONITOR if per_pass else _MONITOR)
