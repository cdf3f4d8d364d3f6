"""newGLMNET with and without conjugate gradients on the model's face: the same fits, CG on and
off, where the exact model is out of reach (working sets over its cap).

    python bench/face_cg.py
    python bench/face_cg.py --problems criteo --rounds 5 --record bench/results/face_cg.json

Problems (each at its estimator's defaults but the penalty's ``alpha`` and ``tol=1e-7``):

* ``criteo``: the race's L1-logistic problem (the shipped Criteo sample, one-hot + hashed,
  ``alpha = 1/N``, no intercept), where ``../shared/datasets`` has it;
* ``lasso-sparse``, ``poisson-sparse``: ``make_rcv1_like(20 000, 3 000)`` (seed 0) with real
  targets ``0.3 x.beta`` plus noise, or Poisson counts of ``exp(0.3 x.beta)`` (clipped), L1 at
  ``alpha = 1e-5`` -- 2 600 to 2 800 nonzeros, more than the exact model's cap.

``SQNClassifier(penalty="l1")`` / ``SQNRegressor(penalty="l1")`` fit each, with the face CG's
policy as shipped and with its steps set to 0 (``sqnopt.composite._glmnet._face_cg_policy``:
the sweeps alone, as before it), interleaved, best of ``--rounds``. Both must reach the same
objective (to 1e-9 relative); the outer iterations and the seconds are reported. The load
average is printed at the start and the end; ``--record`` writes a compact JSON record (kB).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

PROBLEMS = ("criteo", "lasso-sparse", "poisson-sparse")


def problem(name: str) -> tuple[Any, Any, Any] | None:
    """``(estimator factory, X, y)`` of a problem, or None when its data is absent."""
    from sqnopt import SQNClassifier, SQNRegressor

    if name == "criteo":
        from race.problems import _load_criteo, datasets_dir

        root = datasets_dir(None)
        if root is None:
            return None
        try:
            X, y = _load_criteo(root)[:2]
        except (FileNotFoundError, OSError):
            return None
        alpha = 1.0 / X.shape[0]
        return (lambda: SQNClassifier(penalty="l1", alpha=alpha, fit_intercept=False,
                                      tol=1e-7)), X, y
    from sqnopt.datasets import make_rcv1_like

    X, _ = make_rcv1_like(20_000, 3_000, random_state=0)
    rng = np.random.default_rng(0)
    s = 0.3 * (X @ rng.normal(size=X.shape[1]))
    if name == "lasso-sparse":
        y = s + 0.1 * rng.normal(size=X.shape[0])
        loss = "squared_error"
    else:
        y = rng.poisson(np.exp(np.clip(s, -5.0, 3.0))).astype(np.float64)
        loss = "poisson"
    return (lambda: SQNRegressor(loss=loss, penalty="l1", alpha=1e-5, tol=1e-7,
                                 max_iter=1000)), X, y


def objective(est: Any, X: Any, y: Any) -> float:
    """The fit's objective ``mean loss + alpha ||coef||_1``, computed here for both variants."""
    s = np.asarray(X @ est.coef_.ravel()).ravel() + float(np.ravel(est.intercept_)[0])
    a = est.alpha
    if getattr(est, "loss", None) == "squared_error":
        return float(0.5 * np.mean((s - y) ** 2) + a * np.abs(est.coef_).sum())
    if getattr(est, "loss", None) == "poisson":
        return float(np.mean(np.exp(s) - y * s) + a * np.abs(est.coef_).sum())
    yy = np.where(y == est.classes_[1], 1.0, -1.0)
    return float(np.mean(np.logaddexp(0.0, -yy * s)) + a * np.abs(est.coef_).sum())


def main(argv: list[str] | None = None) -> int:
    from sqnopt.composite._glmnet import _face_cg_policy

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--problems", nargs="+", choices=PROBLEMS, default=list(PROBLEMS))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--record", type=Path, help="write a compact JSON record here")
    args = ap.parse_args(argv)
    shipped = _face_cg_policy()
    record: dict[str, Any] = {
        "command": "python bench/face_cg.py " + " ".join(sys.argv[1:] if argv is None
                                                         else argv),
        "policy": list(shipped), "load_start": list(os.getloadavg()), "problems": []}
    print(f"load average {record['load_start']}; face CG policy (after, every, steps, tol) "
          f"{shipped}")
    for name in args.problems:
        got = problem(name)
        if got is None:
            print(f"{name}: data absent, skipped")
            continue
        make, X, y = got
        best = {"cg": float("inf"), "sweeps only": float("inf")}
        fits: dict[str, Any] = {}
        for _ in range(args.rounds):
            for variant in best:
                old = _face_cg_policy(steps=0 if variant == "sweeps only" else shipped[2])
                try:
                    est = make()
                    t0 = time.perf_counter()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        est.fit(X, y)
                    best[variant] = min(best[variant], time.perf_counter() - t0)
                finally:
                    _face_cg_policy(*old)
                fits[variant] = est
        values = {v: objective(e, X, y) for v, e in fits.items()}
        same = abs(values["cg"] - values["sweeps only"]) <= 1e-9 * abs(values["cg"])
        row = {"problem": name, "shape": list(X.shape),
               "n_iter": {v: int(e.n_iter_) for v, e in fits.items()},
               "nnz": {v: int(np.count_nonzero(e.coef_)) for v, e in fits.items()},
               "seconds": best, "objective": values, "same_objective": same}
        record["problems"].append(row)
        print(f"{name} {X.shape}: with CG {best['cg'] * 1e3:.0f} ms "
              f"({row['n_iter']['cg']} outer iterations), sweeps only "
              f"{best['sweeps only'] * 1e3:.0f} ms ({row['n_iter']['sweeps only']}); "
              f"x{best['sweeps only'] / best['cg']:.2f}; same objective: {same}")
    from _results import close_record

    close_record(record, args.record)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
