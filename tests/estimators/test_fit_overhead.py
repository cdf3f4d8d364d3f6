"""What a fit skips or keeps to cut its fixed cost (bench/estimator_overhead.py) gives the same
results as doing the work again: the Trainer's checked data passed to the Solver unchecked, the
label positions reused for counts and checks, objectives and default components shared between
fits, the checkpoint identity described when first read, the estimator's validation fast path
(tests/estimators/test_fit_validation.py compares it with scikit-learn's input by input)."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt import SQNClassifier, Solver
from sqnopt.data import encode_labels, prepare
from sqnopt.objectives import LogLoss
from sqnopt.registry import hookimpl, register_plugin, reset_registry, unregister_plugin
from sqnopt.training import Trainer
from sqnopt.training._setup import _named, objective_with_lam
from sqnopt.training._weights import check_two_classes, class_counts


@pytest.fixture(autouse=True)
def fresh_registry():
    reset_registry()
    yield
    reset_registry()


def _data(n: int = 120, p: int = 6, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    y = np.where(X @ rng.standard_normal(p) + 0.3 * rng.standard_normal(n) > 0, 1, -1)
    return X, y


@pytest.mark.parametrize("label_kind,labels", [("binary", np.array([2.0, 7.0])),
                                                ("multiclass", np.array(["a", "b", "c"]))])
@pytest.mark.parametrize("importance_sampling", [False, True])
def test_prepare_of_validated_data_is_the_checked_one(label_kind, labels, importance_sampling):
    """``prepare(validated=True)`` builds the very arrays the checking path builds."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((50, 4))
    y = labels[rng.integers(0, len(labels), 50)]
    y[:len(labels)] = labels                       # every label present
    w = rng.uniform(0.0, 3.0, 50)
    kw = dict(sample_weight=w, label_kind=label_kind, classes=labels,
              importance_sampling=importance_sampling)
    checked = prepare(X, y, **kw)
    fast = prepare(X, y, validated=True, **kw)
    for name in ("y", "sample_weight", "grad_weight", "classes"):
        a, b = getattr(checked, name), getattr(fast, name)
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), name
    assert checked.weight_sum == fast.weight_sum
    assert fast.X is X
    with pytest.raises(ValueError, match="needs the classes"):
        prepare(X, y, validated=True, label_kind=label_kind)


@pytest.mark.parametrize("labels", [np.array([3, 9]), np.array([False, True]),
                                    np.array([-1.5, 2.5]), np.array(["no", "yes"])])
def test_two_label_encoding_matches_the_sorted_one(labels):
    """Two labels found by min/max give the positions and classes ``np.unique`` gives."""
    rng = np.random.default_rng(2)
    y = labels[rng.integers(0, 2, 40)]
    y[:2] = labels
    enc, cls = encode_labels(y, "multiclass")
    assert cls.tolist() == np.unique(y).tolist() and cls.dtype == np.unique(y).dtype
    np.testing.assert_array_equal(enc, np.searchsorted(np.unique(y), y).astype(np.float64))
    assert enc.dtype == np.float64 and enc.flags.c_contiguous


def test_counts_and_checks_from_label_positions_match():
    y = np.array(["b", "a", "c", "b", "b", "a"])
    enc, cls = encode_labels(y, "multiclass")
    index = enc.astype(np.intp)
    np.testing.assert_array_equal(class_counts(y, cls, index), class_counts(y, cls))
    for idx in (None, index):
        with pytest.raises(ValueError, match=r"only one class \('a'\)"):
            check_two_classes(y, cls, np.array([0.0, 1.0, 0.0, 0.0, 0.0, 2.0]), idx)
        with pytest.raises(ValueError, match="all weights are zero"):
            check_two_classes(y, cls, np.zeros(6), idx)
        check_two_classes(y, cls, np.array([1.0, 0, 0, 0, 0, 1]), idx)   # "a" and "b": fine
        check_two_classes(y, cls, np.ones(6), idx)


@pytest.mark.parametrize("kw", [dict(), dict(curvature="identity", max_iter=3),
                                dict(multiclass="ovr", max_iter=3),
                                dict(fit_intercept="regularized"),
                                dict(class_weight="balanced", curvature="lbfgs")])
