"""L-BFGS preconditioned by Böhning's bound (:class:`sqnopt.BoundLBFGS`).

The bound's factor against the dense formula, the two-loop recursion against the product form
from ``gamma M^{-1}``, the compiled kernel against its NumPy twin iterate by iterate (dense and
sparse rows, an intercept, softmax and logistic), linear convergence of the full-batch method,
the options' validation, the memory accounting and the recipe's choice.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt import (
    LBFGS,
    Armijo,
    BoundLBFGS,
    Constant,
    Fixed,
    Full,
    LogLoss,
    Softmax,
    Solver,
    SquaredHinge,
)
from sqnopt.curvature import BoundLBFGSKernel
from sqnopt.curvature.reference import BoundLBFGSNumPy
from sqnopt.data import prepare
from sqnopt.interfaces import PAIR_ACCEPTED, Problem
from sqnopt.recipes import BOUND_MAX_DIM, BOUND_PASSES, bound_cost_passes, default_curvature


def _classes(n: int, p: int, k: int, seed: int, shift: float = 2.0) -> tuple[np.ndarray, np.ndarray]:
    """``k`` Gaussian classes, features shifted away from 0 (uncentred) and correlated."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % k
    mix = rng.normal(size=(p, p)) / np.sqrt(p) + np.eye(p)
    X = (rng.normal(size=(k, p))[y] + rng.normal(size=(n, p))) @ mix + shift
    return X, y


def _bound_matrix(X: np.ndarray, c: float, lam: float, weights: np.ndarray | None,
                  intercept: bool) -> np.ndarray:
    rows = np.hstack([X, np.ones((X.shape[0], 1))]) if intercept else X
    s = np.ones(X.shape[0]) if weights is None else weights / weights.mean()
    M = c * (rows.T * s) @ rows / s.sum()
    M[np.arange(X.shape[1]), np.arange(X.shape[1])] += lam
    return M


@pytest.mark.parametrize("sparse", [None, 0.0, 4.0], ids=["dense", "sparse-dsyrk",
                                                          "sparse-pairs"])
