"""sqnopt.dask on a LocalCluster with 2 worker processes (issue 25): the distributed solves
equal the single-machine solves of the concatenated rows, whatever the number of workers;
a worker killed mid-fit does not change the result; the sequential methods say that they run
on the client; bad input gets clear errors; ``import sqnopt`` works without Dask."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import warnings
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

da = pytest.importorskip("dask.array", exc_type=ImportError)
distributed = pytest.importorskip("distributed", exc_type=ImportError)
pytest.importorskip("sklearn")

from sqnopt import LBFGS, SVRG, Armijo, Fixed, Full, LogLoss, Softmax, Solver  # noqa: E402
from sqnopt import SQNClassifier, SQNConvergenceWarning, recipes  # noqa: E402
from sqnopt.dask import (  # noqa: E402
    ChunkedData,
    DaskSQNClassifier,
    DistributedObjective,
    SequentialOnClientWarning,
    solve,
)

RTOL = 1e-10


def _cluster(n_workers: int, processes: bool = True) -> Any:
    return distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1,
                                    processes=processes, dashboard_address=None,
                                    worker_dashboard_address=None)


@pytest.fixture(scope="module")
def client() -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # the cluster's start-up chatter
        cluster = _cluster(2)
        c = distributed.Client(cluster)
    yield c
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c.close()
        cluster.close()


def _binary(n: int = 1600, p: int = 12, seed: int = 0, sparse: bool = False
            ) -> tuple[Any, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    if sparse:
        X[rng.random((n, p)) < 0.7] = 0.0
    y = np.where(X @ rng.standard_normal(p) + 0.3 * rng.standard_normal(n) > 0, 1, -1)
    return (sp.csr_matrix(X) if sparse else X), y


def _dask(X: Any, y: np.ndarray, rows: int = 200) -> tuple[Any, Any]:
    return (da.from_array(X, chunks=(rows, -1), asarray=False),
            da.from_array(y, chunks=rows))


def _rel(a: float, b: float) -> float:
    return abs(a - b) / abs(b)


# ---- equal results ------------------------------------------------------------------------

def test_full_batch_lbfgs_equals_one_machine_on_1_and_2_workers(client: Any) -> None:
    """Deterministic full-batch L-BFGS: the distributed objective equals sqnopt's own solve
    of the concatenated rows to 1e-10, and the runs on 1 and 2 workers are identical bits (the
    chunks' sums are added in chunk order, wherever they were computed; the one-worker cluster
    runs in this process, which starts in a fraction of the time)."""
    X, y = _binary(sparse=True)
    solver = Solver(LogLoss(lam=1e-3), LBFGS(), Full(), Armijo(), fit_intercept=True,
                    max_iter=40, gtol=1e-9)
    local = solver.fit(X, y)
    Xd, yd = _dask(X, y)
    two = solve(solver, Xd, yd, client=client)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster1 = _cluster(1, processes=False)
        client1 = distributed.Client(cluster1, set_as_default=False)
    try:
        one = solve(solver, Xd, yd, client=client1)
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            client1.close()
            cluster1.close()
    assert local.n_iter > 5
    for res in (one, two):
        assert res.status is local.status and res.n_iter == local.n_iter
        assert _rel(res.fun, local.fun) <= RTOL
        np.testing.assert_allclose(res.w, local.w, rtol=0, atol=1e-8)
    assert np.array_equal(one.w, two.w) and one.fun == two.fun


def test_worker_threads_change_no_result() -> None:
    """``n_jobs`` reaches every chunk's passes on its worker (here an in-process worker, so that
    a block policy splitting these small chunks into many blocks applies there too): the fit is
    the same bits on 1, 2 and 4 threads, distributed and sequential."""
    from sqnopt import _parallel

    X, y = _binary(n=2400, sparse=True)
    old = _parallel._set_block_policy(min_block_work=64, reduce_ratio=1e-3, max_blocks=32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster1 = _cluster(1, processes=False)
        client1 = distributed.Client(cluster1, set_as_default=False)
    try:
        with client1.as_current():
            fits = {n: DaskSQNClassifier(alpha=1e-3, random_state=3, local_batch=0,
                                         n_jobs=n).fit(*_dask(X, y, 600)) for n in (1, 2, 4)}
    finally:
        _parallel._set_block_policy(**old)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            client1.close()
            cluster1.close()
    assert fits[1].distributed_
    for n in (2, 4):
        np.testing.assert_array_equal(fits[n].coef_, fits[1].coef_)
        assert fits[n].n_iter_ == fits[1].n_iter_


def test_estimator_defaults_equal_sqnclassifier(client: Any) -> None:
    """The default recipe (progressive batching with an Armijo search, growing to full-batch
    L-BFGS), same seed: same batches, same iterations, objective equal to 1e-10; the first
    batches are gathered to the client, the later ones evaluated on the workers."""
    X, y = _binary(n=4000)
    # out of core "auto" stays L-BFGS (recipes.default_curvature; in memory this data gets
    # Newton): the local fit names it
    local = SQNClassifier(alpha=1e-3, random_state=3, curvature="lbfgs").fit(X, y)
    dist = DaskSQNClassifier(alpha=1e-3, random_state=3, local_batch=1500).fit(*_dask(X, y, 500))
    assert dist.distributed_ and dist.converged_ and local.converged_
    assert (dist.n_iter_, dist.t_) == (local.n_iter_, local.t_)
    assert _rel(dist.history_.objective[-1], local.history_.objective[-1]) <= RTOL
    np.testing.assert_allclose(dist.coef_, local.coef_, atol=1e-7)
    assert 0 < dist.comm_["rows_gathered"] < 4000 * 3       # batches of 1000: on the client
    np.testing.assert_array_equal(dist.predict(da.from_array(X, chunks=(700, -1))).compute(),
                                  local.predict(X))
    np.testing.assert_allclose(dist.predict_proba(X), local.predict_proba(X), atol=1e-7)
    assert dist.score(*_dask(X, y)) == pytest.approx(local.score(X, y))


def test_estimator_defaults_read_sparse_chunks_as_sqnclassifier_reads_the_matrix(
        client: Any) -> None:
    """The default recipe's L-BFGS memory follows the stored values (recipes.lbfgs_memory):
    the distributed fit counts them from the chunks' summaries, so on sparse chunks it runs
    SQNClassifier's iterates (18 pairs here, where the dense formula would give 30; about 50
    iterations, so the memory shows in the iterates)."""
    X, y = _binary(n=500, p=40, sparse=True)
    assert recipes.lbfgs_memory(X) == 18
    local = SQNClassifier(alpha=1e-5, random_state=3, curvature="lbfgs", tol=1e-8).fit(X, y)
    dist = DaskSQNClassifier(alpha=1e-5, random_state=3, local_batch=0,
                             tol=1e-8).fit(*_dask(X, y, 200))
    assert dist.distributed_ and dist.converged_ and local.converged_
    assert (dist.n_iter_, dist.t_) == (local.n_iter_, local.t_)
    assert _rel(dist.history_.objective[-1], local.history_.objective[-1]) <= RTOL
    np.testing.assert_allclose(dist.coef_, local.coef_, atol=1e-7)


def test_sqb_equals_one_machine(client: Any) -> None:
    """SQB: growing gradient batches (on the workers once larger than local_batch) and bound
    batches gathered to the client, where the compiled bound works on them."""
    X, y = _binary(n=3000, sparse=True)
    kw = dict(alpha=1e-3, curvature="quadratic_bound", random_state=1, max_iter=8, tol=None)
    local = SQNClassifier(**kw).fit(X, y)
    dist = DaskSQNClassifier(**kw, local_batch=500).fit(*_dask(X, y, 400))
    assert dist.distributed_ and dist.t_ == local.t_
    assert _rel(dist.history_.objective[-1], local.history_.objective[-1]) <= RTOL


def test_svrg_snapshots_equal_one_machine(client: Any) -> None:
    """SVRG + L-BFGS with batches of 600: snapshots (full gradients) and the batches' gradient
    pairs (one round trip for both) on the workers."""
    X, y = _binary(n=2400)
    solver = Solver(LogLoss(lam=1e-3), LBFGS(), Fixed(600), Armijo(), gradient=SVRG(),
                    sampling="subset", random_state=5, max_epochs=6)
    local = solver.fit(X, y)
    dist = solve(solver, *_dask(X, y, 300), client=client, local_batch=100)
    assert dist.n_iter == local.n_iter and dist.n_estimator_samples == local.n_estimator_samples
    assert _rel(dist.fun, local.fun) <= RTOL


def test_progressive_lbfgs_equals_one_machine(client: Any) -> None:
    """Progressive-batching L-BFGS (the ``progressive_lbfgs`` preset): the first batches are
    gathered to the client, the larger ones run on the workers, where the inner-product test's
    variance takes a second round trip carrying the batch gradient. Same seed: the test grows
    the batches to the same sizes (same samples drawn, same test evaluations), the objective
    equals the single-machine solve's to 1e-10, and the run reaches the whole data set."""
    X, y = _binary(n=3000, p=20, sparse=True)
    solver = Solver.preset("progressive_lbfgs", lam=1e-3, batch_size=100, theta=0.3,
                           fit_intercept=True, random_state=4, max_iter=60,
                           history_every=1)
    local = solver.fit(X, y)
    data = ChunkedData.from_dask(*_dask(X, y, 375), client=client)
    try:
        dist = solve(solver, None, None, data=data, local_batch=400)
        trips = data.stats.round_trips
    finally:
        data.release()
    sizes = np.diff(local.history.samples)
    assert sizes.min() < 400 < 3000 == sizes.max()       # both paths, and full batches
    assert (dist.n_iter, dist.n_samples) == (local.n_iter, local.n_samples)
    assert dist.n_estimator_samples == local.n_estimator_samples > 0
    np.testing.assert_array_equal(dist.history.samples, local.history.samples)
    assert _rel(dist.fun, local.fun) <= RTOL
    np.testing.assert_allclose(dist.history.objective, local.history.objective, rtol=RTOL)
    # a tested batch on the workers costs two round trips (gradient, then the variance)
    tested_on_workers = int(np.sum((sizes > 400) & (sizes < 3000)))
    assert tested_on_workers > 0 and trips > 2 * tested_on_workers


