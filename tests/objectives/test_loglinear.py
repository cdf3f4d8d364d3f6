"""Log-linear objectives (Softmax, BinaryLogistic, general LogLinear): values, gradients,
numerics at extreme scores, agreement with the NumPy twins, and input errors."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt import BinaryLogistic, LogLinear, LogLoss, Softmax, Solver, get_registry
from sqnopt.data import prepare
from sqnopt.objectives import softmax_joint_features
from sqnopt.objectives.reference import BinaryLogisticNumPy, LogLinearNumPy, SoftmaxNumPy
from tests.conftest import as_format

FORMATS = [("dense", np.float64), ("dense", np.float32), ("csr", np.float64), ("csr", np.float32)]


def _multiclass(n: int = 40, p: int = 6, K: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    X[rng.random(size=X.shape) < 0.4] = 0.0          # some sparsity
    y = rng.integers(0, K, size=n)
    y[:K] = np.arange(K)
    return X, y


def _fd_gradient(f, w: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    g = np.empty_like(w)
    for j in range(w.shape[0]):
        e = np.zeros_like(w)
        e[j] = eps
        g[j] = (f(w + e) - f(w - e)) / (2 * eps)
    return g


def _kernel(obj, X, y, **kw):
    return obj.init(prepare(X, y, label_kind=obj.label_kind, **kw))


@pytest.mark.parametrize("fmt,dtype", FORMATS)
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_softmax_gradient_matches_finite_differences(fmt, dtype, fit_intercept):
    X, y = _multiclass()
    k = _kernel(Softmax(lam=0.05), as_format(X, fmt, dtype), y, fit_intercept=fit_intercept)
    assert k.n_params == 3 * (6 + fit_intercept)
    w = np.random.default_rng(1).normal(size=k.n_params)
    g = np.zeros_like(w)
    f = k.full_gradient(w, g)
    assert f == pytest.approx(k.value(w), rel=1e-13)
    np.testing.assert_allclose(g, _fd_gradient(k.value, w), rtol=1e-6, atol=1e-8)
    # minibatch gradient: mean over the batch (repeated indices count twice)
    batch = np.array([0, 3, 3, 7, 11], dtype=np.intp)
    gb = np.zeros_like(w)
    fb = k.gradient(w, batch, gb)
    sub = _kernel(Softmax(lam=0.05), as_format(X[batch], fmt, dtype), y[batch],
                  fit_intercept=fit_intercept, classes=np.arange(3))
    gs = np.zeros_like(w)
    assert fb == pytest.approx(sub.full_gradient(w, gs), rel=1e-12)
    np.testing.assert_allclose(gb, gs, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("fmt,dtype", FORMATS)
def test_binary_logistic_equals_logloss(fmt, dtype):
    rng = np.random.default_rng(2)
    X = as_format(rng.normal(size=(50, 5)), fmt, dtype)
    y = rng.choice([-3, 7], size=50)
    w = rng.normal(size=6) * 3
    sw = rng.random(50) + 0.2
    a = _kernel(BinaryLogistic(lam=0.1), X, y, fit_intercept=True, sample_weight=sw)
    b = _kernel(LogLoss(lam=0.1), X, y, fit_intercept=True, sample_weight=sw)
    ga, gb = np.zeros(6), np.zeros(6)
    assert a.full_gradient(w, ga) == b.full_gradient(w, gb)
    np.testing.assert_array_equal(ga, gb)
    batch = np.array([1, 4, 4, 9], dtype=np.intp)
    assert a.gradient(w, batch, ga) == b.gradient(w, batch, gb)
    np.testing.assert_array_equal(ga, gb)
    np.testing.assert_allclose(ga, _fd_gradient(lambda v: a.gradient(v, batch, np.zeros(6)), w),
                               rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("fmt,dtype", FORMATS)
def test_general_loglinear_reproduces_softmax(fmt, dtype):
    X, y = _multiclass()
    soft = _kernel(Softmax(lam=0.05), as_format(X, fmt, dtype), y)
    joint = softmax_joint_features(as_format(X, fmt, dtype), 3)
    ll = _kernel(LogLinear(n_outputs=3, lam=0.05), joint, y)
    assert ll.n_params == soft.n_params == 18
    w = np.random.default_rng(3).normal(size=18)
    g1, g2 = np.zeros(18), np.zeros(18)
    assert ll.full_gradient(w, g1) == pytest.approx(soft.full_gradient(w, g2), rel=1e-13)
    np.testing.assert_allclose(g1, g2, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("fmt,dtype", FORMATS)
def test_loglinear_base_measure_and_gradient(fmt, dtype):
    rng = np.random.default_rng(4)
    n, K, p = 30, 4, 5
    X = rng.normal(size=(n, K * p))
    y = rng.integers(0, K, size=n)
    y[:K] = np.arange(K)
    h = rng.random((n, K)) + 0.1
    h[np.arange(n), (y + 1) % K] = 0.0                       # exclude one wrong output each
    obj = LogLinear(n_outputs=K, lam=0.02, base_measure=h)
    k = _kernel(obj, as_format(X, fmt, dtype), y)
    w = rng.normal(size=p)
    g = np.zeros(p)
    f = k.full_gradient(w, g)
    # direct formula: -log p(y_i | x_i) with p proportional to h exp(theta . f)
    Xd = np.asarray(as_format(X, "dense", dtype), dtype=np.float64)
    s = np.einsum("nkp,p->nk", Xd.reshape(n, K, p), w)
    with np.errstate(divide="ignore"):
        s = s + np.log(h)
    m = s.max(axis=1, keepdims=True)
    lse = (m + np.log(np.exp(s - m).sum(axis=1, keepdims=True))).ravel()
    expected = np.mean(lse - s[np.arange(n), y]) + 0.01 * w @ w
    assert f == pytest.approx(expected, rel=1e-12)
    np.testing.assert_allclose(g, _fd_gradient(k.value, w), rtol=1e-6, atol=1e-9)
    twin = _kernel(LogLinearNumPy(n_outputs=K, lam=0.02, base_measure=h), as_format(X, fmt, dtype), y)
    gt = np.zeros(p)
    assert twin.full_gradient(w, gt) == pytest.approx(f, rel=1e-12)
    np.testing.assert_allclose(gt, g, rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("scale", [1e4, -1e4])
def test_softmax_extreme_scores_stay_finite_and_exact(scale):
    # one feature, three classes; scores are scale * (w_k) for x = 1
    X = np.ones((3, 1))
    y = np.array([0, 1, 2])
    k = _kernel(Softmax(lam=0.0), X, y)
    w = np.array([1.0, 0.0, -1.0]) * scale        # scores (s, 0, -s)
    g = np.zeros(3)
    f = k.full_gradient(w, g)
    a = abs(scale)
    # per-sample losses: lse - s_y with lse = a (+ log1p(2e^{-a}) ~ 0 exactly in float64)
    losses = [a - scale, a, a + scale]
    assert f == pytest.approx(np.mean(losses), rel=1e-15)
    assert np.all(np.isfinite(g))
    # gradient of the mean: (1/3) sum_i (p - e_{y_i}) x_i, with p the one-hot of the max class
    p = np.array([1.0, 0.0, 0.0]) if scale > 0 else np.array([0.0, 0.0, 1.0])
    np.testing.assert_allclose(g, (3 * p - 1.0) / 3.0, atol=1e-15)


def test_softmax_tiny_loss_is_not_rounded_to_zero():
    X = np.ones((1, 1))
    k = _kernel(Softmax(lam=0.0), X, np.array([0]), classes=np.arange(2))
    w = np.array([40.0, 0.0])
    assert k.value(w) == pytest.approx(np.log1p(np.exp(-40.0)), rel=1e-14)
    assert k.value(w) > 0


@pytest.mark.parametrize("margin", [1e4, -1e4, 0.0, 35.0])
def test_binary_logistic_extreme_margins(margin):
    k = _kernel(BinaryLogistic(lam=0.0), np.ones((2, 1)), np.array([-1, 1]))
    w = np.array([margin])
    g = np.zeros(1)
    f = k.full_gradient(w, g)
    expected = 0.5 * (np.logaddexp(0, margin) + np.logaddexp(0, -margin))
    assert f == pytest.approx(expected, rel=1e-15)
    assert np.isfinite(g).all()


@pytest.mark.parametrize("fmt,dtype", FORMATS[:1] + FORMATS[2:3])
def test_compiled_kernels_match_numpy_twins(fmt, dtype):
    X, y = _multiclass(seed=5)
    Xf = as_format(X, fmt, dtype)
    w = np.random.default_rng(6).normal(size=21)
    for obj, twin in [(Softmax(lam=0.1), SoftmaxNumPy(lam=0.1))]:
        a = _kernel(obj, Xf, y, fit_intercept=True)
        b = _kernel(twin, Xf, y, fit_intercept=True)
        batch = np.array([0, 5, 5, 9], dtype=np.intp)
        ga, gb = np.zeros(21), np.zeros(21)
        assert a.gradient(w, batch, ga) == pytest.approx(b.gradient(w, batch, gb), rel=1e-12)
        np.testing.assert_allclose(ga, gb, rtol=1e-11, atol=1e-14)
        assert a.value(w) == pytest.approx(b.value(w), rel=1e-12)
    yb = np.where(y == 0, -1, 1)
    a = _kernel(BinaryLogistic(lam=0.1), Xf, yb, fit_intercept=True)
    b = _kernel(BinaryLogisticNumPy(lam=0.1), Xf, yb, fit_intercept=True)
    ga, gb = np.zeros(7), np.zeros(7)
    assert a.full_gradient(w[:7], ga) == pytest.approx(b.full_gradient(w[:7], gb), rel=1e-12)
    np.testing.assert_allclose(ga, gb, rtol=1e-11, atol=1e-14)


def test_capabilities_registry_and_layout():
    reg = get_registry()
    assert isinstance(reg.create("objective", "softmax"), Softmax)
    assert isinstance(reg.create("objective", "multinomial"), Softmax)
    assert isinstance(reg.create("objective", "binary_logistic"), BinaryLogistic)
    assert isinstance(reg.create("objective", "loglinear", n_outputs=3), LogLinear)
    assert "quadratic_bound" in Softmax().capabilities
    assert "multiclass" in Softmax().capabilities
    assert "binary" in BinaryLogistic().capabilities
    assert "strongly_convex" not in Softmax(lam=0.0).capabilities
    assert Softmax().n_blocks(7) == 7
    X, y = _multiclass()
    res = Solver("softmax", "identity", "fixed", ("constant", {"eps": 0.1}), max_iter=5,
                 random_state=0, fit_intercept=True).fit(X, y)
    assert res.w.shape == (3 * 7,) and res.coef.shape == (3, 6) and res.intercept.shape == (3,)
    joint = softmax_joint_features(X, 3)
    res = Solver(LogLinear(n_outputs=3), "identity", "fixed", ("constant", {"eps": 0.1}),
                 max_iter=5, random_state=0).fit(joint, y)
    assert res.w.shape == (18,)


def test_bad_input_errors_name_problem_and_fix():
    X, y = _multiclass()
    with pytest.raises(ValueError, match="not a multiple of n_outputs"):
        Solver(LogLinear(n_outputs=4), max_iter=1).fit(X, y)
    with pytest.raises(ValueError, match="classes=np.arange"):
        Solver(LogLinear(n_outputs=3), max_iter=1).fit(softmax_joint_features(X, 3), y + 1)
    with pytest.raises(ValueError, match="no intercept"):
        Solver(LogLinear(n_outputs=3), max_iter=1, fit_intercept=True).fit(
            softmax_joint_features(X, 3), y)
    h = np.ones((X.shape[0], 3))
    h[0, y[0]] = 0.0
    with pytest.raises(ValueError, match="observed output has base measure h = 0"):
        Solver(LogLinear(n_outputs=3, base_measure=h), max_iter=1).fit(
            softmax_joint_features(X, 3), y)
    with pytest.raises(ValueError, match="base_measure must be finite and >= 0"):
        LogLinear(n_outputs=3, base_measure=[1.0, -1.0, 1.0])
    with pytest.raises(ValueError, match="lam"):
        Softmax(lam=-1.0)
    with pytest.raises(ValueError, match="n_outputs"):
        LogLinear(n_outputs=1)
    # a user's arrays are never modified
    Xs = sp.csr_matrix(X)
    before = Xs.data.copy()
    Solver(Softmax(), max_iter=3, random_state=0).fit(Xs, y)
    np.testing.assert_array_equal(Xs.data, before)
