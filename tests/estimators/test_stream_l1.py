"""L1 / elastic net on a stream and in ``partial_fit``: the large-data recipe's FTRL-Proximal
AdaGrad. A streamed fit's model is as sparse as the full-batch composite optimum and its
objective close to it; ``partial_fit`` is deterministic; what stays unsupported is refused
with the fix named."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt import SQNClassifier, SQNRegressor
from sqnopt.datasets import stream_arrays


def _problem(seed: int = 0, N: int = 6000, n: int = 150) -> tuple[sp.csr_matrix, np.ndarray]:
    """Sparse rows, 15 informative features of 150 (labels +-1 from a logistic model)."""
    rng = np.random.default_rng(seed)
    X = sp.random(N, n, density=0.05, random_state=seed, format="csr",
                  data_rvs=lambda k: rng.normal(size=k))
    w = np.zeros(n)
    w[:15] = 2 * rng.normal(size=15)
    y = np.where(rng.random(N) < 1 / (1 + np.exp(-(X @ w))), 1.0, -1.0)
    return X, y


def _objective(est: SQNClassifier, X: sp.csr_matrix, y: np.ndarray, l1: float,
               l2: float) -> float:
    coef = est.coef_.ravel()
    m = y * (X @ coef + est.intercept_[0])
    return float(np.mean(np.logaddexp(0.0, -m)) + l1 * np.abs(coef).sum()
                 + 0.5 * l2 * coef @ coef)


@pytest.mark.parametrize("penalty, ratio", [("l1", None), ("elasticnet", 0.7)])
def test_stream_fit_is_sparse_and_near_the_composite_optimum(penalty: str,
                                                             ratio: float | None) -> None:
    X, y = _problem()
    alpha = 1e-2
    r = 1.0 if ratio is None else ratio
    full = SQNClassifier(penalty=penalty, l1_ratio=ratio, alpha=alpha, tol=1e-9,
                         max_iter=2000).fit(X, y)
    best = _objective(full, X, y, alpha * r, alpha * (1 - r))
    est = SQNClassifier(penalty=penalty, l1_ratio=ratio, alpha=alpha, max_iter=10, tol=None,
                        early_stopping=False, random_state=0)
    est.fit(stream_arrays(X, y, chunk_size=1000))
    assert est.fit_path_ == "adaptive"          # the just-in-time iterate
    got = _objective(est, X, y, alpha * r, alpha * (1 - r))
    assert best <= got <= best * (1 + 3e-3)
    nnz, nnz_best = np.count_nonzero(est.coef_), np.count_nonzero(full.coef_)
    assert nnz <= nnz_best + 3
    # the weights the optimum keeps are the ones the stream kept
    assert np.count_nonzero((est.coef_ != 0) & (full.coef_ != 0)) >= nnz_best - 2


def test_stream_fit_with_early_stopping_keeps_exact_zeros() -> None:
    X, y = _problem(1)
    full = SQNClassifier(penalty="l1", alpha=1e-2).fit(X, y)
    est = SQNClassifier(penalty="l1", alpha=1e-2, random_state=0)
    est.fit(stream_arrays(X, y, chunk_size=1500))
    assert est.validation_loss_ and np.all(np.isfinite(est.validation_loss_))
    assert 0 < np.count_nonzero(est.coef_) <= np.count_nonzero(full.coef_) + 3
    assert "ftrl=True" in est.to_model().info["curvature"]


def test_partial_fit_is_deterministic_and_sparse() -> None:
    X, y = _problem(2)

    def run(seed: int) -> SQNClassifier:
        est = SQNClassifier(penalty="l1", alpha=1e-2, random_state=seed)
        for start in range(0, X.shape[0], 1000):
            est.partial_fit(X[start:start + 1000], y[start:start + 1000],
                            classes=np.array([-1.0, 1.0]))
        return est

    a, b, c = run(5), run(5), run(6)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)
    assert not np.array_equal(a.coef_, c.coef_)
    assert 0 < np.count_nonzero(a.coef_) < 0.4 * X.shape[1]


def test_partial_fit_continues_after_pickling() -> None:
    X, y = _problem(3, N=3000)
    classes = np.array([-1.0, 1.0])
    whole = SQNClassifier(penalty="elasticnet", l1_ratio=0.5, alpha=1e-2, random_state=0)
    split = SQNClassifier(penalty="elasticnet", l1_ratio=0.5, alpha=1e-2, random_state=0)
    for start in range(0, 3000, 1000):
        whole.partial_fit(X[start:start + 1000], y[start:start + 1000], classes=classes)
        split.partial_fit(X[start:start + 1000], y[start:start + 1000], classes=classes)
        split = pickle.loads(pickle.dumps(split))
    np.testing.assert_array_equal(whole.coef_, split.coef_)


def _regression(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """4000 dense rows, 4 informative features of 30 (real-valued targets with noise)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(4000, 30))
    w = np.zeros(30)
    w[:4] = [1.0, -2.0, 0.5, 1.5]
    return X, X @ w + 0.1 * rng.normal(size=4000)


def test_regressor_stream_fit_with_l1_is_sparse() -> None:
    X, y = _regression(4)
    est = SQNRegressor(penalty="l1", alpha=0.05, random_state=0, max_iter=5)
    est.fit(stream_arrays(X, y, chunk_size=1000, label_kind="regression"))
    assert np.all(est.coef_[:4] != 0.0)
    assert np.count_nonzero(est.coef_) <= 8


def test_regressor_partial_fit_with_l1_is_sparse_and_refuses_a_changed_penalty() -> None:
    X, y = _regression(5)
    fits = []
    for _ in range(2):
        est = SQNRegressor(penalty="l1", alpha=0.05, random_state=0)
        for start in range(0, 4000, 1000):
            est.partial_fit(X[start:start + 1000], y[start:start + 1000])
        fits.append(est.coef_.copy())
    np.testing.assert_array_equal(fits[0], fits[1])
    assert np.all(fits[0][:4] != 0.0) and np.count_nonzero(fits[0]) <= 8
    assert "ftrl=True" in est.to_model().info["curvature"]
    est.set_params(alpha=0.01)
    with pytest.raises(ValueError, match="differs from the first call"):
        est.partial_fit(X[:1000], y[:1000])
    # a warm in-memory L2 fit after the stochastic L1 state: the driver's L2 fit, not FTRL
    est.set_params(penalty="l2", warm_start=True)
    est.fit(X, y)
    assert np.count_nonzero(est.coef_) == 30
    assert "ftrl" not in est.to_model().info.get("curvature", "")


def test_what_stays_unsupported_names_the_fix() -> None:
    X, y = _problem(5, N=2000)
    with pytest.raises(ValueError, match="load the data in memory"):
        SQNClassifier(penalty="l1", curvature="owlqn").fit(stream_arrays(X, y))
    with pytest.raises(ValueError, match="leave step='auto'"):
        SQNClassifier(penalty="l1", step="constant").partial_fit(X, y, classes=[-1.0, 1.0])
    est = SQNClassifier(penalty="l1", alpha=1e-2).partial_fit(X, y, classes=[-1.0, 1.0])
    est.set_params(alpha=1e-3)
    with pytest.raises(ValueError, match="differs from the first call"):
        est.partial_fit(X, y)
    with pytest.raises(ValueError, match="l1_ratio"):
        SQNClassifier(penalty="elasticnet").fit(stream_arrays(X, y))
