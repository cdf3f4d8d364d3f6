"""The contenders, declared in one table (:data:`CONTENDERS`).

Each entry says which losses it solves *exactly as posed* (``F(w) = alpha/2 ||w||^2 + mean loss``,
no intercept; one-vs-rest solvers are not entered for ``softmax``), how it is run, and what it
needs. Three kinds:

* ``trace`` -- an :class:`sqnopt.Solver` (built by ``build(problem, params, **solver_kwargs)``,
  public API only); the runner records ``result.history`` (solver time with evaluation
  excluded, effective passes, objective) at report points and stops it with a callback once it
  is below the last target. The time of ``init_state`` (validation, kernel set-up) is added.
* ``sweep`` -- a closed solver: independent fits from scratch at growing ``max_iter`` budgets,
  each fit timed as a whole (``build(problem, params, budget, seed) -> (fit, extract)``).
* ``online`` -- a learner fed pass by pass (river): the cumulative time of its ``learn`` calls.

A new sqnopt composition is one more entry, e.g.::

    Contender("sqnopt SVRG+L-BFGS", "sqnopt", SMOOTH, "trace",
              preset_trace("svrg_lbfgs", batch_size=64), available=preset_available("svrg_lbfgs"))

Entries whose library or sqnopt component is missing are skipped with a printed line.
"""

from __future__ import annotations

import functools

import importlib
import math
import os
import tempfile
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import regression
from .problems import Problem

#: sqnopt's estimator contenders' ``n_jobs`` (``--cores``; set by the command line)
N_JOBS = [1]

SMOOTH = ("logistic", "sqhinge", "softmax")
BINARY_SMOOTH = ("logistic", "sqhinge")
ALL = ("logistic", "sqhinge", "hinge", "softmax")

Params = Mapping[str, Any]
TraceBuild = Callable[..., Any]
SweepBuild = Callable[[Problem, Params, int, int], tuple[Callable[[], Any],
                                                         Callable[[], tuple[Any, float, int]]]]


@dataclass(frozen=True)
class Contender:
    """One row of the race (see the module docstring)."""

    name: str
    library: str
    losses: tuple[str, ...]
    kind: str                                   # "trace" | "sweep" | "online"
    build: Callable[..., Any]
    module: str | None = None                   # import needed (optional peers)
    available: Callable[[], str | None] | None = None   # None, or why it is skipped
    max_params: int | None = None               # skip above this many parameters
    max_cells: float | None = None              # skip when N * d exceeds this
    grid: Callable[[Problem], list[dict[str, Any]]] | None = None   # tuned by a pilot run
    batch: int | None = 1                       # trace: samples per iteration (None: full/own)
    passes_kind: str = "passes"                 # "passes" (data touched) or "iterations"
    max_budget: int = 100_000                   # sweep: largest max_iter tried
    min_budget: int = 1                         # sweep: smallest max_iter tried
    note: str = ""

    def skip_reason(self, p: Problem) -> str | None:
        if p.loss not in self.losses:
            return "loss"     # not entered for this problem: silent
        if self.max_params is not None and p.n_params > self.max_params:
            return (f"{p.n_params} parameters > {self.max_params} (dense O(n^2) curvature "
                    "matrix)")
        if self.max_cells is not None and p.n * p.d > self.max_cells:
            return f"N x d = {p.n * p.d:.2g} > {self.max_cells:.2g} (too slow to finish)"
        return None

    def missing(self) -> str | None:
        """Why this contender cannot run in this environment (None: it can)."""
        if self.module is not None:
            try:
                importlib.import_module(self.module)
            except ImportError as exc:
                return f"{self.module} is not installed ({exc.msg})"
        if self.available is not None:
            return self.available()
        return None


# ---------------------------------------------------------------------------- sqnopt
def _objective(p: Problem, lam: float | None = None) -> Any:
    from sqnopt import Hinge, LogLoss, Softmax, SquaredHinge

    lam = p.alpha if lam is None else lam
    return {"logistic": LogLoss, "sqhinge": SquaredHinge, "hinge": Hinge,
            "softmax": Softmax}[p.loss](lam=lam)


_NAMES = {"logistic": "logloss", "sqhinge": "squared_hinge", "hinge": "hinge",
          "softmax": "softmax"}


def step_grid(factors: tuple[float, ...]) -> Callable[[Problem], list[dict[str, Any]]]:
    """Step sizes ``f / L`` with ``L = max_i c ||x_i||^2 + alpha`` (the largest per-sample
    smoothness constant of the loss)."""
    def grid(p: Problem) -> list[dict[str, Any]]:
        L = p.lipschitz()
        return [{"eps0": f / L} for f in factors]
    return grid


