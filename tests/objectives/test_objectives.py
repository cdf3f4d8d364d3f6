"""Objectives: finite-difference gradients, extreme margins, compiled vs NumPy twins."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt.data import prepare
from sqnopt.objectives import Hinge, LogLoss, SquaredHinge
from sqnopt.objectives.reference import HingeNumPy, LogLossNumPy, SquaredHingeNumPy

from conftest import as_format

FORMATS = [("dense", np.float64), ("dense", np.float32), ("csr", np.float64), ("csr", np.float32)]
SMOOTH = [(SquaredHinge, SquaredHingeNumPy), (LogLoss, LogLossNumPy)]
ALL = SMOOTH + [(Hinge, HingeNumPy)]


def _problem(fmt: str, dtype: type, seed: int, intercept: bool, weighted: bool):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(40, 7))
    X[rng.random(X.shape) < 0.4] = 0.0
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=40) > 0, 1, -1)
    sw = rng.random(40) * 3 if weighted else None
    return prepare(as_format(X, fmt, dtype), y, sample_weight=sw, fit_intercept=intercept), rng


def _fd_gradient(f, w: np.ndarray, h: float = 1e-6) -> np.ndarray:
    g = np.empty_like(w)
    for j in range(w.shape[0]):
        e = np.zeros_like(w)
        e[j] = h
        g[j] = (f(w + e) - f(w - e)) / (2 * h)
    return g


@pytest.mark.parametrize("fmt,dtype", FORMATS)
@pytest.mark.parametrize("component,_twin", SMOOTH)
@pytest.mark.parametrize("seed,intercept,weighted", [(0, False, False), (1, True, True)])
def test_full_gradient_matches_finite_differences(fmt, dtype, component, _twin, seed, intercept,
                                                  weighted) -> None:
    data, rng = _problem(fmt, dtype, seed, intercept, weighted)
    kernel = component(lam=0.3).init(data)
    w = 0.3 * rng.normal(size=kernel.n_params)
    g = np.empty_like(w)
    f0 = kernel.full_gradient(w, g)
    assert f0 == pytest.approx(kernel.value(w), rel=1e-14)
    np.testing.assert_allclose(g, _fd_gradient(kernel.value, w), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("fmt,dtype", FORMATS)
@pytest.mark.parametrize("component,_twin", SMOOTH)
def test_minibatch_gradient_matches_finite_differences(fmt, dtype, component, _twin) -> None:
    data, rng = _problem(fmt, dtype, 2, True, True)
    kernel = component(lam=0.1).init(data)
    batch = rng.integers(0, data.n_samples, 9).astype(np.intp)
    w = 0.3 * rng.normal(size=kernel.n_params)
    g = np.empty_like(w)
    kernel.gradient(w, batch, g)

    def fbatch(v: np.ndarray) -> float:
        return kernel.gradient(v, batch, np.empty_like(v))

    np.testing.assert_allclose(g, _fd_gradient(fbatch, w), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("fmt,dtype", FORMATS)
@pytest.mark.parametrize("component,twin", ALL)
def test_compiled_objectives_match_numpy_twins(fmt, dtype, component, twin) -> None:
    data, rng = _problem(fmt, dtype, 3, True, True)
    kc, kt = component(lam=0.2).init(data), twin(lam=0.2).init(data)
    for _ in range(5):
        w = rng.normal(size=data.dim)
        batch = rng.integers(0, data.n_samples, 6).astype(np.intp)
        gc, gt = np.empty_like(w), np.empty_like(w)
        assert kc.gradient(w, batch, gc) == pytest.approx(kt.gradient(w, batch, gt), rel=1e-12)
        np.testing.assert_allclose(gc, gt, rtol=1e-12, atol=1e-14)
        assert kc.value(w) == pytest.approx(kt.value(w), rel=1e-12)
        assert kc.full_gradient(w, gc) == pytest.approx(kt.full_gradient(w, gt), rel=1e-12)
        np.testing.assert_allclose(gc, gt, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("fmt,dtype", FORMATS)
@pytest.mark.parametrize("component,twin", ALL)
def test_value_at_zero_reads_no_row_and_matches_the_general_sum(fmt, dtype, component,
                                                                 twin) -> None:
    """``F(0)`` (where every solve starts; the divergence monitor's reference) takes the shortcut
    of all-zero margins: the same value, to the last bit, as the general loop; a single nonzero
    entry (or a NaN) takes the general loop."""
    data, rng = _problem(fmt, dtype, 4, True, True)
    kc, kt = component(lam=0.2).init(data), twin(lam=0.2).init(data)
    zero = np.zeros(data.dim)
    f0 = kc.value(zero)
    assert f0 == pytest.approx(kt.value(zero), rel=1e-15)
    assert kc.value(-zero) == f0                       # -0.0 entries are zero too
    tiny = zero.copy()
    tiny[-1] = 1e-300     # not zero: the general loop, whose margins +-1e-300 give loss(0)
    assert kc.value(tiny) == f0                        # the same sum, bit for bit
    far = zero.copy()
    far[0] = 50.0
    assert kc.value(far) == pytest.approx(kt.value(far), rel=1e-12) and kc.value(far) != f0
    nan = zero.copy()
    nan[1] = np.nan
    assert np.isnan(kc.value(nan))


def test_logistic_is_exact_and_finite_at_extreme_margins() -> None:
    kernel = LogLoss(lam=0.0).init(prepare(np.eye(2), [0, 1]))
    m = np.array([-1e308, -1e4, -745.0, -40.0, -1e-12, 0.0, 1e-12, 40.0, 745.0, 1e4, 1e308])
    loss = kernel.py_loss(m)
    d = kernel.py_dloss_dmargin(m)
    assert np.all(np.isfinite(loss)) and np.all(np.isfinite(d))
    # log(1 + e^{-m}) -> -m for m -> -inf, -> e^{-m} for m -> +inf
    assert loss[1] == -m[1] and loss[0] == 1e308
    assert loss[9] == 0.0 or loss[9] < 1e-300
    assert loss[7] == pytest.approx(np.exp(-40.0), rel=1e-14)
    assert loss[3] == pytest.approx(40.0 + np.exp(-40.0), rel=1e-15)
    assert loss[5] == pytest.approx(np.log(2.0), rel=1e-15)
    np.testing.assert_allclose(d[[0, 1, 2]], -1.0)
    assert d[5] == -0.5
    assert d[7] == pytest.approx(-np.exp(-40.0), rel=1e-14)
    assert d[10] == 0.0 or abs(d[10]) < 1e-300
    assert np.all(d <= 0) and np.all(np.diff(d) >= 0)  # monotone, never the wrong sign


def test_squared_hinge_and_hinge_values() -> None:
    data = prepare(np.eye(2), [0, 1])
    sh = SquaredHinge(lam=0.0).init(data)
    hi = Hinge(lam=0.0).init(data)
    m = np.array([-2.0, 0.0, 0.5, 1.0, 3.0])
    np.testing.assert_array_equal(sh.py_loss(m), [9.0, 1.0, 0.25, 0.0, 0.0])
    np.testing.assert_array_equal(sh.py_dloss_dmargin(m), [-6.0, -2.0, -1.0, 0.0, 0.0])
    np.testing.assert_array_equal(hi.py_loss(m), [3.0, 1.0, 0.5, 0.0, 0.0])
    np.testing.assert_array_equal(hi.py_dloss_dmargin(m), [-1.0, -1.0, -1.0, 0.0, 0.0])


@pytest.mark.parametrize("objective", [SquaredHinge, LogLoss, Hinge])
def test_combined_loss_call_equals_the_two_calls_bit_for_bit(objective: type) -> None:
    # the gradients call loss_and_dloss_dmargin once per row; the value paths call loss alone
    kernel = objective(lam=0.0).init(prepare(np.eye(2), [0, 1]))
    m = np.array([-1e308, -1e4, -745.0, -40.0, -1.0, -1e-12, -0.0, 0.0, 1e-12, 0.5,
                  np.nextafter(1.0, 0.0), 1.0, np.nextafter(1.0, 2.0), 40.0, 745.0, 1e4, 1e308])
    loss, d = kernel.py_loss_and_dloss_dmargin(m)
    assert loss.tobytes() == kernel.py_loss(m).tobytes()
    assert d.tobytes() == kernel.py_dloss_dmargin(m).tobytes()
    assert kernel.py_loss_and_dloss_dmargin(0.5) == (kernel.py_loss(0.5), kernel.py_dloss_dmargin(0.5))
    # the general path (lists, strided and 0-d arrays) gives what the fast paths give
    for other, part in ((m.tolist(), slice(None)), (m[::2], slice(None, None, 2)),
                        (np.asarray(m[3]), 3)):
        lo, do = kernel.py_loss_and_dloss_dmargin(other)
        assert np.asarray(lo).tobytes() == np.asarray(loss[part]).tobytes()
        assert np.asarray(do).tobytes() == np.asarray(d[part]).tobytes()


def test_intercept_is_not_regularized() -> None:
    data = prepare(np.ones((4, 2)), [0, 1, 0, 1], fit_intercept=True)
    kernel = SquaredHinge(lam=2.0).init(data)
    g = np.empty(3)
    w = np.array([0.0, 0.0, 5.0])
    f = kernel.full_gradient(w, g)
    # loss: y=-1 -> (1+5)^2 = 36, y=+1 -> 0; no regularisation of the intercept
    assert f == pytest.approx(18.0)
    assert g[2] == pytest.approx(6.0)  # mean over -1 samples of 2*(1+5)*1 / 2
    assert g[0] == pytest.approx(6.0) and g[1] == pytest.approx(6.0)


def test_sample_weights_equal_repeated_rows() -> None:
    rng = np.random.default_rng(4)
    X = rng.normal(size=(10, 3))
    y = np.where(rng.random(10) < 0.5, -1, 1)
    reps = rng.integers(1, 4, 10)
    weighted = LogLoss(lam=0.1).init(prepare(X, y, sample_weight=reps))
    repeated = LogLoss(lam=0.1).init(prepare(np.repeat(X, reps, axis=0), np.repeat(y, reps)))
    w = rng.normal(size=3)
    assert weighted.value(w) == pytest.approx(repeated.value(w), rel=1e-13)
    ga, gb = np.empty(3), np.empty(3)
    weighted.full_gradient(w, ga)
    repeated.full_gradient(w, gb)
    np.testing.assert_allclose(ga, gb, rtol=1e-12)


def test_kernel_python_api_checks_shapes() -> None:
    kernel = LogLoss().init(prepare(sp.csr_matrix(np.eye(3)), [0, 1, 0]))
    with pytest.raises(ValueError, match="n_params=3"):
        kernel.value(np.zeros(4))
    with pytest.raises(IndexError, match="out of range"):
        kernel.gradient(np.zeros(3), np.array([5], dtype=np.intp), np.zeros(3))
    with pytest.raises(ValueError, match="at least one index"):
        kernel.gradient(np.zeros(3), np.array([], dtype=np.intp), np.zeros(3))