def test_estimator_progressive_gradient_runs_distributed(client: Any) -> None:
    """``gradient="progressive"`` declares sums over row blocks and whole-data batches
    (``partial_sums="variance_test"``): DaskSQNClassifier runs it on the workers -- with a
    fixed first batch (the preset's composition) as with the default growing schedule -- and
    agrees with SQNClassifier."""
    X, y = _binary(n=2000)
    composition = dict(curvature="lbfgs", gradient=("progressive", {"theta": 0.2}),
                       schedule=("fixed", {"size": 100}), step="armijo", sampling="subset")
    # curvature named: out of core "auto" stays L-BFGS, in memory this data gets Newton
    for kw in (composition, dict(curvature="lbfgs", gradient="progressive")):
        local = SQNClassifier(alpha=1e-3, random_state=2, **kw).fit(X, y)
        with warnings.catch_warnings():
            warnings.simplefilter("error", SequentialOnClientWarning)
            dist = DaskSQNClassifier(alpha=1e-3, random_state=2, local_batch=300,
                                     **kw).fit(*_dask(X, y, 250))
        assert dist.distributed_ and dist.converged_ == local.converged_
        assert (dist.n_iter_, dist.t_) == (local.n_iter_, local.t_)
        assert _rel(dist.history_.objective[-1], local.history_.objective[-1]) <= RTOL
        assert dist.comm_["round_trips"] > 0 and dist.comm_["bytes_received"] > 0
    # a multinomial model: K = 3 scores per sample in the test's products
    rng = np.random.default_rng(2)
    Xm = rng.standard_normal((1500, 6))
    ym = np.argmax(Xm @ rng.standard_normal((6, 3)) + 0.5 * rng.standard_normal((1500, 3)),
                   axis=1)
    kw = dict(composition, schedule=("fixed", {"size": 64}))
    local = SQNClassifier(alpha=1e-2, random_state=0, **kw).fit(Xm, ym)
    dist = DaskSQNClassifier(alpha=1e-2, random_state=0, local_batch=200,
                             **kw).fit(*_dask(Xm, ym, 250))
    assert dist.distributed_ and dist.t_ == local.t_ and dist.coef_.shape == (3, 6)
    assert _rel(dist.history_.objective[-1], local.history_.objective[-1]) <= RTOL


