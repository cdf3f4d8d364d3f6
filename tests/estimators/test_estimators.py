"""SQNClassifier behaviour beyond the scikit-learn conformance suite."""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

pytest.importorskip("sklearn")

from sklearn.base import clone  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

from sqnopt import SQNClassifier, Solver  # noqa: E402
from sqnopt.datasets import make_boxes  # noqa: E402
from sqnopt.solver import History  # noqa: E402


def _blobs(n: int = 300, k: int = 3, d: int = 5, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=3.0, size=(k, d))
    y = rng.integers(0, k, size=n)
    return centers[y] + rng.normal(size=(n, d)), y


# ---------------------------------------------------------------- equivalence with the Solver
def test_binary_fit_is_exactly_the_solver_run() -> None:
    X, y = make_boxes(400, 6, random_state=0)
    est = SQNClassifier(loss="squared_hinge", curvature="identity", gradient="minibatch",
                        step=("decaying", {"eps0": 0.05, "T0": 50.0}),
                        schedule=("fixed", {"size": 7}), max_iter=3, tol=None,
                        random_state=5).fit(X, y)
    res = Solver("squared_hinge", "identity", ("fixed", {"size": 7}),
                 ("decaying", {"eps0": 0.05, "T0": 50.0}), fit_intercept=True, max_epochs=3,
                 random_state=5).fit(X, y)
    np.testing.assert_array_equal(est.coef_[0], res.coef)
    assert est.intercept_[0] == res.intercept
    assert est.t_ == res.n_iter and est.n_iter_ == 3


def test_dense_and_sparse_input_agree() -> None:
    X, y = make_boxes(300, 5, random_state=1)
    a = SQNClassifier(random_state=0, tol=None, max_iter=3).fit(X, y)
    b = SQNClassifier(random_state=0, tol=None, max_iter=3).fit(sp.csr_matrix(X), y)
    c = SQNClassifier(random_state=0, tol=None, max_iter=3).fit(X.astype(np.float32), y)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(a.coef_, c.coef_, rtol=1e-4, atol=1e-5)


def test_auto_step_makes_training_scale_invariant() -> None:
    """Features scaled by 1000: the automatic step scales with them and accuracy is unchanged."""
    X, y = make_boxes(500, 4, random_state=2)
    a = SQNClassifier(random_state=0).fit(X, y)
    b = SQNClassifier(random_state=0).fit(1000.0 * X, y)
    assert a.score(X, y) > 0.9
    assert b.score(1000.0 * X, y) > 0.9


# ---------------------------------------------------------------- multiclass strategies
def test_multiclass_hinge_is_one_vs_rest() -> None:
    X, y = _blobs()
    est = SQNClassifier(loss="hinge", random_state=0).fit(X, y)
    assert est.coef_.shape == (3, X.shape[1]) and est.intercept_.shape == (3,)
    assert isinstance(est.history_, list) and len(est.history_) == 3
    assert not hasattr(est, "predict_proba")
    assert est.score(X, y) > 0.9


def test_logloss_one_vs_rest_probabilities() -> None:
    X, y = _blobs()
    est = SQNClassifier(random_state=0, multiclass="ovr").fit(X, y)
    assert est._trainer.strategy_ == "ovr"
    proba = est.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    # normalised one-vs-rest sigmoids
    s = 1.0 / (1.0 + np.exp(-est.decision_function(X)))
    np.testing.assert_allclose(proba, s / s.sum(axis=1, keepdims=True), rtol=1e-10)
    with pytest.raises(ValueError, match="no multiclass form"):
        SQNClassifier(loss="squared_hinge", multiclass="multinomial").fit(X, y)


