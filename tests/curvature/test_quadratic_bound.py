"""QuadraticBound (SQB): inner solvers, composition with the driver (independent curvature
batches, effective passes), compiled vs Python path vs NumPy twins, and errors."""

from __future__ import annotations

import numpy as np
import pytest

from sqnopt import (
    BinaryLogistic,
    Constant,
    Fixed,
    Full,
    IncompatibleComponentsError,
    Linear,
    LogLoss,
    QuadraticBound,
    Softmax,
    Solver,
    get_registry,
)
from sqnopt.curvature import QuadraticBoundKernel
from sqnopt.curvature.reference import QuadraticBoundNumPy, cg_numpy, lsqr_numpy
from sqnopt.data import prepare
from sqnopt.interfaces import Problem
from sqnopt.objectives.reference import BinaryLogisticNumPy, SoftmaxNumPy
from sqnopt.interfaces import BATCH_OBSERVED
from tests.conftest import as_format


def _data(n: int = 60, p: int = 5, K: int = 3, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    W = rng.normal(size=(K, p)) * 2
    y = np.argmax(X @ W.T + rng.gumbel(size=(n, K)), axis=1)
    return X, y


def _softmax_kernel(X, y, lam=0.05, fit_intercept=False):
    return Softmax(lam=lam).init(prepare(X, y, label_kind="multiclass",
                                         fit_intercept=fit_intercept))


def _observed(method: str, iters: int, eta: float = 0.05, seed: int = 0):
    X, y = _data(seed=seed)
    k = _softmax_kernel(X, y)
    rng = np.random.default_rng(seed + 1)
    w = rng.normal(size=k.n_params)
    batch = rng.integers(0, X.shape[0], size=7).astype(np.intp)
    c = QuadraticBoundKernel(k.n_params, eta, iters, 0.0, method)
    assert c.observe_batch(k, w, batch) == BATCH_OBSERVED
    A = k.bound_matrix(w, batch) + eta * np.eye(k.n_params)
    return c, A, rng.normal(size=k.n_params)


def _krylov(M: np.ndarray, v: np.ndarray, m: int) -> np.ndarray:
    Q = [v / np.linalg.norm(v)]
    for _ in range(m - 1):
        u = M @ Q[-1]
        for q in Q:
            u -= (q @ u) * q
        for q in Q:
            u -= (q @ u) * q
        Q.append(u / np.linalg.norm(u))
    return np.array(Q).T


@pytest.mark.parametrize("iters", [1, 2, 4])
def test_lsqr_iterate_minimises_the_residual_over_its_krylov_space(iters):
    c, A, g = _observed("lsqr", iters)
    d = c.matvec(g)
    Q = _krylov(A @ A, A @ g, iters)                     # LSQR: d in K_l(A'A, A'g)
    coef, *_ = np.linalg.lstsq(A @ Q, g, rcond=None)
    np.testing.assert_allclose(d, Q @ coef, rtol=1e-8, atol=1e-10)
    assert c.last_inner_iterations == iters


@pytest.mark.parametrize("iters", [1, 2, 4])
def test_cg_iterate_minimises_the_energy_norm_over_its_krylov_space(iters):
    c, A, g = _observed("cg", iters)
    d = c.matvec(g)
    Q = _krylov(A, g, iters)
    coef = np.linalg.solve(Q.T @ A @ Q, Q.T @ g)         # CG: Galerkin condition on K_l(A, g)
    np.testing.assert_allclose(d, Q @ coef, rtol=1e-8, atol=1e-10)


def test_exact_solve_and_converged_krylov_solvers_agree():
    c, A, g = _observed("exact", 1)
    exact = np.linalg.solve(A, g)
    np.testing.assert_allclose(c.matvec(g), exact, rtol=1e-10)
    for method in ("cg", "lsqr"):
        k, A2, g2 = _observed(method, 200)
        np.testing.assert_allclose(k.matvec(g2), np.linalg.solve(A2, g2), rtol=1e-7)
    # tol stops early
    k, _, g2 = _observed("cg", 200)
    k2 = QuadraticBoundKernel(k.dim, 0.05, 200, 1e-3, "cg")
    X, y = _data()
    kern = _softmax_kernel(X, y)
    k2.observe_batch(kern, np.zeros(kern.n_params), np.arange(7, dtype=np.intp))
    k2.matvec(g2)
    assert 1 <= k2.last_inner_iterations < 200


def test_numpy_solvers_match_compiled_solvers():
    for method, solve in (("lsqr", lsqr_numpy), ("cg", cg_numpy)):
        c, A, g = _observed(method, 5)
        d_ref, it = solve(lambda v: A @ v, g, 5)
        np.testing.assert_allclose(c.matvec(g), d_ref, rtol=1e-10, atol=1e-13)
        assert it == c.last_inner_iterations == 5


def test_direction_before_any_batch_is_g_over_eta():
    c = QuadraticBoundKernel(4, 0.5, 3, 0.0, "cg")
    g = np.array([1.0, -2.0, 0.5, 0.0])
    np.testing.assert_allclose(c.matvec(g), g / 0.5)


def test_component_validation_and_defaults():
    prob = Problem(n_samples=200, n_features=3, dim=3, n_blocks=2, n_params=6, lam=0.0,
                   fit_intercept=False, capabilities=frozenset())
    assert QuadraticBound().init(prob).eta == pytest.approx(1 / 200)        # 1/N
    assert QuadraticBound().init(
        Problem(**{**prob.__dict__, "lam": 0.01})).eta == pytest.approx(0.01)  # eta = lam
    assert QuadraticBound(eta=0.3).init(prob).eta == 0.3
    k = QuadraticBound(solver="cg", inner_iter=7).init(prob)
    assert k.needs_curvature_batch and not k.needs_secant_pair
    assert k.method_name == "cg" and k.inner_iter == 7
    with pytest.raises(ValueError, match="max_exact_dim"):
        QuadraticBound(solver="exact", max_exact_dim=5).init(prob)
    for bad in ({"inner_iter": 0}, {"eta": 0.0}, {"solver": "qr"}, {"tol": -1.0}):
        with pytest.raises(ValueError):
            QuadraticBound(**bad)
    reg = get_registry()
    assert isinstance(reg.create("curvature", "sqb"), QuadraticBound)
    assert isinstance(reg.create("curvature", "quadratic_bound", inner_iter=3), QuadraticBound)


def test_requires_an_objective_with_the_bound():
    with pytest.raises(IncompatibleComponentsError, match="quadratic_bound"):
        Solver(LogLoss(), QuadraticBound())
    Solver(BinaryLogistic(), QuadraticBound())          # fine
    Solver("softmax", "sqb")                            # by name
    X, y = _data()
    c = QuadraticBound().init(Problem(60, 5, 5, 3, 15, 0.1, False, frozenset()))
    margin = LogLoss().init(prepare(X, np.where(y == 0, -1, 1)))
    with pytest.raises(TypeError, match="BoundObjectiveKernel"):
        c.observe_batch(margin, np.zeros(15), np.arange(3, dtype=np.intp))


def _sqb(objective, curvature, **kw):
    # Tiny batches and the constant step 1: on these 60 samples some runs overshoot (the
    # objective rises to 20x its start), which the divergence monitor would stop; these tests
    # compare the arithmetic of the paths, so the monitor is off.
    defaults = dict(schedule=Linear(2, 1.5), step=Constant(1.0),
                    curvature_schedule=Linear(3, 0.5, cap=10), random_state=3, monitor=None)
    defaults.update(kw)
    return Solver(objective, curvature, defaults.pop("schedule"), defaults.pop("step"),
                  **defaults)


def test_driver_draws_independent_curvature_batches_and_counts_effective_passes():
    X, y = _data()
    seen: list[np.ndarray] = []
    solver = _sqb(Softmax(lam=0.02), QuadraticBound(inner_iter=3), max_iter=12,
                  history_every=3, report_every=1,
                  callback=lambda info: seen.append(state.curvature.batch.copy()))
    state = solver.init_state(X, y)
    res = solver.run(state)
    sizes = [len(b) for b in seen]
    assert sizes == [min(10, 3 + round(0.5 * k)) for k in range(12)]      # curvature schedule
    assert res.n_samples == sum(min(60, 2 + round(1.5 * k)) for k in range(12))
    assert res.n_curvature_samples == sum(sizes)
    assert res.effective_passes == pytest.approx((res.n_samples + sum(sizes)) / 60)
    h = res.history
    np.testing.assert_allclose(h.effective_passes, (h.samples + np.array(
        [sum(sizes[:t]) for t in h.iteration])) / 60)
    # with an injected order the first draw is the gradient batch, the second the curvature one
    seq = np.arange(60, dtype=np.intp)
    seen.clear()
    solver = _sqb(Softmax(lam=0.02), QuadraticBound(inner_iter=3), max_iter=2,
                  batch_sequence=np.concatenate([seq, seq]), report_every=1,
                  callback=lambda info: seen.append(state.curvature.batch.copy()))
    state = solver.init_state(X, y)
    solver.run(state)
    np.testing.assert_array_equal(seen[0], np.arange(2, 5))               # after T = [0, 1]
    np.testing.assert_array_equal(seen[1], np.arange(9, 12))              # after T = [5..8]


@pytest.mark.parametrize("fmt,dtype", [("dense", np.float64), ("csr", np.float32)])
@pytest.mark.parametrize("method", ["lsqr", "cg", "exact"])
def test_compiled_and_python_paths_give_identical_iterates(fmt, dtype, method):
    X, y = _data()
    Xf = as_format(X, fmt, dtype)
    runs = []
    for path in ("compiled", "python"):
        iterates: list[np.ndarray] = []
        solver = _sqb(Softmax(lam=0.02), QuadraticBound(inner_iter=4, solver=method),
                      max_iter=15, report_every=1, path=path, fit_intercept=True,
                      callback=lambda info: iterates.append(info.w.copy()))
        res = solver.fit(Xf, y)
        assert res.compiled == (path == "compiled")
        runs.append(np.array(iterates))
    np.testing.assert_array_equal(runs[0], runs[1])


@pytest.mark.parametrize("method", ["lsqr", "cg", "exact"])
def test_compiled_sqb_matches_numpy_twins_iterate_by_iterate(method):
    X, y = _data(n=40)
    rng = np.random.default_rng(7)
    seq = rng.integers(0, 40, size=4000).astype(np.intp)
    runs = []
    for obj, curv in ((Softmax(lam=0.02), QuadraticBound(inner_iter=4, solver=method)),
                      (SoftmaxNumPy(lam=0.02), QuadraticBoundNumPy(inner_iter=4, solver=method))):
        iterates: list[np.ndarray] = []
        _sqb(obj, curv, max_iter=12, batch_sequence=seq, report_every=1,
             callback=lambda info: iterates.append(info.w.copy())).fit(X, y)
        runs.append(np.array(iterates))
    np.testing.assert_allclose(runs[0], runs[1], rtol=1e-8, atol=1e-10)
    # binary logistic too (compiled objective + NumPy curvature twin, and both twins)
    yb = np.where(y == 0, -1, 1)
    runs = []
    for obj, curv in ((BinaryLogistic(lam=0.02), QuadraticBound(inner_iter=4, solver=method)),
                      (BinaryLogistic(lam=0.02), QuadraticBoundNumPy(inner_iter=4, solver=method)),
                      (BinaryLogisticNumPy(lam=0.02),
                       QuadraticBoundNumPy(inner_iter=4, solver=method))):
        iterates = []
        _sqb(obj, curv, max_iter=12, batch_sequence=seq, report_every=1,
             callback=lambda info: iterates.append(info.w.copy())).fit(X, yb)
        runs.append(np.array(iterates))
    np.testing.assert_allclose(runs[0], runs[1], rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(runs[0], runs[2], rtol=1e-8, atol=1e-10)


def test_full_batch_bound_iteration_is_monotone_majorisation_minimisation():
    """With T = S = every sample and an exact solve, each step minimises a majoriser of F
    (Jebara & Choromanska 2012), so F decreases monotonically to its minimum."""
    from scipy.optimize import minimize

    X, y = _data(n=80)
    k = _softmax_kernel(X, y, lam=0.01)
    c = QuadraticBoundKernel(k.n_params, 0.01, 1, 0.0, "exact")
    allb = np.arange(80, dtype=np.intp)
    w = np.zeros(k.n_params)
    g, d = np.zeros_like(w), np.zeros_like(w)
    values = []
    for _ in range(60):
        values.append(k.gradient(w, allb, g))
        c.observe_batch(k, w, allb)
        c.direction(g, d)
        w = w - d
    values.append(k.value(w))
    assert np.all(np.diff(values) <= 1e-15)

    def fg(v):
        gg = np.zeros_like(v)
        return k.full_gradient(v, gg), gg

    fstar = minimize(fg, np.zeros(k.n_params), jac=True, method="L-BFGS-B",
                     options={"gtol": 1e-12, "ftol": 1e-15}).fun
    assert values[-1] - fstar <= 1e-6 * fstar


def test_sqb_solves_a_small_problem_with_growing_batches():
    X, y = _data(n=300, seed=5)
    res = Solver(Softmax(lam=1 / 300), QuadraticBound(inner_iter=10, solver="cg"),
                 Linear(10, 20.0), Constant(1.0), curvature_schedule=Fixed(100),
                 sampling="subset", max_epochs=30, random_state=0).fit(X, y)
    k = _softmax_kernel(X, y, lam=1 / 300)
    from scipy.optimize import minimize

    fstar = minimize(lambda v: (k.full_gradient(v, g := np.zeros_like(v)), g), np.zeros(15),
                     jac=True, method="L-BFGS-B", options={"gtol": 1e-12}).fun
    assert (res.fun - fstar) / fstar < 1e-3


def test_other_curvature_models_run_on_softmax_through_the_generic_driver():
    X, y = _data()
    for path in ("compiled", "python"):
        res = Solver(Softmax(lam=0.01), "identity", Fixed(5), Constant(0.2), average=True,
                     max_epochs=20, random_state=0, path=path).fit(X, y)
        assert res.fun < np.log(3)


def test_full_schedule_sqb_on_binary_logistic_reaches_optimum():
    X, y = _data(n=200, seed=2)
    yb = np.where(y == 0, -1, 1)
    res = Solver(BinaryLogistic(lam=0.01), QuadraticBound(solver="exact"), Full(), Constant(1.0),
                 curvature_schedule=Full(), sampling="subset", max_iter=40,
                 random_state=0).fit(X, yb)
    k = BinaryLogistic(lam=0.01).init(prepare(X, yb))
    g = np.zeros(5)
    k.full_gradient(res.w, g)
    assert np.linalg.norm(g) < 1e-6


def test_subset_sampler_draws_distinct_indices_and_full_batches_are_the_data_set():
    from sqnopt.solver._sampler import SubsetSampler

    s = SubsetSampler(50, np.random.PCG64(0))
    for size in (1, 7, 50, 50, 13):
        b = s.draw(size)
        assert len(set(b.tolist())) == size and b.min() >= 0 and b.max() < 50
    state = s.bit_generator.state
    np.testing.assert_array_equal(s.draw(50), np.arange(50))   # N: the data set, in order,
    np.testing.assert_array_equal(s.draw(51), np.arange(50))   # (more: the same)
    assert s.bit_generator.state == state                      # with no random draw
    counts = np.bincount(np.concatenate([s.draw(5) for _ in range(4000)]), minlength=50)
    assert counts.min() > 300 and counts.max() < 500         # uniform (mean 400)
    with pytest.raises(ValueError, match="subset"):
        Solver(sampling="sub")


def test_sqb_runs_on_the_general_loglinear_model_like_on_softmax():
    from sqnopt import LogLinear
    from sqnopt.objectives import softmax_joint_features

    X, y = _data(n=50)
    seq = np.random.default_rng(0).integers(0, 50, size=3000).astype(np.intp)
    runs = []
    for obj, data in ((Softmax(lam=0.02), X), (LogLinear(n_outputs=3, lam=0.02),
                                               softmax_joint_features(X, 3))):
        its: list[np.ndarray] = []
        _sqb(obj, QuadraticBound(inner_iter=3, solver="cg"), max_iter=8, batch_sequence=seq,
             report_every=1, callback=lambda info: its.append(info.w.copy())).fit(data, y)
        runs.append(np.array(its))
    np.testing.assert_allclose(runs[0], runs[1], rtol=1e-9, atol=1e-12)


def _sparse_softmax(n: int = 50, p: int = 120, K: int = 3, density: float = 0.03,
                    fit_intercept: bool = False, seed: int = 4, dtype: type = np.float64):
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    X = sp.random(n, p, density=density, random_state=seed, format="csr", dtype=dtype)
    X.data = (rng.normal(size=X.nnz) * 2).astype(dtype)
    y = np.arange(n) % K
    return X, y, _softmax_kernel(X, y, lam=0.01, fit_intercept=fit_intercept)


@pytest.mark.parametrize("fit_intercept,dtype", [(False, np.float64), (True, np.float64),
                                                 (True, np.float32)])
@pytest.mark.parametrize("method", ["cg", "lsqr"])
@pytest.mark.parametrize("iters", [1, 3, 6])
def test_compact_solve_equals_the_full_solve(method, iters, fit_intercept, dtype):
    # On sparse softmax the solver runs on the coordinates the curvature batch touches and
    # carries the rest (where A = eta I) as one multiple of the gradient: the same Krylov
    # iterates as the solve on all coordinates, to rounding -- and the NumPy solvers agree.
    # (Fewer iterations than the distinct eigenvalues of A: an exhausted Krylov space makes
    # LSQR's last iterates rounding noise in any coordinates.)
    X, y, k = _sparse_softmax(fit_intercept=fit_intercept, dtype=dtype)
    rng = np.random.default_rng(iters)
    w = rng.normal(size=k.n_params)
    batch = np.array([1, 7, 7, 20, 33, 3, 4, 11, 12, 13, 14, 15], dtype=np.intp)
    eta = 0.01
    A = k.bound_matrix(w, batch) + eta * np.eye(k.n_params)
    compact = QuadraticBoundKernel(k.n_params, eta, iters, 0.0, method)
    full = QuadraticBoundKernel(k.n_params, eta, iters, 0.0, method)
    full._set_compact(False)
    compact.observe_batch(k, w, batch)
    full.observe_batch(k, w, batch)
    assert full.solve_size == k.n_params
    assert 0 < compact.solve_size < k.n_params / 4      # the batch touches few features
    solve = cg_numpy if method == "cg" else lsqr_numpy
    for scale_off in (1.0, 0.0, 1e6):   # gradient off the support: generic, none, dominant
        g = rng.normal(size=k.n_params)
        off = np.setdiff1d(np.arange(k.n_params), k.bound_support(batch))
        g[off] *= scale_off
        d = compact.matvec(g)
        np.testing.assert_allclose(d, full.matvec(g), rtol=1e-10, atol=1e-12 * np.abs(d).max())
        d_ref, it = solve(lambda v: A @ v, g, iters)
        np.testing.assert_allclose(d, d_ref, rtol=1e-9, atol=1e-11 * np.abs(d).max())
        assert compact.last_inner_iterations == full.last_inner_iterations == it
    # a new batch re-maps the support (other features), still equal to the full solve
    batch2 = np.array([0, 2, 40, 41, 42, 43], dtype=np.intp)
    compact.observe_batch(k, w, batch2)
    full.observe_batch(k, w, batch2)
    g = rng.normal(size=k.n_params)
    np.testing.assert_allclose(compact.matvec(g), full.matvec(g), rtol=1e-10, atol=1e-12)


def test_compiled_sqb_on_sparse_softmax_matches_numpy_twins_iterate_by_iterate():
    # the compact solve inside the driver (sparse rows, small curvature batches) vs the NumPy
    # twins of the objective and the curvature model under the same injected batch order
    X, y, _ = _sparse_softmax(n=60, p=150, density=0.04)
    seq = np.random.default_rng(9).integers(0, 60, size=4000).astype(np.intp)
    for method in ("cg", "lsqr"):
        runs = []
        for obj, curv in ((Softmax(lam=0.02), QuadraticBound(inner_iter=3, solver=method)),
                          (SoftmaxNumPy(lam=0.02),
                           QuadraticBoundNumPy(inner_iter=3, solver=method))):
            iterates: list[np.ndarray] = []
            solver = _sqb(obj, curv, max_iter=12, batch_sequence=seq, report_every=1,
                          curvature_schedule=Linear(10, 0.5, cap=16),
                          callback=lambda info: iterates.append(info.w.copy()))
            state = solver.init_state(X, y)
            solver.run(state)
            if isinstance(curv, QuadraticBound):     # the compiled run solved compactly
                assert 0 < state.curvature.solve_size < state.curvature.dim
            runs.append(np.array(iterates))
        np.testing.assert_allclose(runs[0], runs[1], rtol=1e-8, atol=1e-10)
