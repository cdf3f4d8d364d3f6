"""Iterative parameter mixing in the large-data recipe (``parameter_mixing=True``;
sqnopt.training._mixing and ``AdaptiveIterate.mix``): the mix against its definition in NumPy,
the shards' scaled step, the same model for every thread count, the work accounted, streams
and in-memory fits alike, what is not mixed, and the default without it."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt import SQNClassifier, Constant, Fixed, LogLoss, Solver, recipes
from sqnopt.curvature import AdaGrad
from sqnopt.datasets import stream_arrays
from sqnopt.objectives import Softmax
from sqnopt.solver._adaptive_loop import AdaptiveLoop
from sqnopt.training import _streaming
from sqnopt.training._mixing import mixes


def _rows(n: int, d: int, seed: int, classes: int = 2) -> tuple[sp.csr_matrix, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.08, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.normal(size=k))
    y = rng.integers(0, classes, size=n).astype(float)
    if classes == 2:
        y = 2.0 * y - 1.0
    return X, y


def _two_shards(objective: Any, intercept: bool, sizes: tuple[int, int]
                ) -> tuple[Any, Any, Any, Any, np.ndarray]:
    """Two states of one solve, equal after 60 steps on common rows, then run on disjoint
    rows (``sizes`` steps each); returns the states, their solvers and the features each
    shard's rows hold (written by its steps: a logistic or softmax row always has a gradient)."""
    d = 50
    X, y = _rows(400, d, seed=5, classes=objective.n_classes if hasattr(objective, "n_classes")
                 else 2)
    if isinstance(objective, Softmax):
        y = np.random.default_rng(2).integers(0, 3, size=400).astype(float)
    # features 40.. appear in no shard row: their values only shrink
    X = X.tolil()
    X[:, 40:] = 0.0
    X[:60, 45] = 1.0            # ... except on the common rows
    X = X.tocsr()
    na, nb = sizes
    common, A, B = slice(0, 60), slice(60, 60 + na), slice(60 + na, 60 + na + nb)

    def solver() -> Solver:
        return Solver(objective=objective, curvature=AdaGrad(composite=True),
                      schedule=Fixed(1), step=Constant(0.4), fit_intercept=intercept,
                      sampling="shuffle", random_state=3)

    sa = solver()
    a = sa.init_state(X[common], y[common])
    sa.run(a, max_iter=60)
    sb = solver()
    b = sb.restore(a.checkpoint(data_state=False), X[B], y[B], new_data=True)
    # a first mix of the two equal states changes nothing and clears the records' marks of
    # the writes so far (the common rows': feature 45's)
    before = np.array(a.w)
    a.loop.mix(b.loop)
    np.testing.assert_array_equal(a.w, before)
    np.testing.assert_array_equal(b.w, before)
    sa.rebind(a, X[A], y[A])
    sa.run(a, max_iter=na)
    sb.run(b, max_iter=nb)
    assert isinstance(a.loop, AdaptiveLoop) and isinstance(b.loop, AdaptiveLoop)
    written = np.zeros(d, dtype=bool)
    written[np.unique(X[A].indices)] = True
    written[np.unique(X[B].indices)] = True
    return a, b, sa, sb, written


@pytest.mark.parametrize("kind", ["logistic", "softmax"])
@pytest.mark.parametrize("intercept", [False, True])
@pytest.mark.parametrize("sizes", [(70, 70), (70, 71)], ids=["equal", "one-apart"])
def test_mix_is_the_average_of_what_each_shard_learned(kind: str, intercept: bool,
                                                       sizes: tuple[int, int]) -> None:
    """Written coordinates: the mean of the two synced values and of the two accumulators;
    the others: the first shard's value (the clocks one step apart shrink it by a factor
    within one step's of the other's); intercepts averaged; both iterates equal afterwards,
    and each continues from the mix as the other does."""
    objective = Softmax(lam=1e-2) if kind == "softmax" else LogLoss(lam=1e-2)
    a, b, sa, sb, written = _two_shards(objective, intercept, sizes)
    wa, wb = np.array(a.w), np.array(b.w)
    ga, gb = a.curvature.accumulator, b.curvature.accumulator
    K = a.problem.n_blocks
    dim = a.problem.dim
    reg = np.tile(np.r_[written, np.zeros(dim - written.size, dtype=bool)], K)
    assert reg.any() and (~reg).any()
    a.loop.mix(b.loop)
    a.note_synced()
    b.note_synced()
    want = np.where(reg, 0.5 * (wa + wb), wa)
    want_g = np.where(reg, 0.5 * (ga + gb), ga)
    if intercept:
        icpt = np.arange(K) * dim + dim - 1
        want[icpt] = 0.5 * (wa[icpt] + wb[icpt])
        want_g[icpt] = 0.5 * (ga[icpt] + gb[icpt])
    np.testing.assert_array_equal(a.w, want)
    np.testing.assert_array_equal(b.w, want)
    np.testing.assert_array_equal(a.curvature.accumulator, want_g)
    np.testing.assert_array_equal(b.curvature.accumulator, want_g)
    # the records hold the mix: a sync from them writes it again
    a.sync_mark = None
    a.sync()
    np.testing.assert_allclose(a.w, want, rtol=1e-13, atol=1e-15)
    assert a.loop.clock == b.loop.clock
    # the same steps from the mix, in each: the same iterates
    X, y = _rows(30, 50, seed=9, classes=3 if kind == "softmax" else 2)
    b.sampler.bit_generator.state = a.sampler.bit_generator.state   # the same row order
    ra = sa.run(sa.rebind(a, X, y), max_iter=30)
    rb = sb.run(sb.rebind(b, X, y), max_iter=30)
    np.testing.assert_allclose(ra.w, rb.w, rtol=1e-12, atol=1e-14)