def test_what_runs_distributed_is_what_the_estimator_declares() -> None:
    """The decision reads ``partial_sums``, not the type: an estimator that declares the
    progressive form (here the NumPy twin, as a plugin would) gets the distributed counterpart
    with its ``theta``; one that declares none (SAGA's per-sample table) is refused by
    ``solve`` and streamed by the estimator."""
    from sqnopt.dask import DistributedProgressiveBatch, DistributedSVRG
    from sqnopt.dask._objective import distributed_gradient, runs_distributed
    from sqnopt.gradients import SAGA, Minibatch, ProgressiveBatch
    from sqnopt.gradients.reference import ProgressiveBatchNumPy, SVRGNumPy

    assert runs_distributed(ProgressiveBatch(), False) and runs_distributed(SVRG(), False)
    assert runs_distributed(Minibatch(), True) and not runs_distributed(Minibatch(), False)
    assert not runs_distributed(SAGA(), True)
    twin = distributed_gradient(ProgressiveBatchNumPy(theta=0.4))
    assert isinstance(twin, DistributedProgressiveBatch) and twin.theta == 0.4
    assert distributed_gradient(SVRGNumPy(period=7)) == DistributedSVRG(period=7)
    with pytest.raises(ValueError, match="partial_sums.*sequential"):
        distributed_gradient(SAGA())


