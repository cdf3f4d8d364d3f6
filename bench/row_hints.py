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

``--ordered`` times instead the passes over all rows *in order* that score a row and add a
multiple of it to a vector -- the Hessian-vector product, the full gradient
(``full_gradient``) and the gradient on the identity batch (``gradient``) of the logistic
kernel -- under three rules for hinting sparse rows in order (``sqnopt.data._rows``,
``_ordered_hints``): ``never``, ``always`` and ``shipped`` (rows whose stored values and
indices exceed ``HINT_ORDERED_BYTES``, of dimension at least ``HINT_ORDERED_DIM`` and at least
``HINT_ORDERED_ROW_BYTES`` a row). Dense rows
in order are never hinted (the three rules coincide: their rows show the timing's spread).
Before the rule, the gradient hinted every batch, rows in order too, dense and sparse, and the
other two passes never. Data: a9a (shipped); news20 and the
Criteo sample (the race's, when ``../shared/datasets`` has them); ``make_rcv1_like`` at 50 000 x
5 000 (the race's sparse regression rows), 100 000 x 47 236 and, with rows of 25 values instead
of 75, 180 000 x 47 236; 200 000 rows of the hashed CTR generator (24 values a row); dense ``make_boxes`` rows of 200 000 x 100 and 20 000 x 1 000. Then two whole fits
under ``shipped`` against the rule they had before (interleaved, best of ``--rounds``):
``SQNRegressor()`` on the race's sparse ridge problem (its one-iteration budget, ``tol=None``:
conjugate gradients on Hessian-vector products; before: ``never``) and ``SQNClassifier()`` on
news20 logistic (four iterations, ``tol=None``; before: ``always`` for its gradients, which no
policy here reproduces alone, so ``always`` stands for it).

    python bench/row_hints.py --ordered --rounds 5 --record bench/results/row_hints_ordered.json
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Iterator
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


#: the ``_ordered_hints`` thresholds of the rules compared by ``--ordered``
NEVER = (2 ** 62, 2 ** 62, 2 ** 62)
ALWAYS = (0, 0, 0)


def _ordered_data(rows: int) -> Iterator[tuple[str, Any, Any]]:
    """``(name, X, y)`` of the ``--ordered`` study (module docstring), one data set in memory
    at a time; the shared data sets only when present."""
    from sqnopt.datasets import HashedCTRGenerator, load_a9a, make_boxes, make_rcv1_like

    def made() -> Iterator[tuple[str, Any, Any]]:
        yield ("a9a", *load_a9a())
        from race import problems as P

        root = P.datasets_dir(None)
        for name in ("news20", "criteo"):
            for prob in P.load_problems([name], ["logistic"], root, quick=False, skipped=[]):
                yield name, prob.X, prob.y
        for n, d, per in ((50_000, 5_000, 75), (rows, 47_236, 75), (9 * rows // 5, 47_236, 25)):
            X, y = make_rcv1_like(n, d, nnz_per_row=per, random_state=0)
            yield f"rcv1-like {n}x{d}, {per} a row", X, y
        ctr = HashedCTRGenerator(random_state=0).sample(2 * rows)
        yield f"hashed CTR {2 * rows}", ctr.X, ctr.y
        for n, d in ((2 * rows, 100), (rows // 5, 1_000)):
            X, y = make_boxes(n, d, random_state=0)[:2]
            yield f"dense {n}x{d}", X, y

    import scipy.sparse as sp

    for name, X, y in made():
        yield (name, sp.csr_matrix(X, dtype=np.float64) if sp.issparse(X) else
               np.ascontiguousarray(X, dtype=np.float64), np.where(np.asarray(y) > 0, 1.0, -1.0))


def _ordered_fits() -> list[tuple[str, str, Any]]:
    """The two whole fits of ``--ordered``: ``(name, rule before, run)``."""
    from race import problems as P
    from race.regression import load_regression_sparse

    from sqnopt import SQNClassifier, SQNRegressor

    X, targets = load_regression_sparse(None)[:2]
    y = targets["squared"][0]

    def ridge() -> Any:
        return SQNRegressor(alpha=1.0 / X.shape[0], fit_intercept=False, max_iter=1, tol=None,
                            random_state=0).fit(X, y)
    fits = [("regression-sparse / ridge", "never", ridge)]
    for prob in P.load_problems(["news20"], ["logistic"], P.datasets_dir(None), quick=False,
                                skipped=[]):
        Xn, yn, alpha = prob.X, prob.y, prob.alpha

        def news20() -> Any:
            return SQNClassifier(alpha=alpha, fit_intercept=False, max_iter=4, tol=None,
                                 random_state=0).fit(Xn, yn)
        fits.append(("news20 / logistic", "always", news20))
    return fits


def _timed_fits(run: Any, policies: dict[str, Any], setter: Any,
                rounds: int) -> tuple[dict[str, float], dict[str, Any]]:
    """The best wall time of ``run()`` over ``rounds`` under each policy (``setter(*policy)``,
    the previous one restored after each fit; the policies alternate within a round), and the
    coefficients of each policy's last fit."""
    seconds = {v: float("inf") for v in policies}
    coefs: dict[str, Any] = {}
    for _ in range(rounds):
        for v, policy in policies.items():
            old = setter(*policy)
            try:
                t0 = time.perf_counter()
                est = run()
                seconds[v] = min(seconds[v], time.perf_counter() - t0)
            finally:
                setter(*old)
            coefs[v] = est.coef_
    return seconds, coefs


def _best_ms(f: Any, reps: int) -> float:
    f()
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def ordered(args: Any, argv: list[str] | None) -> int:
    """The ``--ordered`` study (module docstring)."""
    from sqnopt.data import make_rows
    from sqnopt.data._rows import _ordered_hints
    from sqnopt.objectives._margin import LogisticKernel
    from sqnopt.solver._blas import blas_threads_limited

    shipped = _ordered_hints()
    rules = {"never": NEVER, "always": ALWAYS, "shipped": shipped}
    record: dict[str, Any] = {
        "command": "python bench/row_hints.py " + " ".join(sys.argv[1:] if argv is None
                                                          else argv),
        "ordered_hints": {"min_bytes": shipped[0], "min_dim": shipped[1],
                          "min_row_bytes": shipped[2]},
        "load_start": list(os.getloadavg()), "passes": [], "fits": []}
    print(f"load average {record['load_start']}; shipped rule: sparse rows, more than "
          f"{shipped[0] / 2 ** 20:g} MiB stored, dimension >= {shipped[1]}, >= {shipped[2]} "
          "bytes a row")
    rng = np.random.default_rng(1)
    with blas_threads_limited(1):
        for name, X, y in _ordered_data(args.rows):
            ones = np.ones(X.shape[0])
            kern = LogisticKernel(make_rows(X, y, ones, ones, False), 1e-4)
            n, N = kern.n_params, X.shape[0]
            w = rng.normal(size=n) * 0.01
            v = rng.normal(size=n)
            out = np.empty(n)
            batch = np.arange(N, dtype=np.intp)
            passes = {"hessian_product": lambda: kern.hessian_product(w, batch, v, out),
                      "full_gradient": lambda: kern.full_gradient(w, out),
                      "gradient": lambda: kern.gradient(w, batch, out)}
            best = {(r, p): float("inf") for r in rules for p in passes}
            for _ in range(args.rounds):
                for r, rule in rules.items():
                    _ordered_hints(*rule)
                    try:
                        for p, f in passes.items():
                            best[r, p] = min(best[r, p], _best_ms(f, 3))
                    finally:
                        _ordered_hints(*shipped)
            row = {"data": name, "shape": list(X.shape),
                   "stored_MiB": round(kern.data.stored_bytes / 2 ** 20, 1),
                   "ms": {r: {p: round(best[r, p], 3) for p in passes} for r in rules}}
            record["passes"].append(row)
            for r in rules:
                print(f"{name:26s} {row['stored_MiB']:7.1f} MiB {r:8s}: " + ", ".join(
                    f"{p} {best[r, p]:.3f}" for p in passes) + " ms")
        for name, before, run in _ordered_fits():
            seconds, coefs = _timed_fits(run, {r: rules[r] for r in ("shipped", before)},
                                         _ordered_hints, args.rounds)
            same = bool(np.array_equal(coefs["shipped"], coefs[before]))
            fit = {"problem": name, "before": before,
                   "ms": {r: round(t * 1e3, 3) for r, t in seconds.items()},
                   "before_over_shipped": round(seconds[before] / seconds["shipped"], 3),
                   "same_coefficients": same}
            record["fits"].append(fit)
            print(f"fit {name}: shipped {fit['ms']['shipped']:.2f} ms, {before} (before) "
                  f"{fit['ms'][before]:.2f} ms (x{fit['before_over_shipped']:.2f}); same "
                  f"coefficients: {same}")
    from _results import close_record

    close_record(record, args.record)
    return 0


def main(argv: list[str] | None = None) -> int:
    from sqnopt.data._rows import _row_hints
    from sqnopt.solver._blas import blas_threads_limited

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--record", type=Path, help="write a compact JSON record here")
    ap.add_argument("--ordered", action="store_true",
                    help="time the passes over rows in order under the rules for hinting them")
    args = ap.parse_args(argv)
    if args.ordered:
        return ordered(args, argv)
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
        fit_best, coefs = _timed_fits(run, variants, _row_hints, args.rounds)
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
