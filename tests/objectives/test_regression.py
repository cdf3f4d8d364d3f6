"""Regression objectives: compiled kernels against their NumPy twins (values, gradients,
Hessians; a solve iterate by iterate), extreme scores, and the data layer's real targets."""

from __future__ import annotations

import numpy as np
import pytest

from sqnopt import Solver
from sqnopt.curvature import Identity
from sqnopt.curvature.reference import IdentityNumPy
from sqnopt.data import encode_labels, prepare
from sqnopt.objectives import Huber, Poisson, SquaredError
from sqnopt.objectives.reference import HuberNumPy, PoissonNumPy, SquaredErrorNumPy
from sqnopt.schedules import Fixed
from sqnopt.schedules.reference import FixedNumPy
from sqnopt.steps import Constant
from sqnopt.steps.reference import ConstantNumPy

from conftest import as_format

FORMATS = [("dense", np.float64), ("dense", np.float32), ("csr", np.float64), ("csr", np.float32)]
PAIRS = [(SquaredError, SquaredErrorNumPy, {}), (Huber, HuberNumPy, {"epsilon": 0.5}),
         (Poisson, PoissonNumPy, {})]


def _problem(fmt: str, dtype: type, seed: int, *, intercept: bool = True,
             weighted: bool = True):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(40, 7))
    X[rng.random(X.shape) < 0.4] = 0.0
    s = X @ (0.3 * rng.normal(size=7)) + 0.2
    y = rng.poisson(np.exp(s)).astype(np.float64)     # counts: every loss's domain
    sw = rng.random(40) * 3 if weighted else None
    data = prepare(as_format(X, fmt, dtype), y, sample_weight=sw, fit_intercept=intercept,
                   label_kind="regression")
    return data, rng


@pytest.mark.parametrize("fmt,dtype", FORMATS)
@pytest.mark.parametrize("component,twin,params", PAIRS)
def test_compiled_regression_objectives_match_numpy_twins(fmt, dtype, component, twin,
                                                          params) -> None:
    data, rng = _problem(fmt, dtype, 3)
    kc, kt = component(lam=0.2, **params).init(data), twin(lam=0.2, **params).init(data)
    for _ in range(5):
        w = rng.normal(size=data.dim)
        batch = rng.integers(0, data.n_samples, 6).astype(np.intp)
        gc, gt = np.empty_like(w), np.empty_like(w)
        assert kc.gradient(w, batch, gc) == pytest.approx(kt.gradient(w, batch, gt), rel=1e-12)
        np.testing.assert_allclose(gc, gt, rtol=1e-12, atol=1e-14)
        assert kc.value(w) == pytest.approx(kt.value(w), rel=1e-12)
        assert kc.full_gradient(w, gc) == pytest.approx(kt.full_gradient(w, gt), rel=1e-12)
        np.testing.assert_allclose(gc, gt, rtol=1e-12, atol=1e-14)
        v = rng.normal(size=data.dim)
        hc, ht = np.empty_like(w), np.empty_like(w)
        kc.hessian_product(w, batch, v, hc)
        kt.hessian_product(w, batch, v, ht)
        np.testing.assert_allclose(hc, ht, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(kc.hessian_factors(w, batch), kt.hessian_factors(w, batch),
                                   rtol=1e-13)


@pytest.mark.parametrize("component,twin,params", PAIRS)
@pytest.mark.parametrize("fmt,dtype", [("dense", np.float64), ("csr", np.float32)])
def test_compiled_regression_matches_twin_iterate_by_iterate(component, twin, params, fmt,
                                                             dtype) -> None:
    """SGD with the same injected batches: the compiled loop and the Python loop over the twin
    give the same iterates."""
    data, _ = _problem(fmt, dtype, 5, weighted=False)
    X, y = data.X, np.asarray(data.y)
    seq = np.random.default_rng(7).integers(0, X.shape[0], 600)
    runs = []
    for objective, curvature, schedule, step in (
            (component(lam=1e-2, **params), Identity(), Fixed(4), Constant(0.05)),
            (twin(lam=1e-2, **params), IdentityNumPy(), FixedNumPy(4), ConstantNumPy(0.05))):
        iterates: list[np.ndarray] = []
        res = Solver(objective, curvature, schedule, step, batch_sequence=seq, max_iter=100,
                     fit_intercept=True, report_every=1,
                     callback=lambda info: iterates.append(np.array(info.w)) and None
                     ).fit(X, y)
        runs.append((np.array(iterates), res))
    (a, ra), (b, rb) = runs
    assert ra.compiled and not rb.compiled
    assert a.shape[0] >= 100
    np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    assert ra.fun == pytest.approx(rb.fun, rel=1e-10)


def test_losses_at_extreme_scores() -> None:
    """Exact, finite values and derivatives at scores far from the targets; Poisson's are +inf
    beyond log(DBL_MAX) (no overflow evaluated) and exact below it."""
    data = prepare(np.eye(3), [0.0, 1.0, 4.0], label_kind="regression")
    s = np.array([-1e300, -1e4, -745.0, 0.0, 700.0, 709.78, 709.79, 1e4, 1e300])
    y = np.full(s.shape, 3.0)
    sq = SquaredError(lam=0.0).init(data)
    loss, d = sq.py_loss_and_dloss(s[1:-1], y[1:-1])
    np.testing.assert_array_equal(d, s[1:-1] - 3.0)
    np.testing.assert_allclose(loss, 0.5 * (s[1:-1] - 3.0) ** 2, rtol=1e-15)
    hub = Huber(lam=0.0, epsilon=1.5).init(data)
    loss, d = hub.py_loss_and_dloss(s, y)
    assert np.all(np.isfinite(loss[1:-1])) and set(np.abs(d).tolist()) == {1.5}
    np.testing.assert_array_equal(hub.py_d2loss(s, y), (np.abs(s - y) <= 1.5).astype(float))
    poi = Poisson(lam=0.0).init(data)
    with np.errstate(all="raise"):         # nothing overflows, even where exp would
        loss, d = poi.py_loss_and_dloss(s, y)
        d2 = poi.py_d2loss(s, y)
    inside = s <= Poisson.max_score
    np.testing.assert_allclose(loss[inside], np.exp(s[inside]) - 3.0 * s[inside], rtol=1e-15)
    np.testing.assert_allclose(d[inside], np.exp(s[inside]) - 3.0, rtol=1e-15)
    assert np.all(np.isfinite(loss[inside])) and np.all(np.isposinf(loss[~inside]))
    assert np.all(np.isposinf(d[~inside])) and np.all(np.isposinf(d2[~inside]))


def test_regression_targets_in_the_data_layer() -> None:
    y = np.array([3, -1, 2], dtype=np.int64)
    enc, classes = encode_labels(y, "regression")
    assert enc.dtype == np.float64 and classes.shape == (0,)
    np.testing.assert_array_equal(enc, [3.0, -1.0, 2.0])
    assert enc is not y and y.dtype == np.int64            # the caller's array untouched
    with pytest.raises(ValueError, match="NaN or infinity"):
        encode_labels([1.0, np.inf], "regression")
    with pytest.raises(ValueError, match="not classes"):
        encode_labels([1.0, 2.0], "regression", classes=[1.0, 2.0])
    with pytest.raises(ValueError, match="3 targets but X has 2"):
        prepare(np.eye(2), [1.0, 2.0, 3.0], label_kind="regression")
    with pytest.raises(ValueError, match=r"poisson loss needs targets >= 0.*y\[1\] = -1"):
        Poisson().init(prepare(np.eye(3), y, label_kind="regression"))
