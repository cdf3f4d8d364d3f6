"""The stochastic Polyak step, a step rule that sees the point: its formula and its edge cases,
the compiled and Python loops and the NumPy twin taking the same steps, the paths that keep no
dense gradient not running it, and a full-batch solve with it converging."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt import (
    LBFGS,
    AdaGrad,
    Armijo,
    Constant,
    Fixed,
    Full,
    Identity,
    LogLoss,
    Solver,
    SquaredHinge,
)
from sqnopt.curvature.reference import IdentityNumPy
from sqnopt.objectives.reference import SquaredHingeNumPy
from sqnopt.schedules.reference import FixedNumPy
from sqnopt.solver._adaptive_loop import AdaptiveLoop
from sqnopt.solver._scaled_loop import ScaledLoop
from sqnopt.steps import Polyak, PolyakKernel
from sqnopt.steps.reference import PolyakNumPy


@pytest.mark.parametrize("kernel", [PolyakKernel(2.0, 0.5, 0.1),
                                    PolyakNumPy(2.0, 0.5, 0.1).init(None)])  # type: ignore[arg-type]
def test_the_step_is_the_capped_gap_over_the_slope(kernel: object) -> None:
    rng = np.random.default_rng(0)
    w, g = rng.normal(size=6), rng.normal(size=6)
    d = 3.0 * g                                        # a scaled direction: g'd = 3 ||g||^2
    gd = float(g @ d)
    step = kernel.step_at  # type: ignore[attr-defined]
    assert step(0, 0.1 + 1e-3, w, g, d) == pytest.approx(1e-3 / (0.5 * gd), rel=1e-14)
    assert step(0, 1e9, w, g, d) == 2.0                # capped
    assert step(0, 0.1, w, g, d) == 0.0                # at the bound: nothing to gain
    assert step(0, 5.0, w, g, -d) == 0.0               # not a descent direction
    assert math.isnan(step(0, math.nan, w, g, d))      # the driver stops on it
    assert math.isnan(step(0, 1.0, w, g * math.inf, d))
    assert kernel.step_size(3) == 2.0  # type: ignore[attr-defined]
    # the product eps d does not depend on the scale of d
    assert step(0, 1.0, w, g, d) * d == pytest.approx(step(0, 1.0, w, g, 2.0 * d) * 2.0 * d)


@pytest.mark.parametrize("bad", [{"eps_max": 0.0}, {"c": -1.0}, {"f_min": math.inf},
                                 {"eps_max": math.nan}])
def test_bad_parameters_are_refused(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="Polyak"):
        Polyak(**bad)


def _boxes(n: int = 60, p: int = 5) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    X = rng.normal(size=(n, p))
    y = np.where(X @ rng.normal(size=p) + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def test_both_loops_and_the_numpy_twin_take_the_same_steps() -> None:
    X, y = _boxes()
    seq = np.random.default_rng(5).integers(0, X.shape[0], 5 * 80)
    runs = [Solver(SquaredHinge(lam=1e-3), Identity(), Fixed(5), Polyak(eps_max=5.0),
                   batch_sequence=seq, max_iter=80, path=path).fit(X, y)
            for path in ("compiled", "python")]
    twin = Solver(SquaredHingeNumPy(lam=1e-3), IdentityNumPy(), FixedNumPy(5),
                  PolyakNumPy(eps_max=5.0), batch_sequence=seq, max_iter=80).fit(X, y)
    a, b = runs
    assert a.compiled and not b.compiled and not twin.compiled
    np.testing.assert_array_equal(a.w, b.w)
    np.testing.assert_allclose(twin.w, a.w, rtol=1e-10, atol=1e-13)
    # the steps were the point's (a constant step takes others)
    const = Solver(SquaredHinge(lam=1e-3), Identity(), Fixed(5), Constant(0.05),
                   batch_sequence=seq, max_iter=80).fit(X, y)
    assert not np.allclose(const.w, a.w)


def test_paths_without_a_dense_gradient_do_not_run_it() -> None:
    X, y = _boxes(200, 30)
    Xs = sp.csr_matrix(np.where(np.abs(X) > 1.0, X, 0.0))
    scaled = Solver(LogLoss(lam=1e-3), Identity(), Fixed(4), Constant(0.1))
    assert isinstance(scaled.init_state(Xs, y).loop, ScaledLoop)
    polyak = Solver(LogLoss(lam=1e-3), Identity(), Fixed(4), Polyak())
    assert not isinstance(polyak.init_state(Xs, y).loop, ScaledLoop)
    ada = Solver(LogLoss(lam=1e-3), AdaGrad(composite=True), Fixed(1), Polyak())
    state = ada.init_state(Xs, y)
    assert not isinstance(state.loop, AdaptiveLoop)
    res = ada.run(state)
    assert np.all(np.isfinite(res.w))
    with pytest.raises(ValueError, match="uses the point"):
        Solver(LogLoss(lam=1e-3), Identity(), Fixed(4), Polyak(), path="scaled").init_state(Xs, y)


def test_full_batch_polyak_lbfgs_converges() -> None:
    """With ``f_min`` the optimal value the Polyak step is exact in the limit: full-batch
    L-BFGS with it reaches the minimiser."""
    X, y = _boxes(300, 8)
    ref = Solver(LogLoss(lam=1e-2), LBFGS(memory=10), Full(), Armijo(), max_iter=200,
                 gtol=1e-12).fit(X, y)
    fstar = float(ref.fun)
    res = Solver(LogLoss(lam=1e-2), LBFGS(memory=10), Full(),
                 Polyak(eps_max=1.0, c=1.0, f_min=fstar - 1e-9), max_iter=300).fit(X, y)
    assert float(res.fun) - fstar < 1e-6 * fstar


@pytest.mark.parametrize("gradient", ["svrg", "saga"])
def test_under_a_variance_reduced_estimate_the_step_sees_the_batch_gradient(
        gradient: str) -> None:
    """With SVRG or SAGA and the identity, the step is taken from ``f_B(w)`` and its plain
    gradient ``s(w, B)``, the driver computing it beside the estimate (the two loops alike).
    Unfilled, that gradient was 0 and so was every step; now the steps are the formula's -- 0
    only where the estimate is no descent direction for the batch (``g'd <= 0``) -- and the
    run moves."""
    X, y = _boxes()
    steps: dict[str, list[float]] = {"compiled": [], "python": []}
    ws = {}
    for path, record in steps.items():
        res = Solver(LogLoss(lam=1e-3), Identity(), Fixed(10), Polyak(eps_max=1.0),
                     gradient=gradient, random_state=0, max_iter=30, report_every=1,
                     path=path, callback=lambda info, r=record: r.append(info.step)).fit(X, y)
        ws[path] = res.w
    assert steps["compiled"] == steps["python"]
    taken = [e for e in steps["compiled"] if e > 0.0]
    assert min(steps["compiled"]) >= 0.0 and len(taken) >= 27 and np.any(ws["compiled"] != 0.0)
    np.testing.assert_array_equal(ws["compiled"], ws["python"])
