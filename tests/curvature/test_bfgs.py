"""The BFGS-family curvature models: oLBFGS, oBFGS and RES.

Dense textbook formulas vs the matrix-free / factored kernels, RES's eigenvalue bound, the
safeguards, compiled kernels vs their NumPy twins iterate by iterate, compiled vs Python loop, and
full-batch convergence to SciPy's minimizer.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize as so

from sqnopt import (
    LBFGS,
    Constant,
    Decaying,
    Fixed,
    Full,
    FullBFGS,
    Hinge,
    IncompatibleComponentsError,
    LogLoss,
    RegularizedBFGS,
    Solver,
    SquaredHinge,
)
from sqnopt.curvature import BFGSKernel, LBFGSKernel, RESEigKernel
from sqnopt.curvature.reference import (
    DenseBFGSKernelNumPy,
    FullBFGSNumPy,
    LBFGSKernelNumPy,
    LBFGSNumPy,
    RegularizedBFGSNumPy,
)
from sqnopt.datasets import make_boxes
from sqnopt.interfaces import CURVATURE_ERROR, PAIR_ACCEPTED, PAIR_RESET, PAIR_SKIPPED
from sqnopt.registry import get_registry

from conftest import curvature_problem

# ---------------------------------------------------------------------------- helpers


def spd_pairs(n: int, count: int, seed: int = 0, cond: float = 50.0
              ) -> list[tuple[np.ndarray, np.ndarray]]:
    """Secant pairs ``(v, A v)`` of an SPD quadratic with condition number ``cond``."""
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    A = Q @ np.diag(np.geomspace(1.0, cond, n)) @ Q.T
    return [(v, A @ v) for v in rng.normal(size=(count, n))]


def product_form(pairs: list[tuple[np.ndarray, np.ndarray]], H0: np.ndarray) -> np.ndarray:
    """Nocedal & Wright (2006) eq. 7.19: ``H <- V' H V + rho v v'``, ``V = I - rho r v'``."""
    n = H0.shape[0]
    H = H0.copy()
    for v, r in pairs:
        rho = 1.0 / (v @ r)
        V = np.eye(n) - rho * np.outer(r, v)
        H = V.T @ H @ V + rho * np.outer(v, v)
    return H


def res_B(pairs: list[tuple[np.ndarray, np.ndarray]], B0: np.ndarray, delta: float) -> np.ndarray:
    """Mokhtari & Ribeiro (2014) eq. 9, explicitly."""
    B = B0.copy()
    for v, r in pairs:
        rt = r - delta * v
        Bv = B @ v
        B = B + np.outer(rt, rt) / (v @ rt) - np.outer(Bv, Bv) / (v @ Bv) + delta * np.eye(len(v))
    return B


def trace_run(curvature: object, X: np.ndarray, y: np.ndarray, seq: np.ndarray, *,
              objective: object = None, step: object = None, batch: int = 5,
              path: str = "auto") -> tuple[np.ndarray, object]:
    """Iterates after every iteration of a run with an injected batch order."""
    trace: dict[int, np.ndarray] = {}

    def record(info: object) -> None:
        trace.setdefault(info.iteration, info.w.copy())  # type: ignore[attr-defined]

    solver = Solver(objective=objective or SquaredHinge(lam=1e-3), curvature=curvature,
                    schedule=Fixed(batch), step=step or Decaying(eps0=0.05, T0=20),
                    batch_sequence=seq, report_every=1, path=path,  # type: ignore[arg-type]
                    callback=record)
    result = solver.fit(X, y)
    assert sorted(trace) == list(range(1, result.n_iter + 1))
    return np.array([trace[t] for t in sorted(trace)]), result


@pytest.fixture(scope="module")
def boxes10() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    X, y = make_boxes(300, 10, random_state=1)
    seq = np.random.default_rng(2).integers(0, 300, size=5 * 80)
    return X, y, seq