def value_grid(key: str, values: tuple[float, ...]) -> Callable[[Problem], list[dict[str, Any]]]:
    def grid(p: Problem) -> list[dict[str, Any]]:
        return [{key: v} for v in values]
    return grid


def vr_grid(values: tuple[float, ...], fractions: tuple[float, ...]
            ) -> Callable[[Problem], list[dict[str, Any]]]:
    """Constant steps ``eta`` of the variance-reduced contenders: the fixed ``values``, and
    ``f / L_max`` for ``f`` in ``fractions`` where that is above them (``L_max`` from
    :meth:`Problem.lipschitz`, the largest per-sample smoothness constant).

    The fixed values stop at 1, which is ``1/(4 L_max)`` on unit-norm rows of the logistic loss
    (``L_max = 1/4``). The theory's bounds: SAGA converges linearly for ``eta <= 1/(3 L_max)``
    (Defazio, Bach & Lacoste-Julien 2014); SVRG's proof needs ``eta < 1/(4 L_max)`` (Johnson &
    Zhang 2013). Above them, a step below ``1/L_max`` is still a descent step on every single
    sample's loss (the step Schmidt, Le Roux & Bach use for SAG in practice); the fractions fill
    the range up to it (1/2 and 3/4 of ``1/L_max``: eta = 2 and 3 on unit-norm logistic rows),
    and the race's pilot runs pick the step by what it reaches, so one too large just loses."""
    def grid(p: Problem) -> list[dict[str, Any]]:
        L = p.lipschitz()
        extra = tuple(f / L for f in fractions if f / L > max(values))
        return [{"eta": v} for v in (*values, *extra)]
    return grid


def sgd_trace(batch: int) -> TraceBuild:
    """SGD: identity curvature, ``Decaying(eps0, T0 = N / b)`` (full step for a pass, then
    ``1/t``)."""
    def build(p: Problem, params: Params, **kw: Any) -> Any:
        from sqnopt import Decaying, Fixed, Identity, Solver

        return Solver(_objective(p), Identity(), Fixed(batch),
                      Decaying(eps0=params["eps0"], T0=max(1.0, p.n / batch)), **kw)
    return build


def curvature_trace(model: Callable[[Problem], Any], batch: int) -> TraceBuild:
    """A stochastic quasi-Newton composition: ``model(problem)`` curvature, ``Fixed(batch)``,
    ``Decaying(eps0, T0 = N / b)``."""
    def build(p: Problem, params: Params, **kw: Any) -> Any:
        from sqnopt import Decaying, Fixed, Solver

        return Solver(_objective(p), model(p), Fixed(batch),
                      Decaying(eps0=params["eps0"], T0=max(1.0, p.n / batch)), **kw)
    return build


def pegasos_trace(sampling: str) -> TraceBuild:
    def build(p: Problem, params: Params, **kw: Any) -> Any:
        from sqnopt import Solver

        return Solver.pegasos(p.alpha, sampling=sampling, **kw)
    return build


def adagrad_trace(batch: int) -> TraceBuild:
    def build(p: Problem, params: Params, **kw: Any) -> Any:
        from sqnopt import Solver

        return Solver.preset("adagrad", lam=p.alpha, objective=_NAMES[p.loss],
                             eta=params["eta"], batch_size=batch, **kw)
    return build


def lbfgs_trace(p: Problem, params: Params, **kw: Any) -> Any:
    """The full-batch L-BFGS preset. ``gtol=None``: the preset's own gradient-norm check would
    cost a full gradient per iteration that the solver's clock does not count (evaluation is
    excluded); the race stops it at the last target instead."""
    from sqnopt import Solver

    return Solver.preset("lbfgs", lam=p.alpha, objective=_NAMES[p.loss], gtol=None, **kw)


def sqb_trace(p: Problem, params: Params, **kw: Any) -> Any:
    from sqnopt import Solver

    obj = "softmax" if p.loss == "softmax" else "binary_logistic"
    return Solver.preset("sqb", lam=p.alpha, objective=obj, **kw)


def preset_trace(name: str, **preset_kwargs: Any) -> TraceBuild:
    """A named sqnopt preset (``Solver.preset(name, lam=alpha, objective=...)``)."""
    def build(p: Problem, params: Params, **kw: Any) -> Any:
        from sqnopt import Solver

        return Solver.preset(name, lam=p.alpha, objective=_NAMES[p.loss],
                             **{**preset_kwargs, **dict(params)}, **kw)
    return build