def test_variance_from_chunk_sums_is_exact() -> None:
    """The test's variance from per-chunk counts, sums and centred sums of squares equals the
    variance of the concatenated values, also where the plain sums of squares cancel (a small
    spread about a large mean)."""
    from sqnopt.dask._chunks import combine_variance, inner_product_sums

    rng = np.random.default_rng(0)
    for shift, rel in ((0.0, 1e-13), (1e6, 1e-9)):
        a = shift + rng.standard_normal(1000)
        parts = [inner_product_sums(a[i:j, None], np.ones((j - i, 1)))
                 for i, j in ((0, 1), (1, 400), (400, 400), (400, 1000))]
        exact = np.var(a, ddof=1)
        assert combine_variance(parts) == pytest.approx(exact, rel=rel)
    naive = (np.sum(a * a) - np.sum(a) ** 2 / a.shape[0]) / (a.shape[0] - 1)
    assert abs(naive - exact) > 1e-6 * exact          # what the plain sums of squares lose
    assert np.isnan(combine_variance([inner_product_sums(np.ones((1, 2)), np.ones((1, 2)))]))


def test_multinomial_and_one_vs_rest(client: Any) -> None:
    rng = np.random.default_rng(2)
    X = rng.standard_normal((1500, 6))
    y = np.array(["a", "b", "c"])[np.argmax(X @ rng.standard_normal((6, 3)), axis=1)]
    Xd = da.from_array(X, chunks=(250, -1))
    yd = da.from_array(y, chunks=250)
    for kw in (dict(), dict(multiclass="ovr", loss="squared_hinge", schedule="full")):
        # out of core "auto" stays L-BFGS (recipes.default_curvature); in memory these six
        # features get Newton: the local fit names the distributed one's model
        local = SQNClassifier(alpha=1e-2, random_state=0, curvature="lbfgs", **kw).fit(X, y)
        dist = DaskSQNClassifier(alpha=1e-2, random_state=0, **kw).fit(Xd, yd)
        assert dist.coef_.shape == local.coef_.shape == (3, 6)
        hl = local.history_ if isinstance(local.history_, list) else [local.history_]
        hd = dist.history_ if isinstance(dist.history_, list) else [dist.history_]
        for a, b in zip(hd, hl):
            assert _rel(a.objective[-1], b.objective[-1]) <= RTOL
        assert list(dist.classes_) == ["a", "b", "c"]
    # Softmax's K x n_features parameters travel as one vector per worker and per chunk
    res = solve(Solver(Softmax(lam=1e-2), LBFGS(), Full(), Armijo(), max_iter=5), Xd, yd,
                client=client)
    assert res.w.shape == (18,)


def test_dataframe_input_and_weights(client: Any) -> None:
    dd = pytest.importorskip("dask.dataframe", exc_type=ImportError)
    pd = pytest.importorskip("pandas")
    X, y = _binary(n=1200, p=5)
    w = np.random.default_rng(0).uniform(0.5, 2.0, size=1200)
    df = dd.from_pandas(pd.DataFrame(X, columns=list("abcde")), npartitions=4)
    ys = dd.from_pandas(pd.Series(y), npartitions=4)
    kw = dict(alpha=1e-3, schedule="full", class_weight="balanced")
    local = SQNClassifier(**kw, curvature="lbfgs").fit(X, y, sample_weight=w)   # as above
    dist = DaskSQNClassifier(**kw).fit(df, ys, sample_weight=w)
    assert _rel(dist.history_.objective[-1], local.history_.objective[-1]) <= RTOL
    assert dist.n_features_in_ == 5


