"""SVRG + L-BFGS (``Solver.preset("svrg_lbfgs")``, Moritz, Nishihara & Jordan 2016) with and
without the cap on its initial scaling ``gamma_t`` (``max_scale``), on the race's L2-logistic
problems (``bench/race``: ``F*`` from the race's reference solve and its cache).

Three parts, each run ``--epochs`` epochs of ``N / 64`` iterations (batch 64, Hessian batch 128
per iteration, a pair every 10 iterations: the preset's defaults), seed 0, the full objective
recorded every half epoch:

* ``trace`` -- news20 at ``alpha = 1e-6``, ``eta = 0.003``: per epoch the relative excess, the
  initial scaling ``gamma_t``, the plain step ``eta gamma_t`` it gives the directions no pair
  spans, and ``eta gamma_t L_S / b`` (``L_S``: the largest per-sample curvature the Hessian
  samples met, what the cap reads), without the cap (run with ``max_scale = 1e300``: the cap
  never binds, but ``L_S`` is measured) and with the preset's cap (``kappa = 1/4``:
  ``eta gamma_t L_S / b <= 1/4``); at the end, each stored pair's sampled Rayleigh quotient
  ``v'r / v'v`` over the full Hessian's ``v' H v / v'v`` (``--trace-only``: only this part,
  replaced in the record);
* ``grid`` -- every problem of ``--problems`` at every ``eta`` of ``--etas``, with the cap and
  without (``max_scale=None``): effective passes (and solver seconds, noisy) to 1e-4 and 1e-6,
  the final and the lowest relative excess, the status and the warnings the run raised;
* ``hessian batch`` -- news20 at ``alpha = 1e-6``, ``eta = 0.003`` with the cap, Hessian batches
  of ``--hessian-batches`` samples per iteration (a pair's sample: 10 times that).

Writes ``bench/results/svrg_lbfgs_scaling/record.json`` and prints its tables (``--table``: only
the tables, from the record). Passes do not depend on the machine's load; seconds do.

    OPENBLAS_NUM_THREADS=1 python bench/svrg_lbfgs_scaling.py [--epochs 40] \\
        [--problems news20/logistic-1e-6,a9a/logistic,w8a/logistic,news20/logistic] \\
        [--etas 0.003,0.01,0.03] [--hessian-batches 32,64,128] [--trace-epochs 12]
    python bench/svrg_lbfgs_scaling.py --table
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.full_batch_solvers import reach  # noqa: E402
from bench.race.problems import (  # noqa: E402
    Problem,
    cache_path,
    datasets_dir,
    load_problems,
    reference,
)

from sqnopt import Solver  # noqa: E402

BATCH = 64
OUT = HERE / "results" / "svrg_lbfgs_scaling" / "record.json"


def _problems(keys: list[str]) -> dict[str, Problem]:
    out: dict[str, Problem] = {}
    for key in keys:
        ds, kind = key.split("/")
        skipped: list[str] = []
        for p in load_problems([ds], [kind], datasets_dir(), quick=False, skipped=skipped):
            reference(p, cache_path())
            out[key] = p
        for line in skipped:
            print(line)
    return out


def _solver(p: Problem, eta: float, epochs: float, **kw: Any) -> Solver:
    return Solver.preset("svrg_lbfgs", lam=p.alpha, eta=eta, batch_size=BATCH,
                         max_epochs=epochs, random_state=0,
                         history_every=max(1, p.n // BATCH // 2), **kw)


def _run(p: Problem, solver: Solver) -> tuple[Any, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = solver.fit(p.X, p.y)
    return res, sorted({w.category.__name__ for w in caught})


def trace(p: Problem, eta: float, epochs: int) -> dict[str, list[dict[str, float]]]:
    out: dict[str, list[dict[str, float]]] = {}
    for label, cap in (("no cap", 1e300), ("cap (kappa = 1/4)", "auto")):
        solver = Solver.preset("svrg_lbfgs", lam=p.alpha, eta=eta, batch_size=BATCH,
                               random_state=0, max_scale=cap)
        state = solver.init_state(p.X, p.y)
        rows = []
        for k in range(1, epochs + 1):
            res = solver.run(state, max_epochs=1)
            g, lmax = float(state.curvature.gamma), float(state.curvature.lmax)
            rows.append({"epoch": k, "excess": p.excess(res.w), "gamma": g,
                         "eta_gamma": eta * g, "eta_gamma_L_over_b": eta * g * lmax / BATCH})
            print(f"trace {label:18s} epoch {k:3d}  excess {rows[-1]['excess']:.2e}  "
                  f"gamma {g:.3g}  eta*gamma {eta * g:.3g}  eta*gamma*L_S/b "
                  f"{eta * g * lmax / BATCH:.3g}", flush=True)
        out[label] = rows
        out.setdefault("pair quality", []).append(_pair_quality(state, label))
    return out


def _pair_quality(state: Any, label: str) -> dict[str, Any]:
    """The stored pairs against the whole data set's Hessian at the current iterate: the
    Rayleigh quotient ``v'r / v'v`` of each pair's Hessian sample over ``v' H v / v'v`` of the
    full Hessian (1 would be an exact sample)."""
    k = state.objective
    V, R = state.curvature.pairs()
    every = np.arange(state.data.n_samples, dtype=np.intp)
    w = np.asarray(state.output_iterate(), dtype=np.float64)
    ratios = []
    for v, r in zip(V, R):
        hv = np.zeros_like(v)
        k.hessian_product(w, every, np.ascontiguousarray(v), hv)
        ratios.append(float((v @ r) / (v @ hv)))
    q = {"run": label, "pairs": len(ratios), "min": min(ratios), "max": max(ratios)}
    print(f"pairs ({label}): sampled / full Rayleigh quotient {q['min']:.2f} - {q['max']:.2f} "
          f"over {q['pairs']} pairs", flush=True)
    return q


def _cell(res: Any, p: Problem, warned: list[str]) -> dict[str, Any]:
    ex = np.asarray(res.history.objective) / p.f_star - 1.0
    return {"reached": {f"{t:g}": reach(res.history, p.f_star, t) for t in (1e-4, 1e-6)},
            "final_excess": float(res.fun / p.f_star - 1.0), "min_excess": float(np.min(ex)),
            "passes": float(res.effective_passes), "status": str(res.status.value),
            "pairs": int(res.n_pairs_accepted), "warnings": warned}


def _show(key: str, label: str, c: dict[str, Any]) -> None:
    got = "  ".join(f"{t}: " + ("-" if r is None else f"{r['passes']:.0f}p {r['seconds']:.2f}s")
                    for t, r in c["reached"].items())
    print(f"{key:22s} {label:28s} {got}  final {c['final_excess']:.1e} min "
          f"{c['min_excess']:.1e} {c['status']} {','.join(c['warnings'])}", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--problems",
                    default="news20/logistic-1e-6,a9a/logistic,w8a/logistic,news20/logistic")
    ap.add_argument("--etas", default="0.003,0.01,0.03")
    ap.add_argument("--epochs", type=float, default=40.0)
    ap.add_argument("--trace-epochs", type=int, default=12)
    ap.add_argument("--hessian-batches", default="32,64,128")
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--table", action="store_true")
    ap.add_argument("--trace-only", action="store_true",
                    help="run only the trace and replace it in the record of --out")
    args = ap.parse_args(argv)
    if args.table:
        print(tables(json.loads(Path(args.out).read_text())))
        return 0
    if args.trace_only:
        rec = json.loads(Path(args.out).read_text())
        rec["trace"] = trace(_problems(["news20/logistic-1e-6"])["news20/logistic-1e-6"], 0.003,
                             args.trace_epochs)
        Path(args.out).write_text(json.dumps(rec, default=float) + "\n")
        print(tables(rec))
        return 0
    keys = args.problems.split(",")
    probs = _problems(sorted(set(keys) | {"news20/logistic-1e-6"}))
    record: dict[str, Any] = {"epochs": args.epochs, "batch": BATCH, "seed": 0,
                              "trace": {}, "grid": {}, "hessian_batch": {}}
    hard = probs.get("news20/logistic-1e-6")
    if hard is not None and args.trace_epochs > 0:
        record["trace"] = trace(hard, 0.003, args.trace_epochs)
    for key in keys:
        if key not in probs:
            continue
        p = probs[key]
        for eta in (float(e) for e in args.etas.split(",")):
            for label, cap in (("cap", "auto"), ("no cap", None)):
                res, warned = _run(p, _solver(p, eta, args.epochs, max_scale=cap))
                c = _cell(res, p, warned)
                record["grid"].setdefault(key, {})[f"eta={eta:g} {label}"] = c
                _show(key, f"eta={eta:g} {label}", c)
    if hard is not None:
        for hb in (int(h) for h in args.hessian_batches.split(",")):
            res, warned = _run(hard, _solver(hard, 0.003, args.epochs, hessian_batch=hb))
            c = _cell(res, hard, warned)
            record["hessian_batch"][str(hb)] = c
            _show("news20/logistic-1e-6", f"hessian batch {hb}", c)
    path = Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, default=float) + "\n")
    print(f"wrote {path}")
    print(tables(record))
    return 0


def _reach_text(r: dict[str, Any] | None) -> str:
    return "-" if r is None else f"{r['passes']:.0f} ({r['seconds']:.2f} s)"


def tables(record: dict[str, Any]) -> str:
    """The record's three tables in Markdown."""
    lines: list[str] = []
    if record["trace"]:
        runs = {k: v for k, v in record["trace"].items() if k != "pair quality"}
        lines += ["| epoch | " + " | ".join(
            f"{lab}: excess, eta gamma, eta gamma L_S / b" for lab in runs) + " |",
            "|---" * (1 + len(runs)) + "|"]
        cols = list(runs.values())
        for i in range(len(cols[0])):
            lines.append(f"| {cols[0][i]['epoch']} | " + " | ".join(
                f"{c[i]['excess']:.1e}, {c[i]['eta_gamma']:.3g}, {c[i]['eta_gamma_L_over_b']:.3g}"
                for c in cols) + " |")
        for q in record["trace"].get("pair quality", []):
            lines.append(f"\nPairs at the end ({q['run']}): sampled / full-Hessian Rayleigh "
                         f"quotient {q['min']:.2f} - {q['max']:.2f} over {q['pairs']} pairs.")
        lines.append("")
    lines += ["| problem | run | passes (s) to 1e-4 | to 1e-6 | final excess | lowest | "
              "status, warnings |", "|---|---|---|---|---|---|---|"]
    for key, runs in record["grid"].items():
        for label, c in runs.items():
            lines.append(f"| {key} | {label} | {_reach_text(c['reached']['0.0001'])} | "
                         f"{_reach_text(c['reached']['1e-06'])} | {c['final_excess']:.1e} | "
                         f"{c['min_excess']:.1e} | {c['status']}"
                         + (", " + ", ".join(c["warnings"]) if c["warnings"] else "") + " |")
    if record["hessian_batch"]:
        lines += ["", "| Hessian batch per iteration (per pair) | passes (s) to 1e-4 | to 1e-6 | "
                  "final excess | lowest | status, warnings |", "|---|---|---|---|---|---|"]
        for hb, c in record["hessian_batch"].items():
            lines.append(f"| {hb} ({10 * int(hb)}) | {_reach_text(c['reached']['0.0001'])} | "
                         f"{_reach_text(c['reached']['1e-06'])} | {c['final_excess']:.1e} | "
                         f"{c['min_excess']:.1e} | {c['status']}"
                         + (", " + ", ".join(c["warnings"]) if c["warnings"] else "") + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
