"""``n_jobs`` on the solver, the estimator and the command line: its meaning, its validation,
and that it never changes a result (every composition whose passes split into blocks)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_array_equal

from sqnopt import SQNClassifier, Solver, _parallel
from sqnopt._jobs import check_n_jobs, effective_n_jobs, usable_cpus
from sqnopt.cli import main
from sqnopt.data import prepare
from sqnopt.model import LinearModel

THREADS = (1, 2, 4)     # one, two, and more than this machine's cores


# ---- the meaning of n_jobs --------------------------------------------------------------------

def test_n_jobs_means_what_it_means_in_scikit_learn() -> None:
    joblib = pytest.importorskip("joblib")
    assert effective_n_jobs(None) == 1
    assert effective_n_jobs(1) == 1
    assert effective_n_jobs(3) == 3                     # more than the cores is allowed
    assert effective_n_jobs(-1) == usable_cpus()
    assert effective_n_jobs(-2) == max(usable_cpus() - 1, 1)
    assert effective_n_jobs(-10_000) == 1
    with joblib.parallel_config(n_jobs=3):
        assert effective_n_jobs(None) == 3               # the context's
        assert effective_n_jobs(2) == 2                  # an explicit value wins
    with joblib.parallel_config(backend="threading", n_jobs=-1):
        assert effective_n_jobs(None) == joblib.cpu_count()
    assert effective_n_jobs(None) == 1


@pytest.mark.parametrize("bad,error,match", [
    (0, ValueError, "n_jobs=0"), (1.5, TypeError, "integer"), ("2", TypeError, "integer"),
    (True, TypeError, "integer")])
def test_bad_n_jobs_is_a_clear_error(bad: Any, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        check_n_jobs(bad)
    with pytest.raises(error, match=match):
        Solver(n_jobs=bad)
    X = np.random.default_rng(0).normal(size=(40, 3))
    with pytest.raises(error, match=match):
        SQNClassifier(n_jobs=bad).fit(X, X[:, 0] > 0)


def test_estimator_exposes_n_jobs() -> None:
    est = SQNClassifier(n_jobs=-1)
    assert est.get_params()["n_jobs"] == -1
    assert SQNClassifier().get_params()["n_jobs"] is None
    assert est.set_params(n_jobs=2).n_jobs == 2


def test_small_fits_do_not_resolve_n_jobs(monkeypatch: pytest.MonkeyPatch) -> None:
    """No pass of a small problem splits, so a fit does not look n_jobs up (nor pay for it):
    the passes are the serial loops, whatever n_jobs says."""
    import sqnopt.solver._run as run

    calls: list[Any] = []
    monkeypatch.setattr(run, "effective_n_jobs", lambda n: calls.append(n) or 2)
    X = np.random.default_rng(0).normal(size=(200, 5))
    SQNClassifier(n_jobs=-1).fit(X, X[:, 0] > 0)
    assert calls == []
    Xl = np.random.default_rng(0).normal(size=(20_000, 30))
    SQNClassifier(n_jobs=-1, max_iter=2, tol=None).fit(Xl, Xl[:, 0] > 0)
    assert calls and set(calls) == {-1}


# ---- n_jobs never changes a result ------------------------------------------------------------

def _sparse_binary(n: int, d: int, density: float, seed: int = 0) -> tuple[Any, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, random_state=seed, format="csr",
                  data_rvs=lambda k: rng.normal(size=k))
    y = np.where(X @ rng.normal(size=d) + 0.2 * rng.normal(size=n) > 0, 1, -1)
    return X, y


def _dense_classes(n: int, d: int, k: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).astype(np.float32)
    y = np.argmax(X @ rng.normal(size=(d, k)) + rng.normal(size=(n, k)), axis=1)
    return X, y


@pytest.mark.parametrize("curvature", ["auto", "lbfgs", "truncated_newton", "newton"])
def test_estimator_coef_is_identical_for_1_2_and_4_threads(curvature: str) -> None:
    """At the default block policy, on data whose passes split into blocks: the same coef_,
    bit for bit, for n_jobs = 1, 2, 4."""
    X, y = _sparse_binary(20_000, 200, 0.05)
    rows = prepare(X, np.where(y > 0, 1.0, -1.0)).rows
    assert _parallel.plan(rows.n_samples, 2 * rows.nnz / rows.n_samples + 16, 201) > 1
    fits = {n: SQNClassifier(alpha=1e-4, curvature=curvature, random_state=0,
                             n_jobs=n).fit(X, y) for n in THREADS}
    for n in (2, 4):
        assert_array_equal(fits[n].coef_, fits[1].coef_)
        assert_array_equal(fits[n].intercept_, fits[1].intercept_)
        assert fits[n].n_iter_ == fits[1].n_iter_


@pytest.mark.parametrize("preconditioner", ["diagonal", None])
def test_newton_cg_vector_steps_are_identical_for_1_2_and_4_threads(preconditioner: str | None
                                                                   ) -> None:
    """Wide data (more parameters than CG splits its vector steps at: 4 chunks of 4096): the
    CG iterations' dots are summed per chunk and added in chunk order on every thread count,
    so the fit is the same bits; a preconditioned and a plain CG."""
    X, y = _sparse_binary(3000, 24_000, 0.002, seed=3)
    assert X.shape[1] + 1 > 4 * 4096
    fits = {}
    for n in THREADS:
        s = Solver(objective="logloss", curvature=("newton_cg", {"preconditioner":
                                                                  preconditioner}),
                   schedule="full", step="score_line", curvature_schedule="full",
                   random_state=0, max_epochs=8, n_jobs=n)
        fits[n] = s.fit(X, np.where(y > 0, 1.0, -1.0))
    assert fits[1].n_curvature_samples > 4 * X.shape[0]     # several CG steps ran
    for n in (2, 4):
        assert_array_equal(fits[n].w, fits[1].w)
        assert fits[n].n_curvature_samples == fits[1].n_curvature_samples


def test_estimator_softmax_coef_is_identical_for_1_2_and_4_threads() -> None:
    X, y = _dense_classes(8000, 60, 4)
    fits = {n: SQNClassifier(alpha=1e-3, random_state=0, n_jobs=n).fit(X, y) for n in THREADS}
    for n in (2, 4):
        assert_array_equal(fits[n].coef_, fits[1].coef_)
        assert_array_equal(fits[n].predict_proba(X), fits[1].predict_proba(X))


COMPOSITIONS = {
    "lbfgs_armijo": dict(objective="logloss", curvature="lbfgs", schedule="full", step="armijo"),
    "truncated_newton": dict(objective="logloss", curvature="truncated_newton", schedule="full",
                             step="score_line", curvature_schedule="full"),
    "newton": dict(objective="squared_hinge", curvature="newton", schedule="full",
                   step="score_line", curvature_schedule="full"),
    "svrg": dict(objective="logloss", curvature="identity", schedule=("fixed", {"size": 50}),
                 step=("constant", {"eps": 0.5}), gradient="svrg"),
    "saga": dict(objective="logloss", curvature="identity", schedule=("fixed", {"size": 20}),
                 step=("constant", {"eps": 0.2}), gradient="saga", path="generic"),
    "progressive": dict(objective="logloss", curvature="lbfgs", schedule=("fixed", {"size": 300}),
                        step="armijo", gradient="progressive"),
    "softmax_bound_lbfgs": dict(objective="softmax", curvature="bound_lbfgs", schedule="full",
                                step="armijo"),
    "sqb": dict(objective="softmax", curvature="quadratic_bound", schedule="full",
                step=("constant", {"eps": 1.0}), curvature_schedule=("fixed", {"size": 400})),
}


@pytest.mark.parametrize("name", sorted(COMPOSITIONS))
def test_every_composition_runs_the_same_bits_on_any_thread_count(small_blocks: None,
                                                                   name: str) -> None:
    """Under a policy that splits these small problems into many blocks: the iterates of
    every composition whose passes run in blocks (full-batch gradients, line searches, Hessian
    products and Hessians, SVRG snapshots, SAGA's table, growing batches, the softmax bound)
    do not depend on the threads."""
    spec = dict(COMPOSITIONS[name])
    rng = np.random.default_rng(7)
    if spec["objective"] == "softmax":
        X: Any = rng.normal(size=(900, 12))
        y: Any = np.argmax(X @ rng.normal(size=(12, 3)) + rng.normal(size=(900, 3)), axis=1)
        classes: Any = np.arange(3)
    else:
        X, y = _sparse_binary(900, 60, 0.2, seed=7)
        classes = None
    objective = (spec.pop("objective"), {"lam": 1e-3})
    results = {}
    for n in THREADS:
        solver = Solver(objective, random_state=3, max_iter=25, fit_intercept=True, n_jobs=n,
                        history_every=5, **spec)
        res = solver.fit(X, y, classes=classes)
        results[n] = res
    for n in (2, 4):
        assert_array_equal(results[n].w, results[1].w)
        assert results[n].n_iter == results[1].n_iter
        assert_array_equal(results[n].history.objective, results[1].history.objective)


# ---- the command line -------------------------------------------------------------------------

def test_cli_n_jobs(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    X, y = _sparse_binary(20_000, 200, 0.05)
    from sklearn.datasets import dump_svmlight_file

    dump_svmlight_file(X, y, str(tmp_path / "d.svm"))
    coefs = {}
    for n in ("1", "2", "-1"):
        code = main(["train", "d.svm", "--n-jobs", n, "--model", f"m{n}.npz", "--history",
                     f"h{n}.json", "--progress", "never"])
        assert code == 0, capsys.readouterr().err
        coefs[n] = LinearModel.load(tmp_path / f"m{n}.npz").coef
    assert_array_equal(coefs["2"], coefs["1"])
    assert_array_equal(coefs["-1"], coefs["1"])
    capsys.readouterr()
    for bad in ("0", "two"):
        with pytest.raises(SystemExit) as exc:
            main(["train", "d.svm", "--n-jobs", bad])
        assert exc.value.code == 2
        assert "--n-jobs" in capsys.readouterr().err


# ---- prediction -------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("k", [1, 4, 21])   # 21: more scores than the kernel sums at once
def test_csr_scores_are_scipys_bits_on_any_thread_count(dtype: Any, k: int) -> None:
    from sqnopt.data import check_matrix, csr_scores

    rng = np.random.default_rng(0)
    X = check_matrix(sp.random(30_000, 500, density=0.02, random_state=0, format="csr",
                               dtype=dtype))
    coef = rng.normal(size=(k, 500)) * 10.0 ** rng.integers(-6, 6, size=(k, 500))
    expected = np.asarray(X @ coef.T)
    coef_t = np.ascontiguousarray(coef.T)
    assert _parallel.plan(X.shape[0], k * X.nnz / X.shape[0] + 1) > 1
    for n in THREADS:
        assert_array_equal(csr_scores(X, coef_t, n), expected)


def test_estimator_predicts_the_same_on_any_thread_count() -> None:
    X, y = _sparse_binary(40_000, 300, 0.02)
    Xt, _ = _sparse_binary(60_000, 300, 0.02, seed=1)
    est = SQNClassifier(alpha=1e-3, n_jobs=1, random_state=0).fit(X, y)
    one = est.decision_function(Xt)
    proba = est.predict_proba(Xt)
    for n in (2, 4, -1):
        est.set_params(n_jobs=n)
        assert_array_equal(est.decision_function(Xt), one)
        assert_array_equal(est.predict_proba(Xt), proba)
    Xm, ym = _dense_classes(3000, 20, 3)
    multi = SQNClassifier(alpha=1e-3, n_jobs=1).fit(sp.csr_matrix(Xm), ym)
    ref = multi.decision_function(sp.csr_matrix(np.tile(Xm, (10, 1))))
    multi.set_params(n_jobs=2)
    assert_array_equal(multi.decision_function(sp.csr_matrix(np.tile(Xm, (10, 1)))), ref)