def test_fits_repeat_bit_for_bit(kw):
    """Shared components and cached objectives leave nothing behind between fits: a second
    fit, and a fit with fresh component instances, end with the same bits."""
    X, y = _data()
    if kw.get("multiclass") == "ovr":
        y = np.where(X[:, 0] > 0.5, 2, np.where(y > 0, 1, 0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = SQNClassifier(random_state=0, **kw).fit(X, y).coef_
        b = SQNClassifier(random_state=0, **kw).fit(X, y).coef_
        reset_registry()                   # new registry: new objective instances
        c = SQNClassifier(random_state=0, **kw).fit(X, y).coef_
    assert a.tobytes() == b.tobytes() == c.tobytes()


@pytest.mark.parametrize("kw", [dict(), dict(curvature="identity", max_iter=3),
                                dict(multiclass="ovr", max_iter=3),
                                dict(fit_intercept="regularized"),
                                dict(class_weight="balanced", curvature="lbfgs")])
@pytest.mark.parametrize("data", ["float64", "float32 Fortran", "string labels",
                                  "float labels, weights", "CSR", "CSR array float32"])
def test_fast_validation_fits_as_scikit_learns(kw, data, monkeypatch):
    """A fit whose input the validation fast path accepts ends with the bits, attributes and
    warnings of the fit that validates with scikit-learn's functions."""
    from sqnopt.estimators import _classifier

    X, y = _data()
    if kw.get("multiclass") == "ovr":
        y = np.where(X[:, 0] > 0.5, 2, np.where(y > 0, 1, 0))
    sw = None
    if data == "float32 Fortran":
        X = np.asfortranarray(X, dtype=np.float32)
    elif data == "string labels":
        y = np.array(["no", "yes", "maybe"])[np.where(y > 0, 1, np.where(y == 0, 2, 0))]
    elif data == "float labels, weights":
        y = y.astype(np.float64)
        sw = np.random.default_rng(5).uniform(0.5, 2.0, len(y))
    elif data == "CSR":
        X = sp.csr_matrix(np.where(X > 0.5, X, 0.0))
    elif data == "CSR array float32":
        X = sp.csr_array(np.where(X > 0.5, X, 0.0).astype(np.float32))
    assert _classifier.fast_fit_data(SQNClassifier(), X, y) is not None

    def fit() -> tuple[SQNClassifier, list[tuple[type, str]]]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est = SQNClassifier(random_state=0, **kw).fit(X, y, sample_weight=sw)
        return est, [(w.category, str(w.message)) for w in caught]

    fast, fast_warnings = fit()
    monkeypatch.setattr(_classifier, "fast_fit_data", lambda *a: None)
    slow, slow_warnings = fit()
    assert fast_warnings == slow_warnings
    for name in ("coef_", "intercept_", "classes_"):
        a, b = getattr(fast, name), getattr(slow, name)
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), name
    assert fast.n_features_in_ == slow.n_features_in_ == X.shape[1]
    assert not hasattr(fast, "feature_names_in_") and not hasattr(slow, "feature_names_in_")
    assert (fast.n_iter_, fast.t_, fast.converged_) == (slow.n_iter_, slow.t_, slow.converged_)


def test_objectives_by_name_are_shared_per_name_lam_and_registry():
    a = objective_with_lam("logloss", 1e-3)
    assert objective_with_lam("logloss", 1e-3) is a
    assert objective_with_lam("logloss", 2e-3) is not a
    assert objective_with_lam("logloss", 2e-3).lam == 2e-3
    assert objective_with_lam("logloss", 0.0).describe() != objective_with_lam(
        "logloss", -0.0).describe()      # -0.0 is not served the entry of 0.0 (nor conversely)
    reset_registry()
    assert objective_with_lam("logloss", 1e-3) is not a
    assert objective_with_lam("logloss", 1e-3) == a


def test_named_components_are_shared_per_registry():
    """Components named by a string (curvature="identity", step="constant", ...) are built
    once per name and registry; the fits that share them end as fits with fresh ones."""
    from sqnopt.interfaces import CurvatureModel, StepRule

    a = _named("curvature", "identity", CurvatureModel)
    assert _named("curvature", "identity", CurvatureModel) is a
    assert _named("curvature", "lbfgs", CurvatureModel) is not a
    assert _named("step", "constant", StepRule, eps=0.5).eps == 0.5
    assert _named("step", "constant", StepRule, eps=0.5) is not _named(
        "step", "constant", StepRule, eps=0.25)
    reset_registry()
    assert _named("curvature", "identity", CurvatureModel) is not a
    X, y = _data()
    kw = dict(curvature="identity", step="constant", schedule="fixed", gradient="minibatch",
              max_iter=3, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first = SQNClassifier(**kw).fit(X, y)
        second = SQNClassifier(**kw).fit(X, y)
    assert first._trainer._setup.curvature is second._trainer._setup.curvature
    assert first.coef_.tobytes() == second.coef_.tobytes()


def test_the_objective_cache_follows_plugin_registration():
    """A name that a plugin registers, removes and another plugin registers again builds the
    new plugin's objective: the cache belongs to the registry a plugin change replaces."""

    @dataclasses.dataclass(frozen=True)
    class First(LogLoss):
        name = "overhead_loss"

    @dataclasses.dataclass(frozen=True)
    class Second(LogLoss):
        name = "overhead_loss"

    def plugin(cls):
        class _Plugin:
            @staticmethod
            @hookimpl
            def sqnopt_register_objectives(register):  # type: ignore[no-untyped-def]
                register("overhead_loss", cls)
        return _Plugin

    X, y = _data()
    for cls in (First, Second):
        p = plugin(cls)
        register_plugin(p, name="overhead-loss-plugin")
        try:
            obj = objective_with_lam("overhead_loss", 1e-3)
            assert type(obj) is cls
            assert objective_with_lam("overhead_loss", 1e-3) is obj
            est = SQNClassifier(loss="overhead_loss", alpha=1e-3, random_state=0).fit(X, y)
            assert type(est._trainer._setup.objective) is cls
        finally:
            unregister_plugin(p)


def test_the_identity_is_described_when_read_as_the_solver_was():
    """The checkpoint identity of a state, described lazily, is what the solver's settings
    were when it built the state -- not what they were changed to afterwards."""
    X, y = _data()
    solver = Solver("logloss", "lbfgs", random_state=0, max_epochs=1)
    state = solver.init_state(X, y)
    before = solver._identity()
    solver.step = Solver("logloss", "lbfgs", step="constant").step
    solver.average = True
    assert solver._identity() != before
    assert state.identity == before
    assert state.checkpoint().identity == before
    assert state.identity is state.identity           # described once


def test_a_trainer_fit_on_sparse_and_dense_data_agrees_with_a_solver_fit():
    """The Trainer's unchecked hand-over gives the Solver's own result on the same data."""
    X, y = _data(200, 8, seed=3)
    for A in (X, sp.csr_matrix(np.where(np.abs(X) > 0.8, X, 0.0))):
        tr = Trainer(curvature="lbfgs", fit_intercept=False, alpha=1e-3, random_state=0,
                     max_epochs=5, tol=None)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = tr.fit(A, y)
        setup = tr._setup
        assert setup is not None
        res = Solver(setup.objective, setup.curvature, setup.schedule, setup.step,
                     gradient=setup.gradient, sampling=setup.sampling, random_state=0,
                     max_epochs=5, report_every=setup.report_every,
                     history_every=(0,)).fit(A, y)
        assert model.coef.ravel().tobytes() == res.coef.tobytes()


@pytest.mark.parametrize("k", [2, 3])
def test_majority_check_from_label_positions_warns_alike(k):
    """check_majority with the labels' positions warns exactly when it warns from the labels
    (a model predicting the rarest class warns, one predicting the heaviest does not)."""
    from sqnopt.model import LinearModel
    from sqnopt.training._finish import ConvergenceWarning, check_majority

    rng = np.random.default_rng(4)
    labels = np.array(["x", "y", "z"][:k])
    y = labels[np.minimum(rng.integers(0, 4, 60), k - 1)]   # the last label is the heaviest
    enc, cls = encode_labels(y, "multiclass")
    X = np.ones((60, 1))
    w = rng.uniform(0.5, 1.5, 60)
    for predicted, warns in ((0, True), (k - 1, False)):
        if k == 2:
            coef, icpt = np.zeros((1, 1)), np.array([1.0 if predicted == 1 else -1.0])
        else:
            coef, icpt = np.zeros((k, 1)), np.eye(k)[predicted]
        model = LinearModel(coef=coef, intercept=icpt, classes=cls,
                            strategy="binary" if k == 2 else "multinomial", loss="logloss",
                            probabilistic=True)
        for index in (None, enc.astype(np.intp)):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                check_majority(model, X, y, cls, w, True, [], 2, index=index)
            assert any(issubclass(c.category, ConvergenceWarning) for c in caught) == warns