@pytest.mark.parametrize("intercept", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_bound_factor_and_solve_match_the_dense_formula(sparse: float | None, intercept: bool,
                                                        dtype: type) -> None:
    """More rows than one dsyrk block (256), weights, every storage; sparse rows with most of
    their entries (the dense product) or a few (the pairs of each row's entries)."""
    X, y = _classes(700, 9, 3, seed=1)
    X[X < (2.0 if sparse is None else sparse)] = 0.0     # zeros for the sparse forms
    w = np.random.default_rng(3).uniform(0.5, 2.0, size=700)
    Xin = sp.csr_matrix(X.astype(dtype)) if sparse else X.astype(dtype)
    obj = Softmax(lam=1e-2)
    data = prepare(Xin, y, sample_weight=w, fit_intercept=intercept, label_kind=obj.label_kind)
    ok = obj.init(data)
    dim = 10 if intercept else 9
    k = BoundLBFGSKernel(dim, 3, 0.5, memory=4)
    k.bind(ok)
    M = _bound_matrix(X.astype(dtype).astype(np.float64), 0.5, 1e-2, w, intercept)
    np.testing.assert_allclose(k.factor() @ k.factor().T, M, rtol=1e-10, atol=1e-12)
    g = np.random.default_rng(0).normal(size=3 * dim)
    want = np.linalg.solve(M, g.reshape(3, dim).T).T.ravel()
    np.testing.assert_allclose(k.precondition(g), want, rtol=1e-9)
    assert k.has_bound and k.n_rows == 700
    m = np.count_nonzero(X, axis=1)
    assert k.sparse_pairs == (sparse is not None and 4 * np.sum(m * m) <= 700 * dim * dim)
    assert k.sparse_pairs == (sparse == 4.0)


def _reversed_rows(data: object) -> object:
    """``data`` with each CSR row's entries stored in reverse order (decreasing indices: not
    canonical, the same matrix)."""
    import dataclasses

    from sqnopt.data._rows import CSRRows32, CSRRows64

    X = data.X                                                      # type: ignore[attr-defined]
    order = np.concatenate([np.arange(X.indptr[i + 1] - 1, X.indptr[i] - 1, -1)
                            for i in range(X.shape[0])]).astype(np.intp)
    indices, values = X.indices[order].copy(), X.data[order].copy()
    rows = data.rows                                                # type: ignore[attr-defined]
    make = CSRRows64 if values.dtype == np.float64 else CSRRows32
    new = make(values, indices, np.asarray(X.indptr, dtype=np.intp), X.shape[1],
               data.y, data.sample_weight, data.grad_weight,        # type: ignore[attr-defined]
               rows.has_intercept)
    return dataclasses.replace(data, rows=new)                     # type: ignore[type-var]


@pytest.mark.parametrize("values", ["ones", "reals"])
@pytest.mark.parametrize("intercept", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sparse_pairs_triangle_matches_the_full_pair_loop(values: str, intercept: bool,
                                                          dtype: type) -> None:
    """Rows of strictly increasing indices take the triangle of their entries' pairs (and, when
    every value is 1, no products); rows stored in another order take every pair. Both add one
    product per row to each entry, in the order of the rows: the same factor bit for bit, and
    the dense formula's."""
    rng = np.random.default_rng(11)
    n, p = 600, 40
    X = (rng.uniform(size=(n, p)) < 0.15).astype(float)
    if values == "reals":
        X *= rng.normal(size=(n, p))
    X[:, 0] = 1.0          # no empty row; a column every row holds
    y = np.arange(n) % 3
    w = rng.uniform(0.5, 2.0, size=n)
    obj = Softmax(lam=1e-2)
    data = prepare(sp.csr_matrix(X.astype(dtype)), y, sample_weight=w, fit_intercept=intercept,
                   label_kind=obj.label_kind)
    dim = p + 1 if intercept else p
    factors = []
    for d in (data, _reversed_rows(data)):
        k = BoundLBFGSKernel(dim, 3, 0.5, memory=4)
        k.bind(obj.init(d))
        assert k.sparse_pairs
        factors.append(k.factor())
    np.testing.assert_array_equal(factors[0], factors[1])
    M = _bound_matrix(X.astype(dtype).astype(np.float64), 0.5, 1e-2, w, intercept)
    np.testing.assert_allclose(factors[0] @ factors[0].T, M, rtol=1e-10, atol=1e-12)


def test_two_loop_equals_product_form_from_the_preconditioner() -> None:
    X, y = _classes(200, 6, 3, seed=2)
    obj = Softmax(lam=1e-2)
    ok = obj.init(prepare(X, y, label_kind=obj.label_kind))
    k = BoundLBFGSKernel(6, 3, 0.5, memory=3, gamma0=0.7)
    k.bind(ok)
    Minv = np.kron(np.eye(3), np.linalg.inv(_bound_matrix(X, 0.5, 1e-2, None, False)))
    np.testing.assert_allclose(k.to_dense(), 0.7 * Minv, rtol=1e-9, atol=1e-12)
    rng = np.random.default_rng(4)
    Q, _ = np.linalg.qr(rng.normal(size=(18, 18)))
    A = Q @ np.diag(np.geomspace(1.0, 100.0, 18)) @ Q.T
    pairs = [(v, A @ v) for v in rng.normal(size=(5, 18))]
    for t, (v, r) in enumerate(pairs, 1):
        assert k.update_pair(v, r) == PAIR_ACCEPTED
        gamma = (v @ r) / (r @ Minv @ r)
        assert k.gamma == pytest.approx(gamma, rel=1e-12)
        H = gamma * Minv
        for vv, rr in pairs[max(0, t - 3):t]:
            rho = 1.0 / (vv @ rr)
            V = np.eye(18) - rho * np.outer(rr, vv)
            H = V.T @ H @ V + rho * np.outer(vv, vv)
        np.testing.assert_allclose(k.to_dense(), H, rtol=1e-9, atol=1e-12)
    k.reset()
    np.testing.assert_allclose(k.to_dense(), 0.7 * Minv, rtol=1e-9, atol=1e-12)


TWIN_CASES = [
    ("softmax-dense", Softmax(lam=1e-2), False, True),
    ("softmax-sparse", Softmax(lam=1e-2), True, False),
    ("logistic-dense", LogLoss(lam=1e-2), False, True),
    ("sqhinge-sparse", SquaredHinge(lam=1e-2), True, True),
]


@pytest.mark.parametrize("case,objective,sparse,intercept", TWIN_CASES,
                         ids=[c[0] for c in TWIN_CASES])
def test_compiled_matches_numpy_twin_iterate_by_iterate(case: str, objective: object,
                                                        sparse: bool, intercept: bool) -> None:
    """Same injected batches (Fixed(20)) and a constant step: the iterates agree to rounding."""
    X, y = _classes(300, 8, 3, seed=5)
    if objective.label_kind == "binary":          # type: ignore[attr-defined]
        y = np.where(y == 0, -1.0, 1.0)
    if sparse:
        X[X < 2.0] = 0.0
        X = sp.csr_matrix(X)
    seq = np.random.default_rng(6).integers(0, 300, size=20 * 40)
    traces = []
    for model in (BoundLBFGS(memory=4), BoundLBFGSNumPy(memory=4)):
        its: dict[int, np.ndarray] = {}

        def record(info: object, its: dict[int, np.ndarray] = its) -> None:
            its.setdefault(info.iteration, info.w.copy())  # type: ignore[attr-defined]

        res = Solver(objective, model, Fixed(20), Constant(eps=0.5), batch_sequence=seq,
                     fit_intercept=intercept, report_every=1, callback=record).fit(X, y)
        traces.append((np.array([its[t] for t in sorted(its)]), res))
    (w_c, r_c), (w_t, r_t) = traces
    assert r_c.compiled and not r_t.compiled
    assert len(w_c) == len(w_t) == 40
    np.testing.assert_allclose(w_c, w_t, rtol=1e-8, atol=1e-10)
    assert (r_c.n_pairs_accepted, r_c.n_pairs_skipped) == (r_t.n_pairs_accepted,
                                                          r_t.n_pairs_skipped)


def test_full_batch_converges_linearly_and_faster_than_plain_lbfgs() -> None:
    """Strongly convex softmax on correlated, uncentred features, full batch with Armijo: from
    1e-2 down to 1e-12 the relative excess falls at least 4x every 10 iterations (a linear
    rate), and plain L-BFGS needs more than twice the iterations to 1e-12."""
    X, y = _classes(600, 30, 4, seed=7, shift=5.0)
    obj = Softmax(lam=1e-3)
    fstar = Solver(obj, "newton", Full(), Armijo(), gtol=1e-13, max_iter=100).fit(X, y).fun
    ok = obj.init(prepare(X, y, label_kind=obj.label_kind))

    def excesses(model: object) -> np.ndarray:
        vals: dict[int, float] = {}

        def record(info: object) -> None:
            vals.setdefault(info.iteration, ok.value(info.w))  # type: ignore[attr-defined]

        Solver(obj, model, Full(), Armijo(), max_iter=400, gtol=1e-13, report_every=1,
               callback=record).fit(X, y)
        return (np.array([vals[t] for t in sorted(vals)]) - fstar) / fstar

    ex = excesses(BoundLBFGS(memory=10))
    start, end = int(np.argmax(ex < 1e-2)), int(np.argmax(ex < 1e-12))
    assert ex[end] < 1e-12 and 0 < start < end
    for t in range(start + 10, end + 1):
        assert ex[t] <= 0.25 * ex[t - 10], (t, ex[t - 10], ex[t])
    plain = excesses(LBFGS(memory=10))
    assert np.all(plain[:2 * end] >= 1e-12), (end, int(np.argmax(plain < 1e-12)))


def test_options_are_validated() -> None:
    with pytest.raises(ValueError, match="on_bad_pair must be 'skip'"):
        BoundLBFGS(on_bad_pair="damp")
    with pytest.raises(ValueError, match="bound must be a finite number > 0"):
        BoundLBFGS(bound=0.0)
    with pytest.raises(ValueError, match="memory must be an integer"):
        BoundLBFGS(memory=0)
    problem = Problem(n_samples=10, n_features=4, dim=4, n_blocks=1, n_params=4, lam=1e-2,
                      fit_intercept=False, capabilities=frozenset())
    with pytest.raises(ValueError, match="needs the objective's curvature bound"):
        BoundLBFGS().init(problem)
    assert BoundLBFGS(bound=0.3).init(problem).bound == 0.3


def test_singular_bound_is_a_clear_error() -> None:
    X, y = _classes(100, 4, 2, seed=8)
    X = np.hstack([X, X[:, :1]])                  # a repeated column, lam = 0: M is singular
    y = np.where(y == 0, -1.0, 1.0)
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite.*lbfgs"):
        Solver(LogLoss(lam=0.0), BoundLBFGS(), Full(), Armijo(), max_iter=3).fit(X, y)


def test_bound_cost_in_passes() -> None:
    """Dense rows: the dsyrk's N dim^2 / 2; sparse rows with few entries: the pairs' sum m_i^2."""
    X = np.ones((1000, 30))
    assert bound_cost_passes(X, 4, fit_intercept=True) == pytest.approx(
        (1000 * 31 ** 2 / 2 + 31 ** 3 / 3) / (2 * 4 * 1000 * 31))
    S = sp.csr_matrix(sp.random(1000, 300, density=0.01, random_state=0))
    m = np.diff(S.indptr).astype(float)
    assert bound_cost_passes(S, 2) == pytest.approx(
        (np.sum(m * m) + 300 ** 3 / 3) / (2 * 2 * S.nnz))
    D = sp.csr_matrix(np.ones((1000, 30)))             # stored densely: the dsyrk
    assert bound_cost_passes(D, 4, fit_intercept=True) == pytest.approx(
        bound_cost_passes(X, 4, fit_intercept=True))


def test_memory_accounts_for_the_factor() -> None:
    problem = Problem(n_samples=1000, n_features=99, dim=100, n_blocks=10, n_params=1000,
                      lam=1e-3, fit_intercept=True, capabilities=frozenset())
    plain = LBFGS(memory=10).memory_bytes(problem)
    assert BoundLBFGS(memory=10).memory_bytes(problem) == plain + 8 * (1000 + 100 * 356)


@pytest.mark.parametrize("n,p,k,density,expected", [
    (60_000, 784, 10, None, "bound_lbfgs"),       # fashion-mnist's shape: dense pixels, softmax
    (2_000, 180, 3, 0.25, "bound_lbfgs"),         # dna's shape: sparse indicators, 3 classes
    (20_000, 784, 2, None, "lbfgs"),              # binary on images: the bound costs ~200 passes
    (5_000, 5_000, 3, None, "lbfgs"),             # a block beyond BOUND_MAX_DIM
    (2_000, 3_000, 3, 0.01, "lbfgs"),             # sparse rows, many features: too costly
    (30_000, 50, 2, None, "newton"),              # few parameters: Newton's method first
])
def test_recipe_picks_the_bound_where_it_pays(n: int, p: int, k: int, density: float | None,
                                              expected: str) -> None:
    """The choice from the shape (and a sparse matrix's nnz): dense stand-ins are zero-stride
    views, no memory."""
    X = (np.broadcast_to(np.float32(1.0), (n, p)) if density is None
         else sp.random(n, p, density=density, format="csr", random_state=0))
    obj = Softmax(lam=1.0 / n) if k > 2 else LogLoss(lam=1.0 / n)
    assert default_curvature(obj, X, k).name == expected
    if expected == "bound_lbfgs":
        assert p + 1 <= BOUND_MAX_DIM and bound_cost_passes(X, obj.n_blocks(k), True) \
            <= BOUND_PASSES
    assert default_curvature(Softmax(lam=0.0) if k > 2 else LogLoss(lam=0.0), X, k).name \
        == "lbfgs"                                # not strongly convex: never the bound


# ---- the matrix from a sample of the rows (BoundLBFGS(rows=m); Poisson's default) ------------

def _systematic(n: int, m: int) -> np.ndarray:
    return (np.arange(m) * n) // m


@pytest.mark.parametrize("sparse", [None, 0.0, 4.0], ids=["dense", "sparse-dsyrk",
                                                          "sparse-pairs"])
@pytest.mark.parametrize("intercept", [False, True])
def test_sampled_matrix_is_the_systematic_samples(sparse: float | None, intercept: bool) -> None:
    """``rows=m``: the matrix of rows floor(t N / m), weighted by their own weights' sum, in
    each storage; a sample as large as the data set is every row, bit for bit; binding again
    forms the same factor (no random state: a restored solve gets the same matrix)."""
    X, y = _classes(700, 9, 3, seed=11)
    X[X < (2.0 if sparse is None else sparse)] = 0.0
    w = np.random.default_rng(12).uniform(0.5, 2.0, size=700)
    Xin = sp.csr_matrix(X) if sparse else X
    obj = Softmax(lam=1e-2)
    ok = obj.init(prepare(Xin, y, sample_weight=w, fit_intercept=intercept,
                          label_kind=obj.label_kind))
    dim = 10 if intercept else 9
    k = BoundLBFGSKernel(dim, 3, 0.5, memory=4, rows=263)
    k.bind(ok)
    take = _systematic(700, 263)
    assert len(np.unique(take)) == 263 and take[-1] >= 697   # spread over the whole set
    M = _bound_matrix(X[take], 0.5, 1e-2, w[take], intercept)
    np.testing.assert_allclose(k.factor() @ k.factor().T, M, rtol=1e-10, atol=1e-12)
    assert (k.n_rows, k.max_rows) == (263, 263)
    again = BoundLBFGSKernel(dim, 3, 0.5, memory=4, rows=263)
    again.bind(ok)
    np.testing.assert_array_equal(again.factor(), k.factor())
    every, large = (BoundLBFGSKernel(dim, 3, 0.5, memory=4, rows=r) for r in (0, 700))
    every.bind(ok)
    large.bind(ok)
    np.testing.assert_array_equal(large.factor(), every.factor())
    assert large.n_rows == every.n_rows == 700


def test_sampled_rows_without_weight_fall_back_to_every_row() -> None:
    X, y = _classes(300, 5, 2, seed=13)
    y = np.where(y == 0, -1.0, 1.0)
    w = np.ones(300)
    w[_systematic(300, 30)] = 0.0                 # the sample carries no weight
    ok = LogLoss(lam=1e-2).init(prepare(X, y, sample_weight=w, label_kind="binary"))
    k = BoundLBFGSKernel(5, 1, 0.25, rows=30)
    k.bind(ok)
    assert k.n_rows == 300
    np.testing.assert_allclose(k.factor() @ k.factor().T,
                               _bound_matrix(X, 0.25, 1e-2, w, False), rtol=1e-10, atol=1e-12)


def _poisson_data(n: int, p: int, seed: int, spread: float = 2.0) -> tuple[np.ndarray,
                                                                           np.ndarray]:
    """Correlated features of scales spanning ``exp(+-spread)``, Poisson counts of a log-linear
    mean: the conditioning that makes plain L-BFGS crawl."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) @ (rng.normal(size=(p, p)) / np.sqrt(p) + np.eye(p))
    X *= np.exp(rng.uniform(-spread, spread, size=p))
    w = rng.normal(size=p) * 0.5 / np.sqrt(p) / X.std(axis=0)
    y = rng.poisson(np.exp(np.clip(X @ w + 0.3, -8.0, 4.0))).astype(float)
    return X, y


@pytest.mark.parametrize("intercept", [False, True])
def test_sampled_bound_twin_iterate_by_iterate_on_poisson(intercept: bool) -> None:
    """Poisson (no curvature bound: ``bound="auto"`` takes its curvature at score 0, 1), the
    matrix from 60 of 400 rows: the compiled kernel and the NumPy twin agree to rounding."""
    from sqnopt.objectives import Poisson

    X, y = _poisson_data(400, 6, seed=14, spread=0.5)
    seq = np.random.default_rng(15).integers(0, 400, size=20 * 30)
    traces = []
    for model in (BoundLBFGS(memory=4, rows=60), BoundLBFGSNumPy(memory=4, rows=60)):
        its: dict[int, np.ndarray] = {}

        def record(info: object, its: dict[int, np.ndarray] = its) -> None:
            its.setdefault(info.iteration, info.w.copy())  # type: ignore[attr-defined]

        res = Solver(Poisson(lam=1e-2), model, Fixed(20), Constant(eps=0.2),
                     batch_sequence=seq, fit_intercept=intercept, report_every=1,
                     callback=record).fit(X, y)
        traces.append((np.array([its[t] for t in sorted(its)]), res))
    (w_c, r_c), (w_t, r_t) = traces
    assert r_c.compiled and not r_t.compiled and len(w_c) == len(w_t) == 30
    assert np.all(np.isfinite(w_c)) and np.abs(w_c[-1]).max() > 1e-3
    np.testing.assert_allclose(w_c, w_t, rtol=1e-8, atol=1e-10)


def test_rows_and_the_start_curvature_are_resolved_and_validated() -> None:
    base = dict(n_samples=1000, n_features=9, dim=10, n_blocks=1, n_params=10, lam=1e-2,
                fit_intercept=True, capabilities=frozenset())
    problem = Problem(**base, start_curvature=1.0)          # type: ignore[arg-type]
    assert BoundLBFGS().resolved_bound(problem) == 1.0       # no bound: the start's curvature
    assert BoundLBFGS().resolved_bound(Problem(**base, curvature_bound=0.25,  # type: ignore
                                               start_curvature=1.0)) == 0.25
    assert BoundLBFGS(rows="auto").resolved_rows(problem) == 200       # 20 per block entry
    assert BoundLBFGS(rows=999).resolved_rows(problem) == 999
    assert BoundLBFGS(rows=1000).resolved_rows(problem) == 0           # the whole set
    assert BoundLBFGS().resolved_rows(problem) == 0
    assert BoundLBFGS(rows="auto").init(problem).max_rows == 200
    small = Problem(**{**base, "n_samples": 150}, start_curvature=1.0)  # type: ignore[arg-type]
    assert BoundLBFGS(rows="auto").init(small).max_rows == 0
    for bad in (0, -3, 2.5, "all", True):
        with pytest.raises(ValueError, match="rows must be None"):
            BoundLBFGS(rows=bad)                             # type: ignore[arg-type]
    with pytest.raises(ValueError, match="rows must be >= 0"):
        BoundLBFGSKernel(4, 1, 1.0, rows=-1)


def test_sampled_bound_cost_in_passes() -> None:
    X = np.ones((10_000, 30))
    whole = bound_cost_passes(X, 1, fit_intercept=True)
    part = bound_cost_passes(X, 1, fit_intercept=True, rows=620)
    assert part == pytest.approx((0.062 * 10_000 * 31 ** 2 / 2 + 31 ** 3 / 3)
                                 / (2 * 10_000 * 31))
    assert part < whole and bound_cost_passes(X, 1, True, rows=20_000) == whole


@pytest.mark.parametrize("n,p,density,expected", [
    (20_000, 100, None, "bound_lbfgs"),          # the race's dense Poisson problem's shape
    (8_000, 90, None, "bound_lbfgs"),            # 1820 rows of 8000
    (50_000, 5_000, 0.002, "lbfgs"),             # a block beyond BOUND_MAX_DIM
    (5_000, 200, None, "lbfgs"),                 # 4020 rows of 5000: ~42 passes, too costly
    (2_000, 50, None, "bound_lbfgs"),            # few parameters: before Newton's method
])
def test_recipe_samples_the_start_hessian_for_poisson(n: int, p: int, density: float | None,
                                                      expected: str) -> None:
    from sqnopt.objectives import Poisson

    X = (np.broadcast_to(np.float32(1.0), (n, p)) if density is None
         else sp.random(n, p, density=density, format="csr", random_state=0))
    model = default_curvature(Poisson(lam=1.0 / n), X, 0)
    assert model.name == expected
    if expected == "bound_lbfgs":
        assert isinstance(model, BoundLBFGS) and model.rows == "auto" and model.bound == "auto"
    assert default_curvature(Poisson(lam=0.0), X, 0).name == "lbfgs"   # not strongly convex


def test_poisson_default_needs_far_fewer_passes_than_plain_lbfgs() -> None:
    """At the defaults, on correlated features of spread scales: the sampled start Hessian
    reaches the tolerance in under a third of the passes plain L-BFGS takes to it (the
    estimator's own convergence test, the same minimiser)."""
    from sqnopt import SQNRegressor

    from sqnopt.objectives import Poisson

    X, y = _poisson_data(8000, 90, seed=16)
    ok = Poisson(lam=1e-3).init(prepare(X, y, fit_intercept=True, label_kind="regression"))
    assert default_curvature(Poisson(lam=1e-3), X, 0).name == "bound_lbfgs"
    fits, values = {}, {}
    for curvature in ("auto", "lbfgs"):
        est = SQNRegressor(loss="poisson", alpha=1e-3, curvature=curvature, tol=1e-8,
                           max_iter=3000, random_state=0).fit(X, y)
        assert est.converged_
        fits[curvature] = est
        values[curvature] = ok.value(np.append(est.coef_, est.intercept_))
    passes = {k: float(e.history_.effective_passes[-1]) for k, e in fits.items()}
    assert passes["auto"] < passes["lbfgs"] / 3, passes
    assert values["auto"] == pytest.approx(values["lbfgs"], rel=1e-9)


@pytest.mark.parametrize("n,p,k,expected_rows", [
    (100_000, 200, 2, "auto"),     # binary: the bound on every row ~50 passes, on 4 020 rows ~3
    (20_000, 100, 2, "auto"),      # just past the whole bound's budget (25.3 passes)
    (60_000, 784, 10, None),       # fashion-mnist's shape: the whole bound, as before
    (20_000, 784, 2, "lbfgs"),     # 15 700 of 20 000 rows: the sample costs as much
])
def test_recipe_samples_the_bound_where_the_whole_one_costs_too_much(n: int, p: int, k: int,
                                                                     expected_rows: object
                                                                     ) -> None:
    X = np.broadcast_to(np.float32(1.0), (n, p))
    obj = Softmax(lam=1.0 / n) if k > 2 else LogLoss(lam=1.0 / n)
    model = default_curvature(obj, X, k)
    if expected_rows == "lbfgs":
        assert model.name == "lbfgs"
    else:
        assert isinstance(model, BoundLBFGS) and model.rows == expected_rows
        assert model.bound == "auto"             # the loss's own bound


def test_logistic_default_with_the_sampled_bound_needs_far_fewer_passes() -> None:
    """Dense binary logistic, correlated features of spread scales, 20 000 x 100: the default
    (the bound on a sample of 2 020 rows) reaches the tolerance in under a third of the passes
    plain L-BFGS takes, to the same objective."""
    from sqnopt import SQNClassifier

    X, counts = _poisson_data(20_000, 100, seed=17, spread=1.5)
    y = np.where(counts > np.median(counts), 1, -1)
    ok = LogLoss(lam=1e-4).init(prepare(X, y, fit_intercept=True, label_kind="binary"))
    passes, values = {}, {}
    for curvature in ("auto", "lbfgs"):
        est = SQNClassifier(alpha=1e-4, curvature=curvature, tol=1e-7, max_iter=2000,
                            random_state=0).fit(X, y)
        assert est.converged_
        passes[curvature] = float(est.history_.effective_passes[-1])
        values[curvature] = ok.value(np.append(est.coef_.ravel(), est.intercept_))
    assert passes["auto"] < passes["lbfgs"] / 3, passes
    assert values["auto"] == pytest.approx(values["lbfgs"], rel=1e-7)
