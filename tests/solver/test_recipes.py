"""Recipes (sqnopt.recipes), statuses and the checks that make the defaults honest."""

from __future__ import annotations

import dataclasses
import warnings
from typing import ClassVar

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt import (
    SAGA,
    Armijo,
    Constant,
    Decaying,
    Fixed,
    Full,
    Geometric,
    IncompatibleComponentsError,
    LogLoss,
    Minibatch,
    ScoreLine,
    Solver,
    Status,
)
from sqnopt import recipes
from sqnopt.curvature import (
    LBFGS,
    AdaGrad,
    Identity,
    Newton,
    NewtonCG,
    QuadraticBound,
    RegularizedBFGS,
    TruncatedNewton,
)
from sqnopt.datasets import make_boxes
from sqnopt.interfaces import CurvatureModel, Problem
from sqnopt.objectives import BinaryLogistic, Hinge, Softmax
from sqnopt.training import ConvergenceWarning, Trainer


# ---------------------------------------------------------------- the automatic step
def test_gradient_step_does_not_collapse_on_one_huge_row() -> None:
    """One row 1e4 times longer than the others: the largest-row bound would shrink the step
    by 1e8 (the news20 failure: its longest row is 800 times the mean) and so would the plain
    trace bound, by the row's share 1e8 / N; the clipped trace bound does not move, and
    training reaches the clean data's accuracy."""
    X, y = make_boxes(2000, 5, random_state=3)
    Xo = X.copy()
    Xo[7] *= 1e4
    w = np.ones(len(y))
    clean = recipes.gradient_step(X, w, LogLoss(lam=1e-4), 5, fit_intercept=True)
    outlier = recipes.gradient_step(Xo, w, LogLoss(lam=1e-4), 5, fit_intercept=True)
    row = float(Xo[7] @ Xo[7])
    max_based = 1.0 / (0.25 * (row + 1.0))
    assert outlier.eps0 > 1e7 * max_based
    sq = np.sum(Xo * Xo, axis=1) + 1.0
    clipped = np.mean(np.minimum(sq, np.quantile(sq, 0.99)))
    assert outlier.eps0 == pytest.approx(1.0 / (0.25 * clipped + 1e-4))
    assert clean.eps0 / outlier.eps0 == pytest.approx(1.0, rel=0.02)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)      # SGD's noise floor
        a = Trainer(curvature="identity", random_state=0, max_epochs=10).fit(X, y)
        b = Trainer(curvature="identity", random_state=0, max_epochs=10).fit(Xo, y)
    assert a.accuracy(X, y) > 0.85
    assert b.accuracy(Xo, y) > a.accuracy(X, y) - 0.02


def test_automatic_steps_are_robust_to_the_features_scale() -> None:
    """Features scaled by 1e-3 .. 1e3: the curvature models adapt; the first-order methods, one
    step size for every coordinate, whose intercept (a constant feature of scale 1) is then 1e3
    times off the features' scale, say so."""
    X, y = make_boxes(1000, 4, random_state=2)
    for scale in (1e-3, 1.0, 1e3):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            for curvature in ("auto", "regularized_bfgs", "quadratic_bound"):
                model = Trainer(curvature=curvature, random_state=0).fit(scale * X, y)
                assert model.accuracy(scale * X, y) > 0.85, (scale, curvature)
        for curvature in ("identity", "adagrad"):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                model = Trainer(curvature=curvature, random_state=0).fit(scale * X, y)
            scale_warned = any("differ by a factor" in str(w.message) for w in caught)
            assert scale_warned == (scale != 1.0), (scale, curvature)
            if scale == 1.0:
                assert model.accuracy(X, y) > 0.85
    assert recipes.normalized_step(1e3 * X).eps == pytest.approx(
        recipes.normalized_step(X).eps / 1e3)


# ---------------------------------------------------------------- recipes from capabilities
@dataclasses.dataclass(frozen=True)
class _PluginSecant(CurvatureModel):
    """A third-party model that learns from secant pairs (delegates to the L-BFGS kernel)."""

    name: ClassVar[str] = "plugin_secant"
    needs_secant_pair: ClassVar[bool] = True

    def init(self, problem: Problem) -> object:  # type: ignore[override]
        return LBFGS().init(problem)


