"""SQNClassifier with default settings vs scikit-learn on the a9a data shipped with sqnopt.

Same objective for the logistic models: ``λ/2 ||w||² + mean log-loss`` with ``λ = 1e-4``
(``LogisticRegression(C = 1 / (λ N))``; the intercept unregularised in both). Prints test
accuracy, training objective and wall time per estimator; writes
``bench/results/estimators_a9a.json``.

    OPENBLAS_NUM_THREADS=1 python bench/estimators_a9a.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

try:
    import sqnopt  # noqa: F401
except ImportError:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sklearn.linear_model import LogisticRegression, SGDClassifier

from sqnopt import SQNClassifier
from sqnopt.datasets import load_a9a

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import write_json  # noqa: E402

LAM = 1e-4


def objective(coef: np.ndarray, intercept: float, X: object, y: np.ndarray) -> float:
    m = np.where(y > 0, 1.0, -1.0) * (np.asarray(X @ coef).ravel() + intercept)
    return float(np.mean(np.logaddexp(0.0, -m)) + 0.5 * LAM * coef @ coef)


def main() -> int:
    X, y = load_a9a("train")
    Xt, yt = load_a9a("test")
    X.indices = X.indices.astype(np.int32)  # scikit-learn's SGD wants 32-bit indices
    X.indptr = X.indptr.astype(np.int32)
    n = X.shape[0]
    estimators = {
        "SQNClassifier() [logloss, identity, auto step]": SQNClassifier(random_state=0),
        "SQNClassifier(average=True)": SQNClassifier(average=True, random_state=0),
        "SQNClassifier(loss='hinge')": SQNClassifier(loss="hinge", random_state=0),
        "LogisticRegression(lbfgs, same objective)": LogisticRegression(C=1 / (LAM * n),
                                                                        max_iter=1000),
        "SGDClassifier(log_loss, alpha=1e-4)": SGDClassifier(loss="log_loss", alpha=LAM,
                                                              random_state=0),
    }
    rows = []
    for name, est in estimators.items():
        tic = time.perf_counter()
        est.fit(X, y)
        sec = time.perf_counter() - tic
        coef = np.ravel(est.coef_)
        icpt = float(np.ravel(est.intercept_)[0])
        row = {"estimator": name, "seconds": sec, "train_accuracy": float(est.score(X, y)),
               "test_accuracy": float(est.score(Xt, yt)),
               "train_logloss_objective": objective(coef, icpt, X, y)}
        rows.append(row)
        print(f"{name:48s} test acc {row['test_accuracy']:.4f}  train acc "
              f"{row['train_accuracy']:.4f}  F {row['train_logloss_objective']:.5f}  "
              f"{sec:.2f} s")
    out = Path(__file__).resolve().parent / "results" / "estimators_a9a.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    write_json(out, rows)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
