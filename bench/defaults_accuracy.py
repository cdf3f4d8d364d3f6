"""One-off check (removed from the tree once its answer was in the closing note): on the race's
LIBSVM / Criteo splits, held-out accuracy of ``SQNClassifier()`` and ``LogisticRegression()``
at their own defaults against the majority class, the warnings the fits raised, and the alpha
``PathCV`` picks on criteo. Run: ``OPENBLAS_NUM_THREADS=1 python bench/defaults_accuracy.py``."""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main() -> None:
    from race.problems import datasets_dir, load_problems
    from sklearn.linear_model import LogisticRegression

    from sqnopt.estimators import PathCV, SQNClassifier

    skipped: list[str] = []
    for name in ["a9a", "w8a", "mushrooms", "news20", "criteo"]:
        for p in load_problems([name], ["logistic"], datasets_dir(None), quick=False,
                               skipped=skipped):
            ytr, yte = p.y, p.y_test
            majority = max(float(np.mean(yte == c)) for c in np.unique(ytr))
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                est = SQNClassifier().fit(p.X, ytr)
                lr = LogisticRegression(max_iter=1000).fit(p.X, ytr)
            print(f"{name}: held-out majority {majority:.4f}; SQNClassifier() train "
                  f"{est.score(p.X, ytr):.4f} held-out {est.score(p.X_test, yte):.4f}; "
                  f"LogisticRegression() held-out {lr.score(p.X_test, yte):.4f}; warnings "
                  f"{[str(w.message)[:80] for w in caught]}")
            if name == "criteo":
                t = time.perf_counter()
                cv = PathCV(SQNClassifier(random_state=0), n_alphas=10, cv=3).fit(p.X, ytr)
                print(f"criteo PathCV: alpha {cv.alpha_:.3g}, held-out "
                      f"{cv.score(p.X_test, yte):.4f}, {time.perf_counter() - t:.1f} s")
    for line in skipped:
        print(line)


if __name__ == "__main__":
    main()
