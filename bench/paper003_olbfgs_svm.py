"""Reproduce Mokhtari & Ribeiro, *Global convergence of online limited memory BFGS* (JMLR 2015),
Section 4, Figures 1-4: oLBFGS, oBFGS, RES, SGD and SAG on the boxes SVM problem.

Setting (paper Sec. 4.1): squared hinge, lam = 1e-4, N = 1e4 samples of ``make_boxes``,
n = 100 and n = 1000; tau = 10; L = 5 for the quasi-Newton methods, L = 1 for SGD and SAG;
eps_t = eps0 T0 / (T0 + t) with eps0 = 2e-2, T0 = 100 for oLBFGS, oBFGS and RES; SGD's and SAG's
step and B_0 = b0 I of oBFGS and RES tuned per n (``--tune`` runs the grids; the chosen values
are in ``TUNED`` and ``B0``). Each realization
draws a new data set; every method runs Lt = 4e4 samples from w0 (zeros by default, ``--init
randn`` for w0 ~ N(0, I)).

Figures 1-2: F(w) after Lt = 4e4 (histograms over realizations). Figures 3-4: CPU time to
F = 1e-4 (n = 100) and F = 1e-5 (n = 1000): CPU time (``time.thread_time``) of the compiled
iterations up to the first iterate on a geometric grid (relative spacing <= 1/16) with
F <= target; objective evaluations are done afterwards and excluded (see ``_paper_runs``).
Realizations run in parallel (multiprocessing, one process per core).

Usage::

    OPENBLAS_NUM_THREADS=1 python bench/paper003_olbfgs_svm.py --realizations 1000
    python bench/paper003_olbfgs_svm.py --tune --realizations 20   # SGD/SAG steps, B_0 of oBFGS/RES
    python bench/paper003_olbfgs_svm.py --init randn --realizations 50 --tag randn

oBFGS (O(n^2) per iteration) and RES (O(n^3) per refresh of its eigendecomposition) at
n = 1000 cost seconds per realization, so they run on the first few realizations only
(``--cap``, printed as J).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import multiprocessing as mp  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
if __import__("importlib.util").util.find_spec("sqnopt") is None:  # run from a source checkout
    sys.path.insert(1, str(Path(__file__).resolve().parent.parent))
from _paper_runs import Method, fmt, summarize, time_to, trace_run  # noqa: E402
from _results import from_columns, save_png, to_columns, write_json  # noqa: E402

from sqnopt.datasets import make_boxes  # noqa: E402

HERE = Path(__file__).resolve().parent
LAM = 1e-4
N_SAMPLES = 10_000
LT = 40_000
TARGET = {100: 1e-4, 1000: 1e-5}
METHODS = ("olbfgs", "obfgs", "res", "sgd", "sag")
# Realization caps for the methods whose iterations cost O(n^2) / O(n^3): one RES run at
# n = 1000 (up to 8000 iterations of 2.5-3 ms with the eigendecomposition + Woodbury form, ~10 ms
# with a Cholesky factorisation each) takes 15-20 s of CPU, so 1000 realizations can afford six
# in the 10-minute budget of the full run.
DEFAULT_CAPS = ("res:100:250", "obfgs:1000:20", "res:1000:6")

# Paper 003, Figures 1-4 (min, mean, max).
PAPER_F = {
    100: {"olbfgs": (1.3e-5, 1.7e-5, 3.4e-5), "obfgs": (1.2e-5, 1.4e-5, 2.0e-5),
          "res": (1.5e-5, 1.9e-5, 3.3e-5), "sgd": (1.2e-3, 1.6e-3, 1.9e-3),
          "sag": (4.4e-4, 5.7e-4, 7.1e-4)},
    1000: {"olbfgs": (8.6e-6, 9.9e-6, 11.5e-6), "obfgs": (8.5e-6, 9.8e-6, 11.4e-6),
           "res": (7.9e-6, 9.5e-6, 11.3e-6), "sgd": (4.1e-2, 4.5e-2, 5.1e-2),
           "sag": (1.9e-2, 2.1e-2, 2.4e-2)},
}
PAPER_T = {
    100: {"olbfgs": (0.0574, 0.0734, 0.0897), "obfgs": (0.1149, 0.1485, 0.2375),
          "res": (0.2150, 0.2609, 0.4623), "sgd": (0.6057, 0.6364, 0.6639),
          "sag": (0.4682, 0.5017, 0.5300)},
    1000: {"olbfgs": (0.1139, 0.1153, 0.1230), "obfgs": (3.90, 4.11, 4.83),
           "res": (7.44, 7.73, 8.61), "sgd": (2.01, 2.03, 2.10), "sag": (1.40, 1.42, 1.46)},
}

# SGD / SAG steps (eps0, T0; T0 = 0 means constant) chosen by ``--tune`` (best mean F after
# Lt = 4e4 over the grid below); see bench/results/paper003_tuning*.json.
TUNED: dict[str, dict[int, dict[str, tuple[float, float]]]] = {
    "zeros": {100: {"sgd": (1e-2, 0.0), "sag": (3e-5, 1e4)},
              1000: {"sgd": (1e-3, 0.0), "sag": (1e-4, 1e2)}},
    "randn": {100: {"sgd": (1.0, 0.0), "sag": (1.0, 0.0)},
              1000: {"sgd": (1.0, 0.0), "sag": (1e-4, 0.0)}},
}
TUNE_EPS0 = (3e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1, 3e-1, 1.0)
TUNE_T0 = (1e2, 1e3, 1e4, 0.0)
# B_0 = b0 I of oBFGS and RES: the paper leaves it open (Algorithm 1 of paper 000 only asks
# B_0 > delta I); chosen like SGD's and SAG's steps, per n, by the best mean F after Lt = 4e4 over
# TUNE_B0 ("auto": Nocedal & Wright eq. 6.20 scaling at the first pair). RES at n = 1000 costs
# 15-20 s per run with the eig form (45-90 s with the Cholesky form), so its cells average fewer
# realizations (TUNE_CAPS). The random start was
# tuned at n = 100 only; its n = 1000 entries repeat the n = 100 choice.
TUNE_B0: tuple[float | str, ...] = (1.0, 10.0, 100.0, 1000.0, "auto")
TUNE_CAPS = ("res:1000:6",)
B0: dict[str, dict[int, dict[str, float | str]]] = {
    "zeros": {100: {"obfgs": 100.0, "res": 100.0}, 1000: {"obfgs": 1000.0, "res": 100.0}},
    "randn": {100: {"obfgs": 100.0, "res": 100.0}, 1000: {"obfgs": 100.0, "res": 100.0}},
}


def methods_for(n: int, init: str) -> dict[str, Method]:
    sgd = TUNED[init][n]["sgd"]
    sag = TUNED[init][n]["sag"]
    return {
        "olbfgs": Method("oLBFGS", "olbfgs", 5, 2e-2, 100.0, (("memory", 10),)),
        "obfgs": Method("oBFGS", "obfgs", 5, 2e-2, 100.0,
                        (("init_scale", B0[init][n]["obfgs"]),)),
        "res": Method("RES", "res", 5, 2e-2, 100.0,
                      (("delta", LAM), ("Gamma", 1e-4), ("init_scale", B0[init][n]["res"]))),
        "sgd": Method("SGD", "sgd", 1, sgd[0], sgd[1]),
        "sag": Method("SAG", "sag", 1, sag[0], sag[1]),
    }


def dataset(n: int, r: int, init: str) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    X, y = make_boxes(N_SAMPLES, n, random_state=1_000_003 * n + r)
    w0 = None if init == "zeros" else np.random.default_rng(7_000_001 * n + r).normal(size=n)
    return X, y, w0


def realization(task: tuple[int, int, str, tuple[str, ...], int]) -> dict[str, Any]:
    """All requested methods on realization ``r`` of dimension ``n``."""
    n, r, init, names, repeats = task
    X, y, w0 = dataset(n, r, init)
    meths = methods_for(n, init)
    out: dict[str, Any] = {"n": n, "r": r}
    for name in names:
        m = meths[name]
        seed = 31 * r + 1
        try:
            res = trace_run(m, X, y, LAM, seed, w0, LT, TARGET[n])
        except FloatingPointError as exc:
            out[name] = {"F": float("inf"), "error": str(exc)}
            continue
        k = res["iters_to_target"]
        if repeats > 0 and k is not None:       # cross-check: wall time from scratch, one call
            res["wall_time_to_target"] = time_to(m, X, y, LAM, seed, w0, k, repeats)
        out[name] = res
    return out


def tune_task(task: tuple[int, int, str, str, Any, float]) -> dict[str, Any]:
    n, r, init, kind, a, b = task
    X, y, w0 = dataset(n, r, init)
    if kind in ("sgd", "sag"):
        m = Method(kind, kind, 1, a, b)
    else:  # B_0 of oBFGS / RES
        opts = (("init_scale", a),) + ((("delta", LAM), ("Gamma", 1e-4)) if kind == "res" else ())
        m = Method(kind, kind, 5, 2e-2, 100.0, opts)
    try:
        F = trace_run(m, X, y, LAM, 31 * r + 1, w0, LT, None)["F"]
    except FloatingPointError:
        F = float("inf")
    return {"n": n, "r": r, "kind": kind, "a": a, "b": b, "F": F}


def run_tuning(args: argparse.Namespace) -> None:
    """Evaluate the step grid (and B_0 grid) and merge into the tuning JSON (cells already in the
    file with the same number of realizations are not recomputed)."""
    out = HERE / "results" / f"paper003_tuning{'_' + args.init if args.init != 'zeros' else ''}.json"
    old: dict[str, Any] = json.loads(out.read_text()) if out.exists() else {}
    caps = {(c.split(":")[0], int(c.split(":")[1])): int(c.split(":")[2]) for c in args.tune_cap}

    def key(n: int, kind: str, a: Any, b: float) -> str:
        return f"{kind}|{n}|{a}|{b:g}"

    def count(n: int, kind: str) -> int:
        return min(caps.get((kind, n), args.realizations), args.realizations)

    # a cell is reused only if it averaged the number of realizations asked for now
    old_counts: dict[str, int] = old.get("cell_realizations", {})
    cells: dict[str, float] = {}
    counts: dict[str, int] = {}
    for k, v in old.get("cells", {}).items():
        kind, n = k.split("|")[0], int(k.split("|")[1])
        if old_counts.get(k, old.get("realizations")) == count(n, kind):
            cells[k], counts[k] = v, count(n, kind)

    tasks = [(n, r, args.init, kind, e, T) for n in args.n for kind in ("sgd", "sag")
             for e in TUNE_EPS0 for T in TUNE_T0 if key(n, kind, e, T) not in cells
             for r in range(count(n, kind))]
    tasks += [(n, r, args.init, kind, b0, 0.0) for n in args.n for kind in ("obfgs", "res")
              for b0 in TUNE_B0 if key(n, kind, b0, 0.0) not in cells
              for r in range(count(n, kind))]
    # expensive tasks first so the pool does not end on a long tail
    tasks.sort(key=lambda t: -t[0] ** (3 if t[3] == "res" else 2 if t[3] == "obfgs" else 1))
    rows = parallel(tune_task, tasks, args.workers)
    for t in {(x["n"], x["kind"], x["a"], x["b"]) for x in rows}:
        Fs = [x["F"] for x in rows if (x["n"], x["kind"], x["a"], x["b"]) == t]
        cells[key(*t)], counts[key(*t)] = float(np.mean(Fs)), len(Fs)
    table: dict[str, Any] = {}
    print(f"mean F after Lt = {LT:g} over {args.realizations} realizations (init = {args.init}; "
          f"fewer where capped: {' '.join(args.tune_cap) or 'none'})")
    for n in args.n:
        for kind in ("obfgs", "res"):
            row = {str(b0): cells[key(n, kind, b0, 0.0)] for b0 in TUNE_B0
                   if key(n, kind, b0, 0.0) in cells}
            if row:
                best = min(row, key=lambda c: row[c])
                table[f"{kind}_b0_n{n}"] = {"mean_F": row, "best": best,
                                            "realizations": count(n, kind)}
                print(f"  n={n} {kind} B_0 = b0 I ({count(n, kind)} realizations): best b0 = "
                      f"{best}; " + "  ".join(f"{k}:{v:.2e}" for k, v in row.items()))
    for n in args.n:
        for kind in ("sgd", "sag"):
            row = {f"{e:g},{T:g}": cells[key(n, kind, e, T)] for e in TUNE_EPS0 for T in TUNE_T0
                   if key(n, kind, e, T) in cells}
            best = min(row, key=lambda c: row[c])
            table[f"{kind}_n{n}"] = {"mean_F": row, "best": best}
            print(f"  n={n} {kind}: best (eps0,T0) = ({best}) mean F = {row[best]:.3e}")
            for e in TUNE_EPS0:
                print("     eps0=%-6g " % e + "  ".join(
                    f"T0={T:g}:{row[f'{e:g},{T:g}']:.2e}" for T in TUNE_T0
                    if f"{e:g},{T:g}" in row))
    out.parent.mkdir(parents=True, exist_ok=True)
    write_json(out, {"init": args.init, "realizations": args.realizations, "Lt": LT,
                     "eps0_grid": TUNE_EPS0, "T0_grid": TUNE_T0, "b0_grid": TUNE_B0,
                     "table": table, "cells": cells, "cell_realizations": counts})
    print(f"wrote {out.relative_to(HERE.parent)}")


def parallel(fn: Any, tasks: list[Any], workers: int) -> list[Any]:
    if workers <= 1:
        return [fn(t) for t in tasks]
    ctx = mp.get_context("fork")
    with ctx.Pool(workers) as pool:
        return list(pool.imap_unordered(fn, tasks, chunksize=1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--realizations", type=int, default=100)
    ap.add_argument("--n", type=int, nargs="+", default=[100, 1000])
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    ap.add_argument("--cap", nargs="*", default=list(DEFAULT_CAPS), metavar="METHOD:N:J",
                    help="run METHOD at dimension N on the first J realizations only "
                         f"(default: {' '.join(DEFAULT_CAPS)}); pass --cap with no value to "
                         "run everything on every realization")
    ap.add_argument("--init", choices=("zeros", "randn"), default="zeros")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--wall-check", type=int, default=0,
                    help="also time k* iterations from scratch in one call (wall clock, best of "
                         "this many fresh runs) as a cross-check of the CPU-time measurement")
    ap.add_argument("--tune", action="store_true",
                    help="run the SGD/SAG step grid and the oBFGS/RES B_0 grid instead")
    ap.add_argument("--tune-cap", nargs="*", default=list(TUNE_CAPS), metavar="METHOD:N:J",
                    help="with --tune: average METHOD's cells at dimension N over J realizations "
                         f"only (default: {' '.join(TUNE_CAPS)})")
    ap.add_argument("--tag", default="", help="suffix of the output files")
    ap.add_argument("--from-json", default=None, metavar="PATH",
                    help="re-print the tables (and rewrite the summary and figure) of a finished "
                         "run's JSON instead of running")
    args = ap.parse_args()
    if args.tune:
        run_tuning(args)
        return
    if args.from_json:
        old = json.loads(Path(args.from_json).read_text())
        cfg = old["config"]
        args.realizations, args.init = cfg["realizations"], cfg["init"]
        args.workers, args.cap = cfg["workers"], cfg.get("caps", args.cap)
        runs = old["runs"] if "runs" in old else from_columns(old["runs_columns"])
        args.n = sorted({row["n"] for row in runs})
        args.cpu_seconds = cfg.get("cpu_seconds")
        args.load_before, args.load_after = cfg.get("loadavg_before"), cfg.get("loadavg_after")
        report(runs, args, cfg["wall_seconds"], Path(args.from_json).resolve())
        return

    caps = {(c.split(":")[0], int(c.split(":")[1])): int(c.split(":")[2]) for c in args.cap}
    tasks = []
    for r in range(args.realizations):
        for n in args.n:
            names = tuple(m for m in args.methods if r < caps.get((m, n), args.realizations))
            if names:
                tasks.append((n, r, args.init, names, args.wall_check))
    # expensive tasks first so the pool does not end on a long tail
    tasks.sort(key=lambda t: -(t[0] ** 2 * (("res" in t[3]) * t[0] + ("obfgs" in t[3]) * 3)))
    args.load_before = os.getloadavg()
    tic = time.perf_counter()
    cpu0 = os.times()
    rows = parallel(realization, tasks, args.workers)
    cpu1 = os.times()
    elapsed = time.perf_counter() - tic
    args.load_after = os.getloadavg()
    args.cpu_seconds = (cpu1.children_user + cpu1.children_system + cpu1.user + cpu1.system) - (
        cpu0.children_user + cpu0.children_system + cpu0.user + cpu0.system)
    out = HERE / "results" / f"paper003_olbfgs_svm{('_' + args.tag) if args.tag else ''}.json"
    report(rows, args, elapsed, out)


def report(rows: list[dict[str, Any]], args: argparse.Namespace, elapsed: float,
           out: Path) -> None:
    """Print the tables beside the paper's numbers; write the JSON and the figure."""
    cpu = getattr(args, "cpu_seconds", None)
    lb, la = getattr(args, "load_before", None), getattr(args, "load_after", None)
    summary: dict[str, Any] = {}
    print(f"\nPaper 003 (Mokhtari & Ribeiro 2015), Figs. 1-4: boxes SVM, lam={LAM:g}, N={N_SAMPLES}, "
          f"Lt={LT:g}, init={args.init}; {args.realizations} realizations, {args.workers} workers, "
          f"{elapsed:.0f} s wall" + (f", {cpu:.0f} CPU s (= {cpu / args.workers:.0f} s on "
                                     f"{args.workers} dedicated cores)" if cpu else ""))
    if lb is not None and la is not None:
        print(f"load average (1/5/15 min) before: {lb[0]:.2f} {lb[1]:.2f} {lb[2]:.2f}; "
              f"after: {la[0]:.2f} {la[1]:.2f} {la[2]:.2f} (machine shared with other jobs)")
    caps = [c for c in args.cap if int(c.split(":")[2]) < args.realizations]
    if caps:
        print("caps (method:n:realizations run): " + " ".join(caps))
    for n in args.n:
        print(f"\nn = {n}: F after Lt = {LT:g}   |   time to F <= {TARGET[n]:g} (seconds)")
        print(f"  {'method':7s} {'J':>5s}  {'F min':>9s} {'F mean':>9s} {'F max':>9s}   "
              f"{'paper F min/mean/max':>28s}  |  {'reached':>7s} {'t mean':>9s} {'t max':>9s} "
              f"{'iters':>6s}  {'paper t mean':>12s}  {'speedup':>7s}")
        for name in args.methods:
            res = [row[name] for row in rows if row["n"] == n and name in row]
            if not res:
                print(f"  {name:7s} {0:5d}  not run (--cap); paper F "
                      f"{fmt(PAPER_F[n][name][1], 1)}, t {PAPER_T[n][name][1]:.4g} s")
                continue
            F = summarize([x["F"] for x in res])
            T = summarize([x.get("time_to_target") for x in res])
            K = summarize([x.get("iters_to_target") for x in res])
            spi = summarize([x.get("seconds_per_iter") for x in res])
            pf, pt = PAPER_F[n][name], PAPER_T[n][name]
            inside = pf[0] <= F["mean"] <= pf[2]
            speedup = pt[1] / T["mean"] if T["count"] else float("nan")
            summary[f"{name}_n{n}"] = {
                "J": len(res), "F": F, "time_to_target": T, "iters_to_target": K,
                "seconds_per_iter": spi, "paper_F_min_mean_max": pf, "paper_time_min_mean_max": pt,
                "mean_F_inside_paper_range": inside, "speedup_vs_paper_mean_time": speedup,
                "pairs_skipped_mean": float(np.mean([x.get("pairs_skipped", 0) for x in res])),
                "resets_total": int(np.sum([x.get("resets", 0) for x in res])),
                "failures": sum(1 for x in res if "error" in x),
                "method": methods_for(n, args.init)[name].__dict__ | {"options": dict(
                    methods_for(n, args.init)[name].options)},
            }
            bad = sum(1 for x in res if not x["F"] <= 1e-3)
            summary[f"{name}_n{n}"]["runs_with_F_above_1e-3"] = bad
            summary[f"{name}_n{n}"]["F_median"] = F["median"]
            print(f"  {name:7s} {len(res):5d}  {fmt(F['min'])} {fmt(F['mean'])} {fmt(F['max'])}   "
                  f"{fmt(pf[0], 1)}/{fmt(pf[1], 1)}/{fmt(pf[2], 1)}{' *' if inside else '  '} |  "
                  f"{T['count']:4d}/{len(res):<4d} {fmt(T['mean'])} {fmt(T['max'])} "
                  f"{K['mean']:6.0f}  {pt[1]:12.4g}  "
                  + (f"{speedup:6.0f}x" if speedup >= 10 else f"{speedup:6.2f}x"))
    for key, v in summary.items():
        if v.get("runs_with_F_above_1e-3"):
            print(f"  note: {key}: {v['runs_with_F_above_1e-3']} of {v['J']} runs end with "
                  f"F > 1e-3 (transient blow-ups); median F = {v['F_median']:.3g}")
    print("\n  * = our mean F lies inside the paper's [min, max]; 'iters' = mean iterations to "
          "the target;\n    speedup = paper mean time / our mean CPU time (different machines and "
          "languages; see docs/curvature.md)")
    out.parent.mkdir(parents=True, exist_ok=True)
    payload = {"config": {"lam": LAM, "N": N_SAMPLES, "Lt": LT, "targets": TARGET,
                          "init": args.init, "realizations": args.realizations,
                          "caps": args.cap,
                          "workers": args.workers, "wall_seconds": elapsed, "cpu_seconds": cpu,
                          "loadavg_before": lb, "loadavg_after": la,
                          "machine": platform.processor() or platform.machine(),
                          "python": platform.python_version()},
               "summary": summary, "runs_columns": to_columns(rows)}
    write_json(out, payload)
    print(f"wrote {out.relative_to(HERE.parent)}")
    plot(rows, args, out.with_suffix(".png"))


