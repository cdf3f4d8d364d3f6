"""The comparison loop of docs/choosing.md ("Comparing on your own data") on the a9a data
shipped with sqnopt: four curvature models at their recipes, each fit's objective recorded at
every iteration of the deterministic recipes (their iterations are few, and the full-batch
ones compute F with their gradient) and after every pass of the stochastic one. Writes the
figure ``bench/results/choosing_compare.png`` (the excess objective F - F* against effective
passes, F* from a Newton solve to tol 1e-10) and prints each fit's passes, iterations, history
points and final objective.

    OPENBLAS_NUM_THREADS=1 python bench/choosing_compare.py
"""

from __future__ import annotations

import sys
from pathlib import Path

try:
    import sqnopt  # noqa: F401
except ImportError:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqnopt import SQNClassifier
from sqnopt.datasets import load_a9a
from sqnopt.plotting import plot_histories, save_figure

OUT = Path(__file__).resolve().parent / "results" / "choosing_compare.png"
CURVATURES = ("lbfgs", "newton_cg", "quadratic_bound", "identity")


def main() -> int:
    X, y = load_a9a("train")
    histories = {}
    for curvature in CURVATURES:
        every = None if curvature == "identity" else 1
        est = SQNClassifier(alpha=1e-4, curvature=curvature, history_every=every,
                            random_state=0).fit(X, y)
        histories[curvature] = est.history_
        h = est.history_
        print(f"{curvature:16s} passes {est.n_iter_:4d}  iterations {est.t_:7d}  "
              f"points {len(h):3d}  F = {h.objective[-1]:.8f}  converged {est.converged_}")
    f_star = SQNClassifier(alpha=1e-4, tol=1e-10, random_state=0).fit(X, y).history_.objective[-1]
    print(f"F* = {f_star:.12f}")
    fig = plot_histories(histories, x="effective_passes", subtract=f_star,
                         ylabel="excess objective F(w) - F*",
                         title="a9a, logistic loss, alpha = 1e-4 (SQNClassifier recipes)")
    save_figure(fig, OUT)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
