"""The contenders of the scale benchmark, declared in one table (:data:`CONTENDERS`).

Every contender runs in its own process (:mod:`scale.session`) and reads the training file
itself; its clock counts reading, parsing and training, never the held-out evaluations. The
objective is the same for all where they have one: logistic loss with an intercept,
``alpha = 1/N`` (scikit-learn's ``LogisticRegression()`` default ``C = 1``; VW ``--bfgs`` with
``--l2 alpha N``, VW's ``l2`` multiplying the summed loss's regulariser). Labels are 0/1.

Four ways to run (the ``run`` function of an entry):

* :func:`fit_in_memory` -- the whole file read (scikit-learn's reader, or sqnopt's, which uses
  it), then one ``fit``; sqnopt estimators report held-out points during the fit through their
  ``callback`` (at the solver's report points, spaced in log scale, the clock paused);
* :func:`stream` -- ``partial_fit`` over chunks of ``chunk_rows`` rows, read one at a time
  (scikit-learn's reader on byte ranges, sqnopt's chunked reader, or Parquet row batches through
  pyarrow), held-out points spaced in log scale and at the end of every pass;
* :func:`vw` -- Vowpal Wabbit parsing the text file in C++: one run (several passes over its
  cache with ``--save_per_pass``, each model's write time giving the pass's point); held-out
  predictions by VW afterwards;
* :func:`dask_fit` -- ``sqnopt.dask.DaskSQNClassifier`` on a ``LocalCluster`` of two worker
  processes that read byte ranges of the file themselves.

Adding a contender is one more entry, e.g.::

    Contender("SQNClassifier(curvature='lbfgs').fit(stream)", "sqnopt",
              partial(fit_stream, curvature="lbfgs"), ("svm",), role="sqn")

``role`` marks the contenders of the samples-to-target comparison (paper 003 Sec. 5): ``sqn``
(stochastic quasi-Newton), ``sgd`` and ``vw`` (the first-order peers).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np
import scipy.sparse as sp

from .session import Session

CLASSES = np.array([0.0, 1.0])
Chunks = Iterator[tuple[sp.csr_matrix, np.ndarray]]


@dataclass(frozen=True)
class Contender:
    """One row of the benchmark (see the module docstring)."""

    name: str
    library: str
    run: Callable[[Session], None]
    formats: tuple[str, ...] = ("svm",)        # training files it reads
    in_memory: bool = False                    # holds the whole training set
    role: str | None = None                    # "sqn" | "sgd" | "vw" (samples to target)
    module: str | None = None                  # import needed (optional peers)
    needs: str | None = None                   # a name sqnopt.datasets must have
    passes: str = "1"                          # what the table says about passes
    note: str = ""
    quick: bool = True                         # part of --quick

    def missing(self) -> str | None:
        """Why this contender cannot run here (None: it can)."""
        if self.module is not None:
            import importlib

            try:
                importlib.import_module(self.module)
            except ImportError as exc:
                return f"{self.module} is not installed ({exc.msg})"
        if self.needs is not None:
            import sqnopt.datasets

            if not hasattr(sqnopt.datasets, self.needs):
                return f"this sqnopt has no sqnopt.datasets.{self.needs}"
        return None


# ---------------------------------------------------------------------------- readers
def _csr32(X: Any) -> sp.csr_matrix:
    """CSR with 32-bit indices (scikit-learn's reader gives 64-bit ones on some paths, which
    ``SGDClassifier`` refuses)."""
    X = X.tocsr()
    if X.indices.dtype != np.int32 and X.nnz < 2**31 and X.shape[1] < 2**31:
        X = sp.csr_matrix((X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)),
                          shape=X.shape)
    return X


def read_whole(s: Session, how: str = "sklearn") -> tuple[sp.csr_matrix, np.ndarray]:
    """The whole svmlight training file (the caller's clock runs)."""
    path = str(s.files["train.svm"])
    if how == "sqnopt":
        from sqnopt.datasets import load_svmlight

        X, y = load_svmlight(path, n_features=s.n_features)
    else:
        from sklearn.datasets import load_svmlight_file

        X, y = load_svmlight_file(path, n_features=s.n_features, dtype=np.float64,
                                  zero_based=False)
    return _csr32(X), np.asarray(y, dtype=np.float64)


def byte_ranges(s: Session) -> list[tuple[int, int]]:
    """``(offset, length)`` byte ranges of about ``chunk_rows`` rows of the svmlight file
    (scikit-learn's reader starts at the line after ``offset`` and stops after the line that
    crosses ``offset + length``: consecutive ranges cover every line once)."""
    size = os.path.getsize(s.files["train.svm"])
    step = max(1, int(math.ceil(size * s.chunk_rows / max(s.n_train, 1))))
    return [(o, step) for o in range(0, size, step)]


def svm_chunks_sklearn(s: Session) -> Chunks:
    from sklearn.datasets import load_svmlight_file

    path = str(s.files["train.svm"])
    for offset, length in byte_ranges(s):
        X, y = load_svmlight_file(path, n_features=s.n_features, dtype=np.float64,
                                  zero_based=False, offset=offset, length=length)
        if X.shape[0]:
            yield _csr32(X), np.asarray(y, dtype=np.float64)


def svm_chunks_sqnopt(s: Session) -> Chunks:
    from sqnopt.datasets import iter_svmlight_chunks

    yield from iter_svmlight_chunks(s.files["train.svm"], s.chunk_rows, n_features=s.n_features)


def parquet_chunks(s: Session) -> Chunks:
    """Row batches of the Parquet file (label, indices, values) as CSR."""
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(str(s.files["train.parquet"]))
    for batch in pf.iter_batches(batch_size=s.chunk_rows):
        idx = batch.column("indices")
        offsets = np.asarray(idx.offsets, dtype=np.int64)
        indices = np.asarray(idx.flatten(), dtype=np.int32)
        values = np.asarray(batch.column("values").flatten(), dtype=np.float64)
        indptr = offsets - offsets[0]
        X = sp.csr_matrix((values, indices, indptr), shape=(batch.num_rows, s.n_features))
        yield X, np.asarray(batch.column("label"), dtype=np.float64)


def svm_stream(s: Session) -> Chunks:
    """sqnopt's compiled svmlight stream (read ahead in a thread), where this sqnopt has it."""
    from sqnopt.datasets import stream_svmlight

    yield from stream_svmlight(s.files["train.svm"], chunk_size=s.chunk_rows,
                               n_features=s.n_features, classes=[0.0, 1.0])


def binary_stream(s: Session) -> Chunks:
    """sqnopt's binary chunk file (no parsing), where this sqnopt has it."""
    from sqnopt.datasets import stream_binary

    yield from stream_binary(s.files["train.bin"], chunk_size=s.chunk_rows)


READERS: dict[str, Callable[[Session], Chunks]] = {
    "sklearn": svm_chunks_sklearn, "sqnopt": svm_chunks_sqnopt, "parquet": parquet_chunks,
    "stream_svmlight": svm_stream, "binary": binary_stream}
#: What each reader needs of sqnopt.datasets (the streams of a newer sqnopt).
READER_NEEDS = {"stream_svmlight": "stream_svmlight", "binary": "stream_binary"}


# ---------------------------------------------------------------------------- running
def _margin_of(w: np.ndarray, d: int) -> Callable[[sp.csr_matrix], np.ndarray]:
    """Held-out margins of a binary sqnopt iterate ``[coef, intercept]`` (or ``coef``)."""
    w = np.array(w, dtype=np.float64)
    b = float(w[d]) if w.size == d + 1 else 0.0
    return lambda X: np.asarray(X @ w[:d]) + b


def _sqn_callback(s: Session) -> Callable[[Any], bool]:
    """A solver callback recording held-out points at the report points where they are due
    (examples = the solver's gradient samples), and stopping the fit at the time cap."""
    d = s.n_features

    def callback(info: Any) -> bool:
        if s.due(info.n_samples) and info.w.size in (d, d + 1):
            s.point(info.n_samples, margin=_margin_of(info.w, d), iteration=int(info.iteration))
        return s.over_cap()

    return callback


def fit_in_memory(s: Session, make: Callable[[Session], Any], reader: str = "sklearn",
                  callback: bool = False) -> None:
    """Read the whole file, then one ``fit``; one point at the end (and the callback's)."""
    with s.timed():
        X, y = read_whole(s, reader)
    s.info["read_seconds"] = round(s.elapsed, 3)
    est = make(s)
    if callback:
        est.set_params(callback=_sqn_callback(s))
    with s.timed():
        est.fit(X, y)
    n_iter = int(np.max(getattr(est, "n_iter_", 1)))
    h = getattr(est, "history_", None)
    if h is not None and not isinstance(h, list) and len(h.samples):
        examples = float(h.samples[-1])
        s.info["effective_passes"] = round(float(h.effective_passes[-1]), 3)
    else:   # scikit-learn: one pass over the data per iteration at least
        examples = float(n_iter) * X.shape[0]
    s.info["n_iter"] = n_iter
    s.point(examples, margin=est.decision_function, final=True)


def stream(s: Session, make: Callable[[Session], Any], reader: str = "sklearn",
           passes: int = 1) -> None:
    """``partial_fit`` on chunks as they are read, ``passes`` times over the file."""
    chunks = READERS[reader]
    est = make(s)
    seen = 0
    s.resume()
    for p in range(passes):
        for X, y in chunks(s):
            est.partial_fit(X, y, classes=CLASSES)
            seen += X.shape[0]
            if s.due(seen):
                s.point(seen, margin=est.decision_function)
            if s.over_cap():
                break
        if s.status == "time cap":
            break
        s.point(seen, margin=est.decision_function, pass_end=p + 1)
    s.pause()
    s.info["passes"] = round(seen / max(s.n_train, 1), 3)


def fit_stream(s: Session, make: Callable[[Session], Any], cache: bool = True) -> None:
    """``fit`` on :func:`sqnopt.datasets.stream_svmlight` over the file at the stream's own
    chunk size (``n_features`` and the classes given, as a user of hashed features knows
    them); ``cache``: the parsed chunks written during the first pass to a cache file (fresh
    for every run, its writing counted) and read in later passes. Held-out points from the
    solver callback (the clock paused; the stream's read-ahead thread is not)."""
    from sqnopt.datasets import stream_svmlight

    est = make(s)
    report = _sqn_callback(s)
    seen = [0.0]

    def callback(info: Any) -> bool:
        seen[0] = max(seen[0], float(info.n_samples))
        return report(info)

    est.set_params(callback=callback)
    with s.timed():
        data = stream_svmlight(s.files["train.svm"], n_features=s.n_features,
                               classes=[0.0, 1.0],
                               cache=(s.workdir / "train.sqnopt-cache") if cache else False)
        est.fit(data)
    s.info["n_iter"] = int(np.max(getattr(est, "n_iter_", 1)))
    s.info["steps"] = [str(st) for st in getattr(est, "steps_", [])]
    s.point(seen[0], margin=est.decision_function, final=True)


_VW_SCRIPT = """
import sys, time
from pathlib import Path
stamp = Path(sys.argv[2])
from vowpalwabbit import Workspace
stamp.write_text(str(time.time_ns()))
ws = Workspace(sys.argv[1])
ws.run_parser()
ws.finish()
stamp.write_text(stamp.read_text() + " " + str(time.time_ns()))
"""


def vw(s: Session, passes: int = 1, bfgs: bool = False) -> None:
    """Vowpal Wabbit on ``train.vw``: ``--loss_function logistic --holdout_off`` (the
    held-out set is ours), ``-b`` one above the bits of ``n_features`` (at least 18); more than
    one pass through its cache (``-c -k``, made by the first pass), models saved after every
    pass. ``bfgs``: ``--bfgs --l2 alpha N`` (VW's batch objective is the summed loss plus
    ``l2/2 ||w||^2``: ``N`` times ours).

    VW runs in a process of its own (so that the time cap can stop it and keep the passes it
    finished); its time is wall time from just before VW starts (after that process's
    interpreter has started) to each pass's model write, and to its end."""
    import subprocess
    import sys

    bits = max(18, int(math.ceil(math.log2(s.n_features + 1))) + 1)
    model = s.workdir / "vw.model"
    opts = (f"-d {s.files['train.vw']} -b {bits} --loss_function logistic --holdout_off "
            f"--quiet --random_seed {s.seed} -f {model}")
    if passes > 1:
        opts += f" --passes {passes} -c -k --cache_file {s.workdir / 'train.cache'} " \
                "--save_per_pass"
    if bfgs:
        opts += f" --bfgs --l2 {s.alpha * s.n_train!r} --predict_only_model"
    s.info["options"] = opts.replace(str(s.workdir) + "/", "").replace(
        str(s.files["train.vw"]), "train.vw")
    stamp = s.workdir / "vw.stamp"
    proc = subprocess.Popen([sys.executable, "-c", _VW_SCRIPT, opts, str(stamp)])
    try:
        proc.wait(timeout=max(s.cap - s.elapsed, 1.0) + 10.0)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        s.status = "time cap"
    if proc.returncode not in (0, None) and s.status != "time cap":
        raise RuntimeError(f"VW exited with status {proc.returncode} (options: {opts})")
    marks = [int(x) for x in stamp.read_text().split()] if stamp.exists() else []
    if not marks:
        raise RuntimeError("VW did not start")
    t0 = marks[0]
    s.count(((marks[1] if len(marks) > 1 else time.time_ns()) - t0) / 1e9)
    models = [(k, s.workdir / f"vw.model.{k}") for k in range(1, passes)] + [(passes, model)]
    for k, path in models:
        if not path.exists():
            continue
        end = marks[1] if (k == passes and len(marks) > 1) else path.stat().st_mtime_ns
        s.point(k * s.n_train, proba=_vw_predict(s, path, bfgs), elapsed=(end - t0) / 1e9,
                pass_end=k)
    cache = s.workdir / "train.cache"
    if cache.exists():
        s.info["cache_bytes"] = cache.stat().st_size
        cache.unlink()


def _vw_predict(s: Session, model: Any, predict_only: bool) -> np.ndarray:
    from vowpalwabbit import Workspace

    preds = s.workdir / "preds.txt"
    ws = Workspace(f"-t -i {model} -d {s.files['test.vw']} -p {preds} --link logistic --quiet"
                   + (" --predict_only_model" if predict_only else ""))
    ws.run_parser()
    ws.finish()
    return np.loadtxt(preds, dtype=np.float64, ndmin=1)


def _read_block(path: str, n_features: int, offset: int, length: int
                ) -> tuple[sp.csr_matrix, np.ndarray]:
    from sklearn.datasets import load_svmlight_file

    X, y = load_svmlight_file(path, n_features=n_features, dtype=np.float64, offset=offset,
                              length=length, zero_based=False)
    return _csr32(X), np.asarray(y, dtype=np.float64)


def dask_fit(s: Session, **params: Any) -> None:
    """``DaskSQNClassifier(**params).fit`` on a ``LocalCluster`` (two worker processes, one
    thread each); the workers read byte ranges of the svmlight file (timed with the fit); the
    cluster's start is not timed (``info.cluster_seconds``)."""
    import logging

    import dask
    import dask.array as da
    from distributed import Client, LocalCluster

    from sqnopt.dask import DaskSQNClassifier

    tic = time.perf_counter()
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=":0", silence_logs=logging.ERROR)
    client = Client(cluster)
    s.info["cluster_seconds"] = round(time.perf_counter() - tic, 2)
    try:
        d = s.n_features
        with s.timed():
            blocks = [dask.delayed(_read_block, pure=True)(str(s.files["train.svm"]), d, o, n)
                      for o, n in byte_ranges(s)]
            blocks = client.persist(blocks)
            rows = client.compute([dask.delayed(lambda b: b[1].shape[0])(b) for b in blocks],
                                  sync=True)
            meta = sp.csr_matrix((0, d))
            Xs = [da.from_delayed(dask.delayed(lambda b: b[0])(b), shape=(n, d),
                                  dtype=np.float64, meta=meta)
                  for b, n in zip(blocks, rows) if n]
            ys = [da.from_delayed(dask.delayed(lambda b: b[1])(b), shape=(n,), dtype=np.float64)
                  for b, n in zip(blocks, rows) if n]
            X, y = da.concatenate(Xs), da.concatenate(ys)
        s.info["read_seconds"] = round(s.elapsed, 3)
        est = DaskSQNClassifier(alpha=s.alpha, random_state=s.seed,
                                callback=_sqn_callback(s), **params)
        with s.timed():
            est.fit(X, y)
        h = getattr(est, "history_", None)
        examples = float(h.samples[-1]) if h is not None and not isinstance(h, list) \
            and len(h.samples) else float(est.n_iter_) * s.n_train
        coef, b = np.asarray(est.coef_).ravel(), float(np.asarray(est.intercept_).ravel()[0])
        s.info["n_iter"] = int(est.n_iter_)
        s.point(examples, margin=lambda X: np.asarray(X @ coef) + b, final=True)
    finally:
        client.close()
        cluster.close()


