"""The large-data regime: the step race, held-out early stopping, fits on streams, and
``partial_fit``'s streaming default (sqnopt.training._streaming, sqnopt.recipes.streaming)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt import SQNClassifier, recipes
from sqnopt.datasets import stream_arrays
from sqnopt.training import Trainer
from sqnopt.training._streaming import HELD_OUT_TOL, MAX_HELD_OUT, StepRace, StreamHoldout

sklearn = pytest.importorskip("sklearn")


def _logistic_data(n: int, d: int = 40, seed: int = 0, density: float = 0.2
                   ) -> tuple[sp.csr_matrix, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.choice([1.0, -1.0], size=k))
    w = rng.normal(size=d)
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    y = np.where(rng.random(n) < p, 1, -1)
    return X, y


@pytest.fixture
def large(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the regime's thresholds small, so that test-sized data count as large."""
    monkeypatch.setattr(recipes, "LARGE_ROWS", 1000)
    monkeypatch.setattr(recipes, "LARGE_NNZ", 1000)


def test_regime_needs_many_rows_and_expensive_passes() -> None:
    assert recipes.large_scale(10**6, 2.4e7)
    assert not recipes.large_scale(60_000, 4.7e7)     # fashion-mnist: solved to tol
    assert not recipes.large_scale(10**6, 1e6)       # a pass costs next to nothing


def test_step_candidates_follow_the_feature_scale() -> None:
    X, _ = _logistic_data(500)
    base = recipes.step_candidates(X, False)
    scaled = recipes.step_candidates(X * 10.0, False)
    assert len(base) == len(recipes.STEP_EXPONENTS)
    np.testing.assert_allclose(np.array(scaled) * 10.0, base)
    assert base == tuple(sorted(base))


def test_holdout_is_the_same_rows_for_any_chunking() -> None:
    h = StreamHoldout(0.1, seed=7)
    whole = h.mask(0, 10_000, 0)
    parts, row, picked = [], 0, 0
    for size in (1, 999, 3000, 17, 5983):
        m = h.mask(row, size, picked)
        picked += int(m.sum())
        parts.append(m)
        row += size
    np.testing.assert_array_equal(np.concatenate(parts), whole)
    assert 0.08 < whole.mean() < 0.12
    other = StreamHoldout(0.1, seed=8).mask(0, 10_000, 0)
    assert not np.array_equal(other, whole)


def test_holdout_stops_at_its_cap() -> None:
    h = StreamHoldout(0.5, seed=1, cap=100)
    m1 = h.mask(0, 150, 0)
    m2 = h.mask(150, 1000, int(m1.sum()))
    assert int(m1.sum()) + int(m2.sum()) == 100
    assert MAX_HELD_OUT >= 100_000


def test_race_keeps_the_step_with_the_lowest_progressive_loss() -> None:
    X, y = _logistic_data(6000, seed=3)
    trainer = Trainer(alpha=1e-4, random_state=0)
    from sqnopt.training._setup import make_setup, make_solver
    from sqnopt.training._trainer import _ReportTo

    setup = make_setup(trainer, X, np.array([-1, 1]), np.ones(X.shape[0]), regime="stream")
    assert setup.streaming and setup.step_candidates

    def make(step):  # type: ignore[no-untyped-def]
        return make_solver(trainer, setup, 0, _ReportTo(trainer), step=step)

    race = StepRace([1e-5, 0.3, 1e3], 200, make)
    race.start(lambda solver: solver.init_state(X, y))
    used, _ = race.advance(X.shape[0])
    assert race.done and race.winner.step == 0.3
    assert used == 200                # one segment: the better half of 3 is 1
    assert race.rounds[0]["steps"][0] == 0.3 and race.rounds[0]["samples"] == 200
    losses = race.rounds[0]["losses"]
    assert losses == sorted(losses) and np.isinf(losses[-1])   # 1e3 diverged

    # nine candidates: 9 -> 4 -> 2 -> 1 over segments of 100, 200, 400 examples
    race = StepRace(list(recipes.step_candidates(X, True)), 100, make)
    race.start(lambda solver: solver.init_state(X, y))
    used, _ = race.advance(X.shape[0])
    assert race.done and used == 700
    assert [len(r["steps"]) for r in race.rounds] == [9, 4, 2]
    # the candidates saw the same examples: the winner's state is where any would be
    assert race.winner.state.counters.n_samples == 700