@dataclasses.dataclass(frozen=True)
class _PluginNormalized(CurvatureModel):
    name: ClassVar[str] = "plugin_normalized"
    direction_scale = "normalized"

    def init(self, problem: Problem) -> object:  # type: ignore[override]
        return AdaGrad().init(problem)


def test_recipe_follows_what_the_model_declares_not_its_name() -> None:
    X, y = make_boxes(3000, 4, random_state=0)
    w = np.ones(len(y))
    for model in (LBFGS(), _PluginSecant()):
        r = recipes.choose(LogLoss(lam=1e-4), model, X, w, fit_intercept=False)
        assert r.schedule == Geometric(b1=1000.0, rate=2.0) and isinstance(r.step, Armijo)
        assert r.sampling == "subset" and r.full_batch_phase
    for model in (AdaGrad(), _PluginNormalized()):
        r = recipes.choose(LogLoss(lam=1e-4), model, X, w, fit_intercept=False)
        assert r.schedule == Fixed(5) and isinstance(r.step, Constant) and not r.full_batch_phase
    # the identity: SAGA with the constant step 1/L_max on rows of similar length ...
    r = recipes.choose(LogLoss(lam=1e-4), Identity(), X, w, fit_intercept=False)
    lmax = 0.25 * np.max(np.sum(X * X, axis=1)) + 1e-4
    assert r.gradient == SAGA() and r.step == Constant(1.0 / lmax) and r.sampling == "shuffle"
    # ... SGD's robust decaying step when a few rows are much longer, or for the hinge
    Xo = X.copy()
    Xo[0] *= 100.0
    r = recipes.choose(LogLoss(lam=1e-4), Identity(), Xo, w, fit_intercept=False)
    assert r.gradient == Minibatch() and isinstance(r.step, Decaying) and r.sampling == "uniform"
    r = recipes.choose(Hinge(lam=1e-4), Identity(), X, w, fit_intercept=False)
    assert r.gradient == Minibatch() and isinstance(r.step, Decaying)
    r = recipes.choose(LogLoss(lam=1e-4), QuadraticBound(), X, w, fit_intercept=False,
                       curvature_by_name=True)
    assert r.objective == BinaryLogistic(lam=1e-4)      # the form with the bound
    assert r.curvature == QuadraticBound(solver="cg") and r.curvature_schedule == Fixed(1000)
    # RES's regulariser below lam (its Assumption 1), when named without parameters
    r = recipes.choose(LogLoss(lam=1e-4), RegularizedBFGS(), X, w, fit_intercept=False,
                       curvature_by_name=True)
    assert r.curvature.delta == pytest.approx(5e-5)  # type: ignore[attr-defined]
    r = recipes.choose(LogLoss(lam=1e-4), RegularizedBFGS(), X, w, fit_intercept=False)
    assert r.curvature == RegularizedBFGS()              # an instance is used as given
    # a user's schedule and step are kept
    r = recipes.choose(LogLoss(lam=1e-4), LBFGS(), X, w, fit_intercept=False,
                       schedule=Full(), step=Constant(0.5))
    assert r.schedule == Full() and r.step == Constant(0.5) and r.full_batch_phase
    wide = sp.random(400, 5000, density=0.002, random_state=0, format="csr")
    assert recipes.stochastic_batch(LogLoss(), AdaGrad(), wide) == 40      # n_features / nnz
    assert recipes.stochastic_batch(LogLoss(), Identity(), wide) == 5        # the scaled path
    assert recipes.stochastic_batch(Softmax(), Identity(), wide) == 40
    # the curvature follows the data's shape: Newton where a Hessian costs a few passes (four
    # dense features), truncated Newton where it would cost thousands on sparse data with more
    # features than samples (5000 features, 10 per row), L-BFGS where the data has more rows
    # than features, or the Hessian is singular (lam = 0), or the rows are not in memory
    assert recipes.newton_cost_passes(X, 1) == pytest.approx(
        (3000 * 4 * 5 / 2 + 16 + 64 / 3) / (2 * 3000 * 4))
    assert recipes.default_curvature(LogLoss(), X, 2) == Newton()
    assert recipes.default_curvature(Softmax(), X, 3) == Newton()
    assert recipes.newton_cost_passes(wide, 1) > 100 * recipes.NEWTON_PASSES
    assert recipes.default_curvature(LogLoss(), wide, 2) == TruncatedNewton()
    assert recipes.default_curvature(LogLoss(), sp.vstack([wide] * 13).tocsr(), 2) == LBFGS()
    assert recipes.default_curvature(LogLoss(lam=0.0), X, 2) == LBFGS()
    assert recipes.default_curvature(LogLoss(), _ShapeOnly(X.shape), 2) == LBFGS()
    assert recipes.default_curvature(Hinge(), X, 2) == Identity()
    # Newton's recipe: the whole data set for the gradient and the Hessian, a line search
    r = recipes.choose(LogLoss(lam=1e-4), Newton(), X, w, fit_intercept=False)
    assert r.schedule == Full() and r.curvature_schedule == Full() and r.full_batch_phase
    assert isinstance(r.step, ScoreLine)      # the exact line search (linear scores)
    r = recipes.choose(LogLoss(lam=1e-4), Newton(), X, w, fit_intercept=False,
                       schedule=Fixed(500))
    assert r.curvature_schedule == Full()
    # a Hessian-sampling model: progressive gradient batches, a tenth of the data for the
    # Hessian, a line search (it does not majorise); SQB's bound does
    r = recipes.choose(LogLoss(lam=1e-4), NewtonCG(), X, w, fit_intercept=False)
    assert r.curvature_schedule == Fixed(1000) and isinstance(r.step, Armijo)
    assert r.schedule == Geometric(b1=1000.0, rate=2.0) and r.full_batch_phase
    assert recipes.hessian_batch(50_000) == 5000 and recipes.hessian_batch(300) == 300