# ---- fault tolerance -------------------------------------------------------------------------

def _full_batch(**kw: Any) -> Solver:
    return Solver(LogLoss(lam=1e-3), LBFGS(), Full(), Armijo(), **kw)


def _progressive(**kw: Any) -> Solver:
    return Solver.preset("progressive_lbfgs", lam=1e-3, batch_size=100, theta=0.3,
                         random_state=1, **kw)


@pytest.mark.parametrize("make", [_full_batch, _progressive], ids=["full_batch", "progressive"])
def test_a_worker_killed_mid_fit_does_not_change_the_result(client: Any, make: Any) -> None:
    """Kill one worker process (SIGKILL) at iteration 4 of a full-batch solve, and of a
    progressive-batching solve with every batch on the workers (its variance tasks keep no
    state): the nanny restarts it, the scheduler recomputes its chunks from the input graph,
    and the result is the undisturbed run's, bit for bit."""
    client.wait_for_workers(2, timeout=60)
    X, y = _binary(n=2000, sparse=True)
    Xd, yd = _dask(X, y, 250)
    settings = dict(max_iter=25, report_every=1)
    clean = solve(make(**settings), Xd, yd, client=client, local_batch=0)
    pids = client.run(os.getpid)
    killed: list[int] = []

    def kill(info: Any) -> None:
        if info.iteration == 4 and not killed:
            victim = sorted(pids.values())[0]
            os.kill(victim, signal.SIGKILL)
            killed.append(victim)

    with warnings.catch_warnings(), distributed.get_task_stream(client) as stream:
        warnings.simplefilter("ignore")      # the nanny's and scheduler's reports of the death
        hit = solve(make(callback=kill, **settings), Xd, yd, client=client, local_batch=0)
    assert killed and killed[0] not in client.run(os.getpid).values()
    # the dead worker's chunks were computed again (from the input's graph)
    runs: dict[str, int] = {}
    for task in stream.data:
        if "make_chunk" in str(task["key"]):
            runs[str(task["key"])] = runs.get(str(task["key"]), 0) + 1
    assert len(runs) == 8 and max(runs.values()) == 2 and min(runs.values()) == 1, runs
    assert (hit.n_iter, hit.n_estimator_samples) == (clean.n_iter, clean.n_estimator_samples)
    assert np.array_equal(hit.w, clean.w) and hit.fun == clean.fun
    client.wait_for_workers(2, timeout=60)


# ---- what does not run distributed says so ---------------------------------------------------

def test_sequential_methods_run_on_the_client_and_say_so(client: Any) -> None:
    X, y = _binary(n=1000)
    clf = DaskSQNClassifier(alpha=1e-2, curvature="lbfgs", schedule=("fixed", {"size": 5}),
                            step=("decaying", {"eps0": 0.1, "T0": 100.0}), max_iter=3,
                            tol=None, random_state=0)
    with pytest.warns(SequentialOnClientWarning, match="sample stream"):
        clf.fit(*_dask(X, y, 250))
    assert not clf.distributed_ and clf.n_iter_ == 3
    assert clf.comm_["rows_gathered"] == 3 * 1000         # each chunk once per pass
    assert clf.score(X, y) > 0.8
    # partial_fit: one pass over the chunks on the client
    pf = DaskSQNClassifier(alpha=1e-2, curvature="lbfgs", schedule=("fixed", {"size": 5}),
                           step=("decaying", {"eps0": 0.1, "T0": 100.0}), random_state=0)
    pf.partial_fit(*_dask(X, y, 250), classes=[-1, 1])
    assert pf.t_ == 1000 // 5 and pf.score(X, y) > 0.8


