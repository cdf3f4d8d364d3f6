"""``SQNRegressor.fit`` on streams of real-valued targets (data larger than memory): the
large-data recipe -- the step race, then passes stopped on the regression loss of held-out
rows -- reaches the in-memory fit's R^2; a stream of the wrong kind of labels and a Poisson
target below 0 are refused with errors naming the fix and the sample."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

pytest.importorskip("sklearn")

from sqnopt import SQNClassifier, SQNRegressor  # noqa: E402
from sqnopt.datasets import (  # noqa: E402
    stream_arrays,
    stream_binary,
    stream_csv,
    stream_svmlight,
    write_svmlight,
)


def _problem(loss: str, n: int, p: int = 8, sparse: bool = False, seed: int = 0):
    """A generated regression problem: Gaussian features (60% zeros when sparse), a linear
    score; targets the score plus noise, or Poisson counts of its exp."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    if sparse:
        X[rng.random((n, p)) < 0.6] = 0.0
    beta = rng.normal(size=p) / np.sqrt(p)
    s = X @ beta + 0.3
    y = (rng.poisson(np.exp(s)).astype(np.float64) if loss == "poisson"
         else s + 0.2 * rng.normal(size=n))
    return (sp.csr_matrix(X) if sparse else X), y


@pytest.mark.parametrize("loss", ["squared_error", "huber", "poisson"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_stream_fit_reaches_the_in_memory_r2(loss: str, sparse: bool) -> None:
    X, y = _problem(loss, 24_000, sparse=sparse)
    X, y, Xt, yt = X[:20_000], y[:20_000], X[20_000:], y[20_000:]
    ref = SQNRegressor(loss=loss, random_state=0).fit(X, y)        # solved to tol
    stream = stream_arrays(X, y, chunk_size=3_000, label_kind="regression")
    est = SQNRegressor(loss=loss, max_iter=30, random_state=0).fit(stream)   # early stop
    assert est.n_features_in_ == X.shape[1] and len(est.steps_) == 1
    assert len(est.validation_loss_) >= 1      # held-out losses of the regression loss
    r2, r2_ref = est.score(Xt, yt), ref.score(Xt, yt)
    assert r2_ref > 0.3                  # a problem with something to learn (counts: noisy)
    assert r2 > r2_ref - 0.01, (r2, r2_ref)


def test_held_out_loss_is_the_regression_loss() -> None:
    """The held-out loss of a squared-error stream fit is half the mean squared residual of its
    held-out rows, so it is near half the noise variance (0.2^2 / 2) at the end, and far
    above it for the zero model."""
    X, y = _problem("squared_error", 20_000)
    est = SQNRegressor(max_iter=3, tol=None, random_state=0).fit(
        stream_arrays(X, y, chunk_size=5_000, label_kind="regression"))
    best = min(np.mean(v) for v in est.validation_loss_)
    assert 0.5 * 0.2**2 * 0.8 < best < 0.5 * 0.2**2 * 1.3
    assert 0.5 * np.mean(y**2) > 5 * best


def test_svmlight_and_csv_streams_give_the_same_fit(tmp_path: Path) -> None:
    X, y = _problem("squared_error", 6_000, p=4)
    svm = tmp_path / "reg.svm"
    write_svmlight(svm, X, y)
    csv = tmp_path / "reg.csv"
    rows = [",".join(["y", *(f"x{j}" for j in range(4))])]
    rows += [",".join(repr(float(v)) for v in (t, *row)) for row, t in zip(X, y)]
    csv.write_text("\n".join(rows) + "\n")
    a = SQNRegressor(max_iter=2, tol=None, random_state=0).fit(
        stream_svmlight(svm, chunk_size=1_000, n_features=4, label_kind="regression"))
    b = SQNRegressor(max_iter=2, tol=None, random_state=0).fit(
        stream_csv(csv, chunk_size=1_000, label_kind="regression"))
    # the same rows, CSR chunks against dense ones: equal up to the kernels' rounding
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-8, atol=1e-10)
    assert a.score(X, y) > 0.5


def test_binary_cache_of_a_regression_stream(tmp_path: Path) -> None:
    """The cache of a regression stream stores no classes, and a stream over it reads
    real-valued targets again (the same fit)."""
    X, y = _problem("squared_error", 3_000, p=4, sparse=True)
    svm = tmp_path / "reg.svm"
    write_svmlight(svm, X, y)
    stream = stream_svmlight(svm, chunk_size=500, n_features=4, cache=True,
                             label_kind="regression")
    first = SQNRegressor(max_iter=2, tol=None, random_state=0).fit(stream)
    assert stream.cache_path is not None and stream.cache_path.exists()
    cached = stream_binary(stream.cache_path)
    assert cached.label_kind == "regression" and cached.classes.shape == (0,)
    again = SQNRegressor(max_iter=2, tol=None, random_state=0).fit(cached)
    np.testing.assert_allclose(first.coef_, again.coef_, rtol=1e-12, atol=1e-12)


def test_a_stream_of_classes_is_refused_and_the_reverse() -> None:
    X, y = _problem("squared_error", 500, p=3)
    with pytest.raises(ValueError, match="label_kind='regression'"):
        SQNRegressor().fit(stream_arrays(X, np.round(y), chunk_size=100))
    with pytest.raises(ValueError, match="fits classes"):
        SQNClassifier().fit(stream_arrays(X, y, chunk_size=100, label_kind="regression"))
    with pytest.raises(ValueError, match="classes=None"):
        stream_arrays(X, y, classes=[0, 1], label_kind="regression")
    with pytest.raises(ValueError, match="y=None"):
        SQNRegressor().fit(stream_arrays(X, y, label_kind="regression"), y)


def test_poisson_stream_names_the_negative_sample() -> None:
    X, y = _problem("poisson", 2_000, p=3)
    y[1_234] = -2.0
    with pytest.raises(ValueError, match=r"sample 1234 .* target -2"):
        SQNRegressor(loss="poisson").fit(
            stream_arrays(X, y, chunk_size=500, label_kind="regression"))


def test_text_targets_in_a_regression_csv_stream(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("y,a\n0.5,1\n1.5,2\nabc,3\n")
    for engine in ("python", "auto"):
        stream = stream_csv(path, chunk_size=10, label_kind="regression", engine=engine)
        with pytest.raises(ValueError, match="line 4.*real-valued target"):
            list(stream)


def test_an_l1_penalty_on_a_stream_runs_ftrl_proximal() -> None:
    """A stream fit with the L1 penalty runs the large-data recipe's FTRL-Proximal AdaGrad
    (it once ran the L2 fit silently); a curvature it cannot run is refused."""
    from sqnopt.datasets import stream_arrays

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 4))
    t = X @ np.ones(4)
    stream = stream_arrays(X, t, chunk_size=50, label_kind="regression")
    est = SQNRegressor(penalty="l1", alpha=0.05, random_state=0).fit(stream)
    assert "l1=0.05" in est.to_model().info["curvature"]
    with pytest.raises(ValueError, match="load the data in memory"):
        SQNRegressor(penalty="l1", curvature="newglmnet").fit(stream)
