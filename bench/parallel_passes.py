"""Parallel passes: their speed-up with 2 threads (or more), whole fits with ``n_jobs``, the
break-even of the block policy, and the pool's fixed cost.

    python bench/parallel_passes.py                       # passes + fits, every data set found
    python bench/parallel_passes.py --passes-only --datasets news20 criteo
    python bench/parallel_passes.py --fits-only --datasets ctr1e6 --fit-passes 10
    python bench/parallel_passes.py --fits-only --blas-ab   # also without the whole-fit BLAS limit
    python bench/parallel_passes.py --fits-only --penalty l1 --datasets news20 criteo
    python bench/parallel_passes.py --break-even          # the block policy's break-even
    python bench/parallel_passes.py --threads 1 4 --rounds 7 --record bench/results/parallel_passes/NAME.json
    python bench/parallel_passes.py --quick               # smoke run: 5 x 10^4 generated rows
    OPENBLAS_NUM_THREADS=2 python bench/parallel_passes.py --blas-spin --datasets news20

Data sets: the race's problems where ``../shared/datasets`` has them (``news20``: LIBSVM news20
as binary TF-IDF, ``criteo``: the shipped Criteo sample one-hot + hashed, both logistic with the
race's alpha; ``fashion-mnist``: 60000 x 784 dense, softmax over 10 classes), and ``ctr1e6``: a
generated stream of 10^6 rows of hashed one-hot click-through data (24 categorical fields with
Zipf-distributed values hashed into 2^18 columns, labels from a known logistic model, about 16 %
positives; alpha = 1/N), built here in a few seconds from a seed.

**Passes.** For each data set, the compiled kernel the default composition runs is timed on the
whole data set, its thread count set to each of ``--threads`` in turn, interleaved within each
round (best of 3 calls per setting), best of ``--rounds`` rounds: the full-batch loss and
gradient (the fused pass of L-BFGS), the score gathers ``X d`` of the exact line search, its
1-D derivative sums from the scores, the scatter ``X' c`` of the next gradient, and for the
binary problems the Hessian factors and Hessian-vector products of truncated Newton. Each pass's
outputs are checked to be the same bits on every thread count. The CPU time per call (all
threads) is reported too: its ratio to the 1-thread time is the work the split adds, which on
a loaded machine shows what the wall-time speed-up cannot.

**Fits.** ``SQNClassifier(n_jobs=k)`` at its defaults (race alpha; on ``ctr1e6`` a budget of
``--fit-passes`` passes without a tolerance, the work of a fit of that length), interleaved over
the thread counts, best of ``--fit-rounds`` rounds; the coefficients must be equal bit for bit.
``--penalty l1`` (or ``elasticnet``) times the L1 fits instead (the composite solvers, full
batch: newGLMNET on the binary problems). Where the fit takes the large-data recipe
(per-example AdaGrad: ``ctr1e6``), the number of chunks run as two mixed shards is reported
(``parameter_mixing=True``, the default, ``sqnopt.training._mixing``); a fit of that recipe
whose chunks are not mixed (``--no-mixing``: ``parameter_mixing=False``) reports the wall
time of its compiled solves instead: each example's update reads the weights the previous one
wrote, so that time is sequential on any thread count, and its share of the one-thread fit
bounds the speed-up (Amdahl's law).

**Break-even.** The margin gradient and the line search's derivative sums on sparse rows (10
entries) and dense rows (100 features) of growing size, as the serial loop (one block), as the
policy's blocks on 1 thread, and on 2 threads; and the pool's round trip
(:func:`sqnopt._parallel.fork_join_seconds`). The policy's ``min_block_work`` is chosen so that
a pass split into two blocks of that work is at least as fast on 2 threads as the serial loop.

**BLAS spin.** ``--blas-spin``: ``SQNClassifier(n_jobs=2)`` fits (the race's alpha, default
``tol``) each after a collection, alternately with and without a BLAS matrix-vector product
(2000 x 2000) just before, best and median of ``--fit-rounds`` x 3 fits each, under whatever
``OPENBLAS_NUM_THREADS`` and ``OPENBLAS_THREAD_TIMEOUT`` the environment sets: with more than
one BLAS thread, OpenBLAS's workers keep spinning for a while after the product, on the core
the fit's second thread needs (docs/parallel.md, "BLAS threads").

Everything prints the load average at the start and at the end of each part: on a shared
machine the speed-ups are understated (a second thread may not get a core); rerun on a quiet
one. ``--record`` writes a compact JSON record (kB).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
try:
    import sqnopt  # noqa: F401
except ImportError:
    sys.path.insert(0, str(HERE.parent))

DATASETS = ("news20", "criteo", "fashion-mnist", "ctr1e6")


def load_average() -> list[float]:
    try:
        return [float(v) for v in Path("/proc/loadavg").read_text().split()[:3]]
    except OSError:
        return [float("nan")] * 3


# ---- data -------------------------------------------------------------------------------------

def ctr_stream(n_rows: int = 10**6, n_fields: int = 24, n_bits: int = 18, positive: float = 0.16,
               seed: int = 0) -> tuple[Any, np.ndarray]:
    """Hashed one-hot click-through rows: each of ``n_fields`` categorical fields takes a value
    from a Zipf(1.1) distribution over its own vocabulary (10 to 10^5 values), hashed with the
    field into ``2**n_bits`` columns (collisions add up, as feature hashing does); labels from a
    logistic model with one weight per (field, value), its intercept set for the ``positive``
    rate. Deterministic in ``seed``."""
    rng = np.random.default_rng(seed)
    n_cols = 1 << n_bits
    vocab = np.geomspace(10, 10**5, n_fields).astype(np.int64)
    cols = np.empty((n_rows, n_fields), dtype=np.int64)
    score = np.zeros(n_rows)
    for f in range(n_fields):
        ranks = np.minimum(rng.zipf(1.1, n_rows), vocab[f]) - 1
        with np.errstate(over="ignore"):    # multiplicative hashing, modulo 2**64
            key = (ranks.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
                   + np.uint64(f + 1) * np.uint64(0xC2B2AE3D27D4EB4F))
            key ^= key >> np.uint64(29)
            key *= np.uint64(0xBF58476D1CE4E5B9)
        cols[:, f] = (key >> np.uint64(64 - n_bits)).astype(np.int64)
        weights = rng.normal(scale=0.6, size=int(vocab[f]))
        score += weights[ranks]
    b = np.quantile(score, 1.0 - positive)
    p = 1.0 / (1.0 + np.exp(-(score - b)))
    y = np.where(rng.random(n_rows) < p, 1.0, -1.0)
    indptr = np.arange(0, n_rows * n_fields + 1, n_fields, dtype=np.int64)
    X = sp.csr_matrix((np.ones(n_rows * n_fields), cols.ravel(), indptr),
                      shape=(n_rows, n_cols))
    X.sum_duplicates()
    return X, y


def problems(names: list[str], ctr_rows: int = 10**6, ctr_bits: int = 18
             ) -> list[dict[str, Any]]:
    """The data sets found: ``X``, ``y``, the loss and ``alpha`` (the race's)."""
    from race.problems import datasets_dir, load_problems

    out: list[dict[str, Any]] = []
    root = datasets_dir(None)
    kinds = {"news20": "logistic", "criteo": "logistic", "fashion-mnist": "softmax"}
    for name in names:
        if name == "ctr1e6":
            X, y = ctr_stream(ctr_rows, n_bits=ctr_bits)
            out.append(dict(name=name, X=X, y=y, loss="logistic", alpha=1.0 / X.shape[0],
                            n_classes=2))
            continue
        skipped: list[str] = []
        for p in load_problems([name], [kinds[name]], root, quick=False, skipped=skipped):
            out.append(dict(name=name, X=p.X, y=p.y, loss=p.loss, alpha=p.alpha,
                            n_classes=p.n_classes))
        for line in skipped:
            print(line)
    return out


def kernel(prob: dict[str, Any]) -> Any:
    from sqnopt.data import prepare
    from sqnopt.objectives import LogLoss, Softmax

    if prob["loss"] == "softmax":
        data = prepare(prob["X"], prob["y"], label_kind="multiclass")
        return Softmax(lam=prob["alpha"]).init(data)
    data = prepare(prob["X"], np.where(np.asarray(prob["y"]) > 0, 1.0, -1.0))
    return LogLoss(lam=prob["alpha"]).init(data)


# ---- timing -----------------------------------------------------------------------------------

def _thread_times() -> dict[int, tuple[int, int]]:
    """Per thread of this process: nanoseconds on a CPU and nanoseconds runnable but waiting
    for one (``/proc/self/task/*/schedstat``; empty where there is none)."""
    out: dict[int, tuple[int, int]] = {}
    try:
        for task in Path("/proc/self/task").iterdir():
            try:
                run, wait, _ = (int(v) for v in (task / "schedstat").read_text().split())
            except (OSError, ValueError):
                continue
            out[int(task.name)] = (run, wait)
    except OSError:
        pass
    return out


def _timed(fn: Callable[[], Any], calls: int = 3) -> tuple[float, float, Any, float, float]:
    """Over ``calls`` calls: the best wall time and, of that call, the CPU time of all threads,
    the CPU time of the busiest thread (the pass's critical path without waiting for a CPU) and
    the time its threads spent runnable but waiting for a CPU (the machine's other load); and
    the last output."""
    best, cpu, busiest, waited, out = float("inf"), float("inf"), float("nan"), float("nan"), None
    for _ in range(calls):
        s0 = _thread_times()
        c0, t0 = time.process_time(), time.perf_counter()
        out = fn()
        t, c = time.perf_counter() - t0, time.process_time() - c0
        s1 = _thread_times()
        if t < best:
            best, cpu = t, c
            runs = [s1[k][0] - s0.get(k, (0, 0))[0] for k in s1]
            waits = [s1[k][1] - s0.get(k, (0, 0))[1] for k in s1]
            busiest = max(runs, default=0) * 1e-9 if runs else float("nan")
            waited = sum(waits) * 1e-9 if waits else float("nan")
    return best, cpu, out, busiest, waited


def _same(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is b
    if isinstance(a, tuple):
        return all(_same(x, y) for x, y in zip(a, b))
    return bool(np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True))


def pass_table(prob: dict[str, Any], threads: list[int], rounds: int) -> dict[str, Any]:
    from sqnopt import _parallel

    k = kernel(prob)
    rows = k.data
    n = k.n_params
    N = rows.n_samples
    rng = np.random.default_rng(0)
    w = rng.normal(size=n) * 1e-2
    v = rng.normal(size=n) * 1e-2
    full = np.arange(N, dtype=np.intp)
    g = np.empty(n)
    coef, _ = k.score_derivatives(w, full)
    z = k.rows_dot(full, w)
    u = k.rows_dot(full, v)
    passes: dict[str, Callable[[], Any]] = {
        "loss+gradient": lambda: (k.gradient(w, full, g), g.copy()),
        "score gathers X d": lambda: k.rows_dot(full, v),
        "line derivatives": lambda: k.scores_line(full, z, u, 0.5),
        "gradient scatter X'c": lambda: _scatter(k, full, coef, n),
    }
    if k.hess_size > 0 and k.n_scores == 1:
        D = k.hessian_factors(w, full)
        hv = np.empty(n)
        passes["Hessian factors"] = lambda: k.hessian_factors(w, full)
        passes["Hessian-vector product"] = lambda: (k.hessian_product(w, full, v, hv),
                                                    hv.copy())
        del D
    # not kernel passes: prediction's scorer on up to t threads (the fit's accuracy check runs
    # it too), against SciPy's product and the squared row norms the default's choice reads
    by_threads: dict[str, Callable[[int], Any]] = {}
    serial: dict[str, Callable[[], Any]] = {}
    X = prob["X"]
    if sp.issparse(X):
        from sqnopt.data import check_matrix, csr_scores
        from sqnopt.data._norms import row_sq_norms

        Xc = check_matrix(X)
        wt = np.ascontiguousarray(rng.normal(size=(Xc.shape[1], k.n_scores)) * 1e-2)
        by_threads["prediction scores (csr_scores)"] = lambda t: csr_scores(Xc, wt, t)
        serial["SciPy X @ w (prediction scores, 1 thread)"] = lambda: Xc @ wt
        serial["squared row norms (row_sq_norms)"] = lambda: row_sq_norms(Xc)
    entries = rows.nnz / N + int(rows.has_intercept)
    K = k.n_scores
    blocks = {"loss+gradient": _parallel.plan(N, K * (2 * entries + 16), n),
              "score gathers X d": _parallel.plan(N, K * (entries + 1), 0)}
    best: dict[str, dict[int, float]] = {p: {t: float("inf") for t in threads} for p in passes}
    cpu: dict[str, dict[int, float]] = {p: {t: float("inf") for t in threads} for p in passes}
    busiest: dict[str, dict[int, float]] = {p: {} for p in passes}
    waited: dict[str, dict[int, float]] = {p: {} for p in passes}
    ref: dict[str, Any] = {}
    same = True
    for _ in range(rounds):
        for name, fn in passes.items():
            for t in threads:
                rows.set_threads(t)
                tw, tc, out, tb, tq = _timed(fn)
                if tw < best[name][t]:
                    best[name][t], cpu[name][t] = tw, tc
                    busiest[name][t], waited[name][t] = tb, tq
                if name not in ref:
                    ref[name] = out
                elif not _same(ref[name], out):
                    same = False
        for name, fnt in by_threads.items():
            for t in threads:
                tw, tc, out, tb, tq = _timed(lambda: fnt(t))
                slot = best.setdefault(name, {})
                if tw < slot.get(t, float("inf")):
                    slot[t] = tw
                    cpu.setdefault(name, {})[t] = tc
                    busiest.setdefault(name, {})[t] = tb
                    waited.setdefault(name, {})[t] = tq
                if name not in ref:
                    ref[name] = out
                elif not _same(ref[name], out):
                    same = False
    serial_best = {name: min(_timed(fn)[0] for _ in range(rounds)) for name, fn in serial.items()}
    rows.set_threads(1)
    return {"dataset": prob["name"], "shape": [int(N), int(rows.n_features)],
            "nnz": int(rows.nnz), "n_params": int(n), "blocks": blocks, "identical": same,
            "seconds": best, "cpu_seconds": cpu, "busiest_thread_cpu": busiest,
            "waited_for_cpu": waited, "serial_seconds": serial_best}



def _scatter(k: Any, batch: np.ndarray, coef: np.ndarray, n: int) -> np.ndarray:
    out = np.zeros(n)
    k.rows_axpy(batch, coef, 1.0 / batch.shape[0], out)
    return out


def fit_table(prob: dict[str, Any], threads: list[int], rounds: int,
              fit_passes: int, blas_ab: bool = False, penalty: str = "l2",
              policy_ab: float | None = None, mixing: bool = True) -> dict[str, Any]:
    """Whole fits per thread count; with ``blas_ab`` also the fit without its whole-fit BLAS
    limit (the trainer's ``fit`` replaced by ``Trainer.fit.__wrapped__`` for that variant: BLAS
    limited only inside each run, as before the limit covered the fit -- except the large-data
    recipe's chunked fit, which had its own limit then), interleaved in the same rounds."""
    from sqnopt import SQNClassifier, _parallel
    from sqnopt.training import Trainer

    limited = Trainer.fit

    def fit_in_runs_only(est: Any, X: Any, y: Any) -> Any:
        Trainer.fit = limited.__wrapped__  # type: ignore[attr-defined, method-assign]
        try:
            return est.fit(X, y)
        finally:
            Trainer.fit = limited  # type: ignore[method-assign]

    X, y = prob["X"], prob["y"]
    if prob["name"] == "ctr1e6":
        params: dict[str, Any] = dict(alpha=prob["alpha"], max_iter=fit_passes, tol=None)
    else:
        params = dict(alpha=prob["alpha"], fit_intercept=False)
    if penalty != "l2":
        params["penalty"] = penalty
    if not mixing:
        params["parameter_mixing"] = False
    def fit_other_policy(est: Any, X: Any, y: Any) -> Any:
        old = _parallel._set_block_policy(min_block_work=policy_ab)
        try:
            return est.fit(X, y)
        finally:
            _parallel._set_block_policy(**old)

    variants: dict[str, Callable[[Any, Any, Any], Any]] = {"": SQNClassifier.fit}
    if blas_ab:
        variants["blas_free"] = fit_in_runs_only
    if policy_ab is not None:
        variants["policy"] = fit_other_policy
    best = {v: {t: float("inf") for t in threads} for v in variants}
    coefs: dict[tuple[str, int], Any] = {}
    n_iter = {}
    solve = {t: float("inf") for t in threads}   # the compiled solves' own wall time
    for _ in range(rounds):
        for v, fit in variants.items():
            for t in threads:
                est = SQNClassifier(random_state=0, n_jobs=t, **params)
                t0 = time.perf_counter()
                fit(est, X, y)
                best[v][t] = min(best[v][t], time.perf_counter() - t0)
                coefs.setdefault((v, t), est.coef_)
                if v == "":
                    n_iter[t] = int(est.n_iter_)
                    solve[t] = min(solve[t], sum(float(r.wall_time)
                                                 for r in est._trainer.results_))
    same = all(np.array_equal(coefs[("", t)], coefs[("", threads[0])]) for t in threads)
    out = {"dataset": prob["name"], "params": {k: v for k, v in params.items()},
           "n_iter": n_iter, "identical_coef": same, "seconds": best[""],
           "solve_seconds": solve}
    last = est._trainer.results_[-1]
    mixed = sum(m for m, _ in getattr(est._trainer, "_mix_counts", []))
    if last.path == "adaptive" and last.n_samples == last.n_iter:
        out["mixed_chunks"] = mixed
    if last.path == "adaptive" and last.n_samples == last.n_iter and not mixed:
        # the large-data recipe run sequentially: per-example updates, each reading the
        # previous one's weights -- a chain no thread count shortens. Its solves' time bounds
        # the speed-up (Amdahl): at most T1 / (S + (T1 - S) / k) on k threads, T1 / S on any
        # number. (A fit whose chunks are mixed runs two shards of each at once: the bound
        # does not apply)
        t1, sv = best[""][threads[0]], solve[threads[0]]
        out["sequential_share"] = sv / t1
        out["amdahl_bound"] = {t: t1 / (sv + (t1 - sv) / t) for t in threads}
    if policy_ab is not None:
        # the other block policy sums some passes in other blocks: other (equally valid) bits
        out["seconds_min_block_work_" + f"{policy_ab:g}"] = best["policy"]
    if blas_ab:
        out["seconds_blas_limited_in_runs_only"] = best["blas_free"]
        # BLAS calls outside the runs (a dense problem's set-up) run on the library's own
        # threads in that variant, whose sums may round differently: the same coefficients
        # are not expected there, only recorded
        out["blas_variant_same_coef"] = all(
            np.array_equal(coefs[("blas_free", t)], coefs[("", t)]) for t in threads)
    return out


# ---- BLAS spin ---------------------------------------------------------------------------------

def blas_spin(prob: dict[str, Any], rounds: int) -> dict[str, Any]:
    """``n_jobs=2`` fits right after a multi-threaded BLAS call and without one (module
    docstring)."""
    import gc

    from threadpoolctl import threadpool_info

    from sqnopt import SQNClassifier

    rng = np.random.default_rng(0)
    A, v = rng.random((2000, 2000)), rng.random(2000)
    times: dict[str, list[float]] = {"no BLAS call before": [], "a BLAS product before": []}
    for _ in range(3 * rounds):
        for name in times:
            est = SQNClassifier(alpha=prob["alpha"], fit_intercept=False, random_state=0,
                                n_jobs=2)
            gc.collect()
            if name != "no BLAS call before":
                A @ v
            t0 = time.perf_counter()
            est.fit(prob["X"], prob["y"])
            times[name].append(time.perf_counter() - t0)
    return {"dataset": prob["name"],
            "blas_threads": [int(i["num_threads"]) for i in threadpool_info()
                             if i.get("user_api") == "blas"],
            "thread_timeout": os.environ.get("OPENBLAS_THREAD_TIMEOUT"),
            "seconds": {k: {"best": min(t), "median": float(np.median(t))}
                        for k, t in times.items()}}


# ---- break-even -------------------------------------------------------------------------------

def break_even(rounds: int, sizes: tuple[int, ...] = (1000, 2000, 4000, 8000, 16000, 32000,
                                                      64000)) -> dict[str, Any]:
    """Serial loop vs the policy's blocks on 1 and 2 threads, for passes of growing work."""
    from sqnopt import _parallel
    from sqnopt.data import prepare
    from sqnopt.objectives import LogLoss

    rng = np.random.default_rng(0)
    out: dict[str, Any] = {"fork_join_us": {}, "omp_fork_join_us": {}, "cases": []}
    try:      # an OpenMP region, timed the same way (bench/native/_forkjoin.pyx, -fopenmp)
        from native import load

        fj: Any = load("_forkjoin")
        out["openmp"] = bool(fj.openmp())
    except Exception as exc:  # no compiler, no Cython: the pool alone
        fj, out["openmp"] = None, f"not measured: {exc}"
    for t in (1, 2):
        pool, omp = [], []
        for _ in range(rounds):         # interleaved: the pool, then OpenMP
            pool.append(_parallel.fork_join_seconds(t, 50e-6, 200))
            if fj is not None and out["openmp"] is True:
                omp.append(fj.omp_fork_join_seconds(t, 50e-6, 200))
        out["fork_join_us"][t] = min(pool) * 1e6
        if omp:
            out["omp_fork_join_us"][t] = min(omp) * 1e6
    default = _parallel.block_policy()
    for kind, entries in (("sparse", 10), ("dense", 100)):
        for n_rows in sizes:
            if kind == "sparse":
                X: Any = sp.random(n_rows, 2000, density=entries / 2000, format="csr",
                                   random_state=n_rows)
            else:
                X = rng.normal(size=(n_rows, entries))
            y = np.where(rng.random(n_rows) < 0.5, -1.0, 1.0)
            k = LogLoss(lam=1e-4).init(prepare(X, y))
            n = k.n_params
            w = rng.normal(size=n) * 0.1
            full = np.arange(n_rows, dtype=np.intp)
            z = k.rows_dot(full, w)
            u = k.rows_dot(full, rng.normal(size=n))
            g = np.empty(n)
            # the kernel's own work estimate (a dense row's entries four to a unit)
            read = entries if kind == "sparse" else entries / 4
            cases = {"gradient": (lambda: k.gradient(w, full, g), 2 * read + 16),
                     "line derivatives": (lambda: k.scores_line(full, z, u, 0.5), 16)}
            for name, (fn, row_work) in cases.items():
                times = {"serial": float("inf"), "blocks, 1 thread": float("inf"),
                         "blocks, 2 threads": float("inf")}
                for _ in range(rounds):
                    for setting in times:
                        if setting == "serial":
                            _parallel._set_block_policy(min_block_work=1e18)
                        k.data.set_threads(2 if setting.endswith("2 threads") else 1)
                        calls = max(3, int(2e5 / (n_rows * row_work / 64 + 1)))
                        tw = _timed(fn, calls)[0]
                        _parallel._set_block_policy(**default)
                        times[setting] = min(times[setting], tw)
                out["cases"].append({"rows": kind, "entries": entries, "pass": name,
                                     "n_rows": n_rows, "work": n_rows * row_work,
                                     "blocks": _parallel.plan(n_rows, row_work,
                                                              n if name == "gradient" else 0),
                                     "seconds": times})
    return out


# ---- report -----------------------------------------------------------------------------------

def _fmt_ms(s: float) -> str:
    return f"{s * 1e3:.3g} ms" if s < 1 else f"{s:.3g} s"


def print_passes(tab: dict[str, Any], threads: list[int]) -> None:
    """Wall times and speed-ups; ``cpu xN``: all threads' CPU time against one thread's (the
    work the split adds); ``crit xN``: one thread's CPU time over the busiest thread's with N
    (the speed-up the split allows when every thread has a core); ``waited``: time the threads
    of that call spent runnable but without a CPU (other load on the machine)."""
    t0 = threads[0]
    print(f"\n{tab['dataset']}: {tab['shape'][0]} x {tab['shape'][1]}, {tab['nnz']} stored, "
          f"{tab['n_params']} parameters; blocks: {tab['blocks']}; same bits on every thread "
          f"count: {tab['identical']}")
    head = " | ".join([f"{t} thr" for t in threads] + [f"x{t}/x{t0}" for t in threads[1:]]
                      + [f"cpu x{t}" for t in threads[1:]] + [f"crit x{t}" for t in threads[1:]]
                      + [f"waited ({t} thr)" for t in threads[1:]])
    print(f"| pass | {head} |")
    for name, sec in tab["seconds"].items():
        cpu = tab["cpu_seconds"][name]
        crit = tab["busiest_thread_cpu"][name]
        cells = [_fmt_ms(sec[t]) for t in threads]
        cells += [f"{sec[t0] / sec[t]:.2f}x" for t in threads[1:]]
        cells += [f"{cpu[t] / max(cpu[t0], 1e-12):.2f}" for t in threads[1:]]
        cells += [f"{crit[t0] / crit[t]:.2f}x" if crit.get(t, 0) > 0 else "-"
                  for t in threads[1:]]
        cells += [_fmt_ms(tab["waited_for_cpu"][name][t]) for t in threads[1:]]
        print(f"| {name} | " + " | ".join(cells) + " |")
    for name, sec in tab.get("serial_seconds", {}).items():
        print(f"{name}: {_fmt_ms(sec)}")


def print_fits(tab: dict[str, Any], threads: list[int]) -> None:
    t0 = threads[0]
    sec = tab["seconds"]
    cells = [f"n_jobs={t}: {_fmt_ms(sec[t])}" for t in threads]
    ratios = [f"x{sec[t0] / sec[t]:.2f} (n_jobs={t})" for t in threads[1:]]
    print(f"fit {tab['dataset']} {tab['params']}: {', '.join(cells)}; speed-up "
          f"{', '.join(ratios)}; passes {tab['n_iter']}; identical coef_: "
          f"{tab['identical_coef']}")
    if tab.get("mixed_chunks"):
        print(f"  large-data recipe: {tab['mixed_chunks']} chunks run as two mixed shards")
    if "sequential_share" in tab:
        bound = tab["amdahl_bound"]
        print(f"  per-example solves (sequential): {tab['sequential_share']:.0%} of the "
              f"n_jobs={t0} fit; Amdahl's bound on the speed-up: "
              + ", ".join(f"x{bound[t]:.2f} (n_jobs={t})" for t in threads[1:])
              + f", x{1.0 / tab['sequential_share']:.2f} on any number of threads")
    for key, other in tab.items():
        if key.startswith("seconds_min_block_work_"):
            cells = [f"n_jobs={t}: {_fmt_ms(other[t])}" for t in threads]
            print(f"  the same fits with min_block_work = {key.rsplit('_', 1)[1]}: "
                  f"{', '.join(cells)}; speed-up x{other[t0] / other[threads[-1]]:.2f} "
                  f"(n_jobs={threads[-1]})")
    free = tab.get("seconds_blas_limited_in_runs_only")
    if free is not None:
        cells = [f"n_jobs={t}: {_fmt_ms(free[t])} ({free[t] / sec[t]:.2f}x the fit's time)"
                 for t in threads]
        print(f"  the same fits with BLAS limited only inside each run: {', '.join(cells)}; "
              f"speed-up x{free[t0] / free[threads[-1]]:.2f} (n_jobs={threads[-1]})")


def print_break_even(res: dict[str, Any]) -> None:
    print(f"\nround trip beyond the work (2 tasks of 50 us, best of the rounds): sqnopt's pool "
          f"{res['fork_join_us'][2]:.1f} us on 2 threads ({res['fork_join_us'][1]:.1f} us for 1 "
          f"task on 1)")
    if res["omp_fork_join_us"]:
        print(f"OpenMP region (libgomp, same tasks, interleaved with the pool): "
              f"{res['omp_fork_join_us'][2]:.1f} us on 2 threads "
              f"({res['omp_fork_join_us'][1]:.1f} us on 1)")
    else:
        print(f"OpenMP: {res['openmp']}")
    print("| rows | pass | N | work units | blocks | serial | blocks, 1 thr | blocks, 2 thr | "
          "2 thr / serial |")
    for c in res["cases"]:
        s = c["seconds"]
        print(f"| {c['rows']} ({c['entries']}) | {c['pass']} | {c['n_rows']} | {c['work']:.3g} | "
              f"{c['blocks']} | {s['serial'] * 1e6:.0f} us | {s['blocks, 1 thread'] * 1e6:.0f} us "
              f"| {s['blocks, 2 threads'] * 1e6:.0f} us | "
              f"{s['serial'] / s['blocks, 2 threads']:.2f}x |")


#: issue 36's goals on a 2-core machine: a full-batch pass >= 1.8x faster on 2 threads, a whole
#: fit >= 1.6x (both against 1 thread, identical results)
PASS_GOAL, FIT_GOAL = 1.8, 1.6


def goals(record: dict[str, Any], threads: list[int]) -> list[str]:
    """The goals' lines: the full-batch loss and gradient pass and the whole fits, the second
    thread count against the first."""
    t0, t1 = threads[0], threads[1]
    out = []
    for tab in record.get("passes", []):
        sec = tab["seconds"]["loss+gradient"]
        r = sec[t0] / sec[t1]
        out.append(f"goal: full-batch pass on {tab['dataset']} >= {PASS_GOAL}x with {t1} threads: "
                   f"{r:.2f}x, {'met' if r >= PASS_GOAL else 'not met'}"
                   f"{'' if tab['identical'] else ' (OUTPUTS DIFFER)'}")
    for ft in record.get("fits", []):
        r = ft["seconds"][t0] / ft["seconds"][t1]
        penalty = ft["params"].get("penalty", "l2")
        est = "SQNClassifier" if penalty == "l2" else f"SQNClassifier(penalty={penalty!r})"
        if ft["params"].get("parameter_mixing") is False:
            est = est.replace("SQNClassifier", "SQNClassifier(parameter_mixing=False)")
        out.append(f"goal: {est} fit on {ft['dataset']} >= {FIT_GOAL}x with n_jobs={t1}: "
                   f"{r:.2f}x, {'met' if r >= FIT_GOAL else 'not met'}"
                   f"{'' if ft['identical_coef'] else ' (COEFFICIENTS DIFFER)'}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", nargs="+", choices=DATASETS, default=list(DATASETS))
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--rounds", type=int, default=5, help="rounds of the pass timings")
    ap.add_argument("--fit-rounds", type=int, default=3, help="rounds of the whole fits")
    ap.add_argument("--fit-passes", type=int, default=10,
                    help="ctr1e6: the fits' budget in passes (no tolerance)")
    ap.add_argument("--no-mixing", action="store_true",
                    help="the fits with parameter_mixing=False (the large-data recipe's "
                         "sequential updates)")
    part = ap.add_mutually_exclusive_group()
    part.add_argument("--passes-only", action="store_true")
    part.add_argument("--fits-only", action="store_true")
    part.add_argument("--break-even", action="store_true")
    part.add_argument("--blas-spin", action="store_true",
                      help="n_jobs=2 fits right after a BLAS call and without one")
    ap.add_argument("--blas-ab", action="store_true",
                    help="fits also without the whole-fit BLAS limit (only inside each run)")
    ap.add_argument("--penalty", choices=("l2", "l1", "elasticnet"), default="l2",
                    help="the fits' penalty (l1, elasticnet: the composite solvers' fits)")
    ap.add_argument("--policy-ab", type=float, metavar="MIN_BLOCK_WORK",
                    help="fits also under this min_block_work, interleaved in the same rounds")
    ap.add_argument("--record", type=Path, help="write a compact JSON record here")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: the generated stream at 5 x 10^4 rows and 2^14 columns "
                    "only, one round, 2-pass fits; break-even at 2 sizes")
    args = ap.parse_args(argv)
    ctr_rows, ctr_bits = 10**6, 18
    if args.quick:
        args.datasets, ctr_rows, ctr_bits = ["ctr1e6"], 50_000, 14
        args.rounds, args.fit_rounds, args.fit_passes = 1, 1, 2

    from sqnopt import _parallel, simd_variant

    record: dict[str, Any] = {
        "command": "python bench/parallel_passes.py " + " ".join(sys.argv[1:] if argv is None
                                                                  else argv),
        "machine": {"cpus": os.cpu_count(), "affinity": len(os.sched_getaffinity(0))
                    if hasattr(os, "sched_getaffinity") else None,
                    "platform": platform.platform(), "simd": simd_variant(),
                    "threads_available": _parallel.threads_available()},
        "policy": _parallel.block_policy(), "threads": args.threads,
        "load_start": load_average(), "stamp": time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime())}
    print(f"load average {record['load_start']}; threads {args.threads}; policy "
          f"{record['policy']}")
    if args.blas_spin:
        record["blas_spin"] = []
        for prob in problems(args.datasets, ctr_rows, ctr_bits):
            res = blas_spin(prob, args.fit_rounds)
            print(f"{res['dataset']} (BLAS threads {res['blas_threads']}, "
                  f"OPENBLAS_THREAD_TIMEOUT={res['thread_timeout']}): " + "; ".join(
                      f"{k}: best {_fmt_ms(v['best'])}, median {_fmt_ms(v['median'])}"
                      for k, v in res["seconds"].items()))
            record["blas_spin"].append(res)
    elif args.break_even:
        res = break_even(args.rounds, (2000, 16000) if args.quick else
                         (1000, 2000, 4000, 8000, 16000, 32000, 64000))
        print_break_even(res)
        record["break_even"] = res
    else:
        record["passes"], record["fits"] = [], []
        for prob in problems(args.datasets, ctr_rows, ctr_bits):
            if not args.fits_only:
                tab = pass_table(prob, args.threads, args.rounds)
                tab["load"] = load_average()
                print_passes(tab, args.threads)
                print(f"(load average {tab['load']})")
                record["passes"].append(tab)
            if not args.passes_only:
                ft = fit_table(prob, args.threads, args.fit_rounds, args.fit_passes, args.blas_ab,
                               args.penalty, args.policy_ab, not args.no_mixing)
                ft["load"] = load_average()
                print_fits(ft, args.threads)
                print(f"(load average {ft['load']})")
                record["fits"].append(ft)
    if not (args.break_even or args.blas_spin) and len(args.threads) > 1:
        record["goals"] = goals(record, args.threads)
        for line in record["goals"]:
            print(line)
    record["load_end"] = load_average()
    print(f"load average at the end {record['load_end']}")
    if args.record is not None:
        from _results import dumps

        args.record.parent.mkdir(parents=True, exist_ok=True)
        args.record.write_text(dumps(_keys_to_str(record), digits=4))
        print(f"wrote {args.record}")
    return 0


def _keys_to_str(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): _keys_to_str(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_keys_to_str(v) for v in obj]
    return obj


if __name__ == "__main__":
    sys.exit(main())
