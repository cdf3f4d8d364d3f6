"""Growing batches that extend the last one: the subset sampler's nested draws, and the driver's
reuse of the previous batch's gradient (sqnopt/solver/_loop.pyx, module docstring)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from sqnopt import LBFGS, Armijo, Geometric, LogLoss, Solver
from sqnopt.data import make_rows
from sqnopt.objectives import LogisticKernel
from sqnopt.solver._sampler import SubsetSampler


def _draws(sampler: SubsetSampler, sizes: list[int]) -> list[np.ndarray]:
    return [np.array(sampler.draw(s)) for s in sizes]


def test_nested_draws_extend_the_last_and_stay_uniform_subsets() -> None:
    n = 50
    sizes = [5, 12, 30, 30, 8, 20, 50, 7]
    d = _draws(SubsetSampler(n, np.random.PCG64(3), nested=True), sizes)
    for a, b in ((0, 1), (1, 2), (4, 5)):               # growing: the last batch comes first
        np.testing.assert_array_equal(d[b][: sizes[a]], d[a])
    for b in d:
        assert np.unique(b).shape[0] == b.shape[0] and b.min() >= 0 and b.max() < n
    np.testing.assert_array_equal(d[6], np.arange(n))   # the whole set, in order
    assert not np.array_equal(d[3], d[2])               # no larger: drawn afresh
    # every index equally likely in a growing batch's new positions (a loose frequency check)
    counts = np.zeros(n)
    sampler = SubsetSampler(n, np.random.PCG64(4), nested=True)
    for _ in range(2000):
        first, second = _draws(sampler, [10, 25])
        counts[second[10:]] += 1
        sampler.draw(n)                                  # the whole set: the next draw is fresh
    assert counts.min() > 0.6 * counts.mean() and counts.max() < 1.4 * counts.mean()


def test_draws_are_independent_without_nested_and_the_state_keeps_the_last_size() -> None:
    d = _draws(SubsetSampler(50, np.random.PCG64(3)), [5, 12])
    assert not np.array_equal(d[1][:5], d[0])
    gen_a = np.random.PCG64(3)
    a = SubsetSampler(50, gen_a, nested=True)
    a.draw(9)
    gen_b = np.random.PCG64(0)
    gen_b.state = gen_a.state                # the solve's generator is checkpointed apart
    b = SubsetSampler(50, gen_b, nested=True)
    b.set_state(a.get_state())
    assert a.get_state()["last"] == 9
    np.testing.assert_array_equal(a.draw(20), b.draw(20))


@pytest.mark.parametrize("sparse", [False, True])
def test_the_combined_gradient_is_the_batch_gradient(sparse: bool) -> None:
    """``(p s(w, B) + q s(w, R)) / (p + q)`` is ``s(w, B + R)`` to rounding: each term is a mean
    over its rows plus the same regulariser (weighted rows, an intercept)."""
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 15)) * (rng.random((300, 15)) < 0.5)
    y = np.where(rng.random(300) < 0.4, -1.0, 1.0)
    sw = rng.uniform(0.5, 2.0, 300)
    sw /= sw.mean()
    kern = LogisticKernel(make_rows(sp.csr_matrix(X) if sparse else X, y, sw, sw, True), 0.03)
    w = rng.normal(size=kern.n_params) * 0.2
    order = rng.permutation(300).astype(np.intp)
    B = order[:40]
    for rows, whole in ((order[40:170], order[:170]),                # the new rows
                        (np.sort(order[40:]), np.arange(300, dtype=np.intp))):  # the others
        gB, gR, g = (np.empty(kern.n_params) for _ in range(3))
        fB, fR, f = kern.gradient(w, B, gB), kern.gradient(w, rows, gR), kern.gradient(w, whole, g)
        p, q = B.shape[0], rows.shape[0]
        np.testing.assert_allclose((p * gB + q * gR) / (p + q), g, rtol=1e-12, atol=1e-14)
        assert (p * fB + q * fR) / (p + q) == pytest.approx(f, rel=1e-13)


def _growing(X: Any, y: Any, path: str) -> Any:
    return Solver(LogLoss(lam=1e-2), curvature=LBFGS(5), schedule=Geometric(b1=10, rate=2.0),
                  step=Armijo(), sampling="subset", random_state=2, path=path, max_iter=9,
                  gtol=None).fit(X, y)


def test_the_driver_evaluates_only_the_new_rows_of_a_growing_batch(boxes: Any) -> None:
    X, y = boxes                                         # 400 rows
    res = _growing(X, y, "generic")
    # batches 10, 20, 40, 80, 160, 320, then the whole set three times: each growing batch
    # and the first whole set reuse the last batch's gradient (10 + ... + 320 rows), the next
    # two whole sets the whole set's (without the nesting: only these 2 x 400)
    assert res.n_samples == 10 + 20 + 40 + 80 + 160 + 320 + 3 * 400
    assert res.n_reused_samples == 10 + 20 + 40 + 80 + 160 + 320 + 2 * 400
    twin = _growing(X, y, "python")
    np.testing.assert_array_equal(res.w, twin.w)
    assert res.n_reused_samples == twin.n_reused_samples


def test_the_solver_nests_only_plain_gradients_without_curvature_batches(boxes: Any) -> None:
    from sqnopt import Fixed, HessianLBFGS, ProgressiveBatch

    X, y = boxes

    def nested(**kw: Any) -> bool:
        state = Solver(LogLoss(lam=1e-2), sampling="subset", random_state=0, **kw).init_state(X, y)
        return bool(state.sampler.nested)

    assert nested(curvature=LBFGS(5), schedule=Geometric(b1=10, rate=2.0), step=Armijo())
    assert not nested(curvature=LBFGS(5), schedule=Fixed(8), step=Armijo(),
                      gradient=ProgressiveBatch())
    assert not nested(curvature=HessianLBFGS(5), schedule=Geometric(b1=10, rate=2.0),
                      curvature_schedule=Fixed(20), step=Armijo())
