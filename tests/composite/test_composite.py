"""The composite solvers (``sqnopt.composite``: OWL-QN, newGLMNET): each compiled loop against
its NumPy twin iterate by iterate, and the optimum against scikit-learn's L1 / elastic-net
solvers (liblinear, SAGA, Lasso, ElasticNet)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt import LogLoss
from sqnopt.composite import composite_problem, newglmnet, owlqn, solve_composite
from sqnopt.composite._glmnet import PAIR_FLOOR_DEFAULT
from sqnopt.composite.reference import glmnet_numpy, owlqn_numpy
from sqnopt.data import prepare
from sqnopt.penalties import L1, ElasticNet
from sqnopt.penalties.reference import PenaltyKernelNumPy

sklearn = pytest.importorskip("sklearn")
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.linear_model import ElasticNet as SkElasticNet  # noqa: E402
from sklearn.linear_model import Lasso, LogisticRegression  # noqa: E402


def sk_penalty(l1_ratio: float) -> dict[str, Any]:
    """``LogisticRegression``'s keywords of an L1 share ``l1_ratio``: ``l1_ratio`` alone from
    scikit-learn 1.8 (which deprecates ``penalty``), else ``penalty`` (and ``l1_ratio``)."""
    import inspect

    from sklearn.linear_model import LogisticRegression

    if inspect.signature(LogisticRegression).parameters["penalty"].default == "deprecated":
        return {"l1_ratio": l1_ratio}
    if l1_ratio == 1.0:
        return {"penalty": "l1"}
    return {"penalty": "elasticnet", "l1_ratio": l1_ratio}


def _data(n: int = 300, d: int = 25, sparse: bool = False, seed: int = 0
          ) -> tuple[Any, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.2, 2.0, size=d)
    w = np.where(rng.random(d) < 0.3, rng.normal(size=d) * 2, 0.0)
    y = np.where(X @ w + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    if sparse:
        X = sp.csr_matrix(X * (rng.random(X.shape) < 0.3))
    return X, y


def _compare_iterates(iterates: np.ndarray, twin: list[np.ndarray], trace: np.ndarray,
                      values: list[float], value_rtol: float = 1e-12, atol: float = 1e-12
                      ) -> int:
    """The compiled iterates equal the twin's (to rounding) until the objective's decrease
    reaches working precision -- from there on, which trial a line search accepts depends on
    the last bits of ``F`` and the two runs may take different (equally good) steps; the
    final values then agree to rounding. Returns the iterates compared."""
    n, end = 1, min(len(trace), len(values))
    while n < end and trace[n - 1] - trace[n] > 1e-12 * abs(trace[n]):
        n += 1
    for t in range(n):
        np.testing.assert_allclose(iterates[t], twin[t], rtol=1e-9, atol=atol,
                                   err_msg=f"iterate {t}")
        assert np.array_equal(iterates[t] == 0.0, twin[t] == 0.0), f"zero pattern at {t}"
    np.testing.assert_allclose(trace[:n], values[:n], rtol=value_rtol)
    assert trace[-1] == pytest.approx(values[-1], rel=value_rtol)
    return n


def _objective(X: Any, y: np.ndarray, w: np.ndarray, b: float, alpha: float, r: float) -> float:
    m = y * (np.asarray(X @ w).ravel() + b)
    return float(np.mean(np.logaddexp(0.0, -m)) + alpha * (r * np.abs(w).sum()
                                                          + 0.5 * (1 - r) * w @ w))


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("penalty", [L1(0.02), ElasticNet(0.03, 0.6)], ids=repr)
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_owlqn_matches_numpy_twin_iterate_by_iterate(sparse: bool, penalty: Any,
                                                         fit_intercept: bool) -> None:
    X, y = _data(sparse=sparse)
    data = prepare(X, y, fit_intercept=fit_intercept)
    _, kernel, pen, problem = composite_problem(LogLoss(lam=0.0), penalty, data)
    twin_pen = PenaltyKernelNumPy(problem.n_params, problem.dim, problem.n_features,
                                  pen.l1, pen.l2)
    n_iter = 30
    _, k, _, _, _, _, trace, iterates = owlqn(kernel, pen, memory=5, tol=0.0, max_iter=n_iter,
                                              record_iterates=n_iter + 1)
    _, values, twin_iterates, _ = owlqn_numpy(kernel, twin_pen, np.zeros(problem.n_params),
                                              memory=5, tol=0.0, max_iter=n_iter)
    assert iterates is not None and len(iterates) == k + 1
    assert _compare_iterates(iterates, twin_iterates, trace, values) >= 10
    assert np.all(np.diff(trace) <= 0.0)               # monotone: sufficient decrease
    assert np.count_nonzero(iterates[-1][: problem.n_features] == 0.0) > 0


METHODS = ["owlqn", "newglmnet"]


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("penalty", [L1(0.02), ElasticNet(0.03, 0.6)], ids=repr)
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("model, dense_after", [("cd", 1), ("dense", 0), ("dense", 1)])
def test_newglmnet_matches_numpy_twin_iterate_by_iterate(sparse: bool, penalty: Any,
                                                        fit_intercept: bool, model: str,
                                                        dense_after: int) -> None:
    """Both ways of minimising the model: coordinate descent on the data (the paper's) and the
    explicit Hessian solved exactly (dense sweeps, then feature-sign search), from the start or
    after the first model that needed more than one sweep. The dense model's Cholesky factors
    (LAPACK's, updated by rows and rotations, against SciPy's of each system) agree to
    rounding, which the systems' conditioning amplifies: the iterates agree to 1e-10."""
    X, y = _data(sparse=sparse, seed=6)
    data = prepare(X, y, fit_intercept=fit_intercept)
    _, kernel, pen, problem = composite_problem(LogLoss(lam=0.0), penalty, data)
    twin_pen = PenaltyKernelNumPy(problem.n_params, problem.dim, problem.n_features,
                                  pen.l1, pen.l2)
    n_iter = 12
    _, k, _, _, _, _, trace, iterates = newglmnet(
        kernel, pen, X, tol=0.0, max_iter=n_iter, record_iterates=n_iter + 1, model=model,
        dense_after=dense_after)  # type: ignore[arg-type]
    _, values, twin_iterates, _ = glmnet_numpy(kernel, twin_pen, X, np.zeros(problem.n_params),
                                               tol=0.0, max_iter=n_iter,
                                               dense=model == "dense", dense_after=dense_after)
    assert iterates is not None and len(iterates) == k + 1
    tols = (1e-12, 1e-12) if model == "cd" else (1e-10, 1e-10)
    assert _compare_iterates(iterates, twin_iterates, trace, values, *tols) >= 4
    assert np.all(np.diff(trace) <= 0.0)
    assert np.count_nonzero(iterates[-1][: problem.n_features] == 0.0) > 0


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("model", ["dense", "subset"])
def test_exact_model_skips_the_pairs_of_flat_rows_as_the_twin_does(fit_intercept: bool,
                                                                  model: str) -> None:
    """On sparse rows the exact models (the whole Hessian, the working set's) take their
    off-diagonal entries from the rows whose curvature is at least ``pair_floor`` times the
    largest, their diagonal from every row. On nearly separable data, where rows of
    negligible curvature appear as the weights grow, the compiled loop follows the twin that
    does the same iterate by iterate, leaves the path of the twin that forms every pair
    (so the test sees the rule), and reaches the same minimum as the loop without it."""
    rng = np.random.default_rng(3)
    N, d = 400, 30
    Xd = rng.normal(size=(N, d)) * (rng.random((N, d)) < 0.3)
    w_true = rng.normal(size=d) * 3
    y = np.where(Xd @ w_true + 0.1 * rng.normal(size=N) > 0, 1.0, -1.0)
    X = sp.csr_matrix(Xd)
    data = prepare(X, y, fit_intercept=fit_intercept)
    _, kernel, pen, problem = composite_problem(LogLoss(lam=0.0), L1(0.002), data)
    twin_pen = PenaltyKernelNumPy(problem.n_params, problem.dim, problem.n_features,
                                  pen.l1, pen.l2)
    n_iter = 12
    runs = {floor: newglmnet(kernel, pen, X, tol=0.0, max_iter=n_iter,
                             record_iterates=n_iter + 1, model=model,  # type: ignore[arg-type]
                             dense_after=0, pair_floor=floor)
            for floor in (None, 0.0)}
    _, _, _, _, _, _, trace, iterates = runs[None]
    assert iterates is not None
    twin = {floor: glmnet_numpy(kernel, twin_pen, X, np.zeros(problem.n_params), tol=0.0,
                                max_iter=n_iter, dense=model == "dense", dense_after=0,
                                subset_max=1000 if model == "subset" else 0, pair_floor=floor)
            for floor in (PAIR_FLOOR_DEFAULT, 0.0)}
    flat = 0
    for w in iterates:
        s = np.abs(X @ w[:d] + (w[d] if fit_intercept else 0.0))
        D = np.exp(-s) / (1.0 + np.exp(-s)) ** 2
        flat = max(flat, int(np.count_nonzero(D < PAIR_FLOOR_DEFAULT * D.max())))
    assert flat >= 10
    _, values, twin_iterates, _ = twin[PAIR_FLOOR_DEFAULT]
    assert _compare_iterates(iterates, twin_iterates, trace, values, 1e-10, 1e-10) >= 4
    assert max(float(np.max(np.abs(a - b)))
               for a, b in zip(iterates[:6], twin[0.0][2][:6])) > 1e-8
    exact_trace = runs[0.0][6]
    assert trace[-1] == pytest.approx(exact_trace[-1], rel=1e-12)


def test_newglmnet_seed_sets_the_sweep_order_and_the_twin_follows() -> None:
    """``seed`` starts the sweep order's generator: the compiled loop and its twin agree
    iterate by iterate with the same seed; another seed visits the coordinates in another
    order (other iterates) and reaches the same minimiser; 0 is the fixed default."""
    from sqnopt.composite._glmnet import DEFAULT_SEED
    from sqnopt.composite._solve import sweep_seed

    X, y = _data(sparse=True, seed=6)
    data = prepare(X, y, fit_intercept=True)
    _, kernel, pen, problem = composite_problem(LogLoss(lam=0.0), L1(0.02), data)
    twin_pen = PenaltyKernelNumPy(problem.n_params, problem.dim, problem.n_features,
                                  pen.l1, pen.l2)
    seed = sweep_seed(7)
    assert seed == sweep_seed(7) != sweep_seed(8) and 0 < seed < 2**64
    assert sweep_seed(None) == 0
    runs = {}
    for s in (0, DEFAULT_SEED, seed):
        _, k, _, _, _, _, trace, its = newglmnet(kernel, pen, X, tol=0.0, max_iter=6,
                                                 record_iterates=7, model="cd", seed=s)
        assert its is not None
        runs[s] = its
    np.testing.assert_array_equal(runs[0], runs[DEFAULT_SEED])
    assert not np.array_equal(runs[0][1:], runs[seed][1:])
    _, values, twin, _ = glmnet_numpy(kernel, twin_pen, X, np.zeros(problem.n_params), tol=0.0,
                                      max_iter=6, seed=seed)
    _, _, _, _, _, _, trace, its = newglmnet(kernel, pen, X, tol=0.0, max_iter=6,
                                             record_iterates=7, model="cd", seed=seed)
    assert its is not None
    assert _compare_iterates(its, twin, trace, values, 1e-12, 1e-12) >= 4
    ends = [newglmnet(kernel, pen, X, tol=1e-10, max_iter=200, model="cd", seed=s)[0]
            for s in (0, seed)]
    np.testing.assert_allclose(ends[0], ends[1], atol=1e-7)


def test_composite_fit_random_state_reproducible() -> None:
    """An L1 fit's ``random_state`` seeds newGLMNET's sweep order: the same seed gives the
    same coefficients bit for bit, another the same model to the tolerance."""
    from sqnopt import SQNClassifier

    X, y = _data(sparse=True, seed=3)
    fits = [SQNClassifier(penalty="l1", alpha=0.01, random_state=s, max_iter=3, tol=None)
            .fit(X, y).coef_ for s in (1, 1, 2)]
    np.testing.assert_array_equal(fits[0], fits[1])
    assert not np.array_equal(fits[0], fits[2])
    full = [SQNClassifier(penalty="l1", alpha=0.01, random_state=s, tol=1e-10).fit(X, y).coef_
            for s in (1, 2)]
    np.testing.assert_allclose(full[0], full[1], atol=1e-7)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_l1_logistic_matches_liblinear(sparse: bool, method: str) -> None:
    """No intercept (liblinear penalises its bias): ``C = 1 / (alpha N)``."""
    X, y = _data(sparse=sparse, seed=1)
    alpha = 0.01
    res = solve_composite(LogLoss(lam=0.0), L1(alpha), X, y, fit_intercept=False, tol=1e-12,
                          max_iter=5000, method=method)  # type: ignore[arg-type]
    # both line searches read F: they stop at working precision, where F no longer resolves
    # the pseudo-gradient (about 1e-9 here)
    assert res.converged and res.pg_max <= 1e-8
    assert res.method == method
    sk = LogisticRegression(C=1.0 / (alpha * X.shape[0]), solver="liblinear",
                            fit_intercept=False, tol=1e-12, max_iter=10000,
                            **sk_penalty(1.0)).fit(X, y)
    f_ours = _objective(X, y, res.coef[0], 0.0, alpha, 1.0)
    f_sk = _objective(X, y, sk.coef_[0], 0.0, alpha, 1.0)
    assert res.fun == pytest.approx(f_ours, rel=1e-12)
    assert f_ours <= f_sk * (1 + 1e-8)
    assert f_ours == pytest.approx(f_sk, rel=1e-8)
    np.testing.assert_array_equal(res.coef[0] != 0.0, sk.coef_[0] != 0.0)
    assert 0 < res.nnz < X.shape[1]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("l1_ratio", [1.0, 0.5])
def test_penalties_with_intercept_match_saga(sparse: bool, l1_ratio: float, method: str) -> None:
    X, y = _data(n=200, d=12, sparse=sparse, seed=2)
    alpha = 0.02
    pen = L1(alpha) if l1_ratio == 1.0 else ElasticNet(alpha, l1_ratio)
    res = solve_composite(LogLoss(lam=0.0), pen, X, y, tol=1e-12, max_iter=5000,
                          method=method)  # type: ignore[arg-type]
    assert res.converged
    kw = sk_penalty(l1_ratio)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        sk = LogisticRegression(C=1.0 / (alpha * X.shape[0]), solver="saga", tol=1e-14,
                                max_iter=200_000, **kw).fit(X, y)
    f_ours = _objective(X, y, res.coef[0], res.intercept[0], alpha, l1_ratio)
    f_sk = _objective(X, y, sk.coef_[0], sk.intercept_[0], alpha, l1_ratio)
    assert f_ours == pytest.approx(f_sk, rel=1e-8)
    assert f_ours <= f_sk * (1 + 1e-10)
    np.testing.assert_array_equal(res.coef[0] != 0.0, np.abs(sk.coef_[0]) > 1e-8)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("l1_ratio", [1.0, 0.3])
def test_least_squares_matches_lasso_and_elastic_net(sparse: bool, l1_ratio: float,
                                                     method: str) -> None:
    rng = np.random.default_rng(3)
    X = rng.normal(size=(150, 20))
    t = X @ np.where(rng.random(20) < 0.3, 1.0, 0.0) + 0.1 * rng.normal(size=150)
    Xs: Any = sp.csr_matrix(X * (rng.random(X.shape) < 0.5)) if sparse else X
    alpha = 0.05
    pen = L1(alpha) if l1_ratio == 1.0 else ElasticNet(alpha, l1_ratio)
    res = solve_composite(("squared_error", {"lam": 0.0}), pen, Xs, t, tol=1e-12, max_iter=5000,
                          method=method)  # type: ignore[arg-type]
    Model = Lasso if l1_ratio == 1.0 else SkElasticNet
    kw = {} if l1_ratio == 1.0 else {"l1_ratio": l1_ratio}
    if Model is Lasso:
        ref = Lasso(alpha=alpha, tol=1e-14, max_iter=100_000).fit(Xs, t)
    else:
        ref = SkElasticNet(alpha=alpha, tol=1e-14, max_iter=100_000, **kw).fit(Xs, t)
    np.testing.assert_allclose(res.coef[0], ref.coef_, atol=1e-8)
    assert res.intercept[0] == pytest.approx(ref.intercept_, abs=1e-8)
    np.testing.assert_array_equal(res.coef[0] != 0.0, ref.coef_ != 0.0)


def test_softmax_with_l1_reaches_a_zero_pseudo_gradient() -> None:
    rng = np.random.default_rng(4)
    y = np.arange(240) % 3
    X = rng.normal(size=(3, 10))[y] * (rng.random(10) < 0.5) + rng.normal(size=(240, 10))
    res = solve_composite(("softmax", {"lam": 0.0}), L1(0.02), X, y, tol=1e-9, max_iter=3000)
    assert res.converged and res.pg_max <= 1e-7 and res.method == "owlqn"    # auto's choice
    with pytest.raises(ValueError, match="one linear score"):
        solve_composite(("softmax", {"lam": 0.0}), L1(0.02), X, y, method="newglmnet")
    assert res.coef.shape == (3, 10) and res.nnz < 30


def test_smooth_objectives_only_and_bad_settings() -> None:
    X, y = _data(n=40, d=3)
    with pytest.raises(ValueError, match="not smooth"):
        solve_composite("hinge", L1(0.1), X, y)
    with pytest.raises(ValueError, match="tol"):
        solve_composite("logloss", L1(0.1), X, y, tol=-1.0)
    with pytest.raises(ValueError, match="method"):
        solve_composite("logloss", L1(0.1), X, y, method="newton")  # type: ignore[arg-type]


@pytest.mark.parametrize("method", METHODS)
def test_a_strong_penalty_gives_the_zero_vector(method: str) -> None:
    X, y = _data(n=100, d=8, seed=5)
    res = solve_composite(LogLoss(lam=0.0), L1(10.0), X, y, fit_intercept=False,
                          method=method)  # type: ignore[arg-type]
    assert res.converged and res.nnz == 0 and res.n_iter == 0
    assert np.all(res.coef == 0.0) and not np.any(np.signbit(res.coef))


@pytest.mark.parametrize("method", METHODS)
def test_input_is_not_modified(method: str) -> None:
    X, y = _data(n=60, d=5, sparse=True)
    X0, y0 = X.copy(), y.copy()
    w0 = np.full(6, 0.1)
    w0_copy = w0.copy()
    solve_composite(LogLoss(lam=0.0), L1(0.01), X, y, w0=w0, max_iter=20,
                    method=method)  # type: ignore[arg-type]
    assert (X != X0).nnz == 0 and np.array_equal(y, y0) and np.array_equal(w0, w0_copy)


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("subset_max", [8, 40])
def test_working_set_model_matches_numpy_twin(fit_intercept: bool, subset_max: int) -> None:
    """The exact model on the working set (the nonzeros and the violating zeros), formed
    from the rows' entries in the set: with room for it (40), and with a cap the set exceeds
    in the first iteration (8: coordinate descent there, the exact model once the set fits);
    either way the solve ends at working precision, where coordinate descent alone does not
    in 12 iterations."""
    rng = np.random.default_rng(3)
    X = sp.csr_matrix(rng.normal(size=(200, 80)) * (rng.random((200, 80)) < 0.2))
    w_true = np.where(rng.random(80) < 0.05, 3.0, 0.0)
    y = np.where(X @ w_true + 0.3 * rng.normal(size=200) > 0, 1.0, -1.0)
    data = prepare(X, y, fit_intercept=fit_intercept)
    _, kernel, pen, problem = composite_problem(LogLoss(lam=0.0), L1(0.03), data)
    twin_pen = PenaltyKernelNumPy(problem.n_params, problem.dim, problem.n_features,
                                  pen.l1, pen.l2)
    from sqnopt.composite._glmnet import glmnet_run
    from sqnopt.composite._solve import _columns

    assert subset_max >= 8       # the set of the first model (9 nonzeros) exceeds 8

    indptr, indices, values, _ = _columns(X, problem.n_features)
    n_iter = 12
    w = np.zeros(problem.n_params)
    trace = np.full(n_iter + 1, np.nan)
    iterates = np.zeros((n_iter + 1, problem.n_params))
    k, *_ = glmnet_run(kernel, pen, indptr, indices, values, np.arange(200, dtype=np.intp),
                       w, np.zeros(200), n_iter, 0.0, 1000, 1.0, 30, True, trace, iterates,
                       None, 0, subset_max)
    _, values_, twin_iterates, _ = glmnet_numpy(kernel, twin_pen, X, np.zeros(problem.n_params),
                                                tol=0.0, max_iter=n_iter, dense_after=0,
                                                subset_max=subset_max)
    assert _compare_iterates(iterates[: k + 1], twin_iterates, trace[: k + 1], values_,
                             1e-10, 1e-10) >= 4
    assert 0 < np.count_nonzero(w[:80]) < 40
    assert k < n_iter            # stopped at working precision: the exact models converged



def _one_hot(n: int = 400, fields: int = 6, levels: int = 8, seed: int = 5
             ) -> tuple[Any, np.ndarray]:
    """Categorical fields one-hot: each group of columns sums to the column of ones, the
    nearly flat directions on which coordinate descent crawls."""
    rng = np.random.default_rng(seed)
    cats = rng.integers(0, levels, size=(n, fields)) + levels * np.arange(fields)
    X = sp.csr_matrix((np.ones(n * fields), (np.repeat(np.arange(n), fields), cats.ravel())),
                      shape=(n, fields * levels))
    y = np.where(X @ rng.normal(size=fields * levels) + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_face_cg_matches_numpy_twin_and_helps_the_sweeps(fit_intercept: bool) -> None:
    """When the exact model is due but its working set exceeds the cap (4 here), coordinate
    descent solves it, helped by conjugate gradients on the model's face (``_face_cg``): the
    compiled loop against its twin iterate by iterate (CG on collinear columns amplifies the
    rounding of the two implementations' sums: 1e-9), the twin's policy the compiled one's,
    and the face CG taken -- without it (no CG steps) the 12 outer iterations end elsewhere
    and further from optimality."""
    from sqnopt.composite import reference
    from sqnopt.composite._glmnet import _face_cg_policy, glmnet_run
    from sqnopt.composite._solve import _columns

    X, y = _one_hot()
    N = X.shape[0]
    data = prepare(X, y, fit_intercept=fit_intercept)
    _, kernel, pen, problem = composite_problem(LogLoss(lam=0.0), L1(0.002), data)
    assert _face_cg_policy() == (reference.CG_AFTER, reference.CG_EVERY, reference.CG_STEPS,
                                 reference.CG_TOL)
    n_iter = 12

    def run() -> tuple[int, float, np.ndarray, np.ndarray]:
        w = np.zeros(problem.n_params)
        trace = np.full(n_iter + 1, np.nan)
        iterates = np.zeros((n_iter + 1, problem.n_params))
        k, _, _, gmax, _ = glmnet_run(kernel, pen, *_columns(X, problem.n_features)[:3],
                                      np.arange(N, dtype=np.intp), w, np.zeros(N), n_iter, 0.0,
                                      1000, 1.0, 30, True, trace, iterates, None, 0, 4)
        return k, gmax, trace[: k + 1], iterates[: k + 1]

    k, gmax, trace, iterates = run()
    old = _face_cg_policy(steps=0)
    try:
        k0, gmax0, _, iterates0 = run()
    finally:
        _face_cg_policy(*old)
    twin_pen = PenaltyKernelNumPy(problem.n_params, problem.dim, problem.n_features,
                                  pen.l1, pen.l2)
    _, values, twin_iterates, _ = glmnet_numpy(kernel, twin_pen, X, np.zeros(problem.n_params),
                                               tol=0.0, max_iter=n_iter, dense_after=0,
                                               subset_max=4)
    assert _compare_iterates(iterates, twin_iterates, trace, values, 1e-12, 1e-9) >= 8
    assert not np.array_equal(iterates[-1], iterates0[-1])
    assert gmax < 0.1 * gmax0
    assert np.all(np.diff(trace) <= 0.0)

def test_dense_model_solves_collinear_one_hot_data_in_few_outer_iterations() -> None:
    """a9a's columns are one-hot groups (each group sums to a column of ones): the model's
    Hessian is nearly singular along differences of groups and coordinate descent on it
    crawls, so the paper's loose models need many outer iterations; the exact model
    (feature-sign search on the explicit Hessian) gives proximal Newton's fast local
    convergence."""
    from sqnopt.composite._solve import DENSE_MODEL_MAX, dense_model
    from sqnopt.datasets import load_a9a

    X, y = load_a9a("train")
    N = X.shape[0]
    assert dense_model(X.shape[1] + 1) and not dense_model(DENSE_MODEL_MAX + 1)
    out = {}
    for model in ("dense", "cd"):
        data = prepare(X, y, fit_intercept=True)
        _, kernel, pen, _ = composite_problem(LogLoss(lam=0.0), L1(1.0 / N), data)
        w, k, status, f, gmax, *_ = newglmnet(kernel, pen, X, tol=1e-8, max_iter=12,
                                              model=model)  # type: ignore[arg-type]
        out[model] = (k, status, f, gmax, np.count_nonzero(w))
    k, status, f, gmax, _ = out["dense"]
    assert status == "gtol" and gmax <= 1e-8 and k <= 12
    assert out["cd"][1] == "max_iter" and out["cd"][3] > 1e-6    # the loose models: far off
    assert f <= out["cd"][2]


@pytest.mark.parametrize("subset_max", [6, 60])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("loss", ["logistic", "squared_error"])
def test_dense_columns_match_sparse_columns_and_the_twin(loss: str, fit_intercept: bool,
                                                         subset_max: int) -> None:
    """Dense ``X`` goes to newGLMNET column after column (Fortran order, no row indices): the
    same solve as on a CSC copy of the same matrix (the dense columns' sums in four partial
    sums: rounding apart), and iterate by iterate the NumPy twin's -- through coordinate
    descent, the exact model on a working set over its cap (6: face CG) and under it."""
    from sqnopt.composite._glmnet import glmnet_run
    from sqnopt.composite._solve import _columns
    from sqnopt.objectives import SquaredError

    rng = np.random.default_rng(11)
    N, nf = 300, 40
    X = rng.normal(size=(N, nf)) * (rng.random((N, nf)) < 0.6)     # exact zeros in dense X
    X[:, 3] = X[:, 4] + X[:, 5]                                     # a collinear column
    w_true = np.where(rng.random(nf) < 0.2, 2.0, 0.0)
    s = X @ w_true + 0.3 * rng.normal(size=N)
    if loss == "logistic":
        y, objective, l1 = np.where(s > 0, 1.0, -1.0), LogLoss(lam=0.0), 0.02
    else:
        y, objective, l1 = s, SquaredError(lam=0.0), 0.05
    data = prepare(X, y, fit_intercept=fit_intercept, label_kind=objective.label_kind)
    _, kernel, pen, problem = composite_problem(objective, L1(l1), data)
    twin_pen = PenaltyKernelNumPy(problem.n_params, problem.dim, problem.n_features,
                                  pen.l1, pen.l2)
    cols = _columns(X, nf)
    assert cols[3] and cols[1].shape == (0,) and np.array_equal(cols[0], np.arange(nf + 1) * N)
    n_iter = 10
    runs = []
    for columns in (cols, _columns(sp.csr_matrix(X), nf)):
        w = np.zeros(problem.n_params)
        trace = np.full(n_iter + 1, np.nan)
        iterates = np.zeros((n_iter + 1, problem.n_params))
        k, *_ = glmnet_run(kernel, pen, *columns[:3], np.arange(N, dtype=np.intp), w,
                           np.zeros(N), n_iter, 0.0, 1000, 1.0, 30, True, trace, iterates,
                           None, 0, subset_max, dense_columns=columns[3])
        runs.append((k, trace[: k + 1], iterates[: k + 1]))
    (k, trace, iterates), (k_csc, trace_csc, iterates_csc) = runs
    _, values, twin_iterates, _ = glmnet_numpy(kernel, twin_pen, X, np.zeros(problem.n_params),
                                               tol=0.0, max_iter=n_iter, dense_after=0,
                                               subset_max=subset_max)
    # (the squared error's exact model is the objective: one step to working precision)
    assert _compare_iterates(iterates, twin_iterates, trace, values, 1e-10, 1e-10) >= 2
    assert _compare_iterates(iterates, list(iterates_csc), trace, list(trace_csc),
                             1e-10, 1e-10) >= 2
    assert 0 < np.count_nonzero(iterates[-1][:nf]) < nf


def test_dense_columns_are_checked_and_the_input_is_read_in_place() -> None:
    from sqnopt.composite._glmnet import glmnet_run
    from sqnopt.composite._solve import _columns

    rng = np.random.default_rng(2)
    X = np.asfortranarray(rng.normal(size=(50, 6)))
    X0 = X.copy()
    indptr, indices, values, dense = _columns(X, 6)
    assert dense and np.shares_memory(values, X)       # already Fortran float64: no copy
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    data = prepare(X, y, fit_intercept=True)
    _, kernel, pen, _ = composite_problem(LogLoss(lam=0.0), L1(0.01), data)
    w = np.zeros(7)
    glmnet_run(kernel, pen, indptr, indices, values, np.arange(50, dtype=np.intp), w,
               np.zeros(50), 5, 1e-8, dense_columns=True)
    assert np.array_equal(X, X0) and np.count_nonzero(w) > 0
    bad = indptr.copy()
    bad[2] += 1
    with pytest.raises(ValueError, match="Fortran order"):
        glmnet_run(kernel, pen, bad, indices, values, np.arange(50, dtype=np.intp),
                   np.zeros(7), np.zeros(50), 5, 1e-8, dense_columns=True)
    with pytest.raises(ValueError, match="must match"):
        glmnet_run(kernel, pen, indptr, np.zeros(300, dtype=np.intp), values,
                   np.arange(50, dtype=np.intp), np.zeros(7), np.zeros(50), 5, 1e-8,
                   dense_columns=True)
    with pytest.raises(ValueError, match="features"):
        _columns(X, 5)


def test_exact_models_are_formed_only_where_forming_them_is_cheap() -> None:
    """The exact model's Hessian is formed from the rows at every outer iteration, one
    multiply-add per pair of a row's entries: on dense rows of many features that costs
    ``n / 2`` sweeps, so the whole model is left to coordinate descent there (it was chosen
    by its factorisation's cost alone: a 5000 x 1000 dense lasso formed 2.5e9 pairs per
    outer iteration) and the working set's is capped by the rows' density; formed by BLAS
    (dense rows), a pair costs an eighth, which a few hundred features afford; sparse rows (a
    few entries each, as in a9a) keep the whole model, wide sparse data its working set's."""
    import scipy.sparse as sp_

    from sqnopt.composite._solve import (DENSE_MODEL_MAX, FORM_PASSES, MODEL_PASSES,
                                         _affordable, _pair_work, dense_model, subset_model)

    N, n = 5000, 1000
    X = np.ones((N, n))
    nnz, pairs = N * (n + 1), _pair_work(X, True)
    assert pairs == N * (n + 1) * (n + 2) / 2
    assert n + 1 <= min(DENSE_MODEL_MAX, _affordable(nnz))      # the factorisation: cheap
    assert pairs > FORM_PASSES * nnz and not dense_model(n + 1, "auto", nnz, pairs)
    cap = subset_model(n + 1, "auto", nnz, pairs, N)
    assert 0 < cap < DENSE_MODEL_MAX
    assert N * cap ** 2 / 2 <= FORM_PASSES * nnz < N * (cap + 1) ** 2 / 2 * 1.01
    assert dense_model(n + 1, "dense", nnz, pairs)               # asked for: still formed
    assert not dense_model(n + 1, "auto", nnz, pairs, blas=True)  # n / 2 / 8 > 16 sweeps
    # a few hundred dense features: the pair loop would cost n / 2 = 100 sweeps, BLAS ~12
    X2 = np.ones((20000, 200))
    nnz2, pairs2 = X2.size, _pair_work(X2, False)
    assert not dense_model(200, "auto", nnz2, pairs2)
    assert dense_model(200, "auto", nnz2, pairs2, blas=True)
    assert subset_model(200, "auto", nnz2, pairs2, 20000, blas=True) == 0
    rng = np.random.default_rng(0)
    S = sp_.random(20000, 120, density=0.1, format="csr", random_state=rng)
    m = np.diff(S.indptr).astype(float)
    assert _pair_work(S, False) == pytest.approx(float(np.sum(m * (m + 1) / 2)))
    assert _pair_work(S.tocsc(), False) == pytest.approx(_pair_work(S, False))
    assert dense_model(120, "auto", S.nnz, _pair_work(S, False))
    wide = sp_.random(10000, 50000, density=0.001, format="csr", random_state=rng)
    assert subset_model(50001, "auto", wide.nnz, _pair_work(wide, True), 10000) == \
        min(DENSE_MODEL_MAX, int((3.0 * MODEL_PASSES * wide.nnz) ** (1 / 3)))


def test_model_solve_names_are_checked() -> None:
    from sqnopt.composite._solve import dense_model

    with pytest.raises(ValueError, match="unknown model solve"):
        dense_model(10, "exact")  # type: ignore[arg-type]


@pytest.mark.parametrize("loss", ["huber", "poisson", "squared_error"])
@pytest.mark.parametrize("model", ["dense", "cd"])
def test_regression_losses_with_l1_reach_a_zero_pseudo_gradient(loss: str, model: str) -> None:
    """The regression losses under L1 by both model solves: Huber's second derivative
    vanishes outside its quadratic zone (a singular model Hessian, which the dense model's
    damping keeps solvable), Poisson's grows with the score; both methods reach the same
    optimum with the same zeros."""
    from sqnopt.objectives import Huber, Poisson, SquaredError

    rng = np.random.default_rng(11)
    X = rng.normal(size=(400, 12))
    w = np.where(np.arange(12) < 4, 0.5, 0.0)
    s = X @ w
    if loss == "poisson":
        y = rng.poisson(np.exp(s)).astype(np.float64)
        obj: Any = Poisson(lam=0.0)
    else:
        y = s + rng.standard_t(2, size=400)       # heavy tails: rows outside Huber's zone
        obj = Huber(lam=0.0) if loss == "huber" else SquaredError(lam=0.0)
    data = prepare(X, y, fit_intercept=True, label_kind="regression")
    _, kernel, pen, _ = composite_problem(obj, L1(0.02), data)
    w_, k, status, f, gmax, *_ = newglmnet(kernel, pen, X, tol=1e-9, max_iter=200,
                                           model=model)  # type: ignore[arg-type]
    assert status in ("gtol", "precision") and gmax <= 1e-7    # precision: F's last bits
    ref = solve_composite(obj, L1(0.02), X, y, method="owlqn", tol=1e-9, max_iter=5000)
    assert f == pytest.approx(ref.fun, rel=1e-9)
    np.testing.assert_array_equal(w_[:12] == 0.0, ref.coef[0] == 0.0)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_composite_solves_are_the_same_bits_on_every_thread_count(
        method: str, fit_intercept: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """``n_jobs`` reaches the passes (the prepared rows' thread count) and changes nothing in
    the result: 1, 2 and 4 threads (more than this machine's cores) give the same iterates,
    on a problem whose passes split into blocks -- newGLMNET's curvature pass over the rows
    and gradient over the columns, OWL-QN's loss and gradient -- and on its estimator."""
    import sqnopt.data
    from sqnopt import SQNClassifier
    from sqnopt._parallel import plan

    rng = np.random.default_rng(11)
    N, d = 10_000, 400
    X = sp.random(N, d, density=0.05, format="csr", random_state=rng)
    y = np.where(X @ np.where(rng.random(d) < 0.1, rng.normal(size=d), 0.0)
                 + 0.1 * rng.normal(size=N) > 0, 1.0, -1.0)
    assert plan(N, 16) > 1 and plan(d, 2 * X.nnz / d + 1) > 1    # the passes split
    prepared: list[Any] = []
    prepare = sqnopt.data.prepare

    def spy(*args: Any, **kwargs: Any) -> Any:
        data = prepare(*args, **kwargs)
        prepared.append(data.rows)
        return data

    monkeypatch.setattr(sqnopt.data, "prepare", spy)
    results = [solve_composite(LogLoss(lam=0.0), L1(3e-3), X, y, method=method,
                               fit_intercept=fit_intercept, tol=1e-9, n_jobs=k)
               for k in (1, 2, 4)]
    assert [rows.n_threads for rows in prepared] == [1, 2, 4]
    for r in results[1:]:
        assert np.array_equal(r.w, results[0].w)
        assert (r.n_iter, r.fun, r.n_evaluations) == (results[0].n_iter, results[0].fun,
                                                      results[0].n_evaluations)
    assert results[0].converged and 0 < results[0].nnz < d
    coefs = [SQNClassifier(penalty="l1", alpha=3e-3, curvature=method, n_jobs=k,
                           fit_intercept=fit_intercept).fit(X, y).coef_ for k in (1, 2)]
    assert np.array_equal(coefs[0], coefs[1])
    with pytest.raises(ValueError, match="n_jobs=0"):
        solve_composite(LogLoss(lam=0.0), L1(3e-3), X, y, method=method, n_jobs=0)


def _regression(n: int = 200, d: int = 30, seed: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """Correlated dense features (a shared factor) and a sparse linear target with noise."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) + 0.6 * rng.normal(size=(n, 1))
    X *= rng.uniform(0.3, 3.0, size=d)
    t = X @ np.where(rng.random(d) < 0.3, rng.normal(size=d), 0.0) + 0.3 * rng.normal(size=n)
    return X, t + 1.5


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("l1_ratio", [1.0, 0.4])
def test_gram_solves_match_the_rows_solve_and_scikit_learn(l1_ratio: float, fit_intercept: bool,
                                                           weighted: bool) -> None:
    """With a cache and ``gram=True`` a least-squares solve on dense rows runs on the Gram
    matrix (formed once into the cache): the same minimiser as newGLMNET on the rows and as
    ``Lasso`` / ``ElasticNet``, the same ``F`` (the matrix's value of the objective against the
    kernel's), and a second solve on the cache forms nothing again."""
    from sqnopt.composite import Gram

    X, t = _regression()
    sw = np.random.default_rng(9).uniform(0.2, 3.0, size=t.shape[0]) if weighted else None
    alpha = 0.02
    pen = L1(alpha) if l1_ratio == 1.0 else ElasticNet(alpha, l1_ratio)
    cache: dict[str, Any] = {}
    kw: dict[str, Any] = dict(fit_intercept=fit_intercept, sample_weight=sw, tol=1e-12,
                              max_iter=5000)
    res = solve_composite(("squared_error", {"lam": 0.0}), pen, X, t, column_cache=cache,
                          gram=True, **kw)
    gram = cache.get("gram")
    assert isinstance(gram, Gram) and "columns" not in cache     # no pass over the rows
    rows = solve_composite(("squared_error", {"lam": 0.0}), pen, X, t, **kw)
    assert res.converged and rows.converged and res.method == "newglmnet"
    np.testing.assert_allclose(res.coef, rows.coef, atol=1e-9)
    np.testing.assert_allclose(res.intercept, rows.intercept, atol=1e-9)
    assert res.fun == pytest.approx(rows.fun, rel=1e-12)
    Model = Lasso if l1_ratio == 1.0 else SkElasticNet
    extra = {} if l1_ratio == 1.0 else {"l1_ratio": l1_ratio}
    ref = Model(alpha=alpha, fit_intercept=fit_intercept, tol=1e-14, max_iter=100_000,
                **extra).fit(X, t, sample_weight=sw)
    np.testing.assert_allclose(res.coef[0], ref.coef_, atol=1e-7)
    np.testing.assert_array_equal(res.coef[0] != 0.0, ref.coef_ != 0.0)
    kw["tol"] = 1e-8
    again = solve_composite(("squared_error", {"lam": 0.0}), pen, X, t, column_cache=cache,
                            gram=True, w0=res.w, **kw)
    assert cache["gram"] is gram and again.n_iter == 0 and again.status == "gtol"


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("penalty", [L1(0.05), ElasticNet(0.08, 0.5)], ids=repr)
def test_gram_loop_matches_numpy_twin_iterate_by_iterate(penalty: Any,
                                                         fit_intercept: bool) -> None:
    """``gram_newglmnet`` (the compiled exact model of ``QuadraticModel``) against
    ``gram_glmnet_numpy`` (dense sweeps and feature-sign search in NumPy) after each number of
    outer iterations, from a start away from the minimiser: the first model's minimiser (the
    quadratic's, up to the damping) to rounding -- after it the decrease is at working
    precision, where the two take equally good points -- and ``F`` at every budget; the
    loop's values decrease."""
    from sqnopt.composite import form_gram, gram_newglmnet
    from sqnopt.composite.reference import gram_glmnet_numpy

    X, t = _regression(seed=8)
    data = prepare(X, t, fit_intercept=fit_intercept, label_kind="regression")
    from sqnopt import SquaredError

    _, kernel, pen, problem = composite_problem(SquaredError(lam=0.0), penalty, data)
    gram = form_gram(data)
    n, nf = problem.n_params, problem.n_features
    w0 = np.random.default_rng(2).normal(size=n)
    lam, l1 = float(kernel.lam), float(pen.l1)
    for k in range(4):
        out = gram_newglmnet(gram, lam, pen, w0, tol=0.0, max_iter=k)
        assert out is not None
        w, _, _, f, _, _, trace = out
        tw, values, _, _ = gram_glmnet_numpy(gram.H, gram.c, gram.yy, lam, l1, nf, w0,
                                             tol=0.0, max_iter=k)
        if k <= 1:
            np.testing.assert_allclose(w, tw, rtol=1e-9, atol=1e-10, err_msg=f"after {k}")
            np.testing.assert_array_equal(w == 0.0, tw == 0.0)
            np.testing.assert_allclose(trace, values, rtol=1e-12)
        else:
            np.testing.assert_allclose(w, tw, atol=1e-7, err_msg=f"after {k}")
            assert f == pytest.approx(values[-1], rel=1e-12)
        assert f == pytest.approx(float(kernel.value(w)) + l1 * np.abs(w[:nf]).sum(),
                                  rel=1e-12)
    assert np.all(np.diff(trace) <= 0.0)


def test_gram_is_formed_for_a_quadratic_on_dense_rows_outnumbering_parameters() -> None:
    X, t = _regression()
    sq = ("squared_error", {"lam": 0.0})
    cases: list[tuple[Any, Any, Any, bool]] = [
        (sq, X, t, True),                                    # least squares, dense, N >= n
        (sq, sp.csr_matrix(X), t, False),                    # sparse rows
        (sq, X[:20], t[:20], False),                         # fewer rows than parameters
        (("huber", {"lam": 0.0}), X, t, False),              # not quadratic
    ]
    for objective, Xc, tc, formed in cases:
        cache: dict[str, Any] = {}
        solve_composite(objective, L1(0.05), Xc, tc, column_cache=cache, gram=True)
        assert ("gram" in cache) is formed, objective
    cache = {}
    solve_composite(sq, L1(0.05), X, t, column_cache=cache)   # gram=False: a single fit's
    assert "gram" not in cache
    # targets whose squares overflow (the data layer checks them finite only): the matrix's
    # value of F is not finite, and the solve runs on the rows instead
    cache = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        solve_composite(sq, L1(0.05), X, t * 1e160, column_cache=cache, gram=True)
    assert not cache["gram"].finite and "columns" in cache


def test_quadratic_model_checks_its_arguments() -> None:
    from sqnopt.composite._glmnet import QuadraticModel

    with pytest.raises(ValueError, match="at least one"):
        QuadraticModel(0)
    model = QuadraticModel(3)
    H, v = np.eye(3), np.zeros(3)
    with pytest.raises(ValueError, match="3 x 3"):
        model.solve(np.eye(2), v, v, np.zeros(3), 3, 0.1, 0.0, 1e-9)
    with pytest.raises(ValueError, match="nf <= n"):
        model.solve(H, v, v, np.zeros(3), 4, 0.1, 0.0, 1e-9)
    u = np.zeros(3)
    code, _ = model.solve(H, np.array([-1.0, 0.05, 2.0]), v, u, 3, 0.1, 0.0, 0.0)
    assert code == 0
    np.testing.assert_allclose(u, [0.9, 0.0, -1.9], rtol=1e-7)
    np.testing.assert_array_equal(np.diag(H), 1.0)            # the diagonal restored
