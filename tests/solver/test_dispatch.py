"""Decisions from declarations: a plugin model's tuned defaults, the loop a solve takes and
why (``SolveResult.path`` / ``path_reason``), the warning when a composition falls off a fast
path it could have used, and the kernels' ``compiled`` declaration."""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt import (
    SAGA,
    AdaGrad,
    Constant,
    Fixed,
    LogLoss,
    ProgressiveBatch,
    RegularizedBFGS,
    SlowPathWarning,
    Solver,
    SQNClassifier,
)
from sqnopt import recipes
from sqnopt.curvature._identity import IdentityKernel
from sqnopt.curvature.reference import IdentityKernelNumPy, IdentityNumPy
from sqnopt.interfaces import CurvatureModel, Problem
from sqnopt.registry import hookimpl, register_plugin, unregister_plugin
from tests.conftest import sparse_linear_classes


# ---------------------------------------------------------------------------- tuned defaults
class _ShrunkKernel(IdentityKernelNumPy):
    def __init__(self, shift: float) -> None:
        self.shift = shift

    def direction(self, grad: Any, out: Any) -> None:
        out[:] = grad / (1.0 + self.shift)


@dataclass(frozen=True)
class Shrunk(CurvatureModel):
    """A plugin-like model, ``d = g / (1 + shift)``, whose tuned setting is ``shift = lam``
    when named without parameters."""

    shift: float = 1.0
    name = "shrunk_test"

    def tuned(self, lam: float, X: Any, *, auto_schedule: bool) -> Shrunk:
        return dataclasses.replace(self, shift=lam) if self.shift == 1.0 else self

    def init(self, problem: Problem) -> _ShrunkKernel:
        return _ShrunkKernel(self.shift)


@dataclass(frozen=True)
class Untunable(Shrunk):
    name = "untunable_test"

    def tuned(self, lam: float, X: Any, *, auto_schedule: bool) -> Any:
        return {"shift": lam}


class _ShrunkPlugin:
    @hookimpl
    def sqnopt_register_curvature_models(self, register: Any) -> None:
        register("shrunk_test", Shrunk)


@pytest.fixture
def shrunk_registered() -> Any:
    plugin = _ShrunkPlugin()
    register_plugin(plugin, name="test-shrunk")
    yield
    unregister_plugin(plugin)


def test_a_plugin_model_gets_its_tuned_defaults_through_its_declaration(
        boxes: Any, shrunk_registered: Any) -> None:
    X, y = boxes
    w = np.ones(X.shape[0])
    obj = LogLoss(lam=0.01)
    by_name = recipes.choose(obj, Shrunk(), X, w, fit_intercept=True, curvature_by_name=True)
    assert by_name.curvature == Shrunk(shift=0.01)
    given = recipes.choose(obj, Shrunk(), X, w, fit_intercept=True)
    assert given.curvature == Shrunk()        # a model given as an instance is kept as given
    named = SQNClassifier(curvature="shrunk_test", alpha=0.01, max_iter=2, tol=None,
                          random_state=0).fit(X, y)
    assert named._trainer.results_[0].components["curvature"] == Shrunk(shift=0.01).describe()
    assert named.fit_path_ == "python"
    kept = SQNClassifier(curvature=Shrunk(), alpha=0.01, max_iter=2, tol=None,
                         random_state=0).fit(X, y)
    assert kept._trainer.results_[0].components["curvature"] == Shrunk().describe()


def test_tuned_must_return_a_model(boxes: Any) -> None:
    X, _ = boxes
    with pytest.raises(TypeError, match="tuned\\(\\) returned dict"):
        recipes.choose(LogLoss(lam=0.01), Untunable(), X, np.ones(X.shape[0]),
                       fit_intercept=True, curvature_by_name=True)


def test_the_built_in_models_declare_their_tuning(boxes: Any) -> None:
    X, _ = boxes
    assert RegularizedBFGS().tuned(1e-4, X, auto_schedule=True).delta == 5e-5
    assert RegularizedBFGS(delta=1e-5).tuned(1e-4, X, auto_schedule=True).delta == 1e-5
    assert IdentityNumPy().tuned(1e-4, X, auto_schedule=True) == IdentityNumPy()  # the default


# ---------------------------------------------------------------------------- path and reason
def _sparse() -> tuple[Any, Any]:
    X, y = sparse_linear_classes(400, 2000, 0.005, seed=1)
    return sp.csr_matrix(X), y


def _fit(X: Any, y: Any, **kw: Any) -> Any:
    cfg: dict[str, Any] = dict(objective=LogLoss(lam=0.01), curvature="identity",
                               schedule=Fixed(1), step=Constant(eps=0.05), max_iter=200,
                               random_state=0)
    cfg.update(kw)
    return Solver(**cfg).fit(X, y)


