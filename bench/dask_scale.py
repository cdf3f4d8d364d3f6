"""sqnopt.dask vs dask-ml's LogisticRegression (lbfgs, admm) on one Dask LocalCluster, 1 and
2 worker processes, and vs sqnopt on one machine (issue 25's benchmark).

Problem: L2-regularised logistic regression without intercept,
``F(w) = mean_i log(1 + exp(-y_i x_i.w)) + lam/2 ||w||^2``; dask-ml minimises
``N F(w)`` (summed loss, ``C = 1 / (lam N)``), the same minimiser. ``F*`` comes from sqnopt's
full-batch L-BFGS on one machine run to ``gtol = 1e-11``; each method's *time to target* is the
wall time until ``F(w) <= F* (1 + rel)``:

* sqnopt (one machine, and ``sqnopt.dask.solve`` on the cluster): full-batch L-BFGS with an
  Armijo search, stopped at the target; the time is the solver's own clock from its history
  (the objective recorded at every iteration, those evaluations excluded). The distributed setup (validated chunks built on the
  workers) is reported separately.
* sqnopt progressive-batching L-BFGS (the ``progressive_lbfgs`` preset: first batch 512,
  ``theta = 0.2``, Armijo, batches of distinct samples, seed 0), stopped at the target, on one
  machine and with ``sqnopt.dask.solve``: batches of at most ``--local-batch`` samples are
  gathered to the client, larger ones (and their inner-product test, a second round trip)
  run on the workers; timed as full-batch L-BFGS above.
* dask-ml ``lbfgs``: scipy's L-BFGS-B on the client, each function/gradient evaluation a Dask
  graph over the chunks; the time is read at every evaluation by wrapping the
  ``fmin_l_bfgs_b`` that dask-glm calls (the algorithm is unchanged; an evaluation inside a line
  search counts as soon as it reaches the target).
* dask-ml ``admm``: no per-iteration hook, so it is run with ``max_iter`` in ``--admm-iters``;
  the first run whose result reaches the target gives the time.

dask-ml is run with ``solver_kwargs={"normalize": False}``: its default standardises the
columns, which changes the regularised problem (and fails on a9a's constant columns).

Data, ``--chunks`` dense row blocks (dask-ml fails on ``scipy.sparse`` chunks and on
pydata-sparse ones here, so the comparison uses dense blocks for all; sqnopt also runs the sparse
chunks, reported as ``sqnopt.dask (sparse)``):

* ``a9a`` replicated ``--replicate`` times (123 features, 32,561 rows each copy);
* ``criteo``: the 10,000-row Criteo sample, 13 count fields log-binned and 26 categorical fields
  hashed into ``--criteo-bags`` bags each (kept small so that dense blocks fit).

Communication per iteration for sqnopt is measured by :class:`sqnopt.dask.CommStats` (bytes of
the arrays carried by the tasks and of their results); dask-ml's is not measured, only its
evaluations (one graph over all chunks each) are counted. Writes ``bench/results/dask_scale.json``.

    OPENBLAS_NUM_THREADS=1 python bench/dask_scale.py                 # a9a x32 and criteo
    OPENBLAS_NUM_THREADS=1 python bench/dask_scale.py --replicate 2 --datasets a9a  # smoke
    python bench/dask_scale.py --table          # the table of docs/benchmarks.md
    OPENBLAS_NUM_THREADS=1 python bench/dask_scale.py --replicate 2 --local-batch 1000 \
        --out bench/results/dask_scale_local1000.json   # progressive batches on the workers
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

try:
    import sqnopt  # noqa: F401
except ImportError:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqnopt import LBFGS, Armijo, Full, LogLoss, Solver
from sqnopt._files import write_text_atomic

RESULTS = Path(__file__).resolve().parent / "results"


def load(name: str, replicate: int, bags: int) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """Dense float64 design matrix, labels in {-1, +1}, and a description."""
    if name == "a9a":
        from sqnopt.datasets import load_a9a

        Xs, y = load_a9a("train")
        X = np.tile(np.asarray(Xs.toarray(), dtype=np.float64), (replicate, 1))
        y = np.tile(np.where(y > 0, 1.0, -1.0), replicate)
        return X, y, {"source": f"a9a train x{replicate}"}
    if name == "criteo":
        from _data import datasets_dir
        from sqnopt.datasets import criteo_featurizer, read_criteo

        table, label = read_criteo(datasets_dir() / "criteo_dac_train_head10k.tsv.xz")
        Xs = criteo_featurizer(n_bags=bags).transform(table)
        X = np.asarray(Xs.toarray(), dtype=np.float64)
        return X, np.where(label > 0, 1.0, -1.0), {
            "source": f"criteo sample, 26 fields hashed into {bags} bags + 13 log-binned counts"}
    raise SystemExit(f"unknown dataset {name!r}: use a9a or criteo")


def objective(X: np.ndarray, y: np.ndarray, w: np.ndarray, lam: float) -> float:
    return float(np.mean(np.logaddexp(0.0, -y * (X @ w))) + 0.5 * lam * w @ w)


def first_time(trace: list[tuple[float, float]], target: float) -> float | None:
    return next((t for t, f in trace if f <= target), None)


def lbfgs_solver(lam: float, **kw: Any) -> Solver:
    return Solver(LogLoss(lam=lam), LBFGS(), Full(), Armijo(), fit_intercept=False, **kw)


def trace_of(res: Any) -> list[tuple[float, float]]:
    h = res.history
    return list(zip(h.time.tolist(), h.objective.tolist()))


def progressive_solver(lam: float, **kw: Any) -> Solver:
    """The ``progressive_lbfgs`` preset (first batch 512, theta 0.2, Armijo, subset sampling)
    on the same objective; its own gtol is replaced by the target."""
    return Solver.preset("progressive_lbfgs", lam=lam, fit_intercept=False, gtol=None,
                         random_state=0, **kw)


def sqnopt_local(X: np.ndarray, y: np.ndarray, lam: float, target: float | None,
                 max_iter: int, progressive: bool = False) -> dict[str, Any]:
    if progressive:
        assert target is not None
        solver = progressive_solver(lam, max_iter=max_iter, history_every=1, report_every=1,
                                    target_objective=target)
    else:
        solver = lbfgs_solver(lam, max_iter=max_iter, gtol=1e-11 if target is None else None,
                              history_every=1, report_every=1, target_objective=target)
    tic = time.perf_counter()
    res = solver.fit(X, y)
    wall = time.perf_counter() - tic
    return {"fun": float(res.fun), "n_iter": int(res.n_iter), "wall": wall,
            "time_to_target": None if target is None else first_time(trace_of(res), target)}


def sqnopt_dask(client: Any, Xd: Any, yd: Any, lam: float, target: float,
                max_iter: int, progressive: bool = False,
                local_batch: int | None = None) -> dict[str, Any]:
    from sqnopt.dask import LOCAL_BATCH, ChunkedData, solve

    tic = time.perf_counter()
    data = ChunkedData.from_dask(Xd, yd, client=client)
    setup = time.perf_counter() - tic
    make = progressive_solver if progressive else lbfgs_solver
    solver = make(lam, max_iter=max_iter, history_every=1, report_every=1,
                  target_objective=target)
    before = data.stats.as_dict()
    tic = time.perf_counter()
    res = solve(solver, None, None, data=data,
                local_batch=LOCAL_BATCH if local_batch is None else local_batch)
    wall = time.perf_counter() - tic
    after = data.stats.as_dict()
    n_chunks = data.n_chunks
    data.release()
    per_iter = {k: (after[k] - before[k]) / max(res.n_iter, 1)
                for k in ("round_trips", "tasks", "bytes_sent", "bytes_received")}
    out = {"fun": float(res.fun), "n_iter": int(res.n_iter), "wall": wall, "setup": setup,
           "time_to_target": first_time(trace_of(res), target), "comm_per_iter": per_iter,
           "n_chunks": n_chunks, "passes": float(res.effective_passes),
           "rows_gathered": int(after["rows_gathered"] - before["rows_gathered"])}
    if progressive:
        out["last_batch"] = int(np.diff(res.history.samples)[-1]) if res.n_iter else 0
    return out


def daskml_lbfgs(Xd: Any, yd01: Any, lam: float, n: int, target: float,
                 max_iter: int) -> dict[str, Any]:
    import dask_glm.algorithms as algos
    from dask_ml.linear_model import LogisticRegression

    trace: list[tuple[float, float]] = []
    original = algos.fmin_l_bfgs_b
    tic = [0.0]

    def timed(func: Any, x0: Any, *a: Any, **kw: Any) -> Any:
        def f(*fa: Any) -> Any:
            loss, grad = func(*fa)
            trace.append((time.perf_counter() - tic[0], float(loss) / n))
            return loss, grad
        return original(f, x0, *a, **kw)

    algos.fmin_l_bfgs_b = timed
    try:
        est = LogisticRegression(C=1.0 / (lam * n), fit_intercept=False, solver="lbfgs",
                                 max_iter=max_iter, tol=1e-10,
                                 solver_kwargs={"normalize": False})
        tic[0] = time.perf_counter()
        est.fit(Xd, yd01)
        wall = time.perf_counter() - tic[0]
    finally:
        algos.fmin_l_bfgs_b = original
    return {"w": np.ravel(est.coef_), "wall": wall, "evaluations": len(trace),
            "time_to_target": first_time(trace, target)}


def daskml_admm(Xd: Any, yd01: Any, lam: float, n: int, iters: list[int]) -> list[dict[str, Any]]:
    from dask_ml.linear_model import LogisticRegression

    runs = []
    for it in iters:
        est = LogisticRegression(C=1.0 / (lam * n), fit_intercept=False, solver="admm",
                                 max_iter=it, tol=1e-10,
                                 solver_kwargs={"normalize": False})
        tic = time.perf_counter()
        est.fit(Xd, yd01)
        runs.append({"max_iter": it, "w": np.ravel(est.coef_),
                     "wall": time.perf_counter() - tic})
    return runs


def scattered(client: Any, A: Any, rows: int) -> Any:
    """``A`` as a dask array of row blocks already held by the workers (scattered, not
    embedded in the graph)."""
    import dask.array as da

    blocks = [A[i:i + rows] for i in range(0, A.shape[0], rows)]
    futures = client.scatter(blocks)
    return da.concatenate([da.from_delayed(f, shape=b.shape, dtype=b.dtype,
                                           meta=b[:0]) for f, b in zip(futures, blocks)])


def run_dataset(name: str, args: argparse.Namespace) -> dict[str, Any]:
    import distributed

    X, y, info = load(name, args.replicate, args.criteo_bags)
    n, p = X.shape
    lam = args.lam
    rows = -(-n // args.chunks)
    info.update(n_samples=n, n_features=p, lam=lam, chunk_rows=rows,
                dense_mbytes=round(X.nbytes / 2**20, 1))
    print(f"\n== {name}: {info['source']}: {n} x {p} dense ({info['dense_mbytes']} MiB), "
          f"lam = {lam:g}", flush=True)
    ref = sqnopt_local(X, y, lam, None, max_iter=2000)
    fstar = ref["fun"]
    target = fstar * (1.0 + args.rel)
    local = sqnopt_local(X, y, lam, target, max_iter=2000)
    info.update(f_star=fstar, target_rel=args.rel)
    keys = ("time_to_target", "n_iter", "wall")
    out: dict[str, Any] = {"info": info, "one_machine": {
        "sqnopt": {k: local[k] for k in keys}}}
    print(f"F* = {fstar:.10f} ({ref['n_iter']} iterations); sqnopt one machine: "
          f"{local['time_to_target']:.2f} s to target", flush=True)
    if args.progressive:
        pl = sqnopt_local(X, y, lam, target, max_iter=args.max_iter, progressive=True)
        out["one_machine"]["sqnopt progressive L-BFGS"] = {k: pl[k] for k in keys}
        t = pl["time_to_target"]
        print(f"sqnopt progressive L-BFGS one machine: "
              f"{'not reached' if t is None else f'{t:.2f} s'} to target", flush=True)
    y01 = (y > 0).astype(np.float64)
    for workers in args.workers:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1,
                                               processes=True, dashboard_address=None)
            client = distributed.Client(cluster)
        try:
            Xd, yd, yd01 = (scattered(client, A, rows) for A in (X, y, y01))
            row: dict[str, Any] = {}
            row["sqnopt.dask"] = sqnopt_dask(client, Xd, yd, lam, target, args.max_iter)
            if args.progressive:
                row["sqnopt.dask progressive L-BFGS"] = sqnopt_dask(
                    client, Xd, yd, lam, target, args.max_iter, progressive=True,
                    local_batch=args.local_batch)
            if name == "a9a" or args.sparse_too:
                import scipy.sparse as sp

                Xsp = scattered(client, sp.csr_matrix(X), rows)
                row["sqnopt.dask (sparse)"] = sqnopt_dask(client, Xsp, yd, lam, target,
                                                          args.max_iter)
                del Xsp
            lb = daskml_lbfgs(Xd, yd01, lam, n, target, args.max_iter)
            lb["fun"] = objective(X, y, lb.pop("w"), lam)
            row["dask-ml lbfgs"] = lb
            admm = daskml_admm(Xd, yd01, lam, n, args.admm_iters)
            for r in admm:
                r["fun"] = objective(X, y, r.pop("w"), lam)
            hit = next((r for r in admm if r["fun"] <= target), None)
            row["dask-ml admm"] = {"runs": admm,
                                   "time_to_target": None if hit is None else hit["wall"]}
        finally:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                client.close()
                cluster.close()
        for method, r in row.items():
            t = r["time_to_target"]
            fun = r["fun"] if "fun" in r else min(x["fun"] for x in r["runs"])
            print(f"  {workers} worker(s)  {method:22s} time to target "
                  f"{'not reached' if t is None else f'{t:7.2f} s'};  best excess "
                  f"{(fun - fstar) / fstar:.1e}", flush=True)
        out[f"workers_{workers}"] = row
    return out


def table(results: dict[str, Any]) -> str:
    """The markdown table of docs/benchmarks.md, from a results file."""

    def sec(t: float | None) -> str:
        return "not reached" if t is None else f"{t:.2f}"

    lines = ["| data | method | workers | time to target (s) | vs sqnopt.dask | "
             "best rel. excess | per iteration |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for name, d in results["datasets"].items():
        info = d["info"]
        label = f"{name} ({info['n_samples']} x {info['n_features']})"
        for method, one in d["one_machine"].items():
            name_ = "sqnopt" if method == "sqnopt" else method
            lines.append(f"| {label} | {name_}, one machine (in process) | - | "
                         f"{sec(one['time_to_target'])} | | | {one['n_iter']} iterations |")
        for key in sorted(k for k in d if k.startswith("workers_")):
            workers = key.split("_")[1]
            row = d[key]
            ref = row["sqnopt.dask"]["time_to_target"]
            for method, r in row.items():
                t = r["time_to_target"]
                fun = r["fun"] if "fun" in r else min(x["fun"] for x in r["runs"])
                ratio = "" if t is None or ref is None else f"{t / ref:.1f}x"
                if "comm_per_iter" in r:
                    c = r["comm_per_iter"]
                    extra = (f"{c['round_trips']:.1f} round trips, "
                             f"{(c['bytes_sent'] + c['bytes_received']) / 1024:.1f} KiB "
                             f"(+ {r['setup']:.2f} s setup)")
                    if "last_batch" in r:
                        extra += (f"; {r['n_iter']} iterations, {r['passes']:.0f} passes, "
                                  f"last batch {r['last_batch']}")
                elif "evaluations" in r:
                    extra = f"{r['evaluations']} evaluations in {r['wall']:.1f} s"
                else:
                    extra = "runs: " + ", ".join(
                        f"{x['max_iter']} it. {x['wall']:.1f} s" for x in r["runs"])
                lines.append(f"| {label} | {method} | {workers} | {sec(t)} | {ratio} | "
                             f"{(fun - info['f_star']) / info['f_star']:.1e} | {extra} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", nargs="+", default=["a9a", "criteo"])
    ap.add_argument("--replicate", type=int, default=32, help="copies of a9a")
    ap.add_argument("--criteo-bags", type=int, default=64)
    ap.add_argument("--lam", type=float, default=1e-4)
    ap.add_argument("--rel", type=float, default=1e-4, help="target relative excess")
    ap.add_argument("--chunks", type=int, default=8, help="row blocks per data set")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--max-iter", type=int, default=500)
    ap.add_argument("--admm-iters", type=int, nargs="+", default=[5, 20, 60])
    ap.add_argument("--sparse-too", action="store_true", help="sparse sqnopt run on criteo too")
    ap.add_argument("--no-progressive", dest="progressive", action="store_false",
                    help="skip progressive-batching L-BFGS (the progressive_lbfgs preset)")
    ap.add_argument("--local-batch", type=int, default=None,
                    help="sqnopt.dask's local_batch for the progressive run (default: "
                         "sqnopt.dask.LOCAL_BATCH)")
    ap.add_argument("--out", type=Path, default=RESULTS / "dask_scale.json")
    ap.add_argument("--table", action="store_true",
                    help="print the markdown table of --out (no runs)")
    args = ap.parse_args(argv)
    if args.table:
        print(table(json.loads(args.out.read_text())))
        return 0
    results: dict[str, Any] = {
        "command": "python bench/dask_scale.py " + " ".join(argv or sys.argv[1:]),
        "cpus": os.cpu_count(), "datasets": {}}
    for name in args.datasets:
        results["datasets"][name] = run_dataset(name, args)
    write_text_atomic(args.out, json.dumps(results, indent=1, default=float) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