def preset_available(name: str) -> Callable[[], str | None]:
    """None when ``Solver.preset(name)`` is known to this sqnopt, else the reason."""
    def check() -> str | None:
        from sqnopt import Solver

        try:
            Solver.preset(name)
        except KeyError:
            return f"this sqnopt has no {name!r} preset (not registered yet)"
        except Exception:   # known, but needs arguments: available
            return None
        return None
    return check


class _LBFGSAsBuilt:
    """``LBFGS()`` built when the estimator resolves it (the import of sqnopt stays lazy)."""

    def __repr__(self) -> str:
        return "LBFGS()"


_LBFGS_AS_BUILT = _LBFGSAsBuilt()


def sqn_classifier(p: Problem, params: Params, budget: int, seed: int, **kw: Any
                   ) -> tuple[Callable[[], Any], Callable[[], tuple[Any, float, int]]]:
    """``SQNClassifier()`` at its defaults, except what poses the race's problem (``loss``,
    ``alpha``, ``fit_intercept=False``) and the budget: ``max_iter`` passes with ``tol=None``
    (no early stop, so that ``max_iter`` is the budget); ``kw``: settings of a variant."""
    from sqnopt import SQNClassifier

    if isinstance(kw.get("curvature"), _LBFGSAsBuilt):
        from sqnopt import LBFGS

        kw = {**kw, "curvature": LBFGS()}
    loss = "logloss" if p.loss == "softmax" else _NAMES[p.loss]
    est = SQNClassifier(loss=loss, alpha=p.alpha, fit_intercept=False, max_iter=budget,
                        tol=None, random_state=seed, n_jobs=N_JOBS[0], **kw)

    def extract() -> tuple[Any, float, int]:
        h = est.history_
        hs = h if isinstance(h, list) else [h]
        passes = float(sum(x.effective_passes[-1] for x in hs if len(x)))
        return est.coef_, passes, int(est.n_iter_)

    return (lambda: est.fit(p.X, p.y)), extract


# ---------------------------------------------------------------------------- scikit-learn
def _quiet_fit(est: Any, X: Any, y: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y)


def sk_logistic(solver: str) -> SweepBuild:
    """``LogisticRegression(C = 1/(alpha N), fit_intercept=False)``: the same objective scaled
    by ``C N``; multinomial for several classes (except liblinear, entered for binary only).
    ``tol=1e-14`` so that ``max_iter`` binds; a fit that stops on its own ends the sweep."""
    def build(p: Problem, params: Params, budget: int, seed: int
              ) -> tuple[Callable[[], Any], Callable[[], tuple[Any, float, int]]]:
        from sklearn.linear_model import LogisticRegression

        est = LogisticRegression(C=1.0 / (p.alpha * p.n), fit_intercept=False, solver=solver,
                                 max_iter=budget, tol=1e-14, random_state=seed)

        def extract() -> tuple[Any, float, int]:
            it = int(np.max(est.n_iter_))
            return est.coef_, float(it), it

        return (lambda: _quiet_fit(est, p.X, p.y)), extract
    return build


def sk_logistic_l1(solver: str) -> SweepBuild:
    """``LogisticRegression(penalty="l1", C = 1/(alpha N), fit_intercept=False)`` (``l1_ratio=1``
    from scikit-learn 1.8): the
    ``l1_logistic`` objective scaled by ``C N``; ``tol=1e-14`` so that ``max_iter`` binds."""
    def build(p: Problem, params: Params, budget: int, seed: int
              ) -> tuple[Callable[[], Any], Callable[[], tuple[Any, float, int]]]:
        from sklearn.linear_model import LogisticRegression

        from .problems import sk_l1_keywords

        est = LogisticRegression(C=1.0 / (p.alpha * p.n), fit_intercept=False, solver=solver,
                                 max_iter=budget, tol=1e-14, random_state=seed,
                                 **sk_l1_keywords())

        def extract() -> tuple[Any, float, int]:
            it = int(np.max(est.n_iter_))
            return est.coef_, float(it), it

        return (lambda: _quiet_fit(est, p.X, p.y)), extract
    return build


def sqn_l1(p: Problem, params: Params, budget: int, seed: int, **kw: Any
           ) -> tuple[Callable[[], Any], Callable[[], tuple[Any, float, int]]]:
    """``SQNClassifier(penalty="l1", alpha, fit_intercept=False)`` at its defaults otherwise,
    ``max_iter`` = the budget (outer iterations) and ``tol=None`` (no early stop)."""
    from sqnopt import SQNClassifier

    est = SQNClassifier(penalty="l1", alpha=p.alpha, fit_intercept=False, max_iter=budget,
                        tol=None, random_state=seed, **kw)

    def extract() -> tuple[Any, float, int]:
        return est.coef_, float(est.n_iter_), int(est.n_iter_)

    return (lambda: est.fit(p.X, p.y)), extract