@pytest.fixture(scope="module")
def boxes10_single() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Batches of one sample: with lam = 0, many pairs carry (almost) no curvature."""
    X, y = make_boxes(300, 10, random_state=1)
    seq = np.random.default_rng(2).integers(0, 300, size=200)
    return X, y, seq


# ---------------------------------------------------------------------------- dense formulas


@pytest.mark.parametrize("memory", [1, 3, 7])
def test_lbfgs_two_loop_equals_product_form(memory: int) -> None:
    n = 8
    pairs = spd_pairs(n, 11, seed=memory)
    k = LBFGSKernel(n, memory=memory, gamma0=0.7)
    np.testing.assert_allclose(k.to_dense(), 0.7 * np.eye(n), rtol=0, atol=1e-15)
    for t, (v, r) in enumerate(pairs, 1):
        assert k.update_pair(v, r) == PAIR_ACCEPTED
        kept = pairs[max(0, t - memory):t]
        vl, rl = pairs[t - 1]
        gamma = (vl @ rl) / (rl @ rl)                       # paper 003, eq. 19
        H = product_form(kept, gamma * np.eye(n))
        np.testing.assert_allclose(k.to_dense(), H, rtol=1e-10, atol=1e-12)
        assert k.count == min(t, memory)
        assert k.gamma == pytest.approx(gamma, rel=1e-14)
    V, R = k.pairs()
    np.testing.assert_array_equal(V, np.array([v for v, _ in pairs[-memory:]]))
    np.testing.assert_array_equal(R, np.array([r for _, r in pairs[-memory:]]))


def test_lbfgs_hessian_vector_is_inverse_of_two_loop() -> None:
    n = 7
    k = LBFGSKernel(n, memory=4)
    for v, r in spd_pairs(n, 6, seed=5):
        k.update_pair(v, r)
    x = np.random.default_rng(0).normal(size=n)
    np.testing.assert_allclose(k.hessian_vector(x), np.linalg.solve(k.to_dense(), x), rtol=1e-9)


@pytest.mark.parametrize("init_scale", [1.0, 3.0])
def test_full_bfgs_inverse_update_equals_explicit_B(init_scale: float) -> None:
    n = 9
    pairs = spd_pairs(n, 20, seed=3)
    k = FullBFGS(init_scale=init_scale).init(curvature_problem(n))
    for t, (v, r) in enumerate(pairs, 1):
        assert k.update_pair(v, r) == PAIR_ACCEPTED
        B = res_B(pairs[:t], init_scale * np.eye(n), 0.0)
        np.testing.assert_allclose(k.to_dense(), np.linalg.inv(B), rtol=1e-8, atol=1e-12)
        np.testing.assert_allclose(k.to_dense(), product_form(pairs[:t], np.eye(n) / init_scale),
                                   rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("method", ["auto", "cholesky", "eig"])
@pytest.mark.parametrize("delta,Gamma", [(1e-2, 1e-3), (0.3, 0.0), (0.0, 0.1)])
def test_res_direction_equals_explicit_B(delta: float, Gamma: float, method: str) -> None:
    n = 8
    pairs = spd_pairs(n, 15, seed=4)
    model = RegularizedBFGS(delta=delta, Gamma=Gamma, init_scale=2.0, method=method,
                            refresh_every=4 if method == "eig" else None)
    k = model.init(curvature_problem(n))
    if method == "eig":
        assert isinstance(k, RESEigKernel)
    else:
        assert k.cholesky == (method == "cholesky" or delta > 0)
    for t, (v, r) in enumerate(pairs, 1):
        assert k.update_pair(v, r) == PAIR_ACCEPTED
        B = res_B(pairs[:t], 2.0 * np.eye(n), delta)
        np.testing.assert_allclose(k.hessian(), B, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(k.to_dense(), np.linalg.inv(B) + Gamma * np.eye(n),
                                   rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("method", ["cholesky", "eig"])
def test_res_smallest_eigenvalue_stays_above_delta(method: str) -> None:
    """Lemma 1 of paper 000: B_t >= delta I, also when pairs carry almost no curvature."""
    n, delta = 6, 0.05
    rng = np.random.default_rng(7)
    k = RegularizedBFGS(delta=delta, Gamma=1e-3, method=method).init(curvature_problem(n))
    lo = np.inf
    for t in range(300):
        v = rng.normal(size=n)
        # curvature along v between delta (excluded) and 20: some pairs are barely admissible
        c = delta + (rng.uniform() ** 4) * 20
        r = c * v + 1e-3 * rng.normal(size=n)
        k.update_pair(v, r)
        lo = min(lo, float(np.linalg.eigvalsh(k.hessian()).min()))
        assert lo >= delta * (1 - 1e-9), (t, lo)
        H = k.to_dense()
        assert np.linalg.eigvalsh(H).max() <= (1e-3 + 1 / delta) * (1 + 1e-9)   # paper 000 eq. 14


def test_res_in_a_solve_keeps_B_above_delta() -> None:
    X, y = make_boxes(200, 5, random_state=0)
    delta = 1e-3
    solver = Solver(SquaredHinge(lam=1e-2), RegularizedBFGS(delta=delta, Gamma=1e-4), Fixed(5),
                    Decaying(eps0=0.1, T0=50), random_state=0)
    state = solver.init_state(X, y)
    for _ in range(40):
        solver.run(state, max_iter=5)
        assert np.linalg.eigvalsh(state.curvature.hessian()).min() >= delta * (1 - 1e-9)
    assert state.counters.n_pairs_accepted > 150


# ---------------------------------------------------------------------------- RES(0, 0) = oBFGS


def test_res_without_regularisation_is_full_bfgs(boxes10: tuple) -> None:
    X, y, seq = boxes10
    w_bfgs, r_bfgs = trace_run(FullBFGS(), X, y, seq)
    w_res, r_res = trace_run(RegularizedBFGS(delta=0.0, Gamma=0.0), X, y, seq)
    np.testing.assert_array_equal(w_res, w_bfgs)          # same O(n^2) inverse form
    w_chol, _ = trace_run(RegularizedBFGS(delta=0.0, Gamma=0.0, method="cholesky"), X, y, seq)
    np.testing.assert_allclose(w_chol, w_bfgs, rtol=1e-8, atol=1e-12)   # B form + LAPACK
    assert r_res.n_pairs_accepted == r_bfgs.n_pairs_accepted == len(w_bfgs)


# ---------------------------------------------------------------------------- compiled vs twin

TWINS = [
    (LBFGS(memory=4), LBFGSNumPy(memory=4)),
    (LBFGS(memory=3, gamma0=0.5), LBFGSNumPy(memory=3, gamma0=0.5)),
    (FullBFGS(), FullBFGSNumPy()),
    (FullBFGS(init_scale="auto"), FullBFGSNumPy(init_scale="auto")),
    (RegularizedBFGS(delta=1e-3, Gamma=1e-4), RegularizedBFGSNumPy(delta=1e-3, Gamma=1e-4)),
    (RegularizedBFGS(delta=5e-3, Gamma=1e-3, init_scale="auto"),
     RegularizedBFGSNumPy(delta=5e-3, Gamma=1e-3, init_scale="auto")),
    (RegularizedBFGS(delta=1e-3, Gamma=1e-4, method="eig", refresh_every=6),
     RegularizedBFGSNumPy(delta=1e-3, Gamma=1e-4)),
    (RegularizedBFGS(delta=5e-3, Gamma=1e-3, init_scale="auto", method="eig"),
     RegularizedBFGSNumPy(delta=5e-3, Gamma=1e-3, init_scale="auto")),
]


@pytest.mark.parametrize("compiled,twin", TWINS, ids=[c.describe() for c, _ in TWINS])
def test_compiled_matches_numpy_twin_iterate_by_iterate(compiled: object, twin: object,
                                                        boxes10: tuple) -> None:
    X, y, seq = boxes10
    w_c, r_c = trace_run(compiled, X, y, seq)
    w_t, r_t = trace_run(twin, X, y, seq)
    assert r_c.compiled and not r_t.compiled
    assert len(w_c) == len(w_t) == 80
    np.testing.assert_allclose(w_c, w_t, rtol=1e-8, atol=1e-10)
    assert (r_c.n_pairs_accepted, r_c.n_pairs_skipped, r_c.n_resets) == (
        r_t.n_pairs_accepted, r_t.n_pairs_skipped, r_t.n_resets)


SAFEGUARDED = [
    (LBFGS(memory=4, min_curvature=1.0), LBFGSNumPy(memory=4, min_curvature=1.0)),
    (LBFGS(memory=4, min_curvature=1.0, on_bad_pair="damp", damping=0.9),
     LBFGSNumPy(memory=4, min_curvature=1.0, on_bad_pair="damp", damping=0.9)),
    (FullBFGS(min_curvature=1.0), FullBFGSNumPy(min_curvature=1.0)),
    (FullBFGS(min_curvature=1.0, on_bad_pair="damp", damping=0.9),
     FullBFGSNumPy(min_curvature=1.0, on_bad_pair="damp", damping=0.9)),
    (RegularizedBFGS(delta=1e-3, Gamma=1e-4, min_curvature=1.0, on_bad_pair="damp", damping=0.9),
     RegularizedBFGSNumPy(delta=1e-3, Gamma=1e-4, min_curvature=1.0, on_bad_pair="damp",
                          damping=0.9)),
    (RegularizedBFGS(delta=1e-3, Gamma=1e-4, min_curvature=1.0, method="eig", refresh_every=5),
     RegularizedBFGSNumPy(delta=1e-3, Gamma=1e-4, min_curvature=1.0)),
    (RegularizedBFGS(delta=1e-3, Gamma=1e-4, min_curvature=1.0, on_bad_pair="damp", damping=0.9,
                     method="eig", refresh_every=5),
     RegularizedBFGSNumPy(delta=1e-3, Gamma=1e-4, min_curvature=1.0, on_bad_pair="damp",
                          damping=0.9)),
]


@pytest.mark.parametrize("compiled,twin", SAFEGUARDED, ids=[c.describe() for c, _ in SAFEGUARDED])
def test_safeguarded_compiled_matches_twin(compiled: object, twin: object,
                                           boxes10: tuple) -> None:
    """min_curvature = 1 flags many pairs of this problem as bad (lam = 0)."""
    X, y, seq = boxes10
    objective = SquaredHinge(lam=0.0)
    w_c, r_c = trace_run(compiled, X, y, seq, objective=objective)
    w_t, r_t = trace_run(twin, X, y, seq, objective=objective)
    np.testing.assert_allclose(w_c, w_t, rtol=1e-8, atol=1e-10)
    counts = (r_c.n_pairs_accepted, r_c.n_pairs_skipped, r_c.n_resets)
    assert counts == (r_t.n_pairs_accepted, r_t.n_pairs_skipped, r_t.n_resets)
    assert sum(counts) == 80 and r_c.n_resets == 0
    if compiled.on_bad_pair == "damp":
        assert r_c.n_pairs_skipped == 0
        assert 0 < count_damped(compiled, X, y, seq) == count_damped(twin, X, y, seq)
    else:
        assert r_c.n_pairs_skipped > 0


def count_damped(model: object, X: np.ndarray, y: np.ndarray, seq: np.ndarray) -> int:
    solver = Solver(SquaredHinge(lam=0.0), model, Fixed(5), Decaying(eps0=0.05, T0=20),
                    batch_sequence=seq)
    state = solver.init_state(X, y)
    solver.run(state)
    return int(state.curvature.n_damped)


@pytest.mark.parametrize("model", [LBFGS(memory=5), FullBFGS(), RegularizedBFGS(),
                                   RegularizedBFGS(delta=1e-3, init_scale="auto",
                                                   on_bad_pair="damp", min_curvature=1e-2),
                                   RegularizedBFGS(method="eig", refresh_every=4)],
                         ids=lambda m: m.describe())
def test_compiled_loop_and_python_loop_give_identical_iterates(model: object,
                                                               boxes10: tuple) -> None:
    X, y, seq = boxes10
    w_c, r_c = trace_run(model, X, y, seq, path="compiled")
    w_p, r_p = trace_run(model, X, y, seq, path="python")
    assert r_c.compiled and not r_p.compiled
    np.testing.assert_array_equal(w_c, w_p)
    assert (r_c.n_pairs_accepted, r_c.n_pairs_skipped, r_c.n_resets) == (
        r_p.n_pairs_accepted, r_p.n_pairs_skipped, r_p.n_resets)


# ---------------------------------------------------------------------------- full batch vs SciPy


@pytest.mark.parametrize("model", [LBFGS(memory=5), FullBFGS(), FullBFGS(init_scale="auto"),
                                   RegularizedBFGS(delta=1e-3, Gamma=1e-4),
                                   RegularizedBFGS(delta=1e-3, Gamma=1e-4, method="eig")],
                         ids=lambda m: m.describe())
def test_full_batch_small_step_converges_to_scipy_minimizer(model: object) -> None:
    rng = np.random.default_rng(0)
    n, N, lam = 6, 150, 1e-2
    X = rng.normal(size=(N, n))
    y = np.where(X @ rng.normal(size=n) + 0.5 * rng.normal(size=N) > 0, 1.0, -1.0)

    def f(w: np.ndarray) -> tuple[float, np.ndarray]:
        m = y * (X @ w)
        loss = np.logaddexp(0.0, -m)
        g = -(X.T @ (y / (1.0 + np.exp(m)))) / N + lam * w
        return float(loss.mean() + 0.5 * lam * w @ w), g

    ref = so.minimize(f, np.zeros(n), jac=True, method="L-BFGS-B",
                      options={"gtol": 1e-13, "ftol": 1e-16, "maxiter": 10_000})
    solver = Solver(LogLoss(lam=lam), model, Full(), Constant(0.3), sampling="shuffle",
                    max_iter=600, random_state=0)
    result = solver.fit(X, y)
    rel = np.linalg.norm(result.w - ref.x) / np.linalg.norm(ref.x)
    assert rel < 1e-8, rel


# ---------------------------------------------------------------------------- safeguards


@pytest.mark.parametrize("kernel", [LBFGSKernel(4), BFGSKernel(4),
                                    BFGSKernel(4, delta=0.1, Gamma=0.01, cholesky=True),
                                    RESEigKernel(4, delta=0.1, Gamma=0.01, refresh_every=2)],
                         ids=["lbfgs", "bfgs", "res", "res-eig"])
def test_bad_pairs_are_skipped_without_changing_the_memory(kernel: object) -> None:
    for v, r in spd_pairs(4, 3, seed=1):
        assert kernel.update_pair(v, r) == PAIR_ACCEPTED
    H = kernel.to_dense()
    v = np.array([1.0, 2.0, 0.0, -1.0])
    for r in (-v, 0.0 * v, np.array([1.0, -1.0, 3.0, 1.0])):   # v'r < 0, = 0, = 0
        assert kernel.update_pair(v, r) == PAIR_SKIPPED
    assert kernel.update_pair(np.zeros(4), np.ones(4)) == PAIR_SKIPPED     # v = 0
    np.testing.assert_allclose(kernel.to_dense(), H, rtol=1e-13, atol=1e-15)
    assert kernel.n_updates == 3


def test_min_curvature_threshold() -> None:
    k = LBFGSKernel(3, min_curvature=0.5)
    v = np.array([1.0, 0.0, 0.0])
    assert k.update_pair(v, 0.5 * v) == PAIR_SKIPPED        # v'r = eps ||v||^2 is bad
    assert k.update_pair(v, 0.5000001 * v) == PAIR_ACCEPTED
    res = BFGSKernel(3, delta=0.1, cholesky=True, min_curvature=0.5)
    assert res.update_pair(v, 0.6 * v) == PAIR_SKIPPED      # tested on r~ = r - delta v
    assert res.update_pair(v, 0.61 * v) == PAIR_ACCEPTED


@pytest.mark.parametrize("make", [lambda: LBFGSKernel(5, damp=True, damping=0.3),
                                  lambda: BFGSKernel(5, damp=True, damping=0.3),
                                  lambda: BFGSKernel(5, delta=0.05, cholesky=True, damp=True,
                                                     damping=0.3),
                                  lambda: RESEigKernel(5, delta=0.05, Gamma=0.0, damp=True,
                                                       damping=0.3, refresh_every=3)],
                         ids=["lbfgs", "bfgs", "res", "res-eig"])
def test_powell_damping(make: object) -> None:
    kernel = make()
    twin_cls = LBFGSKernelNumPy if isinstance(kernel, LBFGSKernel) else DenseBFGSKernelNumPy
    opts = dict(min_curvature=0.0, on_bad_pair="damp", damping=0.3, on_nonfinite="reset")
    twin = (LBFGSKernelNumPy(5, 10, 1.0, **opts) if twin_cls is LBFGSKernelNumPy else
            DenseBFGSKernelNumPy(5, kernel.delta, 0.0, 1.0, **opts))
    for v, r in spd_pairs(5, 4, seed=2):
        kernel.update_pair(v, r)
        twin.update_pair(v, r)
    v = np.array([1.0, -1.0, 0.5, 0.0, 2.0])
    r = -0.1 * v                                            # negative curvature
    Bv = kernel.hessian_vector(v)
    assert kernel.update_pair(v, r) == PAIR_ACCEPTED
    assert twin.update_pair(v, r) == PAIR_ACCEPTED
    assert kernel.n_damped == twin.n_damped == 1
    g = np.arange(5.0)
    np.testing.assert_allclose(kernel.matvec(g), twin_direction(twin, g), rtol=1e-9)
    if isinstance(kernel, LBFGSKernel):                     # the stored pair: v'r = sigma v'Bv
        V, R = kernel.pairs()
        assert V[-1] @ R[-1] == pytest.approx(0.3 * (v @ Bv), rel=1e-12)
    assert np.all(np.linalg.eigvalsh(kernel.to_dense()) > 0)


def twin_direction(twin: object, g: np.ndarray) -> np.ndarray:
    out = np.empty_like(g)
    twin.direction(g, out)
    return out


@pytest.mark.parametrize("make", [lambda **kw: LBFGSKernel(4, gamma0=2.0, **kw),
                                  lambda **kw: BFGSKernel(4, init_scale=2.0, **kw),
                                  lambda **kw: BFGSKernel(4, delta=0.1, init_scale=2.0,
                                                          cholesky=True, **kw),
                                  lambda **kw: RESEigKernel(4, delta=0.1, init_scale=2.0,
                                                            refresh_every=2, **kw)],
                         ids=["lbfgs", "bfgs", "res", "res-eig"])
def test_nonfinite_pair_resets_or_errors(make: object) -> None:
    kernel = make()
    H0 = kernel.to_dense()
    for v, r in spd_pairs(4, 3, seed=1):
        kernel.update_pair(v, r)
    assert not np.allclose(kernel.to_dense(), H0)
    for bad in (np.nan, np.inf, -np.inf):
        v, r = spd_pairs(4, 1, seed=9)[0]
        r[1] = bad
        assert kernel.update_pair(v, r) == PAIR_RESET
        np.testing.assert_array_equal(kernel.to_dense(), H0)
        v[2], r[1] = bad, 1.0
        assert kernel.update_pair(v, r) == PAIR_RESET
    strict = make(reset_on_nonfinite=False)
    v, r = spd_pairs(4, 1, seed=9)[0]
    r[0] = np.nan
    assert strict.update_pair(v, r) == CURVATURE_ERROR
    assert "NaN" in strict.error_message()


def test_pair_counts_in_the_result() -> None:
    X, y = make_boxes(300, 10, random_state=3)
    # lam = 0 and batches of one: a sample beyond the margin at both points gives v'r = 0
    result = Solver(SquaredHinge(lam=0.0), LBFGS(), Fixed(1), Decaying(0.05, 50),
                    max_iter=400, random_state=0).fit(X, y)
    assert result.n_pairs_skipped > 0 and result.n_pairs_accepted > 0
    assert result.n_pairs_accepted + result.n_pairs_skipped + result.n_resets == result.n_iter
    strict_default = Solver(SquaredHinge(lam=1e-3), LBFGS(), Fixed(5), Decaying(0.02, 100),
                            max_iter=400, random_state=0).fit(X, y)
    assert strict_default.n_pairs_skipped == 0          # paper's assumptions hold: no skips


# ---------------------------------------------------------------------------- components


def test_requires_a_smooth_objective() -> None:
    for model in (LBFGS(), FullBFGS(), RegularizedBFGS()):
        with pytest.raises(IncompatibleComponentsError, match="smooth"):
            Solver(objective=Hinge(), curvature=model)
        assert model.needs_secant_pair


@pytest.mark.parametrize("name,cls", [("lbfgs", LBFGS), ("olbfgs", LBFGS), ("bfgs", FullBFGS),
                                      ("obfgs", FullBFGS), ("full_bfgs", FullBFGS),
                                      ("res", RegularizedBFGS),
                                      ("regularized_bfgs", RegularizedBFGS)])
def test_registered_names(name: str, cls: type) -> None:
    assert isinstance(get_registry().create("curvature", name), cls)
    solver = Solver(objective="squared_hinge", curvature=name)
    assert isinstance(solver.curvature, cls)


def test_names_with_parameters() -> None:
    solver = Solver(curvature=("res", {"delta": 1e-2, "Gamma": 0.0}))
    assert solver.curvature == RegularizedBFGS(delta=1e-2, Gamma=0.0)
    assert LBFGS(7).memory == 7                             # safeguards are keyword-only


@pytest.mark.parametrize("bad,match", [
    (lambda: LBFGS(memory=0), "memory"),
    (lambda: LBFGS(memory=2.5), "memory"),
    (lambda: LBFGS(gamma0=0.0), "gamma0"),
    (lambda: LBFGS(min_curvature=-1.0), "min_curvature"),
    (lambda: LBFGS(on_bad_pair="ignore"), "on_bad_pair"),
    (lambda: LBFGS(damping=1.0), "damping"),
    (lambda: FullBFGS(on_nonfinite="warn"), "on_nonfinite"),
    (lambda: FullBFGS(init_scale=0.0), "init_scale"),
    (lambda: RegularizedBFGS(delta=-1e-3), "delta"),
    (lambda: RegularizedBFGS(Gamma=float("nan")), "Gamma"),
    (lambda: RegularizedBFGS(delta=0.5, init_scale=0.4), "exceed delta"),
    (lambda: RegularizedBFGS(delta=1e-3, method="inverse"), "delta=0"),
    (lambda: RegularizedBFGS(method="qr"), "method"),
])
def test_bad_parameters_raise_clear_errors(bad: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        bad()


def test_kernels_reject_wrong_lengths() -> None:
    for kernel in (LBFGSKernel(3), BFGSKernel(3)):
        with pytest.raises(ValueError, match="dim=3"):
            kernel.update_pair(np.ones(4), np.ones(4))
        with pytest.raises(ValueError, match="dim=3"):
            kernel.direction(np.ones(2), np.ones(3))