def test_logloss_uses_the_registered_softmax_as_one_solver() -> None:
    X, y = _blobs()
    est = SQNClassifier(random_state=0).fit(X, y)
    assert est._trainer.strategy_ == "multinomial" and est.converged_
    assert isinstance(est.history_, History)          # one solve, not one per class
    assert est.coef_.shape == (3, X.shape[1])
    d = est.decision_function(X)
    e = np.exp(d - d.max(axis=1, keepdims=True))
    np.testing.assert_allclose(est.predict_proba(X), e / e.sum(axis=1, keepdims=True), rtol=1e-10)
    assert est.score(X, y) > 0.9
    # the multinomial objective decreased along the run
    assert est.history_.objective[-1] < est.history_.objective[0]
    ovr = SQNClassifier(random_state=0, multiclass="ovr").fit(X, y)
    assert ovr._trainer.strategy_ == "ovr"


def test_softmax_loss_on_two_classes_gives_one_score() -> None:
    X, y = make_boxes(300, 4, random_state=3)
    est = SQNClassifier(loss="softmax", random_state=0).fit(X, y)
    assert est.coef_.shape == (1, 4)
    p = est.predict_proba(X)[:, 1]
    np.testing.assert_allclose(p, 1.0 / (1.0 + np.exp(-est.decision_function(X))), rtol=1e-10)


# ---------------------------------------------------------------- weights
def test_class_weight_balanced_equals_the_explicit_dict() -> None:
    X, y = _blobs(k=2, n=200)
    y = np.where(np.arange(200) < 170, 0, 1)  # imbalanced
    a = SQNClassifier(class_weight="balanced", random_state=0).fit(X, y)
    counts = np.bincount(y)
    cw = {0: 200 / (2 * counts[0]), 1: 200 / (2 * counts[1])}
    b = SQNClassifier(class_weight=cw, random_state=0).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    c = SQNClassifier(random_state=0).fit(X, y, sample_weight=np.where(y == 0, cw[0], cw[1]))
    np.testing.assert_allclose(a.coef_, c.coef_, rtol=1e-12)


def test_class_weight_moves_predictions_towards_the_heavy_class() -> None:
    X, y = make_boxes(600, 2, random_state=4)
    plain = SQNClassifier(random_state=0).fit(X, y)
    heavy = SQNClassifier(class_weight={1.0: 20.0}, random_state=0).fit(X, y)
    assert np.mean(heavy.predict(X) == 1) > np.mean(plain.predict(X) == 1) + 0.05


def test_bad_class_weight_and_sample_weight_messages() -> None:
    X, y = make_boxes(50, 2, random_state=0)
    with pytest.raises(ValueError, match="not among the classes"):
        SQNClassifier(class_weight={7: 2.0}).fit(X, y)
    with pytest.raises(ValueError, match="weights are zero"):
        SQNClassifier().fit(X, y, sample_weight=np.zeros(50))
    with pytest.raises(ValueError, match="one class"):
        SQNClassifier().fit(X, y, sample_weight=(y > 0).astype(float))


def test_sample_weight_is_not_modified() -> None:
    X, y = make_boxes(80, 3, random_state=0)
    sw = np.linspace(0.5, 2.0, 80)
    before = sw.copy()
    SQNClassifier(class_weight="balanced").fit(X, y, sample_weight=sw)
    np.testing.assert_array_equal(sw, before)


# ---------------------------------------------------------------- partial_fit keeps the state
def test_partial_fit_continues_the_solver_state_exactly() -> None:
    X, y = make_boxes(600, 5, random_state=6)
    chunks = [(X[i:i + 200], y[i:i + 200]) for i in range(0, 600, 200)]
    est = SQNClassifier(random_state=3, curvature="identity", gradient="minibatch",
                        step=("decaying", {"eps0": 0.1, "T0": 30.0}))
    for Xc, yc in chunks:
        est.partial_fit(Xc, yc, classes=[-1.0, 1.0])
    # the same thing by hand: one solve, rebound to each chunk, one pass per chunk
    solver = Solver("logloss", "identity", "fixed", ("decaying", {"eps0": 0.1, "T0": 30.0}),
                    fit_intercept=True, random_state=3, history_every=(0,))
    state = solver.init_state(chunks[0][0], chunks[0][1], classes=[-1.0, 1.0])
    res = solver.run(state, max_epochs=1)
    for Xc, yc in chunks[1:]:
        solver.rebind(state, Xc, yc)
        res = solver.run(state, max_epochs=1)
    np.testing.assert_array_equal(est.coef_[0], res.coef)
    assert est.t_ == res.n_iter == state.t  # the iteration (and hence step) counter continued
    assert len(est.history_) == 4  # start + one point per call


