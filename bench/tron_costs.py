"""Where the time of a full-batch iteration goes: truncated Newton against L-BFGS.

For each race data set given, on its race problem (alpha = 1/N, no intercept), prints

* the cost of the pieces, best of ``--repeats`` interleaved timings in this process: one
  fused loss + gradient pass over the data (``full_gradient``), the loss's second derivatives
  at the scores (``observe_batch`` of the Newton-CG kernel on the whole data set), one
  Hessian-vector product with its CG vector work (a CG solve of ``--cg`` products divided by
  ``--cg``), and the L-BFGS two-loop recursion over ``memory`` pairs in ``n`` dimensions;
* ``SQNClassifier()``'s run at its defaults and with ``curvature="lbfgs"`` / an L-BFGS built
  with memory 10: iterations, effective passes and solver time (evaluation excluded) to each
  relative excess, and the passes spent while the batches were still growing.

    OPENBLAS_NUM_THREADS=1 python bench/tron_costs.py --datasets criteo dna news20

``--memories 10 20 30`` adds ``SQNClassifier(curvature=LBFGS(memory=m))`` runs; ``--newton
20:none 50:0.25`` adds ``SQNClassifier(curvature=TruncatedNewton(max_iter, forcing))`` runs
(``none``: NewtonCG's forcing sequence); ``--problems`` picks the race problems (default
``logistic softmax``; ``logistic-hard``: ``alpha = 1/(100 N)``).

Needs the shared data sets (``bench.race.problems``). Timings on a shared machine are noisy;
passes are not.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.race.problems import (  # noqa: E402
    cache_path,
    datasets_dir,
    load_problems,
    reference,
)

TARGETS = (1e-2, 1e-4, 1e-6)


def _best(fn: Any, repeats: int) -> float:
    best = np.inf
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return float(best)


def piece_costs(p: Any, repeats: int, cg: int, memory: int) -> dict[str, float]:
    from sqnopt import LBFGS, Armijo, Full, LogLoss, Softmax, Solver
    from sqnopt.curvature import LBFGSKernel, NewtonCG

    obj = (Softmax if p.loss == "softmax" else LogLoss)(lam=p.alpha)
    state = Solver(obj, NewtonCG(max_iter=cg, forcing=1e-300), Full(), Armijo(),
                   curvature_schedule=Full()).init_state(p.X, p.y)
    k, curv = state.objective, state.curvature
    n = k.n_params
    rng = np.random.default_rng(0)
    w = 0.01 * rng.normal(size=n)
    g = np.zeros(n)
    out = np.zeros(n)
    allb = np.arange(p.n, dtype=np.intp)
    lb = LBFGSKernel(n, memory)
    for _ in range(memory):
        s = rng.normal(size=n)
        lb.update_pair(s, s * (1.0 + rng.random(n)))
    k.full_gradient(w, g)
    curv.observe_batch(k, w, allb)
    times: dict[str, list[float]] = {"gradient pass": [], "second derivatives": [],
                                     f"Hv product (CG of {cg})": [],
                                     f"two-loop (memory {memory})": []}
    for _ in range(repeats):     # interleaved: each piece once per round
        times["gradient pass"].append(_best(lambda: k.full_gradient(w, g), 1))
        times["second derivatives"].append(_best(lambda: curv.observe_batch(k, w, allb), 1))
        times[f"Hv product (CG of {cg})"].append(_best(lambda: curv.direction(g, out), 1) / cg)
        times[f"two-loop (memory {memory})"].append(_best(lambda: lb.direction(g, out), 1))
    assert LBFGS  # the model the two-loop belongs to
    return {name: min(v) for name, v in times.items()}


def run_profile(p: Any, curvature: Any) -> dict[str, Any]:
    from sqnopt import SQNClassifier

    est = SQNClassifier(loss="logloss", alpha=p.alpha, fit_intercept=False, max_iter=400,
                        tol=None, random_state=0, history_every=1, curvature=curvature)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(p.X, p.y)
    h = est.history_
    ex = (h.objective - p.f_star) / p.f_star
    hit: dict[float, tuple[int, float, float] | None] = {}
    for t in TARGETS:
        i = int(np.argmax(ex <= t)) if np.any(ex <= t) else None
        hit[t] = None if i is None else (int(h.iteration[i]), float(h.effective_passes[i]),
                                         1e3 * float(h.time[i]))
    # the batches grow by `samples` per iteration; the first full one ends the growth
    steps = np.diff(h.samples)
    full = np.flatnonzero(steps >= p.n)
    growing = float(h.effective_passes[full[0]]) if full.size else float("nan")
    return {"targets": hit, "growing_passes": growing}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=["criteo", "dna", "news20"])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--cg", type=int, default=20)
    ap.add_argument("--memory", type=int, default=10)
    ap.add_argument("--memories", type=int, nargs="*", default=[])
    ap.add_argument("--newton", nargs="*", default=[], metavar="MAX_ITER:FORCING")
    ap.add_argument("--problems", nargs="+", default=["logistic", "softmax"])
    ap.add_argument("--no-pieces", action="store_true", help="skip the piece timings")
    args = ap.parse_args()
    from sqnopt import LBFGS, TruncatedNewton

    skipped: list[str] = []
    kinds = list(args.problems)
    for p in load_problems(args.datasets, kinds, datasets_dir(None), quick=False,
                           skipped=skipped):
        reference(p, cache_path())
        nnz = p.X.nnz if hasattr(p.X, "nnz") else p.X.size
        print(f"== {p.dataset}/{p.loss}: N = {p.n}, d = {p.d}, nnz = {nnz}, "
              f"n_params = {p.n_params}")
        if not args.no_pieces:
            for name, sec in piece_costs(p, args.repeats, args.cg, args.memory).items():
                print(f"  {name:24s} {1e3 * sec:8.3f} ms")
        runs: list[tuple[str, Any]] = [("SQNClassifier()", "auto"),
                                       ("curvature='lbfgs'", "lbfgs"),
                                       ("curvature=LBFGS()", LBFGS())]
        runs += [(f"LBFGS(memory={m})", LBFGS(memory=m)) for m in args.memories]
        for spec in args.newton:
            it, forcing = spec.split(":")
            f = None if forcing == "none" else float(forcing)
            runs.append((f"TN({it}, {forcing})", TruncatedNewton(max_iter=int(it), forcing=f)))
        for label, curv in runs:
            prof = run_profile(p, curv)
            cells = []
            for t, v in prof["targets"].items():
                cells.append(f"{t:.0e}: " + ("-" if v is None else
                                             f"it {v[0]}, {v[1]:.1f} passes, {v[2]:.1f} ms"))
            print(f"  {label:18s} growing batches {prof['growing_passes']:.2f} passes | "
                  + " | ".join(cells))
    for line in skipped:
        print(line)


if __name__ == "__main__":
    main()
