"""Fixed cost of one estimator fit: ``SQNClassifier`` against scikit-learn's ``SGDClassifier`` on a
tiny dense problem (100 x 10, one pass), where the fit's fixed cost (validation, recipe, kernel
set-up, result) is nearly all of the time. Interleaved, best of ``--rounds`` rounds of
``--calls`` fits each; prints the ratio (the goal of issue 20: at most 0.5).

The last two rows are the input validation alone: scikit-learn's (``validate_data`` on
``(X, y)`` and ``check_classification_targets``), which ``SGDClassifier.fit`` calls first, and
sqnopt's fast path for plain dense arrays (``sqnopt.estimators._validation.fast_fit_data``: the
same checks, decisions and attributes for the common case, everything else handed to
scikit-learn's functions), which ``SQNClassifier.fit`` calls on this data instead.

    OPENBLAS_NUM_THREADS=1 python bench/estimator_overhead.py [--rounds 7] [--calls 200]
        [--record bench/results/estimator_overhead.json]

``--record`` writes the measurement (best time per fit of each row, the machine's load, the
versions) as a small JSON record, which ``bench/goals.py`` reads for docs/goals.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
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
    ap.add_argument("--record", type=Path, default=None,
                    help="also write the measurement to this JSON file")
    args = ap.parse_args(argv)

    import numpy as np
    from sklearn.base import BaseEstimator
    from sklearn.linear_model import SGDClassifier
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.validation import validate_data

    from sqnopt import SQNClassifier
    from sqnopt.datasets import make_boxes
    from sqnopt.estimators._validation import fast_fit_data

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
        "scikit-learn's validation of (X, y) alone": lambda: _validate(X, y),
        "sqnopt's validation fast path of (X, y) alone": lambda: _fast_validate(X, y),
    }

    class _Validated(BaseEstimator):  # type: ignore[misc]
        pass

    def _validate(X: Any, y: Any) -> None:
        Xv, yv = validate_data(_Validated(), X, y, accept_sparse="csr",
                               dtype=[np.float64, np.float32], order="C")
        check_classification_targets(yv)

    def _fast_validate(X: Any, y: Any) -> None:
        assert fast_fit_data(_Validated(), X, y) is not None

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
    if args.record is not None:
        import sklearn

        cmd = "python bench/estimator_overhead.py" + "".join(
            f" {a}" for a in (argv if argv is not None else sys.argv[1:]))
        record = {
            "command": cmd, "created": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "rounds": args.rounds, "calls": args.calls,
            "baseline": "SGDClassifier (1 pass)",
            "goal_row": "SQNClassifier() (auto: Newton here, 1 pass)",
            "rows": {k: float(f"{v:.4g}") for k, v in best.items()},
            "load_average": [round(x, 2) for x in os.getloadavg()],
            "versions": {"sqnopt": sqnopt_version(), "scikit-learn": sklearn.__version__,
                         "numpy": np.__version__, "python": platform.python_version()},
        }
        args.record.parent.mkdir(parents=True, exist_ok=True)
        args.record.write_text(json.dumps(record, indent=1) + "\n")
        print(f"wrote {args.record}")
    return 0


def sqnopt_version() -> str:
    import sqnopt

    return str(sqnopt.__version__)


if __name__ == "__main__":
    raise SystemExit(main())