def test_partial_fit_keeps_kernels_and_ignores_zero_weight_batches() -> None:
    X, y = make_boxes(300, 4, random_state=7)
    est = SQNClassifier(random_state=0)
    est.partial_fit(X[:100], y[:100], classes=[-1.0, 1.0])
    state = est._trainer._states[0]
    curvature, step = state.curvature, state.step
    coef, t = est.coef_.copy(), est.t_
    est.partial_fit(X[100:200], y[100:200], sample_weight=np.zeros(100))
    np.testing.assert_array_equal(est.coef_, coef)
    assert est.t_ == t
    est.partial_fit(X[200:], y[200:])
    assert est._trainer._states[0].curvature is curvature and est._trainer._states[0].step is step
    assert est.t_ > t


def test_partial_fit_first_call_needs_classes_and_accepts_one_class_batches() -> None:
    X, y = make_boxes(200, 3, random_state=8)
    with pytest.raises(ValueError, match="classes"):
        SQNClassifier().partial_fit(X, y)
    est = SQNClassifier(random_state=0)
    pos, neg = y > 0, y < 0
    est.partial_fit(X[pos], y[pos], classes=[-1.0, 1.0])  # a batch with only one class
    est.partial_fit(X[neg], y[neg])
    assert list(est.classes_) == [-1.0, 1.0]
    with pytest.raises(ValueError, match="classes"):
        est.partial_fit(X, y, classes=[-1.0, 1.0, 2.0])


def test_partial_fit_balanced_class_weight_uses_the_counts_seen_so_far() -> None:
    X, y = make_boxes(200, 3, random_state=9)
    est = SQNClassifier(class_weight="balanced", random_state=0)
    est.partial_fit(X[:100], y[:100], classes=[-1.0, 1.0])
    counts = np.array([np.sum(y[:100] < 0), np.sum(y[:100] > 0)], dtype=float)
    np.testing.assert_array_equal(est._trainer._class_counts, counts)
    est.partial_fit(X[100:], y[100:])
    np.testing.assert_array_equal(est._trainer._class_counts,
                                  [np.sum(y < 0), np.sum(y > 0)])


def test_partial_fit_after_fit_continues_fit_state() -> None:
    X, y = make_boxes(300, 4, random_state=10)
    est = SQNClassifier(random_state=0, max_iter=2, tol=None).fit(X, y)
    t = est.t_
    est.partial_fit(X, y)
    assert est.t_ > t


def test_partial_fit_multiclass_one_vs_rest() -> None:
    X, y = _blobs(n=600)
    est = SQNClassifier(loss="hinge", random_state=0)
    for i in range(0, 600, 150):
        est.partial_fit(X[i:i + 150], y[i:i + 150], classes=[0, 1, 2])
    assert est.coef_.shape == (3, X.shape[1])
    assert est.score(X, y) > 0.85


# ---------------------------------------------------------------- warm start, pickling, composition
def test_warm_start_starts_from_the_previous_solution() -> None:
    X, y = make_boxes(300, 4, random_state=11)
    est = SQNClassifier(random_state=0, warm_start=True, max_iter=2, tol=None).fit(X, y)
    f_end = est.history_.objective[-1]
    est.fit(X, y)
    assert est.history_.objective[0] == pytest.approx(f_end, rel=1e-12)
    cold = SQNClassifier(random_state=0, max_iter=2, tol=None).fit(X, y)
    assert cold.history_.objective[0] == pytest.approx(np.log(2.0))