def plot(rows: list[dict[str, Any]], args: argparse.Namespace, path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:  # pragma: no cover - optional
        print("matplotlib not installed: no figure")
        return
    ns = list(args.n)
    fig, axes = plt.subplots(2 * len(ns), len(args.methods),
                             figsize=(3.0 * len(args.methods), 2.4 * 2 * len(ns)), squeeze=False)
    for i, n in enumerate(ns):
        for j, name in enumerate(args.methods):
            res = [row[name] for row in rows if row["n"] == n and name in row]
            for k, (key, label, paper) in enumerate((
                    ("F", f"F after Lt={LT:g}", PAPER_F[n][name]),
                    ("time_to_target", f"seconds to F<={TARGET[n]:g}", PAPER_T[n][name]))):
                ax = axes[2 * i + k, j]
                vals = np.array([x.get(key) for x in res if x.get(key) is not None], dtype=float)
                vals = vals[np.isfinite(vals) & (vals > 0)]
                lo = min([paper[0]] + ([float(vals.min())] if vals.size else [])) / 1.3
                hi = max([paper[2]] + ([float(vals.max())] if vals.size else [])) * 1.3
                if vals.size:
                    ax.hist(vals, bins=np.geomspace(lo, hi, 40), color="C0")
                ax.axvspan(paper[0], paper[2], color="C1", alpha=0.25, label="paper min-max")
                ax.axvline(paper[1], color="C1")
                ax.set_title(f"{name}, n={n}", fontsize=9)
                ax.set_xlabel(label, fontsize=8)
                ax.tick_params(labelsize=7)
                ax.set_xscale("log")
                ax.set_xlim(lo, hi)
                ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    axes[0, 0].legend(fontsize=7)
    fig.suptitle(f"Paper 003 Figs. 1-4 reproduction (init={args.init}); orange: paper's "
                 "min-max and mean", fontsize=10)
    fig.tight_layout()
    save_png(fig, path, dpi=90)
    print(f"wrote {path.relative_to(HERE.parent)}")


if __name__ == "__main__":
    main()