def _last_counted(losses: list[float], tol: float) -> int:
    """The pass of the last improvement that counts: by more than ``max(tol, HELD_OUT_TOL)``
    (relative) on the loss of the previous one that counted."""
    ref, last = losses[0], 0
    for i, loss in enumerate(losses[1:], 1):
        if loss < ref - max(tol, HELD_OUT_TOL) * abs(ref):
            ref, last = loss, i
    return last


def test_large_fit_races_then_stops_on_held_out_rows(large: None) -> None:
    X, y = _logistic_data(8000, seed=1)
    clf = SQNClassifier(random_state=0).fit(X, y)
    assert clf.converged_
    assert len(clf.steps_) == 1 and clf.steps_[0] in recipes.step_candidates(X, True)
    losses = [v[0] for v in clf.validation_loss_]
    assert len(losses) >= clf.n_iter_no_change + 1
    # passes end n_iter_no_change after the last gain above HELD_OUT_TOL, whatever tol (1e-5)
    assert len(losses) == _last_counted(losses, clf.tol) + 1 + clf.n_iter_no_change
    assert clf.to_model().info["curvature"].startswith("adagrad(")
    assert clf.score(X, y) > 0.7


@pytest.mark.parametrize("tol", [0.5, 1e-12])
def test_the_model_is_the_best_iterate(large: None, tol: float) -> None:
    """The fit stops on gains that count (tol = 0.5: none after the first pass; 1e-12: gains
    above HELD_OUT_TOL) and keeps the pass of the lowest held-out loss, which a fit of that
    many passes ends at."""
    X, y = _logistic_data(5000, seed=2)
    stopped = SQNClassifier(random_state=0, tol=tol, n_iter_no_change=2).fit(X, y)
    losses = [v[0] for v in stopped.validation_loss_]
    assert stopped.n_iter_ == len(losses) == _last_counted(losses, tol) + 3
    best = int(np.argmin(losses)) + 1
    one = SQNClassifier(random_state=0, max_iter=best, tol=None).fit(X, y)
    np.testing.assert_array_equal(stopped.coef_, one.coef_)
    np.testing.assert_array_equal(stopped.intercept_, one.intercept_)


def test_small_data_keeps_the_in_memory_recipe() -> None:
    X, y = _logistic_data(2000, seed=4)
    clf = SQNClassifier(random_state=0).fit(X, y)
    assert not hasattr(clf, "steps_")
    assert not clf.to_model().info["curvature"].startswith("adagrad(")


