"""How many Newton iterations a longer step would save: damped Newton (Armijo from the unit step,
which is what ``SQNClassifier()`` runs on these sets and accepts at every iteration) against the
same Newton directions with an exact line search and with step doubling, in NumPy / SciPy.

For each race data set (logistic, ``alpha = 1/N``, no intercept) it runs Newton's method from
``w = 0`` with the exact Hessian ``X' D X / N + alpha I`` and prints, per iteration, the relative
excess ``(F - F*) / F*`` and the step taken, until the excess is below 1e-7, with the number of
objective evaluations along the lines (each a pass over the data in the compiled solver):

* ``unit``: step 1 (the Armijo search accepts it at every iteration here);
* ``exact``: the minimiser of ``F(w - t d)`` on ``[0, 10]`` (SciPy's bounded Brent; its
  evaluations are not counted: a lower bound on the iterations, not a method);
* ``double``: step 1, then 2, 4, ... while the objective keeps decreasing (one evaluation more
  than the steps accepted, per iteration);
* ``secant``: step 1, whose gradient gives the slope ``phi'(1)`` of ``phi(t) = F(w - t d)`` for
  free; if ``phi'(1) < 0.1 phi'(0)`` (still descending at more than a tenth of the initial
  rate), one more evaluation at the root of the secant of ``phi'`` through 0 and 1 (at most 10),
  kept if lower::

    PYTHONPATH=$PWD python bench/newton_steps.py --datasets a9a w8a mushrooms
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import scipy.optimize as so
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._data import datasets_dir  # noqa: E402
from bench.race.problems import cache_path, load_problems, reference  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", nargs="+", default=["a9a", "w8a", "mushrooms"])
    args = ap.parse_args()
    for p in load_problems(args.datasets, ["logistic"], datasets_dir(), quick=False, skipped=[]):
        reference(p, cache_path())
        X = sp.csr_matrix(p.X)
        y, lam, f_star = p.y, p.alpha, p.f_star
        N, P = X.shape

        def f(w: np.ndarray) -> float:
            return float(np.mean(np.logaddexp(0.0, -y * (X @ w))) + 0.5 * lam * (w @ w))

        def grad(w: np.ndarray) -> np.ndarray:
            return -(X.T @ (y / (1.0 + np.exp(y * (X @ w))))) / N + lam * w

        def grad_hess(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            s = 1.0 / (1.0 + np.exp(y * (X @ w)))
            g = -(X.T @ (y * s)) / N + lam * w
            H = (X.T @ sp.diags(s * (1.0 - s) / N) @ X).toarray() + lam * np.eye(P)
            return g, H

        for mode in ("unit", "exact", "double", "secant"):
            w = np.zeros(P)
            steps: list[str] = []
            evals = 0
            while len(steps) < 20:
                g, H = grad_hess(w)
                d = np.linalg.solve(H, g)
                t = 1.0
                if mode == "exact":
                    t = float(so.minimize_scalar(lambda t: f(w - t * d), bounds=(0.0, 10.0),
                                                 method="bounded").x)
                    f1 = f(w - t * d)
                else:
                    f1 = f(w - d)
                    evals += 1
                    slope0, slope1 = -(g @ d), -(grad(w - d) @ d)
                    if mode == "secant" and slope1 < 0.1 * slope0:
                        ts = min(slope0 / (slope0 - slope1), 10.0)
                        f2 = f(w - ts * d)
                        evals += 1
                        if f2 < f1:
                            t, f1 = ts, f2
                    while mode == "double":
                        f2 = f(w - 2.0 * t * d)
                        evals += 1
                        if not f2 < f1:
                            break
                        t, f1 = 2.0 * t, f2
                w = w - t * d
                excess = (f1 - f_star) / f_star
                steps.append(f"{excess:.1e} (t={t:.2g})")
                if excess < 1e-7:
                    break
            ev = "-" if mode == "exact" else str(evals)
            print(f"{p.dataset:10s} {mode:6s} iterations {len(steps):2d}  evaluations {ev:>3s}  "
                  + ", ".join(steps))


if __name__ == "__main__":
    main()