def test_identity_on_sparse_margin_rows_takes_single_samples_on_the_lazy_saga_step() -> None:
    """The identity's SAGA recipe by the data's shape: rows whose entries are few against the
    features (where the lazy sparse SAGA step pays) get single samples and SAGA's proven step
    ``1/(3 L_max)``; the same rows dense, sparse rows using many of the features and the
    softmax keep the batches of :func:`~sqnopt.recipes.stochastic_batch` and ``1/L_max``."""
    from sqnopt.solver._lazy_loop import LazyTableLoop
    from sqnopt.solver._loop import CompiledLoop

    rng = np.random.default_rng(0)
    N, n, per_row = 400, 2000, 5                      # 5 entries of 2000 per row: 1/400
    ind = np.concatenate([rng.choice(n, per_row, replace=False) for _ in range(N)])
    Xs = sp.csr_matrix((rng.choice([-1.0, 1.0], N * per_row), ind,
                        np.arange(0, N * per_row + 1, per_row)), shape=(N, n))
    y = np.where(rng.random(N) < 0.5, -1.0, 1.0)
    w = np.ones(N)
    lam = 1e-3
    lmax = 0.25 * per_row + lam                       # every row has squared norm 5
    r = recipes.choose(LogLoss(lam=lam), Identity(), Xs, w, fit_intercept=False)
    assert r.gradient == SAGA() and r.schedule == Fixed(1)
    assert r.step == Constant(1.0 / (3.0 * lmax)) and r.sampling == "shuffle"
    def loop(X: object) -> object:
        tr = Trainer(curvature="identity", alpha=lam, random_state=0, tol=None, max_epochs=2)
        tr.fit(X, y)
        assert tr._states is not None
        return tr._states[0].loop

    assert isinstance(loop(Xs), LazyTableLoop)
    # the same rows dense: unchanged, batches of 5 and 1/L_max, the dense loop
    Xd = Xs.toarray()
    r = recipes.choose(LogLoss(lam=lam), Identity(), Xd, w, fit_intercept=False)
    assert r.gradient == SAGA() and r.schedule == Fixed(5)
    assert r.step == Constant(1.0 / lmax)
    assert type(loop(Xd)) is CompiledLoop
    # sparse rows using a quarter of the features (the lazy step would not pay): unchanged
    Xq = sp.csr_matrix(np.where(rng.random((N, 40)) < 0.25, 1.0, 0.0))
    Xq[Xq.getnnz(axis=1) == 0, 0] = 1.0
    rq = recipes.choose(LogLoss(lam=lam), Identity(), Xq, w, fit_intercept=False)
    assert rq.gradient == SAGA() and rq.schedule == Fixed(5)
    lq = 0.25 * float(np.max(Xq.multiply(Xq).sum(axis=1))) + lam
    assert rq.step == Constant(1.0 / lq)
    assert type(loop(Xq)) is CompiledLoop
    # the softmax is no margin loss: its batches are unchanged
    assert recipes.stochastic_batch(Softmax(), Identity(), Xs, plain=False) == 40
    # the single-sample recipe solves (its step 1/L_max oscillates 1e-2 above the optimum
    # here; the loop's stopping rule may still call the run unconverged, and says so)
    fit = Trainer(curvature="identity", alpha=lam, random_state=0)
    ref = Trainer(curvature="newton", alpha=lam, random_state=0, tol=1e-10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit.fit(Xs, y)
    ref.fit(Xs, y)
    assert fit.results_[0].fun <= ref.results_[0].fun * (1 + 1e-4)


def test_objectives_declare_their_forms_and_the_estimator_uses_them() -> None:
    from sqnopt.interfaces import MULTICLASS, PROBABILISTIC, QUADRATIC_BOUND

    assert LogLoss(lam=0.1).with_capability(MULTICLASS) == Softmax(lam=0.1)
    assert LogLoss(lam=0.1).with_capability(QUADRATIC_BOUND) == BinaryLogistic(lam=0.1)
    assert Hinge().with_capability(MULTICLASS) is None
    assert PROBABILISTIC in LogLoss().capabilities and PROBABILISTIC not in Hinge().capabilities
    # SQB from the estimator with the default loss: solved in the log-linear form
    from sqnopt import SQNClassifier

    X, y = make_boxes(600, 4, random_state=1)
    est = SQNClassifier(curvature="quadratic_bound", random_state=0).fit(X, y)
    assert est._trainer._setup.objective == BinaryLogistic(lam=1e-4)
    assert est.score(X, y) > 0.9 and hasattr(est, "predict_proba")


# ---------------------------------------------------------------- refused combinations
def test_combinations_that_cannot_work_fail_when_built() -> None:
    with pytest.raises(IncompatibleComponentsError, match="fit_intercept='regularized'"):
        Solver("hinge", "identity", step="pegasos", fit_intercept=True)
    Solver("hinge", "identity", step="pegasos", fit_intercept="regularized")
    for model in ("lbfgs", "adagrad", "full_bfgs"):
        with pytest.raises(IncompatibleComponentsError, match="scaled directions"):
            Solver("logloss", model, step="pegasos")
    with pytest.raises(IncompatibleComponentsError, match="smooth"):
        Solver("hinge", "lbfgs")


def test_dense_curvature_that_cannot_fit_in_memory_is_refused_naming_lbfgs() -> None:
    X = sp.random(20, 2_000_000, density=1e-5, random_state=0, format="csr")
    y = np.arange(20) % 2
    for model in ("full_bfgs", "regularized_bfgs"):
        with pytest.raises(MemoryError, match="curvature='lbfgs'"):
            Solver("logloss", model, max_iter=1).fit(X, y)


# ---------------------------------------------------------------- statuses and success
def test_success_means_a_tolerance_was_met() -> None:
    X, y = make_boxes(500, 5, random_state=0)
    budget = Solver("logloss", "lbfgs", Full(), Armijo(), max_iter=3).fit(X, y)
    assert budget.status is Status.MAX_ITER and not budget.success
    gtol = Solver("logloss", "lbfgs", Full(), Armijo(), max_iter=500, gtol=1e-6).fit(X, y)
    assert gtol.status is Status.GTOL and gtol.success and gtol.grad_norm <= 1e-6
    ftol = Solver("logloss", "lbfgs", Full(), Armijo(), max_iter=500, ftol=1e-8).fit(X, y)
    assert ftol.status is Status.FTOL and ftol.success and ftol.n_iter < 500
    # a stochastic run tests gtol at report points, with one full gradient each
    sgd = Solver("logloss", "identity", Fixed(5), Decaying(0.5, 100), max_epochs=50,
                 gtol=1.0, report_every=10, random_state=0).fit(X, y)
    assert sgd.status is Status.GTOL and sgd.n_iter == 10


def test_full_batch_gtol_is_tested_on_the_iterations_own_gradient() -> None:
    """No extra pass: every gradient of a full-batch L-BFGS run is an iteration's (or the line
    search's), checked with the loop's report_every=1000, and with report_every=1 too."""
    X, y = make_boxes(800, 6, random_state=4)
    for report in (1, 1000):
        res = Solver("logloss", "lbfgs", Full(), Armijo(), max_iter=1000, gtol=1e-7,
                     report_every=report, history_every=None).fit(X, y)
        assert res.status is Status.GTOL
        assert res.n_grad_evals == 1 + res.n_search_samples // X.shape[0]
        assert res.eval_time < 0.5 * res.wall_time + 1e-3   # only the final objective


def test_trainer_warns_with_what_it_reached_when_tol_is_not_met() -> None:
    X, y = make_boxes(2000, 6, random_state=5)
    # (Newton with the exact line search meets tol=1e-12 here in 5 passes: stop it after 3)
    with pytest.warns(ConvergenceWarning, match=r"largest gradient entry [0-9.e+-]+ > tol=1e-12"):
        tr = Trainer(tol=1e-12, max_epochs=3).fit(X, y)
    assert tr is not None
    with pytest.warns(ConvergenceWarning, match="relative change in the last pass"):
        Trainer(curvature="identity", tol=1e-12, max_epochs=3, random_state=0).fit(X, y)


def test_feature_scale_spread_warns_for_first_order_recipes_only() -> None:
    X, y = make_boxes(500, 4, random_state=6)
    Xs = X * np.array([1.0, 1e2, 1e4, 1.0])
    assert recipes.feature_scale_spread(Xs) == pytest.approx(
        np.abs(Xs).max(0).max() / np.abs(Xs).max(0).min())
    with pytest.warns(ConvergenceWarning, match="differ by a factor of") as rec:
        Trainer(curvature="identity", tol=None, max_epochs=1, random_state=0).fit(Xs, y)
    assert sum("differ by a factor" in str(w.message) for w in rec) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Trainer(random_state=0).fit(Xs, y)          # L-BFGS: no warning, and it converges
    assert recipes.feature_scale_spread(sp.csr_matrix(Xs)) == pytest.approx(
        recipes.feature_scale_spread(Xs))


def test_a_model_below_the_majority_class_warns() -> None:
    """scikit-learn's check_fit_check_is_fitted data: random labels, features centred at 100;
    SGD's intercept cannot catch up with the features in 30 passes and ends below the majority
    class -- which must not pass silently."""
    rng = np.random.RandomState(42)
    X = rng.normal(loc=100, size=(100, 2))
    y = rng.randint(low=0, high=2, size=100)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        tr = Trainer(curvature="identity", gradient="minibatch", tol=None, max_epochs=30,
                     random_state=0)
        model = tr.fit(X, y)
    assert model.accuracy(X, y) < np.mean(y == np.bincount(y).argmax())
    messages = [str(w.message) for w in rec if issubclass(w.category, ConvergenceWarning)]
    assert any("below the majority class" in m and "the solve failed" in m for m in messages)
    assert any("differ by a factor of 103" in m for m in messages)   # the intercept vs x ~ 100


class _ShapeOnly:
    """Data described by its shape alone, as the out-of-core estimators describe theirs."""

    def __init__(self, shape: tuple[int, int]) -> None:
        self.shape = shape


def test_progressive_lbfgs_memory_follows_the_cost_of_its_two_loop_recursion():
    """Named without parameters, L-BFGS keeps up to 30 pairs while the two-loop recursion
    (4 m n) costs at most a quarter of a gradient pass (2 K nnz): m = nnz / (8 (p + 1))."""
    dense = np.ones((400, 20))
    hashed = sp.random(400, 5000, density=0.002, random_state=0, format="csr")
    mid = sp.random(400, 50, density=0.5, random_state=0, format="csr")
    assert recipes.lbfgs_memory(dense) == 30                       # 400 * 20 / 168 = 47
    assert recipes.lbfgs_memory(hashed) == 10                      # 4000 / 40008 < 1
    assert recipes.lbfgs_memory(mid) == mid.nnz // (8 * 51)        # in between
    w = np.ones(400)
    r = recipes.choose(LogLoss(lam=1e-3), LBFGS(), dense, w, fit_intercept=False,
                       curvature_by_name=True)
    assert r.curvature == LBFGS(memory=30)
    # a model built by the user, an explicit memory, a user schedule: kept as given
    assert recipes.choose(LogLoss(lam=1e-3), LBFGS(), dense, w,
                          fit_intercept=False).curvature == LBFGS()
    assert recipes.choose(LogLoss(lam=1e-3), LBFGS(memory=5), dense, w, fit_intercept=False,
                          curvature_by_name=True).curvature == LBFGS(memory=5)
    assert recipes.choose(LogLoss(lam=1e-3), LBFGS(), dense, w, fit_intercept=False,
                          schedule=Full(), curvature_by_name=True).curvature == LBFGS()


@pytest.mark.parametrize("sparse", [False, True])
def test_the_checks_sum_of_squares_decides_the_hessian_range_without_a_pass(
        sparse: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """``check_matrix(fit=True)`` hands back the sum of the squares its value check computed;
    it bounds every column's, so ``default_curvature`` takes Newton without reading the data
    again when the bound is within ``NEWTON_MAX_RANGE``, and falls back to the exact test
    (:func:`recipes.hessian_range`) when it is not -- the same choice either way."""
    from sqnopt.data import check_matrix
    from sqnopt.objectives import SquaredError

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 6))       # six columns of one scale: the bound is ~6x the range
    if sparse:
        X = sp.csr_matrix(X)
    stats: dict[str, float] = {}
    Xc = check_matrix(X, fit=True, stats=stats)
    values = Xc.data if sparse else np.asarray(Xc).ravel()
    assert stats["sum_squares"] == pytest.approx(float(np.dot(values, values)), rel=1e-12)
    obj = SquaredError(lam=1e-3)
    exact = recipes.default_curvature(obj, Xc, 0)
    assert exact == Newton()
    calls: list[float] = []
    real = recipes.hessian_range

    def counted(X: object, lam: float) -> float:
        calls.append(lam)
        return real(X, lam)

    monkeypatch.setattr(recipes, "hessian_range", counted)
    assert recipes.default_curvature(obj, Xc, 0, sum_squares=stats["sum_squares"]) == exact
    assert calls == []                  # decided by the bound: no pass
    # a bound beyond the limit proves nothing: the exact test runs and decides (here Newton,
    # the range being about half the limit)
    tiny = SquaredError(lam=stats["sum_squares"] / 400 / (3 * recipes.NEWTON_MAX_RANGE))
    assert recipes.hessian_range(Xc, tiny.lam) < recipes.NEWTON_MAX_RANGE
    calls.clear()
    assert recipes.default_curvature(tiny, Xc, 0, sum_squares=stats["sum_squares"]) == Newton()
    assert len(calls) == 1
    # float32 values: their check sums the values, not the squares -- nothing handed back
    stats32: dict[str, float] = {}
    check_matrix(np.asarray(rng.normal(size=(5, 2)), dtype=np.float32), fit=True, stats=stats32)
    assert stats32 == {}