def test_pickled_estimator_predicts_and_resumes_partial_fit() -> None:
    """Identity curvature has no memory, so resuming after pickling is exact: iterate, counters
    (step sizes) and random stream survive."""
    X, y = make_boxes(600, 5, random_state=12)
    a = SQNClassifier(random_state=1, average=True, curvature="identity")
    b = SQNClassifier(random_state=1, average=True, curvature="identity")
    for est in (a, b):
        est.partial_fit(X[:300], y[:300], classes=[-1.0, 1.0])
    b2 = pickle.loads(pickle.dumps(b))
    np.testing.assert_array_equal(b2.predict_proba(X), b.predict_proba(X))
    a.partial_fit(X[300:], y[300:])
    b2.partial_fit(X[300:], y[300:])
    np.testing.assert_array_equal(a.coef_, b2.coef_)
    assert a.t_ == b2.t_
    assert len(a.history_) == len(b2.history_)


def test_pickling_keeps_the_curvature_memory() -> None:
    """The docstring promises it: an unpickled L-BFGS estimator holds its pairs and its
    partial_fit continues bit for bit as the original's."""
    X, y = make_boxes(600, 6, random_state=0)
    a = SQNClassifier(curvature="lbfgs", schedule=("fixed", {"size": 20}),
                      step=("constant", {"eps": 0.05}), random_state=0)
    a.partial_fit(X[:300], y[:300], classes=np.unique(y))
    b = pickle.loads(pickle.dumps(a))
    pairs = b._trainer._checkpoints[0].state["kernels"]["curvature"]["state"]
    assert pairs["count"] == 10 and np.any(pairs["V"] != 0)       # a full memory of pairs
    a.partial_fit(X[300:], y[300:])
    b.partial_fit(X[300:], y[300:])
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert "curvature memory (L-BFGS pairs" in (SQNClassifier.__doc__ or "")


def test_pipeline_gridsearch_clone() -> None:
    X, y = _blobs(n=240, k=2)
    pipe = make_pipeline(StandardScaler(), SQNClassifier(curvature="identity", random_state=0,
                                                          tol=None, max_iter=20))
    grid = GridSearchCV(pipe, {"sqnclassifier__alpha": [1e-4, 1e-2],
                               "sqnclassifier__schedule": ["fixed", ("fixed", {"size": 20})]},
                        cv=3).fit(X, y)
    assert grid.best_score_ > 0.9
    est = SQNClassifier(curvature=("identity", {}), class_weight={0: 2.0})
    c = clone(est)
    assert c.get_params() == est.get_params() and c is not est


def test_verbose_progress_bar_is_silent_off_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    X, y = make_boxes(200, 3, random_state=0)
    SQNClassifier(verbose=1, random_state=0).fit(X, y)
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == ""


def test_callback_sees_the_run_and_can_stop_it() -> None:
    X, y = make_boxes(2000, 3, random_state=0)
    seen: list[int] = []

    def cb(info: Any) -> bool:
        seen.append(info.iteration)
        return len(seen) >= 2

    est = SQNClassifier(callback=cb, random_state=0, tol=None).fit(X, y)
    assert seen and est.t_ < 20 * 2000 / 5