def sk_linear_svc(dual: bool) -> SweepBuild:
    """``LinearSVC(loss=..., C = 1/(alpha N), fit_intercept=False)`` (liblinear)."""
    def build(p: Problem, params: Params, budget: int, seed: int
              ) -> tuple[Callable[[], Any], Callable[[], tuple[Any, float, int]]]:
        from sklearn.svm import LinearSVC

        loss = "hinge" if p.loss == "hinge" else "squared_hinge"
        est = LinearSVC(loss=loss, C=1.0 / (p.alpha * p.n), fit_intercept=False, dual=dual,
                        tol=1e-14, max_iter=budget, random_state=seed)

        def extract() -> tuple[Any, float, int]:
            it = int(np.max(est.n_iter_))
            return est.coef_, float(it), it

        return (lambda: _quiet_fit(est, p.X, p.y)), extract
    return build


def sk_sgd(p: Problem, params: Params, budget: int, seed: int
           ) -> tuple[Callable[[], Any], Callable[[], tuple[Any, float, int]]]:
    """``SGDClassifier(alpha=alpha, fit_intercept=False, tol=None)``, its default
    ``learning_rate="optimal"`` (binary only: it is one-vs-rest for several classes)."""
    from sklearn.linear_model import SGDClassifier

    loss = {"logistic": "log_loss", "sqhinge": "squared_hinge", "hinge": "hinge"}[p.loss]
    est = SGDClassifier(loss=loss, alpha=p.alpha, fit_intercept=False, max_iter=budget,
                        tol=None, random_state=seed)

    def extract() -> tuple[Any, float, int]:
        it = int(est.n_iter_)
        return est.coef_, float(it), it

    return (lambda: _quiet_fit(est, p.X, p.y)), extract


# ---------------------------------------------------------------------------- lightning
def lightning(kind: str) -> SweepBuild:
    """sklearn-contrib-lightning, binary only (its multiclass is one-vs-rest). Objectives as
    documented there: ``mean loss + alpha/2 ||w||^2`` (SAGA with ``beta=0``, SDCA and AdaGrad
    with ``l1_ratio=0``); SDCA has no logistic loss."""
    def build(p: Problem, params: Params, budget: int, seed: int
              ) -> tuple[Callable[[], Any], Callable[[], tuple[Any, float, int]]]:
        from lightning.classification import (AdaGradClassifier, SAGAClassifier,
                                              SDCAClassifier)

        loss = {"logistic": "log", "sqhinge": "squared_hinge", "hinge": "hinge"}[p.loss]
        if kind == "saga":
            est: Any = SAGAClassifier(eta="auto", alpha=p.alpha, beta=0.0, loss=loss,
                                      max_iter=budget, tol=1e-15, random_state=seed)
        elif kind == "sdca":
            est = SDCAClassifier(alpha=p.alpha, l1_ratio=0.0, loss=loss, max_iter=budget,
                                 tol=1e-15, random_state=seed)
        else:
            est = AdaGradClassifier(eta=params["eta"], alpha=p.alpha, l1_ratio=0.0, loss=loss,
                                    n_iter=budget, random_state=seed)

        def extract() -> tuple[Any, float, int]:
            return est.coef_, float(budget), budget

        return (lambda: _quiet_fit(est, p.X, p.y)), extract
    return build


# ---------------------------------------------------------------------------- Vowpal Wabbit
_VW_FILES: dict[str, tuple[str, int]] = {}


def _vw_cache(p: Problem) -> tuple[str, int]:
    """A VW cache file of the problem's training data (written once per problem, not timed:
    the other libraries get their data in memory too). Features are named by their column
    index, which VW's hash maps to itself; ``-b`` bits leave room for every column."""
    from vowpalwabbit import Workspace

    key = p.key
    if key in _VW_FILES and os.path.exists(_VW_FILES[key][0]):
        return _VW_FILES[key]
    bits = max(18, int(math.ceil(math.log2(p.d + 1))) + 1)
    d = tempfile.mkdtemp(prefix="sqnopt-race-vw-")
    text, cache = os.path.join(d, "train.vw"), os.path.join(d, "train.cache")
    X = p.X.tocsr()
    with open(text, "w") as f:
        for i in range(p.n):
            s, e = X.indptr[i], X.indptr[i + 1]
            feats = " ".join(f"{j}:{v:.17g}" for j, v in zip(X.indices[s:e], X.data[s:e]))
            f.write(f"{'1' if p.y[i] > 0 else '-1'} | {feats}\n")
    ws = Workspace(f"-d {text} --cache_file {cache} -b {bits} --noconstant --quiet -k "
                   "--passes 1 --holdout_off --loss_function logistic")
    ws.run_parser()
    ws.finish()
    os.remove(text)
    _VW_FILES[key] = (cache, bits)
    return cache, bits


