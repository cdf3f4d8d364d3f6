"""Examples per second of one pass of AdaGrad's composite step on hashed CTR-like data: the
solver's adaptive loop against a bare loop with the same arithmetic, in one process.

    python bench/adaptive_loop.py [--rows 1000000] [--eta 0.1] [--rounds 3]
                                  [--svm TRAIN.svm [--test TEST.svm]] [--out FILE.json]

Data: with ``--svm``, a LIBSVM file of hashed one-hot rows (``n_features = 2^18``; labels
+-1 or 0/1) and its held-out ``--test`` file; without, a generated stream of ``--rows`` rows
(``_hashed_rows``: 24 categorical fields with Zipf-distributed values hashed into 2^18 columns,
labels from a logistic model of the fields) and a held-out fifth as many. Contenders, one pass
each, interleaved over the rounds (the best round of each is reported):

* ``solver-shuffle`` -- ``Solver(LogLoss(lam=1/N), AdaGrad(composite=True), Fixed(1),
  Constant(eta), fit_intercept=True, sampling="shuffle", max_epochs=1)``: the
  :class:`~sqnopt.solver._adaptive_loop.AdaptiveLoop` on rows in random order;
* ``solver-file`` -- the same in file order (``batch_sequence = 0..N-1``);
* ``bare`` -- ``bare_adagrad_composite`` (``bench/native/_baseline.pyx``): the same steps in
  file order as one loop, no driver, no checks, no prefetches.

Per contender: the loop's CPU time (``time.thread_time``: the loop runs in the calling thread;
on a loaded machine the least disturbed measure) and wall time, examples per second from each,
the whole ``fit`` (validation, the monitor's ``F(w_0)``, the result), the held-out log loss and
the progressive validation loss. Prints a table and the load average before and after; writes
the figures as compact JSON (``--out``, default ``bench/results/adaptive_loop.json``).
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _results import write_json  # noqa: E402

N_BITS = 18
N_FIELDS = 24


def _hashed_rows(n_rows: int, seed: int) -> tuple[sp.csr_matrix, np.ndarray]:
    """``n_rows`` rows of ``N_FIELDS`` one-hot categorical fields hashed into ``2^N_BITS``
    columns (value ``v`` of field ``f`` in column ``(f * 2654435761 + v * 40503) mod 2^N_BITS``,
    duplicates summed), the values Zipf-distributed (exponent 1.2) over vocabularies of 10 to
    10^6; labels +-1 from a logistic model with one weight per value (normal, scale 0.5) and
    bias -1.5 (about 25 % positives)."""
    rng = np.random.default_rng(seed)
    vocab = np.geomspace(10, 1e6, N_FIELDS).astype(np.int64)
    cols = np.empty((n_rows, N_FIELDS), dtype=np.int64)
    score = np.full(n_rows, -1.5)
    truth = np.random.default_rng(seed + 1)
    for f in range(N_FIELDS):
        v = np.minimum(rng.zipf(1.2, size=n_rows), vocab[f]) - 1
        cols[:, f] = (f * 2654435761 + v * 40503) % (1 << N_BITS)
        score += 0.5 * truth.normal(size=int(vocab[f]))[v]
    y = np.where(rng.random(n_rows) < 1.0 / (1.0 + np.exp(-score)), 1.0, -1.0)
    X = sp.csr_matrix((np.ones(cols.size), cols.ravel(),
                       np.arange(0, cols.size + 1, N_FIELDS)), shape=(n_rows, 1 << N_BITS))
    X.sum_duplicates()
    return X, y


def _load(args: argparse.Namespace) -> tuple[Any, np.ndarray, Any, np.ndarray, str]:
    if args.svm is None:
        X, y = _hashed_rows(args.rows + args.rows // 5, seed=0)
        n = args.rows
        return X[:n], y[:n], X[n:], y[n:], f"generated hashed rows ({args.rows})"
    from sklearn.datasets import load_svmlight_file

    X, y = load_svmlight_file(args.svm, n_features=1 << N_BITS)
    y = np.where(y > 0, 1.0, -1.0)
    if args.test is None:
        return X, y, None, None, args.svm
    Xt, yt = load_svmlight_file(args.test, n_features=1 << N_BITS)
    return X, y, Xt, np.where(yt > 0, 1.0, -1.0), args.svm


def _held_out(Xt: Any, yt: Any, coef: np.ndarray, intercept: float) -> float:
    if Xt is None:
        return float("nan")
    m = yt * (Xt @ coef + intercept)
    return float(np.mean(np.logaddexp(0.0, -m)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--eta", type=float, default=0.1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--svm", default=None)
    ap.add_argument("--test", default=None)
    ap.add_argument("--out", default=str(HERE / "results" / "adaptive_loop.json"))
    args = ap.parse_args()

    from native import load

    from sqnopt import Constant, Fixed, LogLoss, Solver
    from sqnopt.curvature import AdaGrad

    bare_pass = load("_baseline").bare_adagrad_composite
    X, y, Xt, yt, source = _load(args)
    X = X.tocsr()
    X.sort_indices()
    N, n = X.shape
    lam, eta, delta = 1.0 / N, args.eta, 1e-8
    indptr, indices = X.indptr.astype(np.intp), X.indices.astype(np.int32)
    order = np.arange(N, dtype=np.intp)

    def solver(sampling: str) -> Any:
        kw: dict[str, Any] = dict(batch_sequence=order) if sampling == "file" else \
            dict(sampling="shuffle", random_state=0)
        s = Solver(objective=LogLoss(lam=lam), curvature=AdaGrad(delta=delta, composite=True),
                   schedule=Fixed(1), step=Constant(eta), fit_intercept=True, max_epochs=1,
                   report_every=N, **kw)
        tic = time.perf_counter()
        state = s.init_state(X, y)
        cpu = time.thread_time()
        result = s.run(state)
        cpu = time.thread_time() - cpu
        fit = time.perf_counter() - tic
        assert type(state.loop).__name__ == "AdaptiveLoop" and result.n_samples == N
        return dict(cpu=cpu, wall=result.wall_time, fit=fit,
                    held_out=_held_out(Xt, yt, result.coef, float(result.intercept)),
                    progressive=result.progressive_loss)

    def bare() -> dict[str, float]:
        w, G, last, b = np.zeros(n), np.zeros(n + 1), np.zeros(n), np.zeros(1)
        tic, cpu = time.perf_counter(), time.thread_time()
        t, total = bare_pass(indptr, indices, X.data, y, order, w, G, last, b, 0.0, eta, lam,
                             delta)
        cpu, wall = time.thread_time() - cpu, time.perf_counter() - tic
        s = delta + np.sqrt(G[:n])
        w *= (s / (s + eta * lam)) ** (t - last)
        return dict(cpu=cpu, wall=wall, fit=wall, held_out=_held_out(Xt, yt, w, float(b[0])),
                    progressive=total / N)

    contenders = {"solver-shuffle": lambda: solver("shuffle"),
                  "solver-file": lambda: solver("file"), "bare": bare}
    load_before = os.getloadavg()
    runs: dict[str, list[dict[str, float]]] = {k: [] for k in contenders}
    for r in range(args.rounds):
        for name, fn in contenders.items():
            gc.collect()
            runs[name].append(fn())
            f = runs[name][-1]
            print(f"round {r} {name:15s} cpu {f['cpu']:.3f} s  wall {f['wall']:.3f} s  "
                  f"fit {f['fit']:.3f} s", flush=True)
    load_after = os.getloadavg()
    best = {k: min(v, key=lambda f: f["cpu"]) for k, v in runs.items()}
    print(f"\n{source}: N = {N}, {X.nnz} stored values, eta = {eta}, lam = 1/N; "
          f"load average {load_before[0]:.2f} -> {load_after[0]:.2f}")
    print(f"{'contender':15s} {'ex/s (cpu)':>12s} {'ex/s (wall)':>12s} {'fit s':>7s} "
          f"{'held-out':>9s} {'progressive':>11s}")
    for name, f in best.items():
        print(f"{name:15s} {N / f['cpu']:12.4g} {N / f['wall']:12.4g} {f['fit']:7.3f} "
              f"{f['held_out']:9.5f} {f['progressive']:11.5f}")
    print(f"solver-file / bare (cpu): {best['solver-file']['cpu'] / best['bare']['cpu']:.3f}")
    write_json(Path(args.out), {
        "command": "python bench/adaptive_loop.py " + " ".join(sys.argv[1:]),
        "source": source, "rows": N, "nnz": int(X.nnz), "eta": eta, "rounds": args.rounds,
        "load_average": [load_before[0], load_after[0]],
        "best": {k: dict(v, examples_per_s_cpu=N / v["cpu"], examples_per_s_wall=N / v["wall"])
                 for k, v in best.items()}})


if __name__ == "__main__":
    main()