# ---------------------------------------------------------------------------- estimators
def sqn(**params: Any) -> Callable[[Session], Any]:
    """``SQNClassifier(alpha=1/N, random_state=seed, **params)``."""
    def make(s: Session) -> Any:
        from sqnopt import SQNClassifier

        return SQNClassifier(alpha=s.alpha, random_state=s.seed, **params)
    return make


def sk_logistic(s: Session) -> Any:
    """``LogisticRegression()`` at its defaults (lbfgs, ``C = 1``, i.e. ``alpha = 1/N``);
    ``C = 1/(alpha N)`` spelled out so that another ``alpha`` poses the same problem."""
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(C=1.0 / (s.alpha * s.n_train))


def sk_sgd(s: Session) -> Any:
    """``SGDClassifier(loss="log_loss", alpha=alpha)``, its default "optimal" learning rate."""
    from sklearn.linear_model import SGDClassifier

    return SGDClassifier(loss="log_loss", alpha=s.alpha, random_state=s.seed)


#: oLBFGS as paper 003 runs it on CTR data (Sec. 5.1): memory 10, batches of 100,
#: eps_t = eps0 T0 / (T0 + t) with eps0 = 1e-2, T0 = 1e4.
OLBFGS_PAPER = dict(curvature=("lbfgs", {"memory": 10}), schedule=("fixed", {"size": 100}),
                    step=("decaying", {"eps0": 1e-2, "T0": 1e4}))