# ---------------------------------------------------------------- SQB through the estimator
def test_sqb_auto_batches_are_the_models_and_reach_the_optimum() -> None:
    # schedule="auto" with the quadratic bound named bare: gradient batches Geometric(100, 1.5),
    # a fixed 1000-sample bound batch and the CG solve (QuadraticBound.auto_schedule /
    # auto_curvature_schedule / auto_params), step 1 -- exactly the Solver run with those
    # components (the component's own default solver stays the paper's LSQR) -- and 20 epochs
    # reach the optimum of the objective to 1e-4 relative on a sparse 4-class problem (N = 3000,
    # larger than the bound batch)
    from scipy.optimize import minimize

    from sqnopt import Constant, Fixed, Geometric, QuadraticBound, Softmax
    from sqnopt.data import prepare

    rng = np.random.default_rng(1)
    n, d, K = 3000, 400, 4
    X = sp.random(n, d, density=0.02, random_state=1, format="csr")
    y = np.argmax(X @ rng.normal(scale=3.0, size=(d, K)) + rng.gumbel(size=(n, K)), axis=1)
    lam = 1.0 / n
    est = SQNClassifier(loss="softmax", alpha=lam, curvature="quadratic_bound",
                        sampling="subset", fit_intercept=False, tol=None, max_iter=20,
                        random_state=3).fit(X, y)
    assert QuadraticBound().solver == "lsqr"
    res = Solver(Softmax(lam=lam), QuadraticBound(solver="cg"), Geometric(100, 1.5),
                 Constant(1.0), curvature_schedule=Fixed(1000), sampling="subset",
                 fit_intercept=False, max_epochs=20, random_state=3).fit(X, y)
    np.testing.assert_array_equal(est.coef_.ravel(), np.asarray(res.coef).ravel())
    assert res.n_curvature_samples == 1000 * res.n_iter and res.n_iter == est.t_
    k = Softmax(lam=lam).init(prepare(X, y, label_kind="multiclass", fit_intercept=False))
    g = np.empty(k.n_params)

    def fun(w: np.ndarray) -> tuple[float, np.ndarray]:
        return k.full_gradient(w, g), g.copy()

    opt = minimize(fun, np.zeros(k.n_params), jac=True, method="L-BFGS-B",
                   options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 5000})
    assert k.value(est.coef_.ravel()) <= opt.fun * (1 + 1e-4)
    # a model given with parameters is used as given (here: the paper's LSQR)
    est2 = SQNClassifier(loss="softmax", alpha=lam, curvature=("quadratic_bound", {}),
                         sampling="subset", fit_intercept=False, tol=None, max_iter=2,
                         random_state=3).fit(X, y)
    res2 = Solver(Softmax(lam=lam), QuadraticBound(), Geometric(100, 1.5), Constant(1.0),
                  curvature_schedule=Fixed(1000), sampling="subset", fit_intercept=False,
                  max_epochs=2, random_state=3).fit(X, y)
    np.testing.assert_array_equal(est2.coef_.ravel(), np.asarray(res2.coef).ravel())


# ---------------------------------------------------------------- capabilities, not names
def test_a_plugin_objective_gets_probabilities_and_multinomial_mode_by_declaring_them() -> None:
    """An objective registered by a (test) plugin, unknown to sqnopt by name, declares the
    ``probabilistic`` capability and a multiclass form: the estimator gives it predict_proba
    and one multinomial solve, as for the built-in logloss."""
    import dataclasses

    from sqnopt.interfaces import MULTICLASS, PROBABILISTIC, Objective
    from sqnopt.objectives import LogLoss, Softmax
    from sqnopt.registry import hookimpl, register_plugin, unregister_plugin

    @dataclasses.dataclass(frozen=True)
    class MySoftmax(Softmax):
        name = "my_softmax"

    @dataclasses.dataclass(frozen=True)
    class MyLogistic(LogLoss):
        name = "my_logistic"

        def with_capability(self, capability: str) -> Objective | None:
            if capability == MULTICLASS:
                return MySoftmax(lam=self.lam)
            return super().with_capability(capability)

    class _Plugin:
        @staticmethod
        @hookimpl
        def sqnopt_register_objectives(register):  # type: ignore[no-untyped-def]
            register("my_logistic", MyLogistic)

    register_plugin(_Plugin, name="test-objective-plugin")
    try:
        X, y = _blobs()
        assert PROBABILISTIC in MyLogistic().capabilities
        est = SQNClassifier(loss="my_logistic", random_state=0)
        assert hasattr(est, "predict_proba")            # before fitting: from the capability
        est.fit(X, y)
        assert est._trainer.strategy_ == "multinomial"
        assert isinstance(est._trainer._setup.objective, MySoftmax)
        np.testing.assert_allclose(est.predict_proba(X).sum(axis=1), 1.0)
        assert est.score(X, y) > 0.9
    finally:
        unregister_plugin(_Plugin)