def test_the_result_says_which_path_ran_and_why() -> None:
    Xs, y = _sparse()
    cases = [
        ({}, Xs, "scaled", "plain minibatch gradient"),
        ({"gradient": SAGA()}, Xs, "lazy", "declares a score table"),
        ({"curvature": AdaGrad(composite=True)}, Xs, "adaptive", "just in time"),
        ({"curvature": "lbfgs"}, Xs, "generic", "does not declare direction_is_gradient"),
        ({}, Xs.toarray(), "generic", "dense rows"),
        ({"path": "generic"}, Xs, "generic", "path='generic' was asked for"),
        ({"path": "python"}, Xs, "python", "path='python' was asked for"),
        ({"curvature": IdentityNumPy()}, Xs, "python",
         "curvature IdentityKernelNumPy is pure Python"),
    ]
    for kw, X, path, why in cases:
        res = _fit(X, y, **kw)
        assert res.path == path, (kw, res.path_reason)
        assert why in res.path_reason, (kw, res.path_reason)
        assert res.compiled == (path != "python")


def test_the_estimator_surfaces_the_path(boxes: Any) -> None:
    X, y = boxes
    est = SQNClassifier(curvature="lbfgs", max_iter=5, tol=None, random_state=0).fit(X, y)
    assert est.fit_path_ == "generic" and est.fit_path_reason_ == "dense rows: an iteration " \
        "costs O(n_params) on any iterate, so the compiled driver keeps the dense one"
    est = SQNClassifier(curvature=IdentityNumPy(), max_iter=1, tol=None,
                        random_state=0).fit(X, y)
    assert est.fit_path_ == "python" and "IdentityKernelNumPy is pure Python" in \
        est.fit_path_reason_


# ---------------------------------------------------------------------------- the warning
def test_falling_off_the_sparse_path_warns_once_per_solver() -> None:
    Xs, y = _sparse()
    solver = Solver(LogLoss(lam=0.01), "identity", Fixed(1), Constant(eps=0.05),
                    gradient=ProgressiveBatch(), max_iter=50, random_state=0)
    with pytest.warns(SlowPathWarning, match="score_table.*path='generic'") as caught:
        res = solver.fit(Xs, y)
    assert len(caught) == 1
    assert res.path == "generic" and "score_table" in res.path_reason
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        state = solver.init_state(Xs, y)          # the same solver: told already
        solver.rebind(state, Xs, y)
    with pytest.warns(SlowPathWarning):           # another solver is told again
        Solver(LogLoss(lam=0.01), "identity", Fixed(1), Constant(eps=0.05),
               gradient=ProgressiveBatch(), max_iter=5).fit(Xs, y)


def test_no_warning_where_the_path_was_asked_for_or_is_the_right_one() -> None:
    Xs, y = _sparse()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for path in ("generic", "python"):
            assert _fit(Xs, y, gradient=ProgressiveBatch(), path=path, max_iter=5).path == path
        # batches holding many entries against the features: the dense step is the fast one
        res = _fit(Xs, y, gradient=ProgressiveBatch(), schedule=Fixed(400), max_iter=3)
        assert res.path == "generic" and "score_table" in res.path_reason
        # the method itself rules the sparse iterate out (curvature pairs): nothing to tell
        assert _fit(Xs, y, curvature="lbfgs", max_iter=5).path == "generic"


# ---------------------------------------------------------------------------- compiled
@dataclass(frozen=True)
class _PythonSideIdentity(CurvatureModel):
    """A Python subclass of a compiled kernel that declares ``compiled = False``."""

    name = "python_side_identity"
    direction_is_gradient = True

    def init(self, problem: Problem) -> Any:
        class Kernel(IdentityKernel):
            compiled = False

        return Kernel(problem.n_params)


@dataclass(frozen=True)
class _ClaimsCompiled(CurvatureModel):
    name = "claims_compiled"

    def init(self, problem: Problem) -> Any:
        class Kernel(IdentityKernelNumPy):
            compiled = True

        return Kernel()


def test_the_loop_follows_the_kernels_compiled_declaration(boxes: Any) -> None:
    X, y = boxes
    ref = _fit(X, y, max_iter=50)
    res = _fit(X, y, curvature=_PythonSideIdentity(), max_iter=50)
    assert ref.path == "generic" and res.path == "python"
    assert "curvature Kernel is pure Python" in res.path_reason
    np.testing.assert_allclose(res.w, ref.w, rtol=1e-12, atol=1e-15)
    with pytest.raises(TypeError, match="declares compiled but does not subclass"):
        _fit(X, y, curvature=_ClaimsCompiled(), max_iter=5)

