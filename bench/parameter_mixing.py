"""Parameter mixing for the large-data recipe: what averaging models trained on disjoint
shards does to the held-out loss, against the sequential per-example updates.

The large-data recipe (per-example composite AdaGrad, ``sqnopt.recipes.streaming``) is
sequential: each update reads the weights the previous one wrote. Parameter mixing (Mann et
al., NIPS 2009; McDonald, Hall & Mann, NAACL 2010; Zinkevich, Weimer, Smola & Li, NIPS 2010)
trains one copy per shard of the rows, independently -- in parallel -- and averages them; with
a number of shards that does not depend on the threads, every thread count gives the same
model. Two modes:

* ``--mode iterative`` (``parameter_mixing=True``, the default; ``sqnopt.training._mixing``):
  every chunk's rows in ``k`` contiguous shards, each run from the state at the chunk's start
  (at ``k`` times the raced step in the first pass, at the raced step after it), then the
  weights and the AdaGrad accumulators averaged. Rows, for each ``--alphas``: the sequential
  updates (``parameter_mixing=False``), the recipe's two shards, and ``k`` shards for each
  ``--shards`` emulated here through the solver's state API (checkpoint, rebind, run, the
  accumulator's state), which for ``k = 2`` must match the recipe's mixing to rounding.
* ``--mode one-shot``: ``k`` fits on contiguous shards of all the rows, averaged once at the
  end, against one fit on all the rows (a shard below the large-data regime is fitted by
  another recipe, and reported as skipped).

Data: the generated hashed CTR stream (:class:`sqnopt.datasets.HashedCTRGenerator`, seed 0,
in memory), 10^6 training rows and 2·10^5 held-out rows from another stream of the same model;
``SQNClassifier(max_iter=p, tol=None)`` for ``p`` passes.

    python bench/parameter_mixing.py --mode iterative --passes 1 3 --shards 2 4 --alphas 1e-4 1e-6 --record bench/results/parameter_mixing_iterative.json
    python bench/parameter_mixing.py --mode one-shot --passes 1 2 --shards 2 4 --record bench/results/parameter_mixing.json

``--quick``: 20 000 rows with the regime's thresholds lowered to fit them (a smoke run).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from scipy.special import expit
from sklearn.metrics import log_loss

from sqnopt import SQNClassifier, recipes
from sqnopt.datasets import HashedCTRGenerator
from sqnopt.training import _streaming, _trainer
from sqnopt.training._mixing import step_scale
from sqnopt.training._setup import sub_labels


def _loss(Xt: Any, yt: np.ndarray, coef: np.ndarray, intercept: float) -> float:
    z = np.asarray(Xt @ coef).ravel() + intercept
    return float(log_loss(yt, expit(z), labels=[0, 1]))


def _fit(X: Any, y: np.ndarray, passes: int, alpha: float = 1e-4, mixing: bool = False
         ) -> tuple[np.ndarray, float, float]:
    t = time.perf_counter()
    m = SQNClassifier(alpha=alpha, max_iter=passes, tol=None, random_state=0,
                      parameter_mixing=mixing).fit(X, y)
    return m.coef_.ravel().copy(), float(m.intercept_[0]), time.perf_counter() - t


def run(rows: int, test_rows: int, passes: list[int], shards: list[int]) -> dict[str, Any]:
    g = HashedCTRGenerator(random_state=0)
    train, test = g.sample(rows, stream=0), g.sample(test_rows, stream=1)
    X, y, Xt, yt = train[0], train[1], test[0], test[1]
    out: list[dict[str, Any]] = []
    for p in passes:
        coef, b, seconds = _fit(X, y, p)
        row: dict[str, Any] = {"passes": p, "all_rows": {"loss": _loss(Xt, yt, coef, b),
                                                         "seconds": seconds}}
        for k in shards:
            bounds = [(i * rows // k, (i + 1) * rows // k) for i in range(k)]
            if not all(recipes.large_scale(hi - lo, float(X[lo:hi].nnz)) for lo, hi in bounds):
                row[f"shards_{k}"] = {"skipped": "a shard is below the large-data regime"}
                continue
            fits = [_fit(X[lo:hi], y[lo:hi], p) for lo, hi in bounds]
            avg = np.mean([f[0] for f in fits], axis=0)
            row[f"shards_{k}"] = {"loss": _loss(Xt, yt, avg, float(np.mean([f[1] for f in fits]))),
                                  "seconds": [f[2] for f in fits]}
        out.append(row)
        print(json.dumps(row), flush=True)
    return {"mode": "one-shot", "rows": rows, "test_rows": test_rows,
            "n_features": int(X.shape[1]), "results": out}


def _emulated_chunk(k: int) -> Any:
    """``_ChunkedRun.chunk`` with ``k`` shards per chunk once the step race is over: the
    state at the chunk's start restored onto each shard's rows, run at ``k`` times the raced
    step in the first pass and at the raced step after it, and the weights and the AdaGrad
    accumulators averaged into the first (through the solver's state API)."""
    original = _trainer._ChunkedRun.chunk

    def chunk(self: Any, X: Any, y: Any, w: Any, first_pass: bool) -> None:
        if (self.setup is None or not all(r.done for r in self.races)
                or any(self.stopped) or X.shape[0] < k):
            return original(self, X, y, w, first_pass)
        weights = self._weights(y, w, first_pass)
        n = int(X.shape[0])
        for j in range(len(self.races)):
            ysub, _ = sub_labels(self.setup, y, j)
            solver, state = self.solvers[j], self.states[j]
            start = state.checkpoint(data_state=False)
            t0, n0 = int(start.state["counters"]["t"]), int(start.state["counters"]["n_samples"])
            shards = []
            for i in range(k):
                a, b = i * n // k, (i + 1) * n // k
                if i == 0:
                    solver.rebind(state, X[a:b], ysub[a:b], weights[a:b])
                    s = state
                else:
                    s = solver.restore(start, X[a:b], ysub[a:b], weights[a:b], new_data=True)
                s.loop.step_scale = step_scale(first_pass, k)
                solver.run(s, max_samples=b - a)
                s.sync()
                shards.append(s)
            w_mix = np.mean([np.array(s.w) for s in shards], axis=0)
            g_mix = np.mean([s.curvature.accumulator for s in shards], axis=0)
            cs = state.curvature.get_state()
            cs["accumulator"] = g_mix
            state.curvature.set_state(cs)
            state.w[:] = w_mix
            for s in shards[1:]:
                state.counters.t += int(s.counters.t) - t0
                state.counters.n_samples += int(s.counters.n_samples) - n0
            state.loop.reload()         # the representation rebuilt from the mixed w
            state.sync_mark = None
            self.last[j] = None
        return None

    return chunk


def iterative(rows: int, test_rows: int, passes: list[int], shards: list[int],
              alphas: list[float]) -> dict[str, Any]:
    """Held-out log loss after each number of passes, for each ``alpha``: the sequential
    updates (``parameter_mixing=False``), the recipe's mixing (``parameter_mixing=True``, the
    default), and ``k`` emulated shards for each ``k`` in ``shards``."""
    g = HashedCTRGenerator(random_state=0)
    train, test = g.sample(rows, stream=0), g.sample(test_rows, stream=1)
    X, y, Xt, yt = train[0], train[1], test[0], test[1]
    out: list[dict[str, Any]] = []
    saved_chunk = _trainer._ChunkedRun.chunk
    try:
        for alpha in alphas:
            for p in passes:
                row: dict[str, Any] = {"alpha": alpha, "passes": p}
                coef, b, seconds = _fit(X, y, p, alpha)
                row["sequential"] = {"loss": _loss(Xt, yt, coef, b), "seconds": seconds}
                coef, b, seconds = _fit(X, y, p, alpha, mixing=True)
                row["recipe"] = {"loss": _loss(Xt, yt, coef, b), "seconds": seconds,
                                 "shards": recipes.MIX_SHARDS}
                for k in shards:
                    _trainer._ChunkedRun.chunk = _emulated_chunk(k)  # type: ignore[method-assign]
                    try:
                        coef, b, seconds = _fit(X, y, p, alpha)
                    finally:
                        _trainer._ChunkedRun.chunk = saved_chunk     # type: ignore[method-assign]
                    row[f"emulated_{k}"] = {"loss": _loss(Xt, yt, coef, b), "seconds": seconds}
                out.append(row)
                print(json.dumps(row), flush=True)
    finally:
        _trainer._ChunkedRun.chunk = saved_chunk                     # type: ignore[method-assign]
    return {"mode": "iterative", "rows": rows, "test_rows": test_rows,
            "n_features": int(X.shape[1]), "chunk": _streaming.IN_MEMORY_CHUNK, "results": out}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mode", choices=["iterative", "one-shot"], default="iterative")
    ap.add_argument("--passes", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--shards", nargs="+", type=int, default=[2])
    ap.add_argument("--alphas", nargs="+", type=float, default=[1e-4],
                    help="iterative mode: the penalties (1e-4: the default; 1/N = 1e-6: the "
                         "scale benchmark's)")
    ap.add_argument("--record", type=Path, help="write a compact JSON record here")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    rows, test_rows = (20_000, 5_000) if args.quick else (1_000_000, 200_000)
    saved = (recipes.LARGE_ROWS, recipes.LARGE_NNZ, recipes.MIX_MIN_ROWS,
             recipes.MIX_MIN_VALUES_PER_PARAM, _streaming.IN_MEMORY_CHUNK)
    if args.quick:
        recipes.LARGE_ROWS, recipes.LARGE_NNZ = 1000, 1000
        recipes.MIX_MIN_ROWS, recipes.MIX_MIN_VALUES_PER_PARAM = 500, 0.1
        _streaming.IN_MEMORY_CHUNK = 5000
    try:
        if args.mode == "iterative":
            record = iterative(rows, test_rows, args.passes, args.shards, args.alphas)
        else:
            record = run(rows, test_rows, args.passes, args.shards)
    finally:
        (recipes.LARGE_ROWS, recipes.LARGE_NNZ, recipes.MIX_MIN_ROWS,
         recipes.MIX_MIN_VALUES_PER_PARAM, _streaming.IN_MEMORY_CHUNK) = saved
    if args.mode == "iterative":
        print("\n| alpha | passes | sequential | parameter_mixing=True (default) | "
              + " | ".join(f"{k} shards (emulated)" for k in args.shards) + " |")
        print("|---|---|---|---|" + "---|" * len(args.shards))
        for r in record["results"]:
            print(f"| {r['alpha']:g} | {r['passes']} | {r['sequential']['loss']:.5f} | "
                  f"{r['recipe']['loss']:.5f} | "
                  + " | ".join(f"{r[f'emulated_{k}']['loss']:.5f}" for k in args.shards)
                  + " |")
    else:
        print("\n| passes | all rows | " + " | ".join(f"{k} shards averaged"
                                                    for k in args.shards) + " |")
        print("|---|---|" + "---|" * len(args.shards))
        for r in record["results"]:
            cells = [f"{r[f'shards_{k}']['loss']:.5f}" if "loss" in r[f"shards_{k}"]
                     else r[f"shards_{k}"]["skipped"] for k in args.shards]
            print(f"| {r['passes']} | {r['all_rows']['loss']:.5f} | " + " | ".join(cells)
                  + " |")
    if args.record is not None:
        given = sys.argv[1:] if argv is None else argv
        record.update(command="python bench/parameter_mixing.py " + " ".join(given),
                      machine=platform.platform(),
                      stamp=time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()))
        args.record.parent.mkdir(parents=True, exist_ok=True)
        args.record.write_text(json.dumps(record) + "\n")
        print(f"wrote {args.record}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
