"""Seconds per pass of SAGA on news20: the lazy sparse iterate against the dense one.

    OPENBLAS_NUM_THREADS=1 python bench/saga_lazy.py [--passes 3] [--rounds 3]
        [--datasets-dir /work/shared/datasets]

The race's news20 logistic problem (``bench/race/problems.py``: TF-IDF rows, alpha = 1/N, no
intercept) solved by the ``saga`` preset (b = 1, ``Constant(eta=1)``, uniform sampling) on the
lazy table iterate (``path="auto"`` on CSR data) and on the dense iterate (``path="generic"``),
and, for scale, scikit-learn's ``LogisticRegression(solver="saga")`` for the same number of
epochs (its ``tol`` set so that ``max_iter`` binds). One process; the contenders alternate over
the rounds; each figure is the best round of the thread's CPU time per pass (the table fill of
SAGA's first pass included: every run starts from a fresh state). Prints the table and the
ratios dense / lazy and lazy / scikit-learn.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.race.problems import _load_news20, datasets_dir  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--datasets-dir", default=None)
    a = ap.parse_args()
    root = datasets_dir(a.datasets_dir)
    if root is None or not (root / "news20.xz").exists():
        sys.exit("news20.xz not found: pass --datasets-dir")
    X, y = _load_news20(root)[:2]
    n = X.shape[0]
    alpha = 1.0 / n

    from sklearn.linear_model import LogisticRegression

    from sqnopt import Solver

    def sqnopt_run(path: str) -> float:
        s = Solver.preset("saga", lam=alpha, eta=1.0, random_state=0, path=path,
                          max_epochs=a.passes, report_every=10**9)
        t = time.thread_time()
        st = s.init_state(X, y)
        kind = type(st.loop).__name__
        assert kind == ("LazyTableLoop" if path == "auto" else "CompiledLoop"), kind
        s.run(st)
        return (time.thread_time() - t) / a.passes

    def sklearn_run() -> float:
        est = LogisticRegression(C=1.0 / (alpha * n), fit_intercept=False, solver="saga",
                                 max_iter=a.passes, tol=1e-14, random_state=0)
        t = time.thread_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X, y)
        return (time.thread_time() - t) / a.passes

    runs = {"sqnopt SAGA lazy (auto)": lambda: sqnopt_run("auto"),
            "sqnopt SAGA dense (generic)": lambda: sqnopt_run("generic"),
            "sklearn saga": sklearn_run}
    best = {k: float("inf") for k in runs}
    for _ in range(a.rounds):
        for k, f in runs.items():
            best[k] = min(best[k], f())
    print(f"news20 logistic (N = {n}, d = {X.shape[1]}, alpha = 1/N), {a.passes} passes, "
          f"best of {a.rounds} rounds, CPU seconds per pass:")
    for k, v in best.items():
        print(f"  {k:30s} {v * 1e3:9.2f} ms")
    lazy, dense = best["sqnopt SAGA lazy (auto)"], best["sqnopt SAGA dense (generic)"]
    print(f"  dense / lazy: {dense / lazy:.1f}x;  lazy / sklearn saga: "
          f"{lazy / best['sklearn saga']:.2f}x")


if __name__ == "__main__":
    main()
