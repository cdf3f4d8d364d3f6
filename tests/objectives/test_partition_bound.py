"""The partition-function bound (Aravkin et al. 2014, Algorithm 1): the weight
``tanh(l/2)/(2l)``, majorisation (inequality 3), tangency, mu = gradient, and the factored
form against a literal NumPy implementation of Algorithm 1."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt import BinaryLogistic, LogLinear, Softmax
from sqnopt.data import prepare
from sqnopt.objectives import softmax_joint_features
from sqnopt.objectives._partition_bound import py_bound_weight
from sqnopt.objectives.reference import bound_numpy
from tests.conftest import as_format


def _exact_weight(l: float) -> float:
    # tanh(x)/x from its series (8 terms: exact to double precision for |x| <= 0.15), else
    # directly (no cancellation there)
    x = 0.5 * l
    if abs(x) <= 0.15:
        # Bernoulli series of tanh(x)/x: sum_n 2^{2n}(2^{2n}-1) B_{2n} x^{2n-2} / (2n)!
        coefs = [1.0, -1 / 3, 2 / 15, -17 / 315, 62 / 2835, -1382 / 155925, 21844 / 6081075,
                 -929569 / 638512875]
        return 0.25 * sum(c * x ** (2 * k) for k, c in enumerate(coefs))
    return math.tanh(abs(x)) / (2 * abs(l))


def test_bound_weight_limits_and_accuracy():
    assert py_bound_weight(0.0) == 0.25
    assert py_bound_weight(np.inf) == 0.0
    assert py_bound_weight(-np.inf) == 0.0
    assert math.isnan(py_bound_weight(np.nan))
    for l in [1e-300, 1e-12, 1e-6, 1e-3, 9.99e-3, 1e-2, 1.0001e-2, 0.1, -0.25, 0.3, 0.9]:
        assert py_bound_weight(l) == pytest.approx(_exact_weight(l), rel=2e-15), l
    for l in [3.0, 50.0, 1e4, 1e300]:
        assert py_bound_weight(l) == pytest.approx(1.0 / (2 * l) * math.tanh(l / 2), rel=1e-15)
        assert py_bound_weight(-l) == py_bound_weight(l)
    ls = np.linspace(-4, 4, 2001)
    w = py_bound_weight(ls)
    assert np.all(np.diff(w[ls >= 0]) <= 0) and np.all(w <= 0.25) and np.all(w > 0)


def _problems(fmt: str = "dense", dtype: type = np.float64):
    """(name, kernel, n_samples) for each log-linear objective on small random data."""
    rng = np.random.default_rng(0)
    n, p, K = 12, 4, 3
    X = rng.normal(size=(n, p))
    y = rng.integers(0, K, size=n)
    y[:K] = np.arange(K)
    Xf = as_format(X, fmt, dtype)
    soft = Softmax(lam=0.1).init(prepare(Xf, y, label_kind="multiclass", fit_intercept=True))
    yb = np.where(y == 0, -1.0, 1.0)
    binary = BinaryLogistic(lam=0.1).init(prepare(Xf, yb, fit_intercept=True))
    h = rng.random((n, K)) + 0.2
    h[np.arange(n), (y + 1) % K] = 0.0
    joint = softmax_joint_features(Xf, K)
    ll = LogLinear(n_outputs=K, lam=0.1, base_measure=h).init(
        prepare(joint, y, label_kind="multiclass"))
    return [("softmax", soft, n), ("binary", binary, n), ("loglinear", ll, n)]


@pytest.mark.parametrize("fmt,dtype", [("dense", np.float64), ("csr", np.float32)])
def test_bound_majorises_partition_function(fmt, dtype):
    rng = np.random.default_rng(1)
    for name, k, n in _problems(fmt, dtype):
        for trial in range(30):
            scale = [0.1, 1.0, 10.0][trial % 3]
            w0 = rng.normal(size=k.n_params) * scale           # expansion point theta~
            i = int(rng.integers(n))
            logz, r, S = k.sample_bound(w0, i)
            assert logz == pytest.approx(k.log_partition(w0, i), rel=1e-12, abs=1e-12)
            for _ in range(10):
                th = w0 + rng.normal(size=k.n_params) * rng.choice([0.01, 0.3, 3.0])
                d = th - w0
                bound = logz + 0.5 * float(d @ S @ (S.T @ d)) + float(d @ r)
                assert k.log_partition(th, i) <= bound + 1e-10 * max(1.0, abs(bound)), (
                    name, trial)


def test_bound_is_tangent_and_dominates_the_hessian():
    rng = np.random.default_rng(2)
    for name, k, n in _problems():
        w0 = rng.normal(size=k.n_params)
        for i in range(4):
            logz, r, S = k.sample_bound(w0, i)
            F = k.feature_matrix(i)
            s = k.scores_of(w0, i)
            p = np.exp(s - s.max())
            p /= p.sum()
            np.testing.assert_allclose(r, F.T @ p, rtol=1e-12, atol=1e-14)  # grad log Z
            cov = F.T @ (np.diag(p) - np.outer(p, p)) @ F                   # Hess log Z
            gap = np.linalg.eigvalsh(S @ S.T - cov)
            assert gap.min() >= -1e-12, name


def test_bound_at_extreme_scores_is_finite():
    X = np.array([[1.0], [1.0]])
    k = Softmax(lam=0.0).init(prepare(X, np.array([0, 1]), label_kind="multiclass"))
    for w in ([1e4, -1e4], [-1e4, 1e4], [1e4, 1e4 - 1e-3], [1e4, 1e4]):
        w = np.array(w, dtype=float)
        logz, r, S = k.sample_bound(w, 0)
        assert np.isfinite(logz) and np.all(np.isfinite(r)) and np.all(np.isfinite(S))
        assert logz == pytest.approx(k.log_partition(w, 0), rel=1e-15)
        fac, mu = k.bound_factors(w, np.array([0, 1]))
        assert np.all(np.isfinite(fac)) and np.all(np.isfinite(mu))
    # well separated scores: curvature weight ~ 1/(2 l), not exp(-l) and not overflow
    logz, r, S = k.sample_bound(np.array([1e4, -1e4]), 0)
    assert (S @ S.T)[0, 0] == pytest.approx(py_bound_weight(2e4), rel=1e-12)


@pytest.mark.parametrize("fmt,dtype", [("dense", np.float64), ("csr", np.float64),
                                       ("dense", np.float32), ("csr", np.float32)])
def test_mu_is_the_gradient_and_factored_products_match_algorithm1(fmt, dtype):
    rng = np.random.default_rng(3)
    for name, k, n in _problems(fmt, dtype):
        w = rng.normal(size=k.n_params)
        batch = np.array([0, 2, 2, 5, 7, 11], dtype=np.intp)
        fac, mu = k.bound_factors(w, batch)
        assert fac.shape == (6, k.factor_size)
        g = np.zeros(k.n_params)
        k.gradient(w, batch, g)
        np.testing.assert_allclose(mu + k.lam * np.where(_reg_mask(k), w, 0.0), g,
                                   rtol=1e-12, atol=1e-14)
        # Algorithm 1, literally, on the dense feature matrices
        cols = []
        mu_ref = np.zeros(k.n_params)
        labels = k.labels_of()
        for i in batch:
            F = k.feature_matrix(int(i))
            _, r, S = bound_numpy(F, k.scores_of(w, int(i)))
            cols.append(S / np.sqrt(batch.shape[0]))
            mu_ref += (r - F[labels[i]]) / batch.shape[0]
        S_ref = np.hstack(cols)
        np.testing.assert_allclose(mu, mu_ref, rtol=1e-11, atol=1e-14)
        Sigma = k.bound_matrix(w, batch)
        np.testing.assert_allclose(Sigma, S_ref @ S_ref.T, rtol=1e-11, atol=1e-14)
        mu2, S_cols = k.bound(w, batch)
        assert sp.issparse(S_cols)
        np.testing.assert_allclose((S_cols @ S_cols.T).toarray(), Sigma, rtol=1e-11, atol=1e-14)
        v = rng.normal(size=k.n_params)
        np.testing.assert_allclose(k.bound_matvec(batch, fac, v), Sigma @ v, rtol=1e-11,
                                   atol=1e-13)


def _reg_mask(k) -> np.ndarray:
    # regularised coordinates: everything but the intercept of each block
    mask = np.ones(k.n_params, dtype=bool)
    if k.data.has_intercept:
        mask[k.data.dim - 1::k.data.dim] = False
    return mask


def test_binary_bound_is_jaakkola_jordan():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(8, 3))
    k = BinaryLogistic(lam=0.0).init(prepare(X, np.array([-1, 1] * 4)))
    w = rng.normal(size=3)
    batch = np.arange(8, dtype=np.intp)
    u = X @ w
    expected = (X.T * py_bound_weight(u)) @ X / 8
    np.testing.assert_allclose(k.bound_matrix(w, batch), expected, rtol=1e-13, atol=1e-15)


def test_bound_rejects_bad_batches():
    k = _problems()[0][1]
    w = np.zeros(k.n_params)
    with pytest.raises(IndexError):
        k.bound_factors(w, [0, 99])
    with pytest.raises(ValueError, match="non-empty"):
        k.bound_factors(w, np.array([], dtype=np.intp))
    with pytest.raises(FloatingPointError):
        k.bound_factors(np.full(k.n_params, np.inf), [0])


@pytest.mark.parametrize("sampling_weights", [False, True])
def test_bound_uses_the_gradient_weights(sampling_weights):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(20, 3))
    y = rng.integers(0, 3, size=20)
    y[:3] = np.arange(3)
    sw = rng.random(20) + 0.1
    data = prepare(X, y, label_kind="multiclass", sample_weight=sw,
                   importance_sampling=sampling_weights)
    k = Softmax(lam=0.1).init(data)
    w = rng.normal(size=9)
    batch = np.array([1, 4, 4, 9], dtype=np.intp)
    fac, mu = k.bound_factors(w, batch)
    g = np.zeros(9)
    k.gradient(w, batch, g)
    np.testing.assert_allclose(mu + 0.1 * w, g, rtol=1e-12, atol=1e-14)
    gw = data.grad_weight[batch]
    expected = sum(c / 4 * (lambda S: S @ S.T)(k.sample_bound(w, int(i))[2])
                   for c, i in zip(gw, batch))
    np.testing.assert_allclose(k.bound_matrix(w, batch), expected, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sparse_softmax_feature_major_mode_is_bit_identical(fit_intercept, dtype):
    # Sparse softmax batches with nnz * K > n_params run in the transposed (feature-major)
    # layout: more than one 64-feature transpose block, an empty row, repeated samples, scratch
    # reused across calls. Results must equal the parameter-layout path bit for bit and the
    # dense formulas to rounding.
    rng = np.random.default_rng(8)
    n, p, K = 60, 150, 5
    X = sp.random(n, p, density=0.3, random_state=8, format="lil", dtype=dtype)
    X[3] = 0.0                                      # an empty row
    X = X.tocsr()
    assert X[3].nnz == 0
    y = np.arange(n) % K
    k = Softmax(lam=0.01).init(prepare(X, y, label_kind="multiclass",
                                       fit_intercept=fit_intercept))
    ref = Softmax(lam=0.01).init(prepare(X, y, label_kind="multiclass",
                                         fit_intercept=fit_intercept))
    ref._set_feature_major(False)
    kd = Softmax(lam=0.01).init(prepare(X.toarray(), y, label_kind="multiclass",
                                        fit_intercept=fit_intercept))
    batch = np.array([0, 3, 3, 7, 19, 59, 21, 40], dtype=np.intp)
    assert X[batch].nnz * K > k.n_params            # the batch qualifies for the mode
    for trial in range(3):
        w = rng.normal(size=k.n_params) * [0.1, 1.0, 30.0][trial]
        for a, b in ((k.value(w), ref.value(w)),):
            assert a == b and a == pytest.approx(kd.value(w), rel=1e-12)
        ga, gb, gd = (np.empty(k.n_params) for _ in range(3))
        assert k.full_gradient(w, ga) == ref.full_gradient(w, gb)
        np.testing.assert_array_equal(ga, gb)
        kd.full_gradient(w, gd)
        np.testing.assert_allclose(ga, gd, rtol=1e-10, atol=1e-13)
        assert k.gradient(w, batch, ga) == ref.gradient(w, batch, gb)
        np.testing.assert_array_equal(ga, gb)
        fac, mu = k.bound_factors(w, batch)
        fac_r, mu_r = ref.bound_factors(w, batch)
        np.testing.assert_array_equal(fac, fac_r)
        np.testing.assert_array_equal(mu, mu_r)
        Sigma = kd.bound_matrix(w, batch)
        for _ in range(2):
            v = rng.normal(size=k.n_params)
            out = k.bound_matvec(batch, fac, v)
            np.testing.assert_array_equal(out, ref.bound_matvec(batch, fac, v))
            np.testing.assert_allclose(out, Sigma @ v, rtol=1e-10, atol=1e-11)
    # value, full gradient, gradient, bound and two products per trial ran transposed; the
    # reference never did
    assert k._feature_major_calls() == 3 * 6 and ref._feature_major_calls() == 0
    # re-initialising the kernel on larger data must not reuse the smaller scratch
    X2 = sp.random(n, 3 * p, density=0.3, random_state=9, format="csr", dtype=dtype)
    k2 = Softmax(lam=0.01).init(prepare(X2, y, label_kind="multiclass",
                                        fit_intercept=fit_intercept))
    k2._set_feature_major(False)
    k.__init__(k2.data, 0.01, K)
    w2 = rng.normal(size=k.n_params)
    assert k.value(w2) == k2.value(w2)


def _columns_from_products(k, batch, fac) -> np.ndarray:
    eye = np.eye(k.n_params)
    return np.column_stack([k.bound_matvec(batch, fac, eye[:, j]) for j in range(k.n_params)])


@pytest.mark.parametrize("fmt,dtype", [("dense", np.float64), ("csr", np.float64),
                                       ("dense", np.float32), ("csr", np.float32)])
def test_dense_bound_matrix_equals_its_products(fmt, dtype):
    # cy_bound_dense (what an exact solve factorises) is assembled sample by sample for the
    # binary and softmax objectives and by unit-vector products for the general model; every
    # route must give the matrix whose columns are the factored products Sigma_B e_j.
    rng = np.random.default_rng(11)
    X = sp.random(12, 9, density=0.3, random_state=2, format="lil", dtype=dtype)
    X[4] = 0.0                              # truly sparse rows, one empty; no intercept
    Xs = X.tocsr() if fmt == "csr" else X.toarray()
    y = np.arange(12) % 3
    kernels = [k for _, k, _ in _problems(fmt, dtype)] + [
        Softmax(lam=0.1).init(prepare(Xs, y, label_kind="multiclass")),
        BinaryLogistic(lam=0.1).init(prepare(Xs, np.where(y == 0, -1.0, 1.0)))]
    batch = np.array([1, 4, 4, 9, 0], dtype=np.intp)
    for k in kernels:
        fac, _ = k.bound_factors(rng.normal(size=k.n_params), batch)
        dense = k.bound_dense(batch, fac)
        np.testing.assert_allclose(dense, _columns_from_products(k, batch, fac), rtol=1e-12,
                                   atol=1e-14)
        np.testing.assert_allclose(dense, dense.T, rtol=0, atol=1e-14)
    with pytest.raises(ValueError, match="factors must have shape"):
        k.bound_dense(batch, fac[:2])


@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sparse_softmax_bound_support_and_compact_products(fit_intercept, dtype):
    # On sparse rows Sigma_B is zero outside the batch's features (all K classes of each, and
    # the intercept): the compact coordinates are exactly the nonzero rows of the dense Sigma_B,
    # gather / scatter are inverse maps, and the compact product is Sigma_B restricted to them.
    rng = np.random.default_rng(11)
    n, p, K = 40, 150, 4                            # > 64 features: several gather blocks
    X = sp.random(n, p, density=0.04, random_state=11, format="lil", dtype=dtype)
    X[5] = 0.0                                      # an empty row
    X = X.tocsr()
    y = np.arange(n) % K
    k = Softmax(lam=0.01).init(prepare(X, y, label_kind="multiclass",
                                       fit_intercept=fit_intercept))
    dim = k.n_params // K
    assert k.support_map_size == dim
    for batch in (np.array([0, 5, 5, 9, 31], dtype=np.intp), np.arange(n, dtype=np.intp),
                  np.array([5], dtype=np.intp)):
        w = rng.normal(size=k.n_params)
        fac, _ = k.bound_factors(w, batch)
        Sigma = k.bound_matrix(w, batch)
        idx = k.bound_support(batch)
        feats = np.unique(X[batch].indices)
        if fit_intercept:
            feats = np.append(feats, p)
        # compact rows in increasing feature order, the K classes of a feature adjacent
        expected = (np.arange(K)[None, :] * dim + feats[:, None]).ravel()
        np.testing.assert_array_equal(idx, expected)
        off = np.setdiff1d(np.arange(k.n_params), idx)
        assert not np.any(Sigma[off]) and not np.any(Sigma[:, off])
        v = rng.normal(size=k.n_params)
        vc, off2 = k.support_gather(batch, v)
        np.testing.assert_array_equal(vc, v[idx])
        assert off2 == pytest.approx(np.sum(v[off] ** 2), rel=1e-13)
        back = k.support_scatter(batch, 2.0 * vc, v)
        np.testing.assert_array_equal(back[idx], 2.0 * vc)
        np.testing.assert_array_equal(back[off], v[off])
        np.testing.assert_allclose(k.bound_matvec_support(batch, fac, vc),
                                   (Sigma @ v)[idx], rtol=1e-10, atol=1e-12)
    # dense rows have no compact form: the identity
    kd = Softmax(lam=0.01).init(prepare(X.toarray(), y, label_kind="multiclass"))
    assert kd.support_map_size == 0
    np.testing.assert_array_equal(kd.bound_support([0, 1]), np.arange(kd.n_params))
