"""Fixed cost of one estimator fit: ``SQNClassifier`` against scikit-learn's ``SGDClassifier`` on a
tiny dense problem (100 x 10, one pass), where the fit's fixed cost (validation, recipe, kernel
set-up, result) is nearly all of the time. Interleaved, best of ``--rounds`` rounds of
``--calls`` fits each; prints the ratio (the goal of issue 20: at most 0.5).

The last row is the floor both estimators share: scikit-learn's input validation alone
(``validate_data`` on ``(X, y)`` and ``check_classification_targets``), which ``SGDClassifier.fit``
and ``SQNClassifier.fit`` both call first. A ratio goal below the floor's ratio cannot be met by an
estimator that validates its input as scikit-learn's do.

    OPENBLAS_NUM_THREADS=1 python bench/estimator_overhead.py [--rounds 7] [--calls 200]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
try:
    import sqnopt  # noqa: F401
except ImportError:
    sys.path.insert(0, str(HERE.parent))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=200)
    args = ap.parse_args(argv)

    import numpy as np
    from sklearn.base import BaseEstimator
    from sklearn.linear_model import SGDClassifier
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.validation import validate_data

    from sqnopt import SQNClassifier
    from sqnopt.datasets import make_boxes

    X, y = make_boxes(100, 10, random_state=0)
    X = np.ascontiguousarray(X, dtype=np.float64)
    fits = {
        "SQNClassifier() (auto: Newton here, 1 pass)":
            lambda: SQNClassifier(max_iter=1, tol=None, random_state=0).fit(X, y),
        "SQNClassifier(curvature='identity') (1 pass)":
            lambda: SQNClassifier(curvature="identity", max_iter=1, tol=None,
                                  random_state=0).fit(X, y),
        "SGDClassifier (1 pass)":
            lambda: SGDClassifier(max_iter=1, tol=None, random_state=0).fit(X, y),
        "floor: scikit-learn's validation of (X, y) alone": lambda: _validate(X, y),
    }

    class _Validated(BaseEstimator):  # type: ignore[misc]
        pass

    def _validate(X: Any, y: Any) -> None:
        Xv, yv = validate_data(_Validated(), X, y, accept_sparse="csr",
                               dtype=[np.float64, np.float32], order="C")
        check_classification_targets(yv)

    best = {k: float("inf") for k in fits}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # one pass does not converge, by design
        for f in fits.values():
            f()                              # warm-up (imports, first-call caches)
        for _ in range(args.rounds):
            for name, f in fits.items():
                tic = time.perf_counter()
                for _ in range(args.calls):
                    f()
                best[name] = min(best[name], (time.perf_counter() - tic) / args.calls)
    base = best["SGDClassifier (1 pass)"]
    for name, t in best.items():
        print(f"{name:48s} {t * 1e3:7.3f} ms per fit   {t / base:5.2f}x SGDClassifier")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