def test_mix_refuses_what_it_cannot_average() -> None:
    a, b, _, _, _ = _two_shards(LogLoss(lam=1e-2), True, (40, 40))
    with pytest.raises(ValueError, match="itself"):
        a.loop.mix(a.loop)
    X, y = _rows(200, 30, seed=1)
    other = Solver(objective=LogLoss(lam=1e-2), curvature=AdaGrad(composite=True),
                   schedule=Fixed(1), step=Constant(0.4), random_state=0)
    c = other.init_state(X, y)
    other.run(c, max_iter=5)
    with pytest.raises(ValueError, match="different problems"):
        a.loop.mix(c.loop)


@pytest.fixture
def mixing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Test-sized data in the large-data regime, in chunks that mix."""
    monkeypatch.setattr(recipes, "LARGE_ROWS", 1000)
    monkeypatch.setattr(recipes, "LARGE_NNZ", 1000)
    monkeypatch.setattr(recipes, "MIX_MIN_ROWS", 200)
    monkeypatch.setattr(_streaming, "IN_MEMORY_CHUNK", 1500)


def _fit(X: Any, y: Any, **kw: Any) -> SQNClassifier:
    kw.setdefault("parameter_mixing", True)
    kw.setdefault("max_iter", 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return SQNClassifier(tol=None, random_state=0, **kw).fit(X, y)


def test_mixed_fit_is_the_same_for_every_thread_count(mixing: None) -> None:
    """n_jobs 1, 2 and more threads than cores: the same model bit for bit; the chunks were
    mixed (the model differs from the sequential recipe's, its held-out loss does not by
    much) and every shard's rows are counted."""
    X, y = _rows(8000, 60, seed=0)
    fits = [_fit(X, y, n_jobs=n) for n in (1, 2, 4)]
    for f in fits[1:]:
        np.testing.assert_array_equal(f.coef_, fits[0].coef_)
        np.testing.assert_array_equal(f.intercept_, fits[0].intercept_)
        assert f.validation_loss_ == fits[0].validation_loss_
    seq = _fit(X, y, n_jobs=1, parameter_mixing=False)
    assert not np.array_equal(seq.coef_, fits[0].coef_)
    assert fits[0].validation_loss_[-1][0] == pytest.approx(seq.validation_loss_[-1][0],
                                                            rel=0.02)
    assert seq._trainer._mix_counts == [] and fits[0]._trainer._mix_counts[0][0] > 0
    r_mix, r_seq = fits[0]._trainer.results_[0], seq._trainer.results_[0]
    assert r_mix.n_samples == r_seq.n_samples and r_mix.n_iter == r_seq.n_iter