def vw(mode: str) -> SweepBuild:
    """Vowpal Wabbit. ``bfgs``: ``--bfgs --l2 alpha*N`` -- VW's batch objective is
    ``sum loss + l2/2 ||w||^2``, ``N`` times ours (its curve reaching the race's ``F*`` checks
    it); ``--termination 0`` lets ``--passes`` bind. ``online``: VW's defaults (adaptive,
    normalized, invariant updates, learning-rate decay over passes) with *no* regulariser -- it
    minimises the mean loss, not ``F``, so its curve levels off at the excess of that
    minimiser; ``online-l2``: the same with ``--l2 alpha``, VW's per-update l2 term (the race
    shows how far that is from ``F``). Always ``--noconstant`` (no intercept), ``--holdout_off``,
    data in file order, read from a cache file made beforehand."""
    def build(p: Problem, params: Params, budget: int, seed: int
              ) -> tuple[Callable[[], Any], Callable[[], tuple[Any, float, int]]]:
        from vowpalwabbit import Workspace

        cache, bits = _vw_cache(p)
        opts = (f"--cache_file {cache} -b {bits} --noconstant --quiet --holdout_off "
                f"--loss_function logistic --passes {budget} --random_seed {seed}")
        if mode == "bfgs":
            opts += f" --bfgs --l2 {p.alpha * p.n!r} --termination 0"
        elif mode == "online-l2":
            opts += f" --l2 {p.alpha!r}"
        box: dict[str, Any] = {}

        def fit() -> None:
            ws = Workspace(opts)
            ws.run_parser()
            box["ws"] = ws

        def extract() -> tuple[Any, float, int]:
            ws = box["ws"]
            ns = ws.hash_space(" ")
            w = np.array([ws.get_weight(ws.hash_feature(str(j), ns)) for j in range(p.d)])
            ws.finish()
            return w, float(budget), budget

        return fit, extract
    return build


# ---------------------------------------------------------------------------- river
class RiverOnline:
    """river's ``LogisticRegression`` with ``SGD(Optimal(Log, alpha))`` (the ``1/(alpha
    (t + t0))`` schedule of scikit-learn's "optimal"), ``l2=alpha`` (a per-example ``alpha w``
    term: the same objective), the intercept frozen at 0; rows as dicts; one pass = every row
    once, in a fresh random order (seeded)."""

    def __init__(self, p: Problem, params: Params, seed: int) -> None:
        from river import linear_model, optim

        self.model = linear_model.LogisticRegression(
            optimizer=optim.SGD(optim.schedulers.Optimal(optim.losses.Log(), alpha=p.alpha)),
            l2=p.alpha, intercept_lr=0.0)
        X = p.X.tocsr() if hasattr(p.X, "tocsr") else None
        if X is not None:
            self.rows = [dict(zip(X.indices[X.indptr[i]:X.indptr[i + 1]].tolist(),
                                  X.data[X.indptr[i]:X.indptr[i + 1]].tolist()))
                         for i in range(p.n)]
        else:
            self.rows = [dict(enumerate(r)) for r in np.asarray(p.X).tolist()]
        self.labels = (p.y > 0).tolist()
        self.rng = np.random.default_rng(seed)
        self.d = p.d

    def learn_pass(self) -> None:
        learn = self.model.learn_one
        rows, labels = self.rows, self.labels
        for i in self.rng.permutation(len(rows)).tolist():
            learn(rows[i], labels[i])

    def weights(self) -> Any:
        w = np.zeros(self.d)
        for j, v in self.model.weights.items():
            w[int(j)] = v
        return w


# ---------------------------------------------------------------------------- the table
def _olbfgs(p: Problem) -> Any:
    from sqnopt import LBFGS
    return LBFGS(memory=10)


def _res(p: Problem) -> Any:
    from sqnopt import RegularizedBFGS
    return RegularizedBFGS(delta=1e-3)


