"""The batch passes' memory hints: a gradient over a batch of rows in no order, with the rows
out of cache, against the same pass over the rows in order, under the hints as shipped and
under the earlier rule; and a whole fit whose growing batches are such passes.

    python bench/row_hints.py
    python bench/row_hints.py --rounds 5 --record bench/results/row_hints.json

The objective kernels' batch passes hint the rows ahead of their use (``sqnopt.data._rows``,
``HINT_AHEAD``: the lines of the row 16 positions ahead -- a CSR row's all, a dense row's
first -- and a dense row's rest 8 positions ahead). The earlier rule hinted every row's first
line before the loop and a dense row's rest one row ahead; its variant here is
``_row_hints(ahead=2**40, rest_ahead=0)`` (the gradient pass then runs exactly that rule).

* ``dense``: ``make_boxes(100 000, 100)`` (80 MB of float64 rows, more than this machine's
  last-level cache) and ``sparse``: ``make_rcv1_like(100 000, 5 000)`` (about 7.5 million
  stored values), binary labels, the logistic kernel; the batch gradient's time per row on a
  random quarter of the rows, on a random permutation of all of them and on all of them in
  order (the identity batch: the hardware's prefetcher streams it, hints or not). The ratio
  random / in order is the cost of the rows' order: near 1 when the hints hide memory's latency.
* ``fit``: ``SQNRegressor(loss="poisson")`` on the race's ``regression-dense`` problem
  (``bench/race/regression.py``, 20 000 x 101) with ``max_iter=8, tol=None``, whose L-BFGS
  grows its batches of random rows to the whole set (the race's budget that reaches a relative
  excess of ``1e-4``).

Variants alternate within each round; each figure is the best of ``--rounds``. Both variants
compute the same bits (hints change no arithmetic): checked on the fit's coefficients.
``--record`` writes a compact JSON record (kB).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
try:
    import sqnopt  # noqa: F401
except ImportError:         # run from a checkout built in place
    sys.path.insert(0, str(HERE.parent))

#: (HINT_AHEAD, HINT_REST_AHEAD) of the earlier rule: every row hinted before the loop, no
#: hints of a dense row's rest beyond the next row's
EARLIER = (2 ** 40, 0)


def _kernel(kind: str, n: int) -> Any:
    from sqnopt.data import make_rows
    from sqnopt.datasets import make_boxes, make_rcv1_like
    from sqnopt.objectives._margin import LogisticKernel

    if kind == "dense":
        X = make_boxes(n, 100, random_state=0)[0]
    else:
        X = make_rcv1_like(n, 5_000, random_state=0)[0].tocsr()
    y = np.where(np.random.default_rng(0).random(n) < 0.5, -1.0, 1.0)
    ones = np.ones(n)
    return LogisticKernel(make_rows(X, y, ones, ones, False), 1e-4), X.shape[1]


def _per_row(kernel: Any, w: Any, batch: Any, reps: int) -> float:
    g = np.empty(w.shape[0])
    kernel.gradient(w, batch, g)
    t0 = time.perf_counter()
    for _ in range(reps):
        kernel.gradient(w, batch, g)
    return (time.perf_counter() - t0) / reps / batch.shape[0]


def _fit() -> tuple[Any, Any]:
    from race.regression import load_regression_dense

    from sqnopt import SQNRegressor

    X, targets = load_regression_dense(None)[:2]
    y = targets["poisson"][0]

    def run() -> Any:
        est = SQNRegressor(loss="poisson", alpha=1.0 / X.shape[0], fit_intercept=False,
                           max_iter=8, tol=None, random_state=0)
        return est.fit(X, y)
    return run, X


def main(argv: list[str] | None = None) -> int:
    from sqnopt.data._rows import _row_hints
    from sqnopt.solver._blas import blas_threads_limited

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--record", type=Path, help="write a compact JSON record here")
    args = ap.parse_args(argv)
    shipped = _row_hints()
    variants = {"shipped": shipped, "earlier": EARLIER}
    record: dict[str, Any] = {
        "command": "python bench/row_hints.py " + " ".join(sys.argv[1:] if argv is None
                                                          else argv),
        "hints": {k: list(v) for k, v in variants.items()},
        "load_start": list(os.getloadavg()), "passes": [], "fit": {}}
    print(f"load average {record['load_start']}; hints (ahead, rest ahead): shipped {shipped}, "
          f"earlier {EARLIER}")
    n = args.rows
    rng = np.random.default_rng(1)
    with blas_threads_limited(1):
        for kind in ("dense", "sparse"):
            kernel, d = _kernel(kind, n)
            w = rng.normal(size=d) * 0.01
            batches = {"random quarter": rng.choice(n, n // 4, replace=False).astype(np.intp),
                       "random all": rng.permutation(n).astype(np.intp),
                       "in order": np.arange(n, dtype=np.intp)}
            best = {(v, b): float("inf") for v in variants for b in batches}
            for _ in range(args.rounds):
                for v, policy in variants.items():
                    old = _row_hints(*policy)
                    try:
                        for b, batch in batches.items():
                            best[v, b] = min(best[v, b], _per_row(kernel, w, batch, 3))
                    finally:
                        _row_hints(*old)
            for v in variants:
                row = {"data": kind, "hints": v,
                       "ns_per_row": {b: best[v, b] * 1e9 for b in batches},
                       "random_over_in_order": best[v, "random all"] / best[v, "in order"]}
                record["passes"].append(row)
                print(f"{kind:6s} {v:8s}: " + ", ".join(
                    f"{b} {best[v, b] * 1e9:.1f}" for b in batches)
                    + f" ns/row; random / in order x{row['random_over_in_order']:.2f}")
            del kernel
        run, X = _fit()
        fit_best = {v: float("inf") for v in variants}
        coefs: dict[str, Any] = {}
        for _ in range(args.rounds):
            for v, policy in variants.items():
                old = _row_hints(*policy)
                try:
                    t0 = time.perf_counter()
                    est = run()
                    fit_best[v] = min(fit_best[v], time.perf_counter() - t0)
                finally:
                    _row_hints(*old)
                coefs[v] = est.coef_
    same = bool(np.array_equal(coefs["shipped"], coefs["earlier"]))
    record["fit"] = {"problem": "regression-dense / poisson", "shape": list(X.shape),
                     "seconds": fit_best, "same_coefficients": same,
                     "earlier_over_shipped": fit_best["earlier"] / fit_best["shipped"]}
    print(f"fit regression-dense / poisson {X.shape}: shipped {fit_best['shipped'] * 1e3:.2f} "
          f"ms, earlier {fit_best['earlier'] * 1e3:.2f} ms "
          f"(x{record['fit']['earlier_over_shipped']:.2f}); same coefficients: {same}")
    from _results import close_record

    close_record(record, args.record)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
