"""The generic stochastic-descent driver: :class:`Solver`.

The class combines the components and the settings (its constructor validates them), the
building of a solve (:mod:`sqnopt.solver._build`: data, kernels, sampler, loop) and its running
(:mod:`sqnopt.solver._run`: budgets, tolerances, history, divergence monitor, result).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from sqnopt._jobs import check_n_jobs
from sqnopt.interfaces import (
    LINEAR_SCORES,
    BatchSchedule,
    CurvatureModel,
    GradientEstimator,
    Objective,
    Projection,
    StepRule,
)
from sqnopt.registry import get_registry
from sqnopt.solver._blas import blas_threads_limited
from sqnopt.solver._build import (
    Callback,
    ComponentSpec,
    IncompatibleComponentsError,
    RandomState,
    Sampling,
    _Builder,
    _check_compatible,
    _check_positive,
    make_bit_generator,
    resolve_component,
)
from sqnopt.solver._monitor import DivergenceMonitor
from sqnopt.solver._result import SolveResult
from sqnopt.solver._run import _Runner

__all__ = ["ComponentSpec", "IncompatibleComponentsError", "RandomState", "Solver",
           "make_bit_generator", "resolve_component"]


class Solver(_Builder, _Runner):
    r"""Generic stochastic descent: ``w_{t+1} = P(w_t - eps_t H_t s(w_t, B_t))``.

    Combines an :class:`~sqnopt.interfaces.Objective`, a
    :class:`~sqnopt.interfaces.CurvatureModel` (direction ``H g``), a
    :class:`~sqnopt.interfaces.BatchSchedule` (``|B_t|``) and a :class:`~sqnopt.interfaces.StepRule`
    (``eps_t``), plus an optional :class:`~sqnopt.interfaces.Projection` ``P``. Each may be given as
    an instance, a registered name (``"olbfgs"``) or ``(name, params)``.

    When every component is compiled the iteration runs in Cython without the GIL and returns to
    Python every ``report_every`` iterations (history, callbacks, time budget, target checks);
    otherwise the identical iteration runs in Python.

    Parameters
    ----------
    objective, curvature, schedule, step, projection
        The components.
    gradient
        The gradient estimator the steps use (:mod:`sqnopt.gradients`): ``"minibatch"`` (the
        minibatch gradient), ``"svrg"`` or ``"saga"`` (variance-reduced: constant steps converge
        linearly). Secant pairs and line searches use the plain minibatch gradient.
    curvature_schedule
        Batch schedule of the independent curvature batches of models that build curvature from
        their own samples (SQB); defaults to ``schedule``.
    fit_intercept
        ``True``: fit an unregularised intercept (last coordinate of each parameter block).
        ``"regularized"``: an intercept regularised (and projected) like the weights, i.e. a
        constant feature of value 1 appended to ``X`` (a copy of ``X`` is made) -- Pegasos'
        (Shalev-Shwartz et al. 2007, Sec. 6) and LIBLINEAR's choice; the objective then includes
        ``lam/2 b^2``. The result splits ``coef`` and ``intercept`` the same way.
    average
        Polyak-Ruppert averaging: ``True`` averages all iterates, an integer ``k`` averages those
        after iteration ``k``. The average is the reported iterate.
    sampling
        ``"uniform"`` (i.i.d. with replacement), ``"shuffle"`` (without replacement, reshuffled
        each epoch), ``"subset"`` (each batch a uniformly random subset of distinct samples, so
        a batch of size N is the whole data set: the sampling of growing-batch methods such as
        SQB; with the plain minibatch gradient and no curvature batches a growing batch
        extends the one before it, whose gradient at the accepted step the driver reuses,
        evaluating only the new samples; otherwise batches are independent) or ``"weighted"`` (i.i.d. with probability
        proportional to sample weights, which then do not enter the minibatch gradient).
    batch_sequence
        Inject the exact sequence of sample indices to use (tests, reproducing other codes).
    random_state
        Seeds the one generator behind every sampler: same seed, same result.
    max_iter, max_samples, max_epochs, max_time
        Budgets per ``run`` call (iterations, samples processed, samples / N, solver seconds).
        With none of them given the budget is ``max_epochs=10``.
    target_objective, gtol, ftol
        Tolerances; a run that meets one stops with ``success=True``. ``F(w) <= target_objective``
        and ``||grad F(w)||_inf <= gtol`` (the largest absolute partial derivative, as in
        ``scipy.optimize`` and scikit-learn) are checked at report points on the full
        training set (one extra pass each) -- except that when an iteration's batch is the whole
        data set (``Full`` schedules, growing batches once they reach ``N``) the loop tests
        ``gtol`` on that iteration's own gradient at no extra cost, and ``ftol`` on the relative
        decrease of the full objective between two such iterations,
        ``F(w_{t-1}) - F(w_t) <= ftol * max(|F(w_{t-1})|, |F(w_t)|, 1)`` (L-BFGS-B's test).
        A full-batch line search that fails because the decrease it predicts is below the
        working precision ends with ``Status.PRECISION`` (also a success).
    monitor
        The divergence monitor (:class:`~sqnopt.solver.DivergenceMonitor`; ``None`` disables it).
        A run whose objective blows up stops with ``Status.DIVERGED``, returns the best iterate
        the monitor saw and warns (:class:`~sqnopt.DivergenceWarning`) with the likely cause and
        fix; non-finite values always end a run that way.
    report_every
        Iterations between returns to Python.
    history_every
        Record ``F`` on the full training set every this many iterations (an ``int``), or at the
        given iteration numbers (a sequence); ``None`` records only the start and the end.
    record_grad_norm
        Also record ``||grad F||_inf`` in the history (the gradient comes with the objective
        from one fused pass).
    callback
        ``callback(info) -> bool | None`` at report points; returning True (or raising
        ``StopIteration``) stops the run.
    n_jobs
        Threads for the compiled passes over the data (full-batch gradients, Hessian-vector
        products, the Newton Hessian, the line search's score gathers, SVRG/SAGA snapshots):
        scikit-learn's meaning -- ``None`` is 1 unless a ``joblib.parallel_config(n_jobs=...)``
        context says otherwise, ``-1`` every core the process may use, ``-2`` all but one. A
        pass splits its rows into blocks fixed by the data and adds the blocks' sums in block
        order, so the result is the same, bit for bit, for every ``n_jobs``; passes too small
        to pay for a thread stay on one (see :mod:`sqnopt._parallel` and ``docs/parallel.md``).
    blas_threads
        BLAS threads while ``run`` executes (via threadpoolctl); ``None`` leaves the library's
        setting. The loop's BLAS calls are small, so threading them costs more than it gains
        (see :mod:`sqnopt.solver._blas`). They run between the passes, never alongside them,
        so a run keeps at most ``max(n_jobs, blas_threads)`` threads busy.
    path
        Which loop and iterate representation run. ``"auto"``: on sparse (CSR) data, the
        compiled driver with the scaled sparse iterate ``w = a v`` when the combination allows
        it (margin objective, identity curvature, plain minibatch gradient, no line search, no
        projection or a Euclidean ball; an iteration then costs O(nnz of the batch), see
        :mod:`sqnopt.solver._scaled_loop`); with the SAGA estimator in place of the plain
        minibatch gradient (an estimator declaring ``score_table``) and no averaging, the lazy
        SAGA iterate, whose just-in-time updates also cost O(nnz of the batch), when a batch's
        entries are few against the features (:mod:`sqnopt.solver._lazy_loop`); else the
        compiled driver with the dense iterate when every component is compiled, else the
        Python loop. ``"compiled"``: as ``"auto"`` but an error unless every component is
        compiled. ``"generic"``: the compiled driver with the dense iterate. ``"scaled"``: the
        compiled driver with the scaled sparse (or lazy SAGA) iterate, on dense data and any
        batch size too (an error if the combination does not allow it).
        ``"python"``: the Python loop.
    """

    def __init__(
        self,
        objective: ComponentSpec = "logloss",
        curvature: ComponentSpec = "identity",
        schedule: ComponentSpec = "fixed",
        step: ComponentSpec = "decaying",
        *,
        projection: ComponentSpec | None = None,
        gradient: ComponentSpec = "minibatch",
        curvature_schedule: ComponentSpec | None = None,
        fit_intercept: bool | Literal["regularized"] = False,
        average: bool | int = False,
        sampling: Sampling = "uniform",
        batch_sequence: ArrayLike | None = None,
        random_state: RandomState = None,
        max_iter: int | None = None,
        max_samples: int | None = None,
        max_epochs: float | None = None,
        max_time: float | None = None,
        target_objective: float | None = None,
        gtol: float | None = None,
        ftol: float | None = None,
        monitor: DivergenceMonitor | None = DivergenceMonitor(),
        report_every: int = 1000,
        history_every: int | Sequence[int] | None = None,
        record_grad_norm: bool = False,
        callback: Callback | Iterable[Callback] | None = None,
        n_jobs: int | None = None,
        blas_threads: int | None = 1,
        path: Literal["auto", "compiled", "generic", "scaled", "python"] = "auto",
    ) -> None:
        self.objective: Objective = resolve_component("objective", objective, Objective)
        self.curvature: CurvatureModel = resolve_component("curvature", curvature, CurvatureModel)
        self.schedule: BatchSchedule = resolve_component("schedule", schedule, BatchSchedule)
        self.step: StepRule = resolve_component("step", step, StepRule)
        self.projection: Projection | None = (None if projection is None
                           else resolve_component("projection", projection, Projection))
        self.curvature_schedule: BatchSchedule | None = (None if curvature_schedule is None else
                                   resolve_component("schedule", curvature_schedule, BatchSchedule))
        self.gradient: GradientEstimator = resolve_component("gradient", gradient,
                                                              GradientEstimator)
        _check_compatible(self.objective, self.curvature, self.step, self.projection,
                          self.curvature_schedule, fit_intercept, self.gradient)
        if sampling == "weighted" and self.gradient.requires & {LINEAR_SCORES}:
            raise IncompatibleComponentsError(
                f"gradient {self.gradient.describe()} keeps a table averaged over the samples, "
                "which importance sampling (sampling='weighted') would bias. Use weighted losses "
                "(the default sampling) or the SVRG estimator.")
        if sampling not in ("uniform", "shuffle", "subset", "weighted"):
            raise ValueError(f"sampling must be 'uniform', 'shuffle', 'subset' or 'weighted', "
                             f"got {sampling!r}")
        if path not in ("auto", "compiled", "generic", "scaled", "python"):
            raise ValueError("path must be 'auto', 'compiled', 'generic', 'scaled' or 'python', "
                             f"got {path!r}")
        if not isinstance(average, (bool, int, np.integer)) or (
                not isinstance(average, bool) and average < 0):
            raise ValueError(f"average must be a bool or an iteration number >= 0, got {average!r}")
        if average is not False and self.curvature.composite_step:
            raise IncompatibleComponentsError(
                f"curvature {self.curvature.describe()} makes composite steps, whose just-in-time "
                "sparse form keeps no running average: use average=False (or composite=False)")
        _check_positive("max_iter", max_iter, integer=True, allow_zero=True)
        _check_positive("max_samples", max_samples, integer=True, allow_zero=True)
        _check_positive("max_epochs", max_epochs, allow_zero=True)
        _check_positive("max_time", max_time)
        _check_positive("gtol", gtol)
        _check_positive("ftol", ftol)
        if monitor is not None and not isinstance(monitor, DivergenceMonitor):
            raise TypeError(f"monitor must be a DivergenceMonitor or None, got "
                            f"{type(monitor).__name__}")
        _check_positive("report_every", report_every, integer=True)
        if target_objective is not None and not math.isfinite(target_objective):
            raise ValueError("target_objective must be finite")
        if isinstance(history_every, (int, np.integer)):
            _check_positive("history_every", int(history_every), integer=True)
        elif isinstance(history_every, (tuple, list)) and history_every and all(
                type(q) is int and 0 <= q < 2**63 for q in history_every):
            pass    # iteration numbers as NumPy would accept them, checked without an array
        elif history_every is not None:
            pts = np.asarray(history_every)
            if pts.ndim != 1 or pts.dtype.kind not in "iu" or np.any(pts < 0):
                raise ValueError("history_every must be an int or a sequence of iteration numbers")
        if isinstance(fit_intercept, str):
            if fit_intercept != "regularized":
                raise ValueError(f"fit_intercept must be True, False or 'regularized', got "
                                 f"{fit_intercept!r}")
            self.fit_intercept: bool | Literal["regularized"] = "regularized"
        else:
            self.fit_intercept = bool(fit_intercept)
        self.average = average
        self.sampling: Sampling = sampling
        self.batch_sequence = None if batch_sequence is None else np.array(batch_sequence,
                                                                           dtype=np.intp)
        self.random_state = random_state
        self.max_iter = max_iter
        self.max_samples = max_samples
        self.max_epochs = max_epochs
        self.max_time = max_time
        self.target_objective = target_objective
        self.gtol = gtol
        self.ftol = ftol
        self.monitor = monitor
        self.report_every = int(report_every)
        self.history_every = history_every
        self.record_grad_norm = bool(record_grad_norm)
        if callback is None:
            self.callbacks: tuple[Callback, ...] = ()
        elif callable(callback):
            self.callbacks = (callback,)
        else:
            self.callbacks = tuple(callback)
        if blas_threads is not None:
            _check_positive("blas_threads", blas_threads, integer=True)
        self.blas_threads = blas_threads
        self.n_jobs = check_n_jobs(n_jobs)
        self.path = path

    def __repr__(self) -> str:
        parts = [self.objective.describe(), self.curvature.describe(), self.schedule.describe(),
                 self.step.describe()]
        if self.projection is not None:
            parts.append(f"projection={self.projection.describe()}")
        return f"Solver({', '.join(parts)})"

    @classmethod
    def pegasos(cls, lam: float = 1e-4, *, batch_size: int = 1, average: bool | int = False,
                **kwargs: Any) -> Solver:
        """Pegasos as a composition of registered components (hinge, ``PegasosStep``, L2 ball,
        minibatch ``batch_size``); the ``"pegasos"`` preset (:func:`sqnopt.presets.pegasos`)."""
        return cls.preset("pegasos", lam=lam, batch_size=batch_size, average=average, **kwargs)

    @classmethod
    def preset(cls, name: str, **kwargs: Any) -> Solver:
        """A named composition registered through the ``sqnopt_register_presets`` hook: the
        built-ins ``"pegasos"``, ``"sgd"``, ``"asgd"``, ``"adagrad"``, ``"smd"``, ``"seg_pm"``,
        ``"gd"``, ``"pgd"``, ``"lbfgs"``, ``"sqb"`` (:mod:`sqnopt.presets`) and any a plugin
        adds."""
        solver = get_registry().preset(name).factory(**kwargs)
        if not isinstance(solver, Solver):
            raise TypeError(f"preset {name!r} built a {type(solver).__name__}, not a Solver")
        return solver

    def fit(self, X: Any, y: ArrayLike, sample_weight: ArrayLike | None = None, *,
            classes: ArrayLike | None = None, w0: ArrayLike | None = None) -> SolveResult:
        """Solve on ``(X, y)`` from ``w0`` (zeros by default); see :meth:`run` for the stops.
        The ``blas_threads`` limit holds from the validation on (see :mod:`sqnopt.solver._blas`:
        OpenBLAS workers woken by the validation's sum of squares would spin through the run)."""
        with blas_threads_limited(self.blas_threads):
            state = self.init_state(X, y, sample_weight, classes=classes, w0=w0)
            state.private = True        # the result may take the iterate's buffer: no copy
            # a final F(w) left to the result keeps the data alive: only the caller's own
            # arrays, never a converted copy that would otherwise go with the state
            state.lazy_objective = _shares_input(state.data.X, X)
            return self.run(state)


def _shares_input(Xc: Any, X: Any) -> bool:
    """Whether the validated design matrix ``Xc`` is (a view of) the caller's ``X``, no copy."""
    if Xc is X:
        return True
    if sp.issparse(Xc):
        return bool(sp.issparse(X) and isinstance(getattr(X, "data", None), np.ndarray)
                    and np.may_share_memory(Xc.data, X.data))
    return isinstance(X, np.ndarray) and bool(np.may_share_memory(Xc, X))