SGD_STEPS = step_grid((0.125, 0.5, 2.0, 8.0, 32.0))
QN_STEPS = value_grid("eps0", (0.01, 0.03, 0.1, 0.3, 1.0))
ADAGRAD_ETAS = value_grid("eta", (0.01, 0.03, 0.1, 0.3, 1.0))
VR_STEPS = vr_grid((0.01, 0.03, 0.1, 0.3, 1.0), (0.5, 0.75))

CONTENDERS: list[Contender] = [
    # --- sqnopt compositions (traced through callbacks and result.history)
    Contender("sqnopt SGD", "sqnopt", SMOOTH, "trace", sgd_trace(1), grid=SGD_STEPS,
              note="Decaying(eps0, T0=N), b = 1; eps0 tuned"),
    Contender("sqnopt Pegasos", "sqnopt", ("hinge",), "trace", pegasos_trace("shuffle"),
              note="Solver.pegasos(lam): a fresh permutation each pass (the default)"),
    Contender("sqnopt Pegasos (i.i.d.)", "sqnopt", ("hinge",), "trace", pegasos_trace("uniform"),
              note="Solver.pegasos(lam, sampling='uniform'): the paper's i.i.d. draws"),
    Contender("sqnopt AdaGrad", "sqnopt", ALL, "trace", adagrad_trace(1), grid=ADAGRAD_ETAS,
              note="preset 'adagrad', b = 1; eta tuned"),
    Contender("sqnopt oLBFGS", "sqnopt", SMOOTH, "trace", curvature_trace(_olbfgs, 64),
              grid=QN_STEPS, batch=64, note="LBFGS(memory=10), b = 64; eps0 tuned"),
    Contender("sqnopt RES", "sqnopt", SMOOTH, "trace", curvature_trace(_res, 64),
              grid=QN_STEPS, batch=64, max_params=1000,
              note="RegularizedBFGS(delta=1e-3), b = 64; eps0 tuned"),
    Contender("sqnopt SQB", "sqnopt", ("logistic", "softmax"), "trace", sqb_trace, batch=None,
              note="preset 'sqb' (binary_logistic / softmax)"),
    Contender("sqnopt L-BFGS (full batch)", "sqnopt", SMOOTH, "trace", lbfgs_trace, batch=None,
              note="preset 'lbfgs' (Wolfe), gtol=None"),
    Contender("sqnopt SAGA", "sqnopt", SMOOTH, "trace", preset_trace("saga"), batch=1,
              grid=VR_STEPS, available=preset_available("saga"),
              note="preset 'saga', b = 1; eta tuned"),
    Contender("sqnopt SVRG", "sqnopt", SMOOTH, "trace", preset_trace("svrg"), batch=1,
              grid=VR_STEPS, available=preset_available("svrg"),
              note="preset 'svrg', b = 1; eta tuned"),
    Contender("sqnopt SVRG+L-BFGS", "sqnopt", SMOOTH, "trace",
              preset_trace("svrg_lbfgs", batch_size=64), batch=64,
              available=preset_available("svrg_lbfgs"),
              note="preset 'svrg_lbfgs' (HessianLBFGS pairs, capped initial scaling), b = 64, "
                   "eta = 0.003 (the preset's default; a one-pass pilot picked steps that "
                   "stall later)"),
    Contender("sqnopt progressive L-BFGS", "sqnopt", SMOOTH, "trace",
              preset_trace("progressive_lbfgs", gtol=None), batch=None,
              available=preset_available("progressive_lbfgs"),
              note="preset 'progressive_lbfgs' (inner-product + orthogonality tests, theta = 0.2, "
                   "nu = 0.5, b0 = 512, Armijo), gtol=None"),
    Contender("sqnopt multi-batch L-BFGS", "sqnopt", SMOOTH, "trace",
              preset_trace("multibatch_lbfgs", gtol=None), batch=None,
              available=preset_available("multibatch_lbfgs"),
              note="preset 'multibatch_lbfgs' (overlapping batches, overlap 0.5, b0 = 512 "
                   "doubling per iteration, Armijo), gtol=None"),
    Contender("SQNClassifier()", "sqnopt", ALL, "sweep", sqn_classifier, module="sklearn",
              max_budget=2000, note="defaults; tol=None, max_iter = budget (passes)"),
    Contender("SQNClassifier(curvature='newton')", "sqnopt", ("logistic", "softmax", "sqhinge"),
              "sweep", functools.partial(sqn_classifier, curvature="newton"), module="sklearn",
              max_budget=2000, max_params=5000,
              note="defaults with Newton's method; tol=None, max_iter = budget (passes)"),
    Contender("SQNClassifier(step='armijo')", "sqnopt", SMOOTH, "sweep",
              functools.partial(sqn_classifier, step="armijo"), module="sklearn",
              max_budget=2000,
              note="defaults with Armijo's backtracking from the unit step instead of the "
                   "recipe's step (full-batch Newton: the exact line search ScoreLine); "
                   "tol=None, max_iter = budget (passes)"),
    Contender("SQNClassifier(curvature='identity')", "sqnopt", ALL, "sweep",
              functools.partial(sqn_classifier, curvature="identity"), module="sklearn",
              max_budget=2000,
              note="defaults with the identity (SAGA where the rows allow, else SGD); tol=None, "
                   "max_iter = budget (passes)"),
    Contender("SQNClassifier(curvature='truncated_newton')", "sqnopt", SMOOTH, "sweep",
              functools.partial(sqn_classifier, curvature="truncated_newton"),
              module="sklearn", max_budget=2000,
              note="defaults with truncated Newton (full-batch Newton-CG, Armijo); tol=None, "
                   "max_iter = budget"),
    Contender("SQNClassifier(curvature='lbfgs')", "sqnopt", SMOOTH, "sweep",
              functools.partial(sqn_classifier, curvature="lbfgs"), module="sklearn",
              max_budget=2000,
              note="defaults with plain L-BFGS named (memory by the recipe's rule: the default "
                   "of fashion-mnist and dna before the bound-preconditioned L-BFGS); tol=None, "
                   "max_iter = budget"),
    Contender("SQNClassifier(curvature='bound_lbfgs')", "sqnopt", SMOOTH, "sweep",
              functools.partial(sqn_classifier, curvature="bound_lbfgs"), module="sklearn",
              max_budget=2000,
              note="defaults with L-BFGS preconditioned by Böhning's bound; tol=None, "
                   "max_iter = budget"),
    Contender("SQNClassifier(curvature=LBFGS())", "sqnopt", SMOOTH, "sweep",
              functools.partial(sqn_classifier, curvature=_LBFGS_AS_BUILT), module="sklearn",
              max_budget=2000,
              note="defaults with L-BFGS as built (memory 10, the recipe does not tune a "
                   "model instance: the default of criteo, news20, dna before truncated Newton "
                   "and the memory rule); tol=None, max_iter = budget"),
    # --- L1-regularised logistic regression
    Contender("SQNClassifier(penalty='l1')", "sqnopt", ("l1_logistic",), "sweep", sqn_l1,
              module="sklearn", passes_kind="iterations", max_budget=2000,
              note="defaults (curvature='auto'); tol=None, max_iter = budget (iterations)"),
    Contender("SQNClassifier(penalty='l1', curvature='owlqn')", "sqnopt", ("l1_logistic",),
              "sweep", functools.partial(sqn_l1, curvature="owlqn"), module="sklearn",
              passes_kind="iterations", max_budget=5000,
              note="OWL-QN; tol=None, max_iter = budget (iterations)"),
    Contender("sklearn liblinear L1", "scikit-learn", ("l1_logistic",), "sweep",
              sk_logistic_l1("liblinear"), module="sklearn", passes_kind="iterations"),
    Contender("sklearn saga L1", "scikit-learn", ("l1_logistic",), "sweep",
              sk_logistic_l1("saga"), module="sklearn", max_budget=5000),
    # --- scikit-learn
    Contender("sklearn lbfgs", "scikit-learn", ("logistic", "softmax"), "sweep",
              sk_logistic("lbfgs"), module="sklearn", passes_kind="iterations"),
    Contender("sklearn liblinear", "scikit-learn", ("logistic",), "sweep",
              sk_logistic("liblinear"), module="sklearn", passes_kind="iterations"),
    Contender("sklearn newton-cg", "scikit-learn", ("logistic", "softmax"), "sweep",
              sk_logistic("newton-cg"), module="sklearn", passes_kind="iterations"),
    Contender("sklearn newton-cholesky", "scikit-learn", ("logistic", "softmax"), "sweep",
              sk_logistic("newton-cholesky"), module="sklearn", passes_kind="iterations",
              max_params=5000),
    Contender("sklearn sag", "scikit-learn", ("logistic", "softmax"), "sweep",
              sk_logistic("sag"), module="sklearn", max_budget=5000),
    Contender("sklearn saga", "scikit-learn", ("logistic", "softmax"), "sweep",
              sk_logistic("saga"), module="sklearn", max_budget=5000),
    Contender("sklearn LinearSVC (dual)", "scikit-learn", ("sqhinge", "hinge"), "sweep",
              sk_linear_svc(True), module="sklearn", passes_kind="iterations"),
    Contender("sklearn LinearSVC (primal)", "scikit-learn", ("sqhinge",), "sweep",
              sk_linear_svc(False), module="sklearn", passes_kind="iterations"),
    Contender("sklearn SGDClassifier", "scikit-learn", ("logistic", "sqhinge", "hinge"),
              "sweep", sk_sgd, module="sklearn", max_budget=2000),
    # --- sklearn-contrib-lightning
    Contender("lightning SAGA", "lightning", BINARY_SMOOTH, "sweep", lightning("saga"),
              module="lightning.classification", max_budget=5000),
    Contender("lightning SDCA", "lightning", ("sqhinge", "hinge"), "sweep", lightning("sdca"),
              module="lightning.classification", max_budget=5000),
    Contender("lightning AdaGrad", "lightning", ("logistic", "sqhinge", "hinge"), "sweep",
              lightning("adagrad"), module="lightning.classification", grid=ADAGRAD_ETAS,
              max_budget=2000, note="eta tuned"),
    # --- Vowpal Wabbit
    Contender("VW --bfgs", "vowpalwabbit", ("logistic",), "sweep", vw("bfgs"),
              module="vowpalwabbit", max_budget=2000, min_budget=2,
              note="--bfgs --l2 alpha*N --noconstant; passes = --passes"),
    Contender("VW online", "vowpalwabbit", ("logistic",), "sweep", vw("online"),
              module="vowpalwabbit", max_budget=500,
              note="defaults, no regulariser: minimises the mean loss, not F"),
    Contender("VW online --l2", "vowpalwabbit", ("logistic",), "sweep", vw("online-l2"),
              module="vowpalwabbit", max_budget=500,
              note="defaults + --l2 alpha (VW's per-update l2)"),
    # --- river (pure Python, one example at a time: small problems only)
    Contender("river LogisticRegression", "river", ("logistic",), "online", RiverOnline,
              module="river", max_cells=5e6, note="SGD(Optimal), l2=alpha"),
    # --- regression (bench/race/regression.py): ridge ("squared") and Poisson
    Contender("SQNRegressor()", "sqnopt", regression.REGRESSION_LOSSES, "sweep",
              lambda p, params, budget, seed: regression.sqn_regressor(
                  p, params, budget, seed, n_jobs=N_JOBS[0]),
              module="sklearn", max_budget=2000,
              note="defaults; tol=None, max_iter = budget (passes)"),
    *(Contender(f"sklearn Ridge {solver}", "scikit-learn", ("squared",), "sweep",
                regression.sk_ridge(solver), module="sklearn",
                passes_kind="passes" if solver in ("sag", "saga") else "iterations",
                max_budget=5000 if solver in ("sag", "saga") else 100_000,
                note="Ridge(alpha = alpha N, fit_intercept=False)"
                     + ("; direct: one fit" if solver == "cholesky" else ""))
      for solver in ("cholesky", "sparse_cg", "lsqr", "sag", "saga")),
    *(Contender(f"sklearn PoissonRegressor {solver}", "scikit-learn", ("poisson",), "sweep",
                regression.sk_poisson(solver), module="sklearn", passes_kind="iterations",
                note="PoissonRegressor(alpha, fit_intercept=False)")
      for solver in ("lbfgs", "newton-cholesky")),
]


def by_name() -> dict[str, Contender]:
    return {c.name: c for c in CONTENDERS}


@dataclass
class Selection:
    """Contenders chosen for a run, and the lines saying which were skipped and why."""

    contenders: list[Contender] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def select(names: list[str] | None) -> Selection:
    """The contenders to run: those named (all by default) that can run here."""
    table = by_name()
    if names:
        unknown = [n for n in names if n not in table]
        if unknown:
            raise SystemExit(f"unknown contenders {unknown}; choose from: "
                             + ", ".join(table))
    out = Selection()
    for c in CONTENDERS:
        if names and c.name not in names:
            continue
        why = c.missing()
        if why:
            out.skipped.append(f"{c.name}: skipped, {why}")
        else:
            out.contenders.append(c)
    return out


def vw_cleanup() -> None:
    for cache, _ in _VW_FILES.values():
        try:
            os.remove(cache)
            os.rmdir(os.path.dirname(cache))
        except OSError:
            pass
    _VW_FILES.clear()


__all__ = ["CONTENDERS", "Contender", "RiverOnline", "Selection", "by_name", "select",
           "vw_cleanup"]
