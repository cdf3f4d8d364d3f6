"""Seconds per pass of SAGA and SVRG on news20: the lazy sparse iterate against the dense one.

    OPENBLAS_NUM_THREADS=1 python bench/saga_lazy.py [--passes 3] [--rounds 3]
        [--batches 1 16 32 64 256] [--datasets-dir /work/shared/datasets]

The race's news20 logistic problem (``bench/race/problems.py``: TF-IDF rows, alpha = 1/N, no
intercept). Part 1: the ``saga`` preset (b = 1, ``Constant(eta=1)``, uniform sampling) on the
lazy table iterate (``path="auto"`` on CSR data) and on the dense iterate
(``path="generic"``), the same for the ``svrg`` preset (b = 1, ``Constant(eta=1)``, shuffled
epochs, a snapshot per pass), and, for scale, scikit-learn's ``LogisticRegression(solver="saga")`` for
the same number of epochs (``tol`` set so that ``max_iter`` binds); each run from a fresh state,
so the table's fill and the set-up are included. Part 2: the break-even batch size: SAGA with
``Fixed(b)`` on the lazy iterate (``path="scaled"``) and on the dense one, after a warm-up of 10
iterations, per pass of the data. One process; the contenders alternate over the rounds; each
figure is the best round of the thread's CPU time per pass. Part 3 (``--steps``): effective passes
to relative excess 1e-4 and 1e-6 on the race's ``logistic-1e-6`` problem (alpha = 1e-6, F* from
the race's reference solve and cache) for the ``saga`` and ``svrg`` presets at each step
``eta`` (b = 1, at most ``--max-passes``, objective read once per pass).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.race.problems import _load_news20, datasets_dir  # noqa: E402


def _best(runs: dict[str, Callable[[], float]], rounds: int) -> dict[str, float]:
    best = {k: float("inf") for k in runs}
    for _ in range(rounds):
        for k, f in runs.items():
            best[k] = min(best[k], f())
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--batches", type=int, nargs="*", default=[1, 16, 32, 64, 256])
    ap.add_argument("--datasets-dir", default=None)
    ap.add_argument("--steps", type=float, nargs="*", default=[],
                    help="part 3: the steps eta to run at alpha = 1e-6 (e.g. 1 2 3)")
    ap.add_argument("--max-passes", type=int, default=400)
    a = ap.parse_args()
    root = datasets_dir(a.datasets_dir)
    if root is None or not (root / "news20.xz").exists():
        sys.exit("news20.xz not found: pass --datasets-dir")
    X, y = _load_news20(root)[:2]
    n = X.shape[0]
    alpha = 1.0 / n

    from sklearn.linear_model import LogisticRegression

    from sqnopt import SAGA, Constant, Fixed, LogLoss, Solver

    def preset_run(path: str, name: str = "saga") -> float:
        s = Solver.preset(name, lam=alpha, eta=1.0, random_state=0, path=path,
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

    best = _best({"sqnopt SAGA lazy (auto)": lambda: preset_run("auto"),
                  "sqnopt SAGA dense (generic)": lambda: preset_run("generic"),
                  "sqnopt SVRG lazy (auto)": lambda: preset_run("auto", "svrg"),
                  "sqnopt SVRG dense (generic)": lambda: preset_run("generic", "svrg"),
                  "sklearn saga": sklearn_run}, a.rounds)
    print(f"news20 logistic (N = {n}, d = {X.shape[1]}, {X.nnz / n:.1f} entries per row, "
          f"alpha = 1/N), {a.passes} passes from a fresh state, best of {a.rounds} rounds, "
          "CPU time per pass:")
    for k, v in best.items():
        print(f"  {k:30s} {v * 1e3:9.2f} ms")
    for name in ("SAGA", "SVRG"):
        lazy = best[f"sqnopt {name} lazy (auto)"]
        dense = best[f"sqnopt {name} dense (generic)"]
        print(f"  {name}: dense / lazy {dense / lazy:.1f}x;  lazy / sklearn saga "
              f"{lazy / best['sklearn saga']:.2f}x")

    def batch_run(b: int, path: str) -> float:
        s = Solver(LogLoss(lam=alpha), "identity", Fixed(b), Constant(eps=1.0),
                   gradient=SAGA(), random_state=0, path=path)  # type: ignore[arg-type]
        st: Any = s.init_state(X, y)
        st.loop.run(10, 0)          # the table's fill
        budget = int(n * (a.passes if path == "scaled" or b > 4 else 0.3))
        c = st.counters
        n0 = c.n_samples
        t = time.thread_time()
        st.loop.run(10**12, n0 + budget)
        return (time.thread_time() - t) / ((c.n_samples - n0) / n)

    if a.batches:
        print("\nbatch size b: CPU time per pass after the fill, lazy (path='scaled') and dense "
              "(path='generic'); entries per batch / features")
    for b in a.batches:
        r = _best({"lazy": lambda: batch_run(b, "scaled"),
                   "dense": lambda: batch_run(b, "generic")}, a.rounds)
        share = b * X.nnz / n / X.shape[1]
        print(f"  b = {b:5d} ({share:6.3f}): lazy {r['lazy'] * 1e3:8.2f} ms, dense "
              f"{r['dense'] * 1e3:8.2f} ms, lazy / dense {r['lazy'] / r['dense']:.2f}")

    if a.steps:
        steps_part(root, a.steps, a.max_passes)


def steps_part(root: Path, steps: list[float], max_passes: int) -> None:
    """Part 3 (see the module docstring)."""
    import numpy as np

    from bench.race.problems import cache_path, load_problems, reference
    from sqnopt import Solver

    p = next(load_problems(["news20"], ["logistic-1e-6"], root, quick=False, skipped=[]))
    reference(p, cache_path())
    print(f"\nnews20 logistic-1e-6 (alpha = {p.alpha:g}, F* = {p.f_star:.10g}): effective "
          "passes to relative excess 1e-4 / 1e-6 (b = 1)")
    for eta in steps:
        for name in ("saga", "svrg"):
            r = Solver.preset(name, lam=p.alpha, eta=eta, random_state=0,
                              max_epochs=max_passes, history_every=p.X.shape[0]).fit(p.X, p.y)
            ex = (r.history.objective - p.f_star) / p.f_star
            passes = r.history.effective_passes

            def first(target: float) -> str:
                hit = np.flatnonzero(ex <= target)
                return f"{passes[hit[0]]:.0f}" if hit.size else "-"

            print(f"  {name} eta = {eta:g}: {first(1e-4)} / {first(1e-6)} (after "
                  f"{passes[-1]:.0f} passes: {ex[-1]:.1e})")


if __name__ == "__main__":
    main()