def test_stream_gives_the_in_memory_model(mixing: None) -> None:
    X, y = _rows(6000, 60, seed=4)
    mem = _fit(X, y, n_jobs=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        streamed = SQNClassifier(max_iter=3, tol=None, random_state=0, n_jobs=1,
                                 parameter_mixing=True).fit(
            stream_arrays(X, y, chunk_size=_streaming.IN_MEMORY_CHUNK))
    np.testing.assert_array_equal(streamed.coef_, mem.coef_)


def test_what_is_not_mixed(mixing: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The FTRL-Proximal form (an L1 term) and chunks below the shard size run as before."""
    X, y = _rows(6000, 60, seed=6)
    l1 = _fit(X, y, penalty="l1", alpha=1e-4, n_jobs=2)
    l1_seq = _fit(X, y, penalty="l1", alpha=1e-4, n_jobs=1, parameter_mixing=False)
    np.testing.assert_array_equal(l1.coef_, l1_seq.coef_)
    state = _fit(X, y)._trainer._states[0]
    monkeypatch.setattr(recipes, "MIX_MIN_ROWS", 200)
    assert mixes(state, X[:400]) and not mixes(state, X[:399])
    assert not mixes(state, sp.csr_matrix((1000, 60)))      # no stored values: nothing to mix


def test_a_chunk_too_small_to_mix_is_run_alone_and_the_copy_made_again(
        mixing: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks of 1500 rows, the last of each pass 200 (too small to mix): the first shard runs
    it alone, and the next mixed chunk copies the first shard afresh instead of mixing with a
    copy that missed those rows; the model is still the same for every thread count."""
    X, y = _rows(7700, 60, seed=8)
    fits = [_fit(X, y, n_jobs=n) for n in (1, 2)]
    np.testing.assert_array_equal(fits[0].coef_, fits[1].coef_)
    # passes 2 and 3 mix their 5 full chunks; each pass's first mixed chunk makes the copy
    assert fits[0]._trainer._mix_counts == [(10, 2)]


def test_mixing_is_on_by_default_and_checked(mixing: None) -> None:
    """The default mixes (the same model as ``parameter_mixing=True``); ``False`` keeps the
    sequential updates (nothing mixed, on any thread count); a setting that is not a bool is
    refused by name."""
    X, y = _rows(6000, 60, seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        default = SQNClassifier(max_iter=2, tol=None, random_state=0, n_jobs=2).fit(X, y)
    assert default._trainer._mix_counts[0][0] > 0
    np.testing.assert_array_equal(default.coef_, _fit(X, y, n_jobs=1, max_iter=2).coef_)
    off = _fit(X, y, n_jobs=2, parameter_mixing=False)
    assert off._trainer._mix_counts == []
    with pytest.raises(ValueError, match="parameter_mixing must be True or False"):
        SQNClassifier(parameter_mixing="yes").fit(X, y)     # type: ignore[arg-type]


def test_the_shards_step_twice_as_far_in_the_first_pass(
        mixing: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The shards' steps are twice the raced step in the first pass and the raced step after
    it (``step_scale``), every mixed chunk of the first pass scaled, none after; what the
    scale buys in held-out loss is measured by ``bench/parameter_mixing.py``."""
    from sqnopt.training import _mixing

    assert _mixing.step_scale(True) == 2.0 and _mixing.step_scale(False) == 1.0
    monkeypatch.setattr(recipes, "RACE_FIRST_SEGMENT", 300)   # the race over in pass one
    X, y = _rows(20000, 60, seed=3)
    seen: list[float] = []
    scale = _mixing._scale

    def recorded(state: Any, factor: float) -> None:
        seen.append(factor)
        scale(state, factor)

    monkeypatch.setattr(_mixing, "_scale", recorded)
    two = _fit(X, y, n_jobs=1, max_iter=2)
    per_pass = len(seen) // 2 + 1
    assert 2.0 in seen and seen[-1] == 1.0 and seen == sorted(seen, reverse=True)
    assert seen.count(2.0) >= per_pass // 2      # the first pass's mixed chunks, both shards
    assert two._trainer._mix_counts[0][0] > 0
    scaled = _fit(X, y, n_jobs=1, max_iter=1)
    monkeypatch.setattr(_mixing, "_scale", lambda state, factor: None)
    unscaled = _fit(X, y, n_jobs=1, max_iter=1)
    assert not np.array_equal(scaled.coef_, unscaled.coef_)    # the scale takes effect


def test_the_regressor_mixes_alike(mixing: None) -> None:
    """Least squares in the large-data regime: the same model on 1 and 2 threads, chunks
    mixed, a fit as good as the sequential updates'."""
    from sqnopt import SQNRegressor

    rng = np.random.default_rng(0)
    X = sp.random(8000, 60, density=0.1, format="csr", random_state=1)
    y = X @ rng.normal(size=60) + 0.1 * rng.normal(size=8000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fits = [SQNRegressor(parameter_mixing=True, max_iter=3, tol=None, random_state=0,
                             n_jobs=n).fit(X, y) for n in (1, 2)]
        seq = SQNRegressor(max_iter=3, tol=None, random_state=0).fit(X, y)
    np.testing.assert_array_equal(fits[0].coef_, fits[1].coef_)
    assert fits[0]._trainer._mix_counts[0][0] > 0
    assert fits[0].score(X, y) == pytest.approx(seq.score(X, y), abs=1e-3)


@pytest.mark.parametrize("kw", [{}, {"multiclass": "ovr"}, {"loss": "hinge"},
                                {"class_weight": "balanced"}],
                         ids=["softmax", "ovr", "hinge-ovr", "balanced"])
def test_multiclass_fits_mix_each_subproblem(mixing: None, kw: dict[str, Any]) -> None:
    """Three classes: the softmax's blocks mixed together, one-vs-rest's sub-problems each
    with their shards; the same model on 1 and 2 threads, accuracy as the sequential
    updates'."""
    rng = np.random.default_rng(0)
    X = sp.random(8000, 60, density=0.1, format="csr", random_state=1)
    y = np.argmax(X @ rng.normal(size=(60, 3)) + rng.gumbel(size=(8000, 3)), axis=1)
    fits = [_fit(X, y, n_jobs=n, **kw) for n in (1, 2)]
    seq = _fit(X, y, n_jobs=1, parameter_mixing=False, **kw)
    np.testing.assert_array_equal(fits[0].coef_, fits[1].coef_)
    counts = fits[0]._trainer._mix_counts
    assert len(counts) == (1 if not kw or "class_weight" in kw else 3)
    assert all(mixed > 0 for mixed, _ in counts)
    assert fits[0].score(X, y) == pytest.approx(seq.score(X, y), abs=0.01)