CONTENDERS: list[Contender] = [
    # --- sqnopt, in memory (sqnopt's reader, held-out points from the solver callback)
    Contender("SQNClassifier()", "sqnopt",
              partial(fit_in_memory, make=sqn(), reader="sqnopt", callback=True),
              in_memory=True, passes="to tol", note="defaults"),
    Contender("SQNClassifier(parameter_mixing=False)", "sqnopt",
              partial(fit_in_memory, make=sqn(parameter_mixing=False),
                      reader="sqnopt", callback=True),
              in_memory=True, passes="to tol", quick=False,
              note="the large-data recipe's sequential updates (no mixing of shards)"),
    Contender("SQNClassifier(n_jobs=2)", "sqnopt",
              partial(fit_in_memory, make=sqn(n_jobs=2), reader="sqnopt", callback=True),
              in_memory=True, passes="to tol", quick=False,
              note="defaults on two threads (each chunk's two shards at once)"),
    Contender("SQNClassifier(curvature='lbfgs', max_iter=1)", "sqnopt",
              partial(fit_in_memory, make=sqn(curvature="lbfgs", max_iter=1), reader="sqnopt",
                      callback=True), in_memory=True, note="the L-BFGS recipe, one pass"),
    Contender("SQNClassifier(curvature='lbfgs', max_iter=5)", "sqnopt",
              partial(fit_in_memory, make=sqn(curvature="lbfgs", max_iter=5), reader="sqnopt",
                      callback=True), in_memory=True, passes="5",
              note="the L-BFGS recipe, five passes", quick=False),
    Contender("SQNClassifier(curvature='hessian_lbfgs', max_iter=1)", "sqnopt",
              partial(fit_in_memory, make=sqn(curvature="hessian_lbfgs", max_iter=1),
                      reader="sqnopt", callback=True), in_memory=True,
              note="SQN-Hv (Hessian-vector pairs), one pass", quick=False),
    Contender("SQNClassifier(curvature='adagrad', max_iter=1)", "sqnopt",
              partial(fit_in_memory, make=sqn(curvature="adagrad", max_iter=1),
                      reader="sqnopt", callback=True), in_memory=True, note="one pass",
              quick=False),
    Contender("SQNClassifier(curvature='identity', max_iter=1)", "sqnopt",
              partial(fit_in_memory, make=sqn(curvature="identity", max_iter=1),
                      reader="sqnopt", callback=True), in_memory=True,
              note="SAGA (the recipe for the identity), one pass", quick=False),
    # --- sqnopt, fit on a stream of the file (the large-data recipe at its defaults)
    Contender("SQNClassifier().fit(stream_svmlight(cache=True))", "sqnopt",
              partial(fit_stream, make=sqn()), needs="stream_svmlight", passes="early stop",
              note="defaults on a stream of the file (compiled parser, read ahead in a thread; "
                   "parsed chunks cached for the passes after the first); held-out early "
                   "stopping"),
    Contender("SQNClassifier().fit(stream_svmlight)", "sqnopt",
              partial(fit_stream, make=sqn(), cache=False), needs="stream_svmlight",
              passes="early stop",
              note="defaults on a stream of the file at its defaults (no cache: every pass "
                   "parses the text); held-out early stopping"),
    Contender("SQNClassifier(parameter_mixing=False).fit(stream_svmlight)", "sqnopt",
              partial(fit_stream, make=sqn(parameter_mixing=False), cache=False),
              needs="stream_svmlight", passes="early stop", quick=False,
              note="as SQNClassifier().fit(stream_svmlight), the sequential updates"),
    Contender("SQNClassifier(n_jobs=2).fit(stream_svmlight)", "sqnopt",
              partial(fit_stream, make=sqn(n_jobs=2), cache=False),
              needs="stream_svmlight", passes="early stop", quick=False,
              note="as SQNClassifier().fit(stream_svmlight), two threads (each chunk's two "
                   "shards at once)"),
    Contender("SQNClassifier(max_iter=1).fit(stream_svmlight)", "sqnopt",
              partial(fit_stream, make=sqn(max_iter=1), cache=False), needs="stream_svmlight",
              note="the streaming default, one pass (step race on the first examples)"),
    # --- sqnopt, streaming (partial_fit on chunks as they are read)
    Contender("SQNClassifier(curvature='lbfgs').partial_fit", "sqnopt",
              partial(stream, make=sqn(curvature="lbfgs"), reader="sqnopt"), role="sqn",
              note="chunks from sqnopt.datasets.iter_svmlight_chunks, one pass"),
    Contender("SQNClassifier(curvature='lbfgs').partial_fit (Parquet)", "sqnopt",
              partial(stream, make=sqn(curvature="lbfgs"), reader="parquet"),
              formats=("parquet",), module="pyarrow", role="sqn",
              note="row batches of the Parquet file (pyarrow), one pass"),
    Contender("SQNClassifier(curvature='lbfgs').partial_fit (stream_svmlight)", "sqnopt",
              partial(stream, make=sqn(curvature="lbfgs"), reader="stream_svmlight"),
              needs="stream_svmlight", role="sqn",
              note="chunks from sqnopt.datasets.stream_svmlight (compiled parser, read ahead "
                   "in a thread), one pass", quick=False),
    Contender("SQNClassifier(curvature='lbfgs').partial_fit (binary)", "sqnopt",
              partial(stream, make=sqn(curvature="lbfgs"), reader="binary"), formats=("bin",),
              needs="stream_binary", role="sqn",
              note="chunks of sqnopt's binary chunk file (sqnopt.datasets.stream_binary), "
                   "one pass"),
    Contender("SQNClassifier(curvature='hessian_lbfgs').partial_fit", "sqnopt",
              partial(stream, make=sqn(curvature="hessian_lbfgs"), reader="sqnopt"), role="sqn",
              note="SQN-Hv's streaming recipe, one pass", quick=False),
    Contender("SQNClassifier().partial_fit", "sqnopt",
              partial(stream, make=sqn(), reader="sqnopt"),
              note="partial_fit at its defaults, one pass", quick=False),
    Contender("oLBFGS (paper 003 settings).partial_fit", "sqnopt",
              partial(stream, make=sqn(**OLBFGS_PAPER), reader="sqnopt"), role="sqn",
              note="LBFGS(memory=10), batches of 100, Decaying(eps0=1e-2, T0=1e4); one pass",
              quick=False),
    Contender("SQNClassifier(curvature='identity', gradient='minibatch').partial_fit", "sqnopt",
              partial(stream, make=sqn(curvature="identity", gradient="minibatch"),
                      reader="sqnopt"), role="sgd",
              note="plain SGD: the recipe's batches of 5 and eps_t = 1/(L + alpha t) (L from "
                   "the data), one pass", quick=False),
    Contender("SQNClassifier(curvature='identity').partial_fit", "sqnopt",
              partial(stream, make=sqn(curvature="identity"), reader="sqnopt"),
              note="the identity's recipe (SAGA on each chunk, constant step), one pass",
              quick=False),
    # --- scikit-learn
    Contender("LogisticRegression()", "scikit-learn", partial(fit_in_memory, make=sk_logistic),
              in_memory=True, module="sklearn", passes="to tol",
              note="lbfgs, C = 1 (alpha = 1/N); load_svmlight_file"),
    Contender("SGDClassifier.partial_fit", "scikit-learn",
              partial(stream, make=sk_sgd, reader="sklearn", passes=3), module="sklearn",
              role="sgd", passes="3",
              note="loss='log_loss', alpha = 1/N, learning_rate='optimal'; chunks by "
                   "load_svmlight_file(offset, length)"),
    # --- Vowpal Wabbit (the file parsed by VW itself)
    Contender("VW", "vowpalwabbit", partial(vw, passes=1), formats=("vw",),
              module="vowpalwabbit", role="vw",
              note="defaults (adaptive, normalized, invariant updates), one pass, no cache"),
    Contender("VW --passes 5", "vowpalwabbit", partial(vw, passes=5), formats=("vw",),
              module="vowpalwabbit", role="vw", passes="5",
              note="defaults, cache (-c) made by the first pass"),
    Contender("VW --bfgs", "vowpalwabbit",
              partial(vw, passes=20, bfgs=True), formats=("vw",),
              module="vowpalwabbit", passes="20",
              note="--bfgs --l2 alpha N (= 1 at alpha = 1/N), cache", quick=False),
    # --- sqnopt.dask
    Contender("DaskSQNClassifier()", "sqnopt", dask_fit, module="distributed", in_memory=True,
              passes="to tol", note="defaults; LocalCluster(2 workers x 1 thread), the data "
                                    "held in the workers' memory",
              quick=False),
]


def by_name() -> dict[str, Contender]:
    return {c.name: c for c in CONTENDERS}


@dataclass
class Selection:
    contenders: list[Contender] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def select(names: list[str] | None, *, quick: bool) -> Selection:
    """The contenders to run: those named (default: all, or the ``quick`` ones) that can run
    here; the others listed in ``skipped`` with the reason."""
    table = by_name()
    if names:
        unknown = [n for n in names if n not in table]
        if unknown:
            raise SystemExit(f"unknown contenders {unknown}; choose from: " + ", ".join(table))
    out = Selection()
    for c in CONTENDERS:
        if names and c.name not in names:
            continue
        if not names and quick and not c.quick:
            continue
        why = c.missing()
        if why:
            out.skipped.append(f"{c.name}: skipped, {why}")
        else:
            out.contenders.append(c)
    return out


__all__ = ["CONTENDERS", "Contender", "READERS", "Selection", "by_name", "dask_fit",
           "fit_in_memory", "select", "stream", "vw"]