@pytest.mark.parametrize("chunk", [1200, 100_000])
def test_in_memory_fit_is_the_fit_of_a_stream_in_its_chunks(
        large: None, monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    """In the large-data regime the in-memory data are a stream of ``IN_MEMORY_CHUNK``-row
    chunks: the same coefficients as a stream of the same rows in chunks of that size."""
    from sqnopt.training import _streaming

    monkeypatch.setattr(_streaming, "IN_MEMORY_CHUNK", chunk)
    X, y = _logistic_data(5000, seed=5)
    mem = SQNClassifier(random_state=0, max_iter=2, tol=None).fit(X, y)
    stream = stream_arrays(X, y, chunk_size=chunk)
    st = SQNClassifier(random_state=0, max_iter=2, tol=None).fit(stream)
    np.testing.assert_array_equal(st.coef_, mem.coef_)
    np.testing.assert_array_equal(st.intercept_, mem.intercept_)


def test_stream_in_chunks_learns_and_holds_out_the_same_rows() -> None:
    X, y = _logistic_data(12_000, seed=6)
    a = SQNClassifier(random_state=0, max_iter=3, tol=None).fit(
        stream_arrays(X, y, chunk_size=1000))
    b = SQNClassifier(random_state=0, max_iter=3, tol=None).fit(
        stream_arrays(X, y, chunk_size=2500))
    assert a.score(X, y) > 0.7 and b.score(X, y) > 0.7
    assert a.n_features_in_ == X.shape[1]
    # the same held-out rows: both report a loss per pass on them, of similar size
    assert abs(a.validation_loss_[0][0] - b.validation_loss_[0][0]) < 0.05


def test_partial_fit_default_is_streaming_not_newton() -> None:
    from sklearn.datasets import load_breast_cancer
    from sklearn.linear_model import SGDClassifier
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    X, y = load_breast_cancer(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    sc = StandardScaler().fit(Xtr)
    Xtr, Xte = sc.transform(Xtr), sc.transform(Xte)
    ours = SQNClassifier(random_state=0)
    peer = SGDClassifier(loss="log_loss", random_state=0)
    for s in range(0, Xtr.shape[0], 50):
        ours.partial_fit(Xtr[s:s + 50], ytr[s:s + 50], classes=[0, 1])
        peer.partial_fit(Xtr[s:s + 50], ytr[s:s + 50], classes=[0, 1])
    assert ours.to_model().info["curvature"].startswith("adagrad(")
    assert ours.score(Xte, yte) >= peer.score(Xte, yte) - 0.02


def test_partial_fit_pickled_during_the_race_continues_exactly() -> None:
    X, y = _logistic_data(3000, seed=8)
    whole = SQNClassifier(random_state=0)
    split = SQNClassifier(random_state=0)
    for s in range(0, 3000, 100):
        whole.partial_fit(X[s:s + 100], y[s:s + 100], classes=[-1, 1])
        split.partial_fit(X[s:s + 100], y[s:s + 100], classes=[-1, 1])
        if s == 300:    # still racing (first segment RACE_FIRST_SEGMENT rows, then twice that)
            assert split._trainer._race is not None
            split = pickle.loads(pickle.dumps(split))
    np.testing.assert_array_equal(split.coef_, whole.coef_)
    assert split.steps_ == whole.steps_


def test_named_curvature_keeps_its_recipe_in_partial_fit() -> None:
    X, y = _logistic_data(2000, seed=9)
    clf = SQNClassifier(curvature="lbfgs", random_state=0)
    clf.partial_fit(X[:1000], y[:1000], classes=[-1, 1])
    assert clf._trainer._race is None
    assert clf.to_model().info["curvature"].startswith("lbfgs(")


def test_bad_early_stopping_settings_are_refused(large: None) -> None:
    X, y = _logistic_data(2000, seed=10)
    with pytest.raises(ValueError, match="validation_fraction"):
        SQNClassifier(validation_fraction=1.5).fit(X, y)
    with pytest.raises(ValueError, match="early_stopping"):
        SQNClassifier(early_stopping="yes").fit(X, y)  # type: ignore[arg-type]


def test_a_budget_that_ends_while_improving_warns(large: None) -> None:
    from sqnopt.estimators import SQNConvergenceWarning

    X, y = _logistic_data(5000, seed=11)
    with pytest.warns(SQNConvergenceWarning, match="still improving when max_iter=2"):
        SQNClassifier(random_state=0, max_iter=2).fit(X, y)
    # one pass: nothing to compare with, no warning (the usual budget of a stream)
    clf = SQNClassifier(random_state=0, max_iter=1).fit(X, y)
    assert not clf.converged_ and clf.n_iter_ == 1


def test_a_race_cut_short_keeps_the_best_of_the_segment_under_way() -> None:
    """When the data end inside a segment, the race ends on that segment's progressive loss
    (one cut to one candidate); with no example since the last cut, on everything learned.
    Cutting repeatedly without new examples ranked every candidate equal and kept the
    smallest step."""
    from types import SimpleNamespace

    from sqnopt.training._streaming import _Learner

    def learner(step: float, loss: float, weight: float) -> _Learner:
        counters = SimpleNamespace(prog_loss=loss * weight, prog_weight=weight)
        return _Learner(step, None, SimpleNamespace(counters=counters, diverged=False))  # type: ignore[arg-type]

    race = StepRace([0.1, 0.2, 0.4, 0.8], 100, lambda step: None)  # type: ignore[arg-type, return-value]
    race.learners = [learner(0.1, 0.50, 60), learner(0.2, 0.45, 60), learner(0.4, 0.30, 60),
                     learner(0.8, 0.40, 60)]
    race.seg_done = 60                # 60 of the segment's 100 examples, then the data end
    race._cut_to_one()
    assert race.done and race.winner.step == 0.4
    race = StepRace([0.1, 0.2], 100, lambda step: None)  # type: ignore[arg-type, return-value]
    race.learners = [learner(0.1, 0.5, 100), learner(0.2, 0.3, 100)]
    for ln in race.learners:
        ln.mark = (ln.state.counters.prog_loss, ln.state.counters.prog_weight)
    race._cut_to_one()                # no example since the last cut: everything learned
    assert race.winner.step == 0.2


def test_a_callback_that_returns_true_ends_a_fit_over_chunks() -> None:
    """A fit over chunks runs its solvers once per chunk; a callback returning True ends the
    fit (as it ends an in-memory fit's one run), not only the current chunk's run."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 5))
    y = (X[:, 0] > 0).astype(float)
    seen: list[int] = []

    def stop(info: object) -> bool:
        seen.append(int(getattr(info, "n_samples")))
        return True

    m = SQNClassifier(max_iter=5, tol=None, callback=stop).fit(
        stream_arrays(X, y, chunk_size=500))
    assert m.n_iter_ == 1 and len(m.validation_loss_) == 1
    assert max(seen) <= 500                 # the first chunk's runs, no later chunk
    every: list[int] = []
    m = SQNClassifier(max_iter=5, tol=None, callback=lambda i: every.append(i.n_samples)).fit(
        stream_arrays(X, y, chunk_size=500))
    assert m.n_iter_ == 5 and max(every) > 500


@pytest.mark.parametrize("kind", ["csr64", "csr32", "dense"])
def test_chunk_rows_are_the_kept_rows_in_buffers_used_again(kind: str) -> None:
    """``ChunkRows.take`` gives the rows SciPy's / NumPy's indexing gives (values, indices,
    order, dtype), marked checked; its two buffer sets alternate, so the third chunk is written
    where the first was, and after ``retire`` into memory of its own."""
    from sqnopt.data import check_matrix
    from sqnopt.training._streaming import ChunkRows

    rng = np.random.default_rng(3)

    def chunk(n: int) -> tuple[object, np.ndarray]:
        X, _ = _logistic_data(n, seed=int(rng.integers(100)))
        Xc = (check_matrix(X.astype(np.float32)) if kind == "csr32" else
              check_matrix(X.toarray()) if kind == "dense" else check_matrix(X))
        return Xc, rng.random(n) < 0.8

    def dense(M: object) -> np.ndarray:
        return M.toarray() if sp.issparse(M) else np.asarray(M)  # type: ignore[union-attr]

    rows = ChunkRows()
    taken = []
    for n in (300, 280, 310, 290):      # the third is larger than the first: the buffer grows
        Xc, keep = chunk(n)
        got = rows.take(Xc, keep)
        want = Xc[keep]
        np.testing.assert_array_equal(dense(got), dense(want))
        assert got.dtype == want.dtype and got.shape == want.shape
        if sp.issparse(got):
            np.testing.assert_array_equal(got.indices, want.indices)
            np.testing.assert_array_equal(got.indptr, want.indptr)
            assert check_matrix(got) is got        # marked checked: passed on as it is
        taken.append((got, dense(got).copy()))
    data = [g.data if sp.issparse(g) else g for g, _ in taken]
    assert np.shares_memory(data[1], data[3]) and not np.shares_memory(data[0], data[1])
    rows.retire()
    Xc, keep = chunk(200)
    fresh = rows.take(Xc, keep)
    fresh_data = fresh.data if sp.issparse(fresh) else fresh
    assert not any(np.shares_memory(fresh_data, d) for d in data)
    np.testing.assert_array_equal(dense(taken[3][0]), taken[3][1])   # left as it was


def test_copy_segments_refuses_segments_outside_its_arrays() -> None:
    from sqnopt.data._rows import copy_segments

    src = np.arange(10.0)
    dst = np.zeros(6)
    ip = np.intp
    copy_segments(src, dst, np.array([7, 0], ip), np.array([3, 2], ip), np.array([0, 3], ip))
    np.testing.assert_array_equal(dst, [7, 8, 9, 0, 1, 0])
    for starts, lengths, offsets in (([8], [3], [0]), ([0], [3], [4]), ([-1], [1], [0]),
                                     ([0], [-1], [0])):
        with pytest.raises(ValueError, match="outside"):
            copy_segments(src, dst, np.array(starts, ip), np.array(lengths, ip),
                          np.array(offsets, ip))
    with pytest.raises(ValueError, match="same dtype"):
        copy_segments(src, dst.astype(np.float32), np.array([0], ip), np.array([1], ip),
                      np.array([0], ip))


def test_a_sub_problem_that_stops_keeps_its_rows(large: None, monkeypatch: pytest.MonkeyPatch
                                                 ) -> None:
    """One-vs-rest sub-problems stop on their held-out losses at different passes; one that
    stopped stays bound to its last chunk, whose buffer the others' later chunks must not
    overwrite (five chunks a pass: the buffer sets' turns change from pass to pass): the
    results -- coefficients, and the objective values at them, computed at the end of the fit
    on each sub-problem's rows -- equal those of the fit whose kept rows are SciPy's copies.
    Without ``ChunkRows.retire`` the values of the sub-problems that stopped first differ."""
    from sqnopt.training import _streaming

    monkeypatch.setattr(_streaming, "IN_MEMORY_CHUNK", 1800)
    rng = np.random.default_rng(13)
    X, _ = _logistic_data(9000, seed=13)
    scores = X @ rng.normal(size=(X.shape[1], 3)) * np.array([0.3, 1.0, 3.0])
    y = np.argmax(scores + rng.gumbel(size=scores.shape), axis=1)

    def fit() -> tuple[np.ndarray, list[float], list[int]]:
        clf = SQNClassifier(random_state=0, n_iter_no_change=1, max_iter=12,
                            multiclass="ovr").fit(X, y)
        return (clf.coef_, [float(r.fun) for r in clf._trainer.results_],
                [len(v) for v in clf.validation_loss_])

    coef, fun, training = fit()
    assert len(set(training)) > 2      # sub-problems stopped at two different passes
    monkeypatch.setattr(_streaming.ChunkRows, "take", lambda self, Xc, keep: Xc[keep])
    plain_coef, plain_fun, _ = fit()
    np.testing.assert_array_equal(coef, plain_coef)
    assert fun == plain_fun


def test_the_feature_scale_warning_is_checked_once_per_fit(
        large: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The in-memory large-data fit checks the features' scales on all its rows; its first
    chunk is not checked again (one warning, one pass over the sample's entries), while a
    stream is checked on its first chunk."""
    X, y = _logistic_data(4000, seed=2)
    X = X @ sp.diags(np.where(np.arange(X.shape[1]) % 2 == 0, 1.0, 1e4))
    calls: list[int] = []
    real = recipes.feature_scale_spread

    def counted(Xc, fit_intercept=False):  # type: ignore[no-untyped-def]
        calls.append(int(Xc.shape[0]))
        return real(Xc, fit_intercept)

    monkeypatch.setattr(recipes, "feature_scale_spread", counted)
    with pytest.warns(sklearn.exceptions.ConvergenceWarning, match="differ by a factor") as rec:
        SQNClassifier(max_iter=1, random_state=0).fit(X, y)
    assert calls == [4000]
    assert sum("differ by a factor" in str(w.message) for w in rec) == 1
    calls.clear()
    with pytest.warns(sklearn.exceptions.ConvergenceWarning, match="differ by a factor"):
        SQNClassifier(max_iter=1, random_state=0).fit(stream_arrays(X, y, chunk_size=1000))
    assert len(calls) == 1 and calls[0] < 1000      # the first chunk, less its held-out rows