def test_a_default_ridge_fit_reads_the_data_for_the_hessian_range_not_at_all(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The Trainer passes the check's sum of squares to the recipe: a default fit of dense
    ridge data chooses Newton without :func:`recipes.hessian_range`'s pass, and reaches the
    closed-form minimiser in its one step (3 passes: the gradient, the Hessian, the line
    search's)."""
    from sqnopt import SQNRegressor

    def refuse(X: object, lam: float) -> float:
        raise AssertionError("hessian_range read the data")

    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 5))
    y = X @ rng.normal(size=5) + 0.1 * rng.normal(size=300)
    from sqnopt.training import Trainer

    monkeypatch.setattr(recipes, "hessian_range", refuse)
    t = Trainer(loss="squared_error", alpha=1e-2, fit_intercept=False)
    t.fit(X, y)
    assert t._setup is not None and t._setup.curvature == Newton()
    w = np.linalg.solve(X.T @ X / 300 + 1e-2 * np.eye(5), X.T @ y / 300)
    np.testing.assert_allclose(t.model_.coef[0], w, rtol=1e-9, atol=1e-12)
    assert float(t.histories_[0].effective_passes[-1]) == 3.0
    # the estimator takes that one step directly (the normal equations), deciding alike
    m = SQNRegressor(alpha=1e-2, fit_intercept=False).fit(X, y)
    assert m.fit_path_ == "normal equations"
    np.testing.assert_allclose(m.coef_, w, rtol=1e-9, atol=1e-12)