def test_the_chunk_stream_stops_by_the_fit_rules(client: Any) -> None:
    """The sequential path's stopping tests are SQNClassifier's (PassTests): a budget spent
    above ``tol`` warns with the gradient entry and the objective; a non-smooth loss whose
    objective stops improving has converged."""
    X, y = _binary(n=1000)
    sgd = dict(alpha=1e-2, curvature="identity", schedule=("fixed", {"size": 5}),
               step=("decaying", {"eps0": 0.1, "T0": 100.0}), random_state=0)
    clf = DaskSQNClassifier(max_iter=2, tol=1e-12, **sgd)  # type: ignore[arg-type]
    with pytest.warns(SequentialOnClientWarning), \
            pytest.warns(SQNConvergenceWarning,
                         match=r"stopped at max_iter=2 passes with the largest gradient entry "
                               r"at [0-9.e+-]+ > tol=1e-12 \(F = "):
        clf.fit(*_dask(X, y, 250))
    assert clf.n_iter_ == 2 and not clf.converged_
    # hinge: the first pass sets the best objective, the second cannot improve it by half
    svm = DaskSQNClassifier(loss="hinge", max_iter=10, tol=0.5, n_iter_no_change=1,
                            **sgd)  # type: ignore[arg-type]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SequentialOnClientWarning)
        warnings.simplefilter("error", SQNConvergenceWarning)
        svm.fit(*_dask(X, y, 250))
    assert svm.n_iter_ == 2 and svm.converged_


# ---- what travels ------------------------------------------------------------------------------

def test_only_parameter_sized_vectors_travel(client: Any) -> None:
    X, y = _binary(n=2000, p=40)
    data = ChunkedData.from_dask(*_dask(X, y, 250), client=client)
    try:
        dobj = DistributedObjective(LogLoss(lam=1e-3), data)
        k = dobj.init(dobj.stand_in(fit_intercept=True))
        w = np.full(k.n_params, 0.01)
        g = np.empty_like(w)
        before = dict(data.stats.as_dict())
        k.full_gradient(w, g)
        sent = data.stats.bytes_sent - before["bytes_sent"]
        received = data.stats.bytes_received - before["bytes_received"]
        tasks = data.stats.tasks - before["tasks"]
        assert tasks <= 2                                   # one task per worker
        assert received == data.n_chunks * (8 + 8 * k.n_params)
        assert sent < tasks * (8 * k.n_params + 2000)       # w once per task, plus the spec
        # the whole gradient and objective agree with one machine's
        ref = LogLoss(lam=1e-3).init(_prepared(X, y))
        g_ref = np.empty_like(w)
        f_ref = ref.full_gradient(w, g_ref)
        assert _rel(k.full_gradient(w, g), f_ref) <= 1e-13
        np.testing.assert_allclose(g, g_ref, rtol=1e-12, atol=1e-15)
        # progressive batching's tests on the workers: the batch gradient, then a second round
        # trip carrying it, four numbers per chunk back; the variances are one machine's
        dobj0 = DistributedObjective(LogLoss(lam=1e-3), data, local_batch=0)
        k0 = dobj0.init(dobj0.stand_in(fit_intercept=True))
        batch = np.random.default_rng(1).permutation(2000)[:700]
        before = dict(data.stats.as_dict())
        f, var, perp = k0.gradient_variance(w, batch, g, True, True)
        after = data.stats.as_dict()
        assert after["round_trips"] - before["round_trips"] == 2
        assert (after["bytes_received"] - before["bytes_received"]
                == data.n_chunks * (8 + 8 * k.n_params) + data.n_chunks * 32)
        assert (after["bytes_sent"] - before["bytes_sent"]
                < (after["tasks"] - before["tasks"]) * (16 * k.n_params + 2000) + 2 * 4 * 700)
        f_ref = ref.gradient(w, batch, g_ref)
        coef, _ = ref.score_derivatives(w, batch)
        a = np.sum(coef * ref.rows_dot(batch, g_ref), axis=1)
        assert _rel(f, f_ref) <= 1e-13 and _rel(var, float(np.var(a, ddof=1))) <= 1e-12
        np.testing.assert_allclose(g, g_ref, rtol=1e-12, atol=1e-15)
        # the orthogonal variance from the per-sample loss gradients d_i = c_i [x_i, 1], formed
        # densely: the trace of the covariance of their parts orthogonal to g
        D = np.asarray(coef).reshape(-1, 1) * np.hstack([X[batch], np.ones((len(batch), 1))])
        P = D - np.outer(D @ g_ref / float(g_ref @ g_ref), g_ref)
        assert _rel(perp, float(np.sum(np.var(P, axis=0, ddof=1)))) <= 1e-10
        # the same on a gathered batch (client side)
        f1, var1, perp1 = k.gradient_variance(w, batch, g, True, True)
        assert _rel(var1, var) <= 1e-12 and _rel(perp1, perp) <= 1e-10
    finally:
        data.release()


