"""RES through an eigendecomposition and Woodbury (``RegularizedBFGS(method="eig")``).

The eig form is the Cholesky form in exact arithmetic: long runs against it on the boxes SVM
problem, every refresh interval down to 1 (a rotation of ``Q`` per pair), the residual check's
fallback, skipped pairs that cost no eigendecomposition, and the option's validation. The shared
RES tests (explicit ``B``, ``B >= delta I``, twins, safeguards, SciPy's minimiser) are in
``test_bfgs.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

from sqnopt import Decaying, Fixed, RegularizedBFGS, Solver, SquaredHinge
from sqnopt.curvature import BFGSKernel, RESEigKernel
from sqnopt.curvature._res_eig import default_refresh_every
from sqnopt.datasets import make_boxes
from sqnopt.interfaces import PAIR_ACCEPTED, PAIR_SKIPPED

from conftest import curvature_problem


def _run(method: str, X: np.ndarray, y: np.ndarray, seq: np.ndarray, **kw: object
         ) -> tuple[np.ndarray, object, object]:
    model = RegularizedBFGS(delta=1e-4, Gamma=1e-4, init_scale=100.0, method=method,
                            min_curvature=1e-3, **kw)
    solver = Solver(SquaredHinge(lam=1e-3), model, Fixed(5), Decaying(2e-2, 100),
                    batch_sequence=seq)
    state = solver.init_state(X, y)
    ws = []
    for _ in range(len(seq) // 5 // 50):
        solver.run(state, max_iter=50)
        ws.append(state.w.copy())
    return np.array(ws), state.counters, state.curvature


@pytest.fixture(scope="module")
def boxes40() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The boxes SVM problem at n = 40. A minibatch without a margin violator gives
    ``r = lam v``; with ``lam = 1e-3``, ``delta = 1e-4`` and ``min_curvature = 1e-3`` such pairs
    are skipped by a clear margin (``v'r~ = 0.9e-3 |v|^2``). (With ``delta = lam``, as in the
    paper-003 runs, ``v'r~`` of those pairs is rounding noise and the accept/skip decision -- and
    with it the trajectory -- depends on the last bit of the iterate, in either form.)"""
    X, y = make_boxes(2000, 40, random_state=5)
    seq = np.random.default_rng(6).integers(0, 2000, size=5 * 1500)
    return X, y, seq


@pytest.mark.parametrize("refresh_every", [1, 3, 17, None])
def test_eig_form_follows_the_cholesky_form(boxes40: tuple, refresh_every: int | None) -> None:
    X, y, seq = boxes40
    w_c, n_c, _ = _run("cholesky", X, y, seq)
    w_e, n_e, k = _run("eig", X, y, seq, refresh_every=refresh_every)
    np.testing.assert_allclose(w_e, w_c, rtol=1e-8, atol=1e-12 * np.abs(w_c).max())
    assert (n_e.n_pairs_accepted, n_e.n_pairs_skipped) == (n_c.n_pairs_accepted,
                                                           n_c.n_pairs_skipped)
    assert n_c.n_pairs_skipped > 100 and n_c.n_pairs_accepted > 100
    # one eigendecomposition per refresh_every accepted pairs, none forced by the residual check
    every = k.refresh_every
    assert k.n_refreshes == n_e.n_pairs_accepted // every
    assert k.n_residual_refreshes == 0 and k.last_residual < 1e-13


def test_many_rotations_keep_B_equal_to_the_cholesky_form() -> None:
    """refresh_every = 1 rotates Q after every pair: 400 products Q <- Q U in a row."""
    n = 12
    rng = np.random.default_rng(3)
    A = rng.normal(size=(n, n))
    A = A @ A.T / n + 0.05 * np.eye(n)
    eig = RESEigKernel(n, delta=0.01, Gamma=0.0, init_scale=1.0, refresh_every=1)
    chol = BFGSKernel(n, delta=0.01, Gamma=0.0, init_scale=1.0, cholesky=True)
    for _ in range(400):
        v = rng.normal(size=n)
        r = A @ v + 0.01 * rng.normal(size=n)
        assert eig.update_pair(v, r) == chol.update_pair(v, r) == PAIR_ACCEPTED
    assert eig.n_refreshes == 400
    B = chol.hessian()
    np.testing.assert_allclose(eig.hessian(), B, rtol=1e-10, atol=1e-12 * np.abs(B).max())
    g = rng.normal(size=n)
    np.testing.assert_allclose(eig.matvec(g), np.linalg.solve(B, g), rtol=1e-9)


