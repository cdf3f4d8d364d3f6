"""The deferred (one-pass) inverse update of the oBFGS kernel: every storage variant -- BLAS
level 2 or the fused SIMD pass, pending terms folded every 1..k passes -- gives the textbook BFGS
matrices and directions, whatever the order of calls; the failure a deferred pair could hide is
reported."""

from __future__ import annotations

import numpy as np
import pytest

from sqnopt.curvature import BFGSKernel
from sqnopt.curvature._bfgs import FUSED_MIN_DIM, _cholesky_upper, default_merge_every
from sqnopt.curvature.reference import DenseBFGSKernelNumPy
from sqnopt.interfaces import CURVATURE_ERROR, PAIR_ACCEPTED, PAIR_RESET

VARIANTS = [dict(fused=False), dict(fused=True, merge_every=1), dict(fused=True, merge_every=2),
            dict(fused=True, merge_every=5), dict(fused=True, merge_every=16)]
IDS = ["blas", "fused-1", "fused-2", "fused-5", "fused-16"]
PLAIN = dict(min_curvature=0.0, on_bad_pair="skip", damping=0.2, on_nonfinite="reset")


def spd_pairs(n: int, count: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    A = Q @ np.diag(np.geomspace(1.0, 30.0, n)) @ Q.T
    return [(v, A @ v) for v in rng.normal(size=(count, n))]


def twin_dir(twin: DenseBFGSKernelNumPy, g: np.ndarray) -> np.ndarray:
    out = np.empty_like(g)
    twin.direction(g, out)
    return out


@pytest.mark.parametrize("kw", VARIANTS, ids=IDS)
@pytest.mark.parametrize("n", [1, 5, 13, 37])
def test_direction_after_every_pair_matches_explicit_B(kw: dict, n: int) -> None:
    """The driver's order: direction, pair, direction, pair, ... (pairs resolved lazily)."""
    rng = np.random.default_rng(n)
    k = BFGSKernel(n, init_scale=2.0, **kw)
    twin = DenseBFGSKernelNumPy(n, 0.0, 0.0, 2.0, **PLAIN)
    out = np.empty(n)
    for t, (v, r) in enumerate(spd_pairs(n, 40, seed=n)):
        g = rng.normal(size=n)
        k.direction(g, out)
        np.testing.assert_allclose(out, twin_dir(twin, g), rtol=1e-9, atol=1e-12, err_msg=f"t={t}")
        assert k.update_pair(v, r) == twin.update_pair(v, r) == PAIR_ACCEPTED
        assert k.n_pending <= k.merge_every + 1
    np.testing.assert_allclose(k.inverse_hessian(), np.linalg.inv(twin.B), rtol=1e-9, atol=1e-12)
    assert k.trace_H == pytest.approx(np.trace(np.linalg.inv(twin.B)), rel=1e-9)
    assert k.n_pending == 0                       # inverse_hessian() folded everything


@pytest.mark.parametrize("kw", VARIANTS, ids=IDS)
def test_pairs_without_directions_and_queries_in_between(kw: dict) -> None:
    """Several pairs in a row (resolved eagerly), matrix queries between pairs, a reset."""
    n = 11
    k = BFGSKernel(n, **kw)
    twin = DenseBFGSKernelNumPy(n, 0.0, 0.0, 1.0, **PLAIN)
    pairs = spd_pairs(n, 30, seed=4)
    g = np.linspace(-1.0, 2.0, n)
    for t, (v, r) in enumerate(pairs):
        assert k.update_pair(v, r) == twin.update_pair(v, r) == PAIR_ACCEPTED
        if t % 7 == 3:
            np.testing.assert_allclose(k.hessian(), twin.B, rtol=1e-8, atol=1e-10)
        if t % 5 == 1:
            np.testing.assert_allclose(k.matvec(g), twin_dir(twin, g), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(k.matvec(g), twin_dir(twin, g), rtol=1e-9, atol=1e-12)
    k.reset()
    np.testing.assert_array_equal(k.inverse_hessian(), np.eye(n))
    assert k.n_pending == 0 and k.trace_H == n


@pytest.mark.parametrize("kw", VARIANTS, ids=IDS)
def test_damping_with_pending_terms_matches_twin(kw: dict) -> None:
    n = 9
    opts = dict(min_curvature=0.0, on_bad_pair="damp", damping=0.3, on_nonfinite="reset")
    k = BFGSKernel(n, damp=True, damping=0.3, **kw)
    twin = DenseBFGSKernelNumPy(n, 0.0, 0.0, 1.0, **opts)
    rng = np.random.default_rng(1)
    out = np.empty(n)
    for t, (v, r) in enumerate(spd_pairs(n, 25, seed=6)):
        if t % 4 == 2:
            r = -0.2 * v                          # negative curvature: damped
        g = rng.normal(size=n)
        k.direction(g, out)
        np.testing.assert_allclose(out, twin_dir(twin, g), rtol=1e-8, atol=1e-12)
        assert k.update_pair(v, r) == twin.update_pair(v, r) == PAIR_ACCEPTED
    assert k.n_damped == twin.n_damped > 0


@pytest.mark.parametrize("kw", VARIANTS, ids=IDS)
def test_nonfinite_products_are_reported(kw: dict) -> None:
    """r'Hr overflows: found at once when the trace bound cannot exclude it (the default), or
    -- with the bound disabled -- when the deferred pair is resolved, then reported by the next
    pair."""
    n = 6
    v, r = spd_pairs(n, 1, seed=2)[0]
    huge = r * 1e160                              # v'r and r'r... r'r overflows, v'r is finite
    for reset in (True, False):
        k = BFGSKernel(n, reset_on_nonfinite=reset, **kw)
        k.update_pair(v, r)
        code = k.update_pair(v, huge)
        assert code == (PAIR_RESET if reset else CURVATURE_ERROR)
    # bound disabled: the pair is accepted, dropped when resolved, and the failure reported next
    k = BFGSKernel(n, **kw)
    k._set_defer_limit(np.inf)
    assert k.update_pair(v, r) == PAIR_ACCEPTED
    H1 = k.inverse_hessian()
    assert k.update_pair(v, huge) == PAIR_ACCEPTED
    out = np.empty(n)
    g = np.ones(n)
    k.direction(g, out)
    np.testing.assert_allclose(out, H1 @ g, rtol=1e-12)    # H unchanged by the failed pair
    assert k.update_pair(v, r) == PAIR_RESET
    np.testing.assert_array_equal(k.inverse_hessian(), np.eye(n))


def test_defaults_and_bad_arguments() -> None:
    assert not BFGSKernel(FUSED_MIN_DIM - 1).fused and BFGSKernel(FUSED_MIN_DIM).fused
    assert BFGSKernel(10).merge_every == 1 == default_merge_every(10)
    assert BFGSKernel(FUSED_MIN_DIM).merge_every == default_merge_every(FUSED_MIN_DIM) >= 2
    with pytest.raises(ValueError, match="merge_every"):
        BFGSKernel(5, fused=True, merge_every=0)
    with pytest.raises(ValueError, match="merge_every"):
        BFGSKernel(5, fused=True, merge_every=17)


def test_fused_and_blas_storage_agree_in_a_long_run() -> None:
    """500 pairs at n = 64 (several hundred folds): the variants stay within rounding."""
    n = 64
    pairs = spd_pairs(n, 500, seed=8)
    ks = [BFGSKernel(n, **kw) for kw in VARIANTS]
    rng = np.random.default_rng(3)
    outs = [np.empty(n) for _ in ks]
    for v, r in pairs:
        g = rng.normal(size=n)
        for k, o in zip(ks, outs):
            k.direction(g, o)
            assert k.update_pair(v, r) == PAIR_ACCEPTED
        for o in outs[1:]:
            np.testing.assert_allclose(o, outs[0], rtol=1e-7, atol=1e-10)


# ---------------------------------------------------------------- RES: the Cholesky form
@pytest.mark.parametrize("own", [True, False], ids=["own-cholesky", "lapack"])
@pytest.mark.parametrize("n", [1, 7, 8, 9, 16, 17, 33, 70])
def test_res_cholesky_kernels_match_explicit_B(own: bool, n: int) -> None:
    """Both factorisations (sq_potrf_upper with its masked last chunk, LAPACK dpotrf) give the
    directions (B^{-1} + Gamma I) g of paper 000 eq. 9 along a run, B included."""
    delta, Gamma = 1e-2, 1e-3
    rng = np.random.default_rng(n)
    k = BFGSKernel(n, delta=delta, Gamma=Gamma, init_scale=2.0, cholesky=True, own_cholesky=own)
    assert k.own_cholesky == own
    twin = DenseBFGSKernelNumPy(n, delta, Gamma, 2.0, **PLAIN)
    out = np.empty(n)
    for v, r in spd_pairs(n, 30, seed=n + 100):
        g = rng.normal(size=n)
        k.direction(g, out)
        np.testing.assert_allclose(out, twin_dir(twin, g), rtol=1e-9, atol=1e-13)
        assert k.update_pair(v, r) == twin.update_pair(v, r) == PAIR_ACCEPTED
    np.testing.assert_allclose(k.hessian(), twin.B, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("n", [1, 3, 8, 9, 15, 16, 17, 31, 64, 100])
def test_own_cholesky_matches_lapack_and_reports_the_failing_pivot(n: int) -> None:
    rng = np.random.default_rng(n)
    Q = rng.normal(size=(n, n))
    S = Q @ Q.T + n * np.eye(n)
    lower_garbage = np.triu(S) + np.tril(np.full((n, n), np.nan), -1)   # lower part never read
    info, U = _cholesky_upper(lower_garbage, own=True)
    info2, U2 = _cholesky_upper(S, own=False)
    assert info == info2 == 0
    np.testing.assert_allclose(U.T @ U, S, rtol=1e-12, atol=1e-12 * n)
    np.testing.assert_allclose(U, U2, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(U, np.linalg.cholesky(S).T, rtol=1e-10, atol=1e-12)
    # indefinite: pivot k fails (LAPACK's info convention, 1-based)
    for k in {0, n // 2, n - 1}:
        E = S.copy()
        E[k, k] = -1e6
        assert _cholesky_upper(E, own=True)[0] == _cholesky_upper(E, own=False)[0] == k + 1
    E = S.copy()
    E[n - 1, n - 1] = np.nan
    assert _cholesky_upper(E, own=True)[0] == n