def _prepared(X: Any, y: Any) -> Any:
    from sqnopt.data import prepare

    return prepare(X, y, fit_intercept=True)


# ---- errors ----------------------------------------------------------------------------------------

def test_clear_errors(client: Any) -> None:
    X, y = _binary(n=400)
    with pytest.raises(TypeError, match="dask array or a dask DataFrame.*SQNClassifier"):
        DaskSQNClassifier().fit(X, y)
    bad = X.copy()
    bad[310, 2] = np.nan
    with pytest.raises(ValueError, match=r"chunk 3 \(rows 300 and on\).*NaN"):
        DaskSQNClassifier().fit(*_dask(bad, y, 100))
    with pytest.raises(ValueError, match="y has 399 entries but X has 400 rows"):
        DaskSQNClassifier().fit(da.from_array(X, chunks=(100, -1)), da.from_array(y[:-1]))
    with pytest.raises(ValueError, match="sampling='weighted'"):
        DaskSQNClassifier(sampling="weighted").fit(*_dask(X, y))
    with pytest.raises(ValueError, match="SAGA.*sequential"):
        solve(Solver(LogLoss(), gradient="saga"), *_dask(X, y), client=client)


def test_no_client_is_a_clear_error() -> None:
    code = ("import numpy as np, dask.array as da\n"
            "from sqnopt import Solver\n"
            "from sqnopt.dask import solve\n"
            "X = da.ones((10, 2), chunks=5); y = da.from_array(np.arange(10) % 2, chunks=5)\n"
            "try:\n    solve(Solver(), X, y)\n"
            "except ValueError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env=_env())
    assert "needs a running dask.distributed client" in out.stdout, out.stderr


@pytest.mark.parametrize("loss", ["squared_error", "huber", "poisson"])
def test_regression_losses_are_refused_naming_the_alternative(loss: str) -> None:
    """sqnopt.dask summarises its data by class: a regression loss is refused before any data
    is read or any client is needed, naming SQNRegressor and its streams."""
    from sqnopt.objectives import Huber, Poisson, SquaredError

    X, y = _dask(*_binary(n=40, p=3), rows=20)
    for method in ("fit", "partial_fit"):
        with pytest.raises(ValueError, match="real-valued targets.*SQNRegressor.*label_kind="):
            getattr(DaskSQNClassifier(loss=loss), method)(X, y)
    objective = {"squared_error": SquaredError, "huber": Huber, "poisson": Poisson}[loss]()
    with pytest.raises(ValueError, match="real-valued targets.*SQNRegressor"):
        solve(Solver(objective=objective), X, y)


def test_same_parameters_as_sqnclassifier() -> None:
    mine = DaskSQNClassifier().get_params()
    theirs = SQNClassifier().get_params()
    assert {k: mine[k] for k in theirs} == theirs
    assert set(mine) - set(theirs) == {"local_batch"}


def test_core_imports_and_runs_without_dask() -> None:
    code = ("import sys\n"
            "for m in ('dask', 'distributed'):\n    sys.modules[m] = None\n"
            "import sqnopt\n"
            "from sqnopt import SQNClassifier, Solver\n"
            "import numpy as np\n"
            "X = np.random.default_rng(0).standard_normal((50, 3)); y = X[:, 0] > 0\n"
            "SQNClassifier().fit(X, y)\n"
            "try:\n    import sqnopt.dask\n"
            "except ImportError as e:\n    print('IMPORTERROR', e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env=_env())
    assert "IMPORTERROR" in out.stdout and "pip install 'sqnopt[dask]'" in out.stdout, (
        out.stdout + out.stderr)


def _env() -> dict[str, str]:
    from conftest import sqnopt_env

    return sqnopt_env()


def test_l1_penalty_is_refused_with_the_in_memory_alternative() -> None:
    est = DaskSQNClassifier(penalty="l1")
    with pytest.raises(ValueError, match=r"penalty='l1': DaskSQNClassifier fits the L2 "
                                         r"penalty.*SQNClassifier\(penalty=...\)"):
        est._check_params()