def test_failed_residual_check_falls_back_to_an_eigendecomposition() -> None:
    """With an unattainable tolerance every Woodbury solve is rejected; the direction then comes
    from a fresh eigendecomposition and is still exact."""
    n = 9
    rng = np.random.default_rng(4)
    A = rng.normal(size=(n, n))
    A = A @ A.T / n + 0.1 * np.eye(n)
    strict = RESEigKernel(n, delta=0.01, Gamma=1e-3, refresh_every=50, residual_tol=1e-300)
    normal = RESEigKernel(n, delta=0.01, Gamma=1e-3, refresh_every=50)
    chol = BFGSKernel(n, delta=0.01, Gamma=1e-3, cholesky=True)
    for t in range(30):
        v = rng.normal(size=n)
        r = A @ v
        for k in (strict, normal, chol):
            k.update_pair(v, r)
        g = rng.normal(size=n)
        ref = chol.matvec(g)
        np.testing.assert_allclose(strict.matvec(g), ref, rtol=1e-10)
        np.testing.assert_allclose(normal.matvec(g), ref, rtol=1e-10)
    assert strict.n_residual_refreshes == 30 and strict.n_refreshes == 30
    assert normal.n_residual_refreshes == 0 and normal.n_refreshes == 0
    assert 0.0 < normal.last_residual < 1e-14


def test_skipped_pairs_cost_no_eigendecomposition() -> None:
    n = 6
    k = RESEigKernel(n, delta=0.1, Gamma=0.0, refresh_every=2)
    v = np.arange(1.0, n + 1)
    assert k.update_pair(v, 2.0 * v) == PAIR_ACCEPTED
    for _ in range(5):
        assert k.update_pair(v, 0.1 * v) == PAIR_SKIPPED       # v'r~ = 0
    assert (k.n_pending, k.n_refreshes) == (1, 0)
    assert k.update_pair(v, 3.0 * v) == PAIR_ACCEPTED
    assert (k.n_pending, k.n_refreshes) == (0, 1)
    assert k.shift == 0.0


def test_auto_scale_and_reset() -> None:
    n = 5
    k = RESEigKernel(n, delta=0.01, Gamma=0.0, auto_scale=True, refresh_every=2)
    v = np.ones(n)
    r = 4.0 * v
    assert k.update_pair(v, r) == PAIR_ACCEPTED
    chol = BFGSKernel(n, delta=0.01, Gamma=0.0, auto_scale=True, cholesky=True)
    chol.update_pair(v, r)
    np.testing.assert_allclose(k.hessian(), chol.hessian(), rtol=1e-12)
    k.update_pair(v + 0.5 * np.arange(n), r)
    k.reset()
    np.testing.assert_array_equal(k.hessian(), np.eye(n))
    assert (k.n_pending, k.shift) == (0, 0.0)


def test_auto_picks_the_eig_form_from_EIG_MIN_DIM_parameters() -> None:
    from sqnopt.curvature._components import EIG_MIN_DIM

    model = RegularizedBFGS(delta=1e-3)
    assert model.resolved_method(EIG_MIN_DIM - 1) == "cholesky"
    assert model.resolved_method(EIG_MIN_DIM) == "eig"
    assert RegularizedBFGS(delta=0.0).resolved_method(10 * EIG_MIN_DIM) == "inverse"
    assert model.resolved_method(40_000) == "cholesky"     # beyond dsyevd's 32-bit workspace
    assert RegularizedBFGS(method="cholesky").resolved_method(10 * EIG_MIN_DIM) == "cholesky"
    assert isinstance(model.init(curvature_problem(EIG_MIN_DIM)), RESEigKernel)
    assert isinstance(model.init(curvature_problem(EIG_MIN_DIM - 1)), BFGSKernel)
    k = RegularizedBFGS(refresh_every=7).init(curvature_problem(EIG_MIN_DIM))
    assert isinstance(k, RESEigKernel) and k.refresh_every == 7


def test_default_refresh_interval_grows_like_n_to_two_thirds() -> None:
    assert default_refresh_every(1) == 4
    assert default_refresh_every(1000) == 150
    assert RegularizedBFGS(method="eig").init(curvature_problem(64)).refresh_every == 24


@pytest.mark.parametrize("kwargs,match", [
    ({"method": "eig", "refresh_every": 0}, "refresh_every must be an integer >= 1"),
    ({"method": "eig", "refresh_every": 2.5}, "refresh_every must be an integer >= 1"),
    ({"method": "eig", "refresh_every": True}, "refresh_every must be an integer >= 1"),
    ({"method": "cholesky", "refresh_every": 8}, "applies to method='eig'"),
    ({"method": "qr"}, "'auto', 'inverse', 'cholesky' or 'eig'"),
])
def test_option_validation(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        RegularizedBFGS(**kwargs)  # type: ignore[arg-type]


def test_kernel_validation() -> None:
    with pytest.raises(ValueError, match="init_scale must be finite and > delta"):
        RESEigKernel(3, delta=1.0, init_scale=1.0)
    with pytest.raises(ValueError, match="residual_tol"):
        RESEigKernel(3, residual_tol=0.0)
    with pytest.raises(ValueError, match="too large.*consider LBFGS"):
        RESEigKernel(40_000)
